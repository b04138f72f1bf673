//! Fitting a calibration to pixels found on painted lines: where along its
//! line a pixel lies is unknown, so each pixel's residual is its distance
//! *across* the line from the line's image (point-to-line), not the
//! distance to one world point. The parameters and their normalised
//! coordinates are the point fit's (`model::Problem`); Levenberg–Marquardt
//! minimises the weighted squared distances.
//!
//! One call linearises the matching: each pixel is paired with a world
//! point of its line and the line's direction there, and the line's image
//! normal is taken from the starting calibration. The caller
//! ([`crate::calib::refine`]) re-pairs and calls again until nothing moves
//! (iterative closest point, point-to-line form).

use super::model::{P, Params, Problem, levenberg_marquardt, mirror_upper};
use super::{Correspondence, FitOptions, Model};
use crate::calib::{CalibError, Calibration, Distortion, DistortionModel};
use crate::geom::Vec2;

/// One pixel found on a painted line, paired with a point of that line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineSample {
    /// The pixel on the line (its centre across the line).
    pub image: Vec2,
    /// The world point of the line it is paired with.
    pub world: Vec2,
    /// The line's unit direction at `world`.
    pub tangent: Vec2,
    /// Weight of its residual (robust weights: 0 leaves it out).
    pub weight: f64,
}

/// A sample in the fit's coordinates.
#[derive(Clone, Copy, Debug)]
struct Row {
    pn: Vec2,
    target: Vec2,
    normal: Vec2,
    weight: f64,
}

/// Fits `model` to `samples` from `start`, on a picture of `image_size`
/// (the distortion's centre and scale). Returns the calibration and each
/// sample's signed distance across its line, in pixels (`None` where the
/// fitted mapping cannot project its world point).
pub fn fit_to_lines(
    samples: &[LineSample],
    start: &Calibration,
    model: Model,
    image_size: [u32; 2],
) -> Result<(Calibration, Vec<Option<f64>>), CalibError> {
    let used = samples.iter().filter(|s| s.weight > 0.0).count();
    let np = match model {
        Model::Homography => 8,
        Model::Radial => 10,
        Model::Pinhole => {
            return Err(CalibError::RankDeficient(
                "fitting to lines takes the homography or radial model, not the pinhole model".into(),
            ));
        }
    };
    if used < 2 * np {
        return Err(CalibError::RankDeficient(format!(
            "{used} points were found on the lines; the {model} model needs at least {}",
            2 * np
        )));
    }
    let opts = FitOptions {
        model,
        image_size: Some(image_size),
        ..FitOptions::default()
    };
    let pairs: Vec<Correspondence> = samples
        .iter()
        .map(|s| Correspondence {
            image: s.image,
            world: s.world,
        })
        .collect();
    let problem = Problem::new(&pairs, &opts);
    let th0 = start_params(&problem, start, model).ok_or_else(|| {
        CalibError::NoConvergence("the starting calibration cannot be expressed in the model".into())
    })?;
    // The line's image direction at each sample, from the start.
    let step = 1e-3 / problem.w_scale;
    let rows: Vec<Row> = samples
        .iter()
        .filter(|s| s.weight > 0.0 && s.image.is_finite() && s.world.is_finite())
        .filter_map(|s| {
            let a = problem.predict(&th0, problem.world(s.world), None)?;
            let b = problem.predict(&th0, problem.world(s.world + s.tangent * step), None)?;
            let d = b - a;
            let len = d.length();
            (len > 0.0 && len.is_finite()).then(|| Row {
                pn: problem.world(s.world),
                target: s.image,
                normal: Vec2::new(-d.y / len, d.x / len),
                weight: s.weight,
            })
        })
        .collect();
    if rows.len() < 2 * np {
        return Err(CalibError::RankDeficient(format!(
            "only {} of the points on the lines can be mapped by the starting calibration",
            rows.len()
        )));
    }
    let (th, _) = lm(&problem, &rows, &th0, np, 100)
        .ok_or_else(|| CalibError::NoConvergence("the line fit put a line point behind the camera".into()))?;
    let (h, distortion) = problem.to_pixel(&th);
    let calib = Calibration::from_parts(h, distortion)?.with_image_size(image_size[0], image_size[1]);
    let residuals = samples
        .iter()
        .map(|s| {
            let a = calib.project(s.world)?;
            let b = calib.project(s.world + s.tangent * step)?;
            let d = b - a;
            let len = d.length();
            (len > 0.0).then(|| (s.image - a).dot(Vec2::new(-d.y / len, d.x / len)))
        })
        .collect();
    Ok((calib, residuals))
}

