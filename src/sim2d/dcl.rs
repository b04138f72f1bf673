//! librcsc debug-client world models (`.dcl`): what an agent believed each
//! step, as its `DebugClient` wrote it for soccerwindow2. Two lines a step:
//!
//! ```text
//! %% step 274
//! %% debug [((debug (format-version 5)) (time 274,1) (s r 9 13 x y vx vy body neck (c "…"))
//!   (b x y [vx vy] (c "…")) (t unum type x y [(bd body)] [(pt dir)] (c "…")) (o …)
//!   (u x y …) (ut x y …) (uo x y …) (say "…") (hear …) (target-teammate n)
//!   (target-point x y) (message "…") (line x1 y1 x2 y2 ["colour"])
//!   (tri x1 y1 x2 y2 x3 y3 ["colour"]) (rect left top right bottom ["colour"])
//!   (circle x y r ["colour"]))]
//! ```
//!
//! `s` is the agent itself (side, number, player type, position, velocity,
//! body direction, neck relative to the body), `b` the ball, `t`/`o` a
//! teammate/opponent whose number it knows, `ut`/`uo`/`u` one whose number
//! (or side) it does not; a comment starting with `G` marks a goalie.
//! Everything is in the agent's team frame (its team attacks +x; the
//! game's frame mirrored for a right-side agent), positions in metres,
//! directions in degrees clockwise on screen. [`read_world_model`] keeps
//! it so; [`to_log`] draws it in underlay's world frame (see
//! [`super::dlog`] for the conversion and the entities) and, given the
//! game log, the error of each belief. A step that does not parse is
//! skipped with a warning naming its line.

use std::collections::HashMap;

use crate::geom::Vec2;
use crate::log::{FrameTime, Log, MarkerKind, Primitive, Rgba, Shape, Style};
use crate::sexp::lines;
use crate::sexp::{Parser, Sexp};

use super::dlog::{AgentEntities, DebugLogOptions, angle_to_world, colour, header, to_world};
use super::game::Game;
use super::{GameTime, Side, TimeMapper, Warning, Warnings, clock, parse_game_time, parse_u32};

/// Which players a belief is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Team {
    /// `t`: a teammate of known number.
    Teammate,
    /// `o`: an opponent of known number.
    Opponent,
    /// `ut`: a teammate of unknown number.
    UnknownTeammate,
    /// `uo`: an opponent of unknown number.
    UnknownOpponent,
    /// `u`: a player of unknown side.
    Unknown,
}

/// The agent's belief about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfBelief {
    pub side: Side,
    pub unum: u8,
    pub player_type: i32,
    pub pos: [f64; 2],
    pub vel: [f64; 2],
    /// Degrees.
    pub body: f64,
    /// Degrees, relative to the body.
    pub neck: f64,
}

/// The agent's belief about the ball.
#[derive(Clone, Debug, PartialEq)]
pub struct BallBelief {
    pub pos: [f64; 2],
    pub vel: Option<[f64; 2]>,
}

/// The agent's belief about another player.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerBelief {
    pub team: Team,
    pub unum: Option<u8>,
    /// −1 when unknown.
    pub player_type: Option<i32>,
    pub pos: [f64; 2],
    /// Degrees, when the body direction is believed.
    pub body: Option<f64>,
    /// Degrees, when it is seen pointing.
    pub pointto: Option<f64>,
    pub goalie: bool,
    /// The comment (`u3p1v1(…)f1,19`: counts since seen, …).
    pub comment: String,
}

/// A debug-client drawing of the step.
#[derive(Clone, Debug, PartialEq)]
pub enum Drawing {
    Line {
        from: [f64; 2],
        to: [f64; 2],
        colour: Option<Rgba>,
    },
    Triangle {
        points: [[f64; 2]; 3],
        colour: Option<Rgba>,
    },
    /// Left, top, right, bottom.
    Rect { ltrb: [f64; 4], colour: Option<Rgba> },
    Circle {
        center: [f64; 2],
        radius: f64,
        colour: Option<Rgba>,
    },
}

/// One step's world model.
#[derive(Clone, Debug, PartialEq)]
pub struct BeliefStep {
    /// The time as the agent logged it.
    pub time: GameTime,
    pub me: Option<SelfBelief>,
    pub ball: Option<BallBelief>,
    pub players: Vec<PlayerBelief>,
    pub target_point: Option<[f64; 2]>,
    pub message: Option<String>,
    pub drawings: Vec<Drawing>,
}

