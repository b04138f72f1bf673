//! The offline export: an [`ExportPlan`] ([`plan`]) says what to export —
//! built from a session and the command line's or the export dialog's
//! options, the same way for both — and this driver runs it: frames from a
//! [`FrameSource`] → per-frame work → encode, on threads joined by bounded
//! queues, with a progress bar, Ctrl-C, and an output that only appears
//! (renamed from a temporary file in the same folder) once it is complete.
//!
//! Frame buffers circulate: the source fills a buffer, a worker draws on
//! it in place, the encoder converts it and hands it back to the source,
//! so memory stays bounded (a few frames per thread) at any video length.
//! Work that depends on the frames before (the adaptive mask's smoothing
//! over time) is done in frame order on the reading thread
//! ([`Preparer`]); the rest runs on workers in parallel across frames, and
//! the encoder puts frames back in order. So the output is the same
//! whatever the number of workers.
//!
//! Jobs are made from an [`ExportPlan`] (`plan.rs`), which runs through
//! these stages and reports [`ExportError`]: the two files name each
//! other. `span.rs` says which frames a job (or one part of it,
//! [`Segment`]) writes; `cpu.rs` measures where the CPU went
//! ([`StageCpu`]).

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

mod cpu;
pub mod plan;
mod span;
mod tally;

pub use crate::video::Segment;
pub use cpu::StageCpu;
use cpu::{process_cpu, thread_cpu};
pub use plan::{ExportOptions, ExportPlan, PRESETS, default_workers};
use span::{Span, span_of};

use crate::mask::MaskError;
use crate::pipeline::PipelineError;
use crate::session::SessionError;
use crate::video::source::{FrameSource, OpenOptions, SourceError, SourceInfo};
use crate::video::{Encoder, EncoderSettings, SourceFrame, VideoError};

/// An error from a per-frame processor.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// The per-frame work: draws on the frame in place, given what the
/// [`Preparer`] worked out for it. The frame's `time` is its time in
/// seconds from the source's start (whatever `--from` says). Frames come
/// with their decoded YUV planes when the video allows
/// ([`SourceFrame::yuv`]) and then with their RGB picture not converted
/// ([`SourceFrame::rgb_pending`]): the encoder takes the planes, so a
/// processor draws on them ([`crate::video::Yuv420::draw_planes`];
/// [`crate::pipeline::Pipeline::process_planned`] does), or converts the
/// picture ([`SourceFrame::finish_rgb`]), paints on it and marks where
/// ([`crate::video::Yuv420::mark_changed`]), which is converted back.
pub type Processor<'a, P> = Box<dyn FnMut(&mut SourceFrame, P) -> Result<(), BoxError> + Send + 'a>;

/// The per-frame work that must see the frames in order, before the
/// processors ([`crate::pipeline::Pipeline::prepare`]); runs on the
/// reading thread. Frames come with their RGB picture not converted where
/// the video allows ([`SourceFrame::rgb_pending`]): a preparer reads the
/// planes ([`SourceFrame::picture`]), keeping the reading thread's own
/// work small.
pub type Preparer<'a, P> = Box<dyn FnMut(&mut SourceFrame) -> Result<P, BoxError> + Send + 'a>;

/// Per-frame work that needs no preparation.
pub type SimpleProcessor<'a> = Box<dyn FnMut(&mut SourceFrame) -> Result<(), BoxError> + Send + 'a>;

