//! Drawing the overlay: log primitives mapped through the calibration and
//! rasterized, anti-aliased, into an RGBA layer that is then composited
//! onto the video frame only where the floor mask allows (thesis
//! Algorithm 5, with adaptive circle sampling and real line widths).
//!
//! - [`Overlay`]: the premultiplied RGBA layer for one frame, with the rows
//!   it touched remembered so clearing and compositing cost what was drawn.
//! - [`Painter`]: draws one primitive at a time. Each primitive is first
//!   rasterized into a coverage layer ([`raster::Coverage`]) and then
//!   blended once, so a translucent polyline is not darker where its
//!   segments overlap.
//! - [`text`]: the bundled font and glyph cache.
//! - [`points`]: sets of points (clouds, scans) as squares of pixels;
//!   [`cells`]: a grid's cells as one filled area, the drawing kept while
//!   the camera stays.
//!
//! Image coordinates put pixel centres at integers (OpenCV's convention).
//! Input that cannot be drawn sensibly (NaN or infinite coordinates,
//! non-positive radius, negative thickness, empty or absurdly large text)
//! is skipped with a [`SkipReason`]; huge but finite coordinates are
//! clipped, never looped over.

pub mod cells;
pub mod occlude;
mod planes;
pub mod points;
pub mod raised;
pub mod raster;
pub mod text;

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::calib::Calibration;
use crate::floor::FloorMask;
use crate::geom::PixelPoint;
use crate::geom::Vec2;
use crate::image::RgbImage;
use crate::log::{MarkerKind, Primitive, Rgba, Shape, Style, ThicknessUnit};
use crate::simd::Avx2;

pub use planes::{Canvas, tint_planes};

use raster::{ChunkDirty, Coverage};
use text::TextRenderer;

/// Chord error allowed when circles and bent lines become polygons, in px.
pub const TOLERANCE_PX: f64 = 0.25;

/// Colour of the floor tint (thesis Figure 3.5 shows mask pixels in pink).
pub const TINT: Rgba = Rgba(0xff00_c0ff);

/// Opacity of the drop shadow under text (for opaque text), out of 255.
pub const TEXT_SHADOW_ALPHA: u8 = 150;

/// Opacity of the outline around text and of the box behind it (for
/// opaque text), out of 255.
pub const TEXT_BACKDROP_ALPHA: u8 = 190;

/// How text is set off from the picture behind it, so that small text
/// stays readable on any floor (the session's `[draw] text`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextBackdrop {
    /// A dark outline around every glyph.
    #[default]
    Outline,
    /// A dark box behind the text.
    Box,
    /// A soft drop shadow only (how text was drawn before).
    Shadow,
}

impl TextBackdrop {
    pub const ALL: [TextBackdrop; 3] = [TextBackdrop::Outline, TextBackdrop::Box, TextBackdrop::Shadow];

    pub fn name(self) -> &'static str {
        match self {
            TextBackdrop::Outline => "outline",
            TextBackdrop::Box => "box",
            TextBackdrop::Shadow => "shadow",
        }
    }
}

/// Opacity of the floor tint, out of 255.
pub const TINT_ALPHA: u8 = 128;

/// Errors compositing an overlay onto a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawError {
    #[error("frame is {frame_w}×{frame_h} but the overlay is {overlay_w}×{overlay_h}")]
    SizeMismatch {
        frame_w: usize,
        frame_h: usize,
        overlay_w: usize,
        overlay_h: usize,
    },
    #[error("mask is {mask_w}×{mask_h} but the frame is {frame_w}×{frame_h}")]
    MaskSize {
        mask_w: usize,
        mask_h: usize,
        frame_w: usize,
        frame_h: usize,
    },
    #[error("the frame buffer is not in standard row-major layout")]
    Layout,
}

/// Why a primitive was not drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// A coordinate, size or angle is NaN or infinite.
    NotFinite,
    /// A circle's radius is zero or negative.
    BadRadius,
    /// A negative size (rectangle, text, marker).
    BadSize,
    /// A negative or non-finite line thickness.
    BadThickness,
    /// Text with no characters.
    EmptyText,
    /// Text too large to rasterize.
    TextSize,
    /// A polygon without vertices (a raised path: fewer than two points).
    NoVertices,
    /// A shape with heights, and a calibration that knows only the floor.
    FloorOnly,
    /// A shape in the picture's pixels holding one that is not a floor
    /// shape ([`Shape::picture_problem`]).
    NotInPicture,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SkipReason::NotFinite => "a coordinate or size is not a finite number",
            SkipReason::BadRadius => "circle radius is zero or negative",
            SkipReason::BadSize => "size is negative",
            SkipReason::BadThickness => "thickness is negative or not finite",
            SkipReason::EmptyText => "text is empty",
            SkipReason::TextSize => "text is too large to draw",
            SkipReason::NoVertices => "polygon has no vertices",
            SkipReason::FloorOnly => crate::calib::FLOOR_ONLY,
            SkipReason::NotInPicture => "a shape in the picture's pixels holds one with heights or another",
        })
    }
}

/// A premultiplied RGBA layer the size of the frame.
#[derive(Clone, Debug)]
pub struct Overlay {
    width: usize,
    height: usize,
    px: Vec<[u8; 4]>,
    dirty: ChunkDirty,
}

/// What an [`Overlay`] held where it was drawn: its size, drawn spans
/// `(y, x0, x1)` and their pixels, one span after another.
#[derive(Clone, Debug, Default)]
pub struct DrawnCopy {
    size: (usize, usize),
    spans: Vec<(usize, usize, usize)>,
    px: Vec<[u8; 4]>,
}

