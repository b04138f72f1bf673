//! Bit-packed binary masks: one bit per pixel, rows padded to whole 64-bit
//! words. Logic and morphology on them touch 64 pixels per word operation
//! and a 1920×1080 mask (260 KB) stays in cache.
//!
//! Bit `k` of word `i` in a row is pixel `x = 64·i + k`. Bits past the
//! width ("tails") are always 0.

use super::rect::Rect;
use crate::image::{FLOOR, MaskImage};

/// A binary image, bit-packed by rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitMask {
    width: usize,
    height: usize,
    wpr: usize,
    words: Vec<u64>,
}

impl BitMask {
    /// An all-zero mask.
    pub fn new(width: usize, height: usize) -> Self {
        let mut m = BitMask::default();
        m.reset(width, height);
        m
    }

    /// Makes this a `width`×`height` all-zero mask, reusing the allocation.
    pub fn reset(&mut self, width: usize, height: usize) {
        self.width = width;
        self.height = height;
        self.wpr = width.div_ceil(64);
        self.words.clear();
        self.words.resize(self.wpr * height, 0);
    }

    /// Makes this a copy of `other`, reusing the allocation.
    pub fn copy_from(&mut self, other: &BitMask) {
        self.width = other.width;
        self.height = other.height;
        self.wpr = other.wpr;
        self.words.clear();
        self.words.extend_from_slice(&other.words);
    }

    /// A mask with `f(x, y)` at every pixel (slow; for tests and small masks).
    pub fn from_fn(width: usize, height: usize, mut f: impl FnMut(usize, usize) -> bool) -> Self {
        let mut m = BitMask::new(width, height);
        for y in 0..height {
            for x in 0..width {
                if f(x, y) {
                    m.set(x, y, true);
                }
            }
        }
        m
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Whether both dimensions match.
    pub fn same_size(&self, other: &BitMask) -> bool {
        self.width == other.width && self.height == other.height
    }

    /// 64-bit words per row.
    pub fn words_per_row(&self) -> usize {
        self.wpr
    }

    /// All words, row after row.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words of row `y`.
    #[inline]
    pub fn row(&self, y: usize) -> &[u64] {
        &self.words[y * self.wpr..(y + 1) * self.wpr]
    }

    /// The words of row `y`, mutable. Callers keep the tail bits 0.
    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [u64] {
        &mut self.words[y * self.wpr..(y + 1) * self.wpr]
    }

    /// The valid bits of the last word of a row.
    #[inline]
    pub fn tail_mask(&self) -> u64 {
        tail_mask(self.width)
    }

    /// Pixel `(x, y)`.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> bool {
        (self.words[y * self.wpr + x / 64] >> (x % 64)) & 1 == 1
    }

