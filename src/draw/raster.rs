//! Anti-aliased coverage rasterization into a reusable, frame-sized
//! coverage layer.
//!
//! Two rasterizers share one [`Coverage`] layer:
//! - strokes are unions of capsules (one per segment): the coverage of a
//!   pixel is `clamp(r + ½ − d)` where `d` is its distance to the centre
//!   line and `r` the half width (interpolated along each segment, so
//!   widths can taper). Taking the maximum over segments gives round joins
//!   and caps with no gaps and no double-darkened overlaps;
//! - fills use exact signed-area accumulation (as in font rasterizers) over
//!   the shape's bounding box, with the non-zero rule.
//!
//! Image coordinates put pixel centres at integers (OpenCV's convention):
//! pixel `(x, y)` covers `[x − ½, x + ½) × [y − ½, y + ½)`.
//!
//! The layer remembers which 8-pixel chunks of each row it touched, so
//! reading it back and clearing it costs what was drawn, not the frame size.
//! Everything is clipped to the frame first: non-finite or huge coordinates
//! never make a loop run long or an index go out of range.

use crate::geom::Vec2;
use crate::simd::Avx2;

/// Columns per chunk in [`ChunkDirty`].
pub(crate) const CHUNK: usize = 8;

/// Touched parts of a layer at the granularity of 8-pixel chunks of each
/// row: finer than one span per row (which, with drawings spread over the
/// frame, would cover whole rows), so compositing and clearing cost about
/// what was drawn.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChunkDirty {
    width: usize,
    words: usize,
    bits: Vec<u64>,
    y0: usize,
    y1: usize,
}

/// Calls `f(x0, x1)` for every run of set bits in a row of chunk `words`
/// (pixel columns, clipped to `width`), left to right.
fn runs(words: impl Iterator<Item = u64>, width: usize, mut f: impl FnMut(usize, usize)) {
    // The run being collected, in chunks: [start, end).
    let mut run: Option<(usize, usize)> = None;
    for (wi, word) in words.enumerate() {
        let mut bits = word;
        while bits != 0 {
            let s = bits.trailing_zeros() as usize;
            let ones = (!(bits >> s)).trailing_zeros() as usize;
            let len = ones.min(64 - s);
            let (a, b) = (wi * 64 + s, wi * 64 + s + len);
            run = match run {
                Some((ra, rb)) if rb == a => Some((ra, b)),
                Some((ra, rb)) => {
                    f(ra * CHUNK, (rb * CHUNK).min(width));
                    Some((a, b))
                }
                None => Some((a, b)),
            };
            bits = if s + len >= 64 {
                0
            } else {
                bits & (!0u64 << (s + len))
            };
        }
    }
    if let Some((ra, rb)) = run {
        f(ra * CHUNK, (rb * CHUNK).min(width));
    }
}

impl ChunkDirty {
    pub fn new(width: usize, height: usize) -> Self {
        let words = width.div_ceil(CHUNK).div_ceil(64);
        ChunkDirty {
            width,
            words,
            bits: vec![0; words * height],
            y0: height,
            y1: 0,
        }
    }

    /// Marks pixels `x0..x1` of row `y`.
    #[inline]
    pub fn add(&mut self, y: usize, x0: usize, x1: usize) {
        if x0 >= x1 {
            return;
        }
        let row = &mut self.bits[y * self.words..(y + 1) * self.words];
        for c in x0 / CHUNK..=(x1 - 1) / CHUNK {
            row[c / 64] |= 1 << (c % 64);
        }
        self.y0 = self.y0.min(y);
        self.y1 = self.y1.max(y + 1);
    }

    pub fn is_empty(&self) -> bool {
        self.y0 >= self.y1
    }

    /// Whether no chunk of pixels `x0..x1` of row `y` is marked.
    #[inline]
    pub fn is_clear(&self, y: usize, x0: usize, x1: usize) -> bool {
        if x0 >= x1 || y < self.y0 || y >= self.y1 {
            return true;
        }
        let row = &self.bits[y * self.words..(y + 1) * self.words];
        (x0 / CHUNK..=(x1 - 1) / CHUNK).all(|c| row[c / 64] & (1 << (c % 64)) == 0)
    }

    /// Calls `f(y, x0, x1)` for every run of marked chunks, top to bottom.
    pub fn for_each_span(&self, mut f: impl FnMut(usize, usize, usize)) {
        for y in self.y0..self.y1.max(self.y0) {
            let row = &self.bits[y * self.words..(y + 1) * self.words];
            runs(row.iter().copied(), self.width, |x0, x1| f(y, x0, x1));
        }
    }

    /// Calls `f(y, x0, x1)` for every run of chunks marked in row `y` or
    /// `y + 1`, for even `y` from top to bottom: the pixels of the 2×2
    /// blocks a 4:2:0 picture must convert again.
    pub fn for_each_pair_span(&self, mut f: impl FnMut(usize, usize, usize)) {
        let height = self.bits.len() / self.words.max(1);
        for y in (self.y0 & !1..self.y1.max(self.y0)).step_by(2) {
            let a = &self.bits[y * self.words..(y + 1) * self.words];
            let b = if y + 1 < height {
                &self.bits[(y + 1) * self.words..(y + 2) * self.words]
            } else {
                a
            };
            runs(a.iter().zip(b).map(|(p, q)| p | q), self.width, |x0, x1| {
                f(y, x0, x1)
            });
        }
    }

