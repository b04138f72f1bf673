//! The time index over a loaded log: thesis Algorithm 3 in
//! `O(log n + log m + k)`.
//!
//! - Instantaneous frames: their times sorted ascending (ties by recorded
//!   order) in one array; the nearest frame to `t` is found by one binary
//!   search and a look at both neighbours.
//! - Persistent frames: a centered interval tree stored in flat arrays.
//!   Each node holds a center and the intervals containing it, once sorted
//!   by start and once by end, so a stabbing query walks one root-to-leaf
//!   path and reads only intervals that match (plus one per node).
//! - The entity and level of every primitive of a persistent frame, copied
//!   into one small array in recorded order: filtering the (possibly
//!   hundreds of) persistent frames active at `t` reads that array instead
//!   of jumping through the log's large primitive array, and the query
//!   hands out pointers to the primitives that pass without reading them.
//!   Instantaneous frames' primitives are read in place (one contiguous run
//!   per query).
//! - Persistent frames' finite starts sorted, for "jump to the next event".
//!
//! A query returns a [`Selection`] that borrows the log's primitives: no
//! primitive data is copied per query. The index describes the log it was
//! built from; rebuild it after changing that log.

use std::cmp::Ordering;

use crate::log::{EntityId, FrameTime, Log, Primitive};

use super::Filter;

/// Marks a missing child in the interval tree.
const NONE: u32 = u32::MAX;

/// The time index of one log. Build it once with [`Index::new`] and query
/// it with the same log.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// Times of instantaneous frames (NaN times left out), ascending.
    instant_times: Vec<f64>,
    /// Frame index of each entry of `instant_times`; among equal times in
    /// recorded order.
    instant_frames: Vec<usize>,
    /// The persistent frames that can apply (no NaN bound, `start ≤ end`)
    /// in recorded order; their position here is their *ordinal*.
    persistent: Vec<PersistentFrame>,
    /// Entity and level of the primitives of `persistent`, frame after frame.
    keys: Vec<Key>,
    /// Intervals of `persistent`, holding ordinals.
    tree: IntervalTree,
    /// Finite starts of `persistent` ascending, with ordinals (ascending
    /// among equal starts).
    starts: Vec<(f64, u32)>,
    /// Number of frames of the indexed log.
    frame_count: usize,
    /// The threshold derived from the spacing of instantaneous frames.
    derived_threshold: f64,
    /// The header's threshold hint, when usable.
    hinted_threshold: Option<f64>,
}

/// A persistent frame in the index.
#[derive(Clone, Copy, Debug)]
struct PersistentFrame {
    frame: usize,
    /// Index in `Log::primitives` of the frame's first primitive.
    first_primitive: usize,
    /// The frame's entries in `Index::keys`.
    keys_start: usize,
    keys_end: usize,
}

/// What the filter needs of a primitive.
#[derive(Clone, Copy, Debug)]
struct Key {
    entity: EntityId,
    level: i32,
}

impl Index {
    /// Indexes the frames of `log`, reading the entity and level of the
    /// primitives of persistent frames.
    pub fn new(log: &Log) -> Self {
        let mut instants: Vec<(f64, usize)> = Vec::new();
        let mut intervals: Vec<Interval> = Vec::new();
        let mut persistent = Vec::new();
        let mut keys = Vec::new();
        for (i, f) in log.frames.iter().enumerate() {
            match f.time {
                FrameTime::Instant(t) if !t.is_nan() => instants.push((t, i)),
                FrameTime::Instant(_) => {}
                FrameTime::Persistent { start, end } => {
                    // NaN bounds and start > end fail `start ≤ end`: such a frame never applies.
                    if start <= end {
                        let ordinal = to_u32(persistent.len());
                        intervals.push(Interval { start, end, ordinal });
                        let keys_start = keys.len();
                        keys.extend(log.frame_primitives(f).iter().map(|p| Key {
                            entity: p.entity,
                            level: p.level,
                        }));
                        persistent.push(PersistentFrame {
                            frame: i,
                            first_primitive: f.primitives.start,
                            keys_start,
                            keys_end: keys.len(),
                        });
                    }
                }
            }
        }
        // Frame indices are unique, so an unstable sort is deterministic;
        // `partial_cmp` keeps -0.0 and 0.0 together (recorded order decides).
        instants.sort_unstable_by(|a, b| cmp_f64(a.0, b.0).then(a.1.cmp(&b.1)));
        let mut starts: Vec<(f64, u32)> = intervals
            .iter()
            .filter(|iv| iv.start.is_finite())
            .map(|iv| (iv.start, iv.ordinal))
            .collect();
        starts.sort_unstable_by(|a, b| cmp_f64(a.0, b.0).then(a.1.cmp(&b.1)));
        let derived_threshold = derive_threshold(&instants);
        let hinted_threshold = log.header.hints.instant_threshold.filter(|&h| h > 0.0);
        let (instant_times, instant_frames) = instants.into_iter().unzip();
        Index {
            instant_times,
            instant_frames,
            persistent,
            keys,
            tree: IntervalTree::new(intervals),
            starts,
            frame_count: log.frames.len(),
            derived_threshold,
            hinted_threshold,
        }
    }

