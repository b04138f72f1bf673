//! Collada (`.dae`) meshes as triangles, as RViz draws them.
//!
//! The XML is parsed by `roxmltree` (a small, widely used read-only DOM
//! with no dependency but `memchr`, a node limit and no DTDs, so no
//! entity expansion). The Collada crates were passed over: `dae-parser`
//! reserves each array's `count` before reading it (`count="1e12"` aborts
//! the process) and refuses any element it does not know, which real
//! exporters write; `collada` (Piston) reads `<library_geometries>`
//! without the visual scene's node transforms and `expect`s on malformed
//! data (a panic). What is read here is small: positions, faces, nodes.
//!
//! - Every `<geometry>`'s `<mesh>`: `<triangles>`, `<polylist>` and
//!   `<polygons>` (polygons as fans), `<trifans>`, `<tristrips>`; lines
//!   draw nothing. A face's corners are its `VERTEX` input's `<vertices>`
//!   `POSITION` source, read through the source's `<accessor>` (its
//!   `offset`, `stride`, named `<param>`s); each input's `offset` within a
//!   `<p>` whose stride is the largest offset plus one.
//! - Where: the nodes of the scene's `<visual_scene>` (the first one when
//!   `<scene>` names none) that `<instance_geometry>` a geometry, each
//!   node's `<matrix>` (row-major), `<translate>`, `<rotate>` (axis,
//!   degrees) and `<scale>` composed in order, nested nodes and
//!   `<instance_node>` under their parent. A geometry no node instances
//!   is drawn, untransformed, only when the file has no visual scene.
//! - Units: `<asset><unit meter>` scales the whole mesh into metres (as
//!   RViz does). `<up_axis>` is not applied: assimp turns every file to
//!   its own Y-up (a Z_UP file rotated −90° about x), and RViz undoes
//!   exactly that — RViz 2 sets `AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION`
//!   ("ASSIMP wants to change the orientation of the axis, but that's
//!   wrong for rviz"), RViz 1 skips the root node's transform where assimp
//!   put it — so a Y_UP mesh is drawn in its file's axes, as RViz draws it.
//!
//! Refused, saying what and where: a skinned mesh (`<instance_controller>`),
//! `<lookat>` and `<skew>` transforms, polygons with holes (`<ph>`), a
//! reference into another file, an index past its positions, counts a
//! file's contents contradict. Nothing is reserved from a count in the
//! file: arrays grow as their text is read, and reading stops one
//! triangle past the caller's limit.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use roxmltree::{Document, Node, NodeId, ParsingOptions};

/// XML nodes read (a mesh's numbers are one text node per array, so a
/// real file has thousands).
const MAX_NODES: u32 = 1_000_000;

/// Scene nodes visited: `<instance_node>` can repeat a subtree, so this
/// bounds the work whatever the triangles.
const MAX_VISITS: usize = 100_000;

/// Scene nodes nested (and `<instance_node>`s followed) at most.
const MAX_DEPTH: usize = 64;

/// A point of one space from another: row-major, `[x, y, z, 1]` a column.
type Matrix = [[f64; 4]; 4];

const IDENTITY: Matrix = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// A Collada file's triangles' corners in metres, three by three; at
/// most `limit + 1` triangles are read (the caller refuses more).
pub(super) fn corners(bytes: &[u8], limit: usize) -> Result<Vec<[f64; 3]>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not a Collada file: not UTF-8 text ({e})"))?;
    let options = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options).map_err(|e| format!("not a Collada file: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "COLLADA" {
        return Err(format!(
            "not a Collada file: its root element is <{}>",
            root.tag_name().name()
        ));
    }
    let unit = unit(root)?;
    let mut file = File {
        ids: root
            .descendants()
            .filter_map(|n| Some((n.attribute("id")?, n)))
            .collect(),
        meshes: HashMap::new(),
        limit,
    };
    let mut out = Vec::new();
    match file.visual_scene(root)? {
        Some(scene) => file.walk(scene, &mut out)?,
        None => {
            let geometries = children(root, "library_geometries").flat_map(|l| children(l, "geometry"));
            for g in geometries {
                if file.full(&out) {
                    break;
                }
                file.instance(g, &IDENTITY, &mut out)?;
            }
        }
    }
    if unit != 1.0 {
        for c in &mut out {
            *c = c.map(|v| v * unit);
        }
    }
    Ok(out)
}

