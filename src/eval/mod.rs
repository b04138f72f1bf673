//! Evaluation on real labelled frames (`testdata/fields/` of the shared
//! material): snap to lines from perturbed clicks and the floor mask with
//! and without a calibration, each scored against the frame's truth. The
//! harness behind `benches/real_cameras.rs` (the table in
//! docs/PERFORMANCE.md) and `tests/it/real_cameras.rs`.
//!
//! - **Snap**: four named field points in view, spread as far apart as
//!   they go, clicked up to 15 px off (uniform in a square, several seeded
//!   draws); a homography through them; `calib refine`; the result's
//!   distance from the truth over the lines of the pitch in view
//!   ([`crate::calib::compare::lines_apart`]), next to its own verdict.
//! - **Mask**: the default method, uncut and cut to the field through the
//!   truth; scored as the share of the pitch (the playing area through
//!   the truth) kept as floor, and the share of the picture above the
//!   field (above the pitch grown by the field margin, column by column)
//!   called floor.
//! - **Agreement** ([`agreement`]): one mask against another away from
//!   the other's boundary (issue 48's quality bound).

pub mod agreement;
pub mod truth;
pub mod warp;

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::calib::compare::{Apart, lines_apart};
use crate::calib::presets::FieldPreset;
use crate::calib::refine::{RefineOptions, RefineReport, refine};
use crate::calib::{Calibration, Correspondence, FitOptions, fit};
use crate::geom::Vec2;
use crate::image::{FLOOR, MaskImage, RgbImage};
use crate::mask::field::{FieldMasker, FieldRegion};
use crate::mask::{MaskSettings, Masker};

pub use truth::{RealFrame, fields_dir, load};

/// The strong lens of the evaluation: the elevated camera's frame bent
/// like a wide stadium camera's and enlarged to 3072×1728 (about 5 Mpx).
pub const STRONG_LENS: warp::Barrel = warp::Barrel {
    k: 0.3,
    from: [1920, 1080],
    to: [3072, 1728],
};

/// Every frame with its picture, and after each labelled one the same
/// seen through [`STRONG_LENS`].
pub fn frames(dir: &std::path::Path) -> Result<Vec<(RealFrame, RgbImage)>, String> {
    let mut out = Vec::new();
    for f in load(dir)? {
        let img = crate::video::still::load_rgb(&f.image).map_err(|e| format!("{}: {e}", f.name))?;
        let lens = warp::Barrel {
            k: std::env::var("UNDERLAY_EVAL_K")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(STRONG_LENS.k),
            ..STRONG_LENS
        };
        let bent = (!f.labels.is_empty() && f.size == STRONG_LENS.from)
            .then(|| warp::through(&f, &img, lens))
            .transpose()?;
        out.push((f, img));
        out.extend(bent);
    }
    Ok(out)
}

/// How far a click may be off, pixels (each axis).
pub const CLICK_ERROR_PX: f64 = 15.0;

/// One snap from perturbed clicks.
#[derive(Clone, Debug)]
pub struct SnapTrial {
    /// The draw's seed.
    pub seed: u64,
    /// The named points clicked.
    pub clicked: Vec<String>,
    /// The homography through the clicks against the truth.
    pub start: Option<Apart>,
    /// The refined result against the truth, and its report; or the
    /// refinement's error.
    pub result: Result<(Apart, RefineReport), String>,
    /// The start and the result, for looking at.
    pub calibrations: Option<(Calibration, Option<Calibration>)>,
    pub seconds: f64,
}

impl SnapTrial {
    /// Within `tolerance_px` of the truth on average over the lines in view.
    pub fn within(&self, tolerance_px: f64) -> bool {
        matches!(&self.result, Ok((a, _)) if a.mean_px <= tolerance_px)
    }

    /// The refinement called its own result trustworthy.
    pub fn trusted(&self) -> bool {
        matches!(&self.result, Ok((_, r)) if r.trusted)
    }
}

/// The tolerance of the issue: 0.5 % of the picture's diagonal.
pub fn tolerance_px(size: [u32; 2]) -> f64 {
    0.005 * f64::from(size[0]).hypot(f64::from(size[1]))
}

