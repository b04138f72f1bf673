//! Live mode driven through egui_kittest as a person would: frames fed to
//! the live loop's sink by hand (a [`LiveView::detached`]), the timeline
//! growing, pause, step back, back to live, the buffer's bounds, and the
//! settings edited in the viewer reaching the loop.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use super::*;
use crate::live::{BufferOptions, LiveSink};
use crate::viewer::live::{LiveView, ViewerSink};

/// A generated camera picture: a green floor, slightly ramped, its blue
/// changing with the frame's number.
fn picture(index: u64) -> crate::image::RgbImage {
    crate::image::RgbImage::from_shape_fn((36, 64, 3), |(y, x, c)| {
        [(30 + x / 8) as u8, (150 + y / 4) as u8, (40 + index % 20) as u8][c]
    })
}

/// The app in live mode over a detached view, and the sink to feed.
fn live_harness(buffer: BufferOptions) -> (Harness<'static, Option<ViewerApp>>, ViewerSink) {
    let (view, sink) = LiveView::detached("udp://127.0.0.1:5000".into(), buffer, || {}).unwrap();
    let doc = Document::for_live(crate::session::Session::new("udp://127.0.0.1:5000", ""), None).unwrap();
    let mut parts = Some((doc, view));
    let h = Harness::builder()
        .with_size([1000.0, 700.0])
        .with_max_steps(32)
        .build_ui_state(
            move |ui, app: &mut Option<ViewerApp>| {
                let app = app.get_or_insert_with(|| {
                    let mut a = ViewerApp::new(ui.ctx().clone(), Persisted::default());
                    if let Some((doc, view)) = parts.take() {
                        a.attach_live(doc, view);
                    }
                    a
                });
                app.logic(ui.ctx());
                crate::viewer::ui::show(app, ui);
                app.run_commands();
            },
            None,
        );
    (h, sink)
}

fn app<'a>(h: &'a Harness<'_, Option<ViewerApp>>) -> &'a ViewerApp {
    h.state().as_ref().unwrap()
}

fn live<'a>(h: &'a Harness<'_, Option<ViewerApp>>) -> &'a LiveView {
    app(h).live.as_ref().unwrap()
}

/// Steps the UI until `cond` holds (frames arrive from other threads).
#[track_caller]
fn until(h: &mut Harness<'_, Option<ViewerApp>>, cond: impl Fn(&ViewerApp) -> bool) {
    for _ in 0..2000 {
        h.step();
        if cond(app(h)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let a = app(h);
    panic!(
        "condition never held: following {}, player {}, frame {:?}, playback {} of {}–{} (playing {})",
        a.live_following(),
        a.player.is_some(),
        a.frame
            .as_ref()
            .map(|f| (f.index, f.time, f.requested, f.generation)),
        a.playback.time,
        a.playback.start(),
        a.playback.end(),
        a.playback.playing
    );
}

/// Feeds frames `range` at 10 a second from 1000 s, as the loop would:
/// decoded (into the buffer, waiting until it is coded, so none is
/// skipped), then drawn; frame 9's floor mask is doubtful.
fn feed(h: &mut Harness<'_, Option<ViewerApp>>, sink: &mut ViewerSink, range: std::ops::Range<u64>) {
    for i in range {
        let frame = crate::video::source::SourceFrame::new(i, 1000.0 + i as f64 / 10.0, picture(i));
        let before = live(h).buffer.counts().stored;
        sink.decoded(&frame);
        let until_coded = Instant::now() + Duration::from_secs(20);
        while live(h).buffer.counts().stored == before && Instant::now() < until_coded {
            std::thread::sleep(Duration::from_millis(1));
        }
        let doubt = (i == 9).then_some(crate::mask::MaskDoubt::GreyFloor {
            percent: 40,
            least: 8,
        });
        sink.drawn(&Arc::new(frame), 3, doubt);
    }
}

fn shown(a: &ViewerApp, index: u64) -> bool {
    a.frame.as_ref().is_some_and(|f| f.index == index)
}

/// The timeline grows as frames come; Pause reviews the buffer on the
/// frame on screen, stepping back shows the frame before (from the
/// buffer, drawn again), and "Back to live" follows the camera again.
#[test]
fn the_timeline_grows_and_pause_step_back_and_back_to_live_work() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    h.step();
    assert!(h.query_by_label("LIVE").is_some());
    feed(&mut h, &mut sink, 0..10);
    until(&mut h, |a| shown(a, 9));
    let a = app(&h);
    assert!((a.playback.end() - 1000.9).abs() < 1e-6, "{}", a.playback.end());
    assert!((a.playback.start() - 1000.0).abs() < 1e-6);
    assert!((a.playback.time - 1000.9).abs() < 1e-6);
    assert!(a.live_following() && a.player.is_none());
    assert_eq!(a.frame.as_ref().unwrap().primitives, 3);
    assert!(
        a.frame.as_ref().unwrap().mask_doubt.is_some(),
        "frame 9's doubt shown"
    );
    // More frames: the timeline grows.
    feed(&mut h, &mut sink, 10..15);
    until(&mut h, |a| shown(a, 14));
    assert_eq!(app(&h).frame.as_ref().unwrap().mask_doubt, None);
    assert!((app(&h).playback.end() - 1001.4).abs() < 1e-6);

    // Pause: reviewing the buffer, the same frame on screen.
    h.get_by_label("Pause live").click();
    until(&mut h, |a| {
        !a.live_following() && a.player.is_some() && a.frame_is_current()
    });
    assert!(shown(app(&h), 14));
    h.step();
    assert!(h.query_by_label("Back to live").is_some() && h.query_by_label("REVIEW").is_some());
    // Frames keep coming meanwhile: the review stays where it is.
    feed(&mut h, &mut sink, 15..20);
    h.run_steps(5);
    assert!(shown(app(&h), 14));
    // Step back twice: the frames before, decoded from the buffer.
    h.key_press(egui::Key::ArrowLeft);
    until(&mut h, |a| shown(a, 13));
    h.key_press(egui::Key::ArrowLeft);
    until(&mut h, |a| shown(a, 12));
    assert!((app(&h).playback.time - 1001.2).abs() < 1e-6);
    // Seeking to the start of the buffer.
    h.key_press(egui::Key::Home);
    until(&mut h, |a| shown(a, 0));
    // Play replays forward from there.
    h.key_press(egui::Key::Space);
    until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index >= 3));

    // Back to live: the newest frame, and the timeline reaches it.
    h.get_by_label("Back to live").click();
    feed(&mut h, &mut sink, 20..22);
    until(&mut h, |a| a.live_following() && shown(a, 21));
    assert!(app(&h).player.is_none());
    assert!((app(&h).playback.end() - 1002.1).abs() < 1e-6);
}

