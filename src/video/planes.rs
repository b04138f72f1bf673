//! The decoded YUV 4:2:0 picture of a frame, kept beside its RGB copy so
//! that export hands the encoder the decoded pixels themselves and
//! converts back from RGB only the parts the overlay changed: less work
//! than converting every pixel back, and the untouched pixels stay exactly
//! as decoded.
//!
//! Both conversions can run wherever the frame is, not only where it is
//! decoded or encoded: a decoder may leave the RGB picture to be converted
//! later ([`Yuv420::rgb_pending`], [`Yuv420::to_rgb_rows`]), and whoever
//! drew on the picture may make the encoder's picture itself
//! ([`Yuv420::bake`]). Export does both on its parallel workers, so the
//! threads that see every frame in order do neither (issue 31).

use std::fmt;

use ffmpeg_next::{ffi, frame};

use super::convert::Colorimetry;
use super::yuv::{Coeffs, InvCoeffs, Plane, PlaneMut, rgb_to_yuv420_rect, yuv420_rows_to_rgb};
use crate::image::RgbImage;

/// A reference to a decoded 8-bit YUV 4:2:0 picture of even size (shared
/// with the decoder, never written), plus the rectangles of the frame's
/// RGB picture that were changed since it was decoded. Limited range,
/// unless the decoder was asked to keep full-range pictures too
/// ([`Yuv420::full_range`]: shown as they are, never baked nor encoded).
pub struct Yuv420 {
    frame: frame::Video,
    /// Colour matrix number (as `AVColorSpace`; 1 = BT.709, 5 = BT.601).
    space: i32,
    /// Full (JPEG) range rather than limited.
    full_range: bool,
    changed: Vec<[usize; 4]>,
    /// The frame's RGB picture was not converted from these planes yet.
    rgb_pending: bool,
    /// The encoder's picture: these planes with the changed parts
    /// converted in ([`Yuv420::bake`]); its buffer is kept between frames.
    baked: Option<frame::Video>,
    /// `baked` holds this frame's picture.
    is_baked: bool,
}

impl fmt::Debug for Yuv420 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Yuv420")
            .field("width", &self.width())
            .field("height", &self.height())
            .field("space", &self.space)
            .field("changed", &self.changed.len())
            .finish()
    }
}

impl Clone for Yuv420 {
    fn clone(&self) -> Self {
        let mut frame = frame::Video::empty();
        // SAFETY: both frames are valid; a new reference to the same
        // buffers. On failure (out of memory) the clone is empty, and an
        // empty picture never matches an encoder, which then converts RGB.
        unsafe { ffi::av_frame_ref(frame.as_mut_ptr(), self.frame.as_ptr()) };
        // A baked picture is not shared: the clone bakes its own.
        Yuv420 {
            frame,
            space: self.space,
            full_range: self.full_range,
            changed: self.changed.clone(),
            rgb_pending: self.rgb_pending,
            baked: None,
            is_baked: false,
        }
    }

    /// As `clone`, keeping this one's baked picture's buffer for the next
    /// bake (a player drawing every frame onto one copy bakes without
    /// allocating).
    fn clone_from(&mut self, source: &Self) {
        // SAFETY: both frames are valid; the old reference is dropped
        // first. On failure (out of memory) the picture is empty, as in
        // `clone`.
        unsafe {
            ffi::av_frame_unref(self.frame.as_mut_ptr());
            ffi::av_frame_ref(self.frame.as_mut_ptr(), source.frame.as_ptr());
        }
        self.space = source.space;
        self.full_range = source.full_range;
        self.changed.clone_from(&source.changed);
        self.rgb_pending = source.rgb_pending;
        self.is_baked = false;
    }
}

