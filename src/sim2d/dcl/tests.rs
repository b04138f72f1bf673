use super::*;
use crate::sim2d::game::read_game;
use crate::sim2d::testdata::{fixture, shared};

fn q9() -> DebugLogOptions {
    DebugLogOptions {
        team: "HELIOS_Q".to_owned(),
        unum: 9,
        side: Side::Right,
        step: 0.1,
    }
}

/// The error texts of a log's frames at clock `t` (all when `None`).
fn errors(log: &Log) -> Vec<(f64, String, f64)> {
    let e = log.entities.get("HELIOS_Q/9/belief/error").unwrap();
    let mut out = Vec::new();
    for f in &log.frames {
        for p in log.frame_primitives(f) {
            if let (Shape::Text { text, .. }, true) = (&p.shape, p.entity == e) {
                let d: f64 = text.trim_end_matches(" m").parse().unwrap();
                out.push((f.time.start(), text.to_string(), d));
            }
        }
    }
    out
}

#[test]
fn steps_are_read_in_the_agents_frame() {
    let wm = read_world_model(&fixture("HELIOS_Q-9.dcl.gz")).unwrap();
    assert!(wm.warnings.is_empty(), "{:?}", wm.warnings);
    assert_eq!(wm.steps.len(), 60 + 1 + 51 + 2);
    let s = &wm.steps[0];
    assert_eq!(s.time, GameTime { cycle: 0, stopped: 0 });
    let me = s.me.as_ref().unwrap();
    assert_eq!((me.side, me.unum, me.player_type), (Side::Right, 9, 13));
    assert_eq!(
        (me.pos, me.vel, me.body, me.neck),
        ([-14.96, -9.96], [-0.0, 0.0], 5.0, 0.0)
    );
    assert_eq!(s.ball.as_ref().unwrap().pos, [0.0, 0.0]);
    assert_eq!(s.target_point, Some([-1.26, -11.99]));
    assert_eq!(s.message.as_deref(), Some("NeckBall:Right|AttCurSender1|0ms|"));
    assert_eq!(s.drawings.len(), 3);
    let s2 = &wm.steps[2];
    let mate = s2
        .players
        .iter()
        .find(|p| p.team == Team::Teammate && p.unum == Some(7))
        .unwrap();
    assert_eq!(
        (mate.player_type, mate.pos, mate.body),
        (Some(10), [-14.62, -4.93], Some(1.0))
    );
    let goalie = s2
        .players
        .iter()
        .find(|p| p.team == Team::UnknownTeammate && p.goalie)
        .unwrap();
    assert_eq!(goalie.pos, [-48.72, 0.02]);
    assert!(
        s2.players
            .iter()
            .any(|p| p.team == Team::UnknownOpponent && p.unum.is_none())
    );
}

/// The believed positions against the game log: within a metre or so,
/// also through the goal's stoppage, where the players are moved into the
/// kick-off formation at 274,5 (the agent's 274,k is record 274 number
/// k − 1): a mapping off by one step would put the agent 50 m away.
#[test]
fn beliefs_match_the_game_log_through_the_stoppage() {
    let game = read_game(&fixture("match4.rcg.gz")).unwrap();
    let wm = read_world_model(&fixture("HELIOS_Q-9.dcl.gz")).unwrap();
    let log = to_log(&wm, &q9(), Some(&game));
    assert!(log.warnings.is_empty());
    let e = log.entities.get("HELIOS_Q/9/belief/self").unwrap();
    assert_eq!(
        log.entities.parents(e),
        [log.entities.get("HELIOS_Q/9/belief").unwrap()]
    );
    // Self errors: the first error text of each frame is the agent's own.
    let self_errors: Vec<(f64, f64)> = log
        .frames
        .iter()
        .filter_map(|f| {
            let p = log.frame_primitives(f);
            let err = log.entities.get("HELIOS_Q/9/belief/error").unwrap();
            p.iter().find_map(|p| match (&p.shape, p.entity == err) {
                (Shape::Text { text, .. }, true) => {
                    Some((f.time.start(), text.trim_end_matches(" m").parse().unwrap()))
                }
                _ => None,
            })
        })
        .collect();
    let in_stoppage = self_errors
        .iter()
        .filter(|(t, _)| (clock(274, 0, 0.1)..clock(275, 0, 0.1)).contains(t))
        .count();
    assert_eq!(in_stoppage, 51);
    assert!(self_errors.len() > 51 + 30);
    for (t, d) in &self_errors {
        assert!(*d < 1.0, "self error {d} m at {t}");
    }
    // Every belief drawn; errors for the ball and players too, small for most.
    let all = errors(&log);
    assert!(all.len() > self_errors.len() * 5);
    let small = all.iter().filter(|(_, _, d)| *d < 3.0).count();
    assert!(small * 10 > all.len() * 8, "{small} of {}", all.len());
    // Without the game log: the same beliefs, no errors.
    let plain = to_log(&wm, &q9(), None);
    assert!(plain.primitives.len() < log.primitives.len());
    assert!(errors(&plain).is_empty());
    assert_eq!(plain.frames.len(), log.frames.len());
}

