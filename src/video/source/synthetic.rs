//! Generated frames: a green floor with white lines and a dark disc moving
//! across it, so playback, seeking and masks have something to show
//! without a video (tests, benchmarks, trying the viewer).

use std::sync::Arc;

use super::{FrameSource, SourceError, SourceFrame, SourceInfo};
use crate::image::RgbImage;

/// Generated frames, a pure function of their index.
#[derive(Clone, Debug)]
pub struct SyntheticSource {
    info: SourceInfo,
    next: u64,
    /// The floor without the disc, rendered once.
    background: Arc<RgbImage>,
}

impl SyntheticSource {
    /// `frames` frames of `width`×`height` at `fps` frames per second.
    pub fn new(width: usize, height: usize, fps: f64, frames: u64) -> Result<Self, SourceError> {
        let side = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        if crate::image::check_picture_size(side(width), side(height)).is_err() {
            return Err(SourceError::BadSize { width, height });
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(SourceError::BadRate { fps });
        }
        let (w, h) = (width, height);
        let line = (w.min(h) / 200).max(1);
        let background = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
            let on_line = y % (h / 4).max(1) < line || x % (w / 6).max(1) < line;
            let rgb = if on_line {
                [235, 235, 235]
            } else {
                [40, 130 + ((x * 40 / w) as u8), 50]
            };
            rgb[c]
        });
        Ok(SyntheticSource {
            info: SourceInfo {
                frame_count: Some(frames),
                ..SourceInfo::new("synthetic", width, height, fps, frames as f64 / fps)
            },
            next: 0,
            background: Arc::new(background),
        })
    }

    fn frames(&self) -> u64 {
        self.info.frame_count.unwrap_or(0)
    }

    /// Renders frame `index` (pure function of the index).
    pub fn render(&self, index: u64) -> SourceFrame {
        let (w, h) = (self.info.width, self.info.height);
        let mut img = (*self.background).clone();
        let t = index as f64 / self.info.fps;
        // Disc moving left to right, once every 4 s.
        let phase = (t / 4.0).fract();
        let (cx, cy) = (phase * w as f64, h as f64 * 0.5);
        let r = (h.min(w) as f64 * 0.08).max(2.0);
        let y0 = (cy - r).floor().max(0.0) as usize;
        let y1 = ((cy + r).ceil() as usize).min(h - 1);
        let x0 = (cx - r).floor().max(0.0) as usize;
        let x1 = ((cx + r).ceil() as usize).min(w - 1);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                if dx * dx + dy * dy <= r * r {
                    img[[y, x, 0]] = 30;
                    img[[y, x, 1]] = 30;
                    img[[y, x, 2]] = 34;
                }
            }
        }
        SourceFrame::new(index, t, img)
    }
}

impl FrameSource for SyntheticSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        if self.next >= self.frames() {
            return Ok(None);
        }
        let f = self.render(self.next);
        self.next += 1;
        Ok(Some(f))
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        let n = self.frames();
        if n == 0 {
            return Ok(None);
        }
        let i = if t.is_nan() {
            0
        } else {
            // Small slack so a time computed as index/fps maps back to index.
            ((t * self.info.fps + 1e-6).floor().max(0.0) as u64).min(n - 1)
        };
        self.next = i;
        self.next_frame()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_frames_have_pts_and_seek() {
        let mut s = SyntheticSource::new(64, 36, 25.0, 50).unwrap();
        let f = s.frame_at(1.0).unwrap().unwrap();
        assert_eq!(f.index, 25);
        assert_eq!(f.image.dim(), (36, 64, 3));
        let g = s.next_frame().unwrap().unwrap();
        assert_eq!(g.index, 26);
        assert!((g.time - 26.0 / 25.0).abs() < 1e-12);
        assert_eq!(s.frame_at(-3.0).unwrap().unwrap().index, 0);
        assert_eq!(s.frame_at(99.0).unwrap().unwrap().index, 49);
        assert_eq!(s.frame_at(f64::NAN).unwrap().unwrap().index, 0);
        s.frame_at(99.0).unwrap();
        assert!(s.next_frame().unwrap().is_none());
    }

    #[test]
    fn synthetic_rejects_bad_parameters() {
        let e = SyntheticSource::new(0, 10, 30.0, 1).unwrap_err();
        assert!(matches!(e, SourceError::BadSize { width: 0, height: 10 }), "{e}");
        assert!(SyntheticSource::new(10, 10, f64::NAN, 1).is_err());
        assert!(
            SyntheticSource::new(10, 10, -1.0, 1)
                .unwrap_err()
                .to_string()
                .contains("-1")
        );
    }

    #[test]
    fn frames_differ_over_time() {
        let s = SyntheticSource::new(80, 40, 30.0, 100).unwrap();
        assert_ne!(s.render(0).image, s.render(30).image);
        assert_eq!(s.render(7), s.render(7));
    }
}
