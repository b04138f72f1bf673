//! The "Find offset" part of the time-sync panel: start the search from
//! motion (the session's offset is the guess), watch its progress or stop
//! it, then see the agreement curve and apply the answer.

use eframe::egui;

use crate::sync::{Drift, Report};
use crate::viewer::find_offset::{Finder, Inputs};
use crate::viewer::state::Document;

/// Height of the curve's plot.
const PLOT_HEIGHT: f32 = 70.0;

pub fn section(ui: &mut egui::Ui, doc: &mut Document, finder: &mut Finder) {
    ui.separator();
    if finder.poll() {
        ui.ctx().request_repaint();
    }
    if finder.running() {
        ui.horizontal(|ui| {
            ui.add(
                egui::ProgressBar::new(finder.progress())
                    .desired_width(140.0)
                    .show_percentage(),
            );
            if ui.button("Stop").clicked() {
                finder.stop();
            }
        });
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(100));
        return;
    }
    let why_not = if !doc.has_log {
        Some("no log is open")
    } else if doc.clocks.is_some() {
        Some("the pictures carry the log's own clock")
    } else if doc.calibration.is_none() {
        Some("calibrate first: the log's objects are projected through the calibration")
    } else {
        None
    };
    let button = ui
        .add_enabled(why_not.is_none(), egui::Button::new("Find offset"))
        .on_hover_text(
            "compare where the log's robots and ball move with where the video changes, \
             ±60 s around the current offset",
        )
        .on_disabled_hover_text(why_not.unwrap_or_default());
    if button.clicked()
        && let Some(calibration) = doc.calibration.clone()
    {
        finder.start(Inputs {
            video: doc.session.video.clone(),
            log: doc.log.clone(),
            calibration,
            guess: doc.session.offset,
            rate: doc.session.rate,
        });
        ui.ctx().request_repaint();
    }
    let mut dismiss = false;
    match &finder.result {
        None => {}
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e);
            dismiss = ui.small_button("Dismiss").clicked();
        }
        Some(Ok(r)) => {
            let f = &r.found;
            if f.confident {
                ui.label(format!(
                    "Found {:.4} s ({:+.4} s from now), confidence {:.1}",
                    f.offset,
                    f.offset - doc.session.offset,
                    f.confidence
                ));
                if let Drift::Measured { rate, .. } = f.drift
                    && rate != 1.0
                {
                    ui.label(format!("Clock drift: rate {rate:.6}"));
                }
            } else {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!(
                        "No confident match (best {:.4} s, agreement {:.2}, confidence {:.1}): another run, a still \
                         scene or a wrong calibration?",
                        f.offset, f.score, f.confidence
                    ),
                );
            }
            curve(ui, r);
            ui.horizontal(|ui| {
                if f.confident && ui.button("Apply").clicked() {
                    doc.session.offset = f.offset;
                    doc.session.rate = f.rate;
                    dismiss = true;
                }
                if ui.small_button("Dismiss").clicked() {
                    dismiss = true;
                }
            });
        }
    }
    if dismiss {
        finder.result = None;
    }
}

