//! A calibration with no clicks: from a field preset, a picture and a hint
//! of where the camera stands, the camera poses and fields of view in that
//! region are searched for the one whose field agrees best with the picture
//! — its painted lines on ridges of the picture, its floor where the
//! picture is turf-coloured — and the best few are snapped to the lines
//! ([`super::refine_luma`]) and judged as any snap is. The search is coarse
//! (random poses, then a local descent) on a picture about 640 pixels
//! wide; the snap does the rest. A stretch: it is measured on real frames
//! (docs/PERFORMANCE.md), and a result is only as good as its verdict.

use rand::{Rng, SeedableRng};

use crate::calib::presets::FieldPreset;
use crate::calib::{CalibError, Calibration};
use crate::geom::Vec2;
use crate::image::RgbImage;

use super::detect::Luma;
use super::{RefineOptions, Refined, parallel_map, refine_luma};

/// Where the camera stands, roughly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum Hint {
    /// Beside a touchline (a broadcast camera at the main stand).
    Side,
    /// Behind the goal line at −x.
    BehindLeftGoal,
    /// Behind the goal line at +x.
    BehindRightGoal,
    /// Above the field (a ceiling camera, a drone).
    Above,
}

impl Hint {
    /// Where the camera stands, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Hint::Side => "beside a touchline",
            Hint::BehindLeftGoal => "behind the goal at -x",
            Hint::BehindRightGoal => "behind the goal at +x",
            Hint::Above => "above the field",
        }
    }
}

/// Width of the picture searched on, pixels.
const SEARCH_WIDTH: usize = 640;
/// Random poses tried.
const TRIES: usize = 40_000;
/// Poses descended from.
const DESCENTS: usize = 12;
/// Poses snapped to the lines.
const SNAPS: usize = 3;
/// Image points where the floor is compared (columns × rows).
const GRID: (usize, usize) = (40, 24);

/// A camera on the floor's world: position, the floor point it looks at,
/// horizontal field of view (radians).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pose {
    eye: [f64; 3],
    target: Vec2,
    fov: f64,
}

