//! The crate's structure: `scripts/import-graph` finds no cycle between
//! modules, none longer than two files inside one and no import upwards
//! in `src/` and the log crate (`crates/underlay-log`), and does find each
//! of them in a tree made to have them.

use std::path::Path;
use std::process::Command;

use crate::util::{stderr, tmp};

fn import_graph(src: &Path) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/import-graph");
    Command::new("python3")
        .arg(script)
        .arg("--src")
        .arg(src)
        .output()
        .expect("python3 runs scripts/import-graph")
}

#[test]
fn the_crate_has_no_import_cycle_and_no_import_upwards() {
    let o = import_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("no cycle between modules"), "{out}");
}

/// Writes `files` (path, content) under a fresh `src`.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let files: Vec<(String, &str)> = files.iter().map(|(p, t)| (format!("src/{p}"), *t)).collect();
    workspace(&files)
}

/// Writes `files` (path from the workspace's root, content) in a fresh
/// folder.
fn workspace<P: AsRef<Path>>(files: &[(P, &str)]) -> tempfile::TempDir {
    let dir = tmp();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn a_new_cycle_or_an_import_upwards_fails_it() {
    // `log` (the bottom) reading a league's file: a cycle and an import up.
    let dir = tree(&[
        ("lib.rs", "pub mod log;\npub mod ssl;\n"),
        ("log/mod.rs", "use crate::ssl::read;\npub struct Log;\n"),
        (
            "ssl/mod.rs",
            "use crate::log::Log;\npub fn read() -> Log { Log }\n",
        ),
    ]);
    let o = import_graph(&dir.path().join("src"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("cycle between modules: log ↔ ssl"), "{out}");
    assert!(out.contains("log (layer 2) imports ssl"), "{out}");
    // Three files of one module in a circle.
    let dir = tree(&[
        ("lib.rs", "pub mod log;\n"),
        ("log/mod.rs", "mod a;\nmod b;\npub use a::A;\npub struct M;\n"),
        ("log/a.rs", "use super::b::B;\npub struct A(B);\n"),
        ("log/b.rs", "use super::M;\npub struct B(M);\n"),
    ]);
    let o = import_graph(&dir.path().join("src"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !o.status.success() && out.contains("a cycle of 3 files in log"),
        "{out}"
    );
    // Two files that need each other are allowed (their `//!` says why).
    let dir = tree(&[
        ("lib.rs", "pub mod log;\n"),
        ("log/mod.rs", "mod a;\npub use a::A;\npub struct M;\n"),
        ("log/a.rs", "use super::M;\npub struct A(M);\n"),
    ]);
    let o = import_graph(&dir.path().join("src"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// The log crate is read with the application: the application's paths
/// through `crate::log` (which re-exports the crate) land in the crate's
/// files, the crate sits below every module, and a cycle inside it is
/// found as inside any module.
#[test]
fn the_log_crate_is_part_of_the_graph() {
    let app = [
        ("src/lib.rs", "pub mod geom;\npub mod log;\npub mod ssl;\n"),
        (
            "src/geom/mod.rs",
            "pub use underlay_log::geom::vec2;\npub use vec2::Vec2;\n",
        ),
        ("src/log/mod.rs", "pub use underlay_log::*;\n"),
        (
            "src/ssl/mod.rs",
            "use crate::log::Writer;\npub fn send(_: Writer) {}\n",
        ),
    ];
    let krate = [
        (
            "crates/underlay-log/src/lib.rs",
            "pub mod geom;\nmod writer;\npub use writer::Writer;\n",
        ),
        ("crates/underlay-log/src/geom/mod.rs", "pub mod vec2;\n"),
        ("crates/underlay-log/src/geom/vec2.rs", "pub struct Vec2;\n"),
    ];
    let clean = [(
        "crates/underlay-log/src/writer.rs",
        "use crate::geom::vec2::Vec2;\npub struct Writer(Vec2);\n",
    )];
    let dir = workspace(&[&app[..], &krate[..], &clean[..]].concat());
    let src = dir.path().join("src");
    let o = import_graph(&src);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("8 files"), "{out}");
    let o = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/import-graph"))
        .args(["--modules", "--src"])
        .arg(&src)
        .output()
        .unwrap();
    let modules = String::from_utf8_lossy(&o.stdout);
    for edge in [
        "geom -> underlay_log",
        "log -> underlay_log",
        "ssl -> underlay_log",
    ] {
        assert!(modules.contains(edge), "{edge}: {modules}");
    }
    // Three files of the crate in a circle.
    let cycle = [
        (
            "crates/underlay-log/src/writer.rs",
            "use crate::names::N;\npub struct Writer(N);\n",
        ),
        (
            "crates/underlay-log/src/names.rs",
            "use crate::geom::vec2::Vec2;\npub struct N(Vec2);\n",
        ),
        (
            "crates/underlay-log/src/geom/vec2.rs",
            "use crate::Writer;\npub struct Vec2(Box<Writer>);\n",
        ),
        (
            "crates/underlay-log/src/lib.rs",
            "pub mod geom;\nmod names;\nmod writer;\npub use writer::Writer;\n",
        ),
    ];
    let dir = workspace(&[&app[..], &krate[1..2], &cycle[..]].concat());
    let o = import_graph(&dir.path().join("src"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !o.status.success() && out.contains("a cycle of 3 files in underlay_log"),
        "{out}"
    );
}
