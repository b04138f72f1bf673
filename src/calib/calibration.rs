//! The [`Calibration`] itself: world ↔ image mapping of the floor plane
//! (a homography, then lens distortion), projection of points and shapes
//! with clipping and adaptive sampling. Its file format is `file.rs`'s.
//!
//! What a calibration was fitted in and from, and its methods about that,
//! are [`super::unit`]'s: the two files name each other.

use serde::{Deserialize, Serialize};

use crate::geom::Vec2;
use crate::geom::mat3::{apply, invert};
use crate::geom::{PixelPoint, WorldPoint};

use super::clip::{self, HalfPlane};
use super::error::CalibError;
use super::lens::{Distortion, Lens};
use super::unit;
use crate::geom::Mat3;

/// Smallest homogeneous w treated as in front of the camera.
const W_EPS: f64 = 1e-9;

/// Without an image size, shapes are clipped to ±this many pixels.
pub const DEFAULT_CLIP_LIMIT_PX: f64 = 1e6;
/// With an image size, shapes are clipped to the image grown by this
/// fraction of its larger side on every side.
pub const IMAGE_CLIP_MARGIN: f64 = 0.5;
/// At most this many points are added by curve subdivision in one
/// `project_*` call; beyond it pieces are left as they are.
pub const MAX_SAMPLES_PER_CALL: usize = 16_384;
/// Sides of the polygon inscribed in the lens's valid circle.
const LENS_CLIP_SIDES: usize = 48;

/// World ↔ image mapping of the floor plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "super::file::CalibrationFile",
    into = "super::file::CalibrationFile"
)]
pub struct Calibration {
    pub(super) h: Mat3,
    pub(super) inv: Mat3,
    pub(super) lens: Option<Box<Lens>>,
    /// What a full camera knows of space ([`super::space`]): its column
    /// for heights and the camera it was built from; boxed, as most
    /// calibrations know only the floor. `None`: the floor only.
    pub(super) space: Option<Box<super::space::Space>>,
    pub(super) image_size: Option<[u32; 2]>,
    /// The mappable region as world half-planes (derived).
    pub(super) clip: Vec<HalfPlane>,
    /// What it was fitted in and from (see [`unit`]); boxed, as it is
    /// rarely more than empty.
    pub(super) origin: Box<unit::Origin>,
}

// Every export worker maps through the same calibration.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Calibration>();
};

impl Calibration {
    /// A calibration from a world → pixel homography (no distortion).
    ///
    /// The sign matters: world points in front of the camera must map with
    /// homogeneous w > 0.
    pub fn from_homography(h: Mat3) -> Result<Self, CalibError> {
        Calibration::from_parts(h, None)
    }

    /// The identity: world coordinates are the picture's pixels, what
    /// shapes in the picture's pixels are drawn through
    /// ([`crate::log::Shape::Picture`]).
    pub fn pixels() -> Self {
        let mut c = Calibration {
            h: crate::geom::mat3::IDENTITY,
            inv: crate::geom::mat3::IDENTITY,
            lens: None,
            space: None,
            image_size: None,
            clip: Vec::new(),
            origin: Box::default(),
        };
        c.clip = c.clip_planes();
        c
    }

    /// A calibration from a world → undistorted-pixel homography and lens
    /// distortion applied after it. An all-zero distortion is dropped.
    pub fn from_parts(h: Mat3, distortion: Option<Distortion>) -> Result<Self, CalibError> {
        let inv = invert(&h).ok_or_else(|| CalibError::Singular(format!("{h:?}")))?;
        let lens = match distortion {
            Some(d) if !d.is_identity() => Some(Box::new(Lens::new(d)?)),
            _ => None,
        };
        let mut c = Calibration {
            h,
            inv,
            lens,
            space: None,
            image_size: None,
            clip: Vec::new(),
            origin: Box::default(),
        };
        c.clip = c.clip_planes();
        Ok(c)
    }

    /// The same calibration for an image of `width × height` pixels: shapes
    /// are clipped to the image grown by [`IMAGE_CLIP_MARGIN`] instead of
    /// ±[`DEFAULT_CLIP_LIMIT_PX`]. Zero sizes are ignored.
    pub fn with_image_size(mut self, width: u32, height: u32) -> Self {
        self.image_size = (width > 0 && height > 0).then_some([width, height]);
        self.clip = self.clip_planes();
        self
    }

    /// What to say when this calibration, made for pictures of another
    /// size, maps onto a `width × height` picture: it maps as if the
    /// picture were its size, so its drawings land in the wrong place;
    /// `None` when the sizes agree or it knows none.
    pub fn size_note(&self, width: usize, height: usize) -> Option<String> {
        let [w, h] = self.image_size?;
        ((w as usize, h as usize) != (width, height)).then(|| {
            format!(
                "the calibration is for {w}×{h} pictures but the picture is {width}×{height}: \
                 drawings land where a {w}×{h} picture would have them (calibrate for this size)"
            )
        })
    }

    /// The image size given with [`Self::with_image_size`], `[width, height]`.
    pub fn image_size(&self) -> Option<[u32; 2]> {
        self.image_size
    }

    /// The world → *undistorted* pixel homography. This is the whole
    /// mapping only when [`Self::distortion`] is `None`; map points with
    /// [`Self::project`] instead.
    pub fn homography(&self) -> &Mat3 {
        &self.h
    }

