//! The two clocks underlay maps between, as types of their own: a
//! [`VideoTime`] is a frame's presentation time (seconds from the start of
//! its source), a [`LogTime`] a time on the logs' clock (seconds as the log
//! records them, for most logs since the Unix epoch). Both are seconds,
//! and mixing them up is the classic sync bug, so where they cross from
//! one module to another (the time map, the pipeline, selection, the
//! viewer's clock) they travel as these types, and only
//! [`crate::video::TimeMap`] turns one into the other.
//!
//! A simulator's clock counts cycles and, while play is stopped, stoppage
//! steps ([`cycle_clock`], [`cycle_of`]): the 2D league's game logs are
//! drawn on it, and the viewer shows it in cycles.

use std::fmt;

/// A time on a frame source's clock: presentation seconds from its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct VideoTime(pub f64);

/// A time on the logs' clock, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct LogTime(pub f64);

/// Seconds of a simulator's clock per stoppage step: while play is
/// stopped a simulator's cycle stands still and a stoppage counter runs.
pub const STOPPED_STEP: f64 = 1e-5;

/// A simulator's clock at `cycle` and stoppage step `stopped`, with cycles
/// of `step` seconds: cycle × step + stopped × [`STOPPED_STEP`] (monotonic
/// over a match, every stoppage step its own distinct time).
pub fn cycle_clock(cycle: u32, stopped: u32, step: f64) -> f64 {
    f64::from(cycle) * step + f64::from(stopped) * STOPPED_STEP
}

/// The cycle and stoppage step of a simulator's `clock` (see
/// [`cycle_clock`]) with cycles of `step` seconds.
pub fn cycle_of(clock: f64, step: f64) -> Option<(u64, u64)> {
    if !(clock.is_finite() && clock >= 0.0 && step.is_finite() && step > 0.0) {
        return None;
    }
    let cycle = (clock / step + 1e-6).floor();
    let stopped = ((clock - cycle * step) / STOPPED_STEP).round().max(0.0);
    Some((cycle as u64, stopped as u64))
}

macro_rules! seconds {
    ($t:ident) => {
        impl $t {
            /// The time in seconds.
            pub fn secs(self) -> f64 {
                self.0
            }

            /// Whether the time is a finite number.
            pub fn is_finite(self) -> bool {
                self.0.is_finite()
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

seconds!(VideoTime);
seconds!(LogTime);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_show_as_their_seconds() {
        assert_eq!(format!("{:.2}", LogTime(1.234)), "1.23");
        assert_eq!(VideoTime(2.5).secs(), 2.5);
        assert!(!LogTime(f64::NAN).is_finite() && VideoTime(0.0).is_finite());
        assert!(VideoTime(1.0) < VideoTime(2.0));
    }
}
