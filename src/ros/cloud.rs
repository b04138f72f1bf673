//! Foxglove's `PointCloud` as points: its packed points read through the
//! fields it declares (`x`, `y`, `z` and, when present, `red`, `green`,
//! `blue`, `alpha`), placed by its pose in its frame, drawn as a set of
//! points ([`Raised::Points`]) as a `sensor_msgs/PointCloud2` is.

use super::markers;
use super::tf::Transform;
use super::value::Struct;
use crate::log::{Raised, Rgba, Shape, Style};

/// The most points drawn of one cloud; a larger one is thinned evenly.
pub const MAX_POINTS: usize = 50_000;

/// Foxglove's `NumericType`: its size in bytes.
fn size_of(numeric_type: i64) -> Option<usize> {
    match numeric_type {
        1 | 2 => Some(1),
        3 | 4 => Some(2),
        5..=7 => Some(4),
        8 => Some(8),
        _ => None,
    }
}

/// The value of a field of `numeric_type` at the start of `b`.
fn read(numeric_type: i64, b: &[u8]) -> Option<f64> {
    let a = |n: usize| b.get(..n);
    Some(match numeric_type {
        1 => f64::from(*b.first()?),
        2 => f64::from(*b.first()? as i8),
        3 => f64::from(u16::from_le_bytes(a(2)?.try_into().ok()?)),
        4 => f64::from(i16::from_le_bytes(a(2)?.try_into().ok()?)),
        5 => f64::from(u32::from_le_bytes(a(4)?.try_into().ok()?)),
        6 => f64::from(i32::from_le_bytes(a(4)?.try_into().ok()?)),
        7 => f64::from(f32::from_le_bytes(a(4)?.try_into().ok()?)),
        8 => f64::from_le_bytes(a(8)?.try_into().ok()?),
        _ => return None,
    })
}

/// A colour from channels 0–1 (clamped).
fn unit_rgba(r: f64, g: f64, b: f64, a: f64) -> Rgba {
    let byte = |v: f64| (if v.is_finite() { v.clamp(0.0, 1.0) } else { 0.0 } * 255.0).round() as u8;
    Rgba::from_rgba8(byte(r), byte(g), byte(b), byte(a))
}

/// A field: its offset in a point and its type.
#[derive(Clone, Copy, Debug)]
struct Field {
    offset: usize,
    numeric_type: i64,
}

/// The cloud's points (thinned to [`MAX_POINTS`]) and their colours (none
/// when it has no colour fields), in its own frame; why not, when the
/// cloud cannot be read.
pub fn points(msg: &Struct<'_>) -> Result<(Vec<[f64; 3]>, Vec<Rgba>), String> {
    let stride = msg
        .path("point_stride")
        .and_then(|v| v.as_i64())
        .and_then(|v| usize::try_from(v).ok())
        .filter(|&s| s > 0)
        .ok_or("a point cloud without a point stride")?;
    let data = msg
        .get("data")
        .and_then(|v| v.as_bytes())
        .ok_or("a point cloud without data")?;
    let mut fields = std::collections::HashMap::new();
    for f in msg.array("fields").unwrap_or(&[]) {
        let Some(f) = f.as_struct() else { continue };
        let (Some(name), Some(offset), Some(numeric_type)) = (
            f.str("name"),
            f.path("offset").and_then(|v| v.as_i64()),
            f.path("type").and_then(|v| v.as_i64()),
        ) else {
            continue;
        };
        let size = size_of(numeric_type)
            .ok_or_else(|| format!("field {name}: unknown numeric type {numeric_type}"))?;
        let offset = usize::try_from(offset).map_err(|_| format!("field {name}: offset {offset}"))?;
        if offset.checked_add(size).is_none_or(|end| end > stride) {
            return Err(format!(
                "field {name} (at {offset}, {size} bytes) lies beyond the point's {stride} bytes"
            ));
        }
        fields.insert(name.to_owned(), Field { offset, numeric_type });
    }
    let (Some(&x), Some(&y)) = (fields.get("x"), fields.get("y")) else {
        return Err("a point cloud without x and y fields".into());
    };
    let z = fields.get("z").copied();
    let channels = ["red", "green", "blue", "alpha"].map(|n| fields.get(n).copied());
    let colour = channels[..3].iter().all(Option::is_some).then_some(channels);
    let count = data.len() / stride;
    let step = count.div_ceil(MAX_POINTS).max(1);
    let (mut pts, mut colours) = (Vec::new(), Vec::new());
    for i in (0..count).step_by(step) {
        let p = &data[i * stride..(i + 1) * stride];
        let at = |f: Field| read(f.numeric_type, &p[f.offset..]);
        let (Some(px), Some(py)) = (at(x), at(y)) else {
            continue;
        };
        let pz = z.and_then(at).unwrap_or(0.0);
        if !(px.is_finite() && py.is_finite() && pz.is_finite()) {
            // Clouds mark points with no return as NaN.
            continue;
        }
        pts.push([px, py, pz]);
        if let Some(c) = &colour {
            // Bytes are 0–255; floats 0–1.
            let channel = |f: Option<Field>, default: f64| {
                f.and_then(|f| at(f).map(|v| if f.numeric_type == 1 { v / 255.0 } else { v }))
                    .unwrap_or(default)
            };
            colours.push(unit_rgba(
                channel(c[0], 1.0),
                channel(c[1], 1.0),
                channel(c[2], 1.0),
                channel(c[3], 1.0),
            ));
        }
    }
    Ok((pts, colours))
}

