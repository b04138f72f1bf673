//! Points and shapes above the floor through a full camera (issue 33).
//!
//! A floor calibration maps `(x, y)` by the homography `H`; a full camera
//! adds the projection matrix's column for heights, so that the ideal
//! (undistorted) pixel of a point `(x, y, z)` is `H·(x, y, 1) + z·c`,
//! dehomogenised, and the lens distorts it as it does floor points. For a
//! camera `K [R | t]` that column is `K·r₃`; the floor part is unchanged, so
//! every floor drawing maps exactly as before.
//!
//! Clipping works as on the floor, one dimension up: each half-plane `l`
//! of the mappable region of the undistorted image (the clip box, w > 0,
//! the lens's valid polygon; [`Calibration::image_lines`]) is the
//! half-space `(Pᵀ l)·(x, y, z, 1) ≥ 0` of the world, so a segment in space
//! is cut to its visible interval before it is projected (the near plane
//! is `w > 0`: nothing behind the camera wraps round). A visible straight
//! segment is straight in the ideal image, and with a lens it is sampled
//! adaptively like a floor segment, to the same pixel tolerance.
//!
//! Circles in space are sampled as polygons fine enough for the
//! tolerance at their projected size; a sphere is drawn as its outline
//! (the circle where the cone from the camera's centre touches it), and
//! the vertical cylinder and the box as the outline of their visible part:
//! the convex hull of their projected edges.

use super::calibration::Calibration;
use super::camera::CameraTable;
use super::clip;
use super::error::CalibError;
use crate::geom::vec3::{Vec3, add, cross, dot, normalized, scale, sub};
use crate::geom::{PixelPoint, Vec2};

/// Smallest homogeneous w treated as in front of the camera.
const W_EPS: f64 = 1e-9;

/// At most this many points are added by curve subdivision in one call.
const MAX_SAMPLES: usize = 16_384;

/// Sides of a circle in space: at least this many, at most [`MAX_SIDES`].
const MIN_SIDES: usize = 16;
const MAX_SIDES: usize = 2048;

/// The message for a height given to a calibration that knows only the floor.
pub const FLOOR_ONLY: &str = "this calibration knows only the floor: fit a full camera to points on it and above it \
                              (calib solve --model pinhole, heights in a z column) or give a [camera]";

/// What a full camera knows beyond the floor.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Space {
    /// The projection matrix's column for heights: the undistorted pixel
    /// of `(x, y, z)` is `h·(x, y, 1) + z·column`, dehomogenised.
    pub(super) column: [f64; 3],
    /// The camera it was built from, as its file gives it
    /// ([`super::camera`]); saved instead of the homography, lens and
    /// column it makes. `None` for any other full camera.
    pub(super) camera: Option<CameraTable>,
}

/// A world half-space `a·(x, y, z, 1) ≥ 0`.
type HalfSpace = [f64; 4];

impl Calibration {
    /// The same calibration knowing the camera in space: `col` is the
    /// projection matrix's column for heights, scaled as the homography is
    /// (see the module docs). Fails on a column that is not finite, or one
    /// that makes heights map to the floor's own picture (the projection
    /// would then be singular).
    pub fn with_height_column(mut self, col: [f64; 3]) -> Result<Self, CalibError> {
        if !col.iter().all(|v| v.is_finite()) {
            return Err(CalibError::InvalidCamera(format!(
                "the height column {col:?} is not finite"
            )));
        }
        // A camera it was built from no longer says what it maps.
        self.space = Some(Box::new(Space {
            column: col,
            camera: None,
        }));
        if self.camera_center().is_none() {
            return Err(CalibError::InvalidCamera(format!(
                "the height column {col:?} gives no camera centre (the projection is singular)"
            )));
        }
        Ok(self)
    }

    /// A top-down calibration (an affine homography: no perspective on the
    /// floor, as a map or a rendered match's picture) made a full camera: a
    /// pinhole `height` world units straight above the floor point shown at
    /// pixel `centre`. The floor maps exactly as before; a point above it is
    /// seen farther from `centre` the higher it is, as from such a camera.
    pub fn seen_from_above(self, centre: PixelPoint, height: f64) -> Result<Self, CalibError> {
        let h = self.h;
        let affine = h[2][0] == 0.0 && h[2][1] == 0.0 && h[2][2] != 0.0;
        if !(affine && height.is_finite() && height > 0.0) {
            return Err(CalibError::InvalidCamera(format!(
                "a camera straight above needs a top-down homography and a positive height (got {height})"
            )));
        }
        // (u, v, w) of a point at height z: the floor's, less z/height of
        // the centre's, with w = (1 − z/height)·h₃₃.
        let k = h[2][2] / height;
        self.with_height_column([-centre.x * k, -centre.y * k, -k])
    }