/// Errors of an export. Each names the file, and the frame where one is
/// concerned.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Video(#[from] VideoError),
    #[error(
        "{input}: no calibration, so nothing of the log can be placed on the picture; calibrate (`underlay calib \
         solve`, or the viewer's calibration mode) or export the video as it is with --no-calibration"
    )]
    NoCalibration { input: PathBuf },
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cannot set up the drawing")]
    Pipeline(#[from] PipelineError),
    #[error("{input}: the floor mask does not fit this video")]
    MaskDoesNotFit {
        input: PathBuf,
        #[source]
        source: MaskError,
    },
    #[error("{input}: frame {index} at {time:.3} s")]
    Process {
        input: PathBuf,
        index: u64,
        time: f64,
        #[source]
        source: BoxError,
    },
    #[error("{output}: refusing to overwrite the input {input} (same file)")]
    SameFile { output: PathBuf, input: PathBuf },
    #[error("{output}: no video container has this extension (use .mp4, .mov or .mkv)")]
    UnknownContainer { output: PathBuf },
    #[error("{output}: the output's folder does not exist")]
    NoFolder { output: PathBuf },
    #[error("choose an output file")]
    NoOutput,
    #[error("CRF {crf} is outside 0–51")]
    BadCrf { crf: u8 },
    #[error("unknown x264 preset {preset:?} (one of {})", PRESETS.join(", "))]
    UnknownPreset { preset: String },
    #[error("the offset must be a finite number of seconds, not {offset}")]
    BadOffset { offset: f64 },
    #[error("{path}: cannot write the output")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{input}: nothing to export between {from:.3} s and {to:.3} s (the video lasts {duration:.3} s)")]
    EmptyRange {
        input: PathBuf,
        from: f64,
        to: f64,
        duration: f64,
    },
    #[error("--from and --to must be finite seconds with from < to (got {from} and {to})")]
    BadRange { from: f64, to: f64 },
    #[error("{what}")]
    EmptyPart { what: String },
    #[error("{input}: the video's length is not known, so it cannot be cut into parts; export it whole")]
    UnknownLength { input: PathBuf },
    #[error("{fps} pictures per second is not possible")]
    BadRate { fps: f64 },
    #[error(transparent)]
    Time(crate::video::TimeArgError),
    #[error("{input}: frame {index} was lost in processing (before the one at {time:.3} s)")]
    Lost { input: PathBuf, index: u64, time: f64 },
    #[error(transparent)]
    Interrupted(#[from] crate::Interrupted),
}

/// Frames written so far and expected, shared with whoever shows progress.
#[derive(Debug, Default)]
pub struct Progress {
    /// Frames written so far.
    pub done: AtomicU64,
    /// Frames expected, 0 when unknown.
    pub total: AtomicU64,
}

/// What to export at the level of frames: input, output, range, encoder.
#[derive(Clone, Debug)]
pub struct ExportJob {
    /// The frame source to annotate (opened with [`crate::formats::open_source`]).
    pub input: PathBuf,
    /// How the source is opened (a rendered match's size and rate); the
    /// decoded YUV planes are always kept.
    pub open: OpenOptions,
    /// The annotated video to write (its extension picks the container).
    pub output: PathBuf,
    /// Start (video seconds): the export begins with the frame shown then.
    pub from: Option<f64>,
    /// End (video seconds): frames from this time on are left out.
    pub to: Option<f64>,
    /// Encoder settings (CRF, preset, threads); the time base, frame rate
    /// and audio source are filled in from the input.
    pub encoder: EncoderSettings,
    /// Copy the input's audio streams.
    pub copy_audio: bool,
    /// Other files the output must not overwrite (log, calibration, session).
    pub protected: Vec<PathBuf>,
    /// Show a progress bar on stderr (only drawn on a terminal).
    pub progress: bool,
    /// Count frames written here too (the viewer's progress bar).
    pub counter: Option<Arc<Progress>>,
    /// Write only this part of the export ([`Segment`]).
    pub segment: Option<Segment>,
    /// Seconds of frames before a part's first frame that the in-order
    /// preparation looks at (the adaptive mask's memory), so that a part
    /// starts with the state the whole export has there.
    pub lead_in: f64,
}

impl ExportJob {
    /// A whole-video export of `input` to `output` with default settings.
    pub fn new(input: impl Into<PathBuf>, output: impl Into<PathBuf>) -> Self {
        ExportJob {
            input: input.into(),
            open: OpenOptions::default(),
            output: output.into(),
            from: None,
            to: None,
            encoder: EncoderSettings::default(),
            copy_audio: true,
            protected: Vec::new(),
            progress: false,
            counter: None,
            segment: None,
            lead_in: 0.0,
        }
    }
}

/// What an export did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportReport {
    /// Frames written.
    pub frames: u64,
    /// Duration of the output in seconds.
    pub duration: f64,
    /// Wall-clock seconds the export took.
    pub elapsed: f64,
    /// Things the user should know that did not stop the export.
    pub warnings: Vec<String>,
    /// Where the CPU went.
    pub cpu: StageCpu,
}

/// Buffers in circulation beyond those held by each stage.
const SPARE_FRAMES: usize = 3;

/// A frame travelling to a worker with its preparation, or what stopped
/// reading.
enum Work<P> {
    Frame(u64, SourceFrame, P),
    Failed(u64, ExportError),
}

/// A processed frame travelling to the encoder.
enum Done {
    Frame(SourceFrame, Result<(), BoxError>),
    Failed(ExportError),
}

/// Flags shared by the stages.
#[derive(Clone, Copy)]
struct Signals<'a> {
    /// The encoder is done (finished or failed): stop decoding.
    stop: &'a AtomicBool,
    /// Set by the decoder when the input ends early: its announced duration
    /// then says nothing about the last frame.
    truncated: &'a AtomicBool,
    /// The user asked to stop.
    cancel: &'a AtomicBool,
}

/// What the decoding thread reports at the end.
#[derive(Default)]
struct DecodeSummary {
    warnings: Vec<String>,
    /// The reading thread's CPU, and of it the source's reads' and the
    /// preparation's.
    cpu: Duration,
    read_cpu: Duration,
    prepare_cpu: Duration,
}

