//! Refining on demo frames, whose true calibration is known, from rough
//! calibrations fitted to four perturbed clicks.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::calib::presets::{FieldLine, ssl_division_b};
use crate::calib::{Correspondence, FitOptions, fit};
use crate::demo::render::{Camera, Renderer};
use crate::image::MaskImage;

/// A frame of the demo game filmed by `cam`, and its true calibration.
fn frame(cam: Camera, t: f64) -> (RgbImage, Calibration) {
    let truth = cam.calibration().unwrap();
    let run = crate::demo::sim::simulate(1, t + 0.1);
    let r = Renderer::new(cam, 1);
    let (mut img, mut mask) = (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0)));
    r.render(&run.at(t), 0, &mut img, &mut mask);
    (img, truth)
}

/// A homography fitted to the four named points, each clicked up to
/// `off_px` away from where it is.
fn clicked(truth: &Calibration, names: [&str; 4], off_px: f64, rng: &mut StdRng) -> Calibration {
    let preset = ssl_division_b();
    let pts: Vec<Correspondence> = names
        .iter()
        .map(|n| {
            let world = preset.point(n).unwrap();
            let a = rng.random::<f64>() * std::f64::consts::TAU;
            let off = Vec2::new(a.cos(), a.sin()) * off_px;
            Correspondence {
                image: truth.project(world).unwrap() + off,
                world,
            }
        })
        .collect();
    fit(&pts, &FitOptions::default()).unwrap().calibration
}

/// RMS and largest pixel error against the truth over the field's points.
fn error(calib: &Calibration, truth: &Calibration, size: [usize; 2]) -> (f64, f64) {
    let world = crate::calib::synthetic::grid(Vec2::new(9000.0, 6000.0), 19, 13);
    crate::calib::synthetic::error_in_view(calib, truth, &world, size.map(|v| v as u32))
}

const CORNERS: [&str; 4] = ["corner +x+y", "corner -x+y", "corner -x-y", "corner +x-y"];

#[test]
fn snaps_the_top_camera_to_the_lines_from_clicks_15_px_off() {
    let (img, truth) = frame(Camera::demo(960, 540).unwrap(), 2.0);
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..3 {
        let rough = clicked(&truth, CORNERS, 15.0, &mut rng);
        let before = error(&rough, &truth, [960, 540]);
        let r = refine(&img, &rough, &ssl_division_b(), &RefineOptions::default()).unwrap();
        let after = error(&r.calibration, &truth, [960, 540]);
        assert!(before.1 > 8.0, "the start is rough: {before:?}");
        assert!(
            after.0 < 0.5 && after.1 < 1.2,
            "before {before:?}, after {after:?}, {:#?}",
            r.report
        );
        assert_eq!(r.report.model, Model::Radial);
        assert!(r.report.rms_px < 0.6, "{}", r.report.rms_px);
        assert!(r.report.moved_px > 5.0);
        assert!(r.calibration.distortion().is_some());
        // Nearly every line was found, each with a small residual.
        let found = r.report.lines.iter().filter(|l| l.found > 0).count();
        assert!(found + 2 >= r.report.lines.len(), "{:#?}", r.report.lines);
    }
}

#[test]
fn a_homography_refines_too_and_keeps_the_model_asked_for() {
    let (img, truth) = frame(Camera::demo(960, 540).unwrap(), 2.0);
    let rough = clicked(&truth, CORNERS, 10.0, &mut StdRng::seed_from_u64(9));
    let opts = RefineOptions {
        model: Model::Homography,
        ..RefineOptions::default()
    };
    let r = refine(&img, &rough, &ssl_division_b(), &opts).unwrap();
    assert!(r.calibration.distortion().is_none());
    assert_eq!(r.report.model, Model::Homography);
    // The lens bends the lines: a homography cannot follow them exactly,
    // but it is better than the clicks.
    let (before, after) = (
        error(&rough, &truth, [960, 540]),
        error(&r.calibration, &truth, [960, 540]),
    );
    assert!(after.0 < before.0, "{before:?} {after:?}");
}

#[test]
fn snaps_the_stand_camera_too() {
    // Low and to the side: the far lines are thin and close together, and
    // clicks 15 px off put the far side of the field 60–200 px off.
    let (img, truth) = frame(Camera::stand(1920, 1080).unwrap(), 2.0);
    let names = ["corner +x-y", "corner -x-y", "goal post -x+y", "goal post +x+y"];
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..3 {
        let rough = clicked(&truth, names, 15.0, &mut rng);
        let r = refine(&img, &rough, &ssl_division_b(), &RefineOptions::default()).unwrap();
        let (before, after) = (
            error(&rough, &truth, [1920, 1080]),
            error(&r.calibration, &truth, [1920, 1080]),
        );
        assert!(
            after.0 < 0.5 && before.1 > 30.0,
            "before {before:?}, after {after:?}"
        );
        assert!(
            r.report.warnings.iter().all(|w| !w.contains("wrong lines")),
            "{:?}",
            r.report.warnings
        );
    }
}

