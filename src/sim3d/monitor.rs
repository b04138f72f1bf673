//! Monitor logs of the 3D league: what the server sent its monitors, one
//! message per line, read into the ball, the robots and the game state of
//! every frame.
//!
//! Two grammars, sniffed from the first message:
//! - **RSMP** (rcssservermj's `--logfile`):
//!   `((RSMP 1 0)((gt 1 0)<sim time>)((sg 1 0)full|diff <scene>)((gs 1 0)…)[((ge 1 0)…)])`.
//!   `gs` holds `time`, `half`, `score_left`, `score_right`, `play_mode`
//!   (an index into `ge`'s `play_modes`) and the team names; `ge` the
//!   field's measures.
//! - **SimSpark** (`sparkmonitor.log`): an environment and game-state list
//!   `((FieldLength 30)…(play_modes …)(time 0)(team_left X)…)`, then
//!   `(RSG 0 1)` and a full scene or `(RDS 0 1)` and a diff. Its frames are
//!   timed by the game state's `time`.
//!
//! Scene graphs are applied in order ([`SceneGraph`]); a diff that does
//! not fit the last full graph, or a line that does not parse, is skipped
//! with a warning naming the line, and the frame keeps the objects of the
//! last good update. SimSpark writes its first message before its scene
//! is built (an empty full graph) and diffs of nodes it never sent whole
//! until its next full graph: those frames show no objects, unsaid, as
//! nothing in them could be placed. A robot of no known model
//! ([`super::robots`]) is said once, at the line it first appears on; a
//! damaged transform (an `SLT` number that is none) at its line, the
//! scene keeping its shape and the node its last good transform
//! ([`SceneGraph`]).
//! The file may be gzip'ed.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use super::field::FieldGeometry;
use super::robots::{self, ModelId, RobotModel};
use super::scene::{Affine, Label, SceneGraph, TeamRef, translation};
use super::{LoadError, ParseError, Warning, Warnings, input};
use crate::sexp::lines;
use crate::sexp::{Parser, Sexp};

/// Which grammar a monitor log is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorFormat {
    Rsmp,
    SimSpark,
}

impl MonitorFormat {
    pub fn name(self) -> &'static str {
        match self {
            MonitorFormat::Rsmp => "rcssservermj monitor log (RSMP)",
            MonitorFormat::SimSpark => "SimSpark monitor log (RSG/RDS)",
        }
    }
}

/// The side a team plays on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
}

/// A team of the match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Team {
    pub name: String,
    /// The side the game state put it on, when it said.
    pub side: Option<Side>,
}

/// One robot in one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Robot {
    /// Index into [`MonitorLog::teams`].
    pub team: u16,
    pub unum: u32,
    /// Its model ([`super::robots::MODELS`]), as the scene says.
    pub model: ModelId,
    /// The robot's root body (the torso) in the world, as a transform
    /// whose x axis is the robot's forward direction.
    pub pose: Affine,
}

impl Robot {
    /// The robot's model.
    pub fn model(&self) -> &'static RobotModel {
        robots::get(self.model)
    }

    pub fn position(&self) -> [f64; 3] {
        translation(&self.pose)
    }

    /// Heading in radians: the torso's x axis on the floor, counter-
    /// clockwise from the field's x axis.
    pub fn heading(&self) -> f64 {
        self.pose[1].atan2(self.pose[0])
    }
}

/// What the monitor showed at one time.
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorFrame {
    /// Simulation time in seconds (RSMP `gt`; SimSpark's game time).
    pub time: f64,
    /// The game clock (`gs` `time`), when known.
    pub game_time: Option<f64>,
    pub half: Option<u32>,
    pub score: [u32; 2],
    /// Index into [`MonitorLog::play_modes`].
    pub play_mode: Option<u32>,
    /// Whether this frame carried a full scene graph.
    pub full: bool,
    /// The ball's centre.
    pub ball: Option<[f64; 3]>,
    /// This frame's robots in [`MonitorLog::robots`].
    pub robots: Range<usize>,
    /// The teams on the left and on the right side at this frame
    /// (indices into [`MonitorLog::teams`]), as the game state last said
    /// (sides may change during a log: a server restarted for the second
    /// half; [`Team::side`] is the last said).
    pub sides: [Option<u16>; 2],
}

/// A whole monitor log.
#[derive(Clone, Debug)]
pub struct MonitorLog {
    pub format: MonitorFormat,
    /// The field, from the last `ge` (or environment) record; defaults
    /// when none was seen.
    pub geometry: FieldGeometry,
    pub play_modes: Vec<String>,
    pub teams: Vec<Team>,
    pub frames: Vec<MonitorFrame>,
    /// Robots of all frames, frame by frame.
    pub robots: Vec<Robot>,
    pub warnings: Vec<Warning>,
    /// Lines passed over as not the format.
    pub skipped: crate::log::Skipped,
}

