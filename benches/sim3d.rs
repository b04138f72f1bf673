//! The 3D league's readers: S-expression parsing and perception-log
//! reading throughput (bar: ≥ 100 MB/s), loading a 10-minute monitor log
//! (bar: ≤ 2 s, gzip'ed, from file to frames), and placing what an agent saw.
//!
//! Inputs are the real rcssservermj run of `../shared/testdata/sim3d/` when
//! present, else the fixtures cut from it (`tests/data/sim3d/`). The
//! 10-minute monitor log is the real one repeated with its times shifted
//! (the 60-s run ten times, or the 3-s fixture 200 times), gzip'ed.
//!
//! `cargo bench --bench sim3d`. Figures are in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use underlay::sexp::Parser;
use underlay::sim3d::{input, monitor, perception, place};

fn data(shared: &str, fixture: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = root.join("../shared/testdata/sim3d").join(shared);
    if s.exists() {
        s
    } else {
        root.join("tests/data/sim3d").join(fixture)
    }
}

fn read(p: &Path) -> Vec<u8> {
    input::read_file(p, input::MAX_MONITOR).expect("the bench's input")
}

/// The monitor log repeated until it spans `seconds`, each copy's `gt`
/// shifted past the previous one's end.
fn stretch(log: &[u8], seconds: f64) -> Vec<u8> {
    let text = String::from_utf8_lossy(log);
    let times: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split("((gt 1 0)").nth(1)?.split(')').next()?.parse().ok())
        .collect();
    let (first, last) = (times[0], times[times.len() - 1]);
    let span = last - first + 0.04;
    let copies = (seconds / span).ceil() as usize;
    let mut out = Vec::with_capacity(log.len() * copies);
    for k in 0..copies {
        for line in text.lines() {
            let Some((head, rest)) = line.split_once("((gt 1 0)") else {
                continue;
            };
            let Some((t, tail)) = rest.split_once(')') else {
                continue;
            };
            let t: f64 = t.parse().unwrap_or(0.0) + k as f64 * span;
            writeln!(out, "{head}((gt 1 0){t:.2}){tail}").unwrap();
        }
    }
    out
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn benches_3d(c: &mut Criterion) {
    let per = read(&data("perceptions/agent_Alpha_1.log.gz", "agent_Alpha_1.log.gz"));
    let mon = read(&data("monitor.rsmp.log.gz", "monitor.rsmp.log.gz"));

    let mut g = c.benchmark_group("sim3d");
    g.throughput(Throughput::Bytes(per.len() as u64));
    g.bench_function("sexp parse, perception log", |b| {
        let mut p = Parser::new();
        b.iter(|| {
            let mut n = 0;
            for line in per.split(|&c| c == b'\n') {
                n += p.parse(line).map_or(0, |d| d.node_count());
            }
            black_box(n)
        })
    });
    g.bench_function("perception log read", |b| {
        b.iter(|| black_box(perception::parse(&per).map(|l| l.messages.len())))
    });
    let parsed = perception::parse(&per).expect("perception log");
    let mlog = monitor::parse(&mon).expect("monitor log");
    g.throughput(Throughput::Elements(parsed.messages.len() as u64));
    g.bench_function("place and draw what the agent saw", |b| {
        b.iter(|| {
            let placed = place::place(&parsed, Some(&mlog), &place::PlaceOptions::default());
            black_box(place::to_log(&placed, &parsed, Some(&mlog)).primitives.len())
        })
    });

    let ten = stretch(&mon, 600.0);
    let ten_gz = gzip(&ten);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("monitor-10min.rsmp.log.gz");
    std::fs::write(&file, &ten_gz).unwrap();
    println!(
        "10-minute monitor log: {:.1} MB ({:.1} MB gzip'ed)",
        ten.len() as f64 / 1e6,
        ten_gz.len() as f64 / 1e6
    );
    g.throughput(Throughput::Bytes(ten.len() as u64));
    g.bench_function("monitor log 10 min, parse", |b| {
        b.iter(|| black_box(monitor::parse(&ten).map(|m| m.frames.len())))
    });
    g.bench_function("monitor log 10 min, load gzip'ed file", |b| {
        b.iter(|| black_box(monitor::load(&file).map(|m| m.frames.len())))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = benches_3d
}

/// CPU seconds this thread has run (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Throughput per CPU second and wall-clock time of the two bars, which a
/// shared machine's load dilutes in criterion's wall-clock figures.
fn cpu_report() {
    let per = read(&data("perceptions/agent_Alpha_1.log.gz", "agent_Alpha_1.log.gz"));
    let runs = (200_000_000 / per.len()).clamp(3, 200);
    let (c0, w0) = (thread_cpu(), std::time::Instant::now());
    for _ in 0..runs {
        black_box(perception::parse(&per).map(|l| l.messages.len()).unwrap_or(0));
    }
    let (cpu, wall) = (thread_cpu() - c0, w0.elapsed().as_secs_f64());
    let mb = (per.len() * runs) as f64 / 1e6;
    println!(
        "cpu: perception log read {runs} × {:.2} MB: {:.0} MB per CPU second ({:.0} MB/s wall clock)",
        per.len() as f64 / 1e6,
        mb / cpu,
        mb / wall
    );
    let mon = read(&data("monitor.rsmp.log.gz", "monitor.rsmp.log.gz"));
    let ten = gzip(&stretch(&mon, 600.0));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("monitor-10min.rsmp.log.gz");
    std::fs::write(&file, &ten).unwrap();
    for _ in 0..3 {
        let (c0, w0) = (thread_cpu(), std::time::Instant::now());
        let frames = monitor::load(&file).map(|m| m.frames.len()).unwrap_or(0);
        println!(
            "cpu: 10-minute monitor log ({frames} frames) loaded in {:.2} CPU s ({:.2} s wall clock)",
            thread_cpu() - c0,
            w0.elapsed().as_secs_f64()
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--bench") {
        cpu_report();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
