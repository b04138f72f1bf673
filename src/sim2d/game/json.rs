//! rcssserver 19's JSON game log (`game_log_version` −1): one JSON array,
//! one element per line, each an object with one key naming its kind:
//!
//! - `{"version": "19.0.0"}`, `{"timestamp": …}` (skipped);
//! - `{"server_param": {name: value, …}}`, `{"player_param": …}` (not
//!   kept), `{"player_type": {"id": n, name: value, …}}`;
//! - `{"playmode": {"time": T, ["stime": S,] "mode": "play_on"}}`;
//! - `{"team": {"time": T, "l": {"name": …, "score": n}, "r": {…}}}`;
//! - `{"show": {"time": T, "ball": {"x","y","vx","vy"}, "players": [{"side":
//!   "l", "unum", "type", "state", "x", "y", "vx", "vy", "body", "neck",
//!   ["px", "py",] "vq", "vw", ["fdist", "fdir",] "stamina", "effort",
//!   "recovery", "capacity", ["fside", "fnum",] counts by name}, …]}}`;
//! - `{"msg": {"time": T, "board": b, "message": "…"}}`.
//!
//! The array is read as a stream: each element goes into the game as it
//! is parsed, unknown kinds and keys are skipped, and a malformed or torn
//! document keeps every element before the fault (with a warning naming
//! its line and column); only a document where nothing could be read is
//! an error. serde_json bounds nesting; nothing is sized from the input.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::model::{
    Ball, Builder, COUNT_NAMES, GameError, PlayMode, Player, Stamina, ViewQuality, number_text,
};
use crate::sim2d::Side;

pub(crate) fn read(bytes: &[u8], b: &mut Builder) -> Result<(), GameError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut elements = 0usize;
    let result = de
        .deserialize_seq(Elements {
            b: &mut *b,
            elements: &mut elements,
        })
        .and_then(|()| de.end());
    if let Err(e) = result {
        if elements == 0 {
            return Err(GameError::Json {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            });
        }
        b.warnings.push(
            e.line(),
            0,
            format!("{e}; the {elements} elements before it are kept"),
        );
        b.game.skipped.stop(offset_of(bytes, e.line(), e.column()));
    }
    Ok(())
}

/// The byte offset of 1-based `line` and `column` in `bytes`.
fn offset_of(bytes: &[u8], line: usize, column: usize) -> u64 {
    let start: usize = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(<[u8]>::len)
        .sum();
    (start + column.saturating_sub(1)).min(bytes.len()) as u64
}

struct Elements<'b> {
    b: &'b mut Builder,
    elements: &'b mut usize,
}

impl<'de> Visitor<'de> for Elements<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of game log elements")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Element { b: &mut *self.b })?.is_some() {
            *self.elements += 1;
        }
        Ok(())
    }
}