    /// The lens distortion applied after the homography, if any.
    pub fn distortion(&self) -> Option<&Distortion> {
        self.lens.as_ref().map(|l| l.distortion())
    }

    /// World point → pixel; `None` when the point is behind the camera,
    /// beyond the lens's valid region or not finite.
    pub fn project(&self, p: WorldPoint) -> Option<PixelPoint> {
        let u = self.project_undistorted(p)?;
        match &self.lens {
            None => Some(u),
            Some(l) => l.distort(u),
        }
    }

    /// World point → pixel of the ideal pinhole image (homography only);
    /// `None` behind the camera.
    pub fn project_undistorted(&self, p: WorldPoint) -> Option<PixelPoint> {
        let (x, y, w) = apply(&self.h, p);
        (w > W_EPS && x.is_finite() && y.is_finite()).then(|| Vec2::new(x / w, y / w))
    }

    /// Undistorted pixel → distorted (real) pixel; `None` outside the
    /// lens's valid region. The identity without distortion.
    pub fn distort_pixel(&self, px: PixelPoint) -> Option<PixelPoint> {
        match &self.lens {
            None => px.is_finite().then_some(px),
            Some(l) => l.distort(px),
        }
    }

    /// Real pixel → undistorted pixel; `None` where the lens model cannot
    /// have produced the pixel. The identity without distortion.
    pub fn undistort_pixel(&self, px: PixelPoint) -> Option<PixelPoint> {
        match &self.lens {
            None => px.is_finite().then_some(px),
            Some(l) => l.undistort(px),
        }
    }

    /// Pixel → world point on the floor; `None` above the horizon or where
    /// the lens model cannot have produced the pixel.
    pub fn unproject(&self, px: PixelPoint) -> Option<WorldPoint> {
        let u = self.undistort_pixel(px)?;
        // A pixel sees the floor when its ray maps back with positive w
        // through the forward matrix.
        let (x, y, w) = apply(&self.inv, u);
        if w.abs() <= W_EPS || !x.is_finite() || !y.is_finite() {
            return None;
        }
        let world = Vec2::new(x / w, y / w);
        self.project(world).map(|_| world)
    }

    /// Pixels per world unit near world point `p` (geometric mean of the
    /// local scale along x and y), for thicknesses and sizes in world units.
    pub fn pixels_per_unit(&self, p: Vec2) -> Option<f64> {
        let eps = 1e-3 * (1.0 + p.length());
        let c = self.project(p)?;
        let dx = (self.project(p + Vec2::new(eps, 0.0))? - c).length() / eps;
        let dy = (self.project(p + Vec2::new(0.0, eps))? - c).length() / eps;
        Some((dx * dy).sqrt())
    }

    /// Maps a world polyline into image polylines, appended to `out`.
    /// Parts behind the camera or far outside the image are clipped away (a
    /// polyline may come out in pieces); with distortion, straight segments
    /// are subdivided until the chord error is below `tol_px`. A closed
    /// polyline wholly in view comes out as one ring whose last point
    /// repeats its first; one cut somewhere comes out as open pieces, the
    /// piece through its first vertex kept whole. A single point comes out
    /// as a one-point polyline when it is in view.
    pub fn project_polyline(
        &self,
        pts: &[WorldPoint],
        closed: bool,
        tol_px: f64,
        out: &mut Vec<Vec<PixelPoint>>,
    ) {
        let n = pts.len();
        if n == 0 {
            return;
        }
        if n == 1 {
            if let Some(p) = self.project(pts[0]) {
                out.push(vec![p]);
            }
            return;
        }
        let tol = sanitize_tol(tol_px);
        let mut budget = MAX_SAMPLES_PER_CALL;
        let segs = if closed && n > 2 { n } else { n - 1 };
        let mut cur: Vec<Vec2> = Vec::new();
        // Whether `cur` started at vertex 0 unclipped, and where that piece went.
        let mut cur_from_first = false;
        let mut first_piece: Option<usize> = None;
        let mut ends_at_first = false;
        let mut finish = |cur: &mut Vec<Vec2>, from_first: &mut bool, out: &mut Vec<Vec<Vec2>>| {
            let before = out.len();
            clip::flush(cur, out);
            if *from_first && out.len() > before {
                first_piece = Some(before);
            }
            *from_first = false;
        };
        for i in 0..segs {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            let Some((t0, t1)) = clip::clip_segment(&self.clip, a, b) else {
                finish(&mut cur, &mut cur_from_first, out);
                continue;
            };
            let (a_cut, b_cut) = (t0 > 0.0, t1 < 1.0);
            let continuing = !a_cut && !cur.is_empty();
            if !continuing {
                finish(&mut cur, &mut cur_from_first, out);
                cur_from_first = i == 0 && !a_cut;
            }
            let before = out.len();
            self.sample_segment(
                a.lerp(b, t0),
                a.lerp(b, t1),
                !continuing,
                tol,
                &mut budget,
                &mut cur,
                out,
            );
            if out.len() > before {
                // A sample failed and split the piece: it no longer starts at vertex 0.
                cur_from_first = false;
            }
            if b_cut {
                finish(&mut cur, &mut cur_from_first, out);
            } else if i == segs - 1 && closed && n > 2 {
                ends_at_first = true;
            }
        }
        let last_before = out.len();
        finish(&mut cur, &mut cur_from_first, out);
        let last_piece = (out.len() > last_before).then_some(last_before);
        if let (true, Some(fi), Some(li)) = (ends_at_first, first_piece, last_piece)
            && fi != li
        {
            let first = out.remove(fi);
            out[li - 1].extend(first.into_iter().skip(1));
        }
    }

