use std::io::Read as _;
use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::geom::Vec2;
use crate::live::sources::tests::wait_for;
use crate::live::sources::{LogSource, start};
use crate::live::store::StoreOptions;
use crate::log::Log;
use crate::ssl::file::RecordReader;
use crate::ssl::packets::{CameraFrame, CameraModel, Geometry, RobotSeen, Team, Vision};

/// The records of a committed SSL fixture: (type, receive time, payload).
fn records(name: &str) -> Vec<(MessageType, f64, Vec<u8>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ssl")
        .join(name);
    let raw = std::fs::read(path).unwrap();
    let mut bytes = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut bytes)
            .unwrap();
    } else {
        bytes = raw;
    }
    let mut r = RecordReader::new(&bytes[..], false).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push((rec.kind, rec.time(), rec.payload.to_vec()));
    }
    out
}

fn stream_of(kind: MessageType) -> Option<SslStream> {
    match kind {
        MessageType::Vision => Some(SslStream::Vision),
        MessageType::Referee => Some(SslStream::Referee),
        MessageType::Tracker => Some(SslStream::Tracker),
        _ => None,
    }
}

#[test]
fn urls_take_the_leagues_addresses_unless_told() {
    let ssl = |s: SslStream, a: &str| Some(LogSource::Ssl(s, a.parse().unwrap()));
    let p = |s: &str| LogSource::parse(s).unwrap();
    assert_eq!(p("ssl-vision://"), ssl(SslStream::Vision, "224.5.23.2:10006"));
    assert_eq!(p("ssl-referee://"), ssl(SslStream::Referee, "224.5.23.1:10003"));
    assert_eq!(p("ssl-tracker:///"), ssl(SslStream::Tracker, "224.5.23.2:10010"));
    assert_eq!(
        p("ssl-vision://10020"),
        ssl(SslStream::Vision, "224.5.23.2:10020")
    );
    assert_eq!(
        p("ssl-referee://:10013/"),
        ssl(SslStream::Referee, "224.5.23.1:10013")
    );
    assert_eq!(
        p("ssl-vision://224.5.23.9:10006"),
        ssl(SslStream::Vision, "224.5.23.9:10006")
    );
    assert_eq!(
        p("ssl-tracker://127.0.0.1:5000"),
        ssl(SslStream::Tracker, "127.0.0.1:5000")
    );
    assert_eq!(p("ssl-vision://[::1]:5000"), ssl(SslStream::Vision, "[::1]:5000"));
    assert_eq!(
        LogSource::Ssl(SslStream::Referee, "224.5.23.1:10003".parse().unwrap()).to_string(),
        "ssl-referee://224.5.23.1:10003"
    );
    for bad in [
        "ssl-vision://99999",
        "ssl-vision://:x",
        "ssl-referee://224.5.23.1",
        "ssl-tracker://nowhere.invalid:1",
        "ssl-camera://10006",
    ] {
        let e = LogSource::parse(bad).unwrap_err().to_string();
        assert!(e.starts_with(bad), "{e}");
    }
    assert!(
        LogSource::parse("ssl-camera://1")
            .unwrap_err()
            .to_string()
            .contains("ssl-vision://")
    );
}

/// The primitives `log` shows at `t`, by entity name, in draw order.
fn shown(log: &Log, index: &crate::select::Index, t: f64) -> Vec<String> {
    let filter = crate::select::Filter::all(log, i32::MAX);
    index
        .select(log, crate::time::LogTime(t), 0.02, &filter)
        .iter()
        .map(|p| {
            format!(
                "{} {} {:?} {:?}",
                log.entities.name(p.entity),
                p.level,
                p.shape,
                p.style
            )
        })
        .collect()
}

