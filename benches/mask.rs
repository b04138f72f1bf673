//! Floor-mask benchmarks at 1920×1080 on one core: the whole thesis and
//! adaptive masks (from an RGB picture, and from its YUV 4:2:0 planes as a
//! decoded video frame gives them: `*_planes`), the HSV step against
//! OpenCV's, and morphology with the 3×3 cross for growing iteration
//! counts (ours against OpenCV iterating).
//!
//! `cargo bench --bench mask` (figures in docs/PERFORMANCE.md).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use opencv::core::{Mat, Point, Scalar};
use opencv::prelude::*;
use opencv::{core, imgproc};
use underlay::floor::bits::BitMask;
use underlay::mask::hsv::hue_chroma_value_row;
use underlay::mask::morph::Morphology;
use underlay::mask::synth::{SynthOptions, generate};
use underlay::mask::{AdaptiveMasker, AdaptiveSettings, FloorMask, Masker, ThesisMasker};
use underlay::video::yuv::{Coeffs, Plane, PlaneMut, default_space, rgb_to_yuv420};
use underlay::video::{Picture, Planes};

const W: usize = 1920;
const H: usize = 1080;

fn frame() -> underlay::image::RgbImage {
    generate(&SynthOptions {
        width: W,
        height: H,
        ..SynthOptions::default()
    })
    .frame
}

fn masks(c: &mut Criterion) {
    let f = frame();
    let space = default_space(W, H);
    let (mut y, mut u, mut v) = (vec![0u8; W * H], vec![0u8; W * H / 4], vec![0u8; W * H / 4]);
    rgb_to_yuv420(
        Plane {
            data: f.as_slice().unwrap(),
            stride: 3 * W,
        },
        W,
        H,
        PlaneMut {
            data: &mut y,
            stride: W,
        },
        PlaneMut {
            data: &mut u,
            stride: W / 2,
        },
        PlaneMut {
            data: &mut v,
            stride: W / 2,
        },
        &Coeffs::for_space(space),
    );
    let planes = Picture::Yuv(Planes {
        width: W,
        height: H,
        space,
        full_range: false,
        y: Plane { data: &y, stride: W },
        u: Plane {
            data: &u,
            stride: W / 2,
        },
        v: Plane {
            data: &v,
            stride: W / 2,
        },
    });
    let rgb = Picture::Rgb(&f);
    let mut out = FloorMask::new();
    let mut g = c.benchmark_group("mask_1080p");
    g.sample_size(30);
    let mut thesis = ThesisMasker::new();
    for (name, pic) in [("thesis", rgb), ("thesis_planes", planes)] {
        g.bench_function(name, |b| {
            b.iter(|| thesis.compute(black_box(&pic), 0.0, &mut out).unwrap())
        });
    }
    let mut adaptive = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
    for (name, pic) in [("adaptive", rgb), ("adaptive_planes", planes)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                adaptive.reset();
                adaptive.compute(black_box(&pic), 0.0, &mut out).unwrap()
            })
        });
    }
    g.finish();
}

fn hsv(c: &mut Criterion) {
    let _ = core::set_num_threads(1);
    let f = frame();
    let data = f.as_slice().unwrap();
    let mut g = c.benchmark_group("hsv_1080p");
    g.sample_size(30);
    let (mut h, mut ch, mut v) = (vec![0u8; W], vec![0u8; W], vec![0u8; W]);
    g.bench_function("underlay_hue_chroma_value", |b| {
        b.iter(|| {
            for row in data.chunks_exact(3 * W) {
                hue_chroma_value_row(black_box(row), &mut h, &mut ch, &mut v);
            }
        })
    });
    let src = Mat::new_rows_cols_with_data(H as i32, (3 * W) as i32, data).unwrap();
    let src = src.reshape(3, H as i32).unwrap();
    let mut dst = Mat::default();
    g.bench_function("opencv_cvtColor_RGB2HSV", |b| {
        b.iter(|| imgproc::cvt_color_def(black_box(&src), &mut dst, imgproc::COLOR_RGB2HSV).unwrap())
    });
    g.finish();
}

fn morphology(c: &mut Criterion) {
    let _ = core::set_num_threads(1);
    // Sparse seeds so dilation does not saturate the whole frame.
    let mut s = 12345u64;
    let seeds = BitMask::from_fn(W, H, |_, _| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s.is_multiple_of(2000)
    });
    let mut g = c.benchmark_group("dilate_cross_1080p");
    g.sample_size(20);
    let mut morph = Morphology::new();
    let mut m = seeds.clone();
    for n in [1u32, 2, 4, 8, 14, 24, 39, 40, 64, 128, 254] {
        g.bench_with_input(BenchmarkId::new("underlay", n), &n, |b, &n| {
            b.iter(|| {
                m.copy_from(&seeds);
                morph.dilate(&mut m, n);
            })
        });
    }
    let img = seeds.to_mask_image();
    let src = Mat::new_rows_cols_with_data(H as i32, W as i32, img.as_slice().unwrap()).unwrap();
    let cross =
        imgproc::get_structuring_element(imgproc::MORPH_CROSS, core::Size::new(3, 3), Point::new(-1, -1))
            .unwrap();
    let mut dst = Mat::default();
    for n in [1i32, 2, 4, 8, 14] {
        g.bench_with_input(BenchmarkId::new("opencv_iterated", n), &n, |b, &n| {
            b.iter(|| {
                imgproc::dilate(
                    black_box(&src),
                    &mut dst,
                    &cross,
                    Point::new(-1, -1),
                    n,
                    core::BORDER_CONSTANT,
                    Scalar::all(0.0),
                )
                .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, masks, hsv, morphology);
criterion_main!(benches);
