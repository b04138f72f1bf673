//! The live loop: frames from the camera, held back by the delay, drawn
//! with the logs that arrived by then, encoded to every output.
//!
//! **One clock.** A frame's log time is its arrival on this machine's
//! clock (seconds since the Unix epoch) mapped by the session's time map
//! (`+ offset`): a sender stamping its frames with the same clock (a
//! robot on this machine, or one kept in step by NTP/PTP) needs no offset.
//! A recorded video played with its recorded log takes the video's own
//! times instead ([`Clock::Stream`]), and draws what an export draws.
//! **The delay** holds each frame back that long before it is drawn, so a
//! log frame that arrives up to that much later than the picture it
//! belongs to is still drawn on it (SSL vision leads or lags a camera
//! stream by 50–300 ms); it adds to the latency, one for one.
//!
//! **An SSL camera's calibration** (`--camera N`): the live vision
//! stream's geometry packets carry each camera's ssl-vision model; the
//! run draws through camera N's from the first that brings it, and again
//! whenever it changes (the pipeline configured anew,
//! [`Pipeline::configure`]). Until then the picture goes out without
//! drawings, and the status says what it waits for.
//!
//! **Outputs** are encoded as the frames come, with x264 tuned for zero
//! latency and a keyframe every second, at the camera's rate; the
//! container follows the URL: MPEG-TS for `srt://`, `udp://` and `tcp://`,
//! FLV for `rtmp://`, RTSP (a push to a server such as MediaMTX) for
//! `rtsp://`, and a file's extension for a file (recording while
//! streaming). Output times are arrival times from the first frame, so a
//! dropped or late frame leaves a gap of its own length, not a jump.
//!
//! **The overlay alone** (`--overlay-out`) is the drawings as they were
//! composited — hidden behind the robots where the floor mask says, which
//! an overlay drawn without the picture cannot do — over nothing, with
//! their alpha: lossless FFV1 in BGRA, in Matroska (a `.mkv` file, or a
//! stream over `srt://`, `tcp://` or `udp://`), which FFmpeg-based players
//! such as OBS's Media Source decode with the alpha.
//!
//! **The viewer** in live mode is one more consumer of the same loop
//! ([`run_with`] and a [`LiveSink`]): it is given each frame as decoded
//! (for its replay buffer) and as drawn (to show), and the log each time
//! it is swapped; the settings it edits (selection, mask, calibration)
//! come back through the sink and are drawn from the next frame on, into
//! the outputs too. With the viewer, outputs are optional.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::camera::{CameraOptions, CameraStatus, FirstPicture, LiveCamera, LiveFrame, now};
use super::error::LiveError;
use super::merger::Merger;
use super::no_signal;
use super::sources::{self, LogSource};
use super::store::{LiveLogs, SourceCounts, StoreOptions};
use crate::log::Log;
use crate::pipeline::{DrawSettings, Pipeline, PipelineError};
use crate::select::Index;
use crate::session::Session;
use crate::video::{Encoder, EncoderSettings, SourceFrame};

/// What a live run does.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// The camera.
    pub camera: CameraOptions,
    /// Logs arriving over the network.
    pub sources: Vec<LogSource>,
    /// Calibration, mask, filter, offset, and files drawn throughout (the
    /// session's logs); its video is not read.
    pub session: Session,
    /// Seconds each frame is held back before it is drawn.
    pub delay: f64,
    /// Where the composited picture goes (URLs or files).
    pub outputs: Vec<String>,
    /// Where the drawings alone go, with alpha (FFV1 in BGRA, in Matroska).
    pub overlay_outputs: Vec<String>,
    /// Stop after this many seconds of output, counted from the first
    /// frame written (the wait for the camera does not count).
    pub duration: Option<f64>,
    /// Stop this long after the run started, the wait for the camera
    /// included: before the first picture, an error
    /// ([`LiveError::Stopped`]); after, the outputs are finished.
    pub timeout: Option<Duration>,
    /// Give up when no first picture came within this.
    pub first_picture: Duration,
    /// x264 constant rate factor.
    pub crf: u8,
    /// x264 preset.
    pub preset: String,
    /// What the store keeps of each source.
    pub store: StoreOptions,
    /// Stream the picture even with no calibration (nothing drawn then).
    pub no_calibration: bool,
    /// The clock a frame's log time is taken from.
    pub clock: Clock,
    /// Draw through this SSL camera's calibration, from the live vision
    /// stream's geometry packets, instead of the session's.
    pub ssl_camera: Option<u32>,
}

