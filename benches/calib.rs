//! Calibration benchmark: accuracy on synthetic views (printed as a table
//! first), then criterion timings of fitting and of mapping shapes.
//!
//! Accuracy: 50 random cameras over an SSL Division A field (its 25 named
//! points), 1280×720, radial distortion k1 = −0.3 (OpenCV convention),
//! 1 px RMS noise on every image point. For each model: leave-one-out RMS
//! (against the noisy held-out points, so 1.0 is the noise floor) and the
//! RMS mapping error against the true camera over a 13×10 grid on the
//! field. Run: `cargo bench --bench calib`.

use std::hint::black_box;

use criterion::Criterion;
use underlay::calib::synthetic::{View, ViewSpec, grid, random_view, rms_mapping_error};
use underlay::calib::{FitOptions, Method, Model, fit, presets};
use underlay::log::Vec2;

const NOISE_PX: f64 = 1.0;
const K1: f64 = -0.3;
const VIEWS: u64 = 50;

fn field() -> Vec<Vec2> {
    presets::ssl_division_a().points.iter().map(|p| p.pos).collect()
}

/// The named points plus a 7 × 5 grid: 60 points.
fn dense_field() -> Vec<Vec2> {
    let named = field();
    let extra: Vec<Vec2> = grid(Vec2::new(10000.0, 7000.0), 7, 5)
        .into_iter()
        .filter(|p| !named.contains(p))
        .collect();
    [named, extra].concat()
}

fn views(k1: f64) -> Vec<View> {
    views_of(k1, &field())
}

fn views_of(k1: f64, world: &[Vec2]) -> Vec<View> {
    (0..VIEWS)
        .filter_map(|seed| {
            random_view(
                &ViewSpec {
                    k1,
                    noise_px: NOISE_PX,
                    seed: 7000 + seed,
                    ..ViewSpec::default()
                },
                world,
            )
        })
        .collect()
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Name, model, image size given to the fit, views.
type Case<'a> = (&'static str, Model, Option<[u32; 2]>, &'a [View]);

fn accuracy() {
    let check = grid(Vec2::new(12000.0, 9000.0), 13, 10);
    let sparse = views(K1);
    let dense = views_of(K1, &dense_field());
    println!(
        "calibration accuracy: {} views, k1 = {K1}, noise {NOISE_PX} px RMS, 25 points unless noted",
        sparse.len()
    );
    println!(
        "{:<34} {:>12} {:>12} {:>12} {:>14} {:>14}",
        "model", "rms median", "loo median", "loo p90", "truth median", "truth p90"
    );
    let cases: [Case; 5] = [
        (
            "radial (image size known)",
            Model::Radial,
            Some([1280, 720]),
            &sparse,
        ),
        ("radial (centre from the points)", Model::Radial, None, &sparse),
        ("homography", Model::Homography, Some([1280, 720]), &sparse),
        ("radial, 60 points", Model::Radial, Some([1280, 720]), &dense),
        (
            "homography, 60 points",
            Model::Homography,
            Some([1280, 720]),
            &dense,
        ),
    ];
    for (name, model, image_size, views) in cases {
        let (mut rms, mut loo, mut truth) = (Vec::new(), Vec::new(), Vec::new());
        for v in views {
            let opts = FitOptions {
                model,
                method: Method::LeastSquares,
                image_size,
                ..FitOptions::default()
            };
            match fit(&v.points, &opts) {
                Ok(f) => {
                    rms.push(f.report.rms_px);
                    loo.push(f.report.loo_rms_px.unwrap_or(f64::NAN));
                    truth.push(rms_mapping_error(&f.calibration, &v.truth, &check));
                }
                Err(e) => println!("  {name}: fit failed: {e}"),
            }
        }
        println!(
            "{name:<34} {:>9.3} px {:>9.3} px {:>9.3} px {:>11.3} px {:>11.3} px",
            percentile(&mut rms, 0.5),
            percentile(&mut loo, 0.5),
            percentile(&mut loo, 0.9),
            percentile(&mut truth, 0.5),
            percentile(&mut truth, 0.9),
        );
    }
}

fn timings(c: &mut Criterion) {
    let v = &views(K1)[0];
    let plain = &views(0.0)[0];
    let mut g = c.benchmark_group("calib");
    g.sample_size(20);
    for (name, model, view) in [
        ("fit homography 25 points", Model::Homography, plain),
        ("fit radial 25 points", Model::Radial, v),
    ] {
        let opts = FitOptions {
            model,
            image_size: Some([1280, 720]),
            ..FitOptions::default()
        };
        g.bench_function(name, |b| b.iter(|| fit(black_box(&view.points), &opts).unwrap()));
    }
    // Mapping: the whole SSL field's lines through the distorted camera.
    let lines = presets::ssl_division_a().lines;
    let mut out = Vec::new();
    g.bench_function("project SSL field lines, distorted, 0.5 px", |b| {
        b.iter(|| {
            out.clear();
            for l in &lines {
                l.project(&v.truth, 0.5, &mut out);
            }
            black_box(out.len())
        })
    });
    let plain_calib = underlay::calib::Calibration::from_homography(*v.truth.homography()).unwrap();
    g.bench_function("project SSL field lines, homography, 0.5 px", |b| {
        b.iter(|| {
            out.clear();
            for l in &lines {
                l.project(&plain_calib, 0.5, &mut out);
            }
            black_box(out.len())
        })
    });
    g.finish();
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` only smoke-tests the timings.
    if std::env::args().any(|a| a == "--bench") {
        accuracy();
    }
    let mut c = Criterion::default().configure_from_args();
    timings(&mut c);
    c.final_summary();
}
