//! Visualization logs: the in-memory model and every format it is read
//! from and written to.
//!
//! - [`model`]: the one in-memory form everything else uses.
//! - [`native`]: underlay's own binary format (schema in
//!   `proto/underlay.proto`): a 10-byte prefix, then varint-delimited
//!   protobuf records, optionally zstd-compressed.
//! - [`thesis`]: the thesis-era binary logs (`[u32 length][DrawingFrame]`).
//! - [`text`]: the thesis's human-readable text notation, extended so that
//!   it holds everything the model holds.
//! - [`writer`]: the streaming [`Writer`] robot programs log with.
//! - [`summary`]: counts, time range and entity tree for `log info`.
//! - [`merge()`]: several logs (a game log and agents' debug logs) as one.
//!
//! RoboCup SSL game logs are read too ([`crate::ssl`] turns the league's
//! packets into a log). [`load`] sniffs the format from a file's content
//! (any of them may be gzip'ed); [`save`] picks it from the extension. Readers validate as they go: frames and primitives
//! that cannot be drawn (NaN or infinite coordinates, negative sizes,
//! persistent frames ending before they start) are dropped with a
//! [`LoadWarning`] naming the place, and a torn last record (a writer that
//! died mid-frame) loads every complete frame plus a warning.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

mod merge;
pub mod model;
pub mod names;
pub mod native;
pub mod proto;
pub mod reference;
pub mod summary;
#[cfg(any(test, feature = "test-util"))]
pub mod testutil;
pub mod text;
pub mod thesis;
pub(crate) mod wire;
pub mod writer;

pub use merge::merge;
pub use model::*;
pub use writer::{PrimitiveBuilder, Writer, WriterOptions};

/// The largest record (one frame) any reader accepts: 64 MiB. Guards
/// against corrupt length prefixes making a reader allocate unbounded memory.
pub const MAX_RECORD_LEN: u64 = 64 << 20;

/// At most this many warnings are kept per load; the rest are counted.
pub const MAX_WARNINGS: usize = 200;

/// The formats a log can be read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// underlay's native binary format (`proto/underlay.proto`).
    Native,
    /// The thesis's text notation.
    Text,
    /// The thesis-era binary stream of `[u32 length][DrawingFrame]`.
    Thesis,
    /// A RoboCup Small Size League game log (`SSL_LOG_FILE`).
    Ssl,
    /// A 3D-league agent's perception log, drawn as what it saw
    /// ([`crate::sim3d::logs`]).
    Perception3d,
    /// A recording of RoboViz drawing datagrams (`.rvd`).
    RoboViz,
    /// A 3D-league monitor log (the match; as a log, the ball's trail).
    Monitor3d,
    /// A 2D-league game log, drawn as the server's sensor models.
    Game2d,
    /// A 2D-league agent's debug log (librcsc `Logger`).
    DebugLog2d,
    /// A 2D-league agent's world model (librcsc debug client, `.dcl`).
    WorldModel2d,
}

impl Format {
    /// A short human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native binary",
            Format::Text => "text notation",
            Format::Thesis => "thesis-era binary",
            Format::Ssl => "SSL game log",
            Format::Perception3d => "3D agent perception log (what it saw, placed)",
            Format::RoboViz => "RoboViz drawing recording",
            Format::Monitor3d => "3D monitor log (the ball's trail)",
            Format::Game2d => "2D game log (the server's sensor models)",
            Format::DebugLog2d => "2D agent debug log",
            Format::WorldModel2d => "2D agent world model (what it believed)",
        }
    }
}

