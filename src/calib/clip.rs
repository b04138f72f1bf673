//! Clipping world shapes to the part of the floor a calibration can map,
//! and adaptive sampling of the mapped curves.
//!
//! The region is convex in the *undistorted* image: a box (a generous
//! margin around the image, or a large default) intersected with a polygon
//! inscribed in the lens's valid circle. Each of its edges is a line in the
//! undistorted image and so, through the homography, a line on the floor:
//! the region becomes a set of world half-planes, and segments and circles
//! are clipped exactly against them (Cyrus–Beck for segments, an angle
//! interval per half-plane for circles). Points behind the camera fail the
//! box constraints too (its opposite sides add up to `w ≥ 0`), so clipping
//! at the horizon needs no special case.
//!
//! Curves are then sampled adaptively: a piece is split until the mapped
//! curve stays within the tolerance of its chord (checked at the midpoint
//! and the quarter points), under a depth limit and a per-call point budget
//! so pathological shapes cannot produce millions of points.

use crate::geom::Vec2;
use crate::geom::vec2::farther_from_segment;

/// A world half-plane `a·x + b·y + c ≥ 0`, scaled so that `(a, b)` is a unit
/// vector (the value is a signed distance in world units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HalfPlane {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl HalfPlane {
    /// From `m·(x, y, 1) ≥ 0`; `None` when the vector is not finite. A
    /// constraint that does not depend on the point (`a = b = 0`) is kept as
    /// "always" (`c ≥ 0`) or "never".
    pub fn new(m: [f64; 3]) -> Option<HalfPlane> {
        if !m.iter().all(|v| v.is_finite()) {
            return None;
        }
        let n = m[0].hypot(m[1]);
        if n == 0.0 {
            return Some(HalfPlane {
                a: 0.0,
                b: 0.0,
                c: if m[2] >= 0.0 { 1.0 } else { -1.0 },
            });
        }
        Some(HalfPlane {
            a: m[0] / n,
            b: m[1] / n,
            c: m[2] / n,
        })
    }

    fn eval(&self, p: Vec2) -> f64 {
        self.a * p.x + self.b * p.y + self.c
    }
}

/// The parameter interval `[t0, t1] ⊆ [0, 1]` of segment `a → b` inside
/// every half-plane, or `None` when nothing of it is.
pub(crate) fn clip_segment(planes: &[HalfPlane], a: Vec2, b: Vec2) -> Option<(f64, f64)> {
    clip_interval(planes.iter().map(|hp| (hp.eval(a), hp.eval(b))))
}

/// The parameter interval `[t0, t1] ⊆ [0, 1]` of a segment inside every
/// constraint, each given by its values `(at a, at b)` at the segment's ends
/// (≥ 0 inside, linear along the segment: a half-plane on the floor, a
/// half-space in the world), or `None` when nothing of it is.
pub(crate) fn clip_interval(values: impl IntoIterator<Item = (f64, f64)>) -> Option<(f64, f64)> {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (fa, fb) in values {
        if !(fa.is_finite() && fb.is_finite()) {
            return None;
        }
        match (fa >= 0.0, fb >= 0.0) {
            (true, true) => {}
            (false, false) => return None,
            (false, true) => t0 = t0.max(fa / (fa - fb)),
            (true, false) => t1 = t1.min(fa / (fa - fb)),
        }
        if t0 > t1 {
            return None;
        }
    }
    Some((t0, t1))
}

