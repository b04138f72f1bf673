//! What tests of full-camera fits share: how far apart two calibrations
//! put points over the whole picture (used here and by the demo's tests,
//! which recover the demo's own camera).

use crate::calib::Calibration;

/// RMS and largest distance between two calibrations over the whole
/// picture: world points on a grid over `extent` (half-sizes, mm) at
/// heights from the floor to `top`, wherever the truth puts them in the
/// picture.
pub(crate) fn error_over_picture(
    fit: &Calibration,
    truth: &Calibration,
    extent: [f64; 2],
    top: f64,
) -> (f64, f64, usize) {
    let (mut sum, mut worst, mut n) = (0.0, 0.0f64, 0usize);
    for i in 0..=40 {
        for j in 0..=30 {
            for h in 0..=4 {
                let p = [
                    extent[0] * (f64::from(i) / 20.0 - 1.0),
                    extent[1] * (f64::from(j) / 15.0 - 1.0),
                    top * f64::from(h) / 4.0,
                ];
                let Some(t) = truth
                    .project3(p)
                    .filter(|t| t.x >= 0.0 && t.y >= 0.0 && t.x <= 1280.0 && t.y <= 720.0)
                else {
                    continue;
                };
                let d = fit.project3(p).map_or(f64::INFINITY, |q| (q - t).length());
                sum += d * d;
                worst = worst.max(d);
                n += 1;
            }
        }
    }
    ((sum / n.max(1) as f64).sqrt(), worst, n)
}