/// Receives `recs` one by one at their recorded times and checks they
/// draw what `file`, their game log, draws: the same primitives in the
/// same order at every tick, whatever they are (robots, ball, trail,
/// detections, timers, the field, the referee's state and game events).
fn received_draw_what_the_file_draws(name: &str, recs: &[(MessageType, f64, Vec<u8>)], file: &Log) {
    let store = LiveLogs::new(StoreOptions {
        keep: 1e6,
        ..StoreOptions::default()
    });
    let ids: Vec<SourceId> = SslStream::ALL
        .iter()
        .map(|s| store.add_source(s.scheme()))
        .collect();
    let mut scene = Scene::new(ids[0]);
    let mut sent = [0u64; 3];
    for (kind, t, payload) in recs {
        let Some(stream) = stream_of(*kind) else { continue };
        let i = SslStream::ALL.iter().position(|s| *s == stream).unwrap();
        scene.datagram(&store, ids[i], stream, *t, payload);
        sent[i] += 1;
    }
    let counts = store.counts();
    for (c, n) in counts.iter().zip(sent) {
        assert_eq!((c.packets, c.bad), (n, 0), "{name}: {c:?}");
    }
    let (_, live, live_index) = store.snapshot(0).unwrap();
    let file_index = crate::select::Index::new(file);
    let ticks: Vec<f64> = file
        .frames
        .iter()
        .filter(|f| !f.time.is_persistent())
        .map(|f| f.time.start())
        .collect();
    assert!(ticks.len() > 150, "{name}: {} ticks", ticks.len());
    // Every tick but the last: the last is a camera cycle the stream
    // has not ended yet (a file ends it at its end).
    let mut compared = 0;
    for &t in &ticks[..ticks.len() - 1] {
        let (a, b) = (shown(file, &file_index, t), shown(&live, &live_index, t));
        assert!(!a.is_empty());
        assert_eq!(a, b, "{name} at {t}");
        compared += 1;
    }
    assert_eq!(compared, ticks.len() - 1);
}

#[test]
fn packets_received_draw_what_their_game_log_draws() {
    for name in ["ball-out-35s.log.gz", "push-card-64s.log"] {
        let file = crate::formats::load_log(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/ssl")
                .join(name),
        )
        .unwrap();
        received_draw_what_the_file_draws(name, &records(name), &file);
    }
}

/// The same with a tracker sending beside vision and referee for the
/// middle of the match, its robots 100 mm off the cameras' (so whose are
/// drawn shows): its ticks replace the cameras' while it sends, the
/// cameras' come back when it falls silent, live as in the file.
#[test]
fn a_tracker_beside_vision_draws_what_its_game_log_draws() {
    use crate::ssl::packets::{Dropped, Tracked, TrackedBall, TrackedRobot};
    let mut recs = records("ball-out-35s.log.gz");
    let (first, last) = (recs[0].1, recs[recs.len() - 1].1);
    let middle = first + (last - first) / 3.0..first + (last - first) * 2.0 / 3.0;
    let mut tracker = Vec::new();
    for (kind, t, payload) in &recs {
        let Some(frame) = (*kind == MessageType::Vision && middle.contains(t))
            .then(|| {
                Vision::decode(payload, &mut Dropped::default())
                    .unwrap()
                    .detection
            })
            .flatten()
            .filter(|f| f.camera_id == 0)
        else {
            continue;
        };
        let tracked = Tracked {
            uuid: "tracker".to_owned(),
            source_name: None,
            timestamp: Some(*t),
            frame_number: tracker.len() as u32,
            balls: frame
                .balls
                .iter()
                .map(|b| TrackedBall {
                    pos: b.pos + Vec2::new(100.0, 0.0),
                    z: 0.0,
                    vel: None,
                    visibility: None,
                })
                .collect(),
            robots: frame
                .robots
                .iter()
                .filter_map(|r| {
                    Some(TrackedRobot {
                        team: r.team,
                        id: r.id?,
                        pos: r.pos + Vec2::new(100.0, 0.0),
                        orientation: r.orientation.unwrap_or(0.0),
                        vel: Some(Vec2::new(1000.0, 0.0)),
                        angular_vel: None,
                        visibility: None,
                    })
                })
                .collect(),
        };
        tracker.push((MessageType::Tracker, t + 0.002, tracked.encode()));
    }
    assert!(tracker.len() > 100, "{} tracker packets", tracker.len());
    // The tracker sends from its first packet on (a camera cycle complete
    // just before it is still the cameras' tick).
    let sends = tracker[0].1..middle.end;
    recs.extend(tracker);
    recs.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut w = crate::ssl::file::write::LogWriter::new(Vec::new()).unwrap();
    for (kind, t, payload) in &recs {
        w.record((t * 1e9).round() as i64, *kind, payload).unwrap();
    }
    let file = crate::ssl::vislog::read(&w.finish().unwrap()[..], false).unwrap();
    // The tracker's ticks are those with its robots' velocity arrows:
    // while it sends and only then.
    let (mut tracked, mut seen) = (0, 0);
    for f in file.frames.iter().filter(|f| !f.time.is_persistent()) {
        let arrow = file.frame_primitives(f).iter().any(|p| {
            p.level == 1
                && matches!(p.shape, crate::log::Shape::Line { .. })
                && file.entities.name(p.entity).starts_with("robots/")
        });
        let t = f.time.start();
        if arrow {
            assert!(t > middle.start && t < middle.end + 0.01, "a tracker tick at {t}");
            tracked += 1;
        } else {
            assert!(
                !sends.contains(&t),
                "a camera tick at {t} while the tracker sends"
            );
            seen += 1;
        }
    }
    assert!(
        tracked > 100 && seen > 200,
        "{tracked} tracker ticks, {seen} camera ticks"
    );
    received_draw_what_the_file_draws("ball-out with a tracker", &recs, &file);
}