    /// Sets pixel `(x, y)`.
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, on: bool) {
        let w = &mut self.words[y * self.wpr + x / 64];
        if on {
            *w |= 1 << (x % 64);
        } else {
            *w &= !(1 << (x % 64));
        }
    }

    /// Number of set pixels.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// `self ← self ∧ other` (same size).
    pub fn and_assign(&mut self, other: &BitMask) {
        debug_assert!(self.same_size(other));
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    /// `self ← self ∨ other` (same size).
    pub fn or_assign(&mut self, other: &BitMask) {
        debug_assert!(self.same_size(other));
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// `self ← self ∧ ¬other` (same size).
    pub fn and_not_assign(&mut self, other: &BitMask) {
        debug_assert!(self.same_size(other));
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// `self ← ¬self`, tails kept 0.
    pub fn invert(&mut self) {
        for w in &mut self.words {
            *w = !*w;
        }
        self.clear_tails();
    }

    /// Sets every pixel.
    pub fn fill_ones(&mut self) {
        self.words.fill(!0);
        self.clear_tails();
    }

    /// Zeroes the bits past the width in every row.
    pub fn clear_tails(&mut self) {
        let t = self.tail_mask();
        if self.wpr == 0 || t == !0 {
            return;
        }
        for row in self.words.chunks_exact_mut(self.wpr) {
            row[self.wpr - 1] &= t;
        }
    }

    /// Clears every pixel outside `keep` (`x0..x1` × `y0..y1`).
    pub fn keep_only(&mut self, keep: Rect) {
        let (x0, x1) = (
            keep.x0.min(self.width),
            keep.x1.min(self.width).max(keep.x0.min(self.width)),
        );
        for y in 0..self.height {
            let row = &mut self.words[y * self.wpr..(y + 1) * self.wpr];
            if !(keep.y0..keep.y1).contains(&y) || x0 == x1 {
                row.fill(0);
                continue;
            }
            for (i, w) in row.iter_mut().enumerate() {
                let (lo, hi) = (64 * i, 64 * i + 64);
                let from = x0.clamp(lo, hi) - lo;
                let to = x1.clamp(lo, hi) - lo;
                // A word wholly outside the kept columns keeps nothing
                // (then `from` may be 64: no shift by it).
                let bits = if to <= from {
                    0
                } else if to - from == 64 {
                    !0
                } else {
                    ((1u64 << (to - from)) - 1) << from
                };
                *w &= bits;
            }
        }
    }

    /// Writes the pixels of `part` (in this mask's coordinates) into `out`
    /// as 255 (set) / 0, at `part` moved by `(dx, dy)`; `line` is scratch.
    /// `out` must be in standard layout and hold the moved rectangle.
    pub fn write_part(&self, part: Rect, out: &mut MaskImage, (dx, dy): (usize, usize), line: &mut Vec<u8>) {
        let out_w = out.dim().1;
        let Some(bytes) = out.as_slice_mut() else {
            return; // the caller's mask is always contiguous
        };
        line.resize(part.x1, 0);
        for y in part.y0..part.y1 {
            unpack_row(self.row(y), line);
            let at = (y + dy) * out_w + dx;
            bytes[at + part.x0..at + part.x1].copy_from_slice(&line[part.x0..part.x1]);
        }
    }

    /// Copies the pixels of `part` (in `src`'s coordinates) into this mask
    /// at `part` moved by `(dx, dy)`, which must lie in it; the other
    /// pixels stay as they were.
    pub fn copy_rect_from(&mut self, src: &BitMask, part: Rect, (dx, dy): (usize, usize)) {
        let (x0, x1) = (part.x0.min(src.width), part.x1.min(src.width));
        if x0 >= x1 {
            return;
        }
        for y in part.y0..part.y1.min(src.height) {
            let (s, d) = (src.row(y), y + dy);
            if d >= self.height {
                break;
            }
            let row = &mut self.words[d * self.wpr..(d + 1) * self.wpr];
            let mut x = x0;
            while x < x1 {
                // Up to 64 bits at a time, as far as the next word boundary
                // of the destination.
                let to = x + dx;
                let n = (x1 - x).min(64 - to % 64);
                let bits = get_bits(s, x, n);
                let mask = if n == 64 { !0 } else { (1u64 << n) - 1 } << (to % 64);
                let w = &mut row[to / 64];
                *w = (*w & !mask) | ((bits << (to % 64)) & mask);
                x += n;
            }
        }
    }

    /// Reads a [`MaskImage`] (non-zero = set).
    pub fn from_mask_image(img: &MaskImage) -> Self {
        let (h, w) = img.dim();
        let mut m = BitMask::new(w, h);
        let mut flags = vec![0u8; w];
        for (y, row) in img.rows().into_iter().enumerate() {
            for (f, &v) in flags.iter_mut().zip(row.iter()) {
                *f = (v != 0) as u8;
            }
            pack_row(&flags, 0, m.row_mut(y));
        }
        m
    }

    /// Writes this mask into `out` as 255 (set) / 0, resizing `out` if needed.
    pub fn write_mask_image(&self, out: &mut MaskImage) {
        if out.dim() != (self.height, self.width) || !out.is_standard_layout() {
            *out = MaskImage::zeros((self.height, self.width));
        }
        let Some(bytes) = out.as_slice_mut() else {
            return; // unreachable: a fresh or standard-layout array is contiguous
        };
        if self.width == 0 {
            return;
        }
        for (y, dst) in bytes.chunks_exact_mut(self.width).enumerate() {
            unpack_row(self.row(y), dst);
        }
    }

    /// This mask as a new [`MaskImage`].
    pub fn to_mask_image(&self) -> MaskImage {
        let mut out = MaskImage::zeros((self.height, self.width));
        self.write_mask_image(&mut out);
        out
    }
}

/// Bits `x..x + n` (n ≤ 64) of a packed row, as the low bits of a word.
#[inline]
pub(crate) fn get_bits(row: &[u64], x: usize, n: usize) -> u64 {
    let (i, off) = (x / 64, x % 64);
    let mut v = row[i] >> off;
    if off > 0 && off + n > 64 {
        v |= row[i + 1] << (64 - off);
    }
    if n == 64 { v } else { v & ((1u64 << n) - 1) }
}

/// The valid bits of the last word of a row `width` pixels wide.
#[inline]
pub fn tail_mask(width: usize) -> u64 {
    match width % 64 {
        0 => !0,
        r => (1u64 << r) - 1,
    }
}

/// Packs bit `bit` of each byte of `flags` into `out` (pixel x → bit x).
/// Bits of `out` past `flags.len()` become 0.
pub fn pack_row(flags: &[u8], bit: u32, out: &mut [u64]) {
    let bit = bit & 7;
    #[cfg(target_arch = "x86_64")]
    {
        if crate::simd::has_avx2() {
            // SAFETY: the CPU supports AVX2.
            unsafe { pack_row_avx2(flags, bit, out) };
            return;
        }
    }
    pack_row_base(flags, bit, out)
}

fn pack_row_base(flags: &[u8], bit: u32, out: &mut [u64]) {
    let n = flags.len();
    for (i, w) in out.iter_mut().enumerate() {
        let start = (64 * i).min(n);
        let chunk = &flags[start..(start + 64).min(n)];
        *w = pack_chunk_base(chunk, bit);
    }
}

/// Up to 64 flag bytes → one word, 8 bytes at a time with a multiply that
/// gathers the low bit of each byte into the top byte.
#[inline]
fn pack_chunk_base(chunk: &[u8], bit: u32) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut w = 0u64;
    for (j, eight) in chunk.chunks(8).enumerate() {
        let mut buf = [0u8; 8];
        buf[..eight.len()].copy_from_slice(eight);
        let x = (u64::from_le_bytes(buf) >> bit) & ONES;
        w |= (x.wrapping_mul(GATHER) >> 56) << (8 * j);
    }
    w
}

/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn pack_row_avx2(flags: &[u8], bit: u32, out: &mut [u64]) {
    use std::arch::x86_64::*;
    let n = flags.len();
    let full = (n / 64).min(out.len());
    // Shifting 16-bit lanes left by 7 − bit moves bit `bit` of every byte to
    // its bit 7 without disturbing the other byte's bit 7; movemask collects them.
    // SAFETY: AVX2 is enabled here; the loads read 64 bytes inside `flags`
    // (the slice is bounds-checked first).
    unsafe {
        let shift = _mm_cvtsi32_si128(7 - bit as i32);
        for (i, w) in out.iter_mut().enumerate().take(full) {
            let p = flags[64 * i..64 * i + 64].as_ptr();
            let a = _mm256_loadu_si256(p as *const __m256i);
            let b = _mm256_loadu_si256(p.add(32) as *const __m256i);
            let lo = _mm256_movemask_epi8(_mm256_sll_epi16(a, shift)) as u32 as u64;
            let hi = _mm256_movemask_epi8(_mm256_sll_epi16(b, shift)) as u32 as u64;
            *w = lo | (hi << 32);
        }
    }
    for (i, w) in out.iter_mut().enumerate().skip(full) {
        let start = (64 * i).min(n);
        *w = pack_chunk_base(&flags[start..(start + 64).min(n)], bit);
    }
}

/// Byte `b` → eight bytes 0/255, one per bit (lowest bit first).
static UNPACK: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            if (b >> k) & 1 == 1 {
                t[b] |= (FLOOR as u64) << (8 * k);
            }
            k += 1;
        }
        b += 1;
    }
    t
};