/// A parsed file: its elements by id, each geometry's corners once read.
struct File<'a, 'input> {
    ids: HashMap<&'a str, Node<'a, 'input>>,
    meshes: HashMap<NodeId, Vec<[f64; 3]>>,
    limit: usize,
}

impl<'a, 'input> File<'a, 'input> {
    /// Whether more than the limit's triangles are read.
    fn full(&self, out: &[[f64; 3]]) -> bool {
        out.len() / 3 > self.limit
    }

    /// The element a `url` (`#id`) of `from` names, which must be a `<kind>`.
    fn target(&self, from: Node, kind: &str) -> Result<Node<'a, 'input>, String> {
        let url = from
            .attribute("url")
            .ok_or_else(|| format!("{} names nothing (no url)", describe(from)))?;
        let id = url.strip_prefix('#').ok_or_else(|| {
            format!(
                "{} names {url:?}, outside this file (only #id within it is read)",
                describe(from)
            )
        })?;
        let n = *self
            .ids
            .get(id)
            .ok_or_else(|| format!("{} names {url:?}, which the file does not have", describe(from)))?;
        if n.tag_name().name() != kind {
            return Err(format!(
                "{} names {}, not a <{kind}>",
                describe(from),
                describe(n)
            ));
        }
        Ok(n)
    }

    /// The visual scene drawn, if the file has one.
    fn visual_scene(&self, root: Node<'a, 'input>) -> Result<Option<Node<'a, 'input>>, String> {
        if let Some(i) = child(root, "scene").and_then(|s| child(s, "instance_visual_scene")) {
            return self.target(i, "visual_scene").map(Some);
        }
        Ok(children(root, "library_visual_scenes")
            .flat_map(|l| children(l, "visual_scene"))
            .next())
    }

    /// Every geometry the scene's nodes instance, where they place it.
    fn walk(&mut self, scene: Node<'a, 'input>, out: &mut Vec<[f64; 3]>) -> Result<(), String> {
        let mut stack: Vec<(Node<'a, 'input>, Matrix, usize)> =
            children(scene, "node").map(|n| (n, IDENTITY, 1)).collect();
        stack.reverse();
        let mut visits = 0;
        while let Some((node, scene_from_parent, depth)) = stack.pop() {
            visits += 1;
            if visits > MAX_VISITS {
                return Err(format!(
                    "more than {MAX_VISITS} scene nodes (instanced over and over?)"
                ));
            }
            if depth > MAX_DEPTH {
                return Err(format!(
                    "scene nodes nested deeper than {MAX_DEPTH} (at {}: a node that instances itself?)",
                    describe(node)
                ));
            }
            let scene_from_node = mul(&scene_from_parent, &local(node)?);
            let mut next = Vec::new();
            for c in node.children().filter(Node::is_element) {
                match c.tag_name().name() {
                    "instance_geometry" => {
                        let g = self.target(c, "geometry")?;
                        self.instance(g, &scene_from_node, out)?;
                        if self.full(out) {
                            return Ok(());
                        }
                    }
                    "node" => next.push(c),
                    "instance_node" => next.push(self.target(c, "node")?),
                    "instance_controller" => {
                        return Err(format!(
                            "{} (a skinned mesh) is not read; export it as a plain mesh",
                            describe(c)
                        ));
                    }
                    _ => {}
                }
            }
            stack.extend(next.into_iter().rev().map(|n| (n, scene_from_node, depth + 1)));
        }
        Ok(())
    }

    /// A geometry's corners placed by `scene_from_mesh`, appended to `out`
    /// up to one triangle past the limit.
    fn instance(
        &mut self,
        geometry: Node<'a, 'input>,
        scene_from_mesh: &Matrix,
        out: &mut Vec<[f64; 3]>,
    ) -> Result<(), String> {
        let corners = match self.meshes.entry(geometry.id()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(read_geometry(geometry, self.limit)?),
        };
        for t in corners.chunks_exact(3) {
            if out.len() / 3 > self.limit {
                break;
            }
            out.extend(t.iter().map(|c| apply(scene_from_mesh, *c)));
        }
        Ok(())
    }
}

