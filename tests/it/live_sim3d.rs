//! The 3D league live, end to end on loopback (issue 32): this test plays
//! the simulator — a TCP listener serving the committed monitor log's
//! messages at their recorded pace, each with its 4-byte big-endian
//! length, garbage messages among them — and an agent sending RoboViz
//! agent annotations ("KICK" above its robot) to `roboviz://`;
//! `underlay live` on a black camera with `--log sim3d://` and
//! `--log roboviz://` draws the annotation above the robot where the
//! monitor stream had it.
//!
//! The simulator comes late (after `underlay live` has tried to connect),
//! serves 1.6 s of the match, drops the connection in the middle of a
//! message and is gone for half a second, then comes back and serves the
//! match from its start again (a new connection: a full scene graph
//! first) — with the sides swapped in its game state, as after half
//! time, so that the left side's number 2 the agent annotates is another
//! robot 19 m away (the fixture's robots stand nearly still: the jump
//! shows that the annotation follows what the stream says). Every live
//! frame with the annotation is compared with where the robot was in the
//! last message sent before the frame's log time (its arrival on this
//! machine's clock): the text's left end and baseline must be within a
//! few pixels of the robot's place projected, 0.3 m off as the replay
//! places it. Before the first message nothing is drawn; the garbage and
//! the torn message are counted as ignored. And the live text lies where
//! `underlay export` draws it from the same monitor log and a RoboViz
//! recording of the same annotation (the recording read beside the log,
//! placed by the same replay).

use std::io::Write;
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use underlay::sim3d::framing::frame;
use underlay::sim3d::monitor::{self, MonitorLog, Side};
use underlay::sim3d::roboviz::{self, Agent, Command as Draw};
use underlay::sim3d::rvd::{self, Record};

use crate::live::{epoch, free_udp_port};
use crate::ssl_replay::{first_arrival, frames, source_counts, spawn, wait_end, wait_listened};
use crate::util::{have_tool, rgb_picture, tmp, underlay_cmd};

/// rcssservermj's monitor log: 3 T1 robots a side, sim time 25.00–28.00.
const FIXTURE: &str = "tests/data/sim3d/monitor.rsmp.log.gz";
/// Monitor messages served per connection (1.6 s of the match).
const SERVED: usize = 40;
/// A garbage message after every this many.
const GARBAGE_EVERY: usize = 10;
/// Pixels per metre of the camera's view.
const SCALE: f64 = 12.0;
/// The agent annotated: the left side's number 2.
const UNUM: u32 = 2;
/// The game state of the fixture's first message, and after the restart.
const SIDES: &[u8] = b"(team_left Alpha)(team_right Bravo)";
const SWAPPED: &[u8] = b"(team_left Bravo)(team_right Alpha)";
/// How far the annotation may be from where the robot was, in pixels.
const TOLERANCE: f64 = 3.0;

/// The fixture's messages (its lines) and the log they make.
fn fixture() -> (Vec<Vec<u8>>, MonitorLog) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap()),
        &mut bytes,
    )
    .unwrap();
    let lines: Vec<Vec<u8>> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(<[u8]>::to_vec)
        .collect();
    let log = monitor::parse(&bytes).unwrap();
    assert_eq!(log.frames.len(), lines.len(), "a frame a line");
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    (lines, log)
}

/// The sim time of message `i`.
fn sim_time(log: &MonitorLog, i: usize) -> f64 {
    log.frames[i].time
}

/// Where robot `unum` of team `team` (0: Alpha, 1: Bravo) is in frame `i`
/// (metres).
fn robot(log: &MonitorLog, team: u16, unum: u32, i: usize) -> Option<(f64, f64)> {
    log.frame_robots(&log.frames[i])
        .iter()
        .find(|r| r.team == team && r.unum == unum)
        .map(|r| (r.position()[0], r.position()[1]))
}

/// A camera looking straight down on `centre` at [`SCALE`] px a metre,
/// 320×240, y up: as a calibration file in `dir`, and its mapping.
fn calibration(dir: &Path, centre: (f64, f64)) -> (PathBuf, impl Fn((f64, f64)) -> (f64, f64)) {
    let (tx, ty) = (160.0 - SCALE * centre.0, 120.0 + SCALE * centre.1);
    let path = dir.join("down.toml");
    std::fs::write(
        &path,
        format!(
            "homography = [\n    [{SCALE}, 0.0, {tx}],\n    [0.0, {}, {ty}],\n    [0.0, 0.0, 1.0],\n]\nimage_size = [320, 240]\n",
            -SCALE
        ),
    )
    .unwrap();
    (path, move |(x, y): (f64, f64)| (SCALE * x + tx, -SCALE * y + ty))
}

