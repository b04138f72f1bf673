//! The field view: the primitives drawn at this time, in world
//! coordinates from above (the field preset's lines under them when one
//! is chosen), beside the video and in step with it — for checking a
//! calibration and for logs with no camera. Shapes above the floor are
//! seen from a camera straight above, each with a stem down to the floor
//! and its height written at its top. Shapes in the picture's pixels
//! have no place on the field and are left out.

use eframe::egui::{self, Color32, Pos2, Stroke};

use crate::log::{Raised, Rgba, Shape};
use crate::viewer::app::ViewerApp;
use crate::viewer::{field_view, inspect};

pub fn panel(app: &mut ViewerApp, ui: &mut egui::Ui) {
    ui.heading("Field");
    let rect = ui.available_rect_before_wrap();
    ui.allocate_rect(rect, egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_rgb(24, 60, 30));
    let (Some(doc), Some(t)) = (&app.doc, app.log_time()) else {
        ui.weak("Nothing open.");
        return;
    };
    let preset = app
        .calib
        .preset
        .and_then(crate::calib::presets::preset)
        .or_else(|| {
            doc.world_extent
                .and_then(|e| field_view::guess_preset(&doc.log, e))
        });
    let extent = preset
        .as_ref()
        .map(|p| (p.size * -0.55, p.size * 0.55))
        .or(doc.world_extent);
    let Some(view) = extent.and_then(|e| field_view::top_down(e, rect.width() as f64, rect.height() as f64))
    else {
        ui.weak("The log has nothing with a place on the field.");
        return;
    };
    let at = |p: &crate::geom::Vec2| Pos2::new(rect.left() + p.x as f32, rect.top() + p.y as f32);
    let mut lines = Vec::new();
    if let Some(p) = &preset {
        for l in &p.lines {
            lines.clear();
            l.project(&view, 0.5, &mut lines);
            for pl in &lines {
                painter.add(egui::Shape::line(
                    pl.iter().map(at).collect(),
                    Stroke::new(1.0, Color32::from_gray(220)),
                ));
            }
        }
    }
    let filter = doc.filter();
    for p in doc.index.select(&doc.log, t, doc.threshold(), &filter).iter() {
        let color = color32(p.style.color);
        match &p.shape {
            Shape::Text { anchor, text, .. } => {
                if let Some(a) = view.project(*anchor) {
                    painter.text(
                        at(&a),
                        egui::Align2::LEFT_BOTTOM,
                        text,
                        egui::FontId::proportional(11.0),
                        color,
                    );
                }
            }
            Shape::Point { position, .. } => {
                if let Some(a) = view.project(*position) {
                    painter.circle_filled(at(&a), 2.5, color);
                }
            }
            Shape::Raised(r) => {
                // Seen from above, heights show as the shape's place against
                // its stem down to the floor, with the height written at
                // the top.
                if let Some((top, foot)) = stem(r)
                    && let (Some(a), Some(b)) = (view.project3(top), view.project3(foot))
                {
                    painter.line_segment([at(&b), at(&a)], Stroke::new(1.0, color.gamma_multiply(0.6)));
                    painter.text(
                        at(&a),
                        egui::Align2::LEFT_BOTTOM,
                        format!("{:.0}", top[2]),
                        egui::FontId::proportional(10.0),
                        color,
                    );
                }
                inspect::outline(&p.shape, &view, &mut lines);
                for pl in &lines {
                    if let [one] = pl.as_slice() {
                        // A point of a cloud.
                        painter.circle_filled(at(one), 1.5, color);
                        continue;
                    }
                    painter.add(egui::Shape::line(
                        pl.iter().map(at).collect(),
                        Stroke::new(1.5, color),
                    ));
                }
            }
            // Not in the world: annotations of the picture only.
            Shape::Picture(_) => {}
            shape => {
                inspect::outline(shape, &view, &mut lines);
                let fill = p.style.fill.map(color32);
                for pl in &lines {
                    let pts: Vec<Pos2> = pl.iter().map(at).collect();
                    if let (Some(f), true) = (fill, pts.len() > 2) {
                        painter.add(egui::Shape::convex_polygon(pts.clone(), f, Stroke::NONE));
                    }
                    painter.add(egui::Shape::line(pts, Stroke::new(1.5, color)));
                }
            }
        }
    }
}

/// The highest point of a raised shape and the floor point below it.
fn stem(r: &Raised) -> Option<([f64; 3], [f64; 3])> {
    let top = match r {
        Raised::Path { points, .. } => points.iter().copied().max_by(|a, b| a[2].total_cmp(&b[2]))?,
        Raised::Circle { center, .. } | Raised::Sphere { center, .. } => *center,
        Raised::Text { anchor: p, .. } | Raised::Point { position: p, .. } => *p,
        Raised::Cylinder { base, height, .. } => [base[0], base[1], base[2] + height],
        Raised::Box { base, size, .. } => [base[0], base[1], base[2] + size[2]],
        Raised::Cone { apex, base, .. } => {
            if apex[2] >= base[2] {
                *apex
            } else {
                *base
            }
        }
        // A cloud's points have no one stem.
        Raised::Points { .. } => return None,
    };
    Some((top, [top[0], top[1], 0.0]))
}

fn color32(c: Rgba) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), c.a())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stem_runs_from_a_shapes_top_down_to_the_floor() {
        let arc = Raised::Path {
            points: vec![[0.0, 0.0, 0.0], [500.0, 0.0, 700.0], [1000.0, 0.0, 0.0]].into(),
            closed: false,
        };
        assert_eq!(stem(&arc), Some(([500.0, 0.0, 700.0], [500.0, 0.0, 0.0])));
        let robot = Raised::Cylinder {
            base: [1.0, 2.0, 0.0],
            radius: 90.0,
            height: 150.0,
        };
        assert_eq!(stem(&robot), Some(([1.0, 2.0, 150.0], [1.0, 2.0, 0.0])));
    }
}