/// The metres one unit of the file is.
fn unit(root: Node) -> Result<f64, String> {
    let Some(meter) = child(root, "asset")
        .and_then(|a| child(a, "unit"))
        .and_then(|u| u.attribute("meter"))
    else {
        return Ok(1.0);
    };
    match meter.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 => Ok(m),
        _ => Err(format!("<unit meter={meter:?}> is not a positive length")),
    }
}

/// A geometry's triangles in its own space, at most `limit + 1`.
fn read_geometry(geometry: Node, limit: usize) -> Result<Vec<[f64; 3]>, String> {
    let mut out = Vec::new();
    let Some(mesh) = child(geometry, "mesh") else {
        // `<convex_mesh>`, `<spline>`, `<brep>`: nothing drawn.
        return Ok(out);
    };
    let mut sources: HashMap<NodeId, Positions> = HashMap::new();
    for prim in mesh.children().filter(Node::is_element) {
        let kind = match prim.tag_name().name() {
            "triangles" => Kind::Triangles,
            "polylist" => Kind::Polylist,
            "polygons" => Kind::Polygons,
            "trifans" => Kind::Fans,
            "tristrips" => Kind::Strips,
            _ => continue,
        };
        let inputs = Inputs::of(geometry, prim)?;
        let positions = match sources.entry(inputs.vertices.id()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Positions::of(geometry, inputs.vertices)?),
        };
        let what = format!("{} {}", describe(geometry), describe(prim));
        let mut faces = Faces { out: &mut out, limit };
        match kind {
            Kind::Triangles => {
                let mut p = inputs.reader(child(prim, "p"), positions, &what);
                let mut n = 0usize;
                while let Some(a) = p.next()? {
                    let (Some(b), Some(c)) = (p.next()?, p.next()?) else {
                        return Err(format!("{what}: its <p> is not a whole number of triangles"));
                    };
                    if !faces.push(a, b, c) {
                        return Ok(out);
                    }
                    n += 1;
                }
                check_count(prim, n, &what)?;
            }
            Kind::Polylist => {
                let vcount = child(prim, "vcount").and_then(|v| v.text()).unwrap_or("");
                let mut p = inputs.reader(child(prim, "p"), positions, &what);
                let mut n = 0usize;
                for v in vcount.split_ascii_whitespace() {
                    let v: usize = v
                        .parse()
                        .map_err(|_| format!("{what}: <vcount> holds {v:?}, not a count"))?;
                    if !fan(&mut p, Some(v), &mut faces)? {
                        return Ok(out);
                    }
                    n += 1;
                }
                check_count(prim, n, &what)?;
                if p.next()?.is_some() {
                    return Err(format!("{what}: its <p> holds more than its <vcount> says"));
                }
            }
            Kind::Polygons | Kind::Fans | Kind::Strips => {
                if child(prim, "ph").is_some() {
                    return Err(format!("{what}: polygons with holes (<ph>) are not read"));
                }
                for one in children(prim, "p") {
                    let mut p = inputs.reader(Some(one), positions, &what);
                    let more = if kind == Kind::Strips {
                        strip(&mut p, &mut faces)?
                    } else {
                        fan(&mut p, None, &mut faces)?
                    };
                    if !more {
                        return Ok(out);
                    }
                }
            }
        }
    }
    Ok(out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Triangles,
    Polylist,
    Polygons,
    Fans,
    Strips,
}

/// A primitive's `count`, when it gives one, must be what it holds.
fn check_count(prim: Node, n: usize, what: &str) -> Result<(), String> {
    match prim.attribute("count") {
        Some(c) if c.trim().parse::<usize>().ok() != Some(n) => {
            Err(format!("{what}: count={c:?}, but it holds {n}"))
        }
        _ => Ok(()),
    }
}

/// Triangles as they are read, up to one past the limit.
struct Faces<'o> {
    out: &'o mut Vec<[f64; 3]>,
    limit: usize,
}

impl Faces<'_> {
    /// Adds a triangle; false once more than the limit are read.
    fn push(&mut self, a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> bool {
        self.out.extend([a, b, c]);
        self.out.len() / 3 <= self.limit
    }
}

