//! The app in live mode ([`crate::viewer::live`]): starting the run,
//! taking in its frames, log and status every frame, pausing into the
//! replay buffer (a review that takes in what came since once it reaches
//! its end) and back to live, and the calibration tools' pixels taken
//! from the buffer while following.

use super::*;
use crate::viewer::live::{LiveView, LiveViewOptions};
use crate::viewer::player::Patch;

impl ViewerApp {
    /// Starts live mode: the document of the run's session, the run on its
    /// own thread. A run that cannot start is said (and fails a
    /// screenshot run).
    pub(super) fn start_live(&mut self, opts: &LiveViewOptions, result: super::screenshot::ShotSlot) {
        let fail = |app: &mut ViewerApp, e: anyhow::Error| {
            app.error(format!("{e:#}"));
            if opts.screenshot.is_some() {
                *result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(ShotError::Open(e.into())));
                app.ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        };
        let doc = match Document::for_live(opts.run.session.clone(), opts.session_path.clone()) {
            Ok(d) => d,
            Err(e) => return fail(self, e),
        };
        let ctx = self.ctx.clone();
        let view = match LiveView::start(opts, move || ctx.request_repaint()) {
            Ok(v) => v,
            Err(e) => return fail(self, anyhow::Error::new(e).context("cannot start the live run")),
        };
        self.attach_live(doc, view);
        if opts.screenshot.is_some() {
            self.live_shot = Some(result);
        }
    }

    /// Shows `doc` live from `view` (following the camera).
    pub fn attach_live(&mut self, doc: Document, view: LiveView) {
        let v = super::super::state::SessionView::from_session(&doc.session).unwrap_or_default();
        self.calib
            .restore(&v.calib_points, v.calib_model, v.calib_preset.as_deref());
        self.mask_tuning.forget_pick();
        self.player = None;
        self.frame = None;
        self.texture = None;
        self.display_size = None;
        self.video_view = VideoView::default();
        self.entities = EntitiesUi::default();
        self.calib_backup = None;
        self.finder = Default::default();
        self.finder.live = Some(Arc::clone(&view.buffer));
        self.pinned = None;
        self.playback = Playback::new(0.0, 0.0);
        self.sent_settings = None;
        self.doc = Some(doc);
        self.live = Some(view);
        self.history = self
            .snapshot()
            .map(super::super::history::History::new)
            .unwrap_or_default();
        self.send_settings();
    }

    /// Whether the viewer follows a live camera (not reviewing its buffer).
    pub fn live_following(&self) -> bool {
        self.live.as_ref().is_some_and(|l| l.following)
    }

