//! The errors of reading and writing logs: [`ReadError`] says what is
//! wrong and where in the bytes, [`LogError`] adds the file.

use std::io;
use std::path::{Path, PathBuf};

/// What went wrong reading a log, with the place it went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system failed to read.
    #[error("read failed at byte {offset}: {error}")]
    Io { offset: u64, error: io::Error },
    /// Zero bytes.
    #[error("the file is empty")]
    Empty,
    /// No format recognises the bytes (or a reader was given a file that
    /// is not its kind: a wrong magic).
    #[error("not a visualization log: {0}")]
    UnknownFormat(String),
    /// A native log of a version this build cannot read: written by a
    /// newer underlay (or a damaged prefix: there is no version 0).
    /// `newest` is the newest version this build reads; it reads every
    /// version from 1 to it.
    #[error("{}", unsupported_version(*.found, *.newest))]
    UnsupportedVersion { found: u8, newest: u8 },
    /// A native log with an unknown compression byte.
    #[error("native log compression {0} is not supported (0 = none, 1 = zstd)")]
    UnsupportedCompression(u8),
    /// Bytes that do not decode; `frame` is the index the frame being
    /// read would have had.
    #[error("at byte {offset} (frame {frame}): {message}")]
    Corrupt {
        offset: u64,
        frame: usize,
        message: String,
    },
    /// Text notation that does not parse (1-based line and column).
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// Text notation with bytes that are not UTF-8.
    #[error("at byte {offset}: text is not valid UTF-8")]
    NotUtf8 { offset: u64 },
    /// Most of the input does not read as the format it starts as.
    #[error(
        "most of it does not read as {format}: {} of its {} bytes do not (the first at byte {}{}); it is \
         probably something else, or badly damaged",
        crate::validate::group(*.skipped),
        crate::validate::group(*.total),
        crate::validate::group(*.first),
        .said.as_ref().map_or(String::new(), |s| format!(": {s}"))
    )]
    MostlyGarbage {
        skipped: u64,
        total: u64,
        first: u64,
        format: &'static str,
        /// What the reader said of the first damage, when it said anything.
        said: Option<String>,
    },
    /// Something in the input was passed over as damaged and nothing of
    /// it reads: `first` is what the reader said of the first damage.
    #[error("nothing in it reads as {format}: {first}")]
    NothingReadable { format: &'static str, first: String },
    /// A reader's error of its own kind (a league's file that does not
    /// parse, say), or of what it reads through (an input that delivered
    /// more than its budget); it names the place in the file.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// What [`ReadError::UnsupportedVersion`] says.
fn unsupported_version(found: u8, newest: u8) -> String {
    let reads = match newest {
        0 | 1 => "version 1".to_owned(),
        2 => "versions 1 and 2".to_owned(),
        n => format!("versions 1 to {n}"),
    };
    if found > newest {
        format!(
            "native log format version {found} is not supported: the file was written by a newer \
             underlay, and this one reads {reads}; update underlay to read it"
        )
    } else {
        format!(
            "native log format version {found} is not supported: no underlay writes it (this one \
             reads {reads}); the file's prefix is damaged"
        )
    }
}

impl ReadError {
    /// A reader's own error.
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ReadError::Other(Box::new(error))
    }
}

/// Errors of loading and saving logs; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Opening, creating, writing or renaming the file failed.
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    /// The file's content could not be read as a log.
    #[error("{path}: {error}")]
    Read { path: PathBuf, error: ReadError },
    /// The [`Writer`](super::Writer) was used in a way that cannot be written.
    #[error("{path}: {message}")]
    Usage { path: PathBuf, message: String },
    /// A level mapping file ([`super::levels`]) could not be used.
    #[error("{path}: {message}")]
    Levels { path: PathBuf, message: String },
}

impl LogError {
    /// An operating-system error about `path`.
    pub fn io(path: &Path, error: io::Error) -> Self {
        LogError::Io {
            path: path.to_owned(),
            error,
        }
    }
}
