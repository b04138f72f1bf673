//! Live runs (`underlay live`): a camera stream and logs arriving over the
//! network, drawn behind the robots as they come, and sent on as a stream
//! (or recorded) — the thesis's "interactive or at least live view".
//!
//! - `camera`: the live picture (any input FFmpeg opens, or a file at its
//!   own pace), decoded on its own thread with low-latency demuxing,
//!   reopened with back-off when it stalls, frames dropped and counted
//!   only when the drawing cannot keep up.
//! - `sources`: logs over the network — native logs over UDP (one frame a
//!   datagram) and TCP (the file format as a stream).
//! - `store`: the logs as they arrive, one per source, kept within a
//!   window and a budget and merged for drawing when something new came.
//! - `run`: the loop: each frame held back by the delay, its log time its
//!   arrival on this machine's clock plus the session's offset, drawn
//!   through the same pipeline and draw settings as `view` and `export`,
//!   encoded with low-latency settings to each output.
//!
//! Drawing is the pipeline's ([`crate::pipeline`]); what a session says
//! (calibration, mask, filter, offset) means what it means for a file.

mod camera;
mod run;
mod sources;
mod store;

use std::path::PathBuf;

pub use camera::{CameraOptions, CameraStatus, LiveCamera, LiveFrame, now};
pub use run::{Clock, LiveOptions, LiveReport, LiveStatus, OutputKind, run};
pub use sources::{LogSource, MAX_CONNECTIONS, Receivers, start as start_sources};
pub use store::{LiveLogs, SourceCounts, SourceId, StoreOptions};

/// What can stop a live run.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A log source given in a form that cannot be used.
    #[error("{source_name}: {why}")]
    BadSource { source_name: String, why: String },
    /// A source's address could not be listened on.
    #[error("{source_name}: cannot listen there")]
    Bind {
        source_name: String,
        #[source]
        error: std::io::Error,
    },
    /// No picture came from the camera.
    #[error("{input}: no picture came within {waited:.0} s{}", why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default())]
    NoPicture {
        input: String,
        waited: f64,
        why: Option<String>,
    },
    /// The camera's picture changed size while encoding.
    #[error("{input}: the picture changed size from {from:?} to {to:?}; outputs keep their first size")]
    SizeChanged {
        input: String,
        from: (usize, usize),
        to: (usize, usize),
    },
    /// The session has no calibration (and drawing without one was not asked for).
    #[error(
        "no calibration: give --calib, a session with one, or --no-calibration to stream the picture alone"
    )]
    NoCalibration,
    /// An output that cannot be written.
    #[error("{output}: {why}")]
    BadOutput { output: String, why: String },
    /// The session's files (logs, calibration, mask) could not be read.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    /// Drawing failed.
    #[error(transparent)]
    Pipeline(#[from] crate::pipeline::PipelineError),
    /// Encoding or sending an output failed.
    #[error(transparent)]
    Video(#[from] crate::video::VideoError),
    /// The picture does not fit the session (a mask image of another size).
    #[error("{input}: the picture does not fit the session")]
    DoesNotFit {
        input: String,
        #[source]
        source: crate::mask::MaskError,
    },
    /// Writing over an input was refused.
    #[error("{0}: is an input of this run; not written over")]
    WouldOverwrite(PathBuf),
}
