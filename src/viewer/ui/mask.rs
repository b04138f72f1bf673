//! The right panel's mask section: the method, the adaptive mask's
//! parameters (written into the session, see [`crate::viewer::mask_tuning`]),
//! the preview tint, "this is floor" with the seeded colour, and where the
//! floor can be (the session's `field`).

use std::ops::RangeInclusive;

use eframe::egui::{self, Color32, SliderClamping};

use crate::calib::presets;
use crate::mask::field::FieldSpec;
use crate::mask::{AdaptiveSettings, MaskSettings};
use crate::viewer::mask_tuning::{self, MaskTuning};

/// The whole section.
pub fn section(ui: &mut egui::Ui, mask: &mut MaskSettings, tuning: &mut MaskTuning) {
    mask_method(ui, mask);
    let Some(mut s) = mask_tuning::editable(mask) else {
        tuning.picking = false;
        ui.weak("This method has no parameters to tune.");
        return;
    };
    let before = s.clone();
    ui.checkbox(&mut tuning.preview, "Preview: tint the floor")
        .on_hover_text(
            "while this section is open, the viewer tints what the mask calls floor; \
             not saved and not exported (View → \"Show mask\" is)",
        );
    floor_colour(ui, &mut s, tuning);
    ui.add_space(4.0);
    parameters(ui, &mut s);
    ui.horizontal(|ui| {
        if ui
            .add_enabled(
                s != AdaptiveSettings::default(),
                egui::Button::new("Reset to defaults"),
            )
            .on_hover_text("every parameter back to its default, the picked floor colour cleared")
            .clicked()
        {
            s = AdaptiveSettings::default();
        }
    });
    if s != before {
        mask_tuning::store(mask, s);
    }
}

/// Where the floor can be, through the calibration (session `field`): a
/// field preset, or what the calibration says (its own field, else the
/// hull of its points); a polygon set in the session file is shown and
/// can be replaced.
pub fn field_region(ui: &mut egui::Ui, field: &mut Option<FieldSpec>) {
    let shown = match field {
        None => "the calibration's field or points".to_owned(),
        Some(FieldSpec::Preset(id)) if id.contains(':') => id.clone(),
        Some(FieldSpec::Preset(id)) => presets::preset(id).map_or_else(|| id.clone(), |p| p.title.to_owned()),
        Some(f @ FieldSpec::Polygon { .. }) => f.to_string(),
    };
    let mut chosen = field.clone();
    egui::ComboBox::from_label("floor only within")
        .selected_text(shown)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut chosen, None, "the calibration's field or points")
                .on_hover_text(
                    "the field the calibration names (a snapped calibration names its preset), else the hull of \
                     the points it was fitted from, grown by half its size",
                );
            for p in presets::all() {
                ui.selectable_value(&mut chosen, Some(FieldSpec::from(p.id)), p.title);
            }
        })
        .response
        .on_hover_text(
            "with a calibration, nothing outside this field's picture region is floor (stands, trees, sky); \
             saved in the session as `field`",
        );
    if chosen != *field {
        *field = chosen;
    }
}

/// The floor mask method, saved in the session (and used by export).
fn mask_method(ui: &mut egui::Ui, mask: &mut MaskSettings) {
    let current = mask.method_name();
    let mut chosen = current;
    egui::ComboBox::from_label("mask method")
        .selected_text(current)
        .show_ui(ui, |ui| {
            for m in ["auto", "adaptive", "thesis", "source", "none"] {
                ui.selectable_value(&mut chosen, m, m);
            }
            if let MaskSettings::Image { file } = mask {
                ui.label(format!("image: {}", file.display()));
            }
        })
        .response
        .on_hover_text("how the floor is told from what stands on it; saved in the session");
    if chosen != current {
        *mask = match chosen {
            "auto" => MaskSettings::Auto,
            "thesis" => MaskSettings::Thesis,
            "source" => MaskSettings::Source,
            "none" => MaskSettings::None,
            _ => MaskSettings::Adaptive(Default::default()),
        };
    }
}

/// The colour swatch of a hue bin (OpenCV units of 2°).
pub fn hue_colour(hue: u8) -> Color32 {
    egui::ecolor::Hsva::new(f32::from(hue) / 180.0, 0.7, 0.8, 1.0).into()
}

