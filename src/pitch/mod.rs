//! The rendered pitch: a match with no camera (a simulator's game log, an
//! SSL game log) made into pictures that underlay plays and draws on like
//! a video.
//!
//! - [`model`]: the league-neutral [`Match`] — field marks, two teams,
//!   snapshots of bodies and ball on the game clock — that each league's
//!   reader fills.
//! - [`render`]: a top-down picture of one snapshot and its exact floor
//!   mask; the [`View`] that maps world to pixels is the calibration the
//!   match's logs are drawn with.
//! - [`source`]: [`MatchSource`], a [`FrameSource`](crate::video::source::FrameSource)
//!   of rendered pictures carrying their game clock and mask.

pub mod model;
pub mod render;
pub mod source;
pub mod tilt;

pub use model::{Body, Card, Field, Goal, Mark, Match, Pace, Snapshot, Team};
pub use render::{Renderer, View};
pub use source::{MatchError, MatchSource, RenderOptions};
