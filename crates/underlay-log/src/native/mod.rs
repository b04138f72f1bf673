//! The native binary format: reading into and writing out of the model.
//!
//! A file is a 10-byte prefix — [`MAGIC`], the format version, the
//! compression (0 none, 1 zstd for everything after the prefix) — then
//! `Record` messages of `proto/underlay.proto`, each preceded by its length
//! as a varint. Entities are declared once by `Entity` records and
//! primitives refer to them by id.
//!
//! Versions: a log of shapes on the floor only is version 1
//! ([`FLOOR_VERSION`]); a log with shapes above the floor (`Primitive`
//! fields 14 to 20) is version 2 ([`RAISED_VERSION`]), so that an underlay
//! older than heights refuses it with a version error instead of dropping
//! its shapes one warning at a time; a log with shapes in the picture's
//! pixels (`Primitive.picture`, field 21) is version 3
//! ([`PICTURE_VERSION`]), so that an older underlay refuses it instead of
//! drawing pixels as world coordinates. Writers pick the oldest version
//! that holds the log; this reader reads them all, and refuses a newer
//! version saying which ones it reads.
//!
//! This module reads records (the prefix, the record loop, entities and
//! frames); `decode` decodes the messages inside them and `encode` writes
//! them. Both are hand-written for speed (see `docs/PERFORMANCE.md`);
//! `reference` (feature `reference`) does the same through prost-generated
//! types, and tests check that both agree byte for byte and value for
//! value.

use std::io::{self, BufRead, BufReader, Read};

use super::wire::{self, LEN, Reader, VARINT, WireResult};
use super::{
    Entities, EntityId, FrameTime, Header, Log, MAX_RECORD_LEN, Place, Raised, ReadError, Shape, Warnings,
    close_frame,
};

mod decode;
mod encode;
mod stream;

use decode::{decode_header, decode_primitive};
pub(crate) use encode::{
    frame_record_len, put_entity_record, put_frame_record_encoded, put_header_record, put_primitive,
};
pub use encode::{to_bytes, version_for, write};
pub use stream::StreamReader;

/// The first eight bytes of every native log.
pub const MAGIC: &[u8; 8] = b"UNDERLAY";
/// The format version of a log whose shapes all lie on the floor: what
/// every underlay reads, and what such a log is written as.
pub const FLOOR_VERSION: u8 = 1;
/// The format version of a log with shapes above the floor (issue 33):
/// `Primitive` fields 14 to 20.
pub const RAISED_VERSION: u8 = 2;
/// The format version of a log with shapes in the picture's pixels
/// ([`Shape::Picture`]): `Primitive.picture`, field 21.
pub const PICTURE_VERSION: u8 = 3;
/// The newest format version this build reads and writes (it reads every
/// version from [`FLOOR_VERSION`] on).
pub const FORMAT_VERSION: u8 = PICTURE_VERSION;
/// Length of the file prefix: magic, version, compression.
pub const PREFIX_LEN: usize = 10;
/// Compression byte: records follow uncompressed.
pub const COMPRESSION_NONE: u8 = 0;
/// Compression byte: everything after the prefix is one zstd stream.
pub const COMPRESSION_ZSTD: u8 = 1;
/// Entity ids must be below this (keeps the reader's id table bounded).
pub const MAX_ENTITY_ID: u32 = 1 << 20;

/// Decompressed bytes a compressed log may hold beyond what its content
/// accounts for (see [`DECOMPRESSED_PER_ITEM`]).
pub const DECOMPRESSED_SLACK: u64 = 64 << 20;

/// Decompressed bytes allowed per item a compressed log yields (a frame,
/// primitive, entity, polygon vertex, or 8 bytes of text): far above any
/// real encoding (a primitive takes tens of bytes), far below a stream of
/// empty or ignored records, which zstd shrinks a thousandfold (61 KB
/// holding 2 GB took 24 s to read through).
pub const DECOMPRESSED_PER_ITEM: u64 = 1 << 10;

// Field numbers of proto/underlay.proto.
const RECORD_HEADER: u32 = 1;
const RECORD_ENTITY: u32 = 2;
const RECORD_FRAME: u32 = 3;

/// The 10-byte prefix of a native log of shapes on the floor only
/// (version [`FLOOR_VERSION`]).
pub fn prefix(compressed: bool) -> [u8; PREFIX_LEN] {
    versioned_prefix(FLOOR_VERSION, compressed)
}

