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
//! Maskers read a frame's YUV 4:2:0 planes (or an RGB picture as its
//! 4:2:0 conversion, [`crate::video::Picture`]) and write a [`FloorMask`]:
//! the colour methods (`thesis`, `adaptive`) classify the picture's 2×2
//! blocks — the resolution its colour comes in — from each block's mean
//! luma and its chroma ([`blocks`]), with no RGB picture made, and their
//! masks have one bit per block; masks made elsewhere have one value per
//! pixel.
//!
//! The building blocks are public for benchmarks and other maskers:
//! [`hsv`] (exact OpenCV HSV), [`crate::floor::bits`] (bit-packed masks) and [`morph`]
//! (morphology with the 3×3 cross whose cost does not grow with the
//! number of iterations); [`seed`] picks the floor's hue from a patch of
//! pixels ("this is floor") for the adaptive mask's [`hue_window`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod adaptive;
mod adaptive_params;
pub mod blocks;
mod doubt;
pub mod external;
pub mod field;
pub mod ground;
pub mod hsv;
pub mod hue_window;
mod masker;
pub mod morph;
pub mod regions;
pub mod seed;
#[cfg(any(test, feature = "test-util"))]
pub mod synth;
pub mod thesis;
pub mod window;

pub use crate::floor::FloorMask;
pub use adaptive::AdaptiveMasker;
pub use adaptive_params::{AdaptiveSettings, FloorModel, Thresholds};
pub use doubt::MaskDoubt;
pub use external::{StaticMasker, VideoMasker};
pub use masker::{MaskError, MaskStep, Masker, NoMask, SourceMasks};
pub use thesis::ThesisMasker;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::RgbImage;
    use crate::video::Picture;

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
            let mut out = FloorMask::new();
            m.compute(&Picture::Rgb(&RgbImage::zeros((4, 6, 3))), 0.0, &mut out)
                .unwrap();
            assert_eq!(out.dim(), (4, 6));
        }
        // Auto masks frames without masks of their own adaptively; source
        // refuses them.
        assert_eq!(MaskSettings::Auto.build().unwrap().name(), "adaptive");
        let mut out = FloorMask::new();
        let e = MaskSettings::Source
            .build()
            .unwrap()
            .compute(&Picture::Rgb(&RgbImage::zeros((4, 6, 3))), 1.5, &mut out)
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
                let mut out = FloorMask::new();
                m.compute(&Picture::Rgb(&frame), 0.0, &mut out).unwrap();
                assert_eq!(out.dim(), (h, w), "{} on {h}×{w}", m.name());
            }
        }
    }

    #[test]
    fn frames_with_wrong_channels_or_odd_layout() {
        let mut m = ThesisMasker::new();
        let mut out = FloorMask::new();
        let e = m
            .compute(&Picture::Rgb(&RgbImage::zeros((4, 6, 4))), 0.0, &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("4 channels"), "{e}");
        // A transposed (non-standard layout) frame is read, not rejected.
        let f = RgbImage::from_shape_fn((6, 4, 3), |(y, x, c)| (y * 40 + x * 3 + c) as u8);
        let mut t = f.clone();
        t.swap_axes(0, 1);
        let mut a = FloorMask::new();
        m.compute(&Picture::Rgb(&t), 0.0, &mut a).unwrap();
        let mut b = FloorMask::new();
        m.compute(&Picture::Rgb(&t.as_standard_layout().to_owned()), 0.0, &mut b)
            .unwrap();
        assert_eq!(a, b);
    }
}
