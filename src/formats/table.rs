//! The format table: every kind of input underlay reads, one line each,
//! in the order they are asked whether a file is theirs. A new format is
//! one module declaring its [`Format`] plus one line here.
//!
//! Underlay's own formats (native binary, text notation) and the still
//! picture are declared here, as their modules sit below the table's
//! description of a format ([`crate::input`]).

use std::path::{Path, PathBuf};

use super::head::HeadBuf;
use crate::input::{Format, Head, LogReader};
use crate::log::{ReadError, native, text};

/// Every format, in the order they are asked. Magic numbers come first;
/// the thesis-era record, whose test is only plausibility, last. A file
/// no line claims as a frame source is given to FFmpeg.
pub static FORMATS: &[Format] = &[
    NATIVE,
    TEXT,
    STILL,
    crate::ros::ROSBAG2,
    crate::sim3d::logs::ROBOVIZ,
    crate::sim3d::logs::PERCEPTION,
    crate::sim3d::logs::MONITOR,
    crate::sim2d::logs::GAME,
    crate::sim2d::logs::WORLD_MODEL,
    crate::sim2d::logs::DEBUG_LOG,
    crate::ssl::FORMAT,
    crate::ros::MCAP,
    crate::ros::DB3,
    crate::thesis::FORMAT,
];

/// underlay's native binary format (`proto/underlay.proto`).
pub const NATIVE: Format = Format {
    log: Some(LogReader::Stream(|r, cx| native::read_with_len(r, cx.len))),
    ..Format::new(
        "native",
        "native binary",
        "the native magic \"UNDERLAY\"",
        "*.ulog, *.ulog.zst",
        |h: &Head<'_>| h.start().starts_with(native::MAGIC),
    )
};

/// The thesis's text notation, extended.
pub const TEXT: Format = Format {
    log: Some(LogReader::Whole(|bytes, _| {
        let s = std::str::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
            offset: e.valid_up_to() as u64,
        })?;
        text::parse(s)
    })),
    ..Format::new(
        "text",
        "text notation",
        "text notation ('{')",
        "*.txt",
        |h: &Head<'_>| text::looks_like_text(h.start()),
    )
};

/// A still picture, shown as a one-frame video.
pub const STILL: Format = Format {
    source: Some(crate::video::source::open_still),
    ..Format::new(
        "picture",
        "still image",
        "a picture's magic number (PNG, JPEG, BMP, TIFF, WebP, PNM)",
        "*.png, *.jpg, …",
        |h: &Head<'_>| !h.gzip && crate::video::source::is_still(h.bytes),
    )
};

/// What to say of a folder given where a file or a recording was expected:
/// the recordings inside it that a format reads (its sub-folders, two
/// levels down), or that it holds none.
pub fn folder_problem(path: &Path) -> String {
    let mut found = Vec::new();
    let mut todo = vec![(path.to_owned(), 0)];
    while let Some((dir, depth)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .take(1000)
            .collect();
        subs.sort();
        for sub in subs.into_iter().rev() {
            let claimed = HeadBuf::of_file(&sub)
                .ok()
                .and_then(|h| any_format(&h.head(Some(&sub))).map(|f| f.name));
            match claimed {
                Some(name) => found.push((sub, name)),
                None if depth < 1 => todo.push((sub, depth + 1)),
                None => {}
            }
        }
        if found.len() >= 20 {
            break;
        }
    }
    found.sort();
    match found.as_slice() {
        [] => "is a folder, and none of what it holds is a recording underlay reads (a ROS 2 recording is \
               a folder holding metadata.yaml or .mcap/.db3 files); give a file"
            .to_owned(),
        [(one, name)] => format!(
            "is a folder, not a recording; the recording inside it is {} ({name}): give that",
            one.display()
        ),
        many => format!(
            "is a folder, not a recording; the recordings inside it are {}: give one",
            many.iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The line whose [`Format::id`] is `id`.
pub fn by_id(id: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.id == id)
}

/// The first format that reads `head` as a log.
pub fn log_format(head: &Head<'_>) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.log.is_some() && (f.recognise)(head))
}

/// The first format that opens `head` as a frame source (`None`: FFmpeg's).
pub fn source_format(head: &Head<'_>) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.source.is_some() && (f.recognise)(head))
}

/// The first format that claims `head` at all.
pub fn any_format(head: &Head<'_>) -> Option<&'static Format> {
    FORMATS.iter().find(|f| (f.recognise)(head))
}

/// Why no format reads `head` as a log: what it starts with, and what
/// the logs underlay reads start with.
pub fn not_a_log(head: &Head<'_>) -> ReadError {
    if head.bytes.is_empty() {
        return ReadError::Empty;
    }
    let shown: Vec<String> = head.bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let kinds: Vec<&str> = FORMATS
        .iter()
        .filter(|f| f.log.is_some())
        .map(|f| f.signature)
        .collect();
    let (last, rest) = kinds.split_last().unwrap_or((&"", &[]));
    let mut message = format!(
        "starts with bytes {}, which is none of the logs underlay reads: {}, nor {last}",
        shown.join(" "),
        rest.join(", "),
    );
    if let Some(other) = any_format(head) {
        message.push_str(&format!(" (it is a {}, which is not a log)", other.name));
    }
    ReadError::UnknownFormat(message)
}
