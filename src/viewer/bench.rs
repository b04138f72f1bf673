//! Measuring the viewer in its real window (`underlay view … --bench-play
//! SECONDS`, a hidden option): plays from the start for that long, then
//! seeks to random times, and prints per-frame timings. The window
//! repaints when the app asks (a frame due or ready), or continuously with
//! `--bench-repaint` (as while the mouse moves over it; under Xvfb every
//! repaint is rendered on the CPU, so this is the worst case).
//!
//! What is measured: how many of the source's frames reached the screen
//! while playing at 1×, the interval between UI frames, the worker's time
//! per frame (decode wait, pipeline, the picture for the screen), and the
//! time from a seek request to a first picture (a far seek's keyframe) and
//! to the frame itself being on screen. With `UNDERLAY_BENCH_GPU=1`, also
//! what uploading and drawing the video's planes cost the GPU, each step
//! finished before the next (which stalls the GL pipeline: a run apart).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

/// Random seeks done after playing.
pub const SEEKS: usize = 20;

/// Progress of a benchmark run.
#[derive(Debug)]
pub struct BenchJob {
    pub play: Duration,
    pub started: Option<Instant>,
    /// Video time when playing started.
    pub start_time: f64,
    /// Frames (by time) that reached the screen while playing.
    pub shown: HashSet<u64>,
    pub seeks_left: usize,
    /// Numbers of (worker, UI) samples when playing ended: the per-frame
    /// figures are taken over these, so the seeks that follow (each a
    /// decode from a keyframe) do not count as frames played.
    pub played_samples: Option<(usize, usize, usize)>,
    pub seek_target: Option<f64>,
    /// Every seek's target, in order.
    pub targets: Vec<f64>,
    pub rng: rand::rngs::StdRng,
    pub done: bool,
    /// Repaint the window continuously (as while the mouse moves over it)
    /// rather than only when the app asks (a frame due, a frame ready).
    pub continuous: bool,
}

impl BenchJob {
    pub fn new(play_secs: f64, continuous: bool) -> Self {
        BenchJob {
            play: Duration::from_secs_f64(play_secs.clamp(0.1, 3600.0)),
            started: None,
            start_time: 0.0,
            shown: HashSet::new(),
            seeks_left: SEEKS,
            played_samples: None,
            seek_target: None,
            targets: Vec::new(),
            rng: rand::rngs::StdRng::seed_from_u64(7),
            done: false,
            continuous,
        }
    }

    /// A random time in `[a, b]`.
    pub fn random_time(&mut self, a: f64, b: f64) -> f64 {
        if b > a { self.rng.random_range(a..=b) } else { a }
    }
}

/// Median, 95th percentile and maximum of `v` (sorted in place).
pub fn spread(v: &mut [f64]) -> Option<(f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some((v[n / 2], v[((n * 95) / 100).min(n - 1)], v[n - 1]))
}

/// Formats `(median, p95, max)` in milliseconds.
pub fn fmt_ms(s: Option<(f64, f64, f64)>) -> String {
    match s {
        Some((m, p, x)) => format!("median {m:.1} ms, p95 {p:.1} ms, max {x:.1} ms"),
        None => "no samples".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_samples() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(spread(&mut v), Some((51.0, 96.0, 100.0)));
        assert_eq!(spread(&mut []), None);
        let mut b = BenchJob::new(1.0, false);
        let t = b.random_time(2.0, 3.0);
        assert!((2.0..=3.0).contains(&t));
        assert_eq!(b.random_time(5.0, 1.0), 5.0);
    }
}
