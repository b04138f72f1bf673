//! The replay: swaps, limits, the conversion record by record, agent
//! annotations placed as a live monitor grows, garbage.

use super::*;
use crate::sim3d::roboviz::{Agent, tests::datagram, tests::every_command};
use crate::sim3d::rvd::{Record, to_log};
use proptest::prelude::*;

const SETS: [&str; 6] = ["", "a", "a.b", "a.b.c", "b", "ab"];
const PREFIXES: [&str; 6] = ["", "a", "a.", "a.b", "b", "zz"];

/// A command of a few kinds in a few sets (sharing prefixes).
fn command() -> impl Strategy<Value = Command> {
    let set = (0..SETS.len()).prop_map(|i| SETS[i].to_owned());
    prop_oneof![
        (set.clone(), -9i32..9, 0i32..3).prop_map(|(set, x, z)| Command::Point {
            position: [x as f64, 1.0, z as f64 * 0.5],
            size: 3.0,
            color: [1, 2, 3, 255],
            set,
        }),
        (set.clone(), -9i32..9).prop_map(|(set, x)| Command::Circle {
            center: [x as f64, 0.5],
            radius: 1.0,
            thickness: 2.0,
            color: [200, 0, 0, 255],
            set,
        }),
        (set, 0usize..4).prop_map(|(set, n)| Command::Polygon {
            vertices: (0..n).map(|i| [i as f64, 0.0, 0.0]).collect(),
            color: [0, 0, 200, 128],
            set,
        }),
        (0..PREFIXES.len()).prop_map(|i| Command::Swap {
            prefix: PREFIXES[i].to_owned()
        }),
        (0..PREFIXES.len()).prop_map(|i| Command::Swap {
            prefix: PREFIXES[i].to_owned()
        }),
        (1u32..3).prop_map(|unum| Command::AgentAnnotation {
            agent: Agent { right: false, unum },
            text: "hi".into(),
            color: [1, 1, 1, 255],
        }),
    ]
}

/// Records: datagrams of a few commands at receive times that mostly
/// grow.
fn records() -> impl Strategy<Value = Vec<Record>> {
    proptest::collection::vec((proptest::collection::vec(command(), 0..5), -1i32..4), 0..14).prop_map(
        |steps| {
            let mut t = 100.0;
            let mut out = Vec::new();
            for (cmds, dt) in steps {
                t += f64::from(dt) * 0.25;
                out.push(Record::Datagram {
                    received: t,
                    bytes: datagram(&cmds),
                });
            }
            out
        },
    )
}

/// A primitive's shape, style, entity name and its parents' names.
type Named = (Shape, Style, String, Vec<String>);

/// A log's frames with their primitives' entity names and those
/// entities' parents' names, to compare logs of different tables.
fn frames(log: &Log) -> Vec<(FrameTime, Vec<Named>)> {
    log.frames
        .iter()
        .map(|f| {
            let prims = log
                .frame_primitives(f)
                .iter()
                .map(|p| {
                    let parents = log
                        .entities
                        .parents(p.entity)
                        .iter()
                        .map(|&q| log.entities.name(q).to_owned())
                        .collect();
                    (
                        p.shape.clone(),
                        p.style,
                        log.entities.name(p.entity).to_owned(),
                        parents,
                    )
                })
                .collect();
            (f.time, prims)
        })
        .collect()
}

fn clock_of(records: &[Record]) -> Clock {
    if records.iter().any(|r| matches!(r, Record::SimTime { .. })) {
        Clock::Simulation {
            start: records.iter().find_map(|r| match r {
                Record::SimTime { time, .. } => Some(*time),
                Record::Datagram { .. } => None,
            }),
        }
    } else {
        Clock::Received
    }
}

fn feed(replay: &mut Replay<'_>, r: &Record) {
    match r {
        Record::SimTime { time, .. } => replay.feed_sim_time(*time),
        Record::Datagram { received, bytes } => {
            replay.feed_datagram(*received, bytes);
        }
    }
}

