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

/// underlay's native binary format (`crates/underlay-log/proto/underlay.proto`).
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
    log: Some(LogReader::Whole(|bytes, _| match std::str::from_utf8(bytes) {
        Ok(s) => text::parse(s),
        // Bytes that are not UTF-8 cost only what holds them: read as
        // U+FFFD, they make their item fail to parse (passed over) or stay
        // in a name or a string, said.
        Err(e) => {
            let mut log = text::parse(&String::from_utf8_lossy(bytes))?;
            log.warnings.insert(
                0,
                crate::log::LoadWarning {
                    offset: Some(e.valid_up_to() as u64),
                    frame: None,
                    message: "the text is not valid UTF-8 from here on in places; those bytes were read as \
                              U+FFFD (\u{fffd})"
                        .to_owned(),
                },
            );
            Ok(log)
        }
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

/// The format read by seeking in its files (an indexed container) whose
/// usual names `path`'s name matches, when `path` is not a regular file
/// (a FIFO, a device): such a file cannot be read, and opening it would
/// wait for a writer, so it is refused by its name before it is opened —
/// the only words there are about it then.
pub fn seekable_by_name(path: &Path) -> Option<&'static Format> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() || meta.is_dir() {
        return None;
    }
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    FORMATS.iter().find(|f| {
        matches!(f.log, Some(LogReader::File(_)))
            && f.names
                .split(',')
                .filter_map(|n| n.trim().strip_prefix('*'))
                .any(|suffix| name.ends_with(&suffix.to_ascii_lowercase()))
    })
}

/// What [`seekable_by_name`] says of `path`, read as `format`.
pub fn seekable_pipe_message(format: &Format) -> String {
    format!(
        "not a regular file (a pipe or a device), and its name says {}, which is read by seeking in the \
         file: give it as a file",
        format.name
    )
}

/// The format read by seeking in its files that `head` would be were it
/// not gzip'ed: a gzip'ed copy of an indexed container cannot be read.
pub fn gzipped_seekable(head: &Head<'_>) -> Option<&'static Format> {
    if !head.gzip {
        return None;
    }
    log_format(&Head { gzip: false, ..*head }).filter(|f| matches!(f.log, Some(LogReader::File(_))))
}

/// What [`gzipped_seekable`] says of a file, read as `format`.
pub fn gzipped_seekable_message(format: &Format) -> String {
    format!(
        "gzip'ed {}: that is read by seeking in the file, which a gzip'ed copy does not allow; \
         decompress it first (gunzip -k)",
        format.name
    )
}

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
    if let Some(f) = gzipped_seekable(head) {
        return ReadError::Other(gzipped_seekable_message(f).into());
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
