//! The video panel: the frame as drawn by the pipeline, zoomed and panned.
//! Image pixels map to the screen through one `emath::RectTransform`, the
//! same way world points map to image pixels through the calibration.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Vec2, emath::RectTransform};

use crate::viewer::app::{VideoView, ViewerApp};
use crate::viewer::inspect;

/// Zoom limits (1 = the frame fits the panel).
const ZOOM_RANGE: (f32, f32) = (0.25, 32.0);

/// Image pixels → screen for a frame of `size` shown in `panel` with `view`.
pub fn image_to_screen(view: &VideoView, panel: Rect, size: [usize; 2]) -> RectTransform {
    let (w, h) = (size[0].max(1) as f32, size[1].max(1) as f32);
    let fit = (panel.width() / w).min(panel.height() / h).max(1e-6);
    let scale = fit * view.zoom;
    let center = view.center.unwrap_or(Pos2::new(w / 2.0, h / 2.0));
    let min = panel.center() - center.to_vec2() * scale;
    let screen = Rect::from_min_size(min, Vec2::new(w * scale, h * scale));
    RectTransform::from_to(Rect::from_min_size(Pos2::ZERO, Vec2::new(w, h)), screen)
}

/// Zooms by `factor` keeping image point under `anchor` (screen) fixed.
pub fn zoom_about(view: &mut VideoView, panel: Rect, size: [usize; 2], anchor: Pos2, factor: f32) {
    let to_screen = image_to_screen(view, panel, size);
    let to_image = to_screen.inverse();
    let img_anchor = to_image.transform_pos(anchor);
    let zoom = (view.zoom * factor).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
    let (w, h) = (size[0].max(1) as f32, size[1].max(1) as f32);
    let fit = (panel.width() / w).min(panel.height() / h).max(1e-6);
    let scale = fit * zoom;
    // Choose the centre so that img_anchor lands on anchor again.
    let center = img_anchor - (anchor - panel.center()) / scale;
    view.zoom = zoom;
    view.center = Some(center);
}

pub fn panel(app: &mut ViewerApp, ui: &mut egui::Ui) {
    let panel = ui.available_rect_before_wrap();
    let resp = ui.allocate_rect(panel, Sense::click_and_drag());
    let painter = ui.painter_at(panel);
    painter.rect_filled(panel, 0.0, Color32::from_gray(16));
    let shown = app.frame.as_ref().filter(|f| {
        if f.planes {
            app.planes.is_some()
        } else {
            app.texture.is_some()
        }
    });
    let Some(frame) = shown else {
        painter.text(
            panel.center(),
            egui::Align2::CENTER_CENTER,
            if app.doc.is_some() {
                "decoding…"
            } else {
                "Open a session or a video (File → Open, or drop files here)"
            },
            egui::FontId::proportional(18.0),
            ui.visuals().weak_text_color(),
        );
        return;
    };
    let size = frame.size;
    let to_screen = image_to_screen(&app.video_view, panel, size);
    // Tell the worker how large the frame is on screen (physical pixels).
    let ppp = ui.ctx().pixels_per_point();
    let shown = to_screen.to().size() * ppp;
    let display = [shown.x.ceil().max(1.0) as usize, shown.y.ceil().max(1.0) as usize];
    if app.display_size != Some(display) {
        app.display_size = Some(display);
        if let Some(p) = &app.player {
            p.set_display_size(display);
        }
    }
    match (&app.planes, &app.texture) {
        (Some(view), _) if frame.planes => {
            // The factor the player would reduce an RGB picture by.
            let k = (size[0] / display[0]).min(size[1] / display[1]).clamp(1, 4);
            view.paint(&painter, *to_screen.to(), panel, k);
        }
        (_, Some(tex)) => {
            painter.image(
                tex.id(),
                *to_screen.to(),
                Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                Color32::WHITE,
            );
        }
        _ => {}
    }
    // "This is floor": the click picks the floor's colour, nothing else.
    let picking = app.mask_tuning.picking;
    if picking {
        ui.ctx().set_cursor_icon(egui::CursorIcon::Crosshair);
        if resp.clicked()
            && let Some(p) = resp.interact_pointer_pos()
        {
            app.pick_floor_at(to_screen.inverse().transform_pos(p));
        }
    }
    let calib_used = !picking && crate::viewer::ui::calib::interact(ui, &resp, &to_screen, &mut app.calib);
    if app.calib.active {
        let calib = app.doc.as_ref().and_then(|d| d.calibration.as_ref());
        if let Some(c) = calib {
            // The check lines stay on the picture.
            let on_video = painter.with_clip_rect(to_screen.to().intersect(panel));
            crate::viewer::ui::calib::paint_check(&on_video, &to_screen, &app.calib, c);
        }
        let flagged = app
            .calib
            .fit_view()
            .map(|v| v.outliers.clone())
            .unwrap_or_default();
        crate::viewer::ui::calib::paint(&painter, &to_screen, &app.calib, &flagged);
    }
    // Zoom with the wheel (or pinch) about the pointer; pan by dragging
    // (with the middle or right button in calibration mode).
    if let Some(p) = resp.hover_pos() {
        let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
        let factor = zoom * (scroll / 200.0).exp();
        if (factor - 1.0).abs() > 1e-4 {
            zoom_about(&mut app.video_view, panel, size, p, factor);
        }
    }
    let pan = if app.calib.active {
        resp.dragged_by(egui::PointerButton::Middle) || resp.dragged_by(egui::PointerButton::Secondary)
    } else {
        resp.dragged()
    };
    if pan && !calib_used {
        let to_image = to_screen.inverse();
        let d = to_image.transform_pos(Pos2::ZERO + resp.drag_delta()) - to_image.transform_pos(Pos2::ZERO);
        let c = app
            .video_view
            .center
            .unwrap_or(Pos2::new(size[0] as f32 / 2.0, size[1] as f32 / 2.0));
        app.video_view.center = Some(c - d);
    }
    if resp.double_clicked() && !app.calib.active {
        app.video_view = VideoView::default();
    }
    inspect(app, ui, &resp, &painter, &to_screen);
    if let Some(p) = resp.hover_pos().filter(|_| !app.is_screenshot_run()) {
        let px = to_screen.inverse().transform_pos(p);
        let mut text = format!("pixel ({:.0}, {:.0})", px.x, px.y);
        let at = crate::geom::Vec2::new(px.x as f64, px.y as f64);
        if let Some(doc) = &app.doc
            && let Some(c) = &doc.calibration
            && let Some(w) = c.unproject(at)
        {
            let d = inspect::precision(c, at);
            text.push_str(&format!(
                "  world ({:.d$}, {:.d$}) {}",
                w.x, w.y, doc.log.header.world_unit
            ));
        }
        painter.text(
            panel.left_bottom() + Vec2::new(6.0, -6.0),
            egui::Align2::LEFT_BOTTOM,
            text,
            egui::FontId::monospace(12.0),
            Color32::from_gray(220),
        );
    }
}

