//! `nav_msgs/OccupancyGrid`, its updates (`map_msgs/OccupancyGridUpdate`,
//! as RViz's Map display takes them from the topic `<map>_updates`) and
//! `nav_msgs/GridCells` as cells on the floor ([`Cells`]): a map's cells
//! in three classes — occupied, free and unknown, by `map_server`'s rule
//! for saving a map (occupied from 65, free up to 25, anything else
//! unknown) — each class one shape whose rectangles are its runs of
//! cells merged ([`crate::log::cells::merge_rows`]), in RViz's "map"
//! colours (black, white, its grey-green for unknown) at its alpha of 0.7.
//!
//! A map keeps its cells between messages so that an update (a rectangle
//! of new values) can be applied; its rectangles are made in bands of
//! [`BAND`] rows, and an update makes anew only the bands it touches (the
//! others are shared with the version before: a map updated many times
//! costs memory for what changed). A map's plane is its origin's in the
//! world frame; one that is not level, or not at the floor, is drawn on
//! the floor all the same, and said.
//!
//! The bytes are untrusted: a map's cells must be as many as its width
//! times its height (a header claiming a billion cells over a short
//! message is refused before anything is allocated), an update must lie
//! in its map (the part outside is left out, and said).

use std::sync::Arc;

use super::markers;
use super::tf::Transform;
use super::value::{Struct, Value};
use crate::log::cells::{Rect, merge_rows};
use crate::log::{Cells, Rgba, Vec2};

/// Rows of a map whose rectangles are made together.
pub const BAND: usize = 64;

/// The classes of cells: the entity's namespace and RViz's "map" colour
/// at its alpha 0.7.
pub const CLASSES: [(&str, Rgba); 3] = [
    ("occupied", Rgba(0x0000_00b3)),
    ("free", Rgba(0xffff_ffb3)),
    ("unknown", Rgba(0x7089_86b3)),
];

/// The class of a cell's value: occupied (65 to 100), free (0 to 25),
/// unknown (anything else: -1, the values between, values out of range).
#[inline]
pub fn class(v: i8) -> u8 {
    match v {
        65..=100 => 0,
        0..=25 => 1,
        _ => 2,
    }
}

/// A map as its messages left it.
#[derive(Clone, Debug)]
pub struct Map {
    width: usize,
    height: usize,
    resolution: f64,
    /// The pose of cell (0, 0)'s corner in `frame`.
    origin: Transform,
    /// The frame its header names.
    pub frame: String,
    cells: Vec<i8>,
    /// Per band of [`BAND`] rows, the rectangles of each class.
    bands: Vec<[Arc<[Rect]>; 3]>,
}

/// The values of an `int8[]` field: its bytes, or a decoder's numbers.
fn values(msg: &Struct<'_>, name: &str) -> Option<Vec<i8>> {
    match msg.get(name)? {
        Value::Bytes(b) => Some(b.iter().map(|&v| v as i8).collect()),
        Value::Array(a) => Some(a.iter().map(|v| v.as_i64().unwrap_or(-1) as i8).collect()),
        _ => None,
    }
}

fn count(msg: &Struct<'_>, name: &str) -> Result<usize, String> {
    msg.path(name)
        .and_then(|v| v.as_i64())
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| format!("no {name}"))
}

impl Map {
    /// The map of a `nav_msgs/OccupancyGrid`.
    pub fn new(msg: &Struct<'_>) -> Result<Map, String> {
        let info = msg.sub("info").ok_or("a map without its info")?;
        let width = count(info, "width").map_err(|e| format!("a map with {e}"))?;
        let height = count(info, "height").map_err(|e| format!("a map with {e}"))?;
        let resolution = info.f64("resolution").ok_or("a map without a resolution")?;
        if !(resolution.is_finite() && resolution > 0.0) {
            return Err(format!("a map whose cells are {resolution} m wide"));
        }
        let origin = markers::pose(info.sub("origin")).ok_or("a map whose origin is not a finite pose")?;
        // Checked against what the message holds before anything is made.
        let n = msg.get("data").map_or(0, |v| match v {
            Value::Bytes(b) => b.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        });
        if width.checked_mul(height) != Some(n) {
            return Err(format!(
                "a map of {width} × {height} cells whose data holds {n} values"
            ));
        }
        let cells = values(msg, "data").ok_or("a map without data")?;
        let mut map = Map {
            width,
            height,
            resolution,
            origin,
            frame: msg.str("header.frame_id").unwrap_or("").to_owned(),
            cells,
            bands: Vec::new(),
        };
        map.bands = (0..height.div_ceil(BAND)).map(|b| map.band(b)).collect();
        Ok(map)
    }

