//! The native format through prost-generated types: conversions between
//! the wire types of `proto/underlay.proto` and the model, in one place.
//!
//! This is the straightforward reader and encoder. The hot paths in
//! [`native`](super::native) are hand-written for speed; tests check that
//! they agree with this module (same bytes out, same log in), which keeps
//! the `.proto` file the single source of truth. Benchmarks use it as the
//! baseline.

use prost::Message;

use super::native::{FLOOR_VERSION, FORMAT_VERSION, MAGIC, PREFIX_LEN, version_for, versioned_prefix};
use super::proto::v1 as pb;
use super::raised::UP;
use super::{
    DisplayHints, EntityId, FrameTime, Header, Log, MarkerKind, Place, Primitive, Raised, ReadError, Rgba,
    Shape, Style, ThicknessUnit, TimeUnit, Vec2, Vec3, Warnings, close_frame,
};

impl From<Vec2> for pb::Vec2 {
    fn from(v: Vec2) -> Self {
        pb::Vec2 { x: v.x, y: v.y }
    }
}

impl From<pb::Vec2> for Vec2 {
    fn from(v: pb::Vec2) -> Self {
        Vec2::new(v.x, v.y)
    }
}

fn vec2(v: Option<pb::Vec2>) -> Vec2 {
    v.map(Vec2::from).unwrap_or_default()
}

fn pb_vec3(v: Vec3) -> Option<pb::Vec3> {
    Some(pb::Vec3 {
        x: v[0],
        y: v[1],
        z: v[2],
    })
}

fn vec3(v: Option<pb::Vec3>) -> Vec3 {
    v.map_or([0.0; 3], |v| [v.x, v.y, v.z])
}

fn marker_kind(kind: MarkerKind) -> i32 {
    let kind = match kind {
        MarkerKind::Cross => pb::MarkerKind::Cross,
        MarkerKind::Dot => pb::MarkerKind::Dot,
    };
    kind as i32
}

fn model_marker_kind(kind: i32) -> MarkerKind {
    match pb::MarkerKind::try_from(kind) {
        Ok(pb::MarkerKind::Dot) => MarkerKind::Dot,
        _ => MarkerKind::Cross,
    }
}

/// The header record of a log written in format `version`.
fn header(h: &Header, version: u8) -> pb::Header {
    {
        let hints = (h.hints != DisplayHints::default()).then(|| pb::DisplayHints {
            instant_threshold: h.hints.instant_threshold,
            default_max_level: h.hints.default_max_level,
            world_bounds: h.hints.world_bounds.map(|(lo, hi)| pb::Bounds {
                min: Some(lo.into()),
                max: Some(hi.into()),
            }),
        });
        pb::Header {
            format_version: u32::from(version),
            name: h.name.clone(),
            time_unit: match h.time_unit {
                TimeUnit::EpochSeconds => pb::TimeUnit::EpochSeconds,
                TimeUnit::RelativeSeconds => pb::TimeUnit::RelativeSeconds,
            } as i32,
            world_unit: Some(h.world_unit.clone()),
            hints,
        }
    }
}

impl From<pb::Header> for Header {
    fn from(h: pb::Header) -> Self {
        let hints = h.hints.unwrap_or_default();
        Header {
            name: h.name,
            time_unit: match pb::TimeUnit::try_from(h.time_unit) {
                Ok(pb::TimeUnit::RelativeSeconds) => TimeUnit::RelativeSeconds,
                _ => TimeUnit::EpochSeconds,
            },
            world_unit: h.world_unit.unwrap_or_else(|| "mm".to_owned()),
            hints: DisplayHints {
                instant_threshold: hints.instant_threshold,
                default_max_level: hints.default_max_level,
                world_bounds: hints.world_bounds.map(|b| (vec2(b.min), vec2(b.max))),
            },
        }
    }
}

