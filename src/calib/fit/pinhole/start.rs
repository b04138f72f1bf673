//! Starting cameras for the pinhole fit.
//!
//! - **From the floor.** The floor points' homography `H` (OpenCV's least
//!   squares, and with six or more floor points the `radial` floor fit's
//!   undistorted homography and k1, k2) with the principal point `c`:
//!   Zhang's constraints on one view, with square pixels and no skew,
//!   give the focal length — the columns `a, b` of `K⁻¹H` are a rotation's
//!   scaled first columns, so `a·b = 0` and `|a| = |b|`, two equations
//!   linear in `1/f²`, solved together by least squares. A camera seen
//!   square-on to the floor leaves `f` undetermined; a few focal lengths
//!   spread over a wide range are tried as well. Given `f`: `r1, r2, t` are
//!   `K⁻¹H`'s columns scaled to unit `r1, r2` (signed so the floor is in
//!   front), `r3 = r1 × r2`, made a rotation by the polar decomposition.
//! - **In space.** With six or more points not all in one plane, the
//!   normalised DLT of the 3 × 4 projection matrix (Hartley's
//!   normalisation of world and image points), split by RQ into `K`, `R`,
//!   `t`; the focal length is `√(fx·fy)`.
//!
//! A start whose camera is below the floor (with the floor in front) is a
//! left-handed world frame: no rotation makes it, and it is said.

use crate::calib::camera::{decompose_rq, nearest_rotation};
use crate::calib::fit::model::{Problem as FloorProblem, Sample as FloorSample};
use crate::calib::fit::start::opencv_homography;
use crate::calib::fit::{Correspondence, Correspondence3, FitOptions, Method, Model};
use crate::calib::linalg::symmetric_eigen;
use crate::geom::Mat3;
use crate::geom::Vec2;
use crate::geom::mat3::{apply, det, invert, mul, mul_vec, transpose};
use crate::geom::vec3::{Vec3, cross, dot};

use super::model::Pixels;

/// Focal lengths tried besides Zhang's, in units of the picture's half
/// diagonal (about 100° to 16° of horizontal field of view at 16:9).
const FOCAL_GRID: [f64; 5] = [0.5, 0.8, 1.2, 2.0, 3.5];

/// What the starts found.
pub(super) struct Starts {
    pub(super) cams: Vec<Pixels>,
    /// Some start was a left-handed world frame.
    pub(super) mirrored: bool,
}

/// Every start the points allow (module docs).
pub(super) fn starts(points: &[Correspondence3], opts: &FitOptions, c0: Vec2, s: f64) -> Starts {
    let mut out = Starts {
        cams: Vec::new(),
        mirrored: false,
    };
    let floor: Vec<Correspondence> = points
        .iter()
        .filter(|c| c.world[2] == 0.0)
        .map(|c| Correspondence {
            image: c.image,
            world: Vec2::new(c.world[0], c.world[1]),
        })
        .collect();
    if floor.len() >= 4 {
        let n = floor.len() as f64;
        let centroid = floor.iter().fold(Vec2::ZERO, |a, c| a + c.world) * (1.0 / n);
        for (h, lens) in floor_homographies(&floor, opts, c0) {
            let mut focals: Vec<f64> = FOCAL_GRID.iter().map(|g| g * s).collect();
            focals.extend(focal_from_h(&h, c0, s));
            for f in focals {
                // The lens in OpenCV's terms: r² in the focal length.
                let k = lens.map_or([0.0; 2], |(k1, k2, len)| {
                    let q = (f / len).powi(2);
                    [k1 * q, k2 * q * q]
                });
                match pose_from_h(&h, f, c0, centroid) {
                    Some(Ok((r, t))) => out.cams.push((f, c0, k, r, t)),
                    Some(Err(Mirrored)) => out.mirrored = true,
                    None => {}
                }
            }
        }
    }
    match dlt_camera(points) {
        Some(Ok((k, r, t))) => {
            let f = (k[0][0] * k[1][1]).abs().sqrt();
            let pp = Vec2::new(k[0][2], k[1][2]);
            // A principal point far off the picture is the DLT's noise.
            let pp = if (pp - c0).length() < 0.5 * s { pp } else { c0 };
            if f.is_finite() && f > 0.0 {
                out.cams.push((f, pp, [0.0; 2], r, t));
            }
        }
        Some(Err(Mirrored)) => out.mirrored = true,
        None => {}
    }
    out
}

/// A camera start that is a left-handed world frame.
pub(super) struct Mirrored;

/// Radial terms `(k1, k2, normalisation length)` of a floor fit.
type Radial = (f64, f64, f64);

