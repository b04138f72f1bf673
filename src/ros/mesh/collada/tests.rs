//! The Collada reader's tests: hand-written files checked against their
//! exact corners, refusals, limits, a real robot's mesh, fuzzing.

use super::*;

/// A document: `asset` inside `<asset>`, then `body` (libraries, scene).
fn dae(asset: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>{asset}</asset>
  {body}
</COLLADA>"#
    )
}

/// A scene of one node (`transforms` then `inside` it).
fn scene(transforms: &str, inside: &str) -> String {
    format!(
        r##"<library_visual_scenes><visual_scene id="s"><node id="n">{transforms}{inside}</node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>"##
    )
}

/// A geometry `id` of `positions` and one primitive.
fn geometry(id: &str, positions: &str, primitive: &str) -> String {
    let n = positions.split_ascii_whitespace().count();
    format!(
        r##"<geometry id="{id}"><mesh>
  <source id="{id}-p"><float_array id="{id}-a" count="{n}">{positions}</float_array>
    <technique_common><accessor source="#{id}-a" count="{c}" stride="3">
      <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
    </accessor></technique_common></source>
  <vertices id="{id}-v"><input semantic="POSITION" source="#{id}-p"/></vertices>
  {primitive}
</mesh></geometry>"##,
        c = n / 3
    )
}

fn library(geometries: &[String]) -> String {
    format!("<library_geometries>{}</library_geometries>", geometries.concat())
}

const CUBE_POSITIONS: &str = "0 0 0  1 0 0  0 1 0  1 1 0  0 0 1  1 0 1  0 1 1  1 1 1";

/// A unit cube: 12 triangles, each corner after its face's normal
/// (NORMAL at offset 0, VERTEX at 1).
fn cube(id: &str) -> String {
    geometry(
        id,
        CUBE_POSITIONS,
        &format!(
            r##"<triangles count="12"><input semantic="NORMAL" source="#{id}-n" offset="0"/><input semantic="VERTEX" source="#{id}-v" offset="1"/>
  <p>0 0 0 2 0 1 0 1 0 2 0 3 1 4 1 5 1 6 1 5 1 7 1 6 2 0 2 1 2 4 2 1 2 5 2 4 3 2 3 6 3 3 3 3 3 6 3 7 4 0 4 4 4 2 4 2 4 4 4 6 5 1 5 3 5 5 5 3 5 7 5 5</p></triangles>"##
        ),
    )
}

/// The cube's faces, corner by corner (corner `i` is at the bits of `i`).
const CUBE_FACES: [usize; 36] = [
    0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4, 2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7,
    5,
];

fn cube_corner(i: usize) -> [f64; 3] {
    [(i & 1) as f64, (i >> 1 & 1) as f64, (i >> 2 & 1) as f64]
}

/// A quad `0 0 0, 1 0 0, 1 1 0, 0 1 0` and a triangle as a polylist.
fn quad(id: &str) -> String {
    geometry(
        id,
        "0 0 0  1 0 0  1 1 0  0 1 0  5 5 5",
        &format!(
            r##"<polylist count="2"><input semantic="VERTEX" source="#{id}-v" offset="0"/><vcount>4 3</vcount><p>0 1 2 3 4 1 0</p></polylist>"##
        ),
    )
}

const QUAD: [[f64; 3]; 9] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
    [5.0, 5.0, 5.0],
    [1.0, 0.0, 0.0],
    [0.0, 0.0, 0.0],
];

fn read(text: &str) -> Result<Vec<[f64; 3]>, String> {
    corners(text.as_bytes(), super::super::MAX_TRIANGLES)
}

fn close(got: &[[f64; 3]], want: &[[f64; 3]]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.iter().zip(w).all(|(a, b)| (a - b).abs() < 1e-12),
            "{got:?}\n != {want:?}"
        );
    }
}

