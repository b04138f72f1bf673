//! An autoref's tracker stream in `underlay live`, end to end on loopback
//! (issue 32): a replayer sends `TrackerWrapperPacket`s at their recorded
//! pace, with garbage between them, to an `ssl-tracker://` source, the
//! run's only stream; the live overlay is compared with `underlay export`
//! of a game log holding the same packets (as tracker records, type 5):
//! the ball and a moving robot are drawn where the export draws them at
//! the same log time, within one frame, and the times agree
//! ([`crate::ssl_replay`] says how). The garbage is counted as ignored
//! and changes nothing.
//!
//! **The tracker's packets.** The repository holds no recording of a
//! real tracker, so they are made from the committed fixture's vision as
//! an autoref's tracker would send them: once a camera cycle (about 60
//! Hz; a cycle ends when a camera sends again), 1 ms after the cycle's
//! last camera frame came, the robots and ball of the cameras heard in
//! the last 0.1 s merged as `underlay::ssl::merge` merges them, in
//! metres, with velocities from the previous packet, the cycle's receive
//! time as the frame's timestamp, one uuid and a source name.
//!
//! **Calibration.** A tracker sends neither the field nor the cameras'
//! models, so with no vision stream there is no SSL camera to draw
//! through (`--camera N` needs `ssl-vision://`) and no field lines (the
//! drawing falls back to Division B's size for the referee's layout
//! only). Both runs draw through the calibration file of the vision
//! test's camera ([`crate::ssl_replay::overhead`]: straight down from 2.5 m over where the
//! ball and blue 2 go), given with `--calib`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use underlay::geom::Vec2;
use underlay::ssl::file::MessageType;
use underlay::ssl::file::write::LogWriter;
use underlay::ssl::merge::{merge_ball, merge_robots};
use underlay::ssl::packets::{CameraFrame, Dropped, Team, Tracked, TrackedBall, TrackedRobot, Vision};
use underlay::ssl::vislog::STALE;

use crate::live::free_udp_port;
use crate::ssl_replay::{
    GARBAGE_EVERY, Replayer, black_camera, compare_overlays, export, fixture, live_command,
    overhead_calibration, source_counts, spawn, wait_end, wait_listened,
};
use crate::util::{have_tool, tmp};

/// The replayed tracker's identity.
const UUID: &str = "5b0e8f3c-2a71-4c1e-9d3a-6f2b1c0e7a44";
/// How long after a camera cycle's last frame the tracker sends.
const LATENCY: f64 = 0.001;

