//! `underlay calib`: calibration from point correspondences.

use std::path::PathBuf;

/// Calibration models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    /// A plain homography (≥ 4 points).
    Homography,
    /// Homography plus radial lens distortion (≥ 6 points).
    Radial,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Fit a calibration to points and report residuals and outliers.
    Solve(SolveArgs),
}

/// Arguments of `underlay calib solve`.
#[derive(Debug, clap::Args)]
pub struct SolveArgs {
    /// CSV with header `u,v,x,y`: image pixels and world coordinates.
    #[arg(value_name = "POINTS.csv")]
    pub points: PathBuf,
    /// Camera model to fit.
    #[arg(long, value_enum, default_value_t = Model::Homography)]
    pub model: Model,
    /// Write the calibration to this file (TOML).
    #[arg(short, long, value_name = "CALIB.toml")]
    pub output: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_cmd: Command) -> anyhow::Result<()> {
    anyhow::bail!("calib is not built yet")
}
