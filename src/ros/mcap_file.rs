//! MCAP files (the `mcap` crate's sans-I/O readers driven over a file) as
//! a [`BagReader`].
//!
//! A file with its summary (chunk indexes, channels, statistics) is read
//! through the index: only the chunks that hold a topic asked for are read
//! and decompressed, from the first chunk that reaches the time asked for.
//! A file without one (written unindexed, or cut short while recording) is
//! scanned from its start, record by record, in file order; its table of
//! contents comes from one scan at opening, and a torn end keeps every
//! complete message before it. Either way memory stays within the chunks
//! being read ([`RECORD_LIMIT`] bounds one).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use mcap::records::Record;
use mcap::sans_io::indexed_reader::{IndexedReadEvent, IndexedReader, IndexedReaderOptions};
use mcap::sans_io::linear_reader::{LinearReadEvent, LinearReader, LinearReaderOptions};
use mcap::sans_io::summary_reader::{SummaryReadEvent, SummaryReader, SummaryReaderOptions};

use super::bag::{BagError, BagInfo, BagMessage, BagReader, Encoding, SchemaText, Topic};

/// The magic an MCAP file starts with.
pub const MAGIC: &[u8] = b"\x89MCAP0\r\n";

/// The longest record (a chunk, compressed or not) read: 512 MiB.
pub const RECORD_LIMIT: usize = 512 << 20;

/// Whether a file's first bytes are an MCAP file's.
pub fn looks_like_mcap(start: &[u8]) -> bool {
    start.starts_with(MAGIC)
}

/// An open MCAP file.
pub struct McapBag {
    path: PathBuf,
    file: File,
    summary: Option<mcap::Summary>,
    info: BagInfo,
}

impl std::fmt::Debug for McapBag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapBag")
            .field("path", &self.path)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Opens an MCAP file: its summary when it has one, else one scan.
pub fn open(path: &Path) -> Result<McapBag, BagError> {
    let io = |source| BagError::Io {
        path: path.to_owned(),
        source,
    };
    if !looks_like_mcap(&super::bag::file_start(path, MAGIC.len() as u64)?) {
        return Err(corrupt(path, "does not start with the MCAP magic"));
    }
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let (summary, why_not) = match read_summary(&mut file, len) {
        Ok(Some(s)) if !s.chunk_indexes.is_empty() => (Some(s), None),
        Ok(Some(_)) => (None, Some("its summary has no chunk index")),
        Ok(None) => (None, Some("it has no summary")),
        Err(_) => (None, Some("it has no readable summary (cut short?)")),
    };
    let mut bag = McapBag {
        path: path.to_owned(),
        file,
        info: BagInfo::default(),
        summary: None,
    };
    match summary {
        Some(s) => {
            bag.info = info_from_summary(&s);
            bag.summary = Some(s);
        }
        None => {
            let mut scan = Scan::default();
            let end = bag.linear(&mut |record| scan.record(record))?;
            let topics = std::mem::take(&mut bag.info.topics);
            bag.info = scan.into_info(topics);
            bag.info.notes.push(format!(
                "not indexed ({}): read from start to end",
                why_not.unwrap_or("no index")
            ));
            bag.info.notes.extend(end);
        }
    }
    Ok(bag)
}

