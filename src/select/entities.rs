//! The entity graph of a log and the compilation of a [`FilterSpec`] against
//! it.
//!
//! Entities form a DAG (an entity may have several parents). Where it comes
//! from:
//! - **Declared**: when the log declares any parent edge, exactly the
//!   declared edges are used. A cycle is rejected ([`SelectError::Cycle`]
//!   names the entities on it).
//! - **Implied** (logs without declared edges, e.g. thesis-era logs): names
//!   are paths. The parent of a name is the part before its last `/`, when
//!   that part is not empty: `a/b/c` → `a/b` → `a`. Prefixes that are not
//!   entities themselves (`a/b` when only `a/b/c` draws) become *group*
//!   nodes: they have no primitives but can be named in a filter and show
//!   in the tree.
//!
//! [`EntityTree`] holds that graph for the viewer's tree of checkboxes
//! (children lists, roots, descendants; a node with two parents is listed
//! under both) and for [`FilterSpec::compile_with`].

use std::collections::HashMap;

use crate::log::names::PathNames;
use crate::log::{Entities, EntityId, Log};

use super::{Filter, FilterSpec, SelectError};

/// The entity DAG of a log, with group nodes for implied hierarchies.
///
/// Nodes are numbered `0..len()`; node `i < entity_count()` is the log's
/// entity `EntityId(i)`, later nodes are groups.
#[derive(Clone, Debug, Default)]
pub struct EntityTree {
    /// Node names (groups as prefixes of entity names, in linear memory).
    names: PathNames,
    entity_count: usize,
    parents: Vec<Vec<usize>>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    /// All nodes, every parent before its children.
    topo: Vec<usize>,
    implied: bool,
}

/// One row of the entity tree drawn as an indented list: see [`EntityTree::rows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeRow {
    pub node: usize,
    /// 0 for roots.
    pub depth: usize,
}

impl EntityTree {
    /// The graph of `log`'s entities.
    pub fn from_log(log: &Log) -> Result<Self, SelectError> {
        Self::new(&log.entities)
    }