/// A step back while following pauses on the frame before the one on
/// screen.
#[test]
fn stepping_back_while_following_pauses() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..6);
    until(&mut h, |a| shown(a, 5));
    h.key_press(egui::Key::ArrowLeft);
    until(&mut h, |a| !a.live_following() && shown(a, 4));
}

/// A review takes in what came since it began once it reaches its end:
/// stepping forward past the last frame it had shows the next the camera
/// sent, and playing plays on into them.
#[test]
fn a_review_goes_on_into_what_came_since() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..5);
    until(&mut h, |a| shown(a, 4));
    // Space pauses a live view (the button moves as the live bar's
    // figures change).
    h.key_press(egui::Key::Space);
    until(&mut h, |a| {
        !a.live_following() && a.player.is_some() && a.frame_is_current()
    });
    assert!((app(&h).playback.end() - 1000.4).abs() < 1e-6);
    // Frames keep coming; the review stays on frame 4 ...
    feed(&mut h, &mut sink, 5..12);
    h.run_steps(3);
    assert!(shown(app(&h), 4));
    // ... until it steps past its end: the camera's next frame.
    h.key_press(egui::Key::ArrowRight);
    until(&mut h, |a| shown(a, 5));
    assert!(!app(&h).live_following(), "still reviewing");
    assert!(app(&h).playback.end() > 1001.0, "{}", app(&h).playback.end());
    // Playing from near the end plays on into the frames that came.
    feed(&mut h, &mut sink, 12..20);
    h.key_press(egui::Key::End);
    h.key_press(egui::Key::Space);
    until(&mut h, |a| a.frame.as_ref().is_some_and(|f| f.index >= 15));
    assert!(!app(&h).live_following());
}

/// Following the camera plays at its pace: the speed keys and the loop
/// wait (and say so) until the review is paused.
#[test]
fn speed_and_loop_wait_while_following() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..6);
    until(&mut h, |a| shown(a, 5));
    let speed = app(&h).playback.speed;
    h.key_press(egui::Key::CloseBracket);
    h.key_press(egui::Key::L);
    h.run_steps(2);
    let a = app(&h);
    assert!(a.live_following());
    assert_eq!(a.playback.speed, speed, "following plays at the camera's pace");
    assert!(
        a.messages.iter().any(|m| m.text.contains("pause first")),
        "the keys say why they wait"
    );
    h.key_press(egui::Key::Space);
    until(&mut h, |a| !a.live_following());
    h.key_press(egui::Key::CloseBracket);
    h.run_steps(2);
    assert!(app(&h).playback.speed > speed);
}

