//! The export dialog's job: runs an export on a background thread, with
//! progress the UI reads every frame and a cancel flag, so the window stays
//! responsive while a video is written.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The options of `underlay export` the dialog offers (the entity and level
/// filter, offset, calibration and mask come from the session as shown).
#[derive(Clone, Debug, PartialEq)]
pub struct ExportOptions {
    pub output: PathBuf,
    /// Start and end (video seconds); `None` = from the start / to the end.
    pub from: Option<f64>,
    pub to: Option<f64>,
    /// Draw over everything (no floor mask).
    pub no_mask: bool,
    /// x264 constant rate factor, 0–51.
    pub crf: u8,
    /// x264 preset.
    pub preset: String,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            output: PathBuf::new(),
            from: None,
            to: None,
            no_mask: false,
            crf: 20,
            preset: "veryfast".into(),
        }
    }
}

/// x264 presets, fastest first.
pub const PRESETS: [&str; 9] = [
    "ultrafast",
    "superfast",
    "veryfast",
    "faster",
    "fast",
    "medium",
    "slow",
    "slower",
    "veryslow",
];

impl ExportOptions {
    /// Checks the options; the message says what to fix.
    pub fn check(&self) -> Result<(), String> {
        if self.output.as_os_str().is_empty() {
            return Err("choose an output file".into());
        }
        if let (Some(a), Some(b)) = (self.from, self.to)
            && a.partial_cmp(&b) != Some(std::cmp::Ordering::Less)
        {
            return Err(format!("the range is empty: from {a} s to {b} s"));
        }
        for t in self.from.iter().chain(&self.to) {
            if !t.is_finite() {
                return Err(format!("{t} is not a time"));
            }
        }
        if self.crf > 51 {
            return Err(format!("CRF {} is outside 0–51", self.crf));
        }
        if !PRESETS.contains(&self.preset.as_str()) {
            return Err(format!("unknown x264 preset {:?}", self.preset));
        }
        Ok(())
    }
}

/// Progress of a running export, shared with its thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Frames written so far.
    pub done: AtomicU64,
    /// Frames expected, 0 when unknown.
    pub total: AtomicU64,
}

impl Progress {
    /// Records `done` of `total` frames.
    pub fn set(&self, done: u64, total: Option<u64>) {
        self.done.store(done, Ordering::Relaxed);
        self.total.store(total.unwrap_or(0), Ordering::Relaxed);
    }
}

/// An export running on its own thread.
pub struct Running {
    pub progress: Arc<Progress>,
    cancel: Arc<AtomicBool>,
    pub started: Instant,
    pub output: PathBuf,
    handle: Option<JoinHandle<Result<String, String>>>,
}

/// What an export function gets: where to report progress, and a flag
/// that turns true when the user cancels.
pub type ExportFn = Box<dyn FnOnce(&Progress, &AtomicBool) -> Result<String, String> + Send>;

impl Running {
    /// Starts `f` on a new thread.
    pub fn start(output: PathBuf, f: ExportFn) -> std::io::Result<Self> {
        let progress = Arc::new(Progress::default());
        let cancel = Arc::new(AtomicBool::new(false));
        let (p, c) = (Arc::clone(&progress), Arc::clone(&cancel));
        let handle = std::thread::Builder::new()
            .name("underlay-export".into())
            .spawn(move || {
                lower_priority();
                f(&p, &c)
            })?;
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
    pub fn poll(&mut self) -> Option<Result<String, String>> {
        if !self.handle.as_ref()?.is_finished() {
            return None;
        }
        let h = self.handle.take()?;
        Some(match h.join() {
            Ok(r) => r,
            Err(_) => Err("the export stopped unexpectedly (a bug: please report it)".into()),
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
    /// What the last export said.
    pub last: Option<Result<String, String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let mut o = ExportOptions::default();
        assert!(o.check().is_err());
        o.output = "out.mp4".into();
        assert_eq!(o.check(), Ok(()));
        o.from = Some(3.0);
        o.to = Some(2.0);
        assert!(o.check().unwrap_err().contains("empty"));
        o.to = Some(f64::NAN);
        assert!(o.check().is_err());
        o.to = None;
        o.preset = "warp".into();
        assert!(o.check().unwrap_err().contains("preset"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_export_thread_runs_at_a_lower_priority() {
        let mut r = Running::start(
            "x.mp4".into(),
            Box::new(|_: &Progress, _: &AtomicBool| {
                // SAFETY: reads the calling thread's own priority.
                let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
                Ok(nice.to_string())
            }),
        )
        .unwrap();
        let res = loop {
            if let Some(res) = r.poll() {
                break res;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let nice: i32 = res.unwrap().parse().unwrap();
        assert!(nice >= 10, "nice {nice}");
    }

    #[test]
    fn a_job_reports_progress_and_can_be_cancelled() {
        let mut r = Running::start(
            "x.mp4".into(),
            Box::new(|p: &Progress, cancel: &AtomicBool| {
                for i in 0..1000 {
                    p.set(i, Some(1000));
                    if cancel.load(Ordering::Relaxed) {
                        return Err(format!("cancelled at frame {i}"));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok("done".into())
            }),
        )
        .unwrap();
        while r.progress.done.load(Ordering::Relaxed) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (frac, _, _) = r.status();
        assert!(frac.is_some_and(|f| f > 0.0 && f < 1.0));
        r.cancel();
        let res = loop {
            if let Some(res) = r.poll() {
                break res;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(res.unwrap_err().starts_with("cancelled at frame"));
    }
}
