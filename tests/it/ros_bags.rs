//! ROS 2 recordings end to end (issue 34): the demo written as a bag by
//! `scripts/ros-demo-bag.py` (the PyPI packages `rosbags` and `mcap`, no ROS
//! install) — its pictures, its true camera as `CameraInfo` and transforms,
//! the truth's ball and robots as RViz markers — read by the real binary:
//! `log info` lists it, the camera it is drawn through is the demo's true
//! camera, the export of the bag draws exactly where the export of the demo
//! video with the same drawings and the demo's calibration draws, an MCAP
//! and a `.db3` of the same material export alike, and the markers live as
//! RViz keeps them (lifetimes, `DELETEALL`, `frame_locked`).

use std::path::{Path, PathBuf};
use std::process::Command;

use underlay::geom::Vec2;
use underlay::log::{FrameTime, Log, Raised, Shape};
use underlay::video::source::OpenOptions;

use crate::util::{assert_ok, text};

/// The demo's camera over 6 s at 10 fps, 640×360 (the `DELETEALL` of the
/// bag is at 5 s).
fn demo(dir: &Path) {
    assert_ok(&crate::util::run([
        "demo",
        "--out",
        dir.to_str().unwrap(),
        "--no-view",
        "--width",
        "640",
        "--height",
        "360",
        "--fps",
        "10",
        "--duration",
        "6",
    ]));
}

/// Writes the demo in `demo_dir` as a recording `out` with the script's
/// `extra` options; `None` (skipped) without a Python that has the packages.
fn bag(demo_dir: &Path, out: &Path, extra: &[&str]) -> Option<PathBuf> {
    let python = crate::util::python_with(
        "rosbags, mcap, cv2, numpy",
        "a Python with rosbags, mcap, cv2 and numpy",
    )?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ros-demo-bag.py");
    let o = Command::new(python)
        .arg(script)
        .arg(demo_dir)
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "ros-demo-bag.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(out.to_owned())
}

/// The demo's session with `log` instead of its own, at the bag's clock
/// (its stamps are 1 700 000 000 s plus the video time).
fn session_with(demo_dir: &Path, log: &Path) -> PathBuf {
    let text = std::fs::read_to_string(demo_dir.join("session.toml")).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("log = ") {
                format!("log = {:?}", log.to_str().unwrap())
            } else if l.starts_with("offset = ") {
                "offset = 1700000000.0".to_owned()
            } else if l.starts_with("image_size = ") {
                // The demo's camera is in mm, the bag's drawings in m.
                format!("{l}\nworld_unit = \"mm\"")
            } else {
                l.to_owned()
            }
        })
        .collect();
    let p = demo_dir.join("bag-session.toml");
    std::fs::write(&p, edited.join("\n")).unwrap();
    p
}

/// Pixels an export changed from the picture it drew on (any channel by
/// more than 40), as a mask.
fn drawn(export: &underlay::image::RgbImage, picture: &underlay::image::RgbImage) -> Vec<bool> {
    export
        .as_slice()
        .unwrap()
        .chunks_exact(3)
        .zip(picture.as_slice().unwrap().chunks_exact(3))
        .map(|(a, b)| a.iter().zip(b).any(|(x, y)| x.abs_diff(*y) > 40))
        .collect()
}

/// How many of `a`'s pixels have none of `b`'s within 1 px.
fn unmatched(a: &[bool], b: &[bool], w: usize, h: usize) -> usize {
    let mut n = 0;
    for y in 0..h {
        for x in 0..w {
            if !a[y * w + x] {
                continue;
            }
            let near = (y.saturating_sub(1)..=(y + 1).min(h - 1))
                .any(|yy| (x.saturating_sub(1)..=(x + 1).min(w - 1)).any(|xx| b[yy * w + xx]));
            n += usize::from(!near);
        }
    }
    n
}

