//! Drawings in the picture's pixels: ROS's `visualization_msgs/ImageMarker`
//! (and Foxglove's `ImageMarkerArray` of them) and Foxglove's
//! `ImageAnnotations`, as shapes in the picture's pixels
//! ([`Shape::Picture`]): drawn over everything, whatever the calibration,
//! as Foxglove's image panel draws them over the image.
//!
//! Coordinates: both put the origin at the top-left corner of the
//! top-left pixel (Foxglove's schema says so; its panel draws ROS's image
//! markers on the same canvas), so half a pixel is taken off each to
//! underlay's convention of pixel centres at integers.
//!
//! Sizes follow Foxglove's panel: an image marker's `scale` is a circle's
//! radius, a line's width and a point's diameter (0: underlay's default),
//! and a circle's outline is 1 px; a text's position is the top-left of
//! its line, its size `font_size` (an image marker's: 12 × `scale`). A
//! text's background colour is not drawn (the session's text backdrop
//! is).
//!
//! Lives: an image marker lives as an RViz marker does — from its stamp
//! until the same namespace and id is added again or removed, or its
//! `lifetime` runs out (0: never). `ImageAnnotations` carry no ids: each
//! message replaces the topic's previous one, shown from its stamp (the
//! first of its annotations' timestamps that is not 0, else the time it
//! was logged) until the topic's next.

use std::sync::Arc;

use super::markers::{self, Drawn, Key, Life, Lives};
use super::value::{Struct, Value};
use crate::geom::Vec2;
use crate::log::{MarkerKind, Rgba, Shape, Style, ThicknessUnit};

/// `ImageMarker.type`.
mod kind {
    pub const CIRCLE: i64 = 0;
    pub const LINE_STRIP: i64 = 1;
    pub const LINE_LIST: i64 = 2;
    pub const POLYGON: i64 = 3;
    pub const POINTS: i64 = 4;
    /// Foxglove's own addition (its `ImageMarker` has a `text`).
    pub const TEXT: i64 = 5;
}

/// `PointsAnnotation.type`.
mod points_kind {
    pub const UNKNOWN: i64 = 0;
    pub const POINTS: i64 = 1;
    pub const LINE_LOOP: i64 = 2;
    pub const LINE_STRIP: i64 = 3;
    pub const LINE_LIST: i64 = 4;
}

/// Foxglove's text size of an image marker of scale 1.
const MARKER_FONT: f64 = 12.0;

/// The most points one annotation draws (a line list of a million
/// segments would cost every frame it shows).
const MAX_POINTS: usize = 20_000;

/// A position of the message (top-left-corner origin) in underlay's
/// pixels (centre origin); `None` when missing or not finite.
fn pixel(p: Option<&Struct<'_>>) -> Option<Vec2> {
    let p = p?;
    let v = Vec2::new(p.f64("x")? - 0.5, p.f64("y")? - 0.5);
    v.is_finite().then_some(v)
}

/// The positions of an array field.
fn pixels(msg: &Struct<'_>, field: &str) -> Vec<Vec2> {
    msg.array(field)
        .unwrap_or(&[])
        .iter()
        .take(MAX_POINTS)
        .filter_map(|p| pixel(p.as_struct()))
        .collect()
}

/// The colours of an array field.
fn colours(msg: &Struct<'_>, field: &str) -> Vec<Rgba> {
    msg.array(field)
        .unwrap_or(&[])
        .iter()
        .take(MAX_POINTS)
        .filter_map(|c| markers::color(c.as_struct()))
        .collect()
}

/// A size field: finite and not negative, else 0 (the default).
fn size(msg: &Struct<'_>, field: &str) -> f64 {
    msg.f64(field)
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(0.0)
}

fn drawn(shape: Shape, style: Style) -> Drawn {
    Drawn {
        is_text: matches!(shape, Shape::Text { .. }),
        shape: Shape::picture(shape),
        style,
    }
}

fn stroke(color: Rgba, width: f64) -> Style {
    Style {
        thickness: width as f32,
        unit: ThicknessUnit::Pixels,
        ..Style::color(color)
    }
}

