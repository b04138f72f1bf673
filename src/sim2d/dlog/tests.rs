use super::*;
use crate::sim2d::game::read_game;
use crate::sim2d::testdata::{fixture, shared};

fn opts(team: &str, unum: u8, side: Side) -> DebugLogOptions {
    DebugLogOptions {
        team: team.to_owned(),
        unum,
        side,
        step: 0.1,
    }
}

fn q9() -> DebugLogOptions {
    opts("HELIOS_Q", 9, Side::Right)
}

/// Frames in non-decreasing time order, ranges in bounds, numbers finite.
fn check_sane(log: &Log) {
    let mut last = f64::NEG_INFINITY;
    for f in &log.frames {
        let FrameTime::Instant(t) = f.time else {
            panic!("persistent frame");
        };
        assert!(
            t.is_finite() && t > last,
            "frame times must increase: {t} after {last}"
        );
        last = t;
        assert!(f.primitives.start < f.primitives.end && f.primitives.end <= log.primitives.len());
    }
    for p in &log.primitives {
        assert!(p.entity.index() < log.entities.len());
        assert!((SHAPE_LEVEL..=MESSAGE_LEVEL).contains(&p.level));
        let ok = match &p.shape {
            Shape::Circle { center, radius } => {
                center.x.is_finite() && center.y.is_finite() && *radius >= 0.0
            }
            Shape::Line { start, end } => [start.x, start.y, end.x, end.y].iter().all(|v| v.is_finite()),
            Shape::Sector {
                center,
                inner,
                outer,
                start,
                sweep,
            } => {
                [center.x, center.y, *start, *sweep].iter().all(|v| v.is_finite())
                    && 0.0 <= *inner
                    && inner <= outer
            }
            Shape::Text { anchor, .. } => anchor.x.is_finite() && anchor.y.is_finite(),
            Shape::Point { position, .. } => position.x.is_finite() && position.y.is_finite(),
            Shape::Polygon { vertices, .. } => vertices.iter().all(|v| v.x.is_finite() && v.y.is_finite()),
            Shape::Rectangle { center, size, .. } => {
                center.x.is_finite() && center.y.is_finite() && size.x >= 0.0 && size.y >= 0.0
            }
            Shape::Raised(r) => r.invalid().is_none(),
            Shape::Picture(_) | Shape::Cells(_) => false,
        };
        assert!(ok, "{p:?}");
    }
}

