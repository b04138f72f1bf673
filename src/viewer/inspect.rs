//! Inspecting the drawings: which primitive is under the pointer (of
//! those drawn at this time through the session's filter), what it is
//! (entity, level, frame and its time, shape, world coordinates), and its
//! outline in the picture for highlighting.

use crate::calib::Calibration;
use crate::geom::vec2::distance_to_segment;
use crate::geom::{PixelPoint, Vec2};
use crate::log::{FrameTime, Log, Raised, Shape};
use crate::select::{Filter, Index};
use crate::time::LogTime;

/// Projection tolerance of outlines (pixels).
const TOL_PX: f64 = 0.5;

/// A primitive under the pointer.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Its position in [`Log::primitives`].
    pub position: usize,
    /// How far the pointer is from it (pixels; 0 inside a filled shape).
    pub distance: f64,
}

/// The primitive drawn at log time `t` nearest to picture point `at`,
/// within `reach` pixels (the topmost of equally near ones).
pub fn hit_test(
    log: &Log,
    index: &Index,
    filter: &Filter,
    (t, threshold): (LogTime, f64),
    calibration: &Calibration,
    at: PixelPoint,
    reach: f64,
) -> Option<Hit> {
    let selection = index.select(log, t, threshold, filter);
    let mut best: Option<Hit> = None;
    let mut lines = Vec::new();
    for &position in selection.positions() {
        let Some(p) = log.primitives.get(position) else {
            continue;
        };
        let filled = p.style.fill.is_some();
        let Some(d) = distance(&p.shape, filled, calibration, at, &mut lines) else {
            continue;
        };
        if d <= reach && best.as_ref().is_none_or(|b| d <= b.distance) {
            best = Some(Hit {
                position,
                distance: d,
            });
        }
    }
    best
}

/// Cells of a grid whose rectangles are outlined one by one: more are
/// outlined by the box around them.
const MAX_CELL_OUTLINES: usize = 4096;

/// The picture outline of `shape` (polylines), as drawn.
pub fn outline(shape: &Shape, calibration: &Calibration, out: &mut Vec<Vec<PixelPoint>>) {
    out.clear();
    match shape {
        Shape::Picture(inner) => {
            if !matches!(**inner, Shape::Picture(_)) {
                outline(inner, &Calibration::pixels(), out);
            }
        }
        Shape::Raised(r) => {
            crate::draw::raised::raised_outline(r, calibration, TOL_PX, out);
        }
        Shape::Cells(c) => {
            // Each rectangle, up to a bound (a map's thousands would make
            // the pointer slow); beyond it the box around them all.
            if c.len() <= MAX_CELL_OUTLINES {
                for r in c.rects() {
                    calibration.project_polyline(&c.corners(r), true, TOL_PX, out);
                }
            } else if let Some((lo, hi)) = c.extent() {
                let corners = [lo, Vec2::new(hi.x, lo.y), hi, Vec2::new(lo.x, hi.y)];
                calibration.project_polyline(&corners, true, TOL_PX, out);
            }
        }
        Shape::Circle { center, radius } => calibration.project_circle(*center, *radius, TOL_PX, out),
        Shape::Line { start, end } => calibration.project_polyline(&[*start, *end], false, TOL_PX, out),
        Shape::Rectangle {
            center,
            size,
            orientation,
        } => calibration.project_polyline(
            &Shape::rectangle_corners(*center, *size, *orientation),
            true,
            TOL_PX,
            out,
        ),
        Shape::Polygon { vertices, closed } => calibration.project_polyline(vertices, *closed, TOL_PX, out),
        Shape::Sector {
            center,
            outer,
            start,
            sweep,
            ..
        } => calibration.project_arc(*center, *outer, *start, start + sweep, TOL_PX, out),
        Shape::Text { anchor, .. } | Shape::Point { position: anchor, .. } => {
            if let Some(p) = calibration.project(*anchor) {
                out.push(vec![p]);
            }
        }
    }
}

/// Pixels from `at` to `shape` (0 inside a filled one); `None` when it is
/// not in the picture.
fn distance(
    shape: &Shape,
    filled: bool,
    calibration: &Calibration,
    at: PixelPoint,
    lines: &mut Vec<Vec<PixelPoint>>,
) -> Option<f64> {
    outline(shape, calibration, lines);
    let mut d = f64::INFINITY;
    for line in lines.iter() {
        match line.as_slice() {
            [] => {}
            [p] => d = d.min((*p - at).length()),
            pts => {
                for w in pts.windows(2) {
                    d = d.min(distance_to_segment(at, w[0], w[1]));
                }
            }
        }
    }
    match shape {
        // A text is picked anywhere on its first line (about as wide as
        // 0.6 of its size per character).
        Shape::Text { text, size, .. } => {
            let a = lines.first()?.first().copied()?;
            let (w, h) = (0.6 * size * text.chars().count() as f64, *size);
            let inside = at.x >= a.x && at.x <= a.x + w && at.y <= a.y && at.y >= a.y - h;
            if inside {
                d = 0.0;
            }
        }
        _ if filled && lines.iter().any(|l| l.len() > 2 && contains(l, at)) => d = 0.0,
        _ => {}
    }
    d.is_finite().then_some(d)
}