/// A polygon of `corners` corners (or all its `<p>` holds) as a fan; false
/// once the limit is passed.
fn fan(p: &mut Reader, corners: Option<usize>, faces: &mut Faces) -> Result<bool, String> {
    let mut first = None;
    let mut last = None;
    let mut read = 0usize;
    while corners.is_none_or(|n| read < n) {
        let Some(v) = p.next()? else {
            if corners.is_some() {
                return Err(format!("{}: its <p> ends before its <vcount> does", p.what));
            }
            break;
        };
        read += 1;
        match (first, last) {
            (None, _) => first = Some(v),
            (Some(_), None) => last = Some(v),
            (Some(a), Some(b)) => {
                if !faces.push(a, b, v) {
                    return Ok(false);
                }
                last = Some(v);
            }
        }
    }
    Ok(true)
}

/// A strip: each corner after the second makes a triangle with the two
/// before it (every other one turned, to keep the winding).
fn strip(p: &mut Reader, faces: &mut Faces) -> Result<bool, String> {
    let (Some(mut a), Some(mut b)) = (p.next()?, p.next()?) else {
        return Ok(true);
    };
    let mut odd = false;
    while let Some(c) = p.next()? {
        let more = if odd {
            faces.push(b, a, c)
        } else {
            faces.push(a, b, c)
        };
        if !more {
            return Ok(false);
        }
        (a, b, odd) = (b, c, !odd);
    }
    Ok(true)
}

/// A primitive's inputs: the `<vertices>` its `VERTEX` input names, where
/// that index is in each vertex, and how many indices a vertex has.
struct Inputs<'a, 'input> {
    vertices: Node<'a, 'input>,
    at: usize,
    stride: usize,
}

impl<'a, 'input> Inputs<'a, 'input> {
    fn of(geometry: Node<'a, 'input>, prim: Node<'a, 'input>) -> Result<Self, String> {
        let what = || format!("{} {}", describe(geometry), describe(prim));
        let mut stride = 0usize;
        let mut vertex = None;
        for i in children(prim, "input") {
            let offset = i.attribute("offset").unwrap_or("0");
            let offset: usize = offset
                .trim()
                .parse()
                .map_err(|_| format!("{}: an <input offset={offset:?}>", what()))?;
            stride = stride.max(offset.saturating_add(1));
            if i.attribute("semantic") == Some("VERTEX") {
                vertex = Some((i, offset));
            }
        }
        let (input, at) = vertex.ok_or_else(|| format!("{}: no VERTEX input", what()))?;
        let url = input.attribute("source").unwrap_or("");
        let id = url.strip_prefix('#').unwrap_or(url);
        let vertices = prim
            .parent()
            .into_iter()
            .flat_map(|mesh| children(mesh, "vertices"))
            .find(|v| v.attribute("id") == Some(id))
            .ok_or_else(|| {
                format!(
                    "{}: its VERTEX input names {url:?}, not the mesh's <vertices>",
                    what()
                )
            })?;
        Ok(Self { vertices, at, stride })
    }

    /// The corners a `<p>` names, vertex by vertex.
    fn reader<'t>(&self, p: Option<Node<'t, '_>>, positions: &'t Positions, what: &'t str) -> Reader<'t> {
        Reader {
            indices: p.and_then(|p| p.text()).unwrap_or("").split_ascii_whitespace(),
            at: self.at,
            stride: self.stride,
            positions,
            what,
        }
    }
}

/// A `<p>` read one vertex (`stride` indices) at a time.
struct Reader<'t> {
    indices: std::str::SplitAsciiWhitespace<'t>,
    at: usize,
    stride: usize,
    positions: &'t Positions,
    what: &'t str,
}

impl Reader<'_> {
    /// The next vertex's position, or none at the end of the `<p>`.
    fn next(&mut self) -> Result<Option<[f64; 3]>, String> {
        let mut found = None;
        for k in 0..self.stride {
            let Some(s) = self.indices.next() else {
                return if k == 0 {
                    Ok(None)
                } else {
                    Err(format!("{}: its <p> ends inside a vertex", self.what))
                };
            };
            if k == self.at {
                let i: usize = s
                    .parse()
                    .map_err(|_| format!("{}: its <p> holds {s:?}, not an index", self.what))?;
                found = Some(self.positions.get(i).ok_or_else(|| {
                    format!(
                        "{}: index {i} is past its {} positions",
                        self.what, self.positions.count
                    )
                })?);
            }
        }
        Ok(found)
    }
}

