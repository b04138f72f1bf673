//! The SSL game log the demo's game would have produced (`game.log`), so
//! the camera-video path of SSL logs is tested end to end against a known
//! truth: what the league's recorder would have written had ssl-vision
//! watched the demo's camera and a game controller refereed it.
//!
//! - **Vision** (60 Hz, camera 0): every robot and the ball of the
//!   simulation as detections, at the recorder's time = the demo log's
//!   time; with a geometry packet once a second: the Division B field and
//!   the demo camera as an ssl-vision camera model (focal length,
//!   principal point, orientation quaternion and translation exactly; its
//!   one radial term fitted to the demo lens, which has two, so the model
//!   matches the camera within [`camera_model`]'s reported error).
//! - **Referee** (10 Hz): the game's phases as commands (normal start,
//!   stop, ball placement with its target, force start), and the autoref's
//!   findings as game events while they stand: the ball leaving the field
//!   (over the touch or goal line, by the team that touched it last) and a
//!   robot too close to the ball during the stop.
//!
//! It fails with the demo's own error ([`super::DemoError`]) and the demo
//! (`mod.rs`) calls it, so the two files name each other.

use std::path::Path;

use super::DemoError;
use super::render::Camera;
use super::sim::{self, Phase, Run};
use super::world::{self, Team};
use crate::geom::Vec2;
use crate::ssl::events::{GameEvent, Value};
use crate::ssl::file::MessageType;
use crate::ssl::file::write::LogWriter;
use crate::ssl::packets::{
    BallSeen, CameraFrame, CameraModel, Command, FieldGeometry, Geometry, Referee, RobotSeen, Stage,
    Team as SslTeam, TeamInfo, Vision,
};

/// The file in the demo folder.
pub const SSL_FILE: &str = "game.log";

/// The referee sends this often (s).
const REFEREE_PERIOD: f64 = 0.1;

/// Game events stay listed this long after they are raised when play does
/// not restart sooner (s).
const EVENT_SPAN: f64 = 4.0;

fn ssl_team(t: Team) -> SslTeam {
    match t {
        Team::Yellow => SslTeam::Yellow,
        Team::Blue => SslTeam::Blue,
    }
}

