//! The `SSL_LOG_FILE` container, version 1, read as a stream.
//!
//! Layout (all integers big-endian): the 12 ASCII bytes `SSL_LOG_FILE`
//! and an `i32` version, then records of an `i64` receive time
//! (nanoseconds since the Unix epoch, the recorder's clock), an `i32`
//! message type, an `i32` payload size and the payload. Types: 0 blank,
//! 1 unknown, 2 vision of before 2014, 3 referee, 4 vision, 5 tracker,
//! 6 index. An indexed file ends with an index record whose payload is
//! the offset of every earlier record (`i64` each), an `i64` giving the
//! index record's own length from its start to the end of the file, and
//! the ASCII bytes `INDEXED`.
//!
//! [`RecordReader`] hands out one record at a time from any byte stream
//! (a gzip'ed file is decompressed on the way in by the caller) and keeps
//! only the current payload: memory stays bounded whatever the file's
//! length. Payloads of the types underlay decodes are at most
//! [`MAX_PACKET_LEN`] (the league's packets travel in UDP datagrams of at
//! most 64 KiB); other records are skipped without being held, the index
//! included, which is checked against the records it lists.
//!
//! Damage is reported, never fatal past the header: a file that ends
//! inside a record (a recorder that died) or whose decompression fails
//! keeps every complete record before, with a warning naming the byte
//! offset; so does a record header that cannot be right (a negative size,
//! or one no packet can have), since the records after it cannot be
//! found. Another magic or version is an error.

use std::collections::BTreeMap;
use std::io::{self, Read};

use crate::log::{LoadWarning, Place, ReadError, Warnings};

/// The first 12 bytes of every SSL game log.
pub const MAGIC: &[u8; 12] = b"SSL_LOG_FILE";
/// The version this reader reads.
pub const VERSION: i32 = 1;
/// Magic and version.
pub const HEADER_LEN: u64 = 16;
/// Receive time, type and size before each payload.
pub const RECORD_HEADER_LEN: u64 = 16;
/// The largest payload of a type underlay decodes.
pub const MAX_PACKET_LEN: u64 = 1 << 20;
/// What an indexed file ends with.
const INDEX_MARKER: &[u8; 7] = b"INDEXED";

/// The message type of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MessageType {
    Blank,
    Unknown,
    /// Vision of before 2014 (`LegacyVisionPacket`).
    LegacyVision,
    Referee,
    Vision,
    Tracker,
    Index,
    /// A type number this reader does not know.
    Other(i32),
}

impl MessageType {
    /// The type of a record's type number.
    pub fn from_code(code: i32) -> MessageType {
        match code {
            0 => MessageType::Blank,
            1 => MessageType::Unknown,
            2 => MessageType::LegacyVision,
            3 => MessageType::Referee,
            4 => MessageType::Vision,
            5 => MessageType::Tracker,
            6 => MessageType::Index,
            n => MessageType::Other(n),
        }
    }

    /// The type number.
    pub fn code(self) -> i32 {
        match self {
            MessageType::Blank => 0,
            MessageType::Unknown => 1,
            MessageType::LegacyVision => 2,
            MessageType::Referee => 3,
            MessageType::Vision => 4,
            MessageType::Tracker => 5,
            MessageType::Index => 6,
            MessageType::Other(n) => n,
        }
    }

    /// Whether underlay decodes the payload of this type.
    pub fn is_decoded(self) -> bool {
        matches!(
            self,
            MessageType::LegacyVision | MessageType::Referee | MessageType::Vision | MessageType::Tracker
        )
    }
}

/// An SSL game log of a version this build cannot read.
#[derive(Debug, thiserror::Error)]
#[error("SSL_LOG_FILE version {0} is not supported (this build reads version 1)")]
pub struct UnsupportedVersion(pub i32);

/// Whether `prefix` starts like an SSL game log.
pub fn looks_like_ssl(prefix: &[u8]) -> bool {
    prefix.starts_with(MAGIC)
}

/// One record whose payload underlay decodes.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// Byte offset of the record's header in the (decompressed) stream.
    pub offset: u64,
    /// Index among all records of the file, from 0.
    pub index: u64,
    /// Receive time, nanoseconds since the epoch.
    pub time_ns: i64,
    pub kind: MessageType,
    pub payload: &'a [u8],
}

impl Record<'_> {
    /// The receive time in seconds since the epoch.
    pub fn time(&self) -> f64 {
        ns_to_seconds(self.time_ns)
    }
}

