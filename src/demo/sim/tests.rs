//! Tests of the whole simulation: determinism, physical limits, the
//! scripted events and interpolation.

use super::field::ball_bounds;
use super::*;
use crate::geom::vec2::wrap_angle as wrap;

fn check_physics(run: &Run) {
    let bounds = robot_bounds();
    for w in run.snapshots.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!((b.t - a.t - DT).abs() < 1e-9);
        for (ra, rb) in a.robots.iter().zip(&b.robots) {
            let speed = rb.vel.length();
            assert!(
                speed <= MAX_SPEED + 1e-6,
                "{:?} {} too fast: {speed}",
                rb.team,
                rb.id
            );
            let acc = (rb.vel - ra.vel).length() / DT;
            assert!(
                acc <= MAX_ACCEL + 1e-6,
                "t {} {:?} {}: acceleration {acc}",
                b.t,
                rb.team,
                rb.id
            );
            let turn = wrap(rb.heading - ra.heading).abs() / DT;
            assert!(turn <= MAX_TURN_RATE + 1e-6, "turn rate {turn}");
            let moved = (rb.pos - ra.pos).length() / DT;
            assert!(moved <= MAX_SPEED * 1.1, "{:?} {} jumped {moved}", rb.team, rb.id);
        }
    }
    for s in &run.snapshots {
        assert_eq!(s.robots.len(), ROBOTS);
        for (i, r) in s.robots.iter().enumerate() {
            assert_eq!((r.team, r.id), robot_of(i));
            assert!(r.pos.is_finite() && r.vel.is_finite() && r.heading.is_finite());
            assert!(r.pos.x.abs() <= bounds.x + 1e-9 && r.pos.y.abs() <= bounds.y + 1e-9);
            for o in &s.robots[i + 1..] {
                let d = (r.pos - o.pos).length();
                assert!(d >= 2.0 * ROBOT_RADIUS, "t {}: robots overlap ({d} mm)", s.t);
            }
        }
        let bb = ball_bounds();
        assert!(s.ball.pos.is_finite() && s.ball.vel.is_finite() && s.ball.height >= 0.0);
        assert!(s.ball.pos.x.abs() <= bb.x + 1e-9 && s.ball.pos.y.abs() <= bb.y + 1e-9);
    }
}

#[test]
fn same_seed_same_run_and_seeds_differ() {
    let a = simulate(7, 5.0);
    let b = simulate(7, 5.0);
    assert_eq!(a, b);
    let c = simulate(8, 5.0);
    assert_ne!(a.snapshots, c.snapshots);
}

#[test]
fn snapshots_cover_the_duration() {
    for (d, n) in [(1.0, 61), (5.0, 301), (20.0, 1201), (1.01, 62)] {
        let run = simulate(1, d);
        assert_eq!(run.snapshots.len(), n, "{d}");
        assert_eq!(run.plans.len(), n);
        assert!(run.end() >= d - 1e-9 && run.end() < d + DT);
        assert_eq!(run.snapshots[0].t, 0.0);
    }
    assert_eq!(simulate(1, 0.0).snapshots.len(), 1);
    assert_eq!(simulate(1, f64::NAN).snapshots.len(), 1);
}

#[test]
fn physics_stays_within_limits() {
    for seed in 0..6 {
        for d in [1.0, 5.0, 20.0] {
            check_physics(&simulate(seed, d));
        }
    }
}