    /// The projection matrix's column for heights, when this calibration
    /// knows the camera in space.
    pub fn height_column(&self) -> Option<[f64; 3]> {
        self.space.as_ref().map(|s| s.column)
    }

    /// The camera this calibration was built from, as its file gives it
    /// (`None` unless it was built from a camera: [`Self::from_camera`],
    /// a `[camera]` table, `calib solve --model pinhole`). See
    /// [`Self::camera`] for any full camera.
    pub fn camera_table(&self) -> Option<&CameraTable> {
        self.space.as_ref()?.camera.as_ref()
    }

    /// Whether points above the floor can be mapped ([`Self::project3`]).
    pub fn is_full_camera(&self) -> bool {
        self.space.is_some()
    }

    /// The homogeneous ideal pixel of a point in space; `None` without a
    /// full camera.
    fn homogeneous3(&self, p: Vec3) -> Option<Vec3> {
        let c = self.height_column()?;
        let h = &self.h;
        Some(std::array::from_fn(|i| {
            h[i][0] * p[0] + h[i][1] * p[1] + h[i][2] + p[2] * c[i]
        }))
    }

    /// A point in space → pixel of the ideal pinhole image; `None` behind
    /// the camera, not finite, or without a full camera.
    pub fn project3_undistorted(&self, p: Vec3) -> Option<PixelPoint> {
        let [x, y, w] = self.homogeneous3(p)?;
        (w > W_EPS && x.is_finite() && y.is_finite()).then(|| Vec2::new(x / w, y / w))
    }

    /// A point in space (x, y as on the floor, z up, world units) → pixel;
    /// `None` behind the camera, beyond the lens's valid region, not
    /// finite, or without a full camera ([`Self::is_full_camera`]). A point
    /// with `z = 0` maps exactly as [`Self::project`] maps it.
    pub fn project3(&self, p: Vec3) -> Option<PixelPoint> {
        let u = self.project3_undistorted(p)?;
        self.distort_pixel(u)
    }

    /// The camera's centre in the world: the point every ray passes
    /// through (`None` without a full camera).
    pub fn camera_center(&self) -> Option<Vec3> {
        let c = self.height_column()?;
        let h = &self.h;
        // H·(x, y, 1) + z·c = 0 ⇔ [h₁ h₂ c]·(x, y, z) = −h₃.
        let m = [
            [h[0][0], h[0][1], c[0]],
            [h[1][0], h[1][1], c[1]],
            [h[2][0], h[2][1], c[2]],
        ];
        let inv = crate::geom::mat3::invert(&m)?;
        let rhs = [-h[0][2], -h[1][2], -h[2][2]];
        let x: Vec3 = std::array::from_fn(|i| (0..3).map(|j| inv[i][j] * rhs[j]).sum());
        x.iter().all(|v| v.is_finite()).then_some(x)
    }

    /// The direction of the ray through pixel `px` (from the camera's
    /// centre, forwards; not normalised), or `None` where the lens model
    /// cannot have produced the pixel or without a full camera.
    pub fn ray3(&self, px: PixelPoint) -> Option<Vec3> {
        let c = self.height_column()?;
        let u = self.undistort_pixel(px)?;
        let h = &self.h;
        let m = [
            [h[0][0], h[0][1], c[0]],
            [h[1][0], h[1][1], c[1]],
            [h[2][0], h[2][1], c[2]],
        ];
        let inv = crate::geom::mat3::invert(&m)?;
        let v = [u.x, u.y, 1.0];
        let d: Vec3 = std::array::from_fn(|i| (0..3).map(|j| inv[i][j] * v[j]).sum());
        d.iter().all(|x| x.is_finite()).then_some(d)
    }

    /// Pixels per world unit at a point in space, across the line of sight
    /// (for sizes and widths in world units).
    pub fn pixels_per_unit3(&self, p: Vec3) -> Option<f64> {
        let c = self.camera_center()?;
        let sight = normalized(sub(p, c))?;
        let side = normalized(cross(sight, [0.0, 0.0, 1.0]))
            .or_else(|| normalized(cross(sight, [1.0, 0.0, 0.0])))?;
        let up = cross(side, sight);
        let eps = 1e-3 * (1.0 + dot(p, p).sqrt());
        let o = self.project3(p)?;
        let a = (self.project3(add(p, scale(side, eps)))? - o).length() / eps;
        let b = (self.project3(add(p, scale(up, eps)))? - o).length() / eps;
        Some((a * b).sqrt())
    }

