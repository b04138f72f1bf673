//! The format table: every kind of input underlay reads, one line each,
//! in the order they are asked whether a file is theirs. A new format is
//! one module declaring its [`Format`] plus one line here.
//!
//! Underlay's own formats (native binary, text notation) and the still
//! picture are declared here, as their modules sit below the table's
//! description of a format ([`crate::input`]).

use crate::input::{Format, Head, LogReader};
use crate::log::{ReadError, native, text};

/// Every format, in the order they are asked. Magic numbers come first;
/// the thesis-era record, whose test is only plausibility, last. A file
/// no line claims as a frame source is given to FFmpeg.
pub static FORMATS: &[Format] = &[
    NATIVE,
    TEXT,
    STILL,
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
