//! 3D-league files as the format table reads them (their lines:
//! [`PERCEPTION`], [`ROBOVIZ`], [`MONITOR`]): an agent's perception log
//! becomes what it saw, placed in the world ([`place`]); a RoboViz
//! recording becomes its drawings ([`rvd`]); a monitor log the ball's
//! trail and a rendered match. Read beside the match's monitor log, what
//! an agent saw is drawn with its error against where things were. A
//! perception log also gives its agent's head camera ([`super::camera`]),
//! which a rendered match can be seen through.

use std::path::Path;
use std::sync::Arc;

use crate::input::{Companion, Format, Head, LogReader, Provides, ReadContext};
use crate::log::{LoadWarning, Log, LogError, ReadError};

use super::input::{MAX_AGENT_LOG, MAX_MONITOR};
use super::monitor::MonitorLog;
use super::{ParseError, perception, place, rvd};

/// The format table's line for RoboViz recordings (`.rvd`).
pub const ROBOVIZ: Format = Format {
    log: Some(LogReader::Whole(|bytes, cx| {
        read_beside(Kind::RoboViz, bytes, cx)
    })),
    beside: Some("rsmp"),
    max_input: MAX_AGENT_LOG,
    ..Format::new(
        "rvd",
        "RoboViz drawing recording",
        "a RoboViz recording (its header line)",
        "*.rvd[.gz]",
        |h: &Head<'_>| rvd::sniff(h.bytes),
    )
};

/// The format table's line for 3D agents' perception logs.
pub const PERCEPTION: Format = Format {
    log: Some(LogReader::Whole(|bytes, cx| {
        read_beside(Kind::Perception, bytes, cx)
    })),
    beside: Some("rsmp"),
    track: Some(super::camera::read_agent_camera),
    max_input: MAX_AGENT_LOG,
    ..Format::new(
        "perception3d",
        "3D agent perception log (what it saw, placed)",
        "a 3D-league perception log (a first line of perceptors)",
        "agent_TEAM_UNUM.log[.gz]",
        |h: &Head<'_>| perception::sniff(h.bytes),
    )
};

/// The format table's line for 3D monitor logs: the ball's trail as a
/// log, the match rendered, and the truth its agents' files are drawn
/// against.
pub const MONITOR: Format = Format {
    log: Some(LogReader::Whole(|bytes, cx| {
        read_beside(Kind::Monitor, bytes, cx)
    })),
    source: Some(super::render::open),
    provides: Some(Provides {
        parse: |path, _| {
            let bytes = super::input::read_file(path, MAX_MONITOR).map_err(|e| load_error(path, e))?;
            let monitor: Arc<Companion> =
                Arc::new(super::monitor::parse(&bytes).map_err(|e| LogError::Read {
                    path: path.to_owned(),
                    error: ReadError::other(Error::from(e)),
                })?);
            Ok(monitor)
        },
        log: |monitor, _| match monitor.downcast_ref::<MonitorLog>() {
            Some(m) => monitor_log(m),
            None => Log::new(),
        },
    }),
    max_input: MAX_MONITOR,
    ..Format::new(
        "rsmp",
        "3D monitor log (the ball's trail)",
        "a 3D monitor log (\"((RSMP\", or SimSpark's \"(RSG\"/\"(RDS\")",
        "*.rsmp.log[.gz], *.rcs",
        |h: &Head<'_>| super::monitor::sniff(h.bytes).is_some(),
    )
};

/// A 3D-league file that could not be loaded, as the format table says it.
pub fn load_error(path: &Path, e: super::LoadError) -> LogError {
    match e {
        super::LoadError::Io { error, .. } => LogError::io(path, error),
        super::LoadError::Gzip { offset, error, .. } => LogError::io(
            path,
            std::io::Error::other(format!(
                "gzip data corrupt after {offset} decompressed bytes: {error}"
            )),
        ),
        super::LoadError::TooLarge { source, .. } => LogError::Read {
            path: path.to_owned(),
            error: ReadError::from(source),
        },
        super::LoadError::Parse { error, .. } => LogError::Read {
            path: path.to_owned(),
            error: ReadError::other(Error::from(error)),
        },
    }
}

