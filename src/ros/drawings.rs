//! What a recording's software drew for RViz and Foxglove, as a log:
//! markers and marker arrays (their lives as [`super::markers`] keeps
//! them), paths and poses, placed in the world frame through the transform
//! tree at their stamps; and image markers and annotations in the
//! picture's pixels ([`super::annotations`]). Entities are the topic, then the marker namespace, then the id
//! (`markers/robots/blue/3`: the tree the viewer filters by); shapes are at
//! level 1, text at level 2.

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::sync::Arc;

use super::cameras::{Belongs, Cameras};
use super::markers::{self, Command, Drawn, Key, Life, Lives, Spec};
use super::recording::{Recording, Role, RosError};
use super::tf::{TfTree, Transform, frame_name};
use super::value::Struct;
use crate::log::{FrameTime, Header, LoadWarning, Log, Primitive, Rgba, TimeUnit};

/// In which frame the drawings are placed. (Which topics are drawn is the
/// session's entity filter: entities are named by their topic.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrawingOptions {
    /// The world frame (`map`, `odom`); the root of the transform tree
    /// when absent.
    pub world: Option<String>,
    /// The picture topic shown (the first when `None`): drawings in
    /// another camera's pixels are left out ([`super::cameras`]).
    pub topic: Option<String>,
}

/// The level of a drawing's shapes and of its text.
const SHAPE_LEVEL: i32 = 1;
const TEXT_LEVEL: i32 = 2;

/// How long an arrow of a pose is (m), as RViz's pose displays draw it:
/// 1 m for a pose, 0.3 m for each pose of an array.
const POSE_ARROW: f64 = 1.0;
const POSE_ARRAY_ARROW: f64 = 0.3;

/// The world frame of a recording: the one asked for, else the root of
/// the largest transform tree.
pub fn world_frame(tf: &TfTree, asked: Option<&str>) -> Option<String> {
    match asked {
        Some(w) => Some(frame_name(w).to_owned()),
        None => tf.roots().into_iter().next(),
    }
}

/// Warnings kept a few of each kind.
#[derive(Default)]
struct Warnings {
    tally: crate::log::validate::Tally,
    list: Vec<LoadWarning>,
}

impl Warnings {
    /// Says `message`, unless it was said already (every read of a torn
    /// recording ends at the same damage).
    fn push(&mut self, message: String) {
        if self.list.iter().any(|w| w.message == message) {
            return;
        }
        if self.tally.keep(&message) {
            self.list.push(LoadWarning {
                offset: None,
                frame: None,
                message,
            });
        }
    }

    fn finish(mut self) -> Vec<LoadWarning> {
        for message in self.tally.summary() {
            self.list.push(LoadWarning {
                offset: None,
                frame: None,
                message,
            });
        }
        self.list
    }
}

/// One topic's drawings as they are read.
struct TopicLives {
    entity_prefix: String,
    lives: Lives,
    /// Scene entities, named by their id alone.
    scene: bool,
}

