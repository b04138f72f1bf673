//! The live viewer's replay buffer: the last minutes of the camera's
//! pictures as they came (before anything is drawn on them), so that the
//! viewer can pause, step back and play them again — drawn again with the
//! settings of the moment — and snap a calibration or find the offset on
//! them.
//!
//! **Bounded memory.** A decoded 1080p picture is 6 MB: minutes of them
//! would be gigabytes. Each picture is kept coded alone as JPEG in memory
//! instead ([`crate::video::coded::JpegEncoder`], quantiser 5: the demo's
//! pictures take about 32 KB at 720p and 57 KB at 1080p — 1 and 1.7 MB a
//! second at 30 frames a second, docs/PERFORMANCE.md), so that any one of
//! them decodes without the others, and the buffer keeps at most
//! [`BufferOptions::seconds`] and [`BufferOptions::max_bytes`], the oldest
//! pictures going first. Coding runs on a thread of its own ([`Recorder`])
//! with room for [`WAITING`] pictures: when it falls further behind, a
//! picture is not kept (counted in [`BufferCounts::skipped`]) rather than
//! holding the live loop back. Raw pictures in flight are bounded too:
//! those waiting, the one being coded and two spare buffers kept for
//! copying into (five 1080p frames, 30 MB, at most).
//!
//! A paused viewer plays a snapshot of the buffer as a [`FrameSource`]
//! ([`ReplayBuffer::source`]): the entries are shared, not copied, so a
//! long pause holds the pictures the buffer has let go since — at most
//! the buffer's bound once more — until the viewer goes back to live.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::image::RgbImage;
use crate::video::coded::{Coding, JpegEncoder, PacketDecoder};
use crate::video::source::{FrameSource, SourceError, SourceFrame, SourceInfo};

/// How much of the camera the buffer keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferOptions {
    /// Seconds kept before the newest picture.
    pub seconds: f64,
    /// Bytes of coded pictures kept at most.
    pub max_bytes: usize,
    /// FFmpeg's JPEG quantiser scale (2 best … 31 smallest).
    pub quality: u8,
}

impl Default for BufferOptions {
    /// Two minutes within 256 MiB, at quantiser 5.
    fn default() -> Self {
        BufferOptions {
            seconds: 120.0,
            max_bytes: 256 << 20,
            quality: 5,
        }
    }
}

/// One picture kept.
#[derive(Clone, Debug)]
struct Entry {
    index: u64,
    time: f64,
    jpeg: Arc<[u8]>,
}

/// What the buffer holds and did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BufferCounts {
    /// Pictures held now, and their bytes.
    pub frames: usize,
    pub bytes: usize,
    /// The first and last picture's time, when any is held.
    pub span: Option<(f64, f64)>,
    /// Pictures kept so far.
    pub stored: u64,
    /// Pictures let go to stay within the bounds.
    pub evicted: u64,
    /// Pictures not kept because coding was behind (or failed).
    pub skipped: u64,
    /// Why coding last failed, if it did.
    pub last_error: Option<String>,
}

#[derive(Default)]
struct Inner {
    entries: VecDeque<Entry>,
    counts: BufferCounts,
    /// The pictures' size.
    size: Option<(usize, usize)>,
}

/// The last minutes of the camera, coded (see the module docs).
pub struct ReplayBuffer {
    opts: BufferOptions,
    inner: Mutex<Inner>,
}