    pub fn reset(&mut self) {
        let (y0, y1) = (self.y0, self.y1.max(self.y0));
        self.bits[y0 * self.words..y1 * self.words].fill(0);
        self.y0 = self.bits.len() / self.words.max(1);
        self.y1 = 0;
    }
}

/// A frame-sized 8-bit coverage layer (0 = untouched, 255 = fully covered)
/// that one primitive is rasterized into before being blended.
#[derive(Clone, Debug)]
pub struct Coverage {
    width: usize,
    height: usize,
    cov: Vec<u8>,
    pub(crate) dirty: ChunkDirty,
    /// Scratch for area accumulation.
    acc: Vec<f32>,
    /// Scratch for one row of fill coverage.
    line: Vec<u8>,
}

impl Coverage {
    /// An empty layer of `width × height` pixels.
    pub fn new(width: usize, height: usize) -> Self {
        Coverage {
            width,
            height,
            cov: vec![0; width * height],
            dirty: ChunkDirty::new(width, height),
            acc: Vec::new(),
            line: Vec::new(),
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// Coverage of pixel `(x, y)`, 0 outside the layer.
    pub fn get(&self, x: usize, y: usize) -> u8 {
        if x < self.width && y < self.height {
            self.cov[y * self.width + x]
        } else {
            0
        }
    }

    /// Whether nothing has been drawn since the last [`Coverage::clear`].
    pub fn is_empty(&self) -> bool {
        self.dirty.is_empty()
    }

    /// Visits every touched pixel with its coverage and clears it.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(usize, usize, usize, &[u8])) {
        let w = self.width;
        let cov = &mut self.cov;
        self.dirty.for_each_span(|y, x0, x1| {
            let row = &mut cov[y * w + x0..y * w + x1];
            f(y, x0, x1, row);
            row.fill(0);
        });
        self.dirty.reset();
    }

    /// Forgets everything drawn.
    pub fn clear(&mut self) {
        self.drain(|_, _, _, _| {});
    }

    /// Adds a stroke along `pts` with half width `half_width(i)` at vertex
    /// `i` (pixels), closing it back to the first point when `closed`.
    /// A single point (or a zero-length polyline) gives a round dot.
    pub fn stroke(&mut self, pts: &[Vec2], closed: bool, half_width: impl Fn(usize) -> f64) {
        let n = pts.len();
        if n == 0 {
            return;
        }
        if n == 1 {
            self.segment(pts[0], pts[0], half_width(0), half_width(0));
            return;
        }
        for i in 0..n - 1 {
            self.segment(pts[i], pts[i + 1], half_width(i), half_width(i + 1));
        }
        if closed && n > 2 && pts[n - 1] != pts[0] {
            self.segment(pts[n - 1], pts[0], half_width(n - 1), half_width(0));
        }
    }

    /// Adds a capsule around segment `a → b` whose half width goes from
    /// `ra` to `rb`. Non-finite input or negative widths draw nothing.
    pub fn segment(&mut self, a: Vec2, b: Vec2, ra: f64, rb: f64) {
        if !(a.is_finite() && b.is_finite() && ra.is_finite() && rb.is_finite()) || ra < 0.0 || rb < 0.0 {
            return;
        }
        if self.width == 0 || self.height == 0 {
            return;
        }
        // How far from the centre line coverage reaches.
        let reach = ra.max(rb).max(0.5) + 0.5;
        let (w, h) = (self.width as f64, self.height as f64);
        let Some((a, b, t0, t1)) = clip_segment(a, b, -reach - 1.0, w + reach, -reach - 1.0, h + reach)
        else {
            return;
        };
        let (ra, rb) = (ra + (rb - ra) * t0, ra + (rb - ra) * t1);
        let d = b - a;
        let len2 = d.dot(d);
        let inv_len2 = if len2 > 1e-12 { 1.0 / len2 } else { 0.0 };
        let (ymin, ymax) = (a.y.min(b.y), a.y.max(b.y));
        let y_lo = (ymin - reach).ceil().max(0.0) as usize;
        let y_hi = ((ymax + reach).floor().min(h - 1.0)).max(-1.0);
        if y_hi < 0.0 {
            return;
        }
        let rows = CapsuleRows {
            a,
            b,
            reach,
            inv_len2,
            ra,
            rb,
            y_lo,
            y_hi: y_hi as usize,
        };
        capsule_rows(Avx2::detect(), &mut self.cov, &mut self.dirty, self.width, rows);
    }

    /// Adds the area inside `contours` (non-zero rule; contours are closed
    /// implicitly) with exact anti-aliased coverage.
    pub fn fill(&mut self, contours: &[Vec<Vec2>]) {
        let mut cov = std::mem::take(&mut self.cov);
        let mut dirty = std::mem::take(&mut self.dirty);
        let width = self.width;
        self.fill_spans(contours, |y, x0, row| {
            let dst = &mut cov[y * width + x0..y * width + x0 + row.len()];
            for (d, &v) in dst.iter_mut().zip(row) {
                *d = (*d).max(v);
            }
            dirty.add(y, x0, x0 + row.len());
        });
        self.cov = cov;
        self.dirty = dirty;
    }

    /// Rasterizes the area inside `contours` like [`Coverage::fill`] but
    /// hands each row's coverage to `f(y, x0, coverage)` instead of storing
    /// it (rows trimmed to their non-zero part), so a fill can be blended
    /// straight into its destination. The layer itself is not touched.
    pub fn fill_spans(&mut self, contours: &[Vec<Vec2>], f: impl FnMut(usize, usize, &[u8])) {
        self.fill_spans_with(|| contours.iter().map(Vec::as_slice), f);
    }

    /// [`Coverage::fill_spans`] of contours held one after another in
    /// `points`, each ending before the next of `ends` (a map's thousands
    /// of rectangles without a vector each).
    pub fn fill_spans_flat(&mut self, points: &[Vec2], ends: &[usize], f: impl FnMut(usize, usize, &[u8])) {
        let contours = || {
            ends.iter().scan(0usize, |start, &end| {
                let c = points.get(*start..end).unwrap_or(&[]);
                *start = end;
                Some(c)
            })
        };
        self.fill_spans_with(contours, f);
    }

    /// The fill of the contours `contours()` gives (asked twice: for the
    /// bounding box, then the edges).
    fn fill_spans_with<'c, I: Iterator<Item = &'c [Vec2]>>(
        &mut self,
        contours: impl Fn() -> I,
        mut f: impl FnMut(usize, usize, &[u8]),
    ) {
        // Bounding box of finite points, in area coordinates (pixel x covers [x, x+1)).
        let (mut x0, mut y0, mut x1, mut y1) =
            (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in contours().flatten() {
            if !p.is_finite() {
                return;
            }
            x0 = x0.min(p.x + 0.5);
            y0 = y0.min(p.y + 0.5);
            x1 = x1.max(p.x + 0.5);
            y1 = y1.max(p.y + 0.5);
        }
        let (w, h) = (self.width as f64, self.height as f64);
        let bx0 = x0.floor().clamp(0.0, w);
        let by0 = y0.floor().clamp(0.0, h);
        let bx1 = x1.ceil().clamp(0.0, w);
        let by1 = y1.ceil().clamp(0.0, h);
        if !(bx1 > bx0 && by1 > by0) {
            return;
        }
        let (bw, bh) = ((bx1 - bx0) as usize, (by1 - by0) as usize);
        let stride = bw + 2;
        let mut acc = std::mem::take(&mut self.acc);
        acc.clear();
        acc.resize(stride * bh, 0.0);
        for c in contours() {
            let n = c.len();
            if n < 3 {
                continue;
            }
            for i in 0..n {
                let (p, q) = (c[i], c[(i + 1) % n]);
                let p = Vec2::new(p.x + 0.5 - bx0, p.y + 0.5 - by0);
                let q = Vec2::new(q.x + 0.5 - bx0, q.y + 0.5 - by0);
                accumulate_clipped(&mut acc, stride, bw as f64, bh as f64, p, q);
            }
        }
        let (ox, oy) = (bx0 as usize, by0 as usize);
        let mut line = std::mem::take(&mut self.line);
        line.resize(bw, 0);
        for ry in 0..bh {
            let row = &acc[ry * stride..ry * stride + bw];
            let mut sum = 0.0f32;
            for (&a, v) in row.iter().zip(line.iter_mut()) {
                sum += a;
                *v = (sum.abs().min(1.0) * 255.0 + 0.5) as u8;
            }
            let first = line.iter().position(|&v| v != 0);
            let last = line.iter().rposition(|&v| v != 0);
            if let (Some(a), Some(b)) = (first, last) {
                f(oy + ry, ox + a, &line[a..=b]);
            }
        }
        self.line = line;
        self.acc = acc;
    }

    /// Adds a coverage bitmap (`w × h`, row-major) with its top-left pixel
    /// at `(x, y)`, clipped to the layer.
    pub fn stamp(&mut self, x: i64, y: i64, w: usize, h: usize, bitmap: &[u8]) {
        if bitmap.len() < w * h {
            return;
        }
        let (lw, lh) = (self.width as i64, self.height as i64);
        let sx0 = (-x).clamp(0, w as i64) as usize;
        let sy0 = (-y).clamp(0, h as i64) as usize;
        let sx1 = (lw - x).clamp(0, w as i64) as usize;
        let sy1 = (lh - y).clamp(0, h as i64) as usize;
        if sx0 >= sx1 || sy0 >= sy1 {
            return;
        }
        for sy in sy0..sy1 {
            let ly = (y + sy as i64) as usize;
            let lx0 = (x + sx0 as i64) as usize;
            let src = &bitmap[sy * w + sx0..sy * w + sx1];
            let dst = &mut self.cov[ly * self.width + lx0..ly * self.width + lx0 + src.len()];
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = (*d).max(s);
            }
            self.dirty.add(ly, lx0, lx0 + src.len());
        }
    }
}

/// A clipped segment's capsule, row by row (see [`Coverage::segment`]).
#[derive(Clone, Copy)]
struct CapsuleRows {
    /// Start and end of the centre line.
    a: Vec2,
    b: Vec2,
    /// How far from the centre line coverage reaches.
    reach: f64,
    /// `1 / |d|²` (0 for a point).
    inv_len2: f64,
    /// Half widths at the two ends.
    ra: f64,
    rb: f64,
    /// The rows it may cover, in the picture.
    y_lo: usize,
    y_hi: usize,
}

/// The arguments of a row kernel: the row, then `px0, py, dx, dy, inv,
/// r0, dr` (see [`capsule_row_generic`]).
type RowArgs = (f32, f32, f32, f32, f32, f32, f32);

/// Maxes the capsule's coverage into `cov` (`width` pixels a row) with
/// `kernel` for each row, and marks what it touched in `dirty`.
#[inline(always)]
fn capsule_rows_with(
    cov: &mut [u8],
    dirty: &mut ChunkDirty,
    width: usize,
    c: CapsuleRows,
    mut kernel: impl FnMut(&mut [u8], RowArgs),
) {
    let CapsuleRows {
        a,
        b,
        reach,
        inv_len2,
        ra,
        rb,
        y_lo,
        y_hi,
    } = c;
    let w = width as f64;
    let d = b - a;
    for y in y_lo..=y_hi {
        let yc = y as f64;
        // The part of the centre line within `reach` of this row bounds
        // the pixels worth testing.
        let (xl, xr) = if d.y.abs() < 1e-9 {
            (a.x.min(b.x), a.x.max(b.x))
        } else {
            let ta = (yc - reach - a.y) / d.y;
            let tb = (yc + reach - a.y) / d.y;
            let (lo, hi) = (ta.min(tb).max(0.0), ta.max(tb).min(1.0));
            if lo > hi {
                continue;
            }
            let (xa, xb) = (a.x + d.x * lo, a.x + d.x * hi);
            (xa.min(xb), xa.max(xb))
        };
        let x_lo = (xl - reach).ceil().max(0.0);
        let x_hi = (xr + reach).floor().min(w - 1.0);
        if x_hi < x_lo {
            continue;
        }
        let (x_lo, x_hi) = (x_lo as usize, x_hi as usize);
        // f32 from here: coordinates are relative to the clipped start,
        // so within a few thousand pixels.
        let py = (yc - a.y) as f32;
        let (dx, dy, inv) = (d.x as f32, d.y as f32, inv_len2 as f32);
        let (r0, dr) = (ra as f32, (rb - ra) as f32);
        let px0 = (x_lo as f64 - a.x) as f32;
        let row = &mut cov[y * width + x_lo..=y * width + x_hi];
        kernel(row, (px0, py, dx, dy, inv, r0, dr));
        dirty.add(y, x_lo, x_hi + 1);
    }
}

/// Maxes the capsule's coverage into `cov` and marks what it touched in
/// `dirty`: with AVX2, the whole loop is built for it (rounding to whole
/// pixels in registers) and each row is eight pixels a step
/// ([`capsule_row_avx2`]); the results are the same either way.
fn capsule_rows(cpu: Option<Avx2>, cov: &mut [u8], dirty: &mut ChunkDirty, width: usize, c: CapsuleRows) {
    #[cfg(target_arch = "x86_64")]
    if cpu.is_some() {
        // SAFETY: an `Avx2` exists only when the CPU supports AVX2.
        unsafe { capsule_rows_avx2(cov, dirty, width, c) };
        return;
    }
    let _ = cpu;
    capsule_rows_with(cov, dirty, width, c, |row, (px0, py, dx, dy, inv, r0, dr)| {
        capsule_row_generic(row, px0, py, dx, dy, inv, r0, dr)
    });
}

/// [`capsule_rows`] built for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn capsule_rows_avx2(cov: &mut [u8], dirty: &mut ChunkDirty, width: usize, c: CapsuleRows) {
    capsule_rows_with(cov, dirty, width, c, |row, (px0, py, dx, dy, inv, r0, dr)| {
        // SAFETY: this runs only inside `capsule_rows_avx2`, which is only
        // called when the CPU supports AVX2.
        unsafe { capsule_row_avx2(row, px0, py, dx, dy, inv, r0, dr) }
    });
}

