//! The pinhole model's parameters, the normalised coordinates they are
//! solved in, projection, and Levenberg–Marquardt on the reprojection
//! error.
//!
//! Parameters ([`Params`], first `np` used):
//!
//! | index | parameter |
//! |---|---|
//! | 0 | focal length / `s` (square pixels, no skew) |
//! | 1, 2 | k1, k2 (OpenCV's, normalised by the focal length) |
//! | 3–5 | rotation: a Rodrigues vector ω applied after a base rotation `R₀` |
//! | 6–8 | translation of the normalised world, `τ = (R·m + t)/L` |
//! | 9, 10 | principal point − its start, / `s` (when estimated) |
//!
//! `s` is the picture's half diagonal (else the image points' extent),
//! `m` and `L` centre and scale the world points: a world point `X` is
//! `Xₙ = (X − m)/L`, and the camera sees it at `R·Xₙ + τ = (R·X + t)/L`.
//! The base rotation keeps ω small, so the Rodrigues map stays far from
//! its singularity; a solution is re-based before it is refined again.
//!
//! The Jacobian is by central differences (11 parameters, a few dozen
//! points: cheap). A point behind the camera, or beyond the radius where
//! the radial polynomial folds over, has no prediction: the solver never
//! steps there. An estimated principal point is held near its start by a
//! weak prior (a shift of a tenth of `s` costs as much as a 1 px
//! residual), which only matters when the points barely constrain it.

use crate::calib::camera::rodrigues;
use crate::calib::linalg::symmetric_eigen;
use crate::geom::Mat3;
use crate::geom::Vec2;
use crate::geom::mat3::{mul, mul_vec};
use crate::geom::vec3::{Vec3, add, scale, sub};

use super::super::model::{P, Params, levenberg_marquardt, mirror_upper};
use crate::calib::fit::Correspondence3;

/// Weight of the principal point's prior (module docs).
const PP_PRIOR: f64 = 10.0;

/// One point in the fit's coordinates: normalised world point and the
/// observed pixel.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    pub(super) xn: Vec3,
    pub(super) target: Vec2,
}

/// A camera in the fit's terms: the base rotation and the parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cam {
    pub(super) r0: Mat3,
    pub(super) th: Params,
}

/// A camera in pixels and world units: `(f, principal point, [k1, k2], R, t)`.
pub(super) type Pixels = (f64, Vec2, [f64; 2], Mat3, Vec3);

/// The normalisations of a pinhole fit.
#[derive(Clone, Debug)]
pub(super) struct Problem {
    pub(super) w_mean: Vec3,
    pub(super) w_scale: f64,
    /// Length unit of the focal length and principal point, pixels.
    pub(super) s: f64,
    /// The principal point's start (and prior's centre).
    pub(super) c0: Vec2,
    /// Whether the principal point is estimated.
    pub(super) fit_pp: bool,
}

impl Problem {
    pub(super) fn new(points: &[Correspondence3], s: f64, c0: Vec2, fit_pp: bool) -> Problem {
        let n = points.len().max(1) as f64;
        let w_mean = points
            .iter()
            .fold([0.0; 3], |a, c| add(a, c.world))
            .map(|v| v / n);
        let spread = points
            .iter()
            .map(|c| {
                let d = sub(c.world, w_mean);
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
            })
            .sum::<f64>()
            / n;
        Problem {
            w_mean,
            w_scale: if spread > 0.0 { spread } else { 1.0 },
            s: if s > 0.0 { s } else { 1.0 },
            c0,
            fit_pp,
        }
    }

    /// Parameters solved for.
    pub(super) fn np(&self) -> usize {
        if self.fit_pp { 11 } else { 9 }
    }

    pub(super) fn sample(&self, c: &Correspondence3) -> Sample {
        Sample {
            xn: sub(c.world, self.w_mean).map(|v| v / self.w_scale),
            target: c.image,
        }
    }

    /// The fit's camera of a camera in pixels and world units.
    pub(super) fn cam_of(&self, (f, pp, k, r, t): Pixels) -> Cam {
        let tau = add(mul_vec(&r, self.w_mean), t).map(|v| v / self.w_scale);
        let d = (pp - self.c0) * (1.0 / self.s);
        let mut th = [0.0; P];
        th[0] = f / self.s;
        th[1] = k[0];
        th[2] = k[1];
        th[6..9].copy_from_slice(&tau);
        if self.fit_pp {
            th[9] = d.x;
            th[10] = d.y;
        }
        Cam { r0: r, th }
    }

