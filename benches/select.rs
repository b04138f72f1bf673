//! Selection engine benchmarks: index build, one filtered query, the
//! brute-force Algorithm 3 on the same log, and the per-query latency
//! distribution.
//!
//! The log: one hour at 60 Hz (216,000 instantaneous frames × 50
//! primitives) plus 20,000 persistent frames with random intervals
//! (log-uniform durations from 0.1 s to 10 min, a few open-ended),
//! recorded interleaved in start order as a robot would write them.
//!
//! `cargo bench --bench select` runs the full size and prints the latency
//! distribution and memory figures after criterion's output; without
//! `--bench` (under `cargo test`) it runs a one-minute log once, as a smoke
//! test.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use underlay::log::{FrameTime, Log, Primitive, Rgba, Shape, Style, Vec2};
use underlay::select::{Filter, FilterSpec, Index, brute_force};

const HZ: f64 = 60.0;
const PER_FRAME: usize = 50;
const THRESHOLD: f64 = 1.5 / HZ;

/// The benchmark log: `seconds` of 60 Hz frames and `persistent` frames.
fn synthetic_log(seconds: f64, persistent: usize) -> Log {
    let mut rng = StdRng::seed_from_u64(3);
    let mut log = Log::new();
    let mut entities = Vec::new();
    for team in ["blue", "yellow"] {
        for r in 0..8 {
            entities.push(log.entities.intern(&format!("robots/{team}/{r}")));
        }
    }
    for name in [
        "ball",
        "planner/paths",
        "planner/targets",
        "referee",
        "vision/raw",
    ] {
        entities.push(log.entities.intern(name));
    }
    let prim = |rng: &mut StdRng| {
        let entity = entities[rng.random_range(0..entities.len())];
        let center = Vec2::new(
            rng.random_range(-6000.0..6000.0),
            rng.random_range(-4500.0..4500.0),
        );
        let shape = if rng.random_bool(0.7) {
            Shape::Circle {
                center,
                radius: rng.random_range(20.0..200.0),
            }
        } else {
            Shape::Line {
                start: center,
                end: center + Vec2::new(300.0, 100.0),
            }
        };
        Primitive {
            shape,
            style: Style::color(Rgba::from_rgb(rng.random_range(0..0xffffff))),
            entity,
            level: rng.random_range(0..5),
        }
    };
    let mut intervals: Vec<(f64, f64)> = (0..persistent)
        .map(|_| {
            let start = rng.random_range(0.0..seconds);
            let end = if rng.random_bool(0.001) {
                f64::INFINITY
            } else {
                start + 10f64.powf(rng.random_range(-1.0..600f64.log10()))
            };
            (start, end)
        })
        .collect();
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut next = intervals.iter().peekable();
    let frames = (seconds * HZ) as usize;
    for i in 0..frames {
        let t = i as f64 / HZ;
        while let Some(&&(start, end)) = next.peek().filter(|iv| iv.0 <= t) {
            let n = rng.random_range(1..=5);
            let ps: Vec<Primitive> = (0..n).map(|_| prim(&mut rng)).collect();
            log.push_frame(FrameTime::Persistent { start, end }, ps);
            next.next();
        }
        let ps: Vec<Primitive> = (0..PER_FRAME).map(|_| prim(&mut rng)).collect();
        log.push_frame(FrameTime::Instant(t), ps);
    }
    log
}

/// Robots up to level 3 except the yellow team, the planner up to 0, the
/// referee hidden, everything else up to 2.
fn spec() -> FilterSpec {
    FilterSpec {
        max_level: Some(2),
        exclude: vec!["robots/yellow".into()],
        hidden: ["referee".to_owned()].into(),
        levels: [("robots".to_owned(), 3), ("planner".to_owned(), 0)].into(),
        ..FilterSpec::default()
    }
}

