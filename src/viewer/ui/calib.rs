//! Calibration mode on screen: points drawn over the video (click to add,
//! drag to move), and the table of correspondences in the side panel
//! (world coordinates typed in, points deleted).

use eframe::egui::{self, Color32, Pos2, Response, Role, Stroke, WidgetInfo, emath::RectTransform};

use crate::calib::Calibration;
use crate::calib::presets::FieldPreset;
use crate::geom::Vec2;
use crate::viewer::calibrate::CalibMode;

/// How close (screen points) a click must be to grab a point.
const GRAB_RADIUS: f32 = 10.0;

const POINT_COLOR: Color32 = Color32::from_rgb(0, 220, 255);
const SELECTED_COLOR: Color32 = Color32::from_rgb(255, 230, 0);
const INCOMPLETE_COLOR: Color32 = Color32::from_rgb(200, 200, 200);

fn to_vec2(p: Pos2) -> Vec2 {
    Vec2::new(p.x as f64, p.y as f64)
}

fn to_pos(v: Vec2) -> Pos2 {
    Pos2::new(v.x as f32, v.y as f32)
}

/// Handles clicks and drags on the video in calibration mode; returns
/// whether it used the pointer (so the video does not pan).
pub fn interact(ui: &egui::Ui, resp: &Response, to_screen: &RectTransform, mode: &mut CalibMode) -> bool {
    if !mode.active {
        return false;
    }
    let to_image = to_screen.inverse();
    let scale = (to_screen.scale().x as f64).max(1e-6);
    let grab = |mode: &CalibMode, screen: Pos2| {
        mode.points.hit(
            to_vec2(to_image.transform_pos(screen)),
            GRAB_RADIUS as f64 / scale,
        )
    };
    let mut used = false;
    if resp.drag_started_by(egui::PointerButton::Primary)
        && let Some(p) = resp.interact_pointer_pos()
    {
        mode.dragging = grab(mode, p);
        if mode.dragging.is_some() {
            mode.points.selected = mode.dragging;
        }
    }
    if let Some(i) = mode.dragging {
        used = true;
        if let Some(p) = resp.interact_pointer_pos() {
            mode.points.move_to(i, to_vec2(to_image.transform_pos(p)));
        }
        if !resp.dragged() {
            mode.dragging = None;
        }
    }
    if resp.clicked_by(egui::PointerButton::Primary)
        && let Some(p) = resp.interact_pointer_pos()
    {
        used = true;
        match grab(mode, p) {
            Some(i) => mode.points.selected = Some(i),
            None => {
                mode.points.add(to_vec2(to_image.transform_pos(p)));
            }
        }
    }
    if let Some(i) = mode.points.selected
        && !ui.ctx().egui_wants_keyboard_input()
        && ui.input_mut(|inp| {
            inp.consume_key(egui::Modifiers::NONE, egui::Key::Delete)
                || inp.consume_key(egui::Modifiers::NONE, egui::Key::Backspace)
        })
    {
        mode.points.remove(i);
    }
    used
}

/// Draws the points (numbered; the selected one highlighted; points
/// without world coordinates grey) over the video.
pub fn paint(painter: &egui::Painter, to_screen: &RectTransform, mode: &CalibMode, flagged: &[usize]) {
    for (i, p) in mode.points.points.iter().enumerate() {
        let c = to_screen.transform_pos(to_pos(p.image));
        let color = if flagged.contains(&i) {
            Color32::from_rgb(255, 60, 60)
        } else if mode.points.selected == Some(i) {
            SELECTED_COLOR
        } else if p.world.is_none() {
            INCOMPLETE_COLOR
        } else {
            POINT_COLOR
        };
        painter.circle_stroke(c, 6.0, Stroke::new(2.0, color));
        painter.line_segment(
            [c - egui::vec2(3.0, 0.0), c + egui::vec2(3.0, 0.0)],
            Stroke::new(1.0, color),
        );
        painter.line_segment(
            [c - egui::vec2(0.0, 3.0), c + egui::vec2(0.0, 3.0)],
            Stroke::new(1.0, color),
        );
        painter.text(
            c + egui::vec2(8.0, -8.0),
            egui::Align2::LEFT_BOTTOM,
            (i + 1).to_string(),
            egui::FontId::proportional(14.0),
            color,
        );
    }
}