/// How points join.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Join {
    /// A dot at each.
    Points,
    /// An open line through them.
    Strip,
    /// A closed outline (filled with `fill` when it has one).
    Loop,
    /// A line of each pair.
    List,
}

/// The shapes of points joined as `join`: one colour (`colors` empty, or
/// all the same) draws one shape; else each piece takes its first point's
/// colour, as Foxglove's panel does.
fn joined(
    points: &[Vec2],
    join: Join,
    color: Rgba,
    colors: &[Rgba],
    width: f64,
    fill: Option<Rgba>,
) -> Vec<Drawn> {
    let colour_of = |i: usize| colors.get(i).copied().unwrap_or(color);
    let one_colour = colors.iter().all(|&c| c == colour_of(0));
    match join {
        Join::Points => points
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                drawn(
                    Shape::Point {
                        position: p,
                        kind: MarkerKind::Dot,
                        size: width,
                    },
                    Style::color(colour_of(i)),
                )
            })
            .collect(),
        Join::List => points
            .chunks_exact(2)
            .enumerate()
            .map(|(i, ab)| {
                drawn(
                    Shape::Line {
                        start: ab[0],
                        end: ab[1],
                    },
                    stroke(colour_of(2 * i), width),
                )
            })
            .collect(),
        Join::Strip | Join::Loop if points.len() < 2 => Vec::new(),
        Join::Strip | Join::Loop if one_colour => {
            let closed = join == Join::Loop;
            vec![drawn(
                Shape::Polygon {
                    vertices: points.into(),
                    closed,
                },
                Style {
                    fill: fill.filter(|_| closed),
                    ..stroke(colour_of(0), width)
                },
            )]
        }
        Join::Strip | Join::Loop => {
            let mut out = Vec::new();
            if let (Some(f), Join::Loop) = (fill, join) {
                out.push(drawn(
                    Shape::Polygon {
                        vertices: points.into(),
                        closed: true,
                    },
                    Style {
                        fill: Some(f),
                        ..stroke(Rgba::TRANSPARENT, 0.0)
                    },
                ));
            }
            let n = points.len();
            let pieces = if join == Join::Loop { n } else { n - 1 };
            out.extend((0..pieces).map(|i| {
                drawn(
                    Shape::Line {
                        start: points[i],
                        end: points[(i + 1) % n],
                    },
                    stroke(colour_of(i), width),
                )
            }));
            out
        }
    }
}

/// A line of text whose top-left is at `at`, `size` px high.
fn text(at: Vec2, text: &str, size: f64, color: Rgba) -> Option<Drawn> {
    if text.is_empty() {
        return None;
    }
    let size = if size > 0.0 { size } else { MARKER_FONT };
    Some(drawn(
        Shape::Text {
            anchor: Vec2::new(at.x, at.y + size),
            text: text.into(),
            size,
        },
        Style::color(color),
    ))
}

/// The shapes of one `ImageMarker`, or why it draws nothing.
pub fn marker_shapes(m: &Struct<'_>) -> Result<Vec<Drawn>, String> {
    let kind = m
        .path("type")
        .and_then(Value::as_i64)
        .ok_or("an image marker without a type")?;
    let scale = size(m, "scale");
    let color = markers::color(m.sub("outline_color")).unwrap_or(Rgba::WHITE);
    let filled = m.path("filled").and_then(Value::as_i64).unwrap_or(0) != 0;
    let fill = filled
        .then(|| markers::color(m.sub("fill_color")))
        .flatten()
        .filter(|c| c.a() > 0);
    let points = || pixels(m, "points");
    let colors = || colours(m, "outline_colors");
    Ok(match kind {
        kind::CIRCLE => {
            let centre =
                pixel(m.sub("position")).ok_or("an image marker circle without a finite position")?;
            if scale <= 0.0 {
                return Err("an image marker circle of radius 0".into());
            }
            vec![drawn(
                Shape::Circle {
                    center: centre,
                    radius: scale,
                },
                Style {
                    fill,
                    ..stroke(color, 1.0)
                },
            )]
        }
        kind::LINE_STRIP => joined(&points(), Join::Strip, color, &colors(), scale, None),
        kind::LINE_LIST => joined(&points(), Join::List, color, &colors(), scale, None),
        kind::POLYGON => joined(&points(), Join::Loop, color, &colors(), scale, fill),
        kind::POINTS => joined(&points(), Join::Points, color, &colors(), scale, None),
        kind::TEXT => {
            let at = pixel(m.sub("position")).ok_or("an image marker text without a finite position")?;
            let said = m.str("text.data").or_else(|| m.str("text")).unwrap_or("");
            text(
                at,
                said,
                MARKER_FONT * if scale > 0.0 { scale } else { 1.0 },
                color,
            )
            .into_iter()
            .collect()
        }
        k => return Err(format!("image marker type {k} is not one Foxglove draws")),
    })
}

