//! The fit's model: its parameters ([`Params`]: homography, k1, k2 and the
//! shift of an estimated distortion centre), the normalised coordinates it
//! is solved in ([`Problem`], Hartley's normalisation of world and image
//! points), predicting a pixel with its Jacobian, and Levenberg–Marquardt.

use super::{Correspondence, FitOptions, Model};
use crate::calib::Distortion;
use crate::calib::linalg::cholesky_solve;
use crate::geom::Mat3;
use crate::geom::Vec2;
use crate::geom::mat3::mul;

/// Most parameters of any model.
pub(super) const P: usize = 12;

/// Parameters in normalised coordinates: the homography's first eight
/// entries (h33 = 1), then k1, k2, then the shift of the distortion centre
/// in units of the normalisation length (when it is estimated).
pub(super) type Params = [f64; P];

/// Jacobian of one predicted pixel.
pub(super) type Jac = [[f64; P]; 2];

/// Weight of the prior that keeps an estimated distortion centre near its
/// start: a shift of a tenth of the normalisation length costs as much as
/// a 1 px residual. It only matters when the points barely constrain the
/// centre (little distortion).
const CENTER_PRIOR: f64 = 10.0;

/// One correspondence in the fit's coordinates: normalised world point and
/// the observed pixel.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    pub(super) pn: Vec2,
    pub(super) target: Vec2,
}

/// The normalisations of a fit.
pub(super) struct Problem {
    pub(super) model: Model,
    pub(super) w_mean: Vec2,
    pub(super) w_scale: f64,
    pub(super) i_mean: Vec2,
    pub(super) i_scale: f64,
    /// Distortion centre (the start when estimated) and normalisation
    /// length, pixels.
    pub(super) center: Vec2,
    pub(super) radius: f64,
    /// Whether the distortion centre is estimated too.
    pub(super) fit_center: bool,
}

/// Mean and the scale that makes the mean distance from it √2 (Hartley).
fn normalisation(pts: impl Iterator<Item = Vec2> + Clone) -> (Vec2, f64) {
    let n = pts.clone().count().max(1) as f64;
    let mean = pts.clone().fold(Vec2::ZERO, |a, p| a + p) * (1.0 / n);
    let d = pts.map(|p| (p - mean).length()).sum::<f64>() / n;
    (
        mean,
        if d > 0.0 {
            std::f64::consts::SQRT_2 / d
        } else {
            1.0
        },
    )
}

impl Problem {
    pub(super) fn new(points: &[Correspondence], opts: &FitOptions) -> Problem {
        let (w_mean, w_scale) = normalisation(points.iter().map(|c| c.world));
        let (i_mean, i_scale) = normalisation(points.iter().map(|c| c.image));
        let (lo, hi) = points.iter().fold(
            (
                Vec2::new(f64::INFINITY, f64::INFINITY),
                Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
            ),
            |(lo, hi), c| {
                (
                    Vec2::new(lo.x.min(c.image.x), lo.y.min(c.image.y)),
                    Vec2::new(hi.x.max(c.image.x), hi.y.max(c.image.y)),
                )
            },
        );
        let size = opts
            .image_size
            .map(|[w, h]| Vec2::new(f64::from(w), f64::from(h)));
        let center = opts
            .principal_point
            .filter(|p| p.is_finite())
            .or(size.map(|s| s * 0.5))
            .unwrap_or((lo + hi) * 0.5);
        let radius = match size {
            Some(s) => 0.5 * s.length(),
            None => points
                .iter()
                .map(|c| (c.image - center).length())
                .fold(0.0, f64::max),
        };
        Problem {
            model: opts.model,
            w_mean,
            w_scale,
            i_mean,
            i_scale,
            center,
            radius: if radius > 1e-9 { radius } else { 1.0 },
            fit_center: opts.model == Model::Radial
                && opts.principal_point.is_none()
                && opts.image_size.is_none(),
        }
    }

    pub(super) fn np(&self) -> usize {
        self.model.n_params() + if self.fit_center { 2 } else { 0 }
    }

    /// The distortion centre for parameters `th`.
    pub(super) fn center_of(&self, th: &Params) -> Vec2 {
        if self.fit_center {
            self.center + Vec2::new(th[10], th[11]) * self.radius
        } else {
            self.center
        }
    }

    pub(super) fn world(&self, p: Vec2) -> Vec2 {
        (p - self.w_mean) * self.w_scale
    }

    pub(super) fn image(&self, p: Vec2) -> Vec2 {
        (p - self.i_mean) * self.i_scale
    }

