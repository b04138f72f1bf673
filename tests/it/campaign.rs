//! The bad-input campaign (issue 52), small in CI and as large as asked by
//! hand: mutants of real files (`tests/data/real`, written by other
//! people's tools) and of the project's own fixtures — bit flips,
//! overwritten runs, cuts, duplicated chunks, huge lengths, gzip'ed
//! copies, numbers made `nan`, `inf`, `1e308`, `0x10`, `abc` or empty —
//! read by `underlay log info`, and one in ten by `export` as well, each
//! under a time limit and a memory cap. Every case must end in an answer
//! (exit 0, or exit 1 with a message naming the file), never a panic, a
//! hang, a signal or a message of thousands of characters; and `log info`
//! and `export` must agree on whether the file reads.
//!
//! CI runs [`CI_CASES`] cases from a fixed seed. By hand:
//! `UNDERLAY_CAMPAIGN=3000 [UNDERLAY_CAMPAIGN_SEED=7] [UNDERLAY_CAMPAIGN_BIN=…/release/underlay]
//! cargo test --test it campaign -- --nocapture` runs more and prints the
//! report docs/PERFORMANCE.md quotes (cases and exits per format, the
//! largest memory and time); `UNDERLAY_CAMPAIGN_KEEP=DIR` keeps the
//! mutants that failed there.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

use crate::util::tmp;

/// Cases a CI run reads.
const CI_CASES: usize = 120;
/// How long one run may take before it counts as a hang (a debug build
/// reads slower than a release build; every seed reads in under a second).
const TIME_LIMIT: Duration = Duration::from_secs(60);
/// The address space one run may take (what a harness with a memory limit
/// allows; the peak resident memory is reported separately).
const MEMORY_CAP: u64 = 4 << 30;
/// The longest line a message may have.
const LONGEST_LINE: usize = 2_000;

/// A file the mutants are made from, and the format family it belongs to.
struct Seed {
    path: PathBuf,
    family: String,
    /// Its bytes, gunzipped when the file is gzip'ed.
    plain: Vec<u8>,
    gzipped: bool,
    /// Whether the unmutated file exports (a match or a recording with a
    /// picture): only then does a mutant's export say anything.
    exports: bool,
}

/// Files under `dir` (recursively) that are logs or recordings: not the
/// READMEs, sources, scripts, pictures and meshes beside them.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !matches!(name, "golden" | "pictures" | "meshes" | "cdr") {
                collect(&p, out);
            }
            continue;
        }
        let skip = [
            ".md", ".py", ".csv", ".png", ".jpg", ".json", ".dae", ".stl", ".obj", ".yaml",
        ];
        if !skip.iter().any(|s| name.ends_with(s)) {
            out.push(p);
        }
    }
}

fn gunzip(bytes: &[u8]) -> Option<Vec<u8>> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return None;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("gzip in memory");
    e.finish().expect("gzip in memory")
}

fn seeds() -> Vec<Seed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    collect(&root.join("tests/data"), &mut paths);
    collect(&root.join("sample_logs"), &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let raw = std::fs::read(&path).ok()?;
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            // tests/data/real/<league>/…, tests/data/<kind>/…, sample_logs/…
            let family = match parts.as_slice() {
                [t, d, r, kind, ..] if t == "tests" && d == "data" && r == "real" => format!("real/{kind}"),
                [t, d, kind, ..] if t == "tests" && d == "data" => kind.clone(),
                [first, ..] => first.clone(),
                [] => return None,
            };
            let (plain, gzipped) = match gunzip(&raw) {
                Some(p) => (p, true),
                None => (raw, false),
            };
            Some(Seed {
                path,
                family,
                plain,
                gzipped,
                exports: false,
            })
        })
        .collect()
}

/// The mutations of the campaign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mutation {
    BitFlips,
    Overwrite,
    Cut,
    Duplicate,
    HugeLength,
    Number,
    Gzip,
}

