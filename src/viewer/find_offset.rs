//! The time-sync panel's "Find offset": [`crate::sync::find`] on a
//! background thread, with its progress, a way to stop it, and its result
//! kept to show (the agreement curve) and to apply.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};

use crate::calib::Calibration;
use crate::image::MaskImage;
use crate::live::ReplayBuffer;
use crate::log::Log;
use crate::sync::{Motion, MotionError, Movers, Report, Request, SyncError};
use crate::video::source::FrameSource;

/// The finder of one document: idle, running, or holding a result.
#[derive(Default)]
pub struct Finder {
    job: Option<Job>,
    /// The last result (or why there is none), until dismissed.
    pub result: Option<Result<Report, String>>,
    /// Live mode: the camera's replay buffer, searched instead of the
    /// session's video (its last [`LIVE_SECONDS`]).
    pub live: Option<Arc<ReplayBuffer>>,
}

/// Seconds of a live camera's buffer the search compares (the newest).
pub const LIVE_SECONDS: f64 = 30.0;

/// A running search.
struct Job {
    progress: Arc<AtomicU32>,
    cancel: Arc<AtomicBool>,
    rx: mpsc::Receiver<Result<Report, SyncError>>,
}

impl Drop for Job {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// What the search needs, owned by its thread.
pub struct Inputs {
    pub video: PathBuf,
    pub log: Arc<Log>,
    pub calibration: Calibration,
    /// The session's offset and rate: the starting guess.
    pub guess: f64,
    pub rate: f64,
}

/// [`crate::sync::find`] on the newest [`LIVE_SECONDS`] of a live
/// camera's buffer: its pictures' luma, in order, with their times.
fn find_in_buffer(
    req: &Request<'_>,
    buffer: &ReplayBuffer,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<Report, SyncError> {
    let started = std::time::Instant::now();
    let movers = Movers::from_log(req.log);
    if movers.is_empty() {
        return Err(SyncError::NothingMoves);
    }
    let too_short = |from: f64, to: f64| {
        SyncError::Motion(MotionError::TooShort {
            path: "the live buffer".into(),
            from,
            to,
        })
    };
    let Some(mut source) = buffer.source("live", 0.0) else {
        return Err(too_short(0.0, 0.0));
    };
    let (w, h, fps, end) = {
        let i = source.info();
        (i.width, i.height, i.fps, i.end())
    };
    let from = end - LIVE_SECONDS;
    let n = source.times().filter(|&t| t >= from).count().max(1);
    let mut pictures = Vec::with_capacity(n);
    let mut frame = source
        .frame_at(from)
        .map_err(|e| SyncError::Motion(MotionError::Source(e)))?;
    while let Some(f) = frame {
        if cancel.load(Ordering::Relaxed) {
            return Err(SyncError::Motion(MotionError::Cancelled));
        }
        if f.time >= from {
            pictures.push((f.time, luma(&f.image)));
            progress(0.7 * pictures.len() as f64 / n as f64);
        }
        frame = source
            .next_frame()
            .map_err(|e| SyncError::Motion(MotionError::Source(e)))?;
    }
    let motion = Motion::from_pictures(w, h, fps, pictures).ok_or_else(|| too_short(from, end))?;
    crate::sync::find_in(
        req,
        &movers,
        &motion,
        cancel,
        &mut |f| progress(0.7 + 0.3 * f),
        started,
    )
}

/// The luma of an RGB picture (BT.601, as the video's gray decoding).
fn luma(img: &crate::image::RgbImage) -> MaskImage {
    let (h, w, _) = img.dim();
    MaskImage::from_shape_fn((h, w), |(y, x)| {
        let (r, g, b) = (
            u32::from(img[[y, x, 0]]),
            u32::from(img[[y, x, 1]]),
            u32::from(img[[y, x, 2]]),
        );
        ((66 * r + 129 * g + 25 * b + 128) / 256 + 16).min(255) as u8
    })
}

impl Finder {
    /// Starts a search (stopping one that runs).
    pub fn start(&mut self, inputs: Inputs) {
        let progress = Arc::new(AtomicU32::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (p, c) = (progress.clone(), cancel.clone());
        let live = self.live.clone();
        let spawned = std::thread::Builder::new()
            .name("find-offset".into())
            .spawn(move || {
                let req = Request {
                    video: &inputs.video,
                    log: &inputs.log,
                    calibration: &inputs.calibration,
                    guess: Some(inputs.guess),
                    rate: inputs.rate,
                    search: None,
                    from: None,
                    to: None,
                    drift: true,
                };
                let mut progress = |f: f64| p.store((f * 1000.0) as u32, Ordering::Relaxed);
                let r = match &live {
                    Some(buffer) => find_in_buffer(&req, buffer, &c, &mut progress),
                    None => crate::sync::find(&req, &c, &mut progress),
                };
                // The viewer may have gone; nothing to tell then.
                let _ = tx.send(r);
            });
        self.result = None;
        match spawned {
            Ok(_) => self.job = Some(Job { progress, cancel, rx }),
            Err(e) => self.result = Some(Err(format!("cannot start the search: {e}"))),
        }
    }

    /// Whether a search runs.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// The fraction done of the running search.
    pub fn progress(&self) -> f32 {
        self.job
            .as_ref()
            .map_or(0.0, |j| j.progress.load(Ordering::Relaxed) as f32 / 1000.0)
    }

    /// Stops the running search (no result is kept).
    pub fn stop(&mut self) {
        self.job = None;
    }

    /// Takes the result of a search that has ended; `true` when one came.
    pub fn poll(&mut self) -> bool {
        let Some(job) = &self.job else { return false };
        match job.rx.try_recv() {
            Ok(r) => {
                self.result = Some(r.map_err(|e| crate::error::chain(&e)));
                self.job = None;
                true
            }
            Err(mpsc::TryRecvError::Empty) => false,
            Err(mpsc::TryRecvError::Disconnected) => {
                self.result = Some(Err("the search stopped without an answer".into()));
                self.job = None;
                true
            }
        }
    }

    /// Blocks until the running search ends (tests).
    pub fn wait(&mut self) {
        while self.running() {
            if !self.poll() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::tests::{FPS, H, W, camera, log, picture};

    /// "Find offset" on a live camera's buffer: the synthetic run of the
    /// sync tests, its pictures coded into the buffer as the live viewer
    /// keeps them, found within a fraction of a frame.
    #[test]
    fn find_offset_searches_a_live_buffer() {
        let buffer = Arc::new(ReplayBuffer::new(crate::live::BufferOptions::default()));
        let t0 = 1_764_300_000.0;
        let mut jpeg = crate::video::coded::JpegEncoder::new(W, H, 5).unwrap();
        for i in 0..(6.0 * FPS) as u64 {
            let t = i as f64 / FPS;
            let gray = picture(1, t, i);
            let rgb = crate::image::RgbImage::from_shape_fn((H, W, 3), |(y, x, _)| gray[(y, x)]);
            let mut bytes = Vec::new();
            jpeg.encode(&rgb, &mut bytes).unwrap();
            // Live, the frames carry their arrival on this machine's clock.
            buffer.push(i, t0 + t, (W, H), bytes);
        }
        // The log's clock: world time + `truth`; the frames': world + t0.
        let truth = 1_700_000_123.456_7;
        let offset = truth - t0;
        let mut finder = Finder {
            live: Some(Arc::clone(&buffer)),
            ..Default::default()
        };
        finder.start(Inputs {
            video: PathBuf::from("udp://127.0.0.1:5000"),
            log: Arc::new(log(1, truth, 1.0, 6.0)),
            calibration: camera(),
            guess: offset + 2.0,
            rate: 1.0,
        });
        finder.wait();
        let r = finder.result.take().unwrap().unwrap();
        assert!(r.found.confident, "{:?}", r.found);
        assert!(
            (r.found.offset - offset).abs() < 0.5 / FPS,
            "found {} for {offset}",
            r.found.offset
        );
        // An empty buffer says so.
        let mut empty = Finder {
            live: Some(Arc::new(ReplayBuffer::new(crate::live::BufferOptions::default()))),
            ..Default::default()
        };
        empty.start(Inputs {
            video: PathBuf::from("udp://127.0.0.1:5000"),
            log: Arc::new(log(1, truth, 1.0, 6.0)),
            calibration: camera(),
            guess: offset,
            rate: 1.0,
        });
        empty.wait();
        let e = empty.result.take().unwrap().unwrap_err();
        assert!(e.contains("the live buffer"), "{e}");
    }
}
