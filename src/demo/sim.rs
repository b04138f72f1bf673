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

use std::f64::consts::{PI, TAU};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::world::{
    BALL_RADIUS, BOUNDARY, BallState, FIELD_LENGTH, FIELD_WIDTH, GOAL_DEPTH, GOAL_WALL, GOAL_WIDTH,
    ROBOT_RADIUS, RobotState, Snapshot, TEAM_SIZE, Team,
};
use crate::log::Vec2;

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
        outs: game.outs,
        too_close: game.too_close,
    }
}

// ---------------------------------------------------------------- geometry

fn unit(v: Vec2) -> Vec2 {
    let l = v.length();
    if l > 1e-9 { v * (1.0 / l) } else { Vec2::ZERO }
}

fn dir(angle: f64) -> Vec2 {
    Vec2::new(angle.cos(), angle.sin())
}

fn angle_of(v: Vec2) -> f64 {
    v.y.atan2(v.x)
}

/// `a` wrapped into `[-π, π)`.
fn wrap(a: f64) -> f64 {
    (a + PI).rem_euclid(TAU) - PI
}

fn clamp_len(v: Vec2, max: f64) -> Vec2 {
    let l = v.length();
    if l > max && l > 0.0 { v * (max / l) } else { v }
}

/// Distance from `p` to the segment `a`–`b`.
pub(crate) fn segment_distance(p: Vec2, a: Vec2, b: Vec2) -> f64 {
    let ab = b - a;
    let len2 = ab.dot(ab);
    let s = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + ab * s)).length()
}

/// Largest |x| and |y| of a robot's centre (inside the boundary).
pub fn robot_bounds() -> Vec2 {
    Vec2::new(
        FIELD_LENGTH / 2.0 + BOUNDARY - ROBOT_RADIUS,
        FIELD_WIDTH / 2.0 + BOUNDARY - ROBOT_RADIUS,
    )
}

/// Largest |x| and |y| of the ball's centre.
fn ball_bounds() -> Vec2 {
    Vec2::new(
        FIELD_LENGTH / 2.0 + BOUNDARY - BALL_RADIUS,
        FIELD_WIDTH / 2.0 + BOUNDARY - BALL_RADIUS,
    )
}

/// `p` moved inside [`ball_bounds`].
fn inside_ball_bounds(p: Vec2) -> Vec2 {
    let bb = ball_bounds();
    Vec2::new(p.x.clamp(-bb.x, bb.x), p.y.clamp(-bb.y, bb.y))
}

/// Whether `p` lies in a defence area grown by `margin`.
fn in_defense_area(p: Vec2, margin: f64) -> bool {
    p.x.abs() > FIELD_LENGTH / 2.0 - DEFENSE_DEPTH - margin
        && p.x.abs() < FIELD_LENGTH / 2.0 + margin
        && p.y.abs() < DEFENSE_WIDTH / 2.0 + margin
}

/// The centre of the goal that yellow defends (blue attacks it).
fn yellow_goal() -> Vec2 {
    Vec2::new(FIELD_LENGTH / 2.0, 0.0)
}

fn is_attacker(i: usize) -> bool {
    i < usize::from(TEAM_SIZE) && ATTACKERS.contains(&(i as u8))
}

