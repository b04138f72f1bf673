//! RoboViz's buffers replayed one datagram at a time ([`Replay`]): what a
//! recording's conversion ([`super::rvd::to_log`]) and a live run's
//! RoboViz source (`underlay live --log roboviz://…`) both draw with.
//!
//! Shapes go into their set's back buffer, and a swap publishes the back
//! buffer of every set whose name starts with its prefix. What a set
//! publishes is shown until that set is published again, so each
//! publication becomes a *persistent* frame from its swap to just before
//! the set's next swap. The replay hands out the publications a swap has
//! ended ([`Replay::take_closed`]) and, at any moment, those still showing
//! with an end of the caller's choosing ([`Replay::showing`]: the end of
//! a recording, or +∞ while a run is live). A swap's time is the
//! simulation time of the last monitor message before it when the
//! recording has them ([`Clock::Simulation`]), else its receive time.
//!
//! Dotted set names become the entity DAG: `animated.team.path` under
//! `animated.team` under `animated`. Shapes keep their heights: a line,
//! point, polygon or annotation with every z = 0 is a floor shape, one
//! above the floor a raised shape ([`crate::log::Raised`]); spheres are
//! raised spheres; circles lie on the floor. Agent annotations are placed
//! above the agent's robot in the monitor log given, and left out
//! (counted) without one. A live run's replay holds a monitor log that
//! grows as the simulator's messages come ([`Replay::with_monitor`]):
//! each time it does, what the annotations showed up to its newest frame
//! is handed out as ended and what they show now is placed at that frame
//! ([`Replay::robots_moved`]) — the same frames, through the same
//! placement, as a recording of the same datagrams gives.
//!
//! A replay may be bounded ([`Limits`]): set names beyond a number of
//! entities and shapes beyond a number held in the buffers are dropped and
//! counted, and a swap visits only the sets holding something, so neither
//! a flood of swaps nor a new set name in every datagram costs more than
//! the shapes drawn.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use crate::geom::Vec2;
use crate::log::{
    Entities, EntityId, FrameTime, Log, MarkerKind, Primitive, Raised, Rgba, Shape, Style, TimeUnit,
};

use super::monitor::{MonitorLog, Side};
use super::roboviz::{Command, DatagramError, Rgba8, parse_datagram};
use super::{Warning, Warnings};

/// The clock a replay's frames are timed by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clock {
    /// Each datagram's receive time (seconds since the Unix epoch).
    Received,
    /// The simulation time of the last monitor message before each
    /// datagram; `start` is used until the first one.
    Simulation { start: Option<f64> },
}

/// What a replay may hold at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Entities (set names and their dotted ancestors): shapes of a new
    /// set beyond this are dropped.
    pub max_entities: usize,
    /// Shapes held in the sets' back and front buffers together: further
    /// shapes are dropped until a swap frees some.
    pub max_primitives: usize,
}

impl Limits {
    /// No bound (a recording, bounded by its file's size).
    pub const NONE: Limits = Limits {
        max_entities: usize::MAX,
        max_primitives: usize::MAX,
    };
}

/// What a conversion did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvertStats {
    pub datagrams: usize,
    pub commands: usize,
    pub swaps: usize,
    /// Whether times are simulation times (from monitor messages).
    pub sim_clock: bool,
}

/// A set's buffers: the shapes drawn since its last swap, and what it
/// shows since when.
#[derive(Default)]
struct SetBuffers {
    back: Vec<Primitive>,
    front: Vec<Primitive>,
    since: f64,
}

/// RoboViz's buffers, fed one record at a time (see [the module](self)).
pub struct Replay<'m> {
    /// The publications closed so far (and their entities).
    log: Log,
    /// The robots annotations are placed at: a file's monitor log, or a
    /// live one the replay holds and its caller extends.
    monitor: Option<Cow<'m, MonitorLog>>,
    limits: Limits,
    sim_now: Option<f64>,
    sets: Vec<(String, SetBuffers)>,
    set_index: HashMap<String, usize>,
    /// The sets whose buffers hold something, by name: a swap visits
    /// those its prefix names.
    active: BTreeMap<String, usize>,
    entities: HashMap<String, EntityId>,
    last_time: f64,
    agent_notes: HashMap<(bool, u32), (String, Rgba8, f64)>,
    notes_left_out: usize,
    annotations: EntityId,
    stats: ConvertStats,
    warnings: Warnings,
    /// Records fed so far.
    records: usize,
    /// Shapes in the buffers.
    held: usize,
    /// Shapes dropped for the limits.
    dropped: usize,
    /// Bumped whenever what is showing changes.
    generation: u64,
}

