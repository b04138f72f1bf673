//! What `underlay log info` reports about a log: counts of frames and
//! primitives (per shape, level and entity), the time range, and the
//! entity tree.
//!
//! The tree follows declared parent edges. A log without any edges gets a
//! tree from its names instead (`a/b/c` under `a/b` under `a`, adding the
//! missing intermediate names), for display only: filtering semantics
//! belong to the application's selection (`underlay::select`).

use std::collections::{BTreeMap, HashMap};

use super::names::PathNames;
use super::{EntityId, FrameTime, Log, Shape};

const KINDS: [&str; 25] = [
    "circle",
    "line",
    "rectangle",
    "polygon",
    "text",
    "point",
    "arc",
    "sector",
    // Shapes with heights.
    "raised line",
    "raised polyline",
    "raised polygon",
    "raised circle",
    "raised text",
    "raised point",
    "sphere",
    "cylinder",
    "box",
    // Shapes in the picture's pixels.
    "picture circle",
    "picture line",
    "picture rectangle",
    "picture polygon",
    "picture text",
    "picture point",
    "picture arc",
    "picture sector",
];

/// The index in [`KINDS`] of a floor shape (and of a picture shape's
/// inside).
fn floor_kind(shape: &Shape) -> usize {
    match *shape {
        Shape::Circle { .. } => 0,
        Shape::Line { .. } => 1,
        Shape::Rectangle { .. } => 2,
        Shape::Polygon { .. } => 3,
        Shape::Text { .. } => 4,
        Shape::Point { .. } => 5,
        Shape::Sector { inner, outer, .. } if inner == outer => 6,
        Shape::Sector { .. } => 7,
        Shape::Raised(ref r) => raised_kind(r),
        // Readers refuse a picture shape inside another.
        Shape::Picture(_) => 0,
    }
}

/// The index in [`KINDS`] of a raised shape.
fn raised_kind(r: &super::Raised) -> usize {
    match r.kind_name() {
        "line" => 8,
        "polyline" => 9,
        "polygon" => 10,
        "circle" => 11,
        "text" => 12,
        "point" => 13,
        "sphere" => 14,
        "cylinder" => 15,
        _ => 16,
    }
}

/// Counts and ranges of a log.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Number of instantaneous frames.
    pub instant_frames: usize,
    /// Number of persistent frames.
    pub persistent_frames: usize,
    /// Number of primitives in all frames.
    pub primitives: usize,
    /// Primitives per shape kind name.
    pub by_kind: BTreeMap<&'static str, usize>,
    /// Primitives per level.
    pub by_level: BTreeMap<i32, usize>,
    /// Primitives per entity id (index = id).
    pub by_entity: Vec<usize>,
    /// Smallest and largest finite frame time.
    pub time_range: Option<(f64, f64)>,
    /// Whether some persistent frame starts at -inf or ends at +inf.
    pub unbounded: bool,
}

impl Summary {
    /// Counts everything in one pass over the log.
    pub fn of(log: &Log) -> Self {
        let mut s = Summary {
            instant_frames: 0,
            persistent_frames: 0,
            primitives: 0,
            by_kind: BTreeMap::new(),
            by_level: BTreeMap::new(),
            by_entity: vec![0; log.entities.len()],
            time_range: log.time_range(),
            unbounded: false,
        };
        let mut kinds = [0usize; KINDS.len()];
        let mut levels: HashMap<i32, usize> = HashMap::new();
        let mut counts: Vec<usize> = vec![0];
        levels.insert(0, 0);
        let mut last_level = (0, 0);
        for f in &log.frames {
            match f.time {
                FrameTime::Instant(_) => s.instant_frames += 1,
                FrameTime::Persistent { start, end } => {
                    s.persistent_frames += 1;
                    s.unbounded |= start.is_infinite() || end.is_infinite();
                }
            }
            let prims = log.frame_primitives(f);
            s.primitives += prims.len();
            for p in prims {
                let kind = match p.shape {
                    Shape::Picture(ref inner) => 17 + floor_kind(inner).min(7),
                    ref shape => floor_kind(shape),
                };
                kinds[kind] += 1;
                // Levels are few and repeat: remember the last one's slot.
                if p.level != last_level.0 {
                    last_level = (
                        p.level,
                        *levels.entry(p.level).or_insert_with(|| {
                            counts.push(0);
                            counts.len() - 1
                        }),
                    );
                }
                counts[last_level.1] += 1;
                if let Some(c) = s.by_entity.get_mut(p.entity.index()) {
                    *c += 1;
                }
            }
        }
        for (name, n) in KINDS.iter().zip(kinds) {
            if n > 0 {
                s.by_kind.insert(name, n);
            }
        }
        s.by_level = levels
            .into_iter()
            .map(|(l, i)| (l, counts[i]))
            .filter(|&(_, n)| n > 0)
            .collect();
        s
    }

