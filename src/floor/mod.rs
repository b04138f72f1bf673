//! A frame's floor mask as maskers write it and the pipeline reads it
//! ([`FloorMask`]): one value per pixel (a mask image, a mask video, a
//! rendered match's own mask), or one bit per 2×2 block of pixels — the
//! colour methods' masks ([`crate::mask::adaptive`], [`crate::mask::thesis`]), made at
//! the resolution the video carries its colour in (4:2:0). A block's bit
//! stands for its four pixels (nearest-neighbour): the mask image of a
//! block mask is each bit repeated over its block.

pub mod bits;
mod rect;

pub use rect::Rect;

use crate::image::{FLOOR, MaskImage};
use bits::{BitMask, get_bits, unpack_row};

/// The floor mask of a `width`×`height` picture (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloorMask {
    width: usize,
    height: usize,
    form: Form,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Form {
    /// One value per pixel ([`FLOOR`] = floor).
    Pixels(MaskImage),
    /// One bit per 2×2 block (set = floor): ⌈width/2⌉ × ⌈height/2⌉.
    Blocks(BitMask),
}

impl Default for FloorMask {
    fn default() -> Self {
        FloorMask::new()
    }
}

impl FloorMask {
    /// An empty (0×0) mask.
    pub fn new() -> Self {
        FloorMask {
            width: 0,
            height: 0,
            form: Form::Blocks(BitMask::default()),
        }
    }

    /// A mask of one value per pixel.
    pub fn from_image(mask: MaskImage) -> Self {
        let (h, w) = mask.dim();
        FloorMask {
            width: w,
            height: h,
            form: Form::Pixels(mask),
        }
    }

    /// A block mask of a `width`×`height` picture; `blocks` must be
    /// ⌈width/2⌉ × ⌈height/2⌉ (else it is made that size, all zeros).
    pub fn from_blocks(mut blocks: BitMask, width: usize, height: usize) -> Self {
        let (bw, bh) = (width.div_ceil(2), height.div_ceil(2));
        if (blocks.width(), blocks.height()) != (bw, bh) {
            blocks.reset(bw, bh);
        }
        FloorMask {
            width,
            height,
            form: Form::Blocks(blocks),
        }
    }

    /// Width of the picture in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height of the picture in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// `(height, width)`, as a [`MaskImage`]'s `dim()`.
    pub fn dim(&self) -> (usize, usize) {
        (self.height, self.width)
    }

    /// Whether pixel `(x, y)` is floor (`false` outside the picture).
    pub fn is_floor(&self, x: usize, y: usize) -> bool {
        if x >= self.width || y >= self.height {
            return false;
        }
        match &self.form {
            Form::Pixels(m) => m[(y, x)] == FLOOR,
            Form::Blocks(b) => b.get(x / 2, y / 2),
        }
    }

    /// The block mask, when this is one.
    pub fn blocks(&self) -> Option<&BitMask> {
        match &self.form {
            Form::Blocks(b) => Some(b),
            Form::Pixels(_) => None,
        }
    }

    /// The mask of one value per pixel, when this is one.
    pub fn pixels(&self) -> Option<&MaskImage> {
        match &self.form {
            Form::Pixels(m) => Some(m),
            Form::Blocks(_) => None,
        }
    }

    /// Makes this a block mask of a `width`×`height` picture and returns
    /// its bits (⌈width/2⌉ × ⌈height/2⌉; kept as they were when it already
    /// was one of that size, else all zeros).
    pub fn blocks_mut(&mut self, width: usize, height: usize) -> &mut BitMask {
        let (bw, bh) = (width.div_ceil(2), height.div_ceil(2));
        if !matches!(&self.form, Form::Blocks(b) if (b.width(), b.height()) == (bw, bh)) {
            let mut b = match std::mem::replace(&mut self.form, Form::Pixels(MaskImage::zeros((0, 0)))) {
                Form::Blocks(b) => b,
                Form::Pixels(_) => BitMask::default(),
            };
            b.reset(bw, bh);
            self.form = Form::Blocks(b);
        }
        self.width = width;
        self.height = height;
        match &mut self.form {
            Form::Blocks(b) => b,
            Form::Pixels(_) => unreachable!("made a block mask above"),
        }
    }