impl Overlay {
    /// A transparent overlay of `width × height` pixels.
    pub fn new(width: usize, height: usize) -> Self {
        Overlay {
            width,
            height,
            px: vec![[0; 4]; width * height],
            dirty: ChunkDirty::new(width, height),
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// Whether `other` is as wide and as high.
    pub fn same_size(&self, other: &Overlay) -> bool {
        (self.width, self.height) == (other.width, other.height)
    }

    /// Makes the overlay `width × height` and transparent.
    pub fn resize(&mut self, width: usize, height: usize) {
        if (width, height) == (self.width, self.height) {
            self.clear();
        } else {
            *self = Overlay::new(width, height);
        }
    }

    /// Makes the overlay transparent again (touching only drawn rows).
    pub fn clear(&mut self) {
        let w = self.width;
        let px = &mut self.px;
        self.dirty
            .for_each_span(|y, x0, x1| px[y * w + x0..y * w + x1].fill([0; 4]));
        self.dirty.reset();
    }

    /// Whether nothing is drawn.
    pub fn is_empty(&self) -> bool {
        self.dirty.is_empty()
    }

    /// Copies what is drawn (the drawn spans and their pixels) into `out`,
    /// for [`paste_drawn`](Self::paste_drawn) later.
    pub fn copy_drawn(&self, out: &mut DrawnCopy) {
        out.size = (self.width, self.height);
        out.spans.clear();
        out.px.clear();
        let (w, px) = (self.width, &self.px);
        self.dirty.for_each_span(|y, x0, x1| {
            out.spans.push((y, x0, x1));
            out.px.extend_from_slice(&px[y * w + x0..y * w + x1]);
        });
    }

    /// Makes this overlay what `copy` was copied from
    /// ([`copy_drawn`](Self::copy_drawn)): the same size, the same pixels
    /// drawn, the same spans to clear and composite.
    pub fn paste_drawn(&mut self, copy: &DrawnCopy) {
        self.resize(copy.size.0, copy.size.1);
        let w = self.width;
        let mut from = 0;
        for &(y, x0, x1) in &copy.spans {
            let n = x1 - x0;
            self.px[y * w + x0..y * w + x1].copy_from_slice(&copy.px[from..from + n]);
            self.dirty.add(y, x0, x1);
            from += n;
        }
    }

    /// How many pixels compositing visits (the drawn area, rounded out to
    /// 8-pixel chunks of each row).
    pub fn dirty_pixels(&self) -> usize {
        let mut n = 0;
        self.dirty.for_each_span(|_, x0, x1| n += x1 - x0);
        n
    }

    /// Calls `f(y, x0, x1)` for the drawn parts of each row (rounded out to
    /// 8-pixel chunks).
    pub fn for_each_span(&self, f: impl FnMut(usize, usize, usize)) {
        self.dirty.for_each_span(f);
    }

    /// Calls `f(y, x0, x1)` for the drawn parts of each pair of rows `y`
    /// and `y + 1` (`y` even), rounded out to 8-pixel chunks: the 2×2
    /// blocks of a 4:2:0 picture that compositing may have changed.
    pub fn for_each_pair_span(&self, f: impl FnMut(usize, usize, usize)) {
        self.dirty.for_each_pair_span(f);
    }

    /// Premultiplied RGBA of pixel `(x, y)` (transparent outside).
    pub fn pixel(&self, x: usize, y: usize) -> [u8; 4] {
        if x < self.width && y < self.height {
            self.px[y * self.width + x]
        } else {
            [0; 4]
        }
    }

    /// All pixels, row-major, premultiplied RGBA.
    pub fn pixels(&self) -> &[[u8; 4]] {
        &self.px
    }

    /// Paints `color` through the coverage in `cov` ("over" operator) and
    /// clears `cov`.
    pub fn blend(&mut self, cov: &mut Coverage, color: Rgba) {
        if cov.width() != self.width || cov.height() != self.height {
            cov.clear();
            return;
        }
        let w = self.width;
        let px = &mut self.px;
        let dirty = &mut self.dirty;
        cov.drain(|y, x0, x1, row| {
            blend_row(&mut px[y * w + x0..y * w + x1], row, color);
            dirty.add(y, x0, x1);
        });
    }

    /// Paints a run of `coverage` in `color` into row `y` from `x0` on,
    /// `painted` being that coverage painted in `color` (premultiplied):
    /// copied where nothing was drawn yet (8-pixel chunk by chunk), blended
    /// over what was elsewhere. The bytes are those of blending the whole
    /// run ([`Overlay::blend_span`]).
    pub(crate) fn paint_run(
        &mut self,
        y: usize,
        x0: usize,
        coverage: &[u8],
        painted: &[[u8; 4]],
        color: Rgba,
    ) {
        if y >= self.height || x0 >= self.width {
            return;
        }
        let x1 = (x0 + coverage.len().min(painted.len())).min(self.width);
        let row = y * self.width;
        let mut x = x0;
        while x < x1 {
            let clear = self.dirty.is_clear(y, x, x + 1);
            // The chunks from here in the same state.
            let mut e = ((x / raster::CHUNK + 1) * raster::CHUNK).min(x1);
            while e < x1 && self.dirty.is_clear(y, e, e + 1) == clear {
                e = ((e / raster::CHUNK + 1) * raster::CHUNK).min(x1);
            }
            let (a, b) = (x - x0, e - x0);
            if clear {
                self.px[row + x..row + e].copy_from_slice(&painted[a..b]);
            } else {
                blend_row(&mut self.px[row + x..row + e], &coverage[a..b], color);
            }
            x = e;
        }
        self.dirty.add(y, x0, x1);
    }

    /// Paints `color` through one row of coverage starting at `(x0, y)`.
    pub fn blend_span(&mut self, y: usize, x0: usize, coverage: &[u8], color: Rgba) {
        if y >= self.height || x0 >= self.width {
            return;
        }
        let x1 = (x0 + coverage.len()).min(self.width);
        let row = y * self.width;
        blend_row(&mut self.px[row + x0..row + x1], coverage, color);
        self.dirty.add(y, x0, x1);
    }

    /// `frame = mix(frame, overlay, alpha · mask)`: the overlay shows only
    /// where `mask` says floor (all of it when `mask` is `None`).
    pub fn composite(&self, frame: &mut RgbImage, mask: Option<&FloorMask>) -> Result<(), DrawError> {
        let (h, w, _) = frame.dim();
        if (w, h) != (self.width, self.height) {
            return Err(DrawError::SizeMismatch {
                frame_w: w,
                frame_h: h,
                overlay_w: self.width,
                overlay_h: self.height,
            });
        }
        if let Some(m) = mask {
            check_mask_size(m, w, h)?;
        }
        // A mask of one value per pixel is read in place; a block mask's
        // values are spread over their pixels, span by span.
        let pixels = mask.and_then(FloorMask::pixels).and_then(|m| m.as_slice());
        let mut spread = vec![0u8; if mask.is_some() && pixels.is_none() { w } else { 0 }];
        let f = frame.as_slice_mut().ok_or(DrawError::Layout)?;
        let cpu = Avx2::detect();
        self.dirty.for_each_span(|y, x0, x1| {
            // Shapes go on from row to row: the span two rows down is
            // likely where this one is.
            let ahead = (y + AHEAD) * w + x0;
            crate::simd::prefetch(&self.px, ahead);
            crate::simd::prefetch(f, 3 * ahead);
            if let Some(m) = pixels {
                crate::simd::prefetch(m, ahead);
            }
            let src = &self.px[y * w + x0..y * w + x1];
            let dst = &mut f[(y * w + x0) * 3..(y * w + x1) * 3];
            let m = match (pixels, mask) {
                (Some(p), _) => Some(&p[y * w + x0..y * w + x1]),
                (None, Some(m)) => {
                    m.row_values(y, x0, x1, &mut spread);
                    Some(&spread[..x1 - x0])
                }
                (None, None) => None,
            };
            composite_row(cpu, src, dst, m);
        });
        Ok(())
    }
}

/// How many rows ahead [`Overlay::composite`] asks for the pixels of the
/// span below the one it composites.
const AHEAD: usize = 2;

/// Checks that a mask fits a `w`×`h` frame.
pub(crate) fn check_mask_size(m: &FloorMask, w: usize, h: usize) -> Result<(), DrawError> {
    if (m.width(), m.height()) != (w, h) {
        return Err(DrawError::MaskSize {
            mask_w: m.width(),
            mask_h: m.height(),
            frame_w: w,
            frame_h: h,
        });
    }
    Ok(())
}

/// Tints the floor pixels of `frame` (thesis Figure 3.5): a translucent
/// [`TINT`] wherever `mask` says floor.
pub fn tint_floor(frame: &mut RgbImage, mask: &FloorMask) -> Result<(), DrawError> {
    let (h, w, _) = frame.dim();
    check_mask_size(mask, w, h)?;
    let f = frame.as_slice_mut().ok_or(DrawError::Layout)?;
    let k = TINT_ALPHA as u32;
    let inv = 255 - k;
    let tint = [TINT.r() as u32 * k, TINT.g() as u32 * k, TINT.b() as u32 * k];
    let mut row = vec![0u8; w];
    for (y, line) in f.chunks_exact_mut(3 * w.max(1)).enumerate().take(h) {
        mask.row_values(y, 0, w, &mut row);
        for (d, &mv) in line.chunks_exact_mut(3).zip(&row) {
            if mv == crate::image::FLOOR {
                for c in 0..3 {
                    d[c] = div255(d[c] as u32 * inv + tint[c]) as u8;
                }
            }
        }
    }
    Ok(())
}

/// Paints `color` through `coverage` onto the premultiplied pixels `dst`,
/// with the AVX2 build of the loop when the CPU has it.
fn blend_row(dst: &mut [[u8; 4]], coverage: &[u8], color: Rgba) {
    if color.a() == 0 {
        return;
    }
    blend_row_simd(dst, coverage, color);
}

/// [`blend_row_generic`], eight pixels a step in 16-bit lanes when the CPU
/// has AVX2 (every product and sum stays below 2¹⁶, so the results are
/// the same), the rest one pixel at a time.
fn blend_row_simd(dst: &mut [[u8; 4]], coverage: &[u8], color: Rgba) {
    let n = dst.len().min(coverage.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2() {
        // SAFETY: AVX2 is available; the kernel stays within the first `n`
        // pixels and coverage values.
        done = unsafe { blend_row_avx2(&mut dst[..n], &coverage[..n], color) };
    }
    blend_row_generic(&mut dst[done..n], &coverage[done..n], color);
}

/// [`div255`] on sixteen 16-bit lanes (exact for products of two bytes
/// and their sums up to 255², which stay below 2¹⁶ with the rounding),
/// for the AVX2 kernels below.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn div255_x16(v: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let v = _mm256_add_epi16(v, _mm256_set1_epi16(128));
    _mm256_srli_epi16::<8>(_mm256_add_epi16(v, _mm256_srli_epi16::<8>(v)))
}

/// The vector part of [`blend_row_simd`]: blends whole steps of eight
/// pixels and returns how many pixels it blended.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn blend_row_avx2(dst: &mut [[u8; 4]], coverage: &[u8], color: Rgba) -> usize {
    use std::arch::x86_64::*;
    let n = dst.len().min(coverage.len());
    let a = _mm_set1_epi16(color.a() as i16);
    // The colour per channel (R, G, B, 255), for two pixels a lane.
    let (r, g, b) = (color.r() as i16, color.g() as i16, color.b() as i16);
    let s = _mm256_setr_epi16(r, g, b, 255, r, g, b, 255, r, g, b, 255, r, g, b, 255);
    let full = _mm256_set1_epi16(255);
    // Unpacking the pixels' bytes to 16 bits puts pixels 0, 1 | 4, 5 in
    // the low halves and 2, 3 | 6, 7 in the high ones; these spread each
    // pixel's 16-bit alpha over its four channels in the same order.
    let lo_of = _mm256_setr_epi8(
        0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, //
        8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11,
    );
    let hi_of = _mm256_setr_epi8(
        4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7, //
        12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14, 15,
    );
    let zero = _mm256_setzero_si256();
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: pixels and coverage values `i..i + 8` exist.
        unsafe {
            let cov = _mm_loadl_epi64(coverage.as_ptr().add(i) as *const __m128i);
            // `sa = div255(c · a)` for the eight pixels, 16 bits each.
            let ca = _mm_mullo_epi16(_mm_cvtepu8_epi16(cov), a);
            let sa8 = div255_x16(_mm256_castsi128_si256(ca));
            let sa = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sa8));
            let (sa_lo, sa_hi) = (_mm256_shuffle_epi8(sa, lo_of), _mm256_shuffle_epi8(sa, hi_of));
            let p = dst.as_mut_ptr().add(i) as *mut __m256i;
            let d = _mm256_loadu_si256(p);
            let blend = |d16: __m256i, sa: __m256i| {
                let inv = _mm256_sub_epi16(full, sa);
                div255_x16(_mm256_add_epi16(
                    _mm256_mullo_epi16(s, sa),
                    _mm256_mullo_epi16(d16, inv),
                ))
            };
            let lo = blend(_mm256_unpacklo_epi8(d, zero), sa_lo);
            let hi = blend(_mm256_unpackhi_epi8(d, zero), sa_hi);
            _mm256_storeu_si256(p, _mm256_packus_epi16(lo, hi));
        }
        i += 8;
    }
    i
}

