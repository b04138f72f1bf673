//! The time index over a loaded log: thesis Algorithm 3 in
//! `O(log n + log m + k)`.
//!
//! - Instantaneous frames: their times sorted ascending (ties by recorded
//!   order), with every 64th time copied into a small sample array; the
//!   nearest frame to `t` is found by a binary search (samples, then one
//!   block) and a look at both neighbours.
//! - Persistent frames: a centered interval tree in flat arrays. Each node
//!   holds a center and the intervals containing it, once sorted by start
//!   and once by end, so a stabbing query walks one root-to-leaf path and
//!   reads only intervals that match (plus one per node).
//! - Filtering without touching primitives: every distinct (entity, level)
//!   pair of the log is a *class*, and the index keeps one 2-byte class id
//!   per primitive (in recorded order, and again next to each entry of the
//!   tree's lists). A query filters the frames active at `t` by reading
//!   these small arrays sequentially, instead of reading 80-byte primitives
//!   scattered over the log, and hands out the positions of the primitives
//!   that pass, sorted back into recorded order. (Past 65,535 distinct
//!   pairs, further pairs share an escape id and those primitives are read
//!   in place.)
//! - Persistent frames' finite starts sorted, for "jump to the next event".
//!
//! A query returns a [`Selection`] borrowing the log's primitives: no
//! primitive data is copied per query. The index describes the log it was
//! built from; rebuild it after changing that log. Limits: fewer than 2³²
//! persistent frames, 2³² primitives in persistent frames and 2³²
//! primitives in one frame (a log that large would not fit in memory).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::log::{EntityId, FrameTime, Log, Primitive};

use super::Filter;

/// Marks a missing child in the interval tree.
const NONE: u32 = u32::MAX;

/// One time in the instantaneous sample array per this many.
const BLOCK: usize = 64;

/// The time index of one log. Build it once with [`Index::new`] and query
/// it with the same log. `Index::default()` is the index of an empty log.
#[derive(Clone, Debug)]
pub struct Index {
    /// Times of instantaneous frames (NaN times left out), ascending.
    instant_times: Vec<f64>,
    /// `instant_times[BLOCK * j]` for each `j`.
    instant_samples: Vec<f64>,
    /// Frame index of each entry of `instant_times`; among equal times in
    /// recorded order.
    instant_frames: Vec<usize>,
    /// Frame index of each persistent frame that can apply (no NaN bound,
    /// `start ≤ end`), in recorded order; the position here is the frame's
    /// *ordinal*.
    persistent_frames: Vec<usize>,
    /// Index in `Log::primitives` of each such frame's first primitive.
    first_primitive: Vec<usize>,
    /// The distinct (entity, level) pairs of the log's primitives, at most
    /// [`ESCAPE`] of them.
    classes: Vec<Key>,
    /// The class of each primitive of the log: its index in `classes`, or
    /// [`ESCAPE`] when the pair did not get a class.
    class_of: Vec<Class>,
    /// Intervals of the persistent frames, holding ordinals.
    tree: IntervalTree,
    /// Finite starts of the persistent frames ascending, with ordinals
    /// (ascending among equal starts).
    starts: Vec<(f64, u32)>,
    /// Number of frames of the indexed log.
    frame_count: usize,
    /// `Log::default_instant_threshold` of the indexed log.
    default_threshold: f64,
}

/// What the filter needs of a primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    entity: EntityId,
    level: i32,
}

/// The class of a primitive: which distinct (entity, level) pair it has.
type Class = u16;

/// The class of primitives whose pair came after the first 65,535 distinct
/// ones: the query reads such primitives themselves.
const ESCAPE: Class = Class::MAX;

/// Interns the (entity, level) pairs of primitives as dense class ids.
#[derive(Default)]
struct Classes {
    ids: HashMap<Key, Class, BuildHasherDefault<MixHasher>>,
    keys: Vec<Key>,
}

impl Classes {
    fn of(&mut self, p: &Primitive) -> Class {
        let key = Key {
            entity: p.entity,
            level: p.level,
        };
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        match Class::try_from(self.keys.len()) {
            Ok(id) if id < ESCAPE => {
                self.ids.insert(key, id);
                self.keys.push(key);
                id
            }
            _ => ESCAPE,
        }
    }
}

