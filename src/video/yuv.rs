//! YUV 4:2:0 ↔ RGB for 8-bit video, the two hot conversions around the
//! per-frame work.
//!
//! swscale's RGB → YUV path takes about 4.5 ms per 1920×1080 frame here (a
//! quarter of what x264 veryfast itself costs), and its fast YUV → RGB path
//! is off by about one level on average. These fixed-point versions are
//! written so the compiler vectorizes them (compiled a second time for
//! AVX2, picked at run time), are exact to within rounding, and invert each
//! other: chroma is replicated over each 2×2 block on the way in and
//! averaged over it on the way out, so pixels the overlay does not touch
//! come back as they were decoded.

use crate::simd::Avx2;

/// Luma weights (kr, kb) of a colour matrix: BT.709 for `space` 1,
/// BT.2020 for 9 and 10, else BT.601.
fn weights(space: i32) -> (f64, f64) {
    match space {
        1 => (0.2126, 0.0722),
        9 | 10 => (0.2627, 0.0593),
        _ => (0.299, 0.114),
    }
}

/// The colour matrix players assume for an untagged picture of this size:
/// BT.709 (1) for HD sizes, BT.601 (5) up to 1024×576.
pub fn default_space(width: usize, height: usize) -> i32 {
    if width > 1024 || height > 576 { 1 } else { 5 }
}

/// Whether colour matrices `a` and `b` convert alike (BT.601 is tagged in
/// several ways).
pub(crate) fn same_matrix(a: i32, b: i32) -> bool {
    weights(a) == weights(b)
}

/// Fixed-point scale of the RGB → YUV coefficients (all fit in an i16).
const SHIFT: i32 = 15;
/// Rounding and offset constants of RGB → YUV, split as `1024 × k` so the
/// SIMD code can add them through a 16-bit multiply.
const Y_OFF: i32 = (16 << SHIFT) + (1 << (SHIFT - 1));
const C_OFF: i32 = (128 << (SHIFT + 2)) + (1 << (SHIFT + 1));

/// Integer RGB → YUV coefficients (× 2^15), limited range.
#[derive(Clone, Copy, Debug)]
pub struct Coeffs {
    y: [i32; 3],
    u: [i32; 3],
    v: [i32; 3],
}

impl Coeffs {
    /// RGB → limited-range YUV for a colour matrix (see `weights`).
    pub fn for_space(space: i32) -> Coeffs {
        let (kr, kb) = weights(space);
        let kg = 1.0 - kr - kb;
        let s = f64::from(1 << SHIFT);
        let ys = 219.0 / 255.0 * s;
        let cs = 224.0 / 255.0 * s;
        let q = |v: f64| v.round() as i32;
        Coeffs {
            y: [q(kr * ys), q(kg * ys), q(kb * ys)],
            u: [
                q(-kr / (2.0 * (1.0 - kb)) * cs),
                q(-kg / (2.0 * (1.0 - kb)) * cs),
                q(0.5 * cs),
            ],
            v: [
                q(0.5 * cs),
                q(-kg / (2.0 * (1.0 - kr)) * cs),
                q(-kb / (2.0 * (1.0 - kr)) * cs),
            ],
        }
    }
}

impl Coeffs {
    /// The rows of the matrix (× 2¹⁵, with the limited range's scales):
    /// Y = 16 + y·RGB / 2¹⁵, U = 128 + u·RGB / 2¹⁵, V = 128 + v·RGB / 2¹⁵.
    pub fn rows(&self) -> ([i32; 3], [i32; 3], [i32; 3]) {
        (self.y, self.u, self.v)
    }

    /// The Y, U and V of one colour (of a 2×2 block all of that colour:
    /// what [`rgb_to_yuv420`] makes of it).
    pub fn pixel(&self, r: u8, g: u8, b: u8) -> [u8; 3] {
        let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
        let [kr, kg, kb] = self.y;
        let y = (kr * r + kg * g + kb * b + Y_OFF) >> SHIFT;
        let chroma = |k: [i32; 3]| (k[0] * 4 * r + k[1] * 4 * g + k[2] * 4 * b + C_OFF) >> (SHIFT + 2);
        [y as u8, chroma(self.u) as u8, chroma(self.v) as u8]
    }
}

/// Fixed-point scale of the YUV → RGB coefficients (all fit in an i16).
const INV_SHIFT: i32 = 13;
const INV_HALF: i32 = 1 << (INV_SHIFT - 1);

/// Integer YUV → RGB coefficients (× 2^13).
#[derive(Clone, Copy, Debug)]
pub struct InvCoeffs {
    y_off: i32,
    y: i32,
    rv: i32,
    gu: i32,
    gv: i32,
    bu: i32,
}

impl InvCoeffs {
    /// YUV → RGB for a colour matrix (see `weights`) and range.
    pub fn for_space(space: i32, full_range: bool) -> InvCoeffs {
        let (kr, kb) = weights(space);
        let kg = 1.0 - kr - kb;
        let s = f64::from(1 << INV_SHIFT);
        let (ys, cs, y_off) = if full_range {
            (1.0, 1.0, 0)
        } else {
            (255.0 / 219.0, 255.0 / 224.0, 16)
        };
        let q = |v: f64| (v * s).round() as i32;
        InvCoeffs {
            y_off,
            y: q(ys),
            rv: q(2.0 * (1.0 - kr) * cs),
            gu: q(2.0 * (1.0 - kb) * kb / kg * cs),
            gv: q(2.0 * (1.0 - kr) * kr / kg * cs),
            bu: q(2.0 * (1.0 - kb) * cs),
        }
    }

