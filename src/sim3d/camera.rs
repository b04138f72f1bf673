//! An agent's head camera as a full camera: the pose [`place`]
//! finds for each vision message ([`super::pose`]: Horn's method on the
//! markers seen, else the torso and head chain), turned into OpenCV's
//! axes, with the simulator's field of view, as a [`CameraTrack`] over
//! the perception log's times. A rendered match seen through it
//! (`--agent-view`) shows the pitch as the agent's camera saw it.
//!
//! **Intrinsics.** SimSpark's vision perceptor (the restricted one, the
//! default since 0.5, which the Nao carries at the centre of its head)
//! limits the field of view to 120° (`seeds/simspark-perceptors.txt`,
//! "Restricted Vision Perceptor"); rcssservermj reports what lies within
//! ±60° of azimuth and ±60° of inclination (`testdata/sim3d/README.md`,
//! "The vision model of this server"). Neither has pixels, so the camera
//! is a pinhole whose picture's larger side spans [`FOV_DEG`] = 120°,
//! square pixels, the principal point in the middle and no distortion: a
//! 1280 × 720 picture spans 120° across and 88.5° up and down.
//!
//! **Between vision messages** (every 0.04 s in rcssservermj, 0.06 s in
//! SimSpark) the camera is interpolated between the two messages' poses
//! (position linearly, rotation along the shortest turn), when they are at
//! most [`HOLD`] apart; after the last message, or across a longer gap, the
//! last pose is held for `HOLD`; before the first message and beyond a
//! hold the camera is not known.
//!
//! The agent's camera frame (x forward, y left, z up: [`Pose`]) becomes
//! OpenCV's (x right, y down, z forward): right = −left, down = −up.

use std::path::Path;

use super::monitor::{MonitorLog, Side};
use super::perception::PerceptionLog;
use super::place::{self, PlaceOptions, Placed};
use super::pose::Pose;
use crate::calib::track::{CameraTrack, TrackPose};
use crate::geom::Mat3;
use crate::geom::mat3::{mul, transpose};
use crate::input::{AgentCamera, Companion};
use crate::log::LogError;

/// Degrees the picture's larger side spans: the vision perceptor's field
/// of view.
pub const FOV_DEG: f64 = 120.0;

/// Seconds a camera pose is interpolated across or held for.
pub const HOLD: f64 = 0.25;

/// OpenCV's camera axes in the agent's camera frame: the columns are
/// OpenCV's x (right), y (down) and z (forward).
const OPENCV_IN_AGENT: Mat3 = [[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]];

/// The world → camera rotation, in OpenCV's axes, of an agent's camera pose.
pub fn opencv_rotation(pose: &Pose) -> Mat3 {
    transpose(&mul(&pose.rotation, &OPENCV_IN_AGENT))
}

/// The camera poses of a placed perception log, one per vision message,
/// each at the time the monitor log shows what the message saw
/// ([`place::truth_time`]: rcssservermj's `now` is truncated, a message at
/// 27.03 sees the world of 27.04) when `monitor` is given, else at the
/// message's time.
pub fn track(placed: &Placed, monitor: Option<&MonitorLog>) -> CameraTrack {
    let name = match placed.unum {
        Some(n) => format!("{} {n}", placed.team),
        None => placed.team.clone(),
    };
    let poses = placed
        .views
        .iter()
        .map(|v| TrackPose {
            time: monitor.map_or(v.time, |m| place::truth_time(m, v.time)),
            rotation: opencv_rotation(&v.pose),
            centre: v.pose.position,
        })
        .collect();
    CameraTrack::new(name, poses, FOV_DEG, HOLD)
}

