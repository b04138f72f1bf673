//! The demo's game: twelve robots and a ball moved with plausible dynamics,
//! scripted by a seed.
//!
//! Blue attacks towards +x. Its four attackers (`ATTACKERS`) play the
//! thesis's selectively reactive coordination (section 4.8): the robot
//! with the ball is the *primary attacker*, the other three are assigned to
//! offence zones (rectangles ahead of the ball), one of them is chosen as
//! the receiver of the next pass and moves to the best point of its zone,
//! and every 2–3 s the ball is passed; while it rolls the receiver moves to
//! intercept it. Yellow defends: a goalie, one robot between the ball and
//! the goal, four markers on the goal side of the blue attackers. At about
//! 60 % of the run (runs of 8 s or more) the primary attacker shoots wide
//! of the goal; the ball crosses the goal line and the game stops: robots
//! slow down and keep 500 mm from the ball, except one yellow robot that
//! stays too close for a while. After 2 s a yellow robot places the ball
//! back in the field and, half a second after, play resumes with its free kick.
//!
//! The simulation steps at 60 Hz ([`DT`]) with bounded acceleration, speed
//! and turn rate for the robots, rolling friction for the ball, elastic-ish
//! contacts between the ball and robots or walls, and a separation rule
//! that keeps robots apart. Everything the robots' software decided is kept
//! per step in [`Plan`], and the events an autoref would see (touches, the
//! ball going out, robots too close during the stop) in [`Run`], for the
//! visualization log ([`super::vislog`]).
//!
//! The same seed and duration always give the same run.
//!
//! The game is one state (`Game`, here) stepped by three jobs, one file
//! each: `tactics` (what the software decides), `physics` (how robots and
//! ball move and touch) and `referee` (stops, placement, the autoref's
//! distance check); `field` says where things may be.
//!
//! Its constants size the field that `field.rs` answers questions about,
//! and the steps ask them: the two files name each other.

mod field;
mod physics;
mod referee;
mod tactics;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::world::{
    BALL_RADIUS, BOUNDARY, BallState, FIELD_LENGTH, FIELD_WIDTH, GOAL_DEPTH, GOAL_WALL, GOAL_WIDTH,
    ROBOT_RADIUS, RobotState, Snapshot, TEAM_SIZE, Team,
};
use crate::geom::Vec2;
use crate::geom::vec2::{angle_of, dir, wrap_angle};

pub use field::robot_bounds;

/// Time step of the simulation and of the robots' software (s).
pub const DT: f64 = 1.0 / 60.0;
/// Top speed of a robot (mm/s).
pub const MAX_SPEED: f64 = 2000.0;
/// Largest acceleration of a robot (mm/s²).
pub const MAX_ACCEL: f64 = 3000.0;
/// Largest turn rate of a robot (rad/s).
pub const MAX_TURN_RATE: f64 = 6.0;
/// Largest angular acceleration of a robot (rad/s²).
pub const MAX_TURN_ACCEL: f64 = 40.0;
/// Deceleration of a rolling ball (mm/s²).
pub const BALL_DECEL: f64 = 500.0;
/// Gravity (mm/s²).
pub const GRAVITY: f64 = 9810.0;
/// Upward speed kept by a bounce of the chipped ball.
pub const BALL_RESTITUTION: f64 = 0.45;
/// Below this upward speed after a bounce (mm/s) the ball rolls.
const BALL_SETTLE: f64 = 400.0;
/// During a stop, robots keep this far from the ball (mm, from the robot's edge).
pub const STOP_DISTANCE: f64 = 500.0;
/// Speed limit during a stop (mm/s).
pub const STOP_SPEED: f64 = 1500.0;
/// Centre distance robots try to keep between each other (mm).
pub const MIN_GAP: f64 = 2.0 * ROBOT_RADIUS + 30.0;
/// Number of robots on the field.
pub const ROBOTS: usize = 2 * TEAM_SIZE as usize;
/// The blue robots that attack (the thesis's *ZonePlayers*).
pub const ATTACKERS: [u8; 4] = [2, 3, 4, 5];
/// Depth of a defence area (mm, from the goal line).
pub const DEFENSE_DEPTH: f64 = 1000.0;
/// Width of a defence area (mm).
pub const DEFENSE_WIDTH: f64 = 2000.0;
/// Seconds after a stop starts before the autoref checks distances.
pub const STOP_GRACE: f64 = 1.0;
/// Length of a stop before the ball placement starts (s).
const STOP_LENGTH: f64 = 2.0;
/// The longest run simulated (s); longer requests are cut.
const MAX_DURATION: f64 = 3600.0;
/// The scripted offender stays close to the ball until this long into a stop (s).
const OFFENCE_END: f64 = 3.2;
/// Runs at least this long contain the scripted shot that goes out.
const SHOT_MIN_DURATION: f64 = 8.0;
/// Restitution of ball–robot contacts.
const ROBOT_BOUNCE: f64 = 0.3;
/// Restitution of ball–wall contacts.
const WALL_BOUNCE: f64 = 0.1;
/// What is left of the speed along a wall after hitting it.
const WALL_FRICTION: f64 = 0.2;
/// Distance from a robot's centre to the centre of the ball it holds.
const HOLD_DISTANCE: f64 = ROBOT_RADIUS + BALL_RADIUS - 4.0;
/// Half-angle of a robot's dribbler: a ball touching it within this angle
/// of the heading can be caught.
const CATCH_ANGLE: f64 = 0.75;

