//! The log's moving objects: where each circle or marker that moves with
//! the robots is at any log time, and how fast it goes.
//!
//! Objects are not named in logs, so they are followed from one
//! instantaneous frame to the next: within one stream, one entity and one
//! kind of shape (circles of one radius, or markers), each shape is paired
//! with the nearest of the next frame's (greedily, closest pairs first, and
//! only within a jump a robot could make). A group is kept when it holds
//! few shapes (a robot, a ball; not an RRT's hundreds of nodes) and its
//! shapes really move over the log (not a zone drawn at the same place
//! every frame). Between two frames an object moves in a straight line.

use std::collections::{BTreeMap, HashMap};

use crate::geom::{Vec2, WorldPoint};
use crate::log::{FrameTime, Log, Shape};

/// Most shapes of one group in one frame for the group to count as
/// objects (more is a drawing such as a tree of planner nodes).
const MAX_GROUP: usize = 4;

/// Most groups followed in one stream (those that travel most).
const MAX_GROUPS: usize = 96;

/// An object at a moment of the log.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mover {
    /// Where it is (world units).
    pub at: WorldPoint,
    /// How fast it goes (world units per log second).
    pub velocity: Vec2,
    /// Its radius (world units; 0 for markers).
    pub radius: f64,
    /// The group it belongs to (an index into [`Movers::groups`]).
    pub group: usize,
}

/// Shapes followed together: one entity's circles of one radius, or its
/// markers.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The entity's name.
    pub name: String,
    /// Most shapes of the group in one frame.
    pub count: usize,
}

/// One instantaneous frame's objects, with their velocities towards the
/// next frame of the same stream.
#[derive(Clone, Debug, PartialEq)]
struct Sample {
    time: f64,
    /// Time to the next frame of the stream (how long `movers` hold).
    span: f64,
    movers: Vec<Mover>,
}

/// The moving objects of a log, stream by stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Movers {
    streams: Vec<Vec<Sample>>,
    groups: Vec<Group>,
}

/// A group's key within a stream: entity, and the shape's kind and size.
type GroupKey = (u32, u8, u64);

/// A group's objects, frame by frame (index of the frame, objects).
type GroupSamples = Vec<(usize, Vec<Mover>)>;

impl Movers {
    /// Follows the moving circles and markers of `log`'s instantaneous
    /// frames (see the module docs).
    pub fn from_log(log: &Log) -> Movers {
        let mut streams = Vec::new();
        let mut groups = Vec::new();
        for range in log.stream_ranges() {
            let (samples, g) = stream_movers(log, range, groups.len());
            if !samples.is_empty() {
                streams.push(samples);
                groups.extend(g);
            }
        }
        Movers { streams, groups }
    }

    /// Whether the log has nothing that moves.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// How many objects are followed (each group's most in one frame,
    /// summed).
    pub fn objects(&self) -> usize {
        self.groups.iter().map(|g| g.count).sum()
    }

    /// The groups followed.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The log's first and last times with objects.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let lo = self
            .streams
            .iter()
            .filter_map(|s| s.first())
            .map(|s| s.time)
            .reduce(f64::min)?;
        let hi = self
            .streams
            .iter()
            .filter_map(|s| s.last())
            .map(|s| s.time + s.span)
            .reduce(f64::max)?;
        Some((lo, hi))
    }

    /// The objects at log time `t` (positions moved on from the frame
    /// before `t`, within that frame's span) into `out`.
    pub fn at(&self, t: f64, out: &mut Vec<Mover>) {
        out.clear();
        for s in &self.streams {
            let i = s.partition_point(|x| x.time <= t);
            let Some(sample) = i.checked_sub(1).map(|i| &s[i]) else {
                continue;
            };
            let dt = t - sample.time;
            if dt > sample.span {
                continue;
            }
            out.extend(sample.movers.iter().map(|m| Mover {
                at: m.at + m.velocity * dt,
                ..*m
            }));
        }
    }
}

/// The shapes of one group in one frame.
type Shapes = Vec<(WorldPoint, f64)>;