    /// The graph of `entities`: declared edges if there are any, otherwise
    /// the hierarchy implied by `/` in names (see the module docs).
    pub fn new(entities: &Entities) -> Result<Self, SelectError> {
        let n = entities.len();
        let implied = !entities.has_edges();
        let names = PathNames::new(entities.ids().map(|id| entities.name(id)), implied);
        let mut parents: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
        if implied {
            for (node, ps) in parents.iter_mut().enumerate() {
                ps.extend(names.implied_parent(node));
            }
        } else {
            for id in entities.ids() {
                for &p in entities.parents(id) {
                    if p.index() >= n {
                        return Err(SelectError::BadParent {
                            child: entities.name(id).to_owned(),
                            parent: p.0,
                            count: n,
                        });
                    }
                    // `Entities` keeps no duplicate edge.
                    parents[id.index()].push(p.index());
                }
            }
        }
        let total = names.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); total];
        for (c, ps) in parents.iter().enumerate() {
            for &p in ps {
                children[p].push(c);
            }
        }
        for list in &mut children {
            list.sort_by(|&a, &b| names.name(a).cmp(names.name(b)));
        }
        let mut roots: Vec<usize> = (0..total).filter(|&i| parents[i].is_empty()).collect();
        roots.sort_by(|&a, &b| names.name(a).cmp(names.name(b)));
        let topo = topological_order(&parents, &children).map_err(|cycle| SelectError::Cycle {
            names: cycle.into_iter().map(|i| names.name(i).to_owned()).collect(),
        })?;
        Ok(EntityTree {
            names,
            entity_count: n,
            parents,
            children,
            roots,
            topo,
            implied,
        })
    }

    /// Number of nodes (entities and groups).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Number of nodes that are entities of the log (the first nodes).
    pub fn entity_count(&self) -> usize {
        self.entity_count
    }

    /// Whether the hierarchy was implied by names rather than declared.
    pub fn is_implied(&self) -> bool {
        self.implied
    }

    /// The name of `node` (empty for a node out of range).
    pub fn name(&self, node: usize) -> &str {
        self.names.name(node)
    }

    /// The nodes' names.
    pub fn names(&self) -> &PathNames {
        &self.names
    }

    /// The node named `name`, an entity or a group.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.find(name)
    }

    /// The log entity of `node`; `None` for a group.
    pub fn entity(&self, node: usize) -> Option<EntityId> {
        (node < self.entity_count).then_some(EntityId(node as u32))
    }

    /// The node of a log entity.
    pub fn node(&self, id: EntityId) -> usize {
        id.index()
    }

    /// The parents of `node`, without duplicates.
    pub fn parents(&self, node: usize) -> &[usize] {
        self.parents.get(node).map_or(&[], Vec::as_slice)
    }

    /// The children of `node`, sorted by name; a node with several parents
    /// is a child of each.
    pub fn children(&self, node: usize) -> &[usize] {
        self.children.get(node).map_or(&[], Vec::as_slice)
    }

    /// The nodes without parents, sorted by name.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// `node` and every node below it, each once, in ascending node order.
    pub fn descendants(&self, node: usize) -> Vec<usize> {
        let mut mark = vec![false; self.len()];
        self.mark_descendants(node, &mut mark);
        (0..self.len()).filter(|&i| mark[i]).collect()
    }

    /// Sets `mark[d]` for `node` and its descendants.
    fn mark_descendants(&self, node: usize, mark: &mut [bool]) {
        if node >= mark.len() || mark[node] {
            return;
        }
        let mut stack = vec![node];
        mark[node] = true;
        while let Some(v) = stack.pop() {
            for &c in &self.children[v] {
                if !mark[c] {
                    mark[c] = true;
                    stack.push(c);
                }
            }
        }
    }

    /// The tree drawn as an indented list, depth first from the roots: a
    /// node with several parents appears once under each. Stops after
    /// `max_rows` rows (a DAG can unfold into very many rows).
    pub fn rows(&self, max_rows: usize) -> Vec<TreeRow> {
        let mut out = Vec::new();
        let mut stack: Vec<TreeRow> = self
            .roots
            .iter()
            .rev()
            .map(|&node| TreeRow { node, depth: 0 })
            .collect();
        while let Some(row) = stack.pop() {
            if out.len() >= max_rows {
                break;
            }
            out.push(row);
            stack.extend(self.children[row.node].iter().rev().map(|&node| TreeRow {
                node,
                depth: row.depth + 1,
            }));
        }
        out
    }

    /// The names of a spec that match no node, sorted, each once.
    pub fn unknown_names(&self, spec: &FilterSpec) -> Vec<String> {
        let mut unknown: Vec<String> = spec
            .only
            .iter()
            .chain(&spec.exclude)
            .chain(&spec.hidden)
            .chain(spec.levels.keys())
            .filter(|n| self.find(n).is_none())
            .cloned()
            .collect();
        unknown.sort();
        unknown.dedup();
        unknown
    }
}

/// Kahn's algorithm; on a cycle, returns the nodes of one cycle from parent
/// to child with the first repeated at the end.
fn topological_order(parents: &[Vec<usize>], children: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let mut missing: Vec<usize> = parents.iter().map(Vec::len).collect();
    let mut order: Vec<usize> = (0..parents.len()).filter(|&i| missing[i] == 0).collect();
    let mut next = 0;
    while let Some(&v) = order.get(next) {
        next += 1;
        for &c in &children[v] {
            missing[c] -= 1;
            if missing[c] == 0 {
                order.push(c);
            }
        }
    }
    if order.len() == parents.len() {
        return Ok(order);
    }
    // Every node left has a parent that is left too: walking up through such
    // parents must come back to a node already seen.
    let Some(start) = (0..parents.len()).find(|&i| missing[i] > 0) else {
        return Ok(order);
    };
    let mut seen_at: HashMap<usize, usize> = HashMap::new();
    let mut path = Vec::new();
    let mut v = start;
    loop {
        if let Some(&at) = seen_at.get(&v) {
            // path[at..] walks child → parent; report parent → child.
            let mut cycle: Vec<usize> = path[at..].to_vec();
            cycle.reverse();
            cycle.push(cycle[0]);
            return Err(cycle);
        }
        seen_at.insert(v, path.len());
        path.push(v);
        match parents[v].iter().find(|&&p| missing[p] > 0) {
            Some(&p) => v = p,
            None => return Err(path),
        }
    }
}

impl FilterSpec {
    /// Compiles this spec for `log`: builds the entity graph and calls
    /// [`FilterSpec::compile_with`]. Fails on names the log does not know
    /// and on a cycle in the declared entity graph.
    pub fn compile(&self, log: &Log) -> Result<Filter, SelectError> {
        self.compile_with(&EntityTree::from_log(log)?)
    }