/// Compares two exports frame by frame over the same input pictures: the
/// same frames at the same times, drawn in the same places within 1 px.
fn same_drawings(a: &Path, b: &Path, pictures: &Path) {
    let (fa, fb, fp) = (
        crate::demo::read_all(a),
        crate::demo::read_all(b),
        crate::demo::read_all(pictures),
    );
    assert_eq!(fa.len(), fb.len(), "{} and {}", a.display(), b.display());
    let mut total = 0;
    for ((x, y), p) in fa.iter().zip(&fb).zip(&fp) {
        assert!((x.time - y.time).abs() < 1e-3, "{} vs {}", x.time, y.time);
        let (h, w, _) = x.image.dim();
        let (da, db) = (drawn(&x.image, &p.image), drawn(&y.image, &p.image));
        let drawn_px = da.iter().filter(|v| **v).count();
        total += drawn_px;
        let off = unmatched(&da, &db, w, h) + unmatched(&db, &da, w, h);
        // Encoding noise along edges: at most 1 % of what was drawn.
        assert!(
            off * 100 <= drawn_px.max(100),
            "frame at {} s ({} s, {} s): {off} of {drawn_px} drawn pixels differ ({} drawn in the other)",
            x.time,
            y.time,
            p.time,
            db.iter().filter(|v| **v).count()
        );
    }
    assert!(total > 1000, "hardly anything was drawn: {total} pixels");
}

#[test]
fn a_demo_bag_is_drawn_through_its_true_camera_like_the_demo() {
    let tmp = crate::util::tmp();
    let d = tmp.path().join("demo");
    demo(&d);
    let Some(mcap) = bag(&d, &tmp.path().join("run.mcap"), &["--image", "raw"]) else {
        return;
    };
    let Some(db3) = bag(&d, &tmp.path().join("run.db3"), &["--image", "png"]) else {
        return;
    };

    // `log info` lists the topics and what each is for, and the camera.
    let info = crate::util::run(["log", "info", mcap.to_str().unwrap()]);
    assert_ok(&info);
    let t = text(&info);
    for want in [
        "MCAP recording (ROS 2, Foxglove)",
        "/camera/image_raw",
        "sensor_msgs/msg/Image",
        "pictures",
        "/camera/camera_info",
        "camera lens",
        "/tf_static",
        "transforms",
        "/markers",
        "visualization_msgs/msg/MarkerArray",
        "drawn",
        "camera:      /camera/image_raw, frame `camera_optical` in world `map` (fixed)",
        "world unit m",
    ] {
        assert!(t.contains(want), "`{want}` missing from:\n{t}");
    }

    // The camera from CameraInfo and the transforms is the demo's true one.
    let session = underlay::session::Session::load(&d.join("session.toml")).unwrap();
    let truth = session.draw_settings().unwrap().calibration.unwrap();
    for path in [&mcap, &db3] {
        let src = underlay::formats::open_source(path, &OpenOptions::default()).unwrap();
        let cal = src
            .info()
            .calibration
            .clone()
            .expect("a camera from the recording");
        assert_eq!((src.info().width, src.info().height), (640, 360));
        assert_eq!(src.info().frame_count, Some(60));
        let mut worst: f64 = 0.0;
        for i in -4..=4 {
            for j in -3..=3 {
                let p = Vec2::new(i as f64 * 1.0, j as f64 * 1.0);
                let (Some(a), Some(b)) = (cal.project(p), truth.project(p * 1000.0)) else {
                    continue;
                };
                worst = worst.max((a - b).length());
            }
        }
        assert!(
            worst < 0.01,
            "{}: {worst} px from the true camera",
            path.display()
        );
    }

    // The bag's export draws where the demo video's export with the same
    // drawings (converted to a native log) and the demo's camera draws.
    let ulog = tmp.path().join("markers.ulog");
    assert_ok(&crate::util::run([
        "log",
        "convert",
        mcap.to_str().unwrap(),
        ulog.to_str().unwrap(),
    ]));
    let from_session = tmp.path().join("session.mp4");
    let session_file = session_with(&d, &ulog);
    assert_ok(&crate::util::run([
        "export",
        session_file.to_str().unwrap(),
        "-o",
        from_session.to_str().unwrap(),
        "--no-mask",
    ]));
    let from_mcap = tmp.path().join("mcap.mp4");
    assert_ok(&crate::util::run([
        "export",
        mcap.to_str().unwrap(),
        "-o",
        from_mcap.to_str().unwrap(),
        "--no-mask",
    ]));
    same_drawings(&from_mcap, &from_session, &d.join("video.mp4"));
    let from_db3 = tmp.path().join("db3.mp4");
    assert_ok(&crate::util::run([
        "export",
        db3.to_str().unwrap(),
        "-o",
        from_db3.to_str().unwrap(),
        "--no-mask",
    ]));
    same_drawings(&from_db3, &from_mcap, &d.join("video.mp4"));
}

