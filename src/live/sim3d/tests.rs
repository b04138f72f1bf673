//! The 3D league live: a fake simulator's monitor port on loopback (late,
//! dropping mid-message, sending garbage, announcing too much), and
//! RoboViz agent annotations placed at the robots it sends.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::live::sources::tests::wait_for;
use crate::live::sources::{LogSource, start};
use crate::live::store::StoreOptions;
use crate::log::Shape;
use crate::sim3d::framing::frame;
use crate::sim3d::roboviz::tests::datagram;
use crate::sim3d::roboviz::{Agent, Command};

/// The monitor sample's messages (a full scene with Alpha 2 at (-3, 1)
/// and the ball, a diff moving the ball, one that does not parse, one
/// whose diff does not fit).
fn sample() -> Vec<Vec<u8>> {
    let s = crate::sim3d::monitor::tests::rsmp_sample();
    crate::sexp::lines(s.as_bytes())
        .map(|(_, _, t)| t.to_vec())
        .filter(|t| !t.iter().all(u8::is_ascii_whitespace))
        .collect()
}

/// A loopback port nobody listens on now.
fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// Accepts one connection on `listener` (10 s at most).
fn accept(listener: &TcpListener) -> std::net::TcpStream {
    listener.set_nonblocking(true).unwrap();
    let t = std::time::Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(t.elapsed() < Duration::from_secs(10), "nobody connected");
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// The text primitives a snapshot shows at `t`, with their anchors.
fn texts_at(store: &LiveLogs, t: f64) -> Vec<(String, f64, f64)> {
    let Some((_, log, index)) = store.snapshot(0) else {
        return Vec::new();
    };
    let filter = crate::select::FilterSpec::default().compile(&log).unwrap();
    index
        .select(&log, crate::time::LogTime(t), 0.0, &filter)
        .into_iter()
        .filter_map(|p| match &p.shape {
            Shape::Text { anchor, text, .. } => Some((text.to_string(), anchor.x, anchor.y)),
            _ => None,
        })
        .collect()
}

#[test]
fn monitor_messages_in_any_pieces_draw_the_balls_trail_and_garbage_is_counted() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let store = Arc::new(LiveLogs::new(StoreOptions::default()));
    let r = start(&[LogSource::Sim3d(addr)], &store).unwrap();
    assert_eq!(
        (r.bound[0], store.counts()[0].name.clone()),
        (addr, format!("sim3d://{addr}"))
    );
    let mut server = accept(&listener);
    let m = sample();
    // The full scene and the diff in one write with garbage between;
    // then the two others a byte at a time.
    let mut first = frame(&m[0]);
    first.extend(frame(b"garbage, not an S-expression ((("));
    first.extend(frame(&m[1]));
    server.write_all(&first).unwrap();
    for b in m[2..].iter().flat_map(|m| frame(m)) {
        server.write_all(&[b]).unwrap();
    }
    // Two good messages; the garbage, the one that does not parse and the
    // one whose diff does not fit are bad.
    wait_for(&store, |c| c[0].packets == 2 && c[0].bad == 3);
    let c = &store.counts()[0];
    assert!(
        c.last_error
            .as_deref()
            .unwrap()
            .contains("scene graph not applied"),
        "{c:?}"
    );
    // The ball's trail from the full scene's ball to the diff's.
    let (_, log, _) = store.snapshot(0).unwrap();
    let trail = log.entities.get("ball/trail").unwrap();
    let last = log
        .primitives
        .iter()
        .rev()
        .find(|p| p.entity == trail)
        .expect("a trail");
    assert!(
        matches!(&last.shape, Shape::Polygon { vertices, .. }
            if vertices.first().map(|v| (v.x, v.y)) == Some((0.0, 0.0))
                && vertices.iter().any(|v| (v.x, v.y) == (1.5, -2.0))),
        "{:?}",
        last.shape
    );
    drop(server);
    drop(r);
}

#[test]
fn a_simulator_late_then_dropping_mid_message_then_back_is_read_again() {
    let addr = free_port();
    let store = Arc::new(LiveLogs::new(StoreOptions::default()));
    let r = start(&[LogSource::Sim3d(addr)], &store).unwrap();
    // Nobody listens yet: said, tried again.
    wait_for(&store, |c| {
        c[0].last_error
            .as_deref()
            .is_some_and(|e| e.contains("cannot connect to the simulator's monitor port"))
    });
    let listener = TcpListener::bind(addr).unwrap();
    let mut server = accept(&listener);
    let m = sample();
    let mut bytes = frame(&m[0]);
    bytes.extend(&frame(&m[1])[..20]);
    server.write_all(&bytes).unwrap();
    wait_for(&store, |c| c[0].packets == 1);
    drop(server);
    // The torn message is bad; the source connects again and reads a new
    // scene from its full graph.
    let mut server = accept(&listener);
    wait_for(&store, |c| c[0].bad == 1);
    let e = store.counts()[0].last_error.clone().unwrap();
    assert!(e.contains("cut off after 20 of"), "{e}");
    server.write_all(&frame(&m[1])).unwrap();
    wait_for(&store, |c| c[0].bad == 2);
    let e = store.counts()[0].last_error.clone().unwrap();
    assert!(e.contains("before any full one"), "{e}");
    server.write_all(&frame(&m[0])).unwrap();
    server.write_all(&frame(&m[1])).unwrap();
    wait_for(&store, |c| c[0].packets == 3);
    drop(server);
    drop(r);
}