impl From<&Shape> for pb::primitive::Shape {
    fn from(s: &Shape) -> Self {
        use pb::primitive::Shape as S;
        match s {
            Shape::Circle { center, radius } => S::Circle(pb::Circle {
                center: Some((*center).into()),
                radius: *radius,
            }),
            Shape::Line { start, end } => S::Line(pb::Line {
                start: Some((*start).into()),
                end: Some((*end).into()),
            }),
            Shape::Rectangle {
                center,
                size,
                orientation,
            } => S::Rectangle(pb::Rectangle {
                center: Some((*center).into()),
                size: Some((*size).into()),
                orientation: *orientation,
            }),
            Shape::Polygon { vertices, closed } => S::Polygon(pb::Polygon {
                vertices: vertices.iter().map(|&v| v.into()).collect(),
                open: !closed,
            }),
            Shape::Text { anchor, text, size } => S::Text(pb::Text {
                anchor: Some((*anchor).into()),
                text: text.to_string(),
                size: *size,
            }),
            Shape::Point { position, kind, size } => S::Point(pb::Point {
                position: Some((*position).into()),
                kind: marker_kind(*kind),
                size: *size,
            }),
            Shape::Sector {
                center,
                inner,
                outer,
                start,
                sweep,
            } => S::Sector(pb::Sector {
                center: Some((*center).into()),
                inner: *inner,
                outer: *outer,
                start: *start,
                sweep: *sweep,
            }),
            Shape::Raised(r) => raised_to_pb(r),
            Shape::Picture(s) => (&**s).into(),
        }
    }
}

fn raised_to_pb(r: &Raised) -> pb::primitive::Shape {
    use pb::primitive::Shape as S;
    match r {
        Raised::Path { points, closed } => S::Path3(pb::Path3 {
            points: points.iter().filter_map(|&p| pb_vec3(p)).collect(),
            open: !closed,
        }),
        Raised::Circle {
            center,
            radius,
            normal,
        } => S::Circle3(pb::Circle3 {
            center: pb_vec3(*center),
            radius: *radius,
            // Bit for bit, as the fast encoder decides (a -0 is kept).
            normal: normal
                .iter()
                .zip(UP)
                .any(|(a, b)| a.to_bits() != b.to_bits())
                .then(|| pb_vec3(*normal))
                .flatten(),
        }),
        Raised::Text { anchor, text, size } => S::Text3(pb::Text3 {
            anchor: pb_vec3(*anchor),
            text: text.to_string(),
            size: *size,
        }),
        Raised::Point { position, kind, size } => S::Point3(pb::Point3 {
            position: pb_vec3(*position),
            kind: marker_kind(*kind),
            size: *size,
        }),
        Raised::Sphere { center, radius } => S::Sphere(pb::Sphere {
            center: pb_vec3(*center),
            radius: *radius,
        }),
        Raised::Cylinder { base, radius, height } => S::Cylinder(pb::Cylinder {
            base: pb_vec3(*base),
            radius: *radius,
            height: *height,
        }),
        Raised::Box {
            base,
            size,
            orientation,
        } => S::Box3(pb::Box3 {
            base: pb_vec3(*base),
            size: pb_vec3(*size),
            orientation: *orientation,
        }),
    }
}

impl From<pb::primitive::Shape> for Shape {
    fn from(s: pb::primitive::Shape) -> Self {
        use pb::primitive::Shape as S;
        match s {
            S::Circle(c) => Shape::Circle {
                center: vec2(c.center),
                radius: c.radius,
            },
            S::Line(l) => Shape::Line {
                start: vec2(l.start),
                end: vec2(l.end),
            },
            S::Rectangle(r) => Shape::Rectangle {
                center: vec2(r.center),
                size: vec2(r.size),
                orientation: r.orientation,
            },
            S::Polygon(p) => Shape::Polygon {
                vertices: p.vertices.into_iter().map(Vec2::from).collect(),
                closed: !p.open,
            },
            S::Text(t) => Shape::Text {
                anchor: vec2(t.anchor),
                text: t.text.into(),
                size: t.size,
            },
            S::Point(p) => Shape::Point {
                position: vec2(p.position),
                kind: model_marker_kind(p.kind),
                size: p.size,
            },
            S::Sector(s) => Shape::Sector {
                center: vec2(s.center),
                inner: s.inner,
                outer: s.outer,
                start: s.start,
                sweep: s.sweep,
            },
            S::Path3(p) => raised(Raised::Path {
                points: p.points.into_iter().map(|v| vec3(Some(v))).collect(),
                closed: !p.open,
            }),
            S::Circle3(c) => raised(Raised::Circle {
                center: vec3(c.center),
                radius: c.radius,
                normal: c.normal.map_or(UP, |n| vec3(Some(n))),
            }),
            S::Text3(t) => raised(Raised::Text {
                anchor: vec3(t.anchor),
                text: t.text.into(),
                size: t.size,
            }),
            S::Point3(p) => raised(Raised::Point {
                position: vec3(p.position),
                kind: model_marker_kind(p.kind),
                size: p.size,
            }),
            S::Sphere(s) => raised(Raised::Sphere {
                center: vec3(s.center),
                radius: s.radius,
            }),
            S::Cylinder(c) => raised(Raised::Cylinder {
                base: vec3(c.base),
                radius: c.radius,
                height: c.height,
            }),
            S::Box3(b) => raised(Raised::Box {
                base: vec3(b.base),
                size: vec3(b.size),
                orientation: b.orientation,
            }),
        }
    }
}

