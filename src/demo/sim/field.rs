//! Where things may be on the field: the bounds of robots and ball, the
//! defence areas, the goal blue attacks, and which robots are attackers or
//! goalies.
//!
//! The field's and the teams' numbers are the game's constants (`mod.rs`),
//! whose steps ask these questions: the two files name each other.

use super::{ATTACKERS, DEFENSE_DEPTH, DEFENSE_WIDTH};
use crate::demo::world::{BALL_RADIUS, BOUNDARY, FIELD_LENGTH, FIELD_WIDTH, ROBOT_RADIUS, TEAM_SIZE};
use crate::geom::Vec2;

/// Largest |x| and |y| of a robot's centre (inside the boundary).
pub fn robot_bounds() -> Vec2 {
    Vec2::new(
        FIELD_LENGTH / 2.0 + BOUNDARY - ROBOT_RADIUS,
        FIELD_WIDTH / 2.0 + BOUNDARY - ROBOT_RADIUS,
    )
}

/// Largest |x| and |y| of the ball's centre.
pub(super) fn ball_bounds() -> Vec2 {
    Vec2::new(
        FIELD_LENGTH / 2.0 + BOUNDARY - BALL_RADIUS,
        FIELD_WIDTH / 2.0 + BOUNDARY - BALL_RADIUS,
    )
}

/// `p` moved inside [`ball_bounds`].
pub(super) fn inside_ball_bounds(p: Vec2) -> Vec2 {
    let bb = ball_bounds();
    Vec2::new(p.x.clamp(-bb.x, bb.x), p.y.clamp(-bb.y, bb.y))
}

/// Whether `p` lies in a defence area grown by `margin`.
pub(super) fn in_defense_area(p: Vec2, margin: f64) -> bool {
    p.x.abs() > FIELD_LENGTH / 2.0 - DEFENSE_DEPTH - margin
        && p.x.abs() < FIELD_LENGTH / 2.0 + margin
        && p.y.abs() < DEFENSE_WIDTH / 2.0 + margin
}

/// The centre of the goal that yellow defends (blue attacks it).
pub(super) fn yellow_goal() -> Vec2 {
    Vec2::new(FIELD_LENGTH / 2.0, 0.0)
}

pub(super) fn is_attacker(i: usize) -> bool {
    i < usize::from(TEAM_SIZE) && ATTACKERS.contains(&(i as u8))
}

pub(super) fn is_goalie(i: usize) -> bool {
    i == 0 || i == usize::from(TEAM_SIZE)
}