    /// The instantaneous-frame threshold to use when the user set none: the
    /// header's `hints.instant_threshold` when it is a positive number,
    /// otherwise [`Index::derived_threshold`].
    pub fn default_threshold(&self) -> f64 {
        self.hinted_threshold.unwrap_or(self.derived_threshold)
    }

    /// 1.5 × the median spacing between consecutive distinct finite times of
    /// instantaneous frames. A frame then stays on screen until the next one
    /// is nearer, one dropped frame is bridged, and a longer pause in the
    /// log leaves the instantaneous drawings blank. With fewer than two
    /// distinct finite times it is `+∞` (a lone frame is always shown).
    pub fn derived_threshold(&self) -> f64 {
        self.derived_threshold
    }

    /// Number of frames of the indexed log.
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// Number of instantaneous frames indexed (those with a non-NaN time).
    pub fn instant_count(&self) -> usize {
        self.instant_times.len()
    }

    /// Number of persistent frames indexed (those that can ever apply).
    pub fn persistent_count(&self) -> usize {
        self.persistent.len()
    }

    /// Bytes of heap memory held by the index.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.instant_times.capacity() * size_of::<f64>()
            + self.instant_frames.capacity() * size_of::<usize>()
            + self.persistent.capacity() * size_of::<PersistentFrame>()
            + self.keys.capacity() * size_of::<Key>()
            + self.starts.capacity() * size_of::<(f64, u32)>()
            + self.tree.memory_bytes()
    }

    /// The indices of the frames shown at `t`: persistent frames with
    /// `start ≤ t ≤ end` in recorded order, then the nearest instantaneous
    /// frame if `|time − t| < threshold`. Replaces the contents of `out`
    /// and returns the instantaneous frame.
    pub fn frames_at(&self, t: f64, threshold: f64, out: &mut Vec<usize>) -> Option<usize> {
        out.clear();
        let mut ordinals = Vec::new();
        self.active(t, &mut ordinals);
        out.extend(ordinals.iter().map(|&o| self.persistent[o as usize].frame));
        let instant = self.nearest_instant(t, threshold);
        out.extend(instant);
        instant
    }

    /// Ordinals of the persistent frames holding `t`, ascending.
    fn active(&self, t: f64, out: &mut Vec<u32>) {
        self.tree.stab(t, out);
        out.sort_unstable();
    }

    /// The primitives shown at `t` with `filter`, borrowed from `log` (the
    /// log this index was built from) in draw order; the same as
    /// [`super::brute_force`].
    pub fn select<'a>(&'a self, log: &'a Log, t: f64, threshold: f64, filter: &'a Filter) -> Selection<'a> {
        debug_assert_eq!(log.frames.len(), self.frame_count, "index used with another log");
        let mut persistent = Vec::new();
        self.active(t, &mut persistent);
        Selection {
            index: self,
            log,
            filter,
            persistent,
            instant: self.nearest_instant(t, threshold),
        }
    }

    /// The instantaneous frame shown at `t`, if any: the nearest one when
    /// `|time − t| < threshold` (ties: earlier time, then recorded first).
    pub fn nearest_instant(&self, t: f64, threshold: f64) -> Option<usize> {
        // An infinite or NaN `t` is at infinite or NaN distance from every frame.
        if !t.is_finite() {
            return None;
        }
        let times = &self.instant_times;
        let i = times.partition_point(|&x| x < t);
        // Left of `i` (times < t) the distance falls as the index grows,
        // from `i` on (times ≥ t) it grows: the minimum is at `i − 1` or `i`.
        let left = i.checked_sub(1).map(|j| {
            let d = (times[j] - t).abs();
            // Several earlier times can round to the same distance; the
            // earliest of them wins, and is first in recorded order among
            // its equals.
            let a = times[..i].partition_point(|&x| (x - t).abs() > d);
            (d, a)
        });
        let right = times.get(i).map(|&x| ((x - t).abs(), i));
        let (d, k) = match (left, right) {
            (Some(l), Some(r)) => {
                if r.0 < l.0 {
                    r
                } else {
                    l
                }
            }
            (Some(l), None) => l,
            (None, Some(r)) => r,
            (None, None) => return None,
        };
        (d < threshold).then(|| self.instant_frames[k])
    }

    /// Indices of the frames whose time span overlaps `[t0, t1]`, in
    /// recorded order: instantaneous frames with `t0 ≤ time ≤ t1` and
    /// persistent frames with `start ≤ t1` and `end ≥ t0`. Empty when
    /// `t0 > t1` or either is NaN. (An instantaneous frame is also *shown*
    /// up to the threshold away from its time; widen the range for that.)
    pub fn frames_overlapping(&self, t0: f64, t1: f64) -> Vec<usize> {
        let mut out = Vec::new();
        if t0.is_nan() || t1.is_nan() || t0 > t1 {
            return out;
        }
        let lo = self.instant_times.partition_point(|&x| x < t0);
        let hi = self.instant_times.partition_point(|&x| x <= t1);
        out.extend_from_slice(&self.instant_frames[lo..hi.max(lo)]);
        let mut ordinals = Vec::new();
        self.tree.overlapping(t0, t1, &mut ordinals);
        out.extend(ordinals.iter().map(|&o| self.persistent[o as usize].frame));
        out.sort_unstable();
        out
    }

    /// The first finite start of a persistent frame strictly after `t`, with
    /// the frame (the first recorded among frames starting then): the
    /// viewer's "jump to the next event".
    pub fn next_persistent_start(&self, t: f64) -> Option<(f64, usize)> {
        if t.is_nan() {
            return None;
        }
        let i = self.starts.partition_point(|&(s, _)| s <= t);
        self.start_at(i)
    }

    /// The last finite start of a persistent frame strictly before `t`, with
    /// the frame (the first recorded among frames starting then).
    pub fn prev_persistent_start(&self, t: f64) -> Option<(f64, usize)> {
        if t.is_nan() {
            return None;
        }
        let i = self.starts.partition_point(|&(s, _)| s < t);
        let s = self.starts.get(i.checked_sub(1)?)?.0;
        self.start_at(self.starts[..i].partition_point(|&(x, _)| x < s))
    }

    fn start_at(&self, i: usize) -> Option<(f64, usize)> {
        let &(s, o) = self.starts.get(i)?;
        Some((s, self.persistent[o as usize].frame))
    }

    /// The first finite time of an instantaneous frame strictly after `t`,
    /// with the frame (the first recorded at that time): stepping through
    /// the log frame by frame.
    pub fn next_instant(&self, t: f64) -> Option<(f64, usize)> {
        if t.is_nan() {
            return None;
        }
        let i = self.instant_times.partition_point(|&x| x <= t);
        let x = *self.instant_times.get(i)?;
        x.is_finite().then(|| (x, self.instant_frames[i]))
    }

    /// The last finite time of an instantaneous frame strictly before `t`,
    /// with the frame (the first recorded at that time).
    pub fn prev_instant(&self, t: f64) -> Option<(f64, usize)> {
        if t.is_nan() {
            return None;
        }
        let i = self.instant_times.partition_point(|&x| x < t);
        let x = *self.instant_times.get(i.checked_sub(1)?)?;
        let first = self.instant_times[..i].partition_point(|&y| y < x);
        x.is_finite().then(|| (x, self.instant_frames[first]))
    }
}

