//! What every masking method is: the [`Masker`] trait (with the state one
//! frame hands the next, [`MaskStep`]), the errors of masking, the two
//! methods that compute nothing ([`NoMask`], [`SourceMasks`]) and a frame's
//! rows as the methods read them ([`RgbRows`]).

use std::borrow::Cow;

use super::adaptive_params::Thresholds;
use super::window;
use crate::image::{FLOOR, ImageError, MaskImage, RgbImage};

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

/// Which rows of a picture a step reads ([`Masker::rows_advanced`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowsRead {
    /// None.
    None,
    /// Every row.
    All,
    /// Rows `first`, `first + step`, `first + 2·step`, ….
    Every { first: usize, step: usize },
}

impl RowsRead {
    /// The rows read of a picture `height` rows high.
    pub fn rows(self, height: usize) -> impl Iterator<Item = usize> {
        let (first, step, end) = match self {
            RowsRead::None => (0, 1, 0),
            RowsRead::All => (0, 1, height),
            RowsRead::Every { first, step } => (first, step.max(1), height),
        };
        (first.min(end)..end).step_by(step)
    }
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
    /// seconds) into `out`, resizing it when needed.
    fn compute(&mut self, frame: &RgbImage, time: f64, out: &mut MaskImage) -> Result<(), MaskError>;

    /// Takes `frame` into the state carried between frames and returns
    /// what [`compute_step`](Self::compute_step) needs for it.
    fn advance(&mut self, frame: &RgbImage, time: f64) -> Result<MaskStep, MaskError> {
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

    /// The rows of a `width`×`height` picture that [`advance`](Self::advance)
    /// reads, so that a frame whose picture is converted later (export's
    /// workers convert it) has only those converted in frame order. The
    /// default goes with the default `advance`, which reads nothing; a
    /// masker that overrides `advance` overrides this too.
    fn rows_advanced(&self, width: usize, height: usize) -> RowsRead {
        let _ = (width, height);
        RowsRead::None
    }

    /// Writes the floor mask of `frame` given its `step` (from
    /// [`advance`](Self::advance), of this masker or another with the same
    /// settings).
    fn compute_step(
        &mut self,
        frame: &RgbImage,
        time: f64,
        step: &MaskStep,
        out: &mut MaskImage,
    ) -> Result<(), MaskError> {
        let _ = step;
        self.compute(frame, time, out)
    }

    /// How far around a pixel this masker must look to decide it, for
    /// planning the windows of [`compute_step_in`](Self::compute_step_in)
    /// on a frame `height` pixels high; `None` when it computes whole
    /// masks only.
    fn window_margin(&self, height: usize) -> Option<usize> {
        let _ = height;
        None
    }

    /// Like [`compute_step`](Self::compute_step), but `out` need only be
    /// right inside the rectangles `cores` (where a drawing will be
    /// composited): there it equals the whole mask; elsewhere it may hold
    /// anything. `out` is made the frame's size if it is not. Maskers that
    /// cannot compute parts compute the whole mask.
    fn compute_step_in(
        &mut self,
        frame: &RgbImage,
        time: f64,
        step: &MaskStep,
        cores: &[window::Rect],
        out: &mut MaskImage,
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

/// Everything is floor.
#[derive(Debug, Default, Clone)]
pub struct NoMask;

impl Masker for NoMask {
    fn name(&self) -> &str {
        "none"
    }

    fn compute(&mut self, frame: &RgbImage, _time: f64, out: &mut MaskImage) -> Result<(), MaskError> {
        let (h, w, _) = frame.dim();
        if out.dim() != (h, w) {
            *out = MaskImage::from_elem((h, w), FLOOR);
        } else {
            out.fill(FLOOR);
        }
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

    fn compute(&mut self, _frame: &RgbImage, time: f64, _out: &mut MaskImage) -> Result<(), MaskError> {
        Err(MaskError::NoSourceMask { time })
    }
}

/// Rows of an RGB frame as byte slices (copying only when the array is not
/// in standard layout).
pub(crate) struct RgbRows<'a> {
    data: Cow<'a, [u8]>,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
}

impl<'a> RgbRows<'a> {
    /// Views `frame`; fails unless it has 3 channels.
    pub fn new(frame: &'a RgbImage, time: f64) -> Result<Self, MaskError> {
        let (height, width, channels) = frame.dim();
        if channels != 3 {
            return Err(MaskError::BadFrame { time, channels });
        }
        let data = match frame.as_slice() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(frame.iter().copied().collect()),
        };
        Ok(RgbRows { data, width, height })
    }

    /// The `3·width` bytes of row `y`.
    #[inline]
    pub fn row(&self, y: usize) -> &[u8] {
        &self.data[3 * self.width * y..3 * self.width * (y + 1)]
    }
}
