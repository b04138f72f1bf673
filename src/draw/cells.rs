//! Drawing a grid's cells ([`Shape::Cells`](crate::log::Shape::Cells): a
//! map's occupied, free or unknown cells) and keeping the drawing while
//! the camera stays where it is.
//!
//! Every rectangle is projected (its edges sampled to
//! [`CELLS_TOLERANCE_PX`], finer than other shapes', so that rectangles
//! meeting along an edge sampled differently leave no visible seam) and
//! all of them are filled as one area: one accumulation, no seam where
//! they meet. The coverage is kept, run by run of covered pixels, with
//! the cells and the calibration it was made for, and painted once in the
//! shape's colour; a later frame with the same cells, calibration and
//! picture size copies the painted runs into the overlay (or paints them
//! over what is already there) ([`CellsCache`]) instead of projecting
//! thousands of rectangles again.
//! A drawing not used in a frame is dropped at the next
//! ([`Painter::new_frame`]).

use std::sync::Arc;

use super::{Overlay, Painter};
use crate::calib::Calibration;
use crate::geom::Vec2;
use crate::log::{Cells, Rgba};

/// Chord error allowed when a rectangle's edges are sampled, in pixels.
pub const CELLS_TOLERANCE_PX: f64 = 0.05;

/// Zero coverage this long inside a row splits a kept run in two.
const GAP: usize = 16;

/// Drawings of cells kept from frame to frame.
#[derive(Debug, Default)]
pub struct CellsCache {
    entries: Vec<Kept>,
    /// Scratch: projected contours, one after another, and their ends.
    points: Vec<Vec2>,
    ends: Vec<usize>,
    rings: Vec<Vec<Vec2>>,
}

/// One kept drawing: what it was made from, its coverage in runs
/// `(y, x0, start, len)` of `coverage`, and the coverage painted in the
/// colour it was last drawn in (premultiplied), ready to copy.
#[derive(Debug)]
struct Kept {
    cells: Arc<Cells>,
    calib: Calibration,
    size: (usize, usize),
    runs: Vec<(u32, u32, u32, u32)>,
    coverage: Vec<u8>,
    painted: Option<(Rgba, Vec<[u8; 4]>)>,
    used: bool,
}

/// Coverage painted in `colour`, premultiplied: what blending it onto a
/// transparent overlay gives.
fn paint(coverage: &[u8], colour: Rgba) -> Vec<[u8; 4]> {
    let a = u32::from(colour.a());
    let rgb = [colour.r(), colour.g(), colour.b()].map(u32::from);
    coverage
        .iter()
        .map(|&c| {
            let sa = super::div255(u32::from(c) * a);
            [
                super::div255(rgb[0] * sa) as u8,
                super::div255(rgb[1] * sa) as u8,
                super::div255(rgb[2] * sa) as u8,
                sa as u8,
            ]
        })
        .collect()
}

impl CellsCache {
    /// Drops the drawings the last frame did not use, and marks the rest
    /// unused for this one.
    pub fn new_frame(&mut self) {
        self.entries.retain(|e| e.used);
        for e in &mut self.entries {
            e.used = false;
        }
    }

    /// How many drawings are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Painter {
    /// Starts a frame: drawings kept for the last one and not used by it
    /// are dropped.
    pub fn new_frame(&mut self) {
        self.cells_cache.new_frame();
    }

    /// Fills `cells` in `colour` onto `ov` through `calib`, from the kept
    /// drawing when there is one.
    pub(super) fn cells(&mut self, ov: &mut Overlay, calib: &Calibration, cells: &Arc<Cells>, colour: Rgba) {
        if colour.a() == 0 {
            return;
        }
        let size = (ov.width(), ov.height());
        let cache = &mut self.cells_cache;
        let found = cache
            .entries
            .iter()
            .position(|e| Arc::ptr_eq(&e.cells, cells) && e.size == size && e.calib == *calib);
        let i = match found {
            Some(i) => i,
            None => {
                let kept = rasterize(&mut self.cov, cache, calib, cells, size);
                cache.entries.push(kept);
                cache.entries.len() - 1
            }
        };
        let e = &mut cache.entries[i];
        e.used = true;
        if e.painted.as_ref().is_none_or(|p| p.0 != colour) {
            e.painted = Some((colour, paint(&e.coverage, colour)));
        }
        let Some((_, pixels)) = &e.painted else {
            return;
        };
        for &(y, x0, start, len) in &e.runs {
            let r = start as usize..(start + len) as usize;
            ov.paint_run(
                y as usize,
                x0 as usize,
                &e.coverage[r.clone()],
                &pixels[r],
                colour,
            );
        }
    }
}

