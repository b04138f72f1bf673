//! What hides a drawing above the floor (issue 33; docs/mask.md).
//!
//! A floor drawing is hidden wherever the floor mask says something stands
//! on the floor. A raised drawing is hidden only by what stands *in front*
//! of it. The picture says what is foreground, not how far away it is, so
//! each foreground pixel is taken to belong to something standing on the
//! floor straight below it in the picture: going down its column, the
//! last foreground pixel before the floor is where it touches the floor
//! (its *contact*), which the calibration maps to a floor point and so a
//! distance from the camera. The drawing at that pixel is hidden when
//!
//! * the thing is nearer the camera than the drawing (horizontal
//!   distances from the camera's foot point) by more than its depth
//!   ([`STANDING_DEPTH_SHARE`] of a standing thing's height: 10 cm), and
//! * the pixel is not above the picture of a standing thing's top at the
//!   contact (a standing thing's height ([`DEFAULT_STANDING_HEIGHT_M`], or the session's): a
//!   foreground pixel that would have to be taller than that to stand at
//!   its contact is something else (a ball in the air, a blob whose foot
//!   the mask missed) and hides nothing.
//!
//! The drawing's own distance at a pixel comes from samples along it made
//! while drawing ([`DepthSample`]): the nearest sample's.
//!
//! Limits: something whose foot is hidden by something else, or cut by
//! the picture's bottom edge (then taken to stand at the edge), and
//! things leaning over are judged as if standing at their lowest visible
//! pixel; a floor mask that misses part of a robot misses it here too.

use crate::calib::Calibration;
use crate::geom::vec3::Vec3;
use crate::geom::{PixelPoint, Vec2};
use crate::image::{FLOOR, MaskImage};

use super::Overlay;

/// The height of whatever stands on the floor, when the session gives none:
/// 2 m, taller than any robot on the field and most people.
pub const DEFAULT_STANDING_HEIGHT_M: f64 = 2.0;

/// How deep a standing thing is taken to be behind where it touches the
/// floor, as a share of its height: a drawing nearer than its contact plus
/// this much is in front of it. The contact is the thing's nearest point
/// on the floor in that column of the picture, and a drawing right beside
/// a robot (a ball bouncing at its feet) is often farther than that point
/// yet in front of the robot's surface where the pixel's ray meets it.
pub const STANDING_DEPTH_SHARE: f64 = 0.05;

/// Side of the grid cells samples are bucketed in, in pixels.
const CELL: usize = 16;

/// A point of a raised drawing in the picture and its horizontal distance
/// from the camera's foot point (world units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthSample {
    pub at: PixelPoint,
    pub distance: f64,
}

/// The horizontal distance of a point in space from the camera's centre.
pub fn ground_distance(eye: Vec3, p: Vec3) -> f64 {
    (p[0] - eye[0]).hypot(p[1] - eye[1])
}

/// Where a raised layer shows: `out` is made the frame's size and set,
/// at every pixel the layer `overlay` covers, to [`FLOOR`] where the
/// drawing shows and 0 where something in front hides it (other pixels
/// are left as they were: the layer does not show there). `floor` is the
/// floor mask ([`FLOOR`] = floor); `standing` the height of standing
/// things in world units. Without a full camera or samples, the layer
/// shows where the floor mask does.
pub fn raised_visibility(
    floor: &MaskImage,
    overlay: &Overlay,
    samples: &[DepthSample],
    calib: &Calibration,
    standing: f64,
    out: &mut MaskImage,
) {
    let (h, w) = floor.dim();
    if out.dim() != (h, w) {
        *out = MaskImage::zeros((h, w));
    }
    let mut grid = Grid::new(samples, w, h);
    let Some(eye) = calib.camera_center() else {
        // Not a full camera: raised drawings were not drawn.
        return;
    };
    // Per column, the foreground run last looked down and what stands
    // there: every pixel of a run has the same contact.
    let mut runs: Vec<Option<Stand>> = vec![None; w];
    overlay.for_each_span(|y, x0, x1| {
        for x in x0..x1.min(w) {
            if overlay.pixel(x, y)[3] == 0 {
                continue;
            }
            let shows = floor[[y, x]] == FLOOR || {
                let stand = match runs[x] {
                    Some(s) if s.top <= y && y <= s.bottom => s,
                    _ => {
                        let s = Stand::below(floor, calib, eye, x, y, standing);
                        runs[x] = Some(s);
                        s
                    }
                };
                // Hidden when it stands nearer by more than its depth and
                // reaches up to this pixel.
                let could_hide = stand.near.is_finite() && y as f64 >= stand.top_px;
                !(could_hide
                    && grid
                        .nearest(Vec2::new(x as f64, y as f64))
                        .is_some_and(|d| stand.near + STANDING_DEPTH_SHARE * standing < d))
            };
            out[[y, x]] = if shows { FLOOR } else { 0 };
        }
    });
}