#[test]
fn a_wrong_snap_is_never_trusted() {
    // At 960×540 the stand camera's far lines are thinner than a pixel
    // and broken: from these starts a search may lock onto the wrong
    // lines; whatever it returns, a result far from the truth is never
    // called trustworthy, and one that is not says why.
    let (img, truth) = frame(Camera::stand(960, 540).unwrap(), 2.0);
    let names = ["corner +x-y", "corner -x-y", "goal post -x+y", "goal post +x+y"];
    let mut rng = StdRng::seed_from_u64(11);
    let mut untrusted = 0;
    for _ in 0..4 {
        let rough = clicked(&truth, names, 15.0, &mut rng);
        let r = refine(&img, &rough, &ssl_division_b(), &RefineOptions::default()).unwrap();
        let after = error(&r.calibration, &truth, [960, 540]);
        assert!(
            after.0 < 3.0 || !r.report.trusted,
            "trusted but {after:?} off: {:?}",
            r.report.verdict
        );
        if !r.report.trusted {
            untrusted += 1;
            assert!(!r.report.verdict.reasons.is_empty());
        }
    }
    eprintln!("{untrusted} of 4 starts not trusted");
}

#[test]
fn no_lines_is_a_clear_error() {
    let (_, truth) = frame(Camera::demo(320, 180).unwrap(), 0.0);
    let grey = RgbImage::from_elem((180, 320, 3), 90);
    let err = refine(&grey, &truth, &ssl_division_b(), &RefineOptions::default()).unwrap_err();
    assert!(matches!(err, CalibError::LinesNotFound(_)), "{err}");
    assert!(err.to_string().contains("0 of the preset's"), "{err}");
    let tiny = RgbImage::zeros((8, 8, 3));
    assert!(matches!(
        refine(&tiny, &truth, &ssl_division_b(), &RefineOptions::default()),
        Err(CalibError::LinesNotFound(_))
    ));
}