#[test]
fn a_cube_is_twelve_triangles_at_its_corners() {
    let doc = dae(
        "",
        &(library(&[cube("c")]) + &scene("", r##"<instance_geometry url="#c"/>"##)),
    );
    let want: Vec<[f64; 3]> = CUBE_FACES.iter().map(|&i| cube_corner(i)).collect();
    assert_eq!(read(&doc).unwrap(), want);
}

#[test]
fn polygons_are_fans_and_strips_keep_their_winding() {
    let doc = dae(
        "",
        &(library(&[quad("q")]) + &scene("", r##"<instance_geometry url="#q"/>"##)),
    );
    assert_eq!(read(&doc).unwrap(), QUAD);
    // The same as <polygons> (one <p> a polygon), <trifans>, <tristrips>.
    let v = r##"<input semantic="VERTEX" source="#g-v" offset="0"/>"##;
    for (prim, want) in [
        (
            format!("<polygons count=\"2\">{v}<p>0 1 2 3</p><p>4 1 0</p></polygons>"),
            QUAD.to_vec(),
        ),
        (
            format!("<trifans count=\"1\">{v}<p>0 1 2 3</p></trifans>"),
            QUAD[..6].to_vec(),
        ),
        (
            format!("<tristrips count=\"1\">{v}<p>0 1 3 2</p></tristrips>"),
            vec![QUAD[0], QUAD[1], QUAD[5], QUAD[5], QUAD[1], QUAD[2]],
        ),
    ] {
        let g = geometry("g", "0 0 0  1 0 0  1 1 0  0 1 0  5 5 5", &prim);
        let doc = dae(
            "",
            &(library(&[g]) + &scene("", r##"<instance_geometry url="#g"/>"##)),
        );
        assert_eq!(read(&doc).unwrap(), want, "{prim}");
    }
}

#[test]
fn node_transforms_compose_in_order_and_nest() {
    // translate then scale: p → 2p + (1, 2, 3).
    let inside = r##"<instance_geometry url="#q"/>
          <node><rotate>0 0 1 90</rotate><instance_geometry url="#q"/></node>"##;
    let doc = dae(
        "",
        &(library(&[quad("q")]) + &scene("<translate>1 2 3</translate><scale>2 2 2</scale>", inside)),
    );
    let moved = |p: [f64; 3]| [2.0 * p[0] + 1.0, 2.0 * p[1] + 2.0, 2.0 * p[2] + 3.0];
    // The child turns a quarter about z first: (x, y, z) → (−y, x, z).
    let turned = |p: [f64; 3]| moved([-p[1], p[0], p[2]]);
    let want: Vec<[f64; 3]> = QUAD
        .iter()
        .map(|&p| moved(p))
        .chain(QUAD.iter().map(|&p| turned(p)))
        .collect();
    close(&read(&doc).unwrap(), &want);
    assert_eq!(want[1], [3.0, 2.0, 3.0]);
    assert_eq!(want[10], [1.0, 4.0, 3.0]);
    // <matrix> is row-major: the translation is its last column.
    let doc = dae(
        "",
        &(library(&[quad("q")])
            + &scene(
                "<matrix>1 0 0 5  0 1 0 6  0 0 1 7  0 0 0 1</matrix>",
                r##"<instance_geometry url="#q"/>"##,
            )),
    );
    assert_eq!(read(&doc).unwrap()[1], [6.0, 6.0, 7.0]);
}

#[test]
fn units_scale_into_metres_and_the_up_axis_is_left_as_rviz_leaves_it() {
    let body = library(&[quad("q")])
        + &scene(
            "<translate>100 0 0</translate>",
            r##"<instance_geometry url="#q"/>"##,
        );
    let cm = read(&dae(r#"<unit name="centimeter" meter="0.01"/>"#, &body)).unwrap();
    let want: Vec<[f64; 3]> = QUAD
        .iter()
        .map(|p| [(p[0] + 100.0) / 100.0, p[1] / 100.0, p[2] / 100.0])
        .collect();
    close(&cm, &want);
    assert_eq!(cm[1], [1.01, 0.0, 0.0]);
    // Y_UP (and Z_UP, the default): the file's own axes, as RViz draws them.
    let plain = read(&dae("", &body)).unwrap();
    for up in ["Y_UP", "Z_UP", "X_UP"] {
        assert_eq!(
            read(&dae(&format!("<up_axis>{up}</up_axis>"), &body)).unwrap(),
            plain
        );
    }
    assert_eq!(plain[2], [101.0, 1.0, 0.0]);
}

#[test]
fn geometries_are_drawn_where_nodes_instance_them() {
    let lib = library(&[quad("q"), cube("c")]);
    // Only the instanced one, as often as it is instanced.
    let inside = r##"<instance_node url="#twice"/>"##;
    let nodes = r##"<library_nodes><node id="twice">
            <node><translate>10 0 0</translate><instance_geometry url="#q"/></node>
            <node><translate>20 0 0</translate><instance_geometry url="#q"/></node></node></library_nodes>"##;
    let got = read(&dae("", &format!("{lib}{nodes}{}", scene("", inside)))).unwrap();
    let want: Vec<[f64; 3]> = [10.0, 20.0]
        .iter()
        .flat_map(|dx| QUAD.iter().map(move |p| [p[0] + dx, p[1], p[2]]))
        .collect();
    assert_eq!(got, want);
    // A scene that instances nothing draws nothing; no scene: all, as they are.
    let empty = r##"<library_visual_scenes><visual_scene id="s"/></library_visual_scenes>"##;
    assert!(read(&dae("", &format!("{lib}{empty}"))).unwrap().is_empty());
    let all = read(&dae("", &lib)).unwrap();
    assert_eq!(all.len(), 9 + 36);
    assert_eq!(all[..9], QUAD);
}

#[test]
fn nonsense_is_refused_saying_what() {
    let inst = |url: &str| scene("", &format!(r#"<instance_geometry url="{url}"/>"#));
    let one = |prim: &str| {
        dae(
            "",
            &(library(&[geometry("g", "0 0 0 1 0 0 0 1 0", prim)]) + &inst("#g")),
        )
    };
    let v = r##"<input semantic="VERTEX" source="#g-v" offset="0"/>"##;
    let cases = [
        ("<svg/>".to_owned(), "its root element is <svg>"),
        ("<COLLADA><oops></COLLADA>".to_owned(), "not a Collada file"),
        (
            one(&format!("<triangles>{v}<p>0 1 3</p></triangles>")),
            "index 3 is past its 3 positions",
        ),
        (
            one(&format!("<triangles>{v}<p>0 1 2 0</p></triangles>")),
            "not a whole number of triangles",
        ),
        (
            one(&format!("<triangles count=\"2\">{v}<p>0 1 2</p></triangles>")),
            "count=\"2\", but it holds 1",
        ),
        (
            one(&format!("<triangles>{v}<p>0 1 -2</p></triangles>")),
            "\"-2\", not an index",
        ),
        (
            one(&format!("<polylist>{v}<vcount>4</vcount><p>0 1 2</p></polylist>")),
            "ends before its <vcount>",
        ),
        (
            one(&format!(
                "<polylist>{v}<vcount>3</vcount><p>0 1 2 0</p></polylist>"
            )),
            "more than its <vcount>",
        ),
        (
            one(&format!(
                "<polygons>{v}<ph><p>0 1 2</p><h>0 1 2</h></ph></polygons>"
            )),
            "holes",
        ),
        (one("<triangles><p>0 1 2</p></triangles>"), "no VERTEX input"),
        (
            one(&format!(
                "<triangles><input semantic=\"NORMAL\" source=\"#n\" offset=\"1\"/>{v}<p>0 0 1</p></triangles>"
            )),
            "ends inside a vertex",
        ),
        (
            dae("", &(library(&[quad("q")]) + &inst("#nowhere"))),
            "names \"#nowhere\", which the file does not have",
        ),
        (
            dae("", &(library(&[quad("q")]) + &inst("other.dae#q"))),
            "outside this file",
        ),
        (
            dae("", &(library(&[quad("q")]) + &inst("#q-v"))),
            "not a <geometry>",
        ),
        (
            dae("<unit meter=\"-1\"/>", &library(&[quad("q")])),
            "not a positive length",
        ),
        (
            dae(
                "",
                &(library(&[quad("q")]) + &scene("<lookat>0 0 0 1 1 1 0 0 1</lookat>", "")),
            ),
            "that transform is not read",
        ),
        (
            dae(
                "",
                &(library(&[quad("q")]) + &scene("<rotate>0 0 0 90</rotate>", "")),
            ),
            "a turn about no axis",
        ),
        (
            dae(
                "",
                &(library(&[quad("q")]) + &scene("<translate>1 2</translate>", "")),
            ),
            "2 numbers, not 3",
        ),
        (
            dae("", &scene("", r##"<instance_controller url="#skin"/>"##)),
            "(a skinned mesh) is not read",
        ),
        (
            dae("", &scene("", r##"<instance_node url="#n"/>"##)),
            "nested deeper than 64",
        ),
    ];
    for (doc, want) in cases {
        let e = read(&doc).unwrap_err();
        assert!(e.contains(want), "{e}\nnot {want:?} for\n{doc}");
    }
}

/// Counts the file's contents contradict are refused without reserving
/// anything for them (reserving 10¹⁴ numbers would abort the test).
#[test]
fn counts_are_never_trusted() {
    let g = quad("q").replace("count=\"15\"", "count=\"99999999999999\"");
    let e = read(&dae("", &library(&[g]))).unwrap_err();
    assert!(
        e.contains("count=\"99999999999999\", but it holds 15 numbers"),
        "{e}"
    );
    let g = quad("q").replace("count=\"5\"", "count=\"99999999999999\"");
    let e = read(&dae("", &library(&[g]))).unwrap_err();
    assert!(
        e.contains("99999999999999 positions of stride 3 from 0 are past its 15 numbers"),
        "{e}"
    );
    let g = quad("q").replace(
        "count=\"5\" stride=\"3\"",
        "count=\"5\" stride=\"18446744073709551615\"",
    );
    let e = read(&dae("", &library(&[g]))).unwrap_err();
    assert!(e.contains("are past its 15 numbers"), "{e}");
    let g = quad("q").replace("offset=\"0\"", "offset=\"18446744073709551615\"");
    let e = read(&dae("", &library(&[g]))).unwrap_err();
    assert!(e.contains("ends inside a vertex"), "{e}");
    let g = quad("q").replace("<vcount>4 3", "<vcount>99999999999999 3");
    let e = read(&dae("", &library(&[g]))).unwrap_err();
    assert!(e.contains("ends before its <vcount>"), "{e}");
}

#[test]
fn reading_stops_one_triangle_past_the_limit() {
    let doc = dae(
        "",
        &(library(&[cube("c")])
            + &scene(
                "",
                r##"<instance_geometry url="#c"/><instance_geometry url="#c"/>"##,
            )),
    );
    for limit in [0, 5, 11, 12, 13, 30] {
        let c = corners(doc.as_bytes(), limit).unwrap();
        assert_eq!(c.len() / 3, (limit + 1).min(24), "limit {limit}");
    }
    // Nodes instancing each other twice, 40 deep: 2⁴⁰ visits, refused early.
    let nodes: String = (0..40)
        .map(|i| {
            format!(
                r##"<node id="n{i}"><instance_node url="#n{j}"/><instance_node url="#n{j}"/></node>"##,
                j = i + 1
            )
        })
        .collect();
    let doc = dae(
        "",
        &format!(
            r##"<library_nodes>{nodes}<node id="n40"/></library_nodes>{}"##,
            scene("", r##"<instance_node url="#n0"/>"##)
        ),
    );
    let e = read(&doc).unwrap_err();
    assert!(e.contains("more than 100000 scene nodes"), "{e}");
}

/// A real robot's mesh: the UR3's wrist 3 (Blender's export in
/// ros-industrial/universal_robot, two polylists of triangles); the
/// expected figures are from Python's ElementTree reading the same file.
#[test]
fn a_real_robot_mesh_reads() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/meshes/ur3-wrist3.dae");
    let c = corners(&std::fs::read(path).unwrap(), super::super::MAX_TRIANGLES).unwrap();
    assert_eq!(c.len(), 528 * 3);
    let axis = |a: usize| {
        let (lo, hi) = c
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p[a]), hi.max(p[a])));
        (lo, hi, c.iter().map(|p| p[a]).sum::<f64>())
    };
    let want = [
        (-0.03179484, 0.03167182, -0.427129222299996),
        (0.04064929, 0.08048254, 102.06653265000038),
        (-0.03382062, 0.03581279, 6.170186452000001),
    ];
    for (a, (lo, hi, sum)) in want.into_iter().enumerate() {
        let got = axis(a);
        assert_eq!((got.0, got.1), (lo, hi), "axis {a}");
        assert!((got.2 - sum).abs() < 1e-9, "axis {a}: {got:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Valid files with numbers edited (digits, signs, exponents, whole
    /// numbers swapped for nasty ones), now and then an edit that breaks
    /// the XML, cut or extended, and random bytes: read or refused, never a
    /// panic, never more than the limit and one triangle.
    #[test]
    fn mutated_files_never_panic(
        edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                           proptest::sample::select(b" 0123456789.-eE".to_vec())), 0..6),
        numbers in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                             proptest::sample::select(vec!["-1", "0", "99999999999999", "18446744073709551616", "nan", "1e999", "4 3 2 1 0", "", "#c"])), 0..3),
        structural in proptest::option::of((proptest::prelude::any::<proptest::sample::Index>(),
                                            proptest::sample::select(b"<>/\"#=x".to_vec()))),
        cut in proptest::option::weighted(0.2, proptest::prelude::any::<proptest::sample::Index>()),
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        limit in 0usize..40,
    ) {
        let doc = dae(
            r#"<unit meter="0.5"/><up_axis>Y_UP</up_axis>"#,
            &(library(&[cube("c"), quad("q")])
                + &scene("<translate>1 2 3</translate><rotate>0 1 0 30</rotate>",
                         r##"<instance_geometry url="#c"/><node><scale>1 2 1</scale><instance_geometry url="#q"/></node>"##)),
        );
        let mut b = doc.into_bytes();
        let digits = |b: &[u8]| -> Vec<usize> { (0..b.len()).filter(|&i| b[i].is_ascii_digit()).collect() };
        for (i, v) in edits {
            let at = digits(&b);
            let i = at[i.index(at.len())];
            b[i] = v;
        }
        for (i, n) in numbers {
            let at = digits(&b);
            if !at.is_empty() {
                let i = at[i.index(at.len())];
                b.splice(i..i + 1, n.bytes());
            }
        }
        if let Some((i, v)) = structural {
            let i = i.index(b.len());
            b[i] = v;
        }
        if let Some(cut) = cut {
            b.truncate(cut.index(b.len() + 1));
        }
        if let Ok(c) = corners(&b, limit) {
            proptest::prop_assert!(c.len() % 3 == 0 && c.len() / 3 <= limit + 1);
        }
        b.extend_from_slice(&noise);
        let _ = corners(&b, limit);
        let _ = corners(&noise, limit);
    }
}
