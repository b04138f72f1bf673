//! Tests of the index against small hand-made logs and, by property, the
//! brute-force Algorithm 3 and plain scans.

use super::classes::ESCAPE;
use super::*;
use crate::geom::Vec2;
use crate::log::Primitive;
use crate::log::{EntityId, Shape, Style};
use crate::select::brute_force;
use proptest::prelude::*;

const INF: f64 = f64::INFINITY;

fn prim(entity: u32, level: i32) -> Primitive {
    Primitive {
        shape: Shape::Point {
            position: Vec2::ZERO,
            kind: Default::default(),
            size: 0.0,
        },
        style: Style::default(),
        entity: EntityId(entity),
        level,
    }
}

fn log_of(frames: &[(FrameTime, usize)]) -> Log {
    let mut log = Log::new();
    log.entities.intern("e");
    for &(time, n) in frames {
        log.push_frame(time, (0..n).map(|_| prim(0, 0)));
    }
    log
}

fn persistent(start: f64, end: f64) -> FrameTime {
    FrameTime::Persistent { start, end }
}

/// Indices into `log.primitives` of what a selection returns.
fn positions<'a>(log: &Log, ps: impl IntoIterator<Item = &'a Primitive>) -> Vec<usize> {
    let base = log.primitives.as_ptr();
    ps.into_iter()
        .map(|p| (p as *const Primitive as usize - base as usize) / std::mem::size_of::<Primitive>())
        .collect()
}

#[test]
fn selects_persistent_frames_in_recorded_order_then_the_nearest_instant() {
    let log = log_of(&[
        (FrameTime::Instant(1.0), 1),
        (persistent(0.0, 10.0), 1),
        (FrameTime::Instant(2.0), 2),
        (persistent(-INF, 1.5), 1),
        (persistent(3.0, 3.0), 1),
        (persistent(5.0, 4.0), 1),
        (persistent(f64::NAN, 9.0), 1),
        (FrameTime::Instant(f64::NAN), 1),
    ]);
    let index = Index::new(&log);
    let all = Filter::all(&log, 0);
    assert_eq!(index.instant_count(), 2);
    assert_eq!(index.persistent_count(), 3);
    let s = index.select(&log, crate::time::LogTime(1.6), 0.5, &all);
    assert_eq!(s.frames(), [1, 2]);
    assert_eq!(s.instant_frames(), [2]);
    assert_eq!(positions(&log, &s), [1, 2, 3]);
    assert_eq!(s.len(), 3);
    let s = index.select(&log, crate::time::LogTime(1.4), 0.5, &all);
    assert_eq!(s.frames(), [1, 3, 0]);
    let mut out = vec![99];
    index.frames_at(1.4, 0.5, &mut out);
    assert_eq!(out, [1, 3, 0]);
    // Zero-length interval: exactly at its time.
    assert_eq!(
        index.select(&log, crate::time::LogTime(3.0), 0.1, &all).frames(),
        [1, 4]
    );
    assert_eq!(
        index
            .select(&log, crate::time::LogTime(3.0 + 1e-9), 0.1, &all)
            .frames(),
        [1]
    );
    assert!(
        index
            .select(&log, crate::time::LogTime(f64::NAN), INF, &all)
            .is_empty()
    );
    let none = Filter::from_levels(vec![Filter::HIDDEN]);
    let s = index.select(&log, crate::time::LogTime(1.6), 0.5, &none);
    assert_eq!((s.frames().len(), s.len(), s.is_empty()), (2, 0, true));
    // Owned iteration gives the same.
    assert_eq!(
        positions(&log, index.select(&log, crate::time::LogTime(1.6), 0.5, &all)),
        positions(&log, brute_force(&log, 1.6, 0.5, &all))
    );
}

#[test]
fn thresholds_come_from_the_header_or_the_spacing() {
    let mut log = log_of(&[
        (FrameTime::Instant(0.0), 0),
        (FrameTime::Instant(0.1), 0),
        (FrameTime::Instant(0.1), 0),
        (FrameTime::Instant(0.2), 0),
        (FrameTime::Instant(5.0), 0),
        (FrameTime::Instant(INF), 0),
        (persistent(0.0, 100.0), 0),
    ]);
    let index = Index::new(&log);
    // Gaps 0.1, 0.1, 4.8 (the duplicate and the infinite time do not count).
    assert!((index.default_threshold() - 0.15).abs() < 1e-12);
    log.header.hints.instant_threshold = Some(0.04);
    assert_eq!(Index::new(&log).default_threshold(), 0.04);
    log.header.hints.instant_threshold = Some(f64::NAN);
    assert!((Index::new(&log).default_threshold() - 0.15).abs() < 1e-12);
    log.header.hints.instant_threshold = Some(-1.0);
    assert!((Index::new(&log).default_threshold() - 0.15).abs() < 1e-12);
    let lone = log_of(&[(FrameTime::Instant(3.0), 1), (FrameTime::Instant(3.0), 1)]);
    assert_eq!(Index::new(&lone).default_threshold(), INF);
    assert_eq!(Index::new(&Log::new()).default_threshold(), INF);
    assert_eq!(Index::default().default_threshold(), INF);
}

