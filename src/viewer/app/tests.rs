//! The viewer app's tests: argument parsing, and the app driven through
//! egui_kittest as a person would.

use super::*;

mod unit {
    use super::*;

    #[test]
    fn synthetic_spec_parses() {
        let s: SyntheticSpec = "1920x1080@30:5".parse().unwrap();
        assert_eq!((s.width, s.height, s.fps, s.seconds), (1920, 1080, 30.0, 5.0));
        assert_eq!("64x36@25".parse::<SyntheticSpec>().unwrap().seconds, 60.0);
        assert!("64x36".parse::<SyntheticSpec>().is_err());
        assert!("64x36@25:-1".parse::<SyntheticSpec>().is_err());
    }
}

mod app_tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::{NodeT, Queryable};

    use super::*;

    /// The whole app on generated frames (64×36 at 10 fps, 10 s).
    fn harness() -> Harness<'static, Option<ViewerApp>> {
        harness_with(ViewerOptions {
            synthetic: Some("64x36@10:10".parse().unwrap()),
            ..Default::default()
        })
    }

    /// The whole app started with `opts`.
    fn harness_with(opts: ViewerOptions) -> Harness<'static, Option<ViewerApp>> {
        // The player answers on its own thread: on a busy machine a frame
        // may arrive a few steps late and wake the UI again.
        Harness::builder()
            .with_size([1000.0, 700.0])
            .with_max_steps(32)
            .build_ui_state(
                move |ui, app: &mut Option<ViewerApp>| {
                    let app = app.get_or_insert_with(|| {
                        let mut a = ViewerApp::new(ui.ctx().clone(), Persisted::default());
                        a.start(&opts, Arc::new(Mutex::new(None)));
                        a
                    });
                    app.logic(ui.ctx());
                    crate::viewer::ui::show(app, ui);
                    app.run_commands();
                },
                None,
            )
    }

    fn app<'a>(h: &'a Harness<'_, Option<ViewerApp>>) -> &'a ViewerApp {
        h.state().as_ref().unwrap()
    }

    /// Steps the UI until `cond` holds (the player works on its own thread).
    fn until(h: &mut Harness<'_, Option<ViewerApp>>, cond: impl Fn(&ViewerApp) -> bool) {
        for _ in 0..2000 {
            h.step();
            if cond(app(h)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        panic!("condition never held");
    }

    #[test]
    fn keyboard_steps_frames_and_jumps() {
        let mut h = harness();
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 0));
        h.key_press(egui::Key::ArrowRight);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 1));
        assert!((app(&h).playback.time - 0.1).abs() < 1e-9);
        h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::ArrowRight);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 11));
        h.key_press(egui::Key::ArrowUp);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 99));
        h.key_press(egui::Key::Home);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index == 0));
        h.key_press(egui::Key::CloseBracket);
        h.step();
        assert_eq!(app(&h).playback.speed, 1.5);
    }

    #[derive(Debug)]
    struct Dropped(std::path::PathBuf);

    impl egui::DroppedFile for Dropped {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
        fn bytes(&self) -> Result<Vec<u8>, String> {
            std::fs::read(&self.0).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn dropping_a_log_opens_it_over_the_video() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        assert!(!app(&h).doc.as_ref().unwrap().has_log);
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/ssl.ulog");
        h.input_mut().dropped_files.push(Arc::new(Dropped(log)));
        until(&mut h, |a| {
            a.doc.as_ref().is_some_and(|d| d.has_log) && a.frame.is_some()
        });
        let a = app(&h);
        let doc = a.doc.as_ref().unwrap();
        assert_eq!(
            doc.session.offset, 1_700_000_000.0,
            "the log starts at the video's start"
        );
        assert!(!doc.tree.nodes.is_empty());
        // A file that is not a log is an error message, not a crash.
        let bad = std::env::temp_dir().join(format!("underlay-viewer-test-{}.bin", std::process::id()));
        std::fs::write(&bad, b"not a log").unwrap();
        h.input_mut().dropped_files.push(Arc::new(Dropped(bad.clone())));
        until(&mut h, |a| a.messages.iter().any(|m| m.error));
        let _ = std::fs::remove_file(&bad);
        assert!(
            app(&h)
                .messages
                .iter()
                .any(|m| m.error && m.text.contains("underlay-viewer-test"))
        );
        assert!(app(&h).doc.as_ref().unwrap().has_log, "the open log stays");
    }

    #[test]
    fn every_widget_has_an_accessible_name() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        // `run` checks that every interactive widget can be named.
        h.run_ok();
        h.run();
    }

    /// Issue 17, mask tuning: opening the mask section previews the tint
    /// (the session's tint untouched); "This is floor…" and a click on the
    /// video's green floor seed the floor hue into the session, the paused
    /// frame is drawn again with it, and undo takes it back.
    #[test]
    fn a_click_on_the_floor_seeds_its_colour_and_undo_takes_it_back() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        assert!(!app(&h).sent_settings.as_ref().unwrap().toggles.tint);
        h.get_by_label("Mask").click();
        h.run_steps(10);
        let a = app(&h);
        assert!(a.mask_tuning.section_open);
        assert!(a.sent_settings.as_ref().unwrap().toggles.tint, "the preview");
        assert!(!a.doc.as_ref().unwrap().session.draw.tint, "not in the session");
        // Every new control can be named.
        h.run_ok();
        h.get_by_label("This is floor…").click();
        h.run_steps(10);
        assert!(app(&h).mask_tuning.picking);
        let generation = app(&h).player.as_ref().unwrap().generation();
        // The middle of the video panel: the generated frames' green floor.
        h.event(egui::Event::PointerMoved(egui::pos2(480.0, 330.0)));
        for pressed in [true, false] {
            h.event(egui::Event::PointerButton {
                pos: egui::pos2(480.0, 330.0),
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: Default::default(),
            });
        }
        until(&mut h, |a| {
            matches!(
                &a.doc.as_ref().unwrap().session.mask,
                crate::mask::MaskSettings::Adaptive(_)
            )
        });
        let a = app(&h);
        let crate::mask::MaskSettings::Adaptive(s) = &a.doc.as_ref().unwrap().session.mask else {
            unreachable!()
        };
        let hue = s.floor_hue.unwrap();
        assert!((55..=70).contains(&hue), "green: {hue}");
        assert_eq!(a.pinned, None, "the click pinned nothing");
        assert!(!a.mask_tuning.picking && a.mask_tuning.waiting.is_none());
        // The paused frame is drawn again with the seeded mask.
        until(&mut h, |a| {
            let g = a.player.as_ref().unwrap().generation();
            g > generation && a.frame.as_ref().is_some_and(|f| f.generation == g) && a.frame_is_current()
        });
        h.run_steps(10);
        assert!(
            h.query_by_label(&format!("hue {hue} ({}°)", 2 * u32::from(hue)))
                .is_some()
        );
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
        h.step();
        assert_eq!(
            app(&h).doc.as_ref().unwrap().session.mask,
            crate::mask::MaskSettings::Auto
        );
        // Closing the section ends the preview.
        h.get_by_label("Mask").click();
        h.run_steps(10);
        assert!(!app(&h).sent_settings.as_ref().unwrap().toggles.tint);
    }

    #[test]
    fn space_plays_and_pauses() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        h.key_press(egui::Key::Space);
        h.step();
        assert!(app(&h).playback.playing);
        until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index >= 3));
        h.key_press(egui::Key::Space);
        h.step();
        assert!(!app(&h).playback.playing);
    }

    /// `--bench-play` longer than the video: the player stops at the end
    /// by itself, and the per-frame figures still count only the frames
    /// played, not the random seeks after them (they once did, which put
    /// the seeks' decoding from a keyframe into the "played" p95).
    #[test]
    fn bench_play_past_the_end_counts_only_the_frames_played() {
        let mut h = harness_with(ViewerOptions {
            synthetic: Some("64x36@10:1".parse().unwrap()),
            bench_play: Some(30.0),
            ..Default::default()
        });
        until(&mut h, |a| a.bench.as_ref().is_some_and(|b| b.done));
        let a = app(&h);
        let b = a.bench.as_ref().unwrap();
        let (n_worker, _, _) = b.played_samples.expect("playing ended");
        assert!(n_worker <= 11, "{n_worker} worker samples for 10 frames played");
        assert!(
            a.perf.worker.len() > n_worker,
            "the seeks' samples come after the played ones"
        );
        assert!(b.play.as_secs_f64() < 10.0, "played for {:?}", b.play);
        let report = a.bench_report();
        assert!(report.contains("frames on screen: "), "{report}");
    }

    fn app_mut<'a>(h: &'a mut Harness<'_, Option<ViewerApp>>) -> &'a mut ViewerApp {
        h.state_mut().as_mut().unwrap()
    }

    fn offset(h: &Harness<'_, Option<ViewerApp>>) -> f64 {
        app(h).doc.as_ref().unwrap().session.offset
    }

    #[test]
    fn ctrl_z_undoes_and_ctrl_shift_z_redoes_session_edits() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        let start = offset(&h);
        // Two edits, each seen settled by a frame.
        app_mut(&mut h).doc.as_mut().unwrap().session.offset = start + 1.0;
        h.step();
        app_mut(&mut h).doc.as_mut().unwrap().session.draw.tint = true;
        h.step();
        assert!(app(&h).history.can_undo());
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
        h.step();
        let doc = app(&h).doc.as_ref().unwrap();
        assert!(!doc.session.draw.tint && doc.session.offset == start + 1.0);
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
        h.step();
        assert_eq!(offset(&h), start);
        assert!(!app(&h).history.can_undo());
        h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
        h.step();
        assert_eq!(offset(&h), start + 1.0);
        h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
        h.step();
        assert!(app(&h).doc.as_ref().unwrap().session.draw.tint);
        // A calibration point is an edit too.
        app_mut(&mut h).calib.points.add(crate::geom::Vec2::new(5.0, 5.0));
        h.step();
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
        h.step();
        assert!(app(&h).calib.points.points.is_empty());
    }

    #[test]
    fn opening_another_video_with_unsaved_changes_asks_first() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        let other = OpenRequest {
            input: Some("other.mp4".into()),
            ..Default::default()
        };
        // Nothing changed: no question.
        app_mut(&mut h)
            .commands
            .push(Command::Open(Box::new(other.clone())));
        h.step();
        assert!(app(&h).confirm.is_none());
        until(&mut h, |a| a.frame.is_some());
        app_mut(&mut h).doc.as_mut().unwrap().session.offset += 2.0;
        h.step();
        let changed = offset(&h);
        app_mut(&mut h)
            .commands
            .push(Command::Open(Box::new(other.clone())));
        h.step();
        h.run();
        assert!(app(&h).confirm.is_some());
        h.get_by_label("Cancel").click();
        h.run();
        assert!(app(&h).confirm.is_none());
        assert_eq!(offset(&h), changed, "kept");
        app_mut(&mut h).commands.push(Command::Open(Box::new(other)));
        h.step();
        h.run();
        h.get_by_label("Don't save").click();
        h.run();
        assert!(app(&h).confirm.is_none());
        assert_ne!(offset(&h), changed, "opened anew");
    }

    /// The harness with the sample SSL log dropped on it, opened over the
    /// generated frames.
    fn harness_with_sample_log() -> Harness<'static, Option<ViewerApp>> {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/ssl.ulog");
        h.input_mut().dropped_files.push(Arc::new(Dropped(log)));
        until(&mut h, |a| {
            a.doc.as_ref().is_some_and(|d| d.has_log) && a.frame.is_some()
        });
        h
    }

    /// "Snap to lines" on a video of a fixed camera runs on its own thread,
    /// on the video's background picture (as `calib refine` does), and
    /// brings a calibration put off by a few pixels back to the lines.
    #[test]
    fn snap_to_lines_on_a_video_uses_its_background_picture() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::demo::DemoSpec {
            width: 640,
            height: 360,
            fps: 10.0,
            duration: 3.0,
            ..Default::default()
        };
        let files = crate::demo::generate(
            dir.path(),
            &spec,
            &|_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
        let mut h = harness_with(ViewerOptions {
            open: OpenRequest {
                input: Some(files.session.clone()),
                ..Default::default()
            },
            ..Default::default()
        });
        until(&mut h, |a| a.doc.is_some() && a.frame_is_current());
        let truth = app(&h).doc.as_ref().unwrap().calibration.clone().unwrap();
        let m = *truth.homography();
        let dx = 6.0;
        let off = crate::calib::Calibration::from_parts(
            [
                [
                    m[0][0] + dx * m[2][0],
                    m[0][1] + dx * m[2][1],
                    m[0][2] + dx * m[2][2],
                ],
                m[1],
                m[2],
            ],
            truth.distortion().copied(),
        )
        .unwrap();
        {
            let a = app_mut(&mut h);
            a.doc.as_mut().unwrap().calibration = Some(off);
            a.calib.preset = Some("ssl-b");
            a.calib.model = crate::calib::Model::Homography;
            a.snap_to_lines();
        }
        until(&mut h, |a| a.calib.snap.is_some());
        let a = app(&h);
        let report = a.calib.snap.as_ref().unwrap().as_ref().unwrap();
        assert!(report.trusted, "{:?}", report.verdict.reasons);
        assert!(
            a.messages
                .iter()
                .any(|m| m.text.contains("on the background of 15 frames")),
            "{:?}",
            a.messages
        );
        let snapped = a.doc.as_ref().unwrap().calibration.clone().unwrap();
        let size = [640, 360];
        let apart = crate::calib::compare::lines_apart(
            &truth,
            &snapped,
            &crate::calib::presets::ssl_division_b().lines,
            size,
        )
        .unwrap();
        assert!(apart.mean_px < 1.0, "{apart:?}");
    }

    /// The app with a GPU to show planes on (kittest paints no callbacks:
    /// what is tested is which pictures go where).
    fn harness_planes(
        opts: ViewerOptions,
        view: crate::viewer::gpu::PlaneView,
    ) -> Harness<'static, Option<ViewerApp>> {
        Harness::builder()
            .with_size([1000.0, 700.0])
            .with_max_steps(32)
            .build_ui_state(
                move |ui, app: &mut Option<ViewerApp>| {
                    let app = app.get_or_insert_with(|| {
                        let mut a =
                            ViewerApp::new(ui.ctx().clone(), Persisted::default()).with_planes(view.clone());
                        a.start(&opts, Arc::new(Mutex::new(None)));
                        a
                    });
                    app.logic(ui.ctx());
                    crate::viewer::ui::show(app, ui);
                    app.run_commands();
                },
                None,
            )
    }

    /// With a GPU, a video goes to the screen as its decoded planes and a
    /// still picture as RGB; when the GPU turns out unable to show planes,
    /// the video comes as RGB from then on, and the user is told.
    #[test]
    fn videos_go_to_the_screen_as_planes_and_pictures_as_rgb() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::demo::DemoSpec {
            width: 320,
            height: 180,
            fps: 10.0,
            duration: 2.0,
            ..Default::default()
        };
        let files = crate::demo::generate(
            dir.path(),
            &spec,
            &|_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
        let view = crate::viewer::gpu::PlaneView::default();
        let mut h = harness_planes(
            ViewerOptions {
                open: OpenRequest {
                    input: Some(files.session.clone()),
                    ..Default::default()
                },
                ..Default::default()
            },
            view.clone(),
        );
        until(&mut h, |a| a.frame_is_current());
        let f = app(&h).frame.clone().unwrap();
        assert!(f.planes, "{f:?}");
        assert_eq!((f.size, f.reduction), ([320, 180], 1));
        assert!(app(&h).texture.is_none(), "no RGB picture made");
        // Stepping keeps them planes (drawn: the demo's log is on them).
        h.key_press(egui::Key::ArrowRight);
        until(&mut h, |a| {
            a.frame.as_ref().is_some_and(|f| f.index == 1 && f.planes)
        });
        assert!(app(&h).frame.as_ref().unwrap().primitives > 0);
        // The GPU cannot: RGB from then on, said once.
        view.fail("no shaders here");
        until(&mut h, |a| {
            a.frame.as_ref().is_some_and(|f| !f.planes) && a.texture.is_some()
        });
        assert!(app(&h).planes.is_none());
        let said: Vec<_> = app(&h)
            .messages
            .iter()
            .filter(|m| m.text.contains("no shaders here"))
            .collect();
        assert_eq!(said.len(), 1, "{:?}", app(&h).messages);
        // A still picture has no planes: RGB.
        let png = dir.path().join("still.png");
        crate::video::still::save_rgb(&png, &crate::image::RgbImage::from_elem((40, 60, 3), 90)).unwrap();
        let mut h = harness_planes(
            ViewerOptions {
                open: OpenRequest {
                    input: Some(png),
                    ..Default::default()
                },
                ..Default::default()
            },
            crate::viewer::gpu::PlaneView::default(),
        );
        until(&mut h, |a| a.frame_is_current());
        assert!(!app(&h).frame.as_ref().unwrap().planes);
        assert!(app(&h).texture.is_some());
    }

    /// A keyframe shown while a far seek decodes is said in the timeline
    /// and is not the current frame (a screenshot or the bench waits on).
    #[test]
    fn a_keyframe_stand_in_is_said_and_not_current() {
        let mut h = harness();
        until(&mut h, |a| a.frame_is_current());
        assert!(h.query_by_label_contains("the keyframe at").is_none());
        if let Some(f) = h.state_mut().as_mut().and_then(|a| a.frame.as_mut()) {
            f.preview = true;
        }
        h.step();
        assert!(!app(&h).frame_is_current());
        assert!(h.query_by_label_contains("the keyframe at").is_some());
    }

    /// A rendered match is drawn from its own log: the viewer offers no
    /// time sync (no offset, align or "Find offset") for it; over a video
    /// it does.
    #[test]
    fn a_rendered_match_offers_no_time_sync() {
        let game = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim2d/match4.rcg.gz");
        let mut h = harness_with(ViewerOptions {
            open: OpenRequest {
                input: Some(game),
                ..Default::default()
            },
            ..Default::default()
        });
        until(&mut h, |a| {
            a.doc.as_ref().is_some_and(|d| d.has_log) && a.frame.is_some()
        });
        assert!(app(&h).doc.as_ref().is_some_and(|d| d.draws_its_own_picture()));
        assert!(h.query_by_label("Time sync").is_none());
        assert!(h.query_by_label("Find offset").is_none());
        let h = harness_with_sample_log();
        assert!(h.query_by_label("Time sync").is_some());
    }

    #[test]
    fn a_pinned_drawing_shows_what_it_is_until_closed() {
        let mut h = harness_with_sample_log();
        {
            let a = app_mut(&mut h);
            let doc = a.doc.as_mut().unwrap();
            doc.calibration = Some(
                crate::calib::Calibration::from_homography([
                    [0.01, 0.0, 32.0],
                    [0.0, -0.01, 18.0],
                    [0.0, 0.0, 1.0],
                ])
                .unwrap(),
            );
            a.pinned = Some(0);
        }
        h.step();
        h.run();
        let doc = app(&h).doc.as_ref().unwrap();
        let entity = doc.log.entities.name(doc.log.primitives[0].entity).to_owned();
        assert!(h.query_by_label_contains("Pinned drawing").is_some());
        let shown = h.get_by_label_contains("frame 0: ");
        let text = format!("{shown:?}");
        assert!(text.contains(&entity) && text.contains("level"), "{text}");
        app_mut(&mut h).pinned = None;
        h.step();
        h.run();
        assert!(h.query_by_label_contains("Pinned drawing").is_none());
    }

    /// "Snap to lines" asks the player for the decoded frame, refines on
    /// it and says how it went; a frame without field lines is an error
    /// shown in the panel, and the calibration stays.
    #[test]
    fn snap_to_lines_runs_on_the_decoded_frame_and_says_what_failed() {
        let mut h = harness_with_sample_log();
        let calib = crate::calib::Calibration::from_homography([
            [0.005, 0.0, 32.0],
            [0.0, -0.005, 18.0],
            [0.0, 0.0, 1.0],
        ])
        .unwrap();
        {
            let a = app_mut(&mut h);
            a.doc.as_mut().unwrap().calibration = Some(calib.clone());
        }
        h.step();
        h.run();
        if h.query_by_label("Snap to lines").is_none() {
            h.get_by_label("Calibration").click();
            h.run();
        }
        // No field chosen: the button cannot be pressed.
        assert!(h.get_by_label("Snap to lines").accesskit_node().is_disabled());
        app_mut(&mut h).calib.preset = Some("ssl-b");
        h.step();
        h.run();
        h.get_by_label("Snap to lines").click();
        until(&mut h, |a| a.calib.snap.is_some());
        let a = app(&h);
        let err = a.calib.snap.as_ref().unwrap().as_ref().unwrap_err();
        assert!(err.contains("too few field lines"), "{err}");
        assert_eq!(
            a.doc.as_ref().unwrap().calibration.as_ref().unwrap().homography(),
            calib.homography()
        );
        h.run();
        assert!(
            h.query_all_by_label_contains("snap to lines: too few field lines")
                .count()
                >= 2,
            "in the panel and the status bar"
        );
    }

    #[test]
    fn an_untrusted_snap_is_shown_and_taken_only_when_asked() {
        use crate::calib::refine::{LineCheck, RefineReport, Verdict};
        let mut h = harness_with_sample_log();
        let before = crate::calib::Calibration::from_homography([
            [0.005, 0.0, 32.0],
            [0.0, -0.005, 18.0],
            [0.0, 0.0, 1.0],
        ])
        .unwrap();
        let snapped = crate::calib::Calibration::from_homography([
            [0.006, 0.0, 30.0],
            [0.0, -0.006, 19.0],
            [0.0, 0.0, 1.0],
        ])
        .unwrap();
        let verdict = Verdict {
            trusted: false,
            found_share: 0.2,
            band_px: 3.0,
            search_px: 60.0,
            lines: vec![LineCheck {
                line: "segment (0, -3000) to (0, 3000)".into(),
                in_view: 40,
                extent_px: 300.0,
                found_share: 0.1,
                off_share: 0.8,
                rms_px: Some(1.0),
                against: Some("a painted line runs beside it, not on it, along 80 % of it".into()),
            }],
            floor_spread: Some(6.0),
            click_px: None,
            reasons: vec!["only 20 % of the lines in view lie on painted lines".into()],
        };
        let report = RefineReport {
            model: crate::calib::Model::Homography,
            rounds: 3,
            points: 40,
            used: 30,
            rms_px: 1.0,
            coverage: 0.2,
            moved_px: 12.0,
            lines: Vec::new(),
            trusted: false,
            verdict,
            attempts: 4,
            warnings: Vec::new(),
        };
        {
            let a = app_mut(&mut h);
            a.doc.as_mut().unwrap().calibration = Some(before.clone());
            a.calib.snap = Some(Ok(report));
            a.calib.snap_pending = Some(snapped.clone());
        }
        h.step();
        h.run();
        if h.query_by_label("Use it anyway").is_none() {
            h.get_by_label("Calibration").click();
            h.run();
        }
        assert!(
            h.query_all_by_label_contains("not trustworthy: only 20 %")
                .count()
                >= 1
        );
        assert_eq!(
            app(&h)
                .doc
                .as_ref()
                .unwrap()
                .calibration
                .as_ref()
                .unwrap()
                .homography(),
            before.homography(),
            "not taken until asked"
        );
        h.get_by_label("Use it anyway").click();
        // The player redraws with the new calibration on its own thread:
        // step until the click is taken rather than wait for the UI to
        // settle (a busy machine delivers the redraw late).
        until(&mut h, |a| a.calib.snap_pending.is_none());
        let a = app(&h);
        assert_eq!(
            a.doc.as_ref().unwrap().calibration.as_ref().unwrap().homography(),
            snapped.homography()
        );
        assert!(a.calib.snap_pending.is_none());
    }

    #[test]
    fn the_point_table_takes_heights_with_the_pinhole_model() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        {
            let a = app_mut(&mut h);
            a.calib.active = true;
            a.calib.open_section = true;
            a.calib.points.add(crate::geom::Vec2::new(10.0, 10.0));
        }
        h.step();
        h.run();
        assert!(
            h.query_by_label("z of point 1").is_some(),
            "the table has a z column"
        );
        h.get_by_label("pinhole (full camera)").click();
        h.run();
        assert_eq!(app(&h).calib.model, crate::calib::Model::Pinhole);
    }

    #[test]
    fn the_field_view_shows_the_log_from_above() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        app_mut(&mut h).persisted.layout.field = true;
        h.step();
        h.run();
        assert!(h.query_by_label("Field").is_some());
        assert!(
            h.query_by_label_contains("nothing with a place").is_some(),
            "no log yet"
        );
        let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/ssl.ulog");
        h.input_mut().dropped_files.push(Arc::new(Dropped(log)));
        until(&mut h, |a| {
            a.doc.as_ref().is_some_and(|d| d.has_log) && a.frame.is_some()
        });
        h.step();
        h.run();
        assert!(app(&h).doc.as_ref().unwrap().world_extent.is_some());
        assert!(h.query_by_label_contains("nothing with a place").is_none());
    }

    #[test]
    fn hovering_a_drawing_tells_what_it_is_and_a_click_pins_it() {
        let mut h = harness();
        until(&mut h, |a| a.frame.is_some());
        // A filled rectangle over the whole 64×36 picture.
        let log = std::env::temp_dir().join(format!("underlay-hover-{}.txt", std::process::id()));
        std::fs::write(
            &log,
            "{ { {-inf; inf}; { { { rectangle; (32, 18); (64, 36); 0 }; red; {zone; 1}; fill red } } } }\n",
        )
        .unwrap();
        h.input_mut().dropped_files.push(Arc::new(Dropped(log.clone())));
        until(&mut h, |a| {
            a.doc.as_ref().is_some_and(|d| d.has_log) && a.frame.is_some()
        });
        let _ = std::fs::remove_file(&log);
        app_mut(&mut h).doc.as_mut().unwrap().calibration = Some(
            crate::calib::Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
                .unwrap(),
        );
        // The middle of the video panel, between the side panels.
        h.hover_at(egui::pos2(480.0, 330.0));
        h.step();
        h.step();
        assert_eq!(app(&h).hovered, Some(0));
        h.run();
        assert!(
            h.query_all_by_label_contains("frame 0: persistent")
                .next()
                .is_some()
        );
        h.event(egui::Event::PointerButton {
            pos: egui::pos2(480.0, 330.0),
            button: egui::PointerButton::Primary,
            pressed: true,
            modifiers: Default::default(),
        });
        h.event(egui::Event::PointerButton {
            pos: egui::pos2(480.0, 330.0),
            button: egui::PointerButton::Primary,
            pressed: false,
            modifiers: Default::default(),
        });
        h.step();
        h.step();
        assert_eq!(app(&h).pinned, Some(0));
    }
}