/// The model's parameters closest to `start`: its homography, and for the
/// radial model its radial terms when it has OpenCV's radial distortion
/// about the model's centre (rescaled to the model's length), else none.
fn start_params(problem: &Problem, start: &Calibration, model: Model) -> Option<Params> {
    let mut th = problem.params_of_pixel_h(start.homography())?;
    if model == Model::Radial
        && let Some(d) = start.distortion()
        && let Some((k1, k2)) = radial_terms(d, problem.center, problem.radius)
    {
        th[8] = k1;
        th[9] = k2;
    }
    Some(th)
}

/// `(k1, k2)` of `d` for a distortion normalised by `radius` about
/// `center`, when `d` is OpenCV's model with radial terms only, equal
/// focal lengths and that centre.
fn radial_terms(d: &Distortion, center: Vec2, radius: f64) -> Option<(f64, f64)> {
    let plain = d.model == DistortionModel::Opencv
        && d.k3 == 0.0
        && d.k4 == 0.0
        && d.k5 == 0.0
        && d.k6 == 0.0
        && d.p1 == 0.0
        && d.p2 == 0.0
        && d.skew == 0.0
        && (d.focal[0] - d.focal[1]).abs() <= 1e-9 * d.focal[0].abs()
        && (Vec2::new(d.center[0], d.center[1]) - center).length() <= 1e-6 * radius;
    if !plain || d.focal[0] <= 0.0 {
        return None;
    }
    let s2 = (radius / d.focal[0]).powi(2);
    Some((d.k1 * s2, d.k2 * s2 * s2))
}

/// Weight of the prior that holds the radial terms near 0: `k1 = 0.1`
/// (a bend of a tenth of the radius at the picture's corner) costs as much
/// as a 1 px distance. Lines found in only part of the picture constrain
/// the distortion weakly; the prior keeps it from wandering there and is
/// negligible where the lines say otherwise.
const RADIAL_PRIOR: f64 = 10.0;

/// Weighted sum of squared distances across the lines, and the prior.
fn cost(problem: &Problem, rows: &[Row], th: &Params) -> Option<f64> {
    let mut c = 0.0;
    if problem.model == Model::Radial {
        c += RADIAL_PRIOR * RADIAL_PRIOR * (th[8] * th[8] + th[9] * th[9]);
    }
    for r in rows {
        let p = problem.predict(th, r.pn, None)?;
        let e = r.weight * (p - r.target).dot(r.normal);
        c += e * e;
    }
    c.is_finite().then_some(c)
}

/// JᵀJ and Jᵀr of the weighted distances across the lines, and the prior.
fn normal_equations(problem: &Problem, rows: &[Row], th: &Params, np: usize) -> Option<(Vec<f64>, Vec<f64>)> {
    let mut a = vec![0.0; np * np];
    let mut g = vec![0.0; np];
    let mut jac = [[0.0; P]; 2];
    for r in rows {
        let p = problem.predict(th, r.pn, Some(&mut jac))?;
        let e = r.weight * (p - r.target).dot(r.normal);
        let mut row = [0.0; P];
        for (k, v) in row.iter_mut().enumerate().take(np) {
            *v = r.weight * (r.normal.x * jac[0][k] + r.normal.y * jac[1][k]);
        }
        for x in 0..np {
            g[x] += row[x] * e;
            for y in x..np {
                a[x * np + y] += row[x] * row[y];
            }
        }
    }
    if np >= 10 {
        for i in [8, 9] {
            a[i * np + i] += RADIAL_PRIOR * RADIAL_PRIOR;
            g[i] += RADIAL_PRIOR * RADIAL_PRIOR * th[i];
        }
    }
    mirror_upper(&mut a, np);
    Some((a, g))
}

