//! `underlay export`: write an annotated video.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;

use crate::export::{ExportError, ExportOptions, ExportPlan};
use crate::session::{CalibrationSource, Session};
use crate::video::TimeArg;

/// Arguments of `underlay export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session to export (video, log, calibration, offset, mask,
    /// filter), or a match to render and export (a 2D-league game log, a
    /// 3D-league monitor log, an SSL game log) with its own drawings.
    #[arg(value_name = "SESSION.toml|MATCH", required_unless_present = "video")]
    pub session: Option<PathBuf>,
    /// Output video (H.264 in MP4).
    #[arg(short, long, value_name = "OUT.mp4")]
    pub output: PathBuf,
    /// Video to annotate, when no session is given.
    #[arg(long, value_name = "VIDEO", conflicts_with = "session", requires = "logs")]
    pub video: Option<PathBuf>,
    /// Log to draw, when no session is given (any format underlay reads;
    /// over a match: more logs, such as its agents' debug logs; repeatable).
    #[arg(long = "log", value_name = "LOG", visible_aliases = ["dlog", "perception", "roboviz"])]
    pub logs: Vec<PathBuf>,
    /// Calibration file, when no session is given.
    #[arg(long, value_name = "CALIB.toml")]
    pub calib: Option<PathBuf>,
    /// Log time = video time + OFFSET (seconds); overrides the session's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = super::common::parse_offset)]
    pub offset: Option<f64>,
    /// Start of the exported part: video seconds, or for a match seconds
    /// of its game clock (or cycles: `1200c`).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub from: Option<TimeArg>,
    /// End of the exported part (as --from).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub to: Option<TimeArg>,
    /// Picture size of a rendered match, `WIDTHxHEIGHT` (default 1280x720).
    #[arg(long, value_name = "WxH", value_parser = super::common::parse_size)]
    pub size: Option<[usize; 2]>,
    #[command(flatten)]
    pub shown: super::common::MatchArgs,
    /// Pictures per second of a rendered match, 0.1 to 240 (default: one
    /// per record for the simulators, 30 for SSL logs).
    #[arg(long, value_name = "N", value_parser = super::common::parse_fps)]
    pub fps: Option<f64>,
    /// Draw only primitives with level ≤ N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_level: Option<i32>,
    /// Draw only this entity and its descendants (repeatable).
    #[arg(long = "entity", value_name = "NAME")]
    pub entities: Vec<String>,
    /// Of a ROS 2 recording: draw only these topics' drawings
    /// (`/markers,/plan`; their entities are named by the topic).
    #[arg(long, value_name = "TOPIC,…", value_delimiter = ',')]
    pub topics: Vec<String>,
    /// Draw over everything (no floor mask).
    #[arg(long)]
    pub no_mask: bool,
    /// Draw shapes with heights flattened onto the floor when the
    /// calibration knows only the floor (else they are left out, and the
    /// export says why)
    #[arg(long)]
    pub flatten_heights: bool,
    /// Export even though the session has no calibration (then only the
    /// log's shapes in the picture's own pixels are drawn).
    #[arg(long)]
    pub no_calibration: bool,
    /// x264 constant rate factor (0–51, lower is better).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u8).range(0..=51))]
    pub crf: u8,
    /// x264 preset (ultrafast … veryslow).
    #[arg(long, value_name = "P", default_value = "veryfast")]
    pub preset: String,
    /// Drawing threads (default: a quarter of the cores, 1 to 4); the
    /// output is the same whatever the number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=64))]
    pub workers: Option<u8>,
    /// Write only part K of N of the export (`K/N`), cut at times every
    /// part computes alike, to be joined with `underlay concat`; `task`
    /// takes this task's part of a Slurm array (`task/N` for a Kubernetes
    /// Indexed Job of N completions).
    #[arg(long, value_name = "K/N", value_parser = super::common::parse_segment)]
    pub segment: Option<crate::export::Segment>,
    /// Also print where the CPU went: the stages that see the frames in
    /// order (reading, encoding), the workers, and the rest (FFmpeg's and
    /// x264's own threads).
    #[arg(long)]
    pub stats: bool,
}

/// Exports the annotated video; Ctrl-C stops it with [`crate::Interrupted`].
pub fn run(args: Args) -> anyhow::Result<()> {
    let (session, session_file) = session_of(&args)?;
    let options = ExportOptions {
        output: args.output.clone(),
        from: args.from,
        to: args.to,
        size: args.size,
        fps: args.fps,
        follow: args.shown.follow.clone(),
        zoom: args.shown.zoom,
        tilt: args.shown.tilt,
        agent_view: args.shown.agent_view.clone(),
        crf: args.crf,
        preset: args.preset.clone(),
        no_mask: args.no_mask,
        flatten_heights: args.flatten_heights,
        offset: args.offset,
        max_level: args.max_level,
        entities: args
            .entities
            .iter()
            .cloned()
            .chain(args.topics.iter().map(|t| t.trim_matches('/').to_owned()))
            .collect(),
        workers: args.workers.map(usize::from),
        progress_bar: std::io::stderr().is_terminal(),
        no_calibration: args.no_calibration,
        segment: args.segment,
    };
    // Unknown entity names, a bad calibration or mask settings fail here,
    // before any frame is decoded.
    let video = session.video.clone();
    let plan = export_plan(session, session_file.as_deref(), &options)
        .with_context(|| format!("exporting {}", video.display()))?;
    let cancel = super::common::cancel_on_ctrl_c("export");
    let report = match plan.run(&cancel, None) {
        Ok(r) => r,
        Err(ExportError::Interrupted(i)) => return Err(i.into()),
        Err(e) => return Err(e).with_context(|| format!("exporting {}", args.output.display())),
    };
    for w in &report.warnings {
        eprintln!("underlay: warning: {w}");
    }
    eprintln!(
        "wrote {}: {} frames, {:.2} s of video, in {:.1} s ({:.0} frames/s)",
        if args.output.as_os_str() == "-" {
            "standard output".to_owned()
        } else {
            args.output.display().to_string()
        },
        report.frames,
        report.duration,
        report.elapsed,
        report.frames as f64 / report.elapsed.max(1e-9)
    );
    if args.stats {
        eprint!("{}", cpu_table(&report.cpu, report.frames));
    }
    Ok(())
}

