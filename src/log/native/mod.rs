//! The native binary format: reading into and writing out of the model.
//!
//! A file is a 10-byte prefix — [`MAGIC`], the format version, the
//! compression (0 none, 1 zstd for everything after the prefix) — then
//! `Record` messages of `proto/underlay.proto`, each preceded by its length
//! as a varint. Entities are declared once by `Entity` records and
//! primitives refer to them by id.
//!
//! The reader and encoder here are hand-written for speed (see
//! `docs/PERFORMANCE.md`); [`reference`](super::reference) does the same
//! through prost-generated types, and tests check that both agree byte for
//! byte and value for value.

use std::io::{self, BufRead, BufReader, Read, Write};

use super::wire::{self, LEN, Reader, VARINT, WireError, WireResult};
use super::{
    DisplayHints, Entities, EntityId, FrameTime, Header, Log, MAX_RECORD_LEN, MarkerKind, Place, Primitive,
    ReadError, Rgba, Shape, Style, ThicknessUnit, TimeUnit, Vec2, Warnings, close_frame,
};

/// The first eight bytes of every native log.
pub const MAGIC: &[u8; 8] = b"UNDERLAY";
/// The format version this build reads and writes.
pub const FORMAT_VERSION: u8 = 1;
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

/// The 10-byte prefix of a native log.
pub fn prefix(compressed: bool) -> [u8; PREFIX_LEN] {
    let mut p = [0u8; PREFIX_LEN];
    p[..8].copy_from_slice(MAGIC);
    p[8] = FORMAT_VERSION;
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
pub(crate) fn read_with_len<R: BufRead>(mut r: R, total_len: Option<u64>) -> Result<Log, ReadError> {
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
    if p[8] != FORMAT_VERSION {
        return Err(ReadError::UnsupportedVersion {
            found: p[8],
            supported: FORMAT_VERSION,
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
                    return Err(ReadError::Corrupt {
                        offset,
                        frame: self.frames_seen,
                        message: "record length is not a valid varint".into(),
                    });
                }
                LenPrefix::Len(len, n) => (len, n),
            };
            if len > MAX_RECORD_LEN {
                return Err(ReadError::Corrupt {
                    offset,
                    frame: self.frames_seen,
                    message: format!("record length {len} exceeds the limit of {MAX_RECORD_LEN} bytes"),
                });
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
            self.record(&buf, rec_offset).map_err(|e| ReadError::Corrupt {
                offset: body_offset + e.at as u64,
                frame,
                message: e.message,
            })?;
            if compressed {
                // Decompression is bounded by what it yields.
                for p in self.log.primitives.get(counted..).unwrap_or(&[]) {
                    drawn += 1 + match &p.shape {
                        Shape::Polygon { vertices, .. } => vertices.len() as u64,
                        Shape::Text { text, .. } => text.len() as u64 / 8,
                        _ => 0,
                    };
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

#[inline(always)]
fn decode_vec2(r: &mut Reader<'_>) -> WireResult<Vec2> {
    match r.two_doubles() {
        Some((x, y)) => Ok(Vec2::new(x, y)),
        None => decode_vec2_general(r),
    }
}

#[inline(never)]
fn decode_vec2_general(r: &mut Reader<'_>) -> WireResult<Vec2> {
    let mut m = r.sub()?;
    let mut v = Vec2::ZERO;
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (f, w) {
            (1, wire::I64) => v.x = m.f64()?,
            (2, wire::I64) => v.y = m.f64()?,
            (1 | 2, _) => return Err(m.error(format!("coordinate field {f} has wire type {w}"))),
            _ => m.skip(w)?,
        }
    }
    Ok(v)
}

fn decode_header(m: &mut Reader<'_>) -> WireResult<(Header, u32)> {
    let mut h = Header::default();
    let mut version = 0u32;
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (f, w) {
            (1, VARINT) => version = m.varint()? as u32,
            (2, LEN) => h.name = m.string()?.to_owned(),
            (3, VARINT) => {
                h.time_unit = match m.varint()? as i32 {
                    1 => TimeUnit::RelativeSeconds,
                    _ => TimeUnit::EpochSeconds,
                }
            }
            (4, LEN) => h.world_unit = m.string()?.to_owned(),
            (5, LEN) => h.hints = decode_hints(&mut m.sub()?)?,
            (1..=5, _) => return Err(m.error(format!("header field {f} has wire type {w}"))),
            _ => m.skip(w)?,
        }
    }
    Ok((h, version))
}

fn decode_hints(m: &mut Reader<'_>) -> WireResult<DisplayHints> {
    let mut h = DisplayHints::default();
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (f, w) {
            (1, wire::I64) => h.instant_threshold = Some(m.f64()?),
            (2, VARINT) => h.default_max_level = Some(wire::unzigzag32(m.varint()?)),
            (3, LEN) => {
                let mut b = m.sub()?;
                let (mut lo, mut hi) = (Vec2::ZERO, Vec2::ZERO);
                while !b.is_empty() {
                    let (f, w) = b.key()?;
                    match (f, w) {
                        (1, LEN) => lo = decode_vec2(&mut b)?,
                        (2, LEN) => hi = decode_vec2(&mut b)?,
                        (1 | 2, _) => return Err(b.error(format!("bounds field {f} has wire type {w}"))),
                        _ => b.skip(w)?,
                    }
                }
                h.world_bounds = Some((lo, hi));
            }
            (1..=3, _) => return Err(m.error(format!("hints field {f} has wire type {w}"))),
            _ => m.skip(w)?,
        }
    }
    Ok(h)
}

/// Decodes a primitive; the entity is left for the caller to resolve from
/// the returned wire id. A primitive without a shape is `Err(problem)`.
#[inline]
fn decode_primitive(m: &mut Reader<'_>) -> WireResult<(Result<Primitive, String>, u32)> {
    let mut shape = None;
    let mut entity = 0u32;
    let mut level = 0i32;
    let mut style = Style::default();
    let mut bad_unit = None;
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (f, w) {
            (1..=7, LEN) => shape = Some(decode_shape(f, &mut m.sub()?)?),
            (8, VARINT) => entity = m.varint()? as u32,
            (9, VARINT) => level = wire::unzigzag32(m.varint()?),
            (10, wire::I32) => style.color = Rgba(m.fixed32()?),
            (11, wire::I32) => style.fill = Some(Rgba(m.fixed32()?)),
            (12, wire::I32) => style.thickness = f32::from_bits(m.fixed32()?),
            (13, VARINT) => {
                style.unit = match m.varint()? as i32 {
                    0 => ThicknessUnit::Pixels,
                    1 => ThicknessUnit::World,
                    u => {
                        bad_unit = Some(u);
                        ThicknessUnit::Pixels
                    }
                }
            }
            (1..=13, _) => return Err(m.error(format!("primitive field {f} has wire type {w}"))),
            _ => m.skip(w)?,
        }
    }
    let result = match (shape, bad_unit) {
        (None, _) => Err("it has no shape".to_owned()),
        (Some(_), Some(u)) => Err(format!("unknown thickness unit {u}")),
        (Some(shape), None) => Ok(Primitive {
            shape,
            style,
            entity: EntityId(0),
            level,
        }),
    };
    Ok((result, entity))
}

fn decode_shape(kind: u32, m: &mut Reader<'_>) -> WireResult<Shape> {
    // Every shape's fields: 1 and 2 are points or sizes (LEN) except where
    // noted, 3 a double.
    let mut a = Vec2::ZERO;
    let mut b = Vec2::ZERO;
    let mut x = 0.0;
    // The sector's inner radius, outer radius, start and sweep.
    let mut sector = [0.0; 4];
    let mut vertices: Vec<Vec2> = Vec::new();
    let mut flag = 0u64;
    let mut text: &str = "";
    let bad = |m: &Reader<'_>, f: u32, w: u32| -> WireError {
        m.error(format!("field {f} of a {} has wire type {w}", kind_name(kind)))
    };
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (kind, f, w) {
            // circle: center, radius
            (1, 1, LEN) => a = decode_vec2(m)?,
            (1, 2, wire::I64) => x = m.f64()?,
            // line: start, end; rectangle: center, size, orientation
            (2 | 3, 1, LEN) => a = decode_vec2(m)?,
            (2 | 3, 2, LEN) => b = decode_vec2(m)?,
            (3, 3, wire::I64) => x = m.f64()?,
            // polygon: vertices, open
            (4, 1, LEN) => vertices.push(decode_vec2(m)?),
            (4, 2, VARINT) => flag = m.varint()?,
            // text: anchor, text, size
            (5, 1, LEN) => a = decode_vec2(m)?,
            (5, 2, LEN) => text = m.string()?,
            (5, 3, wire::I64) => x = m.f64()?,
            // point: position, kind, size
            (6, 1, LEN) => a = decode_vec2(m)?,
            (6, 2, VARINT) => flag = m.varint()?,
            (6, 3, wire::I64) => x = m.f64()?,
            // sector: center, inner, outer, start, sweep
            (7, 1, LEN) => a = decode_vec2(m)?,
            (7, 2..=5, wire::I64) => sector[f as usize - 2] = m.f64()?,
            (1, 1..=2, _) | (2, 1..=2, _) | (3..=6, 1..=3, _) | (7, 1..=5, _) => return Err(bad(m, f, w)),
            _ => m.skip(w)?,
        }
    }
    Ok(match kind {
        1 => Shape::Circle { center: a, radius: x },
        2 => Shape::Line { start: a, end: b },
        3 => Shape::Rectangle {
            center: a,
            size: b,
            orientation: x,
        },
        4 => Shape::Polygon {
            vertices: vertices.into_boxed_slice(),
            closed: flag == 0,
        },
        5 => Shape::Text {
            anchor: a,
            text: text.into(),
            size: x,
        },
        7 => Shape::Sector {
            center: a,
            inner: sector[0],
            outer: sector[1],
            start: sector[2],
            sweep: sector[3],
        },
        _ => Shape::Point {
            position: a,
            kind: if flag as i32 == 1 {
                MarkerKind::Dot
            } else {
                MarkerKind::Cross
            },
            size: x,
        },
    })
}

