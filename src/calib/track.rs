//! A camera that moves: its poses over time (a 3D-league agent's head
//! camera, one pose per vision message) and the pinhole camera it is at
//! any time, for a picture of any size.
//!
//! Poses are in OpenCV's convention (module [`camera`](super::camera)):
//! `rotation` takes world vectors into the camera frame (x right, y down,
//! z forward) and `centre` is the camera's position in the world. The
//! intrinsics are a field of view: the picture's larger side spans
//! [`CameraTrack::fov_deg`], with square pixels and the principal point
//! in the middle, and no lens distortion.
//!
//! Between two poses at most [`CameraTrack::hold`] seconds apart the
//! camera is interpolated (position linearly, rotation along the shortest
//! turn); after the last pose, or across a longer gap, the last pose is
//! held for `hold` seconds. Before the first pose and beyond a hold the
//! pose is unknown ([`CameraTrack::pose_at`] is `None`).

use crate::calib::camera::{rodrigues, rotation_vector};
use crate::calib::{CalibError, Calibration, Mat3};
use crate::geom::mat3::{mul, transpose};
use crate::geom::vec3::Vec3;

/// One pose of a moving camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackPose {
    /// When (the logs' clock, seconds).
    pub time: f64,
    /// World → camera rotation (OpenCV axes).
    pub rotation: Mat3,
    /// The camera's centre in the world.
    pub centre: Vec3,
}

/// A camera's poses over time and its field of view.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraTrack {
    /// What the camera is (an agent's name), for messages and captions.
    pub name: String,
    /// The poses, in time order.
    poses: Vec<TrackPose>,
    /// Degrees the picture's larger side spans.
    pub fov_deg: f64,
    /// Seconds a pose is interpolated across or held for.
    pub hold: f64,
}

impl CameraTrack {
    /// A track of `poses` (sorted here by time; poses that are not finite
    /// are left out) with a field of view of `fov_deg` degrees (clamped to
    /// 1°…170°) and `hold` seconds.
    pub fn new(name: impl Into<String>, mut poses: Vec<TrackPose>, fov_deg: f64, hold: f64) -> CameraTrack {
        poses.retain(|p| {
            p.time.is_finite()
                && p.centre.iter().all(|v| v.is_finite())
                && p.rotation.iter().flatten().all(|v| v.is_finite())
        });
        poses.sort_by(|a, b| a.time.total_cmp(&b.time));
        CameraTrack {
            name: name.into(),
            poses,
            fov_deg: if fov_deg.is_finite() {
                fov_deg.clamp(1.0, 170.0)
            } else {
                90.0
            },
            hold: if hold.is_finite() { hold.max(0.0) } else { 0.0 },
        }
    }

    /// The poses, in time order.
    pub fn poses(&self) -> &[TrackPose] {
        &self.poses
    }

    /// The time of the first pose.
    pub fn start(&self) -> Option<f64> {
        self.poses.first().map(|p| p.time)
    }

    /// The camera's pose at `t`: interpolated between the poses around it
    /// when they are at most [`Self::hold`] apart, else the last one before
    /// it held for `hold`; `None` before the first pose and beyond a hold.
    pub fn pose_at(&self, t: f64) -> Option<TrackPose> {
        if !t.is_finite() {
            return None;
        }
        // A hair of slack so a frame at a pose's own time shows that pose.
        let i = self
            .poses
            .partition_point(|p| p.time <= t + 1e-9)
            .checked_sub(1)?;
        let a = self.poses[i];
        if let Some(b) = self.poses.get(i + 1)
            && b.time - a.time <= self.hold
            && b.time > a.time
        {
            let f = ((t - a.time) / (b.time - a.time)).clamp(0.0, 1.0);
            // b = d·a: turn a fraction of d.
            let d = mul(&b.rotation, &transpose(&a.rotation));
            let turn = rotation_vector(&d).map(|v| v * f);
            return Some(TrackPose {
                time: t,
                rotation: mul(&rodrigues(turn), &a.rotation),
                centre: std::array::from_fn(|k| a.centre[k] + f * (b.centre[k] - a.centre[k])),
            });
        }
        (t - a.time <= self.hold).then_some(TrackPose { time: t, ..a })
    }

    /// The camera matrix for a `width`×`height` picture.
    pub fn intrinsics(&self, width: usize, height: usize) -> Mat3 {
        let (cx, cy) = ((width as f64 - 1.0) / 2.0, (height as f64 - 1.0) / 2.0);
        let half = (width.max(height) as f64) / 2.0;
        let f = half / (self.fov_deg.to_radians() / 2.0).tan();
        [[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]]
    }

    /// The camera at `pose` for a `width`×`height` picture (a full camera,
    /// clipped to the picture); an error when the pose is below the floor.
    pub fn camera(&self, pose: &TrackPose, width: usize, height: usize) -> Result<Calibration, CalibError> {
        let k = self.intrinsics(width, height);
        let r = &pose.rotation;
        let t: Vec3 = std::array::from_fn(|i| -(0..3).map(|j| r[i][j] * pose.centre[j]).sum::<f64>());
        Ok(Calibration::from_camera(&k, &[], r, t)?.with_image_size(width as u32, height as u32))
    }

