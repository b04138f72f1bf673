//! A 3D-league monitor log as a video of its own: every frame's robots
//! (position, torso heading, each model at its own size:
//! [`super::robots`]) and ball on the pitch of the log's `ge`
//! geometry, rendered top-down by [`crate::pitch`], with the score, play
//! mode and game clock as caption. Video time follows the simulation time
//! ([`Pace::Clock`]), the clock the agents' perception logs share.
//!
//! The monitor log is also read as a log of its own ([`ball_trail_log`]):
//! the ball's track over the last second, so a replay shows where the
//! ball came from even with no agent's log loaded.

use std::path::Path;

use super::field::FieldGeometry;
use super::monitor::{self, MonitorLog};
use crate::geom::Vec2;
use crate::log::{
    DisplayHints, FrameTime, Header, Log, Primitive, Rgba, Shape, Style, ThicknessUnit, TimeUnit,
};
use crate::pitch::{Body, Card, Field, Goal, Mark, Match, Pace, Snapshot, Team};
use crate::video::source::{FrameSource, OpenOptions, SourceError};

/// The kind of source, for messages.
const KIND: &str = "3D monitor log";

/// The ball's trail covers this long (s).
pub const TRAIL_SECONDS: f64 = 1.0;

/// Left and right team colours.
const LEFT: Rgba = Rgba::from_rgb(0x3070ff);
const RIGHT: Rgba = Rgba::from_rgb(0xff4040);

/// Opens a 3D monitor log as a rendered match.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    crate::pitch::source::open_with(path, options, KIND, |path, name| {
        monitor::load(path).map(|log| to_match(&log, name))
    })
}

/// The match a monitor log shows.
pub fn to_match(log: &MonitorLog, name: String) -> Match {
    let team = |i: usize, color| Team {
        name: log.teams.get(i).map_or_else(String::new, |t| t.name.clone()),
        color,
    };
    let ball_radius = log.geometry.ball_radius;
    let mut last = f64::NEG_INFINITY;
    let snapshots = log
        .frames
        .iter()
        // Frames out of order or without a time cannot be played.
        .filter(|f| {
            let ok = f.time.is_finite() && f.time >= last;
            if ok {
                last = f.time;
            }
            ok
        })
        .map(|f| {
            let bodies = log
                .frame_robots(f)
                .iter()
                .map(|r| {
                    let p = r.position();
                    Body {
                        team: u8::from(r.team > 0),
                        number: r.unum,
                        position: Vec2::new(p[0], p[1]),
                        radius: r.model().radius,
                        heading: Some(r.heading()).filter(|h| h.is_finite()),
                        gaze: None,
                        goalie: r.unum == 1,
                        card: Card::None,
                        faded: false,
                    }
                })
                .collect();
            let names = |i: usize| log.teams.get(i).map_or("", |t| t.name.as_str());
            let mut caption = format!("{} {}:{} {}", names(0), f.score[0], f.score[1], names(1));
            if let Some(pm) = log.play_mode_name(f) {
                caption.push_str(&format!(" · {pm}"));
            }
            if let Some(t) = f.game_time.filter(|t| t.is_finite()) {
                caption.push_str(&format!(" · {t:.1} s"));
            }
            Snapshot {
                clock: f.time,
                bodies,
                ball: f.ball.map(|b| (Vec2::new(b[0], b[1]), ball_radius)),
                caption: caption.trim().to_owned(),
            }
        })
        .collect();
    Match {
        name,
        field: field_of(&log.geometry),
        teams: [team(0, LEFT), team(1, RIGHT)],
        snapshots,
        pace: Pace::Clock,
    }
}

/// The pitch of a 3D-league geometry: lines, centre circle, goalie and
/// penalty areas, penalty marks and goals.
fn field_of(g: &FieldGeometry) -> Field {
    let hl = g.length / 2.0;
    let p = Vec2::new;
    let mut marks = Field::outline(g.length, g.width);
    marks.push(Mark::Spot {
        center: Vec2::ZERO,
        radius: g.line_width,
    });
    if g.center_circle_radius > 0.0 {
        marks.push(Mark::Arc {
            center: Vec2::ZERO,
            radius: g.center_circle_radius,
            start: 0.0,
            sweep: std::f64::consts::TAU,
        });
    }
    for s in [-1.0, 1.0] {
        for (d, w) in [
            (g.goalie_area_length, g.goalie_area_width),
            (g.penalty_area_length, g.penalty_area_width),
        ] {
            if d > 0.0 && w > 0.0 {
                let (x0, x1) = (s * hl, s * (hl - d));
                marks.push(Mark::Segment {
                    a: p(x0, -w),
                    b: p(x1, -w),
                });
                marks.push(Mark::Segment {
                    a: p(x1, -w),
                    b: p(x1, w),
                });
                marks.push(Mark::Segment {
                    a: p(x1, w),
                    b: p(x0, w),
                });
            }
        }
        if g.penalty_spot_distance > 0.0 {
            marks.push(Mark::Spot {
                center: p(s * (hl - g.penalty_spot_distance), 0.0),
                radius: g.line_width,
            });
        }
    }
    Field {
        unit: "m".to_owned(),
        length: g.length,
        width: g.width,
        margin: (g.length.min(g.width) * 0.05).max(g.goal_depth + 0.5),
        line_width: g.line_width,
        marks,
        goals: [-1.0, 1.0]
            .into_iter()
            .map(|s| Goal {
                mouth: p(s * hl, 0.0),
                width: g.goal_width,
                depth: s * g.goal_depth,
            })
            .collect(),
    }
}

