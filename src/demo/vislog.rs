//! The demo's visualization log, as the robots' software would write it.
//!
//! One instantaneous frame per simulation step (60 Hz), on an epoch clock
//! (`log_t0 + sim time`), with the drawings of the thesis's robot-soccer
//! chapters at four levels of detail:
//!
//! | level | entity | drawing |
//! |---|---|---|
//! | 0 | `robots/<team>/<n>` | team circle and heading line (thesis 4.8.2) |
//! | 0 | `ball` | orange disc |
//! | 0 | `autoref/stop` | grey 500 mm circle around the ball while the game is stopped (6.5.5) |
//! | 1 | `labels` | robot numbers, captions (placement, shot; one over all time: the attack direction) |
//! | 1 | `autoref/stop` | the ball placement point |
//! | 1 | `robots/<team>/<n>` | velocity arrows |
//! | 2 | `attack/zones` | offence zones and their default locations (4.8.3) |
//! | 2 | `attack/passes` | planned receiver and ball locations, kick direction, shot aim (4.8.4–4.8.5) |
//! | 2 | `ball` | predicted trajectory to where the ball stops (4.8.5) |
//! | 3 | `planner/rrt`, `planner/path`, `planner/simplified` | blue 3's RRT, its path and simplified path (chapter 2) |
//!
//! and persistent frames (`autoref/events`, shapes at level 0 and texts at
//! level 1) for what the autoref saw (thesis 6.5): each ball touch (a
//! circle for 0.5 s), the ball going out (the line from the last touch to
//! the exit point, shown from that touch on: the future brought into
//! earlier frames; and the crossed field line near the exit with "ball
//! out", from the moment it is out; both until the restart or the end), and
//! robots too close to the ball during the stop (red 500 mm circle and a
//! line to the robot, over the violation).
//!
//! Entities form a DAG: the attacking blue robots are children of both
//! `robots/blue` and `attack`. The RRT is re-planned every 0.25 s from the
//! robot's position towards its target around the other robots, and the
//! latest tree is drawn in every frame. The file is zstd-compressed (the
//! tree repeats for 15 frames and compresses to almost nothing).

use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::sim::{self, ATTACKERS, BALL_DECEL, Phase, ROBOTS, Run, robot_bounds};
use super::world::{BALL_RADIUS, FIELD_LENGTH, FIELD_WIDTH, ROBOT_RADIUS, Snapshot, Team};
use crate::geom::Vec2;
use crate::geom::vec2::{dir, distance_to_segment, rotate, unit};
use crate::log::{DisplayHints, Header, LogError, MarkerKind, Rgba, TimeUnit, Writer, WriterOptions};

/// The log's name in its header.
pub const LOG_NAME: &str = "demo: SSL Division B";
/// The blue team's colour.
pub const BLUE: Rgba = Rgba::from_rgb(0x1e64ff);
/// The yellow team's colour.
pub const YELLOW: Rgba = Rgba::from_rgb(0xffd200);
/// The ball's colour.
pub const ORANGE: Rgba = Rgba::from_rgb(0xff8000);
/// The blue robot whose path planner is logged.
pub const PLANNED_ROBOT: u8 = 3;
/// Simulation steps between two runs of the RRT (0.25 s at 60 Hz).
pub const RRT_PERIOD: usize = 15;
/// The most nodes an RRT grows.
pub const RRT_MAX_NODES: usize = 200;

const GREEN: Rgba = Rgba::from_rgb(0x20d040);
const RED: Rgba = Rgba::from_rgb(0xff2020);
const GREY: Rgba = Rgba::from_rgb(0xc0c0c0);
const WHITE: Rgba = Rgba::WHITE;

/// What [`write_log`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogStats {
    pub instant_frames: u64,
    pub persistent_frames: u64,
    pub primitives: u64,
}

/// The entity of a robot, e.g. `robots/blue/3`.
pub fn robot_entity(team: Team, id: u8) -> String {
    format!("robots/{}/{id}", team.name())
}

