//! `underlay mask`: floor masks of an image or a video.

use std::path::PathBuf;

/// Masking methods selectable on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Thesis Algorithm 4 with its fixed thresholds.
    Thesis,
    /// Thresholds estimated from each frame (default).
    Adaptive,
}

/// Arguments of `underlay mask`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An image (PNG, JPEG, …) or a video.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Output: a PNG for an image (white = floor), a lossless mask video for a video.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// How to find the floor.
    #[arg(long, value_enum, default_value_t = Method::Adaptive)]
    pub method: Method,
    /// Time N runs on the (first) frame and print the median per frame.
    #[arg(long, value_name = "N")]
    pub bench: Option<u32>,
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("mask is not built yet")
}