/// Reads the drawings of a recording into a log.
pub fn read_log(rec: &mut Recording, options: &DrawingOptions) -> Result<Log, RosError> {
    let (tf, tf_notes) = rec.transforms()?;
    let world = world_frame(&tf, options.world.as_deref());
    if let (Some(w), Some(asked)) = (&world, &options.world)
        && !tf.knows(w)
    {
        let roots = tf.roots();
        let message = if roots.is_empty() {
            format!(
                "--world `{asked}`: the recording has no transforms (no tf2_msgs/TFMessage on /tf or \
                 /tf_static), so its drawings are in their own frames and there is no world frame to \
                 choose; leave out --world"
            )
        } else {
            format!(
                "no transform names the world frame `{asked}`; its frames' roots are: {}",
                roots.join(", ")
            )
        };
        return Err(RosError::Usage {
            path: rec.path.clone(),
            message,
        });
    }
    let mut warnings = Warnings::default();
    for n in rec.notes.iter().chain(&tf_notes) {
        warnings.push(n.clone());
    }
    let wanted: Vec<(u32, String, Role)> = rec
        .info()
        .topics
        .iter()
        .filter(|t| Role::of(&t.type_name).is_drawing())
        .map(|t| (t.id, t.name.clone(), Role::of(&t.type_name)))
        .collect();
    for t in &rec.info().topics {
        if let Some(why) = Role::of(&t.type_name)
            .is_drawing()
            .then(|| rec.undecodable(t))
            .flatten()
        {
            warnings.push(format!("{}: not drawn: {why}", t.name));
        }
    }
    // Drawings in the pixels of another camera than the one shown are
    // left out, counted per topic: (count, that camera's topic).
    let in_pixels = wanted.iter().any(|w| w.2.in_pixels());
    let cameras = if in_pixels {
        Cameras::of(rec, options.topic.as_deref())?
    } else {
        None
    };
    let mut elsewhere: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let ids: Vec<u32> = wanted.iter().map(|w| w.0).collect();
    let mut per_topic: HashMap<u32, TopicLives> = wanted
        .iter()
        .map(|(id, name, _)| {
            let prefix = name.trim_start_matches('/').to_owned();
            (
                *id,
                TopicLives {
                    entity_prefix: prefix,
                    lives: Lives::default(),
                    scene: false,
                },
            )
        })
        .collect();
    let roles: HashMap<u32, Role> = wanted.iter().map(|w| (w.0, w.2)).collect();
    let place = Placer {
        tf: &tf,
        world: world.as_deref(),
    };
    let mut last_time = f64::NEG_INFINITY;
    let end_notes = rec.read(&ids, None, &mut |topic, log_time, msg| {
        let now = log_time as f64 * 1e-9;
        last_time = last_time.max(now);
        let Some(state) = per_topic.get_mut(&topic.id) else {
            return ControlFlow::Continue(());
        };
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                warnings.push(format!(
                    "{}: a message at {now:.3} s cannot be decoded: {e}",
                    topic.name
                ));
                return ControlFlow::Continue(());
            }
        };
        let role = roles.get(&topic.id).copied().unwrap_or(Role::Other);
        // Whether a message in pixels is for another camera's picture.
        let mut other_camera =
            |frame: Option<&str>| match cameras.as_ref().map(|c| c.of_drawing(&topic.name, frame)) {
                Some(Belongs::Other(c)) => {
                    let e = elsewhere
                        .entry(topic.name.clone())
                        .or_insert((0, c.topic.clone()));
                    e.0 += 1;
                    true
                }
                _ => false,
            };
        let problems: Vec<String> = match role {
            Role::Marker => marker(&place, &mut state.lives, &msg, now)
                .err()
                .into_iter()
                .collect(),
            // Every marker of the array is applied, whatever the others.
            Role::MarkerArray => msg
                .array("markers")
                .unwrap_or(&[])
                .iter()
                .filter_map(|m| m.as_struct())
                .filter_map(|m| marker(&place, &mut state.lives, m, now).err())
                .collect(),
            Role::Path | Role::PoseStamped | Role::PoseArray | Role::PointCloud => {
                other(&place, &mut state.lives, &msg, role, now)
                    .err()
                    .into_iter()
                    .collect()
            }
            Role::ImageMarker if other_camera(msg.str("header.frame_id")) => Vec::new(),
            Role::ImageMarker => super::annotations::apply_marker(&mut state.lives, &msg, now)
                .err()
                .into_iter()
                .collect(),
            Role::ImageMarkerArray => msg
                .array("markers")
                .unwrap_or(&[])
                .iter()
                .filter_map(|m| m.as_struct())
                .filter(|m| !other_camera(m.str("header.frame_id")))
                .filter_map(|m| super::annotations::apply_marker(&mut state.lives, m, now).err())
                .collect(),
            Role::ImageAnnotations if other_camera(None) => Vec::new(),
            Role::ImageAnnotations => super::annotations::apply_annotations(&mut state.lives, &msg, now),
            Role::SceneUpdate => {
                state.scene = true;
                super::scene::apply(&mut state.lives, &msg, now, &|frame, t| {
                    place.world_from(frame, t)
                })
            }
            _ => Vec::new(),
        };
        for e in problems {
            warnings.push(format!("{}: {e}", topic.name));
        }
        ControlFlow::Continue(())
    })?;
    for n in end_notes {
        warnings.push(n);
    }
    if let Some(shown) = cameras.as_ref().map(|c| &c.shown) {
        for (topic, (n, camera)) in elsewhere {
            warnings.push(format!(
                "{topic}: {n} messages in the pixels of {camera}'s camera left out: the picture shown is \
                 {}'s (choose the camera with --camera TOPIC)",
                shown.topic
            ));
        }
    }
    let mut log = Log::new();
    log.header = Header {
        name: rec.name(),
        time_unit: TimeUnit::EpochSeconds,
        world_unit: "m".to_owned(),
        ..Header::default()
    };
    let mut topics: Vec<(u32, TopicLives)> = per_topic.into_iter().collect();
    topics.sort_by_key(|t| t.0);
    for (_, mut state) in topics {
        state.lives.finish();
        // Drawn in the order they were shown, then by namespace and id:
        // the same log from the same recording, whatever its container.
        let mut ended = std::mem::take(&mut state.lives.ended);
        ended.sort_by(|a, b| a.start.total_cmp(&b.start).then_with(|| a.key.cmp(&b.key)));
        for ended in ended {
            let entity = if state.scene {
                format!("{}/{}", state.entity_prefix, ended.key.0.trim_matches('/'))
            } else {
                entity_name(&state.entity_prefix, &ended.key)
            };
            let id = log.entities.intern(&entity);
            let pieces = match (&ended.life.locked, &world) {
                (Some(specs), Some(w)) if specs.first().is_some_and(|s| !tf.is_fixed(w, &s.frame)) => {
                    markers::locked_pieces(&tf, w, specs, ended.start, ended.end)
                }
                _ => vec![(ended.start, ended.end, ended.life.shapes)],
            };
            for (start, end, shapes) in pieces {
                let (prims, undrawable): (Vec<Primitive>, Vec<Primitive>) = shapes
                    .into_iter()
                    .map(|d| Primitive {
                        level: if d.is_text { TEXT_LEVEL } else { SHAPE_LEVEL },
                        shape: d.shape,
                        style: d.style,
                        entity: id,
                    })
                    .partition(crate::log::validate::drawable);
                // What every reader does with shapes that cannot be drawn
                // (a marker of infinite scale, say): dropped, and said.
                for p in &undrawable {
                    let why = crate::log::validate::shape_problem(p).unwrap_or_default();
                    warnings.push(format!(
                        "{entity} at {start:.3} s: a {} dropped: {why}",
                        p.shape.kind_name()
                    ));
                }
                if !prims.is_empty() {
                    log.push_frame(FrameTime::Persistent { start, end }, prims);
                }
            }
        }
    }
    if log.frames.is_empty() {
        warnings.push(nothing_drawn(rec));
    }
    log.warnings = warnings.finish();
    Ok(log)
}