/// Levenberg–Marquardt on the distances across the lines.
fn lm(problem: &Problem, rows: &[Row], start: &Params, np: usize, max_iter: usize) -> Option<(Params, f64)> {
    levenberg_marquardt(
        np,
        start,
        max_iter,
        0.0,
        |th| cost(problem, rows, th),
        |th| normal_equations(problem, rows, th, np),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::synthetic::pitched_camera;

    /// Samples along the lines x = ±a, y = ±b and x = 0 of a field, seen by
    /// `truth`, each paired with a point shifted along its line.
    fn samples(truth: &Calibration, shift: f64) -> Vec<LineSample> {
        let mut out = Vec::new();
        let lines = [
            (Vec2::new(-4500.0, -3000.0), Vec2::new(4500.0, -3000.0)),
            (Vec2::new(-4500.0, 3000.0), Vec2::new(4500.0, 3000.0)),
            (Vec2::new(-4500.0, -3000.0), Vec2::new(-4500.0, 3000.0)),
            (Vec2::new(4500.0, -3000.0), Vec2::new(4500.0, 3000.0)),
            (Vec2::new(0.0, -3000.0), Vec2::new(0.0, 3000.0)),
        ];
        for (a, b) in lines {
            let t = (b - a) * (1.0 / (b - a).length());
            for i in 1..20 {
                let w = a.lerp(b, f64::from(i) / 20.0);
                if let Some(px) = truth.project(w) {
                    out.push(LineSample {
                        image: px,
                        world: w + t * shift,
                        tangent: t,
                        weight: 1.0,
                    });
                }
            }
        }
        out
    }

    fn worst_error(a: &Calibration, b: &Calibration) -> f64 {
        let mut worst: f64 = 0.0;
        for i in -4..=4 {
            for j in -3..=3 {
                let w = Vec2::new(f64::from(i) * 1000.0, f64::from(j) * 1000.0);
                if let (Some(p), Some(q)) = (a.project(w), b.project(w)) {
                    worst = worst.max((p - q).length());
                }
            }
        }
        worst
    }

    #[test]
    fn recovers_a_homography_from_points_anywhere_on_the_lines() {
        let truth = pitched_camera(1280, 720, 900.0, [0.0, -9000.0, 6000.0], 35.0);
        // A start that is off by tens of pixels.
        let mut h = *truth.homography();
        h[0][2] += 30.0 * h[2][2];
        h[1][2] -= 20.0 * h[2][2];
        let mut calib = Calibration::from_homography(h).unwrap();
        assert!(worst_error(&calib, &truth) > 20.0);
        // Pairing each pixel with a point 300 mm along its line costs
        // nothing: only the distance across counts. Re-pair and refit.
        for _ in 0..6 {
            let s = samples(&truth, 300.0);
            calib = fit_to_lines(&s, &calib, Model::Homography, [1280, 720])
                .unwrap()
                .0;
        }
        assert!(
            worst_error(&calib, &truth) < 1e-3,
            "{}",
            worst_error(&calib, &truth)
        );
        let s = samples(&truth, 0.0);
        let (_, res) = fit_to_lines(&s, &calib, Model::Homography, [1280, 720]).unwrap();
        assert!(res.iter().all(|r| r.unwrap().abs() < 1e-3));
    }

    #[test]
    fn too_few_points_and_zero_weights_are_refused() {
        let truth = pitched_camera(1280, 720, 900.0, [0.0, -9000.0, 6000.0], 35.0);
        let mut s = samples(&truth, 0.0);
        for x in &mut s {
            x.weight = 0.0;
        }
        assert!(matches!(
            fit_to_lines(&s, &truth, Model::Homography, [1280, 720]),
            Err(CalibError::RankDeficient(_))
        ));
    }

    #[test]
    fn radial_terms_rescale_to_the_model_length() {
        let d = Distortion::radial(Vec2::new(640.0, 360.0), 900.0, -0.06, 0.01);
        let (k1, k2) = radial_terms(&d, Vec2::new(640.0, 360.0), 734.3).unwrap();
        // The same distortion at a radius r: k1 (r/f)² = k1' (r/R)².
        let r: f64 = 500.0;
        let a = -0.06 * (r / 900.0).powi(2) + 0.01 * (r / 900.0).powi(4);
        let b = k1 * (r / 734.3).powi(2) + k2 * (r / 734.3).powi(4);
        assert!((a - b).abs() < 1e-12);
        assert!(radial_terms(&d, Vec2::new(600.0, 360.0), 734.3).is_none());
    }
}
