//! Camera calibration: the mapping between the floor plane (world units)
//! and video pixels, and mapping shapes through it.
//!
//! A [`Calibration`] holds a homography (world → pixels) and its inverse.
//! Projection refuses points behind the camera (homogeneous w ≤ 0) and
//! polylines are clipped at the horizon instead of wrapping around.

use serde::{Deserialize, Serialize};

use crate::log::Vec2;

/// Errors building or fitting a calibration.
#[derive(Debug, thiserror::Error)]
pub enum CalibError {
    #[error("the homography is singular or not finite: {0}")]
    Singular(String),
}

/// Smallest homogeneous w treated as in front of the camera.
const W_EPS: f64 = 1e-9;

/// A 3×3 matrix, row-major.
pub type Mat3 = [[f64; 3]; 3];

/// World ↔ image mapping of the floor plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "CalibrationFile", into = "CalibrationFile")]
pub struct Calibration {
    h: Mat3,
    inv: Mat3,
}

/// The saved form of a [`Calibration`] (a TOML table).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    /// World → pixel homography, row-major.
    pub homography: Mat3,
}

impl TryFrom<CalibrationFile> for Calibration {
    type Error = CalibError;
    fn try_from(f: CalibrationFile) -> Result<Self, CalibError> {
        Calibration::from_homography(f.homography)
    }
}

impl From<Calibration> for CalibrationFile {
    fn from(c: Calibration) -> Self {
        CalibrationFile { homography: c.h }
    }
}

impl Calibration {
    /// A calibration from a world → pixel homography.
    pub fn from_homography(h: Mat3) -> Result<Self, CalibError> {
        let inv = invert(&h).ok_or_else(|| CalibError::Singular(format!("{h:?}")))?;
        Ok(Calibration { h, inv })
    }

    /// The world → pixel homography.
    pub fn homography(&self) -> &Mat3 {
        &self.h
    }

    /// World point → pixel; `None` when the point is behind the camera or
    /// not finite.
    pub fn project(&self, p: Vec2) -> Option<Vec2> {
        let (x, y, w) = apply(&self.h, p);
        (w > W_EPS && x.is_finite() && y.is_finite()).then(|| Vec2::new(x / w, y / w))
    }