    /// Makes this a mask of one value per pixel of a `width`×`height`
    /// picture and returns it (kept as it was when it already was one of
    /// that size, else all zeros).
    pub fn pixels_mut(&mut self, width: usize, height: usize) -> &mut MaskImage {
        if !matches!(&self.form, Form::Pixels(m) if m.dim() == (height, width) && m.is_standard_layout()) {
            self.form = Form::Pixels(MaskImage::zeros((height, width)));
        }
        self.width = width;
        self.height = height;
        match &mut self.form {
            Form::Pixels(m) => m,
            Form::Blocks(_) => unreachable!("made a pixel mask above"),
        }
    }

    /// Makes this `mask`'s copy (one value per pixel), reusing the buffer.
    pub fn set_pixels(&mut self, mask: &MaskImage) {
        let (h, w) = mask.dim();
        self.pixels_mut(w, h).assign(mask);
    }

    /// Makes this a `width`×`height` mask that is all floor (`floor`) or
    /// none.
    pub fn fill(&mut self, width: usize, height: usize, floor: bool) {
        let b = self.blocks_mut(width, height);
        if floor {
            b.fill_ones();
        } else {
            let (bw, bh) = (b.width(), b.height());
            b.reset(bw, bh);
        }
    }

    /// Pixels that are floor.
    pub fn floor_pixels(&self) -> usize {
        match &self.form {
            Form::Pixels(m) => m.iter().filter(|&&v| v == FLOOR).count(),
            Form::Blocks(_) => {
                let mut n = 0;
                let mut row = vec![0u8; self.width];
                for y in 0..self.height {
                    self.row_values(y, 0, self.width, &mut row);
                    n += row.iter().filter(|&&v| v == FLOOR).count();
                }
                n
            }
        }
    }

    /// Writes the values of pixels `x0..x1` of row `y` (255 = floor, 0 =
    /// not) into `out[..x1 - x0]`. The range must lie in the picture and
    /// `out` hold it.
    pub fn row_values(&self, y: usize, x0: usize, x1: usize, out: &mut [u8]) {
        let out = &mut out[..x1 - x0];
        match &self.form {
            Form::Pixels(m) => {
                if let Some(row) = m.row(y).to_slice() {
                    out.copy_from_slice(&row[x0..x1]);
                } else {
                    for (o, x) in out.iter_mut().zip(x0..x1) {
                        *o = m[(y, x)];
                    }
                }
            }
            Form::Blocks(b) => {
                let row = b.row(y / 2);
                let bit = |x: usize| {
                    if (row[x / 128] >> (x / 2 % 64)) & 1 == 1 {
                        FLOOR
                    } else {
                        0
                    }
                };
                let (mut x, mut o) = (x0, 0);
                if x % 2 == 1 && x < x1 {
                    out[0] = bit(x);
                    (x, o) = (x + 1, 1);
                }
                let pairs = (x1 - x) / 2;
                spread_pairs(row, x / 2, &mut out[o..o + 2 * pairs]);
                (x, o) = (x + 2 * pairs, o + 2 * pairs);
                if x < x1 {
                    out[o] = bit(x);
                }
            }
        }
    }

    /// Writes the mask as an image (255 = floor) into `out`, resized when
    /// needed: a block mask's bits each over its block.
    pub fn write_image(&self, out: &mut MaskImage) {
        let (w, h) = (self.width, self.height);
        match &self.form {
            Form::Pixels(m) => {
                if out.dim() == m.dim() {
                    out.assign(m);
                } else {
                    *out = m.clone();
                }
            }
            Form::Blocks(b) => {
                if out.dim() != (h, w) || !out.is_standard_layout() {
                    *out = MaskImage::zeros((h, w));
                }
                let Some(bytes) = out.as_slice_mut() else {
                    return; // unreachable: a fresh or standard-layout array is contiguous
                };
                if w == 0 {
                    return;
                }
                let mut half = vec![0u8; b.width()];
                for (by, pair) in bytes.chunks_mut(2 * w).enumerate() {
                    unpack_row(b.row(by), &mut half);
                    let (first, second) = pair.split_at_mut(w.min(pair.len()));
                    for (x, o) in first.iter_mut().enumerate() {
                        *o = half[x / 2];
                    }
                    if !second.is_empty() {
                        second.copy_from_slice(first);
                    }
                }
            }
        }
    }

    /// The mask as an image (255 = floor).
    pub fn to_image(&self) -> MaskImage {
        let mut out = MaskImage::zeros((0, 0));
        self.write_image(&mut out);
        out
    }
}

