//! The right panel: time sync (offset, nudges, aligning an event with the
//! current frame), view toggles, the mask ([`super::mask`]), legend,
//! messages and frame statistics.

use eframe::egui;

use crate::calib::Model;
use crate::time::{LogTime, VideoTime};
use crate::viewer::app::{Command, ViewerApp};
use crate::viewer::state::Document;
use crate::viewer::sync::{self, NUDGES};
use crate::viewer::ui::timeline::fmt_time;

pub fn panel(app: &mut ViewerApp, ui: &mut egui::Ui) {
    // Vertically only: text wraps at the panel's width rather than being
    // cut, and nothing widens the panel while playing.
    egui::ScrollArea::vertical()
        .auto_shrink([false; 2])
        .show(ui, |ui| {
            ui.set_max_width(ui.available_width());
            let frame_time = app.frame.as_ref().map_or(app.playback.time, |f| f.time);
            let frame_dur = app.info().map_or(1.0 / 30.0, |i| i.frame_duration());
            // A rendered match is drawn from its own log: nothing to sync.
            if !app.doc.as_ref().is_some_and(Document::draws_its_own_picture) {
                egui::CollapsingHeader::new("Time sync")
                    .default_open(true)
                    .show(ui, |ui| match &mut app.doc {
                        Some(doc) => {
                            sync_section(ui, doc, frame_time, frame_dur);
                            super::find_offset::section(ui, doc, &mut app.finder);
                        }
                        None => {
                            ui.label("Nothing open.");
                        }
                    });
            }
            egui::CollapsingHeader::new("Calibration")
                .default_open(app.calib.active)
                .open(std::mem::take(&mut app.calib.open_section).then_some(true))
                .show(ui, |ui| calibration(app, ui));
            egui::CollapsingHeader::new("View")
                .default_open(true)
                .show(ui, |ui| {
                    if let Some(doc) = &mut app.doc {
                        draw_toggles(ui, &mut doc.session.draw);
                    }
                    if ui.button("Fit video to window").clicked() {
                        app.video_view = Default::default();
                    }
                });
            let mask = egui::CollapsingHeader::new("Mask")
                .default_open(false)
                .show(ui, |ui| match &mut app.doc {
                    Some(doc) => {
                        super::mask::section(ui, &mut doc.session.mask, &mut app.mask_tuning);
                        super::mask::field_region(ui, &mut doc.session.field);
                    }
                    None => {
                        ui.label("Nothing open.");
                    }
                });
            app.mask_tuning.section_open = mask.body_returned.is_some() && app.doc.is_some();
            egui::CollapsingHeader::new("Legend")
                .default_open(false)
                .show(ui, |ui| match (&app.doc, app.log_time()) {
                    (Some(doc), Some(t)) => legend_section(ui, doc, t),
                    _ => {
                        ui.label("Nothing open.");
                    }
                });
            egui::CollapsingHeader::new("Messages")
                .default_open(false)
                .show(ui, |ui| match &app.doc {
                    Some(doc) => messages_section(ui, doc, app.log_time().unwrap_or(LogTime(f64::NAN))),
                    None => {
                        ui.label("Nothing open.");
                    }
                });
            egui::CollapsingHeader::new("Statistics")
                .default_open(false)
                .show(ui, |ui| stats(app, ui));
        });
}

/// The entities drawn now, each with its colour.
pub fn legend_section(ui: &mut egui::Ui, doc: &Document, log_time: LogTime) {
    let filter = doc.filter();
    let entries = crate::viewer::legend::legend(&doc.log, &doc.index, &filter, log_time, doc.threshold());
    if entries.is_empty() {
        ui.weak("Nothing is drawn at this time.");
        return;
    }
    for e in entries {
        ui.horizontal(|ui| {
            let (r, g, b) = (e.color.r(), e.color.g(), e.color.b());
            let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            ui.painter()
                .rect_filled(rect, 2.0, egui::Color32::from_rgb(r, g, b));
            ui.label(&e.entity)
                .on_hover_text(format!("{} primitives drawn", e.count));
            ui.weak(e.count.to_string());
        });
    }
}

/// Most texts the message list shows.
const MAX_MESSAGES: usize = 500;

/// The texts of the log at `log_time` as a list (an agent's messages, the
/// referee's words), each with its entity.
pub fn messages_section(ui: &mut egui::Ui, doc: &Document, log_time: LogTime) {
    let texts = sync::texts_at(&doc.log, &doc.index, log_time, doc.threshold(), MAX_MESSAGES);
    if texts.is_empty() {
        ui.weak("No text at this time.");
        return;
    }
    egui::ScrollArea::vertical().max_height(300.0).show(ui, |ui| {
        for (entity, text) in &texts {
            ui.horizontal_wrapped(|ui| {
                ui.weak(entity);
                ui.label(text);
            });
        }
    });
    if texts.len() == MAX_MESSAGES {
        ui.weak(format!("(the first {MAX_MESSAGES})"));
    }
}

