//! A floor mask that knows where the field is: with a calibration and a
//! field preset, only the field's picture region (grown by a margin) can
//! be floor, and only it is measured. Beyond it — stands, trees, fences,
//! anything past the horizon — nothing is floor, whatever its colour.
//!
//! It wraps any other method: pixels outside the region are made grey for
//! that method (grey has no hue, so they weigh nothing in its statistics),
//! and its mask is cut to the region.

use crate::calib::Calibration;
use crate::calib::presets::FieldPreset;
use crate::geom::Vec2;
use crate::image::{FLOOR, MaskImage, RgbImage};

use super::{MaskError, MaskStep, Masker};

/// How far beyond the field of play the floor may reach, as a fraction of
/// the field's larger side (run-off areas, boundary lines).
const MARGIN: f64 = 0.08;

/// A method cut to a field's region (see the module docs).
pub struct FieldMasker {
    inner: Box<dyn Masker>,
    calibration: Calibration,
    preset: FieldPreset,
    /// The region for the last picture size (255 inside).
    region: MaskImage,
    /// The picture with everything outside the region grey.
    inside: RgbImage,
}

impl FieldMasker {
    pub fn new(inner: Box<dyn Masker>, calibration: Calibration, preset: FieldPreset) -> Self {
        FieldMasker {
            inner,
            calibration,
            preset,
            region: MaskImage::zeros((0, 0)),
            inside: RgbImage::zeros((0, 0, 3)),
        }
    }

    /// The field's region in a `width × height` picture.
    pub fn region(calibration: &Calibration, preset: &FieldPreset, width: usize, height: usize) -> MaskImage {
        let half = preset.size * 0.5;
        let m = MARGIN * preset.size.x.max(preset.size.y);
        let (x, y) = (half.x + m, half.y + m);
        let corners = [
            Vec2::new(-x, -y),
            Vec2::new(x, -y),
            Vec2::new(x, y),
            Vec2::new(-x, y),
        ];
        let mut rings = Vec::new();
        calibration.project_polyline(&corners, true, 0.5, &mut rings);
        fill(&rings, width, height)
    }

    /// The frame with the outside grey, the region made for its size.
    fn prepare(&mut self, frame: &RgbImage) -> &RgbImage {
        let (h, w, _) = frame.dim();
        if self.region.dim() != (h, w) {
            self.region = Self::region(&self.calibration, &self.preset, w, h);
        }
        // The buffer of the frame before is reused.
        if frame.is_standard_layout() {
            self.inside.clone_from(frame);
        } else {
            self.inside = frame.as_standard_layout().into_owned();
        }
        if let Some(data) = self.inside.as_slice_mut() {
            for (px, &r) in data.chunks_exact_mut(3).zip(self.region.iter()) {
                if r != FLOOR {
                    px.fill(128);
                }
            }
        }
        &self.inside
    }

    /// Cuts `out` to the region.
    fn cut(&self, out: &mut MaskImage) {
        if out.dim() == self.region.dim() {
            out.zip_mut_with(&self.region, |m, &r| {
                if r != FLOOR {
                    *m = 0;
                }
            });
        }
    }
}

impl Masker for FieldMasker {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn compute(&mut self, frame: &RgbImage, time: f64, out: &mut MaskImage) -> Result<(), MaskError> {
        self.prepare(frame);
        self.inner.compute(&self.inside, time, out)?;
        self.cut(out);
        Ok(())
    }

    fn advance(&mut self, frame: &RgbImage, time: f64) -> Result<MaskStep, MaskError> {
        self.prepare(frame);
        self.inner.advance(&self.inside, time)
    }

