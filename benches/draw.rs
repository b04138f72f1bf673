//! Per-frame drawing cost: projecting and rasterizing N primitives onto the
//! overlay and compositing it onto a frame through a floor mask, at 720p
//! and 1080p (mask computation excluded: it has its own benchmark), plus
//! the whole `Pipeline::process` with a precomputed mask. Compositing is
//! measured both onto an RGB picture (`composite`) and into a picture's
//! YUV 4:2:0 planes through a block mask (`composite-planes`, what export
//! and live do since issue 48); `pipeline-planes` is the whole pipeline on
//! a decoded frame's planes.
//!
//! Run: `cargo bench --bench draw` (or `-- draw+composite` for one group).
//! `opencv-reference` draws the same projected geometry the thesis's way
//! (OpenCV `LINE_AA` on a frame copy, masked copy back) for a ratio. The scene is a robot-soccer field seen
//! by a tilted camera; the primitive mix per 10 is 3 robot circles, 2
//! lines, 2 five-point paths, 1 filled translucent rectangle, 1 short text
//! and 1 marker.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group};
use underlay::calib::Calibration;
use underlay::calib::synthetic::pitched_camera;
use underlay::draw::{Overlay, Painter};
use underlay::floor::bits::BitMask;
use underlay::image::{FLOOR, MaskImage, RgbImage};
use underlay::log::{FrameTime, Log, MarkerKind, Primitive, Rgba, Shape, Style, ThicknessUnit, Vec2};
use underlay::mask::{FloorMask, MaskError, Masker};
use underlay::pipeline::{DrawSettings, InstantThreshold, Pipeline};
use underlay::select::FilterSpec;
use underlay::video::yuv::{PlaneMut, default_space};
use underlay::video::{Decoder, Encoder, EncoderSettings, Picture, PlanesMut, SourceFrame};

/// A camera over a 9 m × 6 m field filling most of a `w × h` frame.
fn camera(w: usize, h: usize) -> Calibration {
    pitched_camera(w, h, 0.75 * w as f64, [0.0, -6500.0, 8000.0], 51.0)
}

/// `n` primitives spread over the field, deterministic.
fn primitives(log: &mut Log, n: usize) -> Vec<Primitive> {
    let e = log.entities.intern("bench");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move |lo: f64, hi: f64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        lo + (hi - lo) * (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let c = Vec2::new(rnd(-4500.0, 4500.0), rnd(-3000.0, 3000.0));
        let style = Style {
            color: Rgba::from_rgb([0xff8000, 0x30ff30, 0x2080ff, 0xffff00][i % 4]),
            fill: None,
            thickness: 3.0,
            unit: ThicknessUnit::Pixels,
        };
        let shape = match i % 10 {
            0..=2 => Shape::Circle {
                center: c,
                radius: 90.0,
            },
            3 | 4 => Shape::Line {
                start: c,
                end: c + Vec2::new(rnd(-2000.0, 2000.0), rnd(-2000.0, 2000.0)),
            },
            5 | 6 => Shape::Polygon {
                vertices: (0..5)
                    .map(|k| c + Vec2::new(k as f64 * 400.0, rnd(-300.0, 300.0)))
                    .collect(),
                closed: false,
            },
            7 => Shape::Rectangle {
                center: c,
                size: Vec2::new(800.0, 500.0),
                orientation: rnd(0.0, 3.0),
            },
            8 => Shape::Text {
                anchor: c,
                text: format!("robot {i}").into(),
                size: 0.0,
            },
            _ => Shape::Point {
                position: c,
                kind: MarkerKind::Cross,
                size: 0.0,
            },
        };
        let style = if i % 10 == 7 {
            Style {
                fill: Some(Rgba(0x2050_ff60)),
                ..style
            }
        } else {
            style
        };
        out.push(Primitive {
            shape,
            style,
            entity: e,
            level: 0,
        });
    }
    out
}

/// Floor everywhere except a few robot-sized holes.
fn mask(w: usize, h: usize) -> FloorMask {
    FloorMask::from_image(MaskImage::from_shape_fn((h, w), |(y, x)| {
        if (x / 64 + y / 64) % 7 == 0 { 0 } else { FLOOR }
    }))
}

/// The same holes in a block mask, as the colour methods make it.
fn block_mask(w: usize, h: usize) -> FloorMask {
    let bits = BitMask::from_fn(w / 2, h / 2, |x, y| (x / 32 + y / 32) % 7 != 0);
    FloorMask::from_blocks(bits, w, h)
}