const MUTATIONS: [Mutation; 7] = [
    Mutation::BitFlips,
    Mutation::Overwrite,
    Mutation::Cut,
    Mutation::Duplicate,
    Mutation::HugeLength,
    Mutation::Number,
    Mutation::Gzip,
];

/// The byte ranges of the decimal numbers in `bytes` (text formats).
fn numbers(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        let after_word = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts && !after_word {
            let s = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || matches!(bytes[i], b'.' | b'e' | b'E')) {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

fn is_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (32..127).contains(&b))
}

/// One mutant of `plain`; says whether to gzip it afterwards.
fn mutate(rng: &mut StdRng, plain: &[u8], m: Mutation) -> (Vec<u8>, bool) {
    let mut b = plain.to_vec();
    let len = b.len().max(1);
    let at = |rng: &mut StdRng| rng.random_range(0..len);
    match m {
        Mutation::BitFlips => {
            for _ in 0..rng.random_range(1..=8) {
                if !b.is_empty() {
                    let i = at(rng).min(b.len() - 1);
                    b[i] ^= 1 << rng.random_range(0..8);
                }
            }
        }
        Mutation::Overwrite => {
            let start = at(rng).min(b.len());
            let n = rng.random_range(1..=64).min(b.len() - start);
            let fill: u8 = match rng.random_range(0..3) {
                0 => 0,
                1 => 0xff,
                _ => rng.random(),
            };
            for x in &mut b[start..start + n] {
                *x = if rng.random_bool(0.5) { fill } else { rng.random() };
            }
        }
        Mutation::Cut => b.truncate(at(rng)),
        Mutation::Duplicate => {
            let s = at(rng).min(b.len());
            let e = (s + rng.random_range(1..=4096)).min(b.len());
            let chunk = b[s..e].to_vec();
            let to = at(rng).min(b.len());
            b.splice(to..to, chunk);
        }
        Mutation::HugeLength => {
            if is_text(&b) {
                // A name or token tens of thousands of characters long.
                let to = at(rng).min(b.len());
                let n = rng.random_range(60_000..70_000);
                b.splice(to..to, std::iter::repeat_n(b'x', n));
            } else {
                let to = at(rng).min(b.len().saturating_sub(4));
                let v: [u8; 4] = match rng.random_range(0..4) {
                    0 => u32::MAX.to_le_bytes(),
                    1 => 0x7fff_ffffu32.to_le_bytes(),
                    2 => 0x7fff_ffffu32.to_be_bytes(),
                    _ => [0xff, 0xff, 0xff, 0x7f],
                };
                let end = (to + 4).min(b.len());
                b[to..end].copy_from_slice(&v[..end - to]);
            }
        }
        Mutation::Number => {
            let nums = numbers(&b);
            if is_text(&b) && !nums.is_empty() {
                let (s, e) = nums[rng.random_range(0..nums.len())];
                let with: &[u8] = [
                    &b"nan"[..],
                    b"inf",
                    b"-inf",
                    b"1e308",
                    b"-1e308",
                    b"0x10",
                    b"abc",
                    b"",
                ][rng.random_range(0..8)];
                b.splice(s..e, with.iter().copied());
            } else if b.len() >= 8 {
                let to = rng.random_range(0..b.len() - 7);
                let v = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e308, -1e308][rng.random_range(0..5)];
                b[to..to + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        Mutation::Gzip => return (b, true),
    }
    (b, false)
}

/// How one run ended.
#[derive(Debug)]
struct Run {
    /// The exit code, or `None` when a signal or the time limit ended it.
    code: Option<i32>,
    hung: bool,
    stdout: String,
    stderr: String,
    peak_kib: i64,
    wall: Duration,
}

fn binary() -> OsString {
    std::env::var_os("UNDERLAY_CAMPAIGN_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_underlay").into())
}

/// Runs `underlay args` under the time limit and the memory cap, with its
/// peak resident memory from the kernel's accounting of that child.
fn run_limited(args: &[OsString], dir: &Path) -> Run {
    use std::os::unix::process::CommandExt as _;
    let mut c = Command::new(binary());
    c.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY_CAP,
                rlim_max: MEMORY_CAP,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let started = Instant::now();
    // Reaped below by wait4, which also gives the child's peak memory.
    #[allow(clippy::zombie_processes)]
    let mut child = c.spawn().expect("start the underlay binary");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped standard output")));
    let reader = drain(Box::new(child.stderr.take().expect("piped standard error")));
    let pid = child.id() as libc::pid_t;
    let mut hung = false;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        if started.elapsed() > TIME_LIMIT && !hung {
            hung = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = started.elapsed();
    let stderr = reader.join().unwrap_or_default();
    let stdout = out.join().unwrap_or_default();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Run {
        code,
        hung,
        stdout,
        stderr,
        peak_kib: usage.ru_maxrss,
        wall,
    }
}

/// What is wrong with a run's ending, if anything.
fn fault(run: &Run, file: &str) -> Option<String> {
    if run.hung {
        return Some(format!("no answer within {} s", TIME_LIMIT.as_secs()));
    }
    match run.code {
        Some(0) => {}
        Some(1) => {
            if !run.stderr.contains(file) {
                return Some("an error that does not name the file".to_owned());
            }
        }
        Some(c) => return Some(format!("exit {c}")),
        None => return Some("ended by a signal".to_owned()),
    }
    if run.stderr.contains("panicked") {
        return Some("a panic".to_owned());
    }
    if let Some(line) = run.stderr.lines().find(|l| l.chars().count() > LONGEST_LINE) {
        return Some(format!("a message line of {} characters", line.chars().count()));
    }
    None
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(300).collect()
}

/// Per-format tallies of the report.
#[derive(Default)]
struct Tally {
    cases: usize,
    ok: usize,
    refused: usize,
    exported: usize,
    peak_kib: i64,
    slowest: Duration,
}

#[test]
fn mutants_of_real_files_get_an_answer_never_a_panic_or_a_hang() {
    let cases: usize = std::env::var("UNDERLAY_CAMPAIGN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CI_CASES);
    let seed: u64 = std::env::var("UNDERLAY_CAMPAIGN_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(52);
    let dir = tmp();
    let mut seeds = seeds();
    assert!(seeds.len() >= 10, "the campaign found only {} seeds", seeds.len());
    // Each seed's format as `log info` names it, and whether it exports:
    // only the mutants of seeds that export have their exports compared.
    for s in &mut seeds {
        let info = Command::new(binary())
            .args(["log".as_ref(), "info".as_ref(), s.path.as_os_str()])
            .output()
            .expect("run the underlay binary");
        if let Some(f) = String::from_utf8_lossy(&info.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("format:"))
        {
            // "ROS 2 recording (MCAP), 12 KiB" → "ROS 2 recording (MCAP)"
            let name = f.trim().split(',').next().unwrap_or("").trim();
            s.family = format!(
                "{}{name}",
                if s.family.starts_with("real/") {
                    "real: "
                } else {
                    ""
                }
            );
        }
        let out = dir.path().join("seed.mp4");
        let args = export_args(&s.path, &out);
        s.exports = run_limited(&args, dir.path()).code == Some(0);
        let _ = std::fs::remove_file(&out);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut faults = Vec::new();
    let mut disagreements = Vec::new();
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    for i in 0..cases {
        let s = &seeds[rng.random_range(0..seeds.len())];
        let m = MUTATIONS[rng.random_range(0..MUTATIONS.len())];
        let (bytes, gz) = mutate(&mut rng, &s.plain, m);
        let bytes = if gz || (s.gzipped && rng.random_bool(0.5)) {
            gzip(&bytes)
        } else {
            bytes
        };
        let name = format!(
            "case{i}-{}",
            s.path.file_name().and_then(|n| n.to_str()).unwrap_or("seed")
        );
        let path = dir.path().join(&name);
        std::fs::write(&path, &bytes).expect("write a mutant");
        let what = format!("case {i} ({m:?} of {})", s.path.display());
        let info = run_limited(&["log".into(), "info".into(), path.clone().into()], dir.path());
        let t = tally.entry(s.family.clone()).or_default();
        t.cases += 1;
        t.peak_kib = t.peak_kib.max(info.peak_kib);
        t.slowest = t.slowest.max(info.wall);
        match info.code {
            Some(0) => t.ok += 1,
            _ => t.refused += 1,
        }
        let keep = |path: &Path| {
            if let Some(k) = std::env::var_os("UNDERLAY_CAMPAIGN_KEEP") {
                let _ = std::fs::create_dir_all(&k);
                let _ = std::fs::copy(path, Path::new(&k).join(path.file_name().unwrap_or_default()));
            }
        };
        if let Some(f) = fault(&info, &name) {
            keep(&path);
            faults.push(format!("{what}: log info: {f}: {}", first_line(&info.stderr)));
        }
        if s.exports && i % 10 == 0 {
            let out = dir.path().join(format!("case{i}.mp4"));
            let export = run_limited(&export_args(&path, &out), dir.path());
            t.exported += 1;
            t.peak_kib = t.peak_kib.max(export.peak_kib);
            t.slowest = t.slowest.max(export.wall);
            if let Some(f) = fault(&export, &name) {
                keep(&path);
                faults.push(format!("{what}: export: {f}: {}", first_line(&export.stderr)));
            } else if disagree(&info, &export) {
                keep(&path);
                disagreements.push(format!(
                    "{what}: log info {} but export {}",
                    verdict(&info),
                    verdict(&export)
                ));
            }
            let _ = std::fs::remove_file(&out);
        }
        let _ = std::fs::remove_file(&path);
    }
    println!(
        "campaign: {cases} cases from seed {seed}, {} seed files",
        seeds.len()
    );
    println!(
        "{:<40} {:>6} {:>6} {:>8} {:>8} {:>10} {:>9}",
        "format", "cases", "read", "refused", "exports", "peak MiB", "slowest s"
    );
    for (family, t) in &tally {
        println!(
            "{family:<40} {:>6} {:>6} {:>8} {:>8} {:>10.1} {:>9.2}",
            t.cases,
            t.ok,
            t.refused,
            t.exported,
            t.peak_kib as f64 / 1024.0,
            t.slowest.as_secs_f64()
        );
    }
    assert!(
        faults.is_empty() && disagreements.is_empty(),
        "{} faults, {} disagreements:\n{}",
        faults.len(),
        disagreements.len(),
        faults
            .iter()
            .chain(&disagreements)
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn verdict(r: &Run) -> String {
    match r.code {
        Some(0) => "reads it".to_owned(),
        _ => format!("refuses it ({})", root_cause(&r.stderr)),
    }
}

/// The last cause of an error as the binary prints it (`  caused by: …`),
/// without the file's name before it.
fn root_cause(stderr: &str) -> String {
    let last = stderr
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("caused by:"))
        .or_else(|| stderr.lines().next())
        .unwrap_or("")
        .trim();
    let cause = last.split_once(": ").map_or(last, |(head, rest)| {
        match head.contains('/') || head.contains('.') {
            true => rest,
            false => last,
        }
    });
    cause.chars().take(300).collect()
}

/// Whether `log info` and `export` disagree on a file: one reads what the
/// other refuses, unless what export refuses for is a fact `log info`
/// states (a recording with no picture topic reads as a log, and says so).
fn disagree(info: &Run, export: &Run) -> bool {
    match (info.code == Some(0), export.code == Some(0)) {
        (true, false) => !info.stdout.contains(&root_cause(&export.stderr)),
        (false, true) => true,
        _ => false,
    }
}

/// `export FILE` for its first second, small: enough to read the whole
/// input the way export reads it.
fn export_args(input: &Path, out: &Path) -> Vec<OsString> {
    vec![
        "export".into(),
        input.into(),
        "-o".into(),
        out.into(),
        "--to".into(),
        "1".into(),
    ]
}
