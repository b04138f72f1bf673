//! `underlay export`: write an annotated video.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;

use crate::export::{ExportError, ExportJob, Processor};
use crate::pipeline::Pipeline;
use crate::session::{CalibrationSource, Session};
use crate::video::SourceFrame;

/// Arguments of `underlay export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session to export (video, log, calibration, offset, mask, filter).
    #[arg(value_name = "SESSION.toml", required_unless_present = "video")]
    pub session: Option<PathBuf>,
    /// Output video (H.264 in MP4).
    #[arg(short, long, value_name = "OUT.mp4")]
    pub output: PathBuf,
    /// Video to annotate, when no session is given.
    #[arg(long, value_name = "VIDEO", conflicts_with = "session", requires_all = ["log", "calib"])]
    pub video: Option<PathBuf>,
    /// Log to draw, when no session is given (any format underlay reads).
    #[arg(long, value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Calibration file, when no session is given.
    #[arg(long, value_name = "CALIB.toml")]
    pub calib: Option<PathBuf>,
    /// Log time = video time + OFFSET (seconds); overrides the session's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub offset: Option<f64>,
    /// Start of the exported part (video seconds).
    #[arg(long, value_name = "S")]
    pub from: Option<f64>,
    /// End of the exported part (video seconds).
    #[arg(long, value_name = "S")]
    pub to: Option<f64>,
    /// Draw only primitives with level ≤ N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_level: Option<i32>,
    /// Draw only this entity and its descendants (repeatable).
    #[arg(long = "entity", value_name = "NAME")]
    pub entities: Vec<String>,
    /// Draw over everything (no floor mask).
    #[arg(long)]
    pub no_mask: bool,
    /// x264 constant rate factor (0–51, lower is better).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u8).range(0..=51))]
    pub crf: u8,
    /// x264 preset (ultrafast … veryslow).
    #[arg(long, value_name = "P", default_value = "veryfast")]
    pub preset: String,
}

/// Exports the annotated video; Ctrl-C stops it with [`crate::Interrupted`].
pub fn run(args: Args) -> anyhow::Result<()> {
    let (session, session_file) = session_of(&args)?;
    let log = Arc::new(session.load_logs().context("reading the logs")?);

    // One pipeline per worker. Masking and drawing cost far less than
    // decoding and x264 together, so one worker is enough on small
    // machines; bigger ones draw in parallel.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = (cores / 4).clamp(1, 4);
    // Unknown entity names, a bad calibration or mask settings fail here,
    // before any frame is decoded.
    let settings = session.draw_settings()?;
    let first = Pipeline::new(log, &settings)
        .with_context(|| format!("setting up the drawing for {}", session.video.display()))?;
    let info = crate::video::Decoder::open(&session.video)
        .with_context(|| format!("opening the video {}", session.video.display()))?
        .info()
        .clone();
    first
        .check_video(info.width as usize, info.height as usize, info.frame_count)
        .with_context(|| format!("the mask does not fit the video {}", session.video.display()))?;
    let mut pipelines = Vec::with_capacity(workers);
    for _ in 1..workers {
        pipelines.push(first.fork().context("building the floor mask")?);
    }
    let log_range = first.log().time_range();
    let instants = first.index().instant_count();
    pipelines.push(first);
    // Primitives drawn and refused over all frames, for the summary.
    let tally = Arc::new(Tally::default());
    let processors: Vec<Processor<'static>> = pipelines
        .into_iter()
        .map(|mut pipeline| -> Processor<'static> {
            let tally = Arc::clone(&tally);
            Box::new(move |frame: &mut SourceFrame| {
                let stats = pipeline.process(frame)?;
                tally.add(&stats);
                Ok(())
            })
        })
        .collect();

    let mut job = ExportJob::new(&session.video, &args.output);
    job.from = args.from;
    job.to = args.to;
    job.encoder.crf = args.crf;
    job.encoder.preset = args.preset.clone();
    job.progress = std::io::stderr().is_terminal();
    job.protected.extend(session.inputs());
    job.protected.extend(session_file);

    let cancel = super::cancel_on_ctrl_c("export");
    let report = match crate::export::run(&job, processors, &cancel) {
        Ok(r) => r,
        Err(ExportError::Interrupted(i)) => return Err(i.into()),
        Err(e) => return Err(e).with_context(|| format!("exporting {}", args.output.display())),
    };
    for w in report
        .warnings
        .iter()
        .cloned()
        .chain(tally.warnings(log_range, instants, session.offset))
    {
        eprintln!("underlay: warning: {w}");
    }
    eprintln!(
        "wrote {}: {} frames, {:.2} s of video, in {:.1} s ({:.0} frames/s)",
        args.output.display(),
        report.frames,
        report.duration,
        report.elapsed,
        report.frames as f64 / report.elapsed.max(1e-9)
    );
    Ok(())
}

