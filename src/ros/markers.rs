//! RViz's `visualization_msgs/Marker` as underlay shapes, and the markers'
//! lives as RViz keeps them: a marker is shown from its stamp until the
//! same namespace and id is added again, deleted, cleared by `DELETEALL`
//! on its topic, or its `lifetime` runs out (0: never). Each life becomes a
//! persistent frame; a `frame_locked` marker follows its frame, one frame
//! per change of the transforms under it.
//!
//! Shapes are placed in the world frame through the transform tree at the
//! marker's stamp. A shape that lies on the floor (every point at height 0)
//! is a floor shape, drawn under the robots; anything else is raised.

use std::collections::HashMap;
use std::sync::Arc;

use super::tf::{TfTree, Transform};
use super::value::Struct;
use crate::geom::Vec2;
use crate::log::{Raised, Rgba, Shape, Style, ThicknessUnit};

/// Marker types (`visualization_msgs/Marker.type`).
pub mod kind {
    pub const ARROW: i64 = 0;
    pub const CUBE: i64 = 1;
    pub const SPHERE: i64 = 2;
    pub const CYLINDER: i64 = 3;
    pub const LINE_STRIP: i64 = 4;
    pub const LINE_LIST: i64 = 5;
    pub const CUBE_LIST: i64 = 6;
    pub const SPHERE_LIST: i64 = 7;
    pub const POINTS: i64 = 8;
    pub const TEXT_VIEW_FACING: i64 = 9;
    pub const MESH_RESOURCE: i64 = 10;
    pub const TRIANGLE_LIST: i64 = 11;
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            -1e3f64..1e3,
            Just(0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-1e300),
            Just(1e300),
        ]
    }

    fn point() -> impl Strategy<Value = [f64; 3]> {
        [number(), number(), number()]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..ProptestConfig::default()
        })]

        /// Any marker of any kind, pose, scale and points gives shapes or a
        /// reason, never a panic; with finite numbers of sensible size every
        /// shape can be drawn.
        #[test]
        fn any_marker_gives_shapes_or_a_reason(
            kind in -1i64..13,
            at in point(),
            q in [number(), number(), number(), number()],
            scale in point(),
            points in proptest::collection::vec(point(), 0..12),
        ) {
            let Some(pose) = Transform::new(q, at) else { return Ok(()) };
            let spec = Spec {
                kind,
                pose,
                scale,
                color: Rgba::WHITE,
                points: points.into_iter().filter(|p| p.iter().all(|v| v.is_finite())).collect(),
                colors: Vec::new(),
                text: "t".into(),
                frame: "map".into(),
                locked: false,
                lifetime: 0.0,
                stamp: None,
            };
            if let Ok(drawn) = shapes(&spec, &Transform::IDENTITY) {
                let sensible = at.iter().chain(&scale).all(|v| v.abs() < 1e4);
                for d in drawn {
                    let p = crate::log::Primitive { shape: d.shape, style: d.style, entity: crate::log::EntityId(0), level: 1 };
                    if sensible && spec.points.iter().flatten().all(|v| v.abs() < 1e4) {
                        prop_assert!(crate::log::validate::drawable(&p), "{:?}", p);
                    }
                }
            }
        }
    }
}

/// Marker actions.
pub mod action {
    pub const ADD: i64 = 0;
    pub const DELETE: i64 = 2;
    pub const DELETEALL: i64 = 3;
}

/// Heights closer to the floor than this (world metres) are on it.
const ON_FLOOR: f64 = 1e-6;

/// One shape of a marker, in world coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawn {
    pub shape: Shape,
    pub style: Style,
    /// Text is drawn at a level of its own.
    pub is_text: bool,
}

/// A marker's key: namespace and id.
pub type Key = (Arc<str>, i64);

/// What a marker message asks for.
#[derive(Clone, Debug)]
pub enum Command {
    /// Show (or replace) the marker `key`.
    Add(Key),
    /// Remove the marker `key`.
    Delete(Key),
    /// Remove every marker of the topic (of `ns` only when it is not empty:
    /// RViz 2 from Iron on).
    DeleteAll(Arc<str>),
}

