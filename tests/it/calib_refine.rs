//! `underlay calib refine` run as a real binary on a demo frame whose true
//! calibration is known: from four clicks each 12 px off, the refined
//! calibration predicts held-back points to a fraction of a pixel
//! (checked with `calib check`), in another unit too; errors name what is
//! wrong and write nothing.

use std::path::{Path, PathBuf};

use underlay::calib::Calibration;
use underlay::calib::presets::ssl_division_b;
use underlay::demo::render::{Camera, Renderer};
use underlay::image::{MaskImage, RgbImage};
use underlay::log::Vec2;
use underlay::video::still::save_rgb;

use crate::util::{assert_ok, run, stderr, stdout, tmp};

/// A 960×540 frame of the demo game and its true calibration.
fn frame(dir: &Path) -> (PathBuf, Calibration) {
    let cam = Camera::demo(960, 540).unwrap();
    let truth = cam.calibration().unwrap();
    let run = underlay::demo::sim::simulate(1, 2.1);
    let (mut img, mut mask) = (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0)));
    Renderer::new(cam, 1).render(&run.at(2.0), 0, &mut img, &mut mask);
    let path = dir.join("frame.png");
    save_rgb(&path, &img).unwrap();
    (path, truth)
}

/// `u,v,x,y,name` lines of the named preset points as `truth` sees them,
/// each moved `off` px in its own direction; world coordinates × `scale`.
fn points(truth: &Calibration, names: &[&str], off: f64, scale: f64) -> String {
    let preset = ssl_division_b();
    let mut s = String::from("u,v,x,y,name\n");
    for (i, n) in names.iter().enumerate() {
        let w = preset.point(n).unwrap();
        let a = 1.3 + 2.1 * i as f64;
        let p = truth.project(w).unwrap() + Vec2::new(a.cos(), a.sin()) * off;
        s.push_str(&format!("{},{},{},{},{n}\n", p.x, p.y, w.x * scale, w.y * scale));
    }
    s
}

const CORNERS: [&str; 4] = ["corner +x+y", "corner -x+y", "corner -x-y", "corner +x-y"];
const HELD_BACK: [&str; 8] = [
    "centre",
    "goal post +x+y",
    "goal post -x-y",
    "defence +x+y front",
    "defence -x-y front",
    "halfway +y",
    "halfway -y",
    "goal centre -x",
];