/// The named field points the truth puts in the picture (2 % in from its
/// edges), four of them spanning the largest area.
pub fn spread_points(frame: &RealFrame) -> Vec<(String, Vec2, Vec2)> {
    let (w, h) = (f64::from(frame.size[0]), f64::from(frame.size[1]));
    let m = 0.02 * w.max(h);
    let seen: Vec<(String, Vec2, Vec2)> = frame
        .preset
        .points
        .iter()
        .filter_map(|p| {
            let q = frame.truth.project(p.pos)?;
            (q.x >= m && q.y >= m && q.x <= w - m && q.y <= h - m).then(|| (p.name.clone(), p.pos, q))
        })
        .collect();
    if seen.len() <= 4 {
        return seen;
    }
    // The least of the four triangles the points make: large when the
    // four are spread and no three are nearly on a line.
    let area = |q: [Vec2; 4]| {
        let tri = |a: Vec2, b: Vec2, c: Vec2| ((b - a).cross(c - a)).abs() / 2.0;
        let t = [
            tri(q[0], q[1], q[2]),
            tri(q[0], q[1], q[3]),
            tri(q[0], q[2], q[3]),
            tri(q[1], q[2], q[3]),
        ];
        t.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let n = seen.len();
    let mut best = (0.0, [0, 1, 2, 3]);
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    let v = area([seen[a].2, seen[b].2, seen[c].2, seen[d].2]);
                    if v > best.0 {
                        best = (v, [a, b, c, d]);
                    }
                }
            }
        }
    }
    best.1.iter().map(|&i| seen[i].clone()).collect()
}

/// Snaps from `draws` perturbed clicks of [`spread_points`] (seeds 1…).
pub fn snap_trials(frame: &RealFrame, img: &RgbImage, draws: u64, opts: &RefineOptions) -> Vec<SnapTrial> {
    let points = spread_points(frame);
    (1..=draws)
        .map(|seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            let clicks: Vec<Correspondence> = points
                .iter()
                .map(|(_, world, px)| Correspondence {
                    image: *px
                        + Vec2::new(
                            rng.random_range(-CLICK_ERROR_PX..=CLICK_ERROR_PX),
                            rng.random_range(-CLICK_ERROR_PX..=CLICK_ERROR_PX),
                        ),
                    world: *world,
                })
                .collect();
            snap_from(
                frame,
                img,
                &clicks,
                seed,
                points.iter().map(|p| p.0.clone()).collect(),
                opts,
            )
        })
        .collect()
}

