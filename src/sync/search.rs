//! The search for the time map under which the log and the video agree
//! best: a coarse scan of the offsets asked for (boxes widened by the
//! step, frames thinned on long videos), a fine scan around the best few
//! peaks at an eighth of a frame, then timing to a fraction of a frame
//! and, on runs long enough, the rate (clock drift) by [`super::refine`].
//!
//! How sure the answer is comes from the coarse curve: how far the best
//! peak stands above the curve's typical level, against how far the best
//! of the rest (offsets more than [`PEAK_HALF_WIDTH`] away) does.

use std::sync::atomic::{AtomicBool, Ordering};

use super::movers::Mover;
use super::refine;
use super::score::Scorer;

/// Offsets closer than this (seconds) to the best belong to its peak.
pub const PEAK_HALF_WIDTH: f64 = 0.5;
/// Offsets at which fewer (frame, object) pairs than this fraction of the
/// most at any offset are compared are left out of the curve.
const MIN_OVERLAP: f64 = 0.4;
/// Most offsets the coarse scan tries.
const COARSE_STEPS: f64 = 2000.0;
/// Most (frame, offset) pairs the coarse scan evaluates.
const COARSE_WORK: f64 = 2.0e6;
/// A match is confident when its peak stands this many times higher above
/// the curve's median than any other offset does…
pub const MIN_CONFIDENCE: f64 = 3.0;
/// …and the agreement at the peak is at least this.
pub const MIN_SCORE: f64 = 0.3;
/// Shortest run (seconds of video) over which drift is measured.
pub const MIN_DRIFT_SPAN: f64 = 10.0;
/// Largest drift believed (fraction: 0.01 is 1 %).
const MAX_DRIFT: f64 = 0.01;

/// What to search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    /// Offsets tried: from `lo` to `hi` (seconds).
    pub lo: f64,
    pub hi: f64,
    /// Log seconds per video second assumed during the offset search.
    pub rate: f64,
    /// Also measure the rate (when the video is long enough).
    pub drift: bool,
}

/// The clock drift found (or why none is given).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Drift {
    /// The run is shorter than [`MIN_DRIFT_SPAN`].
    TooShort { seconds: f64 },
    /// Not asked for.
    NotMeasured,
    /// Measured: the rate, and the smallest drift the run can show
    /// (fraction); `rate` is the assumed one when the drift found is
    /// below that.
    Measured { rate: f64, resolution: f64 },
}

/// The result of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// Log time = `rate` × video time + `offset`.
    pub offset: f64,
    pub rate: f64,
    /// The agreement at the top of the peak (−1 to 1).
    pub score: f64,
    /// How far the best peak stands above the curve's median, over how
    /// far the best other offset does (1: another offset is as good).
    pub confidence: f64,
    pub confident: bool,
    /// The coarse curve: (offset, agreement), `NaN` where nothing could be
    /// compared.
    pub curve: Vec<(f64, f64)>,
    pub drift: Drift,
    /// Evaluations of the agreement made.
    pub evaluations: usize,
}

/// Errors of a search.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error("stopped")]
    Cancelled,
    #[error(
        "at no offset from {lo:.3} s to {hi:.3} s are the log's moving objects in the picture while the video \
         plays: check the calibration, the time range and the offset"
    )]
    NoOverlap { lo: f64, hi: f64 },
}

