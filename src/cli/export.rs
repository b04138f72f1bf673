//! `underlay export`: write an annotated video.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;

use crate::export::{ExportError, ExportOptions, ExportPlan};
use crate::session::{CalibrationSource, Session};

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
    /// Drawing threads (default: a quarter of the cores, 1 to 4); the
    /// output is the same whatever the number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=64))]
    pub workers: Option<u8>,
}

/// Exports the annotated video; Ctrl-C stops it with [`crate::Interrupted`].
pub fn run(args: Args) -> anyhow::Result<()> {
    let (session, session_file) = session_of(&args)?;
    let options = ExportOptions {
        output: args.output.clone(),
        from: args.from,
        to: args.to,
        crf: args.crf,
        preset: args.preset.clone(),
        no_mask: args.no_mask,
        offset: args.offset,
        max_level: args.max_level,
        entities: args.entities.clone(),
        workers: args.workers.map(usize::from),
        progress_bar: std::io::stderr().is_terminal(),
    };
    // Unknown entity names, a bad calibration or mask settings fail here,
    // before any frame is decoded.
    let plan = ExportPlan::from_session(&session, session_file.as_deref(), &options)
        .with_context(|| format!("exporting {}", session.video.display()))?;
    let cancel = super::cancel_on_ctrl_c("export");
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
        args.output.display(),
        report.frames,
        report.duration,
        report.elapsed,
        report.frames as f64 / report.elapsed.max(1e-9)
    );
    Ok(())
}

/// The session to export: the file given, or one made of `--video`,
/// `--log` and `--calib`; the other flags are applied by the plan.
fn session_of(args: &Args) -> anyhow::Result<(Session, Option<PathBuf>)> {
    match (&args.session, &args.video) {
        (Some(path), _) => {
            let s = Session::load(path)?;
            Ok((s, Some(path.clone())))
        }
        (None, Some(video)) => {
            let log = args.log.clone().context("--log is needed with --video")?;
            let calib = args.calib.clone().context("--calib is needed with --video")?;
            let mut s = Session::new(video, log);
            s.calibration = Some(CalibrationSource::File { file: calib });
            Ok((s, None))
        }
        (None, None) => anyhow::bail!("give a session file, or --video with --log and --calib"),
    }
}