/// One `ImageMarker` applied to its topic's markers at `now` (its stamp
/// when it has one).
pub fn apply_marker(lives: &mut Lives, m: &Struct<'_>, now: f64) -> Result<(), String> {
    let t = markers::stamp(m.sub("header")).unwrap_or(now);
    let ns: Arc<str> = Arc::from(m.str("ns").unwrap_or(""));
    let key: Key = (ns, m.path("id").and_then(Value::as_i64).unwrap_or(0));
    match m.path("action").and_then(Value::as_i64) {
        Some(0) => {
            let shapes = marker_shapes(m)?;
            let lifetime = markers::duration(m, "lifetime");
            lives.add(key, Life::shown_for(t, lifetime, shapes, None));
            Ok(())
        }
        Some(1) => {
            lives.end(&key, t);
            Ok(())
        }
        Some(a) => Err(format!(
            "image marker action {a} is neither ADD (0) nor REMOVE (1)"
        )),
        None => Err("an image marker without an action".into()),
    }
}

/// The shapes of one `ImageAnnotations` message and its stamp (`None`:
/// every timestamp 0), with what could not be drawn.
pub fn annotation_shapes(msg: &Struct<'_>) -> (Vec<Drawn>, Option<f64>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut stamp = None;
    let mut note_stamp = |a: &Struct<'_>| {
        if stamp.is_none() {
            stamp = a.seconds("timestamp").filter(|s| *s > 0.0 && s.is_finite());
        }
    };
    let each = |field: &str| -> Vec<&Struct<'_>> {
        msg.array(field)
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_struct)
            .collect()
    };
    for c in each("circles") {
        note_stamp(c);
        let Some(centre) = pixel(c.sub("position")) else {
            problems.push("a circle annotation without a finite position".to_owned());
            continue;
        };
        let radius = size(c, "diameter") / 2.0;
        if radius <= 0.0 {
            problems.push("a circle annotation of diameter 0".to_owned());
            continue;
        }
        let color = markers::color(c.sub("outline_color")).unwrap_or(Rgba::WHITE);
        let fill = markers::color(c.sub("fill_color")).filter(|f| f.a() > 0);
        out.push(drawn(
            Shape::Circle {
                center: centre,
                radius,
            },
            Style {
                fill,
                ..stroke(color, size(c, "thickness"))
            },
        ));
    }
    for p in each("points") {
        note_stamp(p);
        let join = match p.path("type").and_then(Value::as_i64).unwrap_or(0) {
            points_kind::UNKNOWN | points_kind::POINTS => Join::Points,
            points_kind::LINE_LOOP => Join::Loop,
            points_kind::LINE_STRIP => Join::Strip,
            points_kind::LINE_LIST => Join::List,
            k => {
                problems.push(format!("points annotation type {k} is not one Foxglove draws"));
                continue;
            }
        };
        let color = markers::color(p.sub("outline_color")).unwrap_or(Rgba::WHITE);
        let fill = markers::color(p.sub("fill_color")).filter(|f| f.a() > 0);
        out.extend(joined(
            &pixels(p, "points"),
            join,
            color,
            &colours(p, "outline_colors"),
            size(p, "thickness"),
            fill,
        ));
    }
    for t in each("texts") {
        note_stamp(t);
        let Some(at) = pixel(t.sub("position")) else {
            problems.push("a text annotation without a finite position".to_owned());
            continue;
        };
        let color = markers::color(t.sub("text_color")).unwrap_or(Rgba::WHITE);
        out.extend(text(at, t.str("text").unwrap_or(""), size(t, "font_size"), color));
    }
    (out, stamp, problems)
}

