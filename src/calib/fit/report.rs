//! The report of a fit: per-point residuals, RMS, leave-one-out residuals
//! (exact refits, or the linearised form for many points), the flagged
//! points and the warnings the user should read.

use serde::{Deserialize, Serialize};

use super::model::{P, Params, Problem, Sample};
use super::{Correspondence, FitOptions, Method, Model};
use crate::calib::Distortion;
use crate::calib::linalg::cholesky_solve;
use crate::geom::Mat3;

/// Up to this many used points, leave-one-out refits every point.
const EXACT_LOO_MAX: usize = 300;

/// A point named in a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointNote {
    /// 0-based index in the input.
    pub index: usize,
    /// Image pixel.
    pub u: f64,
    pub v: f64,
    /// World point.
    pub x: f64,
    pub y: f64,
    /// Height above the floor (the pinhole model's points).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub z: f64,
    /// Distance in pixels between the point and its world point mapped by
    /// the fit; `None` when it does not map.
    pub residual_px: Option<f64>,
    /// The residual the flag was decided on: against the robust fit, scaled
    /// by leverage (raw with RANSAC), pixels.
    pub flagged_residual_px: f64,
}

/// How well a calibration fits its points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibReport {
    /// The model fitted.
    pub model: Model,
    /// The world frame is left-handed: seen from above, y is clockwise
    /// from x (y down the picture, as in many football data sets). Such
    /// a frame is accepted; logs drawn must use the same frame.
    #[serde(default)]
    pub left_handed: bool,
    /// RMS over every point, those left out included: a robust fit on a
    /// few points cannot look better than it is.
    #[serde(default)]
    pub rms_all_px: f64,
    /// RANSAC's inlier threshold used (pixels), for `ransac`.
    #[serde(default)]
    pub ransac_threshold_px: Option<f64>,
    /// The method used.
    pub method: Method,
    /// Number of points given.
    pub points: usize,
    /// Number of points the final fit used.
    pub used: usize,
    /// RMS residual over the used points, pixels.
    pub rms_px: f64,
    /// Leave-one-out RMS over the used points, pixels; `None` when too few
    /// points remain without one.
    pub loo_rms_px: Option<f64>,
    /// Largest residual of a used point, pixels.
    pub max_residual_px: f64,
    /// Residual of every point, in input order (`None`: does not map).
    pub residuals_px: Vec<Option<f64>>,
    /// Leave-one-out residual of every used point, in input order.
    pub loo_residuals_px: Vec<Option<f64>>,
    /// Indices (0-based, input order) of the flagged points.
    pub outliers: Vec<usize>,
    /// The flagged points with their coordinates.
    pub outlier_points: Vec<PointNote>,
    /// Indices left out of the final fit.
    pub excluded: Vec<usize>,
    /// Residual above which a point is flagged, pixels (after scaling by
    /// leverage, except with RANSAC).
    pub outlier_threshold_px: Option<f64>,
    /// World → undistorted pixel homography.
    pub homography: Mat3,
    /// Fitted distortion (radial model).
    pub distortion: Option<Distortion>,
    /// Things the user should know.
    pub warnings: Vec<String>,
    /// The camera in space (the pinhole model's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<crate::calib::Camera>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

pub(super) fn rms(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    (v.iter().map(|r| r * r).sum::<f64>() / v.len() as f64).sqrt()
}

/// The warnings about flagged points: which (the first ten), whether they
/// were used, and a hint that the model may not suit when many are.
pub(super) fn outlier_warnings(
    outliers: &[usize],
    points: usize,
    model: Model,
    method: Method,
    warnings: &mut Vec<String>,
) {
    if outliers.is_empty() {
        return;
    }
    let mut list = outliers
        .iter()
        .take(10)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if outliers.len() > 10 {
        list.push_str(&format!(" and {} more", outliers.len() - 10));
    }
    warnings.push(match method {
        Method::LeastSquares => format!(
            "{} point(s) do not fit the others (index {list}) but were used; \
             fix them or fit with a robust method (lmeds, ransac) to leave them out",
            outliers.len()
        ),
        _ => format!("{} point(s) left out of the fit (index {list})", outliers.len()),
    });
    if outliers.len() * 3 > points {
        warnings.push(format!(
            "{} of {points} points are flagged: the {model} model may not suit this camera",
            outliers.len(),
        ));
    }
}