/// Nanoseconds → seconds, rounding once.
pub fn ns_to_seconds(ns: i64) -> f64 {
    let (s, frac) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    s as f64 + frac as f64 * 1e-9
}

/// What the reader saw besides the decoded records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSummary {
    /// Complete records read, of every type.
    pub records: u64,
    /// How many of each type.
    pub by_type: BTreeMap<MessageType, u64>,
    /// Whether the file ends with an index record that matches its records.
    pub indexed: bool,
    /// Where the records stopped at damage the reader could not pass.
    pub skipped: crate::log::Skipped,
}

/// Reads the records of one SSL game log; see the [module docs](self).
pub struct RecordReader<R> {
    r: R,
    offset: u64,
    buf: Vec<u8>,
    summary: FileSummary,
    /// Offsets of the first and the latest record.
    first_offset: Option<u64>,
    last_offset: u64,
    seen_index: bool,
    warned_after_index: bool,
    warnings: Warnings,
    /// "" or " of the decompressed data", after "byte N" in messages.
    where_: &'static str,
    done: bool,
}

impl<R: Read> RecordReader<R> {
    /// Checks the header. `decompressed` says that offsets count bytes of
    /// decompressed data (the messages say so).
    pub fn new(mut r: R, decompressed: bool) -> Result<Self, ReadError> {
        let mut header = [0u8; HEADER_LEN as usize];
        let got = read_full(&mut r, &mut header).map_err(|error| ReadError::Io { offset: 0, error })?;
        if got < MAGIC.len() || !looks_like_ssl(&header) {
            return Err(ReadError::UnknownFormat(
                "an SSL game log starts with \"SSL_LOG_FILE\"".to_owned(),
            ));
        }
        if got < header.len() {
            return Err(ReadError::Corrupt {
                offset: got as u64,
                frame: 0,
                message: "the file ends inside its header (magic and version)".to_owned(),
            });
        }
        let version = i32::from_be_bytes([header[12], header[13], header[14], header[15]]);
        if version != VERSION {
            return Err(ReadError::other(UnsupportedVersion(version)));
        }
        Ok(RecordReader {
            r,
            offset: HEADER_LEN,
            buf: Vec::new(),
            summary: FileSummary::default(),
            first_offset: None,
            last_offset: 0,
            seen_index: false,
            warned_after_index: false,
            warnings: Warnings::default(),
            where_: if decompressed {
                " of the decompressed data"
            } else {
                ""
            },
            done: false,
        })
    }