/// The buffer keeps its seconds: the timeline starts no earlier than they
/// reach back, and the review can go back no further.
#[test]
fn the_buffer_keeps_its_bounds_and_the_timeline_follows() {
    let (mut h, mut sink) = live_harness(BufferOptions {
        seconds: 1.0,
        ..Default::default()
    });
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..30);
    until(&mut h, |a| shown(a, 29));
    let c = live(&h).buffer.counts();
    assert_eq!((c.frames, c.stored, c.evicted), (11, 30, 19), "{c:?}");
    let a = app(&h);
    assert!(
        (a.playback.start() - 1001.9).abs() < 1e-6,
        "{}",
        a.playback.start()
    );
    // The buffer's extent and memory are shown.
    assert!(
        crate::viewer::ui::live::status_text(live(&h)).contains("buffer 1 s"),
        "{}",
        crate::viewer::ui::live::status_text(live(&h))
    );
    h.key_press(egui::Key::Home);
    until(&mut h, |a| !a.live_following() && shown(a, 19));
}

/// What the viewer edits reaches the loop: the settings it draws the
/// live frames (and its outputs) with, and the log it swaps in reaches
/// the viewer's entities.
#[test]
fn edits_reach_the_loop_and_logs_reach_the_viewer() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..2);
    until(&mut h, |a| shown(a, 1));
    let first = sink.settings().expect("the settings at the start");
    assert!(first.toggles.overlay);
    h.get_by_label("Overlay").click();
    h.run_steps(3);
    let now = sink.settings().expect("the edit");
    assert!(!now.toggles.overlay);
    assert!(sink.settings().is_none(), "sent once");
    // The mask section's preview tint is the viewer's own: the loop (and
    // its outputs) do not get it.
    h.get_by_label("Mask").click();
    h.run_steps(5);
    assert!(app(&h).mask_tuning.section_open);
    assert!(sink.settings().is_none(), "no tint sent to the loop");
    let text = "{ { 1000.1; { { { circle; (0, 0); 70}; green; {robots/blue/1; 0} } } } }";
    let log = Arc::new(crate::log::text::parse(text).unwrap());
    sink.log(&log, &Arc::new(crate::select::Index::new(&log)));
    until(&mut h, |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.has_log && d.log.entities.len() == 1)
    });
}

/// The calibration tools take the live frame as it came from the camera
/// (the buffer's picture, nothing drawn on it): "This is floor" on the
/// green picture seeds the floor's hue; "Snap to lines" gets its picture
/// and says there is no calibration to start from.
#[test]
fn floor_pick_and_snap_work_on_the_live_frame() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..3);
    until(&mut h, |a| shown(a, 2));
    if let Some(a) = h.state_mut().as_mut() {
        a.pick_floor_at(egui::pos2(32.0, 18.0));
    }
    let a = app(&h);
    let crate::mask::MaskSettings::Adaptive(m) = &a.doc.as_ref().unwrap().session.mask else {
        panic!("no floor colour picked: {:?}", a.messages);
    };
    let hue = m.floor_hue.unwrap();
    assert!((50..=75).contains(&hue), "green: {hue}");
    assert!(a.live_following(), "the pick does not pause");
    if let Some(a) = h.state_mut().as_mut() {
        a.run_command(Command::SnapToLines);
    }
    until(&mut h, |a| a.calib.snap.is_some());
    let a = app(&h);
    let Some(Err(e)) = &a.calib.snap else {
        panic!("{:?}", a.calib.snap.is_some())
    };
    assert!(e.contains("no calibration to start from"), "{e}");
    assert!(a.calib.snap_waiting.is_none() && a.live_following());
}

/// Export reads a video file: live, it is refused with what to do.
#[test]
fn export_is_refused_live_with_what_to_do() {
    let (mut h, mut sink) = live_harness(BufferOptions::default());
    sink.started(64, 36, 10.0);
    feed(&mut h, &mut sink, 0..1);
    until(&mut h, |a| shown(a, 0));
    if let Some(a) = h.state_mut().as_mut() {
        a.run_command(Command::ShowExport);
    }
    let a = app(&h);
    assert!(!a.export.open);
    assert!(
        a.messages
            .iter()
            .any(|m| m.error && m.text.contains("--out FILE"))
    );
}