/// A perception log or recording, beside the match's monitor log when the
/// format table read one.
fn read_beside(kind: Kind, bytes: &[u8], cx: &ReadContext<'_>) -> Result<Log, ReadError> {
    let monitor = cx.beside.and_then(|c| c.downcast_ref::<MonitorLog>());
    read_with(kind, bytes, cx.path, monitor).map_err(ReadError::other)
}

/// A monitor log's own log: its ball's trail, with its reader's warnings.
fn monitor_log(m: &MonitorLog) -> Log {
    let mut log = super::render::ball_trail_log(m);
    log.skipped = m.skipped;
    log.warnings.extend(m.warnings.iter().map(|w| LoadWarning {
        offset: None,
        frame: None,
        message: w.to_string(),
    }));
    log
}

/// Which 3D-league file a log was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Perception,
    RoboViz,
    Monitor,
}

/// Why a 3D-league file could not be read as a log.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Rvd(#[from] rvd::RvdError),
}

/// The agent a perception log's file name names, as the recorders name
/// them: `…<team>_<number>` before the extensions (`agent_Alpha_1.log.gz`
/// → Alpha 1).
pub fn agent_from_file_name(path: &Path) -> Option<(String, u32)> {
    let name = path.file_name()?.to_str()?;
    let stem = name.split('.').next()?;
    let mut parts = stem.rsplit(['_', '-']);
    let unum: u32 = parts.next()?.parse().ok()?;
    let team = parts.next().filter(|t| !t.is_empty())?;
    Some((team.to_owned(), unum))
}

/// Reads the (decompressed) bytes of a file the format table recognised
/// as `kind`; `path`
/// is the file's, when there is one.
pub fn read(kind: Kind, bytes: &[u8], path: Option<&Path>) -> Result<Log, Error> {
    read_with(kind, bytes, path, None)
}

/// Like [`read`], with the match's monitor log read beside it: what an
/// agent saw is drawn with its error to where each object really was.
pub fn read_with(
    kind: Kind,
    bytes: &[u8],
    path: Option<&Path>,
    monitor: Option<&super::monitor::MonitorLog>,
) -> Result<Log, Error> {
    let (mut log, warnings) = match kind {
        Kind::Perception => {
            let p = perception::parse(bytes)?;
            let opts = place::PlaceOptions {
                agent: if p.unum.is_some() {
                    None
                } else {
                    path.and_then(agent_from_file_name)
                },
                ..place::PlaceOptions::default()
            };
            let placed = place::place(&p, monitor, &opts);
            let mut log = place::to_log(&placed, &p, monitor);
            log.skipped = p.skipped;
            let mut w = p.warnings.clone();
            if placed.stats.unplaced > 0 {
                w.push(super::Warning {
                    line: 0,
                    message: format!(
                        "{} of {} vision messages not drawn: too few markers and no body pose to place them",
                        placed.stats.unplaced, placed.stats.views
                    ),
                });
            }
            (log, w)
        }
        Kind::RoboViz => {
            let (records, mut w, skipped) = rvd::read_records_counting(bytes)?;
            let (mut log, _, w2) = rvd::to_log(&records, monitor);
            log.skipped = skipped;
            w.extend(w2);
            (log, w)
        }
        Kind::Monitor => {
            let m = super::monitor::parse(bytes)?;
            let w = m.warnings.clone();
            let mut log = super::render::ball_trail_log(&m);
            log.skipped = m.skipped;
            (log, w)
        }
    };
    log.warnings.extend(warnings.into_iter().map(|w| LoadWarning {
        offset: None,
        frame: None,
        message: w.to_string(),
    }));
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_name_agents() {
        let a = |p: &str| agent_from_file_name(Path::new(p));
        assert_eq!(a("logs/agent_Alpha_1.log.gz"), Some(("Alpha".into(), 1)));
        assert_eq!(a("Bravo-11.txt"), Some(("Bravo".into(), 11)));
        assert_eq!(a("perception.log"), None);
        assert_eq!(a("_3.log"), None);
    }
}
