use super::*;
use crate::sim2d::Side;
use crate::sim2d::testdata::{fixture, shared};

fn load(name: &str) -> Game {
    read_game(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every number of the model is finite and every index in range.
fn check_sane(g: &Game) {
    let step = g.server.simulator_step;
    assert!(step.is_finite() && step > 0.0);
    let mut last: Option<&ShowRecord> = None;
    for r in &g.records {
        match last {
            Some(l) if l.cycle == r.cycle => assert_eq!(r.stopped, l.stopped + 1),
            Some(l) if l.cycle > r.cycle => assert!(
                g.warnings.len() > crate::sim2d::MAX_WARNINGS
                    || g.warnings.iter().any(|w| w.message.contains("before"))
            ),
            _ => assert_eq!(r.stopped, 0),
        }
        last = Some(r);
        assert!(r.ball.pos.iter().chain(&r.ball.vel).all(|v| v.is_finite()));
        for p in &r.players {
            assert!(
                p.pos
                    .iter()
                    .chain(&p.vel)
                    .chain([&p.body, &p.neck])
                    .all(|v| v.is_finite())
            );
            assert!(p.counts.len() <= COUNT_NAMES.len());
        }
    }
    for m in &g.messages {
        assert!(m.follows.is_none_or(|i| i < g.records.len()));
    }
    assert!(g.warnings.len() <= crate::sim2d::MAX_WARNINGS + 1);
}

#[test]
fn text_v4_fixture_reads_whole() {
    let g = load("match_v4.rcg.gz");
    check_sane(&g);
    assert_eq!(g.version, Version::Text4);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    assert_eq!(g.teams, ["HELIOS_V4L".to_owned(), "HELIOS_V4R".to_owned()]);
    assert_eq!(g.player_types.len(), 18);
    assert_eq!(g.player_types[3].id, 3);
    assert!((g.server.simulator_step - 0.1).abs() < 1e-12);
    assert_eq!(g.server.half_time_cycles, 100);
    assert_eq!(g.server.goal_width, 14.02);
    assert_eq!(g.server.visible_distance, 3.0);
    assert!(
        g.server
            .raw
            .iter()
            .any(|(k, v)| k == "game_log_dir" && v == "/tmp/sim2d/runs/match_v4")
    );
    // Lines 24–141: shows 1–119 but 100 (half time has no show line).
    assert_eq!(g.records.len(), 118);
    assert_eq!(g.records[0].cycle, 1);
    assert_eq!(g.records[0].play_mode.name(), "kick_off_l");
    assert_eq!(g.records[30].play_mode, PlayMode::PLAY_ON);
    assert!(g.records.iter().all(|r| r.stopped == 0 && r.players.len() == 22));
    let first = &g.records[0];
    let goalie = first.player(Side::Left, 1).unwrap();
    assert!(goalie.is_goalie());
    assert_eq!(goalie.pos, [-49.1874, -0.0264]);
    assert_eq!(goalie.view, Some((ViewQuality::High, 120.0)));
    assert_eq!(goalie.counts.len(), 11);
    assert_eq!(goalie.stamina.unwrap().capacity, None);
    assert_eq!(first.player(Side::Left, 2).unwrap().focus, Some((Side::Left, 1)));
}

#[test]
fn text_v5_keeps_messages_and_counts_team_graphics() {
    let g = load("match2.rcg.gz");
    check_sane(&g);
    assert_eq!(g.version, Version::Text5);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    assert_eq!(g.team_graphics, 92);
    assert!(g.messages.is_empty());
    assert_eq!(g.records.len(), 64);
    let p = g.records[0].player(Side::Right, 9).unwrap();
    assert!(p.stamina.unwrap().capacity.is_some());
    assert_eq!(p.counts.len(), 11);
}

#[test]
fn text_v6_counts_stoppage_repeats_and_applies_modes_and_scores() {
    let g = load("match4.rcg.gz");
    check_sane(&g);
    assert_eq!(g.version, Version::Text6);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    assert_eq!(g.teams, ["HELIOS_P".to_owned(), "HELIOS_Q".to_owned()]);
    // Shows 1–36, then 271–282 with 274 repeated 51 times (the goal).
    assert_eq!(g.records.len(), 36 + 11 + 51);
    let goal: Vec<&ShowRecord> = g.records.iter().filter(|r| r.cycle == 274).collect();
    assert_eq!(goal.len(), 51);
    for (k, r) in goal.iter().enumerate() {
        assert_eq!(r.stopped, k as u32);
        assert_eq!(r.play_mode.name(), "goal_r");
        assert_eq!(r.score, [0, 1]);
    }
    let before = g.records.iter().find(|r| r.cycle == 273).unwrap();
    assert_eq!((before.play_mode, before.score), (PlayMode::PLAY_ON, [0, 0]));
    let after = g.records.iter().find(|r| r.cycle == 275).unwrap();
    assert_eq!((after.play_mode.name(), after.stopped), ("kick_off_l", 0));
    // Every stoppage step its own time, and 274,50 before 275.
    let step = g.server.simulator_step;
    assert!(goal[50].clock(step) < after.clock(step));
    assert!(goal[1].clock(step) > goal[0].clock(step));
    assert_eq!(
        g.record_at(goal[7].clock(step)),
        g.records.iter().position(|r| r == goal[7])
    );
    // v6: the focus point and 12 counts.
    let p = g.records[0].player(Side::Left, 2).unwrap();
    assert_eq!(p.focus_point, Some([0.0, 0.0]));
    assert_eq!(p.counts.len(), 12);
}

#[test]
fn binary_v3_reads_structs_in_network_order() {
    let g = load("match_v3.rcg.gz");
    check_sane(&g);
    assert_eq!(g.version, Version::Binary3);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    assert_eq!(g.teams, ["HELIOS_V3L".to_owned(), "HELIOS_V3R".to_owned()]);
    assert_eq!(g.player_types.len(), 18);
    assert!((g.server.goal_width - 14.02).abs() < 1e-4);
    assert!((g.server.simulator_step - 0.1).abs() < 1e-12);
    assert!((g.server.visible_distance - 3.0).abs() < 1e-4);
    assert!((g.server.tackle_width - 1.25).abs() < 1e-4);
    assert!((g.player_types[0].kickable_margin - 0.7).abs() < 1e-4);
    assert_eq!(g.records.len(), 120);
    assert_eq!(g.records[0].cycle, 1);
    assert_eq!(g.records[0].play_mode.name(), "kick_off_l");
    for r in &g.records {
        assert_eq!(r.players.len(), 22);
        for p in &r.players {
            assert!(p.pos[0].abs() < 60.0 && p.pos[1].abs() < 40.0, "{p:?}");
            let w = p.view.unwrap().1;
            assert!([60.0, 120.0, 180.0].iter().any(|v| (w - v).abs() < 1e-3), "{w}");
            assert_eq!(p.is_goalie(), p.unum == 1, "{p:?}");
        }
    }
    let g1 = g.records[0].player(Side::Left, 1).unwrap();
    assert!(g1.pos[0] < -45.0);
    let r1 = g.records[0].player(Side::Right, 1).unwrap();
    assert!(r1.pos[0] > 45.0);
}

#[test]
fn json_reads_elements_by_kind() {
    let g = load("match3.rcg.gz");
    check_sane(&g);
    assert_eq!(g.version, Version::Json);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    assert_eq!(g.teams, ["HELIOS_X".to_owned(), "HELIOS_Y".to_owned()]);
    assert_eq!(g.player_types.len(), 18);
    assert_eq!(g.player_types[14].team_far_length, 125.096);
    assert_eq!(g.records.len(), 103);
    assert_eq!(g.records[0].play_mode.name(), "kick_off_l");
    let p = g.records[0].player(Side::Left, 2).unwrap();
    assert_eq!((p.player_type, p.state, p.pos), (1, 1, [-25.0, -5.0]));
    assert_eq!(p.focus, Some((Side::Left, 1)));
    assert_eq!(p.counts.len(), 12);
    assert_eq!(p.stamina.unwrap().capacity, Some(130600.0));
}

#[test]
fn garbage_after_messages_loads_with_warnings_naming_lines() {
    let bytes = fixture("match2_recmsg.rcg.gz");
    let g = read_game(&bytes).unwrap();
    check_sane(&g);
    assert_eq!(g.records.len(), 27);
    // 3349 msg lines: 92 team graphics, the rest kept; 815 not UTF-8.
    assert_eq!(g.team_graphics + g.messages.len(), 3349);
    // 815 alike: the first few said, the rest counted in one line.
    assert!(g.warnings.len() < 10, "{:?}", g.warnings);
    let said = g
        .warnings
        .iter()
        .filter(|w| w.message.contains("not UTF-8"))
        .count();
    assert!(
        g.warnings
            .iter()
            .any(|w| w.message.starts_with(&format!("… and {} more like", 815 - said))),
        "{:?}",
        g.warnings
    );
    let w = &g.warnings[0];
    let line = bytes.split(|&b| b == b'\n').nth(w.line - 1).unwrap();
    assert!(
        line.starts_with(b"(msg ") && std::str::from_utf8(line).is_err(),
        "{w}"
    );
    assert!(w.to_string().starts_with(&format!("line {}:", w.line)));
    assert!(g.messages.iter().any(|m| m.text.contains('\u{fffd}')));
    let m = g.messages.iter().find(|m| m.cycle == 5 && m.board == 1).unwrap();
    assert_eq!(m.text, "((player HELIOS_A 6) BJ-l4 EKaq)");
    assert_eq!(g.records[m.follows.unwrap()].cycle, 5);
}

#[test]
fn torn_files_keep_every_record_before_the_tear() {
    for name in ["match_v3.rcg.gz", "match_v4.rcg.gz", "match3.rcg.gz"] {
        let bytes = fixture(name);
        let whole = read_game(&bytes).unwrap();
        let cut = &bytes[..bytes.len() * 2 / 3];
        let g = read_game(cut).unwrap();
        assert!(!g.warnings.is_empty(), "{name}");
        assert!(
            g.records.len() > whole.records.len() / 2 && g.records.len() < whole.records.len(),
            "{name}"
        );
        assert_eq!(
            g.records[..g.records.len() - 1],
            whole.records[..g.records.len() - 1],
            "{name}"
        );
    }
}

#[test]
fn sniff_is_cheap_and_certain() {
    assert!(sniff(b"ULG\x03\x00\x08"));
    assert!(sniff(b"ULG4\n(server_param"));
    assert!(sniff(b"ULG5\n"));
    assert!(sniff(b"ULG6"));
    assert!(sniff(b"[\n{\"version\":\"19.0.0\"},"));
    assert!(sniff(b"  [{\"show\":{"));
    for bad in [
        &b"ULG7"[..],
        b"ULG",
        b"[1,2]",
        b"{\"version\"",
        b"",
        b"0,0 1 M x",
        b"[{\"foo\":1}]",
    ] {
        assert!(!sniff(bad), "{:?}", String::from_utf8_lossy(bad));
        assert!(read_game(bad).is_err());
    }
    for name in [
        "match_v3.rcg.gz",
        "match_v4.rcg.gz",
        "match2.rcg.gz",
        "match3.rcg.gz",
        "match4.rcg.gz",
    ] {
        assert!(sniff(&fixture(name)[..16]), "{name}");
    }
}

#[test]
fn malformed_json_is_an_error_naming_where() {
    let err = read_game(b"[\n{\"version\": }]").unwrap_err();
    assert!(matches!(err, GameError::Json { line: 2, .. }), "{err}");
}

#[test]
fn text_lines_that_do_not_parse_are_skipped_with_their_line() {
    let log = b"ULG5\n(playmode 1 kick_off_l)\n(show 1 ((b) 0 0 0 0) ((l 1) 0 0x9 -49 0 0 0 0 0 (v h 90)))\n(show 2 ((b) 0 0\n(bogus 3)\n(show 3 ((b) 1 2 0 0) ((l 1) 0 0x9 nan 0 0 0 0 0))\n(show 3 ((b) 1 2 0 0))\n(show 3 ((b) 1 2 0 0))\n(show 3 ((b) 1 3 0 0))\n";
    let g = read_game(log).unwrap();
    // The two lines after the one with the NaN player repeat it (the
    // player dropped): one moment, kept once, and unsaid — a stoppage in
    // which nothing moves is written so. They still count as stoppage
    // steps: the ball moves at step 3.
    assert_eq!(g.records.len(), 3);
    assert_eq!(
        g.records.iter().map(|r| (r.cycle, r.stopped)).collect::<Vec<_>>(),
        [(1, 0), (3, 0), (3, 3)]
    );
    assert!(g.records[1].players.is_empty());
    let lines: Vec<usize> = g.warnings.iter().map(|w| w.line).filter(|&l| l > 0).collect();
    assert_eq!(lines, [4, 5, 6]);
    assert_eq!(g.warnings.len(), 3, "{:?}", g.warnings);
}

/// The whole shared logs: the record counts their README states.
#[test]
fn shared_game_logs_have_their_cycles() {
    // (file, version, records, distinct cycles, last cycle)
    let cases = [
        ("match_v3.rcg.gz", Version::Binary3, None, 199, 200),
        ("match_v4.rcg.gz", Version::Text4, Some(229), 199, 200),
        ("match2.rcg.gz", Version::Text5, Some(659), 599, 600),
        ("match2_recmsg.rcg.gz", Version::Text5, Some(659), 599, 600),
        ("match3.rcg.gz", Version::Json, Some(199), 199, 200),
        ("match4.rcg.gz", Version::Text6, Some(349), 299, 300),
    ];
    for (name, version, records, distinct, last) in cases {
        let Some(bytes) = shared(name) else {
            return;
        };
        let g = read_game(&bytes).unwrap();
        check_sane(&g);
        assert_eq!(g.version, version, "{name}");
        if let Some(n) = records {
            assert_eq!(g.records.len(), n, "{name}");
        }
        let mut cycles: Vec<u32> = g.records.iter().map(|r| r.cycle).collect();
        cycles.dedup();
        assert_eq!(cycles.len(), distinct, "{name}");
        assert_eq!((cycles[0], *cycles.last().unwrap()), (1, last), "{name}");
        // A half's last cycle has no record; the match's stoppages repeat.
        let repeats = g.records.len() - cycles.len();
        assert_eq!(
            repeats,
            g.records.iter().filter(|r| r.stopped > 0).count(),
            "{name}"
        );
        assert_eq!(
            g.messages.last().map(|m| m.text.starts_with("(result ")),
            Some(true),
            "{name}"
        );
        if version != Version::Binary3 && name != "match2_recmsg.rcg.gz" {
            assert!(g.warnings.is_empty(), "{name}: {:?}", g.warnings);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Mutated, cut and noisy logs of every version load or fail cleanly,
    /// and what loads is sane.
    #[test]
    fn mutated_game_logs_never_panic(
        which in 0usize..5,
        edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                           proptest::prelude::any::<u8>()), 0..16),
        cut in proptest::prelude::any::<proptest::sample::Index>(),
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
    ) {
        thread_local! {
            static FIXTURES: Vec<Vec<u8>> = ["match_v3.rcg.gz", "match_v4.rcg.gz", "match2_recmsg.rcg.gz", "match3.rcg.gz", "match4.rcg.gz"]
                .iter()
                .map(|n| {
                    let b = fixture(n);
                    // A few records are enough for the fuzzer.
                    b[..b.len().min(40_000)].to_vec()
                })
                .collect();
        }
        let mut b = FIXTURES.with(|f| f[which].clone());
        for (i, v) in edits {
            let i = i.index(b.len());
            b[i] = v;
        }
        b.truncate(cut.index(b.len() + 1));
        b.extend_from_slice(&noise);
        if let Ok(g) = read_game(&b) {
            check_sane(&g);
        }
    }

    /// Random bytes behind each header.
    #[test]
    fn random_game_logs_never_panic(
        header in proptest::sample::select(vec![&b"ULG\x03"[..], b"ULG4\n", b"ULG6\n(show ", b"[{\"show\":", b""]),
        body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
    ) {
        let mut b = header.to_vec();
        b.extend_from_slice(&body);
        if let Ok(g) = read_game(&b) {
            check_sane(&g);
        }
    }
}
