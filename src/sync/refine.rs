//! Timing to a small fraction of a frame, and the clock drift, from where
//! each object's change lies along its path.
//!
//! A moving object changes the picture over the region it leaves and the
//! region it enters; by symmetry that change is centred on the middle of
//! its path over the frame's interval. So under a time map that is a
//! little off, the change's centroid lies ahead of (or behind) the
//! projected middle along the direction of motion, by the error times
//! the object's speed in the picture: each (frame, object) pair measures
//! the log time that frame really shows. A robust straight-line fit of
//! those times against video time gives the offset and, when asked, the
//! rate; repeating with the new map re-centres the boxes, which makes the
//! answer unbiased (the true map is where the residuals balance).
//!
//! The correlation of [`super::score`] finds the right neighbourhood; its
//! peak is flat at the top, as a box around an object still covers its
//! change when the map is a few milliseconds off, so it cannot time a
//! drift of a fraction of a percent.

use crate::geom::Vec2;

use super::movers::Mover;
use super::score::{Scorer, Seen, seen};

/// Objects moving less than this (pixels per frame) are not timed.
const MIN_MOVE_PX: f64 = 0.5;
/// Fewest timings a fit is made from.
const MIN_TIMINGS: usize = 30;
/// Rounds of re-centring.
const ROUNDS: usize = 5;
/// Fewest timings of a group for it to take part.
const MIN_GROUP_TIMINGS: usize = 20;
/// Most groups whose displacements are fitted (the most timed).
const MAX_FIT_GROUPS: usize = 64;
/// Ridge on the groups' displacements (pixels² of weight).
const RIDGE: f64 = 1.0;

/// A fitted time map.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub offset: f64,
    pub rate: f64,
    /// Standard error of the rate (0 when the rate was held).
    pub rate_error: f64,
    /// Timings the last fit kept.
    pub timings: usize,
    /// Their spread (seconds, robust).
    pub spread: f64,
}

/// Refines `offset` (and `rate` with `fit_rate`) from the timings (see the
/// module docs); `None` when too few objects move in the picture.
pub fn refine(
    scorer: &Scorer<'_>,
    offset: f64,
    rate: f64,
    fit_rate: bool,
    buf: &mut Vec<Mover>,
) -> Option<Fit> {
    let mut fit = Fit {
        offset,
        rate,
        rate_error: 0.0,
        timings: 0,
        spread: 0.0,
    };
    let groups = scorer.movers.groups().len();
    for _ in 0..ROUNDS {
        let timings = timings(scorer, fit.offset, fit.rate, buf);
        let c = correction(&timings, groups, fit_rate)?;
        let t_mid = c.t_mid;
        let next = Fit {
            offset: fit.offset + c.shift - c.slope * t_mid,
            rate: fit.rate + c.slope,
            rate_error: c.slope_error,
            timings: c.kept,
            spread: c.spread,
        };
        let moved = (next.offset - fit.offset).abs() + (next.rate - fit.rate).abs() * 100.0;
        fit = next;
        if moved < 1e-5 {
            break;
        }
    }
    Some(fit)
}

/// One timed (frame, object) pair.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timing {
    /// Video time of the middle of the frame's interval.
    t: f64,
    group: usize,
    /// Direction of motion in the picture (unit).
    dir: Vec2,
    /// Pixels per log second along it.
    speed: f64,
    /// How far the change's centroid lies ahead of the projected middle
    /// (pixels).
    along: f64,
    /// Where the object is in the picture, in picture widths from its
    /// centre.
    at: Vec2,
}