#[test]
fn every_line_type_is_drawn_in_the_world_frame() {
    let text = b"\
3,0 8 p 1 2 red
3,0 8 l 1 2 3 4 #00ff00
3,0 8 a 1 2 3 90 45
3,0 8 c 1 2 3
3,0 8 C 1 2 3 blue
3,0 8 t 0 0 1 0 0 1
3,0 8 T 0 0 1 0 0 1 #123456
3,0 8 r 1 2 4 2
3,0 8 R 1 2 4 2 yellow
3,0 8 s 1 2 1 3 0 90
3,0 8 S 1 2 1 3 0 90 cyan
3,0 8 m 1 2 (c #ff0000) hello there
3,0 8 m 1 2 6.43
3,0 8 M the plan: pass to 7
";
    for side in [Side::Left, Side::Right] {
        let d = read_debug(text, &opts("A", 9, side)).unwrap();
        let log = &d.log;
        check_sane(log);
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(log.frames.len(), 1);
        assert_eq!(log.frames[0].time, FrameTime::Instant(0.3));
        let s = if side == Side::Left { 1.0 } else { -1.0 };
        // own (x, y) → world (s·x, −s·y)
        let w = |x: f64, y: f64| Vec2::new(s * x, -s * y);
        let p: Vec<&Primitive> = log.primitives.iter().collect();
        assert_eq!(p.len(), 14);
        assert_eq!(
            p[0].shape,
            Shape::Point {
                position: w(1.0, 2.0),
                kind: MarkerKind::Cross,
                size: 0.0
            }
        );
        assert_eq!(p[0].style.color, Rgba::named("red").unwrap());
        assert_eq!(
            p[1].shape,
            Shape::Line {
                start: w(1.0, 2.0),
                end: w(3.0, 4.0)
            }
        );
        assert_eq!(p[1].style.color, Rgba::from_rgb(0x00ff00));
        let Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } = p[2].shape
        else {
            panic!("{:?}", p[2]);
        };
        assert_eq!((center, inner, outer), (w(1.0, 2.0), 3.0, 3.0));
        // 90° clockwise on screen is straight down the screen: world −y
        // for the left team, +y mirrored for the right.
        let dir = Vec2::new(start.cos(), start.sin());
        assert!((dir - Vec2::new(0.0, -s)).length() < 1e-12, "{dir:?}");
        assert!((sweep + 45f64.to_radians()).abs() < 1e-12);
        assert_eq!(p[3].style.fill, None);
        assert_eq!(p[4].style.fill, Some(Rgba::named("blue").unwrap()));
        assert_eq!(p[4].style.color, Rgba::named("blue").unwrap());
        assert_eq!(p[3].style.color, Rgba::WHITE);
        let Shape::Polygon { vertices, closed } = &p[5].shape else {
            panic!()
        };
        assert!(closed);
        assert_eq!(&vertices[..], &[w(0.0, 0.0), w(1.0, 0.0), w(0.0, 1.0)]);
        assert!(p[6].style.fill.is_some() && p[5].style.fill.is_none());
        assert_eq!(
            p[7].shape,
            Shape::Rectangle {
                center: w(3.0, 3.0),
                size: Vec2::new(4.0, 2.0),
                orientation: 0.0
            }
        );
        let Shape::Sector { inner, outer, .. } = p[9].shape else {
            panic!()
        };
        assert_eq!((inner, outer), (1.0, 3.0));
        assert!(p[10].style.fill.is_some());
        assert_eq!(
            p[11].shape,
            Shape::Text {
                anchor: w(1.0, 2.0),
                text: "hello there".into(),
                size: FIELD_TEXT_SIZE
            }
        );
        assert_eq!(p[11].style.color, Rgba::named("red").unwrap());
        assert_eq!(p[11].level, FIELD_TEXT_LEVEL);
        let Shape::Text { text, anchor, .. } = &p[12].shape else {
            panic!()
        };
        assert_eq!((&**text, *anchor), ("6.43", w(1.0, 2.0)));
        let Shape::Text { text, anchor, .. } = &p[13].shape else {
            panic!()
        };
        assert_eq!(&**text, "the plan: pass to 7");
        assert_eq!(anchor.x, s * -MESSAGE_COLUMN_X);
        assert_eq!(p[13].level, MESSAGE_LEVEL);
        assert!(p[..11].iter().all(|p| p.level == SHAPE_LEVEL));
        assert_eq!(d.messages.len(), 1);
        assert_eq!(d.messages[0].category, "action");
        assert_eq!(log.header.world_unit, "m");
        assert_eq!(log.header.time_unit, TimeUnit::RelativeSeconds);
        assert_eq!(log.header.hints.instant_threshold, Some(0.1));
        assert_eq!(log.header.hints.cycle, Some(0.1));
    }
}

#[test]
fn level_bits_name_entities_with_parents() {
    let text =
        b"1,0 8 c 0 0 1\n1,0 65544 c 0 0 1\n1,0 -1 M CYCLE\n1,0 -2147483648 c 0 0 1\n1,0 4194304 c 0 0 1\n";
    let log = read_debug_log(text, &opts("T", 3, Side::Left)).unwrap();
    let names: Vec<&str> = log
        .primitives
        .iter()
        .map(|p| log.entities.name(p.entity))
        .collect();
    assert_eq!(
        names,
        [
            "T/3/action",
            "T/3/action+team",
            "T/3/all",
            "T/3/training",
            "T/3/bit22"
        ]
    );
    let e = &log.entities;
    let parents =
        |n: &str| -> Vec<&str> { e.parents(e.get(n).unwrap()).iter().map(|&p| e.name(p)).collect() };
    assert_eq!(parents("T/3/action"), ["T/3", "action"]);
    assert_eq!(parents("T/3/action+team"), ["T/3/action", "T/3/team"]);
    assert_eq!(parents("T/3/team"), ["T/3", "team"]);
    assert_eq!(parents("T/3/all").len(), CATEGORIES.len() + 10);
}