/// The part of polygon `poly` inside every half-plane (Sutherland–Hodgman:
/// the half-planes are convex, so a convex polygon stays one polygon, and
/// a concave one stays one ring, possibly with edges along a plane).
pub(crate) fn clip_polygon(planes: &[HalfPlane], poly: &[Vec2]) -> Vec<Vec2> {
    let mut cur: Vec<Vec2> = poly.to_vec();
    let mut next = Vec::with_capacity(cur.len() + 4);
    for hp in planes {
        if cur.is_empty() {
            break;
        }
        next.clear();
        for i in 0..cur.len() {
            let (a, b) = (cur[i], cur[(i + 1) % cur.len()]);
            let (fa, fb) = (hp.eval(a), hp.eval(b));
            if !(fa.is_finite() && fb.is_finite()) {
                return Vec::new();
            }
            if fa >= 0.0 {
                next.push(a);
            }
            if (fa >= 0.0) != (fb >= 0.0) {
                next.push(a.lerp(b, fa / (fa - fb)));
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}

/// The sub-intervals of `[0, len]` where the circle point at angle
/// `start + dir·s` lies inside every half-plane (`dir` is ±1).
pub(crate) fn arc_intervals(
    planes: &[HalfPlane],
    center: Vec2,
    radius: f64,
    start: f64,
    dir: f64,
    len: f64,
) -> Vec<(f64, f64)> {
    use std::f64::consts::{PI, TAU};
    let mut cur = vec![(0.0, len)];
    for hp in planes {
        // Value on the circle: D + r·cos(θ − φ) (the normal is a unit vector).
        let d = hp.eval(center);
        if !d.is_finite() {
            return Vec::new();
        }
        if hp.a == 0.0 && hp.b == 0.0 || radius == 0.0 {
            if d < 0.0 {
                return Vec::new();
            }
            continue;
        }
        if d >= radius {
            continue;
        }
        let gap = d + radius;
        if gap <= 0.0 {
            return Vec::new();
        }
        // Allowed where cos(θ − φ) ≥ −d/r, i.e. |θ − φ| ≤ α; computed from
        // the gap so that huge circles keep their precision.
        let q = gap / radius;
        let alpha = (q * (2.0 - q)).max(0.0).sqrt().atan2(1.0 - q);
        let phi = hp.b.atan2(hp.a);
        // In the arc parameter s: centred at dir·(φ − start), period 2π.
        let centre_s = (dir * (phi - start)).rem_euclid(TAU);
        let mut next = Vec::with_capacity(cur.len() + 1);
        for &(s0, s1) in &cur {
            for k in -1..=((len / TAU).ceil() as i64 + 1) {
                let lo = centre_s - alpha + TAU * k as f64;
                let hi = centre_s + alpha + TAU * k as f64;
                let (a, b) = (lo.max(s0), hi.min(s1));
                if a < b || (a == b && alpha >= PI) {
                    next.push((a, b));
                }
            }
        }
        next.sort_by(|x, y| x.0.total_cmp(&y.0));
        // Windows of neighbouring periods can touch: merge them.
        let mut merged: Vec<(f64, f64)> = Vec::with_capacity(next.len());
        for iv in next {
            match merged.last_mut() {
                Some(last) if iv.0 <= last.1 => last.1 = last.1.max(iv.1),
                _ => merged.push(iv),
            }
        }
        cur = merged;
        if cur.is_empty() {
            break;
        }
    }
    cur
}

/// A piece of a curve on the subdivision stack: `(a, f(a), b, f(b), depth)`.
type Piece = (f64, Option<Vec2>, f64, Option<Vec2>, u32);

/// Pieces are split while a sampled chord error exceeds this fraction of
/// the tolerance, so the true (unsampled) maximum stays below it.
const TOL_MARGIN: f64 = 0.8;

/// Most subdivision levels of one initial piece.
const MAX_DEPTH: u32 = 24;

/// Appends samples of curve `f` on `[s0, s1]` to `cur` so that the polyline
/// stays within `tol` of the curve, starting from `pieces` equal pieces.
/// The point at `s0` is appended only when `include_first`. A sample where
/// `f` is `None` ends the current polyline (moved to `out`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sample_curve(
    f: &dyn Fn(f64) -> Option<Vec2>,
    s0: f64,
    s1: f64,
    pieces: usize,
    include_first: bool,
    tol: f64,
    budget: &mut usize,
    cur: &mut Vec<Vec2>,
    out: &mut Vec<Vec<Vec2>>,
) {
    let pieces = pieces.max(1);
    let mut prev_s = s0;
    let mut prev = f(s0);
    if include_first {
        emit(prev, cur, out, budget);
    }
    let mut stack: Vec<Piece> = Vec::new();
    for k in 1..=pieces {
        let s = if k == pieces {
            s1
        } else {
            s0 + (s1 - s0) * (k as f64 / pieces as f64)
        };
        let p = f(s);
        stack.push((prev_s, prev, s, p, 0));
        while let Some((a, pa, b, pb, depth)) = stack.pop() {
            let m = 0.5 * (a + b);
            let split = depth < MAX_DEPTH && *budget > 0 && m > a && m < b && {
                match (pa, pb) {
                    (Some(pa), Some(pb)) => [0.25, 0.5, 0.75].iter().any(|&t| match f(a + (b - a) * t) {
                        // The three samples can miss the peak of the error a
                        // little: keep a margin.
                        Some(q) => farther_from_segment(q, pa, pb, TOL_MARGIN * tol),
                        None => true,
                    }),
                    // Locate the end of the valid part.
                    _ => pa.is_some() || pb.is_some(),
                }
            };
            if split {
                let pm = f(m);
                stack.push((m, pm, b, pb, depth + 1));
                stack.push((a, pa, m, pm, depth + 1));
            } else {
                emit(pb, cur, out, budget);
            }
        }
        prev_s = s;
        prev = p;
    }
}

fn emit(p: Option<Vec2>, cur: &mut Vec<Vec2>, out: &mut Vec<Vec<Vec2>>, budget: &mut usize) {
    match p {
        Some(p) => {
            cur.push(p);
            *budget = budget.saturating_sub(1);
        }
        None => flush(cur, out),
    }
}

/// Moves a polyline of two or more points to `out`; drops a lone point.
pub(crate) fn flush(cur: &mut Vec<Vec2>, out: &mut Vec<Vec<Vec2>>) {
    if cur.len() > 1 {
        out.push(std::mem::take(cur));
    } else {
        cur.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{PI, TAU};

    fn square() -> Vec<HalfPlane> {
        // |x| ≤ 1, |y| ≤ 1
        [
            [1.0, 0.0, 1.0],
            [-1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
            [0.0, -1.0, 1.0],
        ]
        .into_iter()
        .map(|m| HalfPlane::new(m).unwrap())
        .collect()
    }

    #[test]
    fn polygon_clipped_to_square() {
        let tri = [Vec2::new(0.5, 0.5), Vec2::new(3.0, 0.5), Vec2::new(0.5, 3.0)];
        let c = clip_polygon(&square(), &tri);
        // Cut by x ≤ 1 and y ≤ 1 to the square 0.5–1 both ways.
        let area = |p: &[Vec2]| {
            (0..p.len())
                .map(|i| p[i].cross(p[(i + 1) % p.len()]))
                .sum::<f64>()
                / 2.0
        };
        assert!((area(&c).abs() - 0.25).abs() < 1e-12, "{c:?}");
        assert!(
            clip_polygon(
                &square(),
                &[Vec2::new(5.0, 5.0), Vec2::new(6.0, 5.0), Vec2::new(6.0, 6.0)]
            )
            .is_empty()
        );
    }

    #[test]
    fn segment_clipped_to_square() {
        let (t0, t1) = clip_segment(&square(), Vec2::new(-3.0, 0.0), Vec2::new(3.0, 0.0)).unwrap();
        assert!((t0 - 1.0 / 3.0).abs() < 1e-12 && (t1 - 2.0 / 3.0).abs() < 1e-12);
        assert!(clip_segment(&square(), Vec2::new(-3.0, 2.0), Vec2::new(3.0, 2.0)).is_none());
        assert_eq!(
            clip_segment(&square(), Vec2::new(0.0, 0.0), Vec2::new(0.5, 0.5)),
            Some((0.0, 1.0))
        );
    }

    #[test]
    fn circle_crossing_square_gives_four_arcs() {
        // Radius 1.2 about the origin: the corners of the square cut it into four arcs.
        let iv = arc_intervals(&square(), Vec2::ZERO, 1.2, 0.0, 1.0, TAU);
        assert_eq!(iv.len(), 4, "{iv:?}");
        let a = (1.0f64 / 1.2).acos();
        assert!(
            (iv[0].0 - a).abs() < 1e-12 && (iv[0].1 - (PI / 2.0 - a)).abs() < 1e-12,
            "{iv:?}"
        );
        let total: f64 = iv.iter().map(|(s0, s1)| s1 - s0).sum();
        // Inside the square where |cos| ≤ 1/1.2 and |sin| ≤ 1/1.2.
        assert!((total - 4.0 * (PI / 2.0 - 2.0 * a)).abs() < 1e-9, "{total}");
        // Entirely inside and entirely outside.
        assert_eq!(
            arc_intervals(&square(), Vec2::ZERO, 0.5, 0.0, 1.0, TAU),
            vec![(0.0, TAU)]
        );
        assert!(arc_intervals(&square(), Vec2::new(10.0, 0.0), 0.5, 0.0, 1.0, TAU).is_empty());
    }

    #[test]
    fn clockwise_arc_parameter() {
        // From angle 0 clockwise by π/2: the points lie at y ≤ 0; restrict to y ≥ −0.5.
        let planes = vec![HalfPlane::new([0.0, 1.0, 0.5]).unwrap()];
        let iv = arc_intervals(&planes, Vec2::ZERO, 1.0, 0.0, -1.0, PI / 2.0);
        assert_eq!(iv.len(), 1);
        assert!(
            iv[0].0.abs() < 1e-12 && (iv[0].1 - PI / 6.0).abs() < 1e-12,
            "{iv:?}"
        );
    }

    #[test]
    fn huge_circle_keeps_precision() {
        // A circle of radius 1e12 whose rightmost point touches x = 0.5 inside the square.
        let r = 1e12;
        let iv = arc_intervals(&square(), Vec2::new(0.5 - r, 0.0), r, -PI, 1.0, TAU);
        assert_eq!(iv.len(), 1, "{iv:?}");
        let (s0, s1) = iv[0];
        let y = |s: f64| r * (-PI + s).sin();
        assert!(
            (y(s0) + 1.0).abs() < 1e-2 && (y(s1) - 1.0).abs() < 1e-2,
            "{} {}",
            y(s0),
            y(s1)
        );
    }

    #[test]
    fn adaptive_sampling_meets_tolerance_and_budget() {
        let f = |s: f64| Some(Vec2::new(100.0 * s.cos(), 100.0 * s.sin()));
        let (mut cur, mut out, mut budget) = (Vec::new(), Vec::new(), 10_000);
        sample_curve(&f, 0.0, TAU, 8, true, 0.5, &mut budget, &mut cur, &mut out);
        for w in cur.windows(2) {
            let mid = (w[0] + w[1]) * 0.5;
            assert!(100.0 - mid.length() <= 0.5 + 1e-9);
        }
        // Sagitta bound: about π / sqrt(2·0.5/100) = 31 points suffice; allow slack.
        assert!(cur.len() < 130, "{}", cur.len());
        let (mut cur, mut out, mut budget) = (Vec::new(), Vec::new(), 50);
        sample_curve(&f, 0.0, TAU, 8, true, 1e-9, &mut budget, &mut cur, &mut out);
        // The budget stops splitting; pending pieces still end at their last points.
        assert!(cur.len() <= 50 + MAX_DEPTH as usize + 8 + 1, "{}", cur.len());
    }
}