fn corrupt(path: &Path, message: impl Into<String>) -> BagError {
    BagError::Corrupt {
        path: path.to_owned(),
        message: message.into(),
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Reads the summary section through the footer, if there is one.
fn read_summary(file: &mut File, len: u64) -> Result<Option<mcap::Summary>, mcap::McapError> {
    if !summary_is_sound(file, len)? {
        return Err(mcap::McapError::UnexpectedEof);
    }
    let options = SummaryReaderOptions::default()
        .with_file_size(len)
        .with_record_length_limit(RECORD_LIMIT);
    let mut reader = SummaryReader::new_with_options(options);
    while let Some(event) = reader.next_event() {
        match event? {
            SummaryReadEvent::ReadRequest(n) => {
                let got = read_up_to(file, reader.insert(n))?;
                reader.notify_read(got);
            }
            SummaryReadEvent::SeekRequest(to) => {
                let at = file.seek(to)?;
                reader.notify_seeked(at);
            }
        }
    }
    Ok(reader.finish())
}

/// Whether the summary section the footer points to (if any) holds only
/// records whose fields end inside them ([`super::mcap_check`]): the
/// crate's summary reader parses them, reserving what their lengths say.
/// A file without a footer passes (the summary reader says it has none).
fn summary_is_sound(file: &mut File, len: u64) -> std::io::Result<bool> {
    // Footer record (opcode, length, 20 bytes) and the closing magic.
    const FOOTER: u64 = 1 + 8 + 20;
    let tail = FOOTER + MAGIC.len() as u64;
    if len < MAGIC.len() as u64 + tail {
        return Ok(true);
    }
    let footer_at = len - tail;
    let mut footer = [0u8; FOOTER as usize];
    file.seek(std::io::SeekFrom::Start(footer_at))?;
    file.read_exact(&mut footer)?;
    let summary_start = u64::from_le_bytes(footer[9..17].try_into().unwrap_or_default());
    if footer[0] != 0x02 || summary_start == 0 {
        return Ok(true);
    }
    let size = footer_at
        .checked_sub(summary_start)
        .filter(|&n| n <= RECORD_LIMIT as u64);
    let Some(size) = size.filter(|_| summary_start >= MAGIC.len() as u64) else {
        return Ok(false);
    };
    let mut summary = vec![0; size as usize];
    file.seek(std::io::SeekFrom::Start(summary_start))?;
    file.read_exact(&mut summary)?;
    let mut rest = &summary[..];
    while !rest.is_empty() {
        let Some((op, body, after)) = split_record(rest) else {
            return Ok(false);
        };
        if super::mcap_check::check_record(op, body).is_err() {
            return Ok(false);
        }
        rest = after;
    }
    Ok(true)
}

/// A topic from its channel's id, name and encoding and its schema's
/// name, encoding and definition (when it has a schema).
fn make_topic(id: u16, name: &str, encoding: &str, schema: Option<(&str, &str, &[u8])>) -> Topic {
    Topic {
        id: u32::from(id),
        name: name.to_owned(),
        type_name: schema.map(|s| s.0.to_owned()).unwrap_or_default(),
        encoding: Encoding::from_name(encoding),
        schema: schema.filter(|s| !s.2.is_empty()).map(|s| SchemaText {
            encoding: s.1.to_owned(),
            data: s.2.to_vec(),
        }),
        count: None,
    }
}

fn topic_of(channel: &mcap::Channel<'_>) -> Topic {
    let schema = channel
        .schema
        .as_ref()
        .map(|s| (s.name.as_str(), s.encoding.as_str(), &s.data[..]));
    make_topic(channel.id, &channel.topic, &channel.message_encoding, schema)
}

fn info_from_summary(s: &mcap::Summary) -> BagInfo {
    let counts = s.stats.as_ref().map(|st| &st.channel_message_counts);
    let mut topics: Vec<Topic> = s
        .channels
        .values()
        .map(|c| Topic {
            count: counts.map(|m| m.get(&c.id).copied().unwrap_or(0)),
            ..topic_of(c)
        })
        .collect();
    topics.sort_by_key(|t| t.id);
    let from_stats = s
        .stats
        .as_ref()
        .filter(|st| st.message_count > 0)
        .map(|st| (st.message_start_time, st.message_end_time));
    let from_chunks = s
        .chunk_indexes
        .iter()
        .map(|c| (c.message_start_time, c.message_end_time))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
    BagInfo {
        topics,
        time_range: from_stats.or(from_chunks),
        indexed: true,
        notes: Vec::new(),
    }
}

/// The schemas a linear pass has seen so far: name, encoding, definition.
type Schemas = BTreeMap<u16, (String, String, Vec<u8>)>;

/// The table of contents gathered by one scan.
#[derive(Default)]
struct Scan {
    counts: BTreeMap<u16, u64>,
    range: Option<(u64, u64)>,
}

impl Scan {
    fn record(&mut self, record: &Record<'_>) -> ControlFlow<()> {
        if let Record::Message { header, .. } = record {
            *self.counts.entry(header.channel_id).or_default() += 1;
            let t = header.log_time;
            self.range = Some(self.range.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
        ControlFlow::Continue(())
    }

    fn into_info(self, mut topics: Vec<Topic>) -> BagInfo {
        for t in &mut topics {
            let id = u16::try_from(t.id).ok();
            t.count = Some(id.and_then(|id| self.counts.get(&id).copied()).unwrap_or(0));
        }
        topics.sort_by_key(|t| t.id);
        BagInfo {
            topics,
            time_range: self.range,
            indexed: false,
            notes: Vec::new(),
        }
    }
}

impl McapBag {
    /// Reads the file from its start, record by record (chunks opened),
    /// calling `each` with every record. Returns the note about its end
    /// when it was torn or damaged (what came before is kept).
    fn linear(
        &mut self,
        each: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>,
    ) -> Result<Option<String>, BagError> {
        let path = self.path.clone();
        let io = |source| BagError::Io {
            path: path.clone(),
            source,
        };
        self.file.rewind().map_err(io)?;
        // Chunks come whole and are opened here: the crate's own opening of
        // chunks panics (subtracts past zero) on a damaged inner length.
        let options = LinearReaderOptions::default()
            .with_skip_end_magic(false)
            .with_emit_chunks(true)
            .with_record_length_limit(RECORD_LIMIT);
        let mut reader = LinearReader::new_with_options(options);
        let mut schemas = Schemas::new();
        let mut file = std::io::BufReader::with_capacity(1 << 20, self.file.try_clone().map_err(io)?);
        let mut messages = 0u64;
        // Where the next record starts (after the magic).
        let mut offset = MAGIC.len() as u64;
        while let Some(event) = reader.next_event() {
            let event = match event {
                Ok(e) => e,
                Err(e) => {
                    let at = match e {
                        mcap::McapError::UnexpectedEof => {
                            "ends in the middle of a record (cut short)".to_owned()
                        }
                        other => format!("is damaged ({other})"),
                    };
                    if messages == 0 && self.info.topics.is_empty() {
                        return Err(corrupt(&self.path, format!("{at}, before any message")));
                    }
                    return Ok(Some(format!("{at}: every complete message before it is kept")));
                }
            };
            match event {
                LinearReadEvent::ReadRequest(n) => {
                    let got = read_up_to(&mut file, reader.insert(n)).map_err(io)?;
                    reader.notify_read(got);
                }
                LinearReadEvent::Record { data, opcode } => {
                    let at = offset;
                    offset += 9 + data.len() as u64;
                    if !super::mcap_check::is_record_opcode(opcode) {
                        // Not MCAP at all (zeros after the magic, say):
                        // nothing after it can be trusted to be records.
                        let why = format!("is damaged at byte {at}: opcode {opcode:#04x} is no MCAP record");
                        if messages == 0 && self.info.topics.is_empty() {
                            return Err(corrupt(&self.path, format!("{why}, before any message")));
                        }
                        return Ok(Some(format!("{why}: every complete message before it is kept")));
                    }
                    if let Err(e) = super::mcap_check::check_record(opcode, data) {
                        return Ok(Some(damaged(opcode, &format!("at byte {at}: {e}"))));
                    }
                    let record = match mcap::parse_record(opcode, data) {
                        Ok(r) => r,
                        Err(e) => return Ok(Some(damaged(opcode, &e.to_string()))),
                    };
                    if let Record::Chunk { header, data } = &record {
                        let content = match open_chunk(&header.compression, data, header.uncompressed_size) {
                            Ok(c) => c,
                            Err(e) => {
                                return Ok(Some(format!(
                                    "has a chunk that cannot be opened ({e}): every complete message before it is kept"
                                )));
                            }
                        };
                        let mut rest = &content[..];
                        while !rest.is_empty() {
                            let Some((op, body, after)) = split_record(rest) else {
                                return Ok(Some("has a chunk whose records are damaged: every complete message before it is kept".into()));
                            };
                            rest = after;
                            if let Err(e) = super::mcap_check::check_record(op, body) {
                                return Ok(Some(damaged(op, &format!("in the chunk at byte {at}: {e}"))));
                            }
                            let inner = match mcap::parse_record(op, body) {
                                Ok(r) => r,
                                Err(e) => return Ok(Some(damaged(op, &e.to_string()))),
                            };
                            if self.take(&inner, &mut schemas, &mut messages, each).is_break() {
                                return Ok(None);
                            }
                        }
                    } else if self.take(&record, &mut schemas, &mut messages, each).is_break() {
                        return Ok(None);
                    }
                }
            }
        }
        Ok(None)
    }

    /// Notes a record's schema or channel, counts messages, and hands it on.
    fn take(
        &mut self,
        record: &Record<'_>,
        schemas: &mut Schemas,
        messages: &mut u64,
        each: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        match record {
            Record::Schema { header, data } => {
                schemas.insert(
                    header.id,
                    (header.name.clone(), header.encoding.clone(), data.to_vec()),
                );
            }
            Record::Channel(c) => {
                let schema = schemas
                    .get(&c.schema_id)
                    .map(|s| (s.0.as_str(), s.1.as_str(), &s.2[..]));
                if !self.info.topics.iter().any(|t| t.id == u32::from(c.id)) {
                    let topic = make_topic(c.id, &c.topic, &c.message_encoding, schema);
                    self.info.topics.push(topic);
                }
            }
            Record::Message { .. } => *messages += 1,
            _ => {}
        }
        each(record)
    }
}

fn damaged(opcode: u8, e: &str) -> String {
    format!("has a damaged record (opcode {opcode:#04x}: {e}): every complete message before it is kept")
}

/// One record off the front of a chunk's content: opcode, body, the rest.
fn split_record(bytes: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&op, rest) = bytes.split_first()?;
    let len = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
    let len = usize::try_from(len).ok()?;
    let rest = &rest[8..];
    (len <= rest.len()).then(|| (op, &rest[..len], &rest[len..]))
}

/// A chunk's records, decompressed (at most [`RECORD_LIMIT`] bytes).
fn open_chunk<'a>(
    compression: &str,
    data: &'a [u8],
    size: u64,
) -> Result<std::borrow::Cow<'a, [u8]>, String> {
    let size = usize::try_from(size)
        .ok()
        .filter(|s| *s <= RECORD_LIMIT)
        .ok_or_else(|| format!("it says it holds {size} bytes"))?;
    match compression {
        "" => Ok(std::borrow::Cow::Borrowed(data)),
        "zstd" => zstd::bulk::decompress(data, size)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| e.to_string()),
        "lz4" => {
            let mut out = Vec::with_capacity(size);
            let decoder = lz4::Decoder::new(data).map_err(|e| e.to_string())?;
            decoder
                .take(size as u64)
                .read_to_end(&mut out)
                .map_err(|e| e.to_string())?;
            Ok(std::borrow::Cow::Owned(out))
        }
        other => Err(format!("compression `{other}` is not one MCAP readers know")),
    }
}