#[test]
fn bad_lines_are_skipped_naming_their_line() {
    let text = b"1,0 8 c 0 0 1\nnonsense\n1,0 8 c 0 0 -1\n1,0 8 c 0 0\n1,0 8 c 0 0 1 nocolour\n1,0 8 Q 1\n2,0 8 l 0 0 1 1 red extra\n2,0 8 c 0 0 1\n";
    let log = read_debug_log(text, &opts("T", 3, Side::Left)).unwrap();
    assert_eq!(log.primitives.len(), 2);
    assert_eq!(log.frames.len(), 2);
    let lines: Vec<&str> = log
        .warnings
        .iter()
        .map(|w| w.message.split(':').next().unwrap())
        .collect();
    assert_eq!(
        lines,
        ["line 2", "line 3", "line 4", "line 5", "line 6", "line 7"]
    );
    assert!(matches!(
        read_debug_log(b"hello\nworld\n", &opts("T", 3, Side::Left)),
        Err(DebugLogError::NotADebugLog { line: 1, .. })
    ));
    assert!(matches!(
        read_debug_log(b"\n\n", &opts("T", 3, Side::Left)),
        Err(DebugLogError::Empty)
    ));
}

#[test]
fn agents_and_sniffing() {
    let name = |s: &str| agent_from_file_name(Path::new(s));
    assert_eq!(name("x/HELIOS_A-9.log.gz"), Some(("HELIOS_A".to_owned(), 9)));
    assert_eq!(name("HELIOS_Q-11.log"), Some(("HELIOS_Q".to_owned(), 11)));
    assert_eq!(name("my-team-coach.log"), Some(("my-team".to_owned(), 0)));
    assert_eq!(name("HELIOS_Q-9.dcl.gz"), Some(("HELIOS_Q".to_owned(), 9)));
    assert_eq!(name("HELIOS_Q.log"), None);
    assert_eq!(name("-9.log"), None);
    assert!(sniff(b"0,0 1 M ---- send"));
    assert!(sniff(b"12,0 256 l 1 2 3 4 red\n"));
    assert!(sniff(b"0,0 -1 M"));
    for bad in [&b"ULG5\n"[..], b"0,0 1 X text", b"0 1 M text", b"%% step 0", b""] {
        assert!(!sniff(bad), "{:?}", String::from_utf8_lossy(bad));
    }
    assert!(sniff(&fixture("HELIOS_Q-9.log.gz")[..64]));
}