fn check_rms(dir: &Path, truth: &Calibration, calib: &Path, scale: f64) -> f64 {
    let held = dir.join("held.csv");
    std::fs::write(&held, points(truth, &HELD_BACK, 0.0, scale)).unwrap();
    let o = run([
        "calib",
        "check",
        held.to_str().unwrap(),
        "--calib",
        calib.to_str().unwrap(),
        "--json",
    ]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["rms_px"].as_f64().unwrap()
}

/// `calib refine IMG --calib ROUGH --preset ssl-b -o OUT`.
fn refine_to(img: &Path, rough: &Path, out: &Path) -> std::process::Output {
    run([
        "calib",
        "refine",
        img.to_str().unwrap(),
        "--calib",
        rough.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "-o",
        out.to_str().unwrap(),
    ])
}

/// `calib solve CLICKS -o CLICKS.toml` with `extra` arguments.
fn solve(clicks: &Path, extra: &[&str]) -> PathBuf {
    let out = clicks.with_extension("toml");
    let mut args = vec![
        "calib",
        "solve",
        clicks.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    assert_ok(&run(&args));
    out
}

#[test]
fn refines_four_rough_clicks_to_the_lines() {
    let dir = tmp();
    let d = dir.path();
    let (img, truth) = frame(d);
    let clicks = d.join("clicks.csv");
    std::fs::write(&clicks, points(&truth, &CORNERS, 12.0, 1.0)).unwrap();
    // The clicks alone: a homography off by pixels.
    let rough = solve(&clicks, &[]);
    let before = check_rms(d, &truth, &rough, 1.0);
    assert!(before > 4.0, "{before}");

    // From the calibration file, as text.
    let out = d.join("refined.toml");
    let o = refine_to(&img, &rough, &out);
    assert_ok(&o);
    let text = stdout(&o);
    assert!(text.contains("radial model refined from"), "{text}");
    assert!(text.contains("circle about (0, 0), radius 500"), "{text}");
    assert!(text.contains(&format!("wrote {}", out.display())), "{text}");
    let after = check_rms(d, &truth, &out, 1.0);
    assert!(
        after < 0.5,
        "held-back points: {before} px before, {after} px after\n{text}"
    );
    let saved = std::fs::read_to_string(&out).unwrap();
    assert!(
        saved.contains("[distortion]")
            && saved.contains("world_unit = \"mm\"")
            && saved.contains("field = \"ssl-b\""),
        "{saved}"
    );
    // The field it names cuts the mask: `mask --calib` needs no --field.
    let mask = d.join("mask.png");
    assert_ok(&run([
        "mask",
        img.to_str().unwrap(),
        "-o",
        mask.to_str().unwrap(),
        "--calib",
        out.to_str().unwrap(),
    ]));

    // From the clicks directly, as JSON, with a homography.
    let o = run([
        "calib",
        "refine",
        img.to_str().unwrap(),
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--model",
        "homography",
        "--json",
    ]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["model"], "homography");
    assert!(v["rms_px"].as_f64().unwrap() < 2.0, "{v}");
    assert!(v["coverage"].as_f64().unwrap() > 0.7, "{v}");
    assert_eq!(v["lines"].as_array().unwrap().len(), ssl_division_b().lines.len());
    assert!(v["output"].is_null());
}

#[test]
fn a_calibration_in_metres_stays_in_metres() {
    let dir = tmp();
    let d = dir.path();
    let (img, truth) = frame(d);
    let clicks = d.join("clicks_m.csv");
    std::fs::write(&clicks, points(&truth, &CORNERS, 10.0, 0.001)).unwrap();
    let rough = solve(&clicks, &["--unit", "m"]);
    let out = d.join("refined_m.toml");
    let o = refine_to(&img, &rough, &out);
    assert_ok(&o);
    let saved = std::fs::read_to_string(&out).unwrap();
    assert!(saved.contains("world_unit = \"m\""), "{saved}");
    let after = check_rms(d, &truth, &out, 0.001);
    assert!(after < 0.5, "{after}");
}

#[test]
fn errors_name_the_problem_and_write_nothing() {
    let dir = tmp();
    let d = dir.path();
    let (img, truth) = frame(d);
    let clicks = d.join("clicks.csv");
    std::fs::write(&clicks, points(&truth, &CORNERS, 5.0, 1.0)).unwrap();
    let out = d.join("out.toml");
    let img_s = img.to_str().unwrap();
    let clicks_s = clicks.to_str().unwrap();
    let out_s = out.to_str().unwrap();
    let cases: [(Vec<&str>, &str); 6] = [
        (vec!["--preset", "rugby"], "no such field preset"),
        (vec!["--preset", "ssl-b", "--at=-1"], "--at"),
        (vec!["--preset", "ssl-b", "--search", "0"], "--search"),
        (
            vec!["--preset", "ssl-b", "--min-contrast", "300"],
            "--min-contrast",
        ),
        // A grey picture has no lines.
        (vec!["--preset", "ssl-b", "GREY"], "too few field lines"),
        // A picture that is not one.
        (vec!["--preset", "ssl-b", "BAD"], "bad.png"),
    ];
    let grey = d.join("grey.png");
    save_rgb(&grey, &RgbImage::from_elem((540, 960, 3), 90)).unwrap();
    let bad = d.join("bad.png");
    std::fs::write(&bad, b"not a picture").unwrap();
    for (extra, expect) in cases {
        let mut args = vec!["calib", "refine"];
        let image = match extra.last() {
            Some(&"GREY") => grey.to_str().unwrap(),
            Some(&"BAD") => bad.to_str().unwrap(),
            _ => img_s,
        };
        args.push(image);
        args.extend(["--points", clicks_s, "-o", out_s]);
        args.extend(extra.iter().filter(|a| !["GREY", "BAD"].contains(a)));
        let o = run(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(expect), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?} wrote a file");
    }
    // Neither --calib nor --points.
    let o = run(["calib", "refine", img_s, "--preset", "ssl-b"]);
    assert!(!o.status.success());
    // The output may not overwrite an input.
    let o = run([
        "calib", "refine", img_s, "--points", clicks_s, "--preset", "ssl-b", "-o", clicks_s,
    ]);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&clicks).unwrap().starts_with("u,v,x,y"));
}