/// The table of points: image position, world position (typed, or picked
/// from the field `preset`), residual, delete. `residuals[i]` is shown
/// beside point `i` when known; `flagged` points are marked as outliers.
pub fn points_table(
    ui: &mut egui::Ui,
    mode: &mut CalibMode,
    residuals: &[Option<f64>],
    flagged: &[usize],
    preset: Option<&FieldPreset>,
) {
    if mode.points.points.is_empty() {
        ui.weak("Click the video to add a point, then type its world position or pick a field point.");
        return;
    }
    let mut remove = None;
    let mut edits = Vec::new();
    let mut heights = Vec::new();
    let mut picks = Vec::new();
    let grid = egui::Grid::new("calib_points").striped(true).num_columns(8);
    // Wider than the panel with a field's column: it scrolls sideways
    // rather than widening the panel (which would push the rest out of view).
    egui::ScrollArea::horizontal()
        .id_salt("calib_points_scroll")
        .show(ui, |ui| {
            grid.show(ui, |ui| {
                ui.strong("#");
                ui.strong("u, v (px)");
                ui.strong("x");
                ui.strong("y");
                ui.strong("z").on_hover_text("height above the floor (a post's or a pole's top); points above it need the pinhole model");
                ui.strong("residual");
                ui.strong(if preset.is_some() { "field point" } else { "" });
                ui.end_row();
                for (i, p) in mode.points.points.iter().enumerate() {
                    let selected = mode.points.selected == Some(i);
                    if ui.selectable_label(selected, format!("{}", i + 1)).clicked() {
                        mode.points.selected = Some(i);
                    }
                    ui.monospace(format!("{:.1}, {:.1}", p.image.x, p.image.y));
                    let mut w = p.world.unwrap_or(Vec2::ZERO);
                    let rx = ui.add(egui::DragValue::new(&mut w.x).speed(1.0));
                    rx.widget_info(|| {
                        WidgetInfo::labeled(Role::SpinButton, true, format!("x of point {}", i + 1))
                    });
                    let ry = ui.add(egui::DragValue::new(&mut w.y).speed(1.0));
                    ry.widget_info(|| {
                        WidgetInfo::labeled(Role::SpinButton, true, format!("y of point {}", i + 1))
                    });
                    let mut z = p.height;
                    let rz = ui.add(egui::DragValue::new(&mut z).speed(1.0));
                    rz.widget_info(|| {
                        WidgetInfo::labeled(Role::SpinButton, true, format!("z of point {}", i + 1))
                    });
                    if rx.changed() || ry.changed() {
                        edits.push((i, w));
                    }
                    if rz.changed() {
                        heights.push((i, z));
                    }
                    match residuals.get(i).copied().flatten() {
                        Some(r) if flagged.contains(&i) => {
                            ui.colored_label(ui.visuals().error_fg_color, format!("{r:.2} px outlier"))
                                .on_hover_text("flagged: far out of line with the other points");
                        }
                        Some(r) => {
                            ui.monospace(format!("{r:.2} px"));
                        }
                        None if p.world.is_none() => {
                            ui.weak("type x, y");
                        }
                        None => {
                            ui.weak("–");
                        }
                    }
                    match preset {
                        Some(f) => field_point_combo(ui, i, p.name.as_deref(), f, &mut picks),
                        None => {
                            ui.label("");
                        }
                    }
                    let del = ui.small_button("×");
                    del.widget_info(|| {
                        WidgetInfo::labeled(Role::Button, true, format!("delete point {}", i + 1))
                    });
                    if del.clicked() {
                        remove = Some(i);
                    }
                    ui.end_row();
                }
            })
        });
    for (i, w) in edits {
        mode.points.set_world(i, Some(w), None);
    }
    for (i, z) in heights {
        mode.points.set_height(i, z);
    }
    for (i, w, name) in picks {
        mode.points.set_world(i, Some(w), Some(name));
    }
    if let Some(i) = remove {
        mode.points.remove(i);
    }
}

/// A combo box choosing which named field point point `i` is.
fn field_point_combo(
    ui: &mut egui::Ui,
    i: usize,
    current: Option<&str>,
    field: &FieldPreset,
    picks: &mut Vec<(usize, Vec2, String)>,
) {
    let resp = egui::ComboBox::from_id_salt(("field point", i))
        .selected_text(current.unwrap_or("pick…"))
        .width(120.0)
        .show_ui(ui, |ui| {
            for np in &field.points {
                if ui
                    .selectable_label(current == Some(np.name.as_str()), &np.name)
                    .clicked()
                {
                    picks.push((i, np.pos, np.name.clone()));
                }
            }
        })
        .response;
    resp.widget_info(|| WidgetInfo::labeled(Role::ComboBox, true, format!("field point of point {}", i + 1)));
}

