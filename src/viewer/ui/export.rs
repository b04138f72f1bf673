//! The export dialog: the options of `underlay export`, a progress bar
//! while the export runs on its own thread, and cancel.

use crate::video::TimeArg;
use eframe::egui;

use crate::viewer::export::{ExportDialog, PRESETS};
use crate::viewer::ui::timeline::fmt_time;

/// What the dialog asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportAction {
    /// Ask for the output file with a save dialog.
    Browse,
    Start,
    Cancel,
}

/// The dialog's contents. `range` is the video's first and last time;
/// `loop_range` the loop, offered as the export range.
pub fn contents(
    ui: &mut egui::Ui,
    d: &mut ExportDialog,
    range: (f64, f64),
    loop_range: Option<(f64, f64)>,
) -> Option<ExportAction> {
    let mut action = None;
    if let Some(r) = &d.running {
        let (frac, fps, eta) = r.status();
        let done = r.progress.done.load(std::sync::atomic::Ordering::Relaxed);
        let mut text = format!("{done} frames, {fps:.1} fps");
        if let Some(e) = eta {
            text.push_str(&format!(", {} left", fmt_time(e.as_secs_f64())));
        }
        ui.label(format!("Exporting to {}", r.output.display()));
        ui.add(
            egui::ProgressBar::new(frac.unwrap_or(0.0))
                .text(text)
                .animate(frac.is_none()),
        );
        let label = if r.is_cancelled() {
            "Cancelling…"
        } else {
            "Cancel"
        };
        if ui
            .add_enabled(!r.is_cancelled(), egui::Button::new(label))
            .clicked()
        {
            action = Some(ExportAction::Cancel);
        }
        return action;
    }
    let o = &mut d.options;
    egui::Grid::new("export_options").num_columns(2).show(ui, |ui| {
        ui.label("Output");
        ui.horizontal(|ui| {
            let r = ui.add(egui::TextEdit::singleline(&mut d.output_text).hint_text("annotated.mp4"));
            r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::TextInput, true, "output file"));
            if ui.button("…").on_hover_text("choose the output file").clicked() {
                action = Some(ExportAction::Browse);
            }
        });
        ui.end_row();
        // The dialog's range is in video seconds, as the timeline shows.
        let secs = |t: Option<TimeArg>| match t {
            Some(TimeArg::Video(s)) => Some(s),
            _ => None,
        };
        let (mut from, mut to) = (secs(o.from), secs(o.to));
        ui.label("Range");
        ui.horizontal(|ui| {
            let mut whole = from.is_none() && to.is_none();
            if ui.radio(whole, "whole video").clicked() {
                from = None;
                to = None;
                whole = true;
            }
            if let Some((a, b)) = loop_range
                && ui
                    .radio(!whole && from == Some(a) && to == Some(b), "the loop")
                    .clicked()
            {
                from = Some(a);
                to = Some(b);
            }
            if ui
                .radio(
                    !whole && (from, to) != (loop_range.map(|l| l.0), loop_range.map(|l| l.1)),
                    "from…to",
                )
                .clicked()
            {
                from = Some(from.unwrap_or(range.0));
                to = Some(to.unwrap_or(range.1));
            }
        });
        ui.end_row();
        if from.is_some() || to.is_some() {
            ui.label("");
            ui.horizontal(|ui| {
                let (mut a, mut b) = (from.unwrap_or(range.0), to.unwrap_or(range.1));
                ui.add(
                    egui::DragValue::new(&mut a)
                        .speed(0.05)
                        .range(range.0..=range.1)
                        .suffix(" s"),
                );
                ui.label("to");
                ui.add(
                    egui::DragValue::new(&mut b)
                        .speed(0.05)
                        .range(range.0..=range.1 + 1.0)
                        .suffix(" s"),
                );
                from = Some(a);
                to = Some(b);
            });
            ui.end_row();
        }
        o.from = from.map(TimeArg::Video);
        o.to = to.map(TimeArg::Video);
        ui.label("Mask");
        ui.checkbox(&mut o.no_mask, "draw over everything (no mask)");
        ui.end_row();
        ui.label("Quality (CRF)");
        ui.add(egui::Slider::new(&mut o.crf, 0..=51).text("lower is better"));
        ui.end_row();
        ui.label("Speed");
        egui::ComboBox::from_label("x264 preset")
            .selected_text(o.preset.as_str())
            .show_ui(ui, |ui| {
                for p in PRESETS {
                    ui.selectable_value(&mut o.preset, p.to_owned(), p);
                }
            });
        ui.end_row();
    });
    o.output = d.output_text.trim().into();
    ui.weak("Entities, levels, offset, calibration, mask and tint come from the session, as shown.");
    let check = o.check();
    if let Err(e) = &check {
        ui.colored_label(ui.visuals().warn_fg_color, e.to_string());
    }
    if ui
        .add_enabled(check.is_ok(), egui::Button::new("Export"))
        .clicked()
    {
        action = Some(ExportAction::Start);
    }
    match &d.last {
        Some(Ok(report)) => {
            ui.label(crate::viewer::export::summary(report, &d.options.output));
            for w in &report.warnings {
                ui.colored_label(ui.visuals().warn_fg_color, format!("note: {w}"));
            }
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, crate::error::chain(e));
        }
        None => {}
    }
    action
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    use super::*;

    #[test]
    fn options_from_the_dialog() {
        let mut h = Harness::builder().with_size([600.0, 400.0]).build_ui_state(
            |ui, s: &mut (ExportDialog, Option<ExportAction>)| {
                if let Some(a) = contents(ui, &mut s.0, (0.0, 20.0), Some((2.0, 5.0))) {
                    s.1 = Some(a);
                }
            },
            (ExportDialog::default(), None),
        );
        assert!(h.query_by_label("choose an output file").is_some());
        h.get_by_label("output file").click();
        h.run();
        h.get_by_label("output file").type_text("out.mp4");
        h.run();
        h.get_by_label("the loop").click();
        h.run();
        h.get_by_label("draw over everything (no mask)").click();
        h.run();
        h.get_by_label("Export").click();
        h.run();
        let (d, action) = h.state();
        assert_eq!(*action, Some(ExportAction::Start));
        assert_eq!(d.options.output, std::path::PathBuf::from("out.mp4"));
        assert_eq!(
            (d.options.from, d.options.to),
            (Some(TimeArg::Video(2.0)), Some(TimeArg::Video(5.0)))
        );
        assert!(d.options.no_mask);
    }
}
