//! Frame and mask buffers shared by video, mask, draw, export and viewer,
//! plus reading and writing them as image files.
//!
//! Frames are RGB (not OpenCV's BGR) in an `ndarray` of shape
//! `(height, width, 3)`; masks are `(height, width)` with 255 where the
//! floor is visible (drawing allowed) and 0 where something stands in
//! front of it (keep the video pixel).

use std::path::Path;

use ndarray::{Array2, Array3};
use opencv::core::{Mat, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};

/// An RGB frame, shape `(height, width, 3)`, standard (row-major) layout.
pub type RgbImage = Array3<u8>;

/// A floor mask, shape `(height, width)`: 255 = floor, 0 = foreground.
pub type MaskImage = Array2<u8>;

/// Value of a floor pixel in a [`MaskImage`].
pub const FLOOR: u8 = 255;

/// Errors reading or writing image files.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{path}: cannot read as an image (missing, unreadable or not an image format OpenCV knows)")]
    Unreadable { path: String },
    #[error("{path}: {message}")]
    Write { path: String, message: String },
    #[error("{path}: {source}")]
    OpenCv {
        path: String,
        #[source]
        source: opencv::Error,
    },
}

/// Width and height of a frame.
pub fn size_of(img: &RgbImage) -> (usize, usize) {
    let (h, w, _) = img.dim();
    (w, h)
}

/// Reads any image OpenCV can decode (PNG, JPEG, …) as RGB.
pub fn load_rgb(path: &Path) -> Result<RgbImage, ImageError> {
    let p = path.to_string_lossy().into_owned();
    let cv = |source| ImageError::OpenCv {
        path: p.clone(),
        source,
    };
    let bgr = imgcodecs::imread(&p, imgcodecs::IMREAD_COLOR).map_err(cv)?;
    if bgr.empty() {
        return Err(ImageError::Unreadable { path: p });
    }
    let (w, h) = (bgr.cols() as usize, bgr.rows() as usize);
    let mut out = RgbImage::zeros((h, w, 3));
    {
        let slice = out
            .as_slice_mut()
            .ok_or_else(|| ImageError::Unreadable { path: p.clone() })?;
        // SAFETY-free view: wrap our buffer in a Mat header and convert into it.
        let mut dst = Mat::new_rows_cols_with_data_mut(h as i32, (w * 3) as i32, slice).map_err(cv)?;
        let mut dst = dst.reshape_mut(3, h as i32).map_err(cv)?;
        imgproc::cvt_color_def(&bgr, &mut dst, imgproc::COLOR_BGR2RGB).map_err(cv)?;
    }
    Ok(out)
}

/// Writes an RGB frame as PNG (or any format OpenCV picks from the extension).
pub fn save_rgb(path: &Path, img: &RgbImage) -> Result<(), ImageError> {
    let p = path.to_string_lossy().into_owned();
    let cv = |source| ImageError::OpenCv {
        path: p.clone(),
        source,
    };
    let (h, w, _) = img.dim();
    let std = img.as_standard_layout();
    let slice = std.as_slice().ok_or_else(|| ImageError::Write {
        path: p.clone(),
        message: "non-contiguous image".into(),
    })?;
    let src = Mat::new_rows_cols_with_data(h as i32, (w * 3) as i32, slice).map_err(cv)?;
    let src = src.reshape(3, h as i32).map_err(cv)?;
    let mut bgr = Mat::default();
    imgproc::cvt_color_def(&src, &mut bgr, imgproc::COLOR_RGB2BGR).map_err(cv)?;
    write_mat(&p, &bgr)
}

/// Reads a mask image (any non-zero pixel = floor).
pub fn load_mask(path: &Path) -> Result<MaskImage, ImageError> {
    let p = path.to_string_lossy().into_owned();
    let cv = |source| ImageError::OpenCv {
        path: p.clone(),
        source,
    };
    let gray = imgcodecs::imread(&p, imgcodecs::IMREAD_GRAYSCALE).map_err(cv)?;
    if gray.empty() {
        return Err(ImageError::Unreadable { path: p });
    }
    let (w, h) = (gray.cols() as usize, gray.rows() as usize);
    let bytes = gray.data_bytes().map_err(cv)?;
    let data = bytes.iter().map(|&v| if v > 127 { FLOOR } else { 0 }).collect();
    MaskImage::from_shape_vec((h, w), data).map_err(|e| ImageError::Write {
        path: p,
        message: e.to_string(),
    })
}

/// Writes a mask as an 8-bit grey PNG (white = floor).
pub fn save_mask(path: &Path, mask: &MaskImage) -> Result<(), ImageError> {
    let p = path.to_string_lossy().into_owned();
    let cv = |source| ImageError::OpenCv {
        path: p.clone(),
        source,
    };
    let (h, w) = mask.dim();
    let std = mask.as_standard_layout();
    let slice = std.as_slice().ok_or_else(|| ImageError::Write {
        path: p.clone(),
        message: "non-contiguous mask".into(),
    })?;
    let m = Mat::new_rows_cols_with_data(h as i32, w as i32, slice).map_err(cv)?;
    write_mat(&p, &m.try_clone().map_err(cv)?)
}

fn write_mat(p: &str, m: &Mat) -> Result<(), ImageError> {
    let ok = imgcodecs::imwrite(p, m, &Vector::new()).map_err(|source| ImageError::OpenCv {
        path: p.to_owned(),
        source,
    })?;
    if ok {
        Ok(())
    } else {
        Err(ImageError::Write {
            path: p.to_owned(),
            message: "OpenCV could not write this file (unknown extension or unwritable place)".into(),
        })
    }
}

#[cfg(test)]
mod tests {
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
        assert!(err.contains("nope.png"), "{err}");
    }
}
