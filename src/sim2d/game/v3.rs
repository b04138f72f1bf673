//! The binary game log v3: `ULG` + the byte 3, then records, each a 16-bit
//! mode and a body, every integer in network byte order (big-endian).
//! rcssserver writes its C structs whole, so their padding is part of the
//! format (the sizes below are gcc's for those structs on every platform
//! the server builds on). Real numbers are integers scaled by 65536
//! (`SHOWINFO_SCALE2`); angles of the show record are radians.
//!
//! | mode | body | bytes |
//! |---|---|---|
//! | 0 `NO_INFO` | nothing | 0 |
//! | 1 `SHOW_MODE` | `short_showinfo_t2`: ball (4 × i32), 22 × `player_t` (64 bytes each), i16 time, 2 bytes padding | 1428 |
//! | 2 `MSG_MODE` | i16 board, i16 length, that many bytes (NUL-terminated) | 4 + n |
//! | 5 `PM_MODE` | one byte: the play mode's number | 1 |
//! | 6 `TEAM_MODE` | 2 × `team_t` (16-byte name, i16 score) | 36 |
//! | 7 `PT_MODE` | `player_type_t`: i16 id, 2 bytes padding, 21 × i32 | 88 |
//! | 8 `PARAM_MODE` | `server_params_t` | 396 |
//! | 9 `PPARAM_MODE` | `player_params_t` (not kept) | 132 |
//!
//! `player_t`: i16 state, i16 type, i32 x, y, vx, vy, body, neck, view
//! width, i16 view quality, 2 bytes padding, i32 stamina, effort,
//! recovery, 8 × i16 counts (kick, dash, turn, say, turn_neck, catch,
//! move, change_view). The 22 players are the left team's 1–11 then the
//! right's; a state of 0 is a player not on the pitch (left out). An
//! unknown mode or a record cut short ends the read with a warning
//! naming its byte offset; everything before it is kept.

use super::model::{Ball, Builder, PLAY_MODE_NAMES, PlayMode, Player, Stamina, ViewQuality, number_text};
use crate::sim2d::Side;

const SCALE: f64 = 65536.0;
const SHOW_LEN: usize = 1428;
const PLAYER_LEN: usize = 64;
const TEAM_LEN: usize = 36;
const PLAYER_TYPE_LEN: usize = 88;
const SERVER_PARAMS_LEN: usize = 396;
const PLAYER_PARAMS_LEN: usize = 132;

/// Big-endian reads at offsets of a record body (the caller checked its length).
struct Body<'a>(&'a [u8]);

impl Body<'_> {
    fn i16(&self, at: usize) -> i16 {
        i16::from_be_bytes([self.0[at], self.0[at + 1]])
    }
    fn i32(&self, at: usize) -> i32 {
        i32::from_be_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }
    /// A scaled real.
    fn real(&self, at: usize) -> f64 {
        f64::from(self.i32(at)) / SCALE
    }
}

/// The scaled reals of `server_params_t` that the model names, with their
/// offsets (from rcssserver's `ServerParam::convertToStruct`).
const SERVER_REALS: [(&str, usize); 24] = [
    ("goal_width", 0),
    ("inertia_moment", 4),
    ("player_size", 8),
    ("player_decay", 12),
    ("player_rand", 16),
    ("player_weight", 20),
    ("player_speed_max", 24),
    ("player_accel_max", 28),
    ("stamina_max", 32),
    ("stamina_inc_max", 36),
    ("ball_size", 104),
    ("ball_decay", 108),
    ("ball_speed_max", 120),
    ("dash_power_rate", 128),
    ("kick_power_rate", 132),
    ("kickable_margin", 136),
    ("visible_angle", 180),
    ("visible_distance", 184),
    ("catchable_area_l", 208),
    ("catchable_area_w", 212),
    ("audio_cut_dist", 288),
    ("quantize_step", 292),
    ("quantize_step_l", 296),
    ("tackle_dist", 364),
];

/// Scaled reals after `tackle_dist`, and the 16-bit integers.
const SERVER_REALS_2: [(&str, usize); 2] = [("tackle_back_dist", 368), ("tackle_width", 372)];
const SERVER_SHORTS: [(&str, usize); 4] = [
    ("half_time", 254),
    ("simulator_step", 256),
    ("send_step", 258),
    ("sense_body_step", 262),
];

/// `player_type_t`'s fields after the id, in order (i32 at 4, 8, …).
const PLAYER_TYPE_FIELDS: [&str; 14] = [
    "player_speed_max",
    "stamina_inc_max",
    "player_decay",
    "inertia_moment",
    "dash_power_rate",
    "player_size",
    "kickable_margin",
    "kick_rand",
    "extra_stamina",
    "effort_max",
    "effort_min",
    "kick_power_rate",
    "foul_detect_probability",
    "catchable_area_l_stretch",
];

