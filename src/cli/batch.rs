//! `underlay batch`: many exports from one manifest, each an `underlay
//! export` command line, shared among tasks (`--task I --tasks N`, or a
//! Slurm array's or a Kubernetes Indexed Job's own variables), resumable
//! (an output newer than everything it is made from is skipped), each
//! output written whole or not at all (as `export` does), one job's
//! failure not stopping the others, and a summary at the end.
//!
//! The manifest is TOML: `[[job]]` tables with `args`, the arguments of
//! `underlay export` (paths relative to the manifest's folder):
//!
//! ```toml
//! [[job]]
//! args = ["match1.rcg.gz", "-o", "out/match1.mp4", "--to", "60"]
//! ```

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use anyhow::{Context, bail};
use clap::Parser;

/// Arguments of `underlay batch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The manifest: `[[job]]` tables, each with `args`, an `underlay
    /// export` command line (paths relative to the manifest's folder).
    #[arg(value_name = "MANIFEST.toml")]
    pub manifest: PathBuf,
    /// This task's number, from 0 (default: SLURM_ARRAY_TASK_ID less
    /// SLURM_ARRAY_TASK_MIN, or JOB_COMPLETION_INDEX, else 0). Task I takes
    /// jobs I, I + N, I + 2N, …
    #[arg(long, value_name = "I")]
    pub task: Option<usize>,
    /// How many tasks share the list (default: SLURM_ARRAY_TASK_COUNT,
    /// else 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub tasks: Option<u32>,
    /// Say what would be done, do nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The manifest file.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    #[serde(default)]
    job: Vec<Job>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Job {
    args: Vec<String>,
}

/// `underlay export`'s arguments, parsed alone.
#[derive(Debug, Parser)]
#[command(name = "export")]
struct ExportLine {
    #[command(flatten)]
    args: super::export::Args,
}

/// What became of a job.
enum Outcome {
    Done(f64),
    /// `--dry-run`: would be exported.
    Would,
    Skipped,
    Failed(String),
}

/// Most jobs in a manifest.
const MAX_JOBS: usize = 1_000_000;

pub fn run(a: Args) -> anyhow::Result<()> {
    let (task, tasks) = share(&a)?;
    let text = crate::files::read_text_limited(&a.manifest, crate::files::MAX_SMALL_TEXT)
        .with_context(|| format!("cannot read {}", a.manifest.display()))?;
    let mut lines = parse(&text, &a.manifest.display().to_string())?;
    // Paths are the manifest's folder's.
    let folder = crate::files::parent_dir(&a.manifest);
    std::env::set_current_dir(folder).with_context(|| format!("cannot work in {}", folder.display()))?;
    let mine: Vec<usize> = (0..lines.len()).filter(|i| i % tasks == task).collect();
    eprintln!(
        "batch {}: task {task} of {tasks}: {} of {} jobs",
        a.manifest.display(),
        mine.len(),
        lines.len()
    );
    let mut outcomes = Vec::new();
    for (k, &i) in mine.iter().enumerate() {
        let Some(args) = lines[i].take() else { continue };
        let out = args.output.clone();
        let tag = format!("[{}/{}] job {} → {}", k + 1, mine.len(), i + 1, out.display());
        let outcome = if up_to_date(&args) {
            Outcome::Skipped
        } else if a.dry_run {
            Outcome::Would
        } else {
            eprintln!("{tag}: exporting");
            let t0 = Instant::now();
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| super::export::run(args))) {
                Ok(Ok(())) => Outcome::Done(t0.elapsed().as_secs_f64()),
                Ok(Err(e)) => Outcome::Failed(format!("{e:#}")),
                Err(_) => Outcome::Failed("the export stopped with an internal error (a bug)".into()),
            }
        };
        match &outcome {
            Outcome::Done(s) => eprintln!("{tag}: done in {s:.1} s"),
            Outcome::Would => eprintln!("{tag}: would export"),
            Outcome::Skipped => eprintln!("{tag}: up to date, skipped"),
            Outcome::Failed(e) => eprintln!("{tag}: FAILED: {e}"),
        }
        outcomes.push((i, out, outcome));
    }
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|(_, _, o)| f(o)).count();
    let (done, skipped, failed) = (
        count(|o| matches!(o, Outcome::Done(_))),
        count(|o| matches!(o, Outcome::Skipped)),
        count(|o| matches!(o, Outcome::Failed(_))),
    );
    if a.dry_run {
        let would = count(|o| matches!(o, Outcome::Would));
        println!("batch: {would} to export, {skipped} up to date (task {task} of {tasks}; nothing done)");
        return Ok(());
    }
    println!("batch: {done} exported, {skipped} up to date, {failed} failed (task {task} of {tasks})");
    for (i, out, o) in &outcomes {
        if let Outcome::Failed(e) = o {
            println!("  job {} → {}: {e}", i + 1, out.display());
        }
    }
    if failed > 0 {
        bail!("{failed} of {} jobs failed", outcomes.len());
    }
    Ok(())
}

