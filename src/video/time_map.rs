//! From a frame's time to log time and back.
//!
//! Log time of a frame = `rate × clock + offset`, where `clock` is the
//! source's own log clock for the frame when it has one (a simulator's
//! game time, which stands still during stoppages while pictures go on)
//! and the frame's presentation time otherwise (camera videos). `offset`
//! is what the user sets and nudges; `rate` is 1 unless a clock drifts.
//!
//! The inverse — which frame shows a log time — is what seeking to a log
//! event, `--at` in log time and the timeline need. For camera videos it
//! is `(log − offset) / rate`; for sources with a clock it looks the clock
//! up in the source's [`ClockTable`] (a non-decreasing clock per frame),
//! so it works when the clock stands still for many frames: the answer is
//! the first frame showing the latest clock not after the one asked for.

use std::sync::Arc;

use super::clock::ClockTable;
use super::source::SourceFrame;
use crate::time::{LogTime, VideoTime};

/// The mapping between frame times and log times (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeMap {
    /// Seconds added after scaling: what the user sets and nudges.
    pub offset: f64,
    rate: f64,
    clocks: Option<Arc<ClockTable>>,
}

impl Default for TimeMap {
    fn default() -> Self {
        TimeMap::new(0.0)
    }
}

impl TimeMap {
    /// Log time = frame time (or clock) + `offset`.
    pub fn new(offset: f64) -> Self {
        TimeMap {
            offset,
            rate: 1.0,
            clocks: None,
        }
    }

    /// The same map with log seconds per clock second `rate`; a rate that
    /// is not a finite positive number is taken as 1.
    pub fn with_rate(mut self, rate: f64) -> Self {
        self.rate = if rate.is_finite() && rate > 0.0 { rate } else { 1.0 };
        self
    }

    /// The same map for a source whose frames carry clocks (its
    /// [`crate::video::source::SourceInfo::clocks`]).
    pub fn with_clocks(mut self, clocks: Option<Arc<ClockTable>>) -> Self {
        self.clocks = clocks;
        self
    }

    /// Log seconds per clock second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The source's clock table, when it has one.
    pub fn clocks(&self) -> Option<&ClockTable> {
        self.clocks.as_deref()
    }

    /// The log time of a frame at presentation time `time` with the
    /// source's `clock` (when it has one).
    pub fn log_time(&self, time: VideoTime, clock: Option<f64>) -> LogTime {
        LogTime(self.rate * clock.unwrap_or(time.0) + self.offset)
    }

    /// The log time of `frame`.
    pub fn frame_log_time(&self, frame: &SourceFrame) -> LogTime {
        self.log_time(VideoTime(frame.time), frame.clock)
    }

    /// The log time at presentation time `time` (the clock of the frame
    /// shown then, for sources with a clock table).
    pub fn log_time_at(&self, time: VideoTime) -> LogTime {
        let clock = self.clocks.as_ref().and_then(|c| c.clock_at(time.0));
        self.log_time(time, clock)
    }

    /// The presentation time to seek to for `log_time` (see the module docs).
    pub fn video_time(&self, log_time: LogTime) -> VideoTime {
        let clock = (log_time.0 - self.offset) / self.rate;
        // The difference carries the log time's rounding.
        let magnitude = log_time.0.abs().max(self.offset.abs()) / self.rate;
        VideoTime(
            self.clocks
                .as_ref()
                .and_then(|c| c.time_of_within(clock, magnitude))
                .unwrap_or(clock),
        )
    }
}

/// A moment of a source as the user gives it (`--from`, `--to`, `--at`):
/// seconds, or cycles of a simulator's clock written with a `c` suffix
/// (`1200c`), and a stoppage step after the cycle's (`296,1c`: the
/// record a stopped server wrote one step into cycle 296).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeArg {
    /// Seconds of the source's clock from its start (of the video for
    /// camera videos).
    Seconds(f64),
    /// Cycles of a simulator's clock from its start, and stoppage steps
    /// into the last one ([`crate::time::cycle_clock`]).
    Cycles { cycle: f64, stopped: u32 },
    /// Presentation seconds of the source, as they are (the viewer's
    /// timeline).
    Video(f64),
}

