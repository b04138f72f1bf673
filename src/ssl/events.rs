//! The referee's game events: what happened (ball out, a foul, a goal, a
//! card), by whom and where, each type with fields of its own.
//!
//! A game event on the wire is a message with a type number, an id, its
//! origins and creation time, and exactly one type-specific sub-message
//! (a oneof; the field number of the sub-message differs from the type
//! number for some types). Rather than a generated type per event, the
//! [`TYPES`] table says for each type which field holds its sub-message
//! and what each of that sub-message's fields means; one table-driven
//! decoder reads them all into named [`Value`]s. Fields of the wrong wire
//! type, and types this table does not know, are skipped: an event from a
//! newer game controller still shows its type number, id and time.
//!
//! Units: locations and distances in millimetres (the wire's metres
//! scaled), speeds in m/s (as the rules state them), durations in seconds,
//! times in seconds since the Unix epoch.
//!
//! Events name teams ([`super::packets::Team`]) and the referee packets
//! carry events: the two files name each other.

use std::fmt::Write as _;

use crate::geom::Vec2;
use crate::log::wire::{I32, LEN, Reader, VARINT, WireResult};

use super::packets::Team;

/// What a field of an event's sub-message holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A team (yellow or blue).
    Team,
    /// A robot id.
    Bot,
    /// A point on the field (metres on the wire).
    Location,
    /// A distance or height (metres on the wire).
    Length,
    /// A speed (m/s).
    Speed,
    /// A duration (seconds).
    Duration,
    /// An angle (radians).
    Angle,
    Flag,
    Text,
    /// A number of robots.
    Count,
    /// A time in microseconds since the epoch.
    Micros,
    /// Other game events (the fouls that added up to a card).
    Events,
}

use FieldKind as K;

/// One event type: its number, the field of its sub-message, its name and
/// the meaning of the sub-message's fields.
#[derive(Debug, PartialEq, Eq)]
pub struct EventType {
    /// The type number (the event's `type` field).
    pub code: i32,
    /// The field number of the type's sub-message in the event.
    pub field: u32,
    /// snake_case name, used in entity names.
    pub name: &'static str,
    /// What happened, in words.
    pub label: &'static str,
    /// `(field number, name, kind)` of the sub-message's fields.
    pub fields: &'static [(u32, &'static str, FieldKind)],
}

const OUT: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "by_bot", K::Bot),
    (3, "location", K::Location),
];
const OUT_KICK: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "by_bot", K::Bot),
    (3, "location", K::Location),
    (4, "kick_location", K::Location),
];
const BOT_AT_DISTANCE: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "by_bot", K::Bot),
    (3, "location", K::Location),
    (4, "distance", K::Length),
];
const BOT_AT_DISTANCE_BALL: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "by_bot", K::Bot),
    (3, "location", K::Location),
    (4, "distance", K::Length),
    (5, "ball_location", K::Location),
];
const BOT_WITH_BALL: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "by_bot", K::Bot),
    (3, "location", K::Location),
    (4, "ball_location", K::Location),
];
const TEAM_ONLY: &[(u32, &str, FieldKind)] = &[(1, "by_team", K::Team)];
const TEAM_REASON: &[(u32, &str, FieldKind)] = &[(1, "by_team", K::Team), (2, "reason", K::Text)];
const PUSH: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "violator", K::Bot),
    (3, "victim", K::Bot),
    (4, "location", K::Location),
    (5, "pushed_distance", K::Length),
];
const CRASH: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "violator", K::Bot),
    (3, "victim", K::Bot),
    (4, "location", K::Location),
    (5, "crash_speed", K::Speed),
    (6, "speed_diff", K::Speed),
    (7, "crash_angle", K::Angle),
];
const GOAL: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "kicking_bot", K::Bot),
    (3, "location", K::Location),
    (4, "kick_location", K::Location),
    (5, "max_ball_height", K::Length),
    (6, "kicking_team", K::Team),
    (7, "num_robots_by_team", K::Count),
    (8, "last_touch_by_team", K::Micros),
    (9, "message", K::Text),
];
const TOUCH_OPPONENT: &[(u32, &str, FieldKind)] = &[
    (1, "by_team", K::Team),
    (2, "by_bot", K::Bot),
    (3, "location", K::Location),
    (4, "victim", K::Bot),
];