fn team_color(team: Team) -> Rgba {
    match team {
        Team::Blue => BLUE,
        Team::Yellow => YELLOW,
    }
}

/// Declares the entity DAG.
fn declare_entities<W: std::io::Write>(w: &mut Writer<W>, names: &[String]) {
    w.declare_entity("robots", &[]);
    w.declare_entity("robots/blue", &["robots"]);
    w.declare_entity("robots/yellow", &["robots"]);
    w.declare_entity("ball", &[]);
    w.declare_entity("attack", &[]);
    w.declare_entity("attack/zones", &["attack"]);
    w.declare_entity("attack/passes", &["attack"]);
    for (i, name) in names.iter().enumerate() {
        let (team, id) = sim::robot_of(i);
        if team == Team::Blue && ATTACKERS.contains(&id) {
            w.declare_entity(name, &["robots/blue", "attack"]);
        } else {
            w.declare_entity(
                name,
                &[if team == Team::Blue {
                    "robots/blue"
                } else {
                    "robots/yellow"
                }],
            );
        }
    }
    w.declare_entity("planner", &[]);
    for e in ["planner/rrt", "planner/path", "planner/simplified"] {
        w.declare_entity(e, &["planner"]);
    }
    w.declare_entity("autoref", &[]);
    w.declare_entity("autoref/events", &["autoref"]);
    w.declare_entity("autoref/stop", &["autoref"]);
    w.declare_entity("labels", &[]);
}

/// A persistent frame's drawing, written once the autoref knows it.
enum Event {
    Touch(sim::Touch),
    /// The line from the last touch to the exit point.
    OutPath(sim::BallOut),
    /// The crossed line at the exit point.
    OutLine(sim::BallOut),
    TooClose(sim::TooClose),
}

/// Writes the log of `run` to `path`, times `log_t0 + sim time` (seconds
/// since the epoch).
pub fn write_log(run: &Run, path: &Path, log_t0: f64) -> Result<LogStats, LogError> {
    let end = run.end();
    let b = Vec2::new(
        FIELD_LENGTH / 2.0 + super::world::BOUNDARY,
        FIELD_WIDTH / 2.0 + super::world::BOUNDARY,
    );
    let header = Header {
        name: LOG_NAME.to_owned(),
        time_unit: TimeUnit::EpochSeconds,
        world_unit: "mm".to_owned(),
        hints: DisplayHints {
            instant_threshold: Some(1.5 * run.dt),
            cycle: None,
            default_max_level: None,
            world_bounds: Some((Vec2::new(-b.x, -b.y), b)),
        },
    };
    let opts = WriterOptions {
        zstd_level: Some(3),
        // The chipped ball, the goals' frames and the frustum (`air`).
        heights: true,
        ..WriterOptions::default()
    };
    let mut w = Writer::create_with_options(path, header, opts)?;
    let names: Vec<String> = (0..ROBOTS)
        .map(|i| {
            let (team, id) = sim::robot_of(i);
            robot_entity(team, id)
        })
        .collect();
    declare_entities(&mut w, &names);
    super::air::declare_entities(&mut w, &names[sim::robot_index(Team::Blue, PLANNED_ROBOT)]);

    // Persistent frames in the order the autoref learns of them.
    let mut events: Vec<(f64, Event)> = Vec::new();
    events.extend(run.touches.iter().map(|t| (t.t, Event::Touch(*t))));
    for out in &run.outs {
        events.push((out.t, Event::OutPath(*out)));
        events.push((out.t, Event::OutLine(*out)));
    }
    events.extend(run.too_close.iter().map(|v| (v.end, Event::TooClose(*v))));
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut next_event = 0;

    w.persistent(f64::NEG_INFINITY, f64::INFINITY)
        .text(
            (-FIELD_LENGTH / 2.0, FIELD_WIDTH / 2.0 + 80.0),
            "blue attacks towards +x",
            150.0,
        )
        .world_units()
        .color(BLUE)
        .entity("labels")
        .level(1);
    super::air::draw_goals(&mut w);
    let mut persistent = 1;

    let mut planner = Planner::new(run.seed);
    for (k, (snap, plan)) in run.snapshots.iter().zip(&run.plans).enumerate() {
        let t = log_t0 + snap.t;
        w.instant(t);
        draw_world(&mut w, snap, plan, &names);
        draw_offence(&mut w, snap, plan);
        if k % RRT_PERIOD == 0 {
            let me = sim::robot_index(Team::Blue, PLANNED_ROBOT);
            let obstacles: Vec<Vec2> = snap
                .robots
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != me)
                .map(|(_, r)| r.pos)
                .collect();
            planner.plan(snap.robots[me].pos, plan.targets[me], &obstacles);
        }
        planner.draw(&mut w);
        super::air::draw_moment(&mut w, run, k);
        while let Some((known, e)) = events.get(next_event)
            && *known <= snap.t
        {
            write_event(&mut w, e, log_t0, end);
            persistent += 1;
            next_event += 1;
        }
    }
    for (_, e) in &events[next_event..] {
        write_event(&mut w, e, log_t0, end);
        persistent += 1;
    }
    w.end_frame();
    let (frames, primitives) = w.counts();
    w.finish()?;
    let instant_frames = run.snapshots.len() as u64;
    debug_assert!(frames <= instant_frames + persistent);
    Ok(LogStats {
        instant_frames,
        // Frames with the same span are written as one.
        persistent_frames: frames - instant_frames,
        primitives,
    })
}