/// The unit quaternion `[x, y, z, w]` of rotation matrix `r`.
fn quaternion(r: &[[f64; 3]; 3]) -> [f64; 4] {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [
            (r[2][1] - r[1][2]) / s,
            (r[0][2] - r[2][0]) / s,
            (r[1][0] - r[0][1]) / s,
            0.25 * s,
        ]
    } else if r[0][0] > r[1][1] && r[0][0] > r[2][2] {
        let s = (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt() * 2.0;
        [
            0.25 * s,
            (r[0][1] + r[1][0]) / s,
            (r[0][2] + r[2][0]) / s,
            (r[2][1] - r[1][2]) / s,
        ]
    } else if r[1][1] > r[2][2] {
        let s = (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt() * 2.0;
        [
            (r[0][1] + r[1][0]) / s,
            0.25 * s,
            (r[1][2] + r[2][1]) / s,
            (r[0][2] - r[2][0]) / s,
        ]
    } else {
        let s = (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt() * 2.0;
        [
            (r[0][2] + r[2][0]) / s,
            (r[1][2] + r[2][1]) / s,
            0.25 * s,
            (r[1][0] - r[0][1]) / s,
        ]
    };
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

/// ssl-vision's projection of floor point `p` with distortion `a`.
fn ssl_project(cam: &Camera, a: f64, p: [f64; 3]) -> Option<[f64; 2]> {
    let r = &cam.r;
    let c: Vec<f64> = (0..3)
        .map(|i| r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2] + cam.t[i])
        .collect();
    if c[2] <= 1e-9 {
        return None;
    }
    let (ux, uy) = (c[0] / c[2], c[1] / c[2]);
    let ru = ux.hypot(uy);
    // Solve a·rd³ + rd = ru by Newton's method from rd = ru.
    let mut rd = ru;
    if a > 0.0 && ru > 0.0 {
        for _ in 0..30 {
            let f = a * rd * rd * rd + rd - ru;
            rd -= f / (3.0 * a * rd * rd + 1.0);
        }
    }
    let s = if ru > 0.0 { rd / ru } else { 1.0 };
    let f = cam.k[0][0];
    Some([f * ux * s + cam.k[0][2], f * uy * s + cam.k[1][2]])
}

/// The demo camera as an ssl-vision camera model, and the largest distance
/// (pixels) between the two over the carpet: the model has one radial
/// term where the demo lens has two, so it is fitted.
pub fn camera_model(cam: &Camera) -> (CameraModel, f64) {
    let (hl, hw) = (
        world::FIELD_LENGTH / 2.0 + world::BOUNDARY,
        world::FIELD_WIDTH / 2.0 + world::BOUNDARY,
    );
    let grid: Vec<([f64; 3], [f64; 2])> = (0..=24)
        .flat_map(|i| (0..=16).map(move |j| (i, j)))
        .map(|(i, j)| {
            [
                -hl + 2.0 * hl * f64::from(i) / 24.0,
                -hw + 2.0 * hw * f64::from(j) / 16.0,
                0.0,
            ]
        })
        .filter_map(|p| Some((p, cam.project(p)?)))
        .collect();
    let worst = |a: f64| {
        grid.iter()
            .filter_map(|(p, px)| {
                let q = ssl_project(cam, a, *p)?;
                Some((q[0] - px[0]).hypot(q[1] - px[1]))
            })
            .fold(0.0f64, f64::max)
    };
    // The error is unimodal in `a` near the lens's first term: scan, then
    // narrow down.
    let (mut lo, mut hi) = (0.0f64, 0.5f64);
    for _ in 0..4 {
        let step = (hi - lo) / 50.0;
        let best = (0..=50)
            .map(|k| lo + step * f64::from(k))
            .min_by(|x, y| worst(*x).total_cmp(&worst(*y)))
            .unwrap_or(lo);
        (lo, hi) = ((best - step).max(0.0), best + step);
    }
    let a = (lo + hi) / 2.0;
    let model = CameraModel {
        camera_id: 0,
        focal_length: cam.k[0][0],
        principal_point: Vec2::new(cam.k[0][2], cam.k[1][2]),
        distortion: a,
        rotation: quaternion(&cam.r),
        translation: cam.t,
        derived_position: Some(cam.eye),
        image_size: Some([cam.width, cam.height]),
    };
    (model, worst(a))
}

/// Writes the SSL game log of `run`, filmed by `cam`, with the demo log's
/// clock (`epoch` + simulation time). Returns the camera model's largest
/// error in pixels.
pub fn write_ssl_log(run: &Run, cam: &Camera, path: &Path, epoch: f64) -> Result<f64, DemoError> {
    let io = |e| DemoError::Io {
        path: path.to_owned(),
        source: e,
    };
    let file = crate::files::TempFile::beside(path, None);
    let out = std::fs::File::create(file.path()).map_err(io)?;
    let mut w = LogWriter::new(std::io::BufWriter::new(out)).map_err(io)?;
    let (model, error) = camera_model(cam);
    let ns = |t: f64| ((epoch + t) * 1e9).round() as i64;
    let geometry = Geometry {
        field: FieldGeometry::division_b(),
        cameras: vec![model],
    };
    let mut next_geometry = f64::NEG_INFINITY;
    let mut next_referee = f64::NEG_INFINITY;
    let mut counter = 0u32;
    let mut command_time = epoch;
    let mut last_phase: Option<Phase> = None;
    let mut command = Command(2);
    let mut designated = None;
    for (k, snap) in run.snapshots.iter().enumerate() {
        let t = snap.t;
        let plan = run.plans.get(k);
        let phase = plan.map_or(Phase::Running, |p| p.phase);
        if last_phase != Some(phase) {
            counter += 1;
            command_time = epoch + t;
            (command, designated) = match (phase, plan.and_then(|p| p.placement)) {
                (Phase::Stop, _) => (Command(1), None),
                (Phase::BallPlacement, Some((i, target))) => {
                    let (team, _) = sim::robot_of(usize::from(i));
                    let c = if team == Team::Yellow { 16 } else { 17 };
                    (Command(c), Some(target))
                }
                (Phase::BallPlacement, None) => (Command(1), None),
                (Phase::Running, _) if last_phase.is_none() => (Command(2), None),
                (Phase::Running, _) => (Command(3), None),
            };
            last_phase = Some(phase);
            // A new state goes out at once.
            next_referee = t;
        }
        if t >= next_geometry {
            let v = Vision {
                detection: None,
                geometry: Some(geometry.clone()),
            };
            w.record(ns(t), MessageType::Vision, &v.encode()).map_err(io)?;
            next_geometry = t + 1.0;
        }
        let frame = CameraFrame {
            frame_number: k as u32,
            t_capture: epoch + t,
            t_sent: epoch + t,
            camera_id: 0,
            balls: vec![BallSeen {
                confidence: 1.0,
                pos: snap.ball.pos,
                z: Some(snap.ball.height),
            }],
            robots: snap
                .robots
                .iter()
                .map(|r| RobotSeen {
                    team: ssl_team(r.team),
                    id: Some(u32::from(r.id)),
                    pos: r.pos,
                    orientation: Some(r.heading),
                    confidence: 1.0,
                })
                .collect(),
        };
        let v = Vision {
            detection: Some(frame),
            geometry: None,
        };
        w.record(ns(t), MessageType::Vision, &v.encode()).map_err(io)?;
        if t >= next_referee {
            let r = referee(run, t, epoch, command, counter, command_time, designated);
            w.record(ns(t), MessageType::Referee, &r.encode()).map_err(io)?;
            next_referee = t + REFEREE_PERIOD;
        }
    }
    w.index().map_err(io)?;
    w.finish().map_err(io)?;
    file.commit(path).map_err(io)?;
    Ok(error)
}

/// The game controller's state at `t`.
fn referee(
    run: &Run,
    t: f64,
    epoch: f64,
    command: Command,
    counter: u32,
    command_time: f64,
    designated: Option<Vec2>,
) -> Referee {
    let team = |name: &str| TeamInfo {
        name: name.to_owned(),
        score: 0,
        red_cards: 0,
        yellow_card_times: Vec::new(),
        yellow_cards: 0,
        timeouts: 4,
        timeout_time: 300.0,
        goalkeeper: 0,
        foul_counter: Some(0),
        ball_placement_failures: Some(0),
        can_place_ball: Some(true),
        max_allowed_bots: Some(u32::from(world::TEAM_SIZE)),
    };
    let mut events = Vec::new();
    for (i, out) in run.outs.iter().enumerate() {
        let until = out.restart.unwrap_or(out.t + EVENT_SPAN);
        if out.t <= t && t < until {
            let over_goal_line = out.exit.x.abs() >= world::FIELD_LENGTH / 2.0 - 1.0;
            let name = if over_goal_line {
                "ball_left_field_goal_line"
            } else {
                "ball_left_field_touch_line"
            };
            let mut fields = vec![("location", Value::Point(out.exit))];
            if let Some(touch) = &out.last_touch {
                fields.insert(0, ("by_bot", Value::Bot(u32::from(touch.id))));
                fields.insert(0, ("by_team", Value::Team(Some(ssl_team(touch.team)))));
            }
            events.extend(GameEvent::new(name, &format!("out-{i}"), epoch + out.t, fields));
        }
    }
    for (i, c) in run.too_close.iter().enumerate() {
        if c.at <= t && t < c.at + EVENT_SPAN {
            let fields = vec![
                ("by_team", Value::Team(Some(ssl_team(c.team)))),
                ("by_bot", Value::Bot(u32::from(c.id))),
                ("location", Value::Point(c.robot)),
                ("distance", Value::Length(c.closest)),
            ];
            events.extend(GameEvent::new(
                "defender_too_close_to_kick_point",
                &format!("close-{i}"),
                epoch + c.at,
                fields,
            ));
        }
    }
    Referee {
        packet_time: Some(epoch + t),
        // Normal first half.
        stage: Stage(1),
        stage_time_left: Some(300.0 - t),
        command,
        command_counter: counter,
        command_time: Some(command_time),
        yellow: team("demo yellow"),
        blue: team("demo blue"),
        designated_position: designated,
        blue_on_positive_half: Some(false),
        next_command: None,
        game_events: events,
        action_time_left: None,
        status_message: None,
        source: Some("underlay demo".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_camera_model_matches_the_demo_camera() {
        let cam = Camera::demo(1280, 720).unwrap();
        let (model, worst) = camera_model(&cam);
        assert!(
            model.distortion > 0.0 && model.distortion < 0.2,
            "{}",
            model.distortion
        );
        assert!(worst < 1.5, "the ssl-vision model is {worst} px off");
        // The calibration underlay makes of the model agrees too.
        let c = crate::ssl::camera::calibration(&model).unwrap();
        for p in [[0.0, 0.0, 0.0], [4000.0, 2500.0, 0.0], [-4200.0, -2800.0, 0.0]] {
            let a = cam.project(p).unwrap();
            let b = c.project(Vec2::new(p[0], p[1])).unwrap();
            assert!((a[0] - b.x).hypot(a[1] - b.y) < 1.5, "{p:?}: {a:?} vs {b:?}");
        }
        // A quaternion round trip gives the rotation back.
        let r = crate::ssl::camera::rotation(quaternion(&cam.r)).unwrap();
        for (row, want) in r.iter().zip(&cam.r) {
            for (x, y) in row.iter().zip(want) {
                assert!((x - y).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn the_game_log_holds_the_game() {
        // The default demo's game: a ball out and a robot too close in the stop.
        let run = sim::simulate(super::super::DemoSpec::default().seed, 20.0);
        assert!(!run.outs.is_empty() && !run.too_close.is_empty());
        let cam = Camera::demo(640, 360).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SSL_FILE);
        write_ssl_log(&run, &cam, &path, 1_700_000_000.0).unwrap();
        let log = crate::formats::load_log(&path).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let (lo, hi) = log.time_range().unwrap();
        assert!(
            (lo - 1_700_000_000.0).abs() < 0.1 && hi > 1_700_000_005.0,
            "{lo} {hi}"
        );
        // Every robot of the simulation is drawn.
        let robots = log
            .entities
            .ids()
            .filter(|&e| {
                log.entities.name(e).starts_with("robots/") && log.entities.name(e).matches('/').count() == 2
            })
            .count();
        assert_eq!(robots, sim::ROBOTS);
        let cams = crate::ssl::camera::cameras_in(&path).unwrap();
        assert_eq!(cams.latest.len(), 1);
        // The autoref's findings are game events, each a persistent frame.
        let events: Vec<&str> = log
            .entities
            .ids()
            .map(|e| log.entities.name(e))
            .filter(|n| n.starts_with("referee/events/"))
            .collect();
        assert!(events.iter().any(|n| n.contains("ball_left_field")), "{events:?}");
        assert!(events.iter().any(|n| n.contains("too_close")), "{events:?}");
    }
}
