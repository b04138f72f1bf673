//! A game log file read whole (gzip'ed or plain, bounded), and the one
//! read last kept: a match opened as a picture and as its own log is read
//! once.

use std::path::Path;

use super::model::{Game, GameError};
use super::read::read_game;

/// Why a game log file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read the file")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}")]
    TooLarge {
        path: std::path::PathBuf,
        #[source]
        source: crate::bounded::OverBudget,
    },
    #[error("{path}")]
    Game {
        path: std::path::PathBuf,
        #[source]
        source: GameError,
    },
}

/// The most a game log may deliver (decompressed) by default: 256 MiB, ten
/// times a whole match's 22 MB (its sensor models cost about ten times
/// the log).
pub const MAX_GAME_LOG: u64 = 256 << 20;

/// The game log read last, kept: a match opened as a picture and as its
/// own log is read once. Keyed by path, length and modification time.
type GameKey = (std::path::PathBuf, u64, Option<std::time::SystemTime>);
static LAST_GAME: std::sync::Mutex<Option<(GameKey, std::sync::Arc<Game>)>> = std::sync::Mutex::new(None);

/// Reads the game log at `path` (plain or gzip'ed), or gives the one read
/// last when it is the same file unchanged.
pub fn load_game_shared(path: &Path) -> Result<std::sync::Arc<Game>, LoadError> {
    let key = std::fs::metadata(path).ok().filter(|m| m.is_file()).map(|m| {
        (
            std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
            m.len(),
            m.modified().ok(),
        )
    });
    if let Some(k) = &key
        && let Ok(guard) = LAST_GAME.lock()
        && let Some((kk, g)) = guard.as_ref()
        && kk == k
    {
        return Ok(std::sync::Arc::clone(g));
    }
    let game = std::sync::Arc::new(load_game(path)?);
    if let (Some(k), Ok(mut guard)) = (key, LAST_GAME.lock()) {
        *guard = Some((k, std::sync::Arc::clone(&game)));
    }
    Ok(game)
}

/// Reads the game log at `path` (plain or gzip'ed), within the input
/// budget ([`crate::bounded`]).
pub fn load_game(path: &Path) -> Result<Game, LoadError> {
    use crate::bounded::{Budget, FileError, read_file};
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    let bytes = read_file(path, Budget::current(), MAX_GAME_LOG).map_err(|e| match e {
        FileError::Io(e) => io(e),
        FileError::Gzip { error, .. } => io(error),
        FileError::OverBudget(source) => LoadError::TooLarge {
            path: path.to_owned(),
            source,
        },
    })?;
    read_game(&bytes).map_err(|source| LoadError::Game {
        path: path.to_owned(),
        source,
    })
}
