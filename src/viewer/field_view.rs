//! The field view's geometry: the world seen from above, fitted to a
//! panel, as a calibration (so every shape is drawn by the same
//! projection as on the video; a full camera straight above, so shapes
//! above the floor show at their heights), and the box of the world to
//! show.

use crate::calib::Calibration;
use crate::geom::Vec2;
use crate::log::{Log, Shape};

/// The box around the log's world: its declared bounds, else the points
/// of every shape (`None` when it has none).
pub fn extent(log: &Log) -> Option<(Vec2, Vec2)> {
    if let Some(b) = log.header.hints.world_bounds {
        return Some(b);
    }
    let (mut lo, mut hi) = (
        Vec2::new(f64::INFINITY, f64::INFINITY),
        Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
    );
    let mut add = |p: Vec2, r: f64| {
        if p.is_finite() && r.is_finite() {
            lo = Vec2::new(lo.x.min(p.x - r), lo.y.min(p.y - r));
            hi = Vec2::new(hi.x.max(p.x + r), hi.y.max(p.y + r));
        }
    };
    for p in &log.primitives {
        match &p.shape {
            Shape::Circle { center, radius } => add(*center, *radius),
            Shape::Line { start, end } => {
                add(*start, 0.0);
                add(*end, 0.0);
            }
            Shape::Rectangle { center, size, .. } => add(*center, 0.5 * size.x.hypot(size.y)),
            Shape::Polygon { vertices, .. } => vertices.iter().for_each(|v| add(*v, 0.0)),
            Shape::Point { position, .. } => add(*position, 0.0),
            Shape::Sector { center, outer, .. } => add(*center, *outer),
            Shape::Text { .. } | Shape::Picture(_) => {}
            Shape::Cells(c) => {
                if let Some((a, b)) = c.extent() {
                    add(a, 0.0);
                    add(b, 0.0);
                }
            }
            Shape::Raised(r) => {
                let (x, y, _) = r.extent();
                add(Vec2::new(x[0], y[0]), 0.0);
                add(Vec2::new(x[1], y[1]), 0.0);
            }
        }
    }
    (lo.x < hi.x && lo.y < hi.y).then_some((lo, hi))
}

/// The field preset the log's world looks like: of the presets in the
/// log's unit, the one whose size comes nearest the extent's (within a
/// quarter each way).
pub fn guess_preset(log: &Log, extent: (Vec2, Vec2)) -> Option<crate::calib::presets::FieldPreset> {
    let size = extent.1 - extent.0;
    crate::calib::presets::all()
        .into_iter()
        .filter(|p| p.unit == log.header.world_unit)
        .map(|p| {
            let off = ((size.x / p.size.x).ln().abs()).max((size.y / p.size.y).ln().abs());
            (off, p)
        })
        .filter(|(off, _)| off.is_finite() && *off < 0.25)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p)
}

/// World → pixels of a `width × height` panel (pixels from its top left)
/// showing `extent` whole, x to the right and y up, with a margin of 4 %.
pub fn top_down(extent: (Vec2, Vec2), width: f64, height: f64) -> Option<Calibration> {
    let (lo, hi) = extent;
    let (w, h) = (hi.x - lo.x, hi.y - lo.y);
    if !(w > 0.0 && h > 0.0 && width > 1.0 && height > 1.0) {
        return None;
    }
    let scale = (width / w).min(height / h) * 0.96;
    let (cx, cy) = (0.5 * (lo.x + hi.x), 0.5 * (lo.y + hi.y));
    let m = [
        [scale, 0.0, width / 2.0 - scale * cx],
        [0.0, -scale, height / 2.0 + scale * cy],
        [0.0, 0.0, 1.0],
    ];
    // Seen from a camera straight above (a 60° lens across the panel's
    // larger side), so drawings above the floor show at their heights.
    let above = width.max(height) / scale / 2.0 / (std::f64::consts::PI / 6.0).tan();
    Calibration::from_homography(m)
        .and_then(|c| c.seen_from_above(Vec2::new(width / 2.0, height / 2.0), above))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{FrameTime, Primitive, Style};

    #[test]
    fn the_world_fits_the_panel_upright() {
        let mut log = Log::new();
        let e = log.entities.intern("r");
        log.push_frame(
            FrameTime::Instant(0.0),
            [
                Primitive {
                    shape: Shape::Circle {
                        center: Vec2::new(0.0, 0.0),
                        radius: 100.0,
                    },
                    style: Style::default(),
                    entity: e,
                    level: 0,
                },
                Primitive {
                    shape: Shape::Line {
                        start: Vec2::new(-1000.0, -500.0),
                        end: Vec2::new(1000.0, 500.0),
                    },
                    style: Style::default(),
                    entity: e,
                    level: 0,
                },
            ],
        );
        let ext = extent(&log).unwrap();
        assert_eq!(ext, (Vec2::new(-1000.0, -500.0), Vec2::new(1000.0, 500.0)));
        let c = top_down(ext, 400.0, 400.0).unwrap();
        let centre = c.project(Vec2::new(0.0, 0.0)).unwrap();
        assert!((centre.x - 200.0).abs() < 1e-9 && (centre.y - 200.0).abs() < 1e-9);
        // y up: a point above the centre is higher on screen.
        assert!(c.project(Vec2::new(0.0, 400.0)).unwrap().y < 200.0);
        // The whole width fits with its margin.
        let right = c.project(Vec2::new(1000.0, 0.0)).unwrap();
        assert!((right.x - (200.0 + 0.96 * 200.0)).abs() < 1e-9, "{right:?}");
        assert!(extent(&Log::new()).is_none());
        // An SSL division B world (mm) is recognised, a tiny one is not.
        let b = (Vec2::new(-4800.0, -3300.0), Vec2::new(4800.0, 3300.0));
        assert_eq!(guess_preset(&log, b).map(|p| p.id), Some("ssl-b"));
        assert!(guess_preset(&log, (Vec2::new(0.0, 0.0), Vec2::new(10.0, 10.0))).is_none());
        assert!(top_down(ext, 0.0, 10.0).is_none());
    }
}