/// Runs the search (see the module docs); `progress` gets the fraction
/// done.
pub fn run(
    scorer: &Scorer<'_>,
    search: Search,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<Found, SearchError> {
    let frames = scorer.motion.frames.len().max(1);
    let dt = 1.0 / scorer.motion.fps;
    let span = (search.hi - search.lo).max(0.0);
    let step = (span / COARSE_STEPS).clamp(dt, 0.25);
    let n = (span / step).floor() as usize + 1;
    let stride = ((n as f64 * frames as f64 / COARSE_WORK).ceil() as usize).max(1);
    let mut buf: Vec<Mover> = Vec::new();
    let mut evaluations = 0;
    let mut curve = Vec::with_capacity(n);
    let mut counts = Vec::with_capacity(n);
    for i in 0..n {
        if cancel.load(Ordering::Relaxed) {
            return Err(SearchError::Cancelled);
        }
        let o = search.lo + i as f64 * step;
        let s = scorer.score_counted(o, search.rate, stride, step, &mut buf);
        evaluations += 1;
        curve.push((o, s.map_or(f64::NAN, |s| s.0)));
        counts.push(s.map_or(0, |s| s.1));
        if i % 16 == 0 {
            progress(0.6 * i as f64 / n as f64);
        }
    }
    // Where the two overlap little, a correlation of few pairs is noise.
    let most = counts.iter().copied().max().unwrap_or(0);
    for (c, &k) in curve.iter_mut().zip(&counts) {
        if (k as f64) < MIN_OVERLAP * most as f64 {
            c.1 = f64::NAN;
        }
    }
    let peaks = peaks(&curve, 3);
    if peaks.is_empty() {
        return Err(SearchError::NoOverlap {
            lo: search.lo,
            hi: search.hi,
        });
    }
    let (confidence, best_coarse) = confidence(&curve, peaks[0]);
    // Fine scan around each peak.
    let mut best = (f64::NAN, f64::NEG_INFINITY);
    for &p in &peaks {
        let o0 = curve[p].0;
        let fine = dt / 8.0;
        let k = (1.5 * step / fine).ceil() as i64;
        let mut line = Vec::new();
        for j in -k..=k {
            let o = o0 + j as f64 * fine;
            let s = scorer.score(o, search.rate, 1, 0.0, &mut buf).unwrap_or(f64::NAN);
            evaluations += 1;
            line.push((o, s));
        }
        if let Some(top) = refine_max(&line)
            && top.1 > best.1
        {
            best = top;
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(SearchError::Cancelled);
        }
    }
    progress(0.8);
    if !best.1.is_finite() {
        best = (curve[peaks[0]].0, best_coarse);
    }
    let mut found = Found {
        offset: best.0,
        rate: search.rate,
        score: best.1,
        confidence,
        confident: confidence >= MIN_CONFIDENCE && best.1 >= MIN_SCORE,
        curve,
        drift: Drift::NotMeasured,
        evaluations,
    };
    refine_found(scorer, &mut found, search.rate, search.drift, step, &mut buf);
    progress(1.0);
    Ok(found)
}

/// Times the answer to a fraction of a frame ([`super::refine`]) and,
/// asked to and on a run long enough, measures the rate.
fn refine_found(
    scorer: &Scorer<'_>,
    found: &mut Found,
    rate0: f64,
    drift: bool,
    step: f64,
    buf: &mut Vec<Mover>,
) {
    let Some(held) = refine::refine(scorer, found.offset, rate0, false, buf) else {
        return;
    };
    // The correlation's peak is broad, and its top can sit a few frames
    // off (a box around the footprint of a robot whose top is seen beside
    // it); the timing is not fooled by that and may move the answer along
    // the peak, but one that leaves the peak (by much more than the coarse
    // step, or to where the agreement is less than half) timed something
    // else.
    let dt = 1.0 / scorer.motion.fps;
    let there = scorer.score(held.offset, rate0, 1, 0.0, buf).unwrap_or(f64::NAN);
    if (held.offset - found.offset).abs() > 3.0 * step + 4.0 * dt
        || there.is_nan()
        || there < 0.5 * found.score
    {
        return;
    }

    found.offset = held.offset;
    if !drift {
        return;
    }
    let (first, last) = scorer.motion.span();
    let span = last - first;
    if span < MIN_DRIFT_SPAN {
        found.drift = Drift::TooShort { seconds: span };
        return;
    }
    // The smallest drift the run shows: a tenth of a frame over its
    // length, or three standard errors of the fit.
    let mut resolution = dt / 10.0 / span;
    if let Some(free) = refine::refine(scorer, held.offset, rate0, true, buf) {
        resolution = resolution.max(3.0 * free.rate_error / rate0);
        if (free.rate / rate0 - 1.0).abs() >= resolution && (free.rate / rate0 - 1.0).abs() <= MAX_DRIFT {
            found.offset = free.offset;
            found.rate = free.rate;
        }
    }
    found.drift = Drift::Measured {
        rate: found.rate,
        resolution,
    };
}

/// Indices of up to `count` highest local maxima of the curve, each more
/// than [`PEAK_HALF_WIDTH`] from a higher one.
fn peaks(curve: &[(f64, f64)], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..curve.len()).filter(|&i| curve[i].1.is_finite()).collect();
    order.sort_by(|&a, &b| curve[b].1.total_cmp(&curve[a].1));
    let mut out: Vec<usize> = Vec::new();
    for i in order {
        if out
            .iter()
            .all(|&p| (curve[p].0 - curve[i].0).abs() > PEAK_HALF_WIDTH)
        {
            out.push(i);
            if out.len() == count {
                break;
            }
        }
    }
    out
}

