//! Thesis Algorithm 4 (COMPUTEMASK) on the picture's 2×2 blocks (the
//! resolution 4:2:0 video carries its colour at, [`super::blocks`]):
//! OpenCV HSV of each block's colour, the hue peak of the whole picture's
//! histogram widened while bins stay above 5 % of the peak (at most ±10)
//! and then by 12, the fixed green / black / white thresholds, and the
//! listed morphology with the 3×3 cross, each count of iterations halved
//! (rounded up: [`block_steps`]) since a block is two pixels across.
//!
//! The thresholds are the thesis's own, applied exactly to a block's
//! colour: its hue and chroma are each of its pixels' (unless a channel
//! clips), its value and saturation those of its mean luma. So the mask
//! is not the thesis's Python's (`reference/thesis_mask.py`) pixel for
//! pixel any more, as it was at full resolution; it agrees with it away
//! from its boundaries (docs/mask.md has the measure). The hue search
//! wraps around 0/179 as that script's `histo[h % 180]` does.
//!
//! Speed: one pass converts each row of blocks to HSV (exact integer
//! OpenCV arithmetic, vectorised), counts hues and packs the black and
//! white tests into bit masks while remembering the hue of blocks that
//! pass the S/V part of the green test; a second pass applies the hue
//! window; all morphology runs on bit-packed masks.

use super::blocks::{Blocks, block_size};
use super::hsv::{hue_chroma_value_row, sat_at_least};
use super::masker::picture_size;
use super::morph::Morphology;
use super::{MaskError, Masker};
use crate::floor::FloorMask;
use crate::floor::bits::{BitMask, pack_row};
use crate::simd::multiversion;
use crate::video::Picture;

/// Hue stored for pixels failing the S/V part of the green test (never in
/// a hue window, which ends at 179 + 10 + 12 at most).
const NOT_GREEN: u8 = 255;

/// The thesis mask. Keeps its buffers between frames.
#[derive(Debug, Default, Clone)]
pub struct ThesisMasker {
    hues: Vec<u8>,
    row_h: Vec<u8>,
    row_c: Vec<u8>,
    row_v: Vec<u8>,
    flags: Vec<u8>,
    green: BitMask,
    black: BitMask,
    white: BitMask,
    fill: BitMask,
    morph: Morphology,
    blocks: Blocks,
}

/// Algorithm 4's morphology steps (iterations of the cross, negative =
/// erosion) on blocks: each count halved, rounded up (`[-1, 2]` → `[-1,
/// 1]`, `[-1, 14, -13]` → `[-1, 7, -7]`).
pub const fn block_steps<const N: usize>(steps: [i32; N]) -> [i32; N] {
    let mut out = steps;
    let mut i = 0;
    while i < N {
        let n = steps[i];
        out[i] = if n >= 0 { (n + 1) / 2 } else { -((1 - n) / 2) };
        i += 1;
    }
    out
}

/// The hue window `(h0, h1)` of Algorithm 4 lines 3–14: green hues are
/// `h0 < h < h1`.
pub fn hue_window(histo: &[u64; 180]) -> (i32, i32) {
    let mut peak = 0usize;
    for (i, &c) in histo.iter().enumerate() {
        if c > histo[peak] {
            peak = i;
        }
    }
    let hh = peak as i32;
    let limit = 0.05 * histo[peak] as f64;
    let above = |h: i32| histo[h.rem_euclid(180) as usize] as f64 > limit;
    let (mut h0, mut h1) = (hh, hh);
    while h0 > hh - 10 && above(h0) {
        h0 -= 1;
    }
    while h1 < hh + 10 && above(h1) {
        h1 += 1;
    }
    (h0 - 12, h1 + 12)
}

impl ThesisMasker {
    /// A masker with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Computes the mask of `frame` (shown at `time`) as a bit mask of its
    /// 2×2 blocks.
    pub fn compute_bits(&mut self, frame: &Picture<'_>, time: f64) -> Result<&BitMask, MaskError> {
        let (pw, ph) = picture_size(frame, time)?;
        let (w, h) = block_size(pw, ph);
        self.hues.resize(w * h, 0);
        for buf in [&mut self.row_h, &mut self.row_c, &mut self.row_v, &mut self.flags] {
            buf.resize(w, 0);
        }
        self.green.reset(w, h);
        self.black.reset(w, h);
        self.white.reset(w, h);

        // Pass 1: HSV, hue histogram, black/white tests, green S/V test.
        let mut histo = [[0u32; 256]; 4];
        for y in 0..h {
            let rgb = self.blocks.row(frame, y, 0, w);
            hue_chroma_value_row(rgb, &mut self.row_h, &mut self.row_c, &mut self.row_v);
            classify_row(
                &self.row_h,
                &self.row_c,
                &self.row_v,
                &mut self.hues[y * w..(y + 1) * w],
                &mut self.flags,
            );
            count_hues(&self.row_h, &mut histo);
            pack_row(&self.flags, 0, self.black.row_mut(y));
            pack_row(&self.flags, 1, self.white.row_mut(y));
        }
        let mut total = [0u64; 180];
        for (i, t) in total.iter_mut().enumerate() {
            *t = histo.iter().map(|hh| hh[i] as u64).sum();
        }
        let (h0, h1) = hue_window(&total);

        // Pass 2: line 15, the green test with the hue window.
        let lo = (h0 + 1).max(0) as u8;
        let span = (h1 - 1 - lo as i32) as u8;
        for y in 0..h {
            hue_window_row(&self.hues[y * w..(y + 1) * w], lo, span, &mut self.flags);
            pack_row(&self.flags, 0, self.green.row_mut(y));
        }

        let m = &mut self.morph;
        m.apply(&mut self.green, &block_steps([-1, 2])); // line 16
        self.black.and_not_assign(&self.green); // line 17
        m.apply(&mut self.black, &block_steps([-1, 8])); // line 18
        self.white.and_not_assign(&self.black); // lines 19–20
        m.apply(&mut self.white, &block_steps([4])); // line 21
        self.fill.copy_from(&self.green);
        m.apply(&mut self.fill, &block_steps([-1, 14, -13])); // line 22
        self.white.and_assign(&self.fill); // line 23: lines
        self.green.or_assign(&self.white); // line 24
        Ok(&self.green)
    }
}