impl MonitorLog {
    /// The robots of `frame`.
    pub fn frame_robots(&self, frame: &MonitorFrame) -> &[Robot] {
        self.robots.get(frame.robots.clone()).unwrap_or(&[])
    }

    /// The frame in effect at `t`: the last one at or before it (the first
    /// when `t` is earlier than all).
    pub fn frame_at(&self, t: f64) -> Option<&MonitorFrame> {
        let i = self.frames.partition_point(|f| f.time <= t);
        self.frames.get(i.saturating_sub(1))
    }

    /// The ball at `t`, interpolated linearly between the frames around it
    /// when they are at most `max_gap` seconds apart (the frame's own ball
    /// when `t` is a frame's time).
    pub fn ball_at(&self, t: f64, max_gap: f64) -> Option<[f64; 3]> {
        let (a, b, u) = self.around(t, max_gap)?;
        let (pa, pb) = (a.ball?, b.ball?);
        Some(std::array::from_fn(|k| pa[k] + (pb[k] - pa[k]) * u))
    }

    /// The position of robot `unum` of team `team` at `t`, interpolated
    /// like [`MonitorLog::ball_at`].
    pub fn robot_at(&self, team: u16, unum: u32, t: f64, max_gap: f64) -> Option<[f64; 3]> {
        let (a, b, u) = self.around(t, max_gap)?;
        let find = |f: &MonitorFrame| {
            self.frame_robots(f)
                .iter()
                .find(|r| r.team == team && r.unum == unum)
                .map(Robot::position)
        };
        let (pa, pb) = (find(a)?, find(b)?);
        Some(std::array::from_fn(|k| pa[k] + (pb[k] - pa[k]) * u))
    }

    /// The frames at or before and after `t`, and how far `t` is between them.
    fn around(&self, t: f64, max_gap: f64) -> Option<(&MonitorFrame, &MonitorFrame, f64)> {
        let i = self.frames.partition_point(|f| f.time <= t);
        let a = self.frames.get(i.checked_sub(1)?)?;
        if a.time == t {
            return Some((a, a, 0.0));
        }
        let b = self.frames.get(i)?;
        let gap = b.time - a.time;
        (gap > 0.0 && gap <= max_gap).then(|| (a, b, (t - a.time) / gap))
    }

    /// The name of a frame's play mode.
    pub fn play_mode_name(&self, frame: &MonitorFrame) -> Option<&str> {
        frame
            .play_mode
            .and_then(|i| self.play_modes.get(i as usize))
            .map(String::as_str)
    }

    /// The index of the team named `name`.
    pub fn team_index(&self, name: &str) -> Option<u16> {
        self.teams.iter().position(|t| t.name == name).map(|i| i as u16)
    }
}

