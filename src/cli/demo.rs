//! `underlay demo`: generate the demo run and open it in the viewer.

use std::path::PathBuf;

/// Arguments of `underlay demo`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Folder to write the demo video, log, session and ground truth into
    /// [default: a cache folder, reused when already generated].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only generate the files; do not open the viewer.
    #[arg(long)]
    pub no_view: bool,
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("the demo is not built yet")
}
