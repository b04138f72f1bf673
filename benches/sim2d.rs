//! The 2D league's readers: loading a whole-match-sized v6 text game log
//! (bar: ≤ 1 s) and a player's debug log.
//!
//! The match is built from the v6 fixture (`tests/data/sim2d/match4.rcg.gz`,
//! real rcssserver output): its header, then its show lines repeated with
//! increasing cycles up to 6,000 (two 3,000-cycle halves, 18.9 MB). Measured
//! on the shared 2-core machine: 0.11 CPU s per load (0.13 s in criterion).
//! The debug log is the HELIOS_Q-9 fixture (3,000 lines and two stoppages).
//!
//! `cargo bench --bench sim2d`; with `--bench` it first prints CPU seconds
//! per load, which a shared machine's load does not dilute.

use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use underlay::sim2d::dlog::{DebugLogOptions, read_debug_log};
use underlay::sim2d::{Side, read_game};

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sim2d")
        .join(name);
    let raw = std::fs::read(&p).expect("the bench's fixture");
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

/// A v6 game log of `cycles` cycles: the fixture's header, then its show
/// lines in turn, each renumbered to the next cycle.
fn whole_match(cycles: u32) -> Vec<u8> {
    let src = fixture("match4.rcg.gz");
    let lines: Vec<&[u8]> = src.split(|&b| b == b'\n').collect();
    let shows: Vec<&[u8]> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with(b"(show "))
        .collect();
    let mut out = Vec::with_capacity(24 << 20);
    for l in lines.iter().take_while(|l| !l.starts_with(b"(playmode")) {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out.extend_from_slice(b"(playmode 1 kick_off_l)\n(team 1 HELIOS_P HELIOS_Q 0 0)\n");
    for cycle in 1..=cycles {
        let show = shows[(cycle as usize - 1) % shows.len()];
        // "(show N rest": replace N.
        let rest = show[6..].splitn(2, |&b| b == b' ').nth(1).unwrap_or_default();
        out.extend_from_slice(format!("(show {cycle} ").as_bytes());
        out.extend_from_slice(rest);
        out.push(b'\n');
        if cycle == 50 {
            out.extend_from_slice(b"(playmode 50 play_on)\n");
        }
    }
    out
}

fn benches_2d(c: &mut Criterion) {
    let game = whole_match(6000);
    let mut g = c.benchmark_group("sim2d");
    g.throughput(Throughput::Bytes(game.len() as u64));
    g.bench_function("v6 game log, 6000 cycles", |b| {
        b.iter(|| black_box(read_game(&game).map(|g| g.records.len()).unwrap_or(0)))
    });
    let dlog = fixture("HELIOS_Q-9.log.gz");
    let opts = DebugLogOptions {
        team: "HELIOS_Q".into(),
        unum: 9,
        side: Side::Right,
        step: 0.1,
    };
    g.throughput(Throughput::Bytes(dlog.len() as u64));
    g.bench_function("debug log", |b| {
        b.iter(|| {
            black_box(
                read_debug_log(&dlog, &opts)
                    .map(|l| l.primitives.len())
                    .unwrap_or(0),
            )
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    targets = benches_2d
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

fn cpu_report() {
    let game = whole_match(6000);
    for _ in 0..3 {
        let (c0, w0) = (thread_cpu(), std::time::Instant::now());
        let records = read_game(&game).map(|g| g.records.len()).unwrap_or(0);
        println!(
            "cpu: v6 game log of {records} records ({:.1} MB) read in {:.3} CPU s ({:.3} s wall clock)",
            game.len() as f64 / 1e6,
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
