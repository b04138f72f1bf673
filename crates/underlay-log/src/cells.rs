//! Cells of a grid on the floor as one shape ([`super::Shape::Cells`]): a
//! map's occupied, free or unknown cells as floor polygons with their runs
//! merged — each run of like cells in a row one rectangle, and a run that
//! repeats in the rows below one taller rectangle ([`merge_rows`]) — so a
//! map of 4000 × 4000 cells is thousands of rectangles, not millions of
//! cells, drawn as one filled area (where rectangles meet there is no
//! seam: one area, one fill).
//!
//! The rectangles are in the grid's own frame (its `origin` on the floor,
//! turned by `yaw`), single precision relative to it, and held in parts
//! (`Arc`s) that the versions of a map share: a map update that changes a
//! band of rows makes that band's part anew and keeps the others.

use std::ops::Range;
use std::sync::Arc;

use super::Vec2;

/// A rectangle `[x0, y0, x1, y1]` in a grid's frame (world units),
/// `x0 ≤ x1`, `y0 ≤ y1`.
pub type Rect = [f32; 4];

/// Cells of a grid on the floor: the union of rectangles in the grid's
/// frame, placed at `origin` and turned by `yaw` (radians,
/// counter-clockwise from the world x axis).
#[derive(Clone, Debug)]
pub struct Cells {
    pub origin: Vec2,
    pub yaw: f64,
    parts: Box<[Arc<[Rect]>]>,
}

/// The same place and the same rectangles in the same order, however they
/// are split into parts.
impl PartialEq for Cells {
    fn eq(&self, other: &Self) -> bool {
        self.origin == other.origin
            && self.yaw.to_bits() == other.yaw.to_bits()
            && self.len() == other.len()
            && self.rects().eq(other.rects())
    }
}

impl Cells {
    /// Cells of the rectangles `rects`.
    pub fn new(origin: Vec2, yaw: f64, rects: Vec<Rect>) -> Cells {
        Cells {
            origin,
            yaw,
            parts: Box::new([Arc::from(rects)]),
        }
    }

    /// Cells of the rectangles of `parts`, in order (parts shared with
    /// other cells stay shared).
    pub fn from_parts(origin: Vec2, yaw: f64, parts: Vec<Arc<[Rect]>>) -> Cells {
        Cells {
            origin,
            yaw,
            parts: parts.into_iter().filter(|p| !p.is_empty()).collect(),
        }
    }

    /// The rectangles, in order.
    pub fn rects(&self) -> impl Iterator<Item = &Rect> + '_ {
        self.parts.iter().flat_map(|p| p.iter())
    }

    /// The parts the rectangles are held in.
    pub fn parts(&self) -> &[Arc<[Rect]>] {
        &self.parts
    }

    /// How many rectangles there are.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A point of the grid's frame on the floor.
    pub fn to_world(&self, x: f64, y: f64) -> Vec2 {
        let (s, c) = self.yaw.sin_cos();
        Vec2::new(self.origin.x + x * c - y * s, self.origin.y + x * s + y * c)
    }

    /// A rectangle's corners on the floor, counter-clockwise seen from
    /// above.
    pub fn corners(&self, r: &Rect) -> [Vec2; 4] {
        let [x0, y0, x1, y1] = r.map(f64::from);
        [
            self.to_world(x0, y0),
            self.to_world(x1, y0),
            self.to_world(x1, y1),
            self.to_world(x0, y1),
        ]
    }

    /// Why the cells cannot be drawn, if they cannot: a place or corner
    /// that is not finite, a rectangle whose ends are the wrong way round,
    /// or no rectangle at all.
    pub fn problem(&self) -> Option<&'static str> {
        if !(self.origin.is_finite() && self.yaw.is_finite()) {
            return Some("the grid's origin or turn is not finite");
        }
        if self.is_empty() {
            return Some("a set of cells holds none");
        }
        for r in self.rects() {
            if !r.iter().all(|v| v.is_finite()) {
                return Some("a cell's corner is not finite");
            }
            if r[2] < r[0] || r[3] < r[1] {
                return Some("a rectangle of cells ends before it starts");
            }
        }
        None
    }

    /// The box on the floor holding every cell: `(min, max)`; `None`
    /// without cells.
    pub fn extent(&self) -> Option<(Vec2, Vec2)> {
        let mut lo = Vec2::new(f64::INFINITY, f64::INFINITY);
        let mut hi = Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY);
        for r in self.rects() {
            for c in self.corners(r) {
                lo = Vec2::new(lo.x.min(c.x), lo.y.min(c.y));
                hi = Vec2::new(hi.x.max(c.x), hi.y.max(c.y));
            }
        }
        (lo.x <= hi.x).then_some((lo, hi))
    }
}

