//! Integration tests of `underlay view`: argument checking, and the real
//! window under Xvfb taking a screenshot (skipped with a message when Xvfb
//! is not installed).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{Xvfb, stderr, underlay_cmd as underlay};

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run underlay")
}

#[test]
fn missing_inputs_are_named() {
    let o = run(underlay().args(["view", "/nonexistent/run.toml"]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("/nonexistent/run.toml"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("v.mp4");
    std::fs::write(&video, b"").unwrap();
    let o = run(underlay()
        .args(["view"])
        .arg(&video)
        .args(["--log", "/nonexistent/x.ulog"]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("/nonexistent/x.ulog"), "{}", stderr(&o));
}

#[test]
fn screenshot_arguments_are_checked() {
    let o = run(underlay().args(["view", "--screenshot", "/tmp/x.png"]));
    assert!(!o.status.success(), "--screenshot needs --at");
    let o = run(underlay().args(["view", "--screenshot", "/tmp/x.png", "--at", "1"]));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("needs a session or a video"),
        "{}",
        stderr(&o)
    );
    let o = run(underlay().args([
        "view",
        "--synthetic",
        "64x36@10:1",
        "--screenshot",
        "/tmp/x.png",
        "--at",
        "NaN",
    ]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--at"), "{}", stderr(&o));
}

/// Pixels of `img` (RGB) equal to `rgb` within `tol` per channel.
pub(crate) fn matches(img: &underlay::image::RgbImage, y: usize, x: usize, rgb: [u8; 3], tol: u8) -> bool {
    (0..3).all(|c| img[[y, x, c]].abs_diff(rgb[c]) <= tol)
}

pub(crate) type Box2 = (usize, usize, usize, usize);

/// The bounding box (x0, y0, x1, y1) of pixels close to `rgb` within `area`.
pub(crate) fn bbox(
    img: &underlay::image::RgbImage,
    rgb: [u8; 3],
    tol: u8,
    area: Option<Box2>,
) -> Option<Box2> {
    let (h, w, _) = img.dim();
    let (ax0, ay0, ax1, ay1) = area.unwrap_or((0, 0, w - 1, h - 1));
    let mut b: Option<Box2> = None;
    for y in ay0..=ay1 {
        for x in ax0..=ax1 {
            if matches(img, y, x, rgb, tol) {
                b = Some(match b {
                    None => (x, y, x, y),
                    Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
                });
            }
        }
    }
    b
}

#[test]
fn screenshot_of_generated_frames_shows_the_frame_at_the_time() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("shot.png");
    // The generated frames show a dark disc that crosses the frame every
    // 4 s: at 1 s it is a quarter of the way across.
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "view",
            "--synthetic",
            "640x360@30:4",
            "--at",
            "1.0",
            "--screenshot",
        ])
        .arg(&png));
    assert!(o.status.success(), "{}", stderr(&o));
    let img = underlay::video::still::load_rgb(&png).unwrap();
    let (h, w, _) = img.dim();
    assert!(w >= 800 && h >= 600, "the whole window: {w}×{h}");
    // The video area: pixels of the white field lines.
    let lines = bbox(&img, [235, 235, 235], 4, None).expect("field lines on screen");
    let disc = bbox(&img, [30, 30, 34], 6, Some(lines)).expect("the disc is on screen");
    let video_w = (lines.2 - lines.0) as f64;
    let cx = (disc.0 + disc.2) as f64 / 2.0;
    let rel = (cx - lines.0 as f64) / video_w;
    assert!((rel - 0.25).abs() < 0.02, "disc centre at {rel} of the width");
}

/// `--size` sets the window, and so the screenshot's size.
#[test]
fn screenshot_takes_the_size_asked_for() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("shot.png");
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "view",
            "--synthetic",
            "320x180@30:4",
            "--at",
            "1",
            "--size",
            "1000x700",
            "--screenshot",
        ])
        .arg(&png));
    assert!(o.status.success(), "{}", stderr(&o));
    let img = underlay::video::still::load_rgb(&png).unwrap();
    assert_eq!((img.dim().1, img.dim().0), (1000, 700));
}

/// With no display, `view` says what to do instead of the windowing
/// library's error.
#[test]
fn view_without_a_display_says_what_to_do() {
    let o = run(underlay()
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args(["view", "--synthetic", "320x180@30:4"]));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("no display: set DISPLAY") && err.contains("xvfb-run"),
        "{err}"
    );
    assert!(!err.contains(".cargo"), "{err}");
}

/// Issue 15, finding 6: `--at` after the end of the video is refused,
/// not silently replaced by the last frame.
#[test]
fn screenshot_outside_the_video_is_refused() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("shot.png");
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "view",
            "--synthetic",
            "320x180@30:4",
            "--at",
            "25",
            "--screenshot",
        ])
        .arg(&png));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("--at 25 s is outside the video"), "{err}");
    assert!(!png.exists());
}

