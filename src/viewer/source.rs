//! Where the viewer's frames come from: a small trait over a video decoder,
//! and a synthetic source of generated frames (for tests, benchmarks and
//! for running without a video).
//!
//! The background player ([`super::player`]) owns one [`FrameSource`] and
//! only ever calls it from its worker thread, so a source may block.

use crate::image::RgbImage;

/// Errors a frame source reports.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Opening or decoding failed; the message names the file and the place.
    #[error("{0}")]
    Decode(String),
    /// The source was asked for something it cannot describe.
    #[error("invalid frame source: {0}")]
    Invalid(String),
}

/// Facts about a frame source.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceInfo {
    /// What the source is (a file path or "synthetic").
    pub name: String,
    pub width: usize,
    pub height: usize,
    /// Time of the first frame, in seconds.
    pub start: f64,
    /// Duration in seconds (the end of the last frame).
    pub duration: f64,
    /// Average frame rate, for nudges of "one frame" and the timeline.
    pub fps: f64,
    /// Number of frames when known.
    pub frame_count: Option<u64>,
}

impl SourceInfo {
    /// The length of one frame in seconds (1/30 s when the rate is unknown).
    pub fn frame_duration(&self) -> f64 {
        if self.fps.is_finite() && self.fps > 0.0 {
            1.0 / self.fps
        } else {
            1.0 / 30.0
        }
    }

    /// The last time at which a frame is shown.
    pub fn end(&self) -> f64 {
        (self.start + self.duration - self.frame_duration()).max(self.start)
    }
}

/// One decoded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceFrame {
    /// Index in presentation order, from 0.
    pub index: u64,
    /// Presentation time in seconds.
    pub time: f64,
    pub image: RgbImage,
}

/// A seekable sequence of frames in presentation order.
pub trait FrameSource: Send {
    fn info(&self) -> &SourceInfo;

    /// The next frame after the last one returned, `None` at the end.
    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError>;

    /// The frame shown at time `t` (the last frame whose time is ≤ `t`; the
    /// first frame when `t` is before it). Afterwards [`Self::next_frame`]
    /// continues after it. `None` only when the source has no frames.
    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError>;
}

/// Generated frames: a green floor with white lines and a dark disc moving
/// across it, so playback, seeking and masks have something to show.
#[derive(Clone, Debug)]
pub struct SyntheticSource {
    info: SourceInfo,
    next: u64,
    /// The floor without the disc, rendered once.
    background: std::sync::Arc<RgbImage>,
}

impl SyntheticSource {
    /// `frames` frames of `width`×`height` at `fps` frames per second.
    pub fn new(width: usize, height: usize, fps: f64, frames: u64) -> Result<Self, SourceError> {
        if width == 0 || height == 0 || width > 16384 || height > 16384 {
            return Err(SourceError::Invalid(format!("size {width}×{height}")));
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(SourceError::Invalid(format!("frame rate {fps}")));
        }
        let (w, h) = (width, height);
        let line = (w.min(h) / 200).max(1);
        let background = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
            let on_line = y % (h / 4).max(1) < line || x % (w / 6).max(1) < line;
            let rgb = if on_line {
                [235, 235, 235]
            } else {
                [40, 130 + ((x * 40 / w) as u8), 50]
            };
            rgb[c]
        });
        Ok(SyntheticSource {
            info: SourceInfo {
                name: "synthetic".into(),
                width,
                height,
                start: 0.0,
                duration: frames as f64 / fps,
                fps,
                frame_count: Some(frames),
            },
            next: 0,
            background: std::sync::Arc::new(background),
        })
    }

    fn frames(&self) -> u64 {
        self.info.frame_count.unwrap_or(0)
    }

    /// Renders frame `index` (pure function of the index).
    pub fn render(&self, index: u64) -> SourceFrame {
        let (w, h) = (self.info.width, self.info.height);
        let mut img = (*self.background).clone();
        let t = index as f64 / self.info.fps;
        // Disc moving left to right, once every 4 s.
        let phase = (t / 4.0).fract();
        let (cx, cy) = (phase * w as f64, h as f64 * 0.5);
        let r = (h.min(w) as f64 * 0.08).max(2.0);
        let y0 = (cy - r).floor().max(0.0) as usize;
        let y1 = ((cy + r).ceil() as usize).min(h - 1);
        let x0 = (cx - r).floor().max(0.0) as usize;
        let x1 = ((cx + r).ceil() as usize).min(w - 1);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                if dx * dx + dy * dy <= r * r {
                    img[[y, x, 0]] = 30;
                    img[[y, x, 1]] = 30;
                    img[[y, x, 2]] = 34;
                }
            }
        }
        SourceFrame {
            index,
            time: t,
            image: img,
        }
    }
}

impl FrameSource for SyntheticSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        if self.next >= self.frames() {
            return Ok(None);
        }
        let f = self.render(self.next);
        self.next += 1;
        Ok(Some(f))
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        let n = self.frames();
        if n == 0 {
            return Ok(None);
        }
        let i = if t.is_nan() {
            0
        } else {
            // Small slack so a time computed as index/fps maps back to index.
            ((t * self.info.fps + 1e-6).floor().max(0.0) as u64).min(n - 1)
        };
        self.next = i;
        self.next_frame()
    }
}

