//! The demo's true camera recovered by `calib solve --model pinhole`'s fit
//! (issue 33): its field's marks and the tops of its goals' walls, as its
//! own camera model projects them, exact and with 0.3 px of noise.

use rand::SeedableRng;
use rand::rngs::StdRng;

use super::render::Camera;
use super::world::goal_walls;
use crate::calib::fit::pinhole::testkit::error_over_picture;
use crate::calib::synthetic::gaussian;
use crate::calib::{Correspondence3, FitOptions, Model, fit_camera, presets};
use crate::geom::Vec2;
use crate::geom::vec3::Vec3;

const SIZE: [u32; 2] = [1280, 720];

fn opts() -> FitOptions {
    FitOptions {
        model: Model::Pinhole,
        image_size: Some(SIZE),
        ..FitOptions::default()
    }
}

/// The demo's camera: its field's marks and the tops of its goals' walls
/// (16 cm), projected by the demo's own camera model; the fit agrees with
/// it over the whole picture.
#[test]
fn the_demo_camera_is_recovered_over_the_whole_picture() {
    let cam = Camera::demo(SIZE[0], SIZE[1]).unwrap();
    let mut world: Vec<Vec3> = presets::ssl_division_b()
        .points
        .iter()
        .map(|p| [p.pos.x, p.pos.y, 0.0])
        .collect();
    for side in [1.0, -1.0] {
        for (lo, hi) in goal_walls(side) {
            for x in [lo[0], hi[0]] {
                for y in [lo[1], hi[1]] {
                    world.push([x, y, hi[2]]);
                }
            }
        }
    }
    // The walls share corners.
    world.sort_by(|a, b| {
        a.iter()
            .zip(b)
            .fold(std::cmp::Ordering::Equal, |o, (x, y)| o.then(x.total_cmp(y)))
    });
    world.dedup();
    let pts: Vec<Correspondence3> = world
        .iter()
        .filter_map(|&p| {
            let [u, v] = cam.project(p)?;
            (u >= 0.0 && v >= 0.0 && u <= 1280.0 && v <= 720.0).then(|| Correspondence3 {
                image: Vec2::new(u, v),
                world: p,
            })
        })
        .collect();
    assert!(pts.len() > 30, "{} points in view", pts.len());
    let truth = cam.calibration().unwrap();
    for noise in [0.0, 0.3] {
        let mut rng = StdRng::seed_from_u64(7);
        let noisy: Vec<Correspondence3> = pts
            .iter()
            .map(|c| Correspondence3 {
                image: c.image + Vec2::new(gaussian(&mut rng), gaussian(&mut rng)) * (noise / 2f64.sqrt()),
                ..*c
            })
            .collect();
        let f = fit_camera(&noisy, &opts()).unwrap();
        let (rms, max, n) = error_over_picture(&f.calibration, &truth, [5000.0, 3500.0], 500.0);
        assert!(n > 1000, "{n}");
        eprintln!(
            "pinhole demo camera, {} points, {noise} px: RMS {:.3} px, leave-one-out {:.4} px; over the picture \
             ({n} points) RMS {rms:.4} px, largest {max:.4} px",
            pts.len(),
            f.report.rms_px,
            f.report.loo_rms_px.unwrap_or(f64::NAN)
        );
        assert!(
            rms < 0.25 && max < 0.5,
            "noise {noise}: rms {rms}, max {max} px over {n} points"
        );
        let pos = f.report.camera.unwrap().position;
        let off = (0..3).map(|i| (pos[i] - cam.eye[i]).powi(2)).sum::<f64>().sqrt();
        assert!(
            off < 100.0,
            "noise {noise}: camera at {pos:?}, truly {:?}",
            cam.eye
        );
    }
}