/// A session for generated 320×180 frames (identity calibration: world
/// units are pixels; log time = video time + 100 s; floor mask `mask`)
/// with a log of a red disc always shown, a blue one only at log time
/// 101 s, and a yellow one over the dark disc that crosses the generated
/// frames. Centres are off the frames' white lines.
fn overlay_session_for_generated_frames(dir: &Path, mask: &str) -> PathBuf {
    use underlay::log::{FrameTime, Log, Primitive, Rgba, Shape, Style, Vec2};
    let mut log = Log::new();
    let e = log.entities.intern("ball");
    let disc = |x: f64, y: f64, r: f64, rgb: u32| Primitive {
        shape: Shape::Circle {
            center: Vec2::new(x, y),
            radius: r,
        },
        style: Style {
            fill: Some(Rgba::from_rgb(rgb)),
            ..Style::color(Rgba::from_rgb(rgb))
        },
        entity: e,
        level: 0,
    };
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [
            disc(240.0, 110.0, 25.0, 0xff0000),
            disc(80.0, 90.0, 28.0, 0xffff00),
        ],
    );
    for t in [100.0, 101.0, 102.0] {
        let d = if t == 101.0 {
            vec![disc(135.0, 68.0, 15.0, 0x0000ff)]
        } else {
            vec![]
        };
        log.push_frame(FrameTime::Instant(t), d);
    }
    underlay::log::save(&log, &dir.join("gen.ulog")).unwrap();
    let session = dir.join("gen.toml");
    std::fs::write(
        &session,
        format!(
            "video = \"generated.mp4\"\nlog = \"gen.ulog\"\noffset = 100.0\n\n\
             [calibration]\nhomography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n\n\
             [mask]\nmethod = \"{mask}\"\n"
        ),
    )
    .unwrap();
    session
}

/// Screen position of image point (u, v) given the video's bounding box
/// on screen and the image size.
pub(crate) fn on_screen(video: Box2, size: (f64, f64), u: f64, v: f64) -> (usize, usize) {
    let (x0, y0, x1, y1) = video;
    let sx = (x1 - x0 + 1) as f64 / size.0;
    let sy = (y1 - y0 + 1) as f64 / size.1;
    ((x0 as f64 + u * sx) as usize, (y0 as f64 + v * sy) as usize)
}

/// The bounding box of the generated frames' green floor on screen.
fn floor_box(img: &underlay::image::RgbImage) -> Option<Box2> {
    let (h, w, _) = img.dim();
    let mut b: Option<Box2> = None;
    for y in 0..h {
        for x in 0..w {
            let (r, g, bl) = (img[[y, x, 0]], img[[y, x, 1]], img[[y, x, 2]]);
            if r.abs_diff(40) <= 4 && bl.abs_diff(50) <= 4 && (126..=174).contains(&g) {
                b = Some(match b {
                    None => (x, y, x, y),
                    Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
                });
            }
        }
    }
    b
}

#[test]
fn screenshot_shows_the_overlay_at_its_place_and_time() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let session = overlay_session_for_generated_frames(dir.path(), "none");
    let shot = |at: &str, png: &Path| {
        let o = run(underlay()
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .arg("view")
            .arg(&session)
            .args(["--synthetic", "320x180@10:3", "--at", at, "--screenshot"])
            .arg(png));
        assert!(o.status.success(), "{}", stderr(&o));
        underlay::video::still::load_rgb(png).unwrap()
    };
    let img = shot("1.0", &dir.path().join("a.png"));
    let video = floor_box(&img).expect("the generated floor is on screen");
    let (w, h) = ((video.2 - video.0 + 1) as f64, (video.3 - video.1 + 1) as f64);
    assert!((w / h - 320.0 / 180.0).abs() < 0.05, "video area {video:?}");
    let size = (320.0, 180.0);
    let at = |u: f64, v: f64| on_screen(video, size, u, v);
    let (rx, ry) = at(240.0, 110.0);
    assert!(matches(&img, ry, rx, [255, 0, 0], 40), "red disc");
    let (bx, by) = at(135.0, 68.0);
    assert!(
        matches(&img, by, bx, [0, 0, 255], 40),
        "blue disc at log time 101 s"
    );
    let (yx, yy) = at(80.0, 90.0 + 24.0);
    assert!(matches(&img, yy, yx, [255, 255, 0], 50), "yellow disc");
    let (fx, fy) = at(300.0, 170.0);
    let floor = [img[[fy, fx, 0]], img[[fy, fx, 1]], img[[fy, fx, 2]]];
    assert!(
        floor[0] < 60 && floor[1] > 120 && floor[2] < 70,
        "floor left alone: {floor:?}"
    );
    // Half a second earlier the blue disc (an instantaneous frame) is gone.
    let img = shot("0.4", &dir.path().join("b.png"));
    assert!(
        !matches(&img, by, bx, [0, 0, 255], 80),
        "no blue disc at log time 100.4 s"
    );
    assert!(
        matches(&img, ry, rx, [255, 0, 0], 40),
        "the persistent red disc stays"
    );
}

