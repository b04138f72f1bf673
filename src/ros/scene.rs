//! Foxglove's `SceneUpdate` (`foxglove_msgs/msg/SceneUpdate`): scene
//! entities of arrows, cubes, spheres, cylinders, lines, triangles and
//! texts, each entity living as a marker does ([`super::markers::Lives`]):
//! from its timestamp until an entity of the same id replaces it, a
//! deletion removes it (by id, or all), or its lifetime runs out. Each
//! primitive becomes a marker [`Spec`] in the entity's frame, so it is
//! drawn exactly as the RViz marker of the same shape.

use std::sync::Arc;

use super::markers::{self, Drawn, Key, Life, Lives, Spec, kind};
use super::tf::Transform;
use super::value::{Struct, Value};
use crate::log::Rgba;

/// A deletion of every entity (`SceneEntityDeletion.type`).
const DELETE_ALL: i64 = 1;

/// A `builtin_interfaces/Time` field in seconds (`None` for 0).
fn time(s: &Struct<'_>, field: &str) -> Option<f64> {
    let v = s.seconds(field)?;
    (v > 0.0 && v.is_finite()).then_some(v)
}

fn points(s: &Struct<'_>, field: &str) -> Vec<[f64; 3]> {
    s.array(field)
        .unwrap_or(&[])
        .iter()
        .filter_map(|p| {
            let p = p.as_struct()?;
            Some([p.f64("x")?, p.f64("y")?, p.f64("z")?])
        })
        .filter(|p| p.iter().all(|v| v.is_finite()))
        .collect()
}

fn colours(s: &Struct<'_>) -> Vec<Rgba> {
    s.array("colors")
        .unwrap_or(&[])
        .iter()
        .filter_map(|c| markers::color(c.as_struct()))
        .collect()
}

/// Points of a line or triangle list taken by `indices` when it has them.
fn indexed(s: &Struct<'_>, pts: Vec<[f64; 3]>) -> Vec<[f64; 3]> {
    let Some(idx) = s.array("indices").filter(|i| !i.is_empty()) else {
        return pts;
    };
    idx.iter()
        .filter_map(Value::as_i64)
        .filter_map(|i| usize::try_from(i).ok().and_then(|i| pts.get(i).copied()))
        .collect()
}

/// The marker specs of one scene entity's primitives, in `frame`.
fn specs(entity: &Struct<'_>, frame: &str) -> Vec<Spec> {
    let mut out = Vec::new();
    let base = |kind: i64, p: &Struct<'_>| -> Option<Spec> {
        Some(Spec {
            kind,
            pose: markers::pose(p.sub("pose"))?,
            scale: [0.0; 3],
            color: markers::color(p.sub("color")).unwrap_or(Rgba::WHITE),
            points: Vec::new(),
            colors: Vec::new(),
            text: "".into(),
            frame: frame.to_owned(),
            locked: false,
            lifetime: 0.0,
            stamp: None,
        })
    };
    let each = |field: &str| -> Vec<&Struct<'_>> {
        entity
            .array(field)
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_struct)
            .collect()
    };
    for a in each("arrows") {
        if let Some(mut s) = base(kind::ARROW, a) {
            let len = a.f64("shaft_length").unwrap_or(0.0) + a.f64("head_length").unwrap_or(0.0);
            let d = a.f64("head_diameter").unwrap_or(0.0);
            s.scale = [len, d / 2.0, d];
            out.push(s);
        }
    }
    for (field, k) in [
        ("cubes", kind::CUBE),
        ("spheres", kind::SPHERE),
        ("cylinders", kind::CYLINDER),
    ] {
        for c in each(field) {
            if let Some(mut s) = base(k, c) {
                let size = c.sub("size");
                s.scale = [0, 1, 2].map(|i| size.and_then(|v| v.f64(["x", "y", "z"][i])).unwrap_or(0.0));
                out.push(s);
            }
        }
    }
    for l in each("lines") {
        if let Some(mut s) = base(kind::LINE_STRIP, l) {
            let mut pts = indexed(l, points(l, "points"));
            match l.path("type").and_then(Value::as_i64) {
                // A loop closes on its first point.
                Some(1) => {
                    if let Some(first) = pts.first().copied() {
                        pts.push(first);
                    }
                }
                Some(2) => s.kind = kind::LINE_LIST,
                _ => {}
            }
            s.scale = [l.f64("thickness").unwrap_or(0.0), 0.0, 0.0];
            s.points = pts;
            s.colors = colours(l);
            out.push(s);
        }
    }
    for t in each("triangles") {
        if let Some(mut s) = base(kind::TRIANGLE_LIST, t) {
            s.points = indexed(t, points(t, "points"));
            s.colors = colours(t);
            out.push(s);
        }
    }
    for t in each("texts") {
        if let Some(mut s) = base(kind::TEXT_VIEW_FACING, t) {
            s.scale = [0.0, 0.0, t.f64("font_size").unwrap_or(0.0)];
            s.text = t.str("text").unwrap_or("").into();
            out.push(s);
        }
    }
    out
}

