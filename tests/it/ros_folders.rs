//! ROS 2 recordings as `ros2 bag record` leaves them (issue 47): a folder
//! of `metadata.yaml` and one or more files. Real bags written by rosbag2
//! itself (`tests/data/real/ros2/`, see `tests/data/real/SOURCES.md`) open
//! from the folder, its `metadata.yaml` or a file in it, split ones played
//! as one in time order, a lost part said; folders written by
//! `scripts/ros-bag-folder.py` (rosbags' rosbag2 writer) from the committed
//! `demo-3.mcap` — split in three, each storage, each compression mode,
//! metadata versions 1 to 9 — export the very frames the one-file
//! recording exports; a folder that points outside itself is refused.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{assert_ok, run, stderr, text};

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real/ros2")
        .join(name)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every message of every topic of the recording `path` names, as
/// (log time, topic name).
fn messages(path: &Path) -> (Vec<(u64, String)>, Vec<String>) {
    let mut rec = underlay::ros::recording::open(path).unwrap();
    let ids: Vec<u32> = rec.info().topics.iter().map(|t| t.id).collect();
    let mut out = Vec::new();
    let notes = rec
        .read(&ids, None, &mut |t, time, _| {
            out.push((time, t.name.clone()));
            ControlFlow::Continue(())
        })
        .unwrap();
    let mut all = rec.info().notes.clone();
    all.extend(notes);
    (out, all)
}

/// rosbag2's own bags (versions 4 to 8, MCAP and SQLite, split in five, a
/// folder without metadata.yaml) open from the folder, its metadata.yaml
/// and a file in it, with `log info`, `dump`, `select` and `convert`.
#[test]
fn rosbag2s_own_recordings_open_from_the_folder_its_metadata_or_a_file() {
    let tmp = crate::util::tmp();
    for (name, file, topics, count) in [
        ("sqlite3-talker-v4", "talker.db3", 3, 20),
        ("sqlite3-cdr-test-v7", "cdr_test_0.db3", 2, 7),
        ("mcap-wbag-split5", "wbag_3.mcap", 8, 6074),
        (
            "mcap-topics-and-services-v8",
            "bag_with_topics_and_service_events.mcap",
            5,
            10,
        ),
        ("mcap-rewriter-b-v6", "rewriter_b_0.mcap", 2, 75),
        ("mcap-no-metadata-split3", "multiple_files_1.mcap", 1, 3177),
    ] {
        let dir = real(name);
        let (all, _) = messages(&dir);
        assert_eq!(all.len(), count, "{name}");
        assert!(
            all.windows(2).all(|w| w[0].0 <= w[1].0),
            "{name}: not in time order"
        );
        for given in [dir.clone(), dir.join("metadata.yaml"), dir.join(file)] {
            if !given.exists() {
                continue;
            }
            let o = run(["log", "info", p(&given)]);
            assert_ok(&o);
            let t = text(&o);
            assert!(t.contains(&format!("topics:      {topics}")), "{name}: {t}");
            // A file of a folder without metadata.yaml is read alone.
            if !(name.contains("no-metadata") && given.is_file()) {
                assert!(t.contains("recording:   folder"), "{name}: {t}");
            }
        }
        assert_ok(&run(["log", "dump", p(&dir)]));
        assert_ok(&run(["log", "select", p(&dir), "--at", "0"]));
        let out = tmp.path().join(format!("{name}.ulog"));
        assert_ok(&run(["log", "convert", p(&dir), p(&out)]));
        assert!(out.exists());
    }
    // The split recording: each file's messages follow the last file's.
    let t = text(&run(["log", "info", p(&real("mcap-wbag-split5"))]));
    assert!(
        t.contains("5 files, metadata.yaml version 4, storage mcap"),
        "{t}"
    );
    assert!(t.contains("AAA  std_msgs/msg/String      804"), "{t}");
    // Nothing in these is drawn, and log info says why for each topic.
    assert!(
        t.contains("not drawn: not a message type underlay draws (decodable)"),
        "{t}"
    );
}

