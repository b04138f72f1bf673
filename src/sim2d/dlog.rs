//! librcsc `Logger` debug logs (`<team>-<unum>.log`, `<team>-coach.log`):
//! what an agent wrote about its reasoning, one line per message or shape,
//! into a visualization [`Log`].
//!
//! Each line is `cycle,stopped level type …`:
//!
//! | type | fields | drawn as |
//! |---|---|---|
//! | `M` | text | a text line in the agent's message column (level 3) |
//! | `p` | x y | a point |
//! | `l` | x1 y1 x2 y2 | a line |
//! | `a` | x y r start span | an arc (degrees) |
//! | `c` / `C` | x y r | a circle / filled |
//! | `t` / `T` | x1 y1 x2 y2 x3 y3 | a triangle / filled |
//! | `r` / `R` | left top length width | a rectangle / filled |
//! | `s` / `S` | x y min_r max_r start span | a ring sector / filled |
//! | `m` | x y [`(c colour)`] text | text on the field (level 2) |
//!
//! A shape line may end with a colour: a name ([`Rgba::parse`]) or
//! `#rrggbb`; without one shapes are drawn white. Shapes are level 1.
//! `level` is a bit mask of categories (1 system, 2 sensor, 4 world, 8
//! action, …, 2³¹ training; −1 all): a line goes to the entity
//! `<team>/<unum>/<category>` (parents `<team>/<unum>` and `<category>`),
//! a line of several bits to `<team>/<unum>/<cat1>+<cat2>` (−1:
//! `<team>/<unum>/all`) whose parents are each single-category entity.
//!
//! Coordinates are the agent's own team frame (its team attacks +x);
//! they are converted to underlay's world frame: a right-side agent's are
//! mirrored (x, y → −x, −y, angles + 180°) into the game's frame, then
//! world x = game x, world y = −game y, world angle = −game angle (radians,
//! counter-clockwise). Times go through [`TimeMapper`] (monotonic, aligned
//! with the game log's records; see there) and [`clock`]: one
//! instantaneous frame per mapped time, in file order.
//!
//! `M` messages are kept twice: as data ([`DebugLog::messages`]) and drawn,
//! so that they are never lost: in a column outside the pitch beside the
//! agent's own goal (world x = −[`MESSAGE_COLUMN_X`] for a left-side
//! agent, +[`MESSAGE_COLUMN_X`] for a right-side one, text growing
//! outwards from the pitch for a right-side agent and towards it for a
//! left-side one), the frame's first message at world y =
//! [`MESSAGE_COLUMN_TOP`] and each next one [`MESSAGE_LINE`] lower; text
//! in world units ([`MESSAGE_SIZE`] m high) so the column keeps its shape
//! at any zoom. Bad lines are skipped with a warning naming their line.

use std::collections::HashMap;
use std::path::Path;

use crate::geom::Vec2;
use crate::log::{
    DisplayHints, EntityId, FrameTime, Header, LoadWarning, Log, MarkerKind, Primitive, Rgba, Shape, Style,
    ThicknessUnit, TimeUnit,
};
use crate::sexp::lines;
use crate::sexp::parse_f64;

use super::{GameTime, Side, TimeMapper, Warnings, clock, parse_game_time, parse_i64};

/// Category names of the level bits, bit 0 first (librcsc's `Logger`).
pub const CATEGORIES: [(u32, &str); 22] = [
    (1, "system"),
    (1 << 1, "sensor"),
    (1 << 2, "world"),
    (1 << 3, "action"),
    (1 << 4, "intercept"),
    (1 << 5, "kick"),
    (1 << 6, "hold"),
    (1 << 7, "dribble"),
    (1 << 8, "pass"),
    (1 << 9, "cross"),
    (1 << 10, "shoot"),
    (1 << 11, "clear"),
    (1 << 12, "block"),
    (1 << 13, "mark"),
    (1 << 14, "positioning"),
    (1 << 15, "role"),
    (1 << 16, "team"),
    (1 << 17, "communication"),
    (1 << 18, "analyzer"),
    (1 << 19, "action_chain"),
    (1 << 20, "plan"),
    (1 << 31, "training"),
];

/// Level of shapes, field text and messages.
pub const SHAPE_LEVEL: i32 = 1;
pub const FIELD_TEXT_LEVEL: i32 = 2;
pub const MESSAGE_LEVEL: i32 = 3;

