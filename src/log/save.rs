//! Writing a log to a file in one of the native formats, chosen by the
//! file's extension, atomically.

use std::io;
use std::path::Path;

use super::{Log, LogError, native, text};

/// How [`save_as`] writes a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveFormat {
    /// Native binary, compressed with zstd at `zstd_level` when it is `Some`.
    Native {
        /// zstd level (1–22), or `None` for no compression.
        zstd_level: Option<i32>,
    },
    /// Text notation.
    Text,
}

impl SaveFormat {
    /// The format [`save`] uses for `path`: `.txt` → text notation, `.zst`
    /// → zstd-compressed native binary, anything else → native binary.
    pub fn for_path(path: &Path) -> Self {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
        {
            Some(e) if e == "txt" => SaveFormat::Text,
            Some(e) if e == "zst" => SaveFormat::Native { zstd_level: Some(3) },
            _ => SaveFormat::Native { zstd_level: None },
        }
    }
}

/// Saves a log in the format its extension asks for (see
/// [`SaveFormat::for_path`]), atomically: a temporary file beside `path`
/// is renamed over it only once complete.
pub fn save(log: &Log, path: &Path) -> Result<(), LogError> {
    save_as(log, path, SaveFormat::for_path(path))
}

/// Saves a log in the given format, atomically.
pub fn save_as(log: &Log, path: &Path, format: SaveFormat) -> Result<(), LogError> {
    write_file_atomic(path, |mut w| match format {
        SaveFormat::Native { zstd_level } => native::write(log, &mut w, zstd_level),
        SaveFormat::Text => text::write(log, &mut w),
    })
}

/// Streams into a temporary file beside `path` (or what its link names),
/// then renames it over it; on failure the temporary file is removed. A
/// pipe, a device or `-` is written as it is ([`crate::files::Target`]).
fn write_file_atomic(
    path: &Path,
    body: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> Result<(), LogError> {
    crate::files::write_atomic_with(path, body).map_err(|e| LogError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_format_follows_extension() {
        assert_eq!(SaveFormat::for_path(Path::new("a/b.TXT")), SaveFormat::Text);
        assert_eq!(
            SaveFormat::for_path(Path::new("b.ulog")),
            SaveFormat::Native { zstd_level: None }
        );
        assert!(matches!(
            SaveFormat::for_path(Path::new("b.ulog.zst")),
            SaveFormat::Native { zstd_level: Some(_) }
        ));
    }
}