/// The fixture's vision as a tracker's packets (module docs): (recorded
/// time, payload), in time order.
fn tracker_packets() -> Vec<(f64, Vec<u8>)> {
    let mut cameras: BTreeMap<u32, (f64, CameraFrame)> = BTreeMap::new();
    let mut cycle: (BTreeSet<u32>, f64) = (BTreeSet::new(), f64::NEG_INFINITY);
    let mut previous: Option<Tracked> = None;
    let mut out = Vec::new();
    let mut send = |cameras: &BTreeMap<u32, (f64, CameraFrame)>, t: f64| {
        let heard = || {
            cameras
                .values()
                .filter(|(at, _)| *at >= t - STALE)
                .map(|(_, f)| f)
        };
        let dt = previous.as_ref().and_then(|p| p.timestamp).map(|p| t - p);
        // mm/s from where the previous packet had it.
        let vel = |was: Option<Vec2>, now: Vec2| Some((now - was?) * (1.0 / dt.filter(|d| *d > 0.0)?));
        let robots = merge_robots(heard())
            .into_iter()
            .map(|r| {
                let was = previous
                    .as_ref()
                    .and_then(|p| p.robots.iter().find(|q| (q.team, q.id) == (r.team, r.id)))
                    .map(|q| q.pos);
                TrackedRobot {
                    team: r.team,
                    id: r.id,
                    pos: r.pos,
                    orientation: r.orientation.unwrap_or(0.0),
                    vel: vel(was, r.pos),
                    angular_vel: None,
                    visibility: Some(1.0),
                }
            })
            .collect();
        let balls = merge_ball(heard())
            .map(|pos| TrackedBall {
                pos,
                z: 0.0,
                vel: vel(
                    previous.as_ref().and_then(|p| p.balls.first()).map(|b| b.pos),
                    pos,
                ),
                visibility: Some(1.0),
            })
            .into_iter()
            .collect();
        let tracked = Tracked {
            uuid: UUID.to_owned(),
            source_name: Some("autoref tracker (replayed from vision)".to_owned()),
            timestamp: Some(t),
            frame_number: previous.as_ref().map_or(0, |p| p.frame_number + 1),
            balls,
            robots,
        };
        out.push((t + LATENCY, tracked.encode()));
        previous = Some(tracked);
    };
    for (kind, time, payload) in fixture() {
        if kind != MessageType::Vision {
            continue;
        }
        let Some(frame) = Vision::decode(&payload, &mut Dropped::default())
            .unwrap()
            .detection
        else {
            continue;
        };
        let id = frame.camera_id;
        if cycle.0.contains(&id) {
            send(&cameras, cycle.1);
            cycle = (BTreeSet::new(), f64::NEG_INFINITY);
        }
        cameras.insert(id, (time, frame));
        cycle.0.insert(id);
        cycle.1 = cycle.1.max(time);
    }
    if !cycle.0.is_empty() {
        send(&cameras, cycle.1);
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The packets as an SSL game log (tracker records) at `path`.
fn write_log(path: &std::path::Path, packets: &[(f64, Vec<u8>)]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = LogWriter::new(file).unwrap();
    for (t, payload) in packets {
        w.record((t * 1e9).round() as i64, MessageType::Tracker, payload)
            .unwrap();
    }
    w.index().unwrap();
    w.finish().unwrap();
}

#[test]
fn ssl_tracker_live_draws_the_ball_where_the_export_does() {
    if !have_tool("ffmpeg") || !have_tool("ffprobe") {
        return;
    }
    let dir = tmp();
    let packets = tracker_packets();
    // A tracker packet a camera cycle, with blue 2 and the ball in each.
    assert!(
        (400..=420).contains(&packets.len()),
        "{} tracker packets",
        packets.len()
    );
    let mut seen = HashMap::new();
    for (_, p) in &packets {
        let t = Tracked::decode(p, &mut Dropped::default()).unwrap();
        *seen.entry("ball").or_insert(0) += t.balls.len();
        let blue2 = t.robots.iter().any(|r| (r.team, r.id) == (Team::Blue, 2));
        *seen.entry("blue 2").or_insert(0) += usize::from(blue2);
    }
    assert!(seen.values().all(|&n| n + 5 >= packets.len()), "{seen:?}");
    let r0 = packets[0].0;
    let log = dir.path().join("tracker.log");
    write_log(&log, &packets);
    let black = black_camera(dir.path());
    let calib = overhead_calibration(dir.path());

    let port = free_udp_port();
    let overlay = dir.path().join("overlay.mkv");
    let mut cmd = live_command(&black, &overlay);
    cmd.arg("--calib")
        .arg(&calib)
        .args(["--log", &format!("ssl-tracker://127.0.0.1:{port}")]);
    let live = spawn(cmd);
    wait_listened(&[port]);
    let replayer = Replayer::start(packets.into_iter().map(|(t, p)| (port, t, p)).collect());
    let err = wait_end(live);
    let (w0, garbage) = replayer.stop();
    // The tracker's packets taken (5 s of about 60 a second), and the
    // garbage sent among them (one after every GARBAGE_EVERY) ignored,
    // whether it does not decode or decodes without identity and time.
    let (taken, ignored) = source_counts(&err, port);
    eprintln!("tracker: {taken} packets taken, {ignored} ignored; {garbage} garbage datagrams sent");
    assert!(taken >= 200, "{taken} tracker packets taken\n{err}");
    assert!(
        ignored <= garbage && ignored.abs_diff(taken.div_ceil(GARBAGE_EVERY as u64)) <= 1,
        "{ignored} ignored of {garbage} garbage datagrams\n{err}"
    );

    let exported = export(dir.path(), &black, &log, &calib, r0);
    compare_overlays(&exported, &overlay, w0, &err);
}
