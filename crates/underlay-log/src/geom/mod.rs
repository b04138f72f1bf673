//! The plane and space the model's coordinates live in: the 2-D vector of
//! floor and picture points ([`Vec2`]) with the plane helpers written once
//! for every user (unit vectors, angles, rotation, distances to segments:
//! [`vec2`]), and 3-D vectors as `[f64; 3]` ([`vec3`]).
//!
//! The application's `geom` re-exports both, so that `underlay::geom::Vec2`
//! and `underlay_log::Vec2` are one type.

pub mod vec2;
pub mod vec3;

pub use vec2::Vec2;
pub use vec3::Vec3;