    /// The mappable region as world half-spaces (see the module docs).
    fn half_spaces(&self) -> Vec<HalfSpace> {
        let Some(c) = self.height_column() else {
            return Vec::new();
        };
        let h = &self.h;
        self.image_lines()
            .iter()
            .filter_map(|l| {
                let col = |j: usize| l[0] * h[0][j] + l[1] * h[1][j] + l[2] * h[2][j];
                let a = [col(0), col(1), l[0] * c[0] + l[1] * c[1] + l[2] * c[2], col(2)];
                let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
                (a.iter().all(|v| v.is_finite()) && n > 0.0).then(|| a.map(|v| v / n))
            })
            .collect()
    }

    /// Maps a polyline in space into image polylines, appended to `out`,
    /// as [`Self::project_polyline`] maps a floor polyline: parts behind
    /// the camera or far outside the image are cut away, straight pieces
    /// are sampled to `tol_px` under distortion, a closed polyline wholly in
    /// view comes out as one ring whose last point repeats its first.
    /// Without a full camera nothing comes out: check
    /// [`Self::is_full_camera`] first.
    pub fn project_path3(&self, pts: &[Vec3], closed: bool, tol_px: f64, out: &mut Vec<Vec<PixelPoint>>) {
        let n = pts.len();
        if n == 0 || !self.is_full_camera() {
            return;
        }
        if n == 1 {
            if let Some(p) = self.project3(pts[0]) {
                out.push(vec![p]);
            }
            return;
        }
        let spaces = self.half_spaces();
        let tol = sanitize_tol(tol_px);
        let mut budget = MAX_SAMPLES;
        let segs = if closed && n > 2 { n } else { n - 1 };
        let start = out.len();
        let mut cur: Vec<Vec2> = Vec::new();
        // Whether the polyline went round unbroken (then it is one ring).
        let mut whole = true;
        for i in 0..segs {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            let Some((t0, t1)) = clip_segment3(&spaces, a, b) else {
                whole = false;
                clip::flush(&mut cur, out);
                continue;
            };
            let lerp = |t: f64| add(a, scale(sub(b, a), t));
            let continuing = t0 <= 0.0 && !cur.is_empty();
            if !continuing {
                whole &= cur.is_empty() && i == 0;
                clip::flush(&mut cur, out);
            }
            let before = out.len();
            self.sample_segment3(lerp(t0), lerp(t1), !continuing, tol, &mut budget, &mut cur, out);
            if out.len() > before || t1 < 1.0 {
                whole = false;
            }
            if t1 < 1.0 {
                clip::flush(&mut cur, out);
            }
        }
        clip::flush(&mut cur, out);
        if closed && n > 2 && !whole && out.len() > start + 1 {
            // The piece through the first vertex continues the last piece
            // when the cut was elsewhere: join them, as on the floor.
            let first = &out[start];
            let last = &out[out.len() - 1];
            if let (Some(&f0), Some(&l1)) = (first.first(), last.last())
                && (f0 - l1).length() < 1e-9
            {
                let first = out.remove(start);
                if let Some(l) = out.last_mut() {
                    l.extend(first.into_iter().skip(1));
                }
            }
        }
    }

    /// Samples the visible segment `a → b` in space onto `cur`.
    #[allow(clippy::too_many_arguments)]
    fn sample_segment3(
        &self,
        a: Vec3,
        b: Vec3,
        include_first: bool,
        tol: f64,
        budget: &mut usize,
        cur: &mut Vec<Vec2>,
        out: &mut Vec<Vec<Vec2>>,
    ) {
        let (ua, ub) = (self.project3_undistorted(a), self.project3_undistorted(b));
        self.sample_undistorted(ua, ub, include_first, tol, budget, cur, out);
    }