fn kind_name(kind: u32) -> &'static str {
    [
        "circle",
        "line",
        "rectangle",
        "polygon",
        "text",
        "point",
        "sector",
    ]
    .get((kind as usize).wrapping_sub(1))
    .copied()
    .unwrap_or("shape")
}

// ---------------------------------------------------------------------------
// Encoding. Field order and default omission follow prost (proto3): the
// output equals prost's encoding of the same message, except that a double
// of -0.0 is written, as the protobuf specification says (only +0.0 is the
// default); prost compares with `==` and drops it, so -0 would come back
// as +0.

/// Whether a double field is written: anything but +0.0.
#[inline]
fn present(v: f64) -> bool {
    v.to_bits() != 0
}

#[inline]
fn vec2_len(v: Vec2) -> usize {
    (if present(v.x) { 9 } else { 0 }) + (if present(v.y) { 9 } else { 0 })
}

#[inline]
fn put_vec2(out: &mut Vec<u8>, field: u32, v: Vec2) {
    wire::put_len(out, field, vec2_len(v));
    if present(v.x) {
        wire::put_f64(out, 1, v.x);
    }
    if present(v.y) {
        wire::put_f64(out, 2, v.y);
    }
}

#[inline]
fn f64_len(v: f64) -> usize {
    if present(v) { 9 } else { 0 }
}

