//! Masks made elsewhere: a static mask image used for every frame (for a
//! fixed camera whose floor never changes, or a hand-painted mask), or a
//! mask video with one mask per frame (thesis section 3.3.3: any
//! video-to-mask program can plug in).
//!
//! Files are black/white with white = floor (what `underlay mask`
//! writes); any grey above 127 counts as white.

use std::path::{Path, PathBuf};

use super::{FloorMask, MaskError, Masker};
use crate::image::{FLOOR, MaskImage};
use crate::video::Picture;
use crate::video::still::load_mask;
use crate::video::{Decoder, VideoError};

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

    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        let (w, h) = frame.size();
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
        out.set_pixels(&self.mask);
        Ok(())
    }
}

/// Frame times closer than this fraction of a frame are the same frame.
const SAME_FRAME: f64 = 0.25;

/// A precomputed black/white mask video (white = floor), read alongside
/// the video it was made for (thesis section 3.3.3: any external masker
/// can plug in). Frames are matched by time; any codec FFmpeg reads works.
pub struct VideoMasker {
    path: PathBuf,
    decoder: Decoder,
    frame_count: Option<u64>,
    frame_duration: f64,
    /// The mask frame shown now: time and image (0/255).
    current: Option<f64>,
    current_mask: MaskImage,
    /// The frame after it, read ahead (`None` at the end of the file).
    next: Option<f64>,
    next_mask: MaskImage,
    /// `next` has been read (or the end found) for the current position.
    looked_ahead: bool,
}

impl std::fmt::Debug for VideoMasker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoMasker")
            .field("path", &self.path)
            .field("current", &self.current)
            .finish()
    }
}

impl VideoMasker {
    /// Opens the mask video at `path`.
    pub fn open(path: &Path) -> Result<Self, MaskError> {
        let decoder = Decoder::open(path).map_err(|e| MaskError::Video(Box::new(e)))?;
        let info = decoder.info();
        let frame_duration = if info.avg_fps > 0.0 {
            1.0 / info.avg_fps
        } else {
            1.0 / 30.0
        };
        Ok(VideoMasker {
            path: path.to_owned(),
            frame_count: info.frame_count,
            frame_duration,
            decoder,
            current: None,
            current_mask: MaskImage::zeros((0, 0)),
            next: None,
            next_mask: MaskImage::zeros((0, 0)),
            looked_ahead: false,
        })
    }

    fn video_err(&self, e: VideoError) -> MaskError {
        MaskError::Video(Box::new(e))
    }

    /// Reads the next mask frame into `next`.
    fn read_next(&mut self) -> Result<(), MaskError> {
        let got = self
            .decoder
            .read_gray_into(&mut self.next_mask)
            .map_err(|e| self.video_err(e))?;
        self.next = got.map(|(t, _)| t);
        self.looked_ahead = true;
        Ok(())
    }

    /// Makes `current` the mask frame shown at `time`.
    fn position(&mut self, time: f64) -> Result<(), MaskError> {
        let tol = SAME_FRAME * self.frame_duration;
        let behind = self.current.is_some_and(|c| time < c - tol);
        if self.current.is_none() || behind {
            self.decoder.seek(time.max(0.0)).map_err(|e| self.video_err(e))?;
            self.looked_ahead = false;
            self.read_next()?;
            let Some(t) = self.next else {
                return Err(self.ended(time));
            };
            std::mem::swap(&mut self.current_mask, &mut self.next_mask);
            self.current = Some(t);
            self.looked_ahead = false;
        }
        loop {
            if !self.looked_ahead {
                self.read_next()?;
            }
            match self.next {
                Some(t) if t <= time + tol => {
                    std::mem::swap(&mut self.current_mask, &mut self.next_mask);
                    self.current = Some(t);
                    self.looked_ahead = false;
                }
                _ => break,
            }
        }
        let Some(c) = self.current else {
            return Err(self.ended(time));
        };
        if self.next.is_none() && time > c + self.frame_duration * (1.0 + SAME_FRAME) {
            return Err(self.ended(time));
        }
        Ok(())
    }

    fn ended(&self, time: f64) -> MaskError {
        let last = self.current.map_or("no frames".to_string(), |c| {
            format!("its last frame is at {c:.3} s")
        });
        MaskError::Source {
            source_name: self.path.display().to_string(),
            message: format!(
                "the mask video is shorter than the video: no mask for the frame at {time:.3} s ({last}{})",
                self.frame_count
                    .map_or(String::new(), |n| format!(", {n} frames"))
            ),
        }
    }
}

impl Masker for VideoMasker {
    fn name(&self) -> &str {
        "video"
    }

    fn check_video(&self, width: usize, height: usize, frame_count: Option<u64>) -> Result<(), MaskError> {
        let info = self.decoder.info();
        let (mw, mh) = (info.width as usize, info.height as usize);
        let mismatch = |message: String| MaskError::Source {
            source_name: self.path.display().to_string(),
            message,
        };
        if (mw, mh) != (width, height) {
            return Err(mismatch(format!(
                "the mask video is {mw}×{mh} but the video is {width}×{height}"
            )));
        }
        // Containers such as Matroska do not store a frame count: estimate
        // it from the duration and rate, allowing one frame of rounding.
        let (mask_frames, exact) = match self.frame_count {
            Some(n) => (Some(n), true),
            None if info.duration > 0.0 && info.avg_fps > 0.0 => {
                (Some((info.duration * info.avg_fps).round() as u64), false)
            }
            None => (None, false),
        };
        if let (Some(m), Some(v)) = (mask_frames, frame_count)
            && ((exact && m != v) || m.abs_diff(v) > 1)
        {
            let about = if exact { "" } else { "about " };
            return Err(mismatch(format!(
                "the mask video has {about}{m} frames ({:.3} s) but the video has {v}",
                info.duration
            )));
        }
        Ok(())
    }

    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        self.position(time)?;
        let (w, h) = frame.size();
        let (mh, mw) = self.current_mask.dim();
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
        out.pixels_mut(w, h)
            .zip_mut_with(&self.current_mask, |o, &m| *o = if m > 127 { FLOOR } else { 0 });
        Ok(())
    }

    fn reset(&mut self) {
        self.current = None;
        self.looked_ahead = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::RgbImage;
    use crate::video::still::save_mask;

    #[test]
    fn static_mask_is_returned_and_size_mismatch_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("floor.png");
        let m = MaskImage::from_shape_fn((4, 5), |(y, x)| if x > y { 255 } else { 0 });
        save_mask(&p, &m).unwrap();
        let mut s = StaticMasker::load(&p).unwrap();
        let mut out = FloorMask::new();
        s.compute(&(&RgbImage::zeros((4, 5, 3))).into(), 0.0, &mut out)
            .unwrap();
        assert_eq!(out.to_image(), m);
        let e = s
            .compute(&(&RgbImage::zeros((5, 4, 3))).into(), 2.5, &mut out)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("floor.png") && e.contains("5×4") && e.contains("4×5") && e.contains("2.500"),
            "{e}"
        );
    }
}