/// Where to anchor `text` (`size` mm high) beside `p`, `gap` away: on the
/// side towards the field's centre (in y away from it when `flip`), inside
/// the carpet.
fn label_anchor(p: Vec2, text: &str, size: f64, gap: f64, flip: bool) -> Vec2 {
    let width = 0.6 * size * text.chars().count() as f64;
    let half = Vec2::new(
        FIELD_LENGTH / 2.0 + super::world::BOUNDARY,
        FIELD_WIDTH / 2.0 + super::world::BOUNDARY,
    );
    let x = if p.x > 0.0 { p.x - gap - width } else { p.x + gap };
    let y = if (p.y > 0.0) != flip {
        p.y - gap - size
    } else {
        p.y + gap
    };
    Vec2::new(
        x.clamp(-half.x, (half.x - width).max(-half.x)),
        y.clamp(-half.y, half.y - size),
    )
}

/// An arrow from `from` to `to`: the shaft and a two-stroke head.
fn arrow<W: std::io::Write>(w: &mut Writer<W>, from: Vec2, to: Vec2, color: Rgba, entity: &str, level: i32) {
    w.line(from, to)
        .color(color)
        .thickness(2.0)
        .entity(entity)
        .level(level);
    let back = unit(from - to) * 70.0;
    w.polyline([to + rotate(back, 0.45), to, to + rotate(back, -0.45)])
        .color(color)
        .thickness(2.0)
        .entity(entity)
        .level(level);
}