/// The side of `placed`'s agent: the perception log's own word (SimSpark's
/// `GS (team left)`), else its team's side in the monitor log (its game
/// state, else the first team is the left one).
fn side(log: &PerceptionLog, placed: &Placed, monitor: Option<&MonitorLog>) -> Option<u8> {
    match log.side.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("left") => return Some(0),
        Some("right") => return Some(1),
        _ => {}
    }
    if let Some(i) = log
        .team_names
        .iter()
        .position(|t| t.as_deref() == Some(placed.team.as_str()))
    {
        return Some(i as u8);
    }
    let m = monitor?;
    let i = m.teams.iter().position(|t| t.name == placed.team)?;
    Some(match m.teams[i].side {
        Some(Side::Left) => 0,
        Some(Side::Right) => 1,
        None => u8::from(i > 0),
    })
}

/// The camera of the agent whose perception log `log` is (read from
/// `path`, beside `monitor` when given).
pub fn agent_camera(log: &PerceptionLog, path: Option<&Path>, monitor: Option<&MonitorLog>) -> AgentCamera {
    let opts = PlaceOptions {
        agent: if log.unum.is_some() {
            None
        } else {
            path.and_then(super::logs::agent_from_file_name)
        },
        ..PlaceOptions::default()
    };
    let placed = place::place(log, monitor, &opts);
    AgentCamera {
        team: placed.team.clone(),
        side: side(log, &placed, monitor),
        unum: placed.unum,
        track: track(&placed, monitor),
    }
}

