//! RGB → HSV exactly as OpenCV converts 8-bit images (`COLOR_RGB2HSV`):
//! H in 0–179 (degrees / 2), S and V in 0–255, integer arithmetic with
//! 12-bit fixed-point reciprocal tables, so thresholds written for OpenCV
//! (thesis Algorithm 4) select the same pixels here.
//!
//! [`hsv`] converts one pixel. The fast path, [`hue_chroma_value_row`],
//! computes hue, chroma (max − min) and value for a row (compiled for AVX2
//! as well, picked at run time) and leaves saturation as
//! a threshold test on chroma and value ([`sat_at_least`]): OpenCV's S
//! needs a second table lookup per pixel, the slowest step here.

/// Fixed-point shift of OpenCV's tables.
const SHIFT: u32 = 12;

/// `round(255·2¹² / v)` for v = 1..255 (0 for v = 0): saturation reciprocal.
static SDIV: [i32; 256] = reciprocal_table(255 << SHIFT);
/// `round(180·2¹² / (6·d))` for d = 1..255 (0 for d = 0): hue reciprocal.
static HDIV: [i32; 256] = reciprocal_table((180 << SHIFT) / 6);

/// `round(num / i)` for i = 1..255, 0 at i = 0. No quotient here is ever
/// exactly halfway (num = 2¹³·k with odd k while i < 2¹³), so rounding
/// half up equals OpenCV's round-half-even.
const fn reciprocal_table(num: i32) -> [i32; 256] {
    let mut t = [0i32; 256];
    let mut i = 1;
    while i < 256 {
        t[i] = (2 * num + i as i32) / (2 * i as i32);
        i += 1;
    }
    t
}

/// OpenCV's hue numerator, chroma `d` (max − min) and value `v` of a
/// pixel: the hue is `num / (6·d)` of the circle (negative `num` wraps).
#[inline(always)]
fn hue_numerator(r: u8, g: u8, b: u8) -> (i32, i32, i32) {
    let (r, g, b) = (r as i32, g as i32, b as i32);
    let v = r.max(g).max(b);
    let d = v - r.min(g).min(b);
    let num = if v == r {
        g - b
    } else if v == g {
        b - r + 2 * d
    } else {
        r - g + 4 * d
    };
    (num, d, v)
}

/// Converts one RGB pixel to OpenCV's 8-bit HSV `(h, s, v)`.
#[inline(always)]
pub fn hsv(r: u8, g: u8, b: u8) -> (u8, u8, u8) {
    let (num, d, v) = hue_numerator(r, g, b);
    let mut h = (num * HDIV[d as usize & 255] + (1 << (SHIFT - 1))) >> SHIFT;
    if h < 0 {
        h += 180;
    }
    let s = (d * SDIV[v as usize & 255] + (1 << (SHIFT - 1))) >> SHIFT;
    (h as u8, s as u8, v as u8)
}

/// Whether a pixel with chroma `c` (max − min of R, G, B) and value `v`
/// has saturation `c·255/v ≥ t` in exact rational arithmetic (`false`
/// when `v = 0`). For `t` = 101 and 120 — the thesis's tests `s > 100`
/// and `s < 120` — this equals OpenCV's rounded fixed-point S for every
/// pixel (tested exhaustively); for some other `t` it differs from OpenCV
/// on a handful of the 2¹⁶ (c, v) pairs.
#[inline(always)]
pub fn sat_at_least(c: u8, v: u8, t: u8) -> bool {
    // c·255/v ≥ t − ½  ⇔  c·510 ≥ (2t − 1)·v  ⇔  c·255 ≥ (t − 1)·v + ⌈v/2⌉
    // (both sides integers), which stays within 16 bits so it vectorises
    // with 16-bit lanes.
    let (c, v) = (c as u16, v as u16);
    // Non-short-circuit operators: no branches, so loops vectorise.
    (v > 0)
        & ((t == 0)
            | (c * 255
                >= (t as u16)
                    .wrapping_sub(1)
                    .wrapping_mul(v)
                    .wrapping_add(v.div_ceil(2))))
}

/// Saturation from chroma and value rounded as [`sat_at_least`] counts it:
/// `⌊c·255/v + ½⌋` (0 when `v = 0`), so `saturation(c, v) ≥ t` exactly
/// when `sat_at_least(c, v, t)`. Within 1 of OpenCV's S.
#[inline]
pub fn saturation(c: u8, v: u8) -> u8 {
    if v == 0 {
        0
    } else {
        ((c as u32 * 510 + v as u32) / (2 * v as u32)).min(255) as u8
    }
}

