//! An SSL game log as a visualization log: what the league's packets say,
//! drawn with entities and levels like the demo's log.
//!
//! | level | entity | drawing |
//! |---|---|---|
//! | 0 | `robots/<team>/<id>` | team-coloured circle and heading line |
//! | 0 | `ball` | orange disc |
//! | 0 | `referee/command` | the command and the stage (top left) |
//! | 0 | `referee/score` | team names and score (top centre) |
//! | 0 | `referee/designated_position` | placement target or free kick spot (cross in a circle) |
//! | 0 | `referee/events/<type>` | a game event: ring at its location (its headline where it has none) |
//! | 1 | `labels` | robot ids |
//! | 1 | `ball` | trail over the last 0.5 s |
//! | 1 | `robots/<team>/<id>` | velocity arrow (from the tracker) |
//! | 1 | `referee/events/<type>` | the event's headline ("robot pushed a robot: blue 1") |
//! | 1 | `referee/score` | cards and robots allowed, per team (bottom corners) |
//! | 1 | `referee/command` | next command, status message (bottom centre) |
//! | 1 | `referee/timers` | time left in the stage, for the action, on yellow cards (top right) |
//! | 2 | `field` | field lines, arcs and goals from the geometry |
//! | 2 | `referee/events/<type>` | the event's own fields |
//! | 3 | `camera/<id>` | each camera's raw detections |
//!
//! **Times** are the recorder's receive times (seconds since the epoch),
//! the one clock every packet of the file shares: vision capture times
//! are the vision computer's clock (a simulator's own time in simulated
//! matches) and the referee's timestamps the game controller's. The
//! recorder takes each stream on a thread of its own, so neighbouring
//! records may step back by about a millisecond; nothing here needs them
//! sorted.
//!
//! **Frames.** Only one instantaneous frame is shown at a time, so each
//! holds the whole scene of its moment (*tick*): the robots and ball, the
//! ball's trail, the latest detections of every camera and the running
//! timers. While a tracker sends, every tracker packet is a tick and its
//! robots and ball are drawn (one tracker: the first heard, replaced only
//! when it falls silent). Otherwise ticks follow the cameras (from the
//! first camera packet [`STALE`] after the tracker's last on): a tick is
//! due once every camera still heard (within [`STALE`]) has sent since the
//! last one — or, when one falls silent (and in the first cycle, before
//! the cameras are known), when a camera sends again — i.e.
//! once per camera cycle whatever the number of cameras, at the cycle's
//! last packet (so a live run draws it at once), and the robots and ball are
//! merged ([`super::merge`]) from the cameras heard within [`STALE`].
//! What changes seldom is persistent: the
//! field (from the first geometry to any change of it, open-ended), each
//! state of the referee (from the packet that brought it to the next
//! change) and each game event (from the first referee packet listing it
//! to the first that no longer does). The viewer shows persistent frames'
//! starts as events on its timeline: commands, score changes and game
//! events.
//!
//! Draw order is the order of primitives: the field first, then the
//! ticks, then the referee's drawings on top (`super::referee` lays them
//! out).
//!
//! **Live.** The same `Converter` turns packets received off the
//! network into the same drawings (`Converter::received`, stamped with
//! their arrival): what it has ended since it was last asked
//! (`Converter::take_ended`: ticks, referee states and game events that
//! closed) and what it shows until further notice
//! (`Converter::take_showing`: the field, the referee's state and the
//! game events still listed, open-ended). A file is the same packets,
//! with everything closed at its end (`Converter::finish`).
//!
//! The referee's state is drawn by `referee.rs` with this module's colours
//! and primitives: the two files name each other.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::io::Read;

use super::events::GameEvent;
use super::file::{MessageType, Record, RecordReader};
use super::merge::{WorldRobot, merge_ball, merge_robots};
use super::packets::{CameraFrame, CameraModel, Dropped, FieldGeometry, Referee, Team, Tracked, Vision};
use super::referee::{self, Drawer, Layout, RefereeView};
use crate::geom::Vec2;
use crate::log::{
    DisplayHints, EntityId, Frame, FrameTime, Header, LoadWarning, Log, Place, Primitive, ReadError, Rgba,
    Shape, Style, ThicknessUnit, TimeUnit, Warnings,
};