/// The positions a `<vertices>` names: a float array read through its
/// source's accessor.
struct Positions {
    values: Vec<f64>,
    offset: usize,
    stride: usize,
    count: usize,
    columns: [usize; 3],
}

impl Positions {
    fn of(geometry: Node, vertices: Node) -> Result<Self, String> {
        let what = |n: Node| format!("{} {}", describe(geometry), describe(n));
        let input = children(vertices, "input")
            .find(|i| i.attribute("semantic") == Some("POSITION"))
            .ok_or_else(|| format!("{}: no POSITION input", what(vertices)))?;
        let url = input.attribute("source").unwrap_or("");
        let id = url.strip_prefix('#').unwrap_or(url);
        let source = vertices
            .parent()
            .into_iter()
            .flat_map(|mesh| children(mesh, "source"))
            .find(|s| s.attribute("id") == Some(id))
            .ok_or_else(|| {
                format!(
                    "{}: its POSITION names {url:?}, not one of the mesh's <source>s",
                    what(vertices)
                )
            })?;
        let array = child(source, "float_array")
            .ok_or_else(|| format!("{}: no <float_array> (positions must be numbers)", what(source)))?;
        let values = floats(array, &what(array))?;
        let Some(accessor) = child(source, "technique_common").and_then(|t| child(t, "accessor")) else {
            return Ok(Self {
                count: values.len() / 3,
                values,
                offset: 0,
                stride: 3,
                columns: [0, 1, 2],
            });
        };
        let number = |name: &str, default: Option<usize>| -> Result<usize, String> {
            match accessor.attribute(name) {
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| format!("{}: {name}={v:?} is not a count", what(accessor))),
                None => default.ok_or_else(|| format!("{}: no {name}", what(accessor))),
            }
        };
        let (offset, stride) = (number("offset", Some(0))?, number("stride", Some(1))?);
        let count = number("count", None)?;
        // Unnamed params are skipped (COLLADA 1.4, 5-5); none at all: x y z.
        let params: Vec<Node> = children(accessor, "param").collect();
        let named: Vec<usize> = (0..params.len())
            .filter(|&k| params[k].attribute("name").is_some_and(|n| !n.is_empty()))
            .collect();
        let columns = match (params.is_empty(), named.as_slice()) {
            (true, _) => [0, 1, 2],
            (false, [x, y, z, ..]) => [*x, *y, *z],
            _ => {
                return Err(format!(
                    "{}: fewer than three named params (x, y, z)",
                    what(accessor)
                ));
            }
        };
        if columns[2] >= stride {
            return Err(format!(
                "{}: stride {stride} is less than x, y, z",
                what(accessor)
            ));
        }
        let end = count
            .checked_mul(stride)
            .and_then(|n| n.checked_add(offset))
            .filter(|&end| end <= values.len());
        if end.is_none() {
            return Err(format!(
                "{}: {count} positions of stride {stride} from {offset} are past its {} numbers",
                what(accessor),
                values.len()
            ));
        }
        Ok(Self {
            values,
            offset,
            stride,
            count,
            columns,
        })
    }

    /// Position `i`, if there is one.
    fn get(&self, i: usize) -> Option<[f64; 3]> {
        if i >= self.count {
            return None;
        }
        let at = self.offset + i * self.stride;
        let v = |c: usize| self.values.get(at + c).copied();
        Some([v(self.columns[0])?, v(self.columns[1])?, v(self.columns[2])?])
    }
}

/// A float array's numbers (as many as its `count` says: fewer refused).
fn floats(array: Node, what: &str) -> Result<Vec<f64>, String> {
    let mut values = Vec::new();
    for s in array.text().unwrap_or("").split_ascii_whitespace() {
        values.push(
            s.parse::<f64>()
                .map_err(|_| format!("{what}: {s:?} is not a number"))?,
        );
    }
    if let Some(c) = array.attribute("count") {
        let n: usize = c
            .trim()
            .parse()
            .map_err(|_| format!("{what}: count={c:?} is not a count"))?;
        if n > values.len() {
            return Err(format!(
                "{what}: count={c:?}, but it holds {} numbers",
                values.len()
            ));
        }
        values.truncate(n);
    }
    Ok(values)
}