#[test]
fn a_swap_closes_what_a_set_showed_and_shows_its_back_buffer() {
    let c = |set: &str, x: f64| Command::Circle {
        center: [x, 0.0],
        radius: 1.0,
        thickness: 1.0,
        color: [255, 0, 0, 255],
        set: set.into(),
    };
    let swap = |p: &str| Command::Swap { prefix: p.into() };
    let mut r = Replay::new(Clock::Received, None);
    r.feed_datagram(10.0, &datagram(&[c("a.x", 1.0), c("b", 2.0), swap("a")]));
    assert!(r.take_closed().frames.is_empty());
    let now = r.showing(f64::INFINITY);
    assert_eq!(
        frames(&now),
        [(
            FrameTime::Persistent {
                start: 10.0,
                end: f64::INFINITY
            },
            vec![(
                Shape::Circle {
                    center: Vec2::new(1.0, 0.0),
                    radius: 1.0
                },
                Style {
                    thickness: 1.0,
                    ..Style::color(Rgba::from_rgba8(255, 0, 0, 255))
                },
                "a.x".to_owned(),
                vec!["a".to_owned()]
            )]
        )]
    );
    let g = r.generation();
    r.feed_datagram(11.0, &datagram(&[c("a.x", 3.0)]));
    assert_eq!(r.generation(), g, "a back buffer drawn into shows nothing new");
    r.feed_datagram(12.0, &datagram(&[swap("")]));
    let closed = r.take_closed();
    assert_eq!(closed.frames.len(), 1);
    assert_eq!(
        closed.frames[0].time,
        FrameTime::Persistent {
            start: 10.0,
            end: just_before(12.0)
        }
    );
    let now = frames(&r.showing(f64::INFINITY));
    let xs: Vec<(f64, String)> = now
        .iter()
        .flat_map(|(_, ps)| ps.iter())
        .map(|(s, _, e, _)| match s {
            Shape::Circle { center, .. } => (center.x, e.clone()),
            _ => (f64::NAN, e.clone()),
        })
        .collect();
    assert_eq!(xs, [(3.0, "a.x".to_owned()), (2.0, "b".to_owned())]);
}

#[test]
fn annotations_placed_as_a_live_monitor_grows_are_those_placed_at_once() {
    use crate::sim3d::monitor::{MonitorFormat, MonitorStream};
    let sample = crate::sim3d::monitor::tests::rsmp_sample();
    let messages: Vec<&[u8]> = crate::sexp::lines(sample.as_bytes())
        .map(|(_, _, t)| t)
        .filter(|t| !t.iter().all(u8::is_ascii_whitespace))
        .collect();
    let note = |text: &str| {
        datagram(&[Command::AgentAnnotation {
            agent: Agent {
                right: false,
                unum: 2,
            },
            text: text.into(),
            color: [1, 2, 3, 255],
        }])
    };
    // Live: messages at 10.0, 10.1, …; an annotation at 10.05, another
    // replacing it at 10.35.
    let mut live = Replay::new(Clock::Received, None).with_monitor(MonitorLog::new(MonitorFormat::Rsmp));
    let mut stream = MonitorStream::new();
    let mut closed = Vec::new();
    let mut t = 10.0;
    for (i, m) in messages.iter().enumerate() {
        let _ = stream.message(live.monitor_mut().unwrap(), m, Some(t));
        let g = live.generation();
        live.robots_moved();
        if i == 1 {
            assert!(live.generation() > g, "an annotation showing moved");
        }
        closed.extend(frames(&live.take_closed()));
        match i {
            0 => live.feed_datagram(t + 0.05, &note("first")),
            3 => live.feed_datagram(t + 0.05, &note("second")),
            _ => None,
        };
        closed.extend(frames(&live.take_closed()));
        // What shows now is one frame per annotation.
        assert!(live.showing(f64::INFINITY).frames.len() <= 1);
        t += 0.1;
    }
    let end = 20.0;
    closed.extend(frames(&live.showing(end)));
    // At once: the whole monitor log there from the start.
    let monitor = live.monitor_mut().unwrap().clone();
    assert_eq!(monitor.frames.len(), 3, "a message of the sample does not parse");
    let mut once = Replay::new(Clock::Received, Some(&monitor));
    once.feed_datagram(10.05, &note("first"));
    once.feed_datagram(10.35, &note("second"));
    let mut expected = frames(&once.take_closed());
    expected.extend(frames(&once.showing(end)));
    assert_eq!(closed, expected);
    let texts: Vec<String> = closed
        .iter()
        .flat_map(|(_, ps)| ps.iter())
        .map(|(s, ..)| match s {
            Shape::Text { text, .. } => text.to_string(),
            _ => String::new(),
        })
        .collect();
    // Each at the robot as the frame in effect when it came shows it,
    // then at each frame after it, until the next.
    assert_eq!(texts, ["first", "first", "first", "second"], "{closed:?}");
}