/// A split recording with a part lost says which, and the time span lost,
/// and plays the rest; with metadata.yaml's `files:` the span is the part's
/// own, without it the gap between its neighbours.
#[test]
fn a_missing_part_is_said_and_the_rest_is_played() {
    let tmp = crate::util::tmp();
    let bag = tmp.path().join("wbag");
    std::fs::create_dir(&bag).unwrap();
    for e in std::fs::read_dir(real("mcap-wbag-split5")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), bag.join(e.file_name())).unwrap();
    }
    std::fs::remove_file(bag.join("wbag_2.mcap")).unwrap();
    let (all, notes) = messages(&bag);
    assert_eq!(all.len(), 6074 - 1240);
    let note = notes.iter().find(|n| n.contains("wbag_2.mcap")).expect("a note");
    assert!(
        note.contains("part 3 of 5") && note.contains("is missing") && note.contains("between"),
        "{note}"
    );
    let o = run(["log", "info", p(&bag)]);
    assert_ok(&o);
    let t = text(&o);
    assert!(
        t.contains("4 of 5 files") && t.contains("part 3 of 5 (wbag_2.mcap) is missing"),
        "{t}"
    );
}

/// A bag folder that points outside itself — `..`, an absolute path, a
/// symbolic link — is refused in words, by every command.
#[test]
fn a_folder_pointing_outside_itself_is_refused() {
    let tmp = crate::util::tmp();
    let outside = tmp.path().join("outside.mcap");
    std::fs::copy(real("mcap-rewriter-b-v6/rewriter_b_0.mcap"), &outside).unwrap();
    let bag = tmp.path().join("bag");
    std::fs::create_dir(&bag).unwrap();
    let meta = |path: &str| {
        format!(
            "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  relative_file_paths:\n    - {path}\n"
        )
    };
    let mut cases = vec![
        ("../outside.mcap".to_owned(), "climbs out"),
        (outside.display().to_string(), "absolute path"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, bag.join("link.mcap")).unwrap();
        cases.push(("link.mcap".to_owned(), "symbolic link"));
    }
    for (listed, says) in cases {
        std::fs::write(bag.join("metadata.yaml"), meta(&listed)).unwrap();
        for cmd in [
            vec!["log", "info", p(&bag)],
            vec!["export", p(&bag), "-o", p(&tmp.path().join("x.mp4"))],
        ] {
            let o = run(&cmd);
            assert!(!o.status.success(), "{listed}: {cmd:?}");
            let e = stderr(&o);
            assert!(
                e.contains(says) && e.contains("refused"),
                "{listed}: {cmd:?}: {e}"
            );
        }
    }
}

/// A folder where a recording was expected names the recording inside it.
#[test]
fn a_folder_holding_a_bag_names_it() {
    let tmp = crate::util::tmp();
    let runs = tmp.path().join("runs");
    let bag = runs.join("rosbag2_2024_05_01-10_00_00");
    std::fs::create_dir_all(&bag).unwrap();
    for f in ["metadata.yaml", "rewriter_b_0.mcap"] {
        std::fs::copy(real("mcap-rewriter-b-v6").join(f), bag.join(f)).unwrap();
    }
    for cmd in [
        vec!["log", "info", p(&runs)],
        vec!["export", p(&runs), "-o", p(&tmp.path().join("x.mp4"))],
    ] {
        let o = run(&cmd);
        assert!(!o.status.success(), "{cmd:?}");
        let e = stderr(&o);
        assert!(
            e.contains("is a folder") && e.contains("rosbag2_2024_05_01-10_00_00"),
            "{cmd:?}: {e}"
        );
    }
}

/// Writes `demo-3.mcap` as a bag folder with `scripts/ros-bag-folder.py`;
/// `None` (skipped) without a Python that has rosbags and mcap.
fn folder(out: &Path, extra: &[&str]) -> Option<PathBuf> {
    let python = crate::util::python_with("rosbags, mcap", "a Python with rosbags and mcap")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ros-bag-folder.py");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/demo-3.mcap");
    let o = Command::new(python)
        .arg(script)
        .arg(src)
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "ros-bag-folder.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(out.to_owned())
}

