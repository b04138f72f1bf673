//! The eframe app: owns the state, runs the logic every frame (playback
//! clock, background player, settings, jobs) and lets the panels of
//! [`super::ui`] draw and record [`Command`]s, applied after layout.

use std::path::PathBuf;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui;

use super::bench::{BenchJob, fmt_ms};
use super::calibrate::CalibMode;
use super::entities::EntityTree;
use super::export::DialogError;
use super::playback::Playback;
use super::player::{FrameProcessor, FrameTiming, Player};
use super::state::{Document, OpenRequest, Persisted, is_session_path};
use super::sync;
use crate::pipeline::{DrawSettings, Pipeline};
use crate::video::source::{FrameSource, OpenOptions, ReadAhead, SourceInfo, SyntheticSource};

/// Generated frames instead of a video (tests, benchmarks, trying the UI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticSpec {
    pub width: usize,
    pub height: usize,
    pub fps: f64,
    pub seconds: f64,
}

impl std::str::FromStr for SyntheticSpec {
    type Err = String;
    /// `WIDTHxHEIGHT@FPS[:SECONDS]`, e.g. `1920x1080@30:60`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("expected WIDTHxHEIGHT@FPS[:SECONDS], got {s:?}");
        let (size, rest) = s.split_once('@').ok_or_else(bad)?;
        let (w, h) = size.split_once('x').ok_or_else(bad)?;
        let (fps, secs) = rest.split_once(':').unwrap_or((rest, "60"));
        let spec = SyntheticSpec {
            width: w.parse().map_err(|_| bad())?,
            height: h.parse().map_err(|_| bad())?,
            fps: fps.parse().map_err(|_| bad())?,
            seconds: secs.parse().map_err(|_| bad())?,
        };
        if !(spec.seconds.is_finite() && spec.seconds > 0.0 && spec.seconds < 1e6) {
            return Err(bad());
        }
        Ok(spec)
    }
}

/// A screenshot to take once the frame at `at` is drawn, then exit.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenshotRequest {
    pub path: PathBuf,
    /// Video time in seconds.
    pub at: f64,
}

/// How the viewer starts.
#[derive(Clone, Debug, Default)]
pub struct ViewerOptions {
    pub open: OpenRequest,
    pub synthetic: Option<SyntheticSpec>,
    /// Start in calibration mode with the points of this CSV.
    pub calib_points: Option<PathBuf>,
    pub screenshot: Option<ScreenshotRequest>,
    /// Play this many seconds, seek at random, print timings and exit.
    pub bench_play: Option<f64>,
    /// Export to this file and measure the window while it runs, then exit.
    pub bench_export: Option<PathBuf>,
}

/// What the UI asks for; applied after the panels are laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Ask for a file with a dialog, then open it.
    OpenDialog(OpenKind),
    Open(OpenRequest),
    /// Open a file whose kind is told by its extension (drops, recent).
    OpenPath(PathBuf),
    Save,
    SaveAs,
    TogglePlay,
    Seek(f64),
    Jump(f64),
    Step(i64),
    /// Jump to the next (`1`) or previous (`-1`) event.
    Event(i32),
    SetSpeed(f64),
    StepSpeed(i32),
    /// Set the loop start (0) or end (1) to now.
    LoopPoint(usize),
    ToggleLoop,
    /// Write the calibration points as CSV (asks where).
    SaveCalibPoints,
    /// Read calibration points from CSV (asks which file).
    LoadCalibPoints,
    /// Put back the calibration the session had before calibration mode.
    RevertCalibration,
    /// Open the export dialog.
    ShowExport,
    /// Choose the export's output file with a dialog.
    BrowseExport,
    StartExport,
    CancelExport,
}

/// Kinds of file the open dialogs ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenKind {
    Session,
    Video,
    Log,
    Calibration,
}

/// The frame on screen.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameMeta {
    pub index: u64,
    pub time: f64,
    pub requested: Option<f64>,
    pub generation: u64,
    pub primitives: usize,
    /// Size of the video frame (image coordinates).
    pub size: [usize; 2],
    /// The texture holds one pixel per `reduction`² frame pixels.
    pub reduction: usize,
}

/// A message for the status bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub text: String,
    pub error: bool,
    pub at: Instant,
}

/// The entities panel's own state.
#[derive(Clone, Debug, Default)]
pub struct EntitiesUi {
    pub search: String,
    /// Primitives per entity at `counts_at` (log time), all filters off.
    pub counts: Vec<usize>,
    pub counts_at: Option<f64>,
    counted: Option<Instant>,
}

/// While playing, counts are refreshed at most this often.
const COUNT_INTERVAL: Duration = Duration::from_millis(200);

impl EntitiesUi {
    /// Recounts primitives at log time `t` when it changed (while playing,
    /// at most every `COUNT_INTERVAL`, to keep the UI thread light).
    pub fn update_counts(&mut self, doc: &Document, t: f64, playing: bool) {
        let stale = self.counts_at != Some(t) || self.counts.len() != doc.log.entities.len();
        let due = !playing || self.counted.is_none_or(|c| c.elapsed() >= COUNT_INTERVAL);
        if stale && due {
            self.counts = sync::counts_at(&doc.log, &doc.index, t, doc.threshold());
            self.counts_at = Some(t);
            self.counted = Some(Instant::now());
        }
    }
}

