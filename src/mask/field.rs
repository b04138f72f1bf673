//! A floor mask that knows where the field is: with a calibration and a
//! field — a preset, a polygon on the floor in world units, or, when
//! neither is given, the hull of the points the calibration was fitted
//! from (said once: [`FieldSource::note`]) — only the field's picture
//! region (grown by a margin) can be floor. Beyond it — stands, trees,
//! fences, anything past the horizon — nothing is floor, whatever its
//! colour.
//!
//! It wraps any other method and only cuts its mask: the region says
//! *where* floor can be, never *what* it looks like, so the method
//! measures the frame as it would uncut (a colour model measured on the
//! field alone was narrower than the field's own stripes and shade: on
//! real broadcast frames it lost up to a quarter of the far pitch). And it
//! costs what the method costs: the frame is not copied, and with windows
//! only the windows are cut.

use crate::calib::Calibration;
use crate::calib::presets::{self, FieldPreset};
use crate::geom::Vec2;
use crate::image::{FLOOR, MaskImage};
use crate::video::Picture;

use super::{FloorMask, MaskError, MaskStep, Masker, window};
use crate::floor::bits::BitMask;

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
                        presets::choices()
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

/// Where a calibration's field came from.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldSource {
    /// Named by the user (a session's `field`, `--field`).
    Named,
    /// The calibration's own `field` (a snapped calibration names its
    /// preset).
    Calibration,
    /// The hull of the calibration's `n` recorded points, grown: a guess.
    PointsHull(usize),
}

impl FieldSource {
    /// What to tell the user, once: only the hull of points is a guess.
    pub fn note(&self) -> Option<String> {
        match self {
            FieldSource::PointsHull(n) => Some(format!(
                "the floor is taken to lie within the hull of the {n} points the calibration was fitted from, grown \
                 by half its size: drawings beyond it are hidden; name the field (a session's `field`, --field \
                 PRESET, or a polygon) to say where it is"
            )),
            _ => None,
        }
    }
}

/// The field `calibration`'s floor lies in: the one `named` (by a
/// session or the command line), else the calibration's own, else the
/// hull of its recorded points; `None` when there is none of these.
pub fn region_for(
    calibration: &Calibration,
    named: Option<&FieldSpec>,
) -> Result<Option<(FieldRegion, FieldSource)>, MaskError> {
    if let Some(f) = named {
        return Ok(Some((f.region(calibration.world_unit())?, FieldSource::Named)));
    }
    if let Some(f) = calibration.field() {
        return Ok(Some((
            f.region(calibration.world_unit())?,
            FieldSource::Calibration,
        )));
    }
    Ok(FieldRegion::of_calibration_points(calibration)
        .map(|r| (r, FieldSource::PointsHull(calibration.fitted_points().len()))))
}

/// A method cut to a field's region (see the module docs).
pub struct FieldMasker {
    inner: Box<dyn Masker>,
    calibration: Calibration,
    field: FieldRegion,
    /// The region for the last picture size (255 inside).
    region: MaskImage,
    /// The region's blocks for the last picture size (set inside), for
    /// block masks.
    region_blocks: BitMask,
    /// The picture size `region_blocks` is for.
    blocks_for: (usize, usize),
}

impl FieldMasker {
    pub fn new(inner: Box<dyn Masker>, calibration: Calibration, field: FieldRegion) -> Self {
        FieldMasker {
            inner,
            calibration,
            field,
            region: MaskImage::zeros((0, 0)),
            region_blocks: BitMask::default(),
            blocks_for: (0, 0),
        }
    }

    /// The field's region in a `width × height` picture.
    pub fn region(calibration: &Calibration, field: &FieldRegion, width: usize, height: usize) -> MaskImage {
        let ring = calibration.project_area(&field.outline, 0.5);
        fill(&[ring], width, height)
    }

    /// The field's region in the 2×2 blocks of a `width × height`
    /// picture: the blocks whose centre is inside.
    pub fn region_blocks(
        calibration: &Calibration,
        field: &FieldRegion,
        width: usize,
        height: usize,
    ) -> BitMask {
        let ring: Vec<Vec2> = calibration
            .project_area(&field.outline, 0.5)
            .iter()
            .map(|p| Vec2::new((p.x - 0.5) / 2.0, (p.y - 0.5) / 2.0))
            .collect();
        BitMask::from_mask_image(&fill(&[ring], width.div_ceil(2), height.div_ceil(2)))
    }