/// A camera model looking straight down from 4 m over the centre spot.
fn overhead(camera_id: u32) -> CameraModel {
    CameraModel {
        camera_id,
        focal_length: 280.0,
        principal_point: Vec2::new(320.0, 240.0),
        distortion: 0.0,
        rotation: [1.0, 0.0, 0.0, 0.0],
        translation: [0.0, 0.0, 4000.0],
        derived_position: None,
        image_size: Some([640, 480]),
    }
}

fn vision(detection: Option<CameraFrame>, cameras: Vec<CameraModel>) -> Vec<u8> {
    Vision {
        detection,
        geometry: (!cameras.is_empty()).then(|| Geometry {
            field: crate::ssl::packets::FieldGeometry::division_b(),
            cameras,
        }),
    }
    .encode()
}

fn detection(camera_id: u32, robots: impl IntoIterator<Item = u32>) -> CameraFrame {
    CameraFrame {
        camera_id,
        frame_number: 1,
        t_capture: 1.0,
        t_sent: 1.0,
        balls: Vec::new(),
        robots: robots
            .into_iter()
            .map(|id| RobotSeen {
                team: Team::Blue,
                id: Some(id),
                pos: Vec2::new(f64::from(id % 1000), 0.0),
                orientation: Some(0.0),
                confidence: 1.0,
            })
            .collect(),
    }
}

#[test]
fn cameras_models_become_calibrations_and_changes_are_seen() {
    let store = LiveLogs::new(StoreOptions::default());
    let id = store.add_source("ssl-vision://:0");
    let mut scene = Scene::new(id);
    assert!(store.camera(0).is_none());
    let mut bad = overhead(1);
    bad.translation = [0.0, 0.0, 0.0];
    scene.datagram(
        &store,
        id,
        SslStream::Vision,
        1.0,
        &vision(None, vec![overhead(0), bad]),
    );
    let (first, c0) = store.camera(0).unwrap();
    let c0 = c0.unwrap();
    // Straight down from 4 m with f = 280 px: 0.07 px a millimetre, y up.
    let p = c0.project(Vec2::new(1000.0, 1000.0)).unwrap();
    assert!((p - Vec2::new(390.0, 170.0)).length() < 1e-6, "{p:?}");
    assert!(store.camera(1).unwrap().1.unwrap_err().contains("floor"));
    // The same model again is no change; another one is.
    scene.datagram(
        &store,
        id,
        SslStream::Vision,
        1.1,
        &vision(None, vec![overhead(0)]),
    );
    assert_eq!(store.camera(0).unwrap().0, first);
    let mut moved = overhead(0);
    moved.translation[2] = 5000.0;
    scene.datagram(&store, id, SslStream::Vision, 1.2, &vision(None, vec![moved]));
    let (second, c) = store.camera(0).unwrap();
    assert!(second > first);
    let p = c.unwrap().project(Vec2::new(1000.0, 0.0)).unwrap();
    assert!((p.x - 376.0).abs() < 1e-6, "{p:?}");
    assert_eq!(store.counts()[0].packets, 3);
}