/// Orders non-NaN floats, with -0.0 equal to 0.0.
fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// See [`Index::derived_threshold`]; `instants` sorted by time.
fn derive_threshold(instants: &[(f64, usize)]) -> f64 {
    let mut gaps: Vec<f64> = instants
        .windows(2)
        .filter(|w| w[0].0.is_finite() && w[1].0.is_finite())
        .map(|w| w[1].0 - w[0].0)
        .filter(|&g| g > 0.0)
        .collect();
    if gaps.is_empty() {
        return f64::INFINITY;
    }
    let mid = gaps.len() / 2;
    let (_, &mut median, _) = gaps.select_nth_unstable_by(mid, |a, b| cmp_f64(*a, *b));
    1.5 * median
}

/// The primitives shown at one time: borrowed from the log, in draw order
/// (persistent frames in recorded order, then the instantaneous frame;
/// recorded order within a frame), filtered lazily while iterating.
#[derive(Clone, Debug)]
pub struct Selection<'a> {
    index: &'a Index,
    log: &'a Log,
    filter: &'a Filter,
    /// Ordinals of the active persistent frames, ascending.
    persistent: Vec<u32>,
    instant: Option<usize>,
}

impl<'a> Selection<'a> {
    /// The selected frames in draw order (the instantaneous one last).
    pub fn frames(&self) -> impl Iterator<Item = usize> + '_ {
        self.persistent_frames().chain(self.instant)
    }

    /// The selected persistent frames, in recorded order.
    pub fn persistent_frames(&self) -> impl Iterator<Item = usize> + '_ {
        self.persistent
            .iter()
            .map(|&o| self.index.persistent[o as usize].frame)
    }

    /// The selected instantaneous frame, if any.
    pub fn instant_frame(&self) -> Option<usize> {
        self.instant
    }

    /// The selected primitives in draw order.
    pub fn iter(&self) -> SelectionIter<'a, std::iter::Copied<std::slice::Iter<'_, u32>>> {
        SelectionIter::new(self, self.persistent.iter().copied())
    }

    /// Number of selected primitives (counts by filtering the selected
    /// frames' primitives).
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether no primitive is selected.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

