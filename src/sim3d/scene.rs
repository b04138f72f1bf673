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
//!   the robot's torso) under all transforms above it.
//! - SimSpark: a mesh loading `…soccerball…` is the ball; a mesh loading
//!   a `…body` model whose materials include `matLeft`/`matRight` and
//!   `matNum<n>` is robot `n` of that side; the pose is the transforms
//!   above the mesh.

use crate::sexp::Sexp;

/// A rigid transform as the upper 3 × 4 of a column-major 4 × 4 matrix:
/// the images of the x, y and z axes, then the translation.
pub type Affine = [f64; 12];

pub const IDENTITY: Affine = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];

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
    Robot { team: TeamRef, unum: u32 },
}

const NONE: u32 = u32::MAX;

/// A labelled object: its label and the transform nodes whose product,
/// outermost first, is its pose.
#[derive(Clone, Debug)]
struct Labelled {
    label: Label,
    chain: Vec<u32>,
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
    /// Label found at each node during a build, before chains are known.
    pending: Vec<(u32, Label, bool)>,
}

impl SceneGraph {
    /// Builds a graph from the top-level `(nd …)` nodes of a full update.
    pub fn build<'a>(top: impl Iterator<Item = Sexp<'a>>) -> Result<Self, String> {
        let mut g = SceneGraph::default();
        for s in top {
            if s.head() == Some(b"nd") {
                g.add(s, NONE)?;
            }
        }
        let pending = std::mem::take(&mut g.pending);
        for (node, label, own_child) in pending {
            let mut chain = Vec::new();
            if own_child {
                // rcssservermj: the description's first child transform.
                let first_trf = (node + 1..g.len() as u32)
                    .take_while(|&c| g.is_descendant(c, node))
                    .find(|&c| g.parent[c as usize] == node && g.local[c as usize].is_some());
                match first_trf {
                    Some(c) => chain.push(c),
                    None => continue,
                }
            }
            let mut at = g.parent[node as usize];
            while at != NONE {
                if g.local[at as usize].is_some() {
                    chain.push(at);
                }
                at = g.parent[at as usize];
            }
            if g.local[node as usize].is_some() && !own_child {
                chain.insert(0, node);
            }
            chain.reverse();
            g.labelled.push(Labelled { label, chain });
        }
        Ok(g)
    }

    fn is_descendant(&self, mut c: u32, of: u32) -> bool {
        while c != NONE {
            if c == of {
                return true;
            }
            c = self.parent[c as usize];
        }
        false
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    fn add(&mut self, s: Sexp<'_>, parent: u32) -> Result<(), String> {
        let at = self.parent.len() as u32;
        self.parent.push(parent);
        self.children.push(0);
        self.local.push(None);
        if parent != NONE {
            self.children[parent as usize] += 1;
        }
        let mut kind: &[u8] = b"";
        let mut mesh: Option<&[u8]> = None;
        let mut robot_side: Option<TeamRef> = None;
        let mut number: Option<u32> = None;
        for item in s.items().skip(1) {
            if let Some(a) = item.atom() {
                if kind.is_empty() {
                    kind = a;
                }
                continue;
            }
            match item.head() {
                Some(b"nd") => self.add(item, at)?,
                Some(b"SLT") => self.local[at as usize] = Some(slt(item)?),
                Some(b"ball") if kind == b"DSC" => self.pending.push((at, Label::Ball, true)),
                Some(b"agent") if kind == b"DSC" => {
                    let team = item.get(1).and_then(|t| t.str());
                    let unum = item.get(2).and_then(|n| n.u32());
                    if let (Some(team), Some(unum)) = (team, unum) {
                        let team = TeamRef::Name(team.to_owned());
                        self.pending.push((at, Label::Robot { team, unum }, true));
                    }
                }
                Some(b"load") => mesh = item.get(1).and_then(|m| m.atom()),
                Some(b"resetMaterials") | Some(b"sMat") => {
                    for m in item.items().skip(1).filter_map(|m| m.atom()) {
                        match m {
                            b"matLeft" => robot_side = Some(TeamRef::Left),
                            b"matRight" => robot_side = Some(TeamRef::Right),
                            _ => {
                                if let Some(n) = m.strip_prefix(b"matNum") {
                                    number = std::str::from_utf8(n).ok().and_then(|n| n.parse().ok());
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if kind == b"TRF" && self.local[at as usize].is_none() {
            self.local[at as usize] = Some(IDENTITY);
        }
        if let Some(mesh) = mesh {
            let stem = mesh_stem(mesh);
            if stem.windows(10).any(|w| w == b"soccerball") {
                self.pending.push((at, Label::Ball, false));
            } else if stem.ends_with(b"body")
                && let (Some(team), Some(unum)) = (robot_side, number)
            {
                self.pending.push((at, Label::Robot { team, unum }, false));
            }
        }
        Ok(())
    }

    /// Applies a diff given as its top-level `(nd …)` nodes.
    pub fn apply_diff<'a>(&mut self, top: impl Iterator<Item = Sexp<'a>>) -> Result<(), String> {
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
                    self.local[at as usize] = Some(slt(item)?);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every labelled object with its pose in the world.
    pub fn objects(&self) -> impl Iterator<Item = (&Label, Affine)> + '_ {
        self.labelled.iter().map(|l| {
            let pose = l
                .chain
                .iter()
                .filter_map(|&n| self.local[n as usize].as_ref())
                .fold(IDENTITY, |acc, m| compose(&acc, m));
            (&l.label, pose)
        })
    }
}

/// The file name of a mesh path without directories and extension.
fn mesh_stem(path: &[u8]) -> &[u8] {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    match name.iter().rposition(|&b| b == b'.') {
        Some(dot) => &name[..dot],
        None => name,
    }
}

/// The transform of an `(SLT m0 … m15)` list.
fn slt(item: Sexp<'_>) -> Result<Affine, String> {
    let m: [f64; 16] = item
        .numbers()
        .ok_or_else(|| "an SLT that is not 16 numbers".to_owned())?;
    if m.iter().any(|v| !v.is_finite()) {
        return Err("an SLT with a value that is not finite".to_owned());
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
        let alpha = Label::Robot {
            team: TeamRef::Name("Alpha".into()),
            unum: 7,
        };
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
    fn simspark_meshes_label_ball_and_robots() {
        let full = format!(
            "((nd TRF {a}(nd StaticMesh (load models/soccerball.obj)))\
              (nd TRF {b}(nd TRF {c}(nd StaticMesh (load models/naobody.obj)(resetMaterials matNum9 matLeft naowhite))))\
              (nd TRF {d}(nd StaticMesh (load models/naohead.obj)(resetMaterials matRight))))",
            a = shift(0.0, 0.0, 0.04),
            b = shift(-14.0, 9.0, 0.0),
            c = shift(0.0, 0.0, 0.39),
            d = shift(1.0, 1.0, 1.0)
        );
        let mut p = Parser::new();
        let doc = p.parse(full.as_bytes()).unwrap();
        let top = doc.items().next().unwrap();
        let g = SceneGraph::build(top.items()).unwrap();
        assert_eq!(
            objects(&g),
            [
                (Label::Ball, [0.0, 0.0, 0.04]),
                (
                    Label::Robot {
                        team: TeamRef::Left,
                        unum: 9
                    },
                    [-14.0, 9.0, 0.39]
                )
            ]
        );
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