/// What a cloud draws, in the world `world` places its frame in: a set of
/// points ([`Raised::Points`]), as a `PointCloud2` is drawn
/// ([`super::displays`]), white without colour fields.
pub fn shapes(msg: &Struct<'_>, world: &Transform, _stamp: f64) -> Result<Vec<markers::Drawn>, String> {
    let (points, colors) = points(msg)?;
    let pose = match msg.sub("pose") {
        Some(p) => markers::pose(Some(p)).ok_or("a point cloud whose pose is not a finite pose")?,
        None => Transform::IDENTITY,
    };
    if points.is_empty() {
        return Ok(Vec::new());
    }
    let to_world = world.then_after(&pose);
    let placed: Vec<[f32; 3]> = points
        .iter()
        .map(|p| to_world.apply(*p).map(|v| v as f32))
        .filter(|p| p.iter().all(|v| v.is_finite()))
        .collect();
    let colors = if colors.len() == placed.len() {
        colors
    } else {
        Vec::new()
    };
    Ok(vec![markers::Drawn {
        shape: Shape::Raised(Box::new(Raised::Points {
            points: placed.into(),
            colors: colors.into(),
            size: 0.0,
        })),
        style: Style::color(Rgba::WHITE),
        is_text: false,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::Value;
    use crate::ros::value::build::{msg as st, s, top};
    use std::borrow::Cow;

    fn field(name: &str, offset: i64, numeric_type: i64) -> Value<'static> {
        st(vec![
            ("name", s(name)),
            ("offset", Value::Int(offset)),
            ("type", Value::Int(numeric_type)),
        ])
    }

    /// Points of three float32s and RGBA bytes: 16 bytes each.
    fn cloud(points: &[([f32; 3], [u8; 4])]) -> Struct<'static> {
        let mut data = Vec::new();
        for (p, c) in points {
            for v in p {
                data.extend(v.to_le_bytes());
            }
            data.extend(c);
        }
        top(vec![
            ("frame_id", s("map")),
            ("point_stride", Value::Int(16)),
            (
                "fields",
                Value::Array(vec![
                    field("x", 0, 7),
                    field("y", 4, 7),
                    field("z", 8, 7),
                    field("red", 12, 1),
                    field("green", 13, 1),
                    field("blue", 14, 1),
                    field("alpha", 15, 1),
                ]),
            ),
            ("data", Value::Bytes(Cow::Owned(data))),
        ])
    }

    #[test]
    fn points_are_read_through_their_fields() {
        let c = cloud(&[
            ([1.0, 2.0, 0.0], [255, 0, 0, 255]),
            ([f32::NAN, 0.0, 0.0], [0, 0, 0, 255]),
            ([-1.5, 0.5, 0.7], [0, 255, 0, 128]),
        ]);
        let (pts, colours) = points(&c).unwrap();
        assert_eq!(pts, [[1.0, 2.0, 0.0], [-1.5, 0.5, 0.699999988079071]]);
        assert_eq!(colours[0], unit_rgba(1.0, 0.0, 0.0, 1.0));
        assert_eq!(colours[1], unit_rgba(0.0, 1.0, 0.0, 128.0 / 255.0));
        // One set of points, coloured one by one.
        let drawn = shapes(&c, &Transform::IDENTITY, 1.0).unwrap();
        assert_eq!(drawn.len(), 1);
        match &drawn[0].shape {
            Shape::Raised(r) => match &**r {
                Raised::Points { points, colors, .. } => {
                    assert_eq!(points.len(), 2);
                    assert_eq!(colors.len(), 2);
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_big_cloud_is_thinned_and_a_bad_one_said() {
        let many: Vec<([f32; 3], [u8; 4])> = (0..120_000)
            .map(|i| ([i as f32, 0.0, 0.0], [1, 2, 3, 4]))
            .collect();
        let (pts, _) = points(&cloud(&many)).unwrap();
        assert!(
            pts.len() <= MAX_POINTS && pts.len() > MAX_POINTS / 2,
            "{}",
            pts.len()
        );
        let mut bad = cloud(&many[..2]);
        bad.fields.retain(|(n, _)| &**n != "point_stride");
        assert!(points(&bad).unwrap_err().contains("stride"));
        let mut beyond = cloud(&many[..2]);
        for (n, v) in &mut beyond.fields {
            if &**n == "fields" {
                *v = Value::Array(vec![field("x", 0, 7), field("y", 14, 7)]);
            }
        }
        assert!(points(&beyond).unwrap_err().contains("beyond"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any bytes, stride and field layout: points or an error, never a panic.
        #[test]
        fn any_cloud_reads_or_is_refused(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            stride in 0i64..40,
            offsets in proptest::collection::vec((0i64..48, 0i64..10), 0..6),
        ) {
            let names = ["x", "y", "z", "red", "green", "blue"];
            let fields = offsets
                .iter()
                .zip(names)
                .map(|(&(o, t), n)| field(n, o, t))
                .collect();
            let c = top(vec![
                ("point_stride", Value::Int(stride)),
                ("fields", Value::Array(fields)),
                ("data", Value::Bytes(Cow::Owned(data))),
            ]);
            if let Ok(d) = shapes(&c, &Transform::IDENTITY, 0.0) {
                for d in d {
                    if let Shape::Raised(r) = &d.shape && let Raised::Points { points, .. } = &**r {
                        proptest::prop_assert!(points.len() <= MAX_POINTS);
                    }
                }
            }
        }
    }
}
