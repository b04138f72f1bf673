//! A centered interval tree of persistent frames in flat arrays: each node
//! holds a center and the intervals containing it, sorted by start and by
//! end, with the classes of their primitives beside them, so a stabbing
//! query walks one root-to-leaf path and reads only intervals that match.

use std::cmp::Ordering;

use super::classes::Class;

/// Marks a missing child in the interval tree.
const NONE: u32 = u32::MAX;

/// A persistent frame's interval while building the tree.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Interval {
    pub(super) start: f64,
    pub(super) end: f64,
    pub(super) ordinal: u32,
    /// The frame's primitives in `Log::primitives` (valid, maybe empty).
    pub(super) primitives: std::ops::Range<usize>,
}

/// An interval in a node list: its start (in `by_start`) or end (in
/// `by_end`), its ordinal, and where its keys begin in the list's key
/// array (they end where the next entry's begin).
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) bound: f64,
    pub(super) ordinal: u32,
    pub(super) keys: u32,
}

/// A node of the centered interval tree.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    center: f64,
    /// The intervals containing `center`: `by_start[lo..hi]` and `by_end[lo..hi]`.
    lo: u32,
    hi: u32,
    left: u32,
    right: u32,
}

/// Which list of a node an entry comes from.
#[derive(Clone, Copy, Debug)]
pub(super) struct List<'t> {
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
pub(super) struct IntervalTree {
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
    pub(super) fn new(intervals: Vec<Interval>, class_of: &[Class]) -> Self {
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

    pub(super) fn memory_bytes(&self) -> usize {
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
    pub(super) fn stab(&self, t: f64, mut visit: impl FnMut(Entry, &[Class])) {
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
    pub(super) fn overlapping(&self, t0: f64, t1: f64, out: &mut Vec<u32>) {
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
pub(super) fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}
/// Orders non-NaN floats, with -0.0 equal to 0.0.
pub(super) fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}