/// Projects and fills every rectangle of `cells` as one area; its
/// coverage in runs of covered pixels.
fn rasterize(
    cov: &mut super::raster::Coverage,
    scratch: &mut CellsCache,
    calib: &Calibration,
    cells: &Arc<Cells>,
    size: (usize, usize),
) -> Kept {
    let (points, ends, rings) = (&mut scratch.points, &mut scratch.ends, &mut scratch.rings);
    points.clear();
    ends.clear();
    for r in cells.rects() {
        rings.clear();
        calib.project_polyline(&cells.corners(r), true, CELLS_TOLERANCE_PX, rings);
        // Pieces cut at the horizon, joined in order, outline the
        // visible part of the rectangle.
        let before = points.len();
        for ring in rings.iter() {
            points.extend_from_slice(ring);
        }
        if points.len() - before >= 3 {
            ends.push(points.len());
        } else {
            points.truncate(before);
        }
    }
    let mut runs = Vec::new();
    let mut coverage = Vec::new();
    cov.fill_spans_flat(points, ends, |y, x0, row| {
        // Split at long gaps of nothing, so that blending costs what is
        // covered.
        let mut i = 0;
        while i < row.len() {
            if row[i] == 0 {
                i += 1;
                continue;
            }
            let start = i;
            let mut end = i + 1;
            let mut zeros = 0;
            let mut j = i + 1;
            while j < row.len() && zeros < GAP {
                if row[j] == 0 {
                    zeros += 1;
                } else {
                    zeros = 0;
                    end = j + 1;
                }
                j += 1;
            }
            runs.push((
                y as u32,
                (x0 + start) as u32,
                coverage.len() as u32,
                (end - start) as u32,
            ));
            coverage.extend_from_slice(&row[start..end]);
            i = end;
        }
    });
    Kept {
        cells: Arc::clone(cells),
        calib: calib.clone(),
        size,
        runs,
        coverage,
        painted: None,
        used: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{EntityId, Primitive, Shape, Style};

    fn camera() -> Calibration {
        let k = [[300.0, 0.0, 159.5], [0.0, 300.0, 119.5], [0.0, 0.0, 1.0]];
        let (r, t) = crate::calib::camera::look_at([0.0, -4.0, 3.0], [0.0, 0.0, 0.0]).unwrap();
        Calibration::from_camera(&k, &[-0.1, 0.02], &r, t)
            .unwrap()
            .with_image_size(320, 240)
    }

    fn prim(cells: Cells) -> Primitive {
        Primitive {
            shape: Shape::Cells(Arc::new(cells)),
            style: Style {
                fill: Some(Rgba::from_rgb(0x00ff00)),
                ..Style::color(Rgba::WHITE)
            },
            entity: EntityId(0),
            level: 1,
        }
    }

    /// A run copied where nothing was drawn and blended where something
    /// was gives the bytes of blending it all.
    #[test]
    fn a_painted_run_is_its_blend() {
        let colour = Rgba::from_rgb(0x2080ff).with_alpha(179);
        let coverage: Vec<u8> = (0..100).map(|i| [0u8, 64, 255, 255, 200][i % 5]).collect();
        let painted = paint(&coverage, colour);
        let mut a = Overlay::new(120, 4);
        // Something drawn under part of the run already.
        a.blend_span(1, 30, &[255; 25], Rgba::from_rgb(0xff0000).with_alpha(100));
        let mut b = a.clone();
        a.paint_run(1, 7, &coverage, &painted, colour);
        b.blend_span(1, 7, &coverage, colour);
        assert_eq!(a.pixels(), b.pixels());
        assert_eq!(a.dirty_pixels(), b.dirty_pixels());
    }

    #[test]
    fn rectangles_meeting_leave_no_seam_and_the_drawing_is_kept() {
        let calib = camera();
        // A 2 × 1 m block as one rectangle, and as a checkerboard of 10 cm
        // rectangles in rows of different lengths (T-junctions).
        let whole = prim(Cells::new(Vec2::new(-1.0, -0.5), 0.3, vec![[0.0, 0.0, 2.0, 1.0]]));
        let mut parts = Vec::new();
        for row in 0..10 {
            let y = row as f32 * 0.1;
            let step = [0.1f32, 0.25, 0.4][row % 3];
            let mut x = 0.0f32;
            while x < 2.0 - 1e-6 {
                let x1 = (x + step).min(2.0);
                parts.push([x, y, x1, y + 0.1]);
                x = x1;
            }
        }
        let split = prim(Cells::new(Vec2::new(-1.0, -0.5), 0.3, parts));
        let draw = |p: &Primitive, painter: &mut Painter| {
            let mut ov = Overlay::new(320, 240);
            painter.primitive(&mut ov, &calib, p).unwrap();
            ov
        };
        let mut painter = Painter::new(320, 240);
        let a = draw(&whole, &mut painter);
        let b = draw(&split, &mut painter);
        let worst = a
            .pixels()
            .iter()
            .zip(b.pixels())
            .map(|(p, q)| p.iter().zip(q).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0))
            .max()
            .unwrap_or(0);
        // Edges sampled differently along a lens's curve differ by at most
        // the tolerance on each side: a few 255ths of coverage, no seam.
        assert!(worst <= 8, "the split rectangles differ by {worst}");
        assert!(a.pixels().iter().filter(|p| p[3] == 255).count() > 1000);
        // Kept: drawn again from what was kept, the same.
        assert_eq!(painter.cells_cache.len(), 2);
        let again = draw(&split, &mut painter);
        assert_eq!(again.pixels(), b.pixels());
        assert_eq!(painter.cells_cache.len(), 2);
        // A frame that uses only one drops the other at the next.
        painter.new_frame();
        draw(&whole, &mut painter);
        painter.new_frame();
        assert_eq!(painter.cells_cache.len(), 1);
        // Another camera draws anew, and keeps its own.
        let k = [[300.0, 0.0, 159.5], [0.0, 300.0, 119.5], [0.0, 0.0, 1.0]];
        let (r, t) = crate::calib::camera::look_at([1.0, -4.0, 3.0], [0.0, 0.0, 0.0]).unwrap();
        let moved = Calibration::from_camera(&k, &[], &r, t)
            .unwrap()
            .with_image_size(320, 240);
        let mut ov = Overlay::new(320, 240);
        painter.primitive(&mut ov, &moved, &whole).unwrap();
        assert_eq!(painter.cells_cache.len(), 2);
        assert_ne!(ov.pixels(), a.pixels());
    }
}