/// `--stats`: the CPU by stage, per frame and as shares of the process's.
fn cpu_table(c: &crate::export::StageCpu, frames: u64) -> String {
    let total = c.process.as_secs_f64();
    let per = |d: std::time::Duration| d.as_secs_f64() * 1e3 / frames.max(1) as f64;
    let share = |d: std::time::Duration| {
        if total > 0.0 {
            100.0 * d.as_secs_f64() / total
        } else {
            0.0
        }
    };
    let rest = c.process.saturating_sub(c.reading + c.workers + c.encoder);
    let mut s = format!(
        "CPU {:.2} s, {:.2} ms a frame; in frame order {:.1} %, of which underlay's own {:.1} %:\n",
        total,
        per(c.process),
        100.0 * c.ordered_share(),
        100.0 * c.own_ordered_share()
    );
    for (name, d) in [
        ("reading (in order)", c.reading),
        ("  in FFmpeg's demuxer and decoder", c.decoding),
        ("  preparing (underlay's)", c.prepare),
        ("encoding thread (in order)", c.encoder),
        ("  in x264's intake and the muxer", c.encoding),
        ("workers", c.workers),
        ("FFmpeg's and x264's threads", rest),
    ] {
        s.push_str(&format!(
            "  {name:<36} {:>8.2} ms a frame  {:>5.1} %\n",
            per(d),
            share(d)
        ));
    }
    s
}

/// The export of `session`; one made for a file (not read from a session
/// file) draws the levels its logs suggest, as the viewer opening it does.
fn export_plan(
    mut session: Session,
    session_file: Option<&std::path::Path>,
    options: &ExportOptions,
) -> Result<ExportPlan, ExportError> {
    if session_file.is_some() {
        return ExportPlan::from_session(&session, session_file, options);
    }
    options.check()?;
    let log = std::sync::Arc::new(session.load_logs()?);
    session.apply_log_hints(&log);
    let index = std::sync::Arc::new(crate::select::Index::new(&log));
    ExportPlan::with_log(&session, None, log, index, options)
}

/// The session to export: the file given, or one made of `--video`,
/// `--log` and `--calib`; the other flags are applied by the plan.
fn session_of(args: &Args) -> anyhow::Result<(Session, Option<PathBuf>)> {
    let (mut s, file) = session_from(args)?;
    if args.shown.player.is_some() {
        s.observer = args.shown.player.clone();
    }
    if let Some(n) = args.shown.ssl_camera() {
        anyhow::ensure!(
            args.calib.is_none(),
            "--camera N and --calib both give a calibration: give one"
        );
        s.calibration = Some(CalibrationSource::Inline(super::calib::log_camera(&s.logs, n)?));
    }
    if let Some(topic) = args.shown.topic() {
        s.picture.topic = Some(topic);
    }
    if args.shown.world.is_some() {
        s.picture.world = args.shown.world.clone();
    }
    if args.shown.levels.is_some() {
        s.levels = args.shown.levels.clone();
    }
    Ok((s, file))
}

fn session_from(args: &Args) -> anyhow::Result<(Session, Option<PathBuf>)> {
    match (&args.session, &args.video) {
        (Some(path), _) if crate::session::is_session_file(path) => {
            let mut s = Session::load(path)?;
            if !args.logs.is_empty() {
                s.logs = args.logs.clone();
            }
            Ok((s, Some(path.clone())))
        }
        (Some(path), _) => {
            anyhow::ensure!(path.exists(), "{}: no such file", path.display());
            // What cannot even be looked at (a container given as a pipe, a
            // folder no format reads) says why.
            crate::formats::source_format_of(path)?;
            let mut s = Session::for_input(path, &args.logs);
            if let Some(c) = &args.calib {
                s.calibration = Some(CalibrationSource::File { file: c.clone() });
            }
            anyhow::ensure!(
                !s.logs.is_empty(),
                "{}: not a session or a match; to annotate a video give --video with --log and --calib",
                path.display()
            );
            Ok((s, None))
        }
        (None, Some(video)) => {
            anyhow::ensure!(!args.logs.is_empty(), "--log is needed with --video");
            anyhow::ensure!(
                args.calib.is_some() || args.shown.ssl_camera().is_some() || args.no_calibration,
                "--calib (or --camera N with an SSL game log) is needed with --video (or --no-calibration)"
            );
            let mut s = Session::new(video, "");
            s.logs = args.logs.clone();
            s.calibration = args.calib.clone().map(|file| CalibrationSource::File { file });
            Ok((s, None))
        }
        (None, None) => anyhow::bail!("give a session file, or --video with --log and --calib"),
    }
}
