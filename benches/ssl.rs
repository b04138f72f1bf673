//! Loading SSL game logs: a 10-minute match (the bar is 1 s), plain and
//! gzip'ed, through the normal log loader, and the parts of the work
//! (reading the records alone, decompressing alone).
//!
//! The input repeats the records of the real 87 s match
//! (`../shared/testdata/ssl/match-grsim-87s.log.gz`, or the 7 s fixture
//! `tests/data/ssl/ball-out-35s.log.gz` when that is absent) with their
//! times shifted, to 10 minutes: 4 cameras at 60 Hz, the referee at its
//! own rate, geometry every 30 vision packets.
//!
//! `cargo bench --bench ssl`. Figures are in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use underlay::ssl::file::write::LogWriter;
use underlay::ssl::file::{MessageType, RecordReader};

/// The length of the match built, seconds.
const MATCH_SECONDS: f64 = 600.0;

fn source() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let real = root.join("../shared/testdata/ssl/match-grsim-87s.log.gz");
    if real.exists() {
        real
    } else {
        eprintln!(
            "bench ssl: {} is absent; repeating the 7 s fixture",
            real.display()
        );
        root.join("tests/data/ssl/ball-out-35s.log.gz")
    }
}

/// The records of `path`: (receive time ns, type, payload).
fn records(path: &Path) -> Vec<(i64, MessageType, Vec<u8>)> {
    let raw = std::fs::read(path).expect("read the source log");
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..])
        .read_to_end(&mut plain)
        .expect("decompress the source log");
    let mut r = RecordReader::new(&plain[..], false).expect("an SSL game log");
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("read") {
        out.push((rec.time_ns, rec.kind, rec.payload.to_vec()));
    }
    out
}

/// The source's records repeated, times shifted, to [`MATCH_SECONDS`].
fn ten_minutes(recs: &[(i64, MessageType, Vec<u8>)]) -> Vec<u8> {
    let first = recs.iter().map(|r| r.0).min().unwrap_or(0);
    let last = recs.iter().map(|r| r.0).max().unwrap_or(0);
    let period = last - first + 16_666_667;
    let copies = (MATCH_SECONDS * 1e9 / period as f64).ceil() as i64;
    let mut w = LogWriter::new(Vec::new()).expect("write");
    for c in 0..copies {
        for (t, kind, payload) in recs {
            w.record(t + c * period, *kind, payload).expect("write");
        }
    }
    w.finish().expect("write")
}

fn bench(c: &mut Criterion) {
    let plain = ten_minutes(&records(&source()));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).expect("compress");
    let gz = gz.finish().expect("compress");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let plain_path = dir.path().join("match.log");
    let gz_path = dir.path().join("match.log.gz");
    std::fs::write(&plain_path, &plain).expect("write");
    std::fs::write(&gz_path, &gz).expect("write");

    let log = underlay::formats::load_log(&gz_path).expect("load");
    eprintln!(
        "bench ssl: 10-minute match: {} bytes plain, {} gzip'ed; {} frames, {} primitives ({} MB of primitives)",
        plain.len(),
        gz.len(),
        log.frames.len(),
        log.primitives.len(),
        log.primitives.len() * std::mem::size_of::<underlay::log::Primitive>() / 1_000_000
    );
    drop(log);

    let mut g = c.benchmark_group("ssl_load_10min");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.bench_function("load plain file", |b| {
        b.iter(|| black_box(underlay::formats::load_log(&plain_path).expect("load")))
    });
    g.bench_function("load gzip file", |b| {
        b.iter(|| black_box(underlay::formats::load_log(&gz_path).expect("load")))
    });
    g.bench_function("records only (no decoding)", |b| {
        b.iter(|| {
            let mut r = RecordReader::new(&plain[..], false).expect("read");
            let mut n = 0usize;
            while let Some(rec) = r.next_record().expect("read") {
                n += rec.payload.len();
            }
            black_box(n)
        })
    });
    g.bench_function("gunzip only", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(plain.len());
            flate2::read::MultiGzDecoder::new(&gz[..])
                .read_to_end(&mut out)
                .expect("decompress");
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
