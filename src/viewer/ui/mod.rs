//! The viewer's panels. Each panel shows part of the state, edits plain
//! values in place and records [`Command`]s for actions with side effects;
//! the app applies them after layout.
//!
//! Layout: menu bar on top, entities on the left, sync/view/calibration on
//! the right, transport and timeline at the bottom, the video in the middle.

pub mod calib;
pub mod entities;
pub mod export;
pub mod field;
pub mod find_offset;
pub mod live;
pub mod mask;
pub mod side;
pub mod timeline;
pub mod video;

use eframe::egui;

use super::app::{Command, OpenKind, ViewerApp};

/// Draws the whole window.
pub fn show(app: &mut ViewerApp, ui: &mut egui::Ui) {
    keyboard(app, ui.ctx());
    dropped_files(app, ui.ctx());
    // Set again by the side panel when it shows the mask section open.
    app.mask_tuning.section_open = false;
    egui::Panel::top("menu").show(ui, |ui| menu_bar(app, ui));
    egui::Panel::bottom("status").show(ui, |ui| status_bar(app, ui));
    if app.persisted.layout.timeline {
        egui::Panel::bottom("timeline").show(ui, |ui| timeline::panel(app, ui));
    }
    if app.persisted.layout.entities {
        egui::Panel::left("entities")
            .default_size(260.0)
            .size_range(160.0..=480.0)
            .show(ui, |ui| {
                let lt = app.log_time();
                // Following a live camera moves the time as playing does.
                let playing = app.playback.playing || app.live_following();
                match (&mut app.doc, lt) {
                    (Some(doc), Some(t)) => {
                        app.entities.update_counts(doc, t, playing);
                        entities::panel(ui, &mut app.entities, doc);
                    }
                    _ => {
                        ui.heading("Entities");
                        ui.label("Open a session, or a video and a log.");
                    }
                }
            });
    }
    if app.persisted.layout.side {
        egui::Panel::right("side")
            .default_size(300.0)
            .size_range(200.0..=520.0)
            .show(ui, |ui| side::panel(app, ui));
    }
    if app.persisted.layout.field {
        egui::Panel::right("field")
            .default_size(480.0)
            .size_range(200.0..=900.0)
            .show(ui, |ui| field::panel(app, ui));
    }
    egui::CentralPanel::default().show(ui, |ui| video::panel(app, ui));
    export_window(app, ui.ctx());
    unsaved_prompt(app, ui.ctx());
}

/// Asks what to do with unsaved changes before closing or opening another
/// session.
fn unsaved_prompt(app: &mut ViewerApp, ctx: &egui::Context) {
    let Some(pending) = &app.confirm else { return };
    let name = app
        .doc
        .as_ref()
        .and_then(|d| d.session_path.as_ref())
        .map_or_else(|| "the session".to_owned(), |p| p.display().to_string());
    let doing = match pending {
        super::app::Pending::Close => "closing",
        super::app::Pending::Run(_) => "opening another",
    };
    let mut answer = None;
    let mut asked = false;
    egui::Modal::new(egui::Id::unique("unsaved")).show(ctx, |ui| {
        ui.heading("Unsaved changes");
        ui.label(format!("Save the changes to {name} before {doing}?"));
        ui.horizontal(|ui| {
            if ui.button("Save").clicked() {
                answer = Some(Some(true));
            }
            if ui.button("Don't save").clicked() {
                answer = Some(Some(false));
            }
            if ui.button("Cancel").clicked() {
                answer = Some(None);
            }
        });
        asked = true;
    });
    if let Some(a) = answer {
        app.answer(ctx, a);
    } else if !asked {
        app.confirm = None;
    }
}