/// Whether a closed ring contains `p` (even–odd).
fn contains(ring: &[PixelPoint], p: PixelPoint) -> bool {
    let mut inside = false;
    let n = ring.len();
    for i in 0..n {
        let (a, b) = (ring[i], ring[(i + 1) % n]);
        if (a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) {
            inside = !inside;
        }
    }
    inside
}

/// The frame holding the primitive at `position` (frames hold contiguous
/// runs of primitives in recorded order).
pub fn frame_of(log: &Log, position: usize) -> Option<usize> {
    let i = log.frames.partition_point(|f| f.primitives.start <= position);
    let f = i.checked_sub(1)?;
    log.frames[f].primitives.contains(&position).then_some(f)
}

/// What the primitive at `position` is, one fact a line: entity, level,
/// frame (time, instantaneous or persistent), shape with its world
/// coordinates at `precision` decimals.
pub fn describe(log: &Log, position: usize, precision: usize) -> String {
    let Some(p) = log.primitives.get(position) else {
        return String::new();
    };
    let v = |v: Vec2| format!("({:.*}, {:.*})", precision, v.x, precision, v.y);
    let n = |x: f64| format!("{x:.precision$}");
    let (shape, unit) = match &p.shape {
        Shape::Picture(inner) => (&**inner, "px in the picture"),
        shape => (shape, log.header.world_unit.as_str()),
    };
    let shape = match shape {
        Shape::Circle { center, radius } => format!("circle at {} radius {}", v(*center), n(*radius)),
        Shape::Line { start, end } => format!("line {} → {}", v(*start), v(*end)),
        Shape::Rectangle {
            center,
            size,
            orientation,
        } => format!(
            "rectangle at {} size {} × {} turned {:.1}°",
            v(*center),
            n(size.x),
            n(size.y),
            orientation.to_degrees()
        ),
        Shape::Polygon { vertices, closed } => {
            let pts: Vec<String> = vertices.iter().take(6).map(|p| v(*p)).collect();
            let more = if vertices.len() > 6 { ", …" } else { "" };
            format!(
                "{} of {} points: {}{more}",
                if *closed { "polygon" } else { "polyline" },
                vertices.len(),
                pts.join(", ")
            )
        }
        Shape::Text { anchor, text, .. } => format!("text “{text}” at {}", v(*anchor)),
        Shape::Point { position, .. } => format!("point at {}", v(*position)),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => format!(
            "{} at {} radius {}–{} from {:.1}° over {:.1}°",
            shape.kind_name(),
            v(*center),
            n(*inner),
            n(*outer),
            start.to_degrees(),
            sweep.to_degrees()
        ),
        Shape::Raised(r) => describe_raised(r, precision),
        Shape::Cells(c) => {
            let span = c
                .extent()
                .map_or_else(String::new, |(lo, hi)| format!(" within {} … {}", v(lo), v(hi)));
            format!("{} rectangles of cells{span}", c.len())
        }
        // Readers refuse a picture shape inside another.
        Shape::Picture(_) => "picture shape".to_owned(),
    };
    let frame = frame_of(log, position).map_or_else(String::new, |f| match log.frames[f].time {
        FrameTime::Instant(t) => format!("frame {f}: instantaneous at {t:.3} s"),
        FrameTime::Persistent { start, end } => format!("frame {f}: persistent {start:.3} … {end:.3} s"),
    });
    format!(
        "{}\nlevel {}\n{frame}\n{shape} {unit}",
        log.entities.name(p.entity),
        p.level,
    )
}

/// A raised shape in words, its heights given as `z` (the third
/// coordinate of each point).
fn describe_raised(r: &Raised, precision: usize) -> String {
    let v = |p: &[f64; 3]| {
        format!(
            "({:.*}, {:.*}, z {:.*})",
            precision, p[0], precision, p[1], precision, p[2]
        )
    };
    let n = |x: f64| format!("{x:.precision$}");
    let (_, _, [z0, z1]) = r.extent();
    let heights = if z0 == z1 {
        format!("at height {}", n(z0))
    } else {
        format!("heights {} … {}", n(z0), n(z1))
    };
    let what = match r {
        Raised::Path { points, .. } => {
            let pts: Vec<String> = points.iter().take(6).map(v).collect();
            let more = if points.len() > 6 { ", …" } else { "" };
            format!(
                "{} of {} points: {}{more}",
                r.kind_name(),
                points.len(),
                pts.join(", ")
            )
        }
        Raised::Circle { center, radius, .. } => format!("circle at {} radius {}", v(center), n(*radius)),
        Raised::Text { anchor, text, .. } => format!("text “{text}” at {}", v(anchor)),
        Raised::Point { position, .. } => format!("point at {}", v(position)),
        Raised::Sphere { center, radius } => format!("sphere at {} radius {}", v(center), n(*radius)),
        Raised::Cylinder { base, radius, height } => {
            format!(
                "cylinder on {} radius {} height {}",
                v(base),
                n(*radius),
                n(*height)
            )
        }
        Raised::Box {
            base,
            size,
            orientation,
        } => format!(
            "box on {} size {} × {} × {} turned {:.1}°",
            v(base),
            n(size[0]),
            n(size[1]),
            n(size[2]),
            orientation.to_degrees()
        ),
        Raised::Cone { apex, base, radius } => {
            format!("cone from {} to {} radius {}", v(apex), v(base), n(*radius))
        }
        Raised::Points { points, .. } => format!("{} points", points.len()),
    };
    format!("{what}; {heights}")
}