/// What a marker message asks for, or why it is not understood.
pub fn command(marker: &Struct<'_>) -> Result<Command, String> {
    let ns: Arc<str> = Arc::from(marker.str("ns").unwrap_or(""));
    let id = marker.path("id").and_then(|v| v.as_i64()).unwrap_or(0);
    match marker.path("action").and_then(|v| v.as_i64()) {
        Some(action::ADD) | Some(1) => Ok(Command::Add((ns, id))),
        Some(action::DELETE) => Ok(Command::Delete((ns, id))),
        Some(action::DELETEALL) => Ok(Command::DeleteAll(ns)),
        Some(a) => Err(format!("marker action {a} is not one RViz knows")),
        None => Err("a marker without an action".into()),
    }
}

/// A marker's header stamp in seconds (`None` for 0: "now", the
/// message's own time then).
pub fn stamp(header: Option<&Struct<'_>>) -> Option<f64> {
    let h = header?;
    let s = h.seconds("stamp")?;
    (s > 0.0 && s.is_finite()).then_some(s)
}

/// A duration field (`builtin_interfaces/Duration`) in seconds.
pub fn duration(marker: &Struct<'_>, field: &str) -> f64 {
    let s = marker.seconds(field);
    s.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(0.0)
}

fn vec3(s: Option<&Struct<'_>>) -> Option<[f64; 3]> {
    let s = s?;
    Some([s.f64("x")?, s.f64("y")?, s.f64("z")?])
}

/// A `geometry_msgs/Pose` as a transform (an all-zero quaternion, as
/// publishers often leave it, is no rotation).
pub fn pose(p: Option<&Struct<'_>>) -> Option<Transform> {
    let p = p?;
    let t = vec3(p.sub("position"))?;
    let q = p.sub("orientation")?;
    let q = [q.f64("x")?, q.f64("y")?, q.f64("z")?, q.f64("w")?];
    if q.iter().all(|v| *v == 0.0) {
        return Transform::new([0.0, 0.0, 0.0, 1.0], t);
    }
    Transform::new(q, t)
}

/// A `std_msgs/ColorRGBA` (0–1 each) as a colour.
pub fn color(c: Option<&Struct<'_>>) -> Option<Rgba> {
    let c = c?;
    let byte = |name: &str| c.f64(name).map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u32);
    let (r, g, b, a) = (byte("r")?, byte("g")?, byte("b")?, byte("a")?);
    Some(Rgba((r << 24) | (g << 16) | (b << 8) | a))
}

/// What a marker draws, taken out of its message once.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// `Marker.type`.
    pub kind: i64,
    /// Its pose in its frame.
    pub pose: Transform,
    pub scale: [f64; 3],
    pub color: Rgba,
    pub points: Vec<[f64; 3]>,
    /// Per-point colours (empty: `color` for every point).
    pub colors: Vec<Rgba>,
    pub text: Box<str>,
    /// The frame its pose is in.
    pub frame: String,
    /// Follows its frame as it moves (`frame_locked`).
    pub locked: bool,
    /// Seconds it is shown for unless ended before (0: until ended).
    pub lifetime: f64,
    /// Its header stamp (`None`: 0, "now").
    pub stamp: Option<f64>,
}

/// What an added marker draws, or why it is not understood.
pub fn spec(marker: &Struct<'_>) -> Result<Spec, String> {
    let kind = marker
        .path("type")
        .and_then(|v| v.as_i64())
        .ok_or("a marker without a type")?;
    let pose = pose(marker.sub("pose")).ok_or("a marker whose pose is not a finite pose")?;
    let scale = vec3(marker.sub("scale")).ok_or("a marker without a scale")?;
    if !scale.iter().all(|v| v.is_finite()) {
        return Err("a marker whose scale is not finite".into());
    }
    let points = if kind == kind::MESH_RESOURCE {
        // The mesh's triangles, scaled as RViz scales a mesh.
        let uri = marker.str("mesh_resource").unwrap_or("");
        super::mesh::triangles(uri)?
            .iter()
            .map(|c| [c[0] * scale[0], c[1] * scale[1], c[2] * scale[2]])
            .collect()
    } else {
        marker
            .array("points")
            .unwrap_or(&[])
            .iter()
            .filter_map(|p| vec3(p.as_struct()))
            .filter(|p| p.iter().all(|v| v.is_finite()))
            .collect()
    };
    let colors = marker
        .array("colors")
        .unwrap_or(&[])
        .iter()
        .filter_map(|c| color(c.as_struct()))
        .collect();
    let header = marker.sub("header");
    Ok(Spec {
        kind,
        pose,
        scale,
        color: color(marker.sub("color")).unwrap_or(Rgba::WHITE),
        points,
        colors,
        text: marker.str("text").unwrap_or("").into(),
        frame: header.and_then(|h| h.str("frame_id")).unwrap_or("").to_owned(),
        locked: marker.path("frame_locked").and_then(|v| v.as_i64()).unwrap_or(0) != 0,
        lifetime: duration(marker, "lifetime"),
        stamp: stamp(header),
    })
}

