//! Frame and mask buffers shared by video, mask, draw, export and viewer,
//! plus reading and writing them as image files.
//!
//! Frames are RGB (not OpenCV's BGR) in an `ndarray` of shape
//! `(height, width, 3)`; masks are `(height, width)` with 255 where the
//! floor is visible (drawing allowed) and 0 where something stands in
//! front of it (keep the video pixel).

use std::path::Path;

use ndarray::{Array2, Array3};

use crate::video::still::{StillFormat, read_still, write_still};

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

/// Reads any picture FFmpeg can decode (PNG, JPEG, BMP, TIFF, WebP, …) as
/// RGB.
pub fn load_rgb(path: &Path) -> Result<RgbImage, ImageError> {
    let (w, h, data) = read(path, StillFormat::Rgb)?;
    RgbImage::from_shape_vec((h, w, 3), data).map_err(|e| unreadable(path, e.to_string().into()))
}

/// Writes an RGB frame as PNG (or JPEG, BMP, TIFF, picked by the extension).
pub fn save_rgb(path: &Path, img: &RgbImage) -> Result<(), ImageError> {
    let (h, w, _) = img.dim();
    let std = img.as_standard_layout();
    let data = std
        .as_slice()
        .ok_or_else(|| write_error(path, "non-contiguous image".into()))?;
    write_still(path, w, h, StillFormat::Rgb, data).map_err(|m| write_error(path, m))
}

/// Reads a mask picture (any pixel lighter than mid-grey = floor).
pub fn load_mask(path: &Path) -> Result<MaskImage, ImageError> {
    let (w, h, data) = read(path, StillFormat::Gray)?;
    let data = data
        .into_iter()
        .map(|v| if v > 127 { FLOOR } else { 0 })
        .collect();
    MaskImage::from_shape_vec((h, w), data).map_err(|e| unreadable(path, e.to_string().into()))
}

/// Writes a mask as an 8-bit grey PNG (white = floor).
pub fn save_mask(path: &Path, mask: &MaskImage) -> Result<(), ImageError> {
    let (h, w) = mask.dim();
    let std = mask.as_standard_layout();
    let data = std
        .as_slice()
        .ok_or_else(|| write_error(path, "non-contiguous mask".into()))?;
    write_still(path, w, h, StillFormat::Gray, data).map_err(|m| write_error(path, m))
}

fn read(path: &Path, format: StillFormat) -> Result<(usize, usize, Vec<u8>), ImageError> {
    if !path.is_file() {
        let why = if path.exists() {
            "not a file"
        } else {
            "no such file"
        };
        return Err(unreadable(path, why.into()));
    }
    read_still(path, format).map_err(|m| unreadable(path, m))
}

fn unreadable(path: &Path, e: crate::video::StepError) -> ImageError {
    ImageError::Unreadable {
        path: path.display().to_string(),
        message: crate::error::chain(&e),
    }
}