    /// The next record whose payload underlay decodes, or `None` at the end
    /// (or after damage, with a warning). Fails only when the operating
    /// system fails to read.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, ReadError> {
        while !self.done {
            let start = self.offset;
            let mut head = [0u8; RECORD_HEADER_LEN as usize];
            let got = match read_full(&mut self.r, &mut head) {
                Ok(n) => n,
                Err(e) => return self.damaged(start, e).map(|()| None),
            };
            if got == 0 {
                self.done = true;
                break;
            }
            if got < head.len() {
                self.torn(
                    start,
                    format!("the data ends inside a record header ({got} of 16 bytes)"),
                );
                break;
            }
            let time_ns = i64::from_be_bytes([
                head[0], head[1], head[2], head[3], head[4], head[5], head[6], head[7],
            ]);
            let kind = MessageType::from_code(i32::from_be_bytes([head[8], head[9], head[10], head[11]]));
            let size = i32::from_be_bytes([head[12], head[13], head[14], head[15]]);
            let Ok(size) = u64::try_from(size) else {
                self.lost_framing(start, format!("record size {size} is negative"));
                break;
            };
            if (kind.is_decoded() || matches!(kind, MessageType::Other(_))) && size > MAX_PACKET_LEN {
                self.lost_framing(
                    start,
                    format!(
                        "a record of message type {} claims {size} bytes, more than any packet has \
                         (at most {MAX_PACKET_LEN})",
                        kind.code()
                    ),
                );
                break;
            }
            self.offset += RECORD_HEADER_LEN;
            if self.seen_index && !self.warned_after_index {
                self.warned_after_index = true;
                self.summary.indexed = false;
                self.warnings.push(
                    Some(Place::Byte(start)),
                    None,
                    format!("records follow the index record (byte {start}{})", self.where_),
                );
            }
            let complete = match kind {
                MessageType::Index => self.read_index(start, size)?,
                k if k.is_decoded() => self.read_payload(start, size)?,
                _ => self.skip_payload(start, size)?,
            };
            if !complete {
                break;
            }
            self.first_offset.get_or_insert(start);
            self.last_offset = start;
            let index = self.summary.records;
            self.summary.records += 1;
            *self.summary.by_type.entry(kind).or_insert(0) += 1;
            if kind.is_decoded() {
                return Ok(Some(Record {
                    offset: start,
                    index,
                    time_ns,
                    kind,
                    payload: &self.buf,
                }));
            }
        }
        Ok(None)
    }

    /// The summary and the warnings, once the records are read.
    pub fn finish(mut self) -> (FileSummary, Vec<LoadWarning>) {
        for (kind, n) in &self.summary.by_type {
            if matches!(kind, MessageType::Unknown | MessageType::Other(_)) {
                self.warnings.push(
                    None,
                    None,
                    format!(
                        "{n} record{} of message type {} skipped (not a type underlay reads)",
                        if *n == 1 { "" } else { "s" },
                        kind.code()
                    ),
                );
            }
        }
        (self.summary, self.warnings.finish())
    }

    /// Reads a payload into the buffer; `false` when the data ended first.
    fn read_payload(&mut self, start: u64, size: u64) -> Result<bool, ReadError> {
        // `size` ≤ MAX_PACKET_LEN, so this allocation is bounded.
        self.buf.resize(size as usize, 0);
        let got = read_full(&mut self.r, &mut self.buf).map(|n| n as u64);
        self.payload_read(start, size, got)
    }

    /// Skips a payload without holding it.
    fn skip_payload(&mut self, start: u64, size: u64) -> Result<bool, ReadError> {
        let got = io::copy(&mut (&mut self.r).take(size), &mut io::sink());
        self.payload_read(start, size, got)
    }

    /// Accounts for a payload of `size` bytes of which `got` were read.
    fn payload_read(&mut self, start: u64, size: u64, got: io::Result<u64>) -> Result<bool, ReadError> {
        match got {
            Ok(n) if n == size => {
                self.offset += size;
                Ok(true)
            }
            Ok(n) => {
                self.torn(
                    start,
                    format!("the record needs {size} bytes but only {n} remain"),
                );
                Ok(false)
            }
            Err(e) => self.damaged(start, e).map(|()| false),
        }
    }

    /// Reads an index record in small steps and checks it against the
    /// records read so far.
    fn read_index(&mut self, start: u64, size: u64) -> Result<bool, ReadError> {
        let trailer = 8 + INDEX_MARKER.len() as u64;
        let mut problem = None;
        if size < trailer || !(size - trailer).is_multiple_of(8) {
            problem = Some(format!(
                "its payload of {size} bytes is not a list of 8-byte offsets, an 8-byte length \
                 and \"INDEXED\""
            ));
        }
        let entries = size.saturating_sub(trailer) / 8;
        let mut previous = None;
        let mut word = [0u8; 8];
        let mut read = 0u64;
        if problem.is_none() {
            for i in 0..entries {
                match read_full(&mut self.r, &mut word) {
                    Ok(8) => read += 8,
                    Ok(n) => {
                        self.torn(
                            start,
                            format!(
                                "the index record needs {size} bytes but only {} remain",
                                read + n as u64
                            ),
                        );
                        return Ok(false);
                    }
                    Err(e) => return self.damaged(start, e).map(|()| false),
                }
                let at = i64::from_be_bytes(word);
                let expected_first = i == 0 && self.first_offset.is_some_and(|f| f as i64 != at);
                let not_increasing = previous.is_some_and(|p| at <= p);
                if problem.is_none() && (expected_first || not_increasing || at < 0) {
                    problem = Some(format!("entry {i} (offset {at}) is not where a record starts"));
                }
                previous = Some(at);
            }
            if problem.is_none() {
                if entries != self.summary.records {
                    problem = Some(format!(
                        "it lists {entries} records but {} precede it",
                        self.summary.records
                    ));
                } else if previous.is_some_and(|p| p != self.last_offset as i64) {
                    problem = Some("its last entry is not the last record".to_owned());
                }
            }
        }
        let rest = size - read;
        let mut tail = Vec::new();
        match (&mut self.r).take(rest).read_to_end(&mut tail) {
            Ok(n) if n as u64 == rest => {}
            Ok(n) => {
                self.torn(
                    start,
                    format!(
                        "the index record needs {size} bytes but only {} remain",
                        read + n as u64
                    ),
                );
                return Ok(false);
            }
            Err(e) => return self.damaged(start, e).map(|()| false),
        }
        if problem.is_none() && rest == trailer {
            let back = i64::from_be_bytes([
                tail[0], tail[1], tail[2], tail[3], tail[4], tail[5], tail[6], tail[7],
            ]);
            if &tail[8..] != INDEX_MARKER {
                problem = Some("it does not end with \"INDEXED\"".to_owned());
            } else if back != (size + RECORD_HEADER_LEN) as i64 {
                problem = Some(format!(
                    "its length field says {back} bytes, the record has {}",
                    size + RECORD_HEADER_LEN
                ));
            }
        }
        self.offset += size;
        self.seen_index = true;
        match problem {
            None => self.summary.indexed = true,
            Some(p) => self.warnings.push(
                Some(Place::Byte(start)),
                None,
                format!("the index record is ignored: {p}"),
            ),
        }
        Ok(true)
    }

    fn torn(&mut self, start: u64, what: String) {
        let n = self.summary.records;
        self.warnings.push(
            Some(Place::Byte(start)),
            None,
            format!(
                "truncated at byte {start}{}: {what}; the {n} complete record{} before it were read",
                self.where_,
                if n == 1 { "" } else { "s" }
            ),
        );
        self.done = true;
    }

    fn lost_framing(&mut self, start: u64, what: String) {
        let n = self.summary.records;
        self.warnings.push(
            Some(Place::Byte(start)),
            None,
            format!(
                "damaged at byte {start}{}: {what}; the rest of the file cannot be read, the {n} \
                 complete record{} before it were read",
                self.where_,
                if n == 1 { "" } else { "s" }
            ),
        );
        self.summary.skipped.stop(start);
        self.done = true;
    }

    /// A read error: damaged compressed data ends the records with a
    /// warning; an error of the operating system is an error.
    fn damaged(&mut self, start: u64, e: io::Error) -> Result<(), ReadError> {
        if matches!(
            e.kind(),
            io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof
        ) {
            let n = self.summary.records;
            self.warnings.push(
                Some(Place::Byte(start)),
                None,
                format!(
                    "the compressed data is damaged or cut short after byte {start}{} ({e}); the {n} \
                     complete record{} before it were read",
                    self.where_,
                    if n == 1 { "" } else { "s" }
                ),
            );
            self.done = true;
            Ok(())
        } else {
            Err(ReadError::Io {
                offset: start,
                error: e,
            })
        }
    }
}