#[inline]
fn put_f64_opt(out: &mut Vec<u8>, field: u32, v: f64) {
    if present(v) {
        wire::put_f64(out, field, v);
    }
}

fn shape_field(shape: &Shape) -> u32 {
    match shape {
        Shape::Circle { .. } => 1,
        Shape::Line { .. } => 2,
        Shape::Rectangle { .. } => 3,
        Shape::Polygon { .. } => 4,
        Shape::Text { .. } => 5,
        Shape::Point { .. } => 6,
        Shape::Sector { .. } => 7,
        Shape::Raised(_) => todo!("issue 33: raised shapes in the native format"),
    }
}

#[inline]
fn shape_body_len(shape: &Shape) -> usize {
    let v = |v: Vec2| 2 + vec2_len(v);
    match shape {
        Shape::Circle { center, radius } => v(*center) + f64_len(*radius),
        Shape::Line { start, end } => v(*start) + v(*end),
        Shape::Rectangle {
            center,
            size,
            orientation,
        } => v(*center) + v(*size) + f64_len(*orientation),
        Shape::Polygon { vertices, closed } => {
            vertices.iter().map(|&x| v(x)).sum::<usize>() + if *closed { 0 } else { 2 }
        }
        Shape::Text { anchor, text, size } => {
            v(*anchor)
                + if text.is_empty() {
                    0
                } else {
                    wire::len_field_len(2, text.len())
                }
                + f64_len(*size)
        }
        Shape::Point { position, kind, size } => {
            v(*position) + if *kind == MarkerKind::Dot { 2 } else { 0 } + f64_len(*size)
        }
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => v(*center) + f64_len(*inner) + f64_len(*outer) + f64_len(*start) + f64_len(*sweep),
        Shape::Raised(_) => todo!("issue 33: raised shapes in the native format"),
    }
}