    /// The rectangles of band `b`'s classes.
    fn band(&self, b: usize) -> [Arc<[Rect]>; 3] {
        let rows = b * BAND..((b + 1) * BAND).min(self.height);
        let (w, cells) = (self.width, &self.cells);
        let r = self.resolution;
        let lists = merge_rows(w, rows, [r, r], 3, |row, out| {
            for (o, &v) in out.iter_mut().zip(&cells[row * w..(row + 1) * w]) {
                *o = class(v);
            }
        });
        let mut it = lists.into_iter().map(Arc::from);
        let mut next = || it.next().unwrap_or_else(|| Arc::from(Vec::new()));
        [next(), next(), next()]
    }

    /// Applies a `map_msgs/OccupancyGridUpdate`; what was noticed.
    pub fn update(&mut self, msg: &Struct<'_>) -> Result<Vec<String>, String> {
        let int = |name: &str| {
            msg.path(name)
                .and_then(|v| v.as_i64())
                .ok_or_else(|| format!("a map update without {name}"))
        };
        let (x, y, w, h) = (int("x")?, int("y")?, int("width")?, int("height")?);
        let data = values(msg, "data").ok_or("a map update without data")?;
        if w < 0 || h < 0 || (w as u128) * (h as u128) != data.len() as u128 {
            return Err(format!(
                "a map update of {w} × {h} cells whose data holds {} values",
                data.len()
            ));
        }
        let mut notes = Vec::new();
        let (mw, mh) = (self.width as i64, self.height as i64);
        let (x0, y0) = (x.max(0), y.max(0));
        let (x1, y1) = (x.saturating_add(w).min(mw), y.saturating_add(h).min(mh));
        if (x0, y0, x1, y1) != (x, y, x.saturating_add(w), y.saturating_add(h)) {
            notes.push(format!(
                "a map update of {w} × {h} cells at ({x}, {y}) reaches outside the map of {mw} × {mh}: \
                 the part outside left out"
            ));
        }
        if x0 >= x1 || y0 >= y1 {
            return Ok(notes);
        }
        for row in y0..y1 {
            let src = ((row - y) * w + (x0 - x)) as usize;
            let dst = row as usize * self.width + x0 as usize;
            let n = (x1 - x0) as usize;
            self.cells[dst..dst + n].copy_from_slice(&data[src..src + n]);
        }
        for b in y0 as usize / BAND..=(y1 as usize - 1) / BAND {
            self.bands[b] = self.band(b);
        }
        Ok(notes)
    }

    /// Each class's cells, placed by `world` (the world from the map's
    /// frame), and what was noticed (a map not on the floor).
    pub fn cells(&self, world: &Transform) -> ([Option<Cells>; 3], Option<String>) {
        let placed = world.then_after(&self.origin);
        let (at, yaw, note) = on_floor(&placed, "a map");
        let make = |k: usize| {
            let parts: Vec<Arc<[Rect]>> = self.bands.iter().map(|b| Arc::clone(&b[k])).collect();
            let c = Cells::from_parts(at, yaw, parts);
            (!c.is_empty()).then_some(c)
        };
        ([make(0), make(1), make(2)], note)
    }

    /// How many cells wide and high.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }
}