/// The monitor log's own drawings: the ball's trail over the last
/// [`TRAIL_SECONDS`] at every frame (entity `ball/trail`, level 1).
pub fn ball_trail_log(log: &MonitorLog) -> Log {
    trail_frames(log, |n| 0..n)
}

/// The ball's trail at the newest frame alone, as [`ball_trail_log`]
/// draws it there (a live monitor connection's, drawn as each message
/// comes); empty when that frame has no ball.
pub fn ball_trail_now(log: &MonitorLog) -> Log {
    if log.frames.last().is_none_or(|f| f.ball.is_none()) {
        return trail_frames(log, |_| 0..0);
    }
    trail_frames(log, |n| n.saturating_sub(1)..n)
}

/// The trail at the frames `which` picks of those with a ball.
fn trail_frames(log: &MonitorLog, which: impl FnOnce(usize) -> std::ops::Range<usize>) -> Log {
    let mut out = Log::new();
    out.header = Header {
        name: "3D monitor log".into(),
        time_unit: TimeUnit::RelativeSeconds,
        world_unit: "m".into(),
        hints: DisplayHints::default(),
    };
    let entity = out.entities.intern("ball/trail");
    let style = Style {
        color: Rgba::from_rgb(0xffffff).with_alpha(0xb0),
        fill: None,
        thickness: 2.0,
        unit: ThicknessUnit::Pixels,
    };
    let track: Vec<(f64, Vec2)> = log
        .frames
        .iter()
        .filter_map(|f| Some((f.time, f.ball.map(|b| Vec2::new(b[0], b[1]))?)))
        .filter(|(t, p)| t.is_finite() && p.is_finite())
        .collect();
    for i in which(track.len()) {
        let t = track[i].0;
        // Frames come in time order: the trail starts at the first within
        // its span.
        let from = track[..i].partition_point(|&(s, _)| s < t - TRAIL_SECONDS);
        let vertices: Box<[Vec2]> = track[from..=i].iter().map(|&(_, p)| p).collect();
        let prims = (vertices.len() > 1).then_some(Primitive {
            shape: Shape::Polygon {
                vertices,
                closed: false,
            },
            style,
            entity,
            level: 1,
        });
        out.push_frame(FrameTime::Instant(t), prims);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pitch::{MatchSource, RenderOptions};
    use std::sync::Arc;

    fn fixture() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim3d")
    }

    #[test]
    fn the_monitor_fixture_renders_with_robots_and_ball() {
        let dir = fixture();
        let Some(path) = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_string_lossy().contains("monitor"))
        else {
            panic!("no monitor fixture in {}", dir.display());
        };
        let log = monitor::load(&path).unwrap();
        let m = to_match(&log, "m".into());
        assert!(!m.snapshots.is_empty());
        assert!(
            m.snapshots
                .iter()
                .any(|s| !s.bodies.is_empty() && s.ball.is_some())
        );
        assert!(m.snapshots.windows(2).all(|w| w[0].clock <= w[1].clock));
        let mut src = MatchSource::new(
            Arc::new(m),
            &RenderOptions {
                width: 320,
                height: 200,
                ..RenderOptions::default()
            },
        )
        .unwrap();
        // 25 pictures a second from a monitor every 0.04 s.
        assert!((src.info().fps - 25.0).abs() < 1e-6, "{}", src.info().fps);
        let f = src.next_frame().unwrap().unwrap();
        assert!(f.mask.is_some() && f.clock.is_some());
        let trail = ball_trail_log(&log);
        assert_eq!(
            trail.frames.len(),
            log.frames.iter().filter(|f| f.ball.is_some()).count()
        );
        // Live, each message's trail is the file's at that frame.
        let mut growing = log.clone();
        growing.frames.clear();
        let mut now = Vec::new();
        for f in &log.frames {
            growing.frames.push(f.clone());
            let n = ball_trail_now(&growing);
            now.extend(
                n.frames
                    .iter()
                    .map(|fr| (fr.time, n.frame_primitives(fr).to_vec())),
            );
        }
        let whole: Vec<_> = trail
            .frames
            .iter()
            .map(|fr| (fr.time, trail.frame_primitives(fr).to_vec()))
            .collect();
        assert_eq!(now, whole);
    }
}