/// Offset, nudges and event alignment. `frame_time` is the video time of
/// the frame on screen; `frame_dur` the length of one frame.
pub fn sync_section(ui: &mut egui::Ui, doc: &mut Document, frame_time: f64, frame_dur: f64) {
    // The frame's own clock when the source has one, else its time.
    let frame_clock = doc.time_map().log_time_at(VideoTime(frame_time)).secs() - doc.session.offset;
    let s = &mut doc.session;
    ui.horizontal(|ui| {
        ui.label("Offset");
        ui.add(
            egui::DragValue::new(&mut s.offset)
                .speed(0.01)
                .max_decimals(4)
                .suffix(" s"),
        )
        .on_hover_text("log time = video time + offset");
    });
    ui.horizontal_wrapped(|ui| {
        for (label, step) in NUDGES {
            let sign = if label.starts_with('−') { -1.0 } else { 1.0 };
            if ui.small_button(label).on_hover_text("nudge the offset").clicked() {
                s.offset = sync::nudge(s.offset, step, sign, frame_dur);
            }
        }
    });
    let log_now = frame_clock + s.offset;
    ui.label(format!(
        "log time here: {}",
        crate::viewer::ui::timeline::fmt_log_time(log_now, doc.log_range.map(|r| r.0))
    ))
    .on_hover_text(format!("{log_now:.6} s on the log's clock"));
    if doc.events.is_empty() {
        ui.weak("The log has no events (persistent frames).");
        return;
    }
    ui.label("Put a log event at this frame:");
    let Some(near) = doc.events.nearest(log_now) else {
        return;
    };
    let i = doc.events.events.iter().position(|e| e == near).unwrap_or(0);
    let lo = i.saturating_sub(3);
    let hi = (i + 4).min(doc.events.len());
    let mut align = None;
    for e in &doc.events.events[lo..hi] {
        let d = e.time - log_now;
        ui.horizontal(|ui| {
            if ui
                .small_button("align")
                .on_hover_text("change the offset so this event starts at the current frame")
                .clicked()
            {
                align = Some(e.time);
            }
            let sign = if d >= 0.0 { "+" } else { "−" };
            ui.monospace(format!("{sign}{}", fmt_time(d.abs())));
        });
        ui.indent(("event", e.frame), |ui| {
            ui.add(egui::Label::new(sync::describe_frame(&doc.log, e.frame)).wrap());
        });
    }
    if let Some(o) = align.and_then(|t| sync::align_offset(t, frame_clock)) {
        doc.session.offset = o;
    }
}