/// The persistent frames of `entity`: (start, end, shapes).
fn lives(log: &Log, entity: &str) -> Vec<(f64, f64, Vec<Shape>)> {
    log.frames
        .iter()
        .filter_map(|f| {
            let FrameTime::Persistent { start, end } = f.time else {
                return None;
            };
            let prims = log.frame_primitives(f);
            prims
                .iter()
                .any(|p| log.entities.name(p.entity) == entity)
                .then(|| (start, end, prims.iter().map(|p| p.shape.clone()).collect()))
        })
        .collect()
}

#[test]
fn the_demo_bags_markers_live_as_rviz_keeps_them() {
    let tmp = crate::util::tmp();
    let d = tmp.path().join("demo");
    demo(&d);
    let Some(mcap) = bag(&d, &tmp.path().join("run.mcap"), &["--image", "jpeg"]) else {
        return;
    };
    let log = underlay::formats::load_log(&mcap).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let t0 = 1_700_000_000.0;
    let clear = t0 + 5.0;
    // Nothing lives across the DELETEALL at 5 s.
    for f in &log.frames {
        if let FrameTime::Persistent { start, end } = f.time {
            assert!(
                !(start < clear - 1e-6 && end > clear + 1e-6),
                "{start} – {end} spans the DELETEALL"
            );
        }
    }
    // A robot's cylinder lives 0.2 s unless replaced first (every 0.1 s).
    let robot = lives(&log, "markers/robots/blue/3");
    assert_eq!(robot.len(), 60);
    assert!(
        robot.iter().all(|(a, b, _)| b - a <= 0.2 + 1e-6 && b > a),
        "{robot:?}"
    );
    assert!(
        robot
            .iter()
            .filter(|(a, b, _)| (b - a - 0.1).abs() < 1e-6)
            .count()
            >= 50
    );
    // The ball (lifetime 0) lives until replaced: the last one forever.
    let ball = lives(&log, "markers/ball/0");
    assert_eq!(ball.last().map(|l| l.1), Some(f64::INFINITY));
    // The frame-locked heading arrow starts where blue 0 is at each moment.
    let arrow = lives(&log, "markers/heading/0");
    assert!(arrow.len() >= 59, "{}", arrow.len());
    let truth = std::fs::read_to_string(d.join("truth/trajectory.csv")).unwrap();
    let rows: Vec<Vec<f64>> = truth
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let mut checked = 0;
    for (start, _, shapes) in &arrow {
        let k = ((start - t0) * 10.0).round() as usize;
        let Some(row) = rows.get(k) else { continue };
        let robot = Vec2::new(row[4] / 1000.0, row[5] / 1000.0);
        let from = match &shapes[0] {
            Shape::Polygon { vertices, .. } => vertices[0],
            Shape::Raised(r) => match &**r {
                Raised::Path { points, .. } => Vec2::new(points[0][0], points[0][1]),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert!(
            (from - robot).length() < 1e-3,
            "{start}: arrow from {from:?}, robot at {robot:?}"
        );
        checked += 1;
    }
    assert!(checked >= 59);
}

#[test]
fn a_camera_that_moves_is_drawn_through_a_calibration_per_frame() {
    let tmp = crate::util::tmp();
    let d = tmp.path().join("demo");
    demo(&d);
    let Some(mcap) = bag(
        &d,
        &tmp.path().join("moving.mcap"),
        &["--image", "jpeg", "--frames", "12", "--moving-camera"],
    ) else {
        return;
    };
    let info = crate::util::run(["log", "info", mcap.to_str().unwrap()]);
    assert!(
        text(&info).contains("(moving: a calibration per frame)"),
        "{}",
        text(&info)
    );
    // Frame k's camera is the true one moved 5 cm along x per frame: it
    // sees a floor point where the true camera sees it 5 cm further back.
    let session = underlay::session::Session::load(&d.join("session.toml")).unwrap();
    let truth = session.draw_settings().unwrap().calibration.unwrap();
    let mut src = underlay::formats::open_source(&mcap, &OpenOptions::default()).unwrap();
    let mut k = 0;
    while let Some(f) = src.next_frame().unwrap() {
        let cal = f.calibration.as_ref().expect("a calibration of its own");
        let mut worst: f64 = 0.0;
        for (x, y) in [(-3.0, -2.0), (0.0, 0.0), (2.5, 1.5), (4.0, -2.5)] {
            let p = Vec2::new(x, y);
            let shifted = Vec2::new(x - 0.05 * k as f64, y) * 1000.0;
            let (a, b) = (cal.project(p).unwrap(), truth.project(shifted).unwrap());
            worst = worst.max((a - b).length());
        }
        assert!(worst < 0.01, "frame {k}: {worst} px");
        k += 1;
    }
    assert_eq!(k, 12);
    // And a seek gives the frame's own camera too.
    let f = src.frame_at(0.5).unwrap().unwrap();
    let p = Vec2::new(1.0, 1.0);
    let (a, b) = (
        f.calibration.unwrap().project(p).unwrap(),
        truth.project(Vec2::new(1.0 - 0.25, 1.0) * 1000.0).unwrap(),
    );
    assert!((a - b).length() < 0.01, "{a:?} {b:?}");
    // Resampled to 5 fps: every other picture, at steady times, each with
    // its own stamp and camera.
    let steady = OpenOptions {
        fps: Some(5.0),
        ..OpenOptions::default()
    };
    let mut src = underlay::formats::open_source(&mcap, &steady).unwrap();
    assert_eq!(src.info().frame_count, Some(6), "{:?}", src.info());
    let mut j = 0;
    while let Some(f) = src.next_frame().unwrap() {
        assert!((f.time - j as f64 * 0.2).abs() < 1e-9, "{}", f.time);
        assert!((f.clock.unwrap() - (1_700_000_000.0 + j as f64 * 0.2)).abs() < 1e-6);
        let a = f.calibration.unwrap().project(p).unwrap();
        let b = truth
            .project(Vec2::new(1.0 - 0.1 * j as f64, 1.0) * 1000.0)
            .unwrap();
        assert!((a - b).length() < 0.01, "frame {j}: {a:?} {b:?}");
        j += 1;
    }
    assert_eq!(j, 6);
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ros")
        .join(name)
}

/// The committed three-frame recordings (no Python needed): listed, read
/// alike from both containers, exported with their drawings, converted.
#[test]
fn the_committed_recordings_list_export_and_convert_alike() {
    let tmp = crate::util::tmp();
    let mut exports = Vec::new();
    for name in ["demo-3.mcap", "demo-3.db3"] {
        let path = fixture(name);
        let info = crate::util::run(["log", "info", path.to_str().unwrap()]);
        assert_ok(&info);
        let t = text(&info);
        for want in [
            "/camera/image_raw/compressed",
            "sensor_msgs/msg/CompressedImage",
            "      3  pictures",
            "/markers",
            "      3  drawn",
            "(fixed)",
        ] {
            assert!(t.contains(want), "{name}: `{want}` missing from:\n{t}");
        }
        let out = tmp.path().join(format!("{name}.mp4"));
        assert_ok(&crate::util::run([
            "export",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--no-mask",
        ]));
        let frames = crate::demo::read_all(&out);
        assert_eq!(frames.len(), 3, "{name}");
        assert_eq!(frames[0].image.dim(), (180, 320, 3));
        exports.push(frames);
        let ulog = tmp.path().join(format!("{name}.ulog"));
        assert_ok(&crate::util::run([
            "log",
            "convert",
            path.to_str().unwrap(),
            ulog.to_str().unwrap(),
        ]));
        let log = underlay::formats::load_log(&ulog).unwrap();
        assert_eq!(log.header.world_unit, "m");
        assert!(log.entities.get("markers/ball/0").is_some());
    }
    // Same messages in both containers: the same frames.
    for (a, b) in exports[0].iter().zip(&exports[1]) {
        assert_eq!(a.time, b.time);
        assert_eq!(a.image, b.image);
    }
}

/// A recording given to `--camera` a topic it does not have says which
/// it has; an unknown world frame says the tree's roots.
#[test]
fn a_wrong_topic_or_world_frame_is_said() {
    let tmp = crate::util::tmp();
    let path = fixture("demo-3.mcap");
    let out = tmp.path().join("x.mp4");
    let o = crate::util::run([
        "export",
        path.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--camera",
        "/front/image_raw",
    ]);
    assert!(!o.status.success());
    let e = crate::util::stderr(&o);
    assert!(
        e.contains("/front/image_raw") && e.contains("/camera/image_raw/compressed"),
        "{e}"
    );
    let o = crate::util::run(["log", "info", path.to_str().unwrap(), "--world", "odom"]);
    assert!(!o.status.success());
    let e = crate::util::stderr(&o);
    assert!(e.contains("`odom`") && e.contains("map"), "{e}");
    assert!(!out.exists());
}

/// A level mapping file sets the levels a recording's drawings are at
/// (`log info`, `export --max-level` through it, a session's `levels`);
/// a bad one is refused, naming it.
#[test]
fn a_level_mapping_file_sets_the_levels_drawings_are_at() {
    let tmp = crate::util::tmp();
    let path = fixture("demo-3.mcap");
    let p = path.to_str().unwrap();
    let levels = tmp.path().join("levels.toml");
    std::fs::write(
        &levels,
        "\"markers/ball\" = 0   # the ball: always\n\"/markers/\" = 4\n",
    )
    .unwrap();
    let l = levels.to_str().unwrap();
    let info = crate::util::run(["log", "info", p]);
    assert!(
        text(&info).contains("levels:      1: 135, 2: 3"),
        "{}",
        text(&info)
    );
    let info = crate::util::run(["log", "info", p, "--levels", l]);
    assert_ok(&info);
    assert!(
        text(&info).contains("levels:      0: 3, 4: 135"),
        "{}",
        text(&info)
    );
    // Exported up to level 3: the ball alone of the markers.
    let export = |name: &str, extra: &[&str]| {
        let out = tmp.path().join(name);
        let mut args = vec!["export", p, "-o", out.to_str().unwrap(), "--no-mask"];
        args.extend(extra);
        assert_ok(&crate::util::run(&args));
        crate::demo::read_all(&out)
    };
    let all = export("all.mp4", &[]);
    let ball = export("ball.mp4", &["--levels", l, "--max-level", "3"]);
    let none = export("none.mp4", &["--levels", l, "--max-level", "-1"]);
    let differ = |a: &[underlay::video::SourceFrame], b: &[underlay::video::SourceFrame]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                x.image
                    .iter()
                    .zip(y.image.iter())
                    .filter(|(p, q)| p.abs_diff(**q) > 40)
                    .count()
            })
            .sum::<usize>()
    };
    let (hidden, ball_only) = (differ(&all, &ball), differ(&ball, &none));
    assert!(
        hidden > 1000 && ball_only > 20,
        "{hidden} px hidden, {ball_only} px of ball"
    );
    // A session's `levels` does the same.
    let session = tmp.path().join("s.toml");
    std::fs::write(
        &session,
        format!("video = {p:?}\nlog = {p:?}\nlevels = \"levels.toml\"\n\n[filter]\nmax_level = 3\n"),
    )
    .unwrap();
    let out = tmp.path().join("session.mp4");
    assert_ok(&crate::util::run([
        "export",
        session.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--no-mask",
    ]));
    assert_eq!(differ(&ball, &crate::demo::read_all(&out)), 0);
    // A bad file: refused, named, nothing written.
    std::fs::write(&levels, "\"markers\" = \"high\"\n").unwrap();
    let bad = tmp.path().join("bad.mp4");
    let o = crate::util::run(["export", p, "-o", bad.to_str().unwrap(), "--levels", l]);
    assert!(!o.status.success());
    let e = crate::util::stderr(&o);
    assert!(e.contains("levels.toml") && e.contains("whole number"), "{e}");
    assert!(!bad.exists());
}

