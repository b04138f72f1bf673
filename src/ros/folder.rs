//! A recording as `ros2 bag record` leaves it: a folder holding
//! `metadata.yaml` ([`super::metadata`]) beside one or more `.mcap` or
//! `.db3` files (split by size or time), each perhaps zstd-compressed
//! whole (`.mcap.zstd`). [`resolve`] turns whatever names a recording — the
//! folder, its `metadata.yaml`, any file in it, or a lone file — into its
//! [`Layout`]: its parts in order, present or missing, and its
//! compression. A folder without `metadata.yaml` is opened from the
//! recording files directly in it, in their numbering's order.
//!
//! A bag folder is untrusted: a part's path in `metadata.yaml` that is
//! absolute, climbs out with `..`, or reaches outside the folder through a
//! symbolic link (its real path is not under the folder's real path) is
//! refused in words, so a recording never makes underlay read a file it was
//! not given.

use std::path::{Component, Path, PathBuf};

use super::bag::BagError;
use super::metadata::{self, Compression, Metadata, PartInfo};

/// The name rosbag2 gives its metadata file.
pub const METADATA_FILE: &str = "metadata.yaml";

/// zstd's magic number (a frame's first four bytes).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The most files a folder may hold as parts of one recording.
pub const MAX_PARTS: usize = 10_000;

/// One file of a recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Where it is (inside the recording's folder).
    pub path: PathBuf,
    /// As `metadata.yaml` names it (or its file name).
    pub name: String,
    /// Whether it is there.
    pub present: bool,
    /// What `metadata.yaml` says of it.
    pub info: Option<PartInfo>,
}

/// A recording's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The recording's folder (`None`: a lone file, outside any bag folder).
    pub dir: Option<PathBuf>,
    /// Its `metadata.yaml`, read.
    pub metadata: Option<Metadata>,
    /// Its parts, in order.
    pub parts: Vec<Part>,
    /// What was noticed while finding them.
    pub notes: Vec<String>,
}

impl Layout {
    /// How its parts' messages are compressed (from `metadata.yaml`).
    pub fn compression(&self) -> Compression {
        self.metadata
            .as_ref()
            .map_or(Compression::None, |m| m.compression)
    }
}

/// Whether `name` is a recording file's name: `.mcap`, `.db3`, or either
/// with `.zstd` after it.
pub fn is_recording_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".zstd").unwrap_or(&n);
    n.ends_with(".mcap") || n.ends_with(".db3")
}

/// Whether `path` is a folder `ros2 bag record` could have written: it
/// holds `metadata.yaml` or a recording file.
pub fn is_bag_dir(path: &Path) -> bool {
    path.join(METADATA_FILE).is_file() || recording_files(path).is_ok_and(|f| !f.is_empty())
}

fn io(path: &Path, source: std::io::Error) -> BagError {
    BagError::Io {
        path: path.to_owned(),
        source,
    }
}

