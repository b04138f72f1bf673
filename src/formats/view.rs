//! A rendered match seen through an agent's camera (`--agent-view l3`):
//! the agent's camera is found among the files read beside the match (a
//! session's logs) by the format table — the first whose format gives a
//! moving camera ([`Format::track`]) for that agent — read beside what the
//! match's own format provides (its monitor log, for the field and the
//! teams' sides). [`camera_of`] reads one file's camera (`underlay calib
//! agent`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::head::HeadBuf;
use super::table::{any_format, log_format};
use crate::calib::track::CameraTrack;
use crate::input::{AgentCamera, Companion, Format, ReadOptions};
use crate::log::LogError;

/// Why an agent's view cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum AgentViewError {
    #[error("'{0}' is not an agent: give a side and number (l3, r1, left:3) or a team and number (Alpha:1)")]
    Spec(String),
    #[error("no camera of agent {spec} among the logs ({found})")]
    NotFound { spec: String, found: String },
    #[error("{path}: a {format} gives no camera (an agent's perception log does)")]
    NoCamera { path: PathBuf, format: &'static str },
    #[error("{path}: not a file underlay reads")]
    Unknown { path: PathBuf },
    #[error("{path}: not the match a {format} is read beside")]
    NotBeside { path: PathBuf, format: &'static str },
    #[error(transparent)]
    Read(#[from] LogError),
}

/// Which agent: a side or a team name, and a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSpec {
    /// 0 left, 1 right; or a team's name.
    pub who: Who,
    pub unum: u32,
}

/// An agent's side or its team's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Who {
    Side(u8),
    Team(String),
}

impl std::str::FromStr for AgentSpec {
    type Err = AgentViewError;

    /// `l3`, `r1`, `left:3`, `right 1`, or `TEAM:3` (`Alpha:1`, `Alpha_1`).
    fn from_str(s: &str) -> Result<AgentSpec, AgentViewError> {
        let bad = || AgentViewError::Spec(s.to_owned());
        let t = s.trim();
        let digits = t.len() - t.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(bad());
        }
        let (head, number) = t.split_at(t.len() - digits);
        let unum: u32 = number.parse().map_err(|_| bad())?;
        let head = head.trim_end_matches([':', '_', '-', ' ', '/']);
        let who = match head.to_ascii_lowercase().as_str() {
            "l" | "left" => Who::Side(0),
            "r" | "right" => Who::Side(1),
            "" => return Err(bad()),
            _ => Who::Team(head.to_owned()),
        };
        Ok(AgentSpec { who, unum })
    }
}

impl AgentSpec {
    /// Whether `camera` is this agent's.
    pub fn matches(&self, camera: &AgentCamera) -> bool {
        camera.unum == Some(self.unum)
            && match &self.who {
                Who::Side(s) => camera.side == Some(*s),
                Who::Team(t) => camera.team.eq_ignore_ascii_case(t),
            }
    }
}

/// The camera of agent `spec` among `beside` (files other than `source`,
/// the match, whose format is `format`).
pub fn agent_camera(
    source: &Path,
    format: &Format,
    spec: &str,
    beside: &[PathBuf],
) -> Result<Arc<CameraTrack>, AgentViewError> {
    let want: AgentSpec = spec.parse()?;
    let mut companion: Option<Arc<Companion>> = None;
    let mut found = Vec::new();
    for path in beside.iter().filter(|p| p.as_path() != source) {
        // A file that cannot be opened or recognised is not a camera here;
        // reading it as a log says why.
        let Ok(head) = HeadBuf::of_file(path) else {
            continue;
        };
        let Some(reader) = log_format(&head.head(Some(path))).and_then(|f| f.track.map(|r| (f, r))) else {
            continue;
        };
        let (their, read) = reader;
        let given = if their.beside == Some(format.id) {
            if companion.is_none()
                && let Some(p) = format.provides
            {
                companion = Some((p.parse)(source, &ReadOptions::default())?);
            }
            companion.as_deref()
        } else {
            None
        };
        let camera = read(path, given)?;
        if want.matches(&camera) {
            return Ok(Arc::new(camera.track));
        }
        found.push(describe(&camera));
    }
    Err(AgentViewError::NotFound {
        spec: spec.to_owned(),
        found: if found.is_empty() {
            "no agent's log given: add its perception log with --log".to_owned()
        } else {
            format!("found {}", found.join(", "))
        },
    })
}

/// The camera the file at `path` gives (an agent's perception log), read
/// beside `beside` when given and its format is what `path`'s is read
/// beside (the match's monitor log: its field and teams).
pub fn camera_of(path: &Path, beside: Option<&Path>) -> Result<AgentCamera, AgentViewError> {
    let io = |e| AgentViewError::Read(LogError::io(path, e));
    let head = HeadBuf::of_file(path).map_err(io)?;
    let head = head.head(Some(path));
    let format = log_format(&head).ok_or_else(|| AgentViewError::Unknown {
        path: path.to_owned(),
    })?;
    let read = format.track.ok_or(AgentViewError::NoCamera {
        path: path.to_owned(),
        format: format.name,
    })?;
    let companion = match beside {
        Some(other) => {
            let theirs = HeadBuf::of_file(other).map_err(|e| AgentViewError::Read(LogError::io(other, e)))?;
            let provides = any_format(&theirs.head(Some(other)))
                .filter(|f| format.beside == Some(f.id))
                .and_then(|f| f.provides)
                .ok_or_else(|| AgentViewError::NotBeside {
                    path: other.to_owned(),
                    format: format.name,
                })?;
            Some((provides.parse)(other, &ReadOptions::default())?)
        }
        None => None,
    };
    Ok(read(path, companion.as_deref())?)
}

/// An agent as messages name it: `Alpha 1 (left)`.
fn describe(c: &AgentCamera) -> String {
    let side = match c.side {
        Some(0) => " (left)",
        Some(_) => " (right)",
        None => "",
    };
    let unum = c.unum.map_or_else(|| "?".to_owned(), |u| u.to_string());
    format!(
        "{} {unum}{side}",
        if c.team.is_empty() { "agent" } else { &c.team }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_named_by_side_or_team_and_number() {
        let p = |s: &str| s.parse::<AgentSpec>();
        assert_eq!(
            p("l3").unwrap(),
            AgentSpec {
                who: Who::Side(0),
                unum: 3
            }
        );
        assert_eq!(
            p("Right:11").unwrap(),
            AgentSpec {
                who: Who::Side(1),
                unum: 11
            }
        );
        assert_eq!(
            p("left 2").unwrap(),
            AgentSpec {
                who: Who::Side(0),
                unum: 2
            }
        );
        assert_eq!(
            p("Alpha_1").unwrap(),
            AgentSpec {
                who: Who::Team("Alpha".into()),
                unum: 1
            }
        );
        for bad in ["", "3", "l", "left:", "l99999999999"] {
            assert!(matches!(p(bad), Err(AgentViewError::Spec(_))), "{bad}");
        }
        let camera = AgentCamera {
            team: "Alpha".into(),
            side: Some(0),
            unum: Some(1),
            track: CameraTrack::new("Alpha 1", vec![], 120.0, 0.1),
        };
        assert!(p("l1").unwrap().matches(&camera));
        assert!(p("alpha:1").unwrap().matches(&camera));
        assert!(!p("r1").unwrap().matches(&camera));
        assert!(!p("l2").unwrap().matches(&camera));
        assert_eq!(describe(&camera), "Alpha 1 (left)");
    }
}
