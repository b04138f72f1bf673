//! 3D-league files read as visualization logs, wherever underlay reads a
//! log (`log info|dump|select|convert`, the viewer): an agent's perception
//! log becomes what it saw, placed in the world ([`place`]);
//! a RoboViz recording becomes its drawings ([`rvd`]).

use std::path::Path;

use crate::log::{LoadWarning, Log};

use super::{ParseError, perception, place, rvd};

/// Which 3D-league file a log was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Perception,
    RoboViz,
    Monitor,
}

/// Recognises a 3D-league file from its first bytes (up to 4 KiB, after
/// decompression).
pub fn sniff(prefix: &[u8]) -> Option<Kind> {
    if rvd::sniff(prefix) {
        Some(Kind::RoboViz)
    } else if perception::sniff(prefix) {
        Some(Kind::Perception)
    } else if super::monitor::sniff(prefix).is_some() {
        Some(Kind::Monitor)
    } else {
        None
    }
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

/// Reads the (decompressed) bytes of a file [`sniff`] recognised; `path`
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
            let log = place::to_log(&placed, &p, monitor);
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
            let (records, mut w) = rvd::read_records(bytes)?;
            let (log, _, w2) = rvd::to_log(&records, monitor);
            w.extend(w2);
            (log, w)
        }
        Kind::Monitor => {
            let m = super::monitor::parse(bytes)?;
            let w = m.warnings.clone();
            (super::render::ball_trail_log(&m), w)
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
