//! The time-sync panel's "Find offset": [`crate::sync::find`] on a
//! background thread, with its progress, a way to stop it, and its result
//! kept to show (the agreement curve) and to apply.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};

use crate::calib::Calibration;
use crate::log::Log;
use crate::sync::{Report, Request, SyncError};

/// The finder of one document: idle, running, or holding a result.
#[derive(Default)]
pub struct Finder {
    job: Option<Job>,
    /// The last result (or why there is none), until dismissed.
    pub result: Option<Result<Report, String>>,
}

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

impl Finder {
    /// Starts a search (stopping one that runs).
    pub fn start(&mut self, inputs: Inputs) {
        let progress = Arc::new(AtomicU32::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (p, c) = (progress.clone(), cancel.clone());
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
                let r = crate::sync::find(&req, &c, &mut |f| p.store((f * 1000.0) as u32, Ordering::Relaxed));
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