    fn compute_step(
        &mut self,
        frame: &RgbImage,
        time: f64,
        step: &MaskStep,
        out: &mut MaskImage,
    ) -> Result<(), MaskError> {
        self.prepare(frame);
        self.inner.compute_step(&self.inside, time, step, out)?;
        self.cut(out);
        Ok(())
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// Fills polylines as one even–odd region into a `width × height` mask.
fn fill(rings: &[Vec<Vec2>], width: usize, height: usize) -> MaskImage {
    let mut out = MaskImage::zeros((height, width));
    let mut xs = Vec::new();
    for y in 0..height {
        let yc = y as f64;
        xs.clear();
        for ring in rings.iter().filter(|r| r.len() > 2) {
            for i in 0..ring.len() {
                let (a, b) = (ring[i], ring[(i + 1) % ring.len()]);
                if (a.y > yc) != (b.y > yc) {
                    xs.push(a.x + (yc - a.y) / (b.y - a.y) * (b.x - a.x));
                }
            }
        }
        xs.sort_by(f64::total_cmp);
        for pair in xs.chunks_exact(2) {
            let x0 = pair[0].ceil().max(0.0) as usize;
            let x1 = (pair[1].floor() + 1.0).clamp(0.0, width as f64) as usize;
            for x in x0..x1.min(width) {
                out[(y, x)] = FLOOR;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::{AdaptiveMasker, AdaptiveSettings};

    /// A 320×180 picture: sky, a band of green trees and stands, and the
    /// pitch below; the camera maps a 100 × 60 field onto the pitch.
    fn scene() -> (RgbImage, Calibration, FieldPreset) {
        let img = RgbImage::from_shape_fn((180, 320, 3), |(y, x, c)| {
            let n = ((x * 7 + y * 13) % 9) as u8;
            let px: [u8; 3] = if y < 40 {
                [110, 165, 225]
            } else if y < 75 {
                [50, 100, 45] // trees: grass-green
            } else {
                [60, 105, 55]
            };
            px[c].saturating_add(n)
        });
        // World (0, 0) at pixel (160, 130); 2.5 px per unit, y up.
        let cal =
            Calibration::from_homography([[2.5, 0.0, 160.0], [0.0, -0.75, 130.0], [0.0, 0.0, 1.0]]).unwrap();
        let mut preset = crate::calib::presets::football();
        preset.size = Vec2::new(100.0, 60.0);
        (img, cal, preset)
    }

    #[test]
    fn nothing_beyond_the_field_is_floor() {
        let (img, cal, preset) = scene();
        let inner = Box::new(AdaptiveMasker::new(AdaptiveSettings::default()).unwrap());
        let mut m = FieldMasker::new(inner, cal, preset);
        let mut out = MaskImage::zeros((0, 0));
        m.compute(&img, 0.0, &mut out).unwrap();
        let share = |out: &MaskImage, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>| {
            let v = out.slice(ndarray::s![rows, cols]);
            v.iter().filter(|&&p| p == FLOOR).count() as f64 / v.len() as f64
        };
        // The trees are not floor; the pitch around the field's middle is.
        assert!(
            share(&out, 40..75, 0..320) <= 0.02,
            "trees {}",
            share(&out, 40..75, 0..320)
        );
        assert!(share(&out, 0..40, 0..320) <= 0.02, "sky");
        assert!(
            share(&out, 110..150, 60..260) >= 0.95,
            "pitch {}",
            share(&out, 110..150, 60..260)
        );
        // Without the field, the trees are floor.
        let mut plain = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
        plain.compute(&img, 0.0, &mut out).unwrap();
        assert!(share(&out, 40..75, 0..320) > 0.5);
    }

    #[test]
    fn the_region_is_the_projected_field_grown() {
        let (_, cal, preset) = scene();
        let r = FieldMasker::region(&cal, &preset, 320, 180);
        // Half-width 50 + 8 → 58 units → 145 px either side of x = 160.
        assert_eq!(r[(130, 160)], FLOOR);
        assert_eq!(r[(130, 20)], FLOOR);
        assert_eq!(r[(130, 10)], 0);
        // Half-height 30 + 8 → 38 units → 28.5 px above and below y = 130.
        assert_eq!(r[(105, 160)], FLOOR);
        assert_eq!(r[(95, 160)], 0);
    }
}
