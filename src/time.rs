//! The two clocks underlay maps between, as types of their own: a
//! [`VideoTime`] is a frame's presentation time (seconds from the start of
//! its source), a [`LogTime`] a time on the logs' clock (seconds as the log
//! records them, for most logs since the Unix epoch). Both are seconds,
//! and mixing them up is the classic sync bug, so where they cross from
//! one module to another (the time map, the pipeline, selection, the
//! viewer's clock) they travel as these types, and only
//! [`crate::video::TimeMap`] turns one into the other.

use std::fmt;

/// A time on a frame source's clock: presentation seconds from its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct VideoTime(pub f64);

/// A time on the logs' clock, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct LogTime(pub f64);

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
