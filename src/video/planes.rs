//! The decoded YUV 4:2:0 picture of a frame, kept beside its RGB copy so
//! that export hands the encoder the decoded pixels themselves and
//! converts back from RGB only the parts the overlay changed: less work
//! than converting every pixel back, and the untouched pixels stay exactly
//! as decoded.

use std::fmt;

use ffmpeg_next::{ffi, frame};

use super::convert::Colorimetry;

/// A reference to a decoded 8-bit limited-range YUV 4:2:0 picture of even
/// size (shared with the decoder, never written), plus the rectangles of
/// the frame's RGB picture that were changed since it was decoded.
pub struct Yuv420 {
    frame: frame::Video,
    /// Colour matrix number (as `AVColorSpace`; 1 = BT.709, 5 = BT.601).
    space: i32,
    changed: Vec<[usize; 4]>,
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
        Yuv420 {
            frame,
            space: self.space,
            changed: self.changed.clone(),
        }
    }
}

impl Yuv420 {
    /// A new reference to `raw` when it is an 8-bit limited-range 4:2:0
    /// picture of size `size` (both even), reusing `reuse`'s allocations;
    /// `None` for any other frame.
    pub(crate) fn reference(raw: &frame::Video, size: (u32, u32), reuse: Option<Yuv420>) -> Option<Yuv420> {
        let fmt: ffi::AVPixelFormat = raw.format().into();
        let color = Colorimetry::of_frame(raw);
        let (w, h) = size;
        if fmt != ffi::AVPixelFormat::AV_PIX_FMT_YUV420P
            || color.full_range
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
            changed: Vec::new(),
        });
        // SAFETY: valid frames; the old reference is dropped first.
        let ok = unsafe {
            ffi::av_frame_unref(out.frame.as_mut_ptr());
            ffi::av_frame_ref(out.frame.as_mut_ptr(), raw.as_ptr()) >= 0
        };
        out.space = color.space;
        out.changed.clear();
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

    /// Plane `i` (0 = Y, 1 = U, 2 = V) as rows of `stride` bytes, of which
    /// the first `width` (Y) or `width / 2` (U, V) are the picture.
    pub fn plane(&self, i: usize) -> (&[u8], usize) {
        (self.frame.data(i), self.frame.stride(i))
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
}
