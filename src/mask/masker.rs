//! What every masking method is: the [`Masker`] trait (with the state one
//! frame hands the next, [`MaskStep`]), the errors of masking and the two
//! methods that compute nothing ([`NoMask`], [`SourceMasks`]).
//!
//! Maskers read a frame's [`Picture`]: its decoded YUV 4:2:0 planes, or an
//! RGB picture, which the colour methods read as its 4:2:0 conversion
//! ([`super::blocks`]); they write a [`FloorMask`].

use super::MaskDoubt;
use super::adaptive_params::Thresholds;
use super::window;
use crate::floor::FloorMask;
use crate::image::ImageError;
use crate::video::Picture;

/// Errors computing a mask.
#[derive(Debug, thiserror::Error)]
pub enum MaskError {
    #[error("mask source {source_name}: {message}")]
    Source { source_name: String, message: String },
    #[error("mask image")]
    Image(#[from] ImageError),
    #[error(
        "{source_name}: the mask is {mask_w}×{mask_h} but the frame at {time:.3} s is {frame_w}×{frame_h}"
    )]
    SizeMismatch {
        source_name: String,
        time: f64,
        mask_w: usize,
        mask_h: usize,
        frame_w: usize,
        frame_h: usize,
    },
    #[error("frame at {time:.3} s: expected an RGB image (3 channels), got {channels} channels")]
    BadFrame { time: f64, channels: usize },
    #[error("adaptive mask settings: {0}")]
    BadSettings(String),
    #[error("frame at {time:.3} s: the frame source gives no mask of its own")]
    NoSourceMask { time: f64 },
    #[error("mask video")]
    Video(#[source] Box<crate::video::VideoError>),
}

/// What a masker carries from one frame to the next, worked out for one
/// frame by [`Masker::advance`] in frame order and handed to
/// [`Masker::compute_step`], which may run in another instance (on another
/// thread) with the same settings: export computes masks in parallel and
/// still gets exactly the masks of one masker seeing every frame in order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum MaskStep {
    /// Nothing is carried between frames (or `advance` was not asked).
    #[default]
    Stateless,
    /// The adaptive mask's thresholds for the frame, from its floor model
    /// smoothed over the frames before (`None`: no floor: all floor).
    Adaptive(Option<Thresholds>),
}

/// Computes floor masks for frames.
///
/// A masker whose result depends on earlier frames splits its work: the
/// order-dependent part in [`advance`](Self::advance) (called once per
/// frame, in frame order) and the per-pixel part in
/// [`compute_step`](Self::compute_step). Calling `compute` on every frame
/// in order gives the same masks as `advance` in order on one instance and
/// `compute_step` on any instances. Maskers without such state implement
/// `compute` only.
pub trait Masker: Send {
    /// Short name for messages ("thesis", "adaptive", …).
    fn name(&self) -> &str;

    /// Writes the floor mask of `frame` (shown at video time `time`, in
    /// seconds) into `out`, made the picture's size.
    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError>;

    /// Takes `frame` into the state carried between frames and returns
    /// what [`compute_step`](Self::compute_step) needs for it.
    fn advance(&mut self, frame: &Picture<'_>, time: f64) -> Result<MaskStep, MaskError> {
        let _ = (frame, time);
        Ok(MaskStep::Stateless)
    }

    /// Seconds of frames before a frame that its step depends on: starting
    /// [`advance`](Self::advance) that long before a frame gives the step
    /// of a masker that saw every frame from the start (to within float
    /// rounding). 0 for maskers without state.
    fn memory(&self) -> f64 {
        0.0
    }

    /// Writes the floor mask of `frame` given its `step` (from
    /// [`advance`](Self::advance), of this masker or another with the same
    /// settings).
    fn compute_step(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        let _ = step;
        self.compute(frame, time, out)
    }

    /// How far around a pixel this masker must look to decide it, in
    /// pixels, for planning the windows of
    /// [`compute_step_in`](Self::compute_step_in) on a frame `height`
    /// pixels high; `None` when it computes whole masks only.
    fn window_margin(&self, height: usize) -> Option<usize> {
        let _ = height;
        None
    }

    /// Like [`compute_step`](Self::compute_step), but `out` need only be
    /// right inside the rectangles `cores` (in pixels: where a drawing will
    /// be composited): there it equals the whole mask; elsewhere it may
    /// hold anything. `out` is made the frame's size if it is not. Maskers
    /// that cannot compute parts compute the whole mask.
    fn compute_step_in(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        cores: &[window::Rect],
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        let _ = cores;
        self.compute_step(frame, time, step, out)
    }

    /// Whether [`compute_step_in`](Self::compute_step_in) with these
    /// `cores`, on a `width`×`height` frame, masks the whole picture
    /// anyway (windows that far would cost more). Maskers without windows
    /// always do.
    fn masks_whole_for(&self, cores: &[window::Rect], width: usize, height: usize) -> bool {
        let _ = (cores, width, height);
        true
    }

    /// What makes the last mask this masker computed doubtful, when it can
    /// tell ([`MaskDoubt`]); `None` when nothing does, or it cannot tell.
    fn doubt(&self) -> Option<MaskDoubt> {
        None
    }

    /// Forgets state carried between frames (called after a seek).
    fn reset(&mut self) {}

    /// Checks, before the first frame, that this masker can serve a video
    /// of `width`×`height` pixels and `frame_count` frames (when known):
    /// a mask image or mask video of another size or length is an error
    /// here rather than at the first frame. Maskers that work on any video
    /// accept everything.
    fn check_video(&self, width: usize, height: usize, frame_count: Option<u64>) -> Result<(), MaskError> {
        let _ = (width, height, frame_count);
        Ok(())
    }
}

/// The size `(width, height)` of `frame`; an RGB picture must have three
/// channels.
pub(crate) fn picture_size(frame: &Picture<'_>, time: f64) -> Result<(usize, usize), MaskError> {
    if let Picture::Rgb(img) = frame {
        let channels = img.dim().2;
        if channels != 3 {
            return Err(MaskError::BadFrame { time, channels });
        }
    }
    Ok(frame.size())
}

/// Everything is floor.
#[derive(Debug, Default, Clone)]
pub struct NoMask;

impl Masker for NoMask {
    fn name(&self) -> &str {
        "none"
    }

    fn compute(&mut self, frame: &Picture<'_>, _time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        let (w, h) = frame.size();
        out.fill(w, h, true);
        Ok(())
    }
}

/// The masker of the `source` method: the masks come with the frames, so
/// a frame without one is an error.
#[derive(Debug, Default, Clone)]
pub struct SourceMasks;

impl Masker for SourceMasks {
    fn name(&self) -> &str {
        "source"
    }

    fn compute(&mut self, _frame: &Picture<'_>, time: f64, _out: &mut FloorMask) -> Result<(), MaskError> {
        Err(MaskError::NoSourceMask { time })
    }
}
