//! The text game logs, v4 to v6 (`ULG4`, `ULG5`, `ULG6` on the first
//! line, then one record per line):
//!
//! - `(server_param (name value)…)`, `(player_param …)` (not kept),
//!   `(player_type (id n)(name value)…)`;
//! - `(playmode T mode)`, `(team T left right score_l score_r [penalties])`:
//!   they apply to the show records after them;
//! - `(show T ((b) x y vx vy) ((side unum) type state x y vx vy body neck
//!   [arm_x arm_y] (v h|l width) [(fp dist dir)] (s stamina effort
//!   recovery [capacity]) [(f side unum)] (c counts…)) …)`: state is
//!   hexadecimal (`0x9`); v5 adds the stamina capacity, v6 the focus
//!   point and a 12th count;
//! - `(msg T board "text")`: the text is everything between the first `"`
//!   and the closing `")` of the line, taken as bytes (rcssserver's
//!   `record_messages` writes garbage after some messages, not valid UTF-8
//!   and with unbalanced quotes and parentheses): such a line loads, with
//!   a warning naming it.
//!
//! Show lines go through the shared zero-copy S-expression parser
//! ([`crate::sexp`]), one reused node array for the whole file;
//! numbers are read straight from the bytes. A line that does not parse is
//! skipped with a warning.

use crate::sexp::lines;
use crate::sexp::{Parser, Sexp};

use super::model::{Ball, Builder, PlayMode, Player, PlayerType, Stamina, ViewQuality};
use crate::sim2d::Side;

/// Reads every line after the header into `b`.
pub(crate) fn read(bytes: &[u8], b: &mut Builder) {
    let mut parser = Parser::new();
    for (line, offset, text) in lines(bytes) {
        if line == 1 && text.starts_with(b"ULG") {
            continue;
        }
        let text = text.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if let Err(why) = record(&mut parser, text, b, line, offset) {
            b.warnings.push(line, offset, why);
            b.game.skipped.add(offset, text.len() as u64 + 1);
        }
    }
}