    /// Predicted pixel of normalised world point `pn`, and its Jacobian
    /// with respect to the parameters; `None` behind the camera.
    pub(super) fn predict(&self, th: &Params, pn: Vec2, jac: Option<&mut Jac>) -> Option<Vec2> {
        let q0 = th[0] * pn.x + th[1] * pn.y + th[2];
        let q1 = th[3] * pn.x + th[4] * pn.y + th[5];
        let q2 = th[6] * pn.x + th[7] * pn.y + 1.0;
        if q2.is_nan() || q2 <= 1e-12 || !q0.is_finite() || !q1.is_finite() {
            return None;
        }
        let (ux, uy) = (q0 / q2, q1 / q2);
        let u = Vec2::new(
            ux / self.i_scale + self.i_mean.x,
            uy / self.i_scale + self.i_mean.y,
        );
        // d(pixel)/d(h): the normalised derivative scaled back to pixels.
        let dh = |j: &mut Jac, s: f64| {
            let k = s / (q2 * self.i_scale);
            j[0][0] = pn.x * k;
            j[0][1] = pn.y * k;
            j[0][2] = k;
            j[0][6] = -ux * pn.x * k;
            j[0][7] = -ux * pn.y * k;
            j[1][3] = pn.x * k;
            j[1][4] = pn.y * k;
            j[1][5] = k;
            j[1][6] = -uy * pn.x * k;
            j[1][7] = -uy * pn.y * k;
        };
        if self.model == Model::Homography {
            if let Some(j) = jac {
                *j = [[0.0; P]; 2];
                dh(j, 1.0);
            }
            return Some(u);
        }
        let (k1, k2) = (th[8], th[9]);
        let center = self.center_of(th);
        let d = (u - center) * (1.0 / self.radius);
        let r2 = d.dot(d);
        let g = 1.0 + r2 * (k1 + r2 * k2);
        let out = center + d * (g * self.radius);
        if let Some(j) = jac {
            let mut jh = [[0.0; P]; 2];
            dh(&mut jh, 1.0);
            // d(out)/d(u) = g·I + 2 g'(r²) d dᵀ
            let gp = k1 + 2.0 * r2 * k2;
            let m = [
                [g + 2.0 * gp * d.x * d.x, 2.0 * gp * d.x * d.y],
                [2.0 * gp * d.x * d.y, g + 2.0 * gp * d.y * d.y],
            ];
            for c in 0..8 {
                j[0][c] = m[0][0] * jh[0][c] + m[0][1] * jh[1][c];
                j[1][c] = m[1][0] * jh[0][c] + m[1][1] * jh[1][c];
            }
            j[0][8] = self.radius * d.x * r2;
            j[1][8] = self.radius * d.y * r2;
            j[0][9] = self.radius * d.x * r2 * r2;
            j[1][9] = self.radius * d.y * r2 * r2;
            // d(out)/d(centre) = I − d(out)/d(u), times the length unit.
            j[0][10] = self.radius * (1.0 - m[0][0]);
            j[1][10] = self.radius * -m[1][0];
            j[0][11] = self.radius * -m[0][1];
            j[1][11] = self.radius * (1.0 - m[1][1]);
        }
        Some(out)
    }

    /// Sum of squared residuals; `None` when a point falls behind the camera.
    pub(super) fn cost(&self, data: &[Sample], th: &Params) -> Option<f64> {
        let mut c = 0.0;
        for s in data {
            let p = self.predict(th, s.pn, None)?;
            c += (p - s.target).dot(p - s.target);
        }
        if self.fit_center {
            c += CENTER_PRIOR * CENTER_PRIOR * (th[10] * th[10] + th[11] * th[11]);
        }
        c.is_finite().then_some(c)
    }

    /// Residuals in pixels (∞ behind the camera).
    pub(super) fn residuals(&self, data: &[Sample], th: &Params) -> Vec<f64> {
        data.iter()
            .map(|s| match self.predict(th, s.pn, None) {
                Some(p) => (p - s.target).length(),
                None => f64::INFINITY,
            })
            .collect()
    }

    /// JᵀJ and Jᵀr at `th` (row-major `np × np`, full).
    pub(super) fn normal_equations(&self, data: &[Sample], th: &Params) -> Option<(Vec<f64>, Vec<f64>)> {
        let np = self.np();
        let mut a = vec![0.0; np * np];
        let mut g = vec![0.0; np];
        let mut j = [[0.0; P]; 2];
        for s in data {
            let p = self.predict(th, s.pn, Some(&mut j))?;
            let r = [p.x - s.target.x, p.y - s.target.y];
            for row in 0..2 {
                for x in 0..np {
                    g[x] += j[row][x] * r[row];
                    for y in x..np {
                        a[x * np + y] += j[row][x] * j[row][y];
                    }
                }
            }
        }
        if self.fit_center {
            for i in [10, 11] {
                a[i * np + i] += CENTER_PRIOR * CENTER_PRIOR;
                g[i] += CENTER_PRIOR * CENTER_PRIOR * th[i];
            }
        }
        mirror_upper(&mut a, np);
        Some((a, g))
    }