/// The colour of the test video's floor (distinct from anything in the UI).
pub(crate) const FLOOR: [u8; 3] = [150, 60, 160];

/// A session over a plain 320×180 video with a log of a red disc (always
/// shown, at the centre) and a blue disc (only at log time 101 s), drawn
/// through an identity calibration, log time = video time + 100 s.
pub(crate) fn overlay_session(dir: &Path) -> PathBuf {
    use underlay::log::{FrameTime, Log, Primitive, Rgba, Shape, Style, Vec2};
    let settings = underlay::video::EncoderSettings {
        fps_hint: 10.0,
        ..Default::default()
    };
    let mut enc = underlay::video::Encoder::create(&dir.join("grey.mp4"), 320, 180, &settings).unwrap();
    let mut img = underlay::image::RgbImage::zeros((180, 320, 3));
    for (i, v) in FLOOR.iter().enumerate() {
        img.slice_mut(ndarray::s![.., .., i]).fill(*v);
    }
    for i in 0..30 {
        enc.push(&img, i as f64 / 10.0).unwrap();
    }
    enc.finish().unwrap();
    let mut log = Log::new();
    let e = log.entities.intern("ball");
    let disc = |x: f64, y: f64, r: f64, rgb: u32| Primitive {
        shape: Shape::Circle {
            center: Vec2::new(x, y),
            radius: r,
        },
        style: Style {
            fill: Some(Rgba::from_rgb(rgb)),
            ..Style::color(Rgba::from_rgb(rgb))
        },
        entity: e,
        level: 0,
    };
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [disc(160.0, 90.0, 40.0, 0xff0000)],
    );
    for t in [100.0, 101.0, 102.0] {
        let d = if t == 101.0 {
            vec![disc(60.0, 45.0, 20.0, 0x0000ff)]
        } else {
            vec![]
        };
        log.push_frame(FrameTime::Instant(t), d);
    }
    underlay::log::save(&log, &dir.join("run.ulog")).unwrap();
    let session = dir.join("run.toml");
    std::fs::write(
        &session,
        "video = \"grey.mp4\"\nlog = \"run.ulog\"\noffset = 100.0\n\n\
         [calibration]\nhomography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n\n\
         [mask]\nmethod = \"none\"\n",
    )
    .unwrap();
    session
}

#[test]
fn screenshot_of_a_real_video_session_shows_the_overlay() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let session = overlay_session(dir.path());
    let shot = |at: &str, png: &Path| {
        let o = run(underlay()
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .arg("view")
            .arg(&session)
            .args(["--at", at, "--screenshot"])
            .arg(png));
        assert!(o.status.success(), "{}", stderr(&o));
        underlay::video::still::load_rgb(png).unwrap()
    };
    let img = shot("1.0", &dir.path().join("a.png"));
    let video = bbox(&img, FLOOR, 10, None).expect("the video is on screen");
    let (w, h) = ((video.2 - video.0) as f64, (video.3 - video.1) as f64);
    assert!((w / h - 320.0 / 180.0).abs() < 0.05, "video area {video:?}");
    let size = (320.0, 180.0);
    let (cx, cy) = on_screen(video, size, 160.0, 90.0);
    assert!(matches(&img, cy, cx, [255, 0, 0], 40), "red disc at the centre");
    let (bx, by) = on_screen(video, size, 60.0, 45.0);
    assert!(
        matches(&img, by, bx, [0, 0, 255], 40),
        "blue disc at log time 101 s"
    );
    let (gx, gy) = on_screen(video, size, 300.0, 170.0);
    assert!(matches(&img, gy, gx, FLOOR, 10), "floor left alone");
    // Half a second earlier the blue disc (an instantaneous frame) is gone.
    let img = shot("0.4", &dir.path().join("b.png"));
    assert!(
        matches(&img, by, bx, FLOOR, 10),
        "no blue disc at log time 100.4 s"
    );
    assert!(
        matches(&img, cy, cx, [255, 0, 0], 40),
        "the persistent red disc stays"
    );
}

