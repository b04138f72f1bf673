//! The live bar above the transport (live mode only): LIVE or REVIEW,
//! "Pause" / "Back to live", the run's rates, drops and latency, the
//! replay buffer's extent and memory, every source's packets, and
//! "NO SIGNAL since …" while the camera is silent.

use eframe::egui::{self, Color32, RichText};

use crate::viewer::app::{Command, ViewerApp};
use crate::viewer::live::LiveView;

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

/// The line the live bar shows: rates, drops, latency, the buffer.
pub fn status_text(view: &LiveView) -> String {
    let mut line = match &view.status {
        Some(s) => {
            let mut line = format!(
                "in {:.1} fps · out {:.1} fps · dropped {} · latency {:.0}/{:.0} ms",
                s.fps_in, s.fps_out, s.dropped, s.latency_ms.0, s.latency_ms.1
            );
            if let Some(w) = s.camera.waiting(crate::live::now()) {
                line.push_str(&format!(" · {w}"));
            }
            line
        }
        None => "waiting for the camera…".to_owned(),
    };
    let c = &view.counts;
    if let Some((a, z)) = c.span {
        line.push_str(&format!(
            " · buffer {:.0} s, {:.1} MB",
            z - a,
            c.bytes as f64 / (1 << 20) as f64
        ));
    }
    if c.skipped > 0 {
        line.push_str(&format!(" ({} not kept)", c.skipped));
    }
    line
}

/// Each source's packets, as the live bar lists them.
pub fn sources_text(view: &LiveView) -> Option<String> {
    let s = view.status.as_ref()?;
    if s.sources.is_empty() {
        return None;
    }
    Some(
        s.sources
            .iter()
            .map(|c| {
                let bad = if c.bad > 0 {
                    format!(" ({} bad)", c.bad)
                } else {
                    String::new()
                };
                format!("{}: {} packets{bad}", c.name, c.packets)
            })
            .collect::<Vec<_>>()
            .join(" · "),
    )
}

/// "NO SIGNAL since …" while the camera is silent.
pub fn no_signal_text(view: &LiveView) -> Option<String> {
    let since = view.status.as_ref()?.camera.no_signal_since?;
    let clock = super::timeline::fmt_log_time(since, None);
    Some(format!(
        "NO SIGNAL since {clock} ({:.0} s)",
        (crate::live::now() - since).max(0.0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The live bar's lines: rates and drops, each source's packets, and
    /// "NO SIGNAL since …" while the camera is silent.
    #[test]
    fn the_status_says_rates_sources_and_no_signal() {
        let (mut view, _sink) =
            LiveView::detached("cam".into(), crate::live::BufferOptions::default(), || {}).unwrap();
        assert_eq!(status_text(&view), "waiting for the camera…");
        assert!(sources_text(&view).is_none() && no_signal_text(&view).is_none());
        view.status = Some(crate::live::LiveStatus {
            fps_in: 30.0,
            fps_out: 29.5,
            dropped: 2,
            latency_ms: (40.0, 55.0),
            camera: crate::live::CameraStatus {
                received: 300,
                no_signal_since: Some(crate::live::now() - 5.2),
                ..Default::default()
            },
            sources: vec![crate::live::SourceCounts {
                name: "udp://0.0.0.0:9870".into(),
                packets: 120,
                bad: 3,
                ..Default::default()
            }],
            ..Default::default()
        });
        assert_eq!(
            status_text(&view),
            "in 30.0 fps · out 29.5 fps · dropped 2 · latency 40/55 ms"
        );
        assert_eq!(
            sources_text(&view).unwrap(),
            "udp://0.0.0.0:9870: 120 packets (3 bad)"
        );
        let n = no_signal_text(&view).unwrap();
        assert!(
            n.starts_with("NO SIGNAL since ") && n.ends_with(" UTC (5 s)"),
            "{n}"
        );
        // Back, joined between keyframes: packets come, no picture yet.
        if let Some(s) = &mut view.status {
            s.camera.keyframe_wait = Some(crate::live::now() - 3.5);
        }
        assert!(
            status_text(&view).ends_with(" · waiting for a keyframe (3 s)"),
            "{}",
            status_text(&view)
        );
    }
}
