//! Applying the commands the panels record (after layout): opening,
//! saving, exporting, calibration files and dialogs.

use super::*;

impl ViewerApp {
    pub fn run_command(&mut self, cmd: Command) {
        if self.live_following() {
            // Live: moving in time reviews the buffer (pausing on the
            // frame on screen) before it moves.
            match cmd {
                Command::TogglePlay => return self.review_live(),
                Command::Step(n) => {
                    // From the frame on screen: the one shown n frames
                    // from it (half a frame in, whatever the rounding).
                    let at = self.frame.as_ref().map(|f| f.time);
                    let dur = self.info().map_or(1.0 / 30.0, SourceInfo::frame_duration);
                    self.review_live();
                    if let Some(t) = at {
                        self.playback.seek(t + (n as f64 + 0.5) * dur);
                        self.request_frame();
                    }
                    return;
                }
                Command::Seek(_) | Command::Jump(_) | Command::Event(_) => self.review_live(),
                _ => {}
            }
        }
        if self.live.is_some() && matches!(cmd, Command::ShowExport | Command::StartExport) {
            // The session's video is the camera: nothing to read again.
            self.error("live: export reads a video file: record the run with --out FILE, then export a session of it");
            return;
        }
        match cmd {
            Command::BackToLive => self.back_to_live(),
            Command::OpenDialog(kind) => self.open_dialog(kind),
            Command::Open(req) => {
                if let Err(e) = self.open(&req) {
                    self.error(format!("{e:#}"));
                }
            }
            Command::OpenPath(p) => self.open_path(p),
            Command::Undo => {
                if let Some(to) = self.snapshot().and_then(|s| self.history.undo(&s)) {
                    self.apply_snapshot(to);
                }
            }
            Command::Redo => {
                if let Some(to) = self.snapshot().and_then(|s| self.history.redo(&s)) {
                    self.apply_snapshot(to);
                }
            }
            Command::Save => match self.doc.as_ref().and_then(|d| d.session_path.clone()) {
                Some(p) => self.save_to(p),
                None => self.run_command(Command::SaveAs),
            },
            Command::SaveAs => {
                if let Some(p) = rfd::FileDialog::new()
                    .add_filter("session", &["toml"])
                    .set_file_name("session.toml")
                    .save_file()
                {
                    self.save_to(p);
                }
            }
            Command::TogglePlay => {
                // Play at the end of a live review: on into what came since.
                if !self.playback.playing {
                    self.extend_review(0.0);
                }
                self.playback.toggle_play();
                self.request_frame();
            }
            Command::Seek(t) => {
                self.playback.seek(t);
                self.request_frame();
            }
            Command::Jump(dt) => {
                self.extend_review(dt);
                self.playback.jump(dt);
                self.request_frame();
            }
            Command::Step(n) => {
                if n > 0 {
                    let frame = self.info().map_or(0.0, |i| 1.0 / i.fps.max(1.0));
                    if self.extend_review(n as f64 * frame) {
                        // The new review shows the frame `n` on (a hair
                        // past its time, which sums of frame periods miss
                        // by rounding).
                        self.playback.playing = false;
                        self.playback.seek(self.playback.time + n as f64 * frame + 1e-6);
                        self.request_frame();
                        return;
                    }
                }
                self.playback.playing = false;
                if let Some(p) = &self.player {
                    p.step(n);
                }
            }
            Command::Event(dir) => {
                let (Some(doc), Some(lt)) = (&self.doc, self.log_time()) else {
                    return;
                };
                let e = if dir > 0 {
                    doc.events.next_after(lt.secs())
                } else {
                    doc.events.prev_before(lt.secs())
                };
                match e.map(|e| doc.time_map().video_time(crate::time::LogTime(e.time)).secs()) {
                    Some(t) => {
                        self.playback.seek(t);
                        self.request_frame();
                    }
                    None => self.status("no more events in that direction"),
                }
            }
            // Following a live camera plays at its pace, without a loop.
            Command::SetSpeed(_) | Command::StepSpeed(_) | Command::LoopPoint(_) | Command::ToggleLoop
                if self.live_following() =>
            {
                self.status("following the live camera: pause first to change the speed or loop");
            }
            Command::SetSpeed(s) => self.playback.set_speed(s),
            Command::StepSpeed(d) => self.playback.step_speed(d),
            Command::LoopPoint(w) => self.playback.set_loop_point(w),
            Command::SaveCalibPoints => {
                if let Some(p) = rfd::FileDialog::new()
                    .add_filter("points", &["csv"])
                    .set_file_name("points.csv")
                    .save_file()
                {
                    match crate::session::write_atomic(&p, self.calib.points.to_csv().as_bytes()) {
                        Ok(()) => self.status(format!("saved {}", p.display())),
                        Err(e) => self.error(format!("{}: {e}", p.display())),
                    }
                }
            }
            Command::LoadCalibPoints => {
                if let Some(p) = rfd::FileDialog::new().add_filter("points", &["csv"]).pick_file()
                    && let Err(e) = self.load_calib_points(&p)
                {
                    self.error(format!("{e:#}"));
                }
            }
            Command::RevertCalibration => {
                if let (Some(doc), Some(before)) = (&mut self.doc, self.calib_backup.take()) {
                    doc.set_calibration(before);
                }
            }
            Command::SnapToLines => self.snap_to_lines(),
            Command::AcceptSnap => self.accept_snap(),
            Command::ShowExport => self.show_export(),
            Command::BrowseExport => {
                let d = rfd::FileDialog::new().add_filter("video", &["mp4", "mkv", "mov"]);
                let d = match self.export.options.output.file_name() {
                    Some(n) => d.set_file_name(n.to_string_lossy()),
                    None => d,
                };
                if let Some(p) = d.save_file() {
                    self.export.output_text = p.display().to_string();
                }
            }
            Command::StartExport => {
                if let Err(e) = self.start_export() {
                    self.export.last = Some(Err(e));
                }
            }
            Command::CancelExport => {
                if let Some(r) = &self.export.running {
                    r.cancel();
                }
            }
            Command::ToggleLoop => {
                if self.playback.loop_range.is_some() {
                    self.playback.looping = !self.playback.looping;
                }
            }
        }
    }