/// Camera detections and tracker packets older than this (seconds) are
/// not drawn.
pub const STALE: f64 = 0.1;
/// The ball's trail covers this long (seconds).
pub const TRAIL_SECONDS: f64 = 0.5;
/// The trail has at most this many points (120 Hz over its 0.5 s).
const MAX_TRAIL_POINTS: usize = 60;
/// At most this many cameras are followed at once (ssl-vision runs up to 8).
const MAX_CAMERAS: usize = 64;
/// Other trackers named at most in the warning about ignored ones (the
/// rest counted together).
const MAX_IGNORED_TRACKERS: usize = 16;
/// A camera's frame is drawn in at most this many ticks (a 100 Hz tracker
/// draws one 60 Hz frame in 2; files with crafted times must not make one
/// frame a million drawings).
const MAX_USES: u32 = 16;
/// A gap in the ball's track longer than this (seconds) restarts the trail.
const TRAIL_GAP: f64 = 0.2;
/// Robot radius when the geometry does not give one (mm).
const ROBOT_RADIUS: f64 = 90.0;
/// The ball is drawn this big (mm), larger than the real one, to be seen.
const BALL_DRAW_RADIUS: f64 = 50.0;
/// Field size when no geometry was received (Division B, mm).
const DEFAULT_FIELD: (f64, f64, f64) = (9000.0, 6000.0, 300.0);

/// The yellow team's colour.
pub const YELLOW: Rgba = Rgba::from_rgb(0xffd200);
/// The blue team's colour.
pub const BLUE: Rgba = Rgba::from_rgb(0x1e64ff);
/// The ball's colour.
pub const ORANGE: Rgba = Rgba::from_rgb(0xff8000);
pub(super) const WHITE: Rgba = Rgba::WHITE;
pub(super) const RED: Rgba = Rgba::from_rgb(0xff2020);
pub(super) const GREEN: Rgba = Rgba::from_rgb(0x20d040);

/// The colour of a team.
pub fn team_color(team: Team) -> Rgba {
    match team {
        Team::Yellow => YELLOW,
        Team::Blue => BLUE,
    }
}

/// Reads an SSL game log (the container from its first byte, already
/// decompressed) into a visualization log.
pub fn read(r: impl Read, decompressed: bool) -> Result<Log, ReadError> {
    let mut records = RecordReader::new(r, decompressed)?;
    let mut conv = Converter::new();
    while let Some(rec) = records.next_record()? {
        conv.record(&rec);
    }
    let (summary, file_warnings) = records.finish();
    let mut passed = conv.skipped;
    if let Some(at) = summary.skipped.stopped_at {
        passed.stop(at);
    }
    let mut log = conv.finish(file_warnings);
    log.skipped = passed;
    Ok(log)
}

/// A persistent frame still being shown.
struct Open<T> {
    start: f64,
    what: T,
    prims: Vec<Primitive>,
}

struct OpenEvent {
    key: String,
    start: f64,
    prims: Vec<Primitive>,
}

struct CameraState {
    time: f64,
    frame: CameraFrame,
    /// Ticks the frame was drawn in.
    uses: u32,
}

struct TrackerState {
    uuid: String,
    time: f64,
    world: Tracked,
}

/// Frames of one layer: their times and primitives, in order.
#[derive(Default)]
struct Layer {
    frames: Vec<(FrameTime, std::ops::Range<usize>)>,
    prims: Vec<Primitive>,
}

impl Layer {
    fn push(&mut self, time: FrameTime, prims: impl IntoIterator<Item = Primitive>) {
        let start = self.prims.len();
        self.prims.extend(prims);
        self.frames.push((time, start..self.prims.len()));
    }
}

/// Entity ids, interned once.
struct Names {
    robots: HashMap<(Team, u32), EntityId>,
    cameras: HashMap<u32, EntityId>,
    events: HashMap<String, EntityId>,
    ball: EntityId,
    labels: EntityId,
    field: EntityId,
}

/// Turns records into the log, one at a time.
pub(crate) struct Converter {
    log: Log,
    names: Names,
    warnings: Warnings,
    /// Records that did not decode, passed over.
    skipped: crate::log::Skipped,
    drawer: Drawer,
    field_layer: Layer,
    ticks: Layer,
    referee_layer: Layer,
    field: Option<Open<FieldGeometry>>,
    robot_radius: f64,
    cameras: BTreeMap<u32, CameraState>,
    /// Cameras heard since the last tick, and the latest time among them.
    cycle: BTreeSet<u32>,
    cycle_time: f64,
    /// A camera has sent twice: the cameras of a cycle are known, so a
    /// cycle can be seen complete.
    cycle_known: bool,
    tracker: Option<TrackerState>,
    ignored_trackers: BTreeMap<String, u64>,
    /// Camera packets left out because too many cameras were sending.
    ignored_cameras: u64,
    trail: VecDeque<(f64, Vec2)>,
    referee: Option<(f64, Referee)>,
    referee_view: Option<Open<RefereeView>>,
    events: Vec<OpenEvent>,
    team_names: Option<(String, String)>,
    bounds: Option<(Vec2, Vec2)>,
    last_time: f64,
    dropped: Dropped,
    bad_events: u32,
    /// The robots and ball of every tick, when asked for (a rendered match).
    scene: Option<Scene>,
    /// Packets come off the network (`Converter::received`).
    received: bool,
    /// The field, the referee's state or the game events shown changed
    /// since `Converter::take_showing` last said.
    showing_changed: bool,
    /// Cameras' models that came or changed since
    /// [`Converter::take_camera_models`] (kept for a received stream only).
    camera_models: BTreeMap<u32, CameraModel>,
    new_camera_models: Vec<CameraModel>,
}