/// What stands at a foreground pixel, judged from the run of foreground
/// below it in its column (see the module docs).
#[derive(Clone, Copy, Debug)]
struct Stand {
    /// The rows of the run this was found for (`top` the first looked at).
    top: usize,
    bottom: usize,
    /// Horizontal distance of its contact from the camera; infinite when
    /// the contact is not on the floor (above the horizon).
    near: f64,
    /// The picture row of a standing thing's top at the contact: pixels
    /// above it are not of something standing there.
    top_px: f64,
}

impl Stand {
    fn below(floor: &MaskImage, calib: &Calibration, eye: Vec3, x: usize, y: usize, standing: f64) -> Stand {
        let h = floor.dim().0;
        // The last foreground pixel going down the column.
        let mut c = y;
        while c + 1 < h && floor[[c + 1, x]] != FLOOR {
            c += 1;
        }
        let none = Stand {
            top: y,
            bottom: c,
            near: f64::INFINITY,
            top_px: f64::INFINITY,
        };
        let Some(foot) = calib.unproject(Vec2::new(x as f64, c as f64 + 0.5)) else {
            return none;
        };
        // Where the top of something `standing` tall there is seen; a
        // top above the picture (or behind the camera) leaves every pixel
        // of the column below it.
        let top_px = calib
            .project3([foot.x, foot.y, standing])
            .map_or(f64::NEG_INFINITY, |p| p.y);
        Stand {
            near: (foot.x - eye[0]).hypot(foot.y - eye[1]),
            top_px,
            ..none
        }
    }
}

/// Samples bucketed by grid cell, for nearest-sample queries: each cell
/// keeps, once asked, the samples that can be nearest to any of its
/// pixels (those within the nearest one's distance from its centre plus
/// its diagonal), so a query looks at a few samples only.
struct Grid<'a> {
    samples: &'a [DepthSample],
    cols: usize,
    rows: usize,
    cells: Vec<Vec<u32>>,
    candidates: Vec<Option<Vec<u32>>>,
}

