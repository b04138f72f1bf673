//! The time index over a loaded log: thesis Algorithm 3 in
//! `O(log n + log m + k)`.
//!
//! - Instantaneous frames: their times sorted ascending (ties by recorded
//!   order), with every 64th time copied into a small sample array; the
//!   nearest frame to `t` is found by a binary search (samples, then one
//!   block) and a look at both neighbours (on a simulator's clock, the last
//!   at or before `t`: see [`super`]'s rules). A log merged from several
//!   ([`Log::streams`]) keeps one such array per log, and each shows its
//!   own frame.
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
//!
//! One file per job: `tree` (the interval tree), `classes` (the class
//! table), `selection` (a query's result and its order); this file builds
//! the index and answers the queries.
//!
//! Its queries return [`Selection`]s (`selection.rs`), which borrow the
//! index: the two files name each other.

mod classes;
mod selection;
#[cfg(test)]
mod tests;
mod tree;

use crate::log::{FrameTime, Log};
use crate::time::LogTime;

use super::Filter;
use classes::{Class, Classes, Key};
use selection::{Hit, sort_hits};
use tree::{Interval, IntervalTree, cmp_f64, to_u32};

pub use selection::{Selection, SelectionIter};

/// One time in the instantaneous sample array per this many.
const BLOCK: usize = 64;

// Export workers share one index and hand selections between threads.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Index>();
    send_sync::<Selection<'static>>();
};

/// The time index of one log. Build it once with [`Index::new`] and query
/// it with the same log. `Index::default()` is the index of an empty log.
#[derive(Clone, Debug)]
pub struct Index {
    /// The instantaneous frames of each stream of the log (one for a log
    /// read from one file; one per log merged, [`Log::streams`]).
    streams: Vec<Instants>,
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

impl Default for Index {
    fn default() -> Self {
        Index::new(&Log::new())
    }
}

impl Index {
    /// Indexes `log`: its frames' times and its primitives' entities and
    /// levels (one pass over each).
    pub fn new(log: &Log) -> Self {
        let mut instants: Vec<Vec<(f64, usize)>> = log.stream_ranges().map(|_| Vec::new()).collect();
        let stream_of: Vec<usize> = log.stream_ranges().map(|r| r.start).collect();
        let mut intervals: Vec<Interval> = Vec::new();
        let mut persistent_frames = Vec::new();
        let mut first_primitive = Vec::new();
        let mut classes = Classes::default();
        let class_of: Vec<Class> = log.primitives.iter().map(|p| classes.of(p)).collect();
        for (i, f) in log.frames.iter().enumerate() {
            match f.time {
                FrameTime::Instant(t) if !t.is_nan() => {
                    let k = stream_of.partition_point(|&first| first <= i).saturating_sub(1);
                    instants[k].push((t, i));
                }
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
        let streams = instants
            .into_iter()
            .zip(log.stream_holds())
            .map(|(i, hold)| Instants::new(i, hold))
            .collect();
        let mut starts: Vec<(f64, u32)> = intervals
            .iter()
            .filter(|iv| iv.start.is_finite())
            .map(|iv| (iv.start, iv.ordinal))
            .collect();
        starts.sort_unstable_by(|a, b| cmp_f64(a.0, b.0).then(a.1.cmp(&b.1)));
        Index {
            streams,
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
        self.streams.iter().map(|s| s.times.len()).sum()
    }

    /// Number of persistent frames indexed (those that can ever apply).
    pub fn persistent_count(&self) -> usize {
        self.persistent_frames.len()
    }

    /// Bytes of heap memory held by the index.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.streams.iter().map(Instants::memory_bytes).sum::<usize>()
            + (self.persistent_frames.capacity() + self.first_primitive.capacity()) * size_of::<usize>()
            + self.starts.capacity() * size_of::<(f64, u32)>()
            + self.classes.capacity() * size_of::<Key>()
            + self.class_of.capacity() * size_of::<Class>()
            + self.tree.memory_bytes()
    }

    /// The indices of the frames shown at `t`: persistent frames with
    /// `start ≤ t ≤ end` in recorded order, then each stream's
    /// instantaneous frame shown at `t` ([`Index::instants_at`]). Replaces
    /// the contents of `out`.
    pub fn frames_at(&self, t: f64, threshold: f64, out: &mut Vec<usize>) {
        out.clear();
        let mut ordinals = Vec::new();
        self.tree.stab(t, |e, _| ordinals.push(e.ordinal));
        ordinals.sort_unstable();
        out.extend(ordinals.iter().map(|&o| self.persistent_frames[o as usize]));
        self.instants_at(t, threshold, out);
    }

    /// The primitives shown at `t` with `filter`, borrowed from `log` (the
    /// log this index was built from) in draw order; the same as
    /// [`super::brute_force`].
    pub fn select<'a>(
        &'a self,
        log: &'a Log,
        t: LogTime,
        threshold: f64,
        filter: &'a Filter,
    ) -> Selection<'a> {
        debug_assert_eq!(log.frames.len(), self.frame_count, "index used with another log");
        let t = t.secs();
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
        let mut instants = Vec::new();
        self.instants_at(t, threshold, &mut instants);
        let ranges: Vec<std::ops::Range<usize>> = instants
            .iter()
            .filter_map(|&f| log.frames.get(f))
            .map(|f| valid_range(log, f))
            .collect();
        let instant_len: usize = ranges.iter().map(|r| r.len()).sum();
        let mut primitives = vec![0; hits.len() + instant_len];
        for (out, h) in primitives.iter_mut().zip(&hits) {
            *out = self.first_primitive[h.ordinal()] + h.offset();
        }
        let mut n = hits.len();
        for range in ranges {
            let classes = self.class_of.get(range.clone()).unwrap_or(&[]);
            for (j, &c) in classes.iter().enumerate() {
                let i = range.start + j;
                primitives[n] = i;
                let pass = match self.classes.get(usize::from(c)) {
                    Some(k) => filter.allows_entity_level(k.entity, k.level),
                    None => self.escaped_passes(log, filter, i),
                };
                n += usize::from(pass);
            }
        }
        primitives.truncate(n);
        Selection {
            index: self,
            log,
            t,
            threshold,
            persistent: hits.len(),
            primitives,
            instants,
        }
    }

