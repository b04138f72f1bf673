//! Decoded frames as pictures for the screen ([`Picture`]): a video's
//! own YUV 4:2:0 planes as they are, converted on the GPU
//! ([`super::gpu`]), or, for pictures without planes (a still image, a
//! rendered match, a rotated or 10-bit video) and where no GPU converts,
//! RGB as egui's opaque `Color32` — at full size (an AVX2 kernel writing
//! past the cache) or reduced by whole factors, each block averaged
//! (halving has an AVX2 kernel too; larger factors, for 4K video in a
//! window, sum each block's rows down the columns in vectors first). The
//! RGB pictures are written once, into memory neither zeroed nor filled
//! before.

use std::mem::MaybeUninit;
use std::sync::Arc;

use eframe::egui::{Color32, ColorImage};

use crate::image::RgbImage;
use crate::simd::multiversion;
use crate::video::Picture420;
use crate::video::source::SourceFrame;

/// A frame as the screen takes it.
#[derive(Clone, Debug)]
pub enum Picture {
    /// RGB pixels, possibly reduced, for an egui texture.
    Rgb(Arc<ColorImage>),
    /// The decoded planes (with the drawing in them), full size, for the
    /// GPU to convert.
    Planes(Arc<Picture420>),
}

impl Picture {
    /// The RGB pixels, when the picture is RGB.
    pub fn rgb(&self) -> Option<&Arc<ColorImage>> {
        match self {
            Picture::Rgb(c) => Some(c),
            Picture::Planes(_) => None,
        }
    }

    /// Whether the picture is the video's planes.
    pub fn is_planes(&self) -> bool {
        matches!(self, Picture::Planes(_))
    }
}

/// `frame` as planes for the GPU, when it has them: as decoded, or with
/// the drawing the pipeline blended into them; parts painted in the RGB
/// picture and marked changed are converted into them first
/// ([`crate::video::Yuv420::bake`], the colours subsampled as an export's
/// are). `None` for a frame without planes, or whose RGB painting cannot
/// go into its planes (full range): then it is shown from RGB.
pub fn planes_of(frame: &mut SourceFrame) -> Option<Arc<Picture420>> {
    let yuv = frame.yuv.as_mut()?;
    if !yuv.changed().is_empty() && !yuv.rgb_pending() {
        yuv.bake(frame.image.as_slice()?).ok()?;
    }
    yuv.picture().map(Arc::new)
}

/// An RGB frame as an egui image (opaque).
pub fn to_color_image(img: &RgbImage) -> ColorImage {
    to_color_image_reduced(img, 1)
}

/// An RGB frame as an egui image, each `k`×`k` block averaged into one
/// pixel (the right and bottom edges that do not fill a block are dropped).
pub fn to_color_image_reduced(img: &RgbImage, k: usize) -> ColorImage {
    let (h, w, _) = img.dim();
    let k = k.clamp(1, w.max(1).min(h.max(1)));
    let std = img.as_standard_layout();
    let Some(src) = std.as_slice() else {
        return ColorImage::new([w, h], vec![Color32::BLACK; w * h]);
    };
    if k == 1 {
        // SAFETY: `rgb_to_opaque` returns how many pixels it wrote, from
        // the first.
        let pixels = unsafe { filled(w * h, |out| rgb_to_opaque(src, out)) };
        return ColorImage::new([w, h], pixels);
    }
    let (ow, oh) = (w / k, h / k);
    let row_bytes = w * 3;
    if k == 2 {
        // The common case (1080p shown at about half size).
        // SAFETY: each row's prefix of `halve_rows`'s count is written, and
        // the count stops at the first row it does not fill.
        let pixels = unsafe {
            filled(ow * oh, |out| {
                let mut made = 0;
                for (oy, row) in out.chunks_exact_mut(ow).enumerate() {
                    let n = halve_rows(src, 2 * oy * row_bytes, (2 * oy + 1) * row_bytes, row);
                    made += n;
                    if n < ow {
                        break;
                    }
                }
                made
            })
        };
        return ColorImage::new([ow, oh], pixels);
    }
    let mut pixels = Vec::with_capacity(ow * oh);
    let m = ((1u32 << 16) as f64 / (k * k) as f64).round() as u32;
    // Each block's k rows are first summed down the columns (a plain loop
    // over bytes, which the compiler vectorizes), then k neighbouring
    // columns across: the per-pixel work is done once per block row, not
    // once per picture row.
    let used = ow * k * 3;
    let mut columns = vec![0u32; used];
    for oy in 0..oh {
        columns.fill(0);
        for dy in 0..k {
            let start = (oy * k + dy) * row_bytes;
            add_bytes(&mut columns, &src[start..start + used]);
        }
        // Division by k² as a multiplication (a sum is at most k²·255, so
        // the product stays near 255·2¹⁶).
        let avg = |v: u32| ((v * m + (1 << 15)) >> 16).min(255) as u8;
        pixels.extend(columns.chunks_exact(3 * k).map(|block| {
            let (mut r, mut g, mut b) = (0u32, 0u32, 0u32);
            for p in block.chunks_exact(3) {
                r += p[0];
                g += p[1];
                b += p[2];
            }
            Color32::from_rgb(avg(r), avg(g), avg(b))
        }));
    }
    ColorImage::new([ow, oh], pixels)
}

