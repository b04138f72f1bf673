//! Floor masks: which pixels of a frame show the floor (drawing allowed) and
//! which show something standing on it (robots, ball, people: keep video).
//!
//! Every masking method is a [`Masker`]; the pipeline asks it for one mask
//! per frame, in presentation order. [`MaskSettings`] (saved in session
//! files) chooses and configures one:
//!
//! * `auto` (the default): the frame source's own exact masks when it
//!   gives them (a rendered match), else `adaptive`;
//! * `source`: the frame source's own masks, an error for sources without;
//! * `none` ([`NoMask`]): everything is floor;
//! * `thesis` ([`ThesisMasker`]): thesis Algorithm 4 with its fixed thresholds;
//! * `adaptive` ([`AdaptiveMasker`]): thresholds estimated from each frame
//!   and smoothed over time;
//! * `image` ([`StaticMasker`]): one black/white image for every frame;
//! * `video` ([`VideoMasker`]): a precomputed black/white mask video, as
//!   the thesis reads one, so any external masker can plug in.
//!
//! The building blocks are public for benchmarks and other maskers:
//! [`hsv`] (exact OpenCV HSV), [`bits`] (bit-packed masks) and [`morph`]
//! (morphology with the 3×3 cross whose cost does not grow with the
//! number of iterations); [`seed`] picks the floor's hue from a patch of
//! pixels ("this is floor") for the adaptive mask's [`hue_window`].

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::image::{FLOOR, ImageError, MaskImage, RgbImage};

pub mod adaptive;
pub mod bits;
pub mod external;
pub mod field;
pub mod ground;
pub mod hsv;
pub mod hue_window;
pub mod morph;
pub mod regions;
pub mod seed;
#[cfg(any(test, feature = "test-util"))]
pub mod synth;
pub mod thesis;
pub mod window;

pub use adaptive::{AdaptiveMasker, AdaptiveSettings};
pub use external::{StaticMasker, VideoMasker};
pub use thesis::ThesisMasker;

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

/// How masks are made, as saved in a session file (`[mask]` table with a
/// `method` key and the method's parameters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaskSettings {
    /// The frame source's own masks when it gives them, else `adaptive`
    /// with default parameters (the default).
    #[default]
    Auto,
    /// The frame source's own masks ([`crate::video::SourceFrame::mask`]).
    Source,
    /// No mask: draw over everything.
    None,
    /// Thesis Algorithm 4 with its fixed thresholds.
    Thesis,
    /// Thresholds estimated from each frame.
    Adaptive(AdaptiveSettings),
    /// One mask image (white = floor) for every frame.
    Image {
        /// The image file; relative paths are relative to the session file.
        file: PathBuf,
    },
    /// A precomputed black/white mask video (white = floor), one frame per
    /// video frame, matched by time.
    Video {
        /// The mask video; relative paths are relative to the session file.
        file: PathBuf,
    },
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
    Adaptive(Option<adaptive::Thresholds>),
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

impl MaskSettings {
    /// Builds the masker these settings describe (loading files they name).
    /// For `auto` that is the adaptive masker (used on frames that come
    /// without a mask of their own); for `source` a masker that fails on
    /// every frame (the pipeline takes each frame's own mask instead).
    pub fn build(&self) -> Result<Box<dyn Masker>, MaskError> {
        match self {
            MaskSettings::Auto => Ok(Box::new(AdaptiveMasker::new(AdaptiveSettings::default())?)),
            MaskSettings::Source => Ok(Box::new(SourceMasks)),
            MaskSettings::None => Ok(Box::new(NoMask)),
            MaskSettings::Thesis => Ok(Box::new(ThesisMasker::new())),
            MaskSettings::Adaptive(s) => Ok(Box::new(AdaptiveMasker::new(s.clone())?)),
            MaskSettings::Image { file } => Ok(Box::new(StaticMasker::load(file)?)),
            MaskSettings::Video { file } => Ok(Box::new(VideoMasker::open(file)?)),
        }
    }