/// What went wrong reading a log, with the place it went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system failed to read.
    #[error("read failed at byte {offset}: {error}")]
    Io { offset: u64, error: io::Error },
    /// Zero bytes.
    #[error("the file is empty")]
    Empty,
    /// Neither native, text nor thesis-era (e.g. a wrong magic).
    #[error("not a visualization log: {0}")]
    UnknownFormat(String),
    /// A native log of a version this build cannot read.
    #[error("native log format version {0} is not supported (this build reads version {v})", v = native::FORMAT_VERSION)]
    UnsupportedVersion(u8),
    /// An SSL game log of a version this build cannot read.
    #[error("SSL_LOG_FILE version {0} is not supported (this build reads version 1)")]
    UnsupportedSslVersion(i32),
    /// A native log with an unknown compression byte.
    #[error("native log compression {0} is not supported (0 = none, 1 = zstd)")]
    UnsupportedCompression(u8),
    /// Bytes that do not decode; `frame` is the index the frame being
    /// read would have had.
    #[error("at byte {offset} (frame {frame}): {message}")]
    Corrupt {
        offset: u64,
        frame: usize,
        message: String,
    },
    /// Text notation that does not parse (1-based line and column).
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// Text notation with bytes that are not UTF-8.
    #[error("at byte {offset}: text is not valid UTF-8")]
    NotUtf8 { offset: u64 },
    /// A 3D-league file that could not be read as a log.
    #[error(transparent)]
    Sim3d(#[from] crate::sim3d::logs::Error),
    /// A 2D-league file that could not be read as a log.
    #[error(transparent)]
    Sim2d(#[from] crate::sim2d::logs::Error),
}

/// Errors of loading and saving logs; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Opening, creating, writing or renaming the file failed.
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    /// The file's content could not be read as a log.
    #[error("{path}: {error}")]
    Read { path: PathBuf, error: ReadError },
    /// The [`Writer`] was used in a way that cannot be written.
    #[error("{path}: {message}")]
    Usage { path: PathBuf, message: String },
}

impl LogError {
    pub(crate) fn io(path: &Path, error: io::Error) -> Self {
        LogError::Io {
            path: path.to_owned(),
            error,
        }
    }
}

/// The first two bytes of gzip data.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How many bytes are looked at to recognise a format (a 3D-league
/// perception log needs its first line).
const SNIFF_BYTES: u64 = 4096;

/// Text notation is read whole; at most this many bytes of it (gzip'ed or
/// not: `/dev/zero` or an endless FIFO would otherwise fill memory).
pub const MAX_TEXT_LOG: u64 = 1 << 30;

/// Decides the format from the first bytes of a log (at least 16 when the
/// log has them), decompressed if the file is gzip'ed.
pub fn sniff(prefix: &[u8]) -> Result<Format, ReadError> {
    if prefix.is_empty() {
        return Err(ReadError::Empty);
    }
    if prefix.starts_with(native::MAGIC) {
        return Ok(Format::Native);
    }
    if crate::ssl::file::looks_like_ssl(prefix) {
        return Ok(Format::Ssl);
    }
    if text::looks_like_text(prefix) {
        return Ok(Format::Text);
    }
    if thesis::looks_like_thesis(prefix) {
        return Ok(Format::Thesis);
    }
    let shown: Vec<String> = prefix.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Err(ReadError::UnknownFormat(format!(
        "starts with bytes {}, which is neither the native magic \"UNDERLAY\", an SSL game log \
         (\"SSL_LOG_FILE\"), text notation ('{{'), a 3D-league perception log or RoboViz recording, \
         nor a plausible thesis-era record",
        shown.join(" ")
    )))
}

/// Reads a log from any byte stream, sniffing its format.
pub fn read(r: impl Read) -> Result<(Log, Format), ReadError> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    read_buffered(&mut r, None, None)
}

/// Up to 16 bytes from the start of `r`.
fn read_prefix(r: &mut impl Read) -> Result<Vec<u8>, ReadError> {
    let mut prefix = Vec::with_capacity(16);
    r.by_ref()
        .take(16)
        .read_to_end(&mut prefix)
        .map_err(|source| ReadError::Io {
            offset: 0,
            error: source,
        })?;
    Ok(prefix)
}

