//! Regression tests of the second bad-input review (issue 15): every
//! reader bounded in memory and time, nothing lost from pipes, no command
//! writing over its own input, no temporary file left behind. One test per
//! finding, named after what it guards.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::util::{assert_ok, stderr, stdout, underlay_cmd};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample_logs")
        .join(name)
}

/// Runs `underlay args` in `dir` with `input` on its standard input.
fn run_with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = underlay_cmd()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the underlay binary");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Written from a thread: a pipe holds only so much until it is read.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for underlay");
    writer.join().expect("writer thread");
    out
}

// ---------------------------------------------------------------------------
// 3. Logs read through a pipe

#[test]
fn logs_read_through_a_pipe_keep_every_frame() {
    let dir = crate::util::tmp();
    for (name, frames) in [
        ("ssl.ulog", "82"),
        ("thesis-era.pb", "12"),
        ("figure-3.7.txt", "3"),
    ] {
        let bytes = std::fs::read(sample(name)).unwrap();
        let o = run_with_stdin(dir.path(), &["log", "info", "/dev/stdin"], &bytes);
        assert_ok(&o);
        let out = stdout(&o);
        assert!(out.contains(&format!("frames:      {frames} ")), "{name}: {out}");
        assert!(out.contains("read as a stream"), "{name}: {out}");
        assert!(!stderr(&o).contains("truncated"), "{name}: {}", stderr(&o));
        // Converting from the pipe writes the whole log.
        let o = run_with_stdin(dir.path(), &["log", "convert", "/dev/stdin", "out.txt"], &bytes);
        assert_ok(&o);
        let from_pipe = underlay::formats::load_log(&dir.path().join("out.txt")).unwrap();
        let from_file = underlay::formats::load_log(&sample(name)).unwrap();
        assert_eq!(from_pipe.frames.len(), from_file.frames.len(), "{name}");
        assert_eq!(from_pipe.primitives, from_file.primitives, "{name}");
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_without_writer_says_what_it_waits_for() {
    let dir = crate::util::tmp();
    let fifo = dir.path().join("log.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = underlay_cmd()
        .args([Path::new("log"), Path::new("info"), &fifo])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the notice (no time is asserted: the read blocks until it comes).
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains('\n') {
        let n = std::io::Read::read(&mut err, &mut buf).unwrap();
        assert!(n > 0, "underlay ended without a word");
        seen.extend_from_slice(&buf[..n]);
    }
    let notice = String::from_utf8_lossy(&seen).into_owned();
    assert!(
        notice.contains("waiting for a program to open the FIFO"),
        "{notice}"
    );
    assert!(notice.contains("log.fifo"), "{notice}");
    // Then a writer comes, and the log is read whole.
    std::fs::write(&fifo, std::fs::read(sample("thesis-era.pb")).unwrap()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("frames:      12 "), "{}", stdout(&o));
}

// ---------------------------------------------------------------------------
// 4. Commands writing over their own input

/// Asserts that `underlay args` in `dir` refuses to write over `input`,
/// and leaves it as it was.
#[track_caller]
fn refuses_to_overwrite(dir: &Path, args: &[&str], input: &str) {
    let before = std::fs::read(dir.join(input)).unwrap();
    let o = crate::util::run_in(dir, args);
    assert!(!o.status.success(), "{args:?} succeeded: {}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("refusing to overwrite the input"), "{args:?}: {err}");
    assert_eq!(
        std::fs::read(dir.join(input)).unwrap(),
        before,
        "{args:?} changed {input}"
    );
}

#[test]
fn no_command_writes_over_its_own_input() {
    let dir = crate::util::tmp();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(
        d.join("p.csv"),
        "u,v,x,y\n0,100,0,0\n100,100,1,0\n100,0,1,1\n0,0,0,1\n50,80,0.5,0.2\n",
    )
    .unwrap();
    std::fs::copy(sample("ssl.ulog"), d.join("a.ulog")).unwrap();
    let picture = underlay::image::RgbImage::from_elem((16, 32, 3), 90);
    underlay::video::still::save_rgb(&d.join("f.png"), &picture).unwrap();
    std::fs::hard_link(d.join("a.ulog"), d.join("hard.ulog")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("p.csv"), d.join("link.csv")).unwrap();
    refuses_to_overwrite(d, &["calib", "solve", "p.csv", "-o", "p.csv"], "p.csv");
    refuses_to_overwrite(d, &["calib", "solve", "p.csv", "-o", "sub/../p.csv"], "p.csv");
    #[cfg(unix)]
    refuses_to_overwrite(d, &["calib", "solve", "link.csv", "-o", "p.csv"], "p.csv");
    refuses_to_overwrite(d, &["mask", "f.png", "-o", "f.png"], "f.png");
    refuses_to_overwrite(d, &["mask", "f.png", "-o", "./sub/../f.png"], "f.png");
    refuses_to_overwrite(d, &["log", "convert", "a.ulog", "a.ulog"], "a.ulog");
    refuses_to_overwrite(d, &["log", "convert", "a.ulog", "hard.ulog"], "a.ulog");
    refuses_to_overwrite(
        d,
        &["calib", "from-ssl", "a.ulog", "--camera", "0", "-o", "a.ulog"],
        "a.ulog",
    );
    // Other outputs are written as before.
    assert_ok(&crate::util::run_in(
        d,
        ["calib", "solve", "p.csv", "-o", "c.toml"],
    ));
    assert_ok(&crate::util::run_in(d, ["mask", "f.png", "-o", "m.png"]));
    assert_ok(&crate::util::run_in(d, ["log", "convert", "a.ulog", "b.txt"]));
}

// ---------------------------------------------------------------------------
// 10. Temporary files and signals

/// Starts `underlay args` in `dir`, waits until its standard error has
/// said `ready`, sends `signal`, and returns how it ended.
#[cfg(unix)]
fn signal_when_ready(dir: &Path, args: &[&str], ready: &str, signal: i32) -> Output {
    let mut child = underlay_cmd()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains(ready) {
        let n = std::io::Read::read(&mut err, &mut buf).unwrap();
        assert!(
            n > 0,
            "underlay ended before {ready:?}: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, signal) };
    let mut o = child.wait_with_output().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut err, &mut rest);
    seen.extend_from_slice(&rest);
    o.stderr = seen;
    o
}

/// The names in `dir` that look like temporaries (`.…partial-…`,
/// `.generating-…`).
fn temporaries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".partial-") || n.starts_with(".generating-"))
        .collect();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn sigterm_and_sighup_leave_no_temporary_files() {
    let dir = crate::util::tmp();
    // A recording waits for drawings with its temporary file open: SIGTERM
    // and SIGHUP stop it as Ctrl-C does.
    for (signal, port) in [(libc::SIGTERM, "39871"), (libc::SIGHUP, "39872")] {
        let o = signal_when_ready(
            dir.path(),
            &["record-roboviz", "--port", port, "-o", "r.rvd"],
            "recording",
            signal,
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "signal {signal}");
    }
    // The demo renders frame by frame into a scratch folder: SIGTERM stops
    // it, and the folder goes (whether or not rendering was still going).
    let demo = dir.path().join("demo");
    let o = signal_when_ready(
        dir.path(),
        &["demo", "--out", "demo", "--no-view"],
        "generating the demo",
        libc::SIGTERM,
    );
    assert!(
        matches!(o.status.code(), Some(0 | 130)),
        "{:?}: {}",
        o.status,
        stderr(&o)
    );
    if demo.is_dir() {
        assert_eq!(temporaries(&demo), Vec::<String>::new());
    }
}

// ---------------------------------------------------------------------------
// 1 and 2. Entity names and graphs

/// A text log of one primitive drawn by `entity`, after `decls`.
fn entity_log(dir: &Path, name: &str, decls: &str, entity: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("{{\n{decls}{{ 1; {{ {{ {{circle; (0, 0); 1}}; red; {{{entity}; 0}} }} }} }}\n}}\n"),
    )
    .unwrap();
    p
}

#[test]
fn one_long_entity_name_costs_output_and_memory_proportional_to_it() {
    let dir = crate::util::tmp();
    let name = vec!["a"; 30_000].join("/");
    let log = entity_log(dir.path(), "long.txt", "", &name);
    let native = dir.path().join("long.ulog");
    assert_ok(&crate::util::run([
        Path::new("log"),
        Path::new("convert"),
        &log,
        &native,
    ]));
    let o = crate::util::run([Path::new("log"), Path::new("info"), &native]);
    assert_ok(&o);
    let out = stdout(&o);
    // 500 lines of the tree, each name and indentation shortened: not 500
    // copies of a 60 KB name.
    assert!(out.len() < 400_000, "{} bytes", out.len());
    assert!(out.contains("bytes)…/a/a"), "{}", &out[..2000.min(out.len())]);
    assert!(out.contains("[depth 31]"));
    let o = crate::util::run([
        Path::new("log"),
        Path::new("select"),
        &native,
        Path::new("--at"),
        Path::new("1"),
    ]);
    assert_ok(&o);
    assert_eq!(stdout(&o).lines().count(), 1);
}

#[test]
fn dense_and_deep_entity_graphs_load_with_cycles_refused() {
    let dir = crate::util::tmp();
    // 300 entities, each under every earlier one (44,850 edges), declared
    // child first; then a chain of 20,000 declared bottom-up; then edges
    // back up, each refused with a warning.
    let mut decls = String::new();
    for i in 0..300 {
        let parents: Vec<String> = (0..i).map(|j| format!("d{j}")).collect();
        decls += &format!("{{ entity; d{i}; {{{}}} }}\n", parents.join("; "));
    }
    for i in 0..20_000 {
        decls += &format!("{{ entity; c{i}; {{c{}}} }}\n", i + 1);
    }
    decls += "{ entity; d0; {d299} }\n{ entity; c20000; {c0} }\n";
    let log = entity_log(dir.path(), "dense.txt", &decls, "d299");
    let o = crate::util::run([Path::new("log"), Path::new("info"), &log]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("entities:    20301 "),
        "{}",
        &out[..1500.min(out.len())]
    );
    assert_eq!(
        out.matches("would make a cycle; edge ignored").count(),
        2,
        "{out}"
    );
    let l = underlay::formats::load_log(&log).unwrap();
    let d299 = l.entities.get("d299").unwrap();
    assert_eq!(l.entities.parents(d299).len(), 299);
}

// ---------------------------------------------------------------------------
// 7. Endless special files

#[cfg(unix)]
#[test]
fn endless_special_files_are_read_up_to_a_limit() {
    let dir = crate::util::tmp();
    let o = crate::util::run(["calib", "solve", "/dev/zero"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("/dev/zero: cannot read the points file: more than"),
        "{}",
        stderr(&o)
    );
    // A session or a calibration file is small text too.
    let session = dir.path().join("s.toml");
    std::os::unix::fs::symlink("/dev/zero", &session).unwrap();
    let o = crate::util::run_in(dir.path(), ["export", "s.toml", "-o", "out.mp4"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("more than"), "{}", stderr(&o));
    let o = crate::util::run(["log", "info", "/dev/zero"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not a visualization log"), "{}", stderr(&o));
}
