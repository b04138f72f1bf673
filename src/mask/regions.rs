//! Connected regions of a [`BitMask`] (8-connected), found from runs of set
//! bits row by row with a union–find, and filtered by their extent.
//!
//! The adaptive mask uses this to tell painted lines (long) from small
//! light objects (compact) among the holes a closing would fill. The cost
//! is proportional to the number of runs, not pixels.

use super::window::Rect;
use crate::floor::bits::BitMask;

/// A horizontal run of set pixels `x0..x1` in row `y`.
#[derive(Debug, Clone, Copy)]
struct Run {
    y: u32,
    x0: u32,
    x1: u32,
}

/// Bounding box of a region.
#[derive(Debug, Clone, Copy)]
struct Extent {
    x0: u32,
    x1: u32,
    y0: u32,
    y1: u32,
}

/// Reusable buffers for region filtering.
#[derive(Debug, Default, Clone)]
pub struct Regions {
    runs: Vec<Run>,
    parent: Vec<u32>,
    extent: Vec<Extent>,
    /// Per root: the cut sides a short region touches (bits 0–3).
    touches: Vec<u8>,
}

impl Regions {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Clears every 8-connected region of `m` whose bounding box is, in
    /// both directions, longer than `keep_below` and shorter than
    /// `keep_from` pixels: small specks (≤ `keep_below`) and long shapes
    /// (≥ `keep_from` in some direction) stay.
    pub fn remove_mid_sized(&mut self, m: &mut BitMask, keep_below: usize, keep_from: usize) {
        self.label(m);
        self.remove(m, keep_below, keep_from);
    }

    /// [`remove_mid_sized`](Self::remove_mid_sized) on a part of a larger
    /// mask: `m` is known only inside `known` (its bits outside are 0),
    /// and the larger mask goes on past the sides of `known` that `cuts`
    /// marks (left, top, right, bottom). A region of `m` is then part of a
    /// region of the larger mask, whole unless it touches a cut side; a
    /// long one stays either way, a short one touching a cut may belong to
    /// a longer one. When such an undecided region reaches into `needed`
    /// the result there would not be the larger mask's: returns the cut
    /// sides undecided regions touch, leaving `m` as it is. Otherwise
    /// filters as `remove_mid_sized` does, exactly as the larger mask
    /// would be inside `needed`.
    pub fn remove_mid_sized_within(
        &mut self,
        m: &mut BitMask,
        keep_below: usize,
        keep_from: usize,
        known: Rect,
        cuts: [bool; 4],
        needed: Rect,
    ) -> Result<(), [bool; 4]> {
        self.label(m);
        let n = self.runs.len();
        self.touches.clear();
        self.touches.resize(n, 0);
        for i in 0..n {
            let root = self.parent[i] as usize;
            if root != i {
                continue;
            }
            let e = self.extent[root];
            let sides = [
                e.x0 as usize <= known.x0,
                e.y0 as usize <= known.y0,
                e.x1 as usize >= known.x1,
                e.y1 as usize >= known.y1,
            ];
            if extent_size(e) < keep_from {
                for (k, (&side, &cut)) in sides.iter().zip(&cuts).enumerate() {
                    self.touches[root] |= u8::from(side && cut) << k;
                }
            }
        }
        let mut undecided = 0u8;
        for (i, r) in self.runs.iter().enumerate() {
            let (y, x0, x1) = (r.y as usize, r.x0 as usize, r.x1 as usize);
            if (needed.y0..needed.y1).contains(&y) && x0 < needed.x1 && needed.x0 < x1 {
                undecided |= self.touches[self.parent[i] as usize];
            }
        }
        if undecided != 0 {
            return Err(std::array::from_fn(|k| undecided & (1 << k) != 0));
        }
        self.remove(m, keep_below, keep_from);
        Ok(())
    }

    /// Labels the regions of `m`: runs, their union–find roots (fully
    /// compressed: `parent[i]` is the root) and each root's bounding box.
    fn label(&mut self, m: &BitMask) {
        self.find_runs(m);
        self.link_runs();
        let n = self.runs.len();
        self.extent.clear();
        self.extent.extend(self.runs.iter().map(|r| Extent {
            x0: r.x0,
            x1: r.x1,
            y0: r.y,
            y1: r.y + 1,
        }));
        for i in 0..n {
            let root = find(&mut self.parent, i as u32) as usize;
            if root != i {
                let (a, b) = (self.extent[i], self.extent[root]);
                self.extent[root] = Extent {
                    x0: a.x0.min(b.x0),
                    x1: a.x1.max(b.x1),
                    y0: a.y0.min(b.y0),
                    y1: a.y1.max(b.y1),
                };
            }
        }
        for i in 0..n {
            self.parent[i] = find(&mut self.parent, i as u32);
        }
    }

    /// Clears the runs of labelled regions of mid size (see
    /// [`remove_mid_sized`](Self::remove_mid_sized)).
    fn remove(&mut self, m: &mut BitMask, keep_below: usize, keep_from: usize) {
        for (r, &root) in self.runs.iter().zip(&self.parent) {
            let size = extent_size(self.extent[root as usize]);
            if size > keep_below && size < keep_from {
                clear_run(m.row_mut(r.y as usize), r.x0 as usize, r.x1 as usize);
            }
        }
    }

    /// Collects the runs of set bits, row by row, left to right.
    fn find_runs(&mut self, m: &BitMask) {
        self.runs.clear();
        let w = m.width();
        for y in 0..m.height() {
            let row = m.row(y);
            let mut x = 0;
            while let Some(x0) = next_bit(row, x, w, true) {
                let x1 = next_bit(row, x0, w, false).unwrap_or(w);
                self.runs.push(Run {
                    y: y as u32,
                    x0: x0 as u32,
                    x1: x1 as u32,
                });
                x = x1;
            }
        }
    }

