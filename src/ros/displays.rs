//! What RViz's default displays draw of sensors, maps and poses, message
//! by message, into a topic's lives ([`super::markers::Lives`]: each
//! drawing shown until the topic's next replaces it, as RViz shows them
//! with no decay):
//!
//! - `LaserScan` ([`super::scan`]) and `PointCloud2` ([`super::cloud2`]):
//!   a set of points ([`Raised::Points`]) — red for a scan, white for a
//!   cloud, a cloud's own `rgb`/`rgba` colours, or intensities through
//!   RViz's rainbow when asked (`--intensity`);
//! - `Range`: its cone, white at RViz's alpha 0.5;
//! - `OccupancyGrid` and its updates, `GridCells` ([`super::grid`]):
//!   cells on the floor, the map's classes as namespaces
//!   (`map/occupied/0`, `map/free/0`, `map/unknown/0`);
//! - `Odometry`, `PoseWithCovarianceStamped`, `PointStamped`,
//!   `PolygonStamped`, `Pose2D` ([`super::poses`]).
//!
//! Every point of a message's drawing is placed through the transform
//! tree at the message's stamp. Clouds and scans are thinned to a bound
//! per message that the recording's clouds share ([`point_bound`]), so
//! that a long recording of a lidar stays within memory; the thinning is
//! said.

use std::collections::HashMap;
use std::sync::Arc;

use super::grid::{CLASSES, Map};
use super::markers::{Drawn, Life, Lives};
use super::poses::{self, OdometryKeep, Place};
use super::recording::Role;
use super::value::Struct;
use crate::log::{Raised, Rgba, Shape, Style, ThicknessUnit};

/// The most points drawn of one cloud or scan.
pub const MAX_CLOUD_POINTS: usize = 100_000;

/// The most points of all the clouds and scans of a recording together
/// (16 bytes each in memory: 320 MB).
pub const MAX_RECORDING_POINTS: usize = 20_000_000;

/// The colour of a scan's points and of a cloud's without colours.
pub const SCAN_COLOUR: Rgba = Rgba(0xff00_00ff);
pub const CLOUD_COLOUR: Rgba = Rgba(0xffff_ffff);
/// RViz's Range display: white at alpha 0.5.
pub const RANGE_COLOUR: Rgba = Rgba(0xffff_ff80);

/// The points each cloud or scan of a recording is thinned to, when it
/// holds `messages` of them: [`MAX_CLOUD_POINTS`], or their share of
/// [`MAX_RECORDING_POINTS`] when that is less.
pub fn point_bound(messages: u64) -> usize {
    let share = MAX_RECORDING_POINTS as u64 / messages.max(1);
    (share as usize).clamp(1_000, MAX_CLOUD_POINTS)
}

/// The state of the displays of a recording: its maps (so that updates
/// apply to them) and what Odometry keeps of each topic.
#[derive(Debug, Default)]
pub struct Displays {
    /// Colour clouds and scans by intensity.
    pub intensity: bool,
    /// Points drawn of a cloud or scan at most.
    pub bound: usize,
    maps: HashMap<String, Map>,
    odometry: HashMap<String, OdometryKeep>,
}

/// A set of points in the world, each in its colour or `colour`.
fn points(points: Vec<[f32; 3]>, colors: Vec<Rgba>, colour: Rgba) -> Drawn {
    Drawn {
        shape: Shape::Raised(Box::new(Raised::Points {
            points: points.into(),
            colors: colors.into(),
            size: 0.0,
        })),
        style: Style::color(colour),
        is_text: false,
    }
}

/// Points of a sensor's frame placed in the world.
fn placed(world: &super::tf::Transform, pts: &[[f32; 3]]) -> Vec<[f32; 3]> {
    pts.iter()
        .map(|p| world.apply(p.map(f64::from)).map(|v| v as f32))
        .collect()
}

fn filled(shape: Shape, colour: Rgba) -> Drawn {
    Drawn {
        shape,
        style: Style {
            color: colour,
            fill: Some(colour),
            thickness: 0.0,
            unit: ThicknessUnit::Pixels,
        },
        is_text: false,
    }
}

impl Displays {
    /// Displays colouring by intensity when `intensity`, thinning clouds
    /// and scans to `bound` points.
    pub fn new(intensity: bool, bound: usize) -> Displays {
        Displays {
            intensity,
            bound,
            ..Displays::default()
        }
    }

