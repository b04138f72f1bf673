//! Whether a snapped calibration can be trusted: each line it predicts in
//! view is looked for again, across a band wider than the fit's own, and
//! judged by what is there. A line is *found* where a ridge lies on it, *off*
//! where a ridge runs beside it (the picture has the line, the calibration
//! puts it elsewhere), *missing* where there is no ridge near it (hidden,
//! faint, or not painted). A result is trusted only when enough of the
//! lines in view are found, in more than one direction, no long line is
//! seen off, and the points the user clicked stay near where they were
//! clicked: the fit's own RMS says nothing about lines it never reached.

use serde::Serialize;

use crate::calib::Calibration;
use crate::calib::presets::{FieldLine, FieldPreset};
use crate::geom::Vec2;

use super::describe;
use super::detect::{Luma, Search, find, sample_lines};

/// Spacing of the points checked along the lines, pixels.
const SPACING_PX: f64 = 8.0;
/// Most points checked on one line.
const MAX_PER_LINE: usize = 300;
/// A line counts when at least this share of it is found…
const LINE_FOUND: f64 = 0.3;
/// …and at least this many of its points.
const LINE_MIN_POINTS: usize = 5;
/// A line with at least this share of its points off, and this many, is
/// seen off.
const LINE_OFF: f64 = 0.2;
const LINE_OFF_POINTS: usize = 8;
/// Half the width searched across each line, as a share of the picture's
/// diagonal.
const SEARCH_SHARE: f64 = 0.08;
/// Least share of the points in view found over all lines.
const TRUSTED_SHARE: f64 = 0.4;
/// Fewest lines found, and of different directions.
const TRUSTED_LINES: usize = 3;

/// How one line of the preset was found under a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineCheck {
    /// The line, as [`describe`] names it.
    pub line: String,
    /// Points of it the result puts in the picture.
    pub in_view: usize,
    /// Its predicted length in the picture, pixels.
    pub extent_px: f64,
    /// Share of those with a ridge on the line (within `band_px`).
    pub found_share: f64,
    /// Share with a ridge beside it: where it is not found, a ridge at
    /// about the same distance across (beyond twice `band_px`, within
    /// `search_px`).
    pub off_share: f64,
    /// RMS distance across of the found ones, pixels.
    pub rms_px: Option<f64>,
    /// What this line says against the result, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

/// The verdict on a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Verdict {
    pub trusted: bool,
    /// Share of the points in view found on their lines.
    pub found_share: f64,
    /// Half the band a ridge must lie in to be on its line, pixels.
    pub band_px: f64,
    /// Half the width searched across each line, pixels.
    pub search_px: f64,
    /// Per line in view.
    pub lines: Vec<LineCheck>,
    /// The largest distance between a clicked point and where the result
    /// puts it, pixels (when the start records its points).
    pub click_px: Option<f64>,
    /// How far the colours beside the lines found spread (chromaticity
    /// × 255, nine in ten within): paint lies on one floor, so a few units;
    /// lines "found" on stands, boards and crowds spread widely.
    pub floor_spread: Option<f64>,
    /// Why it is not trusted (empty when it is).
    pub reasons: Vec<String>,
}

impl Verdict {
    /// A number to rank results by: the share found, less the share off.
    pub fn score(&self) -> f64 {
        let (mut off, mut all) = (0.0, 0.0);
        for l in &self.lines {
            off += l.off_share * l.in_view as f64;
            all += l.in_view as f64;
        }
        self.found_share - if all > 0.0 { off / all } else { 0.0 }
    }
}

/// The band of a picture `diag` pixels across: a ridge within it is on its
/// line.
pub fn band_px(diag: f64) -> f64 {
    (0.0025 * diag).max(3.0)
}