impl BagReader for McapBag {
    fn info(&self) -> &BagInfo {
        &self.info
    }

    fn read(
        &mut self,
        topics: &[u32],
        from: Option<u64>,
        each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
    ) -> Result<Vec<String>, BagError> {
        let from = from.unwrap_or(0);
        let Some(summary) = self.summary.as_ref() else {
            let end = self.linear(&mut |record| match record {
                Record::Message { header, data }
                    if header.log_time >= from && topics.contains(&u32::from(header.channel_id)) =>
                {
                    each(BagMessage {
                        topic: u32::from(header.channel_id),
                        log_time: header.log_time,
                        data,
                    })
                }
                _ => ControlFlow::Continue(()),
            })?;
            return Ok(end.into_iter().collect());
        };
        let names: Vec<String> = topics
            .iter()
            .filter_map(|&id| self.info.topic(id).map(|t| t.name.clone()))
            .collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let options = IndexedReaderOptions::new()
            .include_topics(names)
            .starting_at(from)
            .with_record_length_limit(RECORD_LIMIT);
        let mut reader = IndexedReader::new_with_options(summary, options)
            .map_err(|e| corrupt(&self.path, format!("its index cannot be used: {e}")))?;
        let mut buffer = Vec::new();
        let path = &self.path;
        let file = &mut self.file;
        while let Some(event) = reader.next_event() {
            match event.map_err(|e| corrupt(path, format!("a chunk cannot be read: {e}")))? {
                IndexedReadEvent::ReadChunkRequest { offset, length } => {
                    file.seek(std::io::SeekFrom::Start(offset))
                        .and_then(|_| {
                            buffer.resize(length, 0);
                            file.read_exact(&mut buffer)
                        })
                        .map_err(|e| {
                            corrupt(
                                path,
                                format!("its index names a chunk of {length} bytes at byte {offset} that cannot be read ({e})"),
                            )
                        })?;
                    reader
                        .insert_chunk_record_data(offset, &buffer)
                        .map_err(|e| corrupt(path, format!("the chunk at byte {offset} is damaged: {e}")))?;
                }
                IndexedReadEvent::Message { header, data } => {
                    let message = BagMessage {
                        topic: u32::from(header.channel_id),
                        log_time: header.log_time,
                        data,
                    };
                    if each(message).is_break() {
                        break;
                    }
                }
            }
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap as Map;

    /// Options a test file is written with.
    #[derive(Clone, Copy, Debug)]
    struct Shape {
        chunks: bool,
        compression: Option<mcap::Compression>,
        summary: bool,
    }

    const SHAPES: [Shape; 5] = [
        Shape {
            chunks: true,
            compression: Some(mcap::Compression::Zstd),
            summary: true,
        },
        Shape {
            chunks: true,
            compression: Some(mcap::Compression::Lz4),
            summary: true,
        },
        Shape {
            chunks: true,
            compression: None,
            summary: true,
        },
        Shape {
            chunks: false,
            compression: None,
            summary: true,
        },
        Shape {
            chunks: true,
            compression: Some(mcap::Compression::Zstd),
            summary: false,
        },
    ];

    /// A file with two topics: `/a` every 10 ms, `/b` every 25 ms, for
    /// 200 messages of `/a`, small chunks.
    fn write(shape: Shape) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let options = mcap::WriteOptions::new()
            .compression(shape.compression)
            .use_chunks(shape.chunks)
            .chunk_size(Some(600))
            .emit_summary_records(shape.summary)
            .emit_summary_offsets(shape.summary)
            .emit_statistics(shape.summary)
            .emit_chunk_indexes(shape.summary)
            .emit_message_indexes(shape.summary);
        let mut w = mcap::Writer::with_options(&mut out, options).unwrap();
        let sa = w
            .add_schema("std_msgs/msg/String", "ros2msg", b"string data")
            .unwrap();
        let a = w.add_channel(sa, "/a", "cdr", &Map::new()).unwrap();
        let b = w.add_channel(0, "/b", "json", &Map::new()).unwrap();
        let mut seq = 0;
        for i in 0..200u64 {
            let t = 1_000_000_000 + i * 10_000_000;
            let mut put = |ch: u16, t: u64, data: &[u8]| {
                seq += 1;
                let h = mcap::records::MessageHeader {
                    channel_id: ch,
                    sequence: seq,
                    log_time: t,
                    publish_time: t,
                };
                w.write_to_known_channel(&h, data).unwrap();
            };
            put(a, t, format!("a{i}").as_bytes());
            if i % 5 == 0 {
                put(b, t + 1, format!("b{i}").as_bytes());
            }
        }
        w.finish().unwrap();
        drop(w);
        out.into_inner()
    }

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.mcap");
        std::fs::write(&p, bytes).unwrap();
        (dir, p)
    }