fn put_shape(out: &mut Vec<u8>, shape: &Shape) {
    wire::put_len(out, shape_field(shape), shape_body_len(shape));
    match shape {
        Shape::Circle { center, radius } => {
            put_vec2(out, 1, *center);
            put_f64_opt(out, 2, *radius);
        }
        Shape::Line { start, end } => {
            put_vec2(out, 1, *start);
            put_vec2(out, 2, *end);
        }
        Shape::Rectangle {
            center,
            size,
            orientation,
        } => {
            put_vec2(out, 1, *center);
            put_vec2(out, 2, *size);
            put_f64_opt(out, 3, *orientation);
        }
        Shape::Polygon { vertices, closed } => {
            for v in vertices.iter() {
                put_vec2(out, 1, *v);
            }
            if !closed {
                wire::put_key(out, 2, VARINT);
                out.push(1);
            }
        }
        Shape::Text { anchor, text, size } => {
            put_vec2(out, 1, *anchor);
            if !text.is_empty() {
                wire::put_len(out, 2, text.len());
                out.extend_from_slice(text.as_bytes());
            }
            put_f64_opt(out, 3, *size);
        }
        Shape::Point { position, kind, size } => {
            put_vec2(out, 1, *position);
            if *kind == MarkerKind::Dot {
                wire::put_key(out, 2, VARINT);
                out.push(1);
            }
            put_f64_opt(out, 3, *size);
        }
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => {
            put_vec2(out, 1, *center);
            put_f64_opt(out, 2, *inner);
            put_f64_opt(out, 3, *outer);
            put_f64_opt(out, 4, *start);
            put_f64_opt(out, 5, *sweep);
        }
        Shape::Raised(_) => todo!("issue 33: raised shapes in the native format"),
    }
}

/// Length of a primitive message's body (without its key and length).
#[inline]
fn primitive_body_len(p: &Primitive) -> usize {
    let s = shape_body_len(&p.shape);
    let mut n = wire::len_field_len(1, s);
    if p.entity.0 != 0 {
        n += 1 + wire::varint_len(u64::from(p.entity.0));
    }
    if p.level != 0 {
        n += 1 + wire::varint_len(u64::from(wire::zigzag32(p.level)));
    }
    n += 5; // color, always present
    if p.style.fill.is_some() {
        n += 5;
    }
    if p.style.thickness != 0.0 {
        n += 5;
    }
    if p.style.unit == ThicknessUnit::World {
        n += 2;
    }
    n
}