#[test]
fn a_calibration_far_off_is_not_snapped_to_wrong_lines_silently() {
    // The rough calibration puts the field 200 px away: either the lines
    // are not found, or what is found is reported with a large residual;
    // never a confident wrong answer.
    let (img, truth) = frame(Camera::demo(960, 540).unwrap(), 2.0);
    let mut h = *truth.homography();
    h[0][2] += 200.0 * h[2][2];
    let far = Calibration::from_homography(h).unwrap();
    match refine(&img, &far, &ssl_division_b(), &RefineOptions::default()) {
        Err(e) => assert!(
            matches!(e, CalibError::LinesNotFound(_) | CalibError::RankDeficient(_)),
            "{e}"
        ),
        Ok(r) => {
            let (rms, _) = error(&r.calibration, &truth, [960, 540]);
            assert!(
                rms < 1.0 || r.report.rms_px > 1.0 || !r.report.warnings.is_empty(),
                "{rms} {:#?}",
                r.report
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Any picture and any start: a result or an error, never a panic.
    #[test]
    fn never_panics(
        w in 1usize..90, h in 1usize..70, seed in 0u64..1000,
        hm in proptest::collection::vec(-1e4f64..1e4, 9),
        search in proptest::option::of(0.1f64..500.0),
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let img = RgbImage::from_shape_fn((h, w, 3), |_| rng.random::<u8>());
        let m = [[hm[0], hm[1], hm[2]], [hm[3], hm[4], hm[5]], [hm[6], hm[7], hm[8].abs() + 1.0]];
        if let Ok(c) = Calibration::from_homography(m) {
            let opts = RefineOptions { search_px: search, ..RefineOptions::default() };
            let _ = refine(&img, &c, &ssl_division_b(), &opts);
        }
    }
}

/// Distance from `p` to a field line (world units): to its nearest point,
/// or to an end when that is nearest.
fn distance_to_line(line: &FieldLine, p: Vec2) -> f64 {
    let ends = [0.0, 1.0].map(|t| (p - detect::point_at(line, t).0).length());
    detect::nearest_on(line, p)
        .map_or(f64::INFINITY, |(q, _)| (p - q).length())
        .min(ends[0])
        .min(ends[1])
}

/// A football pitch seen from the stand with a barrel lens: mown stripes
/// (edges along the lines' direction, not ridges), lines painted 12 cm
/// wide (2×2 samples a pixel), sky above the horizon, noise.
fn football_frame(w: usize, h: usize) -> (RgbImage, Calibration) {
    let pitch =
        crate::calib::synthetic::pitched_camera(w, h, 0.55 * w as f64, [0.0, -62_000.0, 24_000.0], 24.0);
    let dist = crate::calib::Distortion::radial(
        Vec2::new(w as f64 / 2.0, h as f64 / 2.0),
        0.5 * (w as f64).hypot(h as f64),
        -0.12,
        0.02,
    );
    let truth = Calibration::from_parts(*pitch.homography(), Some(dist))
        .unwrap()
        .with_image_size(w as u32, h as u32);
    let preset = crate::calib::presets::football();
    let mut rng = StdRng::seed_from_u64(3);
    let mut img = RgbImage::zeros((h, w, 3));
    for v in 0..h {
        for u in 0..w {
            let mut acc = [0.0f64; 3];
            for (du, dv) in [(-0.25, -0.25), (0.25, -0.25), (-0.25, 0.25), (0.25, 0.25)] {
                let c = match truth.unproject(Vec2::new(u as f64 + du, v as f64 + dv)) {
                    None => [120.0, 160.0, 215.0],
                    Some(p) => {
                        let on_line = preset
                            .lines
                            .iter()
                            .any(|l| distance_to_line(l, p) <= preset.line_width / 2.0);
                        if on_line {
                            [225.0, 228.0, 222.0]
                        } else {
                            let stripe = if (p.x / 5_000.0).floor() as i64 % 2 == 0 {
                                12.0
                            } else {
                                0.0
                            };
                            [55.0 + stripe, 120.0 + stripe, 50.0 + stripe]
                        }
                    }
                };
                for k in 0..3 {
                    acc[k] += c[k] / 4.0;
                }
            }
            for k in 0..3 {
                let n = (rng.random::<f64>() - 0.5) * 8.0;
                img[[v, u, k]] = (acc[k] + n).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    (img, truth)
}

#[test]
fn snaps_a_football_pitch_with_a_barrel_lens_and_mown_stripes() {
    let (w, h) = (1280, 720);
    let (img, truth) = football_frame(w, h);
    let preset = crate::calib::presets::football();
    // Points a person would click: all in view.
    let names = [
        "corner -x+y",
        "corner +x+y",
        "penalty area +x-y front",
        "penalty area -x-y front",
    ];
    for n in names {
        let p = truth.project(preset.point(n).unwrap()).unwrap();
        assert!(
            p.x > 10.0 && p.y > 10.0 && p.x < w as f64 - 10.0 && p.y < h as f64 - 10.0,
            "{n} at {p:?}"
        );
    }
    let mut rng = StdRng::seed_from_u64(21);
    let pts: Vec<Correspondence> = names
        .iter()
        .map(|n| {
            let world = preset.point(n).unwrap();
            let a = rng.random::<f64>() * std::f64::consts::TAU;
            Correspondence {
                image: truth.project(world).unwrap() + Vec2::new(a.cos(), a.sin()) * 15.0,
                world,
            }
        })
        .collect();
    let rough = fit(&pts, &FitOptions::default()).unwrap().calibration;
    let r = refine(&img, &rough, &preset, &RefineOptions::default()).unwrap();
    let err = |c: &Calibration| {
        let (mut sum, mut n, mut worst) = (0.0, 0, 0.0f64);
        for i in -10..=10 {
            for j in -6..=6 {
                let p = Vec2::new(f64::from(i) * 5_000.0, f64::from(j) * 5_000.0);
                let Some(t) = truth.project(p) else { continue };
                if t.x < 0.0 || t.y < 0.0 || t.x > w as f64 || t.y > h as f64 {
                    continue;
                }
                let d = c.project(p).map_or(f64::INFINITY, |q| (q - t).length());
                sum += d * d;
                n += 1;
                worst = worst.max(d);
            }
        }
        ((sum / f64::from(n)).sqrt(), worst)
    };
    let (before, after) = (err(&rough), err(&r.calibration));
    assert!(before.0 > 5.0, "{before:?}");
    assert!(
        after.0 < 1.0 && after.1 < 2.5,
        "before {before:?} after {after:?}\n{:#?}",
        r.report
    );
    assert!(r.report.coverage > 0.6, "{}", r.report.coverage);
}

/// The truth shifted by `dx` pixels sideways (before the lens).
fn shifted(truth: &Calibration, dx: f64) -> Calibration {
    let h = *truth.homography();
    let moved = [
        [
            h[0][0] + dx * h[2][0],
            h[0][1] + dx * h[2][1],
            h[0][2] + dx * h[2][2],
        ],
        h[1],
        h[2],
    ];
    Calibration::from_parts(moved, truth.distortion().copied()).unwrap()
}

#[test]
fn the_truth_passes_its_check_and_a_shifted_one_does_not() {
    let (img, truth) = frame(Camera::demo(960, 540).unwrap(), 2.0);
    let luma = Luma::of(&img);
    let preset = ssl_division_b();
    let v = verify::verify(&luma, &truth, &preset, 10.0, &[]);
    assert!(v.trusted, "{:?}", v.reasons);
    assert!(v.found_share > 0.6, "{}", v.found_share);
    // 25 px to the side: the lines across x are found beside it.
    let v = verify::verify(&luma, &shifted(&truth, 25.0), &preset, 10.0, &[]);
    assert!(!v.trusted);
    assert!(
        v.lines.iter().any(|l| l.off_share > 0.5 && l.against.is_some()),
        "{:?}",
        v.lines
    );
    // Clicks it does not keep are said.
    let corner = preset.point("corner +x+y").unwrap();
    let click = truth.project(corner).unwrap() + Vec2::new(80.0, 0.0);
    let v = verify::verify(&luma, &truth, &preset, 10.0, &[(click, corner)]);
    assert!(
        !v.trusted && v.reasons.iter().any(|r| r.contains("clicked")),
        "{:?}",
        v.reasons
    );
    assert!((v.click_px.unwrap() - 80.0).abs() < 1e-6);
}

#[test]
fn a_picture_of_parallel_lines_only_is_not_trusted() {
    // Only the lines along x painted: nothing fixes the picture along
    // them, whatever the fit says.
    let (img, truth) = frame(Camera::demo(960, 540).unwrap(), 2.0);
    let mut only = crate::calib::presets::ssl_division_b();
    only.lines
        .retain(|l| matches!(l, FieldLine::Segment { a, b } if (a.y - b.y).abs() < 1e-9));
    let mut pic = RgbImage::from_elem(img.dim(), 40);
    crate::eval::draw_lines(&mut pic, &truth, &only, [230, 230, 230]);
    let v = verify::verify(&Luma::of(&pic), &truth, &ssl_division_b(), 10.0, &[]);
    assert!(!v.trusted);
    assert!(
        v.reasons.iter().any(|r| r.contains("direction")),
        "{:?}",
        v.reasons
    );
}

/// A picture of turf with every line of `preset` painted where `truth`
/// puts it but the touchline at +y, and a bright strip beside that line,
/// `beside` world units beyond it, with `beyond` the colour past the strip.
fn strip_beside_touchline(
    truth: &Calibration,
    size: (usize, usize),
    beside: f64,
    beyond: [u8; 3],
) -> RgbImage {
    let turf = [40u8, 120, 50];
    let preset = ssl_division_b();
    let top = preset
        .lines
        .iter()
        .filter_map(|l| match *l {
            FieldLine::Segment { a, b } if (a.y - b.y).abs() < 1e-9 => Some(a.y),
            _ => None,
        })
        .fold(f64::NEG_INFINITY, f64::max);
    let (w, h) = size;
    let mut pic = RgbImage::zeros((h, w, 3));
    for v in 0..h {
        for u in 0..w {
            let world = truth.unproject(Vec2::new(u as f64, v as f64));
            let c = match world {
                Some(p) if (p.y - (top + beside)).abs() <= preset.line_width / 2.0 => [235, 235, 235],
                Some(p) if p.y > top + beside => beyond,
                _ => turf,
            };
            for k in 0..3 {
                pic[[v, u, k]] = c[k];
            }
        }
    }
    let mut others = preset.clone();
    others
        .lines
        .retain(|l| !matches!(*l, FieldLine::Segment { a, b } if (a.y - b.y).abs() < 1e-9 && a.y == top));
    crate::eval::draw_lines(&mut pic, truth, &others, [235, 235, 235]);
    pic
}

#[test]
fn a_bright_edge_beside_a_line_is_paint_only_with_floor_on_both_sides() {
    let truth = Camera::demo(960, 540).unwrap().calibration().unwrap();
    let preset = ssl_division_b();
    let touchline = |v: &verify::Verdict| {
        v.lines
            .iter()
            .filter(|l| l.against.is_some())
            .map(|l| l.line.clone())
            .collect::<Vec<_>>()
    };
    // Turf beyond the strip: a painted line beside the touchline, which
    // is not painted where the calibration puts it.
    let turf = strip_beside_touchline(&truth, (960, 540), 250.0, [40, 120, 50]);
    let v = verify::verify(&Luma::of(&turf), &truth, &preset, 10.0, &[]);
    assert_eq!(touchline(&v).len(), 1, "{:?}", v.lines);
    assert!(!v.trusted);
    // A red board beyond it: the board's edge, not paint; the touchline is
    // only missing.
    let board = strip_beside_touchline(&truth, (960, 540), 250.0, [200, 30, 40]);
    let v = verify::verify(&Luma::of(&board), &truth, &preset, 10.0, &[]);
    assert!(touchline(&v).is_empty(), "{:?}", v.lines);
}
