//! A full camera taken apart: the camera matrix `K`, the lens in OpenCV's
//! terms, the rotation `R` and the camera's centre, with its heading,
//! tilt and roll, for printing and for files.
//!
//! A calibration built from a camera gives back that camera. Any other
//! full camera (a file with `height_column`, an SSL camera) is decomposed:
//! its projection matrix `P = [h1 h2 c h3]` (module [`crate::calib`]'s
//! `space.rs`) is `s·K·[R | t]` with `s > 0` (points in front of the
//! camera have `w > 0`); the left 3×3 block `M = s·K·R` is split by an RQ
//! decomposition (Givens rotations, Hartley & Zisserman A4.1.1) into an
//! upper-triangular matrix with a positive diagonal and a rotation, and
//! `t = (s·K)⁻¹·h3`. `det M < 0` cannot come from a rotation: the world
//! frame is then left-handed and there is no camera to give.
//!
//! The lens is given in OpenCV's coefficients when it is OpenCV's model
//! about the principal point and normalised by the focal lengths, or
//! radial only with one normalisation length and square pixels (the
//! `radial` fit's: its coefficients are rescaled to the focal length);
//! otherwise (ssl-vision's inverse model) it has no OpenCV form.

use serde::{Deserialize, Serialize};

use crate::calib::linalg::symmetric_eigen;
use crate::calib::{Calibration, Distortion, DistortionModel, Mat3};
use crate::geom::mat3::{det, invert, mul, mul_vec, transpose};
use crate::geom::vec3::Vec3;

/// A full camera in OpenCV's terms (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// The camera matrix `K`, `K[2][2] = 1`.
    pub matrix: Mat3,
    /// The lens in OpenCV's order `(k1, k2, p1, p2, k3)`; all zero without
    /// distortion; `None` when the lens has no OpenCV form.
    pub distortion: Option<[f64; 5]>,
    /// Rotation world → camera.
    pub rotation: Mat3,
    /// The rotation as a Rodrigues vector (OpenCV's `rvec`).
    pub rvec: Vec3,
    /// The camera's centre in the world (world units).
    pub position: Vec3,
    /// The translation world → camera (OpenCV's `tvec`).
    pub tvec: Vec3,
    /// Direction the camera looks, on the floor: degrees counter-clockwise
    /// from the world's x axis.
    pub heading_deg: f64,
    /// How far the camera looks down below the horizontal, degrees.
    pub tilt_deg: f64,
    /// How far the picture's x axis rises above the horizontal, degrees.
    pub roll_deg: f64,
}

impl Camera {
    /// The camera of `K`, lens, `R` and centre, with its angles.
    pub fn new(matrix: Mat3, distortion: Option<[f64; 5]>, rotation: Mat3, position: Vec3) -> Camera {
        let deg = f64::to_degrees;
        let [x, _, z] = rotation;
        Camera {
            matrix,
            distortion,
            rotation,
            rvec: rotation_vector(&rotation),
            position,
            tvec: mul_vec(&rotation, position).map(|v| -v),
            heading_deg: deg(z[1].atan2(z[0])),
            tilt_deg: deg((-z[2]).clamp(-1.0, 1.0).asin()),
            roll_deg: deg(x[2].clamp(-1.0, 1.0).asin()),
        }
    }

    /// The horizontal and vertical field of view, degrees, of a picture of
    /// `[width, height]` pixels.
    pub fn field_of_view_deg(&self, size: [u32; 2]) -> [f64; 2] {
        let k = &self.matrix;
        let fov = |n: u32, f: f64| 2.0 * (f64::from(n) / (2.0 * f)).atan().to_degrees();
        [fov(size[0], k[0][0]), fov(size[1], k[1][1])]
    }

    /// One line: position, heading, tilt, roll and focal length.
    pub fn describe(&self) -> String {
        let [x, y, z] = self.position;
        let k = &self.matrix;
        let focal = if (k[0][0] - k[1][1]).abs() <= 1e-9 * k[0][0].abs() {
            format!("{:.1} px", k[0][0])
        } else {
            format!("{:.1} × {:.1} px", k[0][0], k[1][1])
        };
        format!(
            "at ({}, {}, {}), heading {:.2}°, tilted {:.2}° down, roll {:.2}°; focal length {focal}, \
             principal point ({:.1}, {:.1})",
            short(x),
            short(y),
            short(z),
            self.heading_deg,
            self.tilt_deg,
            self.roll_deg,
            k[0][2],
            k[1][2]
        )
    }
}