/// The camera: 10 s of black, 320×240 at 25 fps.
fn black_camera(dir: &Path) -> PathBuf {
    let black = dir.join("black.mp4");
    let made = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "lavfi", "-i"])
        .arg("color=black:size=320x240:rate=25:duration=10")
        .args(["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
        .arg(&black)
        .status()
        .unwrap();
    assert!(made.success());
    black
}

/// The left end and baseline of the text drawn in `px` (`bpp` bytes a
/// pixel, 320 wide) where `is` says, within 60 px of `near`.
fn text_at(px: &[u8], bpp: usize, near: (f64, f64), is: impl Fn(&[u8]) -> bool) -> Option<(f64, f64)> {
    let drawn: Vec<(usize, usize)> = px
        .chunks_exact(bpp)
        .enumerate()
        .filter(|(_, p)| is(p))
        .map(|(i, _)| (i % 320, i / 320))
        .filter(|&(x, y)| (x as f64 - near.0).abs() < 60.0 && (y as f64 - near.1).abs() < 60.0)
        .collect();
    let left = drawn.iter().map(|d| d.0).min()? as f64;
    let baseline = drawn.iter().map(|d| d.1).max()? as f64 + 1.0;
    Some((left, baseline))
}

/// `underlay export` of the fixture with a recording of `note` (from
/// sim time 25 on) onto `camera` through `calib`: where its frame at 1 s
/// draws the yellow text near `near`.
fn exported_text(dir: &Path, camera: &Path, calib: &Path, note: &[u8], near: (f64, f64)) -> (f64, f64) {
    let rec = dir.join("notes.rvd");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&rec).unwrap());
    w.write_all(&rvd::header()).unwrap();
    for r in [
        Record::SimTime {
            received: 0.0,
            time: 25.0,
        },
        Record::Datagram {
            received: 0.0,
            bytes: note.to_vec(),
        },
        Record::SimTime {
            received: 0.0,
            time: 27.5,
        },
    ] {
        rvd::write_record(&mut w, &r).unwrap();
    }
    drop(w);
    let out = dir.join("export.mp4");
    let done = underlay_cmd()
        .arg("export")
        .arg("--video")
        .arg(camera)
        .arg("--log")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE))
        .arg("--log")
        .arg(&rec)
        .arg("--calib")
        .arg(calib)
        .args(["--offset", "25", "--to", "2", "--no-mask", "--crf", "0", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let raw = rgb_picture(&out, &["-ss", "1"], None);
    assert_eq!(raw.len(), 320 * 240 * 3);
    // Yellow, through the encoder's 4:2:0 colours: bright red and green,
    // little blue.
    text_at(&raw, 3, near, |p| p[0] > 120 && p[1] > 120 && p[2] < 100).expect("the exported text")
}

/// Accepts a connection on `listener`, unless `stop` comes first.
fn accept(listener: &TcpListener, stop: &AtomicBool) -> Option<std::net::TcpStream> {
    listener.set_nonblocking(true).unwrap();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                return Some(s);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    None
}

/// Sets its flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What the fake simulator did: each message's send time (Unix seconds),
/// index in the fixture and connection (0, 1), and how many garbage
/// messages it sent.
#[derive(Default)]
struct Served {
    sent: Vec<(f64, usize, u16)>,
    garbage: u64,
}

/// The fake simulator (module docs), on loopback `port`: comes after
/// `late`, serves [`SERVED`] messages, drops the connection mid-message,
/// is gone for half a second, serves them again with the sides swapped;
/// stops when `stop` is set.
fn simulator(
    port: u16,
    messages: Vec<Vec<u8>>,
    times: Vec<f64>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Served> {
    std::thread::spawn(move || {
        let mut served = Served::default();
        let pause = |d: f64| {
            let until = Instant::now() + Duration::from_secs_f64(d);
            while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        pause(0.8);
        for connection in 0..2u16 {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
            let Some(mut s) = accept(&listener, &stop) else {
                break;
            };
            let start = Instant::now();
            let mut messages = messages.clone();
            if connection == 1 {
                let full = &mut messages[0];
                let at = full.windows(SIDES.len()).position(|w| w == SIDES).unwrap();
                full[at..at + SIDES.len()].copy_from_slice(SWAPPED);
            }
            for i in 0..SERVED {
                let due = Duration::from_secs_f64(times[i] - times[0]);
                if let Some(wait) = due.checked_sub(start.elapsed()) {
                    pause(wait.as_secs_f64());
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let at = epoch();
                if s.write_all(&frame(&messages[i])).is_err() {
                    break;
                }
                served.sent.push((at, i, connection));
                if i % GARBAGE_EVERY == GARBAGE_EVERY - 1 {
                    let _ = s.write_all(&frame(b"((RSMP 1 0) this is ((( not a monitor message"));
                    served.garbage += 1;
                }
            }
            if connection == 0 {
                // Dropped in the middle of a message; gone for a while.
                let torn = frame(&messages[SERVED]);
                let _ = s.write_all(&torn[..torn.len() / 2]);
                let _ = s.flush();
                drop(s);
                drop(listener);
                pause(0.5);
            } else {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        served
    })
}

#[test]
fn agent_annotations_are_drawn_live_at_the_robot_of_the_monitor_stream() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let dir = tmp();
    let (messages, log) = fixture();
    assert!(messages.len() > SERVED);
    assert_eq!(
        log.teams.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["Alpha", "Bravo"]
    );
    assert_eq!(log.teams[0].side, Some(Side::Left));
    // Alpha 2 and Bravo 2 in view, 0.3 m to the text, and the text's width.
    let (a, b) = (robot(&log, 0, UNUM, 0).unwrap(), robot(&log, 1, UNUM, 0).unwrap());
    let centre = ((a.0 + b.0) / 2.0 + 1.0, (a.1 + b.1) / 2.0);
    let (calib, project) = calibration(dir.path(), centre);
    let jump = SCALE * (a.0 - b.0).hypot(a.1 - b.1);
    let black = black_camera(dir.path());

    // A port nobody listens on yet: the simulator comes late.
    let sim_port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let rv_port = free_udp_port();
    let overlay = dir.path().join("overlay.mkv");
    let mut cmd = underlay_cmd();
    cmd.arg("live")
        .arg(&black)
        .args(["--no-view", "--realtime", "--clock", "arrival", "--no-mask"])
        .arg("--calib")
        .arg(&calib)
        .args(["--log", &format!("sim3d://127.0.0.1:{sim_port}")])
        .args(["--log", &format!("roboviz://127.0.0.1:{rv_port}")])
        .args(["--delay", "0.2", "--duration", "8", "--wait", "30"])
        .arg("--overlay-out")
        .arg(&overlay);
    let live = spawn(cmd);
    wait_listened(&[rv_port]);

    let stop = Arc::new(AtomicBool::new(false));
    // The threads stop even if the test fails before it says so.
    let _stop = StopOnDrop(Arc::clone(&stop));
    let times: Vec<f64> = (0..messages.len()).map(|i| sim_time(&log, i)).collect();
    let sim = simulator(sim_port, messages, times, Arc::clone(&stop));
    // The agent: its annotation every quarter second (RoboViz keeps the
    // last one), and a datagram that is not RoboViz's now and then.
    let sent_notes = Arc::new(AtomicU64::new(0));
    let mut d = Vec::new();
    roboviz::encode(
        &Draw::AgentAnnotation {
            agent: Agent {
                right: false,
                unum: UNUM,
            },
            text: "KICK".into(),
            color: [255, 255, 0, 255],
        },
        &mut d,
    );
    let note = d.clone();
    let agent = {
        let (stop, sent_notes) = (Arc::clone(&stop), Arc::clone(&sent_notes));
        std::thread::spawn(move || {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            while !stop.load(Ordering::Relaxed) {
                let _ = socket.send_to(&d, ("127.0.0.1", rv_port));
                sent_notes.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(250));
            }
        })
    };
    let err = wait_end(live);
    stop.store(true, Ordering::Relaxed);
    let served = sim.join().unwrap();
    agent.join().unwrap();
    eprintln!("{err}");

    // Both connections served; the garbage and the torn message ignored.
    assert!(
        served.sent.len() >= SERVED + 10,
        "{} messages served\n{err}",
        served.sent.len()
    );
    let (taken, ignored) = source_counts(&err, sim_port);
    assert_eq!(taken, served.sent.len() as u64, "{err}");
    assert_eq!(ignored, served.garbage + 1, "{err}");
    assert!(!err.contains("agent annotations are not drawn"), "{err}");

    // Each live frame against where the robot was.
    let t0 = first_arrival(&err);
    let first_sent = served.sent[0].0;
    let yellow = |p: &[u8]| p[3] > 64 && p[0] > 150 && p[1] > 150 && p[2] < 100;
    let (mut compared, mut before, mut worst, mut sum) = ([0u32, 0], 0, 0.0f64, 0.0);
    let (mut missing, mut off_frames, mut trail) = (Vec::new(), Vec::new(), 0);
    // Where live drew the text over Alpha 2 (which stands still).
    let mut over_alpha = Vec::new();
    let live_frames = frames(&overlay, "rgba", 4);
    assert!(
        live_frames.len() >= 100,
        "{} live frames\n{err}",
        live_frames.len()
    );
    for (t, px) in &live_frames {
        let at = t0 + t;
        let drawn: Vec<(usize, usize)> = px
            .chunks_exact(4)
            .enumerate()
            .filter(|(_, p)| yellow(p))
            .map(|(i, _)| (i % 320, i / 320))
            .collect();
        // The last message sent before the frame's time.
        let Some(&(_, i, connection)) = served.sent.iter().rev().find(|(s, ..)| *s <= at) else {
            if at < first_sent - 0.05 {
                assert!(drawn.is_empty(), "drawn at {at:.3}, before any message came");
                before += 1;
            }
            continue;
        };
        // The ball's trail, white, from the same stream.
        trail += usize::from(px.chunks_exact(4).any(|p| p[3] > 64 && p[2] > 150 && p[1] > 150));
        if drawn.is_empty() {
            missing.push(format!("{t:.3}"));
            continue;
        }
        // The left side's: Alpha, then Bravo.
        let Some(p) = robot(&log, connection, UNUM, i) else {
            continue;
        };
        let (ax, ay) = project((p.0 + 0.3, p.1 + 0.3));
        let left = drawn.iter().map(|d| d.0).min().unwrap() as f64;
        let baseline = drawn.iter().map(|d| d.1).max().unwrap() as f64 + 1.0;
        let off = (left - ax).hypot(baseline - ay);
        if off > TOLERANCE {
            let right = drawn.iter().map(|d| d.0).max().unwrap_or(0);
            off_frames.push(format!(
                "{t:.3} s (message {i} of connection {connection}): text over x {left}..{right}, baseline \
                 {baseline}; the robot's place {ax:.1}, {ay:.1}"
            ));
        }
        worst = worst.max(off);
        sum += off;
        compared[usize::from(connection)] += 1;
        if connection == 0 {
            over_alpha.push((left, baseline));
        }
    }
    let n = compared[0] + compared[1];
    eprintln!(
        "left {UNUM}: {compared:?} live frames with the annotation compared (Alpha's, then Bravo's, \
         {jump:.0} px apart), mean {:.2} px, worst {worst:.2} px from where the robot was; {before} frames \
         before the first message; {} annotations sent",
        sum / f64::from(n.max(1)),
        sent_notes.load(Ordering::Relaxed)
    );
    assert!(
        compared.iter().all(|&c| c >= 30),
        "{compared:?} frames compared\n{err}"
    );
    assert!(missing.len() <= 2, "no annotation at {missing:?}\n{err}");
    assert!(
        worst <= TOLERANCE,
        "worst {worst:.2} px:\n{}\n{err}",
        off_frames.join("\n")
    );
    assert!(
        trail >= n as usize / 2,
        "the ball's trail in {trail} of {n} frames\n{err}"
    );

    // The export of the same log and annotation draws the text there.
    let alpha = robot(&log, 0, UNUM, 25).unwrap();
    let near = project((alpha.0 + 0.3, alpha.1 + 0.3));
    let exported = exported_text(dir.path(), &black, &calib, &note, near);
    let apart = over_alpha
        .iter()
        .map(|l| (l.0 - exported.0).hypot(l.1 - exported.1))
        .fold(0.0, f64::max);
    eprintln!(
        "live and export draw the text over Alpha {UNUM} at most {apart:.2} px apart (export {exported:?})"
    );
    assert!(apart <= 1.0, "live {over_alpha:?}, export {exported:?}");
}
