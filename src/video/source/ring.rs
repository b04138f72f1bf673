//! The frames a player keeps: a ring of consecutive decoded frames over a
//! [`FrameSource`], answering "the frame shown at t" and "n frames from
//! this one" from memory when it can, reading forward when the frame is
//! just ahead, and seeking otherwise. Stepping back, or redrawing with new
//! settings, then costs no decoding.
//!
//! Frames are told apart by their presentation time: a decoder's indices
//! are estimates after a seek, times are exact.

use std::collections::VecDeque;

use super::{FrameSource, SourceError, SourceFrame, SourceInfo};

/// Decoded frames kept in memory, in bytes (about 20 frames at 1080p).
const RING_BYTES: usize = 128 << 20;

/// Reading forward is cheaper than seeking up to this far ahead (seconds).
const FORWARD_LIMIT: f64 = 1.5;

/// Errors kept for the caller at most (more are dropped).
const MAX_ERRORS: usize = 100;

/// Consecutive frames of a source, the source positioned after the last.
pub struct FrameRing {
    source: Box<dyn FrameSource>,
    info: SourceInfo,
    /// Where the source's keyframes are, when it knows.
    index: Option<crate::video::SeekIndex>,
    /// The time a keyframe was just shown for ([`Self::preview`]): the
    /// source decodes towards it already.
    previewed: Option<f64>,
    ring: VecDeque<SourceFrame>,
    cap: usize,
    /// The ring's first frame is the source's first frame.
    at_start: bool,
    /// The source returned `None` (or failed) after the ring's last frame.
    eof: bool,
    /// Seeks done so far.
    seeks: u64,
    /// Errors since the caller last took them.
    errors: Vec<SourceError>,
}

impl FrameRing {
    /// A ring over `source`, holding as many frames as fit in 128 MiB
    /// (3 to 64).
    pub fn new(source: Box<dyn FrameSource>) -> Self {
        let info = source.info().clone();
        let frame_bytes = (info.width * info.height * 3).max(1);
        FrameRing {
            index: source.seek_index(),
            previewed: None,
            source,
            cap: (RING_BYTES / frame_bytes).clamp(3, 64),
            info,
            ring: VecDeque::new(),
            at_start: false,
            eof: false,
            seeks: 0,
            errors: Vec::new(),
        }
    }

    /// Facts about the source.
    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// Most frames kept.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Frames held now.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no frame is held.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// The frame at position `pos` of the ring.
    pub fn get(&self, pos: usize) -> Option<&SourceFrame> {
        self.ring.get(pos)
    }

    /// Whether the source has ended after the ring's last frame.
    pub fn at_end(&self) -> bool {
        self.eof
    }

    /// Whether the frame with time `time` is the source's last.
    pub fn is_last(&self, time: f64) -> bool {
        self.eof && self.ring.back().is_some_and(|b| b.time == time)
    }

    /// How many seeks the ring has done: a caller keeping state from frame
    /// to frame starts afresh when this changes.
    pub fn seeks(&self) -> u64 {
        self.seeks
    }

    /// The source's errors since the last call (reading stopped at each).
    pub fn take_errors(&mut self) -> Vec<SourceError> {
        std::mem::take(&mut self.errors)
    }

    /// Position of the frame shown at `t`, if the ring can tell.
    pub fn find(&self, t: f64) -> Option<usize> {
        let first = self.ring.front()?;
        if t < first.time {
            return self.at_start.then_some(0);
        }
        let pos = self.ring.partition_point(|f| f.time <= t);
        // pos ≥ 1 here. A frame is known to be the one when a later one
        // follows it in the ring or the source has ended.
        if pos < self.ring.len() || self.eof {
            Some(pos - 1)
        } else {
            None
        }
    }

    /// Position of the frame with exactly time `t`.
    pub fn position(&self, t: f64) -> Option<usize> {
        self.ring.iter().position(|f| f.time == t)
    }

    fn push(&mut self, f: SourceFrame) {
        if self.ring.back().is_some_and(|b| f.time <= b.time) {
            // Not after the last one: the ring's frames would not be in order.
            self.ring.clear();
            self.at_start = false;
        }
        self.ring.push_back(f);
        while self.ring.len() > self.cap {
            if let Some(old) = self.ring.pop_front() {
                self.source.recycle(old);
            }
            self.at_start = false;
        }
    }