/// The session to export: the file given, or one made of `--video`,
/// `--log`, `--calib` and `--offset`; then the command line's filter and
/// mask choices on top.
fn session_of(args: &Args) -> anyhow::Result<(Session, Option<PathBuf>)> {
    let (mut session, file) = match (&args.session, &args.video) {
        (Some(path), _) => {
            let mut s =
                Session::load(path).with_context(|| format!("reading the session {}", path.display()))?;
            if let Some(offset) = args.offset {
                anyhow::ensure!(offset.is_finite(), "--offset must be a finite number of seconds");
                s.offset = offset;
            }
            (s, Some(path.clone()))
        }
        (None, Some(video)) => {
            let log = args.log.clone().context("--log is needed with --video")?;
            let calib = args.calib.clone().context("--calib is needed with --video")?;
            let offset = args.offset.unwrap_or(0.0);
            anyhow::ensure!(offset.is_finite(), "--offset must be a finite number of seconds");
            let mut s = Session::new(video, log);
            s.offset = offset;
            s.calibration = Some(CalibrationSource::File { file: calib });
            (s, None)
        }
        (None, None) => anyhow::bail!("give a session file, or --video with --log and --calib"),
    };
    if args.max_level.is_some() {
        session.filter.max_level = args.max_level;
    }
    if !args.entities.is_empty() {
        session.filter.only = args.entities.clone();
    }
    if args.no_mask {
        session.draw.floor_mask = false;
    }
    Ok((session, file))
}

/// What the pipelines drew over a whole export.
#[derive(Default)]
struct Tally {
    frames: AtomicU64,
    /// Frames shown with an instantaneous log frame.
    with_instant: AtomicU64,
    drawn: AtomicU64,
    skipped: AtomicU64,
    /// Why the first refused primitive was refused.
    reason: std::sync::Mutex<Option<crate::draw::SkipReason>>,
}

impl Tally {
    fn add(&self, s: &crate::pipeline::FrameStats) {
        self.frames.fetch_add(1, Ordering::Relaxed);
        self.with_instant
            .fetch_add(u64::from(s.instant), Ordering::Relaxed);
        self.drawn.fetch_add(s.drawn as u64, Ordering::Relaxed);
        self.skipped.fetch_add(s.skipped as u64, Ordering::Relaxed);
        if let Some(r) = s.skip_reason
            && let Ok(mut first) = self.reason.lock()
        {
            first.get_or_insert(r);
        }
    }

    /// Warnings a user would want after an export: nothing drawn at all,
    /// or none of the log's `instants` instantaneous frames shown (both
    /// most often a wrong offset), or primitives that could not be drawn.
    fn warnings(&self, log_range: Option<(f64, f64)>, instants: usize, offset: f64) -> Vec<String> {
        let mut out = Vec::new();
        let (frames, with_instant, drawn, skipped) = (
            self.frames.load(Ordering::Relaxed),
            self.with_instant.load(Ordering::Relaxed),
            self.drawn.load(Ordering::Relaxed),
            self.skipped.load(Ordering::Relaxed),
        );
        let what = if drawn == 0 {
            "nothing was drawn"
        } else {
            "only the log's persistent drawings were shown, none of its instantaneous frames,"
        };
        if frames > 0 && (drawn == 0 || (instants > 0 && with_instant == 0)) {
            let range = match log_range {
                Some((a, b)) => format!(
                    "the log covers {a:.3}–{b:.3} s, which video times {:.3}–{:.3} s show with the offset {offset:.3} s",
                    a - offset,
                    b - offset
                ),
                None => "the log has no frame with a time".to_string(),
            };
            out.push(format!(
                "{what} on any of the {frames} frames: {range}; check the offset \
                 (in `underlay view`, align a log event with the video) and the entity and level filter"
            ));
        }
        if skipped > 0 {
            let why = self
                .reason
                .lock()
                .ok()
                .and_then(|r| *r)
                .map_or(String::new(), |r| format!(" (the first: {r})"));
            out.push(format!("{skipped} primitives could not be drawn{why}"));
        }
        out
    }
}
