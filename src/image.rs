//! Frame and mask buffers shared by video, mask, draw, export and viewer
//! (reading and writing them as picture files is [`crate::video::still`]'s).
//!
//! Frames are RGB (not OpenCV's BGR) in an `ndarray` of shape
//! `(height, width, 3)`; masks are `(height, width)` with 255 where the
//! floor is visible (drawing allowed) and 0 where something stands in
//! front of it (keep the video pixel).

use ndarray::{Array2, Array3};

/// The one size limit for pictures everywhere (stills, video frames, masks,
/// encoded output, generated frames): at most this many pixels, 8192×8192,
/// twice 8K UHD. A file claiming more is refused rather than allocating
/// gigabytes per frame.
pub const MAX_PIXELS: u64 = 8192 * 8192;

/// The longest side a picture may have (within [`MAX_PIXELS`]).
pub const MAX_SIDE: u32 = 16384;

/// Refuses pictures that are empty or beyond [`MAX_PIXELS`] or
/// [`MAX_SIDE`], saying which.
pub fn check_picture_size(w: u32, h: u32) -> Result<(), String> {
    if w == 0 || h == 0 {
        return Err(format!("a picture of {w}×{h} pixels has nothing to show"));
    }
    if u64::from(w) * u64::from(h) > MAX_PIXELS || w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!(
            "pictures of {w}×{h} are too large (at most 8192×8192 pixels, and {MAX_SIDE} on a side)"
        ));
    }
    Ok(())
}

/// An RGB frame, shape `(height, width, 3)`, standard (row-major) layout.
pub type RgbImage = Array3<u8>;

/// A floor mask, shape `(height, width)`: 255 = floor, 0 = foreground.
pub type MaskImage = Array2<u8>;

/// Value of a floor pixel in a [`MaskImage`].
pub const FLOOR: u8 = 255;

/// Errors reading or writing image files.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{path}: cannot read as an image ({message})")]
    Unreadable { path: String, message: String },
    #[error("{path}: {message}")]
    Write { path: String, message: String },
}

/// Width and height of a frame.
pub fn size_of(img: &RgbImage) -> (usize, usize) {
    let (h, w, _) = img.dim();
    (w, h)
}

#[cfg(test)]
mod tests {

    /// Issue 15, finding 9: one picture size limit everywhere: the
    /// 16000×16000 picture `mask` accepted (and export and the viewer
    /// refused) is refused by stills, decoding and encoding alike.
    #[test]
    fn one_picture_size_limit_everywhere() {
        assert!(check_picture_size(8192, 4320).is_ok() && check_picture_size(16384, 100).is_ok());
        let e = check_picture_size(16000, 16000).unwrap_err();
        assert!(e.contains("16000×16000 are too large"), "{e}");
        assert!(check_picture_size(16385, 2).is_err() && check_picture_size(0, 5).is_err());
        let e = crate::video::Encoder::create(
            std::path::Path::new("/nonexistent/x.mkv"),
            16000,
            16000,
            &crate::video::EncoderSettings::default(),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(e.contains("too large"), "{e}");
    }
    use super::*;
}
