//! Reading ROS 2 recordings (issue 34's bar: an indexed 1 GB MCAP with one
//! camera topic asked for reads at ≥ 400 MB/s of the topic read, skipping
//! the rest without decompressing it, memory within a couple of chunks).
//!
//! The input is written first (about 1 GB, in the system's temporary
//! folder, removed at the end): 30 fps of a 1280×720 `bgr8` camera
//! (`sensor_msgs/Image`, 2.76 MB a message) and a 1280×720 `mono16` depth
//! camera (1.84 MB), zstd chunks of 1 MB as `ros2 bag record` writes them,
//! pictures with a gradient and noise so they compress about as a camera's
//! do. Measured: the camera topic read through the index
//! (`BagReader::read`, bytes of the topic per second), the same with both
//! topics (what skipping saves), and the frame source giving RGB frames.
//! The process's peak memory before and after the reads is printed.
//!
//! `cargo bench --bench ros`. Figures are in docs/PERFORMANCE.md.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::BufWriter;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use underlay::ros::bag::BagReader;
use underlay::video::source::OpenOptions;

const W: usize = 1280;
const H: usize = 720;
/// Frames written: about 1 GB of both topics.
const FRAMES: usize = 220;

/// Frames written when the bench is only tried once (`cargo test` runs
/// benches so, without `--bench`): a few, to check it works.
const FRAMES_TRIED: usize = 4;

/// How many frames this run writes.
fn frames() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        FRAMES
    } else {
        FRAMES_TRIED
    }
}

/// A `sensor_msgs/Image` in CDR (little endian).
fn image(stamp_ns: u64, encoding: &str, bytes_per_pixel: usize, frame: usize) -> Vec<u8> {
    fn align(v: &mut Vec<u8>, n: usize) {
        while !(v.len() - 4).is_multiple_of(n) {
            v.push(0);
        }
    }
    fn string(v: &mut Vec<u8>, s: &str) {
        align(v, 4);
        v.extend((s.len() as u32 + 1).to_le_bytes());
        v.extend(s.as_bytes());
        v.push(0);
    }
    let mut v = vec![0, 1, 0, 0];
    v.extend(((stamp_ns / 1_000_000_000) as i32).to_le_bytes());
    v.extend(((stamp_ns % 1_000_000_000) as u32).to_le_bytes());
    string(&mut v, "camera_optical");
    align(&mut v, 4);
    v.extend((H as u32).to_le_bytes());
    v.extend((W as u32).to_le_bytes());
    string(&mut v, encoding);
    v.push(0);
    align(&mut v, 4);
    let step = W * bytes_per_pixel;
    v.extend((step as u32).to_le_bytes());
    v.extend(((step * H) as u32).to_le_bytes());
    let mut seed = (frame as u32).wrapping_mul(2_654_435_761) | 1;
    for y in 0..H {
        for x in 0..step {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            v.push((((x / 3 + y + frame) as u32 & 0xf8) | (seed & 7)) as u8);
        }
    }
    v
}

/// Writes the recording; returns the bytes of camera messages.
fn write(path: &Path) -> u64 {
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let options = mcap::WriteOptions::new()
        .compression(Some(mcap::Compression::Zstd))
        .chunk_size(Some(1 << 20));
    let mut w = mcap::Writer::with_options(file, options).expect("writer");
    let schema = w
        .add_schema("sensor_msgs/msg/Image", "ros2msg", b"")
        .expect("schema");
    let cam = w
        .add_channel(schema, "/camera/image_raw", "cdr", &BTreeMap::new())
        .expect("channel");
    let depth = w
        .add_channel(schema, "/depth/image_raw", "cdr", &BTreeMap::new())
        .expect("channel");
    let mut camera_bytes = 0;
    for k in 0..frames() {
        let t = 1_700_000_000_000_000_000 + k as u64 * 33_333_333;
        for (ch, enc, bpp) in [(cam, "bgr8", 3), (depth, "mono16", 2)] {
            let data = image(t, enc, bpp, k);
            if ch == cam {
                camera_bytes += data.len() as u64;
            }
            let header = mcap::records::MessageHeader {
                channel_id: ch,
                sequence: k as u32,
                log_time: t,
                publish_time: t,
            };
            w.write_to_known_channel(&header, &data).expect("write");
        }
    }
    w.finish().expect("finish");
    camera_bytes
}

/// The process's peak resident memory (VmHWM), MB.
fn peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Reads `topics` of the recording; returns the bytes read.
fn read(path: &Path, names: &[&str]) -> u64 {
    let mut bag = underlay::ros::mcap_file::open(path).expect("open");
    let ids: Vec<u32> = names
        .iter()
        .filter_map(|n| bag.info().by_name(n).map(|t| t.id))
        .collect();
    let mut bytes = 0u64;
    bag.read(&ids, None, &mut |m| {
        bytes += black_box(m.data).len() as u64;
        ControlFlow::Continue(())
    })
    .expect("read");
    bytes
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.mcap");
    let camera_bytes = write(&path);
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    eprintln!(
        "bench ros: {} MB file, camera topic {} MB; peak memory after writing {:.0} MB",
        size >> 20,
        camera_bytes >> 20,
        peak_mb()
    );
    let before = peak_mb();
    let got = read(&path, &["/camera/image_raw"]);
    assert_eq!(got, camera_bytes);
    eprintln!(
        "bench ros: peak memory {before:.0} MB before reading the camera topic, {:.0} MB after",
        peak_mb()
    );
    let mut g = c.benchmark_group("ros");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Bytes(camera_bytes));
    g.bench_function("mcap_camera_topic_indexed", |b| {
        b.iter(|| read(&path, &["/camera/image_raw"]))
    });
    g.throughput(Throughput::Bytes(size));
    g.bench_function("mcap_both_topics_indexed", |b| {
        b.iter(|| read(&path, &["/camera/image_raw", "/depth/image_raw"]))
    });
    g.throughput(Throughput::Elements(frames() as u64));
    g.bench_function("frame_source_rgb_frames", |b| {
        b.iter(|| {
            let mut src = underlay::formats::open_source(&path, &OpenOptions::default()).expect("source");
            let mut n = 0;
            while let Some(f) = src.next_frame().expect("frame") {
                black_box(&f.image);
                n += 1;
            }
            assert_eq!(n, frames());
        })
    });
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
