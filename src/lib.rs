//! underlay: draw a robot's reasoning onto the video of its run, as if
//! painted on the floor and hidden behind the robots.
//!
//! The data flow is log → selection → calibration → drawing, composited
//! onto video frames where the floor mask allows; `docs/ARCHITECTURE.md`
//! has the module table.

pub mod bounded;
pub mod calib;
pub mod cli;
pub mod demo;
pub mod draw;
pub mod error;
#[cfg(any(test, feature = "test-util"))]
pub mod eval;
pub mod export;
pub mod files;
pub mod floor;
pub mod formats;
pub mod geom;
pub mod image;
pub mod input;
pub mod live;
pub mod log;
pub mod mask;
pub mod pipeline;
pub mod pitch;
pub mod ros;
pub mod select;
pub mod session;
pub mod sexp;
pub mod sim2d;
pub mod sim3d;
pub mod simd;
pub mod ssl;
pub mod sync;
#[cfg(test)]
mod testing;
pub mod thesis;
pub mod time;
pub mod toml_text;
pub mod video;
pub mod viewer;

/// The error a long-running command returns when the user pressed Ctrl-C.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;