/// The shapes of a marker in world coordinates, `world` taking the
/// marker's frame to the world; or why it draws nothing.
pub fn shapes(spec: &Spec, world: &Transform) -> Result<Vec<Drawn>, String> {
    let kind = spec.kind;
    let to_world = world.then_after(&spec.pose);
    let scale = spec.scale;
    let colour = spec.color;
    let points = &spec.points;
    let colours = &spec.colors;
    let colour_of = |i: usize| colours.get(i).copied().unwrap_or(colour);
    let placed: Vec<[f64; 3]> = points.iter().map(|p| to_world.apply(*p)).collect();
    let filled = |c: Rgba| Style {
        color: c,
        fill: Some(c),
        thickness: 0.0,
        unit: ThicknessUnit::Pixels,
    };
    let line = |c: Rgba| Style {
        color: c,
        fill: None,
        thickness: scale[0].abs() as f32,
        unit: ThicknessUnit::World,
    };
    let mut out = Vec::new();
    let mut push = |shape: Shape, style: Style| {
        out.push(Drawn {
            shape,
            style,
            is_text: false,
        })
    };
    match kind {
        kind::ARROW => {
            let (from, to, width) = if placed.len() >= 2 {
                (placed[0], placed[1], scale[0])
            } else {
                (
                    to_world.apply([0.0; 3]),
                    to_world.apply([scale[0], 0.0, 0.0]),
                    scale[1],
                )
            };
            push(arrow(from, to, width, &to_world), filled(colour));
        }
        kind::CUBE => push(solid(&to_world, scale, Solid::Cube), filled(colour)),
        kind::SPHERE => push(solid(&to_world, scale, Solid::Sphere), filled(colour)),
        kind::CYLINDER => push(solid(&to_world, scale, Solid::Cylinder), filled(colour)),
        kind::LINE_STRIP | kind::LINE_LIST => {
            let pairs: Vec<(usize, usize)> = if kind == kind::LINE_STRIP {
                (1..placed.len()).map(|i| (i - 1, i)).collect()
            } else {
                (0..placed.len() / 2).map(|i| (2 * i, 2 * i + 1)).collect()
            };
            if colours.is_empty() && kind == kind::LINE_STRIP && placed.len() >= 2 {
                push(path(&placed, false), line(colour));
            } else {
                for (a, b) in pairs {
                    push(path(&[placed[a], placed[b]], false), line(colour_of(a)));
                }
            }
        }
        kind::CUBE_LIST | kind::SPHERE_LIST => {
            let what = if kind == kind::CUBE_LIST {
                Solid::Cube
            } else {
                Solid::Sphere
            };
            for (i, p) in points.iter().enumerate() {
                let at = to_world.then_after(&Transform {
                    rotation: [0.0, 0.0, 0.0, 1.0],
                    translation: *p,
                });
                push(solid(&at, scale, what), filled(colour_of(i)));
            }
        }
        kind::POINTS => {
            for (i, p) in placed.iter().enumerate() {
                let size = scale[0].max(scale[1]).max(0.0);
                let shape = if p[2].abs() < ON_FLOOR {
                    Shape::Circle {
                        center: Vec2::new(p[0], p[1]),
                        radius: size / 2.0,
                    }
                } else {
                    Shape::Raised(Box::new(Raised::Sphere {
                        center: *p,
                        radius: size / 2.0,
                    }))
                };
                push(shape, filled(colour_of(i)));
            }
        }
        kind::TEXT_VIEW_FACING => {
            let text = spec.text.clone();
            if text.is_empty() {
                return Ok(Vec::new());
            }
            let at = to_world.apply([0.0; 3]);
            let style = Style {
                unit: ThicknessUnit::World,
                ..Style::color(colour)
            };
            let size = scale[2].max(0.0);
            let shape = if at[2].abs() < ON_FLOOR {
                Shape::Text {
                    anchor: Vec2::new(at[0], at[1]),
                    text,
                    size,
                }
            } else {
                Shape::Raised(Box::new(Raised::Text {
                    anchor: at,
                    text,
                    size,
                }))
            };
            out.push(Drawn {
                shape,
                style,
                is_text: true,
            });
        }
        // A mesh's triangles were read into its points ([`super::mesh`]),
        // in the marker's colour.
        kind::TRIANGLE_LIST | kind::MESH_RESOURCE => {
            for (i, tri) in placed.chunks_exact(3).enumerate() {
                push(path(tri, true), filled(colour_of(3 * i)));
            }
        }
        other => return Err(format!("marker type {other} is not one underlay draws")),
    }
    Ok(out)
}