/// Every event type underlay knows, current and retired.
pub static TYPES: &[EventType] = &[
    EventType {
        code: 6,
        field: 6,
        name: "ball_left_field_touch_line",
        label: "ball left the field over the touch line",
        fields: OUT,
    },
    EventType {
        code: 7,
        field: 7,
        name: "ball_left_field_goal_line",
        label: "ball left the field over the goal line",
        fields: OUT,
    },
    EventType {
        code: 11,
        field: 11,
        name: "aimless_kick",
        label: "aimless kick",
        fields: OUT_KICK,
    },
    EventType {
        code: 19,
        field: 19,
        name: "attacker_too_close_to_defense_area",
        label: "attacker too close to the defense area",
        fields: BOT_AT_DISTANCE_BALL,
    },
    EventType {
        code: 31,
        field: 31,
        name: "defender_in_defense_area",
        label: "defender in its defense area",
        fields: BOT_AT_DISTANCE,
    },
    EventType {
        code: 41,
        field: 43,
        name: "boundary_crossing",
        label: "ball chipped over the boundary",
        fields: &[(1, "by_team", K::Team), (2, "location", K::Location)],
    },
    EventType {
        code: 13,
        field: 13,
        name: "keeper_held_ball",
        label: "keeper held the ball",
        fields: &[
            (1, "by_team", K::Team),
            (2, "location", K::Location),
            (3, "duration", K::Duration),
        ],
    },
    EventType {
        code: 17,
        field: 17,
        name: "bot_dribbled_ball_too_far",
        label: "robot dribbled the ball too far",
        fields: &[
            (1, "by_team", K::Team),
            (2, "by_bot", K::Bot),
            (3, "start", K::Location),
            (4, "end", K::Location),
        ],
    },
    EventType {
        code: 24,
        field: 24,
        name: "bot_pushed_bot",
        label: "robot pushed a robot",
        fields: PUSH,
    },
    EventType {
        code: 26,
        field: 26,
        name: "bot_held_ball_deliberately",
        label: "robot held the ball deliberately",
        fields: &[
            (1, "by_team", K::Team),
            (2, "by_bot", K::Bot),
            (3, "location", K::Location),
            (4, "duration", K::Duration),
        ],
    },
    EventType {
        code: 27,
        field: 27,
        name: "bot_tipped_over",
        label: "robot tipped over",
        fields: BOT_WITH_BALL,
    },
    EventType {
        code: 47,
        field: 51,
        name: "bot_dropped_parts",
        label: "robot dropped parts",
        fields: BOT_WITH_BALL,
    },
    EventType {
        code: 15,
        field: 15,
        name: "attacker_touched_ball_in_defense_area",
        label: "attacker touched the ball in the defense area",
        fields: BOT_AT_DISTANCE,
    },
    EventType {
        code: 18,
        field: 18,
        name: "bot_kicked_ball_too_fast",
        label: "ball kicked too fast",
        fields: &[
            (1, "by_team", K::Team),
            (2, "by_bot", K::Bot),
            (3, "location", K::Location),
            (4, "initial_ball_speed", K::Speed),
            (5, "chipped", K::Flag),
        ],
    },
    EventType {
        code: 22,
        field: 22,
        name: "bot_crash_unique",
        label: "robot crashed into a robot",
        fields: CRASH,
    },
    EventType {
        code: 21,
        field: 21,
        name: "bot_crash_drawn",
        label: "robots crashed (both to blame)",
        fields: &[
            (1, "bot_yellow", K::Bot),
            (2, "bot_blue", K::Bot),
            (3, "location", K::Location),
            (4, "crash_speed", K::Speed),
            (5, "speed_diff", K::Speed),
            (6, "crash_angle", K::Angle),
        ],
    },
    EventType {
        code: 29,
        field: 29,
        name: "defender_too_close_to_kick_point",
        label: "defender too close to the kick point",
        fields: BOT_AT_DISTANCE,
    },
    EventType {
        code: 28,
        field: 28,
        name: "bot_too_fast_in_stop",
        label: "robot too fast during stop",
        fields: &[
            (1, "by_team", K::Team),
            (2, "by_bot", K::Bot),
            (3, "location", K::Location),
            (4, "speed", K::Speed),
        ],
    },
    EventType {
        code: 20,
        field: 20,
        name: "bot_interfered_placement",
        label: "robot interfered with the ball placement",
        fields: OUT,
    },
    EventType {
        code: 48,
        field: 52,
        name: "excessive_bot_substitution",
        label: "too many robot substitutions",
        fields: TEAM_ONLY,
    },
    EventType {
        code: 39,
        field: 39,
        name: "possible_goal",
        label: "possible goal",
        fields: GOAL,
    },
    EventType {
        code: 8,
        field: 8,
        name: "goal",
        label: "goal",
        fields: GOAL,
    },
    EventType {
        code: 42,
        field: 44,
        name: "invalid_goal",
        label: "invalid goal",
        fields: GOAL,
    },
    EventType {
        code: 14,
        field: 14,
        name: "attacker_double_touched_ball",
        label: "attacker touched the ball twice",
        fields: OUT,
    },
    EventType {
        code: 5,
        field: 5,
        name: "placement_succeeded",
        label: "ball placement succeeded",
        fields: &[
            (1, "by_team", K::Team),
            (2, "time_taken", K::Duration),
            (3, "precision", K::Length),
            (4, "distance", K::Length),
        ],
    },
    EventType {
        code: 43,
        field: 45,
        name: "penalty_kick_failed",
        label: "penalty kick failed",
        fields: &[
            (1, "by_team", K::Team),
            (2, "location", K::Location),
            (3, "reason", K::Text),
        ],
    },
    EventType {
        code: 2,
        field: 2,
        name: "no_progress_in_game",
        label: "no progress in the game",
        fields: &[(1, "location", K::Location), (2, "time", K::Duration)],
    },
    EventType {
        code: 3,
        field: 3,
        name: "placement_failed",
        label: "ball placement failed",
        fields: &[
            (1, "by_team", K::Team),
            (2, "remaining_distance", K::Length),
            (3, "nearest_own_bot_distance", K::Length),
        ],
    },
    EventType {
        code: 32,
        field: 32,
        name: "multiple_cards",
        label: "multiple cards",
        fields: TEAM_ONLY,
    },
    EventType {
        code: 34,
        field: 34,
        name: "multiple_fouls",
        label: "multiple fouls",
        fields: &[(1, "by_team", K::Team), (2, "caused_game_events", K::Events)],
    },
    EventType {
        code: 37,
        field: 37,
        name: "bot_substitution",
        label: "robot substitution",
        fields: TEAM_ONLY,
    },
    EventType {
        code: 38,
        field: 38,
        name: "too_many_robots",
        label: "too many robots",
        fields: &[
            (1, "by_team", K::Team),
            (2, "num_robots_allowed", K::Count),
            (3, "num_robots_on_field", K::Count),
            (4, "ball_location", K::Location),
        ],
    },
    EventType {
        code: 44,
        field: 46,
        name: "challenge_flag",
        label: "challenge flag",
        fields: TEAM_ONLY,
    },
    EventType {
        code: 46,
        field: 48,
        name: "challenge_flag_handled",
        label: "challenge flag handled",
        fields: &[(1, "by_team", K::Team), (2, "accepted", K::Flag)],
    },
    EventType {
        code: 45,
        field: 47,
        name: "emergency_stop",
        label: "emergency stop",
        fields: TEAM_ONLY,
    },
    EventType {
        code: 35,
        field: 35,
        name: "unsporting_behavior_minor",
        label: "unsporting behaviour (minor)",
        fields: TEAM_REASON,
    },
    EventType {
        code: 36,
        field: 36,
        name: "unsporting_behavior_major",
        label: "unsporting behaviour (major)",
        fields: TEAM_REASON,
    },
    // Retired types, still found in older logs.
    EventType {
        code: 1,
        field: 1,
        name: "prepared",
        label: "teams prepared",
        fields: &[(1, "time_taken", K::Duration)],
    },
    EventType {
        code: 9,
        field: 9,
        name: "indirect_goal",
        label: "goal from an indirect free kick",
        fields: OUT_KICK,
    },
    EventType {
        code: 10,
        field: 10,
        name: "chipped_goal",
        label: "chipped goal",
        fields: &[
            (1, "by_team", K::Team),
            (2, "by_bot", K::Bot),
            (3, "location", K::Location),
            (4, "kick_location", K::Location),
            (5, "max_ball_height", K::Length),
        ],
    },
    EventType {
        code: 12,
        field: 12,
        name: "kick_timeout",
        label: "kick timeout",
        fields: &[
            (1, "by_team", K::Team),
            (2, "location", K::Location),
            (3, "time", K::Duration),
        ],
    },
    EventType {
        code: 16,
        field: 16,
        name: "attacker_touched_opponent_in_defense_area",
        label: "attacker touched an opponent in the defense area",
        fields: TOUCH_OPPONENT,
    },
    EventType {
        code: 40,
        field: 42,
        name: "attacker_touched_opponent_in_defense_area_skipped",
        label: "attacker touched an opponent in the defense area (skipped)",
        fields: TOUCH_OPPONENT,
    },
    EventType {
        code: 23,
        field: 23,
        name: "bot_crash_unique_skipped",
        label: "robot crashed into a robot (skipped)",
        fields: CRASH,
    },
    EventType {
        code: 25,
        field: 25,
        name: "bot_pushed_bot_skipped",
        label: "robot pushed a robot (skipped)",
        fields: PUSH,
    },
    EventType {
        code: 30,
        field: 30,
        name: "defender_in_defense_area_partially",
        label: "defender partially in its defense area",
        fields: BOT_AT_DISTANCE_BALL,
    },
    EventType {
        code: 33,
        field: 33,
        name: "multiple_placement_failures",
        label: "multiple ball placement failures",
        fields: TEAM_ONLY,
    },
];