fn corrupt(path: &Path, message: impl Into<String>) -> BagError {
    BagError::Corrupt {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The recording `path` names (see the module docs).
pub fn resolve(path: &Path) -> Result<Layout, BagError> {
    let meta = std::fs::metadata(path).map_err(|e| io(path, e))?;
    if meta.is_dir() {
        return of_dir(path);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => Path::new("."),
    };
    let start = super::bag::file_start(path, crate::input::HEAD_BYTES as u64)?;
    if name == METADATA_FILE || metadata::looks_like_metadata(&start) {
        if name != METADATA_FILE {
            return Err(corrupt(
                path,
                format!(
                    "is a rosbag2 metadata file, but rosbag2 reads only one named {METADATA_FILE}: rename it"
                ),
            ));
        }
        return of_dir(parent);
    }
    // A file of a bag folder: the whole recording, when its metadata.yaml
    // lists it. A metadata.yaml that cannot be read leaves the file alone.
    let mut notes = Vec::new();
    if parent.join(METADATA_FILE).is_file() {
        let abs = |p: &Path| std::fs::canonicalize(p).ok();
        let me = abs(path);
        let layout = of_dir(parent).unwrap_or_else(|e| {
            notes.push(format!(
                "the {METADATA_FILE} beside it is not read ({}): the file is read alone",
                crate::error::chain(&e)
            ));
            Layout {
                dir: None,
                metadata: None,
                parts: Vec::new(),
                notes: Vec::new(),
            }
        });
        if let Some(i) = layout.parts.iter().position(|p| p.present && abs(&p.path) == me) {
            let mut layout = layout;
            if layout.parts.len() > 1 {
                layout.notes.push(format!(
                    "{name} is part {} of {} of the recording in {}: the whole recording is read",
                    i + 1,
                    layout.parts.len(),
                    parent.display()
                ));
            }
            return Ok(layout);
        }
    }
    Ok(Layout {
        dir: None,
        metadata: None,
        parts: vec![Part {
            path: path.to_owned(),
            name,
            present: true,
            info: None,
        }],
        notes,
    })
}

/// The recording in the folder `dir`.
fn of_dir(dir: &Path) -> Result<Layout, BagError> {
    let real_dir = std::fs::canonicalize(dir).map_err(|e| io(dir, e))?;
    let meta_path = dir.join(METADATA_FILE);
    if !meta_path.is_file() {
        let files = recording_files(dir).map_err(|e| io(dir, e))?;
        if files.is_empty() {
            return Err(corrupt(
                dir,
                format!(
                    "is a folder with no {METADATA_FILE} and no .mcap or .db3 file: not a ROS 2 recording"
                ),
            ));
        }
        let mut notes = vec![format!(
            "no {METADATA_FILE}: read from its {} recording file{} in their order",
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        )];
        let mut parts = Vec::new();
        for name in files {
            let path = dir.join(&name);
            match inside(&real_dir, &path) {
                Ok(()) => parts.push(Part {
                    path,
                    name,
                    present: true,
                    info: None,
                }),
                Err(why) => notes.push(format!("{name} is left out: {why}")),
            }
        }
        return Ok(Layout {
            dir: Some(dir.to_owned()),
            metadata: None,
            parts,
            notes,
        });
    }
    inside(&real_dir, &meta_path).map_err(|why| corrupt(&meta_path, why))?;
    let text =
        crate::files::read_text_limited(&meta_path, metadata::MAX_METADATA).map_err(|e| io(&meta_path, e))?;
    let m = metadata::parse(&text).map_err(|e| corrupt(&meta_path, e.to_string()))?;
    if m.files.is_empty() {
        return Err(corrupt(
            &meta_path,
            "lists no file (relative_file_paths is empty)",
        ));
    }
    if m.files.len() > MAX_PARTS {
        return Err(corrupt(
            &meta_path,
            format!("lists {} files, more than the {MAX_PARTS} read", m.files.len()),
        ));
    }
    let mut notes = Vec::new();
    if !m.storage.is_empty() && !matches!(m.storage.as_str(), "mcap" | "sqlite3") {
        notes.push(format!(
            "its storage is `{}`: its files are read by what they start with",
            m.storage
        ));
    }
    let dir_name = dir_name(&real_dir);
    let mut parts = Vec::new();
    for f in &m.files {
        let rel = checked_relative(&f.path).map_err(|why| corrupt(&meta_path, why))?;
        let mut path = dir.join(&rel);
        // Before version 4 (Foxy and earlier), the paths began with the
        // bag folder's own name.
        if !path.exists()
            && let Some(name) = &dir_name
            && let Ok(rest) = rel.strip_prefix(name)
            && !rest.as_os_str().is_empty()
        {
            path = dir.join(rest);
        }
        // Compression FILE: rosbag2 lists the compressed name; an older one
        // the plain name beside a `.zstd` file.
        if !path.exists() && m.compression == Compression::File {
            let z = PathBuf::from(format!("{}.zstd", path.display()));
            if z.exists() {
                path = z;
            }
        }
        let present = path.is_file();
        if present {
            inside(&real_dir, &path).map_err(|why| corrupt(&meta_path, format!("{}: {why}", f.path)))?;
        }
        parts.push(Part {
            path,
            name: f.path.clone(),
            present,
            info: Some(f.clone()),
        });
    }
    Ok(Layout {
        dir: Some(dir.to_owned()),
        metadata: Some(m),
        parts,
        notes,
    })
}

fn dir_name(real_dir: &Path) -> Option<PathBuf> {
    real_dir.file_name().map(PathBuf::from)
}

/// A part's path as `metadata.yaml` gives it, if it stays inside the
/// folder by its words: relative, no `..`.
fn checked_relative(p: &str) -> Result<PathBuf, String> {
    let path = Path::new(p);
    if p.is_empty() {
        return Err("lists a file with an empty name".into());
    }
    if p.contains('\0') {
        return Err(format!("lists `{}`, a name with a NUL byte", p.escape_debug()));
    }
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "lists `{p}`, which climbs out of the recording's folder (`..`): refused"
                ));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "lists `{p}`, an absolute path outside the recording's folder: refused"
                ));
            }
        }
    }
    Ok(path.to_owned())
}

