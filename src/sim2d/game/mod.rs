//! The game log model (rcssserver's `.rcg`) and the entry point that reads
//! any of its versions.
//!
//! The version is sniffed from the content: `ULG` followed by the byte 3
//! is the binary v3 format (records in network byte order, see `v3`),
//! `ULG4`, `ULG5`, `ULG6` the text formats (one S-expression per line, see
//! `text`), and a JSON array whose first element is an object the JSON
//! format of rcssserver 19 (`json`). All of them become one [`Game`]:
//!
//! - `server`: the typed parameters the sensor and action models need
//!   (rcssserver's defaults when the file does not give them; the
//!   simulator step in seconds) and `raw`, every parameter as written;
//! - `player_types`: the heterogeneous types;
//! - `records`: every show record in file order with the play mode and
//!   score that applied to it (`(playmode …)` and `(team …)` records apply
//!   to the show records after them) and its stoppage step `stopped`
//!   (how many show lines before it in a row had the same cycle: the
//!   server writes the show line once per stoppage step). A line that
//!   repeats the record before it exactly (nothing moved in that step) is
//!   one moment with it, kept once, its step still counted. A record
//!   whose cycle is before the one above it (the server writes them in
//!   order: a damaged file) is dropped and said with its place, so every
//!   reader of the game sees the same records in order;
//! - `messages`: the `(msg …)` records (except the team graphics a coach
//!   sends, counted in `team_graphics`) and the record they follow.
//!
//! Coordinates are the file's: metres, origin at the centre spot, x towards
//! the right goal, y downwards on the monitor's screen, angles in degrees
//! clockwise on screen. Bad lines and records are skipped with a
//! [`Warning`](super::Warning) (at most [`MAX_WARNINGS`](super::MAX_WARNINGS) kept); a torn
//! end keeps every record before it. A log with no show record (the
//! server stopped before the first cycle) is refused, saying so: it holds
//! no moment of a match. Memory is proportional to the input:
//! no count read from a file sizes an allocation.

mod file;
mod json;
mod model;
mod read;
mod text;
mod v3;

pub use file::{LoadError, MAX_GAME_LOG, load_game, load_game_shared};
pub use model::*;
pub use read::{read_game, sniff};

#[cfg(test)]
mod tests;