    /// Live mode's work every frame: the run's end, status and log, the
    /// newest frame while following, the timeline's growth.
    pub(super) fn live_logic(&mut self, ctx: &egui::Context) {
        let Some(live) = &mut self.live else { return };
        let ended = live.poll();
        live.set_display_size(self.display_size);
        let refused = live.take_refused();
        let log = live.take_log();
        let shown = if live.following { live.take_frame() } else { None };
        live.shown += u64::from(shown.is_some());
        let span = live.info.as_ref().map(|i| (i.start, i.end()));
        let following = live.following;
        for e in refused {
            self.error(format!("live: the settings could not all be applied: {e}"));
        }
        if let (Some((log, index)), Some(doc)) = (log, &mut self.doc) {
            doc.set_live_log(log, index);
        }
        if let Some(s) = shown {
            self.install_live_frame(ctx, s);
        }
        if following && let Some((a, z)) = span {
            // The timeline grows with the buffer; the playhead is the
            // newest frame.
            let now = self.frame.as_ref().map_or(z, |f| f.time);
            self.playback.set_range(a.min(now), z.max(now));
            self.playback.playing = false;
            self.playback.time = now;
        }
        if ended {
            self.live_ended(ctx);
            if self.live.as_ref().is_some_and(|l| l.stopped()) && self.screenshot.is_none() {
                // Stopped from the terminal (Ctrl-C): the window goes too
                // (after the screenshot waiting for the end, if any).
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        if self.live.as_ref().is_some_and(|l| {
            l.status
                .as_ref()
                .is_some_and(|s| s.camera.no_signal_since.is_some())
        }) {
            // "No signal for N s" counts on.
            ctx.request_repaint_after(Duration::from_secs(1));
        }
    }

    /// The run ended: said, and a screenshot waiting for it taken now.
    fn live_ended(&mut self, ctx: &egui::Context) {
        let Some(live) = &self.live else { return };
        let outcome = live.ended.clone();
        match &outcome {
            Some(Ok(r)) => {
                let said = crate::viewer::live::end_text(r, &live.counts, live.shown);
                // On the terminal too, as a headless run says it.
                eprintln!("{said}");
                self.status(said);
            }
            Some(Err(e)) => self.error(format!("live: {e}")),
            None => {}
        }
        let Some(result) = self.live_shot.take() else {
            return;
        };
        let path = self.live.as_ref().and_then(|l| l.screenshot.clone());
        match (outcome, path) {
            (Some(Ok(_)), Some(path)) if self.frame.is_some() => {
                let at = self.frame.as_ref().map_or(0.0, |f| f.time);
                self.screenshot = Some(ScreenshotJob {
                    at,
                    req: ScreenshotRequest {
                        path,
                        at: crate::video::TimeArg::Video(at),
                    },
                    started: Instant::now(),
                    painted: 0,
                    requested: false,
                    result,
                });
                ctx.request_repaint();
            }
            (outcome, _) => {
                let why = match outcome {
                    Some(Err(e)) => e,
                    _ => "the run ended before any frame was shown".to_owned(),
                };
                *result.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(Err(ShotError::Open(anyhow::anyhow!(why).into())));
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
    }

    /// Puts the newest live frame on screen.
    fn install_live_frame(&mut self, ctx: &egui::Context, s: crate::viewer::live::LiveShown) {
        match &mut self.texture {
            Some(t) => t.set(Arc::clone(&s.image), egui::TextureOptions::LINEAR),
            None => {
                self.texture =
                    Some(ctx.load_texture("video", Arc::clone(&s.image), egui::TextureOptions::LINEAR))
            }
        }
        self.frame = Some(FrameMeta {
            index: s.index,
            time: s.time,
            requested: Some(s.time),
            generation: 0,
            primitives: s.primitives,
            mask_doubt: s.mask_doubt,
            size: s.size,
            reduction: s.reduction,
            preview: false,
            planes: false,
        });
    }

    /// Pauses live: the buffer as it is now played by the background
    /// player, on the frame on screen (the loop and its outputs run on).
    pub fn review_live(&mut self) {
        if self.live.as_ref().is_some_and(|l| l.following) {
            self.start_review(None);
        }
    }

    /// While reviewing near the review's end (within `ahead` seconds),
    /// takes in what the camera sent since the review began: a new
    /// snapshot of the buffer, the same moment on screen, playing, speed
    /// and loop kept. Returns whether it did.
    pub(super) fn extend_review(&mut self, ahead: f64) -> bool {
        let Some(live) = &self.live else { return false };
        let Some(newest) = live.info.as_ref().map(|i| i.end()) else {
            return false;
        };
        let end = self.playback.end();
        if live.following || self.playback.time + ahead.max(0.0) < end || newest <= end + 1e-9 {
            return false;
        }
        let kept = (
            self.playback.time,
            self.playback.playing,
            self.playback.speed,
            self.playback.loop_range,
            self.playback.looping,
        );
        self.start_review(Some(kept.0));
        let (_, playing, speed, loop_range, looping) = kept;
        self.playback.playing = playing;
        self.playback.set_speed(speed);
        self.playback.loop_range = loop_range;
        self.playback.looping = looping;
        true
    }

    /// Reviews the buffer as it is now, from `at` (the frame on screen
    /// when `None`).
    fn start_review(&mut self, at: Option<f64>) {
        let Some(live) = &self.live else { return };
        let Some(source) = live.review_source() else {
            self.status("live: nothing in the buffer yet to go back to");
            return;
        };
        let Some(doc) = &self.doc else { return };
        let settings = self.mask_tuning.shown(doc.draw_settings());
        let processor = (self.processor)(doc);
        let ctx = self.ctx.clone();
        let player = match Player::spawn(Box::new(source), processor, settings.clone(), move || {
            ctx.request_repaint()
        }) {
            Ok(p) => p,
            Err(e) => {
                self.error(format!("live: cannot start the player: {e}"));
                return;
            }
        };
        player.set_planes(self.planes.is_some());
        let info = player.info().clone();
        let at = at.unwrap_or_else(|| self.frame.as_ref().map_or(info.end(), |f| f.time));
        if let Some(d) = self.display_size {
            player.set_display_size(d);
        }
        self.player = Some(player);
        self.sent_settings = Some(settings);
        self.playback = Playback::new(info.start, info.end());
        self.playback.seek(at);
        if let Some(l) = &mut self.live {
            l.following = false;
        }
        self.request_frame();
    }

    /// Follows the camera again.
    pub fn back_to_live(&mut self) {
        let Some(live) = &mut self.live else { return };
        live.following = true;
        self.player = None;
        self.playback.playing = false;
    }

    /// The picture of the buffer shown at `time`, as decoded, for the
    /// calibration tools; errors said.
    fn live_picture(&mut self, time: f64) -> Option<crate::image::RgbImage> {
        let live = self.live.as_ref()?;
        match live.buffer.picture_at(time) {
            Ok(Some(f)) => Some(f.image),
            Ok(None) => {
                self.error("live: the buffer holds no picture yet");
                None
            }
            Err(e) => {
                self.error(format!("live: {}", crate::error::chain(&e)));
                None
            }
        }
    }

    /// "Snap to lines" while following: on the frame on screen as it came
    /// from the camera (or the buffer's background picture).
    pub(super) fn live_snap_to_lines(&mut self) {
        let Some(t) = self.frame.as_ref().map(|f| f.time) else {
            self.calib.snap = Some(Err("no frame is on screen".into()));
            return;
        };
        let Some(pixels) = self.live_picture(t) else {
            return;
        };
        self.live_decoded = Some(Patch { time: t, pixels });
        self.calib.snap_waiting = Some(t);
        self.calib.snap = None;
        self.calib.snap_pending = None;
    }

    /// "This is floor" while following: the pixels around `at` of the
    /// frame on screen as it came from the camera.
    pub(super) fn live_pick_floor_at(&mut self, at: egui::Pos2) {
        self.mask_tuning.picking = false;
        let Some(f) = self.frame.clone() else { return };
        if !(at.x >= 0.0 && at.y >= 0.0 && (at.x as usize) < f.size[0] && (at.y as usize) < f.size[1]) {
            self.mask_tuning.note = Some(Err(crate::mask::seed::SeedError::Empty));
            return;
        }
        let Some(pixels) = self.live_picture(f.time) else {
            return;
        };
        let radius = crate::mask::seed::PATCH_RADIUS;
        let patch = Patch {
            time: f.time,
            pixels: crate::viewer::player::crop(&pixels, at.x as usize, at.y as usize, radius),
        };
        self.mask_tuning.waiting = Some(f.time);
        let Some(doc) = &mut self.doc else { return };
        match self.mask_tuning.receive(&patch, &mut doc.session.mask) {
            Some(Ok(h)) => self.status(format!("floor colour picked: hue {h} ({}°)", 2 * u32::from(h))),
            Some(Err(e)) => self.error(format!("this is floor: {e}")),
            None => {}
        }
    }
}
