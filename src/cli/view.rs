//! `underlay view`: open the viewer.

use std::path::PathBuf;

/// Arguments of `underlay view`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// A session file (.toml) or a video to open.
    #[arg(value_name = "SESSION.toml|VIDEO")]
    pub input: Option<PathBuf>,
    /// The visualization log to show over the video.
    #[arg(long, value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// A calibration file written by `underlay calib solve -o`.
    #[arg(long, value_name = "CALIB.toml")]
    pub calib: Option<PathBuf>,
    /// Log time = video time + OFFSET (seconds).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub offset: Option<f64>,
    /// Render one moment in the real window, save it as PNG and exit.
    #[arg(long, value_name = "PNG", requires = "at")]
    pub screenshot: Option<PathBuf>,
    /// Video time (seconds) of the screenshot.
    #[arg(long, value_name = "SECONDS", requires = "screenshot")]
    pub at: Option<f64>,
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("the viewer is not built yet")
}
