//! How well the log's moving objects agree with the video's motion under
//! one time map (log time = rate × video time + offset).
//!
//! For every kept video frame, the log's objects are taken at the log time
//! of the middle of the frame's interval and projected through the
//! calibration: each predicts a change of `d` pixels (how far it moves in
//! the picture over the interval), and the video shows a change `m` around
//! it (the mean change over a box covering the object and its path, less
//! the frame's mean change). The agreement is the correlation of `d` and
//! `m` over all frames and objects: near 1 when the objects that move are
//! where the picture changes and the still ones where it does not, near 0
//! when the two have nothing to do with each other.
//!
//! A coarse search widens each box by how far the object moves in
//! `blur` seconds, so that offsets tried `blur` apart cannot step over the
//! right one.

use crate::calib::Calibration;
use crate::geom::Vec2;

use super::motion::Motion;
use super::movers::{Mover, Movers};

/// Fewest (frame, object) pairs a score is computed from.
const MIN_SAMPLES: usize = 24;

/// The inputs a score is computed from.
pub struct Scorer<'a> {
    pub motion: &'a Motion,
    pub movers: &'a Movers,
    pub calibration: &'a Calibration,
}

/// Running sums of a correlation.
#[derive(Clone, Copy, Debug, Default)]
struct Corr {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    yy: f64,
    xy: f64,
}

impl Corr {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.yy += y * y;
        self.xy += x * y;
    }

    fn value(&self) -> Option<(f64, usize)> {
        if self.n < MIN_SAMPLES as f64 {
            return None;
        }
        let vx = self.xx - self.x * self.x / self.n;
        let vy = self.yy - self.y * self.y / self.n;
        let cov = self.xy - self.x * self.y / self.n;
        // Nothing varies (a still picture, objects that never move):
        // nothing agrees.
        let r = if vx > 1e-9 && vy > 1e-9 {
            cov / (vx * vy).sqrt()
        } else {
            0.0
        };
        Some((r, self.n as usize))
    }
}

/// A log object in the picture over one frame's interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seen {
    /// Where it is in the middle of the interval (pixels).
    pub centre: Vec2,
    /// Its path over the interval in the picture (pixels).
    pub path: Vec2,
    /// Its radius in the picture (pixels; 0 for markers).
    pub radius: f64,
}

/// Mover `m` through `calibration` over `dt` video seconds at `rate`
/// (log seconds per video second); `None` when it is not in the picture.
pub fn seen(calibration: &Calibration, m: &Mover, rate: f64, dt: f64) -> Option<Seen> {
    let half_path = m.velocity * (0.5 * rate * dt);
    let a = calibration.project(m.at - half_path)?;
    let b = calibration.project(m.at + half_path)?;
    let c = calibration.project(m.at)?;
    let radius = if m.radius > 0.0 {
        calibration
            .project(m.at + Vec2::new(m.radius, 0.0))
            .map_or(0.0, |e| (e - c).length())
    } else {
        0.0
    };
    Some(Seen {
        centre: c,
        path: b - a,
        radius,
    })
}

impl Scorer<'_> {
    /// The agreement (−1 to 1) under log time = `rate` × video time +
    /// `offset`, from every `stride`-th kept frame, boxes widened by `blur`
    /// seconds of motion; `None` when too few objects are in the picture
    /// at those times (0 when nothing varies).
    pub fn score(
        &self,
        offset: f64,
        rate: f64,
        stride: usize,
        blur: f64,
        buf: &mut Vec<Mover>,
    ) -> Option<f64> {
        self.score_counted(offset, rate, stride, blur, buf).map(|s| s.0)
    }

    /// [`Self::score`] with the number of (frame, object) pairs compared.
    pub fn score_counted(
        &self,
        offset: f64,
        rate: f64,
        stride: usize,
        blur: f64,
        buf: &mut Vec<Mover>,
    ) -> Option<(f64, usize)> {
        let mut corr = Corr::default();
        let floor = self.motion.cell as f64;
        for f in self.motion.frames.iter().step_by(stride.max(1)) {
            let dt = f.time - f.before;
            let log_t = rate * 0.5 * (f.time + f.before) + offset;
            self.movers.at(log_t, buf);
            for m in buf.iter() {
                let Some(Seen {
                    centre: c,
                    path,
                    radius,
                }) = seen(self.calibration, m, rate, dt)
                else {
                    continue;
                };
                let moved = path.length();
                let spread = if blur > 0.0 && dt > 0.0 {
                    moved / dt * blur * 0.5
                } else {
                    0.0
                };
                let half = radius.max(floor) + 0.5 * moved + spread;
                if !(half.is_finite() && half < self.motion.width.max(self.motion.height) as f64 / 4.0) {
                    continue;
                }
                let Some(seen) = self.motion.box_mean(f, [c.x, c.y], half) else {
                    continue;
                };
                corr.add(moved, seen - f.mean);
            }
        }
        corr.value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlation_of_lines_and_of_noise() {
        let mut c = Corr::default();
        for i in 0..100 {
            c.add(i as f64, 2.0 * i as f64 + 1.0);
        }
        assert!((c.value().unwrap().0 - 1.0).abs() < 1e-9);
        assert_eq!(c.value().unwrap().1, 100);
        let mut c = Corr::default();
        for i in 0..100 {
            c.add(i as f64, -(i as f64));
        }
        assert!((c.value().unwrap().0 + 1.0).abs() < 1e-9);
        let mut c = Corr::default();
        for i in 0..100 {
            c.add(i as f64, 5.0);
        }
        assert_eq!(c.value(), Some((0.0, 100)), "nothing varies");
        let mut c = Corr::default();
        c.add(1.0, 2.0);
        assert_eq!(c.value(), None, "too few");
    }
}