/// Whether `path`'s real location (symbolic links followed) is inside
/// `real_dir`.
fn inside(real_dir: &Path, path: &Path) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("cannot be resolved ({e})"))?;
    if real.starts_with(real_dir) {
        Ok(())
    } else {
        Err(format!(
            "is a symbolic link to {}, outside the recording's folder: refused",
            real.display()
        ))
    }
}

/// The recording files directly in `dir` (not in its sub-folders), in
/// their numbering's order (`b_2` before `b_10`).
pub fn recording_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if is_recording_name(&name) && !name.starts_with('.') && e.path().is_file() {
            names.push(name);
            if names.len() > MAX_PARTS {
                return Err(std::io::Error::other(format!(
                    "more than {MAX_PARTS} recording files in one folder"
                )));
            }
        }
    }
    names.sort_by_key(|a| natural_key(a));
    Ok(names)
}

/// A name as text and numbers, so that numbers compare by value.
fn natural_key(s: &str) -> Vec<(String, u128)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n: u128 = u128::from(c as u8 - b'0');
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                n = n.saturating_mul(10).saturating_add(u128::from(d as u8 - b'0'));
                chars.next();
            }
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    out.push((text, 0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::write(p, text).unwrap();
    }

    fn meta(files: &[&str]) -> String {
        let list: String = files.iter().map(|f| format!("    - {f}\n")).collect();
        format!(
            "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  relative_file_paths:\n{list}"
        )
    }

    #[test]
    fn a_folder_its_metadata_and_its_files_name_the_same_recording() {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("run");
        std::fs::create_dir(&bag).unwrap();
        write(
            &bag.join(METADATA_FILE),
            &meta(&["run_0.mcap", "run_1.mcap", "run_2.mcap"]),
        );
        for i in [0, 2] {
            write(&bag.join(format!("run_{i}.mcap")), "x");
        }
        let a = resolve(&bag).unwrap();
        assert_eq!(a.parts.len(), 3);
        assert_eq!(
            a.parts.iter().map(|p| p.present).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert_eq!(resolve(&bag.join(METADATA_FILE)).unwrap().parts, a.parts);
        let b = resolve(&bag.join("run_2.mcap")).unwrap();
        assert_eq!(b.parts, a.parts);
        assert!(b.notes[0].contains("part 3 of 3"), "{:?}", b.notes);
        // A file not in the list is read alone.
        write(&bag.join("other.mcap"), "x");
        assert_eq!(resolve(&bag.join("other.mcap")).unwrap().parts.len(), 1);
        // So is a file beside a metadata.yaml that cannot be read, with a note.
        write(&bag.join(METADATA_FILE), "rosbag2_bagfile_information: [");
        let l = resolve(&bag.join("run_2.mcap")).unwrap();
        assert_eq!(l.parts.len(), 1);
        assert!(l.notes[0].contains("is not read"), "{:?}", l.notes);
        assert!(resolve(&bag).is_err());
    }

    #[test]
    fn a_folder_without_metadata_is_read_from_its_files_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["b_10.mcap", "b_2.mcap", "b_1.mcap.zstd", "notes.txt", ".b_0.mcap"] {
            write(&dir.path().join(n), "x");
        }
        let l = resolve(dir.path()).unwrap();
        let names: Vec<&str> = l.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["b_1.mcap.zstd", "b_2.mcap", "b_10.mcap"]);
        assert!(l.notes[0].contains("no metadata.yaml"), "{:?}", l.notes);
        let empty = tempfile::tempdir().unwrap();
        let e = resolve(empty.path()).unwrap_err().to_string();
        assert!(e.contains("not a ROS 2 recording"), "{e}");
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("bag");
        std::fs::create_dir(&bag).unwrap();
        write(&dir.path().join("secret.mcap"), "x");
        for (listed, says) in [
            ("../secret.mcap", "climbs out"),
            ("sub/../../secret.mcap", "climbs out"),
            ("/etc/passwd", "absolute path"),
        ] {
            write(&bag.join(METADATA_FILE), &meta(&[listed]));
            let e = resolve(&bag).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("refused"), "{listed}: {e}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.mcap"), bag.join("link.mcap")).unwrap();
            write(&bag.join(METADATA_FILE), &meta(&["link.mcap"]));
            let e = resolve(&bag).unwrap_err().to_string();
            assert!(e.contains("symbolic link") && e.contains("refused"), "{e}");
            // Without metadata.yaml the link is left out, with a note.
            std::fs::remove_file(bag.join(METADATA_FILE)).unwrap();
            write(&bag.join("own.mcap"), "x");
            let l = resolve(&bag).unwrap();
            assert_eq!(l.parts.len(), 1);
            assert!(
                l.notes.iter().any(|n| n.contains("link.mcap is left out")),
                "{:?}",
                l.notes
            );
            // A link inside the folder is fine.
            std::os::unix::fs::symlink(bag.join("own.mcap"), bag.join("again.mcap")).unwrap();
            write(&bag.join(METADATA_FILE), &meta(&["again.mcap"]));
            assert!(resolve(&bag).unwrap().parts[0].present);
        }
    }

    #[test]
    fn foxy_paths_start_with_the_folder_name() {
        let dir = tempfile::tempdir().unwrap();
        let bag = dir.path().join("rosbag2_2020");
        std::fs::create_dir(&bag).unwrap();
        write(&bag.join("rosbag2_2020_0.db3"), "x");
        write(
            &bag.join(METADATA_FILE),
            &meta(&["rosbag2_2020/rosbag2_2020_0.db3"]),
        );
        let l = resolve(&bag).unwrap();
        assert!(l.parts[0].present, "{:?}", l.parts);
        assert_eq!(l.parts[0].path, bag.join("rosbag2_2020_0.db3"));
    }

    proptest::proptest! {
        // Each case makes a folder: a tenth of the usual cases.
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: (crate::testing::fuzz_cases() / 10).max(20),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any listed path either resolves inside the folder or is refused;
        /// never a panic.
        #[test]
        fn listed_paths_stay_inside(names in proptest::collection::vec("[a-z./_0-9]{0,12}", 1..4)) {
            let dir = tempfile::tempdir().unwrap();
            let bag = dir.path().join("bag");
            std::fs::create_dir(&bag).unwrap();
            write(&bag.join(METADATA_FILE), &meta(&names.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().iter().map(String::as_str).collect::<Vec<_>>()));
            if let Ok(l) = resolve(&bag) {
                let real = std::fs::canonicalize(&bag).unwrap();
                for p in l.parts.iter().filter(|p| p.present) {
                    proptest::prop_assert!(std::fs::canonicalize(&p.path).unwrap().starts_with(&real));
                }
            }
        }
    }
}
