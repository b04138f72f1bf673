//! Which entities and levels are shown: the [`FilterSpec`] a session and
//! the command line hold (by entity name) and the [`Filter`] it compiles
//! to against one log (a maximum level per entity id).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::log::{EntityId, Log, Primitive};

/// Errors compiling a filter against a log's entities.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// Names in a filter that are neither an entity of the log nor (for logs
    /// without declared edges) a `/`-separated group of entities.
    #[error(
        "the log has no entit{} named {} (its entities: {})",
        if names.len() == 1 { "y" } else { "ies" },
        quoted(names),
        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
    )]
    UnknownEntities {
        names: Vec<String>,
        /// Some of the names the log does have, to help the user.
        known: Vec<String>,
    },
    /// The declared parent edges form a cycle; `names` lists the entities on
    /// it from parent to child, starting and ending with the same one.
    #[error("the entity graph has a cycle: {}", names.join(" → "))]
    Cycle { names: Vec<String> },
    /// A parent edge points at an entity id the log does not have.
    #[error("entity \"{child}\" has parent id {parent}, but the log has only {count} entities")]
    BadParent {
        child: String,
        parent: u32,
        count: usize,
    },
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{}\"", n.escape_debug()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which entities and levels to show, by name, as saved in a session.
///
/// Compiled by [`FilterSpec::compile`]; the meaning of each field, with
/// "descendants" always including the entity itself:
/// an entity is shown when (`only` is empty or it descends from a name in
/// `only`) and it does not descend from a name in `exclude` and it is not
/// in `hidden`. Its maximum level is the nearest entry of `levels` on its
/// ancestry (its own entry first, then its parents', and so on); when it
/// inherits entries through several parents the *largest* (most detailed)
/// one wins; with no entry it is `max_level`. `exclude` wins over `only`.
/// Names may also be group nodes of an implied hierarchy (see
/// [`super::EntityTree`]); `hidden` on a group hides nothing, as a group has no
/// primitives of its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilterSpec {
    /// Show only primitives with level ≤ this; `None` shows every level.
    pub max_level: Option<i32>,
    /// When non-empty, show only these entities and their descendants.
    pub only: Vec<String>,
    /// Hide these entities and their descendants.
    pub exclude: Vec<String>,
    /// Hide exactly these entities (not their descendants): the viewer's
    /// unchecked boxes.
    pub hidden: BTreeSet<String>,
    /// Per-entity maximum levels, overriding `max_level` for the entity and
    /// its descendants.
    pub levels: BTreeMap<String, i32>,
    /// These entities and their descendants are drawn above the floor
    /// mask, over whatever stands on the floor (labels that must stay
    /// readable over the robots they belong to).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub above_mask: BTreeSet<String>,
}

/// Which entities of `log` are drawn above the mask (see
/// [`FilterSpec::above_mask`]), by entity id: those named, their declared
/// descendants and those below them in the `/` hierarchy.
pub fn above_mask(log: &crate::log::Log, names: &BTreeSet<String>) -> Vec<bool> {
    let listed: Vec<_> = names.iter().filter_map(|n| log.entities.get(n)).collect();
    log.entities
        .ids()
        .map(|id| {
            let name = log.entities.name(id);
            names
                .iter()
                .any(|n| name == n || name.strip_prefix(n.as_str()).is_some_and(|r| r.starts_with('/')))
                || listed.iter().any(|&l| log.entities.is_ancestor_or_self(l, id))
        })
        .collect()
}

/// A [`FilterSpec`] compiled for one log: the maximum level shown for each
/// entity id. [`Filter::HIDDEN`] (`i32::MIN`) hides the entity entirely,
/// whatever the level of its primitives.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    max_level: Vec<i32>,
}

// Export workers share one compiled filter.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Filter>();
};

impl Filter {
    /// The maximum level that marks an entity as hidden.
    pub const HIDDEN: i32 = i32::MIN;

    /// Shows every entity up to `max_level`.
    pub fn all(log: &Log, max_level: i32) -> Self {
        Filter {
            max_level: vec![max_level; log.entities.len()],
        }
    }

    /// Builds a filter from per-entity maximum levels, indexed by entity id.
    /// Entities past the end of the vector are hidden.
    pub fn from_levels(max_level: Vec<i32>) -> Self {
        Filter { max_level }
    }

    /// The maximum level shown for each entity id.
    pub fn levels(&self) -> &[i32] {
        &self.max_level
    }

    /// Whether `p` passes the entity and level filter.
    #[inline]
    pub fn allows(&self, p: &Primitive) -> bool {
        self.allows_entity_level(p.entity, p.level)
    }

    /// Whether a primitive of `entity` at `level` passes the filter.
    #[inline]
    pub fn allows_entity_level(&self, entity: EntityId, level: i32) -> bool {
        // Non-short-circuit `&`: no branch on the outcome, which is random
        // across a frame's primitives.
        match self.max_level.get(entity.index()) {
            Some(&m) => (m != Self::HIDDEN) & (level <= m),
            None => false,
        }
    }
}