/// Every step of a `.dcl` file, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldModelLog {
    pub steps: Vec<BeliefStep>,
    pub warnings: Vec<Warning>,
    /// Lines passed over as not the format.
    pub skipped: crate::log::Skipped,
}

/// Why bytes are not a debug-client world model file.
#[derive(Debug, thiserror::Error)]
pub enum DclError {
    #[error("not a librcsc debug-client file: no `%% debug [...]` line with a (time C,S)")]
    NotADcl,
}

/// Whether `head` starts like a `.dcl` file (`%% step ` or `%% debug [`).
pub fn sniff(head: &[u8]) -> bool {
    let h = head.trim_ascii_start();
    h.starts_with(b"%% step ") || h.starts_with(b"%% debug [")
}

/// Reads a `.dcl` file (decompressed bytes).
pub fn read_world_model(bytes: &[u8]) -> Result<WorldModelLog, DclError> {
    let mut parser = Parser::new();
    let mut warnings = Warnings::default();
    let mut steps = Vec::new();
    let mut step_cycle: Option<u32> = None;
    let mut skipped = crate::log::Skipped::default();
    for (line, offset, text) in lines(bytes) {
        let text = text.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if let Some(n) = text.strip_prefix(b"%% step ") {
            step_cycle = parse_u32(n.trim_ascii());
            if step_cycle.is_none() {
                warnings.push(line, offset, "step number is not a cycle");
            }
            continue;
        }
        let Some(body) = text
            .strip_prefix(b"%% debug [")
            .and_then(|b| b.strip_suffix(b"]"))
        else {
            warnings.push(line, offset, "neither `%% step N` nor `%% debug [...]`; skipped");
            skipped.add(offset, text.len() as u64 + 1);
            continue;
        };
        match step(&mut parser, body, step_cycle) {
            Ok(s) => steps.push(s),
            Err(why) => {
                warnings.push(line, offset, why);
                skipped.add(offset, text.len() as u64 + 1);
            }
        }
    }
    if steps.is_empty() {
        return Err(DclError::NotADcl);
    }
    Ok(WorldModelLog {
        steps,
        warnings: warnings.finish(),
        skipped,
    })
}

fn finite2(a: Option<f64>, b: Option<f64>) -> Option<[f64; 2]> {
    let (a, b) = (a?, b?);
    (a.is_finite() && b.is_finite()).then_some([a, b])
}

fn quoted_colour(s: Option<Sexp<'_>>) -> Option<Rgba> {
    s.and_then(|s| s.atom()).and_then(colour)
}