fn calibration(app: &mut ViewerApp, ui: &mut egui::Ui) {
    let snap_running = app.snap_running();
    let mode = &mut app.calib;
    ui.checkbox(&mut mode.active, "Calibration mode")
        .on_hover_text("click the video to add points, drag them to move; Delete removes the selected one");
    ui.horizontal(|ui| {
        ui.label("Model");
        ui.radio_value(&mut mode.model, Model::Homography, "homography");
        ui.radio_value(&mut mode.model, Model::Radial, "radial (lens distortion)");
        ui.radio_value(&mut mode.model, Model::Pinhole, "pinhole (full camera)")
            .on_hover_text("a camera in space, for points at heights (z) and drawings above the floor");
    });
    ui.checkbox(&mut mode.robust, "Leave flagged points out of the fit (RANSAC)");
    ui.horizontal(|ui| {
        let title = mode.field().map_or("none".to_owned(), |f| f.title.to_owned());
        egui::ComboBox::from_label("field")
            .selected_text(title)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut mode.preset, None, "none");
                for f in crate::calib::presets::all() {
                    ui.selectable_value(&mut mode.preset, Some(f.id), f.title);
                }
            });
        ui.checkbox(&mut mode.show_lines, "draw its lines");
    });
    let can_snap = mode.preset.is_some() && app.doc.as_ref().is_some_and(|d| d.calibration.is_some());
    ui.horizontal(|ui| {
        let waiting = mode.snap_waiting.is_some() || snap_running;
        if ui
            .add_enabled(can_snap && !waiting, egui::Button::new("Snap to lines"))
            .on_hover_text(
                "find the field's painted lines near where the calibration puts them — in a fixed camera's \
                 background picture (the median of frames spread over the video: players taken out), else in this \
                 frame — and fit the model to them (from four points clicked to within about 15 px)",
            )
            .on_disabled_hover_text("choose the field, and click four of its points first")
            .clicked()
        {
            app.commands.push(Command::SnapToLines);
        }
        if waiting {
            ui.spinner();
        }
    });
    match &mode.snap {
        Some(Ok(r)) => {
            let v = &r.verdict;
            if r.trusted {
                ui.label(format!(
                    "snapped: {:.0} % of the lines in view on the paint; RMS {:.2} px across them; moved up to {:.1} px",
                    100.0 * v.found_share,
                    r.rms_px,
                    r.moved_px
                ));
            } else {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("not trustworthy: {}", v.reasons.join("; ")),
                );
            }
            egui::CollapsingHeader::new("lines")
                .id_salt("snap lines")
                .show(ui, |ui| {
                    for l in &v.lines {
                        let text = format!(
                            "{:.0} % on paint, {:.0} % beside: {}",
                            100.0 * l.found_share,
                            100.0 * l.off_share,
                            l.line
                        );
                        match &l.against {
                            Some(a) => ui.colored_label(ui.visuals().warn_fg_color, format!("{text} — {a}")),
                            None => ui.label(text),
                        };
                    }
                });
            if mode.snap_pending.is_some()
                && ui
                    .button("Use it anyway")
                    .on_hover_text("put this snapped calibration into the session although its lines are not where the paint is")
                    .clicked()
            {
                app.commands.push(Command::AcceptSnap);
            }
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().warn_fg_color, format!("snap to lines: {e}"));
        }
        None => {}
    }
    match &mode.fit {
        Some(Ok(v)) => {
            let loo = v.loo_rms_px.map_or("–".to_owned(), |l| format!("{l:.2} px"));
            ui.label(format!("RMS {:.2} px, leave-one-out RMS {loo}", v.rms_px));
            if !v.outliers.is_empty() {
                let names: Vec<String> = v.outliers.iter().map(|i| (i + 1).to_string()).collect();
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("flagged: point {}", names.join(", ")),
                );
            }
            for w in &v.warnings {
                ui.colored_label(ui.visuals().warn_fg_color, w);
            }
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().warn_fg_color, crate::error::chain(e));
        }
        None => {
            ui.weak("Add at least four points with world coordinates.");
        }
    }
    let (residuals, flagged) = mode
        .fit_view()
        .map(|v| (v.residuals.clone(), v.outliers.clone()))
        .unwrap_or_default();
    let field = mode.field();
    crate::viewer::ui::calib::points_table(ui, mode, &residuals, &flagged, field.as_ref());
    ui.horizontal(|ui| {
        if ui.button("Load points…").clicked() {
            app.commands.push(Command::LoadCalibPoints);
        }
        if ui
            .add_enabled(
                !app.calib.points.pairs().is_empty(),
                egui::Button::new("Save points…"),
            )
            .on_hover_text("as POINTS.csv for `underlay calib solve`")
            .clicked()
        {
            app.commands.push(Command::SaveCalibPoints);
        }
        if ui
            .add_enabled(!app.calib.points.points.is_empty(), egui::Button::new("Clear"))
            .clicked()
        {
            app.calib.points.clear();
        }
    });
    if let Some(doc) = &app.doc {
        match &doc.calibration {
            Some(c) => {
                let h = c.homography();
                let dist = if c.distortion().is_some() {
                    " with lens distortion"
                } else {
                    ""
                };
                ui.weak(format!(
                    "in the session: homography [{:.3} {:.3} {:.1}; {:.3} {:.3} {:.1}; {:.2e} {:.2e} {:.3}]{dist}",
                    h[0][0], h[0][1], h[0][2], h[1][0], h[1][1], h[1][2], h[2][0], h[2][1], h[2][2]
                ));
            }
            None => {
                ui.weak("The session has no calibration yet: nothing can be drawn.");
            }
        }
    }
    if app.calib_backup.is_some() && ui.button("Undo calibration changes").clicked() {
        app.commands.push(Command::RevertCalibration);
    }
}

