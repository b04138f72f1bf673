//! Regression tests of the fourth bad-input review (issue 52): what a
//! campaign of mutants of real files found. One test per finding, named
//! after what it guards; each mutant is made here from a small file of its
//! kind (nothing large is committed).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::util::{assert_ok, run, stderr, stdout, tmp};

fn data(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
        .join(name)
}

/// An MCAP recording with one channel whose topic is `topic`, a schema
/// named `type_name` and one message.
fn mcap_with(path: &Path, topic: &str, type_name: &str) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = mcap::WriteOptions::new().compression(None).create(file).unwrap();
    let schema = w.add_schema(type_name, "ros2msg", b"int32 data").unwrap();
    let channel = w.add_channel(schema, topic, "cdr", &Default::default()).unwrap();
    let header = mcap::records::MessageHeader {
        channel_id: channel,
        sequence: 0,
        log_time: 1_000_000_000,
        publish_time: 1_000_000_000,
    };
    w.write_to_known_channel(&header, &[0, 1, 0, 0, 7, 0, 0, 0])
        .unwrap();
    w.finish().unwrap();
}

/// Finding 1: a topic or type name of 65,536 characters or more crashed
/// `log info` (a padding width taken from the longest name); the names are
/// shown cut and the columns stay narrow, in an MCAP file and a `.db3`.
#[test]
fn names_of_any_length_are_listed_cut() {
    let dir = tmp();
    let long = format!("/{}", "n".repeat(70_000));
    let long_type = format!("pkg/msg/{}", "T".repeat(70_000));
    let m = dir.path().join("long.mcap");
    mcap_with(&m, &long, &long_type);
    let db = dir.path().join("long.db3");
    std::fs::copy(data("ros", "demo-3.db3"), &db).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE topics SET name = ?1, type = ?2 WHERE name = '/tf'",
        (&long, &long_type),
    )
    .unwrap();
    drop(c);
    for f in [&m, &db] {
        let o = run(["log".as_ref(), "info".as_ref(), f.as_os_str()]);
        assert_ok(&o);
        let out = stdout(&o);
        assert!(
            out.contains("(70001 bytes)") && out.contains("(70008 bytes)"),
            "{out}"
        );
        let widest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest < 400, "a line of {widest} characters");
    }
}

/// Finding 2: `log info` on a FIFO named like a container read by seeking
/// waited for a writer forever; it is refused at once by its name, with
/// the words export already had, whether or not a writer holds it open.
#[test]
fn a_fifo_named_as_a_seekable_container_is_refused_before_it_blocks() {
    let dir = tmp();
    for name in ["x.mcap", "x.db3"] {
        let fifo = dir.path().join(name);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for args in [vec!["log", "info"], vec!["log", "dump"], vec!["export"]] {
            let started = Instant::now();
            let mut a: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
            a.push(fifo.as_os_str());
            let out = dir.path().join("out.mp4");
            if args == ["export"] {
                a.extend([std::ffi::OsStr::new("-o"), out.as_os_str()]);
            }
            let o = run(&a);
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{args:?} {name} waited"
            );
            assert!(!o.status.success());
            let e = stderr(&o);
            assert!(
                e.contains(name) && e.contains("read by seeking in the file: give it as a file"),
                "{args:?} {name}: {e}"
            );
        }
        // A writer that holds the FIFO open and sends nothing changes nothing.
        let writer = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec 3>'{}'; sleep 30", fifo.display()))
            .spawn()
            .unwrap();
        let started = Instant::now();
        let o = run(["log".as_ref(), "info".as_ref(), fifo.as_os_str()]);
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(stderr(&o).contains("read by seeking"), "{}", stderr(&o));
        let mut writer = writer;
        let _ = writer.kill();
        let _ = writer.wait();
    }
}

