//! The `pinhole` model: a full camera fitted to image ↔ world points on
//! the floor and at known heights (issue 33). The result is
//! [`Calibration::from_camera`]'s, so the floor and heights map through
//! one camera.
//!
//! The camera: one focal length (square pixels, no skew), the principal
//! point, OpenCV's radial terms k1, k2, the rotation and the position.
//! With every point on the floor the principal point is held at its start
//! (the given one, else the image centre): one view of a plane determines
//! only the focal length besides the pose. With points at heights it is
//! estimated too (unless given), held near the image centre by a weak
//! prior where the points barely constrain it.
//!
//! Steps:
//! 1. Checks (`checks`): enough points (6), finite, no duplicates, image
//!    points not on a line, world points not on a line nor in one plane
//!    other than the floor.
//! 2. Starts (`start`): from the floor points' homography (Zhang's focal
//!    length, and a spread of others) and from a DLT of the projection
//!    matrix when the points span space. Each is refined by
//!    Levenberg–Marquardt on the reprojection error (`model`), the best
//!    refined further.
//! 3. Outliers, with 12 points or more: residuals scaled by their leverage
//!    (studentised) beyond 4σ (more for many points) and 1 px are flagged;
//!    `lmeds` and `ransac` (flagging on the raw residual beyond the
//!    threshold) leave the worst flagged point out and refit, one at a
//!    time, while one is flagged.
//! 4. Checks on the solution: every used point in front of the camera and
//!    inside the lens's one-to-one region, the parameters determined (a
//!    floor seen square-on leaves the focal length and the distance
//!    undetermined: the error says to add points at heights), the camera
//!    above the floor. A left-handed world frame has no camera: refused.
//! 5. Report: residuals, leave-one-out residuals (exact refits up to 300
//!    used points, the linearised form beyond), the camera itself.

mod checks;
mod model;
mod start;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

use super::report::{CalibReport, PointNote, outlier_warnings, rms};
use super::robust::{OUTLIER_MIN_PX, RAYLEIGH_MEDIAN, median, outlier_sigmas};
use super::{Correspondence, Correspondence3, Fit, FitOptions, Method, Model, default_ransac_threshold};
use crate::calib::linalg::cholesky_solve;
use crate::calib::{CalibError, Calibration};
use crate::geom::Vec2;

use model::{Cam, Problem, Sample};

/// Up to this many used points, leave-one-out refits every point.
const EXACT_LOO_MAX: usize = 300;
/// A direction of the normal equations (as a correlation matrix) with an
/// eigenvalue below this is undetermined.
const UNDETERMINED: f64 = 1e-10;

