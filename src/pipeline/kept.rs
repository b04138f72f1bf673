//! The persistent drawings kept from frame to frame: a session's field
//! lines, a map, a plan drawn once for the whole run are the same
//! primitives frame after frame, and while the camera stays (the same
//! calibration, picture size and drawing options) they draw the same
//! pixels. The layers as the persistent primitives left them are copied
//! once and pasted into the next frames instead of drawing them again;
//! the instantaneous primitives are then drawn over them as usual, so
//! every pixel is what drawing them all would give.
//!
//! A copy is made only when a frame draws the same persistent primitives
//! as the frame before it, so a moving camera (a rendered match following
//! the ball: a calibration per frame) costs a comparison, not a copy.

use crate::calib::Calibration;
use crate::draw::occlude::DepthSample;
use crate::draw::{DrawnCopy, SkipReason, TextBackdrop};

/// What the persistent part of a frame's drawing depends on, besides the
/// log and filter (which the pipeline forgets the copy for when they
/// change: [`Kept::forget`]).
#[derive(Debug, PartialEq)]
pub(super) struct Key<'a> {
    /// Positions of the persistent primitives drawn, in draw order.
    pub positions: &'a [usize],
    pub calib: &'a Calibration,
    /// Only the shapes in the picture's pixels (no calibration).
    pub picture_only: bool,
    pub size: (usize, usize),
    pub backdrop: TextBackdrop,
    pub flatten_heights: bool,
}

/// The layers and painter state the persistent primitives left behind.
#[derive(Debug, Default)]
pub(super) struct Drawn {
    /// The floor layer, the raised layer and the layer above the mask.
    pub layers: [DrawnCopy; 3],
    pub depth_samples: Vec<DepthSample>,
    pub drawn: usize,
    pub skipped: usize,
    pub skip_reason: Option<SkipReason>,
}

/// The last frame's persistent key and, when two frames in a row had it,
/// what it drew.
#[derive(Debug, Default)]
pub(super) struct Kept {
    positions: Vec<usize>,
    calib: Option<Calibration>,
    picture_only: bool,
    size: (usize, usize),
    backdrop: TextBackdrop,
    flatten_heights: bool,
    drawn: Option<Drawn>,
}

impl Kept {
    fn is(&self, key: &Key<'_>) -> bool {
        self.calib.as_ref() == Some(key.calib)
            && self.positions == key.positions
            && self.picture_only == key.picture_only
            && self.size == key.size
            && self.backdrop == key.backdrop
            && self.flatten_heights == key.flatten_heights
    }

    /// What was drawn for `key`, when it was kept.
    pub fn get(&self, key: &Key<'_>) -> Option<&Drawn> {
        self.drawn.as_ref().filter(|_| self.is(key))
    }

    /// Notes that a frame drew `key`'s primitives; whether what they drew
    /// should be kept ([`Kept::keep`]): the frame before drew them too.
    pub fn seen(&mut self, key: &Key<'_>) -> bool {
        if self.is(key) {
            return true;
        }
        self.drawn = None;
        self.positions.clear();
        self.positions.extend_from_slice(key.positions);
        if self.calib.as_ref() != Some(key.calib) {
            self.calib = Some(key.calib.clone());
        }
        self.picture_only = key.picture_only;
        self.size = key.size;
        self.backdrop = key.backdrop;
        self.flatten_heights = key.flatten_heights;
        false
    }

    /// Where to keep what the key last [`seen`](Kept::seen) drew.
    pub fn keep(&mut self) -> &mut Drawn {
        self.drawn.get_or_insert_with(Drawn::default)
    }

    /// Whether a drawing is kept.
    #[cfg(test)]
    pub fn has_drawn(&self) -> bool {
        self.drawn.is_some()
    }

    /// Forgets what was kept (the log, filter or settings changed).
    pub fn forget(&mut self) {
        *self = Kept::default();
    }
}