impl<'s, 'a> IntoIterator for &'s Selection<'a> {
    type Item = &'a Primitive;
    type IntoIter = SelectionIter<'a, std::iter::Copied<std::slice::Iter<'s, u32>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for Selection<'a> {
    type Item = &'a Primitive;
    type IntoIter = SelectionIter<'a, std::vec::IntoIter<u32>>;
    fn into_iter(mut self) -> Self::IntoIter {
        let ordinals = std::mem::take(&mut self.persistent);
        SelectionIter::new(&self, ordinals.into_iter())
    }
}

/// Iterator over the primitives of a [`Selection`]: first the persistent
/// frames (filtered through the index's copy of entities and levels), then
/// the instantaneous frame (filtered in place).
#[derive(Clone, Debug)]
pub struct SelectionIter<'a, I> {
    index: &'a Index,
    log: &'a Log,
    filter: &'a Filter,
    ordinals: I,
    /// Position in `index.keys` and end of the current persistent frame.
    key: usize,
    key_end: usize,
    /// `Log::primitives` index of the current frame's key at `keys_start`.
    first_primitive: usize,
    keys_start: usize,
    instant: Option<usize>,
    instant_primitives: std::slice::Iter<'a, Primitive>,
}

impl<'a, I: Iterator<Item = u32>> SelectionIter<'a, I> {
    fn new(s: &Selection<'a>, ordinals: I) -> Self {
        SelectionIter {
            index: s.index,
            log: s.log,
            filter: s.filter,
            ordinals,
            key: 0,
            key_end: 0,
            first_primitive: 0,
            keys_start: 0,
            instant: s.instant,
            instant_primitives: [].iter(),
        }
    }
}

impl<'a, I: Iterator<Item = u32>> Iterator for SelectionIter<'a, I> {
    type Item = &'a Primitive;

    #[inline]
    fn next(&mut self) -> Option<&'a Primitive> {
        loop {
            while self.key < self.key_end {
                let k = self.index.keys[self.key];
                let i = self.key;
                self.key += 1;
                if self.filter.allows_entity_level(k.entity, k.level) {
                    // An index used with another log skips what that log lacks.
                    if let Some(p) = self
                        .log
                        .primitives
                        .get(self.first_primitive + (i - self.keys_start))
                    {
                        return Some(p);
                    }
                }
            }
            if let Some(o) = self.ordinals.next() {
                if let Some(pf) = self.index.persistent.get(o as usize) {
                    self.key = pf.keys_start;
                    self.key_end = pf.keys_end;
                    self.keys_start = pf.keys_start;
                    self.first_primitive = pf.first_primitive;
                }
                continue;
            }
            for p in self.instant_primitives.by_ref() {
                if self.filter.allows(p) {
                    return Some(p);
                }
            }
            let f = self.instant.take()?;
            self.instant_primitives = self
                .log
                .frames
                .get(f)
                .map_or(&[][..], |f| self.log.frame_primitives(f))
                .iter();
        }
    }
}

/// A closed time interval of a persistent frame.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Interval {
    start: f64,
    end: f64,
    ordinal: u32,
}

