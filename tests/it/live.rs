//! `underlay live` end to end on loopback: `ffmpeg -re` as the live
//! camera (MPEG-TS over UDP), native logs sent over UDP by `Writer::udp`
//! with garbage between them, the composited stream sent on over UDP to
//! an `ffmpeg` receiver and recorded to a file; RoboViz drawing datagrams
//! as a 3D-league agent sends them; then a dead camera; and the viewer in
//! live mode under Xvfb beside a recording. Every process a test starts,
//! it stops.

use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use underlay::log::{Header, Rgba, Writer, WriterOptions};
use underlay::sim3d::roboviz::{self, Command as Draw};

use crate::util::{Xvfb, have_tool, stderr, tmp, underlay_cmd};

/// A child process killed when dropped (a failing test leaves nothing running).
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn epoch() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A calibration whose world is the picture's pixels.
pub(crate) fn identity_calib(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("c.toml");
    std::fs::write(
        &p,
        "homography = [\n    [1.0, 0.0, 0.0],\n    [0.0, 1.0, 0.0],\n    [0.0, 0.0, 1.0],\n]\nimage_size = [320, 240]\n",
    )
    .unwrap();
    p
}

/// A calibration for RoboViz's metres: 10 px a metre, the field's centre
/// at the picture's (160, 120).
fn metre_calib(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("m.toml");
    std::fs::write(
        &p,
        "homography = [\n    [10.0, 0.0, 160.0],\n    [0.0, 10.0, 120.0],\n    [0.0, 0.0, 1.0],\n]\nimage_size = [320, 240]\n",
    )
    .unwrap();
    p
}

/// The frames of `video` as (count, the RGB of pixel (x, y) in the frame at `at` of them).
pub(crate) fn probe(video: &std::path::Path, at: f64, x: usize, y: usize) -> (usize, [u8; 3]) {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=nb_read_frames", "-of", "csv=p=0"])
        .arg(video)
        .output()
        .unwrap();
    // MPEG-TS lists the stream under its program too: the first number.
    let frames: usize = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or(0);
    let raw = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(video)
        .args([
            "-ss",
            &format!("{at}"),
            "-frames:v",
            "1",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ])
        .output()
        .unwrap()
        .stdout;
    let i = 3 * (y * 320 + x);
    let px = if raw.len() >= i + 3 {
        [raw[i], raw[i + 1], raw[i + 2]]
    } else {
        [0, 0, 0]
    };
    (frames, px)
}

/// Who sends the robot's drawings during a live run.
enum Robot {
    /// `Writer::udp` from this test, with garbage between the frames.
    Rust,
    /// The Python sender of docs/FORMAT.md, run by this Python with the
    /// generated module in this folder.
    Python(std::path::PathBuf, std::path::PathBuf),
    /// RoboViz drawing datagrams from this test, as an agent sends them.
    RoboViz,
}

/// A RoboViz polygon from (x0, y0) to (x1, y1) metres, filled with `color`.
fn rv_square(set: &str, (x0, y0): (f64, f64), (x1, y1): (f64, f64), color: [u8; 4]) -> Draw {
    Draw::Polygon {
        vertices: vec![[x0, y0, 0.0], [x1, y0, 0.0], [x1, y1, 0.0], [x0, y1, 0.0]],
        color,
        set: set.into(),
    }
}