    /// The integers of the conversion, `[y_off, y, rv, gu, gv, bu]`: for a
    /// pixel, `l = (Y − y_off)·y`, then R, G and B are
    /// `(l + rv·V′ + 2¹²) >> 13`, `(l − gu·U′ − gv·V′ + 2¹²) >> 13` and
    /// `(l + bu·U′ + 2¹²) >> 13` clamped to 0–255, with `U′ = U − 128`,
    /// `V′ = V − 128` of the pixel's 2×2 block (a shader converting on
    /// the GPU uses them to give the same pixels).
    pub fn integers(&self) -> [i32; 6] {
        [self.y_off, self.y, self.rv, self.gu, self.gv, self.bu]
    }

    /// The RGB of one pixel of luma `y` and chroma `u`, `v` (what
    /// [`yuv420_to_rgb`] gives it).
    #[inline(always)]
    pub fn rgb(&self, y: u8, u: u8, v: u8) -> [u8; 3] {
        let (u, v) = (i32::from(u) - 128, i32::from(v) - 128);
        let l = (i32::from(y) - self.y_off) * self.y;
        [
            ((l + self.rv * v + INV_HALF) >> INV_SHIFT).clamp(0, 255) as u8,
            ((l - self.gu * u - self.gv * v + INV_HALF) >> INV_SHIFT).clamp(0, 255) as u8,
            ((l + self.bu * u + INV_HALF) >> INV_SHIFT).clamp(0, 255) as u8,
        ]
    }
}

/// One source plane: bytes and row stride.
#[derive(Clone, Copy, Debug)]
pub struct Plane<'a> {
    /// The bytes, row after row.
    pub data: &'a [u8],
    /// Bytes from one row to the next.
    pub stride: usize,
}

/// One destination plane: bytes and row stride.
pub struct PlaneMut<'a> {
    /// The bytes, row after row.
    pub data: &'a mut [u8],
    /// Bytes from one row to the next.
    pub stride: usize,
}

/// Converts the top-left `width`×`height` (both even) of a packed RGB24
/// picture into Y, U and V planes.
///
/// Panics if a buffer is too small for the sizes given (a programming
/// error, never bad input).
pub fn rgb_to_yuv420(
    src: Plane<'_>,
    width: usize,
    height: usize,
    y: PlaneMut<'_>,
    u: PlaneMut<'_>,
    v: PlaneMut<'_>,
    c: &Coeffs,
) {
    rgb_to_yuv420_with(src, width, height, y, u, v, c, Avx2::detect());
}