/// Runs one query to the end, touching every returned primitive.
fn query(index: &Index, log: &Log, t: f64, filter: &Filter) -> usize {
    let mut n = 0;
    for p in &index.select(log, underlay::time::LogTime(t), THRESHOLD, filter) {
        black_box(p);
        n += 1;
    }
    n
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Times `queries` random queries one by one and prints the distribution.
fn latency_report(log: &Log, index: &Index, filter: &Filter, queries: usize, brute: usize) {
    let (lo, hi) = log
        .time_range()
        .map_or((0.0, 1.0), |(lo, hi)| (lo, hi.min(lo + 7200.0)));
    let mut rng = StdRng::seed_from_u64(7);
    let times: Vec<f64> = (0..queries).map(|_| rng.random_range(lo..hi)).collect();
    // Warm up caches and branch predictors as a playing viewer would be.
    for &t in times.iter().take(1000) {
        black_box(query(index, log, t, filter));
    }
    let mut lat_us = Vec::with_capacity(queries);
    let mut excess_us = Vec::with_capacity(queries);
    let mut counts = Vec::with_capacity(queries);
    let mut within = 0usize;
    for &t in &times {
        let start = Instant::now();
        let n = query(index, log, t, filter);
        let us = start.elapsed().as_secs_f64() * 1e6;
        let budget_us = 20.0 + 0.05 * n as f64;
        within += usize::from(us <= budget_us);
        lat_us.push(us);
        excess_us.push(us - 0.05 * n as f64);
        counts.push(n as f64);
    }
    let mean_us = lat_us.iter().sum::<f64>() / lat_us.len() as f64;
    lat_us.sort_by(f64::total_cmp);
    excess_us.sort_by(f64::total_cmp);
    counts.sort_by(f64::total_cmp);
    println!(
        "select: {} queries: latency mean {:.2} µs, p50 {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.1} µs",
        queries,
        mean_us,
        percentile(&lat_us, 0.5),
        percentile(&lat_us, 0.99),
        percentile(&lat_us, 0.999),
        lat_us[lat_us.len() - 1]
    );
    println!(
        "select: returned primitives p50 {:.0}, p99 {:.0}, max {:.0}; latency − 50 ns × returned: p99 {:.2} µs; \
         within 20 µs + 50 ns × returned: {:.3} %",
        percentile(&counts, 0.5),
        percentile(&counts, 0.99),
        counts[counts.len() - 1],
        percentile(&excess_us, 0.99),
        100.0 * within as f64 / queries as f64
    );
    // Brute force on a sample of the same times, for the speed-up.
    let mut brute_us = Vec::with_capacity(brute);
    for &t in times.iter().take(brute) {
        let start = Instant::now();
        let n = brute_force(log, t, THRESHOLD, filter).len();
        brute_us.push(start.elapsed().as_secs_f64() * 1e6);
        assert_eq!(
            n,
            query(index, log, t, filter),
            "index and brute force differ at t = {t}"
        );
    }
    brute_us.sort_by(f64::total_cmp);
    println!(
        "select: brute force on {} of those times: median {:.0} µs = {:.0}× the index's median",
        brute,
        percentile(&brute_us, 0.5),
        percentile(&brute_us, 0.5) / percentile(&lat_us, 0.5)
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (seconds, persistent, queries, brute) = if full {
        (3600.0, 20_000, 200_000, 200)
    } else {
        (60.0, 300, 2_000, 5)
    };
    let t = Instant::now();
    let log = synthetic_log(seconds, persistent);
    let prim_bytes = log.primitives.len() * size_of::<Primitive>();
    println!(
        "select: synthetic log of {} frames, {} primitives ({:.0} MB of primitives, {} B each), made in {:.1} s",
        log.frames.len(),
        log.primitives.len(),
        prim_bytes as f64 / 1e6,
        size_of::<Primitive>(),
        t.elapsed().as_secs_f64()
    );
    let filter = match spec().compile(&log) {
        Ok(f) => f,
        Err(e) => panic!("benchmark filter: {e}"),
    };

    let mut builds = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        black_box(Index::new(&log));
        builds.push(t.elapsed().as_secs_f64());
    }
    builds.sort_by(f64::total_cmp);
    let index = Index::new(&log);
    println!(
        "select: index build best {:.1} ms, median {:.1} ms (5 runs); index memory {:.2} MB = {:.3} % of the primitives",
        builds[0] * 1e3,
        builds[2] * 1e3,
        index.memory_bytes() as f64 / 1e6,
        100.0 * index.memory_bytes() as f64 / prim_bytes as f64
    );

    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let mut g = c.benchmark_group("select");
    g.sample_size(10);
    g.bench_function("index_build", |b| b.iter(|| Index::new(black_box(&log))));
    let mut rng = StdRng::seed_from_u64(11);
    let times: Vec<f64> = (0..4096).map(|_| rng.random_range(0.0..seconds)).collect();
    g.bench_function("brute_force_query", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % times.len();
            brute_force(&log, times[i], THRESHOLD, &filter).len()
        })
    });
    g.sample_size(100);
    g.bench_function("index_query_filtered", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % times.len();
            query(&index, &log, times[i], &filter)
        })
    });
    g.finish();
    c.final_summary();

    latency_report(&log, &index, &filter, queries, brute);
}
