//! A camera as a calibration file gives it: the `[camera]` table, an
//! alternative to `homography` (with `distortion` and `height_column`)
//! that a person can read and write.
//!
//! ```toml
//! [camera]
//! matrix = [[1400.0, 0.0, 960.0], [0.0, 1400.0, 540.0], [0.0, 0.0, 1.0]]
//! distortion = [-0.12, 0.03, 0.0, 0.0]   # OpenCV's order: k1, k2, p1, p2[, k3[, k4, k5, k6]]
//! rotation = [[…], […], […]]             # world → camera; or rvec = [rx, ry, rz]
//! position = [0.0, -9000.0, 5000.0]      # the camera's centre; or tvec = [tx, ty, tz]
//! ```
//!
//! The rotation is given once, as a matrix (`rotation`, world → camera:
//! its rows are the camera's x right, y down and z forward axes in the
//! world) or as OpenCV's Rodrigues vector (`rvec`); the pose once, as the
//! camera's centre in the world (`position`, world units, z up) or as
//! OpenCV's translation (`tvec`, `t = −R·position`). A rotation matrix
//! written to a few decimals (within 10⁻³ of orthonormal) is taken as the
//! nearest rotation. Everything else is checked as
//! [`Calibration::from_camera`] checks it.
//!
//! `lens = "fisheye"` takes `distortion` as OpenCV's fisheye model's
//! (ROS's `equidistant`): `k1, k2, k3, k4` of the angle off axis.

use serde::{Deserialize, Serialize};

use super::rotation::{nearest_rotation, rodrigues};
use crate::calib::{CalibError, Mat3};
use crate::geom::mat3::{mul, mul_vec, transpose};
use crate::geom::vec3::Vec3;

/// Which lens model a camera's `distortion` coefficients are for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CameraLens {
    /// OpenCV's standard (Brown–Conrady, rational with k4–k6) model:
    /// ROS's `plumb_bob` and `rational_polynomial`.
    #[default]
    Standard,
    /// OpenCV's fisheye model: ROS's `equidistant`.
    Fisheye,
}

impl CameraLens {
    fn is_standard(&self) -> bool {
        *self == CameraLens::Standard
    }
}

/// The `[camera]` table of a calibration file (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraTable {
    /// The camera matrix `K` (`[[fx, skew, cx], [0, fy, cy], [0, 0, 1]]`,
    /// pixels).
    pub matrix: Mat3,
    /// Distortion coefficients in OpenCV's order `(k1, k2, p1, p2[, k3[,
    /// k4, k5, k6]])` (the fisheye lens's: `k1, k2, k3, k4`); left out for
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distortion: Vec<f64>,
    /// The lens model `distortion` is for; OpenCV's standard one when left out.
    #[serde(default, skip_serializing_if = "CameraLens::is_standard")]
    pub lens: CameraLens,
    /// Rotation world → camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<Mat3>,
    /// The rotation as a Rodrigues vector (axis × angle in radians), as
    /// OpenCV's `rvec`, instead of `rotation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rvec: Option<Vec3>,
    /// The camera's centre in the world (world units, z up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Vec3>,
    /// The translation world → camera, as OpenCV's `tvec`, instead of
    /// `position`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tvec: Option<Vec3>,
}

impl CameraTable {
    /// The rotation (world → camera) and the camera's centre, from
    /// whichever of their two forms the table gives.
    pub fn pose(&self) -> Result<(Mat3, Vec3), CalibError> {
        let bad = |msg: &str| Err(CalibError::InvalidCamera(msg.to_owned()));
        let r = match (self.rotation, self.rvec) {
            (Some(r), None) => squared_up(r),
            (None, Some(v)) => {
                if !v.iter().all(|x| x.is_finite()) {
                    return Err(CalibError::InvalidCamera(format!("rvec {v:?} is not finite")));
                }
                rodrigues(v)
            }
            (Some(_), Some(_)) => return bad("[camera] gives both `rotation` and `rvec`: give one"),
            (None, None) => {
                return bad("[camera] needs its orientation: `rotation` (3×3, world → camera) or `rvec`");
            }
        };
        let centre = match (self.position, self.tvec) {
            (Some(c), None) => c,
            // C = −Rᵀ·t
            (None, Some(t)) => mul_vec(&transpose(&r), t).map(|v| -v),
            (Some(_), Some(_)) => return bad("[camera] gives both `position` and `tvec`: give one"),
            (None, None) => {
                return bad(
                    "[camera] needs its place: `position` (the camera's centre in the world) or `tvec`",
                );
            }
        };
        Ok((r, centre))
    }

