//! Field presets: named world points to click when calibrating, and the
//! field lines to draw as a check overlay, for common robot-soccer fields.
//!
//! World frame of every preset: millimetres (one unit everywhere, as the
//! logs use), origin at the centre mark, x along the field's length
//! (towards the "+x" goal), y across it, z up (right-handed, so seen from
//! above y points left when x points right). Point names say which side
//! they are on with `+x`/`-x` and `+y`/`-y`.
//!
//! Sources of the dimensions (distances between line centres for SSL, to
//! the outer edges of lines for football):
//!
//! - RoboCup Small Size League rules (2024–2025 edition, "Field Setup"):
//!   Division A playing area 12 × 9 m, defence area 3.6 × 1.8 m, goal
//!   1.8 m wide and 0.18 m deep; Division B 9 × 6 m, defence area
//!   2 × 1 m, goal 1 m wide; centre circle 1 m in diameter for both; lines
//!   0.01 m wide.
//! - IFAB Laws of the Game, Law 1 (a 105 × 68 m pitch, the size FIFA
//!   recommends): goal 7.32 m between the posts; goal area 5.5 m from each
//!   post and 5.5 m deep; penalty area 16.5 m from each post and 16.5 m
//!   deep; penalty mark 11 m from the goal line; centre circle and penalty
//!   arcs 9.15 m in radius; corner arcs 1 m; lines at most 0.12 m wide.
//!   Law 1 allows touchlines of 90–120 m and goal lines of 45–90 m, and
//!   real grounds use that freedom: `football:LxW` (metres, e.g.
//!   `football:107.9x64`) is the pitch of that length and width with the
//!   same markings.

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use crate::calib::Calibration;
use crate::geom::Vec2;

/// A named point of a field, in world units (mm).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedPoint {
    /// What the point is, e.g. `corner +x+y` or `goal post -x-y`.
    pub name: String,
    /// Where it is on the floor.
    pub pos: Vec2,
}

/// A painted field line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldLine {
    /// A straight line from `a` to `b`.
    Segment { a: Vec2, b: Vec2 },
    /// An arc from angle `start` to `end` (radians, counter-clockwise from
    /// the x axis, in that direction when `end > start`); `end − start =
    /// 2π` is a whole circle.
    Arc {
        center: Vec2,
        radius: f64,
        start: f64,
        end: f64,
    },
}

impl FieldLine {
    /// The world point at parameter `t` (0 at the start, 1 at the end)
    /// and the line's unit direction there.
    pub fn at(&self, t: f64) -> (Vec2, Vec2) {
        let dir = |a: f64| Vec2::new(a.cos(), a.sin());
        match *self {
            FieldLine::Segment { a, b } => {
                let d = b - a;
                let len = d.length().max(f64::MIN_POSITIVE);
                (a.lerp(b, t), d * (1.0 / len))
            }
            FieldLine::Arc {
                center,
                radius,
                start,
                end,
            } => {
                let a = start + (end - start) * t;
                (center + dir(a) * radius, dir(a + FRAC_PI_2))
            }
        }
    }

    /// The line's length on the floor, world units.
    pub fn length(&self) -> f64 {
        match *self {
            FieldLine::Segment { a, b } => (b - a).length(),
            FieldLine::Arc {
                radius, start, end, ..
            } => radius.abs() * (end - start).abs(),
        }
    }

    /// Maps the line into image polylines through `calib` (see
    /// [`Calibration::project_polyline`] and [`Calibration::project_arc`]).
    pub fn project(&self, calib: &Calibration, tol_px: f64, out: &mut Vec<Vec<Vec2>>) {
        match *self {
            FieldLine::Segment { a, b } => calib.project_polyline(&[a, b], false, tol_px, out),
            FieldLine::Arc {
                center,
                radius,
                start,
                end,
            } => calib.project_arc(center, radius, start, end, tol_px, out),
        }
    }
}

/// A field: its named points and its lines.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldPreset {
    /// Short identifier (`ssl-a`, `ssl-b`, `football`).
    pub id: &'static str,
    /// Human-readable name.
    pub title: &'static str,
    /// World unit of every coordinate.
    pub unit: &'static str,
    /// Length (along x) and width (along y) of the playing area.
    pub size: Vec2,
    /// Painted line width.
    pub line_width: f64,
    /// Points to click when calibrating.
    pub points: Vec<NamedPoint>,
    /// Lines to draw as a check overlay.
    pub lines: Vec<FieldLine>,
}

