//! The entity tree and the edits the entities panel makes to a
//! [`FilterSpec`]: checking a node shows or hides its whole subtree, solo
//! shows one subtree only, levels limit detail globally or per entity.
//!
//! The tree comes from the log's entity DAG: a node with two parents is a
//! child of both, so it appears twice on screen, but every edit is stored
//! by entity name in the spec's `hidden` set, so both places always agree.
//! Logs without declared edges get a hierarchy from `/` in names
//! (`robots/blue/3` sits under `robots/blue`, which is added as a group
//! when no entity has that name).

use std::collections::BTreeSet;

use crate::log::names::PathNames;
use crate::log::{EntityId, Log};
use crate::select::FilterSpec;

/// One node of the tree: an entity, or a group named by a path prefix
/// (its name is [`EntityTree::name`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TreeNode {
    /// The entity, `None` for a group that only exists as a prefix.
    pub entity: Option<EntityId>,
    /// Child nodes, sorted by name.
    pub children: Vec<usize>,
}

/// The entity hierarchy of one log, ready to show.
///
/// Names are kept once ([`PathNames`]: a group's name is a prefix of an
/// entity's) and subtrees are walked when asked for, so the tree takes
/// memory linear in the log's entities, edges and names (a chain of 80,000
/// entities, or one name of 30,000 parts, no longer lists every node's
/// descendants or copies every prefix).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntityTree {
    pub nodes: Vec<TreeNode>,
    /// Top-level nodes, sorted by name.
    pub roots: Vec<usize>,
    /// Smallest and largest level used by any primitive.
    pub level_range: Option<(i32, i32)>,
    /// Why the log's declared graph could not be used (a cycle), if so.
    pub problem: Option<String>,
    names: PathNames,
}

/// Whether a node's subtree is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    All,
    Some,
    None,
}

impl EntityTree {
    /// Builds the tree of `log`'s entities from the selection engine's
    /// entity graph (so the tree is the one filters are compiled against).
    /// A declared graph with a cycle is refused there; the tree then
    /// follows the declared edges anyway, without looping, and says why.
    pub fn build(log: &Log) -> Self {
        match crate::select::EntityTree::from_log(log) {
            Ok(g) => Self::from_graph(&g, log),
            Err(e) => {
                let mut t = Self::build_own(log);
                t.problem = Some(e.to_string());
                t
            }
        }
    }

    fn from_graph(g: &crate::select::EntityTree, log: &Log) -> Self {
        let nodes: Vec<TreeNode> = (0..g.len())
            .map(|n| {
                let mut children = g.children(n).to_vec();
                children.sort_by(|&a, &b| natural_cmp(g.name(a), g.name(b)));
                TreeNode {
                    entity: g.entity(n),
                    children,
                }
            })
            .collect();
        let mut roots = g.roots().to_vec();
        roots.sort_by(|&a, &b| natural_cmp(g.name(a), g.name(b)));
        EntityTree {
            nodes,
            roots,
            level_range: level_range(log),
            problem: None,
            names: g.names().clone(),
        }
    }

    /// The tree without the selection engine, for a declared graph it
    /// refused (a cycle): the declared edges, cycles allowed.
    fn build_own(log: &Log) -> Self {
        let ents = &log.entities;
        let names = PathNames::new(ents.ids().map(|id| ents.name(id)), false);
        let mut nodes: Vec<TreeNode> = ents
            .ids()
            .map(|id| TreeNode {
                entity: Some(id),
                children: Vec::new(),
            })
            .collect();
        let mut has_parent = vec![false; nodes.len()];
        for id in ents.ids() {
            for &p in ents.parents(id) {
                if p.index() < nodes.len() && p != id {
                    nodes[p.index()].children.push(id.index());
                    has_parent[id.index()] = true;
                }
            }
        }
        for node in &mut nodes {
            node.children
                .sort_by(|&a, &b| natural_cmp(names.name(a), names.name(b)));
            node.children.dedup();
        }
        let mut roots: Vec<usize> = (0..nodes.len()).filter(|&i| !has_parent[i]).collect();
        // Entities reachable from no root (a cycle) become roots too.
        let mut reached = vec![false; nodes.len()];
        for &r in &roots {
            mark(&nodes, r, &mut reached);
        }
        for i in 0..nodes.len() {
            if !reached[i] {
                roots.push(i);
                mark(&nodes, i, &mut reached);
            }
        }
        roots.sort_by(|&a, &b| natural_cmp(names.name(a), names.name(b)));
        EntityTree {
            nodes,
            roots,
            level_range: level_range(log),
            problem: None,
            names,
        }
    }