/// Reads a log of any format, gzip'ed or not. `path`, when the bytes come
/// from a file, may name what is in it (a perception log's agent).
fn read_buffered<R: BufRead>(
    r: &mut R,
    total_len: Option<u64>,
    path: Option<&Path>,
) -> Result<(Log, Format), ReadError> {
    let prefix = read_prefix(r)?;
    if !prefix.starts_with(&GZIP_MAGIC) {
        let rest = io::Cursor::new(prefix).chain(r);
        return read_format(rest, total_len, false, path);
    }
    let whole = io::Cursor::new(prefix).chain(r);
    let mut gz = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, whole));
    let inner = read_prefix(&mut gz).map_err(|e| match e {
        ReadError::Io { error, .. } => {
            ReadError::UnknownFormat(format!("gzip data that does not decompress ({error})"))
        }
        e => e,
    })?;
    if inner.starts_with(&GZIP_MAGIC) {
        return Err(ReadError::UnknownFormat("gzip inside gzip".to_owned()));
    }
    let rest = io::Cursor::new(inner).chain(gz);
    read_format(rest, None, true, path).map_err(|e| match e {
        ReadError::UnknownFormat(m) => ReadError::UnknownFormat(format!("gzip'ed data that {m}")),
        e => e,
    })
}

/// Reads a log whose first bytes `rest` still holds; `decompressed` when
/// it comes out of gzip.
fn read_format(
    rest: impl Read,
    total_len: Option<u64>,
    decompressed: bool,
    path: Option<&Path>,
) -> Result<(Log, Format), ReadError> {
    // The first bytes, enough to recognise any format (a chained or
    // decompressing reader may hand out fewer at a time).
    let mut rest = rest;
    let mut first = Vec::with_capacity(SNIFF_BYTES as usize);
    (&mut rest)
        .take(SNIFF_BYTES)
        .read_to_end(&mut first)
        .map_err(|error| ReadError::Io { offset: 0, error })?;
    let head = &first[..first.len().min(16)];
    let classic = head.starts_with(native::MAGIC) || text::looks_like_text(head);
    if !classic && let Some(kind) = crate::sim3d::logs::sniff(&first) {
        let bytes = read_all(io::Cursor::new(first).chain(rest))?;
        let log = crate::sim3d::logs::read(kind, &bytes, path)?;
        let format = match kind {
            crate::sim3d::logs::Kind::RoboViz => Format::RoboViz,
            crate::sim3d::logs::Kind::Monitor => Format::Monitor3d,
            crate::sim3d::logs::Kind::Perception => Format::Perception3d,
        };
        return Ok((log, format));
    }
    if !classic && let Some(kind) = crate::sim2d::logs::sniff(&first) {
        let bytes = read_all(io::Cursor::new(first).chain(rest))?;
        let log = crate::sim2d::logs::read(kind, &bytes, path, &crate::sim2d::logs::Context::default())?;
        let format = match kind {
            crate::sim2d::logs::Kind::Game => Format::Game2d,
            crate::sim2d::logs::Kind::DebugLog => Format::DebugLog2d,
            crate::sim2d::logs::Kind::WorldModel => Format::WorldModel2d,
        };
        return Ok((log, format));
    }
    let format = sniff(&first)?;
    let rest = BufReader::with_capacity(1 << 18, io::Cursor::new(first).chain(rest));
    let log = match format {
        Format::Native => native::read_with_len(rest, total_len)?,
        Format::Thesis => thesis::read_with_len(rest, total_len)?,
        Format::Ssl => crate::ssl::read_log(rest, decompressed)?,
        Format::Text => {
            let mut bytes = Vec::new();
            rest.take(MAX_TEXT_LOG + 1)
                .read_to_end(&mut bytes)
                .map_err(|source| ReadError::Io {
                    offset: 0,
                    error: source,
                })?;
            if bytes.len() as u64 > MAX_TEXT_LOG {
                let what = if decompressed {
                    "gzip'ed text notation"
                } else {
                    "text notation"
                };
                return Err(ReadError::Corrupt {
                    offset: MAX_TEXT_LOG,
                    frame: 0,
                    message: format!("{what} of more than {MAX_TEXT_LOG} bytes is not read"),
                });
            }
            let s = std::str::from_utf8(&bytes).map_err(|e| ReadError::NotUtf8 {
                offset: e.valid_up_to() as u64,
            })?;
            text::parse(s)?
        }
        Format::Perception3d
        | Format::RoboViz
        | Format::Monitor3d
        | Format::Game2d
        | Format::DebugLog2d
        | Format::WorldModel2d => {
            return Err(ReadError::UnknownFormat(format!(
                "{} not recognised",
                format.name()
            )));
        }
    };
    Ok((log, format))
}