impl std::fmt::Display for TimeArg {
    /// As the command line gives it: `12.5`, `1200c`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeArg::Seconds(s) | TimeArg::Video(s) => write!(f, "{s}"),
            TimeArg::Cycles { cycle, stopped: 0 } => write!(f, "{cycle}c"),
            TimeArg::Cycles { cycle, stopped } => write!(f, "{cycle},{stopped}c"),
        }
    }
}

/// Why a [`TimeArg`] does not read or apply.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TimeArgError {
    #[error("'{0}' is not a time: give seconds (12.5) or cycles (1200c, or 296,1c for a stoppage step)")]
    Syntax(String),
    #[error("{0} is not a finite time")]
    NotFinite(String),
    #[error("a time in cycles ({cycles}c) needs a source with a simulator's clock; give seconds")]
    NoCycles { cycles: f64 },
}

impl std::str::FromStr for TimeArg {
    type Err = TimeArgError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let (number, cycles) = match t.strip_suffix(['c', 'C']) {
            Some(n) => (n.trim_end(), true),
            None => (t, false),
        };
        let syntax = || TimeArgError::Syntax(s.to_owned());
        // A stoppage step after a cycle: `296,1c`.
        let (number, stopped) = match number.split_once(',') {
            Some((c, k)) if cycles => (c.trim(), k.trim().parse::<u32>().map_err(|_| syntax())?),
            Some(_) => return Err(syntax()),
            None => (number, 0),
        };
        let v: f64 = number.parse().map_err(|_| syntax())?;
        if !v.is_finite() {
            return Err(TimeArgError::NotFinite(s.to_owned()));
        }
        Ok(if cycles {
            TimeArg::Cycles { cycle: v, stopped }
        } else {
            TimeArg::Seconds(v)
        })
    }
}