#[allow(clippy::too_many_arguments)]
fn rgb_to_yuv420_with(
    src: Plane<'_>,
    width: usize,
    height: usize,
    y: PlaneMut<'_>,
    u: PlaneMut<'_>,
    v: PlaneMut<'_>,
    c: &Coeffs,
    cpu: Option<Avx2>,
) {
    assert!(
        width.is_multiple_of(2) && height.is_multiple_of(2),
        "4:2:0 needs even sizes"
    );
    assert!(src.stride >= 3 * width && src.data.len() >= src.stride * (height.max(1) - 1) + 3 * width);
    let cw = width / 2;
    for row in 0..height / 2 {
        let s0 = &src.data[2 * row * src.stride..][..3 * width];
        let s1 = &src.data[(2 * row + 1) * src.stride..][..3 * width];
        let (ya, yb) = y.data[2 * row * y.stride..].split_at_mut(y.stride);
        let (y0, y1) = (&mut ya[..width], &mut yb[..width]);
        let ur = &mut u.data[row * u.stride..][..cw];
        let vr = &mut v.data[row * v.stride..][..cw];
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if cpu.is_some() {
            // SAFETY: AVX2 is available (`cpu` proves it); the rows
            // have the lengths the kernel reads and writes.
            done = unsafe { simd::rgb_to_yuv_rows(s0, s1, y0, y1, ur, vr, c) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = cpu;
        luma_row(&s0[3 * done..], &mut y0[done..], c);
        luma_row(&s1[3 * done..], &mut y1[done..], c);
        chroma_row(
            &s0[3 * done..],
            &s1[3 * done..],
            &mut ur[done / 2..],
            &mut vr[done / 2..],
            c,
        );
    }
}

/// Converts the rectangle `x0..x1` × `y0..y1` (all even) of a packed RGB24
/// picture `width` pixels wide (rows of `3·width` bytes) into the same
/// rectangle of the Y, U and V planes of the whole picture, as
/// [`rgb_to_yuv420`] on the rectangle alone would. Whole 32-pixel pieces of
/// its rows go through the vector kernel in place; a narrower rest (most
/// of a thin drawing's blocks), which the kernel would leave to scalar
/// code, is converted through a 32-pixel window of the picture into
/// scratch rows and only its own pixels are copied: each 2×2 block
/// converts on its own, so the result is the same.
#[allow(clippy::too_many_arguments)]
pub fn rgb_to_yuv420_rect(
    rgb: &[u8],
    width: usize,
    [x0, y0, x1, y1]: [usize; 4],
    y: &mut PlaneMut<'_>,
    u: &mut PlaneMut<'_>,
    v: &mut PlaneMut<'_>,
    c: &Coeffs,
) {
    const N: usize = 32;
    let (sy, su, sv) = (y.stride, u.stride, v.stride);
    let part = |x0: usize, x1: usize, y: &mut PlaneMut<'_>, u: &mut PlaneMut<'_>, v: &mut PlaneMut<'_>| {
        rgb_to_yuv420(
            Plane {
                data: &rgb[(y0 * width + x0) * 3..],
                stride: 3 * width,
            },
            x1 - x0,
            y1 - y0,
            PlaneMut {
                data: &mut y.data[y0 * sy + x0..],
                stride: sy,
            },
            PlaneMut {
                data: &mut u.data[y0 / 2 * su + x0 / 2..],
                stride: su,
            },
            PlaneMut {
                data: &mut v.data[y0 / 2 * sv + x0 / 2..],
                stride: sv,
            },
            c,
        )
    };
    let rest = x0 + (x1 - x0) / N * N;
    if rest > x0 {
        part(x0, rest, y, u, v);
    }
    if rest == x1 {
        return;
    }
    if width < N || Avx2::detect().is_none() {
        part(rest, x1, y, u, v);
        return;
    }
    // The window `a..a + N` holds the rest and lies in the picture.
    let a = rest.min(width - N);
    let (lo, hi) = (rest - a, x1 - a);
    let (mut wy, mut wu, mut wv) = ([0u8; 2 * N], [0u8; N / 2], [0u8; N / 2]);
    for row in (y0..y1).step_by(2) {
        rgb_to_yuv420(
            Plane {
                data: &rgb[(row * width + a) * 3..],
                stride: 3 * width,
            },
            N,
            2,
            PlaneMut {
                data: &mut wy,
                stride: N,
            },
            PlaneMut {
                data: &mut wu,
                stride: N,
            },
            PlaneMut {
                data: &mut wv,
                stride: N,
            },
            c,
        );
        y.data[row * sy + rest..row * sy + x1].copy_from_slice(&wy[lo..hi]);
        y.data[(row + 1) * sy + rest..(row + 1) * sy + x1].copy_from_slice(&wy[N + lo..N + hi]);
        let (ca, cb) = (row / 2 * su + rest / 2, row / 2 * sv + rest / 2);
        u.data[ca..ca + (hi - lo) / 2].copy_from_slice(&wu[lo / 2..hi / 2]);
        v.data[cb..cb + (hi - lo) / 2].copy_from_slice(&wv[lo / 2..hi / 2]);
    }
}

fn luma_row(src: &[u8], dst: &mut [u8], c: &Coeffs) {
    let [kr, kg, kb] = c.y;
    for (d, p) in dst.iter_mut().zip(src.chunks_exact(3)) {
        let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
        *d = ((kr * r + kg * g + kb * b + Y_OFF) >> SHIFT) as u8;
    }
}

fn chroma_row(s0: &[u8], s1: &[u8], u: &mut [u8], v: &mut [u8], c: &Coeffs) {
    // Sums of 2×2 blocks: the average is folded into the shift.
    let [ur, ug, ub] = c.u;
    let [vr, vg, vb] = c.v;
    for ((du, dv), (a, b)) in u
        .iter_mut()
        .zip(v.iter_mut())
        .zip(s0.chunks_exact(6).zip(s1.chunks_exact(6)))
    {
        let r = i32::from(a[0]) + i32::from(a[3]) + i32::from(b[0]) + i32::from(b[3]);
        let g = i32::from(a[1]) + i32::from(a[4]) + i32::from(b[1]) + i32::from(b[4]);
        let bl = i32::from(a[2]) + i32::from(a[5]) + i32::from(b[2]) + i32::from(b[5]);
        *du = ((ur * r + ug * g + ub * bl + C_OFF) >> (SHIFT + 2)) as u8;
        *dv = ((vr * r + vg * g + vb * bl + C_OFF) >> (SHIFT + 2)) as u8;
    }
}

/// Converts a `width`×`height` YUV 4:2:0 picture (chroma planes of
/// ⌈width/2⌉×⌈height/2⌉) into packed RGB24 rows of `3·width` bytes.
///
/// Panics if a buffer is too small for the sizes given (a programming
/// error, never bad input).
pub fn yuv420_to_rgb(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    dst: &mut [u8],
    c: &InvCoeffs,
) {
    yuv420_to_rgb_with(y, u, v, width, height, dst, c, Avx2::detect());
}

#[allow(clippy::too_many_arguments)]
fn yuv420_to_rgb_with(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    dst: &mut [u8],
    c: &InvCoeffs,
    cpu: Option<Avx2>,
) {
    rows_to_rgb_with(y, u, v, width, height, 0..height, dst, c, cpu);
}

/// Like [`yuv420_to_rgb`], for `rows` of the picture only (each row of
/// `dst` written is the row the whole conversion writes; rows at or past
/// `height` are ignored).
#[allow(clippy::too_many_arguments)]
pub fn yuv420_rows_to_rgb(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    rows: impl Iterator<Item = usize>,
    dst: &mut [u8],
    c: &InvCoeffs,
) {
    rows_to_rgb_with(y, u, v, width, height, rows, dst, c, Avx2::detect());
}

#[allow(clippy::too_many_arguments)]
fn rows_to_rgb_with(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    rows: impl Iterator<Item = usize>,
    dst: &mut [u8],
    c: &InvCoeffs,
    cpu: Option<Avx2>,
) {
    let (cw, ch) = (width.div_ceil(2), height.div_ceil(2));
    let fits = |p: &Plane<'_>, w: usize, h: usize| {
        h == 0 || (p.stride >= w && p.data.len() >= p.stride * (h - 1) + w)
    };
    assert!(fits(&y, width, height) && fits(&u, cw, ch) && fits(&v, cw, ch));
    assert!(dst.len() >= 3 * width * height);
    for row in rows.filter(|&r| r < height) {
        let yr = &y.data[row * y.stride..][..width];
        let ur = &u.data[(row / 2) * u.stride..][..cw];
        let vr = &v.data[(row / 2) * v.stride..][..cw];
        let out = &mut dst[row * 3 * width..][..3 * width];
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if cpu.is_some() {
            // SAFETY: AVX2 is available (`cpu` proves it); the rows
            // have the lengths the kernel reads and writes.
            done = unsafe { simd::yuv_to_rgb_row(yr, ur, vr, out, c) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = cpu;
        to_rgb_row(
            &yr[done..],
            &ur[done / 2..],
            &vr[done / 2..],
            &mut out[3 * done..],
            c,
        );
    }
}

/// One row (from an even column) of YUV → RGB, scalar.
fn to_rgb_row(yr: &[u8], ur: &[u8], vr: &[u8], out: &mut [u8], c: &InvCoeffs) {
    for (x, (o, &yy)) in out.chunks_exact_mut(3).zip(yr).enumerate() {
        let (u, v) = (i32::from(ur[x / 2]) - 128, i32::from(vr[x / 2]) - 128);
        let l = (i32::from(yy) - c.y_off) * c.y;
        o[0] = ((l + c.rv * v + INV_HALF) >> INV_SHIFT).clamp(0, 255) as u8;
        o[1] = ((l - c.gu * u - c.gv * v + INV_HALF) >> INV_SHIFT).clamp(0, 255) as u8;
        o[2] = ((l + c.bu * u + INV_HALF) >> INV_SHIFT).clamp(0, 255) as u8;
    }
}

crate::simd::multiversion! {
    /// The colour of each 2×2 block of a 4:2:0 picture: its mean luma (of
    /// `y0[2i..2i + 2]` and `y1[2i..2i + 2]`, rounded) with its chroma
    /// `u[i]`, `v[i]`, converted as [`yuv420_to_rgb`] converts a pixel,
    /// into packed RGB `out` (as many blocks as all fit).
    pub fn blocks_to_rgb(y0: &[u8], y1: &[u8], u: &[u8], v: &[u8], out: &mut [u8], c: &InvCoeffs) {
        let n = (y0.len() / 2).min(y1.len() / 2).min(u.len()).min(v.len()).min(out.len() / 3);
        let (y0, y1, u, v, out) = (&y0[..2 * n], &y1[..2 * n], &u[..n], &v[..n], &mut out[..3 * n]);
        for i in 0..n {
            let sum = u16::from(y0[2 * i]) + u16::from(y0[2 * i + 1]) + u16::from(y1[2 * i]) + u16::from(y1[2 * i + 1]);
            let rgb = c.rgb(((sum + 2) >> 2) as u8, u[i], v[i]);
            out[3 * i] = rgb[0];
            out[3 * i + 1] = rgb[1];
            out[3 * i + 2] = rgb[2];
        }
    }
}

/// AVX2 kernels: 32 pixels per step, exactly the scalar arithmetic (16-bit
/// products summed in 32 bits with `madd`), so results are bit-identical.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::{C_OFF, Coeffs, INV_HALF, INV_SHIFT, InvCoeffs, SHIFT, Y_OFF};

    /// pshufb mask gathering channel `ch` of 16 RGB24 pixels from the
    /// 16-byte part `part` (0, 1, 2) of their 48 bytes.
    fn gather_mask(ch: usize, part: usize) -> [i8; 16] {
        let mut m = [-128i8; 16];
        for (i, v) in m.iter_mut().enumerate() {
            let byte = 3 * i + ch;
            if byte / 16 == part {
                *v = (byte % 16) as i8;
            }
        }
        m
    }

    /// pshufb mask placing channel `ch` of 16 pixels into the 16-byte part
    /// `part` of their RGB24 bytes.
    fn scatter_mask(ch: usize, part: usize) -> [i8; 16] {
        let mut m = [-128i8; 16];
        for (j, v) in m.iter_mut().enumerate() {
            let byte = 16 * part + j;
            if byte % 3 == ch {
                *v = (byte / 3) as i8;
            }
        }
        m
    }

    /// The 9 masks (channel × part), each in both 128-bit lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn masks(f: fn(usize, usize) -> [i8; 16]) -> [[__m256i; 3]; 3] {
        let mut out = [[_mm256_setzero_si256(); 3]; 3];
        for (ch, row) in out.iter_mut().enumerate() {
            for (part, m) in row.iter_mut().enumerate() {
                let a = f(ch, part);
                // SAFETY: reading 16 bytes from a 16-byte array.
                *m = _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(a.as_ptr() as *const __m128i) });
            }
        }
        out
    }

    /// Two i16 coefficients as the (low, high) halves of every i32 lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn pair(lo: i32, hi: i32) -> __m256i {
        _mm256_set1_epi32((lo & 0xffff) | (hi << 16))
    }

    /// Splits 32 RGB24 pixels (96 bytes at `p`) into R, G, B bytes, pixels
    /// 0–15 in the low lane and 16–31 in the high lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load_rgb(p: *const u8, m: &[[__m256i; 3]; 3]) -> [__m256i; 3] {
        let mut a = [_mm256_setzero_si256(); 3];
        for (k, ak) in a.iter_mut().enumerate() {
            // SAFETY: the caller guarantees 96 readable bytes at p.
            let (lo, hi) = unsafe {
                (
                    _mm_loadu_si128(p.add(16 * k) as *const __m128i),
                    _mm_loadu_si128(p.add(48 + 16 * k) as *const __m128i),
                )
            };
            *ak = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        }
        let mut out = [_mm256_setzero_si256(); 3];
        for (c, o) in out.iter_mut().enumerate() {
            *o = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_shuffle_epi8(a[0], m[c][0]),
                    _mm256_shuffle_epi8(a[1], m[c][1]),
                ),
                _mm256_shuffle_epi8(a[2], m[c][2]),
            );
        }
        out
    }

    /// Bytes 0–15 (`half` 0) or 16–31 (`half` 1) of `v` as i16 lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn widen(v: __m256i, half: usize) -> __m256i {
        if half == 0 {
            _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v))
        } else {
            _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1))
        }
    }

    /// Y of 16 pixels (i16 lanes in order) from their R, G, B as i16.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn luma16(r: __m256i, g: __m256i, b: __m256i, k: &[__m256i; 2]) -> __m256i {
        let k1024 = _mm256_set1_epi16(1024);
        let lo = _mm256_add_epi32(
            _mm256_madd_epi16(_mm256_unpacklo_epi16(r, g), k[0]),
            _mm256_madd_epi16(_mm256_unpacklo_epi16(b, k1024), k[1]),
        );
        let hi = _mm256_add_epi32(
            _mm256_madd_epi16(_mm256_unpackhi_epi16(r, g), k[0]),
            _mm256_madd_epi16(_mm256_unpackhi_epi16(b, k1024), k[1]),
        );
        _mm256_packs_epi32(_mm256_srai_epi32(lo, SHIFT), _mm256_srai_epi32(hi, SHIFT))
    }

    /// U or V (per `k`) of the 8 chroma samples under pixels 0–15 (`half`
    /// 0) or 16–31 of two rows, as i32 lanes in order.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn chroma8(a: &[__m256i; 3], b: &[__m256i; 3], half: usize, k: &[__m256i; 2]) -> __m256i {
        let ones = _mm256_set1_epi16(1);
        // 2×2 sums: rows added as i16, then neighbours by madd with 1.
        // SAFETY: AVX2 is enabled in this function.
        let (r, g, bl) = unsafe {
            (
                _mm256_madd_epi16(_mm256_add_epi16(widen(a[0], half), widen(b[0], half)), ones),
                _mm256_madd_epi16(_mm256_add_epi16(widen(a[1], half), widen(b[1], half)), ones),
                _mm256_madd_epi16(_mm256_add_epi16(widen(a[2], half), widen(b[2], half)), ones),
            )
        };
        let rg = _mm256_or_si256(r, _mm256_slli_epi32(g, 16));
        let b1 = _mm256_or_si256(bl, _mm256_set1_epi32(1024 << 16));
        let t = _mm256_add_epi32(_mm256_madd_epi16(rg, k[0]), _mm256_madd_epi16(b1, k[1]));
        _mm256_srai_epi32(t, SHIFT + 2)
    }

    /// Converts two RGB24 rows into two Y rows and one U and V row, 32
    /// pixels at a time; returns the number of pixels done (a multiple of 32).
    ///
    /// # Safety
    /// AVX2 must be available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rgb_to_yuv_rows(
        s0: &[u8],
        s1: &[u8],
        y0: &mut [u8],
        y1: &mut [u8],
        u: &mut [u8],
        v: &mut [u8],
        c: &Coeffs,
    ) -> usize {
        let n = y0.len().min(y1.len()).min(2 * u.len()).min(2 * v.len());
        let n = n.min(s0.len() / 3).min(s1.len() / 3);
        // SAFETY: AVX2 is available (this function's contract).
        let (m, ky, ku, kv) = unsafe {
            (
                masks(gather_mask),
                [pair(c.y[0], c.y[1]), pair(c.y[2], Y_OFF / 1024)],
                [pair(c.u[0], c.u[1]), pair(c.u[2], C_OFF / 1024)],
                [pair(c.v[0], c.v[1]), pair(c.v[2], C_OFF / 1024)],
            )
        };
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let mut x = 0;
        while x + 32 <= n {
            // SAFETY: pixels x..x+32 are within all rows (x + 32 ≤ n).
            unsafe {
                let a = load_rgb(s0.as_ptr().add(3 * x), &m);
                let b = load_rgb(s1.as_ptr().add(3 * x), &m);
                for (src, dst) in [(&a, y0.as_mut_ptr()), (&b, y1.as_mut_ptr())] {
                    let l0 = luma16(widen(src[0], 0), widen(src[1], 0), widen(src[2], 0), &ky);
                    let l1 = luma16(widen(src[0], 1), widen(src[1], 1), widen(src[2], 1), &ky);
                    let yb = _mm256_permute4x64_epi64(_mm256_packus_epi16(l0, l1), 0b11_01_10_00);
                    _mm256_storeu_si256(dst.add(x) as *mut __m256i, yb);
                }
                let u16 = _mm256_packs_epi32(chroma8(&a, &b, 0, &ku), chroma8(&a, &b, 1, &ku));
                let v16 = _mm256_packs_epi32(chroma8(&a, &b, 0, &kv), chroma8(&a, &b, 1, &kv));
                // packus interleaves 4-sample groups of U and V: put them back.
                let uv = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(u16, v16), order);
                _mm_storeu_si128(
                    u.as_mut_ptr().add(x / 2) as *mut __m128i,
                    _mm256_castsi256_si128(uv),
                );
                _mm_storeu_si128(
                    v.as_mut_ptr().add(x / 2) as *mut __m128i,
                    _mm256_extracti128_si256(uv, 1),
                );
            }
            x += 32;
        }
        x
    }

    /// One of R, G, B for 16 pixels (i16 lanes in order):
    /// `(madd(p, k) [+ madd(q, kq)] + half) >> INV_SHIFT` over i16 pairs.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn channel16(p: (__m256i, __m256i), k: __m256i, q: (__m256i, __m256i), kq: __m256i) -> __m256i {
        let half = _mm256_set1_epi32(INV_HALF);
        let lo = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(p.0, p.1), k), half),
            _mm256_madd_epi16(_mm256_unpacklo_epi16(q.0, q.1), kq),
        );
        let hi = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(p.0, p.1), k), half),
            _mm256_madd_epi16(_mm256_unpackhi_epi16(q.0, q.1), kq),
        );
        _mm256_packs_epi32(_mm256_srai_epi32(lo, INV_SHIFT), _mm256_srai_epi32(hi, INV_SHIFT))
    }

    /// Converts one row of Y and its chroma rows into RGB24, 32 pixels at a
    /// time; returns the pixels done (a multiple of 32).
    ///
    /// # Safety
    /// AVX2 must be available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn yuv_to_rgb_row(
        yr: &[u8],
        ur: &[u8],
        vr: &[u8],
        out: &mut [u8],
        c: &InvCoeffs,
    ) -> usize {
        let n = yr.len().min(2 * ur.len()).min(2 * vr.len()).min(out.len() / 3);
        // SAFETY: AVX2 is available (this function's contract).
        let (m, k_yv, k_yu_b, k_yu_g, k_v_g) = unsafe {
            (
                masks(scatter_mask),
                pair(c.y, c.rv),
                pair(c.y, c.bu),
                pair(c.y, -c.gu),
                pair(-c.gv, 0),
            )
        };
        let y_off = _mm256_set1_epi16(c.y_off as i16);
        let c_off = _mm256_set1_epi16(128);
        let zero = _mm256_setzero_si256();
        let mut x = 0;
        while x + 32 <= n {
            // SAFETY: pixels x..x+32 are within all rows (x + 32 ≤ n).
            unsafe {
                let yb = _mm256_loadu_si256(yr.as_ptr().add(x) as *const __m256i);
                let ub = _mm_loadu_si128(ur.as_ptr().add(x / 2) as *const __m128i);
                let vb = _mm_loadu_si128(vr.as_ptr().add(x / 2) as *const __m128i);
                let mut halves = [[zero; 3]; 2];
                for (half, out) in halves.iter_mut().enumerate() {
                    let (yh, uh, vh) = if half == 0 {
                        (
                            _mm256_castsi256_si128(yb),
                            _mm_unpacklo_epi8(ub, ub),
                            _mm_unpacklo_epi8(vb, vb),
                        )
                    } else {
                        (
                            _mm256_extracti128_si256(yb, 1),
                            _mm_unpackhi_epi8(ub, ub),
                            _mm_unpackhi_epi8(vb, vb),
                        )
                    };
                    let y = _mm256_sub_epi16(_mm256_cvtepu8_epi16(yh), y_off);
                    let u = _mm256_sub_epi16(_mm256_cvtepu8_epi16(uh), c_off);
                    let v = _mm256_sub_epi16(_mm256_cvtepu8_epi16(vh), c_off);
                    *out = [
                        channel16((y, v), k_yv, (zero, zero), zero),
                        channel16((y, u), k_yu_g, (v, zero), k_v_g),
                        channel16((y, u), k_yu_b, (zero, zero), zero),
                    ];
                }
                let mut rgb = [zero; 3];
                for (c, o) in rgb.iter_mut().enumerate() {
                    let packed = _mm256_packus_epi16(halves[0][c], halves[1][c]);
                    *o = _mm256_permute4x64_epi64(packed, 0b11_01_10_00);
                }
                let mut parts = [zero; 3];
                for (k, o) in parts.iter_mut().enumerate() {
                    *o = _mm256_or_si256(
                        _mm256_or_si256(
                            _mm256_shuffle_epi8(rgb[0], m[0][k]),
                            _mm256_shuffle_epi8(rgb[1], m[1][k]),
                        ),
                        _mm256_shuffle_epi8(rgb[2], m[2][k]),
                    );
                }
                let [o0, o1, o2] = parts;
                let dst = out.as_mut_ptr().add(3 * x);
                _mm256_storeu_si256(dst as *mut __m256i, _mm256_permute2x128_si256(o0, o1, 0x20));
                _mm256_storeu_si256(
                    dst.add(32) as *mut __m256i,
                    _mm256_permute2x128_si256(o2, o0, 0x30),
                );
                _mm256_storeu_si256(
                    dst.add(64) as *mut __m256i,
                    _mm256_permute2x128_si256(o1, o2, 0x31),
                );
            }
            x += 32;
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Exact (floating-point) reference of one pixel / one 2×2 block.
    fn reference(rgb: [[f64; 3]; 4], kr: f64, kb: f64) -> ([f64; 4], f64, f64) {
        let kg = 1.0 - kr - kb;
        let ys: Vec<f64> = rgb
            .iter()
            .map(|p| 16.0 + 219.0 / 255.0 * (kr * p[0] + kg * p[1] + kb * p[2]))
            .collect();
        let avg = |i: usize| rgb.iter().map(|p| p[i]).sum::<f64>() / 4.0;
        let (r, g, b) = (avg(0), avg(1), avg(2));
        let yl = kr * r + kg * g + kb * b;
        let u = 128.0 + 224.0 / 255.0 * (b - yl) / (2.0 * (1.0 - kb));
        let v = 128.0 + 224.0 / 255.0 * (r - yl) / (2.0 * (1.0 - kr));
        ([ys[0], ys[1], ys[2], ys[3]], u, v)
    }

    fn run(src: &[u8], w: usize, h: usize, space: i32) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let (mut y, mut u, mut v) = (vec![0; w * h], vec![0; w * h / 4], vec![0; w * h / 4]);
        rgb_to_yuv420(
            Plane {
                data: src,
                stride: 3 * w,
            },
            w,
            h,
            PlaneMut {
                data: &mut y,
                stride: w,
            },
            PlaneMut {
                data: &mut u,
                stride: w / 2,
            },
            PlaneMut {
                data: &mut v,
                stride: w / 2,
            },
            &Coeffs::for_space(space),
        );
        (y, u, v)
    }

    #[test]
    fn black_white_and_primaries_hit_the_standard_values() {
        // 2×2 blocks of one colour each, side by side: black, white, red (BT.709).
        let cols: [[u8; 3]; 3] = [[0, 0, 0], [255, 255, 255], [255, 0, 0]];
        let w = 6;
        let mut src = vec![0u8; 3 * w * 2];
        for row in 0..2 {
            for x in 0..w {
                src[row * 3 * w + 3 * x..][..3].copy_from_slice(&cols[x / 2]);
            }
        }
        let (y, u, v) = run(&src, w, 2, 1);
        assert_eq!((y[0], u[0], v[0]), (16, 128, 128));
        assert_eq!((y[2], u[1], v[1]), (235, 128, 128));
        // BT.709 red: Y = 16 + 219·0.2126 ≈ 62.6, Cr = 240.
        assert_eq!((y[4], v[2]), (63, 240));
    }

    fn pl(data: &[u8], stride: usize) -> Plane<'_> {
        Plane { data, stride }
    }

    #[test]
    fn rgb_round_trip_through_yuv_is_exact_on_decoded_pictures() {
        // A YUV picture (as a decoder gives it) → RGB → YUV comes back within
        // one level (luma) and exactly for chroma away from clipping.
        let (w, h) = (6, 4);
        let yv: Vec<u8> = (0..w * h).map(|i| 40 + (i * 7 % 150) as u8).collect();
        let uv: Vec<u8> = (0..w * h / 4).map(|i| 110 + (i * 5 % 30) as u8).collect();
        let vv: Vec<u8> = (0..w * h / 4).map(|i| 120 + (i * 3 % 20) as u8).collect();
        for space in [1, 5] {
            let mut rgb = vec![0u8; 3 * w * h];
            yuv420_to_rgb(
                pl(&yv, w),
                pl(&uv, w / 2),
                pl(&vv, w / 2),
                w,
                h,
                &mut rgb,
                &InvCoeffs::for_space(space, false),
            );
            let (y2, u2, v2) = run(&rgb, w, h, space);
            for (a, b) in yv.iter().zip(&y2) {
                assert!(a.abs_diff(*b) <= 1, "Y {a} → {b}");
            }
            for (a, b) in uv.iter().zip(&u2).chain(vv.iter().zip(&v2)) {
                assert!(a.abs_diff(*b) <= 1, "C {a} → {b}");
            }
        }
    }

    #[test]
    fn rectangles_convert_as_on_their_own() {
        let (w, h) = (100, 8);
        let rgb: Vec<u8> = (0..3 * w * h).map(|i| (i * 37 % 251) as u8).collect();
        let c = Coeffs::for_space(1);
        let rects = [
            [0, 0, 2, 2],
            [10, 2, 24, 6],
            [70, 0, 100, 8],
            [4, 4, 80, 6],
            [98, 6, 100, 8],
            [0, 0, 100, 8],
        ];
        for rect in rects {
            let [x0, y0, x1, y1] = rect;
            let (mut y, mut u, mut v) = (vec![7u8; w * h], vec![7u8; w * h / 4], vec![7u8; w * h / 4]);
            rgb_to_yuv420_rect(
                &rgb,
                w,
                rect,
                &mut PlaneMut {
                    data: &mut y,
                    stride: w,
                },
                &mut PlaneMut {
                    data: &mut u,
                    stride: w / 2,
                },
                &mut PlaneMut {
                    data: &mut v,
                    stride: w / 2,
                },
                &c,
            );
            // The rectangle alone, scalar.
            let alone: Vec<u8> = (y0..y1)
                .flat_map(|r| rgb[(r * w + x0) * 3..(r * w + x1) * 3].to_vec())
                .collect();
            let (rw, rh) = (x1 - x0, y1 - y0);
            let (mut ya, mut ua, mut va) = (vec![0; rw * rh], vec![0; rw * rh / 4], vec![0; rw * rh / 4]);
            rgb_to_yuv420_with(
                pl(&alone, 3 * rw),
                rw,
                rh,
                PlaneMut {
                    data: &mut ya,
                    stride: rw,
                },
                PlaneMut {
                    data: &mut ua,
                    stride: rw / 2,
                },
                PlaneMut {
                    data: &mut va,
                    stride: rw / 2,
                },
                &c,
                None,
            );
            for r in 0..h {
                for x in 0..w {
                    let inside = (y0..y1).contains(&r) && (x0..x1).contains(&x);
                    let want = if inside { ya[(r - y0) * rw + x - x0] } else { 7 };
                    assert_eq!(y[r * w + x], want, "Y ({x}, {r}) of {rect:?}");
                }
            }
            for r in 0..h / 2 {
                for x in 0..w / 2 {
                    let inside = (y0 / 2..y1 / 2).contains(&r) && (x0 / 2..x1 / 2).contains(&x);
                    let at = || (r - y0 / 2) * (rw / 2) + x - x0 / 2;
                    let (wu, wv) = if inside { (ua[at()], va[at()]) } else { (7, 7) };
                    assert_eq!(
                        (u[r * w / 2 + x], v[r * w / 2 + x]),
                        (wu, wv),
                        "UV ({x}, {r}) of {rect:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn odd_sizes_convert_the_last_column_and_row() {
        let (w, h) = (3, 3);
        let yv = [16u8, 16, 235, 16, 16, 235, 235, 235, 235];
        let c = [128u8; 4];
        let mut rgb = vec![7u8; 27];
        yuv420_to_rgb(
            Plane { data: &yv, stride: 3 },
            Plane { data: &c, stride: 2 },
            Plane { data: &c, stride: 2 },
            w,
            h,
            &mut rgb,
            &InvCoeffs::for_space(1, false),
        );
        let px: Vec<u8> = rgb.chunks(3).map(|p| p[0]).collect();
        assert_eq!(px, [0, 0, 255, 0, 0, 255, 255, 255, 255]);
    }

    /// Both kernels give exactly what the scalar code gives, at widths that
    /// exercise the 32-pixel steps and the tails.
    #[test]
    fn simd_matches_scalar_exactly() {
        let Some(avx2) = Avx2::detect() else {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        };
        let mut seed = 12345u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as u8
        };
        for (w, h) in [(32, 2), (64, 4), (70, 6), (130, 2), (1262, 4)] {
            let rgb: Vec<u8> = (0..3 * w * h).map(|_| rnd()).collect();
            for space in [1, 5, 9] {
                let c = Coeffs::for_space(space);
                let mut outs = Vec::new();
                for cpu in [None, Some(avx2)] {
                    let (mut y, mut u, mut v) = (vec![0; w * h], vec![0; w * h / 4], vec![0; w * h / 4]);
                    rgb_to_yuv420_with(
                        pl(&rgb, 3 * w),
                        w,
                        h,
                        PlaneMut {
                            data: &mut y,
                            stride: w,
                        },
                        PlaneMut {
                            data: &mut u,
                            stride: w / 2,
                        },
                        PlaneMut {
                            data: &mut v,
                            stride: w / 2,
                        },
                        &c,
                        cpu,
                    );
                    outs.push((y, u, v));
                }
                assert!(outs[0] == outs[1], "RGB → YUV differs at {w}×{h}, space {space}");
                let (y, u, v) = &outs[0];
                for full in [false, true] {
                    let ic = InvCoeffs::for_space(space, full);
                    let mut back = Vec::new();
                    for cpu in [None, Some(avx2)] {
                        let mut out = vec![0; 3 * w * h];
                        yuv420_to_rgb_with(pl(y, w), pl(u, w / 2), pl(v, w / 2), w, h, &mut out, &ic, cpu);
                        back.push(out);
                    }
                    assert!(
                        back[0] == back[1],
                        "YUV → RGB differs at {w}×{h}, space {space}, full {full}"
                    );
                }
            }
        }
    }

    proptest! {
        #[test]
        fn within_one_level_of_the_exact_conversion(
            px in proptest::collection::vec(any::<u8>(), 3 * 8 * 4),
            hd in any::<bool>(),
        ) {
            let (w, h) = (8, 4);
            let space = if hd { 1 } else { 5 };
            let (kr, kb) = if hd { (0.2126, 0.0722) } else { (0.299, 0.114) };
            let (y, u, v) = run(&px, w, h, space);
            let at = |x: usize, yy: usize| {
                let i = 3 * (yy * w + x);
                [f64::from(px[i]), f64::from(px[i + 1]), f64::from(px[i + 2])]
            };
            for by in 0..h / 2 {
                for bx in 0..w / 2 {
                    let (x0, y0) = (2 * bx, 2 * by);
                    let block = [at(x0, y0), at(x0 + 1, y0), at(x0, y0 + 1), at(x0 + 1, y0 + 1)];
                    let (ys, ur, vr) = reference(block, kr, kb);
                    let got = [y[y0 * w + x0], y[y0 * w + x0 + 1], y[(y0 + 1) * w + x0], y[(y0 + 1) * w + x0 + 1]];
                    for (g, r) in got.iter().zip(ys) {
                        prop_assert!((f64::from(*g) - r).abs() <= 0.52, "Y {g} vs {r}");
                    }
                    let ci = by * w / 2 + bx;
                    prop_assert!((f64::from(u[ci]) - ur).abs() <= 0.52, "U {} vs {ur}", u[ci]);
                    prop_assert!((f64::from(v[ci]) - vr).abs() <= 0.52, "V {} vs {vr}", v[ci]);
                }
            }
        }
    }
}
