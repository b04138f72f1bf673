use prost::Message as _;

use super::*;
use crate::log::wire::{I32, VARINT, put_key, put_len, put_varint};
use crate::ssl::file::write::LogWriter;
use crate::ssl::packets::{BallSeen, RobotSeen};
use crate::ssl::wire as pb;

const T0: f64 = 1_700_000_000.0;

fn ns(t: f64) -> i64 {
    ((T0 + t) * 1e9).round() as i64
}

fn cam(id: u32, robots: &[(Team, u32, f64, f64, f64, f64)], balls: &[(f64, f64, f64)]) -> Vec<u8> {
    Vision {
        detection: Some(CameraFrame {
            camera_id: id,
            frame_number: 0,
            t_capture: 0.0,
            t_sent: 0.0,
            balls: balls
                .iter()
                .map(|&(x, y, c)| BallSeen {
                    pos: Vec2::new(x, y),
                    z: None,
                    confidence: c,
                })
                .collect(),
            robots: robots
                .iter()
                .map(|&(team, id, x, y, a, c)| RobotSeen {
                    team,
                    id: Some(id),
                    pos: Vec2::new(x, y),
                    orientation: Some(a),
                    confidence: c,
                })
                .collect(),
        }),
        geometry: None,
    }
    .encode()
}

fn load(records: &[(f64, MessageType, Vec<u8>)]) -> Log {
    let mut w = LogWriter::new(Vec::new()).unwrap();
    for (t, kind, payload) in records {
        w.record(ns(*t), *kind, payload).unwrap();
    }
    read(&w.finish().unwrap()[..], false).unwrap()
}

fn instants(log: &Log) -> Vec<(f64, &[Primitive])> {
    log.frames
        .iter()
        .filter_map(|f| match f.time {
            FrameTime::Instant(t) => Some((t - T0, log.frame_primitives(f))),
            _ => None,
        })
        .collect()
}

fn circles_of(log: &Log, prims: &[Primitive], entity: &str) -> Vec<Vec2> {
    prims
        .iter()
        .filter(|p| log.entities.name(p.entity) == entity && p.level == 0)
        .filter_map(|p| match p.shape {
            Shape::Circle { center, .. } => Some(center),
            _ => None,
        })
        .collect()
}

#[test]
fn one_tick_per_camera_cycle_with_every_cameras_robots() {
    let mut recs = Vec::new();
    for k in 0..10 {
        let t = k as f64 / 60.0;
        let x = 100.0 * k as f64;
        recs.push((
            t,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, x, 0.0, 0.0, 1.0)], &[]),
        ));
        recs.push((
            t + 0.001,
            MessageType::Vision,
            cam(1, &[(Team::Yellow, 4, -x, 0.0, 0.0, 1.0)], &[]),
        ));
    }
    let log = load(&recs);
    let ticks = instants(&log);
    assert_eq!(ticks.len(), 10);
    for (k, (t, prims)) in ticks.iter().enumerate() {
        assert!((t - (k as f64 / 60.0 + 0.001)).abs() < 1e-6, "tick {k} at {t}");
        let x = 100.0 * k as f64;
        assert_eq!(circles_of(&log, prims, "robots/blue/1"), [Vec2::new(x, 0.0)]);
        assert_eq!(circles_of(&log, prims, "robots/yellow/4"), [Vec2::new(-x, 0.0)]);
        // Both cameras' raw detections, at level 3.
        assert_eq!(prims.iter().filter(|p| p.level == 3).count(), 2);
    }
}