/// Whether `bytes` (the start of a decompressed file) look like a
/// monitor log of either grammar.
pub fn sniff(bytes: &[u8]) -> Option<MonitorFormat> {
    let head = &bytes[..bytes.len().min(4096)];
    let first = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = &head[first..];
    if head.starts_with(b"((RSMP") {
        Some(MonitorFormat::Rsmp)
    } else if head.starts_with(b"(") && (contains(head, b"(RSG ") || contains(head, b"(RDS ")) {
        Some(MonitorFormat::SimSpark)
    } else {
        None
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Loads a monitor log file (gzip'ed or plain).
pub fn load(path: &Path) -> Result<MonitorLog, LoadError> {
    let bytes = input::read_file(path, input::MAX_MONITOR)?;
    parse(&bytes).map_err(|error| LoadError::Parse {
        path: path.to_owned(),
        error,
    })
}

/// Reads a monitor log from its (decompressed) bytes.
pub fn parse(bytes: &[u8]) -> Result<MonitorLog, ParseError> {
    let format = sniff(bytes).ok_or_else(|| ParseError::NotThisFormat {
        what: "a 3D monitor log",
        why: "it starts with neither \"((RSMP\" nor a message with \"(RSG\" or \"(RDS\"".to_owned(),
    })?;
    let mut log = MonitorLog::new(format);
    log.skipped.total = bytes.len() as u64;
    let mut stream = MonitorStream::new();
    let mut warnings = Warnings::default();
    for (line, offset, text) in lines(bytes) {
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(message) = stream.message(&mut log, text, None) {
            warnings.push(line, message);
            log.skipped.add(offset, text.len() as u64 + 1);
        }
        for note in stream.take_notes() {
            warnings.push(line, note);
        }
    }
    if log.frames.is_empty() {
        return Err(ParseError::NotThisFormat {
            what: "a 3D monitor log",
            why: "no message in it could be read".to_owned(),
        });
    }
    log.warnings = warnings.finish();
    Ok(log)
}

impl MonitorLog {
    /// An empty log of `format`, with its grammar's default field.
    pub fn new(format: MonitorFormat) -> Self {
        MonitorLog {
            format,
            geometry: match format {
                MonitorFormat::Rsmp => FieldGeometry::default(),
                MonitorFormat::SimSpark => FieldGeometry::simspark(),
            },
            play_modes: Vec::new(),
            teams: Vec::new(),
            frames: Vec::new(),
            robots: Vec::new(),
            warnings: Vec::new(),
            skipped: crate::log::Skipped::default(),
        }
    }

    /// Forgets the frames before `t` but the one in effect at `t` (a live
    /// monitor kept within a window), with their robots.
    pub fn forget_before(&mut self, t: f64) {
        let first = self.frames.partition_point(|f| f.time <= t).saturating_sub(1);
        if first == 0 {
            return;
        }
        self.frames.drain(..first);
        let shift = self.frames.first().map_or(self.robots.len(), |f| f.robots.start);
        self.robots.drain(..shift.min(self.robots.len()));
        for f in &mut self.frames {
            f.robots = f.robots.start - shift..f.robots.end - shift;
        }
    }
}

/// A monitor log read message by message: the lines of a file, or the
/// messages of a simulator's monitor port as they arrive
/// (`underlay live --log sim3d://…`). It keeps what a message leaves for
/// the next (the scene graph diffs apply to, the game state, the teams
/// named); the frames go into the [`MonitorLog`] given with each message.
/// The grammar is sniffed from the first message into an empty log.
#[derive(Default)]
pub struct MonitorStream {
    parser: Parser,
    state: StreamState,
    /// Restarted and no monitor message since: the next may be another
    /// server's grammar.
    fresh: bool,
    /// What the messages read since the last [`MonitorStream::take_notes`]
    /// could not tell (robots of no known model), each said once.
    notes: Vec<String>,
    noted: std::collections::HashSet<String>,
}

/// What a monitor log's reader carries from one message to the next.
#[derive(Default)]
struct StreamState {
    scene: Option<SceneGraph>,
    game: GameState,
    team_by_name: HashMap<String, u16>,
    /// The teams on the left and right side now.
    sides: [Option<u16>; 2],
}

impl MonitorStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// One message into `log`: a frame with the ball and robots after it,
    /// timed `at` when given (a live message's arrival) or else by the
    /// message's own time; an error (the frame not added, or added with
    /// the objects of the last good update) says why.
    pub fn message(&mut self, log: &mut MonitorLog, text: &[u8], at: Option<f64>) -> Result<(), String> {
        let sniffed = sniff(text);
        let may_switch = log.frames.is_empty() || self.fresh;
        if sniffed.is_some() {
            self.fresh = false;
        }
        if may_switch
            && let Some(format) = sniffed
            && format != log.format
        {
            // Another grammar: its teams are its own.
            let skipped = log.skipped;
            *log = MonitorLog::new(format);
            log.skipped = skipped;
            self.state = StreamState::default();
        }
        let doc = self.parser.parse(text).map_err(|e| format!("skipped: {e}"))?;
        let mut r = Reader {
            log,
            st: &mut self.state,
            at,
            built: false,
        };
        let result = match r.log.format {
            MonitorFormat::Rsmp => r.rsmp(doc.items()),
            MonitorFormat::SimSpark => r.simspark(doc.items()),
        };
        if r.built
            && let Some(scene) = &self.state.scene
        {
            for note in scene.notes() {
                if self.noted.insert(note.clone()) {
                    self.notes.push(note.clone());
                }
            }
        }
        // Damaged transforms: each said where it is (the message's line).
        if let Some(scene) = &mut self.state.scene {
            self.notes.extend(scene.take_damage());
        }
        result
    }

    /// What the messages given since the last call could not tell
    /// (a robot of no known model), each thing once in a stream.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Starts again from a full scene graph: what came before a new
    /// connection says nothing about the scene it sends (the teams are
    /// kept, unless it speaks the other grammar: another server, whose
    /// log starts afresh).
    pub fn restart(&mut self) {
        self.state.scene = None;
        self.state.game = GameState::default();
        self.fresh = true;
    }
}

/// The game state as last reported (each message may report only part).
#[derive(Clone, Debug, Default)]
struct GameState {
    time: Option<f64>,
    half: Option<u32>,
    score: [u32; 2],
    play_mode: Option<u32>,
}

/// One message being read into a log.
struct Reader<'a> {
    log: &'a mut MonitorLog,
    st: &'a mut StreamState,
    /// The frame's time, when the caller gives it.
    at: Option<f64>,
    /// Whether the message built a full scene graph.
    built: bool,
}

impl Reader<'_> {
    fn rsmp<'a>(&mut self, mut top: impl Iterator<Item = Sexp<'a>>) -> Result<(), String> {
        let msg = top.next().ok_or("an empty message")?;
        if msg.get(0).and_then(|h| h.head()) != Some(b"RSMP") {
            return Err("a message that does not start with (RSMP …)".to_owned());
        }
        let mut time = None;
        let mut full = false;
        let mut scene_error = None;
        for part in msg.items().skip(1) {
            let tag = part.get(0).and_then(|t| t.head());
            match tag {
                Some(b"gt") => time = part.get(1).and_then(|t| t.f64()),
                Some(b"sg") => {
                    let kind = part.get(1).and_then(|k| k.atom());
                    let nodes = part.items().skip(2);
                    let result = match kind {
                        Some(b"full") => {
                            full = true;
                            self.built = true;
                            SceneGraph::build_after(nodes, self.st.scene.as_ref())
                                .map(|g| self.st.scene = Some(g))
                        }
                        Some(b"diff") => apply_diff(self.st.scene.as_mut(), nodes),
                        _ => Err("a scene graph that is neither full nor diff".to_owned()),
                    };
                    scene_error = result.err();
                }
                Some(b"gs") => self.game_state(part.items().skip(1)),
                Some(b"ge") => self.environment(part.items().skip(1), part),
                _ => {}
            }
        }
        let time = time
            .filter(|t| t.is_finite())
            .ok_or("a message without a finite simulation time (gt)")?;
        self.push_frame(time, full)?;
        match scene_error {
            Some(e) => Err(format!("scene graph not applied: {e}")),
            None => Ok(()),
        }
    }

    fn simspark<'a>(&mut self, top: impl Iterator<Item = Sexp<'a>>) -> Result<(), String> {
        let mut full = false;
        let mut scene_error = None;
        let mut expect_scene: Option<bool> = None;
        let mut any_scene = false;
        for item in top {
            if let Some(is_full) = expect_scene.take() {
                any_scene = true;
                let result = if is_full {
                    full = true;
                    self.built = true;
                    SceneGraph::build_after(item.items(), self.st.scene.as_ref())
                        .map(|g| self.st.scene = Some(g))
                } else {
                    apply_diff(self.st.scene.as_mut(), item.items())
                };
                scene_error = result.err();
                continue;
            }
            match item.head() {
                Some(b"RSG") => expect_scene = Some(true),
                Some(b"RDS") => expect_scene = Some(false),
                _ if item.is_list() => {
                    self.game_state(item.items());
                    self.environment(item.items(), item);
                }
                _ => {}
            }
        }
        if !any_scene {
            return Err("a message without a scene graph".to_owned());
        }
        let time = match (self.st.game.time, self.log.frames.last()) {
            (Some(t), Some(last)) if t <= last.time => last.time + step(&self.log.frames),
            (Some(t), _) => t,
            (None, Some(last)) => last.time + step(&self.log.frames),
            (None, None) => 0.0,
        };
        self.push_frame(time, full)?;
        match scene_error {
            Some(e) => Err(format!("scene graph not applied: {e}")),
            None => Ok(()),
        }
    }

    fn game_state<'a>(&mut self, items: impl Iterator<Item = Sexp<'a>>) {
        for item in items {
            let value = item.get(1);
            match item.head() {
                Some(b"time") => {
                    self.st.game.time = value.and_then(|v| v.f64()).filter(|t| t.is_finite());
                }
                Some(b"half") => self.st.game.half = value.and_then(|v| v.u32()),
                Some(b"score_left") => self.st.game.score[0] = value.and_then(|v| v.u32()).unwrap_or(0),
                Some(b"score_right") => self.st.game.score[1] = value.and_then(|v| v.u32()).unwrap_or(0),
                Some(b"play_mode") => self.st.game.play_mode = value.and_then(|v| v.u32()),
                Some(b"team_left") => self.set_side(value, Side::Left),
                Some(b"team_right") => self.set_side(value, Side::Right),
                _ => {}
            }
        }
    }

    fn environment<'a>(&mut self, items: impl Iterator<Item = Sexp<'a>>, whole: Sexp<'a>) {
        self.log.geometry.update_from(whole);
        for item in items {
            if item.head() == Some(b"play_modes") {
                self.log.play_modes = item
                    .items()
                    .skip(1)
                    .filter_map(|m| m.str())
                    .map(str::to_owned)
                    .collect();
            }
        }
    }

    fn set_side(&mut self, name: Option<Sexp<'_>>, side: Side) {
        let Some(name) = name.and_then(|n| n.str()) else {
            return;
        };
        // rcssservermj writes placeholders before the teams connect.
        if name.starts_with('<') {
            return;
        }
        let i = self.team(name);
        for t in &mut self.log.teams {
            if t.side == Some(side) {
                t.side = None;
            }
        }
        if let Some(t) = self.log.teams.get_mut(usize::from(i)) {
            t.side = Some(side);
        }
        self.refresh_sides();
    }

    /// The teams on each side now, for the frames to come.
    fn refresh_sides(&mut self) {
        let on = |s| {
            self.log
                .teams
                .iter()
                .position(|t| t.side == Some(s))
                .map(|i| i as u16)
        };
        self.st.sides = [on(Side::Left), on(Side::Right)];
    }

    fn team(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.st.team_by_name.get(name) {
            return i;
        }
        let i = self.log.teams.len();
        if i >= usize::from(u16::MAX) {
            // Absurdly many team names: the rest share the last one.
            return (i - 1) as u16;
        }
        let i = i as u16;
        self.log.teams.push(Team {
            name: name.to_owned(),
            side: None,
        });
        self.st.team_by_name.insert(name.to_owned(), i);
        i
    }

    /// The team index of a side's robots (SimSpark labels only sides).
    fn side_team(&mut self, side: Side) -> u16 {
        if let Some(i) = self.log.teams.iter().position(|t| t.side == Some(side)) {
            return i as u16;
        }
        let name = match side {
            Side::Left => "Left",
            Side::Right => "Right",
        };
        let i = self.team(name);
        if let Some(t) = self.log.teams.get_mut(usize::from(i)) {
            t.side = Some(side);
        }
        self.refresh_sides();
        i
    }

    fn push_frame(&mut self, time: f64, full: bool) -> Result<(), String> {
        let time = self.at.unwrap_or(time);
        if let Some(last) = self.log.frames.last()
            && time < last.time
        {
            return Err(format!(
                "simulation time {time} goes back from {}; frame skipped",
                last.time
            ));
        }
        let start = self.log.robots.len();
        let mut ball = None;
        if let Some(scene) = self.st.scene.take() {
            for (label, pose) in scene.objects() {
                match label {
                    Label::Ball => ball = Some(translation(&pose)),
                    Label::Robot { team, unum, model } => {
                        let team = match team {
                            TeamRef::Name(n) => self.team(n),
                            TeamRef::Left => self.side_team(Side::Left),
                            TeamRef::Right => self.side_team(Side::Right),
                        };
                        self.log.robots.push(Robot {
                            team,
                            unum: *unum,
                            model: *model,
                            pose,
                        });
                    }
                }
            }
            self.st.scene = Some(scene);
        }
        self.log.frames.push(MonitorFrame {
            time,
            game_time: self.st.game.time,
            half: self.st.game.half,
            score: self.st.game.score,
            play_mode: self.st.game.play_mode,
            full,
            ball,
            robots: start..self.log.robots.len(),
            sides: self.st.sides,
        });
        Ok(())
    }
}

