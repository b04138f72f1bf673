//! The command line: argument definitions and dispatch to each subcommand.
//!
//! Each subcommand lives in its own file with its arguments (`Args`) and a
//! `run` that turns them into work; `main` prints errors once.

use clap::{Parser, Subcommand};

pub mod calib;
pub mod calib_refine;
pub mod demo;
pub mod export;
pub mod log;
pub mod mask;
pub mod record_roboviz;
pub mod sync;
pub mod view;

/// underlay draws a robot's reasoning onto the video of its run, as if
/// painted on the floor and hidden behind the robots.
///
/// Run without a subcommand to see the demo.
#[derive(Debug, Parser)]
#[command(name = "underlay", version, about, long_about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate a demo run (video, log, session) and open it in the viewer.
    Demo(demo::Args),
    /// Open the viewer on a session, or on a video and a log.
    View(view::Args),
    /// Export an annotated video: the overlay drawn onto every frame.
    Export(export::Args),
    /// Compute floor masks of an image or a video.
    Mask(mask::Args),
    /// Camera calibration from image ↔ world point correspondences.
    #[command(subcommand)]
    Calib(calib::Command),
    /// Find the log ↔ video offset (and clock drift) from motion.
    Sync(sync::Args),
    /// Inspect, print, query and convert visualization logs.
    #[command(subcommand)]
    Log(log::Command),
    /// Record the RoboViz drawings 3D-league agents send (UDP), for
    /// `log convert` and the viewer.
    RecordRoboviz(record_roboviz::Args),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    install_signal_handler();
    match cli.command {
        None => demo::run(demo::Args::default()),
        Some(Command::Demo(a)) => demo::run(a),
        Some(Command::View(a)) => view::run(a),
        Some(Command::Export(a)) => export::run(a),
        Some(Command::Mask(a)) => mask::run(a),
        Some(Command::Calib(c)) => calib::run(c),
        Some(Command::Sync(a)) => sync::run(a),
        Some(Command::Log(c)) => log::run(c),
        Some(Command::RecordRoboviz(a)) => record_roboviz::run(a),
    }
}

/// The lines `main` prints for an error: the error, then each cause that
/// says something new. Many errors repeat their cause in their own message
/// ("filter: the log has no entity …" over "the log has no entity …"); a
/// cause whose text the line above already contains is left out, so each
/// thing is said once.
pub fn error_lines(e: &anyhow::Error) -> Vec<String> {
    // Each error says only what its own level knows (see `crate::error`),
    // so every cause is new.
    let mut lines = vec![format!("underlay: error: {e}")];
    lines.extend(e.chain().skip(1).map(|c| format!("  caused by: {c}")));
    lines
}

/// The flag a terminating signal sets for work that stops cleanly between
/// frames (see [`cancel_on_ctrl_c`]).
static CANCEL: std::sync::LazyLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::LazyLock::new(Default::default);

/// Whether the running command watches [`CANCEL`].
static COOPERATIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the process's one handler of SIGINT, SIGTERM and SIGHUP. Work
/// that watches [`cancel_on_ctrl_c`]'s flag is asked to stop (its
/// temporary files are dropped as it unwinds); anything else, or a second
/// signal, removes every registered temporary file and folder
/// ([`crate::files::remove_temporaries`]) and exits with status 130. Either
/// way the previous output stays as it was.
fn install_signal_handler() {
    use std::sync::atomic::Ordering;
    let handler = || {
        if COOPERATIVE.load(Ordering::SeqCst) && !CANCEL.swap(true, Ordering::SeqCst) {
            return;
        }
        crate::files::remove_temporaries();
        eprintln!("underlay: interrupted");
        std::process::exit(130);
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("underlay: warning: a signal will not stop underlay cleanly ({e})");
    }
}