/// [`capsule_row_generic`] eight pixels a step, with the same operations
/// in the same order (no fused multiply-adds), so the same bytes: each
/// step's coverage is packed to bytes with saturation (what `as u8` does)
/// and maxed into the row; a last step shorter than eight is maxed in
/// byte by byte.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn capsule_row_avx2(row: &mut [u8], px0: f32, py: f32, dx: f32, dy: f32, inv: f32, r0: f32, dr: f32) {
    use std::arch::x86_64::*;
    let lanes = _mm256_setr_ps(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0);
    let (zero, half, one) = (_mm256_setzero_ps(), _mm256_set1_ps(0.5), _mm256_set1_ps(1.0));
    let (two, full) = (_mm256_set1_ps(2.0), _mm256_set1_ps(255.0));
    let (vpx0, vpy) = (_mm256_set1_ps(px0), _mm256_set1_ps(py));
    let (vdx, vdy, vinv) = (_mm256_set1_ps(dx), _mm256_set1_ps(dy), _mm256_set1_ps(inv));
    let (vr0, vdr) = (_mm256_set1_ps(r0), _mm256_set1_ps(dr));
    let pydy = _mm256_mul_ps(vpy, vdy);
    let n = row.len();
    let mut i = 0;
    while i < n {
        // `px0 + i as f32` per pixel (whole numbers below 2²⁴ are exact).
        let px = _mm256_add_ps(vpx0, _mm256_add_ps(_mm256_set1_ps(i as f32), lanes));
        let t = _mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(px, vdx), pydy), vinv);
        let t = _mm256_min_ps(_mm256_max_ps(t, zero), one);
        let qx = _mm256_sub_ps(px, _mm256_mul_ps(vdx, t));
        let qy = _mm256_sub_ps(vpy, _mm256_mul_ps(vdy, t));
        let dist = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(qx, qx), _mm256_mul_ps(qy, qy)));
        let r = _mm256_add_ps(vr0, _mm256_mul_ps(vdr, t));
        let fade = _mm256_min_ps(_mm256_mul_ps(two, r), one);
        let edge = _mm256_sub_ps(_mm256_add_ps(_mm256_max_ps(r, half), half), dist);
        let c = _mm256_mul_ps(fade, _mm256_min_ps(_mm256_max_ps(edge, zero), one));
        let v = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(c, full), half));
        // Eight 32-bit values to eight bytes, saturating, in order.
        let w16 = _mm256_packus_epi32(v, v);
        let w8 = _mm256_packus_epi16(w16, w16);
        let bytes = _mm_unpacklo_epi32(_mm256_castsi256_si128(w8), _mm256_extracti128_si256::<1>(w8));
        if i + 8 <= n {
            // SAFETY: bytes `i..i + 8` are in `row`.
            unsafe {
                let p = row.as_mut_ptr().add(i) as *mut __m128i;
                let old = _mm_loadl_epi64(p);
                _mm_storel_epi64(p, _mm_max_epu8(old, bytes));
            }
        } else {
            let mut tail = [0u8; 8];
            // SAFETY: `tail` is eight bytes.
            unsafe { _mm_storel_epi64(tail.as_mut_ptr() as *mut __m128i, bytes) };
            for (d, &v) in row[i..].iter_mut().zip(&tail) {
                *d = (*d).max(v);
            }
        }
        i += 8;
    }
}