/// What to say of a recording of which nothing is drawn: each topic and
/// why it is not drawn ([`super::recording::Recording::not_drawn`]).
fn nothing_drawn(rec: &Recording) -> String {
    let topics = &rec.info().topics;
    if topics.is_empty() {
        return "nothing is drawn: the recording has no topic".to_owned();
    }
    let each: Vec<String> = topics
        .iter()
        .map(|t| {
            let why = rec
                .not_drawn(t)
                .unwrap_or_else(|| "drawn, but no message of it gave a drawing".to_owned());
            format!("{} ({}): {why}", t.name, t.type_name)
        })
        .collect();
    format!(
        "nothing is drawn from the recording's topics: {}",
        each.join("; ")
    )
}

/// The entity of a marker: topic, namespace, id.
fn entity_name(prefix: &str, key: &Key) -> String {
    let ns = key.0.trim_matches('/');
    if ns.is_empty() {
        format!("{prefix}/{}", key.1)
    } else {
        format!("{prefix}/{ns}/{}", key.1)
    }
}

/// Places frames in the world.
struct Placer<'a> {
    tf: &'a TfTree,
    world: Option<&'a str>,
}

impl Placer<'_> {
    /// The transform from `frame` to the world at `t`.
    fn world_from(&self, frame: &str, t: f64) -> Result<Transform, String> {
        let frame = frame_name(frame);
        match self.world {
            Some(w) if w == frame => Ok(Transform::IDENTITY),
            Some(w) => self.tf.lookup(w, frame, t).map_err(|e| e.to_string()),
            // No transforms at all: every frame is the world.
            None => Ok(Transform::IDENTITY),
        }
    }
}