/// Finding 3 (thesis-era logs): one record that does not decode cost the
/// whole log; it costs that record, said with its byte, the rest loads.
#[test]
fn a_bad_thesis_record_costs_that_record() {
    let dir = tmp();
    let good =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/thesis-era.pb")).unwrap();
    // The third record's body made undecodable: its first byte a key of
    // wire type 7 (none).
    let mut bytes = good.clone();
    let mut at = 0;
    for _ in 0..2 {
        at += 4 + u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    }
    bytes[at + 4] = 0x0f;
    let f = dir.path().join("one-bad.pb");
    std::fs::write(&f, &bytes).unwrap();
    let whole = run([
        "log".as_ref(),
        "info".as_ref(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample_logs/thesis-era.pb")
            .as_os_str(),
    ]);
    let frames = |o: &std::process::Output| {
        stdout(o)
            .lines()
            .find_map(|l| l.strip_prefix("frames:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap()
    };
    let o = run(["log".as_ref(), "info".as_ref(), f.as_os_str()]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(frames(&o), frames(&whole) - 1, "{out}");
    assert!(
        out.contains(&format!("byte {at}: ")) && out.contains("not a DrawingFrame"),
        "{out}"
    );
    assert!(
        out.contains("do not read as thesis-era binary and were passed over"),
        "{out}"
    );
    // Export reads it the same way (a log beside a video: the same door).
    let o = run([
        "log".as_ref(),
        "convert".as_ref(),
        f.as_os_str(),
        dir.path().join("back.txt").as_os_str(),
    ]);
    assert_ok(&o);
}

/// Finding 4: a gzip'ed MCAP or `.db3` was told it is none of the logs
/// underlay reads, while naming MCAP among them; it is told the real
/// reason: those are read by seeking, which gzip does not allow.
#[test]
fn a_gzipped_recording_is_told_why_it_cannot_be_read() {
    let dir = tmp();
    for name in ["demo-3.mcap", "demo-3.db3"] {
        let gz = dir.path().join(format!("{name}.gz"));
        let mut e =
            flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
        e.write_all(&std::fs::read(data("ros", name)).unwrap()).unwrap();
        e.finish().unwrap();
        let out = dir.path().join("out.mp4");
        for args in [vec!["log", "info"], vec!["export"]] {
            let mut a: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
            a.push(gz.as_os_str());
            if args == ["export"] {
                a.extend([std::ffi::OsStr::new("-o"), out.as_os_str()]);
            }
            let o = run(&a);
            assert!(!o.status.success());
            let said = stderr(&o);
            assert!(
                said.contains("gzip'ed")
                    && said.contains("read by seeking")
                    && !said.contains("none of the logs"),
                "{args:?} {name}: {said}"
            );
        }
    }
}

/// Finding 6: a static transform that puts the camera in the floor plane
/// (a translation of 5e-324) stopped an export that needs no camera;
/// `log info` now says the camera is not placed, and `--no-calibration`
/// exports.
#[test]
fn a_camera_that_cannot_be_placed_is_said_and_stops_only_what_needs_it() {
    let dir = tmp();
    let db = dir.path().join("flat.db3");
    std::fs::copy(data("ros", "demo-3.db3"), &db).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    let (id, mut blob): (i64, Vec<u8>) = c
        .query_row(
            "SELECT messages.id, data FROM messages JOIN topics ON topics.id = topic_id WHERE name = '/tf_static'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // map → camera_link's translation z (the camera's height, 6.2 m).
    let z = blob
        .windows(8)
        .position(|w| f64::from_le_bytes(w.try_into().unwrap()) == 6.200000000000002)
        .expect("the camera's height in /tf_static");
    blob[z..z + 8].copy_from_slice(&5e-324f64.to_le_bytes());
    c.execute("UPDATE messages SET data = ?1 WHERE id = ?2", (&blob, id))
        .unwrap();
    drop(c);
    let o = run(["log".as_ref(), "info".as_ref(), db.as_os_str()]);
    assert_ok(&o);
    assert!(
        stdout(&o).contains("not placed (the camera cannot be drawn through")
            && stdout(&o).contains("floor plane"),
        "{}",
        stdout(&o)
    );
    let out = dir.path().join("out.mp4");
    let o = run([
        "export".as_ref(),
        db.as_os_str(),
        "--no-calibration".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_ok(&o);
    assert!(out.exists());
    let o = run(["export".as_ref(), db.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no calibration"), "{}", stderr(&o));
}

/// Finding 7: an MCAP magic followed by a gibibyte of zeros took 10–15 s
/// to be refused; it is refused at the first record that is no record.
/// A cut recording says where it ends once, not once per read.
#[test]
fn garbage_after_the_mcap_magic_is_found_at_once_and_a_cut_is_said_once() {
    let dir = tmp();
    let zeros = dir.path().join("zeros.mcap");
    let f = std::fs::File::create(&zeros).unwrap();
    (&f).write_all(b"\x89MCAP0\r\n").unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let started = Instant::now();
    let o = run(["log".as_ref(), "info".as_ref(), zeros.as_os_str()]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stderr(&o).contains("at byte 8: opcode 0x00 is no MCAP record"),
        "{}",
        stderr(&o)
    );
    // The Foxglove fixture cut inside its summary: every message kept,
    // the cut said once.
    let cut = dir.path().join("cut.mcap");
    let bytes = std::fs::read(data("ros", "foxglove-protobuf.mcap")).unwrap();
    std::fs::write(&cut, &bytes[..12_000]).unwrap();
    let o = run(["log".as_ref(), "info".as_ref(), cut.as_os_str()]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(out.matches("ends in the middle of a record").count(), 1, "{out}");
}

/// The campaign's own finding: a damaged string length in an MCAP
/// channel record (4 GiB in a record of forty bytes) made the `mcap`
/// crate reserve 4 GiB and abort; the record is damage, said.
#[test]
fn a_string_length_past_its_record_is_damage_not_an_allocation() {
    let dir = tmp();
    let m = dir.path().join("ok.mcap");
    mcap_with(&m, "/a_topic", "std_msgs/msg/Int32");
    let mut bytes = std::fs::read(&m).unwrap();
    // Every copy of the channel's topic (in the data and the summary):
    // its length made 0xfffffff0.
    let needle = [8u8, 0, 0, 0, b'/', b'a', b'_', b't'];
    let mut n = 0;
    while let Some(i) = bytes.windows(8).position(|w| w == needle) {
        bytes[i..i + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        n += 1;
    }
    assert_eq!(n, 2);
    let bad = dir.path().join("bad.mcap");
    std::fs::write(&bad, &bytes).unwrap();
    let o = run(["log".as_ref(), "info".as_ref(), bad.as_os_str()]);
    assert!(o.status.code() == Some(1) || o.status.success(), "{:?}", o.status);
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(said.contains("its topic has 4294967280 bytes"), "{said}");
}