impl ReplayBuffer {
    /// An empty buffer keeping what `opts` says.
    pub fn new(opts: BufferOptions) -> Self {
        ReplayBuffer {
            opts,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// What it keeps.
    pub fn options(&self) -> BufferOptions {
        self.opts
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A coder that panicked left pictures and counts, nothing half-made.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps the picture `jpeg` (of `size`) shown at `time`; the oldest go
    /// while the buffer is beyond its bounds. A time not after the newest
    /// (a camera whose clock started again) or another size starts the
    /// buffer afresh.
    pub fn push(&self, index: u64, time: f64, size: (usize, usize), jpeg: Vec<u8>) {
        let mut inner = self.lock();
        let restart = inner.size.is_some_and(|s| s != size)
            || inner
                .entries
                .back()
                .is_some_and(|b| b.time.partial_cmp(&time) != Some(std::cmp::Ordering::Less));
        if restart {
            let n = inner.entries.len() as u64;
            inner.entries.clear();
            inner.counts.evicted += n;
            inner.counts.bytes = 0;
        }
        inner.size = Some(size);
        inner.counts.bytes += jpeg.len();
        inner.entries.push_back(Entry {
            index,
            time,
            jpeg: jpeg.into(),
        });
        inner.counts.stored += 1;
        while inner.entries.len() > 1
            && (inner.counts.bytes > self.opts.max_bytes
                || inner
                    .entries
                    .front()
                    .is_some_and(|f| time - f.time > self.opts.seconds))
        {
            if let Some(f) = inner.entries.pop_front() {
                inner.counts.bytes -= f.jpeg.len();
                inner.counts.evicted += 1;
            }
        }
        inner.counts.frames = inner.entries.len();
    }

    /// Counts a picture not kept, and why.
    pub fn skip(&self, why: Option<String>) {
        let mut inner = self.lock();
        inner.counts.skipped += 1;
        if why.is_some() {
            inner.counts.last_error = why;
        }
    }

    /// What it holds and did.
    pub fn counts(&self) -> BufferCounts {
        let inner = self.lock();
        BufferCounts {
            span: inner
                .entries
                .front()
                .zip(inner.entries.back())
                .map(|(a, b)| (a.time, b.time)),
            ..inner.counts.clone()
        }
    }

    /// The pictures held now as a frame source (named `name`, at `fps` as
    /// the camera says, else as measured); `None` while it is empty.
    pub fn source(&self, name: &str, fps: f64) -> Option<BufferSource> {
        let (entries, size) = {
            let inner = self.lock();
            (inner.entries.iter().cloned().collect::<Vec<_>>(), inner.size?)
        };
        BufferSource::new(name, entries, size, fps)
    }

    /// The picture shown at `time` (the last at or before it, else the
    /// first), decoded; `None` while the buffer is empty.
    pub fn picture_at(&self, time: f64) -> Result<Option<SourceFrame>, SourceError> {
        let entry = {
            let inner = self.lock();
            let i = inner
                .entries
                .partition_point(|e| e.time <= time)
                .saturating_sub(1);
            inner.entries.get(i).cloned()
        };
        let Some(e) = entry else { return Ok(None) };
        let mut decoder = PacketDecoder::new(Coding::Jpeg).map_err(undecodable)?;
        decode(&mut decoder, &e).map(Some)
    }
}

/// A decoding failure of the buffer's own pictures (a bug, or FFmpeg
/// without a JPEG decoder).
fn undecodable(e: crate::video::StepError) -> SourceError {
    SourceError::Other {
        path: "live replay buffer".into(),
        kind: "a picture of the replay buffer",
        source: Box::new(e),
    }
}

fn decode(decoder: &mut PacketDecoder, e: &Entry) -> Result<SourceFrame, SourceError> {
    match decoder.decode(&e.jpeg) {
        Ok(Some(image)) => Ok(SourceFrame::new(e.index, e.time, image)),
        Ok(None) => Err(undecodable("a JPEG picture that gave nothing".into())),
        Err(err) => Err(undecodable(err)),
    }
}

/// A snapshot of the buffer played as a frame source: its pictures in
/// order, any one decoded alone.
pub struct BufferSource {
    entries: Vec<Entry>,
    info: SourceInfo,
    decoder: PacketDecoder,
    /// The entry `next_frame` gives.
    next: usize,
}

impl BufferSource {
    fn new(name: &str, entries: Vec<Entry>, (w, h): (usize, usize), fps: f64) -> Option<BufferSource> {
        let (first, last) = (entries.first()?.time, entries.last()?.time);
        let measured = if entries.len() > 1 && last > first {
            (entries.len() - 1) as f64 / (last - first)
        } else {
            0.0
        };
        let fps = if fps.is_finite() && fps > 0.0 {
            fps
        } else if measured > 0.0 {
            measured
        } else {
            30.0
        };
        let mut info = SourceInfo::new(name, w, h, fps, last - first + 1.0 / fps);
        info.start = first;
        info.frame_count = Some(entries.len() as u64);
        let decoder = PacketDecoder::new(Coding::Jpeg).ok()?;
        Some(BufferSource {
            entries,
            info,
            decoder,
            next: 0,
        })
    }

    /// The times of its pictures, in order.
    pub fn times(&self) -> impl Iterator<Item = f64> + '_ {
        self.entries.iter().map(|e| e.time)
    }
}

impl FrameSource for BufferSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        let Some(e) = self.entries.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        decode(&mut self.decoder, e).map(Some)
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.next = self.entries.partition_point(|e| e.time <= t).saturating_sub(1);
        self.next_frame()
    }
}

