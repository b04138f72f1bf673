//! The whole search on synthetic runs: robots moving on a floor seen by a
//! known camera, a log of them with a known offset (and drift), and logs
//! and videos that do not belong together. (The viewer's "Find offset"
//! on a live buffer uses the same run.)

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::*;
use crate::geom::{Mat3, Vec2};
use crate::image::MaskImage;
use crate::log::{FrameTime, Primitive, Shape, Style};

pub(crate) const W: usize = 480;
pub(crate) const H: usize = 270;
pub(crate) const FPS: f64 = 30.0;
/// Pixels per millimetre.
const SCALE: f64 = 0.05;
const RADIUS: f64 = 120.0;

/// World (mm, y up) → picture: the field's centre in the middle.
pub(crate) fn camera() -> Calibration {
    let h: Mat3 = [
        [SCALE, 0.0, W as f64 / 2.0],
        [0.0, -SCALE, H as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ];
    Calibration::from_homography(h).unwrap()
}

/// Robot `k` of game `seed` at world time `t` (mm).
fn robot(seed: u64, k: usize, t: f64) -> Vec2 {
    // splitmix64 of (seed, k, i): games of other seeds are unrelated.
    let f = |i: u64| {
        let mut z = seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((k as u64) << 32)
            .wrapping_add(i);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    };
    let (wx, wy) = (0.4 + f(1), 0.4 + f(2));
    Vec2::new(
        -3000.0 + 6000.0 * f(3) + 1200.0 * (wx * t + 6.0 * f(4)).sin(),
        -1800.0 + 3600.0 * f(5) + 900.0 * (wy * t + 6.0 * f(6)).cos(),
    )
}

/// Eight robots of game `seed` seen at world time `t`: grey discs on a
/// noisy floor.
pub(crate) fn picture(seed: u64, t: f64, frame: u64) -> MaskImage {
    let mut img = MaskImage::from_shape_fn((H, W), |(y, x)| {
        let n = (x as u64 * 31 + y as u64 * 17 + frame * 101) % 13;
        (90 + n) as u8
    });
    let r = RADIUS * SCALE;
    for k in 0..8 {
        let p = robot(seed, k, t);
        let (cx, cy) = (W as f64 / 2.0 + SCALE * p.x, H as f64 / 2.0 - SCALE * p.y);
        for y in (cy - r).floor().max(0.0) as usize..((cy + r).ceil() as usize).min(H) {
            for x in (cx - r).floor().max(0.0) as usize..((cx + r).ceil() as usize).min(W) {
                if (x as f64 - cx).powi(2) + (y as f64 - cy).powi(2) <= r * r {
                    img[(y, x)] = 200;
                }
            }
        }
    }
    img
}

/// `seconds` of video of game `seed` (world time = video time).
fn video(seed: u64, seconds: f64) -> Motion {
    let n = (seconds * FPS) as u64;
    Motion::from_pictures(
        W,
        H,
        FPS,
        (0..n).map(|i| (i as f64 / FPS, picture(seed, i as f64 / FPS, i))),
    )
    .unwrap()
}

/// A 60 Hz log of game `seed` whose clock reads `rate × world + offset`,
/// with a still zone and a planner's tree drawn too.
pub(crate) fn log(seed: u64, offset: f64, rate: f64, seconds: f64) -> Log {
    let mut log = Log::new();
    let robots: Vec<_> = (0..8)
        .map(|k| log.entities.intern(&format!("robots/{k}")))
        .collect();
    let (zone, tree) = (log.entities.intern("zone"), log.entities.intern("tree"));
    let prim = |shape, entity| Primitive {
        shape,
        style: Style::default(),
        entity,
        level: 0,
    };
    for i in -120..(seconds * 60.0) as i64 + 120 {
        let t = i as f64 / 60.0;
        let mut ps: Vec<Primitive> = (0..8)
            .map(|k| {
                prim(
                    Shape::Circle {
                        center: robot(seed, k, t),
                        radius: RADIUS,
                    },
                    robots[k],
                )
            })
            .collect();
        ps.push(prim(
            Shape::Circle {
                center: Vec2::new(500.0, 500.0),
                radius: 800.0,
            },
            zone,
        ));
        for n in 0..20 {
            let at = Vec2::new(
                ((i * 37 + n * 101) % 6000 - 3000) as f64,
                ((i * 53 + n * 71) % 3000 - 1500) as f64,
            );
            ps.push(prim(
                Shape::Circle {
                    center: at,
                    radius: 20.0,
                },
                tree,
            ));
        }
        log.push_frame(FrameTime::Instant(rate * t + offset), ps);
    }
    log
}

/// A request for the synthetic video, starting at `guess` ± `search`.
fn request<'a>(log: &'a Log, cal: &'a Calibration, guess: f64, search: f64, drift: bool) -> Request<'a> {
    Request {
        video: std::path::Path::new("synthetic"),
        log,
        calibration: cal,
        guess: Some(guess),
        rate: 1.0,
        search: Some(search),
        from: None,
        to: None,
        drift,
    }
}

fn find_offset(motion: &Motion, log: &Log, guess: f64, search: f64, drift: bool) -> Report {
    let cal = camera();
    let req = request(log, &cal, guess, search, drift);
    let movers = Movers::from_log(log);
    find_in(
        &req,
        &movers,
        motion,
        &AtomicBool::new(false),
        &mut |_| {},
        Instant::now(),
    )
    .unwrap()
}

#[test]
fn finds_the_offset_within_a_fraction_of_a_frame() {
    let motion = video(1, 6.0);
    let truth = 1_700_000_123.456_7;
    for start in [-4.0, 3.3] {
        let r = find_offset(&motion, &log(1, truth, 1.0, 6.0), truth + start, 5.0, false);
        let f = &r.found;
        assert!(f.confident, "{f:?}");
        assert!(
            (f.offset - truth).abs() < 0.25 / FPS,
            "found {} for {truth}",
            f.offset
        );
        assert_eq!(r.objects, 8, "the robots, not the zone or the tree");
        assert_eq!(f.drift, Drift::NotMeasured);
    }
}

#[test]
fn another_game_or_a_still_picture_is_no_confident_match() {
    let motion = video(1, 6.0);
    let r = find_offset(&motion, &log(2, 500.0, 1.0, 6.0), 500.0, 5.0, false);
    assert!(!r.found.confident, "{:?}", r.found.confidence);
    let still =
        Motion::from_pictures(W, H, FPS, (0..180).map(|i| (i as f64 / FPS, picture(1, 0.0, 0)))).unwrap();
    let r = find_offset(&still, &log(1, 500.0, 1.0, 6.0), 500.0, 5.0, false);
    assert!(!r.found.confident, "{:?}", r.found);
}

#[test]
fn measures_a_drifting_clock() {
    let motion = video(3, 12.0);
    let truth = 42.0;
    let r = find_offset(&motion, &log(3, truth, 1.001, 12.0), truth + 0.7, 2.0, true);
    let f = &r.found;
    assert!(f.confident, "{f:?}");
    assert!((f.rate - 1.001).abs() < 0.0002, "rate {}", f.rate);
    assert!((f.offset - truth).abs() < 0.5 / FPS, "offset {}", f.offset);
    // Without drift the rate stays 1.
    let r = find_offset(&motion, &log(3, truth, 1.0, 12.0), truth, 2.0, true);
    assert!(
        matches!(r.found.drift, Drift::Measured { rate, .. } if rate == 1.0),
        "{:?}",
        r.found.drift
    );
}

#[test]
fn a_short_run_does_not_measure_drift() {
    let motion = video(1, 3.0);
    let r = find_offset(&motion, &log(1, 0.0, 1.0, 3.0), 0.0, 1.0, true);
    assert!(
        matches!(r.found.drift, Drift::TooShort { .. }),
        "{:?}",
        r.found.drift
    );
}

#[test]
fn a_log_with_nothing_moving_is_refused() {
    let mut still = Log::new();
    let e = still.entities.intern("x");
    for i in 0..10 {
        still.push_frame(
            FrameTime::Instant(i as f64),
            [Primitive {
                shape: Shape::Circle {
                    center: Vec2::new(0.0, 0.0),
                    radius: 1.0,
                },
                style: Style::default(),
                entity: e,
                level: 0,
            }],
        );
    }
    let cal = camera();
    let req = Request {
        video: std::path::Path::new("/nonexistent.mp4"),
        log: &still,
        calibration: &cal,
        guess: None,
        rate: 1.0,
        search: None,
        from: None,
        to: None,
        drift: false,
    };
    let e = find(&req, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(matches!(e, SyncError::NothingMoves), "{e}");
}

#[test]
fn a_wrong_calibration_is_no_confident_match() {
    let motion = video(1, 6.0);
    let lg = log(1, 500.0, 1.0, 6.0);
    // The right camera turned half a turn about the picture's centre.
    let h: Mat3 = [
        [-SCALE, 0.0, W as f64 / 2.0],
        [0.0, SCALE, H as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ];
    let cal = Calibration::from_homography(h).unwrap();
    let req = request(&lg, &cal, 500.0, 5.0, false);
    let movers = Movers::from_log(&lg);
    let r = find_in(
        &req,
        &movers,
        &motion,
        &AtomicBool::new(false),
        &mut |_| {},
        Instant::now(),
    )
    .unwrap();
    assert!(!r.found.confident, "{:?}", (r.found.score, r.found.confidence));
}

#[test]
fn cancelling_stops_the_search() {
    let motion = video(1, 3.0);
    let lg = log(1, 0.0, 1.0, 3.0);
    let cal = camera();
    let req = request(&lg, &cal, 0.0, 5.0, false);
    let movers = Movers::from_log(&lg);
    let e = find_in(
        &req,
        &movers,
        &motion,
        &AtomicBool::new(true),
        &mut |_| {},
        Instant::now(),
    )
    .unwrap_err();
    assert!(e.is_cancelled(), "{e}");
}
