//! Where the floor lies when nothing says where the field is (no
//! calibration): a camera above the side of a field sees the floor in the
//! lower part of the picture and stands, trees, walls and sky above it —
//! some of them the floor's colour. So a floor region that lies wholly in
//! the upper half of the picture and is large is taken for one of those,
//! not floor. Small floor regions up there (floor between robots near a
//! top-down camera's edge) and every region reaching the lower half stay.
//!
//! It wraps any other method and works on its whole mask, at the mask's
//! own resolution (a block mask's regions are regions of blocks).

use crate::image::{FLOOR, MaskImage};
use crate::video::Picture;

use super::{FloorMask, MaskError, MaskStep, Masker};
use crate::floor::bits::BitMask;

/// A floor region wholly above this fraction of the picture's height…
const UPPER: f64 = 0.5;
/// …and larger than this fraction of the picture is not floor.
const LARGE: f64 = 0.01;

/// A method whose large floor regions high in the picture are dropped
/// (see the module docs).
pub struct GroundMasker {
    inner: Box<dyn Masker>,
    regions: Labels,
}

impl GroundMasker {
    pub fn new(inner: Box<dyn Masker>) -> Self {
        GroundMasker {
            inner,
            regions: Labels::default(),
        }
    }
}

impl Masker for GroundMasker {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        self.inner.compute(frame, time, out)?;
        self.drop_high(out);
        Ok(())
    }

    fn advance(&mut self, frame: &Picture<'_>, time: f64) -> Result<MaskStep, MaskError> {
        self.inner.advance(frame, time)
    }

    fn compute_step(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        self.inner.compute_step(frame, time, step, out)?;
        self.drop_high(out);
        Ok(())
    }

    fn memory(&self) -> f64 {
        self.inner.memory()
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn doubt(&self) -> Option<super::MaskDoubt> {
        self.inner.doubt()
    }
}

impl GroundMasker {
    /// Drops the large high floor regions of `out`, in its own form.
    fn drop_high(&mut self, out: &mut FloorMask) {
        let (w, h) = (out.width(), out.height());
        if out.blocks().is_some() {
            self.regions.drop_high(out.blocks_mut(w, h));
        } else {
            self.regions.drop_high(out.pixels_mut(w, h));
        }
    }
}

/// A mask whose floor comes in runs along its rows.
trait Runs {
    /// `(width, height)`.
    fn size(&self) -> (usize, usize);
    /// Calls `f(x0, x1)` for each run of floor `x0..x1` of row `y`, left to right.
    fn runs(&self, y: usize, f: impl FnMut(usize, usize));
    /// Makes pixels `x0..x1` of row `y` not floor.
    fn clear(&mut self, y: usize, x0: usize, x1: usize);
}

impl Runs for MaskImage {
    fn size(&self) -> (usize, usize) {
        (self.dim().1, self.dim().0)
    }