#[test]
fn a_length_over_the_cap_drops_the_connection_without_allocating_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let store = Arc::new(LiveLogs::new(StoreOptions::default()));
    let r = start(&[LogSource::Sim3d(addr)], &store).unwrap();
    let mut server = accept(&listener);
    let mut bytes = frame(&sample()[0]);
    bytes.extend((MAX_MESSAGE + 1).to_be_bytes());
    bytes.extend(b"and then whatever");
    server.write_all(&bytes).unwrap();
    wait_for(&store, |c| c[0].packets == 1 && c[0].bad == 1);
    let e = store.counts()[0].last_error.clone().unwrap();
    assert!(
        e.contains("67108865 bytes announced") && e.contains("dropped"),
        "{e}"
    );
    // Dropped, and made again.
    let _again = accept(&listener);
    drop(server);
    drop(r);
}

#[test]
fn stopping_the_run_ends_the_source_whatever_it_waits_for() {
    // Waiting to connect again, and reading a silent connection.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sources = [
        LogSource::Sim3d(free_port()),
        LogSource::Sim3d(listener.local_addr().unwrap()),
    ];
    let store = Arc::new(LiveLogs::new(StoreOptions::default()));
    let r = start(&sources, &store).unwrap();
    let _silent = accept(&listener);
    std::thread::sleep(Duration::from_millis(300));
    let t = std::time::Instant::now();
    drop(r);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

fn note(unum: u32, text: &str) -> Vec<u8> {
    datagram(&[Command::AgentAnnotation {
        agent: Agent { right: false, unum },
        text: text.into(),
        color: [255, 255, 0, 255],
    }])
}

#[test]
fn agent_annotations_are_placed_at_the_robot_the_monitor_stream_sends() {
    let store = LiveLogs::new(StoreOptions::default());
    let roboviz = store.add_source("roboviz://127.0.0.1:32769");
    let monitor = store.add_source("sim3d://127.0.0.1:3200");
    let mut scene = Scene::new(&store, true);
    let m = sample();
    let t0 = 1.7e9;
    scene.monitor_message(&store, monitor, t0, &m[0]);
    scene.datagram(&store, roboviz, t0 + 0.01, &note(2, "kick"));
    // Placed at Alpha 2 (-3, 1) as the last message showed it, text 0.3 m
    // off as a recording's, until further notice; not before it came.
    assert_eq!(texts_at(&store, t0 + 1000.0), [("kick".to_owned(), -2.7, 1.3)]);
    assert!(texts_at(&store, t0 + 0.005).is_empty());
    scene.monitor_message(&store, monitor, t0 + 0.02, &m[1]);
    assert_eq!(texts_at(&store, t0 + 1000.0), [("kick".to_owned(), -2.7, 1.3)]);
    scene.monitor_message(&store, monitor, t0 + 0.04, &m[3]);
    assert_eq!(
        texts_at(&store, t0 + 0.03),
        [("kick".to_owned(), -2.7, 1.3)],
        "ended at 0.04, kept"
    );
    assert_eq!(texts_at(&store, t0 + 0.05), [("kick".to_owned(), -2.7, 1.3)]);
    // Agent 5 has no robot; nothing left out is said while its side has
    // a team.
    scene.datagram(&store, roboviz, t0 + 0.06, &note(5, "nobody"));
    let c = store.counts();
    assert_eq!(
        (c[0].packets, c[0].bad, c[1].packets, c[1].bad),
        (2, 0, 2, 1),
        "{c:?}"
    );
    assert_eq!(c[0].last_error, None);

    // Without a monitor stream: left out, and the option to add said.
    let store = LiveLogs::new(StoreOptions::default());
    let roboviz = store.add_source("roboviz://127.0.0.1:32769");
    let mut scene = Scene::new(&store, false);
    scene.datagram(&store, roboviz, t0, &note(2, "kick"));
    scene.datagram(&store, roboviz, t0 + 0.5, &note(2, "pass"));
    assert!(texts_at(&store, t0 + 0.7).is_empty());
    let e = store.counts()[0].last_error.clone().unwrap();
    assert!(e.contains("add --log sim3d://[HOST:]PORT"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Garbage and damaged monitor messages among good ones, with an
    /// annotation showing: each counted once, taken or bad, never a
    /// panic; the store within its bounds, everything in it drawable.
    #[test]
    fn garbage_monitor_messages_are_counted_and_never_panic(
        junk in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120), 0..6),
        edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                           proptest::sample::select(b"()0123456789.- ndTRFSLTe".to_vec())), 0..10),
        order in proptest::collection::vec(0usize..10, 1..16),
    ) {
        let opts = StoreOptions { keep: 1.0, max_primitives: 60, max_entities: 20 };
        let store = LiveLogs::new(opts);
        let roboviz = store.add_source("roboviz://127.0.0.1:32769");
        let monitor = store.add_source("sim3d://127.0.0.1:3200");
        let mut scene = Scene::new(&store, true);
        let mut messages = sample();
        for (i, v) in edits {
            let m = &mut messages[1];
            let i = i.index(m.len());
            m[i] = v;
        }
        messages.extend(junk);
        let mut t = 1.7e9;
        scene.datagram(&store, roboviz, t, &note(2, "x"));
        for &k in &order {
            t += 0.04;
            scene.monitor_message(&store, monitor, t, &messages[k % messages.len()]);
            if k == 7 {
                scene.reconnected();
            }
        }
        let c = &store.counts()[1];
        proptest::prop_assert_eq!(c.packets + c.bad, order.len() as u64, "{:?}", c);
        if let Some((_, log, _)) = store.snapshot(0) {
            proptest::prop_assert!(log.primitives.len() <= 2 * opts.max_primitives);
            for p in &log.primitives {
                proptest::prop_assert!(crate::log::validate::drawable(p));
            }
        }
    }
}