    /// Cuts `out` to the region at its own resolution (inside `cores`, in
    /// pixels, only, when given), making the region for its size first.
    fn cut(&mut self, out: &mut FloorMask, cores: Option<&[window::Rect]>) {
        let (w, h) = (out.width(), out.height());
        if out.blocks().is_some() {
            if self.blocks_for != (w, h) {
                self.region_blocks = Self::region_blocks(&self.calibration, &self.field, w, h);
                self.blocks_for = (w, h);
            }
            let m = out.blocks_mut(w, h);
            match cores {
                None => m.and_assign(&self.region_blocks),
                Some(cores) => {
                    // Only the words the cores' block rows hold.
                    for c in cores {
                        let (y0, y1) = (c.y0 / 2, c.y1.div_ceil(2).min(m.height()));
                        let (x0, x1) = (c.x0 / 2, c.x1.div_ceil(2).min(m.width()));
                        if x0 >= x1 {
                            continue;
                        }
                        for y in y0..y1 {
                            let r = self.region_blocks.row(y);
                            for (i, word) in m
                                .row_mut(y)
                                .iter_mut()
                                .enumerate()
                                .take(x1.div_ceil(64))
                                .skip(x0 / 64)
                            {
                                *word &= r[i];
                            }
                        }
                    }
                }
            }
            return;
        }
        if self.region.dim() != (h, w) {
            self.region = Self::region(&self.calibration, &self.field, w, h);
        }
        let out = out.pixels_mut(w, h);
        let cut_rows = |out: &mut MaskImage, y0: usize, y1: usize, x0: usize, x1: usize| {
            for y in y0..y1 {
                let (Some(m), Some(r)) = (out.row_mut(y).into_slice(), self.region.row(y).to_slice()) else {
                    continue;
                };
                for (m, &r) in m[x0..x1].iter_mut().zip(&r[x0..x1]) {
                    if r != FLOOR {
                        *m = 0;
                    }
                }
            }
        };
        let (h, w) = out.dim();
        match cores {
            None => cut_rows(out, 0, h, 0, w),
            Some(cores) => {
                for c in cores {
                    let (x1, y1) = (c.x1.min(w), c.y1.min(h));
                    cut_rows(out, c.y0.min(y1), y1, c.x0.min(x1), x1);
                }
            }
        }
    }
}

