//! Issue 31: export scaled out on an existing scheduler. A one-node Slurm
//! cluster is started on this machine (`scripts/slurm-local`: munged,
//! slurmctld, slurmd, on loopback, installed with apt when missing); a
//! 4-task array exports a 2D match in 4 segments (`--segment task`: each
//! task's part from Slurm's variables) and a 3-task array runs a 3-job
//! batch manifest; the parts are joined and compared frame by frame with
//! the one-piece export; everything started is stopped. Skipped with a
//! message where Slurm cannot be installed or started; a failure under
//! `UNDERLAY_REQUIRE_TOOLS=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use underlay::video::Decoder;

use crate::util::{assert_ok, run_in, skip_missing_tool, stderr, tmp};

const MATCH: &str = "tests/data/sim2d/match2.rcg.gz";

/// A running private cluster, stopped when dropped.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn start(dir: &Path) -> Option<Cluster> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local");
        let o = Command::new(&script).arg("start").arg(dir).output().ok()?;
        if !o.status.success() {
            skip_missing_tool(&format!(
                "a local Slurm cluster ({}: {})",
                script.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            return None;
        }
        Some(Cluster { dir: dir.to_owned() })
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// Submits `script` as an array of `tasks` from `dir` and waits for it.
    fn array(&self, dir: &Path, tasks: usize, script: &str) {
        let job = dir.join(format!("job{tasks}.sh"));
        std::fs::write(&job, format!("#!/bin/sh\nset -e\n{script}\n")).unwrap();
        let o = Command::new("sbatch")
            .env("SLURM_CONF", self.conf())
            .current_dir(dir)
            .args(["--wait", "--quiet", "-o", "slurm-%A_%a.out"])
            .arg(format!("--array=0-{}", tasks - 1))
            .arg(&job)
            .output()
            .unwrap();
        let logs: String = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("slurm-"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        assert!(
            o.status.success(),
            "sbatch: {}{}\ntasks said:\n{logs}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local");
        let _ = Command::new(script).arg("stop").arg(&self.dir).status();
    }
}

fn frames(path: &Path) -> Vec<(f64, underlay::image::RgbImage)> {
    let mut d = Decoder::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(f) = d.next_frame().unwrap() {
        out.push((f.time, f.image));
    }
    out
}

#[test]
fn a_slurm_array_exports_in_segments_and_runs_a_batch() {
    let dir = tmp();
    let d = dir.path();
    let Some(cluster) = Cluster::start(&d.join("cluster")) else {
        return;
    };
    let work = d.join("work");
    std::fs::create_dir_all(work.join("out")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(MATCH),
        work.join("m.rcg.gz"),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_underlay");
    let args = "--to 3 --size 320x180 --crf 0 --preset ultrafast";
    cluster.array(
        &work,
        4,
        &format!("{bin} export m.rcg.gz -o part-$((SLURM_ARRAY_TASK_ID + 1)).mp4 {args} --segment task"),
    );
    let parts: Vec<String> = (1..=4).map(|k| format!("part-{k}.mp4")).collect();
    let mut a = vec!["concat".to_owned()];
    a.extend(parts.iter().cloned());
    a.extend(["-o".to_owned(), "joined.mp4".to_owned()]);
    assert_ok(&run_in(&work, &a));
    let mut whole = vec!["export", "m.rcg.gz", "-o", "whole.mp4"];
    whole.extend(args.split(' '));
    assert_ok(&run_in(&work, whole));
    let (w, j) = (frames(&work.join("whole.mp4")), frames(&work.join("joined.mp4")));
    assert!(w.len() > 20, "{}", w.len());
    assert_eq!(w.len(), j.len());
    for (i, (a, b)) in w.iter().zip(&j).enumerate() {
        assert!((a.0 - b.0).abs() < 1e-9, "frame {i}: {} vs {}", a.0, b.0);
        assert!(a.1 == b.1, "frame {i} at {:.3} s differs", a.0);
    }

    // A batch of three jobs, one per task of a 3-task array.
    let small = r#""--size", "160x90", "--crf", "35", "--preset", "ultrafast""#;
    let manifest: String = (1..=3)
        .map(|k| {
            format!("[[job]]\nargs = [\"m.rcg.gz\", \"-o\", \"out/{k}.mp4\", \"--to\", \"{k}\", {small}]\n\n")
        })
        .collect();
    std::fs::write(work.join("jobs.toml"), manifest).unwrap();
    cluster.array(&work, 3, &format!("{bin} batch jobs.toml"));
    for k in 1..=3 {
        let out = work.join(format!("out/{k}.mp4"));
        assert!(out.is_file(), "{}", out.display());
        let n = frames(&out).len();
        assert!(n >= 5 * k, "job {k}: {n} frames");
    }
    // Each task did its own job: a second round finds all up to date.
    let o = Command::new(bin)
        .current_dir(&work)
        .args(["batch", "jobs.toml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 exported, 3 up to date"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    drop(cluster);
}