/// Appends `p` as field `field` (a `Primitive` message) with entity id
/// `p.entity`.
#[inline]
pub(crate) fn put_primitive(out: &mut Vec<u8>, field: u32, p: &Primitive) {
    wire::put_len(out, field, primitive_body_len(p));
    put_shape(out, &p.shape);
    if p.entity.0 != 0 {
        wire::put_key(out, 8, VARINT);
        wire::put_varint(out, u64::from(p.entity.0));
    }
    if p.level != 0 {
        wire::put_key(out, 9, VARINT);
        wire::put_varint(out, u64::from(wire::zigzag32(p.level)));
    }
    wire::put_fixed32(out, 10, p.style.color.0);
    if let Some(fill) = p.style.fill {
        wire::put_fixed32(out, 11, fill.0);
    }
    if p.style.thickness != 0.0 {
        wire::put_fixed32(out, 12, p.style.thickness.to_bits());
    }
    if p.style.unit == ThicknessUnit::World {
        wire::put_key(out, 13, VARINT);
        out.push(1);
    }
}

/// Length of the frame's time field(s).
fn time_len(time: FrameTime) -> usize {
    match time {
        FrameTime::Instant(_) => 9,
        FrameTime::Persistent { start, end } => 2 + f64_len(start) + f64_len(end),
    }
}

fn put_time(out: &mut Vec<u8>, time: FrameTime) {
    match time {
        FrameTime::Instant(t) => wire::put_f64(out, 1, t),
        FrameTime::Persistent { start, end } => {
            wire::put_len(out, 2, f64_len(start) + f64_len(end));
            put_f64_opt(out, 1, start);
            put_f64_opt(out, 2, end);
        }
    }
}

/// Appends a delimited frame record whose primitives are already encoded
/// (as field 3 of `Frame`) in `encoded`.
pub(crate) fn put_frame_record_encoded(out: &mut Vec<u8>, time: FrameTime, encoded: &[u8]) {
    let frame_len = time_len(time) + encoded.len();
    let record_len = wire::len_field_len(RECORD_FRAME, frame_len);
    wire::put_varint(out, record_len as u64);
    wire::put_len(out, RECORD_FRAME, frame_len);
    put_time(out, time);
    out.extend_from_slice(encoded);
}

/// Appends a delimited frame record.
pub(crate) fn put_frame_record(out: &mut Vec<u8>, time: FrameTime, prims: &[Primitive]) {
    let prims_len: usize = prims
        .iter()
        .map(|p| wire::len_field_len(3, primitive_body_len(p)))
        .sum();
    let frame_len = time_len(time) + prims_len;
    let record_len = wire::len_field_len(RECORD_FRAME, frame_len);
    out.reserve(record_len + 10);
    wire::put_varint(out, record_len as u64);
    wire::put_len(out, RECORD_FRAME, frame_len);
    put_time(out, time);
    for p in prims {
        put_primitive(out, 3, p);
    }
}

fn string_field_len(field: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        wire::len_field_len(field, s.len())
    }
}

fn put_string(out: &mut Vec<u8>, field: u32, s: &str) {
    if !s.is_empty() {
        wire::put_len(out, field, s.len());
        out.extend_from_slice(s.as_bytes());
    }
}

/// Appends a delimited header record.
pub(crate) fn put_header_record(out: &mut Vec<u8>, h: &Header) {
    let hints = &h.hints;
    let hints_len = (hints != &DisplayHints::default()).then(|| {
        hints.instant_threshold.map_or(0, |_| 9)
            + hints
                .default_max_level
                .map_or(0, |l| 1 + wire::varint_len(u64::from(wire::zigzag32(l))))
            + hints.world_bounds.map_or(0, |(lo, hi)| {
                wire::len_field_len(3, 4 + vec2_len(lo) + vec2_len(hi))
            })
    });
    let time_unit = match h.time_unit {
        TimeUnit::EpochSeconds => 0,
        TimeUnit::RelativeSeconds => 1,
    };
    let body = 2 // format_version
        + string_field_len(2, &h.name)
        + if time_unit != 0 { 2 } else { 0 }
        + wire::len_field_len(4, h.world_unit.len())
        + hints_len.map_or(0, |l| wire::len_field_len(5, l));
    let record = wire::len_field_len(RECORD_HEADER, body);
    wire::put_varint(out, record as u64);
    wire::put_len(out, RECORD_HEADER, body);
    wire::put_key(out, 1, VARINT);
    wire::put_varint(out, u64::from(FORMAT_VERSION));
    put_string(out, 2, &h.name);
    if time_unit != 0 {
        wire::put_key(out, 3, VARINT);
        wire::put_varint(out, time_unit);
    }
    wire::put_len(out, 4, h.world_unit.len());
    out.extend_from_slice(h.world_unit.as_bytes());
    if let Some(l) = hints_len {
        wire::put_len(out, 5, l);
        if let Some(t) = hints.instant_threshold {
            wire::put_f64(out, 1, t);
        }
        if let Some(level) = hints.default_max_level {
            wire::put_key(out, 2, VARINT);
            wire::put_varint(out, u64::from(wire::zigzag32(level)));
        }
        if let Some((lo, hi)) = hints.world_bounds {
            wire::put_len(out, 3, 4 + vec2_len(lo) + vec2_len(hi));
            put_vec2(out, 1, lo);
            put_vec2(out, 2, hi);
        }
    }
}

