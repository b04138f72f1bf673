//! Scene graphs of the 3D monitor protocols, kept across full and diff
//! updates, and the objects labelled in them (the ball, each robot).
//!
//! A full scene graph is a tree of `(nd …)` nodes: transforms
//! `(nd TRF (SLT m0 … m15) …)` (4 × 4, column-major, translation in
//! m12–m14), descriptions `(nd DSC (agent Team 3) …)` / `(nd DSC (ball) …)`
//! (rcssservermj), meshes `(nd SMN …)` / `(nd StaticMesh (load …) …)` and
//! lights. A diff has exactly the shape of the last full graph, node for
//! node in the same order, and carries an `SLT` only where a transform
//! changed; [`SceneGraph::apply_diff`] walks both in step and refuses a
//! diff whose shape differs.
//!
//! Labelled objects:
//! - rcssservermj: a `DSC` node labelled `(ball)` or `(agent Team n)`;
//!   the object's pose is its first child transform (the ball's centre,
//!   the robot's torso) under all transforms above it; the robot's model
//!   is what its meshes' paths say ([`super::robots`]).
//! - SimSpark: a mesh loading `…soccerball…` (or, on SimSpark-SPL, a unit
//!   sphere of material `matOrange`) is the ball; a robot is the parts
//!   whose materials give one side and number (`matLeft`/`matRight` with
//!   `matNum<n>`, or `matLeft<n>`); its model is its torso mesh
//!   (`naobody3.obj`, …) and its pose the body's transform above that
//!   mesh's own, turned so that x is its forward direction.
//!
//! A robot of no known model is placed at its first part and named in
//! [`SceneGraph::notes`] (a torso renamed, a server's new robot).
//!
//! A transform whose `SLT` is damaged (a number that is not one — `nan`,
//! `abc`, `0x10` — or not 16 of them) costs that transform, not the
//! scene: the graph keeps its shape, the node keeps its last good
//! transform (in a diff, or in a full graph of the same shape as the
//! last), and what hangs below a node that never had one is left out
//! until a diff gives it one; each is said once
//! ([`SceneGraph::take_damage`]).

use super::robots::{self, Jersey, ModelId};
use crate::sexp::Sexp;

/// A rigid transform as the upper 3 × 4 of a column-major 4 × 4 matrix:
/// the images of the x, y and z axes, then the translation.
pub type Affine = [f64; 12];

pub const IDENTITY: Affine = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];

/// A quarter turn about z: x onto y (a torso whose forward axis is y,
/// turned so that its x axis is forward).
const QUARTER_TURN: Affine = [0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];

/// `a ∘ b`: first `b`, then `a`.
pub fn compose(a: &Affine, b: &Affine) -> Affine {
    let mut out = [0.0; 12];
    for col in 0..4 {
        for row in 0..3 {
            let mut v = a[row] * b[col * 3] + a[3 + row] * b[col * 3 + 1] + a[6 + row] * b[col * 3 + 2];
            if col == 3 {
                v += a[9 + row];
            }
            out[col * 3 + row] = v;
        }
    }
    out
}

/// The translation of a transform.
pub fn translation(a: &Affine) -> [f64; 3] {
    [a[9], a[10], a[11]]
}

/// A team as a label names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TeamRef {
    /// rcssservermj labels robots with their team's name.
    Name(String),
    /// SimSpark's meshes only say the side.
    Left,
    Right,
}

/// What a labelled object is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Label {
    Ball,
    Robot {
        team: TeamRef,
        unum: u32,
        /// Its model ([`robots::MODELS`]).
        model: ModelId,
    },
}

const NONE: u32 = u32::MAX;

/// A labelled object: its label and the transform nodes whose product,
/// outermost first, is its pose (turned a quarter about z after them when
/// `turn`).
#[derive(Clone, Debug)]
struct Labelled {
    label: Label,
    chain: Vec<u32>,
    turn: bool,
}

/// The current scene graph: nodes in pre-order with their parents, child
/// counts and (for transforms) local matrices.
#[derive(Clone, Debug, Default)]
pub struct SceneGraph {
    parent: Vec<u32>,
    children: Vec<u32>,
    /// Local transform of each node; `None` for nodes that are not transforms.
    local: Vec<Option<Affine>>,
    labelled: Vec<Labelled>,
    /// What the last build could not tell (robots of no known model).
    notes: Vec<String>,
    /// Transform nodes that never had a good transform: the objects below
    /// them are left out.
    unknown: Vec<bool>,
    /// The damaged transforms the last build or diff passed over.
    damage: Vec<String>,
}

