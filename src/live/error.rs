//! What can stop a live run ([`LiveError`]).

use std::path::PathBuf;

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
    /// No picture came from the camera (within the wait, or before it ended).
    #[error("{input}: no picture came within {waited:.0} s{}", why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default())]
    NoPicture {
        input: String,
        waited: f64,
        why: Option<String>,
    },
    /// A stop (asked for, or `--timeout`) came before the camera's first
    /// picture: nothing was written.
    #[error(
        "{input}: stopped before the camera sent a picture ({why} after {waited:.1} s{}); nothing was written",
        doing.as_ref().map(|d| format!("; {d}")).unwrap_or_default()
    )]
    Stopped {
        input: String,
        /// What stopped it.
        why: String,
        waited: f64,
        /// What the camera was doing.
        doing: Option<String>,
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
        "no calibration: give --calib, a session with one, or --no-calibration to stream the picture with only the \
         drawings in its own pixels (a log's `picture` shapes)"
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