/// Live, a cycle's tick is handed out as soon as every camera still
/// heard has sent in it, not a camera cycle later when one sends again.
#[test]
fn a_complete_cycle_is_drawn_at_once() {
    let mut c = Converter::received();
    let mut ended_after = Vec::new();
    for k in 0..5 {
        let t = 100.0 + k as f64 / 60.0;
        for id in 0..2 {
            let robot = [(Team::Blue, id, 10.0 * k as f64, 0.0, 0.0, 1.0)];
            c.packet(
                MessageType::Vision,
                t + 0.001 * f64::from(id),
                &cam(id, &robot, &[]),
            )
            .unwrap();
        }
        let ended = c.take_ended();
        ended_after.push(instants(&ended).iter().map(|(t, _)| *t).collect::<Vec<f64>>());
    }
    // The first cycle's cameras are known only when one sends again: its
    // tick comes with the second cycle's, and from then on each cycle's
    // tick comes with its last packet, one cycle (1/60 s) after the last.
    let counts: Vec<usize> = ended_after.iter().map(Vec::len).collect();
    assert_eq!(counts, [0, 2, 1, 1, 1], "{ended_after:?}");
    let times: Vec<f64> = ended_after.concat();
    for w in times.windows(2) {
        assert!((w[1] - w[0] - 1.0 / 60.0).abs() < 1e-6, "{times:?}");
    }
}

#[test]
fn a_silent_camera_is_dropped_after_a_while() {
    let mut recs = Vec::new();
    for k in 0..30 {
        let t = k as f64 / 60.0;
        recs.push((
            t,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, 0.0, 0.0, 0.0, 1.0)], &[]),
        ));
        if k < 5 {
            recs.push((
                t,
                MessageType::Vision,
                cam(1, &[(Team::Blue, 2, 0.0, 0.0, 0.0, 1.0)], &[]),
            ));
        }
    }
    let log = load(&recs);
    let ticks = instants(&log);
    let with_two = |(_, prims): &(f64, &[Primitive])| circles_of(&log, prims, "robots/blue/2").len();
    assert_eq!(with_two(&ticks[3]), 1);
    let last_seen = ticks.iter().rposition(|t| with_two(t) == 1).unwrap();
    let gone_after = ticks[last_seen].0 - 4.0 / 60.0;
    assert!(
        gone_after <= STALE + 1e-9 && gone_after > STALE - 1.0 / 60.0,
        "{gone_after}"
    );
}

fn tracker(uuid: &str, robots: &[(u32, f64, f64)], ball: (f64, f64)) -> Vec<u8> {
    pb::TrackerWrapperPacket {
        uuid: Some(uuid.to_owned()),
        source_name: Some(format!("tracker {uuid}")),
        tracked_frame: Some(pb::TrackedWorld {
            frame_number: Some(1),
            timestamp: Some(T0),
            balls: vec![pb::TrackedBallState {
                pos: Some(pb::Point3 {
                    x: Some(ball.0 as f32),
                    y: Some(ball.1 as f32),
                    z: Some(0.0),
                }),
                vel: None,
                visibility: Some(1.0),
            }],
            robots: robots
                .iter()
                .map(|&(id, x, y)| pb::TrackedRobotState {
                    robot_id: Some(pb::RobotKey {
                        id: Some(id),
                        team: Some(2),
                    }),
                    pos: Some(pb::Point2 {
                        x: Some(x as f32),
                        y: Some(y as f32),
                    }),
                    orientation: Some(0.5),
                    vel: Some(pb::Point2 {
                        x: Some(1.0),
                        y: Some(0.0),
                    }),
                    vel_angular: None,
                    visibility: None,
                })
                .collect(),
        }),
    }
    .encode_to_vec()
}

/// A second of camera 0 at 60 Hz (blue 1 at the centre, a ball), with
/// tracker a's packets (blue 1 at (1, 2) m) 2 ms after the frames
/// numbered in `tracked`.
fn camera_and_tracker(tracked: std::ops::Range<i32>) -> Vec<(f64, MessageType, Vec<u8>)> {
    let mut recs = Vec::new();
    for k in 0..60 {
        let t = f64::from(k) / 60.0;
        recs.push((
            t,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, 0.0, 0.0, 0.0, 1.0)], &[(5.0, 5.0, 1.0)]),
        ));
        if tracked.contains(&k) {
            recs.push((
                t + 0.002,
                MessageType::Tracker,
                tracker("a", &[(1, 1.0, 2.0)], (0.5, 0.25)),
            ));
        }
    }
    recs
}