#[test]
fn garbage_is_counted_and_ignored() {
    let store = LiveLogs::new(StoreOptions::default());
    let ids: Vec<SourceId> = SslStream::ALL
        .iter()
        .map(|s| store.add_source(s.scheme()))
        .collect();
    let mut scene = Scene::new(ids[0]);
    let recs = records("ball-out-35s.log.gz");
    let real = |k: MessageType| recs.iter().find(|r| r.0 == k).map(|r| r.2.clone()).unwrap();
    let (v, r) = (real(MessageType::Vision), real(MessageType::Referee));
    // Nothing, text, a truncated packet, and messages that decode but are
    // empty (every byte string of valid fields decodes as something).
    let junk: [&[u8]; 5] = [
        b"",
        b"hello, world",
        &v[..v.len() / 2],
        &[0x08, 0x01],
        &r[..r.len() / 2],
    ];
    for (i, id) in ids.iter().enumerate() {
        for j in junk {
            scene.datagram(&store, *id, SslStream::ALL[i], 2.0, j);
        }
    }
    // A referee packet on the vision port is not a vision packet either.
    scene.datagram(&store, ids[0], SslStream::Vision, 2.0, &r);
    scene.datagram(&store, ids[0], SslStream::Vision, 2.0, &v);
    scene.datagram(&store, ids[1], SslStream::Referee, 2.0, &r);
    let c = store.counts();
    assert_eq!((c[0].bad, c[0].packets), (6, 1), "{:?}", c[0]);
    assert_eq!((c[1].bad, c[1].packets), (5, 1), "{:?}", c[1]);
    assert_eq!((c[2].bad, c[2].packets), (5, 0), "{:?}", c[2]);
    assert!(
        c[2].last_error.as_ref().unwrap().contains("tracker"),
        "{:?}",
        c[2]
    );
}

#[test]
fn a_flood_of_made_up_robots_starts_the_scene_afresh_within_bounds() {
    let opts = StoreOptions {
        keep: 1.0,
        max_primitives: 5_000,
        max_entities: 100_000,
    };
    let store = LiveLogs::new(opts);
    let id = store.add_source("ssl-vision://:0");
    let mut scene = Scene::new(id);
    for i in 0..200u32 {
        // One camera sending again: each packet a tick of 30 new robots.
        let d = vision(Some(detection(0, (0..30).map(|k| i * 30 + k))), Vec::new());
        scene.datagram(&store, id, SslStream::Vision, 10.0 + f64::from(i) * 0.01, &d);
    }
    let c = &store.counts()[0];
    assert_eq!((c.packets, c.bad), (200, 0));
    assert!(scene.restarts >= 4, "{}", scene.restarts);
    assert!(scene.converter.entity_count() <= MAX_SCENE_NAMES);
    let (_, log, _) = store.snapshot(0).unwrap();
    assert!(
        log.primitives.len() <= opts.max_primitives,
        "{}",
        log.primitives.len()
    );
}