    /// Maps a world polygon, as an area, into one image ring: the polygon
    /// is first cut to the mappable region (so a field that runs out of the
    /// picture or behind the camera keeps its part in view as one ring,
    /// where [`project_polyline`](Self::project_polyline) gives open
    /// pieces), then its edges are mapped as there. Empty when nothing of
    /// it maps.
    pub fn project_area(&self, pts: &[WorldPoint], tol_px: f64) -> Vec<PixelPoint> {
        let clipped = clip::clip_polygon(&self.clip, pts);
        if clipped.len() < 3 {
            return Vec::new();
        }
        let tol = sanitize_tol(tol_px);
        let mut budget = MAX_SAMPLES_PER_CALL;
        let (mut ring, mut pieces) = (Vec::new(), Vec::new());
        for i in 0..clipped.len() {
            let (a, b) = (clipped[i], clipped[(i + 1) % clipped.len()]);
            self.sample_segment(a, b, ring.is_empty(), tol, &mut budget, &mut ring, &mut pieces);
            // A point that failed to map split the ring: its pieces are
            // joined again (the region's edge runs straight past the gap).
            if !pieces.is_empty() {
                let later = std::mem::take(&mut ring);
                ring = pieces.drain(..).flatten().chain(later).collect();
            }
        }
        ring
    }

    /// Maps a world circle into image polylines (one closed ring when
    /// wholly in view) with polygon error below `tol_px`.
    pub fn project_circle(
        &self,
        center: WorldPoint,
        radius: f64,
        tol_px: f64,
        out: &mut Vec<Vec<PixelPoint>>,
    ) {
        self.project_arc(center, radius, 0.0, std::f64::consts::TAU, tol_px, out);
    }

    /// Maps a world arc into image polylines with polygon error below
    /// `tol_px`. The arc runs from angle `start` to angle `end` (radians,
    /// counter-clockwise from the world x axis), counter-clockwise when
    /// `end > start` and clockwise when `end < start`; a sweep of 2π or
    /// more is the whole circle. Parts out of view are clipped away.
    pub fn project_arc(
        &self,
        center: WorldPoint,
        radius: f64,
        start: f64,
        end: f64,
        tol_px: f64,
        out: &mut Vec<Vec<PixelPoint>>,
    ) {
        use std::f64::consts::{FRAC_PI_8, TAU};
        if !(radius.is_finite()
            && radius >= 0.0
            && center.is_finite()
            && start.is_finite()
            && end.is_finite())
        {
            return;
        }
        if radius == 0.0 {
            self.project_polyline(&[center], false, tol_px, out);
            return;
        }
        let sweep = end - start;
        if sweep == 0.0 {
            return;
        }
        let full = sweep.abs() >= TAU;
        let len = sweep.abs().min(TAU);
        let dir = sweep.signum();
        let tol = sanitize_tol(tol_px);
        let mut budget = MAX_SAMPLES_PER_CALL;
        let mut ivs = clip::arc_intervals(&self.clip, center, radius, start, dir, len);
        let f = |s: f64| {
            let a = start + dir * s;
            self.project(center + Vec2::new(a.cos(), a.sin()) * radius)
        };
        let ring = full && ivs.len() == 1 && ivs[0].0 <= 0.0 && ivs[0].1 >= TAU;
        if full && !ring && ivs.len() > 1 && ivs[0].0 <= 0.0 && ivs[ivs.len() - 1].1 >= TAU {
            // The visible part runs across angle `start`: one piece, not two.
            let first = ivs.remove(0);
            if let Some(last) = ivs.last_mut() {
                last.1 = TAU + first.1;
            }
        }
        for (s0, s1) in ivs {
            let pieces = ((s1 - s0) / FRAC_PI_8).ceil().max(1.0) as usize;
            let mut cur = Vec::new();
            clip::sample_curve(&f, s0, s1, pieces, true, tol, &mut budget, &mut cur, out);
            if ring && cur.len() > 2 {
                cur.pop();
                cur.push(cur[0]);
            }
            clip::flush(&mut cur, out);
        }
    }

    /// Samples the clipped world segment `a → b` onto `cur`.
    #[allow(clippy::too_many_arguments)]
    fn sample_segment(
        &self,
        a: Vec2,
        b: Vec2,
        include_first: bool,
        tol: f64,
        budget: &mut usize,
        cur: &mut Vec<Vec2>,
        out: &mut Vec<Vec<Vec2>>,
    ) {
        let (ua, ub) = (self.project_undistorted(a), self.project_undistorted(b));
        self.sample_undistorted(ua, ub, include_first, tol, budget, cur, out);
    }