/// The message column's distance from the centre line (metres; the pitch
/// ends at 52.5).
pub const MESSAGE_COLUMN_X: f64 = 60.0;
/// World y of a frame's first message.
pub const MESSAGE_COLUMN_TOP: f64 = 34.0;
/// Metres between two messages of a frame.
pub const MESSAGE_LINE: f64 = 1.0;
/// Glyph height of messages, metres.
pub const MESSAGE_SIZE: f64 = 0.8;
/// Glyph height of field text (`m`), pixels.
pub const FIELD_TEXT_SIZE: f64 = 11.0;

/// Whose log it is and how to place it.
#[derive(Clone, Debug, PartialEq)]
pub struct DebugLogOptions {
    pub team: String,
    /// 1–11 for players, 0 for the coach.
    pub unum: u8,
    /// The agent's side: `Right` mirrors x and y.
    pub side: Side,
    /// Seconds per cycle (the game's `simulator_step`).
    pub step: f64,
}

/// A text message (`M`) of a debug log.
#[derive(Clone, Debug, PartialEq)]
pub struct DebugMessage {
    /// [`clock`] of the mapped time.
    pub clock: f64,
    /// The time as the agent logged it.
    pub time: GameTime,
    /// The entity's category part (`pass`, `world+action`, `all`).
    pub category: String,
    pub text: String,
}

/// A debug log read: its drawing and its messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DebugLog {
    pub log: Log,
    pub messages: Vec<DebugMessage>,
}

/// Why bytes are not a debug log.
#[derive(Debug, thiserror::Error)]
pub enum DebugLogError {
    /// Not one line of the file is a debug log line.
    #[error("not a librcsc debug log: line {line}: {why}")]
    NotADebugLog { line: usize, why: String },
    #[error("not a librcsc debug log: it is empty")]
    Empty,
}

/// The agent a debug log file belongs to, from its name:
/// `HELIOS_A-9.log.gz` → `("HELIOS_A", 9)`, `HELIOS_A-coach.log` →
/// `("HELIOS_A", 0)`. Also for `.dcl` files.
pub fn agent_from_file_name(path: &Path) -> Option<(String, u8)> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let stem = name
        .strip_suffix(".log")
        .or_else(|| name.strip_suffix(".dcl"))
        .unwrap_or(name);
    let (team, who) = stem.rsplit_once('-')?;
    if team.is_empty() {
        return None;
    }
    let unum = if who.eq_ignore_ascii_case("coach") {
        0
    } else {
        who.parse::<u8>().ok().filter(|u| (1..=99).contains(u))?
    };
    Some((team.to_owned(), unum))
}

/// Whether `head` starts like a debug log: its first line is
/// `cycle,stopped level type` followed by a space or the line's end.
pub fn sniff(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut f = line.split(|&b| b == b' ');
    let (Some(time), Some(level), Some(kind)) = (f.next(), f.next(), f.next()) else {
        return false;
    };
    parse_game_time(time).is_some()
        && parse_level(level).is_some()
        && kind.len() == 1
        && TYPES.contains(&kind[0])
}

const TYPES: &[u8] = b"MplacCtTrRsSm";

fn parse_level(s: &[u8]) -> Option<u32> {
    let v = parse_i64(s)?;
    if (i64::from(i32::MIN)..0).contains(&v) {
        Some(v as i32 as u32)
    } else {
        u32::try_from(v).ok()
    }
}

/// Reads a debug log into a visualization log (see the module docs).
pub fn read_debug_log(bytes: &[u8], opts: &DebugLogOptions) -> Result<Log, DebugLogError> {
    read_debug(bytes, opts).map(|d| d.log)
}

/// The `M` messages of a debug log as data: (clock, category, text).
pub fn read_messages(bytes: &[u8], opts: &DebugLogOptions) -> Result<Vec<DebugMessage>, DebugLogError> {
    read_debug(bytes, opts).map(|d| d.messages)
}

/// Converts an agent's own-frame point to the world frame.
pub(crate) fn to_world(side: Side, x: f64, y: f64) -> Vec2 {
    match side {
        Side::Left => Vec2::new(x, -y),
        Side::Right => Vec2::new(-x, y),
    }
}

/// Converts an agent's own-frame angle (degrees, clockwise on screen) to a
/// world angle (radians, counter-clockwise).
pub(crate) fn angle_to_world(side: Side, deg: f64) -> f64 {
    let game = match side {
        Side::Left => deg,
        Side::Right => deg + 180.0,
    };
    -game.to_radians()
}

/// Entities of an agent's categories, interned once per level mask.
pub(crate) struct AgentEntities {
    prefix: String,
    by_mask: HashMap<u32, (EntityId, String)>,
}

