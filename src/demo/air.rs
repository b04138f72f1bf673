//! The demo's drawings above the floor (issue 33): what its software
//! knows in three dimensions.
//!
//! | level | entity | drawing |
//! |---|---|---|
//! | 0 | `ball/flight` | a chipped ball's flight: its arc through the ball's centre in the air, and its shadow (the arc's track) on the floor |
//! | 1 | `ball/flight` | the flight's top, with its height |
//! | 1 | `field/goals` | each goal's frame (posts and top edges of its walls) |
//! | 2 | `vision/frustum` | the planned blue robot's camera: its field of view down to the floor |
//!
//! The flight is the one the simulation will fly (the software's
//! prediction, perfect): drawn from the kick until the ball lands, so the
//! ball travels along the arc in every frame it is in the air.

use super::sim::{Run, robot_index};
use super::vislog::{ORANGE, PLANNED_ROBOT};
use super::world::{
    BALL_RADIUS, FIELD_LENGTH, GOAL_DEPTH, GOAL_HEIGHT, GOAL_WALL, GOAL_WIDTH, ROBOT_HEIGHT, ROBOT_RADIUS,
    Snapshot, Team,
};
use crate::geom::Vec2;
use crate::geom::vec2::dir;
use crate::geom::vec3::Vec3;
use crate::log::{MarkerKind, Raised, Rgba, Shape, Writer};

const SHADOW: Rgba = Rgba::from_rgba8(0x30, 0x30, 0x30, 0xc0);
const FRAME: Rgba = Rgba::from_rgb(0xf0f0f0);
const FRUSTUM: Rgba = Rgba::from_rgba8(0x40, 0xe0, 0xff, 0xd0);

/// The planned robot's camera: height of its lens, its look down from
/// level (rad), half its horizontal and vertical fields of view (rad),
/// and how far it sees along the floor at most (mm).
const CAMERA_HEIGHT: f64 = ROBOT_HEIGHT - 10.0;
const CAMERA_TILT: f64 = 0.35;
const CAMERA_HALF_FOV: (f64, f64) = (0.5, 0.3);
const CAMERA_RANGE: f64 = 1800.0;

fn raised(r: Raised) -> Shape {
    Shape::Raised(Box::new(r))
}

/// Declares the entities of these drawings (after the demo's own).
pub fn declare_entities<W: std::io::Write>(w: &mut Writer<W>, planned: &str) {
    w.declare_entity("ball/flight", &["ball"]);
    w.declare_entity("field", &[]);
    w.declare_entity("field/goals", &["field"]);
    w.declare_entity("vision", &[]);
    w.declare_entity("vision/frustum", &["vision", planned]);
}

/// The goals' frames, for a persistent frame over the whole run.
pub fn draw_goals<W: std::io::Write>(w: &mut Writer<W>) {
    for side in [-1.0, 1.0] {
        // The mouth on the goal line, the back behind it.
        let x = side * FIELD_LENGTH / 2.0;
        let bx = side * (FIELD_LENGTH / 2.0 + GOAL_DEPTH + GOAL_WALL);
        let hw = GOAL_WIDTH / 2.0;
        let mouth = vec![
            [x, -hw, 0.0],
            [x, -hw, GOAL_HEIGHT],
            [x, hw, GOAL_HEIGHT],
            [x, hw, 0.0],
        ];
        w.shape(raised(Raised::Path {
            points: mouth.into(),
            closed: false,
        }))
        .color(FRAME)
        .thickness(2.0)
        .entity("field/goals")
        .level(1);
        // The walls' top edges, round the back.
        let top = vec![
            [x, hw, GOAL_HEIGHT],
            [bx, hw, GOAL_HEIGHT],
            [bx, -hw, GOAL_HEIGHT],
            [x, -hw, GOAL_HEIGHT],
        ];
        w.shape(raised(Raised::Path {
            points: top.into(),
            closed: false,
        }))
        .color(FRAME.with_alpha(0xa0))
        .thickness(1.5)
        .entity("field/goals")
        .level(1);
    }
}