struct Element<'b> {
    b: &'b mut Builder,
}

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Kind {
    ServerParam,
    PlayerType,
    Playmode,
    Team,
    Show,
    Msg,
    #[serde(other)]
    Other,
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a game log element (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let b = self.b;
        while let Some(kind) = map.next_key::<Kind>()? {
            match kind {
                Kind::ServerParam => {
                    let v: serde_json::Map<String, serde_json::Value> = map.next_value()?;
                    for (name, value) in v {
                        if let Some(x) = number(&value) {
                            b.game.server.set(&name, x);
                        }
                        b.game.server.raw.push((name, value_text(&value)));
                    }
                }
                Kind::PlayerType => {
                    let v: serde_json::Map<String, serde_json::Value> = map.next_value()?;
                    let mut t = b.new_player_type();
                    for (name, value) in v {
                        if let Some(x) = number(&value) {
                            t.set(&name, x);
                        }
                        t.raw.push((name, value_text(&value)));
                    }
                    b.game.player_types.push(t);
                }
                Kind::Playmode => {
                    let p: JPlayMode<'de> = map.next_value()?;
                    b.play_mode = PlayMode::from_name(p.mode.as_bytes()).unwrap_or(PlayMode::UNKNOWN);
                }
                Kind::Team => {
                    let t: JTeams = map.next_value()?;
                    let name =
                        |s: &Option<JTeam>| s.as_ref().and_then(|t| t.name.clone()).unwrap_or_default();
                    let score = |s: &Option<JTeam>| s.as_ref().map_or(0, |t| t.score);
                    let (l, r) = (name(&t.l), name(&t.r));
                    b.team([&l, &r], [score(&t.l), score(&t.r)]);
                }
                Kind::Show => {
                    let s: JShow = map.next_value()?;
                    let players = s.players.into_iter().filter_map(JPlayer::into_player).collect();
                    let ball = s.ball.unwrap_or_default();
                    let ball = Ball {
                        pos: [ball.x, ball.y],
                        vel: [ball.vx, ball.vy],
                    };
                    if let Some(last) = b.show(s.time, ball, players) {
                        b.warnings.push(
                            0,
                            0,
                            format!(
                                "show {} comes after the record of cycle {last}, which it should precede; \
                                 dropped",
                                s.time
                            ),
                        );
                    }
                }
                Kind::Msg => {
                    let m: JMsg = map.next_value()?;
                    b.message(m.time, m.board, m.message);
                }
                Kind::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

fn number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Bool(b) => u8::from(*b).to_string(),
        other => number(other).map_or_else(|| other.to_string(), number_text),
    }
}

#[derive(Deserialize)]
struct JPlayMode<'a> {
    #[serde(borrow)]
    mode: std::borrow::Cow<'a, str>,
}

#[derive(Deserialize)]
struct JTeams {
    l: Option<JTeam>,
    r: Option<JTeam>,
}

#[derive(Deserialize)]
struct JTeam {
    name: Option<String>,
    #[serde(default)]
    score: u32,
}

#[derive(Deserialize)]
struct JMsg {
    #[serde(default)]
    time: u32,
    #[serde(default)]
    board: u16,
    #[serde(default)]
    message: String,
}

#[derive(Default, Deserialize)]
struct JBall {
    #[serde(default)]
    x: f64,
    #[serde(default)]
    y: f64,
    #[serde(default)]
    vx: f64,
    #[serde(default)]
    vy: f64,
}

#[derive(Deserialize)]
struct JShow {
    time: u32,
    ball: Option<JBall>,
    #[serde(default)]
    players: Vec<JPlayer>,
}

#[derive(Deserialize)]
struct JPlayer {
    side: char,
    unum: u8,
    #[serde(rename = "type", default)]
    player_type: u16,
    #[serde(default)]
    state: u32,
    x: f64,
    y: f64,
    #[serde(default)]
    vx: f64,
    #[serde(default)]
    vy: f64,
    #[serde(default)]
    body: f64,
    #[serde(default)]
    neck: f64,
    px: Option<f64>,
    py: Option<f64>,
    vq: Option<char>,
    vw: Option<f64>,
    fdist: Option<f64>,
    fdir: Option<f64>,
    stamina: Option<f64>,
    effort: Option<f64>,
    recovery: Option<f64>,
    capacity: Option<f64>,
    fside: Option<char>,
    fnum: Option<u8>,
    kick: Option<u32>,
    dash: Option<u32>,
    turn: Option<u32>,
    catch: Option<u32>,
    #[serde(rename = "move")]
    move_: Option<u32>,
    turn_neck: Option<u32>,
    change_view: Option<u32>,
    say: Option<u32>,
    tackle: Option<u32>,
    pointto: Option<u32>,
    attentionto: Option<u32>,
    change_focus: Option<u32>,
}

impl JPlayer {
    fn into_player(self) -> Option<Player> {
        let side = Side::from_byte(u8::try_from(self.side).ok()?)?;
        let counts = [
            self.kick,
            self.dash,
            self.turn,
            self.catch,
            self.move_,
            self.turn_neck,
            self.change_view,
            self.say,
            self.tackle,
            self.pointto,
            self.attentionto,
            self.change_focus,
        ];
        debug_assert_eq!(counts.len(), COUNT_NAMES.len());
        let n = counts.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        Some(Player {
            side,
            unum: self.unum,
            player_type: self.player_type,
            state: self.state,
            pos: [self.x, self.y],
            vel: [self.vx, self.vy],
            body: self.body,
            neck: self.neck,
            arm: self.px.zip(self.py).map(|(x, y)| [x, y]),
            view: self.vw.map(|w| {
                let q = if self.vq == Some('l') {
                    ViewQuality::Low
                } else {
                    ViewQuality::High
                };
                (q, w)
            }),
            stamina: self.stamina.map(|s| Stamina {
                stamina: s,
                effort: self.effort.unwrap_or(1.0),
                recovery: self.recovery.unwrap_or(1.0),
                capacity: self.capacity,
            }),
            focus: self
                .fside
                .and_then(|c| Side::from_byte(u8::try_from(c).ok()?))
                .zip(self.fnum),
            focus_point: self.fdist.zip(self.fdir).map(|(d, a)| [d, a]),
            counts: counts[..n].iter().map(|c| c.unwrap_or(0)).collect(),
        })
    }
}