/// A mesh met while building: what labelling needs of it.
#[derive(Debug)]
struct Mesh {
    node: u32,
    /// What it loads (`models/naobody3.obj`, `StdUnitSphere`).
    load: Vec<u8>,
    jersey: Jersey,
    /// Of material `matOrange` (SimSpark-SPL's ball).
    orange: bool,
}

/// What a build collects before the tree is whole.
#[derive(Debug, Default)]
struct Collected {
    meshes: Vec<Mesh>,
    /// rcssservermj's descriptions: the node and its label.
    described: Vec<(u32, Label)>,
    /// One past each node's last descendant.
    end: Vec<u32>,
}

impl SceneGraph {
    /// Builds a graph from the top-level `(nd …)` nodes of a full update.
    pub fn build<'a>(top: impl Iterator<Item = Sexp<'a>>) -> Result<Self, String> {
        SceneGraph::build_after(top, None)
    }

    /// Builds a graph from a full update that follows `last`: a damaged
    /// transform keeps `last`'s at the same node when both graphs have the
    /// same shape.
    pub fn build_after<'a>(
        top: impl Iterator<Item = Sexp<'a>>,
        last: Option<&SceneGraph>,
    ) -> Result<Self, String> {
        let mut g = SceneGraph::default();
        let mut c = Collected::default();
        let mut damaged = Vec::new();
        for s in top {
            if s.head() == Some(b"nd") {
                g.add(s, NONE, &mut c, &mut damaged)?;
            }
        }
        g.unknown = vec![false; g.len()];
        let same_shape = last.filter(|l| l.parent == g.parent);
        for (at, why) in damaged {
            let kept = same_shape.and_then(|l| l.local[at as usize].filter(|_| !l.unknown[at as usize]));
            match kept {
                Some(m) => {
                    g.local[at as usize] = Some(m);
                    g.damage.push(format!(
                        "node {at}'s transform (SLT) {why}: its transform of the last full scene graph kept"
                    ));
                }
                None => {
                    g.unknown[at as usize] = true;
                    g.damage.push(format!(
                        "node {at}'s transform (SLT) {why}: what hangs below it is left out until a diff gives \
                         it one"
                    ));
                }
            }
        }
        g.label_described(&c);
        g.label_simspark(&c);
        Ok(g)
    }

    /// rcssservermj: each description's object is its first child
    /// transform; a robot's model is what the meshes below it load.
    fn label_described(&mut self, c: &Collected) {
        for (node, label) in &c.described {
            let node = *node;
            let first_trf = (node + 1..c.end[node as usize])
                .find(|&k| self.parent[k as usize] == node && self.local[k as usize].is_some());
            let Some(first_trf) = first_trf else {
                continue;
            };
            let mut chain = vec![first_trf];
            chain.extend(self.transforms_above(node));
            chain.reverse();
            let label = match label {
                Label::Robot { team, unum, .. } => {
                    let inside: Vec<&Mesh> = c
                        .meshes
                        .iter()
                        .filter(|m| m.node > node && m.node < c.end[node as usize])
                        .collect();
                    let model = inside
                        .iter()
                        .find_map(|m| robots::rcssservermj_mesh(&m.load))
                        .or_else(|| match inside.as_slice() {
                            // The ant: a sphere for a torso, its legs
                            // capsules the monitor does not draw.
                            [only] if only.load == b"StdUnitSphere" => Some(robots::ANT),
                            _ => None,
                        });
                    let model = model.unwrap_or_else(|| {
                        let team = match team {
                            TeamRef::Name(n) => n.as_str(),
                            TeamRef::Left => "left",
                            TeamRef::Right => "right",
                        };
                        self.notes.push(unknown_note(&format!("{team} {unum}"), &inside));
                        robots::UNKNOWN
                    });
                    Label::Robot {
                        team: team.clone(),
                        unum: *unum,
                        model,
                    }
                }
                Label::Ball => Label::Ball,
            };
            self.labelled.push(Labelled {
                label,
                chain,
                turn: false,
            });
        }
    }

    /// SimSpark: the ball's mesh, and each robot from its parts' materials.
    fn label_simspark(&mut self, c: &Collected) {
        for m in &c.meshes {
            let stem = mesh_stem(&m.load);
            if stem.windows(10).any(|w| w == b"soccerball") || (m.orange && m.load == b"StdUnitSphere") {
                let mut chain = self.transforms_above(m.node);
                chain.reverse();
                self.labelled.push(Labelled {
                    label: Label::Ball,
                    chain,
                    turn: false,
                });
            }
        }
        // Each side and number once, in the order their first part comes.
        let mut robots: Vec<((bool, u32), Vec<&Mesh>)> = Vec::new();
        for m in &c.meshes {
            let Some(id) = m.jersey.identity() else {
                continue;
            };
            match robots.iter_mut().find(|(k, _)| *k == id) {
                Some((_, parts)) => parts.push(m),
                None => robots.push((id, vec![m])),
            }
        }
        for ((right, unum), parts) in robots {
            let team = if right { TeamRef::Right } else { TeamRef::Left };
            let torso = parts
                .iter()
                .find_map(|m| robots::simspark_torso(mesh_stem(&m.load)).map(|model| (m, model)));
            let (chain, model, turn) = match torso {
                Some((m, model)) => {
                    // The plain NAO mesh with a type's material is that type.
                    let model = match m.jersey.nao_type {
                        Some(t) if robots::get(model).id == "nao" => t,
                        _ => model,
                    };
                    let mut chain = self.transforms_above(m.node);
                    // The mesh's own transform turns (and on SimSpark-SPL
                    // raises) the mesh into the body; the body is above it.
                    if chain.len() > 1 {
                        chain.remove(0);
                    }
                    chain.reverse();
                    (chain, model, robots::get(model).forward_is_y())
                }
                None => {
                    let side = if right { "right" } else { "left" };
                    self.notes.push(unknown_note(&format!("{side} {unum}"), &parts));
                    let mut chain = self.transforms_above(parts[0].node);
                    chain.reverse();
                    (chain, robots::UNKNOWN, false)
                }
            };
            self.labelled.push(Labelled {
                label: Label::Robot { team, unum, model },
                chain,
                turn,
            });
        }
    }

    /// The transform nodes at and above `node`, innermost first.
    fn transforms_above(&self, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = node;
        while at != NONE {
            if self.local[at as usize].is_some() {
                out.push(at);
            }
            at = self.parent[at as usize];
        }
        out
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// What the build could not tell: each robot of no known model, once.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    fn add(
        &mut self,
        s: Sexp<'_>,
        parent: u32,
        c: &mut Collected,
        damaged: &mut Vec<(u32, String)>,
    ) -> Result<(), String> {
        let at = self.parent.len() as u32;
        self.parent.push(parent);
        self.children.push(0);
        self.local.push(None);
        c.end.push(at + 1);
        if parent != NONE {
            self.children[parent as usize] += 1;
        }
        let mut kind: &[u8] = b"";
        let mut load: Option<&[u8]> = None;
        let mut jersey = Jersey::default();
        let mut orange = false;
        for item in s.items().skip(1) {
            if let Some(a) = item.atom() {
                if kind.is_empty() {
                    kind = a;
                }
                continue;
            }
            match item.head() {
                Some(b"nd") => self.add(item, at, c, damaged)?,
                Some(b"SLT") => match slt(item) {
                    Ok(m) => self.local[at as usize] = Some(m),
                    Err(why) => {
                        // A transform node all the same, its transform to
                        // be found.
                        self.local[at as usize] = Some(IDENTITY);
                        damaged.push((at, why));
                    }
                },
                Some(b"ball") if kind == b"DSC" => c.described.push((at, Label::Ball)),
                Some(b"agent") if kind == b"DSC" => {
                    let team = item.get(1).and_then(|t| t.str());
                    let unum = item.get(2).and_then(|n| n.u32());
                    if let (Some(team), Some(unum)) = (team, unum) {
                        let team = TeamRef::Name(team.to_owned());
                        let label = Label::Robot {
                            team,
                            unum,
                            model: robots::UNKNOWN,
                        };
                        c.described.push((at, label));
                    }
                }
                Some(b"load") => load = item.get(1).and_then(|m| m.atom()),
                Some(b"resetMaterials") | Some(b"sMat") => {
                    for m in item.items().skip(1).filter_map(|m| m.atom()) {
                        orange |= m == b"matOrange";
                        jersey.add(m);
                    }
                }
                _ => {}
            }
        }
        if kind == b"TRF" && self.local[at as usize].is_none() {
            self.local[at as usize] = Some(IDENTITY);
        }
        if let Some(load) = load {
            c.meshes.push(Mesh {
                node: at,
                load: load.to_vec(),
                jersey,
                orange,
            });
        }
        c.end[at as usize] = self.parent.len() as u32;
        Ok(())
    }

    /// Applies a diff given as its top-level `(nd …)` nodes.
    pub fn apply_diff<'a>(&mut self, top: impl Iterator<Item = Sexp<'a>>) -> Result<(), String> {
        self.damage.clear();
        let mut next = 0u32;
        let mut top_count = 0;
        for s in top {
            if s.head() == Some(b"nd") {
                top_count += 1;
                self.apply_node(s, &mut next)?;
            }
        }
        let expected = self.parent.iter().filter(|&&p| p == NONE).count();
        if top_count != expected || next as usize != self.len() {
            return Err(format!(
                "the diff has {top_count} top-level nodes and {next} in all where the last full scene graph \
                 has {expected} and {}",
                self.len()
            ));
        }
        Ok(())
    }

    fn apply_node(&mut self, s: Sexp<'_>, next: &mut u32) -> Result<(), String> {
        let at = *next;
        if at as usize >= self.len() {
            return Err(format!(
                "the diff has more nodes than the last full scene graph ({})",
                self.len()
            ));
        }
        *next += 1;
        let want = self.children[at as usize];
        let have = s.items().filter(|i| i.head() == Some(b"nd")).count();
        if have != want as usize {
            return Err(format!(
                "node {at} has {have} children in the diff and {want} in the last full scene graph"
            ));
        }
        for item in s.items().skip(1) {
            match item.head() {
                Some(b"nd") => self.apply_node(item, next)?,
                Some(b"SLT") => {
                    if self.local[at as usize].is_none() {
                        return Err(format!("node {at} gets a transform but is not a transform node"));
                    }
                    match slt(item) {
                        Ok(m) => {
                            self.local[at as usize] = Some(m);
                            self.unknown[at as usize] = false;
                        }
                        Err(why) if self.unknown[at as usize] => self.damage.push(format!(
                            "node {at}'s transform (SLT) {why}: it has had no good one, what hangs below it \
                             stays out"
                        )),
                        Err(why) => self.damage.push(format!(
                            "node {at}'s transform (SLT) {why}: its last good transform kept"
                        )),
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// What the last build or diff passed over: each damaged transform
    /// and what was done instead; taken once.
    pub fn take_damage(&mut self) -> Vec<String> {
        std::mem::take(&mut self.damage)
    }

    /// Every labelled object with its pose in the world (a robot's x axis
    /// its forward direction); not those below a transform never read.
    pub fn objects(&self) -> impl Iterator<Item = (&Label, Affine)> + '_ {
        let placed = |l: &&Labelled| !l.chain.iter().any(|&n| self.unknown[n as usize]);
        self.labelled.iter().filter(placed).map(|l| {
            let pose = l
                .chain
                .iter()
                .filter_map(|&n| self.local[n as usize].as_ref())
                .fold(IDENTITY, |acc, m| compose(&acc, m));
            let pose = if l.turn {
                compose(&pose, &QUARTER_TURN)
            } else {
                pose
            };
            (&l.label, pose)
        })
    }
}

/// What is said of a robot of no known model: who, and what its parts load.
fn unknown_note(who: &str, parts: &[&Mesh]) -> String {
    let mut loads: Vec<String> = Vec::new();
    for m in parts {
        let l = String::from_utf8_lossy(&m.load).into_owned();
        if !loads.contains(&l) {
            loads.push(l);
        }
    }
    let shown: Vec<&str> = loads.iter().take(4).map(String::as_str).collect();
    let more = if loads.len() > 4 {
        format!(" and {} more", loads.len() - 4)
    } else {
        String::new()
    };
    let parts = if shown.is_empty() {
        "no meshes".to_owned()
    } else {
        format!("meshes {}{more}", shown.join(", "))
    };
    format!(
        "robot {who} is of no known model ({parts}); it is drawn at its first part, {} m across",
        2.0 * robots::get(robots::UNKNOWN).radius
    )
}

/// The file name of a mesh path without directories and extension.
fn mesh_stem(path: &[u8]) -> &[u8] {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    match name.iter().rposition(|&b| b == b'.') {
        Some(dot) => &name[..dot],
        None => name,
    }
}

/// The transform of an `(SLT m0 … m15)` list; an error says what in it is
/// not a finite number, or how many it has.
fn slt(item: Sexp<'_>) -> Result<Affine, String> {
    let mut m = [0.0; 16];
    let mut count = 0;
    for (k, v) in item.items().skip(1).enumerate() {
        count += 1;
        let Some(slot) = m.get_mut(k) else {
            continue;
        };
        match v.f64().filter(|x| x.is_finite()) {
            Some(x) => *slot = x,
            None => {
                let text = String::from_utf8_lossy(v.text());
                let shown: String = text.chars().take(24).collect();
                let cut = if shown.len() < text.len() { "…" } else { "" };
                return Err(format!(
                    "has `{shown}{cut}` for its number {}, which is not a finite number",
                    k + 1
                ));
            }
        }
    }
    if count != 16 {
        return Err(format!("has {count} numbers, not 16"));
    }
    Ok([
        m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10], m[12], m[13], m[14],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sexp::Parser;

    fn shift(x: f64, y: f64, z: f64) -> String {
        format!("(SLT 1 0 0 0 0 1 0 0 0 0 1 0 {x} {y} {z} 1)")
    }

    fn objects(g: &SceneGraph) -> Vec<(Label, [f64; 3])> {
        g.objects().map(|(l, a)| (l.clone(), translation(&a))).collect()
    }

    fn robot(team: TeamRef, unum: u32, model: &str) -> Label {
        let model = (0..robots::MODELS.len() as u8)
            .find(|&m| robots::get(m).id == model)
            .unwrap();
        Label::Robot { team, unum, model }
    }

    fn heading(pose: &Affine) -> f64 {
        pose[1].atan2(pose[0]).to_degrees()
    }

    #[test]
    fn rsmp_labels_and_diffs() {
        let full = format!(
            "(nd TRF {root}(nd DSC (ball)(nd TRF {b}(nd SMN (load StdUnitSphere))))\
             (nd DSC (agent Alpha 7)(nd TRF {r}(nd TRF {head}))))",
            root = shift(1.0, 0.0, 0.0),
            b = shift(0.0, 2.0, 0.1),
            r = shift(-3.0, 0.0, 0.6),
            head = shift(0.0, 0.0, 0.3)
        );
        let mut p = Parser::new();
        let doc = p.parse(full.as_bytes()).unwrap();
        let mut g = SceneGraph::build(doc.items()).unwrap();
        assert_eq!(g.len(), 7);
        // No mesh says what Alpha 7 is.
        let alpha = robot(TeamRef::Name("Alpha".into()), 7, "unknown");
        assert_eq!(g.notes().len(), 1, "{:?}", g.notes());
        assert!(g.notes()[0].contains("Alpha 7") && g.notes()[0].contains("no meshes"));
        assert_eq!(
            objects(&g),
            [(Label::Ball, [1.0, 2.0, 0.1]), (alpha.clone(), [-2.0, 0.0, 0.6])]
        );
        let diff = format!("(nd(nd(nd TRF {}(nd)))(nd(nd(nd))))", shift(5.0, 5.0, 0.1));
        let doc = p.parse(diff.as_bytes()).unwrap();
        g.apply_diff(doc.items()).unwrap();
        assert_eq!(
            objects(&g),
            [(Label::Ball, [6.0, 5.0, 0.1]), (alpha, [-2.0, 0.0, 0.6])]
        );
        for bad in [
            "(nd(nd(nd(nd)))(nd(nd)))",
            "(nd(nd(nd(nd)))(nd(nd(nd)))(nd))",
            "(nd(nd(nd(nd)))(nd(nd(nd))))(nd)",
            "(nd(nd(nd(nd (SLT 1))))(nd(nd(nd))))",
        ] {
            let doc = p.parse(bad.as_bytes()).unwrap();
            assert!(g.clone().apply_diff(doc.items()).is_err(), "{bad}");
        }
        let doc = p
            .parse(b"(nd(nd(nd(nd (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1))))(nd(nd(nd))))")
            .unwrap();
        assert!(
            g.clone()
                .apply_diff(doc.items())
                .unwrap_err()
                .contains("not a transform"),
            "an SLT on a mesh node"
        );
    }

    #[test]
    fn rcssservermj_robots_are_known_by_their_meshes() {
        let agent = |team: &str, n: u32, inside: &str| {
            format!(
                "(nd DSC (agent {team} {n})(nd TRF {}(nd SMN (setVisible 1){inside}(sMat matLeft))))",
                shift(f64::from(n), 0.0, 0.5)
            )
        };
        let scene = [
            agent("A", 1, "(load models/T1/meshes/Trunk.STL)"),
            agent("A", 2, "(load models/K1/meshes/Trunk.STL)"),
            agent("B", 3, "(load StdUnitSphere)(sSc 0.25 0.25 0.25)"),
            agent("B", 4, "(load models/Z7/body.stl)"),
        ]
        .concat();
        let mut p = Parser::new();
        let doc = p.parse(scene.as_bytes()).unwrap();
        let g = SceneGraph::build(doc.items()).unwrap();
        let got: Vec<(Label, [f64; 3])> = objects(&g);
        let name = |t: &str| TeamRef::Name(t.into());
        assert_eq!(
            got,
            [
                (robot(name("A"), 1, "T1"), [1.0, 0.0, 0.5]),
                (robot(name("A"), 2, "K1"), [2.0, 0.0, 0.5]),
                (robot(name("B"), 3, "ant"), [3.0, 0.0, 0.5]),
                (robot(name("B"), 4, "unknown"), [4.0, 0.0, 0.5]),
            ]
        );
        assert_eq!(g.notes().len(), 1);
        assert!(g.notes()[0].contains("B 4") && g.notes()[0].contains("models/Z7/body.stl"));
        // MuJoCo's torso faces its x axis: no turn.
        assert!(g.objects().all(|(_, pose)| heading(&pose).abs() < 1e-9));
    }

    /// A SimSpark NAO as its monitor writes it: the agent's node, the
    /// body's transform, the torso mesh turned (and raised) into the body,
    /// and parts with the team's materials.
    fn simspark_nao(torso: &str, mats: &str, at: (f64, f64, f64), yaw_deg: f64) -> String {
        let (s, c) = yaw_deg.to_radians().sin_cos();
        // The body's y axis is its forward direction: y ↦ (cos, sin).
        let body = format!(
            "(SLT {} {} 0 0 {} {} 0 0 0 0 1 0 {} {} {} 1)",
            s, -c, c, s, at.0, at.1, at.2
        );
        format!(
            "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1)\
              (nd TRF {body}(nd TRF (SLT -1 0 0 0 0 0 1 0 0 1 0 0 6e-05 0.0048 0.05477 1)\
                 (nd StaticMesh (setVisible 1) (load models/{torso}) (sSc 0.1 0.1 0.1)(resetMaterials {mats}))))\
              (nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 {} {} {} 1)(nd StaticMesh (load models/rthigh.obj)(resetMaterials {mats})))\
              (nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 0 1 1)(nd SMN (setVisible 0) (load StdUnitCylinder 1 1) (sMat matSelect))))",
            at.0,
            at.1,
            at.2 - 0.2
        )
    }

    #[test]
    fn simspark_robots_are_known_by_torso_mesh_and_materials() {
        let scene = [
            format!(
                "(nd TRF {}(nd StaticMesh (load models/soccerball.obj)(resetMaterials soccerball_rcs-soccerball.png)))",
                shift(0.0, 0.0, 0.04)
            ),
            simspark_nao("naobody.obj", "matNum9 matLeft naowhite", (-14.0, 9.0, 0.39), 0.0),
            simspark_nao("naobody3.obj", "matNum3 matRight matType3 naowhite", (5.0, -1.0, 0.38), 180.0),
            simspark_nao("naobody4.obj", "matNum11 matRight naowhite", (6.0, 2.0, 0.38), 90.0),
            simspark_nao("naobody.obj", "matNum2 matLeft matType1 naowhite", (-2.0, 0.0, 0.4), 45.0),
            // Renamed: parts with a team and number, but no torso of a model.
            simspark_nao("naobody9.obj", "matNum5 matLeft naowhite", (-1.0, -1.0, 0.4), 0.0),
            // A Soccerbot: one material for side and number.
            format!(
                "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1)(nd TRF {}(nd TRF (SLT -1 0 0 0 0 0 1 0 0 1 0 0 0 0 0 1)\
                 (nd SMN (load models/soccerbottorso.obj) (sSc 0.07 0.05 0.05) (sMat matRight7)))))",
                shift(3.0, 4.0, 0.3)
            ),
            // Not yet in a team: no robot.
            simspark_nao("naobody0.obj", "matNum matTeam naowhite", (0.0, 8.0, 0.4), 0.0),
        ]
        .concat();
        let mut p = Parser::new();
        let text = format!("({scene})");
        let doc = p.parse(text.as_bytes()).unwrap();
        let top = doc.items().next().unwrap();
        let g = SceneGraph::build(top.items()).unwrap();
        let got: Vec<(Label, [f64; 3], f64)> = g
            .objects()
            .map(|(l, a)| (l.clone(), translation(&a), heading(&a)))
            .collect();
        use TeamRef::{Left, Right};
        let want = [
            (Label::Ball, [0.0, 0.0, 0.04]),
            (robot(Left, 9, "nao"), [-14.0, 9.0, 0.39]),
            (robot(Right, 3, "nao3"), [5.0, -1.0, 0.38]),
            (robot(Right, 11, "nao4"), [6.0, 2.0, 0.38]),
            (robot(Left, 2, "nao1"), [-2.0, 0.0, 0.4]),
            // At its first part, the renamed torso mesh, as it stands.
            (robot(Left, 5, "unknown"), [-0.9952, -1.00006, 0.45477]),
            (robot(Right, 7, "soccerbot"), [3.0, 4.0, 0.3]),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((l, p, _), (wl, wp)) in got.iter().zip(&want) {
            assert_eq!(l, wl);
            for k in 0..3 {
                assert!((p[k] - wp[k]).abs() < 1e-9, "{l:?}: {p:?} vs {wp:?}");
            }
        }
        // Forward is the body's y axis, turned onto x.
        let headings: Vec<f64> = got[1..5].iter().map(|g| g.2).collect();
        for (h, want) in headings.iter().zip([0.0, 180.0, 90.0, 45.0]) {
            let d = (h - want + 540.0).rem_euclid(360.0) - 180.0;
            assert!(d.abs() < 1e-9, "{headings:?}");
        }
        assert_eq!(g.notes().len(), 1, "{:?}", g.notes());
        assert!(
            g.notes()[0].contains("left 5") && g.notes()[0].contains("models/naobody9.obj"),
            "{:?}",
            g.notes()
        );
    }

    #[test]
    fn simspark_spl_ball_is_an_orange_sphere() {
        let scene = format!(
            "((nd TRF {}(nd SMN (setVisible 1) (load StdUnitSphere) (sSc 0.0325 0.0325 0.0325) (sMat matOrange)))\
              (nd TRF {}(nd SMN (load StdUnitSphere) (sMat matYellow))))",
            shift(0.5, -0.2, 0.0325),
            shift(9.0, 9.0, 0.0)
        );
        let mut p = Parser::new();
        let doc = p.parse(scene.as_bytes()).unwrap();
        let g = SceneGraph::build(doc.items().next().unwrap().items()).unwrap();
        assert_eq!(objects(&g), [(Label::Ball, [0.5, -0.2, 0.0325])]);
        assert!(g.notes().is_empty());
    }

    #[test]
    fn compose_rotates_then_translates() {
        // 90° about z, then shifted by (1, 0, 0).
        let rot: Affine = [0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
        let p: Affine = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0];
        assert_eq!(translation(&compose(&rot, &p)), [1.0, 2.0, 0.0]);
        assert_eq!(compose(&IDENTITY, &rot), rot);
    }
}
