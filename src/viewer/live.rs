//! The viewer in live mode (`underlay live` without `--no-view`): the live
//! loop ([`crate::live::run_with`]) runs on a thread of its own and hands
//! this module's [`ViewerSink`] every frame as decoded and as drawn — the
//! frames its outputs write, so that what the viewer shows is what they
//! send — and the log each time it swaps it.
//!
//! - **Following.** The newest drawn frame is turned into a picture for
//!   the screen on a thread of its own (reduced to the size it is shown
//!   at), the UI woken up; the timeline grows with the replay buffer.
//! - **Reviewing.** Pausing, stepping back or seeking takes a snapshot of
//!   the replay buffer ([`crate::live::ReplayBuffer`]) and plays it with
//!   the ordinary background player, drawn again with the settings of the
//!   moment; "Back to live" follows the camera again. The loop and its
//!   outputs run on meanwhile.
//! - **Settings** edited in the viewer (selection, mask, calibration,
//!   offset) go to the loop too ([`LiveView::configure`]) and are drawn
//!   from its next frame on, into its outputs as well.
//! - **Status** (the live bar, `ui::live`): the loop's rates, drops,
//!   latency and sources, the buffer's extent and memory, "no signal
//!   since …".
//!
//! [`LiveView`] is the app's handle; [`LiveView::detached`] makes one
//! with its sink and no loop, which tests feed frames by hand.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use eframe::egui::ColorImage;

use super::screen::to_color_image_reduced;
use crate::live::{
    BufferCounts, BufferOptions, BufferSource, LiveError, LiveOptions, LiveReport, LiveSink, LiveStatus,
    Recorder, ReplayBuffer,
};
use crate::log::Log;
use crate::pipeline::{DrawSettings, PipelineError};
use crate::select::Index;
use crate::video::source::{SourceFrame, SourceInfo};

/// How the viewer starts in live mode.
#[derive(Clone, Debug)]
pub struct LiveViewOptions {
    /// The run: camera, sources, session, outputs.
    pub run: LiveOptions,
    /// Where the session was read from, if it was (saving goes there).
    pub session_path: Option<PathBuf>,
    /// What the replay buffer keeps.
    pub buffer: BufferOptions,
    /// Take a screenshot here once the run has ended (`--duration`), then
    /// close.
    pub screenshot: Option<PathBuf>,
    /// Set to stop the run (Ctrl-C on the terminal); the window closes
    /// once it has stopped.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Also told each status (about once a second), beside the window's
    /// live bar: the terminal's status line.
    pub echo: Option<StatusEcho>,
    /// Given why the run failed, if it did, when it ends (whether or not
    /// the window is still open to show it): the command's exit status.
    pub failed: Option<Arc<Mutex<Option<String>>>>,
}

/// What hears a live run's status.
pub type StatusFn = dyn FnMut(&LiveStatus) + Send;

/// Who else hears a live run's status ([`LiveViewOptions::echo`]).
#[derive(Clone)]
pub struct StatusEcho(pub Arc<Mutex<StatusFn>>);

impl std::fmt::Debug for StatusEcho {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StatusEcho")
    }
}

/// A frame the loop drew, with its primitives drawn and its mask's doubt,
/// waiting to be turned into a picture.
type Drawn = (Arc<SourceFrame>, usize, Option<crate::mask::MaskDoubt>);

/// A drawn live frame turned into a picture for the screen.
#[derive(Clone, Debug)]
pub struct LiveShown {
    pub index: u64,
    /// The time it was drawn at (its arrival, or the stream's own).
    pub time: f64,
    pub image: Arc<ColorImage>,
    /// The frame's size `[width, height]`.
    pub size: [usize; 2],
    /// Each image pixel stands for `reduction`² frame pixels.
    pub reduction: usize,
    pub primitives: usize,
    /// What makes its floor mask doubtful.
    pub mask_doubt: Option<crate::mask::MaskDoubt>,
}

/// The newest log the loop swapped in, numbered.
#[derive(Default)]
struct LogSlot {
    generation: u64,
    log: Option<(Arc<Log>, Arc<Index>)>,
}