    /// Number of frames of both kinds.
    pub fn frames(&self) -> usize {
        self.instant_frames + self.persistent_frames
    }
}

/// One line of the entity tree, in display order.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeLine {
    /// Nesting depth (0 = root).
    pub depth: usize,
    /// Entity name (or path prefix), its middle left out when it is very
    /// long (see [`shorten`]).
    pub name: String,
    /// The entity, or `None` for a path prefix that is not an entity itself.
    pub entity: Option<EntityId>,
    /// Primitives of this entity itself.
    pub own: usize,
    /// Primitives of this entity and all its descendants (each counted
    /// once); 0 on a `repeated` line, whose total was shown above.
    pub total: usize,
    /// Whether the node has children (in the DAG or the name hierarchy).
    pub has_children: bool,
    /// This node was already shown (under another parent); its subtree is not repeated.
    pub repeated: bool,
}

/// A graph of display nodes: entities, plus path prefixes in name mode.
struct Graph {
    names: PathNames,
    entity: Vec<Option<EntityId>>,
    own: Vec<usize>,
    children: Vec<Vec<usize>>,
    has_parent: Vec<bool>,
}

impl Graph {
    fn new(log: &Log, by_entity: &[usize]) -> Self {
        let n = log.entities.len();
        let implied = !log.entities.has_edges();
        let names = PathNames::new(log.entities.ids().map(|e| log.entities.name(e)), implied);
        let total = names.len();
        let mut g = Graph {
            entity: (0..total)
                .map(|i| (i < n).then_some(EntityId(i as u32)))
                .collect(),
            own: (0..total)
                .map(|i| by_entity.get(i).copied().unwrap_or(0))
                .collect(),
            children: vec![Vec::new(); total],
            has_parent: vec![false; total],
            names,
        };
        if implied {
            for child in 0..total {
                if let Some(p) = g.names.implied_parent(child) {
                    g.children[p].push(child);
                    g.has_parent[child] = true;
                }
            }
            let names = &g.names;
            for c in &mut g.children {
                c.sort_by(|&a, &b| names.name(a).cmp(names.name(b)));
            }
        } else {
            for child in log.entities.ids() {
                for &p in log.entities.parents(child) {
                    if let Some(list) = g.children.get_mut(p.index()) {
                        list.push(child.index());
                        g.has_parent[child.index()] = true;
                    }
                }
            }
        }
        g
    }

    /// The subtree totals of every node at once when the graph is a
    /// forest (no node with two parents, no cycle: every implied
    /// hierarchy), in O(nodes); `None` otherwise.
    fn forest_totals(&self) -> Option<Vec<usize>> {
        let mut indegree = vec![0u8; self.names.len()];
        for list in &self.children {
            for &c in list {
                indegree[c] = indegree[c].saturating_add(1);
                if indegree[c] > 1 {
                    return None;
                }
            }
        }
        // Parents before children, from the roots.
        let mut order: Vec<usize> = (0..self.names.len()).filter(|&i| indegree[i] == 0).collect();
        let mut next = 0;
        while let Some(&v) = order.get(next) {
            next += 1;
            order.extend_from_slice(&self.children[v]);
        }
        if order.len() != self.names.len() {
            return None;
        }
        let mut totals = self.own.clone();
        for &v in order.iter().rev() {
            let sum: usize = self.children[v].iter().map(|&c| totals[c]).sum();
            totals[v] += sum;
        }
        Some(totals)
    }

    /// The total of `node`'s subtree, each node counted once; `seen` is
    /// scratch space of the graph's size, left all false.
    fn total(&self, node: usize, seen: &mut [bool]) -> usize {
        let mut stack = vec![node];
        let mut visited = Vec::new();
        let mut sum = 0;
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            visited.push(n);
            sum += self.own[n];
            stack.extend_from_slice(&self.children[n]);
        }
        for n in visited {
            seen[n] = false;
        }
        sum
    }
}

/// The longest name [`entity_tree`] shows whole, in bytes.
pub const MAX_SHOWN_NAME: usize = 200;

/// `s` itself when at most `max` bytes long, else its start and end with
/// `…` and the length between (so a 60 KB name prints as a line, not as
/// 60 KB on each of its 30,000 group lines).
pub fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let keep = max / 2 - 20;
    let head = s.floor_char_boundary(keep);
    let tail = s.ceil_char_boundary(s.len() - keep);
    format!("{}…({} bytes)…{}", &s[..head], s.len(), &s[tail..])
}