    /// Unions runs of consecutive rows that touch (8-connectivity).
    fn link_runs(&mut self) {
        let n = self.runs.len();
        self.parent.clear();
        self.parent.extend(0..n as u32);
        let (mut prev_start, mut prev_end) = (0usize, 0usize);
        let mut i = 0;
        while i < n {
            let y = self.runs[i].y;
            let start = i;
            while i < n && self.runs[i].y == y {
                i += 1;
            }
            if prev_end > prev_start && self.runs[prev_start].y + 1 == y {
                let mut p = prev_start;
                for c in start..i {
                    let cur = self.runs[c];
                    // Skip previous-row runs that end left of this one.
                    while p < prev_end && self.runs[p].x1 < cur.x0 {
                        p += 1;
                    }
                    let mut q = p;
                    while q < prev_end && self.runs[q].x0 <= cur.x1 {
                        union(&mut self.parent, q as u32, c as u32);
                        q += 1;
                    }
                }
            }
            prev_start = start;
            prev_end = i;
        }
    }
}

/// The longer side of a bounding box.
fn extent_size(e: Extent) -> usize {
    ((e.x1 - e.x0) as usize).max((e.y1 - e.y0) as usize)
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grand = parent[parent[i as usize] as usize];
        parent[i as usize] = grand;
        i = grand;
    }
    i
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        // The smaller index becomes the root: roots come first in scan order.
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
    }
}

/// The first x ≥ `from` (and < `width`) whose bit equals `value`.
fn next_bit(row: &[u64], from: usize, width: usize, value: bool) -> Option<usize> {
    if from >= width {
        return None;
    }
    let mut i = from / 64;
    let flip = if value { 0 } else { !0u64 };
    let mut word = (row[i] ^ flip) & (!0u64 << (from % 64));
    loop {
        if word != 0 {
            let x = 64 * i + word.trailing_zeros() as usize;
            return (x < width).then_some(x);
        }
        i += 1;
        if i >= row.len() {
            return None;
        }
        word = row[i] ^ flip;
    }
}

/// Clears bits `x0..x1` of a row.
fn clear_run(row: &mut [u64], x0: usize, x1: usize) {
    for x in x0..x1 {
        row[x / 64] &= !(1u64 << (x % 64));
    }
}

/// The 8-connected regions of the set pixels of a `w`×`h` picture, as
/// `(x, y)` lists, by a plain flood fill: the reference the labelling is
/// tested against.
#[cfg(test)]
pub(crate) fn components_by_flood_fill(
    w: usize,
    h: usize,
    set: impl Fn(usize, usize) -> bool,
) -> Vec<Vec<(usize, usize)>> {
    let mut seen = vec![false; w * h];
    let mut regions = Vec::new();
    for sy in 0..h {
        for sx in 0..w {
            if !set(sx, sy) || seen[sy * w + sx] {
                continue;
            }
            let mut stack = vec![(sx, sy)];
            let mut pixels = Vec::new();
            seen[sy * w + sx] = true;
            while let Some((x, y)) = stack.pop() {
                pixels.push((x, y));
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                        if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                            continue;
                        }
                        let (nx, ny) = (nx as usize, ny as usize);
                        if set(nx, ny) && !seen[ny * w + nx] {
                            seen[ny * w + nx] = true;
                            stack.push((nx, ny));
                        }
                    }
                }
            }
            regions.push(pixels);
        }
    }
    regions
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: flood fill with 8-connectivity.
    fn reference(m: &BitMask, keep_below: usize, keep_from: usize) -> BitMask {
        let mut out = m.clone();
        for pixels in super::components_by_flood_fill(m.width(), m.height(), |x, y| m.get(x, y)) {
            let xs = pixels.iter().map(|p| p.0);
            let ys = pixels.iter().map(|p| p.1);
            let ew = xs.clone().max().unwrap() - xs.min().unwrap() + 1;
            let eh = ys.clone().max().unwrap() - ys.min().unwrap() + 1;
            let size = ew.max(eh);
            if size > keep_below && size < keep_from {
                for (x, y) in pixels {
                    out.set(x, y, false);
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        #[test]
        fn filtering_equals_flood_fill(w in 1usize..150, h in 1usize..30, seed: u64, density in 0u64..60,
                                       keep_below in 0usize..4, keep_from in 2usize..20) {
            let mut s = seed | 1;
            let m = BitMask::from_fn(w, h, |_, _| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s % 100 < density
            });
            let mut fast = m.clone();
            Regions::new().remove_mid_sized(&mut fast, keep_below, keep_from);
            prop_assert_eq!(fast, reference(&m, keep_below, keep_from));
        }
    }

    #[test]
    fn long_lines_and_specks_stay_blobs_go() {
        let m = BitMask::from_fn(100, 40, |x, y| {
            y == 5 && x > 10 // a long line
                || (x == 3 && y == 30) // a speck
                || ((50..58).contains(&x) && (20..28).contains(&y)) // a blob
                || (x + y == 90 && x > 60) // a long diagonal
        });
        let mut f = m.clone();
        Regions::new().remove_mid_sized(&mut f, 2, 20);
        assert!(f.get(50, 5) && f.get(3, 30) && f.get(70, 20));
        assert!(!f.get(54, 24));
        assert_eq!(f.count_ones(), m.count_ones() - 64);
    }
}