/// The right-side agent's drawings land where the game log has it: its
/// lines from itself start at its true position, on the right half.
#[test]
fn right_agent_is_mirrored_onto_the_game() {
    let game = read_game(&fixture("match4.rcg.gz")).unwrap();
    let bytes = fixture("HELIOS_Q-9.log.gz");
    let d = read_debug(&bytes, &q9()).unwrap();
    let log = &d.log;
    check_sane(log);
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let team = log.entities.get("HELIOS_Q/9/team").unwrap();
    let mut checked = 0;
    for f in &log.frames {
        let FrameTime::Instant(t) = f.time else {
            unreachable!()
        };
        let Some(i) = game.record_at(t) else { continue };
        let r = &game.records[i];
        if (r.clock(0.1) - t).abs() > 1e-9 {
            continue;
        }
        let me = r.player(Side::Right, 9).unwrap();
        let truth = Vec2::new(me.pos[0], -me.pos[1]);
        // The blue team-level line from the agent to its target.
        for p in log.frame_primitives(f) {
            if let (Shape::Line { start, .. }, true) = (&p.shape, p.entity == team) {
                if p.style.color != Rgba::from_rgb(0x0000ff) {
                    continue;
                }
                assert!((*start - truth).length() < 1.5, "t {t}: {start:?} vs {truth:?}");
                assert!(start.x > 0.0);
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "{checked}");
}

/// Debug times: the restart at kick-off keeps file order, the goal's
/// stoppage maps onto the game log's repeated records.
#[test]
fn debug_times_follow_the_game_log() {
    let bytes = fixture("HELIOS_Q-9.log.gz");
    let d = read_debug(&bytes, &q9()).unwrap();
    let times: Vec<f64> = d.log.frames.iter().map(|f| f.time.start()).collect();
    let at = |c: u32, s: u32| times.iter().any(|&t| (t - clock(c, s, 0.1)).abs() < 1e-12);
    // Before kick-off: 0,0 … 0,34 (0,1 merged into 0,0), then the second 0,0 → 0,34.
    assert!(at(0, 0) && at(0, 33) && at(0, 34) && !at(0, 35));
    assert!(at(1, 0));
    // Half time: 150,0 … 150,19 → 150,0 … 150,18, and the second 150,0 → 150,19.
    assert!(at(150, 18) && at(150, 19) && !at(150, 20));
    // The goal: 274,0 … 274,51 → the records 274,0 … 274,50.
    let game = read_game(&fixture("match4.rcg.gz")).unwrap();
    for r in game.records.iter().filter(|r| r.cycle == 274) {
        assert!(at(274, r.stopped), "{}", r.stopped);
    }
    assert!(!at(274, 51));
    // Messages are data too, one per M line, in order.
    let m_lines = bytes
        .split(|&b| b == b'\n')
        .filter(|l| l.split(|&b| b == b' ').nth(2) == Some(b"M"))
        .count();
    assert_eq!(d.messages.len(), m_lines);
    assert!(d.messages.windows(2).all(|w| w[0].clock <= w[1].clock));
    assert_eq!(d.messages[0].text, "---- send[(ear (off opp))(clang (ver 7 8))]");
    assert_eq!(d.messages[0].category, "system");
}

#[test]
fn left_agents_logs_read_cleanly() {
    for (name, team, unum) in [
        ("HELIOS_P-10.log.gz", "HELIOS_P", 10),
        ("HELIOS_A-9.log.gz", "HELIOS_A", 9),
    ] {
        let d = read_debug(&fixture(name), &opts(team, unum, Side::Left)).unwrap();
        check_sane(&d.log);
        assert!(d.log.warnings.is_empty(), "{name}: {:?}", d.log.warnings);
        assert!(!d.messages.is_empty());
    }
}

/// The whole shared debug logs load without a warning.
#[test]
fn shared_debug_logs_read_whole() {
    for (name, team, unum, side) in [
        ("match4_dlog/HELIOS_Q-9.log.gz", "HELIOS_Q", 9, Side::Right),
        ("match4_dlog/HELIOS_P-10.log.gz", "HELIOS_P", 10, Side::Left),
        ("match2_dlog/HELIOS_A-9.log.gz", "HELIOS_A", 9, Side::Left),
    ] {
        let Some(bytes) = shared(name) else {
            return;
        };
        let d = read_debug(&bytes, &opts(team, unum, side)).unwrap();
        check_sane(&d.log);
        assert!(
            d.log.warnings.is_empty(),
            "{name}: {:?}",
            &d.log.warnings[..3.min(d.log.warnings.len())]
        );
        let lines = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        assert_eq!(d.log.primitives.len(), lines, "{name}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Mutated, cut and noisy debug logs load or fail cleanly.
    #[test]
    fn mutated_debug_logs_never_panic(
        edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                           proptest::sample::select(b"0123456789.,- \nMplacCtTrRsSm#(c)e".to_vec())), 0..16),
        start in proptest::prelude::any::<proptest::sample::Index>(),
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100),
        right in proptest::prelude::any::<bool>(),
    ) {
        thread_local! {
            static BYTES: Vec<u8> = {
                let b = fixture("HELIOS_Q-9.log.gz");
                b[b.len() - 60_000..].to_vec()
            };
        }
        let mut b = BYTES.with(|b| {
            let s = start.index(b.len() - 8000);
            b[s..s + 8000].to_vec()
        });
        for (i, v) in edits {
            let i = i.index(b.len());
            b[i] = v;
        }
        b.extend_from_slice(&noise);
        let side = if right { Side::Right } else { Side::Left };
        if let Ok(log) = read_debug_log(&b, &opts("T", 1, side)) {
            check_sane(&log);
        }
    }

    #[test]
    fn random_debug_logs_never_panic(body in proptest::collection::vec(
        proptest::sample::select(b"0123456789.,- \n\tMplacCtTrRsSm#(c)efx\xff".to_vec()), 0..2000)) {
        if let Ok(log) = read_debug_log(&body, &opts("T", 1, Side::Right)) {
            check_sane(&log);
        }
    }
}