/// Fits a full pinhole camera to points in space (module docs).
pub fn fit_camera(points: &[Correspondence3], opts: &FitOptions) -> Result<Fit, CalibError> {
    let opts = &FitOptions {
        model: Model::Pinhole,
        ..opts.clone()
    };
    checks::check_points3(points, opts.method != Method::LeastSquares)?;
    let mut warnings = Vec::new();
    let (c0, s) = centre_and_length(points, opts, &mut warnings);
    let on_floor = points.iter().all(|c| c.world[2] == 0.0);
    let fit_pp = !on_floor && opts.principal_point.is_none();
    if on_floor {
        warnings.push(format!(
            "every point is on the floor: the principal point is taken as ({:.1}, {:.1}){}; points at \
             known heights (a z column) let it be fitted",
            c0.x,
            c0.y,
            if opts.principal_point.is_some() {
                ""
            } else {
                " (the image centre)"
            }
        ));
    }
    let problem = Problem::new(points, s, c0, fit_pp);
    let data: Vec<Sample> = points.iter().map(|c| problem.sample(c)).collect();

    // Starts, each refined; the best refined further.
    let found = start::starts(points, opts, c0, s);
    let mut best: Option<(Cam, f64)> = None;
    for st in &found.cams {
        let cam = problem.cam_of(*st);
        if let Some((c, cost)) = problem.lm(&data, &cam, 100)
            && above_floor(&problem, &c)
            && best.as_ref().is_none_or(|b| cost < b.1)
        {
            best = Some((c, cost));
        }
    }
    let Some((mut cam, _)) = best else {
        return Err(if found.mirrored {
            CalibError::LeftHanded
        } else if found.cams.is_empty() {
            CalibError::RankDeficient(
                "no camera to start from: give at least 4 floor points (z = 0) not on one line, or 6 \
                 points not all in one plane"
                    .into(),
            )
        } else {
            CalibError::NoConvergence(
                "no starting camera could be refined with every point in front of it".into(),
            )
        });
    };
    if let Some((c, _)) = problem.lm(&data, &cam, 300) {
        cam = c;
    }

    // Outliers: the worst flagged point left out and the rest refitted, one
    // at a time while one is flagged; a robust method keeps that fit, least
    // squares keeps every point and reports the flags.
    let n = points.len();
    let check = n >= 2 * Model::Pinhole.min_points();
    if !check {
        warnings.push(format!(
            "{n} points are too few to check for outliers ({} or more needed)",
            2 * Model::Pinhole.min_points()
        ));
    }
    let ransac = (opts.method == Method::Ransac).then(|| {
        opts.ransac_threshold_px.unwrap_or_else(|| {
            let flat: Vec<Correspondence> = points
                .iter()
                .map(|c| Correspondence {
                    image: c.image,
                    world: Vec2::new(c.world[0], c.world[1]),
                })
                .collect();
            default_ransac_threshold(&flat, opts.image_size)
        })
    });
    let (mut kept, mut kept_cam) = (vec![true; n], cam);
    let mut flags = Flags::none(n);
    if check {
        loop {
            flags = flag(&problem, &data, &kept, &kept_cam, ransac);
            let worst = (0..n)
                .filter(|&i| kept[i] && flags.flagged[i])
                .max_by(|&a, &b| flags.scores[a].total_cmp(&flags.scores[b]));
            let left = kept.iter().filter(|&&u| u).count();
            let Some(w) = worst.filter(|_| left > Model::Pinhole.min_points() + 2) else {
                break;
            };
            kept[w] = false;
            match problem.lm(&subset(&data, &kept), &kept_cam, 200) {
                Some((c, _)) => kept_cam = c,
                None => break,
            }
        }
    }
    let used = if opts.method == Method::LeastSquares {
        vec![true; n]
    } else {
        cam = kept_cam;
        kept
    };
    let used_idx: Vec<usize> = (0..n).filter(|&i| used[i]).collect();
    let used_data = subset(&data, &used);
    check_determined(&problem, &used_data, &cam)?;

    // The calibration.
    let (f, pp, k, r, t) = problem.pixels(&cam);
    let kmat = [[f, 0.0, pp.x], [0.0, f, pp.y], [0.0, 0.0, 1.0]];
    let mut calibration = Calibration::from_camera(&kmat, &k, &r, t)?;
    if let Some([w, h]) = opts.image_size {
        calibration = calibration.with_image_size(w, h);
    }
    let residuals: Vec<Option<f64>> = points
        .iter()
        .map(|c| calibration.project3(c.world).map(|p| (p - c.image).length()))
        .collect();
    for &i in &used_idx {
        if residuals[i].is_none() {
            return Err(CalibError::InvalidDistortion(format!(
                "point {i} ({}, {}, {}) falls beyond the radius where the fitted distortion folds over; \
                 the points do not determine the distortion",
                points[i].world[0], points[i].world[1], points[i].world[2]
            )));
        }
    }
    let used_res: Vec<f64> = used_idx.iter().filter_map(|&i| residuals[i]).collect();
    let all_res: Vec<f64> = residuals.iter().flatten().copied().collect();
    let loo = leave_one_out(&problem, &data, &used, &cam, &mut warnings);
    let loo_used: Vec<f64> = used_idx.iter().filter_map(|&i| loo[i]).collect();
    let outliers: Vec<usize> = (0..n).filter(|&i| flags.flagged[i]).collect();
    outlier_warnings(&outliers, n, Model::Pinhole, opts.method, &mut warnings);
    let outlier_points = outliers
        .iter()
        .map(|&i| PointNote {
            index: i,
            u: points[i].image.x,
            v: points[i].image.y,
            x: points[i].world[0],
            y: points[i].world[1],
            z: points[i].world[2],
            residual_px: residuals[i],
            flagged_residual_px: flags.scores[i],
        })
        .collect();
    let report = CalibReport {
        model: Model::Pinhole,
        method: opts.method,
        points: n,
        used: used_idx.len(),
        rms_px: rms(&used_res),
        rms_all_px: rms(&all_res),
        ransac_threshold_px: ransac,
        loo_rms_px: (!loo_used.is_empty()).then(|| rms(&loo_used)),
        max_residual_px: used_res.iter().copied().fold(0.0, f64::max),
        residuals_px: residuals,
        loo_residuals_px: loo,
        excluded: (0..n).filter(|&i| !used[i]).collect(),
        outliers,
        outlier_points,
        outlier_threshold_px: check.then_some(flags.threshold),
        homography: *calibration.homography(),
        distortion: calibration.distortion().copied(),
        warnings,
        left_handed: false,
        camera: calibration.camera(),
    };
    Ok(Fit { calibration, report })
}