/// A Foxglove recording in JSON whose pictures are `foxglove.CompressedImage`
/// (PNG, base64 in the JSON): the pictures play and export.
#[test]
fn foxglove_json_pictures_are_decoded_from_base64() {
    use base64::Engine as _;
    let tmp = crate::util::tmp();
    let path = tmp.path().join("pictures.mcap");
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut w = mcap::Writer::new(file).unwrap();
        let schema = w
            .add_schema("foxglove.CompressedImage", "jsonschema", b"{}")
            .unwrap();
        let ch = w
            .add_channel(schema, "/cam", "json", &std::collections::BTreeMap::new())
            .unwrap();
        for k in 0..3u64 {
            // 64×48 pictures, each a shade brighter.
            let img = underlay::image::RgbImage::from_elem((48, 64, 3), 60 + 60 * k as u8);
            let png = tmp.path().join(format!("{k}.png"));
            underlay::video::still::save_rgb(&png, &img).unwrap();
            let b64 = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&png).unwrap());
            let t = 1_700_000_000_000_000_000u64 + k * 100_000_000;
            let json = format!(
                r#"{{"timestamp":{{"sec":1700000000,"nsec":{}}},"frame_id":"cam","format":"png","data":"{b64}"}}"#,
                k * 100_000_000
            );
            let h = mcap::records::MessageHeader {
                channel_id: ch,
                sequence: k as u32,
                log_time: t,
                publish_time: t,
            };
            w.write_to_known_channel(&h, json.as_bytes()).unwrap();
        }
        w.finish().unwrap();
    }
    let p = path.to_str().unwrap();
    let info = crate::util::run(["log", "info", p]);
    assert!(text(&info).contains("      3  pictures"), "{}", text(&info));
    let out = tmp.path().join("out.mp4");
    assert_ok(&crate::util::run([
        "export",
        p,
        "-o",
        out.to_str().unwrap(),
        "--no-mask",
        "--no-calibration",
    ]));
    let frames = crate::demo::read_all(&out);
    assert_eq!(frames.len(), 3);
    let mean = |f: &underlay::video::SourceFrame| {
        f.image.iter().map(|&v| f64::from(v)).sum::<f64>() / f.image.len() as f64
    };
    for (k, f) in frames.iter().enumerate() {
        assert!(
            (mean(f) - (60.0 + 60.0 * k as f64)).abs() < 4.0,
            "frame {k}: {}",
            mean(f)
        );
    }
}