/// The samples of one stream and its groups (numbered from `first_group`).
fn stream_movers(log: &Log, range: std::ops::Range<usize>, first_group: usize) -> (Vec<Sample>, Vec<Group>) {
    // Frames in time order, each as its groups of shapes.
    let mut frames: Vec<(f64, HashMap<GroupKey, Shapes>)> = Vec::new();
    for f in &log.frames[range] {
        let FrameTime::Instant(t) = f.time else { continue };
        if !t.is_finite() {
            continue;
        }
        let mut groups: HashMap<GroupKey, Shapes> = HashMap::new();
        for p in log.frame_primitives(f) {
            let (at, radius, kind) = match p.shape {
                Shape::Circle { center, radius } => (center, radius, 0),
                Shape::Point { position, .. } => (position, 0.0, 1),
                _ => continue,
            };
            if !(at.x.is_finite() && at.y.is_finite() && radius.is_finite() && radius >= 0.0) {
                continue;
            }
            groups
                .entry((p.entity.0, kind, radius.to_bits()))
                .or_default()
                .push((at, radius));
        }
        groups.retain(|_, v| v.len() <= MAX_GROUP);
        frames.push((t, groups));
    }
    frames.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Frames of the same time: the later one stands.
    frames.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            std::mem::swap(later, earlier);
            true
        } else {
            false
        }
    });
    if frames.len() < 2 {
        return (Vec::new(), Vec::new());
    }
    let gap = longest_gap(&frames);
    let jump = jump_limit(&frames);
    // Velocity of every shape towards its partner in the next frame.
    let mut per_group: BTreeMap<GroupKey, GroupSamples> = BTreeMap::new();
    for (i, w) in frames.windows(2).enumerate() {
        let ((t0, g0), (t1, g1)) = (&w[0], &w[1]);
        let dt = t1 - t0;
        if dt <= 0.0 || dt > gap {
            continue;
        }
        for (key, shapes) in g0 {
            let Some(next) = g1.get(key) else { continue };
            let movers = pair_up(shapes, next, jump)
                .into_iter()
                .map(|(a, b)| Mover {
                    at: shapes[a].0,
                    velocity: (next[b].0 - shapes[a].0) * (1.0 / dt),
                    radius: shapes[a].1,
                    group: 0,
                })
                .collect::<Vec<_>>();
            if !movers.is_empty() {
                per_group.entry(*key).or_default().push((i, movers));
            }
        }
    }
    // Keep the groups that move: a shape travels more than twice its size (or a
    // hundredth of the extent for markers) over the log.
    let extent = extent_of(&frames);
    let mut samples: Vec<Sample> = frames
        .windows(2)
        .map(|w| Sample {
            time: w[0].0,
            span: w[1].0 - w[0].0,
            movers: Vec::new(),
        })
        .collect();
    let mut moving: Vec<(f64, GroupKey, GroupSamples)> = per_group
        .into_iter()
        .filter_map(|(key, list)| {
            let travel: f64 = list
                .iter()
                .map(|(i, ms)| ms.iter().map(|m| m.velocity.length()).sum::<f64>() * samples[*i].span)
                .sum();
            let size = list[0].1[0].radius.max(extent / 100.0);
            (travel > 2.0 * size).then_some((travel, key, list))
        })
        .collect();
    // The groups that travel most, when there are very many.
    moving.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    moving.truncate(MAX_GROUPS);
    moving.sort_by_key(|m| m.1);
    let mut objects = Vec::new();
    for (_, key, list) in moving {
        let group = first_group + objects.len();
        let count = list.iter().map(|(_, ms)| ms.len()).max().unwrap_or(0);
        objects.push(Group {
            name: log.entities.name(crate::log::EntityId(key.0)).to_owned(),
            count,
        });
        for (i, ms) in list {
            samples[i]
                .movers
                .extend(ms.into_iter().map(|m| Mover { group, ..m }));
        }
    }
    samples.retain(|s| !s.movers.is_empty());
    (samples, objects)
}

/// Pairs shapes of `a` with shapes of `b`, closest pairs first, each at
/// most once and no farther apart than `limit`.
fn pair_up(a: &Shapes, b: &Shapes, limit: f64) -> Vec<(usize, usize)> {
    let mut d: Vec<(f64, usize, usize)> = Vec::with_capacity(a.len() * b.len());
    for (i, p) in a.iter().enumerate() {
        for (j, q) in b.iter().enumerate() {
            let dist = (p.0 - q.0).length();
            if dist <= limit {
                d.push((dist, i, j));
            }
        }
    }
    d.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut used_a, mut used_b) = (vec![false; a.len()], vec![false; b.len()]);
    let mut pairs = Vec::new();
    for (_, i, j) in d {
        if !used_a[i] && !used_b[j] {
            used_a[i] = true;
            used_b[j] = true;
            pairs.push((i, j));
        }
    }
    pairs
}

/// The longest time between frames over which an object is assumed to
/// move in a straight line: four times the median spacing.
fn longest_gap(frames: &[(f64, HashMap<GroupKey, Shapes>)]) -> f64 {
    let mut gaps: Vec<f64> = frames.windows(2).map(|w| w[1].0 - w[0].0).collect();
    gaps.sort_by(f64::total_cmp);
    4.0 * gaps[gaps.len() / 2]
}

/// The farthest a shape may move between two frames and still be the same
/// object: a twentieth of the extent of all shapes.
fn jump_limit(frames: &[(f64, HashMap<GroupKey, Shapes>)]) -> f64 {
    extent_of(frames) / 20.0
}