/// Branch-free "over" so the compiler vectorizes it; coverage 0 leaves a
/// pixel exactly as it was.
#[inline(always)]
fn blend_row_generic(dst: &mut [[u8; 4]], coverage: &[u8], color: Rgba) {
    let s = [color.r() as u32, color.g() as u32, color.b() as u32, 255];
    let a = color.a() as u32;
    for (d, &c) in dst.iter_mut().zip(coverage) {
        let sa = div255(c as u32 * a);
        let inv = 255 - sa;
        for k in 0..4 {
            d[k] = div255(s[k] * sa + d[k] as u32 * inv) as u8;
        }
    }
}

/// Composites premultiplied `src` over RGB `dst` through `mask`: with
/// AVX2, eight pixels a step in 16-bit lanes ([`composite_row_avx2`], the
/// same bytes), the rest one pixel at a time.
fn composite_row(cpu: Option<Avx2>, src: &[[u8; 4]], dst: &mut [u8], mask: Option<&[u8]>) {
    let n = src
        .len()
        .min(dst.len() / 3)
        .min(mask.map_or(usize::MAX, <[u8]>::len));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if cpu.is_some() {
        // SAFETY: an `Avx2` exists only when the CPU supports AVX2; the
        // kernel stays within the first `n` pixels of each slice.
        done = unsafe { composite_row_avx2(&src[..n], &mut dst[..3 * n], mask.map(|m| &m[..n])) };
    }
    let _ = cpu;
    composite_row_generic(
        &src[done..n],
        &mut dst[3 * done..3 * n],
        mask.map(|m| &m[done..n]),
    );
}