impl FieldPreset {
    /// The point called `name`, if any.
    pub fn point(&self, name: &str) -> Option<Vec2> {
        self.points.iter().find(|p| p.name == name).map(|p| p.pos)
    }
}

pub use super::unit::FieldSpec;

/// Identifiers of all presets, for [`preset`].
pub const PRESET_IDS: [&str; 3] = ["ssl-a", "ssl-b", "football"];

/// The preset with identifier `id` (see [`PRESET_IDS`]), or a football
/// pitch of another size, `football:LxW` in metres.
pub fn preset(id: &str) -> Option<FieldPreset> {
    match id {
        "ssl-a" => Some(ssl_division_a()),
        "ssl-b" => Some(ssl_division_b()),
        "football" => Some(football()),
        _ => {
            let (l, w) = id.strip_prefix("football:")?.split_once(['x', '×'])?;
            football_sized(l.trim().parse().ok()?, w.trim().parse().ok()?)
        }
    }
}

/// Least and most touchline (length) and goal line (width) of a pitch of
/// another size, metres: wide enough for small-sided and over-long
/// grounds, and the markings of a full pitch still fit inside.
pub const FOOTBALL_LENGTH_M: (f64, f64) = (50.0, 130.0);
/// See [`FOOTBALL_LENGTH_M`].
pub const FOOTBALL_WIDTH_M: (f64, f64) = (45.0, 100.0);

impl FieldPreset {
    /// How a calibration file or a session names this field: the id, with
    /// the size when a football pitch is not 105 × 68 m.
    pub fn spec(&self) -> String {
        if self.id == "football" && self.size != Vec2::new(105_000.0, 68_000.0) {
            let f = crate::log::text::fmt_f64;
            format!("football:{}x{}", f(self.size.x / 1000.0), f(self.size.y / 1000.0))
        } else {
            self.id.to_owned()
        }
    }
}

/// The presets a user may name, for messages.
pub fn choices() -> String {
    format!(
        "{} (or football:LxW, a pitch L × W metres)",
        PRESET_IDS.join(", ")
    )
}

/// Every preset.
pub fn all() -> Vec<FieldPreset> {
    PRESET_IDS.iter().filter_map(|id| preset(id)).collect()
}

/// SSL field dimensions (mm).
struct Ssl {
    length: f64,
    width: f64,
    goal_width: f64,
    defense_width: f64,
    defense_depth: f64,
    center_radius: f64,
}

/// RoboCup SSL Division A: 12 × 9 m.
pub fn ssl_division_a() -> FieldPreset {
    ssl(
        "ssl-a",
        "RoboCup SSL Division A (12 × 9 m)",
        &Ssl {
            length: 12000.0,
            width: 9000.0,
            goal_width: 1800.0,
            defense_width: 3600.0,
            defense_depth: 1800.0,
            center_radius: 500.0,
        },
    )
}

/// RoboCup SSL Division B: 9 × 6 m.
pub fn ssl_division_b() -> FieldPreset {
    ssl(
        "ssl-b",
        "RoboCup SSL Division B (9 × 6 m)",
        &Ssl {
            length: 9000.0,
            width: 6000.0,
            goal_width: 1000.0,
            defense_width: 2000.0,
            defense_depth: 1000.0,
            center_radius: 500.0,
        },
    )
}

fn side(s: f64) -> &'static str {
    if s > 0.0 { "+" } else { "-" }
}

