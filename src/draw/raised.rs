//! Drawing shapes above the floor ([`Raised`]) through a full camera.
//!
//! Each shape becomes picture outlines the way floor shapes do — paths
//! and circles in space projected and clipped by
//! [`Calibration::project_path3`], a sphere by the circle where the
//! camera's cone touches it, a cylinder or a box by the outline of its
//! visible part (the hull of its projected edges) — and is then filled and
//! stroked by the same code as floor shapes. What hides a raised drawing is
//! decided when it is composited (docs/mask.md), not here.

use super::occlude::{DepthSample, ground_distance};
use super::{Overlay, Painter, SkipReason, TOLERANCE_PX};
use crate::calib::Calibration;
use crate::geom::PixelPoint;
use crate::geom::vec3::Vec3;
use crate::log::raised::Problem;
use crate::log::{Primitive, Raised, Shape, Style, ThicknessUnit};

/// Sides of the polygon a vertical cylinder's circles are drawn with for
/// its outline (its edges' hull; the outline's error at the sides is below
/// `1 − cos(π/64)` of the radius, 0.12 %).
const CYLINDER_SIDES: usize = 64;

/// The picture outlines of a raised shape, appended to `out`, and whether
/// they enclose an area: paths and circles as curves, solids as their
/// outline, a text's anchor or a marker's point as a one-point polyline.
/// Nothing when the calibration knows only the floor.
pub fn raised_outline(r: &Raised, calib: &Calibration, tol: f64, out: &mut Vec<Vec<PixelPoint>>) -> bool {
    match r {
        Raised::Path { points, closed } => {
            calib.project_path3(points, *closed, tol, out);
            *closed && points.len() > 2
        }
        Raised::Circle {
            center,
            radius,
            normal,
        } => {
            let pts = calib.circle_points3(*center, *radius, *normal, tol);
            calib.project_path3(&pts, true, tol, out);
            true
        }
        Raised::Text { anchor: p, .. } | Raised::Point { position: p, .. } => {
            if let Some(px) = calib.project3(*p) {
                out.push(vec![px]);
            }
            false
        }
        Raised::Sphere { center, radius } => {
            let pts = calib.sphere_outline3(*center, *radius, tol);
            calib.project_path3(&pts, true, tol, out);
            true
        }
        Raised::Cylinder { base, radius, height } => {
            let top = [base[0], base[1], base[2] + height];
            let ring = |c: Vec3| -> Vec<Vec3> {
                (0..CYLINDER_SIDES)
                    .map(|k| {
                        let a = std::f64::consts::TAU * k as f64 / CYLINDER_SIDES as f64;
                        [c[0] + radius * a.cos(), c[1] + radius * a.sin(), c[2]]
                    })
                    .collect()
            };
            let (lo, hi) = (ring(*base), ring(top));
            let n = lo.len();
            let edges: Vec<(Vec3, Vec3)> = (0..n)
                .flat_map(|i| [(lo[i], lo[(i + 1) % n]), (hi[i], hi[(i + 1) % n]), (lo[i], hi[i])])
                .collect();
            push_ring(calib.convex_outline3(&edges, tol), out);
            true
        }
        Raised::Box {
            base,
            size,
            orientation,
        } => {
            let (s, c) = orientation.sin_cos();
            let (hx, hy) = (size[0] / 2.0, size[1] / 2.0);
            let corner = |dx: f64, dy: f64, z: f64| {
                [base[0] + dx * c - dy * s, base[1] + dx * s + dy * c, base[2] + z]
            };
            let mut v = Vec::with_capacity(8);
            for z in [0.0, size[2]] {
                for (dx, dy) in [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)] {
                    v.push(corner(dx, dy, z));
                }
            }
            let mut edges = Vec::with_capacity(12);
            for i in 0..4 {
                edges.push((v[i], v[(i + 1) % 4]));
                edges.push((v[4 + i], v[4 + (i + 1) % 4]));
                edges.push((v[i], v[4 + i]));
            }
            push_ring(calib.convex_outline3(&edges, tol), out);
            true
        }
        Raised::Cone { apex, base, radius } => {
            let axis = crate::geom::vec3::sub(*base, *apex);
            let ring = calib.circle_points3(*base, *radius, axis, tol);
            let n = ring.len();
            let mut edges: Vec<(Vec3, Vec3)> = Vec::with_capacity(2 * n + 1);
            for i in 0..n {
                edges.push((*apex, ring[i]));
                edges.push((ring[i], ring[(i + 1) % n]));
            }
            if n == 0 {
                // No ring (a radius of 0, or an axis of length 0): a line.
                edges.push((*apex, *base));
            }
            push_ring(calib.convex_outline3(&edges, tol), out);
            true
        }
        Raised::Points { points, .. } => {
            // Each point alone (what picking a point of a cloud needs),
            // up to a bound.
            for p in points.iter().take(MAX_POINTS_OUTLINED) {
                if let Some(px) = calib.project3(p.map(f64::from)) {
                    out.push(vec![px]);
                }
            }
            false
        }
    }
}

