//! `underlay sync`: find the log ↔ video offset (and clock drift) from
//! motion, print it (or JSON), and store it in a session.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, bail};

use super::common::emit;
use crate::session::{CalibrationSource, Session};
use crate::sync::{Drift, Report, Request};

/// Arguments of `underlay sync`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A session (its offset is the starting guess), or a camera video
    /// with --log and --calib (or --camera N).
    #[arg(value_name = "SESSION.toml|VIDEO")]
    pub input: PathBuf,
    /// The log to synchronise (any format underlay reads; with a session,
    /// instead of the session's logs; repeatable).
    #[arg(long = "log", value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Calibration file (with a video; a session has its own).
    #[arg(long, value_name = "CALIB.toml", conflicts_with = "camera")]
    pub calib: Option<PathBuf>,
    /// Calibrate with camera N of the SSL game log among the logs.
    #[arg(long, value_name = "N")]
    pub camera: Option<u32>,
    /// Starting guess: log time = video time + OFFSET (seconds; default
    /// the session's; with a video and no guess, the whole overlap of the
    /// two is searched).
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = super::common::parse_offset)]
    pub offset: Option<f64>,
    /// Compare only the video from S seconds.
    #[arg(long, value_name = "S", value_parser = super::common::parse_seconds)]
    pub from: Option<f64>,
    /// Compare only the video up to S seconds.
    #[arg(long, value_name = "S", value_parser = super::common::parse_seconds)]
    pub to: Option<f64>,
    /// Try offsets up to SECONDS either side of the guess (default 60
    /// around a given offset, the whole overlap without one).
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub search: Option<f64>,
    /// Keep the rate (no clock drift measured).
    #[arg(long)]
    pub no_drift: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Store the offset (and rate) found in this session file (the input
    /// session's other settings kept; made anew from the video, logs and
    /// calibration otherwise). Written only for a confident match.
    #[arg(long, value_name = "SESSION.toml")]
    pub write: Option<PathBuf>,
    /// Draw the agreement curve into this picture (PNG).
    #[arg(long, value_name = "FILE.png")]
    pub plot: Option<PathBuf>,
}