fn step(parser: &mut Parser, body: &[u8], step_cycle: Option<u32>) -> Result<BeliefStep, String> {
    let doc = parser
        .parse(body)
        .map_err(|e| format!("not an S-expression: {e}"))?;
    let root = doc.items().next().ok_or("empty debug record")?;
    let mut s = BeliefStep {
        time: GameTime {
            cycle: step_cycle.unwrap_or(0),
            stopped: 0,
        },
        me: None,
        ball: None,
        players: Vec::new(),
        target_point: None,
        message: None,
        drawings: Vec::new(),
    };
    let mut timed = step_cycle.is_some();
    for item in root.items() {
        let f = |i: usize| item.get(i).and_then(|x| x.f64());
        match item.head() {
            Some(b"time") => {
                if let Some(t) = item.get(1).and_then(|x| x.atom()).and_then(parse_game_time) {
                    s.time = t;
                    timed = true;
                }
            }
            Some(b"s") => {
                let side = item
                    .get(1)
                    .and_then(|x| x.atom())
                    .and_then(|a| Side::from_byte(*a.first()?));
                let unum = item
                    .get(2)
                    .and_then(|x| x.u32())
                    .and_then(|u| u8::try_from(u).ok());
                let ptype = item.get(3).and_then(|x| x.str()).and_then(|x| x.parse().ok());
                if let (
                    Some(side),
                    Some(unum),
                    Some(player_type),
                    Some(pos),
                    Some(vel),
                    Some(body),
                    Some(neck),
                ) = (
                    side,
                    unum,
                    ptype,
                    finite2(f(4), f(5)),
                    finite2(f(6), f(7)),
                    f(8).filter(|x| x.is_finite()),
                    f(9).filter(|x| x.is_finite()),
                ) {
                    s.me = Some(SelfBelief {
                        side,
                        unum,
                        player_type,
                        pos,
                        vel,
                        body,
                        neck,
                    });
                }
            }
            Some(b"b") => {
                if let Some(pos) = finite2(f(1), f(2)) {
                    s.ball = Some(BallBelief {
                        pos,
                        vel: finite2(f(3), f(4)),
                    });
                }
            }
            Some(head @ (b"t" | b"o" | b"u" | b"ut" | b"uo")) => {
                let (team, known) = match head {
                    b"t" => (Team::Teammate, true),
                    b"o" => (Team::Opponent, true),
                    b"ut" => (Team::UnknownTeammate, false),
                    b"uo" => (Team::UnknownOpponent, false),
                    _ => (Team::Unknown, false),
                };
                let at = if known { 3 } else { 1 };
                let Some(pos) = finite2(f(at), f(at + 1)) else {
                    continue;
                };
                let sub = |name: &[u8]| item.find(name).and_then(|x| x.get(1));
                let comment = sub(b"c").and_then(|x| x.atom()).unwrap_or_default();
                s.players.push(PlayerBelief {
                    team,
                    unum: known
                        .then(|| {
                            item.get(1)
                                .and_then(|x| x.u32())
                                .and_then(|u| u8::try_from(u).ok())
                        })
                        .flatten(),
                    player_type: known
                        .then(|| item.get(2).and_then(|x| x.str()).and_then(|x| x.parse().ok()))
                        .flatten(),
                    pos,
                    body: sub(b"bd").and_then(|x| x.f64()).filter(|x| x.is_finite()),
                    pointto: sub(b"pt").and_then(|x| x.f64()).filter(|x| x.is_finite()),
                    goalie: comment.first() == Some(&b'G'),
                    comment: String::from_utf8_lossy(comment).into_owned(),
                });
            }
            Some(b"target-point") => s.target_point = finite2(f(1), f(2)),
            Some(b"message") => {
                s.message = item
                    .get(1)
                    .and_then(|x| x.atom())
                    .map(|a| String::from_utf8_lossy(a).into_owned());
            }
            Some(b"line") => {
                if let (Some(from), Some(to)) = (finite2(f(1), f(2)), finite2(f(3), f(4))) {
                    s.drawings.push(Drawing::Line {
                        from,
                        to,
                        colour: quoted_colour(item.get(5)),
                    });
                }
            }
            Some(b"tri") => {
                if let (Some(a), Some(b), Some(c)) =
                    (finite2(f(1), f(2)), finite2(f(3), f(4)), finite2(f(5), f(6)))
                {
                    s.drawings.push(Drawing::Triangle {
                        points: [a, b, c],
                        colour: quoted_colour(item.get(7)),
                    });
                }
            }
            Some(b"rect") => {
                if let (Some([l, t]), Some([r, b])) = (finite2(f(1), f(2)), finite2(f(3), f(4))) {
                    s.drawings.push(Drawing::Rect {
                        ltrb: [l, t, r, b],
                        colour: quoted_colour(item.get(5)),
                    });
                }
            }
            Some(b"circle") => {
                if let (Some(center), Some(r)) =
                    (finite2(f(1), f(2)), f(3).filter(|r| r.is_finite() && *r >= 0.0))
                {
                    s.drawings.push(Drawing::Circle {
                        center,
                        radius: r,
                        colour: quoted_colour(item.get(4)),
                    });
                }
            }
            _ => {}
        }
    }
    if !timed {
        return Err("no (time C,S) and no `%% step N` before it; skipped".into());
    }
    Ok(s)
}

/// Levels of the drawing: believed objects, their labels/directions and
/// errors, the debug client's own shapes and message.
pub const BELIEF_LEVEL: i32 = 1;
pub const DETAIL_LEVEL: i32 = 2;
pub const DRAWING_LEVEL: i32 = 3;

const PLAYER_RADIUS: f64 = 0.3;
const BALL_RADIUS: f64 = 0.2;

