//! The 2D league's real files (`tests/data/real/sim2d/`, listed with what
//! was checked by hand in `tests/data/real/SOURCES.md`): game logs that
//! rcssserver wrote for other people's matches, read as a new user reads
//! them. One test per file checks facts read off the raw file (a record's
//! ball and players, the play mode, the score, the teams); the match of
//! CYRUS and HELIOS2018 also carries the regressions of issue 51: a time
//! between two records shows the earlier (in `log select`, the viewer and
//! export alike), times in cycles (`296c`, `296,1c`), and a picture whose
//! caption covers no player and whose numbers can be read (golden images
//! at 1280 × 720 and 640 × 360).

use std::path::{Path, PathBuf};

use underlay::formats::{load_log_with_format, open_source};
use underlay::image::RgbImage;
use underlay::log::{FrameTime, Log};
use underlay::select::{Filter, Index, brute_force};
use underlay::sim2d::Side;
use underlay::sim2d::game::{Game, ShowRecord, Version, load_game, state};
use underlay::time::LogTime;
use underlay::video::TimeArg;
use underlay::video::source::{FrameSource, OpenOptions};

use crate::util::{assert_ok, check_golden, run, stderr, stdout};

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real/sim2d")
        .join(name)
}

fn game(name: &str) -> Game {
    load_game(&real(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The file read through the format table, as `log info` reads it: a
/// game log, with no warning and nothing passed over.
fn reads_cleanly(name: &str) -> Log {
    let (log, format) = load_log_with_format(&real(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(format.id, "rcg", "{name}");
    assert!(log.warnings.is_empty(), "{name}: {:?}", log.warnings);
    assert_eq!(log.skipped.bytes, 0, "{name}: {:?}", log.skipped);
    log
}

/// The record of `cycle` at stoppage step `stopped`.
fn record(g: &Game, cycle: u32, stopped: u32) -> &ShowRecord {
    g.records
        .iter()
        .find(|r| r.cycle == cycle && r.stopped == stopped)
        .unwrap_or_else(|| panic!("no record {cycle},{stopped}"))
}

fn near(a: [f64; 2], b: [f64; 2]) -> bool {
    (a[0] - b[0]).abs() < 1e-9 && (a[1] - b[1]).abs() < 1e-9
}

/// The player's position in `r`, and its state.
fn player(r: &ShowRecord, side: Side, unum: u8) -> ([f64; 2], u32) {
    let p = r
        .player(side, unum)
        .unwrap_or_else(|| panic!("no {side:?} {unum}"));
    (p.pos, p.state)
}

const CYRUS: &str = "cyrus-vs-helios2018-goal.rcg.gz";

#[test]
fn cyrus_against_helios2018_the_goal_and_its_stoppage() {
    let g = game(CYRUS);
    reads_cleanly(CYRUS);
    assert_eq!(g.version, Version::Text5);
    assert_eq!(g.server.raw.len(), 190);
    assert_eq!(g.player_types.len(), 18);
    assert_eq!(g.teams, ["CYRUS".to_owned(), "HELIOS2018".to_owned()]);
    assert_eq!(g.records.len(), 81);
    assert_eq!(
        (g.records[0].cycle, g.records[0].play_mode.name()),
        (280, "play_on")
    );
    // The goal: 51 records of cycle 296, stoppage steps 0 to 50.
    let goal: Vec<&ShowRecord> = g.records.iter().filter(|r| r.cycle == 296).collect();
    assert_eq!(goal.len(), 51);
    assert!(goal.iter().enumerate().all(|(k, r)| r.stopped as usize == k));
    let r = record(&g, 296, 0);
    assert_eq!((r.play_mode.name(), r.score), ("goal_r", [0, 1]));
    assert!(near(r.ball.pos, [-52.6489, 2.2658]), "{:?}", r.ball);
    let (p, s) = player(r, Side::Left, 1);
    assert!(near(p, [-50.4057, -3.7682]) && s == 0x9, "{p:?} {s:#x}");
    // One stoppage step on, the goalie has moved.
    assert!(near(
        player(record(&g, 296, 1), Side::Left, 1).0,
        [-50.4578, -3.3545]
    ));
    // Left 9 and 10 never connected: parked beyond the top touch line.
    assert_eq!(player(r, Side::Left, 9), ([-27.0, -37.0], 0));
    assert_eq!(player(r, Side::Left, 10), ([-30.0, -37.0], 0));
    let r = record(&g, 297, 0);
    assert_eq!((r.play_mode.name(), r.score), ("kick_off_l", [0, 1]));
    assert!(near(r.ball.pos, [0.0, 0.0]));
}

#[test]
fn carleton_against_mema_stops_where_the_server_stopped() {
    let g = game("carleton-vs-mema-incomplete.rcg.gz");
    let log = reads_cleanly("carleton-vs-mema-incomplete.rcg.gz");
    assert_eq!((g.version, g.server.raw.len()), (Version::Text5, 189));
    assert_eq!(g.teams, ["Carleton".to_owned(), "MEMA".to_owned()]);
    assert_eq!(g.records.len(), 59);
    let first = record(&g, 890, 0);
    // The kick-in of 754 still applies; play goes on at 898.
    assert_eq!(first.play_mode.name(), "kick_in_l");
    assert_eq!(record(&g, 898, 0).play_mode.name(), "play_on");
    assert!(near(first.ball.pos, [47.2514, 34.0]));
    let (p, s) = player(first, Side::Left, 5);
    assert!(near(p, [46.6318, 33.1744]) && s == state::STAND, "{p:?} {s:#x}");
    let parked = first
        .players
        .iter()
        .filter(|p| p.state == 0 && p.pos[1] == -37.0)
        .count();
    assert_eq!(parked, 21);
    assert_eq!(player(first, Side::Right, 10), ([30.0, -37.0], 0));
    let last = g.records.last().unwrap();
    assert_eq!(last.cycle, 948);
    assert!(near(last.ball.pos, [49.7756, 7.7694]));
    assert!(last.players.iter().all(|p| p.state == 0));
    // No result message: the file ends with the last record, and the log
    // with it (plus the last record's cycle).
    assert!(g.messages.is_empty());
    let (lo, hi) = log.time_range().unwrap();
    assert!(
        (lo - 89.0).abs() < 1e-9 && (hi - 94.8).abs() < 1e-9,
        "{lo} … {hi}"
    );
}

#[test]
fn team_a_against_goalie_team_scores_four() {
    let g = game("teama-vs-goalieteam-goals.rcg.gz");
    reads_cleanly("teama-vs-goalieteam-goals.rcg.gz");
    assert_eq!((g.version, g.server.raw.len()), (Version::Text5, 196));
    assert_eq!(g.teams, ["teamA".to_owned(), "goalieTeam".to_owned()]);
    let r = record(&g, 430, 0);
    assert_eq!((r.play_mode.name(), r.score), ("play_on", [0, 0]));
    assert!(near(r.ball.pos, [48.1795, -0.3879]));
    let (p, s) = player(r, Side::Left, 1);
    assert!(near(p, [46.8121, -0.2193]) && s == 0x3, "{p:?} {s:#x}");
    let r = record(&g, 436, 0);
    assert_eq!((r.play_mode.name(), r.score), ("goal_l", [1, 0]));
    let last = g.records.last().unwrap();
    assert_eq!(
        (last.cycle, last.play_mode.name(), last.score),
        (1838, "play_on", [4, 0])
    );
    assert_eq!(g.messages.len(), 1);
    assert_eq!(
        g.messages[0].text,
        "(result 202104011623 teamA_4-vs-goalieTeam_0)"
    );
}

#[test]
fn helios_base_alone_starts_in_play() {
    let g = game("helios-base-vs-null-start.rcg.gz");
    reads_cleanly("helios-base-vs-null-start.rcg.gz");
    assert_eq!((g.version, g.server.raw.len()), (Version::Text5, 196));
    // `null`: no right team.
    assert_eq!(g.teams, ["HELIOS_base".to_owned(), String::new()]);
    assert_eq!(g.records.len(), 40);
    let r = record(&g, 1, 0);
    assert_eq!(r.play_mode.name(), "play_on");
    let (p, s) = player(r, Side::Left, 1);
    assert!(near(p, [-2.3986, -36.999]) && s == 0x1, "{p:?}");
    assert_eq!(r.players.iter().filter(|p| p.state == 0).count(), 21);
    let r = record(&g, 40, 0);
    assert!(near(r.ball.pos, [-18.2725, -12.4423]));
    assert!(near(player(r, Side::Left, 1).0, [-8.0231, -3.024]));
}

#[test]
fn krislet_against_bdi_two_play_modes_in_one_cycle() {
    let g = game("krislet-vs-bdi-goal.rcg.gz");
    reads_cleanly("krislet-vs-bdi-goal.rcg.gz");
    assert_eq!((g.version, g.server.raw.len()), (Version::Text5, 189));
    assert_eq!(g.teams, ["Krislet".to_owned(), "BDI".to_owned()]);
    let r = record(&g, 250, 0);
    assert!(near(r.ball.pos, [34.3171, -2.1821]));
    assert!(near(player(r, Side::Left, 1).0, [33.1476, -2.1136]));
    // Cycle 256: one record in play, then free_kick_fault_l for 30
    // stoppage steps (the players move), then free_kick_r.
    let modes: Vec<(u32, &str)> = g
        .records
        .iter()
        .filter(|r| r.cycle == 256)
        .map(|r| (r.stopped, r.play_mode.name()))
        .collect();
    assert_eq!(modes.len(), 32);
    assert_eq!(modes[..2], [(0, "play_on"), (1, "free_kick_fault_l")]);
    assert_eq!(modes[31], (31, "free_kick_r"));
    // Cycle 516: goal_l and the score 1:0 for 51 steps (4 of them
    // repeating the step before: one moment each), then kick_off_r with
    // the ball back on the spot.
    let r = record(&g, 516, 0);
    assert_eq!((r.play_mode.name(), r.score), ("goal_l", [1, 0]));
    assert!(near(r.ball.pos, [53.1887, 0.943]));
    let goal: Vec<&ShowRecord> = g.records.iter().filter(|r| r.cycle == 516).collect();
    assert_eq!(goal.len(), 52 - 4);
    let kick_off = goal.last().unwrap();
    assert_eq!((kick_off.stopped, kick_off.play_mode.name()), (51, "kick_off_r"));
    assert!(near(kick_off.ball.pos, [0.0, 0.0]));
    let last = g.records.last().unwrap();
    assert_eq!(last.cycle, 531);
    assert!(near(last.ball.pos, [0.0, 0.0]));
}

#[test]
fn krislet3_a_whole_short_game() {
    let g = game("krislet3-vs-null.rcg.gz");
    let log = reads_cleanly("krislet3-vs-null.rcg.gz");
    assert_eq!((g.version, g.server.raw.len()), (Version::Text5, 189));
    assert_eq!(g.teams, ["Krislet3".to_owned(), String::new()]);
    assert_eq!(g.records.len(), 86);
    assert!(g.records.iter().all(|r| r.play_mode.name() == "kick_off_l"));
    for c in [1, 86] {
        assert!(near(
            player(record(&g, c, 0), Side::Left, 1).0,
            [-37.6195, -18.3075]
        ));
    }
    assert_eq!(g.messages.len(), 1);
    assert_eq!(g.messages[0].text, "(result 202101231844 Krislet3_0-vs-null)");
    // One instantaneous frame of sensor models per record.
    let instants = log
        .frames
        .iter()
        .filter(|f| matches!(f.time, FrameTime::Instant(_)))
        .count();
    assert_eq!(instants, 86);
}

/// A game log with its header and no record (the server stopped before
/// the first cycle, or no team connected) holds no moment of a match: it
/// is refused, for the same reason naming the file, when read as a log
/// (`log info`) and as a picture (the viewer, export).
#[test]
fn logs_without_a_record_are_refused_alike_saying_why() {
    for (name, head) in [
        (
            "ulg6-no-show.rcg.gz",
            "its header (202 server parameters, 18 player types) and 0 messages",
        ),
        (
            "futvasf-null-vs-null.rcg.gz",
            "its header (190 server parameters, 18 player types) and 1 message",
        ),
    ] {
        let chain = |e: &dyn std::error::Error| {
            let mut said = e.to_string();
            let mut cause = e.source();
            while let Some(c) = cause {
                said = format!("{said}: {c}");
                cause = c.source();
            }
            said
        };
        let as_log = load_log_with_format(&real(name))
            .err()
            .unwrap_or_else(|| panic!("{name}: read as a log"));
        let as_picture = open_source(&real(name), &OpenOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{name}: a picture of nothing"));
        let reason = format!(
            "no show record in it: {head}, nothing else: the server stopped before the first cycle, or no \
             team connected"
        );
        for said in [chain(&as_log), chain(&as_picture)] {
            assert!(said.contains(name) && said.ends_with(&reason), "{said}");
        }
    }
}

/// Every real league file reads through the binary's `log info` without
/// a warning (none is damaged), but for the two game logs that hold no
/// show record, which it refuses; at least 12 files, from the 2D and 3D
/// leagues.
#[test]
fn every_real_league_file_reads_without_a_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real");
    let mut files = Vec::new();
    for league in ["sim2d", "sim3d"] {
        for e in std::fs::read_dir(root.join(league)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    for f in &files {
        let o = run(["log", "info", f.to_str().unwrap()]);
        let name = f.file_name().unwrap().to_string_lossy();
        if name.contains("no-show") || name.contains("null-vs-null") {
            assert_eq!(o.status.code(), Some(1), "{name}");
            assert!(stderr(&o).contains("no show record in it"), "{}", stderr(&o));
            continue;
        }
        assert_ok(&o);
        assert!(stdout(&o).contains("warnings:    none"), "{name}: {}", stdout(&o));
        assert_eq!(stderr(&o), "", "{name}");
    }
}

/// The record a game shows at `t`, by a scan of its records: the last
/// whose clock is at or before `t` (the first of its clock).
fn record_in_effect(g: &Game, t: f64) -> Option<usize> {
    let step = g.server.simulator_step;
    let mut best: Option<(f64, usize)> = None;
    for (i, r) in g.records.iter().enumerate() {
        let c = r.clock(step);
        if c <= t && best.is_none_or(|(b, _)| c > b) {
            best = Some((c, i));
        }
    }
    best.map(|(_, i)| i)
}

/// xorshift: random times the same on every run.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Issue 51: `log select --at 29.65` printed nothing (a record was held
/// for 0.04 s, under half a cycle). At 10,000 random times of the match
/// (3,000 of them inside the goal's stoppage, whose records are 10 µs
/// apart), `log select`'s selection is never empty, is the record in
/// effect then by a scan of the game's records, equals the brute-force
/// reference; and the viewer's and export's frame at that time (the
/// moment as `--at` and `--from` take it, at the records' own rate and
/// at 25 pictures a second) shows that record and its clock.
#[test]
fn a_record_is_shown_until_the_next_in_select_viewer_and_export() {
    let g = game(CYRUS);
    let log = reads_cleanly(CYRUS);
    assert_eq!(log.header.hints.cycle, Some(0.1));
    let step = g.server.simulator_step;
    let index = Index::new(&log);
    let threshold = index.default_threshold();
    let all = Filter::all(&log, i32::MAX);
    let first = g.records[0].clock(step);
    let last = g.records.last().unwrap().clock(step);
    let stoppage = record(&g, 296, 0).clock(step);
    let mut sources: Vec<(f64, Box<dyn FrameSource>)> = [None, Some(25.0)]
        .into_iter()
        .map(|fps| {
            let o = OpenOptions {
                fps,
                size: Some((320, 180)),
                ..OpenOptions::default()
            };
            (fps.unwrap_or(10.0), open_source(&real(CYRUS), &o).unwrap())
        })
        .collect();
    let mut rng = Rng(0x0051_2d5e_1ec7);
    let mut pictures_checked = 0;
    for k in 0..10_000 {
        let t = if k % 10 < 3 {
            stoppage + rng.unit() * 51.0 * underlay::time::STOPPED_STEP
        } else {
            first + rng.unit() * (last + step - first)
        };
        let want = record_in_effect(&g, t).unwrap();
        let want_clock = g.records[want].clock(step);
        let sel = index.select(&log, LogTime(t), threshold, &all);
        let instants: Vec<f64> = sel
            .instant_frames()
            .iter()
            .map(|&f| log.frames[f].time.start())
            .collect();
        assert_eq!(instants, [want_clock], "t = {t}: an empty or wrong moment");
        let got: Vec<_> = (&sel).into_iter().collect();
        assert!(!got.is_empty(), "t = {t}");
        assert_eq!(got, brute_force(&log, t, threshold, &all), "t = {t}");
        for (fps, src) in &mut sources {
            let info = src.info().clone();
            let v = TimeArg::Seconds(t)
                .video_time(info.clocks.as_deref(), info.start, info.clock_step)
                .unwrap()
                .0;
            let clock = info.clocks.as_ref().unwrap().clock_at(v).unwrap();
            assert_eq!(clock, want_clock, "t = {t}, {fps} pictures a second");
            // The picture itself, now and then: the record's first picture.
            if k % 500 == 0 {
                let own = info.clocks.as_ref().unwrap().time_of(want_clock).unwrap();
                let a = src.frame_at(v).unwrap().unwrap();
                let b = src.frame_at(own).unwrap().unwrap();
                assert_eq!(a.clock, Some(want_clock));
                assert!(a.image == b.image, "t = {t}: the picture is not record {want}'s");
                pictures_checked += 1;
            }
        }
    }
    assert_eq!(pictures_checked, 40);
}

/// Issue 51 through the binary: 29.65 s shows cycle 296's record (the
/// goal) as 29.6 does; `--at` takes cycles, and a stoppage step.
#[test]
fn log_select_takes_cycles_and_never_shows_an_empty_moment() {
    let path = real(CYRUS);
    let select = |at: &str| {
        let o = run(["log", "select", path.to_str().unwrap(), "--at", at]);
        assert_ok(&o);
        stdout(&o)
    };
    let at_29_6 = select("29.6");
    assert!(at_29_6.lines().count() > 100, "{at_29_6}");
    assert_eq!(select("296c"), at_29_6);
    // Between cycle 296 and 297 the last record of 296 shows: its 51st,
    // 50 stoppage steps in (the players walked back for the kick-off).
    let last_of_296 = select("296,50c");
    assert!(last_of_296.lines().count() > 100);
    assert_ne!(last_of_296, at_29_6);
    assert_eq!(select("29.65"), last_of_296);
    assert_eq!(select("29.69"), last_of_296);
    assert_ne!(select("29.7"), last_of_296);
    assert_eq!(select("29.7"), select("297c"));
    // A stoppage step: the record one step into 296.
    assert_eq!(select("296,1c"), select("29.60001"));
    assert_eq!(select("296,1c"), select("29.600015"));
    let o = run(["log", "info", path.to_str().unwrap()]);
    assert_ok(&o);
    assert!(
        stdout(&o).contains("each record shown until the next"),
        "{}",
        stdout(&o)
    );
    // Cycles on a log that is not on a simulator's clock: said, not guessed.
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim3d/monitor.rsmp.log.gz");
    let o = run(["log", "select", other.to_str().unwrap(), "--at", "296c"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("in cycles"), "{}", stderr(&o));
}

/// The picture of a record, as the viewer and export make it.
fn picture(name: &str, at: &str, size: (usize, usize)) -> (RgbImage, underlay::image::MaskImage) {
    let mut src = open_source(
        &real(name),
        &OpenOptions {
            size: Some(size),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let info = src.info().clone();
    let v = at
        .parse::<TimeArg>()
        .unwrap()
        .video_time(info.clocks.as_deref(), info.start, info.clock_step)
        .unwrap();
    let f = src.frame_at(v.0).unwrap().unwrap();
    (f.image, f.mask.unwrap())
}

/// Issue 51: the caption ("CYRUS 0:1 HELIOS2018 · goal_r · cycle 296,1")
/// was drawn over the players the server parked beside the field, and on
/// the yellow team the heading crossed the shirt number. The caption has
/// a band of its own above the field; every player, parked ones too, is
/// drawn below it; the goldens are the pictures at 1280 × 720 and
/// 640 × 360 (look at them: every number reads).
#[test]
fn golden_2d_pictures_caption_beside_the_players_numbers_legible() {
    for (size, golden) in [
        ((1280, 720), "match2d-goal-1280.png"),
        ((640, 360), "match2d-goal-640.png"),
    ] {
        let (img, mask) = picture(CYRUS, "296,1c", size);
        check_golden(golden, &img);
        let band = underlay::pitch::render::Look::caption_band(size.1);
        // Not floor in the band; below it, the parked players (world y
        // = +37 on the monitor's −37) are drawn in the rows under the band.
        assert!(
            mask.rows()
                .into_iter()
                .take(band)
                .all(|r| r.iter().all(|&v| v == 0))
        );
        let view = underlay::pitch::View::fit_below(
            (
                underlay::geom::Vec2::new(-57.5, -39.0),
                underlay::geom::Vec2::new(57.5, 39.0),
            ),
            size.0,
            size.1,
            band,
        )
        .unwrap();
        for x in [-27.0, -30.0] {
            let p = view.to_pixel(underlay::geom::Vec2::new(x, 37.0));
            assert!(p.y > band as f64, "{p:?} under the band {band}");
            // Above its number, its disc: the left team's yellow, faded
            // (never connected) over the grass, whose red is under 61.
            let above = underlay::pitch::render::Look::for_height(size.1).min_body_px * 0.55;
            let (r, c) = ((p.y - above).round() as usize, p.x.round() as usize);
            assert!(
                img[[r, c, 0]] > 100 && img[[r, c, 1]] > 100,
                "the parked player at x = {x} is drawn: {:?}",
                img.slice(ndarray::s![r, c, ..])
            );
        }
    }
    // Every player parked at the top, the caption beside them.
    let (img, _) = picture("carleton-vs-mema-incomplete.rcg.gz", "890c", (1280, 720));
    check_golden("match2d-parked-1280.png", &img);
}
