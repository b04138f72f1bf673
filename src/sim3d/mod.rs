//! RoboCup 3D soccer simulation: reading what the league's servers and
//! agents record, and placing what each robot saw in the world.
//!
//! - [`sexp`]: the S-expression parser every reader shares.
//! - [`input`]: files read whole, gzip'ed or plain, with a size bound.
//! - [`field`]: pitch geometry and the field markers' world positions.
//! - [`scene`]: scene graphs (full and diff) and the objects labelled in them.
//! - [`monitor`]: monitor logs (rcssservermj's RSMP, SimSpark's
//!   `sparkmonitor.log`) → ball, robots and game state per frame.
//! - [`perception`]: agent perception logs → what each message told the agent.
//! - [`pose`]: the camera's pose from seen markers, or from the body.
//! - [`place`]: what each agent saw, placed in the world and drawn as a
//!   visualization log.
//! - [`roboviz`]: RoboViz's UDP drawing protocol; [`rvd`]: recordings of
//!   its datagrams and their conversion into a visualization log.
//! - [`record`]: recording RoboViz datagrams (and monitor times) live.
//! - [`logs`]: perception logs and RoboViz recordings wherever a
//!   visualization log is read.
//!
//! Times are the simulation's clock in seconds; positions are metres in
//! the field frame (origin at the centre spot, x towards the right goal).

use std::fmt;
use std::io;
use std::path::PathBuf;

pub mod field;
pub mod input;
pub mod logs;
pub mod monitor;
pub mod perception;
pub mod place;
pub mod pose;
pub mod record;
pub mod render;
pub mod roboviz;
pub mod rvd;
pub mod scene;

pub use field::FieldGeometry;
pub use monitor::MonitorLog;

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

/// Lines of a buffer with their 1-based numbers and byte offsets, without
/// the line break (`\n` or `\r\n`).
pub(crate) fn lines(buf: &[u8]) -> impl Iterator<Item = (usize, u64, &[u8])> {
    let mut offset = 0usize;
    buf.split(|&b| b == b'\n').enumerate().filter_map(move |(i, l)| {
        let at = offset;
        offset += l.len() + 1;
        if at >= buf.len() && l.is_empty() {
            return None;
        }
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        Some((i + 1, at as u64, l))
    })
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_number_and_place_each_line() {
        let got: Vec<_> = lines(b"a\r\nbb\n\nc").collect();
        assert_eq!(
            got,
            [
                (1, 0, &b"a"[..]),
                (2, 3, &b"bb"[..]),
                (3, 6, &b""[..]),
                (4, 7, &b"c"[..])
            ]
        );
        assert_eq!(lines(b"a\n").count(), 1);
        assert_eq!(lines(b"").count(), 0);
    }
}