/// The state of the game (the referee's command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Normal play.
    Running,
    /// Stopped: robots slow down and keep [`STOP_DISTANCE`] from the ball.
    Stop,
    /// Stopped while a robot places the ball.
    BallPlacement,
}

/// An offence zone (thesis 4.8.3): an axis-aligned rectangle assigned to a
/// support attacker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    pub min: Vec2,
    pub max: Vec2,
    /// The blue robot assigned to it.
    pub robot: u8,
    /// Where the robot waits (the zone's centre).
    pub default: Vec2,
    /// The point of the zone best for receiving a pass now (thesis 4.8.4).
    pub best: Vec2,
}

/// A pass being prepared or in flight (thesis 4.8.4–4.8.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassPlan {
    /// The blue robot that passes.
    pub passer: u8,
    /// The blue robot that receives.
    pub receiver: u8,
    /// Where the receiver's centre will be when the ball arrives.
    pub receiver_target: Vec2,
    /// Where the ball will meet the receiver.
    pub ball_target: Vec2,
    /// Whether the ball has been kicked.
    pub kicked: bool,
}

/// Blue's offence at one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Offence {
    /// The zones and the support attackers assigned to them.
    pub zones: [Zone; 3],
    /// The primary attacker: the robot with the ball, going for it, or
    /// receiving it.
    pub primary: u8,
    pub pass: Option<PassPlan>,
    /// The aim of a shot being prepared.
    pub shot: Option<Vec2>,
}

/// What the robots' software decided at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub phase: Phase,
    /// Where each robot is driving to (order of [`Snapshot::robots`]).
    pub targets: [Vec2; ROBOTS],
    /// Blue's offence while the game runs and blue plays the ball.
    pub offence: Option<Offence>,
    /// During a ball placement: the yellow robot placing and the point.
    pub placement: Option<(u8, Vec2)>,
    /// The robot holding the ball on its dribbler, if any.
    pub ball_holder: Option<(Team, u8)>,
}

/// A robot touched the ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touch {
    pub t: f64,
    pub team: Team,
    pub id: u8,
    /// Where the ball was.
    pub pos: Vec2,
}

/// A kicked pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pass {
    /// Time of the kick.
    pub t: f64,
    pub passer: u8,
    pub receiver: u8,
    /// Where the ball was kicked from.
    pub from: Vec2,
    /// Where it was aimed.
    pub target: Vec2,
    /// Kick speed (mm/s).
    pub speed: f64,
    /// When the receiver caught it, if it did.
    pub received: Option<f64>,
}

/// A chipped kick: the ball flies from `t`, bounces, and rolls from `end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chip {
    pub t: f64,
    /// When it stopped bouncing (`None`: still in the air when the run
    /// ended).
    pub end: Option<f64>,
    /// Where it was kicked from.
    pub from: Vec2,
}

/// The ball left the field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallOut {
    /// When it was completely over the line.
    pub t: f64,
    /// Where its centre crossed the line.
    pub exit: Vec2,
    /// The crossed field line (its two ends).
    pub line: (Vec2, Vec2),
    /// The last touch before.
    pub last_touch: Option<Touch>,
    /// When play resumed, if it did before the end.
    pub restart: Option<f64>,
}

/// A robot closer than [`STOP_DISTANCE`] to the ball during a stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TooClose {
    pub start: f64,
    pub end: f64,
    pub team: Team,
    pub id: u8,
    /// The smallest distance from the robot's edge to the ball's centre (mm).
    pub closest: f64,
    /// When it was smallest, and where robot and ball were.
    pub at: f64,
    pub robot: Vec2,
    pub ball: Vec2,
}

/// A simulated run.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub seed: u64,
    /// Time between snapshots (s).
    pub dt: f64,
    /// Snapshots at `0, dt, 2·dt, …`, the last at or just after the duration.
    pub snapshots: Vec<Snapshot>,
    /// The software's decisions, one per snapshot.
    pub plans: Vec<Plan>,
    pub touches: Vec<Touch>,
    pub passes: Vec<Pass>,
    /// Chipped kicks: the ball in the air.
    pub chips: Vec<Chip>,
    pub outs: Vec<BallOut>,
    pub too_close: Vec<TooClose>,
}