/// Zoom and pan of the video.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VideoView {
    /// 1 = the whole frame fits the panel.
    pub zoom: f32,
    /// Image point at the centre of the panel (pixels).
    pub center: Option<egui::Pos2>,
}

impl Default for VideoView {
    fn default() -> Self {
        VideoView {
            zoom: 1.0,
            center: None,
        }
    }
}

/// Frame timings gathered for the statistics panel and benchmarks.
#[derive(Clone, Debug, Default)]
pub struct Perf {
    /// Worker time per drawn frame.
    pub worker: Vec<FrameTiming>,
    /// UI frame durations (seconds between repaints while playing).
    pub ui_frames: Vec<f32>,
    /// Time building the UI (layout, not painting) per frame while playing.
    pub ui_build: Vec<Duration>,
    /// Seeks: wall time from request to the frame being on screen.
    pub seeks: Vec<Duration>,
    seek_started: Option<(f64, Instant)>,
}

const PERF_KEEP: usize = 5000;

fn push_capped<T>(v: &mut Vec<T>, x: T) {
    if v.len() >= PERF_KEEP {
        v.remove(0);
    }
    v.push(x);
}

/// Makes the processor that draws frames for a document.
pub type ProcessorFactory = fn(&Document) -> Box<dyn FrameProcessor>;

/// The shared pipeline, drawing the document's log (the player configures
/// it, and reports what cannot be applied).
fn pipeline_processor(doc: &Document) -> Box<dyn FrameProcessor> {
    Box::new(Pipeline::unconfigured(
        Arc::clone(&doc.log),
        Arc::clone(&doc.index),
    ))
}

/// State of a `--screenshot` run.
struct ScreenshotJob {
    req: ScreenshotRequest,
    started: Instant,
    /// Frames painted since the wanted frame is on screen.
    painted: u32,
    requested: bool,
    result: Arc<Mutex<Option<Result<(), String>>>>,
}

/// How long a screenshot run waits for its frame.
const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(120);

/// The viewer application.
pub struct ViewerApp {
    pub persisted: Persisted,
    pub doc: Option<Document>,
    pub player: Option<Player>,
    pub playback: Playback,
    pub frame: Option<FrameMeta>,
    pub texture: Option<egui::TextureHandle>,
    pub video_view: VideoView,
    /// Physical pixels the frame covers on screen (sent to the player).
    pub display_size: Option<[usize; 2]>,
    pub entities: EntitiesUi,
    pub calib: CalibMode,
    /// The session's calibration before calibration mode changed it
    /// (for undo); `Some(None)` when it had none.
    pub calib_backup: Option<Option<crate::calib::Calibration>>,
    pub export: super::export::ExportDialog,
    pub commands: Vec<Command>,
    pub messages: Vec<Message>,
    pub perf: Perf,
    pub synthetic: Option<SyntheticSpec>,
    processor: ProcessorFactory,
    sent_settings: Option<DrawSettings>,
    last_tick: Option<Instant>,
    screenshot: Option<ScreenshotJob>,
    bench: Option<BenchJob>,
    export_bench: Option<ExportBench>,
    ctx: egui::Context,
}

/// A `--bench-export` run: the window's frame intervals while exporting.
struct ExportBench {
    output: PathBuf,
    started: Option<Instant>,
    ui_frames: Vec<f64>,
    last: Option<Instant>,
}

impl ViewerApp {
    /// A viewer with nothing open.
    pub fn new(ctx: egui::Context, persisted: Persisted) -> Self {
        ViewerApp {
            persisted,
            doc: None,
            player: None,
            playback: Playback::new(0.0, 0.0),
            frame: None,
            texture: None,
            video_view: VideoView::default(),
            display_size: None,
            entities: EntitiesUi::default(),
            calib: CalibMode::default(),
            calib_backup: None,
            export: Default::default(),
            commands: Vec::new(),
            messages: Vec::new(),
            perf: Perf::default(),
            synthetic: None,
            processor: pipeline_processor,
            sent_settings: None,
            last_tick: None,
            screenshot: None,
            bench: None,
            export_bench: None,
            ctx,
        }
    }

    /// Uses `f` to make the frame processor of every document opened.
    pub fn with_processor(mut self, f: ProcessorFactory) -> Self {
        self.processor = f;
        self
    }