multiversion! {
    /// Adds each byte of `row` to its column's sum.
    fn add_bytes(sums: &mut [u32], row: &[u8]) {
        for (s, &v) in sums.iter_mut().zip(row) {
            *s += v as u32;
        }
    }
}

/// One row of the half-size picture: each pixel of `out` the rounded mean
/// of a 2×2 block of the rows starting at bytes `a` and `b` of `src`.
/// Returns how many pixels it wrote, from the first: all of them, unless
/// `src` ends before the rows do.
fn halve_rows(src: &[u8], a: usize, b: usize, out: &mut [MaybeUninit<Color32>]) -> usize {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2() {
        // SAFETY: AVX2 is available; the kernel checks its reads against
        // `src` and writes within `out`.
        done = unsafe { halve_rows_avx2(src, a, b, out) };
    }
    halve_rows_scalar(src, a, b, out, done)
}

/// [`halve_rows`] from output pixel `from` on, one pixel at a time;
/// returns how many pixels of `out` are written then (`from` if `src`
/// ends before the rows do).
fn halve_rows_scalar(src: &[u8], a: usize, b: usize, out: &mut [MaybeUninit<Color32>], from: usize) -> usize {
    let n = out.len();
    let (Some(ra), Some(rb)) = (src.get(a + 6 * from..a + 6 * n), src.get(b + 6 * from..b + 6 * n)) else {
        return from;
    };
    for ((d, p), q) in out[from..]
        .iter_mut()
        .zip(ra.chunks_exact(6))
        .zip(rb.chunks_exact(6))
    {
        let avg = |i: usize| ((p[i] as u16 + p[i + 3] as u16 + q[i] as u16 + q[i + 3] as u16 + 2) >> 2) as u8;
        d.write(Color32::from_rgb(avg(0), avg(1), avg(2)));
    }
    n
}

