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
            err.contains("most of it does not read as") && err.contains("probably something else"),
            "{what}: {err}"
        );
    }
}

fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
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

/// Finding 7: `-o` goes where the user pointed: through a symbolic link
/// to the file it names (the link stays), into a FIFO or standard output
/// as a stream (fragmented MP4), never replacing a FIFO or a device node
/// with a regular file; an input is still never written over, through a
/// link too.
#[test]
fn outputs_go_where_pointed() {
    let dir = tmp();
    let game = data("sim2d", "match4.rcg.gz");
    let export = |out: &Path| {
        run(&[
            OsStr::new("export"),
            game.as_os_str(),
            "--to".as_ref(),
            "1".as_ref(),
            "--size".as_ref(),
            "320x180".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ])
    };
    let frames = |p: &Path| -> String {
        let o = std::process::Command::new("ffprobe")
            .args([
                "-v",
                "error",
                "-count_frames",
                "-show_entries",
                "stream=nb_read_frames",
                "-of",
                "csv=p=0",
            ])
            .arg(p)
            .output()
            .expect("ffprobe");
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    };
    if !crate::util::have_tool("ffprobe") {
        return;
    }
    // Through a link: the file it names is written, the link stays.
    let target = dir.path().join("target.mp4");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.mp4");
    std::os::unix::fs::symlink("target.mp4", &link).unwrap();
    let o = export(&link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(frames(&target), "9");
    // Into a FIFO: streamed, the FIFO stays a FIFO.
    let fifo = dir.path().join("pipe.mp4");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let got = dir.path().join("got.mp4");
    let (f, g) = (fifo.clone(), got.clone());
    let reader = std::thread::spawn(move || {
        let mut r = std::fs::File::open(f).unwrap();
        let mut w = std::fs::File::create(g).unwrap();
        std::io::copy(&mut r, &mut w).unwrap();
    });
    let o = export(&fifo);
    reader.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    {
        use std::os::unix::fs::FileTypeExt as _;
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }
    assert_eq!(frames(&got), "9");
    // To standard output.
    let o = export(Path::new("-"));
    assert!(o.status.success(), "{}", stderr(&o));
    let piped = dir.path().join("stdout.mp4");
    std::fs::write(&piped, &o.stdout).unwrap();
    assert_eq!(frames(&piped), "9");
    assert!(stderr(&o).contains("wrote standard output"), "{}", stderr(&o));
    // A device: written as it is, an error said, the node untouched.
    let o = run(&[
        OsStr::new("log"),
        "convert".as_ref(),
        game.as_os_str(),
        "/dev/full".as_ref(),
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("/dev/full"),
        "{}",
        stderr(&o)
    );
    {
        use std::os::unix::fs::FileTypeExt as _;
        assert!(
            std::fs::metadata("/dev/full")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    // An input named through a link is still not written over.
    let input = dir.path().join("in.ulog");
    let o = run(&[
        OsStr::new("log"),
        "convert".as_ref(),
        game.as_os_str(),
        input.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let alias = dir.path().join("alias.ulog");
    std::os::unix::fs::symlink(&input, &alias).unwrap();
    let o = run(&[
        OsStr::new("log"),
        "convert".as_ref(),
        input.as_os_str(),
        alias.as_os_str(),
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("refusing to overwrite"),
        "{}",
        stderr(&o)
    );
}

/// Finding 9: `export` from a FIFO nobody writes says what it waits for.
#[test]
fn a_video_fifo_without_writer_is_waited_for_aloud() {
    let dir = tmp();
    let fifo = dir.path().join("camera.mp4");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/ssl.ulog");
    let mut child = underlay_cmd()
        .args(["export", "--video"])
        .arg(&fifo)
        .arg("--log")
        .arg(&log)
        .args(["--no-calibration", "-o"])
        .arg(dir.path().join("out.mp4"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("waiting for a program to open the FIFO"), "{err}");
}

/// Finding 5: numbers on the command line are checked (finite, in range),
/// and `--help` says the range.
#[test]
fn numbers_are_checked_at_the_command_line() {
    let game = data("sim2d", "match4.rcg.gz");
    for (flag, value, range) in [
        ("--zoom", "1e308", "1 to 8"),
        ("--zoom", "nan", "1 to 8"),
        ("--fps", "1e9", "0.1 to 240"),
        ("--offset", "inf", "offset"),
        ("--max-input", "0", "1 byte to 1 PiB"),
    ] {
        let o = run(&[
            OsStr::new("export"),
            game.as_os_str(),
            flag.as_ref(),
            value.as_ref(),
            "-o".as_ref(),
            "/nonexistent/x.mp4".as_ref(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", stderr(&o));
        assert!(stderr(&o).contains(range), "{flag} {value}: {}", stderr(&o));
    }
    let help = stdout(&run(&["export", "--help"]));
    assert!(help.contains("1 to 8") && help.contains("0.1 to 240"), "{help}");
}

/// Finding 6: a range past the input's end says the input's length and
/// what was cut; one wholly past it is an error naming both.
#[test]
fn ranges_past_the_end_say_the_length() {
    let dir = tmp();
    let game = gunzip(&data("sim2d", "match4.rcg.gz"));
    let cut = dir.path().join("cut.rcg");
    std::fs::write(&cut, &game[..game.len() / 4]).unwrap();
    let out = dir.path().join("o.mp4");
    let export = |from: &str, to: &str| {
        run(&[
            OsStr::new("export"),
            cut.as_os_str(),
            "--from".as_ref(),
            from.as_ref(),
            "--to".as_ref(),
            to.as_ref(),
            "--size".as_ref(),
            "320x180".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ])
    };
    let o = export("1", "3");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--to 3 is past the end") && stderr(&o).contains("cut.rcg lasts 1.900 s"),
        "{}",
        stderr(&o)
    );
    let o = export("5", "9");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--from 5 is at or past the end") && stderr(&o).contains("cut.rcg lasts 1.900 s"),
        "{}",
        stderr(&o)
    );
}

/// Finding 8: a game log whose one show line repeats thousands of times
/// draws that moment once: half a second of the match is not hours of
/// video.
#[test]
fn a_repeated_show_line_is_one_moment() {
    let dir = tmp();
    let game = gunzip(&data("sim2d", "match4.rcg.gz"));
    let (head, show) = split_at_line(&game, b"(show ");
    let mut bytes = head.to_vec();
    for _ in 0..(16 << 20) / show.len() {
        bytes.extend_from_slice(show);
    }
    let path = dir.path().join("repeated.rcg");
    std::fs::write(&path, &bytes).unwrap();
    let out = dir.path().join("o.mp4");
    let t = Instant::now();
    let o = run(&[
        OsStr::new("export"),
        path.as_os_str(),
        "--from".as_ref(),
        "0".as_ref(),
        "--to".as_ref(),
        "0.5".as_ref(),
        "--size".as_ref(),
        "320x180".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    let err = stderr(&o);
    let frames: u64 = err
        .split("wrote ")
        .nth(1)
        .and_then(|s| s.split(": ").nth(1))
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    assert!(frames <= 2, "{err}");
    let info = stdout(&run(&[OsStr::new("log"), "info".as_ref(), path.as_os_str()]));
    assert!(info.contains("repeated the one before exactly"), "{info}");
}
