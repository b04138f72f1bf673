//! RoboCup Soccer Simulation 2D: reading what rcssserver records and what
//! librcsc-based agents log about their reasoning.
//!
//! - [`game`]: game logs (`.rcg`): binary v3 (`ULG` + byte 3, records in
//!   network byte order), text v4, v5 and v6 (`ULG4`…`ULG6`, one
//!   S-expression per line: `(server_param …)`, `(player_type …)`,
//!   `(playmode T mode)`, `(team T l r sl sr)`, `(show T …)`, `(msg T b "…")`)
//!   and rcssserver 19's JSON (one array, one element per line) → a
//!   [`game::Game`]: parameters, player types, team names and every show
//!   record with the play mode and score that applied to it.
//! - [`dlog`]: librcsc `Logger` debug logs (`<team>-<unum>.log`: one
//!   `cycle,stopped level type …` line per message or shape) → a
//!   visualization [`Log`](crate::log::Log) in underlay's world frame, plus
//!   the text messages as data.
//! - [`dcl`]: librcsc debug-client world models (`.dcl`: `%% step N` /
//!   `%% debug [((debug (format-version 5)) (time C,S) (s …) (b …) …)]`)
//!   → what the agent believed each step, and its drawing (with its error
//!   against the game log when one is given).
//!
//! # Coordinates
//! The game model keeps the file's coordinates: metres, origin at the
//! centre spot, x towards the right goal, **y downwards on the monitor's
//! screen**, angles in degrees growing clockwise on screen. Debug logs and
//! world models are written in the agent's own team frame (its team
//! attacks +x), so a right-side agent's coordinates are the game's
//! mirrored (x, y → −x, −y). The visualization logs built here are in
//! underlay's world frame: right-side mirror first, then **world x = game
//! x, world y = −game y** (y up), angles counter-clockwise in radians
//! (world angle = −game angle).
//!
//! # Time
//! The server counts cycles; while play is stopped (before kick-off, after
//! a goal, at half time) the cycle stands still and a stoppage counter runs
//! instead (librcsc writes times as `cycle,stopped`). The clock of a record
//! is [`clock`]`(cycle, stopped, step)` = cycle × step + stopped ×
//! [`STOPPED_STEP`]: monotonic over a match as long as a stoppage lasts
//! fewer than step / `STOPPED_STEP` (10,000 at 100 ms) steps, and every
//! stoppage step its own distinct time. A game log's show lines do not
//! carry the stoppage counter: the same `(show T …)` repeats once per
//! stoppage step, so the `stopped` of a record is how many records before
//! it in a row had the same cycle. The debug time is not monotonic (it
//! restarts at kick-off and at half time); [`TimeMapper`] turns it into a
//! monotonic one in file order (see there).

use std::fmt;

pub mod dcl;
pub mod dlog;
pub mod game;
mod json;
pub mod logs;
pub mod render;
pub mod sensors;
mod text;
mod v3;

pub use game::{Game, GameError, read_game};

/// Seconds of clock per stoppage step.
pub const STOPPED_STEP: f64 = 1e-5;

/// At most this many warnings are kept per file; the rest are counted.
pub const MAX_WARNINGS: usize = 200;

/// The game clock of a record: cycle × step + stopped × [`STOPPED_STEP`]
/// (monotonic over a match, every stoppage step its own distinct time).
pub fn clock(cycle: u32, stopped: u32, step: f64) -> f64 {
    f64::from(cycle) * step + f64::from(stopped) * STOPPED_STEP
}

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
    dropped: usize,
}

impl Warnings {
    pub fn push(&mut self, line: usize, offset: u64, message: impl Into<String>) {
        if self.list.len() >= MAX_WARNINGS {
            self.dropped += 1;
        } else {
            self.list.push(Warning {
                line,
                offset,
                message: message.into(),
            });
        }
    }