/// (confidence, peak value) of the peak at `p` (see [`Found::confidence`]).
fn confidence(curve: &[(f64, f64)], p: usize) -> (f64, f64) {
    let (o, best) = curve[p];
    let mut rest: Vec<f64> = curve
        .iter()
        .filter(|(x, s)| s.is_finite() && (x - o).abs() > PEAK_HALF_WIDTH)
        .map(|&(_, s)| s)
        .collect();
    if rest.len() < 8 {
        return (0.0, best);
    }
    rest.sort_by(f64::total_cmp);
    let median = rest[rest.len() / 2];
    let second = rest[rest.len() - 1];
    ((best - median) / (second - median).max(1e-6), best)
}

/// The top of a sampled curve: its best sample moved to the vertex of the
/// parabola through it and its neighbours (when that lies between them).
fn refine_max(line: &[(f64, f64)]) -> Option<(f64, f64)> {
    let (i, &(o, s)) = line
        .iter()
        .enumerate()
        .filter(|(_, p)| p.1.is_finite())
        .max_by(|a, b| a.1.1.total_cmp(&b.1.1))?;
    if i == 0 || i + 1 == line.len() {
        return Some((o, s));
    }
    let (a, c) = (line[i - 1], line[i + 1]);
    Some(vertex([a.0, o, c.0], [a.1, s, c.1]).map_or((o, s), |v| {
        // The parabola's value at its vertex.
        let u = (v - o) / (c.0 - o);
        (v, s + 0.5 * (c.1 - a.1) * u + 0.5 * (a.1 - 2.0 * s + c.1) * u * u)
    }))
}

/// The vertex of the parabola through three points with equally spaced
/// `x`, when it is a maximum lying between the outer two.
fn vertex(x: [f64; 3], y: [f64; 3]) -> Option<f64> {
    let denom = y[0] - 2.0 * y[1] + y[2];
    if denom.is_nan() || denom >= 0.0 || !y.iter().all(|v| v.is_finite()) {
        return None;
    }
    let h = x[1] - x[0];
    let v = x[1] + 0.5 * h * (y[0] - y[2]) / denom;
    (v > x[0] && v < x[2]).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vertex_of_a_parabola() {
        let f = |x: f64| 3.0 - (x - 0.3) * (x - 0.3);
        let v = vertex([0.0, 0.5, 1.0], [f(0.0), f(0.5), f(1.0)]).unwrap();
        assert!((v - 0.3).abs() < 1e-12);
        assert_eq!(vertex([0.0, 1.0, 2.0], [1.0, 0.0, 1.0]), None, "a minimum");
        assert_eq!(vertex([0.0, 1.0, 2.0], [0.0, f64::NAN, 1.0]), None);
    }

    #[test]
    fn peaks_are_apart_and_in_order() {
        let curve: Vec<(f64, f64)> = (0..100)
            .map(|i| {
                let x = i as f64 * 0.1;
                (
                    x,
                    (-(x - 3.0) * (x - 3.0) * 20.0).exp() + 0.5 * (-(x - 7.0) * (x - 7.0) * 20.0).exp(),
                )
            })
            .collect();
        let p = peaks(&curve, 3);
        assert_eq!(curve[p[0]].0, 3.0);
        assert!((curve[p[1]].0 - 7.0).abs() < 1e-9);
        let (c, best) = confidence(&curve, p[0]);
        assert!((best - 1.0).abs() < 1e-9);
        // The second peak is half as high above a median of about 0.
        assert!((c - 2.0).abs() < 0.05, "{c}");
    }

    #[test]
    fn refine_max_finds_the_top_between_samples() {
        let line: Vec<(f64, f64)> = (0..9).map(|i| (i as f64, -(i as f64 - 4.3).powi(2))).collect();
        let (x, y) = refine_max(&line).unwrap();
        assert!((x - 4.3).abs() < 1e-9, "{x}");
        assert!(y.abs() < 1e-9, "the parabola's top, not the best sample: {y}");
        assert_eq!(refine_max(&[(0.0, f64::NAN)]), None);
    }
}
