//! Pixel format conversion with swscale, straight into caller-owned
//! buffers (no intermediate frame), plus the rotations of upright display.

use crate::video::StepError;
use std::ptr;

use ffmpeg_next::ffi;

use ndarray::{Array, Axis, Dimension};

#[cfg(test)]
use crate::image::RgbImage;

/// Colour matrix and range of a YUV picture, as swscale wants them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Colorimetry {
    /// `SWS_CS_*` / `AVColorSpace` number (1 = BT.709, 5 = BT.601, 9 = BT.2020).
    pub space: i32,
    /// Full ("JPEG") range instead of limited (16–235).
    pub full_range: bool,
}

impl Colorimetry {
    /// BT.709 for HD sizes and BT.601 for SD ones (up to 1024×576),
    /// limited range: what players assume for untagged video.
    pub fn default_for_size(width: u32, height: u32) -> Self {
        Colorimetry {
            space: super::yuv::default_space(width as usize, height as usize),
            full_range: false,
        }
    }

    /// The colorimetry a decoded frame declares, with the size heuristic
    /// where it says nothing.
    pub fn of_frame(frame: &ffmpeg_next::frame::Video) -> Self {
        // SAFETY: reading plain fields of a valid AVFrame.
        let (space, range, fmt) = unsafe {
            let f = frame.as_ptr();
            ((*f).colorspace as i32, (*f).color_range as i32, (*f).format)
        };
        let mut c = Colorimetry::default_for_size(frame.width(), frame.height());
        // 0 = RGB, 2 = unspecified, 8 = YCgCo, >10 = not in swscale's table.
        if matches!(space, 1 | 4..=7 | 9 | 10) {
            c.space = space;
        }
        let jpeg_fmt = [
            ffi::AVPixelFormat::AV_PIX_FMT_YUVJ420P as i32,
            ffi::AVPixelFormat::AV_PIX_FMT_YUVJ422P as i32,
            ffi::AVPixelFormat::AV_PIX_FMT_YUVJ444P as i32,
            ffi::AVPixelFormat::AV_PIX_FMT_YUVJ440P as i32,
            ffi::AVPixelFormat::AV_PIX_FMT_YUVJ411P as i32,
        ]
        .contains(&fmt);
        // Gray video (mask videos) is full range whatever its tag says.
        let gray = fmt == ffi::AVPixelFormat::AV_PIX_FMT_GRAY8 as i32;
        c.full_range = range == ffi::AVColorRange::AVCOL_RANGE_JPEG as i32 || jpeg_fmt || gray;
        c
    }
}

/// A cached swscale context for one source/destination geometry.
pub(crate) struct Scaler {
    ctx: *mut ffi::SwsContext,
    key: Key,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Key {
    src_fmt: i32,
    src_w: i32,
    src_h: i32,
    dst_fmt: i32,
    dst_w: i32,
    dst_h: i32,
    color: Colorimetry,
}

// SAFETY: an SwsContext is used from one thread at a time (the owner's).
unsafe impl Send for Scaler {}

impl Drop for Scaler {
    fn drop(&mut self) {
        // SAFETY: ctx came from sws_getContext and is freed once.
        unsafe { ffi::sws_freeContext(self.ctx) }
    }
}

/// One plane set: pointers and byte strides, as swscale takes them.
pub(crate) struct Planes {
    pub data: [*mut u8; 4],
    pub stride: [i32; 4],
}

impl Planes {
    /// The planes of an AVFrame.
    pub fn of_frame(f: *const ffi::AVFrame) -> Planes {
        // SAFETY: reading the data/linesize arrays of a valid frame.
        unsafe {
            Planes {
                data: [(*f).data[0], (*f).data[1], (*f).data[2], (*f).data[3]],
                stride: [
                    (*f).linesize[0],
                    (*f).linesize[1],
                    (*f).linesize[2],
                    (*f).linesize[3],
                ],
            }
        }
    }