/// One `SceneUpdate` applied to its topic's entities: deletions first,
/// then the entities it adds, `world` placing a frame in the world at a
/// time. Returns the problems met (the rest is applied).
pub fn apply(
    lives: &mut Lives,
    msg: &Struct<'_>,
    now: f64,
    world: &dyn Fn(&str, f64) -> Result<Transform, String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for d in msg
        .array("deletions")
        .unwrap_or(&[])
        .iter()
        .filter_map(Value::as_struct)
    {
        let t = time(d, "timestamp").unwrap_or(now);
        if d.path("type").and_then(Value::as_i64) == Some(DELETE_ALL) {
            lives.end_all("", t);
        } else {
            lives.end(&key(d), t);
        }
    }
    for e in msg
        .array("entities")
        .unwrap_or(&[])
        .iter()
        .filter_map(Value::as_struct)
    {
        let t = time(e, "timestamp").unwrap_or(now);
        let frame = e.str("frame_id").unwrap_or("").to_owned();
        let lifetime = markers::duration(e, "lifetime");
        let locked = e.path("frame_locked").and_then(Value::as_i64).unwrap_or(0) != 0;
        let key = key(e);
        let w = match world(&frame, t) {
            Ok(w) => w,
            Err(why) => {
                problems.push(why);
                continue;
            }
        };
        let mut shapes: Vec<Drawn> = Vec::new();
        let specs = specs(e, &frame);
        for s in &specs {
            match markers::shapes(s, &w) {
                Ok(d) => shapes.extend(d),
                Err(why) => problems.push(why),
            }
        }
        // A locked entity follows its frame: its primitives' specs, kept.
        let locked = (locked && !specs.is_empty()).then(|| Arc::from(specs));
        lives.add(key, Life::shown_for(t, lifetime, shapes, locked));
    }
    problems
}