    /// The full name of `node` (the entity's, or the group's path prefix).
    pub fn name(&self, node: usize) -> &str {
        self.names.name(node)
    }

    /// Every entity in `node`'s subtree (itself included), sorted, each
    /// once; walked when asked for (safe against cycles).
    pub fn members(&self, node: usize) -> Vec<EntityId> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![node];
        let mut members = Vec::new();
        while let Some(k) = stack.pop() {
            if k >= seen.len() || std::mem::replace(&mut seen[k], true) {
                continue;
            }
            if let Some(e) = self.nodes[k].entity {
                members.push(e);
            }
            stack.extend(self.nodes[k].children.iter().copied());
        }
        members.sort();
        members
    }

    /// Names of every entity in `node`'s subtree.
    fn member_names<'a>(&self, log: &'a Log, node: usize) -> impl Iterator<Item = &'a str> + 'a {
        self.members(node).into_iter().map(|e| log.entities.name(e))
    }

    /// How much of `node`'s subtree the spec's checkboxes show.
    pub fn check(&self, log: &Log, spec: &FilterSpec, node: usize) -> Check {
        let mut shown = 0;
        let mut total = 0;
        for name in self.member_names(log, node) {
            total += 1;
            if !spec.hidden.contains(name) {
                shown += 1;
            }
        }
        match (shown, total) {
            (0, _) => Check::None,
            (s, t) if s == t => Check::All,
            _ => Check::Some,
        }
    }

    /// Shows (`visible`) or hides `node`'s whole subtree.
    pub fn set_subtree(&self, log: &Log, spec: &mut FilterSpec, node: usize, visible: bool) {
        for name in self.member_names(log, node) {
            if visible {
                spec.hidden.remove(name);
            } else {
                spec.hidden.insert(name.to_owned());
            }
        }
    }

    /// What clicking `node`'s checkbox does: a fully shown subtree is
    /// hidden, anything else is shown entirely.
    pub fn toggle(&self, log: &Log, spec: &mut FilterSpec, node: usize) {
        let visible = self.check(log, spec, node) != Check::All;
        self.set_subtree(log, spec, node, visible);
    }

    /// Shows only `node`'s subtree (every other entity is unchecked).
    pub fn solo(&self, log: &Log, spec: &mut FilterSpec, node: usize) {
        let keep: BTreeSet<&str> = self.member_names(log, node).collect();
        spec.hidden = log
            .entities
            .ids()
            .map(|e| log.entities.name(e))
            .filter(|n| !keep.contains(n))
            .map(str::to_owned)
            .collect();
    }

    /// Whether the checkboxes show exactly `node`'s subtree.
    pub fn is_solo(&self, log: &Log, spec: &FilterSpec, node: usize) -> bool {
        let keep: BTreeSet<&str> = self.member_names(log, node).collect();
        !keep.is_empty()
            && spec.hidden.len() + keep.len() == log.entities.len()
            && log
                .entities
                .ids()
                .all(|e| keep.contains(log.entities.name(e)) != spec.hidden.contains(log.entities.name(e)))
    }

    /// Nodes whose full name contains `query` (case-insensitive), by name.
    pub fn search(&self, query: &str) -> Vec<usize> {
        let q = query.trim().to_lowercase();
        let mut hits: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.name(i).to_lowercase().contains(&q))
            .collect();
        hits.sort_by(|&a, &b| natural_cmp(self.name(a), self.name(b)));
        hits
    }

    /// The node of an entity.
    pub fn node_of(&self, id: EntityId) -> Option<usize> {
        (id.index() < self.nodes.len() && self.nodes[id.index()].entity == Some(id)).then_some(id.index())
    }

    /// Sum of `per_entity[e]` over `node`'s subtree.
    pub fn subtree_count(&self, node: usize, per_entity: &[usize]) -> usize {
        self.members(node)
            .iter()
            .map(|e| per_entity.get(e.index()).copied().unwrap_or(0))
            .sum()
    }
}

