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

use super::bits::{BitMask, pack_row, unpack_row};
use super::simd::multiversion;
use crate::image::MaskImage;

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
    dist: Vec<u8>,
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
        let (w, h) = (m.width(), m.height());
        self.dist.clear();
        self.dist.resize(w * h, 0);
        self.bytes.clear();
        self.bytes.resize(w, 0);
        for buf in [&mut self.row_a, &mut self.row_b] {
            buf.clear();
            buf.resize(w + 2 * PAD, 255);
        }
        let bufs = DtBuffers {
            dist: &mut self.dist,
            row_a: &mut self.row_a,
            row_b: &mut self.row_b,
            bytes: &mut self.bytes,
        };
        #[cfg(target_arch = "x86_64")]
        {
            match super::simd::level() {
                // SAFETY: the CPU supports the features these were compiled for.
                super::simd::Level::Avx512 => return unsafe { distance_op_avx512(m, n as u8, erode, bufs) },
                super::simd::Level::Avx2 => return unsafe { distance_op_avx2(m, n as u8, erode, bufs) },
                super::simd::Level::Base => {}
            }
        }
        distance_op_generic(m, n as u8, erode, bufs)
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
    dist: &'a mut [u8],
    row_a: &'a mut [u8],
    row_b: &'a mut [u8],
    bytes: &'a mut [u8],
}

#[inline(always)]
fn distance_op_generic(m: &mut BitMask, n: u8, erode: bool, b: DtBuffers<'_>) {
    let (w, h) = (m.width(), m.height());
    let DtBuffers {
        dist,
        row_a,
        row_b,
        bytes,
    } = b;
    // Distance 0 on the seed pixels: set ones when dilating, zeros when eroding.
    // Down the columns: distance to the nearest seed above or at this row.
    for y in 0..h {
        unpack_row(m.row(y), bytes);
        let (done, rest) = dist.split_at_mut(y * w);
        let cur = &mut rest[..w];
        if y == 0 {
            for (d, &v) in cur.iter_mut().zip(bytes.iter()) {
                *d = if erode { v } else { !v };
            }
        } else {
            let prev = &done[(y - 1) * w..];
            for ((d, &v), &p) in cur.iter_mut().zip(bytes.iter()).zip(prev) {
                let init = if erode { v } else { !v };
                *d = init.min(p.saturating_add(1));
            }
        }
    }
    // Doubling steps 1, 2, 4, … until they reach n.
    let mut steps = [0usize; 8];
    let mut count = 0;
    let (mut s, mut reach) = (1usize, 0usize);
    while reach < n as usize {
        steps[count] = s;
        count += 1;
        reach += s;
        s *= 2;
    }
    for y in (0..h).rev() {
        // Up the columns: the nearest seed below.
        if y + 1 < h {
            let (head, tail) = dist.split_at_mut((y + 1) * w);
            let cur = &mut head[y * w..];
            for (d, &q) in cur.iter_mut().zip(&tail[..w]) {
                *d = (*d).min(q.saturating_add(1));
            }
        }
        // Along the row: min over x' of |x − x'| + column distance.
        row_a[PAD..PAD + w].copy_from_slice(&dist[y * w..(y + 1) * w]);
        let (mut a, mut bb) = (&mut *row_a, &mut *row_b);
        for &s in &steps[..count] {
            let add = s as u8;
            let (src, dst) = (&*a, &mut *bb);
            for x in PAD..PAD + w {
                let l = src[x - s].saturating_add(add);
                let r = src[x + s].saturating_add(add);
                dst[x] = src[x].min(l).min(r);
            }
            std::mem::swap(&mut a, &mut bb);
        }
        for (o, &d) in bytes.iter_mut().zip(&a[PAD..PAD + w]) {
            *o = ((d <= n) ^ erode) as u8;
        }
        pack_row(bytes, 0, m.row_mut(y));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi2")]
fn distance_op_avx512(m: &mut BitMask, n: u8, erode: bool, b: DtBuffers<'_>) {
    distance_op_generic(m, n, erode, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2")]
fn distance_op_avx2(m: &mut BitMask, n: u8, erode: bool, b: DtBuffers<'_>) {
    distance_op_generic(m, n, erode, b)
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
