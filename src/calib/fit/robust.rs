//! The robust pass of a fit: a least-median-of-squares (or RANSAC)
//! estimate, refined on its inliers, and the outlier flags decided on
//! residuals scaled by their leverage (studentised).

use rand::SeedableRng;
use rand::rngs::StdRng;

use super::model::{P, Params, Problem, Sample};
use super::start::{dlt, opencv_homography};
use super::{Correspondence, FitOptions, Method, Model};
use crate::calib::linalg::cholesky_solve;

/// Flag points beyond this many standard deviations (at least; see
/// [`outlier_sigmas`])…
const OUTLIER_SIGMAS: f64 = 4.0;
/// …and beyond this many pixels.
pub(super) const OUTLIER_MIN_PX: f64 = 1.0;
/// Random samples of the radial model's robust pass.
const ROBUST_TRIALS: usize = 300;
/// Sample size of the radial model's robust pass.
const RADIAL_SAMPLE: usize = 6;
/// Median of the Rayleigh distribution over its scale: turns a median 2-D
/// residual into a per-axis standard deviation.
pub(super) const RAYLEIGH_MEDIAN: f64 = 1.177_410_022_515_474_6;

/// Result of the robust pass.
pub(super) struct Robust {
    pub(super) params: Params,
    pub(super) flags: Vec<bool>,
    /// What each point was judged by (compared with `threshold`).
    pub(super) scores: Vec<f64>,
    pub(super) threshold: f64,
}

/// The outlier threshold from residuals believed mostly clean.
fn mad_threshold(res: &[f64], np: usize) -> f64 {
    let mut v: Vec<f64> = res.iter().copied().filter(|r| r.is_finite()).collect();
    if v.is_empty() {
        return OUTLIER_MIN_PX;
    }
    v.sort_by(f64::total_cmp);
    let med = v[v.len() / 2];
    // Small-sample correction (Rousseeuw & Leroy) for the fitted parameters.
    let dof = (v.len() as f64 - np as f64 / 2.0).max(1.0);
    let sigma = med / RAYLEIGH_MEDIAN * (1.0 + 5.0 / dof);
    (outlier_sigmas(res.len()) * sigma).max(OUTLIER_MIN_PX)
}

/// The cutoff in standard deviations for `n` points: 4, or more for many
/// points so that clean Gaussian data gets a false flag in about one fit
/// in twenty (2-D residuals: P(|r| > kσ) = exp(−k²/2)).
pub(super) fn outlier_sigmas(n: usize) -> f64 {
    OUTLIER_SIGMAS.max((2.0 * (20.0 * n.max(1) as f64).ln()).sqrt())
}

