//! 2D-league files as the format table reads them (their lines: [`GAME`],
//! [`DEBUG_LOG`], [`WORLD_MODEL`]): a game log becomes its sensor models
//! ([`super::sensors`]) and a rendered match, an agent's debug log its
//! drawings and messages ([`super::dlog`]), a world model (`.dcl`) what
//! the agent believed ([`super::dcl`]). Read beside a game log (a
//! session's logs, `--log` over a match), an agent's files take their
//! side and the simulator step from it, and world models their errors
//! against it; read alone, a left-side agent and a 100 ms step are
//! assumed, with a warning.

use std::path::Path;
use std::sync::Arc;

use super::dlog::{DebugLogOptions, agent_from_file_name};
use super::game::{Game, GameError};
use super::sensors::{SensorOptions, parse_player, sensor_log};
use super::{Side, dcl, dlog};
use crate::input::{Companion, Format, Head, LogReader, Provides, ReadContext, ReadOptions};
use crate::log::{LoadWarning, Log, LogError, ReadError};

/// The format table's line for 2D game logs: the server's sensor models
/// as a log, the match rendered, and the game read beside its agents'
/// files.
pub const GAME: Format = Format {
    log: Some(LogReader::Whole(|bytes, cx| {
        let game = super::read_game(bytes).map_err(|e| ReadError::other(Error::from(e)))?;
        Ok(game_log(&game, &sensor_options(cx.options)))
    })),
    source: Some(super::render::open),
    max_input: super::game::MAX_GAME_LOG,
    provides: Some(Provides {
        parse: |path, _| {
            let game: Arc<Companion> = super::game::load_game_shared(path).map_err(|e| match e {
                super::game::LoadError::Game { source, .. } => LogError::Read {
                    path: path.to_owned(),
                    error: ReadError::other(Error::from(source)),
                },
                super::game::LoadError::Io { source, .. } => LogError::io(path, source),
                super::game::LoadError::TooLarge { source, .. } => LogError::Read {
                    path: path.to_owned(),
                    error: ReadError::from(source),
                },
            })?;
            Ok(game)
        },
        log: |game, options| match game.downcast_ref::<Game>() {
            Some(g) => game_log(g, &sensor_options(options)),
            None => Log::new(),
        },
    }),
    ..Format::new(
        "rcg",
        "2D game log (the server's sensor models)",
        "a 2D-league game log (\"ULG\" header, or rcssserver's JSON)",
        "*.rcg, *.rcg.gz",
        |h: &Head<'_>| super::game::sniff(h.bytes),
    )
};

/// The most a debug log may deliver (decompressed) by default: 512 MiB (its
/// model costs about seven times that).
pub const MAX_DEBUG_LOG: u64 = 512 << 20;

/// The format table's line for 2D agents' debug logs (librcsc `Logger`).
pub const DEBUG_LOG: Format = Format {
    log: Some(LogReader::Whole(|bytes, cx| {
        read_agent(Kind::DebugLog, bytes, cx)
    })),
    beside: Some("rcg"),
    max_input: MAX_DEBUG_LOG,
    ..Format::new(
        "rcl",
        "2D agent debug log",
        "a librcsc debug log (lines `CYCLE,STOPPED LEVEL TYPE …`)",
        "TEAM-UNUM.log[.gz]",
        |h: &Head<'_>| dlog::sniff(h.bytes),
    )
};

/// The format table's line for 2D agents' world models (librcsc debug
/// client, `.dcl`).
pub const WORLD_MODEL: Format = Format {
    log: Some(LogReader::Whole(|bytes, cx| {
        read_agent(Kind::WorldModel, bytes, cx)
    })),
    beside: Some("rcg"),
    max_input: super::game::MAX_GAME_LOG,
    ..Format::new(
        "dcl",
        "2D agent world model (what it believed)",
        "a librcsc debug-client log (`%% step` lines)",
        "TEAM-UNUM.dcl[.gz]",
        |h: &Head<'_>| dcl::sniff(h.bytes),
    )
};