/// Points of a set given as outlines ([`raised_outline`]): a cloud's
/// first this many.
pub const MAX_POINTS_OUTLINED: usize = 20_000;

fn push_ring(ring: Vec<PixelPoint>, out: &mut Vec<Vec<PixelPoint>>) {
    if ring.len() > 1 {
        out.push(ring);
    }
}

/// A raised shape's footprint on the floor: what it is drawn as through a
/// calibration that knows only the floor, when asked
/// ([`Painter::flatten_heights`]). Paths and upright circles become their
/// vertices straight below, solids their outline on the floor.
pub fn flattened(r: &Raised) -> Shape {
    let xy = |p: &Vec3| crate::geom::Vec2::new(p[0], p[1]);
    match r {
        Raised::Path { points, closed } => Shape::Polygon {
            vertices: points.iter().map(xy).collect(),
            closed: *closed,
        },
        Raised::Circle {
            center,
            radius,
            normal,
        } => {
            let up = normal[2].abs() / (normal[0].hypot(normal[1]).hypot(normal[2])).max(1e-300);
            if up > 1.0 - 1e-9 {
                Shape::Circle {
                    center: xy(center),
                    radius: *radius,
                }
            } else {
                // An upright or tilted circle is seen from above as the
                // ellipse its points fall on: sampled.
                let Some(n) = crate::geom::vec3::normalized(*normal) else {
                    return Shape::Circle {
                        center: xy(center),
                        radius: *radius,
                    };
                };
                let u = crate::geom::vec3::normalized(crate::geom::vec3::cross(n, [0.0, 0.0, 1.0]))
                    .unwrap_or([1.0, 0.0, 0.0]);
                let v = crate::geom::vec3::cross(n, u);
                Shape::Polygon {
                    vertices: (0..64)
                        .map(|k| {
                            let a = std::f64::consts::TAU * k as f64 / 64.0;
                            crate::geom::Vec2::new(
                                center[0] + radius * (a.cos() * u[0] + a.sin() * v[0]),
                                center[1] + radius * (a.cos() * u[1] + a.sin() * v[1]),
                            )
                        })
                        .collect(),
                    closed: true,
                }
            }
        }
        Raised::Text { anchor, text, size } => Shape::Text {
            anchor: xy(anchor),
            text: text.clone(),
            size: *size,
        },
        Raised::Point { position, kind, size } => Shape::Point {
            position: xy(position),
            kind: *kind,
            size: *size,
        },
        Raised::Sphere { center, radius } => Shape::Circle {
            center: xy(center),
            radius: *radius,
        },
        Raised::Cylinder { base, radius, .. } => Shape::Circle {
            center: xy(base),
            radius: *radius,
        },
        Raised::Box {
            base,
            size,
            orientation,
        } => Shape::Rectangle {
            center: xy(base),
            size: crate::geom::Vec2::new(size[0], size[1]),
            orientation: *orientation,
        },
        Raised::Cone { apex, base, radius } => {
            // Seen from above: the hull of its tip and its base's rim.
            let axis = crate::geom::vec3::sub(*base, *apex);
            let mut pts: Vec<crate::geom::Vec2> = vec![xy(apex)];
            if let Some(n) = crate::geom::vec3::normalized(axis) {
                let u = crate::geom::vec3::normalized(crate::geom::vec3::cross(n, [0.0, 0.0, 1.0]))
                    .or_else(|| crate::geom::vec3::normalized(crate::geom::vec3::cross(n, [1.0, 0.0, 0.0])))
                    .unwrap_or([1.0, 0.0, 0.0]);
                let v = crate::geom::vec3::cross(n, u);
                pts.extend((0..64).map(|k| {
                    let a = std::f64::consts::TAU * k as f64 / 64.0;
                    crate::geom::Vec2::new(
                        base[0] + radius * (a.cos() * u[0] + a.sin() * v[0]),
                        base[1] + radius * (a.cos() * u[1] + a.sin() * v[1]),
                    )
                }));
            } else {
                pts.push(xy(base));
            }
            Shape::Polygon {
                vertices: hull(pts).into(),
                closed: true,
            }
        }
        // Drawn by the points' own painter, flat (Painter::points).
        Raised::Points { points, .. } => Shape::Polygon {
            vertices: points
                .iter()
                .map(|p| crate::geom::Vec2::new(f64::from(p[0]), f64::from(p[1])))
                .collect(),
            closed: false,
        },
    }
}