#[test]
fn new_set_names_and_floods_of_swaps_stay_within_the_limits() {
    let limits = Limits {
        max_entities: 50,
        max_primitives: 200,
    };
    let mut r = Replay::new(Clock::Received, None).with_limits(limits);
    for i in 0..2_000 {
        let mut cmds: Vec<Command> = (0..5)
            .map(|k| Command::Circle {
                center: [0.0, 0.0],
                radius: 1.0,
                thickness: 1.0,
                color: [1, 2, 3, 255],
                set: format!("s{i}.{k}"),
            })
            .collect();
        cmds.extend((0..50).map(|_| Command::Swap {
            prefix: format!("s{}", i / 2),
        }));
        r.feed_datagram(f64::from(i), &datagram(&cmds));
        let _ = r.take_closed();
        assert!(r.held <= limits.max_primitives);
        assert!(
            r.log.entities.len() <= limits.max_entities + 2,
            "{}",
            r.log.entities.len()
        );
        assert!(r.sets.len() <= limits.max_entities);
        assert!(r.active.len() <= limits.max_primitives);
    }
    assert!(r.dropped() > 9_000, "{}", r.dropped());
    assert_eq!(r.stats().swaps, 100_000);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..ProptestConfig::default()
    })]

    /// Fed record by record, the frames closed so far and those
    /// showing (ended at the last time seen) are the conversion's of
    /// the records so far, frame for frame.
    #[test]
    fn fed_record_by_record_it_gives_to_logs_frames(sim in any::<bool>(), recs in records()) {
        let mut recs = recs;
        if sim {
            // Monitor times between the datagrams.
            let mut with = Vec::new();
            for (i, r) in recs.into_iter().enumerate() {
                if i % 3 == 0 {
                    with.push(Record::SimTime { received: 0.0, time: i as f64 * 0.5 });
                }
                with.push(r);
            }
            recs = with;
        }
        let mut replay = Replay::new(clock_of(&recs), None);
        let mut closed = Vec::new();
        for (n, r) in recs.iter().enumerate() {
            feed(&mut replay, r);
            closed.extend(frames(&replay.take_closed()));
            let mut got = closed.clone();
            got.extend(frames(&replay.showing(replay.last_time())));
            let prefix = &recs[..=n];
            // The whole conversion of the same records, with the same
            // clock (a prefix's may lack the monitor times to come).
            let mut whole = Replay::new(clock_of(&recs), None);
            for r in prefix {
                feed(&mut whole, r);
            }
            let (log, _, _) = whole.finish();
            prop_assert_eq!(&got, &frames(&log));
            if clock_of(prefix) == clock_of(&recs) {
                prop_assert_eq!(&got, &frames(&to_log(prefix, None).0));
            }
        }
    }

    /// Garbage and damaged datagrams never panic a bounded replay;
    /// what it gives is drawable and within its limits.
    #[test]
    fn garbage_datagrams_never_panic(
        junk in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..6),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<proptest::sample::Index>(),
    ) {
        let limits = Limits { max_entities: 8, max_primitives: 16 };
        let mut r = Replay::new(Clock::Received, None).with_limits(limits);
        let mut good = datagram(&every_command());
        good.extend(datagram(&[Command::Swap { prefix: String::new() }]));
        for (i, v) in edits {
            let i = i.index(good.len());
            good[i] = v;
        }
        good.truncate(cut.index(good.len() + 1));
        let mut t = 1.0e9;
        for d in junk.iter().chain([&good, &good]) {
            t += 0.02;
            r.feed_datagram(t, d);
            for log in [r.take_closed(), r.showing(f64::INFINITY)] {
                for f in &log.frames {
                    prop_assert!(f.time.start() <= f.time.end());
                }
                for p in &log.primitives {
                    prop_assert!(crate::log::validate::drawable(p));
                }
            }
            prop_assert!(r.held <= limits.max_primitives);
        }
    }
}