impl AgentEntities {
    pub fn new(team: &str, unum: u8) -> Self {
        AgentEntities {
            prefix: format!("{team}/{unum}"),
            by_mask: HashMap::new(),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The entity of a category name under this agent, with its parents.
    pub fn single(&self, log: &mut Log, category: &str) -> EntityId {
        let agent = log.entities.intern(&self.prefix);
        let cat = log.entities.intern(category);
        let id = log.entities.intern(&format!("{}/{category}", self.prefix));
        log.entities.add_parent(id, agent);
        log.entities.add_parent(id, cat);
        id
    }

    /// The entity of a level mask and its category part.
    pub fn of_mask(&mut self, log: &mut Log, mask: u32) -> (EntityId, &str) {
        if !self.by_mask.contains_key(&mask) {
            let names: Vec<String> = (0..32)
                .filter(|bit| mask & (1u32 << bit) != 0)
                .map(|bit| {
                    let b = 1u32 << bit;
                    CATEGORIES
                        .iter()
                        .find(|(v, _)| *v == b)
                        .map_or_else(|| format!("bit{bit}"), |(_, n)| (*n).to_owned())
                })
                .collect();
            let entry = match names.as_slice() {
                [] => ("none".to_owned(), self.single(log, "none")),
                [one] => (one.clone(), self.single(log, one)),
                many => {
                    let name = if mask == u32::MAX {
                        "all".to_owned()
                    } else {
                        many.join("+")
                    };
                    let id = log.entities.intern(&format!("{}/{name}", self.prefix));
                    for n in many {
                        let parent = self.single(log, n);
                        log.entities.add_parent(id, parent);
                    }
                    (name, id)
                }
            };
            self.by_mask.insert(mask, (entry.1, entry.0));
        }
        let (id, name) = &self.by_mask[&mask];
        (*id, name.as_str())
    }
}

/// The log header of an agent's drawing.
pub(crate) fn header(name: String, step: f64) -> Header {
    Header {
        name,
        time_unit: TimeUnit::RelativeSeconds,
        world_unit: "m".to_owned(),
        hints: DisplayHints {
            // The agent's cycles: each shown until the next, the last for
            // a cycle.
            instant_threshold: Some(step),
            cycle: Some(step),
            default_max_level: None,
            world_bounds: Some((Vec2::new(-60.0, -40.0), Vec2::new(60.0, 40.0))),
        },
    }
}

/// Frames being built: primitives gathered per mapped time.
pub(crate) struct FrameBuilder {
    pub step: f64,
    current: Option<GameTime>,
    pending: Vec<Primitive>,
    pub messages_in_frame: usize,
}

impl FrameBuilder {
    pub fn new(step: f64) -> Self {
        FrameBuilder {
            step,
            current: None,
            pending: Vec::new(),
            messages_in_frame: 0,
        }
    }

    /// Starts the frame of `t` unless it is the current one.
    pub fn at(&mut self, log: &mut Log, t: GameTime) {
        if self.current != Some(t) {
            self.flush(log);
            self.current = Some(t);
            self.messages_in_frame = 0;
        }
    }

    pub fn push(&mut self, p: Primitive) {
        self.pending.push(p);
    }

    pub fn flush(&mut self, log: &mut Log) {
        if let Some(t) = self.current
            && !self.pending.is_empty()
        {
            let time = clock(t.cycle, t.stopped, self.step);
            log.push_frame(FrameTime::Instant(time), self.pending.drain(..));
        }
    }
}

/// A line's fields after `cycle,stopped level type`.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn token(&mut self) -> Option<&'a [u8]> {
        let s = self.rest.trim_ascii_start();
        if s.is_empty() {
            self.rest = s;
            return None;
        }
        let end = s.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(s.len());
        self.rest = &s[end..];
        Some(&s[..end])
    }

    /// `N` numbers, then an optional colour, then nothing.
    fn shape<const N: usize>(&mut self) -> Result<([f64; N], Option<&'a [u8]>), String> {
        let mut v = [0.0; N];
        for (i, x) in v.iter_mut().enumerate() {
            let f = self
                .token()
                .ok_or_else(|| format!("{N} numbers expected, found {i}"))?;
            *x = parse_f64(f)
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("not a finite number: {:?}", String::from_utf8_lossy(f)))?;
        }
        let colour = self.token();
        if let Some(extra) = self.token() {
            return Err(format!(
                "unexpected {:?} after the shape",
                String::from_utf8_lossy(extra)
            ));
        }
        Ok((v, colour))
    }
}

/// A colour token: a name or `#rrggbb`.
pub(crate) fn colour(token: &[u8]) -> Option<Rgba> {
    std::str::from_utf8(token).ok().and_then(Rgba::parse)
}

