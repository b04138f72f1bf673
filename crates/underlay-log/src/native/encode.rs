//! Encoding the model in the native format by hand: records (header,
//! entities, frames) and the messages inside them, shapes on the floor and
//! above it.
//!
//! Field order and default omission follow prost (proto3): the output
//! equals prost's encoding of the same message, except that a double of
//! -0.0 is written, as the protobuf specification says (only +0.0 is the
//! default); prost compares with `==` and drops it, so -0 would come back
//! as +0.
//!
//! A log is written in the oldest version that holds it ([`version_for`]):
//! version 1 unless it has shapes above the floor (2) or in the picture's
//! pixels (3), so a log without them is byte for byte what underlay wrote
//! before there were heights. A shape in the picture's pixels is its floor
//! shape's fields with `Primitive.picture` (field 21) set.

use std::io::{self, Write};

use super::decode::{BOX3, CIRCLE3, CYLINDER, PATH3, PICTURE, POINT3, SPHERE, TEXT3};
use super::{
    FLOOR_VERSION, PICTURE_VERSION, RAISED_VERSION, RECORD_ENTITY, RECORD_FRAME, RECORD_HEADER,
    versioned_prefix,
};
use crate::raised::UP;
use crate::wire::{self, VARINT};
use crate::{
    DisplayHints, Entities, EntityId, FrameTime, Header, Log, MarkerKind, Primitive, Raised, Shape,
    ThicknessUnit, TimeUnit, Vec2, Vec3,
};

/// The format version `log` is written in: [`PICTURE_VERSION`] when it
/// has a shape in the picture's pixels, else [`RAISED_VERSION`] when it has
/// a shape above the floor, else [`FLOOR_VERSION`].
pub fn version_for(log: &Log) -> u8 {
    let mut version = FLOOR_VERSION;
    for p in log.frames.iter().flat_map(|f| log.frame_primitives(f)) {
        match p.shape {
            Shape::Picture(_) => return PICTURE_VERSION,
            Shape::Raised(_) => version = RAISED_VERSION,
            _ => {}
        }
    }
    version
}

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
        Shape::Raised(r) => match **r {
            Raised::Path { .. } => PATH3,
            Raised::Circle { .. } => CIRCLE3,
            Raised::Text { .. } => TEXT3,
            Raised::Point { .. } => POINT3,
            Raised::Sphere { .. } => SPHERE,
            Raised::Cylinder { .. } => CYLINDER,
            Raised::Box { .. } => BOX3,
        },
        Shape::Picture(s) => shape_field(s),
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
        Shape::Raised(r) => raised_body_len(r),
        Shape::Picture(s) => shape_body_len(s),
    }
}

fn put_shape(out: &mut Vec<u8>, shape: &Shape) {
    if let Shape::Picture(s) = shape {
        return put_shape(out, s);
    }
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
        Shape::Raised(r) => put_raised(out, r),
        Shape::Picture(_) => {}
    }
}