    /// One packed plane (RGB24 or GRAY8) of `row_bytes` per row.
    pub fn packed(ptr: *mut u8, row_bytes: usize) -> Planes {
        Planes {
            data: [ptr, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()],
            stride: [row_bytes as i32, 0, 0, 0],
        }
    }
}

impl Scaler {
    /// Returns a context converting `src` to `dst` formats, reusing the one
    /// in `cache` when the geometry is unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn cached(
        cache: &mut Option<Scaler>,
        src_fmt: ffi::AVPixelFormat,
        src_w: u32,
        src_h: u32,
        dst_fmt: ffi::AVPixelFormat,
        dst_w: u32,
        dst_h: u32,
        color: Colorimetry,
    ) -> Result<&mut Scaler, StepError> {
        let key = Key {
            src_fmt: src_fmt as i32,
            src_w: src_w as i32,
            src_h: src_h as i32,
            dst_fmt: dst_fmt as i32,
            dst_w: dst_w as i32,
            dst_h: dst_h as i32,
            color,
        };
        if cache.as_ref().is_none_or(|s| s.key != key) {
            *cache = None;
            // SAFETY: plain constructor call; a null result is handled.
            let ctx = unsafe {
                ffi::sws_getContext(
                    key.src_w,
                    key.src_h,
                    src_fmt,
                    key.dst_w,
                    key.dst_h,
                    dst_fmt,
                    ffi::SWS_BILINEAR | ffi::SWS_ACCURATE_RND | ffi::SWS_FULL_CHR_H_INT,
                    ptr::null_mut(),
                    ptr::null_mut(),
                    ptr::null(),
                )
            };
            if ctx.is_null() {
                return Err(StepError::new(format!(
                    "cannot convert pixel format {src_fmt:?} {src_w}×{src_h} to {dst_fmt:?} {dst_w}×{dst_h}"
                )));
            }
            let scaler = Scaler { ctx, key };
            // SAFETY: ctx is valid; the coefficient tables are static.
            unsafe {
                let table = ffi::sws_getCoefficients(color.space);
                let is_yuv_dst = !matches!(
                    dst_fmt,
                    ffi::AVPixelFormat::AV_PIX_FMT_RGB24 | ffi::AVPixelFormat::AV_PIX_FMT_GRAY8
                );
                let (src_full, dst_full) = if is_yuv_dst {
                    (1, i32::from(color.full_range))
                } else {
                    (i32::from(color.full_range), 1)
                };
                // Fails only for formats without a matrix (e.g. RGB → RGB), where
                // the defaults are right anyway.
                ffi::sws_setColorspaceDetails(
                    scaler.ctx,
                    table,
                    src_full,
                    table,
                    dst_full,
                    0,
                    1 << 16,
                    1 << 16,
                );
            }
            *cache = Some(scaler);
        }
        cache.as_mut().ok_or_else(|| StepError::new("scaler cache"))
    }

    /// Converts `src_h` rows of `src` into `dst`.
    ///
    /// # Safety
    /// The planes must be valid for the formats and sizes this scaler was
    /// made for.
    pub unsafe fn run(&mut self, src: &Planes, dst: &Planes) {
        // SAFETY: upheld by the caller.
        unsafe {
            ffi::sws_scale(
                self.ctx,
                src.data.as_ptr() as *const *const u8,
                src.stride.as_ptr(),
                0,
                self.key.src_h,
                dst.data.as_ptr(),
                dst.stride.as_ptr(),
            );
        }
    }
}

/// Writes `src` rotated clockwise by `degrees` (90, 180 or 270) into `dst`
/// (an RGB image or a mask), resizing it when needed.
pub(crate) fn rotate_into<D>(src: &Array<u8, D>, degrees: i32, dst: &mut Array<u8, D>)
where
    D: Dimension,
{
    let mut v = src.view();
    match degrees {
        90 => {
            // out[y][x] = src[h-1-x][y]: transpose, then mirror left-right.
            v.swap_axes(0, 1);
            v.invert_axis(Axis(1));
        }
        180 => {
            v.invert_axis(Axis(0));
            v.invert_axis(Axis(1));
        }
        270 => {
            // out[y][x] = src[x][w-1-y]: transpose, then mirror top-bottom.
            v.swap_axes(0, 1);
            v.invert_axis(Axis(0));
        }
        _ => {}
    }
    if dst.shape() != v.shape() {
        *dst = Array::zeros(v.raw_dim());
    }
    dst.assign(&v);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(h: usize, w: usize) -> RgbImage {
        RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| (y * 16 + x * 3 + c) as u8)
    }

    #[test]
    fn rotations_move_corners_clockwise() {
        let src = numbered(2, 3);
        let mut out = RgbImage::zeros((0, 0, 3));
        rotate_into(&src, 90, &mut out);
        assert_eq!(out.dim(), (3, 2, 3));
        // Clockwise: the source's bottom-left corner becomes the top-left.
        assert_eq!(out[[0, 0, 0]], src[[1, 0, 0]]);
        assert_eq!(out[[0, 1, 0]], src[[0, 0, 0]]);
        rotate_into(&src, 180, &mut out);
        assert_eq!(out[[0, 0, 1]], src[[1, 2, 1]]);
        rotate_into(&src, 270, &mut out);
        assert_eq!(out.dim(), (3, 2, 3));
        // Counter-clockwise: the source's top-right corner becomes the top-left.
        assert_eq!(out[[0, 0, 2]], src[[0, 2, 2]]);
        let mut back = RgbImage::zeros((0, 0, 3));
        rotate_into(&out, 90, &mut back);
        assert_eq!(back, src);
        // Masks rotate the same way.
        let m = crate::image::MaskImage::from_shape_fn((2, 3), |(y, x)| (y * 3 + x) as u8);
        let mut mo = crate::image::MaskImage::zeros((0, 0));
        rotate_into(&m, 90, &mut mo);
        assert_eq!(mo, ndarray::array![[3, 0], [4, 1], [5, 2]]);
    }
}