/// Reads a debug log: the drawing and the messages.
pub fn read_debug(bytes: &[u8], opts: &DebugLogOptions) -> Result<DebugLog, DebugLogError> {
    let step = if opts.step.is_finite() && opts.step > 0.0 {
        opts.step
    } else {
        0.1
    };
    let mut log = Log::new();
    log.header = header(format!("{}-{} debug log", opts.team, opts.unum), step);
    let mut entities = AgentEntities::new(&opts.team, opts.unum);
    let mut frames = FrameBuilder::new(step);
    let mut times = TimeMapper::new();
    let mut warnings = Warnings::default();
    let mut messages = Vec::new();
    let mut good = 0usize;
    let mut first_bad: Option<(usize, String)> = None;
    let mut skipped = crate::log::Skipped::default();
    for (line, offset, text) in lines(bytes) {
        if text.trim_ascii().is_empty() {
            continue;
        }
        let result = read_line(
            text,
            opts.side,
            &mut log,
            &mut entities,
            &mut frames,
            &mut times,
            &mut messages,
        );
        match result {
            Ok(backwards) => {
                good += 1;
                if backwards {
                    warnings.push(
                        line,
                        offset,
                        "the cycle went backwards; continued after the last time",
                    );
                }
            }
            Err(why) => {
                if first_bad.is_none() {
                    first_bad = Some((line, why.clone()));
                }
                warnings.push(line, offset, why);
                skipped.add(offset, text.len() as u64 + 1);
            }
        }
    }
    frames.flush(&mut log);
    log.skipped = skipped;
    if good == 0 {
        return Err(match first_bad {
            Some((line, why)) => DebugLogError::NotADebugLog { line, why },
            None => DebugLogError::Empty,
        });
    }
    log.warnings = warnings
        .finish()
        .into_iter()
        .map(|w| LoadWarning {
            offset: (w.line > 0).then_some(w.offset),
            frame: None,
            message: w.to_string(),
        })
        .collect();
    Ok(DebugLog { log, messages })
}

/// One line; whether its cycle went backwards.
fn read_line(
    text: &[u8],
    side: Side,
    log: &mut Log,
    entities: &mut AgentEntities,
    frames: &mut FrameBuilder,
    times: &mut TimeMapper,
    messages: &mut Vec<DebugMessage>,
) -> Result<bool, String> {
    let mut f = Fields { rest: text };
    let raw = f
        .token()
        .and_then(parse_game_time)
        .ok_or("no cycle,stopped time at the start")?;
    let mask = f.token().and_then(parse_level).ok_or("no level after the time")?;
    let kind = match f.token() {
        Some([k]) if TYPES.contains(k) => *k,
        Some(k) => return Err(format!("unknown line type {:?}", String::from_utf8_lossy(k))),
        None => return Err("no line type".into()),
    };
    // Everything checked before the time counts, so a bad line never
    // moves the clock.
    let shape = if kind == b'M' {
        None
    } else {
        Some(shape_of(kind, &mut f, side)?)
    };
    let (t, backwards) = times.map(raw);
    frames.at(log, t);
    let (entity, category) = entities.of_mask(log, mask);
    match shape {
        None => {
            let body = text_after_type(text);
            let body = String::from_utf8_lossy(body).into_owned();
            let i = frames.messages_in_frame;
            frames.messages_in_frame += 1;
            let x = match side {
                Side::Left => -MESSAGE_COLUMN_X,
                Side::Right => MESSAGE_COLUMN_X,
            };
            let y = MESSAGE_COLUMN_TOP - MESSAGE_LINE * i as f64;
            let mut style = Style::color(Rgba::WHITE);
            style.unit = ThicknessUnit::World;
            frames.push(Primitive {
                shape: Shape::Text {
                    anchor: Vec2::new(x, y),
                    text: body.clone().into(),
                    size: MESSAGE_SIZE,
                },
                style,
                entity,
                level: MESSAGE_LEVEL,
            });
            messages.push(DebugMessage {
                clock: clock(t.cycle, t.stopped, frames.step),
                time: raw,
                category: category.to_owned(),
                text: body,
            });
        }
        Some((shape, style, level)) => frames.push(Primitive {
            shape,
            style,
            entity,
            level,
        }),
    }
    Ok(backwards)
}

/// The bytes after `cycle,stopped level type ` (the text of `M`).
fn text_after_type(line: &[u8]) -> &[u8] {
    let mut rest = line;
    for _ in 0..3 {
        rest = rest.trim_ascii_start();
        let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
        rest = &rest[end..];
    }
    rest.strip_prefix(b" ").unwrap_or(rest)
}

