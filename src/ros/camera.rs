//! A ROS camera as an underlay calibration: `sensor_msgs/CameraInfo` (the
//! camera matrix and lens: `plumb_bob`, `rational_polynomial` or
//! `equidistant`, OpenCV's models all three) and the camera's optical frame placed in the world
//! by the transform tree give a full camera ([`Calibration::from_camera`]).
//! A rectified image (`…image_rect…`) is drawn through the projection
//! matrix `P` without distortion, as `image_geometry` does. Foxglove's
//! `CameraCalibration` (the same fields, `K`, `D`, `P` in capitals) is read
//! alike.

use super::tf::Transform;
use super::value::Struct;
use crate::calib::{CalibError, Calibration, CameraLens, Mat3};

/// The intrinsics of a `CameraInfo`.
#[derive(Clone, Debug, PartialEq)]
pub struct Intrinsics {
    pub width: u32,
    pub height: u32,
    /// The camera matrix.
    pub k: Mat3,
    /// OpenCV's `(k1, k2, p1, p2[, k3[, k4, k5, k6]])` (a fisheye lens's
    /// `(k1, k2, k3, k4)`), or empty.
    pub distortion: Vec<f64>,
    /// The lens model `distortion` is for.
    pub lens: CameraLens,
    /// The optical frame (`header.frame_id`).
    pub frame: String,
}

/// The numbers of an array field (`k`, or Foxglove's `K`).
fn numbers(msg: &Struct<'_>, field: &str) -> Vec<f64> {
    msg.array(field)
        .or_else(|| msg.array(&field.to_ascii_uppercase()))
        .unwrap_or(&[])
        .iter()
        .filter_map(|v| v.as_f64())
        .collect()
}

/// The intrinsics of a `CameraInfo` message, for pictures that are
/// `rectified` or not; or why they cannot be drawn through.
pub fn intrinsics(msg: &Struct<'_>, rectified: bool) -> Result<Intrinsics, String> {
    let dim = |f: &str| {
        msg.path(f)
            .and_then(|v| v.as_i64())
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0)
    };
    let (width, height) = (dim("width"), dim("height"));
    let k = numbers(msg, "k");
    let p = numbers(msg, "p");
    let k: Mat3 = if rectified {
        if p.len() != 12 {
            return Err(format!("its projection matrix has {} numbers, not 12", p.len()));
        }
        [[p[0], p[1], p[2]], [p[4], p[5], p[6]], [p[8], p[9], p[10]]]
    } else {
        if k.len() != 9 {
            return Err(format!("its camera matrix has {} numbers, not 9", k.len()));
        }
        [[k[0], k[1], k[2]], [k[3], k[4], k[5]], [k[6], k[7], k[8]]]
    };
    if k[0][0] == 0.0 || k[1][1] == 0.0 {
        return Err("its camera matrix is all zeros (the camera was not calibrated)".into());
    }
    let model = msg.str("distortion_model").unwrap_or("");
    let d = numbers(msg, "d");
    let fisheye = matches!(model, "equidistant" | "fisheye" | "kannala_brandt");
    let (lens, distortion) = if rectified {
        (CameraLens::Standard, Vec::new())
    } else if fisheye {
        // OpenCV's fisheye model takes four: a shorter D is padded, a
        // longer one's extra terms must be zero.
        if d.len() > 4 && d[4..].iter().any(|v| *v != 0.0) {
            return Err(format!(
                "its fisheye lens has {} coefficients; the equidistant model has 4 (k1–k4)",
                d.len()
            ));
        }
        let mut k = d;
        k.resize(4, 0.0);
        (CameraLens::Fisheye, k)
    } else if d.iter().all(|v| *v == 0.0) {
        (CameraLens::Standard, Vec::new())
    } else {
        match model {
            "plumb_bob" | "rational_polynomial" => {
                if d.len() > 8 && d[8..].iter().any(|v| *v != 0.0) {
                    return Err(format!(
                        "its lens ({model} with thin-prism or tilt terms {:?}) has terms underlay does not model; give a calibration with --calib",
                        &d[8..]
                    ));
                }
                let mut k: Vec<f64> = d.into_iter().take(8).collect();
                // OpenCV's lengths: 4, 5 or 8.
                let n = match k.len() {
                    0..=4 => 4,
                    5 => 5,
                    _ => 8,
                };
                k.resize(n, 0.0);
                (CameraLens::Standard, k)
            }
            other => {
                return Err(format!(
                    "its distortion model `{other}` is not one underlay knows"
                ));
            }
        }
    };
    Ok(Intrinsics {
        width,
        height,
        k,
        distortion,
        lens,
        frame: super::tf::frame_name(
            msg.str("header.frame_id")
                .or_else(|| msg.str("frame_id"))
                .unwrap_or(""),
        )
        .to_owned(),
    })
}

