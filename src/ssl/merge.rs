//! One scene from several cameras: the robots and the ball that the
//! cameras' latest detections show together.
//!
//! Robots: per camera, the most confident detection of each team and id
//! (a pattern seen twice by one camera is one robot); across cameras, the
//! mean position weighted by confidence, and the heading as the weighted
//! mean of unit vectors (so headings near ±π average correctly). Robots
//! whose id was not recognised are left out. The ball: the cameras' balls
//! are clustered (balls closer than [`BALL_CLUSTER_MM`] are one, seeded by
//! the most confident), and the cluster with the most confidence in total
//! is the ball, at its weighted mean.

use std::collections::BTreeMap;

use super::packets::{CameraFrame, Team};
use crate::geom::Vec2;

/// Balls of different cameras closer than this (mm) are one ball.
pub const BALL_CLUSTER_MM: f64 = 150.0;

/// The scene's robots at one tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldRobot {
    pub team: Team,
    pub id: u32,
    pub pos: Vec2,
    pub orientation: Option<f64>,
    /// mm/s, from the tracker.
    pub vel: Option<Vec2>,
}

/// Merges the cameras' robots: one per team and id (module docs).
pub fn merge_robots<'a>(frames: impl IntoIterator<Item = &'a CameraFrame>) -> Vec<WorldRobot> {
    #[derive(Default)]
    struct Sum {
        w: f64,
        pos: Vec2,
        heading_w: f64,
        heading: Vec2,
    }
    let mut sums: BTreeMap<(Team, u32), Sum> = BTreeMap::new();
    let mut best: BTreeMap<(Team, u32), (f64, Vec2, Option<f64>)> = BTreeMap::new();
    for f in frames {
        best.clear();
        for r in &f.robots {
            let Some(id) = r.id else { continue };
            let e = best.entry((r.team, id)).or_insert((-1.0, r.pos, r.orientation));
            if r.confidence > e.0 {
                *e = (r.confidence, r.pos, r.orientation);
            }
        }
        for (&key, &(conf, pos, orientation)) in &best {
            // Zero-confidence detections still count, a little.
            let w = conf.max(1e-3);
            let s = sums.entry(key).or_default();
            s.w += w;
            s.pos = s.pos + pos * w;
            if let Some(a) = orientation {
                s.heading_w += w;
                s.heading = s.heading + Vec2::new(a.cos(), a.sin()) * w;
            }
        }
    }
    sums.into_iter()
        .map(|((team, id), s)| WorldRobot {
            team,
            id,
            pos: s.pos * (1.0 / s.w),
            orientation: (s.heading_w > 0.0 && s.heading.length() > 1e-9)
                .then(|| s.heading.y.atan2(s.heading.x)),
            vel: None,
        })
        .collect()
}

/// The ball of the cameras' balls: the cluster with the most confidence,
/// at its confidence-weighted mean.
pub fn merge_ball<'a>(frames: impl IntoIterator<Item = &'a CameraFrame>) -> Option<Vec2> {
    let mut balls: Vec<(f64, Vec2)> = frames
        .into_iter()
        .flat_map(|f| f.balls.iter().map(|b| (b.confidence.max(1e-3), b.pos)))
        .collect();
    balls.sort_by(|a, b| b.0.total_cmp(&a.0));
    // (seed, total weight, weighted sum)
    let mut clusters: Vec<(Vec2, f64, Vec2)> = Vec::new();
    for (w, p) in balls {
        match clusters.iter_mut().find(|c| (c.0 - p).length() < BALL_CLUSTER_MM) {
            Some(c) => {
                c.1 += w;
                c.2 = c.2 + p * w;
            }
            None => clusters.push((p, w, p * w)),
        }
    }
    clusters
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|c| c.2 * (1.0 / c.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssl::packets::{BallSeen, RobotSeen};

    fn frame_of(robots: &[(Team, u32, f64, f64, f64, f64)]) -> CameraFrame {
        CameraFrame {
            camera_id: 0,
            frame_number: 0,
            t_capture: 0.0,
            t_sent: 0.0,
            balls: Vec::new(),
            robots: robots
                .iter()
                .map(|&(team, id, x, y, a, c)| RobotSeen {
                    team,
                    id: Some(id),
                    pos: Vec2::new(x, y),
                    orientation: Some(a),
                    confidence: c,
                })
                .collect(),
        }
    }

    #[test]
    fn robots_merge_by_confidence_and_headings_by_unit_vectors() {
        let a = frame_of(&[
            (Team::Blue, 1, 0.0, 0.0, 3.1, 1.0),
            (Team::Blue, 1, 500.0, 500.0, 0.0, 0.2),
            (Team::Yellow, 2, 10.0, 10.0, 0.0, 0.9),
        ]);
        let b = frame_of(&[(Team::Blue, 1, 90.0, 0.0, -3.1, 0.5)]);
        let robots = merge_robots([&a, &b]);
        assert_eq!(robots.len(), 2);
        let blue = robots.iter().find(|r| r.team == Team::Blue).unwrap();
        // The second blue 1 of camera a is less confident and not used.
        assert!(
            (blue.pos.x - 30.0).abs() < 1e-3 && blue.pos.y.abs() < 1e-3,
            "{blue:?}"
        );
        let heading = blue.orientation.unwrap();
        assert!((heading.abs() - std::f64::consts::PI).abs() < 0.05, "{heading}");
        let lone = merge_robots([&a]);
        assert_eq!(lone.len(), 2);
    }

    #[test]
    fn the_ball_is_the_most_confident_cluster() {
        let mut a = frame_of(&[]);
        a.balls = vec![
            BallSeen {
                pos: Vec2::new(1000.0, 0.0),
                z: None,
                confidence: 0.9,
            },
            BallSeen {
                pos: Vec2::new(-2000.0, 0.0),
                z: None,
                confidence: 0.6,
            },
        ];
        let mut b = frame_of(&[]);
        b.balls = vec![
            BallSeen {
                pos: Vec2::new(-2100.0, 0.0),
                z: None,
                confidence: 0.6,
            },
            BallSeen {
                pos: Vec2::new(-1950.0, 0.0),
                z: None,
                confidence: 0.0,
            },
        ];
        let ball = merge_ball([&a, &b]).unwrap();
        assert!((ball.x + 2050.0).abs() < 1.0, "{ball:?}");
        assert_eq!(merge_ball([&frame_of(&[])]), None);
    }
}
