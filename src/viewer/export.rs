//! The export dialog's job: runs the export plan ([`crate::export::ExportPlan`],
//! the one `underlay export` runs) on a background thread, with progress
//! the UI reads every frame and a cancel flag, so the window stays
//! responsive while a video is written.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::export::{ExportError, ExportReport};
pub use crate::export::{ExportOptions, PRESETS, Progress};

/// Why the dialog's export did not happen, or failed.
#[derive(Debug, thiserror::Error)]
pub enum DialogError {
    #[error("an export is already running")]
    Running,
    #[error("generated frames cannot be exported")]
    Synthetic,
    #[error("nothing is open")]
    NothingOpen,
    #[error("open a log first: there is nothing to draw")]
    NoLog,
    #[error("calibrate first: the overlay needs a calibration")]
    NoCalibration,
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("cannot start the export thread")]
    Thread(#[source] std::io::Error),
    #[error("the export stopped unexpectedly (a bug: please report it)")]
    Panicked,
}

/// What an export function gets: where to count progress, and a flag
/// that turns true when the user cancels.
pub type ExportFn = Box<dyn FnOnce(&Arc<Progress>, &AtomicBool) -> Result<ExportReport, ExportError> + Send>;

/// One line saying what an export wrote.
pub fn summary(report: &ExportReport, output: &std::path::Path) -> String {
    format!(
        "wrote {} frames ({:.1} s of video) to {} in {:.1} s",
        report.frames,
        report.duration,
        output.display(),
        report.elapsed
    )
}

/// An export running on its own thread.
pub struct Running {
    pub progress: Arc<Progress>,
    cancel: Arc<AtomicBool>,
    pub started: Instant,
    pub output: PathBuf,
    handle: Option<JoinHandle<Result<ExportReport, ExportError>>>,
}

impl Running {
    /// Starts `f` on a new thread.
    pub fn start(output: PathBuf, f: ExportFn) -> Result<Self, DialogError> {
        let progress = Arc::new(Progress::default());
        let cancel = Arc::new(AtomicBool::new(false));
        let (p, c) = (Arc::clone(&progress), Arc::clone(&cancel));
        let handle = std::thread::Builder::new()
            .name("underlay-export".into())
            .spawn(move || {
                lower_priority();
                f(&p, &c)
            })
            .map_err(DialogError::Thread)?;
        Ok(Running {
            progress,
            cancel,
            started: Instant::now(),
            output,
            handle: Some(handle),
        })
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The result once the thread ended (`None` while it runs).
    pub fn poll(&mut self) -> Option<Result<ExportReport, DialogError>> {
        if !self.handle.as_ref()?.is_finished() {
            return None;
        }
        let h = self.handle.take()?;
        Some(match h.join() {
            Ok(r) => r.map_err(DialogError::from),
            Err(_) => Err(DialogError::Panicked),
        })
    }

    /// `(fraction done, frames per second, time left)` for the progress bar.
    pub fn status(&self) -> (Option<f32>, f64, Option<Duration>) {
        let done = self.progress.done.load(Ordering::Relaxed);
        let total = self.progress.total.load(Ordering::Relaxed);
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let fps = done as f64 / secs;
        let frac = (total > 0).then(|| (done as f32 / total as f32).clamp(0.0, 1.0));
        let eta = (total > done && fps > 0.0).then(|| Duration::from_secs_f64((total - done) as f64 / fps));
        (frac, fps, eta)
    }
}

/// Lowers the scheduling priority of the calling thread, and so of the
/// threads it starts (they inherit it): the export's decode, draw and
/// encode threads then yield the CPU to the window, which stays responsive.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id; failure
    // only leaves the priority unchanged.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Closing the viewer cancels the export and waits for its cleanup
        // (the temporary file is removed), so nothing half-written stays.
        self.cancel();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The export dialog's state.
#[derive(Default)]
pub struct ExportDialog {
    pub open: bool,
    pub options: ExportOptions,
    /// The output path as typed.
    pub output_text: String,
    pub running: Option<Running>,
    /// What the last export did.
    pub last: Option<Result<ExportReport, DialogError>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(r: &mut Running) -> Result<ExportReport, DialogError> {
        loop {
            if let Some(res) = r.poll() {
                return res;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_export_thread_runs_at_a_lower_priority() {
        let mut r = Running::start(
            "x.mp4".into(),
            Box::new(|_: &Arc<Progress>, _: &AtomicBool| {
                // SAFETY: reads the calling thread's own priority.
                let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
                Ok(ExportReport {
                    frames: nice as u64,
                    ..ExportReport::default()
                })
            }),
        )
        .unwrap();
        let nice = wait(&mut r).unwrap().frames;
        assert!(nice >= 10, "nice {nice}");
    }

    #[test]
    fn a_job_reports_progress_and_can_be_cancelled() {
        let mut r = Running::start(
            "x.mp4".into(),
            Box::new(|p: &Arc<Progress>, cancel: &AtomicBool| {
                p.total.store(1000, Ordering::Relaxed);
                for i in 0..1000 {
                    p.done.store(i, Ordering::Relaxed);
                    if cancel.load(Ordering::Relaxed) {
                        return Err(crate::Interrupted.into());
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok(ExportReport::default())
            }),
        )
        .unwrap();
        while r.progress.done.load(Ordering::Relaxed) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (frac, _, _) = r.status();
        assert!(frac.is_some_and(|f| f > 0.0 && f < 1.0));
        r.cancel();
        let e = wait(&mut r).unwrap_err();
        assert!(
            matches!(e, DialogError::Export(ExportError::Interrupted(_))),
            "{e}"
        );
    }
}
