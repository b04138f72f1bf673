//! Choosing what to draw at a time: thesis Algorithm 3, entity filters and
//! levels of detail.
//!
//! A user-facing [`FilterSpec`] (what the session file and command line
//! hold, by entity *name*) is compiled against a log into a [`Filter`]: one
//! maximum level per entity id, so testing a primitive is one lookup.
//! [`brute_force`] is the literal Algorithm 3 and the reference the fast
//! index is checked against.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::log::{Log, Primitive};

/// Which entities and levels to show, by name, as saved in a session.
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
}

/// A [`FilterSpec`] compiled for one log: the maximum level shown for each
/// entity id (`i32::MIN` hides the entity).
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    max_level: Vec<i32>,
}

impl Filter {
    /// Shows every entity up to `max_level`.
    pub fn all(log: &Log, max_level: i32) -> Self {
        Filter {
            max_level: vec![max_level; log.entities.len()],
        }
    }

    /// Builds a filter from per-entity maximum levels, indexed by entity id.
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
        self.max_level
            .get(p.entity.index())
            .is_some_and(|&m| p.level <= m)
    }
}

/// Thesis Algorithm 3, literally: every persistent frame with
/// `start ≤ t ≤ end` (recorded order), then the instantaneous frame nearest
/// to `t` if `|time − t| < threshold` (ties go to the earlier recorded
/// frame); keep the primitives the filter allows, in recorded order.
pub fn brute_force<'a>(log: &'a Log, t: f64, threshold: f64, filter: &Filter) -> Vec<&'a Primitive> {
    let mut out = Vec::new();
    let mut nearest: Option<(f64, usize)> = None;
    for (i, f) in log.frames.iter().enumerate() {
        match f.time {
            crate::log::FrameTime::Persistent { start, end } => {
                if start <= t && t <= end {
                    out.extend(log.frame_primitives(f).iter().filter(|p| filter.allows(p)));
                }
            }
            crate::log::FrameTime::Instant(ft) => {
                let d = (ft - t).abs();
                if d.is_nan() {
                    continue;
                }
                if nearest.is_none_or(|(bd, _)| d < bd) {
                    nearest = Some((d, i));
                }
            }
        }
    }
    if let Some((d, i)) = nearest
        && d < threshold
    {
        out.extend(
            log.frame_primitives(&log.frames[i])
                .iter()
                .filter(|p| filter.allows(p)),
        );
    }
    out
}