/// Hue, chroma and value of one RGB pixel: OpenCV's `h` and `v`, and
/// `c = max − min` (from which saturation follows, see [`sat_at_least`]).
#[inline(always)]
pub fn hue_chroma_value(r: u8, g: u8, b: u8) -> (u8, u8, u8) {
    let (num, d, v) = hue_numerator(r, g, b);
    let mut h = (num * hue_reciprocal(d) + (1 << (SHIFT - 1))) >> SHIFT;
    if h < 0 {
        h += 180;
    }
    (h as u8, d as u8, v as u8)
}

/// [`HDIV`]`[d]` computed with one f32 division instead of a table lookup:
/// vectorised table lookups (gathers) are slow, divisions are not. The
/// division is correctly rounded and no quotient is near a half, so this
/// equals the table for every d (tested).
#[inline(always)]
fn hue_reciprocal(d: i32) -> i32 {
    let q = ((180 << SHIFT) as f32 / 6.0 / d.max(1) as f32).round_ties_even();
    // SAFETY: q is finite and within 482..=122880, so it fits an i32.
    let r = unsafe { q.to_int_unchecked::<i32>() };
    if d == 0 { 0 } else { r }
}

/// The hue of a pixel as an exact fraction without dividing: returns
/// `(p, c, v)` with chroma `c`, value `v` and `p` in `0..6c` such that the
/// hue, in OpenCV's units (0–180 for the full circle), is exactly `30·p/c`
/// (`p = 0` for greys). Hue windows can then be tested with
/// multiplications only ([`hue_in_window`]), in 16-bit lanes.
#[inline(always)]
pub fn hue_fraction(r: u8, g: u8, b: u8) -> (u16, u8, u8) {
    let (r, g, b) = (r as i16, g as i16, b as i16);
    let v = r.max(g).max(b);
    let c = v - r.min(g).min(b);
    let num = if v == r {
        g - b
    } else if v == g {
        b - r + 2 * c
    } else {
        r - g + 4 * c
    };
    let p = if num < 0 { num + 6 * c } else { num };
    (p as u16, c as u8, v as u8)
}

/// `⌊30·p/c⌋` for a [`hue_fraction`]: a hue bin 0–179 within 1 of OpenCV's
/// rounded hue (0 for greys).
#[inline]
pub fn hue_bin(p: u16, c: u8) -> u8 {
    // 30·p < 2^16 for every hue fraction (p < 6c ≤ 1530), and for such
    // numerators multiplying by ⌈2^24 / c⌉ and shifting is exact division
    // (tested for every pair); c = 0 has reciprocal 0, giving bin 0.
    let q = ((30 * u64::from(p)) * u64::from(BIN_RECIPROCAL[c as usize])) >> 24;
    q.min(179) as u8
}

/// `⌈2^24 / c⌉` for c = 1‥255 (0 for c = 0): division-free [`hue_bin`].
static BIN_RECIPROCAL: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut c = 1;
    while c < 256 {
        t[c] = (1u32 << 24).div_ceil(c as u32);
        c += 1;
    }
    t
};

/// Whether the hue bin ([`hue_bin`]) of `(p, c)` lies in the window of
/// `span + 1` bins starting at `lo` (wrapping past 179), using only 16-bit
/// multiplications; greys (`c = 0`) are in no window.
#[inline(always)]
pub fn hue_in_window(p: u16, c: u8, lo: u8, span: u8) -> bool {
    // bin ≥ lo ⇔ 30p ≥ lo·c; bin < end ⇔ 30p < end·c.
    let (x, c16) = (30 * p, c as u16);
    let end = lo as u16 + span as u16 + 1;
    let above = x >= lo as u16 * c16;
    let inside = if end <= 180 {
        above & (x < end * c16)
    } else {
        above | (x < (end - 180) * c16)
    };
    inside & (c > 0)
}