    /// Applies one message of a display's `role`, of `topic` (for a map's
    /// update, of the map's topic), to `lives`; what was noticed.
    pub fn apply(
        &mut self,
        place: &Place<'_>,
        lives: &mut Lives,
        topic: &str,
        role: Role,
        msg: &Struct<'_>,
        now: f64,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        let h = msg.sub("header");
        let t = super::markers::stamp(h).unwrap_or(now);
        let frame = h.and_then(|h| h.str("frame_id")).unwrap_or("");
        let key = |ns: &str| (Arc::<str>::from(ns), 0);
        let done = match role {
            Role::LaserScan => super::scan::laser_scan(msg, self.bound, self.intensity).and_then(|s| {
                let world = place(frame, t)?;
                notes.extend(s.notes);
                let pts = placed(&world, &s.points);
                if pts.is_empty() {
                    lives.end(&key(""), t);
                } else {
                    let d = points(pts, s.colors, SCAN_COLOUR);
                    lives.add(key(""), Life::shown_for(t, 0.0, vec![d], None));
                }
                Ok(())
            }),
            Role::PointCloud2 => super::cloud2::points(msg, self.bound, self.intensity).and_then(|c| {
                let world = place(frame, t)?;
                notes.extend(c.notes);
                let pts = placed(&world, &c.points);
                if pts.is_empty() {
                    lives.end(&key(""), t);
                } else {
                    let d = points(pts, c.colors, CLOUD_COLOUR);
                    lives.add(key(""), Life::shown_for(t, 0.0, vec![d], None));
                }
                Ok(())
            }),
            Role::Range => super::scan::range_cone(msg).and_then(|cone| {
                let Some((apex, base, radius)) = cone else {
                    lives.end(&key(""), t);
                    return Ok(());
                };
                let world = place(frame, t)?;
                let shape = Shape::Raised(Box::new(Raised::Cone {
                    apex: world.apply(apex),
                    base: world.apply(base),
                    radius,
                }));
                lives.add(
                    key(""),
                    Life::shown_for(t, 0.0, vec![filled(shape, RANGE_COLOUR)], None),
                );
                Ok(())
            }),
            Role::OccupancyGrid => Map::new(msg).and_then(|map| {
                self.maps.insert(topic.to_owned(), map);
                self.show_map(place, lives, topic, t, &mut notes)
            }),
            Role::OccupancyGridUpdate => match self.maps.get_mut(topic) {
                None => Err(format!("an update before the first map of {topic}: left out")),
                Some(map) => map.update(msg).and_then(|n| {
                    notes.extend(n);
                    self.show_map(place, lives, topic, t, &mut notes)
                }),
            },
            Role::GridCells => place(frame, t).and_then(|world| {
                let (cells, note) = super::grid::grid_cells(msg, &world)?;
                notes.extend(note);
                match cells {
                    Some(c) => {
                        let d = filled(Shape::Cells(Arc::new(c)), poses::POLYGON_COLOUR);
                        lives.add(key(""), Life::shown_for(t, 0.0, vec![d], None));
                    }
                    None => lives.end(&key(""), t),
                }
                Ok(())
            }),
            Role::Odometry => {
                let keep = self.odometry.entry(topic.to_owned()).or_default();
                poses::odometry(place, lives, keep, msg, now)
            }
            Role::PoseWithCovariance => poses::pose_with_covariance(place, lives, msg, now),
            Role::PointStamped => poses::point(place, lives, msg, now),
            Role::PolygonStamped => poses::polygon(place, lives, msg, now),
            Role::Pose2D => poses::pose_2d(lives, msg, now),
            _ => Ok(()),
        };
        if let Err(e) = done {
            notes.push(e);
        }
        notes
    }