pub(crate) fn read(bytes: &[u8], b: &mut Builder) {
    let mut at = 4usize;
    while at < bytes.len() {
        let offset = at as u64;
        let Some(mode) = bytes.get(at..at + 2) else {
            b.warnings.push(0, offset, "one byte left over at the end");
            b.game.skipped.stop(offset);
            return;
        };
        let mode = i16::from_be_bytes([mode[0], mode[1]]);
        at += 2;
        let len = match mode {
            0 => 0,
            1 => SHOW_LEN,
            2 => {
                let Some(h) = bytes.get(at..at + 4) else {
                    b.warnings
                        .push(0, offset, "message record cut short; the file ends here");
                    b.game.skipped.stop(offset);
                    return;
                };
                let n = i16::from_be_bytes([h[2], h[3]]);
                if n < 0 {
                    b.warnings.push(
                        0,
                        offset,
                        format!("message of negative length {n}; the read stops here"),
                    );
                    b.game.skipped.stop(offset);
                    return;
                }
                4 + n as usize
            }
            5 => 1,
            6 => TEAM_LEN,
            7 => PLAYER_TYPE_LEN,
            8 => SERVER_PARAMS_LEN,
            9 => PLAYER_PARAMS_LEN,
            other => {
                b.warnings.push(
                    0,
                    offset,
                    format!("unknown record mode {other}; the read stops here"),
                );
                b.game.skipped.stop(offset);
                return;
            }
        };
        let Some(body) = bytes.get(at..at + len) else {
            b.warnings.push(
                0,
                offset,
                format!(
                    "record of mode {mode} cut short ({} of {len} bytes); the file ends here",
                    bytes.len() - at
                ),
            );
            b.game.skipped.stop(offset);
            return;
        };
        at += len;
        let body = Body(body);
        match mode {
            1 => {
                if let Some((cycle, last)) = show(&body, b) {
                    b.warnings.push(
                        0,
                        offset,
                        format!(
                            "show {cycle} comes after the record of cycle {last}, which it should precede; \
                             dropped"
                        ),
                    );
                }
            }
            2 => {
                let board = body.i16(0) as u16;
                let text = &body.0[4..];
                let text = text.split(|&c| c == 0).next().unwrap_or_default();
                let cycle = b.game.records.last().map_or(0, |r| r.cycle);
                b.message(cycle, board, String::from_utf8_lossy(text).into_owned());
            }
            5 => {
                let m = body.0[0];
                if usize::from(m) < PLAY_MODE_NAMES.len() {
                    b.play_mode = PlayMode(m);
                } else {
                    b.play_mode = PlayMode::UNKNOWN;
                    b.warnings.push(0, offset, format!("unknown play mode {m}"));
                }
            }
            6 => {
                let name = |i: usize| {
                    let raw = &body.0[i * 18..i * 18 + 16];
                    String::from_utf8_lossy(raw.split(|&c| c == 0).next().unwrap_or_default()).into_owned()
                };
                let score = |i: usize| body.i16(i * 18 + 16).max(0) as u32;
                let (l, r) = (name(0), name(1));
                b.team([&l, &r], [score(0), score(1)]);
            }
            7 => {
                let mut t = b.new_player_type();
                let id = body.i16(0);
                t.set("id", f64::from(id));
                t.raw.push(("id".into(), id.to_string()));
                for (i, name) in PLAYER_TYPE_FIELDS.iter().enumerate() {
                    let v = body.real(4 + 4 * i);
                    t.set(name, v);
                    t.raw.push(((*name).into(), number_text(v)));
                }
                b.game.player_types.push(t);
            }
            8 => {
                let s = &mut b.game.server;
                for (name, at) in SERVER_REALS.iter().chain(&SERVER_REALS_2) {
                    let v = body.real(*at);
                    s.set(name, v);
                    s.raw.push(((*name).into(), number_text(v)));
                }
                for (name, at) in SERVER_SHORTS {
                    let v = f64::from(body.i16(at));
                    s.set(name, v);
                    s.raw.push((name.into(), number_text(v)));
                }
            }
            _ => {}
        }
    }
}

/// Adds a show record; a backwards one is dropped: its cycle and the
/// previous record's.
fn show(body: &Body<'_>, b: &mut Builder) -> Option<(u32, u32)> {
    let ball = Ball {
        pos: [body.real(0), body.real(4)],
        vel: [body.real(8), body.real(12)],
    };
    let mut players = Vec::with_capacity(22);
    for i in 0..22usize {
        let at = 16 + i * PLAYER_LEN;
        let state = body.i16(at) as u16 as u32;
        if state == 0 {
            continue;
        }
        let (side, unum) = if i < 11 {
            (Side::Left, i + 1)
        } else {
            (Side::Right, i - 10)
        };
        let deg = |o: usize| body.real(at + o).to_degrees();
        // The counts as written (kick dash turn say turn_neck catch move
        // change_view), put in the text formats' order.
        let c = |k: usize| body.i16(at + 48 + 2 * k) as u16 as u32;
        players.push(Player {
            side,
            unum: unum as u8,
            player_type: body.i16(at + 2).max(0) as u16,
            state,
            pos: [body.real(at + 4), body.real(at + 8)],
            vel: [body.real(at + 12), body.real(at + 16)],
            body: deg(20),
            neck: deg(24),
            arm: None,
            view: Some((
                if body.i16(at + 32) != 0 {
                    ViewQuality::High
                } else {
                    ViewQuality::Low
                },
                deg(28),
            )),
            stamina: Some(Stamina {
                stamina: body.real(at + 36),
                effort: body.real(at + 40),
                recovery: body.real(at + 44),
                capacity: None,
            }),
            focus: None,
            focus_point: None,
            counts: vec![c(0), c(1), c(2), c(5), c(6), c(4), c(7), c(3)],
        });
    }
    let cycle = body.i16(1424) as u16 as u32;
    b.show(cycle, ball, players).map(|last| (cycle, last))
}
