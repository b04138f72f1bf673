//! The viewer's video input and output: FFmpeg decoding behind the
//! [`FrameSource`] trait, and the export dialog's job running the shared
//! exporter with the viewer's pipeline settings.
//!
//! The video module (decoder, encoder, exporter) is not on this branch
//! yet: until it is merged, opening a video and exporting say so.

use std::path::{Path, PathBuf};

use super::export::{ExportFn, ExportOptions};
use super::source::FrameSource;

/// Opens a video file as a frame source.
pub fn open_video(path: &Path) -> anyhow::Result<Box<dyn FrameSource>> {
    anyhow::bail!(
        "{}: video decoding is not available in this build yet",
        path.display()
    )
}

/// Builds the export of `session` that `options` ask for.
pub fn export_fn(
    _session: crate::session::Session,
    _session_path: Option<PathBuf>,
    _processors: Vec<super::overlay::PipelineProcessor>,
    _options: ExportOptions,
    _expected_frames: Option<u64>,
) -> ExportFn {
    Box::new(|_, _| Err("exporting is not available in this build yet".into()))
}