/// The vector part of [`composite_row`]: whole steps of eight pixels, as
/// many as there are; returns how many pixels it composited.
///
/// The frame's 24 bytes are spread to four channels a pixel (the fourth
/// unused), so that the overlay's pixels, their alpha and the mask line
/// up; every product and sum stays below 2¹⁶. With no mask, the mask is
/// 255 everywhere, which gives the unmasked formula exactly (`div255(x ·
/// 255) = x`).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn composite_row_avx2(src: &[[u8; 4]], dst: &mut [u8], mask: Option<&[u8]>) -> usize {
    use std::arch::x86_64::*;
    let n = src
        .len()
        .min(dst.len() / 3)
        .min(mask.map_or(usize::MAX, <[u8]>::len));
    let full = _mm256_set1_epi16(255);
    // Four RGB pixels of a 16-byte load to RGBA order: from byte 0 for the
    // low lane, from byte 4 for the high one (loaded 8 bytes later).
    let spread = _mm256_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, //
        4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1,
    );
    // And back: twelve bytes a lane.
    let gather = _mm256_setr_epi8(
        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, //
        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
    );
    // Each pixel's alpha, and each pixel's mask byte, over its channels.
    let alpha = _mm256_setr_epi8(
        3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15, 15, 15, //
        3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15, 15, 15,
    );
    let per_pixel = _mm256_setr_epi8(
        0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, //
        4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
    );
    let zero = _mm256_setzero_si256();
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: pixels `i..i + 8` of `src`, bytes `3i..3i + 24` of `dst`
        // and mask bytes `i..i + 8` exist (`n` bounds all three).
        unsafe {
            let p = _mm256_loadu_si256(src.as_ptr().add(i) as *const __m256i);
            let d_ptr = dst.as_mut_ptr().add(3 * i);
            let d_lo = _mm_loadu_si128(d_ptr as *const __m128i);
            let d_hi = _mm_loadu_si128(d_ptr.add(8) as *const __m128i);
            let d = _mm256_shuffle_epi8(_mm256_set_m128i(d_hi, d_lo), spread);
            let m = match mask {
                Some(m) => {
                    let m8 = _mm_loadl_epi64(m.as_ptr().add(i) as *const __m128i);
                    _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(m8), per_pixel)
                }
                None => _mm256_set1_epi8(-1),
            };
            let a8 = _mm256_shuffle_epi8(p, alpha);
            let pmin = _mm256_min_epu8(p, a8);
            let half = |v: __m256i, hi: bool| {
                if hi {
                    _mm256_unpackhi_epi8(v, zero)
                } else {
                    _mm256_unpacklo_epi8(v, zero)
                }
            };
            let mix = |hi: bool| {
                let m16 = half(m, hi);
                let a = div255_x16(_mm256_mullo_epi16(half(a8, hi), m16));
                let inv = _mm256_sub_epi16(full, a);
                let pc = div255_x16(_mm256_mullo_epi16(half(pmin, hi), m16));
                div255_x16(_mm256_add_epi16(
                    _mm256_mullo_epi16(pc, full),
                    _mm256_mullo_epi16(half(d, hi), inv),
                ))
            };
            let out = _mm256_shuffle_epi8(_mm256_packus_epi16(mix(false), mix(true)), gather);
            // The low lane's 16 bytes carry 4 unused ones at the end, which
            // the high lane's 12 bytes then cover.
            _mm_storeu_si128(d_ptr as *mut __m128i, _mm256_castsi256_si128(out));
            let hi = _mm256_extracti128_si256::<1>(out);
            _mm_storel_epi64(d_ptr.add(12) as *mut __m128i, hi);
            _mm_storeu_si32(d_ptr.add(20), _mm_srli_si128::<8>(hi));
        }
        i += 8;
    }
    i
}

