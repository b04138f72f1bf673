//! Snapping a rough calibration to the painted lines of a picture: from a
//! calibration good to a few tens of pixels (four clicked points, each off
//! by up to 15 px), the field preset's lines are looked for across their
//! projected images (`detect`), and the model, radial distortion
//! included, is fitted to the distances across the lines of what was found
//! ([`crate::calib::fit::lines`]).
//!
//! Rounds: find the lines near where the current calibration puts them,
//! pair each pixel found with the nearest point of its line (through the
//! current calibration), weigh the pairs (Tukey's biweight on the distance
//! across, scaled by its median), fit, and narrow the search to what the
//! fit's residuals say is left. The first rounds fit a homography (a rough
//! start makes distortion terms wander); the rest fit the model asked for.
//! It stops when a round moves the field by less than 0.05 px.

mod detect;
pub mod search;
pub mod verify;

use serde::Serialize;

use crate::calib::fit::Model;
use crate::calib::fit::lines::{LineSample, fit_to_lines};
use crate::calib::presets::{FieldLine, FieldPreset};
use crate::calib::{CalibError, Calibration};
use crate::geom::Vec2;
use crate::geom::vec2::nearest_on_segment;
use crate::image::RgbImage;

pub use detect::Luma;
use detect::{Search, find, nearest_on, sample_lines};
pub use verify::{LineCheck, Verdict};

/// Options of [`refine`].
#[derive(Clone, Debug, PartialEq)]
pub struct RefineOptions {
    /// The model fitted in the last rounds.
    pub model: Model,
    /// Half the length searched across each line in the first round, in
    /// pixels; `None`: 15 px plus 1.5 % of the picture's diagonal.
    pub search_px: Option<f64>,
    /// Least brightness of a line over both its sides (luma levels).
    pub min_contrast: f32,
    /// Most rounds.
    pub max_rounds: usize,
}

impl Default for RefineOptions {
    fn default() -> Self {
        RefineOptions {
            model: Model::Radial,
            search_px: None,
            min_contrast: 10.0,
            max_rounds: 20,
        }
    }
}

/// What was found on one line of the preset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineReport {
    /// The line, e.g. `segment (-4500, -3000) to (4500, -3000)`.
    pub line: String,
    /// Points looked for on it.
    pub sampled: usize,
    /// Points found and used in the last fit.
    pub found: usize,
    /// RMS distance across the line of those, pixels.
    pub rms_px: Option<f64>,
}

/// How the refinement went.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RefineReport {
    /// The model of the result.
    pub model: Model,
    /// Rounds run.
    pub rounds: usize,
    /// Points found on the lines in the last round.
    pub points: usize,
    /// Of those, the ones the last fit used (weight above 0).
    pub used: usize,
    /// RMS distance across the lines of the used points, pixels.
    pub rms_px: f64,
    /// Share of the points looked for on the lines in view (under the
    /// result) that the last fit used: near 1 when the result explains
    /// the picture's lines; low when it snapped to wrong lines or lines
    /// are hidden.
    pub coverage: f64,
    /// Largest move of a field point (on a grid over the field) from the
    /// rough calibration to the refined one, pixels.
    pub moved_px: f64,
    /// Per preset line.
    pub lines: Vec<LineReport>,
    /// Whether the result can be trusted: the lines predicted in view were
    /// found where it puts them ([`verify`](mod@verify)). When false,
    /// `warnings` starts with why.
    pub trusted: bool,
    /// The check behind `trusted`, line by line.
    pub verdict: Verdict,
    /// Starts and searches tried before this result.
    pub attempts: usize,
    /// Things to know (lines not found, few points).
    pub warnings: Vec<String>,
}

/// A refined calibration and how it was found.
#[derive(Clone, Debug)]
pub struct Refined {
    pub calibration: Calibration,
    pub report: RefineReport,
}

/// How a line is named in reports.
pub fn describe(line: &FieldLine) -> String {
    let f = crate::log::text::fmt_f64;
    match *line {
        FieldLine::Segment { a, b } => {
            format!("segment ({}, {}) to ({}, {})", f(a.x), f(a.y), f(b.x), f(b.y))
        }
        FieldLine::Arc {
            center,
            radius,
            start,
            end,
        } => {
            if (end - start - std::f64::consts::TAU).abs() < 1e-9 {
                format!(
                    "circle about ({}, {}), radius {}",
                    f(center.x),
                    f(center.y),
                    f(radius)
                )
            } else {
                format!(
                    "arc about ({}, {}), radius {}, {:.0}° to {:.0}°",
                    f(center.x),
                    f(center.y),
                    f(radius),
                    start.to_degrees(),
                    end.to_degrees()
                )
            }
        }
    }
}

