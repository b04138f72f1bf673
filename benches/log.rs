//! Log reading and writing: throughput of the native reader (fast path
//! and the prost reference), compressed and text reading, the streaming
//! `Writer` and whole-log saving, on an SSL-like log; plus the heap peak
//! of a load relative to the file size.
//!
//! `cargo bench --bench log`. Figures are in docs/PERFORMANCE.md.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use underlay::log::{self, Header, MarkerKind, Rgba, Vec2, Writer};

/// Counts live heap bytes and their peak. A reallocation counts as a new
/// block plus the old one until it is freed, the worst case.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        grew(new);
        let q = unsafe { System.realloc(p, l, new) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A triangle wave in [-1, 1].
fn wave(p: f64) -> f64 {
    let f = p - p.floor();
    if f < 0.5 { 4.0 * f - 1.0 } else { 3.0 - 4.0 * f }
}

const TEAMS: [(&str, &str); 2] = [("blue", "robots/blue"), ("yellow", "robots/yellow")];

/// Writes `frames` frames of an SSL-like game at 60 Hz: 12 filled robot
/// circles with id labels, 6 velocity lines, the ball, 4 pass lines, a
/// pass target marker; a planning polygon every 10th frame. About 36
/// primitives per frame.
fn write_game<W: std::io::Write>(w: &mut Writer<W>, frames: usize) -> u64 {
    let labels: Vec<String> = (0..6).map(|i| i.to_string()).collect();
    let robot_entities: Vec<Vec<String>> = TEAMS
        .iter()
        .map(|(_, t)| (0..6).map(|i| format!("{t}/{i}")).collect())
        .collect();
    w.persistent(f64::NEG_INFINITY, f64::INFINITY)
        .polygon([
            (-4500.0, -3000.0),
            (4500.0, -3000.0),
            (4500.0, 3000.0),
            (-4500.0, 3000.0),
        ])
        .entity("field");
    let mut n = 1;
    for k in 0..frames {
        let s = k as f64 / 60.0;
        w.instant(1_700_000_000.0 + s);
        for (ti, (color, _)) in TEAMS.iter().enumerate() {
            let c = Rgba::named(color);
            for i in 0..6 {
                let fi = i as f64;
                let p = Vec2::new(
                    (ti as f64 * 2.0 - 1.0) * (3800.0 - 700.0 * fi) + 151.3 * wave(s * 0.4 + fi * 0.17),
                    -2200.0 + 800.0 * fi + 203.7 * wave(s * 0.3 + fi * 0.31),
                );
                let e = &robot_entities[ti][i];
                w.circle(p, 90.0).color(c).fill(c).entity(e);
                w.text(p + Vec2::new(110.0, 110.0), &labels[i], 14.0)
                    .entity(e)
                    .level(1);
                if ti == 0 {
                    w.line(p, p + Vec2::new(250.0 * wave(s + fi), 300.0 * wave(s * 0.7 + fi)))
                        .color(Rgba::named("gray"))
                        .entity("plan/velocity")
                        .level(2);
                }
                n += if ti == 0 { 3 } else { 2 };
            }
        }
        let ball = Vec2::new(3000.0 * wave(s * 0.05), 2000.0 * wave(s * 0.07 + 0.3));
        w.circle(ball, 21.5)
            .color(Rgba::named("orange"))
            .fill(Rgba::named("orange"))
            .entity("ball");
        for j in 0..4 {
            let to = Vec2::new(-3000.0 + 1500.0 * j as f64, 1000.0 * wave(s + j as f64 * 0.25));
            w.line(ball, to)
                .color(Rgba::named("cyan"))
                .thickness(2.0)
                .entity("plan/pass")
                .level(j.min(1));
        }
        w.point(ball + Vec2::new(500.0, 0.0), MarkerKind::Dot, 10.0)
            .entity("plan/pass");
        n += 6;
        if k % 10 == 0 {
            w.polygon((0..8).map(|v| {
                ball + Vec2::new(300.0 * wave(v as f64 / 8.0), 300.0 * wave(v as f64 / 8.0 + 0.25))
            }))
            .fill(Rgba::named("cyan").map(|c| c.with_alpha(0x40)))
            .entity("plan/region")
            .level(1);
            n += 1;
        }
    }
    n
}

fn game_bytes(frames: usize) -> (Vec<u8>, u64) {
    let mut w = Writer::new(Vec::new(), Header::default()).expect("writing to memory");
    let n = write_game(&mut w, frames);
    (w.finish().expect("writing to memory"), n)
}

/// Frames of the benchmark log: 20,000 under `cargo bench`; a few hundred
/// when `cargo test --all-targets` runs each benchmark once as a test.
fn frames() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        20_000
    } else {
        300
    }
}

