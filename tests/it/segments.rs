//! `underlay export --segment K/N` and `underlay concat` as real binaries:
//! four parts of a 2D match and of the demo (adaptive mask, a lead-in per
//! part), exported losslessly, joined in a shuffled order, decode to the
//! frames and timestamps of the one-piece export; parts that do not fit
//! together are refused by name.

use std::path::Path;

use underlay::video::{Decoder, SourceFrame};

use crate::util::{assert_ok, run, run_in, stderr, tmp};

const MATCH: &str = "tests/data/sim2d/match2.rcg.gz";

fn frames(path: &Path) -> Vec<SourceFrame> {
    let mut d = Decoder::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(f) = d.next_frame().unwrap() {
        out.push(f);
    }
    out
}

/// Exports `args` whole and in four parts (losslessly), joins the parts
/// and compares the frames.
fn whole_equals_joined(dir: &Path, input: &str, extra: &[&str]) {
    let export = |out: &str, more: &[&str]| {
        let mut a = vec!["export", input, "-o", out, "--crf", "0", "--preset", "ultrafast"];
        a.extend_from_slice(extra);
        a.extend_from_slice(more);
        assert_ok(&run_in(dir, a));
    };
    export("whole.mp4", &[]);
    for k in 1..=4 {
        export(&format!("part{k}.mp4"), &["--segment", &format!("{k}/4")]);
    }
    let o = run_in(
        dir,
        [
            "concat",
            "part3.mp4",
            "part1.mp4",
            "part4.mp4",
            "part2.mp4",
            "-o",
            "joined.mp4",
        ],
    );
    assert_ok(&o);
    assert!(stderr(&o).contains("4 parts"), "{}", stderr(&o));
    let (whole, joined) = (frames(&dir.join("whole.mp4")), frames(&dir.join("joined.mp4")));
    assert!(whole.len() >= 8, "{}", whole.len());
    assert_eq!(joined.len(), whole.len());
    let parts: usize = (1..=4)
        .map(|k| frames(&dir.join(format!("part{k}.mp4"))).len())
        .sum();
    assert_eq!(parts, whole.len(), "each frame in exactly one part");
    for (i, (a, b)) in whole.iter().zip(&joined).enumerate() {
        assert!(
            (a.time - b.time).abs() < 1e-9,
            "frame {i}: {} vs {}",
            a.time,
            b.time
        );
        assert!(a.image == b.image, "frame {i} at {:.3} s differs", a.time);
    }
}

#[test]
fn four_parts_of_a_match_join_into_the_whole_export() {
    let dir = tmp();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(MATCH),
        dir.path().join("m.rcg.gz"),
    )
    .unwrap();
    whole_equals_joined(dir.path(), "m.rcg.gz", &["--to", "3", "--size", "320x180"]);
}

#[test]
fn four_parts_of_the_demo_join_into_the_whole_export() {
    let dir = tmp();
    let demo = dir.path().join("demo");
    assert_ok(&run([
        "demo",
        "--out",
        demo.to_str().unwrap(),
        "--no-view",
        "--width",
        "320",
        "--height",
        "180",
        "--fps",
        "10",
        "--duration",
        "3",
    ]));
    // The adaptive mask carries a model from frame to frame: each part
    // starts it in its lead-in, so the parts draw what the whole does.
    whole_equals_joined(&demo, "session.toml", &["--from", "0.25"]);
}

#[test]
fn parts_that_do_not_fit_together_are_named() {
    let dir = tmp();
    let d = dir.path();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(MATCH),
        d.join("m.rcg.gz"),
    )
    .unwrap();
    let export = |out: &str, seg: &str, crf: &str| {
        assert_ok(&run_in(
            d,
            [
                "export",
                "m.rcg.gz",
                "-o",
                out,
                "--to",
                "1",
                "--size",
                "160x90",
                "--crf",
                crf,
                "--segment",
                seg,
            ],
        ));
    };
    export("a1.mp4", "1/3", "30");
    export("a2.mp4", "2/3", "30");
    export("b2.mp4", "2/2", "30");
    export("c3.mp4", "3/3", "20");
    let refused = |parts: &[&str], says: &[&str]| {
        let mut a = vec!["concat"];
        a.extend_from_slice(parts);
        a.extend_from_slice(&["-o", "j.mp4"]);
        let o = run_in(d, a);
        assert!(!o.status.success(), "{parts:?}");
        let e = stderr(&o);
        for s in says {
            assert!(e.contains(s), "{parts:?}: {e}");
        }
        assert!(!d.join("j.mp4").exists(), "nothing written");
    };
    refused(&["a1.mp4", "a2.mp4"], &["part 3 of 3 is missing"]);
    refused(&["a1.mp4", "a2.mp4", "a2.mp4"], &["both part 2 of 3"]);
    refused(&["a1.mp4", "b2.mp4"], &["b2.mp4", "part 2 of 2"]);
    refused(&["a1.mp4", "a2.mp4", "c3.mp4"], &["c3.mp4", "different exports"]);
    refused(&["a1.mp4", "m.rcg.gz"], &["m.rcg.gz"]);
    // A finished export is not a part.
    assert_ok(&run_in(
        d,
        [
            "export", "m.rcg.gz", "-o", "w.mp4", "--to", "1", "--size", "160x90",
        ],
    ));
    refused(&["w.mp4"], &["w.mp4", "not a part"]);
    // Bad part numbers are refused before anything runs.
    for bad in ["0/4", "5/4", "x", "2/0", "1/2/3"] {
        let o = run_in(d, ["export", "m.rcg.gz", "-o", "p.mp4", "--segment", bad]);
        assert!(!o.status.success(), "{bad}");
        assert!(stderr(&o).contains("K/N"), "{bad}: {}", stderr(&o));
    }
}