impl Masker for FieldMasker {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        self.inner.compute(frame, time, out)?;
        self.cut(out, None);
        Ok(())
    }

    fn advance(&mut self, frame: &Picture<'_>, time: f64) -> Result<MaskStep, MaskError> {
        self.inner.advance(frame, time)
    }

    fn memory(&self) -> f64 {
        self.inner.memory()
    }

    fn compute_step(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        self.inner.compute_step(frame, time, step, out)?;
        self.cut(out, None);
        Ok(())
    }

    fn window_margin(&self, height: usize) -> Option<usize> {
        self.inner.window_margin(height)
    }

    fn compute_step_in(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        cores: &[window::Rect],
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        let (w, h) = frame.size();
        let whole = self.inner.masks_whole_for(cores, w, h);
        self.inner.compute_step_in(frame, time, step, cores, out)?;
        self.cut(out, (!whole).then_some(cores));
        Ok(())
    }

    fn masks_whole_for(&self, cores: &[window::Rect], width: usize, height: usize) -> bool {
        self.inner.masks_whole_for(cores, width, height)
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn doubt(&self) -> Option<super::MaskDoubt> {
        self.inner.doubt()
    }

    fn check_video(&self, width: usize, height: usize, frame_count: Option<u64>) -> Result<(), MaskError> {
        self.inner.check_video(width, height, frame_count)
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
    use crate::image::RgbImage;
    use crate::mask::{AdaptiveMasker, AdaptiveSettings};

    /// The mask `m` makes of `img`, as an image.
    fn mask_of(m: &mut dyn Masker, img: &RgbImage) -> MaskImage {
        let mut out = FloorMask::new();
        m.compute(&Picture::Rgb(img), 0.0, &mut out).unwrap();
        out.to_image()
    }

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
        let out = mask_of(&mut m, &img);
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
        let out = mask_of(&mut plain, &img);
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
        let out = mask_of(&mut m, &img);
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
        let out = mask_of(&mut m, &img);
        assert!(share(&out, 40..75) <= 0.02, "{}", share(&out, 40..75));
        assert!(out[(130, 160)] == FLOOR);
        // Points on one line span nothing.
        assert!(FieldRegion::hull_of(&[Vec2::ZERO, Vec2::new(1.0, 1.0), Vec2::new(2.0, 2.0)]).is_none());
    }

    /// Whether world point `p` lies inside polygon `poly` (even–odd).
    fn inside(poly: &[Vec2], p: Vec2) -> bool {
        let mut c = false;
        for i in 0..poly.len() {
            let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
            if (a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) {
                c = !c;
            }
        }
        c
    }

    #[test]
    fn a_field_running_out_of_the_picture_and_past_the_horizon_is_one_region() {
        // A broadcast-like camera: the near touchline below the picture,
        // the far one near its top, the horizon above; the region must be
        // every pixel whose floor point lies in the field (pieces of its
        // outline closed with chords were not).
        let cal = Calibration::from_homography([
            [9.964, 1.5396, -775.33],
            [-0.42263, 0.69458, 152.285],
            [0.00078944, -0.0032973, 0.401312],
        ])
        .unwrap()
        .with_image_size(320, 180);
        // In the homography's own world (yards of a 115 × 74 template).
        let field = FieldRegion {
            outline: vec![
                Vec2::new(0.0, 0.0),
                Vec2::new(115.0, 0.0),
                Vec2::new(115.0, 74.0),
                Vec2::new(0.0, 74.0),
            ],
        };
        let (w, h) = (320usize, 180usize);
        // The camera sees 1280×720: scale the picture down by 4.
        let scale = Calibration::from_homography(crate::geom::mat3::mul(
            &[[0.25, 0.0, 0.0], [0.0, 0.25, 0.0], [0.0, 0.0, 1.0]],
            cal.homography(),
        ))
        .unwrap()
        .with_image_size(320, 180);
        let r = FieldMasker::region(&scale, &field, w, h);
        let (mut agree, mut inside_px) = (0usize, 0usize);
        for y in 0..h {
            for x in 0..w {
                let truth = scale
                    .unproject(Vec2::new(x as f64, y as f64))
                    .is_some_and(|p| inside(&field.outline, p));
                inside_px += usize::from(truth);
                agree += usize::from(truth == (r[(y, x)] == FLOOR));
            }
        }
        assert!(inside_px > w * h / 3, "the field fills much of the picture");
        assert!(agree as f64 >= 0.995 * (w * h) as f64, "{agree} of {}", w * h);
    }

    #[test]
    fn windows_are_cut_as_the_whole_mask_is() {
        let (img, cal, preset) = scene();
        let region = FieldRegion::of_preset(&preset);
        let build = || {
            FieldMasker::new(
                Box::new(AdaptiveMasker::new(AdaptiveSettings::default()).unwrap()),
                cal.clone(),
                region.clone(),
            )
        };
        let mut whole = FloorMask::new();
        let mut m = build();
        let pic = Picture::Rgb(&img);
        let step = m.advance(&pic, 0.0).unwrap();
        m.compute_step(&pic, 0.0, &step, &mut whole).unwrap();
        let whole = whole.to_image();
        let cores = [
            window::Rect::new(20, 40, 30, 50),
            window::Rect::new(150, 120, 160, 130),
        ];
        let mut m = build();
        assert!(!m.masks_whole_for(&cores, 320, 180), "two small windows");
        let mut part = FloorMask::new();
        m.compute_step_in(&pic, 0.0, &step, &cores, &mut part).unwrap();
        let part = part.to_image();
        for c in &cores {
            for y in c.y0..c.y1 {
                for x in c.x0..c.x1 {
                    assert_eq!(part[(y, x)], whole[(y, x)], "({x}, {y})");
                }
            }
        }
        // The first window is beyond the field (the trees), the second on
        // the pitch.
        assert!((40..50).all(|y| (20..30).all(|x| whole[(y, x)] != FLOOR)));
        assert!((120..130).all(|y| (150..160).all(|x| whole[(y, x)] == FLOOR)));
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