fn stats(app: &ViewerApp, ui: &mut egui::Ui) {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    if let Some(i) = app.info() {
        ui.label(format!("{} × {} at {:.2} fps", i.width, i.height, i.fps));
    }
    let w = &app.perf.worker;
    if let Some(last) = w.last() {
        ui.label(format!(
            "last frame: decode {:.1} ms, draw {:.1} ms, picture {:.1} ms",
            ms(last.decode),
            ms(last.process),
            ms(last.convert)
        ));
    }
    if !w.is_empty() {
        let mut tot: Vec<f64> = w.iter().map(|t| ms(t.total())).collect();
        tot.sort_by(f64::total_cmp);
        ui.label(format!(
            "worker per frame: median {:.1} ms, p95 {:.1} ms ({} frames)",
            tot[tot.len() / 2],
            tot[(tot.len() * 95 / 100).min(tot.len() - 1)],
            tot.len()
        ));
    }
    if let Some(s) = app.perf.seeks.last() {
        let first = app.perf.seeks_first.last().filter(|f| *f < s);
        match first {
            Some(f) => ui.label(format!(
                "last seek: {:.0} ms (its keyframe after {:.0} ms)",
                ms(*s),
                ms(*f)
            )),
            None => ui.label(format!("last seek: {:.0} ms", ms(*s))),
        };
    }
}

/// The toggles that change the picture: saved in the session and
/// exported as shown.
pub fn draw_toggles(ui: &mut egui::Ui, t: &mut crate::pipeline::DrawToggles) {
    ui.checkbox(&mut t.overlay, "Overlay");
    ui.checkbox(&mut t.floor_mask, "Hide behind robots (mask)");
    ui.checkbox(&mut t.tint, "Show mask (tint the floor)");
    egui::ComboBox::from_label("behind text")
        .selected_text(t.text.name())
        .show_ui(ui, |ui| {
            for b in crate::draw::TextBackdrop::ALL {
                ui.selectable_value(&mut t.text, b, b.name());
            }
        });
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::*;
    use crate::geom::Vec2;
    use crate::log::{FrameTime, Log, Primitive, Shape, Style};
    use crate::viewer::state::OpenRequest;

    /// A document whose log has events at 1000.5 and 1003.0 (log time).
    fn doc() -> Document {
        let mut doc = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            offset: Some(1000.0),
            ..Default::default()
        })
        .unwrap();
        let mut log = Log::new();
        let e = log.entities.intern("autoref");
        let text = |s: &str| Primitive {
            shape: Shape::Text {
                anchor: Vec2::ZERO,
                text: s.into(),
                size: 20.0,
            },
            style: Style::default(),
            entity: e,
            level: 0,
        };
        log.push_frame(
            FrameTime::Persistent {
                start: 1000.5,
                end: 1001.0,
            },
            [text("ball touched")],
        );
        log.push_frame(
            FrameTime::Persistent {
                start: 1003.0,
                end: 1004.0,
            },
            [text("ball out")],
        );
        doc.set_log(log, "run.ulog".into());
        doc
    }

    fn harness(frame_time: f64) -> Harness<'static, Document> {
        Harness::builder().with_size([400.0, 500.0]).build_ui_state(
            move |ui, d: &mut Document| sync_section(ui, d, frame_time, 0.04),
            doc(),
        )
    }

    #[test]
    fn messages_list_the_texts_of_the_moment() {
        let mut h = Harness::builder().with_size([400.0, 300.0]).build_ui_state(
            |ui, d: &mut Document| messages_section(ui, d, crate::time::LogTime(1003.5)),
            doc(),
        );
        h.run();
        assert!(h.query_by_label("ball out").is_some());
        assert!(h.query_by_label("ball touched").is_none());
        let mut h = Harness::builder().with_size([400.0, 300.0]).build_ui_state(
            |ui, d: &mut Document| messages_section(ui, d, crate::time::LogTime(2000.0)),
            doc(),
        );
        h.run();
        assert!(h.query_by_label("No text at this time.").is_some());
    }

    #[test]
    fn nudges_move_the_offset() {
        let mut h = harness(2.0);
        let mut expect = 1000.0;
        for (label, d) in [
            ("+1 s", 1.0),
            ("+0.1 s", 0.1),
            ("+1 frame", 0.04),
            ("−1 frame", -0.04),
            ("−0.1 s", -0.1),
            ("−1 s", -1.0),
            ("−1 s", -1.0),
        ] {
            h.get_by_label(label).click();
            h.run();
            expect += d;
            let got = h.state().session.offset;
            assert!((got - expect).abs() < 1e-9, "after {label}: {got} != {expect}");
        }
    }

    #[test]
    fn align_puts_the_event_at_this_frame() {
        let mut h = harness(2.0);
        assert!(h.query_by_label("“ball out” (autoref)").is_some());
        // Events are listed in time order: the second "align" is "ball out".
        let aligns: Vec<_> = h.get_all_by_label("align").collect();
        assert_eq!(aligns.len(), 2);
        aligns[1].click();
        h.run();
        assert!((h.state().session.offset - 1001.0).abs() < 1e-9);
    }
}
