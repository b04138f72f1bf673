//! The decoded YUV 4:2:0 picture of a frame: what the pipeline masks
//! and draws on, and what the encoder takes, so that a frame goes from the
//! decoder to the encoder without an RGB picture on the way (issue 48):
//! the mask reads the planes ([`Planes`], [`Picture`]), the drawings are
//! blended into them ([`Yuv420::draw_planes`]), and pixels nothing was
//! drawn on stay exactly as decoded.
//!
//! The RGB picture is made only where a person asks for it (a PNG, a
//! screenshot, a frame painted in RGB): a decoder may leave it to be
//! converted later ([`Yuv420::rgb_pending`], [`Yuv420::to_rgb_rows`]),
//! and it is converted from the planes as drawn. A frame painted in RGB
//! instead marks what it changed ([`Yuv420::mark_changed`]), which is
//! converted back into the planes ([`Yuv420::bake`]).
//!
//! A display takes the planes as they stand ([`Yuv420::picture`], a
//! [`Picture420`] that keeps them alive on another thread) and converts
//! them itself (the viewer's shader): for it a decoder may keep full-range
//! pictures too ([`Yuv420::full_range`]), which are shown, never masked,
//! drawn on nor encoded.

use std::fmt;

use ffmpeg_next::{ffi, frame};

use super::convert::Colorimetry;
use super::yuv::{Coeffs, InvCoeffs, Plane, PlaneMut, rgb_to_yuv420_rect, yuv420_rows_to_rgb};
use crate::image::RgbImage;

/// A frame's YUV 4:2:0 planes as maskers and compositors read them:
/// 8-bit, of even size (chroma planes `width / 2` × `height / 2`), in
/// colour matrix `space`; limited range, but for a display's full-range
/// planes ([`Picture420::planes`]), which maskers are never given
/// ([`crate::video::SourceFrame::picture`]).
#[derive(Clone, Copy, Debug)]
pub struct Planes<'a> {
    pub width: usize,
    pub height: usize,
    /// Colour matrix number (as `AVColorSpace`; 1 = BT.709, 5 = BT.601).
    pub space: i32,
    /// Full (JPEG) range, 0–255 for black to white, rather than 16–235.
    pub full_range: bool,
    pub y: Plane<'a>,
    pub u: Plane<'a>,
    pub v: Plane<'a>,
}

impl<'a> Planes<'a> {
    /// Row `r` of plane `i` (0 = Y, 1 = U, 2 = V), its picture's bytes only.
    #[inline]
    pub fn row(&self, i: usize, r: usize) -> &'a [u8] {
        let (p, w) = match i {
            0 => (self.y, self.width),
            1 => (self.u, self.width / 2),
            _ => (self.v, self.width / 2),
        };
        &p.data[r * p.stride..][..w]
    }

    /// Converts the planes into packed RGB rows of `3·width` bytes (`rgb`
    /// made the picture's size when it is not).
    pub fn to_rgb(&self, rgb: &mut RgbImage) {
        self.to_rgb_rows(rgb, 0..self.height);
    }

    /// Converts `rows` of the planes into `rgb` (made the picture's size
    /// when it is not), as [`to_rgb`](Self::to_rgb) converts them.
    pub fn to_rgb_rows(&self, rgb: &mut RgbImage, rows: impl Iterator<Item = usize>) {
        let (w, h) = (self.width, self.height);
        if rgb.dim() != (h, w, 3) || !rgb.is_standard_layout() {
            *rgb = RgbImage::zeros((h, w, 3));
        }
        let Some(dst) = rgb.as_slice_mut() else {
            return;
        };
        yuv420_rows_to_rgb(
            self.y,
            self.u,
            self.v,
            w,
            h,
            rows,
            dst,
            &InvCoeffs::for_space(self.space, self.full_range),
        );
    }
}

/// A frame's picture as maskers read it: its decoded YUV 4:2:0 planes, or
/// an RGB picture (a still image, a rendered match), which a masker reads
/// as its 4:2:0 conversion.
#[derive(Clone, Copy, Debug)]
pub enum Picture<'a> {
    Rgb(&'a RgbImage),
    Yuv(Planes<'a>),
}

impl Picture<'_> {
    /// `(width, height)` in pixels (of an RGB picture: its first two axes).
    pub fn size(&self) -> (usize, usize) {
        match self {
            Picture::Rgb(img) => (img.dim().1, img.dim().0),
            Picture::Yuv(p) => (p.width, p.height),
        }
    }
}