multiversion! {
    /// Per pixel: the hue if the S/V part of the green test passes (else
    /// [`NOT_GREEN`]); flag bit 0 = dark (`v < 120`), bit 1 = white
    /// (`v > 130 ∧ s < 120`). Saturation comes from chroma `c` and `v`
    /// (exact for these two thresholds, see [`sat_at_least`]).
    fn classify_row(h: &[u8], c: &[u8], v: &[u8], hues: &mut [u8], flags: &mut [u8]) {
        let n = hues.len().min(flags.len()).min(h.len()).min(c.len()).min(v.len());
        let (h, c, v, hues, flags) = (&h[..n], &c[..n], &v[..n], &mut hues[..n], &mut flags[..n]);
        for i in 0..n {
            let (hh, cc, vv) = (h[i], c[i], v[i]);
            let sv_green = sat_at_least(cc, vv, 101) & (vv > 70) & (vv < 190);
            hues[i] = if sv_green { hh } else { NOT_GREEN };
            let white = (vv > 130) & !sat_at_least(cc, vv, 120);
            flags[i] = (vv < 120) as u8 | (white as u8) << 1;
        }
    }
}

multiversion! {
    /// Flag 1 where `lo ≤ hue ≤ lo + span`.
    fn hue_window_row(hues: &[u8], lo: u8, span: u8, flags: &mut [u8]) {
        for (f, &hh) in flags.iter_mut().zip(hues) {
            *f = (hh.wrapping_sub(lo) <= span) as u8;
        }
    }
}

/// Adds a row's hues to four interleaved histograms (avoids stalls on
/// repeated increments of one bin, the common case on a field).
fn count_hues(h: &[u8], histo: &mut [[u32; 256]; 4]) {
    let mut chunks = h.chunks_exact(4);
    for c in &mut chunks {
        histo[0][c[0] as usize] += 1;
        histo[1][c[1] as usize] += 1;
        histo[2][c[2] as usize] += 1;
        histo[3][c[3] as usize] += 1;
    }
    for &x in chunks.remainder() {
        histo[0][x as usize] += 1;
    }
}

impl Masker for ThesisMasker {
    fn name(&self) -> &str {
        "thesis"
    }

    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        let (w, h) = picture_size(frame, time)?;
        let bits = self.compute_bits(frame, time)?;
        out.blocks_mut(w, h).copy_from(bits);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::RgbImage;

    #[test]
    fn block_steps_halve_rounding_up() {
        assert_eq!(block_steps([-1, 2]), [-1, 1]);
        assert_eq!(block_steps([-1, 8]), [-1, 4]);
        assert_eq!(block_steps([4]), [2]);
        assert_eq!(block_steps([-1, 14, -13]), [-1, 7, -7]);
    }

    #[test]
    fn hue_window_follows_the_reference_search() {
        let mut histo = [0u64; 180];
        histo[60] = 1000;
        histo[61] = 100;
        histo[62] = 40; // ≤ 5 %: stops here
        histo[59] = 51;
        histo[58] = 50; // exactly 5 %: not above, stops
        assert_eq!(hue_window(&histo), (58 - 12, 62 + 12));
        // Wide peak: the search stops after 10 bins each way.
        let flat = [7u64; 180];
        assert_eq!(hue_window(&flat), (-10 - 12, 10 + 12));
        // Wrap-around below 0.
        let mut red = [0u64; 180];
        red[1] = 100;
        red[0] = 50;
        red[179] = 50;
        red[178] = 1;
        assert_eq!(hue_window(&red), (-2 - 12, 2 + 12));
    }

    #[test]
    fn green_field_with_a_line_and_a_dark_robot() {
        // Field green (h≈60, s high, v mid), a white line, a black disc.
        let (w, h) = (120, 80);
        let frame = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
            let line = (38..41).contains(&y);
            let robot = (x as i32 - 90).pow(2) + (y as i32 - 20).pow(2) < 100;
            let px = if robot {
                [20, 20, 20]
            } else if line {
                [230, 230, 230]
            } else {
                [40, 140, 40]
            };
            px[c]
        });
        let mut m = ThesisMasker::new();
        let mut out = FloorMask::new();
        m.compute(&Picture::Rgb(&frame), 0.0, &mut out).unwrap();
        let out = out.to_image();
        assert_eq!(out.dim(), (h, w));
        assert_eq!(out[[10, 10]], 255, "field");
        assert_eq!(out[[39, 10]], 255, "line kept as floor");
        assert_eq!(out[[20, 90]], 0, "robot");
    }
}