/// The floor's homographies (world → undistorted pixels), each with its
/// radial terms when it has them.
fn floor_homographies(floor: &[Correspondence], opts: &FitOptions, c0: Vec2) -> Vec<(Mat3, Option<Radial>)> {
    let Some(plain) = opencv_homography(floor, Method::LeastSquares, 3.0) else {
        return Vec::new();
    };
    let mut out = vec![(plain, None)];
    if floor.len() >= Model::Radial.min_points() {
        let radial = FitOptions {
            model: Model::Radial,
            method: Method::LeastSquares,
            principal_point: Some(c0),
            ..opts.clone()
        };
        let problem = FloorProblem::new(floor, &radial);
        let data: Vec<FloorSample> = floor
            .iter()
            .map(|c| FloorSample {
                pn: problem.world(c.world),
                target: c.image,
            })
            .collect();
        if let Some((th, _)) = problem
            .params_of_pixel_h(&plain)
            .and_then(|start| problem.lm(&data, &start, 200))
        {
            let (h, d) = problem.to_pixel(&th);
            if let Some(d) = d {
                out.push((h, Some((d.k1, d.k2, d.focal[0]))));
            }
        }
    }
    out
}

/// The focal length of a camera with principal point `c`, square pixels
/// and no skew, from its floor homography `h` (Zhang's constraints, module
/// docs); `None` when the view leaves it undetermined.
pub(super) fn focal_from_h(h: &Mat3, c: Vec2, s: f64) -> Option<f64> {
    // The homography in units of s about the principal point.
    let shift: Mat3 = [
        [1.0 / s, 0.0, -c.x / s],
        [0.0, 1.0 / s, -c.y / s],
        [0.0, 0.0, 1.0],
    ];
    let m = mul(&shift, h);
    let norm = m.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    let (a, b) = ([m[0][0], m[1][0], m[2][0]], [m[0][1], m[1][1], m[2][1]]);
    let (a, b) = (a.map(|v| v / norm), b.map(|v| v / norm));
    // (a₀b₀ + a₁b₁)·w + a₂b₂ = 0 and (a₀² + a₁² − b₀² − b₁²)·w + a₂² − b₂² = 0, w = 1/f².
    let (p1, q1) = (a[0] * b[0] + a[1] * b[1], a[2] * b[2]);
    let (p2, q2) = (
        a[0] * a[0] + a[1] * a[1] - b[0] * b[0] - b[1] * b[1],
        a[2] * a[2] - b[2] * b[2],
    );
    let den = p1 * p1 + p2 * p2;
    let w = -(p1 * q1 + p2 * q2) / den;
    // Square-on: both equations vanish in w; keep clear of it.
    let scale = (a[0] * a[0] + a[1] * a[1]).max(b[0] * b[0] + b[1] * b[1]);
    if !(den > 1e-16 * scale * scale && w > 0.0) {
        return None;
    }
    let f = s / w.sqrt();
    (f.is_finite() && f > 0.01 * s && f < 100.0 * s).then_some(f)
}

/// The pose `(R, t)` of a camera with focal length `f` and principal
/// point `c` whose floor homography is `h`, the floor points' centroid
/// `centroid` in front of it; `Err` when that puts the camera below the
/// floor (a left-handed frame), `None` when nothing is finite.
fn pose_from_h(h: &Mat3, f: f64, c: Vec2, centroid: Vec2) -> Option<Result<(Mat3, Vec3), Mirrored>> {
    let k: Mat3 = [[f, 0.0, c.x], [0.0, f, c.y], [0.0, 0.0, 1.0]];
    let m = mul(&invert(&k)?, h);
    let col = |j: usize| [m[0][j], m[1][j], m[2][j]];
    let (a, b) = (col(0), col(1));
    let len = 0.5 * (dot(a, a).sqrt() + dot(b, b).sqrt());
    // The floor's centroid is in front: positive depth.
    let (_, _, w) = apply(h, centroid);
    let lambda = if w >= 0.0 { 1.0 / len } else { -1.0 / len };
    if !lambda.is_finite() {
        return None;
    }
    let (r1, r2) = (a.map(|v| v * lambda), b.map(|v| v * lambda));
    let t = col(2).map(|v| v * lambda);
    let r3 = cross(r1, r2);
    // Columns r1, r2, r3 → the nearest rotation.
    let approx: Mat3 = std::array::from_fn(|i| [r1[i], r2[i], r3[i]]);
    let r = nearest_rotation(&approx)?;
    let centre = mul_vec(&transpose(&r), t).map(|v| -v);
    if !centre.iter().all(|v| v.is_finite()) {
        return None;
    }
    Some(if centre[2] > 0.0 {
        Ok((r, t))
    } else {
        Err(Mirrored)
    })
}