/// Runs `job`, drawing with `processors` (one worker thread each; at least
/// one). Stops with [`ExportError::Interrupted`] soon after `cancel` is
/// set. On any error no output file is left behind.
pub fn run(
    job: &ExportJob,
    processors: Vec<SimpleProcessor<'_>>,
    cancel: &AtomicBool,
) -> Result<ExportReport, ExportError> {
    let processors = processors
        .into_iter()
        .map(|mut p| -> Processor<'_, ()> { Box::new(move |f: &mut SourceFrame, ()| p(f)) })
        .collect();
    run_planned(job, Box::new(|_: &mut SourceFrame| Ok(())), processors, cancel)
}

/// Like [`run`], with `prepare` run on every frame in frame order before
/// it goes to a processor with what `prepare` returned.
pub fn run_planned<P: Send>(
    job: &ExportJob,
    prepare: Preparer<'_, P>,
    processors: Vec<Processor<'_, P>>,
    cancel: &AtomicBool,
) -> Result<ExportReport, ExportError> {
    let start = Instant::now();
    let cpu_start = process_cpu();
    check_paths(job)?;
    let (from, to) = (
        job.from.unwrap_or(f64::NEG_INFINITY),
        job.to.unwrap_or(f64::INFINITY),
    );
    if from.is_nan() || to.is_nan() || from >= to || from == f64::INFINITY || to == f64::NEG_INFINITY {
        return Err(ExportError::BadRange { from, to });
    }
    // Pixels no drawing touches go to the encoder as they were decoded.
    // The pictures are converted to RGB on the workers, not here.
    let open = OpenOptions {
        keep_yuv: true,
        defer_rgb: true,
        ..job.open.clone()
    };
    let mut source = crate::formats::open_source(&job.input, &open)?;
    let info = source.info().clone();
    if info.duration > 0.0 && from >= info.start + info.duration {
        return Err(ExportError::EmptyRange {
            input: job.input.clone(),
            from,
            to,
            duration: info.duration,
        });
    }
    let mut first = match job.from {
        Some(f) => source.frame_at(f)?,
        None => None,
    };
    let span = span_of(job, &info, first.as_ref().map(|f| f.time), to)?;
    if span.from > f64::NEG_INFINITY {
        // A later part: start its lead-in, frames only prepared.
        first = source.frame_at(span.from - job.lead_in.max(0.0))?;
    }

    let temp = TempFile::beside(&job.output)?;
    let workers = processors.len().max(1);
    let pool_limit = 2 * workers + SPARE_FRAMES + 2;
    let (work_tx, work_rx) = bounded::<Work<P>>(workers + 1);
    let (done_tx, done_rx) = bounded::<(u64, Done)>(workers + 1);
    let (free_tx, free_rx) = unbounded::<SourceFrame>();
    let (stop, truncated) = (AtomicBool::new(false), AtomicBool::new(false));
    let signals = Signals {
        stop: &stop,
        truncated: &truncated,
        cancel,
    };

    let expected = expected_frames(&info, from.max(span.from), span.to);
    if let Some(c) = &job.counter {
        c.done.store(0, Ordering::Relaxed);
        c.total.store(expected.unwrap_or(0), Ordering::Relaxed);
    }
    let bar = progress_bar(job.progress, expected);
    if job.progress {
        crate::video::set_ffmpeg_quiet(true);
    }

    let result = std::thread::scope(|s| {
        let reading = Reading {
            source,
            first,
            prepare,
            input: &job.input,
            lead_until: span.from,
            to: span.to,
            pool_limit,
        };
        let decode = s.spawn(move || decode_stage(reading, work_tx, free_rx, signals));
        let mut processors = processors;
        if processors.is_empty() {
            processors.push(Box::new(|_: &mut SourceFrame, _: P| Ok(())));
        }
        let mut workers = Vec::new();
        for mut p in processors {
            let (rx, tx) = (work_rx.clone(), done_tx.clone());
            workers.push(s.spawn(move || {
                let c0 = thread_cpu();
                worker(&mut *p, &rx, &tx);
                thread_cpu().saturating_sub(c0)
            }));
        }
        // Only the threads hold the channel ends from here on, so each
        // stage sees the end when the one before it finishes.
        drop(work_rx);
        drop(done_tx);
        let e0 = thread_cpu();
        let mut encoding_cpu = Duration::ZERO;
        let encoded = encode_stage(
            job,
            &info,
            &span,
            &temp,
            done_rx,
            free_tx,
            &bar,
            signals,
            &mut encoding_cpu,
        );
        let encoder_cpu = thread_cpu().saturating_sub(e0);
        stop.store(true, Ordering::SeqCst);
        // A panic in the decoder is a bug: pass it on rather than write a
        // video that silently ends early.
        let summary = decode.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let workers_cpu: Duration = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .sum();
        encoded.map(|(frames, duration, warnings)| {
            (
                frames,
                duration,
                warnings,
                summary,
                workers_cpu,
                (encoder_cpu, encoding_cpu),
            )
        })
    });
    if job.progress {
        bar.finish_and_clear();
        crate::video::set_ffmpeg_quiet(false);
    }
    let (frames, duration, enc_warnings, summary, workers_cpu, (encoder_cpu, encoding_cpu)) = result?;
    temp.commit(&job.output)?;
    let cpu = StageCpu {
        process: process_cpu().saturating_sub(cpu_start),
        reading: summary.cpu,
        decoding: summary.read_cpu,
        prepare: summary.prepare_cpu,
        workers: workers_cpu,
        encoder: encoder_cpu,
        encoding: encoding_cpu,
    };
    let mut warnings = summary.warnings;
    warnings.extend(enc_warnings);
    Ok(ExportReport {
        frames,
        duration,
        elapsed: start.elapsed().as_secs_f64(),
        warnings,
        cpu,
    })
}

/// The container a stream output is written in: the one its name's
/// extension picks, else MP4 (fragmented).
fn stream_container(output: &Path) -> String {
    match output.extension().and_then(|e| e.to_str()) {
        Some(e) if crate::video::is_known_container(output) => e.to_ascii_lowercase(),
        _ => "mp4".to_owned(),
    }
}

/// Refuses outputs that are one of the inputs (also through links), and
/// outputs in folders that do not exist.
fn check_paths(job: &ExportJob) -> Result<(), ExportError> {
    let out = &job.output;
    let inputs = std::iter::once(&job.input).chain(&job.protected);
    crate::files::refuse_overwriting_inputs(out, inputs.map(PathBuf::as_path)).map_err(|e| {
        ExportError::SameFile {
            output: e.output,
            input: e.input,
        }
    })?;
    // A pipe, a device or `-` is written as a stream, in the container its
    // name says or MP4.
    if matches!(
        crate::files::target(out),
        Ok(crate::files::Target::Stream(_) | crate::files::Target::Stdout)
    ) {
        return Ok(());
    }
    if !crate::video::is_known_container(out) {
        return Err(ExportError::UnknownContainer { output: out.clone() });
    }
    let dir = crate::files::parent_dir(out);
    if !dir.is_dir() {
        return Err(ExportError::NoFolder { output: out.clone() });
    }
    Ok(())
}

/// Where the video is written: a temporary file renamed over the output
/// (through a symbolic link, over the file it names) when complete, or a
/// pipe, a device or standard output written as a stream.
struct TempFile(crate::files::Sink);

impl TempFile {
    /// The sink for `output`: the temporary file has the output's
    /// extension (which picks the container).
    fn beside(output: &Path) -> Result<TempFile, ExportError> {
        crate::files::Sink::open(output, None)
            .map(TempFile)
            .map_err(|source| ExportError::Io {
                path: output.to_owned(),
                source,
            })
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Whether the output is a stream (written as fragmented MP4, or the
    /// stream form of its container).
    fn is_stream(&self) -> bool {
        self.0.is_stream()
    }

    /// An encoder error about the temporary file, told about the output
    /// the user named instead.
    fn name_output(&self, e: VideoError, output: &Path) -> VideoError {
        e.naming(self.path(), output)
    }

    fn commit(self, output: &Path) -> Result<(), ExportError> {
        self.0.finish().map_err(|source| ExportError::Io {
            path: output.to_owned(),
            source,
        })
    }
}

/// Frames expected between `from` and `to`, for progress bars.
pub fn expected_frames(info: &SourceInfo, from: f64, to: f64) -> Option<u64> {
    let end = info.start + info.duration;
    let span = to.min(end) - from.max(info.start);
    if info.fps > 0.0 && span.is_finite() && span > 0.0 {
        if from <= info.start
            && to >= end
            && let Some(n) = info.frame_count
        {
            return Some(n);
        }
        return Some((span * info.fps).round() as u64);
    }
    info.frame_count
}

fn progress_bar(show: bool, len: Option<u64>) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len.unwrap_or(0));
    let template = if len.is_some() {
        "{bar:30} {pos}/{len} frames  {fps}  ETA {eta}"
    } else {
        "{spinner} {pos} frames  {fps}"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        let fps = |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0} frames/s", s.per_sec());
        };
        bar.set_style(style.with_key("fps", fps));
    }
    bar
}