/// Where a plane placed by `placed` meets the floor: its origin and turn,
/// and a note when it is not level or not at height 0.
fn on_floor(placed: &Transform, what: &str) -> (Vec2, f64, Option<String>) {
    let m = placed.matrix();
    let z = placed.translation[2];
    let tilt = m[2][2].clamp(-1.0, 1.0).acos();
    let note = (tilt > 1f64.to_radians() || z.abs() > 0.01).then(|| {
        format!(
            "{what} whose plane is {:.1}° from level at height {z:.2} is drawn on the floor",
            tilt.to_degrees()
        )
    });
    (
        Vec2::new(placed.translation[0], placed.translation[1]),
        placed.yaw(),
        note,
    )
}

/// The cells of a `nav_msgs/GridCells` in its frame, placed by `world`:
/// cells on one lattice (that of the first) merged into runs; `None`
/// without cells.
pub fn grid_cells(msg: &Struct<'_>, world: &Transform) -> Result<(Option<Cells>, Option<String>), String> {
    let cw = msg.f64("cell_width").ok_or("grid cells without a cell_width")?;
    let ch = msg.f64("cell_height").ok_or("grid cells without a cell_height")?;
    if !(cw.is_finite() && ch.is_finite() && cw > 0.0 && ch > 0.0) {
        return Err(format!("grid cells of {cw} × {ch} m"));
    }
    let centres: Vec<[f64; 3]> = msg
        .array("cells")
        .unwrap_or(&[])
        .iter()
        .filter_map(|p| {
            let p = p.as_struct()?;
            Some([p.f64("x")?, p.f64("y")?, p.f64("z").unwrap_or(0.0)])
        })
        .filter(|p| p.iter().all(|v| v.is_finite()))
        .collect();
    let Some(first) = centres.first().copied() else {
        return Ok((None, None));
    };
    // The lattice of the first cell; cells off it stand alone.
    let (ox, oy) = (first[0] - cw / 2.0, first[1] - ch / 2.0);
    let mut on = Vec::new();
    let mut alone: Vec<Rect> = Vec::new();
    for p in &centres {
        let (fi, fj) = ((p[0] - cw / 2.0 - ox) / cw, (p[1] - ch / 2.0 - oy) / ch);
        let (i, j) = (fi.round(), fj.round());
        if (fi - i).abs() < 0.01 && (fj - j).abs() < 0.01 && i.abs() < 1e9 && j.abs() < 1e9 {
            on.push((j as i64, i as i64));
        } else {
            let (x, y) = (p[0] - cw / 2.0 - ox, p[1] - ch / 2.0 - oy);
            alone.push([x as f32, y as f32, (x + cw) as f32, (y + ch) as f32]);
        }
    }
    on.sort_unstable();
    on.dedup();
    let mut rects = alone;
    if let (Some(&(j0, _)), Some(&(j1, _))) = (on.first(), on.last()) {
        let i0 = on.iter().map(|c| c.1).min().unwrap_or(0);
        let i1 = on.iter().map(|c| c.1).max().unwrap_or(0);
        let (cols, rows) = ((i1 - i0 + 1) as u64, (j1 - j0 + 1) as u64);
        if cols.saturating_mul(rows) <= 4 * on.len() as u64 + (1 << 16) {
            // Dense enough: runs merged across rows as a map's are.
            let cols = cols as usize;
            let mut k = 0;
            let merged = merge_rows(cols, 0..rows as usize, [cw, ch], 1, |row, out| {
                while k < on.len() && on[k].0 - j0 == row as i64 {
                    out[(on[k].1 - i0) as usize] = 0;
                    k += 1;
                }
            });
            let shift = |r: Rect| {
                let (dx, dy) = (i0 as f64 * cw, j0 as f64 * ch);
                [
                    (f64::from(r[0]) + dx) as f32,
                    (f64::from(r[1]) + dy) as f32,
                    (f64::from(r[2]) + dx) as f32,
                    (f64::from(r[3]) + dy) as f32,
                ]
            };
            rects.extend(merged.into_iter().flatten().map(shift));
        } else {
            // Far apart: a rectangle a cell.
            rects.extend(on.iter().map(|&(j, i)| {
                let (x, y) = (i as f64 * cw, j as f64 * ch);
                [x as f32, y as f32, (x + cw) as f32, (y + ch) as f32]
            }));
        }
    }
    let plane = Transform {
        rotation: [0.0, 0.0, 0.0, 1.0],
        translation: [ox, oy, first[2]],
    };
    let (at, yaw, note) = on_floor(&world.then_after(&plane), "grid cells");
    Ok((Some(Cells::new(at, yaw, rects)), note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::build::{f, msg as st, pose, s, top, xyz};
    use std::borrow::Cow;

    fn grid(width: i64, height: i64, data: Vec<i8>) -> Struct<'static> {
        top(vec![
            ("header", st(vec![("frame_id", s("map"))])),
            (
                "info",
                st(vec![
                    ("resolution", f(0.5)),
                    ("width", Value::UInt(width as u64)),
                    ("height", Value::UInt(height as u64)),
                    ("origin", pose(-1.0, -2.0, 0.0)),
                ]),
            ),
            (
                "data",
                Value::Bytes(Cow::Owned(data.into_iter().map(|v| v as u8).collect())),
            ),
        ])
    }

    fn rects(c: &Option<Cells>) -> Vec<Rect> {
        c.as_ref().map_or_else(Vec::new, |c| c.rects().copied().collect())
    }

    #[test]
    fn classes_follow_map_servers_rule() {
        let got: Vec<u8> = [-1i8, 0, 25, 26, 64, 65, 100, 101, -128]
            .iter()
            .map(|&v| class(v))
            .collect();
        assert_eq!(got, [2, 1, 1, 2, 2, 0, 0, 2, 2]);
    }

    #[test]
    fn a_map_is_three_shapes_of_merged_runs_and_updates_change_its_bands() {
        // 4 × 3: a wall of occupied cells along the bottom row, free above,
        // one unknown cell.
        let data = vec![100, 100, 100, 100, 0, 0, 0, -1, 0, 0, 0, 0];
        let mut map = Map::new(&grid(4, 3, data)).unwrap();
        let (c, note) = map.cells(&Transform::IDENTITY);
        assert!(note.is_none());
        assert_eq!(rects(&c[0]), [[0.0, 0.0, 2.0, 0.5]]);
        assert_eq!(rects(&c[1]), [[0.0, 0.5, 1.5, 1.0], [0.0, 1.0, 2.0, 1.5]]);
        assert_eq!(rects(&c[2]), [[1.5, 0.5, 2.0, 1.0]]);
        let occupied = c[0].as_ref().unwrap();
        assert_eq!(occupied.origin, Vec2::new(-1.0, -2.0));
        // An update turning the unknown cell free, and one reaching outside.
        let update = |x: i64, y: i64, w: i64, h: i64, v: Vec<i8>| {
            top(vec![
                ("x", Value::Int(x)),
                ("y", Value::Int(y)),
                ("width", Value::UInt(w as u64)),
                ("height", Value::UInt(h as u64)),
                (
                    "data",
                    Value::Bytes(Cow::Owned(v.into_iter().map(|v| v as u8).collect())),
                ),
            ])
        };
        assert!(map.update(&update(3, 1, 1, 1, vec![0])).unwrap().is_empty());
        let (c, _) = map.cells(&Transform::IDENTITY);
        assert!(c[2].is_none());
        assert_eq!(rects(&c[1]), [[0.0, 0.5, 2.0, 1.5]]);
        let notes = map.update(&update(3, 2, 2, 2, vec![100; 4])).unwrap();
        assert!(notes[0].contains("outside the map"), "{notes:?}");
        let (c, _) = map.cells(&Transform::IDENTITY);
        assert_eq!(rects(&c[0]), [[0.0, 0.0, 2.0, 0.5], [1.5, 1.0, 2.0, 1.5]]);
        assert!(
            map.update(&update(0, 0, 2, 2, vec![0; 3]))
                .unwrap_err()
                .contains("holds 3")
        );
    }

    #[test]
    fn a_huge_header_over_little_data_is_refused_before_anything_is_made() {
        let e = Map::new(&grid(1_000_000_000, 1, vec![0; 8])).unwrap_err();
        assert!(e.contains("1000000000 × 1 cells whose data holds 8"), "{e}");
        let e = Map::new(&grid(1 << 32, 1 << 32, vec![])).unwrap_err();
        assert!(e.contains("whose data holds 0"), "{e}");
        let mut bad = grid(1, 1, vec![0]);
        if let Some(Value::Struct(info)) = bad.fields.iter_mut().find(|f| &*f.0 == "info").map(|f| &mut f.1) {
            info.fields.retain(|f| &*f.0 != "resolution");
            info.fields.push((Arc::from("resolution"), f(f64::NAN)));
        }
        assert!(Map::new(&bad).unwrap_err().contains("NaN m wide"));
    }

    #[test]
    fn bands_are_shared_between_versions() {
        let data = vec![0i8; 8 * 200];
        let mut map = Map::new(&grid(8, 200, data)).unwrap();
        let before = map.bands.clone();
        let one = top(vec![
            ("x", Value::Int(0)),
            ("y", Value::Int(150)),
            ("width", Value::UInt(1)),
            ("height", Value::UInt(1)),
            ("data", Value::Bytes(Cow::Owned(vec![100]))),
        ]);
        map.update(&one).unwrap();
        for (b, (old, new)) in before.iter().zip(&map.bands).enumerate() {
            assert_eq!(Arc::ptr_eq(&old[1], &new[1]), b != 150 / BAND, "band {b}");
        }
    }

    #[test]
    fn grid_cells_merge_on_their_lattice() {
        let cells = |pts: &[(f64, f64)]| {
            top(vec![
                ("header", st(vec![("frame_id", s("map"))])),
                ("cell_width", f(0.1)),
                ("cell_height", f(0.1)),
                (
                    "cells",
                    Value::Array(pts.iter().map(|&(x, y)| xyz(x, y, 0.0)).collect()),
                ),
            ])
        };
        let (c, note) = grid_cells(
            &cells(&[(1.05, 2.05), (1.15, 2.05), (1.25, 2.05), (1.333, 2.05)]),
            &Transform::IDENTITY,
        )
        .unwrap();
        assert!(note.is_none());
        let c = c.unwrap();
        // The three on the lattice in one run; the fourth alone.
        assert_eq!(c.len(), 2);
        let (lo, hi) = c.extent().unwrap();
        assert!(
            (lo - Vec2::new(1.0, 2.0)).length() < 1e-6 && (hi - Vec2::new(1.383, 2.1)).length() < 1e-6,
            "{lo:?} {hi:?}"
        );
        assert!(grid_cells(&cells(&[]), &Transform::IDENTITY).unwrap().0.is_none());
        // Far apart: one each, not a dense grid of billions.
        let (c, _) = grid_cells(
            &cells(&[(0.05, 0.05), (1e6 + 0.05, 1e6 + 0.05)]),
            &Transform::IDENTITY,
        )
        .unwrap();
        assert_eq!(c.unwrap().len(), 2);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any header and data: a map or a reason, and any update after it
        /// applied or refused, never a panic.
        #[test]
        fn any_map_and_update_is_read_or_refused(
            w in 0i64..40,
            h in 0i64..40,
            data in proptest::collection::vec(proptest::prelude::any::<i8>(), 0..900),
            ux in -50i64..50,
            uy in -50i64..50,
            uw in 0i64..50,
            uh in 0i64..50,
            udata in proptest::collection::vec(proptest::prelude::any::<i8>(), 0..300),
        ) {
            if let Ok(mut map) = Map::new(&grid(w, h, data)) {
                let u = top(vec![
                    ("x", Value::Int(ux)),
                    ("y", Value::Int(uy)),
                    ("width", Value::UInt(uw as u64)),
                    ("height", Value::UInt(uh as u64)),
                    ("data", Value::Bytes(Cow::Owned(udata.into_iter().map(|v| v as u8).collect()))),
                ]);
                let _ = map.update(&u);
                let (c, _) = map.cells(&Transform::IDENTITY);
                let total: usize = c.iter().flatten().map(|c| c.len()).sum();
                proptest::prop_assert!(total <= (w * h) as usize);
            }
        }
    }
}
