//! `underlay log`: inspect, print, query and convert logs.

use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Counts, time range, entity tree and warnings of a log.
    Info {
        /// The log (native binary, text notation or thesis-era binary).
        log: PathBuf,
    },
    /// Print a log in the thesis's text notation.
    Dump {
        log: PathBuf,
        /// Only frames that apply at or after this time (log seconds).
        #[arg(long, value_name = "S", allow_negative_numbers = true)]
        from: Option<f64>,
        /// Only frames that apply at or before this time (log seconds).
        #[arg(long, value_name = "S", allow_negative_numbers = true)]
        to: Option<f64>,
    },
    /// Print the primitives selected at a time, one per line.
    Select {
        log: PathBuf,
        /// Log time to select at (seconds).
        #[arg(long, value_name = "T", allow_negative_numbers = true)]
        at: f64,
        /// Only primitives with level ≤ N.
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        max_level: Option<i32>,
        /// Only this entity and its descendants (repeatable).
        #[arg(long = "entity", value_name = "E")]
        entities: Vec<String>,
    },
    /// Convert between formats, chosen by extension and content.
    Convert {
        /// Input log (format sniffed from its content).
        input: PathBuf,
        /// Output log: `.txt` text notation, anything else native binary.
        output: PathBuf,
    },
}

pub fn run(_cmd: Command) -> anyhow::Result<()> {
    anyhow::bail!("log tools are not built yet")
}
