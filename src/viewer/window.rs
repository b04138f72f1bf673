//! The window's frame loop, as eframe runs it: the app's per-frame logic
//! (frames in, clock forward), then the panels ([`super::ui`]) that show
//! the state and record commands, then the commands applied. The app's
//! state and logic ([`super::app`]) know nothing of the panels.

use std::time::Instant;

use eframe::egui;

use super::app::ViewerApp;

impl eframe::App for ViewerApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        ViewerApp::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let t0 = Instant::now();
        super::ui::show(self, ui);
        self.run_commands();
        if self.playback.playing {
            self.perf.push_ui_build(t0.elapsed());
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if !self.is_screenshot_run() {
            eframe::set_value(storage, eframe::APP_KEY, &self.persisted);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        !self.is_screenshot_run()
    }
}
