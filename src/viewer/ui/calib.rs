//! Calibration mode on screen: points drawn over the video (click to add,
//! drag to move), and the table of correspondences in the side panel
//! (world coordinates typed in, points deleted).

use eframe::egui::{self, Color32, Pos2, Response, Role, Stroke, WidgetInfo, emath::RectTransform};

use crate::log::Vec2;
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

/// The table of points: image position, world position (typed), delete.
/// `residuals[i]` is shown beside point `i` when known; `flagged` points
/// are marked as outliers.
pub fn points_table(ui: &mut egui::Ui, mode: &mut CalibMode, residuals: &[Option<f64>], flagged: &[usize]) {
    if mode.points.points.is_empty() {
        ui.weak("Click the video to add a point, then type its world position.");
        return;
    }
    let mut remove = None;
    let mut edits = Vec::new();
    egui::Grid::new("calib_points")
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            ui.strong("#");
            ui.strong("u, v (px)");
            ui.strong("x");
            ui.strong("y");
            ui.strong("residual");
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
                if rx.changed() || ry.changed() {
                    edits.push((i, w));
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
                let del = ui.small_button("×");
                del.widget_info(|| {
                    WidgetInfo::labeled(Role::Button, true, format!("delete point {}", i + 1))
                });
                if del.clicked() {
                    remove = Some(i);
                }
                ui.end_row();
            }
        });
    for (i, w) in edits {
        mode.points.set_world(i, Some(w), None);
    }
    if let Some(i) = remove {
        mode.points.remove(i);
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
        let mode = CalibMode {
            active: true,
            ..Default::default()
        };
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
    fn table_types_world_coordinates_and_deletes() {
        let mut mode = CalibMode::default();
        mode.points.add(Vec2::new(10.0, 20.0));
        mode.points.add(Vec2::new(30.0, 40.0));
        let mut h = Harness::builder().with_size([500.0, 300.0]).build_ui_state(
            |ui, mode: &mut CalibMode| points_table(ui, mode, &[Some(0.5), None], &[0]),
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
