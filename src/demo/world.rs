//! The demo's world: the field's dimensions, the robots and the ball, and
//! one moment of the run (a [`Snapshot`]). Shared by the simulation, the
//! renderer and the log writer.
//!
//! Units and axes are those of the field presets (`calib::presets`):
//! millimetres, origin at the centre mark, x along the field towards the
//! +x goal, y across it, z up.

use crate::geom::Vec2;

/// Length of the SSL Division B playing area (between line centres).
pub const FIELD_LENGTH: f64 = 9000.0;
/// Width of the SSL Division B playing area.
pub const FIELD_WIDTH: f64 = 6000.0;
/// Carpet beyond the field lines on every side (runoff area).
pub const BOUNDARY: f64 = 300.0;
/// Width of the painted lines.
pub const LINE_WIDTH: f64 = 10.0;
/// Inner width of a goal (between the posts).
pub const GOAL_WIDTH: f64 = 1000.0;
/// Inner depth of a goal.
pub const GOAL_DEPTH: f64 = 180.0;
/// Height of a goal's walls.
pub const GOAL_HEIGHT: f64 = 160.0;
/// Thickness of a goal's walls.
pub const GOAL_WALL: f64 = 20.0;
/// Radius of a robot's body.
pub const ROBOT_RADIUS: f64 = 90.0;
/// Height of a robot's body.
pub const ROBOT_HEIGHT: f64 = 150.0;
/// Radius of the ball.
pub const BALL_RADIUS: f64 = 21.5;
/// Robots per team.
pub const TEAM_SIZE: u8 = 6;

/// A team's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Team {
    Blue,
    Yellow,
}

impl Team {
    /// `blue` or `yellow`, as in entity names.
    pub fn name(self) -> &'static str {
        match self {
            Team::Blue => "blue",
            Team::Yellow => "yellow",
        }
    }
}

/// One robot at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotState {
    pub team: Team,
    /// Number within the team, `0..TEAM_SIZE`.
    pub id: u8,
    /// Centre on the floor (mm).
    pub pos: Vec2,
    /// Direction the robot faces (radians, counter-clockwise from +x).
    pub heading: f64,
    /// Velocity (mm/s).
    pub vel: Vec2,
}

/// The ball at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallState {
    /// Where it touches the floor, or lies under it when in the air (mm).
    pub pos: Vec2,
    /// Height of its lowest point above the floor (mm); 0 when rolling.
    pub height: f64,
    /// Velocity on the floor (mm/s).
    pub vel: Vec2,
}

/// Everything the camera sees at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Seconds since the start of the run.
    pub t: f64,
    /// Blue robots first (by id), then yellow (by id).
    pub robots: Vec<RobotState>,
    pub ball: BallState,
}

impl Snapshot {
    /// The state between `a` (weight 0) and `b` (weight 1) at `w`, linearly
    /// (headings along the shorter way round).
    pub fn lerp(a: &Snapshot, b: &Snapshot, w: f64) -> Snapshot {
        let mix = |p: Vec2, q: Vec2| p + (q - p) * w;
        let robots = a
            .robots
            .iter()
            .zip(&b.robots)
            .map(|(ra, rb)| {
                let turn = (rb.heading - ra.heading + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
                RobotState {
                    pos: mix(ra.pos, rb.pos),
                    heading: ra.heading + turn * w,
                    vel: mix(ra.vel, rb.vel),
                    ..*ra
                }
            })
            .collect();
        Snapshot {
            t: a.t + (b.t - a.t) * w,
            robots,
            ball: BallState {
                pos: mix(a.ball.pos, b.ball.pos),
                height: a.ball.height + (b.ball.height - a.ball.height) * w,
                vel: mix(a.ball.vel, b.ball.vel),
            },
        }
    }
}

/// The goal on the `+x` side when `side` is 1.0, on `-x` when −1.0: its
/// three walls as axis-aligned boxes `(min, max)` in (x, y, z).
pub fn goal_walls(side: f64) -> [([f64; 3], [f64; 3]); 3] {
    let x0 = side * FIELD_LENGTH / 2.0;
    let x1 = side * (FIELD_LENGTH / 2.0 + GOAL_DEPTH + GOAL_WALL);
    let (xa, xb) = (x0.min(x1), x0.max(x1));
    let hw = GOAL_WIDTH / 2.0;
    let back = if side > 0.0 { x1 - GOAL_WALL } else { x1 };
    [
        ([xa, hw, 0.0], [xb, hw + GOAL_WALL, GOAL_HEIGHT]),
        ([xa, -hw - GOAL_WALL, 0.0], [xb, -hw, GOAL_HEIGHT]),
        (
            [back, -hw - GOAL_WALL, 0.0],
            [back + GOAL_WALL, hw + GOAL_WALL, GOAL_HEIGHT],
        ),
    ]
}