/// The centre of the ball in space at a moment.
pub fn ball_centre(s: &Snapshot) -> Vec3 {
    [s.ball.pos.x, s.ball.pos.y, s.ball.height + BALL_RADIUS]
}

/// The drawings of the moment `k` (an index into the run's snapshots).
pub fn draw_moment<W: std::io::Write>(w: &mut Writer<W>, run: &Run, k: usize) {
    let Some(snap) = run.snapshots.get(k) else {
        return;
    };
    for chip in &run.chips {
        let end = chip.end.unwrap_or(run.end());
        if snap.t < chip.t || snap.t > end {
            continue;
        }
        let flight: Vec<&Snapshot> = run
            .snapshots
            .iter()
            .filter(|s| s.t >= chip.t - 1e-9 && s.t <= end + 1e-9)
            .collect();
        if flight.len() < 2 {
            continue;
        }
        let arc: Vec<Vec3> = flight.iter().map(|s| ball_centre(s)).collect();
        let shadow: Vec<Vec2> = flight.iter().map(|s| s.ball.pos).collect();
        w.polyline(shadow)
            .color(SHADOW)
            .thickness(2.0)
            .entity("ball/flight");
        w.shape(raised(Raised::Path {
            points: arc.clone().into(),
            closed: false,
        }))
        .color(ORANGE)
        .thickness(2.5)
        .entity("ball/flight");
        if let Some(top) = arc.iter().copied().max_by(|a, b| a[2].total_cmp(&b[2])) {
            w.shape(raised(Raised::Point {
                position: top,
                kind: MarkerKind::Dot,
                size: 7.0,
            }))
            .color(ORANGE)
            .entity("ball/flight")
            .level(1);
            let label = format!("{:.0} mm", top[2] - BALL_RADIUS);
            w.shape(raised(Raised::Text {
                anchor: [top[0] + 60.0, top[1], top[2] + 40.0],
                text: label.into(),
                size: 14.0,
            }))
            .color(ORANGE)
            .entity("ball/flight")
            .level(1);
        }
    }
    draw_frustum(w, snap);
}

/// The planned robot's field of view: rays from its camera to where the
/// corners of its picture meet the floor (or its range), and that patch
/// of floor.
fn draw_frustum<W: std::io::Write>(w: &mut Writer<W>, snap: &Snapshot) {
    let Some(r) = snap.robots.get(robot_index(Team::Blue, PLANNED_ROBOT)) else {
        return;
    };
    let ahead = dir(r.heading);
    let side = Vec2::new(-ahead.y, ahead.x);
    let eye2 = r.pos + ahead * (ROBOT_RADIUS - 15.0);
    let eye = [eye2.x, eye2.y, CAMERA_HEIGHT];
    let (hx, hy) = CAMERA_HALF_FOV;
    // A corner ray: down by the tilt ± the vertical half field of view,
    // across by the horizontal one.
    let corner = |sx: f64, sy: f64| -> Vec3 {
        let down = (CAMERA_TILT + sy * hy).max(0.02);
        let reach = (CAMERA_HEIGHT / down.tan()).min(CAMERA_RANGE);
        let across = reach * (sx * hx).tan();
        let p = eye2 + ahead * reach + side * across;
        let z = (CAMERA_HEIGHT - reach * down.tan()).max(0.0);
        [p.x, p.y, z]
    };
    let corners = [
        corner(-1.0, 1.0),
        corner(1.0, 1.0),
        corner(1.0, -1.0),
        corner(-1.0, -1.0),
    ];
    for c in corners {
        w.shape(raised(Raised::Path {
            points: vec![eye, c].into(),
            closed: false,
        }))
        .color(FRUSTUM)
        .thickness(1.5)
        .entity("vision/frustum")
        .level(2);
    }
    w.shape(raised(Raised::Path {
        points: corners.to_vec().into(),
        closed: true,
    }))
    .color(FRUSTUM)
    .fill(FRUSTUM.with_alpha(0x28))
    .thickness(1.5)
    .entity("vision/frustum")
    .level(2);
}