/// Reads the rest of a 3D-league file, bounded by
/// [`crate::sim3d::input::MAX_INPUT`].
fn read_all(r: impl Read) -> Result<Vec<u8>, ReadError> {
    use crate::sim3d::input::{MAX_INPUT, ReadLimited, read_limited};
    read_limited(r, MAX_INPUT).map_err(|e| match e {
        ReadLimited::Io(error) => ReadError::Io { offset: 0, error },
        ReadLimited::TooLarge => ReadError::Corrupt {
            offset: MAX_INPUT,
            frame: 0,
            message: format!("larger than {MAX_INPUT} bytes (decompressed)"),
        },
        ReadLimited::Gzip { offset, error } => ReadError::Corrupt {
            offset,
            frame: 0,
            message: format!("gzip data corrupt after {offset} decompressed bytes: {error}"),
        },
    })
}

/// Loads a log file of any supported format (sniffed from its content).
///
/// A truncated file loads every complete frame and records a warning
/// naming the byte offset and frame index in [`Log::warnings`].
pub fn load(path: &Path) -> Result<Log, LogError> {
    load_with_format(path).map(|(log, _)| log)
}

/// Like [`load`], also telling which format the file was in.
pub fn load_with_format(path: &Path) -> Result<(Log, Format), LogError> {
    let file = crate::files::open_input(path).map_err(|e| LogError::io(path, e))?;
    // A pipe's metadata says 0 bytes: only a regular file's length is known.
    let len = crate::files::known_len(&file);
    let mut r = BufReader::with_capacity(1 << 18, file);
    read_buffered(&mut r, len, Some(path)).map_err(|error| LogError::Read {
        path: path.to_owned(),
        error,
    })
}

/// How [`save_as`] writes a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveFormat {
    /// Native binary, compressed with zstd at `zstd_level` when it is `Some`.
    Native {
        /// zstd level (1–22), or `None` for no compression.
        zstd_level: Option<i32>,
    },
    /// Text notation.
    Text,
}

impl SaveFormat {
    /// The format [`save`] uses for `path`: `.txt` → text notation, `.zst`
    /// → zstd-compressed native binary, anything else → native binary.
    pub fn for_path(path: &Path) -> Self {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
        {
            Some(e) if e == "txt" => SaveFormat::Text,
            Some(e) if e == "zst" => SaveFormat::Native { zstd_level: Some(3) },
            _ => SaveFormat::Native { zstd_level: None },
        }
    }
}

/// Saves a log in the format its extension asks for (see
/// [`SaveFormat::for_path`]), atomically: a temporary file beside `path`
/// is renamed over it only once complete.
pub fn save(log: &Log, path: &Path) -> Result<(), LogError> {
    save_as(log, path, SaveFormat::for_path(path))
}

/// Saves a log in the given format, atomically.
pub fn save_as(log: &Log, path: &Path, format: SaveFormat) -> Result<(), LogError> {
    write_file_atomic(path, |w| match format {
        SaveFormat::Native { zstd_level } => native::write(log, w, zstd_level),
        SaveFormat::Text => text::write(log, w),
    })
}

/// Streams into a temporary file beside `path`, then renames it over
/// `path`; on failure the temporary file is removed.
pub(crate) fn write_file_atomic(
    path: &Path,
    body: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<()>,
) -> Result<(), LogError> {
    crate::files::write_atomic_with(path, body).map_err(|e| LogError::io(path, e))
}

/// Where a frame came from, for warnings.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    /// Byte offset of the frame's record in a binary file.
    Byte(u64),
    /// Line of the frame in a text file.
    Line(usize),
}