fn raised(r: Raised) -> Shape {
    Shape::Raised(Box::new(r))
}

impl From<&Primitive> for pb::Primitive {
    fn from(p: &Primitive) -> Self {
        pb::Primitive {
            shape: Some((&p.shape).into()),
            entity: p.entity.0,
            level: p.level,
            color: Some(p.style.color.0),
            fill: p.style.fill.map(|c| c.0),
            thickness: p.style.thickness,
            thickness_unit: match p.style.unit {
                ThicknessUnit::Pixels => pb::ThicknessUnit::Pixels,
                ThicknessUnit::World => pb::ThicknessUnit::World,
            } as i32,
            picture: matches!(p.shape, Shape::Picture(_)),
        }
    }
}

/// The records [`native::write`](super::native::write) writes for `log`,
/// as prost messages, in the same order.
pub fn records(log: &Log) -> Vec<pb::Record> {
    use pb::record::Kind;
    let mut out = vec![pb::Record {
        kind: Some(Kind::Header(header(&log.header, version_for(log)))),
    }];
    let entity = |id: EntityId, parents: &[EntityId]| pb::Record {
        kind: Some(Kind::Entity(pb::Entity {
            id: id.0,
            name: log.entities.name(id).to_owned(),
            parents: parents.iter().map(|p| p.0).collect(),
        })),
    };
    let mut later = Vec::new();
    for id in log.entities.ids() {
        let parents = log.entities.parents(id);
        if parents.iter().all(|p| p.0 < id.0) {
            out.push(entity(id, parents));
        } else {
            out.push(entity(id, &[]));
            later.push(id);
        }
    }
    out.extend(later.into_iter().map(|id| entity(id, log.entities.parents(id))));
    for f in &log.frames {
        let time = match f.time {
            FrameTime::Instant(t) => pb::frame::Time::Instant(t),
            FrameTime::Persistent { start, end } => pb::frame::Time::Persistent(pb::Interval { start, end }),
        };
        out.push(pb::Record {
            kind: Some(Kind::Frame(pb::Frame {
                time: Some(time),
                primitives: log.frame_primitives(f).iter().map(pb::Primitive::from).collect(),
            })),
        });
    }
    out
}

/// Encodes `log` (uncompressed, in the version
/// [`version_for`] says) with prost.
pub fn encode(log: &Log) -> Vec<u8> {
    let mut out = versioned_prefix(version_for(log), false).to_vec();
    for r in records(log) {
        // Encoding into a Vec only fails for lack of capacity, which a Vec grows.
        let _ = r.encode_length_delimited(&mut out);
    }
    out
}