/// Runs `underlay sync`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.input.exists(), "{}: no such file", args.input.display());
    for p in args.logs.iter().chain(&args.calib) {
        anyhow::ensure!(p.exists(), "{}: no such file", p.display());
    }
    let (mut session, from_file) = session_of(&args)?;
    let calibration = session
        .load_calibration()?
        .with_context(|| format!("{}: no calibration to project the log with", args.input.display()))?;
    let log = session.load_logs()?;
    let guess = args.offset.or(from_file.then_some(session.offset));
    let req = Request {
        video: &session.video,
        log: &log,
        calibration: &calibration,
        guess,
        rate: session.rate,
        search: args.search,
        from: args.from,
        to: args.to,
        drift: !args.no_drift,
    };
    let cancel = super::common::cancel_on_ctrl_c("sync");
    let bar = progress_bar();
    let result = crate::sync::find(&req, &cancel, &mut |f| {
        if let Some(b) = &bar {
            b.set_position((f * 1000.0) as u64);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let report = match result {
        Ok(r) => r,
        Err(e) if e.is_cancelled() => return Err(crate::Interrupted.into()),
        Err(e) => return Err(e).with_context(|| format!("synchronising {}", session.video.display())),
    };
    if let Some(p) = &args.plot {
        crate::sync::plot::write(&report, p)?;
    }
    if args.json {
        emit(&(serde_json::to_string_pretty(&json(&report, guess))? + "\n"))?;
    } else {
        emit(&text(&report, guess))?;
    }
    if !report.found.confident {
        bail!(
            "no confident match: the video may show another run or a still scene, or the calibration may be wrong \
             (best agreement {:.2}, confidence {:.2})",
            report.found.score,
            report.found.confidence
        );
    }
    if let Some(out) = &args.write {
        session.offset = report.found.offset;
        session.rate = report.found.rate;
        session
            .save(out)
            .with_context(|| format!("cannot store the offset in {}", out.display()))?;
        if !args.json {
            emit(&format!("wrote {}\n", out.display()))?;
        }
    }
    Ok(())
}

/// The session to synchronise and whether it was read from a file.
fn session_of(args: &Args) -> anyhow::Result<(Session, bool)> {
    let mut s = if crate::session::is_session_file(&args.input) {
        let mut s = Session::load(&args.input)?;
        if !args.logs.is_empty() {
            s.logs = args.logs.clone();
        }
        if let Some(c) = &args.calib {
            s.calibration = Some(CalibrationSource::File { file: c.clone() });
        }
        (s, true)
    } else {
        anyhow::ensure!(
            !args.logs.is_empty(),
            "{}: give the log to synchronise with --log",
            args.input.display()
        );
        anyhow::ensure!(
            args.calib.is_some() || args.camera.is_some(),
            "{}: give a calibration with --calib (or --camera N with an SSL game log)",
            args.input.display()
        );
        let mut s = Session::new(&args.input, "");
        s.logs = args.logs.clone();
        s.calibration = args.calib.clone().map(|file| CalibrationSource::File { file });
        (s, false)
    };
    if let Some(n) = args.camera {
        s.0.calibration = Some(CalibrationSource::Inline(super::calib::log_camera(&s.0.logs, n)?));
    }
    Ok(s)
}

fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(1000);
    if let Ok(style) = indicatif::ProgressStyle::with_template("sync {bar:40} {percent:>3}% {elapsed}") {
        b.set_style(style);
    }
    Some(b)
}

/// What the drift line says.
fn drift_text(report: &Report) -> String {
    match report.found.drift {
        Drift::NotMeasured => format!("rate:   kept at {} (not measured)", report.found.rate),
        Drift::TooShort { seconds } => format!(
            "rate:   kept at {} (the {seconds:.1} s compared are too short to measure drift; {:.0} s are needed)",
            report.found.rate,
            crate::sync::search::MIN_DRIFT_SPAN
        ),
        Drift::Measured {
            rate: 1.0,
            resolution,
        } => format!(
            "rate:   1 (no drift larger than {:.3} % over the {:.1} s compared)",
            resolution * 100.0,
            report.video.1 - report.video.0
        ),
        Drift::Measured { rate, .. } => format!(
            "rate:   {rate:.6} (the log's clock runs {:.3} % {} than the video's)",
            (rate - 1.0).abs() * 100.0,
            if rate > 1.0 { "faster" } else { "slower" }
        ),
    }
}

/// The plain-text report.
fn text(report: &Report, guess: Option<f64>) -> String {
    let f = &report.found;
    let mut out = String::new();
    if f.confident {
        out += &format!("offset: {:.4} s (log time at video 0 s)", f.offset);
        if let Some(g) = guess {
            out += &format!(", {:+.4} s from the guess", f.offset - g);
        }
        out += "\n";
        out += &(drift_text(report) + "\n");
        out += &format!(
            "match:  agreement {:.2}, confidence {:.1} ({} objects over {} frames; offsets {:.3} … {:.3} s tried in {:.1} s)\n",
            f.score,
            f.confidence,
            report.objects,
            report.frames,
            report.searched.0,
            report.searched.1,
            report.elapsed
        );
    } else {
        out += &format!(
            "no confident match (best offset tried {:.4} s: agreement {:.2}, confidence {:.1}; offsets {:.3} … {:.3} s)\n",
            f.offset, f.score, f.confidence, report.searched.0, report.searched.1
        );
    }
    out
}

/// The JSON report.
fn json(report: &Report, guess: Option<f64>) -> serde_json::Value {
    let f = &report.found;
    let (drift, resolution) = match f.drift {
        Drift::Measured { resolution, .. } => ("measured", Some(resolution)),
        Drift::TooShort { .. } => ("too_short", None),
        Drift::NotMeasured => ("not_measured", None),
    };
    serde_json::json!({
        "offset_s": f.confident.then_some(f.offset),
        "best_offset_s": f.offset,
        "rate": f.rate,
        "confident": f.confident,
        "confidence": f.confidence,
        "agreement": f.score,
        "guess_s": guess,
        "drift": drift,
        "drift_resolution": resolution,
        "searched_s": [report.searched.0, report.searched.1],
        "video_s": [report.video.0, report.video.1],
        "log_s": [report.log.0, report.log.1],
        "objects": report.objects,
        "frames": report.frames,
        "elapsed_s": report.elapsed,
        "curve": f
            .curve
            .iter()
            .map(|&(o, s)| serde_json::json!([o, s.is_finite().then_some(s)]))
            .collect::<Vec<_>>(),
    })
}