/// What the reading thread works with.
struct Reading<'a, P> {
    source: Box<dyn FrameSource>,
    /// The frame shown at `--from`, read when the source was positioned.
    first: Option<SourceFrame>,
    prepare: Preparer<'a, P>,
    input: &'a Path,
    /// Frames before this time are only prepared (a part's lead-in).
    lead_until: f64,
    to: f64,
    pool_limit: usize,
}

/// Reads frames into circulating buffers, prepares each in order and hands
/// them to the workers.
fn decode_stage<P>(
    mut r: Reading<'_, P>,
    work: Sender<Work<P>>,
    free: Receiver<SourceFrame>,
    sig: Signals<'_>,
) -> DecodeSummary {
    let cpu0 = thread_cpu();
    let mut summary = DecodeSummary::default();
    let mut made = 0;
    let mut seq = 0;
    let mut last_time = f64::NEG_INFINITY;
    let mut dropped = 0u64;
    let mut spare = None;
    if r.first.is_some() {
        made += 1;
    }
    loop {
        if sig.stop.load(Ordering::SeqCst) || sig.cancel.load(Ordering::SeqCst) {
            break;
        }
        let frame = match r.first.take() {
            Some(f) => Ok(f),
            None => next_frame(&mut r, &mut spare, &mut made, &free, &mut summary.read_cpu),
        };
        let frame = match frame {
            Ok(f) => f,
            Err(Next::Wait) => continue,
            Err(Next::End) => break,
            Err(Next::Failed(SourceError::Video(e @ VideoError::Truncated { .. }))) if seq > 0 => {
                // Keep what decoded; say so.
                sig.truncated.store(true, Ordering::SeqCst);
                let e = crate::error::chain(&e);
                summary
                    .warnings
                    .push(format!("{e}; exported the {seq} frames before it"));
                break;
            }
            Err(Next::Failed(e)) => {
                let _ = work.send(Work::Failed(seq, e.into()));
                break;
            }
        };
        if frame.time >= r.to {
            break;
        }
        if frame.time <= last_time {
            // Broken timestamps: a frame cannot be shown before the previous
            // one. Its buffer is reused for the next frame.
            dropped += 1;
            spare = Some(frame);
            continue;
        }
        last_time = frame.time;
        let mut frame = frame;
        let p0 = thread_cpu();
        let prepared = (r.prepare)(&mut frame);
        summary.prepare_cpu += thread_cpu().saturating_sub(p0);
        if frame.time < r.lead_until && prepared.is_ok() {
            // A part's lead-in: the state is what counts; not written.
            spare = Some(frame);
            continue;
        }
        let msg = match prepared {
            Ok(p) => Work::Frame(seq, frame, p),
            Err(source) => Work::Failed(
                seq,
                ExportError::Process {
                    input: r.input.to_owned(),
                    index: frame.index,
                    time: frame.time,
                    source,
                },
            ),
        };
        let failed = matches!(msg, Work::Failed(..));
        if work.send(msg).is_err() || failed {
            break;
        }
        seq += 1;
    }
    if dropped > 0 {
        summary.warnings.push(format!(
            "{}: left out {dropped} frames whose timestamps did not increase",
            r.input.display()
        ));
    }
    summary.cpu = thread_cpu().saturating_sub(cpu0);
    summary
}

