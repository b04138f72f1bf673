//! Decoding the messages inside records by hand: the header and its
//! display hints, primitives and their shapes — on the floor (`Primitive`
//! fields 1 to 7), above it (fields 14 to 20, format version 2) and in the
//! picture's pixels (a floor shape and field 21, format version 3). The
//! record loop ([`super::Decoder`]) calls these; field numbers are those
//! of `proto/underlay.proto`.

use crate::raised::UP;
use crate::wire::{self, LEN, Reader, VARINT, WireError, WireResult};
use crate::{
    DisplayHints, EntityId, Header, MarkerKind, Primitive, Raised, Rgba, Shape, Style, ThicknessUnit,
    TimeUnit, Vec2, Vec3,
};

// `Primitive` fields of the shapes above the floor.
pub(super) const PATH3: u32 = 14;
pub(super) const CIRCLE3: u32 = 15;
pub(super) const TEXT3: u32 = 16;
pub(super) const POINT3: u32 = 17;
pub(super) const SPHERE: u32 = 18;
pub(super) const CYLINDER: u32 = 19;
pub(super) const BOX3: u32 = 20;
/// The `Primitive` field that puts its shape in the picture's pixels.
pub(super) const PICTURE: u32 = 21;

#[inline(always)]
pub(super) fn decode_vec2(r: &mut Reader<'_>) -> WireResult<Vec2> {
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

pub(super) fn decode_header(m: &mut Reader<'_>) -> WireResult<(Header, u32)> {
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
pub(super) fn decode_primitive(m: &mut Reader<'_>) -> WireResult<(Result<Primitive, String>, u32)> {
    let mut shape = None;
    let mut entity = 0u32;
    let mut level = 0i32;
    let mut style = Style::default();
    let mut bad_unit = None;
    let mut picture = false;
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (f, w) {
            (1..=7, LEN) => shape = Some(decode_shape(f, &mut m.sub()?)?),
            (PATH3..=BOX3, LEN) => shape = Some(Shape::Raised(Box::new(decode_raised(f, &mut m.sub()?)?))),
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
            (PICTURE, VARINT) => picture = m.varint()? != 0,
            (1..=13 | PATH3..=BOX3 | PICTURE, _) => {
                return Err(m.error(format!("primitive field {f} has wire type {w}")));
            }
            _ => m.skip(w)?,
        }
    }
    if picture {
        shape = shape.map(Shape::picture);
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

/// A `Vec3` message (any encoding: fields in any order, absent ones 0).
fn decode_vec3(r: &mut Reader<'_>) -> WireResult<Vec3> {
    let mut m = r.sub()?;
    let mut v = [0.0; 3];
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (f, w) {
            (1..=3, wire::I64) => v[f as usize - 1] = m.f64()?,
            (1..=3, _) => return Err(m.error(format!("coordinate field {f} has wire type {w}"))),
            _ => m.skip(w)?,
        }
    }
    Ok(v)
}

/// Decodes the shape above the floor of `Primitive` field `kind`
/// ([`PATH3`] to [`BOX3`]). Absent fields take proto3's defaults, except
/// a circle's normal, which is [`UP`]; whether the shape can be drawn is
/// checked later, with the other shapes ([`Raised::invalid`]).
fn decode_raised(kind: u32, m: &mut Reader<'_>) -> WireResult<Raised> {
    // Field 1: a point (every kind); the second vector: a circle's normal
    // (field 3) or a box's size (field 2); doubles by field number.
    let mut a: Vec3 = [0.0; 3];
    let mut b: Option<Vec3> = None;
    let mut x = [0.0f64; 4];
    let mut points: Vec<Vec3> = Vec::new();
    let mut flag = 0u64;
    let mut text: &str = "";
    let bad = |m: &Reader<'_>, f: u32, w: u32| -> WireError {
        m.error(format!(
            "field {f} of a {} has wire type {w}",
            raised_kind_name(kind)
        ))
    };
    while !m.is_empty() {
        let (f, w) = m.key()?;
        match (kind, f, w) {
            // path: points, open
            (PATH3, 1, LEN) => points.push(decode_vec3(m)?),
            (PATH3, 2, VARINT) => flag = m.varint()?,
            // every other kind starts at a point
            (CIRCLE3..=BOX3, 1, LEN) => a = decode_vec3(m)?,
            // circle: center, radius, normal; sphere: center, radius;
            // cylinder: base, radius, height
            (CIRCLE3 | SPHERE | CYLINDER, 2, wire::I64) | (CYLINDER, 3, wire::I64) => {
                x[f as usize] = m.f64()?
            }
            (CIRCLE3, 3, LEN) | (BOX3, 2, LEN) => b = Some(decode_vec3(m)?),
            // text: anchor, text, size; point: position, kind, size
            (TEXT3, 2, LEN) => text = m.string()?,
            (POINT3, 2, VARINT) => flag = m.varint()?,
            (TEXT3 | POINT3, 3, wire::I64) => x[3] = m.f64()?,
            // box: base, size, orientation
            (BOX3, 3, wire::I64) => x[3] = m.f64()?,
            (PATH3 | SPHERE, 1..=2, _) | (CIRCLE3 | TEXT3 | POINT3 | CYLINDER | BOX3, 1..=3, _) => {
                return Err(bad(m, f, w));
            }
            _ => m.skip(w)?,
        }
    }
    Ok(match kind {
        PATH3 => Raised::Path {
            points: points.into_boxed_slice(),
            closed: flag == 0,
        },
        CIRCLE3 => Raised::Circle {
            center: a,
            radius: x[2],
            normal: b.unwrap_or(UP),
        },
        TEXT3 => Raised::Text {
            anchor: a,
            text: text.into(),
            size: x[3],
        },
        POINT3 => Raised::Point {
            position: a,
            kind: if flag as i32 == 1 {
                MarkerKind::Dot
            } else {
                MarkerKind::Cross
            },
            size: x[3],
        },
        SPHERE => Raised::Sphere {
            center: a,
            radius: x[2],
        },
        CYLINDER => Raised::Cylinder {
            base: a,
            radius: x[2],
            height: x[3],
        },
        _ => Raised::Box {
            base: a,
            size: b.unwrap_or_default(),
            orientation: x[3],
        },
    })
}

fn raised_kind_name(kind: u32) -> &'static str {
    match kind {
        PATH3 => "raised path",
        CIRCLE3 => "raised circle",
        TEXT3 => "raised text",
        POINT3 => "raised point",
        SPHERE => "sphere",
        CYLINDER => "cylinder",
        _ => "box",
    }
}