/// The principal point's start (the given one, the image centre, else the
/// centre of the image points' bounding box, said) and the length unit of
/// focal length and principal point (half the image's diagonal, else the
/// image points' farthest distance from that centre).
fn centre_and_length(
    points: &[Correspondence3],
    opts: &FitOptions,
    warnings: &mut Vec<String>,
) -> (Vec2, f64) {
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
    let c0 = match (opts.principal_point.filter(|p| p.is_finite()), size) {
        (Some(p), _) => p,
        (None, Some(s)) => s * 0.5,
        (None, None) => {
            warnings.push(
                "no image size: the principal point starts at the centre of the image points; giving \
                 the image size (--image-size) fits better"
                    .into(),
            );
            (lo + hi) * 0.5
        }
    };
    let s = match size {
        Some(s) => 0.5 * s.length(),
        None => points.iter().map(|c| (c.image - c0).length()).fold(0.0, f64::max),
    };
    (c0, if s > 1e-9 { s } else { 1.0 })
}

/// Whether the camera is above the floor (its centre at z > 0).
fn above_floor(problem: &Problem, cam: &Cam) -> bool {
    let (_, _, _, r, t) = problem.pixels(cam);
    let z = -(r[0][2] * t[0] + r[1][2] * t[1] + r[2][2] * t[2]);
    z > 0.0
}

fn subset(data: &[Sample], used: &[bool]) -> Vec<Sample> {
    data.iter()
        .zip(used)
        .filter(|&(_, &u)| u)
        .map(|(s, _)| *s)
        .collect()
}

/// Refuses a camera the points leave undetermined, naming what.
fn check_determined(problem: &Problem, data: &[Sample], cam: &Cam) -> Result<(), CalibError> {
    let Some((val, v)) = problem.weakest(data, cam) else {
        return Err(CalibError::NoConvergence("the solution is not finite".into()));
    };
    if val.is_finite() && val > UNDETERMINED {
        return Ok(());
    }
    let weight = |idx: &[usize]| idx.iter().map(|&i| v[i] * v[i]).sum::<f64>();
    let what = if weight(&[0]) > 0.1 {
        "the focal length and the camera's distance cannot be told apart (the floor is seen square-on): \
         add points at known heights (a z column: goal-post or crossbar tops, a pole)"
    } else if weight(&[1, 2]) > 0.5 {
        "the distortion is not determined by these points: spread them over the picture, out to its edges"
    } else {
        "the camera is not determined by these points: spread them over the floor and add some at known \
         heights"
    };
    Err(CalibError::RankDeficient(what.into()))
}

/// The outlier flags of a fit and what they were decided on.
struct Flags {
    flagged: Vec<bool>,
    scores: Vec<f64>,
    threshold: f64,
}

impl Flags {
    fn none(n: usize) -> Flags {
        Flags {
            flagged: vec![false; n],
            scores: vec![0.0; n],
            threshold: OUTLIER_MIN_PX,
        }
    }
}