/// "This is floor": the button that arms the pick, the seeded colour and
/// what the last pick said.
fn floor_colour(ui: &mut egui::Ui, s: &mut AdaptiveSettings, tuning: &mut MaskTuning) {
    ui.horizontal_wrapped(|ui| {
        let label = if tuning.picking {
            "Click the floor…"
        } else {
            "This is floor…"
        };
        if ui
            .selectable_label(tuning.picking, label)
            .on_hover_text(
                "then click the floor in the video: the colour of the 9×9 pixels there \
                 becomes the floor's hue (instead of the picture's most common colour)",
            )
            .clicked()
        {
            tuning.picking = !tuning.picking;
            tuning.note = None;
        }
        match s.floor_hue {
            Some(h) => {
                let (rect, _) = ui.allocate_exact_size(egui::vec2(16.0, 16.0), egui::Sense::hover());
                ui.painter().rect_filled(rect, 3.0, hue_colour(h));
                ui.label(format!("hue {h} ({}°)", 2 * u32::from(h)));
                if ui
                    .small_button("clear")
                    .on_hover_text("the floor's hue from the picture again")
                    .clicked()
                {
                    s.floor_hue = None;
                    tuning.note = None;
                }
            }
            None => {
                ui.weak("floor colour: from the picture");
            }
        }
    });
    if tuning.picking {
        ui.weak("Click the floor in the video (Esc cancels).");
        if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
            tuning.picking = false;
        }
    }
    if tuning.waiting.is_some() {
        ui.weak("Reading the colour…");
    }
    if let Some(Err(e)) = &tuning.note {
        ui.colored_label(ui.visuals().warn_fg_color, e.to_string());
    }
}

/// One parameter: a label (with the hover text) and a slider.
fn row<N: egui::emath::Numeric>(
    ui: &mut egui::Ui,
    label: &str,
    hover: &str,
    value: &mut N,
    range: RangeInclusive<N>,
    logarithmic: Option<f64>,
) {
    let l = ui.label(label).on_hover_text(hover);
    let mut slider = egui::Slider::new(value, range).clamping(SliderClamping::Edits);
    if let Some(smallest) = logarithmic {
        slider = slider.logarithmic(true).smallest_positive(smallest);
    }
    ui.add(slider).labelled_by(l.id).on_hover_text(hover);
    ui.end_row();
}