    /// Samples a visible segment given by its ends in the ideal image (a
    /// segment on the floor or in space is straight there; `None`: an end
    /// did not map, and the piece is ended) onto `cur`, distorted, to `tol`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sample_undistorted(
        &self,
        ua: Option<Vec2>,
        ub: Option<Vec2>,
        include_first: bool,
        tol: f64,
        budget: &mut usize,
        cur: &mut Vec<Vec2>,
        out: &mut Vec<Vec<Vec2>>,
    ) {
        let (Some(ua), Some(ub)) = (ua, ub) else {
            clip::flush(cur, out);
            return;
        };
        match &self.lens {
            None => {
                if include_first {
                    cur.push(ua);
                }
                cur.push(ub);
            }
            Some(lens) => {
                let f = |s: f64| lens.distort(ua.lerp(ub, s));
                clip::sample_curve(&f, 0.0, 1.0, 2, include_first, tol, budget, cur, out);
            }
        }
    }

    /// The mappable region as world half-planes: a box in the undistorted
    /// image (around the image when its size is known) and, with a lens, a
    /// polygon inscribed in its valid circle.
    fn clip_planes(&self) -> Vec<HalfPlane> {
        let h = &self.h;
        self.image_lines()
            .iter()
            .filter_map(|l| {
                // (Hᵀ l)·(x, y, 1)
                HalfPlane::new([
                    h[0][0] * l[0] + h[1][0] * l[1] + h[2][0] * l[2],
                    h[0][1] * l[0] + h[1][1] * l[1] + h[2][1] * l[2],
                    h[0][2] * l[0] + h[1][2] * l[1] + h[2][2] * l[2],
                ])
            })
            .collect()
    }

    /// The mappable region in the undistorted image as half-planes
    /// `l·(x, y, w) ≥ 0` of homogeneous pixels: the clip box, w > 0, and
    /// with a lens a polygon inside its valid circle.
    pub(super) fn image_lines(&self) -> Vec<[f64; 3]> {
        let (x0, y0, x1, y1) = self.clip_box();
        let mut img: Vec<[f64; 3]> = vec![
            [1.0, 0.0, -x0],
            [-1.0, 0.0, x1],
            [0.0, 1.0, -y0],
            [0.0, -1.0, y1],
            [0.0, 0.0, 1.0],
        ];
        if let Some(lens) = &self.lens {
            let a = lens.normalize_matrix();
            let r = lens.clip_radius();
            let vertex = |k: usize| {
                let t = std::f64::consts::TAU * k as f64 / LENS_CLIP_SIDES as f64;
                Vec2::new(r * t.cos(), r * t.sin())
            };
            for k in 0..LENS_CLIP_SIDES {
                let (p, q) = (vertex(k), vertex(k + 1));
                let e = q - p;
                let l = [-e.y, e.x, e.y * p.x - e.x * p.y];
                // l·(A u) = (Aᵀ l)·u
                img.push([
                    a[0][0] * l[0] + a[1][0] * l[1] + a[2][0] * l[2],
                    a[0][1] * l[0] + a[1][1] * l[1] + a[2][1] * l[2],
                    a[0][2] * l[0] + a[1][2] * l[1] + a[2][2] * l[2],
                ]);
            }
        }
        img
    }

    /// The clipping box in undistorted pixels: `(x0, y0, x1, y1)`.
    fn clip_box(&self) -> (f64, f64, f64, f64) {
        let Some([w, h]) = self.image_size else {
            let l = DEFAULT_CLIP_LIMIT_PX;
            return (-l, -l, l, l);
        };
        let (w, h) = (f64::from(w), f64::from(h));
        let m = IMAGE_CLIP_MARGIN * w.max(h);
        let (x0, y0, x1, y1) = (-m, -m, w + m, h + m);
        let Some(lens) = &self.lens else {
            return (x0, y0, x1, y1);
        };
        // The preimage of the grown image under the distortion, boxed.
        const PER_SIDE: usize = 64;
        let mut bb = (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
        for k in 0..4 * PER_SIDE {
            let t = (k % PER_SIDE) as f64 / PER_SIDE as f64;
            let px = match k / PER_SIDE {
                0 => Vec2::new(x0 + t * (x1 - x0), y0),
                1 => Vec2::new(x1, y0 + t * (y1 - y0)),
                2 => Vec2::new(x1 - t * (x1 - x0), y1),
                _ => Vec2::new(x0, y1 - t * (y1 - y0)),
            };
            let u = lens.undistort(px).unwrap_or_else(|| {
                // Beyond what the lens can see: the edge of its valid circle.
                let n = lens.normalize(px);
                lens.denormalize(n * (lens.clip_radius() / n.length().max(1e-300)))
            });
            bb = (bb.0.min(u.x), bb.1.min(u.y), bb.2.max(u.x), bb.3.max(u.y));
        }
        if bb.0 < bb.2 && bb.1 < bb.3 {
            bb
        } else {
            (x0, y0, x1, y1)
        }
    }
}

