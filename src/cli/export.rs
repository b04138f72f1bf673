//! `underlay export`: write an annotated video.

use std::path::PathBuf;

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
    /// Log time = video time + OFFSET (seconds), when no session is given.
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

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("export is not built yet")
}
