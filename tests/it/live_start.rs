//! `underlay live` from the camera's first picture (issue 50): underlay
//! started first and the camera after it, over UDP (MPEG-TS), SRT and
//! RTMP, with a keyframe only every 10 s (`-g 250` at 25 fps); the
//! output's first frame is the stream's first, read back from the frame
//! number each picture carries ([`NUMBERED`], read by [`frame_numbers`]).
//! `--duration` counts output from the first frame written, whatever the
//! camera's start delay; a stream joined between keyframes says it waits
//! for one; stops before any picture (a signal, `--timeout`), for `live`
//! and for `calib refine --grab`, write nothing and say so. Loopback
//! only; every process a test starts, it stops.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::live::{Running, free_udp_port, identity_calib};
use crate::live_robust::{finish, listening};
use crate::util::{have_tool, tmp, tools_required, underlay_cmd};

/// A 320×240, 25 fps picture carrying its frame number N: rows 0–39 are
/// 16 blocks 20 px wide, block k white when bit k of N is set (black
/// otherwise), above a ramp that moves each frame.
const NUMBERED: &str = "nullsrc=s=320x240:r=25,format=gray,\
    geq=lum='if(lt(Y\\,40)\\,if(mod(floor(N/pow(2\\,floor(X/20)))\\,2)\\,235\\,16)\\,mod(X+2*Y+3*N\\,200)+28)'";

