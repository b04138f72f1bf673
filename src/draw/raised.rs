//! Drawing shapes above the floor ([`Raised`]) through a full camera.
//!
//! Each shape becomes picture outlines the way floor shapes do — paths
//! and circles in space projected and clipped by
//! [`Calibration::project_path3`], a sphere by the circle where the
//! camera's cone touches it, a cylinder or a box by the outline of its
//! visible part (the hull of its projected edges) — and is then filled and
//! stroked by the same code as floor shapes. What hides a raised drawing is
//! decided when it is composited (docs/mask.md), not here.

use super::{Overlay, Painter, SkipReason, TOLERANCE_PX};
use crate::calib::Calibration;
use crate::geom::PixelPoint;
use crate::geom::vec3::Vec3;
use crate::log::{Primitive, Raised, Style, ThicknessUnit};

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
        Raised::Circle { center, radius, normal } => {
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
            let corner = |dx: f64, dy: f64, z: f64| [base[0] + dx * c - dy * s, base[1] + dx * s + dy * c, base[2] + z];
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
    }
}

fn push_ring(ring: Vec<PixelPoint>, out: &mut Vec<Vec<PixelPoint>>) {
    if ring.len() > 1 {
        out.push(ring);
    }
}

/// The point a raised shape's size in world units is measured at.
fn reference_point(r: &Raised) -> Vec3 {
    match r {
        Raised::Path { points, .. } => points.first().copied().unwrap_or_default(),
        Raised::Circle { center, .. } | Raised::Sphere { center, .. } => *center,
        Raised::Text { anchor: p, .. } | Raised::Point { position: p, .. } => *p,
        Raised::Cylinder { base, height, .. } => [base[0], base[1], base[2] + height / 2.0],
        Raised::Box { base, size, .. } => [base[0], base[1], base[2] + size[2] / 2.0],
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
        if let Some(why) = r.invalid() {
            return Err(if why.contains("negative") {
                SkipReason::BadSize
            } else if why.contains("two points") {
                SkipReason::NoVertices
            } else {
                SkipReason::NotFinite
            });
        }
        if !calib.is_full_camera() {
            return Err(SkipReason::FloorOnly);
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

#[cfg(test)]
mod tests;