/// The convex hull of points on the floor, counter-clockwise (Andrew's
/// monotone chain).
fn hull(mut pts: Vec<crate::geom::Vec2>) -> Vec<crate::geom::Vec2> {
    pts.retain(|p| p.is_finite());
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: crate::geom::Vec2, a: crate::geom::Vec2, b: crate::geom::Vec2| {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    };
    let mut out: Vec<crate::geom::Vec2> = Vec::with_capacity(2 * pts.len());
    for pass in 0..2 {
        let start = out.len();
        let iter: Box<dyn Iterator<Item = &crate::geom::Vec2>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in iter {
            while out.len() >= start + 2 && cross(out[out.len() - 2], out[out.len() - 1], p) <= 0.0 {
                out.pop();
            }
            out.push(p);
        }
        out.pop();
    }
    out
}

/// The point a raised shape's size in world units is measured at.
fn reference_point(r: &Raised) -> Vec3 {
    match r {
        Raised::Path { points, .. } => points.first().copied().unwrap_or_default(),
        Raised::Circle { center, .. } | Raised::Sphere { center, .. } => *center,
        Raised::Text { anchor: p, .. } | Raised::Point { position: p, .. } => *p,
        Raised::Cylinder { base, height, .. } => [base[0], base[1], base[2] + height / 2.0],
        Raised::Box { base, size, .. } => [base[0], base[1], base[2] + size[2] / 2.0],
        Raised::Cone { base, .. } => *base,
        Raised::Points { points, .. } => points.first().map_or([0.0; 3], |p| p.map(f64::from)),
    }
}

impl Painter {
    /// Draws a raised primitive (see the module docs). Refused with
    /// [`SkipReason::FloorOnly`] when the calibration knows only the floor.
    pub(super) fn raised(
        &mut self,
        ov: &mut Overlay,
        calib: &Calibration,
        p: &Primitive,
        r: &Raised,
    ) -> Result<(), SkipReason> {
        // A set of points is checked point by point as it is drawn (a
        // point that is not finite is passed over), not number by number
        // first: a cloud has hundreds of thousands.
        if let Raised::Points { points, colors, size } = r {
            let flat = !calib.is_full_camera();
            if flat && !self.flatten_heights {
                return Err(SkipReason::FloorOnly);
            }
            return self.points(ov, calib, points, colors, p.style.color, *size, flat);
        }
        if let Some(problem) = r.problem() {
            return Err(match problem {
                Problem::Negative | Problem::ColourCount => SkipReason::BadSize,
                Problem::TooFewPoints | Problem::NoPoints => SkipReason::NoVertices,
                Problem::NotFinite | Problem::NoNormal => SkipReason::NotFinite,
            });
        }
        if !calib.is_full_camera() {
            if !self.flatten_heights {
                return Err(SkipReason::FloorOnly);
            }
            let flat = Primitive {
                shape: flattened(r),
                ..p.clone()
            };
            return self.primitive(ov, calib, &flat);
        }
        // Sizes in world units: the scale across the line of sight where
        // the shape is (one scale for the whole shape).
        let scale = match p.style.unit {
            ThicknessUnit::Pixels => Some(1.0),
            ThicknessUnit::World => calib.pixels_per_unit3(reference_point(r)),
        };
        let Some(scale) = scale else {
            return Ok(());
        };
        self.record_depth(calib, r);
        match r {
            Raised::Text { anchor, text, size } => {
                if text.is_empty() {
                    return Err(SkipReason::EmptyText);
                }
                let Some(at) = calib.project3(*anchor) else {
                    return Ok(());
                };
                let px = if *size == 0.0 {
                    self.default_text()
                } else {
                    size * scale
                };
                if px > super::text::MAX_TEXT_PX {
                    return Err(SkipReason::TextSize);
                }
                if px >= super::text::MIN_TEXT_PX {
                    self.text(ov, at, text, px, p.style.color);
                }
            }
            Raised::Point { position, kind, size } => {
                let Some(at) = calib.project3(*position) else {
                    return Ok(());
                };
                let size = if *size == 0.0 {
                    self.default_marker()
                } else {
                    size * scale
                };
                let t = f64::from(p.style.thickness);
                let width = if t == 0.0 { self.default_width() } else { t * scale };
                self.marker(ov, at, *kind, size, width, p.style.color);
            }
            _ => {
                self.rings.clear();
                let closed = raised_outline(r, calib, TOLERANCE_PX, &mut self.rings);
                let style = Style {
                    thickness: p.style.thickness * scale as f32,
                    unit: ThicknessUnit::Pixels,
                    ..p.style
                };
                self.outline_and_fill(ov, calib, &style, closed);
            }
        }
        Ok(())
    }
}