/// Decodes an uncompressed native log with prost. Simpler than the fast
/// reader: a torn record is an error, and warnings are only those of
/// undrawable values.
pub fn decode(bytes: &[u8]) -> Result<Log, ReadError> {
    if bytes.len() < PREFIX_LEN
        || &bytes[..8] != MAGIC
        || !(FLOOR_VERSION..=FORMAT_VERSION).contains(&bytes[8])
        || bytes[9] != 0
    {
        return Err(ReadError::UnknownFormat(format!(
            "not an uncompressed native log of version {FLOOR_VERSION} to {FORMAT_VERSION}"
        )));
    }
    let mut log = Log::new();
    let mut warnings = Warnings::default();
    let mut ids: Vec<Option<EntityId>> = Vec::new();
    let mut header_seen = false;
    let mut frames = 0usize;
    let mut buf = &bytes[PREFIX_LEN..];
    while !buf.is_empty() {
        let offset = (bytes.len() - buf.len()) as u64;
        let record = pb::Record::decode_length_delimited(&mut buf).map_err(|e| ReadError::Corrupt {
            offset,
            frame: frames,
            message: e.to_string(),
        })?;
        use pb::record::Kind;
        match record.kind {
            Some(Kind::Header(h)) if !header_seen => {
                header_seen = true;
                log.header = h.into();
                for message in log.header.hints.drop_unusable() {
                    warnings.push(Some(Place::Byte(offset)), None, message);
                }
            }
            Some(Kind::Header(_)) | None => {}
            Some(Kind::Entity(e)) => {
                let slot = e.id as usize;
                if ids.len() <= slot {
                    ids.resize(slot + 1, None);
                }
                let child = *ids[slot].get_or_insert_with(|| log.entities.intern(&e.name));
                for p in e.parents {
                    if let Some(&Some(parent)) = ids.get(p as usize) {
                        log.entities.add_parent(child, parent);
                    }
                }
            }
            Some(Kind::Frame(f)) => {
                let start = log.primitives.len();
                for p in f.primitives {
                    let Some(shape) = p.shape else { continue };
                    let entity = match ids.get(p.entity as usize) {
                        Some(&Some(e)) => e,
                        _ => log.entities.intern(&format!("unknown/{}", p.entity)),
                    };
                    let shape: Shape = shape.into();
                    log.primitives.push(Primitive {
                        shape: if p.picture { Shape::picture(shape) } else { shape },
                        style: Style {
                            color: p.color.map_or(Rgba::WHITE, Rgba),
                            fill: p.fill.map(Rgba),
                            thickness: p.thickness,
                            unit: match pb::ThicknessUnit::try_from(p.thickness_unit) {
                                Ok(pb::ThicknessUnit::World) => ThicknessUnit::World,
                                _ => ThicknessUnit::Pixels,
                            },
                        },
                        entity,
                        level: p.level,
                    });
                }
                let time = match f.time {
                    Some(pb::frame::Time::Instant(t)) => FrameTime::Instant(t),
                    Some(pb::frame::Time::Persistent(iv)) => FrameTime::Persistent {
                        start: iv.start,
                        end: iv.end,
                    },
                    None => {
                        return Err(ReadError::Corrupt {
                            offset,
                            frame: frames,
                            message: "frame without a time".into(),
                        });
                    }
                };
                close_frame(&mut log, &mut warnings, time, start, frames, Place::Byte(offset));
                frames += 1;
            }
        }
    }
    log.warnings = warnings.finish();
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native;

    #[test]
    fn fast_encoder_writes_what_prost_writes() {
        for log in [
            crate::testutil::sample(),
            crate::testutil::sample_raised(),
            crate::testutil::sample_picture(),
        ] {
            assert_eq!(native::to_bytes(&log), encode(&log));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 500,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The hand-written encoder and decoder agree with prost on any log.
        #[test]
        fn fast_paths_agree_with_prost(log in crate::testutil::arb_log()) {
            let fast = native::to_bytes(&log);
            proptest::prop_assert_eq!(&fast, &encode(&log));
            proptest::prop_assert_eq!(&decode(&fast).unwrap(), &log);
            proptest::prop_assert_eq!(&native::read(&fast[..]).unwrap(), &log);
            // Version 3 exactly when the log has a shape in the picture's
            // pixels, else 2 exactly when it has one above the floor.
            let has = |f: fn(&Shape) -> bool| log.primitives.iter().any(|p| f(&p.shape));
            let version = if has(|s| matches!(s, Shape::Picture(_))) {
                3
            } else if has(|s| matches!(s, Shape::Raised(_))) {
                2
            } else {
                1
            };
            proptest::prop_assert_eq!(fast[8], version);
        }
    }

    #[test]
    fn prost_reads_what_the_fast_reader_reads() {
        for log in [
            crate::testutil::sample(),
            crate::testutil::sample_raised(),
            crate::testutil::sample_picture(),
        ] {
            let bytes = encode(&log);
            assert_eq!(decode(&bytes).unwrap(), log);
            assert_eq!(native::read(&bytes[..]).unwrap(), log);
        }
    }
}