#[test]
fn the_script_happens() {
    let mut restarts = 0;
    for seed in 0..6 {
        let run = simulate(seed, 20.0);
        let kicked = run.passes.len();
        let received = run.passes.iter().filter(|p| p.received.is_some()).count();
        assert!(
            kicked >= 3 && received >= 2,
            "seed {seed}: {kicked} passes, {received} received"
        );
        assert!(run.touches.len() >= 2 * received);
        // The shot due at 12 s goes out.
        let out = run
            .outs
            .iter()
            .find(|o| o.t >= 12.0)
            .unwrap_or_else(|| panic!("seed {seed}: the ball never went out: {:?}", run.outs));
        assert!(out.t < 16.0, "seed {seed}: out at {}", out.t);
        let on_line = (out.exit.x.abs() - FIELD_LENGTH / 2.0).abs() < 1e-9
            || (out.exit.y.abs() - FIELD_WIDTH / 2.0).abs() < 1e-9;
        assert!(on_line, "{:?}", out.exit);
        assert!(out.last_touch.is_some());
        // One yellow robot comes too close during that stop.
        let end = out.restart.unwrap_or(run.end());
        let close = run
            .too_close
            .iter()
            .find(|v| v.team == Team::Yellow && v.start >= out.t && v.start < end && v.end - v.start > 0.5)
            .unwrap_or_else(|| panic!("seed {seed}: nobody too close: {:?}", run.too_close));
        assert!(close.start >= out.t + STOP_GRACE - 1e-9 && close.closest < STOP_DISTANCE);
        if let Some(restart) = out.restart {
            assert!(restart > out.t + STOP_LENGTH && restart <= run.end());
            restarts += 1;
        }
        assert!(run.plans.iter().any(|p| p.phase == Phase::BallPlacement));
    }
    assert!(restarts >= 3, "only {restarts} of 6 runs restarted");
}

#[test]
fn long_and_odd_runs_are_valid() {
    for (seed, d) in [(3, 60.0), (u64::MAX, 2.5), (12345, 9.0)] {
        let run = simulate(seed, d);
        check_physics(&run);
    }
}

#[test]
fn at_interpolates_and_clamps() {
    let run = simulate(2, 2.0);
    let s = &run.snapshots;
    assert_eq!(run.at(-1.0), s[0]);
    assert_eq!(run.at(f64::NAN), s[0]);
    assert_eq!(run.at(100.0), *s.last().unwrap());
    assert_eq!(run.at(s[10].t).robots[3].pos, s[10].robots[3].pos);
    let mid = run.at((s[10].t + s[11].t) / 2.0);
    let want = s[10].robots[3].pos.lerp(s[11].robots[3].pos, 0.5);
    assert!((mid.robots[3].pos - want).length() < 1e-9);
    assert!((mid.t - (s[10].t + s[11].t) / 2.0).abs() < 1e-12);
    assert_eq!(mid.robots.len(), ROBOTS);
}

#[test]
fn clearances_are_chipped_and_fly_as_thrown() {
    let run = simulate(1, 20.0);
    let chip = run
        .chips
        .first()
        .expect("a chipped clearance in the default demo");
    let end = chip.end.expect("it settles before the end");
    // Its first flight: from the kick to the first bounce.
    let flight: Vec<&Snapshot> = run
        .snapshots
        .iter()
        .filter(|s| s.t > chip.t && s.t < end)
        .take_while(|s| s.ball.height > 0.0)
        .collect();
    assert!(flight.len() > 10);
    let first_bounce = flight[flight.len() - 1].t + 0.05;
    let bounced = run
        .snapshots
        .iter()
        .any(|s| s.t > first_bounce && s.t < end && s.ball.height > 0.0);
    assert!(bounced, "the ball bounces");
    let mut after = run.snapshots.iter().filter(|s| s.t > end && s.t < end + 0.5);
    assert!(after.clone().count() > 0 && after.all(|s| s.ball.height == 0.0));
    // Constant gravity: the height's second difference is −g·dt².
    for w in flight.windows(3) {
        let dd = w[2].ball.height - 2.0 * w[1].ball.height + w[0].ball.height;
        assert!((dd + GRAVITY * DT * DT).abs() < 1e-6, "{dd}");
    }
    // Straight over the floor at constant speed while in the air.
    for w in flight.windows(2) {
        assert!((w[1].ball.vel - w[0].ball.vel).length() < 1e-9);
    }
}