fn reading(c: &mut Criterion) {
    let (bytes, _) = game_bytes(frames());
    let log = log::native::read(&bytes[..]).expect("valid log");
    let mut zst = Vec::new();
    log::native::write(&log, &mut zst, Some(3)).expect("writing to memory");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("game.ulog");
    std::fs::write(&path, &bytes).expect("temp file");
    let (small, _) = game_bytes(frames() / 10);
    let text = log::text::print(&log::native::read(&small[..]).expect("valid log"));

    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("native fast path (memory)", |b| {
        b.iter_with_large_drop(|| log::native::read(black_box(&bytes[..])).expect("valid"))
    });
    g.bench_function("native fast path (file)", |b| {
        b.iter_with_large_drop(|| underlay::formats::load_log(black_box(&path)).expect("valid"))
    });
    g.bench_function("prost reference", |b| {
        b.iter_with_large_drop(|| log::reference::decode(black_box(&bytes)).expect("valid"))
    });
    g.throughput(Throughput::Bytes(zst.len() as u64));
    g.bench_function("native zstd (compressed bytes)", |b| {
        b.iter_with_large_drop(|| log::native::read(black_box(&zst[..])).expect("valid"))
    });
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("text notation", |b| {
        b.iter_with_large_drop(|| log::text::parse(black_box(&text)).expect("valid"))
    });
    g.finish();
}

fn writing(c: &mut Criterion) {
    let (bytes, prims) = game_bytes(frames());
    let log = log::native::read(&bytes[..]).expect("valid log");
    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Elements(prims));
    g.bench_function("Writer builder calls", |b| {
        b.iter(|| {
            let mut w = Writer::new(Vec::with_capacity(bytes.len()), Header::default()).expect("memory");
            write_game(&mut w, frames());
            w.finish().expect("memory")
        })
    });
    g.bench_function("save native", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(bytes.len());
            log::native::write(black_box(&log), &mut out, None).expect("memory");
            out
        })
    });
    g.bench_function("prost reference encode", |b| {
        b.iter(|| log::reference::encode(black_box(&log)))
    });
    g.finish();
}

/// Heap peak of loading the log, relative to the file size, and the file
/// for measuring the resident-set peak of a whole process.
fn memory_report() {
    let (bytes, prims) = game_bytes(frames());
    let path = std::env::temp_dir().join("underlay-bench-game.ulog");
    std::fs::write(&path, &bytes).expect("temp file");
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let log = underlay::formats::load_log(&path).expect("valid");
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let kept = LIVE.load(Ordering::Relaxed) - before;
    let mb = |n: usize| n as f64 / 1e6;
    println!(
        "memory: file {:.1} MB ({} frames, {prims} primitives); load heap peak {:.1} MB = {:.2} × file, \
         kept {:.1} MB = {:.2} × file",
        mb(bytes.len()),
        log.frames.len(),
        mb(peak),
        peak as f64 / bytes.len() as f64,
        mb(kept),
        kept as f64 / bytes.len() as f64,
    );
    println!(
        "memory: wrote {} for `/usr/bin/time -v underlay log info`",
        path.display()
    );
}

/// Nanoseconds this thread has run on a CPU (Linux `schedstat`), if known.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Read throughput per second of CPU time actually spent on a core, which
/// other processes loading the machine do not dilute (wall-clock figures
/// from criterion do).
fn cpu_report() {
    let (bytes, _) = game_bytes(frames());
    let Some(cpu0) = thread_cpu_ns() else {
        println!("cpu: /proc/thread-self/schedstat not available");
        return;
    };
    let wall0 = std::time::Instant::now();
    let runs = 20;
    for _ in 0..runs {
        let log = log::native::read(black_box(&bytes[..])).expect("valid");
        black_box(&log);
        drop(log);
    }
    let cpu = (thread_cpu_ns().unwrap_or(cpu0) - cpu0) as f64 / 1e9;
    let wall = wall0.elapsed().as_secs_f64();
    let mb = (bytes.len() * runs) as f64 / 1e6;
    println!(
        "cpu: native read (with drop) {runs} × {:.1} MB: {:.0} MB per CPU second ({:.0} MB/s wall clock)",
        bytes.len() as f64 / 1e6,
        mb / cpu,
        mb / wall
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = reading, writing
}

fn main() {
    if std::env::args().any(|a| a == "--bench") {
        memory_report();
        cpu_report();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
