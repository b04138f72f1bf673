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

/// Fixed-point scale of the coefficients.
const SHIFT: i32 = 15;

/// Luma weights (kr, kb) of a colour matrix: BT.709 for `space` 1,
/// BT.2020 for 9 and 10, else BT.601.
fn weights(space: i32) -> (f64, f64) {
    match space {
        1 => (0.2126, 0.0722),
        9 | 10 => (0.2627, 0.0593),
        _ => (0.299, 0.114),
    }
}

/// Integer conversion coefficients (× 2^15), limited range.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Coeffs {
    y: [i32; 3],
    u: [i32; 3],
    v: [i32; 3],
}

impl Coeffs {
    /// Coefficients for a colour matrix with luma weights `kr`, `kb`.
    fn from_weights(kr: f64, kb: f64) -> Coeffs {
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

    /// RGB → limited-range YUV for a colour matrix (see [`weights`]).
    pub fn for_space(space: i32) -> Coeffs {
        let (kr, kb) = weights(space);
        Coeffs::from_weights(kr, kb)
    }
}

/// Integer YUV → RGB coefficients (× 2^16).
#[derive(Clone, Copy, Debug)]
pub(crate) struct InvCoeffs {
    y_off: i32,
    c_off: i32,
    y: i32,
    rv: i32,
    gu: i32,
    gv: i32,
    bu: i32,
}

impl InvCoeffs {
    /// YUV → RGB for a colour matrix (see [`weights`]) and range.
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
            c_off: 128,
            y: q(ys),
            rv: q(2.0 * (1.0 - kr) * cs),
            gu: q(2.0 * (1.0 - kb) * kb / kg * cs),
            gv: q(2.0 * (1.0 - kr) * kr / kg * cs),
            bu: q(2.0 * (1.0 - kb) * cs),
        }
    }
}

/// Fixed-point scale of the inverse coefficients.
const INV_SHIFT: i32 = 16;

/// One source plane: bytes and row stride.
pub(crate) struct Plane<'a> {
    pub data: &'a [u8],
    pub stride: usize,
}

/// Converts a `width`×`height` YUV 4:2:0 picture (chroma planes of
/// ⌈width/2⌉×⌈height/2⌉) into packed RGB24 rows of `3·width` bytes.
///
/// Panics if a buffer is too small for the sizes given (a programming
/// error, never bad input).
pub(crate) fn yuv420_to_rgb(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    dst: &mut [u8],
    c: &InvCoeffs,
) {
    let (cw, ch) = (width.div_ceil(2), height.div_ceil(2));
    let fits = |p: &Plane<'_>, w: usize, h: usize| {
        h == 0 || (p.stride >= w && p.data.len() >= p.stride * (h - 1) + w)
    };
    assert!(fits(&y, width, height) && fits(&u, cw, ch) && fits(&v, cw, ch));
    assert!(dst.len() >= 3 * width * height);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { to_rgb_avx2(y, u, v, width, height, dst, c) };
        return;
    }
    to_rgb(y, u, v, width, height, dst, c);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn to_rgb_avx2(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    dst: &mut [u8],
    c: &InvCoeffs,
) {
    to_rgb(y, u, v, width, height, dst, c);
}

#[inline(always)]
fn to_rgb(
    y: Plane<'_>,
    u: Plane<'_>,
    v: Plane<'_>,
    width: usize,
    height: usize,
    dst: &mut [u8],
    c: &InvCoeffs,
) {
    let cw = width.div_ceil(2);
    let pairs = width / 2;
    for row in 0..height {
        let yr = &y.data[row * y.stride..][..width];
        let ur = &u.data[(row / 2) * u.stride..][..cw];
        let vr = &v.data[(row / 2) * v.stride..][..cw];
        let out = &mut dst[row * 3 * width..][..3 * width];
        let (out_pairs, out_tail) = out.split_at_mut(6 * pairs);
        for (((o, yy), &uu), &vv) in out_pairs
            .chunks_exact_mut(6)
            .zip(yr.chunks_exact(2))
            .zip(ur.iter())
            .zip(vr.iter())
        {
            let (r, g, b) = chroma_terms(uu, vv, c);
            pixel(&mut o[..3], yy[0], r, g, b, c);
            pixel(&mut o[3..], yy[1], r, g, b, c);
        }
        if width % 2 == 1 {
            let (r, g, b) = chroma_terms(ur[cw - 1], vr[cw - 1], c);
            pixel(out_tail, yr[width - 1], r, g, b, c);
        }
    }
}