/// Spacing of the points looked for along the lines, pixels.
const SPACING_PX: f64 = 6.0;
/// Most points looked for on one line.
const MAX_PER_LINE: usize = 400;
/// Most rounds fitting a homography before the model asked for.
const MAX_SETTLING: usize = 6;
/// Ridges fainter than this fraction of the median found are dropped.
const FAINT: f64 = 0.3;
/// Points of a line beyond this many count as this many together, so long
/// lines do not outvote the others.
const LINE_SHARE: f64 = 40.0;
/// Fewest lines with points for a fit.
const MIN_LINES: usize = 3;

/// Refines `rough` on `img` against the lines of `preset`.
pub fn refine(
    img: &RgbImage,
    rough: &Calibration,
    preset: &FieldPreset,
    opts: &RefineOptions,
) -> Result<Refined, CalibError> {
    let luma = Luma::of(img);
    refine_luma(&luma, rough, preset, opts)
}

/// [`refine`] on a picture's luma (kept by callers that refine again).
pub fn refine_luma(
    luma: &Luma,
    rough: &Calibration,
    preset: &FieldPreset,
    opts: &RefineOptions,
) -> Result<Refined, CalibError> {
    let [w, h] = luma.size();
    if w < 16 || h < 16 {
        return Err(CalibError::LinesNotFound(format!(
            "the picture is {w}×{h}, too small to look for lines in"
        )));
    }
    let size = [w as u32, h as u32];
    let diag = (w as f64).hypot(h as f64);
    let half = opts
        .search_px
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(15.0 + 0.015 * diag)
        .clamp(2.0, 0.25 * diag);
    let rough = rough.clone().with_image_size(size[0], size[1]);
    let grid = field_grid(preset);
    // Clicks on the floor (points at heights are a full camera's).
    let clicks: Vec<(Vec2, Vec2)> = rough
        .fitted_points()
        .iter()
        .filter(|p| p.z == 0.0)
        .map(|p| (Vec2::new(p.u, p.v), Vec2::new(p.x, p.y)))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    // Searches from each start (the rough calibration, then — for a lens
    // — the clicks re-fitted under a few barrel distortions), the rough one
    // also twice as wide; then, while none passes its check, the other
    // widths. The result that passes with most of its lines found is kept
    // — and trusted only when every other passing result agrees with it.
    let starts = starts(&rough, &clicks, opts.model, size);
    let plan: Vec<(usize, f64)> = SEARCH_SCALES
        .iter()
        .flat_map(|&scale| (0..starts.len()).map(move |i| (i, scale)))
        .collect();
    let attempts = plan.len();
    let outcomes = parallel_map(&plan, |&(i, scale)| {
        let a = attempt(
            luma,
            &starts[i],
            preset,
            opts,
            (half * scale).clamp(2.0, 0.25 * diag),
            &grid,
        )?;
        let v = verify::verify(luma, &a.calib, preset, opts.min_contrast, &clicks);
        Ok((a, v))
    });
    let mut results: Vec<(Attempt, Verdict)> = Vec::new();
    let mut first_error = None;
    for o in outcomes {
        match o {
            Ok(r) => results.push(r),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let Some(best) = (0..results.len()).max_by(|&x, &y| {
        let (a, b) = (&results[x].1, &results[y].1);
        (a.trusted, a.score())
            .partial_cmp(&(b.trusted, b.score()))
            .unwrap_or(std::cmp::Ordering::Equal)
    }) else {
        return Err(first_error.unwrap_or_else(|| CalibError::LinesNotFound("no search ran".into())));
    };
    let (a, mut verdict) = results.swap_remove(best);
    if verdict.trusted {
        // Another result that passes and explains about as much of the
        // paint but puts the lines elsewhere — on average, or far off
        // somewhere: the paint does not decide between them. (One that
        // explains clearly less is a worse fit, not a rival.)
        let (mean_limit, max_limit) = (AGREE * diag, AGREE_MAX * diag);
        let rival = results
            .iter()
            .filter(|(_, v)| v.trusted && v.score() >= verdict.score() - RIVAL_SCORE)
            .filter_map(|(o, _)| crate::calib::compare::lines_apart(&a.calib, &o.calib, &preset.lines, size))
            .filter(|d| d.mean_px > mean_limit || d.max_px > max_limit)
            .max_by(|x, y| x.mean_px.total_cmp(&y.mean_px));
        if let Some(d) = rival {
            verdict.trusted = false;
            verdict.reasons.push(format!(
                "another search explains the paint as well but puts the lines {:.0} px elsewhere on average \
                 ({:.0} px at most): the lines in view do not decide between them",
                d.mean_px, d.max_px
            ));
        }
    }
    let mut report = report(preset, &rough, &a.calib, &grid, &a, luma);
    report.trusted = verdict.trusted;
    report.attempts = attempts;
    report.verdict = verdict;
    Ok(Refined {
        calibration: a.calib,
        report,
    })
}

/// `f` over `items` on the machine's cores (the searches are independent);
/// the results in the items' order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(k) else { break };
                        mine.push((k, f(item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    out.sort_by_key(|(k, _)| *k);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Barrel distortions (k₁ about the picture's centre, over half its
/// diagonal) the clicks are re-fitted under as further starts: a
/// homography through four clicks cannot follow a wide lens, and a search
/// from it may never reach the lines far from them.
const LENS_STARTS: [f64; 3] = [-0.08, -0.16, -0.24];

/// The starts of a search: `rough`, then for the radial model and four or
/// more recorded clicks, a homography through the clicks undistorted by
/// each of [`LENS_STARTS`] with that lens.
fn starts(rough: &Calibration, clicks: &[(Vec2, Vec2)], model: Model, size: [u32; 2]) -> Vec<Calibration> {
    let mut out = vec![rough.clone()];
    if model != Model::Radial || clicks.len() < 4 || rough.distortion().is_some() {
        return out;
    }
    let centre = Vec2::new(f64::from(size[0]) / 2.0, f64::from(size[1]) / 2.0);
    let radius = 0.5 * f64::from(size[0]).hypot(f64::from(size[1]));
    for k1 in LENS_STARTS {
        let d = crate::calib::Distortion::radial(centre, radius, k1, 0.0);
        let Ok(lens) = crate::calib::Calibration::from_parts(crate::geom::mat3::IDENTITY, Some(d)) else {
            continue;
        };
        let pts: Option<Vec<crate::calib::Correspondence>> = clicks
            .iter()
            .map(|&(px, world)| {
                Some(crate::calib::Correspondence {
                    image: lens.undistort_pixel(px)?,
                    world,
                })
            })
            .collect();
        let Some(pts) = pts else { continue };
        let Ok(f) = crate::calib::fit(&pts, &crate::calib::FitOptions::default()) else {
            continue;
        };
        if let Ok(c) = Calibration::from_parts(*f.calibration.homography(), Some(d)) {
            out.push(c.with_image_size(size[0], size[1]));
        }
    }
    out
}

/// One search from a start, and its last round's fit.
struct Attempt {
    calib: Calibration,
    samples: Vec<LineSample>,
    line_of: Vec<usize>,
    residuals: Vec<Option<f64>>,
    model: Model,
    rounds: usize,
}

fn attempt(
    luma: &Luma,
    start: &Calibration,
    preset: &FieldPreset,
    opts: &RefineOptions,
    mut half: f64,
    grid: &[Vec2],
) -> Result<Attempt, CalibError> {
    let [w, h] = luma.size();
    let size = [w as u32, h as u32];
    let mut calib = start.clone();
    // The last round's samples, their lines and their residuals.
    type Round = (Vec<LineSample>, Vec<usize>, Vec<Option<f64>>);
    let mut last: Option<Round> = None;
    let mut rounds = 0;
    // A homography first, until it settles; then the model asked for,
    // searched as wide as at first again: lines the homography could not
    // follow may now be near. A start with a lens keeps it from the first
    // round.
    let first_half = half;
    let mut model = if start.distortion().is_some() {
        opts.model
    } else {
        Model::Homography
    };
    let mut settling = 0;
    for round in 0..opts.max_rounds.max(1) {
        rounds = round + 1;
        let points = sample_lines(&preset.lines, &calib, SPACING_PX, MAX_PER_LINE);
        let search = Search {
            half_px: half,
            line_width: preset.line_width,
            min_contrast: opts.min_contrast,
            partial: false,
        };
        let mut found = find(luma, &calib, &points, &search);
        // A ridge nearer another line's image than its own belongs to the
        // other line (or to both, at a crossing): left out.
        let images = project_lines(&preset.lines, &calib);
        found.retain(|f| nearest_line(&images, f.image) == Some(f.line));
        // Ridges much fainter than the lines are something else.
        let mut contrasts: Vec<f64> = found.iter().map(|f| f64::from(f.contrast)).collect();
        let gate = (FAINT * median(&mut contrasts)) as f32;
        found.retain(|f| f.contrast >= gate);
        let (mut samples, line_of): (Vec<LineSample>, Vec<usize>) = found
            .iter()
            .filter_map(|f| {
                let w = calib.unproject(f.image)?;
                let (world, tangent) = nearest_on(&preset.lines[f.line], w)?;
                Some((
                    LineSample {
                        image: f.image,
                        world,
                        tangent,
                        weight: 1.0,
                    },
                    f.line,
                ))
            })
            .unzip();
        let lines_with_points = count_lines(&found, preset.lines.len());
        if lines_with_points < MIN_LINES {
            return Err(CalibError::LinesNotFound(format!(
                "points were found on {lines_with_points} of the preset's {} lines (searching {half:.0} px across \
                 each); at least {MIN_LINES} are needed: check the preset and that the rough calibration puts the \
                 lines near the painted ones",
                preset.lines.len()
            )));
        }
        weigh(&calib, &mut samples, &line_of, preset.lines.len());
        let (next, residuals) = fit_to_lines(&samples, &calib, model, size)?;
        let moved = max_move(&calib, &next, &in_view(grid, &calib, size));
        calib = next;
        let spread = robust_sigma(&samples, &residuals);
        last = Some((samples, line_of, residuals));
        half = (half * 0.5).max(4.0 * spread + 3.0).min(half);
        if model != opts.model {
            settling += 1;
            if moved < 0.5 || settling >= MAX_SETTLING {
                model = opts.model;
                half = first_half;
            }
        } else if moved < 0.05 {
            break;
        }
    }
    let Some((samples, line_of, residuals)) = last else {
        return Err(CalibError::LinesNotFound("no round ran".into()));
    };
    Ok(Attempt {
        calib,
        samples,
        line_of,
        residuals,
        model,
        rounds,
    })
}

/// The first search's width, and the scales of it tried in turn while the
/// result explains too little of the lines in view.
const SEARCH_SCALES: [f64; 4] = [1.0, 2.0, 0.5, 3.0];
/// Two results agree when they put the lines in view this close on average
/// (share of the picture's diagonal).
const AGREE: f64 = 0.005;
/// …and nowhere further apart than this.
const AGREE_MAX: f64 = 0.02;
/// A passing result scoring this much less than the best ([`Verdict::score`]:
/// the share of the lines found) explains clearly less of the paint: it is
/// no rival to the best.
const RIVAL_SCORE: f64 = 0.1;

/// Lines with at least one point found.
fn count_lines(found: &[detect::Found], lines: usize) -> usize {
    let mut seen = vec![false; lines];
    for f in found {
        if let Some(s) = seen.get_mut(f.line) {
            *s = true;
        }
    }
    seen.iter().filter(|&&s| s).count()
}

/// Signed distances across the lines under `calib`.
fn across(calib: &Calibration, s: &LineSample) -> Option<f64> {
    let a = calib.project(s.world)?;
    let b = calib.project(s.world + s.tangent)?;
    let d = b - a;
    let len = d.length();
    (len > 0.0).then(|| (s.image - a).dot(Vec2::new(-d.y / len, d.x / len)))
}

/// Tukey's biweight on the distances across, scaled by 4.685 robust σ
/// (at least 1 px), times a share that gives a line with many points the
/// weight of [`LINE_SHARE`] points.
fn weigh(calib: &Calibration, samples: &mut [LineSample], line_of: &[usize], lines: usize) {
    let r: Vec<Option<f64>> = samples.iter().map(|s| across(calib, s)).collect();
    let mut abs: Vec<f64> = r.iter().flatten().map(|v| v.abs()).collect();
    let c = 4.685 * (1.4826 * median(&mut abs)).max(1.0 / 4.685);
    let mut per_line = vec![0usize; lines];
    for &l in line_of {
        per_line[l] += 1;
    }
    for ((s, r), &l) in samples.iter_mut().zip(&r).zip(line_of) {
        let share = (LINE_SHARE / per_line[l] as f64).min(1.0).sqrt();
        s.weight = match r {
            Some(r) if r.abs() < c => {
                let u = r / c;
                share * (1.0 - u * u) * (1.0 - u * u)
            }
            _ => 0.0,
        };
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable_by(mid, f64::total_cmp);
    v[mid]
}

/// Robust σ of the residuals of the used samples.
fn robust_sigma(samples: &[LineSample], residuals: &[Option<f64>]) -> f64 {
    let mut abs: Vec<f64> = samples
        .iter()
        .zip(residuals)
        .filter(|(s, _)| s.weight > 0.0)
        .filter_map(|(_, r)| r.map(f64::abs))
        .collect();
    1.4826 * median(&mut abs)
}

/// Points over the field (its playing area and a margin), to measure how
/// far a calibration moves it.
fn field_grid(preset: &FieldPreset) -> Vec<Vec2> {
    let (hx, hy) = (0.55 * preset.size.x, 0.55 * preset.size.y);
    let mut g = Vec::new();
    for i in 0..=10 {
        for j in 0..=10 {
            g.push(Vec2::new(
                -hx + 2.0 * hx * f64::from(i) / 10.0,
                -hy + 2.0 * hy * f64::from(j) / 10.0,
            ));
        }
    }
    g
}

/// Each line's image polylines under `calib`.
fn project_lines(lines: &[FieldLine], calib: &Calibration) -> Vec<Vec<Vec<Vec2>>> {
    lines
        .iter()
        .map(|l| {
            let mut out = Vec::new();
            l.project(calib, 0.5, &mut out);
            out
        })
        .collect()
}

/// The line whose image passes nearest to `p` (`None`: no line has an
/// image).
fn nearest_line(images: &[Vec<Vec<Vec2>>], p: Vec2) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, polys) in images.iter().enumerate() {
        for poly in polys {
            for w in poly.windows(2) {
                // Squared: this runs for every ridge against every line.
                let v = p - nearest_on_segment(p, w[0], w[1]);
                let d = v.dot(v);
                if best.is_none_or(|b| d < b.1) {
                    best = Some((i, d));
                }
            }
        }
    }
    best.map(|b| b.0)
}

/// The grid points `calib` maps into the picture.
fn in_view(grid: &[Vec2], calib: &Calibration, size: [u32; 2]) -> Vec<Vec2> {
    grid.iter()
        .copied()
        .filter(|&p| {
            calib.project(p).is_some_and(|q| {
                q.x >= 0.0 && q.y >= 0.0 && q.x <= f64::from(size[0]) && q.y <= f64::from(size[1])
            })
        })
        .collect()
}

/// Largest move of a grid point between two calibrations, pixels (points
/// either cannot map are left out).
fn max_move(a: &Calibration, b: &Calibration, grid: &[Vec2]) -> f64 {
    grid.iter()
        .filter_map(|&p| Some((a.project(p)? - b.project(p)?).length()))
        .filter(|d| d.is_finite())
        .fold(0.0, f64::max)
}

fn report(
    preset: &FieldPreset,
    rough: &Calibration,
    calib: &Calibration,
    grid: &[Vec2],
    fitted: &Attempt,
    luma: &Luma,
) -> RefineReport {
    let [w, h] = luma.size();
    let in_view = |p: Vec2| p.x >= 0.0 && p.y >= 0.0 && p.x <= (w - 1) as f64 && p.y <= (h - 1) as f64;
    let points = sample_lines(&preset.lines, calib, SPACING_PX, MAX_PER_LINE);
    let mut lines: Vec<LineReport> = preset
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| LineReport {
            line: describe(l),
            sampled: points
                .iter()
                .filter(|p| p.line == i && calib.project(p.world).is_some_and(in_view))
                .count(),
            found: 0,
            rms_px: None,
        })
        .collect();
    let mut sums = vec![0.0; lines.len()];
    let (mut all, mut used) = (0.0, 0usize);
    for ((s, r), &i) in fitted.samples.iter().zip(&fitted.residuals).zip(&fitted.line_of) {
        let (Some(r), true) = (r, s.weight > 0.0) else {
            continue;
        };
        if let Some(l) = lines.get_mut(i) {
            l.found += 1;
            sums[i] += r * r;
        }
        all += r * r;
        used += 1;
    }
    let mut warnings = Vec::new();
    for (l, s) in lines.iter_mut().zip(&sums) {
        if l.found > 0 {
            l.rms_px = Some((s / l.found as f64).sqrt());
        } else if l.sampled > 0 {
            warnings.push(format!("{} is in view but was not found", l.line));
        }
    }
    RefineReport {
        model: fitted.model,
        rounds: fitted.rounds,
        points: fitted.samples.len(),
        used,
        rms_px: if used > 0 { (all / used as f64).sqrt() } else { 0.0 },
        coverage: {
            let sampled: usize = lines.iter().map(|l| l.sampled).sum();
            if sampled > 0 {
                (used as f64 / sampled as f64).min(1.0)
            } else {
                0.0
            }
        },
        moved_px: max_move(rough, calib, grid),
        lines,
        trusted: false,
        verdict: Verdict::default(),
        attempts: 0,
        warnings,
    }
}

/// Refining on demo frames, whose true calibration is known, from rough
/// calibrations fitted to four perturbed clicks.
#[cfg(test)]
mod tests {

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
}
