//! A query's result: the positions of the selected primitives in draw
//! order ([`Selection`], borrowing the log), and the sort that puts the
//! persistent frames' hits back into recorded order.
//!
//! A selection borrows the [`Index`] that made it (to turn its hits into
//! primitives), and the index makes selections: the two files name each
//! other.

use std::borrow::Cow;

use super::Index;
use crate::log::{Log, Primitive};

/// A primitive of a persistent frame that passed the filter: the frame's
/// ordinal in the high half, the position in the frame in the low half, so
/// sorting hits puts them in recorded order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Hit(pub(super) u64);

impl Hit {
    pub(super) fn new(ordinal: u32, offset: usize) -> Self {
        Hit((u64::from(ordinal) << 32) | offset as u64)
    }
    pub(super) fn ordinal(self) -> usize {
        (self.0 >> 32) as usize
    }
    pub(super) fn offset(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }
}

/// Sorts hits by ordinal, then offset. A frame's hits are pushed
/// consecutively in offset order and each frame once, so a stable sort by
/// ordinal alone suffices: a least-significant-digit radix sort on the
/// ordinal's bytes (ordinals are below `ordinals`), or the standard sort
/// for short lists.
pub(super) fn sort_hits(hits: &mut Vec<Hit>, ordinals: usize) {
    if hits.len() < 128 {
        hits.sort_unstable();
        return;
    }
    let bits = usize::BITS - ordinals.leading_zeros();
    let mut from = std::mem::take(hits);
    let mut to = vec![Hit(0); from.len()];
    for shift in (0..bits).step_by(8).map(|b| 32 + b) {
        let digit = |h: Hit| ((h.0 >> shift) & 0xff) as usize;
        let mut start = [0usize; 256];
        for &h in &from {
            start[digit(h)] += 1;
        }
        let mut sum = 0;
        for c in &mut start {
            (*c, sum) = (sum, sum + *c);
        }
        for &h in &from {
            let d = digit(h);
            to[start[d]] = h;
            start[d] += 1;
        }
        std::mem::swap(&mut from, &mut to);
    }
    *hits = from;
}

/// The primitives shown at one time: borrowed from the log, in draw order
/// (persistent frames in recorded order, then the instantaneous frames;
/// recorded order within a frame). Filtered when made: it holds the
/// positions of the selected primitives in `Log::primitives`.
#[derive(Clone, Debug)]
pub struct Selection<'a> {
    pub(super) index: &'a Index,
    pub(super) log: &'a Log,
    pub(super) t: f64,
    pub(super) threshold: f64,
    /// How many of `primitives`, from the first, are of persistent frames.
    pub(super) persistent: usize,
    pub(super) primitives: Vec<usize>,
    pub(super) instants: Vec<usize>,
}

impl<'a> Selection<'a> {
    /// The selected frames in draw order (the instantaneous ones last),
    /// including frames none of whose primitives pass the filter.
    pub fn frames(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.index.frames_at(self.t, self.threshold, &mut out);
        out
    }

    /// The selected instantaneous frames (one per stream at most).
    pub fn instant_frames(&self) -> &[usize] {
        &self.instants
    }

    /// Positions of the selected primitives in `Log::primitives`, in draw order.
    pub fn positions(&self) -> &[usize] {
        &self.primitives
    }

    /// How many of the selected primitives, from the first, are of
    /// persistent frames (the rest are of the instantaneous ones).
    pub fn persistent_len(&self) -> usize {
        self.persistent
    }

    /// The selected primitives in draw order.
    pub fn iter(&self) -> SelectionIter<'_, 'a> {
        SelectionIter {
            log: self.log,
            positions: Cow::Borrowed(&self.primitives),
            next: 0,
        }
    }

    /// Number of selected primitives.
    pub fn len(&self) -> usize {
        self.primitives.len()
    }

    /// Whether no primitive is selected.
    pub fn is_empty(&self) -> bool {
        self.primitives.is_empty()
    }
}

impl<'s, 'a> IntoIterator for &'s Selection<'a> {
    type Item = &'a Primitive;
    type IntoIter = SelectionIter<'s, 'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for Selection<'a> {
    type Item = &'a Primitive;
    type IntoIter = SelectionIter<'a, 'a>;
    fn into_iter(self) -> Self::IntoIter {
        SelectionIter {
            log: self.log,
            positions: Cow::Owned(self.primitives),
            next: 0,
        }
    }
}

/// Iterator over the primitives of a [`Selection`].
#[derive(Clone, Debug)]
pub struct SelectionIter<'s, 'a> {
    log: &'a Log,
    positions: Cow<'s, [usize]>,
    next: usize,
}

impl<'a> Iterator for SelectionIter<'_, 'a> {
    type Item = &'a Primitive;

    #[inline]
    fn next(&mut self) -> Option<&'a Primitive> {
        while let Some(&i) = self.positions.get(self.next) {
            self.next += 1;
            // An index used with another log skips what that log lacks.
            if let Some(p) = self.log.primitives.get(i) {
                return Some(p);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.positions.len() - self.next))
    }
}