#[test]
fn range_and_event_queries() {
    let log = log_of(&[
        (persistent(5.0, 6.0), 0),
        (FrameTime::Instant(1.0), 0),
        (persistent(-INF, 0.5), 0),
        (FrameTime::Instant(2.0), 0),
        (persistent(2.0, INF), 0),
        (FrameTime::Instant(-INF), 0),
        (persistent(2.0, 3.0), 0),
        (persistent(7.0, 6.0), 0),
    ]);
    let index = Index::new(&log);
    assert_eq!(index.frames_overlapping(0.5, 2.0), [1, 2, 3, 4, 6]);
    assert_eq!(index.frames_overlapping(3.5, 4.0), [4]);
    assert_eq!(index.frames_overlapping(-INF, -1e300), [2, 5]);
    assert!(index.frames_overlapping(2.0, 1.0).is_empty());
    assert!(index.frames_overlapping(f64::NAN, 1.0).is_empty());
    assert_eq!(index.next_persistent_start(0.0), Some((2.0, 4)));
    assert_eq!(index.next_persistent_start(2.0), Some((5.0, 0)));
    assert_eq!(index.next_persistent_start(5.0), None, "7..6 never applies");
    assert_eq!(index.prev_persistent_start(5.0), Some((2.0, 4)));
    assert_eq!(index.prev_persistent_start(2.0), None);
    assert_eq!(index.next_instant(-5.0), Some((1.0, 1)));
    assert_eq!(index.next_instant(2.0), None);
    assert_eq!(index.prev_instant(1.0), None, "-inf is not a place to jump to");
    assert_eq!(index.prev_instant(1.5), Some((1.0, 1)));
}

#[test]
fn large_random_logs_match_brute_force() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut log = Log::new();
    for e in 0..6 {
        log.entities.intern(&format!("e{e}"));
    }
    for i in 0..3000 {
        let time = if rng.random_bool(0.2) {
            let start = rng.random_range(-10.0..60.0);
            persistent(start, start + rng.random_range(0.0..40.0))
        } else {
            FrameTime::Instant(f64::from(i) / 50.0)
        };
        let n = rng.random_range(0..6);
        log.push_frame(
            time,
            (0..n).map(|_| prim(rng.random_range(0..6), rng.random_range(0..4))),
        );
    }
    let index = Index::new(&log);
    let filter = Filter::from_levels(vec![3, 1, Filter::HIDDEN, 0, 2, 3]);
    let mut most = 0;
    for _ in 0..300 {
        let t = rng.random_range(-12.0..65.0);
        let want = positions(&log, brute_force(&log, t, 0.03, &filter));
        let sel = index.select(&log, crate::time::LogTime(t), 0.03, &filter);
        assert_eq!(positions(&log, &sel), want, "t = {t}");
        most = most.max(want.len());
    }
    assert!(most >= 128, "the radix sort path ran ({most} primitives)");
}

#[test]
fn primitives_beyond_the_class_table_are_read_in_place() {
    // 70,000 distinct (entity, level) pairs: the last 4,465 get no class.
    let mut log = Log::new();
    log.entities.intern("a");
    log.entities.intern("b");
    let level = |i: i32| prim((i % 2) as u32, i / 2);
    for chunk in 0..70 {
        let levels = (chunk * 1000..(chunk + 1) * 1000).map(level);
        let time = if chunk % 3 == 0 {
            persistent(f64::from(chunk), 100.0)
        } else {
            FrameTime::Instant(f64::from(chunk))
        };
        log.push_frame(time, levels);
    }
    let index = Index::new(&log);
    assert_eq!(index.classes.len(), usize::from(ESCAPE));
    assert!(index.class_of.iter().filter(|&&c| c == ESCAPE).count() > 4000);
    for filter in [
        Filter::from_levels(vec![34_800, 34_100]),
        Filter::from_levels(vec![Filter::HIDDEN, i32::MAX]),
        Filter::from_levels(vec![100, 0]),
    ] {
        for t in [5.0, 66.0, 67.2, 68.9, 69.0, 69.4, 150.0] {
            let want = positions(&log, brute_force(&log, t, 0.5, &filter));
            assert_eq!(
                positions(&log, index.select(&log, crate::time::LogTime(t), 0.5, &filter)),
                want,
                "t = {t}"
            );
        }
    }
}

