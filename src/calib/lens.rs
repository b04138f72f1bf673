//! Lens distortion, applied to pixels *after* the floor homography, and
//! its robust inverse. Two models share one radial polynomial
//! `P(r) = r (1 + k1 r² + k2 r⁴ + k3 r⁶)`:
//!
//! - [`DistortionModel::Opencv`] (the default; OpenCV's Brown–Conrady
//!   model): the polynomial maps undistorted to distorted coordinates, with
//!   tangential terms `p1, p2`. A pixel `u` of the ideal (undistorted)
//!   pinhole image is first normalised, `y = (v − cy)/fy`,
//!   `x = (u − cx − skew·y)/fx`, then distorted:
//!
//!   ```text
//!   r² = x² + y²,  g = 1 + k1 r² + k2 r⁴ + k3 r⁶
//!   x' = x g + 2 p1 x y + p2 (r² + 2x²)
//!   y' = y g + p1 (r² + 2y²) + 2 p2 x y
//!   ```
//!
//!   and mapped back with the same `fx, fy, skew, cx, cy`. With a camera
//!   matrix from OpenCV, `fx, fy` are its focal lengths; a fitted `radial`
//!   model uses one normalisation length for both (see `calib::fit`).
//! - [`DistortionModel::Inverse`]: the polynomial maps the other way,
//!   distorted to undistorted, `x = x' g(r'²)` (radial only). Distorting
//!   solves `P(r') = r` for `r'`. ssl-vision's camera model is this model
//!   with `k1` alone (its one distortion coefficient, normalised by the
//!   focal length); ssl-vision solves the cubic in closed form, which gives
//!   the same root.
//!
//! - OpenCV's rational model (ROS's `rational_polynomial`): the Opencv
//!   model with `g = (1 + k1 r² + k2 r⁴ + k3 r⁶) / (1 + k4 r² + k5 r⁴ + k6 r⁶)`;
//!   it is the Opencv model whenever `k4`, `k5` or `k6` is given.
//! - [`DistortionModel::Fisheye`] (OpenCV's fisheye model, ROS's
//!   `equidistant`, Kannala–Brandt with four terms): the angle off axis
//!   `θ = atan r` is what the polynomial bends, `θd = θ (1 + k1 θ² + k2 θ⁴
//!   + k3 θ⁶ + k4 θ⁸)`, and the distorted point is `n · θd / r` (radial
//!   only: no `p1, p2, k5, k6`).
//!
//! All three are a gain `g(r²)` on the normalised point (plus Opencv's
//! tangential terms): the radial map is `P(r) = r g(r²)`.
//!
//! The polynomial only describes a lens up to the radius where it folds
//! over (where `P` stops growing, e.g. for `k1 < 0`). Beyond it the model
//! maps far-away points back into the picture, which is garbage; [`Lens`]
//! finds that radius once and both directions refuse points beyond it.

use serde::{Deserialize, Serialize};

use crate::calib::{CalibError, Mat3};
use crate::geom::Vec2;

/// Which way a [`Distortion`]'s radial polynomial maps (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistortionModel {
    /// Undistorted → distorted, with tangential terms (OpenCV's).
    #[default]
    Opencv,
    /// Distorted → undistorted, radial only (ssl-vision's, with `k1`).
    Inverse,
    /// OpenCV's fisheye (equidistant) model: the angle off axis bent by
    /// `k1…k4` (module docs).
    Fisheye,
}

impl DistortionModel {
    fn is_default(&self) -> bool {
        *self == DistortionModel::Opencv
    }
}

