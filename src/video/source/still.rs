//! A still image (PNG, JPEG, BMP, TIFF, WebP, PNM) as a source of one
//! frame at time 0 lasting one second: `underlay view IMAGE`, `mask` and
//! export treat a picture like a one-frame video.

use std::path::Path;

use super::{FrameSource, OpenOptions, SourceError, SourceFrame, SourceInfo};
use crate::image::RgbImage;

/// Whether a file's first bytes `h` start a picture file (by magic
/// number; a gzip'ed file is none).
pub fn is_still(h: &[u8]) -> bool {
    let bmp = h.len() >= 18
        && h.starts_with(b"BM")
        && matches!(
            u32::from_le_bytes([h[14], h[15], h[16], h[17]]),
            12 | 40 | 52 | 56 | 108 | 124
        );
    let pnm = h.len() >= 3 && h[0] == b'P' && (b'1'..=b'6').contains(&h[1]) && h[2].is_ascii_whitespace();
    h.starts_with(b"\x89PNG\r\n\x1a\n")
        || h.starts_with(&[0xff, 0xd8, 0xff])
        || h.starts_with(b"II*\0")
        || h.starts_with(b"MM\0*")
        || (h.len() >= 12 && h.starts_with(b"RIFF") && &h[8..12] == b"WEBP")
        || bmp
        || pnm
}

/// One picture, shown from time 0 for one second.
#[derive(Clone, Debug)]
pub struct StillSource {
    info: SourceInfo,
    image: RgbImage,
    /// The frame has been handed out since the last seek.
    done: bool,
}

impl StillSource {
    /// Reads the picture at `path` (upright, EXIF orientation applied).
    pub fn open(path: &Path, _options: &OpenOptions) -> Result<Self, SourceError> {
        let image = crate::video::still::load_rgb(path)?;
        Ok(Self::from_image(path.display().to_string(), image))
    }

    /// `image` as a source named `name`.
    pub fn from_image(name: impl Into<String>, image: RgbImage) -> Self {
        let (h, w, _) = image.dim();
        let info = SourceInfo {
            frame_count: Some(1),
            ..SourceInfo::new(name, w, h, 1.0, 1.0)
        };
        StillSource {
            info,
            image,
            done: false,
        }
    }
}

impl FrameSource for StillSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        Ok(Some(SourceFrame::new(0, 0.0, self.image.clone())))
    }

    fn frame_at(&mut self, _t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.done = false;
        self.next_frame()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_frame_then_the_end_and_seeks_repeat_it() {
        let img = RgbImage::from_shape_fn((4, 6, 3), |(y, x, c)| (y * 10 + x + c) as u8);
        let mut s = StillSource::from_image("p", img.clone());
        assert_eq!(s.info().end(), 0.0);
        assert_eq!(s.next_frame().unwrap().unwrap().image, img);
        assert!(s.next_frame().unwrap().is_none());
        let f = s.frame_at(5.0).unwrap().unwrap();
        assert_eq!((f.index, f.time), (0, 0.0));
        assert!(s.next_frame().unwrap().is_none());
    }

    #[test]
    fn pictures_are_recognised_by_their_first_bytes() {
        let yes = is_still;
        assert!(yes(b"\x89PNG\r\n\x1a\n...."));
        assert!(yes(&[0xff, 0xd8, 0xff, 0xe0]));
        assert!(yes(b"P6\n640 480\n255\n"));
        assert!(yes(b"RIFF\0\0\0\0WEBPVP8 "));
        let mut bmp = b"BM".to_vec();
        bmp.extend([0u8; 12]);
        bmp.extend(40u32.to_le_bytes());
        assert!(yes(&bmp));
        assert!(!yes(b"BMx is not a bitmap header"));
        assert!(!yes(b"P7 not a pnm"));
        assert!(!yes(b"\0\0\0 ftypisom"));
        assert!(!yes(b""));
    }
}