/// The sensor options a session's read options ask for.
fn sensor_options(options: &ReadOptions) -> SensorOptions {
    SensorOptions {
        observer: options.observer.as_deref().and_then(parse_player),
    }
}

/// An agent's debug log or world model, beside its match's game log when
/// the format table read one.
fn read_agent(kind: Kind, bytes: &[u8], cx: &ReadContext<'_>) -> Result<Log, ReadError> {
    let cx2 = Context {
        game: cx.beside.and_then(|c| c.downcast_ref::<Game>()),
        sensors: sensor_options(cx.options),
    };
    read(kind, bytes, cx.path, &cx2).map_err(ReadError::other)
}

/// Which 2D-league file a log was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Game,
    DebugLog,
    WorldModel,
}

/// Why a 2D-league file could not be read as a log.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Game(#[from] GameError),
    #[error(transparent)]
    DebugLog(#[from] dlog::DebugLogError),
    #[error(transparent)]
    WorldModel(#[from] dcl::DclError),
}

/// What the other logs of a session say about an agent's file.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context<'a> {
    /// The match's game log, when one is read beside.
    pub game: Option<&'a Game>,
    /// The player whose sensing the game log draws in detail.
    pub sensors: SensorOptions,
}

/// Reads the (decompressed) bytes of a file the format table recognised
/// as `kind`.
pub fn read(kind: Kind, bytes: &[u8], path: Option<&Path>, cx: &Context<'_>) -> Result<Log, Error> {
    match kind {
        Kind::Game => {
            let game = super::read_game(bytes)?;
            Ok(game_log(&game, &cx.sensors))
        }
        Kind::DebugLog | Kind::WorldModel => {
            let (opts, mut notes) = agent_options(path, cx.game);
            let mut log = if kind == Kind::DebugLog {
                dlog::read_debug_log(bytes, &opts)?
            } else {
                let wm = dcl::read_world_model(bytes)?;
                notes.extend(wm.warnings.iter().map(|w| w.to_string()));
                dcl::to_log(&wm, &opts, cx.game)
            };
            log.warnings.extend(notes.into_iter().map(|message| LoadWarning {
                offset: None,
                frame: None,
                message,
            }));
            Ok(log)
        }
    }
}

/// The sensor-model log of a game, with its reader's warnings.
pub fn game_log(game: &Game, opts: &SensorOptions) -> Log {
    let mut log = sensor_log(game, opts);
    log.skipped = game.skipped;
    log.warnings.extend(game.warnings.iter().map(|w| LoadWarning {
        offset: None,
        frame: None,
        message: w.to_string(),
    }));
    log
}

/// Team, number, side and step of the agent whose file `path` is, and
/// what had to be assumed.
fn agent_options(path: Option<&Path>, game: Option<&Game>) -> (DebugLogOptions, Vec<String>) {
    let mut notes = Vec::new();
    let (team, unum) = path.and_then(agent_from_file_name).unwrap_or_else(|| {
        notes.push(
            "the file name does not say whose log it is (TEAM-UNUM.log): drawn as the left team's".into(),
        );
        ("agent".to_owned(), 0)
    });
    let side = match game {
        Some(g) if g.teams[1] == team && g.teams[0] != team => Side::Right,
        Some(g) if g.teams[0] == team => Side::Left,
        Some(g) => {
            notes.push(format!(
                "team {team} did not play in this match ({} vs {}): drawn as the left team",
                g.teams[0], g.teams[1]
            ));
            Side::Left
        }
        None => {
            notes.push(format!(
                "no game log read beside it: {team} is drawn as the left team (give the match's .rcg to place a right-side agent)"
            ));
            Side::Left
        }
    };
    let step = game.map_or(0.1, |g| g.server.simulator_step);
    (
        DebugLogOptions {
            team,
            unum,
            side,
            step,
        },
        notes,
    )
}
