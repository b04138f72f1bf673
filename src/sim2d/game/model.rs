//! The game log model: what every version of the format becomes
//! ([`Game`] with its parameters, player types and show records), and the
//! [`Builder`] the version readers feed.

use crate::sim2d::{Side, Warning, Warnings, clock};

/// The format a game log was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// `ULG` + byte 3: binary records in network byte order.
    Binary3,
    /// `ULG4`: text.
    Text4,
    /// `ULG5`: text, with the stamina capacity.
    Text5,
    /// `ULG6`: text, with the focus point `(fp dist dir)` and a 12th count.
    Text6,
    /// rcssserver 19's JSON (`game_log_version` −1).
    Json,
}

/// Server parameters: the typed ones with rcssserver's defaults, and all
/// of the file's as written.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerParams {
    /// Seconds per cycle (the file gives milliseconds).
    pub simulator_step: f64,
    /// Cycles of a half (the file's `half_time` is in seconds).
    pub half_time_cycles: u32,
    pub pitch_length: f64,
    pub pitch_width: f64,
    pub goal_width: f64,
    pub penalty_area_length: f64,
    pub penalty_area_width: f64,
    pub goal_area_length: f64,
    pub goal_area_width: f64,
    pub center_circle_r: f64,
    pub visible_distance: f64,
    /// Degrees.
    pub visible_angle: f64,
    pub unum_far_length: f64,
    pub unum_too_far_length: f64,
    pub team_far_length: f64,
    pub team_too_far_length: f64,
    pub quantize_step: f64,
    pub quantize_step_l: f64,
    pub player_size: f64,
    pub ball_size: f64,
    pub kickable_margin: f64,
    pub catchable_area_l: f64,
    pub catchable_area_w: f64,
    pub tackle_dist: f64,
    pub tackle_back_dist: f64,
    pub tackle_width: f64,
    pub audio_cut_dist: f64,
    pub stamina_max: f64,
    /// Every parameter of the record as written (binary v3: the fields of
    /// its struct, scaled back).
    pub raw: Vec<(String, String)>,
}

impl Default for ServerParams {
    fn default() -> Self {
        ServerParams {
            simulator_step: 0.1,
            half_time_cycles: 3000,
            pitch_length: 105.0,
            pitch_width: 68.0,
            goal_width: 14.02,
            penalty_area_length: 16.5,
            penalty_area_width: 40.32,
            goal_area_length: 5.5,
            goal_area_width: 18.32,
            center_circle_r: 9.15,
            visible_distance: 3.0,
            visible_angle: 90.0,
            unum_far_length: 20.0,
            unum_too_far_length: 40.0,
            team_far_length: 40.0,
            team_too_far_length: 60.0,
            quantize_step: 0.1,
            quantize_step_l: 0.01,
            player_size: 0.3,
            ball_size: 0.085,
            kickable_margin: 0.7,
            catchable_area_l: 1.2,
            catchable_area_w: 1.0,
            tackle_dist: 2.0,
            tackle_back_dist: 0.0,
            tackle_width: 1.25,
            audio_cut_dist: 50.0,
            stamina_max: 8000.0,
            raw: Vec::new(),
        }
    }
}

impl ServerParams {
    /// Sets the typed field `name` from `value` (finite values only);
    /// whether it is one. `half_time` is seconds, `simulator_step` ms.
    pub(crate) fn set(&mut self, name: &str, value: f64) -> bool {
        if !value.is_finite() {
            return false;
        }
        let field = match name {
            "simulator_step" => {
                if value > 0.0 {
                    self.simulator_step = value / 1000.0;
                }
                return true;
            }
            // Seconds: turned into cycles once the step is known.
            "half_time" => return true,
            "pitch_length" => &mut self.pitch_length,
            "pitch_width" => &mut self.pitch_width,
            "goal_width" => &mut self.goal_width,
            "penalty_area_length" => &mut self.penalty_area_length,
            "penalty_area_width" => &mut self.penalty_area_width,
            "goal_area_length" => &mut self.goal_area_length,
            "goal_area_width" => &mut self.goal_area_width,
            "center_circle_r" => &mut self.center_circle_r,
            "visible_distance" => &mut self.visible_distance,
            "visible_angle" => &mut self.visible_angle,
            "unum_far_length" => &mut self.unum_far_length,
            "unum_too_far_length" => &mut self.unum_too_far_length,
            "team_far_length" => &mut self.team_far_length,
            "team_too_far_length" => &mut self.team_too_far_length,
            "quantize_step" => &mut self.quantize_step,
            "quantize_step_l" => &mut self.quantize_step_l,
            "player_size" => &mut self.player_size,
            "ball_size" => &mut self.ball_size,
            "kickable_margin" => &mut self.kickable_margin,
            "catchable_area_l" => &mut self.catchable_area_l,
            "catchable_area_w" => &mut self.catchable_area_w,
            "tackle_dist" => &mut self.tackle_dist,
            "tackle_back_dist" => &mut self.tackle_back_dist,
            "tackle_width" => &mut self.tackle_width,
            "audio_cut_dist" => &mut self.audio_cut_dist,
            "stamina_max" => &mut self.stamina_max,
            _ => return false,
        };
        *field = value;
        true
    }
}