    /// Whether the primitive at `i`, which has no class, passes `filter`.
    #[cold]
    #[inline(never)]
    fn escaped_passes(&self, log: &Log, filter: &Filter, i: usize) -> bool {
        log.primitives.get(i).is_some_and(|p| filter.allows(p))
    }

    /// The instantaneous frames shown at `t`, appended to `out` in stream
    /// order: of each stream the nearest one when `|time − t| < threshold`
    /// (ties: earlier time, then recorded first); of a stream on a
    /// simulator's clock the last at or before `t` (the first recorded at
    /// that time), until the next, the last one while `t − time <
    /// threshold`.
    pub fn instants_at(&self, t: f64, threshold: f64, out: &mut Vec<usize>) {
        out.extend(self.streams.iter().filter_map(|s| s.shown(t, threshold)));
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
        for s in &self.streams {
            let lo = s.times.partition_point(|&x| x < t0);
            let hi = s.times.partition_point(|&x| x <= t1);
            out.extend_from_slice(&s.frames[lo..hi.max(lo)]);
        }
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
        self.streams
            .iter()
            .filter_map(|s| s.next(t))
            .min_by(|a, b| cmp_f64(a.0, b.0).then(a.1.cmp(&b.1)))
    }

    /// The last finite time of an instantaneous frame strictly before `t`,
    /// with the frame (the first recorded at that time).
    pub fn prev_instant(&self, t: f64) -> Option<(f64, usize)> {
        if t.is_nan() {
            return None;
        }
        self.streams
            .iter()
            .filter_map(|s| s.prev(t))
            .max_by(|a, b| cmp_f64(a.0, b.0).then(b.1.cmp(&a.1)))
    }
}

/// The instantaneous frames of one stream, sorted by time.
#[derive(Clone, Debug, Default)]
struct Instants {
    /// Times (NaN left out), ascending.
    times: Vec<f64>,
    /// `times[BLOCK * j]` for each `j`.
    samples: Vec<f64>,
    /// Frame index of each entry of `times`; among equal times in recorded order.
    frames: Vec<usize>,
    /// A simulator's records: each shown until the next.
    hold: bool,
}

impl Instants {
    fn new(mut instants: Vec<(f64, usize)>, hold: bool) -> Self {
        // Frame indices are unique, so an unstable sort is deterministic;
        // `partial_cmp` keeps -0.0 and 0.0 together (recorded order decides).
        instants.sort_unstable_by(|a, b| cmp_f64(a.0, b.0).then(a.1.cmp(&b.1)));
        let (times, frames): (Vec<f64>, Vec<usize>) = instants.into_iter().unzip();
        Instants {
            samples: times.iter().step_by(BLOCK).copied().collect(),
            times,
            frames,
            hold,
        }
    }