/// Checks `calib` on `luma` against `preset`'s lines; `clicks` are the
/// points the start was fitted from (pixel, world), when known.
pub fn verify(
    luma: &Luma,
    calib: &Calibration,
    preset: &FieldPreset,
    min_contrast: f32,
    clicks: &[(Vec2, Vec2)],
) -> Verdict {
    let [w, h] = luma.size();
    let diag = (w as f64).hypot(h as f64);
    let band = band_px(diag);
    // Wide: a line put 100 px from its paint has the paint within reach.
    let search_px = (SEARCH_SHARE * diag).max(8.0 * band);
    let in_view = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x <= (w - 1) as f64 && p.y <= (h - 1) as f64;
    let points: Vec<_> = sample_lines(&preset.lines, calib, SPACING_PX, MAX_PER_LINE)
        .into_iter()
        .filter(|p| calib.project(p.world).is_some_and(in_view))
        .collect();
    let search = |half_px: f64, pts: &[super::detect::LinePoint]| {
        find(
            luma,
            calib,
            pts,
            &Search {
                half_px,
                line_width: preset.line_width,
                min_contrast,
                partial: true,
            },
        )
    };
    // On its line: the strongest ridge a little way across lies within
    // the band.
    let near = search(3.0 * band, &points);
    // Ridges much fainter than the lines are something else.
    let mut contrasts: Vec<f64> = near.iter().map(|f| f64::from(f.contrast)).collect();
    let gate = (0.3 * super::median(&mut contrasts)) as f32;
    let n = preset.lines.len();
    let (mut count, mut on, mut sq) = (vec![0usize; n], vec![0usize; n], vec![0.0; n]);
    for p in &points {
        count[p.line] += 1;
    }
    let mut is_on = vec![false; points.len()];
    for f in near
        .iter()
        .filter(|f| f.contrast >= gate && f.offset.abs() <= band)
    {
        on[f.line] += 1;
        sq[f.line] += f.offset * f.offset;
        is_on[f.point] = true;
    }
    // Beside its line: where a line is not found, a ridge the wide search
    // finds on one side of it along much of it (a line right at one end
    // and put beside its paint at the other is off there).
    let mut off = vec![0usize; n];
    let unfound: Vec<_> = points
        .iter()
        .zip(&is_on)
        .filter(|(_, on)| !**on)
        .map(|(p, _)| *p)
        .collect();
    let far = search(search_px, &unfound);
    // Paint lies on the floor: a ridge beside a line with something else
    // on one side of it (an advertising board's edge, a white shirt
    // against the stands) is not its line.
    let floor = FloorColour::of(
        luma,
        near.iter()
            .filter(|f| f.contrast >= gate && f.offset.abs() <= band),
    );
    for (i, o) in off.iter_mut().enumerate() {
        let mut offsets: Vec<f64> = far
            .iter()
            .filter(|f| f.line == i && f.contrast >= gate)
            .filter(|f| floor.as_ref().is_none_or(|c| c.on_floor(luma, f)))
            .map(|f| f.offset)
            .collect();
        if offsets.len() < LINE_OFF_POINTS {
            continue;
        }
        // A misplaced line's paint may run beside it at a distance that
        // changes along it; on one side, beyond the band, is enough.
        let m = super::median(&mut offsets);
        if m.abs() > 2.0 * band {
            *o = offsets
                .iter()
                .filter(|v| v.signum() == m.signum() && v.abs() > 2.0 * band)
                .count();
        }
    }
    let mut lines = Vec::new();
    let mut reasons = Vec::new();
    let mut directions: Vec<Vec2> = Vec::new();
    let mut found_lines = 0;
    for (i, line) in preset.lines.iter().enumerate() {
        if count[i] == 0 {
            continue;
        }
        let share = |k: usize| k as f64 / count[i] as f64;
        let extent_px = extent(calib, line, (w, h));
        let mut against = None;
        if count[i] >= LINE_OFF_POINTS && off[i] >= LINE_OFF_POINTS && share(off[i]) >= LINE_OFF {
            against = Some(format!(
                "a painted line runs beside it, not on it, along {:.0} % of it",
                100.0 * share(off[i])
            ));
        } else if share(on[i]) >= LINE_FOUND && on[i] >= LINE_MIN_POINTS {
            found_lines += 1;
            let d = direction(line);
            if !directions.iter().any(|e| e.cross(d).abs() < 0.3) {
                directions.push(d);
            }
        }
        lines.push(LineCheck {
            line: describe(line),
            in_view: count[i],
            extent_px,
            found_share: share(on[i]),
            off_share: share(off[i]),
            rms_px: (on[i] > 0).then(|| (sq[i] / on[i] as f64).sqrt()),
            against,
        });
    }
    let total: usize = count.iter().sum();
    let found_share = if total > 0 {
        on.iter().sum::<usize>() as f64 / total as f64
    } else {
        0.0
    };
    if found_share < TRUSTED_SHARE {
        reasons.push(format!(
            "only {:.0} % of the lines in view lie on painted lines (at least {:.0} % is needed)",
            100.0 * found_share,
            100.0 * TRUSTED_SHARE
        ));
    }
    if found_lines < TRUSTED_LINES || directions.len() < 2 {
        reasons.push(format!(
            "{found_lines} lines were found in {} direction{} (at least {TRUSTED_LINES} in two are needed)",
            directions.len(),
            if directions.len() == 1 { "" } else { "s" }
        ));
    }
    for l in lines.iter().filter(|l| l.against.is_some()) {
        reasons.push(format!(
            "{}: {}",
            l.line,
            l.against.as_deref().unwrap_or_default()
        ));
    }
    let floor_spread = floor.as_ref().map(|f| f.spread);
    if let Some(s) = floor_spread
        && s > FLOOR_SPREAD
    {
        reasons.push(format!(
            "the lines it finds do not lie on one floor: the colours beside them spread {s:.0} units \
             (at most {FLOOR_SPREAD:.0} for paint on a floor)"
        ));
    }
    let click_px = clicks
        .iter()
        .filter_map(|&(px, world)| Some((calib.project(world)? - px).length()))
        .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))));
    let click_limit = (0.015 * diag).max(30.0);
    if let Some(c) = click_px
        && c > click_limit
    {
        reasons.push(format!(
            "it puts a clicked point {c:.0} px from where it was clicked (at most {click_limit:.0} px is believable)"
        ));
    }
    Verdict {
        trusted: reasons.is_empty(),
        found_share,
        band_px: band,
        search_px,
        lines,
        click_px,
        floor_spread,
        reasons,
    }
}

