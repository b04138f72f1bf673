//! Transport controls and the timeline: video time and log time, events
//! where persistent frames start, the loop range and the playhead.

use crate::time::{LogTime, VideoTime, cycle_of};
use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, Vec2};

use crate::viewer::app::{Command, ViewerApp};
use crate::viewer::playback::SPEEDS;

/// Colour of event markers.
const EVENT_COLOR: Color32 = Color32::from_rgb(255, 170, 40);

pub fn panel(app: &mut ViewerApp, ui: &mut egui::Ui) {
    if app.live.is_some() {
        super::live::bar(app, ui);
    }
    let Some(info) = app.info().cloned() else {
        ui.label(if app.live.is_some() {
            "Waiting for the camera's first picture…"
        } else {
            "No video open."
        });
        return;
    };
    let following = app.live_following();
    let cmds = &mut app.commands;
    let pb = &app.playback;
    ui.add_space(2.0);
    ui.horizontal(|ui| {
        let b = |ui: &mut egui::Ui, text: &str, tip: &str| ui.button(text).on_hover_text(tip).clicked();
        if b(ui, "< event", "previous event (Shift+N)") {
            cmds.push(Command::Event(-1));
        }
        if b(ui, "−10 s", "back 10 s (↓)") {
            cmds.push(Command::Jump(-10.0));
        }
        if b(ui, "−1 s", "back 1 s (Shift+←)") {
            cmds.push(Command::Jump(-1.0));
        }
        if b(ui, "< frame", "one frame back (←)") {
            cmds.push(Command::Step(-1));
        }
        let play = if pb.playing || following { "Pause" } else { "Play" };
        if b(ui, play, "play / pause (Space)") {
            cmds.push(Command::TogglePlay);
        }
        if b(ui, "frame >", "one frame forward (→)") {
            cmds.push(Command::Step(1));
        }
        if b(ui, "+1 s", "forward 1 s (Shift+→)") {
            cmds.push(Command::Jump(1.0));
        }
        if b(ui, "+10 s", "forward 10 s (↑)") {
            cmds.push(Command::Jump(10.0));
        }
        if b(ui, "event >", "next event (N)") {
            cmds.push(Command::Event(1));
        }
        ui.separator();
        // Following a live camera plays at its pace, without a loop:
        // speed and loop wait until the run is paused.
        let following_note =
            "following the live camera: pause to play the buffer at another speed or in a loop";
        ui.add_enabled_ui(!following, |ui| {
            egui::ComboBox::from_label("speed")
                .selected_text(format!("{}×", pb.speed))
                .width(60.0)
                .show_ui(ui, |ui| {
                    for s in SPEEDS {
                        if ui.selectable_label(pb.speed == s, format!("{s}×")).clicked() {
                            cmds.push(Command::SetSpeed(s));
                        }
                    }
                })
                .response
                .on_hover_text("speed ([ and ])")
                .on_disabled_hover_text(following_note);
            ui.separator();
            let loop_button = |ui: &mut egui::Ui, text: &str, tip: &str| {
                ui.button(text)
                    .on_hover_text(tip)
                    .on_disabled_hover_text(following_note)
                    .clicked()
            };
            if loop_button(ui, "Loop from here", "start the loop at the current time") {
                cmds.push(Command::LoopPoint(0));
            }
            if loop_button(ui, "Loop to here", "end the loop at the current time") {
                cmds.push(Command::LoopPoint(1));
            }
            if let Some((a, z)) = pb.loop_range {
                let mut on = pb.looping;
                if ui
                    .checkbox(&mut on, format!("loop {a:.2}–{z:.2} s"))
                    .on_hover_text("L")
                    .changed()
                {
                    cmds.push(Command::ToggleLoop);
                }
            }
        });
    });
    let time_map = app.doc.as_ref().map(|d| d.time_map());
    let frame = app.frame.as_ref();
    ui.horizontal(|ui| {
        let shown = frame.map_or(pb.time, |f| f.time);
        // A live camera's frames carry their arrival (Unix seconds): the
        // time of day reads better than days since 1970.
        let fmt_video = |t: f64| {
            if app.live.is_some() && t >= 1e8 {
                format!("{} UTC", clock(t.rem_euclid(86_400.0)))
            } else {
                fmt_time(t)
            }
        };
        ui.monospace(format!("video {} / {}", fmt_video(shown), fmt_video(info.end())));
        if let Some(f) = frame {
            ui.monospace(format!("frame {}", f.index));
            if f.preview {
                ui.weak(format!(
                    "(the keyframe at {}: decoding to {}…)",
                    fmt_time(f.time),
                    fmt_time(pb.time)
                ));
            }
        }
        if let Some(m) = &time_map {
            let log = m.log_time_at(VideoTime(shown)).secs();
            let start = app.doc.as_ref().and_then(|d| d.log_range).map(|r| r.0);
            ui.monospace(format!("log {}", fmt_log_time(log, start)))
                .on_hover_text(format!("log time {log:.6} s"));
            // A simulator's clock is counted in cycles (and stoppage steps).
            if let Some(step) = info.clock_step
                && let Some((cycle, stopped)) = cycle_of(log - m.offset, step)
            {
                let text = match stopped {
                    0 => format!("cycle {cycle}"),
                    s => format!("cycle {cycle},{s}"),
                };
                ui.monospace(text);
            }
        }
        if let Some(f) = frame {
            frame_labels(ui, f.primitives, f.mask_doubt);
        }
    });
    let events: Vec<f64> = match (&app.doc, &time_map) {
        (Some(doc), Some(m)) => doc
            .events
            .events
            .iter()
            .map(|e| m.video_time(LogTime(e.time)).secs())
            .collect(),
        _ => Vec::new(),
    };
    if let Some(t) = timeline(
        ui,
        pb.start(),
        pb.end(),
        pb.time,
        pb.active_loop().or(pb.loop_range),
        &events,
        time_map.as_ref(),
    ) {
        app.commands.push(Command::Seek(t));
    }
}