    fn memory_bytes(&self) -> usize {
        (self.times.capacity() + self.samples.capacity()) * std::mem::size_of::<f64>()
            + self.frames.capacity() * std::mem::size_of::<usize>()
    }

    /// The frame shown at `t`: [`Self::held`] for a simulator's records,
    /// else [`Self::nearest`].
    fn shown(&self, t: f64, threshold: f64) -> Option<usize> {
        if self.hold {
            self.held(t, threshold)
        } else {
            self.nearest(t, threshold)
        }
    }

    /// The last frame at or before `t` (the first recorded at its time),
    /// shown until the next frame's time; the last frame while `t − time <
    /// threshold`.
    fn held(&self, t: f64, threshold: f64) -> Option<usize> {
        if !t.is_finite() {
            return None;
        }
        // The first time after `t` (within rounding): its neighbour before
        // is the last at or before `t`.
        let after = self.first_after(crate::time::within_rounding(t));
        let j = after.checked_sub(1)?;
        let x = self.times[j];
        let within = t - x < threshold;
        if after == self.times.len() && !within {
            return None;
        }
        let first = self.times[..j].partition_point(|&y| y < x);
        Some(self.frames[first])
    }

    /// The first position in `times` holding a time > `t`.
    fn first_after(&self, t: f64) -> usize {
        let s = self.samples.partition_point(|&x| x <= t);
        let lo = if s == 0 { 0 } else { BLOCK * (s - 1) + 1 };
        let hi = (BLOCK * s).min(self.times.len()).max(lo);
        lo + self.times[lo..hi].partition_point(|&x| x <= t)
    }

    /// The nearest frame to `t` when `|time − t| < threshold` (ties:
    /// earlier time, then recorded first).
    fn nearest(&self, t: f64, threshold: f64) -> Option<usize> {
        // An infinite or NaN `t` is at infinite or NaN distance from every frame.
        if !t.is_finite() {
            return None;
        }
        let times = &self.times;
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
        (d < threshold).then(|| self.frames[k])
    }

    /// The first position in `times` holding a time ≥ `t`.
    fn first_at_or_after(&self, t: f64) -> usize {
        let s = self.samples.partition_point(|&x| x < t);
        // times[BLOCK * (s − 1)] < t ≤ times[BLOCK * s].
        let lo = if s == 0 { 0 } else { BLOCK * (s - 1) + 1 };
        let hi = (BLOCK * s).min(self.times.len()).max(lo);
        lo + self.times[lo..hi].partition_point(|&x| x < t)
    }

    fn next(&self, t: f64) -> Option<(f64, usize)> {
        let i = self.times.partition_point(|&x| x <= t);
        let x = *self.times.get(i)?;
        x.is_finite().then(|| (x, self.frames[i]))
    }

    fn prev(&self, t: f64) -> Option<(f64, usize)> {
        let i = self.times.partition_point(|&x| x < t);
        let x = *self.times.get(i.checked_sub(1)?)?;
        let first = self.times[..i].partition_point(|&y| y < x);
        x.is_finite().then(|| (x, self.frames[first]))
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