/// Applies a diff to the last full scene graph. A diff of an empty one is
/// SimSpark's start (its first message written before the scene was
/// built, the diffs after it of nodes never sent whole): nothing in it can
/// be placed, and it is no fault of the file.
fn apply_diff<'a>(
    scene: Option<&mut SceneGraph>,
    nodes: impl Iterator<Item = Sexp<'a>>,
) -> Result<(), String> {
    match scene {
        Some(g) if g.is_empty() => Ok(()),
        Some(g) => g.apply_diff(nodes),
        None => Err("a diff scene graph before any full one".to_owned()),
    }
}

/// The step between the last two frames (0.04 s when there are fewer).
fn step(frames: &[MonitorFrame]) -> f64 {
    match frames {
        [.., a, b] if b.time > a.time => b.time - a.time,
        _ => 0.04,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn shift(x: f64, y: f64, z: f64) -> String {
        format!("(SLT 1 0 0 0 0 1 0 0 0 0 1 0 {x} {y} {z} 1)")
    }

    /// A small RSMP log: a full frame with ball and one robot, a diff that
    /// moves the ball, a broken line, a diff of the wrong shape.
    pub(crate) fn rsmp_sample() -> String {
        let full = format!(
            "((RSMP 1 0)((gt 1 0)0.04)((sg 1 0)full(nd TRF {id}(nd DSC(ball)(nd TRF {b}(nd SMN (load StdUnitSphere))))\
             (nd DSC(agent Alpha 2)(nd TRF (SLT 0 1 0 0 -1 0 0 0 0 0 1 0 -3 1 0.65 1)\
             (nd SMN (setVisible 1)(load models/T1/meshes/Trunk.STL)(sMat matLeft))))))\
             ((gs 1 0)(time 0.0)(half 1)(score_left 0)(score_right 0)(play_mode 0)(team_left Alpha)(team_right <RIGHT>))\
             ((ge 1 0)(FieldLength 55)(FieldWidth 36)(GoalWidth 1)(GoalDepth 3.66)(play_modes BeforeKickOff KickOff_Left PlayOn)))",
            id = shift(0.0, 0.0, 0.0),
            b = shift(0.0, 0.0, 0.11)
        );
        let diff = format!(
            "((RSMP 1 0)((gt 1 0)0.08)((sg 1 0)diff(nd(nd(nd TRF{b}(nd)))(nd(nd(nd)))))((gs 1 0)(time 0.04)(play_mode 2)(score_right 1)))",
            b = shift(1.5, -2.0, 0.11)
        );
        let bad_shape = "((RSMP 1 0)((gt 1 0)0.12)((sg 1 0)diff(nd(nd))))";
        format!("{full}\n{diff}\n((RSMP 1 0)((gt 1 0\n\n{bad_shape}\n")
    }

    #[test]
    fn reads_rsmp_frames_robots_and_state() {
        let log = parse(rsmp_sample().as_bytes()).unwrap();
        assert_eq!(log.format, MonitorFormat::Rsmp);
        assert_eq!(log.frames.len(), 3);
        let [f0, f1, f2] = &log.frames[..] else {
            unreachable!()
        };
        assert_eq!((f0.time, f0.full, f0.ball), (0.04, true, Some([0.0, 0.0, 0.11])));
        assert_eq!(f1.ball, Some([1.5, -2.0, 0.11]));
        assert_eq!((f1.score, f1.play_mode), ([0, 1], Some(2)));
        assert_eq!(log.play_mode_name(f1), Some("PlayOn"));
        assert_eq!(f2.ball, f1.ball, "a diff that does not fit changes nothing");
        let r = log.frame_robots(f1);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].unum, r[0].position()), (2, [-3.0, 1.0, 0.65]));
        assert!((r[0].heading() - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(
            log.teams,
            [Team {
                name: "Alpha".into(),
                side: Some(Side::Left)
            }]
        );
        assert_eq!(log.geometry.goal_width, 3.66);
        let lines: Vec<usize> = log.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [3, 5], "{:?}", log.warnings);
        assert!(log.warnings[1].message.contains("children"), "{:?}", log.warnings);
        assert!(log.frames.iter().all(|f| f.sides == [Some(0), None]));
        assert_eq!(log.frame_at(0.1).map(|f| f.time), Some(0.08));
        assert_eq!(log.frame_at(-1.0).map(|f| f.time), Some(0.04));
        let mid = log.ball_at(0.06, 0.1).unwrap();
        assert!(
            (mid[0] - 0.75).abs() < 1e-9 && (mid[1] + 1.0).abs() < 1e-9,
            "{mid:?}"
        );
        assert_eq!(log.ball_at(0.08, 0.1), f1.ball);
        assert_eq!(log.ball_at(0.06, 0.01), None, "frames too far apart");
        assert_eq!(log.ball_at(0.02, 0.1), None, "before the first frame");
        assert_eq!(log.robot_at(0, 2, 0.06, 0.1), Some([-3.0, 1.0, 0.65]));
    }

    /// A SimSpark log with robots of each kind its scenes name: NAOs of
    /// two types (by mesh, by material), a Soccerbot, one renamed, the
    /// empty first scene and its diffs, then a diff that moves them.
    pub(crate) fn simspark_sample() -> String {
        let nao = |mesh: &str, mats: &str, x: f64| {
            format!(
                "(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1)(nd TRF {}(nd TRF (SLT -1 0 0 0 0 0 1 0 0 1 0 0 0 0 0.05 1)\
                 (nd StaticMesh (load models/{mesh}) (sSc 0.1 0.1 0.1)(resetMaterials {mats}))))\
                 (nd TRF {}(nd StaticMesh (load models/rthigh.obj)(resetMaterials {mats}))))",
                shift(x, 1.0, 0.35),
                shift(x, 1.1, 0.2)
            )
        };
        let scene = [
            format!(
                "(nd TRF {}(nd StaticMesh (load models/soccerball.obj)))",
                shift(0.0, 0.0, 0.04)
            ),
            nao("naobody3.obj", "matNum3 matLeft matType3 naowhite", -2.0),
            nao("naobody.obj", "matNum4 matRight matType1 naowhite", 2.0),
            nao("naobody9.obj", "matNum5 matLeft naowhite", -4.0),
            format!(
                "(nd TRF {}(nd TRF (SLT -1 0 0 0 0 0 1 0 0 1 0 0 0 0 0 1)(nd SMN (load models/soccerbottorso.obj) (sMat matRight7))))",
                shift(3.0, -3.0, 0.3)
            ),
        ]
        .concat();
        let env = "((FieldLength 30)(FieldWidth 20)(play_modes BeforeKickOff PlayOn)(time 0)(team_left A)(team_right B)(play_mode 0))";
        let diff = format!(
            "((time 0.2))(RDS 0 1)((nd(nd))(nd(nd TRF {}(nd(nd)))(nd(nd)))(nd(nd(nd(nd)))(nd(nd)))(nd(nd(nd(nd)))(nd(nd)))(nd(nd(nd))))",
            shift(-1.5, 1.0, 0.35)
        );
        format!(
            "{env}(RSG 0 1)()\n((time 0))(RDS 0 1)((nd(nd StaticMesh (setVisible 1))))\n{env}(RSG 0 1)({scene})\n{diff}\n"
        )
    }

    #[test]
    fn simspark_sample_reads_its_robots() {
        let log = parse(simspark_sample().as_bytes()).unwrap();
        assert_eq!(log.frames.len(), 4);
        assert!(log.frame_robots(&log.frames[1]).is_empty());
        let ids = |f: &MonitorFrame| -> Vec<(u32, &str, [f64; 3])> {
            log.frame_robots(f)
                .iter()
                .map(|r| (r.unum, r.model().id, r.position()))
                .collect()
        };
        assert_eq!(
            ids(&log.frames[2]),
            [
                (3, "nao3", [-2.0, 1.0, 0.35]),
                (4, "nao1", [2.0, 1.0, 0.35]),
                // At its first part: the mesh, 0.05 above its body.
                (5, "unknown", [-4.0, 1.0, 0.35 + 0.05]),
                (7, "soccerbot", [3.0, -3.0, 0.3])
            ]
        );
        assert_eq!(ids(&log.frames[3])[0], (3, "nao3", [-1.5, 1.0, 0.35]));
        // The renamed robot, said once, at the line it first came on.
        assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
        assert_eq!(log.warnings[0].line, 3);
        assert!(log.warnings[0].message.contains("left 5"), "{}", log.warnings[0]);
    }

    #[test]
    fn reads_simspark_monitor_logs() {
        let full = format!(
            "((FieldLength 18)(FieldWidth 12)(GoalWidth 2.1)(GoalDepth 0.6)(play_modes BeforeKickOff PlayOn)\
             (time 0)(team_left magma)(half 1)(score_left 0)(score_right 0)(play_mode 0))(RSG 0 1)\
             ((nd TRF {b}(nd StaticMesh (load models/soccerball.obj)))\
             (nd TRF {r}(nd StaticMesh (load models/naobody.obj)(resetMaterials matNum3 matRight))))",
            b = shift(1.0, 2.0, 0.04),
            r = shift(5.0, -1.0, 0.38)
        );
        let diff = format!(
            "((time 0.08)(play_mode 1))(RDS 0 1)((nd {}(nd))(nd(nd)))",
            shift(2.0, 2.0, 0.04)
        );
        let log = parse(format!("{full}\n{diff}\n(RDS 0 1)((nd(nd))(nd(nd)))\n").as_bytes()).unwrap();
        assert_eq!(log.format, MonitorFormat::SimSpark);
        assert_eq!(log.geometry.length, 18.0);
        let times: Vec<f64> = log.frames.iter().map(|f| f.time).collect();
        assert_eq!(times, [0.0, 0.08, 0.16]);
        assert_eq!(log.frames[1].ball, Some([2.0, 2.0, 0.04]));
        let r = log.frame_robots(&log.frames[1]);
        assert_eq!((r[0].unum, r[0].position()), (3, [5.0, -1.0, 0.38]));
        assert_eq!(log.teams[r[0].team as usize].side, Some(Side::Right));
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    }

    #[test]
    fn messages_fed_one_by_one_give_the_files_frames_at_the_times_given() {
        let sample = rsmp_sample();
        let whole = parse(sample.as_bytes()).unwrap();
        // The grammar is sniffed from the first message into an empty log.
        let mut log = MonitorLog::new(MonitorFormat::SimSpark);
        let mut stream = MonitorStream::new();
        let mut at = Vec::new();
        let mut errors = 0;
        for (i, (_, _, text)) in lines(sample.as_bytes()).enumerate() {
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let t = 1.7e9 + i as f64 * 0.02;
            let before = log.frames.len();
            errors += usize::from(stream.message(&mut log, text, Some(t)).is_err());
            if log.frames.len() > before {
                at.push(t);
            }
        }
        assert_eq!((log.format, errors), (MonitorFormat::Rsmp, 2));
        let times: Vec<f64> = log.frames.iter().map(|f| f.time).collect();
        assert_eq!(times, at);
        assert_eq!(log.frames.len(), whole.frames.len());
        for (a, b) in log.frames.iter().zip(&whole.frames) {
            assert_eq!((a.ball, a.score, a.play_mode), (b.ball, b.score, b.play_mode));
            assert_eq!(log.frame_robots(a), whole.frame_robots(b));
        }
        assert_eq!(log.teams, whole.teams);
        // A new connection starts from a full scene graph.
        stream.restart();
        let diff = lines(sample.as_bytes()).nth(1).unwrap().2;
        let e = stream.message(&mut log, diff, Some(2e9)).unwrap_err();
        assert!(e.contains("before any full one"), "{e}");
        // Sides swapped from then on; the frames before keep theirs.
        let swapped = String::from_utf8_lossy(lines(sample.as_bytes()).next().unwrap().2).replace(
            "(team_left Alpha)(team_right <RIGHT>)",
            "(team_left Bravo)(team_right Alpha)",
        );
        stream
            .message(&mut log, swapped.as_bytes(), Some(2e9 + 1.0))
            .unwrap();
        let sides: Vec<[Option<u16>; 2]> = log.frames.iter().map(|f| f.sides).collect();
        assert_eq!(sides[..3], [[Some(0), None]; 3]);
        assert_eq!(sides.last(), Some(&[Some(1), Some(0)]));
        assert_eq!(log.teams[1].name, "Bravo");
        // Another server on the port, in the other grammar: a log of its own.
        stream.restart();
        let simspark = b"((FieldLength 18)(time 3)(team_left magma))(RSG 0 1)((nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 1 2 0.04 1)(nd StaticMesh (load models/soccerball.obj))))";
        stream.message(&mut log, simspark, Some(2e9 + 2.0)).unwrap();
        assert_eq!((log.format, log.frames.len()), (MonitorFormat::SimSpark, 1));
        assert_eq!(log.frames[0].ball, Some([1.0, 2.0, 0.04]));
        assert_eq!(log.teams[0].name, "magma");
    }

    #[test]
    fn forgetting_keeps_the_frame_in_effect_and_its_robots() {
        let mut log = parse(rsmp_sample().as_bytes()).unwrap();
        let kept: Vec<(f64, Vec<Robot>)> = log.frames[1..]
            .iter()
            .map(|f| (f.time, log.frame_robots(f).to_vec()))
            .collect();
        log.forget_before(-1.0);
        assert_eq!(log.frames.len(), 3, "nothing before");
        log.forget_before(log.frames[1].time + 0.01);
        let now: Vec<(f64, Vec<Robot>)> = log
            .frames
            .iter()
            .map(|f| (f.time, log.frame_robots(f).to_vec()))
            .collect();
        assert_eq!(now, kept);
        assert_eq!(log.robots.len(), 2);
        log.forget_before(f64::INFINITY);
        assert_eq!(log.frames.len(), 1, "the last is in effect");
    }

    #[test]
    fn rejects_what_is_not_a_monitor_log() {
        for bad in [&b""[..], b"hello", b"(time (now 1))(GS (t 0))", b"((RSMP 1 0)\n"] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let e = parse(b"((RSMP 1 0)((gt 1 0)nan))").unwrap_err();
        assert!(e.to_string().contains("could be read"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random bytes after a valid start, and valid logs with bytes
        /// changed or cut, load or fail cleanly; times never go back.
        #[test]
        fn mutated_logs_never_panic(
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::sample::select(b"()0123456789.- \nndTRFSLTemaNumLftRighy".to_vec())), 0..12),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            simspark in proptest::prelude::any::<bool>(),
        ) {
            let mut b = if simspark { simspark_sample() } else { rsmp_sample() }.into_bytes();
            for (i, v) in edits {
                let i = i.index(b.len());
                b[i] = v;
            }
            b.truncate(cut.index(b.len() + 1));
            b.extend_from_slice(&noise);
            if let Ok(log) = parse(&b) {
                for w in log.frames.windows(2) {
                    proptest::prop_assert!(w[0].time <= w[1].time);
                }
                for f in &log.frames {
                    proptest::prop_assert!(f.robots.end <= log.robots.len());
                    proptest::prop_assert!(f.time.is_finite());
                }
                for r in &log.robots {
                    proptest::prop_assert!((r.team as usize) < log.teams.len());
                    proptest::prop_assert!(r.position().iter().all(|v| v.is_finite()));
                    proptest::prop_assert!(r.model().radius > 0.0);
                }
                for f in &log.frames {
                    proptest::prop_assert!(f.sides.iter().flatten().all(|&t| usize::from(t) < log.teams.len()));
                }
            }
        }
    }
}
