//! The command line: argument definitions and dispatch to each subcommand.
//!
//! Each subcommand lives in its own file with its arguments (`Args`) and a
//! `run` that turns them into work; `main` prints errors once.

use clap::{Parser, Subcommand};

pub mod calib;
pub mod demo;
pub mod export;
pub mod log;
pub mod mask;
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
    /// Inspect, print, query and convert visualization logs.
    #[command(subcommand)]
    Log(log::Command),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None => demo::run(demo::Args::default()),
        Some(Command::Demo(a)) => demo::run(a),
        Some(Command::View(a)) => view::run(a),
        Some(Command::Export(a)) => export::run(a),
        Some(Command::Mask(a)) => mask::run(a),
        Some(Command::Calib(c)) => calib::run(c),
        Some(Command::Log(c)) => log::run(c),
    }
}
