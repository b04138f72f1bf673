//! A floor mask that knows where the field is: with a calibration and a
//! field — a preset, a polygon on the floor in world units, or, when
//! neither is given, the hull of the points the calibration was fitted
//! from — only the field's picture region (grown by a margin) can be
//! floor, and only it is measured. Beyond it — stands, trees, fences,
//! anything past the horizon — nothing is floor, whatever its colour.
//!
//! It wraps any other method: pixels outside the region are made grey for
//! that method (grey has no hue, so they weigh nothing in its statistics),
//! and its mask is cut to the region.

use crate::calib::Calibration;
use crate::calib::presets::{self, FieldPreset};
use crate::geom::Vec2;
use crate::image::{FLOOR, MaskImage, RgbImage};

use super::{MaskError, MaskStep, Masker};

/// How far beyond the field of play the floor may reach, as a fraction of
/// the field's larger side (run-off areas, boundary lines).
const MARGIN: f64 = 0.08;

/// How far beyond the hull of a calibration's points the floor may reach,
/// as a fraction of the hull's larger side: the points are rarely on the
/// field's edge, and the hull is only a guess at the field (a session's
/// `field` says it exactly).
const HULL_MARGIN: f64 = 0.5;

/// Most corners of a field polygon.
pub const MAX_POLYGON: usize = 10_000;

pub use crate::calib::presets::FieldSpec;

impl FieldSpec {
    /// The field's outline, grown by the margin, for a calibration whose
    /// world unit is `unit` (a preset, in mm, is converted to a known
    /// unit).
    pub fn region(&self, unit: Option<&str>) -> Result<FieldRegion, MaskError> {
        match self {
            FieldSpec::Preset(id) => {
                let preset = presets::preset(id).ok_or_else(|| {
                    MaskError::BadSettings(format!(
                        "field = \"{id}\" is not a field preset ({})",
                        presets::PRESET_IDS.join(", ")
                    ))
                })?;
                let scale = unit
                    .and_then(crate::calib::unit::metres_per)
                    .zip(crate::calib::unit::metres_per(preset.unit))
                    .map_or(1.0, |(to, from)| from / to);
                let mut r = FieldRegion::of_preset(&preset);
                for p in &mut r.outline {
                    *p = *p * scale;
                }
                Ok(r)
            }
            FieldSpec::Polygon { polygon } => {
                if polygon.len() < 3 || polygon.len() > MAX_POLYGON {
                    return Err(MaskError::BadSettings(format!(
                        "a field polygon needs 3 to {MAX_POLYGON} corners, not {}",
                        polygon.len()
                    )));
                }
                if let Some(i) = polygon
                    .iter()
                    .position(|p| !(p[0].is_finite() && p[1].is_finite()))
                {
                    return Err(MaskError::BadSettings(format!(
                        "corner {i} of the field polygon is not finite"
                    )));
                }
                let pts: Vec<Vec2> = polygon.iter().map(|p| Vec2::new(p[0], p[1])).collect();
                let area = polygon_area(&pts);
                if area.abs() <= 0.0 || !area.is_finite() {
                    return Err(MaskError::BadSettings("the field polygon has no area".into()));
                }
                Ok(FieldRegion {
                    outline: grown(&pts, MARGIN),
                })
            }
        }
    }
}

/// A field's outline on the floor, grown by its margin, in world units.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldRegion {
    pub outline: Vec<Vec2>,
}

impl FieldRegion {
    /// A preset's playing area grown by 8 % of its larger side.
    pub fn of_preset(preset: &FieldPreset) -> FieldRegion {
        let half = preset.size * 0.5;
        let m = MARGIN * preset.size.x.max(preset.size.y);
        let (x, y) = (half.x + m, half.y + m);
        FieldRegion {
            outline: vec![
                Vec2::new(-x, -y),
                Vec2::new(x, -y),
                Vec2::new(x, y),
                Vec2::new(-x, y),
            ],
        }
    }

