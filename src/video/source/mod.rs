//! Frame sources: everything that hands out pictures with their times, in
//! presentation order, with seeking — a video file decoded with FFmpeg, a
//! still image, generated frames, and the sources other modules add (a
//! simulated match rendered from its game log). The viewer and export
//! only consume [`FrameSource`]s; neither knows where frames come from:
//! the format table ([`crate::formats::open_source`]) opens a file as
//! the source its format says.
//!
//! A [`SourceFrame`] carries its presentation `time` (seconds from the
//! source's start) and, for sources that know more than a camera does,
//! the source's own log `clock` for that frame (a simulator's game clock
//! stops during stoppages while pictures go on) and an exact floor `mask`
//! (a renderer knows where every player stands). The pipeline maps
//! `clock.unwrap_or(time)` to log time through a
//! [`TimeMap`](crate::video::TimeMap) and, with the mask method `source`
//! (or `auto`, the default), hides drawings with the frame's own mask.
//!
//! Around a source: [`ReadAhead`] decodes on its own thread a few frames
//! ahead of the reader, and [`FrameRing`] keeps recent frames for a
//! player that seeks, steps back and redraws.
//!
//! # Adding a source
//! A new kind of source is a type implementing [`FrameSource`], opened by
//! an [`OpenFn`] that its format's line in the format table names
//! ([`crate::input::Format::source`]). Errors of the new source's own
//! kind go into [`SourceError::Other`] with the file's path.

mod decoder;
mod frame;
mod read_ahead;
mod ring;
mod still;
mod synthetic;

use std::path::Path;

pub use decoder::DecoderSource;
pub use read_ahead::ReadAhead;
pub use ring::FrameRing;
pub use still::{StillSource, is_still};
pub use synthetic::SyntheticSource;

pub use frame::{BoxError, FrameSource, OpenFn, OpenOptions, SourceError, SourceFrame, SourceInfo};

/// Opens a still picture (a one-frame source).
pub fn open_still(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    Ok(Box::new(StillSource::open(path, options)?))
}

/// Opens anything FFmpeg decodes (a video, or a picture it reads).
pub fn open_video(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    Ok(Box::new(DecoderSource::open(path, options)?))
}