impl<'m> Replay<'m> {
    /// An empty replay timed by `clock`, placing agent annotations at the
    /// robots of `monitor`.
    pub fn new(clock: Clock, monitor: Option<&'m MonitorLog>) -> Self {
        let mut log = Log::new();
        let sim_clock = matches!(clock, Clock::Simulation { .. });
        log.header.name = "RoboViz drawings".to_owned();
        log.header.world_unit = "m".to_owned();
        log.header.time_unit = if sim_clock {
            TimeUnit::RelativeSeconds
        } else {
            TimeUnit::EpochSeconds
        };
        let annotations = log.entities.intern("agent annotations");
        Replay {
            log,
            monitor: monitor.map(Cow::Borrowed),
            limits: Limits::NONE,
            sim_now: match clock {
                Clock::Simulation { start } => start,
                Clock::Received => None,
            },
            sets: Vec::new(),
            set_index: HashMap::new(),
            active: BTreeMap::new(),
            entities: HashMap::new(),
            last_time: f64::NEG_INFINITY,
            agent_notes: HashMap::new(),
            notes_left_out: 0,
            annotations,
            stats: ConvertStats {
                sim_clock,
                ..ConvertStats::default()
            },
            warnings: Warnings::default(),
            records: 0,
            held: 0,
            dropped: 0,
            generation: 0,
        }
    }

    /// This replay placing agent annotations at the robots of `monitor`,
    /// which it holds: a live monitor connection's, extended as messages
    /// come ([`Replay::monitor_mut`], then [`Replay::robots_moved`]).
    pub fn with_monitor(mut self, monitor: MonitorLog) -> Self {
        self.monitor = Some(Cow::Owned(monitor));
        self
    }

    /// The monitor log annotations are placed by, to extend (a borrowed
    /// one is copied first).
    pub fn monitor_mut(&mut self) -> Option<&mut MonitorLog> {
        self.monitor.as_mut().map(Cow::to_mut)
    }

    /// Whether agent annotations have robots to be placed at.
    pub fn has_monitor(&self) -> bool {
        self.monitor.is_some()
    }

    /// The monitor log gained frames: what each agent annotation showed at
    /// the robot up to the newest frame ends just before it (handed out
    /// by [`Replay::take_closed`]), and what it shows from then on is
    /// placed at that frame ([`Replay::showing`]). The frames given out
    /// together are those the annotation would have given at once; a live
    /// run hands them out as they end, so that what shows now is one
    /// frame per annotation however long it stays.
    pub fn robots_moved(&mut self) {
        let Some(latest) = self
            .monitor
            .as_deref()
            .and_then(|m| m.frames.last())
            .map(|f| f.time)
        else {
            return;
        };
        let mut moved: Vec<(bool, u32)> = self
            .agent_notes
            .iter()
            .filter(|(_, note)| note.2 < latest)
            .map(|(&agent, _)| agent)
            .collect();
        moved.sort_unstable();
        for agent in moved {
            let Some(note) = self.agent_notes.get_mut(&agent) else {
                continue;
            };
            let since = std::mem::replace(&mut note.2, latest);
            let (text, color) = (note.0.clone(), note.1);
            // Left out (no team on that side yet) is counted when the
            // annotation ends, once.
            note_frames(
                &mut self.log,
                self.monitor.as_deref(),
                self.annotations,
                agent,
                (&text, color),
                since,
                just_before(latest),
                &mut 0,
            );
            self.generation += 1;
        }
    }

    /// This replay holding at most what `limits` say.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// What the replay did so far.
    pub fn stats(&self) -> &ConvertStats {
        &self.stats
    }