    /// Applies the commands of this frame, notes the edits made in it for
    /// undo and sends the settings they changed to the player at once (a
    /// paused frame is drawn again without waiting for another event).
    pub fn run_commands(&mut self) {
        for cmd in std::mem::take(&mut self.commands) {
            self.run_command(cmd);
        }
        self.observe_edits();
        self.send_settings();
    }

    /// Opens the export dialog with defaults taken from what is shown.
    pub(super) fn show_export(&mut self) {
        let Some(doc) = &self.doc else {
            return;
        };
        let d = &mut self.export;
        d.open = true;
        if d.running.is_some() {
            return;
        }
        if d.output_text.is_empty() {
            let v = &doc.session.video;
            let stem = v
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            d.output_text = v
                .with_file_name(format!("{stem}-annotated.mp4"))
                .display()
                .to_string();
        }
        d.options.no_mask = !doc.session.draw.floor_mask;
        if let Some((a, b)) = self.playback.active_loop() {
            d.options.from = Some(crate::video::TimeArg::Video(a));
            d.options.to = Some(crate::video::TimeArg::Video(b));
        }
        d.last = None;
    }

    /// Starts the export the dialog describes on a background thread: the
    /// plan `underlay export` makes of the session as shown.
    pub(super) fn start_export(&mut self) -> Result<(), DialogError> {
        if self.export.running.is_some() {
            return Err(DialogError::Running);
        }
        if self.synthetic.is_some() {
            return Err(DialogError::Synthetic);
        }
        let doc = self.doc.as_ref().ok_or(DialogError::NothingOpen)?;
        let options = self.export.options.clone();
        let plan = doc.export_plan(&options)?;
        let f: crate::viewer::export::ExportFn =
            Box::new(move |progress, cancel| plan.run(cancel, Some(Arc::clone(progress))));
        self.export.running = Some(crate::viewer::export::Running::start(options.output.clone(), f)?);
        self.export.last = None;
        Ok(())
    }

    /// Reads calibration points from a `u,v,x,y` CSV and turns calibration
    /// mode on.
    pub fn load_calib_points(&mut self, p: &std::path::Path) -> anyhow::Result<()> {
        let text = crate::files::read_text_limited(p, crate::calib::points::MAX_CSV_BYTES)
            .map_err(|e| anyhow::anyhow!("{}: cannot read the points file: {e}", p.display()))?;
        let pts = crate::viewer::calibrate::CalibPoints::from_csv(&text, p)?;
        let rev = self.calib.points.revision + 1;
        self.calib.points = pts;
        self.calib.points.revision = rev;
        self.calib.active = true;
        self.calib.open_section = true;
        if self.calib.preset.is_none() {
            self.calib.preset = self.calib.preset_of_names();
        }
        Ok(())
    }

