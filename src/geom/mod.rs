//! Small geometry shared across underlay: the 2-D vector of floor and
//! image points ([`Vec2`]) with the helpers the drawing, calibration and
//! demo code use ([`vec2`]), 3-D vectors as `[f64; 3]` ([`vec3`]) — both
//! defined in the log crate (`underlay_log::geom`) and re-exported here —
//! and 3×3 matrices ([`mat3`]: products, determinant, inverse, homogeneous
//! mapping).
//!
//! # Spaces
//! One vector type serves several coordinate spaces; the aliases below name
//! them in signatures where the space is not obvious:
//! - [`WorldPoint`]: a point on the floor in the log's world units
//!   (millimetres unless the log header says otherwise), x and y as the
//!   robots' software logs them;
//! - [`PixelPoint`]: a point in a video frame in pixels, x to the right and
//!   y down, pixel centres at integers (OpenCV's convention).
//!
//! The calibration maps the first to the second
//! ([`crate::calib::Calibration::project`]) and back.

pub mod mat3;
// The vectors live with the log model (`underlay_log::geom`), whose
// coordinates they are; these are the same types and functions.
pub use underlay_log::geom::{vec2, vec3};

pub use mat3::Mat3;
pub use vec2::Vec2;

/// A point on the floor, in the log's world units (see the module docs).
pub type WorldPoint = Vec2;

/// A point in a video frame, in pixels with centres at integers (see the
/// module docs).
pub type PixelPoint = Vec2;