    /// What the drawing uses when [`FilterSpec::compile`] fails: the
    /// names the log knows applied ([`FilterSpec::compile_lenient`]), or
    /// every entity up to `max_level` when the graph itself cannot be
    /// built; with the error, when there was one.
    pub fn compile_or_lenient(&self, log: &Log) -> (Filter, Option<SelectError>) {
        match self.compile(log) {
            Ok(f) => (f, None),
            Err(e) => {
                let f = EntityTree::from_log(log)
                    .map(|t| self.compile_lenient(&t))
                    .unwrap_or_else(|_| Filter::all(log, self.max_level.unwrap_or(i32::MAX)));
                (f, Some(e))
            }
        }
    }

    /// Compiles this spec against an entity graph (see [`FilterSpec`] for
    /// the meaning of each field). Fails naming every unknown name.
    pub fn compile_with(&self, tree: &EntityTree) -> Result<Filter, SelectError> {
        let names = tree.unknown_names(self);
        if !names.is_empty() {
            const SHOWN: usize = 12;
            let mut known: Vec<String> = (0..tree.len().min(SHOWN))
                .map(|n| tree.name(n).to_owned())
                .collect();
            if tree.len() > SHOWN {
                known.push("…".to_owned());
            }
            return Err(SelectError::UnknownEntities { names, known });
        }
        Ok(self.compile_lenient(tree))
    }

