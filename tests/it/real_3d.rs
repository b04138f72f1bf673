//! The 3D league's real files (`tests/data/real/sim3d/`, listed with what
//! was checked by hand in `tests/data/real/SOURCES.md`): monitor logs that
//! SimSpark servers wrote, read as a new user reads them. One test per
//! file checks facts read off the raw file (robots counted, their models,
//! teams and places, the ball). The mixed-type match carries the
//! regression of issue 51: heterogeneous NAOs (`naobody0.obj` …
//! `naobody4.obj`) drew no robot; each robot is now drawn where the
//! monitor log places it, which a reader of this test's own (below, not
//! underlay's) works out from the raw messages, full scene graphs and
//! diffs alike.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use underlay::formats::{load_log_with_format, open_source};
use underlay::sim3d::monitor::{self, MonitorLog};
use underlay::sim3d::render::to_match;
use underlay::video::source::OpenOptions;

use crate::util::check_golden;

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real/sim3d")
        .join(name)
}

/// The file read through the format table (no warning, nothing passed
/// over) and as a monitor log.
fn reads_cleanly(name: &str) -> MonitorLog {
    let (log, format) = load_log_with_format(&real(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(format.id, "rsmp", "{name}");
    assert!(log.warnings.is_empty(), "{name}: {:?}", log.warnings);
    assert_eq!(log.skipped.bytes, 0, "{name}: {:?}", log.skipped);
    let m = monitor::load(&real(name)).unwrap();
    assert_eq!(m.format, monitor::MonitorFormat::SimSpark);
    assert!(m.warnings.is_empty(), "{name}: {:?}", m.warnings);
    m
}

/// Each frame's robots: (side, number, model) → position.
fn robots(m: &MonitorLog, frame: usize) -> BTreeMap<(String, u32), ([f64; 3], &'static str)> {
    let f = &m.frames[frame];
    m.frame_robots(f)
        .iter()
        .map(|r| {
            let side = match m.teams[usize::from(r.team)].side {
                Some(monitor::Side::Left) => "left",
                Some(monitor::Side::Right) => "right",
                None => "?",
            };
            ((side.to_owned(), r.unum), (r.position(), r.model().id))
        })
        .collect()
}

// ---- The test's own reader of SimSpark monitor logs ----

/// An S-expression: an atom or a list.
#[derive(Debug)]
enum Sx {
    Atom(String),
    List(Vec<Sx>),
}

impl Sx {
    fn head(&self) -> Option<&str> {
        match self {
            Sx::List(v) => match v.first() {
                Some(Sx::Atom(a)) => Some(a),
                _ => None,
            },
            Sx::Atom(_) => None,
        }
    }

    fn items(&self) -> &[Sx] {
        match self {
            Sx::List(v) => v,
            Sx::Atom(_) => &[],
        }
    }
}

/// The top-level expressions of a line.
fn parse_line(line: &str) -> Vec<Sx> {
    let mut stack: Vec<Vec<Sx>> = vec![Vec::new()];
    let mut atom = String::new();
    let flush = |atom: &mut String, stack: &mut Vec<Vec<Sx>>| {
        if !atom.is_empty() {
            stack.last_mut().unwrap().push(Sx::Atom(std::mem::take(atom)));
        }
    };
    for c in line.chars() {
        match c {
            '(' => {
                flush(&mut atom, &mut stack);
                stack.push(Vec::new());
            }
            ')' => {
                flush(&mut atom, &mut stack);
                let done = stack.pop().unwrap();
                stack.last_mut().unwrap().push(Sx::List(done));
            }
            c if c.is_whitespace() => flush(&mut atom, &mut stack),
            c => atom.push(c),
        }
    }
    stack.swap_remove(0)
}

/// A node of the scene: its parent, local transform (4 × 4, column-major)
/// when it is a transform, what it loads and its materials.
struct Node {
    parent: Option<usize>,
    local: Option<[f64; 16]>,
    load: Option<String>,
    materials: Vec<String>,
}

fn slt(list: &Sx) -> [f64; 16] {
    let v: Vec<f64> = list.items()[1..]
        .iter()
        .map(|a| match a {
            Sx::Atom(s) => s.parse().unwrap(),
            Sx::List(_) => panic!("an SLT list in an SLT"),
        })
        .collect();
    v.try_into().unwrap()
}

/// Adds `nd` and its children in pre-order.
fn add(nodes: &mut Vec<Node>, nd: &Sx, parent: Option<usize>) {
    let at = nodes.len();
    let trf = matches!(nd.items().get(1), Some(Sx::Atom(k)) if k == "TRF");
    let mut node = Node {
        parent,
        local: trf.then_some([
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ]),
        load: None,
        materials: Vec::new(),
    };
    for item in nd.items() {
        match item.head() {
            Some("SLT") => node.local = Some(slt(item)),
            Some("load") => {
                if let Some(Sx::Atom(a)) = item.items().get(1) {
                    node.load = Some(a.clone());
                }
            }
            Some("resetMaterials") | Some("sMat") => {
                node.materials
                    .extend(item.items()[1..].iter().filter_map(|m| match m {
                        Sx::Atom(a) => Some(a.clone()),
                        Sx::List(_) => None,
                    }))
            }
            _ => {}
        }
    }
    nodes.push(node);
    for item in nd.items() {
        if item.head() == Some("nd") {
            add(nodes, item, Some(at));
        }
    }
}

/// Walks a diff in step with the nodes: each SLT replaces its node's.
fn diff(nodes: &mut [Node], nd: &Sx, next: &mut usize) {
    let at = *next;
    *next += 1;
    for item in nd.items() {
        match item.head() {
            Some("SLT") => nodes[at].local = Some(slt(item)),
            Some("nd") => diff(nodes, item, next),
            _ => {}
        }
    }
}

fn mul(a: &[f64; 16], b: &[f64; 16]) -> [f64; 16] {
    let mut o = [0.0; 16];
    for c in 0..4 {
        for r in 0..4 {
            o[c * 4 + r] = (0..4).map(|k| a[k * 4 + r] * b[c * 4 + k]).sum();
        }
    }
    o
}

/// Where the monitor log places each robot at each message: the body's
/// transform (the transforms above the torso mesh's own), by side and
/// number from the torso's materials.
fn reference_robots(name: &str) -> Vec<BTreeMap<(String, u32), [f64; 3]>> {
    let mut text = String::new();
    let file = std::fs::File::open(real(name)).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    let mut nodes: Vec<Node> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let top = parse_line(line);
        let scene = top.iter().position(|s| matches!(s.head(), Some("RSG" | "RDS")));
        let Some(k) = scene else {
            continue;
        };
        let graph = &top[k + 1];
        if top[k].head() == Some("RSG") {
            nodes.clear();
            for nd in graph.items() {
                add(&mut nodes, nd, None);
            }
        } else if !nodes.is_empty() {
            let mut next = 0;
            for nd in graph.items() {
                diff(&mut nodes, nd, &mut next);
            }
        }
        let mut frame = BTreeMap::new();
        for n in &nodes {
            let Some(load) = &n.load else { continue };
            if !load.starts_with("models/naobody") {
                continue;
            }
            let side = if n.materials.iter().any(|m| m == "matLeft") {
                "left"
            } else if n.materials.iter().any(|m| m == "matRight") {
                "right"
            } else {
                continue;
            };
            let number: u32 = n
                .materials
                .iter()
                .find_map(|m| m.strip_prefix("matNum")?.parse().ok())
                .unwrap();
            // The transforms above the mesh, innermost first; the first is
            // the mesh's own (it turns the mesh into the body).
            let mut chain = Vec::new();
            let mut at = n.parent;
            while let Some(p) = at {
                if let Some(l) = nodes[p].local {
                    chain.push(l);
                }
                at = nodes[p].parent;
            }
            let body = chain[1..].iter().rev().fold(
                [
                    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
                ],
                |acc, m| mul(&acc, m),
            );
            frame.insert((side.to_owned(), number), [body[12], body[13], body[14]]);
        }
        out.push(frame);
    }
    out
}

// ---- The files ----

const MIXED: &str = "roboviz-demo-mixed-types.log.gz";

/// Issue 51: 22 NAOs of types 0, 2 and 4 drew no robot. Every robot of
/// every frame is found, of its type, and placed within 5 cm of where the
/// test's own reader of the raw messages puts its body; so are the
/// bodies of the rendered match, each at its model's size; the picture is
/// a golden.
#[test]
fn mixed_nao_types_are_drawn_where_the_monitor_places_them() {
    let m = reads_cleanly(MIXED);
    assert_eq!(m.frames.len(), 27);
    let names: Vec<&str> = m.teams.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["magmaOffenburg", "magmaOpponent"]);
    assert_eq!((m.geometry.length, m.geometry.width), (30.0, 20.0));
    let reference = reference_robots(MIXED);
    assert_eq!(reference.len(), m.frames.len());
    let mut worst: f64 = 0.0;
    for (k, want) in reference.iter().enumerate() {
        let got = robots(&m, k);
        assert_eq!(got.len(), 22, "frame {k}");
        assert_eq!(want.len(), 22, "frame {k}");
        for (who, p) in want {
            let (q, _) = got[who];
            let d = (p[0] - q[0]).hypot(p[1] - q[1]).hypot(p[2] - q[2]);
            worst = worst.max(d);
        }
    }
    assert!(
        worst < 0.05,
        "a robot {worst} m from where the monitor log places it"
    );
    eprintln!("worst distance to the reference over 27 frames × 22 robots: {worst:e} m");
    // Their types, from the torso meshes (and matType materials).
    let types = robots(&m, 0);
    for side in ["left", "right"] {
        for (n, t) in [
            (1, "nao4"),
            (2, "nao0"),
            (3, "nao4"),
            (4, "nao2"),
            (5, "nao0"),
            (6, "nao2"),
            (7, "nao4"),
            (11, "nao4"),
        ] {
            assert_eq!(types[&(side.to_owned(), n)].1, t, "{side} {n}");
        }
    }
    let left2 = types[&("left".to_owned(), 2)].0;
    assert!(
        (left2[0] + 11.3525).abs() < 1e-3 && (left2[1] - 0.0138).abs() < 1e-3,
        "{left2:?}"
    );
    // Its forward direction (the body's y axis, (0.989, 0.149)) is its heading.
    let f = &m.frames[0];
    let r = m
        .frame_robots(f)
        .iter()
        .find(|r| r.unum == 2 && r.team == 0)
        .unwrap();
    assert!(
        (r.heading() - 0.149f64.atan2(0.989)).abs() < 0.01,
        "{}",
        r.heading()
    );
    assert_eq!(f.ball.map(|b| (b[0], b[1])), Some((0.0, 0.0)));
    // The rendered match: every body where the reference places it.
    let game = to_match(&m, MIXED.into());
    for (k, want) in reference.iter().enumerate() {
        let bodies = &game.snapshots[k].bodies;
        assert_eq!(bodies.len(), 22);
        for b in bodies {
            let side = if b.team == 0 { "left" } else { "right" };
            let p = want[&(side.to_owned(), b.number)];
            assert!((b.position.x - p[0]).hypot(b.position.y - p[1]) < 0.05);
            assert_eq!(b.radius, 0.143, "a NAO's shoulders");
        }
    }
    let mut src = open_source(
        &real(MIXED),
        &OpenOptions {
            size: Some((1280, 720)),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let f = src.next_frame().unwrap().unwrap();
    check_golden("match3d-mixed-types-1280.png", &f.image);
}

/// SimSpark-SPL: an empty first scene and diffs of nodes never sent whole
/// (its start, read without a warning and showing nothing), then one NAO
/// whose mesh hangs 5.5 cm above its body, and a ball that is an orange
/// sphere parked 500 m away.
#[test]
fn simspark_spl_one_nao_after_an_empty_start() {
    let m = reads_cleanly("simspark-spl-one-nao.log.gz");
    assert_eq!(m.frames.len(), 47);
    assert_eq!((m.geometry.length, m.geometry.width), (9.0, 6.0));
    for k in 0..16 {
        assert!(
            m.frame_robots(&m.frames[k]).is_empty() && m.frames[k].ball.is_none(),
            "{k}"
        );
    }
    let first = robots(&m, 16);
    assert_eq!(first.len(), 1);
    let (p, model) = first[&("left".to_owned(), 1)];
    assert_eq!(model, "nao");
    assert!(
        (p[0] + 3.7).abs() < 1e-6 && (p[1] - 2.2).abs() < 1e-6 && (p[2] - 0.310903).abs() < 1e-6,
        "{p:?}"
    );
    assert_eq!(m.teams[0].name, "DAInamite");
    assert_eq!(m.frames[16].ball, Some([0.0, -500.0, 499.999]));
    // The reader of this test agrees on every frame.
    let reference = reference_robots("simspark-spl-one-nao.log.gz");
    for (k, want) in reference.iter().enumerate() {
        let got = robots(&m, k);
        assert_eq!(got.len(), want.len(), "frame {k}");
        for (who, p) in want {
            let q = got[who].0;
            assert!((p[0] - q[0]).hypot(p[1] - q[1]) < 1e-6, "frame {k}");
        }
    }
}

/// The same course's joint-control run: the NAO joins and leaves between
/// full scenes.
#[test]
fn simspark_spl_a_robot_that_comes_and_goes() {
    let m = reads_cleanly("simspark-spl-joint-control.log.gz");
    assert_eq!(m.frames.len(), 27);
    let counts: Vec<usize> = m.frames.iter().map(|f| m.frame_robots(f).len()).collect();
    for (line, want) in [(1, 0), (6, 1), (7, 0), (23, 0), (25, 1), (26, 0)] {
        assert_eq!(counts[line - 1], want, "line {line}: {counts:?}");
    }
    let at = |line: usize| robots(&m, line - 1)[&("left".to_owned(), 1)].0;
    assert!((at(6)[0] + 3.7).abs() < 1e-6 && (at(6)[1] + 0.2).abs() < 1e-6);
    assert!((at(25)[0] + 3.7).abs() < 1e-6 && (at(25)[1] + 1.4).abs() < 1e-6);
}

/// rcssserver3d with no agent: the field, goals and ball, no robot.
#[test]
fn simspark_without_robots() {
    let m = reads_cleanly("simspark-no-robots.log.gz");
    assert_eq!(m.frames.len(), 90);
    assert_eq!((m.geometry.length, m.geometry.width), (30.0, 20.0));
    assert!(m.frames.iter().all(|f| m.frame_robots(f).is_empty()));
    assert!(m.frames[..16].iter().all(|f| f.ball.is_none()));
    let b = m.frames[16].ball.unwrap();
    assert!(
        b[0].abs() < 1e-9 && b[1].abs() < 1e-9 && (b[2] - 0.0403).abs() < 1e-4,
        "{b:?}"
    );
}

/// A robot of no known model (the torso mesh of type 4 renamed, as a new
/// server's robot would be): still drawn, at its first part, and said
/// once per robot naming the line it first appears on.
#[test]
fn robots_of_no_known_model_are_drawn_and_said() {
    let mut text = String::new();
    let file = std::fs::File::open(real(MIXED)).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    let renamed = text.replace("models/naobody4.obj", "models/naobody7.obj");
    let dir = crate::util::tmp();
    let path = dir.path().join("renamed.log");
    std::fs::write(&path, renamed).unwrap();
    let m = monitor::load(&path).unwrap();
    // 7 of each side were type 4: three of each side said at the line
    // they came on, the other four counted.
    let said: Vec<_> = m.warnings.iter().filter(|w| w.line == 1).collect();
    assert_eq!(said.len(), 6, "{:?}", m.warnings);
    assert!(said.iter().all(|w| w.message.contains("of no known model")));
    assert!(said[0].message.contains("robot left 1") && said[0].message.contains("models/naobody7.obj"));
    let counted: Vec<_> = m.warnings.iter().filter(|w| w.line == 0).collect();
    assert_eq!(counted.len(), 2, "{:?}", m.warnings);
    assert!(
        counted.iter().all(|w| w.message.contains("4 more")),
        "{counted:?}"
    );
    let f = &m.frames[0];
    assert_eq!(m.frame_robots(f).len(), 22);
    let unknown = m
        .frame_robots(f)
        .iter()
        .filter(|r| r.model().id == "unknown")
        .count();
    assert_eq!(unknown, 14);
    // Through the command line: the file, the line, the robot.
    let o = crate::util::run(["log", "info", path.to_str().unwrap()]);
    crate::util::assert_ok(&o);
    let info = crate::util::stdout(&o);
    assert!(
        info.contains("line 1: robot left 1 is of no known model"),
        "{info}"
    );
    assert!(info.contains("robot right 1 is of no known model"), "{info}");
}