/// A heterogeneous player type: what the sensor and action models need
/// (the server's values for what the file does not give), and every field
/// as written.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerType {
    pub id: u16,
    pub player_speed_max: f64,
    pub stamina_inc_max: f64,
    pub player_decay: f64,
    pub inertia_moment: f64,
    pub dash_power_rate: f64,
    pub player_size: f64,
    pub kickable_margin: f64,
    pub kick_rand: f64,
    pub extra_stamina: f64,
    pub effort_max: f64,
    pub effort_min: f64,
    pub kick_power_rate: f64,
    pub foul_detect_probability: f64,
    pub catchable_area_l_stretch: f64,
    pub unum_far_length: f64,
    pub unum_too_far_length: f64,
    pub team_far_length: f64,
    pub team_too_far_length: f64,
    pub raw: Vec<(String, String)>,
}

impl PlayerType {
    /// A type with the server's (default type's) values.
    pub fn from_server(id: u16, s: &ServerParams) -> Self {
        PlayerType {
            id,
            player_speed_max: 1.05,
            stamina_inc_max: 45.0,
            player_decay: 0.4,
            inertia_moment: 5.0,
            dash_power_rate: 0.006,
            player_size: s.player_size,
            kickable_margin: s.kickable_margin,
            kick_rand: 0.1,
            extra_stamina: 50.0,
            effort_max: 1.0,
            effort_min: 0.6,
            kick_power_rate: 0.027,
            foul_detect_probability: 0.5,
            catchable_area_l_stretch: 1.0,
            unum_far_length: s.unum_far_length,
            unum_too_far_length: s.unum_too_far_length,
            team_far_length: s.team_far_length,
            team_too_far_length: s.team_too_far_length,
            raw: Vec::new(),
        }
    }

    /// Sets the typed field `name` (finite values only); whether it is one.
    pub(crate) fn set(&mut self, name: &str, value: f64) -> bool {
        if !value.is_finite() {
            return false;
        }
        let field = match name {
            "id" => {
                if (0.0..=f64::from(u16::MAX)).contains(&value) {
                    self.id = value as u16;
                }
                return true;
            }
            "player_speed_max" => &mut self.player_speed_max,
            "stamina_inc_max" => &mut self.stamina_inc_max,
            "player_decay" => &mut self.player_decay,
            "inertia_moment" => &mut self.inertia_moment,
            "dash_power_rate" => &mut self.dash_power_rate,
            "player_size" => &mut self.player_size,
            "kickable_margin" => &mut self.kickable_margin,
            "kick_rand" => &mut self.kick_rand,
            "extra_stamina" => &mut self.extra_stamina,
            "effort_max" => &mut self.effort_max,
            "effort_min" => &mut self.effort_min,
            "kick_power_rate" => &mut self.kick_power_rate,
            "foul_detect_probability" => &mut self.foul_detect_probability,
            "catchable_area_l_stretch" => &mut self.catchable_area_l_stretch,
            "unum_far_length" => &mut self.unum_far_length,
            "unum_too_far_length" => &mut self.unum_too_far_length,
            "team_far_length" => &mut self.team_far_length,
            "team_too_far_length" => &mut self.team_too_far_length,
            _ => return false,
        };
        *field = value;
        true
    }

    /// The kickable distance: player size + kickable margin + ball size.
    pub fn kickable_area(&self, server: &ServerParams) -> f64 {
        self.player_size + self.kickable_margin + server.ball_size
    }
}