impl Yuv420 {
    /// A new reference to `raw` when it is an 8-bit limited-range 4:2:0
    /// picture (or, with `full_range_ok`, a full-range one) of size `size`
    /// (both even), reusing `reuse`'s allocations; `None` for any other
    /// frame.
    pub(crate) fn reference(
        raw: &frame::Video,
        size: (u32, u32),
        reuse: Option<Yuv420>,
        full_range_ok: bool,
    ) -> Option<Yuv420> {
        let fmt: ffi::AVPixelFormat = raw.format().into();
        let color = Colorimetry::of_frame(raw);
        let (w, h) = size;
        let format_ok = fmt == ffi::AVPixelFormat::AV_PIX_FMT_YUV420P
            || (full_range_ok && fmt == ffi::AVPixelFormat::AV_PIX_FMT_YUVJ420P);
        if !format_ok
            || (color.full_range && !full_range_ok)
            || (raw.width(), raw.height()) != size
            || w % 2 != 0
            || h % 2 != 0
            || w == 0
        {
            return None;
        }
        let mut out = reuse.unwrap_or_else(|| Yuv420 {
            frame: frame::Video::empty(),
            space: 1,
            full_range: false,
            changed: Vec::new(),
            rgb_pending: false,
            baked: None,
            is_baked: false,
        });
        // SAFETY: valid frames; the old reference is dropped first.
        let ok = unsafe {
            ffi::av_frame_unref(out.frame.as_mut_ptr());
            ffi::av_frame_ref(out.frame.as_mut_ptr(), raw.as_ptr()) >= 0
        };
        out.space = color.space;
        out.full_range = color.full_range;
        out.changed.clear();
        out.rgb_pending = false;
        out.is_baked = false;
        ok.then_some(out)
    }

    pub fn width(&self) -> usize {
        self.frame.width() as usize
    }

    pub fn height(&self) -> usize {
        self.frame.height() as usize
    }

    /// The colour matrix of the planes (1 = BT.709, 5 = BT.601, …).
    pub fn space(&self) -> i32 {
        self.space
    }

    /// Whether the planes are full range (0–255 for black to white) rather
    /// than limited (16–235).
    pub fn full_range(&self) -> bool {
        self.full_range
    }

    /// Plane `i` (0 = Y, 1 = U, 2 = V) as rows of `stride` bytes, of which
    /// the first `width` (Y) or `width / 2` (U, V) are the picture.
    pub fn plane(&self, i: usize) -> (&[u8], usize) {
        (self.frame.data(i), self.frame.stride(i))
    }

    /// The picture as it stands, for showing it: the baked picture
    /// ([`bake`](Self::bake)) when this frame was baked, else the decoded
    /// planes when nothing is marked changed; `None` when parts marked
    /// changed are only in the RGB picture (bake first), or when FFmpeg
    /// cannot make a reference (out of memory).
    pub fn picture(&self) -> Option<Picture420> {
        let source = match self.baked() {
            Some(b) => b,
            None if self.changed.is_empty() => &self.frame,
            None => return None,
        };
        let mut frame = frame::Video::empty();
        // SAFETY: both frames are valid; a new reference to the same buffers.
        let ok = unsafe { ffi::av_frame_ref(frame.as_mut_ptr(), source.as_ptr()) } >= 0;
        ok.then_some(Picture420 {
            frame,
            space: self.space,
            full_range: self.full_range,
        })
    }

    /// Records that the RGB picture changed inside `[x0, y0, x1, y1]`
    /// (`x0..x1` × `y0..y1`): those pixels, widened to whole 2×2 blocks,
    /// are converted from RGB when the frame is encoded.
    pub fn mark_changed(&mut self, rect: [usize; 4]) {
        if rect[0] < rect[2] && rect[1] < rect[3] {
            self.changed.push(rect);
        }
    }

    /// The rectangles recorded by [`mark_changed`](Self::mark_changed).
    pub fn changed(&self) -> &[[usize; 4]] {
        &self.changed
    }

    /// Whether the frame's RGB picture is still to be converted from these
    /// planes: its buffer has the right size but stale pixels, except rows
    /// converted with [`to_rgb_rows`](Self::to_rgb_rows).
    pub fn rgb_pending(&self) -> bool {
        self.rgb_pending
    }

    /// Marks the frame's RGB picture as not yet converted (the decoder
    /// leaving the conversion to the frame's user).
    pub(crate) fn set_rgb_pending(&mut self) {
        self.rgb_pending = true;
    }