    /// Pixel → world point on the floor; `None` above the horizon.
    pub fn unproject(&self, px: Vec2) -> Option<Vec2> {
        // A pixel sees the floor when its ray maps back with positive w
        // through the forward matrix.
        let (x, y, w) = apply(&self.inv, px);
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
    /// Parts behind the camera are clipped away (a polyline may come out in
    /// pieces); `tol_px` bounds the chord error where the mapping bends lines.
    /// A closed polyline wholly in front of the camera comes out as one ring
    /// whose last point repeats its first.
    pub fn project_polyline(&self, pts: &[Vec2], closed: bool, _tol_px: f64, out: &mut Vec<Vec<Vec2>>) {
        let n = pts.len();
        if n == 0 {
            return;
        }
        let segs = if closed && n > 2 { n } else { n - 1 };
        let mut cur: Vec<Vec2> = Vec::new();
        if n == 1 {
            if let Some(p) = self.project(pts[0]) {
                out.push(vec![p]);
            }
            return;
        }
        for i in 0..segs {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            match self.clip_segment(a, b) {
                Some((ca, cb, a_clipped, b_clipped)) => {
                    if a_clipped || cur.is_empty() {
                        if cur.len() > 1 {
                            out.push(std::mem::take(&mut cur));
                        }
                        cur.clear();
                        cur.push(ca);
                    }
                    cur.push(cb);
                    if b_clipped {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                None => {
                    if cur.len() > 1 {
                        out.push(std::mem::take(&mut cur));
                    }
                    cur.clear();
                }
            }
        }
        if cur.len() > 1 {
            out.push(cur);
        }
    }

    /// Maps a world circle into image polylines (closed when wholly in
    /// front of the camera) with polygon error below `tol_px`.
    pub fn project_circle(&self, center: Vec2, radius: f64, tol_px: f64, out: &mut Vec<Vec<Vec2>>) {
        if !(radius.is_finite() && radius >= 0.0 && center.is_finite()) {
            return;
        }
        let scale = self.pixels_per_unit(center).unwrap_or(1.0);
        let r_px = (radius * scale).max(tol_px);
        // Sagitta of a chord spanning angle θ: r(1 − cos(θ/2)) ≤ tol.
        let step = 2.0 * (1.0 - (tol_px / r_px).min(1.0)).acos();
        let n = ((std::f64::consts::TAU / step.max(1e-3)).ceil() as usize).clamp(8, 4096);
        let pts: Vec<Vec2> = (0..n)
            .map(|i| {
                let a = i as f64 * std::f64::consts::TAU / n as f64;
                center + Vec2::new(a.cos(), a.sin()) * radius
            })
            .collect();
        self.project_polyline(&pts, true, tol_px, out);
    }

    /// Clips world segment a→b to the half-plane in front of the camera and
    /// projects it; also says whether each end was cut.
    fn clip_segment(&self, a: Vec2, b: Vec2) -> Option<(Vec2, Vec2, bool, bool)> {
        let wa = apply(&self.h, a).2;
        let wb = apply(&self.h, b).2;
        if !(wa.is_finite() && wb.is_finite()) || (wa <= W_EPS && wb <= W_EPS) {
            return None;
        }
        let cut = |from: Vec2, wf: f64, to: Vec2, wt: f64| {
            // w is affine along the world segment: find where it equals the
            // margin just in front of the camera.
            let margin = W_EPS.max(1e-6 * wt.abs());
            let t = (margin - wf) / (wt - wf);
            from.lerp(to, t.clamp(0.0, 1.0))
        };
        let (a2, ac) = if wa > W_EPS {
            (a, false)
        } else {
            (cut(a, wa, b, wb), true)
        };
        let (b2, bc) = if wb > W_EPS {
            (b, false)
        } else {
            (cut(b, wb, a, wa), true)
        };
        Some((self.project(a2)?, self.project(b2)?, ac, bc))
    }
}

fn apply(m: &Mat3, p: Vec2) -> (f64, f64, f64) {
    (
        m[0][0] * p.x + m[0][1] * p.y + m[0][2],
        m[1][0] * p.x + m[1][1] * p.y + m[1][2],
        m[2][0] * p.x + m[2][1] * p.y + m[2][2],
    )
}

/// Inverse of a 3×3 matrix, `None` when singular or not finite.
pub fn invert(m: &Mat3) -> Option<Mat3> {
    let c = |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let cof = [
        [c(1, 2, 1, 2), -c(1, 2, 0, 2), c(1, 2, 0, 1)],
        [-c(0, 2, 1, 2), c(0, 2, 0, 2), -c(0, 2, 0, 1)],
        [c(0, 1, 1, 2), -c(0, 1, 0, 2), c(0, 1, 0, 1)],
    ];
    let det = m[0][0] * cof[0][0] + m[0][1] * cof[0][1] + m[0][2] * cof[0][2];
    let norm: f64 = m.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
    if !det.is_finite() || det.abs() <= 1e-12 * norm.powi(3) {
        return None;
    }
    let mut inv = [[0.0; 3]; 3];
    for (r, row) in inv.iter_mut().enumerate() {
        for (k, v) in row.iter_mut().enumerate() {
            *v = cof[k][r] / det;
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tilted() -> Calibration {
        // A camera looking at the floor at an angle: w grows with y.
        Calibration::from_homography([[1.0, 0.0, 100.0], [0.0, 1.0, 50.0], [0.0, 0.001, 1.0]]).unwrap()
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
        for i in 0..ring.len() - 1 {
            let m = ring[i].lerp(ring[i + 1], 0.5);
            assert!(100.0 - (m - Vec2::new(200.0, 200.0)).length() <= 0.5 + 1e-9);
        }
    }
}