/// Unpacks the first `dst.len()` bits of `words` into bytes 255 / 0.
pub fn unpack_row(words: &[u64], dst: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::simd::has_avx2() {
            // SAFETY: the CPU supports AVX2.
            unsafe { unpack_row_avx2(words, dst) };
            return;
        }
    }
    unpack_row_base(words, dst)
}

/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn unpack_row_avx2(words: &[u64], dst: &mut [u8]) {
    use std::arch::x86_64::*;
    let full = (dst.len() / 64).min(words.len());
    // SAFETY: AVX2 is enabled here; each store writes 32 bytes inside the
    // bounds-checked 64-byte chunk of `dst`.
    unsafe {
        // Byte j of a 32-pixel group takes byte j / 8 of the 32 bits, then
        // tests its bit j % 8.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        );
        let bits = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
        for (i, &w) in words.iter().enumerate().take(full) {
            let out = dst[64 * i..64 * i + 64].as_mut_ptr();
            for half in 0..2 {
                let x = _mm256_set1_epi32((w >> (32 * half)) as u32 as i32);
                let x = _mm256_and_si256(_mm256_shuffle_epi8(x, spread), bits);
                let x = _mm256_cmpeq_epi8(x, bits);
                _mm256_storeu_si256(out.add(32 * half) as *mut __m256i, x);
            }
        }
    }
    let done = 64 * full;
    unpack_row_base(&words[full..], &mut dst[done..]);
}