/// Every timed (frame, object) pair under the map.
fn timings(scorer: &Scorer<'_>, offset: f64, rate: f64, buf: &mut Vec<Mover>) -> Vec<Timing> {
    let motion = scorer.motion;
    let cal = scorer.calibration;
    let mut out = Vec::new();
    for f in &motion.frames {
        let dt = f.time - f.before;
        if dt <= 0.0 {
            continue;
        }
        let t = 0.5 * (f.time + f.before);
        scorer.movers.at(rate * t + offset, buf);
        for m in buf.iter() {
            let Some(Seen {
                centre: c,
                path,
                radius,
            }) = seen(cal, m, rate, dt)
            else {
                continue;
            };
            let moved = path.length();
            if moved.is_nan() || moved < MIN_MOVE_PX {
                continue;
            }
            let half = radius.max(motion.cell as f64) + 0.5 * moved + motion.cell as f64;
            let Some((centroid, _)) = motion.centroid(f, [c.x, c.y], half) else {
                continue;
            };
            let dir = path * (1.0 / moved);
            out.push(Timing {
                t,
                group: m.group,
                dir,
                speed: moved / (rate * dt),
                along: (Vec2::new(centroid[0], centroid[1]) - c).dot(dir),
                at: (c - Vec2::new(motion.width as f64 / 2.0, motion.height as f64 / 2.0))
                    * (1.0 / motion.width as f64),
            });
        }
    }
    out
}

/// A correction of the map: log time shown at video time `t` =
/// mapped + `shift` + `slope` × (`t` − `t_mid`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Correction {
    shift: f64,
    slope: f64,
    slope_error: f64,
    t_mid: f64,
    kept: usize,
    spread: f64,
}

