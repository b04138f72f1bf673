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

pub mod dcl;
pub mod dlog;
pub mod game;
pub mod logs;
pub mod render;
pub mod sensors;
mod shared;

pub use game::{Game, GameError, read_game};
pub use shared::*;

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