    fn runs(&self, y: usize, mut f: impl FnMut(usize, usize)) {
        let mut start = None;
        let row = self.row(y);
        for (x, &v) in row.iter().enumerate() {
            match (v == FLOOR, start) {
                (true, None) => start = Some(x),
                (false, Some(x0)) => {
                    f(x0, x);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(x0) = start {
            f(x0, row.len());
        }
    }

    fn clear(&mut self, y: usize, x0: usize, x1: usize) {
        self.slice_mut(ndarray::s![y, x0..x1]).fill(0);
    }
}

impl Runs for BitMask {
    fn size(&self) -> (usize, usize) {
        (self.width(), self.height())
    }

    fn runs(&self, y: usize, mut f: impl FnMut(usize, usize)) {
        let w = self.width();
        let mut x = 0;
        while x < w {
            if !self.get(x, y) {
                x += 1;
                continue;
            }
            let x0 = x;
            while x < w && self.get(x, y) {
                x += 1;
            }
            f(x0, x);
        }
    }

    fn clear(&mut self, y: usize, x0: usize, x1: usize) {
        for x in x0..x1 {
            self.set(x, y, false);
        }
    }
}

/// A run of floor `x0..x1` in row `y`.
#[derive(Clone, Copy, Debug)]
struct Run {
    y: usize,
    x0: usize,
    x1: usize,
}

/// 8-connected floor regions from runs, with a union–find (buffers kept).
#[derive(Default)]
struct Labels {
    runs: Vec<Run>,
    /// Index of each row's first run, and the end.
    row_start: Vec<usize>,
    parent: Vec<usize>,
    area: Vec<usize>,
    lowest: Vec<usize>,
}

impl Labels {
    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    /// Clears the large floor regions wholly in the upper part of `m`.
    fn drop_high(&mut self, m: &mut impl Runs) {
        let (w, h) = m.size();
        let upper = (UPPER * h as f64) as usize;
        if upper == 0 || w == 0 {
            return;
        }
        // Only the rows above `upper` are labelled, and the first row
        // below them: a region of the upper rows touching a run of that
        // row reaches the lower part and stays; the others lie wholly in
        // the upper part, and their labels there are whole.
        let rows = (upper + 1).min(h);
        self.runs.clear();
        let mut row_start = std::mem::take(&mut self.row_start);
        row_start.clear();
        for y in 0..rows {
            row_start.push(self.runs.len());
            let runs = &mut self.runs;
            m.runs(y, |x0, x1| runs.push(Run { y, x0, x1 }));
        }
        row_start.push(self.runs.len());
        let n = self.runs.len();
        self.parent.clear();
        self.parent.extend(0..n);
        // Join each run with the runs of the row above it touches
        // (diagonals included).
        for y in 1..rows {
            let (mut a, a_end) = (row_start[y - 1], row_start[y]);
            for b in row_start[y]..row_start[y + 1] {
                let rb = self.runs[b];
                while a < a_end && self.runs[a].x1 < rb.x0 {
                    a += 1;
                }
                let mut k = a;
                while k < a_end && self.runs[k].x0 <= rb.x1 {
                    let (ra, rr) = (self.find(k), self.find(b));
                    if ra != rr {
                        self.parent[ra.max(rr)] = ra.min(rr);
                    }
                    k += 1;
                }
            }
        }
        self.area.clear();
        self.area.resize(n, 0);
        self.lowest.clear();
        self.lowest.resize(n, 0);
        for i in 0..n {
            let r = self.find(i);
            let run = self.runs[i];
            self.area[r] += run.x1 - run.x0;
            self.lowest[r] = self.lowest[r].max(run.y);
        }
        let large = (LARGE * (w * h) as f64) as usize;
        for i in 0..row_start[upper.min(rows)] {
            let r = self.find(i);
            if self.lowest[r] < upper && self.area[r] > large {
                let run = self.runs[i];
                m.clear(run.y, run.x0, run.x1);
            }
        }
        self.row_start = row_start;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mask that is floor in `rects` (rows, columns).
    fn mask(h: usize, w: usize, rects: &[(std::ops::Range<usize>, std::ops::Range<usize>)]) -> MaskImage {
        let mut m = MaskImage::zeros((h, w));
        for (rows, cols) in rects {
            m.slice_mut(ndarray::s![rows.clone(), cols.clone()]).fill(FLOOR);
        }
        m
    }

    #[test]
    fn large_regions_high_up_go_and_the_rest_stays() {
        // Stands (large, high), a speck high up, the pitch (low), and a
        // region reaching from high to low.
        let mut m = mask(
            100,
            200,
            &[
                (5..30, 0..200),
                (0..3, 190..196),
                (60..90, 20..180),
                (35..70, 0..8),
            ],
        );
        Labels::default().drop_high(&mut m);
        let floor = |r: std::ops::Range<usize>, c: std::ops::Range<usize>| {
            m.slice(ndarray::s![r, c]).iter().filter(|&&v| v == FLOOR).count()
        };
        assert_eq!(floor(5..30, 10..200), 0, "the stands go");
        assert_eq!(floor(0..3, 190..196), 3 * 6, "the speck stays");
        assert_eq!(floor(60..90, 20..180), 30 * 160, "the pitch stays");
        // A strip from the upper half into the lower one stays.
        assert_eq!(floor(35..70, 0..8), 35 * 8);
    }

    #[test]
    fn diagonal_neighbours_join_and_empty_masks_pass() {
        // A staircase from the top to the bottom: one region.
        let mut m = MaskImage::zeros((60, 60));
        for i in 0..60 {
            m[(i, i)] = FLOOR;
        }
        let before = m.clone();
        Labels::default().drop_high(&mut m);
        assert_eq!(m, before);
        let mut e = MaskImage::zeros((0, 0));
        Labels::default().drop_high(&mut e);
        let mut full = MaskImage::from_elem((40, 40), FLOOR);
        Labels::default().drop_high(&mut full);
        assert!(full.iter().all(|&v| v == FLOOR));
    }

    /// The rule by flood fill over the whole picture.
    fn reference(m: &MaskImage) -> MaskImage {
        let (h, w) = m.dim();
        let mut out = m.clone();
        for region in crate::mask::regions::components_by_flood_fill(w, h, |x, y| m[(y, x)] == FLOOR) {
            let lowest = region.iter().map(|p| p.1).max().unwrap_or(0);
            let upper = (UPPER * h as f64) as usize;
            if lowest < upper && region.len() > (LARGE * (w * h) as f64) as usize {
                for (x, y) in region {
                    out[(y, x)] = 0;
                }
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn equals_a_flood_fill(h in 1usize..40, w in 1usize..40, seed in 0u64..10_000, density in 0.2f64..0.8) {
            use rand::{Rng, SeedableRng};
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let m = MaskImage::from_shape_fn((h, w), |_| if rng.random::<f64>() < density { FLOOR } else { 0 });
            let mut got = m.clone();
            Labels::default().drop_high(&mut got);
            proptest::prop_assert_eq!(&got, &reference(&m));
            // The same on the mask's bits.
            let mut bits = BitMask::from_mask_image(&m);
            Labels::default().drop_high(&mut bits);
            proptest::prop_assert_eq!(bits.to_mask_image(), got);
        }
    }
}