    /// Shapes dropped for the limits so far.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Agent annotations left out so far (no monitor log to place them).
    pub fn annotations_left_out(&self) -> usize {
        self.notes_left_out
    }

    /// The latest time seen (a datagram's, or a monitor message's), where
    /// [`Replay::finish`] ends what is showing.
    pub fn last_time(&self) -> f64 {
        self.last_time.max(self.sim_now.unwrap_or(f64::NEG_INFINITY))
    }

    /// A number that changes whenever what [`Replay::showing`] gives does.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A monitor message's simulation time, received at this point.
    pub fn feed_sim_time(&mut self, time: f64) {
        self.records += 1;
        if time.is_finite() {
            self.sim_now = Some(self.sim_now.map_or(time, |s| s.max(time)));
        }
    }

    /// A drawing datagram received at `received` (Unix seconds): its
    /// commands applied, up to the first it cannot read, which is
    /// returned (and warned about).
    pub fn feed_datagram(&mut self, received: f64, bytes: &[u8]) -> Option<DatagramError> {
        let ri = self.records;
        self.records += 1;
        let t = if self.stats.sim_clock {
            self.sim_now.unwrap_or(0.0)
        } else {
            received
        };
        if !t.is_finite() {
            self.warnings
                .push(0, format!("record {ri}: receive time {t} is not finite; skipped"));
            return None;
        }
        let t = t.max(self.last_time);
        self.last_time = t;
        self.stats.datagrams += 1;
        let (cmds, err) = parse_datagram(bytes);
        if let Some(e) = &err {
            self.warnings.push(
                0,
                format!("record {ri}: {e}; the rest of the datagram is left out"),
            );
        }
        for cmd in cmds {
            self.command(cmd, t);
        }
        err
    }

    fn command(&mut self, cmd: Command, t: f64) {
        self.stats.commands += 1;
        let (set, (shape, style)) = match cmd {
            Command::Swap { prefix } => return self.swap(&prefix, t),
            Command::AgentAnnotation { agent, text, color } => {
                let old = self
                    .agent_notes
                    .insert((agent.right, agent.unum), (text, color, t));
                self.generation += 1;
                if let Some(old) = old {
                    self.close_note((agent.right, agent.unum), old, just_before(t));
                }
                return;
            }
            Command::AgentAnnotationClear { agent } => {
                if let Some(old) = self.agent_notes.remove(&(agent.right, agent.unum)) {
                    self.generation += 1;
                    self.close_note((agent.right, agent.unum), old, just_before(t));
                }
                return;
            }
            Command::SelectAgent { .. } => return,
            Command::Polygon { ref vertices, .. } if vertices.is_empty() => return,
            shape => match primitive(shape) {
                Some(p) => p,
                None => return,
            },
        };
        let known = self.set_index.contains_key(&set);
        if self.held >= self.limits.max_primitives
            || (!known && self.log.entities.len() >= self.limits.max_entities)
        {
            self.dropped += 1;
            return;
        }
        let entity = set_entity(&mut self.log, &mut self.entities, &set);
        let i = match self.set_index.get(&set) {
            Some(&i) => i,
            None => {
                self.sets.push((set.clone(), SetBuffers::default()));
                self.set_index.insert(set, self.sets.len() - 1);
                self.sets.len() - 1
            }
        };
        let (name, buf) = &mut self.sets[i];
        if buf.back.is_empty() && buf.front.is_empty() {
            self.active.insert(name.clone(), i);
        }
        buf.back.push(Primitive {
            shape,
            style,
            entity,
            level: 0,
        });
        self.held += 1;
    }

    /// Publishes the back buffer of every set named by `prefix`, in the
    /// order the sets were first drawn into.
    fn swap(&mut self, prefix: &str, t: f64) {
        self.stats.swaps += 1;
        let mut named: Vec<usize> = self
            .active
            .range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
            .take_while(|(name, _)| name.starts_with(prefix))
            .map(|(_, &i)| i)
            .collect();
        if named.is_empty() {
            return;
        }
        named.sort_unstable();
        self.generation += 1;
        for i in named {
            let (name, buf) = &mut self.sets[i];
            self.held -= buf.front.len();
            close(&mut self.log, buf, just_before(t));
            buf.front = std::mem::take(&mut buf.back);
            buf.since = t;
            if buf.front.is_empty() {
                self.active.remove(name.as_str());
            }
        }
    }