/// What the frame on screen drew, and a warning when its floor mask is
/// doubtful (what and why on hover).
fn frame_labels(ui: &mut egui::Ui, primitives: usize, doubt: Option<crate::mask::MaskDoubt>) {
    ui.monospace(format!("{primitives} primitives drawn"));
    if let Some(d) = doubt {
        ui.colored_label(ui.visuals().warn_fg_color, "mask doubtful")
            .on_hover_text(format!("{d}.\n\nWhat to do: {}.", d.advice()));
    }
}

/// Formats seconds as `m:ss.mmm`.
pub fn fmt_time(t: f64) -> String {
    if !t.is_finite() {
        return format!("{t}");
    }
    let sign = if t < 0.0 { "-" } else { "" };
    let t = t.abs();
    if t >= 86_400.0 {
        let days = (t / 86_400.0).floor();
        return format!("{sign}{} d {}", days as u64, clock(t - days * 86_400.0));
    }
    if t >= 3600.0 {
        return format!("{sign}{}", clock(t));
    }
    let m = (t / 60.0).floor();
    format!("{sign}{}:{:06.3}", m as u64, t - m * 60.0)
}

/// `H:MM:SS.mmm` of `t` seconds (less than a day).
fn clock(t: f64) -> String {
    let h = (t / 3600.0).floor();
    let m = ((t - h * 3600.0) / 60.0).floor();
    format!("{}:{:02}:{:06.3}", h as u64, m as u64, t - h * 3600.0 - m * 60.0)
}

/// A log time as people read it: the time of day (UTC) for times since
/// the Unix epoch, seconds otherwise; and the time from the log's
/// `start` when known.
pub fn fmt_log_time(t: f64, start: Option<f64>) -> String {
    if !t.is_finite() {
        return format!("{t}");
    }
    // After 1973: seconds since the epoch.
    let at = if t >= 1e8 {
        format!("{} UTC", clock(t.rem_euclid(86_400.0)))
    } else {
        format!("{t:.3} s")
    };
    match start {
        Some(s) if s.is_finite() => format!("{at} (log +{})", fmt_time(t - s)),
        _ => at,
    }
}