/// Branch-free so the compiler vectorizes it: transparent pixels cost a
/// few lanes of arithmetic instead of a mispredicted branch.
#[inline(always)]
fn composite_row_generic(src: &[[u8; 4]], dst: &mut [u8], mask: Option<&[u8]>) {
    let n = src.len().min(dst.len() / 3);
    match mask {
        None => {
            for (p, d) in src[..n].iter().zip(dst.chunks_exact_mut(3)) {
                let inv = 255 - p[3] as u32;
                for c in 0..3 {
                    d[c] = div255(p[c].min(p[3]) as u32 * 255 + d[c] as u32 * inv) as u8;
                }
            }
        }
        Some(m) => {
            for ((p, d), &m) in src[..n].iter().zip(dst.chunks_exact_mut(3)).zip(m) {
                let m = m as u32;
                let a = div255(p[3] as u32 * m);
                let inv = 255 - a;
                for c in 0..3 {
                    let pc = div255(p[c].min(p[3]) as u32 * m);
                    d[c] = div255(pc * 255 + d[c] as u32 * inv) as u8;
                }
            }
        }
    }
}

/// `v / 255` rounded, for `v ≤ 255 · 255`.
#[inline]
fn div255(v: u32) -> u32 {
    (v + 128 + ((v + 128) >> 8)) >> 8
}

/// Draws primitives onto an [`Overlay`]: projection, line widths, markers,
/// text, and the scratch buffers that make it cheap per frame.
#[derive(Debug)]
pub struct Painter {
    /// How text is set off from the picture.
    pub backdrop: TextBackdrop,
    /// Shapes with heights through a calibration that knows only the
    /// floor are drawn flattened onto it ([`raised::flattened`]) instead
    /// of refused.
    pub flatten_heights: bool,
    cov: Coverage,
    text: TextRenderer,
    rings: Vec<Vec<Vec2>>,
    fill: Vec<Vec2>,
    widths: Vec<f64>,
    /// Where the raised shapes drawn since the last clear are, and how far
    /// from the camera ([`occlude`]).
    pub depth_samples: Vec<occlude::DepthSample>,
    /// The identity mapping shapes in the picture's pixels are drawn
    /// through ([`Shape::Picture`]).
    pixels: Arc<Calibration>,
    /// Drawings of cells kept from frame to frame ([`cells`]).
    cells_cache: cells::CellsCache,
    /// Scratch of [`Painter::points`]: per block of the picture, the
    /// nearest point's distance and picture.
    point_blocks: Vec<(f32, Vec2)>,
    /// The box of undistorted pixels points are drawn from, for the
    /// calibration, picture size and margin it was found for.
    point_cull: Option<PointCull>,
}

/// A box of undistorted pixels points are drawn from (`None`: every
/// point is projected whole), with the calibration, picture size and
/// margin it was found for ([`Painter::points`]).
type PointCull = (Calibration, (usize, usize), f64, Option<[f64; 4]>);

