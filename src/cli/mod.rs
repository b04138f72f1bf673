//! The command line: argument definitions and dispatch to each subcommand.
//!
//! Each subcommand lives in its own file with its arguments (`Args`) and a
//! `run` that turns them into work; `main` prints errors once.

use clap::{Parser, Subcommand};

pub mod batch;
pub mod calib;
pub mod calib_refine;
pub mod common;
pub mod concat;
pub mod demo;
pub mod export;
pub mod formats;
pub mod live;
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
    /// The most one input may deliver once decompressed (`4G`, `500M`,
    /// `1.5GiB`; 1 to 2^50 bytes). Default: 2 GiB, and a gzip'ed file at most
    /// 100 times its own size (at least 64 MiB), as a gzip bomb or an
    /// endless pipe would otherwise fill memory.
    #[arg(long, global = true, value_name = "SIZE", value_parser = common::parse_bytes)]
    pub max_input: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate a demo run (video, log, session) and open it in the viewer.
    Demo(demo::Args),
    /// Open the viewer on a session, or on a video and a log.
    View(view::Args),
    /// Export an annotated video: the overlay drawn onto every frame.
    Export(export::Args),
    /// Run the exports a manifest lists, or this task's share of them
    /// (resumable; one job's failure does not stop the others).
    Batch(batch::Args),
    /// Join the parts of an export (`export --segment K/N`) into one video
    /// without re-encoding.
    Concat(concat::Args),
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
    /// List the input formats underlay reads and how it recognises them.
    Formats(formats::Args),
    /// Draw live: a camera stream and logs arriving over the network,
    /// composited behind the robots and sent on as a stream or recorded.
    Live(live::Args),
    /// Record the RoboViz drawings 3D-league agents send (UDP), for
    /// `log convert` and the viewer.
    RecordRoboviz(record_roboviz::Args),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    common::install_signal_handler();
    crate::bounded::set_max_input(cli.max_input);
    match cli.command {
        None => demo::run(demo::Args::default()),
        Some(Command::Demo(a)) => demo::run(a),
        Some(Command::View(a)) => view::run(a),
        Some(Command::Export(a)) => export::run(a),
        Some(Command::Batch(a)) => batch::run(a),
        Some(Command::Concat(a)) => concat::run(a),
        Some(Command::Mask(a)) => mask::run(a),
        Some(Command::Calib(c)) => calib::run(c),
        Some(Command::Sync(a)) => sync::run(a),
        Some(Command::Log(c)) => log::run(c),
        Some(Command::Formats(a)) => formats::run(a),
        Some(Command::Live(a)) => live::run(a),
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
