//! Binary morphology with the thesis's structuring element: `n` iterations
//! of the 4-connected 3×3 cross.
//!
//! `n` iterations of the cross equal one dilation (or erosion) by the L1
//! ball of radius `n`, and on a rectangular image that stays true at the
//! borders when, as in OpenCV, each step ignores pixels outside the image
//! (dilation pads with 0, erosion with 1): the cross steps walk lattice
//! paths, and two pixels of a rectangle are joined by a path of length equal
//! to their L1 distance that never leaves it. So
//!
//! * dilate(S, n) = pixels within L1 distance `n` of S,
//! * erode(S, n) = pixels farther than `n` from every in-image pixel not in S.
//!
//! Two exact implementations on [`BitMask`]s, both bit-identical to
//! iterating the cross ([`iterate_cross_reference`] is that literal
//! definition, and the property tests compare against it):
//!
//! * small `n`: the cross step on packed rows, 64 pixels per word operation
//!   (about 0.01 ms per step on a 1920×1080 mask here);
//! * `n` ≥ [`DT_MIN_RADIUS`]: a saturating 8-bit L1 distance transform
//!   (one pass down and one up over columns, then the row minimum in
//!   ⌈log₂(n+1)⌉ doubling steps), whose cost does not grow with `n`
//!   beyond those few steps.
//!
//! The switch point is where the transform becomes cheaper than `n` cross
//! steps, so the cost of one operation is bounded by a constant for every
//! `n` (docs/PERFORMANCE.md has the measured curve).

use crate::floor::bits::{BitMask, pack_row, unpack_row};
use crate::image::MaskImage;
use crate::simd::multiversion;

/// Radii from which the distance transform replaces iterated cross steps.
pub const DT_MIN_RADIUS: u32 = 40;

/// Largest radius one distance-transform pass handles (distances saturate
/// at 255); larger radii are applied in pieces, which composes exactly.
const DT_MAX_RADIUS: u32 = 254;

/// Padding on each side of the row buffers of the distance transform: the
/// largest doubling step.
const PAD: usize = 128;

/// Reusable buffers for morphology on masks of any size.
#[derive(Debug, Default, Clone)]
pub struct Morphology {
    tmp: BitMask,
    cross: CrossBuffers,
    state: Vec<u8>,
    words: Vec<u64>,
    row_a: Vec<u8>,
    row_b: Vec<u8>,
    bytes: Vec<u8>,
}

impl Morphology {
    /// Empty buffers; they grow on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Dilates `m` by the L1 ball of radius `n` (= `n` cross iterations).
    pub fn dilate(&mut self, m: &mut BitMask, n: u32) {
        self.op(m, n, false)
    }

    /// Erodes `m` by the L1 ball of radius `n` (= `n` cross iterations).
    pub fn erode(&mut self, m: &mut BitMask, n: u32) {
        self.op(m, n, true)
    }

    /// Thesis `MORPH(a, [n₀, …])`: for each step, `n > 0` dilates `n`
    /// times and `n < 0` erodes `−n` times.
    pub fn apply(&mut self, m: &mut BitMask, steps: &[i32]) {
        for &n in steps {
            if n > 0 {
                self.dilate(m, n.unsigned_abs());
            } else if n < 0 {
                self.erode(m, n.unsigned_abs());
            }
        }
    }

    fn op(&mut self, m: &mut BitMask, mut n: u32, erode: bool) {
        if m.width() == 0 || m.height() == 0 {
            return;
        }
        if n < DT_MIN_RADIUS {
            self.cross_steps(m, n, erode);
            return;
        }
        while n > 0 {
            let k = n.min(DT_MAX_RADIUS);
            self.distance_op(m, k, erode);
            n -= k;
        }
    }

    /// `n` cross steps, ping-ponging between `m` and the scratch mask.
    fn cross_steps(&mut self, m: &mut BitMask, n: u32, erode: bool) {
        self.tmp.reset(m.width(), m.height());
        for _ in 0..n {
            cross_step(m, &mut self.tmp, erode, &mut self.cross);
            std::mem::swap(m, &mut self.tmp);
        }
    }

    /// One radius-`n` operation through the saturating distance transform.
    fn distance_op(&mut self, m: &mut BitMask, n: u32, erode: bool) {
        let w = m.width();
        // Seeds: the set pixels when dilating, the unset ones when eroding.
        self.tmp.copy_from(m);
        if erode {
            self.tmp.invert();
        }
        m.reset(self.tmp.width(), self.tmp.height());
        self.state.clear();
        self.state.resize(w, 255);
        self.bytes.clear();
        self.bytes.resize(w, 0);
        self.words.clear();
        self.words.resize(m.words_per_row(), 0);
        for buf in [&mut self.row_a, &mut self.row_b] {
            buf.clear();
            buf.resize(w + 2 * PAD, 255);
        }
        let mut bufs = DtBuffers {
            state: &mut self.state,
            row_a: &mut self.row_a,
            row_b: &mut self.row_b,
            bytes: &mut self.bytes,
            words: &mut self.words,
        };
        distance_passes(&self.tmp, m, n as u8, &mut bufs);
        if erode {
            m.invert();
        }
    }
}

