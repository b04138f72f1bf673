//! Integration tests of `underlay view`: argument checking, and the real
//! window under Xvfb taking a screenshot (skipped with a message when Xvfb
//! is not installed).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn underlay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_underlay"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run underlay")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A virtual X display for one test, stopped on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb on a free display, or `None` (with a message) when it
    /// is not installed.
    fn start() -> Option<Xvfb> {
        if Command::new("Xvfb")
            .arg("-help")
            .stderr(Stdio::null())
            .status()
            .is_err()
        {
            eprintln!("skipped: Xvfb is not installed (apt-get install xvfb)");
            return None;
        }
        let base = 200 + (std::process::id() % 500);
        for n in base..base + 50 {
            if Path::new(&format!("/tmp/.X{n}-lock")).exists() {
                continue;
            }
            let mut child = Command::new("Xvfb")
                .args([
                    format!(":{n}").as_str(),
                    "-screen",
                    "0",
                    "1600x1000x24",
                    "-nolisten",
                    "tcp",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn Xvfb");
            let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if socket.exists() {
                    return Some(Xvfb {
                        child,
                        display: format!(":{n}"),
                    });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("could not start Xvfb on any display");
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
fn matches(img: &underlay::image::RgbImage, y: usize, x: usize, rgb: [u8; 3], tol: u8) -> bool {
    (0..3).all(|c| img[[y, x, c]].abs_diff(rgb[c]) <= tol)
}

type Box2 = (usize, usize, usize, usize);

/// The bounding box (x0, y0, x1, y1) of pixels close to `rgb` within `area`.
fn bbox(img: &underlay::image::RgbImage, rgb: [u8; 3], tol: u8, area: Option<Box2>) -> Option<Box2> {
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
    let img = underlay::image::load_rgb(&png).unwrap();
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

/// A log over generated 320×180 frames (identity calibration: world units
/// are pixels), log time = video time + 100 s: a red disc always shown, a
/// blue one only at log time 101 s, and a yellow one over the dark disc
/// that crosses the generated frames.
fn overlay_inputs(dir: &Path) -> (PathBuf, PathBuf) {
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
            disc(240.0, 90.0, 25.0, 0xff0000),
            disc(80.0, 90.0, 28.0, 0xffff00),
        ],
    );
    for t in [100.0, 101.0, 102.0] {
        let d = if t == 101.0 {
            vec![disc(160.0, 45.0, 15.0, 0x0000ff)]
        } else {
            vec![]
        };
        log.push_frame(FrameTime::Instant(t), d);
    }
    let log_path = dir.join("run.ulog");
    underlay::log::save(&log, &log_path).unwrap();
    let calib = dir.join("calib.toml");
    std::fs::write(
        &calib,
        "homography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    (log_path, calib)
}

/// Screen position of image point (u, v) given the video's bounding box
/// on screen and the image size.
fn on_screen(video: Box2, size: (f64, f64), u: f64, v: f64) -> (usize, usize) {
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
    let (log, calib) = overlay_inputs(dir.path());
    let shot = |at: &str, png: &Path| {
        let o = run(underlay()
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .args(["view", "--synthetic", "320x180@10:3", "--offset", "100", "--log"])
            .arg(&log)
            .arg("--calib")
            .arg(&calib)
            .args(["--at", at, "--screenshot"])
            .arg(png));
        assert!(o.status.success(), "{}", stderr(&o));
        underlay::image::load_rgb(png).unwrap()
    };
    let img = shot("1.0", &dir.path().join("a.png"));
    let video = floor_box(&img).expect("the generated floor is on screen");
    let (w, h) = ((video.2 - video.0 + 1) as f64, (video.3 - video.1 + 1) as f64);
    assert!((w / h - 320.0 / 180.0).abs() < 0.05, "video area {video:?}");
    let size = (320.0, 180.0);
    let at = |u: f64, v: f64| on_screen(video, size, u, v);
    let (rx, ry) = at(240.0, 90.0);
    assert!(matches(&img, ry, rx, [255, 0, 0], 40), "red disc");
    let (bx, by) = at(160.0, 45.0);
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