/// The identity mapping of shapes in the picture's pixels
/// ([`Calibration::pixels`]), made once.
pub fn pixel_calibration() -> Arc<Calibration> {
    static PIXELS: OnceLock<Arc<Calibration>> = OnceLock::new();
    Arc::clone(PIXELS.get_or_init(|| Arc::new(Calibration::pixels())))
}

// Each export worker owns a painter and its overlay.
const _: () = {
    const fn send<T: Send>() {}
    send::<Painter>();
    send::<Overlay>();
};

impl Painter {
    /// A painter for frames of `width × height` pixels.
    pub fn new(width: usize, height: usize) -> Self {
        Painter {
            backdrop: TextBackdrop::default(),
            flatten_heights: false,
            cov: Coverage::new(width, height),
            text: TextRenderer::new(),
            rings: Vec::new(),
            fill: Vec::new(),
            widths: Vec::new(),
            depth_samples: Vec::new(),
            pixels: pixel_calibration(),
            cells_cache: cells::CellsCache::default(),
            point_blocks: Vec::new(),
            point_cull: None,
        }
    }

    /// Adapts the scratch buffers to frames of `width × height`.
    pub fn resize(&mut self, width: usize, height: usize) {
        if (self.cov.width(), self.cov.height()) != (width, height) {
            self.cov = Coverage::new(width, height);
        }
    }

    /// Line width used when a style says 0: thin but visible at any
    /// resolution (2 px at 720p, 3 px at 1080p).
    pub fn default_width(&self) -> f64 {
        (self.cov.height() as f64 / 360.0).max(1.5)
    }

    /// Marker size used when a point says 0.
    pub fn default_marker(&self) -> f64 {
        6.0 * self.default_width()
    }

    /// Text size used when a text says 0.
    pub fn default_text(&self) -> f64 {
        (self.cov.height() as f64 / 36.0).max(10.0)
    }

    /// Strokes an image-space polyline `width` px wide (round joins and caps).
    pub fn stroke(&mut self, ov: &mut Overlay, pts: &[PixelPoint], closed: bool, width: f64, color: Rgba) {
        let hw = (width / 2.0).clamp(0.0, self.max_half_width());
        self.cov.stroke(pts, closed, |_| hw);
        ov.blend(&mut self.cov, color);
    }

    /// Fills image-space contours (non-zero rule).
    pub fn fill(&mut self, ov: &mut Overlay, contours: &[Vec<PixelPoint>], color: Rgba) {
        self.cov
            .fill_spans(contours, |y, x0, row| ov.blend_span(y, x0, row, color));
    }

    /// Draws text with the first baseline starting at image point `anchor`;
    /// returns the number of glyphs drawn.
    /// Text is set off from the picture by [`Self::backdrop`]: a dark
    /// outline a sixteenth of its size wide (at least a pixel), a dark box,
    /// or a soft drop shadow offset by as much.
    pub fn text(
        &mut self,
        ov: &mut Overlay,
        anchor: PixelPoint,
        text: &str,
        size: f64,
        color: Rgba,
    ) -> usize {
        let d = (size / 16.0).max(1.0);
        let dark = |alpha: u8| Rgba::BLACK.with_alpha((color.a() as u32 * alpha as u32 / 255) as u8);
        match self.backdrop {
            TextBackdrop::Shadow => {
                self.text
                    .draw(&mut self.cov, (anchor.x + d, anchor.y + d), text, size);
                ov.blend(&mut self.cov, dark(TEXT_SHADOW_ALPHA));
            }
            TextBackdrop::Outline => {
                // The union of the text moved each way: coverage keeps the
                // most of overlapping glyphs, so the outline is blended once.
                for (dx, dy) in [
                    (-1.0, -1.0),
                    (0.0, -1.0),
                    (1.0, -1.0),
                    (-1.0, 0.0),
                    (1.0, 0.0),
                    (-1.0, 1.0),
                    (0.0, 1.0),
                    (1.0, 1.0),
                ] {
                    self.text
                        .draw(&mut self.cov, (anchor.x + dx * d, anchor.y + dy * d), text, size);
                }
                ov.blend(&mut self.cov, dark(TEXT_BACKDROP_ALPHA));
            }
            TextBackdrop::Box => {
                if let Some((w, h)) = self.measure_text(text, size) {
                    let pad = 2.0 * d;
                    let top = anchor.y - 0.8 * size - pad;
                    let (x0, x1, y1) = (anchor.x - pad, anchor.x + w + pad, top + h + 2.0 * pad);
                    let rect = vec![
                        Vec2::new(x0, top),
                        Vec2::new(x1, top),
                        Vec2::new(x1, y1),
                        Vec2::new(x0, y1),
                    ];
                    self.fill(ov, &[rect], dark(TEXT_BACKDROP_ALPHA));
                }
            }
        }
        let n = self.text.draw(&mut self.cov, (anchor.x, anchor.y), text, size);
        ov.blend(&mut self.cov, color);
        n
    }

    /// Draws text as [`Self::text`] does, without a backdrop: for text on
    /// a ground of its own that it contrasts with (a number on a shirt).
    pub fn text_plain(
        &mut self,
        ov: &mut Overlay,
        anchor: PixelPoint,
        text: &str,
        size: f64,
        color: Rgba,
    ) -> usize {
        let n = self.text.draw(&mut self.cov, (anchor.x, anchor.y), text, size);
        ov.blend(&mut self.cov, color);
        n
    }