/// Draws a world model: entities `<team>/<unum>/belief/{self,ball,
/// teammates,opponents,unknown,drawings}` (parents `<team>/<unum>/belief`,
/// whose parents are `<team>/<unum>` and `belief`), and with `truth` the
/// error of each belief against the game record of the same time: a line
/// from the believed to the true position and the distance in metres
/// (entity `<team>/<unum>/belief/error`, level 2). Players of known number
/// are compared with that player, the others with the nearest true player
/// of their side (of either side for `u`). Levels: believed positions 1;
/// numbers, body directions and errors 2; the debug client's shapes,
/// target point and message 3. One instantaneous frame per mapped time
/// ([`TimeMapper`]).
pub fn to_log(wm: &WorldModelLog, opts: &DebugLogOptions, truth: Option<&Game>) -> Log {
    let step = if opts.step.is_finite() && opts.step > 0.0 {
        opts.step
    } else {
        0.1
    };
    let side = opts.side;
    let mut log = Log::new();
    log.skipped = wm.skipped;
    log.header = header(format!("{}-{} world model", opts.team, opts.unum), step);
    let agent = AgentEntities::new(&opts.team, opts.unum);
    let belief = agent.single(&mut log, "belief");
    let sub = |log: &mut Log, name: &str| {
        let id = log.entities.intern(&format!("{}/belief/{name}", agent.prefix()));
        log.entities.add_parent(id, belief);
        id
    };
    let e_self = sub(&mut log, "self");
    let e_ball = sub(&mut log, "ball");
    let e_mates = sub(&mut log, "teammates");
    let e_opps = sub(&mut log, "opponents");
    let e_unknown = sub(&mut log, "unknown");
    let e_draw = sub(&mut log, "drawings");
    let e_error = sub(&mut log, "error");

    let records: HashMap<(u32, u32), usize> = truth
        .map(|g| {
            g.records
                .iter()
                .enumerate()
                .map(|(i, r)| ((r.cycle, r.stopped), i))
                .collect()
        })
        .unwrap_or_default();
    let other = match side {
        Side::Left => Side::Right,
        Side::Right => Side::Left,
    };
    let world = |p: [f64; 2]| to_world(side, p[0], p[1]);
    let game_world = |p: [f64; 2]| Vec2::new(p[0], -p[1]);
    let outline = |c: Rgba| Style {
        color: c,
        thickness: 1.5,
        ..Style::default()
    };
    let filled = |c: Rgba| Style {
        color: c,
        fill: Some(c.with_alpha(0x90)),
        thickness: 1.5,
        ..Style::default()
    };
    let (c_self, c_mate, c_opp, c_unknown, c_ball, c_error) = (
        Rgba::named("yellow").unwrap_or(Rgba::WHITE),
        Rgba::named("cyan").unwrap_or(Rgba::WHITE),
        Rgba::named("magenta").unwrap_or(Rgba::WHITE),
        Rgba::named("gray").unwrap_or(Rgba::WHITE),
        Rgba::WHITE,
        Rgba::named("red").unwrap_or(Rgba::WHITE),
    );

    let mut times = TimeMapper::new();
    let mut frame: Vec<Primitive> = Vec::new();
    let mut current: Option<GameTime> = None;
    let flush = |log: &mut Log, frame: &mut Vec<Primitive>, t: Option<GameTime>| {
        if let Some(t) = t
            && !frame.is_empty()
        {
            log.push_frame(
                FrameTime::Instant(clock(t.cycle, t.stopped, step)),
                frame.drain(..),
            );
        }
    };
    for s in &wm.steps {
        let (t, _) = times.map(s.time);
        if current != Some(t) {
            flush(&mut log, &mut frame, current);
            current = Some(t);
        }
        let record = records
            .get(&(t.cycle, t.stopped))
            .and_then(|&i| truth.and_then(|g| g.records.get(i)));
        let mut prim = |shape: Shape, style: Style, entity, level| {
            frame.push(Primitive {
                shape,
                style,
                entity,
                level,
            })
        };
        let error =
            |prim: &mut dyn FnMut(Shape, Style, crate::log::EntityId, i32), believed: Vec2, truth: Vec2| {
                let d = (truth - believed).length();
                prim(
                    Shape::Line {
                        start: believed,
                        end: truth,
                    },
                    outline(c_error),
                    e_error,
                    DETAIL_LEVEL,
                );
                prim(
                    Shape::Text {
                        anchor: (believed + truth) * 0.5 + Vec2::new(0.2, 0.2),
                        text: format!("{d:.2} m").into(),
                        size: 10.0,
                    },
                    Style::color(c_error),
                    e_error,
                    DETAIL_LEVEL,
                );
            };
        let direction = |from: Vec2, deg: f64, len: f64| {
            let a = angle_to_world(side, deg);
            Shape::Line {
                start: from,
                end: from + Vec2::new(a.cos(), a.sin()) * len,
            }
        };
        if let Some(me) = &s.me {
            let p = world(me.pos);
            prim(
                Shape::Circle {
                    center: p,
                    radius: PLAYER_RADIUS,
                },
                filled(c_self),
                e_self,
                BELIEF_LEVEL,
            );
            prim(direction(p, me.body, 0.8), outline(c_self), e_self, DETAIL_LEVEL);
            prim(
                direction(p, me.body + me.neck, 1.5),
                outline(c_self),
                e_self,
                DETAIL_LEVEL,
            );
            if let Some(tp) = record.and_then(|r| r.player(side, me.unum)) {
                error(&mut prim, p, game_world(tp.pos));
            }
        }
        if let Some(b) = &s.ball {
            let p = world(b.pos);
            prim(
                Shape::Circle {
                    center: p,
                    radius: BALL_RADIUS,
                },
                filled(c_ball),
                e_ball,
                BELIEF_LEVEL,
            );
            if let Some(v) = b.vel {
                let end = world([b.pos[0] + v[0], b.pos[1] + v[1]]);
                prim(
                    Shape::Line { start: p, end },
                    outline(c_ball),
                    e_ball,
                    DETAIL_LEVEL,
                );
            }
            if let Some(r) = record {
                error(&mut prim, p, game_world(r.ball.pos));
            }
        }
        for pl in &s.players {
            let p = world(pl.pos);
            let (entity, c, true_side) = match pl.team {
                Team::Teammate | Team::UnknownTeammate => (e_mates, c_mate, Some(side)),
                Team::Opponent | Team::UnknownOpponent => (e_opps, c_opp, Some(other)),
                Team::Unknown => (e_unknown, c_unknown, None),
            };
            let style = if pl.goalie { filled(c) } else { outline(c) };
            prim(
                Shape::Circle {
                    center: p,
                    radius: PLAYER_RADIUS,
                },
                style,
                entity,
                BELIEF_LEVEL,
            );
            if let Some(u) = pl.unum {
                prim(
                    Shape::Text {
                        anchor: p + Vec2::new(0.35, 0.35),
                        text: u.to_string().into(),
                        size: 10.0,
                    },
                    Style::color(c),
                    entity,
                    DETAIL_LEVEL,
                );
            }
            if let Some(bd) = pl.body {
                prim(direction(p, bd, 0.8), outline(c), entity, DETAIL_LEVEL);
            }
            if let Some(r) = record {
                let truth = match (pl.unum, true_side) {
                    (Some(u), Some(ts)) => r.player(ts, u).map(|tp| game_world(tp.pos)),
                    _ => r
                        .players
                        .iter()
                        .filter(|tp| true_side.is_none_or(|ts| tp.side == ts))
                        .map(|tp| game_world(tp.pos))
                        .min_by(|a, b| (*a - p).length().total_cmp(&(*b - p).length())),
                };
                if let Some(tp) = truth {
                    error(&mut prim, p, tp);
                }
            }
        }
        let dstyle = |c: Option<Rgba>| outline(c.unwrap_or(Rgba::WHITE));
        for d in &s.drawings {
            let (shape, style) = match d {
                Drawing::Line { from, to, colour } => (
                    Shape::Line {
                        start: world(*from),
                        end: world(*to),
                    },
                    dstyle(*colour),
                ),
                Drawing::Triangle { points, colour } => (
                    Shape::Polygon {
                        vertices: points.iter().map(|&q| world(q)).collect(),
                        closed: true,
                    },
                    dstyle(*colour),
                ),
                Drawing::Rect { ltrb, colour } => {
                    let [l, t, r, b] = *ltrb;
                    (
                        Shape::Rectangle {
                            center: world([(l + r) / 2.0, (t + b) / 2.0]),
                            size: Vec2::new((r - l).abs(), (b - t).abs()),
                            orientation: 0.0,
                        },
                        dstyle(*colour),
                    )
                }
                Drawing::Circle {
                    center,
                    radius,
                    colour,
                } => (
                    Shape::Circle {
                        center: world(*center),
                        radius: *radius,
                    },
                    dstyle(*colour),
                ),
            };
            prim(shape, style, e_draw, DRAWING_LEVEL);
        }
        if let Some(tp) = s.target_point {
            prim(
                Shape::Point {
                    position: world(tp),
                    kind: MarkerKind::Cross,
                    size: 0.0,
                },
                Style::color(c_self),
                e_draw,
                DRAWING_LEVEL,
            );
        }
        if let (Some(m), Some(me)) = (&s.message, &s.me) {
            prim(
                Shape::Text {
                    anchor: world(me.pos) + Vec2::new(0.4, -0.8),
                    text: m.as_str().into(),
                    size: 10.0,
                },
                Style::color(c_self),
                e_draw,
                DRAWING_LEVEL,
            );
        }
    }
    flush(&mut log, &mut frame, current);
    log
}

#[cfg(test)]
mod tests;