fn is_goalie(i: usize) -> bool {
    i == 0 || i == usize::from(TEAM_SIZE)
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
                        heading: wrap(b.heading),
                        vel: b.vel,
                    }
                })
                .collect(),
            ball: BallState {
                pos: self.ball.pos,
                height: 0.0,
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

    // ------------------------------------------------------------ decisions

    /// Every robot's command for this step.
    fn think(&mut self) -> [Command; ROBOTS] {
        let ball = self.ball.pos;
        let mut cmd: [Command; ROBOTS] = std::array::from_fn(|i| Command {
            target: self.bodies[i].pos,
            heading: angle_of(ball - self.bodies[i].pos),
            vmax: MAX_SPEED,
            priority: false,
        });
        let half_l = FIELD_LENGTH / 2.0;
        let goalie_y = (ball.y * 0.45).clamp(
            -(GOAL_WIDTH / 2.0 - ROBOT_RADIUS),
            GOAL_WIDTH / 2.0 - ROBOT_RADIUS,
        );
        // Blue goalie and defender.
        cmd[0].target = Vec2::new(-half_l + 160.0, goalie_y);
        cmd[1].target = Vec2::new(
            (ball.x - 2300.0).clamp(-3300.0, -700.0),
            (ball.y * 0.5).clamp(-1500.0, 1500.0),
        );
        // Yellow goalie, the robot between ball and goal, the markers.
        let y0 = usize::from(TEAM_SIZE);
        cmd[y0].target = Vec2::new(half_l - 160.0, goalie_y);
        let guard = if self.phase == Phase::Running {
            700.0
        } else {
            950.0
        };
        cmd[y0 + 1].target = ball + unit(yellow_goal() - ball) * guard;
        let holder = self.ball.holder;
        for k in 2..usize::from(TEAM_SIZE) {
            let m = self.bodies[k].pos;
            let goal_side = unit(yellow_goal() - m);
            let raw = if holder == Some(k) {
                m + goal_side * 750.0
            } else {
                m + goal_side * 430.0 + unit(ball - m) * 150.0
            };
            let mark = &mut self.marks[y0 + k];
            *mark = *mark + (raw - *mark) * (DT / 0.35);
            cmd[y0 + k].target = *mark;
        }
        match self.phase {
            Phase::Running => self.think_running(&mut cmd),
            Phase::Stop | Phase::BallPlacement => self.think_stopped(&mut cmd),
        }
        for (i, c) in cmd.iter_mut().enumerate() {
            c.target = self.legal_target(i, c.target);
        }
        if self.phase != Phase::Running {
            self.keep_away(&mut cmd);
        }
        let running = self.phase == Phase::Running;
        let receiver = self.off.pass.map(|p| usize::from(p.receiver));
        let placer = self.stop.and_then(|s| s.placer);
        for (i, c) in cmd.iter_mut().enumerate() {
            c.priority = self.ball.holder == Some(i)
                || (running
                    && (self.off.primary == Some(i) || receiver == Some(i) || self.yellow_chaser == Some(i)))
                || (!running && placer == Some(i));
        }
        cmd
    }

    /// Offence zones for the ball at `ball` (layout `variant`), unassigned.
    fn zone_layout(ball: Vec2, variant: u32) -> [(Vec2, Vec2); 3] {
        let xmax = FIELD_LENGTH / 2.0 - DEFENSE_DEPTH - 150.0;
        let f = (ball.x + 1500.0).clamp(300.0, 2500.0);
        if variant == 0 {
            let (xa, xb) = (f - 900.0, (f + 900.0).min(xmax));
            let xc = (f + 500.0).min(xmax - 1000.0);
            [
                (Vec2::new(xa, 700.0), Vec2::new(xb, 2700.0)),
                (Vec2::new(xa, -2700.0), Vec2::new(xb, -700.0)),
                (Vec2::new(xc, -650.0), Vec2::new(xc + 1000.0, 650.0)),
            ]
        } else {
            let (xa, xb) = (f, (f + 1400.0).min(xmax));
            let xt = (ball.x - 2200.0).clamp(-3200.0, 1800.0);
            let yt = (-ball.y * 0.5).clamp(-1800.0, 1800.0);
            [
                (Vec2::new(xa, 300.0), Vec2::new(xb, 2300.0)),
                (Vec2::new(xa, -2300.0), Vec2::new(xb, -300.0)),
                (Vec2::new(xt, yt - 900.0), Vec2::new(xt + 1400.0, yt + 900.0)),
            ]
        }
    }

    /// How good `p` is for receiving a pass from `from`; the robots in
    /// `skip` (passer and receiver) do not block the lane.
    fn receive_score(&self, p: Vec2, from: Vec2, skip: [usize; 2]) -> f64 {
        let y0 = usize::from(TEAM_SIZE);
        let opp = self.bodies[y0..]
            .iter()
            .map(|b| (b.pos - p).length())
            .fold(f64::INFINITY, f64::min);
        let lane = self
            .bodies
            .iter()
            .enumerate()
            .filter(|(i, _)| !skip.contains(i))
            .map(|(_, b)| segment_distance(b.pos, from, p))
            .fold(f64::INFINITY, f64::min);
        let near = if (p - from).length() < 1000.0 { -800.0 } else { 0.0 };
        -0.3 * (yellow_goal() - p).length() + opp.min(1000.0) + 1.5 * lane.min(700.0) + near
    }

    /// The best of a 3 × 3 grid of points in the zone.
    fn best_point(&self, min: Vec2, max: Vec2, from: Vec2, skip: [usize; 2]) -> Vec2 {
        let mut best = (f64::NEG_INFINITY, (min + max) * 0.5);
        for a in 0..3 {
            for b in 0..3 {
                let p = Vec2::new(
                    min.x + 200.0 + (max.x - min.x - 400.0).max(0.0) * f64::from(a) / 2.0,
                    min.y + 200.0 + (max.y - min.y - 400.0).max(0.0) * f64::from(b) / 2.0,
                );
                let s = self.receive_score(p, from, skip);
                if s > best.0 {
                    best = (s, p);
                }
            }
        }
        best.1
    }

    /// Assigns the attackers other than `primary` to the zones, minimising
    /// the total distance, and refreshes the best points.
    fn assign_zones(&mut self, rects: [(Vec2, Vec2); 3], primary: usize) {
        let supports: Vec<usize> = ATTACKERS
            .iter()
            .map(|&a| usize::from(a))
            .filter(|&a| a != primary)
            .collect();
        const PERMS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let centre = |r: (Vec2, Vec2)| (r.0 + r.1) * 0.5;
        let cost = |perm: &[usize; 3]| -> f64 {
            perm.iter()
                .zip(&supports)
                .map(|(&z, &s)| (self.bodies[s].pos - centre(rects[z])).length())
                .sum()
        };
        let mut best = PERMS[0];
        for perm in &PERMS[1..] {
            if cost(perm) < cost(&best) {
                best = *perm;
            }
        }
        let from = self.ball.pos;
        let zones = std::array::from_fn(|k| {
            // `best` is a permutation: zone k goes to the support at the
            // position of k in it.
            let s = best
                .iter()
                .position(|&z| z == k)
                .map_or(supports[k % supports.len()], |j| supports[j]);
            let (min, max) = rects[k];
            Zone {
                min,
                max,
                robot: s as u8,
                default: centre(rects[k]),
                best: self.best_point(min, max, from, [primary, s]),
            }
        });
        self.off.zones = Some(zones);
    }

    fn refresh_best_points(&mut self) {
        let from = self.ball.pos;
        if let Some(mut zones) = self.off.zones {
            for z in &mut zones {
                let frozen = self.off.pass.is_some_and(|p| p.receiver == z.robot);
                if !frozen {
                    let skip = [self.off.primary.unwrap_or(usize::MAX), usize::from(z.robot)];
                    z.best = self.best_point(z.min, z.max, from, skip);
                }
            }
            self.off.zones = Some(zones);
        }
    }

    /// A new robot has the ball or goes for it: new zones and plans.
    fn new_primary(&mut self, p: usize, possession: bool) {
        self.off.primary = Some(p);
        self.off.pass = None;
        self.off.shot = None;
        if possession {
            self.off.since = self.t;
            self.off.hold_for = self.rng.random_range(0.9..1.7);
            let variant = self.rng.random_range(0..2);
            let rects = Self::zone_layout(self.ball.pos, variant);
            self.assign_zones(rects, p);
        } else if let Some(zones) = self.off.zones {
            let rects = zones.map(|z| (z.min, z.max));
            self.assign_zones(rects, p);
        } else {
            let rects = Self::zone_layout(self.ball.pos, 0);
            self.assign_zones(rects, p);
        }
    }

    /// The aim of a shot that misses the goal and goes out over the goal
    /// line along a lane clear of robots, if there is one.
    fn shot_aim(&self, shooter: usize) -> Option<Vec2> {
        let side = if self.ball.pos.y >= 0.0 { 1.0 } else { -1.0 };
        let mut best: Option<(f64, Vec2)> = None;
        for s in [side, -side] {
            for off in [300.0, 450.0, 600.0, 800.0] {
                let aim = Vec2::new(FIELD_LENGTH / 2.0, s * (GOAL_WIDTH / 2.0 + off));
                let Some(clear) = self.shot_clearance(shooter, aim) else {
                    continue;
                };
                let score = clear.min(ROBOT_RADIUS + BALL_RADIUS + 150.0) - off * 0.05;
                if best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, aim));
                }
            }
        }
        best.map(|(_, aim)| aim)
    }

    /// How far the lane of a shot at `aim` (on the goal line, beside the
    /// goal) stays from every robot but the shooter, when it is clear: it
    /// must miss the goal, end beside it at the wall, and pass every robot.
    fn shot_clearance(&self, shooter: usize, aim: Vec2) -> Option<f64> {
        let from = self.ball.pos;
        let d = unit(aim - from);
        if d.x < 0.2 {
            return None;
        }
        // Where the shot passes the goal's back and meets the wall.
        let k_goal = (FIELD_LENGTH / 2.0 + GOAL_DEPTH + GOAL_WALL - from.x) / d.x;
        let y_goal = from.y + d.y * k_goal;
        if y_goal.abs() < GOAL_WIDTH / 2.0 + GOAL_WALL + BALL_RADIUS + 30.0 || y_goal * aim.y < 0.0 {
            return None;
        }
        let end = from + d * ((ball_bounds().x - from.x) / d.x);
        if end.y.abs() < GOAL_WIDTH / 2.0 + GOAL_WALL + 2.0 * ROBOT_RADIUS + 40.0 {
            return None;
        }
        let clear = self
            .bodies
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != shooter)
            .map(|(_, b)| segment_distance(b.pos, from, end))
            .fold(f64::INFINITY, f64::min);
        // The longer the shot is overdue, the narrower a lane will do.
        let overdue = self.shot_due.map_or(0.0, |due| self.t - due);
        let margin = if overdue > 4.0 { 5.0 } else { 40.0 };
        (clear >= ROBOT_RADIUS + BALL_RADIUS + margin).then_some(clear)
    }

    fn think_running(&mut self, cmd: &mut [Command; ROBOTS]) {
        let ball = self.ball.pos;
        self.yellow_chaser = None;
        match self.ball.holder {
            Some(h) if is_attacker(h) => {
                if self.off.possessor != Some(h) || self.off.zones.is_none() {
                    self.off.flight = None;
                    self.off.possessor = Some(h);
                    self.new_primary(h, true);
                } else if self.step % 15 == 0 {
                    self.refresh_best_points();
                }
                let held = self.t - self.off.since;
                let shoot_now = self
                    .shot_due
                    .is_some_and(|due| self.t >= due && !self.outs.iter().any(|o| o.t >= due));
                if shoot_now && self.off.shot.is_none() && held >= 0.3 {
                    // Shoot when a lane is clear; keep passing until then.
                    if let Some(aim) = self.shot_aim(h) {
                        self.off.pass = None;
                        self.off.shot = Some(aim);
                    }
                }
                if self.off.pass.is_none() && self.off.shot.is_none() && held >= 0.3 {
                    self.choose_receiver(h);
                }
                let me = self.bodies[h].pos;
                cmd[h].vmax = 1000.0;
                if let Some(aim) = self.off.shot {
                    cmd[h].heading = angle_of(aim - ball);
                } else if let Some(p) = self.off.pass {
                    cmd[h].heading = angle_of(p.ball_target - ball);
                } else {
                    cmd[h].heading = angle_of(yellow_goal() - me);
                    if me.x < 1800.0 {
                        cmd[h].target = me + Vec2::new(250.0, 0.0);
                        cmd[h].vmax = 450.0;
                    }
                }
                self.support_commands(cmd, None);
            }
            Some(h) => {
                // A goalie or the yellow free kick taker: kick it away.
                let to = self.free_kick.unwrap_or_else(|| self.clearance_target(h));
                cmd[h].heading = angle_of(to - ball);
                cmd[h].vmax = 800.0;
                self.support_commands(cmd, None);
            }
            None => {
                if let Some(f) = self.off.flight {
                    let recv = self.bodies[f.receiver].pos;
                    let speed = self.ball.vel.length();
                    let away = self.ball.vel.dot(recv - ball) < 0.0 && (recv - ball).length() > 300.0;
                    if speed < 150.0 || self.t - f.kicked_at > 4.0 || away {
                        self.off.flight = None;
                        self.off.pass = None;
                    }
                }
                if let Some(f) = self.off.flight {
                    let r = f.receiver;
                    let u = unit(self.ball.vel);
                    let p = self.bodies[r].pos;
                    let s = (p - ball).dot(u).max(0.0);
                    cmd[r].target = ball + u * s;
                    cmd[r].heading = angle_of(ball - p);
                    self.support_commands(cmd, Some(r));
                } else {
                    self.fetch(cmd);
                }
            }
        }
    }

    /// Where a goalie or yellow robot holding the ball clears it to.
    fn clearance_target(&self, h: usize) -> Vec2 {
        let ball = self.ball.pos;
        if h < usize::from(TEAM_SIZE) {
            // Blue goalie: to the nearest attacker.
            ATTACKERS
                .iter()
                .map(|&a| self.bodies[usize::from(a)].pos)
                .min_by(|a, b| (*a - ball).length().total_cmp(&(*b - ball).length()))
                .unwrap_or(Vec2::ZERO)
        } else {
            Vec2::new(-1500.0, (-ball.y * 0.5).clamp(-2000.0, 2000.0))
        }
    }

    /// Picks the receiver of the next pass among the support attackers.
    fn choose_receiver(&mut self, passer: usize) {
        let Some(zones) = self.off.zones else {
            return;
        };
        let from = self.ball.pos;
        let mut best: Option<(f64, Zone)> = None;
        for z in zones {
            let r = usize::from(z.robot);
            let mut score = self.receive_score(z.best, from, [passer, r]) + self.rng.random_range(0.0..400.0);
            if self.off.last_passer == Some(r) {
                score -= 500.0;
            }
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, z));
            }
        }
        if let Some((_, z)) = best {
            let rt = z.best;
            self.off.planned_at = self.t;
            self.off.pass = Some(PassPlan {
                passer: passer as u8,
                receiver: z.robot,
                receiver_target: rt,
                ball_target: rt + unit(from - rt) * (ROBOT_RADIUS + BALL_RADIUS),
                kicked: false,
            });
        }
    }

    /// Commands for the support attackers (and a receiver waiting for its pass).
    fn support_commands(&self, cmd: &mut [Command; ROBOTS], skip: Option<usize>) {
        let Some(zones) = self.off.zones else {
            return;
        };
        for z in zones {
            let r = usize::from(z.robot);
            if Some(r) == skip || Some(r) == self.ball.holder {
                continue;
            }
            cmd[r].target = match self.off.pass {
                Some(p) if p.receiver == z.robot => p.receiver_target,
                _ => z.default,
            };
        }
    }

    /// Nobody has the ball: the nearest attacker goes for it (a goalie when
    /// it lies in its defence area).
    fn fetch(&mut self, cmd: &mut [Command; ROBOTS]) {
        let ball = self.ball.pos;
        let vel = self.ball.vel;
        let predict = |p: Vec2| {
            let lead = ((p - ball).length() / 1500.0).min(1.0);
            ball + vel * lead
        };
        if in_defense_area(ball, 0.0) {
            let g = if ball.x > 0.0 { usize::from(TEAM_SIZE) } else { 0 };
            let p = self.bodies[g].pos;
            let target = predict(p);
            cmd[g].target = target - unit(target - p) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
            cmd[g].heading = angle_of(ball - p);
        }
        let cost = |g: &Game, a: usize| (predict(g.bodies[a].pos) - g.bodies[a].pos).length();
        let mut fetcher = ATTACKERS
            .iter()
            .map(|&a| usize::from(a))
            .min_by(|&a, &b| cost(self, a).total_cmp(&cost(self, b)))
            .unwrap_or(usize::from(ATTACKERS[0]));
        if let Some(p) = self.off.primary
            && is_attacker(p)
            && cost(self, p) < 1.3 * cost(self, fetcher)
        {
            fetcher = p;
        }
        if self.off.primary != Some(fetcher) || self.off.zones.is_none() {
            self.new_primary(fetcher, false);
        }
        let p = self.bodies[fetcher].pos;
        let target = predict(p);
        cmd[fetcher].target = target - unit(target - p) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
        cmd[fetcher].heading = angle_of(ball - p);
        self.support_commands(cmd, Some(fetcher));
        // A yellow defender goes for a slow ball it is clearly closer to, or
        // for one nobody has touched for a while.
        let y0 = usize::from(TEAM_SIZE);
        let near = |g: &Game, a: usize| (g.bodies[a].pos - ball).length();
        if let Some(yc) = (y0 + 1..ROBOTS).min_by(|&a, &b| near(self, a).total_cmp(&near(self, b))) {
            let idle = self.touches.last().is_none_or(|t| self.t - t.t > 2.5);
            if vel.length() < 800.0 && (near(self, yc) < 0.6 * cost(self, fetcher) || idle) {
                self.yellow_chaser = Some(yc);
                let q = self.bodies[yc].pos;
                let target = predict(q);
                cmd[yc].target = target - unit(target - q) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
                cmd[yc].heading = angle_of(ball - q);
            }
        }
    }

    fn think_stopped(&mut self, cmd: &mut [Command; ROBOTS]) {
        let ball = self.ball.pos;
        for c in cmd.iter_mut() {
            c.vmax = STOP_SPEED;
        }
        self.support_commands(cmd, None);
        let Some(stop) = self.stop else {
            return;
        };
        let o = stop.offender;
        if self.misbehaving(o) {
            let p = self.bodies[o].pos;
            cmd[o].target = ball + unit(p - ball) * (ROBOT_RADIUS + 280.0);
        }
        if let Some(placer) = stop.placer {
            let p = self.bodies[placer].pos;
            let u = unit(stop.kick_to - stop.point);
            if self.ball.holder == Some(placer) {
                cmd[placer].target = stop.point - u * HOLD_DISTANCE;
                cmd[placer].heading = angle_of(u);
                cmd[placer].vmax = 1200.0;
            } else {
                cmd[placer].target = ball - unit(ball - p) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
                cmd[placer].heading = angle_of(ball - p);
            }
        }
    }

    /// `target` made legal for robot `i`: inside the boundary, out of the
    /// defence areas unless a goalie, not behind a goal line unless placing.
    fn legal_target(&self, i: usize, target: Vec2) -> Vec2 {
        let placer = self.stop.and_then(|s| s.placer) == Some(i) && self.phase == Phase::BallPlacement;
        let b = if placer {
            robot_bounds() - Vec2::new(5.0, 5.0)
        } else {
            robot_bounds() - Vec2::new(40.0, 40.0)
        };
        let xmax = if placer { b.x } else { FIELD_LENGTH / 2.0 - 60.0 };
        let mut p = Vec2::new(target.x.clamp(-xmax, xmax), target.y.clamp(-b.y, b.y));
        // The attacker going for a loose ball may come up to the line.
        let chasing = self.phase == Phase::Running
            && self.ball.holder.is_none()
            && (self.off.primary == Some(i) || self.yellow_chaser == Some(i));
        let m = if chasing { 0.0 } else { ROBOT_RADIUS + 20.0 };
        if !is_goalie(i) && !placer && !self.misbehaving(i) && in_defense_area(p, m) {
            let front = FIELD_LENGTH / 2.0 - DEFENSE_DEPTH - m;
            let side = DEFENSE_WIDTH / 2.0 + m;
            let dx = p.x.abs() - front;
            let dy = side - p.y.abs();
            if dx < dy {
                p.x = p.x.signum() * front;
            } else {
                p.y = if p.y >= 0.0 { side } else { -side };
            }
        }
        p
    }

    /// Whether `i` is the robot that stays too close to the ball in this stop.
    fn misbehaving(&self, i: usize) -> bool {
        self.phase != Phase::Running
            && self
                .stop
                .is_some_and(|s| s.offender == i && self.t - s.since < OFFENCE_END)
    }

    /// During a stop, moves every target (except the offender's while it
    /// misbehaves and the placer's) out of the circle the rule keeps free.
    fn keep_away(&self, cmd: &mut [Command; ROBOTS]) {
        let Some(stop) = self.stop else {
            return;
        };
        let ball = self.ball.pos;
        let r = STOP_DISTANCE + ROBOT_RADIUS + 220.0;
        for (i, c) in cmd.iter_mut().enumerate() {
            if Some(i) == stop.placer || self.misbehaving(i) {
                continue;
            }
            let d = c.target - ball;
            if d.length() >= r {
                continue;
            }
            let towards_centre = unit(Vec2::ZERO - ball);
            let out = if d.length() > 1.0 { unit(d) } else { towards_centre };
            let mut p = self.legal_target(i, ball + out * r);
            if (p - ball).length() < r - 1.0 {
                // The wall is in the way: go round towards the field's centre.
                let side = if out.x * towards_centre.y - out.y * towards_centre.x >= 0.0 {
                    1.0
                } else {
                    -1.0
                };
                let a = angle_of(towards_centre) + side * 0.6;
                p = self.legal_target(i, ball + dir(a) * r);
            }
            c.target = p;
        }
    }

    // ------------------------------------------------------------ actions

    /// Kicks.
    fn act(&mut self, cmd: &[Command; ROBOTS]) {
        let Some(h) = self.ball.holder else {
            return;
        };
        if self.phase != Phase::Running {
            return;
        }
        let heading = self.bodies[h].heading;
        let aligned = |tol: f64| wrap(cmd[h].heading - heading).abs() < tol;
        if is_attacker(h) {
            let held = self.t - self.off.since;
            if let Some(aim) = self.off.shot {
                if aligned(0.03) {
                    // The lane the ball will really take: the robot's
                    // heading plus its own motion.
                    let v = 5000.0 + self.rng.random_range(-300.0..300.0);
                    let b = self.bodies[h];
                    let d = unit(dir(b.heading) * v + b.vel);
                    let real_aim = (d.x > 0.2)
                        .then(|| self.ball.pos + d * ((FIELD_LENGTH / 2.0 - self.ball.pos.x) / d.x));
                    if real_aim
                        .is_some_and(|a| (a - aim).length() < 300.0 && self.shot_clearance(h, a).is_some())
                    {
                        self.kick(h, v);
                        self.off.primary = None;
                    }
                    // Kicked, or the lane closed: think again.
                    self.off.shot = None;
                }
            } else if let Some(mut p) = self.off.pass {
                let r = usize::from(p.receiver);
                let ready = (self.bodies[r].pos - p.receiver_target).length() < 250.0;
                let from = self.ball.pos;
                let lane_clear = self
                    .bodies
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != h && i != r)
                    .all(|(_, b)| {
                        segment_distance(b.pos, from, p.ball_target) > ROBOT_RADIUS + BALL_RADIUS + 40.0
                    });
                let planned = self.t - self.off.planned_at;
                if planned >= 0.5 && (!lane_clear || planned >= 3.0) {
                    // Blocked, or the receiver does not get there: think again.
                    self.off.pass = None;
                } else if held >= self.off.hold_for && aligned(0.06) && ready && lane_clear {
                    let d = (p.ball_target - self.ball.pos).length();
                    let arrive = self.rng.random_range(1800.0..2400.0);
                    let v = (arrive * arrive + 2.0 * BALL_DECEL * d)
                        .sqrt()
                        .clamp(2500.0, 4000.0);
                    let from = self.ball.pos;
                    self.kick(h, v);
                    self.passes.push(Pass {
                        t: self.t,
                        passer: h as u8,
                        receiver: p.receiver,
                        from,
                        target: p.ball_target,
                        speed: v,
                        received: None,
                    });
                    p.kicked = true;
                    self.off.pass = Some(p);
                    self.off.flight = Some(Flight {
                        receiver: r,
                        kicked_at: self.t,
                        pass: self.passes.len() - 1,
                    });
                    self.off.last_passer = Some(h);
                    // The receiver is now the primary attacker; the others,
                    // the passer among them, take the zones.
                    self.off.primary = Some(r);
                    if let Some(zones) = self.off.zones {
                        self.assign_zones(zones.map(|z| (z.min, z.max)), r);
                    }
                }
            }
        } else if aligned(0.08) {
            let to = self.free_kick.unwrap_or_else(|| self.clearance_target(h));
            let d = (to - self.ball.pos).length();
            let v = (1500.0_f64.powi(2) + 2.0 * BALL_DECEL * d)
                .sqrt()
                .clamp(1800.0, 3500.0);
            self.kick(h, v);
            self.free_kick = None;
            self.off.primary = None;
            self.off.pass = None;
            self.off.flight = None;
        }
    }

    fn kick(&mut self, h: usize, speed: f64) {
        let b = self.bodies[h];
        self.ball.holder = None;
        self.off.possessor = None;
        self.ball.vel = dir(b.heading) * speed + b.vel;
        self.ball.ignore = Some((h, self.t + 0.2));
        self.touch(h);
    }

    fn touch(&mut self, i: usize) {
        let (team, id) = robot_of(i);
        if let Some(last) = self.touches.last()
            && last.team == team
            && last.id == id
            && self.t - last.t < 0.5
        {
            return;
        }
        self.touches.push(Touch {
            t: self.t,
            team,
            id,
            pos: self.ball.pos,
        });
    }

    // ------------------------------------------------------------ physics

    /// Whether robot `i` catches a ball touching its dribbler.
    fn can_catch(&self, i: usize) -> bool {
        match self.phase {
            Phase::Running => {
                is_attacker(i)
                    || self.yellow_chaser == Some(i)
                    || (i == 0 && in_defense_area(self.ball.pos, 0.0) && self.ball.pos.x < 0.0)
                    || (i == usize::from(TEAM_SIZE)
                        && in_defense_area(self.ball.pos, 0.0)
                        && self.ball.pos.x > 0.0)
            }
            Phase::BallPlacement => self.stop.and_then(|s| s.placer) == Some(i),
            Phase::Stop => false,
        }
    }

    fn step(&mut self, cmd: &[Command; ROBOTS]) {
        self.step += 1;
        let n = ROBOTS;
        // Preferred velocities: arrive at the target, keep apart.
        let mut v_new = [Vec2::ZERO; ROBOTS];
        for i in 0..n {
            let b = self.bodies[i];
            let c = cmd[i];
            let d = c.target - b.pos;
            let dist = d.length();
            let speed = c.vmax.min((2.0 * 0.8 * MAX_ACCEL * (dist - 3.0).max(0.0)).sqrt());
            let mut pref = unit(d) * speed;
            for (j, o) in self.bodies.iter().enumerate() {
                if j == i {
                    continue;
                }
                let off = b.pos - o.pos;
                let gap = off.length() - MIN_GAP;
                if gap < 300.0 {
                    let k = (1.0 - gap.max(0.0) / 300.0).powi(2);
                    let give = if c.priority && !cmd[j].priority { 0.2 } else { 1.0 };
                    pref = pref + unit(off) * (900.0 * k * give);
                }
            }
            // Robots that are not to get the ball drive round it.
            if self.ball.holder != Some(i) && (self.ball.holder.is_some() || !self.can_catch(i)) {
                let off = b.pos - self.ball.pos;
                let gap = off.length() - (ROBOT_RADIUS + BALL_RADIUS + 40.0);
                if gap < 200.0 {
                    pref = pref + unit(off) * (900.0 * (1.0 - gap.max(0.0) / 200.0).powi(2));
                }
            }
            pref = clamp_len(pref, c.vmax.min(MAX_SPEED));
            v_new[i] = b.vel + clamp_len(pref - b.vel, MAX_ACCEL * DT);
        }
        // Safety: limit closing speeds so that pairs can still stop in time.
        const SAFE_DECEL: f64 = 1500.0;
        // Walls: the speed towards the boundary's edge must allow stopping
        // before it (and never reach past it within a step).
        let bounds = robot_bounds();
        let allowed = |gap: f64| (2.0 * SAFE_DECEL * gap.max(0.0)).sqrt().min(gap.max(0.0) / DT);
        let wall_excess = |pos: Vec2, v: Vec2| {
            let ex = v.x * pos.x.signum() - allowed(bounds.x - pos.x.abs());
            let ey = v.y * pos.y.signum() - allowed(bounds.y - pos.y.abs());
            (ex, ey)
        };
        // A few rounds, as making way for one robot can mean driving at
        // another or at a wall.
        let mut walled = [false; ROBOTS];
        for _ in 0..3 {
            for i in 0..n {
                for j in i + 1..n {
                    let off = self.bodies[j].pos - self.bodies[i].pos;
                    let d = off.length();
                    if d > MIN_GAP + 500.0 {
                        continue;
                    }
                    let nrm = unit(off);
                    let closing = (v_new[i] - v_new[j]).dot(nrm);
                    let gap = (d - MIN_GAP).max(0.0);
                    let limit = allowed(gap);
                    if closing > limit {
                        // Shares of the correction: a robot at a wall cannot
                        // make way, one busy with the ball leaves most of it
                        // to the other.
                        let share = match (walled[i], walled[j], cmd[i].priority, cmd[j].priority) {
                            (true, false, ..) => 0.0,
                            (false, true, ..) => 1.0,
                            (_, _, true, false) => 0.2,
                            (_, _, false, true) => 0.8,
                            _ => 0.5,
                        };
                        let e = closing - limit;
                        v_new[i] = v_new[i] - nrm * (e * share);
                        v_new[j] = v_new[j] + nrm * (e * (1.0 - share));
                    }
                }
            }
            for (i, b) in self.bodies.iter().enumerate() {
                let (ex, ey) = wall_excess(b.pos, v_new[i]);
                if ex > 0.0 {
                    v_new[i].x -= b.pos.x.signum() * ex;
                    walled[i] = true;
                }
                if ey > 0.0 {
                    v_new[i].y -= b.pos.y.signum() * ey;
                    walled[i] = true;
                }
            }
        }
        let budget = MAX_ACCEL * DT;
        for (i, b) in self.bodies.iter_mut().enumerate() {
            let step = v_new[i] - b.vel;
            let mut v = b.vel + clamp_len(step, budget);
            let (ex, ey) = wall_excess(b.pos, v);
            if ex > 1e-9 || ey > 1e-9 {
                // Braking from a wall first; the other axis gets what is left.
                let (first, second) = if ex > 1e-9 {
                    (step.x, step.y)
                } else {
                    (step.y, step.x)
                };
                let d1 = first.clamp(-budget, budget);
                let rest = (budget * budget - d1 * d1).max(0.0).sqrt();
                let d2 = second.clamp(-rest, rest);
                v = b.vel
                    + if ex > 1e-9 {
                        Vec2::new(d1, d2)
                    } else {
                        Vec2::new(d2, d1)
                    };
            }
            let v = clamp_len(v, MAX_SPEED);
            b.vel = v;
            b.pos = b.pos + v * DT;
            if b.pos.x.abs() > bounds.x {
                b.pos.x = b.pos.x.clamp(-bounds.x, bounds.x);
                b.vel.x = 0.0;
            }
            if b.pos.y.abs() > bounds.y {
                b.pos.y = b.pos.y.clamp(-bounds.y, bounds.y);
                b.vel.y = 0.0;
            }
            // Heading: turn towards the commanded heading.
            let holding = self.ball.holder == Some(i);
            let max_rate = if holding { 4.0 } else { MAX_TURN_RATE };
            let err = wrap(cmd[i].heading - b.heading);
            let want = (err * 8.0).clamp(-max_rate, max_rate);
            b.omega += (want - b.omega).clamp(-MAX_TURN_ACCEL * DT, MAX_TURN_ACCEL * DT);
            b.omega = b.omega.clamp(-MAX_TURN_RATE, MAX_TURN_RATE);
            b.heading = wrap(b.heading + b.omega * DT);
        }
        // Last resort: robots never overlap.
        for i in 0..n {
            for j in i + 1..n {
                let off = self.bodies[j].pos - self.bodies[i].pos;
                let d = off.length();
                let min = 2.0 * ROBOT_RADIUS + 2.0;
                if d < min {
                    let nrm = if d > 1e-9 {
                        off * (1.0 / d)
                    } else {
                        Vec2::new(1.0, 0.0)
                    };
                    let push = nrm * ((min - d) / 2.0);
                    self.bodies[i].pos = self.bodies[i].pos - push;
                    self.bodies[j].pos = self.bodies[j].pos + push;
                }
            }
        }
        for b in &mut self.bodies {
            b.pos = Vec2::new(
                b.pos.x.clamp(-bounds.x, bounds.x),
                b.pos.y.clamp(-bounds.y, bounds.y),
            );
        }
        self.step_ball();
    }

    fn step_ball(&mut self) {
        if let Some(h) = self.ball.holder {
            self.ball.pos = inside_ball_bounds(self.hold_point(h));
            self.ball.vel = self.bodies[h].vel;
            return;
        }
        let speed = self.ball.vel.length();
        if speed > 0.0 {
            let slower = (speed - BALL_DECEL * DT).max(0.0);
            self.ball.vel = self.ball.vel * (slower / speed);
        }
        // Substeps, so that a fast ball cannot pass through a goal wall.
        const SUBSTEPS: u32 = 4;
        let h = DT / f64::from(SUBSTEPS);
        for _ in 0..SUBSTEPS {
            self.ball.pos = self.ball.pos + self.ball.vel * h;
            self.ball_walls();
        }
        if self.ball.ignore.is_some_and(|(_, until)| self.t >= until) {
            self.ball.ignore = None;
        }
        // Contacts with robots: caught by a dribbler or bounced off.
        for i in 0..ROBOTS {
            if self.ball.ignore.is_some_and(|(k, _)| k == i) {
                continue;
            }
            let b = self.bodies[i];
            let off = self.ball.pos - b.pos;
            let d = off.length();
            if d >= ROBOT_RADIUS + BALL_RADIUS {
                continue;
            }
            let nrm = if d > 1e-9 { off * (1.0 / d) } else { dir(b.heading) };
            if self.can_catch(i) && wrap(angle_of(nrm) - b.heading).abs() < CATCH_ANGLE {
                self.catch(i);
                return;
            }
            self.ball.pos = b.pos + nrm * (ROBOT_RADIUS + BALL_RADIUS);
            let rel = self.ball.vel - b.vel;
            let vn = rel.dot(nrm);
            if vn < 0.0 {
                self.ball.vel = self.ball.vel - nrm * ((1.0 + ROBOT_BOUNCE) * vn);
                if vn < -200.0 {
                    self.touch(i);
                }
                if self.off.flight.is_some_and(|f| f.receiver != i) {
                    self.off.flight = None;
                    self.off.pass = None;
                }
            }
        }
        self.ball.pos = inside_ball_bounds(self.ball.pos);
    }

    /// Contacts of the free ball with the walls at the boundary's edge and
    /// with the goals (side walls reaching back to the boundary's edge, so
    /// that nothing gets behind a goal, and the back wall). A wall reverses
    /// and damps the normal speed and brakes the ball along it.
    fn ball_walls(&mut self) {
        let bb = ball_bounds();
        let (mut p, mut v) = (self.ball.pos, self.ball.vel);
        let bounce = |p: &mut Vec2, v: &mut Vec2, nrm: Vec2, depth: f64| {
            *p = *p + nrm * depth;
            let vn = v.dot(nrm);
            if vn < 0.0 {
                let along = *v - nrm * vn;
                *v = along * WALL_FRICTION - nrm * (vn * WALL_BOUNCE);
            }
        };
        for (pos, n) in [(p.x, Vec2::new(-1.0, 0.0)), (p.y, Vec2::new(0.0, -1.0))] {
            let max = if n.x != 0.0 { bb.x } else { bb.y };
            if pos.abs() > max {
                let nrm = n * pos.signum();
                bounce(&mut p, &mut v, nrm, pos.abs() - max);
            }
        }
        let hl = FIELD_LENGTH / 2.0;
        let (wy, back) = (
            GOAL_WIDTH / 2.0 + GOAL_WALL / 2.0,
            hl + GOAL_DEPTH + GOAL_WALL / 2.0,
        );
        let reach = BALL_RADIUS + GOAL_WALL / 2.0;
        for side in [1.0, -1.0] {
            let walls = [
                (Vec2::new(side * hl, wy), Vec2::new(side * (hl + BOUNDARY), wy)),
                (Vec2::new(side * hl, -wy), Vec2::new(side * (hl + BOUNDARY), -wy)),
                (Vec2::new(side * back, -wy), Vec2::new(side * back, wy)),
            ];
            for (a, b) in walls {
                let ab = b - a;
                let k = ((p - a).dot(ab) / ab.dot(ab)).clamp(0.0, 1.0);
                let c = a + ab * k;
                let d = (p - c).length();
                if d < reach {
                    let nrm = if d > 1e-9 {
                        (p - c) * (1.0 / d)
                    } else {
                        unit(Vec2::ZERO - p)
                    };
                    bounce(&mut p, &mut v, nrm, reach - d);
                }
            }
        }
        self.ball.pos = p;
        self.ball.vel = v;
    }

    fn catch(&mut self, i: usize) {
        self.ball.holder = Some(i);
        self.ball.ignore = None;
        self.touch(i);
        if let Some(f) = self.off.flight
            && f.receiver == i
            && let Some(p) = self.passes.get_mut(f.pass)
        {
            p.received = Some(self.t);
        }
        self.ball.pos = inside_ball_bounds(self.hold_point(i));
        self.ball.vel = self.bodies[i].vel;
    }

    // ------------------------------------------------------------ referee

    fn referee(&mut self) {
        let ball = self.ball.pos;
        let half = Vec2::new(FIELD_LENGTH / 2.0, FIELD_WIDTH / 2.0);
        match self.phase {
            Phase::Running => {
                let out_x = ball.x.abs() > half.x + BALL_RADIUS;
                let out_y = ball.y.abs() > half.y + BALL_RADIUS;
                if out_x || out_y {
                    self.ball_out(out_x);
                }
            }
            Phase::Stop => {
                if let Some(stop) = self.stop
                    && self.t - stop.since >= STOP_LENGTH
                {
                    self.start_placement();
                }
            }
            Phase::BallPlacement => {
                if let Some(mut stop) = self.stop {
                    if stop.placed_at.is_none()
                        && stop.placer.is_some_and(|p| {
                            self.ball.holder == Some(p) && self.bodies[p].vel.length() < 100.0
                        })
                        && (ball - stop.point).length() < 60.0
                    {
                        stop.placed_at = Some(self.t);
                        self.stop = Some(stop);
                    }
                    if stop.placed_at.is_some_and(|t| self.t - t >= 0.5) {
                        self.resume(stop);
                    }
                }
            }
        }
        if self.phase != Phase::Running {
            self.watch_distances();
        }
    }

    fn ball_out(&mut self, goal_line: bool) {
        let (pos, vel) = (self.ball.pos, self.ball.vel);
        let half = Vec2::new(FIELD_LENGTH / 2.0, FIELD_WIDTH / 2.0);
        let (exit, line) = if goal_line {
            let x = pos.x.signum() * half.x;
            let y = if vel.x.abs() > 1e-6 {
                pos.y - vel.y * (pos.x - x) / vel.x
            } else {
                pos.y
            };
            (
                Vec2::new(x, y.clamp(-half.y, half.y)),
                (Vec2::new(x, -half.y), Vec2::new(x, half.y)),
            )
        } else {
            let y = pos.y.signum() * half.y;
            let x = if vel.y.abs() > 1e-6 {
                pos.x - vel.x * (pos.y - y) / vel.y
            } else {
                pos.x
            };
            (
                Vec2::new(x.clamp(-half.x, half.x), y),
                (Vec2::new(-half.x, y), Vec2::new(half.x, y)),
            )
        };
        self.outs.push(BallOut {
            t: self.t,
            exit,
            line,
            last_touch: self.touches.last().copied(),
            restart: None,
        });
        self.ball.holder = None;
        self.off = OffenceState::fresh(self.off.zones, self.t, 1.0);
        let y0 = usize::from(TEAM_SIZE);
        let offender = (y0 + 1..ROBOTS)
            .min_by(|&a, &b| {
                (self.bodies[a].pos - pos)
                    .length()
                    .total_cmp(&(self.bodies[b].pos - pos).length())
            })
            .unwrap_or(y0 + 1);
        let point = if goal_line {
            Vec2::new(
                exit.x.signum() * (half.x - DEFENSE_DEPTH - 300.0),
                exit.y.clamp(-(half.y - 500.0), half.y - 500.0),
            )
        } else {
            Vec2::new(
                exit.x
                    .clamp(-(half.x - DEFENSE_DEPTH - 300.0), half.x - DEFENSE_DEPTH - 300.0),
                exit.y.signum() * (half.y - 300.0),
            )
        };
        let kick_to = Vec2::new(point.x * 0.2 - 1000.0, (-point.y * 0.4).clamp(-2000.0, 2000.0));
        self.phase = Phase::Stop;
        self.stop = Some(StopState {
            since: self.t,
            offender,
            placer: None,
            point,
            kick_to,
            placed_at: None,
        });
    }

    fn start_placement(&mut self) {
        let Some(mut stop) = self.stop else {
            return;
        };
        let ball = self.ball.pos;
        let y0 = usize::from(TEAM_SIZE);
        stop.placer = (y0 + 1..ROBOTS).filter(|&i| i != stop.offender).min_by(|&a, &b| {
            (self.bodies[a].pos - ball)
                .length()
                .total_cmp(&(self.bodies[b].pos - ball).length())
        });
        self.stop = Some(stop);
        self.phase = Phase::BallPlacement;
    }

    fn resume(&mut self, stop: StopState) {
        self.close_violations();
        self.phase = Phase::Running;
        self.free_kick = Some(stop.kick_to);
        self.stop = None;
        if let Some(out) = self.outs.last_mut() {
            out.restart = Some(self.t);
        }
    }

    /// The autoref's distance check during a stop.
    fn watch_distances(&mut self) {
        let Some(stop) = self.stop else {
            return;
        };
        if self.t - stop.since < STOP_GRACE {
            return;
        }
        let ball = self.ball.pos;
        for i in 0..ROBOTS {
            let p = self.bodies[i].pos;
            let edge = (p - ball).length() - ROBOT_RADIUS;
            let exempt = self.phase == Phase::BallPlacement && stop.placer == Some(i);
            if edge < STOP_DISTANCE && !exempt {
                let (team, id) = robot_of(i);
                let v = self.open_close[i].get_or_insert(TooClose {
                    start: self.t,
                    end: self.t,
                    team,
                    id,
                    closest: edge,
                    at: self.t,
                    robot: p,
                    ball,
                });
                v.end = self.t;
                if edge < v.closest {
                    v.closest = edge;
                    v.at = self.t;
                    v.robot = p;
                    v.ball = ball;
                }
            } else if let Some(v) = self.open_close[i].take() {
                self.too_close.push(v);
            }
        }
    }

    fn close_violations(&mut self) {
        for v in self.open_close.iter_mut().filter_map(Option::take) {
            self.too_close.push(v);
        }
        self.too_close.sort_by(|a, b| a.start.total_cmp(&b.start));
    }

    fn finish(&mut self) {
        self.close_violations();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_physics(run: &Run) {
        let bounds = robot_bounds();
        for w in run.snapshots.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert!((b.t - a.t - DT).abs() < 1e-9);
            for (ra, rb) in a.robots.iter().zip(&b.robots) {
                let speed = rb.vel.length();
                assert!(
                    speed <= MAX_SPEED + 1e-6,
                    "{:?} {} too fast: {speed}",
                    rb.team,
                    rb.id
                );
                let acc = (rb.vel - ra.vel).length() / DT;
                assert!(
                    acc <= MAX_ACCEL + 1e-6,
                    "t {} {:?} {}: acceleration {acc}",
                    b.t,
                    rb.team,
                    rb.id
                );
                let turn = wrap(rb.heading - ra.heading).abs() / DT;
                assert!(turn <= MAX_TURN_RATE + 1e-6, "turn rate {turn}");
                let moved = (rb.pos - ra.pos).length() / DT;
                assert!(moved <= MAX_SPEED * 1.1, "{:?} {} jumped {moved}", rb.team, rb.id);
            }
        }
        for s in &run.snapshots {
            assert_eq!(s.robots.len(), ROBOTS);
            for (i, r) in s.robots.iter().enumerate() {
                assert_eq!((r.team, r.id), robot_of(i));
                assert!(r.pos.is_finite() && r.vel.is_finite() && r.heading.is_finite());
                assert!(r.pos.x.abs() <= bounds.x + 1e-9 && r.pos.y.abs() <= bounds.y + 1e-9);
                for o in &s.robots[i + 1..] {
                    let d = (r.pos - o.pos).length();
                    assert!(d >= 2.0 * ROBOT_RADIUS, "t {}: robots overlap ({d} mm)", s.t);
                }
            }
            let bb = ball_bounds();
            assert!(s.ball.pos.is_finite() && s.ball.vel.is_finite() && s.ball.height == 0.0);
            assert!(s.ball.pos.x.abs() <= bb.x + 1e-9 && s.ball.pos.y.abs() <= bb.y + 1e-9);
        }
    }

    #[test]
    fn same_seed_same_run_and_seeds_differ() {
        let a = simulate(7, 5.0);
        let b = simulate(7, 5.0);
        assert_eq!(a, b);
        let c = simulate(8, 5.0);
        assert_ne!(a.snapshots, c.snapshots);
    }

    #[test]
    fn snapshots_cover_the_duration() {
        for (d, n) in [(1.0, 61), (5.0, 301), (20.0, 1201), (1.01, 62)] {
            let run = simulate(1, d);
            assert_eq!(run.snapshots.len(), n, "{d}");
            assert_eq!(run.plans.len(), n);
            assert!(run.end() >= d - 1e-9 && run.end() < d + DT);
            assert_eq!(run.snapshots[0].t, 0.0);
        }
        assert_eq!(simulate(1, 0.0).snapshots.len(), 1);
        assert_eq!(simulate(1, f64::NAN).snapshots.len(), 1);
    }

    #[test]
    fn physics_stays_within_limits() {
        for seed in 0..6 {
            for d in [1.0, 5.0, 20.0] {
                check_physics(&simulate(seed, d));
            }
        }
    }

    #[test]
    fn the_script_happens() {
        let mut restarts = 0;
        for seed in 0..6 {
            let run = simulate(seed, 20.0);
            let kicked = run.passes.len();
            let received = run.passes.iter().filter(|p| p.received.is_some()).count();
            assert!(
                kicked >= 3 && received >= 2,
                "seed {seed}: {kicked} passes, {received} received"
            );
            assert!(run.touches.len() >= 2 * received);
            // The shot due at 12 s goes out.
            let out = run
                .outs
                .iter()
                .find(|o| o.t >= 12.0)
                .unwrap_or_else(|| panic!("seed {seed}: the ball never went out: {:?}", run.outs));
            assert!(out.t < 16.0, "seed {seed}: out at {}", out.t);
            let on_line = (out.exit.x.abs() - FIELD_LENGTH / 2.0).abs() < 1e-9
                || (out.exit.y.abs() - FIELD_WIDTH / 2.0).abs() < 1e-9;
            assert!(on_line, "{:?}", out.exit);
            assert!(out.last_touch.is_some());
            // One yellow robot comes too close during that stop.
            let end = out.restart.unwrap_or(run.end());
            let close = run
                .too_close
                .iter()
                .find(|v| {
                    v.team == Team::Yellow && v.start >= out.t && v.start < end && v.end - v.start > 0.5
                })
                .unwrap_or_else(|| panic!("seed {seed}: nobody too close: {:?}", run.too_close));
            assert!(close.start >= out.t + STOP_GRACE - 1e-9 && close.closest < STOP_DISTANCE);
            if let Some(restart) = out.restart {
                assert!(restart > out.t + STOP_LENGTH && restart <= run.end());
                restarts += 1;
            }
            assert!(run.plans.iter().any(|p| p.phase == Phase::BallPlacement));
        }
        assert!(restarts >= 3, "only {restarts} of 6 runs restarted");
    }

    #[test]
    fn long_and_odd_runs_are_valid() {
        for (seed, d) in [(3, 60.0), (u64::MAX, 2.5), (12345, 9.0)] {
            let run = simulate(seed, d);
            check_physics(&run);
        }
    }

    #[test]
    fn at_interpolates_and_clamps() {
        let run = simulate(2, 2.0);
        let s = &run.snapshots;
        assert_eq!(run.at(-1.0), s[0]);
        assert_eq!(run.at(f64::NAN), s[0]);
        assert_eq!(run.at(100.0), *s.last().unwrap());
        assert_eq!(run.at(s[10].t).robots[3].pos, s[10].robots[3].pos);
        let mid = run.at((s[10].t + s[11].t) / 2.0);
        let want = s[10].robots[3].pos.lerp(s[11].robots[3].pos, 0.5);
        assert!((mid.robots[3].pos - want).length() < 1e-9);
        assert!((mid.t - (s[10].t + s[11].t) / 2.0).abs() < 1e-12);
        assert_eq!(mid.robots.len(), ROBOTS);
    }
}
