//! ssl-vision's camera model as an underlay [`Calibration`], and the
//! camera models a game log carries.
//!
//! ssl-vision projects a field point `p` (mm, z up) to a pixel like this:
//! `c = R(q)·p + t` with `R(q)` the rotation of the unit quaternion
//! `q = (q0, q1, q2, q3)` (`q3` the scalar part); the undistorted
//! normalised point `u = (c.x/c.z, c.y/c.z)` of radius `ru`; the distorted
//! radius `rd` solving `a·rd³ + rd = ru` for the distortion coefficient
//! `a` (none when `a ≤ 0`); and the pixel `f·u·(rd/ru) + (cx, cy)`. On the
//! floor (`z = 0`) the first steps are the homography `K·[r1 r2 t]`
//! (`K` with focal length `f` and principal point `(cx, cy)`), and the
//! last is the [`DistortionModel::Inverse`] lens with `k1 = a` about
//! `(cx, cy)` normalised by `f`: the calibration is the same mapping, not
//! an approximation of it.

use std::collections::BTreeMap;
use std::path::Path;

use super::file::{MessageType, RecordReader};
use super::packets::{CameraModel, Dropped, Vision};
use crate::calib::{CalibError, Calibration, Distortion, DistortionModel, Mat3};
use crate::log::LogError;

/// The rotation matrix of the quaternion `[x, y, z, w]`, normalised first;
/// `None` for a zero or non-finite quaternion.
pub fn rotation(q: [f64; 4]) -> Option<Mat3> {
    crate::geom::mat3::from_quaternion(q)
}

/// The calibration of one camera model (see the module docs). Fails when
/// the model makes no camera looking down at the floor (a zero
/// quaternion, a focal length that is not positive, a camera in or below
/// the floor plane, as simulators' placeholder models often are).
pub fn calibration(cam: &CameraModel) -> Result<Calibration, CalibError> {
    let f = cam.focal_length;
    if !(f.is_finite() && f > 0.0) {
        return Err(CalibError::InvalidCamera(format!(
            "focal length {f} is not a positive number of pixels"
        )));
    }
    let r = rotation(cam.rotation).ok_or_else(|| {
        CalibError::InvalidCamera(format!("the orientation quaternion {:?} is zero", cam.rotation))
    })?;
    let (cx, cy) = (cam.principal_point.x, cam.principal_point.y);
    let k = [[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]];
    let pinhole = Calibration::from_camera(&k, &[], &r, cam.translation)?;
    let lens = (cam.distortion > 0.0).then(|| Distortion {
        model: DistortionModel::Inverse,
        k1: cam.distortion,
        ..Distortion::radial(cam.principal_point, f, 0.0, 0.0)
    });
    let mut c = Calibration::from_parts(*pinhole.homography(), lens)?;
    if let Some(col) = pinhole.height_column() {
        c = c.with_height_column(col)?;
    }
    Ok(match cam.image_size {
        Some([w, h]) => c.with_image_size(w, h),
        None => c,
    })
}

/// What to tell a user about a camera model besides its calibration.
pub fn notes(cam: &CameraModel) -> Vec<String> {
    let mut out = Vec::new();
    if cam.distortion < 0.0 {
        out.push(format!(
            "distortion {} is negative: ssl-vision's projection ignores it, and so does the calibration",
            cam.distortion
        ));
    }
    if cam.image_size.is_none() {
        out.push("the log does not give the image size (set one with --image-size)".to_owned());
    }
    out
}

/// The camera models of a game log.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogCameras {
    /// The last model received of each camera.
    pub latest: BTreeMap<u32, CameraModel>,
    /// How many different models each camera had over the log.
    pub versions: BTreeMap<u32, usize>,
}

