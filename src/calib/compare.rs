//! How far apart two calibrations put a field's lines in a picture: the
//! measure of a calibration against a known one (the evaluation on real
//! labelled frames, and how far a snap moved a start), and of a labelled
//! pixel against the line it lies on.
//!
//! Lines are sampled evenly on the floor (so a long line far away weighs
//! by its length on the field, not by its pixels); a sample counts when
//! the reference puts it inside the picture. Its distance is between the
//! two calibrations' images of the same world point: along the line as
//! well as across it, so a result that slides the lines along themselves
//! is not mistaken for a good one.

use crate::geom::Vec2;
use crate::geom::vec2::distance_to_segment;

use super::Calibration;
use super::presets::FieldLine;

/// Samples per line at most, and on the longest line of a field.
const SAMPLES_ON_LONGEST: f64 = 400.0;

/// How far apart two calibrations put the lines in view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Apart {
    /// Mean distance, pixels.
    pub mean_px: f64,
    /// Largest distance, pixels.
    pub max_px: f64,
    /// Samples in view under the reference.
    pub samples: usize,
    /// Of those, the ones the other calibration cannot map (behind its
    /// camera or beyond its lens): counted at the picture's diagonal.
    pub unmapped: usize,
}

/// How far `other` puts `lines` from where `reference` does, over the
/// samples `reference` maps into a `size[0]`×`size[1]` picture; `None`
/// when no line is in view.
pub fn lines_apart(
    reference: &Calibration,
    other: &Calibration,
    lines: &[FieldLine],
    size: [u32; 2],
) -> Option<Apart> {
    let (w, h) = (f64::from(size[0]), f64::from(size[1]));
    let diag = w.hypot(h);
    let longest = lines.iter().map(FieldLine::length).fold(0.0, f64::max);
    if !(longest.is_finite() && longest > 0.0) {
        return None;
    }
    let step = longest / SAMPLES_ON_LONGEST;
    let (mut sum, mut max, mut samples, mut unmapped) = (0.0, 0.0f64, 0usize, 0usize);
    for line in lines {
        let n = ((line.length() / step).ceil() as usize).clamp(2, SAMPLES_ON_LONGEST as usize);
        for k in 0..n {
            let (world, _) = line.at((k as f64 + 0.5) / n as f64);
            let Some(r) = reference.project(world) else {
                continue;
            };
            if !(r.x >= 0.0 && r.y >= 0.0 && r.x <= w && r.y <= h) {
                continue;
            }
            samples += 1;
            let d = match other.project(world) {
                Some(o) if (o - r).length().is_finite() => (o - r).length(),
                _ => {
                    unmapped += 1;
                    diag
                }
            };
            sum += d;
            max = max.max(d);
        }
    }
    (samples > 0).then(|| Apart {
        mean_px: sum / samples as f64,
        max_px: max,
        samples,
        unmapped,
    })
}

/// Distance from `pixel` to the image of `line` through `calib`, pixels;
/// `None` when the line has no image.
pub fn distance_to_line(calib: &Calibration, line: &FieldLine, pixel: Vec2) -> Option<f64> {
    let mut polys = Vec::new();
    line.project(calib, 0.25, &mut polys);
    polys
        .iter()
        .flat_map(|p| p.windows(2))
        .map(|s| distance_to_segment(pixel, s[0], s[1]))
        .filter(|d| d.is_finite())
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::presets;

    fn camera(dx: f64) -> Calibration {
        Calibration::from_homography([[0.01, 0.0, 640.0 + dx], [0.0, -0.01, 360.0], [0.0, 0.0, 1.0]])
            .unwrap()
            .with_image_size(1280, 720)
    }

    #[test]
    fn a_shift_is_measured_along_and_across_the_lines() {
        let f = presets::football();
        let a = lines_apart(&camera(0.0), &camera(0.0), &f.lines, [1280, 720]).unwrap();
        assert_eq!((a.mean_px, a.max_px, a.unmapped), (0.0, 0.0, 0));
        assert!(a.samples > 1000, "{}", a.samples);
        // Shifted 5 px sideways: every sample, horizontal lines too, is 5 px off.
        let b = lines_apart(&camera(0.0), &camera(5.0), &f.lines, [1280, 720]).unwrap();
        assert!(
            (b.mean_px - 5.0).abs() < 1e-9 && (b.max_px - 5.0).abs() < 1e-9,
            "{b:?}"
        );
        // A picture that sees none of the field has nothing to compare.
        let away = Calibration::from_homography([[0.01, 0.0, 5000.0], [0.0, -0.01, 360.0], [0.0, 0.0, 1.0]])
            .unwrap();
        assert!(lines_apart(&away, &camera(0.0), &f.lines, [1280, 720]).is_none());
    }

    #[test]
    fn a_pixel_is_measured_to_its_line() {
        let line = FieldLine::Segment {
            a: Vec2::new(0.0, -30_000.0),
            b: Vec2::new(0.0, 30_000.0),
        };
        // The halfway line is the column x = 640.
        let d = distance_to_line(&camera(0.0), &line, Vec2::new(652.0, 300.0)).unwrap();
        assert!((d - 12.0).abs() < 1e-9, "{d}");
    }
}