/// What the loop's thread and the UI share.
struct Shared {
    wake: Box<dyn Fn() + Send + Sync>,
    /// Size and rate, once the first picture came.
    started: Mutex<Option<(usize, usize, f64)>>,
    status: Mutex<Option<LiveStatus>>,
    /// Settings waiting for the loop.
    settings: Mutex<Option<DrawSettings>>,
    /// What the loop could not apply.
    refused: Mutex<Vec<String>>,
    log: Mutex<LogSlot>,
    /// The newest drawn frame waiting to be turned into a picture.
    pending: Mutex<Option<Drawn>>,
    pending_ready: Condvar,
    /// The newest picture for the screen.
    screen: Mutex<Option<LiveShown>>,
    /// Physical pixels the frame covers on screen.
    display: Mutex<Option<[usize; 2]>>,
    /// The picture thread stops (after the frame waiting).
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain values behind the locks: a panicked thread leaves them usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The live loop's [`LiveSink`]: decoded frames into the replay buffer,
/// drawn ones to the screen, logs and status to the UI.
pub struct ViewerSink {
    shared: Arc<Shared>,
    recorder: Recorder,
    pictures: Option<JoinHandle<()>>,
}

impl ViewerSink {
    fn new(shared: Arc<Shared>, buffer: Arc<ReplayBuffer>) -> std::io::Result<ViewerSink> {
        let recorder = Recorder::start(buffer)?;
        let s = Arc::clone(&shared);
        let pictures = std::thread::Builder::new()
            .name("underlay-live-screen".into())
            .spawn(move || screen_pictures(&s))?;
        Ok(ViewerSink {
            shared,
            recorder,
            pictures: Some(pictures),
        })
    }
}

/// The picture thread: the newest drawn frame, reduced for the screen.
fn screen_pictures(s: &Shared) {
    loop {
        let next = {
            let mut pending = lock(&s.pending);
            loop {
                if let Some(p) = pending.take() {
                    break Some(p);
                }
                if s.stop.load(Ordering::Relaxed) {
                    break None;
                }
                pending = s
                    .pending_ready
                    .wait_timeout(pending, Duration::from_millis(200))
                    .map_or_else(|e| e.into_inner().0, |(g, _)| g);
            }
        };
        let Some((frame, primitives, mask_doubt)) = next else {
            return;
        };
        let (h, w, _) = frame.image.dim();
        let reduction = reduction_for([w, h], *lock(&s.display));
        let image = to_color_image_reduced(&frame.image, reduction);
        *lock(&s.screen) = Some(LiveShown {
            index: frame.index,
            time: frame.time,
            image: Arc::new(image),
            size: [w, h],
            reduction,
            primitives,
            mask_doubt,
        });
        (s.wake)();
    }
}

/// The largest whole reduction (up to 4) of a `size` frame that keeps at
/// least the pixels it covers on screen (the player's rule).
fn reduction_for(size: [usize; 2], display: Option<[usize; 2]>) -> usize {
    let Some([dw, dh]) = display else { return 1 };
    (size[0] / dw.max(1)).min(size[1] / dh.max(1)).clamp(1, 4)
}

impl LiveSink for ViewerSink {
    fn started(&mut self, width: usize, height: usize, fps: f64) {
        *lock(&self.shared.started) = Some((width, height, fps));
        (self.shared.wake)();
    }

    fn settings(&mut self) -> Option<DrawSettings> {
        lock(&self.shared.settings).take()
    }

    fn configured(&mut self, result: Result<(), PipelineError>) {
        if let Err(e) = result {
            lock(&self.shared.refused).push(crate::error::chain(&e));
            (self.shared.wake)();
        }
    }

    fn log(&mut self, log: &Arc<Log>, index: &Arc<Index>) {
        let mut slot = lock(&self.shared.log);
        slot.generation += 1;
        slot.log = Some((Arc::clone(log), Arc::clone(index)));
    }

    fn decoded(&mut self, frame: &SourceFrame) {
        self.recorder.offer(frame);
    }

    fn drawn(&mut self, frame: &Arc<SourceFrame>, primitives: usize, doubt: Option<crate::mask::MaskDoubt>) {
        *lock(&self.shared.pending) = Some((Arc::clone(frame), primitives, doubt));
        self.shared.pending_ready.notify_one();
    }
}

impl Drop for ViewerSink {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.pending_ready.notify_one();
        if let Some(t) = self.pictures.take() {
            let _ = t.join();
        }
    }
}

/// The live run as the viewer holds it (see the module docs).
pub struct LiveView {
    shared: Arc<Shared>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<LiveReport, LiveError>>>,
    /// The camera's last minutes.
    pub buffer: Arc<ReplayBuffer>,
    /// The camera as given.
    pub camera: String,
    /// Following the camera; else reviewing a snapshot of the buffer.
    pub following: bool,
    /// The run's end: its report, or why it stopped.
    pub ended: Option<Result<LiveReport, String>>,
    /// Size, rate and the buffer's extent, once the first picture came.
    pub info: Option<SourceInfo>,
    /// The loop's latest status.
    pub status: Option<LiveStatus>,
    /// The buffer's latest counts.
    pub counts: BufferCounts,
    /// A screenshot to take once the run ended.
    pub screenshot: Option<PathBuf>,
    /// Drawn frames put on screen so far (the viewer's own frame rate).
    pub shown: u64,
    /// The settings sent to the loop last.
    sent: Option<DrawSettings>,
    /// The log generation taken last, and when.
    log_taken: (u64, Option<Instant>),
}