/// Orders names as people do: runs of digits by their value, so `r2`
/// comes before `r10`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let dx = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let dy = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (nx, ny) = (&x[..dx], &y[..dy]);
                // Compare values without parsing: strip leading zeros, then
                // a longer number is larger, equal lengths compare bytewise.
                let tx = &nx[nx.iter().take_while(|&&c| c == b'0').count()..];
                let ty = &ny[ny.iter().take_while(|&&c| c == b'0').count()..];
                let o = tx.len().cmp(&ty.len()).then(tx.cmp(ty));
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
                x = &x[dx..];
                y = &y[dy..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

/// Smallest and largest level used by any primitive.
fn level_range(log: &Log) -> Option<(i32, i32)> {
    log.primitives.iter().map(|p| p.level).fold(None, |acc, l| {
        Some(acc.map_or((l, l), |(a, b): (i32, i32)| (a.min(l), b.max(l))))
    })
}

fn mark(nodes: &[TreeNode], from: usize, reached: &mut [bool]) {
    let mut stack = vec![from];
    while let Some(k) = stack.pop() {
        if !std::mem::replace(&mut reached[k], true) {
            stack.extend(nodes[k].children.iter().copied());
        }
    }
}

/// Sets (or with `None` removes) the level limit of entity `name` (and,
/// by the spec's rules, of its descendants).
pub fn set_entity_level(spec: &mut FilterSpec, name: &str, level: Option<i32>) {
    match level {
        Some(l) => {
            spec.levels.insert(name.to_owned(), l);
        }
        None => {
            spec.levels.remove(name);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::geom::Vec2;
    use crate::log::{FrameTime, Primitive, Shape, Style};

    /// A small DAG: robots → robots/blue → robots/blue/3 ← attack; plus ball.
    pub(crate) fn dag_log() -> Log {
        let mut log = Log::new();
        let robots = log.entities.intern("robots");
        let blue = log.entities.intern("robots/blue");
        let b3 = log.entities.intern("robots/blue/3");
        let attack = log.entities.intern("attack");
        let ball = log.entities.intern("ball");
        log.entities.add_parent(blue, robots);
        log.entities.add_parent(b3, blue);
        log.entities.add_parent(b3, attack);
        let p = |e, level| Primitive {
            shape: Shape::Circle {
                center: Vec2::new(0.0, 0.0),
                radius: 90.0,
            },
            style: Style::default(),
            entity: e,
            level,
        };
        log.push_frame(
            FrameTime::Instant(10.0),
            [p(b3, 0), p(b3, 2), p(ball, 1), p(attack, 3)],
        );
        log
    }

    fn node(t: &EntityTree, name: &str) -> usize {
        (0..t.nodes.len()).position(|n| t.name(n) == name).unwrap()
    }

    #[test]
    fn dag_node_with_two_parents_is_under_both() {
        let log = dag_log();
        let t = EntityTree::build(&log);
        let b3 = node(&t, "robots/blue/3");
        assert!(t.nodes[node(&t, "robots/blue")].children.contains(&b3));
        assert!(t.nodes[node(&t, "attack")].children.contains(&b3));
        let roots: Vec<&str> = t.roots.iter().map(|&r| t.name(r)).collect();
        assert_eq!(roots, ["attack", "ball", "robots"]);
        assert_eq!(t.members(node(&t, "robots")).len(), 3);
        assert_eq!(t.level_range, Some((0, 3)));
    }

    #[test]
    fn toggling_a_subtree_is_seen_from_both_parents() {
        let log = dag_log();
        let t = EntityTree::build(&log);
        let mut spec = FilterSpec::default();
        let attack = node(&t, "attack");
        t.toggle(&log, &mut spec, attack);
        assert_eq!(
            spec.hidden,
            BTreeSet::from(["attack".to_owned(), "robots/blue/3".to_owned()])
        );
        assert_eq!(t.check(&log, &spec, node(&t, "robots")), Check::Some);
        assert_eq!(t.check(&log, &spec, node(&t, "robots/blue/3")), Check::None);
        // Checking robots shows robots/blue/3 again, so attack becomes partial.
        t.toggle(&log, &mut spec, node(&t, "robots"));
        assert_eq!(t.check(&log, &spec, attack), Check::Some);
        assert_eq!(spec.hidden, BTreeSet::from(["attack".to_owned()]));
    }

    #[test]
    fn solo_shows_one_subtree() {
        let log = dag_log();
        let t = EntityTree::build(&log);
        let mut spec = FilterSpec::default();
        let blue = node(&t, "robots/blue");
        t.solo(&log, &mut spec, blue);
        assert!(t.is_solo(&log, &spec, blue));
        assert_eq!(
            spec.hidden,
            BTreeSet::from(["attack".to_owned(), "ball".to_owned(), "robots".to_owned()])
        );
    }

    #[test]
    fn path_names_imply_groups_without_edges() {
        let mut log = Log::new();
        for n in ["robots/blue/3", "robots/blue/4", "robots/yellow/1", "ball"] {
            log.entities.intern(n);
        }
        let t = EntityTree::build(&log);
        let roots: Vec<&str> = t.roots.iter().map(|&r| t.name(r)).collect();
        assert_eq!(roots, ["ball", "robots"]);
        let robots = node(&t, "robots");
        assert_eq!(t.nodes[robots].entity, None);
        assert_eq!(t.members(robots).len(), 3);
        let blue = node(&t, "robots/blue");
        let names: Vec<&str> = t.nodes[blue].children.iter().map(|&c| t.name(c)).collect();
        assert_eq!(names, ["robots/blue/3", "robots/blue/4"]);
        assert_eq!(t.search("BLUE").len(), 3);
    }

    #[test]
    fn cycles_do_not_hang_and_stay_reachable() {
        let mut log = Log::new();
        let a = log.entities.intern("a");
        let b = log.entities.intern("b");
        log.entities.add_parent(a, b);
        log.entities.add_parent(b, a);
        let t = EntityTree::build(&log);
        assert_eq!(t.roots.len(), 1);
        assert_eq!(t.members(0), vec![a, b]);
        assert!(
            t.problem.as_deref().is_some_and(|p| p.contains('a')),
            "{:?}",
            t.problem
        );
    }

    /// Issue 15, finding 1: one name of 30,000 parts makes 30,000 nodes
    /// without a copy of each prefix or a member list per node.
    #[test]
    fn one_long_name_builds_a_tree_in_linear_memory() {
        let mut log = Log::new();
        let name = vec!["a"; 30_000].join("/");
        let e = log.entities.intern(&name);
        let t = EntityTree::build(&log);
        assert_eq!(t.nodes.len(), 30_000);
        assert_eq!(t.roots.len(), 1);
        assert_eq!(t.name(t.roots[0]), "a");
        assert_eq!(t.members(t.roots[0]), vec![e]);
        assert_eq!(t.name(0), name);
    }

    #[test]
    fn names_sort_naturally() {
        let mut v = vec!["r10", "r2", "r1", "a", "r02", "r", "b1x", "b1"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["a", "b1", "b1x", "r", "r1", "r02", "r2", "r10"]);
    }

    #[test]
    fn entity_levels_are_set_and_cleared() {
        let mut spec = FilterSpec::default();
        set_entity_level(&mut spec, "robots", Some(2));
        assert_eq!(spec.levels.get("robots"), Some(&2));
        set_entity_level(&mut spec, "robots", None);
        assert!(spec.levels.is_empty());
    }
}
