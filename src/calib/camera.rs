//! Calibrations from a known pinhole camera in OpenCV's convention, and
//! helpers to pose one.
//!
//! Conventions (OpenCV's): a world point `X` (floor: `z = 0`, world z up)
//! is seen in camera coordinates as `R·X + t` (camera x right, y down, z
//! forward), projected to `(x/z, y/z)`, distorted with `(k1, k2, p1, p2, k3)`
//! and mapped to pixels by the camera matrix `K`. The floor homography is
//! `K·[r1 r2 t]` (the first two columns of `R`, and `t`), and the column
//! for heights `K·r3`.
//!
//! A calibration built from a camera keeps it ([`CameraTable`], the
//! `[camera]` table of its file), so that it is saved as the camera it
//! is; its pose is held as the camera's centre `C` (`t = −R·C`), so a
//! camera read back from its file maps bit for bit as before. Any full
//! camera, kept or not, can be taken apart into `K`, `R`, `C` again
//! ([`Calibration::camera`], `decompose`).

mod decompose;
mod rotation;
mod table;

pub use decompose::Camera;
pub(crate) use rotation::{nearest_rotation, rq as decompose_rq};
pub use rotation::{rodrigues, rotation_vector};
pub use table::{CameraLens, CameraTable};

use crate::calib::{CalibError, Calibration, Distortion, Mat3};
use crate::geom::mat3::{det, mul, mul_vec, transpose};
use crate::geom::vec3::{Vec3, cross, dot, normalized, sub};

impl Calibration {
    /// The calibration of a pinhole camera looking at the floor plane
    /// `z = 0`: camera matrix `k`, distortion coefficients `dist` in
    /// OpenCV's order `(k1, k2, p1, p2[, k3])` (empty for none; `[k1, k2]`
    /// also accepted; longer OpenCV vectors only with their extra terms
    /// zero), rotation `r` and translation `t` (world → camera).
    ///
    /// Fails on a malformed `k` or `r`, unsupported coefficients, or a
    /// camera that is not above the floor (below it the image would be
    /// mirrored; in it the floor is a line).
    pub fn from_camera(k: &Mat3, dist: &[f64], r: &Mat3, t: [f64; 3]) -> Result<Self, CalibError> {
        Calibration::from_camera_lens(k, CameraLens::Standard, dist, r, t)
    }

    /// [`Self::from_camera`] with the lens model `dist` is for: OpenCV's
    /// standard one (`k1, k2, p1, p2[, k3[, k4, k5, k6]]`) or its fisheye
    /// model (`k1, k2, k3, k4`).
    pub fn from_camera_lens(
        k: &Mat3,
        lens: CameraLens,
        dist: &[f64],
        r: &Mat3,
        t: [f64; 3],
    ) -> Result<Self, CalibError> {
        if !t.iter().all(|v| v.is_finite()) {
            return Err(CalibError::InvalidCamera(
                "camera matrix, rotation and translation must be finite".into(),
            ));
        }
        // C = −Rᵀ·t: the pose is kept as the camera's centre (module docs),
        // rid of the last bits −Rᵀ·(−R·C) adds to a round position, and of
        // negative zeros, for whoever reads the file.
        let centre = mul_vec(&transpose(r), t).map(|v| -v);
        let size = centre.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let centre = centre.map(|v| round_to_digits(v, size, 12) + 0.0);
        let r = r.map(|row| row.map(|v| v + 0.0));
        let table = CameraTable {
            matrix: *k,
            distortion: dist.to_vec(),
            lens,
            rotation: Some(r),
            rvec: None,
            position: Some(centre),
            tvec: None,
        };
        Calibration::from_camera_centre(k, lens, dist, &r, centre, table)
    }

    /// A calibration from a camera table (a calibration file's `[camera]`):
    /// the camera of [`Self::from_camera`], kept as the table says it.
    pub fn from_camera_table(table: &CameraTable) -> Result<Self, CalibError> {
        let (r, centre) = table.pose()?;
        Calibration::from_camera_centre(
            &table.matrix,
            table.lens,
            &table.distortion,
            &r,
            centre,
            table.clone(),
        )
    }

