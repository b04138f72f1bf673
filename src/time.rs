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

/// Stoppage steps per second (1 / [`STOPPED_STEP`], exactly).
const STOPPED_PER_SECOND: f64 = 100_000.0;

/// A simulator's clock at `cycle` and stoppage step `stopped`, with cycles
/// of `step` seconds: cycle × step + stopped × [`STOPPED_STEP`] (monotonic
/// over a match, every stoppage step its own distinct time). When a cycle
/// is a whole number of stoppage steps (0.1 s, 0.02 s, …) the clock is
/// that count of steps over their rate, correctly rounded: the very number
/// a user types for it (29.7 for cycle 297, 29.70001 for 297,1), where
/// 297 × 0.1 would be 29.700000000000003.
pub fn cycle_clock(cycle: u32, stopped: u32, step: f64) -> f64 {
    let steps = step * STOPPED_PER_SECOND;
    let whole = steps.round();
    if (steps - whole).abs() < 1e-6 && (1.0..1e9).contains(&whole) {
        (f64::from(cycle) * whole + f64::from(stopped)) / STOPPED_PER_SECOND
    } else {
        f64::from(cycle) * step + f64::from(stopped) * STOPPED_STEP
    }
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

/// The latest time that is still `t` but for rounding (8 units in its last
/// place): a simulator's record at most this late is at or before `t`
/// (29.7 is a record a writer stamped 297 × 0.1 = 29.700000000000003;
/// [`cycle_clock`]'s own clocks are the decimals themselves).
pub fn within_rounding(t: f64) -> f64 {
    t + 8.0 * f64::EPSILON * t.abs().max(1.0)
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
    fn typed_decimals_are_the_records_they_name() {
        assert_eq!(cycle_clock(297, 0, 0.1), 29.7);
        assert_eq!(cycle_clock(297, 1, 0.1), 29.70001);
        assert_eq!(cycle_clock(6000, 51, 0.1), 600.00051);
        assert_eq!(cycle_clock(3, 0, 0.02), 0.06);
        // A cycle of no whole number of stoppage steps: the product.
        assert_eq!(cycle_clock(3, 1, 0.0333333), 3.0 * 0.0333333 + 1e-5);
        assert_eq!(cycle_of(cycle_clock(297, 1, 0.1), 0.1), Some((297, 1)));
        // A clock within rounding of a typed time is that time.
        let product = 297.0 * 0.1;
        assert!(29.7 < product && product <= within_rounding(29.7));
        assert!(within_rounding(29.7) < cycle_clock(297, 1, 0.1));
        assert!(within_rounding(1.7e9) - 1.7e9 < 5e-6);
    }

    #[test]
    fn times_show_as_their_seconds() {
        assert_eq!(format!("{:.2}", LogTime(1.234)), "1.23");
        assert_eq!(VideoTime(2.5).secs(), 2.5);
        assert!(!LogTime(f64::NAN).is_finite() && VideoTime(0.0).is_finite());
        assert!(VideoTime(1.0) < VideoTime(2.0));
    }
}