/// Reads until `buf` is full or the data ends; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Writing SSL game logs, for tests, fixtures and the demo.
pub mod write {
    use std::io::{self, Write};

    use super::{HEADER_LEN, INDEX_MARKER, MAGIC, MessageType, RECORD_HEADER_LEN, VERSION};

    /// Writes SSL_LOG_FILE records, remembering their offsets for the index.
    pub struct LogWriter<W: Write> {
        w: W,
        offset: u64,
        offsets: Vec<u64>,
    }

    impl<W: Write> LogWriter<W> {
        /// Writes the header.
        pub fn new(mut w: W) -> io::Result<Self> {
            w.write_all(MAGIC)?;
            w.write_all(&VERSION.to_be_bytes())?;
            Ok(LogWriter {
                w,
                offset: HEADER_LEN,
                offsets: Vec::new(),
            })
        }

        /// Writes one record.
        pub fn record(&mut self, time_ns: i64, kind: MessageType, payload: &[u8]) -> io::Result<()> {
            let size = i32::try_from(payload.len()).map_err(|_| io::Error::other("payload over 2 GiB"))?;
            self.w.write_all(&time_ns.to_be_bytes())?;
            self.w.write_all(&kind.code().to_be_bytes())?;
            self.w.write_all(&size.to_be_bytes())?;
            self.w.write_all(payload)?;
            self.offsets.push(self.offset);
            self.offset += RECORD_HEADER_LEN + payload.len() as u64;
            Ok(())
        }

        /// Writes the index record listing every record so far.
        pub fn index(&mut self) -> io::Result<()> {
            let payload_len = self.offsets.len() * 8 + 8 + INDEX_MARKER.len();
            let size = i32::try_from(payload_len).map_err(|_| io::Error::other("index over 2 GiB"))?;
            self.w.write_all(&0i64.to_be_bytes())?;
            self.w.write_all(&MessageType::Index.code().to_be_bytes())?;
            self.w.write_all(&size.to_be_bytes())?;
            for o in &self.offsets {
                self.w.write_all(&o.to_be_bytes())?;
            }
            self.w
                .write_all(&(payload_len as u64 + RECORD_HEADER_LEN).to_be_bytes())?;
            self.w.write_all(INDEX_MARKER)?;
            self.offset += RECORD_HEADER_LEN + payload_len as u64;
            Ok(())
        }