/// A usable tolerance: non-finite or non-positive becomes 0.5 px, and
/// nothing finer than 0.01 px.
fn sanitize_tol(tol_px: f64) -> f64 {
    if tol_px.is_finite() && tol_px > 0.0 {
        tol_px.max(0.01)
    } else {
        0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera;
    use crate::geom::vec2::distance_to_segment;
    use std::f64::consts::{FRAC_PI_2, PI, TAU};

    fn tilted() -> Calibration {
        // A camera looking at the floor at an angle: w grows with y.
        Calibration::from_homography([[1.0, 0.0, 100.0], [0.0, 1.0, 50.0], [0.0, 0.001, 1.0]]).unwrap()
    }

    /// A stadium-like camera 1280×720 with strong barrel distortion.
    fn distorted() -> Calibration {
        let k = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]];
        let (r, t) = camera::look_at([0.0, -9000.0, 5000.0], [0.0, 0.0, 0.0]).unwrap();
        Calibration::from_camera(&k, &[-0.3, 0.05, 0.0, 0.0], &r, t)
            .unwrap()
            .with_image_size(1280, 720)
    }

    /// The floor mapping of `c` alone: its homography and lens.
    fn floor_of(c: &Calibration) -> Calibration {
        let f = Calibration::from_parts(*c.homography(), c.distortion().copied()).unwrap();
        match c.image_size() {
            Some([w, h]) => f.with_image_size(w, h),
            None => f,
        }
    }

    /// Largest distance from dense samples of the true image curve `f` on
    /// [0, 1] to the polyline.
    fn max_gap(f: impl Fn(f64) -> Option<Vec2>, poly: &[Vec2]) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..=4000 {
            let Some(p) = f(i as f64 / 4000.0) else { continue };
            let d = poly
                .windows(2)
                .map(|w| distance_to_segment(p, w[0], w[1]))
                .fold(f64::INFINITY, f64::min);
            worst = worst.max(d);
        }
        worst
    }

    #[test]
    fn a_calibration_for_another_picture_size_says_so() {
        let c = Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap();
        assert_eq!(c.size_note(1920, 1080), None);
        let c = c.with_image_size(1280, 720);
        assert_eq!(c.size_note(1280, 720), None);
        let n = c.size_note(1920, 1080).unwrap();
        assert!(n.contains("1280×720") && n.contains("1920×1080"), "{n}");
    }

    #[test]
    fn project_and_unproject_are_inverse() {
        let c = tilted();
        let w = Vec2::new(300.0, 200.0);
        let back = c.unproject(c.project(w).unwrap()).unwrap();
        assert!((back - w).length() < 1e-9);
    }

    #[test]
    fn singular_matrix_is_rejected() {
        assert!(Calibration::from_homography([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]).is_err());
        assert!(
            Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, f64::NAN, 0.0], [0.0, 0.0, 1.0]]).is_err()
        );
        // Badly scaled columns (world in mm, large translation) are not singular.
        let h = [
            [684.9, 283.2, 8679650.9],
            [139.5, 204.5, 4882303.6],
            [0.5456, 0.8002, 13561.95],
        ];
        let c = Calibration::from_homography(h).unwrap();
        let w = Vec2::new(1234.0, -567.0);
        assert!((c.unproject(c.project(w).unwrap()).unwrap() - w).length() < 1e-6);
    }

    #[test]
    fn segment_crossing_horizon_is_clipped_not_wrapped() {
        let c = tilted();
        // w = 0.001 y + 1 ≤ 0 for y ≤ −1000: the line from y=0 to y=−5000 crosses it.
        let mut out = Vec::new();
        c.project_polyline(
            &[Vec2::new(0.0, 0.0), Vec2::new(0.0, -5000.0)],
            false,
            0.5,
            &mut out,
        );
        assert_eq!(out.len(), 1);
        let seg = &out[0];
        assert_eq!(seg.len(), 2);
        // Projected y of points going towards the horizon heads to −∞, never wraps to +.
        assert!(seg[1].y < seg[0].y, "{seg:?}");
        assert!(seg.iter().all(|p| p.is_finite()));
        // …and stops at the default clipping limit instead of at 10¹²-pixel coordinates.
        assert!(seg[1].y >= -DEFAULT_CLIP_LIMIT_PX * (1.0 + 1e-9), "{seg:?}");
    }

    #[test]
    fn segment_wholly_behind_the_camera_is_dropped() {
        let mut out = Vec::new();
        tilted().project_polyline(
            &[Vec2::new(0.0, -2000.0), Vec2::new(50.0, -9000.0)],
            false,
            0.5,
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn circle_is_closed_polyline_with_small_error() {
        let c = Calibration::from_homography([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]).unwrap();
        let mut out = Vec::new();
        c.project_circle(Vec2::new(100.0, 100.0), 50.0, 0.5, &mut out);
        assert_eq!(out.len(), 1);
        for p in &out[0] {
            let r = (*p - Vec2::new(200.0, 200.0)).length();
            assert!((r - 100.0).abs() < 1e-6);
        }
        // Chord midpoints within tolerance of the true circle.
        let ring = &out[0];
        assert_eq!(ring.first(), ring.last());
        for i in 0..ring.len() - 1 {
            let m = ring[i].lerp(ring[i + 1], 0.5);
            assert!(100.0 - (m - Vec2::new(200.0, 200.0)).length() <= 0.5 + 1e-9);
        }
    }

    #[test]
    fn distorted_projection_round_trips() {
        let c = distorted();
        for i in -6..=6 {
            for j in -4..=4 {
                let w = Vec2::new(i as f64 * 1000.0, j as f64 * 1000.0);
                if let Some(px) = c.project(w) {
                    let back = c.unproject(px).unwrap();
                    assert!(
                        (back - w).length() < 1e-4 * (1.0 + w.length()),
                        "{w:?} → {px:?} → {back:?}"
                    );
                }
            }
        }
        // The undistorted mapping differs from the real one away from the centre.
        let w = Vec2::new(4000.0, -3000.0);
        let d = (c.project(w).unwrap() - c.project_undistorted(w).unwrap()).length();
        assert!(d > 10.0, "{d}");
    }

    #[test]
    fn straight_lines_bend_within_tolerance() {
        let c = distorted();
        let (a, b) = (Vec2::new(-6000.0, -4500.0), Vec2::new(6000.0, -4500.0));
        let mut out = Vec::new();
        c.project_polyline(&[a, b], false, 0.5, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let poly = &out[0];
        assert!(
            poly.len() > 4,
            "a distorted line needs intermediate points: {}",
            poly.len()
        );
        let gap = max_gap(|t| c.project(a.lerp(b, t)), poly);
        assert!(gap < 0.5, "chord error {gap}");
        // Without distortion a segment stays two points.
        let plain = Calibration::from_homography(*c.homography()).unwrap();
        let mut out = Vec::new();
        plain.project_polyline(&[a, b], false, 0.5, &mut out);
        assert_eq!(out[0].len(), 2);
    }

    #[test]
    fn circles_and_arcs_meet_tolerance_under_perspective_and_distortion() {
        let c = distorted();
        for (center, radius) in [
            (Vec2::ZERO, 500.0),
            (Vec2::new(3000.0, 2000.0), 2500.0),
            (Vec2::new(-5000.0, -3000.0), 900.0),
        ] {
            let mut out = Vec::new();
            c.project_circle(center, radius, 0.5, &mut out);
            assert_eq!(out.len(), 1, "{center:?}");
            let ring = &out[0];
            assert_eq!(ring.first(), ring.last());
            let gap = max_gap(
                |t| {
                    let a = t * TAU;
                    c.project(center + Vec2::new(a.cos(), a.sin()) * radius)
                },
                ring,
            );
            assert!(gap < 0.5, "{center:?} r={radius}: {gap}");
        }
        // An arc clockwise from π/2 to −π/2 passes through angle 0.
        let mut out = Vec::new();
        c.project_arc(Vec2::ZERO, 1000.0, FRAC_PI_2, -FRAC_PI_2, 0.5, &mut out);
        assert_eq!(out.len(), 1);
        let arc = &out[0];
        let p = |a: f64| c.project(Vec2::new(a.cos(), a.sin()) * 1000.0).unwrap();
        assert!((arc[0] - p(FRAC_PI_2)).length() < 1e-9);
        assert!((arc[arc.len() - 1] - p(-FRAC_PI_2)).length() < 1e-9);
        let gap = max_gap(|t| Some(p(FRAC_PI_2 - t * PI)), arc);
        assert!(gap < 0.5, "{gap}");
        let east = p(0.0);
        assert!(arc.iter().any(|q| (*q - east).length() < 20.0));
    }

    #[test]
    fn circle_through_the_horizon_is_cut_not_wrapped() {
        let c = tilted().with_image_size(800, 600);
        // The horizon is y = −1000 on the floor; a circle about the origin of radius 3000 crosses it.
        let mut out = Vec::new();
        c.project_circle(Vec2::ZERO, 3000.0, 0.5, &mut out);
        assert_eq!(out.len(), 1, "one open piece across angle 0: {}", out.len());
        let (lo, hi) = (-400.0 - 1e-6, 1200.0 + 1e-6);
        for p in out.iter().flatten() {
            assert!(
                p.x >= lo && p.x <= hi && p.y >= -400.0 - 1e-6 && p.y <= 1000.0 + 1e-6,
                "{p:?}"
            );
        }
        // Every point is the image of a point on the circle in front of the camera.
        for p in out.iter().flatten() {
            let w = c.unproject(*p).unwrap();
            assert!((w.length() - 3000.0).abs() < 1e-6 * 3000.0, "{w:?}");
            assert!(w.y > -1000.0);
        }
    }

    #[test]
    fn pathological_sizes_stay_bounded() {
        let c = distorted();
        let bound = |out: &Vec<Vec<Vec2>>| {
            let n: usize = out.iter().map(Vec::len).sum();
            assert!(n <= MAX_SAMPLES_PER_CALL + 64, "{n} points");
            assert!(
                out.iter()
                    .flatten()
                    .all(|p| p.is_finite() && p.x.abs() < 1e5 && p.y.abs() < 1e5)
            );
        };
        for r in [1e12, 1e9, 1e6, 1e-9] {
            let mut out = Vec::new();
            c.project_circle(Vec2::new(0.0, -r + 100.0), r, 0.5, &mut out);
            bound(&out);
            let mut out = Vec::new();
            c.project_circle(Vec2::ZERO, r, 0.01, &mut out);
            bound(&out);
        }
        // A line far beyond the horizon, one crossing near it, one very long.
        for (a, b) in [
            (Vec2::new(-1e12, 1e12), Vec2::new(1e12, 1e12)),
            (Vec2::new(-3e4, 1e12), Vec2::new(3e4, -1e12)),
            (Vec2::new(-1e15, 0.0), Vec2::new(1e15, 1.0)),
        ] {
            let mut out = Vec::new();
            c.project_polyline(&[a, b], false, 0.5, &mut out);
            bound(&out);
        }
        // Garbage in, nothing out.
        let mut out = Vec::new();
        c.project_circle(Vec2::new(f64::NAN, 0.0), 10.0, 0.5, &mut out);
        c.project_circle(Vec2::ZERO, f64::INFINITY, 0.5, &mut out);
        c.project_circle(Vec2::ZERO, -1.0, 0.5, &mut out);
        c.project_polyline(&[Vec2::new(f64::INFINITY, 0.0), Vec2::ZERO], false, 0.5, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // A silly tolerance does not explode either.
        let mut out = Vec::new();
        c.project_circle(Vec2::ZERO, 3000.0, 0.0, &mut out);
        c.project_circle(Vec2::ZERO, 3000.0, f64::NAN, &mut out);
        bound(&out);
    }

    #[test]
    fn closed_polygon_cut_once_comes_out_as_one_piece() {
        let c = tilted();
        // A square straddling the horizon y = −1000: its part with y > −1000 is one open path.
        let sq = [
            Vec2::new(-500.0, 0.0),
            Vec2::new(500.0, 0.0),
            Vec2::new(500.0, -2000.0),
            Vec2::new(-500.0, -2000.0),
        ];
        let mut out = Vec::new();
        c.project_polyline(&sq, true, 0.5, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        // It runs from the clipped left edge through (−500, 0), (500, 0) to the clipped right edge.
        let piece = &out[0];
        assert_eq!(piece.len(), 4, "{piece:?}");
        let p0 = c.project(Vec2::new(-500.0, 0.0)).unwrap();
        assert!(piece.iter().any(|p| (*p - p0).length() < 1e-9));
        // Wholly visible: one ring, last point repeating the first.
        let mut out = Vec::new();
        c.project_polyline(
            &sq[..2]
                .iter()
                .chain([Vec2::new(0.0, 500.0)].iter())
                .copied()
                .collect::<Vec<_>>(),
            true,
            0.5,
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), 4);
        assert_eq!(out[0].first(), out[0].last());
    }

    #[test]
    fn unproject_refuses_pixels_the_lens_cannot_produce() {
        let k = [[500.0, 0.0, 640.0], [0.0, 500.0, 360.0], [0.0, 0.0, 1.0]];
        let (r, t) = camera::look_at([0.0, 0.0, 5000.0], [0.0, 0.0, 0.0]).unwrap();
        let c = Calibration::from_camera(&k, &[-0.3, 0.0, 0.0, 0.0], &r, t).unwrap();
        // The distorted radius peaks near 0.70·f = 351 px from the centre.
        assert!(c.unproject(Vec2::new(640.0 + 340.0, 360.0)).is_some());
        assert!(c.unproject(Vec2::new(640.0 + 400.0, 360.0)).is_none());
        assert!(c.unproject(Vec2::new(f64::NAN, 360.0)).is_none());
        // Far floor points that would fold back into the picture do not project.
        assert!(c.project(Vec2::new(0.0, 12_000.0)).is_none());
    }

    #[test]
    fn file_format_round_trips_with_distortion() {
        // Its floor mapping as a homography and a lens (a camera is saved
        // as its `[camera]` table: `file.rs`).
        let c = floor_of(&distorted());
        let text = toml::to_string(&c).unwrap();
        assert!(
            text.contains("[distortion]") && text.contains("k1 = -0.3"),
            "{text}"
        );
        assert!(text.contains("image_size = [1280, 720]"), "{text}");
        let back: Calibration = toml::from_str(&text).unwrap();
        assert_eq!(back, c);
        // Old files (a homography only) still load.
        let old: Calibration =
            toml::from_str("homography = [[1.0, 0.0, 5.0], [0.0, 1.0, 6.0], [0.0, 0.0, 1.0]]").unwrap();
        assert!(old.distortion().is_none());
        // Bad distortion and unknown keys are errors, not panics.
        let bad = format!("{text}\n").replace("k1 = -0.3", "k1 = nan");
        assert!(toml::from_str::<Calibration>(&bad).is_err());
        assert!(
            toml::from_str::<Calibration>(
                "homography = [[1.0, 0.0, 5.0], [0.0, 1.0, 6.0], [0.0, 0.0, 1.0]]\nfoo = 1"
            )
            .is_err()
        );
    }

    #[test]
    fn save_and_load_round_trip_and_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calib.toml");
        let c = floor_of(&distorted());
        c.save(&path, "# test\n").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# test\nhomography = [\n    ["), "{text}");
        assert_eq!(Calibration::load(&path).unwrap(), c);
        let plain = tilted();
        plain.save(&path, "").unwrap();
        assert_eq!(Calibration::load(&path).unwrap(), plain);
        std::fs::write(&path, "homography = [[1.0, 0.0], [0.0, 1.0]]\n").unwrap();
        let e = crate::error::chain(&Calibration::load(&path).unwrap_err());
        assert!(e.contains("calib.toml") && e.contains("line 1"), "{e}");
        let e = Calibration::load(&dir.path().join("missing.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.toml"), "{e}");
    }

    #[test]
    fn sessions_embed_or_reference_a_distorted_calibration() {
        use crate::session::{CalibrationSource, Session};
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::new(dir.path().join("run.mp4"), dir.path().join("run.ulog"));
        s.calibration = Some(CalibrationSource::Inline(distorted()));
        let path = dir.path().join("s.toml");
        s.save(&path).unwrap();
        assert_eq!(Session::load(&path).unwrap(), s);
        s.calibration = Some(CalibrationSource::File {
            file: dir.path().join("calib.toml"),
        });
        s.save(&path).unwrap();
        assert_eq!(Session::load(&path).unwrap(), s);
    }

    #[test]
    fn absurd_coefficients_do_not_produce_infinities() {
        let d = Distortion::radial(Vec2::new(640.0, 360.0), 500.0, 1e300, 0.0);
        let c = Calibration::from_parts([[1.0, 0.0, 640.0], [0.0, -1.0, 360.0], [0.0, 0.0, 1.0]], Some(d))
            .unwrap();
        let mut out = Vec::new();
        c.project_circle(Vec2::ZERO, 300.0, 0.5, &mut out);
        assert!(out.iter().flatten().all(|p| p.is_finite()));
        assert!(c.project(Vec2::new(300.0, 0.0)).is_none_or(|p| p.is_finite()));
        let d = Distortion::radial(Vec2::new(640.0, 360.0), 500.0, -1e300, 0.0);
        assert!(
            Calibration::from_parts([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], Some(d)).is_err()
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn camera_strategy() -> impl Strategy<Value = Calibration> {
            (
                -8000.0..8000.0f64,
                -12000.0..-3000.0f64,
                1500.0..9000.0f64,
                400.0..2000.0f64,
                -0.35..0.1f64,
                prop::bool::ANY,
            )
                .prop_map(|(x, y, z, f, k1, lens)| {
                    let k = [[f, 0.0, 640.0], [0.0, f, 360.0], [0.0, 0.0, 1.0]];
                    let (r, t) = camera::look_at([x, y, z], [0.0, 0.0, 0.0]).unwrap();
                    let d: &[f64] = if lens { &[k1, 0.0, 0.0, 0.0] } else { &[] };
                    Calibration::from_camera(&k, d, &r, t)
                        .unwrap()
                        .with_image_size(1280, 720)
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]

            /// Every projected point of a segment is finite, inside the clip box, and
            /// the image of a point on the world segment; within the image the
            /// polyline follows the true curve within tolerance.
            #[test]
            fn segments_map_onto_their_true_image(
                c in camera_strategy(),
                ax in -2e4..2e4f64, ay in -2e4..4e4f64, bx in -2e4..2e4f64, by in -2e4..4e4f64,
            ) {
                let (a, b) = (Vec2::new(ax, ay), Vec2::new(bx, by));
                let mut out = Vec::new();
                c.project_polyline(&[a, b], false, 0.5, &mut out);
                for p in out.iter().flatten() {
                    prop_assert!(p.is_finite() && p.x.abs() < 1e4 && p.y.abs() < 1e4, "{:?}", p);
                    let w = c.unproject(*p);
                    prop_assert!(w.is_some(), "{:?}", p);
                    let w = w.unwrap();
                    let d = distance_to_segment(w, a, b);
                    prop_assert!(d < 1e-5 * (1.0 + (a - b).length() + a.length()), "{:?} off by {}", w, d);
                }
                // The clip region is convex: one piece, following the true curve.
                prop_assert!(out.len() <= 1, "{} pieces", out.len());
                if let (Some(poly), Some((t0, t1))) = (out.first(), clip::clip_segment(&c.clip, a, b)) {
                    let gap = max_gap(|t| c.project(a.lerp(b, t0 + (t1 - t0) * t)), poly);
                    prop_assert!(gap < 0.5 + 1e-6, "gap {}", gap);
                }
            }

            /// Circles and arcs: every point lies on the true image of the
            /// circle, and within the visible angles the polyline follows it
            /// within tolerance.
            #[test]
            fn arcs_map_onto_their_true_image(
                c in camera_strategy(),
                cx in -2e4..2e4f64, cy in -2e4..4e4f64, r in 1.0..3e4f64,
                start in -7.0..7.0f64, sweep in -7.0..7.0f64,
            ) {
                let center = Vec2::new(cx, cy);
                let mut out = Vec::new();
                c.project_arc(center, r, start, start + sweep, 0.5, &mut out);
                for p in out.iter().flatten() {
                    prop_assert!(p.is_finite() && p.x.abs() < 1e4 && p.y.abs() < 1e4, "{:?}", p);
                    let w = c.unproject(*p).unwrap();
                    prop_assert!(((w - center).length() - r).abs() < 1e-6 * (r + center.length()), "{:?}", w);
                }
                let len = sweep.abs().min(TAU);
                let ivs = clip::arc_intervals(&c.clip, center, r, start, sweep.signum(), len);
                let f = |s: f64| {
                    let a = start + sweep.signum() * s;
                    c.project(center + Vec2::new(a.cos(), a.sin()) * r)
                };
                let all: Vec<Vec2> = out.iter().flatten().copied().collect();
                for (s0, s1) in ivs {
                    // Every visible point of the curve is near some piece.
                    let worst = (0..=400)
                        .filter_map(|i| f(s0 + (s1 - s0) * i as f64 / 400.0))
                        .map(|p| {
                            out.iter()
                                .flat_map(|poly| poly.windows(2))
                                .map(|w| distance_to_segment(p, w[0], w[1]))
                                .fold(f64::INFINITY, f64::min)
                                .min(all.iter().map(|q| (*q - p).length()).fold(f64::INFINITY, f64::min))
                        })
                        .fold(0.0, f64::max);
                    prop_assert!(worst < 0.5 + 1e-6, "gap {}", worst);
                }
            }
        }
    }
}