fn export_window(app: &mut ViewerApp, ctx: &egui::Context) {
    if !app.export.open {
        return;
    }
    let range = (app.playback.start(), app.playback.end());
    let loop_range = app.playback.loop_range;
    let mut open = true;
    let mut action = None;
    egui::Window::new("Export video")
        .open(&mut open)
        .resizable(false)
        .collapsible(false)
        .show(ctx, |ui| {
            action = export::contents(ui, &mut app.export, range, loop_range)
        });
    app.export.open = open || app.export.running.is_some();
    match action {
        Some(export::ExportAction::Browse) => app.commands.push(Command::BrowseExport),
        Some(export::ExportAction::Start) => app.commands.push(Command::StartExport),
        Some(export::ExportAction::Cancel) => app.commands.push(Command::CancelExport),
        None => {}
    }
}

fn menu_bar(app: &mut ViewerApp, ui: &mut egui::Ui) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open session…").clicked() {
                app.commands.push(Command::OpenDialog(OpenKind::Session));
            }
            if ui.button("Open video…").clicked() {
                app.commands.push(Command::OpenDialog(OpenKind::Video));
            }
            let has_doc = app.doc.is_some();
            if ui.add_enabled(has_doc, egui::Button::new("Open log…")).clicked() {
                app.commands.push(Command::OpenDialog(OpenKind::Log));
            }
            if ui
                .add_enabled(has_doc, egui::Button::new("Open calibration…"))
                .clicked()
            {
                app.commands.push(Command::OpenDialog(OpenKind::Calibration));
            }
            ui.menu_button("Open recent", |ui| {
                if app.persisted.recent.is_empty() {
                    ui.label("(none yet)");
                }
                for p in app.persisted.recent.clone() {
                    if ui.button(p.display().to_string()).clicked() {
                        app.commands.push(Command::OpenPath(p));
                    }
                }
            });
            ui.separator();
            if ui
                .add_enabled(has_doc, egui::Button::new("Save session"))
                .clicked()
            {
                app.commands.push(Command::Save);
            }
            if ui
                .add_enabled(has_doc, egui::Button::new("Save session as…"))
                .clicked()
            {
                app.commands.push(Command::SaveAs);
            }
            ui.separator();
            let can_export = app.doc.as_ref().is_some_and(|d| d.has_log) && app.synthetic.is_none();
            if ui
                .add_enabled(can_export, egui::Button::new("Export video…"))
                .clicked()
            {
                app.commands.push(Command::ShowExport);
            }
            ui.separator();
            if ui.button("Quit").clicked() {
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
        });
        ui.menu_button("Edit", |ui| {
            if ui
                .add_enabled(
                    app.history.can_undo(),
                    egui::Button::new("Undo").shortcut_text("Ctrl+Z"),
                )
                .clicked()
            {
                app.commands.push(Command::Undo);
            }
            if ui
                .add_enabled(
                    app.history.can_redo(),
                    egui::Button::new("Redo").shortcut_text("Ctrl+Shift+Z"),
                )
                .clicked()
            {
                app.commands.push(Command::Redo);
            }
        });
        ui.menu_button("View", |ui| {
            let l = &mut app.persisted.layout;
            ui.checkbox(&mut l.entities, "Entities panel");
            ui.checkbox(&mut l.side, "Side panel");
            ui.checkbox(&mut l.timeline, "Timeline");
            ui.checkbox(&mut l.field, "Field view (top-down)");
            ui.separator();
            if let Some(doc) = &mut app.doc {
                side::draw_toggles(ui, &mut doc.session.draw);
                ui.separator();
            }
            if ui.button("Fit video to window").clicked() {
                app.video_view = Default::default();
            }
        });
        ui.menu_button("Help", |ui| {
            ui.label(SHORTCUTS);
        });
        if let Some(doc) = &app.doc {
            ui.separator();
            let name = doc
                .session_path
                .as_ref()
                .unwrap_or(&doc.session.video)
                .display()
                .to_string();
            ui.label(if doc.is_dirty() {
                format!("{name} •")
            } else {
                name
            });
        }
    });
}