/// The calibration of a camera with `intrinsics` whose optical frame (x
/// right, y down, z forward) is at `world_from_camera` in the world.
pub fn calibration(
    intrinsics: &Intrinsics,
    world_from_camera: &Transform,
) -> Result<Calibration, CalibError> {
    let camera_from_world = world_from_camera.inverse();
    let r = camera_from_world.matrix();
    let cal = Calibration::from_camera_lens(
        &intrinsics.k,
        intrinsics.lens,
        &intrinsics.distortion,
        &r,
        camera_from_world.translation,
    )?;
    Ok(if intrinsics.width > 0 && intrinsics.height > 0 {
        cal.with_image_size(intrinsics.width, intrinsics.height)
    } else {
        cal
    })
}

/// Whether a picture topic carries rectified pictures (`image_rect`,
/// `image_rect_color`).
pub fn is_rectified(topic: &str) -> bool {
    topic.split('/').any(|part| part.starts_with("image_rect"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_camera_placed_by_its_transform_projects_like_the_true_one() {
        // Looking straight down from 5 m over (1, 2): optical x = world x,
        // optical y = −world y, optical z = −world z.
        let world_from_camera = Transform::new([1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 5.0]).unwrap();
        let intr = Intrinsics {
            width: 640,
            height: 480,
            k: [[500.0, 0.0, 319.5], [0.0, 500.0, 239.5], [0.0, 0.0, 1.0]],
            distortion: vec![],
            lens: CameraLens::Standard,
            frame: "cam".into(),
        };
        let cal = calibration(&intr, &world_from_camera).unwrap();
        let px = cal.project(crate::geom::Vec2::new(2.0, 2.0)).unwrap();
        // 1 m to the right at 5 m: 100 px right of the centre.
        assert!(
            (px.x - 419.5).abs() < 1e-6 && (px.y - 239.5).abs() < 1e-6,
            "{px:?}"
        );
        let below = Transform::new([1.0, 0.0, 0.0, 0.0], [1.0, 2.0, -5.0]).unwrap();
        assert!(calibration(&intr, &below).is_err());
        assert!(is_rectified("/cam/image_rect_color") && !is_rectified("/cam/image_raw"));
    }

    /// A `CameraInfo` with distortion `model` and `d`, as JSON.
    fn info(model: &str, d: &[f64]) -> Struct<'static> {
        let json = format!(
            r#"{{"header": {{"frame_id": "cam"}}, "width": 1280, "height": 720, "distortion_model": "{model}",
                "d": {d:?}, "k": [900.0, 0.0, 640.0, 0.0, 880.0, 360.0, 0.0, 0.0, 1.0]}}"#
        );
        crate::ros::json::decode("sensor_msgs/msg/CameraInfo", json.as_bytes()).unwrap()
    }

    #[test]
    fn fisheye_and_rational_lenses_are_read_as_opencv_models() {
        // Straight down from 5 m: the normalised point (x, y) is the floor
        // point (1 + 5x, 2 − 5y).
        let down = Transform::new([1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 5.0]).unwrap();
        let floor = |n: [f64; 2]| crate::geom::Vec2::new(1.0 + 5.0 * n[0], 2.0 - 5.0 * n[1]);
        // The pixels OpenCV 4 gives (`fisheye.projectPoints` with
        // D = (0.1, −0.05, 0.01, −0.002); `projectPoints` with the
        // rational D below) for the normalised point (0.8, 0.5).
        let fisheye = intrinsics(&info("equidistant", &[0.1, -0.05, 0.01, -0.002]), false).unwrap();
        assert_eq!(fisheye.lens, CameraLens::Fisheye);
        let px = calibration(&fisheye, &down)
            .unwrap()
            .project(floor([0.8, 0.5]))
            .unwrap();
        assert!(
            (px.x - 1241.721142942122).abs() < 1e-6 && (px.y - 727.718476242408).abs() < 1e-6,
            "{px:?}"
        );
        let d = [0.2, -0.1, 0.001, -0.002, 0.01, 0.15, -0.05, 0.005];
        let rational = intrinsics(&info("rational_polynomial", &d), false).unwrap();
        assert_eq!(rational.distortion, d);
        let px = calibration(&rational, &down)
            .unwrap()
            .project(floor([0.8, 0.5]))
            .unwrap();
        assert!(
            (px.x - 1362.338128643765).abs() < 1e-6 && (px.y - 803.191056393412).abs() < 1e-6,
            "{px:?}"
        );
        // A fisheye with no coefficients is still a fisheye.
        let plain = intrinsics(&info("equidistant", &[]), false).unwrap();
        assert_eq!((plain.lens, plain.distortion.len()), (CameraLens::Fisheye, 4));
        // Terms no model here has are said.
        let e = intrinsics(&info("equidistant", &[0.1, 0.0, 0.0, 0.0, 0.3]), false).unwrap_err();
        assert!(e.contains("4 (k1–k4)"), "{e}");
        let mut prism = d.to_vec();
        prism.extend([0.01, 0.0, 0.0, 0.0]);
        let e = intrinsics(&info("rational_polynomial", &prism), false).unwrap_err();
        assert!(e.contains("thin-prism"), "{e}");
    }
}
