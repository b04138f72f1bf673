//! `underlay sync` end to end on demos whose true offset is known: the
//! offset found from anywhere within ±10 s of the truth, with the robots'
//! log, its thesis-era text form and the SSL game log; a log whose clock
//! drifts; the log of another game; the session and plot it writes; and
//! its errors.

use std::path::{Path, PathBuf};

use underlay::log::{FrameTime, Log, Primitive, Shape, Style};
use underlay::session::Session;

use crate::util::{assert_ok, run, stderr, stdout, text, tmp};

/// One frame of the demos' 30 fps videos.
const FRAME: f64 = 1.0 / 30.0;

/// A 20 s 640×360 demo of game `seed` in `dir`; its true offset.
fn demo(dir: &Path, seed: u32) -> f64 {
    let o = run([
        "demo",
        "--out",
        dir.to_str().unwrap(),
        "--no-view",
        "--width",
        "640",
        "--height",
        "360",
        "--seed",
        &seed.to_string(),
    ]);
    assert_ok(&o);
    Session::load(&dir.join("session.toml")).unwrap().offset
}

fn sync_json(args: &[&str]) -> (serde_json::Value, std::process::Output) {
    let mut all = vec!["sync"];
    all.extend(args);
    all.push("--json");
    let o = run(&all);
    let v = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    (v, o)
}

/// The log at `from` with its clock running `rate` times as fast from
/// log time `anchor` on, written to `to`.
fn drifted(from: &Path, to: &Path, anchor: f64, rate: f64) {
    let mut log = underlay::formats::load_log(from).unwrap();
    let map = |t: f64| {
        if t.is_finite() {
            anchor + (t - anchor) * rate
        } else {
            t
        }
    };
    for f in &mut log.frames {
        f.time = match f.time {
            FrameTime::Instant(t) => FrameTime::Instant(map(t)),
            FrameTime::Persistent { start, end } => FrameTime::Persistent {
                start: map(start),
                end: map(end),
            },
        };
    }
    underlay::log::save(&log, to).unwrap();
}

