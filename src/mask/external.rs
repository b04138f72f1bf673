//! Masks made elsewhere: a static mask image used for every frame (for a
//! fixed camera whose floor never changes, or a hand-painted mask).
//!
//! The file is black/white with white = floor (what `underlay mask`
//! writes); any grey above 127 counts as white.

use std::path::{Path, PathBuf};

use super::{MaskError, Masker};
use crate::image::{MaskImage, RgbImage, load_mask};

/// One mask image for every frame.
#[derive(Debug, Clone)]
pub struct StaticMasker {
    path: PathBuf,
    mask: MaskImage,
}

impl StaticMasker {
    /// Reads the mask image at `path`.
    pub fn load(path: &Path) -> Result<Self, MaskError> {
        Ok(StaticMasker {
            path: path.to_owned(),
            mask: load_mask(path)?,
        })
    }

    /// Uses `mask` (255 = floor) for every frame; `name` appears in errors.
    pub fn from_mask(name: impl Into<PathBuf>, mask: MaskImage) -> Self {
        StaticMasker {
            path: name.into(),
            mask,
        }
    }
}

impl Masker for StaticMasker {
    fn name(&self) -> &str {
        "image"
    }

    fn check_video(&self, width: usize, height: usize, _frame_count: Option<u64>) -> Result<(), MaskError> {
        let (mh, mw) = self.mask.dim();
        if (mw, mh) != (width, height) {
            return Err(MaskError::Source {
                source_name: self.path.display().to_string(),
                message: format!("the mask is {mw}×{mh} but the video is {width}×{height}"),
            });
        }
        Ok(())
    }

    fn compute(&mut self, frame: &RgbImage, time: f64, out: &mut MaskImage) -> Result<(), MaskError> {
        let (h, w, _) = frame.dim();
        let (mh, mw) = self.mask.dim();
        if (h, w) != (mh, mw) {
            return Err(MaskError::SizeMismatch {
                source_name: self.path.display().to_string(),
                time,
                mask_w: mw,
                mask_h: mh,
                frame_w: w,
                frame_h: h,
            });
        }
        if out.dim() == (h, w) {
            out.assign(&self.mask);
        } else {
            *out = self.mask.clone();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::save_mask;

    #[test]
    fn static_mask_is_returned_and_size_mismatch_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("floor.png");
        let m = MaskImage::from_shape_fn((4, 5), |(y, x)| if x > y { 255 } else { 0 });
        save_mask(&p, &m).unwrap();
        let mut s = StaticMasker::load(&p).unwrap();
        let mut out = MaskImage::zeros((1, 1));
        s.compute(&RgbImage::zeros((4, 5, 3)), 0.0, &mut out).unwrap();
        assert_eq!(out, m);
        let e = s
            .compute(&RgbImage::zeros((5, 4, 3)), 2.5, &mut out)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("floor.png") && e.contains("5×4") && e.contains("4×5") && e.contains("2.500"),
            "{e}"
        );
    }
}
