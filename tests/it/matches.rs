//! Matches with no camera, rendered and exported with their own drawings:
//! an SSL game log and a 3D-league monitor log (with an agent's
//! perception log over it), through the real binary.

use std::path::{Path, PathBuf};

use underlay::formats::open_source as open;
use underlay::video::Decoder;
use underlay::video::source::OpenOptions;

use crate::util::{assert_ok, run, stderr, tmp};

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
        .join(name)
}

/// Every decoded picture of `path`.
fn pictures(path: &Path) -> Vec<underlay::image::RgbImage> {
    let mut d = Decoder::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = d.next_frame().unwrap() {
        v.push(f.image);
        assert!(v.len() < 10_000);
    }
    v
}

/// Pixels of `img` close to `rgb`.
fn count_near(img: &underlay::image::RgbImage, rgb: [u8; 3], tol: i32) -> usize {
    img.as_slice()
        .unwrap()
        .chunks_exact(3)
        .filter(|p| (0..3).all(|c| (i32::from(p[c]) - i32::from(rgb[c])).abs() <= tol))
        .count()
}

#[test]
fn an_ssl_game_log_exports_as_a_video_of_its_own() {
    let dir = tmp();
    let out = dir.path().join("game.mp4");
    let log = fixture("ssl", "push-card-64s.log");
    let o = run([
        "export".as_ref(),
        log.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--from".as_ref(),
        "1".as_ref(),
        "--to".as_ref(),
        "2".as_ref(),
        "--size".as_ref(),
        "640x360".as_ref(),
        "--preset".as_ref(),
        "ultrafast".as_ref(),
    ]);
    assert_ok(&o);
    let pics = pictures(&out);
    // One second at the source's own rate (its ticks come at 60 Hz or
    // more; rendered at 30 pictures a second).
    let mut src = open(&log, &OpenOptions::default()).unwrap();
    let fps = src.info().fps;
    assert!((fps - 30.0).abs() < 1e-9, "{fps}");
    assert_eq!(pics.len(), 30, "{}", stderr(&o));
    assert_eq!(pics[0].dim(), (360, 640, 3));
    // Robots of both teams are on the field, in their colours.
    let yellow = count_near(&pics[0], [0xff, 0xd2, 0x00], 40);
    let blue = count_near(&pics[0], [0x1e, 0x64, 0xff], 40);
    assert!(yellow > 20 && blue > 20, "yellow {yellow}, blue {blue}");
    // The rendered source carries its clock, mask and calibration.
    let f = src.frame_at(1.0).unwrap().unwrap();
    assert!(f.clock.unwrap() > 1e9, "recorder time since the epoch");
    assert!(f.mask.is_some() && src.info().calibration.is_some());
}

#[test]
fn a_3d_monitor_log_exports_with_what_an_agent_saw() {
    let dir = tmp();
    let monitor = fixture("sim3d", "monitor.rsmp.log.gz");
    let agent = fixture("sim3d", "agent_Alpha_1.log.gz");
    let export = |name: &str, extra: &[&std::ffi::OsStr]| {
        let out = dir.path().join(name);
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "export".as_ref(),
            monitor.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
            "--size".as_ref(),
            "480x320".as_ref(),
            "--preset".as_ref(),
            "ultrafast".as_ref(),
            "--max-level".as_ref(),
            "1".as_ref(),
        ];
        args.extend_from_slice(extra);
        let o = run(args);
        assert_ok(&o);
        (pictures(&out), stderr(&o))
    };
    let (plain, _) = export("plain.mp4", &[]);
    let (seen, err) = export("seen.mp4", &["--log".as_ref(), agent.as_os_str()]);
    // The monitor's pace: a picture every 0.04 s of simulation time.
    assert_eq!(plain.len(), seen.len(), "{err}");
    assert!(plain.len() > 10);
    // Where the agent's view footprint and detections are drawn, the
    // pictures differ; the match itself is the same.
    let differs = plain
        .iter()
        .zip(&seen)
        .filter(|(a, b)| {
            a.iter()
                .zip(b.iter())
                .filter(|(x, y)| x.abs_diff(**y) > 24)
                .count()
                > 200
        })
        .count();
    assert!(
        differs > plain.len() / 2,
        "{differs} of {} pictures show the agent's drawings",
        plain.len()
    );
}

#[test]
fn a_file_that_is_no_match_is_named() {
    let dir = tmp();
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, b"not a match at all").unwrap();
    let out = dir.path().join("o.mp4");
    let o = run([
        "export".as_ref(),
        junk.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("junk.bin"), "{}", stderr(&o));
    assert!(!out.exists());
    // Times in cycles need a simulator's clock.
    let log = fixture("ssl", "push-card-64s.log");
    let o = run([
        "export".as_ref(),
        log.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--from".as_ref(),
        "100c".as_ref(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cycles"), "{}", stderr(&o));
}

#[test]
fn a_2d_game_log_exports_with_its_agents_reasoning() {
    let dir = tmp();
    let game = fixture("sim2d", "match4.rcg.gz");
    let agent = fixture("sim2d", "HELIOS_Q-9.log.gz");
    let out = dir.path().join("m.mp4");
    let o = run([
        "export".as_ref(),
        game.as_os_str(),
        "--log".as_ref(),
        agent.as_os_str(),
        "--player".as_ref(),
        "r9".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        "--size".as_ref(),
        "640x360".as_ref(),
        "--preset".as_ref(),
        "ultrafast".as_ref(),
    ]);
    assert_ok(&o);
    // One picture per show record, stoppage steps included.
    let game_log = underlay::sim2d::game::load_game(&game).unwrap();
    let pics = pictures(&out);
    assert_eq!(pics.len(), game_log.records.len(), "{}", stderr(&o));
    // The right-side agent's file is placed through the game log: no
    // warning that its side had to be guessed.
    assert!(!stderr(&o).contains("drawn as the left team"), "{}", stderr(&o));
    // Read alone, its side is guessed, and said so.
    let i = run(["log".as_ref(), "info".as_ref(), agent.as_os_str()]);
    assert_ok(&i);
    assert!(
        crate::util::text(&i).contains("2D agent debug log"),
        "{}",
        crate::util::text(&i)
    );
    // A part given in cycles: from one record's cycle up to a later one's.
    let (a, b) = (game_log.records[5].cycle, game_log.records[40].cycle);
    assert!(a < b);
    let (from, to) = (format!("{a}c"), format!("{b}c"));
    let part = dir.path().join("part.mp4");
    let o = run([
        "export".as_ref(),
        game.as_os_str(),
        "-o".as_ref(),
        part.as_os_str(),
        "--from".as_ref(),
        from.as_ref(),
        "--to".as_ref(),
        to.as_ref(),
        "--preset".as_ref(),
        "ultrafast".as_ref(),
    ]);
    assert_ok(&o);
    let want = game_log
        .records
        .iter()
        .filter(|r| (a..b).contains(&r.cycle))
        .count();
    assert_eq!(pictures(&part).len(), want);
}
