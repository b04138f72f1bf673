//! The field view: the primitives drawn at this time, in world
//! coordinates from above (the field preset's lines under them when one
//! is chosen), beside the video and in step with it — for checking a
//! calibration and for logs with no camera.

use eframe::egui::{self, Color32, Pos2, Stroke};

use crate::log::{Rgba, Shape};
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

fn color32(c: Rgba) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), c.a())
}