/// One `ImageAnnotations` message applied to its topic at `now`: it
/// replaces the topic's previous one.
pub fn apply_annotations(lives: &mut Lives, msg: &Struct<'_>, now: f64) -> Vec<String> {
    let (shapes, stamp, problems) = annotation_shapes(msg);
    lives.add(
        (Arc::from(""), 0),
        Life {
            start: stamp.unwrap_or(now),
            until: f64::INFINITY,
            shapes,
            locked: None,
        },
    );
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::build::{colour, f, msg, s, time, top};

    fn point2(x: f64, y: f64) -> Value<'static> {
        msg(vec![("x", f(x)), ("y", f(y)), ("z", f(0.0))])
    }

    fn image_marker(kind: i64, action: i64, id: i64, points: Vec<(f64, f64)>, scale: f64) -> Struct<'static> {
        top(vec![
            (
                "header",
                msg(vec![("stamp", time(2.0)), ("frame_id", s("camera_optical"))]),
            ),
            ("ns", s("det")),
            ("id", Value::Int(id)),
            ("type", Value::Int(kind)),
            ("action", Value::Int(action)),
            ("position", point2(100.5, 50.5)),
            ("scale", f(scale)),
            ("outline_color", colour(1.0, 0.0, 0.0)),
            ("filled", Value::UInt(1)),
            ("fill_color", colour(0.0, 0.0, 1.0)),
            ("lifetime", time(0.0)),
            (
                "points",
                Value::Array(points.into_iter().map(|(x, y)| point2(x, y)).collect()),
            ),
            ("outline_colors", Value::Array(Vec::new())),
        ])
    }

    fn inner(d: &Drawn) -> &Shape {
        match &d.shape {
            Shape::Picture(s) => s,
            other => panic!("not in the picture: {other:?}"),
        }
    }

    /// Each image marker type becomes its shape in the picture's pixels,
    /// half a pixel up and left of the message's corner-origin numbers.
    #[test]
    fn image_markers_become_shapes_in_the_picture() {
        let circle = marker_shapes(&image_marker(kind::CIRCLE, 0, 1, vec![], 8.0)).unwrap();
        assert_eq!(
            inner(&circle[0]),
            &Shape::Circle {
                center: Vec2::new(100.0, 50.0),
                radius: 8.0
            }
        );
        assert_eq!(circle[0].style.color, Rgba::from_rgb(0xff0000));
        assert_eq!(circle[0].style.fill, Some(Rgba::from_rgb(0x0000ff)));
        let square = vec![(10.5, 10.5), (20.5, 10.5), (20.5, 20.5), (10.5, 20.5)];
        let poly = marker_shapes(&image_marker(kind::POLYGON, 0, 1, square.clone(), 3.0)).unwrap();
        assert_eq!(poly.len(), 1);
        let Shape::Polygon { vertices, closed } = inner(&poly[0]) else {
            panic!("{poly:?}");
        };
        assert!(*closed);
        assert_eq!(vertices[2], Vec2::new(20.0, 20.0));
        assert_eq!(poly[0].style.thickness, 3.0);
        assert!(poly[0].style.fill.is_some());
        let strip = marker_shapes(&image_marker(kind::LINE_STRIP, 0, 1, square.clone(), 0.0)).unwrap();
        assert!(matches!(inner(&strip[0]), Shape::Polygon { closed: false, .. }));
        assert_eq!(strip[0].style.fill, None, "an open line is not filled");
        let list = marker_shapes(&image_marker(kind::LINE_LIST, 0, 1, square.clone(), 0.0)).unwrap();
        assert_eq!(list.len(), 2);
        let dots = marker_shapes(&image_marker(kind::POINTS, 0, 1, square, 4.0)).unwrap();
        assert_eq!(dots.len(), 4);
        assert!(matches!(inner(&dots[0]), Shape::Point { size: 4.0, .. }));
        // Every shape can be drawn, and reads as a picture shape.
        for d in circle.iter().chain(&poly).chain(&strip).chain(&list).chain(&dots) {
            assert!(d.shape.picture_problem().is_none());
        }
        let e = marker_shapes(&image_marker(9, 0, 1, vec![], 1.0)).unwrap_err();
        assert!(e.contains("type 9"), "{e}");
        let e = marker_shapes(&image_marker(kind::CIRCLE, 0, 1, vec![], 0.0)).unwrap_err();
        assert!(e.contains("radius 0"), "{e}");
    }

    /// Per-point colours split a line into pieces, each its first point's
    /// colour.
    #[test]
    fn per_point_colours_colour_each_piece() {
        let pts = [Vec2::new(0.0, 0.0), Vec2::new(10.0, 0.0), Vec2::new(10.0, 10.0)];
        let (red, green) = (Rgba::from_rgb(0xff0000), Rgba::from_rgb(0x00ff00));
        let pieces = joined(
            &pts,
            Join::Loop,
            Rgba::WHITE,
            &[red, green, red],
            2.0,
            Some(green),
        );
        // The fill, then three edges.
        assert_eq!(pieces.len(), 4);
        assert_eq!(pieces[0].style.fill, Some(green));
        let colours: Vec<Rgba> = pieces[1..].iter().map(|d| d.style.color).collect();
        assert_eq!(colours, [red, green, red]);
        // One colour everywhere: one shape.
        assert_eq!(
            joined(&pts, Join::Strip, red, &[red, red, red], 2.0, None).len(),
            1
        );
    }

    /// An image marker lives from its stamp until removed or replaced.
    #[test]
    fn image_markers_live_until_removed() {
        let mut lives = Lives::default();
        apply_marker(&mut lives, &image_marker(kind::CIRCLE, 0, 1, vec![], 5.0), 9.0).unwrap();
        let mut remove = image_marker(kind::CIRCLE, 1, 1, vec![], 5.0);
        remove.fields[0] = (
            Arc::from("header"),
            msg(vec![("stamp", time(3.0)), ("frame_id", s(""))]),
        );
        apply_marker(&mut lives, &remove, 9.0).unwrap();
        lives.finish();
        assert_eq!(lives.ended.len(), 1);
        assert_eq!(lives.ended[0].start, 2.0);
        assert!(lives.ended[0].end < 3.0 && lives.ended[0].end > 2.99);
        let e = apply_marker(&mut lives, &image_marker(kind::CIRCLE, 4, 1, vec![], 5.0), 9.0).unwrap_err();
        assert!(e.contains("action 4"), "{e}");
    }

    fn annotations() -> Struct<'static> {
        let ts = || time(5.25);
        top(vec![
            (
                "circles",
                Value::Array(vec![msg(vec![
                    ("timestamp", ts()),
                    ("position", point2(320.5, 240.5)),
                    ("diameter", f(20.0)),
                    ("thickness", f(2.0)),
                    (
                        "fill_color",
                        msg(vec![("r", f(0.0)), ("g", f(0.0)), ("b", f(0.0)), ("a", f(0.0))]),
                    ),
                    ("outline_color", colour(0.0, 1.0, 0.0)),
                ])]),
            ),
            (
                "points",
                Value::Array(vec![msg(vec![
                    ("timestamp", ts()),
                    ("type", Value::UInt(2)),
                    (
                        "points",
                        Value::Array(vec![point2(0.5, 0.5), point2(10.5, 0.5), point2(10.5, 10.5)]),
                    ),
                    ("outline_color", colour(1.0, 1.0, 0.0)),
                    ("outline_colors", Value::Array(Vec::new())),
                    ("fill_color", colour(0.0, 0.0, 1.0)),
                    ("thickness", f(3.0)),
                ])]),
            ),
            (
                "texts",
                Value::Array(vec![msg(vec![
                    ("timestamp", ts()),
                    ("position", point2(100.5, 20.5)),
                    ("text", s("ball 0.97")),
                    ("font_size", f(16.0)),
                    ("text_color", colour(1.0, 1.0, 1.0)),
                    ("background_color", colour(0.0, 0.0, 0.0)),
                ])]),
            ),
        ])
    }

    /// Foxglove's annotations: circles by diameter, points by type, text
    /// below its top-left corner; the stamp from the annotations.
    #[test]
    fn image_annotations_become_shapes_in_the_picture() {
        let (shapes, stamp, problems) = annotation_shapes(&annotations());
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(stamp, Some(5.25));
        assert_eq!(shapes.len(), 3);
        assert_eq!(
            inner(&shapes[0]),
            &Shape::Circle {
                center: Vec2::new(320.0, 240.0),
                radius: 10.0
            }
        );
        assert_eq!(shapes[0].style.fill, None, "a transparent fill is none");
        assert!(matches!(inner(&shapes[1]), Shape::Polygon { closed: true, .. }));
        assert_eq!(shapes[1].style.fill, Some(Rgba::from_rgb(0x0000ff)));
        assert_eq!(
            inner(&shapes[2]),
            &Shape::Text {
                anchor: Vec2::new(100.0, 36.0),
                text: "ball 0.97".into(),
                size: 16.0
            }
        );
        assert!(shapes[2].is_text);
        // Each message replaces the last.
        let mut lives = Lives::default();
        apply_annotations(&mut lives, &annotations(), 1.0);
        apply_annotations(&mut lives, &top(vec![]), 6.0);
        lives.finish();
        assert_eq!(lives.ended.len(), 2);
        assert_eq!(lives.ended[0].start, 5.25);
        assert!(lives.ended[0].end < 6.0);
        assert!(lives.ended[1].life.shapes.is_empty());
    }

    fn number() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        prop_oneof![
            -1e4f64..1e4,
            Just(0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-1e300),
            Just(1e300),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any image marker or annotation of any numbers gives shapes or a
        /// reason, never a panic; every shape given can be drawn or is
        /// refused by the readers' check, never drawn wrong.
        #[test]
        fn any_numbers_give_shapes_or_a_reason(
            kind in -1i64..7,
            action in -1i64..3,
            points_kind in -1i64..6,
            at in (number(), number()),
            scale in number(),
            pts in proptest::collection::vec((number(), number()), 0..9),
        ) {
            let mut m = image_marker(kind, action, 1, pts.clone(), scale);
            m.fields[6] = (Arc::from("position"), point2(at.0, at.1));
            let mut lives = Lives::default();
            let _ = apply_marker(&mut lives, &m, 1.0);
            let ann = top(vec![
                ("circles", Value::Array(vec![msg(vec![("position", point2(at.0, at.1)), ("diameter", f(scale)), ("thickness", f(scale))])])),
                ("points", Value::Array(vec![msg(vec![
                    ("type", Value::Int(points_kind)),
                    ("points", Value::Array(pts.iter().map(|&(x, y)| point2(x, y)).collect())),
                    ("thickness", f(scale)),
                ])])),
                ("texts", Value::Array(vec![msg(vec![("position", point2(at.0, at.1)), ("text", s("t")), ("font_size", f(scale))])])),
            ]);
            apply_annotations(&mut lives, &ann, 2.0);
            lives.finish();
            for e in &lives.ended {
                for d in &e.life.shapes {
                    let p = crate::log::Primitive { shape: d.shape.clone(), style: d.style, entity: crate::log::EntityId(0), level: 1 };
                    proptest::prop_assert!(d.shape.picture_problem().is_none());
                    if crate::log::validate::drawable(&p) {
                        let mut painter = crate::draw::Painter::new(64, 48);
                        let mut ov = crate::draw::Overlay::new(64, 48);
                        let _ = painter.primitive(&mut ov, &crate::calib::Calibration::pixels(), &p);
                    }
                }
            }
        }
    }

    /// Bad numbers draw nothing and say so, never a panic.
    #[test]
    fn bad_annotations_are_said() {
        let bad = top(vec![(
            "circles",
            Value::Array(vec![
                msg(vec![("position", point2(f64::NAN, 1.0)), ("diameter", f(4.0))]),
                msg(vec![
                    ("position", point2(1.0, 1.0)),
                    ("diameter", f(f64::INFINITY)),
                ]),
            ]),
        )]);
        let (shapes, stamp, problems) = annotation_shapes(&bad);
        assert!(shapes.is_empty() && stamp.is_none());
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