fn record(parser: &mut Parser, text: &[u8], b: &mut Builder, line: usize, offset: u64) -> Result<(), String> {
    if let Some(rest) = text.strip_prefix(b"(msg ") {
        return message(rest, b, line, offset);
    }
    let doc = parser
        .parse(text)
        .map_err(|e| format!("not an S-expression: {e}"))?;
    let mut items = doc.items();
    let (Some(rec), None) = (items.next(), items.next()) else {
        return Err("not one record".into());
    };
    match rec.head() {
        Some(b"show") => show(rec, b),
        Some(b"playmode") => {
            let name = rec
                .get(2)
                .and_then(|s| s.atom())
                .ok_or("playmode without a mode")?;
            match PlayMode::from_name(name) {
                Some(m) => b.play_mode = m,
                None => {
                    b.play_mode = PlayMode::UNKNOWN;
                    return Err(format!("unknown play mode {:?}", String::from_utf8_lossy(name)));
                }
            }
            Ok(())
        }
        Some(b"team") => {
            let name = |i| rec.get(i).and_then(|s: Sexp<'_>| s.str()).unwrap_or("");
            let score = |i| rec.get(i).and_then(|s: Sexp<'_>| s.u32());
            let (Some(l), Some(r)) = (score(4), score(5)) else {
                return Err("team record without two scores".into());
            };
            b.team([name(2), name(3)], [l, r]);
            Ok(())
        }
        Some(b"server_param") => {
            for (name, value) in pairs(rec) {
                if let Some(v) = value.f64() {
                    b.game.server.set(&name, v);
                }
                b.game.server.raw.push((name, atom_text(value)));
            }
            Ok(())
        }
        Some(b"player_type") => {
            let mut t: PlayerType = b.new_player_type();
            for (name, value) in pairs(rec) {
                if let Some(v) = value.f64() {
                    t.set(&name, v);
                }
                t.raw.push((name, atom_text(value)));
            }
            b.game.player_types.push(t);
            Ok(())
        }
        Some(b"player_param") => Ok(()),
        Some(other) => Err(format!("unknown record {:?}", String::from_utf8_lossy(other))),
        None => Err("record without a name".into()),
    }
}

/// `(name value)` pairs of a parameter record.
fn pairs<'a>(rec: Sexp<'a>) -> impl Iterator<Item = (String, Sexp<'a>)> {
    rec.items().skip(1).filter_map(|p| {
        let name = p.head()?;
        let value = p.get(1)?;
        Some((String::from_utf8_lossy(name).into_owned(), value))
    })
}

fn atom_text(s: Sexp<'_>) -> String {
    String::from_utf8_lossy(s.atom().unwrap_or_else(|| s.text())).into_owned()
}

fn message(rest: &[u8], b: &mut Builder, line: usize, offset: u64) -> Result<(), String> {
    let mut fields = rest.splitn(3, |&c| c == b' ');
    let cycle = fields
        .next()
        .and_then(crate::sim2d::parse_u32)
        .ok_or("msg without a time")?;
    let board = fields
        .next()
        .and_then(crate::sim2d::parse_u32)
        .and_then(|v| u16::try_from(v).ok())
        .ok_or("msg without a board")?;
    let body = fields.next().unwrap_or_default();
    let Some(body) = body.strip_prefix(b"\"") else {
        return Err("msg without a quoted text".into());
    };
    let body = match body.strip_suffix(b"\")") {
        Some(t) => t,
        None => {
            b.warnings.push(
                line,
                offset,
                "msg text not closed by '\")'; kept to the end of the line",
            );
            body
        }
    };
    let text = match std::str::from_utf8(body) {
        Ok(s) => s.to_owned(),
        Err(e) => {
            b.warnings.push_with(line, offset, || {
                format!(
                    "msg text is not UTF-8 from byte {} of it on (garbage after the message?); kept with replacement characters",
                    e.valid_up_to()
                )
            });
            String::from_utf8_lossy(body).into_owned()
        }
    };
    b.message(cycle, board, text);
    Ok(())
}

fn finite<const N: usize>(v: [f64; N]) -> Option<[f64; N]> {
    v.iter().all(|x| x.is_finite()).then_some(v)
}

fn show(rec: Sexp<'_>, b: &mut Builder) -> Result<(), String> {
    let mut items = rec.items().skip(1);
    let cycle = items.next().and_then(|s| s.u32()).ok_or("show without a time")?;
    let mut ball = None;
    let mut players = Vec::with_capacity(22);
    let mut bad = 0usize;
    for obj in items {
        let Some(tag) = obj.get(0) else {
            bad += 1;
            continue;
        };
        if tag.head() == Some(b"b") {
            let mut v = [0.0; 4];
            let mut it = obj.items().skip(1);
            for x in &mut v {
                *x = it.next().and_then(|s| s.f64()).unwrap_or(f64::NAN);
            }
            match finite(v) {
                Some(v) => {
                    ball = Some(Ball {
                        pos: [v[0], v[1]],
                        vel: [v[2], v[3]],
                    })
                }
                None => bad += 1,
            }
        } else {
            match player(obj, tag) {
                Some(p) => players.push(p),
                None => bad += 1,
            }
        }
    }
    let Some(ball) = ball else {
        return Err(format!("show {cycle} without a ball; skipped"));
    };
    if let Some(last) = b.show(cycle, ball, players) {
        return Err(format!(
            "show {cycle} comes after the record of cycle {last}, which it should precede; dropped"
        ));
    }
    if bad > 0 {
        return Err(format!("show {cycle}: {bad} malformed objects left out"));
    }
    Ok(())
}

fn player(obj: Sexp<'_>, tag: Sexp<'_>) -> Option<Player> {
    let side = Side::from_byte(*tag.get(0)?.atom()?.first()?)?;
    let unum = u8::try_from(tag.get(1)?.u32()?).ok()?;
    let mut it = obj.items().skip(1).peekable();
    let player_type = u16::try_from(it.next()?.u32()?).ok()?;
    let state_atom = it.next()?.atom()?;
    let state = match state_atom
        .strip_prefix(b"0x")
        .or_else(|| state_atom.strip_prefix(b"0X"))
    {
        Some(hex) => u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?,
        None => crate::sim2d::parse_u32(state_atom)?,
    };
    let mut v = [0.0; 6];
    for x in &mut v {
        *x = it.next()?.f64()?;
    }
    let [x, y, vx, vy, body, neck] = finite(v)?;
    let mut p = Player {
        side,
        unum,
        player_type,
        state,
        pos: [x, y],
        vel: [vx, vy],
        body,
        neck,
        arm: None,
        view: None,
        stamina: None,
        focus: None,
        focus_point: None,
        counts: Vec::new(),
    };
    // The arm's target: two more numbers before the lists.
    if it.peek().is_some_and(|s| !s.is_list()) {
        let ax = it.next()?.f64()?;
        let ay = it.next()?.f64()?;
        p.arm = finite([ax, ay]);
    }
    for part in it {
        match part.head() {
            Some(b"v") => {
                let q = match part.get(1)?.atom()? {
                    b"h" => ViewQuality::High,
                    b"l" => ViewQuality::Low,
                    _ => return None,
                };
                let w = part.get(2)?.f64().filter(|w| w.is_finite())?;
                p.view = Some((q, w));
            }
            Some(b"fp") => p.focus_point = finite(part.numbers::<2>()?),
            Some(b"s") => {
                let n: Vec<f64> = part.items().skip(1).map_while(|s| s.f64()).take(4).collect();
                if n.len() >= 3 && n.iter().all(|x| x.is_finite()) {
                    p.stamina = Some(Stamina {
                        stamina: n[0],
                        effort: n[1],
                        recovery: n[2],
                        capacity: n.get(3).copied(),
                    });
                }
            }
            Some(b"f") => {
                let s = Side::from_byte(*part.get(1)?.atom()?.first()?)?;
                let u = u8::try_from(part.get(2)?.u32()?).ok()?;
                p.focus = Some((s, u));
            }
            Some(b"c") => {
                p.counts = part
                    .items()
                    .skip(1)
                    .take(super::model::COUNT_NAMES.len())
                    .map(|s| s.u32().unwrap_or(0))
                    .collect();
            }
            _ => {}
        }
    }
    Some(p)
}