/// Pictures that may wait for the coding thread: two absorb a slow frame
/// (a 1080p picture takes about 10 ms to code on this project's 2-core
/// machines, beside the drawing and the screen).
pub const WAITING: usize = 2;

/// A picture waiting to be coded.
struct Job {
    index: u64,
    time: f64,
    image: RgbImage,
}

/// Codes pictures into a [`ReplayBuffer`] on a thread of its own (see the
/// module docs); stops its thread when dropped, after the picture waiting.
pub struct Recorder {
    buffer: Arc<ReplayBuffer>,
    tx: Option<SyncSender<Job>>,
    /// Picture buffers handed back by the thread, to copy into again.
    spare: Receiver<RgbImage>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Starts coding into `buffer`.
    pub fn start(buffer: Arc<ReplayBuffer>) -> std::io::Result<Recorder> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(WAITING);
        let (spare_tx, spare) = std::sync::mpsc::sync_channel::<RgbImage>(2);
        let b = Arc::clone(&buffer);
        let thread = std::thread::Builder::new()
            .name("underlay-live-buffer".into())
            .spawn(move || {
                let quality = b.options().quality;
                let mut encoder: Option<((usize, usize), JpegEncoder)> = None;
                for job in rx {
                    let (h, w, _) = job.image.dim();
                    if encoder.as_ref().is_some_and(|(size, _)| *size != (w, h)) {
                        encoder = None;
                    }
                    let coded = match &mut encoder {
                        Some((_, e)) => Ok(e),
                        None => JpegEncoder::new(w, h, quality).map(|e| &mut encoder.insert(((w, h), e)).1),
                    }
                    .and_then(|e| {
                        let mut out = Vec::new();
                        e.encode(&job.image, &mut out).map(|()| out)
                    });
                    match coded {
                        Ok(jpeg) => b.push(job.index, job.time, (w, h), jpeg),
                        Err(e) => {
                            encoder = None;
                            b.skip(Some(e.to_string()));
                        }
                    }
                    let _ = spare_tx.try_send(job.image);
                }
            })?;
        Ok(Recorder {
            buffer,
            tx: Some(tx),
            spare,
            thread: Some(thread),
        })
    }

    /// Offers `frame`'s picture for keeping: copied and handed to the
    /// coding thread, or counted as skipped when it is still busy.
    pub fn offer(&mut self, frame: &SourceFrame) {
        let Some(tx) = &self.tx else { return };
        let mut image = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| RgbImage::zeros((0, 0, 3)));
        if image.dim() == frame.image.dim() {
            image.assign(&frame.image);
        } else {
            image = frame.image.clone();
        }
        let job = Job {
            index: frame.index,
            time: frame.time,
            image,
        };
        match tx.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.buffer.skip(None),
            Err(TrySendError::Disconnected(_)) => {
                self.tx = None;
                self.buffer.skip(Some("the coding thread stopped".into()));
            }
        }
    }

    /// Waits until every picture offered so far is coded (tests, the end
    /// of a run).
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop();
    }
}