/// The clock a live frame's log time comes from (before the offset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Clock {
    /// Its arrival on this machine's clock (Unix seconds): logs sent live.
    #[default]
    Arrival,
    /// The camera's own presentation time: a recorded video played with
    /// its recorded log (a rehearsal), drawn as an export would.
    Stream,
}

impl LiveOptions {
    /// A run of `camera` with `session`'s settings and the defaults: no
    /// delay, a 10 s wait for the first picture, crf 23, `veryfast`.
    pub fn new(camera: CameraOptions, session: Session) -> Self {
        LiveOptions {
            camera,
            sources: Vec::new(),
            session,
            delay: 0.0,
            outputs: Vec::new(),
            overlay_outputs: Vec::new(),
            duration: None,
            timeout: None,
            first_picture: Duration::from_secs(10),
            crf: 23,
            preset: "veryfast".into(),
            store: StoreOptions::default(),
            no_calibration: false,
            clock: Clock::Arrival,
            ssl_camera: None,
        }
    }
}

/// The container an output URL or file is written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A network stream in this muxer (`mpegts`, `flv`, `rtsp`).
    Stream(&'static str),
    /// A file, its container chosen by its extension.
    File,
}

impl OutputKind {
    /// What `output` is written as; an error for a scheme no muxer sends to.
    pub fn of(output: &str) -> Result<OutputKind, LiveError> {
        let Some((scheme, _)) = output.split_once("://") else {
            return Ok(OutputKind::File);
        };
        match scheme {
            "srt" | "udp" | "tcp" => Ok(OutputKind::Stream("mpegts")),
            "rtmp" | "rtmps" => Ok(OutputKind::Stream("flv")),
            "rtsp" => Ok(OutputKind::Stream("rtsp")),
            "file" => Ok(OutputKind::File),
            other => Err(LiveError::BadOutput {
                output: output.to_owned(),
                why: format!(
                    "no stream is sent to {other}:// (srt://, udp://, tcp://, rtmp://, rtsp:// or a file)"
                ),
            }),
        }
    }
}

/// The state of a live run, for the status line (given about once a second).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveStatus {
    /// Camera time so far (seconds since the first frame).
    pub elapsed: f64,
    /// Frames per second in from the camera and out to the outputs over
    /// the last period.
    pub fps_in: f64,
    pub fps_out: f64,
    /// Frames written to the outputs.
    pub frames_out: u64,
    /// Frames dropped: by the camera's slot, and held past the delay's room.
    pub dropped: u64,
    /// Arrival → written, this period: median and 95th percentile, ms.
    pub latency_ms: (f64, f64),
    /// The camera's own state.
    pub camera: CameraStatus,
    /// Every log source's counts.
    pub sources: Vec<SourceCounts>,
    /// Why nothing is drawn yet, if that is so (an SSL camera's
    /// calibration not come, or not usable).
    pub calibration_wait: Option<String>,
}

/// Why a live run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LiveEnd {
    /// The camera ended (a file at its end).
    #[default]
    CameraEnded,
    /// `--duration` of output was written.
    Duration,
    /// `--timeout` came.
    Timeout,
    /// A stop was asked for (Ctrl-C, a signal, the viewer closed).
    Stopped,
}

impl std::fmt::Display for LiveEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LiveEnd::CameraEnded => "the camera ended",
            LiveEnd::Duration => "--duration reached",
            LiveEnd::Timeout => "--timeout reached",
            LiveEnd::Stopped => "asked to stop",
        })
    }
}