        /// The writer, flushed.
        pub fn finish(mut self) -> io::Result<W> {
            self.w.flush()?;
            Ok(self.w)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::write::LogWriter;
    use super::*;

    fn sample(indexed: bool) -> Vec<u8> {
        let mut w = LogWriter::new(Vec::new()).unwrap();
        w.record(1_000_000_000, MessageType::Vision, b"abc").unwrap();
        w.record(2_000_000_000, MessageType::Blank, b"").unwrap();
        w.record(3_000_000_000, MessageType::Referee, b"defg").unwrap();
        w.record(4_000_000_000, MessageType::Other(9), b"zz").unwrap();
        if indexed {
            w.index().unwrap();
        }
        w.finish().unwrap()
    }

    /// (offset, time, type, payload) of each decoded record.
    type Records = Vec<(u64, i64, MessageType, Vec<u8>)>;

    fn read_all(bytes: &[u8]) -> Result<(Records, FileSummary, Vec<String>), ReadError> {
        let mut r = RecordReader::new(bytes, false)?;
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            out.push((rec.offset, rec.time_ns, rec.kind, rec.payload.to_vec()));
        }
        let (summary, warnings) = r.finish();
        let warnings = warnings.iter().map(|w| w.to_string()).collect();
        Ok((out, summary, warnings))
    }

    #[test]
    fn reads_decoded_records_and_skips_the_rest() {
        let (recs, summary, warnings) = read_all(&sample(false)).unwrap();
        assert_eq!(
            recs,
            [
                (16, 1_000_000_000, MessageType::Vision, b"abc".to_vec()),
                (
                    16 + 19 + 16,
                    3_000_000_000,
                    MessageType::Referee,
                    b"defg".to_vec()
                ),
            ]
        );
        assert_eq!(summary.records, 4);
        assert!(!summary.indexed);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("message type 9"), "{warnings:?}");
    }

    #[test]
    fn a_matching_index_is_recognised() {
        let (recs, summary, warnings) = read_all(&sample(true)).unwrap();
        assert_eq!(recs.len(), 2);
        assert!(summary.indexed, "{warnings:?}");
        assert_eq!(summary.records, 5);
    }

    #[test]
    fn a_wrong_index_is_reported() {
        let mut b = sample(true);
        // The first offset entry sits right after the index record's header.
        let first_entry = b.len() - (4 * 8 + 15);
        b[first_entry + 7] = 17;
        let (_, summary, warnings) = read_all(&b).unwrap();
        assert!(!summary.indexed);
        assert!(
            warnings.iter().any(|w| w.contains("index record is ignored")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_torn_tail_keeps_complete_records() {
        let b = sample(false);
        for cut in 16..b.len() {
            let (recs, _, warnings) = read_all(&b[..cut]).unwrap();
            let complete = [16 + 19, 16 + 19 + 16, 16 + 19 + 16 + 20, b.len()];
            let whole = complete.iter().filter(|&&e| e <= cut).count();
            let expect_decoded = usize::from(cut >= complete[0]) + usize::from(cut >= complete[2]);
            assert_eq!(recs.len(), expect_decoded, "cut {cut}");
            let torn = !complete.contains(&cut) && cut > 16;
            assert_eq!(
                warnings.iter().any(|w| w.contains("truncated at byte")),
                torn,
                "cut {cut} ({whole} whole): {warnings:?}"
            );
        }
    }

    #[test]
    fn header_errors_are_clear() {
        assert!(matches!(
            RecordReader::new(&b"SSL_LOG_FIL"[..], false),
            Err(ReadError::UnknownFormat(_))
        ));
        assert!(matches!(
            RecordReader::new(&b"SSL_LOG_FILE\0\0"[..], false),
            Err(ReadError::Corrupt { .. })
        ));
        let mut v2 = sample(false);
        v2[15] = 2;
        let e = RecordReader::new(&v2[..], false).err().unwrap();
        assert!(e.to_string().contains("version 2"), "{e}");
    }

    #[test]
    fn impossible_sizes_stop_with_a_warning() {
        let mut b = sample(false);
        // The referee record's size field: make it negative.
        let at = 16 + 19 + 16 + 12;
        b[at] = 0xff;
        let (recs, _, warnings) = read_all(&b).unwrap();
        assert_eq!(recs.len(), 1);
        assert!(warnings.iter().any(|w| w.contains("negative")), "{warnings:?}");
        b[at] = 0x10;
        let (_, _, warnings) = read_all(&b).unwrap();
        assert!(
            warnings.iter().any(|w| w.contains("more than any packet")),
            "{warnings:?}"
        );
    }
}