/// A path through points in the world: on the floor when every point is.
pub fn path(points: &[[f64; 3]], closed: bool) -> Shape {
    if points.iter().all(|p| p[2].abs() < ON_FLOOR) {
        if let ([a, b], false) = (points, closed) {
            return Shape::Line {
                start: Vec2::new(a[0], a[1]),
                end: Vec2::new(b[0], b[1]),
            };
        }
        let vertices = points.iter().map(|p| Vec2::new(p[0], p[1])).collect();
        return Shape::Polygon { vertices, closed };
    }
    Shape::Raised(Box::new(Raised::Path {
        points: points.into(),
        closed,
    }))
}

/// An arrow from `from` to `to`: its shaft, and a head 30 % of its length
/// and twice `width` across (at least 16 % of its length), in the plane of
/// the arrow and the pose's y axis.
fn arrow(from: [f64; 3], to: [f64; 3], width: f64, pose: &Transform) -> Shape {
    let d = [0, 1, 2].map(|i| to[i] - from[i]);
    let len = d.iter().map(|v| v * v).sum::<f64>().sqrt();
    if len <= 0.0 || !len.is_finite() {
        return path(&[from, to], false);
    }
    let u = d.map(|v| v / len);
    let y = pose.rotate([0.0, 1.0, 0.0]);
    // Across the arrow: the pose's y without its part along the arrow.
    let along = u[0] * y[0] + u[1] * y[1] + u[2] * y[2];
    let mut side = [0, 1, 2].map(|i| y[i] - along * u[i]);
    let n = side.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n < 1e-9 {
        side = [-u[1], u[0], 0.0];
    } else {
        side = side.map(|v| v / n);
    }
    let head = (len * 0.3).min(len);
    let half = width.abs().max(len * 0.08);
    let base = [0, 1, 2].map(|i| to[i] - u[i] * head);
    let l = [0, 1, 2].map(|i| base[i] + side[i] * half);
    let r = [0, 1, 2].map(|i| base[i] - side[i] * half);
    path(&[from, base, l, to, r, base], false)
}

#[derive(Clone, Copy)]
enum Solid {
    Cube,
    Sphere,
    Cylinder,
}

/// A cube, sphere or cylinder of `scale` at `at` (its centre): upright
/// solids as underlay draws them (a tilted one by its upright bounds).
fn solid(at: &Transform, scale: [f64; 3], what: Solid) -> Shape {
    let c = at.apply([0.0; 3]);
    let s = scale.map(f64::abs);
    let base = [c[0], c[1], c[2] - s[2] / 2.0];
    let raised = match what {
        Solid::Sphere => Raised::Sphere {
            center: c,
            radius: s[0].max(s[1]).max(s[2]) / 2.0,
        },
        Solid::Cylinder => Raised::Cylinder {
            base,
            radius: s[0].max(s[1]) / 2.0,
            height: s[2],
        },
        Solid::Cube => Raised::Box {
            base,
            size: s,
            orientation: at.yaw(),
        },
    };
    Shape::Raised(Box::new(raised))
}

/// The markers of one topic alive at a time, and the lives ended so far.
#[derive(Debug, Default)]
pub struct Lives {
    alive: HashMap<Key, Life>,
    /// Lives that ended: `(start, end, key, shapes)` in the order they ended.
    pub ended: Vec<Ended>,
}