/// What a live run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveReport {
    /// Why it ended.
    pub end: LiveEnd,
    /// Frames the camera gave, and those written.
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames dropped (the machine behind, or the delay's room full).
    pub dropped: u64,
    /// Times the camera was opened again.
    pub reconnects: u64,
    /// Frames written while the camera had no signal (the card saying so).
    pub no_signal_frames: u64,
    /// Camera time covered, seconds.
    pub duration: f64,
    /// The first frame's arrival (Unix seconds): the outputs' time 0.
    pub first_arrival: f64,
    /// Arrival → written over the whole run: median and 95th percentile, ms.
    pub latency_ms: (f64, f64),
    /// Drawing and compositing a frame (the pipeline alone): median and
    /// 95th percentile, ms.
    pub draw_ms: (f64, f64),
    /// Every log source's counts at the end.
    pub sources: Vec<SourceCounts>,
    /// What the run noticed (a camera error, sources that sent nothing).
    pub warnings: Vec<String>,
}

/// The last picture written and its drawings alone (when an overlay
/// output wants them).
type Written = (Arc<crate::video::SourceFrame>, Option<Arc<Vec<u8>>>);

/// Another consumer of a live run's frames: the viewer in live mode. Its
/// calls come from the loop's thread and return quickly (work is handed
/// to threads of its own).
pub trait LiveSink {
    /// The first picture came: its size and the camera's frame rate.
    fn started(&mut self, width: usize, height: usize, fps: f64);
    /// Settings to draw with from the next frame on, when they changed.
    fn settings(&mut self) -> Option<DrawSettings>;
    /// What applying the settings said (what could not be applied).
    fn configured(&mut self, result: Result<(), PipelineError>);
    /// The logs drawn from now on (swapped in as they arrive).
    fn log(&mut self, log: &Arc<Log>, index: &Arc<Index>);
    /// A frame as decoded, its time the one it is drawn at, before drawing.
    fn decoded(&mut self, frame: &SourceFrame);
    /// The same frame drawn (as the outputs get it), with how many
    /// primitives were drawn on it and what makes its floor mask doubtful.
    fn drawn(&mut self, frame: &Arc<SourceFrame>, primitives: usize, doubt: Option<crate::mask::MaskDoubt>);
}

/// What an output's thread encodes.
enum Job {
    /// A composited frame shown from this output time.
    Frame(Arc<crate::video::SourceFrame>, f64),
    /// The drawings alone, straight RGBA.
    Rgba(Arc<Vec<u8>>, f64),
}

/// Frames waiting for an output's encoder: when it falls further behind,
/// the loop waits, and the camera's slot drops (and counts) frames.
const OUTPUT_QUEUE: usize = 2;

/// An output encoding on a thread of its own, so that outputs encode side
/// by side and beside the drawing of the next frame.
struct OutputThread {
    tx: Option<std::sync::mpsc::SyncSender<Job>>,
    thread: Option<std::thread::JoinHandle<Result<(), crate::video::VideoError>>>,
}