    pub(super) fn save_to(&mut self, p: PathBuf) {
        let Some(doc) = &mut self.doc else {
            return;
        };
        let view = crate::viewer::state::SessionView {
            layout: self.persisted.layout.clone(),
            calib_points: self.calib.saved_points(),
            calib_model: (!self.calib.points.points.is_empty()).then_some(self.calib.model),
            calib_preset: self.calib.preset.map(str::to_owned),
        };
        view.store(&mut doc.session);
        match doc.save(&p) {
            Ok(()) => {
                self.persisted.add_recent(&p);
                self.status(format!("saved {}", p.display()));
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    /// Opens a file by its kind: session, calibration, log or video.
    pub fn open_path(&mut self, p: PathBuf) {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let result = if is_session_path(&p) {
            // A .toml is a session unless it reads as a calibration.
            if self.doc.is_some() && crate::viewer::state::load_calibration(&p).is_ok() {
                self.set_calibration_file(p)
            } else {
                self.open(&OpenRequest {
                    input: Some(p),
                    ..Default::default()
                })
            }
        } else if VIDEO_EXTENSIONS.contains(&ext.as_str()) {
            let logs = self
                .doc
                .as_ref()
                .filter(|d| d.has_log)
                .map(|d| d.session.logs.clone())
                .unwrap_or_default();
            self.open(&OpenRequest {
                input: Some(p),
                logs,
                ..Default::default()
            })
        } else {
            self.set_log_file(p)
        };
        if let Err(e) = result {
            self.error(format!("{e:#}"));
        }
    }

    pub(super) fn set_log_file(&mut self, p: PathBuf) -> anyhow::Result<()> {
        let Some(doc) = &mut self.doc else {
            anyhow::bail!("open a video or a session before a log");
        };
        let log = crate::viewer::state::load_logs(std::slice::from_ref(&p))?;
        let first = !doc.has_log;
        doc.set_log(log, p);
        if first {
            doc.session.offset = sync::default_offset(&doc.log, self.playback.start());
        }
        self.entities = EntitiesUi::default();
        // The processor holds the log: start a new one.
        self.restart_player()
    }

    pub(super) fn set_calibration_file(&mut self, p: PathBuf) -> anyhow::Result<()> {
        let Some(doc) = &mut self.doc else {
            anyhow::bail!("open a video or a session before a calibration");
        };
        doc.session.calibration = Some(crate::session::CalibrationSource::File { file: p });
        doc.reload_calibration()
    }

    /// Restarts the player on the same video (after the log changed).
    pub(super) fn restart_player(&mut self) -> anyhow::Result<()> {
        let Some(doc) = self.doc.take() else {
            return Ok(());
        };
        let source = self.make_source(&doc)?;
        let t = self.playback.time;
        self.set_document(doc, source)?;
        self.playback.seek(t);
        self.request_frame();
        Ok(())
    }

    pub(super) fn open_dialog(&mut self, kind: OpenKind) {
        let d = rfd::FileDialog::new();
        let d = match kind {
            OpenKind::Session => d.add_filter("session", &["toml"]),
            OpenKind::Video => d.add_filter("video", VIDEO_EXTENSIONS),
            OpenKind::Log => d,
            OpenKind::Calibration => d.add_filter("calibration", &["toml"]),
        };
        let Some(p) = d.pick_file() else {
            return;
        };
        let r = match kind {
            OpenKind::Session => self.open(&OpenRequest {
                input: Some(p),
                ..Default::default()
            }),
            OpenKind::Video => {
                self.open_path(p);
                Ok(())
            }
            OpenKind::Log => self.set_log_file(p),
            OpenKind::Calibration => self.set_calibration_file(p),
        };
        if let Err(e) = r {
            self.error(format!("{e:#}"));
        }
    }

    /// Rebuilds the entity tree (after the log changed in place).
    pub fn rebuild_tree(&mut self) {
        if let Some(doc) = &mut self.doc {
            doc.tree = EntityTree::build(&doc.log);
        }
    }
}