/// The keyboard shortcuts, as shown in Help.
pub const SHORTCUTS: &str = "Space  play / pause\n\
← →  one frame back / forward\n\
Shift+← →  1 s back / forward\n\
↑ ↓  10 s forward / back\n\
[ ]  slower / faster\n\
N / Shift+N  next / previous event\n\
L  loop on / off\n\
Home / End  start / end\n\
Ctrl+Z / Ctrl+Shift+Z  undo / redo\n\
Ctrl+S  save session\n\
Ctrl+O  open session";

fn keyboard(app: &mut ViewerApp, ctx: &egui::Context) {
    if ctx.egui_wants_keyboard_input() {
        return;
    }
    use egui::{Key, Modifiers};
    let end = app.playback.end();
    let start = app.playback.start();
    ctx.input_mut(|i| {
        let mut c = Vec::new();
        if i.consume_key(Modifiers::NONE, Key::Space) {
            c.push(Command::TogglePlay);
        }
        if i.consume_key(Modifiers::SHIFT, Key::ArrowLeft) {
            c.push(Command::Jump(-1.0));
        }
        if i.consume_key(Modifiers::SHIFT, Key::ArrowRight) {
            c.push(Command::Jump(1.0));
        }
        if i.consume_key(Modifiers::NONE, Key::ArrowLeft) {
            c.push(Command::Step(-1));
        }
        if i.consume_key(Modifiers::NONE, Key::ArrowRight) {
            c.push(Command::Step(1));
        }
        if i.consume_key(Modifiers::NONE, Key::ArrowUp) {
            c.push(Command::Jump(10.0));
        }
        if i.consume_key(Modifiers::NONE, Key::ArrowDown) {
            c.push(Command::Jump(-10.0));
        }
        if i.consume_key(Modifiers::NONE, Key::OpenBracket) {
            c.push(Command::StepSpeed(-1));
        }
        if i.consume_key(Modifiers::NONE, Key::CloseBracket) {
            c.push(Command::StepSpeed(1));
        }
        if i.consume_key(Modifiers::SHIFT, Key::N) {
            c.push(Command::Event(-1));
        }
        if i.consume_key(Modifiers::NONE, Key::N) {
            c.push(Command::Event(1));
        }
        if i.consume_key(Modifiers::NONE, Key::L) {
            c.push(Command::ToggleLoop);
        }
        if i.consume_key(Modifiers::NONE, Key::Home) {
            c.push(Command::Seek(start));
        }
        if i.consume_key(Modifiers::NONE, Key::End) {
            c.push(Command::Seek(end));
        }
        if i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z)
            || i.consume_key(Modifiers::COMMAND, Key::Y)
        {
            c.push(Command::Redo);
        }
        if i.consume_key(Modifiers::COMMAND, Key::Z) {
            c.push(Command::Undo);
        }
        if i.consume_key(Modifiers::COMMAND, Key::S) {
            c.push(Command::Save);
        }
        if i.consume_key(Modifiers::COMMAND, Key::O) {
            c.push(Command::OpenDialog(OpenKind::Session));
        }
        app.commands.extend(c);
    });
}

fn dropped_files(app: &mut ViewerApp, ctx: &egui::Context) {
    let dropped: Vec<_> = ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_owned()).collect());
    // Videos and sessions first, so a log dropped with a video lands on it.
    let mut dropped = dropped;
    dropped.sort_by_key(|p| {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if ext == "toml" {
            0
        } else if super::app::VIDEO_EXTENSIONS.contains(&ext.as_str()) {
            1
        } else {
            2
        }
    });
    for p in dropped {
        app.commands.push(Command::OpenPath(p));
    }
}

fn status_bar(app: &mut ViewerApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if let Some(m) = app.messages.last() {
            let color = if m.error {
                ui.visuals().error_fg_color
            } else {
                ui.visuals().text_color()
            };
            ui.colored_label(color, &m.text);
        } else if app.doc.is_none() {
            ui.label("Drop a session, a video or a log here, or use File → Open.");
        }
    });
}