/// Robots, ball, labels, velocities and the stop circle.
fn draw_world<W: std::io::Write>(w: &mut Writer<W>, snap: &Snapshot, plan: &sim::Plan, names: &[String]) {
    let ball = snap.ball.pos;
    for (r, name) in snap.robots.iter().zip(names) {
        let c = team_color(r.team);
        w.circle(r.pos, ROBOT_RADIUS).color(c).thickness(2.5).entity(name);
        w.line(r.pos, r.pos + dir(r.heading) * ROBOT_RADIUS)
            .color(c)
            .thickness(2.5)
            .entity(name);
    }
    w.circle(ball, 50.0)
        .color(ORANGE)
        .fill(ORANGE.with_alpha(0x70))
        .thickness(2.0)
        .entity("ball");
    if plan.phase != Phase::Running {
        w.circle(ball, sim::STOP_DISTANCE)
            .color(GREY.with_alpha(0xc0))
            .thickness(2.0)
            .entity("autoref/stop");
    }
    for (r, name) in snap.robots.iter().zip(names) {
        let c = team_color(r.team);
        w.text(
            r.pos + Vec2::new(ROBOT_RADIUS + 10.0, ROBOT_RADIUS + 10.0),
            &r.id.to_string(),
            150.0,
        )
        .world_units()
        .color(c)
        .entity("labels")
        .level(1);
        if r.vel.length() > 150.0 {
            let from = r.pos + unit(r.vel) * ROBOT_RADIUS;
            arrow(w, from, from + r.vel * 0.4, c.with_alpha(0xd0), name, 1);
        }
    }
    if let Some((placer, point)) = plan.placement {
        w.point(point, MarkerKind::Cross, 14.0)
            .color(WHITE)
            .thickness(2.0)
            .entity("autoref/stop")
            .level(1);
        let text = format!("placement: yellow {placer}");
        w.text(label_anchor(point, &text, 120.0, 120.0, false), &text, 120.0)
            .world_units()
            .color(WHITE)
            .entity("labels")
            .level(1);
    }
    // Where the ball will stop (until a wall).
    let v = snap.ball.vel;
    let speed = v.length();
    if plan.ball_holder.is_none() && speed > 100.0 {
        let mut stop = ball + unit(v) * (speed * speed / (2.0 * BALL_DECEL));
        let bb = Vec2::new(
            FIELD_LENGTH / 2.0 + super::world::BOUNDARY - BALL_RADIUS,
            FIELD_WIDTH / 2.0 + super::world::BOUNDARY - BALL_RADIUS,
        );
        // Cut at the walls.
        let mut s: f64 = 1.0;
        let d = stop - ball;
        for (p, q, m) in [(ball.x, d.x, bb.x), (ball.y, d.y, bb.y)] {
            if (p + q).abs() > m && q.abs() > 1e-9 {
                s = s.min(((q.signum() * m - p) / q).max(0.0));
            }
        }
        stop = ball + d * s;
        w.line(ball, stop)
            .color(RED)
            .thickness(2.0)
            .entity("ball")
            .level(2);
        w.circle(stop, 40.0)
            .color(RED)
            .thickness(2.0)
            .entity("ball")
            .level(2);
    }
}

/// Zones, pass plans and the shot aim (thesis 4.8.3–4.8.5).
fn draw_offence<W: std::io::Write>(w: &mut Writer<W>, snap: &Snapshot, plan: &sim::Plan) {
    let Some(off) = plan.offence else {
        return;
    };
    for z in &off.zones {
        w.rectangle((z.min + z.max) * 0.5, z.max - z.min, 0.0)
            .color(GREEN.with_alpha(0xc0))
            .fill(GREEN.with_alpha(0x30))
            .thickness(2.0)
            .entity("attack/zones")
            .level(2);
        w.point(z.default, MarkerKind::Cross, 12.0)
            .color(GREEN)
            .thickness(2.0)
            .entity("attack/zones")
            .level(2);
        let r = snap.robots[usize::from(z.robot)].pos;
        w.line(r, z.default)
            .color(GREEN.with_alpha(0x60))
            .thickness(1.0)
            .entity("attack/zones")
            .level(2);
    }
    let passer_pos = |id: u8| snap.robots[usize::from(id)].pos;
    if let Some(p) = off.pass {
        w.circle(p.receiver_target, ROBOT_RADIUS)
            .color(GREEN)
            .thickness(2.5)
            .entity("attack/passes")
            .level(2);
        w.circle(p.ball_target, 50.0)
            .color(RED)
            .thickness(2.5)
            .entity("attack/passes")
            .level(2);
        if !p.kicked {
            let from = passer_pos(p.passer);
            let to = from + unit(p.ball_target - from) * 700.0;
            w.line(from, to)
                .color(GREEN)
                .thickness(2.0)
                .entity("attack/passes")
                .level(2);
            w.line(from, snap.ball.pos)
                .color(BLUE)
                .thickness(2.0)
                .entity("attack/passes")
                .level(2);
        }
    }
    if let Some(aim) = off.shot {
        w.point(aim, MarkerKind::Cross, 16.0)
            .color(RED)
            .thickness(2.5)
            .entity("attack/passes")
            .level(2);
        w.line(snap.ball.pos, aim)
            .color(RED.with_alpha(0x90))
            .thickness(1.5)
            .entity("attack/passes")
            .level(2);
        w.text(aim + Vec2::new(-700.0, 120.0), "shot", 120.0)
            .world_units()
            .color(RED)
            .entity("labels")
            .level(1);
    }
}