/// The viewer's log is rebuilt from the loop's at most this often (its
/// entity tree and events are built again each time).
const LOG_INTERVAL: Duration = Duration::from_millis(500);

impl LiveView {
    /// Starts `opts`' run on a thread of its own; `wake` asks the UI for a
    /// repaint.
    pub fn start(
        opts: &LiveViewOptions,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> std::io::Result<LiveView> {
        let (mut view, mut sink) = LiveView::detached(opts.run.camera.input.clone(), opts.buffer, wake)?;
        view.screenshot = opts.screenshot.clone();
        if let Some(c) = &opts.cancel {
            view.cancel = Arc::clone(c);
        }
        let run = opts.run.clone();
        let cancel = Arc::clone(&view.cancel);
        let shared = Arc::clone(&view.shared);
        let echo = opts.echo.clone();
        let failed = opts.failed.clone();
        let thread = std::thread::Builder::new()
            .name("underlay-live".into())
            .spawn(move || {
                let mut status = |s: &LiveStatus| {
                    *lock(&shared.status) = Some(s.clone());
                    (shared.wake)();
                    if let Some(StatusEcho(echo)) = &echo {
                        let mut echo = echo.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        (*echo)(s);
                    }
                };
                let r = crate::live::run_with(&run, &cancel, &mut status, Some(&mut sink));
                if let (Some(slot), Err(e)) = (&failed, &r) {
                    *lock(slot) = Some(crate::error::chain(e));
                }
                // The last frame reaches the screen before the end is told.
                drop(sink);
                (shared.wake)();
                r
            })?;
        view.thread = Some(thread);
        Ok(view)
    }

    /// A live view of `camera` with its sink and no loop: whoever holds
    /// the sink feeds it (tests).
    pub fn detached(
        camera: String,
        buffer: BufferOptions,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> std::io::Result<(LiveView, ViewerSink)> {
        let shared = Arc::new(Shared {
            wake: Box::new(wake),
            started: Mutex::new(None),
            status: Mutex::new(None),
            settings: Mutex::new(None),
            refused: Mutex::new(Vec::new()),
            log: Mutex::new(LogSlot::default()),
            pending: Mutex::new(None),
            pending_ready: Condvar::new(),
            screen: Mutex::new(None),
            display: Mutex::new(None),
            stop: AtomicBool::new(false),
        });
        let buffer = Arc::new(ReplayBuffer::new(buffer));
        let sink = ViewerSink::new(Arc::clone(&shared), Arc::clone(&buffer))?;
        let view = LiveView {
            shared,
            cancel: Arc::new(AtomicBool::new(false)),
            thread: None,
            buffer,
            camera,
            following: true,
            ended: None,
            info: None,
            status: None,
            counts: BufferCounts::default(),
            screenshot: None,
            shown: 0,
            sent: None,
            log_taken: (0, None),
        };
        Ok((view, sink))
    }

    /// Takes in what the loop did since the last call: its end, the
    /// status, the buffer's extent. Returns whether the run just ended.
    pub fn poll(&mut self) -> bool {
        let mut just_ended = false;
        if self.thread.as_ref().is_some_and(JoinHandle::is_finished)
            && let Some(t) = self.thread.take()
        {
            self.ended = Some(match t.join() {
                Ok(r) => r.map_err(|e| crate::error::chain(&e)),
                Err(_) => Err("the live loop stopped (a bug)".into()),
            });
            just_ended = true;
        }
        if let Some(s) = lock(&self.shared.status).take() {
            self.status = Some(s);
        }
        self.counts = self.buffer.counts();
        if let Some((w, h, fps)) = *lock(&self.shared.started) {
            let frame = 1.0 / fps;
            let (start, end) = self
                .counts
                .span
                .or_else(|| lock(&self.shared.screen).as_ref().map(|s| (s.time, s.time)))
                .unwrap_or((0.0, 0.0));
            let mut info = SourceInfo::new(self.camera.clone(), w, h, fps, end - start + frame);
            info.start = start;
            info.frame_count = Some(self.counts.frames as u64);
            self.info = Some(info);
        }
        just_ended
    }

    /// The newest drawn frame's picture, when a new one came.
    pub fn take_frame(&self) -> Option<LiveShown> {
        lock(&self.shared.screen).take()
    }

    /// The loop's newest log, when it swapped one since the last taken
    /// and the last was taken long enough ago.
    pub fn take_log(&mut self) -> Option<(Arc<Log>, Arc<Index>)> {
        if self.log_taken.1.is_some_and(|t| t.elapsed() < LOG_INTERVAL) {
            return None;
        }
        let slot = lock(&self.shared.log);
        if slot.generation == self.log_taken.0 {
            return None;
        }
        self.log_taken = (slot.generation, Some(Instant::now()));
        slot.log.clone()
    }

    /// Draws with `settings` from the loop's next frame on, when they
    /// differ from those sent last.
    pub fn configure(&mut self, settings: DrawSettings) {
        if self.sent.as_ref() != Some(&settings) {
            *lock(&self.shared.settings) = Some(settings.clone());
            self.sent = Some(settings);
        }
    }

    /// What the loop could not apply of the settings sent.
    pub fn take_refused(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.shared.refused))
    }