    fn close_note(&mut self, agent: (bool, u32), (text, color, since): (String, Rgba8, f64), end: f64) {
        note_frames(
            &mut self.log,
            self.monitor.as_deref(),
            self.annotations,
            agent,
            (&text, color),
            since,
            end,
            &mut self.notes_left_out,
        );
    }

    /// The publications closed since the last call, as a log of their own
    /// (with the entities they name and their ancestors), in the order
    /// they closed.
    pub fn take_closed(&mut self) -> Log {
        let frames = std::mem::take(&mut self.log.frames);
        let primitives = std::mem::take(&mut self.log.primitives);
        let parts = frames
            .iter()
            .map(|f| (f.time, primitives.get(f.primitives.clone()).unwrap_or(&[])));
        part(&self.log, parts)
    }

    /// What every set shows now, each from its swap to `until` (+∞ while
    /// live), with the agent annotations showing (placed up to `until`);
    /// a log of its own, in the order [`Replay::finish`] ends them.
    pub fn showing(&self, until: f64) -> Log {
        let mut out = part(&self.log, self.fronts(until));
        if self.monitor.is_some() && !self.agent_notes.is_empty() {
            let entity = out.entities.intern(self.log.entities.name(self.annotations));
            let mut left_out = 0;
            for (&agent, (text, color, since)) in &self.agent_notes {
                note_frames(
                    &mut out,
                    self.monitor.as_deref(),
                    entity,
                    agent,
                    (text, *color),
                    *since,
                    until.max(*since),
                    &mut left_out,
                );
            }
        }
        out
    }

    /// The sets' front buffers as frames from their swap to `until`.
    fn fronts(&self, until: f64) -> impl Iterator<Item = (FrameTime, &[Primitive])> {
        self.sets
            .iter()
            .filter(|(_, b)| !b.front.is_empty())
            .map(move |(_, b)| {
                (
                    FrameTime::Persistent {
                        start: b.since,
                        end: until.max(b.since),
                    },
                    b.front.as_slice(),
                )
            })
    }

    /// Ends the replay: what every set shows is shown to the last time
    /// seen; the whole log (less what [`Replay::take_closed`] took), what
    /// was done, and the warnings.
    pub fn finish(mut self) -> (Log, ConvertStats, Vec<Warning>) {
        let end = self.last_time();
        let mut never_shown = 0;
        for (_, buf) in &mut self.sets {
            never_shown += buf.back.len();
            let until = end.max(buf.since);
            close(&mut self.log, buf, until);
        }
        for ((right, unum), note) in std::mem::take(&mut self.agent_notes) {
            let until = end.max(note.2);
            self.close_note((right, unum), note, until);
        }
        if never_shown > 0 {
            self.warnings.push(
                0,
                format!("{never_shown} shapes were drawn into sets never swapped afterwards, so never shown"),
            );
        }
        if self.notes_left_out > 0 {
            self.warnings.push(
                0,
                format!(
                    "{} agent annotations left out: they are placed at their robot, which needs \
                     the monitor log of the match",
                    self.notes_left_out
                ),
            );
        }
        if self.log.frames.is_empty() && self.stats.commands > 0 {
            self.warnings
                .push(0, "no set was ever swapped, so nothing was shown");
        }
        (self.log, self.stats, self.warnings.finish())
    }
}

