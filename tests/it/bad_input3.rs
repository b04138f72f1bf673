//! Regression tests of the third bad-input review (issue 35): compressed
//! and endless inputs read within a budget, garbage counted and said,
//! messages bounded, numbers checked, outputs written where the user
//! pointed. One test per finding, named after what it guards; the bombs
//! are built here, small on disk.

use std::ffi::OsStr;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::util::{stderr, stdout, tmp, underlay_cmd};

fn data(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
        .join(name)
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A gzip bomb: `prefix`, then `record` repeated to about `total` bytes,
/// as one member for the prefix and one compressed mebibyte of records
/// repeated (gzip readers read every member): small on disk.
fn bomb(prefix: &[u8], record: &[u8], total: u64) -> Vec<u8> {
    let per_mib = ((1 << 20) / record.len()).max(1);
    let chunk = record.repeat(per_mib);
    let member = gzip(&chunk);
    let mut out = gzip(prefix);
    let copies = total / chunk.len() as u64 + 1;
    for _ in 0..copies {
        out.extend_from_slice(&member);
    }
    out
}

/// Runs `underlay args` with its address space capped at `bytes`, as a
/// harness with a memory limit runs it.
fn run_capped<S: AsRef<OsStr>>(args: &[S], bytes: u64) -> Output {
    use std::os::unix::process::CommandExt as _;
    let mut c = underlay_cmd();
    c.args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    c.output().expect("run the underlay binary")
}

/// The lines of `text` up to (not including) the first that starts with
/// `marker`, and that line.
fn split_at_line<'a>(text: &'a [u8], marker: &[u8]) -> (&'a [u8], &'a [u8]) {
    let mut at = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(marker) {
            return (&text[..at], line);
        }
        at += line.len();
    }
    panic!("no line starts with {:?}", String::from_utf8_lossy(marker));
}

/// A valid-looking start and one record to repeat, per format.
fn bomb_parts() -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let game = gunzip(&data("sim2d", "match4.rcg.gz"));
    let (game_head, show) = split_at_line(&game, b"(show ");
    let dlog = gunzip(&data("sim2d", "HELIOS_Q-9.log.gz"));
    let lines: Vec<&[u8]> = dlog.split_inclusive(|&b| b == b'\n').collect();
    let dlog_head: Vec<u8> = lines[..200].concat();
    let perception = gunzip(&data("sim3d", "agent_Alpha_1.log.gz"));
    let plines: Vec<&[u8]> = perception.split_inclusive(|&b| b == b'\n').collect();
    let ssl = gunzip(&data("ssl", "ball-out-35s.log.gz"));
    let size = u32::from_be_bytes(ssl[16 + 12..16 + 16].try_into().unwrap()) as usize;
    let ssl_record = ssl[16..16 + 16 + size].to_vec();
    let mut log = underlay::log::Log::new();
    let e = log.entities.intern("dot");
    log.push_frame(
        underlay::log::FrameTime::Instant(1.0),
        [underlay::log::Primitive {
            shape: underlay::log::Shape::Circle {
                center: underlay::geom::Vec2::new(1.0, 2.0),
                radius: 3.0,
            },
            style: underlay::log::Style::default(),
            entity: e,
            level: 0,
        }],
    );
    let native = underlay::log::native::to_bytes(&log);
    vec![
        ("2D game log", game_head.to_vec(), show.to_vec()),
        ("2D debug log", dlog_head, lines[200].to_vec()),
        ("3D perception log", plines[..2].concat(), plines[2].to_vec()),
        ("SSL game log", ssl[..16].to_vec(), ssl_record),
        ("native log", native[..10].to_vec(), native[10..].to_vec()),
    ]
}

