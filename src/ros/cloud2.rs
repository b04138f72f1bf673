//! `sensor_msgs/PointCloud2` as points, as RViz's PointCloud2 display
//! reads one: `x`, `y` and `z` of any datatype at any offset (little or
//! big endian, `is_bigendian`), organised clouds (rows of `row_step`
//! bytes) and unorganised ones alike; colours from an `rgb` or `rgba`
//! field (PCL's packing: a 32-bit value `0x00RRGGBB`, or `0xAARRGGBB`
//! for `rgba`, often stored in a float's bits), or, when asked, from
//! `intensity` through RViz's rainbow over the cloud's own range;
//! otherwise one flat colour. Points that are not finite (no return) are
//! passed over.
//!
//! The bytes are untrusted: every field must lie within a point, the
//! points read are those the data holds (a cloud whose `width × height ×
//! point_step` the data does not cover is read as far as it goes, and
//! said), and a cloud is thinned evenly to a bound given by the caller
//! (said too), so a message never makes more than that many points.

use super::value::Struct;
use crate::log::Rgba;

/// What a cloud gave: its points in its frame, a colour each (none for
/// the flat colour), and what was noticed (thinned, cut short).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Points {
    pub points: Vec<[f32; 3]>,
    pub colors: Vec<Rgba>,
    /// How many points the message declares.
    pub declared: u64,
    pub notes: Vec<String>,
}

/// `sensor_msgs/PointField` datatypes: their size in bytes.
fn size_of(datatype: i64) -> Option<usize> {
    match datatype {
        1 | 2 => Some(1),
        3 | 4 => Some(2),
        5..=7 => Some(4),
        8 => Some(8),
        _ => None,
    }
}

/// A field of a point: where it is and what it holds.
#[derive(Clone, Copy, Debug)]
struct Field {
    offset: usize,
    datatype: i64,
}

