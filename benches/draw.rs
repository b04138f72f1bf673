//! Per-frame drawing cost: projecting and rasterizing N primitives onto the
//! overlay and compositing it onto a frame through a floor mask, at 720p
//! and 1080p (mask computation excluded: it has its own benchmark), plus
//! the whole `Pipeline::process` with a precomputed mask.
//!
//! Run: `cargo bench --bench draw` (or `-- draw+composite` for one group). The scene is a robot-soccer field seen
//! by a tilted camera; the primitive mix per 10 is 3 robot circles, 2
//! lines, 2 five-point paths, 1 filled translucent rectangle, 1 short text
//! and 1 marker.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use underlay::calib::Calibration;
use underlay::draw::{Overlay, Painter};
use underlay::image::{FLOOR, MaskImage, RgbImage};
use underlay::log::{FrameTime, Log, MarkerKind, Primitive, Rgba, Shape, Style, ThicknessUnit, Vec2};
use underlay::mask::{MaskError, Masker};
use underlay::pipeline::Pipeline;
use underlay::select::Filter;

/// A camera over a 9 m × 6 m field filling most of a `w × h` frame.
fn camera(w: usize, h: usize) -> Calibration {
    let th = 51f64.to_radians();
    let cam = [0.0, -6500.0, 8000.0];
    let f = 0.75 * w as f64;
    let rows = [
        [1.0, 0.0, 0.0],
        [0.0, -th.sin(), -th.cos()],
        [0.0, th.cos(), -th.sin()],
    ];
    let t: Vec<f64> = rows
        .iter()
        .map(|r| -(r[0] * cam[0] + r[1] * cam[1] + r[2] * cam[2]))
        .collect();
    let k = [
        [f, 0.0, w as f64 / 2.0],
        [0.0, f, h as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ];
    let m = [
        [rows[0][0], rows[0][1], t[0]],
        [rows[1][0], rows[1][1], t[1]],
        [rows[2][0], rows[2][1], t[2]],
    ];
    let mut hm = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            hm[i][j] = (0..3).map(|l| k[i][l] * m[l][j]).sum();
        }
    }
    Calibration::from_homography(hm).expect("camera homography is regular")
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
fn mask(w: usize, h: usize) -> MaskImage {
    MaskImage::from_shape_fn(
        (h, w),
        |(y, x)| {
            if (x / 64 + y / 64) % 7 == 0 { 0 } else { FLOOR }
        },
    )
}

fn frame(w: usize, h: usize) -> RgbImage {
    RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| ((x + 2 * y + 50 * c) % 256) as u8)
}

fn draw_and_composite(c: &mut Criterion) {
    let mut group = c.benchmark_group("draw+composite");
    group.sample_size(30);
    for (w, h) in [(1280, 720), (1920, 1080)] {
        for n in [100, 500] {
            let calib = camera(w, h);
            let mut log = Log::new();
            let prims = primitives(&mut log, n);
            let mask = mask(w, h);
            let mut fr = frame(w, h);
            let mut ov = Overlay::new(w, h);
            let mut painter = Painter::new(w, h);
            group.bench_function(BenchmarkId::new(format!("{w}x{h}"), n), |b| {
                b.iter(|| {
                    ov.clear();
                    for p in &prims {
                        let _ = painter.primitive(&mut ov, &calib, p);
                    }
                    ov.composite(&mut fr, Some(&mask)).expect("sizes match");
                    black_box(&fr);
                })
            });
        }
    }
    group.finish();
}

/// Hands out a precomputed mask (one copy per frame).
struct StaticMask(MaskImage);

impl Masker for StaticMask {
    fn name(&self) -> &str {
        "static"
    }
    fn compute(&mut self, _f: &RgbImage, _t: f64, out: &mut MaskImage) -> Result<(), MaskError> {
        out.clone_from(&self.0);
        Ok(())
    }
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
            let filter = Filter::all(&log, 0);
            let mut p = Pipeline::new(
                log,
                Some(camera(w, h)),
                Box::new(StaticMask(mask(w, h))),
                filter,
                0.0,
                0.1,
            );
            let mut fr = frame(w, h);
            group.bench_function(BenchmarkId::new(format!("{w}x{h}"), n), |b| {
                b.iter(|| black_box(p.process(&mut fr, 0.0).expect("frame processes")))
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
    group.finish();
}

criterion_group!(benches, parts, draw_and_composite, whole_pipeline);
criterion_main!(benches);
