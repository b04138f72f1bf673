//! A source's own log clock at every frame ([`ClockTable`]): a
//! simulator's game time, which stands still during stoppages while the
//! pictures go on, kept so that a log time can be mapped back to the
//! frame that shows it.

/// Clocks closer than this many units in the last place of the clock (3 µs
/// at Unix epoch times, 5e-14 s at a match's) are the same time.
const CLOCK_ULPS: f64 = 8.0;

/// Errors building a [`ClockTable`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClockError {
    #[error("frame {index}: time {time} s or clock {clock} s is not a finite number")]
    NotFinite { index: usize, time: f64, clock: f64 },
    #[error("frame {index}: time {time} s does not come after the previous frame's {previous} s")]
    TimeNotIncreasing { index: usize, time: f64, previous: f64 },
    #[error("frame {index}: clock {clock} s goes back from the previous frame's {previous} s")]
    ClockGoesBack { index: usize, clock: f64, previous: f64 },
}

/// The log clock of every frame of a source: frame times strictly
/// increasing, clocks never decreasing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockTable {
    times: Vec<f64>,
    clocks: Vec<f64>,
}

impl ClockTable {
    /// A table of `(frame time, clock)` pairs in frame order (checked).
    pub fn new(frames: impl IntoIterator<Item = (f64, f64)>) -> Result<Self, ClockError> {
        let mut t = ClockTable::default();
        for (index, (time, clock)) in frames.into_iter().enumerate() {
            if !(time.is_finite() && clock.is_finite()) {
                return Err(ClockError::NotFinite { index, time, clock });
            }
            if let (Some(&pt), Some(&pc)) = (t.times.last(), t.clocks.last()) {
                if time <= pt {
                    return Err(ClockError::TimeNotIncreasing {
                        index,
                        time,
                        previous: pt,
                    });
                }
                if clock < pc {
                    return Err(ClockError::ClockGoesBack {
                        index,
                        clock,
                        previous: pc,
                    });
                }
            }
            t.times.push(time);
            t.clocks.push(clock);
        }
        Ok(t)
    }

    /// The last frame's time and clock.
    pub fn last(&self) -> Option<(f64, f64)> {
        Some((*self.times.last()?, *self.clocks.last()?))
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether the table has no frame.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The clock of the frame shown at `time` (the last frame whose time
    /// is ≤ `time`; the first frame before it). `None` when empty or
    /// `time` is not a number.
    pub fn clock_at(&self, time: f64) -> Option<f64> {
        if time.is_nan() {
            return None;
        }
        let i = self.times.partition_point(|&t| t <= time).saturating_sub(1);
        self.clocks.get(i).copied()
    }

    /// The time of the frame to show for `clock`: of the frames whose
    /// clock is the latest not after `clock` (within rounding), the
    /// first (the first frame when `clock` is before every frame's). `None` when empty or `clock`
    /// is not a number.
    pub fn time_of(&self, clock: f64) -> Option<f64> {
        self.time_of_within(clock, clock)
    }

    /// Like [`ClockTable::time_of`], for a clock worked out from a number
    /// as large as `magnitude` (a log time near the Unix epoch less an
    /// offset carries that time's rounding, about 0.2 µs).
    pub fn time_of_within(&self, clock: f64, magnitude: f64) -> Option<f64> {
        if clock.is_nan() || self.is_empty() {
            return None;
        }
        // A simulator's stoppage steps are 10 µs apart: a few ulps, no
        // more, are the same time.
        let scale = clock.abs().max(magnitude.abs()).max(1.0);
        let clock = clock + CLOCK_ULPS * f64::EPSILON * scale;
        let after = self.clocks.partition_point(|&c| c <= clock);
        let Some(&latest) = after.checked_sub(1).map(|i| &self.clocks[i]) else {
            return self.times.first().copied();
        };
        let first = self.clocks.partition_point(|&c| c < latest);
        self.times.get(first).copied()
    }
}