/// The diagonal of the box around every shape of every frame.
fn extent_of(frames: &[(f64, HashMap<GroupKey, Shapes>)]) -> f64 {
    let (mut lo, mut hi) = (
        Vec2::new(f64::INFINITY, f64::INFINITY),
        Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
    );
    for (_, groups) in frames {
        for (p, _) in groups.values().flatten() {
            lo = Vec2::new(lo.x.min(p.x), lo.y.min(p.y));
            hi = Vec2::new(hi.x.max(p.x), hi.y.max(p.y));
        }
    }
    if lo.x > hi.x { 0.0 } else { (hi - lo).length() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Primitive, Style};

    fn circle(log: &mut Log, entity: &str, x: f64, y: f64, r: f64) -> Primitive {
        Primitive {
            shape: Shape::Circle {
                center: Vec2::new(x, y),
                radius: r,
            },
            style: Style::default(),
            entity: log.entities.intern(entity),
            level: 0,
        }
    }

    /// A robot moving at 1000 units/s along x, a static zone, and a tree
    /// of ten nodes that jump around.
    fn log() -> Log {
        let mut log = Log::new();
        for k in 0..50 {
            let t = 100.0 + k as f64 * 0.02;
            let mut prims = vec![
                circle(&mut log, "robot", 1000.0 * (t - 100.0), 0.0, 90.0),
                circle(&mut log, "zone", 3000.0, 2000.0, 500.0),
            ];
            for n in 0..10 {
                prims.push(circle(
                    &mut log,
                    "tree",
                    ((k * 7 + n * 13) % 17) as f64 * 300.0,
                    1000.0,
                    10.0,
                ));
            }
            log.push_frame(FrameTime::Instant(t), prims);
        }
        log
    }

    #[test]
    fn follows_what_moves_and_leaves_the_rest() {
        let m = Movers::from_log(&log());
        assert_eq!(m.objects(), 1);
        let mut out = Vec::new();
        m.at(100.5, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!((out[0].at.x - 500.0).abs() < 1e-6, "{out:?}");
        assert!((out[0].velocity.x - 1000.0).abs() < 1e-6);
        assert_eq!(out[0].radius, 90.0);
        // Before the log and after its last span: nothing.
        m.at(99.0, &mut out);
        assert!(out.is_empty());
        m.at(101.5, &mut out);
        assert!(out.is_empty());
        let (lo, hi) = m.time_range().unwrap();
        assert!(
            (lo - 100.0).abs() < 1e-9 && (hi - 100.98).abs() < 1e-9,
            "{lo} {hi}"
        );
    }

    #[test]
    fn pairs_nearest_first() {
        let a = vec![(Vec2::new(0.0, 0.0), 1.0), (Vec2::new(10.0, 0.0), 1.0)];
        let b = vec![(Vec2::new(11.0, 0.0), 1.0), (Vec2::new(1.0, 0.0), 1.0)];
        assert_eq!(pair_up(&a, &b, 5.0), vec![(0, 1), (1, 0)]);
        assert!(pair_up(&a, &b, 0.5).is_empty());
    }

    #[test]
    fn very_many_groups_are_cut_to_those_that_travel_most() {
        let mut log = Log::new();
        for k in 0..50 {
            let t = k as f64 * 0.1;
            let prims: Vec<Primitive> = (0..300)
                .map(|g| circle(&mut log, &format!("r{g}"), (g as f64 + 1.0) * 100.0 * t, 0.0, 1.0))
                .collect();
            log.push_frame(FrameTime::Instant(t), prims);
        }
        let m = Movers::from_log(&log);
        assert_eq!(m.groups().len(), MAX_GROUPS);
        assert!(m.groups().iter().any(|g| g.name == "r299"));
        assert!(!m.groups().iter().any(|g| g.name == "r0"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any coordinates and times (not finite, huge, repeated) give
        /// movers without a panic, and positions at any time are finite.
        #[test]
        fn any_log_is_followed_without_panic(
            frames in proptest::collection::vec(
                (proptest::num::f64::ANY, proptest::collection::vec(
                    (0u8..4, proptest::num::f64::ANY, proptest::num::f64::ANY, 0.0f64..500.0), 0..6)),
                0..40),
            at in proptest::num::f64::ANY,
        ) {
            let mut log = Log::new();
            for (t, shapes) in frames {
                let prims: Vec<Primitive> = shapes
                    .into_iter()
                    .map(|(e, x, y, r)| circle(&mut log, &format!("e{e}"), x, y, r))
                    .collect();
                log.push_frame(FrameTime::Instant(t), prims);
            }
            let m = Movers::from_log(&log);
            let mut out = Vec::new();
            m.at(at, &mut out);
            if let Some((lo, hi)) = m.time_range() {
                m.at(0.5 * (lo + hi), &mut out);
            }
            for o in &out {
                proptest::prop_assert!(o.radius.is_finite());
            }
        }
    }

    #[test]
    fn no_frames_or_nan_is_nothing() {
        assert!(Movers::from_log(&Log::new()).is_empty());
        let mut log = Log::new();
        for k in 0..5 {
            let p = circle(&mut log, "r", f64::NAN, k as f64, 1.0);
            log.push_frame(FrameTime::Instant(k as f64), [p]);
        }
        assert!(Movers::from_log(&log).is_empty());
    }
}