#[test]
fn the_tracker_is_drawn_when_it_sends() {
    let mut recs = camera_and_tracker(30..60);
    // Tracker b, 1 ms after each of a's packets, is ignored.
    for k in 30..60 {
        recs.push((
            f64::from(k) / 60.0 + 0.003,
            MessageType::Tracker,
            tracker("b", &[(1, 9.0, 9.0)], (9.0, 9.0)),
        ));
    }
    recs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let log = load(&recs);
    let ticks = instants(&log);
    let (early, late): (Vec<_>, Vec<_>) = ticks.iter().partition(|(t, _)| *t < 0.501);
    // Camera ticks up to the tracker's first packet (the camera's cycle
    // complete at each of its packets: the last at 0.5 s), then one per
    // packet of tracker a.
    assert_eq!(
        early.len(),
        31,
        "{:?}",
        ticks.iter().map(|t| t.0).collect::<Vec<_>>()
    );
    assert_eq!(late.len(), 30);
    for (_, prims) in &early {
        assert_eq!(circles_of(&log, prims, "robots/blue/1"), [Vec2::ZERO]);
    }
    for (t, prims) in &late {
        assert!(((t * 60.0) - (t * 60.0).round() - 0.12).abs() < 0.01, "{t}");
        let robot = circles_of(&log, prims, "robots/blue/1");
        assert_eq!(robot.len(), 1);
        assert!(
            (robot[0] - Vec2::new(1000.0, 2000.0)).length() < 1e-3,
            "{robot:?}"
        );
        let ball = circles_of(&log, prims, "ball");
        assert!((ball[0] - Vec2::new(500.0, 250.0)).length() < 1e-3, "{ball:?}");
        // The velocity arrow.
        assert!(
            prims
                .iter()
                .any(|p| p.level == 1 && matches!(p.shape, Shape::Line { .. }))
        );
    }
    assert!(
        log.warnings
            .iter()
            .any(|w| w.message.contains("tracker b (b) ignored")),
        "{:?}",
        log.warnings
    );
}

/// Regression: once a camera sends [`STALE`] after the tracker's last
/// packet, the tracker has stopped, and the camera cycle pending since
/// is drawn from the cameras — it showed the tracker's world of 85 ms
/// before, a second time, at the cycle's time.
#[test]
fn the_cameras_come_back_when_the_tracker_falls_silent() {
    let log = load(&camera_and_tracker(10..30));
    let ticks = instants(&log);
    let last_tracked = 29.0 / 60.0 + 0.002;
    let mut tracked = 0;
    for (t, prims) in &ticks {
        let robot = circles_of(&log, prims, "robots/blue/1");
        if robot == [Vec2::new(1000.0, 2000.0)] {
            assert!(*t <= last_tracked + 1e-6, "the tracker's world drawn at {t}");
            tracked += 1;
        } else {
            assert_eq!(robot, [Vec2::ZERO], "at {t}");
        }
    }
    assert_eq!(tracked, 20);
    // The cameras' ticks come back once the tracker is a camera cycle
    // short of STALE silent, at the cycle's time.
    let back = ticks.iter().find(|(t, _)| *t > last_tracked + 1e-6).unwrap().0;
    assert!(
        back > last_tracked + STALE - 2.0 / 60.0 && back <= last_tracked + STALE,
        "{back}"
    );
}