/// Why no frame came from [`next_frame`].
enum Next {
    /// No free buffer yet; look at the signals and try again.
    Wait,
    /// The source ended, or the encoder is gone.
    End,
    Failed(SourceError),
}

/// The next frame, read into a free buffer (a new one while fewer than
/// the pool's limit exist).
fn next_frame<P>(
    r: &mut Reading<'_, P>,
    spare: &mut Option<SourceFrame>,
    made: &mut usize,
    free: &Receiver<SourceFrame>,
    read_cpu: &mut Duration,
) -> Result<SourceFrame, Next> {
    let mut frame = match spare.take().map_or_else(|| free.try_recv(), Ok) {
        Ok(f) => f,
        Err(_) if *made < r.pool_limit => {
            *made += 1;
            SourceFrame::empty()
        }
        Err(_) => match free.recv_timeout(Duration::from_millis(100)) {
            Ok(f) => f,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => return Err(Next::Wait),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Err(Next::End),
        },
    };
    let c0 = thread_cpu();
    let read = r.source.read_into(&mut frame);
    *read_cpu += thread_cpu().saturating_sub(c0);
    match read {
        Ok(true) => Ok(frame),
        Ok(false) => Err(Next::End),
        Err(e) => Err(Next::Failed(e)),
    }
}

/// Runs one processor on frames until the decoder is done.
fn worker<P>(
    process: &mut (dyn FnMut(&mut SourceFrame, P) -> Result<(), BoxError> + Send),
    work: &Receiver<Work<P>>,
    done: &Sender<(u64, Done)>,
) {
    for item in work.iter() {
        let msg = match item {
            Work::Frame(seq, mut f, p) => {
                // What was painted in RGB is converted back here, in
                // parallel, not on the threads that see every frame.
                let r = process(&mut f, p).and_then(|()| f.bake_yuv().map_err(BoxError::from));
                (seq, Done::Frame(f, r))
            }
            Work::Failed(seq, e) => (seq, Done::Failed(e)),
        };
        if done.send(msg).is_err() {
            break;
        }
    }
}