/// The 10-byte prefix of a native log of format `version`.
pub fn versioned_prefix(version: u8, compressed: bool) -> [u8; PREFIX_LEN] {
    let mut p = [0u8; PREFIX_LEN];
    p[..8].copy_from_slice(MAGIC);
    p[8] = version;
    p[9] = if compressed {
        COMPRESSION_ZSTD
    } else {
        COMPRESSION_NONE
    };
    p
}

/// Reads a native log from a stream that starts at its prefix.
pub fn read(r: impl Read) -> Result<Log, ReadError> {
    read_with_len(BufReader::with_capacity(1 << 18, r), None)
}

/// Reads a native log; `total_len`, when known, lets a length prefix that
/// runs past the end be reported as truncation without reading.
pub fn read_with_len<R: BufRead>(mut r: R, total_len: Option<u64>) -> Result<Log, ReadError> {
    let mut p = Vec::with_capacity(PREFIX_LEN);
    r.by_ref()
        .take(PREFIX_LEN as u64)
        .read_to_end(&mut p)
        .map_err(|source| ReadError::Io {
            offset: 0,
            error: source,
        })?;
    if !p.starts_with(MAGIC) {
        return Err(ReadError::UnknownFormat(
            "the native magic \"UNDERLAY\" is missing".into(),
        ));
    }
    if p.len() < PREFIX_LEN {
        return Err(ReadError::Corrupt {
            offset: p.len() as u64,
            frame: 0,
            message: format!("the file ends inside the {PREFIX_LEN}-byte prefix"),
        });
    }
    if !(FLOOR_VERSION..=FORMAT_VERSION).contains(&p[8]) {
        return Err(ReadError::UnsupportedVersion {
            found: p[8],
            newest: FORMAT_VERSION,
        });
    }
    let mut dec = Decoder::new(p[8]);
    match p[9] {
        COMPRESSION_NONE => {
            let remaining = total_len.map(|l| l.saturating_sub(PREFIX_LEN as u64));
            dec.records(r, remaining, false)?;
        }
        COMPRESSION_ZSTD => {
            let z = zstd::stream::read::Decoder::with_buffer(r).map_err(|error| ReadError::Io {
                offset: PREFIX_LEN as u64,
                error,
            })?;
            dec.records(BufReader::with_capacity(1 << 18, z), None, true)?;
        }
        c => return Err(ReadError::UnsupportedCompression(c)),
    }
    Ok(dec.finish())
}

/// Outcome of reading a record's length prefix.
enum LenPrefix {
    /// Clean end of the stream before a record.
    End,
    /// The length and the number of bytes it took.
    Len(u64, usize),
    /// The stream ended inside the varint.
    Torn,
    Overlong,
}