/// Runs `underlay live` for 3 s of a 320×240 UDP camera, `robot` sending
/// a red square at the picture's centre; returns its standard error, the
/// recording, and the folder (kept alive).
fn live_run(robot: Robot, also_udp_out: Option<u16>) -> (String, std::path::PathBuf, tempfile::TempDir) {
    let dir = tmp();
    let (cam, logs) = (free_udp_port(), free_udp_port());
    let (calib, log_source) = match robot {
        Robot::RoboViz => (metre_calib(dir.path()), format!("roboviz://127.0.0.1:{logs}")),
        _ => (identity_calib(dir.path()), format!("udp://127.0.0.1:{logs}")),
    };
    let recorded = dir.path().join("live.ts");
    let overlay = dir.path().join("overlay.mkv");
    let mut cmd = underlay_cmd();
    cmd.args(["live", &format!("udp://127.0.0.1:{cam}"), "--log", &log_source])
        .arg("--calib")
        .arg(&calib)
        .args([
            "--no-mask",
            "--duration",
            "3",
            "--delay",
            "0.1",
            "--wait",
            "30",
            "--no-view",
        ])
        .arg("--out")
        .arg(&recorded)
        .arg("--overlay-out")
        .arg(&overlay);
    if let Some(port) = also_udp_out {
        cmd.args(["--out", &format!("udp://127.0.0.1:{port}?pkt_size=1316")]);
    }
    let mut live = Running(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The camera: a test picture over UDP MPEG-TS at its own pace.
    let _camera = udp_camera(cam, "testsrc2=size=320x240:rate=25");
    let stop = Arc::new(AtomicBool::new(false));
    let mut python = None;
    let sender = match robot {
        Robot::Rust => {
            // A red square stamped with this machine's clock, 50 times a
            // second, and garbage on the same port.
            let stop = Arc::clone(&stop);
            Some(std::thread::spawn(move || {
                let mut w =
                    Writer::udp(("127.0.0.1", logs), Header::default(), WriterOptions::default()).unwrap();
                let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
                while !stop.load(Ordering::Relaxed) {
                    w.instant(epoch())
                        .rectangle((160.0, 120.0), (60.0, 60.0), 0.0)
                        .color(Rgba::named("red"))
                        .fill(Rgba::named("red"))
                        .entity("robot/plan");
                    w.end_frame();
                    let _ = w.flush();
                    for _ in 0..20 {
                        let _ = junk.send_to(b"\x00garbage that is not a log", ("127.0.0.1", logs));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }))
        }
        Robot::RoboViz => {
            // In its first half second a green square at the top left
            // (set robot.gone), then never drawn again: the next swap of
            // "robot" ends it. A red square (3 m each way around the centre
            // spot) and a circle, swapped every 20 ms; garbage between.
            let stop = Arc::clone(&stop);
            Some(std::thread::spawn(move || {
                let agent = UdpSocket::bind("127.0.0.1:0").unwrap();
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let mut cmds = vec![
                        rv_square("robot.plan", (-3.0, -3.0), (3.0, 3.0), [255, 0, 0, 255]),
                        Draw::Circle {
                            center: [0.0, 0.0],
                            radius: 5.0,
                            thickness: 2.0,
                            color: [255, 0, 0, 255],
                            set: "robot.plan".into(),
                        },
                    ];
                    if started.elapsed() < Duration::from_millis(500) {
                        cmds.push(rv_square(
                            "robot.gone",
                            (-16.0, -12.0),
                            (-10.0, -6.0),
                            [0, 255, 0, 255],
                        ));
                    }
                    cmds.push(Draw::Swap {
                        prefix: "robot".into(),
                    });
                    let mut d = Vec::new();
                    for c in &cmds {
                        roboviz::encode(c, &mut d);
                    }
                    let _ = agent.send_to(&d, ("127.0.0.1", logs));
                    let _ = agent.send_to(b"\x01\x00garbage", ("127.0.0.1", logs));
                    std::thread::sleep(Duration::from_millis(20));
                }
            }))
        }
        Robot::Python(py, folder) => {
            python = Some(Running(
                Command::new(py)
                    .current_dir(folder)
                    .args(["sender.py", "127.0.0.1", &logs.to_string(), "30"])
                    .stdin(Stdio::null())
                    .spawn()
                    .unwrap(),
            ));
            None
        }
    };
    let (status, err) = finished(&mut live);
    stop.store(true, Ordering::Relaxed);
    if let Some(s) = sender {
        s.join().unwrap();
    }
    drop(python);
    assert!(status.success(), "{err}");
    (err, recorded, dir)
}

/// A camera streaming the lavfi `source` to UDP port `cam` as MPEG-TS at
/// its own pace, for 30 s at most.
fn udp_camera(cam: u16, source: &str) -> Running {
    Running(
        Command::new("ffmpeg")
            .args(["-v", "error", "-re", "-f", "lavfi", "-i", source])
            .args([
                "-t",
                "30",
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-tune",
                "zerolatency",
                "-g",
                "25",
            ])
            .args(["-f", "mpegts", &format!("udp://127.0.0.1:{cam}?pkt_size=1316")])
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Waits (60 s at most, else fails with what it said) for `underlay live`
/// to end; its exit status and standard error.
fn finished(live: &mut Running) -> (std::process::ExitStatus, String) {
    let t = Instant::now();
    let status = loop {
        if let Some(s) = live.0.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = live.0.kill();
            let mut err = String::new();
            std::io::Read::read_to_string(&mut live.0.stderr.take().unwrap(), &mut err).unwrap();
            panic!("underlay live did not stop: {err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut live.0.stderr.take().unwrap(), &mut err).unwrap();
    (status, err)
}

#[test]
fn a_udp_camera_and_udp_logs_stream_out_with_the_drawings() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let sent = free_udp_port();
    let out = tmp();
    let received = out.path().join("received.ts");
    // The receiving end of --out, listening first.
    let _receiver = Running(
        Command::new("ffmpeg")
            .args([
                "-v",
                "fatal",
                "-y",
                "-i",
                &format!("udp://127.0.0.1:{sent}?timeout=8000000"),
            ])
            .args(["-c", "copy", "-t", "20"])
            .arg(&received)
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (err, recorded, _dir) = live_run(Robot::Rust, Some(sent));
    // About 3 s of a 25 fps camera, with the drawing on it.
    let (frames, centre) = probe(&recorded, 2.0, 160, 120);
    assert!((40..=80).contains(&frames), "{frames} frames\n{err}");
    assert!(
        centre[0] > 180 && centre[1] < 90 && centre[2] < 90,
        "centre {centre:?}\n{err}"
    );
    let (_, corner) = probe(&recorded, 2.0, 20, 20);
    assert!(
        !(corner[0] > 180 && corner[1] < 90 && corner[2] < 90),
        "corner {corner:?}: drawn where nothing is"
    );
    // The drawings alone: opaque exactly on the square, clear elsewhere.
    let decoded = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(recorded.with_file_name("overlay.mkv"))
        .args([
            "-ss",
            "2",
            "-frames:v",
            "1",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgba",
            "-",
        ])
        .output()
        .unwrap();
    let raw = decoded.stdout;
    assert_eq!(
        raw.len(),
        320 * 240 * 4,
        "{err}\n{}",
        String::from_utf8_lossy(&decoded.stderr)
    );
    let alpha = |x: usize, y: usize| raw[4 * (y * 320 + x) + 3];
    assert_eq!(alpha(160, 120), 255);
    assert_eq!(&raw[4 * (120 * 320 + 160)..][..3], &[255, 0, 0]);
    assert_eq!(alpha(20, 20), 0);
    // The square (60 × 60 with its outline) is opaque; nothing beyond its
    // outline is drawn.
    let inside = (131..190)
        .flat_map(|x| (91..150).map(move |y| (x, y)))
        .all(|(x, y)| alpha(x, y) == 255);
    let beyond = (0..320)
        .flat_map(|x| (0..240).map(move |y| (x, y)))
        .filter(|&(x, y)| !(126..=194).contains(&x) || !(86..=154).contains(&y))
        .all(|(x, y)| alpha(x, y) == 0);
    let covered = (0..320 * 240).filter(|i| raw[4 * i + 3] > 0).count();
    assert!(inside && beyond, "{covered} pixels drawn on the overlay");
    // Garbage was counted and ignored; the report says what came.
    assert!(err.contains("packets were not logs and were ignored"), "{err}");
    // (Frames are dropped only when the machine is behind: under a loaded
    // test run they may be, and are counted.)
    assert!(err.contains(" written ("), "{err}");
    // The stream sent on arrived at its receiver.
    let t = Instant::now();
    let mut got = 0;
    while t.elapsed() < Duration::from_secs(15) {
        got = probe(&received, 0.5, 160, 120).0;
        if got >= 60 {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(got >= 30, "{got} frames received over UDP");
}

/// The Python sender docs/FORMAT.md shows, run as it is, is drawn live.
#[test]
fn the_python_sender_of_the_format_docs_is_drawn_live() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let Some(py) = crate::util::python_with(
        "google.protobuf, grpc_tools",
        "a Python with protobuf and grpcio-tools",
    ) else {
        return;
    };
    let folder = tmp();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/FORMAT.md")).unwrap();
    let block = doc
        .split("<!-- python-sender:start -->")
        .nth(1)
        .and_then(|r| r.split("<!-- python-sender:end -->").next())
        .expect("the sender in docs/FORMAT.md");
    let code: String = block
        .lines()
        .filter(|l| !l.starts_with("```"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(folder.path().join("sender.py"), code).unwrap();
    let generated = Command::new(&py)
        .args(["-m", "grpc_tools.protoc", "-I"])
        .arg(root.join("crates/underlay-log/proto"))
        .arg(format!("--python_out={}", folder.path().display()))
        .arg(root.join("crates/underlay-log/proto/underlay.proto"))
        .status()
        .unwrap();
    assert!(generated.success());
    let (err, recorded, _dir) = live_run(Robot::Python(py, folder.path().to_owned()), None);
    let (frames, centre) = probe(&recorded, 2.0, 160, 120);
    assert!((40..=80).contains(&frames), "{frames} frames\n{err}");
    assert!(
        centre[0] > 180 && centre[1] < 90 && centre[2] < 90,
        "centre {centre:?}\n{err}"
    );
    assert!(
        err.contains(" 0 ignored") && !err.contains("were ignored"),
        "{err}"
    );
}

/// RoboViz datagrams, as a 3D-league agent sends them to RoboViz, are
/// drawn live in metres, each set until its next swap.
#[test]
fn roboviz_drawings_are_drawn_live() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let (err, recorded, _dir) = live_run(Robot::RoboViz, None);
    let (frames, centre) = probe(&recorded, 2.0, 160, 120);
    assert!((60..=80).contains(&frames), "{frames} frames\n{err}");
    assert!(
        centre[0] > 180 && centre[1] < 90 && centre[2] < 90,
        "centre {centre:?}\n{err}"
    );
    // The square's corner at 3 m: (190, 150) in the picture; inside it red,
    // beyond it not.
    let (_, inside) = probe(&recorded, 2.0, 186, 146);
    assert!(inside[0] > 180 && inside[1] < 90 && inside[2] < 90, "{inside:?}");
    let (_, beyond) = probe(&recorded, 2.0, 200, 120);
    assert!(
        !(beyond[0] > 180 && beyond[1] < 90 && beyond[2] < 90),
        "{beyond:?}"
    );
    // The green square was ended by the next swap of its set: gone by 2 s.
    let (_, gone) = probe(&recorded, 2.0, 25, 30);
    assert!(
        !(gone[1] > 180 && gone[0] < 90 && gone[2] < 90),
        "{gone:?}\n{err}"
    );
    // The overlay alone: opaque at the centre, clear where nothing is.
    let raw = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(recorded.with_file_name("overlay.mkv"))
        .args([
            "-ss",
            "2",
            "-frames:v",
            "1",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgba",
            "-",
        ])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(raw.len(), 320 * 240 * 4, "{err}");
    let alpha = |x: usize, y: usize| raw[4 * (y * 320 + x) + 3];
    assert_eq!(
        (alpha(160, 120), alpha(25, 30), alpha(300, 20)),
        (255, 0, 0),
        "{err}"
    );
    assert!(err.contains("roboviz://127.0.0.1:"), "{err}");
    assert!(err.contains("packets were not logs and were ignored"), "{err}");
}

#[test]
fn a_camera_that_never_comes_is_said_and_bad_sources_are_refused() {
    let dir = tmp();
    let port = free_udp_port();
    let out = underlay_cmd()
        .args([
            "live",
            &format!("udp://127.0.0.1:{port}"),
            "--no-calibration",
            "--wait",
            "2",
            "--stall",
            "0.5",
            "--no-view",
        ])
        .arg("--out")
        .arg(dir.path().join("x.ts"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("udp://127.0.0.1:{port}: no picture came within")),
        "{err}"
    );
    assert!(!dir.path().join("x.ts").exists(), "nothing written");
    let out = underlay_cmd()
        .args([
            "live",
            "cam.mp4",
            "--log",
            "ssl-vision://99999",
            "--out",
            "x.ts",
            "--no-view",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("ssl-vision://99999: `99999` is not a port"),
        "{}",
        stderr(&out)
    );
    // An SSL camera's calibration comes with the vision stream only.
    let out = underlay_cmd()
        .args([
            "live",
            "cam.mp4",
            "--camera",
            "1",
            "--log",
            "ssl-referee://",
            "--out",
            "x.ts",
            "--no-view",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("--camera 1 takes camera 1's calibration from the live SSL vision stream"),
        "{}",
        stderr(&out)
    );
    let out = underlay_cmd()
        .args([
            "live",
            "cam.mp4",
            "--no-calibration",
            "--out",
            "ftp://host/x",
            "--no-view",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("ftp://host/x: no stream is sent to ftp://"),
        "{}",
        stderr(&out)
    );
}

/// The viewer in live mode under Xvfb (issue 32): a file camera played at
/// its own pace through `viewer::overlay_session` (a red disc at the
/// centre through an identity calibration), recorded at the same time.
/// The screenshot, taken once `--duration` is reached, shows the camera's
/// picture drawn — the disc at its centre — and the live bar's red mark;
/// the recording, written by the same loop, has the disc at the same place.
#[test]
fn the_live_viewer_shows_what_the_outputs_write() {
    use crate::viewer::{FLOOR, bbox, matches, on_screen, overlay_session};
    if !have_tool("ffprobe") {
        return;
    }
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tmp();
    let session = overlay_session(dir.path());
    let (png, rec) = (dir.path().join("live.png"), dir.path().join("rec.mp4"));
    let o = underlay_cmd()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("live")
        .arg(dir.path().join("grey.mp4"))
        .args(["--realtime", "--duration", "2", "--size", "1000x700", "--session"])
        .arg(&session)
        .arg("--screenshot")
        .arg(&png)
        .arg("--out")
        .arg(&rec)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let img = underlay::video::still::load_rgb(&png).unwrap();
    assert_eq!((img.dim().1, img.dim().0), (1000, 700));
    let video = bbox(&img, FLOOR, 10, None).expect("the camera's picture is on screen");
    let (w, h) = ((video.2 - video.0) as f64, (video.3 - video.1) as f64);
    assert!((w / h - 320.0 / 180.0).abs() < 0.05, "video area {video:?}");
    let (cx, cy) = on_screen(video, (320.0, 180.0), 160.0, 90.0);
    assert!(
        matches(&img, cy, cx, [255, 0, 0], 40),
        "the red disc drawn at the centre"
    );
    let (gx, gy) = on_screen(video, (320.0, 180.0), 300.0, 170.0);
    assert!(matches(&img, gy, gx, FLOOR, 10), "the floor left alone");
    // The live bar's mark, below the picture.
    let below = (0, video.3 + 1, img.dim().1 - 1, img.dim().0 - 1);
    assert!(
        bbox(&img, [230, 40, 40], 12, Some(below)).is_some(),
        "the LIVE mark"
    );
    // The recording: about 2 s of frames, the disc at the centre.
    let (frames, px) = probe(&rec, 1.0, 160, 90);
    assert!((5..=25).contains(&frames), "{frames} frames recorded");
    assert!(px[0] > 200 && px[1] < 60 && px[2] < 60, "recorded centre {px:?}");
}

/// Without a display the viewer is refused, saying to use `--no-view`;
/// headless needs an output.
#[test]
fn live_without_a_display_or_an_output_says_what_to_do() {
    let o = underlay_cmd()
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args(["live", "cam.mp4", "--no-calibration"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no display") && stderr(&o).contains("--no-view"),
        "{}",
        stderr(&o)
    );
    let o = underlay_cmd()
        .args(["live", "cam.mp4", "--no-calibration", "--no-view"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nothing to write"), "{}", stderr(&o));
    // The viewer's options are not for a headless run.
    let o = underlay_cmd()
        .args([
            "live",
            "cam.mp4",
            "--no-view",
            "--out",
            "x.ts",
            "--screenshot",
            "x.png",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--screenshot"), "{}", stderr(&o));
}

/// A camera on a nearly grey floor: the live report says the floor mask
/// was doubtful on the frames it drew, with what to try.
#[test]
fn a_grey_floor_live_is_reported_as_a_doubtful_mask() {
    if !have_tool("ffmpeg") {
        return;
    }
    let dir = tmp();
    let (cam, logs) = (free_udp_port(), free_udp_port());
    let calib = identity_calib(dir.path());
    let recorded = dir.path().join("live.ts");
    let mut live = Running(
        underlay_cmd()
            .args([
                "live",
                &format!("udp://127.0.0.1:{cam}"),
                "--log",
                &format!("udp://127.0.0.1:{logs}"),
            ])
            .arg("--calib")
            .arg(&calib)
            .args([
                "--duration",
                "2",
                "--delay",
                "0.1",
                "--wait",
                "30",
                "--no-view",
                "--out",
            ])
            .arg(&recorded)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // A grey-green turf with sensor noise: chroma about 6, around the
    // adaptive mask's least (8).
    let _camera = udp_camera(
        cam,
        "color=c=0x646a64:size=320x240:rate=25,noise=alls=4:allf=t,format=yuv420p",
    );
    // Something to draw, so that the mask is computed.
    let stop = Arc::new(AtomicBool::new(false));
    let sender = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut w =
                Writer::udp(("127.0.0.1", logs), Header::default(), WriterOptions::default()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                w.instant(epoch())
                    .rectangle((160.0, 120.0), (60.0, 60.0), 0.0)
                    .color(Rgba::named("red"))
                    .entity("robot/plan");
                w.end_frame();
                let _ = w.flush();
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let (status, err) = finished(&mut live);
    stop.store(true, Ordering::Relaxed);
    sender.join().unwrap();
    assert!(status.success(), "{err}");
    assert!(
        err.contains("the floor mask was doubtful on")
            && err.contains("nearly grey")
            && err.contains("min_chroma"),
        "{err}"
    );
}