    /// The hull of the points `calibration` was fitted from (see
    /// [`hull_of`](Self::hull_of)); `None` when it records none spanning an
    /// area.
    pub fn of_calibration_points(calibration: &Calibration) -> Option<FieldRegion> {
        let pts: Vec<Vec2> = calibration
            .fitted_points()
            .iter()
            .map(|p| Vec2::new(p.x, p.y))
            .collect();
        Self::hull_of(&pts)
    }

    /// The convex hull of `points` (a calibration's points) grown by
    /// half its larger side; `None` when they span no area.
    pub fn hull_of(points: &[Vec2]) -> Option<FieldRegion> {
        let hull = convex_hull(points.iter().copied().filter(|p| p.is_finite()).collect());
        (hull.len() >= 3 && polygon_area(&hull).abs() > 0.0).then(|| FieldRegion {
            outline: grown(&hull, HULL_MARGIN),
        })
    }
}

/// Signed area (counter-clockwise positive).
fn polygon_area(p: &[Vec2]) -> f64 {
    let n = p.len();
    (0..n).map(|i| p[i].cross(p[(i + 1) % n])).sum::<f64>() / 2.0
}

/// Each corner moved away from the centroid by `fraction` of the
/// polygon's larger extent (an outward offset for convex shapes).
fn grown(p: &[Vec2], fraction: f64) -> Vec<Vec2> {
    let n = p.len().max(1) as f64;
    let c = p.iter().fold(Vec2::ZERO, |a, &q| a + q) * (1.0 / n);
    let (lo, hi) = p.iter().fold(
        (
            Vec2::new(f64::INFINITY, f64::INFINITY),
            Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
        ),
        |(lo, hi), q| {
            (
                Vec2::new(lo.x.min(q.x), lo.y.min(q.y)),
                Vec2::new(hi.x.max(q.x), hi.y.max(q.y)),
            )
        },
    );
    let m = fraction * (hi.x - lo.x).max(hi.y - lo.y);
    p.iter()
        .map(|&q| q + crate::geom::vec2::unit(q - c) * m)
        .collect()
}