    /// The camera in pixels and world units.
    pub(super) fn pixels(&self, cam: &Cam) -> Pixels {
        let th = &cam.th;
        let r = rotation(cam);
        let t = sub(
            scale([th[6], th[7], th[8]], self.w_scale),
            mul_vec(&r, self.w_mean),
        );
        (th[0] * self.s, self.pp(th), [th[1], th[2]], r, t)
    }

    /// The same camera with ω folded into the base rotation.
    pub(super) fn rebased(&self, cam: &Cam) -> Cam {
        let mut th = cam.th;
        th[3..6].fill(0.0);
        Cam {
            r0: rotation(cam),
            th,
        }
    }

    fn pp(&self, th: &Params) -> Vec2 {
        if self.fit_pp {
            self.c0 + Vec2::new(th[9], th[10]) * self.s
        } else {
            self.c0
        }
    }

    /// The predicted pixel of every sample, `None` when one has none.
    fn predict_all(&self, r0: &Mat3, th: &Params, data: &[Sample], out: &mut Vec<Vec2>) -> Option<()> {
        out.clear();
        let view = View::new(self, r0, th);
        for s in data {
            out.push(view.project(s.xn)?);
        }
        Some(())
    }

    /// The predicted pixel of one sample.
    pub(super) fn predict(&self, cam: &Cam, xn: Vec3) -> Option<Vec2> {
        View::new(self, &cam.r0, &cam.th).project(xn)
    }

    fn prior(&self, th: &Params) -> f64 {
        if self.fit_pp {
            PP_PRIOR * PP_PRIOR * (th[9] * th[9] + th[10] * th[10])
        } else {
            0.0
        }
    }

    /// Sum of squared residuals plus the prior; `None` when a point has no
    /// prediction.
    pub(super) fn cost(&self, data: &[Sample], r0: &Mat3, th: &Params) -> Option<f64> {
        let mut pred = Vec::with_capacity(data.len());
        self.predict_all(r0, th, data, &mut pred)?;
        let c: f64 = pred
            .iter()
            .zip(data)
            .map(|(p, s)| (*p - s.target).dot(*p - s.target))
            .sum();
        let c = c + self.prior(th);
        c.is_finite().then_some(c)
    }

    /// The Jacobian of every sample's predicted pixel (2 rows each,
    /// `np` columns) by central differences, and the predictions.
    pub(super) fn jacobian(&self, data: &[Sample], cam: &Cam) -> Option<(Vec<[f64; P]>, Vec<Vec2>)> {
        let np = self.np();
        let mut at = Vec::with_capacity(data.len());
        self.predict_all(&cam.r0, &cam.th, data, &mut at)?;
        let mut jac = vec![[0.0; P]; 2 * data.len()];
        let (mut plus, mut minus) = (Vec::new(), Vec::new());
        for j in 0..np {
            let h = 1e-6 * (1.0 + cam.th[j].abs());
            let (mut a, mut b) = (cam.th, cam.th);
            a[j] += h;
            b[j] -= h;
            let up = self.predict_all(&cam.r0, &a, data, &mut plus).is_some();
            let down = self.predict_all(&cam.r0, &b, data, &mut minus).is_some();
            let (hi, lo, span) = match (up, down) {
                (true, true) => (&plus, &minus, 2.0 * h),
                (true, false) => (&plus, &at, h),
                (false, true) => (&at, &minus, h),
                (false, false) => return None,
            };
            for i in 0..data.len() {
                let d = (hi[i] - lo[i]) * (1.0 / span);
                jac[2 * i][j] = d.x;
                jac[2 * i + 1][j] = d.y;
            }
        }
        Some((jac, at))
    }

    /// JᵀJ and Jᵀr (row-major `np × np`, full), the prior included.
    pub(super) fn normal_equations(&self, data: &[Sample], cam: &Cam) -> Option<(Vec<f64>, Vec<f64>)> {
        let np = self.np();
        let (jac, at) = self.jacobian(data, cam)?;
        let mut a = vec![0.0; np * np];
        let mut g = vec![0.0; np];
        for (i, s) in data.iter().enumerate() {
            let r = at[i] - s.target;
            for (row, res) in [(&jac[2 * i], r.x), (&jac[2 * i + 1], r.y)] {
                for x in 0..np {
                    g[x] += row[x] * res;
                    for y in x..np {
                        a[x * np + y] += row[x] * row[y];
                    }
                }
            }
        }
        if self.fit_pp {
            for i in [9, 10] {
                a[i * np + i] += PP_PRIOR * PP_PRIOR;
                g[i] += PP_PRIOR * PP_PRIOR * cam.th[i];
            }
        }
        mirror_upper(&mut a, np);
        Some((a, g))
    }

