//! The `underlay` binary: parse the command line, run it, report errors once.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = underlay::cli::Cli::parse();
    match underlay::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(underlay::Interrupted) = e.downcast_ref::<underlay::Interrupted>() {
                eprintln!("underlay: interrupted");
                return ExitCode::from(130);
            }
            for line in underlay::cli::error_lines(&e) {
                eprintln!("{line}");
            }
            ExitCode::FAILURE
        }
    }
}
