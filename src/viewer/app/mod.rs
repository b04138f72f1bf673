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
use super::screen::Picture;
use super::state::{Document, OpenRequest, Persisted, is_session_path};
use super::sync;
use crate::pipeline::{DrawSettings, Pipeline};
use crate::video::source::{FrameSource, ReadAhead, SourceInfo, SyntheticSource};

/// Generated frames instead of a video (tests, benchmarks, trying the UI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticSpec {
    pub width: usize,
    pub height: usize,
    pub fps: f64,
    pub seconds: f64,
}

/// A `--synthetic` spec that does not read.
#[derive(Debug, thiserror::Error)]
#[error("expected WIDTHxHEIGHT@FPS[:SECONDS], got {0:?}")]
pub struct BadSpec(String);

impl std::str::FromStr for SyntheticSpec {
    type Err = BadSpec;
    /// `WIDTHxHEIGHT@FPS[:SECONDS]`, e.g. `1920x1080@30:60`.
    fn from_str(s: &str) -> Result<Self, BadSpec> {
        let bad = || BadSpec(s.to_owned());
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
    /// The moment: video seconds, or a match's clock (see [`crate::video::TimeArg`]).
    pub at: crate::video::TimeArg,
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
    /// While benchmarking, repaint continuously rather than when due.
    pub bench_repaint: bool,
    /// Export to this file and measure the window while it runs, then exit.
    pub bench_export: Option<PathBuf>,
    /// The window's inner size (pixels).
    pub size: Option<[usize; 2]>,
    /// How videos go to the screen: planes through a shader, RGB, or
    /// chosen by the renderer.
    pub display: crate::viewer::gpu::Display,
    /// Live mode: a camera drawn as it comes (`underlay live`).
    pub live: Option<Box<super::live::LiveViewOptions>>,
}

/// What the UI asks for; applied after the panels are laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Ask for a file with a dialog, then open it.
    OpenDialog(OpenKind),
    Open(Box<OpenRequest>),
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
    /// Snap the calibration to the chosen field's lines in the frame on
    /// screen.
    SnapToLines,
    /// Take a snapped calibration that was not trusted.
    AcceptSnap,
    /// Open the export dialog.
    ShowExport,
    /// Choose the export's output file with a dialog.
    BrowseExport,
    StartExport,
    CancelExport,
    /// Live mode: follow the camera again after reviewing the buffer.
    BackToLive,
    /// Undo the last edit of the session.
    Undo,
    /// Redo the last edit undone.
    Redo,
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
    /// What makes the frame's floor mask doubtful (shown beside the time).
    pub mask_doubt: Option<crate::mask::MaskDoubt>,
    /// Size of the video frame (image coordinates).
    pub size: [usize; 2],
    /// The texture holds one pixel per `reduction`² frame pixels.
    pub reduction: usize,
    /// The keyframe shown while the frame asked for is decoded.
    pub preview: bool,
    /// The picture is the video's planes, shown by [`super::gpu`] (else
    /// the RGB texture).
    pub planes: bool,
}

/// What a snap to the lines found, and on what picture.
struct SnapOutcome {
    result: Result<(crate::calib::Calibration, crate::calib::refine::RefineReport), String>,
    on: String,
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
    pub counts_at: Option<crate::time::LogTime>,
    counted: Option<Instant>,
}

/// While playing, counts are refreshed at most this often.
const COUNT_INTERVAL: Duration = Duration::from_millis(200);

