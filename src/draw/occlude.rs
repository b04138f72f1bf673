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
//! * the pixel's ray passes the thing's contact no higher than a standing
//!   thing's height ([`DEFAULT_STANDING_HEIGHT_M`], or the session's): a
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
const CELL: usize = 32;

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
    let grid = Grid::new(samples, w, h);
    let eye = calib.camera_center();
    overlay.for_each_span(|y, x0, x1| {
        for x in x0..x1.min(w) {
            if overlay.pixel(x, y)[3] == 0 {
                continue;
            }
            let on_floor = floor[[y, x]] == FLOOR;
            let shows = on_floor
                || match (eye, grid.nearest(Vec2::new(x as f64, y as f64))) {
                    (Some(eye), Some(d)) => !hidden(floor, calib, eye, x, y, d, standing),
                    _ => false,
                };
            out[[y, x]] = if shows { FLOOR } else { 0 };
        }
    });
}

/// Whether foreground pixel `(x, y)` is something standing in front of a
/// drawing `distance` away (see the module docs).
fn hidden(
    floor: &MaskImage,
    calib: &Calibration,
    eye: Vec3,
    x: usize,
    y: usize,
    distance: f64,
    standing: f64,
) -> bool {
    let h = floor.dim().0;
    // The last foreground pixel going down the column.
    let mut c = y;
    while c + 1 < h && floor[[c + 1, x]] != FLOOR {
        c += 1;
    }
    let Some(foot) = calib.unproject(Vec2::new(x as f64, c as f64 + 0.5)) else {
        // Its foot is above the horizon: it is not standing on this floor.
        return false;
    };
    let near = (foot.x - eye[0]).hypot(foot.y - eye[1]);
    if near + STANDING_DEPTH_SHARE * standing >= distance {
        return false;
    }
    // The height at which the pixel's ray passes the foot.
    let Some(dir) = calib.ray3(Vec2::new(x as f64, y as f64)) else {
        return false;
    };
    let across = dir[0].hypot(dir[1]);
    if across <= 1e-12 {
        // Straight down: the thing is right under the camera, in front.
        return true;
    }
    let z = eye[2] + dir[2] * near / across;
    z <= standing
}

/// Samples bucketed by grid cell, for nearest-sample queries.
struct Grid<'a> {
    samples: &'a [DepthSample],
    cols: usize,
    rows: usize,
    cells: Vec<Vec<u32>>,
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
    fn nearest(&self, p: Vec2) -> Option<f64> {
        let k = Self::cell(p, self.cols, self.rows)?;
        let (cx, cy) = ((k % self.cols) as isize, (k / self.cols) as isize);
        let mut best: Option<(f64, f64)> = None;
        // Rings of cells outwards; once a sample is found, one more ring
        // settles which is nearest.
        let most = self.cols.max(self.rows) as isize;
        let mut stop_at = most;
        for ring in 0..=most {
            if ring > stop_at {
                break;
            }
            for gy in cy - ring..=cy + ring {
                for gx in cx - ring..=cx + ring {
                    let edge = (gy - cy).abs() == ring || (gx - cx).abs() == ring;
                    if !edge || gx < 0 || gy < 0 || gx >= self.cols as isize || gy >= self.rows as isize {
                        continue;
                    }
                    for &i in &self.cells[gy as usize * self.cols + gx as usize] {
                        let s = &self.samples[i as usize];
                        let d2 = (s.at - p).length();
                        if best.is_none_or(|(b, _)| d2 < b) {
                            best = Some((d2, s.distance));
                        }
                    }
                }
            }
            if best.is_some() && stop_at == most {
                stop_at = ring + 1;
            }
        }
        best.map(|(_, d)| d)
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
        let g = Grid::new(&samples, 320, 240);
        assert_eq!(g.nearest(Vec2::new(10.0, 10.0)), Some(1.0));
        assert_eq!(g.nearest(Vec2::new(190.0, 140.0)), Some(2.0));
        assert_eq!(g.nearest(Vec2::new(300.0, 230.0)), Some(2.0));
        assert_eq!(Grid::new(&[], 320, 240).nearest(Vec2::new(1.0, 1.0)), None);
    }
}