fn write_error(path: &Path, e: crate::video::StepError) -> ImageError {
    ImageError::Write {
        path: path.display().to_string(),
        message: crate::error::chain(&e),
    }
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

    #[test]
    fn png_round_trip_keeps_rgb_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut img = RgbImage::zeros((4, 5, 3));
        img[[1, 2, 0]] = 200; // red channel
        img[[3, 4, 2]] = 90; // blue channel
        let p = dir.path().join("x.png");
        save_rgb(&p, &img).unwrap();
        assert_eq!(load_rgb(&p).unwrap(), img);
    }

    #[test]
    fn mask_round_trip_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = MaskImage::zeros((3, 7));
        m[[2, 6]] = FLOOR;
        let p = dir.path().join("m.png");
        save_mask(&p, &m).unwrap();
        assert_eq!(load_mask(&p).unwrap(), m);
        let err = load_rgb(&dir.path().join("nope.png")).unwrap_err().to_string();
        assert!(err.contains("nope.png") && err.contains("no such file"), "{err}");
    }

    /// A picture with smooth colour ramps (JPEG keeps those close).
    fn ramps(w: usize, h: usize) -> RgbImage {
        RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| match c {
            0 => (x * 255 / w) as u8,
            1 => (y * 255 / h) as u8,
            _ => 128,
        })
    }

    #[test]
    fn other_formats_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let img = ramps(40, 30);
        for (ext, tolerance) in [("bmp", 0), ("tiff", 0), ("jpg", 6)] {
            let p = dir.path().join(format!("x.{ext}"));
            save_rgb(&p, &img).unwrap();
            let back = load_rgb(&p).unwrap();
            assert_eq!(back.dim(), img.dim(), "{ext}");
            let worst = back.iter().zip(&img).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
            assert!(worst <= tolerance, "{ext}: off by {worst}");
        }
    }

    #[test]
    fn colour_pictures_read_as_masks_and_masks_as_colour() {
        let dir = tempfile::tempdir().unwrap();
        // Light left half, dark right half.
        let img = RgbImage::from_shape_fn((6, 8, 3), |(_, x, _)| if x < 4 { 230 } else { 20 });
        let p = dir.path().join("c.png");
        save_rgb(&p, &img).unwrap();
        let m = load_mask(&p).unwrap();
        assert!(
            m.indexed_iter()
                .all(|((_, x), &v)| v == if x < 4 { FLOOR } else { 0 })
        );
        // A grey mask reads as full-range grey RGB (no level squeezing).
        let q = dir.path().join("m.png");
        save_mask(&q, &m).unwrap();
        let rgb = load_rgb(&q).unwrap();
        assert_eq!(rgb[[0, 0, 0]], 255);
        assert_eq!(rgb[[0, 7, 1]], 0);
    }

    /// A JPEG's bytes with an EXIF segment (APP1) holding only an
    /// orientation tag, as phones write them.
    fn with_exif_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
        let mut tiff = b"MM\0\x2a\0\0\0\x08\0\x01".to_vec();
        // Tag 0x0112 (orientation), type SHORT, count 1, value; no next IFD.
        tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1]);
        tiff.extend_from_slice(&orientation.to_be_bytes());
        tiff.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        let mut app1 = b"Exif\0\0".to_vec();
        app1.extend_from_slice(&tiff);
        let mut out = jpeg[..2].to_vec();
        out.extend_from_slice(&[0xff, 0xe1]);
        out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
        out.extend_from_slice(&app1);
        out.extend_from_slice(&jpeg[2..]);
        out
    }

    #[test]
    fn exif_orientation_is_applied() {
        // A 48×32 picture with a red top-left quadrant, green top-right,
        // blue bottom-left and white bottom-right.
        let (w, h) = (48, 32);
        let img = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
            let colour: [u8; 3] = match (x < w / 2, y < h / 2) {
                (true, true) => [255, 0, 0],
                (false, true) => [0, 255, 0],
                (true, false) => [0, 0, 255],
                (false, false) => [255, 255, 255],
            };
            colour[c]
        });
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.jpg");
        save_rgb(&plain, &img).unwrap();
        let jpeg = std::fs::read(&plain).unwrap();
        let (r, g, b, white) = ([255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]);
        // Quadrants (top-left, top-right, bottom-left, bottom-right) shown
        // for each orientation.
        let cases = [
            (1, [r, g, b, white]),
            (2, [g, r, white, b]),
            (3, [white, b, g, r]),
            (4, [b, white, r, g]),
            (5, [r, b, g, white]),
            (6, [b, r, white, g]),
            (7, [white, g, b, r]),
            (8, [g, white, r, b]),
        ];
        for (o, want) in cases {
            let p = dir.path().join(format!("o{o}.jpg"));
            std::fs::write(&p, with_exif_orientation(&jpeg, o)).unwrap();
            let got = load_rgb(&p).unwrap();
            let (gh, gw, _) = got.dim();
            assert_eq!((gw, gh), if o >= 5 { (h, w) } else { (w, h) }, "orientation {o}");
            let centres = [
                (gw / 4, gh / 4),
                (3 * gw / 4, gh / 4),
                (gw / 4, 3 * gh / 4),
                (3 * gw / 4, 3 * gh / 4),
            ];
            for ((x, y), want) in centres.into_iter().zip(want) {
                let px = [got[[y, x, 0]], got[[y, x, 1]], got[[y, x, 2]]];
                let near = px.iter().zip(want).all(|(&a, b)| a.abs_diff(b) < 40);
                assert!(near, "orientation {o}: pixel ({x}, {y}) is {px:?}, want {want:?}");
            }
        }
    }

    #[test]
    fn bad_files_and_names_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.png");
        std::fs::write(&junk, b"this is not a picture").unwrap();
        let err = load_rgb(&junk).unwrap_err().to_string();
        assert!(err.contains("junk.png") && err.contains("cannot read"), "{err}");
        // With FFmpeg's explanation, instead of FFmpeg printing it apart.
        assert!(err.contains("PNG signature"), "{err}");
        let truncated = dir.path().join("cut.png");
        save_rgb(&truncated, &ramps(64, 64)).unwrap();
        let bytes = std::fs::read(&truncated).unwrap();
        std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
        // A cut PNG is refused or decodes to a picture of its size: never a panic.
        if let Ok(img) = load_rgb(&truncated) {
            assert_eq!(img.dim(), (64, 64, 3));
        }
        let err = load_rgb(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a file"), "{err}");
        let err = save_rgb(&dir.path().join("x.xyz"), &ramps(4, 4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.xyz") && err.contains(".png"), "{err}");
        let err = save_rgb(&dir.path().join("missing/x.png"), &ramps(4, 4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing"), "{err}");
        assert!(save_rgb(&dir.path().join("e.png"), &RgbImage::zeros((0, 0, 3))).is_err());
    }
}