#[test]
fn a_log_index_costs_little_memory() {
    let frames: Vec<(FrameTime, usize)> = (0..1000)
        .map(|i| (FrameTime::Instant(i as f64 / 60.0), 10))
        .chain((0..100).map(|i| (persistent(i as f64, i as f64 + 5.0), 2)))
        .collect();
    let log = log_of(&frames);
    let index = Index::new(&log);
    let prims = log.primitives.len() * std::mem::size_of::<Primitive>();
    assert!(
        index.memory_bytes() * 10 < prims,
        "{} vs {prims}",
        index.memory_bytes()
    );
}

/// Times that make ties, zero-length and infinite intervals, NaN and
/// rounding collisions likely.
fn time() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (-4i32..8).prop_map(|i| f64::from(i) / 2.0),
        1 => Just(INF),
        1 => Just(-INF),
        1 => Just(f64::NAN),
        1 => Just(-0.0),
        1 => prop::sample::select(vec![1e-300, 2e-300, 3e-300, 1e300, -1e300, 1e20, 1e20 + 16384.0]),
        2 => -10.0f64..10.0,
    ]
}

fn frame_time() -> impl Strategy<Value = FrameTime> {
    prop_oneof![
        3 => time().prop_map(FrameTime::Instant),
        2 => (time(), time()).prop_map(|(a, b)| persistent(a, b)),
        1 => time().prop_map(|a| persistent(a, a)),
        1 => (time(), time()).prop_map(|(a, b)| persistent(a.min(b), a.max(b))),
    ]
}

/// A random log over `entities` entities with levels in -2..3.
fn random_log(entities: u32) -> impl Strategy<Value = Log> {
    let frame = (
        frame_time(),
        proptest::collection::vec((0..entities, -2i32..3), 0..4),
    );
    let cuts = proptest::collection::vec(0usize..25, 0..3);
    // Which streams are a simulator's records (each shown until the next).
    let holds = proptest::collection::vec(any::<bool>(), 4);
    (proptest::collection::vec(frame, 0..25), cuts, holds).prop_map(move |(frames, mut cuts, holds)| {
        let mut log = Log::new();
        log.header.hints.cycle = holds[3].then_some(0.1);
        for e in 0..entities {
            log.entities.intern(&format!("e{e}"));
        }
        for (time, ps) in frames {
            log.push_frame(time, ps.into_iter().map(|(e, l)| prim(e, l)));
        }
        // Sometimes a merged log: streams starting at the cuts.
        if !cuts.is_empty() {
            cuts.push(0);
            cuts.sort_unstable();
            cuts.dedup();
            log.streams = cuts
                .into_iter()
                .enumerate()
                .map(|(k, first_frame)| crate::log::Stream {
                    first_frame,
                    instant_threshold: None,
                    cycle: holds[k % 3].then_some(0.1),
                })
                .collect();
        }
        log
    })
}

fn threshold() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.5),
        Just(1.0),
        Just(INF),
        Just(f64::NAN),
        Just(-1.0),
        Just(2.0),
        0.0f64..5.0,
    ]
}

fn filter(entities: u32) -> impl Strategy<Value = Filter> {
    let level = prop_oneof![Just(Filter::HIDDEN), Just(i32::MAX), -3i32..4];
    proptest::collection::vec(level, entities as usize..=entities as usize + 1).prop_map(Filter::from_levels)
}

