//! 2D-league files wherever underlay reads a log (`log info|dump|select|convert`,
//! sessions, the viewer): a game log becomes its sensor models
//! ([`super::sensors`]), an agent's debug log its drawings and messages
//! ([`super::dlog`]), a world model (`.dcl`) what the agent believed
//! ([`super::dcl`]). Read beside a game log (a session's logs, `--log`
//! over a match), an agent's files take their side and the simulator
//! step from it, and world models their errors against it; read alone,
//! a left-side agent and a 100 ms step are assumed, with a warning.

use std::path::Path;

use super::dlog::{DebugLogOptions, agent_from_file_name};
use super::game::{Game, GameError};
use super::sensors::{SensorOptions, sensor_log};
use super::{Side, dcl, dlog};
use crate::log::{LoadWarning, Log};

/// Which 2D-league file a log was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Game,
    DebugLog,
    WorldModel,
}

/// Recognises a 2D-league file from its first bytes (decompressed).
pub fn sniff(prefix: &[u8]) -> Option<Kind> {
    if super::game::sniff(prefix) {
        Some(Kind::Game)
    } else if dcl::sniff(prefix) {
        Some(Kind::WorldModel)
    } else if dlog::sniff(prefix) {
        Some(Kind::DebugLog)
    } else {
        None
    }
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

/// Reads the (decompressed) bytes of a file [`sniff`] recognised.
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

/// Why a game log file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read the file")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: more than {limit} bytes once decompressed")]
    TooLarge { path: std::path::PathBuf, limit: u64 },
    #[error("{path}")]
    Game {
        path: std::path::PathBuf,
        #[source]
        source: GameError,
    },
}

/// The largest game log read (decompressed): 1 GiB, far above a whole
/// match's 22 MB.
pub const MAX_GAME_LOG: u64 = 1 << 30;

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

/// Reads the game log at `path` (plain or gzip'ed).
pub fn load_game(path: &Path) -> Result<Game, LoadError> {
    use crate::sim3d::input::{ReadLimited, read_limited};
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let bytes = read_limited(file, MAX_GAME_LOG).map_err(|e| match e {
        ReadLimited::Io(e) => io(e),
        ReadLimited::Gzip { error, .. } => io(error),
        ReadLimited::TooLarge => LoadError::TooLarge {
            path: path.to_owned(),
            limit: MAX_GAME_LOG,
        },
    })?;
    super::read_game(&bytes).map_err(|source| LoadError::Game {
        path: path.to_owned(),
        source,
    })
}

/// The first bytes of the file at `path` (decompressed when gzip'ed);
/// `None` for a file that cannot be read (its reader then says why).
fn head_of(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut raw = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut raw)
        .ok()?;
    if !crate::sim3d::input::is_gzip(&raw) {
        return Some(raw);
    }
    let mut head = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    // A damaged stream: what came out before the damage.
    let _ = flate2::read::MultiGzDecoder::new(file)
        .take(4096)
        .read_to_end(&mut head);
    Some(head)
}

/// The 2D-league kind of the file at `path`, from its first bytes.
pub fn kind_of_file(path: &Path) -> Option<Kind> {
    sniff(&head_of(path)?)
}