/// Length of a primitive message's body (without its key and length).
#[inline]
fn primitive_body_len(p: &Primitive) -> usize {
    let s = shape_body_len(&p.shape);
    let mut n = wire::len_field_len(shape_field(&p.shape), s);
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
    if matches!(p.shape, Shape::Picture(_)) {
        n += wire::varint_len(u64::from(PICTURE << 3)) + 1;
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
    if matches!(p.shape, Shape::Picture(_)) {
        wire::put_key(out, PICTURE, VARINT);
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

/// The length of a frame record (without its length prefix) whose
/// primitives take `encoded` bytes: what a reader checks against
/// [`MAX_RECORD_LEN`](crate::MAX_RECORD_LEN).
pub(crate) fn frame_record_len(time: FrameTime, encoded: usize) -> usize {
    wire::len_field_len(RECORD_FRAME, time_len(time) + encoded)
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

/// Appends a delimited header record saying format `version`.
pub(crate) fn put_header_record(out: &mut Vec<u8>, h: &Header, version: u8) {
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
    wire::put_varint(out, u64::from(version));
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
fn put_entity_records(out: &mut Vec<u8>, entities: &Entities) {
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

/// Writes `log` in the native format, in the version [`version_for`]
/// says; `zstd_level` compresses.
pub fn write(log: &Log, w: &mut impl Write, zstd_level: Option<i32>) -> io::Result<()> {
    let version = version_for(log);
    w.write_all(&versioned_prefix(version, zstd_level.is_some()))?;
    match zstd_level {
        None => write_records(log, version, w, false),
        Some(level) => {
            // Frame by frame, as the `Writer` does: each frame ends a zstd
            // block, so a torn copy still decompresses to its complete
            // frames (one stream in large blocks lost them all).
            let mut z = zstd::stream::write::Encoder::new(w, level)?;
            write_records(log, version, &mut z, true)?;
            z.finish()?;
            Ok(())
        }
    }
}

/// Writes the records of `log`, its header saying format `version`;
/// `flush_each_frame` flushes `w` after the header and entities and after
/// each frame.
pub(super) fn write_records(
    log: &Log,
    version: u8,
    w: &mut impl Write,
    flush_each_frame: bool,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    put_header_record(&mut buf, &log.header, version);
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

// Shapes above the floor.

#[inline]
fn vec3_len(v: &Vec3) -> usize {
    v.iter().map(|&c| f64_len(c)).sum()
}

/// Length of a `Vec3` message field with its key and length.
#[inline]
fn vec3_field_len(v: &Vec3) -> usize {
    2 + vec3_len(v)
}

fn put_vec3(out: &mut Vec<u8>, field: u32, v: &Vec3) {
    wire::put_len(out, field, vec3_len(v));
    for (k, &c) in (1..).zip(v) {
        put_f64_opt(out, k, c);
    }
}

/// Whether a circle's normal is written: anything but [`UP`] (bit for
/// bit, so that a normal with a -0 keeps it).
#[inline]
fn normal_written(normal: &Vec3) -> bool {
    normal.iter().zip(UP).any(|(a, b)| a.to_bits() != b.to_bits())
}

fn raised_body_len(r: &Raised) -> usize {
    match r {
        Raised::Path { points, closed } => {
            points.iter().map(vec3_field_len).sum::<usize>() + if *closed { 0 } else { 2 }
        }
        Raised::Circle {
            center,
            radius,
            normal,
        } => {
            vec3_field_len(center)
                + f64_len(*radius)
                + if normal_written(normal) {
                    vec3_field_len(normal)
                } else {
                    0
                }
        }
        Raised::Text { anchor, text, size } => {
            vec3_field_len(anchor) + string_field_len(2, text) + f64_len(*size)
        }
        Raised::Point { position, kind, size } => {
            vec3_field_len(position) + if *kind == MarkerKind::Dot { 2 } else { 0 } + f64_len(*size)
        }
        Raised::Sphere { center, radius } => vec3_field_len(center) + f64_len(*radius),
        Raised::Cylinder { base, radius, height } => {
            vec3_field_len(base) + f64_len(*radius) + f64_len(*height)
        }
        Raised::Box {
            base,
            size,
            orientation,
        } => vec3_field_len(base) + vec3_field_len(size) + f64_len(*orientation),
    }
}

/// The body of a raised shape's message (its key and length are written).
fn put_raised(out: &mut Vec<u8>, r: &Raised) {
    match r {
        Raised::Path { points, closed } => {
            for p in points.iter() {
                put_vec3(out, 1, p);
            }
            if !closed {
                wire::put_key(out, 2, VARINT);
                out.push(1);
            }
        }
        Raised::Circle {
            center,
            radius,
            normal,
        } => {
            put_vec3(out, 1, center);
            put_f64_opt(out, 2, *radius);
            if normal_written(normal) {
                put_vec3(out, 3, normal);
            }
        }
        Raised::Text { anchor, text, size } => {
            put_vec3(out, 1, anchor);
            put_string(out, 2, text);
            put_f64_opt(out, 3, *size);
        }
        Raised::Point { position, kind, size } => {
            put_vec3(out, 1, position);
            if *kind == MarkerKind::Dot {
                wire::put_key(out, 2, VARINT);
                out.push(1);
            }
            put_f64_opt(out, 3, *size);
        }
        Raised::Sphere { center, radius } => {
            put_vec3(out, 1, center);
            put_f64_opt(out, 2, *radius);
        }
        Raised::Cylinder { base, radius, height } => {
            put_vec3(out, 1, base);
            put_f64_opt(out, 2, *radius);
            put_f64_opt(out, 3, *height);
        }
        Raised::Box {
            base,
            size,
            orientation,
        } => {
            put_vec3(out, 1, base);
            put_vec3(out, 2, size);
            put_f64_opt(out, 3, *orientation);
        }
    }
}