/// Each of 256 bytes of bits as 16 bytes: every bit twice, 255 or 0.
static PAIRS: [u128; 256] = {
    let mut t = [0u128; 256];
    let mut v = 0;
    while v < 256 {
        let mut k = 0;
        while k < 8 {
            if (v >> k) & 1 == 1 {
                t[v] |= 0xffffu128 << (16 * k);
            }
            k += 1;
        }
        v += 1;
    }
    t
};

/// Writes blocks `b0..b0 + out.len() / 2` of a block row's bits (`words`:
/// block `k` is bit `k`) as two bytes each, 255 (set) or 0: the values of
/// their pixels, eight blocks a step.
fn spread_pairs(words: &[u64], b0: usize, out: &mut [u8]) {
    let n = out.len() / 2;
    let mut chunks = out.chunks_exact_mut(16);
    let mut b = b0;
    for c in &mut chunks {
        c.copy_from_slice(&PAIRS[get_bits(words, b, 8) as usize].to_le_bytes());
        b += 8;
    }
    let rest = chunks.into_remainder();
    let left = b0 + n - b;
    if left > 0 {
        let bytes = PAIRS[get_bits(words, b, left) as usize].to_le_bytes();
        rest.copy_from_slice(&bytes[..rest.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_mask_stands_for_its_four_pixels() {
        // 5×3 pixels: 3×2 blocks; the last column and row are half blocks.
        let blocks = BitMask::from_fn(3, 2, |x, y| (x + y) % 2 == 0);
        let m = FloorMask::from_blocks(blocks, 5, 3);
        let img = m.to_image();
        assert_eq!(img.dim(), (3, 5));
        for y in 0..3 {
            for x in 0..5 {
                let want = (x / 2 + y / 2) % 2 == 0;
                assert_eq!(img[(y, x)] == FLOOR, want, "({x}, {y})");
                assert_eq!(m.is_floor(x, y), want, "({x}, {y})");
            }
        }
        let mut row = [7u8; 3];
        // Row 2 is block row 1: blocks 1, 1, 2 are floor, floor, not.
        m.row_values(2, 2, 5, &mut row);
        assert_eq!(row, [FLOOR, FLOOR, 0]);
        assert_eq!(m.floor_pixels(), img.iter().filter(|&&v| v == FLOOR).count());
        assert!(!m.is_floor(5, 0) && !m.is_floor(0, 3));
    }

    #[test]
    fn forms_switch_and_keep_their_buffers() {
        let mut m = FloorMask::new();
        m.fill(4, 4, true);
        assert_eq!(m.floor_pixels(), 16);
        m.blocks_mut(4, 4).set(0, 0, false);
        assert_eq!(m.floor_pixels(), 12, "kept at the same size");
        let px = MaskImage::from_shape_fn((2, 3), |(y, x)| if x == y { FLOOR } else { 0 });
        m.set_pixels(&px);
        assert_eq!((m.width(), m.height()), (3, 2));
        assert_eq!(m.to_image(), px);
        assert!(m.blocks().is_none() && m.pixels().is_some());
        let mut row = [0u8; 2];
        m.row_values(1, 1, 3, &mut row);
        assert_eq!(row, [FLOOR, 0]);
        m.fill(3, 2, false);
        assert_eq!(m.floor_pixels(), 0);
        assert_eq!(FloorMask::from_image(px.clone()).to_image(), px);
    }

    /// Row values of a block mask, at any span, equal its image's row.
    #[test]
    fn row_values_of_blocks_equal_the_image_at_any_span() {
        let (w, h) = (301usize, 5usize);
        let bits = BitMask::from_fn(w.div_ceil(2), h.div_ceil(2), |x, y| (x * 7 + y * 3) % 5 < 2);
        let m = FloorMask::from_blocks(bits, w, h);
        let img = m.to_image();
        let mut out = vec![0u8; w];
        for y in 0..h {
            for x0 in (0..w).step_by(7) {
                for x1 in (x0..=w).step_by(5) {
                    m.row_values(y, x0, x1, &mut out);
                    let want: Vec<u8> = (x0..x1).map(|x| img[(y, x)]).collect();
                    assert_eq!(&out[..x1 - x0], &want[..], "row {y}, {x0}..{x1}");
                }
            }
        }
    }
}