/// The chroma parts of R, G and B (× 2^16, rounding included).
#[inline(always)]
fn chroma_terms(u: u8, v: u8, c: &InvCoeffs) -> (i32, i32, i32) {
    let (u, v) = (i32::from(u) - c.c_off, i32::from(v) - c.c_off);
    let half = 1 << (INV_SHIFT - 1);
    (c.rv * v + half, half - c.gu * u - c.gv * v, c.bu * u + half)
}

#[inline(always)]
fn pixel(o: &mut [u8], y: u8, r: i32, g: i32, b: i32, c: &InvCoeffs) {
    let l = (i32::from(y) - c.y_off) * c.y;
    o[0] = ((l + r) >> INV_SHIFT).clamp(0, 255) as u8;
    o[1] = ((l + g) >> INV_SHIFT).clamp(0, 255) as u8;
    o[2] = ((l + b) >> INV_SHIFT).clamp(0, 255) as u8;
}

/// One destination plane: bytes and row stride.
pub(crate) struct PlaneMut<'a> {
    pub data: &'a mut [u8],
    pub stride: usize,
}

/// Converts the top-left `width`×`height` (both even) of a packed RGB24
/// picture into Y, U and V planes.
///
/// Panics if a buffer is too small for the sizes given (a programming
/// error, never bad input).
pub(crate) fn rgb_to_yuv420(
    src: Plane<'_>,
    width: usize,
    height: usize,
    y: PlaneMut<'_>,
    u: PlaneMut<'_>,
    v: PlaneMut<'_>,
    c: &Coeffs,
) {
    assert!(width % 2 == 0 && height % 2 == 0, "4:2:0 needs even sizes");
    assert!(src.stride >= 3 * width && src.data.len() >= src.stride * (height.max(1) - 1) + 3 * width);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { convert_avx2(src, width, height, y, u, v, c) };
        return;
    }
    convert(src, width, height, y, u, v, c);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn convert_avx2(
    src: Plane<'_>,
    width: usize,
    height: usize,
    y: PlaneMut<'_>,
    u: PlaneMut<'_>,
    v: PlaneMut<'_>,
    c: &Coeffs,
) {
    convert(src, width, height, y, u, v, c);
}

#[inline(always)]
fn convert(
    src: Plane<'_>,
    width: usize,
    height: usize,
    y: PlaneMut<'_>,
    u: PlaneMut<'_>,
    v: PlaneMut<'_>,
    c: &Coeffs,
) {
    let cw = width / 2;
    for row in 0..height / 2 {
        let s0 = &src.data[2 * row * src.stride..][..3 * width];
        let s1 = &src.data[(2 * row + 1) * src.stride..][..3 * width];
        luma_row(s0, &mut y.data[2 * row * y.stride..][..width], c);
        luma_row(s1, &mut y.data[(2 * row + 1) * y.stride..][..width], c);
        chroma_row(
            s0,
            s1,
            &mut u.data[row * u.stride..][..cw],
            &mut v.data[row * v.stride..][..cw],
            c,
        );
    }
}

#[inline(always)]
fn luma_row(src: &[u8], dst: &mut [u8], c: &Coeffs) {
    let off = (16 << SHIFT) + (1 << (SHIFT - 1));
    let [kr, kg, kb] = c.y;
    for (d, p) in dst.iter_mut().zip(src.chunks_exact(3)) {
        let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
        *d = ((kr * r + kg * g + kb * b + off) >> SHIFT) as u8;
    }
}

#[inline(always)]
fn chroma_row(s0: &[u8], s1: &[u8], u: &mut [u8], v: &mut [u8], c: &Coeffs) {
    // Sums of 2×2 blocks: the average is folded into the shift.
    let off = (128 << (SHIFT + 2)) + (1 << (SHIFT + 1));
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
        *du = ((ur * r + ug * g + ub * bl + off) >> (SHIFT + 2)) as u8;
        *dv = ((vr * r + vg * g + vb * bl + off) >> (SHIFT + 2)) as u8;
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