/// Coverage of one row of pixels by a capsule, maxed into `row`: pixel
/// `i` is at `(px0 + i, py)` relative to the segment start, the segment is
/// `(dx, dy)` with `inv = 1 / |d|²`, the half width `r0 + dr · t`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn capsule_row_generic(row: &mut [u8], px0: f32, py: f32, dx: f32, dy: f32, inv: f32, r0: f32, dr: f32) {
    for (i, v) in row.iter_mut().enumerate() {
        let px = px0 + i as f32;
        let t = ((px * dx + py * dy) * inv).clamp(0.0, 1.0);
        let (qx, qy) = (px - dx * t, py - dy * t);
        let dist = (qx * qx + qy * qy).sqrt();
        let r = r0 + dr * t;
        // Lines thinner than a pixel fade instead of thinning.
        let fade = (2.0 * r).min(1.0);
        let c = fade * (r.max(0.5) + 0.5 - dist).clamp(0.0, 1.0);
        *v = (*v).max((c * 255.0 + 0.5) as u8);
    }
}

/// The part of segment `a → b` inside the box (Liang–Barsky), as clipped
/// end points and their parameters along `a → b`; `None` when it misses.
/// Cut points are computed from the end nearer to the cut, so a far-away
/// end point does not cost precision where the segment is visible.
fn clip_segment(a: Vec2, b: Vec2, x0: f64, x1: f64, y0: f64, y1: f64) -> Option<(Vec2, Vec2, f64, f64)> {
    let d = b - a;
    let (mut enter, mut exit) = ((0.0f64, 4usize), (1.0f64, 4usize));
    for (k, (p, q)) in [
        (-d.x, a.x - x0),
        (d.x, x1 - a.x),
        (-d.y, a.y - y0),
        (d.y, y1 - a.y),
    ]
    .into_iter()
    .enumerate()
    {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                if r > enter.0 {
                    enter = (r, k);
                }
            } else if r < exit.0 {
                exit = (r, k);
            }
        }
    }
    if !(enter.0 <= exit.0 && enter.0.is_finite() && exit.0.is_finite()) {
        return None;
    }
    let cut = |(_, k): (f64, usize), end: Vec2| match k {
        0 => at_x(a, b, x0),
        1 => at_x(a, b, x1),
        2 => at_y(a, b, y0),
        3 => at_y(a, b, y1),
        _ => end,
    };
    let (pa, pb) = (cut(enter, a), cut(exit, b));
    (pa.is_finite() && pb.is_finite()).then_some((pa, pb, enter.0, exit.0))
}