/// The play modes, by the server's number (binary v3 writes the number,
/// the text formats the name).
pub const PLAY_MODE_NAMES: [&str; 52] = [
    "",
    "before_kick_off",
    "time_over",
    "play_on",
    "kick_off_l",
    "kick_off_r",
    "kick_in_l",
    "kick_in_r",
    "free_kick_l",
    "free_kick_r",
    "corner_kick_l",
    "corner_kick_r",
    "goal_kick_l",
    "goal_kick_r",
    "goal_l",
    "goal_r",
    "drop_ball",
    "offside_l",
    "offside_r",
    "penalty_kick_l",
    "penalty_kick_r",
    "first_half_over",
    "pause",
    "human_judge",
    "foul_charge_l",
    "foul_charge_r",
    "foul_push_l",
    "foul_push_r",
    "foul_multiple_attack_l",
    "foul_multiple_attack_r",
    "foul_ballout_l",
    "foul_ballout_r",
    "back_pass_l",
    "back_pass_r",
    "free_kick_fault_l",
    "free_kick_fault_r",
    "catch_fault_l",
    "catch_fault_r",
    "indirect_free_kick_l",
    "indirect_free_kick_r",
    "penalty_setup_l",
    "penalty_setup_r",
    "penalty_ready_l",
    "penalty_ready_r",
    "penalty_taken_l",
    "penalty_taken_r",
    "penalty_miss_l",
    "penalty_miss_r",
    "penalty_score_l",
    "penalty_score_r",
    "illegal_defense_l",
    "illegal_defense_r",
];

/// A play mode: the server's number (an index into [`PLAY_MODE_NAMES`]; 0
/// when unknown: before the first `(playmode …)` record, or a name this
/// reader does not know).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PlayMode(pub u8);

impl PlayMode {
    pub const UNKNOWN: PlayMode = PlayMode(0);
    pub const BEFORE_KICK_OFF: PlayMode = PlayMode(1);
    pub const TIME_OVER: PlayMode = PlayMode(2);
    pub const PLAY_ON: PlayMode = PlayMode(3);

    /// The mode called `name`, if the server has one.
    pub fn from_name(name: &[u8]) -> Option<PlayMode> {
        PLAY_MODE_NAMES
            .iter()
            .position(|n| !n.is_empty() && n.as_bytes() == name)
            .map(|i| PlayMode(i as u8))
    }

    /// The server's name (`""` for unknown).
    pub fn name(self) -> &'static str {
        PLAY_MODE_NAMES.get(usize::from(self.0)).copied().unwrap_or("")
    }
}

/// The ball in a show record.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ball {
    pub pos: [f64; 2],
    pub vel: [f64; 2],
}

/// View quality of a player's `(v h 90)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewQuality {
    High,
    Low,
}

/// Stamina `(s stamina effort recovery [capacity])`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamina {
    pub stamina: f64,
    pub effort: f64,
    pub recovery: f64,
    /// v5 and later.
    pub capacity: Option<f64>,
}

/// Bits of a player's `state` (rcssserver's `PlayerState`).
pub mod state {
    pub const STAND: u32 = 0x0000_0001;
    pub const KICK: u32 = 0x0000_0002;
    pub const KICK_FAULT: u32 = 0x0000_0004;
    pub const GOALIE: u32 = 0x0000_0008;
    pub const CATCH: u32 = 0x0000_0010;
    pub const CATCH_FAULT: u32 = 0x0000_0020;
    pub const BALL_TO_PLAYER: u32 = 0x0000_0040;
    pub const PLAYER_TO_BALL: u32 = 0x0000_0080;
    pub const DISCARD: u32 = 0x0000_0100;
    pub const LOST: u32 = 0x0000_0200;
    pub const BALL_COLLIDE: u32 = 0x0000_0400;
    pub const PLAYER_COLLIDE: u32 = 0x0000_0800;
    pub const TACKLE: u32 = 0x0000_1000;
    pub const TACKLE_FAULT: u32 = 0x0000_2000;
    pub const BACK_PASS: u32 = 0x0000_4000;
    pub const FREE_KICK_FAULT: u32 = 0x0000_8000;
    pub const POST_COLLIDE: u32 = 0x0001_0000;
    pub const FOUL_CHARGED: u32 = 0x0002_0000;
    pub const YELLOW_CARD: u32 = 0x0004_0000;
    pub const RED_CARD: u32 = 0x0008_0000;
    pub const ILLEGAL_DEFENSE: u32 = 0x0010_0000;
}

