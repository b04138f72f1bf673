//! Viewer benchmarks at 1080p: converting frames for the screen, and the
//! background player (decode ahead → shared pipeline with the floor mask
//! computed beside 500 primitives, as the viewer does → texture image) per
//! frame while playing and per seek to a random time.
//!
//! `cargo bench --bench viewer`
//!
//! With `UNDERLAY_VIEWER_SESSION=DIR` set, it writes that video (1080p,
//! 10 s), the log and a session using them into DIR instead, for timing
//! the real window: `xvfb-run underlay view DIR/session.toml --bench-play 10`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use underlay::calib::Calibration;
use underlay::image::RgbImage;
use underlay::log::{FrameTime, Log, Primitive, Rgba, Shape, Style, Vec2};

use underlay::pipeline::{DrawSettings, Pipeline};
use underlay::video::source::{DecoderSource, FrameSource, OpenOptions, ReadAhead, SyntheticSource};
use underlay::viewer::player::Player;
use underlay::viewer::screen::to_color_image_reduced;

const FPS: f64 = 30.0;

/// Video size and length: 1080p for 10 s under `cargo bench`; small and
/// short when `cargo test --all-targets` runs each benchmark once.
fn size() -> (usize, usize, f64) {
    if std::env::args().any(|a| a == "--bench") {
        (1920, 1080, 10.0)
    } else {
        (320, 180, 1.0)
    }
}

fn frame_1080p() -> RgbImage {
    SyntheticSource::new(1920, 1080, FPS, 1).unwrap().render(0).image
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
    // A 4K video in a window: shown at a half, a third or a quarter.
    let img = SyntheticSource::new(3840, 2160, FPS, 1).unwrap().render(0).image;
    let mut g = c.benchmark_group("to_color_image 3840x2160");
    for k in [2, 3, 4] {
        g.bench_function(format!("reduction {k}"), |b| {
            b.iter(|| to_color_image_reduced(&img, k))
        });
    }
    g.finish();
}

/// An H.264 video of the synthetic floor (green field, white lines,
/// a dark disc crossing it), keyframes every 2 s.
fn video(dir: &std::path::Path) -> std::path::PathBuf {
    let (w, h, seconds) = size();
    let path = dir.join("floor.mp4");
    let src = SyntheticSource::new(w, h, FPS, (seconds * FPS) as u64).unwrap();
    let settings = underlay::video::EncoderSettings {
        fps_hint: FPS,
        keyframe_interval: (2.0 * FPS) as u32,
        ..Default::default()
    };
    let mut enc = underlay::video::Encoder::create(&path, w as u32, h as u32, &settings).unwrap();
    for i in 0..(seconds * FPS) as u64 {
        let f = src.render(i);
        enc.push(&f.image, f.time).unwrap();
    }
    enc.finish().unwrap();
    path
}

/// 500 primitives per instantaneous frame at 30 Hz over a 12 × 7 m floor:
/// circles (half filled), lines and rectangles on 20 entities, levels 0–3.
fn log() -> Log {
    let mut log = Log::new();
    let ents: Vec<_> = (0..20)
        .map(|i| log.entities.intern(&format!("robots/r{i}")))
        .collect();
    let colors = [0xff0000, 0x00c000, 0x0040ff, 0xffff00, 0xff8000, 0xffffff];
    for f in 0..(size().2 * FPS) as usize {
        let t = f as f64 / FPS;
        let prims: Vec<Primitive> = (0..500)
            .map(|i| {
                let a = t * 0.5 + i as f64 * 0.37;
                let c = Vec2::new(
                    a.cos() * (1000.0 + i as f64 * 9.0),
                    (a * 1.3).sin() * (600.0 + i as f64 * 5.0),
                );
                let color = Rgba::from_rgb(colors[i % colors.len()]);
                let shape = match i % 5 {
                    0 | 1 => Shape::Circle {
                        center: c,
                        radius: 90.0,
                    },
                    2 | 3 => Shape::Line {
                        start: c,
                        end: c + Vec2::new(400.0, -200.0),
                    },
                    _ => Shape::Rectangle {
                        center: c,
                        size: Vec2::new(300.0, 150.0),
                        orientation: a,
                    },
                };
                let fill = (i % 10 == 0).then(|| color.with_alpha(0x80));
                Primitive {
                    shape,
                    style: Style {
                        fill,
                        thickness: 2.0,
                        ..Style::color(color)
                    },
                    entity: ents[i % ents.len()],
                    level: (i % 4) as i32,
                }
            })
            .collect();
        log.push_frame(FrameTime::Instant(t), prims);
    }
    log
}

fn wait(p: &Player, t: f64) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = p.take_frame()
            && s.requested == Some(t)
        {
            return;
        }
        assert!(Instant::now() < until, "no frame for {t}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn player(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = video(dir.path());
    let log = Arc::new(log());
    // The floor (12 × 7 m, origin at the centre) fills the frame.
    let (w, h, seconds) = size();
    let calib = floor_calibration(w, h);
    let settings = DrawSettings {
        calibration: Some(calib),
        mask: underlay::mask::MaskSettings::Adaptive(Default::default()),
        ..DrawSettings::default()
    };
    let mut g = c.benchmark_group(format!("player {w}x{h}, adaptive mask, 500 primitives"));
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(15));
    let open = || -> Player {
        let src: Box<dyn FrameSource> = Box::new(
            ReadAhead::new(Box::new(
                DecoderSource::open(&path, &OpenOptions::default()).unwrap(),
            ))
            .unwrap(),
        );
        let proc = Pipeline::new(Arc::clone(&log), &settings)
            .unwrap()
            .with_parallel_mask(true);
        Player::spawn(src, Box::new(proc), settings.clone(), || {}).unwrap()
    };
    let p = open();
    let n = (seconds * FPS) as u64 - 1;
    let mut i = 0u64;
    g.bench_function("next frame while playing", |b| {
        b.iter(|| {
            i = (i + 1) % n;
            let t = i as f64 / FPS;
            p.show(t, true);
            wait(&p, t);
        })
    });
    let mut k = 1u64;
    g.bench_function("seek to a random time", |b| {
        b.iter(|| {
            // A fixed pseudo-random walk over the video.
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = ((k >> 33) % (n * 10)) as f64 / (FPS * 10.0) + 0.001;
            p.show(t, false);
            wait(&p, t);
        })
    });
    g.finish();
}

/// The calibration that spreads the 12 × 7 m floor over a `w`×`h` frame.
fn floor_calibration(w: usize, h: usize) -> Calibration {
    let k = w as f64 / 12_800.0;
    Calibration::from_homography([
        [k, 0.0, w as f64 / 2.0],
        [0.0, -k, h as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ])
    .unwrap()
}

/// Writes the video, the log and a session into `dir` (see the module docs).
fn write_session(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    let path = video(dir);
    let (w, h, _) = size();
    underlay::log::save(&log(), &dir.join("log.ulog")).unwrap();
    let mut s = underlay::session::Session::new(path, dir.join("log.ulog"));
    s.calibration = Some(underlay::session::CalibrationSource::Inline(floor_calibration(
        w, h,
    )));
    s.mask = underlay::mask::MaskSettings::Adaptive(Default::default());
    s.save(&dir.join("session.toml")).unwrap();
    println!("wrote {}", dir.join("session.toml").display());
}

criterion_group!(benches, convert, player);

fn main() {
    if let Some(dir) = std::env::var_os("UNDERLAY_VIEWER_SESSION") {
        write_session(std::path::Path::new(&dir));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