/// Why a packet was not drawn.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    /// Its payload does not decode as its type's message.
    #[error("a {what} packet that does not decode")]
    Decode {
        what: &'static str,
        #[source]
        source: prost::DecodeError,
    },
    /// It decodes, but lacks what every such packet has (received packets
    /// only: garbage often decodes as an empty message).
    #[error("not a {what} packet: it lacks {lacks}")]
    Incomplete { what: &'static str, lacks: &'static str },
}

/// What a rendered match needs of the log: every tick's robots and ball,
/// the first field geometry and the team names.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scene {
    pub ticks: Vec<(f64, Vec<WorldRobot>, Option<Vec2>)>,
    pub field: Option<FieldGeometry>,
    pub robot_radius: f64,
    pub team_names: Option<(String, String)>,
}

impl Converter {
    pub fn new() -> Converter {
        let mut log = Log::new();
        let mut e = |n: &str| log.entities.intern(n);
        let names = Names {
            robots: HashMap::new(),
            cameras: HashMap::new(),
            events: HashMap::new(),
            field: e("field"),
            ball: e("ball"),
            labels: e("labels"),
        };
        let ents = referee::Entities {
            command: e("referee/command"),
            score: e("referee/score"),
            timers: e("referee/timers"),
            designated: e("referee/designated_position"),
        };
        let (l, w, b) = DEFAULT_FIELD;
        Converter {
            log,
            names,
            warnings: Warnings::default(),
            skipped: crate::log::Skipped::default(),
            drawer: Drawer::new(Layout::new(l, w, b), ents),
            field_layer: Layer::default(),
            ticks: Layer::default(),
            referee_layer: Layer::default(),
            field: None,
            robot_radius: ROBOT_RADIUS,
            cameras: BTreeMap::new(),
            cycle: BTreeSet::new(),
            cycle_time: f64::NEG_INFINITY,
            cycle_known: false,
            tracker: None,
            ignored_trackers: BTreeMap::new(),
            ignored_cameras: 0,
            trail: VecDeque::new(),
            referee: None,
            referee_view: None,
            events: Vec::new(),
            team_names: None,
            bounds: None,
            last_time: f64::NEG_INFINITY,
            dropped: Dropped::default(),
            bad_events: 0,
            scene: None,
            received: false,
            showing_changed: false,
            camera_models: BTreeMap::new(),
            new_camera_models: Vec::new(),
        }
    }

    /// A converter for packets received off the network as they come (a
    /// live run): packets that lack what the league's schema requires of
    /// their type are refused ([`PacketError::Incomplete`]), and cameras'
    /// models are kept for [`Self::take_camera_models`].
    pub fn received() -> Converter {
        Converter {
            received: true,
            ..Converter::new()
        }
    }

    /// A converter that also keeps the scene of every tick ([`Self::scene`]).
    pub fn with_scene() -> Converter {
        Converter {
            scene: Some(Scene::default()),
            ..Converter::new()
        }
    }

    /// The scene kept so far (with [`Self::with_scene`]), taken out.
    pub fn take_scene(&mut self) -> Option<Scene> {
        if !self.cycle.is_empty() {
            self.tick(self.cycle_time);
        }
        let mut s = self.scene.take()?;
        s.field = self.field.as_ref().map(|f| f.what.clone());
        s.robot_radius = self.robot_radius;
        s.team_names = self.team_names.clone();
        Some(s)
    }

    /// Takes one record.
    pub fn record(&mut self, rec: &Record<'_>) {
        if let Err(e) = self.packet(rec.kind, rec.time(), rec.payload) {
            let message = match &e {
                PacketError::Decode { what, source } => format!(
                    "{what} packet (record {}) does not decode, skipped: {source}",
                    rec.index
                ),
                PacketError::Incomplete { .. } => format!("record {}: {e}, skipped", rec.index),
            };
            self.warnings.push(Some(Place::Byte(rec.offset)), None, message);
            self.skipped.add(
                rec.offset,
                super::file::RECORD_HEADER_LEN + rec.payload.len() as u64,
            );
        }
    }