/// The entity tree in display order, at most `max_lines` lines (the
/// second value counts the nodes left out).
pub fn entity_tree(log: &Log, max_lines: usize) -> (Vec<TreeLine>, usize) {
    let mut by_entity = vec![0; log.entities.len()];
    for p in &log.primitives {
        if let Some(c) = by_entity.get_mut(p.entity.index()) {
            *c += 1;
        }
    }
    let g = Graph::new(log, &by_entity);
    let mut roots: Vec<usize> = (0..g.names.len()).filter(|&i| !g.has_parent[i]).collect();
    if !log.entities.has_edges() {
        roots.sort_by(|&a, &b| g.names.name(a).cmp(g.names.name(b)));
    }
    let mut shown = vec![false; g.names.len()];
    let totals = g.forest_totals();
    let mut scratch = vec![false; g.names.len()];
    let mut lines = Vec::new();
    let mut left_out = 0;
    // Iterative depth-first walk; nodes on a cycle are reached as roots below.
    let mut pending: Vec<usize> = roots;
    let mut all = (0..g.names.len()).rev().collect::<Vec<_>>();
    loop {
        let mut stack: Vec<(usize, usize)> = pending.drain(..).rev().map(|n| (n, 0)).collect();
        while let Some((n, depth)) = stack.pop() {
            let repeated = shown[n];
            shown[n] = true;
            if lines.len() >= max_lines {
                left_out += 1;
                continue;
            }
            lines.push(TreeLine {
                depth,
                name: shorten(g.names.name(n), MAX_SHOWN_NAME),
                entity: g.entity[n],
                own: g.own[n],
                total: match &totals {
                    Some(t) => t[n],
                    // (Shown above with its total: not counted again.)
                    None if repeated => 0,
                    None => g.total(n, &mut scratch),
                },
                has_children: !g.children[n].is_empty(),
                repeated,
            });
            if !repeated {
                stack.extend(g.children[n].iter().rev().map(|&c| (c, depth + 1)));
            }
        }
        // Anything not reached (only possible on a cycle) becomes a root.
        while let Some(n) = all.pop() {
            if !shown[n] {
                pending.push(n);
                break;
            }
        }
        if pending.is_empty() {
            break;
        }
    }
    (lines, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Primitive, Shape, Style, Vec2};

    fn add(log: &mut Log, entity: &str, n: usize) {
        let e = log.entities.intern(entity);
        let prims: Vec<Primitive> = (0..n)
            .map(|_| Primitive {
                shape: Shape::Circle {
                    center: Vec2::ZERO,
                    radius: 1.0,
                },
                style: Style::default(),
                entity: e,
                level: 1,
            })
            .collect();
        log.push_frame(FrameTime::Instant(1.0), prims);
    }

    #[test]
    fn names_imply_a_tree_without_edges() {
        let mut log = Log::new();
        add(&mut log, "robots/blue/3", 2);
        add(&mut log, "robots/yellow/1", 1);
        add(&mut log, "ball", 1);
        let (lines, left) = entity_tree(&log, 100);
        assert_eq!(left, 0);
        let shown: Vec<(usize, &str, usize)> = lines
            .iter()
            .map(|l| (l.depth, l.name.as_str(), l.total))
            .collect();
        assert_eq!(
            shown,
            [
                (0, "ball", 1),
                (0, "robots", 3),
                (1, "robots/blue", 2),
                (2, "robots/blue/3", 2),
                (1, "robots/yellow", 1),
                (2, "robots/yellow/1", 1),
            ]
        );
        assert_eq!(lines[1].entity, None);
    }

    #[test]
    fn declared_dag_shows_shared_children_once() {
        let mut log = Log::new();
        add(&mut log, "x", 5);
        let x = log.entities.get("x").unwrap();
        let a = log.entities.intern("a");
        let b = log.entities.intern("b");
        log.entities.add_parent(x, a);
        log.entities.add_parent(x, b);
        let (lines, _) = entity_tree(&log, 100);
        let shown: Vec<(usize, &str, bool)> = lines
            .iter()
            .map(|l| (l.depth, l.name.as_str(), l.repeated))
            .collect();
        assert_eq!(
            shown,
            [(0, "a", false), (1, "x", false), (0, "b", false), (1, "x", true)]
        );
        assert_eq!(lines[0].total, 5);
        let s = Summary::of(&log);
        assert_eq!((s.instant_frames, s.primitives, s.by_level[&1]), (1, 5, 5));
    }

    #[test]
    fn tree_is_capped() {
        let mut log = Log::new();
        for i in 0..10 {
            add(&mut log, &format!("e{i}"), 1);
        }
        let (lines, left) = entity_tree(&log, 4);
        assert_eq!((lines.len(), left), (4, 6));
    }
}
