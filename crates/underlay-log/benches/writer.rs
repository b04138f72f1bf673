//! The cost of logging: a million simple shapes written to a file with
//! the [`Writer`], as a robot program writes them (a frame of 100 shapes
//! at 60 Hz, each naming one of a dozen entities), uncompressed and with
//! zstd; the file's `finish` (last buffer written, file closed) included.
//!
//! `cargo bench -p underlay-log --bench writer`. Figures are in
//! docs/PERFORMANCE.md ("The log crate").

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use underlay_log::{Header, Rgba, Writer, WriterOptions};

/// Shapes per frame.
const PER_FRAME: usize = 100;

/// Shapes written per measurement: a million under `cargo bench`; ten
/// thousand when `cargo test --all-targets` runs the benchmark once as a
/// test.
fn shapes() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        1_000_000
    } else {
        10_000
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Circle,
    Line,
}

/// Writes `n` shapes of `kind` to a new file at `path`; returns its size.
fn write_file(path: &Path, n: usize, kind: Kind, opts: WriterOptions) -> u64 {
    let entities: Vec<String> = (0..12)
        .map(|i| format!("robots/{}/{}", ["blue", "yellow"][i / 6], i % 6))
        .collect();
    let colors = [Rgba::named("blue"), Rgba::named("yellow")];
    let mut w = Writer::create_with_options(path, Header::default(), opts).expect("temp file");
    for k in 0..n {
        let i = k % PER_FRAME;
        if i == 0 {
            w.instant(1_700_000_000.0 + (k / PER_FRAME) as f64 / 60.0);
        }
        let x = (k % 9000) as f64 - 4500.0;
        let y = (i as f64 - 50.0) * 60.0;
        let b = match kind {
            Kind::Circle => w.circle((x, y), 90.0),
            Kind::Line => w.line((x, y), (x + 250.0, y - 120.0)),
        };
        b.color(colors[i % 12 / 6]).entity(&entities[i % 12]);
    }
    w.finish().expect("temp file");
    std::fs::metadata(path).expect("temp file").len()
}

fn writing(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shapes.ulog");
    let n = shapes();
    let zstd = WriterOptions {
        zstd_level: Some(3),
        ..WriterOptions::default()
    };
    for (name, kind, opts) in [
        ("circles", Kind::Circle, WriterOptions::default()),
        ("lines", Kind::Line, WriterOptions::default()),
        ("circles, zstd 3", Kind::Circle, zstd),
    ] {
        let size = write_file(&path, n, kind, opts);
        println!("{name}: {n} shapes make a file of {:.1} MB", size as f64 / 1e6);
    }
    let mut g = c.benchmark_group(format!("write {n} shapes to a file"));
    g.throughput(Throughput::Elements(n as u64));
    for (name, kind, opts) in [
        ("circles", Kind::Circle, WriterOptions::default()),
        ("lines", Kind::Line, WriterOptions::default()),
        ("circles, zstd 3", Kind::Circle, zstd),
    ] {
        g.bench_function(name, |b| b.iter(|| write_file(black_box(&path), n, kind, opts)));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = writing
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
