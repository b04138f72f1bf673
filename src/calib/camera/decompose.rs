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

use super::rotation::{rotation_vector, rq};
use crate::calib::{Calibration, Distortion, DistortionModel, Mat3};
use crate::geom::mat3::{det, invert, mul_vec, transpose};
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
    // The rational and fisheye lenses have no five-coefficient form.
    if d.model != DistortionModel::Opencv || d.k4 != 0.0 || d.k5 != 0.0 || d.k6 != 0.0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera::look_at;

    fn close(a: &Mat3, b: &Mat3, tol: f64) -> bool {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .all(|(x, y)| (x - y).abs() <= tol)
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