/// Hovering a drawing tells what it is; clicking pins it (highlighted,
/// its description in a window until closed).
fn inspect(
    app: &mut ViewerApp,
    ui: &egui::Ui,
    resp: &egui::Response,
    painter: &egui::Painter,
    to_screen: &RectTransform,
) {
    // A click that picked the floor's colour pins nothing.
    let picking = app.mask_tuning.picking || app.mask_tuning.waiting.is_some();
    let Some(doc) = &app.doc else { return };
    let Some(c) = doc.calibration.as_ref().or(doc.source_calibration.as_ref()) else {
        return;
    };
    let highlight = |position: usize, color: Color32| {
        let Some(p) = doc.log.primitives.get(position) else {
            return;
        };
        let mut lines = Vec::new();
        inspect::outline(&p.shape, c, &mut lines);
        let screen = |v: &crate::geom::Vec2| to_screen.transform_pos(Pos2::new(v.x as f32, v.y as f32));
        for l in &lines {
            match l.as_slice() {
                [p] => {
                    painter.circle_stroke(screen(p), 6.0, egui::Stroke::new(2.0, color));
                }
                pts => {
                    painter.add(egui::Shape::line(
                        pts.iter().map(screen).collect(),
                        egui::Stroke::new(2.5, color),
                    ));
                }
            }
        }
    };
    if let Some(p) = app.pinned {
        highlight(p, Color32::from_rgb(255, 200, 0));
    }
    let hovered = resp
        .hover_pos()
        .filter(|_| !app.calib.active && !app.is_screenshot_run() && !resp.dragged());
    let mut hit = None;
    if let (Some(pos), Some(t)) = (hovered, app.log_time()) {
        let px = to_screen.inverse().transform_pos(pos);
        let scale = to_screen.scale().x.max(1e-6) as f64;
        let filter = doc.filter();
        hit = inspect::hit_test(
            &doc.log,
            &doc.index,
            &filter,
            (t, doc.threshold()),
            c,
            crate::geom::Vec2::new(px.x as f64, px.y as f64),
            6.0 / scale,
        );
        if let Some(h) = &hit {
            highlight(h.position, Color32::from_rgb(255, 255, 255));
            let d = inspect::precision(c, crate::geom::Vec2::new(px.x as f64, px.y as f64));
            let text = inspect::describe(&doc.log, h.position, d);
            resp.clone().on_hover_text_at_pointer(text);
        }
    }
    app.hovered = hit.as_ref().map(|h| h.position);
    if resp.clicked() && !app.calib.active && !picking {
        app.pinned = hit.map(|h| h.position);
    }
    if let Some(p) = app.pinned {
        let text = inspect::describe(&doc.log, p, 2);
        let mut open = true;
        egui::Window::new("Pinned drawing")
            .open(&mut open)
            .resizable(false)
            .default_pos(resp.rect.right_top() + Vec2::new(-320.0, 10.0))
            .show(ui.ctx(), |ui| {
                ui.label(text);
            });
        if !open {
            app.pinned = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_centers_and_zoom_keeps_anchor() {
        let panel = Rect::from_min_size(Pos2::new(10.0, 20.0), Vec2::new(400.0, 400.0));
        let mut v = VideoView::default();
        let t = image_to_screen(&v, panel, [200, 100]);
        assert_eq!(
            *t.to(),
            Rect::from_min_size(Pos2::new(10.0, 120.0), Vec2::new(400.0, 200.0))
        );
        let anchor = Pos2::new(100.0, 150.0);
        let before = t.inverse().transform_pos(anchor);
        zoom_about(&mut v, panel, [200, 100], anchor, 3.0);
        let after = image_to_screen(&v, panel, [200, 100])
            .inverse()
            .transform_pos(anchor);
        assert!((before - after).length() < 1e-3, "{before:?} {after:?}");
        assert_eq!(v.zoom, 3.0);
        zoom_about(&mut v, panel, [200, 100], anchor, 1000.0);
        assert_eq!(v.zoom, ZOOM_RANGE.1);
    }
}
