//! The crate's structure: `scripts/import-graph` finds no cycle between
//! modules, none longer than two files inside one and no import upwards
//! in `src/`, and does find each of them in a tree made to have them.

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
    let dir = tmp();
    for (path, text) in files {
        let p = dir.path().join("src").join(path);
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
    assert!(out.contains("log (layer 1) imports ssl"), "{out}");
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