/// A node of the centered interval tree.
#[derive(Clone, Copy, Debug)]
struct Node {
    center: f64,
    /// The intervals containing `center`: `by_start[lo..hi]` and `by_end[lo..hi]`.
    lo: u32,
    hi: u32,
    left: u32,
    right: u32,
}

/// A centered interval tree in flat arrays (see the module docs).
#[derive(Clone, Debug, Default)]
struct IntervalTree {
    nodes: Vec<Node>,
    /// Per node, its intervals as (start, ordinal) by ascending start.
    by_start: Vec<(f64, u32)>,
    /// Per node, its intervals as (end, ordinal) by descending end.
    by_end: Vec<(f64, u32)>,
    root: u32,
}

impl IntervalTree {
    /// Builds the tree; every interval has non-NaN bounds with `start ≤ end`.
    fn new(intervals: Vec<Interval>) -> Self {
        let mut tree = IntervalTree {
            nodes: Vec::new(),
            by_start: Vec::with_capacity(intervals.len()),
            by_end: Vec::with_capacity(intervals.len()),
            root: NONE,
        };
        let mut scratch = Vec::with_capacity(2 * intervals.len());
        tree.root = tree.build(intervals, &mut scratch);
        tree
    }

    /// Builds the subtree of `intervals` and returns its node (or `NONE`).
    /// The center is the median endpoint, so each side gets at most half the
    /// intervals and the depth stays below log2(n) + 1.
    fn build(&mut self, intervals: Vec<Interval>, scratch: &mut Vec<f64>) -> u32 {
        if intervals.is_empty() {
            return NONE;
        }
        scratch.clear();
        scratch.extend(intervals.iter().flat_map(|iv| [iv.start, iv.end]));
        let mid = intervals.len();
        let (_, &mut center, _) = scratch.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
        let (mut left, mut right, mut here) = (Vec::new(), Vec::new(), Vec::new());
        for iv in intervals {
            if iv.end < center {
                left.push(iv);
            } else if iv.start > center {
                right.push(iv);
            } else {
                here.push(iv);
            }
        }
        let lo = self.by_start.len();
        here.sort_unstable_by(|a, b| cmp_f64(a.start, b.start));
        self.by_start.extend(here.iter().map(|iv| (iv.start, iv.ordinal)));
        here.sort_unstable_by(|a, b| cmp_f64(b.end, a.end));
        self.by_end.extend(here.iter().map(|iv| (iv.end, iv.ordinal)));
        let id = self.nodes.len();
        self.nodes.push(Node {
            center,
            lo: to_u32(lo),
            hi: to_u32(self.by_start.len()),
            left: NONE,
            right: NONE,
        });
        let l = self.build(left, scratch);
        let r = self.build(right, scratch);
        self.nodes[id].left = l;
        self.nodes[id].right = r;
        to_u32(id)
    }

    fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<Node>()
            + (self.by_start.capacity() + self.by_end.capacity()) * size_of::<(f64, u32)>()
    }

    fn range(&self, n: &Node) -> std::ops::Range<usize> {
        n.lo as usize..n.hi as usize
    }

    /// Appends the ordinals of intervals containing `t` (in no particular order).
    fn stab(&self, t: f64, out: &mut Vec<u32>) {
        if t.is_nan() {
            return;
        }
        let mut id = self.root;
        while let Some(n) = self.nodes.get(id as usize) {
            let r = self.range(n);
            match cmp_f64(t, n.center) {
                // Every interval here ends at or after the center: it holds
                // `t` when it starts at or before `t`.
                Ordering::Less => {
                    out.extend(self.by_start[r].iter().take_while(|e| e.0 <= t).map(|e| e.1));
                    id = n.left;
                }
                Ordering::Greater => {
                    out.extend(self.by_end[r].iter().take_while(|e| e.0 >= t).map(|e| e.1));
                    id = n.right;
                }
                Ordering::Equal => {
                    out.extend(self.by_start[r].iter().map(|e| e.1));
                    return;
                }
            }
        }
    }

    /// Appends the ordinals of intervals overlapping `[t0, t1]` (`t0 ≤ t1`,
    /// in no particular order).
    fn overlapping(&self, t0: f64, t1: f64, out: &mut Vec<u32>) {
        let mut stack = vec![self.root];
        while let Some(id) = stack.pop() {
            let Some(n) = self.nodes.get(id as usize) else {
                continue;
            };
            let r = self.range(n);
            if t1 < n.center {
                out.extend(self.by_start[r].iter().take_while(|e| e.0 <= t1).map(|e| e.1));
                stack.push(n.left);
            } else if t0 > n.center {
                out.extend(self.by_end[r].iter().take_while(|e| e.0 >= t0).map(|e| e.1));
                stack.push(n.right);
            } else {
                out.extend(self.by_start[r].iter().map(|e| e.1));
                stack.push(n.left);
                stack.push(n.right);
            }
        }
    }
}

