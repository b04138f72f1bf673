//! Session files: one TOML file tying a video, a log, the calibration, the
//! time offset, the mask settings and the chosen entities and levels
//! together. The viewer saves it and `export` reads it, so what you see is
//! what you export.
//!
//! Paths inside a session are stored relative to the session file when
//! they can be, and resolved against its folder when loaded.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::calib::Calibration;
use crate::mask::MaskSettings;
use crate::select::FilterSpec;

/// Errors loading or saving a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: Box<toml::de::Error>,
    },
    #[error("{path}: cannot write session: {source}")]
    Serialize {
        path: PathBuf,
        #[source]
        source: toml::ser::Error,
    },
    #[error("{path}: the time offset must be a finite number of seconds, not {offset}")]
    BadOffset { path: PathBuf, offset: f64 },
}

/// Where the calibration comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CalibrationSource {
    /// Stored inline in the session.
    Inline(Calibration),
    /// A calibration file written by `underlay calib solve -o`.
    File { file: PathBuf },
}

/// A whole session as saved on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The video of the run.
    pub video: PathBuf,
    /// The visualization log.
    pub log: PathBuf,
    /// Log time = video time + offset, in seconds.
    #[serde(default)]
    pub offset: f64,
    /// World → image mapping; `None` until calibrated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationSource>,
    /// How floor masks are made.
    #[serde(default)]
    pub mask: MaskSettings,
    /// Which entities and levels are shown.
    #[serde(default)]
    pub filter: FilterSpec,
    /// Instantaneous-frame threshold in seconds; `None` derives it from the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instant_threshold: Option<f64>,
    /// How the viewer shows the session (panels, view toggles): written and
    /// read by the viewer only; drawing does not depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer: Option<toml::Table>,
}

impl Session {
    /// A session for `video` and `log` with default settings.
    pub fn new(video: impl Into<PathBuf>, log: impl Into<PathBuf>) -> Self {
        Session {
            video: video.into(),
            log: log.into(),
            offset: 0.0,
            calibration: None,
            mask: MaskSettings::default(),
            filter: FilterSpec::default(),
            instant_threshold: None,
            viewer: None,
        }
    }

    /// Reads a session file; relative paths in it become relative to its folder.
    pub fn load(path: &Path) -> Result<Self, SessionError> {
        let text = std::fs::read_to_string(path).map_err(|source| SessionError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut s: Session = toml::from_str(&text).map_err(|source| SessionError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        if !s.offset.is_finite() {
            return Err(SessionError::BadOffset {
                path: path.to_owned(),
                offset: s.offset,
            });
        }
        let base = path.parent().unwrap_or(Path::new(""));
        s.video = base.join(&s.video);
        s.log = base.join(&s.log);
        if let Some(CalibrationSource::File { file }) = &mut s.calibration {
            *file = base.join(&*file);
        }
        s.mask.resolve_paths(base);
        Ok(s)
    }

    /// Writes the session atomically (temporary file, then rename), storing
    /// paths relative to the session's folder where possible.
    pub fn save(&self, path: &Path) -> Result<(), SessionError> {
        let base = path.parent().unwrap_or(Path::new(""));
        let mut s = self.clone();
        s.video = relative_to(&s.video, base);
        s.log = relative_to(&s.log, base);
        if let Some(CalibrationSource::File { file }) = &mut s.calibration {
            *file = relative_to(file, base);
        }
        for file in s.mask.paths_mut() {
            *file = relative_to(file, base);
        }
        let text = toml::to_string_pretty(&s).map_err(|source| SessionError::Serialize {
            path: path.to_owned(),
            source,
        })?;
        write_atomic(path, text.as_bytes()).map_err(|source| SessionError::Io {
            path: path.to_owned(),
            source,
        })
    }
}

/// `p` relative to `base` when `p` lies under it, else `p` unchanged.
fn relative_to(p: &Path, base: &Path) -> PathBuf {
    let abs = |q: &Path| std::path::absolute(q).unwrap_or_else(|_| q.to_owned());
    match abs(p).strip_prefix(abs(base)) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_owned(),
        _ => p.to_owned(),
    }
}

pub use crate::files::write_atomic;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_load_round_trips_with_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::new(dir.path().join("run.mp4"), dir.path().join("logs/run.ulog"));
        s.offset = 1_700_000_000.25;
        s.calibration = Some(CalibrationSource::Inline(
            Calibration::from_homography([[1.0, 0.0, 5.0], [0.0, 1.0, 6.0], [0.0, 0.0, 1.0]]).unwrap(),
        ));
        s.filter.max_level = Some(2);
        let p = dir.path().join("s.toml");
        s.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("video = \"run.mp4\""), "{text}");
        let back = Session::load(&p).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn bad_session_names_file_and_place() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.toml");
        std::fs::write(&p, "video = \"a.mp4\"\nlog = 3\n").unwrap();
        let e = Session::load(&p).unwrap_err().to_string();
        assert!(e.contains("bad.toml") && e.contains("line 2"), "{e}");
    }
}