    /// Takes one packet of type `kind` received at `t` (seconds since the
    /// epoch); packets of other types than vision, referee and tracker are
    /// passed over.
    pub fn packet(&mut self, kind: MessageType, t: f64, payload: &[u8]) -> Result<(), PacketError> {
        self.last_time = self.last_time.max(t);
        let decode = |what| move |source| PacketError::Decode { what, source };
        let received = self.received;
        let check = |complete: bool, what, lacks| {
            if received && !complete {
                Err(PacketError::Incomplete { what, lacks })
            } else {
                Ok(())
            }
        };
        match kind {
            MessageType::Vision | MessageType::LegacyVision => {
                let v = if kind == MessageType::Vision {
                    Vision::decode(payload, &mut self.dropped)
                } else {
                    Vision::decode_legacy(payload, &mut self.dropped)
                }
                .map_err(decode("vision"))?;
                check(v.is_complete(), "vision", "detections and geometry")?;
                if received && let Some(g) = &v.geometry {
                    self.camera_models_seen(&g.cameras);
                }
                self.vision(t, v);
            }
            MessageType::Referee => {
                let r = Referee::decode(payload, &mut self.bad_events).map_err(decode("referee"))?;
                check(r.is_complete(), "referee", "its timestamps")?;
                self.referee(t, r);
            }
            MessageType::Tracker => {
                let w = Tracked::decode(payload, &mut self.dropped).map_err(decode("tracker"))?;
                check(w.is_complete(), "tracker", "its identity and time")?;
                self.tracked(t, w);
            }
            _ => {}
        }
        Ok(())
    }

    /// Keeps the cameras' models that came or changed.
    fn camera_models_seen(&mut self, models: &[CameraModel]) {
        for m in models {
            let id = m.camera_id;
            if self.camera_models.get(&id) == Some(m)
                || (!self.camera_models.contains_key(&id) && self.camera_models.len() >= MAX_CAMERAS)
            {
                continue;
            }
            self.camera_models.insert(id, *m);
            self.new_camera_models.retain(|n| n.camera_id != id);
            self.new_camera_models.push(*m);
        }
    }

    /// The cameras' models that came or changed since the last call (for
    /// a converter made with [`Self::received`]).
    pub fn take_camera_models(&mut self) -> Vec<CameraModel> {
        std::mem::take(&mut self.new_camera_models)
    }

    /// How many entity names the log has so far (robots, cameras and game
    /// event types each add theirs): a live stream bounds it.
    pub fn entity_count(&self) -> usize {
        self.log.entities.len()
    }

    /// The frames ended since the last call (ticks, referee states and
    /// game events that closed, a field replaced), as a log with the
    /// converter's entities, field first, then ticks, then the referee's
    /// drawings: the order a file draws them in.
    pub fn take_ended(&mut self) -> Log {
        let mut log = Log::new();
        let layers = [
            std::mem::take(&mut self.field_layer),
            std::mem::take(&mut self.ticks),
            std::mem::take(&mut self.referee_layer),
        ];
        if layers.iter().all(|l| l.frames.is_empty()) {
            return log;
        }
        log.entities = self.log.entities.clone();
        log.header = self.header();
        assemble(&mut log, layers);
        log
    }

    /// What shows until further notice, if it changed since the last
    /// call: the field, the referee's state and the game events still
    /// listed, as frames open to +∞ in that order, with how many of them
    /// (the field's) are drawn beneath the ticks.
    pub fn take_showing(&mut self) -> Option<(Log, usize)> {
        if !std::mem::take(&mut self.showing_changed) {
            return None;
        }
        let mut log = Log::new();
        log.entities = self.log.entities.clone();
        log.header = self.header();
        let open = |start: f64| FrameTime::Persistent {
            start,
            end: f64::INFINITY,
        };
        let mut under = 0;
        if let Some(f) = &self.field {
            log.push_frame(open(f.start), f.prims.iter().cloned());
            under = 1;
        }
        if let Some(v) = &self.referee_view {
            log.push_frame(open(v.start), v.prims.iter().cloned());
        }
        for e in &self.events {
            log.push_frame(open(e.start), e.prims.iter().cloned());
        }
        Some((log, under))
    }