/// A picture's YUV 4:2:0 planes, owned.
struct Planes420 {
    w: usize,
    h: usize,
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
}

impl Planes420 {
    fn new(w: usize, h: usize) -> Self {
        Planes420 {
            w,
            h,
            y: (0..w * h).map(|i| (16 + i % 200) as u8).collect(),
            u: (0..w * h / 4).map(|i| (90 + i % 70) as u8).collect(),
            v: (0..w * h / 4).map(|i| (100 + i % 50) as u8).collect(),
        }
    }

    fn planes(&mut self) -> PlanesMut<'_> {
        PlanesMut {
            width: self.w,
            height: self.h,
            space: default_space(self.w, self.h),
            y: PlaneMut {
                data: &mut self.y,
                stride: self.w,
            },
            u: PlaneMut {
                data: &mut self.u,
                stride: self.w / 2,
            },
            v: PlaneMut {
                data: &mut self.v,
                stride: self.w / 2,
            },
        }
    }
}

fn frame(w: usize, h: usize) -> RgbImage {
    RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| ((x + 2 * y + 50 * c) % 256) as u8)
}

fn draw_and_composite(c: &mut Criterion) {
    let mut group = c.benchmark_group("draw+composite");
    group.sample_size(30);
    for (w, h) in [(1280, 720), (1920, 1080)] {
        for n in [100, 500] {
            let mut ours = Ours::new(w, h, n);
            group.bench_function(BenchmarkId::new(format!("{w}x{h}"), n), |b| {
                b.iter(|| ours.frame())
            });
        }
    }
    group.finish();
}

/// Hands out a precomputed mask (one copy per frame).
struct StaticMask(FloorMask);

impl Masker for StaticMask {
    fn name(&self) -> &str {
        "static"
    }
    fn compute(&mut self, _f: &Picture<'_>, _t: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        out.clone_from(&self.0);
        Ok(())
    }
}

/// A decoded frame of `w`×`h` with its planes (a short lossless video made
/// once in a temporary folder).
fn decoded_frame(w: usize, h: usize) -> SourceFrame {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("frame.mp4");
    let settings = EncoderSettings {
        crf: 0,
        preset: "ultrafast".into(),
        ..EncoderSettings::default()
    };
    let mut e = Encoder::create(&path, w as u32, h as u32, &settings).expect("encoder");
    e.push(&frame(w, h), 0.0).expect("frame");
    e.finish().expect("video");
    let mut d = Decoder::open(&path).expect("decoder");
    d.set_keep_yuv(true);
    d.set_defer_rgb(true);
    let f = d.next_frame().expect("decodes").expect("a frame");
    assert!(f.yuv.is_some(), "8-bit 4:2:0 keeps its planes");
    f
}

fn whole_pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(30);
    for (w, h) in [(1280, 720), (1920, 1080)] {
        for n in [100, 500] {
            let mut log = Log::new();
            let prims = primitives(&mut log, n);
            log.push_frame(FrameTime::Instant(0.0), prims);
            let log = Arc::new(log);
            let settings = DrawSettings {
                calibration: Some(camera(w, h)),
                filter: FilterSpec {
                    max_level: Some(0),
                    ..FilterSpec::default()
                },
                instant_threshold: InstantThreshold::Seconds(0.1),
                ..DrawSettings::default()
            };
            let mut p = Pipeline::new(log, &settings)
                .expect("settings apply")
                .with_masker(Box::new(StaticMask(mask(w, h))));
            let mut fr = SourceFrame::new(0, 0.0, frame(w, h));
            group.bench_function(BenchmarkId::new(format!("{w}x{h}"), n), |b| {
                b.iter(|| black_box(p.process(&mut fr).expect("frame processes")))
            });
            // The same on a decoded frame's planes, through a block mask:
            // each run draws on a fresh reference to the decoded picture
            // (so the planes are copied once, as in export).
            let decoded = decoded_frame(w, h);
            let mut p = p.with_masker(Box::new(StaticMask(block_mask(w, h))));
            let mut fr = decoded.clone();
            group.bench_function(BenchmarkId::new(format!("planes-{w}x{h}"), n), |b| {
                b.iter(|| {
                    fr.clone_from(&decoded);
                    black_box(p.process(&mut fr).expect("frame processes"))
                })
            });
        }
    }
    group.finish();
}