impl<'a> From<&'a RgbImage> for Picture<'a> {
    fn from(img: &'a RgbImage) -> Self {
        Picture::Rgb(img)
    }
}

/// The three planes of a picture, writable: where the pipeline composites
/// drawings ([`Yuv420::draw_planes`]).
pub struct PlanesMut<'a> {
    pub width: usize,
    pub height: usize,
    pub space: i32,
    pub y: PlaneMut<'a>,
    pub u: PlaneMut<'a>,
    pub v: PlaneMut<'a>,
}

/// A decoded 8-bit YUV 4:2:0 picture of even size: a reference to the
/// decoder's picture until something is drawn on it
/// ([`Yuv420::draw_planes`]), then this frame's own (drawn in place when
/// no one else holds the decoded picture, else on a copy), plus the
/// rectangles of the frame's RGB picture changed since it was decoded
/// ([`Yuv420::mark_changed`], converted in by [`Yuv420::bake`]). Limited
/// range, unless the decoder was asked to keep full-range pictures too
/// ([`Yuv420::full_range`]: shown as they are, never drawn on, baked nor
/// encoded).
pub struct Yuv420 {
    /// The picture: as decoded, or as drawn.
    frame: frame::Video,
    /// Colour matrix number (as `AVColorSpace`; 1 = BT.709, 5 = BT.601).
    space: i32,
    /// Full (JPEG) range rather than limited.
    full_range: bool,
    changed: Vec<[usize; 4]>,
    /// The frame's RGB picture was not converted from these planes yet
    /// (or was, before they were drawn on).
    rgb_pending: bool,
    /// Something was drawn on `frame` since it was decoded.
    drawn: bool,
    /// A picture buffer of this frame's kept for drawing on the next
    /// decoded picture when that one is shared.
    spare: Option<frame::Video>,
}

impl fmt::Debug for Yuv420 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Yuv420")
            .field("width", &self.width())
            .field("height", &self.height())
            .field("space", &self.space)
            .field("full_range", &self.full_range)
            .field("changed", &self.changed.len())
            .field("drawn", &self.drawn)
            .finish()
    }
}

impl Clone for Yuv420 {
    fn clone(&self) -> Self {
        let mut frame = frame::Video::empty();
        // SAFETY: both frames are valid; a new reference to the same
        // buffers (so neither side draws on them in place any more). On
        // failure (out of memory) the clone is empty, and an empty picture
        // never matches an encoder, which then converts RGB.
        unsafe { ffi::av_frame_ref(frame.as_mut_ptr(), self.frame.as_ptr()) };
        Yuv420 {
            frame,
            space: self.space,
            full_range: self.full_range,
            changed: self.changed.clone(),
            rgb_pending: self.rgb_pending,
            drawn: self.drawn,
            spare: None,
        }
    }