    fn vision(&mut self, t: f64, v: Vision) {
        if let Some(g) = v.geometry {
            self.geometry(t, g.field);
        }
        let Some(frame) = v.detection else { return };
        let id = frame.camera_id;
        if !self.cameras.contains_key(&id) && self.cameras.len() >= MAX_CAMERAS {
            self.cameras.retain(|_, c| c.time >= t - STALE);
            if self.cameras.len() >= MAX_CAMERAS {
                self.ignored_cameras += 1;
                return;
            }
        }
        if !self.tracker_fresh(t) {
            // Silent for STALE: the tracker has stopped, and the cycle
            // pending since is the cameras' to draw (its time may be
            // within STALE of the tracker's last packet).
            self.tracker = None;
            if self.cycle.contains(&id) {
                self.cycle_known = true;
                self.tick(self.cycle_time);
            }
        }
        self.cameras.insert(
            id,
            CameraState {
                time: t,
                frame,
                uses: 0,
            },
        );
        self.cycle.insert(id);
        self.cycle_time = self.cycle_time.max(t);
        // Every camera still heard has sent in this cycle: its tick is
        // complete, and is drawn now rather than when a camera sends
        // again (a camera cycle later, which a live run would show late).
        // The tick is the same either way: its time is the cycle's last
        // packet's, its content what is fresh then.
        if self.cycle_known
            && !self.tracker_fresh(t)
            && self
                .cameras
                .iter()
                .all(|(id, c)| self.cycle.contains(id) || c.time < t - STALE)
        {
            self.tick(self.cycle_time);
        }
    }

    fn tracker_fresh(&self, t: f64) -> bool {
        self.tracker.as_ref().is_some_and(|s| (t - s.time).abs() <= STALE)
    }

    fn tracked(&mut self, t: f64, w: Tracked) {
        match &self.tracker {
            Some(s) if s.uuid != w.uuid && self.tracker_fresh(t) => {
                let name = match &w.source_name {
                    Some(n) => format!("{n} ({})", w.uuid),
                    None => w.uuid.clone(),
                };
                let name = if self.ignored_trackers.contains_key(&name)
                    || self.ignored_trackers.len() < MAX_IGNORED_TRACKERS
                {
                    name
                } else {
                    "others".to_owned()
                };
                *self.ignored_trackers.entry(name).or_insert(0) += 1;
                return;
            }
            _ => {}
        }
        self.tracker = Some(TrackerState {
            uuid: w.uuid.clone(),
            time: t,
            world: w,
        });
        self.cycle.clear();
        self.cycle_time = f64::NEG_INFINITY;
        self.tick(t);
    }

    fn geometry(&mut self, t: f64, field: FieldGeometry) {
        if self.field.as_ref().is_some_and(|f| f.what == field) {
            return;
        }
        let start = match self.field.take() {
            Some(old) => {
                self.field_layer.push(
                    FrameTime::Persistent {
                        start: old.start,
                        end: before(t, old.start),
                    },
                    old.prims,
                );
                t
            }
            None => f64::NEG_INFINITY,
        };
        self.drawer.layout = Layout::new(field.length, field.width, field.boundary);
        self.robot_radius = field.max_robot_radius.unwrap_or(ROBOT_RADIUS);
        if self.bounds.is_none() {
            let m = Vec2::new(
                field.length / 2.0 + field.boundary,
                field.width / 2.0 + field.boundary,
            );
            self.bounds = Some((m * -1.0, m));
        }
        let prims = self.field_prims(&field);
        self.showing_changed = true;
        self.field = Some(Open {
            start,
            what: field,
            prims,
        });
    }