/// The whole (decompressed) file, bounded.
fn read_bytes(path: &Path) -> Result<Vec<u8>, crate::log::LogError> {
    use crate::sim3d::input::{ReadLimited, read_limited};
    let io = |e| crate::log::LogError::Io {
        path: path.to_owned(),
        error: e,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    read_limited(file, MAX_GAME_LOG).map_err(|e| match e {
        ReadLimited::Io(e) | ReadLimited::Gzip { error: e, .. } => io(e),
        ReadLimited::TooLarge => io(std::io::Error::other(format!(
            "more than {MAX_GAME_LOG} bytes once decompressed"
        ))),
    })
}

/// Reads `paths` as logs, in order: the 2D-league files among them with
/// the context of the match's game log when one is there (sides, step,
/// errors against the truth; the game log itself parsed once), the 3D
/// agents' files with the match's monitor log when one is there (their
/// errors against it), the rest with [`crate::log::load`].
pub fn load_all(
    paths: &[std::path::PathBuf],
    sensors: SensorOptions,
) -> Result<Vec<Log>, crate::log::LogError> {
    let kinds: Vec<Option<Kind>> = paths.iter().map(|p| kind_of_file(p)).collect();
    let bad = |path: &Path, e: Error| crate::log::LogError::Read {
        path: path.to_owned(),
        error: crate::log::ReadError::Sim2d(e),
    };
    let mut game = None;
    if let Some(i) = kinds.iter().position(|k| *k == Some(Kind::Game)) {
        game = Some(load_game_shared(&paths[i]).map_err(|e| match e {
            LoadError::Game { source, .. } => bad(&paths[i], source.into()),
            LoadError::Io { source, .. } => crate::log::LogError::Io {
                path: paths[i].clone(),
                error: source,
            },
            LoadError::TooLarge { limit, .. } => crate::log::LogError::Io {
                path: paths[i].clone(),
                error: std::io::Error::other(format!("more than {limit} bytes once decompressed")),
            },
        })?);
    }
    let kinds3d: Vec<Option<crate::sim3d::logs::Kind>> = paths
        .iter()
        .zip(&kinds)
        .map(|(p, k)| if k.is_some() { None } else { kind3d_of_file(p) })
        .collect();
    let mut monitor = None;
    let mut monitor_at = None;
    if let Some(i) = kinds3d
        .iter()
        .position(|k| *k == Some(crate::sim3d::logs::Kind::Monitor))
        && kinds3d.iter().any(|k| {
            matches!(
                k,
                Some(crate::sim3d::logs::Kind::Perception | crate::sim3d::logs::Kind::RoboViz)
            )
        })
    {
        let bytes = read_bytes(&paths[i])?;
        let bad3 = |e: crate::sim3d::logs::Error| crate::log::LogError::Read {
            path: paths[i].clone(),
            error: crate::log::ReadError::Sim3d(e),
        };
        monitor = Some(crate::sim3d::monitor::parse(&bytes).map_err(|e| bad3(e.into()))?);
        monitor_at = Some(i);
    }
    let cx = Context {
        game: game.as_deref(),
        sensors,
    };
    let mut game_drawn = false;
    paths
        .iter()
        .zip(kinds)
        .zip(kinds3d)
        .enumerate()
        .map(|(i, ((path, kind), kind3d))| match (kind, cx.game) {
            (Some(Kind::Game), Some(g)) if !game_drawn => {
                game_drawn = true;
                Ok(game_log(g, &sensors))
            }
            (Some(k @ (Kind::DebugLog | Kind::WorldModel)), Some(_)) => {
                let bytes = read_bytes(path)?;
                read(k, &bytes, Some(path), &cx).map_err(|e| bad(path, e))
            }
            (Some(Kind::Game), _) => {
                let bytes = read_bytes(path)?;
                read(Kind::Game, &bytes, Some(path), &cx).map_err(|e| bad(path, e))
            }
            _ => match (&monitor, kind3d) {
                (Some(m), Some(crate::sim3d::logs::Kind::Monitor)) if monitor_at == Some(i) => {
                    let mut log = crate::sim3d::render::ball_trail_log(m);
                    log.warnings.extend(m.warnings.iter().map(|w| LoadWarning {
                        offset: None,
                        frame: None,
                        message: w.to_string(),
                    }));
                    Ok(log)
                }
                (
                    Some(m),
                    Some(k @ (crate::sim3d::logs::Kind::Perception | crate::sim3d::logs::Kind::RoboViz)),
                ) => {
                    let bytes = read_bytes(path)?;
                    crate::sim3d::logs::read_with(k, &bytes, Some(path), Some(m)).map_err(|e| {
                        crate::log::LogError::Read {
                            path: path.clone(),
                            error: crate::log::ReadError::Sim3d(e),
                        }
                    })
                }
                _ => crate::log::load(path),
            },
        })
        .collect()
}

/// The 3D-league kind of the file at `path`, from its first bytes.
fn kind3d_of_file(path: &Path) -> Option<crate::sim3d::logs::Kind> {
    crate::sim3d::logs::sniff(&head_of(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(dir: &str, name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(dir)
            .join(name)
    }

    /// Primitives of entities whose name ends with `suffix`.
    fn count(log: &Log, suffix: &str) -> usize {
        log.primitives
            .iter()
            .filter(|p| log.entities.name(p.entity).ends_with(suffix))
            .count()
    }

    #[test]
    fn an_agent_read_beside_its_match_is_placed_by_it() {
        // 3D: beside the monitor log, what the agent saw gets its errors
        // against where things really were.
        let agent = data("sim3d", "agent_Alpha_1.log.gz");
        let monitor = data("sim3d", "monitor.rsmp.log.gz");
        let alone = load_all(std::slice::from_ref(&agent), SensorOptions::default()).unwrap();
        let both = load_all(&[monitor, agent], SensorOptions::default()).unwrap();
        assert_eq!(both.len(), 2);
        assert!(count(&both[0], "ball/trail") > 0);
        assert!(
            count(&both[1], "/errors") > count(&alone[0], "/errors"),
            "{} vs {}",
            count(&both[1], "/errors"),
            count(&alone[0], "/errors")
        );
        // 2D: beside the game log, a right-side agent is not guessed left.
        let game = data("sim2d", "match4.rcg.gz");
        let q9 = data("sim2d", "HELIOS_Q-9.log.gz");
        let alone = load_all(std::slice::from_ref(&q9), SensorOptions::default()).unwrap();
        assert!(alone[0].warnings.iter().any(|w| w.message.contains("left team")));
        let both = load_all(&[game, q9], SensorOptions::default()).unwrap();
        assert!(!both[1].warnings.iter().any(|w| w.message.contains("left team")));
        assert!(count(&both[0], "/view") > 0);
    }
}