/// What [`merge_rows`] is told a cell is of: a class below the number of
/// classes, or this for none.
pub const NO_CLASS: u8 = u8::MAX;

/// The rectangles of the cells of each class in rows `rows` of a grid
/// `cols` cells wide whose cells are `cell` (width, height) world units:
/// `classes(row, out)` writes the class of each cell of a row into `out`
/// ([`NO_CLASS`] for none). Each run of like cells in a row becomes a
/// rectangle, and a run with the same ends in the next row makes it
/// taller. Returns one list of rectangles per class, in the order they
/// end (by row, then by column).
pub fn merge_rows(
    cols: usize,
    rows: Range<usize>,
    cell: [f64; 2],
    class_count: usize,
    mut classes: impl FnMut(usize, &mut [u8]),
) -> Vec<Vec<Rect>> {
    let mut out: Vec<Vec<Rect>> = vec![Vec::new(); class_count];
    // Per class, the runs still growing downwards: (first col, end col,
    // first row), in column order.
    let mut open: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); class_count];
    let mut now: Vec<Vec<(usize, usize)>> = vec![Vec::new(); class_count];
    let mut next: Vec<(usize, usize, usize)> = Vec::new();
    let mut row = vec![NO_CLASS; cols];
    let rect = |a: usize, b: usize, r0: usize, r1: usize| -> Rect {
        [
            (a as f64 * cell[0]) as f32,
            (r0 as f64 * cell[1]) as f32,
            (b as f64 * cell[0]) as f32,
            (r1 as f64 * cell[1]) as f32,
        ]
    };
    let end = rows.end;
    for r in rows {
        row.fill(NO_CLASS);
        classes(r, &mut row);
        for runs in &mut now {
            runs.clear();
        }
        let mut a = 0;
        while a < cols {
            let c = row[a];
            let mut b = a + 1;
            while b < cols && row[b] == c {
                b += 1;
            }
            if let Some(runs) = now.get_mut(usize::from(c)) {
                runs.push((a, b));
            }
            a = b;
        }
        for (k, runs) in now.iter().enumerate() {
            // Both lists are in column order: walk them together.
            next.clear();
            let mut i = 0;
            for &(a, b) in runs {
                while i < open[k].len() && open[k][i].0 < a {
                    let (oa, ob, r0) = open[k][i];
                    out[k].push(rect(oa, ob, r0, r));
                    i += 1;
                }
                match open[k].get(i) {
                    Some(&(oa, ob, r0)) if oa == a && ob == b => {
                        next.push((a, b, r0));
                        i += 1;
                    }
                    _ => next.push((a, b, r)),
                }
            }
            for &(oa, ob, r0) in &open[k][i..] {
                out[k].push(rect(oa, ob, r0, r));
            }
            std::mem::swap(&mut open[k], &mut next);
        }
    }
    for (k, runs) in open.iter().enumerate() {
        for &(a, b, r0) in runs {
            out[k].push(rect(a, b, r0, end));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells a list of rectangles covers, for a grid of unit cells.
    fn covered(rects: &[Rect], cols: usize, rows: usize) -> Vec<bool> {
        let mut v = vec![false; cols * rows];
        for r in rects {
            for y in r[1] as usize..r[3] as usize {
                for x in r[0] as usize..r[2] as usize {
                    assert!(!v[y * cols + x], "cell ({x}, {y}) covered twice");
                    v[y * cols + x] = true;
                }
            }
        }
        v
    }

    #[test]
    fn runs_merge_across_rows_and_classes_stay_apart() {
        // 0 = a, 1 = b, 9 = none.
        let grid = [
            [0, 0, 0, 1, 1, 9], //
            [0, 0, 0, 1, 9, 9],
            [0, 0, 0, 1, 9, 0],
            [9, 0, 0, 1, 9, 0],
        ];
        let got = merge_rows(6, 0..4, [1.0, 1.0], 2, |r, out| {
            for (c, v) in grid[r].iter().enumerate() {
                out[c] = if *v == 9 { NO_CLASS } else { *v };
            }
        });
        // Class a: rows 0–2 cols 0–3 as one, row 3 cols 1–3, col 5 rows 2–4.
        assert_eq!(
            got[0],
            [[0.0, 0.0, 3.0, 3.0], [1.0, 3.0, 3.0, 4.0], [5.0, 2.0, 6.0, 4.0]]
        );
        // Class b: cols 3–5 of row 0, then col 3 of rows 1–4.
        assert_eq!(got[1], [[3.0, 0.0, 5.0, 1.0], [3.0, 1.0, 4.0, 4.0]]);
    }

    proptest::proptest! {
        /// Every cell of each class is covered exactly once by that class's
        /// rectangles, and by no other's.
        #[test]
        fn rectangles_cover_each_classes_cells_once(
            cols in 1usize..24,
            rows in 1usize..24,
            seed in proptest::prelude::any::<u64>(),
        ) {
            let mut s = seed | 1;
            let cells: Vec<u8> = (0..cols * rows)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    // Long runs, as maps have.
                    [0, 0, 0, 1, 1, 2, NO_CLASS][(s % 7) as usize]
                })
                .collect();
            let got = merge_rows(cols, 0..rows, [1.0, 1.0], 3, |r, out| {
                out.copy_from_slice(&cells[r * cols..(r + 1) * cols]);
            });
            for (k, rects) in got.iter().enumerate() {
                let v = covered(rects, cols, rows);
                for (i, c) in cells.iter().enumerate() {
                    proptest::prop_assert_eq!(v[i], usize::from(*c) == k, "cell {} class {}", i, c);
                }
            }
        }
    }

    #[test]
    fn cells_place_turn_compare_and_say_what_is_wrong() {
        let c = Cells::new(
            Vec2::new(1.0, 2.0),
            std::f64::consts::FRAC_PI_2,
            vec![[0.0, 0.0, 2.0, 1.0]],
        );
        let k = c.corners(&[0.0, 0.0, 2.0, 1.0]);
        assert!((k[1] - Vec2::new(1.0, 4.0)).length() < 1e-12, "{k:?}");
        assert!((k[2] - Vec2::new(0.0, 4.0)).length() < 1e-12, "{k:?}");
        let (lo, hi) = c.extent().unwrap();
        assert!((lo - Vec2::new(0.0, 2.0)).length() < 1e-12 && (hi - Vec2::new(1.0, 4.0)).length() < 1e-12);
        // Split differently, still equal.
        let parts = Cells::from_parts(
            c.origin,
            c.yaw,
            vec![Arc::from(vec![]), Arc::from(vec![[0.0, 0.0, 2.0, 1.0]])],
        );
        assert_eq!(c, parts);
        assert_eq!(parts.parts().len(), 1);
        assert!(c.problem().is_none());
        assert!(Cells::new(Vec2::ZERO, 0.0, vec![]).problem().is_some());
        assert!(
            Cells::new(Vec2::ZERO, 0.0, vec![[1.0, 0.0, 0.0, 1.0]])
                .problem()
                .is_some()
        );
        assert!(
            Cells::new(Vec2::ZERO, f64::NAN, vec![[0.0; 4]])
                .problem()
                .is_some()
        );
        assert!(
            Cells::new(Vec2::ZERO, 0.0, vec![[0.0, f32::NAN, 1.0, 1.0]])
                .problem()
                .is_some()
        );
    }
}
