//! The video's motion: for each frame, how much each small cell of the
//! picture changed since the frame before (the mean absolute difference
//! of luma), kept as a summed-area table so that the mean change over any
//! box (fractional edges included) costs four lookups.
//!
//! Cells are about a 160th of the picture's width; frames are decoded as
//! luma only. When a long video's tables would not fit
//! [`MAX_BYTES`], only every k-th frame's change is kept (each still
//! against the frame just before it).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::image::MaskImage;
use crate::video::{Decoder, VideoError};

/// Cells across the picture (about).
const CELLS_ACROSS: usize = 160;
/// The most memory the tables of a video may take.
pub const MAX_BYTES: usize = 384 << 20;
/// Cell values are mean absolute differences × this (fixed point).
const SCALE: f64 = 8.0;

/// Errors reading a video's motion.
#[derive(Debug, thiserror::Error)]
pub enum MotionError {
    #[error(transparent)]
    Video(#[from] VideoError),
    #[error("{path}: fewer than two frames between {from:.3} s and {to:.3} s, so no motion to compare")]
    TooShort {
        path: std::path::PathBuf,
        from: f64,
        to: f64,
    },
    /// Pictures from a frame source (a live camera's buffer) could not
    /// be read.
    #[error(transparent)]
    Source(#[from] crate::video::source::SourceError),
    #[error("stopped")]
    Cancelled,
}

/// One kept frame: its time, the time of the frame before it, and its
/// summed-area table.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionFrame {
    /// Presentation time of the frame before (seconds from the video's start).
    pub before: f64,
    /// Presentation time of this frame.
    pub time: f64,
    /// Mean change over the whole picture (luma levels).
    pub mean: f64,
    /// `(grid_w + 1) × (grid_h + 1)` sums, row by row.
    table: Vec<u32>,
}

/// The motion of a part of a video (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    /// The picture's size in pixels.
    pub width: usize,
    pub height: usize,
    /// Cell size in pixels.
    pub cell: usize,
    grid_w: usize,
    grid_h: usize,
    pub frames: Vec<MotionFrame>,
    /// Frames per second of the video (its average).
    pub fps: f64,
}

impl Motion {
    /// Reads the motion of `path` between video times `from` and `to`
    /// (seconds; the whole video when `None`), calling `progress` with the
    /// fraction done and stopping when `cancel` is set.
    pub fn read(
        path: &Path,
        from: Option<f64>,
        to: Option<f64>,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(f64),
    ) -> Result<Motion, MotionError> {
        let mut dec = Decoder::open(path)?;
        let info = dec.info().clone();
        let (w, h) = (info.width as usize, info.height as usize);
        let cell = (w.max(h) / CELLS_ACROSS).max(1);
        let (grid_w, grid_h) = (w.div_ceil(cell), h.div_ceil(cell));
        let from = from.unwrap_or(0.0).max(0.0);
        let end = to.unwrap_or(f64::INFINITY);
        let fps = if info.avg_fps > 0.0 { info.avg_fps } else { 30.0 };
        let span = (end.min(info.duration.max(from)) - from).max(0.0);
        let expected = (span * fps).ceil().max(1.0);
        let per_frame = (grid_w + 1) * (grid_h + 1) * 4;
        let stride = ((expected * per_frame as f64 / MAX_BYTES as f64).ceil() as usize).max(1);
        if from > 0.0 {
            dec.seek(from)?;
        }
        let mut motion = Motion {
            width: w,
            height: h,
            cell,
            grid_w,
            grid_h,
            frames: Vec::new(),
            fps,
        };
        let (mut prev, mut cur) = (MaskImage::zeros((0, 0)), MaskImage::zeros((0, 0)));
        let mut prev_time: Option<f64> = None;
        let mut n = 0usize;
        let mut sums = vec![0u32; grid_w * grid_h];
        while let Some((time, _)) = dec.read_gray_into(&mut cur)? {
            if cancel.load(Ordering::Relaxed) {
                return Err(MotionError::Cancelled);
            }
            if time > end {
                break;
            }
            if let Some(before) = prev_time
                && n.is_multiple_of(stride)
                && cur.dim() == prev.dim()
            {
                motion
                    .frames
                    .push(motion.frame(&prev, &cur, before, time, &mut sums));
            }
            n += 1;
            progress((n as f64 / expected).min(1.0));
            std::mem::swap(&mut prev, &mut cur);
            prev_time = Some(time);
        }
        if motion.frames.is_empty() {
            return Err(MotionError::TooShort {
                path: path.to_owned(),
                from,
                to: end.min(info.duration),
            });
        }
        Ok(motion)
    }