    fn field_prims(&self, f: &FieldGeometry) -> Vec<Primitive> {
        let e = self.names.field;
        let fallback = f.line_thickness.unwrap_or(10.0);
        let style = |thickness: f64| Style {
            color: WHITE,
            fill: None,
            thickness: (if thickness > 0.0 { thickness } else { fallback }) as f32,
            unit: ThicknessUnit::World,
        };
        let mut out = Vec::with_capacity(f.lines.len() + f.arcs.len() + 2);
        for l in &f.lines {
            out.push(prim(
                Shape::Line {
                    start: l.p1,
                    end: l.p2,
                },
                style(l.thickness),
                e,
                2,
            ));
        }
        for a in &f.arcs {
            let shape = if (a.a2 - a.a1).abs() >= std::f64::consts::TAU - 1e-4 {
                Shape::Circle {
                    center: a.center,
                    radius: a.radius,
                }
            } else {
                let n = ((a.a2 - a.a1).abs() / (std::f64::consts::TAU / 90.0))
                    .ceil()
                    .clamp(1.0, 90.0) as usize;
                let vertices = (0..=n)
                    .map(|i| {
                        let ang = a.a1 + (a.a2 - a.a1) * i as f64 / n as f64;
                        a.center + Vec2::new(ang.cos(), ang.sin()) * a.radius
                    })
                    .collect();
                Shape::Polygon {
                    vertices,
                    closed: false,
                }
            };
            out.push(prim(shape, style(a.thickness), e, 2));
        }
        if f.goal_width > 0.0 && f.goal_depth > 0.0 {
            let (hl, hw, d) = (f.length / 2.0, f.goal_width / 2.0, f.goal_depth);
            for s in [-1.0, 1.0] {
                let vertices = vec![
                    Vec2::new(s * hl, hw),
                    Vec2::new(s * (hl + d), hw),
                    Vec2::new(s * (hl + d), -hw),
                    Vec2::new(s * hl, -hw),
                ];
                out.push(prim(
                    Shape::Polygon {
                        vertices: vertices.into_boxed_slice(),
                        closed: false,
                    },
                    style(fallback),
                    e,
                    2,
                ));
            }
        }
        out
    }

    fn robot_entity(&mut self, team: Team, id: u32) -> EntityId {
        let entities = &mut self.log.entities;
        *self
            .names
            .robots
            .entry((team, id))
            .or_insert_with(|| entities.intern(&format!("robots/{}/{id}", team.name())))
    }

    fn camera_entity(&mut self, id: u32) -> EntityId {
        let entities = &mut self.log.entities;
        *self
            .names
            .cameras
            .entry(id)
            .or_insert_with(|| entities.intern(&format!("camera/{id}")))
    }