/// The vector part of [`halve_rows`]: four output pixels a step, from 12
/// bytes of each row per 16-byte lane; returns how many pixels it made.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn halve_rows_avx2(src: &[u8], a: usize, b: usize, out: &mut [MaybeUninit<Color32>]) -> usize {
    use std::arch::x86_64::*;
    // Within a lane: the two pixels of each block's row side by side, per
    // channel (r r g g b b of the first output pixel, then the second).
    let pair = _mm256_setr_epi8(
        0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1, //
        0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, -1, -1, -1, -1,
    );
    let ones = _mm256_set1_epi8(1);
    let two = _mm256_set1_epi16(2);
    // The six channel bytes of each lane (after packing) to two RGBA pixels.
    let spread = _mm256_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
        0, 1, 2, -1, 3, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    );
    let opaque = _mm256_set1_epi32(0xff00_0000_u32 as i32);
    let n = out.len();
    let mut i = 0;
    // Each step reads 28 bytes of each row from pixel pair `i`.
    while i + 4 <= n && a.max(b) + 6 * i + 28 <= src.len() {
        // SAFETY: the loop's condition bounds the loads (16 bytes at
        // offsets 0 and 12 from `6i`, in both rows) and the stores (pixels
        // `i` to `i + 3`).
        unsafe {
            let load = |row: usize| {
                let p = src.as_ptr().add(row + 6 * i);
                let lo = _mm_loadu_si128(p as *const __m128i);
                let hi = _mm_loadu_si128(p.add(12) as *const __m128i);
                let both = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
                // Sums of each row's two pixels, per channel, in 16 bits.
                _mm256_maddubs_epi16(_mm256_shuffle_epi8(both, pair), ones)
            };
            let sum = _mm256_add_epi16(_mm256_add_epi16(load(a), load(b)), two);
            let mean = _mm256_srli_epi16::<2>(sum);
            let bytes = _mm256_packus_epi16(mean, mean);
            let rgba = _mm256_or_si256(_mm256_shuffle_epi8(bytes, spread), opaque);
            // The first 8 bytes of each lane are two pixels.
            let d = out.as_mut_ptr().add(i) as *mut u8;
            _mm_storel_epi64(d as *mut __m128i, _mm256_castsi256_si128(rgba));
            _mm_storel_epi64(d.add(8) as *mut __m128i, _mm256_extracti128_si256::<1>(rgba));
        }
        i += 4;
    }
    i
}

/// `n` pixels written by `fill` straight into a new vector's memory,
/// which is neither zeroed nor filled first: a 1080p picture is 8 MB, and
/// writing it twice costs as much as converting it. `fill` writes a prefix
/// of the slice it is given and returns its length; pixels past it (none,
/// for a frame of the size it claims) are black.
///
/// # Safety
/// `fill` must have initialized every pixel of the prefix it returns.
unsafe fn filled(n: usize, fill: impl FnOnce(&mut [MaybeUninit<Color32>]) -> usize) -> Vec<Color32> {
    let mut pixels = Vec::with_capacity(n);
    let made = fill(&mut pixels.spare_capacity_mut()[..n]).min(n);
    // SAFETY: the caller's `fill` initialized the first `made` pixels, and
    // `made ≤ n ≤ capacity`.
    unsafe { pixels.set_len(made) };
    pixels.resize(n, Color32::BLACK);
    pixels
}

const _: () = assert!(
    std::mem::size_of::<Color32>() == std::mem::size_of::<u32>()
        && std::mem::align_of::<Color32>() == std::mem::align_of::<u32>()
);

/// Packed RGB pixels as opaque `Color32`s, as many as both hold.
///
/// A 1080p frame is 6 MB in and 8 MB out, and in the window the copy
/// competes with software rendering for memory bandwidth. With AVX2 the
/// output is written with streaming stores, which skip reading the
/// destination's cache lines before writing them: the picture goes to the
/// UI thread, not back through this one.
///
/// Returns how many pixels it wrote, from the first.
fn rgb_to_opaque(src: &[u8], dst: &mut [MaybeUninit<Color32>]) -> usize {
    let n = dst.len().min(src.len() / 3);
    let (src, dst) = (&src[..3 * n], &mut dst[..n]);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2() {
        // SAFETY: AVX2 is available; `dst` holds `n` pixels and `src` `3n`
        // bytes, the lengths the kernel is given.
        done = unsafe { rgb_to_opaque_avx2(src, dst) };
    }
    for (d, p) in dst[done..].iter_mut().zip(src[3 * done..].chunks_exact(3)) {
        d.write(Color32::from_rgb(p[0], p[1], p[2]));
    }
    n
}