/// Lens distortion coefficients and the normalisation they are expressed in
/// (OpenCV's camera-matrix convention).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distortion {
    /// Which way the radial polynomial maps; `opencv` when left out.
    #[serde(default, skip_serializing_if = "DistortionModel::is_default")]
    pub model: DistortionModel,
    /// Principal point `[cx, cy]` in pixels: the centre of distortion.
    pub center: [f64; 2],
    /// Normalisation lengths `[fx, fy]` in pixels (the focal lengths of an
    /// OpenCV camera matrix).
    pub focal: [f64; 2],
    /// Skew of the camera matrix (`K[0][1]`); almost always 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skew: f64,
    /// Radial coefficient of r².
    pub k1: f64,
    /// Radial coefficient of r⁴.
    #[serde(default)]
    pub k2: f64,
    /// Radial coefficient of r⁶.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub k3: f64,
    /// First tangential coefficient.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub p1: f64,
    /// Second tangential coefficient.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub p2: f64,
    /// The rational model's denominator coefficient of r² (the fisheye
    /// model's coefficient of θ⁸).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub k4: f64,
    /// The rational model's denominator coefficient of r⁴.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub k5: f64,
    /// The rational model's denominator coefficient of r⁶.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub k6: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Distortion {
    /// Radial distortion `k1, k2` about `center`, normalised by one length
    /// `scale` (pixels) in both directions.
    pub fn radial(center: Vec2, scale: f64, k1: f64, k2: f64) -> Self {
        Distortion {
            model: DistortionModel::Opencv,
            center: [center.x, center.y],
            focal: [scale, scale],
            skew: 0.0,
            k1,
            k2,
            k3: 0.0,
            p1: 0.0,
            p2: 0.0,
            k4: 0.0,
            k5: 0.0,
            k6: 0.0,
        }
    }

    /// True when the lens maps every point to itself: every coefficient
    /// zero (a fisheye lens never does: it bends even with none).
    pub fn is_identity(&self) -> bool {
        self.model != DistortionModel::Fisheye
            && [
                self.k1, self.k2, self.k3, self.p1, self.p2, self.k4, self.k5, self.k6,
            ]
            .iter()
            .all(|&k| k == 0.0)
    }
}

/// Largest normalised radius searched for the fold-over point; beyond it
/// (about 87° off axis for a focal-length normalisation) nothing is valid.
const R_CAP: f64 = 20.0;
/// Scan steps along the radius when looking for the fold-over point.
const SCAN_STEPS: usize = 4000;
/// Angles checked per radius when the model has tangential terms.
const SCAN_ANGLES: usize = 32;
/// Points are valid up to this fraction of the fold-over radius.
const VALID_FRACTION: f64 = 0.999;
/// Shapes are clipped to a polygon inscribed in this fraction of it.
const CLIP_FRACTION: f64 = 0.99;

/// A validated [`Distortion`] with its valid region worked out.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Lens {
    d: Distortion,
    /// Normalised undistorted radius up to which the model is used.
    r_valid: f64,
    /// Radius (undistorted, normalised) of the circle the clipping polygon
    /// is inscribed in.
    r_clip: f64,
    /// The polynomial's argument up to which it is used (`r_valid` for
    /// the OpenCV model, the distorted radius for the inverse one).
    arg_valid: f64,
    tangential: bool,
}

impl Lens {
    /// Checks the coefficients and finds where the model folds over.
    pub fn new(d: Distortion) -> Result<Lens, CalibError> {
        let all = [
            d.center[0],
            d.center[1],
            d.focal[0],
            d.focal[1],
            d.skew,
            d.k1,
            d.k2,
            d.k3,
            d.p1,
            d.p2,
            d.k4,
            d.k5,
            d.k6,
        ];
        if !all.iter().all(|v| v.is_finite()) {
            return Err(CalibError::InvalidDistortion(format!(
                "coefficients must be finite: {d:?}"
            )));
        }
        if !(d.focal[0] > 0.0 && d.focal[1] > 0.0) {
            return Err(CalibError::InvalidDistortion(format!(
                "normalisation lengths (focal) must be positive, not {:?}",
                d.focal
            )));
        }
        let tangential = d.p1 != 0.0 || d.p2 != 0.0;
        if tangential && d.model == DistortionModel::Inverse {
            return Err(CalibError::InvalidDistortion(
                "the inverse model is radial only: p1 and p2 must be 0".to_owned(),
            ));
        }
        if d.model == DistortionModel::Inverse && (d.k4 != 0.0 || d.k5 != 0.0 || d.k6 != 0.0) {
            return Err(CalibError::InvalidDistortion(
                "the inverse model is a polynomial: k4, k5 and k6 must be 0".to_owned(),
            ));
        }
        if d.model == DistortionModel::Fisheye && (tangential || d.k5 != 0.0 || d.k6 != 0.0) {
            return Err(CalibError::InvalidDistortion(
                "the fisheye model is radial with k1 to k4: p1, p2, k5 and k6 must be 0".to_owned(),
            ));
        }
        let mut lens = Lens {
            d,
            r_valid: R_CAP,
            r_clip: R_CAP,
            arg_valid: R_CAP,
            tangential,
        };
        let fold = lens.fold_radius();
        if fold < 1e-3 {
            return Err(CalibError::InvalidDistortion(format!(
                "the distortion folds over at normalised radius {fold:.3e}: no usable image region"
            )));
        }
        lens.arg_valid = fold * VALID_FRACTION;
        match d.model {
            DistortionModel::Opencv | DistortionModel::Fisheye => {
                lens.r_valid = fold * VALID_FRACTION;
                lens.r_clip = fold * CLIP_FRACTION;
            }
            DistortionModel::Inverse => {
                lens.r_valid = lens.radial(fold * VALID_FRACTION);
                lens.r_clip = lens.radial(fold * CLIP_FRACTION);
            }
        }
        Ok(lens)
    }