/// Finding 1: gzip bombs of every kind are refused once they decompress
/// past the budget, saying so and naming the file, within a memory cap,
/// in `log info`, `log select`, `log convert` and (for a match) `export`.
#[test]
fn gzip_bombs_are_refused_within_memory_and_time() {
    let dir = tmp();
    for (what, prefix, record) in bomb_parts() {
        let path = dir.path().join("bomb.gz");
        std::fs::write(&path, bomb(&prefix, &record, 2 << 30)).unwrap();
        let on_disk = std::fs::metadata(&path).unwrap().len();
        assert!(on_disk < 16 << 20, "{what}: the bomb is {on_disk} bytes");
        let out = dir.path().join("out.ulog");
        for args in [
            vec!["log", "info"],
            vec!["log", "select", "--at", "+1"],
            vec!["log", "convert"],
        ] {
            let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
            a.insert(2, path.as_os_str());
            if args[1] == "convert" {
                a.push(out.as_os_str());
            }
            let t = Instant::now();
            let o = run_capped(&a, 4 << 30);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{what} {args:?}: {err}");
            assert!(
                err.contains("bomb.gz")
                    && err.contains("decompresses to more than")
                    && err.contains("probably not a log"),
                "{what} {args:?}: {err}"
            );
            assert!(err.contains("--max-input"), "{err}");
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "{what} {args:?}: {:?}",
                t.elapsed()
            );
            assert!(!out.exists());
        }
    }
    // A match bomb given to export: refused as its picture is opened.
    let (_, prefix, record) = bomb_parts().remove(0);
    let path = dir.path().join("match.rcg.gz");
    std::fs::write(&path, bomb(&prefix, &record, 2 << 30)).unwrap();
    let out = dir.path().join("m.mp4");
    let t = Instant::now();
    let o = run_capped(
        &[
            OsStr::new("export"),
            path.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ],
        4 << 30,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("decompresses to more than"), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    assert!(!out.exists());
    // `--max-input` raises the budget, and says its own size when passed.
    let o = run_capped(
        &[
            OsStr::new("log"),
            "info".as_ref(),
            path.as_os_str(),
            "--max-input".as_ref(),
            "10M".as_ref(),
        ],
        4 << 30,
    );
    assert!(
        stderr(&o).contains("more than --max-input 10 MiB"),
        "{}",
        stderr(&o)
    );
}

/// A FIFO at `path` whose writer sends `prefix`, then `filler` over and
/// over until the reader goes away.
fn endless_fifo(path: &Path, prefix: Vec<u8>, filler: &'static [u8]) -> std::thread::JoinHandle<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let path = path.to_owned();
    std::thread::spawn(move || {
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) else {
            return;
        };
        let chunk = filler.repeat((1 << 20) / filler.len());
        if f.write_all(&prefix).is_err() {
            return;
        }
        // Ends when the reader closes the pipe (EPIPE: SIGPIPE is ignored
        // by Rust programs).
        while f.write_all(&chunk).is_ok() {}
    })
}

/// Finding 2: a FIFO fed a valid debug-log or perception-log start and
/// then `yes` forever is read up to the budget and refused, saying the
/// stream did not end, within a memory cap.
#[test]
fn endless_streams_stop_at_the_budget() {
    let dir = tmp();
    let dlog = gunzip(&data("sim2d", "HELIOS_Q-9.log.gz"));
    let perception = gunzip(&data("sim3d", "agent_Alpha_1.log.gz"));
    let starts = [
        ("debug log", dlog[..20_000].to_vec()),
        ("perception log", perception[..20_000].to_vec()),
    ];
    for (i, (what, start)) in starts.into_iter().enumerate() {
        let fifo = dir.path().join(format!("endless{i}"));
        let writer = endless_fifo(&fifo, start, b"y\n");
        let t = Instant::now();
        let o = run_capped(&[OsStr::new("log"), "info".as_ref(), fifo.as_os_str()], 4 << 30);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains("has not ended") && err.contains("--max-input"),
            "{what}: {err}"
        );
        assert!(t.elapsed() < Duration::from_secs(60), "{what}: {:?}", t.elapsed());
        writer.join().unwrap();
    }
}

fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    crate::util::run(args)
}