/// A node's own transform: its transform elements composed in order.
fn local(node: Node) -> Result<Matrix, String> {
    let mut m = IDENTITY;
    for t in node.children().filter(Node::is_element) {
        let name = t.tag_name().name();
        let want = match name {
            "matrix" => 16,
            "translate" | "scale" => 3,
            "rotate" => 4,
            "lookat" | "skew" => {
                return Err(format!(
                    "{} in {}: that transform is not read",
                    describe(t),
                    describe(node)
                ));
            }
            _ => continue,
        };
        let what = format!("{} in {}", describe(t), describe(node));
        let v = numbers(t, want, &what)?;
        let step = match name {
            "matrix" => [
                [v[0], v[1], v[2], v[3]],
                [v[4], v[5], v[6], v[7]],
                [v[8], v[9], v[10], v[11]],
                [v[12], v[13], v[14], v[15]],
            ],
            "translate" => [
                [1.0, 0.0, 0.0, v[0]],
                [0.0, 1.0, 0.0, v[1]],
                [0.0, 0.0, 1.0, v[2]],
                [0.0, 0.0, 0.0, 1.0],
            ],
            "scale" => [
                [v[0], 0.0, 0.0, 0.0],
                [0.0, v[1], 0.0, 0.0],
                [0.0, 0.0, v[2], 0.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
            _ => rotation([v[0], v[1], v[2]], v[3]).ok_or_else(|| format!("{what}: a turn about no axis"))?,
        };
        m = mul(&m, &step);
    }
    Ok(m)
}

/// A turn of `degrees` about `axis` (right-handed), none for a zero axis.
fn rotation(axis: [f64; 3], degrees: f64) -> Option<Matrix> {
    let norm = axis.iter().map(|a| a * a).sum::<f64>().sqrt();
    if degrees == 0.0 {
        return Some(IDENTITY);
    }
    if norm == 0.0 {
        return None;
    }
    let [x, y, z] = axis.map(|a| a / norm);
    let (s, c) = degrees.to_radians().sin_cos();
    let t = 1.0 - c;
    Some([
        [t * x * x + c, t * x * y - s * z, t * x * z + s * y, 0.0],
        [t * x * y + s * z, t * y * y + c, t * y * z - s * x, 0.0],
        [t * x * z - s * y, t * y * z + s * x, t * z * z + c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])
}

/// Exactly `want` numbers of an element.
fn numbers(n: Node, want: usize, what: &str) -> Result<Vec<f64>, String> {
    let mut v = Vec::with_capacity(want);
    for s in n.text().unwrap_or("").split_ascii_whitespace() {
        if v.len() == want {
            return Err(format!("{what}: more than {want} numbers"));
        }
        v.push(
            s.parse::<f64>()
                .map_err(|_| format!("{what}: {s:?} is not a number"))?,
        );
    }
    if v.len() < want {
        return Err(format!("{what}: {} numbers, not {want}", v.len()));
    }
    Ok(v)
}

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    let mut m = [[0.0; 4]; 4];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

fn apply(m: &Matrix, p: [f64; 3]) -> [f64; 3] {
    let row = |r: usize| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3];
    [row(0), row(1), row(2)]
}

/// An element's children named `name` (in any namespace).
fn children<'a, 'input>(n: Node<'a, 'input>, name: &'static str) -> impl Iterator<Item = Node<'a, 'input>> {
    n.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == name)
}

fn child<'a, 'input>(n: Node<'a, 'input>, name: &'static str) -> Option<Node<'a, 'input>> {
    children(n, name).next()
}

/// `<name id="…">` (the id only when it has one), to say where.
fn describe(n: Node) -> String {
    match n.attribute("id") {
        Some(id) => format!("<{} id={id:?}>", n.tag_name().name()),
        None => format!("<{}>", n.tag_name().name()),
    }
}

#[cfg(test)]
mod tests;