fn write_event<W: std::io::Write>(w: &mut Writer<W>, e: &Event, t0: f64, end: f64) {
    match e {
        Event::Touch(t) => {
            let c = team_color(t.team);
            w.persistent(t0 + t.t, t0 + (t.t + 0.5).min(end));
            w.circle(t.pos, 150.0)
                .color(c)
                .thickness(3.0)
                .entity("autoref/events");
            let text = format!("touch {} {}", t.team.name(), t.id);
            w.text(label_anchor(t.pos, &text, 110.0, 170.0, false), &text, 110.0)
                .world_units()
                .color(c)
                .entity("autoref/events")
                .level(1);
        }
        Event::OutPath(o) => {
            let until = t0 + o.restart.unwrap_or(end);
            let (from, start) = match o.last_touch {
                Some(t) => (t.pos, t.t),
                None => (o.exit, o.t),
            };
            w.persistent(t0 + start, until);
            w.line(from, o.exit)
                .color(RED.with_alpha(0xd0))
                .thickness(2.0)
                .entity("autoref/events");
            w.circle(o.exit, 60.0)
                .color(RED)
                .thickness(2.0)
                .entity("autoref/events");
        }
        Event::OutLine(o) => {
            let until = t0 + o.restart.unwrap_or(end);
            let (a, b) = o.line;
            let along = unit(b - a);
            let len = (b - a).length();
            let s = (o.exit - a).dot(along);
            let (s0, s1) = ((s - 600.0).max(0.0), (s + 600.0).min(len));
            w.persistent(t0 + o.t, until);
            w.line(a + along * s0, a + along * s1)
                .color(RED)
                .world_thickness(40.0)
                .entity("autoref/events");
            let who = o.last_touch.map_or(String::new(), |t| {
                format!(" (last touch {} {})", t.team.name(), t.id)
            });
            let text = format!("ball out{who}");
            w.text(label_anchor(o.exit, &text, 140.0, 250.0, false), &text, 140.0)
                .world_units()
                .color(RED)
                .entity("autoref/events")
                .level(1);
        }
        Event::TooClose(v) => {
            w.persistent(t0 + v.start, t0 + v.end);
            w.circle(v.ball, sim::STOP_DISTANCE)
                .color(RED)
                .thickness(3.0)
                .entity("autoref/events");
            w.line(v.ball, v.robot)
                .color(RED)
                .thickness(2.0)
                .entity("autoref/events");
            let text = format!(
                "{} {} too close: {:.0} mm",
                v.team.name(),
                v.id,
                v.closest.max(0.0)
            );
            w.text(
                label_anchor(v.robot, &text, 120.0, ROBOT_RADIUS + 40.0, true),
                &text,
                120.0,
            )
            .world_units()
            .color(RED)
            .entity("autoref/events")
            .level(1);
        }
    }
}

// ---------------------------------------------------------------- planner

/// One run of the RRT (thesis Algorithm 1) and its results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tree {
    /// The states found; the first is the start.
    pub nodes: Vec<Vec2>,
    /// The parent of each node (the start is its own parent).
    pub parent: Vec<usize>,
    /// Start to goal (or to the node nearest the goal when it was not reached).
    pub path: Vec<Vec2>,
    /// The path with every state skipped that a straight line can skip
    /// (thesis 2.2.7).
    pub simplified: Vec<Vec2>,
    pub goal: Vec2,
}