/// Node positions fit in `u32`: a log with 2³² persistent frames would not
/// fit in memory.
fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{EntityId, Shape, Style, Vec2};
    use crate::select::brute_force;
    use proptest::prelude::*;

    const INF: f64 = f64::INFINITY;

    fn prim(entity: u32, level: i32) -> Primitive {
        Primitive {
            shape: Shape::Point {
                position: Vec2::ZERO,
                kind: Default::default(),
                size: 0.0,
            },
            style: Style::default(),
            entity: EntityId(entity),
            level,
        }
    }

    fn log_of(frames: &[(FrameTime, usize)]) -> Log {
        let mut log = Log::new();
        log.entities.intern("e");
        for &(time, n) in frames {
            log.push_frame(time, (0..n).map(|_| prim(0, 0)));
        }
        log
    }

    fn persistent(start: f64, end: f64) -> FrameTime {
        FrameTime::Persistent { start, end }
    }

    /// Indices into `log.primitives` of what a selection returns.
    fn positions<'a>(log: &Log, ps: impl IntoIterator<Item = &'a Primitive>) -> Vec<usize> {
        let base = log.primitives.as_ptr();
        ps.into_iter()
            .map(|p| (p as *const Primitive as usize - base as usize) / std::mem::size_of::<Primitive>())
            .collect()
    }

    #[test]
    fn selects_persistent_frames_in_recorded_order_then_the_nearest_instant() {
        let log = log_of(&[
            (FrameTime::Instant(1.0), 1),
            (persistent(0.0, 10.0), 1),
            (FrameTime::Instant(2.0), 2),
            (persistent(-INF, 1.5), 1),
            (persistent(3.0, 3.0), 1),
            (persistent(5.0, 4.0), 1),
            (persistent(f64::NAN, 9.0), 1),
            (FrameTime::Instant(f64::NAN), 1),
        ]);
        let index = Index::new(&log);
        let all = Filter::all(&log, 0);
        assert_eq!(index.instant_count(), 2);
        assert_eq!(index.persistent_count(), 3);
        let s = index.select(&log, 1.6, 0.5, &all);
        assert_eq!(s.frames().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(s.persistent_frames().collect::<Vec<_>>(), [1]);
        assert_eq!(s.instant_frame(), Some(2));
        assert_eq!(positions(&log, &s), [1, 2, 3]);
        assert_eq!(s.len(), 3);
        let s = index.select(&log, 1.4, 0.5, &all);
        assert_eq!(s.frames().collect::<Vec<_>>(), [1, 3, 0]);
        let mut out = vec![99];
        assert_eq!(index.frames_at(1.4, 0.5, &mut out), Some(0));
        assert_eq!(out, [1, 3, 0]);
        // Zero-length interval: exactly at its time.
        assert_eq!(
            index.select(&log, 3.0, 0.1, &all).frames().collect::<Vec<_>>(),
            [1, 4]
        );
        assert_eq!(
            index
                .select(&log, 3.0 + 1e-9, 0.1, &all)
                .frames()
                .collect::<Vec<_>>(),
            [1]
        );
        assert!(index.select(&log, f64::NAN, INF, &all).is_empty());
        let none = Filter::from_levels(vec![Filter::HIDDEN]);
        let s = index.select(&log, 1.6, 0.5, &none);
        assert_eq!((s.frames().count(), s.len(), s.is_empty()), (2, 0, true));
        // Owned iteration gives the same.
        assert_eq!(
            positions(&log, index.select(&log, 1.6, 0.5, &all)),
            positions(&log, brute_force(&log, 1.6, 0.5, &all))
        );
    }

    #[test]
    fn thresholds_come_from_the_header_or_the_spacing() {
        let mut log = log_of(&[
            (FrameTime::Instant(0.0), 0),
            (FrameTime::Instant(0.1), 0),
            (FrameTime::Instant(0.1), 0),
            (FrameTime::Instant(0.2), 0),
            (FrameTime::Instant(5.0), 0),
            (FrameTime::Instant(INF), 0),
            (persistent(0.0, 100.0), 0),
        ]);
        let index = Index::new(&log);
        // Gaps 0.1, 0.1, 4.8 (the duplicate and the infinite time do not count).
        assert!((index.default_threshold() - 0.15).abs() < 1e-12);
        log.header.hints.instant_threshold = Some(0.04);
        assert_eq!(Index::new(&log).default_threshold(), 0.04);
        log.header.hints.instant_threshold = Some(f64::NAN);
        assert!((Index::new(&log).default_threshold() - 0.15).abs() < 1e-12);
        log.header.hints.instant_threshold = Some(-1.0);
        assert!((Index::new(&log).default_threshold() - 0.15).abs() < 1e-12);
        let lone = log_of(&[(FrameTime::Instant(3.0), 1), (FrameTime::Instant(3.0), 1)]);
        assert_eq!(Index::new(&lone).default_threshold(), INF);
        assert_eq!(Index::new(&Log::new()).default_threshold(), INF);
    }

    #[test]
    fn range_and_event_queries() {
        let log = log_of(&[
            (persistent(5.0, 6.0), 0),
            (FrameTime::Instant(1.0), 0),
            (persistent(-INF, 0.5), 0),
            (FrameTime::Instant(2.0), 0),
            (persistent(2.0, INF), 0),
            (FrameTime::Instant(-INF), 0),
            (persistent(2.0, 3.0), 0),
            (persistent(7.0, 6.0), 0),
        ]);
        let index = Index::new(&log);
        assert_eq!(index.frames_overlapping(0.5, 2.0), [1, 2, 3, 4, 6]);
        assert_eq!(index.frames_overlapping(3.5, 4.0), [4]);
        assert_eq!(index.frames_overlapping(-INF, -1e300), [2, 5]);
        assert!(index.frames_overlapping(2.0, 1.0).is_empty());
        assert!(index.frames_overlapping(f64::NAN, 1.0).is_empty());
        assert_eq!(index.next_persistent_start(0.0), Some((2.0, 4)));
        assert_eq!(index.next_persistent_start(2.0), Some((5.0, 0)));
        assert_eq!(index.next_persistent_start(5.0), None, "7..6 never applies");
        assert_eq!(index.prev_persistent_start(5.0), Some((2.0, 4)));
        assert_eq!(index.prev_persistent_start(2.0), None);
        assert_eq!(index.next_instant(-5.0), Some((1.0, 1)));
        assert_eq!(index.next_instant(2.0), None);
        assert_eq!(index.prev_instant(1.0), None, "-inf is not a place to jump to");
        assert_eq!(index.prev_instant(1.5), Some((1.0, 1)));
    }

    #[test]
    fn a_log_index_costs_little_memory() {
        let frames: Vec<(FrameTime, usize)> = (0..1000)
            .map(|i| (FrameTime::Instant(i as f64 / 60.0), 10))
            .chain((0..100).map(|i| (persistent(i as f64, i as f64 + 5.0), 2)))
            .collect();
        let log = log_of(&frames);
        let index = Index::new(&log);
        let prims = log.primitives.len() * std::mem::size_of::<Primitive>();
        assert!(
            index.memory_bytes() * 10 < prims,
            "{} vs {prims}",
            index.memory_bytes()
        );
    }

    /// Times that make ties, zero-length and infinite intervals, NaN and
    /// rounding collisions likely.
    fn time() -> impl Strategy<Value = f64> {
        prop_oneof![
            6 => (-4i32..8).prop_map(|i| f64::from(i) / 2.0),
            1 => Just(INF),
            1 => Just(-INF),
            1 => Just(f64::NAN),
            1 => Just(-0.0),
            1 => prop::sample::select(vec![1e-300, 2e-300, 3e-300, 1e300, -1e300, 1e20, 1e20 + 16384.0]),
            2 => -10.0f64..10.0,
        ]
    }

    fn frame_time() -> impl Strategy<Value = FrameTime> {
        prop_oneof![
            3 => time().prop_map(FrameTime::Instant),
            2 => (time(), time()).prop_map(|(a, b)| persistent(a, b)),
            1 => time().prop_map(|a| persistent(a, a)),
            1 => (time(), time()).prop_map(|(a, b)| persistent(a.min(b), a.max(b))),
        ]
    }

    /// A random log over `entities` entities with levels in -2..3.
    fn random_log(entities: u32) -> impl Strategy<Value = Log> {
        let frame = (
            frame_time(),
            proptest::collection::vec((0..entities, -2i32..3), 0..4),
        );
        proptest::collection::vec(frame, 0..25).prop_map(move |frames| {
            let mut log = Log::new();
            for e in 0..entities {
                log.entities.intern(&format!("e{e}"));
            }
            for (time, ps) in frames {
                log.push_frame(time, ps.into_iter().map(|(e, l)| prim(e, l)));
            }
            log
        })
    }

    fn threshold() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(0.5),
            Just(1.0),
            Just(INF),
            Just(f64::NAN),
            Just(-1.0),
            Just(2.0),
            0.0f64..5.0,
        ]
    }

    fn filter(entities: u32) -> impl Strategy<Value = Filter> {
        let level = prop_oneof![Just(Filter::HIDDEN), Just(i32::MAX), -3i32..4];
        proptest::collection::vec(level, entities as usize..=entities as usize + 1)
            .prop_map(Filter::from_levels)
    }

    /// The frames Algorithm 3 picks, by a scan (the rule of `brute_force`,
    /// kept even for frames without primitives).
    fn brute_frames(log: &Log, t: f64, threshold: f64) -> Vec<usize> {
        let mut out = Vec::new();
        let mut nearest: Option<(f64, f64, usize)> = None;
        for (i, f) in log.frames.iter().enumerate() {
            match f.time {
                FrameTime::Persistent { start, end } if start <= t && t <= end => out.push(i),
                FrameTime::Persistent { .. } => {}
                FrameTime::Instant(x) => {
                    let d = (x - t).abs();
                    if !d.is_nan() && nearest.is_none_or(|(bd, bx, _)| d < bd || (d == bd && x < bx)) {
                        nearest = Some((d, x, i));
                    }
                }
            }
        }
        out.extend(nearest.filter(|n| n.0 < threshold).map(|n| n.2));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn index_select_equals_brute_force(
            (log, filter) in (1u32..4).prop_flat_map(|n| (random_log(n), filter(n))),
            ts in proptest::collection::vec(time(), 1..6),
            threshold in threshold(),
        ) {
            let index = Index::new(&log);
            for &t in &ts {
                let want = positions(&log, brute_force(&log, t, threshold, &filter));
                let sel = index.select(&log, t, threshold, &filter);
                prop_assert_eq!(positions(&log, &sel), want.clone(), "t = {}, threshold = {}", t, threshold);
                prop_assert_eq!(sel.len(), want.len());
                let mut frames = Vec::new();
                index.frames_at(t, threshold, &mut frames);
                prop_assert_eq!(&frames, &brute_frames(&log, t, threshold));
                prop_assert_eq!(sel.frames().collect::<Vec<_>>(), frames);
            }
        }

        #[test]
        fn range_and_event_queries_match_a_scan(
            log in random_log(1),
            t0 in time(),
            t1 in time(),
        ) {
            let index = Index::new(&log);
            let want: Vec<usize> = log
                .frames
                .iter()
                .enumerate()
                .filter(|_| t0 <= t1)
                .filter(|(_, f)| match f.time {
                    FrameTime::Instant(x) => t0 <= x && x <= t1,
                    FrameTime::Persistent { start, end } => start <= end && start <= t1 && end >= t0,
                })
                .map(|(i, _)| i)
                .collect();
            prop_assert_eq!(index.frames_overlapping(t0, t1), want);

            // Event navigation: (time, first recorded frame at that time).
            let pick = |persist: bool, after: bool| -> Option<(f64, usize)> {
                let mut best: Option<(f64, usize)> = None;
                for (i, f) in log.frames.iter().enumerate() {
                    let (x, ok) = match f.time {
                        FrameTime::Instant(x) => (x, !persist),
                        FrameTime::Persistent { start, end } => (start, persist && start <= end),
                    };
                    let beyond = if after { x > t0 } else { x < t0 };
                    if ok && x.is_finite() && beyond {
                        let better = best.is_none_or(|(b, _)| if after { x < b } else { x > b });
                        if better {
                            best = Some((x, i));
                        }
                    }
                }
                best
            };
            prop_assert_eq!(index.next_persistent_start(t0), pick(true, true));
            prop_assert_eq!(index.prev_persistent_start(t0), pick(true, false));
            prop_assert_eq!(index.next_instant(t0), pick(false, true));
            prop_assert_eq!(index.prev_instant(t0), pick(false, false));
        }
    }
}