/// Decimals that show world coordinates to about a pixel: the world
/// length of one pixel at `at`, to one significant digit.
pub fn precision(calibration: &Calibration, at: PixelPoint) -> usize {
    let (Some(a), Some(b)) = (
        calibration.unproject(at),
        calibration.unproject(at + Vec2::new(1.0, 0.0)),
    ) else {
        return 0;
    };
    let per_px = (b - a).length();
    if !(per_px.is_finite() && per_px > 0.0) {
        return 0;
    }
    (-per_px.log10().floor()).clamp(0.0, 6.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Primitive, Rgba, Style};

    /// Identity camera: world units are pixels.
    fn camera() -> Calibration {
        Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap()
    }

    fn log() -> Log {
        let mut log = Log::new();
        let a = log.entities.intern("robots/1");
        let b = log.entities.intern("zone");
        let prim = |shape, entity, fill: bool| Primitive {
            shape,
            style: Style {
                fill: fill.then_some(Rgba::WHITE),
                ..Style::default()
            },
            entity,
            level: 2,
        };
        log.push_frame(
            FrameTime::Persistent {
                start: 0.0,
                end: 10.0,
            },
            [prim(
                Shape::Rectangle {
                    center: Vec2::new(100.0, 100.0),
                    size: Vec2::new(80.0, 40.0),
                    orientation: 0.0,
                },
                b,
                true,
            )],
        );
        log.push_frame(
            FrameTime::Instant(5.0),
            [prim(
                Shape::Circle {
                    center: Vec2::new(50.0, 50.0),
                    radius: 10.0,
                },
                a,
                false,
            )],
        );
        log
    }

    #[test]
    fn the_nearest_drawn_primitive_is_hit() {
        let log = log();
        let index = Index::new(&log);
        let all = Filter::all(&log, i32::MAX);
        let cam = camera();
        let hit = |x, y| {
            hit_test(
                &log,
                &index,
                &all,
                (crate::time::LogTime(5.0), 0.1),
                &cam,
                Vec2::new(x, y),
                5.0,
            )
        };
        // On the circle's outline, not its inside (it is not filled).
        assert_eq!(hit(60.0, 50.0).map(|h| h.position), Some(1));
        assert_eq!(hit(50.0, 50.0), None);
        // Inside the filled rectangle.
        assert_eq!(
            hit(100.0, 100.0).map(|h| (h.position, h.distance)),
            Some((0, 0.0))
        );
        // Not drawn at another time.
        let later = hit_test(
            &log,
            &index,
            &all,
            (crate::time::LogTime(9.0), 0.1),
            &cam,
            Vec2::new(60.0, 50.0),
            5.0,
        );
        assert_eq!(later, None);
        // A level filter leaves it out.
        let none = Filter::all(&log, 1);
        assert_eq!(
            hit_test(
                &log,
                &index,
                &none,
                (crate::time::LogTime(5.0), 0.1),
                &cam,
                Vec2::new(60.0, 50.0),
                5.0
            ),
            None
        );
    }

    #[test]
    fn descriptions_say_entity_level_frame_and_shape() {
        let log = log();
        let d = describe(&log, 1, 1);
        assert!(d.contains("robots/1") && d.contains("level 2"), "{d}");
        assert!(d.contains("frame 1: instantaneous at 5.000 s"), "{d}");
        assert!(d.contains("circle at (50.0, 50.0) radius 10.0"), "{d}");
        let d = describe(&log, 0, 0);
        assert!(
            d.contains("persistent 0.000 … 10.000 s") && d.contains("rectangle"),
            "{d}"
        );
        assert_eq!(frame_of(&log, 5), None);
    }

    #[test]
    fn precision_follows_the_size_of_a_pixel() {
        assert_eq!(precision(&camera(), Vec2::new(10.0, 10.0)), 0);
        let fine =
            Calibration::from_homography([[100.0, 0.0, 0.0], [0.0, 100.0, 0.0], [0.0, 0.0, 1.0]]).unwrap();
        assert_eq!(precision(&fine, Vec2::new(10.0, 10.0)), 2);
    }
}