/// Flags points: with a RANSAC threshold on the raw residual, else on
/// residuals scaled by leverage beyond a threshold from their spread.
fn flag(problem: &Problem, data: &[Sample], used: &[bool], cam: &Cam, ransac: Option<f64>) -> Flags {
    let n = data.len();
    let res: Vec<f64> = data
        .iter()
        .map(|s| {
            problem
                .predict(cam, s.xn)
                .map_or(f64::INFINITY, |p| (p - s.target).length())
        })
        .collect();
    if let Some(thr) = ransac {
        return Flags {
            flagged: res.iter().map(|&r| r > thr).collect(),
            scores: res,
            threshold: thr,
        };
    }
    let Some(lev) = leverages(problem, data, used, cam) else {
        return Flags::none(n);
    };
    let scores: Vec<f64> = (0..n)
        .map(|i| {
            let tr = lev[i][0][0] + lev[i][1][1];
            let var = if used[i] { (2.0 - tr).max(0.1) } else { 2.0 + tr };
            res[i] * (2.0 / var).sqrt()
        })
        .collect();
    let kept: Vec<f64> = (0..n).filter(|&i| used[i]).map(|i| scores[i]).collect();
    let dof = (kept.len() as f64 - problem.np() as f64 / 2.0).max(1.0);
    let sigma = median(&kept) / RAYLEIGH_MEDIAN * (1.0 + 5.0 / dof);
    let k = outlier_sigmas(n);
    let mut threshold = (k * sigma).max(OUTLIER_MIN_PX);
    // Again from the mean square of those within it (E|s|² = 2σ²).
    let clean: Vec<f64> = kept.iter().copied().filter(|&s| s <= threshold).collect();
    if !clean.is_empty() {
        let sigma = (clean.iter().map(|s| s * s).sum::<f64>() / (2.0 * clean.len() as f64)).sqrt();
        threshold = (k * sigma).max(OUTLIER_MIN_PX);
    }
    Flags {
        flagged: (0..n)
            .map(|i| scores[i] > threshold && res[i] > OUTLIER_MIN_PX)
            .collect(),
        scores,
        threshold,
    }
}

/// Each point's 2 × 2 block of the hat matrix `Jᵢ A⁻¹ Jᵢᵀ`, `A = JᵀJ` over
/// the used points (prior included).
fn leverages(problem: &Problem, data: &[Sample], used: &[bool], cam: &Cam) -> Option<Vec<[[f64; 2]; 2]>> {
    let np = problem.np();
    let (a, _) = problem.normal_equations(&subset(data, used), cam)?;
    let (jac, _) = problem.jacobian(data, cam)?;
    (0..data.len())
        .map(|i| {
            let (j0, j1) = (&jac[2 * i][..np], &jac[2 * i + 1][..np]);
            let x0 = cholesky_solve(&a, j0, np)?;
            let x1 = cholesky_solve(&a, j1, np)?;
            let dot = |j: &[f64], x: &[f64]| j.iter().zip(x).map(|(a, b)| a * b).sum::<f64>();
            Some([[dot(j0, &x0), dot(j0, &x1)], [dot(j1, &x0), dot(j1, &x1)]])
        })
        .collect()
}

/// Leave-one-out residual of each used point (refits, or linearised for
/// many points; `None` for points left out).
fn leave_one_out(
    problem: &Problem,
    data: &[Sample],
    used: &[bool],
    cam: &Cam,
    warnings: &mut Vec<String>,
) -> Vec<Option<f64>> {
    let n = data.len();
    let mut loo = vec![None; n];
    let kept = used.iter().filter(|&&u| u).count();
    if kept <= Model::Pinhole.min_points() {
        warnings.push(format!(
            "leave-one-out needs more than {} points for the pinhole model",
            Model::Pinhole.min_points()
        ));
        return loo;
    }
    if kept <= EXACT_LOO_MAX {
        for i in (0..n).filter(|&i| used[i]) {
            let mut without = used.to_vec();
            without[i] = false;
            loo[i] = problem
                .lm(&subset(data, &without), cam, 100)
                .and_then(|(c, _)| problem.predict(&c, data[i].xn))
                .map(|p| (p - data[i].target).length());
        }
        return loo;
    }
    warnings.push(format!(
        "leave-one-out residuals are linearised (more than {EXACT_LOO_MAX} points)"
    ));
    let Some(lev) = leverages(problem, data, used, cam) else {
        return loo;
    };
    for i in (0..n).filter(|&i| used[i]) {
        let Some(p) = problem.predict(cam, data[i].xn) else {
            continue;
        };
        let r = p - data[i].target;
        // r_loo = (I − Hᵢᵢ)⁻¹ rᵢ
        let h = lev[i];
        let m = [[1.0 - h[0][0], -h[0][1]], [-h[1][0], 1.0 - h[1][1]]];
        let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
        if det.abs() > 1e-12 {
            let lx = (m[1][1] * r.x - m[0][1] * r.y) / det;
            let ly = (-m[1][0] * r.x + m[0][0] * r.y) / det;
            loo[i] = Some(lx.hypot(ly));
        }
    }
    loo
}