/// The event type of a type number.
pub fn type_by_code(code: i32) -> Option<&'static EventType> {
    TYPES.iter().find(|t| t.code == code)
}

fn type_by_field(field: u32) -> Option<&'static EventType> {
    TYPES.iter().find(|t| t.field == field)
}

/// A decoded field value, in underlay's units (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `None` for the wire's "unknown team".
    Team(Option<Team>),
    Bot(u32),
    /// Millimetres.
    Point(Vec2),
    /// Millimetres.
    Length(f64),
    /// Metres per second.
    Speed(f64),
    /// Seconds.
    Duration(f64),
    /// Radians.
    Angle(f64),
    Flag(bool),
    Text(String),
    Count(i64),
    /// Seconds since the epoch.
    Time(f64),
    Events(Vec<GameEvent>),
}

/// One game event.
#[derive(Clone, Debug, PartialEq)]
pub struct GameEvent {
    /// The type, when this table knows it.
    pub kind: Option<&'static EventType>,
    /// The type number as sent (may be absent in old logs).
    pub code: Option<i32>,
    /// A unique id, when the game controller sets one.
    pub id: Option<String>,
    /// Who raised it (autorefs' names; empty for the game controller).
    pub origin: Vec<String>,
    /// When it was raised (s since the epoch), if sent.
    pub created: Option<f64>,
    /// The type's own fields, in wire order.
    pub fields: Vec<(&'static str, Value)>,
}

/// Nested events (multiple fouls) are read this deep at most.
const MAX_DEPTH: u32 = 4;

impl GameEvent {
    /// A game event of type `name` (snake_case, as in [`TYPES`]) with
    /// `fields`, raised at `created` (s since the epoch); `None` for a type
    /// the table does not know.
    pub fn new(name: &str, id: &str, created: f64, fields: Vec<(&'static str, Value)>) -> Option<GameEvent> {
        let kind = TYPES.iter().find(|t| t.name == name)?;
        Some(GameEvent {
            kind: Some(kind),
            code: Some(kind.code),
            id: Some(id.to_owned()),
            origin: Vec::new(),
            created: Some(created),
            fields,
        })
    }

    /// The event's bytes as the game controller sends them (the inverse of
    /// decoding, for writing game logs); fields its type does not list are
    /// left out.
    pub fn encode(&self) -> Vec<u8> {
        use crate::log::wire::{put_fixed32, put_key, put_len, put_varint};
        let mut out = Vec::new();
        if let Some(c) = self.code {
            put_key(&mut out, 40, VARINT);
            put_varint(&mut out, c as i64 as u64);
        }
        for o in &self.origin {
            put_len(&mut out, 41, o.len());
            out.extend_from_slice(o.as_bytes());
        }
        if let Some(t) = self.created {
            put_key(&mut out, 49, VARINT);
            put_varint(&mut out, (t * 1e6).round().max(0.0) as u64);
        }
        if let Some(id) = &self.id {
            put_len(&mut out, 50, id.len());
            out.extend_from_slice(id.as_bytes());
        }
        let Some(kind) = self.kind else {
            return out;
        };
        let mut body = Vec::new();
        for (name, value) in &self.fields {
            let Some(&(n, _, _)) = kind.fields.iter().find(|(_, f, _)| f == name) else {
                continue;
            };
            let mut varint = |v: u64| {
                put_key(&mut body, n, VARINT);
                put_varint(&mut body, v);
            };
            match value {
                Value::Team(t) => varint(match t {
                    Some(Team::Yellow) => 1,
                    Some(Team::Blue) => 2,
                    None => 0,
                }),
                Value::Bot(b) => varint(u64::from(*b)),
                Value::Count(c) => varint(*c as u64),
                Value::Flag(f) => varint(u64::from(*f)),
                Value::Time(t) => varint((t * 1e6).round().max(0.0) as u64),
                Value::Point(p) => {
                    let mut point = Vec::new();
                    put_fixed32(&mut point, 1, ((p.x / 1000.0) as f32).to_bits());
                    put_fixed32(&mut point, 2, ((p.y / 1000.0) as f32).to_bits());
                    put_len(&mut body, n, point.len());
                    body.extend_from_slice(&point);
                }
                Value::Length(v) => put_fixed32(&mut body, n, ((v / 1000.0) as f32).to_bits()),
                Value::Speed(v) | Value::Duration(v) | Value::Angle(v) => {
                    put_fixed32(&mut body, n, (*v as f32).to_bits())
                }
                Value::Text(t) => {
                    put_len(&mut body, n, t.len());
                    body.extend_from_slice(t.as_bytes());
                }
                Value::Events(list) => {
                    for e in list {
                        let bytes = e.encode();
                        put_len(&mut body, n, bytes.len());
                        body.extend_from_slice(&bytes);
                    }
                }
            }
        }
        put_len(&mut out, kind.field, body.len());
        out.extend_from_slice(&body);
        out
    }

    /// Decodes one event's bytes.
    pub(crate) fn decode(bytes: &[u8]) -> WireResult<GameEvent> {
        decode_event(Reader::new(bytes), 0)
    }

    /// A short name: the type's label, or "game event N".
    pub fn title(&self) -> String {
        match (self.kind, self.code) {
            (Some(k), _) => k.label.to_owned(),
            (None, Some(c)) => format!("game event {c}"),
            (None, None) => "game event".to_owned(),
        }
    }

    /// The snake_case type name, or `type_N`.
    pub fn type_name(&self) -> String {
        match (self.kind, self.code) {
            (Some(k), _) => k.name.to_owned(),
            (None, Some(c)) => format!("type_{c}"),
            (None, None) => "unknown".to_owned(),
        }
    }

    /// The team the event is about (the first team field).
    pub fn team(&self) -> Option<Team> {
        self.fields.iter().find_map(|(_, v)| match v {
            Value::Team(t) => *t,
            _ => None,
        })
    }

    /// Where it happened: `location`, else the ball's or the kick's
    /// location, else where it started.
    pub fn location(&self) -> Option<Vec2> {
        ["location", "ball_location", "kick_location", "start"]
            .iter()
            .find_map(|want| {
                self.fields.iter().find_map(|(name, v)| match v {
                    Value::Point(p) if name == want => Some(*p),
                    _ => None,
                })
            })
    }

    /// The title with the team and robot, e.g. "robot pushed a robot:
    /// blue 1", or "goal: blue (kicked by yellow 0)" for an own goal.
    pub fn headline(&self) -> String {
        let mut s = self.title();
        let field = |want: &str| self.fields.iter().find(|(n, _)| *n == want).map(|(_, v)| v);
        let team = |want: &str| match field(want) {
            Some(Value::Team(t)) => *t,
            _ => None,
        };
        let by = team("by_team");
        let (bot, bot_team) =
            match ["by_bot", "violator", "kicking_bot"]
                .iter()
                .find_map(|&n| match field(n) {
                    Some(Value::Bot(b)) => Some((n, *b)),
                    _ => None,
                }) {
                Some(("kicking_bot", b)) => (Some(b), team("kicking_team").or(by)),
                Some((_, b)) => (Some(b), by),
                None => (None, None),
            };
        match (by, bot, bot_team) {
            (Some(t), Some(b), Some(bt)) if bt == t => {
                let _ = write!(s, ": {} {b}", t.name());
            }
            (Some(t), Some(b), Some(bt)) => {
                let _ = write!(s, ": {} (kicked by {} {b})", t.name(), bt.name());
            }
            (Some(t), _, _) => {
                let _ = write!(s, ": {}", t.name());
            }
            (None, Some(b), Some(bt)) => {
                let _ = write!(s, ": {} {b}", bt.name());
            }
            _ => {}
        }
        s
    }

    /// The fields as `name value` pairs, e.g. "victim 3, location
    /// (2126, 2800) mm, pushed_distance 520 mm".
    pub fn details(&self) -> String {
        let parts: Vec<String> = self
            .fields
            .iter()
            .map(|(name, v)| format!("{name} {}", describe(v)))
            .collect();
        parts.join(", ")
    }

    /// What identifies the event across the referee packets that repeat
    /// it: its id, else its type and creation time, else its fields.
    pub fn key(&self) -> String {
        match (&self.id, self.created) {
            (Some(id), _) if !id.is_empty() => format!("id {id}"),
            (_, Some(t)) => format!("{} at {t}", self.type_name()),
            _ => format!("{} {:?}", self.type_name(), self.fields),
        }
    }
}

fn describe(v: &Value) -> String {
    let num = |x: f64, digits: usize| {
        let s = format!("{x:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    match v {
        Value::Team(Some(t)) => t.name().to_owned(),
        Value::Team(None) => "unknown team".to_owned(),
        Value::Bot(b) => b.to_string(),
        Value::Point(p) => format!("({}, {}) mm", num(p.x, 0), num(p.y, 0)),
        Value::Length(l) => format!("{} mm", num(*l, 0)),
        Value::Speed(s) => format!("{} m/s", num(*s, 2)),
        Value::Duration(d) => format!("{} s", num(*d, 2)),
        Value::Angle(a) => format!("{}°", num(a.to_degrees(), 0)),
        Value::Flag(f) => f.to_string(),
        Value::Text(t) => format!("\"{t}\""),
        Value::Count(n) => n.to_string(),
        Value::Time(t) => format!("{} s", num(*t, 3)),
        Value::Events(list) => {
            let names: Vec<String> = list.iter().map(GameEvent::title).collect();
            format!("[{}]", names.join("; "))
        }
    }
}

fn decode_event(mut r: Reader<'_>, depth: u32) -> WireResult<GameEvent> {
    let mut e = GameEvent {
        kind: None,
        code: None,
        id: None,
        origin: Vec::new(),
        created: None,
        fields: Vec::new(),
    };
    let mut payload_kind = None;
    // Before 2019 an event was a type number in field 1 and a text: no
    // field of this table's kind.
    let mut old_format = false;
    while !r.is_empty() {
        let (field, wt) = r.key()?;
        match (field, wt) {
            (1, VARINT) => {
                old_format = true;
                r.varint()?;
            }
            // The type number: an enum, sign-extended like int32.
            (40, VARINT) => e.code = Some(r.varint()? as i32),
            (41, LEN) => e.origin.push(String::from_utf8_lossy(r.bytes()?).into_owned()),
            (49, VARINT) => e.created = Some(r.varint()? as f64 * 1e-6).filter(|&t| t > 0.0),
            (50, LEN) => e.id = Some(String::from_utf8_lossy(r.bytes()?).into_owned()),
            (f, LEN) if payload_kind.is_none() && type_by_field(f).is_some() => {
                let kind = type_by_field(f);
                payload_kind = kind;
                if let Some(kind) = kind {
                    // A damaged sub-message keeps the fields before the damage.
                    let sub = r.sub()?;
                    let _ = decode_fields(sub, kind, depth, &mut e.fields);
                }
            }
            _ => r.skip(wt)?,
        }
    }
    if old_format && e.code.is_none() {
        e.fields.clear();
        return Ok(e);
    }
    e.kind = payload_kind.or_else(|| e.code.and_then(type_by_code));
    Ok(e)
}

fn decode_fields(
    mut r: Reader<'_>,
    kind: &'static EventType,
    depth: u32,
    out: &mut Vec<(&'static str, Value)>,
) -> WireResult<()> {
    while !r.is_empty() {
        let (field, wt) = r.key()?;
        let Some(&(_, name, fk)) = kind.fields.iter().find(|(n, _, _)| *n == field) else {
            r.skip(wt)?;
            continue;
        };
        let value = match (fk, wt) {
            (K::Team, VARINT) => Value::Team(Team::from_wire(r.varint()? as i32)),
            (K::Bot, VARINT) => Value::Bot(r.varint()? as u32),
            (K::Count, VARINT) => Value::Count(r.varint()? as i32 as i64),
            (K::Flag, VARINT) => Value::Flag(r.varint()? != 0),
            (K::Micros, VARINT) => Value::Time(r.varint()? as f64 * 1e-6),
            (K::Location, LEN) => match read_point(r.sub()?)? {
                Some(p) => Value::Point(p * 1000.0),
                None => continue,
            },
            (K::Length | K::Speed | K::Duration | K::Angle, I32) => {
                let v = f64::from(f32::from_bits(r.fixed32()?));
                if !v.is_finite() {
                    continue;
                }
                match fk {
                    K::Length => Value::Length(v * 1000.0),
                    K::Speed => Value::Speed(v),
                    K::Duration => Value::Duration(v),
                    _ => Value::Angle(v),
                }
            }
            (K::Text, LEN) => Value::Text(String::from_utf8_lossy(r.bytes()?).into_owned()),
            (K::Events, LEN) => {
                let sub = r.sub()?;
                if depth >= MAX_DEPTH {
                    continue;
                }
                let nested = decode_event(sub, depth + 1)?;
                match out.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, Value::Events(list))) => list.push(nested),
                    _ => out.push((name, Value::Events(vec![nested]))),
                }
                continue;
            }
            _ => {
                r.skip(wt)?;
                continue;
            }
        };
        out.push((name, value));
    }
    Ok(())
}

/// A two-float point message; `None` when a coordinate is missing or not
/// finite.
fn read_point(mut r: Reader<'_>) -> WireResult<Option<Vec2>> {
    let (mut x, mut y) = (None, None);
    while !r.is_empty() {
        match r.key()? {
            (1, I32) => x = Some(f64::from(f32::from_bits(r.fixed32()?))),
            (2, I32) => y = Some(f64::from(f32::from_bits(r.fixed32()?))),
            (_, wt) => r.skip(wt)?,
        }
    }
    Ok(match (x, y) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() => Some(Vec2::new(x, y)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_encode_back_to_what_they_decode_from() {
        let nested = GameEvent::new(
            "ball_left_field_touch_line",
            "a",
            1_700_000_000.5,
            vec![
                ("by_team", Value::Team(Some(Team::Blue))),
                ("by_bot", Value::Bot(3)),
                ("location", Value::Point(Vec2::new(1500.0, -3000.0))),
            ],
        )
        .unwrap();
        let bytes = nested.encode();
        let back = GameEvent::decode(&bytes).unwrap();
        assert_eq!(back, nested);
        let far = GameEvent::new(
            "defender_too_close_to_kick_point",
            "b",
            1_700_000_001.0,
            vec![
                ("by_team", Value::Team(Some(Team::Yellow))),
                ("by_bot", Value::Bot(1)),
                ("distance", Value::Length(250.0)),
            ],
        )
        .unwrap();
        assert_eq!(GameEvent::decode(&far.encode()).unwrap(), far);
        assert!(GameEvent::new("no_such_event", "c", 0.0, vec![]).is_none());
    }

    use super::*;
    use crate::log::wire::{put_key, put_len, put_varint};

    fn put_f32(out: &mut Vec<u8>, field: u32, v: f32) {
        put_key(out, field, I32);
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    fn point(x: f32, y: f32) -> Vec<u8> {
        let mut p = Vec::new();
        put_f32(&mut p, 1, x);
        put_f32(&mut p, 2, y);
        p
    }

    fn sub(out: &mut Vec<u8>, field: u32, body: &[u8]) {
        put_len(out, field, body.len());
        out.extend_from_slice(body);
    }

    /// A bot-pushed-bot event as the game controller writes it.
    fn pushed() -> Vec<u8> {
        let mut body = Vec::new();
        put_key(&mut body, 1, VARINT);
        put_varint(&mut body, 2);
        put_key(&mut body, 2, VARINT);
        put_varint(&mut body, 1);
        put_key(&mut body, 3, VARINT);
        put_varint(&mut body, 4);
        sub(&mut body, 4, &point(-1.5, 0.25));
        put_f32(&mut body, 5, 0.52);
        let mut e = Vec::new();
        put_key(&mut e, 40, VARINT);
        put_varint(&mut e, 24);
        sub(&mut e, 41, b"UI");
        put_key(&mut e, 49, VARINT);
        put_varint(&mut e, 1_795_504_520_510_247);
        sub(&mut e, 50, b"abc");
        sub(&mut e, 24, &body);
        e
    }

    #[test]
    fn table_has_distinct_codes_fields_and_names() {
        for (i, a) in TYPES.iter().enumerate() {
            for b in &TYPES[i + 1..] {
                assert_ne!(a.code, b.code, "{}", a.name);
                assert_ne!(a.field, b.field, "{}", a.name);
                assert_ne!(a.name, b.name);
            }
        }
    }

    #[test]
    fn decodes_an_event_with_its_own_fields() {
        let e = GameEvent::decode(&pushed()).unwrap();
        assert_eq!(e.kind.map(|k| k.name), Some("bot_pushed_bot"));
        assert_eq!(e.code, Some(24));
        assert_eq!(e.id.as_deref(), Some("abc"));
        assert_eq!(e.origin, ["UI"]);
        assert!((e.created.unwrap() - 1_795_504_520.510_247).abs() < 1e-6);
        assert_eq!(e.team(), Some(Team::Blue));
        assert_eq!(e.location(), Some(Vec2::new(-1500.0, 250.0)));
        assert_eq!(e.headline(), "robot pushed a robot: blue 1");
        assert_eq!(
            e.details(),
            "by_team blue, violator 1, victim 4, location (-1500, 250) mm, pushed_distance 520 mm"
        );
    }

    #[test]
    fn unknown_types_and_wrong_wire_types_are_skipped() {
        // An old-style event: field 1 is a varint, not the `prepared` message.
        let mut e = Vec::new();
        put_key(&mut e, 1, VARINT);
        put_varint(&mut e, 3);
        sub(&mut e, 3, b"old message");
        let got = GameEvent::decode(&e).unwrap();
        assert_eq!(got.kind, None);
        assert_eq!(got.title(), "game event");
        // A type number this table does not know.
        let mut e = Vec::new();
        put_key(&mut e, 40, VARINT);
        put_varint(&mut e, 99);
        sub(&mut e, 99, &[8, 1]);
        let got = GameEvent::decode(&e).unwrap();
        assert_eq!(got.title(), "game event 99");
        assert_eq!(got.type_name(), "type_99");
    }

    #[test]
    fn nested_events_are_read_to_a_limited_depth() {
        let mut inner = pushed();
        for _ in 0..10 {
            let mut body = Vec::new();
            put_key(&mut body, 1, VARINT);
            put_varint(&mut body, 1);
            sub(&mut body, 2, &inner);
            let mut e = Vec::new();
            put_key(&mut e, 40, VARINT);
            put_varint(&mut e, 34);
            sub(&mut e, 34, &body);
            inner = e;
        }
        let got = GameEvent::decode(&inner).unwrap();
        let mut depth = 0;
        let mut cur = &got;
        while let Some((_, Value::Events(list))) = cur.fields.iter().find(|(n, _)| *n == "caused_game_events")
        {
            depth += 1;
            cur = &list[0];
        }
        assert_eq!(depth, MAX_DEPTH as usize);
        assert_eq!(got.team(), Some(Team::Yellow));
    }

    #[test]
    fn truncated_events_are_errors() {
        let b = pushed();
        for cut in 1..b.len() {
            // Every cut either fails or yields a shorter event; never panics.
            let _ = GameEvent::decode(&b[..cut]);
        }
        assert!(GameEvent::decode(&b[..b.len() - 1]).is_err());
    }
}