    /// Starts from `opts`: opens what it names, arms a screenshot.
    pub fn start(&mut self, opts: &ViewerOptions, result: Arc<Mutex<Option<Result<(), String>>>>) {
        self.synthetic = opts.synthetic;
        if (opts.open.input.is_some() || opts.synthetic.is_some())
            && let Err(e) = self.open(&opts.open)
        {
            if opts.screenshot.is_some() {
                *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(format!("{e:#}")));
                self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            self.error(format!("{e:#}"));
        }
        if let Some(p) = &opts.calib_points {
            match self.load_calib_points(p) {
                Ok(()) => {}
                Err(e) => {
                    if opts.screenshot.is_some() {
                        *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(format!("{e:#}")));
                        self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                    self.error(format!("{e:#}"));
                }
            }
        }
        if let Some(out) = &opts.bench_export {
            self.export_bench = Some(ExportBench {
                output: out.clone(),
                started: None,
                ui_frames: Vec::new(),
                last: None,
            });
        }
        if let Some(secs) = opts.bench_play {
            self.bench = Some(BenchJob::new(secs));
        }
        if let Some(req) = &opts.screenshot {
            // A moment outside the video is refused, not silently replaced
            // by its first or last frame.
            if let Some(info) = self.player.as_ref().map(Player::info)
                && info.duration.is_finite()
                && info.duration > 0.0
                && !(info.start..=info.start + info.duration).contains(&req.at)
            {
                *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(format!(
                    "--at {} s is outside the video, which runs from {:.3} s to {:.3} s",
                    req.at,
                    info.start,
                    info.start + info.duration
                )));
                self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                return;
            }
            self.playback.seek(req.at);
            self.request_frame();
            self.screenshot = Some(ScreenshotJob {
                req: req.clone(),
                started: Instant::now(),
                painted: 0,
                requested: false,
                result,
            });
        }
    }

    /// Whether this run only takes a screenshot (or measures).
    pub fn is_screenshot_run(&self) -> bool {
        self.screenshot.is_some() || self.bench.is_some() || self.export_bench.is_some()
    }

    pub fn info(&self) -> Option<&SourceInfo> {
        self.player.as_ref().map(Player::info)
    }

    pub fn status(&mut self, text: impl Into<String>) {
        self.messages.push(Message {
            text: text.into(),
            error: false,
            at: Instant::now(),
        });
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.messages.push(Message {
            text: text.into(),
            error: true,
            at: Instant::now(),
        });
    }

    /// Opens a session or a video (plus log) as the current document.
    pub fn open(&mut self, req: &OpenRequest) -> anyhow::Result<()> {
        let mut req = req.clone();
        if req.input.is_none() && self.synthetic.is_some() {
            req.input = Some(PathBuf::from("synthetic.mp4"));
        }
        let doc = Document::open(&req)?;
        let source = self.make_source(&doc)?;
        self.set_document(doc, source)?;
        if let Some(p) = &req.input
            && self.synthetic.is_none()
        {
            self.persisted.add_recent(p);
        }
        Ok(())
    }

    /// The frames of `doc`'s video (or generated ones), decoded ahead on
    /// their own thread.
    fn make_source(&self, doc: &Document) -> anyhow::Result<Box<dyn FrameSource>> {
        let inner: Box<dyn FrameSource> = match self.synthetic {
            Some(s) => Box::new(SyntheticSource::new(
                s.width,
                s.height,
                s.fps,
                (s.seconds * s.fps).round().max(1.0) as u64,
            )?),
            None => {
                // Decode errors reach the status bar; FFmpeg's own log
                // (concealed errors after a seek, …) would only clutter
                // the terminal.
                crate::video::set_ffmpeg_quiet(true);
                crate::video::source::open(&doc.session.video, &OpenOptions::default())?
            }
        };
        Ok(Box::new(ReadAhead::new(inner)?))
    }

    /// Shows `doc`, playing frames from `source`.
    pub fn set_document(&mut self, mut doc: Document, source: Box<dyn FrameSource>) -> anyhow::Result<()> {
        let view = super::state::SessionView::from_session(&doc.session);
        if let Some(v) = &view {
            self.persisted.layout = v.layout.clone();
        }
        doc.clocks = source.info().clocks.clone();
        // The calibration points are the session's own: a session without
        // any starts with none.
        let v = view.unwrap_or_default();
        self.calib
            .restore(&v.calib_points, v.calib_model, v.calib_preset.as_deref());
        let settings = doc.draw_settings();
        let processor = (self.processor)(&doc);
        let ctx = self.ctx.clone();
        let player = Player::spawn(source, processor, settings.clone(), move || ctx.request_repaint())?;
        let info = player.info().clone();
        self.player = Some(player);
        self.sent_settings = Some(settings);
        self.playback = Playback::new(info.start, info.end());
        self.frame = None;
        self.display_size = None;
        self.video_view = VideoView::default();
        self.entities = EntitiesUi::default();
        self.calib_backup = None;
        self.doc = Some(doc);
        self.request_frame();
        Ok(())
    }

    /// The log time of the current video time.
    pub fn log_time(&self) -> Option<f64> {
        self.doc
            .as_ref()
            .map(|d| d.time_map().log_time_at(self.playback.time))
    }

    fn request_frame(&mut self) {
        if let Some(p) = &self.player {
            p.discard_upcoming();
            p.show(self.playback.time, self.playback.playing);
            if !self.playback.playing {
                self.perf.seek_started = Some((self.playback.time, Instant::now()));
            }
        }
    }

    /// Work done every frame, shown or not: frames in, clock forward,
    /// settings out.
    pub fn logic(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        let dt = self.last_tick.map_or(0.0, |t| (now - t).as_secs_f64());
        self.last_tick = Some(now);
        if self.playback.playing {
            push_capped(&mut self.perf.ui_frames, dt as f32);
            // The clock first, so the frame due now can be shown now.
            self.playback.advance(dt);
        }
        // Frames and errors from the worker.
        let mut errors = Vec::new();
        let mut incoming = Vec::new();
        if let Some(p) = &self.player {
            if self.playback.playing
                && let Some(up) = p.take_upcoming(self.playback.time)
            {
                incoming.push((up, false));
            }
            if let Some(shown) = p.take_frame() {
                let step = shown.requested.is_none();
                incoming.push((shown, step));
            }
            errors = p.take_errors();
            for t in p.take_timings() {
                push_capped(&mut self.perf.worker, t);
            }
        }
        for (shown, step) in incoming {
            self.install_frame(ctx, shown, step);
        }
        for e in errors {
            let e = crate::error::chain(&e);
            // A screenshot run cannot get its frame once decoding failed:
            // say why now rather than after the timeout.
            if let Some(job) = &mut self.screenshot
                && !job.requested
            {
                *job.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(e.clone()));
                job.requested = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            self.error(e);
        }
        if self.playback.playing
            && let Some(p) = &self.player
        {
            p.show(self.playback.time, true);
            // Wake up when the next frame is due (the frame drawn ahead, or
            // one frame after the current one); poll while it is late.
            let frame_dur = p.info().frame_duration();
            let due = p
                .upcoming_time()
                .or_else(|| self.frame.as_ref().map(|f| f.time + frame_dur))
                .unwrap_or(self.playback.time);
            let wait = (due - self.playback.time) / self.playback.speed.max(0.01);
            let wait = if wait > 0.0 { wait.min(0.1) } else { 0.01 };
            ctx.request_repaint_after(Duration::from_secs_f64(wait));
        }
        // Calibration mode: a new fit goes straight into the session.
        if self.calib.active
            && let Some(doc) = &mut self.doc
        {
            let size = self
                .player
                .as_ref()
                .map(|p| [p.info().width as u32, p.info().height as u32]);
            if let Some(c) = self.calib.refit(size) {
                if self.calib_backup.is_none() {
                    self.calib_backup = Some(doc.calibration.clone());
                }
                doc.set_calibration(Some(c));
            }
        }
        // Settings.
        if let (Some(doc), Some(p)) = (&self.doc, &mut self.player) {
            let s = doc.draw_settings();
            if self.sent_settings.as_ref() != Some(&s) {
                p.configure(s.clone());
                self.sent_settings = Some(s);
            }
        }
        self.messages
            .retain(|m| m.at.elapsed() < Duration::from_secs(if m.error { 20 } else { 6 }));
        // A running export.
        if let Some(r) = &mut self.export.running {
            ctx.request_repaint_after(Duration::from_millis(100));
            if let Some(res) = r.poll() {
                let output = r.output.clone();
                self.export.running = None;
                match &res {
                    Ok(report) => self.status(super::export::summary(report, &output)),
                    Err(e) => self.error(format!("export: {}", crate::error::chain(e))),
                }
                self.export.last = Some(res);
            }
        }
        self.screenshot_logic(ctx);
        self.bench_logic(ctx);
        self.export_bench_logic(ctx);
    }

    fn export_bench_logic(&mut self, ctx: &egui::Context) {
        let current = self.frame_is_current();
        let Some(b) = &mut self.export_bench else {
            return;
        };
        // Repaint continuously, like a window being used.
        ctx.request_repaint();
        let now = Instant::now();
        let Some(started) = b.started else {
            if current {
                b.started = Some(now);
                self.export.options.output = b.output.clone();
                if let Err(e) = self.start_export() {
                    println!("export bench: cannot export: {}", crate::error::chain(&e));
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            return;
        };
        if let Some(l) = b.last {
            b.ui_frames.push((now - l).as_secs_f64() * 1e3);
        }
        b.last = Some(now);
        if self.export.running.is_some() {
            return;
        }
        let took = started.elapsed().as_secs_f64();
        let result = match &self.export.last {
            Some(Ok(report)) => super::export::summary(report, &b.output),
            Some(Err(e)) => format!("failed: {}", crate::error::chain(e)),
            None => "no result".into(),
        };
        println!(
            "export bench: {result}\nexport wall time in the viewer: {took:.1} s\n\
             window frame interval during the export ({} frames): {}",
            b.ui_frames.len(),
            fmt_ms(super::bench::spread(&mut b.ui_frames)),
        );
        self.export_bench = None;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    fn bench_logic(&mut self, ctx: &egui::Context) {
        let current = self.frame_is_current();
        let Some(b) = &mut self.bench else {
            return;
        };
        if b.done || self.player.is_none() {
            return;
        }
        ctx.request_repaint();
        let Some(started) = b.started else {
            // Start once the first frame is on screen.
            if current {
                b.started = Some(Instant::now());
                b.start_time = self.playback.time;
                self.perf = Perf::default();
                self.playback.playing = true;
                self.playback.speed = 1.0;
            }
            return;
        };
        if self.playback.playing {
            if let Some(f) = &self.frame {
                b.shown.insert(f.time.to_bits());
            }
            if started.elapsed() < b.play && self.playback.time < self.playback.end() {
                return;
            }
            self.playback.playing = false;
            b.play = started.elapsed();
            b.played_samples = Some((
                self.perf.worker.len(),
                self.perf.ui_frames.len(),
                self.perf.ui_build.len(),
            ));
        }
        // Random seeks, one at a time, each waiting for its frame.
        if b.seek_target.is_some() && !current {
            return;
        }
        if b.seeks_left > 0 {
            b.seeks_left -= 1;
            let t = b.random_time(self.playback.start(), self.playback.end());
            b.seek_target = Some(t);
            self.playback.seek(t);
            self.request_frame();
            return;
        }
        b.done = true;
        let report = self.bench_report();
        println!("{report}");
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    /// The measurements of a `--bench-play` run, as text.
    pub fn bench_report(&self) -> String {
        let Some(b) = &self.bench else {
            return String::new();
        };
        let info = self.info().cloned();
        let fps = info.as_ref().map_or(0.0, |i| i.fps);
        let (w, h) = info.as_ref().map_or((0, 0), |i| (i.width, i.height));
        let played = b.play.as_secs_f64();
        let expected = (played * fps).floor();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        // Frames played, not the seeks after them.
        let (n_worker, n_ui, n_build) = b.played_samples.unwrap_or((usize::MAX, usize::MAX, usize::MAX));
        let mut ui: Vec<f64> = self
            .perf
            .ui_frames
            .iter()
            .take(n_ui)
            .map(|&s| s as f64 * 1e3)
            .collect();
        let mut build: Vec<f64> = self.perf.ui_build.iter().take(n_build).map(|&d| ms(d)).collect();
        let pick = |f: &dyn Fn(&FrameTiming) -> Duration| -> Vec<f64> {
            self.perf.worker.iter().take(n_worker).map(|t| ms(f(t))).collect()
        };
        let mut total = pick(&|t| t.total());
        let mut decode = pick(&|t| t.decode);
        let mut process = pick(&|t| t.process);
        let mut mask = pick(&|t| t.mask);
        let mut convert = pick(&|t| t.convert);
        let mut seeks: Vec<f64> = self.perf.seeks.iter().map(|&d| ms(d)).collect();
        format!(
            "viewer bench: {w}×{h} at {fps:.2} fps, played {played:.2} s at 1×\n\
             frames on screen: {} of {expected} ({:.1}%)\n\
             UI frame interval while playing: {}\n\
             \x20 of which building the UI: {}\n\
             worker per frame played: {}\n\
             \x20 decode wait: {}\n\
             \x20 pipeline: {}\n\
             \x20   of which mask: {}\n\
             \x20 texture conversion: {}\n\
             seek to a random time (request → on screen, {} seeks): {}",
            b.shown.len(),
            100.0 * b.shown.len() as f64 / expected.max(1.0),
            fmt_ms(super::bench::spread(&mut ui)),
            fmt_ms(super::bench::spread(&mut build)),
            fmt_ms(super::bench::spread(&mut total)),
            fmt_ms(super::bench::spread(&mut decode)),
            fmt_ms(super::bench::spread(&mut process)),
            fmt_ms(super::bench::spread(&mut mask)),
            fmt_ms(super::bench::spread(&mut convert)),
            seeks.len(),
            fmt_ms(super::bench::spread(&mut seeks)),
        )
    }

    /// Puts a finished frame on screen (`step`: it answers a frame step,
    /// so the clock moves to it).
    fn install_frame(&mut self, ctx: &egui::Context, shown: super::player::Shown, step: bool) {
        let gen_now = self.player.as_ref().map_or(0, Player::generation);
        if self.playback.playing
            && !step
            && let Some(f) = &self.frame
            && shown.time < f.time
            && shown.generation == f.generation
            && shown.time <= self.playback.time
            && f.time <= self.playback.time
        {
            // An answer to an older request, behind the frame drawn ahead
            // that is already on screen: keep the newer one.
            return;
        }
        let same_picture = self.frame.as_ref().is_some_and(|f| {
            (f.time, f.generation, f.reduction) == (shown.time, shown.generation, shown.reduction)
        });
        match &mut self.texture {
            Some(_) if same_picture => {}
            Some(t) => t.set(Arc::clone(&shown.image), egui::TextureOptions::LINEAR),
            None => {
                self.texture =
                    Some(ctx.load_texture("video", Arc::clone(&shown.image), egui::TextureOptions::LINEAR))
            }
        }
        if step {
            // A frame step: the clock follows the frame.
            self.playback.time = shown.time;
        }
        if let Some((t, started)) = self.perf.seek_started
            && shown.requested == Some(t)
            && shown.generation == gen_now
        {
            push_capped(&mut self.perf.seeks, started.elapsed());
            self.perf.seek_started = None;
        }
        self.frame = Some(FrameMeta {
            index: shown.index,
            time: shown.time,
            // None for a step or a frame drawn ahead.
            requested: shown.requested,
            generation: shown.generation,
            primitives: shown.stats.primitives,
            size: shown.size,
            reduction: shown.reduction,
        });
    }

    /// Whether the frame on screen is the one for the current time, drawn
    /// with the current settings.
    pub fn frame_is_current(&self) -> bool {
        match (&self.frame, &self.player) {
            (Some(f), Some(p)) => f.generation == p.generation() && f.requested == Some(self.playback.time),
            _ => false,
        }
    }

    fn screenshot_logic(&mut self, ctx: &egui::Context) {
        let current = self.frame_is_current();
        let Some(job) = &mut self.screenshot else {
            return;
        };
        if job.requested {
            return;
        }
        if job.started.elapsed() > SCREENSHOT_TIMEOUT {
            *job.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(format!(
                "timed out after {} s waiting for the frame at {} s",
                SCREENSHOT_TIMEOUT.as_secs(),
                job.req.at
            )));
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            job.requested = true;
            return;
        }
        if !current {
            job.painted = 0;
            ctx.request_repaint_after(Duration::from_millis(10));
            return;
        }
        // Let the texture be painted (twice, for layouts that settle).
        job.painted += 1;
        if job.painted < 3 {
            ctx.request_repaint();
            return;
        }
        job.requested = true;
        let path = job.req.path.clone();
        let result = Arc::clone(&job.result);
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img| {
            let r = save_color_image(&path, &img);
            *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
            ctx2.request_repaint();
        });
        ctx.request_repaint();
    }

    /// Applies the commands the panels recorded.
    pub fn run_commands(&mut self) {
        for cmd in std::mem::take(&mut self.commands) {
            self.run_command(cmd);
        }
    }

    pub fn run_command(&mut self, cmd: Command) {
        match cmd {
            Command::OpenDialog(kind) => self.open_dialog(kind),
            Command::Open(req) => {
                if let Err(e) = self.open(&req) {
                    self.error(format!("{e:#}"));
                }
            }
            Command::OpenPath(p) => self.open_path(p),
            Command::Save => match self.doc.as_ref().and_then(|d| d.session_path.clone()) {
                Some(p) => self.save_to(p),
                None => self.run_command(Command::SaveAs),
            },
            Command::SaveAs => {
                if let Some(p) = rfd::FileDialog::new()
                    .add_filter("session", &["toml"])
                    .set_file_name("session.toml")
                    .save_file()
                {
                    self.save_to(p);
                }
            }
            Command::TogglePlay => {
                self.playback.toggle_play();
                self.request_frame();
            }
            Command::Seek(t) => {
                self.playback.seek(t);
                self.request_frame();
            }
            Command::Jump(dt) => {
                self.playback.jump(dt);
                self.request_frame();
            }
            Command::Step(n) => {
                self.playback.playing = false;
                if let Some(p) = &self.player {
                    p.step(n);
                }
            }
            Command::Event(dir) => {
                let (Some(doc), Some(lt)) = (&self.doc, self.log_time()) else {
                    return;
                };
                let e = if dir > 0 {
                    doc.events.next_after(lt)
                } else {
                    doc.events.prev_before(lt)
                };
                match e.map(|e| doc.time_map().video_time(e.time)) {
                    Some(t) => {
                        self.playback.seek(t);
                        self.request_frame();
                    }
                    None => self.status("no more events in that direction"),
                }
            }
            Command::SetSpeed(s) => self.playback.set_speed(s),
            Command::StepSpeed(d) => self.playback.step_speed(d),
            Command::LoopPoint(w) => self.playback.set_loop_point(w),
            Command::SaveCalibPoints => {
                if let Some(p) = rfd::FileDialog::new()
                    .add_filter("points", &["csv"])
                    .set_file_name("points.csv")
                    .save_file()
                {
                    match crate::session::write_atomic(&p, self.calib.points.to_csv().as_bytes()) {
                        Ok(()) => self.status(format!("saved {}", p.display())),
                        Err(e) => self.error(format!("{}: {e}", p.display())),
                    }
                }
            }
            Command::LoadCalibPoints => {
                if let Some(p) = rfd::FileDialog::new().add_filter("points", &["csv"]).pick_file()
                    && let Err(e) = self.load_calib_points(&p)
                {
                    self.error(format!("{e:#}"));
                }
            }
            Command::RevertCalibration => {
                if let (Some(doc), Some(before)) = (&mut self.doc, self.calib_backup.take()) {
                    doc.set_calibration(before);
                }
            }
            Command::ShowExport => self.show_export(),
            Command::BrowseExport => {
                let d = rfd::FileDialog::new().add_filter("video", &["mp4", "mkv", "mov"]);
                let d = match self.export.options.output.file_name() {
                    Some(n) => d.set_file_name(n.to_string_lossy()),
                    None => d,
                };
                if let Some(p) = d.save_file() {
                    self.export.output_text = p.display().to_string();
                }
            }
            Command::StartExport => {
                if let Err(e) = self.start_export() {
                    self.export.last = Some(Err(e));
                }
            }
            Command::CancelExport => {
                if let Some(r) = &self.export.running {
                    r.cancel();
                }
            }
            Command::ToggleLoop => {
                if self.playback.loop_range.is_some() {
                    self.playback.looping = !self.playback.looping;
                }
            }
        }
    }

    /// Opens the export dialog with defaults taken from what is shown.
    fn show_export(&mut self) {
        let Some(doc) = &self.doc else {
            return;
        };
        let d = &mut self.export;
        d.open = true;
        if d.running.is_some() {
            return;
        }
        if d.output_text.is_empty() {
            let v = &doc.session.video;
            let stem = v
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            d.output_text = v
                .with_file_name(format!("{stem}-annotated.mp4"))
                .display()
                .to_string();
        }
        d.options.no_mask = !doc.session.draw.floor_mask;
        if let Some((a, b)) = self.playback.active_loop() {
            d.options.from = Some(a);
            d.options.to = Some(b);
        }
        d.last = None;
    }

    /// Starts the export the dialog describes on a background thread: the
    /// plan `underlay export` makes of the session as shown.
    fn start_export(&mut self) -> Result<(), DialogError> {
        if self.export.running.is_some() {
            return Err(DialogError::Running);
        }
        if self.synthetic.is_some() {
            return Err(DialogError::Synthetic);
        }
        let doc = self.doc.as_ref().ok_or(DialogError::NothingOpen)?;
        let options = self.export.options.clone();
        let plan = doc.export_plan(&options)?;
        let f: super::export::ExportFn =
            Box::new(move |progress, cancel| plan.run(cancel, Some(Arc::clone(progress))));
        self.export.running = Some(super::export::Running::start(options.output.clone(), f)?);
        self.export.last = None;
        Ok(())
    }

    /// Reads calibration points from a `u,v,x,y` CSV and turns calibration
    /// mode on.
    pub fn load_calib_points(&mut self, p: &std::path::Path) -> anyhow::Result<()> {
        let text = crate::files::read_text_limited(p, crate::cli::calib::MAX_CSV_BYTES)
            .map_err(|e| anyhow::anyhow!("{}: cannot read the points file: {e}", p.display()))?;
        let pts = super::calibrate::CalibPoints::from_csv(&text, p)?;
        let rev = self.calib.points.revision + 1;
        self.calib.points = pts;
        self.calib.points.revision = rev;
        self.calib.active = true;
        Ok(())
    }

    fn save_to(&mut self, p: PathBuf) {
        let Some(doc) = &mut self.doc else {
            return;
        };
        let view = super::state::SessionView {
            layout: self.persisted.layout.clone(),
            calib_points: self.calib.saved_points(),
            calib_model: (!self.calib.points.points.is_empty()).then_some(self.calib.model),
            calib_preset: self.calib.preset.map(str::to_owned),
        };
        view.store(&mut doc.session);
        match doc.save(&p) {
            Ok(()) => {
                self.persisted.add_recent(&p);
                self.status(format!("saved {}", p.display()));
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    /// Opens a file by its kind: session, calibration, log or video.
    pub fn open_path(&mut self, p: PathBuf) {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let result = if is_session_path(&p) {
            // A .toml is a session unless it reads as a calibration.
            if self.doc.is_some() && super::state::load_calibration(&p).is_ok() {
                self.set_calibration_file(p)
            } else {
                self.open(&OpenRequest {
                    input: Some(p),
                    ..Default::default()
                })
            }
        } else if VIDEO_EXTENSIONS.contains(&ext.as_str()) {
            let logs = self
                .doc
                .as_ref()
                .filter(|d| d.has_log)
                .map(|d| d.session.logs.clone())
                .unwrap_or_default();
            self.open(&OpenRequest {
                input: Some(p),
                logs,
                ..Default::default()
            })
        } else {
            self.set_log_file(p)
        };
        if let Err(e) = result {
            self.error(format!("{e:#}"));
        }
    }

    fn set_log_file(&mut self, p: PathBuf) -> anyhow::Result<()> {
        let Some(doc) = &mut self.doc else {
            anyhow::bail!("open a video or a session before a log");
        };
        let log = super::state::load_logs(std::slice::from_ref(&p))?;
        let first = !doc.has_log;
        doc.set_log(log, p);
        if first {
            doc.session.offset = sync::default_offset(&doc.log, self.playback.start());
        }
        self.entities = EntitiesUi::default();
        // The processor holds the log: start a new one.
        self.restart_player()
    }

    fn set_calibration_file(&mut self, p: PathBuf) -> anyhow::Result<()> {
        let Some(doc) = &mut self.doc else {
            anyhow::bail!("open a video or a session before a calibration");
        };
        doc.session.calibration = Some(crate::session::CalibrationSource::File { file: p });
        doc.reload_calibration()
    }

    /// Restarts the player on the same video (after the log changed).
    fn restart_player(&mut self) -> anyhow::Result<()> {
        let Some(doc) = self.doc.take() else {
            return Ok(());
        };
        let source = self.make_source(&doc)?;
        let t = self.playback.time;
        self.set_document(doc, source)?;
        self.playback.seek(t);
        self.request_frame();
        Ok(())
    }

    fn open_dialog(&mut self, kind: OpenKind) {
        let d = rfd::FileDialog::new();
        let d = match kind {
            OpenKind::Session => d.add_filter("session", &["toml"]),
            OpenKind::Video => d.add_filter("video", VIDEO_EXTENSIONS),
            OpenKind::Log => d,
            OpenKind::Calibration => d.add_filter("calibration", &["toml"]),
        };
        let Some(p) = d.pick_file() else {
            return;
        };
        let r = match kind {
            OpenKind::Session => self.open(&OpenRequest {
                input: Some(p),
                ..Default::default()
            }),
            OpenKind::Video => {
                self.open_path(p);
                Ok(())
            }
            OpenKind::Log => self.set_log_file(p),
            OpenKind::Calibration => self.set_calibration_file(p),
        };
        if let Err(e) = r {
            self.error(format!("{e:#}"));
        }
    }

    /// Rebuilds the entity tree (after the log changed in place).
    pub fn rebuild_tree(&mut self) {
        if let Some(doc) = &mut self.doc {
            doc.tree = EntityTree::build(&doc.log);
        }
    }
}

/// File extensions opened as video.
pub const VIDEO_EXTENSIONS: &[&str] = &["mp4", "mkv", "avi", "mov", "webm", "m4v", "mpg", "mpeg", "ts"];

/// Saves a screenshot (RGBA, alpha dropped) as PNG.
fn save_color_image(path: &std::path::Path, img: &egui::ColorImage) -> Result<(), String> {
    let [w, h] = img.size;
    let mut rgb = crate::image::RgbImage::zeros((h, w, 3));
    for (i, c) in img.pixels.iter().enumerate() {
        let (y, x) = (i / w, i % w);
        rgb[[y, x, 0]] = c.r();
        rgb[[y, x, 1]] = c.g();
        rgb[[y, x, 2]] = c.b();
    }
    crate::image::save_rgb(path, &rgb).map_err(|e| e.to_string())
}

impl eframe::App for ViewerApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        ViewerApp::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let t0 = Instant::now();
        super::ui::show(self, ui);
        self.run_commands();
        if self.playback.playing {
            push_capped(&mut self.perf.ui_build, t0.elapsed());
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if !self.is_screenshot_run() {
            eframe::set_value(storage, eframe::APP_KEY, &self.persisted);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        !self.is_screenshot_run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_spec_parses() {
        let s: SyntheticSpec = "1920x1080@30:5".parse().unwrap();
        assert_eq!((s.width, s.height, s.fps, s.seconds), (1920, 1080, 30.0, 5.0));
        assert_eq!("64x36@25".parse::<SyntheticSpec>().unwrap().seconds, 60.0);
        assert!("64x36".parse::<SyntheticSpec>().is_err());
        assert!("64x36@25:-1".parse::<SyntheticSpec>().is_err());
    }
}

#[cfg(test)]
mod app_tests {
    use egui_kittest::Harness;

    use super::*;

    /// The whole app on generated frames (64×36 at 10 fps, 10 s).
    fn harness() -> Harness<'static, Option<ViewerApp>> {
        Harness::builder().with_size([1000.0, 700.0]).build_ui_state(
            |ui, app: &mut Option<ViewerApp>| {
                let app = app.get_or_insert_with(|| {
                    let mut a = ViewerApp::new(ui.ctx().clone(), Persisted::default());
                    a.start(
                        &ViewerOptions {
                            synthetic: Some("64x36@10:10".parse().unwrap()),
                            ..Default::default()
                        },
                        Arc::new(Mutex::new(None)),
                    );
                    a
                });
                app.logic(ui.ctx());
                super::super::ui::show(app, ui);
                app.run_commands();
            },
            None,
        )
    }

    fn app<'a>(h: &'a Harness<'_, Option<ViewerApp>>) -> &'a ViewerApp {
        h.state().as_ref().unwrap()
    }

    /// Steps the UI until `cond` holds (the player works on its own thread).
    fn until(h: &mut Harness<'_, Option<ViewerApp>>, cond: impl Fn(&ViewerApp) -> bool) {
        for _ in 0..2000 {
            h.step();
            if cond(app(h)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        panic!("condition never held");
    }

    #[test]
    fn keyboard_steps_frames_and_jumps() {
        let mut h = harness();
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 0));
        h.key_press(egui::Key::ArrowRight);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 1));
        assert!((app(&h).playback.time - 0.1).abs() < 1e-9);
        h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::ArrowRight);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 11));
        h.key_press(egui::Key::ArrowUp);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 99));
        h.key_press(egui::Key::Home);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 0));
        h.key_press(egui::Key::CloseBracket);
        h.step();
        assert_eq!(app(&h).playback.speed, 1.5);
    }

    #[derive(Debug)]
    struct Dropped(std::path::PathBuf);

    impl egui::DroppedFile for Dropped {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
        fn bytes(&self) -> Result<Vec<u8>, String> {
            std::fs::read(&self.0).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn dropping_a_log_opens_it_over_the_video() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        assert!(!app(&h).doc.as_ref().unwrap().has_log);
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/ssl.ulog");
        h.input_mut().dropped_files.push(Arc::new(Dropped(log)));
        until(&mut h, |a| {
            a.doc.as_ref().is_some_and(|d| d.has_log) && a.frame.is_some()
        });
        let a = app(&h);
        let doc = a.doc.as_ref().unwrap();
        assert_eq!(
            doc.session.offset, 1_700_000_000.0,
            "the log starts at the video's start"
        );
        assert!(!doc.tree.nodes.is_empty());
        // A file that is not a log is an error message, not a crash.
        let bad = std::env::temp_dir().join(format!("underlay-viewer-test-{}.bin", std::process::id()));
        std::fs::write(&bad, b"not a log").unwrap();
        h.input_mut().dropped_files.push(Arc::new(Dropped(bad.clone())));
        until(&mut h, |a| a.messages.iter().any(|m| m.error));
        let _ = std::fs::remove_file(&bad);
        assert!(
            app(&h)
                .messages
                .iter()
                .any(|m| m.error && m.text.contains("underlay-viewer-test"))
        );
        assert!(app(&h).doc.as_ref().unwrap().has_log, "the open log stays");
    }

    #[test]
    fn every_widget_has_an_accessible_name() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        // `run` checks that every interactive widget can be named.
        h.run_ok();
        h.run();
    }

    #[test]
    fn space_plays_and_pauses() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        h.key_press(egui::Key::Space);
        h.step();
        assert!(app(&h).playback.playing);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index >= 3));
        h.key_press(egui::Key::Space);
        h.step();
        assert!(!app(&h).playback.playing);
    }
}