fn ssl(id: &'static str, title: &'static str, d: &Ssl) -> FieldPreset {
    let (hl, hw) = (d.length / 2.0, d.width / 2.0);
    let mut pts = Builder::default();
    pts.add("centre", 0.0, 0.0);
    for sx in [1.0, -1.0] {
        for sy in [1.0, -1.0] {
            pts.add(&format!("corner {}x{}y", side(sx), side(sy)), sx * hl, sy * hw);
        }
    }
    for sy in [1.0, -1.0] {
        pts.add(&format!("halfway {}y", side(sy)), 0.0, sy * hw);
    }
    for (name, x, y) in [
        ("+x", 1.0, 0.0),
        ("-x", -1.0, 0.0),
        ("+y", 0.0, 1.0),
        ("-y", 0.0, -1.0),
    ] {
        pts.add(
            &format!("centre circle {name}"),
            x * d.center_radius,
            y * d.center_radius,
        );
    }
    for sx in [1.0, -1.0] {
        pts.add(&format!("goal centre {}x", side(sx)), sx * hl, 0.0);
        for sy in [1.0, -1.0] {
            let tag = format!("{}x{}y", side(sx), side(sy));
            pts.add(
                &format!("defence {tag} goal line"),
                sx * hl,
                sy * d.defense_width / 2.0,
            );
            pts.add(
                &format!("defence {tag} front"),
                sx * (hl - d.defense_depth),
                sy * d.defense_width / 2.0,
            );
            pts.add(&format!("goal post {tag}"), sx * hl, sy * d.goal_width / 2.0);
        }
    }
    let mut lines = boundary(hl, hw);
    lines.push(seg(hl, 0.0, -hl, 0.0)); // goal-to-goal line
    lines.push(circle(0.0, 0.0, d.center_radius));
    for sx in [1.0, -1.0] {
        lines.extend(rect_from_goal_line(sx, hl, d.defense_depth, d.defense_width));
    }
    FieldPreset {
        id,
        title,
        unit: "mm",
        size: Vec2::new(d.length, d.width),
        line_width: 10.0,
        points: pts.0,
        lines,
    }
}

/// A 105 × 68 m football pitch (IFAB Law 1).
pub fn football() -> FieldPreset {
    football_mm(52_500.0, 34_000.0)
}

/// A football pitch `length` × `width` metres with the standard markings;
/// `None` outside [`FOOTBALL_LENGTH_M`] × [`FOOTBALL_WIDTH_M`] or when the
/// width exceeds the length.
pub fn football_sized(length: f64, width: f64) -> Option<FieldPreset> {
    let ok = |v: f64, (lo, hi): (f64, f64)| v.is_finite() && (lo..=hi).contains(&v);
    (ok(length, FOOTBALL_LENGTH_M) && ok(width, FOOTBALL_WIDTH_M) && width < length)
        .then(|| football_mm(500.0 * length, 500.0 * width))
}