    /// Levenberg–Marquardt from `start`; `None` when the start puts a
    /// point behind the camera or nothing is finite.
    pub(super) fn lm(&self, data: &[Sample], start: &Params, max_iter: usize) -> Option<(Params, f64)> {
        levenberg_marquardt(
            self.np(),
            start,
            max_iter,
            1e-24 * data.len() as f64,
            |th| self.cost(data, th),
            |th| self.normal_equations(data, th),
        )
    }

    /// Pixel homography → parameters (`None` when h33 vanishes there).
    pub(super) fn params_of_pixel_h(&self, h: &Mat3) -> Option<Params> {
        let (m, s) = (self.i_mean, self.i_scale);
        let ti: Mat3 = [[s, 0.0, -s * m.x], [0.0, s, -s * m.y], [0.0, 0.0, 1.0]];
        let (m, s) = (self.w_mean, self.w_scale);
        let tw_inv: Mat3 = [[1.0 / s, 0.0, m.x], [0.0, 1.0 / s, m.y], [0.0, 0.0, 1.0]];
        let hn = mul(&mul(&ti, h), &tw_inv);
        let norm = hn.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
        if hn[2][2].is_nan() || hn[2][2].abs() <= 1e-9 * norm {
            return None;
        }
        let k = 1.0 / hn[2][2];
        let mut p = [0.0; P];
        for (i, v) in hn.iter().flatten().take(8).enumerate() {
            p[i] = v * k;
        }
        p.iter().all(|v| v.is_finite()).then_some(p)
    }

    /// Parameters → pixel homography (w = 1 at the points' centroid) and
    /// distortion.
    pub(super) fn to_pixel(&self, th: &Params) -> (Mat3, Option<Distortion>) {
        let hn: Mat3 = [[th[0], th[1], th[2]], [th[3], th[4], th[5]], [th[6], th[7], 1.0]];
        let (m, s) = (self.i_mean, self.i_scale);
        let ti_inv: Mat3 = [[1.0 / s, 0.0, m.x], [0.0, 1.0 / s, m.y], [0.0, 0.0, 1.0]];
        let (m, s) = (self.w_mean, self.w_scale);
        let tw: Mat3 = [[s, 0.0, -s * m.x], [0.0, s, -s * m.y], [0.0, 0.0, 1.0]];
        let h = mul(&mul(&ti_inv, &hn), &tw);
        let d = (self.model == Model::Radial)
            .then(|| Distortion::radial(self.center_of(th), self.radius, th[8], th[9]));
        (h, d)
    }
}

/// Fills the lower triangle of the `np`×`np` row-major matrix `a` from
/// its upper one (normal equations are built on the upper triangle only).
pub(super) fn mirror_upper(a: &mut [f64], np: usize) {
    for x in 0..np {
        for y in 0..x {
            a[x * np + y] = a[y * np + x];
        }
    }
}

/// Levenberg–Marquardt over the first `np` parameters from `start` (the
/// rest held at 0): `cost` is the objective (`None`: not allowed there),
/// `normal` gives JᵀJ (row-major `np × np`) and Jᵀr; stops below
/// `min_cost` or when a step no longer improves.
pub(super) fn levenberg_marquardt(
    np: usize,
    start: &Params,
    max_iter: usize,
    min_cost: f64,
    cost: impl Fn(&Params) -> Option<f64>,
    normal: impl Fn(&Params) -> Option<(Vec<f64>, Vec<f64>)>,
) -> Option<(Params, f64)> {
    let mut th = *start;
    for v in &mut th[np..] {
        *v = 0.0;
    }
    let mut c = cost(&th)?;
    let mut lambda = 1e-3;
    for _ in 0..max_iter {
        if c <= min_cost {
            break;
        }
        let (a, g) = normal(&th)?;
        let max_diag = (0..np).map(|i| a[i * np + i]).fold(0.0, f64::max);
        let mut improved = false;
        while lambda < 1e16 {
            let mut m = a.clone();
            for i in 0..np {
                m[i * np + i] += lambda * a[i * np + i].max(1e-12 * max_diag);
            }
            let neg_g: Vec<f64> = g.iter().map(|v| -v).collect();
            let Some(delta) = cholesky_solve(&m, &neg_g, np) else {
                lambda *= 10.0;
                continue;
            };
            let mut cand = th;
            for i in 0..np {
                cand[i] += delta[i];
            }
            match cost(&cand) {
                Some(nc) if nc < c => {
                    let rel = (c - nc) / c;
                    let step: f64 = delta.iter().map(|d| d * d).sum::<f64>().sqrt();
                    let size: f64 = th[..np].iter().map(|v| v * v).sum::<f64>().sqrt();
                    th = cand;
                    c = nc;
                    lambda = (lambda * 0.1).max(1e-12);
                    improved = rel > 1e-15 && step > 1e-15 * (1.0 + size);
                    break;
                }
                _ => lambda *= 10.0,
            }
        }
        if !improved {
            break;
        }
    }
    Some((th, c))
}