/// A drawing command's set and primitive (`None` for what is not a shape).
fn primitive(cmd: Command) -> Option<(String, (Shape, Style))> {
    Some(match cmd {
        Command::Circle {
            center,
            radius,
            thickness,
            color,
            set,
        } => (
            set,
            (
                Shape::Circle {
                    center: Vec2::new(center[0], center[1]),
                    radius: radius.abs(),
                },
                Style {
                    thickness: thickness.clamp(0.0, 100.0) as f32,
                    ..Style::color(rgba(color))
                },
            ),
        ),
        Command::Line {
            start,
            end,
            thickness,
            color,
            set,
        } => (
            set,
            (
                if start[2] == 0.0 && end[2] == 0.0 {
                    Shape::Line {
                        start: xy(start),
                        end: xy(end),
                    }
                } else {
                    raised(Raised::Path {
                        points: vec![start, end].into(),
                        closed: false,
                    })
                },
                Style {
                    thickness: thickness.clamp(0.0, 100.0) as f32,
                    ..Style::color(rgba(color))
                },
            ),
        ),
        Command::Point {
            position,
            size,
            color,
            set,
        } => (
            set,
            (
                if position[2] == 0.0 {
                    Shape::Point {
                        position: xy(position),
                        kind: MarkerKind::Dot,
                        size: size.clamp(0.0, 100.0),
                    }
                } else {
                    raised(Raised::Point {
                        position,
                        kind: MarkerKind::Dot,
                        size: size.clamp(0.0, 100.0),
                    })
                },
                Style::color(rgba(color)),
            ),
        ),
        Command::Sphere {
            center,
            radius,
            color,
            set,
        } => (
            set,
            (
                raised(Raised::Sphere {
                    center,
                    radius: radius.abs(),
                }),
                Style {
                    fill: Some(rgba(color)),
                    ..Style::color(rgba(color))
                },
            ),
        ),
        Command::Polygon { vertices, color, set } => (
            set,
            (
                if vertices.iter().all(|v| v[2] == 0.0) {
                    Shape::Polygon {
                        vertices: vertices.iter().map(|v| xy(*v)).collect(),
                        closed: true,
                    }
                } else {
                    raised(Raised::Path {
                        points: vertices.into(),
                        closed: true,
                    })
                },
                Style {
                    fill: Some(rgba(color)),
                    ..Style::color(rgba(color))
                },
            ),
        ),
        Command::Annotation {
            position,
            text,
            color,
            set,
        } => (
            set,
            (
                if position[2] == 0.0 {
                    Shape::Text {
                        anchor: xy(position),
                        text: text.into(),
                        size: 12.0,
                    }
                } else {
                    raised(Raised::Text {
                        anchor: position,
                        text: text.into(),
                        size: 12.0,
                    })
                },
                Style::color(rgba(color)),
            ),
        ),
        Command::Swap { .. }
        | Command::AgentAnnotation { .. }
        | Command::AgentAnnotationClear { .. }
        | Command::SelectAgent { .. } => return None,
    })
}

/// Ends what `set` shows at `until`, as a persistent frame from its swap.
fn close(log: &mut Log, set: &mut SetBuffers, until: f64) {
    if !set.front.is_empty() && until >= set.since {
        log.push_frame(
            FrameTime::Persistent {
                start: set.since,
                end: until,
            },
            set.front.drain(..),
        );
    }
    set.front.clear();
}

/// `frames` (primitives of `from`'s entities) as a log of their own, with
/// the entities they name and those entities' ancestors.
fn part<'a>(from: &Log, frames: impl Iterator<Item = (FrameTime, &'a [Primitive])>) -> Log {
    let mut out = Log::new();
    out.header = from.header.clone();
    let mut ids: HashMap<EntityId, EntityId> = HashMap::new();
    for (time, primitives) in frames {
        let moved: Vec<Primitive> = primitives
            .iter()
            .map(|p| Primitive {
                entity: copy_entity(&from.entities, &mut out.entities, &mut ids, p.entity),
                ..p.clone()
            })
            .collect();
        out.push_frame(time, moved);
    }
    out
}

/// Entity `e` of `from` in `to`, with its ancestors (without recursion: a
/// set name may have thousands of dots).
fn copy_entity(
    from: &Entities,
    to: &mut Entities,
    ids: &mut HashMap<EntityId, EntityId>,
    e: EntityId,
) -> EntityId {
    let mut stack = vec![e];
    while let Some(&top) = stack.last() {
        if ids.contains_key(&top) {
            stack.pop();
            continue;
        }
        let missing: Vec<EntityId> = from
            .parents(top)
            .iter()
            .filter(|p| !ids.contains_key(p))
            .copied()
            .collect();
        if !missing.is_empty() {
            stack.extend(missing);
            continue;
        }
        let id = to.intern(from.name(top));
        for p in from.parents(top) {
            if let Some(&parent) = ids.get(p) {
                to.add_parent_acyclic(id, parent);
            }
        }
        ids.insert(top, id);
        stack.pop();
    }
    ids.get(&e).copied().unwrap_or_else(|| to.intern(from.name(e)))
}