fn style_of(colour_token: Option<&[u8]>, fill: bool) -> Result<Style, String> {
    let color = match colour_token {
        None => Rgba::WHITE,
        Some(t) => colour(t).ok_or_else(|| format!("unknown colour {:?}", String::from_utf8_lossy(t)))?,
    };
    Ok(Style {
        color,
        fill: fill.then_some(color),
        ..Style::default()
    })
}

fn radius(r: f64) -> Result<f64, String> {
    if r >= 0.0 {
        Ok(r)
    } else {
        Err(format!("negative radius {r}"))
    }
}

fn shape_of(kind: u8, f: &mut Fields<'_>, side: Side) -> Result<(Shape, Style, i32), String> {
    let p = |x: f64, y: f64| to_world(side, x, y);
    Ok(match kind {
        b'p' => {
            let ([x, y], c) = f.shape::<2>()?;
            (
                Shape::Point {
                    position: p(x, y),
                    kind: MarkerKind::Cross,
                    size: 0.0,
                },
                style_of(c, false)?,
                SHAPE_LEVEL,
            )
        }
        b'l' => {
            let ([x1, y1, x2, y2], c) = f.shape::<4>()?;
            (
                Shape::Line {
                    start: p(x1, y1),
                    end: p(x2, y2),
                },
                style_of(c, false)?,
                SHAPE_LEVEL,
            )
        }
        b'a' => {
            let ([x, y, r, start, span], c) = f.shape::<5>()?;
            let r = radius(r)?;
            (
                Shape::Sector {
                    center: p(x, y),
                    inner: r,
                    outer: r,
                    start: angle_to_world(side, start),
                    sweep: -span.to_radians(),
                },
                style_of(c, false)?,
                SHAPE_LEVEL,
            )
        }
        b'c' | b'C' => {
            let ([x, y, r], c) = f.shape::<3>()?;
            (
                Shape::Circle {
                    center: p(x, y),
                    radius: radius(r)?,
                },
                style_of(c, kind == b'C')?,
                SHAPE_LEVEL,
            )
        }
        b't' | b'T' => {
            let ([x1, y1, x2, y2, x3, y3], c) = f.shape::<6>()?;
            (
                Shape::Polygon {
                    vertices: vec![p(x1, y1), p(x2, y2), p(x3, y3)].into(),
                    closed: true,
                },
                style_of(c, kind == b'T')?,
                SHAPE_LEVEL,
            )
        }
        b'r' | b'R' => {
            let ([left, top, length, width], c) = f.shape::<4>()?;
            if length < 0.0 || width < 0.0 {
                return Err(format!("negative rectangle size {length} × {width}"));
            }
            (
                Shape::Rectangle {
                    center: p(left + length / 2.0, top + width / 2.0),
                    size: Vec2::new(length, width),
                    orientation: 0.0,
                },
                style_of(c, kind == b'R')?,
                SHAPE_LEVEL,
            )
        }
        b's' | b'S' => {
            let ([x, y, r0, r1, start, span], c) = f.shape::<6>()?;
            let (r0, r1) = (radius(r0)?, radius(r1)?);
            if r1 < r0 {
                return Err(format!("sector's outer radius {r1} below its inner {r0}"));
            }
            (
                Shape::Sector {
                    center: p(x, y),
                    inner: r0,
                    outer: r1,
                    start: angle_to_world(side, start),
                    sweep: -span.to_radians(),
                },
                style_of(c, kind == b'S')?,
                SHAPE_LEVEL,
            )
        }
        b'm' => {
            let mut num = || -> Result<f64, String> {
                let t = f.token().ok_or("text position expected")?;
                parse_f64(t)
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("not a finite number: {:?}", String::from_utf8_lossy(t)))
            };
            let (x, y) = (num()?, num()?);
            let mut rest = f.rest.trim_ascii_start();
            let mut color = Rgba::WHITE;
            if let Some(r) = rest.strip_prefix(b"(c ") {
                let close = r
                    .iter()
                    .position(|&b| b == b')')
                    .ok_or("colour '(c …' not closed")?;
                let token = r[..close].trim_ascii();
                color = colour(token)
                    .ok_or_else(|| format!("unknown colour {:?}", String::from_utf8_lossy(token)))?;
                rest = r[close + 1..].trim_ascii_start();
            }
            (
                Shape::Text {
                    anchor: p(x, y),
                    text: String::from_utf8_lossy(rest).into(),
                    size: FIELD_TEXT_SIZE,
                },
                Style::color(color),
                FIELD_TEXT_LEVEL,
            )
        }
        other => return Err(format!("unknown line type {:?}", other as char)),
    })
}

#[cfg(test)]
mod tests;