    /// The motion of `pictures` (luma, in order, with their times) of a
    /// video of `width × height` at `fps` (pictures of another size are
    /// skipped); `None` with fewer than two.
    pub fn from_pictures(
        width: usize,
        height: usize,
        fps: f64,
        pictures: impl IntoIterator<Item = (f64, MaskImage)>,
    ) -> Option<Motion> {
        let cell = (width.max(height) / CELLS_ACROSS).max(1);
        let (grid_w, grid_h) = (width.div_ceil(cell), height.div_ceil(cell));
        let mut motion = Motion {
            width,
            height,
            cell,
            grid_w,
            grid_h,
            frames: Vec::new(),
            fps,
        };
        let mut sums = vec![0u32; grid_w * grid_h];
        let mut prev: Option<(f64, MaskImage)> = None;
        for (time, picture) in pictures {
            if picture.dim() != (height, width) {
                continue;
            }
            if let Some((before, p)) = &prev {
                motion
                    .frames
                    .push(motion.frame(p, &picture, *before, time, &mut sums));
            }
            prev = Some((time, picture));
        }
        (!motion.frames.is_empty()).then_some(motion)
    }

    /// The first and last frame times compared (the first kept frame's
    /// predecessor to the last kept frame).
    pub fn span(&self) -> (f64, f64) {
        (
            self.frames.first().map_or(0.0, |f| f.before),
            self.frames.last().map_or(0.0, |f| f.time),
        )
    }

    /// The table of the change from `a` to `b`.
    fn frame(&self, a: &MaskImage, b: &MaskImage, before: f64, time: f64, sums: &mut [u32]) -> MotionFrame {
        let (gw, gh, c) = (self.grid_w, self.grid_h, self.cell);
        sums.fill(0);
        for (y, (ra, rb)) in a.rows().into_iter().zip(b.rows()).enumerate() {
            let row = &mut sums[(y / c) * gw..][..gw];
            if let (Some(ra), Some(rb)) = (ra.as_slice(), rb.as_slice()) {
                for (cx, (ca, cb)) in ra.chunks(c).zip(rb.chunks(c)).enumerate() {
                    let d: u32 = ca.iter().zip(cb).map(|(&p, &q)| u32::from(p.abs_diff(q))).sum();
                    row[cx] += d;
                }
            }
        }
        let mut table = vec![0u32; (gw + 1) * (gh + 1)];
        let mut total = 0.0;
        for gy in 0..gh {
            let rows = (self.height - gy * c).min(c);
            let mut run = 0u32;
            for gx in 0..gw {
                let cols = (self.width - gx * c).min(c);
                let mean = f64::from(sums[gy * gw + gx]) / (rows * cols) as f64;
                total += mean;
                run += (mean * SCALE).round() as u32;
                table[(gy + 1) * (gw + 1) + gx + 1] = table[gy * (gw + 1) + gx + 1] + run;
            }
        }
        MotionFrame {
            before,
            time,
            mean: total / (gw * gh) as f64,
            table,
        }
    }

    /// The mean change (luma levels) of frame `f` over the box of
    /// half-size `half` pixels around `at` (pixels), clipped to the
    /// picture; `None` when the box lies outside it.
    pub fn box_mean(&self, f: &MotionFrame, at: [f64; 2], half: f64) -> Option<f64> {
        let c = self.cell as f64;
        let (gw, gh) = (self.grid_w as f64, self.grid_h as f64);
        // Pixel centres are at integers: pixel x covers [x − ½, x + ½).
        let u0 = ((at[0] + 0.5 - half) / c).clamp(0.0, gw);
        let u1 = ((at[0] + 0.5 + half) / c).clamp(0.0, gw);
        let v0 = ((at[1] + 0.5 - half) / c).clamp(0.0, gh);
        let v1 = ((at[1] + 0.5 + half) / c).clamp(0.0, gh);
        let area = (u1 - u0) * (v1 - v0);
        if area.is_nan() || area <= 1e-9 {
            return None;
        }
        let s =
            self.sum_to(f, u1, v1) - self.sum_to(f, u0, v1) - self.sum_to(f, u1, v0) + self.sum_to(f, u0, v0);
        Some(s / area / SCALE)
    }

    /// Where the change of frame `f` is centred within the box of
    /// half-size `half` pixels around `at`: the centroid (pixels) of the
    /// cells whose centres lie in the box, each weighed by how much more
    /// it changed than the frame on average, and that total weight
    /// (`None` when the box is not wholly in the picture or nothing in it
    /// changed more than the average).
    pub fn centroid(&self, f: &MotionFrame, at: [f64; 2], half: f64) -> Option<([f64; 2], f64)> {
        let c = self.cell as f64;
        if !(at[0] - half >= 0.0
            && at[1] - half >= 0.0
            && at[0] + half <= self.width as f64 - 1.0
            && at[1] + half <= self.height as f64 - 1.0)
        {
            return None;
        }
        let centre = |g: usize| g as f64 * c + (c - 1.0) / 2.0;
        let first = |x: f64| ((x - (c - 1.0) / 2.0) / c).ceil().max(0.0) as usize;
        let last = |x: f64, n: usize| (((x - (c - 1.0) / 2.0) / c).floor().max(0.0) as usize).min(n - 1);
        let (gx0, gx1) = (first(at[0] - half), last(at[0] + half, self.grid_w));
        let (gy0, gy1) = (first(at[1] - half), last(at[1] + half, self.grid_h));
        let stride = self.grid_w + 1;
        let t = |x: usize, y: usize| f64::from(f.table[y * stride + x]);
        let (mut m, mut mx, mut my) = (0.0, 0.0, 0.0);
        for gy in gy0..=gy1 {
            for gx in gx0..=gx1 {
                let v = (t(gx + 1, gy + 1) - t(gx, gy + 1) - t(gx + 1, gy) + t(gx, gy)) / SCALE - f.mean;
                if v > 0.0 {
                    m += v;
                    mx += v * centre(gx);
                    my += v * centre(gy);
                }
            }
        }
        (m > 1e-9).then(|| ([mx / m, my / m], m))
    }