/// One click 100 px off: the lines fix the calibration where they are, and
/// the click is not there: "not trustworthy", nothing written, exit 1 —
/// unless `--accept`; the JSON says it line by line.
#[test]
fn a_result_that_is_not_trustworthy_is_said_and_kept_out_unless_accepted() {
    let dir = tmp();
    let d = dir.path();
    let (img, truth) = frame(d);
    let mut text = points(&truth, &CORNERS, 4.0, 1.0);
    // Move the first click 100 px.
    let first = text.lines().nth(1).unwrap().to_owned();
    let f: Vec<&str> = first.split(',').collect();
    let moved = format!(
        "{},{},{},{},{}",
        f[0].parse::<f64>().unwrap() + 100.0,
        f[1],
        f[2],
        f[3],
        f[4]
    );
    text = text.replacen(&first, &moved, 1);
    let clicks = d.join("clicks.csv");
    std::fs::write(&clicks, text).unwrap();
    let out = d.join("out.toml");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "calib".to_owned(),
            "refine".into(),
            img.to_str().unwrap().into(),
            "--points".into(),
            clicks.to_str().unwrap().into(),
            "--preset".into(),
            "ssl-b".into(),
            "-o".into(),
            out.to_str().unwrap().into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let o = run(args(&[]));
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stdout(&o).contains("NOT TRUSTWORTHY"), "{}", stdout(&o));
    assert!(stdout(&o).contains("clicked"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--accept") && stderr(&o).contains("not written"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing is written");
    let o = run(args(&["--json"]));
    assert!(!o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["trusted"], false);
    let lines = v["verdict"]["lines"].as_array().unwrap();
    assert!(lines.len() >= 5, "{v}");
    for l in lines {
        for k in ["line", "in_view", "extent_px", "found_share", "off_share"] {
            assert!(!l[k].is_null(), "{k} in {l}");
        }
    }
    assert!(v["verdict"]["click_px"].as_f64().unwrap() > 60.0, "{v}");
    let o = run(args(&["--accept"]));
    assert_ok(&o);
    assert!(out.exists());
    Calibration::load(&out).unwrap();
}

