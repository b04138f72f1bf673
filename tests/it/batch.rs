//! `underlay batch` run as a real binary: a manifest of three exports of a
//! 2D match (one of them failing) shared between two tasks, a second run
//! skipping what is done, an input touched re-doing its job, Slurm's
//! variables picking the share, and manifests that are wrong refused
//! before anything runs.

use std::path::Path;

use crate::util::{run, stderr, stdout, tmp};

const MATCH: &str = "tests/data/sim2d/match2.rcg.gz";

fn manifest(dir: &Path) -> std::path::PathBuf {
    let game = dir.join("match.rcg.gz");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(MATCH), &game).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let small = r#""--size", "160x90", "--crf", "35", "--preset", "ultrafast""#;
    let text = format!(
        "[[job]]\nargs = [\"match.rcg.gz\", \"-o\", \"out/a.mp4\", \"--to\", \"1\", {small}]\n\n\
         [[job]]\nargs = [\"match.rcg.gz\", \"-o\", \"out/b.mp4\", \"--to\", \"2\", {small}]\n\n\
         [[job]]\nargs = [\"missing.rcg.gz\", \"-o\", \"out/c.mp4\", {small}]\n"
    );
    let m = dir.join("jobs.toml");
    std::fs::write(&m, text).unwrap();
    m
}

#[test]
fn a_manifest_is_shared_resumed_and_failures_are_kept_apart() {
    let dir = tmp();
    let d = dir.path();
    let m = manifest(d);
    let m = m.to_str().unwrap();
    // Task 0 of 2: jobs 1 and 3; the third fails, the first is written.
    let o = run(["batch", m, "--task", "0", "--tasks", "2"]);
    assert!(!o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains("batch: 1 exported, 0 up to date, 1 failed (task 0 of 2)"),
        "{out}"
    );
    assert!(out.contains("job 3 → out/c.mp4"), "{out}");
    assert!(d.join("out/a.mp4").is_file() && !d.join("out/b.mp4").exists());
    assert!(!d.join("out/c.mp4").exists(), "nothing of a failed job");
    // Task 1 of 2 from Slurm's variables: job 2.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_underlay"))
        .args(["batch", m])
        .env("SLURM_ARRAY_TASK_ID", "5")
        .env("SLURM_ARRAY_TASK_MIN", "4")
        .env("SLURM_ARRAY_TASK_COUNT", "2")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.join("out/b.mp4").is_file());
    // Everything again: the two done are skipped.
    let o = run(["batch", m]);
    let out = stdout(&o);
    assert!(
        out.contains("batch: 0 exported, 2 up to date, 1 failed (task 0 of 1)"),
        "{out}"
    );
    // The match changed: both are made again.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let game = d.join("match.rcg.gz");
    let f = std::fs::File::options().append(true).open(&game).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let o = run(["batch", m, "--dry-run"]);
    assert!(stderr(&o).matches("would export").count() == 3, "{}", stderr(&o));
    assert!(
        d.join("out/a.mp4").metadata().unwrap().modified().unwrap()
            < game.metadata().unwrap().modified().unwrap()
    );
}

#[test]
fn wrong_manifests_and_shares_are_refused_before_anything_runs() {
    let dir = tmp();
    let d = dir.path();
    let m = manifest(d);
    let bad = d.join("bad.toml");
    std::fs::write(
        &bad,
        "[[job]]\nargs = [\"match.rcg.gz\", \"-o\", \"out/x.mp4\"]\n[[job]]\nargs = [\"match.rcg.gz\", \"--nonsense\"]\n",
    )
    .unwrap();
    let o = run(["batch", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("job 2"), "{}", stderr(&o));
    assert!(!d.join("out/x.mp4").exists(), "nothing ran");
    for (args, says) in [
        (vec!["--task", "2", "--tasks", "2"], "numbered from 0"),
        (vec!["--tasks", "0"], "0"),
    ] {
        let mut all = vec!["batch", m.to_str().unwrap()];
        all.extend(args);
        let o = run(&all);
        assert!(!o.status.success() && stderr(&o).contains(says), "{}", stderr(&o));
    }
    std::fs::write(&bad, "[job]\nfoo = 1\n").unwrap();
    let o = run(["batch", bad.to_str().unwrap()]);
    assert!(
        !o.status.success() && stderr(&o).contains("not a batch manifest"),
        "{}",
        stderr(&o)
    );
}