    /// Levenberg–Marquardt from `start` (re-based first); `None` when the
    /// start has a point without a prediction.
    pub(super) fn lm(&self, data: &[Sample], start: &Cam, max_iter: usize) -> Option<(Cam, f64)> {
        let start = self.rebased(start);
        let r0 = start.r0;
        let (th, cost) = levenberg_marquardt(
            self.np(),
            &start.th,
            max_iter,
            1e-24 * data.len() as f64,
            |th| self.cost(data, &r0, th),
            |th| self.normal_equations(data, &Cam { r0, th: *th }),
        )?;
        Some((self.rebased(&Cam { r0, th }), cost))
    }

    /// The smallest eigenvalue of the normal equations scaled to a
    /// correlation matrix, and its eigenvector: near zero, the points
    /// leave the direction it names undetermined.
    pub(super) fn weakest(&self, data: &[Sample], cam: &Cam) -> Option<(f64, Vec<f64>)> {
        let np = self.np();
        let (a, _) = self.normal_equations(data, cam)?;
        let mut c = vec![0.0; np * np];
        for x in 0..np {
            for y in 0..np {
                let d = (a[x * np + x] * a[y * np + y]).sqrt();
                c[x * np + y] = if d > 0.0 { a[x * np + y] / d } else { 0.0 };
            }
        }
        let (vals, vecs) = symmetric_eigen(&c, np);
        Some((vals[0], (0..np).map(|r| vecs[r * np]).collect()))
    }
}

/// The rotation of a fit's camera.
fn rotation(cam: &Cam) -> Mat3 {
    mul(&rodrigues([cam.th[3], cam.th[4], cam.th[5]]), &cam.r0)
}

/// One set of parameters, ready to project many points.
struct View {
    r: Mat3,
    tau: Vec3,
    f: f64,
    pp: Vec2,
    k1: f64,
    k2: f64,
}

impl View {
    fn new(p: &Problem, r0: &Mat3, th: &Params) -> View {
        View {
            r: mul(&rodrigues([th[3], th[4], th[5]]), r0),
            tau: [th[6], th[7], th[8]],
            f: th[0] * p.s,
            pp: p.pp(th),
            k1: th[1],
            k2: th[2],
        }
    }

    /// The pixel of normalised world point `xn`; `None` behind the camera
    /// or beyond the lens's fold-over radius.
    fn project(&self, xn: Vec3) -> Option<Vec2> {
        let c = add(mul_vec(&self.r, xn), self.tau);
        if c[2].is_nan() || c[2] <= 1e-9 {
            return None;
        }
        let (x, y) = (c[0] / c[2], c[1] / c[2]);
        let r2 = x * x + y * y;
        if !rises_to(self.k1, self.k2, r2) {
            return None;
        }
        let g = 1.0 + r2 * (self.k1 + self.k2 * r2);
        let p = Vec2::new(self.pp.x + self.f * x * g, self.pp.y + self.f * y * g);
        p.is_finite().then_some(p)
    }
}

/// Whether the radial polynomial `r·(1 + k1 r² + k2 r⁴)` rises all the way
/// from the centre to a little beyond radius² `r2` (the lens keeps points
/// only short of its first fold): its slope `1 + 3k1 u + 5k2 u²` (`u = r²`)
/// stays positive on `[0, 1.005·r2]`.
pub(super) fn rises_to(k1: f64, k2: f64, r2: f64) -> bool {
    let u = 1.005 * r2;
    let slope = |u: f64| 1.0 + u * (3.0 * k1 + 5.0 * k2 * u);
    if slope(u).is_nan() || slope(u) <= 0.0 {
        return false;
    }
    // A minimum inside the interval (k2 > 0, k1 < 0).
    if k2 > 0.0 {
        let v = -3.0 * k1 / (10.0 * k2);
        if v > 0.0 && v < u && slope(v) <= 0.0 {
            return false;
        }
    }
    true
}
