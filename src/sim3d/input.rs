//! Reading a 3D-league file whole, gzip'ed or plain (sniffed from its first
//! bytes, never from its name), with a bound on its size so that an endless
//! pipe or a gzip bomb is an error instead of exhausted memory.

use std::path::Path;

use super::LoadError;
use crate::bounded::{ReadLimited, read_limited};

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