    /// The points of a circle in space (`radius` around `center`, in the
    /// plane with normal `normal`) as a closed polygon fine enough that its
    /// picture stays within `tol_px` of the circle's. Empty when the
    /// circle cannot be placed (zero normal, no full camera).
    pub fn circle_points3(&self, center: Vec3, radius: f64, normal: Vec3, tol_px: f64) -> Vec<Vec3> {
        let (Some(n), true) = (normalized(normal), self.is_full_camera()) else {
            return Vec::new();
        };
        let Some(u) = normalized(cross(n, [0.0, 0.0, 1.0])).or_else(|| normalized(cross(n, [1.0, 0.0, 0.0])))
        else {
            return Vec::new();
        };
        let v = cross(n, u);
        let at = |a: f64| {
            add(
                center,
                add(scale(u, radius * a.cos()), scale(v, radius * a.sin())),
            )
        };
        // Its size in pixels, from eight of its points; a circle partly
        // behind the camera gets many sides (clipping cuts what is not seen).
        let r_px = self.project3_undistorted(center).and_then(|o| {
            (0..8)
                .map(|k| {
                    self.project3_undistorted(at(std::f64::consts::FRAC_PI_4 * k as f64))
                        .map(|q| (q - o).length())
                })
                .try_fold(0.0f64, |m, d| d.map(|d| m.max(d)))
        });
        let tol = 0.5 * sanitize_tol(tol_px);
        let sides = match r_px {
            None => MAX_SIDES / 4,
            Some(r) if r <= tol => MIN_SIDES,
            Some(r) => {
                let step = 2.0 * (1.0 - tol / r).clamp(-1.0, 1.0).acos();
                ((std::f64::consts::TAU / step.max(1e-9)).ceil() as usize).clamp(MIN_SIDES, MAX_SIDES)
            }
        };
        (0..sides)
            .map(|k| at(std::f64::consts::TAU * k as f64 / sides as f64))
            .collect()
    }

    /// The outline of a sphere's picture: the circle where the cone from
    /// the camera's centre touches it, as points in space. Empty when the
    /// camera is inside the ball or the calibration knows only the floor.
    pub fn sphere_outline3(&self, center: Vec3, radius: f64, tol_px: f64) -> Vec<Vec3> {
        let Some(eye) = self.camera_center() else {
            return Vec::new();
        };
        let to_eye = sub(eye, center);
        let d = dot(to_eye, to_eye).sqrt();
        if d.is_nan() || d <= radius || radius <= 0.0 {
            return Vec::new();
        }
        let u = scale(to_eye, 1.0 / d);
        let c = add(center, scale(u, radius * radius / d));
        let r = radius * (1.0 - (radius / d).powi(2)).sqrt();
        self.circle_points3(c, r, u, tol_px)
    }

    /// The outline of the visible part of a convex solid given by its edges
    /// (pairs of points in space): the convex hull of the edges' pictures,
    /// as one closed ring (first point repeated). Empty when nothing of it
    /// is in view.
    pub fn convex_outline3(&self, edges: &[(Vec3, Vec3)], tol_px: f64) -> Vec<PixelPoint> {
        let mut pts = Vec::new();
        let mut pieces = Vec::new();
        for &(a, b) in edges {
            pieces.clear();
            self.project_path3(&[a, b], false, tol_px, &mut pieces);
            pts.extend(pieces.iter().flatten().copied());
        }
        let mut hull = convex_hull(pts);
        if hull.len() > 2 {
            hull.push(hull[0]);
        }
        hull
    }
}

/// The parameter interval `[t0, t1] ⊆ [0, 1]` of segment `a → b` inside
/// every half-space, or `None` when nothing of it is.
fn clip_segment3(spaces: &[HalfSpace], a: Vec3, b: Vec3) -> Option<(f64, f64)> {
    let eval = |s: &HalfSpace, p: Vec3| s[0] * p[0] + s[1] * p[1] + s[2] * p[2] + s[3];
    clip::clip_interval(spaces.iter().map(|s| (eval(s, a), eval(s, b))))
}

/// The convex hull of `pts`, counter-clockwise in pixel coordinates
/// (Andrew's monotone chain); fewer than three distinct points come back
/// as they are, deduplicated.
pub(crate) fn convex_hull(mut pts: Vec<Vec2>) -> Vec<Vec2> {
    pts.retain(|p| p.is_finite());
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let turn = |o: Vec2, a: Vec2, b: Vec2| (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
    let mut hull: Vec<Vec2> = Vec::with_capacity(2 * pts.len());
    for &p in &pts {
        while hull.len() >= 2 && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    let lower = hull.len() + 1;
    for &p in pts.iter().rev().skip(1) {
        while hull.len() >= lower && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
            hull.pop();
        }
        hull.push(p);
    }
    hull.pop();
    hull
}

/// A usable tolerance, as for floor shapes.
fn sanitize_tol(tol_px: f64) -> f64 {
    if tol_px.is_finite() && tol_px > 0.0 {
        tol_px.max(0.01)
    } else {
        0.5
    }
}

#[cfg(test)]
mod tests;