impl OutputThread {
    fn start(mut encoder: Encoder) -> OutputThread {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(OUTPUT_QUEUE);
        let thread = std::thread::spawn(move || {
            for job in rx {
                match job {
                    Job::Frame(f, t) => encoder.push_frame(&f, t)?,
                    Job::Rgba(p, t) => encoder.push_rgba(&p, t)?,
                }
            }
            encoder.finish()
        });
        OutputThread {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    /// Hands `job` over (waiting while the encoder is behind); an encoder
    /// that failed gives its error here.
    fn send(&mut self, job: Job) -> Result<(), LiveError> {
        match &self.tx {
            Some(tx) if tx.send(job).is_ok() => Ok(()),
            _ => self.join(),
        }
    }

    /// Ends the stream and waits for the encoder to finish it.
    fn finish(mut self) -> Result<(), LiveError> {
        self.join()
    }

    fn join(&mut self) -> Result<(), LiveError> {
        drop(self.tx.take());
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => Ok(r?),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Ok(()),
        }
    }
}

impl Drop for OutputThread {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Configures `pipeline` with `settings`; an entity filter naming what no
/// log has sent yet is no error (the names may come: the filter is
/// compiled again with each new log).
fn configure(pipeline: &mut Pipeline, settings: &crate::pipeline::DrawSettings) -> Result<(), LiveError> {
    match pipeline.configure(settings) {
        Ok(()) | Err(crate::pipeline::PipelineError::Filter(_)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The SSL camera drawn through (`--camera N`), as the store last had it.
struct SslCamera {
    id: Option<u32>,
    /// The store's count of changes when it was last taken.
    seen: u64,
    /// Why nothing can be drawn yet.
    wait: Option<String>,
}

impl SslCamera {
    fn new(id: Option<u32>) -> Self {
        SslCamera {
            id,
            seen: 0,
            wait: ssl_wait(id),
        }
    }

    /// The calibration to draw through from now on, when it changed.
    fn changed(&mut self, store: &LiveLogs) -> Option<Option<crate::calib::Calibration>> {
        let n = self.id?;
        let (change, calibration) = store.camera(n)?;
        if change == self.seen {
            return None;
        }
        self.seen = change;
        match calibration {
            Ok(c) => {
                self.wait = None;
                Some(Some(c))
            }
            Err(e) => {
                self.wait = Some(format!("camera {n}'s model is not a calibration: {e}"));
                Some(None)
            }
        }
    }
}

/// What a run drawing through SSL camera `id` waits for at first.
fn ssl_wait(id: Option<u32>) -> Option<String> {
    id.map(|n| format!("waiting for camera {n}'s calibration from the vision geometry"))
}

/// Median and 95th percentile of `v` (sorted here).
fn percentiles(v: &mut [f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}

/// Runs live until the camera ends, `duration` or `timeout` is reached or
/// `cancel` is set; `status` is called about once a second, from the
/// start (while the camera is waited for too). Stopped before the
/// camera's first picture, it writes nothing and says so
/// ([`LiveError::Stopped`]).
pub fn run(
    opts: &LiveOptions,
    cancel: &AtomicBool,
    status: &mut dyn FnMut(&LiveStatus),
) -> Result<LiveReport, LiveError> {
    run_with(opts, cancel, status, None)
}

/// [`run`], every frame also handed to `sink` (the viewer); with a sink,
/// outputs are optional.
pub fn run_with(
    opts: &LiveOptions,
    cancel: &AtomicBool,
    status: &mut dyn FnMut(&LiveStatus),
    mut sink: Option<&mut dyn LiveSink>,
) -> Result<LiveReport, LiveError> {
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let kinds: Vec<OutputKind> = opts
        .outputs
        .iter()
        .map(|o| OutputKind::of(o))
        .collect::<Result<_, _>>()?;
    let overlay_kinds: Vec<OutputKind> = opts
        .overlay_outputs
        .iter()
        .map(|o| OutputKind::of(o))
        .collect::<Result<_, _>>()?;
    if opts.outputs.is_empty() && opts.overlay_outputs.is_empty() && sink.is_none() {
        return Err(LiveError::BadOutput {
            output: "(none)".into(),
            why: "nothing to write: give an output for the picture, the overlay, or both".into(),
        });
    }
    for (o, k) in opts
        .outputs
        .iter()
        .zip(&kinds)
        .chain(opts.overlay_outputs.iter().zip(&overlay_kinds))
    {
        if *k == OutputKind::File {
            let path = Path::new(o.strip_prefix("file://").unwrap_or(o));
            let inputs: Vec<std::path::PathBuf> = opts
                .session
                .inputs()
                .into_iter()
                .chain([std::path::PathBuf::from(&opts.camera.input)])
                .collect();
            if crate::files::refuse_overwriting_inputs(path, inputs.iter().map(|p| p.as_path())).is_err() {
                return Err(LiveError::WouldOverwrite(path.to_owned()));
            }
        }
    }
    let mut settings = opts.session.draw_settings()?;
    if opts.ssl_camera.is_some() {
        settings.calibration = None;
    } else if settings.calibration.is_none() && !opts.no_calibration {
        return Err(LiveError::NoCalibration);
    }
    let store = Arc::new(LiveLogs::new(opts.store));
    let fixed = opts.session.load_logs();
    if !opts.session.logs.is_empty() {
        let log = fixed?;
        if let Some(c) = &settings.calibration {
            settings.calibration = Some(c.for_unit(&log.header.world_unit).0);
        }
        let name = opts
            .session
            .logs
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        store.add_fixed(&name, log);
    }
    let _receivers = sources::start(&opts.sources, &store)?;
    let merger = Merger::start(Arc::clone(&store));
    let camera = LiveCamera::start(opts.camera.clone());

    // The first picture: its size sets up the outputs and the mask.
    // Nothing is written before it.
    let wait = FirstPicture {
        within: opts.first_picture,
        deadline,
    };
    let waiting = ssl_wait(opts.ssl_camera);
    let first = camera.first_picture(wait, cancel, &mut |cam| {
        status(&LiveStatus {
            camera: cam.clone(),
            sources: store.counts(),
            calibration_wait: waiting.clone(),
            ..LiveStatus::default()
        });
    })?;
    let (h, w, _) = first.frame.image.dim();
    let empty = Arc::new(Log::new());
    let mut pipeline = Pipeline::unconfigured(Arc::clone(&empty), Arc::new(Index::new(&empty)));
    configure(&mut pipeline, &settings)?;
    let mut ssl_camera = SslCamera::new(opts.ssl_camera);
    pipeline
        .check_video(w, h, None)
        .map_err(|e| LiveError::DoesNotFit {
            input: opts.camera.input.clone(),
            source: e,
        })?;
    let mut report = LiveReport::default();
    if let Some(c) = &settings.calibration {
        report.warnings.extend(c.size_note(w, h));
    }
    let fps = match camera.status().fps {
        f if f.is_finite() && (1.0..=240.0).contains(&f) => f,
        _ => 30.0,
    };
    if let Some(s) = sink.as_deref_mut() {
        s.started(w, h, fps);
    }
    let mut encoders = Vec::with_capacity(opts.outputs.len());
    for (o, k) in opts.outputs.iter().zip(&kinds) {
        let enc_settings = EncoderSettings {
            crf: opts.crf,
            preset: opts.preset.clone(),
            fps_hint: fps,
            keyframe_interval: fps.round().max(1.0) as u32,
            stream_format: match k {
                OutputKind::Stream(muxer) => Some((*muxer).to_owned()),
                OutputKind::File => None,
            },
            live: true,
            ..EncoderSettings::default()
        };
        let path = Path::new(o.strip_prefix("file://").unwrap_or(o));
        encoders.push(OutputThread::start(Encoder::create(
            path,
            w as u32,
            h as u32,
            &enc_settings,
        )?));
    }
    // The drawings alone: lossless with alpha, which Matroska carries.
    let mut overlays = Vec::with_capacity(opts.overlay_outputs.len());
    for (o, k) in opts.overlay_outputs.iter().zip(&overlay_kinds) {
        let enc_settings = EncoderSettings {
            fps_hint: fps,
            alpha: true,
            stream_format: match k {
                OutputKind::Stream(_) => Some("matroska".to_owned()),
                OutputKind::File => None,
            },
            live: true,
            ..EncoderSettings::default()
        };
        let path = Path::new(o.strip_prefix("file://").unwrap_or(o));
        overlays.push(OutputThread::start(Encoder::create(
            path,
            w as u32,
            h as u32,
            &enc_settings,
        )?));
    }
    // Overlay pictures: buffers in flight to the outputs, and spare ones.
    let (mut recycled, mut spare_rgba): (VecDeque<Arc<Vec<u8>>>, Vec<Vec<u8>>) =
        (VecDeque::new(), Vec::new());

    let mut generation = 0u64;
    let t0 = first.arrival;
    let mut last_out = f64::NEG_INFINITY;
    // Frames held for the delay: room for the delay's frames at twice the
    // rate, at least 8.
    let room = ((opts.delay.max(0.0) * fps * 2.0).ceil() as usize).clamp(8, 4096);
    let mut pending: VecDeque<LiveFrame> = VecDeque::from([first]);
    let mut held_dropped = 0u64;
    // Frames drawn, those whose floor mask was doubtful, and the first doubt.
    let (mut drawn_frames, mut doubtful, mut doubt) = (0u64, 0u64, None);
    let (mut latencies, mut draws, mut period_latencies) = (Vec::new(), Vec::new(), Vec::new());
    let mut period = (Instant::now(), 0u64, 0u64);
    let mut received_before = 0u64;
    // The first frame at or past the duration came.
    let mut reached = false;
    // The last picture and drawings written, and the card shown while the
    // camera has no signal (made again when its caption changes).
    let mut last_written: Option<Written> = None;
    let mut card: Option<(String, Arc<crate::video::SourceFrame>)> = None;
    let mut last_wall = now();
    loop {
        if cancel.load(Ordering::Relaxed) {
            report.end = LiveEnd::Stopped;
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            report.end = LiveEnd::Timeout;
            break;
        }
        let silent = camera.status().no_signal_since.is_some();
        let wait = match pending.front() {
            Some(f) => Duration::from_secs_f64((f.arrival + opts.delay - now()).clamp(0.0, 0.1)),
            None if silent => Duration::from_secs_f64((last_wall + 1.0 / fps - now()).clamp(0.0, 0.1)),
            None => Duration::from_millis(100),
        };
        if let Some(f) = camera.next(wait) {
            pending.push_back(f);
            while let Some(f) = camera.next(Duration::ZERO) {
                pending.push_back(f);
            }
            while pending.len() > room {
                pending.pop_front();
                held_dropped += 1;
            }
        }
        while pending.front().is_some_and(|f| now() >= f.arrival + opts.delay) {
            let Some(lf) = pending.pop_front() else { break };
            if let Some(d) = opts.duration
                && lf.arrival - t0 >= d
            {
                pending.clear();
                reached = true;
                break;
            }
            let LiveFrame { mut frame, arrival } = lf;
            let size = (frame.image.dim().1, frame.image.dim().0);
            if size != (w, h) {
                return Err(LiveError::SizeChanged {
                    input: opts.camera.input.clone(),
                    from: (w, h),
                    to: size,
                });
            }
            if let Some((g, log, index)) = merger.latest(generation) {
                generation = g;
                if let Some(s) = sink.as_deref_mut() {
                    s.log(&log, &index);
                }
                pipeline.set_log(log, index);
            }
            if let Some(c) = ssl_camera.changed(&store) {
                settings.calibration = c;
                configure(&mut pipeline, &settings)?;
            }
            if opts.clock == Clock::Arrival {
                frame.time = arrival;
            }
            if let Some(s) = sink.as_deref_mut() {
                if let Some(new) = s.settings() {
                    s.configured(pipeline.configure(&new));
                }
                s.decoded(&frame);
            }
            let drawing = Instant::now();
            let drawn = pipeline.process(&mut frame)?;
            draws.push(drawing.elapsed().as_secs_f64() * 1e3);
            drawn_frames += 1;
            if let Some(d) = drawn.mask_doubt {
                doubtful += 1;
                doubt.get_or_insert(d);
            }
            let t = (arrival - t0).max(last_out + 1e-3);
            last_out = t;
            let rgba = if overlays.is_empty() {
                None
            } else {
                let mut rgba = spare_rgba.pop().unwrap_or_default();
                pipeline
                    .drawings_rgba(frame.calibration.as_deref(), &mut rgba)
                    .map_err(|source| crate::pipeline::PipelineError::Draw {
                        time: frame.time,
                        source,
                    })?;
                Some(Arc::new(rgba))
            };
            if sink.is_some() {
                // The viewer shows the drawn picture in RGB.
                frame.finish_rgb();
            }
            let frame = Arc::new(frame);
            if let Some(s) = sink.as_deref_mut() {
                s.drawn(&frame, drawn.primitives, drawn.mask_doubt);
            }
            for e in &mut encoders {
                e.send(Job::Frame(Arc::clone(&frame), t))?;
            }
            if let Some(rgba) = &rgba {
                for e in &mut overlays {
                    e.send(Job::Rgba(Arc::clone(rgba), t))?;
                }
                // Its buffer back once every output has encoded it.
                recycled.push_back(Arc::clone(rgba));
            }
            last_written = Some((frame, rgba));
            last_wall = now();
            card = None;
            while let Some(r) = recycled.pop_front() {
                match Arc::try_unwrap(r) {
                    Ok(v) => spare_rgba.push(v),
                    Err(r) => {
                        recycled.push_front(r);
                        break;
                    }
                }
            }
            report.frames_out += 1;
            report.duration = t;
            let latency = (now() - arrival) * 1e3;
            latencies.push(latency);
            period_latencies.push(latency);
        }
        let cam = camera.status();
        // No signal: the outputs keep the camera's rate with a card saying
        // so (the last picture dimmed; the overlay keeps its last drawings).
        if let (Some(since), Some((last, rgba)), true) =
            (cam.no_signal_since, &last_written, pending.is_empty())
            && !cam.ended
            && !reached
            && now() >= last_wall + 1.0 / fps
        {
            let wall = now();
            let t = (wall - t0).max(last_out + 1e-3);
            if opts.duration.is_some_and(|d| t >= d) {
                reached = true;
            } else {
                let text = no_signal::caption(since, wall);
                if card.as_ref().is_none_or(|(c, _)| *c != text) {
                    card = Some((text, Arc::new(no_signal::card(last, since, wall))));
                }
                if let Some((_, c)) = &card {
                    for e in &mut encoders {
                        e.send(Job::Frame(Arc::clone(c), t))?;
                    }
                }
                if let Some(rgba) = rgba {
                    for e in &mut overlays {
                        e.send(Job::Rgba(Arc::clone(rgba), t))?;
                    }
                }
                last_out = t;
                last_wall = wall;
                report.no_signal_frames += 1;
                report.duration = t;
            }
        }
        let ended = cam.ended && pending.is_empty();
        let done = reached;
        if period.0.elapsed() >= Duration::from_secs(1) || ended || done {
            let secs = period.0.elapsed().as_secs_f64().max(1e-3);
            status(&LiveStatus {
                elapsed: report.duration,
                fps_in: (cam.received - received_before) as f64 / secs,
                fps_out: (report.frames_out - period.1) as f64 / secs,
                frames_out: report.frames_out,
                dropped: cam.dropped + held_dropped,
                latency_ms: percentiles(&mut period_latencies),
                camera: cam.clone(),
                sources: store.counts(),
                calibration_wait: ssl_camera.wait.clone(),
            });
            period_latencies.clear();
            received_before = cam.received;
            period = (Instant::now(), report.frames_out, 0);
        }
        if ended || done {
            report.end = if done {
                LiveEnd::Duration
            } else {
                LiveEnd::CameraEnded
            };
            break;
        }
    }
    let cam = camera.status();
    drop(camera);
    // `--duration` reached: the outputs are that long, their last picture
    // shown until then (a live encoder has written each frame's length as
    // one frame's, so a late last frame is given again a frame before the
    // end).
    if let (Some(d), LiveEnd::Duration, Some((last, rgba))) = (opts.duration, report.end, &last_written) {
        let t = d - 1.0 / fps;
        if t > last_out + 1e-3 {
            for e in &mut encoders {
                e.send(Job::Frame(Arc::clone(last), t))?;
            }
            if let Some(rgba) = rgba {
                for e in &mut overlays {
                    e.send(Job::Rgba(Arc::clone(rgba), t))?;
                }
            }
        }
        report.duration = report.duration.max(d);
    }
    for e in encoders.into_iter().chain(overlays) {
        e.finish()?;
    }
    report.frames_in = cam.received;
    report.dropped = cam.dropped + held_dropped;
    report.reconnects = cam.reconnects;
    report.first_arrival = t0;
    if let Some(w) = ssl_camera.wait {
        report.warnings.push(format!("nothing was drawn at the end: {w}"));
    }
    report.latency_ms = percentiles(&mut latencies);
    report.draw_ms = percentiles(&mut draws);
    report.sources = store.counts();
    if let Some(e) = cam.last_error {
        report.warnings.push(format!("the camera: {e}"));
    }
    if let Some(d) = doubt {
        report.warnings.push(format!(
            "the floor mask was doubtful on {doubtful} of the {drawn_frames} frames drawn: {d}; {}",
            d.advice()
        ));
    }
    for s in &report.sources {
        if s.packets == 0 && s.bad == 0 {
            report.warnings.push(format!(
                "{}: nothing came{}",
                s.name,
                s.last_error
                    .as_ref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ));
        } else if s.bad > 0 {
            report.warnings.push(format!(
                "{}: {} packets were not logs and were ignored{}",
                s.name,
                s.bad,
                s.last_error
                    .as_ref()
                    .map(|e| format!(" (the last: {e})"))
                    .unwrap_or_default()
            ));
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_told_apart_by_scheme() {
        assert_eq!(
            OutputKind::of("srt://127.0.0.1:9000?mode=listener").unwrap(),
            OutputKind::Stream("mpegts")
        );
        assert_eq!(
            OutputKind::of("udp://239.0.0.1:1234").unwrap(),
            OutputKind::Stream("mpegts")
        );
        assert_eq!(
            OutputKind::of("rtmp://host/live/key").unwrap(),
            OutputKind::Stream("flv")
        );
        assert_eq!(
            OutputKind::of("rtsp://host:8554/field").unwrap(),
            OutputKind::Stream("rtsp")
        );
        assert_eq!(OutputKind::of("rec.ts").unwrap(), OutputKind::File);
        assert!(
            OutputKind::of("ftp://x/y")
                .unwrap_err()
                .to_string()
                .contains("ftp://x/y")
        );
    }

    #[test]
    fn an_ssl_cameras_calibration_is_waited_for_and_followed() {
        let store = LiveLogs::new(StoreOptions::default());
        let mut none = SslCamera::new(None);
        assert!(none.changed(&store).is_none() && none.wait.is_none());
        let mut cam = SslCamera::new(Some(2));
        assert!(cam.changed(&store).is_none());
        assert!(cam.wait.as_ref().unwrap().contains("waiting for camera 2's"));
        store.set_camera(2, Err("the camera lies in the floor plane".into()));
        assert_eq!(cam.changed(&store), Some(None));
        assert!(cam.wait.as_ref().unwrap().contains("floor plane"));
        let c = crate::calib::Calibration::from_parts(crate::geom::mat3::IDENTITY, None).unwrap();
        store.set_camera(3, Ok(c.clone()));
        assert_eq!(cam.changed(&store), None, "another camera");
        store.set_camera(2, Ok(c.clone()));
        assert_eq!(cam.changed(&store), Some(Some(c.clone())));
        assert!(cam.wait.is_none());
        assert_eq!(cam.changed(&store), None, "taken once");
    }

    #[test]
    fn percentiles_of_nothing_and_of_some() {
        assert_eq!(percentiles(&mut []), (0.0, 0.0));
        let mut v: Vec<f64> = (1..=100).map(f64::from).rev().collect();
        assert_eq!(percentiles(&mut v), (51.0, 95.0));
    }
}