/// A coordinate to a tenth of a unit, or 4 significant digits when small.
fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.4}")
    }
}

impl Calibration {
    /// The camera in space: the one it was built from, else its projection
    /// matrix decomposed (module docs). `None` for a calibration that knows
    /// only the floor, or a projection that no right-handed camera makes.
    pub fn camera(&self) -> Option<Camera> {
        if let Some(t) = self.camera_table() {
            let (r, c) = t.pose().ok()?;
            let s = t.matrix[2][2];
            let k = t.matrix.map(|row| row.map(|v| v / s));
            let d = &t.distortion;
            let coeffs = std::array::from_fn(|i| d.get(i).copied().unwrap_or(0.0));
            // (k1, k2, p1, p2, k3): a 2-coefficient vector is (k1, k2).
            return Some(Camera::new(k, Some(coeffs), r, c));
        }
        let col = self.height_column()?;
        let h = self.homography();
        let m: Mat3 = std::array::from_fn(|i| [h[i][0], h[i][1], col[i]]);
        let (k, r) = rq(&m)?;
        if det(&r) < 0.0 {
            return None;
        }
        let t = mul_vec(&invert(&k)?, [h[0][2], h[1][2], h[2][2]]);
        let s = k[2][2];
        let k = k.map(|row| row.map(|v| v / s));
        let centre = mul_vec(&transpose(&r), t).map(|v| -v);
        centre.iter().all(|v| v.is_finite()).then(|| {
            let lens = match self.distortion() {
                None => Some([0.0; 5]),
                Some(d) => opencv_coefficients(d, &k),
            };
            Camera::new(k, lens, r, centre)
        })
    }
}

/// `d` as OpenCV coefficients for camera matrix `k` (module docs).
fn opencv_coefficients(d: &Distortion, k: &Mat3) -> Option<[f64; 5]> {
    if d.model != DistortionModel::Opencv {
        return None;
    }
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()));
    let centred = close(d.center[0], k[0][2]) && close(d.center[1], k[1][2]);
    if !centred {
        return None;
    }
    if close(d.focal[0], k[0][0]) && close(d.focal[1], k[1][1]) && close(d.skew, k[0][1]) {
        return Some([d.k1, d.k2, d.p1, d.p2, d.k3]);
    }
    let radial = d.p1 == 0.0 && d.p2 == 0.0 && d.skew == 0.0 && close(d.focal[0], d.focal[1]);
    let square = close(k[0][0], k[1][1]) && k[0][1].abs() <= 1e-9 * k[0][0].abs();
    if !(radial && square) {
        return None;
    }
    // r² in the lens's length is r² in the focal length times (f/s)².
    let q = (k[0][0] / d.focal[0]).powi(2);
    Some([d.k1 * q, d.k2 * q * q, 0.0, 0.0, d.k3 * q * q * q])
}

/// `m = K·R` with `K` upper triangular with a positive diagonal and `R`
/// orthonormal (a rotation or a reflection); `None` when `m` is singular
/// or not finite.
pub(crate) fn rq(m: &Mat3) -> Option<(Mat3, Mat3)> {
    if !m.iter().flatten().all(|v| v.is_finite()) || invert(m).is_none() {
        return None;
    }
    // Givens rotations about x, y, z zero m[2][1], m[2][0] and m[1][0].
    let givens = |a: f64, b: f64| {
        let n = a.hypot(b);
        if n > 0.0 { (a / n, b / n) } else { (1.0, 0.0) }
    };
    let (c, s) = givens(m[2][2], -m[2][1]);
    let qx: Mat3 = [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]];
    let m1 = mul(m, &qx);
    let (c, s) = givens(m1[2][2], m1[2][0]);
    let qy: Mat3 = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]];
    let m2 = mul(&m1, &qy);
    let (c, s) = givens(m2[1][1], -m2[1][0]);
    let qz: Mat3 = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
    let mut k = mul(&m2, &qz);
    // m = K·Qzᵀ·Qyᵀ·Qxᵀ
    let mut r = transpose(&mul(&mul(&qx, &qy), &qz));
    // A positive diagonal: flip the sign of a column of K and the row of R.
    for i in 0..3 {
        if k[i][i] < 0.0 {
            for row in &mut k {
                row[i] = -row[i];
            }
            r[i] = r[i].map(|v| -v);
        }
    }
    // Exactly upper triangular.
    k[1][0] = 0.0;
    k[2][0] = 0.0;
    k[2][1] = 0.0;
    Some((k, r))
}