fn read_len_prefix(r: &mut impl BufRead) -> io::Result<LenPrefix> {
    let mut value = 0u64;
    for i in 0..10 {
        let byte = loop {
            match r.fill_buf() {
                Ok(b) => break b.first().copied(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        let Some(b) = byte else {
            return Ok(if i == 0 { LenPrefix::End } else { LenPrefix::Torn });
        };
        r.consume(1);
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Ok(LenPrefix::Len(value, i + 1));
        }
    }
    Ok(LenPrefix::Overlong)
}

/// The state of one native read.
struct Decoder {
    log: Log,
    warnings: Warnings,
    /// Wire entity id → model id + 1 (0 = not declared).
    ids: Vec<u32>,
    /// Frame records seen, including dropped ones: the next frame's index.
    frames_seen: usize,
    header_seen: bool,
    prefix_version: u8,
}

impl Decoder {
    fn new(prefix_version: u8) -> Self {
        Decoder {
            log: Log::new(),
            warnings: Warnings::default(),
            ids: Vec::new(),
            frames_seen: 0,
            header_seen: false,
            prefix_version,
        }
    }

    fn finish(mut self) -> Log {
        self.log.primitives.shrink_to_fit();
        self.log.frames.shrink_to_fit();
        self.log.warnings = self.warnings.finish();
        self.log
    }

    fn records<R: BufRead>(
        &mut self,
        mut r: R,
        mut remaining: Option<u64>,
        compressed: bool,
    ) -> Result<(), ReadError> {
        let note = if compressed {
            " (offsets count decompressed bytes)"
        } else {
            ""
        };
        let mut offset = PREFIX_LEN as u64;
        let mut buf: Vec<u8> = Vec::new();
        // What the primitives read so far yielded (compressed streams only).
        let mut drawn: u64 = 0;
        let mut counted = 0usize;
        loop {
            let rec_offset = offset;
            let torn = |dec: &mut Self, what: String| {
                let frames = dec.log.frames.len();
                dec.warnings.push(
                    Some(Place::Byte(rec_offset)),
                    Some(dec.frames_seen),
                    format!("truncated: {what}; the {frames} complete frames before it were loaded{note}"),
                );
            };
            let prefix = match read_len_prefix(&mut r) {
                Ok(p) => p,
                Err(e) if compressed => {
                    torn(self, format!("the compressed stream is damaged ({e})"));
                    return Ok(());
                }
                Err(source) => {
                    return Err(ReadError::Io {
                        offset,
                        error: source,
                    });
                }
            };
            let (len, n) = match prefix {
                LenPrefix::End => return Ok(()),
                LenPrefix::Torn => {
                    torn(self, "the stream ends inside a record's length".into());
                    return Ok(());
                }
                LenPrefix::Overlong => {
                    self.stop_at(rec_offset, "record length is not a valid varint".into(), note);
                    return Ok(());
                }
                LenPrefix::Len(len, n) => (len, n),
            };
            if len > MAX_RECORD_LEN {
                let why = format!("record length {len} exceeds the limit of {MAX_RECORD_LEN} bytes");
                self.stop_at(rec_offset, why, note);
                return Ok(());
            }
            offset += n as u64;
            if let Some(rem) = remaining.as_mut() {
                *rem = rem.saturating_sub(n as u64);
                if len > *rem {
                    torn(
                        self,
                        format!("the record needs {len} bytes but only {rem} remain"),
                    );
                    return Ok(());
                }
                *rem -= len;
                // The length is bounded by the file's real size here.
                buf.resize(len as usize, 0);
                r.read_exact(&mut buf).map_err(|source| ReadError::Io {
                    offset,
                    error: source,
                })?;
            } else {
                buf.clear();
                match r.by_ref().take(len).read_to_end(&mut buf) {
                    Ok(_) => {}
                    Err(e) if compressed => {
                        torn(self, format!("the compressed stream is damaged ({e})"));
                        return Ok(());
                    }
                    Err(source) => {
                        return Err(ReadError::Io {
                            offset,
                            error: source,
                        });
                    }
                }
                if (buf.len() as u64) < len {
                    let got = buf.len();
                    torn(
                        self,
                        format!("the record needs {len} bytes but only {got} remain"),
                    );
                    return Ok(());
                }
            }
            let body_offset = offset;
            offset += len;
            let frame = self.frames_seen;
            if let Err(e) = self.record(&buf, rec_offset) {
                // One bad record costs that record: its length says where
                // the next one starts.
                self.warnings.push(
                    Some(Place::Byte(body_offset + e.at as u64)),
                    Some(frame),
                    format!(
                        "{}; the record at byte {rec_offset} was passed over{note}",
                        e.message
                    ),
                );
                self.log.skipped.add(rec_offset, n as u64 + len);
            }
            if compressed {
                // Decompression is bounded by what it yields.
                for p in self.log.primitives.get(counted..).unwrap_or(&[]) {
                    drawn += items(&p.shape);
                }
                counted = self.log.primitives.len();
                let items = drawn + self.log.frames.len() as u64 + self.log.entities.len() as u64;
                let allowed = DECOMPRESSED_SLACK.saturating_add(DECOMPRESSED_PER_ITEM.saturating_mul(items));
                if offset > allowed {
                    return Err(ReadError::Corrupt {
                        offset,
                        frame: self.frames_seen,
                        message: format!(
                            "the compressed stream expands to {offset} bytes but has yielded only {} frames \
                             and {} primitives: not read further (a log holds at most {DECOMPRESSED_SLACK} \
                             bytes more than {DECOMPRESSED_PER_ITEM} per frame, primitive, entity or vertex)",
                            self.log.frames.len(),
                            self.log.primitives.len()
                        ),
                    });
                }
            }
        }
    }

    /// Damage the reader cannot read past (a record length that is no
    /// length): the rest of the input is passed over from `rec_offset`
    /// (the format table refuses a file that is mostly that).
    fn stop_at(&mut self, rec_offset: u64, why: String, note: &str) {
        let frames = self.log.frames.len();
        self.warnings.push(
            Some(Place::Byte(rec_offset)),
            Some(self.frames_seen),
            format!("{why}: the rest was passed over; the {frames} frames before it were loaded{note}"),
        );
        self.log.skipped.stop(rec_offset);
    }

    /// Decodes one record; errors carry positions within `rec`.
    fn record(&mut self, rec: &[u8], rec_offset: u64) -> WireResult<()> {
        let mut r = Reader::new(rec);
        while !r.is_empty() {
            let (field, wt) = r.key()?;
            match field {
                RECORD_HEADER => {
                    r.expect(field, wt, LEN)?;
                    let h = decode_header(&mut r.sub()?)?;
                    self.header(h, rec_offset);
                }
                RECORD_ENTITY => {
                    r.expect(field, wt, LEN)?;
                    let mut m = r.sub()?;
                    self.entity(&mut m, rec_offset)?;
                }
                RECORD_FRAME => {
                    r.expect(field, wt, LEN)?;
                    let mut m = r.sub()?;
                    let start = self.log.primitives.len();
                    let result = self.frame(&mut m, rec_offset);
                    if result.is_err() {
                        self.log.primitives.truncate(start);
                    }
                    self.frames_seen += 1;
                    result?;
                }
                _ => r.skip(wt)?,
            }
        }
        Ok(())
    }

    fn header(&mut self, h: (Header, u32), rec_offset: u64) {
        let (header, version) = h;
        let place = Some(Place::Byte(rec_offset));
        if self.header_seen {
            self.warnings
                .push(place, None, "a second header record was ignored");
            return;
        }
        self.header_seen = true;
        if version != 0 && version != u32::from(self.prefix_version) {
            self.warnings.push(
                place,
                None,
                format!(
                    "header says format version {version} but the file prefix says {}",
                    self.prefix_version
                ),
            );
        }
        let mut header = header;
        for message in header.hints.drop_unusable() {
            self.warnings.push(place, None, message);
        }
        self.log.header = header;
    }

    fn entity(&mut self, m: &mut Reader<'_>, rec_offset: u64) -> WireResult<()> {
        let mut id = 0u32;
        let mut name = "";
        let mut parents: Vec<u32> = Vec::new();
        while !m.is_empty() {
            let (field, wt) = m.key()?;
            match (field, wt) {
                (1, VARINT) => id = m.varint()? as u32,
                (2, LEN) => name = m.string()?,
                (3, VARINT) => parents.push(m.varint()? as u32),
                (3, LEN) => {
                    let mut packed = m.sub()?;
                    while !packed.is_empty() {
                        parents.push(packed.varint()? as u32);
                    }
                }
                (1..=3, _) => return Err(m.error(format!("entity field {field} has wire type {wt}"))),
                _ => m.skip(wt)?,
            }
        }
        let place = Some(Place::Byte(rec_offset));
        if id >= MAX_ENTITY_ID {
            self.warnings.push(
                place,
                None,
                format!("entity {name:?} has id {id}, above the limit {MAX_ENTITY_ID}; ignored"),
            );
            return Ok(());
        }
        let child = match self.lookup(id) {
            Some(existing) if self.log.entities.name(existing) == name => existing,
            Some(existing) => {
                let old = self.log.entities.name(existing).to_owned();
                self.warnings.push(
                    place,
                    None,
                    format!("entity id {id} redeclared as {name:?} (it is {old:?}); ignored"),
                );
                return Ok(());
            }
            None => {
                let e = self.log.entities.intern(name);
                let slot = id as usize;
                if self.ids.len() <= slot {
                    self.ids.resize(slot + 1, 0);
                }
                self.ids[slot] = e.0 + 1;
                e
            }
        };
        for p in parents {
            match self.lookup(p) {
                None => self.warnings.push(
                    place,
                    None,
                    format!(
                        "entity {name:?} names parent id {p}, which is not declared before it; edge ignored"
                    ),
                ),
                Some(parent) => {
                    add_parent_checked(&mut self.log.entities, &mut self.warnings, child, parent, || {
                        place
                    })
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn lookup(&self, wire_id: u32) -> Option<EntityId> {
        match self.ids.get(wire_id as usize) {
            Some(&v) if v != 0 => Some(EntityId(v - 1)),
            _ => None,
        }
    }

    /// The model entity for a primitive's wire id, inventing a placeholder
    /// (with a warning) for an undeclared id.
    #[inline]
    fn entity_of(&mut self, wire_id: u32, place: Place, prim: usize) -> EntityId {
        if let Some(e) = self.lookup(wire_id) {
            return e;
        }
        let name = format!("unknown/{wire_id}");
        let e = self.log.entities.intern(&name);
        self.warnings.push(
            Some(place),
            Some(self.frames_seen),
            format!("primitive {prim} refers to undeclared entity id {wire_id}; shown as entity {name:?}"),
        );
        if wire_id < MAX_ENTITY_ID {
            let slot = wire_id as usize;
            if self.ids.len() <= slot {
                self.ids.resize(slot + 1, 0);
            }
            self.ids[slot] = e.0 + 1;
        }
        e
    }

    fn frame(&mut self, m: &mut Reader<'_>, rec_offset: u64) -> WireResult<()> {
        let place = Place::Byte(rec_offset);
        let start = self.log.primitives.len();
        let mut time = None;
        let mut index = 0usize;
        while !m.is_empty() {
            let (field, wt) = m.key()?;
            match field {
                1 => {
                    m.expect(field, wt, wire::I64)?;
                    time = Some(FrameTime::Instant(m.f64()?));
                }
                2 => {
                    m.expect(field, wt, LEN)?;
                    let mut iv = m.sub()?;
                    let (mut s, mut e) = (0.0, 0.0);
                    while !iv.is_empty() {
                        let (f, w) = iv.key()?;
                        match f {
                            1 => {
                                iv.expect(f, w, wire::I64)?;
                                s = iv.f64()?;
                            }
                            2 => {
                                iv.expect(f, w, wire::I64)?;
                                e = iv.f64()?;
                            }
                            _ => iv.skip(w)?,
                        }
                    }
                    time = Some(FrameTime::Persistent { start: s, end: e });
                }
                3 => {
                    m.expect(field, wt, LEN)?;
                    let mut pm = m.sub()?;
                    let (raw, wire_entity) = decode_primitive(&mut pm)?;
                    match raw {
                        Ok(mut p) => {
                            p.entity = self.entity_of(wire_entity, place, index);
                            self.log.primitives.push(p);
                        }
                        Err(problem) => self.warnings.push(
                            Some(place),
                            Some(self.frames_seen),
                            format!("primitive {index} dropped: {problem}"),
                        ),
                    }
                    index += 1;
                }
                _ => m.skip(wt)?,
            }
        }
        match time {
            Some(t) => close_frame(
                &mut self.log,
                &mut self.warnings,
                t,
                start,
                self.frames_seen,
                place,
            ),
            None => {
                self.log.primitives.truncate(start);
                self.warnings.push(
                    Some(place),
                    Some(self.frames_seen),
                    "frame dropped: it has no time",
                );
            }
        }
        Ok(())
    }
}

/// Adds `parent → child` unless it would close a cycle (warning then).
pub(crate) fn add_parent_checked(
    entities: &mut Entities,
    warnings: &mut Warnings,
    child: EntityId,
    parent: EntityId,
    place: impl Fn() -> Option<Place>,
) {
    if !entities.add_parent_acyclic(child, parent) {
        let (c, p) = (entities.name(child), entities.name(parent));
        warnings.push(
            place(),
            None,
            format!("parent {p:?} of entity {c:?} would make a cycle; edge ignored"),
        );
    }
}

/// What a shape counts for in bounding decompression
/// ([`DECOMPRESSED_PER_ITEM`]): 1, plus its vertices, plus an eighth of
/// its text's bytes.
fn items(shape: &Shape) -> u64 {
    1 + match shape {
        Shape::Polygon { vertices, .. } => vertices.len() as u64,
        Shape::Text { text, .. } => text.len() as u64 / 8,
        Shape::Raised(r) => match &**r {
            Raised::Path { points, .. } => points.len() as u64,
            Raised::Text { text, .. } => text.len() as u64 / 8,
            _ => 0,
        },
        Shape::Picture(s) => return items(s),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