impl Run {
    /// Time of the last snapshot.
    pub fn end(&self) -> f64 {
        self.snapshots.last().map_or(0.0, |s| s.t)
    }

    /// The state at `t`, interpolated between snapshots, clamped to the run.
    pub fn at(&self, t: f64) -> Snapshot {
        let (Some(first), Some(last)) = (self.snapshots.first(), self.snapshots.last()) else {
            return Snapshot {
                t: 0.0,
                robots: Vec::new(),
                ball: BallState {
                    pos: Vec2::ZERO,
                    height: 0.0,
                    vel: Vec2::ZERO,
                },
            };
        };
        if t.is_nan() || t <= first.t {
            return first.clone();
        }
        if t >= last.t {
            return last.clone();
        }
        let i = ((t / self.dt).floor() as usize).min(self.snapshots.len() - 2);
        let (a, b) = (&self.snapshots[i], &self.snapshots[i + 1]);
        let w = ((t - a.t) / (b.t - a.t)).clamp(0.0, 1.0);
        Snapshot::lerp(a, b, w)
    }
}

/// The index of a robot in [`Snapshot::robots`] and [`Plan::targets`].
pub fn robot_index(team: Team, id: u8) -> usize {
    match team {
        Team::Blue => usize::from(id),
        Team::Yellow => usize::from(TEAM_SIZE + id),
    }
}

/// The team and number of the robot at `index`.
pub fn robot_of(index: usize) -> (Team, u8) {
    let n = usize::from(TEAM_SIZE);
    if index < n {
        (Team::Blue, index as u8)
    } else {
        (Team::Yellow, (index - n) as u8)
    }
}

/// Runs the game for `duration` seconds (cut to `[0, 3600]`) from `seed`.
pub fn simulate(seed: u64, duration: f64) -> Run {
    let duration = if duration.is_finite() {
        duration.clamp(0.0, MAX_DURATION)
    } else {
        0.0
    };
    let steps = ((duration / DT) - 1e-9).ceil().max(0.0) as usize;
    let mut game = Game::new(seed, duration);
    let mut snapshots = Vec::with_capacity(steps + 1);
    let mut plans = Vec::with_capacity(steps + 1);
    let cmd = game.think();
    snapshots.push(game.snapshot());
    plans.push(game.plan(&cmd));
    for k in 1..=steps {
        let cmd = game.think();
        game.act(&cmd);
        game.t = k as f64 * DT;
        game.step(&cmd);
        game.referee();
        snapshots.push(game.snapshot());
        plans.push(game.plan(&cmd));
    }
    game.finish();
    Run {
        seed,
        dt: DT,
        snapshots,
        plans,
        touches: game.touches,
        passes: game.passes,
        chips: game.chips,
        outs: game.outs,
        too_close: game.too_close,
    }
}

// ---------------------------------------------------------------- the game

#[derive(Clone, Copy, Debug, Default)]
struct Body {
    pos: Vec2,
    vel: Vec2,
    heading: f64,
    omega: f64,
}

#[derive(Clone, Copy, Debug)]
struct Command {
    target: Vec2,
    heading: f64,
    vmax: f64,
    /// Busy with the ball: others make way.
    priority: bool,
}

#[derive(Clone, Copy, Debug)]
struct Ball {
    pos: Vec2,
    vel: Vec2,
    /// Height of its lowest point (mm) and upward speed (mm/s): in the air
    /// after a chip.
    height: f64,
    vz: f64,
    holder: Option<usize>,
    /// A robot that just kicked the ball and does not touch it until then.
    ignore: Option<(usize, f64)>,
}

/// A pass or clearance kick the holder is about to make.
#[derive(Clone, Copy, Debug)]
struct Flight {
    receiver: usize,
    kicked_at: f64,
    pass: usize,
}

#[derive(Clone, Copy, Debug)]
struct StopState {
    since: f64,
    /// The yellow robot that comes too close.
    offender: usize,
    placer: Option<usize>,
    point: Vec2,
    kick_to: Vec2,
    placed_at: Option<f64>,
}

#[derive(Clone, Debug)]
struct OffenceState {
    primary: Option<usize>,
    zones: Option<[Zone; 3]>,
    since: f64,
    hold_for: f64,
    pass: Option<PassPlan>,
    shot: Option<Vec2>,
    flight: Option<Flight>,
    last_passer: Option<usize>,
    /// The attacker whose possession the zones and plans were made for.
    possessor: Option<usize>,
    /// When the pass was planned.
    planned_at: f64,
}