    /// Converts `rows` of these planes into `rgb` (sized to the picture
    /// when it is not): the same pixels the whole conversion gives, row by
    /// row. Leaves [`rgb_pending`](Self::rgb_pending) as it is.
    pub fn to_rgb_rows(&self, rgb: &mut RgbImage, rows: impl Iterator<Item = usize>) {
        let (w, h) = (self.width(), self.height());
        if rgb.dim() != (h, w, 3) {
            *rgb = RgbImage::zeros((h, w, 3));
        }
        let Some(dst) = rgb.as_slice_mut() else {
            return;
        };
        let plane = |i: usize| {
            let (data, stride) = self.plane(i);
            Plane { data, stride }
        };
        yuv420_rows_to_rgb(
            plane(0),
            plane(1),
            plane(2),
            w,
            h,
            rows,
            dst,
            &InvCoeffs::for_space(self.space, self.full_range),
        );
    }

    /// Converts the whole RGB picture if it is pending; afterwards it is not.
    pub fn finish_rgb(&mut self, rgb: &mut RgbImage) {
        if self.rgb_pending {
            self.to_rgb_rows(rgb, 0..self.height());
            self.rgb_pending = false;
        }
    }

    /// Makes the encoder's picture on the calling thread: a copy of these
    /// planes with the parts marked changed converted from `rgb` (packed,
    /// the planes' size), exactly what the encoder would make itself
    /// ([`crate::video::Encoder::push_frame`] takes it as it is). The copy's
    /// buffer is reused from frame to frame. Fails only when FFmpeg cannot
    /// allocate it; `rgb` of another size, or full-range planes (the
    /// conversion back is limited range), leave the picture unbaked.
    pub fn bake(&mut self, rgb: &[u8]) -> Result<(), String> {
        let (w, h) = (self.width(), self.height());
        self.is_baked = false;
        if rgb.len() != 3 * w * h || w == 0 || self.full_range {
            return Ok(());
        }
        let fits = self
            .baked
            .as_ref()
            .is_some_and(|b| (b.width() as usize, b.height() as usize) == (w, h));
        if !fits {
            self.baked = Some(frame::Video::new(
                ffmpeg_next::format::Pixel::YUV420P,
                w as u32,
                h as u32,
            ));
        }
        let Some(baked) = self.baked.as_mut() else {
            return Ok(());
        };
        // SAFETY: an allocated frame; copies its buffer if shared.
        let ret = unsafe { ffi::av_frame_make_writable(baked.as_mut_ptr()) };
        if ret < 0 || baked.data(0).is_empty() {
            return Err(format!("cannot allocate a {w}×{h} picture for the encoder"));
        }
        for i in 0..3 {
            let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
            let (src, stride) = (self.frame.data(i), self.frame.stride(i));
            if stride < pw || src.len() < stride * (ph - 1) + pw {
                return Err(format!("decoded plane {i} is smaller than the picture"));
            }
        }
        let [mut py, mut pu, mut pv] = planes_mut(baked, h);
        for (i, d) in [&mut py, &mut pu, &mut pv].into_iter().enumerate() {
            let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
            let (src, stride) = (self.frame.data(i), self.frame.stride(i));
            for row in 0..ph {
                d.data[row * d.stride..][..pw].copy_from_slice(&src[row * stride..][..pw]);
            }
        }
        let coeffs = Coeffs::for_space(self.space);
        convert_changed(&self.changed, rgb, w, h, [&mut py, &mut pu, &mut pv], &coeffs);
        self.changed.clear();
        self.is_baked = true;
        Ok(())
    }

    /// The encoder's picture made by [`bake`](Self::bake) for this frame.
    pub(crate) fn baked(&self) -> Option<&frame::Video> {
        self.baked.as_ref().filter(|_| self.is_baked)
    }
}

/// A read-only reference to a YUV 4:2:0 picture ([`Yuv420::picture`]):
/// what a display uploads as it is. Holding it keeps the picture's buffers
/// alive; whoever would write them again (the next bake) copies first.
pub struct Picture420 {
    frame: frame::Video,
    space: i32,
    full_range: bool,
}

impl fmt::Debug for Picture420 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Picture420")
            .field("width", &self.width())
            .field("height", &self.height())
            .field("space", &self.space)
            .field("full_range", &self.full_range)
            .finish()
    }
}