    /// The coefficients.
    pub fn distortion(&self) -> &Distortion {
        &self.d
    }

    /// Radius of the circle (normalised) that shape clipping stays inside.
    pub fn clip_radius(&self) -> f64 {
        self.r_clip
    }

    /// Normalised radius beyond which the model is refused.
    #[cfg(test)]
    pub fn valid_radius(&self) -> f64 {
        self.r_valid
    }

    /// The smallest normalised radius where the mapping stops being
    /// one-to-one (radial derivative or Jacobian determinant reaches 0),
    /// or [`R_CAP`].
    fn fold_radius(&self) -> f64 {
        let ok = |r: f64| self.radial_slope(r) > 0.0 && (!self.tangential || self.min_det_on_ring(r) > 0.0);
        let step = R_CAP / SCAN_STEPS as f64;
        let mut prev = 0.0;
        for i in 1..=SCAN_STEPS {
            let r = step * i as f64;
            if !ok(r) {
                let (mut lo, mut hi) = (prev, r);
                for _ in 0..60 {
                    let mid = 0.5 * (lo + hi);
                    if ok(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                return lo;
            }
            prev = r;
        }
        R_CAP
    }

    /// The radial map P(r) = r·g(r²).
    fn radial(&self, r: f64) -> f64 {
        r * self.gain(r * r).0
    }

    /// The gain `g(r²)` on a normalised point and its derivative
    /// `dg/d(r²)` (module docs).
    fn gain(&self, r2: f64) -> (f64, f64) {
        let Distortion {
            k1,
            k2,
            k3,
            k4,
            k5,
            k6,
            ..
        } = self.d;
        if self.d.model == DistortionModel::Fisheye {
            let r = r2.sqrt();
            if r < 1e-8 {
                // θd/r → 1, and its slope in r² → k1 − 1/3.
                return (1.0, k1 - 1.0 / 3.0);
            }
            let th = r.atan();
            let t2 = th * th;
            let poly = 1.0 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4)));
            let dpoly = 1.0 + t2 * (3.0 * k1 + t2 * (5.0 * k2 + t2 * (7.0 * k3 + t2 * 9.0 * k4)));
            let thd = th * poly;
            // d/dr (θd / r) = (θd'·r − θd) / r², θd' = dθd/dθ / (1 + r²).
            let dg_dr = (dpoly / (1.0 + r2) * r - thd) / r2;
            return (thd / r, dg_dr / (2.0 * r));
        }
        let num = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
        let dnum = k1 + r2 * (2.0 * k2 + r2 * 3.0 * k3);
        if k4 == 0.0 && k5 == 0.0 && k6 == 0.0 {
            return (num, dnum);
        }
        let den = 1.0 + r2 * (k4 + r2 * (k5 + r2 * k6));
        let dden = k4 + r2 * (2.0 * k5 + r2 * 3.0 * k6);
        (num / den, (dnum * den - num * dden) / (den * den))
    }

    /// The `r` in `[0, upper]` with P(r) = `target`, for `0 < target ≤
    /// P(upper)` (P rises monotonically there): Newton's method kept
    /// inside a bracket.
    fn solve_radial(&self, target: f64, upper: f64) -> f64 {
        let (mut lo, mut hi) = (0.0, upper);
        let mut r = target.min(hi);
        for _ in 0..100 {
            let f = self.radial(r) - target;
            if f.abs() <= 1e-15 * (1.0 + target) {
                break;
            }
            if f > 0.0 {
                hi = r;
            } else {
                lo = r;
            }
            let slope = self.radial_slope(r);
            let next = r - f / slope;
            r = if slope > 0.0 && next > lo && next < hi {
                next
            } else {
                0.5 * (lo + hi)
            };
            if hi - lo <= 1e-16 * (1.0 + hi) {
                break;
            }
        }
        r
    }

    /// d/dr of r·g(r²): the radial magnification.
    fn radial_slope(&self, r: f64) -> f64 {
        let r2 = r * r;
        let (g, gp) = self.gain(r2);
        g + 2.0 * r2 * gp
    }

    fn min_det_on_ring(&self, r: f64) -> f64 {
        (0..SCAN_ANGLES)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / SCAN_ANGLES as f64;
                let j = self.jacobian(Vec2::new(r * a.cos(), r * a.sin()));
                j[0][0] * j[1][1] - j[0][1] * j[1][0]
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Pixel → normalised coordinates.
    pub fn normalize(&self, px: Vec2) -> Vec2 {
        let y = (px.y - self.d.center[1]) / self.d.focal[1];
        let x = (px.x - self.d.center[0] - self.d.skew * y) / self.d.focal[0];
        Vec2::new(x, y)
    }

    /// Normalised coordinates → pixel.
    pub fn denormalize(&self, n: Vec2) -> Vec2 {
        Vec2::new(
            self.d.focal[0] * n.x + self.d.skew * n.y + self.d.center[0],
            self.d.focal[1] * n.y + self.d.center[1],
        )
    }

    /// The pixel → normalised map as a homogeneous 3×3 matrix.
    pub fn normalize_matrix(&self) -> Mat3 {
        let [fx, fy] = self.d.focal;
        let [cx, cy] = self.d.center;
        let s = self.d.skew;
        [
            [1.0 / fx, -s / (fx * fy), (s * cy / fy - cx) / fx],
            [0.0, 1.0 / fy, -cy / fy],
            [0.0, 0.0, 1.0],
        ]
    }

    /// Distorts normalised coordinates (no validity check).
    pub fn distort_normalized(&self, n: Vec2) -> Vec2 {
        if self.d.model == DistortionModel::Inverse {
            let ru = n.length();
            if ru == 0.0 || !ru.is_finite() {
                return n;
            }
            let upper = if ru <= self.radial(self.arg_valid) {
                self.arg_valid
            } else {
                // Beyond the valid region (callers check): still monotone up to the fold.
                self.arg_valid / VALID_FRACTION
            };
            return n * (self.solve_radial(ru, upper) / ru);
        }
        let Distortion { p1, p2, .. } = self.d;
        let (x, y) = (n.x, n.y);
        let r2 = x * x + y * y;
        let g = self.gain(r2).0;
        Vec2::new(
            x * g + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x),
            y * g + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y,
        )
    }

    /// Jacobian of [`Self::distort_normalized`] at `n`, row-major.
    fn jacobian(&self, n: Vec2) -> [[f64; 2]; 2] {
        let Distortion { p1, p2, .. } = self.d;
        let (x, y) = (n.x, n.y);
        let r2 = x * x + y * y;
        // g and dg/d(r²)
        let (g, gp) = self.gain(r2);
        [
            [
                g + 2.0 * x * x * gp + 2.0 * p1 * y + 6.0 * p2 * x,
                2.0 * x * y * gp + 2.0 * p1 * x + 2.0 * p2 * y,
            ],
            [
                2.0 * x * y * gp + 2.0 * p1 * x + 2.0 * p2 * y,
                g + 2.0 * y * y * gp + 6.0 * p1 * y + 2.0 * p2 * x,
            ],
        ]
    }

    /// Undistorted pixel → distorted pixel; `None` outside the valid region.
    pub fn distort(&self, px: Vec2) -> Option<Vec2> {
        let n = self.normalize(px);
        if !n.is_finite() || n.x * n.x + n.y * n.y > self.r_valid * self.r_valid {
            return None;
        }
        Some(self.denormalize(self.distort_normalized(n))).filter(|p| p.is_finite())
    }

    /// Distorted pixel → undistorted pixel; `None` when no point of the
    /// valid region maps there (outside what the lens can see) or the
    /// iteration does not converge.
    pub fn undistort(&self, px: Vec2) -> Option<Vec2> {
        let d = self.normalize(px);
        if !d.is_finite() {
            return None;
        }
        let n = self.undistort_normalized(d)?;
        Some(self.denormalize(n))
    }

    fn undistort_normalized(&self, d: Vec2) -> Option<Vec2> {
        let rd = d.length();
        if self.d.model == DistortionModel::Inverse {
            return (rd <= self.arg_valid).then(|| if rd == 0.0 { d } else { d * (self.radial(rd) / rd) });
        }
        if rd == 0.0 && !self.tangential {
            return Some(d);
        }
        // Radial part: solve r·g(r²) = rd on [0, r_valid], where it rises
        // monotonically.
        let guess = if rd > 0.0 && rd <= self.radial(self.r_valid) {
            Some(d * (self.solve_radial(rd, self.r_valid) / rd))
        } else if rd > 0.0 {
            if !self.tangential {
                return None;
            }
            Some(d * (0.5 * self.r_valid / rd))
        } else {
            Some(d)
        };
        let mut n = guess?;
        if !self.tangential {
            return Some(n);
        }
        // Tangential terms: damped Newton on the full 2-D map.
        let resid = |n: Vec2| self.distort_normalized(n) - d;
        let mut e = resid(n);
        for _ in 0..60 {
            if e.length() <= 1e-14 * (1.0 + rd) {
                break;
            }
            let j = self.jacobian(n);
            let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
            if det.is_nan() || det.abs() <= 1e-300 {
                return None;
            }
            let step = Vec2::new(
                (j[1][1] * e.x - j[0][1] * e.y) / det,
                (-j[1][0] * e.x + j[0][0] * e.y) / det,
            );
            let mut k = 1.0;
            loop {
                let cand = n - step * k;
                let ce = resid(cand);
                if ce.length() < e.length() || k < 1e-6 {
                    n = cand;
                    e = ce;
                    break;
                }
                k *= 0.5;
            }
        }
        let converged = e.length() <= 1e-9 * (1.0 + rd);
        (converged && n.length() <= self.r_valid).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(k1: f64, k2: f64, p1: f64, p2: f64) -> Lens {
        Lens::new(Distortion {
            model: DistortionModel::Opencv,
            center: [640.0, 360.0],
            focal: [900.0, 880.0],
            skew: 0.5,
            k1,
            k2,
            k3: 0.0,
            p1,
            p2,
            k4: 0.0,
            k5: 0.0,
            k6: 0.0,
        })
        .unwrap()
    }

    /// A lens of `model` with K = [[900, 0, 640], [0, 880, 360]] and `k`
    /// as (k1, k2, p1, p2, k3, k4, k5, k6).
    fn opencv_lens(model: DistortionModel, k: [f64; 8]) -> Lens {
        Lens::new(Distortion {
            model,
            center: [640.0, 360.0],
            focal: [900.0, 880.0],
            skew: 0.0,
            k1: k[0],
            k2: k[1],
            p1: k[2],
            p2: k[3],
            k3: k[4],
            k4: k[5],
            k5: k[6],
            k6: k[7],
        })
        .unwrap()
    }

    /// Pixels OpenCV 4's `projectPoints` and `fisheye.projectPoints` give
    /// for the normalised points (0.3, −0.2), (0.8, 0.5) and (−1, 0.4)
    /// through the lenses of [`opencv_lens`].
    const OPENCV_POINTS: [[f64; 2]; 3] = [[0.3, -0.2], [0.8, 0.5], [-1.0, 0.4]];

    #[test]
    fn the_rational_and_fisheye_lenses_project_as_opencv_does() {
        let pixel = |n: [f64; 2]| Vec2::new(640.0 + 900.0 * n[0], 360.0 + 880.0 * n[1]);
        let rational = opencv_lens(
            DistortionModel::Opencv,
            [0.2, -0.1, 0.001, -0.002, 0.01, 0.15, -0.05, 0.005],
        );
        let rational_cv = [
            [910.835783678386, 183.417059528163],
            [1362.338128643765, 803.191056393412],
            [-265.216489159431, 714.244386871244],
        ];
        let fisheye = opencv_lens(
            DistortionModel::Fisheye,
            [0.1, -0.05, 0.0, 0.0, 0.01, -0.002, 0.0, 0.0],
        );
        let fisheye_cv = [
            [902.057261955252, 189.177488503243],
            [1241.721142942122, 727.718476242408],
            [-79.885384271678, 641.555172515145],
        ];
        for (lens, cv) in [(&rational, rational_cv), (&fisheye, fisheye_cv)] {
            for (n, want) in OPENCV_POINTS.iter().zip(cv) {
                let got = lens.distort(pixel(*n)).unwrap();
                assert!(
                    (got - Vec2::new(want[0], want[1])).length() < 1e-6,
                    "{:?} {n:?}: {got:?}, OpenCV {want:?}",
                    lens.distortion().model
                );
                // And back.
                let back = lens.undistort(got).unwrap();
                assert!((back - pixel(*n)).length() < 1e-6, "{n:?}: back at {back:?}");
            }
        }
    }

    #[test]
    fn the_gain_slope_is_the_derivative_of_the_gain() {
        let lenses = [
            opencv_lens(
                DistortionModel::Opencv,
                [0.2, -0.1, 0.0, 0.0, 0.01, 0.15, -0.05, 0.005],
            ),
            opencv_lens(
                DistortionModel::Fisheye,
                [0.1, -0.05, 0.0, 0.0, 0.01, -0.002, 0.0, 0.0],
            ),
            opencv_lens(DistortionModel::Fisheye, [0.0; 8]),
        ];
        for lens in &lenses {
            for r2 in [1e-20, 1e-6, 0.01, 0.5, 2.0, 9.0] {
                let h = 1e-6 * (1.0 + r2);
                let numeric =
                    (lens.gain(r2 + h).0 - lens.gain((r2 - h).max(0.0)).0) / (r2 + h - (r2 - h).max(0.0));
                let (_, slope) = lens.gain(r2);
                assert!(
                    (numeric - slope).abs() < 1e-5 * (1.0 + slope.abs()),
                    "{:?} at r² = {r2}: {slope} against {numeric}",
                    lens.distortion().model
                );
            }
        }
        // A fisheye lens bends even with no coefficients: it is no identity.
        assert!(!lenses[2].distortion().is_identity());
        let far = lenses[2].distort(Vec2::new(640.0 + 900.0 * 3.0, 360.0)).unwrap();
        assert!((far.x - (640.0 + 900.0 * 3f64.atan())).abs() < 1e-9, "{far:?}");
    }

    #[test]
    fn terms_a_model_does_not_have_are_refused() {
        let mut d = *opencv_lens(DistortionModel::Opencv, [0.0; 8]).distortion();
        d.model = DistortionModel::Fisheye;
        d.p1 = 0.01;
        assert!(Lens::new(d).unwrap_err().to_string().contains("fisheye"));
        d.p1 = 0.0;
        d.k6 = 0.1;
        assert!(Lens::new(d).is_err());
        d.model = DistortionModel::Inverse;
        assert!(Lens::new(d).unwrap_err().to_string().contains("k4, k5 and k6"));
        d.k6 = f64::NAN;
        d.model = DistortionModel::Opencv;
        assert!(Lens::new(d).is_err());
    }

    #[test]
    fn barrel_fold_radius_matches_formula() {
        // r(1 + k1 r²) stops growing at r = 1/sqrt(-3 k1).
        let l = lens(-0.3, 0.0, 0.0, 0.0);
        let fold = 1.0 / (0.9f64).sqrt();
        assert!(
            (l.valid_radius() / VALID_FRACTION - fold).abs() < 1e-9,
            "{}",
            l.valid_radius()
        );
    }

    #[test]
    fn no_fold_for_pincushion() {
        let l = lens(0.2, 0.05, 0.0, 0.0);
        assert_eq!(l.valid_radius(), R_CAP * VALID_FRACTION);
    }

    #[test]
    fn undistort_inverts_distort_inside_valid_region() {
        for (k1, k2, p1, p2) in [
            (-0.3, 0.0, 0.0, 0.0),
            (-0.25, 0.08, 0.001, -0.002),
            (0.1, -0.02, 0.0, 0.0),
        ] {
            let l = lens(k1, k2, p1, p2);
            for i in 0..200 {
                let a = i as f64 * 0.7;
                let r = l.valid_radius() * 0.98 * ((i % 20) as f64 / 19.0);
                let u = l.denormalize(Vec2::new(r * a.cos(), r * a.sin()));
                let d = l.distort(u).unwrap();
                let back = l.undistort(d).unwrap();
                assert!(
                    (back - u).length() < 1e-6,
                    "k1={k1} i={i}: {u:?} → {d:?} → {back:?}"
                );
            }
        }
    }

    #[test]
    fn points_beyond_the_fold_are_refused() {
        let l = lens(-0.3, 0.0, 0.0, 0.0);
        let far = l.denormalize(Vec2::new(1.2, 0.0));
        assert!(l.distort(far).is_none());
        // The largest distorted radius is about 0.703: a pixel beyond it has no preimage.
        let beyond = l.denormalize(Vec2::new(0.75, 0.0));
        assert!(l.undistort(beyond).is_none());
        assert!(l.undistort(Vec2::new(f64::NAN, 0.0)).is_none());
    }

    #[test]
    fn jacobian_matches_finite_differences() {
        let l = lens(-0.2, 0.05, 0.003, -0.001);
        let n = Vec2::new(0.3, -0.4);
        let j = l.jacobian(n);
        let h = 1e-6;
        for (c, dn) in [Vec2::new(h, 0.0), Vec2::new(0.0, h)].into_iter().enumerate() {
            let fd = (l.distort_normalized(n + dn) - l.distort_normalized(n - dn)) * (0.5 / h);
            assert!((fd.x - j[0][c]).abs() < 1e-8 && (fd.y - j[1][c]).abs() < 1e-8);
        }
    }

    #[test]
    fn bad_coefficients_are_errors() {
        let mut d = Distortion::radial(Vec2::new(0.0, 0.0), 100.0, f64::NAN, 0.0);
        assert!(Lens::new(d).is_err());
        d.k1 = 0.0;
        d.focal = [0.0, 1.0];
        assert!(Lens::new(d).is_err());
    }

    fn inverse(k1: f64, k2: f64) -> Lens {
        Lens::new(Distortion {
            model: DistortionModel::Inverse,
            k1,
            k2,
            ..Distortion::radial(Vec2::new(390.0, 290.0), 500.0, 0.0, 0.0)
        })
        .unwrap()
    }

    /// ssl-vision's distortion of a normalised radius: the real root of
    /// a·rd³ + rd − ru = 0 by Cardano's formula.
    fn cardano(ru: f64, a: f64) -> f64 {
        let b = -9.0 * a * a * ru + a * (a * (12.0 + 81.0 * a * ru * ru)).sqrt();
        let b = b.signum() * b.abs().cbrt();
        (2.0f64 / 3.0).cbrt() / b - b / (18.0f64.cbrt() * a)
    }

    #[test]
    fn inverse_model_distorts_like_the_closed_form() {
        for a in [0.05, 0.2, 1.0] {
            let l = inverse(a, 0.0);
            for i in 1..200 {
                let ru = i as f64 * 0.01;
                let n = Vec2::new(ru * 0.6, ru * 0.8);
                let d = l.distort_normalized(n);
                let want = cardano(ru, a);
                assert!(
                    (d.length() - want).abs() < 1e-12 * (1.0 + want),
                    "a={a} ru={ru}: {} vs {want}",
                    d.length()
                );
                // And the polynomial maps it back.
                let back = l.undistort_normalized(d).unwrap();
                assert!((back - n).length() < 1e-12, "a={a} ru={ru}");
            }
        }
    }

    #[test]
    fn inverse_model_refuses_beyond_its_fold() {
        // rd(1 − 0.3 rd²) stops growing at rd = 1/sqrt(0.9).
        let l = inverse(-0.3, 0.0);
        let fold = 1.0 / 0.9f64.sqrt();
        assert!((l.arg_valid / VALID_FRACTION - fold).abs() < 1e-9);
        assert!(l.undistort(l.denormalize(Vec2::new(1.1, 0.0))).is_none());
        let largest = fold * (1.0 - 0.3 * fold * fold);
        assert!(l.distort(l.denormalize(Vec2::new(largest * 1.01, 0.0))).is_none());
        let inside = l.denormalize(Vec2::new(0.3, -0.4));
        let d = l.distort(inside).unwrap();
        assert!((l.undistort(d).unwrap() - inside).length() < 1e-9);
    }

    #[test]
    fn inverse_model_has_no_tangential_terms() {
        let d = Distortion {
            model: DistortionModel::Inverse,
            p1: 0.01,
            ..Distortion::radial(Vec2::ZERO, 100.0, 0.1, 0.0)
        };
        assert!(Lens::new(d).is_err());
    }
}
