//! Per-frame costs of the video stage at 1920×1080: the YUV 4:2:0 ↔ RGB
//! conversions around the per-frame work (docs/PERFORMANCE.md, "Export").

use criterion::{Criterion, criterion_group, criterion_main};
use underlay::video::yuv::{Coeffs, InvCoeffs, Plane, PlaneMut, rgb_to_yuv420, yuv420_to_rgb};

const W: usize = 1920;
const H: usize = 1080;

fn conversions(c: &mut Criterion) {
    // A busy picture (no shortcuts from flat areas).
    let rgb: Vec<u8> = (0..W * H * 3)
        .map(|i| ((i * 2_654_435_761) >> 13) as u8)
        .collect();
    let (mut y, mut u, mut v) = (vec![0u8; W * H], vec![0u8; W * H / 4], vec![0u8; W * H / 4]);
    let fwd = Coeffs::for_space(1);
    c.bench_function("rgb_to_yuv420 1080p", |b| {
        b.iter(|| {
            rgb_to_yuv420(
                Plane {
                    data: &rgb,
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
                &fwd,
            )
        })
    });
    let inv = InvCoeffs::for_space(1, false);
    let mut out = vec![0u8; W * H * 3];
    c.bench_function("yuv420_to_rgb 1080p", |b| {
        b.iter(|| {
            yuv420_to_rgb(
                Plane { data: &y, stride: W },
                Plane {
                    data: &u,
                    stride: W / 2,
                },
                Plane {
                    data: &v,
                    stride: W / 2,
                },
                W,
                H,
                &mut out,
                &inv,
            )
        })
    });
}

/// The same conversions through swscale (what FFmpeg's own tools use), for
/// comparison.
fn swscale(c: &mut Criterion) {
    use ffmpeg_next::format::Pixel;
    use ffmpeg_next::frame::Video;
    use ffmpeg_next::software::scaling::{Context, Flags};
    ffmpeg_next::init().expect("ffmpeg init");
    let mut rgb = Video::new(Pixel::RGB24, W as u32, H as u32);
    for (i, b) in rgb.data_mut(0).iter_mut().enumerate() {
        *b = ((i * 2_654_435_761) >> 13) as u8;
    }
    let mut yuv = Video::new(Pixel::YUV420P, W as u32, H as u32);
    let mut to_yuv = Context::get(
        Pixel::RGB24,
        W as u32,
        H as u32,
        Pixel::YUV420P,
        W as u32,
        H as u32,
        Flags::BILINEAR,
    )
    .expect("swscale context");
    c.bench_function("swscale rgb24→yuv420p 1080p", |b| {
        b.iter(|| to_yuv.run(&rgb, &mut yuv).expect("scale"))
    });
    let mut to_rgb = Context::get(
        Pixel::YUV420P,
        W as u32,
        H as u32,
        Pixel::RGB24,
        W as u32,
        H as u32,
        Flags::BILINEAR,
    )
    .expect("swscale context");
    c.bench_function("swscale yuv420p→rgb24 1080p", |b| {
        b.iter(|| to_rgb.run(&yuv, &mut rgb).expect("scale"))
    });
}

criterion_group!(benches, conversions, swscale);
criterion_main!(benches);