/// Andrew's monotone chain, counter-clockwise, without collinear points.
fn convex_hull(mut pts: Vec<Vec2>) -> Vec<Vec2> {
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let turn = |o: Vec2, a: Vec2, b: Vec2| (a - o).cross(b - o);
    let mut lower: Vec<Vec2> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && turn(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<Vec2> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && turn(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// A method cut to a field's region (see the module docs).
pub struct FieldMasker {
    inner: Box<dyn Masker>,
    calibration: Calibration,
    field: FieldRegion,
    /// The region for the last picture size (255 inside).
    region: MaskImage,
    /// The picture with everything outside the region grey.
    inside: RgbImage,
}

impl FieldMasker {
    pub fn new(inner: Box<dyn Masker>, calibration: Calibration, field: FieldRegion) -> Self {
        FieldMasker {
            inner,
            calibration,
            field,
            region: MaskImage::zeros((0, 0)),
            inside: RgbImage::zeros((0, 0, 3)),
        }
    }

    /// The field's region in a `width × height` picture.
    pub fn region(calibration: &Calibration, field: &FieldRegion, width: usize, height: usize) -> MaskImage {
        let mut rings = Vec::new();
        calibration.project_polyline(&field.outline, true, 0.5, &mut rings);
        fill(&rings, width, height)
    }

    /// The frame with the outside grey, the region made for its size.
    fn prepare(&mut self, frame: &RgbImage) -> &RgbImage {
        let (h, w, _) = frame.dim();
        if self.region.dim() != (h, w) {
            self.region = Self::region(&self.calibration, &self.field, w, h);
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
        let mut m = FieldMasker::new(inner, cal, FieldRegion::of_preset(&preset));
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
        let r = FieldMasker::region(&cal, &FieldRegion::of_preset(&preset), 320, 180);
        // Half-width 50 + 8 → 58 units → 145 px either side of x = 160.
        assert_eq!(r[(130, 160)], FLOOR);
        assert_eq!(r[(130, 20)], FLOOR);
        assert_eq!(r[(130, 10)], 0);
        // Half-height 30 + 8 → 38 units → 28.5 px above and below y = 130.
        assert_eq!(r[(105, 160)], FLOOR);
        assert_eq!(r[(95, 160)], 0);
    }

    #[test]
    fn a_polygon_or_the_hull_of_points_serves_as_the_field() {
        let (img, cal, _) = scene();
        let share = |out: &MaskImage, rows: std::ops::Range<usize>| {
            let v = out.slice(ndarray::s![rows, 40..280]);
            v.iter().filter(|&&p| p == FLOOR).count() as f64 / v.len() as f64
        };
        // A polygon in world units, as a session writes it.
        let spec: FieldSpec = toml::from_str::<toml::Table>(
            "field = { polygon = [[-50, -30], [50, -30], [50, 30], [-50, 30]] }",
        )
        .unwrap()["field"]
            .clone()
            .try_into()
            .unwrap();
        let region = spec.region(None).unwrap();
        let inner = Box::new(AdaptiveMasker::new(AdaptiveSettings::default()).unwrap());
        let mut m = FieldMasker::new(inner, cal.clone(), region);
        let mut out = MaskImage::zeros((0, 0));
        m.compute(&img, 0.0, &mut out).unwrap();
        assert!(share(&out, 40..75) <= 0.02 && share(&out, 115..145) >= 0.95);
        // The hull of a calibration's points on the pitch, grown.
        let pts = [
            Vec2::new(-40.0, -20.0),
            Vec2::new(40.0, -20.0),
            Vec2::new(0.0, 25.0),
            Vec2::new(0.0, 0.0),
        ];
        let hull = FieldRegion::hull_of(&pts).unwrap();
        assert_eq!(hull.outline.len(), 3, "the inner point is not a corner");
        let inner = Box::new(AdaptiveMasker::new(AdaptiveSettings::default()).unwrap());
        let mut m = FieldMasker::new(inner, cal, hull);
        m.compute(&img, 0.0, &mut out).unwrap();
        assert!(share(&out, 40..75) <= 0.02, "{}", share(&out, 40..75));
        assert!(out[(130, 160)] == FLOOR);
        // Points on one line span nothing.
        assert!(FieldRegion::hull_of(&[Vec2::ZERO, Vec2::new(1.0, 1.0), Vec2::new(2.0, 2.0)]).is_none());
    }

    #[test]
    fn field_specs_are_checked_and_presets_follow_the_unit() {
        assert!(FieldSpec::from("moon").region(None).is_err());
        for bad in [
            vec![[0.0, 0.0], [1.0, 0.0]],
            vec![[0.0, 0.0], [1.0, 0.0], [f64::NAN, 1.0]],
            vec![[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]],
        ] {
            assert!(FieldSpec::Polygon { polygon: bad }.region(None).is_err());
        }
        let mm = FieldSpec::from("ssl-b").region(Some("mm")).unwrap();
        let m = FieldSpec::from("ssl-b").region(Some("m")).unwrap();
        assert!((mm.outline[1].x / m.outline[1].x - 1000.0).abs() < 1e-9);
        assert_eq!(FieldSpec::from("ssl-b").region(None).unwrap(), mm);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any field a file can hold — any corners, any name — is a region
        /// or an error, and any region fills a picture without a panic.
        #[test]
        fn any_field_is_a_region_or_an_error(
            corners in proptest::collection::vec(proptest::array::uniform2(proptest::num::f64::ANY), 0..12),
            id in "\\PC{0,12}",
            k in 1e-6f64..1e3,
        ) {
            let cal = Calibration::from_homography([[k, 0.0, 20.0], [0.0, -k, 15.0], [0.0, 0.0, 1.0]]).unwrap();
            for spec in [FieldSpec::Polygon { polygon: corners.clone() }, FieldSpec::Preset(id.clone())] {
                if let Ok(r) = spec.region(Some("mm")) {
                    let m = FieldMasker::region(&cal, &r, 40, 30);
                    proptest::prop_assert_eq!(m.dim(), (30, 40));
                }
            }
            if let Some(r) = FieldRegion::hull_of(&corners.iter().map(|c| Vec2::new(c[0], c[1])).collect::<Vec<_>>()) {
                let _ = FieldMasker::region(&cal, &r, 40, 30);
            }
        }
    }
}