    /// The same camera for world coordinates `f` times smaller (a world
    /// point `p` in the new unit is `p·f` in this one).
    pub(crate) fn scaled(&self, f: f64) -> CameraTable {
        CameraTable {
            position: self.position.map(|c| c.map(|v| v / f)),
            tvec: self.tvec.map(|t| t.map(|v| v / f)),
            ..self.clone()
        }
    }
}

/// Largest departure of a given rotation from orthonormality (largest
/// entry of `RᵀR − I`) that is taken for rounding and squared up.
const ROUNDED: f64 = 1e-3;

/// A rotation written to a few decimals made exactly one (the nearest
/// rotation); one that is a rotation to 10⁻⁹, or not one at all, as it is
/// (a camera built from it says what is wrong).
fn squared_up(r: Mat3) -> Mat3 {
    let rtr = mul(&transpose(&r), &r);
    let off = (0..3)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .map(|(i, j)| (rtr[i][j] - if i == j { 1.0 } else { 0.0 }).abs())
        .fold(0.0, f64::max);
    if off > 1e-9 && off <= ROUNDED {
        nearest_rotation(&r).unwrap_or(r)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Calibration;
    use crate::calib::camera::look_at;

    fn table() -> CameraTable {
        let (r, _) = look_at([1000.0, -8000.0, 4000.0], [0.0, 0.0, 0.0]).unwrap();
        CameraTable {
            matrix: [[1200.0, 0.0, 640.0], [0.0, 1200.0, 360.0], [0.0, 0.0, 1.0]],
            distortion: vec![-0.2, 0.05, 0.0, 0.0],
            lens: CameraLens::Standard,
            rotation: Some(r),
            rvec: None,
            position: Some([1000.0, -8000.0, 4000.0]),
            tvec: None,
        }
    }

    #[test]
    fn every_form_of_the_pose_gives_the_same_camera() {
        let t = table();
        let a = Calibration::from_camera_table(&t).unwrap();
        let (r, c) = t.pose().unwrap();
        let rvec = crate::calib::camera::rotation_vector(&r);
        let tvec = mul_vec(&r, c).map(|v| -v);
        let b = Calibration::from_camera_table(&CameraTable {
            rotation: None,
            rvec: Some(rvec),
            position: None,
            tvec: Some(tvec),
            ..t.clone()
        })
        .unwrap();
        for p in [[0.0, 0.0, 0.0], [3000.0, 2000.0, 0.0], [-2000.0, 1000.0, 1500.0]] {
            let (pa, pb) = (a.project3(p).unwrap(), b.project3(p).unwrap());
            assert!((pa - pb).length() < 1e-6, "{p:?}: {pa:?} {pb:?}");
        }
        assert_eq!(a.camera_table(), Some(&t));
        assert_eq!(a.camera().unwrap().position, [1000.0, -8000.0, 4000.0]);
    }

    #[test]
    fn a_pose_given_twice_or_not_at_all_is_refused() {
        let t = table();
        let both = CameraTable {
            rvec: Some([0.1, 0.0, 0.0]),
            ..t.clone()
        };
        let e = both.pose().unwrap_err().to_string();
        assert!(e.contains("`rotation` and `rvec`"), "{e}");
        let none = CameraTable {
            position: None,
            ..t.clone()
        };
        let e = none.pose().unwrap_err().to_string();
        assert!(e.contains("`position`"), "{e}");
        // Checked as from_camera checks: below the floor, not a rotation.
        let below = CameraTable {
            position: Some([0.0, 0.0, -100.0]),
            ..t.clone()
        };
        assert!(Calibration::from_camera_table(&below).is_err());
        let mut skewed = t.clone();
        if let Some(r) = &mut skewed.rotation {
            r[0][0] *= 1.5;
        }
        let e = Calibration::from_camera_table(&skewed).unwrap_err().to_string();
        assert!(e.contains("orthonormal"), "{e}");
    }

    /// The example of docs/calibration.md loads: its rotation, written to
    /// four decimals, is squared up.
    #[test]
    fn the_documented_example_loads() {
        let doc = include_str!("../../../docs/calibration.md");
        let start = doc.find("image_size = [1280, 720]\nworld_unit").unwrap();
        let end = start + doc[start..].find("```").unwrap();
        let c: Calibration = toml::from_str(&doc[start..end]).unwrap();
        let cam = c.camera().unwrap();
        assert!((cam.position[2] - 25_000.0).abs() < 1e-9);
        let r = cam.rotation;
        let rtr = mul(&transpose(&r), &r);
        assert!(
            (rtr[0][0] - 1.0).abs() < 1e-12 && rtr[0][1].abs() < 1e-12,
            "{rtr:?}"
        );
        // Written back as it was given, and read back the same.
        let again: Calibration = toml::from_str(&c.to_toml()).unwrap();
        assert_eq!(again, c);
        assert!(c.to_toml().contains("[0.9487, -0.3162, 0.0]"), "{}", c.to_toml());
    }
}