/// A football pitch of half-length `hl` and half-width `hw`, mm.
fn football_mm(hl: f64, hw: f64) -> FieldPreset {
    let goal = 7_320.0;
    let (goal_area, penalty_area) = (5_500.0, 16_500.0);
    let (penalty_mark, arc_radius, corner_radius) = (11_000.0, 9_150.0, 1_000.0);
    let mut pts = Builder::default();
    pts.add("centre", 0.0, 0.0);
    for sx in [1.0, -1.0] {
        for sy in [1.0, -1.0] {
            pts.add(&format!("corner {}x{}y", side(sx), side(sy)), sx * hl, sy * hw);
        }
    }
    for sy in [1.0, -1.0] {
        pts.add(&format!("halfway {}y", side(sy)), 0.0, sy * hw);
    }
    for (name, x, y) in [
        ("+x", 1.0, 0.0),
        ("-x", -1.0, 0.0),
        ("+y", 0.0, 1.0),
        ("-y", 0.0, -1.0),
    ] {
        pts.add(&format!("centre circle {name}"), x * arc_radius, y * arc_radius);
    }
    // Where each penalty arc meets the penalty area's front line.
    let arc_dx = penalty_area - penalty_mark;
    let arc_dy = (arc_radius * arc_radius - arc_dx * arc_dx).sqrt();
    for sx in [1.0, -1.0] {
        let x = side(sx);
        pts.add(&format!("penalty mark {x}x"), sx * (hl - penalty_mark), 0.0);
        for sy in [1.0, -1.0] {
            let tag = format!("{x}x{}y", side(sy));
            let pa_half = goal / 2.0 + penalty_area;
            let ga_half = goal / 2.0 + goal_area;
            pts.add(&format!("penalty area {tag} goal line"), sx * hl, sy * pa_half);
            pts.add(
                &format!("penalty area {tag} front"),
                sx * (hl - penalty_area),
                sy * pa_half,
            );
            pts.add(&format!("goal area {tag} goal line"), sx * hl, sy * ga_half);
            pts.add(
                &format!("goal area {tag} front"),
                sx * (hl - goal_area),
                sy * ga_half,
            );
            pts.add(&format!("goal post {tag}"), sx * hl, sy * goal / 2.0);
            pts.add(
                &format!("penalty arc {tag}"),
                sx * (hl - penalty_area),
                sy * arc_dy,
            );
        }
    }
    let mut lines = boundary(hl, hw);
    lines.push(circle(0.0, 0.0, arc_radius));
    let arc_half_angle = (arc_dx / arc_radius).acos();
    for sx in [1.0, -1.0] {
        lines.extend(rect_from_goal_line(
            sx,
            hl,
            penalty_area,
            goal + 2.0 * penalty_area,
        ));
        lines.extend(rect_from_goal_line(sx, hl, goal_area, goal + 2.0 * goal_area));
        // The arc bulges towards the centre: about angle π on the +x side, 0 on the −x side.
        let toward_centre = if sx > 0.0 { PI } else { 0.0 };
        lines.push(FieldLine::Arc {
            center: Vec2::new(sx * (hl - penalty_mark), 0.0),
            radius: arc_radius,
            start: toward_centre - arc_half_angle,
            end: toward_centre + arc_half_angle,
        });
    }
    for sx in [1.0, -1.0] {
        for sy in [1.0, -1.0] {
            // A quarter circle inside the field: pointing at −sx and −sy.
            let start = match (sx > 0.0, sy > 0.0) {
                (true, true) => PI,
                (true, false) => FRAC_PI_2,
                (false, true) => 3.0 * FRAC_PI_2,
                (false, false) => 0.0,
            };
            lines.push(FieldLine::Arc {
                center: Vec2::new(sx * hl, sy * hw),
                radius: corner_radius,
                start,
                end: start + FRAC_PI_2,
            });
        }
    }
    FieldPreset {
        id: "football",
        title: if (hl, hw) == (52_500.0, 34_000.0) {
            "Football pitch (105 × 68 m)"
        } else {
            "Football pitch (another size)"
        },
        unit: "mm",
        size: Vec2::new(2.0 * hl, 2.0 * hw),
        line_width: 120.0,
        points: pts.0,
        lines,
    }
}

#[derive(Default)]
struct Builder(Vec<NamedPoint>);

impl Builder {
    fn add(&mut self, name: &str, x: f64, y: f64) {
        self.0.push(NamedPoint {
            name: name.to_owned(),
            pos: Vec2::new(x, y),
        });
    }
}

fn seg(x0: f64, y0: f64, x1: f64, y1: f64) -> FieldLine {
    FieldLine::Segment {
        a: Vec2::new(x0, y0),
        b: Vec2::new(x1, y1),
    }
}

fn circle(x: f64, y: f64, r: f64) -> FieldLine {
    FieldLine::Arc {
        center: Vec2::new(x, y),
        radius: r,
        start: 0.0,
        end: TAU,
    }
}

/// The four boundary lines and the halfway line.
fn boundary(hl: f64, hw: f64) -> Vec<FieldLine> {
    vec![
        seg(-hl, -hw, hl, -hw),
        seg(hl, -hw, hl, hw),
        seg(hl, hw, -hl, hw),
        seg(-hl, hw, -hl, -hw),
        seg(0.0, -hw, 0.0, hw),
    ]
}