/// Finding 3: garbage after a valid start is counted and said once, with
/// its first offset; a file that is mostly garbage is an error.
#[test]
fn garbage_is_counted_and_said_once_and_mostly_garbage_is_refused() {
    let dir = tmp();
    let game = gunzip(&data("sim2d", "match4.rcg.gz"));
    let v3 = gunzip(&data("sim2d", "match_v3.rcg.gz"));
    let ssl = gunzip(&data("ssl", "ball-out-35s.log.gz"));
    let dlog = gunzip(&data("sim2d", "HELIOS_Q-9.log.gz"));
    let perception = gunzip(&data("sim3d", "agent_Alpha_1.log.gz"));
    // Garbage lines (for line readers) or bytes (for record readers).
    let mut noise = Vec::new();
    let mut x: u32 = 7;
    for _ in 0..200_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        noise.push((x >> 16) as u8);
    }
    let lines: Vec<u8> = b"this is not a record at all (\n".repeat(2_000);
    for (what, valid, garbage) in [
        ("2D game log", &game, &lines),
        ("2D game log", &v3, &noise),
        ("SSL game log", &ssl, &noise),
        ("2D agent debug log", &dlog, &lines),
        ("3D agent perception log", &perception, &lines),
    ] {
        // A little garbage: read, and said in one line with its offset.
        let cut = valid.len() - valid.len() / 20;
        let mut a = valid[..cut].to_vec();
        let small = &garbage[..(valid.len() / 20).min(garbage.len())];
        a.extend_from_slice(small);
        let p = dir.path().join("some-garbage");
        std::fs::write(&p, &a).unwrap();
        let o = run(&[OsStr::new("log"), "info".as_ref(), p.as_os_str()]);
        let out = stdout(&o);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        let said: Vec<&str> = out.lines().filter(|l| l.contains("were passed over")).collect();
        assert_eq!(said.len(), 1, "{what}: {out}");
        assert!(
            said[0].contains(&format!("at byte {}", group(cut as u64))) || said[0].contains("at byte"),
            "{what}: {}",
            said[0]
        );
        assert!(
            out.lines().filter(|l| l.starts_with("  ")).count() < 600,
            "{what}: a few lines of warnings, not one per broken line"
        );
        // Mostly garbage: refused, saying how much and where it starts.
        let mut b = valid[..valid.len() / 50].to_vec();
        b.extend(garbage.iter().cycle().take(valid.len()));
        std::fs::write(&p, &b).unwrap();
        let o = run(&[OsStr::new("log"), "info".as_ref(), p.as_os_str()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stdout(&o));
        assert!(
            err.contains("only its start reads as") && err.contains("probably something else"),
            "{what}: {err}"
        );
    }
}

fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Finding 4: quoted input in an error is cut, and warnings beyond the
/// first few of a kind are summed up in one line.
#[test]
fn messages_quote_little_and_warnings_are_summed_up() {
    let dir = tmp();
    let long = "x".repeat(4 << 20);
    for (name, text, args) in [
        ("long.txt", format!("{{ {long}"), vec!["log", "info"]),
        ("s.toml", format!("video = \"{long}\n"), vec!["export"]),
        ("points.csv", format!("u,v,x,y\n{long}\n"), vec!["calib", "solve"]),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        a.push(p.as_os_str());
        if args[0] == "export" {
            a.extend(["-o", "/nonexistent/o.mp4"].map(OsStr::new));
        }
        let o = run(&a);
        assert!(!o.status.success());
        assert!(
            stderr(&o).len() < 1000,
            "{name}: {} bytes of message",
            stderr(&o).len()
        );
        assert!(stderr(&o).contains(name), "{name}: {}", stderr(&o));
    }
    // Thousands of broken lines in a long debug log: a few said, the rest
    // counted in one line.
    let mut dlog = gunzip(&data("sim2d", "HELIOS_Q-9.log.gz"));
    for i in 0..5_000 {
        dlog.extend_from_slice(format!("{i},0 1 Z this line type is unknown\n").as_bytes());
    }
    let p = dir.path().join("broken.log");
    std::fs::write(&p, &dlog).unwrap();
    let o = run(&[OsStr::new("log"), "info".as_ref(), p.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let warnings: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("warnings:")).collect();
    assert!(warnings.len() < 15, "{}", warnings.join("\n"));
    assert!(out.contains("more like"), "{out}");
}