fn ball_left_event(id: &str, x: f32, y: f32) -> Vec<u8> {
    let mut point = Vec::new();
    for (f, v) in [(1, x), (2, y)] {
        put_key(&mut point, f, I32);
        point.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    let mut body = Vec::new();
    put_key(&mut body, 1, VARINT);
    put_varint(&mut body, 1);
    put_len(&mut body, 3, point.len());
    body.extend_from_slice(&point);
    let mut e = Vec::new();
    put_key(&mut e, 40, VARINT);
    put_varint(&mut e, 6);
    put_len(&mut e, 50, id.len());
    e.extend_from_slice(id.as_bytes());
    put_len(&mut e, 6, body.len());
    e.extend_from_slice(&body);
    e
}

fn referee(command: i32, score_blue: u32, events: Vec<Vec<u8>>, designated: Option<(f32, f32)>) -> Vec<u8> {
    let team = |name: &str, score| pb::TeamState {
        name: Some(name.to_owned()),
        score: Some(score),
        ..Default::default()
    };
    pb::RefereeState {
        packet_timestamp: Some(1),
        stage: Some(1),
        stage_time_left: Some(100_000_000),
        command: Some(command),
        command_counter: Some(1),
        command_timestamp: Some(1),
        yellow: Some(team("Y", 0)),
        blue: Some(team("B", score_blue)),
        designated_position: designated.map(|(x, y)| pb::Point2 {
            x: Some(x),
            y: Some(y),
        }),
        next_command: None,
        game_events: events,
        ..Default::default()
    }
    .encode_to_vec()
}

fn persistent(log: &Log, entity: &str) -> Vec<(f64, f64, Vec<Primitive>)> {
    log.frames
        .iter()
        .filter_map(|f| match f.time {
            FrameTime::Persistent { start, end } => {
                let prims = log.frame_primitives(f);
                prims
                    .iter()
                    .any(|p| log.entities.name(p.entity) == entity)
                    .then(|| (start - T0, end - T0, prims.to_vec()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn referee_states_and_game_events_are_persistent_frames() {
    let ev = ball_left_event("e1", 2.126, 2.8);
    let mut recs = Vec::new();
    for k in 0..40 {
        let t = k as f64 * 0.1;
        let r = match k {
            0..10 => referee(0, 0, vec![], None),
            10..30 => referee(1, 0, vec![ev.clone()], Some((2126.0, 2800.0))),
            _ => referee(9, 1, vec![], Some((2126.0, 2800.0))),
        };
        recs.push((t, MessageType::Referee, r));
    }
    let log = load(&recs);
    let commands = persistent(&log, "referee/command");
    let spans: Vec<(f64, f64)> = commands.iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert!(
        (spans[0].0).abs() < 1e-6 && (spans[0].1 - 1.0).abs() < 1e-5,
        "{spans:?}"
    );
    assert!((spans[1].0 - 1.0).abs() < 1e-6 && (spans[2].0 - 3.0).abs() < 1e-6);
    assert!(spans[2].1 >= 3.9, "{spans:?}");
    let texts = |prims: &[Primitive]| -> Vec<String> {
        prims
            .iter()
            .filter_map(|p| match &p.shape {
                Shape::Text { text, .. } => Some(text.to_string()),
                _ => None,
            })
            .collect()
    };
    assert!(
        texts(&commands[1].2).contains(&"STOP · first half".to_owned()),
        "{:?}",
        texts(&commands[1].2)
    );
    assert!(
        texts(&commands[2].2).contains(&"0 : 1".to_owned())
            || texts(&commands[2].2).contains(&"1 : 0".to_owned())
    );
    // The designated position shows from the STOP before the free kick on.
    let designated = persistent(&log, "referee/designated_position");
    assert_eq!(designated.len(), 2);
    let events = persistent(&log, "referee/events/ball_left_field_touch_line");
    assert_eq!(events.len(), 1);
    let (start, end, prims) = &events[0];
    assert!(
        (start - 1.0).abs() < 1e-6 && (end - 3.0).abs() < 1e-6,
        "{start} {end}"
    );
    let ring = prims.iter().find_map(|p| match p.shape {
        Shape::Circle { center, .. } => Some(center),
        _ => None,
    });
    assert!((ring.unwrap() - Vec2::new(2126.0, 2800.0)).length() < 0.5);
    assert!(
        texts(prims)
            .iter()
            .any(|t| t == "ball left the field over the touch line: yellow")
    );
}

#[test]
fn the_field_comes_first_and_lasts() {
    let geometry = Vision {
        detection: None,
        geometry: Some(crate::ssl::packets::Geometry {
            field: FieldGeometry {
                length: 9000.0,
                width: 6000.0,
                goal_width: 1000.0,
                goal_depth: 180.0,
                boundary: 300.0,
                penalty_area_depth: Some(1000.0),
                penalty_area_width: Some(2000.0),
                center_circle_radius: Some(500.0),
                line_thickness: Some(10.0),
                ball_radius: None,
                max_robot_radius: Some(90.0),
                lines: Vec::new(),
                arcs: Vec::new(),
            },
            cameras: Vec::new(),
        }),
    };
    let recs = [
        (
            0.0,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, 0.0, 0.0, 0.0, 1.0)], &[]),
        ),
        (0.5, MessageType::Vision, geometry.encode()),
        (
            1.0,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, 0.0, 0.0, 0.0, 1.0)], &[]),
        ),
    ];
    let log = load(&recs);
    let first = &log.frames[0];
    assert_eq!(
        first.time,
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY
        }
    );
    let field = log.frame_primitives(first);
    // Sizes only: touch, goal, halfway and centre lines, 2 × 3 penalty
    // area lines, the centre circle, two goals.
    assert_eq!(field.len(), 6 + 6 + 1 + 2, "{field:?}");
    assert!(
        field
            .iter()
            .all(|p| log.entities.name(p.entity) == "field" && p.level == 2)
    );
    assert_eq!(
        log.header.hints.world_bounds,
        Some((Vec2::new(-4800.0, -3300.0), Vec2::new(4800.0, 3300.0)))
    );
}

