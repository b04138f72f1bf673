//! The transform tree as RViz's TF display draws it (`--tf-axes`; off by
//! default, as the display is): each frame's axes — x red, y green, z
//! blue, 0.2 m long and 0.04 m thick — and an arrow from the frame to its
//! parent (a yellowish shaft 0.02 m thick, a pink head 0.1 m long), where
//! the frame is in the world. A frame that moves is drawn anew each time
//! a transform under it changes, at most [`MAX_RATE`] times a second (and
//! fewer when the recording is long: [`MAX_PIECES`] drawings in all), from
//! its first transform on; a fixed one once, at every time. Frame names
//! are not drawn (RViz's "Show Names" is off by default).

use super::markers::{self, Drawn};
use super::tf::{TfTree, Transform};
use crate::log::{Rgba, Style, ThicknessUnit};

/// Axis length and thickness (m): RViz's 0.2 and twice its 0.02 radius.
pub const AXIS: (f64, f64) = (0.2, 0.04);

/// Drawings of one moving frame a second, at most.
pub const MAX_RATE: f64 = 30.0;

/// Drawings of all frames of a recording, at most.
pub const MAX_PIECES: usize = 200_000;

const AXIS_COLOURS: [Rgba; 3] = [Rgba(0xff00_00ff), Rgba(0x00ff_00ff), Rgba(0x0000_ffff)];
/// RViz's parent arrow: shaft (0.8, 0.8, 0.3), head (1, 0.1, 0.6).
const SHAFT: Rgba = Rgba(0xcccc_4dff);
const HEAD: Rgba = Rgba(0xff19_99ff);

/// A frame's drawing over `[start, end]` (seconds; end inclusive).
#[derive(Clone, Debug)]
pub struct Piece {
    pub frame: String,
    pub start: f64,
    pub end: f64,
    pub shapes: Vec<Drawn>,
}

fn line(a: [f64; 3], b: [f64; 3], width: f64, colour: Rgba) -> Drawn {
    Drawn {
        shape: markers::path(&[a, b], false),
        style: Style {
            color: colour,
            fill: None,
            thickness: width as f32,
            unit: ThicknessUnit::World,
        },
        is_text: false,
    }
}

/// A frame's axes and arrow to its parent, the frame at `pose` and its
/// parent's origin at `parent` (in the world).
fn shapes(pose: &Transform, parent: Option<[f64; 3]>) -> Vec<Drawn> {
    let o = pose.translation;
    let mut out: Vec<Drawn> = (0..3)
        .map(|k| {
            let mut e = [0.0; 3];
            e[k] = AXIS.0;
            line(o, pose.apply(e), AXIS.1, AXIS_COLOURS[k])
        })
        .collect();
    if let Some(p) = parent {
        let d = [p[0] - o[0], p[1] - o[1], p[2] - o[2]];
        let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if dist > 0.001 {
            let head = if dist < 0.1 { 0.1 * dist } else { 0.1 };
            let s = (dist - head) / dist;
            let joint = [o[0] + d[0] * s, o[1] + d[1] * s, o[2] + d[2] * s];
            out.push(line(o, joint, 0.02, SHAFT));
            out.push(line(joint, p, 0.08, HEAD));
        }
    }
    out
}

/// Every frame connected to `world` drawn over the recording (`span`: its
/// first and last log time), and the frames that could not be placed.
pub fn pieces(tf: &TfTree, world: &str, span: (f64, f64)) -> (Vec<Piece>, Vec<String>) {
    let frames = tf.frames();
    let moving: Vec<&String> = frames.iter().filter(|f| !tf.is_fixed(world, f)).collect();
    let length = (span.1 - span.0).max(0.0);
    let step = (1.0 / MAX_RATE).max(length * moving.len() as f64 / MAX_PIECES as f64);
    let (mut out, mut unplaced) = (Vec::new(), Vec::new());
    for frame in &frames {
        let parent_at = |t: f64| {
            tf.parent(frame)
                .and_then(|p| tf.lookup(world, p, t).ok())
                .map(|p| p.translation)
        };
        if tf.is_fixed(world, frame) {
            match tf.lookup(world, frame, span.0) {
                Ok(pose) => out.push(Piece {
                    frame: frame.clone(),
                    start: f64::NEG_INFINITY,
                    end: f64::INFINITY,
                    shapes: shapes(&pose, parent_at(span.0)),
                }),
                Err(_) => unplaced.push(frame.clone()),
            }
            continue;
        }
        let mut times = Vec::new();
        for t in tf.changes(world, frame, f64::NEG_INFINITY, f64::INFINITY) {
            if times.last().is_none_or(|&last: &f64| t - last >= step) {
                times.push(t);
            }
        }
        for (i, &t) in times.iter().enumerate() {
            let Ok(pose) = tf.lookup(world, frame, t) else {
                if i == 0 {
                    unplaced.push(frame.clone());
                }
                break;
            };
            let end = times.get(i + 1).map_or(f64::INFINITY, |n| n.next_down());
            out.push(Piece {
                frame: frame.clone(),
                start: t,
                end,
                shapes: shapes(&pose, parent_at(t)),
            });
        }
    }
    (out, unplaced)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Shape;

    #[test]
    fn fixed_and_moving_frames_are_drawn_where_they_are() {
        let mut tf = TfTree::default();
        let q = [0.0, 0.0, 0.0, 1.0];
        tf.add(
            "map",
            "camera",
            0.0,
            Transform::new(q, [0.0, -2.0, 1.5]).unwrap(),
            true,
        );
        // A robot driving along x at 1 m/s, transforms at 100 Hz for 1 s.
        for i in 0..=100 {
            let t = i as f64 * 0.01;
            tf.add(
                "map",
                "robot",
                t,
                Transform::new(q, [t, 0.0, 0.0]).unwrap(),
                false,
            );
        }
        tf.add("elsewhere", "lost", 0.0, Transform::IDENTITY, true);
        tf.finish();
        let (pieces, unplaced) = pieces(&tf, "map", (0.0, 1.0));
        assert_eq!(unplaced, ["elsewhere", "lost"]);
        let camera: Vec<&Piece> = pieces.iter().filter(|p| p.frame == "camera").collect();
        assert_eq!(camera.len(), 1);
        assert_eq!(
            (camera[0].start, camera[0].end),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
        // Three axes and the arrow to the map's origin (shaft and head).
        assert_eq!(camera[0].shapes.len(), 5);
        match &camera[0].shapes[0].shape {
            Shape::Raised(r) => assert_eq!(r.extent().0, [0.0, 0.2]),
            other => panic!("{other:?}"),
        }
        // At most 30 drawings a second of the robot (stamps 10 ms apart:
        // every 4th), each where it was.
        let robot: Vec<&Piece> = pieces.iter().filter(|p| p.frame == "robot").collect();
        assert_eq!(robot.len(), 26);
        assert!(
            robot
                .windows(2)
                .all(|w| w[0].end < w[1].start && w[1].start - w[0].start >= 1.0 / 30.0 - 1e-12)
        );
        let last = robot.last().unwrap();
        match &last.shapes[0].shape {
            Shape::Line { start, .. } => assert!((start.x - last.start).abs() < 1e-9),
            other => panic!("{other:?}"),
        }
        // The map itself: its axes, no arrow.
        assert_eq!(pieces.iter().find(|p| p.frame == "map").unwrap().shapes.len(), 3);
    }
}