    /// [`Self::from_camera`] with the camera's centre in the world instead
    /// of the translation, keeping `table` as the camera it was given as.
    fn from_camera_centre(
        k: &Mat3,
        lens: CameraLens,
        dist: &[f64],
        r: &Mat3,
        centre: Vec3,
        table: CameraTable,
    ) -> Result<Self, CalibError> {
        let bad = |msg: String| Err(CalibError::InvalidCamera(msg));
        if !k
            .iter()
            .flatten()
            .chain(r.iter().flatten())
            .chain(centre.iter())
            .all(|v| v.is_finite())
        {
            return bad("camera matrix, rotation and position must be finite".into());
        }
        if k[1][0] != 0.0 || k[2][0] != 0.0 || k[2][1] != 0.0 || k[2][2] <= 0.0 {
            return bad(format!(
                "camera matrix must be upper triangular with K[2][2] > 0: {k:?}"
            ));
        }
        let s = k[2][2];
        let (fx, skew, cx, fy, cy) = (k[0][0] / s, k[0][1] / s, k[0][2] / s, k[1][1] / s, k[1][2] / s);
        if !(fx > 0.0 && fy > 0.0) {
            return bad(format!("focal lengths must be positive: fx = {fx}, fy = {fy}"));
        }
        // R must be a rotation: orthonormal with determinant +1.
        let rtr = mul(&transpose(r), r);
        let off: f64 = (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| (rtr[i][j] - if i == j { 1.0 } else { 0.0 }).abs())
            .fold(0.0, f64::max);
        if off > 1e-6 {
            return bad(format!("R is not orthonormal (RᵀR differs from I by {off:.2e})"));
        }
        if det(r) < 0.0 {
            return bad("R is a reflection (determinant −1), not a rotation".into());
        }
        // k1, k2, p1, p2, k3, k4, k5, k6 (the fisheye lens: k1…k4).
        let mut c = [0.0; 8];
        match (lens, dist) {
            (CameraLens::Fisheye, [] | [_, _, _, _]) => {
                for (i, v) in dist.iter().enumerate() {
                    // k1, k2, k3, k4 into their places.
                    c[[0, 1, 4, 5][i]] = *v;
                }
            }
            (CameraLens::Fisheye, _) => {
                return bad(format!(
                    "a fisheye lens has 4 distortion coefficients (k1, k2, k3, k4), not {}",
                    dist.len()
                ));
            }
            (
                CameraLens::Standard,
                [] | [_, _] | [_, _, _, _] | [_, _, _, _, _] | [_, _, _, _, _, _, _, _],
            ) => {
                c[..dist.len()].copy_from_slice(dist);
            }
            (CameraLens::Standard, _) if matches!(dist.len(), 12 | 14) => {
                let (head, rest) = dist.split_at(8);
                if rest.iter().any(|&v| v != 0.0) {
                    return bad(format!(
                        "only k1, k2, p1, p2, k3, k4, k5, k6 are supported; got non-zero thin-prism or tilt terms {rest:?}"
                    ));
                }
                c.copy_from_slice(head);
            }
            (CameraLens::Standard, _) => {
                return bad(format!(
                    "distortion must have 0, 2, 4, 5, 8, 12 or 14 coefficients, not {}",
                    dist.len()
                ));
            }
        }
        let [k1, k2, p1, p2, k3, k4, k5, k6] = c;
        if !dist.iter().all(|v| v.is_finite()) {
            return bad(format!("distortion coefficients must be finite: {dist:?}"));
        }
        // The camera centre's height above the floor decides the side.
        let height = centre[2];
        let scale = centre.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1e-300);
        if height.abs() <= 1e-12 * scale {
            return bad("the camera lies in the floor plane: the floor would be a line".into());
        }
        if height < 0.0 {
            return bad(format!(
                "the camera is below the floor (height {height}): the floor would be seen mirrored"
            ));
        }
        let t = mul_vec(r, centre).map(|v| -v);
        let kn: Mat3 = [[fx, skew, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]];
        let rt: Mat3 = [
            [r[0][0], r[0][1], t[0]],
            [r[1][0], r[1][1], t[1]],
            [r[2][0], r[2][1], t[2]],
        ];
        let h = mul(&kn, &rt);
        let d = Distortion {
            model: match lens {
                CameraLens::Standard => crate::calib::DistortionModel::Opencv,
                CameraLens::Fisheye => crate::calib::DistortionModel::Fisheye,
            },
            center: [cx, cy],
            focal: [fx, fy],
            skew,
            k1,
            k2,
            k3,
            p1,
            p2,
            k4,
            k5,
            k6,
        };
        let r3 = [r[0][2], r[1][2], r[2][2]];
        let z_col = [
            kn[0][0] * r3[0] + kn[0][1] * r3[1] + kn[0][2] * r3[2],
            kn[1][1] * r3[1] + kn[1][2] * r3[2],
            r3[2],
        ];
        let mut c = Calibration::from_parts(h, Some(d))?.with_height_column(z_col)?;
        if let Some(space) = &mut c.space {
            space.camera = Some(table);
        }
        Ok(c)
    }
}