/// The jobs of a manifest read as `name`, each checked as an `underlay
/// export` command line before any runs (a typo fails at once).
fn parse(text: &str, name: &str) -> anyhow::Result<Vec<Option<super::export::Args>>> {
    let manifest: Manifest = toml::from_str(text).with_context(|| format!("{name}: not a batch manifest"))?;
    if manifest.job.is_empty() {
        bail!("{name}: no [[job]] in it");
    }
    if manifest.job.len() > MAX_JOBS {
        bail!("{name}: {} jobs, at most {MAX_JOBS}", manifest.job.len());
    }
    manifest
        .job
        .iter()
        .enumerate()
        .map(|(i, j)| {
            ExportLine::try_parse_from(std::iter::once("export".to_owned()).chain(j.args.iter().cloned()))
                .map(|l| Some(l.args))
                .map_err(|e| anyhow::anyhow!("{name}: job {}: {}", i + 1, e.render().to_string().trim()))
        })
        .collect()
}

/// This task's number and the number of tasks: the flags, else a Slurm
/// array's or a Kubernetes Indexed Job's variables.
fn share(a: &Args) -> anyhow::Result<(usize, usize)> {
    super::common::task_share(a.task, a.tasks.map(|n| n as usize))
}

/// Whether the job's output exists and is newer than every file it is
/// made from (the arguments that name files, and what a session names).
fn up_to_date(a: &super::export::Args) -> bool {
    let Some(made) = modified(&a.output) else {
        return false;
    };
    let mut inputs: Vec<PathBuf> = [&a.session, &a.video, &a.calib]
        .into_iter()
        .flatten()
        .cloned()
        .chain(a.logs.iter().cloned())
        .collect();
    if let Some(s) = &a.session
        && s.extension().is_some_and(|e| e == "toml")
        && let Ok(session) = crate::session::Session::load(s)
    {
        inputs.push(session.video.clone());
        inputs.extend(session.logs.iter().cloned());
        if let Some(crate::session::CalibrationSource::File { file }) = &session.calibration {
            inputs.push(file.clone());
        }
    }
    inputs.iter().all(|p| modified(p).is_some_and(|t| t <= made))
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).ok()?.modified().ok()
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;

    #[test]
    fn manifests_parse_or_say_why() {
        let ok = parse("[[job]]\nargs = [\"a.rcg\", \"-o\", \"a.mp4\"]\n", "m").unwrap();
        assert_eq!(ok.len(), 1);
        for (text, says) in [
            ("", "no [[job]]"),
            ("[[job]]\nargs = [\"a.rcg\"]\n", "job 1"),
            ("[[job]]\nargs = 3\n", "not a batch manifest"),
            ("[[job]]\nargs = []\nother = 1\n", "not a batch manifest"),
        ] {
            let e = format!("{:#}", parse(text, "m").unwrap_err());
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    /// Fuzzed: random bytes, and a valid manifest cut and mutated, are read
    /// or refused, never a panic.
    #[test]
    fn garbage_manifests_are_refused_without_panicking() {
        let valid = "[[job]]\nargs = [\"m.rcg.gz\", \"-o\", \"out/a.mp4\", \"--to\", \"1\"]\n\n[[job]]\nargs = [\"s.toml\", \"-o\", \"b.mp4\", \"--max-level\", \"2\"]\n";
        let mut rng = rand::rngs::StdRng::seed_from_u64(31);
        for _ in 0..2000 {
            let mut bytes = valid.as_bytes().to_vec();
            match rng.random_range(0..3) {
                0 => bytes.truncate(rng.random_range(0..bytes.len())),
                1 => {
                    for _ in 0..rng.random_range(1..8) {
                        let i = rng.random_range(0..bytes.len());
                        bytes[i] = rng.random();
                    }
                }
                _ => bytes = (0..rng.random_range(0..200)).map(|_| rng.random()).collect(),
            }
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse(&text, "m");
        }
    }
}
