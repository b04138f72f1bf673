//! An SSL game log as a video of its own: the robots and ball of every
//! tick (the tracker's, or the cameras' merged, as [`super::vislog`]
//! draws them) on the field of the log's geometry, rendered top-down by
//! [`crate::pitch`]. The log's own drawings (referee, events, trails) go
//! on top through the session, like any log over any video.
//!
//! Video time follows the recorder's clock from the first tick
//! ([`Pace::Clock`]); a frame's clock is the log time it shows.

use std::io::Read;
use std::path::Path;

use super::file::RecordReader;
use super::packets::{FieldGeometry, Team as SslTeam};
use super::vislog::{BLUE, Converter, YELLOW};
use crate::geom::Vec2;
use crate::log::ReadError;
use crate::pitch::{Body, Card, Field, Goal, Mark, Match, Pace, Snapshot, Team};
use crate::video::source::{FrameSource, OpenOptions, SourceError};

/// The kind of source, for messages.
const KIND: &str = "SSL game log";

/// Opens an SSL game log as a rendered match.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    crate::pitch::source::open_with(path, options, KIND, |path, _| read_match_file(path))
}

/// Reads the SSL game log at `path` (plain or gzip'ed) as a match.
pub fn read_match_file(path: &Path) -> Result<Match, crate::log::LogError> {
    let read = |path: &Path| -> Result<Match, ReadError> {
        let mut s = crate::bounded::Stream::open(path, super::MAX_INPUT)
            .map_err(|error| ReadError::Io { offset: 0, error })?;
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let m = read_match(&mut s.reader, s.size.gzip, name);
        s.check()?;
        m
    };
    read(path).map_err(|error| crate::log::LogError::Read {
        path: path.to_owned(),
        error,
    })
}

/// Reads an SSL game log (from its header on) as a match named `name`.
pub fn read_match(r: impl Read, decompressed: bool, name: String) -> Result<Match, ReadError> {
    let mut records = RecordReader::new(r, decompressed)?;
    let mut conv = Converter::with_scene();
    while let Some(rec) = records.next_record()? {
        conv.record(&rec);
    }
    let scene = conv.take_scene().unwrap_or_default();
    let geometry = scene.field.unwrap_or_else(FieldGeometry::division_b);
    let radius = scene.robot_radius;
    let ball_radius = geometry.ball_radius.unwrap_or(21.5);
    let mut ticks = scene.ticks;
    // The recorder's threads may put neighbouring records a millisecond
    // out of order.
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let snapshots = ticks
        .into_iter()
        .filter(|t| t.0.is_finite())
        .map(|(clock, robots, ball)| Snapshot {
            clock,
            bodies: robots
                .iter()
                .map(|r| Body {
                    team: match r.team {
                        SslTeam::Yellow => 0,
                        SslTeam::Blue => 1,
                    },
                    number: r.id,
                    position: r.pos,
                    radius,
                    heading: r.orientation,
                    gaze: None,
                    goalie: false,
                    card: Card::None,
                    faded: false,
                })
                .collect(),
            ball: ball.map(|b| (b, ball_radius)),
            caption: String::new(),
        })
        .collect();
    let (yellow, blue) = scene
        .team_names
        .unwrap_or_else(|| ("yellow".to_owned(), "blue".to_owned()));
    Ok(Match {
        name,
        field: field_of(&geometry),
        teams: [
            Team {
                name: yellow,
                color: YELLOW,
            },
            Team {
                name: blue,
                color: BLUE,
            },
        ],
        snapshots,
        pace: Pace::Clock,
    })
}

/// The pitch of an SSL geometry: its own lines and arcs (or the standard
/// ones of its size when it names none), goals, and the boundary as margin.
fn field_of(g: &FieldGeometry) -> Field {
    let mut marks: Vec<Mark> = g
        .lines
        .iter()
        .map(|l| Mark::Segment { a: l.p1, b: l.p2 })
        .chain(g.arcs.iter().map(|a| Mark::Arc {
            center: a.center,
            radius: a.radius,
            start: a.a1,
            sweep: a.a2 - a.a1,
        }))
        .collect();
    let hl = g.length / 2.0;
    if marks.is_empty() {
        marks = Field::outline(g.length, g.width);
        marks.push(Mark::Arc {
            center: Vec2::ZERO,
            radius: g.center_circle_radius.unwrap_or(500.0),
            start: 0.0,
            sweep: std::f64::consts::TAU,
        });
    }
    let line_width = g
        .lines
        .first()
        .map(|l| l.thickness)
        .or(g.line_thickness)
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(10.0);
    Field {
        unit: "mm".to_owned(),
        length: g.length,
        width: g.width,
        margin: g.boundary.max(0.0),
        line_width,
        marks,
        goals: [-1.0, 1.0]
            .into_iter()
            .map(|s| Goal {
                mouth: Vec2::new(s * hl, 0.0),
                width: g.goal_width,
                depth: s * g.goal_depth,
            })
            .collect(),
    }
}
