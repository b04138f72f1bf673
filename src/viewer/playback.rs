//! The playback clock: where the viewer is in the video, whether it plays,
//! how fast, and which range it loops. Pure logic, no UI and no decoding:
//! the app advances it with wall-clock time and asks the player for the
//! frame at [`Playback::time`].

/// Playback speeds offered, slowest first.
pub const SPEEDS: [f64; 7] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0];

/// The playback clock over a video of known extent.
#[derive(Clone, Debug, PartialEq)]
pub struct Playback {
    /// Video time wanted now, in seconds.
    pub time: f64,
    pub playing: bool,
    /// Multiplier of real time, within 0.25–4.
    pub speed: f64,
    /// A range played over and over, `(start, end)` with start < end.
    pub loop_range: Option<(f64, f64)>,
    /// Whether the loop is active (the range is kept when it is not).
    pub looping: bool,
    /// First and last frame time of the video.
    start: f64,
    end: f64,
}

impl Playback {
    /// A paused clock at `start` over `[start, end]`.
    pub fn new(start: f64, end: f64) -> Self {
        let start = if start.is_finite() { start } else { 0.0 };
        let end = if end.is_finite() { end.max(start) } else { start };
        Playback {
            time: start,
            playing: false,
            speed: 1.0,
            loop_range: None,
            looping: false,
            start,
            end,
        }
    }

    pub fn start(&self) -> f64 {
        self.start
    }

    pub fn end(&self) -> f64 {
        self.end
    }

    /// A video that grows or is cut at its start (live mode's buffer):
    /// its extent becomes `[start, end]`, the time kept within it.
    pub fn set_range(&mut self, start: f64, end: f64) {
        if start.is_finite() && end.is_finite() {
            self.start = start;
            self.end = end.max(start);
            self.time = self.time.clamp(self.start, self.end);
        }
    }

    /// Moves to `t`, clamped to the video (ignores NaN).
    pub fn seek(&mut self, t: f64) {
        if !t.is_nan() {
            self.time = t.clamp(self.start, self.end);
        }
    }

    /// Moves by `dt` seconds.
    pub fn jump(&mut self, dt: f64) {
        self.seek(self.time + dt);
    }

    pub fn toggle_play(&mut self) {
        if !self.playing && self.time >= self.end {
            // Play again from the start (of the loop) after reaching the end.
            self.time = self.active_loop().map_or(self.start, |(a, _)| a);
        }
        self.playing = !self.playing;
    }

    /// Sets the speed to `s`, clamped to 0.25–4.
    pub fn set_speed(&mut self, s: f64) {
        if s.is_finite() {
            self.speed = s.clamp(SPEEDS[0], SPEEDS[SPEEDS.len() - 1]);
        }
    }

    /// The next speed in [`SPEEDS`] up (`dir > 0`) or down.
    pub fn step_speed(&mut self, dir: i32) {
        let i = SPEEDS
            .iter()
            .position(|&s| s >= self.speed - 1e-9)
            .unwrap_or(SPEEDS.len() - 1);
        let between = SPEEDS[i] > self.speed + 1e-9;
        let j = if dir > 0 && between {
            i
        } else if dir > 0 {
            (i + 1).min(SPEEDS.len() - 1)
        } else {
            i.saturating_sub(1)
        };
        self.speed = SPEEDS[j];
    }

    /// Sets the loop's start (`which = 0`) or end (`1`) to the current time;
    /// the other end is moved when needed to keep the range non-empty.
    pub fn set_loop_point(&mut self, which: usize) {
        let t = self.time;
        let (mut a, mut b) = self.loop_range.unwrap_or((self.start, self.end));
        if which == 0 {
            a = t;
            if b <= a {
                b = self.end;
            }
        } else {
            b = t;
            if a >= b {
                a = self.start;
            }
        }
        if a < b {
            self.loop_range = Some((a, b));
            self.looping = true;
        }
    }

    /// The loop range when looping is on.
    pub fn active_loop(&self) -> Option<(f64, f64)> {
        self.loop_range.filter(|_| self.looping)
    }

    /// Advances a playing clock by `dt` seconds of wall-clock time; wraps
    /// inside the loop, stops at the end. Returns whether the time changed.
    pub fn advance(&mut self, dt: f64) -> bool {
        if !(self.playing && dt.is_finite() && dt > 0.0) {
            return false;
        }
        let before = self.time;
        let mut t = self.time + dt * self.speed;
        if let Some((a, b)) = self.active_loop()
            && before <= b
            && t > b
        {
            t = a + (t - b) % (b - a);
        }
        if t >= self.end {
            t = self.end;
            self.playing = false;
        }
        self.time = t;
        self.time != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_respects_speed_and_stops_at_end() {
        let mut p = Playback::new(0.0, 10.0);
        assert!(!p.advance(1.0));
        p.toggle_play();
        p.set_speed(2.0);
        assert!(p.advance(1.0));
        assert_eq!(p.time, 2.0);
        p.advance(100.0);
        assert_eq!(p.time, 10.0);
        assert!(!p.playing);
        // Playing again from the end restarts.
        p.toggle_play();
        assert_eq!(p.time, 0.0);
    }

    #[test]
    fn loop_wraps_and_speed_is_clamped() {
        let mut p = Playback::new(0.0, 10.0);
        p.seek(2.0);
        p.set_loop_point(0);
        p.seek(4.0);
        p.set_loop_point(1);
        assert_eq!(p.active_loop(), Some((2.0, 4.0)));
        p.seek(3.5);
        p.toggle_play();
        p.advance(1.0);
        assert!((p.time - 2.5).abs() < 1e-9, "{}", p.time);
        p.set_speed(100.0);
        assert_eq!(p.speed, 4.0);
        p.set_speed(0.0);
        assert_eq!(p.speed, 0.25);
        p.set_speed(f64::NAN);
        assert_eq!(p.speed, 0.25);
    }

    #[test]
    fn a_growing_range_keeps_the_time_within() {
        let mut p = Playback::new(0.0, 1.0);
        p.set_range(5.0, 9.0);
        assert_eq!((p.start(), p.end(), p.time), (5.0, 9.0, 5.0));
        p.seek(8.0);
        p.set_range(6.0, 7.0);
        assert_eq!(p.time, 7.0);
        p.set_range(f64::NAN, 10.0);
        assert_eq!((p.start(), p.end()), (6.0, 7.0));
    }

    #[test]
    fn speed_steps_and_seek_clamps() {
        let mut p = Playback::new(1.0, 5.0);
        p.step_speed(1);
        assert_eq!(p.speed, 1.5);
        p.step_speed(-1);
        p.step_speed(-1);
        assert_eq!(p.speed, 0.75);
        for _ in 0..10 {
            p.step_speed(-1);
        }
        assert_eq!(p.speed, 0.25);
        p.seek(-5.0);
        assert_eq!(p.time, 1.0);
        p.jump(100.0);
        assert_eq!(p.time, 5.0);
        p.seek(f64::NAN);
        assert_eq!(p.time, 5.0);
        let q = Playback::new(f64::NAN, f64::INFINITY);
        assert_eq!((q.start(), q.end()), (0.0, 0.0));
    }
}