/// The frames Algorithm 3 picks, by a scan (the rule of `brute_force`,
/// kept even for frames without primitives).
fn brute_frames(log: &Log, t: f64, threshold: f64) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, f) in log.frames.iter().enumerate() {
        if let FrameTime::Persistent { start, end } = f.time
            && start <= t
            && t <= end
        {
            out.push(i);
        }
    }
    for (range, hold) in log.stream_ranges().zip(log.stream_holds()) {
        out.extend(crate::select::brute_instant(log, range, hold, t, threshold));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn index_select_equals_brute_force(
        (log, filter) in (1u32..4).prop_flat_map(|n| (random_log(n), filter(n))),
        ts in proptest::collection::vec(time(), 1..6),
        threshold in threshold(),
    ) {
        let index = Index::new(&log);
        for &t in &ts {
            let want = positions(&log, brute_force(&log, t, threshold, &filter));
            let sel = index.select(&log, crate::time::LogTime(t), threshold, &filter);
            prop_assert_eq!(positions(&log, &sel), want.clone(), "t = {}, threshold = {}", t, threshold);
            prop_assert_eq!(sel.len(), want.len());
            let mut frames = Vec::new();
            index.frames_at(t, threshold, &mut frames);
            prop_assert_eq!(&frames, &brute_frames(&log, t, threshold));
            prop_assert_eq!(sel.frames(), frames);
        }
    }

    #[test]
    fn sort_hits_orders_groups_like_a_full_sort(
        groups in proptest::collection::vec((0u32..70_000, 1usize..6), 0..400),
    ) {
        // Distinct ordinals, each a run of increasing offsets, runs in any order.
        let mut seen = std::collections::HashSet::new();
        let hits: Vec<Hit> = groups
            .iter()
            .filter(|g| seen.insert(g.0))
            .flat_map(|&(o, n)| (0..n).map(move |j| Hit::new(o, j * 3)))
            .collect();
        let mut want = hits.clone();
        want.sort_unstable();
        let mut got = hits;
        sort_hits(&mut got, 70_000);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn nearest_instant_matches_a_scan_on_long_logs(
        times in proptest::collection::vec(time(), 0..400),
        ts in proptest::collection::vec(time(), 1..20),
        threshold in threshold(),
    ) {
        // Long enough to span several sample blocks, with many equal times.
        let frames: Vec<(FrameTime, usize)> = times.iter().map(|&x| (FrameTime::Instant(x), 0)).collect();
        let mut log = log_of(&frames);
        for hold in [None, Some(0.1)] {
            // Around their times, and held until the next (a simulator's).
            log.header.hints.cycle = hold;
            let index = Index::new(&log);
            for &t in &ts {
                let mut got = Vec::new();
                index.instants_at(t, threshold, &mut got);
                prop_assert_eq!(got, brute_frames(&log, t, threshold), "t = {}, hold {:?}", t, hold);
            }
        }
    }

    /// A simulator's records: between two records the earlier shows,
    /// never nothing; after the last, for the threshold.
    #[test]
    fn held_records_show_until_the_next(
        mut times in proptest::collection::vec(-50i32..50, 1..200),
        t in -60.0f64..60.0,
    ) {
        times.sort_unstable();
        let frames: Vec<(FrameTime, usize)> =
            times.iter().map(|&x| (FrameTime::Instant(f64::from(x) / 10.0), 1)).collect();
        let mut log = log_of(&frames);
        log.header.hints.cycle = Some(0.1);
        let index = Index::new(&log);
        let mut got = Vec::new();
        index.instants_at(t, 0.1, &mut got);
        let first = f64::from(times[0]) / 10.0;
        let last = f64::from(*times.last().unwrap()) / 10.0;
        if crate::time::within_rounding(t) >= first && t < last + 0.1 {
            prop_assert_eq!(got.len(), 1, "t = {}", t);
            let shown = log.frames[got[0]].time.start();
            prop_assert!(shown <= crate::time::within_rounding(t));
            // No record between it and t.
            let skipped = times
                .iter()
                .map(|&x| f64::from(x) / 10.0)
                .any(|x| x > shown && x <= crate::time::within_rounding(t));
            prop_assert!(!skipped, "t = {}", t);
        } else {
            prop_assert!(got.is_empty(), "t = {}", t);
        }
    }

    #[test]
    fn range_and_event_queries_match_a_scan(
        log in random_log(1),
        t0 in time(),
        t1 in time(),
    ) {
        let index = Index::new(&log);
        let want: Vec<usize> = log
            .frames
            .iter()
            .enumerate()
            .filter(|_| t0 <= t1)
            .filter(|(_, f)| match f.time {
                FrameTime::Instant(x) => t0 <= x && x <= t1,
                FrameTime::Persistent { start, end } => start <= end && start <= t1 && end >= t0,
            })
            .map(|(i, _)| i)
            .collect();
        prop_assert_eq!(index.frames_overlapping(t0, t1), want);

        // Event navigation: (time, first recorded frame at that time).
        let pick = |persist: bool, after: bool| -> Option<(f64, usize)> {
            let mut best: Option<(f64, usize)> = None;
            for (i, f) in log.frames.iter().enumerate() {
                let (x, ok) = match f.time {
                    FrameTime::Instant(x) => (x, !persist),
                    FrameTime::Persistent { start, end } => (start, persist && start <= end),
                };
                let beyond = if after { x > t0 } else { x < t0 };
                if ok && x.is_finite() && beyond {
                    let better = best.is_none_or(|(b, _)| if after { x < b } else { x > b });
                    if better {
                        best = Some((x, i));
                    }
                }
            }
            best
        };
        prop_assert_eq!(index.next_persistent_start(t0), pick(true, true));
        prop_assert_eq!(index.prev_persistent_start(t0), pick(true, false));
        prop_assert_eq!(index.next_instant(t0), pick(false, true));
        prop_assert_eq!(index.prev_instant(t0), pick(false, false));
    }
}
