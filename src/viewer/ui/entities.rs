//! The entities panel: the entity tree with checkboxes, solo, search,
//! primitive counts at the current time, and level limits (global and per
//! entity). Every edit lands in the session's [`crate::select::FilterSpec`].

use eframe::egui::{self, Role, WidgetInfo};

use crate::viewer::app::EntitiesUi;
use crate::viewer::entities::{Check, EntityTree};
use crate::viewer::state::Document;

/// An edit recorded while drawing, applied afterwards.
enum Action {
    Toggle(usize),
    Solo(usize),
    ShowAll,
    SetLevel(String, Option<i32>),
    /// Draw the entity (and its subtree) above the mask, or not.
    Above(String, bool),
}

/// Draws the panel for `doc`; `state.counts` must be current.
pub fn panel(ui: &mut egui::Ui, state: &mut EntitiesUi, doc: &mut Document) {
    ui.heading("Entities");
    let total: usize = state.counts.iter().sum();
    ui.label(format!("{total} primitives at this time (before filtering)"));
    if let Some(p) = &doc.tree.problem {
        ui.colored_label(ui.visuals().warn_fg_color, p);
    }
    levels(ui, doc);
    let spec = &mut doc.session.filter;
    if !spec.only.is_empty() || !spec.exclude.is_empty() {
        ui.horizontal_wrapped(|ui| {
            if !spec.only.is_empty() {
                ui.label(format!("only: {}", spec.only.join(", ")));
            }
            if !spec.exclude.is_empty() {
                ui.label(format!("excluded: {}", spec.exclude.join(", ")));
            }
            if ui.small_button("clear").clicked() {
                spec.only.clear();
                spec.exclude.clear();
            }
        });
    }
    ui.horizontal(|ui| {
        ui.add(
            egui::TextEdit::singleline(&mut state.search)
                .hint_text("search entities")
                .desired_width(150.0),
        );
        if !state.search.is_empty() && ui.small_button("×").on_hover_text("clear the search").clicked() {
            state.search.clear();
        }
        if ui
            .small_button("all")
            .on_hover_text("show every entity")
            .clicked()
        {
            doc.session.filter.hidden.clear();
        }
    });
    ui.separator();
    let mut actions = Vec::new();
    let tree = &doc.tree;
    let ctx = Row {
        doc,
        counts: &state.counts,
    };
    // Both ways, so that rows wider than the panel (long names, counts
    // changing while playing) scroll instead of widening it.
    egui::ScrollArea::both().auto_shrink([false; 2]).show(ui, |ui| {
        if tree.nodes.is_empty() {
            ui.label("This log has no entities.");
        } else if state.search.trim().is_empty() {
            for &r in &tree.roots {
                node_ui(ui, &ctx, tree, r, &mut vec![r], &mut actions);
            }
        } else {
            let hits = tree.search(&state.search);
            if hits.is_empty() {
                ui.label("No entity matches.");
            }
            for n in hits {
                row(ui, &ctx, tree, n, tree.name(n), &mut actions);
            }
        }
    });
    let tree = &doc.tree;
    for a in actions {
        let spec = &mut doc.session.filter;
        match a {
            Action::Toggle(n) => tree.toggle(&doc.log, spec, n),
            Action::Solo(n) => tree.solo(&doc.log, spec, n),
            Action::ShowAll => spec.hidden.clear(),
            Action::SetLevel(name, l) => crate::viewer::entities::set_entity_level(spec, &name, l),
            Action::Above(name, true) => {
                spec.above_mask.insert(name);
            }
            Action::Above(name, false) => {
                spec.above_mask.remove(&name);
            }
        }
    }
}

/// What every row needs to read.
struct Row<'a> {
    doc: &'a Document,
    counts: &'a [usize],
}

fn levels(ui: &mut egui::Ui, doc: &mut Document) {
    let Some((lo, hi)) = doc.tree.level_range else {
        return;
    };
    let spec = &mut doc.session.filter;
    ui.horizontal(|ui| {
        let mut limited = spec.max_level.is_some();
        if ui
            .checkbox(&mut limited, "Limit level")
            .on_hover_text("show only primitives with level ≤ the maximum (smaller = more important)")
            .changed()
        {
            spec.max_level = limited.then_some(hi);
        }
        if let Some(m) = &mut spec.max_level {
            ui.add(egui::Slider::new(m, lo.min(*m)..=hi.max(*m)).text("max level"));
        } else {
            ui.label(format!("levels {lo}–{hi}"));
        }
    });
}