fn export(input: &Path, out: &Path) -> Vec<underlay::video::source::SourceFrame> {
    assert_ok(&run([
        "export",
        p(input),
        "-o",
        p(out),
        "--no-mask",
        "--crf",
        "0",
    ]));
    crate::demo::read_all(out)
}

/// The same recording split in three, in each storage, uncompressed and
/// in each compression mode, with metadata.yaml of versions 1 to 9 (and
/// none): every one lists its pictures and drawings, and exports exactly
/// the frames the one-file recording exports.
#[test]
fn split_and_compressed_folders_export_the_frames_of_the_whole_recording() {
    let tmp = crate::util::tmp();
    let whole = export(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/demo-3.mcap"),
        &tmp.path().join("whole.mp4"),
    );
    assert_eq!(whole.len(), 3);
    let cases: [(&str, &str, &str); 8] = [
        ("mcap", "none", "1"),
        ("mcap", "file", "4"),
        ("mcap", "message", "5"),
        ("sqlite3", "none", "6"),
        ("sqlite3", "file", "8"),
        ("sqlite3", "message", "9"),
        ("mcap", "message", "none"),
        // Before Foxy: no definitions in the files, `pkg/Type` names.
        ("sqlite3", "message", "2-prefoxy"),
    ];
    for (storage, compression, version) in cases {
        let name = format!("{storage}-{compression}-{version}");
        let out = tmp.path().join(&name);
        let mut args = vec!["--split", "3", "--storage", storage, "--compression", compression];
        let version = match version.strip_suffix("-prefoxy") {
            Some(v) => {
                args.push("--pre-foxy");
                v
            }
            None => version,
        };
        if version == "none" {
            args.push("--no-metadata");
        } else {
            args.extend(["--metadata-version", version]);
        }
        let Some(bag) = folder(&out, &args) else { return };
        let t = text(&run(["log", "info", p(&bag)]));
        for want in ["3 files", "      3  pictures", "      3  drawn", "(fixed)"] {
            assert!(t.contains(want), "{name}: `{want}` missing from\n{t}");
        }
        assert!(!t.contains("no definition"), "{name}: {t}");
        if args.contains(&"--pre-foxy") {
            assert!(t.contains("sensor_msgs/CompressedImage "), "{name}: {t}");
        }
        // The folder, and a part of it, export the whole recording's frames.
        let part = std::fs::read_dir(&bag)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().contains("_1."))
            .unwrap();
        let inputs = if version == "none" {
            vec![bag.clone()]
        } else {
            vec![bag.clone(), part]
        };
        for input in inputs {
            let frames = export(&input, &tmp.path().join(format!("{name}.mp4")));
            assert_eq!(frames.len(), whole.len(), "{name}: {}", input.display());
            for (a, b) in whole.iter().zip(&frames) {
                assert_eq!(a.time, b.time, "{name}");
                assert!(a.image == b.image, "{name}: frame at {} differs", a.time);
            }
        }
    }
}