/// Vision and referee arriving on their own ports over loopback draw one
/// scene: the referee's state among the robots, each port counting its
/// own packets.
#[test]
fn unicast_vision_and_referee_draw_one_scene() {
    let store = Arc::new(LiveLogs::new(StoreOptions::default()));
    let sources = [
        LogSource::Ssl(SslStream::Vision, "127.0.0.1:0".parse().unwrap()),
        LogSource::Ssl(SslStream::Referee, "127.0.0.1:0".parse().unwrap()),
    ];
    let r = start(&sources, &store).unwrap();
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    let recs = records("push-card-64s.log");
    let (mut v, mut f) = (0, 0);
    for (kind, _, payload) in recs.iter().take(400) {
        let to = match kind {
            MessageType::Vision => r.bound[0],
            MessageType::Referee => r.bound[1],
            _ => continue,
        };
        sender.send_to(payload, to).unwrap();
        if to == r.bound[0] {
            v += 1;
        } else {
            f += 1;
        }
        // Loopback drops nothing it can hand over: pace as a match does.
        std::thread::sleep(Duration::from_micros(300));
    }
    sender.send_to(b"\x00\x01garbage", r.bound[1]).unwrap();
    wait_for(&store, |c| {
        c[0].packets == v && c[1].packets == f && c[1].bad == 1
    });
    assert!(f > 0 && v > 100);
    let c = store.counts();
    assert_eq!(c[0].name, format!("ssl-vision://{}", r.bound[0]));
    assert_eq!(c[1].frames, 0, "the referee's drawings are the scene's");
    let (_, log, index) = store.snapshot(0).unwrap();
    let names: Vec<String> = shown(&log, &index, crate::live::now() + 1.0)
        .into_iter()
        .map(|s| s.split(' ').next().unwrap_or_default().to_owned())
        .collect();
    for want in ["field", "referee/command", "referee/score"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let t = log
        .frames
        .iter()
        .rev()
        .find(|f| !f.time.is_persistent())
        .map(|f| f.time.start())
        .unwrap();
    let names: Vec<String> = shown(&log, &index, t);
    assert!(names.iter().any(|n| n.starts_with("robots/")), "{names:?}");
    drop(r);
}

/// Two listeners on the league's group and one port (this run and, say,
/// an autoref) both receive what is multicast there.
#[test]
fn multicast_groups_are_joined_and_shared() {
    let group = "224.5.23.2";
    let port = UdpSocket::bind("0.0.0.0:0").unwrap().local_addr().unwrap().port();
    let source = LogSource::parse(&format!("ssl-vision://{group}:{port}"))
        .unwrap()
        .unwrap();
    let stores = [
        Arc::new(LiveLogs::new(StoreOptions::default())),
        Arc::new(LiveLogs::new(StoreOptions::default())),
    ];
    let receivers: Vec<_> = stores
        .iter()
        .map(|s| start(std::slice::from_ref(&source), s).unwrap())
        .collect();
    assert_eq!(receivers[1].bound[0].to_string(), format!("{group}:{port}"));
    let sender = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    // This machine only, and looped back to its own listeners.
    sender.set_multicast_ttl_v4(0).unwrap();
    sender.set_multicast_loop_v4(true).unwrap();
    let to: SocketAddr = format!("{group}:{port}").parse().unwrap();
    let packet = vision(Some(detection(0, [1, 2])), Vec::new());
    if let Err(e) = sender.send_to(&packet, &to.into()) {
        // A machine with no route for multicast at all.
        eprintln!("skipped: multicast cannot be sent here ({e})");
        return;
    }
    sender.send_to(b"not vision", &to.into()).unwrap();
    for s in &stores {
        wait_for(s, |c| c[0].packets == 1 && c[0].bad == 1);
    }
    drop(receivers);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Random datagrams and real packets damaged, on every stream: each
    /// counted once (taken or bad), never a panic, the store within its
    /// bounds and everything in it drawable.
    #[test]
    fn any_datagram_is_counted_and_the_store_stays_bounded(
        junk in proptest::collection::vec(
            (0usize..3, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)), 0..8),
        picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 1..6),
        edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                            proptest::prelude::any::<u8>()), 0..4),
        cut in proptest::prelude::any::<proptest::sample::Index>(),
    ) {
        thread_local! {
            static RECS: Vec<(MessageType, f64, Vec<u8>)> = records("push-card-64s.log")
                .into_iter()
                .filter(|r| stream_of(r.0).is_some())
                .take(300)
                .collect();
        }
        let opts = StoreOptions { keep: 0.5, max_primitives: 400, max_entities: 40 };
        let store = LiveLogs::new(opts);
        let ids: Vec<SourceId> = SslStream::ALL.iter().map(|s| store.add_source(s.scheme())).collect();
        let mut scene = Scene::new(ids[0]);
        let mut t = 1.0e9;
        for (s, d) in &junk {
            t += 0.01;
            scene.datagram(&store, ids[*s], SslStream::ALL[*s], t, d);
        }
        let mut sent = junk.len();
        RECS.with(|recs| {
            for p in &picks {
                let (kind, _, payload) = &recs[p.index(recs.len())];
                let mut d = payload.clone();
                for (i, v) in &edits {
                    if !d.is_empty() {
                        let i = i.index(d.len());
                        d[i] = *v;
                    }
                }
                d.truncate(cut.index(d.len() + 1).max(d.len() / 2));
                let Some(stream) = stream_of(*kind) else { continue };
                let i = SslStream::ALL.iter().position(|s| *s == stream).unwrap_or(0);
                t += 0.02;
                scene.datagram(&store, ids[i], stream, t, &d);
                sent += 1;
            }
        });
        let counted: u64 = store.counts().iter().map(|c| c.packets + c.bad).sum();
        proptest::prop_assert_eq!(counted, sent as u64);
        if let Some((_, log, _)) = store.snapshot(0) {
            proptest::prop_assert!(log.primitives.len() <= opts.max_primitives, "{}", log.primitives.len());
            proptest::prop_assert!(log.entities.len() <= opts.max_entities, "{}", log.entities.len());
            for p in &log.primitives {
                proptest::prop_assert!(crate::log::validate::drawable(p), "{p:?}");
            }
        }
    }
}
