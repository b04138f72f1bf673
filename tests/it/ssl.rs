//! SSL game logs end to end: `log info|select|dump|convert` and `calib
//! from-ssl` on the fixtures cut from a real match (`tests/data/ssl/`),
//! on logs written here, and on the whole match when the shared test
//! media are present.

use std::path::{Path, PathBuf};

use underlay::calib::{Calibration, DistortionModel};
use underlay::log::Vec2;
use underlay::ssl::file::MessageType;
use underlay::ssl::file::write::LogWriter;
use underlay::ssl::packets::{CameraModel, FieldGeometry, Geometry, Vision};

use crate::util::{assert_ok, run, shared_media, stderr, stdout, tmp};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ssl")
        .join(name)
}

#[test]
fn log_info_reads_a_gzipped_game_log() {
    let o = run([
        "log".as_ref(),
        "info".as_ref(),
        fixture("ball-out-35s.log.gz").as_os_str(),
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    for want in [
        "format:      SSL game log",
        "name:        SSL game: grSim AI Yellow (yellow) vs grSim AI Blue (blue)",
        "times:       seconds since the Unix epoch; world unit mm",
        "referee/events/ball_left_field_touch_line",
        "camera/3",
        "robots/yellow/5",
        "warnings:    none",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
}

/// The first record's receive time of a plain game log, in seconds.
fn first_time(path: &Path) -> f64 {
    let b = std::fs::read(path).unwrap();
    let ns = i64::from_be_bytes(b[16..24].try_into().unwrap());
    ns as f64 * 1e-9
}

#[test]
fn select_takes_epoch_seconds_or_seconds_from_the_start() {
    let log = fixture("push-card-64s.log");
    // 64.6 s into the match: blue 1 pushed a yellow robot.
    let rel = run([
        "log",
        "select",
        log.to_str().unwrap(),
        "--at",
        "+1.0",
        "--max-level",
        "0",
    ]);
    assert_ok(&rel);
    let abs_at = format!("{:.6}", first_time(&log) + 1.0);
    let abs = run([
        "log",
        "select",
        log.to_str().unwrap(),
        "--at",
        &abs_at,
        "--max-level",
        "0",
    ]);
    assert_ok(&abs);
    assert_eq!(stdout(&rel), stdout(&abs));
    let out = stdout(&rel);
    assert!(
        out.contains("robots/blue/1") && out.contains("referee/events/bot_pushed_bot"),
        "{out}"
    );
    assert!(out.contains("STOP · first half"), "{out}");
    let bad = run(["log", "select", log.to_str().unwrap(), "--at", "+x"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("+S from the start"), "{}", stderr(&bad));
}

#[test]
fn a_game_log_converts_to_native_and_back_to_the_same_drawing() {
    let dir = tmp();
    let native = dir.path().join("match.ulog.zst");
    let o = run([
        "log".as_ref(),
        "convert".as_ref(),
        fixture("push-card-64s.log").as_os_str(),
        native.as_os_str(),
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("(SSL game log) →"), "{}", stdout(&o));
    let a = underlay::formats::load_log(&fixture("push-card-64s.log")).unwrap();
    let b = underlay::formats::load_log(&native).unwrap();
    assert_eq!(a.frames, b.frames);
    assert_eq!(a.primitives.len(), b.primitives.len());
    let dump = run([
        "log".as_ref(),
        "dump".as_ref(),
        fixture("push-card-64s.log").as_os_str(),
    ]);
    assert_ok(&dump);
    assert!(stdout(&dump).contains("robot pushed a robot: blue 1"));
}

#[test]
fn calib_from_ssl_explains_what_it_cannot_use() {
    let log = fixture("ball-out-35s.log.gz");
    let list = run(["calib".as_ref(), "from-ssl".as_ref(), log.as_os_str()]);
    assert!(!list.status.success());
    assert!(
        stderr(&list).contains("cameras 0, 1, 2, 3: choose one with --camera N"),
        "{}",
        stderr(&list)
    );
    let missing = run([
        "calib".as_ref(),
        "from-ssl".as_ref(),
        log.as_os_str(),
        "--camera".as_ref(),
        "9".as_ref(),
    ]);
    assert!(
        stderr(&missing).contains("no calibration of camera 9"),
        "{}",
        stderr(&missing)
    );
    // grSim sends placeholder models that see the floor edge-on.
    let grsim = run([
        "calib".as_ref(),
        "from-ssl".as_ref(),
        log.as_os_str(),
        "--camera".as_ref(),
        "0".as_ref(),
    ]);
    assert!(!grsim.status.success());
    let e = stderr(&grsim);
    assert!(e.contains("camera 0 of") && e.contains("floor"), "{e}");
}

/// A camera 4 m above (1000, −500) looking down, tilted a little.
fn camera_model() -> CameraModel {
    // Looking down: a half turn about the x axis, then a small tilt.
    let (tilt, yaw) = (0.1f64, 0.3f64);
    let q_down = [1.0, 0.0, 0.0, 0.0];
    let q_tilt = [(tilt / 2.0).sin(), 0.0, 0.0, (tilt / 2.0).cos()];
    let q_yaw = [0.0, 0.0, (yaw / 2.0).sin(), (yaw / 2.0).cos()];
    let mul = |a: [f64; 4], b: [f64; 4]| {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    };
    let q = mul(q_tilt, mul(q_down, q_yaw));
    let r = underlay::ssl::camera::rotation(q).unwrap();
    let eye = [1000.0, -500.0, 4000.0];
    let t = [0, 1, 2].map(|i| -(r[i][0] * eye[0] + r[i][1] * eye[1] + r[i][2] * eye[2]));
    CameraModel {
        camera_id: 2,
        focal_length: 600.0,
        principal_point: Vec2::new(390.0, 290.0),
        distortion: 0.2,
        rotation: q,
        translation: t,
        derived_position: Some(eye),
        image_size: Some([780, 580]),
    }
}

#[test]
fn calib_from_ssl_writes_the_cameras_calibration() {
    let dir = tmp();
    let log = dir.path().join("game.log");
    let cam = camera_model();
    let geometry = Vision {
        detection: None,
        geometry: Some(Geometry {
            field: FieldGeometry::division_b(),
            cameras: vec![cam],
        }),
    };
    let mut w = LogWriter::new(std::fs::File::create(&log).unwrap()).unwrap();
    w.record(1_700_000_000_000_000_000, MessageType::Vision, &geometry.encode())
        .unwrap();
    w.finish().unwrap();
    let out = dir.path().join("cam2.toml");
    let o = run([
        "calib".as_ref(),
        "from-ssl".as_ref(),
        log.as_os_str(),
        "--camera".as_ref(),
        "2".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_ok(&o);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("# underlay calibration: camera 2 of"), "{text}");
    assert!(text.contains("model = \"inverse\""), "{text}");
    let c = Calibration::load(&out).unwrap();
    let d = c.distortion().unwrap();
    assert_eq!(d.model, DistortionModel::Inverse);
    assert!((d.k1 - 0.2).abs() < 1e-6 && (d.focal[0] - 600.0).abs() < 1e-4);
    assert_eq!(c.image_size(), Some([780, 580]));
    // The point below the camera, seen through a tilt of 0.1 rad, is
    // 600·tan(0.1) px from the principal point (distorted a little).
    let nadir = c.project(Vec2::new(1000.0, -500.0)).unwrap();
    let off = (nadir - Vec2::new(390.0, 290.0)).length();
    let ru = 0.1f64.tan();
    let rd = ru / (1.0 + 0.2 * ru * ru); // first-order guess
    assert!((off - 600.0 * rd).abs() < 0.5, "{off}");
    // Without -o the calibration goes to standard output.
    let o = run([
        "calib".as_ref(),
        "from-ssl".as_ref(),
        log.as_os_str(),
        "--camera".as_ref(),
        "2".as_ref(),
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("homography = ["), "{}", stdout(&o));
    // The same camera calibrates an export over a camera video directly.
    let video = dir.path().join("cam.png");
    underlay::video::still::save_rgb(&video, &underlay::image::RgbImage::from_elem((580, 780, 3), 90))
        .unwrap();
    let annotated = dir.path().join("a.mp4");
    let export = |camera: &str| {
        run([
            "export".as_ref(),
            "--video".as_ref(),
            video.as_os_str(),
            "--log".as_ref(),
            log.as_os_str(),
            "--camera".as_ref(),
            camera.as_ref(),
            "-o".as_ref(),
            annotated.as_os_str(),
        ])
    };
    let o = export("2");
    assert_ok(&o);
    assert!(annotated.exists());
    // A camera the log does not have is named with those it has.
    let o = export("5");
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no calibration of camera 5; it has cameras 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_whole_match_reads_with_every_event() {
    let Some(path) = shared_media("ssl/match-grsim-87s.log.gz") else {
        return;
    };
    let log = underlay::formats::load_log(&path).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let (lo, hi) = log.time_range().unwrap();
    assert!((hi - lo - 87.1).abs() < 0.05, "{}", hi - lo);
    let mut events: Vec<(String, f64)> = log
        .frames
        .iter()
        .filter(|f| f.time.is_persistent() && f.time.start().is_finite())
        .flat_map(|f| log.frame_primitives(f).iter().map(move |p| (p, f.time.start())))
        .filter_map(|(p, t)| {
            let name = log.entities.name(p.entity);
            name.strip_prefix("referee/events/")
                .map(|n| (n.to_owned(), t - lo))
        })
        .collect();
    events.dedup_by(|a, b| a.0 == b.0 && (a.1 - b.1).abs() < 1e-9);
    let names: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "ball_left_field_touch_line",
            "ball_left_field_goal_line",
            "goal",
            "bot_pushed_bot"
        ]
    );
    for ((_, t), want) in events.iter().zip([36.0, 44.6, 52.5, 64.6]) {
        assert!((t - want).abs() < 0.1, "{events:?}");
    }
    // Blue 5 leaves the field at 69.9 s: no robot of it afterwards.
    let blue5 = log.entities.get("robots/blue/5").unwrap();
    let last = log
        .frames
        .iter()
        .filter(|f| log.frame_primitives(f).iter().any(|p| p.entity == blue5))
        .map(|f| f.time.start() - lo)
        .fold(0.0, f64::max);
    assert!((last - 69.9).abs() < 0.2, "{last}");
}
