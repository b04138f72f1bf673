//! The live bar above the transport (live mode only): LIVE or REVIEW,
//! "Pause" / "Back to live", the run's rates, drops and latency, the
//! replay buffer's extent and memory, every source's packets, and
//! "NO SIGNAL since …" while the camera is silent.

use eframe::egui::{self, Color32, RichText};

use crate::viewer::app::{Command, ViewerApp};
use crate::viewer::live::{no_signal_text, sources_text, status_text};

/// Colour of the LIVE mark.
const LIVE_COLOR: Color32 = Color32::from_rgb(230, 40, 40);

pub fn bar(app: &mut ViewerApp, ui: &mut egui::Ui) {
    let Some(live) = &app.live else { return };
    let following = live.following;
    let mut command = None;
    ui.horizontal_wrapped(|ui| {
        if following {
            let (dot, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().circle_filled(dot.center(), 5.0, LIVE_COLOR);
            ui.label(RichText::new("LIVE").strong().color(LIVE_COLOR));
            if ui
                .button("Pause live")
                .on_hover_text("review the last minutes (Space); the outputs run on")
                .clicked()
            {
                command = Some(Command::TogglePlay);
            }
        } else {
            ui.label(RichText::new("REVIEW").strong());
            if ui
                .button("Back to live")
                .on_hover_text("follow the camera again")
                .clicked()
            {
                command = Some(Command::BackToLive);
            }
        }
        match &live.ended {
            Some(Ok(_)) => {
                ui.label(RichText::new("the run ended").strong());
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("the run stopped: {e}"));
            }
            None => {}
        }
        if let Some(n) = no_signal_text(live) {
            ui.label(RichText::new(n).strong().color(ui.visuals().error_fg_color));
        }
        ui.monospace(status_text(live));
        if let Some(s) = sources_text(live) {
            ui.monospace(s);
        }
        if let Some(e) = live.status.as_ref().and_then(|s| s.camera.last_error.as_ref()) {
            ui.weak(format!("camera: {e}"));
        }
    });
    if let Some(c) = command {
        app.commands.push(c);
    }
    ui.separator();
}