#[test]
fn screenshot_keeps_the_overlay_behind_what_stands_on_the_floor() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let session = overlay_session_for_generated_frames(dir.path(), "adaptive");
    let png = dir.path().join("m.png");
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("view")
        .arg(&session)
        .args(["--synthetic", "320x180@10:3", "--at", "1.0", "--screenshot"])
        .arg(&png));
    assert!(o.status.success(), "{}", stderr(&o));
    let img = underlay::video::still::load_rgb(&png).unwrap();
    let video = floor_box(&img).expect("the generated floor is on screen");
    let at = |u: f64, v: f64| on_screen(video, (320.0, 180.0), u, v);
    // At 1 s the dark disc of the generated frames (radius 14 px) is
    // centred at (80, 90), under the yellow disc (radius 28 px).
    let (dx, dy) = at(80.0, 96.0);
    assert!(
        matches(&img, dy, dx, [30, 30, 34], 12),
        "the robot stays in front of the overlay"
    );
    let (yx, yy) = at(80.0, 114.0);
    assert!(
        matches(&img, yy, yx, [255, 255, 0], 50),
        "the overlay shows on the floor around it"
    );
}

#[test]
fn a_damaged_video_is_an_error_naming_it() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("broken.mp4");
    std::fs::write(&video, b"\x00\x00\x00\x18ftypmp42 this is not a video").unwrap();
    // A screenshot at 0 s of `video` into `png`, under the Xvfb display.
    let shoot = |video: &Path, png: &Path| {
        run(underlay()
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .arg("view")
            .arg(video)
            .args(["--at", "0", "--screenshot"])
            .arg(png))
    };
    let o = shoot(&video, &dir.path().join("x.png"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("broken.mp4"), "{}", stderr(&o));
    assert!(!dir.path().join("x.png").exists());

    // A file that opens (its index is whole) but holds no picture data:
    // the decoding error, not a wait for a frame that never comes.
    let whole = dir.path().join("whole.mp4");
    let made = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=2"])
        .args([
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-movflags",
            "+faststart",
        ])
        .arg(&whole)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        crate::util::skip_missing_tool("ffmpeg");
        return;
    }
    let bytes = std::fs::read(&whole).unwrap();
    let data = bytes.windows(4).position(|w| w == b"mdat").unwrap() + 40;
    let cut = dir.path().join("cut.mp4");
    std::fs::write(&cut, &bytes[..data]).unwrap();
    let o = shoot(&cut, &dir.path().join("y.png"));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("cut.mp4") && e.contains("no picture could be decoded"),
        "{e}"
    );
    assert!(!dir.path().join("y.png").exists());
}

/// A 2D match opens in the window on its own (rendered, its sensor models
/// drawn), and `--at` takes the game's cycles.
#[test]
fn a_2d_match_shows_at_a_cycle() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("match.png");
    let game = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim2d/match4.rcg.gz");
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("view")
        .arg(&game)
        .args(["--at", "100c", "--screenshot"])
        .arg(&png));
    assert!(o.status.success(), "{}", stderr(&o));
    let img = underlay::video::still::load_rgb(&png).unwrap();
    // The rendered pitch's grass and both teams' colours are on screen.
    let grass = bbox(&img, [52, 128, 56], 6, None).expect("the pitch on screen");
    assert!(grass.2 - grass.0 > 300, "{grass:?}");
    assert!(
        bbox(&img, [0xff, 0xd7, 0x00], 30, Some(grass)).is_some(),
        "left team"
    );
    assert!(
        bbox(&img, [0x1e, 0x90, 0xff], 30, Some(grass)).is_some(),
        "right team"
    );
    // A cycle the game does not reach is refused.
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("view")
        .arg(&game)
        .args(["--at", "99999c", "--screenshot"])
        .arg(dir.path().join("no.png")));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("outside the video"), "{}", stderr(&o));
}

/// A ROS 2 recording opens in the window as a video with its own
/// drawings: the committed three-frame bag's yellow robot markers are on
/// screen, drawn through the camera its CameraInfo and transforms give.
#[test]
fn a_ros_recording_opens_with_its_markers() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("shot.png");
    let bag = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/demo-3.mcap");
    let o = run(underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("view")
        .arg(&bag)
        .args(["--at", "0.04", "--size", "1000x700", "--screenshot"])
        .arg(&png));
    assert!(o.status.success(), "{}", stderr(&o));
    let img = underlay::video::still::load_rgb(&png).unwrap();
    // The yellow robots' markers: (1.0, 0.9, 0.1).
    let yellow = img
        .as_slice()
        .unwrap()
        .chunks_exact(3)
        .filter(|p| p[0] > 235 && (210..=245).contains(&p[1]) && p[2] < 60)
        .count();
    assert!(yellow > 100, "{yellow} yellow pixels");
}