/// Messages compressed one by one that do not decompress, or decode, say
/// why with their first bytes; a recording with nothing drawn says, for each
/// topic, why, and `--world` on one without transforms says it has none.
#[test]
fn what_cannot_be_drawn_is_said() {
    let tmp = crate::util::tmp();
    // rosbag2's talker bag: no transforms, nothing drawn.
    let talker = real("sqlite3-talker-v4");
    let o = run(["log", "info", p(&talker), "--world", "map"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("has no transforms") && e.contains("leave out --world"),
        "{e}"
    );
    let o = run(["log", "info", p(&talker)]);
    let t = text(&o);
    assert!(
        t.contains("nothing is drawn from the recording's topics")
            && t.contains("/topic (std_msgs/msg/String): not a message type underlay draws"),
        "{t}"
    );
    // A payload of zstd's magic and garbage.
    let Some(bag) = folder(&tmp.path().join("m"), &["--compression", "message"]) else {
        return;
    };
    let (all, _) = messages(&bag);
    assert_eq!(all.len(), 13);
    let mut rec = underlay::ros::recording::open(&bag).unwrap();
    let ids: Vec<u32> = rec.info().topics.iter().map(|t| t.id).collect();
    let mut ok = 0;
    rec.read(&ids, None, &mut |_, _, m| {
        ok += usize::from(m.is_ok());
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(ok, 13, "every compressed message decodes");
}

/// The committed `demo-3.mcap` as a bag folder (no Python needed):
/// `bag_0.mcap` beside a version-5 `metadata.yaml`.
fn demo_folder(dir: &Path) -> PathBuf {
    let bag = dir.join("demo_bag");
    std::fs::create_dir_all(&bag).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/demo-3.mcap"),
        bag.join("demo_bag_0.mcap"),
    )
    .unwrap();
    std::fs::write(
        bag.join("metadata.yaml"),
        "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  \
         relative_file_paths:\n    - demo_bag_0.mcap\n  compression_format: \"\"\n  compression_mode: \"\"\n",
    )
    .unwrap();
    bag
}

/// Every command that takes a recording takes the folder: `view`, `live
/// --log`, a session's `video` and `logs`, `batch` (and `export`, `log` and
/// `sync` above and below, which say of the folder what they say of its file).
#[test]
fn every_command_takes_the_folder() {
    let tmp = crate::util::tmp();
    let bag = demo_folder(tmp.path());
    let whole = export(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/demo-3.mcap"),
        &tmp.path().join("whole.mp4"),
    );
    // A session naming the folder as its video and its log.
    let session = tmp.path().join("s.toml");
    std::fs::write(&session, "video = \"demo_bag\"\nlogs = [\"demo_bag\"]\n").unwrap();
    let frames = export(&session, &tmp.path().join("s.mp4"));
    assert!(frames.iter().zip(&whole).all(|(a, b)| a.image == b.image));
    // batch: an export job of the folder.
    std::fs::write(
        tmp.path().join("jobs.toml"),
        "[[job]]\nargs = [\"demo_bag\", \"-o\", \"b.mp4\", \"--no-mask\", \"--crf\", \"0\"]\n",
    )
    .unwrap();
    assert_ok(&run(["batch", p(&tmp.path().join("jobs.toml"))]));
    let frames = crate::demo::read_all(&tmp.path().join("b.mp4"));
    assert!(frames.len() == 3 && frames.iter().zip(&whole).all(|(a, b)| a.image == b.image));
    // live: the folder's drawings over a video, as the file's.
    let mut live = Vec::new();
    for log in [bag.clone(), bag.join("demo_bag_0.mcap")] {
        let out = tmp.path().join("live.mp4");
        assert_ok(&run([
            "live",
            p(&tmp.path().join("whole.mp4")),
            "--log",
            p(&log),
            "--no-view",
            "--no-calibration",
            "--out",
            p(&out),
            "--duration",
            "1",
        ]));
        live.push(std::fs::metadata(&out).unwrap().len() > 0);
    }
    assert_eq!(live, [true, true]);
    // sync says of the folder what it says of its file.
    let said = |input: &Path| stderr(&run(["sync", p(input), "--log", p(input)])).replace(p(input), "X");
    assert_eq!(said(&bag), said(&bag.join("demo_bag_0.mcap")));
    // view: a screenshot of the folder, under a virtual display.
    let Some(x) = crate::util::Xvfb::start() else {
        return;
    };
    let png = tmp.path().join("view.png");
    let o = crate::util::underlay_cmd()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "view",
            p(&bag),
            "--at",
            "0.05",
            "--size",
            "800x600",
            "--screenshot",
            p(&png),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(underlay::video::still::load_rgb(&png).is_ok());
}