/// An entity's key: its id as the namespace (the entity's name in the
/// log is the topic, then the id).
fn key(e: &Struct<'_>) -> Key {
    (Arc::from(e.str("id").unwrap_or("")), 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Raised, Shape};

    use crate::ros::value::build::{f, msg as v, pose, s, time, top, xyz};

    fn colour() -> Value<'static> {
        crate::ros::value::build::colour(0.0, 1.0, 0.0)
    }

    fn entity(id: &str, t: f64, lifetime: f64) -> Value<'static> {
        let cube = v(vec![
            ("pose", pose(1.0, 2.0, 0.25)),
            ("size", xyz(0.5, 0.5, 0.5)),
            ("color", colour()),
        ]);
        let line = v(vec![
            ("type", Value::UInt(1)),
            ("pose", pose(0.0, 0.0, 0.0)),
            ("thickness", f(0.05)),
            ("scale_invariant", Value::Bool(false)),
            (
                "points",
                Value::Array(vec![xyz(0.0, 0.0, 0.0), xyz(1.0, 0.0, 0.0), xyz(1.0, 1.0, 0.0)]),
            ),
            ("color", colour()),
            ("colors", Value::Array(vec![])),
            ("indices", Value::Array(vec![])),
        ]);
        let text = v(vec![
            ("pose", pose(0.0, 0.0, 1.0)),
            ("font_size", f(0.2)),
            ("color", colour()),
            ("text", s("hello")),
        ]);
        v(vec![
            ("timestamp", time(t)),
            ("frame_id", s("map")),
            ("id", s(id)),
            ("lifetime", time(lifetime)),
            ("frame_locked", Value::Bool(false)),
            ("cubes", Value::Array(vec![cube])),
            ("lines", Value::Array(vec![line])),
            ("texts", Value::Array(vec![text])),
        ])
    }

    fn update(entities: Vec<Value<'static>>, deletions: Vec<Value<'static>>) -> Struct<'static> {
        top(vec![
            ("deletions", Value::Array(deletions)),
            ("entities", Value::Array(entities)),
        ])
    }

    fn deletion(t: f64, kind: u64, id: &str) -> Value<'static> {
        v(vec![
            ("timestamp", time(t)),
            ("type", Value::UInt(kind)),
            ("id", s(id)),
        ])
    }

    #[test]
    fn scene_entities_live_and_are_drawn_as_markers() {
        let world = |_: &str, _: f64| Ok(Transform::IDENTITY);
        let mut lives = Lives::default();
        assert!(
            apply(
                &mut lives,
                &update(vec![entity("a", 1.0, 0.0), entity("b", 1.0, 0.5)], vec![]),
                1.0,
                &world
            )
            .is_empty()
        );
        assert!(
            apply(
                &mut lives,
                &update(vec![], vec![deletion(3.0, 0, "a")]),
                3.0,
                &world
            )
            .is_empty()
        );
        assert!(
            apply(
                &mut lives,
                &update(vec![entity("a", 4.0, 0.0), entity("c", 4.0, 0.0)], vec![]),
                4.0,
                &world
            )
            .is_empty()
        );
        assert!(
            apply(
                &mut lives,
                &update(vec![], vec![deletion(6.0, 1, "")]),
                6.0,
                &world
            )
            .is_empty()
        );
        lives.finish();
        let mut got: Vec<(String, f64, f64)> = lives
            .ended
            .iter()
            .map(|e| (e.key.0.to_string(), e.start, (e.end * 1e6).round() / 1e6))
            .collect();
        got.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        assert_eq!(
            got,
            [
                ("a".to_owned(), 1.0, 3.0),
                ("b".to_owned(), 1.0, 1.5),
                ("a".to_owned(), 4.0, 6.0),
                ("c".to_owned(), 4.0, 6.0)
            ]
        );
        // The cube, the closed loop on the floor, the text above it.
        let shapes: Vec<&Shape> = lives.ended[0].life.shapes.iter().map(|d| &d.shape).collect();
        assert!(
            matches!(shapes[0], Shape::Raised(r) if matches!(**r, Raised::Box { base, .. } if base == [1.0, 2.0, 0.0])),
            "{shapes:?}"
        );
        assert!(
            matches!(shapes[1], Shape::Polygon { vertices, closed: false } if vertices.len() == 4 && vertices[0] == vertices[3]),
            "{shapes:?}"
        );
        assert!(
            matches!(shapes[2], Shape::Raised(r) if matches!(**r, Raised::Text { .. })),
            "{shapes:?}"
        );
        // A frame no transform names is said, the rest applied.
        let nowhere = |f: &str, _: f64| {
            if f == "map" {
                Err("no transform names `map`".to_owned())
            } else {
                Ok(Transform::IDENTITY)
            }
        };
        let mut lives = Lives::default();
        let problems = apply(
            &mut lives,
            &update(vec![entity("x", 1.0, 0.0)], vec![]),
            1.0,
            &nowhere,
        );
        assert_eq!(problems, ["no transform names `map`"]);
    }

    /// A `frame_locked` entity of several primitives follows its frame
    /// whole: every primitive moves with each change of the transforms.
    #[test]
    fn a_locked_entity_of_several_primitives_follows_its_frame() {
        let mut tf = crate::ros::tf::TfTree::default();
        // The robot drives along x at 1 m/s from 0 to 2 s.
        for i in 0..=4 {
            let t = i as f64 * 0.5;
            tf.add(
                "map",
                "robot",
                t,
                Transform::new([0.0, 0.0, 0.0, 1.0], [t, 0.0, 0.0]).unwrap(),
                false,
            );
        }
        tf.finish();
        let mut e = entity("bot", 0.5, 1.0);
        if let Value::Struct(st) = &mut e {
            for (n, v) in &mut st.fields {
                match &**n {
                    "frame_locked" => *v = Value::Bool(true),
                    "frame_id" => *v = s("robot"),
                    _ => {}
                }
            }
        }
        let world = |frame: &str, t: f64| tf.lookup("map", frame, t).map_err(|e| e.to_string());
        let mut lives = Lives::default();
        assert!(apply(&mut lives, &update(vec![e], vec![]), 0.5, &world).is_empty());
        lives.finish();
        let ended = &lives.ended[0];
        let specs = ended.life.locked.as_ref().expect("kept to follow its frame");
        assert_eq!(specs.len(), 3, "the cube, the line and the text");
        let pieces = markers::locked_pieces(&tf, "map", specs, ended.start, ended.end);
        assert_eq!(pieces.len(), 2);
        // Each piece has every primitive, moved by the robot's 0.5 m.
        let xs = |shapes: &[Drawn]| -> Vec<f64> {
            shapes
                .iter()
                .map(|d| match &d.shape {
                    crate::log::Shape::Raised(r) => r.extent().0[0],
                    crate::log::Shape::Polygon { vertices, .. } => {
                        vertices.iter().map(|p| p.x).fold(f64::INFINITY, f64::min)
                    }
                    crate::log::Shape::Line { start, end } => start.x.min(end.x),
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let (a, b) = (xs(&pieces[0].2), xs(&pieces[1].2));
        assert_eq!(a.len(), b.len());
        assert!(a.len() >= 3, "{a:?}");
        for (x0, x1) in a.iter().zip(&b) {
            assert!((x1 - x0 - 0.5).abs() < 1e-9, "{a:?} then {b:?}");
        }
    }
}