    /// Width of the widest line and total height of `text` at `size` px
    /// (`None` without a font).
    pub fn measure_text(&self, text: &str, size: f64) -> Option<(f64, f64)> {
        self.text.measure(text, size)
    }

    /// Draws a point marker of `size` px centred on image point `at`.
    pub fn marker(
        &mut self,
        ov: &mut Overlay,
        at: PixelPoint,
        kind: MarkerKind,
        size: f64,
        width: f64,
        color: Rgba,
    ) {
        let size = size.clamp(0.0, 2.0 * self.max_half_width());
        match kind {
            MarkerKind::Dot => self.cov.segment(at, at, size / 2.0, size / 2.0),
            MarkerKind::Cross => {
                let hw = (width / 2.0).clamp(0.0, self.max_half_width());
                let s = size / 2.0 - hw;
                let s = s.max(0.0) / std::f64::consts::SQRT_2;
                for (dx, dy) in [(s, s), (s, -s)] {
                    let d = Vec2::new(dx, dy);
                    self.cov.segment(at - d, at + d, hw, hw);
                }
            }
        }
        ov.blend(&mut self.cov, color);
    }

    /// Half widths beyond the frame diagonal draw the same as the diagonal.
    fn max_half_width(&self) -> f64 {
        (self.cov.width() as f64).hypot(self.cov.height() as f64)
    }

    /// Draws one log primitive, mapped through `calib`, onto `ov`. Parts
    /// behind the camera or outside the frame are clipped away silently;
    /// input that cannot be drawn sensibly is refused with the reason.
    pub fn primitive(
        &mut self,
        ov: &mut Overlay,
        calib: &Calibration,
        p: &Primitive,
    ) -> Result<(), SkipReason> {
        let style = &p.style;
        let thickness = style.thickness as f64;
        if !thickness.is_finite() {
            return Err(SkipReason::BadThickness);
        }
        if thickness < 0.0 {
            return Err(SkipReason::BadThickness);
        }
        match &p.shape {
            Shape::Picture(inner) => match **inner {
                Shape::Raised(_) | Shape::Picture(_) | Shape::Cells(_) => Err(SkipReason::NotInPicture),
                _ => {
                    let pixels = Arc::clone(&self.pixels);
                    self.shape(ov, &pixels, p, inner)
                }
            },
            shape => self.shape(ov, calib, p, shape),
        }
    }

    /// Draws `shape` (`p`'s, or the floor shape inside `p`'s picture
    /// shape) with `p`'s style, mapped through `calib`.
    fn shape(
        &mut self,
        ov: &mut Overlay,
        calib: &Calibration,
        p: &Primitive,
        shape: &Shape,
    ) -> Result<(), SkipReason> {
        let style = &p.style;
        let thickness = style.thickness as f64;
        match shape {
            Shape::Circle { center, radius } => {
                if !(center.is_finite() && radius.is_finite()) {
                    return Err(SkipReason::NotFinite);
                }
                if *radius <= 0.0 {
                    return Err(SkipReason::BadRadius);
                }
                self.rings.clear();
                calib.project_circle(*center, *radius, TOLERANCE_PX, &mut self.rings);
                self.outline_and_fill(ov, calib, &p.style, true);
            }
            Shape::Line { start, end } => {
                if !(start.is_finite() && end.is_finite()) {
                    return Err(SkipReason::NotFinite);
                }
                self.rings.clear();
                calib.project_polyline(&[*start, *end], false, TOLERANCE_PX, &mut self.rings);
                self.outline_and_fill(ov, calib, &p.style, false);
            }
            Shape::Rectangle {
                center,
                size,
                orientation,
            } => {
                if !(center.is_finite() && size.is_finite() && orientation.is_finite()) {
                    return Err(SkipReason::NotFinite);
                }
                if size.x < 0.0 || size.y < 0.0 {
                    return Err(SkipReason::BadSize);
                }
                let corners = Shape::rectangle_corners(*center, *size, *orientation);
                self.rings.clear();
                calib.project_polyline(&corners, true, TOLERANCE_PX, &mut self.rings);
                self.outline_and_fill(ov, calib, &p.style, true);
            }
            Shape::Polygon { vertices, closed } => {
                if vertices.is_empty() {
                    return Err(SkipReason::NoVertices);
                }
                if !vertices.iter().all(|v| v.is_finite()) {
                    return Err(SkipReason::NotFinite);
                }
                self.rings.clear();
                calib.project_polyline(vertices, *closed, TOLERANCE_PX, &mut self.rings);
                self.outline_and_fill(ov, calib, &p.style, *closed && vertices.len() > 2);
            }
            Shape::Text { anchor, text, size } => {
                if !(anchor.is_finite() && size.is_finite()) {
                    return Err(SkipReason::NotFinite);
                }
                if *size < 0.0 {
                    return Err(SkipReason::BadSize);
                }
                if text.is_empty() {
                    return Err(SkipReason::EmptyText);
                }
                let Some(at) = calib.project(*anchor) else {
                    return Ok(());
                };
                let px = match (*size == 0.0, style.unit) {
                    (true, _) => self.default_text(),
                    (false, ThicknessUnit::Pixels) => *size,
                    (false, ThicknessUnit::World) => match calib.pixels_per_unit(*anchor) {
                        Some(k) => size * k,
                        None => return Ok(()),
                    },
                };
                if px > text::MAX_TEXT_PX {
                    return Err(SkipReason::TextSize);
                }
                if px < text::MIN_TEXT_PX {
                    // Too small to read (far away in world units): nothing to draw.
                    return Ok(());
                }
                self.text(ov, at, text, px, style.color);
            }
            Shape::Point { position, kind, size } => {
                if !(position.is_finite() && size.is_finite()) {
                    return Err(SkipReason::NotFinite);
                }
                if *size < 0.0 {
                    return Err(SkipReason::BadSize);
                }
                let Some(at) = calib.project(*position) else {
                    return Ok(());
                };
                let k = match style.unit {
                    ThicknessUnit::Pixels => Some(1.0),
                    ThicknessUnit::World => calib.pixels_per_unit(*position),
                };
                let Some(k) = k else {
                    return Ok(());
                };
                let size = if *size == 0.0 {
                    self.default_marker()
                } else {
                    size * k
                };
                let width = if thickness == 0.0 {
                    self.default_width()
                } else {
                    thickness * k
                };
                self.marker(ov, at, *kind, size, width, style.color);
            }
            Shape::Sector {
                center,
                inner,
                outer,
                start,
                sweep,
            } => {
                if !(center.is_finite()
                    && inner.is_finite()
                    && outer.is_finite()
                    && start.is_finite()
                    && sweep.is_finite())
                {
                    return Err(SkipReason::NotFinite);
                }
                if *inner < 0.0 || outer < inner {
                    return Err(SkipReason::BadRadius);
                }
                if *outer == 0.0 || *sweep == 0.0 {
                    return Ok(());
                }
                self.rings.clear();
                project_sector(calib, *center, *inner, *outer, *start, *sweep, &mut self.rings);
                self.outline_and_fill(ov, calib, &p.style, inner < outer);
            }
            Shape::Raised(r) => self.raised(ov, calib, p, r)?,
            Shape::Cells(c) => {
                if c.problem().is_some() {
                    return Err(SkipReason::NotFinite);
                }
                self.cells(ov, calib, c, p.style.fill.unwrap_or(p.style.color));
            }
            Shape::Picture(_) => return Err(SkipReason::NotInPicture),
        }
        Ok(())
    }

