//! `underlay record-roboviz`: record the RoboViz drawings agents send, for
//! `underlay log convert` and the viewer.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use crate::sim3d::record::{RecordStats, Recorder};

/// Arguments of `underlay record-roboviz`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// UDP port to receive drawings on (RoboViz's own is 32769; 0 picks a
    /// free one and prints it).
    #[arg(long, default_value_t = 32769)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Also connect to the simulator's monitor port (e.g. 127.0.0.1:60001)
    /// and record each message's simulation time: the drawings are then on
    /// the simulation's clock.
    #[arg(long, value_name = "HOST:PORT")]
    pub monitor: Option<String>,
    /// Stop after this many seconds [default: at Ctrl-C].
    #[arg(long, value_name = "S", value_parser = super::common::parse_seconds)]
    pub duration: Option<f64>,
    /// The recording to write (`.rvd`).
    #[arg(short, long, value_name = "FILE.rvd")]
    pub output: PathBuf,
}

/// Runs `underlay record-roboviz`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let duration = match a.duration {
        Some(d) if d.is_finite() && d > 0.0 && d < 1e9 => Some(Duration::from_secs_f64(d)),
        Some(d) => anyhow::bail!("--duration must be a positive number of seconds, not {d}"),
        None => None,
    };
    let recorder = Recorder::bind(SocketAddr::new(a.bind, a.port), a.monitor.as_deref())?;
    let stop = super::common::cancel_on_ctrl_c("recording");
    eprintln!(
        "underlay: recording RoboViz drawings sent to {} into {}{} (Ctrl-C stops)",
        recorder.local_addr(),
        a.output.display(),
        a.monitor
            .as_ref()
            .map_or(String::new(), |m| format!(", simulation times from {m}"))
    );
    let bar = spinner();
    let stats = recorder
        .run(&a.output, &stop, duration, |s| {
            bar.set_message(summary(s));
            bar.tick();
        })
        .context("recording failed; nothing was written")?;
    bar.finish_and_clear();
    if let Some(why) = &stats.monitor_ended {
        eprintln!("underlay: warning: {why}");
    }
    println!("{} → {}", summary(&stats), a.output.display());
    Ok(())
}

fn summary(s: &RecordStats) -> String {
    format!(
        "{} datagrams ({} bytes), {} simulation times",
        s.datagrams, s.bytes, s.sim_times
    )
}

/// A spinner on standard error when it is a terminal; hidden otherwise.
fn spinner() -> indicatif::ProgressBar {
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new_spinner()
    } else {
        indicatif::ProgressBar::hidden()
    }
}