/// Clearance the planner keeps between robot centres.
const PLAN_CLEARANCE: f64 = 2.0 * ROBOT_RADIUS + 20.0;
/// How far one extension goes (mm).
const RRT_STEP: f64 = 220.0;
/// A state this close to the goal reaches it.
const RRT_GOAL_TOLERANCE: f64 = 120.0;
/// The tree keeps exploring to at least this many nodes even when the goal
/// is near, so that the drawing shows the search.
const RRT_MIN_NODES: usize = 40;

fn clear(a: Vec2, b: Vec2, obstacles: &[Vec2]) -> bool {
    obstacles
        .iter()
        .all(|&o| distance_to_segment(o, a, b) > PLAN_CLEARANCE)
}

/// Plans from `start` to `goal` around discs at `obstacles` (robot
/// centres). Obstacles that already contain the start or the goal are
/// ignored, as a real planner must to get out of them.
pub fn rrt(start: Vec2, goal: Vec2, obstacles: &[Vec2], rng: &mut StdRng) -> Tree {
    let obstacles: Vec<Vec2> = obstacles
        .iter()
        .copied()
        .filter(|&o| (o - start).length() > PLAN_CLEARANCE && (o - goal).length() > PLAN_CLEARANCE)
        .collect();
    let bounds = robot_bounds();
    let lo = Vec2::new(
        (start.x.min(goal.x) - 1000.0).max(-bounds.x),
        (start.y.min(goal.y) - 1000.0).max(-bounds.y),
    );
    let hi = Vec2::new(
        (start.x.max(goal.x) + 1000.0).min(bounds.x),
        (start.y.max(goal.y) + 1000.0).min(bounds.y),
    );
    let mut nodes = vec![start];
    let mut parent = vec![0];
    let mut reached = ((goal - start).length() <= RRT_GOAL_TOLERANCE).then_some(0);
    for _ in 0..RRT_MAX_NODES * 10 {
        if nodes.len() >= RRT_MAX_NODES || (reached.is_some() && nodes.len() >= RRT_MIN_NODES) {
            break;
        }
        let sample = if rng.random_bool(0.1) {
            goal
        } else if lo.x < hi.x && lo.y < hi.y {
            Vec2::new(rng.random_range(lo.x..hi.x), rng.random_range(lo.y..hi.y))
        } else {
            goal
        };
        let (near, dist) = nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| (i, (n - sample).length()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((0, 0.0));
        if dist < 1.0 {
            continue;
        }
        let from = nodes[near];
        let new = from + unit(sample - from) * dist.min(RRT_STEP);
        if clear(from, new, &obstacles) {
            nodes.push(new);
            parent.push(near);
            if reached.is_none() && (new - goal).length() <= RRT_GOAL_TOLERANCE {
                reached = Some(nodes.len() - 1);
            }
        }
    }
    let last = reached.unwrap_or_else(|| {
        nodes
            .iter()
            .enumerate()
            .min_by(|a, b| (*a.1 - goal).length().total_cmp(&(*b.1 - goal).length()))
            .map_or(0, |(i, _)| i)
    });
    let mut path = vec![nodes[last]];
    let mut i = last;
    while i != 0 {
        i = parent[i];
        path.push(nodes[i]);
    }
    path.reverse();
    if reached.is_some() && path.last().is_some_and(|&p| p != goal) {
        path.push(goal);
    }
    let simplified = simplify(&path, &obstacles);
    Tree {
        nodes,
        parent,
        path,
        simplified,
        goal,
    }
}

/// From each kept state, the last state of the path reachable in a
/// straight line (Bruce and Veloso's simplification, applied repeatedly).
fn simplify(path: &[Vec2], obstacles: &[Vec2]) -> Vec<Vec2> {
    let Some(&first) = path.first() else {
        return Vec::new();
    };
    let mut out = vec![first];
    let mut i = 0;
    while i + 1 < path.len() {
        let j = (i + 1..path.len())
            .rev()
            .find(|&j| clear(path[i], path[j], obstacles))
            .unwrap_or(i + 1);
        out.push(path[j]);
        i = j;
    }
    out
}

/// Blue 3's path planner: the latest tree and its drawing.
struct Planner {
    seed: u64,
    runs: u64,
    tree: Option<Tree>,
}

impl Planner {
    fn new(seed: u64) -> Self {
        Planner {
            seed,
            runs: 0,
            tree: None,
        }
    }

    fn plan(&mut self, start: Vec2, goal: Vec2, obstacles: &[Vec2]) {
        let mut rng = StdRng::seed_from_u64(self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ self.runs);
        self.runs += 1;
        self.tree = Some(rrt(start, goal, obstacles, &mut rng));
    }

    fn draw<W: std::io::Write>(&self, w: &mut Writer<W>) {
        let Some(tree) = &self.tree else {
            return;
        };
        let pale = Rgba::from_rgb(0xd8e4ff).with_alpha(0x90);
        for (i, &n) in tree.nodes.iter().enumerate().skip(1) {
            let p = tree.nodes[tree.parent[i]];
            w.line(p, n)
                .color(pale)
                .thickness(1.0)
                .entity("planner/rrt")
                .level(3);
        }
        w.point(tree.goal, MarkerKind::Cross, 12.0)
            .color(Rgba::from_rgb(0xff60c0))
            .thickness(2.0)
            .entity("planner/path")
            .level(3);
        if tree.path.len() >= 2 {
            w.polyline(tree.path.iter().copied())
                .color(Rgba::from_rgb(0xff60c0))
                .thickness(2.0)
                .entity("planner/path")
                .level(3);
        }
        if tree.simplified.len() >= 2 {
            w.polyline(tree.simplified.iter().copied())
                .color(Rgba::from_rgb(0x00e0ff))
                .thickness(3.5)
                .entity("planner/simplified")
                .level(3);
            w.circle(tree.simplified[1], 60.0)
                .color(Rgba::from_rgb(0x00e0ff))
                .thickness(3.0)
                .entity("planner/simplified")
                .level(3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{FrameTime, Shape};
    use crate::select::{Filter, Index};

    const T0: f64 = 1_719_835_200.25;

    #[test]
    fn the_log_holds_the_run() {
        let run = sim::simulate(4, 20.0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo.ulog");
        let stats = write_log(&run, &path, T0).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 10 << 20, "{size} bytes");
        let log = crate::formats::load_log(&path).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(log.header.name, LOG_NAME);
        assert_eq!(log.header.world_unit, "mm");

        // The entity DAG.
        let e = |name: &str| {
            log.entities
                .get(name)
                .unwrap_or_else(|| panic!("no entity {name}"))
        };
        let parents = |name: &str| -> Vec<&str> {
            log.entities
                .parents(e(name))
                .iter()
                .map(|&p| log.entities.name(p))
                .collect()
        };
        assert_eq!(parents("robots/blue/3"), ["robots/blue", "attack"]);
        assert_eq!(parents("robots/yellow/0"), ["robots/yellow"]);
        assert_eq!(parents("robots/blue"), ["robots"]);
        assert_eq!(parents("planner/rrt"), ["planner"]);
        assert_eq!(parents("autoref/events"), ["autoref"]);

        // Frames and counts.
        let instants = log.frames.iter().filter(|f| !f.time.is_persistent()).count();
        let persistents = log.frames.len() - instants;
        assert_eq!(instants, run.snapshots.len());
        assert_eq!(stats.instant_frames, instants as u64);
        assert_eq!(stats.persistent_frames, persistents as u64);
        assert_eq!(stats.primitives, log.primitives.len() as u64);
        assert!(persistents > run.touches.len(), "{persistents} persistent frames");
        let (lo, hi) = log.time_range().unwrap();
        assert!(
            (lo - T0).abs() < 1e-6 && (hi - (T0 + run.end())).abs() < 1e-6,
            "{lo} {hi}"
        );
        for level in 0..=3 {
            assert!(log.primitives.iter().any(|p| p.level == level), "level {level}");
        }
        assert!(log.primitives.iter().all(|p| (0..=3).contains(&p.level)));
        let events = e("autoref/events");
        let out = run.outs[0];
        let out_line = log.frames.iter().any(|f| {
            f.time
                == FrameTime::Persistent {
                    start: T0 + out.t,
                    end: T0 + out.restart.unwrap_or(run.end()),
                }
                && log.frame_primitives(f).iter().any(|p| p.entity == events)
        });
        assert!(out_line, "no ball-out frame");
        let close = run.too_close.iter().find(|v| v.team == Team::Yellow).unwrap();
        let close_frame = log.frames.iter().any(|f| {
            f.time
                == FrameTime::Persistent {
                    start: T0 + close.start,
                    end: T0 + close.end,
                }
        });
        assert!(close_frame, "no too-close frame");

        // Selection puts the robot circles where the simulation had them.
        let index = Index::new(&log);
        let filter = Filter::all(&log, 0);
        for k in [0, 300, 777, run.snapshots.len() - 1] {
            let snap = &run.snapshots[k];
            let shown = index.select(
                &log,
                crate::time::LogTime(T0 + snap.t),
                index.default_threshold(),
                &filter,
            );
            assert!(shown.iter().all(|p| p.level == 0));
            for r in &snap.robots {
                let ent = e(&robot_entity(r.team, r.id));
                let circle = shown.iter().find_map(|p| match p.shape {
                    Shape::Circle { center, radius } if p.entity == ent => Some((center, radius)),
                    _ => None,
                });
                let (center, radius) = circle.unwrap_or_else(|| panic!("no circle for {ent:?} at {k}"));
                assert!((center - r.pos).length() < 1e-9 && radius == ROBOT_RADIUS);
            }
        }
        // At level 3 the planner is there too.
        let all = Filter::all(&log, 3);
        let shown = index.select(
            &log,
            crate::time::LogTime(T0 + 5.0),
            index.default_threshold(),
            &all,
        );
        let rrt = e("planner/rrt");
        assert!(shown.iter().filter(|p| p.entity == rrt).count() >= RRT_MIN_NODES - 1);
    }

    #[test]
    fn rrt_paths_avoid_obstacles() {
        let mut rng = StdRng::seed_from_u64(3);
        let obstacles = [Vec2::new(0.0, 0.0), Vec2::new(0.0, 300.0), Vec2::new(0.0, -300.0)];
        for _ in 0..20 {
            let tree = rrt(
                Vec2::new(-1500.0, 0.0),
                Vec2::new(1500.0, 100.0),
                &obstacles,
                &mut rng,
            );
            assert!(tree.nodes.len() <= RRT_MAX_NODES && tree.nodes.len() >= RRT_MIN_NODES);
            assert_eq!(tree.path.first(), Some(&Vec2::new(-1500.0, 0.0)));
            assert_eq!(tree.path.last(), Some(&Vec2::new(1500.0, 100.0)));
            assert_eq!(tree.simplified.last(), tree.path.last());
            assert!(tree.simplified.len() <= tree.path.len());
            for path in [&tree.path, &tree.simplified] {
                for seg in path.windows(2) {
                    assert!(clear(seg[0], seg[1], &obstacles), "{seg:?}");
                }
            }
            for (i, &n) in tree.nodes.iter().enumerate() {
                assert!(clear(tree.nodes[tree.parent[i]], n, &obstacles));
            }
        }
        // Start at the goal: still a tree, and a path.
        let tree = rrt(Vec2::ZERO, Vec2::new(50.0, 0.0), &[], &mut rng);
        assert_eq!(tree.path.len(), 2);
        assert_eq!(tree.simplified, tree.path);
    }
}
