//! Fitting a calibration to image ↔ world point correspondences, with
//! residuals, leave-one-out error and outlier flags.
//!
//! Models: `homography` (8 parameters, ≥ 4 points), `pinhole` (a full
//! camera from points on the floor and at known heights: `pinhole`'s own
//! steps) and `radial`: the
//! homography followed by radial distortion `k1, k2` about a centre (the
//! given principal point, else the image centre), normalised by one length
//! (half the image diagonal); 10 parameters, ≥ 6 points. Without an image
//! size or principal point the centre is estimated too (2 more parameters,
//! starting at the centre of the image points' bounding box and held there
//! by a weak prior when the points do not constrain it), normalised by the
//! distance to the farthest image point.
//!
//! Steps:
//! 1. Checks: enough points, all finite, no duplicates, not all on a line,
//!    and a direct linear transform (normalised DLT) of full rank.
//! 2. Start: OpenCV's `findHomography` (least squares, RANSAC or LMedS).
//! 3. Robust pass, whatever the method: a least-median-of-squares fit
//!    (OpenCV LMedS for the homography; random 6-point samples refined by
//!    Levenberg–Marquardt for the radial model), refined on its inliers.
//!    A point is flagged when its residual, scaled by its leverage
//!    (studentised), exceeds 4 standard deviations (more for many points,
//!    keeping false flags rare; σ estimated from the median residual, then
//!    from the inliers' mean square) and 1 px, so a mislabelled point is
//!    found rather than averaged in. With RANSAC the given threshold on the raw
//!    residual decides instead.
//! 4. Final fit: Levenberg–Marquardt on the reprojection error in pixels,
//!    over all points (`lsq`) or over the unflagged ones (`ransac`,
//!    `lmeds`), in normalised coordinates (Hartley) for conditioning.
//! 5. Checks on the solution: every used point in front of the camera, the
//!    distortion one-to-one over the points, and the parameters determined
//!    (no flat direction in the normal equations). A solution that mirrors
//!    the image (seen from above, a right-handed world with z up maps with
//!    negative orientation to pixels with v down) means a left-handed world
//!    frame: accepted, and reported ([`CalibReport::left_handed`]).
//! 6. Report: per-point residuals, RMS, and leave-one-out residuals (each
//!    used point predicted by a refit without it; for more than 300 points
//!    the linearised hat-matrix form of the same).
//!
//! One file per job: `checks` (steps 1 and 5), `model` (the parameters,
//! the normalised coordinates they live in, prediction and
//! Levenberg–Marquardt), `start` (step 2 and the DLT), `robust` (step 3),
//! `report` (step 6 and the warnings); [`fit`] runs the steps. `pinhole`
//! fits the pinhole model ([`fit_camera`]). `lines`
//! fits the same models to pixels found on painted lines (distances across
//! the lines), for [`crate::calib::refine`].

mod checks;
pub mod lines;
mod model;
mod options;
pub(crate) mod pinhole;
mod report;
mod robust;
mod start;
#[cfg(test)]
mod tests;

use crate::calib::{CalibError, Calibration};
use crate::geom::Vec2;

use checks::{check_points, check_rank};
use model::{P, Params, Problem, Sample};
use report::{leave_one_out, outlier_warnings, radial_hint, rms};
use robust::robust_pass;
use start::{dlt, opencv_homography};

pub use checks::MAX_FIT_POINTS;
pub use options::{Correspondence, Correspondence3, FitOptions, Method, Model};
pub use pinhole::fit_camera;
pub use report::{CalibReport, PointNote};

/// A fitted calibration and how well it fits.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The fitted mapping.
    pub calibration: Calibration,
    /// How well it fits the points.
    pub report: CalibReport,
}