    /// Pixels the frame covers on screen (for the reduction).
    pub fn set_display_size(&self, display: Option<[usize; 2]>) {
        *lock(&self.shared.display) = display;
    }

    /// A snapshot of the buffer to review, `None` while it is empty.
    pub fn review_source(&self) -> Option<BufferSource> {
        let fps = self.info.as_ref().map_or(0.0, |i| i.fps);
        self.buffer.source(&self.camera, fps)
    }

    /// Whether the run still goes.
    pub fn running(&self) -> bool {
        self.thread.is_some()
    }

    /// Asks the run to stop (the window closes).
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether the run was asked to stop.
    pub fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a run that ended did: frames, drops, drawing, the buffer.
pub fn end_text(r: &LiveReport, c: &BufferCounts, shown: u64) -> String {
    let span = c.span.map_or(0.0, |(a, z)| z - a);
    format!(
        "live: the run ended: {} frames in, {} drawn ({} dropped), {shown} shown on screen over {:.1} s; \
         drawing p50 {:.1} ms, p95 {:.1} ms; buffer {} pictures over {span:.1} s in {:.1} MB ({} kept, {} let go, \
         {} not kept)",
        r.frames_in,
        r.frames_out,
        r.dropped,
        r.duration,
        r.draw_ms.0,
        r.draw_ms.1,
        c.frames,
        c.bytes as f64 / (1 << 20) as f64,
        c.stored,
        c.evicted,
        c.skipped
    )
}

const _: () = {
    const fn sent<T: Send>() {}
    sent::<ViewerSink>();
};

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(index: u64, time: f64) -> SourceFrame {
        SourceFrame::new(
            index,
            time,
            crate::image::RgbImage::from_shape_fn((36, 64, 3), |(y, x, c)| {
                [x as u8 * 3, y as u8 * 5, index as u8][c]
            }),
        )
    }

    /// Frames fed to the sink reach the screen (reduced for the display)
    /// and the buffer; the info grows with the buffer.
    #[test]
    fn drawn_frames_reach_the_screen_and_decoded_ones_the_buffer() {
        let (mut view, mut sink) = LiveView::detached("cam".into(), BufferOptions::default(), || {}).unwrap();
        assert!(view.take_frame().is_none() && !view.poll() && view.info.is_none());
        view.set_display_size(Some([32, 18]));
        sink.started(64, 36, 10.0);
        for i in 0..5 {
            let f = frame(i, 100.0 + i as f64 / 10.0);
            sink.decoded(&f);
            std::thread::sleep(Duration::from_millis(30));
            sink.drawn(&Arc::new(f), 7, None);
        }
        drop(sink);
        let shown = view.take_frame().expect("the last frame is on screen");
        assert_eq!((shown.index, shown.primitives, shown.reduction), (4, 7, 2));
        assert_eq!(shown.image.size, [32, 18]);
        view.poll();
        let info = view.info.clone().unwrap();
        assert_eq!((info.width, info.height, info.fps), (64, 36, 10.0));
        let c = &view.counts;
        assert_eq!(c.stored + c.skipped, 5, "{c:?}");
        assert!(info.end() <= 100.4 + 1e-9 && info.start >= 100.0 - 1e-9);
    }

    #[test]
    fn settings_and_logs_pass_between_loop_and_ui() {
        let (mut view, mut sink) = LiveView::detached("cam".into(), BufferOptions::default(), || {}).unwrap();
        assert!(sink.settings().is_none());
        view.configure(DrawSettings::default());
        assert!(sink.settings().is_some() && sink.settings().is_none());
        // The same again is not sent again.
        view.configure(DrawSettings::default());
        assert!(sink.settings().is_none());
        let log = Arc::new(Log::new());
        sink.log(&log, &Arc::new(Index::new(&log)));
        assert!(view.take_log().is_some());
        // Nothing new; and a new one waits for the interval.
        assert!(view.take_log().is_none());
        sink.log(&log, &Arc::new(Index::new(&log)));
        assert!(view.take_log().is_none());
        sink.configured(Err(PipelineError::NoSourceMask { time: 1.0 }));
        assert_eq!(view.take_refused().len(), 1);
        assert_eq!(reduction_for([1920, 1080], Some([400, 300])), 3);
        assert_eq!(reduction_for([1920, 1080], None), 1);
    }
}