#[test]
fn undecodable_packets_are_skipped_with_a_warning() {
    let recs = [
        (
            0.0,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, 0.0, 0.0, 0.0, 1.0)], &[]),
        ),
        (0.1, MessageType::Vision, vec![0x0a, 0xff, 0xff]),
        (0.2, MessageType::Referee, vec![0x0a]),
        (
            0.3,
            MessageType::Vision,
            cam(0, &[(Team::Blue, 1, 0.0, 0.0, 0.0, 1.0)], &[]),
        ),
    ];
    let log = load(&recs);
    assert_eq!(instants(&log).len(), 2);
    assert_eq!(log.warnings.len(), 2, "{:?}", log.warnings);
    assert!(
        log.warnings[0].message.contains("vision packet (record 1)"),
        "{:?}",
        log.warnings
    );
    assert_eq!(log.warnings[0].offset, Some(16 + 16 + recs[0].2.len() as u64));
}

#[test]
fn crafted_times_do_not_multiply_drawings() {
    let many: Vec<(Team, u32, f64, f64, f64, f64)> = (0..100)
        .map(|i| (Team::Blue, i, i as f64, 0.0, 0.0, 1.0))
        .collect();
    let mut recs = vec![(0.0, MessageType::Vision, cam(0, &many, &[]))];
    // A thousand tracker packets within a millisecond, the ball moving.
    for k in 0..1000 {
        let x = k as f64 * 0.01;
        recs.push((
            k as f64 * 1e-6,
            MessageType::Tracker,
            tracker("a", &[(1, 0.0, 0.0)], (x, 0.0)),
        ));
    }
    // And more cameras than are followed at once.
    for id in 1..100 {
        recs.push((
            0.001,
            MessageType::Vision,
            cam(id, &[(Team::Yellow, 1, 0.0, 0.0, 0.0, 1.0)], &[]),
        ));
    }
    let log = load(&recs);
    let raw = log.primitives.iter().filter(|p| p.level == 3).count();
    assert!(raw <= 100 * MAX_USES as usize + 64 * MAX_USES as usize, "{raw}");
    let longest_trail = log
        .primitives
        .iter()
        .filter_map(|p| match &p.shape {
            Shape::Polygon { vertices, .. } => Some(vertices.len()),
            _ => None,
        })
        .max();
    assert_eq!(longest_trail, Some(MAX_TRAIL_POINTS));
    assert!(
        log.warnings
            .iter()
            .any(|w| w.message.contains("more than 64 cameras")),
        "{:?}",
        log.warnings
    );
}