/// Where the time goes at 720p: each primitive kind alone (10 of each,
/// as in the 100-primitive mix), and compositing the full 100.
fn parts(c: &mut Criterion) {
    let mut group = c.benchmark_group("parts-720p");
    group.sample_size(20);
    let (w, h) = (1280, 720);
    let calib = camera(w, h);
    let mut log = Log::new();
    let prims = primitives(&mut log, 100);
    let mask = mask(w, h);
    let mut fr = frame(w, h);
    let mut ov = Overlay::new(w, h);
    let mut painter = Painter::new(w, h);
    let kinds = [
        ("circles", &[0, 1, 2][..]),
        ("lines", &[3, 4]),
        ("paths", &[5, 6]),
        ("filled-rects", &[7]),
        ("text", &[8]),
        ("markers", &[9]),
    ];
    for (name, ks) in kinds {
        let sel: Vec<_> = prims
            .iter()
            .enumerate()
            .filter(|(i, _)| ks.contains(&(i % 10)))
            .map(|(_, p)| p.clone())
            .collect();
        group.bench_function(name, |b| {
            b.iter(|| {
                ov.clear();
                for p in &sel {
                    let _ = painter.primitive(&mut ov, &calib, p);
                }
            })
        });
    }
    ov.clear();
    for p in &prims {
        let _ = painter.primitive(&mut ov, &calib, p);
    }
    group.bench_function("composite", |b| {
        b.iter(|| ov.composite(&mut fr, Some(&mask)).expect("sizes"))
    });
    let blocks = block_mask(w, h);
    let mut planes = Planes420::new(w, h);
    group.bench_function("composite-planes", |b| {
        b.iter(|| {
            ov.composite_planes(&mut planes.planes(), Some(&blocks))
                .expect("sizes")
        })
    });
    group.finish();
}

/// One frame drawn the thesis's way (Algorithm 5 with OpenCV): every
/// primitive with `LINE_AA` onto a copy of the frame (sub-pixel
/// coordinates; fills opaque and Hershey text, as OpenCV has no alpha and
/// no real fonts), then copied back where the mask says floor. Same
/// projected geometry as ours: a reference for the ratio.
struct OpenCvReference {
    calib: Calibration,
    prims: Vec<Primitive>,
    frame: opencv::core::Mat,
    mask: opencv::core::Mat,
    out: opencv::core::Mat,
    rings: Vec<Vec<Vec2>>,
}

impl OpenCvReference {
    fn new(w: usize, h: usize, n: usize) -> Self {
        use opencv::core::{self, Mat, Scalar};
        use opencv::prelude::*;
        let mut log = Log::new();
        let frame = Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC3, Scalar::all(90.0))
            .expect("frame");
        let m = mask(w, h).to_image();
        let mask = Mat::new_rows_cols_with_data(h as i32, w as i32, m.as_slice().expect("contiguous"))
            .expect("mask")
            .try_clone()
            .expect("mask copy");
        OpenCvReference {
            calib: camera(w, h),
            prims: primitives(&mut log, n),
            out: frame.try_clone().expect("copy"),
            frame,
            mask,
            rings: Vec::new(),
        }
    }

    fn frame(&mut self) {
        use opencv::core::{Point, Scalar, Vector};
        use opencv::imgproc;
        use opencv::prelude::*;
        const SHIFT: i32 = 4;
        let fix = |v: Vec2| Point::new((v.x * 16.0).round() as i32, (v.y * 16.0).round() as i32);
        let calib = &self.calib;
        let rings = &mut self.rings;
        let mut drawn = self.frame.try_clone().expect("copy");
        for p in &self.prims {
            let c = p.style.color;
            let col = Scalar::new(c.b() as f64, c.g() as f64, c.r() as f64, 0.0);
            rings.clear();
            match &p.shape {
                Shape::Circle { center, radius } => calib.project_circle(*center, *radius, 0.25, rings),
                Shape::Line { start, end } => calib.project_polyline(&[*start, *end], false, 0.25, rings),
                Shape::Rectangle {
                    center,
                    size,
                    orientation,
                } => calib.project_polyline(
                    &Shape::rectangle_corners(*center, *size, *orientation),
                    true,
                    0.25,
                    rings,
                ),
                Shape::Polygon { vertices, closed } => calib.project_polyline(vertices, *closed, 0.25, rings),
                Shape::Text { anchor, text, .. } => {
                    if let Some(a) = calib.project(*anchor) {
                        let org = Point::new(a.x as i32, a.y as i32);
                        let font = imgproc::FONT_HERSHEY_SIMPLEX;
                        let _ = imgproc::put_text(
                            &mut drawn,
                            text,
                            org,
                            font,
                            0.6,
                            col,
                            2,
                            imgproc::LINE_AA,
                            false,
                        );
                    }
                }
                Shape::Point { position, .. } => {
                    if let Some(a) = calib.project(*position) {
                        let at = Point::new(a.x as i32, a.y as i32);
                        let cross = imgproc::MARKER_TILTED_CROSS;
                        let _ = imgproc::draw_marker(&mut drawn, at, col, cross, 12, 2, imgproc::LINE_AA);
                    }
                }
                Shape::Raised(r) => {
                    underlay::draw::raised::raised_outline(r, calib, 0.25, rings);
                }
                // The bench's scenes have none.
                Shape::Picture(_) | Shape::Cells(_) => {}
                Shape::Sector {
                    center,
                    outer,
                    start,
                    sweep,
                    ..
                } => calib.project_arc(*center, *outer, *start, start + sweep, 0.25, rings),
            }
            let pts: Vector<Vector<Point>> = rings
                .iter()
                .map(|r| r.iter().map(|&v| fix(v)).collect())
                .collect();
            if pts.is_empty() {
                continue;
            }
            if p.style.fill.is_some() {
                let _ = imgproc::fill_poly(&mut drawn, &pts, col, imgproc::LINE_AA, SHIFT, Point::new(0, 0));
            }
            let _ = imgproc::polylines(&mut drawn, &pts, false, col, 3, imgproc::LINE_AA, SHIFT);
        }
        drawn
            .copy_to_masked(&mut self.out, &self.mask)
            .expect("masked copy");
        black_box(&self.out);
    }
}