    /// Fills (when asked and `closed`) and strokes the projected pieces in
    /// `self.rings`.
    fn outline_and_fill(&mut self, ov: &mut Overlay, calib: &Calibration, style: &Style, closed: bool) {
        if self.rings.is_empty() {
            return;
        }
        if let Some(fill) = style.fill
            && closed
            && fill.a() > 0
        {
            // Pieces cut at the horizon, joined in order, outline the
            // visible part of the shape.
            self.fill.clear();
            for r in &self.rings {
                self.fill.extend_from_slice(r);
            }
            let contour = std::mem::take(&mut self.fill);
            self.cov.fill_spans(std::slice::from_ref(&contour), |y, x0, row| {
                ov.blend_span(y, x0, row, fill)
            });
            self.fill = contour;
        }
        if style.color.a() == 0 {
            return;
        }
        let max_hw = self.max_half_width();
        let thickness = style.thickness as f64;
        let rings = std::mem::take(&mut self.rings);
        for ring in &rings {
            if thickness == 0.0 || style.unit == ThicknessUnit::Pixels {
                let w = if thickness == 0.0 {
                    self.default_width()
                } else {
                    thickness
                };
                let hw = (w / 2.0).min(max_hw);
                self.cov.stroke(ring, false, |_| hw);
            } else {
                // World-unit width: the local scale at every vertex, so
                // lines narrow with distance.
                let fallback = self.default_width() / 2.0;
                self.widths.clear();
                self.widths.extend(ring.iter().map(|&v| {
                    calib
                        .unproject(v)
                        .and_then(|wp| calib.pixels_per_unit(wp))
                        .map_or(fallback, |k| (thickness * k / 2.0).min(max_hw))
                }));
                let widths = &self.widths;
                self.cov.stroke(ring, false, |i| widths[i]);
            }
        }
        self.rings = rings;
        ov.blend(&mut self.cov, style.color);
    }
}

/// Maps the outline of a ring sector into image pieces, in order around
/// it: the outer arc, the radial edge at the end, the inner arc backwards
/// (or the centre for a pie slice), the radial edge back to the start. A
/// whole ring is its outer circle and its inner circle the other way
/// round, so the pieces joined in order fill it with the hole left out
/// (non-zero rule); an arc (`inner == outer`) is one open curve.
fn project_sector(
    calib: &Calibration,
    center: Vec2,
    inner: f64,
    outer: f64,
    start: f64,
    sweep: f64,
    out: &mut Vec<Vec<Vec2>>,
) {
    use std::f64::consts::TAU;
    let at = |r: f64, a: f64| center + Vec2::new(a.cos(), a.sin()) * r;
    if inner == outer {
        calib.project_arc(center, outer, start, start + sweep, TOLERANCE_PX, out);
    } else if sweep.abs() >= TAU {
        let end = start + TAU.copysign(sweep);
        calib.project_arc(center, outer, start, end, TOLERANCE_PX, out);
        if inner > 0.0 {
            calib.project_arc(center, inner, end, start, TOLERANCE_PX, out);
        }
    } else {
        let end = start + sweep;
        calib.project_arc(center, outer, start, end, TOLERANCE_PX, out);
        calib.project_polyline(&[at(outer, end), at(inner, end)], false, TOLERANCE_PX, out);
        if inner > 0.0 {
            calib.project_arc(center, inner, end, start, TOLERANCE_PX, out);
        }
        calib.project_polyline(&[at(inner, start), at(outer, start)], false, TOLERANCE_PX, out);
    }
}

#[cfg(test)]
mod tests;
