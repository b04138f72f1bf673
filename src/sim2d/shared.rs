//! What every 2D-league reader shares: the two sides, the game clock
//! (cycles and stoppage steps) and its times, coordinates from the game's
//! frame into underlay's, warnings with their lines, and number parsing.

use std::fmt;

use crate::geom::Vec2;

/// At most this many warnings are kept per file; the rest are counted.
pub const MAX_WARNINGS: usize = 200;

pub use crate::time::{STOPPED_STEP, cycle_clock as clock};

/// A team's side of the pitch (the left team kicks off towards +x).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    /// `l` / `r` as the server writes them.
    pub fn from_byte(b: u8) -> Option<Side> {
        match b {
            b'l' | b'L' => Some(Side::Left),
            b'r' | b'R' => Some(Side::Right),
            _ => None,
        }
    }

    /// `"l"` or `"r"`.
    pub fn letter(self) -> &'static str {
        match self {
            Side::Left => "l",
            Side::Right => "r",
        }
    }

    /// The index of this side in `[left, right]` pairs.
    pub fn index(self) -> usize {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }
}

/// Something a reader skipped or doubted without failing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line of a text file (0: not about one line, or a binary file).
    pub line: usize,
    /// Byte offset in the (decompressed) file.
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            write!(f, "byte {}: {}", self.offset, self.message)
        }
    }
}

/// Collects warnings, keeping the first [`MAX_WARNINGS`] and counting the rest.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    list: Vec<Warning>,
    tally: crate::log::validate::Tally,
}

impl Warnings {
    pub fn push(&mut self, line: usize, offset: u64, message: impl Into<String>) {
        let message = message.into();
        if self.tally.keep(&message) {
            self.list.push(Warning {
                line,
                offset,
                message,
            });
        }
    }

    /// Like [`Warnings::push`] (the message is built to know its kind).
    pub fn push_with(&mut self, line: usize, offset: u64, message: impl FnOnce() -> String) {
        self.push(line, offset, message());
    }

    /// The warnings kept, and a line for each kind not all kept.
    pub fn finish(mut self) -> Vec<Warning> {
        self.list
            .extend(self.tally.summary().into_iter().map(|message| Warning {
                line: 0,
                offset: 0,
                message,
            }));
        self.list
    }
}

/// A debug time `cycle,stopped` as an agent logs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GameTime {
    pub cycle: u32,
    pub stopped: u32,
}

/// Turns an agent's debug times, in file order, into monotonic game-log
/// times.
///
/// librcsc counts the stoppage itself, and two habits of it matter:
///
/// - When play stops (a goal), the agent hears the referee's call of cycle
///   `c` before that cycle's sense_body: it logs a short frame `c,0` (the
///   call), then counts the cycle's sense_body as the first stoppage step
///   `c,1`. So its `c,k` (k ≥ 1) is the server's stoppage step k − 1:
///   checked against the game log, HELIOS_Q-9's believed position at
///   `274,k` is the game record `274` number k − 1 (stopped = k − 1), also
///   at `274,5` where the players were moved into the kick-off formation,
///   and `274,1 … 274,51` are the game log's 51 records of cycle 274.
///   Before kick-off likewise: `0,0` is the start, `0,k` the k-th
///   sense_body. So `c,0` and `c,1` map to stoppage step 0 (one frame:
///   the call and the first decision of the same server step), and `c,k`
///   to step k − 1.
/// - The time is not monotonic: before kick-off it counts `0,0 … 0,116`,
///   then reads `0,0` again when the kick-off is called; at half time it
///   goes `150,19 → 150,0 → 151,0`. A time that goes back (the stoppage
///   counter, or the cycle) continues as the next stoppage step after the
///   last mapped time, and counts on from there, so frames keep file order
///   and each its own time. The game logs start at cycle 1 (rcssserver
///   records nothing before kick-off) and have no record of the half-time
///   cycle, so these continued times collide with no game record.
///
/// Normal cycles (`c,0` after `c−1,…`) map to themselves.
#[derive(Clone, Debug, Default)]
pub struct TimeMapper {
    last_raw: Option<GameTime>,
    last: GameTime,
    /// The current run: the raw cycle, its mapped cycle and the mapped
    /// stoppage step of its server step 0.
    run_cycle: u32,
    run_mapped_cycle: u32,
    run_base: i64,
}

impl TimeMapper {
    pub fn new() -> Self {
        Self::default()
    }

    /// The monotonic time of `raw`, and whether the cycle went backwards.
    pub fn map(&mut self, raw: GameTime) -> (GameTime, bool) {
        let step = i64::from(raw.stopped.saturating_sub(1));
        let mut backwards = false;
        match self.last_raw {
            Some(prev) if raw == prev => return (self.last, false),
            Some(prev) if raw.cycle <= self.last.cycle => {
                let continues =
                    raw.cycle == self.run_cycle && raw.cycle == prev.cycle && raw.stopped >= prev.stopped;
                if !continues {
                    backwards = raw.cycle < prev.cycle;
                    self.run_cycle = raw.cycle;
                    self.run_mapped_cycle = self.last.cycle;
                    self.run_base = i64::from(self.last.stopped) + 1 - step;
                }
            }
            _ => {
                self.run_cycle = raw.cycle;
                self.run_mapped_cycle = raw.cycle;
                self.run_base = 0;
            }
        }
        let stopped = (self.run_base + step).clamp(0, i64::from(u32::MAX)) as u32;
        let mapped = GameTime {
            cycle: self.run_mapped_cycle,
            stopped,
        };
        self.last_raw = Some(raw);
        self.last = mapped;
        (mapped, backwards)
    }
}

/// Parses `cycle,stopped` (both non-negative decimal integers).
pub(crate) fn parse_game_time(s: &[u8]) -> Option<GameTime> {
    let comma = s.iter().position(|&b| b == b',')?;
    Some(GameTime {
        cycle: parse_u32(&s[..comma])?,
        stopped: parse_u32(&s[comma + 1..])?,
    })
}

/// A non-negative decimal integer of at most 10 digits that fits `u32`.
pub(crate) fn parse_u32(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 10 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    u32::try_from(v).ok()
}

/// A decimal integer, optionally negative, that fits `i64`.
pub(crate) fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().fold(0i64, |v, &b| v * 10 + i64::from(b - b'0'));
    Some(if neg { -v } else { v })
}

/// Game coordinates (y down) → world (y up).
pub fn world(p: [f64; 2]) -> Vec2 {
    Vec2::new(p[0], -p[1])
}

/// A game angle (degrees, clockwise on screen) → world (radians, counter-clockwise).
pub fn world_angle(deg: f64) -> f64 {
    -deg.to_radians()
}