const _: () = {
    const fn shared<T: Send + Sync>() {}
    const fn sent<T: Send>() {}
    shared::<ReplayBuffer>();
    sent::<Recorder>();
    sent::<BufferSource>();
};

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(k: u8) -> RgbImage {
        RgbImage::from_shape_fn((48, 64, 3), |(y, x, c)| [(x * 4) as u8, (y * 5) as u8, k][c])
    }

    fn frame(index: u64, time: f64, k: u8) -> SourceFrame {
        SourceFrame::new(index, time, picture(k))
    }

    /// The buffer keeps its seconds and its bytes, the oldest going first,
    /// and starts again when the clock goes back.
    #[test]
    fn the_buffer_stays_within_its_seconds_and_bytes() {
        let b = ReplayBuffer::new(BufferOptions {
            seconds: 2.0,
            max_bytes: 1000,
            quality: 5,
        });
        for i in 0..50u64 {
            b.push(i, i as f64 * 0.125, (64, 48), vec![0; 10]);
        }
        let c = b.counts();
        // 2 s at 8 a second: the newest and the 16 before it.
        assert_eq!((c.frames, c.bytes, c.stored, c.evicted), (17, 170, 50, 33));
        assert_eq!(c.span, Some((4.125, 6.125)));
        // Bytes bind before seconds.
        for i in 50..60u64 {
            b.push(i, i as f64 * 0.125, (64, 48), vec![0; 300]);
        }
        let c = b.counts();
        assert!(c.bytes <= 1000 && c.frames == 3, "{c:?}");
        // A clock that went back: only the new picture is kept.
        b.push(60, 1.0, (64, 48), vec![0; 10]);
        let c = b.counts();
        assert_eq!((c.frames, c.bytes, c.span), (1, 10, Some((1.0, 1.0))));
    }

    /// Pictures coded by the recorder come back from the buffer's source,
    /// in order and by time, within JPEG's loss.
    #[test]
    fn recorded_pictures_play_back_by_time() {
        let b = Arc::new(ReplayBuffer::new(BufferOptions::default()));
        let mut r = Recorder::start(Arc::clone(&b)).unwrap();
        for i in 0..10u64 {
            r.offer(&frame(i, 5.0 + i as f64 * 0.1, (i * 20) as u8));
            // One waiting at most: give the thread time so none is skipped.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while b.counts().stored < i + 1 && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        r.finish();
        let c = b.counts();
        assert_eq!((c.frames, c.skipped), (10, 0), "{c:?}");
        let mut s = b.source("cam", 10.0).unwrap();
        assert_eq!(s.info().frame_count, Some(10));
        assert!((s.info().start - 5.0).abs() < 1e-9 && (s.info().end() - 5.9).abs() < 1e-9);
        let f = s.frame_at(5.35).unwrap().unwrap();
        assert_eq!(f.index, 3);
        let blue = |f: &SourceFrame| f.image[[10, 10, 2]];
        assert!(blue(&f).abs_diff(60) <= 6, "{}", blue(&f));
        assert_eq!(s.next_frame().unwrap().unwrap().index, 4);
        assert_eq!(s.frame_at(0.0).unwrap().unwrap().index, 0);
        s.frame_at(100.0).unwrap();
        assert!(s.next_frame().unwrap().is_none());
        let last = b.picture_at(f64::INFINITY).unwrap().unwrap();
        assert_eq!(last.index, 9);
        assert!(blue(&last).abs_diff(180) <= 6, "{}", blue(&last));
    }

    /// A recorder offered pictures faster than it codes them skips some
    /// and says so; the rest are kept in order.
    #[test]
    fn a_busy_recorder_skips_and_counts() {
        let b = Arc::new(ReplayBuffer::new(BufferOptions::default()));
        let mut r = Recorder::start(Arc::clone(&b)).unwrap();
        for i in 0..200u64 {
            r.offer(&frame(i, i as f64 / 30.0, 0));
        }
        r.finish();
        let c = b.counts();
        assert_eq!(c.stored + c.skipped, 200, "{c:?}");
        assert!(c.stored >= 2, "{c:?}");
        let s = b.source("cam", 0.0).unwrap();
        let times: Vec<f64> = s.times().collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn an_empty_buffer_has_no_source_and_no_picture() {
        let b = ReplayBuffer::new(BufferOptions::default());
        assert!(b.source("cam", 30.0).is_none());
        assert!(b.picture_at(1.0).unwrap().is_none());
    }
}