/// `v` rounded to `digits` significant digits of `size` (the largest of
/// the values it goes with), when that is a power of ten a double holds
/// exactly; else `v` as it is.
fn round_to_digits(v: f64, size: f64, digits: i32) -> f64 {
    if !(size.is_finite() && size > 0.0) {
        return v;
    }
    let e = digits - 1 - size.log10().floor() as i32;
    if !(0..=22).contains(&e) {
        return v;
    }
    // 10^e is exact up to 10²²: dividing by it rounds once.
    let p = 10f64.powi(e);
    let r = (v * p).round() / p;
    if r.is_finite() { r } else { v }
}

/// The pose `(R, t)` (world → camera, OpenCV axes) of a camera at `eye`
/// looking at `target`, with the world's z axis pointing up in the image.
/// Looking straight down, the world's y axis points up in the image.
pub fn look_at(eye: [f64; 3], target: [f64; 3]) -> Result<(Mat3, [f64; 3]), CalibError> {
    let z = normalized(sub(target, eye))
        .ok_or_else(|| CalibError::InvalidCamera("eye and target must be distinct finite points".into()))?;
    let x = normalized(cross(z, [0.0, 0.0, 1.0]))
        .or_else(|| normalized(cross(z, [0.0, 1.0, 0.0])))
        .ok_or_else(|| CalibError::InvalidCamera("cannot orient the camera".into()))?;
    let y = cross(z, x);
    let r = [x, y, z];
    let t = r.map(|row| -dot(row, eye));
    Ok((r, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;

    /// OpenCV's projectPoints for a floor point, written out independently.
    fn reference_project(k: &Mat3, d: [f64; 5], r: &Mat3, t: [f64; 3], p: Vec2) -> Vec2 {
        let xc = [
            r[0][0] * p.x + r[0][1] * p.y + t[0],
            r[1][0] * p.x + r[1][1] * p.y + t[1],
            r[2][0] * p.x + r[2][1] * p.y + t[2],
        ];
        let (x, y) = (xc[0] / xc[2], xc[1] / xc[2]);
        let [k1, k2, p1, p2, k3] = d;
        let r2 = x * x + y * y;
        let g = 1.0 + k1 * r2 + k2 * r2 * r2 + k3 * r2 * r2 * r2;
        let xd = x * g + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
        let yd = y * g + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
        Vec2::new(k[0][0] * xd + k[0][1] * yd + k[0][2], k[1][1] * yd + k[1][2])
    }

    fn camera() -> (Mat3, Mat3, [f64; 3]) {
        let k = [[1000.0, 0.0, 640.0], [0.0, 990.0, 360.0], [0.0, 0.0, 1.0]];
        let (r, t) = look_at([-2000.0, -7000.0, 4000.0], [300.0, 200.0, 0.0]).unwrap();
        (k, r, t)
    }

    #[test]
    fn matches_opencv_projection_formula() {
        let (k, r, t) = camera();
        let d = [-0.28, 0.07, 0.0005, -0.0003, 0.01];
        let c = Calibration::from_camera(&k, &d, &r, t).unwrap();
        for i in -4..=4 {
            for j in -3..=3 {
                let p = Vec2::new(i as f64 * 1000.0, j as f64 * 1000.0);
                let want = reference_project(&k, d, &r, t, p);
                let got = c.project(p).unwrap();
                assert!((got - want).length() < 1e-6, "{p:?}: {got:?} vs {want:?}");
                let back = c.unproject(got).unwrap();
                assert!((back - p).length() < 1e-3, "{p:?} → {back:?}");
            }
        }
    }

    #[test]
    fn look_at_centres_the_target_with_z_up() {
        let (k, r, t) = camera();
        let c = Calibration::from_camera(&k, &[], &r, t).unwrap();
        let centre = c.project(Vec2::new(300.0, 200.0)).unwrap();
        assert!((centre - Vec2::new(640.0, 360.0)).length() < 1e-9, "{centre:?}");
        // Seen from above with z up, the floor maps with negative orientation (v points down).
        assert!(det(c.homography()) < 0.0);
        // Straight down: world +y is image up.
        let (r, t) = look_at([0.0, 0.0, 5000.0], [0.0, 0.0, 0.0]).unwrap();
        let c = Calibration::from_camera(&k, &[], &r, t).unwrap();
        let up = c.project(Vec2::new(0.0, 1000.0)).unwrap();
        assert!(up.y < 360.0 && (up.x - 640.0).abs() < 1e-9, "{up:?}");
    }

    #[test]
    fn rodrigues_matches_axis_angle() {
        let r = rodrigues([0.0, 0.0, std::f64::consts::FRAC_PI_2]);
        // 90° about z takes x to y.
        assert!((r[1][0] - 1.0).abs() < 1e-12 && r[0][0].abs() < 1e-12);
        assert!((det(&rodrigues([0.3, -1.2, 0.5])) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bad_cameras_are_refused() {
        let (k, r, t) = camera();
        // Below the floor.
        let (rb, tb) = look_at([0.0, 0.0, -3000.0], [0.0, 100.0, 0.0]).unwrap();
        let e = Calibration::from_camera(&k, &[], &rb, tb)
            .unwrap_err()
            .to_string();
        assert!(e.contains("below the floor"), "{e}");
        // In the floor.
        let (rf, tf) = look_at([0.0, -3000.0, 0.0], [0.0, 0.0, 0.0]).unwrap();
        assert!(Calibration::from_camera(&k, &[], &rf, tf).is_err());
        // Not a rotation.
        let mut rs = r;
        rs[0][0] *= 2.0;
        assert!(Calibration::from_camera(&k, &[], &rs, t).is_err());
        // Unsupported coefficient vectors.
        assert!(Calibration::from_camera(&k, &[0.1], &r, t).is_err());
        // The rational model's k4–k6 are modelled; thin-prism terms are not.
        assert!(Calibration::from_camera(&k, &[0.1, 0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0], &r, t).is_ok());
        let prism = [0.1, 0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0];
        let e = Calibration::from_camera(&k, &prism, &r, t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("thin-prism"), "{e}");
        assert!(Calibration::from_camera(&k, &[0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], &r, t).is_ok());
        // A fisheye lens has four.
        let e = Calibration::from_camera_lens(&k, CameraLens::Fisheye, &[0.1, 0.0, 0.0, 0.0, 0.0], &r, t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("4 distortion coefficients"), "{e}");
        assert!(Calibration::from_camera_lens(&k, CameraLens::Fisheye, &[0.1, 0.0, 0.0, 0.0], &r, t).is_ok());
        let mut kb = k;
        kb[0][0] = -1.0;
        assert!(Calibration::from_camera(&kb, &[], &r, t).is_err());
        assert!(Calibration::from_camera(&k, &[f64::NAN, 0.0], &r, t).is_err());
    }
}