impl OffenceState {
    /// No plan yet: the next possession starts one, holding the ball for
    /// `hold_for` seconds from `since`; `zones` are kept for drawing.
    fn fresh(zones: Option<[Zone; 3]>, since: f64, hold_for: f64) -> Self {
        OffenceState {
            primary: None,
            zones,
            since,
            hold_for,
            pass: None,
            shot: None,
            flight: None,
            last_passer: None,
            possessor: None,
            planned_at: 0.0,
        }
    }
}

struct Game {
    rng: StdRng,
    t: f64,
    step: u64,
    bodies: [Body; ROBOTS],
    ball: Ball,
    phase: Phase,
    stop: Option<StopState>,
    off: OffenceState,
    shot_due: Option<f64>,
    /// Smoothed marking targets of the yellow robots (they react late).
    marks: [Vec2; ROBOTS],
    /// Where a non-attacker holding the ball kicks it.
    free_kick: Option<Vec2>,
    /// A yellow robot going for a loose ball.
    yellow_chaser: Option<usize>,
    touches: Vec<Touch>,
    passes: Vec<Pass>,
    chips: Vec<Chip>,
    outs: Vec<BallOut>,
    too_close: Vec<TooClose>,
    open_close: [Option<TooClose>; ROBOTS],
}

impl Game {
    fn new(seed: u64, duration: f64) -> Game {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut jitter =
            |p: (f64, f64), r: f64| Vec2::new(p.0 + rng.random_range(-r..=r), p.1 + rng.random_range(-r..=r));
        let blue = [
            jitter((-4250.0, 0.0), 100.0),
            jitter((-2600.0, 400.0), 300.0),
            jitter((-900.0, 1900.0), 300.0),
            jitter((-1300.0, -1500.0), 300.0),
            Vec2::new(-HOLD_DISTANCE, 0.0),
            jitter((-700.0, -2400.0), 250.0),
        ];
        let yellow = [
            jitter((4250.0, 0.0), 100.0),
            jitter((900.0, 0.0), 100.0),
            jitter((1600.0, 1800.0), 300.0),
            jitter((1500.0, -1400.0), 300.0),
            jitter((2600.0, 700.0), 300.0),
            jitter((2600.0, -900.0), 300.0),
        ];
        let mut bodies = [Body::default(); ROBOTS];
        for (i, p) in blue.into_iter().chain(yellow).enumerate() {
            bodies[i].pos = p;
            bodies[i].heading = angle_of(Vec2::ZERO - p);
        }
        bodies[4].heading = 0.0;
        let shot_due = (duration >= SHOT_MIN_DURATION).then_some(0.6 * duration);
        let hold_for = rng.random_range(1.0..1.6);
        let marks = std::array::from_fn(|i| bodies[i].pos);
        let mut game = Game {
            rng,
            t: 0.0,
            step: 0,
            bodies,
            ball: Ball {
                pos: Vec2::ZERO,
                vel: Vec2::ZERO,
                height: 0.0,
                vz: 0.0,
                holder: Some(4),
                ignore: None,
            },
            phase: Phase::Running,
            stop: None,
            off: OffenceState::fresh(None, 0.0, hold_for),
            shot_due,
            marks,
            free_kick: None,
            yellow_chaser: None,
            touches: Vec::new(),
            passes: Vec::new(),
            chips: Vec::new(),
            outs: Vec::new(),
            too_close: Vec::new(),
            open_close: [None; ROBOTS],
        };
        game.ball.pos = game.hold_point(4);
        game
    }

    fn hold_point(&self, i: usize) -> Vec2 {
        let b = &self.bodies[i];
        b.pos + dir(b.heading) * HOLD_DISTANCE
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            t: self.t,
            robots: self
                .bodies
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let (team, id) = robot_of(i);
                    RobotState {
                        team,
                        id,
                        pos: b.pos,
                        heading: wrap_angle(b.heading),
                        vel: b.vel,
                    }
                })
                .collect(),
            ball: BallState {
                pos: self.ball.pos,
                height: self.ball.height,
                vel: self.ball.vel,
            },
        }
    }

    fn plan(&self, cmd: &[Command; ROBOTS]) -> Plan {
        let offence = match (self.phase, self.off.primary, self.off.zones) {
            (Phase::Running, Some(p), Some(zones)) => Some(Offence {
                zones,
                primary: p as u8,
                pass: self.off.pass,
                shot: self.off.shot,
            }),
            _ => None,
        };
        let placement = self
            .stop
            .filter(|_| self.phase == Phase::BallPlacement)
            .and_then(|s| s.placer.map(|p| ((p - usize::from(TEAM_SIZE)) as u8, s.point)));
        Plan {
            phase: self.phase,
            targets: std::array::from_fn(|i| cmd[i].target),
            offence,
            placement,
            ball_holder: self.ball.holder.map(robot_of),
        }
    }
}

#[cfg(test)]
mod tests;