/// The three lines of a box standing on the goal line at `sx·hl`.
fn rect_from_goal_line(sx: f64, hl: f64, depth: f64, width: f64) -> [FieldLine; 3] {
    let (x0, x1, hw) = (sx * hl, sx * (hl - depth), width / 2.0);
    [seg(x0, hw, x1, hw), seg(x1, hw, x1, -hw), seg(x1, -hw, x0, -hw)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_unique_names_and_expected_points() {
        for p in all() {
            let mut names: Vec<&str> = p.points.iter().map(|q| q.name.as_str()).collect();
            names.sort_unstable();
            let n = names.len();
            names.dedup();
            assert_eq!(names.len(), n, "{}: duplicate names", p.id);
            assert_eq!(preset(p.id).as_ref(), Some(&p));
            // Every point lies on the field (goal posts on the goal line).
            for q in &p.points {
                assert!(
                    q.pos.x.abs() <= p.size.x / 2.0 && q.pos.y.abs() <= p.size.y / 2.0,
                    "{q:?}"
                );
            }
        }
        let a = ssl_division_a();
        assert_eq!(a.point("corner +x+y"), Some(Vec2::new(6000.0, 4500.0)));
        assert_eq!(a.point("defence -x-y front"), Some(Vec2::new(-4200.0, -1800.0)));
        assert_eq!(a.point("goal post +x-y"), Some(Vec2::new(6000.0, -900.0)));
        let b = ssl_division_b();
        assert_eq!(b.point("defence +x+y front"), Some(Vec2::new(3500.0, 1000.0)));
        assert_eq!(b.point("centre circle -y"), Some(Vec2::new(0.0, -500.0)));
        let f = football();
        assert_eq!(
            f.point("penalty area +x+y front"),
            Some(Vec2::new(36_000.0, 20_160.0))
        );
        assert_eq!(f.point("penalty mark -x"), Some(Vec2::new(-41_500.0, 0.0)));
        assert!(preset("nope").is_none());
    }

    #[test]
    fn football_pitches_of_other_sizes() {
        let p = preset("football:107.9x64").unwrap();
        assert_eq!(p.size, Vec2::new(107_900.0, 64_000.0));
        assert_eq!(p.spec(), "football:107.9x64");
        assert_eq!(preset(&p.spec()), Some(p.clone()));
        assert_eq!(p.point("corner +x+y"), Some(Vec2::new(53_950.0, 32_000.0)));
        // The markings keep their size.
        assert_eq!(
            p.point("penalty mark +x"),
            Some(Vec2::new(53_950.0 - 11_000.0, 0.0))
        );
        assert_eq!(football().spec(), "football");
        assert_eq!(preset("football:105x68"), Some(football()));
        for bad in [
            "football:",
            "football:100",
            "football:10x5",
            "football:90x100",
            "football:NaNx60",
            "football:1e9x60",
        ] {
            assert!(preset(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn penalty_arc_ends_on_the_penalty_area_line() {
        let f = football();
        let end = f.point("penalty arc +x+y").unwrap();
        let centre = f.point("penalty mark +x").unwrap();
        assert!(((end - centre).length() - 9150.0).abs() < 1e-9);
        // Every arc endpoint of the penalty arcs lies on a penalty area front line (|x| = 36 m).
        let arcs = f
            .lines
            .iter()
            .filter(|l| matches!(l, FieldLine::Arc { radius, .. } if *radius == 9150.0));
        let mut ends = 0;
        for l in arcs {
            if let FieldLine::Arc {
                center,
                radius,
                start,
                end,
            } = *l
            {
                if center == Vec2::ZERO {
                    continue;
                }
                for a in [start, end] {
                    let p = center + Vec2::new(a.cos(), a.sin()) * radius;
                    assert!((p.x.abs() - 36_000.0).abs() < 1e-6, "{p:?}");
                    // The arc is outside the penalty area: its middle is nearer the centre.
                    let mid = 0.5 * (start + end);
                    let m = center + Vec2::new(mid.cos(), mid.sin()) * radius;
                    assert!(m.x.abs() < 36_000.0);
                    ends += 1;
                }
            }
        }
        assert_eq!(ends, 4);
    }

    #[test]
    fn corner_arcs_stay_inside_the_field() {
        for l in football().lines {
            if let FieldLine::Arc {
                center,
                radius,
                start,
                end,
            } = l
                && radius == 1000.0
            {
                let mid = 0.5 * (start + end);
                let m = center + Vec2::new(mid.cos(), mid.sin()) * radius;
                assert!(m.x.abs() < 52_500.0 && m.y.abs() < 34_000.0, "{m:?}");
            }
        }
    }

    #[test]
    fn lines_project_through_a_calibration() {
        let c =
            Calibration::from_homography([[0.1, 0.0, 640.0], [0.0, -0.1, 360.0], [0.0, 0.0, 1.0]]).unwrap();
        let mut out = Vec::new();
        for l in ssl_division_a().lines {
            l.project(&c, 0.5, &mut out);
        }
        // 5 boundary/halfway + goal-to-goal + circle + 2 × 3 defence lines.
        assert_eq!(out.len(), 13);
        assert!(out.iter().flatten().all(|p| p.x >= 39.0 && p.x <= 1241.0));
    }
}