    /// The short name of the method ("none", "thesis", …).
    pub fn method_name(&self) -> &'static str {
        match self {
            MaskSettings::Auto => "auto",
            MaskSettings::Source => "source",
            MaskSettings::None => "none",
            MaskSettings::Thesis => "thesis",
            MaskSettings::Adaptive(_) => "adaptive",
            MaskSettings::Image { .. } => "image",
            MaskSettings::Video { .. } => "video",
        }
    }

    /// Whether a frame's own mask, when the source gives one, is used.
    pub fn takes_source_masks(&self) -> bool {
        matches!(self, MaskSettings::Auto | MaskSettings::Source)
    }

    /// Whether every frame must come with its own mask.
    pub fn needs_source_masks(&self) -> bool {
        matches!(self, MaskSettings::Source)
    }

    /// Resolves file paths in the settings against `base` (the session
    /// file's folder); absolute paths stay as they are.
    pub fn resolve_paths(&mut self, base: &Path) {
        if let MaskSettings::Image { file } | MaskSettings::Video { file } = self {
            *file = base.join(&*file);
        }
    }

    /// The file paths in the settings, mutable (for making them relative
    /// when a session is saved).
    pub fn paths_mut(&mut self) -> Vec<&mut PathBuf> {
        match self {
            MaskSettings::Image { file } | MaskSettings::Video { file } => vec![file],
            _ => Vec::new(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_through_toml_with_defaults() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Wrap {
            mask: MaskSettings,
        }
        for s in [
            MaskSettings::Auto,
            MaskSettings::Source,
            MaskSettings::None,
            MaskSettings::Thesis,
            MaskSettings::Adaptive(AdaptiveSettings::default()),
            MaskSettings::Image { file: "m.png".into() },
            MaskSettings::Video { file: "m.mkv".into() },
        ] {
            let text = toml::to_string(&Wrap { mask: s.clone() }).unwrap();
            let back: Wrap = toml::from_str(&text).unwrap();
            assert_eq!(back.mask, s, "{text}");
        }
        let w: Wrap = toml::from_str("[mask]\nmethod = \"adaptive\"\n").unwrap();
        assert_eq!(w.mask, MaskSettings::Adaptive(AdaptiveSettings::default()));
        let w: Wrap = toml::from_str("[mask]\nmethod = \"adaptive\"\nfill_radius = 9.0\n").unwrap();
        let MaskSettings::Adaptive(a) = w.mask else {
            panic!("not adaptive")
        };
        assert_eq!(a.fill_radius, 9.0);
        assert_eq!(a.open_radius, AdaptiveSettings::default().open_radius);
        let e = toml::from_str::<Wrap>("[mask]\nmethod = \"adaptive\"\nfil_radius = 9.0\n").unwrap_err();
        assert!(e.to_string().contains("fil_radius"), "{e}");
        let e = toml::from_str::<Wrap>("[mask]\nmethod = \"magic\"\n").unwrap_err();
        assert!(e.to_string().contains("magic"), "{e}");
    }

    #[test]
    fn every_method_builds_except_a_missing_image() {
        let adaptive = MaskSettings::Adaptive(AdaptiveSettings::default());
        for s in [MaskSettings::None, MaskSettings::Thesis, adaptive] {
            let mut m = s.build().unwrap();
            assert_eq!(m.name(), s.method_name());
            let mut out = MaskImage::zeros((0, 0));
            m.compute(&RgbImage::zeros((4, 6, 3)), 0.0, &mut out).unwrap();
            assert_eq!(out.dim(), (4, 6));
        }
        // Auto masks frames without masks of their own adaptively; source
        // refuses them.
        assert_eq!(MaskSettings::Auto.build().unwrap().name(), "adaptive");
        let mut out = MaskImage::zeros((0, 0));
        let e = MaskSettings::Source
            .build()
            .unwrap()
            .compute(&RgbImage::zeros((4, 6, 3)), 1.5, &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("1.500"), "{e}");
        let e = MaskSettings::Image {
            file: "/nonexistent/m.png".into(),
        }
        .build()
        .err()
        .unwrap();
        assert!(crate::error::chain(&e).contains("/nonexistent/m.png"), "{e}");
    }

    #[test]
    fn tiny_and_empty_frames_do_not_panic() {
        for (h, w) in [
            (0, 0),
            (0, 7),
            (7, 0),
            (1, 1),
            (1, 200),
            (200, 1),
            (3, 65),
            (65, 3),
        ] {
            let frame =
                RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| ((y * 31 + x * 17 + c * 50) % 256) as u8);
            for s in [MaskSettings::None, MaskSettings::Thesis, MaskSettings::default()] {
                let mut m = s.build().unwrap();
                let mut out = MaskImage::zeros((5, 5));
                m.compute(&frame, 0.0, &mut out).unwrap();
                assert_eq!(out.dim(), (h, w), "{} on {h}×{w}", m.name());
            }
        }
    }

    #[test]
    fn frames_with_wrong_channels_or_odd_layout() {
        let mut m = ThesisMasker::new();
        let mut out = MaskImage::zeros((0, 0));
        let e = m.compute(&RgbImage::zeros((4, 6, 4)), 0.0, &mut out).unwrap_err();
        assert!(e.to_string().contains("4 channels"), "{e}");
        // A transposed (non-standard layout) frame is copied, not rejected.
        let f = RgbImage::from_shape_fn((6, 4, 3), |(y, x, c)| (y * 40 + x * 3 + c) as u8);
        let mut t = f.clone();
        t.swap_axes(0, 1);
        let mut a = MaskImage::zeros((0, 0));
        m.compute(&t, 0.0, &mut a).unwrap();
        let mut b = MaskImage::zeros((0, 0));
        m.compute(&t.as_standard_layout().to_owned(), 0.0, &mut b)
            .unwrap();
        assert_eq!(a, b);
    }
}