/// Puts processed frames back in order and encodes them; returns frames
/// written, output duration and encoder warnings, and adds the CPU spent
/// in the encoder's calls to `encoding_cpu`.
#[allow(clippy::too_many_arguments)]
fn encode_stage(
    job: &ExportJob,
    info: &SourceInfo,
    span: &Span,
    temp: &TempFile,
    done: Receiver<(u64, Done)>,
    free: Sender<SourceFrame>,
    bar: &indicatif::ProgressBar,
    sig: Signals<'_>,
    encoding_cpu: &mut Duration,
) -> Result<(u64, f64, Vec<String>), ExportError> {
    let mut pending: BTreeMap<u64, Done> = BTreeMap::new();
    let mut next = 0u64;
    let mut encoder: Option<Encoder> = None;
    let t0 = span.t0;
    let mut last_out = 0.0;
    // The output time of the first frame (later than 0 in a later part).
    let mut first_out: Option<f64> = None;
    loop {
        if sig.cancel.load(Ordering::SeqCst) {
            return Err(crate::Interrupted.into());
        }
        match done.recv_timeout(Duration::from_millis(100)) {
            Ok((seq, d)) => {
                pending.insert(seq, d);
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        }
        while let Some(d) = pending.remove(&next) {
            let frame = match d {
                Done::Failed(e) => return Err(e),
                Done::Frame(f, Err(source)) => {
                    return Err(ExportError::Process {
                        input: job.input.clone(),
                        index: f.index,
                        time: f.time,
                        source,
                    });
                }
                Done::Frame(f, Ok(())) => f,
            };
            let enc = match &mut encoder {
                Some(e) => e,
                None => {
                    let (w, h) = frame.size();
                    let mut settings = job.encoder.clone();
                    settings.time_base = info.time_base;
                    if info.fps > 0.0 {
                        settings.fps_hint = info.fps;
                    }
                    if job.copy_audio
                        && let Some(audio) = &info.audio
                    {
                        settings.audio_from = Some(audio.clone());
                        settings.audio_window = span.audio;
                    }
                    settings.comment = job.segment.map(|s| s.comment());
                    if temp.is_stream() {
                        settings.stream_format = Some(stream_container(&job.output));
                    }
                    let enc = Encoder::create(temp.path(), w as u32, h as u32, &settings);
                    encoder.insert(enc.map_err(|e| temp.name_output(e, &job.output))?)
                }
            };
            last_out = frame.time - t0;
            first_out.get_or_insert(last_out);
            let c0 = thread_cpu();
            let pushed = enc.push_frame(&frame, last_out);
            *encoding_cpu += thread_cpu().saturating_sub(c0);
            pushed.map_err(|e| temp.name_output(e, &job.output))?;
            bar.inc(1);
            if let Some(c) = &job.counter {
                c.done.fetch_add(1, Ordering::Relaxed);
            }
            next += 1;
            // The decoder may be gone already; then the buffer is just freed.
            let _ = free.send(frame);
        }
    }
    // A gap in the sequence: only possible if a stage died.
    if let Some(d) = pending.into_values().next() {
        return Err(match d {
            Done::Failed(e) => e,
            Done::Frame(f, _) => ExportError::Lost {
                input: job.input.clone(),
                index: next,
                time: f.time,
            },
        });
    }
    let Some(enc) = encoder else {
        let from = job.from.unwrap_or(0.0);
        return Err(ExportError::EmptyRange {
            input: job.input.clone(),
            from,
            to: job.to.unwrap_or(info.duration),
            duration: info.duration,
        });
    };
    let warnings = enc.warnings().to_vec();
    let frames = enc.frames();
    // The last frame lasts until the end of the range or of the input.
    let end = span
        .end
        .unwrap_or_else(|| job.to.unwrap_or(info.duration).min(info.duration.max(0.0)));
    let end_out = end - t0;
    let duration;
    if end > 0.0 && end_out > last_out && !sig.truncated.load(Ordering::SeqCst) {
        duration = end_out;
        enc.finish_at(end_out)
            .map_err(|e| temp.name_output(e, &job.output))?;
    } else {
        duration = last_out;
        enc.finish().map_err(|e| temp.name_output(e, &job.output))?;
    }
    // A part's own length.
    let duration = match (job.segment, first_out) {
        (Some(_), Some(first)) => duration - first,
        _ => duration,
    };
    Ok((frames, duration, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::RgbImage;
    use crate::video::{Decoder, Encoder, EncoderSettings};

    fn level(i: usize) -> u8 {
        (20 + 9 * i) as u8
    }

    /// A small input: one solid gray level per frame at the given times.
    fn input(dir: &Path, times: &[f64]) -> PathBuf {
        let p = dir.join("in.mp4");
        let s = EncoderSettings {
            crf: 8,
            preset: "ultrafast".into(),
            ..Default::default()
        };
        let mut e = Encoder::create(&p, 64, 48, &s).unwrap();
        for (i, &t) in times.iter().enumerate() {
            e.push(&RgbImage::from_elem((48, 64, 3), level(i)), t).unwrap();
        }
        e.finish().unwrap();
        p
    }

    fn crisp_job(input: &Path, output: &Path) -> ExportJob {
        let mut job = ExportJob::new(input, output);
        job.encoder.crf = 8;
        job.encoder.preset = "ultrafast".into();
        job
    }

    /// Paints a red 16×16 square in the top-left corner.
    fn red_square<'a>() -> SimpleProcessor<'a> {
        Box::new(|f: &mut SourceFrame| {
            f.finish_rgb();
            let img = &mut f.image;
            for y in 0..16 {
                for x in 0..16 {
                    img[[y, x, 0]] = 250;
                    img[[y, x, 1]] = 10;
                    img[[y, x, 2]] = 10;
                }
            }
            // Only the square needs converting back.
            if let Some(yuv) = &mut f.yuv {
                yuv.mark_changed([0, 0, 16, 16]);
            }
            Ok(())
        })
    }

    fn decode_all(p: &Path) -> Vec<SourceFrame> {
        let mut d = Decoder::open(p).unwrap();
        let mut v = Vec::new();
        while let Some(f) = d.next_frame().unwrap() {
            v.push(f);
        }
        v
    }

    fn which(img: &RgbImage) -> usize {
        ((f64::from(img[[40, 50, 1]]) - 20.0) / 9.0).round() as usize
    }

    #[test]
    fn whole_export_keeps_frames_and_times_and_draws() {
        let dir = tempfile::tempdir().unwrap();
        let times = [0.0, 0.05, 0.1, 0.2, 0.25, 0.4, 0.45, 0.5, 0.7, 0.75, 0.8, 1.0];
        let inp = input(dir.path(), &times);
        let out = dir.path().join("out.mp4");
        let report = run(
            &crisp_job(&inp, &out),
            vec![red_square()],
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(report.frames, times.len() as u64);
        let frames = decode_all(&out);
        assert_eq!(frames.len(), times.len());
        for (i, (f, t)) in frames.iter().zip(times).enumerate() {
            assert!((f.time - t).abs() < 1e-6, "frame {i}: {} vs {t}", f.time);
            assert_eq!(which(&f.image), i);
            let px = f.image.slice(ndarray::s![8, 8, ..]).to_vec();
            assert!(px[0] > 230 && px[1] < 40 && px[2] < 40, "frame {i}: {px:?}");
        }
        let din = Decoder::open(&inp).unwrap().info().duration;
        let dout = Decoder::open(&out).unwrap().info().duration;
        assert!((din - dout).abs() < 1e-6, "{din} vs {dout}");
        assert_eq!(crate::files::sorted_names(dir.path()), ["in.mp4", "out.mp4"]);
    }

    #[test]
    fn parallel_workers_keep_frame_order() {
        let dir = tempfile::tempdir().unwrap();
        let times: Vec<f64> = (0..24).map(|i| f64::from(i) / 24.0).collect();
        let inp = input(dir.path(), &times);
        let out = dir.path().join("par.mp4");
        // Workers of different speeds, so frames finish out of order.
        let slow: SimpleProcessor<'_> = Box::new(|_: &mut SourceFrame| {
            std::thread::sleep(Duration::from_millis(15));
            Ok(())
        });
        let fast: SimpleProcessor<'_> = Box::new(|_: &mut SourceFrame| Ok(()));
        run(
            &crisp_job(&inp, &out),
            vec![slow, fast, red_square()],
            &AtomicBool::new(false),
        )
        .unwrap();
        let got: Vec<usize> = decode_all(&out).iter().map(|f| which(&f.image)).collect();
        assert_eq!(got, (0..24).collect::<Vec<_>>());
    }

    #[test]
    fn a_part_starts_at_zero_with_the_frame_shown_at_from() {
        let dir = tempfile::tempdir().unwrap();
        let times: Vec<f64> = (0..20).map(|i| f64::from(i) / 10.0).collect();
        let inp = input(dir.path(), &times);
        let out = dir.path().join("part.mp4");
        let mut job = crisp_job(&inp, &out);
        job.from = Some(0.55);
        job.to = Some(1.0);
        let seen = std::sync::Mutex::new(Vec::new());
        let p: SimpleProcessor<'_> = Box::new(|f: &mut SourceFrame| {
            let t = f.time;
            seen.lock().unwrap().push(t);
            Ok(())
        });
        let report = run(&job, vec![p], &AtomicBool::new(false)).unwrap();
        let frames = decode_all(&out);
        let got: Vec<usize> = frames.iter().map(|f| which(&f.image)).collect();
        assert_eq!(got, [5, 6, 7, 8, 9]);
        assert!(frames[0].time.abs() < 1e-6 && (frames[4].time - 0.4).abs() < 1e-6);
        // Processors see input times.
        let seen = seen.into_inner().unwrap();
        assert!((seen[0] - 0.5).abs() < 1e-6, "{seen:?}");
        assert!((report.duration - 0.5).abs() < 1e-6, "{report:?}");
    }

    /// Exports `job` with a preparer that counts the frames it saw and a
    /// processor that paints the count into the top-left corner.
    fn counted(job: &ExportJob) -> ExportReport {
        let mut seen = 0u8;
        let prepare: Preparer<'_, u8> = Box::new(move |_: &mut SourceFrame| {
            seen += 1;
            Ok(seen)
        });
        let paint: Processor<'_, u8> = Box::new(|f: &mut SourceFrame, n: u8| {
            f.finish_rgb();
            for y in 0..16 {
                for x in 0..16 {
                    for c in 0..3 {
                        f.image[[y, x, c]] = 10 * n;
                    }
                }
            }
            if let Some(yuv) = &mut f.yuv {
                yuv.mark_changed([0, 0, 16, 16]);
            }
            Ok(())
        });
        run_planned(job, prepare, vec![paint], &AtomicBool::new(false)).unwrap()
    }

    #[test]
    fn parts_with_a_lead_in_join_into_the_whole_export() {
        let dir = tempfile::tempdir().unwrap();
        let times: Vec<f64> = (0..20).map(|i| f64::from(i) / 10.0).collect();
        let inp = input(dir.path(), &times);
        let whole = dir.path().join("whole.mp4");
        counted(&crisp_job(&inp, &whole));
        let mut parts = Vec::new();
        for (k, lead_in) in (1..=4).zip([0.0, 0.25, 5.0, 5.0]) {
            let out = dir.path().join(format!("p{k}.mp4"));
            let mut job = crisp_job(&inp, &out);
            job.segment = Some(Segment { index: k, count: 4 });
            job.lead_in = lead_in;
            let report = counted(&job);
            assert_eq!(report.frames, 5, "part {k}");
            parts.push(out);
        }
        let joined = dir.path().join("joined.mp4");
        crate::video::concat::join(&parts, &joined).unwrap();
        let count = |f: &SourceFrame| (f64::from(f.image[[8, 8, 1]]) / 10.0).round() as usize;
        let (w, j) = (decode_all(&whole), decode_all(&joined));
        assert_eq!(w.len(), 20);
        assert_eq!(j.len(), 20);
        for (i, (a, b)) in w.iter().zip(&j).enumerate() {
            assert!((a.time - b.time).abs() < 1e-9 && (a.time - times[i]).abs() < 1e-6);
            assert_eq!(which(&b.image), i);
            assert_eq!(count(a), i + 1, "frame {i} of the whole export");
            // Part 2's lead-in of 0.25 s starts with the frame shown then
            // (0.2 s) and sees 3 frames before its own, not 5: a lead-in
            // shorter than the state's memory shows.
            let want = match i {
                5..=9 => i + 1 - 2,
                _ => i + 1,
            };
            assert_eq!(count(b), want, "frame {i} of the joined parts");
        }
    }

    #[test]
    fn a_failing_frame_is_named_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let times: Vec<f64> = (0..15).map(|i| f64::from(i) / 10.0).collect();
        let inp = input(dir.path(), &times);
        let out = dir.path().join("fail.mp4");
        let p: SimpleProcessor<'_> = Box::new(|f: &mut SourceFrame| {
            let t = f.time;
            if t > 0.75 {
                Err("the overlay broke".into())
            } else {
                Ok(())
            }
        });
        let e = run(&crisp_job(&inp, &out), vec![p], &AtomicBool::new(false)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("frame 8") && msg.contains("0.800 s") && msg.contains("in.mp4"),
            "{msg}"
        );
        assert!(std::error::Error::source(&e).is_some_and(|s| s.to_string() == "the overlay broke"));
        assert_eq!(crate::files::sorted_names(dir.path()), ["in.mp4"]);
    }

    #[test]
    fn cancelling_stops_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let times: Vec<f64> = (0..40).map(|i| f64::from(i) / 10.0).collect();
        let inp = input(dir.path(), &times);
        let out = dir.path().join("cancel.mp4");
        let cancel = AtomicBool::new(false);
        let p: SimpleProcessor<'_> = Box::new(|f: &mut SourceFrame| {
            let t = f.time;
            if t >= 1.0 {
                cancel.store(true, Ordering::SeqCst);
            }
            Ok(())
        });
        let e = run(&crisp_job(&inp, &out), vec![p], &cancel).unwrap_err();
        assert!(matches!(e, ExportError::Interrupted(_)), "{e}");
        assert_eq!(crate::files::sorted_names(dir.path()), ["in.mp4"]);
    }

    #[test]
    fn refuses_to_overwrite_its_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let inp = input(dir.path(), &[0.0, 0.1]);
        let before = std::fs::read(&inp).unwrap();
        let e = run(&crisp_job(&inp, &inp), vec![], &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(e, ExportError::SameFile { .. }), "{e}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link.mp4");
            std::os::unix::fs::symlink(&inp, &link).unwrap();
            let e = run(&crisp_job(&inp, &link), vec![], &AtomicBool::new(false)).unwrap_err();
            assert!(e.to_string().contains("refusing"), "{e}");
            let log = dir.path().join("run.log");
            std::fs::write(&log, "x").unwrap();
            let mut job = crisp_job(&inp, &log);
            job.protected.push(log.clone());
            assert!(run(&job, vec![], &AtomicBool::new(false)).is_err());
            assert_eq!(std::fs::read(&log).unwrap(), b"x");
        }
        assert_eq!(std::fs::read(&inp).unwrap(), before);
    }

    #[test]
    fn bad_ranges_and_places_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let inp = input(dir.path(), &[0.0, 0.1, 0.2]);
        let mut job = crisp_job(&inp, &dir.path().join("o.mp4"));
        job.from = Some(5.0);
        let e = run(&job, vec![], &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing to export") && e.contains("in.mp4"), "{e}");
        job.from = Some(0.2);
        job.to = Some(0.1);
        assert!(matches!(
            run(&job, vec![], &AtomicBool::new(false)),
            Err(ExportError::BadRange { .. })
        ));
        let mut job = crisp_job(&inp, &dir.path().join("preset.mp4"));
        job.encoder.preset = "warp-speed".into();
        let e = run(&job, vec![], &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("preset.mp4") && !e.contains("partial") && e.contains("warp-speed"),
            "{e}"
        );
        let job = crisp_job(&inp, &dir.path().join("o.notavideo"));
        let e = run(&job, vec![], &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("o.notavideo") && e.contains("extension"), "{e}");
        let job = crisp_job(&inp, &dir.path().join("no/such/folder/o.mp4"));
        let e = run(&job, vec![], &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("folder"), "{e}");
        let job = crisp_job(&dir.path().join("missing.mp4"), &dir.path().join("o.mp4"));
        let e = run(&job, vec![], &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.mp4"), "{e}");
        assert_eq!(crate::files::sorted_names(dir.path()), ["in.mp4"]);
    }
}