/// A lens that bends lines shows up as a much better radial fit: refines
/// the fitted homography `params` with k1, k2 and compares (linearised)
/// leave-one-out errors; the warning when the radial model is much better.
pub(super) fn radial_hint(
    points: &[Correspondence],
    opts: &FitOptions,
    data: &[Sample],
    used_data: &[Sample],
    used_idx: &[usize],
    params: &Params,
    loo_rms_px: Option<f64>,
) -> Option<String> {
    let radial = Problem::new(
        points,
        &FitOptions {
            model: Model::Radial,
            ..opts.clone()
        },
    );
    let r_loo = radial.lm(used_data, params, 100).map(|(rp, _)| {
        let l = loo_linearised(&radial, data, used_idx, &rp);
        rms(&used_idx.iter().filter_map(|&i| l[i]).collect::<Vec<_>>())
    });
    let (h, r) = (loo_rms_px?, r_loo?);
    (h > 1.0 && r < 0.5 * h).then(|| {
        format!(
            "the radial model fits these points much better (leave-one-out RMS about {r:.2} px \
             against {h:.2} px): the lens seems to distort; try the radial model"
        )
    })
}

/// Leave-one-out residual of each used point (input order; `None` for
/// points not used or when too few remain).
pub(super) fn leave_one_out(
    problem: &Problem,
    data: &[Sample],
    used: &[usize],
    params: &Params,
    model: Model,
    warnings: &mut Vec<String>,
) -> Vec<Option<f64>> {
    let mut loo = vec![None; data.len()];
    if used.len() <= model.min_points() {
        warnings.push(format!(
            "leave-one-out needs more than {} points for the {model} model",
            model.min_points()
        ));
        return loo;
    }
    if used.len() <= EXACT_LOO_MAX {
        let mut rest: Vec<Sample> = Vec::with_capacity(used.len() - 1);
        for (k, &i) in used.iter().enumerate() {
            rest.clear();
            rest.extend(
                used.iter()
                    .enumerate()
                    .filter(|&(j, _)| j != k)
                    .map(|(_, &j)| data[j]),
            );
            loo[i] = problem
                .lm(&rest, params, 100)
                .and_then(|(p, _)| problem.predict(&p, data[i].pn, None))
                .map(|p| (p - data[i].target).length());
        }
        return loo;
    }
    warnings.push(format!(
        "leave-one-out residuals are linearised (more than {EXACT_LOO_MAX} points)"
    ));
    loo_linearised(problem, data, used, params)
}

/// Linearised leave-one-out: `r_loo = (I − J_i A⁻¹ J_iᵀ)⁻¹ r_i` with
/// `A = JᵀJ` over the used points (exact for a linear model).
pub(super) fn loo_linearised(
    problem: &Problem,
    data: &[Sample],
    used: &[usize],
    params: &Params,
) -> Vec<Option<f64>> {
    let mut loo = vec![None; data.len()];
    let np = problem.np();
    let used_data: Vec<Sample> = used.iter().map(|&i| data[i]).collect();
    let Some((a, _)) = problem.normal_equations(&used_data, params) else {
        return loo;
    };
    let mut j = [[0.0; P]; 2];
    for &i in used {
        let Some(p) = problem.predict(params, data[i].pn, Some(&mut j)) else {
            continue;
        };
        let r = p - data[i].target;
        let (Some(x0), Some(x1)) = (
            cholesky_solve(&a, &j[0][..np], np),
            cholesky_solve(&a, &j[1][..np], np),
        ) else {
            continue;
        };
        let dot = |row: usize, x: &[f64]| (0..np).map(|c| j[row][c] * x[c]).sum::<f64>();
        let hm = [
            [1.0 - dot(0, &x0), -dot(0, &x1)],
            [-dot(1, &x0), 1.0 - dot(1, &x1)],
        ];
        let det = hm[0][0] * hm[1][1] - hm[0][1] * hm[1][0];
        if det.abs() > 1e-12 {
            let lx = (hm[1][1] * r.x - hm[0][1] * r.y) / det;
            let ly = (-hm[1][0] * r.x + hm[0][0] * r.y) / det;
            loo[i] = Some(lx.hypot(ly));
        }
    }
    loo
}