    /// Emits the scene at `t`.
    fn tick(&mut self, t: f64) {
        if !t.is_finite() {
            return;
        }
        self.cycle.clear();
        self.cycle_time = f64::NEG_INFINITY;
        let fresh = |time: f64| (t - time).abs() <= STALE;
        self.cameras.retain(|_, c| c.time >= t - STALE);
        let usable = |c: &CameraState| fresh(c.time) && c.uses < MAX_USES;
        let (robots, ball) = match &self.tracker {
            Some(s) if fresh(s.time) => (
                s.world
                    .robots
                    .iter()
                    .map(|r| WorldRobot {
                        team: r.team,
                        id: r.id,
                        pos: r.pos,
                        orientation: Some(r.orientation),
                        vel: r.vel,
                    })
                    .collect(),
                s.world.balls.first().map(|b| b.pos),
            ),
            _ => {
                let frames = self.cameras.values().filter(|c| usable(c)).map(|c| &c.frame);
                (merge_robots(frames.clone()), merge_ball(frames))
            }
        };
        if let Some(scene) = &mut self.scene {
            scene.ticks.push((t, robots.clone(), ball));
        }
        let start = self.ticks.prims.len();
        let radius = self.robot_radius;
        for r in &robots {
            let e = self.robot_entity(r.team, r.id);
            let c = team_color(r.team);
            let style = Style {
                thickness: 2.5,
                ..Style::color(c)
            };
            self.ticks.prims.push(prim(
                Shape::Circle {
                    center: r.pos,
                    radius,
                },
                style,
                e,
                0,
            ));
            if let Some(a) = r.orientation {
                let tip = r.pos + Vec2::new(a.cos(), a.sin()) * radius;
                self.ticks.prims.push(prim(
                    Shape::Line {
                        start: r.pos,
                        end: tip,
                    },
                    style,
                    e,
                    0,
                ));
            }
            if let Some(v) = r.vel.filter(|v| v.length() > 150.0) {
                let from = r.pos + v * (radius / v.length());
                let to = from + v * 0.4;
                let arrow = Style {
                    thickness: 2.0,
                    ..Style::color(c.with_alpha(0xd0))
                };
                self.ticks
                    .prims
                    .push(prim(Shape::Line { start: from, end: to }, arrow, e, 1));
            }
            let label = Shape::Text {
                anchor: r.pos + Vec2::new(radius + 10.0, radius + 10.0),
                text: r.id.to_string().into(),
                size: 150.0,
            };
            self.ticks
                .prims
                .push(prim(label, world_text(c), self.names.labels, 1));
        }
        self.trail_update(t, ball);
        if let Some(b) = ball {
            if self.trail.len() > 1 {
                let vertices: Box<[Vec2]> = self.trail.iter().map(|&(_, p)| p).collect();
                let style = Style {
                    thickness: 2.0,
                    ..Style::color(ORANGE.with_alpha(0xa0))
                };
                self.ticks.prims.push(prim(
                    Shape::Polygon {
                        vertices,
                        closed: false,
                    },
                    style,
                    self.names.ball,
                    1,
                ));
            }
            let style = Style {
                color: ORANGE,
                fill: Some(ORANGE.with_alpha(0x70)),
                thickness: 2.0,
                unit: ThicknessUnit::Pixels,
            };
            self.ticks.prims.push(prim(
                Shape::Circle {
                    center: b,
                    radius: BALL_DRAW_RADIUS,
                },
                style,
                self.names.ball,
                0,
            ));
        }
        let ids: Vec<u32> = self
            .cameras
            .iter()
            .filter(|(_, c)| usable(c))
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            let e = self.camera_entity(id);
            let Some(c) = self.cameras.get_mut(&id) else {
                continue;
            };
            c.uses += 1;
            for r in &c.frame.robots {
                let style = Style {
                    thickness: 1.0,
                    ..Style::color(team_color(r.team).with_alpha(0xa0))
                };
                self.ticks.prims.push(prim(
                    Shape::Circle {
                        center: r.pos,
                        radius,
                    },
                    style,
                    e,
                    3,
                ));
            }
            for b in &c.frame.balls {
                let style = Style {
                    thickness: 1.0,
                    ..Style::color(ORANGE.with_alpha(0xa0))
                };
                self.ticks.prims.push(prim(
                    Shape::Circle {
                        center: b.pos,
                        radius: BALL_DRAW_RADIUS * 0.6,
                    },
                    style,
                    e,
                    3,
                ));
            }
        }
        if let Some(timers) = self.referee.as_ref().and_then(|(_, r)| self.drawer.timers(r)) {
            self.ticks.prims.push(timers);
        }
        if self.ticks.prims.len() > start {
            let end = self.ticks.prims.len();
            self.ticks.frames.push((FrameTime::Instant(t), start..end));
        }
    }

    fn trail_update(&mut self, t: f64, ball: Option<Vec2>) {
        let Some(b) = ball else {
            self.trail.clear();
            return;
        };
        if self.trail.back().is_some_and(|&(last, _)| t - last > TRAIL_GAP) {
            self.trail.clear();
        }
        self.trail.push_back((t, b));
        while self.trail.len() > MAX_TRAIL_POINTS
            || self
                .trail
                .front()
                .is_some_and(|&(first, _)| t - first > TRAIL_SECONDS)
        {
            self.trail.pop_front();
        }
    }

    fn referee(&mut self, t: f64, r: Referee) {
        if !r.yellow.name.is_empty() || !r.blue.name.is_empty() {
            self.team_names = Some((r.yellow.name.clone(), r.blue.name.clone()));
        }
        let view = RefereeView::of(&r);
        if self.referee_view.as_ref().is_none_or(|v| v.what != view) {
            self.close_referee_view(t);
            let prims = self.drawer.view(&view);
            self.showing_changed = true;
            self.referee_view = Some(Open {
                start: t,
                what: view,
                prims,
            });
        }
        // Game events: close those no longer listed, open the new ones.
        let keys: Vec<String> = r.game_events.iter().map(GameEvent::key).collect();
        let listed: HashSet<&str> = keys.iter().map(String::as_str).collect();
        let (still, gone): (Vec<OpenEvent>, Vec<OpenEvent>) = std::mem::take(&mut self.events)
            .into_iter()
            .partition(|e| listed.contains(e.key.as_str()));
        self.showing_changed |= !gone.is_empty();
        for e in gone {
            self.referee_layer.push(
                FrameTime::Persistent {
                    start: e.start,
                    end: t.max(e.start),
                },
                e.prims,
            );
        }
        self.events = still;
        let mut open: HashSet<String> = self.events.iter().map(|e| e.key.clone()).collect();
        let mut unplaced = 0;
        for (e, key) in r.game_events.iter().zip(keys) {
            let placed = e.location().is_some();
            if open.insert(key.clone()) {
                let name = format!("referee/events/{}", e.type_name());
                let entities = &mut self.log.entities;
                let ent = *self
                    .names
                    .events
                    .entry(name)
                    .or_insert_with_key(|name| entities.intern(name));
                let prims = self.drawer.event(e, ent, unplaced);
                self.events.push(OpenEvent { key, start: t, prims });
                self.showing_changed = true;
            }
            unplaced += usize::from(!placed);
        }
        self.referee = Some((t, r));
    }

    fn close_referee_view(&mut self, t: f64) {
        if let Some(old) = self.referee_view.take() {
            self.referee_layer.push(
                FrameTime::Persistent {
                    start: old.start,
                    end: before(t, old.start),
                },
                old.prims,
            );
        }
    }

    /// The log, once every record is in.
    pub fn finish(mut self, file_warnings: Vec<LoadWarning>) -> Log {
        if !self.cycle.is_empty() {
            self.tick(self.cycle_time);
        }
        let end = self.last_time;
        if let Some(f) = self.field.take() {
            self.field_layer.push(
                FrameTime::Persistent {
                    start: f.start,
                    end: f64::INFINITY,
                },
                f.prims,
            );
        }
        if end.is_finite() {
            self.close_referee_view(end + 1e-6);
            for e in std::mem::take(&mut self.events) {
                self.referee_layer.push(
                    FrameTime::Persistent {
                        start: e.start,
                        end: end.max(e.start),
                    },
                    e.prims,
                );
            }
        }
        for (name, n) in &self.ignored_trackers {
            self.warnings.push(
                None,
                None,
                format!("{n} packets of tracker {name} ignored: robots and ball come from another tracker"),
            );
        }
        if self.ignored_cameras > 0 {
            self.warnings.push(
                None,
                None,
                format!(
                    "{} camera packets left out: more than {MAX_CAMERAS} cameras were sending at once",
                    self.ignored_cameras
                ),
            );
        }
        if self.dropped.objects > 0 {
            self.warnings.push(
                None,
                None,
                format!(
                    "{} detected or tracked objects without a finite position left out",
                    self.dropped.objects
                ),
            );
        }
        if self.dropped.markings > 0 {
            self.warnings.push(
                None,
                None,
                format!(
                    "{} field markings with unusable sizes left out",
                    self.dropped.markings
                ),
            );
        }
        if self.bad_events > 0 {
            self.warnings.push(
                None,
                None,
                format!("{} game events that do not decode left out", self.bad_events),
            );
        }
        let header = self.header();
        let mut log = self.log;
        assemble(&mut log, [self.field_layer, self.ticks, self.referee_layer]);
        log.header = header;
        let mut warnings = file_warnings;
        warnings.extend(self.warnings.finish());
        log.warnings = warnings;
        log
    }

    /// The log's header: the teams' names once the referee gave them.
    fn header(&self) -> Header {
        Header {
            name: match &self.team_names {
                Some((y, b)) if !y.is_empty() || !b.is_empty() => {
                    format!("SSL game: {y} (yellow) vs {b} (blue)")
                }
                _ => "SSL game".to_owned(),
            },
            time_unit: TimeUnit::EpochSeconds,
            world_unit: "mm".to_owned(),
            hints: DisplayHints {
                instant_threshold: None,
                cycle: None,
                default_max_level: Some(2),
                world_bounds: self.bounds,
            },
        }
    }
}

