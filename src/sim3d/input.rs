//! What every 3D-league reader shares: a file read whole, gzip'ed or plain
//! (sniffed from its first bytes, never from its name), with a bound on its
//! size so that an endless pipe or a gzip bomb is an error instead of
//! exhausted memory; the errors of reading and parsing; warnings with the
//! line they are about; and a file's lines.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::bounded::{ReadLimited, read_limited};

/// At most this many warnings are kept per file; the rest are counted.
pub const MAX_WARNINGS: usize = 200;

/// Why bytes could not be read as the format asked for.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not this format at all (nothing in it was recognised).
    #[error("not {what}: {why}")]
    NotThisFormat { what: &'static str, why: String },
    /// A message that is malformed where the reader cannot go on.
    #[error("line {line} (byte {offset}): {message}")]
    Bad {
        line: usize,
        offset: u64,
        message: String,
    },
}

/// Errors of loading a 3D-league file; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    #[error("{path}: gzip data corrupt after {offset} decompressed bytes")]
    Gzip {
        path: PathBuf,
        offset: u64,
        #[source]
        error: io::Error,
    },
    #[error("{path}: larger than {limit} bytes once decompressed")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{path}: {error}")]
    Parse { path: PathBuf, error: ParseError },
}

/// Something a reader skipped or doubted without failing, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line of the file (0: not about one line).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

/// Collects warnings, keeping the first [`MAX_WARNINGS`] and counting the rest.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    list: Vec<Warning>,
    dropped: usize,
}

impl Warnings {
    pub fn push(&mut self, line: usize, message: impl Into<String>) {
        if self.list.len() >= MAX_WARNINGS {
            self.dropped += 1;
        } else {
            self.list.push(Warning {
                line,
                message: message.into(),
            });
        }
    }

    pub fn finish(mut self) -> Vec<Warning> {
        if self.dropped > 0 {
            self.list.push(Warning {
                line: 0,
                message: format!("… and {} more warnings", self.dropped),
            });
        }
        self.list
    }
}

/// The largest file, once decompressed, the readers accept: 4 GiB (a whole
/// 11-vs-11 match's monitor log is about half of that).
pub const MAX_INPUT: u64 = 4 << 30;

/// Reads the file at `path` whole, decompressing it when it is gzip'ed.
pub fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    let io = |error| LoadError::Io {
        path: path.to_owned(),
        error,
    };
    let file = crate::files::open_input(path).map_err(io)?;
    read_limited(file, MAX_INPUT).map_err(|e| match e {
        ReadLimited::Io(error) => io(error),
        ReadLimited::TooLarge => LoadError::TooLarge {
            path: path.to_owned(),
            limit: MAX_INPUT,
        },
        ReadLimited::Gzip { offset, error } => LoadError::Gzip {
            path: path.to_owned(),
            offset,
            error,
        },
    })
}