/// The agreement curve, the answer marked.
fn curve(ui: &mut egui::Ui, r: &Report) {
    let width = ui.available_width().clamp(120.0, 400.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, PLOT_HEIGHT), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    let (lo, hi) = r.searched;
    let (smin, smax) = r
        .found
        .curve
        .iter()
        .map(|c| c.1)
        .filter(|s| s.is_finite())
        .fold((0.0f64, 0.1f64), |(a, b), s| (a.min(s), b.max(s)));
    let x = |o: f64| rect.left() + ((o - lo) / (hi - lo).max(1e-9)) as f32 * rect.width();
    let y = |s: f64| rect.bottom() - ((s - smin) / (smax - smin).max(1e-9)) as f32 * rect.height();
    let stroke = egui::Stroke::new(1.5, ui.visuals().hyperlink_color);
    let mut run: Vec<egui::Pos2> = Vec::new();
    for &(o, s) in &r.found.curve {
        if s.is_finite() {
            run.push(egui::pos2(x(o), y(s)));
        } else if run.len() > 1 {
            painter.add(egui::Shape::line(std::mem::take(&mut run), stroke));
        } else {
            run.clear();
        }
    }
    if run.len() > 1 {
        painter.add(egui::Shape::line(run, stroke));
    }
    let mark = if r.found.confident {
        egui::Color32::from_rgb(0, 170, 0)
    } else {
        ui.visuals().warn_fg_color
    };
    painter.vline(x(r.found.offset), rect.y_range(), egui::Stroke::new(1.0, mark));
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::{NodeT, Queryable};

    use super::*;
    use crate::calib::Calibration;
    use crate::geom::Vec2;
    use crate::log::{FrameTime, Log, Primitive, Shape, Style};
    use crate::sync::Found;
    use crate::viewer::state::OpenRequest;

    /// A document over a video that is not there, with a log of a moving
    /// circle, calibrated when `calibrated`.
    fn doc(calibrated: bool) -> Document {
        let mut doc = Document::open(&OpenRequest {
            input: Some("/nonexistent/run.mp4".into()),
            offset: Some(1000.0),
            ..Default::default()
        })
        .unwrap();
        let mut log = Log::new();
        let e = log.entities.intern("robot");
        for i in 0..100 {
            let p = Primitive {
                shape: Shape::Circle {
                    center: Vec2::new(i as f64 * 10.0, 0.0),
                    radius: 90.0,
                },
                style: Style::default(),
                entity: e,
                level: 0,
            };
            log.push_frame(FrameTime::Instant(1000.0 + i as f64 * 0.1), [p]);
        }
        doc.set_log(log, "run.ulog".into());
        if calibrated {
            doc.calibration = Some(
                Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap(),
            );
        }
        doc
    }

    fn harness(doc: Document, finder: Finder) -> Harness<'static, (Document, Finder)> {
        Harness::builder().with_size([400.0, 400.0]).build_ui_state(
            |ui, (d, f): &mut (Document, Finder)| section(ui, d, f),
            (doc, finder),
        )
    }

    fn report(confident: bool) -> Report {
        Report {
            found: Found {
                offset: 1002.5,
                rate: 1.001,
                score: 0.6,
                confidence: if confident { 8.0 } else { 1.2 },
                confident,
                curve: (0..50)
                    .map(|i| (990.0 + i as f64 * 0.5, (i as f64 * 0.3).sin()))
                    .collect(),
                drift: Drift::Measured {
                    rate: 1.001,
                    resolution: 1e-4,
                },
                evaluations: 50,
            },
            searched: (990.0, 1015.0),
            video: (0.0, 10.0),
            log: (1000.0, 1010.0),
            objects: 1,
            frames: 300,
            elapsed: 0.5,
        }
    }

    #[test]
    fn find_needs_a_calibration() {
        let mut h = harness(doc(false), Finder::default());
        h.run();
        assert!(h.get_by_label("Find offset").accesskit_node().is_disabled());
        // Clicking it does nothing.
        h.get_by_label("Find offset").click();
        h.run();
        assert!(!h.state().1.running() && h.state().1.result.is_none());
    }

    #[test]
    fn a_search_that_fails_says_why() {
        let mut h = harness(doc(true), Finder::default());
        h.run();
        h.get_by_label("Find offset").click();
        h.run();
        for _ in 0..500 {
            h.step();
            if h.state().1.result.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let r = h.state().1.result.clone().expect("the search ended");
        let e = r.unwrap_err();
        assert!(e.contains("run.mp4"), "{e}");
        h.run();
        assert!(h.query_by_label_contains("run.mp4").is_some());
    }

    #[test]
    fn apply_sets_offset_and_rate_and_no_match_offers_none() {
        let mut f = Finder::default();
        f.result = Some(Ok(report(true)));
        let mut h = harness(doc(true), f);
        h.run();
        assert!(h.query_by_label_contains("confidence 8.0").is_some());
        h.get_by_label("Apply").click();
        h.run();
        let (d, f) = h.state();
        assert_eq!(d.session.offset, 1002.5);
        assert_eq!(d.session.rate, 1.001);
        assert!(f.result.is_none());

        let mut f = Finder::default();
        f.result = Some(Ok(report(false)));
        let mut h = harness(doc(true), f);
        h.run();
        assert!(h.query_by_label_contains("No confident match").is_some());
        assert!(h.query_by_label("Apply").is_none());
        assert_eq!(h.state().0.session.offset, 1000.0);
    }
}