/// The entity of a set name, with its dotted ancestors as parents.
fn set_entity(log: &mut Log, cache: &mut HashMap<String, EntityId>, set: &str) -> EntityId {
    if let Some(&e) = cache.get(set) {
        return e;
    }
    let name = if set.is_empty() { "(no set)" } else { set };
    let id = log.entities.intern(name);
    let mut child = id;
    let mut rest = name;
    while let Some(dot) = rest.rfind('.') {
        rest = &rest[..dot];
        if rest.is_empty() {
            break;
        }
        let parent = log.entities.intern(rest);
        if log.entities.parents(child).contains(&parent) {
            break;
        }
        if !log.entities.is_ancestor_or_self(child, parent) {
            log.entities.add_parent(child, parent);
        }
        child = parent;
    }
    cache.insert(set.to_owned(), id);
    id
}

fn rgba(c: Rgba8) -> Rgba {
    Rgba::from_rgba8(c[0], c[1], c[2], c[3])
}

fn raised(r: Raised) -> Shape {
    Shape::Raised(Box::new(r))
}

fn xy(p: [f64; 3]) -> Vec2 {
    Vec2::new(p[0], p[1])
}

/// The last time before `t` (so that a publication ends just before the
/// next one begins).
pub(crate) fn just_before(t: f64) -> f64 {
    if t == 0.0 {
        -f64::from_bits(1)
    } else if t > 0.0 {
        f64::from_bits(t.to_bits() - 1)
    } else {
        f64::from_bits(t.to_bits() + 1)
    }
}

/// An agent annotation shown from `start` to `end`: text above the robot
/// where the monitor log last showed it at `start` (from its first frame
/// when it shows none before), then at each monitor frame up to `end`
/// (the robot moves), the agent's side's robot as that frame has the
/// sides; nothing (counted) without a monitor log, or without a team on
/// the agent's side in it.
#[allow(clippy::too_many_arguments)]
fn note_frames(
    log: &mut Log,
    monitor: Option<&MonitorLog>,
    entity: EntityId,
    (right, unum): (bool, u32),
    (text, color): (&str, Rgba8),
    start: f64,
    end: f64,
    left_out: &mut usize,
) {
    let Some(m) = monitor else {
        *left_out += 1;
        return;
    };
    let side = if right { Side::Right } else { Side::Left };
    if !m.teams.iter().any(|t| t.side == Some(side)) {
        *left_out += 1;
        return;
    }
    // From the frame in effect at `start` (the robot where it was last
    // seen), or the first after it.
    let first = m.frames.partition_point(|f| f.time <= start).saturating_sub(1);
    let frames = &m.frames[first..];
    for (k, f) in frames.iter().enumerate().take_while(|(_, f)| f.time <= end) {
        let from = f.time.max(start);
        // The team on that side then (a restarted server may swap them).
        let team = f.sides[usize::from(right)];
        let Some(r) = m
            .frame_robots(f)
            .iter()
            .find(|r| Some(r.team) == team && r.unum == unum)
        else {
            continue;
        };
        let p = r.position();
        let next = frames.get(k + 1).map_or(end, |n| just_before(n.time).min(end));
        if next < from {
            continue;
        }
        log.push_frame(
            FrameTime::Persistent {
                start: from,
                end: next,
            },
            [Primitive {
                shape: Shape::Text {
                    anchor: Vec2::new(p[0] + 0.3, p[1] + 0.3),
                    text: text.into(),
                    size: 12.0,
                },
                style: Style::color(rgba(color)),
                entity,
                level: 0,
            }],
        );
    }
}

#[cfg(test)]
mod tests;
