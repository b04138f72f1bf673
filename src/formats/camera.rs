//! Camera calibrations carried by logs (an SSL game log's cameras), found
//! among a session's logs through the format table.

use std::path::{Path, PathBuf};

use super::head::HeadBuf;
use super::table::log_format;
use crate::input::Camera;
use crate::log::LogError;

/// The cameras of the first of `logs` whose format carries camera
/// calibrations, with its path; `None` when no log does.
pub fn cameras_among(logs: &[PathBuf]) -> Result<Option<(&Path, Vec<Camera>)>, LogError> {
    for path in logs {
        // A pipe's bytes can be read once: only regular files are looked at.
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(head) = HeadBuf::of_file(path) else {
            continue;
        };
        if let Some(read) = log_format(&head.head(Some(path))).and_then(|f| f.cameras) {
            return Ok(Some((path, read(path)?)));
        }
    }
    Ok(None)
}