crate::simd::multiversion! {
    /// The statistics of a row of interleaved RGB pixels: [`hue_bin`],
    /// chroma, value and [`saturation`] of each, computed with f32
    /// divisions so the loop vectorises (the quotients are exact: integer
    /// numerators below 2²⁴ and no true quotient within 2⁻¹⁴ below an
    /// integer; tested for every input). Converts as many pixels as all fit.
    pub fn bin_chroma_value_sat_row(rgb: &[u8], bin: &mut [u8], c: &mut [u8], v: &mut [u8], s: &mut [u8]) {
        let n = bin.len().min(c.len()).min(v.len()).min(s.len()).min(rgb.len() / 3);
        let (rgb, bin, c, v, s) = (&rgb[..3 * n], &mut bin[..n], &mut c[..n], &mut v[..n], &mut s[..n]);
        for i in 0..n {
            let (p, cc, vv) = hue_fraction(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
            bin[i] = bin_by_division(p, cc);
            c[i] = cc;
            v[i] = vv;
            s[i] = saturation_by_division(cc, vv);
        }
    }
}

/// [`hue_bin`] with one f32 division (vectorises; no table lookup).
#[inline(always)]
fn bin_by_division(p: u16, c: u8) -> u8 {
    // 0/1 for greys (p = 0 when c = 0).
    let q = (30.0 * p as f32 / (c.max(1)) as f32).floor();
    // SAFETY: 0 ≤ q < 180 (p < 6c), so it fits a u32.
    (unsafe { q.to_int_unchecked::<u32>() }).min(179) as u8
}

/// [`saturation`] with one f32 division (vectorises).
#[inline(always)]
fn saturation_by_division(c: u8, v: u8) -> u8 {
    // 0/2 for black (c = v = 0).
    let q = ((c as u32 * 510 + v as u32) as f32 / (2 * (v.max(1) as u32)) as f32).floor();
    // SAFETY: 0 ≤ q ≤ 510.5, so it fits a u32.
    (unsafe { q.to_int_unchecked::<u32>() }).min(255) as u8
}

crate::simd::multiversion! {
    /// Converts a row of interleaved RGB pixels into hue, chroma and value
    /// rows ([`hue_chroma_value`]); converts as many pixels as all fit.
    pub fn hue_chroma_value_row(rgb: &[u8], h: &mut [u8], c: &mut [u8], v: &mut [u8]) {
        let n = h.len().min(c.len()).min(v.len()).min(rgb.len() / 3);
        let (rgb, h, c, v) = (&rgb[..3 * n], &mut h[..n], &mut c[..n], &mut v[..n]);
        for i in 0..n {
            let (hh, cc, vv) = hue_chroma_value(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
            h[i] = hh;
            c[i] = cc;
            v[i] = vv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::Mat;
    use opencv::imgproc;
    use opencv::prelude::*;

    /// Every one of the 2²⁴ colours converts exactly as the linked OpenCV
    /// does, and the row kernel gives the same hue, chroma and value.
    #[test]
    fn matches_opencv_on_every_colour() {
        let n = 1usize << 24;
        let mut rgb = vec![0u8; 3 * n];
        for (i, p) in rgb.chunks_exact_mut(3).enumerate() {
            p[0] = (i >> 16) as u8;
            p[1] = (i >> 8) as u8;
            p[2] = i as u8;
        }
        let src = Mat::new_rows_cols_with_data(4096, 4096 * 3, &rgb).unwrap();
        let src = src.reshape(3, 4096).unwrap();
        let mut dst = Mat::default();
        imgproc::cvt_color_def(&src, &mut dst, imgproc::COLOR_RGB2HSV).unwrap();
        let want = dst.data_bytes().unwrap();
        let (mut h, mut c, mut v) = (vec![0u8; n], vec![0u8; n], vec![0u8; n]);
        hue_chroma_value_row(&rgb, &mut h, &mut c, &mut v);
        let mut bad = 0usize;
        for i in 0..n {
            let p = &rgb[3 * i..3 * i + 3];
            let got = hsv(p[0], p[1], p[2]);
            let row_ok = (h[i], v[i]) == (got.0, got.2) && c[i] == got.2 - p.iter().min().unwrap();
            if [got.0, got.1, got.2] != want[3 * i..3 * i + 3] || !row_ok {
                if bad < 5 {
                    eprintln!("rgb {p:?}: got {got:?}, OpenCV {:?}", &want[3 * i..3 * i + 3]);
                }
                bad += 1;
            }
        }
        assert_eq!(bad, 0, "{bad} colours differ from OpenCV");
    }

    #[test]
    fn rational_saturation_tests_equal_opencv_for_the_thesis_thresholds() {
        for v in 0..=255u8 {
            for c in 0..=v {
                let s = (c as i32 * SDIV[v as usize] + (1 << (SHIFT - 1))) >> SHIFT;
                assert_eq!(sat_at_least(c, v, 101), s > 100, "c={c} v={v}");
                assert_eq!(sat_at_least(c, v, 120), s >= 120, "c={c} v={v}");
            }
        }
    }

    #[test]
    fn sixteen_bit_saturation_test_equals_the_rational_definition() {
        for v in 0..=255u32 {
            for c in 0..=v {
                for t in 0..=255u32 {
                    let exact = v > 0 && c * 510 >= (2 * t).saturating_sub(1) * v;
                    assert_eq!(
                        sat_at_least(c as u8, v as u8, t as u8),
                        exact,
                        "c={c} v={v} t={t}"
                    );
                }
            }
        }
    }

    #[test]
    fn division_equals_the_reciprocal_table() {
        for d in 0..=255 {
            assert_eq!(hue_reciprocal(d), HDIV[d as usize], "d={d}");
        }
    }

    #[test]
    fn hue_fraction_bins_and_windows() {
        let mut worst = 0;
        for i in (0..1u32 << 24).step_by(7) {
            let (r, g, b) = ((i >> 16) as u8, (i >> 8) as u8, i as u8);
            let (p, c, v) = hue_fraction(r, g, b);
            let (h, _, vv) = hsv(r, g, b);
            assert_eq!(v, vv);
            assert!(p < 6 * c as u16 || (p == 0 && c == 0));
            let bin = hue_bin(p, c);
            let diff = (bin as i32 - h as i32)
                .rem_euclid(180)
                .min((h as i32 - bin as i32).rem_euclid(180));
            worst = worst.max(diff);
            for (lo, span) in [(40u8, 20u8), (170, 20), (0, 179), (bin, 0)] {
                let end = lo as u32 + span as u32;
                let want = c > 0
                    && if end < 180 {
                        (lo..=end as u8).contains(&bin)
                    } else {
                        bin >= lo || (bin as u32) <= end - 180
                    };
                assert_eq!(
                    hue_in_window(p, c, lo, span),
                    want,
                    "rgb ({r},{g},{b}) lo={lo} span={span}"
                );
            }
        }
        assert!(worst <= 1, "hue bins differ from OpenCV by {worst}");
    }

    #[test]
    fn row_statistics_equal_the_scalar_functions_for_every_input() {
        for c in 0..=255u8 {
            for p in 0..(6 * c as u16).max(1) {
                assert_eq!(bin_by_division(p, c), hue_bin(p, c), "p={p} c={c}");
            }
            for v in c..=255u8 {
                assert_eq!(saturation_by_division(c, v), saturation(c, v), "c={c} v={v}");
            }
        }
        // And the row kernel on a row of every colour with a given red.
        for r in (0..=255u8).step_by(15) {
            let rgb: Vec<u8> = (0..1usize << 16)
                .flat_map(|i| [r, (i >> 8) as u8, i as u8])
                .collect();
            let n = 1 << 16;
            let (mut b, mut c, mut v, mut s) = (vec![0; n], vec![0; n], vec![0; n], vec![0; n]);
            bin_chroma_value_sat_row(&rgb, &mut b, &mut c, &mut v, &mut s);
            for i in 0..n {
                let (p, cc, vv) = hue_fraction(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
                assert_eq!(
                    (b[i], c[i], v[i], s[i]),
                    (hue_bin(p, cc), cc, vv, saturation(cc, vv)),
                    "rgb {:?}",
                    &rgb[3 * i..3 * i + 3]
                );
            }
        }
    }

    #[test]
    fn hue_bin_is_exact_division() {
        for c in 0..=255u8 {
            for p in 0..(6 * c as u16).max(1) {
                let want = if c == 0 {
                    0
                } else {
                    ((30 * p as u32) / c as u32).min(179) as u8
                };
                assert_eq!(hue_bin(p, c), want, "p={p} c={c}");
            }
        }
    }

    #[test]
    fn known_colours() {
        assert_eq!(hsv(0, 0, 0), (0, 0, 0));
        assert_eq!(hsv(255, 0, 0), (0, 255, 255));
        assert_eq!(hsv(0, 255, 0), (60, 255, 255));
        assert_eq!(hsv(0, 0, 255), (120, 255, 255));
        assert_eq!(hue_chroma_value(40, 140, 40), (60, 100, 140));
        assert!(sat_at_least(100, 140, 182) && !sat_at_least(100, 140, 183));
        assert!(!sat_at_least(0, 0, 0));
        for v in 0..=255u8 {
            for c in 0..=v {
                let s = saturation(c, v);
                let opencv = hsv(v, v - c, v - c).1;
                assert!(s.abs_diff(opencv) <= 1, "c={c} v={v}");
                for t in 1..=255u8 {
                    assert_eq!(s >= t, sat_at_least(c, v, t), "c={c} v={v} t={t}");
                }
            }
        }
    }
}