/// Collects load warnings, keeping the first [`MAX_WARNINGS`].
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    list: Vec<LoadWarning>,
    dropped: usize,
}

impl Warnings {
    pub fn push(&mut self, place: Option<Place>, frame: Option<usize>, message: impl Into<String>) {
        if self.list.len() >= MAX_WARNINGS {
            self.dropped += 1;
            return;
        }
        let mut message = message.into();
        let offset = match place {
            Some(Place::Byte(o)) => Some(o),
            Some(Place::Line(l)) => {
                message = format!("line {l}: {message}");
                None
            }
            None => None,
        };
        self.list.push(LoadWarning {
            offset,
            frame,
            message,
        });
    }

    /// The warnings, plus one summarizing those not kept.
    pub fn finish(mut self) -> Vec<LoadWarning> {
        if self.dropped > 0 {
            self.list.push(LoadWarning {
                offset: None,
                frame: None,
                message: format!("… and {} more warnings", self.dropped),
            });
        }
        self.list
    }
}

/// Validates the primitives pushed onto `log` since `start` and the frame
/// time, then appends the frame. Primitives that cannot be drawn are
/// removed and the whole frame is dropped when its time is unusable; each
/// drop is a warning naming the frame (`index`, in file order) and the
/// primitive (index within the frame).
pub(crate) fn close_frame(
    log: &mut Log,
    warnings: &mut Warnings,
    time: FrameTime,
    start: usize,
    index: usize,
    place: Place,
) {
    if let Some(problem) = time_problem(time) {
        warnings.push(Some(place), Some(index), format!("frame dropped: {problem}"));
        log.primitives.truncate(start);
        return;
    }
    let prims = &mut log.primitives[start..];
    if let Some(first_bad) = prims.iter().position(|p| !drawable(p)) {
        let mut keep = first_bad;
        for i in first_bad..prims.len() {
            match (!drawable(&prims[i])).then(|| shape_problem(&prims[i])).flatten() {
                Some(problem) => warnings.push(
                    Some(place),
                    Some(index),
                    format!(
                        "primitive {i} ({}) dropped: {problem}",
                        prims[i].shape.kind_name()
                    ),
                ),
                None => {
                    prims.swap(keep, i);
                    keep += 1;
                }
            }
        }
        log.primitives.truncate(start + keep);
    }
    log.frames.push(Frame {
        time,
        primitives: start..log.primitives.len(),
    });
}

fn time_problem(time: FrameTime) -> Option<String> {
    match time {
        FrameTime::Instant(t) if !t.is_finite() => Some(format!("instantaneous time {t} is not finite")),
        FrameTime::Instant(_) => None,
        FrameTime::Persistent { start, end } => {
            if start.is_nan() || end.is_nan() {
                Some(format!("persistent time {{{start}; {end}}} is not a number"))
            } else if end < start {
                Some(format!(
                    "persistent frame ends ({end}) before it starts ({start})"
                ))
            } else if start == f64::INFINITY || end == f64::NEG_INFINITY {
                Some(format!("persistent frame {{{start}; {end}}} covers no time"))
            } else {
                None
            }
        }
    }
}

/// Whether a primitive can be drawn: finite coordinates, finite
/// non-negative sizes, a polygon with vertices. [`shape_problem`] says why not.
#[inline]
pub(crate) fn drawable(p: &Primitive) -> bool {
    let size = |s: f64| s.is_finite() && s >= 0.0;
    let shape = match &p.shape {
        Shape::Circle { center, radius } => center.is_finite() && size(*radius),
        Shape::Line { start, end } => start.is_finite() && end.is_finite(),
        Shape::Rectangle {
            center,
            size: s,
            orientation,
        } => center.is_finite() && size(s.x) && size(s.y) && orientation.is_finite(),
        Shape::Polygon { vertices, .. } => !vertices.is_empty() && vertices.iter().all(|v| v.is_finite()),
        Shape::Text { anchor, size: s, .. } => anchor.is_finite() && size(*s),
        Shape::Point {
            position, size: s, ..
        } => position.is_finite() && size(*s),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => {
            center.is_finite()
                && size(*inner)
                && size(*outer)
                && inner <= outer
                && start.is_finite()
                && sweep.is_finite()
        }
    };
    shape && size(f64::from(p.style.thickness))
}