/// Our draw + composite for one frame, with its buffers.
struct Ours {
    calib: Calibration,
    prims: Vec<Primitive>,
    mask: FloorMask,
    frame: RgbImage,
    overlay: Overlay,
    painter: Painter,
}

impl Ours {
    fn new(w: usize, h: usize, n: usize) -> Self {
        let mut log = Log::new();
        Ours {
            calib: camera(w, h),
            prims: primitives(&mut log, n),
            mask: mask(w, h),
            frame: frame(w, h),
            overlay: Overlay::new(w, h),
            painter: Painter::new(w, h),
        }
    }

    fn frame(&mut self) {
        self.overlay.clear();
        for p in &self.prims {
            let _ = self.painter.primitive(&mut self.overlay, &self.calib, p);
        }
        self.overlay
            .composite(&mut self.frame, Some(&self.mask))
            .expect("sizes match");
        black_box(&self.frame);
    }
}

fn opencv_reference(c: &mut Criterion) {
    let mut group = c.benchmark_group("opencv-reference");
    group.sample_size(30);
    for (w, h) in [(1280, 720), (1920, 1080)] {
        for n in [100, 500] {
            let mut r = OpenCvReference::new(w, h, n);
            group.bench_function(BenchmarkId::new(format!("{w}x{h}"), n), |b| b.iter(|| r.frame()));
        }
    }
    group.finish();
}

/// CPU time of the whole process (all threads) in seconds, from
/// `/proc/self/stat` (Linux; clock ticks of 1/100 s). Steadier than
/// wall-clock time when other processes share the cores.
fn process_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU milliseconds per call of `frame`, over at least 2 s of CPU.
fn cpu_ms_per_frame(mut frame: impl FnMut()) -> Option<f64> {
    for _ in 0..20 {
        frame();
    }
    let t0 = process_cpu_seconds()?;
    let mut n = 0u32;
    loop {
        frame();
        n += 1;
        let t = process_cpu_seconds()?;
        if t - t0 >= 2.0 {
            return Some((t - t0) * 1e3 / n as f64);
        }
    }
}

/// `cargo bench --bench draw -- cpu-time`: CPU time per frame of ours and
/// of the OpenCV reference, and their ratio, for each size and N.
fn cpu_time() {
    if !std::env::args().any(|a| a == "cpu-time") {
        return;
    }
    for (w, h) in [(1280, 720), (1920, 1080)] {
        for n in [100, 500] {
            let mut ours = Ours::new(w, h, n);
            let mut reference = OpenCvReference::new(w, h, n);
            match (
                cpu_ms_per_frame(|| ours.frame()),
                cpu_ms_per_frame(|| reference.frame()),
            ) {
                (Some(a), Some(b)) => println!(
                    "cpu-time {w}x{h}/{n}: draw+composite {a:.3} ms, opencv-reference {b:.3} ms, ratio {:.2}",
                    b / a
                ),
                _ => println!("cpu-time: /proc/self/stat is not available here"),
            }
        }
    }
}

criterion_group!(
    benches,
    parts,
    draw_and_composite,
    whole_pipeline,
    opencv_reference
);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    cpu_time();
}
