//! Viewer benchmarks: converting frames for the screen, and the background
//! player's time per frame while playing and per random seek, at 1080p.
//!
//! `cargo bench --bench viewer`

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use underlay::image::RgbImage;
use underlay::viewer::player::{Passthrough, Player, ViewSettings, to_color_image_reduced};
use underlay::viewer::source::{FrameSource, ReadAhead, SyntheticSource};

fn frame_1080p() -> RgbImage {
    SyntheticSource::new(1920, 1080, 30.0, 1).unwrap().render(0).image
}

fn convert(c: &mut Criterion) {
    let img = frame_1080p();
    let mut g = c.benchmark_group("to_color_image 1920x1080");
    for k in [1, 2] {
        g.bench_function(format!("reduction {k}"), |b| {
            b.iter(|| to_color_image_reduced(&img, k))
        });
    }
    g.finish();
}

fn wait(p: &Player, t: f64) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(s) = p.take_frame()
            && s.requested == Some(t)
        {
            return;
        }
        assert!(Instant::now() < until, "no frame for {t}");
        std::thread::yield_now();
    }
}

fn player(c: &mut Criterion) {
    let fps = 30.0;
    let src = SyntheticSource::new(1920, 1080, fps, 3000).unwrap();
    let src: Box<dyn FrameSource> = Box::new(ReadAhead::new(Box::new(src)).unwrap());
    let p = Player::spawn(src, Box::new(Passthrough), ViewSettings::default(), || {}).unwrap();
    let mut g = c.benchmark_group("player 1920x1080");
    g.sample_size(30);
    let mut i = 0u64;
    g.bench_function("next frame while playing", |b| {
        b.iter(|| {
            i = (i + 1) % 2900;
            let t = i as f64 / fps;
            p.show(t, true);
            wait(&p, t);
        })
    });
    let mut k = 0u64;
    g.bench_function("seek to a random time", |b| {
        b.iter(|| {
            // A fixed pseudo-random walk over the 100 s source.
            k = (k * 6364136223846793005 + 1442695040888963407) % 2_999_993;
            let t = (k % 2900) as f64 / fps + 0.01;
            p.show(t, false);
            wait(&p, t);
        })
    });
    g.finish();
}

criterion_group!(benches, convert, player);
criterion_main!(benches);