impl Picture420 {
    pub fn width(&self) -> usize {
        self.frame.width() as usize
    }

    pub fn height(&self) -> usize {
        self.frame.height() as usize
    }

    /// The colour matrix (1 = BT.709, 5 = BT.601, …; see
    /// [`InvCoeffs::for_space`]).
    pub fn space(&self) -> i32 {
        self.space
    }

    /// Full range (0–255) rather than limited (16–235).
    pub fn full_range(&self) -> bool {
        self.full_range
    }

    /// Plane `i` (0 = Y, 1 = U, 2 = V) as rows of `stride` bytes, of which
    /// the first `width` (Y) or `width / 2` (U, V) are the picture; `None`
    /// when the plane is smaller than that (never for a decoded picture).
    pub fn plane(&self, i: usize) -> Option<(&[u8], usize)> {
        let (w, h) = (self.width(), self.height());
        let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
        let (data, stride) = (self.frame.data(i), self.frame.stride(i));
        (i < 3 && ph > 0 && stride >= pw && data.len() >= stride * (ph - 1) + pw).then_some((data, stride))
    }

    /// The RGB picture these planes convert to (the conversion the decoder
    /// does): the reference a display's own conversion is held to.
    pub fn to_rgb(&self) -> Option<RgbImage> {
        let (w, h) = (self.width(), self.height());
        let (y, u, v) = (self.plane(0)?, self.plane(1)?, self.plane(2)?);
        let mut rgb = RgbImage::zeros((h, w, 3));
        yuv420_rows_to_rgb(
            Plane {
                data: y.0,
                stride: y.1,
            },
            Plane {
                data: u.0,
                stride: u.1,
            },
            Plane {
                data: v.0,
                stride: v.1,
            },
            w,
            h,
            0..h,
            rgb.as_slice_mut()?,
            &InvCoeffs::for_space(self.space, self.full_range),
        );
        Some(rgb)
    }
}

/// Converts the parts of `rgb` (packed, `w`×`h`) inside `changed`, widened
/// to whole 2×2 blocks, into the planes.
pub(crate) fn convert_changed(
    changed: &[[usize; 4]],
    rgb: &[u8],
    w: usize,
    h: usize,
    planes: [&mut PlaneMut<'_>; 3],
    coeffs: &Coeffs,
) {
    let [py, pu, pv] = planes;
    for &[x0, y0, x1, y1] in changed {
        // Changed parts are thin spans row after row: ask for the
        // next row pair's lines early.
        let below = y1 * w + x0;
        crate::simd::prefetch(rgb, 3 * below);
        crate::simd::prefetch(rgb, 3 * (below + w));
        crate::simd::prefetch(py.data, y1 * py.stride + x0);
        crate::simd::prefetch(py.data, (y1 + 1) * py.stride + x0);
        crate::simd::prefetch(pu.data, y1 / 2 * pu.stride + x0 / 2);
        crate::simd::prefetch(pv.data, y1 / 2 * pv.stride + x0 / 2);
        let (x0, y0) = (x0 & !1, y0 & !1);
        let (x1, y1) = ((x1 + 1).min(w) & !1, (y1 + 1).min(h) & !1);
        if x0 >= x1 || y0 >= y1 {
            continue;
        }
        rgb_to_yuv420_rect(rgb, w, [x0, y0, x1, y1], py, pu, pv, coeffs);
    }
}

/// The three planes of a writable YUV420P `frame` of `height` rows.
pub(crate) fn planes_mut(frame: &mut frame::Video, height: usize) -> [PlaneMut<'_>; 3] {
    // SAFETY: the pointer of an allocated frame.
    let f = unsafe { frame.as_mut_ptr() };
    // SAFETY: a writable YUV420P frame: plane 0 has `height` rows of
    // linesize[0] bytes, planes 1 and 2 have height/2 rows; the three planes
    // do not overlap, and they live as long as the borrow of `frame`.
    let plane = |i: usize, rows: usize| unsafe {
        let stride = (*f).linesize[i] as usize;
        PlaneMut {
            data: std::slice::from_raw_parts_mut((*f).data[i], stride * rows),
            stride,
        }
    };
    [plane(0, height), plane(1, height / 2), plane(2, height / 2)]
}