/// Reads every geometry packet of a game log (plain or gzip'ed) and
/// collects the camera models.
pub fn cameras_in(path: &Path) -> Result<LogCameras, LogError> {
    let read_err = |error| LogError::Read {
        path: path.to_owned(),
        error,
    };
    let mut stream =
        crate::bounded::Stream::open(path, super::MAX_INPUT).map_err(|e| LogError::io(path, e))?;
    let decompressed = stream.size.gzip;
    let mut records = RecordReader::new(&mut stream.reader, decompressed).map_err(read_err)?;
    let mut out = LogCameras::default();
    let mut dropped = Dropped::default();
    while let Some(rec) = records.next_record().map_err(read_err)? {
        let vision = match rec.kind {
            MessageType::Vision => Vision::decode(rec.payload, &mut dropped),
            MessageType::LegacyVision => Vision::decode_legacy(rec.payload, &mut dropped),
            _ => continue,
        };
        let Some(geometry) = vision.ok().and_then(|v| v.geometry) else {
            continue;
        };
        for cam in geometry.cameras {
            let id = cam.camera_id;
            if out.latest.get(&id) != Some(&cam) {
                *out.versions.entry(id).or_insert(0) += 1;
                out.latest.insert(id, cam);
            }
        }
    }
    drop(records);
    stream.check().map_err(|e| read_err(e.into()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;

    /// ssl-vision's field → image projection, written out independently
    /// of the calibration code: quaternion rotation, perspective division,
    /// Cardano's root for the distortion, focal length and principal point.
    fn ssl_vision_project(cam: &CameraModel, p: [f64; 3]) -> Vec2 {
        let [qx, qy, qz, qw] = {
            let n = cam.rotation.iter().map(|v| v * v).sum::<f64>().sqrt();
            cam.rotation.map(|v| v / n)
        };
        let rot = |v: [f64; 3]| {
            let (x2, y2, z2) = (qx * qx, qy * qy, qz * qz);
            let (xy, xz, yz) = (qx * qy, qx * qz, qy * qz);
            let (wx, wy, wz) = (qw * qx, qw * qy, qw * qz);
            [
                (1.0 - 2.0 * (y2 + z2)) * v[0] + 2.0 * (xy - wz) * v[1] + 2.0 * (xz + wy) * v[2],
                2.0 * (xy + wz) * v[0] + (1.0 - 2.0 * (x2 + z2)) * v[1] + 2.0 * (yz - wx) * v[2],
                2.0 * (xz - wy) * v[0] + 2.0 * (yz + wx) * v[1] + (1.0 - 2.0 * (x2 + y2)) * v[2],
            ]
        };
        let c = rot(p);
        let c = [
            c[0] + cam.translation[0],
            c[1] + cam.translation[1],
            c[2] + cam.translation[2],
        ];
        let (ux, uy) = (c[0] / c[2], c[1] / c[2]);
        let ru = (ux * ux + uy * uy).sqrt();
        let a = cam.distortion;
        let rd = if a <= f64::MIN_POSITIVE {
            ru
        } else {
            let b = -9.0 * a * a * ru + a * (a * (12.0 + 81.0 * a * ru * ru)).sqrt();
            let b = if b < 0.0 {
                -(-b).powf(1.0 / 3.0)
            } else {
                b.powf(1.0 / 3.0)
            };
            (2.0f64 / 3.0).powf(1.0 / 3.0) / b - b / (18.0f64.powf(1.0 / 3.0) * a)
        };
        let s = if ru > 0.0 { rd / ru } else { 1.0 };
        Vec2::new(
            cam.focal_length * ux * s + cam.principal_point.x,
            cam.focal_length * uy * s + cam.principal_point.y,
        )
    }

    /// A camera `height` mm above `(x, y)`, looking down, tilted `tilt`
    /// radians about the field's x axis, turned `yaw` about the vertical.
    fn model(x: f64, y: f64, height: f64, tilt: f64, yaw: f64, distortion: f64) -> CameraModel {
        // Looking straight down: camera x = field x, camera y = −field y,
        // camera z = −field z; a half turn about the x axis.
        let down = [1.0, 0.0, 0.0, 0.0];
        let qmul = |a: [f64; 4], b: [f64; 4]| {
            let [ax, ay, az, aw] = a;
            let [bx, by, bz, bw] = b;
            [
                aw * bx + ax * bw + ay * bz - az * by,
                aw * by - ax * bz + ay * bw + az * bx,
                aw * bz + ax * by - ay * bx + az * bw,
                aw * bw - ax * bx - ay * by - az * bz,
            ]
        };
        let tilt_q = [(tilt / 2.0).sin(), 0.0, 0.0, (tilt / 2.0).cos()];
        let yaw_q = [0.0, 0.0, (yaw / 2.0).sin(), (yaw / 2.0).cos()];
        let q = qmul(tilt_q, qmul(down, yaw_q));
        let r = rotation(q).unwrap();
        let eye = [x, y, height];
        let t = [0, 1, 2].map(|i| -(r[i][0] * eye[0] + r[i][1] * eye[1] + r[i][2] * eye[2]));
        CameraModel {
            camera_id: 0,
            focal_length: 550.0,
            principal_point: Vec2::new(390.0, 290.0),
            distortion,
            rotation: q,
            translation: t,
            derived_position: None,
            image_size: Some([780, 580]),
        }
    }

    #[test]
    fn equals_ssl_visions_projection_over_the_image() {
        for (i, cam) in [
            model(-2250.0, 1500.0, 4000.0, 0.0, 0.0, 0.0),
            model(-2250.0, 1500.0, 4000.0, 0.05, 0.3, 0.12),
            model(2000.0, -1800.0, 3500.0, -0.1, 2.0, 0.35),
            model(0.0, 0.0, 6000.0, 0.2, -1.0, 1.5),
        ]
        .iter()
        .enumerate()
        {
            let c = calibration(cam).unwrap();
            let mut checked = 0;
            let mut worst: f64 = 0.0;
            for gx in -50..=50 {
                for gy in -35..=35 {
                    let p = [gx as f64 * 100.0, gy as f64 * 100.0, 0.0];
                    let want = ssl_vision_project(cam, p);
                    if !(0.0..=780.0).contains(&want.x) || !(0.0..=580.0).contains(&want.y) {
                        continue;
                    }
                    let got = c.project(Vec2::new(p[0], p[1])).unwrap();
                    worst = worst.max((got - want).length());
                    checked += 1;
                }
            }
            assert!(checked > 200, "camera {i}: only {checked} points in view");
            assert!(worst < 0.5, "camera {i}: {worst} px");
            assert!(worst < 1e-6, "camera {i}: exact up to rounding, not {worst} px");
        }
    }

    #[test]
    fn negative_distortion_is_ignored_like_ssl_vision_does() {
        let cam = model(0.0, 0.0, 4000.0, 0.1, 0.0, -0.2);
        let c = calibration(&cam).unwrap();
        assert!(c.distortion().is_none());
        let want = ssl_vision_project(&cam, [300.0, 200.0, 0.0]);
        assert!((c.project(Vec2::new(300.0, 200.0)).unwrap() - want).length() < 1e-9);
        assert_eq!(notes(&cam).len(), 1);
    }

    #[test]
    fn placeholder_models_are_refused() {
        // grSim sends q = (0.7, 0.7, 0.7, 0.7), t = (0, 0, 3500): the
        // camera sits in the floor plane.
        let mut cam = model(0.0, 0.0, 4000.0, 0.0, 0.0, 0.2);
        cam.rotation = [0.7; 4];
        cam.translation = [0.0, 0.0, 3500.0];
        let e = calibration(&cam).unwrap_err();
        assert!(e.to_string().contains("floor"), "{e}");
        cam.rotation = [0.0; 4];
        assert!(calibration(&cam).is_err());
        cam.rotation = [1.0, 0.0, 0.0, 0.0];
        cam.focal_length = 0.0;
        assert!(calibration(&cam).is_err());
    }
}