/// The least-squares correction (see the module docs), with each group's
/// own constant displacement in the picture (a robot's top seen beside
/// its footprint, a shadow) fitted too, so that it is not taken for a
/// timing; pairs more than three robust deviations off are left out
/// (twice). The slope is held at 0 without `fit_slope`.
fn correction(timings: &[Timing], groups: usize, fit_slope: bool) -> Option<Correction> {
    // Groups timed too rarely are left out, and only the most timed take
    // part when there are very many; they are renumbered in order.
    let mut counts = vec![0usize; groups];
    for t in timings {
        if let Some(c) = counts.get_mut(t.group) {
            *c += 1;
        }
    }
    let mut order: Vec<usize> = (0..groups).filter(|&g| counts[g] >= MIN_GROUP_TIMINGS).collect();
    order.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
    order.truncate(MAX_FIT_GROUPS);
    order.sort_unstable();
    let mut column = vec![usize::MAX; groups];
    for (i, &g) in order.iter().enumerate() {
        column[g] = i;
    }
    let groups = order.len();
    let mut keep: Vec<Timing> = timings
        .iter()
        .filter(|t| column.get(t.group).is_some_and(|&c| c != usize::MAX) && t.along.is_finite())
        .map(|t| Timing {
            group: column[t.group],
            ..*t
        })
        .collect();
    let mut out = None;
    // Each group weighs by how consistent its timings are (its residuals'
    // robust spread, from the round before; all alike at first).
    let mut weight = vec![1.0; groups];
    for _ in 0..4 {
        if keep.len() < MIN_TIMINGS {
            return out;
        }
        let t_mid = keep.iter().map(|t| t.t).sum::<f64>() / keep.len() as f64;
        let base = if fit_slope { 6 } else { 5 };
        let n = base + 2 * groups;
        let row = |t: &Timing, x: &mut Vec<(usize, f64)>| {
            x.clear();
            x.push((0, t.speed));
            // The displacement's change across the picture (objects of
            // one height look displaced more where the picture's scale is
            // larger), shared by all groups.
            x.push((1, t.dir.x * t.at.x));
            x.push((2, t.dir.x * t.at.y));
            x.push((3, t.dir.y * t.at.x));
            x.push((4, t.dir.y * t.at.y));
            if fit_slope {
                x.push((base - 1, t.speed * (t.t - t_mid)));
            }
            x.push((base + 2 * t.group, t.dir.x));
            x.push((base + 2 * t.group + 1, t.dir.y));
        };
        let (mut ata, mut atb) = (vec![0.0; n * n], vec![0.0; n]);
        let mut x = Vec::with_capacity(4);
        for t in &keep {
            row(t, &mut x);
            let w = weight[t.group];
            for &(i, xi) in &x {
                atb[i] += w * xi * t.along;
                for &(j, xj) in &x {
                    ata[i * n + j] += w * xi * xj;
                }
            }
        }
        // Unused groups' columns, and a light ridge on every displacement
        // so that a group that always moves one way stays solvable.
        for i in (1..5).chain(base..n) {
            ata[i * n + i] += RIDGE + 1e-3 * ata[i * n + i];
        }
        let sol = crate::calib::linalg::cholesky_solve(&ata, &atb, n)?;
        let residual = |t: &Timing, x: &mut Vec<(usize, f64)>| {
            row(t, x);
            t.along - x.iter().map(|&(i, xi)| xi * sol[i]).sum::<f64>()
        };
        let residuals: Vec<f64> = keep.iter().map(|t| residual(t, &mut x)).collect();
        let spread = 1.4826 * median(residuals.iter().map(|r| r.abs()));
        let slope_error = if fit_slope {
            let mut e = vec![0.0; n];
            e[base - 1] = 1.0;
            let inv = crate::calib::linalg::cholesky_solve(&ata, &e, n)?;
            let dof = (keep.len() as f64 - n as f64).max(1.0);
            let ss: f64 = keep
                .iter()
                .zip(&residuals)
                .map(|(t, r)| weight[t.group] * r * r)
                .sum();
            (ss / dof * inv[base - 1]).sqrt()
        } else {
            0.0
        };
        let mut per_group: Vec<Vec<f64>> = vec![Vec::new(); groups];
        for (t, r) in keep.iter().zip(&residuals) {
            per_group[t.group].push(r.abs());
        }
        for (w, rs) in weight.iter_mut().zip(&per_group) {
            let s = 1.4826 * median(rs.iter().copied());
            *w = 1.0 / (s * s).max(1e-6 * spread * spread + 1e-12);
        }
        out = Some(Correction {
            shift: sol[0],
            slope: if fit_slope { sol[base - 1] } else { 0.0 },
            slope_error,
            t_mid,
            kept: keep.len(),
            // Seconds: pixels over the median speed.
            spread: spread / median(keep.iter().map(|t| t.speed)).max(1e-9),
        });
        let limit = 3.0 * spread.max(1e-9);
        let mut i = 0;
        keep.retain(|_| {
            i += 1;
            residuals[i - 1].abs() <= limit
        });
    }
    out
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Timings of objects seen displaced by their own constant vectors,
    /// under a map whose log time is off by `0.01 + 0.002 (t − 5)`.
    fn timings(noise: bool) -> Vec<Timing> {
        let shift = [Vec2::new(3.0, -2.0), Vec2::new(-1.0, 4.0), Vec2::new(0.0, 0.0)];
        let mut out = Vec::new();
        for i in 0..600 {
            let t = i as f64 / 60.0;
            for (g, shift) in shift.iter().enumerate() {
                let a = (i * (g + 3)) as f64 * 0.05;
                let dir = Vec2::new(a.cos(), a.sin());
                let speed = 100.0 + 40.0 * g as f64;
                let wobble = if noise {
                    ((i * 37 + g * 11) % 13) as f64 * 0.02 - 0.12
                } else {
                    0.0
                };
                let along = speed * (0.01 + 0.002 * (t - 5.0)) + shift.dot(dir) + wobble;
                out.push(Timing {
                    t,
                    group: g,
                    dir,
                    speed,
                    along,
                    at: Vec2::new(0.0, 0.0),
                });
            }
        }
        out
    }

    #[test]
    fn corrections_separate_timing_from_displacement() {
        let mut ts = timings(true);
        ts[100].along += 50.0;
        ts[700].along -= 80.0;
        let c = correction(&ts, 3, true).unwrap();
        let at_zero = c.shift - c.slope * c.t_mid;
        assert!((c.slope - 0.002).abs() < 2e-5, "{c:?}");
        assert!((at_zero - (0.01 - 0.002 * 5.0)).abs() < 2e-4, "{c:?}");
        assert!(c.kept < ts.len(), "outliers left out");
        let held = correction(&timings(false), 3, false).unwrap();
        assert_eq!(held.slope, 0.0);
        assert!(correction(&ts[..10], 3, true).is_none());
    }
}