/// The camera's rows (right, down, forward) and focal length for a
/// `w × h` picture; `None` for a degenerate pose.
fn frame_of(p: &Pose, w: f64) -> Option<([[f64; 3]; 3], f64)> {
    let fwd = [p.target.x - p.eye[0], p.target.y - p.eye[1], -p.eye[2]];
    let n = (fwd[0] * fwd[0] + fwd[1] * fwd[1] + fwd[2] * fwd[2]).sqrt();
    if !(n.is_finite() && n > 0.0 && p.eye[2] > 0.0 && p.fov > 0.05 && p.fov < 3.0) {
        return None;
    }
    let fwd = fwd.map(|v| v / n);
    // right = fwd × up, down = fwd × right.
    let right = [fwd[1], -fwd[0], 0.0];
    let rn = right[0].hypot(right[1]);
    if rn < 1e-6 {
        // Straight down: right is +x.
        let right = [1.0, 0.0, 0.0];
        let down = cross(fwd, right);
        return Some(([right, down, fwd], 0.5 * w / (0.5 * p.fov).tan()));
    }
    let right = right.map(|v| v / rn);
    let down = cross(fwd, right);
    Some(([right, down, fwd], 0.5 * w / (0.5 * p.fov).tan()))
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The floor → picture homography of `p` in a `w × h` picture.
fn homography(p: &Pose, w: f64, h: f64) -> Option<crate::calib::Mat3> {
    let ([r, d, f], focal) = frame_of(p, w)?;
    let t = [-dot(r, p.eye), -dot(d, p.eye), -dot(f, p.eye)];
    let (cx, cy) = (0.5 * w, 0.5 * h);
    let row = |k: usize| [focal * [r, d, f][k][0], focal * [r, d, f][k][1], focal * t[k]];
    let (a, b) = (row(0), row(1));
    let c = [f[0], f[1], t[2]];
    Some([
        [a[0] + cx * c[0], a[1] + cx * c[1], a[2] + cx * c[2]],
        [b[0] + cy * c[0], b[1] + cy * c[1], b[2] + cy * c[2]],
        c,
    ])
}

/// What the picture says, at the search's size.
struct Evidence {
    w: usize,
    h: usize,
    /// Distance to the nearest ridge on turf, pixels (capped).
    dist: Vec<f32>,
    /// Turf-coloured at each grid point.
    turf: Vec<bool>,
}

/// Least share of the grid where a result's field (and margin) and the
/// turf agree, for it to be trusted.
const REGION_AGREE: f64 = 0.9;

/// The share of the grid where `calib`'s field (with its margin; pixels at
/// `scale` times the search picture's) and the picture's turf agree.
fn region_agreement(calib: &Calibration, ev: &Evidence, scale: f64, field: (Vec2, Vec2)) -> f64 {
    let (lo, hi) = field;
    let agree = grid_points(ev.w, ev.h)
        .zip(&ev.turf)
        .filter(|&((u, v), &turf)| {
            let on = calib
                .unproject(Vec2::new(u * scale, v * scale))
                .is_some_and(|p| p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y);
            on == turf
        })
        .count();
    agree as f64 / ev.turf.len().max(1) as f64
}

/// Distances beyond this count as this.
const FAR: f32 = 30.0;

impl Evidence {
    fn of(img: &RgbImage, min_contrast: f32) -> Evidence {
        let small = reduce(img);
        let (h, w, _) = small.dim();
        let luma = Luma::of(&small);
        let turf_at = |u: usize, v: usize| {
            let c = |k| i32::from(small[[v, u, k]]);
            let (r, g, b) = (c(0), c(1), c(2));
            g > r + 4 && g > b + 4
        };
        let l = |u: usize, v: usize| luma.at(Vec2::new(u as f64, v as f64)).unwrap_or(0.0);
        let mut ridge = vec![false; w * h];
        let s = 2;
        for v in s..h.saturating_sub(s) {
            for u in s..w.saturating_sub(s) {
                let c = l(u, v);
                let across = [((u - s, v), (u + s, v)), ((u, v - s), (u, v + s))];
                ridge[v * w + u] = across.iter().any(|&((ua, va), (ub, vb))| {
                    c - l(ua, va).max(l(ub, vb)) >= min_contrast && turf_at(ua, va) && turf_at(ub, vb)
                });
            }
        }
        let dist = distance(&ridge, w, h);
        let turf = grid_points(w, h)
            .map(|(u, v)| turf_at(u.round() as usize, v.round() as usize))
            .collect();
        Evidence { w, h, dist, turf }
    }

    fn dist_at(&self, p: Vec2) -> Option<f32> {
        let (u, v) = (p.x.round(), p.y.round());
        (u >= 0.0 && v >= 0.0 && u < self.w as f64 && v < self.h as f64)
            .then(|| self.dist[v as usize * self.w + u as usize])
    }
}

/// The grid points, in the search picture's pixels.
fn grid_points(w: usize, h: usize) -> impl Iterator<Item = (f64, f64)> {
    (0..GRID.1).flat_map(move |j| {
        (0..GRID.0).map(move |i| {
            (
                (i as f64 + 0.5) * w as f64 / GRID.0 as f64,
                (j as f64 + 0.5) * h as f64 / GRID.1 as f64,
            )
        })
    })
}

/// `img` box-averaged down to about [`SEARCH_WIDTH`] pixels wide.
fn reduce(img: &RgbImage) -> RgbImage {
    let (h, w, _) = img.dim();
    let k = w.div_ceil(SEARCH_WIDTH).max(1);
    let (sw, sh) = ((w / k).max(1), (h / k).max(1));
    RgbImage::from_shape_fn((sh, sw, 3), |(v, u, c)| {
        let mut sum = 0u32;
        for dv in 0..k {
            for du in 0..k {
                sum += u32::from(img[[(v * k + dv).min(h - 1), (u * k + du).min(w - 1), c]]);
            }
        }
        (sum / (k * k) as u32) as u8
    })
}

/// Chamfer (3-4) distance to the nearest set cell, in pixels, capped at
/// [`FAR`].
fn distance(set: &[bool], w: usize, h: usize) -> Vec<f32> {
    let big = 3.0 * FAR;
    let mut d: Vec<f32> = set.iter().map(|&s| if s { 0.0 } else { big }).collect();
    for v in 0..h {
        for u in 0..w {
            let i = v * w + u;
            let mut m = d[i];
            if u > 0 {
                m = m.min(d[i - 1] + 3.0);
            }
            if v > 0 {
                m = m.min(d[i - w] + 3.0);
                if u > 0 {
                    m = m.min(d[i - w - 1] + 4.0);
                }
                if u + 1 < w {
                    m = m.min(d[i - w + 1] + 4.0);
                }
            }
            d[i] = m;
        }
    }
    for v in (0..h).rev() {
        for u in (0..w).rev() {
            let i = v * w + u;
            let mut m = d[i];
            if u + 1 < w {
                m = m.min(d[i + 1] + 3.0);
            }
            if v + 1 < h {
                m = m.min(d[i + w] + 3.0);
                if u + 1 < w {
                    m = m.min(d[i + w + 1] + 4.0);
                }
                if u > 0 {
                    m = m.min(d[i + w - 1] + 4.0);
                }
            }
            d[i] = m;
        }
    }
    d.into_iter().map(|v| (v / 3.0).min(FAR)).collect()
}

/// How well `pose` agrees with the picture: the share of the grid where
/// the field (and a margin) and the turf agree, plus how near the lines'
/// samples in view lie to ridges. `None` when too little is in view.
fn score(pose: &Pose, ev: &Evidence, samples: &[Vec2], field: (Vec2, Vec2)) -> Option<f64> {
    let (w, h) = (ev.w as f64, ev.h as f64);
    let ([r, d, f], focal) = frame_of(pose, w)?;
    let (cx, cy) = (0.5 * w, 0.5 * h);
    let mut near = 0.0;
    let mut seen = 0usize;
    for s in samples {
        let x = [s.x - pose.eye[0], s.y - pose.eye[1], -pose.eye[2]];
        let z = dot(f, x);
        if z <= 0.0 {
            continue;
        }
        let p = Vec2::new(cx + focal * dot(r, x) / z, cy + focal * dot(d, x) / z);
        if let Some(dist) = ev.dist_at(p) {
            seen += 1;
            let t = f64::from(dist) / 2.0;
            near += (-0.5 * t * t).exp();
        }
    }
    if seen < samples.len() / 8 {
        return None;
    }
    let (lo, hi) = field;
    let mut agree = 0usize;
    for ((u, v), &turf) in grid_points(ev.w, ev.h).zip(&ev.turf) {
        let ray = [
            r[0] * (u - cx) / focal + d[0] * (v - cy) / focal + f[0],
            r[1] * (u - cx) / focal + d[1] * (v - cy) / focal + f[1],
            r[2] * (u - cx) / focal + d[2] * (v - cy) / focal + f[2],
        ];
        let on_field = ray[2] < 0.0 && {
            let s = -pose.eye[2] / ray[2];
            let (x, y) = (pose.eye[0] + s * ray[0], pose.eye[1] + s * ray[1]);
            x >= lo.x && x <= hi.x && y >= lo.y && y <= hi.y
        };
        agree += usize::from(on_field == turf);
    }
    let region = agree as f64 / ev.turf.len() as f64;
    Some(region + near / seen as f64)
}

/// A random pose for `hint` over a field `size` (length along x, width
/// along y, centred on the origin).
fn random_pose(hint: Hint, size: Vec2, rng: &mut impl Rng) -> Pose {
    let (l, w) = (size.x, size.y);
    let mut u = |a: f64, b: f64| a + (b - a) * rng.random::<f64>();
    let (eye, target) = match hint {
        Hint::Side => (
            [
                u(-0.4 * l, 0.4 * l),
                -0.5 * w - u(0.05 * w, 1.5 * w),
                u(0.05 * w, 1.2 * w),
            ],
            Vec2::new(u(-0.5 * l, 0.5 * l), u(-0.5 * w, 0.5 * w)),
        ),
        Hint::BehindLeftGoal | Hint::BehindRightGoal => {
            let sign = if hint == Hint::BehindLeftGoal { -1.0 } else { 1.0 };
            (
                [
                    sign * (0.5 * l + u(0.02 * l, 0.6 * l)),
                    u(-0.5 * w, 0.5 * w),
                    u(0.05 * w, 1.2 * w),
                ],
                Vec2::new(u(-0.5 * l, 0.5 * l), u(-0.5 * w, 0.5 * w)),
            )
        }
        Hint::Above => {
            let (x, y) = (u(-0.5 * l, 0.5 * l), u(-0.5 * w, 0.5 * w));
            (
                [x, y, u(0.3 * w, 3.0 * w)],
                Vec2::new(x + u(-0.3 * l, 0.3 * l), y + u(-0.3 * w, 0.3 * w)),
            )
        }
    };
    Pose {
        eye,
        target,
        fov: u(0.2, 1.8),
    }
}

/// Steps of the descent per parameter, as shares of the field's length or
/// radians.
fn descend(mut pose: Pose, ev: &Evidence, samples: &[Vec2], field: (Vec2, Vec2), size: Vec2) -> (Pose, f64) {
    let mut best = score(&pose, ev, samples, field).unwrap_or(f64::NEG_INFINITY);
    let mut step = 0.05;
    while step > 0.002 {
        let mut improved = false;
        for k in 0..6 {
            for sign in [-1.0, 1.0] {
                let mut p = pose;
                let d = sign * step;
                match k {
                    0..=2 => p.eye[k] += d * size.x,
                    3 => p.target.x += d * size.x,
                    4 => p.target.y += d * size.x,
                    _ => p.fov *= 1.0 + d,
                }
                if let Some(s) = score(&p, ev, samples, field)
                    && s > best
                {
                    (pose, best) = (p, s);
                    improved = true;
                }
            }
        }
        if !improved {
            step *= 0.5;
        }
    }
    (pose, best)
}

/// Finds a calibration of `img` for `preset`'s field with the camera where
/// `hint` says, snapped to the lines and judged: the snapped result with
/// the best verdict among the best few poses.
pub fn find(
    img: &RgbImage,
    preset: &FieldPreset,
    hint: Hint,
    opts: &RefineOptions,
) -> Result<Refined, CalibError> {
    let (h, w, _) = img.dim();
    if w < 16 || h < 16 {
        return Err(CalibError::LinesNotFound(format!(
            "the picture is {w}×{h}, too small to look for lines in"
        )));
    }
    let ev = Evidence::of(img, opts.min_contrast);
    let size = preset.size;
    let margin = 0.04 * size.x;
    let field = (
        Vec2::new(-0.5 * size.x - margin, -0.5 * size.y - margin),
        Vec2::new(0.5 * size.x + margin, 0.5 * size.y + margin),
    );
    let spacing = size.x / 120.0;
    let samples: Vec<Vec2> = preset
        .lines
        .iter()
        .flat_map(|l| {
            let n = (l.length() / spacing).ceil().clamp(2.0, 200.0) as usize;
            (0..n).map(move |k| l.at((k as f64 + 0.5) / n as f64).0)
        })
        .collect();
    // Random poses on the machine's cores, the best kept.
    let seeds: Vec<u64> = (0..8).collect();
    let mut scored: Vec<(Pose, f64)> = parallel_map(&seeds, |&seed| {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..TRIES / 8)
            .filter_map(|_| {
                let p = random_pose(hint, size, &mut rng);
                score(&p, &ev, &samples, field).map(|s| (p, s))
            })
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(DESCENTS);
    let mut descended = parallel_map(&scored, |&(p, _)| descend(p, &ev, &samples, field, size));
    descended.sort_by(|a, b| b.1.total_cmp(&a.1));
    // At full size: the focal length and centre scale with the picture.
    let scale = w as f64 / ev.w as f64;
    let luma = Luma::of(img);
    let mut best: Option<Refined> = None;
    let mut first_error = None;
    for (pose, _) in descended.iter().take(SNAPS) {
        let Some(hm) = homography(pose, ev.w as f64, ev.h as f64) else {
            continue;
        };
        let full = [
            [hm[0][0] * scale, hm[0][1] * scale, hm[0][2] * scale],
            [hm[1][0] * scale, hm[1][1] * scale, hm[1][2] * scale],
            hm[2],
        ];
        let Ok(rough) = Calibration::from_homography(full) else {
            continue;
        };
        match refine_luma(&luma, &rough, preset, opts) {
            Ok(mut r) => {
                // Found with no clicks, the field must also lie where the
                // turf is: lines found on a roof's beams or a stand's
                // railings can agree among themselves.
                let agree = region_agreement(&r.calibration, &ev, scale, field);
                if agree < REGION_AGREE {
                    r.report.trusted = false;
                    r.report.verdict.trusted = false;
                    r.report.verdict.reasons.push(format!(
                        "its field and the picture's turf agree on {:.0} % of the picture (at least {:.0} % is needed \
                         without clicks)",
                        100.0 * agree,
                        100.0 * REGION_AGREE
                    ));
                }
                let better = best.as_ref().is_none_or(|b| {
                    (r.report.trusted, r.report.verdict.score())
                        > (b.report.trusted, b.report.verdict.score())
                });
                if better {
                    best = Some(r);
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    best.ok_or_else(|| {
        first_error.unwrap_or_else(|| {
            CalibError::LinesNotFound("no camera pose in the hinted region agrees with the picture".into())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pose_projects_the_field_as_its_homography_does() {
        let pose = Pose {
            eye: [0.0, -60_000.0, 20_000.0],
            target: Vec2::new(0.0, 0.0),
            fov: 1.0,
        };
        let (w, h) = (640.0, 360.0);
        let hm = homography(&pose, w, h).unwrap();
        let c = Calibration::from_homography(hm).unwrap();
        // The target is at the picture's centre; +x to the right; the far
        // side higher up than the near one.
        let centre = c.project(Vec2::ZERO).unwrap();
        assert!(
            (centre.x - 320.0).abs() < 1e-6 && (centre.y - 180.0).abs() < 1e-6,
            "{centre:?}"
        );
        assert!(c.project(Vec2::new(10_000.0, 0.0)).unwrap().x > 320.0);
        assert!(
            c.project(Vec2::new(0.0, 10_000.0)).unwrap().y < c.project(Vec2::new(0.0, -10_000.0)).unwrap().y
        );
    }

    #[test]
    fn the_chamfer_distance_is_about_euclidean() {
        let (w, h) = (21, 21);
        let mut set = vec![false; w * h];
        set[10 * w + 10] = true;
        let d = distance(&set, w, h);
        assert_eq!(d[10 * w + 10], 0.0);
        assert!((d[10 * w + 15] - 5.0).abs() < 0.01);
        assert!((d[15 * w + 15] - 50f32.sqrt()).abs() < 0.6);
        assert_eq!(distance(&[false; 4], 2, 2), vec![FAR; 4]);
    }
}