impl<'a> Grid<'a> {
    fn new(samples: &'a [DepthSample], w: usize, h: usize) -> Grid<'a> {
        let (cols, rows) = (w.div_ceil(CELL).max(1), h.div_ceil(CELL).max(1));
        let mut cells = vec![Vec::new(); cols * rows];
        for (i, s) in samples.iter().enumerate() {
            if let Some(k) = Self::cell(s.at, cols, rows) {
                cells[k].push(i as u32);
            }
        }
        Grid {
            samples,
            cols,
            rows,
            cells,
            candidates: vec![None; cols * rows],
        }
    }

    /// The cell of a point, points outside clamped to the border cells.
    fn cell(p: Vec2, cols: usize, rows: usize) -> Option<usize> {
        if !p.is_finite() {
            return None;
        }
        let cx = (p.x.max(0.0) as usize / CELL).min(cols - 1);
        let cy = (p.y.max(0.0) as usize / CELL).min(rows - 1);
        Some(cy * cols + cx)
    }

    /// The distance of the sample nearest `p`.
    fn nearest(&mut self, p: Vec2) -> Option<f64> {
        let k = Self::cell(p, self.cols, self.rows)?;
        if self.candidates[k].is_none() {
            self.candidates[k] = Some(self.gather(k));
        }
        let samples = self.samples;
        self.candidates[k]
            .as_ref()?
            .iter()
            .map(|&i| &samples[i as usize])
            .fold(None, |best: Option<(f64, f64)>, s| {
                let d = (s.at - p).length();
                match best {
                    Some((b, _)) if b <= d => best,
                    _ => Some((d, s.distance)),
                }
            })
            .map(|(_, d)| d)
    }

    /// The samples that can be nearest to a pixel of cell `k`.
    fn gather(&self, k: usize) -> Vec<u32> {
        let (cx, cy) = ((k % self.cols) as isize, (k / self.cols) as isize);
        let centre = Vec2::new((cx as f64 + 0.5) * CELL as f64, (cy as f64 + 0.5) * CELL as f64);
        let diag = CELL as f64 * std::f64::consts::SQRT_2;
        let ring_cells = |ring: isize| {
            let mut out = Vec::new();
            for gy in cy - ring..=cy + ring {
                for gx in cx - ring..=cx + ring {
                    let edge = (gy - cy).abs() == ring || (gx - cx).abs() == ring;
                    if edge && gx >= 0 && gy >= 0 && gx < self.cols as isize && gy < self.rows as isize {
                        out.push(gy as usize * self.cols + gx as usize);
                    }
                }
            }
            out
        };
        // The nearest sample to the centre: rings outwards until one is
        // found, then one more ring (a nearer one may lie there).
        let most = self.cols.max(self.rows) as isize;
        let mut nearest = f64::INFINITY;
        let mut found_at = None;
        for ring in 0..=most {
            if found_at.is_some_and(|f: isize| ring > f + 1) {
                break;
            }
            for c in ring_cells(ring) {
                for &i in &self.cells[c] {
                    nearest = nearest.min((self.samples[i as usize].at - centre).length());
                    found_at.get_or_insert(ring);
                }
            }
        }
        if found_at.is_none() {
            return Vec::new();
        }
        // Every sample within reach, from the cells that can hold one.
        let reach = nearest + diag;
        let span = (reach / CELL as f64).ceil() as isize + 1;
        let mut out = Vec::new();
        for ring in 0..=span.min(most) {
            for c in ring_cells(ring) {
                for &i in &self.cells[c] {
                    if (self.samples[i as usize].at - centre).length() <= reach {
                        out.push(i);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera::look_at;
    use crate::log::Rgba;

    #[test]
    fn a_drawing_behind_a_standing_thing_is_hidden_and_one_in_front_is_not() {
        // A camera 3 m up, 6 m behind the origin, world in millimetres.
        let k = [[500.0, 0.0, 160.0], [0.0, 500.0, 120.0], [0.0, 0.0, 1.0]];
        let (r, t) = look_at([0.0, -6000.0, 3000.0], [0.0, 0.0, 0.0]).unwrap();
        let calib = Calibration::from_camera(&k, &[], &r, t)
            .unwrap()
            .with_image_size(320, 240);
        let eye = calib.camera_center().unwrap();
        // A robot 300 mm tall standing at the origin: foreground from its
        // foot up to its top.
        let foot = calib.project3([0.0, 0.0, 0.0]).unwrap();
        let top = calib.project3([0.0, 0.0, 300.0]).unwrap();
        let mut floor = MaskImage::from_elem((240, 320), FLOOR);
        let (x, y0, y1) = (
            foot.x.round() as usize,
            top.y.round() as usize,
            foot.y.round() as usize,
        );
        for y in y0..=y1 {
            for xx in x - 3..=x + 3 {
                floor[[y, xx]] = 0;
            }
        }
        let mut ov = Overlay::new(320, 240);
        let ym = (y0 + y1) / 2;
        ov.blend_span(ym, x - 1, &[255, 255, 255], Rgba::from_rgb(0xff0000));
        let at = Vec2::new(x as f64, ym as f64);
        let mut out = MaskImage::zeros((240, 320));
        // Drawn 2 m behind the robot: hidden.
        let behind = [DepthSample {
            at,
            distance: ground_distance(eye, [0.0, 2000.0, 0.0]),
        }];
        raised_visibility(&floor, &ov, &behind, &calib, 2000.0, &mut out);
        assert_eq!(out[[ym, x]], 0);
        // Drawn in front of it (a ball in the air between robot and camera): shows.
        let front = [DepthSample {
            at,
            distance: ground_distance(eye, [0.0, -1500.0, 0.0]),
        }];
        raised_visibility(&floor, &ov, &front, &calib, 2000.0, &mut out);
        assert_eq!(out[[ym, x]], FLOOR);
        // A standing height below the ray's height there: not a standing thing.
        raised_visibility(&floor, &ov, &behind, &calib, 50.0, &mut out);
        assert_eq!(out[[ym, x]], FLOOR);
    }

    #[test]
    fn nearest_sample_is_found_across_cells() {
        let samples = [
            DepthSample {
                at: Vec2::new(5.0, 5.0),
                distance: 1.0,
            },
            DepthSample {
                at: Vec2::new(200.0, 150.0),
                distance: 2.0,
            },
        ];
        let mut g = Grid::new(&samples, 320, 240);
        assert_eq!(g.nearest(Vec2::new(10.0, 10.0)), Some(1.0));
        assert_eq!(g.nearest(Vec2::new(190.0, 140.0)), Some(2.0));
        assert_eq!(g.nearest(Vec2::new(300.0, 230.0)), Some(2.0));
        assert_eq!(Grid::new(&[], 320, 240).nearest(Vec2::new(1.0, 1.0)), None);
    }

    proptest::proptest! {
        /// The grid finds the nearest sample's distance, as a search of
        /// every sample does.
        #[test]
        fn nearest_is_the_brute_force_nearest(
            pts in proptest::collection::vec((0.0f64..320.0, 0.0f64..240.0, 0.0f64..1e4), 1..60),
            queries in proptest::collection::vec((0.0f64..320.0, 0.0f64..240.0), 1..40),
        ) {
            let samples: Vec<DepthSample> = pts
                .iter()
                .map(|&(x, y, d)| DepthSample { at: Vec2::new(x, y), distance: d })
                .collect();
            let mut g = Grid::new(&samples, 320, 240);
            for (x, y) in queries {
                let p = Vec2::new(x, y);
                let best = samples
                    .iter()
                    .map(|s| (s.at - p).length())
                    .fold(f64::INFINITY, f64::min);
                let got = g.nearest(p).unwrap();
                // The distance of a sample at the nearest range (ties may pick either).
                let ok = samples.iter().any(|s| s.distance == got && ((s.at - p).length() - best).abs() < 1e-9);
                proptest::prop_assert!(ok, "{p:?}: got {got}");
            }
        }
    }
}