/// Issue 34: `ImageMarker` and Foxglove's `ImageAnnotations` are drawn in
/// the picture's pixels: the bag's circle around the ball's true projection
/// (made by OpenCV, corner origin) lands on underlay's own projection of the
/// ball through the demo's true camera, and the export draws it there over
/// the robots, whatever the mask.
#[test]
fn image_markers_and_annotations_are_drawn_in_the_pictures_pixels() {
    let tmp = crate::util::tmp();
    let d = tmp.path().join("demo");
    demo(&d);
    let Some(mcap) = bag(
        &d,
        &tmp.path().join("run.mcap"),
        &["--image", "jpeg", "--picture-markers", "--frames", "20"],
    ) else {
        return;
    };
    let info = text(&crate::util::run(["log", "info", mcap.to_str().unwrap()]));
    for want in [
        "/detections",
        "visualization_msgs/msg/ImageMarker",
        "/annotations",
        "foxglove_msgs/msg/ImageAnnotations",
        "drawn in the picture's pixels",
    ] {
        assert!(info.contains(want), "`{want}` missing from:\n{info}");
    }
    let log = underlay::formats::load_log(&mcap).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    // The ball's circle: where underlay projects the true ball.
    let session = underlay::session::Session::load(&d.join("session.toml")).unwrap();
    let truth = session.draw_settings().unwrap().calibration.unwrap();
    // (video time, the ball's centre in mm)
    let rows: Vec<(f64, [f64; 3])> = crate::demo::read_truth(&d.join("truth/trajectory.csv"))
        .iter()
        .map(|r| (r.t, [r.ball[0], r.ball[1], r.ball[2] + 21.5]))
        .collect();
    let circles = lives(&log, "detections/ball/0");
    assert_eq!(circles.len(), 20);
    let mut worst: f64 = 0.0;
    for ((start, _, shapes), (time, ball)) in circles.iter().zip(&rows) {
        assert!((start - 1_700_000_000.0 - time).abs() < 1e-6);
        let Shape::Picture(inner) = &shapes[0] else {
            panic!("{shapes:?}");
        };
        let Shape::Circle { center, radius } = **inner else {
            panic!("{inner:?}");
        };
        assert_eq!(radius, 10.0);
        let ball = truth.project3(*ball).unwrap();
        worst = worst.max((center - ball).length());
    }
    assert!(worst < 0.05, "the circle is {worst} px from the true ball");
    // The annotations: a square and a name, each message replacing the last.
    let notes = lives(&log, "annotations/0");
    assert_eq!(notes.len(), 20);
    assert!(notes.iter().all(|(_, _, s)| s.len() == 2), "{notes:?}");
    assert!(notes[..19].iter().all(|(_, end, _)| end.is_finite()));
    // The export draws the circle there, redder than the picture under it
    // (a 1 px outline, as Foxglove draws an image marker's circle, which
    // the encoder softens), over the robots too.
    let out = tmp.path().join("out.mp4");
    assert_ok(&crate::util::run([
        "export",
        mcap.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]));
    let frames = crate::demo::read_all(&out);
    let pictures = crate::demo::read_all(&d.join("video.mp4"));
    assert_eq!(frames.len(), 20);
    let (mut redder, mut ring) = (0, 0);
    for ((f, p), (_, _, shapes)) in frames.iter().zip(&pictures).zip(&circles) {
        let Shape::Picture(inner) = &shapes[0] else {
            unreachable!()
        };
        let Shape::Circle { center, .. } = **inner else {
            unreachable!()
        };
        let (h, w, _) = f.image.dim();
        let red = |img: &underlay::image::RgbImage, x: usize, y: usize| {
            i32::from(img[[y, x, 0]]) - i32::from(img[[y, x, 1]])
        };
        for k in 0..72 {
            let a = k as f64 * std::f64::consts::TAU / 72.0;
            let (x, y) = (center.x + 10.0 * a.cos(), center.y + 10.0 * a.sin());
            let (x, y) = (x.round() as usize, y.round() as usize);
            if x >= w || y >= h {
                continue;
            }
            ring += 1;
            redder += usize::from(red(&f.image, x, y) - red(&p.image, x, y) > 30);
        }
    }
    assert!(
        redder * 10 >= ring * 9,
        "{redder} of {ring} ring pixels turned red"
    );
}