#[test]
fn sync_finds_the_demo_offset_and_drift_and_refuses_another_game() {
    let tmp = tmp();
    let one = tmp.path().join("one");
    let truth = demo(&one, 1);
    let session = one.join("session.toml");
    let s = session.to_str().unwrap();

    // From starts on both sides, the robots' log.
    for start in [-9.7, 6.2] {
        let guess = format!("{}", truth + start);
        let (v, o) = sync_json(&[s, "--offset", &guess]);
        assert_ok(&o);
        assert_eq!(v["confident"], true, "{v}");
        let found = v["offset_s"].as_f64().unwrap();
        assert!(
            (found - truth).abs() < FRAME,
            "start {start}: found {found}, truth {truth}"
        );
        assert!(v["confidence"].as_f64().unwrap() >= 3.0, "{v}");
        assert!((v["rate"].as_f64().unwrap() - 1.0).abs() < 2e-4, "{v}");
        assert!(!v["curve"].as_array().unwrap().is_empty());
    }

    // Only part of the video.
    let guess = format!("{}", truth + 3.0);
    let (v, o) = sync_json(&[s, "--offset", &guess, "--from", "4", "--to", "16", "--no-drift"]);
    assert_ok(&o);
    assert!((v["offset_s"].as_f64().unwrap() - truth).abs() < FRAME, "{v}");
    let span = v["video_s"].as_array().unwrap();
    assert!(
        span[0].as_f64().unwrap() >= 3.9 && span[1].as_f64().unwrap() <= 16.0,
        "{v}"
    );

    // The same log in the thesis-era text notation.
    let thesis = one.join("log.txt");
    assert_ok(&run([
        "log",
        "convert",
        one.join("log.ulog").to_str().unwrap(),
        thesis.to_str().unwrap(),
    ]));
    let guess = format!("{}", truth + 4.4);
    let (v, o) = sync_json(&[s, "--log", thesis.to_str().unwrap(), "--offset", &guess]);
    assert_ok(&o);
    assert!((v["offset_s"].as_f64().unwrap() - truth).abs() < FRAME, "{v}");

    // The SSL game log, calibrated by its own camera, with no guess: the
    // whole overlap is searched.
    let video = one.join("video.mp4");
    let game = one.join("game.log");
    let (v, o) = sync_json(&[
        video.to_str().unwrap(),
        "--log",
        game.to_str().unwrap(),
        "--camera",
        "0",
        "--no-drift",
    ]);
    assert_ok(&o);
    assert!((v["offset_s"].as_f64().unwrap() - truth).abs() < FRAME, "{v}");
    assert_eq!(v["drift"], "not_measured");

    // A log whose clock runs 0.1 % fast.
    let fast = one.join("fast.ulog");
    drifted(&one.join("log.ulog"), &fast, truth, 1.001);
    let guess = format!("{}", truth - 3.0);
    let (v, o) = sync_json(&[s, "--log", fast.to_str().unwrap(), "--offset", &guess]);
    assert_ok(&o);
    let rate = v["rate"].as_f64().unwrap();
    assert!((rate - 1.001).abs() < 2e-4, "rate {rate}: {v}");
    assert!((v["offset_s"].as_f64().unwrap() - truth).abs() < FRAME, "{v}");

    // Writing the session and the plot.
    let out = tmp.path().join("synced.toml");
    let plot = tmp.path().join("curve.png");
    let guess = format!("{}", truth + 2.0);
    let o = run([
        "sync",
        s,
        "--offset",
        &guess,
        "--write",
        out.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("offset:"), "{}", text(&o));
    let written = Session::load(&out).unwrap();
    assert!((written.offset - truth).abs() < FRAME);
    assert_eq!(written.video, one.join("video.mp4"));
    let img = underlay::video::still::load_rgb(&plot).unwrap();
    assert_eq!(img.dim(), (500, 1200, 3));

    // The log of another game: no answer, no session written.
    let two = tmp.path().join("two");
    demo(&two, 2);
    let other = two.join("log.ulog");
    let out2 = tmp.path().join("other.toml");
    let (v, o) = sync_json(&[
        s,
        "--log",
        other.to_str().unwrap(),
        "--write",
        out2.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert_eq!(v["confident"], false, "{v}");
    assert!(v["offset_s"].is_null());
    assert!(stderr(&o).contains("no confident match"), "{}", stderr(&o));
    assert!(!out2.exists());
}

#[test]
fn sync_says_what_is_missing() {
    let tmp = tmp();
    let dir = tmp.path();
    // Nothing moves in this log.
    let mut log = Log::new();
    let e = log.entities.intern("post");
    for i in 0..100 {
        log.push_frame(
            FrameTime::Instant(i as f64 * 0.1),
            [Primitive {
                shape: Shape::Circle {
                    center: underlay::geom::Vec2::new(0.0, 0.0),
                    radius: 50.0,
                },
                style: Style::default(),
                entity: e,
                level: 0,
            }],
        );
    }
    let still = dir.join("still.ulog");
    underlay::log::save(&log, &still).unwrap();
    let calib = dir.join("calib.toml");
    std::fs::write(
        &calib,
        "homography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    let video = dir.join("v.mp4");
    std::fs::write(&video, b"not a video").unwrap();
    let p = |p: &PathBuf| p.to_str().unwrap().to_owned();

    let o = run(["sync", &p(&video), "--log", &p(&still), "--calib", &p(&calib)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no moving objects"), "{}", stderr(&o));

    let o = run(["sync", &p(&video), "--log", &p(&still)]);
    assert!(stderr(&o).contains("--calib"), "{}", stderr(&o));

    let o = run([
        "sync",
        &p(&dir.join("nope.mp4")),
        "--log",
        &p(&still),
        "--calib",
        &p(&calib),
    ]);
    assert!(stderr(&o).contains("nope.mp4: no such file"), "{}", stderr(&o));

    let o = run([
        "sync",
        &p(&video),
        "--log",
        &p(&still),
        "--calib",
        &p(&calib),
        "--search",
        "-3",
    ]);
    assert!(!o.status.success());
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}