    /// Like `clone`, keeping this one's buffer for drawing (a player
    /// drawing every frame onto a copy draws on one buffer).
    fn clone_from(&mut self, source: &Self) {
        self.keep_spare();
        let spare = self.spare.take();
        *self = source.clone();
        self.spare = spare;
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
            drawn: false,
            spare: None,
        });
        out.keep_spare();
        // SAFETY: valid frames; the old reference is dropped first.
        let ok = unsafe {
            ffi::av_frame_unref(out.frame.as_mut_ptr());
            ffi::av_frame_ref(out.frame.as_mut_ptr(), raw.as_ptr()) >= 0
        };
        out.space = color.space;
        out.full_range = color.full_range;
        out.changed.clear();
        out.rgb_pending = false;
        out.drawn = false;
        ok.then_some(out)
    }

    /// Keeps the picture drawn on as the buffer for the next copy, when no
    /// one else holds it any more (the encoder let go of it); else it is
    /// let go of with the picture.
    fn keep_spare(&mut self) {
        if self.drawn && self.spare.is_none() && self.frame.width() > 0 {
            // SAFETY: a valid frame (only read).
            if unsafe { ffi::av_frame_is_writable(self.frame.as_mut_ptr()) } > 0 {
                let own = std::mem::replace(&mut self.frame, frame::Video::empty());
                self.spare = Some(own);
                self.drawn = false;
            }
        }
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
    /// than limited (16–235): kept only for a display
    /// ([`OpenOptions::yuv_full_range`](crate::video::source::OpenOptions::yuv_full_range)).
    pub fn full_range(&self) -> bool {
        self.full_range
    }

    /// Plane `i` (0 = Y, 1 = U, 2 = V) as rows of `stride` bytes, of which
    /// the first `width` (Y) or `width / 2` (U, V) are the picture: as
    /// drawn, when something was ([`draw_planes`](Self::draw_planes)).
    pub fn plane(&self, i: usize) -> (&[u8], usize) {
        (self.frame.data(i), self.frame.stride(i))
    }

    /// The three planes: as drawn, when something was. The viewer uploads
    /// these; the masks are computed from them before anything is drawn.
    pub fn planes(&self) -> Planes<'_> {
        let p = |i: usize| {
            let (data, stride) = self.plane(i);
            Plane { data, stride }
        };
        Planes {
            width: self.width(),
            height: self.height(),
            space: self.space,
            full_range: self.full_range,
            y: p(0),
            u: p(1),
            v: p(2),
        }
    }

    /// Whether something was drawn on the planes since they were decoded.
    pub fn is_drawn(&self) -> bool {
        self.drawn
    }

    /// The picture as it stands, for showing it: the planes as decoded or
    /// drawn; `None` while parts marked changed are only in the RGB
    /// picture ([`bake`](Self::bake) first; full-range planes never take
    /// them), or when FFmpeg cannot make a reference (out of memory).
    /// Whoever draws on these planes while the picture is held draws on a
    /// copy.
    pub fn picture(&self) -> Option<Picture420> {
        if !self.changed.is_empty() {
            return None;
        }
        let mut frame = frame::Video::empty();
        // SAFETY: both frames are valid; a new reference to the same buffers.
        let ok = unsafe { ffi::av_frame_ref(frame.as_mut_ptr(), self.frame.as_ptr()) } >= 0;
        ok.then_some(Picture420 {
            frame,
            space: self.space,
            full_range: self.full_range,
        })
    }

    /// Makes the planes this frame's own to draw on, as
    /// [`draw_planes`](Self::draw_planes) does, without drawing: copied
    /// out of the decoder's buffer when it still holds them. The picture
    /// and its RGB conversion stay as they are.
    pub fn own_planes(&mut self) -> Result<(), String> {
        let (w, h) = (self.width(), self.height());
        if w == 0 || h == 0 {
            return Err("no picture to draw on".into());
        }
        if self.full_range {
            return Err("full-range planes are not drawn on (drawings convert to limited range)".into());
        }
        // SAFETY: a valid frame; writable means its buffers have no other
        // reference (not the decoder's, not a clone's, not the encoder's).
        let writable = unsafe { ffi::av_frame_is_writable(self.frame.as_mut_ptr()) } > 0;
        if !writable {
            let mut copy = match self.spare.take() {
                Some(s) if (s.width() as usize, s.height() as usize) == (w, h) => s,
                _ => frame::Video::new(ffmpeg_next::format::Pixel::YUV420P, w as u32, h as u32),
            };
            // SAFETY: an allocated frame; copies its buffer if shared.
            let ret = unsafe { ffi::av_frame_make_writable(copy.as_mut_ptr()) };
            if ret < 0 || copy.data(0).is_empty() {
                return Err(format!("cannot allocate a {w}×{h} picture to draw on"));
            }
            for i in 0..3 {
                let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
                let (src, stride) = (self.frame.data(i), self.frame.stride(i));
                if stride < pw || src.len() < stride * (ph - 1) + pw {
                    return Err(format!("decoded plane {i} is smaller than the picture"));
                }
                let dstride = copy.stride(i);
                let dst = copy.data_mut(i);
                for row in 0..ph {
                    dst[row * dstride..][..pw].copy_from_slice(&src[row * stride..][..pw]);
                }
            }
            // SAFETY: reading and writing plain fields of valid frames.
            unsafe {
                let (c, f) = (copy.as_mut_ptr(), self.frame.as_ptr());
                (*c).colorspace = (*f).colorspace;
                (*c).color_range = (*f).color_range;
                (*c).pts = (*f).pts;
            }
            // The decoded picture is let go of (its buffer back to the
            // decoder).
            self.frame = copy;
        }
        Ok(())
    }

    /// The planes to draw on: the decoded picture itself when no one else
    /// holds it (the decoder let go of it, no clone shares it), else a copy
    /// of it in this frame's own buffer (kept from frame to frame). The
    /// frame's RGB picture, if it was converted, is from then on pending
    /// ([`rgb_pending`](Self::rgb_pending)): converted again from the
    /// drawn planes when asked for. Fails only when FFmpeg cannot allocate
    /// a picture, or for full-range planes (drawings convert to limited
    /// range: those frames are drawn in RGB).
    pub fn draw_planes(&mut self) -> Result<PlanesMut<'_>, String> {
        self.own_planes()?;
        let (w, h) = (self.width(), self.height());
        if !self.drawn {
            self.drawn = true;
            self.rgb_pending = true;
        }
        let [y, u, v] = planes_mut(&mut self.frame, h);
        Ok(PlanesMut {
            width: w,
            height: h,
            space: self.space,
            y,
            u,
            v,
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
    /// converted with [`to_rgb_rows`](Self::to_rgb_rows); also after
    /// something was drawn on the planes.
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
        self.planes().to_rgb_rows(rgb, rows);
    }

    /// Converts the whole RGB picture if it is pending; afterwards it is not.
    pub fn finish_rgb(&mut self, rgb: &mut RgbImage) {
        if self.rgb_pending {
            self.to_rgb_rows(rgb, 0..self.height());
            self.rgb_pending = false;
        }
    }

    /// Converts the parts of the RGB picture `rgb` (packed, the planes'
    /// size) marked changed ([`mark_changed`](Self::mark_changed)) into the
    /// planes (drawn on as [`draw_planes`](Self::draw_planes) draws), for
    /// a frame painted in RGB: what the encoder would convert itself.
    /// Fails only when FFmpeg cannot allocate a picture; `rgb` of another
    /// size, or full-range planes (the conversion back is limited range),
    /// leave the marks.
    pub fn bake(&mut self, rgb: &[u8]) -> Result<(), String> {
        let (w, h) = (self.width(), self.height());
        if self.changed.is_empty() || rgb.len() != 3 * w * h || w == 0 || self.full_range {
            return Ok(());
        }
        let changed = std::mem::take(&mut self.changed);
        let pending = self.rgb_pending;
        let coeffs = Coeffs::for_space(self.space);
        let mut p = self.draw_planes()?;
        convert_changed(&changed, rgb, w, h, [&mut p.y, &mut p.u, &mut p.v], &coeffs);
        // The RGB picture is what was painted: it stays as it was.
        self.rgb_pending = pending;
        Ok(())
    }

    /// The picture the encoder takes: the planes as decoded or drawn.
    pub(crate) fn frame(&self) -> &frame::Video {
        &self.frame
    }
}