/// The vector part of [`rgb_to_opaque`]: converts a prefix of the pixels
/// and returns how many (the rest is left to scalar code).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rgb_to_opaque_avx2(src: &[u8], dst: &mut [MaybeUninit<Color32>]) -> usize {
    use std::arch::x86_64::*;
    let n = dst.len().min(src.len() / 3);
    // Scalar pixels until the output is 32-byte aligned, as streaming
    // stores need (`Color32` is four bytes, aligned to four).
    let misaligned = (dst.as_ptr() as usize) % 32 / 4;
    let mut i = if misaligned == 0 {
        0
    } else {
        (8 - misaligned).min(n)
    };
    for (d, p) in dst[..i].iter_mut().zip(src.chunks_exact(3)) {
        d.write(Color32::from_rgb(p[0], p[1], p[2]));
    }
    // Each 16-byte lane takes four pixels (12 bytes) of a 16-byte load and
    // spreads them to RGBA; the alpha bytes come from the OR.
    let spread = _mm256_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, //
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
    );
    let opaque = _mm256_set1_epi32(0xff00_0000_u32 as i32);
    // Eight pixels a step; the second load reads 16 bytes from pixel 4, so
    // 28 source bytes must be there.
    while i + 8 <= n && 3 * i + 28 <= src.len() {
        // SAFETY: `3i + 28 ≤ src.len()` bounds both loads, `i + 8 ≤ n`
        // the store, whose address is 32-byte aligned (the scalar head
        // made it so, and each step adds 32 bytes).
        unsafe {
            let p = src.as_ptr().add(3 * i);
            let lo = _mm_loadu_si128(p as *const __m128i);
            let hi = _mm_loadu_si128(p.add(12) as *const __m128i);
            let both = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
            let rgba = _mm256_or_si256(_mm256_shuffle_epi8(both, spread), opaque);
            _mm256_stream_si256(dst.as_mut_ptr().add(i) as *mut __m256i, rgba);
        }
        i += 8;
    }
    // Streaming stores are weakly ordered: finish them before the picture
    // is handed to another thread.
    _mm_sfence();
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_color_image_keeps_channels() {
        let mut img = RgbImage::zeros((2, 3, 3));
        img[[1, 2, 0]] = 10;
        img[[1, 2, 1]] = 20;
        img[[1, 2, 2]] = 30;
        let c = to_color_image(&img);
        assert_eq!(c.size, [3, 2]);
        assert_eq!(c.pixels[5], Color32::from_rgb(10, 20, 30));
    }

    #[test]
    fn reduced_images_average_blocks() {
        let mut img = RgbImage::zeros((5, 7, 3));
        img[[0, 0, 0]] = 100;
        img[[1, 1, 0]] = 100;
        img[[0, 2, 1]] = 40;
        let c = to_color_image_reduced(&img, 2);
        assert_eq!(c.size, [3, 2]);
        assert_eq!(c.pixels[0], Color32::from_rgb(50, 0, 0));
        assert_eq!(c.pixels[1], Color32::from_rgb(0, 10, 0));
        assert_eq!(to_color_image_reduced(&img, 1), to_color_image(&img));
        let c3 = to_color_image_reduced(&img, 3);
        assert_eq!(c3.size, [2, 1]);
        assert_eq!(c3.pixels[0], Color32::from_rgb(22, 4, 0));
        assert_eq!(to_color_image_reduced(&img, 100).size, [1, 1]);
    }

    #[test]
    fn larger_reductions_are_the_rounded_block_means() {
        // Sizes that leave partial blocks at the right and bottom edges.
        for (k, h, w) in [(3, 10, 17), (4, 9, 23), (4, 16, 16), (5, 11, 26), (3, 3, 3)] {
            let img =
                RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| ((x * 89 + y * 53 + c * 101) % 256) as u8);
            let got = to_color_image_reduced(&img, k);
            let (ow, oh) = (w / k, h / k);
            assert_eq!(got.size, [ow, oh]);
            for oy in 0..oh {
                for ox in 0..ow {
                    // The block's sum, divided by k² as the conversion does:
                    // a multiplication by 2¹⁶ / k², rounded (within one
                    // level of the exact mean).
                    let m = ((1u32 << 16) as f64 / (k * k) as f64).round() as u32;
                    let mean = |c: usize| {
                        let sum: u32 = (0..k)
                            .flat_map(|dy| (0..k).map(move |dx| (dy, dx)))
                            .map(|(dy, dx)| img[[oy * k + dy, ox * k + dx, c]] as u32)
                            .sum();
                        let exact = sum as f64 / (k * k) as f64;
                        let v = ((sum * m + (1 << 15)) >> 16).min(255) as u8;
                        assert!(
                            (v as f64 - exact).abs() <= 1.0,
                            "k {k}: {v} for a mean of {exact}"
                        );
                        v
                    };
                    let want = Color32::from_rgb(mean(0), mean(1), mean(2));
                    assert_eq!(got.pixels[oy * ow + ox], want, "k {k} pixel ({ox}, {oy})");
                }
            }
        }
    }

    #[test]
    fn halving_matches_the_scalar_mean() {
        // Rows of every width up to a few vectors, from an image whose
        // last row ends right after them (the kernel must stop in time).
        for ow in 1..40 {
            let w = 2 * ow + 1;
            let img =
                RgbImage::from_shape_fn((4, w, 3), |(y, x, c)| ((x * 53 + y * 101 + c * 29) % 256) as u8);
            let fast = to_color_image_reduced(&img, 2);
            assert_eq!(fast.size, [ow, 2]);
            let src = img.as_slice().unwrap();
            for oy in 0..2 {
                let mut slow = vec![MaybeUninit::new(Color32::TRANSPARENT); ow];
                let made = halve_rows_scalar(src, 2 * oy * 3 * w, (2 * oy + 1) * 3 * w, &mut slow, 0);
                assert_eq!(made, ow);
                let slow = init(&slow);
                assert_eq!(
                    &fast.pixels[oy * ow..(oy + 1) * ow],
                    &slow[..],
                    "width {ow} row {oy}"
                );
            }
        }
        // Extremes: all 255 stays 255, the rounding of 1 + 1 + 1 + 0.
        let mut img = RgbImage::from_elem((2, 16, 3), 255);
        img[[0, 0, 0]] = 1;
        img[[0, 1, 0]] = 1;
        img[[1, 0, 0]] = 1;
        img[[1, 1, 0]] = 0;
        let c = to_color_image_reduced(&img, 2);
        assert_eq!(c.pixels[0], Color32::from_rgb(1, 255, 255));
        assert!(c.pixels[1..].iter().all(|&p| p == Color32::WHITE));
    }

    #[test]
    fn opaque_conversion_matches_pixel_by_pixel() {
        // Every length up to a few vectors, every alignment of the output.
        let src: Vec<u8> = (0..3 * 200).map(|i| (i * 37 % 251) as u8).collect();
        for n in 0..80 {
            for offset in 0..8 {
                let mut out = vec![MaybeUninit::new(Color32::TRANSPARENT); n + offset];
                assert_eq!(rgb_to_opaque(&src[..3 * n], &mut out[offset..]), n);
                let out = init(&out);
                for (i, c) in out[offset..].iter().enumerate() {
                    let p = &src[3 * i..3 * i + 3];
                    assert_eq!(
                        *c,
                        Color32::from_rgb(p[0], p[1], p[2]),
                        "n {n} offset {offset} pixel {i}"
                    );
                }
                assert!(out[..offset].iter().all(|&c| c == Color32::TRANSPARENT));
            }
        }
        // A short source converts only what it holds.
        let mut out = vec![MaybeUninit::new(Color32::TRANSPARENT); 10];
        assert_eq!(rgb_to_opaque(&src[..3 * 4 + 2], &mut out), 4);
        let out = init(&out);
        assert_eq!(out[3], Color32::from_rgb(src[9], src[10], src[11]));
        assert_eq!(out[4], Color32::TRANSPARENT);
    }

    /// Pixels that the tests initialized before handing them out.
    fn init(v: &[MaybeUninit<Color32>]) -> Vec<Color32> {
        // SAFETY: every test vector is made with `MaybeUninit::new`.
        v.iter().map(|p| unsafe { p.assume_init() }).collect()
    }

    #[test]
    fn pictures_cut_short_are_black_past_their_pixels() {
        // A frame whose buffer holds fewer pixels than its size claims
        // cannot be made here (ndarray checks), so `filled` is tested
        // alone: what `fill` does not write is black, not garbage.
        let v = unsafe {
            filled(6, |out| {
                out[0].write(Color32::WHITE);
                out[1].write(Color32::RED);
                2
            })
        };
        assert_eq!(v[..2], [Color32::WHITE, Color32::RED]);
        assert!(v[2..].iter().all(|&p| p == Color32::BLACK));
        assert_eq!(v.len(), 6);
    }
}