/// Appends a delimited entity record.
pub(crate) fn put_entity_record(out: &mut Vec<u8>, id: u32, name: &str, parents: &[EntityId]) {
    let packed: usize = parents.iter().map(|p| wire::varint_len(u64::from(p.0))).sum();
    let body = if id != 0 {
        1 + wire::varint_len(u64::from(id))
    } else {
        0
    } + string_field_len(2, name)
        + if parents.is_empty() {
            0
        } else {
            wire::len_field_len(3, packed)
        };
    let record = wire::len_field_len(RECORD_ENTITY, body);
    wire::put_varint(out, record as u64);
    wire::put_len(out, RECORD_ENTITY, body);
    if id != 0 {
        wire::put_key(out, 1, VARINT);
        wire::put_varint(out, u64::from(id));
    }
    put_string(out, 2, name);
    if !parents.is_empty() {
        wire::put_len(out, 3, packed);
        for p in parents {
            wire::put_varint(out, u64::from(p.0));
        }
    }
}

/// Appends the entity records of `entities`: in id order, each with its
/// parents when they all come earlier; an entity with a later parent is
/// declared bare first and again with its parents once all are declared.
pub(crate) fn put_entity_records(out: &mut Vec<u8>, entities: &Entities) {
    let mut later = Vec::new();
    for id in entities.ids() {
        let parents = entities.parents(id);
        if parents.iter().all(|p| p.0 < id.0) {
            put_entity_record(out, id.0, entities.name(id), parents);
        } else {
            put_entity_record(out, id.0, entities.name(id), &[]);
            later.push(id);
        }
    }
    for id in later {
        put_entity_record(out, id.0, entities.name(id), entities.parents(id));
    }
}

/// Writes `log` in the native format; `zstd_level` compresses.
pub fn write(log: &Log, w: &mut impl Write, zstd_level: Option<i32>) -> io::Result<()> {
    w.write_all(&prefix(zstd_level.is_some()))?;
    match zstd_level {
        None => write_records(log, w, false),
        Some(level) => {
            // Frame by frame, as the `Writer` does: each frame ends a zstd
            // block, so a torn copy still decompresses to its complete
            // frames (one stream in large blocks lost them all).
            let mut z = zstd::stream::write::Encoder::new(w, level)?;
            write_records(log, &mut z, true)?;
            z.finish()?;
            Ok(())
        }
    }
}

/// Writes the records of `log`; `flush_each_frame` flushes `w` after the
/// header and entities and after each frame.
fn write_records(log: &Log, w: &mut impl Write, flush_each_frame: bool) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    put_header_record(&mut buf, &log.header);
    put_entity_records(&mut buf, &log.entities);
    if flush_each_frame {
        w.write_all(&buf)?;
        w.flush()?;
        buf.clear();
    }
    for f in &log.frames {
        put_frame_record(&mut buf, f.time, log.frame_primitives(f));
        if flush_each_frame {
            w.write_all(&buf)?;
            w.flush()?;
            buf.clear();
        } else if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)
}

/// The native encoding of `log`, uncompressed.
pub fn to_bytes(log: &Log) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(log, &mut out, None);
    out
}

#[cfg(test)]
mod tests;