/// A read-only reference to a YUV 4:2:0 picture ([`Yuv420::picture`]):
/// what a display uploads as it is, on another thread. Holding it keeps
/// the picture's buffers alive; whoever would draw on them again copies
/// first.
pub struct Picture420 {
    frame: frame::Video,
    space: i32,
    full_range: bool,
}

impl fmt::Debug for Picture420 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Picture420")
            .field("width", &self.frame.width())
            .field("height", &self.frame.height())
            .field("space", &self.space)
            .field("full_range", &self.full_range)
            .finish()
    }
}

impl Picture420 {
    /// The three planes (with their size, colour matrix and range), each
    /// checked to hold the picture: `stride × (rows − 1) + width` bytes at
    /// least (what a texture upload reads); `None` when one is smaller
    /// (never for a decoded picture).
    pub fn planes(&self) -> Option<Planes<'_>> {
        let (w, h) = (self.frame.width() as usize, self.frame.height() as usize);
        let plane = |i: usize| {
            let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
            let (data, stride) = (self.frame.data(i), self.frame.stride(i));
            (ph > 0 && stride >= pw && data.len() >= stride * (ph - 1) + pw).then_some(Plane { data, stride })
        };
        Some(Planes {
            width: w,
            height: h,
            space: self.space,
            full_range: self.full_range,
            y: plane(0)?,
            u: plane(1)?,
            v: plane(2)?,
        })
    }

    /// The RGB picture these planes convert to (the conversion the decoder
    /// does): the reference a display's own conversion is held to.
    pub fn to_rgb(&self) -> Option<RgbImage> {
        let mut rgb = RgbImage::zeros((0, 0, 3));
        self.planes()?.to_rgb(&mut rgb);
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
