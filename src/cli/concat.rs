//! `underlay concat PART… -o OUT`: joins the parts `underlay export
//! --segment K/N` wrote (on one machine or many) into one video, without
//! re-encoding ([`crate::video::concat`]).

use std::path::PathBuf;

use anyhow::Context;

/// Arguments of `underlay concat`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The parts, in any order (each names its place in its metadata).
    #[arg(value_name = "PART", required = true)]
    pub parts: Vec<PathBuf>,
    /// The joined video (same container as the parts: .mp4, .mov, .mkv).
    #[arg(short, long, value_name = "OUT.mp4")]
    pub output: PathBuf,
}

/// Joins the parts.
pub fn run(a: Args) -> anyhow::Result<()> {
    let report = crate::video::concat::join(&a.parts, &a.output)
        .with_context(|| format!("joining {} parts into {}", a.parts.len(), a.output.display()))?;
    eprintln!(
        "wrote {}: {} parts, {} frames{}",
        a.output.display(),
        report.parts,
        report.frames,
        if report.other_packets > 0 {
            format!(", {} audio packets", report.other_packets)
        } else {
            String::new()
        }
    );
    Ok(())
}