/// `ffmpeg -re` sending [`NUMBERED`] for `secs` seconds as H.264 with a
/// keyframe every `gop` frames (and none between: no scene cuts), in
/// `format` to `url`.
fn numbered_camera(url: &str, secs: f64, gop: u32, format: &str) -> Running {
    Running(
        Command::new("ffmpeg")
            .args(["-v", "fatal", "-re", "-f", "lavfi", "-i", NUMBERED])
            .args(["-t", &secs.to_string(), "-pix_fmt", "yuv420p", "-c:v", "libx264"])
            .args([
                "-preset",
                "ultrafast",
                "-tune",
                "zerolatency",
                "-sc_threshold",
                "0",
            ])
            .args(["-g", &gop.to_string(), "-f", format, url])
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// The frame number [`NUMBERED`] drew into a 320×240 gray picture: each
/// block's middle, averaged, is white or black.
fn number_in(gray: &[u8]) -> u32 {
    (0..16)
        .filter(|k| {
            let sum: u32 = (15..25)
                .flat_map(|y| (20 * k + 5..20 * k + 15).map(move |x| u32::from(gray[y * 320 + x])))
                .sum();
            sum / 100 > 128
        })
        .map(|k| 1 << k)
        .sum()
}

/// The frame numbers of the first `n` frames of `video`, each as it was
/// written (no frame repeated or dropped to keep a rate).
fn frame_numbers(video: &Path, n: usize) -> Vec<u32> {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(video)
        .args(["-fps_mode", "passthrough", "-frames:v", &n.to_string()])
        .args(["-f", "rawvideo", "-pix_fmt", "gray", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        video.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout.chunks_exact(320 * 240).map(number_in).collect()
}

/// `video`'s duration as its container says, seconds.
fn duration(video: &Path) -> f64 {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "format=duration",
            "-of",
            "csv=p=0",
        ])
        .arg(video)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{}: no duration", video.display()))
}

/// `underlay live CAMERA --no-calibration --no-view` and `more`, its
/// standard error kept.
fn live(camera: &str, more: &[&str]) -> Running {
    Running(
        underlay_cmd()
            .args(["live", camera, "--no-calibration", "--no-view"])
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// Whether a UDP socket is bound to `port` on this machine within
/// `timeout` (the kernel's `/proc/net/udp`), without sending to it.
fn udp_bound(port: u16, timeout: Duration) -> bool {
    let t = Instant::now();
    let wanted = format!(":{port:04X}");
    while t.elapsed() < timeout {
        let found = ["/proc/net/udp", "/proc/net/udp6"].iter().any(|f| {
            std::fs::read_to_string(f).is_ok_and(|table| {
                table.lines().skip(1).any(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .is_some_and(|local| local.ends_with(&wanted))
                })
            })
        });
        if found {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Reads `p`'s standard error as it comes, until `phrase` is in it
/// (within `timeout`); the reading goes on, into what is returned.
fn watch_for(p: &mut Running, phrase: &str, timeout: Duration) -> Arc<Mutex<String>> {
    let said = Arc::new(Mutex::new(String::new()));
    let mut from = p.0.stderr.take().unwrap();
    let into = Arc::clone(&said);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            into.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let t = Instant::now();
    while !said.lock().unwrap().contains(phrase) {
        assert!(
            t.elapsed() < timeout,
            "no '{phrase}' in: {}",
            said.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    said
}

/// Waits at most `limit` for `p` to end (its standard error read by
/// [`watch_for`] into `said`); its status and standard error.
fn finish_watched(p: &mut Running, said: &Mutex<String>, limit: Duration) -> (ExitStatus, String) {
    let t = Instant::now();
    let status = loop {
        if let Some(s) = p.0.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < limit, "did not stop: {}", said.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    };
    // What it said last reaches the reader.
    std::thread::sleep(Duration::from_millis(200));
    (status, said.lock().unwrap().clone())
}

/// Sends SIGTERM to a process this test started and still holds.
fn terminate(p: &Running) {
    // SAFETY: signalling a child process this test started and still holds.
    unsafe { libc::kill(p.0.id() as i32, libc::SIGTERM) };
}

/// Whether this FFmpeg speaks SRT (a skip, or a failure under
/// `UNDERLAY_REQUIRE_TOOLS=1`, when not).
fn have_srt() -> bool {
    let protocols = Command::new("ffmpeg")
        .args(["-hide_banner", "-protocols"])
        .output()
        .unwrap();
    let has = String::from_utf8_lossy(&protocols.stdout)
        .lines()
        .any(|l| l.trim() == "srt");
    if !has {
        assert!(!tools_required(), "this FFmpeg has no SRT");
        eprintln!("skipped: this FFmpeg has no SRT");
    }
    has
}

/// What was left in `dir` (names), but for `keep`.
fn left_in(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

/// A stop before any picture: a failure that says so and writes nothing.
fn stopped_before_any_picture(status: ExitStatus, err: &str, why: &str) {
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("stopped before the camera sent a picture") && err.contains(why),
        "{err}"
    );
}

#[test]
fn the_streams_first_keyframe_is_the_outputs_first_frame_over_udp_srt_and_rtmp() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let srt = have_srt();
    for proto in ["udp", "srt", "rtmp"] {
        if proto == "srt" && !srt {
            continue;
        }
        let dir = tmp();
        let port = free_udp_port();
        // underlay listens; the camera sends to it.
        let (listen, send, format) = match proto {
            "udp" => (
                format!("udp://127.0.0.1:{port}"),
                format!("udp://127.0.0.1:{port}?pkt_size=1316"),
                "mpegts",
            ),
            "srt" => (
                format!("srt://127.0.0.1:{port}?mode=listener&latency=50000"),
                format!("srt://127.0.0.1:{port}?mode=caller&latency=50000"),
                "mpegts",
            ),
            _ => (
                format!("rtmp://127.0.0.1:{port}/live/cam?listen"),
                format!("rtmp://127.0.0.1:{port}/live/cam"),
                "flv",
            ),
        };
        let out = dir.path().join("out.mp4");
        let mut l = live(&listen, &["--duration", "2", "--out", out.to_str().unwrap()]);
        let ready = if proto == "rtmp" {
            listening(port, Duration::from_secs(30))
        } else {
            udp_bound(port, Duration::from_secs(30))
        };
        assert!(ready, "{proto}: underlay never listened on {port}");
        let _camera = numbered_camera(&send, 5.0, 250, format);
        let (status, err) = finish(&mut l, Duration::from_secs(60));
        assert!(status.success(), "{proto}: {err}");
        // The stream's first frame, a keyframe the next of which is 10 s
        // on, is the output's first; what follows follows it.
        let numbers = frame_numbers(&out, 4);
        assert_eq!(numbers.first(), Some(&0), "{proto}: {numbers:?}\n{err}");
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1] && w[1] < 50),
            "{proto}: {numbers:?}\n{err}"
        );
        let d = duration(&out);
        assert!((d - 2.0).abs() <= 0.1, "{proto}: {d} s\n{err}");
    }
}

/// The camera starts 2.5 s after underlay (past the 1 s stall limit, which
/// does not cut a listener's wait): ten seconds of output all the same,
/// from the stream's first frame.
#[test]
fn duration_is_output_from_the_first_frame_whatever_the_cameras_start_delay() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let dir = tmp();
    let port = free_udp_port();
    let out = dir.path().join("out.mp4");
    let mut l = live(
        &format!("udp://127.0.0.1:{port}"),
        &["--duration", "10", "--stall", "1", "--out", out.to_str().unwrap()],
    );
    assert!(udp_bound(port, Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(2500));
    let _camera = numbered_camera(
        &format!("udp://127.0.0.1:{port}?pkt_size=1316"),
        14.0,
        250,
        "mpegts",
    );
    let (status, err) = finish(&mut l, Duration::from_secs(90));
    assert!(status.success(), "{err}");
    assert!(err.contains("waiting for the camera ("), "{err}");
    assert!(
        err.contains(" 0 reconnects") && err.contains("ended: --duration reached"),
        "{err}"
    );
    let d = duration(&out);
    assert!((d - 10.0).abs() <= 0.1, "{d} s\n{err}");
    assert_eq!(frame_numbers(&out, 1), [0], "{err}");
}

/// Joined 1 s into a stream with a keyframe every 4 s: the status says it
/// waits for a keyframe, and the output starts at that keyframe (no
/// broken pictures before it).
#[test]
fn a_stream_joined_between_keyframes_says_it_waits_for_one() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let dir = tmp();
    let port = free_udp_port();
    let _camera = numbered_camera(
        &format!("udp://127.0.0.1:{port}?pkt_size=1316"),
        8.0,
        100,
        "mpegts",
    );
    std::thread::sleep(Duration::from_secs(1));
    let out = dir.path().join("out.mp4");
    let mut l = live(
        &format!("udp://127.0.0.1:{port}"),
        &["--duration", "1", "--out", out.to_str().unwrap()],
    );
    let (status, err) = finish(&mut l, Duration::from_secs(60));
    assert!(status.success(), "{err}");
    assert!(err.contains("waiting for a keyframe ("), "{err}");
    assert!(err.contains(" 0 reconnects"), "{err}");
    assert_eq!(frame_numbers(&out, 1), [100], "{err}");
    let d = duration(&out);
    assert!((d - 1.0).abs() <= 0.1, "{d} s\n{err}");
}

#[test]
fn a_stop_before_any_picture_writes_nothing_and_says_why() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    // SIGTERM while nothing comes.
    let dir = tmp();
    let port = free_udp_port();
    let out = dir.path().join("out.mp4");
    let mut l = live(
        &format!("udp://127.0.0.1:{port}"),
        &["--out", out.to_str().unwrap()],
    );
    assert!(udp_bound(port, Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(500));
    terminate(&l);
    let (status, err) = finish(&mut l, Duration::from_secs(20));
    stopped_before_any_picture(status, &err, "(asked to stop after");
    assert!(err.contains("nothing came from it"), "{err}");
    assert_eq!(left_in(dir.path(), &[]), Vec::<String>::new());

    // --timeout while nothing comes: the same, and soon.
    let t = Instant::now();
    let mut l = live(
        &format!("udp://127.0.0.1:{}", free_udp_port()),
        &["--timeout", "1.5", "--out", out.to_str().unwrap()],
    );
    let (status, err) = finish(&mut l, Duration::from_secs(20));
    stopped_before_any_picture(status, &err, "(--timeout reached after");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(left_in(dir.path(), &[]), Vec::<String>::new());

    // SIGTERM while packets come but no keyframe yet (joined 1 s into a
    // 10 s keyframe interval; the camera stops before the next).
    let port = free_udp_port();
    let _camera = numbered_camera(
        &format!("udp://127.0.0.1:{port}?pkt_size=1316"),
        9.0,
        250,
        "mpegts",
    );
    std::thread::sleep(Duration::from_secs(1));
    let mut l = live(
        &format!("udp://127.0.0.1:{port}"),
        &["--out", out.to_str().unwrap()],
    );
    let said = watch_for(&mut l, "waiting for a keyframe (", Duration::from_secs(7));
    terminate(&l);
    let (status, err) = finish_watched(&mut l, &said, Duration::from_secs(20));
    stopped_before_any_picture(status, &err, "no keyframe yet");
    assert_eq!(left_in(dir.path(), &[]), Vec::<String>::new());
}

/// With the viewer too: SIGTERM before any picture closes the window,
/// and the command fails saying why, having written nothing.
#[test]
fn the_viewer_stopped_before_any_picture_fails_saying_so() {
    let Some(x) = crate::util::Xvfb::start() else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("out.mp4");
    let mut l = Running(
        underlay_cmd()
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .args(["live", &format!("udp://127.0.0.1:{}", free_udp_port())])
            .args(["--no-calibration", "--size", "800x600", "--out"])
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The run is waiting (its status echoed on the terminal).
    let said = watch_for(&mut l, "waiting for the camera (", Duration::from_secs(60));
    terminate(&l);
    let (status, err) = finish_watched(&mut l, &said, Duration::from_secs(30));
    stopped_before_any_picture(status, &err, "(asked to stop after");
    assert_eq!(left_in(dir.path(), &[]), Vec::<String>::new());
}

/// After frames, `--timeout` (the wait included) finishes the outputs as
/// any end does: shorter than the timeout by the wait.
#[test]
fn a_timeout_after_pictures_finishes_the_outputs() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let dir = tmp();
    let port = free_udp_port();
    let out = dir.path().join("out.mp4");
    let mut l = live(
        &format!("udp://127.0.0.1:{port}"),
        &["--timeout", "4", "--out", out.to_str().unwrap()],
    );
    assert!(udp_bound(port, Duration::from_secs(30)));
    let _camera = numbered_camera(
        &format!("udp://127.0.0.1:{port}?pkt_size=1316"),
        10.0,
        25,
        "mpegts",
    );
    let (status, err) = finish(&mut l, Duration::from_secs(60));
    assert!(status.success(), "{err}");
    assert!(err.contains("ended: --timeout reached"), "{err}");
    let d = duration(&out);
    assert!(d > 0.0 && d < 4.0, "{d} s\n{err}");
    assert_eq!(frame_numbers(&out, 1), [0], "{err}");
}

/// `calib refine` on a live camera reads it as `live` does: from the
/// stream's first keyframe, and a stop before any picture writes nothing
/// and says so.
#[test]
fn calib_refine_grabs_from_the_first_keyframe_and_says_an_early_stop() {
    if !have_tool("ffmpeg") {
        return;
    }
    let dir = tmp();
    let d = dir.path();
    let calib = identity_calib(d);
    let (out, picture) = (d.join("refined.toml"), d.join("grabbed.png"));
    let refine = |camera: &str, more: &[&str]| {
        Running(
            underlay_cmd()
                .args(["calib", "refine", camera, "--calib"])
                .arg(&calib)
                .args(["--preset", "ssl-b", "--frames", "1", "-o"])
                .arg(&out)
                .arg("--save-picture")
                .arg(&picture)
                .args(more)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        )
    };
    // The grabbed picture is the stream's first (whatever refining it
    // then finds: the picture has no field lines).
    let port = free_udp_port();
    let url = format!("udp://127.0.0.1:{port}");
    let mut r = refine(&url, &["--wait", "30"]);
    assert!(udp_bound(port, Duration::from_secs(30)));
    let camera = numbered_camera(&format!("{url}?pkt_size=1316"), 4.0, 250, "mpegts");
    let (_, err) = finish(&mut r, Duration::from_secs(60));
    drop(camera);
    let grabbed = underlay::video::still::load_rgb(&picture).unwrap_or_else(|e| panic!("{e}\n{err}"));
    let gray: Vec<u8> = grabbed
        .as_slice()
        .unwrap()
        .chunks_exact(3)
        .map(|p| p[1])
        .collect();
    assert_eq!(number_in(&gray), 0, "{err}");
    for f in [&out, &picture] {
        let _ = std::fs::remove_file(f);
    }

    // SIGTERM while nothing comes.
    let port = free_udp_port();
    let mut r = refine(&format!("udp://127.0.0.1:{port}"), &[]);
    assert!(udp_bound(port, Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(500));
    terminate(&r);
    let (status, err) = finish(&mut r, Duration::from_secs(20));
    stopped_before_any_picture(status, &err, "(asked to stop after");
    assert_eq!(left_in(d, &["c.toml"]), Vec::<String>::new());

    // --timeout while nothing comes.
    let mut r = refine(
        &format!("udp://127.0.0.1:{}", free_udp_port()),
        &["--timeout", "1"],
    );
    let (status, err) = finish(&mut r, Duration::from_secs(20));
    stopped_before_any_picture(status, &err, "(--timeout reached after");
    assert_eq!(left_in(d, &["c.toml"]), Vec::<String>::new());
}