/// One marker message applied to its topic's markers.
fn marker(place: &Placer<'_>, lives: &mut Lives, msg: &Struct<'_>, now: f64) -> Result<(), String> {
    let t = markers::stamp(msg.sub("header")).unwrap_or(now);
    match markers::command(msg)? {
        Command::Delete(key) => lives.end(&key, t),
        Command::DeleteAll(ns) => lives.end_all(&ns, t),
        Command::Add(key) => {
            let spec = markers::spec(msg)?;
            let world = place.world_from(&spec.frame, t)?;
            let shapes = markers::shapes(&spec, &world)?;
            let lifetime = spec.lifetime;
            let locked = spec.locked.then(|| Arc::from([spec]));
            lives.add(key, Life::shown_for(t, lifetime, shapes, locked));
        }
    }
    Ok(())
}

/// A path, pose, pose array or point cloud: shown until the topic's next
/// message.
fn other(
    place: &Placer<'_>,
    lives: &mut Lives,
    msg: &Struct<'_>,
    role: Role,
    now: f64,
) -> Result<(), String> {
    // ROS's header, or Foxglove's timestamp and frame beside the poses.
    let (t, frame) = match msg.sub("header") {
        Some(h) => (markers::stamp(Some(h)), h.str("frame_id")),
        None => (
            msg.seconds("timestamp").filter(|s| *s > 0.0 && s.is_finite()),
            msg.str("frame_id"),
        ),
    };
    let (t, frame) = (t.unwrap_or(now), frame.unwrap_or(""));
    let world = place.world_from(frame, t)?;
    let colour = match role {
        Role::Path => Rgba(0x19ff_00ff),
        _ => Rgba(0xff19_00ff),
    };
    let poses: Vec<Transform> = match role {
        Role::Path => msg
            .array("poses")
            .unwrap_or(&[])
            .iter()
            .filter_map(|p| markers::pose(p.as_struct()?.sub("pose")))
            .collect(),
        Role::PoseStamped => markers::pose(msg.sub("pose")).into_iter().collect(),
        _ => msg
            .array("poses")
            .unwrap_or(&[])
            .iter()
            .filter_map(|p| markers::pose(p.as_struct()))
            .collect(),
    };
    let shapes: Vec<Drawn> = if role == Role::PointCloud {
        super::cloud::shapes(msg, &world, t)?
    } else if role == Role::Path {
        let points: Vec<[f64; 3]> = poses.iter().map(|p| world.apply(p.translation)).collect();
        if points.len() < 2 {
            Vec::new()
        } else {
            vec![Drawn {
                shape: markers::path(&points, false),
                style: crate::log::Style {
                    thickness: 2.0,
                    ..crate::log::Style::color(colour)
                },
                is_text: false,
            }]
        }
    } else {
        let length = if role == Role::PoseStamped {
            POSE_ARROW
        } else {
            POSE_ARRAY_ARROW
        };
        poses
            .iter()
            .filter_map(|p| {
                let spec = Spec {
                    kind: markers::kind::ARROW,
                    pose: *p,
                    scale: [length, length * 0.1, length * 0.1],
                    color: colour,
                    points: Vec::new(),
                    colors: Vec::new(),
                    text: "".into(),
                    frame: frame.to_owned(),
                    locked: false,
                    lifetime: 0.0,
                    stamp: Some(t),
                };
                markers::shapes(&spec, &world).ok()
            })
            .flatten()
            .collect()
    };
    lives.add(
        (Arc::from(""), 0),
        Life {
            start: t,
            until: f64::INFINITY,
            shapes,
            locked: None,
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::Value;

    use crate::ros::value::build::{colour, msg as st, pose as at, time, top, xyz};

    /// A marker message: `kind` at `(x, y, z)` in `frame`.
    #[allow(clippy::too_many_arguments)]
    fn marker_msg(
        ns: &str,
        id: i64,
        kind: i64,
        action: i64,
        at: [f64; 3],
        frame: &str,
        stamp: f64,
        lifetime: f64,
        locked: bool,
    ) -> Struct<'static> {
        let header = st(vec![
            ("stamp", time(stamp)),
            ("frame_id", Value::Str(frame.to_owned().into())),
        ]);
        top(vec![
            ("header", header),
            ("ns", Value::Str(ns.to_owned().into())),
            ("id", Value::Int(id)),
            ("type", Value::Int(kind)),
            ("action", Value::Int(action)),
            ("pose", at_pose(at)),
            ("scale", xyz(0.2, 0.2, 0.2)),
            ("color", colour(1.0, 0.5, 0.0)),
            ("lifetime", time(lifetime)),
            ("frame_locked", Value::Bool(locked)),
            ("points", Value::Array(vec![])),
            ("colors", Value::Array(vec![])),
            ("text", Value::Str("".into())),
        ])
    }

    fn at_pose(p: [f64; 3]) -> Value<'static> {
        at(p[0], p[1], p[2])
    }

    fn centre(d: &[Drawn]) -> [f64; 3] {
        match &d[0].shape {
            crate::log::Shape::Raised(r) => match **r {
                crate::log::Raised::Sphere { center, .. } => center,
                ref other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn markers_live_as_rviz_keeps_them() {
        use markers::{action::*, kind::*};
        let tf = TfTree::default();
        let place = Placer {
            tf: &tf,
            world: Some("map"),
        };
        let mut lives = Lives::default();
        let m = |ns, id, action, stamp, lifetime| {
            marker_msg(
                ns,
                id,
                SPHERE,
                action,
                [1.0, 2.0, 0.5],
                "map",
                stamp,
                lifetime,
                false,
            )
        };
        // a/0 replaced at 2 s; a/1 deleted at 3 s; b/0 with a 0.5 s lifetime;
        // everything cleared at 4 s; a/0 again at 5 s, never ended.
        marker(&place, &mut lives, &m("a", 0, ADD, 1.0, 0.0), 1.0).unwrap();
        marker(&place, &mut lives, &m("a", 1, ADD, 1.0, 0.0), 1.0).unwrap();
        marker(&place, &mut lives, &m("b", 0, ADD, 1.5, 0.5), 1.5).unwrap();
        marker(&place, &mut lives, &m("a", 0, ADD, 2.0, 0.0), 2.0).unwrap();
        marker(&place, &mut lives, &m("a", 1, DELETE, 3.0, 0.0), 3.0).unwrap();
        marker(&place, &mut lives, &m("", 0, DELETEALL, 4.0, 0.0), 4.0).unwrap();
        marker(&place, &mut lives, &m("a", 0, ADD, 5.0, 0.0), 5.0).unwrap();
        lives.finish();
        let mut got: Vec<(String, f64, f64)> = lives
            .ended
            .iter()
            .map(|e| (format!("{}/{}", e.key.0, e.key.1), e.start, e.end))
            .collect();
        // Ended just before what ended them (a frame at that time shows that).
        for (_, _, end) in &mut got {
            if end.is_finite() && end.next_up().fract() == 0.0 {
                *end = end.next_up();
            }
        }
        got.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        assert_eq!(
            got,
            [
                ("a/0".to_owned(), 1.0, 2.0),
                ("a/1".to_owned(), 1.0, 3.0),
                ("b/0".to_owned(), 1.5, 2.0),
                ("a/0".to_owned(), 2.0, 4.0),
                ("a/0".to_owned(), 5.0, f64::INFINITY),
            ]
        );
        assert_eq!(centre(&lives.ended[0].life.shapes), [1.0, 2.0, 0.5]);
        // A stamp of 0 is the message's own time.
        let mut lives = Lives::default();
        marker(&place, &mut lives, &m("a", 0, ADD, 0.0, 0.0), 7.25).unwrap();
        lives.finish();
        assert_eq!(lives.ended[0].start, 7.25);
        // An action RViz does not know is said.
        assert!(marker(&place, &mut lives, &m("a", 0, 9, 1.0, 0.0), 1.0).is_err());
    }

    #[test]
    fn markers_are_placed_through_the_transforms_and_locked_ones_follow_their_frame() {
        use markers::{action::*, kind::*};
        let mut tf = TfTree::default();
        // The robot drives along x at 1 m/s from 0 to 2 s.
        for i in 0..=4 {
            let t = i as f64 * 0.5;
            tf.add(
                "map",
                "robot",
                t,
                Transform::new([0.0, 0.0, 0.0, 1.0], [t, 0.0, 0.0]).unwrap(),
                false,
            );
        }
        tf.finish();
        let place = Placer {
            tf: &tf,
            world: Some("map"),
        };
        let mut lives = Lives::default();
        marker(
            &place,
            &mut lives,
            &marker_msg("fixed", 0, SPHERE, ADD, [0.0, 1.0, 0.3], "robot", 0.5, 0.0, false),
            0.5,
        )
        .unwrap();
        marker(
            &place,
            &mut lives,
            &marker_msg("locked", 0, SPHERE, ADD, [0.0, 1.0, 0.3], "robot", 0.5, 1.0, true),
            0.5,
        )
        .unwrap();
        lives.finish();
        let fixed = lives.ended.iter().find(|e| &*e.key.0 == "fixed").unwrap();
        // Placed where the robot was at its stamp, and stays there.
        assert_eq!(centre(&fixed.life.shapes), [0.5, 1.0, 0.3]);
        let locked = lives.ended.iter().find(|e| &*e.key.0 == "locked").unwrap();
        assert_eq!((locked.start, locked.end), (0.5, 1.5));
        assert!(fixed.end == f64::INFINITY);
        let spec = locked.life.locked.as_ref().unwrap();
        let pieces = markers::locked_pieces(&tf, "map", spec, locked.start, locked.end);
        let got: Vec<(f64, f64, f64)> = pieces.iter().map(|(a, b, s)| (*a, *b, centre(s)[0])).collect();
        assert_eq!(got, [(0.5, 1.0f64.next_down(), 0.5), (1.0, 1.5, 1.0)]);
        // A frame no transform names is said.
        let e = marker(
            &place,
            &mut lives,
            &marker_msg("x", 0, SPHERE, ADD, [0.0; 3], "nowhere", 1.0, 0.0, false),
            1.0,
        );
        assert!(e.unwrap_err().contains("nowhere"));
    }
}

/// A recording written by Foxglove's SDK (JSON messages of its own
/// schemas), read end to end.
#[cfg(test)]
mod foxglove_json {
    use std::collections::BTreeMap;

    #[test]
    fn a_foxglove_json_recording_draws_its_scene_through_its_transforms() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fox.mcap");
        {
            let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let mut w = mcap::Writer::new(file).unwrap();
            let scene = w.add_schema("foxglove.SceneUpdate", "jsonschema", b"{}").unwrap();
            let tf = w
                .add_schema("foxglove.FrameTransform", "jsonschema", b"{}")
                .unwrap();
            let scene = w.add_channel(scene, "/scene", "json", &BTreeMap::new()).unwrap();
            let tf = w.add_channel(tf, "/tf", "json", &BTreeMap::new()).unwrap();
            let mut put = |ch: u16, t: u64, json: String| {
                let h = mcap::records::MessageHeader {
                    channel_id: ch,
                    sequence: 0,
                    log_time: t,
                    publish_time: t,
                };
                w.write_to_known_channel(&h, json.as_bytes()).unwrap();
            };
            let t0 = 1_700_000_000_000_000_000u64;
            for k in 0..3u64 {
                put(
                    tf,
                    t0 + k * 100_000_000,
                    format!(
                        r#"{{"timestamp":{{"sec":1700000000,"nsec":{}}},"parent_frame_id":"map","child_frame_id":"robot",
                        "translation":{{"x":{},"y":0,"z":0}},"rotation":{{"x":0,"y":0,"z":0,"w":1}}}}"#,
                        k * 100_000_000,
                        k as f64
                    ),
                );
            }
            put(scene, t0 + 100_000_000, r#"{"deletions":[],"entities":[{"timestamp":{"sec":1700000000,"nsec":100000000},
                "frame_id":"robot","id":"bot","lifetime":{"sec":0,"nsec":0},"frame_locked":false,"metadata":[],
                "arrows":[],"cubes":[],"spheres":[{"pose":{"position":{"x":0,"y":1,"z":0.5},"orientation":{"x":0,"y":0,"z":0,"w":1}},
                "size":{"x":0.2,"y":0.2,"z":0.2},"color":{"r":1,"g":0,"b":0,"a":1}}],"cylinders":[],"lines":[],"triangles":[],"texts":[],"models":[]}]}"#.to_owned());
            w.finish().unwrap();
        }
        let log = crate::formats::load_log(&path).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let f = &log.frames[0];
        let p = &log.frame_primitives(f)[0];
        assert_eq!(log.entities.name(p.entity), "scene/bot");
        // The robot was 1 m along x at the entity's stamp (0.1 s).
        match &p.shape {
            crate::log::Shape::Raised(r) => match **r {
                crate::log::Raised::Sphere { center, radius } => {
                    assert!(
                        (center[0] - 1.0).abs() < 1e-9 && center[1] == 1.0 && center[2] == 0.5,
                        "{center:?}"
                    );
                    assert!((radius - 0.1).abs() < 1e-9);
                }
                ref other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    /// Foxglove's PosesInFrame and PointCloud as JSON (the cloud's points
    /// base64, as Foxglove writes bytes in JSON): arrows and points in the
    /// world, each shown until its topic's next message.
    #[test]
    fn foxglove_poses_and_point_clouds_in_json_are_drawn() {
        use base64::Engine as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fox.mcap");
        {
            let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let mut w = mcap::Writer::new(file).unwrap();
            let poses = w
                .add_schema("foxglove.PosesInFrame", "jsonschema", b"{}")
                .unwrap();
            let cloud = w.add_schema("foxglove.PointCloud", "jsonschema", b"{}").unwrap();
            let poses = w.add_channel(poses, "/plan", "json", &BTreeMap::new()).unwrap();
            let cloud = w.add_channel(cloud, "/lidar", "json", &BTreeMap::new()).unwrap();
            let t0 = 1_700_000_000_000_000_000u64;
            let mut put = |ch: u16, t: u64, json: String| {
                let h = mcap::records::MessageHeader {
                    channel_id: ch,
                    sequence: 0,
                    log_time: t,
                    publish_time: t,
                };
                w.write_to_known_channel(&h, json.as_bytes()).unwrap();
            };
            put(
                poses,
                t0,
                r#"{"timestamp":{"sec":1700000000,"nsec":0},"frame_id":"map","poses":[
                    {"position":{"x":1,"y":2,"z":0},"orientation":{"x":0,"y":0,"z":0,"w":1}},
                    {"position":{"x":3,"y":2,"z":0},"orientation":{"x":0,"y":0,"z":0.7071068,"w":0.7071068}}]}"#
                    .to_owned(),
            );
            // Two points of three float32s: (4, 5, 0) and (6, 7, 1).
            let mut data = Vec::new();
            for v in [4.0f32, 5.0, 0.0, 6.0, 7.0, 1.0] {
                data.extend(v.to_le_bytes());
            }
            let b64 = base64::engine::general_purpose::STANDARD.encode(&data);
            put(
                cloud,
                t0 + 50_000_000,
                format!(
                    r#"{{"timestamp":{{"sec":1700000000,"nsec":50000000}},"frame_id":"map",
                    "pose":{{"position":{{"x":0,"y":0,"z":0}},"orientation":{{"x":0,"y":0,"z":0,"w":1}}}},
                    "point_stride":12,"fields":[{{"name":"x","offset":0,"type":7}},{{"name":"y","offset":4,"type":7}},
                    {{"name":"z","offset":8,"type":7}}],"data":"{b64}"}}"#
                ),
            );
            w.finish().unwrap();
        }
        let log = crate::formats::load_log(&path).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let of = |entity: &str| -> Vec<crate::log::Shape> {
            log.primitives
                .iter()
                .filter(|p| log.entities.name(p.entity).starts_with(entity))
                .map(|p| p.shape.clone())
                .collect()
        };
        // Two arrows of 0.3 m: the first along x from (1, 2).
        let arrows = of("plan");
        assert!(!arrows.is_empty(), "{:?}", log.entities);
        // The cloud: a dot on the floor at (4, 5), a ball at (6, 7, 1).
        let points = of("lidar");
        assert_eq!(points.len(), 2, "{points:?}");
        match &points[0] {
            crate::log::Shape::Circle { center, .. } => assert_eq!((center.x, center.y), (4.0, 5.0)),
            other => panic!("{other:?}"),
        }
        match &points[1] {
            crate::log::Shape::Raised(r) => match **r {
                crate::log::Raised::Sphere { center, .. } => assert_eq!(center, [6.0, 7.0, 1.0]),
                ref other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }
    /// Two cameras, each with its image markers and annotations: only the
    /// shown camera's are drawn (by the marker's frame, by the
    /// annotations' namespace), and the others are said to be left out.
    #[test]
    fn drawings_in_another_cameras_pixels_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stereo.mcap");
        {
            let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let mut w = mcap::Writer::new(file).unwrap();
            let mut channel = |schema: &str, topic: &str| {
                let s = w.add_schema(schema, "jsonschema", b"{}").unwrap();
                w.add_channel(s, topic, "json", &BTreeMap::new()).unwrap()
            };
            let left = channel("foxglove.CompressedImage", "/left/image");
            let right = channel("foxglove.CompressedImage", "/right/image");
            let markers = channel("visualization_msgs/msg/ImageMarker", "/markers");
            let left_notes = channel("foxglove.ImageAnnotations", "/left/annotations");
            let right_notes = channel("foxglove.ImageAnnotations", "/right/annotations");
            let t0 = 1_700_000_000_000_000_000u64;
            let mut put = |ch: u16, t: u64, json: String| {
                let h = mcap::records::MessageHeader {
                    channel_id: ch,
                    sequence: 0,
                    log_time: t0 + t,
                    publish_time: t0 + t,
                };
                w.write_to_known_channel(&h, json.as_bytes()).unwrap();
            };
            for (ch, frame) in [(left, "left_optical"), (right, "right_optical")] {
                put(
                    ch,
                    0,
                    format!(
                        r#"{{"timestamp":{{"sec":1700000000,"nsec":0}},"frame_id":"{frame}","format":"jpeg","data":""}}"#
                    ),
                );
            }
            for (id, frame) in [(1, "left_optical"), (2, "right_optical"), (3, "")] {
                put(
                    markers,
                    1000,
                    format!(
                        r#"{{"header":{{"stamp":{{"sec":1700000000,"nanosec":0}},"frame_id":"{frame}"}},"ns":"det","id":{id},
                        "type":0,"action":0,"position":{{"x":100,"y":50,"z":0}},"scale":5,
                        "outline_color":{{"r":1,"g":0,"b":0,"a":1}},"filled":0,"fill_color":{{"r":0,"g":0,"b":0,"a":0}},
                        "lifetime":{{"sec":0,"nanosec":0}},"points":[],"outline_colors":[]}}"#
                    ),
                );
            }
            for ch in [left_notes, right_notes] {
                put(
                    ch,
                    2000,
                    r#"{"circles":[{"timestamp":{"sec":1700000000,"nsec":0},"position":{"x":10,"y":10},"diameter":4,
                    "thickness":1,"fill_color":{"r":0,"g":0,"b":0,"a":0},"outline_color":{"r":0,"g":1,"b":0,"a":1}}],
                    "points":[],"texts":[]}"#
                        .to_owned(),
                );
            }
            w.finish().unwrap();
        }
        let drawn = |topic: Option<&str>| {
            let options = crate::input::ReadOptions {
                topic: topic.map(str::to_owned),
                ..Default::default()
            };
            let (log, _) = crate::formats::load_logs(std::slice::from_ref(&path), &options)
                .unwrap()
                .remove(0);
            let mut names: Vec<String> = log
                .frames
                .iter()
                .flat_map(|f| {
                    log.frame_primitives(f)
                        .iter()
                        .map(|p| log.entities.name(p.entity).to_owned())
                })
                .collect();
            names.sort();
            names.dedup();
            let warnings: Vec<String> = log.warnings.iter().map(|w| w.message.clone()).collect();
            (names, warnings)
        };
        // The first picture topic is shown: the left camera's drawings,
        // and the marker that names no frame.
        let (names, warnings) = drawn(None);
        assert_eq!(
            names,
            ["left/annotations/0", "markers/det/1", "markers/det/3"],
            "{warnings:?}"
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("/markers: 1 messages in the pixels of /right/image's camera")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("/right/annotations: 1 messages")),
            "{warnings:?}"
        );
        let info = crate::ros::contents(&path).unwrap().join("\n");
        assert!(
            info.contains(
                "cameras:     /left/image (frame `left_optical`) shown, /right/image (frame `right_optical`): \
                 drawings in pixels"
            ),
            "{info}"
        );
        let (names, warnings) = drawn(Some("/right/image"));
        assert_eq!(
            names,
            ["markers/det/2", "markers/det/3", "right/annotations/0"],
            "{warnings:?}"
        );
        assert!(
            warnings.iter().all(|w| w.contains("/left/image's camera")),
            "{warnings:?}"
        );
    }
}