/// RANSAC's default inlier threshold: 3 px on a 1280×720 picture, in
/// proportion to the diagonal of larger ones (7.2 px at 3072×1728). Without
/// the image size, the image points' extent stands for the picture.
pub fn default_ransac_threshold(points: &[Correspondence], image_size: Option<[u32; 2]>) -> f64 {
    const BASE_DIAG: f64 = 1468.6;
    let diag = match image_size {
        Some([w, h]) => f64::from(w).hypot(f64::from(h)),
        None => {
            let (mut lo, mut hi) = (
                Vec2::new(f64::INFINITY, f64::INFINITY),
                Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
            );
            for c in points.iter().filter(|c| c.image.is_finite()) {
                lo = Vec2::new(lo.x.min(c.image.x), lo.y.min(c.image.y));
                hi = Vec2::new(hi.x.max(c.image.x), hi.y.max(c.image.y));
            }
            if lo.x <= hi.x {
                (hi - lo).length()
            } else {
                BASE_DIAG
            }
        }
    };
    (3.0 * diag / BASE_DIAG).clamp(1.0, 50.0)
}

/// Fits a calibration to `points` (see the module docs for the steps).
pub fn fit(points: &[Correspondence], opts: &FitOptions) -> Result<Fit, CalibError> {
    let model = opts.model;
    if model == Model::Pinhole {
        let space: Vec<Correspondence3> = points.iter().map(Correspondence3::from).collect();
        return fit_camera(&space, opts);
    }
    let opts = &FitOptions {
        ransac_threshold_px: Some(
            opts.ransac_threshold_px
                .unwrap_or_else(|| default_ransac_threshold(points, opts.image_size)),
        ),
        ..opts.clone()
    };
    let ransac_threshold_px = opts.ransac_threshold_px.unwrap_or(3.0);
    check_points(points, model, opts.method != Method::LeastSquares)?;
    let problem = Problem::new(points, opts);
    let data: Vec<Sample> = points
        .iter()
        .map(|c| Sample {
            pn: problem.world(c.world),
            target: c.image,
        })
        .collect();
    check_rank(&problem, &data)?;
    let mut warnings = Vec::new();
    if model == Model::Radial && opts.principal_point.is_none() && opts.image_size.is_none() {
        warnings.push(
            "the distortion centre is estimated from the points (no image size or principal point given); \
             giving the image size usually fits better"
                .to_string(),
        );
    }

    // The least-squares start, and the robust pass.
    let ls_start = opencv_homography(points, Method::LeastSquares, ransac_threshold_px)
        .and_then(|h| problem.params_of_pixel_h(&h))
        .or_else(|| dlt(&problem, &data).1);
    // Least median of squares needs the clean points to be a majority well
    // beyond one minimal sample, or the median is one of a sample's exact fits.
    let robust = if points.len() >= 2 * model.min_points() {
        Some(robust_pass(&problem, &data, points, opts, ls_start.as_ref()))
    } else {
        warnings.push(format!(
            "{} points are too few to check for outliers ({} or more needed)",
            points.len(),
            2 * model.min_points()
        ));
        None
    };
    let (flags, scores, threshold) = match &robust {
        Some(r) => (r.flags.clone(), r.scores.clone(), Some(r.threshold)),
        None => (vec![false; points.len()], vec![0.0; points.len()], None),
    };
    let outliers: Vec<usize> = (0..points.len()).filter(|&i| flags[i]).collect();
    let used: Vec<bool> = match opts.method {
        Method::LeastSquares => vec![true; points.len()],
        Method::Ransac | Method::Lmeds => flags.iter().map(|f| !f).collect(),
    };
    let used_idx: Vec<usize> = (0..points.len()).filter(|&i| used[i]).collect();
    if used_idx.len() < model.min_points() {
        return Err(CalibError::RankDeficient(format!(
            "only {} of {} points fit together, fewer than the {} model needs",
            used_idx.len(),
            points.len(),
            model
        )));
    }
    let used_data: Vec<Sample> = used_idx.iter().map(|&i| data[i]).collect();

    // Final fit from every start we have; keep the best.
    let mut starts: Vec<Params> = Vec::new();
    if opts.method == Method::LeastSquares {
        starts.extend(ls_start);
    } else if let Some(h) = opencv_homography(points, opts.method, ransac_threshold_px) {
        starts.extend(problem.params_of_pixel_h(&h));
    }
    starts.extend(robust.as_ref().map(|r| r.params));
    let mut best: Option<(Params, f64)> = None;
    for s in &starts {
        if let Some((p, cost)) = problem.lm(&used_data, s, 200)
            && best.as_ref().is_none_or(|b| cost < b.1)
        {
            best = Some((p, cost));
        }
    }
    let Some((params, _)) = best else {
        // No start keeps every used point in front of the camera.
        let s = starts.first().copied().unwrap_or([0.0; P]);
        let behind: Vec<(usize, Vec2)> = used_idx
            .iter()
            .filter(|&&i| problem.predict(&s, data[i].pn, None).is_none())
            .map(|&i| (i, points[i].world))
            .collect();
        return Err(if behind.is_empty() {
            CalibError::NoConvergence("no starting homography could be refined".into())
        } else {
            CalibError::BehindCamera { points: behind }
        });
    };
    problem.check_determined(&used_data, &params)?;
    // A solution that mirrors the image is a left-handed world frame (y
    // down the picture, as many football data sets have it): accepted,
    // and said.
    let left_handed = problem.is_mirrored(&params);
    let (h, distortion) = problem.to_pixel(&params);
    let mut calibration = Calibration::from_parts(h, distortion)?;
    if let Some([w, hh]) = opts.image_size {
        calibration = calibration.with_image_size(w, hh);
    }
    let residuals: Vec<Option<f64>> = points
        .iter()
        .map(|c| calibration.project(c.world).map(|p| (p - c.image).length()))
        .collect();
    for &i in &used_idx {
        if residuals[i].is_none() {
            return Err(CalibError::InvalidDistortion(format!(
                "point {i} ({}, {}) lies beyond the radius where the fitted distortion folds over; \
                 the points do not determine the distortion",
                points[i].world.x, points[i].world.y
            )));
        }
    }
    let used_res: Vec<f64> = used_idx.iter().filter_map(|&i| residuals[i]).collect();
    let rms_px = rms(&used_res);
    let all_res: Vec<f64> = residuals.iter().flatten().copied().collect();
    let rms_all_px = rms(&all_res);
    let max_residual_px = used_res.iter().copied().fold(0.0, f64::max);

    let loo = leave_one_out(&problem, &data, &used_idx, &params, model, &mut warnings);
    let loo_used: Vec<f64> = used_idx.iter().filter_map(|&i| loo[i]).collect();
    let loo_rms_px = (!loo_used.is_empty()).then(|| rms(&loo_used));

    outlier_warnings(&outliers, points.len(), model, opts.method, &mut warnings);
    if model == Model::Homography && used_idx.len() >= 8 {
        warnings.extend(radial_hint(
            points, opts, &data, &used_data, &used_idx, &params, loo_rms_px,
        ));
    }
    let outlier_points = outliers
        .iter()
        .map(|&i| PointNote {
            index: i,
            u: points[i].image.x,
            v: points[i].image.y,
            x: points[i].world.x,
            y: points[i].world.y,
            z: 0.0,
            residual_px: residuals[i],
            flagged_residual_px: scores[i],
        })
        .collect();
    let report = CalibReport {
        model,
        method: opts.method,
        points: points.len(),
        used: used_idx.len(),
        rms_px,
        rms_all_px,
        ransac_threshold_px: (opts.method == Method::Ransac).then_some(ransac_threshold_px),
        loo_rms_px,
        max_residual_px,
        residuals_px: residuals,
        loo_residuals_px: loo,
        excluded: (0..points.len()).filter(|&i| !used[i]).collect(),
        outliers,
        outlier_points,
        outlier_threshold_px: threshold,
        homography: h,
        distortion,
        warnings,
        left_handed,
        camera: None,
    };
    Ok(Fit { calibration, report })
}