/// A fast hasher for the small keys of [`Classes`] (not DoS-resistant,
/// which is fine for a lookup table built from one log).
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_i32(&mut self, x: i32) {
        self.write_u64(u64::from(x as u32));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Default for Index {
    fn default() -> Self {
        Index::new(&Log::new())
    }
}

impl Index {
    /// Indexes `log`: its frames' times and its primitives' entities and
    /// levels (one pass over each).
    pub fn new(log: &Log) -> Self {
        let mut instants: Vec<(f64, usize)> = Vec::new();
        let mut intervals: Vec<Interval> = Vec::new();
        let mut persistent_frames = Vec::new();
        let mut first_primitive = Vec::new();
        let mut classes = Classes::default();
        let class_of: Vec<Class> = log.primitives.iter().map(|p| classes.of(p)).collect();
        for (i, f) in log.frames.iter().enumerate() {
            match f.time {
                FrameTime::Instant(t) if !t.is_nan() => instants.push((t, i)),
                FrameTime::Instant(_) => {}
                FrameTime::Persistent { start, end } => {
                    // NaN bounds and start > end fail `start ≤ end`: such a frame never applies.
                    if start <= end {
                        intervals.push(Interval {
                            start,
                            end,
                            ordinal: to_u32(persistent_frames.len()),
                            primitives: valid_range(log, f),
                        });
                        persistent_frames.push(i);
                        first_primitive.push(f.primitives.start);
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
        let (instant_times, instant_frames): (Vec<f64>, Vec<usize>) = instants.into_iter().unzip();
        Index {
            instant_samples: instant_times.iter().step_by(BLOCK).copied().collect(),
            instant_times,
            instant_frames,
            persistent_frames,
            first_primitive,
            tree: IntervalTree::new(intervals, &class_of),
            classes: classes.keys,
            class_of,
            starts,
            frame_count: log.frames.len(),
            default_threshold: log.default_instant_threshold(),
        }
    }

    /// The instantaneous-frame threshold to use when the user set none,
    /// [`Log::default_instant_threshold`] of the indexed log: the header's
    /// hint when it has a usable one, else 1.5 × the median spacing between
    /// the distinct finite times of instantaneous frames (`+∞` with fewer
    /// than two). With 1.5 × the spacing a frame stays on screen until the
    /// next one is nearer, one dropped frame is bridged, and a longer pause
    /// in the log leaves the instantaneous drawings blank.
    pub fn default_threshold(&self) -> f64 {
        self.default_threshold
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
        self.persistent_frames.len()
    }

    /// Bytes of heap memory held by the index.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        (self.instant_times.capacity() + self.instant_samples.capacity()) * size_of::<f64>()
            + (self.instant_frames.capacity()
                + self.persistent_frames.capacity()
                + self.first_primitive.capacity())
                * size_of::<usize>()
            + self.starts.capacity() * size_of::<(f64, u32)>()
            + self.classes.capacity() * size_of::<Key>()
            + self.class_of.capacity() * size_of::<Class>()
            + self.tree.memory_bytes()
    }

    /// The indices of the frames shown at `t`: persistent frames with
    /// `start ≤ t ≤ end` in recorded order, then the nearest instantaneous
    /// frame if `|time − t| < threshold`. Replaces the contents of `out`
    /// and returns the instantaneous frame.
    pub fn frames_at(&self, t: f64, threshold: f64, out: &mut Vec<usize>) -> Option<usize> {
        out.clear();
        let mut ordinals = Vec::new();
        self.tree.stab(t, |e, _| ordinals.push(e.ordinal));
        ordinals.sort_unstable();
        out.extend(ordinals.iter().map(|&o| self.persistent_frames[o as usize]));
        let instant = self.nearest_instant(t, threshold);
        out.extend(instant);
        instant
    }

    /// The primitives shown at `t` with `filter`, borrowed from `log` (the
    /// log this index was built from) in draw order; the same as
    /// [`super::brute_force`].
    pub fn select<'a>(&'a self, log: &'a Log, t: f64, threshold: f64, filter: &'a Filter) -> Selection<'a> {
        debug_assert_eq!(log.frames.len(), self.frame_count, "index used with another log");
        // Branch-free: write every candidate at `n`, advance `n` past those
        // that pass. `hits` grows geometrically, ahead of `n`.
        let mut hits: Vec<Hit> = vec![Hit(0); 1024];
        let mut n = 0;
        self.tree.stab(t, |e, keys| {
            if hits.len() < n + keys.len() {
                hits.resize((n + keys.len()).max(2 * hits.len()), Hit(0));
            }
            for (j, &c) in keys.iter().enumerate() {
                hits[n] = Hit::new(e.ordinal, j);
                let pass = match self.classes.get(usize::from(c)) {
                    Some(k) => filter.allows_entity_level(k.entity, k.level),
                    None => self.escaped_passes(log, filter, self.first_primitive[e.ordinal as usize] + j),
                };
                n += usize::from(pass);
            }
        });
        hits.truncate(n);
        // Recorded order: by frame, then by position in the frame.
        sort_hits(&mut hits, self.persistent_frames.len());
        let instant = self.nearest_instant(t, threshold);
        let instant_range = instant
            .and_then(|f| log.frames.get(f))
            .map_or(0..0, |f| valid_range(log, f));
        let instant_classes = self.class_of.get(instant_range.clone()).unwrap_or(&[]);
        let mut primitives = vec![0; hits.len() + instant_classes.len()];
        for (out, h) in primitives.iter_mut().zip(&hits) {
            *out = self.first_primitive[h.ordinal()] + h.offset();
        }
        let mut n = hits.len();
        for (j, &c) in instant_classes.iter().enumerate() {
            let i = instant_range.start + j;
            primitives[n] = i;
            let pass = match self.classes.get(usize::from(c)) {
                Some(k) => filter.allows_entity_level(k.entity, k.level),
                None => self.escaped_passes(log, filter, i),
            };
            n += usize::from(pass);
        }
        primitives.truncate(n);
        Selection {
            index: self,
            log,
            t,
            threshold,
            primitives,
            instant,
        }
    }

    /// Whether the primitive at `i`, which has no class, passes `filter`.
    #[cold]
    #[inline(never)]
    fn escaped_passes(&self, log: &Log, filter: &Filter, i: usize) -> bool {
        log.primitives.get(i).is_some_and(|p| filter.allows(p))
    }

    /// The instantaneous frame shown at `t`, if any: the nearest one when
    /// `|time − t| < threshold` (ties: earlier time, then recorded first).
    pub fn nearest_instant(&self, t: f64, threshold: f64) -> Option<usize> {
        // An infinite or NaN `t` is at infinite or NaN distance from every frame.
        if !t.is_finite() {
            return None;
        }
        let times = &self.instant_times;
        let i = self.first_at_or_after(t);
        // Left of `i` (times < t) the distance falls as the index grows,
        // from `i` on (times ≥ t) it grows: the minimum is at `i − 1` or `i`.
        let left = i.checked_sub(1).map(|j| {
            let d = (times[j] - t).abs();
            // Several earlier times can round to the same distance; the
            // earliest of them wins, and is first in recorded order among
            // its equals.
            let first = if j == 0 || (times[j - 1] - t).abs() > d {
                j
            } else {
                times[..j].partition_point(|&x| (x - t).abs() > d)
            };
            (d, first)
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

    /// The first position in `instant_times` holding a time ≥ `t`.
    fn first_at_or_after(&self, t: f64) -> usize {
        let s = self.instant_samples.partition_point(|&x| x < t);
        // instant_times[BLOCK * (s − 1)] < t ≤ instant_times[BLOCK * s].
        let lo = if s == 0 { 0 } else { BLOCK * (s - 1) + 1 };
        let hi = (BLOCK * s).min(self.instant_times.len()).max(lo);
        lo + self.instant_times[lo..hi].partition_point(|&x| x < t)
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
        out.extend(ordinals.iter().map(|&o| self.persistent_frames[o as usize]));
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
        Some((s, self.persistent_frames[o as usize]))
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

/// The primitive range of `f`, or an empty one when it is out of bounds
/// (such a frame draws nothing, as `Log::frame_primitives` says).
fn valid_range(log: &Log, f: &crate::log::Frame) -> std::ops::Range<usize> {
    match log.primitives.get(f.primitives.clone()) {
        Some(_) => f.primitives.clone(),
        None => 0..0,
    }
}

/// Orders non-NaN floats, with -0.0 equal to 0.0.
fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// A primitive of a persistent frame that passed the filter: the frame's
/// ordinal in the high half, the position in the frame in the low half, so
/// sorting hits puts them in recorded order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Hit(u64);

impl Hit {
    fn new(ordinal: u32, offset: usize) -> Self {
        Hit((u64::from(ordinal) << 32) | offset as u64)
    }
    fn ordinal(self) -> usize {
        (self.0 >> 32) as usize
    }
    fn offset(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }
}

/// Sorts hits by ordinal, then offset. A frame's hits are pushed
/// consecutively in offset order and each frame once, so a stable sort by
/// ordinal alone suffices: a least-significant-digit radix sort on the
/// ordinal's bytes (ordinals are below `ordinals`), or the standard sort
/// for short lists.
fn sort_hits(hits: &mut Vec<Hit>, ordinals: usize) {
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
/// (persistent frames in recorded order, then the instantaneous frame;
/// recorded order within a frame). Filtered when made: it holds the
/// positions of the selected primitives in `Log::primitives`.
#[derive(Clone, Debug)]
pub struct Selection<'a> {
    index: &'a Index,
    log: &'a Log,
    t: f64,
    threshold: f64,
    primitives: Vec<usize>,
    instant: Option<usize>,
}

impl<'a> Selection<'a> {
    /// The selected frames in draw order (the instantaneous one last),
    /// including frames none of whose primitives pass the filter.
    pub fn frames(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.index.frames_at(self.t, self.threshold, &mut out);
        out
    }

    /// The selected instantaneous frame, if any.
    pub fn instant_frame(&self) -> Option<usize> {
        self.instant
    }

    /// Positions of the selected primitives in `Log::primitives`, in draw order.
    pub fn positions(&self) -> &[usize] {
        &self.primitives
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

/// A persistent frame's interval while building the tree.
#[derive(Clone, Debug, PartialEq)]
struct Interval {
    start: f64,
    end: f64,
    ordinal: u32,
    /// The frame's primitives in `Log::primitives` (valid, maybe empty).
    primitives: std::ops::Range<usize>,
}

/// An interval in a node list: its start (in `by_start`) or end (in
/// `by_end`), its ordinal, and where its keys begin in the list's key
/// array (they end where the next entry's begin).
#[derive(Clone, Copy, Debug)]
struct Entry {
    bound: f64,
    ordinal: u32,
    keys: u32,
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

/// Which list of a node an entry comes from.
#[derive(Clone, Copy, Debug)]
struct List<'t> {
    entries: &'t [Entry],
    keys: &'t [Class],
}

impl<'t> List<'t> {
    /// The keys of the entry at `i` (with `i + 1` a valid entry: lists end
    /// with a sentinel).
    #[inline]
    fn keys_of(&self, i: usize) -> &'t [Class] {
        let a = self.entries[i].keys as usize;
        let b = self.entries[i + 1].keys as usize;
        self.keys.get(a..b).unwrap_or(&[])
    }
}

/// A centered interval tree in flat arrays (see the module docs).
#[derive(Clone, Debug, Default)]
struct IntervalTree {
    nodes: Vec<Node>,
    /// Per node, its intervals by ascending start; then a sentinel.
    by_start: Vec<Entry>,
    /// Per node, its intervals by descending end; then a sentinel.
    by_end: Vec<Entry>,
    /// Entity and level of the primitives of the entries of `by_start`, in
    /// that order.
    start_keys: Vec<Class>,
    /// Entity and level of the primitives of the entries of `by_end`, in
    /// that order.
    end_keys: Vec<Class>,
    root: u32,
}

impl IntervalTree {
    /// Builds the tree; every interval has non-NaN bounds with `start ≤ end`
    /// and a valid range of `log`'s primitives.
    fn new(intervals: Vec<Interval>, class_of: &[Class]) -> Self {
        let keys = intervals.iter().map(|iv| iv.primitives.len()).sum();
        let mut tree = IntervalTree {
            nodes: Vec::new(),
            by_start: Vec::with_capacity(intervals.len() + 1),
            by_end: Vec::with_capacity(intervals.len() + 1),
            start_keys: Vec::with_capacity(keys),
            end_keys: Vec::with_capacity(keys),
            root: NONE,
        };
        let mut scratch = Vec::with_capacity(2 * intervals.len());
        tree.root = tree.build(intervals, class_of, &mut scratch);
        for (list, list_keys) in [
            (&mut tree.by_start, &tree.start_keys),
            (&mut tree.by_end, &tree.end_keys),
        ] {
            list.push(Entry {
                bound: f64::NAN,
                ordinal: NONE,
                keys: to_u32(list_keys.len()),
            });
        }
        tree
    }

    /// Builds the subtree of `intervals` and returns its node (or `NONE`).
    /// The center is the median endpoint, so each side gets at most half the
    /// intervals and the depth stays below log2(n) + 1.
    fn build(&mut self, intervals: Vec<Interval>, class_of: &[Class], scratch: &mut Vec<f64>) -> u32 {
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
        for iv in &here {
            self.by_start.push(Entry {
                bound: iv.start,
                ordinal: iv.ordinal,
                keys: to_u32(self.start_keys.len()),
            });
            self.start_keys
                .extend_from_slice(class_of.get(iv.primitives.clone()).unwrap_or(&[]));
        }
        here.sort_unstable_by(|a, b| cmp_f64(b.end, a.end));
        for iv in &here {
            self.by_end.push(Entry {
                bound: iv.end,
                ordinal: iv.ordinal,
                keys: to_u32(self.end_keys.len()),
            });
            self.end_keys
                .extend_from_slice(class_of.get(iv.primitives.clone()).unwrap_or(&[]));
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            center,
            lo: to_u32(lo),
            hi: to_u32(self.by_start.len()),
            left: NONE,
            right: NONE,
        });
        let l = self.build(left, class_of, scratch);
        let r = self.build(right, class_of, scratch);
        self.nodes[id].left = l;
        self.nodes[id].right = r;
        to_u32(id)
    }

    fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<Node>()
            + (self.by_start.capacity() + self.by_end.capacity()) * size_of::<Entry>()
            + (self.start_keys.capacity() + self.end_keys.capacity()) * size_of::<Class>()
    }

    fn starts(&self) -> List<'_> {
        List {
            entries: &self.by_start,
            keys: &self.start_keys,
        }
    }

    fn ends(&self) -> List<'_> {
        List {
            entries: &self.by_end,
            keys: &self.end_keys,
        }
    }

    /// Calls `visit(entry, its keys)` for every interval containing `t`
    /// (in no particular order).
    #[inline]
    fn stab(&self, t: f64, mut visit: impl FnMut(Entry, &[Class])) {
        if t.is_nan() {
            return;
        }
        let (starts, ends) = (self.starts(), self.ends());
        let mut id = self.root;
        while let Some(n) = self.nodes.get(id as usize) {
            let (lo, hi) = (n.lo as usize, n.hi as usize);
            match cmp_f64(t, n.center) {
                // Every interval here ends at or after the center: it holds
                // `t` when it starts at or before `t`.
                Ordering::Less => {
                    for i in lo..hi {
                        let e = starts.entries[i];
                        if e.bound > t {
                            break;
                        }
                        visit(e, starts.keys_of(i));
                    }
                    id = n.left;
                }
                Ordering::Greater => {
                    for i in lo..hi {
                        let e = ends.entries[i];
                        if e.bound < t {
                            break;
                        }
                        visit(e, ends.keys_of(i));
                    }
                    id = n.right;
                }
                Ordering::Equal => {
                    for i in lo..hi {
                        visit(starts.entries[i], starts.keys_of(i));
                    }
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
            let r = n.lo as usize..n.hi as usize;
            if t1 < n.center {
                out.extend(
                    self.by_start[r]
                        .iter()
                        .take_while(|e| e.bound <= t1)
                        .map(|e| e.ordinal),
                );
                stack.push(n.left);
            } else if t0 > n.center {
                out.extend(
                    self.by_end[r]
                        .iter()
                        .take_while(|e| e.bound >= t0)
                        .map(|e| e.ordinal),
                );
                stack.push(n.right);
            } else {
                out.extend(self.by_start[r].iter().map(|e| e.ordinal));
                stack.push(n.left);
                stack.push(n.right);
            }
        }
    }
}

/// Positions and counts fit in `u32` (see the limits in the module docs).
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
        assert_eq!(s.frames(), [1, 2]);
        assert_eq!(s.instant_frame(), Some(2));
        assert_eq!(positions(&log, &s), [1, 2, 3]);
        assert_eq!(s.len(), 3);
        let s = index.select(&log, 1.4, 0.5, &all);
        assert_eq!(s.frames(), [1, 3, 0]);
        let mut out = vec![99];
        assert_eq!(index.frames_at(1.4, 0.5, &mut out), Some(0));
        assert_eq!(out, [1, 3, 0]);
        // Zero-length interval: exactly at its time.
        assert_eq!(index.select(&log, 3.0, 0.1, &all).frames(), [1, 4]);
        assert_eq!(index.select(&log, 3.0 + 1e-9, 0.1, &all).frames(), [1]);
        assert!(index.select(&log, f64::NAN, INF, &all).is_empty());
        let none = Filter::from_levels(vec![Filter::HIDDEN]);
        let s = index.select(&log, 1.6, 0.5, &none);
        assert_eq!((s.frames().len(), s.len(), s.is_empty()), (2, 0, true));
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
        assert_eq!(Index::default().default_threshold(), INF);
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
    fn large_random_logs_match_brute_force() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut log = Log::new();
        for e in 0..6 {
            log.entities.intern(&format!("e{e}"));
        }
        for i in 0..3000 {
            let time = if rng.random_bool(0.2) {
                let start = rng.random_range(-10.0..60.0);
                persistent(start, start + rng.random_range(0.0..40.0))
            } else {
                FrameTime::Instant(f64::from(i) / 50.0)
            };
            let n = rng.random_range(0..6);
            log.push_frame(
                time,
                (0..n).map(|_| prim(rng.random_range(0..6), rng.random_range(0..4))),
            );
        }
        let index = Index::new(&log);
        let filter = Filter::from_levels(vec![3, 1, Filter::HIDDEN, 0, 2, 3]);
        let mut most = 0;
        for _ in 0..300 {
            let t = rng.random_range(-12.0..65.0);
            let want = positions(&log, brute_force(&log, t, 0.03, &filter));
            let sel = index.select(&log, t, 0.03, &filter);
            assert_eq!(positions(&log, &sel), want, "t = {t}");
            most = most.max(want.len());
        }
        assert!(most >= 128, "the radix sort path ran ({most} primitives)");
    }

    #[test]
    fn primitives_beyond_the_class_table_are_read_in_place() {
        // 70,000 distinct (entity, level) pairs: the last 4,465 get no class.
        let mut log = Log::new();
        log.entities.intern("a");
        log.entities.intern("b");
        let level = |i: i32| prim((i % 2) as u32, i / 2);
        for chunk in 0..70 {
            let levels = (chunk * 1000..(chunk + 1) * 1000).map(level);
            let time = if chunk % 3 == 0 {
                persistent(f64::from(chunk), 100.0)
            } else {
                FrameTime::Instant(f64::from(chunk))
            };
            log.push_frame(time, levels);
        }
        let index = Index::new(&log);
        assert_eq!(index.classes.len(), usize::from(ESCAPE));
        assert!(index.class_of.iter().filter(|&&c| c == ESCAPE).count() > 4000);
        for filter in [
            Filter::from_levels(vec![34_800, 34_100]),
            Filter::from_levels(vec![Filter::HIDDEN, i32::MAX]),
            Filter::from_levels(vec![100, 0]),
        ] {
            for t in [5.0, 66.0, 67.2, 68.9, 69.0, 69.4, 150.0] {
                let want = positions(&log, brute_force(&log, t, 0.5, &filter));
                assert_eq!(
                    positions(&log, index.select(&log, t, 0.5, &filter)),
                    want,
                    "t = {t}"
                );
            }
        }
    }

    #[test]
    fn indexes_and_selections_can_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Index>();
        send_sync::<Selection<'static>>();
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
                prop_assert_eq!(sel.frames(), frames);
            }
        }

        #[test]
        fn sort_hits_orders_groups_like_a_full_sort(
            groups in proptest::collection::vec((0u32..70_000, 1usize..6), 0..400),
        ) {
            // Distinct ordinals, each a run of increasing offsets, runs in any order.
            let mut seen = std::collections::HashSet::new();
            let hits: Vec<Hit> = groups
                .iter()
                .filter(|g| seen.insert(g.0))
                .flat_map(|&(o, n)| (0..n).map(move |j| Hit::new(o, j * 3)))
                .collect();
            let mut want = hits.clone();
            want.sort_unstable();
            let mut got = hits;
            sort_hits(&mut got, 70_000);
            prop_assert_eq!(got, want);
        }

        #[test]
        fn nearest_instant_matches_a_scan_on_long_logs(
            times in proptest::collection::vec(time(), 0..400),
            ts in proptest::collection::vec(time(), 1..20),
            threshold in threshold(),
        ) {
            // Long enough to span several sample blocks, with many equal times.
            let frames: Vec<(FrameTime, usize)> = times.iter().map(|&x| (FrameTime::Instant(x), 0)).collect();
            let log = log_of(&frames);
            let index = Index::new(&log);
            for &t in &ts {
                prop_assert_eq!(
                    index.nearest_instant(t, threshold),
                    brute_frames(&log, t, threshold).last().copied(),
                    "t = {}", t
                );
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