/// The rotation nearest to `m` (polar decomposition `m (mᵀm)^(−1/2)`);
/// `None` when `m` is singular or a reflection.
pub(crate) fn nearest_rotation(m: &Mat3) -> Option<Mat3> {
    let mtm = mul(&transpose(m), m);
    let flat: Vec<f64> = mtm.iter().flatten().copied().collect();
    let (vals, vecs) = symmetric_eigen(&flat, 3);
    if vals[0].is_nan() || vals[0] <= 1e-12 * vals[2] || det(m) <= 0.0 {
        return None;
    }
    // (mᵀm)^(−1/2) = V Λ^(−1/2) Vᵀ
    let inv_sqrt: Mat3 = std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            (0..3)
                .map(|k| vecs[i * 3 + k] * vecs[j * 3 + k] / vals[k].sqrt())
                .sum()
        })
    });
    let r = mul(m, &inv_sqrt);
    r.iter().flatten().all(|v| v.is_finite()).then_some(r)
}

/// The Rodrigues vector (axis × angle, radians) of a rotation matrix, as
/// OpenCV's `Rodrigues`; the inverse of [`super::rodrigues`].
pub fn rotation_vector(r: &Mat3) -> Vec3 {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let cos = ((tr - 1.0) / 2.0).clamp(-1.0, 1.0);
    let axis_sin = [
        (r[2][1] - r[1][2]) / 2.0,
        (r[0][2] - r[2][0]) / 2.0,
        (r[1][0] - r[0][1]) / 2.0,
    ];
    let sin = (axis_sin[0].powi(2) + axis_sin[1].powi(2) + axis_sin[2].powi(2)).sqrt();
    let theta = sin.atan2(cos);
    if sin > 1e-6 {
        return axis_sin.map(|v| v / sin * theta);
    }
    if cos > 0.0 {
        // Near the identity: θ ≈ sin θ.
        return axis_sin;
    }
    // Near a half turn: R ≈ 2 n nᵀ − I; the axis from the largest diagonal.
    let i = (0..3).max_by(|&a, &b| r[a][a].total_cmp(&r[b][b])).unwrap_or(0);
    let ni = ((r[i][i] + 1.0) / 2.0).max(0.0).sqrt();
    if ni <= 0.0 {
        return [0.0; 3];
    }
    let mut n = [0.0; 3];
    for (j, v) in n.iter_mut().enumerate() {
        *v = if j == i {
            ni
        } else {
            (r[i][j] + r[j][i]) / (4.0 * ni)
        };
    }
    // The sign of the axis from the (small) antisymmetric part.
    let s = n[0] * axis_sin[0] + n[1] * axis_sin[1] + n[2] * axis_sin[2];
    let sign = if s < 0.0 { -1.0 } else { 1.0 };
    n.map(|v| v * sign * theta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera::{look_at, rodrigues};

    fn close(a: &Mat3, b: &Mat3, tol: f64) -> bool {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .all(|(x, y)| (x - y).abs() <= tol)
    }

    #[test]
    fn rq_splits_a_matrix_into_triangle_and_rotation() {
        for rv in [
            [0.3, -1.2, 0.5],
            [2.0, 0.1, -0.4],
            [0.0, 0.0, 3.0],
            [-2.5, 1.0, 0.7],
        ] {
            let r = rodrigues(rv);
            let k = [[1500.0, 2.0, 700.0], [0.0, 1450.0, 380.0], [0.0, 0.0, 1.0]];
            let m = mul(&k, &r);
            let (k2, r2) = rq(&m.map(|row| row.map(|v| v * 3.0))).unwrap();
            assert!(close(&k2.map(|row| row.map(|v| v / 3.0)), &k, 1e-9), "{k2:?}");
            assert!(close(&r2, &r, 1e-12), "{r2:?}");
        }
        assert!(rq(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]).is_none());
    }

    #[test]
    fn rotation_vectors_round_trip_even_near_half_turns() {
        let pi = std::f64::consts::PI;
        for v in [
            [0.3, -1.2, 0.5],
            [1e-9, 0.0, 0.0],
            [0.0; 3],
            [pi, 0.0, 0.0],
            [0.0, pi - 1e-7, 0.0],
            [pi / 3f64.sqrt(), -pi / 3f64.sqrt(), pi / 3f64.sqrt()],
        ] {
            let back = rotation_vector(&rodrigues(v));
            assert!(close(&rodrigues(back), &rodrigues(v), 1e-9), "{v:?} → {back:?}");
        }
    }

    #[test]
    fn a_camera_without_its_table_is_decomposed() {
        let k = [[1100.0, 0.0, 650.0], [0.0, 1100.0, 350.0], [0.0, 0.0, 1.0]];
        let eye = [-2000.0, -7000.0, 4000.0];
        let (r, t) = look_at(eye, [300.0, 200.0, 0.0]).unwrap();
        let full = Calibration::from_camera(&k, &[-0.2, 0.04, 0.001, 0.0], &r, t).unwrap();
        // The same mapping from its homography, lens and column only.
        let bare = Calibration::from_parts(*full.homography(), full.distortion().copied())
            .unwrap()
            .with_height_column(full.height_column().unwrap())
            .unwrap();
        assert!(bare.camera_table().is_none());
        let cam = bare.camera().unwrap();
        assert!(close(&cam.matrix, &k, 1e-6), "{:?}", cam.matrix);
        assert!(close(&cam.rotation, &r, 1e-9), "{:?}", cam.rotation);
        for (p, e) in cam.position.iter().zip(eye) {
            assert!((p - e).abs() < 1e-6, "{:?}", cam.position);
        }
        let d = cam.distortion.unwrap();
        assert!(
            (d[0] + 0.2).abs() < 1e-12 && (d[2] - 0.001).abs() < 1e-12,
            "{d:?}"
        );
        // Looking from the south-west towards the target, down.
        assert!(cam.tilt_deg > 20.0 && cam.tilt_deg < 40.0, "{}", cam.tilt_deg);
        let heading = 7200f64.atan2(2300.0).to_degrees();
        assert!((cam.heading_deg - heading).abs() < 1e-9, "{}", cam.heading_deg);
        assert!(cam.roll_deg.abs() < 1e-9);
        assert!(
            cam.describe().contains("at (-2000.0, -7000.0, 4000.0)"),
            "{}",
            cam.describe()
        );
        // A floor-only calibration has no camera.
        let floor = Calibration::from_homography(*full.homography()).unwrap();
        assert!(floor.camera().is_none());
    }

    #[test]
    fn a_radial_lens_is_rescaled_to_the_focal_length() {
        let k = [[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]];
        let d = Distortion::radial(crate::geom::Vec2::new(640.0, 360.0), 734.0, -0.3, 0.1);
        let c = opencv_coefficients(&d, &k).unwrap();
        let q = (1000.0f64 / 734.0).powi(2);
        assert!((c[0] + 0.3 * q).abs() < 1e-12 && (c[1] - 0.1 * q * q).abs() < 1e-12);
        // Another centre, or ssl-vision's model: no OpenCV form.
        let off = Distortion::radial(crate::geom::Vec2::new(600.0, 360.0), 734.0, -0.3, 0.1);
        assert!(opencv_coefficients(&off, &k).is_none());
        let inverse = Distortion {
            model: DistortionModel::Inverse,
            ..d
        };
        assert!(opencv_coefficients(&inverse, &k).is_none());
    }
}