/// A demo video of a fixed camera: snapped to its background picture by
/// default (the players taken out), or to one frame with --at.
#[test]
fn a_video_is_snapped_on_its_background_picture() {
    let dir = tmp();
    let d = dir.path();
    let demo = d.join("demo");
    assert_ok(&run([
        "demo",
        "--out",
        demo.to_str().unwrap(),
        "--no-view",
        "--width",
        "960",
        "--height",
        "540",
        "--fps",
        "10",
        "--duration",
        "4",
    ]));
    let video = demo.join("video.mp4");
    let truth = Camera::demo(960, 540).unwrap().calibration().unwrap();
    let clicks = d.join("clicks.csv");
    std::fs::write(&clicks, points(&truth, &CORNERS, 12.0, 1.0)).unwrap();
    let (out, picture) = (d.join("refined.toml"), d.join("background.png"));
    let o = run([
        "calib",
        "refine",
        video.to_str().unwrap(),
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "-o",
        out.to_str().unwrap(),
        "--save-picture",
        picture.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let text = stdout(&o);
    assert!(
        text.contains("on the background of 15 frames from 0.1 s to 3.7 s"),
        "{text}"
    );
    let after = check_rms(d, &truth, &out, 1.0);
    assert!(after < 0.5, "{after} px\n{text}");
    // The picture it snapped to, without the players: fewer pixels that
    // are not green carpet (the robots) than in any one frame.
    let background = underlay::video::still::load_rgb(&picture).unwrap();
    assert_eq!(background.dim(), (540, 960, 3));
    let not_carpet = |img: &RgbImage| {
        img.lanes(ndarray::Axis(2))
            .into_iter()
            .filter(|c| {
                let (r, g, b) = (i32::from(c[0]), i32::from(c[1]), i32::from(c[2]));
                let carpet = g > r + 15 && g > b + 15;
                let paint = r > 150 && g > 150 && b > 150;
                !(carpet || paint)
            })
            .count()
    };
    let one = d.join("one.png");
    let o = run([
        "calib",
        "refine",
        video.to_str().unwrap(),
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--at",
        "2",
        "--save-picture",
        one.to_str().unwrap(),
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("on the frame at 2.000 s"), "{}", stdout(&o));
    let frame = underlay::video::still::load_rgb(&one).unwrap();
    let (bg, fr) = (not_carpet(&background), not_carpet(&frame));
    assert!(
        bg + 1000 < fr,
        "pixels neither carpet nor paint: background {bg}, frame {fr}"
    );
}

/// No clicks: the demo camera stands beside the field; searched from that
/// hint, the result lands on the lines and is trusted. From above it is
/// not found, and says so.
#[test]
fn with_no_clicks_the_camera_is_found_from_where_it_stands() {
    let dir = tmp();
    let d = dir.path();
    let (img, truth) = frame(d);
    let out = d.join("found.toml");
    let o = run([
        "calib",
        "refine",
        img.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--from",
        "side",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let text = stdout(&o);
    assert!(
        text.contains("refined from no clicks (the camera beside a touchline)"),
        "{text}"
    );
    assert!(text.contains("trusted:"), "{text}");
    let after = check_rms(d, &truth, &out, 1.0);
    assert!(after < 1.0, "{after} px\n{text}");
    // A place it does not stand: not trusted, nothing written.
    let wrong = d.join("wrong.toml");
    let o = run([
        "calib",
        "refine",
        img.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--from",
        "behind-left-goal",
        "-o",
        wrong.to_str().unwrap(),
    ]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("not trustworthy"), "{}", stderr(&o));
    assert!(!wrong.exists());
    // --from goes alone.
    let o = run([
        "calib",
        "refine",
        img.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--from",
        "side",
        "--calib",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
}

/// A panning camera has no background picture: said, and the first frame
/// used.
#[test]
fn a_moving_camera_is_said_and_its_frame_used() {
    use underlay::video::{Encoder, EncoderSettings};
    let dir = tmp();
    let d = dir.path();
    let (img, truth) = frame(d);
    let picture = underlay::video::still::load_rgb(&img).unwrap();
    let (h, w, _) = picture.dim();
    // The demo frame sliding sideways 40 px a frame.
    let video = d.join("pan.mp4");
    let mut e = Encoder::create(&video, w as u32, h as u32, &EncoderSettings::default()).unwrap();
    for k in 0..12usize {
        let shifted = RgbImage::from_shape_fn((h, w, 3), |(v, u, c)| picture[[v, (u + 40 * k) % w, c]]);
        e.push(&shifted, k as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();
    let clicks = d.join("clicks.csv");
    std::fs::write(&clicks, points(&truth, &CORNERS, 12.0, 1.0)).unwrap();
    let o = run([
        "calib",
        "refine",
        video.to_str().unwrap(),
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--accept",
    ]);
    let err = stderr(&o);
    assert!(err.contains("the camera moves"), "{err}");
    assert!(err.contains("snapping to its first frame"), "{err}");
    // The first frame is the demo frame itself: the snap lands.
    assert_ok(&o);
    assert!(stdout(&o).contains("on the frame at 0.000 s"), "{}", stdout(&o));
}

/// A live camera (the demo video streamed over UDP by `ffmpeg -re`): the
/// background of frames grabbed over a few seconds, snapped to as a
/// video's is; `--at` is refused, a camera that never comes is said.
#[test]
fn a_live_camera_is_grabbed_and_snapped_on_its_background_picture() {
    if !crate::util::have_tool("ffmpeg") {
        return;
    }
    let dir = tmp();
    let d = dir.path();
    let demo = d.join("demo");
    assert_ok(&run([
        "demo",
        "--out",
        demo.to_str().unwrap(),
        "--no-view",
        "--width",
        "960",
        "--height",
        "540",
        "--fps",
        "10",
        "--duration",
        "4",
    ]));
    let truth = Camera::demo(960, 540).unwrap().calibration().unwrap();
    let clicks = d.join("clicks.csv");
    std::fs::write(&clicks, points(&truth, &CORNERS, 12.0, 1.0)).unwrap();
    let port = crate::live::free_udp_port();
    let url = format!("udp://127.0.0.1:{port}");
    let _camera = crate::live::Running(
        std::process::Command::new("ffmpeg")
            .args(["-v", "fatal", "-re", "-stream_loop", "-1", "-i"])
            .arg(demo.join("video.mp4"))
            .args([
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-g",
                "10",
                "-crf",
                "18",
                "-f",
                "mpegts",
            ])
            .arg(format!("{url}?pkt_size=1316"))
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let out = d.join("refined.toml");
    let picture = d.join("grabbed.png");
    let o = run([
        "calib",
        "refine",
        &url,
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--grab",
        "2",
        "--frames",
        "8",
        "--wait",
        "30",
        "-o",
        out.to_str().unwrap(),
        "--save-picture",
        picture.to_str().unwrap(),
    ]);
    assert_ok(&o);
    let text = stdout(&o);
    assert!(text.contains("on the background of 8 frames over"), "{text}");
    // Through H.264 twice: still a fraction of a pixel.
    let after = check_rms(d, &truth, &out, 1.0);
    assert!(after < 0.7, "{after} px\n{text}");
    assert_eq!(
        underlay::video::still::load_rgb(&picture).unwrap().dim(),
        (540, 960, 3)
    );

    let o = run([
        "calib",
        "refine",
        &url,
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--at",
        "1",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--at is for files"), "{}", stderr(&o));
    let silent = format!("udp://127.0.0.1:{}", crate::live::free_udp_port());
    let o = run([
        "calib",
        "refine",
        &silent,
        "--points",
        clicks.to_str().unwrap(),
        "--preset",
        "ssl-b",
        "--wait",
        "1",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no picture came within"), "{}", stderr(&o));
}