    fn failed(&mut self, e: SourceError) {
        self.eof = true;
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(e);
        }
    }

    /// Reads the next frame into the ring; false at the end or on error.
    pub fn read_next(&mut self) -> bool {
        match self.source.next_frame() {
            Ok(Some(f)) => {
                self.push(f);
                true
            }
            Ok(None) => {
                self.eof = true;
                false
            }
            Err(e) => {
                self.failed(e);
                false
            }
        }
    }

    fn seek(&mut self, t: f64) -> bool {
        self.restart(t, false).is_some()
    }

    /// Empties the ring and seeks the source for `t`, holding the frame
    /// it returns ([`FrameSource::keyframe_at`]'s when `keyframe`): its
    /// position.
    fn restart(&mut self, t: f64, keyframe: bool) -> Option<usize> {
        self.previewed = None;
        self.ring.clear();
        self.eof = false;
        self.seeks += 1;
        let got = if keyframe {
            self.source.keyframe_at(t)
        } else {
            self.source.frame_at(t)
        };
        match got {
            Ok(Some(f)) => {
                // A frame after the time asked for is the source's first.
                self.at_start = f.time > t || f.time <= self.info.start;
                self.ring.push_back(f);
                Some(0)
            }
            Ok(None) => {
                self.eof = true;
                None
            }
            Err(e) => {
                self.failed(e);
                None
            }
        }
    }

    /// Whether the frame shown at `t` needs a seek: it is not in the ring,
    /// nor reached by reading on after its last frame — with the source's
    /// keyframes known, no keyframe lies between (then reading on is the
    /// way, however far); else it is a short read.
    pub fn is_far(&self, t: f64) -> bool {
        if self.find(t).is_some() {
            return false;
        }
        let Some(b) = self.ring.back() else {
            return true;
        };
        if t < b.time {
            return true;
        }
        match self.index.as_ref().and_then(|i| i.key_between(b.time, t)) {
            Some(key) => key,
            None => t - b.time > FORWARD_LIMIT,
        }
    }

    /// Whether the frame shown at `t` is reached by reading on, but far
    /// (more than `FORWARD_LIMIT`, 1.5 s, past the ring's last frame, no keyframe
    /// between: [`Self::is_far`] is false): worth showing a frame on the
    /// way first.
    pub fn reads_on_far(&self, t: f64) -> bool {
        self.find(t).is_none() && self.ring.back().is_some_and(|b| t - b.time > FORWARD_LIMIT)
    }

    /// Seeks for `t` and holds only the frame the source decodes first
    /// there ([`FrameSource::keyframe_at`]: a video's keyframe at or before
    /// `t`), to show while the frame at `t` is decoded; returns its
    /// position. [`Self::locate_time`] then finds the frame itself.
    pub fn preview(&mut self, t: f64) -> Option<usize> {
        let pos = self.restart(t, true);
        self.previewed = pos.map(|_| t);
        pos
    }

    /// Makes the ring hold the frame shown at `t`; returns its position.
    pub fn locate_time(&mut self, t: f64) -> Option<usize> {
        if let Some(p) = self.find(t) {
            self.previewed = None;
            return Some(p);
        }
        if self.previewed.take() == Some(t) {
            // The source decodes towards `t` since the keyframe.
            if !self.seek(t) {
                return None;
            }
        }
        let near = self
            .ring
            .back()
            .is_some_and(|b| t >= b.time && t - b.time <= FORWARD_LIMIT);
        if !near && !self.seek(t) {
            return None;
        }
        loop {
            if let Some(p) = self.find(t) {
                return Some(p);
            }
            if !self.read_next() {
                return self.find(t).or(self.ring.len().checked_sub(1));
            }
        }
    }

    /// Makes the ring hold the frame `n` frames from the one at time
    /// `from`; returns its position (the first or last frame at the ends).
    pub fn locate_step(&mut self, from: f64, n: i64) -> Option<usize> {
        let far = n.unsigned_abs() as usize >= self.cap / 2;
        if far {
            return self.locate_time(from + n as f64 * self.info.frame_duration());
        }
        let k = n.unsigned_abs() as usize;
        if n > 0 {
            if self.position(from).is_none() {
                self.locate_time(from)?;
            }
            loop {
                let p = self.position(from)?;
                if p + k < self.ring.len() {
                    return Some(p + k);
                }
                if !self.read_next() {
                    return self.ring.len().checked_sub(1);
                }
            }
        }
        // Backwards: the frames before `from` must be in the ring; seek
        // earlier and read forward to `from` when they are not.
        let mut margin = (k as f64 + 2.0) * self.info.frame_duration() * 1.5;
        for _ in 0..6 {
            if let Some(p) = self.position(from) {
                if p >= k {
                    return Some(p - k);
                }
                if self.at_start {
                    return Some(0);
                }
            }
            if !self.seek(from - margin) {
                return None;
            }
            while self.ring.back().is_some_and(|b| b.time < from) {
                if !self.read_next() {
                    break;
                }
            }
            margin *= 2.0;
        }
        self.locate_time(from - k as f64 * self.info.frame_duration())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::source::SyntheticSource;

    fn ring() -> FrameRing {
        FrameRing::new(Box::new(SyntheticSource::new(32, 18, 10.0, 100).unwrap()))
    }

    fn time_at(r: &FrameRing, p: Option<usize>) -> f64 {
        r.get(p.unwrap()).unwrap().time
    }

    #[test]
    fn frames_at_times_and_steps_both_ways() {
        let mut r = ring();
        let p = r.locate_time(2.05);
        assert_eq!(time_at(&r, p), 2.0);
        let p = r.locate_step(2.0, 3);
        assert!((time_at(&r, p) - 2.3).abs() < 1e-9);
        let seeks = r.seeks();
        let p = r.locate_step(2.3, -2);
        assert!((time_at(&r, p) - 2.1).abs() < 1e-9);
        assert_eq!(r.seeks(), seeks, "stepping back within the ring needs no seek");
        let p = r.locate_step(0.5, -10);
        assert_eq!(time_at(&r, p), 0.0);
        let p = r.locate_time(50.0);
        assert!((time_at(&r, p) - 9.9).abs() < 1e-9);
        assert!(r.is_last(9.9) && r.at_end());
        assert!(r.take_errors().is_empty());
    }

    /// A source whose reads fail after a few frames.
    struct Failing(SyntheticSource, u32);

    impl FrameSource for Failing {
        fn info(&self) -> &SourceInfo {
            self.0.info()
        }
        fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
            self.1 += 1;
            if self.1 > 3 {
                return Err(SourceError::Stopped {
                    name: "failing".into(),
                });
            }
            self.0.next_frame()
        }
        fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
            self.0.frame_at(t)
        }
    }

    /// Synthetic frames at 10 fps with a keyframe every 2 s, known to an
    /// index; records the seeks asked of it.
    struct Indexed {
        inner: SyntheticSource,
        index: crate::video::SeekIndex,
        seeks: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl FrameSource for Indexed {
        fn info(&self) -> &SourceInfo {
            self.inner.info()
        }
        fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
            self.inner.next_frame()
        }
        fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
            self.seeks.lock().unwrap().push(format!("frame {t}"));
            self.inner.frame_at(t)
        }
        fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
            self.seeks.lock().unwrap().push(format!("key {t}"));
            let k = self.index.key_for(t).unwrap_or(0.0);
            self.inner.frame_at(k)
        }
        fn seek_index(&self) -> Option<crate::video::SeekIndex> {
            Some(self.index.clone())
        }
    }

    fn indexed() -> (FrameRing, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let seeks = std::sync::Arc::default();
        let src = Indexed {
            inner: SyntheticSource::new(32, 18, 10.0, 100).unwrap(),
            index: crate::video::SeekIndex::from_keys(&[0, 20, 40, 60, 80], 0.1, 0),
            seeks: std::sync::Arc::clone(&seeks),
        };
        (FrameRing::new(Box::new(src)), seeks)
    }

    #[test]
    fn with_keyframes_known_far_means_a_keyframe_between() {
        let (mut r, _) = indexed();
        let p = r.locate_time(0.5);
        assert_eq!(time_at(&r, p), 0.5);
        let back = r.get(r.len() - 1).unwrap().time;
        assert!(back < 1.0, "{back}");
        // Beyond the short read, but no keyframe on the way: reading on.
        assert!(!r.is_far(1.95));
        // A keyframe at 2 s between: a seek, with the keyframe shown first.
        assert!(r.is_far(2.05));
        assert!(r.is_far(9.0));
        // Behind the ring (not at its start after this seek): a seek.
        r.locate_time(5.0);
        assert!(r.is_far(4.1) && !r.is_far(5.0));
    }

    #[test]
    fn after_a_keyframe_the_frame_is_asked_for_not_read_up_to() {
        let (mut r, seeks) = indexed();
        r.locate_time(0.0);
        seeks.lock().unwrap().clear();
        let p = r.preview(5.75);
        assert_eq!(time_at(&r, p), 4.0);
        let p = r.locate_time(5.75);
        assert!((time_at(&r, p) - 5.7).abs() < 1e-9);
        assert_eq!(*seeks.lock().unwrap(), ["key 5.75", "frame 5.75"]);
    }

    #[test]
    fn errors_end_reading_and_are_kept_for_the_caller() {
        let src = Failing(SyntheticSource::new(8, 8, 10.0, 100).unwrap(), 0);
        let mut r = FrameRing::new(Box::new(src));
        let p = r.locate_time(0.0);
        assert_eq!(time_at(&r, p), 0.0);
        let p = r.locate_step(0.0, 10);
        assert!(p.is_some());
        assert!(r.at_end());
        let errors = r.take_errors();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("failing"));
    }
}