    /// Like [`FilterSpec::compile_with`], but names the graph does not know
    /// match nothing (so `only = ["unknown"]` shows nothing); for a session
    /// opened with another log. [`EntityTree::unknown_names`] lists them.
    pub fn compile_lenient(&self, tree: &EntityTree) -> Filter {
        let n = tree.len();
        let find = |names: &mut dyn Iterator<Item = &String>| -> Vec<usize> {
            names.filter_map(|s| tree.find(s)).collect()
        };
        let mut shown = vec![self.only.is_empty(); n];
        for x in find(&mut self.only.iter()) {
            tree.mark_descendants(x, &mut shown);
        }
        let mut excluded = vec![false; n];
        for x in find(&mut self.exclude.iter()) {
            tree.mark_descendants(x, &mut excluded);
        }
        for x in find(&mut self.hidden.iter()) {
            excluded[x] = true;
        }
        // Nearest override on the ancestry; the largest across parents.
        let mut own: Vec<Option<i32>> = vec![None; n];
        for (name, &level) in &self.levels {
            if let Some(x) = tree.find(name) {
                own[x] = Some(level);
            }
        }
        let mut inherited: Vec<Option<i32>> = vec![None; n];
        for &v in &tree.topo {
            inherited[v] = own[v].or_else(|| tree.parents[v].iter().filter_map(|&p| inherited[p]).max());
        }
        let base = self.max_level.unwrap_or(i32::MAX);
        let levels = (0..tree.entity_count)
            .map(|e| {
                if shown[e] && !excluded[e] {
                    inherited[e].unwrap_or(base)
                } else {
                    Filter::HIDDEN
                }
            })
            .collect();
        Filter::from_levels(levels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn entities(names: &[&str], edges: &[(&str, &str)]) -> Entities {
        let mut e = Entities::new();
        for n in names {
            e.intern(n);
        }
        for (child, parent) in edges {
            let c = e.intern(child);
            let p = e.intern(parent);
            e.add_parent(c, p);
        }
        e
    }

    fn names_of(tree: &EntityTree, nodes: &[usize]) -> Vec<String> {
        nodes.iter().map(|&i| tree.name(i).to_owned()).collect()
    }

    /// The compiled level of each entity, by name.
    fn levels_by_name(tree: &EntityTree, f: &Filter) -> Vec<(String, i32)> {
        (0..tree.entity_count())
            .map(|i| (tree.name(i).to_owned(), f.levels()[i]))
            .collect()
    }

    /// The tree of a large declared graph (the model's test builds the
    /// same graph: a chain of 100,000 entities, nine earlier parents each)
    /// has the one root the edges make.
    #[test]
    fn a_hundred_thousand_entities_and_a_million_edges_make_one_tree() {
        let n = 100_000u32;
        let mut e = Entities::new();
        for i in 0..n {
            e.intern(&format!("e{i}"));
        }
        for i in (1..n).rev() {
            assert!(e.add_parent_acyclic(EntityId(i - 1), EntityId(i)));
        }
        for i in 0..n - 10 {
            for k in 1..=9 {
                assert!(e.add_parent_acyclic(EntityId(i), EntityId(i + k + 1)));
            }
        }
        let tree = EntityTree::new(&e).unwrap();
        assert_eq!(tree.roots().len(), 1);
        assert_eq!(tree.name(tree.roots()[0]), format!("e{}", n - 1));
    }

    #[test]
    fn names_imply_a_hierarchy_with_group_nodes() {
        let e = entities(
            &["robots/blue/3", "robots", "ball", "a//b", "/x", "planner/"],
            &[],
        );
        let t = EntityTree::new(&e).unwrap();
        assert!(t.is_implied());
        assert_eq!(t.entity_count(), 6);
        let blue = t.find("robots/blue").unwrap();
        assert_eq!(t.entity(blue), None, "robots/blue is a group");
        assert_eq!(t.parents(t.find("robots/blue/3").unwrap()), &[blue]);
        assert_eq!(t.parents(blue), &[t.find("robots").unwrap()]);
        assert_eq!(t.parents(t.find("a//b").unwrap()), &[t.find("a/").unwrap()]);
        assert_eq!(t.parents(t.find("a/").unwrap()), &[t.find("a").unwrap()]);
        assert!(t.parents(t.find("/x").unwrap()).is_empty());
        assert_eq!(
            t.parents(t.find("planner/").unwrap()),
            &[t.find("planner").unwrap()]
        );
        assert_eq!(names_of(&t, t.roots()), ["/x", "a", "ball", "planner", "robots"]);
        let d = t.descendants(t.find("robots").unwrap());
        assert_eq!(names_of(&t, &d), ["robots/blue/3", "robots", "robots/blue"]);
    }

    #[test]
    fn declared_edges_replace_implied_ones_and_dedupe() {
        // "robots/blue" would be implied, but declared edges win.
        let e = entities(
            &["robots/blue"],
            &[
                ("robots/blue", "team"),
                ("robots/blue", "team"),
                ("kick", "robots/blue"),
                ("kick", "team"),
            ],
        );
        let t = EntityTree::new(&e).unwrap();
        assert!(!t.is_implied());
        assert_eq!(t.len(), 3, "no group nodes");
        let team = t.find("team").unwrap();
        let blue = t.find("robots/blue").unwrap();
        let kick = t.find("kick").unwrap();
        assert_eq!(t.parents(blue), &[team]);
        assert_eq!(t.children(team), &[kick, blue]);
        assert_eq!(t.descendants(team), {
            let mut v = vec![team, blue, kick];
            v.sort();
            v
        });
        // The diamond unfolds: kick appears under team and under robots/blue.
        let rows: Vec<(String, usize)> = t
            .rows(100)
            .iter()
            .map(|r| (t.name(r.node).to_owned(), r.depth))
            .collect();
        assert_eq!(
            rows,
            [
                ("team".into(), 0),
                ("kick".into(), 1),
                ("robots/blue".into(), 1),
                ("kick".into(), 2)
            ]
        );
        assert_eq!(t.rows(2).len(), 2);
    }

    #[test]
    fn cycles_are_rejected_naming_their_entities() {
        let e = entities(
            &["root"],
            &[("a", "root"), ("b", "a"), ("c", "b"), ("a", "c"), ("d", "c")],
        );
        let err = EntityTree::new(&e).unwrap_err();
        let SelectError::Cycle { names } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(names.first(), names.last());
        let on_cycle: BTreeSet<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(on_cycle, BTreeSet::from(["a", "b", "c"]));
        assert!(err.to_string().contains(" → "), "{err}");
        // Each step goes from a parent to its child.
        let t_edges = [("a", "b"), ("b", "c"), ("c", "a")];
        for w in names.windows(2) {
            assert!(t_edges.contains(&(w[0].as_str(), w[1].as_str())), "{names:?}");
        }
        // A self-loop too.
        let e = entities(&[], &[("s", "s")]);
        assert_eq!(
            EntityTree::new(&e).unwrap_err(),
            SelectError::Cycle {
                names: vec!["s".into(), "s".into()]
            }
        );
        // compile reports it as well.
        let mut log = Log::new();
        log.entities = entities(&[], &[("x", "y"), ("y", "x")]);
        assert!(matches!(
            FilterSpec::default().compile(&log),
            Err(SelectError::Cycle { .. })
        ));
    }

    #[test]
    fn parent_ids_out_of_range_are_an_error() {
        let mut e = entities(&["a", "b"], &[("b", "a")]);
        let a = e.get("a").unwrap();
        e.add_parent(a, EntityId(7));
        let err = EntityTree::new(&e).unwrap_err();
        assert_eq!(
            err.to_string(),
            "entity \"a\" has parent id 7, but the log has only 2 entities"
        );
    }

    #[test]
    fn unknown_names_are_all_reported() {
        let mut log = Log::new();
        log.entities = entities(&["robots/1", "ball"], &[]);
        let spec = FilterSpec {
            only: vec!["robots".into(), "nope".into()],
            exclude: vec!["zzz".into()],
            hidden: ["nope".to_owned()].into(),
            levels: [("ball".to_owned(), 1), ("yy".to_owned(), 2)].into(),
            ..FilterSpec::default()
        };
        let tree = EntityTree::from_log(&log).unwrap();
        assert_eq!(
            spec.compile(&log),
            Err(SelectError::UnknownEntities {
                names: vec!["nope".into(), "yy".into(), "zzz".into()],
                known: (0..tree.len()).map(|n| tree.name(n).to_owned()).collect(),
            })
        );
        // Leniently, unknown names match nothing: `only` still restricts.
        let f = spec.compile_lenient(&tree);
        assert_eq!(
            levels_by_name(&tree, &f),
            [("robots/1".into(), i32::MAX), ("ball".into(), Filter::HIDDEN)]
        );
        let f = FilterSpec {
            only: vec!["nope".into()],
            ..FilterSpec::default()
        }
        .compile_lenient(&tree);
        assert!(f.levels().iter().all(|&l| l == Filter::HIDDEN));
    }

    #[test]
    fn only_exclude_hidden_and_levels_combine() {
        let mut log = Log::new();
        // team → robots/blue → kick; team → kick; planner → kick; planner → path
        log.entities = entities(
            &["team", "robots/blue", "kick", "planner", "path", "ball"],
            &[
                ("robots/blue", "team"),
                ("kick", "robots/blue"),
                ("kick", "team"),
                ("kick", "planner"),
                ("path", "planner"),
            ],
        );
        let tree = EntityTree::from_log(&log).unwrap();
        let compile = |spec: FilterSpec| levels_by_name(&tree, &spec.compile_with(&tree).unwrap());
        let h = Filter::HIDDEN;
        let m = i32::MAX;
        assert_eq!(
            compile(FilterSpec::default()),
            [
                ("team".into(), m),
                ("robots/blue".into(), m),
                ("kick".into(), m),
                ("planner".into(), m),
                ("path".into(), m),
                ("ball".into(), m)
            ]
        );
        // only: descendants, inclusive, each once.
        let only_team = compile(FilterSpec {
            only: vec!["team".into()],
            max_level: Some(2),
            ..FilterSpec::default()
        });
        assert_eq!(
            only_team,
            [
                ("team".into(), 2),
                ("robots/blue".into(), 2),
                ("kick".into(), 2),
                ("planner".into(), h),
                ("path".into(), h),
                ("ball".into(), h)
            ]
        );
        // exclude wins over only; hidden is exact.
        let v = compile(FilterSpec {
            only: vec!["team".into(), "planner".into()],
            exclude: vec!["robots/blue".into()],
            hidden: ["planner".to_owned()].into(),
            max_level: Some(1),
            ..FilterSpec::default()
        });
        assert_eq!(
            v,
            [
                ("team".into(), 1),
                ("robots/blue".into(), h),
                ("kick".into(), h),
                ("planner".into(), h),
                ("path".into(), 1),
                ("ball".into(), h)
            ]
        );
        // Levels: "team up to 3, planner up to 0": kick inherits 3 from team
        // (directly), -1 from robots/blue and 0 from planner: the largest wins.
        // A deeper override beats an inherited one (robots/blue).
        let v = compile(FilterSpec {
            max_level: Some(1),
            levels: [
                ("team".to_owned(), 3),
                ("planner".to_owned(), 0),
                ("robots/blue".to_owned(), -1),
            ]
            .into(),
            ..FilterSpec::default()
        });
        assert_eq!(
            v,
            [
                ("team".into(), 3),
                ("robots/blue".into(), -1),
                ("kick".into(), 3),
                ("planner".into(), 0),
                ("path".into(), 0),
                ("ball".into(), 1)
            ]
        );
    }

    #[test]
    fn group_names_filter_their_members() {
        let mut log = Log::new();
        log.entities = entities(&["robots/blue/1", "robots/yellow/1", "ball"], &[]);
        let spec = FilterSpec {
            only: vec!["robots".into()],
            exclude: vec!["robots/yellow".into()],
            hidden: ["robots".to_owned()].into(),
            levels: [("robots/blue".to_owned(), 4)].into(),
            ..FilterSpec::default()
        };
        let tree = EntityTree::from_log(&log).unwrap();
        let f = spec.compile(&log).unwrap();
        assert_eq!(
            levels_by_name(&tree, &f),
            [
                ("robots/blue/1".into(), 4),
                ("robots/yellow/1".into(), Filter::HIDDEN),
                ("ball".into(), Filter::HIDDEN)
            ]
        );
    }

    /// A random DAG over `n` entities (edges only from lower to higher
    /// index, so acyclic) and a random spec over its names.
    fn dag_and_spec() -> impl Strategy<Value = (Entities, FilterSpec)> {
        (1usize..8)
            .prop_flat_map(|n| {
                let edges = proptest::collection::vec((0..n, 0..n), 0..12);
                let pick = proptest::collection::vec(0..n + 1, 0..3);
                let levels = proptest::collection::vec((0..n + 1, -2i32..3), 0..4);
                (
                    Just(n),
                    edges,
                    pick.clone(),
                    pick.clone(),
                    pick,
                    levels,
                    proptest::option::of(-2i32..3),
                )
            })
            .prop_map(|(n, edges, only, exclude, hidden, levels, max_level)| {
                let mut e = Entities::new();
                for i in 0..n {
                    e.intern(&format!("e{i}"));
                }
                for (a, b) in edges {
                    if a < b {
                        e.add_parent(EntityId(b as u32), EntityId(a as u32));
                    }
                }
                // Index n names an entity that does not exist.
                let name = |i: usize| format!("e{i}");
                let spec = FilterSpec {
                    max_level,
                    only: only.into_iter().map(name).collect(),
                    exclude: exclude.into_iter().map(name).collect(),
                    hidden: hidden.into_iter().map(name).collect(),
                    levels: levels.into_iter().map(|(i, l)| (name(i), l)).collect(),
                    above_mask: Default::default(),
                };
                (e, spec)
            })
    }

    /// Whether `a` is `d` or an ancestor of it, by walking parents.
    fn is_ancestor(e: &Entities, a: EntityId, d: EntityId) -> bool {
        a == d || e.parents(d).iter().any(|&p| is_ancestor(e, a, p))
    }

    /// The level rule written as a recursion over parents.
    fn reference_level(e: &Entities, spec: &FilterSpec, d: EntityId) -> Option<i32> {
        spec.levels.get(e.name(d)).copied().or_else(|| {
            e.parents(d)
                .iter()
                .filter_map(|&p| reference_level(e, spec, p))
                .max()
        })
    }

    proptest! {
        #[test]
        fn compile_matches_the_definition((e, spec) in dag_and_spec()) {
            let tree = EntityTree::new(&e).unwrap();
            let f = spec.compile_lenient(&tree);
            let named = |names: &mut dyn Iterator<Item = &String>| -> Vec<EntityId> {
                names.filter_map(|s| e.get(s)).collect()
            };
            let only = named(&mut spec.only.iter());
            let exclude = named(&mut spec.exclude.iter());
            for d in e.ids() {
                let shown = (spec.only.is_empty() || only.iter().any(|&a| is_ancestor(&e, a, d)))
                    && !exclude.iter().any(|&a| is_ancestor(&e, a, d))
                    && !spec.hidden.contains(e.name(d));
                let want = if shown {
                    reference_level(&e, &spec, d).unwrap_or(spec.max_level.unwrap_or(i32::MAX))
                } else {
                    Filter::HIDDEN
                };
                prop_assert_eq!(f.levels()[d.index()], want, "entity {}", e.name(d));
            }
            prop_assert_eq!(spec.compile_with(&tree).is_ok(), tree.unknown_names(&spec).is_empty());
        }
    }
}