    /// Shows the map of `topic` as it now is: each class's cells from `t`.
    fn show_map(
        &self,
        place: &Place<'_>,
        lives: &mut Lives,
        topic: &str,
        t: f64,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let Some(map) = self.maps.get(topic) else {
            return Ok(());
        };
        let world = place(&map.frame, t)?;
        let (classes, note) = map.cells(&world);
        notes.extend(note);
        for ((ns, colour), cells) in CLASSES.iter().zip(classes) {
            let key = (Arc::<str>::from(*ns), 0);
            match cells {
                Some(c) => {
                    let d = filled(Shape::Cells(Arc::new(c)), *colour);
                    lives.add(key, Life::shown_for(t, 0.0, vec![d], None));
                }
                None => lives.end(&key, t),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::bag::BagReader;
    use std::ops::ControlFlow;

    #[test]
    fn clouds_share_the_recordings_points() {
        assert_eq!(point_bound(1), MAX_CLOUD_POINTS);
        assert_eq!(point_bound(200), MAX_CLOUD_POINTS);
        assert_eq!(point_bound(600), 33_333);
        assert_eq!(point_bound(1 << 40), 1_000);
    }

    /// The display messages of the test recording (tests/data/ros/rviz):
    /// the recording opened, and each message's topic and bytes.
    fn messages() -> (
        crate::ros::recording::Recording,
        Vec<(crate::ros::bag::Topic, Vec<u8>)>,
    ) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/rviz/rviz.mcap");
        let rec = crate::ros::recording::open(&path).unwrap();
        let topics: Vec<crate::ros::bag::Topic> = rec
            .info()
            .topics
            .iter()
            .filter(|t| Role::of(&t.type_name).is_display())
            .cloned()
            .collect();
        let ids: Vec<u32> = topics.iter().map(|t| t.id).collect();
        let mut bag = crate::ros::mcap_file::open(&path).unwrap();
        let mut out = Vec::new();
        bag.read(&ids, None, &mut |m| {
            if let Some(t) = topics.iter().find(|t| t.id == m.topic) {
                out.push((t.clone(), m.data.to_vec()));
            }
            ControlFlow::Continue(())
        })
        .unwrap();
        (rec, out)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases() / 4,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Every display's messages, their bytes mutated (bytes changed, a
        /// length or count made huge, the message cut short), decoded and
        /// drawn: a drawing or a reason, never a panic, and no more points
        /// than the bound.
        #[test]
        fn mutated_messages_draw_or_say_why(
            pick in proptest::prelude::any::<proptest::sample::Index>(),
            changes in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()), 0..8),
            huge in proptest::option::of(proptest::prelude::any::<proptest::sample::Index>()),
            cut in proptest::option::of(proptest::prelude::any::<proptest::sample::Index>()),
            intensity in proptest::prelude::any::<bool>(),
        ) {
            thread_local! {
                static MESSAGES: (crate::ros::recording::Recording, Vec<(crate::ros::bag::Topic, Vec<u8>)>) = messages();
            }
            MESSAGES.with(|(rec, msgs)| {
                let (topic, bytes) = &msgs[pick.index(msgs.len())];
                let mut b = bytes.clone();
                for (at, v) in &changes {
                    let i = at.index(b.len());
                    b[i] = *v;
                }
                if let Some(at) = huge {
                    // A 32-bit count or length of 2³¹ - 1.
                    let i = at.index(b.len().saturating_sub(4).max(1));
                    if i + 4 <= b.len() {
                        b[i..i + 4].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
                    }
                }
                if let Some(at) = cut {
                    b.truncate(at.index(b.len() + 1));
                }
                let mut displays = Displays::new(intensity, 500);
                let mut lives = Lives::default();
                let place = |_: &str, _: f64| Ok(crate::ros::tf::Transform::IDENTITY);
                // An update needs its map first.
                let map = msgs.iter().find(|m| Role::of(&m.0.type_name) == Role::OccupancyGrid);
                if let Some((mt, mb)) = map && let Ok(m) = rec.decode(mt, mb) {
                    displays.apply(&place, &mut lives, "/map", Role::OccupancyGrid, &m, 0.0);
                }
                if let Ok(msg) = rec.decode(topic, &b) {
                    let role = Role::of(&topic.type_name);
                    let name = if role == Role::OccupancyGridUpdate { "/map" } else { topic.name.as_str() };
                    let _ = displays.apply(&place, &mut lives, name, role, &msg, 1.0);
                }
                lives.finish();
                for e in &lives.ended {
                    for d in &e.life.shapes {
                        if let Shape::Raised(r) = &d.shape && let Raised::Points { points, .. } = &**r {
                            assert!(points.len() <= 500, "{} points", points.len());
                        }
                    }
                }
            });
        }
    }
}