/// Decoded frames read ahead of time.
const READ_AHEAD: usize = 3;

enum AheadCmd {
    Seek(u64, f64),
}

type AheadMsg = (u64, Result<Option<SourceFrame>, SourceError>);

/// Wraps a source so that decoding runs on its own thread, a few frames
/// ahead of the reader: while the player draws one frame the next is being
/// decoded, which uses a second core during playback. Seeking discards
/// what was read ahead.
pub struct ReadAhead {
    info: SourceInfo,
    cmd: Option<crossbeam_channel::Sender<AheadCmd>>,
    frames: crossbeam_channel::Receiver<AheadMsg>,
    epoch: u64,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ReadAhead {
    pub fn new(mut source: Box<dyn FrameSource>) -> std::io::Result<Self> {
        let info = source.info().clone();
        let (cmd_tx, cmd_rx) = crossbeam_channel::unbounded::<AheadCmd>();
        let (tx, rx) = crossbeam_channel::bounded::<AheadMsg>(READ_AHEAD);
        let handle = std::thread::Builder::new()
            .name("underlay-decode".into())
            .spawn(move || {
                let mut epoch = 0;
                // The next message to hand over, and whether decoding goes on.
                let mut pending: Option<AheadMsg> = None;
                let mut more = true;
                loop {
                    if pending.is_none() {
                        // After the end, keep saying so (like the source would).
                        let r = if more { source.next_frame() } else { Ok(None) };
                        more = matches!(r, Ok(Some(_)));
                        pending = Some((epoch, r));
                    }
                    let cmd = match pending.take() {
                        Some(msg) => {
                            crossbeam_channel::select! {
                                send(tx, msg) -> res => {
                                    if res.is_err() {
                                        return;
                                    }
                                    continue;
                                }
                                recv(cmd_rx) -> cmd => cmd,
                            }
                        }
                        None => return,
                    };
                    let Ok(AheadCmd::Seek(e, t)) = cmd else {
                        return;
                    };
                    epoch = e;
                    let r = source.frame_at(t);
                    more = matches!(r, Ok(Some(_)));
                    pending = Some((epoch, r));
                }
            })?;
        Ok(ReadAhead {
            info,
            cmd: Some(cmd_tx),
            frames: rx,
            epoch: 0,
            handle: Some(handle),
        })
    }

    fn receive(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        loop {
            match self.frames.recv() {
                Ok((e, r)) if e == self.epoch => return r,
                Ok(_) => continue,
                Err(_) => {
                    return Err(SourceError::Decode(format!(
                        "{}: the decoder stopped",
                        self.info.name
                    )));
                }
            }
        }
    }
}

impl FrameSource for ReadAhead {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        self.receive()
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.epoch += 1;
        if let Some(c) = &self.cmd {
            let _ = c.send(AheadCmd::Seek(self.epoch, t));
        }
        self.receive()
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Closing both channels wakes the thread wherever it waits.
        self.cmd = None;
        let (_, dead) = crossbeam_channel::bounded(0);
        self.frames = dead;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_frames_have_pts_and_seek() {
        let mut s = SyntheticSource::new(64, 36, 25.0, 50).unwrap();
        let f = s.frame_at(1.0).unwrap().unwrap();
        assert_eq!(f.index, 25);
        assert_eq!(f.image.dim(), (36, 64, 3));
        let g = s.next_frame().unwrap().unwrap();
        assert_eq!(g.index, 26);
        assert!((g.time - 26.0 / 25.0).abs() < 1e-12);
        assert_eq!(s.frame_at(-3.0).unwrap().unwrap().index, 0);
        assert_eq!(s.frame_at(99.0).unwrap().unwrap().index, 49);
        assert_eq!(s.frame_at(f64::NAN).unwrap().unwrap().index, 0);
        s.frame_at(99.0).unwrap();
        assert!(s.next_frame().unwrap().is_none());
    }

    #[test]
    fn synthetic_rejects_bad_parameters() {
        assert!(SyntheticSource::new(0, 10, 30.0, 1).is_err());
        assert!(SyntheticSource::new(10, 10, f64::NAN, 1).is_err());
        assert!(SyntheticSource::new(10, 10, -1.0, 1).is_err());
    }

    #[test]
    fn read_ahead_gives_the_same_frames_as_the_source() {
        let src = SyntheticSource::new(32, 18, 10.0, 30).unwrap();
        let mut plain = src.clone();
        let mut ahead = ReadAhead::new(Box::new(src)).unwrap();
        assert_eq!(ahead.next_frame().unwrap().unwrap().index, 0);
        for t in [1.55, 0.0, 2.9, 99.0, 1.0] {
            assert_eq!(ahead.frame_at(t).unwrap(), plain.frame_at(t).unwrap(), "at {t}");
            for _ in 0..5 {
                assert_eq!(ahead.next_frame().unwrap(), plain.next_frame().unwrap());
            }
        }
        drop(ahead); // joins the thread, even with frames queued
    }

    #[test]
    fn frames_differ_over_time() {
        let s = SyntheticSource::new(80, 40, 30.0, 100).unwrap();
        assert_ne!(s.render(0).image, s.render(30).image);
        assert_eq!(s.render(7), s.render(7));
    }
}