/// The parameters that matter to a user, with the ranges
/// [`AdaptiveSettings::validate`] accepts.
fn parameters(ui: &mut egui::Ui, s: &mut AdaptiveSettings) {
    egui::Grid::new("mask parameters")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            row(
                ui,
                "least chroma",
                "pixels greyer than this (max − min of R, G, B) have no reliable hue: \
                 they do not count for the floor's colour and are never floor by colour",
                &mut s.min_chroma,
                0..=255,
                None,
            );
            let picked = if s.floor_hue.is_some() {
                " (not used while a floor colour is picked)"
            } else {
                ""
            };
            row(
                ui,
                "colour from rows",
                &format!(
                    "the floor's colour is the most common one in this lower fraction of the \
                     picture (1 = all of it): a camera above a pitch sees sky at the top{picked}"
                ),
                &mut s.hue_rows,
                0.01..=1.0,
                None,
            );
            row(
                ui,
                "hue margin",
                "hue (units of 2°) added on each side of the floor's hue window: more keeps \
                 shaded or reflecting floor floor; too much makes things of a near colour floor",
                &mut s.hue_margin,
                0..=90,
                None,
            );
            row(
                ui,
                "hue width limit",
                "the floor's hue window grows while the picture's colour histogram stays high, \
                 at most this far (units of 2°) on each side of its centre, before the margin",
                &mut s.max_hue_half_width,
                0..=90,
                None,
            );
            row(
                ui,
                "saturation factor",
                "floor must be at least this × as saturated as its dullest parts: lower keeps \
                 washed-out floor floor, higher leaves greyish things out",
                &mut s.sat_factor,
                0.0..=4.0,
                None,
            );
            row(
                ui,
                "brightness factor",
                "floor must be at least this × as bright as its darkest parts, and darker \
                 pixels are objects (robots, shadows): lower keeps dark floor floor, higher \
                 finds dark robots better",
                &mut s.val_factor,
                0.0..=4.0,
                None,
            );
            row(
                ui,
                "speck removal",
                "floor specks thinner than this radius go (pixels of a 1080-row picture)",
                &mut s.open_radius,
                0.0..=500.0,
                Some(0.5),
            );
            row(
                ui,
                "line filling",
                "light holes in the floor up to twice this wide, and long (painted lines), \
                 become floor (pixels of a 1080-row picture)",
                &mut s.fill_radius,
                0.0..=500.0,
                Some(0.5),
            );
            row(
                ui,
                "smallest floor patch",
                "floor patches smaller than this both ways are not floor: carpet-coloured \
                 markers on robots (pixels of a 1080-row picture)",
                &mut s.min_floor_island,
                0.0..=500.0,
                Some(0.5),
            );
            row(
                ui,
                "smoothing (s)",
                "time constant of the smoothing over time, in seconds (0: each frame alone): \
                 the mask does not flicker, but follows changes of light this slowly",
                &mut s.smoothing,
                0.0..=3600.0,
                Some(0.01),
            );
        });
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::{NodeT, Queryable};

    use super::*;

    type State = (MaskSettings, MaskTuning);

    fn harness(mask: MaskSettings) -> Harness<'static, State> {
        Harness::builder().with_size([420.0, 700.0]).build_ui_state(
            |ui, (m, t): &mut State| section(ui, m, t),
            (mask, MaskTuning::default()),
        )
    }

    fn slider<'t>(h: &'t Harness<'_, State>, label: &'t str) -> egui_kittest::Node<'t> {
        h.get_by_role_and_label(egui::accesskit::Role::Slider, label)
    }

    #[test]
    fn the_field_region_is_chosen_into_the_session() {
        let mut h = Harness::builder()
            .with_size([420.0, 300.0])
            .build_ui_state(|ui, f: &mut Option<FieldSpec>| field_region(ui, f), None);
        h.run();
        let shown = |h: &Harness<'_, Option<FieldSpec>>| format!("{:?}", h.get_by_label("floor only within"));
        assert!(
            shown(&h).contains("the calibration's field or points"),
            "{}",
            shown(&h)
        );
        h.get_by_label("floor only within").click();
        h.run();
        h.get_by_label(presets::ssl_division_b().title).click();
        h.run();
        assert_eq!(h.state(), &Some(FieldSpec::from("ssl-b")));
        // A polygon from the session file is shown as one.
        *h.state_mut() = Some(FieldSpec::Polygon {
            polygon: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        });
        h.run();
        assert!(shown(&h).contains("a polygon of 3 corners"), "{}", shown(&h));
    }

    #[test]
    fn mask_method_is_chosen_into_the_session() {
        let mut h = harness(MaskSettings::default());
        h.get_by_label("mask method").click();
        h.run();
        h.get_by_label("thesis").click();
        h.run();
        assert_eq!(h.state().0, MaskSettings::Thesis);
        assert!(
            h.query_by_label("This method has no parameters to tune.")
                .is_some()
        );
    }

    /// Auto shows the defaults; setting a parameter makes it adaptive with
    /// it, and resetting brings the defaults back.
    #[test]
    fn a_parameter_is_written_into_the_session_and_reset() {
        let mut h = harness(MaskSettings::Auto);
        h.run();
        assert!(
            h.get_by_label("Reset to defaults").accesskit_node().is_disabled(),
            "nothing to reset"
        );
        slider(&h, "hue margin").set_value_accesskit(11.0);
        h.run();
        let MaskSettings::Adaptive(s) = &h.state().0 else {
            panic!("{:?}", h.state().0)
        };
        assert_eq!(s.hue_margin, 11);
        assert_eq!(
            *s,
            AdaptiveSettings {
                hue_margin: 11,
                ..Default::default()
            }
        );
        slider(&h, "line filling").set_value_accesskit(20.0);
        h.run();
        let MaskSettings::Adaptive(s) = &h.state().0 else {
            panic!()
        };
        assert_eq!((s.hue_margin, s.fill_radius), (11, 20.0));
        h.get_by_label("Reset to defaults").click();
        h.run();
        assert_eq!(h.state().0, MaskSettings::Adaptive(AdaptiveSettings::default()));
    }

    /// Dragging a slider across changes its parameter as the pointer goes.
    #[test]
    fn dragging_a_slider_tunes_live() {
        let mut h = harness(MaskSettings::Adaptive(AdaptiveSettings::default()));
        h.run();
        let rect = slider(&h, "brightness factor").rect();
        let y = rect.center().y;
        h.drag_at(egui::pos2(rect.left() + 2.0, y));
        h.run();
        h.hover_at(egui::pos2(rect.right() - 2.0, y));
        h.run();
        let MaskSettings::Adaptive(s) = &h.state().0 else {
            panic!()
        };
        assert!(s.val_factor > 3.0, "{}", s.val_factor);
        h.drop_at(egui::pos2(rect.right() - 2.0, y));
        h.run();
    }

    #[test]
    fn the_seed_button_arms_a_pick_and_the_swatch_clears_it() {
        let seeded = AdaptiveSettings {
            floor_hue: Some(27),
            ..Default::default()
        };
        let mut h = harness(MaskSettings::Adaptive(seeded));
        h.run();
        assert!(h.query_by_label("hue 27 (54°)").is_some());
        h.get_by_label("This is floor…").click();
        h.run();
        assert!(h.state().1.picking);
        assert!(
            h.query_by_label("Click the floor in the video (Esc cancels).")
                .is_some()
        );
        h.key_press(egui::Key::Escape);
        h.run();
        assert!(!h.state().1.picking);
        h.get_by_label("clear").click();
        h.run();
        assert_eq!(h.state().0, MaskSettings::Adaptive(AdaptiveSettings::default()));
        assert!(h.query_by_label("floor colour: from the picture").is_some());
    }
}