/// Why a primitive cannot be drawn, if it cannot.
pub(crate) fn shape_problem(p: &Primitive) -> Option<String> {
    let point =
        |name: &str, v: Vec2| (!v.is_finite()).then(|| format!("{name} ({}, {}) is not finite", v.x, v.y));
    let size = |name: &str, s: f64| {
        if !s.is_finite() {
            Some(format!("{name} {s} is not finite"))
        } else if s < 0.0 {
            Some(format!("{name} {s} is negative"))
        } else {
            None
        }
    };
    let shape = match &p.shape {
        Shape::Circle { center, radius } => point("center", *center).or_else(|| size("radius", *radius)),
        Shape::Line { start, end } => point("start", *start).or_else(|| point("end", *end)),
        Shape::Rectangle {
            center,
            size: s,
            orientation,
        } => point("center", *center)
            .or_else(|| size("length", s.x))
            .or_else(|| size("width", s.y))
            .or_else(|| {
                (!orientation.is_finite()).then(|| format!("orientation {orientation} is not finite"))
            }),
        Shape::Polygon { vertices, .. } => {
            if vertices.is_empty() {
                Some("polygon has no vertices".to_owned())
            } else {
                vertices
                    .iter()
                    .position(|v| !v.is_finite())
                    .and_then(|i| point(&format!("vertex {i}"), vertices[i]))
            }
        }
        Shape::Text { anchor, size: s, .. } => point("anchor", *anchor).or_else(|| size("text size", *s)),
        Shape::Point {
            position, size: s, ..
        } => point("position", *position).or_else(|| size("marker size", *s)),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => point("center", *center)
            .or_else(|| size("inner radius", *inner))
            .or_else(|| size("outer radius", *outer))
            .or_else(|| (inner > outer).then(|| format!("inner radius {inner} exceeds outer radius {outer}")))
            .or_else(|| (!start.is_finite()).then(|| format!("start angle {start} is not finite")))
            .or_else(|| (!sweep.is_finite()).then(|| format!("sweep {sweep} is not finite"))),
    };
    shape.or_else(|| size("thickness", f64::from(p.style.thickness)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circle(r: f64) -> Primitive {
        Primitive {
            shape: Shape::Circle {
                center: Vec2::new(1.0, 2.0),
                radius: r,
            },
            style: Style::default(),
            entity: EntityId(0),
            level: 0,
        }
    }

    #[test]
    fn close_frame_drops_bad_primitives_and_names_them() {
        let mut log = Log::new();
        log.entities.intern("e");
        let mut w = Warnings::default();
        log.primitives
            .extend([circle(1.0), circle(-1.0), circle(f64::NAN), circle(3.0)]);
        close_frame(&mut log, &mut w, FrameTime::Instant(1.0), 0, 7, Place::Byte(99));
        assert_eq!(log.frames.len(), 1);
        let radii: Vec<f64> = log
            .primitives
            .iter()
            .map(|p| match p.shape {
                Shape::Circle { radius, .. } => radius,
                _ => 0.0,
            })
            .collect();
        assert_eq!(radii, [1.0, 3.0]);
        let w = w.finish();
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].offset, Some(99));
        assert_eq!(w[0].frame, Some(7));
        assert!(
            w[0].message.contains("primitive 1") && w[0].message.contains("negative"),
            "{w:?}"
        );
        assert!(w[1].message.contains("primitive 2"), "{w:?}");
    }

    #[test]
    fn close_frame_drops_frames_with_unusable_times() {
        let mut log = Log::new();
        let mut w = Warnings::default();
        for (i, t) in [
            FrameTime::Persistent { start: 5.0, end: 1.0 },
            FrameTime::Instant(f64::INFINITY),
            FrameTime::Persistent {
                start: f64::NAN,
                end: 1.0,
            },
        ]
        .into_iter()
        .enumerate()
        {
            log.primitives.push(circle(1.0));
            close_frame(&mut log, &mut w, t, 0, i, Place::Line(3));
        }
        assert!(log.frames.is_empty() && log.primitives.is_empty());
        let w = w.finish();
        assert_eq!(w.len(), 3);
        assert!(w[0].message.starts_with("line 3: ") && w[0].message.contains("before it starts"));
    }

    #[test]
    fn warnings_are_capped_and_counted() {
        let mut w = Warnings::default();
        for i in 0..MAX_WARNINGS + 5 {
            w.push(None, Some(i), "x");
        }
        let list = w.finish();
        assert_eq!(list.len(), MAX_WARNINGS + 1);
        assert!(list.last().is_some_and(|l| l.message.contains("5 more")));
    }

    #[test]
    fn save_format_follows_extension() {
        assert_eq!(SaveFormat::for_path(Path::new("a/b.TXT")), SaveFormat::Text);
        assert_eq!(
            SaveFormat::for_path(Path::new("b.ulog")),
            SaveFormat::Native { zstd_level: None }
        );
        assert!(matches!(
            SaveFormat::for_path(Path::new("b.ulog.zst")),
            SaveFormat::Native { zstd_level: Some(_) }
        ));
    }

    /// Cases per fuzzing property: 2000 by default, more with
    /// `UNDERLAY_FUZZ_CASES=N cargo test --release --lib log::tests`.
    fn fuzz_cases() -> u32 {
        std::env::var("UNDERLAY_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2000)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random bytes never panic, hang or exhaust memory, whatever
        /// format they are sniffed as.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
                                    start in 0u8..4) {
            let mut b = match start {
                0 => native::prefix(false).to_vec(),
                1 => native::prefix(true).to_vec(),
                2 => b"{ { 1; {".to_vec(),
                _ => Vec::new(),
            };
            b.extend_from_slice(&bytes);
            let _ = read(&b[..]);
            let _ = native::read(&b[..]);
            let _ = thesis::read(&b[..]);
            if let Ok(s) = std::str::from_utf8(&b) {
                let _ = text::parse(s);
            }
        }

        /// Valid logs with a few bytes changed, cut or spliced load or
        /// fail cleanly; what loads is drawable (no NaN, no negative size).
        #[test]
        fn mutated_logs_never_panic(
            log in testutil::arb_log(),
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::prelude::any::<u8>()), 1..8),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            which in 0u8..4,
        ) {
            let mut b = match which {
                0 => native::to_bytes(&log),
                1 => {
                    let mut z = Vec::new();
                    native::write(&log, &mut z, Some(1)).unwrap();
                    z
                }
                2 => text::print(&log).into_bytes(),
                _ => {
                    let mut t = Vec::new();
                    for f in &log.frames {
                        let shapes = log.frame_primitives(f).iter().map(|p| thesis::ThesisShape {
                            primitive: p,
                            replay: None,
                        });
                        thesis::write_frame(&mut t, &log, f.time, shapes).unwrap();
                    }
                    t
                }
            };
            if !b.is_empty() {
                for (i, v) in edits {
                    let i = i.index(b.len());
                    b[i] = v;
                }
                b.truncate(cut.index(b.len() + 1));
            }
            if let Ok((got, _)) = read(&b[..]) {
                for p in &got.primitives {
                    proptest::prop_assert!(drawable(p) && shape_problem(p).is_none());
                    proptest::prop_assert!(p.entity.index() < got.entities.len());
                }
                for f in &got.frames {
                    proptest::prop_assert!(f.primitives.end <= got.primitives.len());
                }
            }
        }
    }

    #[test]
    fn sniff_rejects_empty_and_garbage() {
        assert!(matches!(sniff(&[]), Err(ReadError::Empty)));
        let e = sniff(&[0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]).unwrap_err();
        assert!(e.to_string().contains("de ad be ef"), "{e}");
    }
}