/// Appends the frames of `layers` to `log` in their order (field, ticks,
/// referee): the draw order.
fn assemble(log: &mut Log, layers: [Layer; 3]) {
    let [field, ticks, referee] = layers;
    // The ticks hold nearly all primitives: the field goes in front of
    // them in place (one move, no second copy of the ticks), the
    // referee's drawings after.
    let base = log.primitives.len();
    let (n_field, n_ticks) = (field.prims.len(), ticks.prims.len());
    let mut prims = ticks.prims;
    prims.reserve_exact(n_field + referee.prims.len());
    prims.splice(0..0, field.prims);
    prims.extend(referee.prims);
    if base == 0 {
        log.primitives = prims;
    } else {
        log.primitives.extend(prims);
    }
    log.frames
        .reserve_exact(field.frames.len() + ticks.frames.len() + referee.frames.len());
    for (frames, at) in [
        (field.frames, base),
        (ticks.frames, base + n_field),
        (referee.frames, base + n_field + n_ticks),
    ] {
        log.frames.extend(frames.into_iter().map(|(time, r)| Frame {
            time,
            primitives: r.start + at..r.end + at,
        }));
    }
}

/// A time a hair before `t` (when the frame from `start` would still
/// have room), so consecutive persistent frames do not overlap.
fn before(t: f64, start: f64) -> f64 {
    let b = t - 1e-6;
    if b > start { b } else { t.max(start) }
}

pub(super) fn prim(shape: Shape, style: Style, entity: EntityId, level: i32) -> Primitive {
    Primitive {
        shape,
        style,
        entity,
        level,
    }
}

/// Text in world units (its size in mm).
pub(super) fn world_text(color: Rgba) -> Style {
    Style {
        unit: ThicknessUnit::World,
        ..Style::color(color)
    }
}

#[cfg(test)]
mod tests;