pub(super) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// Robust estimate, its inlier refinement and the outlier flags.
pub(super) fn robust_pass(
    problem: &Problem,
    data: &[Sample],
    points: &[Correspondence],
    opts: &FitOptions,
    ls_start: Option<&Params>,
) -> Robust {
    let ransac = opts.method == Method::Ransac;
    let thr = opts.ransac_threshold_px.unwrap_or(3.0);
    let score = |res: &[f64]| {
        if ransac {
            res.iter().map(|r| r.min(thr).powi(2)).sum::<f64>()
        } else {
            median(res)
        }
    };
    let mut candidates: Vec<Params> = Vec::new();
    let robust_method = if ransac { Method::Ransac } else { Method::Lmeds };
    if let Some(p) = opencv_homography(points, robust_method, thr).and_then(|h| problem.params_of_pixel_h(&h))
    {
        candidates.push(p);
    }
    if let Some(p) = ls_start.and_then(|s| problem.lm(data, s, 100)) {
        candidates.push(p.0);
    }
    if problem.model == Model::Radial {
        let mut rng = StdRng::seed_from_u64(0x00c0_ffee);
        for _ in 0..ROBUST_TRIALS {
            // One more point when the centre is estimated too.
            let k = RADIAL_SAMPLE + usize::from(problem.fit_center);
            let idx = rand::seq::index::sample(&mut rng, data.len(), k);
            let sub: Vec<Sample> = idx.iter().map(|i| data[i]).collect();
            if let Some(p) = dlt(problem, &sub).1.and_then(|s| problem.lm(&sub, &s, 30)) {
                candidates.push(p.0);
            }
        }
    }
    let mut best: Option<(Params, f64)> = None;
    for c in candidates {
        let s = score(&problem.residuals(data, &c));
        if s.is_finite() && best.as_ref().is_none_or(|b| s < b.1) {
            best = Some((c, s));
        }
    }
    let Some((mut params, _)) = best else {
        return Robust {
            params: ls_start.copied().unwrap_or([0.0; P]),
            flags: vec![false; data.len()],
            scores: vec![0.0; data.len()],
            threshold: OUTLIER_MIN_PX,
        };
    };
    // Refine on the inliers, re-deciding them, a few rounds.
    let np = problem.np();
    let mut res = problem.residuals(data, &params);
    let mut threshold = if ransac { thr } else { mad_threshold(&res, np) };
    let mut inl: Vec<bool> = res.iter().map(|&r| r <= threshold).collect();
    let mut scores = res.clone();
    for _ in 0..4 {
        let inliers: Vec<Sample> = (0..data.len()).filter(|&i| inl[i]).map(|i| data[i]).collect();
        if inliers.len() < problem.model.min_points() + 2 {
            break;
        }
        if let Some((p, _)) = problem.lm(&inliers, &params, 100) {
            params = p;
        }
        res = problem.residuals(data, &params);
        let next: Vec<bool> = if ransac {
            scores = res.clone();
            res.iter().map(|&r| r <= thr).collect()
        } else {
            let Some(std) = studentised(problem, data, &inl, &params, &res) else {
                break;
            };
            // Per-axis σ from the inliers' mean square (E|s|² = 2σ²): steadier
            // than the median once the gross outliers are gone.
            let clean: Vec<f64> = (0..data.len()).filter(|&i| inl[i]).map(|i| std[i]).collect();
            let sigma = (clean.iter().map(|s| s * s).sum::<f64>() / (2.0 * clean.len() as f64)).sqrt();
            threshold = (outlier_sigmas(data.len()) * sigma).max(OUTLIER_MIN_PX);
            scores = std.clone();
            (0..data.len())
                .map(|i| std[i] <= threshold || res[i] <= OUTLIER_MIN_PX)
                .collect()
        };
        if next == inl {
            break;
        }
        inl = next;
    }
    Robust {
        params,
        flags: inl.iter().map(|&i| !i).collect(),
        scores,
        threshold,
    }
}

/// Residuals scaled by their leverage so that all have the same spread:
/// `|r|·√(2/(2 − tr Hᵢᵢ))` for points in the fit (`inl`), `|r|·√(2/(2 +
/// tr Hᵢᵢ))` for points left out, where `Hᵢᵢ = Jᵢ A⁻¹ Jᵢᵀ` and `A = JᵀJ` over
/// the points in the fit. Edge points of a distorted view have high
/// leverage: their fitted residuals are small and their predictions
/// uncertain, and raw residuals would flag or miss them unfairly.
fn studentised(
    problem: &Problem,
    data: &[Sample],
    inl: &[bool],
    params: &Params,
    res: &[f64],
) -> Option<Vec<f64>> {
    let np = problem.np();
    let fitted: Vec<Sample> = (0..data.len()).filter(|&i| inl[i]).map(|i| data[i]).collect();
    let (a, _) = problem.normal_equations(&fitted, params)?;
    let mut j = [[0.0; P]; 2];
    let mut out = Vec::with_capacity(data.len());
    for (i, s) in data.iter().enumerate() {
        if problem.predict(params, s.pn, Some(&mut j)).is_none() {
            out.push(f64::INFINITY);
            continue;
        }
        let x0 = cholesky_solve(&a, &j[0][..np], np)?;
        let x1 = cholesky_solve(&a, &j[1][..np], np)?;
        let tr: f64 = (0..np).map(|c| j[0][c] * x0[c] + j[1][c] * x1[c]).sum();
        let var = if inl[i] { (2.0 - tr).max(0.1) } else { 2.0 + tr };
        out.push(res[i] * (2.0 / var).sqrt());
    }
    Some(out)
}