#[test]
fn sniffing_and_bad_steps() {
    assert!(sniff(b"%% step 0\n%% debug [((debug"));
    assert!(sniff(&fixture("HELIOS_A-9.dcl.gz")[..32]));
    assert!(!sniff(b"0,0 1 M x"));
    assert!(!sniff(b"ULG5"));
    assert!(matches!(read_world_model(b"hello"), Err(DclError::NotADcl)));
    let wm = read_world_model(b"%% step 3\n%% debug [((debug (format-version 5)) (s l 1 0 1 2 0 0 0 0))]\n%% debug [((unclosed]\nnoise\n%% debug [((debug (format-version 5)))]\n").unwrap();
    assert_eq!(wm.steps.len(), 2);
    assert_eq!(wm.steps[0].time, GameTime { cycle: 3, stopped: 0 });
    assert_eq!(wm.warnings.iter().map(|w| w.line).collect::<Vec<_>>(), [3, 4]);
}

/// The whole shared world models against their game logs.
#[test]
fn shared_world_models_match_their_games() {
    for (dcl, rcg, team, unum, side) in [
        (
            "match4_dlog/HELIOS_Q-9.dcl.gz",
            "match4.rcg.gz",
            "HELIOS_Q",
            9,
            Side::Right,
        ),
        (
            "match4_dlog/HELIOS_P-10.dcl.gz",
            "match4.rcg.gz",
            "HELIOS_P",
            10,
            Side::Left,
        ),
        (
            "match2_dlog/HELIOS_A-9.dcl.gz",
            "match2.rcg.gz",
            "HELIOS_A",
            9,
            Side::Left,
        ),
    ] {
        let (Some(d), Some(g)) = (shared(dcl), shared(rcg)) else {
            return;
        };
        let game = read_game(&g).unwrap();
        let wm = read_world_model(&d).unwrap();
        assert!(wm.warnings.is_empty(), "{dcl}");
        let opts = DebugLogOptions {
            team: team.to_owned(),
            unum,
            side,
            step: game.server.simulator_step,
        };
        let log = to_log(&wm, &opts, Some(&game));
        let err = log.entities.get(&format!("{team}/{unum}/belief/error")).unwrap();
        let mut selfs = Vec::new();
        for f in &log.frames {
            if let Some(d) = log
                .frame_primitives(f)
                .iter()
                .find_map(|p| match (&p.shape, p.entity == err) {
                    (Shape::Text { text, .. }, true) => text.trim_end_matches(" m").parse::<f64>().ok(),
                    _ => None,
                })
            {
                selfs.push(d);
            }
        }
        assert!(
            selfs.len() * 10 > wm.steps.len() * 9,
            "{dcl}: {} of {}",
            selfs.len(),
            wm.steps.len()
        );
        selfs.sort_by(f64::total_cmp);
        assert!(
            selfs[selfs.len() / 2] < 0.3,
            "{dcl}: median {}",
            selfs[selfs.len() / 2]
        );
        assert!(
            selfs[selfs.len() * 99 / 100] < 2.0,
            "{dcl}: 99 % {}",
            selfs[selfs.len() * 99 / 100]
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Mutated and cut world models load or fail cleanly; drawing them
    /// (with a game) never panics.
    #[test]
    fn mutated_world_models_never_panic(
        edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                           proptest::sample::select(b"()0123456789.,- \"\nstobucl%".to_vec())), 0..16),
        cut in proptest::prelude::any::<proptest::sample::Index>(),
    ) {
        thread_local! {
            static DATA: (Vec<u8>, Game) = {
                let b = fixture("HELIOS_Q-9.dcl.gz");
                (b[..b.len().min(30_000)].to_vec(), read_game(&fixture("match4.rcg.gz")).unwrap())
            };
        }
        DATA.with(|(bytes, game)| {
            let mut b = bytes.clone();
            for (i, v) in edits {
                let i = i.index(b.len());
                b[i] = v;
            }
            b.truncate(cut.index(b.len() + 1));
            if let Ok(wm) = read_world_model(&b) {
                let log = to_log(&wm, &q9(), Some(game));
                for p in &log.primitives {
                    proptest::prop_assert!(p.entity.index() < log.entities.len());
                }
                let mut last = f64::NEG_INFINITY;
                for f in &log.frames {
                    proptest::prop_assert!(f.time.start() > last);
                    last = f.time.start();
                }
            }
            Ok(())
        })?;
    }
}