/// The point of line `p q` with `x = xs` (`p.x ≠ q.x`), from the nearer end.
fn at_x(p: Vec2, q: Vec2, xs: f64) -> Vec2 {
    let e = if (p.x - xs).abs() <= (q.x - xs).abs() {
        p
    } else {
        q
    };
    Vec2::new(xs, e.y + (xs - e.x) / (q.x - p.x) * (q.y - p.y))
}

/// The point of line `p q` with `y = ys` (`p.y ≠ q.y`), from the nearer end.
fn at_y(p: Vec2, q: Vec2, ys: f64) -> Vec2 {
    let e = if (p.y - ys).abs() <= (q.y - ys).abs() {
        p
    } else {
        q
    };
    Vec2::new(e.x + (ys - e.y) / (q.y - p.y) * (q.x - p.x), ys)
}

/// Accumulates edge `p → q` (box-local area coordinates) into `acc`, after
/// clipping it to the rows `0..bh` and folding the parts left and right of
/// the box onto its sides (which keeps the winding right inside it).
fn accumulate_clipped(acc: &mut [f32], stride: usize, bw: f64, bh: f64, p: Vec2, q: Vec2) {
    if p.y == q.y {
        return;
    }
    // Clip to the row band.
    let (lo, hi) = if p.y < q.y { (p, q) } else { (q, p) };
    if hi.y <= 0.0 || lo.y >= bh {
        return;
    }
    let band = |e: Vec2| {
        if e.y < 0.0 {
            at_y(p, q, 0.0)
        } else if e.y > bh {
            at_y(p, q, bh)
        } else {
            e
        }
    };
    let (p, q) = (band(p), band(q));
    // Split where the edge crosses the box's left and right sides, then clamp x.
    let mut pts = [p, p, p, q];
    let mut n = 1;
    let sides = if p.x <= q.x { [0.0, bw] } else { [bw, 0.0] };
    for xs in sides {
        if (p.x - xs) * (q.x - xs) < 0.0 {
            pts[n] = at_x(p, q, xs);
            n += 1;
        }
    }
    pts[n] = q;
    for k in 0..n {
        let a = Vec2::new(pts[k].x.clamp(0.0, bw), pts[k].y);
        let b = Vec2::new(pts[k + 1].x.clamp(0.0, bw), pts[k + 1].y);
        accumulate_line(acc, stride, bh as usize, a, b);
    }
}