/// The timeline bar over video times `[start, end]`; returns the time the
/// user clicked or dragged to. `events` are video times of log events;
/// with a `time_map`, times are also shown as log times.
pub fn timeline(
    ui: &mut egui::Ui,
    start: f64,
    end: f64,
    now: f64,
    loop_range: Option<(f64, f64)>,
    events: &[f64],
    time_map: Option<&crate::video::TimeMap>,
) -> Option<f64> {
    let width = ui.available_width().max(50.0);
    let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, 34.0), Sense::click_and_drag());
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Slider, true, "timeline"));
    let painter = ui.painter_at(rect);
    let span = (end - start).max(1e-9);
    let x_of = |t: f64| rect.left() + ((t - start) / span).clamp(0.0, 1.0) as f32 * rect.width();
    let t_of = |x: f32| start + ((x - rect.left()) / rect.width()).clamp(0.0, 1.0) as f64 * span;
    let bar = Rect::from_min_max(Pos2::new(rect.left(), rect.top() + 12.0), rect.right_bottom());
    painter.rect_filled(bar, 3.0, ui.visuals().extreme_bg_color);
    if let Some((a, b)) = loop_range {
        painter.rect_filled(
            Rect::from_x_y_ranges(x_of(a)..=x_of(b), bar.y_range()),
            0.0,
            Color32::from_rgba_unmultiplied(80, 140, 255, 60),
        );
    }
    // Events, at most one marker per pixel column.
    let lo = events.partition_point(|&t| t < start);
    let hi = events.partition_point(|&t| t <= end);
    let mut last_x = f32::NEG_INFINITY;
    for &t in events.get(lo..hi).unwrap_or(&[]) {
        let x = x_of(t).round();
        if x > last_x {
            painter.line_segment(
                [Pos2::new(x, rect.top() + 2.0), Pos2::new(x, rect.top() + 12.0)],
                Stroke::new(1.5, EVENT_COLOR),
            );
            last_x = x;
        }
    }
    // Second ticks when they are not too dense.
    let step = [1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0]
        .into_iter()
        .find(|s| (span / s) as f32 * 8.0 < rect.width())
        .unwrap_or(3600.0);
    let mut t = (start / step).ceil() * step;
    while t <= end {
        let x = x_of(t);
        painter.line_segment(
            [Pos2::new(x, bar.bottom() - 5.0), Pos2::new(x, bar.bottom())],
            Stroke::new(1.0, ui.visuals().weak_text_color()),
        );
        t += step;
    }
    let x = x_of(now);
    painter.line_segment(
        [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
        Stroke::new(2.0, ui.visuals().strong_text_color()),
    );
    if let Some(p) = resp.hover_pos() {
        let t = t_of(p.x);
        // A live camera's times are its frames' arrivals (Unix seconds; no
        // video runs for three years): shown as the time of day.
        let video = if t >= 1e8 {
            format!("{} UTC", clock(t.rem_euclid(86_400.0)))
        } else {
            fmt_time(t)
        };
        let text = match time_map {
            Some(m) => format!(
                "video {video} · log {}",
                fmt_log_time(m.log_time_at(VideoTime(t)).secs(), None)
            ),
            None => format!("video {video}"),
        };
        resp.clone().on_hover_text_at_pointer(text);
    }
    if (resp.clicked() || resp.dragged())
        && let Some(p) = resp.interact_pointer_pos()
    {
        return Some(t_of(p.x));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulator_clocks_read_as_cycles() {
        let c = |cycle, stopped| crate::time::cycle_clock(cycle, stopped, 0.1);
        assert_eq!(cycle_of(c(1200, 0), 0.1), Some((1200, 0)));
        assert_eq!(cycle_of(c(274, 37), 0.1), Some((274, 37)));
        assert_eq!(cycle_of(c(0, 0), 0.1), Some((0, 0)));
        assert_eq!(cycle_of(-1.0, 0.1), None);
        assert_eq!(cycle_of(1.0, 0.0), None);
    }

    #[test]
    fn a_doubtful_mask_is_flagged_beside_the_frame() {
        use egui_kittest::Harness;
        use egui_kittest::kittest::Queryable;
        for doubt in [
            None,
            Some(crate::mask::MaskDoubt::GreyFloor {
                percent: 46,
                least: 8,
            }),
        ] {
            let h = Harness::builder().with_size([420.0, 40.0]).build_ui(|ui| {
                ui.horizontal(|ui| frame_labels(ui, 3, doubt));
            });
            assert!(h.query_by_label("3 primitives drawn").is_some());
            assert_eq!(
                h.query_by_label("mask doubtful").is_some(),
                doubt.is_some(),
                "{doubt:?}"
            );
        }
    }

    #[test]
    fn clicking_the_timeline_seeks() {
        use egui_kittest::Harness;
        use egui_kittest::kittest::Queryable;
        let mut h = Harness::builder().with_size([420.0, 60.0]).build_ui_state(
            |ui, got: &mut Option<f64>| {
                if let Some(t) = timeline(
                    ui,
                    10.0,
                    20.0,
                    12.0,
                    Some((11.0, 13.0)),
                    &[14.0, 15.0],
                    Some(&crate::video::TimeMap::new(100.0)),
                ) {
                    *got = Some(t);
                }
            },
            None,
        );
        let r = h.get_by_label("timeline").rect();
        h.hover_at(r.center());
        h.run();
        h.get_by_label("timeline").click();
        h.run();
        let t = h.state().expect("a click seeks");
        assert!((t - 15.0).abs() < 0.1, "{t}");
    }

    #[test]
    fn times_format_as_minutes() {
        assert_eq!(fmt_time(0.0), "0:00.000");
        assert_eq!(fmt_time(75.25), "1:15.250");
        assert_eq!(fmt_time(-1.5), "-0:01.500");
        assert_eq!(fmt_time(3725.5), "1:02:05.500");
        // Not "-16666666:52.000" for a difference of decades.
        assert_eq!(fmt_time(-1_000_000_000.0), "-11574 d 1:46:40.000");
    }

    #[test]
    fn log_times_read_as_time_of_day_and_from_the_start() {
        assert_eq!(
            fmt_log_time(1_721_207_653.867, Some(1_721_207_643.317)),
            "9:14:13.867 UTC (log +0:10.550)"
        );
        assert_eq!(fmt_log_time(12.5, Some(2.0)), "12.500 s (log +0:10.500)");
        assert_eq!(fmt_log_time(12.5, None), "12.500 s");
    }
}