impl Painter {
    /// Adds depth samples along a raised shape ([`DepthSample`]): points
    /// of its paths no more than [`SAMPLE_SPACING_PX`] apart in the
    /// picture, the front of a solid at its centre's picture.
    fn record_depth(&mut self, calib: &Calibration, r: &Raised) {
        let Some(eye) = calib.camera_center() else {
            return;
        };
        let out = &mut self.depth_samples;
        let mut add = |p: Vec3, ahead: f64| {
            if let Some(at) = calib.project3(p) {
                out.push(DepthSample {
                    at,
                    distance: (ground_distance(eye, p) - ahead).max(0.0),
                });
            }
        };
        let path = |pts: &[Vec3], closed: bool, add: &mut dyn FnMut(Vec3, f64)| {
            let n = pts.len();
            let segs = if closed && n > 2 { n } else { n.saturating_sub(1) };
            if n == 1 {
                add(pts[0], 0.0);
            }
            for i in 0..segs {
                let (a, b) = (pts[i], pts[(i + 1) % n]);
                let len = match (calib.project3(a), calib.project3(b)) {
                    (Some(pa), Some(pb)) => (pa - pb).length(),
                    _ => 64.0 * SAMPLE_SPACING_PX,
                };
                let k = ((len / SAMPLE_SPACING_PX).ceil() as usize).clamp(1, MAX_SAMPLES_PER_SEGMENT);
                for j in 0..=k {
                    let t = j as f64 / k as f64;
                    add(std::array::from_fn(|c| a[c] + (b[c] - a[c]) * t), 0.0);
                }
            }
        };
        match r {
            Raised::Path { points, closed } => path(points, *closed, &mut add),
            Raised::Circle {
                center,
                radius,
                normal,
            } => {
                let pts = calib.circle_points3(*center, *radius, *normal, TOLERANCE_PX);
                path(&pts, true, &mut add);
            }
            Raised::Text { anchor: p, .. } | Raised::Point { position: p, .. } => add(*p, 0.0),
            Raised::Sphere { center, radius } => add(*center, *radius),
            Raised::Cylinder { base, radius, height } => {
                add([base[0], base[1], base[2] + height / 2.0], *radius)
            }
            Raised::Box { base, size, .. } => add(
                [base[0], base[1], base[2] + size[2] / 2.0],
                0.5 * size[0].hypot(size[1]),
            ),
            Raised::Cone { apex, base, radius } => {
                add(*apex, 0.0);
                add(*base, *radius);
            }
            // Sampled as they are drawn (Painter::points).
            Raised::Points { .. } => {}
        }
    }
}

/// Largest distance between depth samples along a raised path, in pixels.
const SAMPLE_SPACING_PX: f64 = 8.0;

/// Most depth samples per segment of a raised path.
const MAX_SAMPLES_PER_SEGMENT: usize = 1024;

#[cfg(test)]
mod tests;