/// What `view` and `export` show of a rendered match, and a camera's
/// calibration from an SSL game log.
#[derive(Debug, Default, clap::Args)]
pub struct MatchArgs {
    /// A rendered match's camera follows this: `ball`, or a player (`l10`,
    /// `r3`; `y2`, `b5` in SSL logs).
    #[arg(long, value_name = "WHAT")]
    pub follow: Option<String>,
    /// Magnification of a rendered match's pitch (1 to 8; default 1, or 3
    /// when following something).
    #[arg(long, value_name = "Z")]
    pub zoom: Option<f64>,
    /// Over a 2D match: the player whose sensing is drawn in detail
    /// (`l10`, `r3`: what it could see each cycle, level 3).
    #[arg(long, value_name = "PLAYER")]
    pub player: Option<String>,
    /// Calibrate with camera N of the SSL game log among the logs (its
    /// ssl-vision model), instead of --calib.
    #[arg(long, value_name = "N", conflicts_with = "calib")]
    pub camera: Option<u32>,
}

/// A flag that Ctrl-C (or SIGTERM, SIGHUP) sets while it lives, for long
/// work to stop cleanly between frames; a second signal ends the process
/// at once. `what` names the work in debugging output only: the handler
/// itself is installed once, by [`run`].
pub(crate) fn cancel_on_ctrl_c(what: &str) -> Cancel {
    use std::sync::atomic::Ordering;
    CANCEL.store(false, Ordering::SeqCst);
    COOPERATIVE.store(true, Ordering::SeqCst);
    Cancel {
        flag: CANCEL.clone(),
        what: what.to_owned(),
    }
}

/// The flag of [`cancel_on_ctrl_c`]; once dropped, a signal ends the
/// process again (removing temporaries) instead of setting it.
#[derive(Debug)]
pub(crate) struct Cancel {
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    #[allow(dead_code, reason = "shown by Debug")]
    what: String,
}

impl std::ops::Deref for Cancel {
    type Target = std::sync::atomic::AtomicBool;
    fn deref(&self) -> &Self::Target {
        &self.flag
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        COOPERATIVE.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A progress bar over `len` frames (a spinner when unknown) on standard
/// error when it is a terminal, with FFmpeg's own messages quieted
/// meanwhile; hidden otherwise. `verb` says what is done to the frames.
pub(crate) fn frame_bar(len: Option<u64>, verb: &str) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::io::IsTerminal as _;
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{verb} [{{bar:40}}] {{pos}}/{{len}} frames, {{per_sec}}, eta {{eta}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    crate::video::set_ffmpeg_quiet(true);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the log has no entity named \"x\"")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("bad filter")]
    struct Terse(#[source] Inner);

    #[test]
    fn every_cause_is_printed_once() {
        let e = anyhow::Error::new(Terse(Inner)).context("setting up");
        assert_eq!(
            error_lines(&e),
            [
                "underlay: error: setting up",
                "  caused by: bad filter",
                "  caused by: the log has no entity named \"x\"",
            ]
        );
        // No variant of underlay's errors repeats its source in its own
        // message (checked over the source tree by `messages_do_not_repeat_their_source`).
    }

    /// The chain is printed as it is, so an error message that embeds its
    /// `#[source]`/`#[from]` would say it twice: none may.
    #[test]
    fn messages_do_not_repeat_their_source() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut bad = Vec::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let lines: Vec<&str> = text.lines().collect();
                    for (i, l) in lines.iter().enumerate() {
                        let Some(at) = l.find("#[error(\"") else { continue };
                        let msg = &l[at..];
                        let body = lines[i + 1..(i + 6).min(lines.len())].join(" ");
                        let body = body.split("#[error").next().unwrap_or("");
                        let has_source = body.contains("#[source]")
                            || body.contains("#[from]")
                            || body.contains(" source:");
                        let repeats = ["{source}", "{0}"].iter().any(|r| msg.contains(r));
                        if has_source && repeats {
                            bad.push(format!("{}:{}: {}", p.display(), i + 1, l.trim()));
                        }
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "messages that repeat their source:\n{}",
            bad.join("\n")
        );
    }
}
