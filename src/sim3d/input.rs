//! What every 3D-league reader shares: a file read whole, gzip'ed or plain
//! (sniffed from its first bytes, never from its name), with a bound on its
//! size so that an endless pipe or a gzip bomb is an error instead of
//! exhausted memory; the errors of reading and parsing; warnings with the
//! line they are about; and a file's lines.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::bounded::{Budget, FileError, read_file as read_file_within};

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
    #[error("{path}")]
    TooLarge {
        path: PathBuf,
        #[source]
        source: crate::bounded::OverBudget,
    },
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
    tally: crate::log::validate::Tally,
}

impl Warnings {
    pub fn push(&mut self, line: usize, message: impl Into<String>) {
        let message = message.into();
        if self.tally.keep(&message) {
            self.list.push(Warning { line, message });
        }
    }

    /// The warnings kept, and a line for each kind not all kept.
    pub fn finish(mut self) -> Vec<Warning> {
        self.list.extend(
            self.tally
                .summary()
                .into_iter()
                .map(|message| Warning { line: 0, message }),
        );
        self.list
    }
}

/// The most a monitor log may deliver (decompressed) by default: its
/// model costs about its own size (a whole match's log is about 2 GB).
pub const MAX_MONITOR: u64 = crate::bounded::DEFAULT_MAX_INPUT;

/// The most a perception log or a RoboViz recording may deliver by
/// default: 512 MiB (their models cost three to seven times that).
pub const MAX_AGENT_LOG: u64 = 512 << 20;

/// Reads the file at `path` whole, decompressing it when it is gzip'ed,
/// within the input budget ([`crate::bounded`]) for a format that allows
/// `format_max` bytes.
pub fn read_file(path: &Path, format_max: u64) -> Result<Vec<u8>, LoadError> {
    let io = |error| LoadError::Io {
        path: path.to_owned(),
        error,
    };
    read_file_within(path, Budget::current(), format_max).map_err(|e| match e {
        FileError::Io(error) => io(error),
        FileError::OverBudget(source) => LoadError::TooLarge {
            path: path.to_owned(),
            source,
        },
        FileError::Gzip { offset, error } => LoadError::Gzip {
            path: path.to_owned(),
            offset,
            error,
        },
    })
}