    /// Like [`Warnings::push`], building the message only when it is kept.
    pub fn push_with(&mut self, line: usize, offset: u64, message: impl FnOnce() -> String) {
        if self.list.len() >= MAX_WARNINGS {
            self.dropped += 1;
        } else {
            self.push(line, offset, message());
        }
    }

    pub fn finish(mut self) -> Vec<Warning> {
        if self.dropped > 0 {
            self.list.push(Warning {
                line: 0,
                offset: 0,
                message: format!("… and {} more warnings", self.dropped),
            });
        }
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

#[cfg(test)]
pub(crate) mod testdata {
    //! The fixtures under `tests/data/sim2d/` and the shared media.

    use std::io::Read as _;
    use std::path::{Path, PathBuf};

    /// The bytes of a fixture, decompressed.
    pub fn fixture(name: &str) -> Vec<u8> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sim2d")
            .join(name);
        gunzip(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
    }

    /// A file of `../shared/testdata/sim2d`, decompressed; `None` (with a
    /// message) when the shared media are not there.
    pub fn shared(name: &str) -> Option<Vec<u8>> {
        let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/testdata/sim2d")
            .join(name);
        if !p.exists() {
            eprintln!("skipped: {} is not present", p.display());
            return None;
        }
        Some(gunzip(&std::fs::read(&p).ok()?))
    }

    pub fn gunzip(raw: &[u8]) -> Vec<u8> {
        if !raw.starts_with(&[0x1f, 0x8b]) {
            return raw.to_vec();
        }
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw)
            .read_to_end(&mut out)
            .expect("fixture gzip");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(cycle: u32, stopped: u32) -> GameTime {
        GameTime { cycle, stopped }
    }

    #[test]
    fn clock_orders_cycles_and_stoppages() {
        assert_eq!(clock(0, 0, 0.1), 0.0);
        assert!(clock(274, 50, 0.1) < clock(275, 0, 0.1));
        assert!(clock(274, 1, 0.1) > clock(274, 0, 0.1));
        assert!((clock(3000, 0, 0.1) - 300.0).abs() < 1e-9);
    }

    #[test]
    fn debug_times_become_monotonic_in_file_order() {
        let raw = [
            t(0, 0),
            t(0, 1),
            t(0, 1),
            t(0, 2),
            t(0, 34),
            t(0, 0),
            t(1, 0),
            t(150, 0),
            t(150, 1),
            t(150, 19),
            t(150, 0),
            t(151, 0),
            t(273, 0),
            t(274, 0),
            t(274, 1),
            t(274, 2),
            t(274, 51),
            t(275, 0),
            t(10, 0),
            t(11, 0),
            t(276, 0),
        ];
        let mut m = TimeMapper::new();
        let got: Vec<_> = raw.iter().map(|&r| m.map(r)).collect();
        let want = [
            (t(0, 0), false),
            (t(0, 0), false),
            (t(0, 0), false),
            (t(0, 1), false),
            (t(0, 33), false),
            (t(0, 34), false),
            (t(1, 0), false),
            (t(150, 0), false),
            (t(150, 0), false),
            (t(150, 18), false),
            (t(150, 19), false),
            (t(151, 0), false),
            (t(273, 0), false),
            (t(274, 0), false),
            (t(274, 0), false),
            (t(274, 1), false),
            (t(274, 50), false),
            (t(275, 0), false),
            (t(275, 1), true),
            (t(275, 2), false),
            (t(276, 0), false),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn integers_parse_strictly() {
        assert_eq!(parse_game_time(b"12,3"), Some(t(12, 3)));
        assert_eq!(parse_game_time(b"12,"), None);
        assert_eq!(parse_game_time(b"-1,0"), None);
        assert_eq!(parse_u32(b"4294967295"), Some(u32::MAX));
        assert_eq!(parse_u32(b"4294967296"), None);
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"2147483648"), Some(2_147_483_648));
        assert_eq!(parse_i64(b"1x"), None);
    }
}