/// Signed-area accumulation of one edge with `0 ≤ x ≤ stride − 2` and
/// `0 ≤ y ≤ rows`: afterwards a running sum along each row gives the
/// winding-weighted coverage of every pixel.
fn accumulate_line(acc: &mut [f32], stride: usize, rows: usize, p: Vec2, q: Vec2) {
    if p.y == q.y {
        return;
    }
    let (dir, p, q) = if p.y < q.y {
        (1.0f32, p, q)
    } else {
        (-1.0f32, q, p)
    };
    let (p0x, p0y, p1x, p1y) = (p.x as f32, p.y as f32, q.x as f32, q.y as f32);
    let dxdy = (p1x - p0x) / (p1y - p0y);
    let mut x = p0x.clamp(0.0, (stride - 2) as f32);
    let y_start = p0y.max(0.0) as usize;
    let y_end = (p1y.ceil() as usize).min(rows);
    let max_x = (stride - 1) as i64;
    let max_xf = (stride - 2) as f32;
    for y in y_start..y_end {
        let line = y * stride;
        let dy = ((y + 1) as f32).min(p1y) - (y as f32).max(p0y);
        if dy <= 0.0 {
            continue;
        }
        // Clamped: rounding must not step outside the box.
        let xnext = (x + dxdy * dy).clamp(0.0, max_xf);
        let d = dy * dir;
        let (x0, x1) = if x < xnext { (x, xnext) } else { (xnext, x) };
        let x0floor = x0.floor();
        let x0i = (x0floor as i64).clamp(0, max_x);
        let x1ceil = x1.ceil();
        let x1i = (x1ceil as i64).clamp(0, max_x);
        let at = |i: i64| line + i as usize;
        if x1i <= x0i + 1 {
            let xmf = 0.5 * (x + xnext) - x0floor;
            acc[at(x0i)] += d - d * xmf;
            if x0i < max_x {
                acc[at(x0i + 1)] += d * xmf;
            }
        } else {
            let s = (x1 - x0).recip();
            let x0f = x0 - x0floor;
            let a0 = 0.5 * s * (1.0 - x0f) * (1.0 - x0f);
            let x1f = x1 - x1ceil + 1.0;
            let am = 0.5 * s * x1f * x1f;
            acc[at(x0i)] += d * a0;
            if x1i == x0i + 2 {
                acc[at(x0i + 1)] += d * (1.0 - a0 - am);
            } else {
                let a1 = s * (1.5 - x0f);
                acc[at(x0i + 1)] += d * (a1 - a0);
                for xi in x0i + 2..x1i - 1 {
                    acc[at(xi)] += d * s;
                }
                let a2 = a1 + (x1i - x0i - 3) as f32 * s;
                acc[at(x1i - 1)] += d * (1.0 - a2 - am);
            }
            acc[at(x1i)] += d * am;
        }
        x = xnext;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 row kernel gives the scalar kernel's bytes: every length
    /// up to five steps, over rows already holding coverage, for segments
    /// of every direction, length (a point included) and half width
    /// (thinner than a pixel included), the row near or far from them.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx2_row_kernel_matches_the_scalar_one() {
        let Some(_) = Avx2::detect() else {
            return;
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut differ = 0;
        for case in 0..3000 {
            let n = case % 41;
            let (dx, dy) = if case % 7 == 0 {
                (0.0, 0.0)
            } else {
                (60.0 * rnd() - 30.0, 60.0 * rnd() - 30.0)
            };
            let len2 = dx * dx + dy * dy;
            let inv = if len2 > 1e-12 { 1.0 / len2 } else { 0.0 };
            let (r0, r1) = (4.0 * rnd(), if case % 3 == 0 { 0.3 * rnd() } else { 4.0 * rnd() });
            let (px0, py) = (40.0 * rnd() - 30.0, 12.0 * rnd() - 6.0);
            let start: Vec<u8> = (0..n)
                .map(|_| if rnd() < 0.5 { 0 } else { (rnd() * 255.0) as u8 })
                .collect();
            let mut slow = start.clone();
            capsule_row_generic(&mut slow, px0, py, dx, dy, inv, r0, r1 - r0);
            let mut fast = start.clone();
            // SAFETY: AVX2 was detected above.
            unsafe { capsule_row_avx2(&mut fast, px0, py, dx, dy, inv, r0, r1 - r0) };
            assert_eq!(
                fast, slow,
                "case {case}: n {n} d ({dx}, {dy}) r {r0}..{r1} at ({px0}, {py})"
            );
            differ += usize::from(slow != start);
        }
        // The cases draw something, not only leave rows as they were.
        assert!(differ > 1000, "only {differ} cases drew");
    }

    fn total(c: &Coverage) -> f64 {
        c.cov.iter().map(|&v| v as f64 / 255.0).sum()
    }

    #[test]
    fn filled_square_has_exact_area_and_soft_edges() {
        let mut c = Coverage::new(40, 30);
        // A 10.5 × 7.25 axis-aligned rectangle at fractional position.
        let r = vec![
            Vec2::new(5.25, 4.0),
            Vec2::new(15.75, 4.0),
            Vec2::new(15.75, 11.25),
            Vec2::new(5.25, 11.25),
        ];
        c.fill(&[r]);
        assert!((total(&c) - 10.5 * 7.25).abs() < 0.2, "{}", total(&c));
        assert_eq!(c.get(10, 8), 255);
        // Pixel 5 covers [4.5, 5.5): the edge at 5.25 leaves a quarter.
        assert!((c.get(5, 8) as i32 - 64).abs() <= 2, "{}", c.get(5, 8));
        assert_eq!(c.get(20, 8), 0);
    }

    #[test]
    fn fill_orientation_does_not_matter_and_overlaps_do_not_add() {
        let sq = |x: f64, y: f64, s: f64| {
            vec![
                Vec2::new(x, y),
                Vec2::new(x + s, y),
                Vec2::new(x + s, y + s),
                Vec2::new(x, y + s),
            ]
        };
        let mut a = Coverage::new(30, 30);
        let mut rev = sq(4.0, 4.0, 10.0);
        rev.reverse();
        a.fill(&[rev]);
        let mut b = Coverage::new(30, 30);
        b.fill(&[sq(4.0, 4.0, 10.0), sq(6.0, 6.0, 4.0)]);
        assert_eq!(a.cov, b.cov);
    }

    #[test]
    fn fill_clips_shapes_larger_than_the_frame() {
        let mut c = Coverage::new(20, 10);
        let big = vec![
            Vec2::new(-1e9, -1e9),
            Vec2::new(1e9, -1e9),
            Vec2::new(1e9, 1e9),
            Vec2::new(-1e9, 1e9),
        ];
        c.fill(&[big]);
        assert!(c.cov.iter().all(|&v| v == 255));
        // Half-plane x < 10 given by a huge triangle.
        let mut c = Coverage::new(20, 10);
        c.fill(&[vec![
            Vec2::new(9.5, -1e7),
            Vec2::new(9.5, 1e7),
            Vec2::new(-1e12, 0.0),
        ]]);
        assert_eq!(c.get(0, 5), 255);
        assert_eq!(c.get(9, 5), 255);
        assert_eq!(c.get(10, 5), 0);
    }

    #[test]
    fn horizontal_stroke_has_the_requested_width() {
        let mut c = Coverage::new(50, 20);
        c.stroke(&[Vec2::new(10.0, 10.0), Vec2::new(40.0, 10.0)], false, |_| 1.5);
        // 3 px wide: rows 9, 10, 11 full; the rows beyond get nothing.
        for y in 9..=11 {
            assert_eq!(c.get(25, y), 255, "row {y}");
        }
        assert_eq!(c.get(25, 8), 0);
        assert_eq!(c.get(25, 12), 0);
        // Round cap reaches 1.5 px beyond the end.
        assert!(c.get(41, 10) > 200 && c.get(43, 10) == 0);
    }

    #[test]
    fn polyline_join_has_no_gap_and_no_doubling() {
        let mut c = Coverage::new(60, 60);
        let pts = [
            Vec2::new(10.0, 10.0),
            Vec2::new(40.0, 10.0),
            Vec2::new(40.0, 40.0),
        ];
        c.stroke(&pts, false, |_| 3.0);
        // The outer corner of the join is round: covered up to radius 3.
        assert_eq!(c.get(42, 9), 255);
        assert!((c.get(42, 8) as i32 - 171).abs() <= 1);
        assert_eq!(c.get(43, 7), 0);
    }

    #[test]
    fn thin_strokes_fade_and_hostile_input_draws_nothing() {
        let mut c = Coverage::new(30, 30);
        c.stroke(&[Vec2::new(2.0, 15.0), Vec2::new(28.0, 15.0)], false, |_| 0.125);
        assert!((c.get(15, 15) as i32 - 64).abs() <= 1, "{}", c.get(15, 15));
        let mut c = Coverage::new(30, 30);
        c.segment(Vec2::new(f64::NAN, 1.0), Vec2::new(3.0, 3.0), 1.0, 1.0);
        c.segment(Vec2::new(1.0, 1.0), Vec2::new(f64::INFINITY, 3.0), 1.0, 1.0);
        c.segment(Vec2::new(1.0, 1.0), Vec2::new(3.0, 3.0), -1.0, 1.0);
        c.segment(Vec2::new(1e300, -1e300), Vec2::new(-1e300, 1e300), 1.0, 1.0);
        c.fill(&[vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(f64::NAN, 5.0),
            Vec2::new(5.0, 5.0),
        ]]);
        let diag = c.cov.iter().filter(|&&v| v > 0).count();
        // Only the huge anti-diagonal crosses the frame: a 2 px wide band.
        assert!(diag > 0 && diag < 200, "{diag}");
    }

    #[test]
    fn drain_clears_only_what_was_touched() {
        let mut c = Coverage::new(100, 100);
        c.segment(Vec2::new(10.0, 10.0), Vec2::new(20.0, 12.0), 2.0, 2.0);
        let mut seen = 0usize;
        c.drain(|_, _, _, row| seen += row.iter().filter(|&&v| v > 0).count());
        assert!(seen > 30);
        assert!(c.cov.iter().all(|&v| v == 0));
        assert!(c.is_empty());
    }

    #[test]
    fn chunk_dirty_merges_runs_and_resets() {
        let mut d = ChunkDirty::new(100, 3);
        d.add(1, 5, 6);
        d.add(1, 40, 70);
        d.add(2, 99, 100);
        let mut spans = Vec::new();
        d.for_each_span(|y, a, b| spans.push((y, a, b)));
        assert_eq!(spans, vec![(1, 0, 8), (1, 40, 72), (2, 96, 100)]);
        d.reset();
        assert!(d.is_empty());
        let mut n = 0;
        d.for_each_span(|_, _, _| n += 1);
        assert_eq!(n, 0);
        let mut wide = ChunkDirty::new(5000, 1);
        wide.add(0, 500, 1030);
        wide.add(0, 1020, 2200);
        wide.add(0, 4990, 5000);
        let mut spans = Vec::new();
        wide.for_each_span(|y, a, b| spans.push((y, a, b)));
        assert_eq!(spans, vec![(0, 496, 2200), (0, 4984, 5000)]);
    }

    #[test]
    fn stamp_clips_at_every_side() {
        let mut c = Coverage::new(10, 10);
        let bm = vec![200u8; 16];
        c.stamp(-2, -2, 4, 4, &bm);
        c.stamp(8, 8, 4, 4, &bm);
        c.stamp(100, 0, 4, 4, &bm);
        assert_eq!(c.get(0, 0), 200);
        assert_eq!(c.get(1, 1), 200);
        assert_eq!(c.get(2, 2), 0);
        assert_eq!(c.get(9, 9), 200);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn shoelace(p: &[Vec2]) -> f64 {
            let n = p.len();
            (0..n)
                .map(|i| p[i].x * p[(i + 1) % n].y - p[(i + 1) % n].x * p[i].y)
                .sum::<f64>()
                / 2.0
        }

        fn coord() -> impl Strategy<Value = f64> {
            prop_oneof![
                4 => -1e4..1e4f64,
                1 => Just(f64::NAN),
                1 => Just(f64::INFINITY),
                1 => Just(-1e300),
                1 => Just(1e300),
                1 => -1e12..1e12f64,
            ]
        }

        proptest! {
            /// Exact area coverage: a triangle inside the frame covers its area.
            #[test]
            fn fill_covers_the_triangle_area(
                pts in proptest::collection::vec((2.0..78.0f64, 2.0..58.0f64), 3)
            ) {
                let tri: Vec<Vec2> = pts.iter().map(|&(x, y)| Vec2::new(x, y)).collect();
                let mut c = Coverage::new(80, 60);
                c.fill(std::slice::from_ref(&tri));
                let perimeter: f64 = (0..3).map(|i| (tri[(i + 1) % 3] - tri[i]).length()).sum();
                let area = shoelace(&tri).abs();
                prop_assert!((total(&c) - area).abs() <= 0.01 * perimeter + 0.5,
                    "covered {} area {}", total(&c), area);
            }

            /// A stroke covers its capsule: full inside, nothing beyond reach,
            /// total close to the capsule's area.
            #[test]
            fn stroke_matches_the_capsule(
                ax in 10.0..90.0f64, ay in 10.0..70.0f64,
                bx in 10.0..90.0f64, by in 10.0..70.0f64,
                r in 0.5..6.0f64,
            ) {
                let (a, b) = (Vec2::new(ax, ay), Vec2::new(bx, by));
                let mut c = Coverage::new(100, 80);
                c.segment(a, b, r, r);
                let d = b - a;
                let len = d.length();
                let area = 2.0 * r * len + std::f64::consts::PI * r * r;
                // Anti-aliased edges are approximated: the error grows with
                // the outline's length (a 1 px wide line at a slant covers
                // about 7 % less than its area).
                let perimeter = 2.0 * len + std::f64::consts::TAU * r;
                prop_assert!((total(&c) - area).abs() <= 0.03 * area + 0.02 * perimeter + 2.0,
                    "covered {} capsule {}", total(&c), area);
                for y in 0..80 {
                    for x in 0..100 {
                        let p = Vec2::new(x as f64, y as f64);
                        let t = if len > 0.0 { ((p - a).dot(d) / (len * len)).clamp(0.0, 1.0) } else { 0.0 };
                        let dist = (p - (a + d * t)).length();
                        let v = c.get(x, y);
                        if dist >= r + 0.5 { prop_assert_eq!(v, 0, "({}, {}) at {}", x, y, dist); }
                        if dist <= r - 0.5 { prop_assert_eq!(v, 255, "({}, {}) at {}", x, y, dist); }
                    }
                }
            }

            /// Hostile coordinates and widths never panic and stay in the layer.
            #[test]
            fn hostile_input_is_harmless(
                pts in proptest::collection::vec((coord(), coord()), 0..8),
                r in prop_oneof![Just(f64::NAN), Just(-1.0), 0.0..1e9f64, Just(f64::INFINITY)],
            ) {
                let pts: Vec<Vec2> = pts.into_iter().map(|(x, y)| Vec2::new(x, y)).collect();
                let mut c = Coverage::new(64, 48);
                c.stroke(&pts, true, |_| r);
                c.fill(std::slice::from_ref(&pts));
                let mut seen = 0usize;
                c.drain(|y, x0, x1, row| {
                    assert!(y < 48 && x0 < x1 && x1 <= 64 && row.len() == x1 - x0);
                    seen += 1;
                });
                prop_assert!(c.cov.iter().all(|&v| v == 0));
                prop_assert!(seen <= 48 * 8);
            }
        }
    }
}