impl Field {
    /// Its value in the point `p` (which holds it: checked when the
    /// fields were read).
    #[inline]
    fn value(self, p: &[u8], big: bool) -> f64 {
        let b = &p[self.offset..];
        macro_rules! num {
            ($t:ty, $n:expr) => {{
                let a: [u8; $n] = b[..$n].try_into().unwrap_or([0; $n]);
                if big {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }};
        }
        match self.datatype {
            1 => f64::from(b[0] as i8),
            2 => f64::from(b[0]),
            3 => f64::from(num!(i16, 2)),
            4 => f64::from(num!(u16, 2)),
            5 => f64::from(num!(i32, 4)),
            6 => f64::from(num!(u32, 4)),
            7 => f64::from(num!(f32, 4)),
            _ => num!(f64, 8),
        }
    }

    /// Its 32 bits (a packed colour), when it has four bytes.
    #[inline]
    fn bits(self, p: &[u8], big: bool) -> Option<u32> {
        if size_of(self.datatype) != Some(4) {
            return None;
        }
        let a: [u8; 4] = p[self.offset..self.offset + 4].try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }
}

/// A number field of the message as a `usize` (`None` when absent or
/// negative).
fn count(msg: &Struct<'_>, name: &str) -> Option<u64> {
    msg.path(name)
        .and_then(|v| v.as_i64())
        .and_then(|v| u64::try_from(v).ok())
}

/// RViz's rainbow for a value from 0 to 1 (its Intensity transformer's
/// "Use rainbow"): magenta through blue, cyan, green and yellow to red.
pub fn rainbow(v: f64) -> Rgba {
    let v = if v.is_finite() { v.clamp(0.0, 1.0) } else { 0.0 };
    let h = v * 5.0 + 1.0;
    let i = h.floor();
    let mut f = h - i;
    if (i as i64) % 2 == 0 {
        f = 1.0 - f;
    }
    let n = 1.0 - f;
    let (r, g, b) = match i as i64 {
        ..=1 => (n, 0.0, 1.0),
        2 => (0.0, n, 1.0),
        3 => (0.0, 1.0, n),
        4 => (n, 1.0, 0.0),
        _ => (1.0, n, 0.0),
    };
    let byte = |c: f64| (c * 255.0).round() as u8;
    Rgba::from_rgba8(byte(r), byte(g), byte(b), 255)
}

/// Colours for values by RViz's rainbow over their own range (one value:
/// the rainbow's low end).
pub fn intensity_colours(values: &[f64]) -> Vec<Rgba> {
    let (lo, hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let span = hi - lo;
    values
        .iter()
        .map(|&v| rainbow(if span > 0.0 { (v - lo) / span } else { 0.0 }))
        .collect()
}

/// The points of a `sensor_msgs/PointCloud2`, at most `bound` of them
/// (thinned evenly), coloured from `rgb`/`rgba`, or from `intensity` when
/// `intensity` is asked for (and the cloud has it); why not, when the
/// message cannot be read as a cloud.
pub fn points(msg: &Struct<'_>, bound: usize, intensity: bool) -> Result<Points, String> {
    let width = count(msg, "width").ok_or("a point cloud without a width")?;
    let height = count(msg, "height").ok_or("a point cloud without a height")?;
    let step = count(msg, "point_step").ok_or("a point cloud without a point_step")?;
    let row_step = count(msg, "row_step").unwrap_or(0);
    let big = msg.path("is_bigendian").and_then(|v| v.as_i64()).unwrap_or(0) != 0;
    let data = msg
        .get("data")
        .and_then(|v| v.as_bytes())
        .ok_or("a point cloud without data")?;
    if step == 0 {
        return Err("a point cloud whose points take 0 bytes (point_step 0)".into());
    }
    let step_us = usize::try_from(step).map_err(|_| format!("point_step {step} is too large"))?;
    let mut fields = std::collections::HashMap::new();
    for f in msg.array("fields").unwrap_or(&[]) {
        let Some(f) = f.as_struct() else { continue };
        let (Some(name), Some(offset), Some(datatype)) = (
            f.str("name"),
            f.path("offset").and_then(|v| v.as_i64()),
            f.path("datatype").and_then(|v| v.as_i64()),
        ) else {
            continue;
        };
        let Some(size) = size_of(datatype) else {
            if matches!(name, "x" | "y" | "z") {
                return Err(format!("field {name}: unknown datatype {datatype}"));
            }
            continue;
        };
        let offset = usize::try_from(offset).map_err(|_| format!("field {name}: offset {offset}"))?;
        if offset.checked_add(size).is_none_or(|end| end > step_us) {
            return Err(format!(
                "field {name} (at byte {offset}, {size} bytes) lies beyond the point's {step} bytes"
            ));
        }
        fields.insert(name.to_owned(), Field { offset, datatype });
    }
    let (Some(&x), Some(&y)) = (fields.get("x"), fields.get("y")) else {
        return Err("a point cloud without x and y fields".into());
    };
    let z = fields.get("z").copied();
    let declared = width.saturating_mul(height);
    let mut out = Points {
        declared,
        ..Points::default()
    };
    if declared == 0 {
        return Ok(out);
    }
    // Rows of `row_step` bytes (one row when unorganised), each of
    // `width` points; a row_step smaller than its points' bytes is the
    // points' bytes (as packed clouds are written).
    let row_bytes = width.saturating_mul(step);
    let row_step = row_step.max(row_bytes);
    let len = data.len() as u64;
    let full_rows = (len / row_step).min(height);
    let partial = if full_rows < height {
        ((len - full_rows * row_step) / step).min(width)
    } else {
        0
    };
    let available = full_rows * width + partial;
    if available < declared {
        out.notes.push(format!(
            "a point cloud of {width} × {height} points of {step} bytes whose data ({len} bytes) holds {available}: \
             the rest left out"
        ));
    }
    let bound = bound.max(1) as u64;
    let every = available.div_ceil(bound).max(1);
    if every > 1 {
        out.notes.push(format!(
            "a point cloud of {available} points thinned to every {every}th ({} points at most)",
            available.div_ceil(every)
        ));
    }
    // The colour source.
    let packed = ["rgba", "rgb"]
        .into_iter()
        .find_map(|n| Some((n == "rgba", *fields.get(n)?)));
    let by_intensity = if intensity {
        fields.get("intensity").copied()
    } else {
        None
    };
    let mut values = Vec::new();
    let cap = available.div_ceil(every) as usize;
    out.points.reserve(cap);
    let mut i = 0u64;
    while i < available {
        let (row, col) = (i / width, i % width);
        // In range: row < height and the row's bytes are in the data.
        let at = (row * row_step + col * step) as usize;
        let p = &data[at..at + step_us];
        let (px, py) = (x.value(p, big), y.value(p, big));
        let pz = z.map_or(0.0, |z| z.value(p, big));
        i += every;
        if !(px.is_finite() && py.is_finite() && pz.is_finite()) {
            continue;
        }
        let (fx, fy, fz) = (px as f32, py as f32, pz as f32);
        if !(fx.is_finite() && fy.is_finite() && fz.is_finite()) {
            continue;
        }
        out.points.push([fx, fy, fz]);
        if let Some(f) = by_intensity {
            values.push(f.value(p, big));
        } else if let Some((alpha, f)) = packed
            && let Some(v) = f.bits(p, big)
        {
            let a = if alpha { (v >> 24) as u8 } else { 255 };
            out.colors
                .push(Rgba::from_rgba8((v >> 16) as u8, (v >> 8) as u8, v as u8, a));
        }
    }
    if by_intensity.is_some() {
        out.colors = intensity_colours(&values);
    }
    if out.colors.len() != out.points.len() {
        out.colors.clear();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::Value;
    use crate::ros::value::build::{msg as st, s, top};
    use std::borrow::Cow;

    fn field(name: &str, offset: i64, datatype: i64) -> Value<'static> {
        st(vec![
            ("name", s(name)),
            ("offset", Value::Int(offset)),
            ("datatype", Value::Int(datatype)),
            ("count", Value::Int(1)),
        ])
    }

    fn cloud(
        width: i64,
        height: i64,
        step: i64,
        row_step: i64,
        big: bool,
        fields: Vec<Value<'static>>,
        data: Vec<u8>,
    ) -> Struct<'static> {
        top(vec![
            ("height", Value::Int(height)),
            ("width", Value::Int(width)),
            ("fields", Value::Array(fields)),
            ("is_bigendian", Value::Bool(big)),
            ("point_step", Value::Int(step)),
            ("row_step", Value::Int(row_step)),
            ("data", Value::Bytes(Cow::Owned(data))),
            ("is_dense", Value::Bool(false)),
        ])
    }

    #[test]
    fn any_datatype_and_offset_either_endianness() {
        // x float64 at 8, y int16 at 2, z uint8 at 0, 16 bytes a point.
        for big in [false, true] {
            let mut data = Vec::new();
            for (xv, yv, zv) in [(1.5f64, -300i16, 7u8), (-2.25, 12, 255)] {
                let mut p = [0u8; 16];
                p[0] = zv;
                p[2..4].copy_from_slice(&if big { yv.to_be_bytes() } else { yv.to_le_bytes() });
                p[8..16].copy_from_slice(&if big { xv.to_be_bytes() } else { xv.to_le_bytes() });
                data.extend(p);
            }
            let c = cloud(
                2,
                1,
                16,
                32,
                big,
                vec![field("x", 8, 8), field("y", 2, 3), field("z", 0, 2)],
                data,
            );
            let got = points(&c, 100, false).unwrap();
            assert_eq!(
                got.points,
                [[1.5, -300.0, 7.0], [-2.25, 12.0, 255.0]],
                "big {big}"
            );
            assert!(got.colors.is_empty() && got.notes.is_empty());
        }
    }

    /// An organised cloud of 2 rows of 3 points with padding after each
    /// row, `rgb` in a float's bits and `rgba` in a uint32.
    #[test]
    fn organised_rows_and_packed_colours() {
        let pt = |x: f32, y: f32, colour: u32| {
            let mut v = Vec::new();
            v.extend(x.to_le_bytes());
            v.extend(y.to_le_bytes());
            v.extend(0.5f32.to_le_bytes());
            v.extend(colour.to_le_bytes());
            v
        };
        for (name, datatype, alpha) in [("rgb", 7, false), ("rgba", 6, true)] {
            let mut data = Vec::new();
            for row in 0..2 {
                for col in 0..3 {
                    data.extend(pt(col as f32, row as f32, 0x80_ff_40_20 + col));
                }
                data.extend([0xee; 8]);
            }
            let c = cloud(
                3,
                2,
                16,
                56,
                false,
                vec![
                    field("x", 0, 7),
                    field("y", 4, 7),
                    field("z", 8, 7),
                    field(name, 12, datatype),
                ],
                data,
            );
            let got = points(&c, 100, false).unwrap();
            assert_eq!(got.points.len(), 6);
            assert_eq!(got.points[4], [1.0, 1.0, 0.5]);
            let a = if alpha { 0x80 } else { 255 };
            assert_eq!(got.colors[1], Rgba::from_rgba8(0xff, 0x40, 0x21, a), "{name}");
        }
    }

    #[test]
    fn short_data_thinning_nan_and_intensity() {
        // 10 points of x, y, intensity; data for 7 and a half.
        let mut data = Vec::new();
        for i in 0..10 {
            let x = if i == 3 { f32::NAN } else { i as f32 };
            for v in [x, 0.0, i as f32 * 10.0] {
                data.extend(v.to_le_bytes());
            }
        }
        data.truncate(7 * 12 + 6);
        let c = cloud(
            10,
            1,
            12,
            120,
            false,
            vec![field("x", 0, 7), field("y", 4, 7), field("intensity", 8, 7)],
            data,
        );
        let got = points(&c, 100, false).unwrap();
        assert_eq!(got.points.len(), 6, "7 read, one NaN");
        assert!(got.notes[0].contains("holds 7"), "{:?}", got.notes);
        assert!(got.colors.is_empty());
        let got = points(&c, 3, true).unwrap();
        // Every 3rd of 7: points 0, 3 (NaN), 6.
        assert_eq!(got.points, [[0.0, 0.0, 0.0], [6.0, 0.0, 0.0]]);
        assert!(got.notes[1].contains("thinned to every 3th"), "{:?}", got.notes);
        assert_eq!(got.colors, [rainbow(0.0), rainbow(1.0)]);
        assert_eq!(rainbow(0.0), Rgba::from_rgba8(255, 0, 255, 255));
        assert_eq!(rainbow(0.2), Rgba::from_rgba8(0, 0, 255, 255));
        assert_eq!(rainbow(1.0), Rgba::from_rgba8(255, 0, 0, 255));
        assert_eq!(rainbow(0.6), Rgba::from_rgba8(0, 255, 0, 255));
    }

    #[test]
    fn what_cannot_be_read_is_said() {
        let f = || vec![field("x", 0, 7), field("y", 4, 7)];
        let e = points(&cloud(1, 1, 0, 0, false, f(), vec![0; 8]), 10, false).unwrap_err();
        assert!(e.contains("point_step 0"), "{e}");
        let e = points(&cloud(1, 1, 6, 6, false, f(), vec![0; 8]), 10, false).unwrap_err();
        assert!(
            e.contains("field y (at byte 4, 4 bytes) lies beyond the point's 6 bytes"),
            "{e}"
        );
        let e = points(
            &cloud(1, 1, 8, 8, false, vec![field("x", 0, 7)], vec![0; 8]),
            10,
            false,
        )
        .unwrap_err();
        assert!(e.contains("without x and y"), "{e}");
        let e = points(
            &cloud(
                1,
                1,
                8,
                8,
                false,
                vec![field("x", 0, 9), field("y", 4, 7)],
                vec![0; 8],
            ),
            10,
            false,
        )
        .unwrap_err();
        assert!(e.contains("unknown datatype 9"), "{e}");
        // A header claiming 4 billion × 4 billion points over 8 bytes: one point.
        let got = points(
            &cloud(u32::MAX.into(), u32::MAX.into(), 8, 0, false, f(), vec![0; 8]),
            10,
            false,
        )
        .unwrap();
        assert_eq!(got.points.len(), 1);
        assert!(got.notes[0].contains("holds 1"), "{:?}", got.notes);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any sizes, fields and bytes: points (no more than the bound,
        /// all finite, a colour each or none) or a reason, never a panic.
        #[test]
        fn any_cloud_reads_or_is_refused(
            width in 0i64..70_000,
            height in 0i64..70_000,
            step in 0i64..40,
            row_step in 0i64..200,
            big in proptest::prelude::any::<bool>(),
            offsets in proptest::collection::vec((0i64..48, 0i64..10), 0..6),
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            bound in 1usize..50,
            intensity in proptest::prelude::any::<bool>(),
        ) {
            let names = ["x", "y", "z", "rgb", "intensity", "rgba"];
            let fields = offsets.iter().zip(names).map(|(&(o, t), n)| field(n, o, t)).collect();
            let c = cloud(width, height, step, row_step, big, fields, data);
            if let Ok(p) = points(&c, bound, intensity) {
                proptest::prop_assert!(p.points.len() <= bound);
                proptest::prop_assert!(p.points.iter().flatten().all(|v| v.is_finite()));
                proptest::prop_assert!(p.colors.is_empty() || p.colors.len() == p.points.len());
            }
        }
    }
}