    fn all(bag: &mut McapBag, topics: &[u32], from: Option<u64>) -> (Vec<(u32, u64, String)>, Vec<String>) {
        let mut got = Vec::new();
        let notes = bag
            .read(topics, from, &mut |m| {
                got.push((m.topic, m.log_time, String::from_utf8_lossy(m.data).into_owned()));
                ControlFlow::Continue(())
            })
            .unwrap();
        (got, notes)
    }

    #[test]
    fn every_shape_reads_the_same_messages() {
        for shape in SHAPES {
            let (_d, p) = file_with(&write(shape));
            let mut bag = open(&p).unwrap();
            let info = bag.info().clone();
            assert_eq!(info.indexed, shape.summary && shape.chunks, "{shape:?}");
            let names: Vec<&str> = info.topics.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["/a", "/b"], "{shape:?}");
            let a = info.by_name("/a").unwrap();
            assert_eq!(a.type_name, "std_msgs/msg/String");
            assert_eq!(a.encoding, Encoding::Cdr);
            assert_eq!(a.schema.as_ref().unwrap().data, b"string data");
            assert_eq!(a.count, Some(200), "{shape:?}");
            assert_eq!(info.by_name("/b").unwrap().count, Some(40));
            assert_eq!(info.by_name("/b").unwrap().schema, None);
            assert_eq!(
                info.time_range,
                Some((1_000_000_000, 1_000_000_000 + 1_990_000_000)),
                "{shape:?}"
            );
            let (only_a, notes) = all(&mut bag, &[a.id], None);
            assert!(notes.is_empty(), "{notes:?}");
            assert_eq!(only_a.len(), 200);
            assert!(only_a.iter().enumerate().all(|(i, m)| m.2 == format!("a{i}")));
            let (both, _) = all(
                &mut bag,
                &[a.id, info.by_name("/b").unwrap().id],
                Some(1_500_000_000),
            );
            assert_eq!(both.len(), 150 + 30, "{shape:?}");
            assert!(both.windows(2).all(|w| w[0].1 <= w[1].1), "time order {shape:?}");
            assert_eq!(both[0].2, "a50");
            // A reader that stops early stops.
            let mut n = 0;
            bag.read(&[a.id], None, &mut |_| {
                n += 1;
                if n == 3 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap();
            assert_eq!(n, 3);
            assert!(all(&mut bag, &[], None).0.is_empty());
        }
    }

    #[test]
    fn an_unindexed_file_says_so() {
        let (_d, p) = file_with(&write(SHAPES[4]));
        let bag = open(&p).unwrap();
        assert!(!bag.info().indexed);
        assert!(
            bag.info().notes.iter().any(|n| n.contains("not indexed")),
            "{:?}",
            bag.info().notes
        );
    }

    #[test]
    fn a_file_cut_short_keeps_every_complete_message() {
        for shape in [SHAPES[0], SHAPES[2], SHAPES[3]] {
            let bytes = write(shape);
            let (_d, p) = file_with(&bytes[..bytes.len() * 2 / 3]);
            let mut bag = open(&p).unwrap();
            assert!(!bag.info().indexed);
            assert!(
                bag.info().notes.iter().any(|n| n.contains("cut short")),
                "{shape:?} {:?}",
                bag.info().notes
            );
            let a = bag.info().by_name("/a").unwrap().id;
            let (got, notes) = all(&mut bag, &[a], None);
            assert!(
                notes.iter().any(|n| n.contains("every complete message")),
                "{notes:?}"
            );
            // Messages come in order, none damaged, and most of the kept part.
            assert!(got.iter().enumerate().all(|(i, m)| m.2 == format!("a{i}")));
            assert!(got.len() > 90, "{shape:?}: {}", got.len());
        }
    }

    #[test]
    fn not_an_mcap_file_is_refused() {
        let (_d, p) = file_with(b"hello, this is not an mcap file");
        let e = open(&p).unwrap_err().to_string();
        assert!(e.contains("magic"), "{e}");
        let (_d, p) = file_with(MAGIC);
        assert!(open(&p).is_err());
    }

    /// Opens and reads every topic of a file: an error or messages.
    fn read_all(bytes: &[u8]) {
        let (_d, p) = file_with(bytes);
        if let Ok(mut bag) = open(&p) {
            let ids: Vec<u32> = bag.info().topics.iter().map(|t| t.id).collect();
            let _ = bag.read(&ids, None, &mut |_| ControlFlow::Continue(()));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases() / 4,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Changed bytes and a cut anywhere never panic, in every shape.
        #[test]
        fn damaged_files_never_panic(
            shape in 0..SHAPES.len(),
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..6),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let mut bytes = write(SHAPES[shape]);
            for (at, v) in edits {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            let keep = cut % (bytes.len() + 1);
            bytes.truncate(keep);
            read_all(&bytes);
        }

        /// Random bytes behind the magic never panic.
        #[test]
        fn random_records_never_panic(tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let mut bytes = MAGIC.to_vec();
            bytes.extend(tail);
            read_all(&bytes);
        }
    }
}
