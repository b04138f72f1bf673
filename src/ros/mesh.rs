//! The meshes RViz's `MESH_RESOURCE` markers name, as triangles: STL
//! (binary or ASCII, read by `stl_io`), Wavefront OBJ (`tobj`) and Collada
//! (`.dae`, most URDF robots' meshes: `collada`, on `roxmltree`, placed
//! by its scene's nodes and scaled into metres by its unit, as RViz does),
//! found where RViz finds them: `file:///absolute/path`, or
//! `package://PKG/path` inside a package of `AMENT_PREFIX_PATH`
//! (`PREFIX/share/PKG`) or of `ROS_PACKAGE_PATH` (`DIR/PKG`). Other
//! formats are said not to be drawn. Each mesh is read once per run (a
//! small cache keyed by its URI) and refused when it is larger than
//! [`MAX_BYTES`], has more than [`MAX_TRIANGLES`] triangles (each is drawn
//! as a filled polygon, every frame the marker shows) or a corner that is
//! not a finite point.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

mod collada;

/// The largest mesh file read.
pub const MAX_BYTES: u64 = 64 << 20;

/// The most triangles a mesh marker draws.
pub const MAX_TRIANGLES: usize = 20_000;

/// Meshes kept read (beyond it the cache starts again).
const CACHE: usize = 256;

/// A mesh: its triangles' corners, three by three, in its own units.
pub type Triangles = Arc<Vec<[f64; 3]>>;

type Cache = Mutex<HashMap<String, Result<Triangles, String>>>;

/// The triangles of the mesh at `uri`, or why there are none.
pub fn triangles(uri: &str) -> Result<Triangles, String> {
    static MESHES: OnceLock<Cache> = OnceLock::new();
    let cache = MESHES.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(r) = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(uri)
    {
        return r.clone();
    }
    let r = resolve(uri).and_then(|p| read(&p).map_err(|e| format!("mesh {uri} ({}): {e}", p.display())));
    let mut c = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if c.len() >= CACHE {
        c.clear();
    }
    c.insert(uri.to_owned(), r.clone());
    r
}

/// Where the mesh a URI names is.
fn resolve(uri: &str) -> Result<PathBuf, String> {
    if let Some(p) = uri.strip_prefix("file://") {
        return Ok(PathBuf::from(p));
    }
    let Some(rest) = uri.strip_prefix("package://") else {
        return if uri.contains("://") {
            Err(format!("mesh {uri}: only file:// and package:// meshes are read"))
        } else {
            Ok(PathBuf::from(uri))
        };
    };
    let (package, inside) = rest.split_once('/').unwrap_or((rest, ""));
    let var = |name: &str| std::env::var_os(name).map(|v| std::env::split_paths(&v).collect::<Vec<_>>());
    let candidates: Vec<PathBuf> = var("AMENT_PREFIX_PATH")
        .unwrap_or_default()
        .into_iter()
        .map(|prefix| prefix.join("share").join(package))
        .chain(
            var("ROS_PACKAGE_PATH")
                .unwrap_or_default()
                .into_iter()
                .map(|d| d.join(package)),
        )
        .collect();
    candidates
        .iter()
        .map(|dir| dir.join(inside))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "mesh {uri}: package {package} is not in AMENT_PREFIX_PATH or ROS_PACKAGE_PATH ({} places looked in)",
                candidates.len()
            )
        })
}