fn unpack_row_base(words: &[u64], dst: &mut [u8]) {
    let full = dst.len() / 64;
    let mut chunks = dst.chunks_exact_mut(64);
    for (c, &w) in (&mut chunks).zip(words) {
        for (j, eight) in c.chunks_exact_mut(8).enumerate() {
            eight.copy_from_slice(&UNPACK[((w >> (8 * j)) & 0xff) as usize].to_le_bytes());
        }
    }
    let rest = chunks.into_remainder();
    if let Some(&w) = words.get(full) {
        for (j, b) in rest.iter_mut().enumerate() {
            *b = if (w >> j) & 1 == 1 { FLOOR } else { 0 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept columns that start past a word (66..67 of a 69-wide mask)
    /// leave that word empty, found by `masking_cores_equals_masking_the_whole_frame`.
    #[test]
    fn keeping_columns_past_a_word_clears_that_word() {
        let mut m = BitMask::new(69, 2);
        for x in 0..69 {
            m.set(x, 0, true);
        }
        m.keep_only(Rect {
            x0: 66,
            y0: 0,
            x1: 67,
            y1: 1,
        });
        assert_eq!(m.count_ones(), 1);
        assert!(m.get(66, 0));
    }

    #[test]
    fn pack_and_unpack_round_trip_at_every_width_and_bit() {
        for w in [0usize, 1, 7, 63, 64, 65, 100, 128, 130, 200] {
            let flags: Vec<u8> = (0..w).map(|i| ((i * 37 + i / 3) % 256) as u8).collect();
            for bit in 0..8 {
                let mut out = vec![!0u64; w.div_ceil(64)];
                pack_row(&flags, bit, &mut out);
                let mut base = vec![!0u64; w.div_ceil(64)];
                pack_row_base(&flags, bit, &mut base);
                assert_eq!(out, base, "w={w} bit={bit}");
                #[cfg(target_arch = "x86_64")]
                if crate::simd::has_avx2() {
                    let mut v = vec![!0u64; w.div_ceil(64)];
                    // SAFETY: AVX2 was detected.
                    unsafe { pack_row_avx2(&flags, bit, &mut v) };
                    assert_eq!(v, base, "avx2 w={w} bit={bit}");
                    let mut b = vec![3u8; w];
                    // SAFETY: AVX2 was detected.
                    unsafe { unpack_row_avx2(&base, &mut b) };
                    let mut want = vec![5u8; w];
                    unpack_row_base(&base, &mut want);
                    assert_eq!(b, want, "avx2 unpack w={w} bit={bit}");
                }
                for (x, f) in flags.iter().enumerate() {
                    assert_eq!(
                        (out[x / 64] >> (x % 64)) & 1,
                        ((f >> bit) & 1) as u64,
                        "w={w} x={x}"
                    );
                }
                if let Some(last) = out.last() {
                    assert_eq!(last & !tail_mask(w), 0, "tail bits set, w={w}");
                }
                let mut bytes = vec![7u8; w];
                unpack_row(&out, &mut bytes);
                let mut base_bytes = vec![9u8; w];
                unpack_row_base(&out, &mut base_bytes);
                assert_eq!(bytes, base_bytes);
                for (x, f) in flags.iter().enumerate() {
                    assert_eq!(bytes[x], if (f >> bit) & 1 == 1 { 255 } else { 0 });
                }
            }
        }
    }

    #[test]
    fn mask_image_round_trip_and_logic() {
        let img = MaskImage::from_shape_fn((5, 70), |(y, x)| if (x + y) % 3 == 0 { 255 } else { 0 });
        let m = BitMask::from_mask_image(&img);
        assert_eq!(m.to_mask_image(), img);
        let mut inv = m.clone();
        inv.invert();
        assert_eq!(inv.count_ones() + m.count_ones(), 5 * 70);
        let mut both = m.clone();
        both.and_assign(&inv);
        assert_eq!(both.count_ones(), 0);
        let mut either = m.clone();
        either.or_assign(&inv);
        assert_eq!(either.count_ones(), 5 * 70);
        let mut diff = either.clone();
        diff.and_not_assign(&m);
        assert_eq!(diff, inv);
        assert!(m.get(0, 0) && !m.get(1, 0) && m.get(2, 1));
    }

    proptest::proptest! {
        /// Copying a rectangle equals copying its pixels one by one, at
        /// any offsets across word boundaries.
        #[test]
        fn copying_a_rectangle_equals_copying_its_pixels(
            sw in 1usize..150, sh in 1usize..6, dw in 1usize..200, dh in 1usize..8,
            x0 in 0usize..150, x1 in 0usize..150, y0 in 0usize..6, y1 in 0usize..6,
            dx in 0usize..60, dy in 0usize..3, seed in 0u64..1000,
        ) {
            let src = BitMask::from_fn(sw, sh, |x, y| (x * 7 + y * 13 + seed as usize) % 5 < 2);
            let mut got = BitMask::from_fn(dw, dh, |x, y| (x + y + seed as usize).is_multiple_of(3));
            let mut want = got.clone();
            let part = Rect::new(x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1));
            // Only parts that land in the destination.
            let part = Rect::new(part.x0, part.y0, part.x1.min(sw).min(dw.saturating_sub(dx)), part.y1.min(sh));
            let part = Rect::new(part.x0.min(part.x1), part.y0, part.x1, part.y1);
            for y in part.y0..part.y1 {
                for x in part.x0..part.x1 {
                    if y + dy < dh {
                        want.set(x + dx, y + dy, src.get(x, y));
                    }
                }
            }
            got.copy_rect_from(&src, part, (dx, dy));
            proptest::prop_assert_eq!(got, want);
        }
    }
}