    /// The world → pixel floor homography of the camera at `pose`, with
    /// its sign kept: a floor point's third coordinate is its depth, so
    /// positive in front of the camera (for warping pictures of the floor).
    pub fn floor_homography(&self, pose: &TrackPose, width: usize, height: usize) -> Mat3 {
        let k = self.intrinsics(width, height);
        let r = &pose.rotation;
        let t: Vec3 = std::array::from_fn(|i| -(0..3).map(|j| r[i][j] * pose.centre[j]).sum::<f64>());
        let rt = [
            [r[0][0], r[0][1], t[0]],
            [r[1][0], r[1][1], t[1]],
            [r[2][0], r[2][1], t[2]],
        ];
        mul(&k, &rt)
    }
}

/// A camera that sees nothing of the world near the floor: high above it
/// (a million units), looking straight up. Pictures whose camera is not
/// known are drawn through it, so nothing lands on them.
pub fn blind(width: usize, height: usize) -> Result<Calibration, CalibError> {
    let k = [
        [1.0, 0.0, width as f64 / 2.0],
        [0.0, 1.0, height as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ];
    // Camera axes = world axes: looking up (z), x and y as the world's.
    let r = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let t = [0.0, 0.0, -1.0e6];
    Ok(Calibration::from_camera(&k, &[], &r, t)?.with_image_size(width as u32, height as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera::look_at;
    use crate::geom::Vec2;

    fn pose(time: f64, eye: Vec3, target: Vec3) -> TrackPose {
        let (rotation, _) = look_at(eye, target).unwrap();
        TrackPose {
            time,
            rotation,
            centre: eye,
        }
    }

    #[test]
    fn poses_are_interpolated_across_short_gaps_and_held_then_unknown() {
        let a = pose(1.0, [0.0, 0.0, 1.0], [5.0, 0.0, 0.0]);
        let b = pose(1.1, [0.2, 0.0, 1.0], [5.0, 5.0, 0.0]);
        let c = pose(3.0, [1.0, 0.0, 1.0], [5.0, 0.0, 0.0]);
        let track = CameraTrack::new("a", vec![c, b, a], 120.0, 0.25);
        assert_eq!(track.start(), Some(1.0));
        assert!(track.pose_at(0.99).is_none());
        assert_eq!(track.pose_at(1.0).unwrap().rotation, a.rotation);
        let mid = track.pose_at(1.05).unwrap();
        assert!((mid.centre[0] - 0.1).abs() < 1e-12);
        // Half way round, about the same axis.
        let turn = |from: &TrackPose, to: &TrackPose| {
            rotation_vector(&mul(&to.rotation, &transpose(&from.rotation)))
        };
        let (whole, half) = (turn(&a, &b), turn(&a, &mid));
        assert!(whole.iter().map(|v| v * v).sum::<f64>() > 0.1);
        for k in 0..3 {
            assert!((half[k] - whole[k] / 2.0).abs() < 1e-9, "{half:?} vs {whole:?}");
        }
        // The view direction half way between a's and b's.
        let dir = |p: &TrackPose| p.rotation[2];
        let angle = |u: Vec3, v: Vec3| (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]).clamp(-1.0, 1.0).acos();
        assert!((angle(dir(&a), dir(&mid)) - angle(dir(&mid), dir(&b))).abs() < 1e-9);
        // A gap of 1.9 s: b held for 0.25 s, then nothing until c.
        assert_eq!(track.pose_at(1.3).unwrap().centre, b.centre);
        assert!(track.pose_at(1.4).is_none());
        assert_eq!(track.pose_at(3.2).unwrap().centre, c.centre);
        assert!(track.pose_at(3.3).is_none());
        assert!(track.pose_at(f64::NAN).is_none());
    }

    #[test]
    fn the_camera_sees_what_lies_in_its_view_and_the_homography_keeps_depth_signs() {
        let p = pose(0.0, [0.0, 0.0, 1.0], [4.0, 0.0, 0.0]);
        let track = CameraTrack::new("a", vec![p], 120.0, 0.1);
        let c = track.camera(&p, 640, 480).unwrap();
        assert!(c.is_full_camera());
        // The point looked at is in the middle; one 60° to the left of the
        // view direction (on the camera's own level) at the left edge.
        let m = c.project(Vec2::new(4.0, 0.0)).unwrap();
        assert!((m.x - 319.5).abs() < 1e-6, "{m:?}");
        let dir = crate::geom::vec3::normalized([4.0, 0.0, -1.0]).unwrap();
        // The camera's own left at 60° from the view direction, level with it.
        let left = crate::geom::vec3::cross([0.0, 0.0, 1.0], dir);
        let left = crate::geom::vec3::normalized(left).unwrap();
        let (s, co) = 60f64.to_radians().sin_cos();
        let q: Vec3 = std::array::from_fn(|k| [0.0, 0.0, 1.0][k] + co * dir[k] + s * left[k]);
        let px = c.project3(q).unwrap();
        assert!(px.x.abs() < 0.5 + 1e-6, "{px:?}");
        // A floor point behind the camera has negative depth.
        let h = track.floor_homography(&p, 640, 480);
        let w = |x: f64, y: f64| h[2][0] * x + h[2][1] * y + h[2][2];
        assert!(w(4.0, 0.0) > 0.0 && w(-4.0, 0.0) < 0.0);
        let blind = blind(640, 480).unwrap();
        for q in [[0.0, 0.0, 0.0], [10.0, -3.0, 2.0], [0.0, 0.0, 1000.0]] {
            assert!(blind.project3(q).is_none(), "{q:?}");
        }
    }
}