/// Draws the field preset's lines through `calib` (a visual check of the
/// calibration) and, for each point, where its world position maps to.
pub fn paint_check(
    painter: &egui::Painter,
    to_screen: &RectTransform,
    mode: &CalibMode,
    calib: &Calibration,
) {
    let color = Color32::from_rgba_unmultiplied(255, 0, 255, 200);
    if mode.show_lines
        && let Some(field) = mode.field()
    {
        let mut out = Vec::new();
        for l in &field.lines {
            out.clear();
            l.project(calib, 0.5, &mut out);
            for poly in &out {
                let pts: Vec<Pos2> = poly.iter().map(|&p| to_screen.transform_pos(to_pos(p))).collect();
                painter.add(egui::Shape::line(pts, Stroke::new(1.5, color)));
            }
        }
    }
    for p in &mode.points.points {
        if let Some(w) = p.world
            && let Some(px) = calib.project(w)
        {
            let a = to_screen.transform_pos(to_pos(p.image));
            let b = to_screen.transform_pos(to_pos(px));
            painter.line_segment([a, b], Stroke::new(1.0, color));
            let s = 3.0;
            painter.line_segment(
                [b - egui::vec2(s, s), b + egui::vec2(s, s)],
                Stroke::new(1.5, color),
            );
            painter.line_segment(
                [b - egui::vec2(s, -s), b + egui::vec2(s, -s)],
                Stroke::new(1.5, color),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::*;
    use eframe::egui::{Rect, Sense, Vec2 as EVec2};

    /// The video area: a 200×100 image shown 2× at (50, 50).
    fn transform() -> RectTransform {
        RectTransform::from_to(
            Rect::from_min_size(Pos2::ZERO, EVec2::new(200.0, 100.0)),
            Rect::from_min_size(Pos2::new(50.0, 50.0), EVec2::new(400.0, 200.0)),
        )
    }

    fn video_harness() -> Harness<'static, CalibMode> {
        let mut mode = CalibMode::default();
        mode.active = true;
        Harness::builder().with_size([500.0, 300.0]).build_ui_state(
            |ui, mode: &mut CalibMode| {
                let t = transform();
                let resp = ui.allocate_rect(*t.to(), Sense::click_and_drag());
                interact(ui, &resp, &t, mode);
                paint(ui.painter(), &t, mode, &[]);
            },
            mode,
        )
    }

    fn press(h: &Harness<'_, CalibMode>, pos: Pos2, pressed: bool) {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }

    #[test]
    fn click_adds_a_point_in_image_coordinates() {
        let mut h = video_harness();
        let at = Pos2::new(150.0, 100.0); // image (50, 25)
        h.hover_at(at);
        h.run();
        press(&h, at, true);
        press(&h, at, false);
        h.run();
        let pts = &h.state().points.points;
        assert_eq!(pts.len(), 1);
        assert!(
            (pts[0].image - Vec2::new(50.0, 25.0)).length() < 1e-3,
            "{:?}",
            pts[0].image
        );
        assert_eq!(h.state().points.selected, Some(0));
    }

    #[test]
    fn dragging_a_point_moves_it() {
        let mut h = video_harness();
        h.state_mut().points.add(Vec2::new(50.0, 25.0));
        h.state_mut().points.selected = None;
        let from = Pos2::new(151.0, 101.0); // within grab radius of (150, 100)
        h.hover_at(from);
        h.run();
        press(&h, from, true);
        h.run();
        for k in 1..=10 {
            h.hover_at(from + EVec2::new(4.0 * k as f32, 2.0 * k as f32));
            h.run();
        }
        press(&h, Pos2::new(191.0, 121.0), false);
        h.run();
        let pts = &h.state().points.points;
        assert_eq!(pts.len(), 1, "no point added by the drag");
        // Moved by (40, 20) screen points = (20, 10) image pixels (+ the 1 px grab offset).
        assert!(
            (pts[0].image - Vec2::new(70.5, 35.5)).length() < 1.0,
            "{:?}",
            pts[0].image
        );
        assert_eq!(h.state().points.selected, Some(0));
    }

    #[test]
    fn picking_a_field_point_sets_world_coordinates() {
        let mut mode = CalibMode::default();
        mode.points.add(Vec2::new(10.0, 20.0));
        mode.preset = Some("ssl-b");
        let mut h = Harness::builder().with_size([700.0, 600.0]).build_ui_state(
            |ui, mode: &mut CalibMode| {
                let f = mode.field();
                points_table(ui, mode, &[], &[], f.as_ref())
            },
            mode,
        );
        h.get_by_label("field point of point 1").click();
        h.run();
        h.get_by_label("corner +x+y").click();
        h.run();
        let p = &h.state().points.points[0];
        assert_eq!(p.world, Some(Vec2::new(4500.0, 3000.0)));
        assert_eq!(p.name.as_deref(), Some("corner +x+y"));
    }

    #[test]
    fn table_types_world_coordinates_and_deletes() {
        let mut mode = CalibMode::default();
        mode.points.add(Vec2::new(10.0, 20.0));
        mode.points.add(Vec2::new(30.0, 40.0));
        let mut h = Harness::builder().with_size([500.0, 300.0]).build_ui_state(
            |ui, mode: &mut CalibMode| points_table(ui, mode, &[Some(0.5), None], &[0], None),
            mode,
        );
        h.get_by_label("x of point 2").set_value_accesskit(1500.0);
        h.run();
        h.get_by_label("y of point 2").set_value_accesskit(-750.0);
        h.run();
        assert_eq!(h.state().points.points[1].world, Some(Vec2::new(1500.0, -750.0)));
        assert_eq!(h.state().points.pairs().len(), 1);
        assert!(
            h.query_by_label("0.50 px outlier").is_some(),
            "flagged residual shown"
        );
        h.get_by_label("delete point 1").click();
        h.run();
        let pts = &h.state().points.points;
        assert_eq!(pts.len(), 1);
        assert_eq!(pts[0].image, Vec2::new(30.0, 40.0));
    }
}
