//! RGB → HSV exactly as OpenCV converts 8-bit images (`COLOR_RGB2HSV`):
//! H in 0–179 (degrees / 2), S and V in 0–255, integer arithmetic with
//! 12-bit fixed-point reciprocal tables, so thresholds written for OpenCV
//! (thesis Algorithm 4) select the same pixels here.
//!
//! [`hsv`] converts one pixel; [`convert_row`] converts a row and is
//! compiled for AVX-512 and AVX2 as well, picked at run time.

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

/// Converts one RGB pixel to OpenCV's 8-bit HSV `(h, s, v)`.
#[inline(always)]
pub fn hsv(r: u8, g: u8, b: u8) -> (u8, u8, u8) {
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
    let mut h = (num * HDIV[d as usize & 255] + (1 << (SHIFT - 1))) >> SHIFT;
    if h < 0 {
        h += 180;
    }
    let s = (d * SDIV[v as usize & 255] + (1 << (SHIFT - 1))) >> SHIFT;
    (h as u8, s as u8, v as u8)
}

super::simd::multiversion! {
    /// Converts a row of interleaved RGB pixels into separate H, S and V rows.
    /// Converts `min(h.len(), s.len(), v.len(), rgb.len() / 3)` pixels.
    pub fn convert_row(rgb: &[u8], h: &mut [u8], s: &mut [u8], v: &mut [u8]) {
        let n = h.len().min(s.len()).min(v.len()).min(rgb.len() / 3);
        let (rgb, h, s, v) = (&rgb[..3 * n], &mut h[..n], &mut s[..n], &mut v[..n]);
        for i in 0..n {
            let (hh, ss, vv) = hsv(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
            h[i] = hh;
            s[i] = ss;
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

    /// Every one of the 2²⁴ colours converts exactly as the linked OpenCV does.
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
        let (mut h, mut s, mut v) = (vec![0u8; n], vec![0u8; n], vec![0u8; n]);
        convert_row(&rgb, &mut h, &mut s, &mut v);
        let mut bad = 0usize;
        for i in 0..n {
            let got = [h[i], s[i], v[i]];
            if got != want[3 * i..3 * i + 3] {
                if bad < 5 {
                    eprintln!(
                        "rgb {:?}: got {got:?}, OpenCV {:?}",
                        &rgb[3 * i..3 * i + 3],
                        &want[3 * i..3 * i + 3]
                    );
                }
                bad += 1;
            }
        }
        assert_eq!(bad, 0, "{bad} colours differ from OpenCV");
    }

    #[test]
    fn scalar_and_row_agree_and_hue_stays_below_180() {
        let rgb: Vec<u8> = (0..3 * 1000).map(|i| ((i * 7919) % 256) as u8).collect();
        let (mut h, mut s, mut v) = (vec![0u8; 1000], vec![0u8; 1000], vec![0u8; 1000]);
        convert_row(&rgb, &mut h, &mut s, &mut v);
        for i in 0..1000 {
            assert_eq!(
                hsv(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]),
                (h[i], s[i], v[i])
            );
            assert!(h[i] < 180);
        }
        assert_eq!(hsv(0, 0, 0), (0, 0, 0));
        assert_eq!(hsv(255, 0, 0), (0, 255, 255));
        assert_eq!(hsv(0, 255, 0), (60, 255, 255));
        assert_eq!(hsv(0, 0, 255), (120, 255, 255));
    }
}