/// A marker shown from `start` while nothing ends it, until `until` at the
/// latest (its lifetime).
#[derive(Clone, Debug)]
pub struct Life {
    pub start: f64,
    pub until: f64,
    /// Its shapes in the world at `start`.
    pub shapes: Vec<Drawn>,
    /// What it draws, kept when it follows its frame (`frame_locked`):
    /// a marker's one spec, or a scene entity's primitives (all in the
    /// entity's frame).
    pub locked: Option<Arc<[Spec]>>,
}

impl Life {
    /// Shown from `start` for `lifetime` seconds unless ended before
    /// (0: until ended), as RViz keeps a marker.
    pub fn shown_for(start: f64, lifetime: f64, shapes: Vec<Drawn>, locked: Option<Arc<[Spec]>>) -> Life {
        Life {
            start,
            until: if lifetime > 0.0 {
                start + lifetime
            } else {
                f64::INFINITY
            },
            shapes,
            locked,
        }
    }
}

/// A life that ended.
#[derive(Clone, Debug)]
pub struct Ended {
    pub key: Key,
    pub start: f64,
    pub end: f64,
    pub life: Life,
}

impl Lives {
    /// Shows `life` as the marker `key` from its start on.
    pub fn add(&mut self, key: Key, life: Life) {
        self.end(&key, life.start);
        self.alive.insert(key, life);
    }

    /// Ends the marker `key` at `t`.
    pub fn end(&mut self, key: &Key, t: f64) {
        if let Some(life) = self.alive.remove(key) {
            self.close(key.clone(), life, t);
        }
    }

    /// Ends every marker (of namespace `ns` unless it is empty) at `t`.
    pub fn end_all(&mut self, ns: &str, t: f64) {
        let mut keys: Vec<Key> = self
            .alive
            .keys()
            .filter(|k| ns.is_empty() || &*k.0 == ns)
            .cloned()
            .collect();
        keys.sort();
        for k in keys {
            self.end(&k, t);
        }
    }

    /// Ends every marker still alive at the end of its lifetime (never, for
    /// those without one).
    pub fn finish(&mut self) {
        let mut rest: Vec<(Key, Life)> = self.alive.drain().collect();
        rest.sort_by(|a, b| a.1.start.total_cmp(&b.1.start).then(a.0.cmp(&b.0)));
        for (k, life) in rest {
            let until = life.until;
            if until >= life.start {
                self.ended.push(Ended {
                    key: k,
                    start: life.start,
                    end: until,
                    life,
                });
            }
        }
    }

    /// Ends `life` at `t`: just before it, as a frame shown at `t` shows
    /// what replaced or removed it (a persistent frame includes its end);
    /// or at the end of its lifetime, when that comes first.
    fn close(&mut self, key: Key, life: Life, t: f64) {
        let end = if life.until <= t {
            life.until
        } else {
            t.next_down()
        };
        if end >= life.start {
            self.ended.push(Ended {
                key,
                start: life.start,
                end,
                life,
            });
        }
    }
}

/// The shapes of a `frame_locked` marker over its life `[start, end]`:
/// one piece per change of the transforms between its frame and the world.
pub fn locked_pieces(
    tf: &TfTree,
    world: &str,
    specs: &[Spec],
    start: f64,
    end: f64,
) -> Vec<(f64, f64, Vec<Drawn>)> {
    let Some(frame) = specs.first().map(|s| s.frame.as_str()) else {
        return Vec::new();
    };
    let mut cuts = vec![start];
    cuts.extend(
        tf.changes(world, frame, start, end)
            .into_iter()
            .filter(|t| *t > start),
    );
    let mut out = Vec::with_capacity(cuts.len());
    for (i, &a) in cuts.iter().enumerate() {
        // Just before the next piece, which a frame at its start shows.
        let b = cuts.get(i + 1).map_or(end, |t| t.next_down());
        let Ok(w) = tf.lookup(world, frame, a) else {
            continue;
        };
        let drawn: Vec<Drawn> = specs
            .iter()
            .filter_map(|s| shapes(s, &w).ok())
            .flatten()
            .collect();
        if !drawn.is_empty() {
            out.push((a, b, drawn));
        }
    }
    out
}