/// Reads a mesh file by its extension.
fn read(path: &Path) -> Result<Triangles, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if !matches!(ext.as_str(), "stl" | "obj" | "dae") {
        return Err(format!(
            "a .{ext} mesh is not drawn (STL, OBJ and Collada meshes are; convert it, e.g. with Blender or meshlab)"
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {} MiB", MAX_BYTES >> 20));
    }
    let corners = match ext.as_str() {
        "stl" => stl(&bytes)?,
        "obj" => obj(&bytes)?,
        _ => collada::corners(&bytes, MAX_TRIANGLES)?,
    };
    if corners.len() / 3 > MAX_TRIANGLES {
        // Reading stops one triangle past the bound: the count is not
        // known, only that it is over.
        return Err(format!(
            "more than {MAX_TRIANGLES} triangles: a mesh marker draws at most {MAX_TRIANGLES} (simplify the mesh)"
        ));
    }
    if !corners.iter().flatten().all(|v| v.is_finite()) {
        return Err("a corner that is not a finite point".into());
    }
    Ok(Arc::new(corners))
}

/// An STL file's triangles (read until one more than drawn is found).
fn stl(bytes: &[u8]) -> Result<Vec<[f64; 3]>, String> {
    let mut cursor = std::io::Cursor::new(bytes);
    let reader = stl_io::create_stl_reader(&mut cursor).map_err(|e| format!("not an STL file: {e}"))?;
    let mut corners = Vec::new();
    for t in reader.take(MAX_TRIANGLES + 1) {
        let t = t.map_err(|e| format!("a damaged STL file: {e}"))?;
        corners.extend(t.vertices.map(|v| v.0.map(f64::from)));
    }
    Ok(corners)
}

/// An OBJ file's faces, triangulated (its materials are not read: the
/// marker's colour is used, as RViz does without embedded materials).
fn obj(bytes: &[u8]) -> Result<Vec<[f64; 3]>, String> {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
    };
    let mut reader = std::io::BufReader::new(bytes);
    let (models, _) = tobj::load_obj_buf(&mut reader, &options, |_| Err(tobj::LoadError::OpenFileFailed))
        .map_err(|e| format!("not an OBJ file: {e}"))?;
    let mut corners = Vec::new();
    for m in &models {
        let p = &m.mesh.positions;
        for &i in &m.mesh.indices {
            let i = i as usize * 3;
            let v = p
                .get(i..i + 3)
                .ok_or("a face names a vertex the file does not have")?;
            corners.push([f64::from(v[0]), f64::from(v[1]), f64::from(v[2])]);
            if corners.len() / 3 > MAX_TRIANGLES {
                return Ok(corners);
            }
        }
    }
    Ok(corners)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBJ: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";

    /// One triangle in centimetres, without a scene.
    const COLLADA: &str = r##"<COLLADA><asset><unit meter="0.01"/></asset><library_geometries>
        <geometry id="g"><mesh><source id="s"><float_array id="a" count="9">0 0 0 1 0 0 0 2 0</float_array></source>
        <vertices id="v"><input semantic="POSITION" source="#s"/></vertices>
        <triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles></mesh></geometry>
        </library_geometries></COLLADA>"##;

    #[test]
    fn stl_obj_and_collada_meshes_are_read_as_triangles() {
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("quad.obj");
        std::fs::write(&obj, OBJ).unwrap();
        let t = triangles(&format!("file://{}", obj.display())).unwrap();
        // A quad: two triangles.
        assert_eq!(t.len(), 6);
        assert!(t.iter().all(|c| c[2] == 0.0 && (0.0..=1.0).contains(&c[0])));
        let stl = dir.path().join("tri.stl");
        std::fs::write(
            &stl,
            "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\nvertex 2 0 1\nvertex 0 2 1\nendloop\nendfacet\nendsolid t\n",
        )
        .unwrap();
        let t = triangles(&stl.display().to_string()).unwrap();
        assert_eq!(*t, vec![[0.0, 0.0, 1.0], [2.0, 0.0, 1.0], [0.0, 2.0, 1.0]]);
        // A binary STL claiming far more triangles than it holds: refused,
        // nothing reserved for them.
        let mut bin = vec![0u8; 80];
        bin.extend(u32::MAX.to_le_bytes());
        bin.extend([0u8; 50]);
        let bad = dir.path().join("bad.stl");
        std::fs::write(&bad, &bin).unwrap();
        let e = triangles(&bad.display().to_string()).unwrap_err();
        assert!(e.contains("bad.stl"), "{e}");
        // A Collada corner that is not a number: refused, the mesh named.
        let nan = dir.path().join("nan.dae");
        std::fs::write(&nan, COLLADA.replace("0 2 0<", "0 NaN 0<")).unwrap();
        let e = triangles(&format!("file://{}", nan.display())).unwrap_err();
        assert!(e.contains("nan.dae") && e.contains("not a finite point"), "{e}");
        // More triangles than a marker draws.
        let many = dir.path().join("many.dae");
        let p = "0 1 2 ".repeat(MAX_TRIANGLES + 1);
        std::fs::write(
            &many,
            COLLADA
                .replace("<p>0 1 2</p>", &format!("<p>{p}</p>"))
                .replace("count=\"1\"", ""),
        )
        .unwrap();
        let e = triangles(&many.display().to_string()).unwrap_err();
        assert!(
            e.contains("many.dae") && e.contains("more than 20000 triangles"),
            "{e}"
        );
    }

    #[test]
    fn packages_are_found_and_what_is_not_drawn_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let share = dir.path().join("share/robot_description/meshes");
        std::fs::create_dir_all(&share).unwrap();
        std::fs::write(share.join("base.obj"), OBJ).unwrap();
        // SAFETY: a test's own variable, set before it is read.
        unsafe { std::env::set_var("AMENT_PREFIX_PATH", dir.path()) };
        assert_eq!(
            triangles("package://robot_description/meshes/base.obj")
                .unwrap()
                .len(),
            6
        );
        let e = triangles("package://nowhere/base.obj").unwrap_err();
        assert!(e.contains("package nowhere"), "{e}");
        std::fs::write(share.join("base.dae"), COLLADA).unwrap();
        let t = triangles("package://robot_description/meshes/base.dae").unwrap();
        assert_eq!(*t, vec![[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [0.0, 0.02, 0.0]]);
        std::fs::write(share.join("base.ply"), "ply").unwrap();
        let e = triangles("package://robot_description/meshes/base.ply").unwrap_err();
        assert!(e.contains(".ply mesh is not drawn"), "{e}");
        assert!(
            triangles("http://example.com/a.stl")
                .unwrap_err()
                .contains("only file://")
        );
    }

    /// A mesh marker draws its triangles where the marker is, scaled and
    /// in its colour.
    #[test]
    fn a_mesh_marker_draws_its_triangles() {
        use crate::ros::value::Value;
        use crate::ros::value::build::{colour, pose, s, top, xyz};
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("quad.obj");
        std::fs::write(&obj, OBJ).unwrap();
        let marker = top(vec![
            ("type", Value::Int(crate::ros::markers::kind::MESH_RESOURCE)),
            ("pose", pose(10.0, 20.0, 0.0)),
            ("scale", xyz(2.0, 2.0, 2.0)),
            ("color", colour(0.0, 1.0, 0.0)),
            ("mesh_resource", s(&format!("file://{}", obj.display()))),
        ]);
        let spec = crate::ros::markers::spec(&marker).unwrap();
        let drawn = crate::ros::markers::shapes(&spec, &crate::ros::tf::Transform::IDENTITY).unwrap();
        assert_eq!(drawn.len(), 2);
        match &drawn[0].shape {
            crate::log::Shape::Polygon { vertices, .. } => {
                assert!(
                    vertices
                        .iter()
                        .all(|v| (10.0..=12.0).contains(&v.x) && (20.0..=22.0).contains(&v.y))
                );
            }
            other => panic!("{other:?}"),
        }
        let missing = top(vec![
            ("type", Value::Int(crate::ros::markers::kind::MESH_RESOURCE)),
            ("pose", pose(0.0, 0.0, 0.0)),
            ("scale", xyz(1.0, 1.0, 1.0)),
            ("mesh_resource", s("file:///nonexistent/robot.stl")),
        ]);
        let e = crate::ros::markers::spec(&missing).unwrap_err();
        assert!(e.contains("/nonexistent/robot.stl"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any bytes as STL, OBJ or Collada: triangles or an error, never a panic.
        #[test]
        fn any_bytes_read_or_are_refused(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            if let Ok(c) = stl(&bytes) {
                proptest::prop_assert!(c.len() / 3 <= MAX_TRIANGLES + 1);
            }
            let _ = obj(&bytes);
            if let Ok(c) = collada::corners(&bytes, MAX_TRIANGLES) {
                proptest::prop_assert!(c.len() / 3 <= MAX_TRIANGLES + 1);
            }
        }
    }
}