/// The names of [`Player::counts`] in order (the text formats' `(c …)`
/// order; binary v3 has the first 8, v4 and v5 the first 11, v6 and JSON
/// all 12).
pub const COUNT_NAMES: [&str; 12] = [
    "kick",
    "dash",
    "turn",
    "catch",
    "move",
    "turn_neck",
    "change_view",
    "say",
    "tackle",
    "pointto",
    "attentionto",
    "change_focus",
];

/// One player in a show record.
#[derive(Clone, Debug, PartialEq)]
pub struct Player {
    pub side: Side,
    pub unum: u8,
    pub player_type: u16,
    /// Bits of [`state`].
    pub state: u32,
    pub pos: [f64; 2],
    pub vel: [f64; 2],
    /// Body direction, degrees.
    pub body: f64,
    /// Neck direction relative to the body, degrees.
    pub neck: f64,
    /// Where the arm points (absolute x, y), while it does.
    pub arm: Option<[f64; 2]>,
    /// View quality and view width (degrees).
    pub view: Option<(ViewQuality, f64)>,
    pub stamina: Option<Stamina>,
    /// The player it attends to (`(f l 2)`).
    pub focus: Option<(Side, u8)>,
    /// v6 focus point `(fp dist dir)`: distance and direction (degrees)
    /// relative to body + neck.
    pub focus_point: Option<[f64; 2]>,
    /// Command counts, in [`COUNT_NAMES`] order.
    pub counts: Vec<u32>,
}

impl Player {
    pub fn is_goalie(&self) -> bool {
        self.state & state::GOALIE != 0
    }

    /// The face direction (body + neck), degrees.
    pub fn face(&self) -> f64 {
        self.body + self.neck
    }
}

/// One show record: the ball and players of one server step.
#[derive(Clone, Debug, PartialEq)]
pub struct ShowRecord {
    pub cycle: u32,
    /// The stoppage step: how many records before it in a row had the same cycle.
    pub stopped: u32,
    pub play_mode: PlayMode,
    /// Left, right.
    pub score: [u32; 2],
    pub ball: Ball,
    pub players: Vec<Player>,
}

impl ShowRecord {
    /// This record's clock ([`clock`]) at `step` seconds per cycle.
    pub fn clock(&self, step: f64) -> f64 {
        clock(self.cycle, self.stopped, step)
    }

    /// The player `unum` of `side`, if it is in the record.
    pub fn player(&self, side: Side, unum: u8) -> Option<&Player> {
        self.players.iter().find(|p| p.side == side && p.unum == unum)
    }
}

/// A `(msg …)` record.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The index in [`Game::records`] of the show record it follows
    /// (`None` before the first).
    pub follows: Option<usize>,
    pub cycle: u32,
    /// 1: message board (results, coach messages), 2: log board
    /// (`record_messages`: what the players sent).
    pub board: u16,
    /// The text; bytes that are not UTF-8 are replaced (with a warning).
    pub text: String,
}

/// A whole game log.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    pub version: Version,
    pub server: ServerParams,
    pub player_types: Vec<PlayerType>,
    /// Left and right team names (empty when no team record named them).
    pub teams: [String; 2],
    pub records: Vec<ShowRecord>,
    pub messages: Vec<Message>,
    /// How many team-graphic messages (`(team_graphic_l …)`) were skipped.
    pub team_graphics: usize,
    pub warnings: Vec<Warning>,
    /// What the reader passed over as not a game log.
    pub skipped: crate::log::Skipped,
}

impl Game {
    /// The clock ([`clock`]) of record `i`.
    pub fn record_clock(&self, i: usize) -> Option<f64> {
        self.records.get(i).map(|r| r.clock(self.server.simulator_step))
    }

    /// The index of the record nearest to clock `t` (records are in clock
    /// order in any file the server wrote; a corrupt file's records out of
    /// order were warned about).
    pub fn record_at(&self, t: f64) -> Option<usize> {
        let step = self.server.simulator_step;
        let i = self.records.partition_point(|r| r.clock(step) < t);
        let before = i.checked_sub(1);
        match (before, self.records.get(i)) {
            (Some(b), Some(a)) => {
                let db = t - self.records[b].clock(step);
                let da = a.clock(step) - t;
                Some(if da < db { i } else { b })
            }
            (Some(b), None) => Some(b),
            (None, Some(_)) => Some(i),
            (None, None) => None,
        }
    }
}