impl TimeArg {
    /// Seconds of a simulator's clock of cycles of `cycle` seconds (the
    /// seconds themselves for seconds); `None` for cycles without a cycle
    /// or presentation seconds.
    pub fn clock_seconds(self, cycle: Option<f64>) -> Option<f64> {
        match self {
            TimeArg::Seconds(s) => Some(s),
            TimeArg::Cycles { cycle: n, stopped } => {
                let step = cycle?;
                Some(if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) {
                    // A whole cycle: the clock its records carry.
                    crate::time::cycle_clock(n as u32, stopped, step)
                } else {
                    n * step + f64::from(stopped) * crate::time::STOPPED_STEP
                })
            }
            TimeArg::Video(_) => None,
        }
    }

    /// A number that orders moments of the same kind (a stoppage step
    /// after its cycle and before the next).
    pub fn order_key(self) -> f64 {
        match self {
            TimeArg::Seconds(s) | TimeArg::Video(s) => s,
            TimeArg::Cycles { cycle, stopped } => cycle + f64::from(stopped) * 1e-9,
        }
    }

    /// The presentation time of a source this moment names: for a source
    /// whose frames carry a clock, seconds of that clock (from a
    /// simulator's zero when it has cycles of `cycle` seconds, else from
    /// its first frame's) or cycles, and the first frame showing it; for
    /// others the seconds themselves.
    pub fn video_time(
        self,
        clocks: Option<&ClockTable>,
        start: f64,
        cycle: Option<f64>,
    ) -> Result<VideoTime, TimeArgError> {
        let seconds = match self {
            TimeArg::Video(s) => return Ok(VideoTime(s)),
            TimeArg::Seconds(s) => s,
            TimeArg::Cycles { cycle: n, .. } => self
                .clock_seconds(cycle)
                .ok_or(TimeArgError::NoCycles { cycles: n })?,
        };
        Ok(VideoTime(match clocks {
            Some(c) => {
                // A simulator's clock counts from its own zero (cycle 0);
                // other clocks (a recorder's) from the first frame.
                let first = match cycle {
                    Some(_) => 0.0,
                    None => c.clock_at(start).unwrap_or(0.0),
                };
                let clock = first + seconds;
                match c.last() {
                    // Past the last frame: as far past its time.
                    Some((t, last)) if clock > last => t + (clock - last),
                    _ => c.time_of(clock).unwrap_or(seconds),
                }
            }
            None => seconds,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::ClockError;

    #[test]
    fn times_read_as_seconds_or_cycles_and_map_through_clocks() {
        assert_eq!("12.5".parse::<TimeArg>(), Ok(TimeArg::Seconds(12.5)));
        assert_eq!(
            " 1200c".parse::<TimeArg>(),
            Ok(TimeArg::Cycles {
                cycle: 1200.0,
                stopped: 0
            })
        );
        let stop = "296,1c".parse::<TimeArg>().unwrap();
        assert_eq!(
            stop,
            TimeArg::Cycles {
                cycle: 296.0,
                stopped: 1
            }
        );
        assert_eq!(stop.to_string(), "296,1c");
        assert_eq!(
            stop.clock_seconds(Some(0.1)),
            Some(crate::time::cycle_clock(296, 1, 0.1))
        );
        assert_eq!(stop.clock_seconds(None), None);
        for bad in ["296,1", "296,c", "296,-1c", "296,1.5c", ",1c"] {
            assert!(bad.parse::<TimeArg>().is_err(), "{bad}");
        }
        assert!(
            "abc"
                .parse::<TimeArg>()
                .unwrap_err()
                .to_string()
                .contains("1200c")
        );
        assert!(matches!(
            "nan".parse::<TimeArg>(),
            Err(TimeArgError::NotFinite(_))
        ));
        assert!(matches!(
            "infc".parse::<TimeArg>(),
            Err(TimeArgError::NotFinite(_))
        ));
        let c = stoppage();
        // 0.4 s of clock: after the stoppage, frame 7.
        assert!((TimeArg::Seconds(0.4).video_time(Some(&c), 0.0, None).unwrap().0 - 0.7).abs() < 1e-9);
        assert!(
            (TimeArg::Cycles {
                cycle: 3.0,
                stopped: 0
            }
            .video_time(Some(&c), 0.0, Some(0.1))
            .unwrap()
            .0 - 0.3)
                .abs()
                < 1e-9
        );
        assert_eq!(
            TimeArg::Seconds(2.0).video_time(None, 0.0, None),
            Ok(VideoTime(2.0))
        );
        // Past the end: as far past the last frame.
        assert!((TimeArg::Seconds(1.6).video_time(Some(&c), 0.0, None).unwrap().0 - 1.9).abs() < 1e-9);
        assert!(
            TimeArg::Cycles {
                cycle: 3.0,
                stopped: 0
            }
            .video_time(None, 0.0, None)
            .is_err()
        );
        // A stoppage step: the picture of that record (frames 3–6 stand
        // at 0.3; with steps of 1e-5 the clock table's 0.3 is cycle 3).
        let c = ClockTable::new(
            [0.0, 0.1, 0.2, 0.3, 0.30001, 0.30002, 0.4]
                .iter()
                .enumerate()
                .map(|(i, &k)| (i as f64 * 0.1, k)),
        )
        .unwrap();
        let at = |s: &str| s.parse::<TimeArg>().unwrap().video_time(Some(&c), 0.0, Some(0.1));
        assert!((at("3,2c").unwrap().0 - 0.5).abs() < 1e-9);
        assert!((at("3c").unwrap().0 - 0.3).abs() < 1e-9);
    }

    #[test]
    fn camera_videos_add_the_offset_both_ways() {
        let m = TimeMap::new(100.0);
        assert_eq!(m.log_time(VideoTime(2.5), None).0, 102.5);
        assert_eq!(m.log_time_at(VideoTime(2.5)).0, 102.5);
        assert_eq!(m.video_time(LogTime(102.5)).0, 2.5);
        let r = TimeMap::new(10.0).with_rate(2.0);
        assert_eq!(r.log_time(VideoTime(3.0), None).0, 16.0);
        assert_eq!(r.video_time(LogTime(16.0)).0, 3.0);
        assert_eq!(TimeMap::new(0.0).with_rate(f64::NAN).rate(), 1.0);
        assert_eq!(TimeMap::new(0.0).with_rate(0.0).rate(), 1.0);
    }

    /// Ten frames at 0.1 s; the clock stops at 0.3 for frames 3–6.
    fn stoppage() -> ClockTable {
        let clocks = [0.0, 0.1, 0.2, 0.3, 0.3, 0.3, 0.3, 0.4, 0.5, 0.6];
        ClockTable::new(clocks.iter().enumerate().map(|(i, &c)| (i as f64 * 0.1, c))).unwrap()
    }

    #[test]
    fn a_clock_that_stands_still_maps_back_to_the_first_frame_showing_it() {
        let m = TimeMap::new(50.0).with_clocks(Some(Arc::new(stoppage())));
        // Forward: the frame's clock, not its time.
        assert!((m.log_time(VideoTime(0.5), Some(0.3)).0 - 50.3).abs() < 1e-12);
        assert!((m.log_time_at(VideoTime(0.55)).0 - 50.3).abs() < 1e-12);
        assert!((m.log_time_at(VideoTime(0.75)).0 - 50.4).abs() < 1e-12);
        // Back: the stoppage starts at frame 3.
        assert!((m.video_time(LogTime(50.3)).0 - 0.3).abs() < 1e-12);
        assert!((m.video_time(LogTime(50.35)).0 - 0.3).abs() < 1e-12);
        assert!((m.video_time(LogTime(50.4)).0 - 0.7).abs() < 1e-12);
        // Before and after the table: the first and the last frame.
        assert_eq!(m.video_time(LogTime(0.0)).0, 0.0);
        assert!((m.video_time(LogTime(1000.0)).0 - 0.9).abs() < 1e-12);
        // A log time that is not a number stays one (nothing to seek to).
        assert!(m.video_time(LogTime(f64::NAN)).0.is_nan());
    }

    #[test]
    fn clock_tables_are_checked() {
        assert!(matches!(
            ClockTable::new([(0.0, 0.0), (0.0, 1.0)]),
            Err(ClockError::TimeNotIncreasing { index: 1, .. })
        ));
        let e = ClockTable::new([(0.0, 1.0), (0.1, 0.5)]).unwrap_err();
        assert!(e.to_string().contains("frame 1"), "{e}");
        assert!(ClockTable::new([(f64::NAN, 0.0)]).is_err());
        let empty = ClockTable::new([]).unwrap();
        assert!(empty.is_empty() && empty.time_of(1.0).is_none() && empty.clock_at(1.0).is_none());
    }

    proptest::proptest! {
        /// The inverse finds a frame whose clock is the latest not after
        /// the one asked for, and the first such frame, as a linear scan does.
        #[test]
        fn inverse_matches_a_linear_scan(
            steps in proptest::collection::vec(0u8..3, 1..60),
            ask in -5.0f64..70.0,
        ) {
            let mut clock = 0.0;
            let pairs: Vec<(f64, f64)> = steps
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    clock += f64::from(s);
                    (i as f64, clock)
                })
                .collect();
            let table = ClockTable::new(pairs.clone()).unwrap();
            let latest = pairs.iter().map(|p| p.1).filter(|&c| c <= ask).fold(f64::NEG_INFINITY, f64::max);
            let want = pairs
                .iter()
                .find(|p| p.1 == latest)
                .map_or(pairs[0].0, |p| p.0);
            proptest::prop_assert_eq!(table.time_of(ask), Some(want));
            let shown = pairs.iter().rev().find(|p| p.0 <= ask).unwrap_or(&pairs[0]);
            proptest::prop_assert_eq!(table.clock_at(ask), Some(shown.1));
        }
    }
}