impl EntitiesUi {
    /// Recounts primitives at log time `t` when it changed (while playing,
    /// at most every `COUNT_INTERVAL`, to keep the UI thread light).
    pub fn update_counts(&mut self, doc: &Document, t: crate::time::LogTime, playing: bool) {
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
    /// Seeks: wall time from request to a first picture on screen (the
    /// keyframe before a far target, or the frame itself).
    pub seeks_first: Vec<Duration>,
    /// Frames put on screen as the video's planes and as RGB pictures.
    pub pictures: [usize; 2],
    seek_started: Option<(f64, Instant)>,
    /// A first picture of the current seek is on screen.
    seek_first_seen: bool,
}

const PERF_KEEP: usize = 5000;

impl Perf {
    /// Records the time one frame's panels took to build.
    pub fn push_ui_build(&mut self, took: Duration) {
        push_capped(&mut self.ui_build, took);
    }
}

fn push_capped<T>(v: &mut Vec<T>, x: T) {
    if v.len() >= PERF_KEEP {
        v.remove(0);
    }
    v.push(x);
}

/// Makes the processor that draws frames for a document.
pub type ProcessorFactory = fn(&Document) -> Box<dyn FrameProcessor>;

/// The shared pipeline, drawing the document's log (the player configures
/// it, and reports what cannot be applied). It masks beside the drawing
/// on a second thread: the viewer works one frame at a time.
fn pipeline_processor(doc: &Document) -> Box<dyn FrameProcessor> {
    Box::new(Pipeline::unconfigured(Arc::clone(&doc.log), Arc::clone(&doc.index)).with_parallel_mask(true))
}

/// The viewer application.
pub struct ViewerApp {
    pub persisted: Persisted,
    pub doc: Option<Document>,
    pub player: Option<Player>,
    pub playback: Playback,
    pub frame: Option<FrameMeta>,
    pub texture: Option<egui::TextureHandle>,
    /// The video's planes on the GPU, when the window paints with OpenGL
    /// (`None`: every picture is an RGB texture).
    pub planes: Option<super::gpu::PlaneView>,
    pub video_view: VideoView,
    /// Physical pixels the frame covers on screen (sent to the player).
    pub display_size: Option<[usize; 2]>,
    pub entities: EntitiesUi,
    pub calib: CalibMode,
    /// The session's calibration before calibration mode changed it
    /// (for undo); `Some(None)` when it had none.
    pub calib_backup: Option<Option<crate::calib::Calibration>>,
    /// A running "Snap to lines": its result, and on what picture.
    snap_job: Option<crossbeam_channel::Receiver<SnapOutcome>>,
    pub export: super::export::ExportDialog,
    /// The time-sync panel's "Find offset".
    pub finder: super::find_offset::Finder,
    /// The mask section's preview and floor colour pick.
    pub mask_tuning: super::mask_tuning::MaskTuning,
    /// Undo and redo of the session's edits.
    pub history: super::history::History,
    /// What waits for an answer about unsaved changes.
    pub confirm: Option<Pending>,
    /// The primitive clicked on (its position in the log), shown until
    /// closed.
    pub pinned: Option<usize>,
    /// The primitive under the pointer in the last frame.
    pub hovered: Option<usize>,
    /// The unsaved changes may be dropped by the next open or close.
    discard_ok: bool,
    pub commands: Vec<Command>,
    pub messages: Vec<Message>,
    pub perf: Perf,
    pub synthetic: Option<SyntheticSpec>,
    /// Live mode's run, buffer and status.
    pub live: Option<super::live::LiveView>,
    /// Live mode: a picture of the buffer, as decoded, for a snap waiting.
    live_decoded: Option<super::player::Patch>,
    /// Live mode: where a screenshot's result goes once the run ended.
    live_shot: Option<screenshot::ShotSlot>,
    processor: ProcessorFactory,
    sent_settings: Option<DrawSettings>,
    last_tick: Option<Instant>,
    screenshot: Option<ScreenshotJob>,
    bench: Option<BenchJob>,
    export_bench: Option<ExportBench>,
    ctx: egui::Context,
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
            planes: None,
            video_view: VideoView::default(),
            display_size: None,
            entities: EntitiesUi::default(),
            calib: CalibMode::default(),
            calib_backup: None,
            snap_job: None,
            export: Default::default(),
            finder: Default::default(),
            mask_tuning: Default::default(),
            history: Default::default(),
            confirm: None,
            pinned: None,
            hovered: None,
            discard_ok: false,
            commands: Vec::new(),
            messages: Vec::new(),
            perf: Perf::default(),
            synthetic: None,
            live: None,
            live_decoded: None,
            live_shot: None,
            processor: pipeline_processor,
            sent_settings: None,
            last_tick: None,
            screenshot: None,
            bench: None,
            export_bench: None,
            ctx,
        }
    }

    /// Shows videos from their planes, converted on the GPU by `view`'s
    /// paint callbacks (the window paints with OpenGL).
    pub fn with_planes(mut self, view: super::gpu::PlaneView) -> Self {
        self.planes = Some(view);
        self
    }

    /// Uses `f` to make the frame processor of every document opened.
    pub fn with_processor(mut self, f: ProcessorFactory) -> Self {
        self.processor = f;
        self
    }

    /// Starts from `opts`: opens what it names, arms a screenshot.
    pub fn start(&mut self, opts: &ViewerOptions, result: Arc<Mutex<Option<Result<(), ShotError>>>>) {
        self.synthetic = opts.synthetic;
        if let Some(live) = &opts.live {
            self.start_live(live, result);
            return;
        }
        if (opts.open.input.is_some() || opts.synthetic.is_some())
            && let Err(e) = self.open(&opts.open)
        {
            self.error(format!("{e:#}"));
            if opts.screenshot.is_some() {
                *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(ShotError::Open(e.into())));
                self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        if let Some(p) = &opts.calib_points {
            match self.load_calib_points(p) {
                Ok(()) => {}
                Err(e) => {
                    self.error(format!("{e:#}"));
                    if opts.screenshot.is_some() {
                        *result.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some(Err(ShotError::Open(e.into())));
                        self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    }
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
            self.bench = Some(BenchJob::new(secs, opts.bench_repaint));
            // What the GPU spends, measured by finishing its work around
            // each step: asked for apart, as it stalls the pipeline.
            if let Some(p) = &self.planes
                && std::env::var_os("UNDERLAY_BENCH_GPU").is_some_and(|v| v == "1")
            {
                p.measure();
            }
        }
        if let Some(req) = &opts.screenshot {
            let info = self.player.as_ref().map(|p| p.info().clone());
            // A match's clock (or cycles) to the picture showing it.
            let at = match &info {
                Some(i) => req.at.video_time(i.clocks.as_deref(), i.start, i.clock_step),
                None => req.at.video_time(None, 0.0, None),
            };
            let at = match at {
                Ok(t) => t.secs(),
                Err(e) => {
                    *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(ShotError::Open(e.into())));
                    self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    return;
                }
            };
            // A moment outside the video is refused, not silently replaced
            // by its first or last frame.
            if let Some(info) = &info
                && info.duration.is_finite()
                && info.duration > 0.0
                && !(info.start..=info.start + info.duration).contains(&at)
            {
                *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(ShotError::OutOfRange {
                    at,
                    start: info.start,
                    end: info.start + info.duration,
                }));
                self.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                return;
            }
            self.playback.seek(at);
            self.request_frame();
            self.screenshot = Some(ScreenshotJob {
                at,
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
        self.screenshot.is_some()
            || self.bench.is_some()
            || self.export_bench.is_some()
            || self.live.as_ref().is_some_and(|l| l.screenshot.is_some())
    }

    /// The frames shown: the video's, or in live mode the camera's (while
    /// following) or the buffer's snapshot (while reviewing).
    pub fn info(&self) -> Option<&SourceInfo> {
        match (&self.live, &self.player) {
            (Some(l), p) if l.following || p.is_none() => l.info.as_ref(),
            (_, p) => p.as_ref().map(Player::info),
        }
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
        if self.doc.as_ref().is_some_and(Document::is_dirty) && !std::mem::take(&mut self.discard_ok) {
            self.confirm = Some(Pending::Run(Box::new(Command::Open(Box::new(req.clone())))));
            return Ok(());
        }
        let mut req = req.clone();
        if req.input.is_none() && self.synthetic.is_some() {
            req.input = Some(PathBuf::from("synthetic.mp4"));
        }
        let doc = Document::open(&req)?;
        let source = self.make_source(&doc)?;
        self.set_document(doc, source)?;
        self.history = self
            .snapshot()
            .map(super::history::History::new)
            .unwrap_or_default();
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
                let planes = self.planes.is_some();
                let options = crate::video::source::OpenOptions {
                    // The decoded planes are what is masked and drawn on,
                    // and go to the screen as they are (or, for an RGB
                    // display, converted from them at the screen's size);
                    // full-range ones only where the shader shows them.
                    keep_yuv: true,
                    yuv_full_range: planes,
                    // The viewer seeks anywhere: the keyframes, found once.
                    seek_index: true,
                    ..doc.session.open_options()
                };
                crate::formats::open_source(&doc.session.video, &options)?
            }
        };
        Ok(Box::new(ReadAhead::new(inner)?))
    }

    /// Shows `doc`, playing frames from `source`.
    pub fn set_document(&mut self, mut doc: Document, source: Box<dyn FrameSource>) -> anyhow::Result<()> {
        // A file opened over a live run ends the run (its outputs finished).
        self.live = None;
        self.live_decoded = None;
        let view = super::state::SessionView::from_session(&doc.session);
        if let Some(v) = &view {
            self.persisted.layout = v.layout.clone();
        }
        doc.clocks = source.info().clocks.clone();
        doc.source_calibration = source.info().calibration.clone();
        // The calibration points are the session's own: a session without
        // any starts with none.
        let v = view.unwrap_or_default();
        self.calib
            .restore(&v.calib_points, v.calib_model, v.calib_preset.as_deref());
        self.mask_tuning.forget_pick();
        let settings = self.mask_tuning.shown(doc.draw_settings());
        let processor = (self.processor)(&doc);
        let ctx = self.ctx.clone();
        let player = Player::spawn(source, processor, settings.clone(), move || ctx.request_repaint())?;
        player.set_planes(self.planes.is_some());
        let info = player.info().clone();
        self.player = Some(player);
        self.sent_settings = Some(settings);
        self.playback = Playback::new(info.start, info.end());
        self.frame = None;
        self.display_size = None;
        self.video_view = VideoView::default();
        self.entities = EntitiesUi::default();
        self.calib_backup = None;
        self.finder = Default::default();
        self.pinned = None;
        if let Some(n) = &doc.unit_note {
            self.status(format!("note: {n}"));
        }
        self.doc = Some(doc);
        self.request_frame();
        Ok(())
    }

    /// The log time of the current video time.
    pub fn log_time(&self) -> Option<crate::time::LogTime> {
        self.doc.as_ref().map(|d| {
            d.time_map()
                .log_time_at(crate::time::VideoTime(self.playback.time))
        })
    }

    fn request_frame(&mut self) {
        if let Some(p) = &self.player {
            p.discard_upcoming();
            p.show(self.playback.time, self.playback.playing);
            if !self.playback.playing {
                self.perf.seek_started = Some((self.playback.time, Instant::now()));
                self.perf.seek_first_seen = false;
            }
        }
    }

    /// Work done every frame, shown or not: frames in, clock forward,
    /// settings out.
    pub fn logic(&mut self, ctx: &egui::Context) {
        self.hold_close(ctx);
        let now = Instant::now();
        let dt = self.last_tick.map_or(0.0, |t| (now - t).as_secs_f64());
        self.last_tick = Some(now);
        if self.playback.playing {
            push_capped(&mut self.perf.ui_frames, dt as f32);
            // Reviewing a live camera's buffer plays on into what came
            // since the review began.
            self.extend_review(dt * self.playback.speed);
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
        self.check_planes();
        self.live_logic(ctx);
        self.receive_patch();
        self.receive_snap_frame();
        self.receive_snap(ctx);
        for e in errors {
            self.error(crate::error::chain(&e));
            // A screenshot run cannot get its frame once decoding failed:
            // say why now rather than after the timeout.
            if let Some(job) = &mut self.screenshot
                && !job.requested
            {
                *job.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(ShotError::Frame(e)));
                job.requested = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
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
        let size = self.info().map(|i| [i.width as u32, i.height as u32]);
        if self.calib.active
            && let Some(doc) = &mut self.doc
            && let Some(c) = self.calib.refit(size)
        {
            if self.calib_backup.is_none() {
                self.calib_backup = Some(doc.calibration.clone());
            }
            // Fitted to points typed in the log's unit.
            let unit = doc.log.header.world_unit.clone();
            doc.set_calibration(Some(c.with_world_unit(unit)));
        }
        self.send_settings();
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

    /// Sends the settings to draw with to the player when they changed
    /// (the session's, with the mask section's preview): it draws the
    /// frame on screen again with them, paused or not.
    pub fn send_settings(&mut self) {
        let Some(doc) = &self.doc else { return };
        // Live, the loop draws with the session's settings, into its
        // outputs too: the mask section's preview tint is the viewer's
        // own, shown on paused frames only.
        if let Some(l) = &mut self.live {
            l.configure(doc.draw_settings());
        }
        if let Some(p) = &mut self.player {
            let s = self.mask_tuning.shown(doc.draw_settings());
            if self.sent_settings.as_ref() != Some(&s) {
                p.configure(s.clone());
                self.sent_settings = Some(s);
            }
        }
    }

    /// Asks the player for the pixels around image point `at` of the frame
    /// on screen, for the floor colour pick ("this is floor").
    pub fn pick_floor_at(&mut self, at: egui::Pos2) {
        if self.live_following() {
            self.live_pick_floor_at(at);
            return;
        }
        let (Some(p), Some(f)) = (&self.player, &self.frame) else {
            return;
        };
        self.mask_tuning.picking = false;
        if !(at.x >= 0.0 && at.y >= 0.0 && (at.x as usize) < f.size[0] && (at.y as usize) < f.size[1]) {
            self.mask_tuning.note = Some(Err(crate::mask::seed::SeedError::Empty));
            return;
        }
        let radius = crate::mask::seed::PATCH_RADIUS;
        p.request_patch(f.time, at.x as usize, at.y as usize, radius);
        self.mask_tuning.waiting = Some(f.time);
    }

    /// Asks the player for the frame on screen, as decoded, to snap the
    /// calibration to its lines.
    pub fn snap_to_lines(&mut self) {
        if self.live_following() {
            self.live_snap_to_lines();
            return;
        }
        let (Some(p), Some(f)) = (&self.player, &self.frame) else {
            self.calib.snap = Some(Err("no frame is on screen".into()));
            return;
        };
        p.request_frame(f.time);
        self.calib.snap_waiting = Some(f.time);
        self.calib.snap = None;
        self.calib.snap_pending = None;
    }

    /// Whether a snap to the lines is running on its own thread.
    pub fn snap_running(&self) -> bool {
        self.snap_job.is_some()
    }

    /// Takes the snapped calibration that was not trusted.
    pub fn accept_snap(&mut self) {
        let (Some(doc), Some(c)) = (&mut self.doc, self.calib.snap_pending.take()) else {
            return;
        };
        if self.calib_backup.is_none() {
            self.calib_backup = Some(doc.calibration.clone());
        }
        doc.set_calibration(Some(c));
        self.status("took the snapped calibration although it was not trustworthy".to_owned());
    }

    /// The frame a snap waited for: the snap runs on its own thread — on
    /// a fixed camera's background picture (the median of frames spread
    /// over the video, players taken out) as `calib refine` does, else on
    /// this frame.
    fn receive_snap_frame(&mut self) {
        let Some(frame) = self
            .live_decoded
            .take()
            .or_else(|| self.player.as_ref().and_then(Player::take_decoded))
        else {
            return;
        };
        if self.calib.snap_waiting.take().is_none() {
            return;
        }
        let Some(doc) = &self.doc else { return };
        let Some(current) = doc.calibration.clone() else {
            self.calib.snap = Some(Err(
                "the session has no calibration to start from: click four field points first".into(),
            ));
            return;
        };
        let plan = match self.calib.snap_plan(&current, &doc.log.header.world_unit) {
            Ok(p) => p,
            Err(e) => {
                self.error(format!("snap to lines: {e}"));
                self.calib.snap = Some(Err(e));
                return;
            }
        };
        // A video of several frames, not a rendered match (which knows its
        // own camera) nor generated frames.
        let video = self.info().filter(|i| {
            self.synthetic.is_none()
                && i.calibration.is_none()
                && !i.has_masks
                && i.duration > 1.5 * i.frame_duration()
        });
        let path = video.map(|_| (doc.session.video.clone(), doc.session.open_options()));
        // Live, the camera's last minutes in the buffer (the camera itself
        // is not opened twice).
        let open: Box<dyn FnOnce() -> Option<Box<dyn FrameSource>> + Send> = match &self.live {
            Some(l) => {
                let s = l.review_source();
                Box::new(move || s.map(|s| Box::new(s) as Box<dyn FrameSource>))
            }
            None => Box::new(move || {
                let (path, open) = path?;
                crate::formats::open_source(&path, &open).ok()
            }),
        };
        let (tx, rx) = crossbeam_channel::bounded(1);
        let spawned = std::thread::Builder::new()
            .name("underlay-snap".into())
            .spawn(move || {
                let background = open().and_then(|mut source| {
                    let b = crate::video::background::background(source.as_mut(), 15).ok()?;
                    (!b.camera_moves() && b.image.dim() == frame.pixels.dim()).then_some(b)
                });
                let (picture, on) = match &background {
                    Some(b) => (&b.image, format!("the background of {} frames", b.times.len())),
                    None => (&frame.pixels, "the frame on screen".to_owned()),
                };
                let _ = tx.send(SnapOutcome {
                    result: plan.run(picture),
                    on,
                });
            });
        match spawned {
            Ok(_) => {
                self.snap_job = Some(rx);
            }
            Err(e) => {
                let e = format!("cannot start the snap: {e}");
                self.error(format!("snap to lines: {e}"));
                self.calib.snap = Some(Err(e));
            }
        }
    }

    /// A finished snap: its calibration goes into the session (undoable,
    /// and revertible like a fit) when it is trusted; otherwise it waits
    /// for "Use it anyway".
    fn receive_snap(&mut self, ctx: &egui::Context) {
        let Some(rx) = &self.snap_job else { return };
        let outcome = match rx.try_recv() {
            Ok(o) => o,
            Err(crossbeam_channel::TryRecvError::Empty) => {
                ctx.request_repaint_after(Duration::from_millis(50));
                return;
            }
            Err(crossbeam_channel::TryRecvError::Disconnected) => SnapOutcome {
                result: Err("the snap stopped without a result".into()),
                on: String::new(),
            },
        };
        self.snap_job = None;
        let Some(doc) = &mut self.doc else { return };
        match outcome.result {
            Ok((c, report)) if !report.trusted => {
                // Not taken: the lines in view are not where it puts them.
                self.error(format!(
                    "snap to lines on {}: not trustworthy ({}); the calibration is unchanged",
                    outcome.on,
                    report.verdict.reasons.join("; ")
                ));
                self.calib.snap_pending = Some(c);
                self.calib.snap = Some(Ok(report));
            }
            Ok((c, report)) => {
                if self.calib_backup.is_none() {
                    self.calib_backup = Some(doc.calibration.clone());
                }
                doc.set_calibration(Some(c));
                self.status(format!(
                    "snapped to the lines on {}: {:.0} % of the lines in view on the paint, RMS {:.2} px across them",
                    outcome.on,
                    100.0 * report.verdict.found_share,
                    report.rms_px
                ));
                self.calib.snap_pending = None;
                self.calib.snap = Some(Ok(report));
            }
            Err(e) => {
                self.error(format!("snap to lines: {e}"));
                self.calib.snap = Some(Err(e));
            }
        }
    }

    /// The pixels of a floor colour pick: the session's floor hue seeded
    /// from them, or a message saying why not.
    fn receive_patch(&mut self) {
        let Some(patch) = self.player.as_ref().and_then(Player::take_patch) else {
            return;
        };
        let Some(doc) = &mut self.doc else { return };
        match self.mask_tuning.receive(&patch, &mut doc.session.mask) {
            Some(Ok(h)) => self.status(format!("floor colour picked: hue {h} ({}°)", 2 * u32::from(h))),
            Some(Err(e)) => self.error(format!("this is floor: {e}")),
            None => {}
        }
    }

    /// When the GPU cannot show the video's planes (an OpenGL without the
    /// shaders they need): says so once, and RGB pictures from then on.
    fn check_planes(&mut self) {
        let Some(e) = self.planes.as_ref().and_then(super::gpu::PlaneView::failure) else {
            return;
        };
        self.error(format!("{e}; showing the video converted on the CPU instead"));
        self.planes = None;
        if let Some(p) = &self.player {
            p.set_planes(false);
            // The picture on screen is planes: ask for it again.
            self.frame = None;
            p.show(self.playback.time, self.playback.playing);
        }
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
            (f.time, f.generation, f.reduction, f.planes)
                == (
                    shown.time,
                    shown.generation,
                    shown.reduction,
                    shown.picture.is_planes(),
                )
        });
        if !same_picture {
            match (&shown.picture, &self.planes) {
                (Picture::Planes(p), Some(view)) => view.set(Arc::clone(p)),
                (Picture::Rgb(image), _) => match &mut self.texture {
                    Some(t) => t.set(Arc::clone(image), egui::TextureOptions::LINEAR),
                    None => {
                        self.texture =
                            Some(ctx.load_texture("video", Arc::clone(image), egui::TextureOptions::LINEAR))
                    }
                },
                // Planes with nowhere to show them (never asked for).
                (Picture::Planes(_), None) => return,
            }
        }
        self.perf.pictures[usize::from(!shown.picture.is_planes())] += 1;
        if step {
            // A frame step: the clock follows the frame.
            self.playback.time = shown.time;
        }
        if let Some((t, started)) = self.perf.seek_started
            && shown.requested == Some(t)
            && shown.generation == gen_now
        {
            if !self.perf.seek_first_seen {
                push_capped(&mut self.perf.seeks_first, started.elapsed());
                self.perf.seek_first_seen = true;
            }
            if !shown.preview {
                push_capped(&mut self.perf.seeks, started.elapsed());
                self.perf.seek_started = None;
            }
        }
        self.frame = Some(FrameMeta {
            index: shown.index,
            time: shown.time,
            // None for a step or a frame drawn ahead.
            requested: shown.requested,
            generation: shown.generation,
            primitives: shown.stats.primitives,
            mask_doubt: shown.stats.mask_doubt,
            size: shown.size,
            reduction: shown.reduction,
            preview: shown.preview,
            planes: shown.picture.is_planes(),
        });
    }

    /// Whether the frame on screen is the one for the current time, drawn
    /// with the current settings.
    pub fn frame_is_current(&self) -> bool {
        if self.live_following() {
            return self.frame.is_some();
        }
        match (&self.frame, &self.player) {
            (Some(f), Some(p)) => {
                !f.preview && f.generation == p.generation() && f.requested == Some(self.playback.time)
            }
            _ => false,
        }
    }
}

/// What waits for an answer about unsaved changes.
#[derive(Clone, Debug, PartialEq)]
pub enum Pending {
    /// Closing the window.
    Close,
    /// A command that replaces the document.
    Run(Box<Command>),
}

impl ViewerApp {
    /// What undo would put back now.
    pub fn snapshot(&self) -> Option<super::history::Snapshot> {
        self.doc.as_ref().map(|d| super::history::Snapshot {
            session: d.session.clone(),
            points: self.calib.points.points.clone(),
        })
    }

    /// Notes the state after a frame for undo (see [`super::history`]).
    pub fn observe_edits(&mut self) {
        let busy = self.ctx.input(|i| i.pointer.any_down());
        if let Some(s) = self.snapshot() {
            self.history.observe(&s, busy);
        }
    }

    /// Puts back `to` (from undo or redo).
    pub fn apply_snapshot(&mut self, to: super::history::Snapshot) {
        let Some(doc) = &mut self.doc else { return };
        let calibration_changed = doc.session.calibration != to.session.calibration;
        doc.session = super::history::restore(&doc.session, &to.session);
        if calibration_changed && let Err(e) = doc.reload_calibration() {
            self.error(format!("{e:#}"));
        }
        let pts = &mut self.calib.points;
        pts.points = to.points;
        pts.revision += 1;
        pts.selected = pts.selected.filter(|&i| i < pts.points.len());
        self.request_frame();
    }

    /// A close of the window asked for: held while there are unsaved
    /// changes, until the user says what to do with them.
    fn hold_close(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested())
            && !self.is_screenshot_run()
            && self.doc.as_ref().is_some_and(Document::is_dirty)
            && !self.discard_ok
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.confirm = Some(Pending::Close);
        }
    }

    /// The answer to the unsaved-changes question: save first (`Some(true)`),
    /// drop them (`Some(false)`) or do nothing (`None`).
    pub fn answer(&mut self, ctx: &egui::Context, save: Option<bool>) {
        let Some(pending) = self.confirm.take() else {
            return;
        };
        let Some(save) = save else { return };
        if save {
            self.run_command(Command::Save);
            if self.doc.as_ref().is_some_and(Document::is_dirty) {
                // Not saved (cancelled or failed): keep the changes.
                return;
            }
        }
        self.discard_ok = true;
        match pending {
            Pending::Close => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
            Pending::Run(c) => self.run_command(*c),
        }
    }
}

/// File extensions opened as video.
pub const VIDEO_EXTENSIONS: &[&str] = &["mp4", "mkv", "avi", "mov", "webm", "m4v", "mpg", "mpeg", "ts"];

mod bench;
mod commands;
mod live;
mod screenshot;

pub use screenshot::ShotError;

use bench::ExportBench;
use screenshot::ScreenshotJob;
#[cfg(test)]
mod live_tests;
#[cfg(test)]
mod tests;