/// The format table's reader of an agent's camera: the perception log at
/// `path`, beside its match's monitor log when one was read.
pub fn read_agent_camera(path: &Path, beside: Option<&Companion>) -> Result<AgentCamera, LogError> {
    let log = super::perception::load(path).map_err(|e| super::logs::load_error(path, e))?;
    let monitor = beside.and_then(|c| c.downcast_ref::<MonitorLog>());
    Ok(agent_camera(&log, Some(path), monitor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;

    fn data(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sim3d")
            .join(name)
    }

    fn fixture() -> (PerceptionLog, MonitorLog, AgentCamera) {
        let log = super::super::perception::load(&data("agent_Alpha_1.log.gz")).unwrap();
        let monitor = super::super::monitor::load(&data("monitor.rsmp.log.gz")).unwrap();
        let camera = agent_camera(&log, Some(&data("agent_Alpha_1.log.gz")), Some(&monitor));
        (log, monitor, camera)
    }

    /// Where the agent saw a point (its polar coordinates) in the picture
    /// of an ideal camera with the same intrinsics: an independent model
    /// of the projection (a ray's direction from azimuth and inclination).
    fn seen_pixel(track: &CameraTrack, az: f64, inc: f64, w: usize, h: usize) -> Vec2 {
        let k = track.intrinsics(w, h);
        let (sa, ca) = az.to_radians().sin_cos();
        let (si, ci) = inc.to_radians().sin_cos();
        // forward, left, up → OpenCV x = −left, y = −up, z = forward.
        let (fwd, left, up) = (ci * ca, ci * sa, si);
        Vec2::new(k[0][0] * -left / fwd + k[0][2], k[1][1] * -up / fwd + k[1][2])
    }

    #[test]
    fn the_agent_is_named_and_its_camera_known_from_its_first_vision_message() {
        let (log, _, camera) = fixture();
        assert_eq!(
            (camera.team.as_str(), camera.side, camera.unum),
            ("Alpha", Some(0), Some(1))
        );
        let views = log.messages.iter().filter(|m| m.see.is_some()).count();
        assert_eq!(camera.track.poses().len(), views);
        // The first message, at 25.03, saw the world of 25.04.
        let first = log.messages.iter().find(|m| m.see.is_some()).unwrap().time;
        assert!((first - 25.03).abs() < 1e-9, "{first}");
        assert!((camera.track.start().unwrap() - 25.04).abs() < 1e-9);
        assert!(camera.track.pose_at(25.035).is_none());
        assert!(camera.track.pose_at(first + 0.02).is_some());
        assert_eq!(camera.track.fov_deg, 120.0);
    }

    /// Every marker the agent saw lands, through its camera, where the
    /// agent saw it: within 1.5 px in a 1280 × 720 picture (measured 1.33 px
    /// over 1246 markers: Horn's fit leaves centimetres at metres away).
    #[test]
    fn known_markers_land_where_the_agent_saw_them() {
        let (log, monitor, camera) = fixture();
        let (w, h) = (1280, 720);
        let g = monitor.geometry;
        let mut checked = 0;
        let mut worst: f64 = 0.0;
        for m in log.messages.iter() {
            let Some(see) = &m.see else { continue };
            let pose = camera.track.pose_at(place::truth_time(&monitor, m.time)).unwrap();
            let c = camera.track.camera(&pose, w, h).unwrap();
            for seen in log.see_markers(see) {
                let Some(world) = g.marker(log.name(seen.name)) else {
                    continue;
                };
                // Markers seen at a wide angle fall outside the picture's
                // height (88.5°); those inside it are checked.
                let want = seen_pixel(&camera.track, seen.pol.azimuth, seen.pol.inclination, w, h);
                if !(0.0..w as f64).contains(&want.x) || !(0.0..h as f64).contains(&want.y) {
                    continue;
                }
                let got = c.project3(world).unwrap();
                worst = worst.max((got - want).length());
                checked += 1;
            }
        }
        eprintln!("{checked} markers, worst {worst:.3} px");
        assert!(checked > 100, "{checked}");
        assert!(worst < 1.5, "worst {worst} px over {checked} markers");
    }

    /// The camera is where the monitor log puts the agent's head (the
    /// monitor's scene graph has the torso, not the head): within 0.2 m of
    /// the torso's true position across and 0.35–0.45 m above it (the T1's
    /// neck and head; measured 0.14 m and 0.41 m), and the ball the monitor
    /// shows lands within 1 px of where the agent saw it (measured 0.3 px).
    #[test]
    fn the_camera_agrees_with_the_monitor_logs_truth() {
        let (log, monitor, camera) = fixture();
        let (w, h) = (1280, 720);
        let mut balls = 0;
        let (mut worst_ball, mut worst_xy, mut heights): (f64, f64, Vec<f64>) = (0.0, 0.0, vec![]);
        for m in log.messages.iter().filter(|m| m.see.is_some()) {
            let truth = place::truth_time(&monitor, m.time);
            let pose = camera.track.pose_at(truth).unwrap();
            let Some(f) = monitor.frames.iter().find(|f| f.time == truth) else {
                continue;
            };
            let torso = monitor
                .frame_robots(f)
                .iter()
                .find(|r| r.unum == 1 && monitor.teams[r.team as usize].name == "Alpha")
                .unwrap()
                .position();
            let d = |k: usize| pose.centre[k] - torso[k];
            worst_xy = worst_xy.max(d(0).hypot(d(1)));
            heights.push(d(2));
            assert!(d(0).hypot(d(1)) < 0.2, "{:?} vs torso {torso:?}", pose.centre);
            assert!(
                (0.35..0.45).contains(&d(2)),
                "{:?} vs torso {torso:?}",
                pose.centre
            );
            if let (Some(ball), Some(seen)) = (f.ball, m.see.as_ref().and_then(|s| s.ball)) {
                let c = camera.track.camera(&pose, w, h).unwrap();
                let want = seen_pixel(&camera.track, seen.azimuth, seen.inclination, w, h);
                if let Some(got) = c.project3(ball) {
                    worst_ball = worst_ball.max((got - want).length());
                    assert!((got - want).length() < 1.0, "{got:?} vs {want:?} at {}", m.time);
                    balls += 1;
                }
            }
        }
        let (lo, hi) = heights
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &h| (a.min(h), b.max(h)));
        eprintln!(
            "{balls} balls, worst {worst_ball:.3} px; camera {worst_xy:.3} m from the torso across, {lo:.3}…{hi:.3} m above"
        );
        assert!(balls > 10, "{balls}");
    }
}