/// One step of the cross from `src` into `dst` (same size). Outside the
/// image counts as 0 when dilating and 1 when eroding.
fn cross_step(src: &BitMask, dst: &mut BitMask, erode: bool, bufs: &mut CrossBuffers) {
    let wpr = src.words_per_row();
    let tail = src.tail_mask();
    // Rows with one word of outside on each side; bits past the width
    // count as outside too (1 when eroding).
    let (fill, pad) = if erode { (!0u64, !tail) } else { (0, 0) };
    bufs.edge.clear();
    bufs.edge.resize(wpr, fill);
    bufs.padded.clear();
    bufs.padded.resize(wpr + 2, fill);
    if erode {
        cross_step_erode(src, dst, &bufs.edge, &mut bufs.padded, pad);
    } else {
        cross_step_dilate(src, dst, &bufs.edge, &mut bufs.padded, pad);
    }
}

/// Scratch rows of [`cross_step`].
#[derive(Debug, Default, Clone)]
struct CrossBuffers {
    edge: Vec<u64>,
    padded: Vec<u64>,
}

multiversion! {
    /// [`cross_step`] dilating.
    fn cross_step_dilate(src: &BitMask, dst: &mut BitMask, edge: &[u64], padded: &mut [u64], pad: u64) {
        cross_step_body::<false>(src, dst, edge, padded, pad)
    }
}

multiversion! {
    /// [`cross_step`] eroding.
    fn cross_step_erode(src: &BitMask, dst: &mut BitMask, edge: &[u64], padded: &mut [u64], pad: u64) {
        cross_step_body::<true>(src, dst, edge, padded, pad)
    }
}

#[inline(always)]
fn cross_step_body<const ERODE: bool>(
    src: &BitMask,
    dst: &mut BitMask,
    edge: &[u64],
    padded: &mut [u64],
    pad: u64,
) {
    let (n, h) = (src.words_per_row(), src.height());
    if n == 0 || padded.len() < n + 2 || edge.len() < n {
        return;
    }
    let tail = src.tail_mask();
    if n == 1 {
        // One word a row (a narrow window): the same steps without the
        // padded row.
        let (words, e) = (src.words(), edge[0]);
        let (prev, next) = if ERODE { (1, 1 << 63) } else { (0, 0) };
        for y in 0..h {
            let c = words[y] | pad;
            let up = if y > 0 { words[y - 1] } else { e };
            let dn = if y + 1 < h { words[y + 1] } else { e };
            let (left, right) = ((c << 1) | prev, (c >> 1) | next);
            dst.row_mut(y)[0] = tail
                & if ERODE {
                    c & left & right & up & dn
                } else {
                    c | left | right | up | dn
                };
        }
        return;
    }
    for y in 0..h {
        padded[1..=n].copy_from_slice(src.row(y));
        padded[n] |= pad;
        let up = if y > 0 { src.row(y - 1) } else { edge };
        let dn = if y + 1 < h { src.row(y + 1) } else { edge };
        let out = dst.row_mut(y);
        let (prev, cur, next) = (&padded[..n], &padded[1..n + 1], &padded[2..n + 2]);
        let (up, dn, out) = (&up[..n], &dn[..n], &mut out[..n]);
        for i in 0..n {
            let c = cur[i];
            let left = (c << 1) | (prev[i] >> 63);
            let right = (c >> 1) | (next[i] << 63);
            out[i] = if ERODE {
                c & left & right & up[i] & dn[i]
            } else {
                c | left | right | up[i] | dn[i]
            };
        }
        out[n - 1] &= tail;
    }
}

struct DtBuffers<'a> {
    state: &'a mut [u8],
    row_a: &'a mut [u8],
    row_b: &'a mut [u8],
    bytes: &'a mut [u8],
    words: &'a mut [u64],
}