fn node_ui(
    ui: &mut egui::Ui,
    ctx: &Row,
    tree: &EntityTree,
    n: usize,
    path: &mut Vec<usize>,
    actions: &mut Vec<Action>,
) {
    let node = &tree.nodes[n];
    // Under a parent whose name is a path prefix, show only the rest.
    let parent = path.len().checked_sub(2).map(|i| tree.name(path[i]));
    let label = parent
        .and_then(|p| tree.name(n).strip_prefix(p))
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(tree.name(n));
    if node.children.is_empty() {
        row(ui, ctx, tree, n, label, actions);
        return;
    }
    let id = ui.make_persistent_id(("entity", path.as_slice()));
    egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, path.len() < 4)
        .show_header(ui, |ui| row(ui, ctx, tree, n, label, actions))
        .body(|ui| {
            for &c in &node.children {
                // A cycle would recurse forever: stop where it closes.
                if path.contains(&c) {
                    continue;
                }
                path.push(c);
                node_ui(ui, ctx, tree, c, path, actions);
                path.pop();
            }
        });
}

fn row(ui: &mut egui::Ui, ctx: &Row, tree: &EntityTree, n: usize, label: &str, actions: &mut Vec<Action>) {
    let (log, spec) = (&ctx.doc.log, &ctx.doc.session.filter);
    let check = tree.check(log, spec, n);
    ui.horizontal(|ui| {
        let mut on = check == Check::All;
        let resp = ui.add(egui::Checkbox::new(&mut on, label).indeterminate(check == Check::Some));
        if resp.clicked() {
            actions.push(Action::Toggle(n));
        }
        let count = tree.subtree_count(n, ctx.counts);
        if count > 0 {
            ui.weak(count.to_string())
                .on_hover_text("primitives of this subtree at the current time");
        }
        let solo = tree.is_solo(log, spec, n);
        let b = ui
            .add(egui::Button::new("S").small().selected(solo))
            .on_hover_text(if solo {
                "show everything again"
            } else {
                "solo: show only this subtree"
            });
        b.widget_info(|| WidgetInfo::labeled(Role::Button, true, format!("solo {}", tree.name(n))));
        if b.clicked() {
            actions.push(if solo { Action::ShowAll } else { Action::Solo(n) });
        }
        let level = spec.levels.get(tree.name(n)).copied();
        if let Some(l) = level {
            ui.weak(format!("≤{l}"))
                .on_hover_text("level limit of this subtree");
        }
        let above = spec.above_mask.contains(tree.name(n));
        if above {
            ui.weak("▲")
                .on_hover_text("drawn above the mask, over what stands on the floor");
        }
        resp.context_menu(|ui| {
            ui.label(tree.name(n));
            let mut limited = level.is_some();
            let default = spec.max_level.or(tree.level_range.map(|r| r.1)).unwrap_or(0);
            if ui.checkbox(&mut limited, "Own level limit").changed() {
                actions.push(Action::SetLevel(
                    tree.name(n).to_owned(),
                    limited.then_some(default),
                ));
            }
            if let Some(mut l) = level
                && ui
                    .add(egui::DragValue::new(&mut l).prefix("max level "))
                    .changed()
            {
                actions.push(Action::SetLevel(tree.name(n).to_owned(), Some(l)));
            }
            if ui.button("Solo").clicked() {
                actions.push(Action::Solo(n));
            }
            let mut on = above;
            if ui
                .checkbox(&mut on, "Draw above the mask")
                .on_hover_text("over the robots: for labels that must stay readable")
                .changed()
            {
                actions.push(Action::Above(tree.name(n).to_owned(), on));
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use egui_kittest::Harness;
    use egui_kittest::kittest::{NodeT, Queryable};

    use super::*;
    use crate::viewer::entities::tests::dag_log;
    use crate::viewer::state::OpenRequest;

    struct S {
        ui: EntitiesUi,
        doc: Document,
    }

    fn state() -> S {
        let mut doc = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            ..Default::default()
        })
        .unwrap();
        doc.set_log(dag_log(), "run.ulog".into());
        let mut ui = EntitiesUi::default();
        ui.update_counts(&doc, crate::time::LogTime(10.0), false);
        S { ui, doc }
    }

    fn harness() -> Harness<'static, S> {
        Harness::builder()
            .with_size([400.0, 600.0])
            .build_ui_state(|ui, s: &mut S| panel(ui, &mut s.ui, &mut s.doc), state())
    }

    fn hidden(h: &Harness<'_, S>) -> BTreeSet<String> {
        h.state().doc.session.filter.hidden.clone()
    }

    #[test]
    fn node_with_two_parents_appears_twice_and_stays_consistent() {
        let mut h = harness();
        // robots/blue/3 sits under robots/blue and under attack.
        assert_eq!(
            h.get_all_by_role_and_label(Role::CheckBox, "3").count(),
            1,
            "path label under robots/blue"
        );
        assert_eq!(
            h.get_all_by_role_and_label(Role::CheckBox, "robots/blue/3")
                .count(),
            1,
            "full name under attack"
        );
        h.get_by_role_and_label(Role::CheckBox, "3").click();
        h.run();
        assert_eq!(hidden(&h), BTreeSet::from(["robots/blue/3".to_owned()]));
        // Both rows now show it unchecked.
        let checked = |h: &Harness<'_, S>, label: &str| {
            h.get_by_role_and_label(Role::CheckBox, label)
                .accesskit_node()
                .toggled()
                .map(|t| t == egui::accesskit::Toggled::True)
        };
        assert_eq!(checked(&h, "robots/blue/3"), Some(false));
        assert_eq!(checked(&h, "3"), Some(false));
        // Clicking the other place shows it again.
        h.get_by_role_and_label(Role::CheckBox, "robots/blue/3").click();
        h.run();
        assert!(hidden(&h).is_empty());
    }

    #[test]
    fn a_node_toggles_its_subtree_and_solo_isolates_it() {
        let mut h = harness();
        h.get_by_role_and_label(Role::CheckBox, "robots").click();
        h.run();
        assert_eq!(
            hidden(&h),
            BTreeSet::from([
                "robots".to_owned(),
                "robots/blue".to_owned(),
                "robots/blue/3".to_owned()
            ])
        );
        h.get_by_role_and_label(Role::CheckBox, "robots").click();
        h.run();
        assert!(hidden(&h).is_empty());
        h.get_by_label("solo ball").click();
        h.run();
        assert_eq!(h.state().doc.session.filter.hidden.len(), 4);
        assert!(!hidden(&h).contains("ball"));
        h.get_by_label("solo ball").click();
        h.run();
        assert!(hidden(&h).is_empty());
    }

    #[test]
    fn search_lists_matches_with_full_names() {
        let mut h = harness();
        h.get_by_role(Role::TextInput).click();
        h.run();
        h.get_by_role(Role::TextInput).type_text("blue");
        h.run();
        assert_eq!(h.state().ui.search, "blue");
        assert!(h.query_by_label("robots/blue").is_some());
        assert!(h.query_by_label("ball").is_none());
        h.get_by_role_and_label(Role::CheckBox, "robots/blue").click();
        h.run();
        assert_eq!(
            hidden(&h),
            BTreeSet::from(["robots/blue".to_owned(), "robots/blue/3".to_owned()])
        );
    }

    #[test]
    fn level_limit_is_stored_in_the_filter() {
        let mut h = harness();
        assert_eq!(h.state().doc.session.filter.max_level, None);
        h.get_by_label("Limit level").click();
        h.run();
        assert_eq!(h.state().doc.session.filter.max_level, Some(3));
        h.get_by_role_and_label(Role::Slider, "max level")
            .set_value_accesskit(1.0);
        h.run();
        assert_eq!(h.state().doc.session.filter.max_level, Some(1));
        h.get_by_label("Limit level").click();
        h.run();
        assert_eq!(h.state().doc.session.filter.max_level, None);
    }

    #[test]
    fn per_entity_level_from_the_context_menu() {
        let mut h = harness();
        h.get_by_role_and_label(Role::CheckBox, "ball").click_secondary();
        h.run();
        h.get_by_label("Own level limit").click();
        h.run();
        assert_eq!(h.state().doc.session.filter.levels.get("ball"), Some(&3));
    }

    #[test]
    fn counts_show_primitives_at_the_current_time() {
        let h = harness();
        assert!(
            h.query_by_label("4 primitives at this time (before filtering)")
                .is_some()
        );
        // robots/blue/3 has two primitives now, shown beside both rows.
        assert_eq!(
            h.get_all_by_label("2").count(),
            4,
            "robots, robots/blue and both places of 3"
        );
    }
}