/// The camera `(K, R, t)` of the normalised DLT of the projection matrix
/// (module docs); `None` with fewer than six points, points in one plane,
/// or a matrix that is no camera; `Err` for a left-handed frame.
fn dlt_camera(points: &[Correspondence3]) -> Option<Result<(Mat3, Mat3, Vec3), Mirrored>> {
    if points.len() < 6 {
        return None;
    }
    let n = points.len() as f64;
    let wm: Vec3 = std::array::from_fn(|i| points.iter().map(|c| c.world[i]).sum::<f64>() / n);
    let im = points.iter().fold(Vec2::ZERO, |a, c| a + c.image) * (1.0 / n);
    let wd = points
        .iter()
        .map(|c| (0..3).map(|i| (c.world[i] - wm[i]).powi(2)).sum::<f64>().sqrt())
        .sum::<f64>()
        / n;
    let id = points.iter().map(|c| (c.image - im).length()).sum::<f64>() / n;
    if !(wd > 0.0 && id > 0.0) {
        return None;
    }
    let (ws, is) = (3f64.sqrt() / wd, std::f64::consts::SQRT_2 / id);
    let mut ata = vec![0.0; 144];
    for c in points {
        let x: [f64; 4] = [
            (c.world[0] - wm[0]) * ws,
            (c.world[1] - wm[1]) * ws,
            (c.world[2] - wm[2]) * ws,
            1.0,
        ];
        let u = (c.image - im) * is;
        let mut rows = [[0.0; 12]; 2];
        for k in 0..4 {
            rows[0][k] = x[k];
            rows[0][8 + k] = -u.x * x[k];
            rows[1][4 + k] = x[k];
            rows[1][8 + k] = -u.y * x[k];
        }
        for r in &rows {
            for i in 0..12 {
                for j in i..12 {
                    ata[i * 12 + j] += r[i] * r[j];
                }
            }
        }
    }
    let (vals, vecs) = symmetric_eigen(&ata, 12);
    // Points in a plane leave a second null direction.
    if vals[1].is_nan() || vals[1] <= 1e-10 * vals[11] {
        return None;
    }
    let pn: [[f64; 4]; 3] = std::array::from_fn(|r| std::array::from_fn(|c| vecs[(r * 4 + c) * 12]));
    // P = Tᵢ⁻¹ · Pₙ · T_w
    let ti_inv: Mat3 = [[1.0 / is, 0.0, im.x], [0.0, 1.0 / is, im.y], [0.0, 0.0, 1.0]];
    let tw = |r: usize, c: usize| -> f64 {
        match (r, c) {
            (r, c) if r < 3 && c == r => ws,
            (r, 3) if r < 3 => -ws * wm[r],
            (3, 3) => 1.0,
            _ => 0.0,
        }
    };
    let pw: [[f64; 4]; 3] =
        std::array::from_fn(|r| std::array::from_fn(|c| (0..4).map(|k| pn[r][k] * tw(k, c)).sum()));
    let mut p: [[f64; 4]; 3] =
        std::array::from_fn(|r| std::array::from_fn(|c| (0..3).map(|k| ti_inv[r][k] * pw[k][c]).sum()));
    // Points in front: w > 0 at the points' centroid.
    let w = (0..3).map(|k| p[2][k] * wm[k]).sum::<f64>() + p[2][3];
    if w < 0.0 {
        p = p.map(|row| row.map(|v| -v));
    }
    let m: Mat3 = std::array::from_fn(|r| [p[r][0], p[r][1], p[r][2]]);
    let (k, r) = decompose_rq(&m)?;
    if det(&r) < 0.0 {
        return Some(Err(Mirrored));
    }
    let t = mul_vec(&invert(&k)?, [p[0][3], p[1][3], p[2][3]]);
    let s = k[2][2];
    let k = k.map(|row| row.map(|v| v / s));
    let ok = k.iter().flatten().chain(t.iter()).all(|v| v.is_finite());
    ok.then_some(Ok((k, r, t)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Calibration;
    use crate::calib::camera::look_at;

    #[test]
    fn zhang_finds_the_focal_length_of_a_tilted_view_and_none_square_on() {
        let k = [[1300.0, 0.0, 640.0], [0.0, 1300.0, 360.0], [0.0, 0.0, 1.0]];
        let (r, t) = look_at([-3000.0, -8000.0, 5000.0], [500.0, 0.0, 0.0]).unwrap();
        let c = Calibration::from_camera(&k, &[], &r, t).unwrap();
        let f = focal_from_h(c.homography(), Vec2::new(640.0, 360.0), 734.0).unwrap();
        assert!((f - 1300.0).abs() < 1e-6, "{f}");
        let (r2, t2) = pose_from_h(c.homography(), f, Vec2::new(640.0, 360.0), Vec2::ZERO)
            .unwrap()
            .ok()
            .unwrap();
        for i in 0..3 {
            assert!((t2[i] - t[i]).abs() < 1e-6, "{t2:?}");
            for j in 0..3 {
                assert!((r2[i][j] - r[i][j]).abs() < 1e-9);
            }
        }
        let (r, t) = look_at([0.0, 0.0, 5000.0], [0.0, 0.0, 0.0]).unwrap();
        let down = Calibration::from_camera(&k, &[], &r, t).unwrap();
        assert!(focal_from_h(down.homography(), Vec2::new(640.0, 360.0), 734.0).is_none());
        // The floor seen from below (a left-handed frame with z up).
        let mirrored = [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let h = mul(c.homography(), &mirrored);
        assert!(matches!(
            pose_from_h(&h, f, Vec2::new(640.0, 360.0), Vec2::ZERO),
            Some(Err(Mirrored))
        ));
    }
}