multiversion! {
    /// `out ← pixels within L1 distance n of a set pixel of seeds` (out
    /// starts empty). The distance to the nearest seed is the smaller of the
    /// distance to the nearest seed in rows at or above and the one at or
    /// below, so two passes (down, then up) each keep one row of column
    /// distances, saturating at 255, and take the minimum along the row of
    /// |x − x'| + column distance in ⌈log₂(n+1)⌉ doubling steps.
    fn distance_passes(seeds: &BitMask, out: &mut BitMask, n: u8, b: &mut DtBuffers<'_>) {
        let (w, h) = (seeds.width(), seeds.height());
        let mut steps = [0usize; 8];
        let mut count = 0;
        let (mut s, mut reach) = (1usize, 0usize);
        while reach < n as usize && count < steps.len() {
            steps[count] = s;
            count += 1;
            reach += s;
            s *= 2;
        }
        for down in [true, false] {
            b.state.fill(255);
            for i in 0..h {
                let y = if down { i } else { h - 1 - i };
                unpack_row(seeds.row(y), b.bytes);
                // Column distance: 0 on a seed, else one more than the last row.
                for (st, &seed) in b.state.iter_mut().zip(b.bytes.iter()) {
                    *st = st.saturating_add(1).min(!seed);
                }
                b.row_a[PAD..PAD + w].copy_from_slice(b.state);
                let (mut a, mut bb) = (&mut *b.row_a, &mut *b.row_b);
                for &s in &steps[..count] {
                    let add = s as u8;
                    let (src, dst) = (&*a, &mut bb[PAD..PAD + w]);
                    let (left, mid, right) =
                        (&src[PAD - s..PAD - s + w], &src[PAD..PAD + w], &src[PAD + s..PAD + s + w]);
                    for (((d, &l), &c), &r) in dst.iter_mut().zip(left).zip(mid).zip(right) {
                        *d = c.min(l.saturating_add(add)).min(r.saturating_add(add));
                    }
                    std::mem::swap(&mut a, &mut bb);
                }
                for (o, &d) in b.bytes.iter_mut().zip(&a[PAD..PAD + w]) {
                    *o = (d <= n) as u8;
                }
                pack_row(b.bytes, 0, b.words);
                for (o, &wd) in out.row_mut(y).iter_mut().zip(b.words.iter()) {
                    *o |= wd;
                }
            }
        }
    }
}

/// The definition: `|n|` single steps of the 3×3 cross, dilating for
/// `n > 0` and eroding for `n < 0`, each step taking the maximum (minimum)
/// over the in-image neighbours. Slow; the reference for tests and benches.
pub fn iterate_cross_reference(m: &MaskImage, n: i32) -> MaskImage {
    let (h, w) = m.dim();
    let mut a = m.clone();
    for _ in 0..n.unsigned_abs() {
        let b = a.clone();
        for y in 0..h {
            for x in 0..w {
                let mut v = b[[y, x]];
                let neighbours = [
                    (x.wrapping_sub(1), y),
                    (x + 1, y),
                    (x, y.wrapping_sub(1)),
                    (x, y + 1),
                ];
                for (xx, yy) in neighbours {
                    if xx < w && yy < h {
                        let q = b[[yy, xx]];
                        v = if n > 0 { v.max(q) } else { v.min(q) };
                    }
                }
                a[[y, x]] = v;
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn random_mask(w: usize, h: usize, seed: u64, density: u64) -> MaskImage {
        let mut s = seed | 1;
        MaskImage::from_shape_fn((h, w), |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if s % 100 < density { 255 } else { 0 }
        })
    }

    fn fast(m: &MaskImage, steps: &[i32]) -> MaskImage {
        let mut b = BitMask::from_mask_image(m);
        Morphology::new().apply(&mut b, steps);
        b.to_mask_image()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn cross_steps_equal_the_reference(w in 1usize..150, h in 1usize..40, n in -12i32..=12,
                                           seed: u64, density in 0u64..=100) {
            let m = random_mask(w, h, seed, density);
            prop_assert_eq!(fast(&m, &[n]), iterate_cross_reference(&m, n));
        }

        #[test]
        fn distance_transform_equals_the_reference(w in 1usize..140, h in 1usize..60,
                                                   n in DT_MIN_RADIUS as i32..=DT_MIN_RADIUS as i32 + 30,
                                                   erode: bool, seed: u64, density in 0u64..=30) {
            let n = if erode { -n } else { n };
            let m = random_mask(w, h, seed, if erode { 100 - density } else { density });
            prop_assert_eq!(fast(&m, &[n]), iterate_cross_reference(&m, n));
        }
    }

    #[test]
    fn both_methods_agree_across_the_switch_and_past_saturation() {
        let m = random_mask(300, 280, 7, 1);
        let mut morph = Morphology::new();
        for erode in [false, true] {
            for n in [DT_MIN_RADIUS - 1, DT_MIN_RADIUS, 100, 254, 255, 300] {
                let src = BitMask::from_mask_image(&m);
                let mut cross = src.clone();
                morph.cross_steps(&mut cross, n, erode);
                let mut dt = src.clone();
                morph.op(&mut dt, n, erode);
                assert_eq!(cross, dt, "n={n} erode={erode}");
            }
        }
    }

    #[test]
    fn borders_match_opencv_padding() {
        // A single set pixel in the corner dilates into a clipped diamond;
        // eroding a full image leaves it full (outside counts as set).
        let mut m = MaskImage::zeros((6, 9));
        m[[0, 0]] = 255;
        let d = fast(&m, &[3]);
        for ((y, x), &v) in d.indexed_iter() {
            assert_eq!(v == 255, x + y <= 3, "({x},{y})");
        }
        let full = MaskImage::from_elem((6, 9), 255);
        assert_eq!(fast(&full, &[-2]), full);
        assert_eq!(fast(&full, &[-(DT_MIN_RADIUS as i32)]), full);
        let empty = MaskImage::zeros((0, 5));
        assert_eq!(fast(&empty, &[3, -3]).dim(), (0, 5));
    }
}