/// Why bytes could not be read as a game log.
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    /// Not a game log (no `ULG` header, no JSON game log start).
    #[error("not a RoboCup 2D game log: {0}")]
    NotAGameLog(String),
    /// Not one show record: no moment of a match to show.
    #[error("no show record in it: {0}")]
    NoShowRecord(String),
    /// The JSON is malformed before any element could be read.
    #[error("line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
}

/// What the format readers feed: the game being built, the current play
/// mode and score, and the warnings.
pub(crate) struct Builder {
    pub game: Game,
    pub warnings: Warnings,
    pub play_mode: PlayMode,
    pub score: [u32; 2],
    /// Show records since the last one kept that repeated it exactly
    /// (stoppage steps in which nothing moved).
    repeats: u32,
}

impl Builder {
    pub(super) fn new(version: Version) -> Self {
        Builder {
            game: Game {
                version,
                server: ServerParams::default(),
                player_types: Vec::new(),
                teams: [String::new(), String::new()],
                records: Vec::new(),
                messages: Vec::new(),
                team_graphics: 0,
                warnings: Vec::new(),
                skipped: crate::log::Skipped::default(),
            },
            warnings: Warnings::default(),
            play_mode: PlayMode::UNKNOWN,
            score: [0, 0],
            repeats: 0,
        }
    }

    /// Adds a show record of `cycle` with the current play mode and
    /// score. A record whose cycle is before the previous record's (a
    /// corrupt file: the server writes them in order) is dropped, and the
    /// previous record's cycle returned for the caller to say so with the
    /// record's place: every reader of the game (`log info`, the viewer,
    /// export) then sees the same records, in order.
    ///
    /// A record that repeats the one before it exactly (same cycle, play
    /// mode, score, ball and players: a stoppage step in which nothing
    /// moved, as rcssserver writes them) is one moment with it, not kept
    /// again: a line repeated thousands of times would otherwise be as
    /// many pictures of one moment. It still counts as a stoppage step:
    /// the next record's `stopped` is the server's step.
    pub fn show(&mut self, cycle: u32, ball: Ball, players: Vec<Player>) -> Option<u32> {
        if let Some(r) = self.game.records.last()
            && r.cycle == cycle
            && r.play_mode == self.play_mode
            && r.score == self.score
            && r.ball == ball
            && r.players == players
        {
            self.repeats = self.repeats.saturating_add(1);
            return None;
        }
        if let Some(r) = self.game.records.last()
            && r.cycle > cycle
        {
            return Some(r.cycle);
        }
        let stopped = match self.game.records.last() {
            Some(r) if r.cycle == cycle => r.stopped.saturating_add(1).saturating_add(self.repeats),
            _ => 0,
        };
        self.repeats = 0;
        self.game.records.push(ShowRecord {
            cycle,
            stopped,
            play_mode: self.play_mode,
            score: self.score,
            ball,
            players,
        });
        None
    }

    /// A team record: names (`null` or empty leaves a name as it was) and score.
    pub fn team(&mut self, names: [&str; 2], score: [u32; 2]) {
        for (slot, name) in self.game.teams.iter_mut().zip(names) {
            if !name.is_empty() && name != "null" {
                name.clone_into(slot);
            }
        }
        self.score = score;
    }

    /// A message record; team graphics are counted, not kept.
    pub fn message(&mut self, cycle: u32, board: u16, text: String) {
        if text.starts_with("(team_graphic_") {
            self.game.team_graphics += 1;
            return;
        }
        self.game.messages.push(Message {
            follows: self.game.records.len().checked_sub(1),
            cycle,
            board,
            text,
        });
    }

    /// A new player type with the server's values, to be filled in.
    pub fn new_player_type(&self) -> PlayerType {
        PlayerType::from_server(self.game.player_types.len() as u16, &self.game.server)
    }

    pub(super) fn finish(self) -> Game {
        let mut game = self.game;
        let half_time = game
            .server
            .raw
            .iter()
            .find(|(k, _)| k == "half_time")
            .and_then(|(_, v)| v.parse::<f64>().ok());
        if let Some(seconds) = half_time
            && seconds.is_finite()
            && seconds > 0.0
        {
            let cycles = (seconds / game.server.simulator_step).round();
            game.server.half_time_cycles = if cycles < f64::from(u32::MAX) {
                cycles as u32
            } else {
                u32::MAX
            };
        }
        game.warnings = self.warnings.finish();
        game
    }
}

/// Formats a number for [`ServerParams::raw`] the way the text logs do.
pub(crate) fn number_text(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