/// The floor's colour beside the paint, learned from the sides of the
/// ridges found on their lines.
struct FloorColour {
    /// Median chromaticity.
    centre: [f64; 2],
    /// How far from it a side may be and still be floor.
    radius: f64,
    /// How far from it nine in ten sides are.
    spread: f64,
}

/// Most [`Verdict::floor_spread`] of a trusted result.
const FLOOR_SPREAD: f64 = 20.0;
/// Least and most [`FloorColour::radius`], chromaticity units (× 255).
const FLOOR_RADIUS: (f64, f64) = (8.0, 30.0);
/// Fewest sides to learn the floor's colour from.
const FLOOR_SAMPLES: usize = 20;

impl FloorColour {
    fn of<'a>(luma: &Luma, found: impl Iterator<Item = &'a super::detect::Found>) -> Option<FloorColour> {
        let sides: Vec<[f64; 2]> = found.flat_map(|f| sides(luma, f)).flatten().collect();
        if sides.len() < FLOOR_SAMPLES {
            return None;
        }
        let mut r: Vec<f64> = sides.iter().map(|c| c[0]).collect();
        let mut g: Vec<f64> = sides.iter().map(|c| c[1]).collect();
        let centre = [super::median(&mut r), super::median(&mut g)];
        let mut dist: Vec<f64> = sides
            .iter()
            .map(|c| (c[0] - centre[0]).hypot(c[1] - centre[1]))
            .collect();
        dist.sort_by(f64::total_cmp);
        let p90 = dist[(dist.len() * 9 / 10).min(dist.len() - 1)];
        Some(FloorColour {
            centre,
            radius: (1.5 * p90).clamp(FLOOR_RADIUS.0, FLOOR_RADIUS.1),
            spread: p90,
        })
    }

    /// Whether both sides of `f` look like the floor (a side out of the
    /// picture may be).
    fn on_floor(&self, luma: &Luma, f: &super::detect::Found) -> bool {
        sides(luma, f)
            .iter()
            .flatten()
            .all(|c| (c[0] - self.centre[0]).hypot(c[1] - self.centre[1]) <= self.radius)
    }
}

/// The mean chromaticity a little beyond each side of a found ridge (three
/// pixels along it), or `None` for a side out of the picture.
fn sides(luma: &Luma, f: &super::detect::Found) -> [Option<[f64; 2]>; 2] {
    let along = Vec2::new(f.across.y, -f.across.x);
    let reach = 1.5 * f.width + 2.0;
    [-1.0, 1.0].map(|sign| {
        let centre = f.image + f.across * (sign * reach);
        let mut sum = [0.0; 2];
        for k in [-2.0, 0.0, 2.0] {
            let c = luma.chroma_at(centre + along * k)?;
            sum[0] += f64::from(c[0]) / 3.0;
            sum[1] += f64::from(c[1]) / 3.0;
        }
        Some(sum)
    })
}

/// The line's length in a `w × h` picture under `calib`, pixels.
fn extent(calib: &Calibration, line: &FieldLine, (w, h): (usize, usize)) -> f64 {
    let mut polys = Vec::new();
    line.project(calib, 1.0, &mut polys);
    polys
        .iter()
        .flat_map(|p| p.windows(2))
        .map(|s| clipped_length(s[0], s[1], w as f64, h as f64))
        .sum()
}

/// The length of segment `a → b` inside `[0, w] × [0, h]` (Liang–Barsky).
fn clipped_length(a: Vec2, b: Vec2, w: f64, h: f64) -> f64 {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-d.x, a.x), (d.x, w - a.x), (-d.y, a.y), (d.y, h - a.y)] {
        if p == 0.0 {
            if q < 0.0 {
                return 0.0;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    if t1 > t0 && d.length().is_finite() {
        (t1 - t0) * d.length()
    } else {
        0.0
    }
}

/// A line's direction on the floor (an arc's counts as every direction:
/// the x axis and the y axis are both met by a circle).
fn direction(line: &FieldLine) -> Vec2 {
    match *line {
        FieldLine::Segment { a, b } => crate::geom::vec2::unit(b - a),
        // An arc bends through many directions: not parallel to anything.
        FieldLine::Arc { .. } => Vec2::new(std::f64::consts::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_measured_inside_the_picture() {
        let l = |ax, ay, bx, by| clipped_length(Vec2::new(ax, ay), Vec2::new(bx, by), 100.0, 50.0);
        assert!((l(-50.0, 10.0, 150.0, 10.0) - 100.0).abs() < 1e-9);
        assert!((l(10.0, 10.0, 20.0, 10.0) - 10.0).abs() < 1e-9);
        assert_eq!(l(-50.0, -10.0, 150.0, -10.0), 0.0);
        assert!((l(0.0, 0.0, 200.0, 100.0) - 100.0f64.hypot(50.0)).abs() < 1e-9);
    }
}