    /// The table at fractional grid coordinates (bilinear: exact for cells
    /// of constant value).
    fn sum_to(&self, f: &MotionFrame, u: f64, v: f64) -> f64 {
        let stride = self.grid_w + 1;
        let (i, j) = (
            (u.floor() as usize).min(self.grid_w),
            (v.floor() as usize).min(self.grid_h),
        );
        let (i1, j1) = ((i + 1).min(self.grid_w), (j + 1).min(self.grid_h));
        let (fu, fv) = (u - i as f64, v - j as f64);
        let at = |x: usize, y: usize| f64::from(f.table[y * stride + x]);
        let top = at(i, j) * (1.0 - fu) + at(i1, j) * fu;
        let bottom = at(i, j1) * (1.0 - fu) + at(i1, j1) * fu;
        top * (1.0 - fv) + bottom * fv
    }

    /// Memory the tables take (bytes).
    pub fn bytes(&self) -> usize {
        self.frames.iter().map(|f| f.table.len() * 4).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn motion(w: usize, h: usize, cell: usize) -> Motion {
        Motion {
            width: w,
            height: h,
            cell,
            grid_w: w.div_ceil(cell),
            grid_h: h.div_ceil(cell),
            frames: Vec::new(),
            fps: 30.0,
        }
    }

    #[test]
    fn box_means_are_exact_for_whole_cells_and_interpolate_between() {
        let m = motion(40, 20, 10);
        let a = MaskImage::zeros((20, 40));
        let mut b = MaskImage::zeros((20, 40));
        // The cell at column 1, row 0 changes by 80 levels everywhere.
        b.slice_mut(ndarray::s![0..10, 10..20]).fill(80);
        let mut sums = vec![0; 8];
        let f = m.frame(&a, &b, 0.0, 0.1, &mut sums);
        assert!((f.mean - 10.0).abs() < 1e-9, "{}", f.mean);
        // The whole cell: centre 14.5, 4.5; half 5.
        assert!((m.box_mean(&f, [14.5, 4.5], 5.0).unwrap() - 80.0).abs() < 1e-9);
        // Half in that cell, half in the quiet one to its left.
        assert!((m.box_mean(&f, [9.5, 4.5], 5.0).unwrap() - 40.0).abs() < 1e-9);
        // Clipped at the picture's edge, and wholly outside it.
        assert!((m.box_mean(&f, [-0.5, 4.5], 5.0).unwrap()).abs() < 1e-9);
        assert_eq!(m.box_mean(&f, [-100.0, 4.5], 5.0), None);
        assert_eq!(m.box_mean(&f, [f64::NAN, 4.5], 5.0), None);
    }

    #[test]
    fn centroids_weigh_cells_by_their_change_above_the_mean() {
        let m = motion(40, 40, 10);
        let a = MaskImage::zeros((40, 40));
        let mut b = MaskImage::zeros((40, 40));
        // Cells (1, 1) and (2, 1) change, the second three times as much.
        b.slice_mut(ndarray::s![10..20, 10..20]).fill(40);
        b.slice_mut(ndarray::s![10..20, 20..30]).fill(120);
        let mut sums = vec![0; 16];
        let f = m.frame(&a, &b, 0.0, 0.1, &mut sums);
        // Mean change 10: weights 30 and 110.
        let (c, w) = m.centroid(&f, [20.0, 15.0], 12.0).unwrap();
        assert!((w - 140.0).abs() < 1e-9, "{w}");
        assert!(
            (c[0] - (14.5 * 30.0 + 24.5 * 110.0) / 140.0).abs() < 1e-9,
            "{c:?}"
        );
        assert!((c[1] - 14.5).abs() < 1e-9);
        assert_eq!(
            m.centroid(&f, [5.0, 15.0], 12.0),
            None,
            "the box leaves the picture"
        );
    }

    #[test]
    fn partial_cells_at_the_edges_are_averaged_over_their_pixels() {
        let m = motion(25, 10, 10);
        let a = MaskImage::zeros((10, 25));
        let b = MaskImage::from_elem((10, 25), 20);
        let mut sums = vec![0; 3];
        let f = m.frame(&a, &b, 0.0, 0.1, &mut sums);
        assert!((f.mean - 20.0).abs() < 1e-9);
        assert!((m.box_mean(&f, [22.0, 4.5], 2.0).unwrap() - 20.0).abs() < 1e-9);
    }
}