fn snap_from(
    frame: &RealFrame,
    img: &RgbImage,
    clicks: &[Correspondence],
    seed: u64,
    clicked: Vec<String>,
    opts: &RefineOptions,
) -> SnapTrial {
    let t0 = Instant::now();
    let start = fit(
        clicks,
        &FitOptions {
            image_size: Some(frame.size),
            ..FitOptions::default()
        },
    );
    let (start_apart, result, calibrations) = match start {
        Err(e) => (None, Err(format!("the clicks: {e}")), None),
        Ok(f) => {
            let s = lines_apart(&frame.truth, &f.calibration, &frame.preset.lines, frame.size);
            // As `calib refine --points` starts: the clicks recorded.
            let start = f
                .calibration
                .clone()
                .with_fitted_points(clicks.iter().map(crate::calib::unit::FittedPoint::from).collect());
            let refined = refine(img, &start, &frame.preset, opts);
            let snapped = refined.as_ref().ok().map(|r| r.calibration.clone());
            let r = refined.map_err(|e| e.to_string()).and_then(|r| {
                let a = lines_apart(&frame.truth, &r.calibration, &frame.preset.lines, frame.size)
                    .ok_or_else(|| "no line of the pitch is in view".to_owned())?;
                Ok((a, r.report))
            });
            (s, r, Some((f.calibration, snapped)))
        }
    };
    SnapTrial {
        seed,
        clicked,
        start: start_apart,
        result,
        calibrations,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

/// The truth a frame's snaps are judged against.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The frame with the truth to use.
    pub frame: RealFrame,
    /// How far the set's own truth puts the lines from where the paint is
    /// (its snap to the paint, when trusted), mean pixels.
    pub given_off_px: Option<f64>,
    /// The set's truth was replaced by its snap to the paint (it was
    /// further from the paint than the tolerance, and the snap is stable:
    /// from the truth and from four starts 10 px off it, every snap is
    /// trusted and they agree within the tolerance).
    pub replaced: bool,
    /// The snap of the set's truth to the paint, and its report.
    pub snap: Option<(Calibration, RefineReport)>,
}

/// The set's truth, checked against the paint: snapped to the lines from
/// itself (a homography for the pinhole sets, the radial model for the
/// labelled one). When that is trusted and moves the lines by more than
/// the tolerance, the snap is the reference (the set's README says two of
/// its cameras could not be judged closely), and the move is reported.
pub fn reference(frame: &RealFrame, img: &RgbImage) -> Reference {
    let model = if frame.labels.is_empty() {
        crate::calib::Model::Homography
    } else {
        crate::calib::Model::Radial
    };
    let opts = RefineOptions {
        model,
        ..RefineOptions::default()
    };
    let snap = refine(img, &frame.truth, &frame.preset, &opts)
        .ok()
        .map(|r| (r.calibration, r.report));
    // The paint must fix it: snapped again from the truth's four field
    // corners moved 10 px (four ways), each must be trusted and agree.
    let stable = snap.as_ref().is_some_and(|(c, r)| {
        r.trusted
            && (0..4).all(|k| {
                let moved = moved_start(frame, k);
                moved
                    .and_then(|m| refine(img, &m, &frame.preset, &opts).ok())
                    .filter(|o| o.report.trusted)
                    .and_then(|o| lines_apart(c, &o.calibration, &frame.preset.lines, frame.size))
                    .is_some_and(|a| a.mean_px <= tolerance_px(frame.size))
            })
    });
    let Some((calibration, _)) = snap.clone().filter(|_| stable) else {
        return Reference {
            frame: frame.clone(),
            given_off_px: None,
            replaced: false,
            snap,
        };
    };
    let off = lines_apart(&calibration, &frame.truth, &frame.preset.lines, frame.size).map(|a| a.mean_px);
    let replaced = off.is_some_and(|o| o > tolerance_px(frame.size));
    let mut f = frame.clone();
    if replaced {
        f.truth = calibration;
        f.name = format!("{} (truth snapped to the paint)", frame.name);
    }
    Reference {
        frame: f,
        given_off_px: off,
        replaced,
        snap,
    }
}

/// The truth re-fitted through the images of the pitch's corners moved
/// 10 px (each a different way for `k` = 0…3).
fn moved_start(frame: &RealFrame, k: usize) -> Option<Calibration> {
    let half = frame.preset.size * 0.5;
    let corners = [
        Vec2::new(-half.x, -half.y),
        Vec2::new(half.x, -half.y),
        Vec2::new(half.x, half.y),
        Vec2::new(-half.x, half.y),
    ];
    let dirs = [
        Vec2::new(1.0, 0.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(-1.0, 0.0),
        Vec2::new(0.0, -1.0),
    ];
    let pts: Option<Vec<Correspondence>> = corners
        .iter()
        .enumerate()
        .map(|(j, &w)| {
            Some(Correspondence {
                image: frame.truth.project_undistorted(w)? + dirs[(j + k) % 4] * 10.0,
                world: w,
            })
        })
        .collect();
    let f = fit(&pts?, &FitOptions::default()).ok()?;
    Calibration::from_parts(*f.calibration.homography(), frame.truth.distortion().copied())
        .ok()
        .map(|c| c.with_image_size(frame.size[0], frame.size[1]))
}

/// A mask against the truth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaskScore {
    /// Share of the pitch's pixels called floor.
    pub pitch_kept: f64,
    /// Share of the pixels above the field called floor.
    pub above_floor: f64,
}

/// Scores `mask` against `frame`'s truth (see the module docs).
pub fn score_mask(frame: &RealFrame, mask: &MaskImage) -> MaskScore {
    let (h, w) = mask.dim();
    let half = frame.preset.size * 0.5;
    let pitch = FieldRegion {
        outline: vec![
            Vec2::new(-half.x, -half.y),
            Vec2::new(half.x, -half.y),
            Vec2::new(half.x, half.y),
            Vec2::new(-half.x, half.y),
        ],
    };
    let inside = FieldMasker::region(&frame.truth, &pitch, w, h);
    let grown = FieldMasker::region(&frame.truth, &FieldRegion::of_preset(&frame.preset), w, h);
    let (mut kept, mut total) = (0usize, 0usize);
    for (m, r) in mask.iter().zip(inside.iter()) {
        if *r == FLOOR {
            total += 1;
            kept += usize::from(*m == FLOOR);
        }
    }
    let (mut above, mut above_total) = (0usize, 0usize);
    for x in 0..w {
        let Some(top) = (0..h).find(|&y| grown[(y, x)] == FLOOR) else {
            continue;
        };
        for y in 0..top {
            above_total += 1;
            above += usize::from(mask[(y, x)] == FLOOR);
        }
    }
    let share = |a: usize, b: usize| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    MaskScore {
        pitch_kept: share(kept, total),
        above_floor: share(above, above_total),
    }
}

/// The default mask of `img`, uncut (`None`) or cut to the field through
/// `calibration`, as `underlay mask` makes it.
pub fn default_mask(
    img: &RgbImage,
    calibration: Option<(&Calibration, &FieldPreset)>,
) -> Result<MaskImage, String> {
    let inner = MaskSettings::default().build().map_err(|e| e.to_string())?;
    let mut masker: Box<dyn Masker> = match calibration {
        Some((c, p)) => Box::new(FieldMasker::new(inner, c.clone(), FieldRegion::of_preset(p))),
        None => Box::new(crate::mask::ground::GroundMasker::new(inner)),
    };
    let mut out = crate::mask::FloorMask::new();
    masker
        .compute(&crate::video::Picture::Rgb(img), 0.0, &mut out)
        .map_err(|e| e.to_string())?;
    Ok(out.to_image())
}

/// `img` with floor tinted blue and the rest red, and the truth's lines
/// in yellow: for looking at a mask.
pub fn tint(img: &RgbImage, mask: &MaskImage, frame: &RealFrame) -> RgbImage {
    let mut out = img.clone();
    let (h, w, _) = img.dim();
    for y in 0..h {
        for x in 0..w {
            let t: [u16; 3] = if mask.get((y, x)) == Some(&FLOOR) {
                [40, 90, 255]
            } else {
                [255, 40, 40]
            };
            for c in 0..3 {
                out[(y, x, c)] = ((u16::from(img[(y, x, c)]) + t[c]) / 2) as u8;
            }
        }
    }
    draw_lines(&mut out, &frame.truth, &frame.preset, [255, 255, 0]);
    out
}

/// Draws `preset`'s lines through `calib` one pixel wide.
pub fn draw_lines(img: &mut RgbImage, calib: &Calibration, preset: &FieldPreset, color: [u8; 3]) {
    let (h, w, _) = img.dim();
    let mut polys = Vec::new();
    for l in &preset.lines {
        l.project(calib, 0.5, &mut polys);
    }
    for p in &polys {
        for s in p.windows(2) {
            let n = ((s[1] - s[0]).length().ceil() as usize).clamp(1, 100_000);
            for k in 0..=n {
                let q = s[0].lerp(s[1], k as f64 / n as f64);
                let (x, y) = (q.x.round(), q.y.round());
                if x >= 0.0 && y >= 0.0 && (x as usize) < w && (y as usize) < h {
                    for c in 0..3 {
                        img[(y as usize, x as usize, c)] = color[c];
                    }
                }
            }
        }
    }
}

/// RMS distance of `frame`'s point-on-line labels to their lines through
/// `calib`, pixels; `None` without labels.
pub fn label_rms(frame: &RealFrame, calib: &Calibration) -> Option<f64> {
    if frame.labels.is_empty() {
        return None;
    }
    let diag = f64::from(frame.size[0]).hypot(f64::from(frame.size[1]));
    let sum: f64 = frame
        .labels
        .iter()
        .map(|l| {
            crate::calib::compare::distance_to_line(calib, &l.line, l.pixel)
                .unwrap_or(diag)
                .powi(2)
        })
        .sum();
    Some((sum / frame.labels.len() as f64).sqrt())
}
