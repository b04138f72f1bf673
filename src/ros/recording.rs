//! A ROS 2 recording opened: its container (MCAP or rosbag2's SQLite),
//! the definitions of its message types (those the file carries, over the
//! standard ones built in), its topics sorted by what underlay makes of
//! them ([`Role`]), its messages decoded, and its transform tree.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::bag::{BagError, BagInfo, BagReader, Encoding, Topic};
use super::msgdef::{Registry, normalise};
use super::tf::{TfTree, Transform};
use super::value::{Struct, Value};

/// Why a recording cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// The container cannot be read.
    #[error(transparent)]
    Bag(#[from] BagError),
    /// The recording cannot give what was asked of it (the message does
    /// not name the file: whoever reports the error does).
    #[error("{message}")]
    Usage { path: PathBuf, message: String },
}

/// What underlay makes of a topic, from its message type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `sensor_msgs/Image`: pictures.
    Image,
    /// `sensor_msgs/CompressedImage`: pictures.
    CompressedImage,
    /// `foxglove_msgs/CompressedVideo`: pictures.
    CompressedVideo,
    /// `sensor_msgs/CameraInfo`: the camera's lens.
    CameraInfo,
    /// `tf2_msgs/TFMessage`: transforms.
    Transforms,
    /// `visualization_msgs/Marker`.
    Marker,
    /// `visualization_msgs/MarkerArray`.
    MarkerArray,
    /// `nav_msgs/Path`.
    Path,
    /// `geometry_msgs/PoseStamped`.
    PoseStamped,
    /// `geometry_msgs/PoseArray`.
    PoseArray,
    /// `foxglove_msgs/SceneUpdate`.
    SceneUpdate,
    /// Foxglove's `PointCloud`.
    PointCloud,
    /// `visualization_msgs/ImageMarker`: a drawing in the picture's pixels.
    ImageMarker,
    /// Foxglove's `ImageMarkerArray`: image markers.
    ImageMarkerArray,
    /// Foxglove's `ImageAnnotations`: drawings in the picture's pixels.
    ImageAnnotations,
    /// Anything else.
    Other,
}

impl Role {
    /// The role of messages of `type_name`.
    pub fn of(type_name: &str) -> Role {
        match normalise(type_name).as_str() {
            "sensor_msgs/msg/Image" | "foxglove.RawImage" => Role::Image,
            "sensor_msgs/msg/CompressedImage" | "foxglove.CompressedImage" => Role::CompressedImage,
            "foxglove_msgs/msg/CompressedVideo" | "foxglove.CompressedVideo" => Role::CompressedVideo,
            "sensor_msgs/msg/CameraInfo" | "foxglove.CameraCalibration" => Role::CameraInfo,
            "tf2_msgs/msg/TFMessage" => Role::Transforms,
            "visualization_msgs/msg/Marker" => Role::Marker,
            "visualization_msgs/msg/MarkerArray" => Role::MarkerArray,
            "nav_msgs/msg/Path" => Role::Path,
            "geometry_msgs/msg/PoseStamped" | "foxglove.PoseInFrame" | "foxglove_msgs/msg/PoseInFrame" => {
                Role::PoseStamped
            }
            "geometry_msgs/msg/PoseArray" | "foxglove.PosesInFrame" | "foxglove_msgs/msg/PosesInFrame" => {
                Role::PoseArray
            }
            "foxglove.PointCloud" | "foxglove_msgs/msg/PointCloud" => Role::PointCloud,
            "foxglove_msgs/msg/SceneUpdate" | "foxglove.SceneUpdate" => Role::SceneUpdate,
            "foxglove.FrameTransform" | "foxglove.FrameTransforms" => Role::Transforms,
            "visualization_msgs/msg/ImageMarker" => Role::ImageMarker,
            "foxglove_msgs/msg/ImageMarkerArray" | "visualization_msgs/msg/ImageMarkerArray" => {
                Role::ImageMarkerArray
            }
            "foxglove_msgs/msg/ImageAnnotations" | "foxglove.ImageAnnotations" => Role::ImageAnnotations,
            _ => Role::Other,
        }
    }

    /// Pictures.
    pub fn is_picture(self) -> bool {
        matches!(self, Role::Image | Role::CompressedImage | Role::CompressedVideo)
    }

    /// Drawings in the picture's pixels.
    pub fn in_pixels(self) -> bool {
        matches!(
            self,
            Role::ImageMarker | Role::ImageMarkerArray | Role::ImageAnnotations
        )
    }

    /// Drawings, placed in the world or in the picture's pixels.
    pub fn is_drawing(self) -> bool {
        matches!(
            self,
            Role::Marker
                | Role::MarkerArray
                | Role::Path
                | Role::PoseStamped
                | Role::PoseArray
                | Role::SceneUpdate
                | Role::PointCloud
                | Role::ImageMarker
                | Role::ImageMarkerArray
                | Role::ImageAnnotations
        )
    }

    /// Why messages of this role are not drawn (`None`: they are drawn,
    /// in the world or in the picture's pixels). The one place that says
    /// it, for `log info` and for a recording of which nothing is drawn: a
    /// role added for a new drawing is drawn here by [`Role::is_drawing`].
    pub fn why_not_drawn(self) -> Option<&'static str> {
        if self.is_drawing() {
            return None;
        }
        Some(match self {
            Role::Image | Role::CompressedImage | Role::CompressedVideo => "pictures: the video drawn on",
            Role::CameraInfo => "the camera's lens: what the drawings are seen through",
            Role::Transforms => "transforms: where each frame is",
            _ => "not a message type underlay draws",
        })
    }

    /// What underlay does with it, as `log info` says.
    pub fn use_of(self) -> &'static str {
        match self {
            Role::Image | Role::CompressedImage | Role::CompressedVideo => "pictures",
            Role::CameraInfo => "camera lens",
            Role::Transforms => "transforms",
            Role::Marker
            | Role::MarkerArray
            | Role::Path
            | Role::PoseStamped
            | Role::PoseArray
            | Role::SceneUpdate
            | Role::PointCloud => "drawn",
            Role::ImageMarker | Role::ImageMarkerArray | Role::ImageAnnotations => {
                "drawn in the picture's pixels"
            }
            Role::Other => "",
        }
    }
}

/// What [`Recording::read`] calls with each message: its topic, log time
/// (ns) and the message decoded, or why it cannot be.
pub type Each<'a> = dyn FnMut(&Topic, u64, Result<Struct<'_>, String>) -> ControlFlow<()> + 'a;

/// A recording: its container and its types' definitions.
pub struct Recording {
    /// The file.
    pub path: PathBuf,
    bag: Box<dyn BagReader>,
    registry: Registry,
    protobuf: super::protobuf::Descriptors,
    /// What was noticed about the definitions it carries.
    pub notes: Vec<String>,
    /// Its files.
    pub layout: super::folder::Layout,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Opens a recording: a bag folder, its `metadata.yaml`, any file in it,
/// or a lone MCAP or `.db3` file (see [`super::folder`]), its parts read
/// as one ([`super::split`]).
pub fn open(path: &Path) -> Result<Recording, RosError> {
    let layout = super::folder::resolve(path)?;
    let plain = layout.parts.len() == 1 && layout.notes.is_empty() && layout.parts[0].present;
    let bag: Box<dyn BagReader> = if plain {
        super::split::open_container(&layout.parts[0].path)?
    } else {
        super::split::open(&layout)?
    };
    let mut registry = Registry::builtin();
    let mut protobuf = super::protobuf::Descriptors::default();
    let mut notes = Vec::new();
    for topic in &bag.info().topics {
        let Some(schema) = &topic.schema else { continue };
        let text = String::from_utf8_lossy(&schema.data);
        let added = match schema.encoding.as_str() {
            "ros2msg" => registry
                .add_ros2msg(&topic.type_name, &text)
                .map_err(|e| e.to_string()),
            "ros2idl" => registry
                .add_ros2idl(&topic.type_name, &text)
                .map_err(|e| e.to_string()),
            "protobuf" => protobuf.add(&topic.type_name, &schema.data),
            _ => Ok(()),
        };
        if let Err(e) = added {
            notes.push(format!(
                "{}: its definition of {} is not understood ({e})",
                topic.name, topic.type_name
            ));
        }
    }
    if let Some(m) = &layout.metadata {
        notes.extend(metadata_notes(m, bag.info()));
    }
    Ok(Recording {
        path: path.to_owned(),
        bag,
        registry,
        protobuf,
        notes,
        layout,
    })
}

impl Recording {
    /// The recording's name: its folder's, when it is a bag folder given
    /// as the folder or its `metadata.yaml`; else the file's stem.
    pub fn name(&self) -> String {
        let given_dir = self.path.is_dir()
            || self
                .path
                .file_name()
                .is_some_and(|n| n == super::folder::METADATA_FILE);
        let named = match (&self.layout.dir, given_dir) {
            (Some(d), true) => std::fs::canonicalize(d)
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_owned())),
            _ => self.path.file_stem().map(|s| s.to_owned()),
        };
        named
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The recording's table of contents.
    pub fn info(&self) -> &BagInfo {
        self.bag.info()
    }

    /// Why the messages of `topic` cannot be decoded (`None`: they can).
    pub fn undecodable(&self, topic: &Topic) -> Option<String> {
        match &topic.encoding {
            Encoding::Cdr => {}
            Encoding::Json => return None,
            Encoding::Protobuf if self.protobuf.knows(&topic.type_name) => return None,
            Encoding::Protobuf => {
                return Some(format!(
                    "no protobuf descriptor for {}",
                    crate::error::shorten(&topic.type_name, 120)
                ));
            }
            Encoding::Other(e) => return Some(format!("messages encoded as `{e}` are not decoded")),
        }
        let missing: Vec<String> = self
            .registry
            .missing(&topic.type_name)
            .iter()
            .map(|m| crate::error::shorten(m, 120))
            .collect();
        (!missing.is_empty()).then(|| format!("no definition of {}", missing.join(", ")))
    }

    /// Why `topic` gives no drawing (`None`: it is drawn): its role's
    /// reason ([`Role::why_not_drawn`]), or why its messages cannot be
    /// decoded.
    pub fn not_drawn(&self, topic: &Topic) -> Option<String> {
        let role = Role::of(&topic.type_name);
        match (role.why_not_drawn(), self.undecodable(topic)) {
            (None, None) => None,
            (None, Some(why)) => Some(format!("cannot be decoded: {why}")),
            (Some(r), _) => Some(r.to_owned()),
        }
    }

    /// The topics of `role`, in the recording's order.
    pub fn topics_of(&self, role: Role) -> Vec<&Topic> {
        self.info()
            .topics
            .iter()
            .filter(|t| Role::of(&t.type_name) == role)
            .collect()
    }

    /// Calls `each` with the topic, log time (ns) and decoded message (or
    /// why it cannot be decoded) of every message of `topics` from `from` on.
    /// Returns what was noticed about the container's end.
    pub fn read(
        &mut self,
        topics: &[u32],
        from: Option<u64>,
        each: &mut Each<'_>,
    ) -> Result<Vec<String>, RosError> {
        let by_id: HashMap<u32, Topic> = self
            .info()
            .topics
            .iter()
            .filter(|t| topics.contains(&t.id))
            .map(|t| (t.id, t.clone()))
            .collect();
        let registry = &self.registry;
        let protobuf = &self.protobuf;
        let notes = self.bag.read(topics, from, &mut |m| {
            let Some(topic) = by_id.get(&m.topic) else {
                return ControlFlow::Continue(());
            };
            // rosbag2's compression MESSAGE: each payload zstd'ed (said by
            // metadata.yaml, or seen: no encoding starts with zstd's magic).
            let unpacked;
            let data = if m.data.starts_with(&super::folder::ZSTD_MAGIC) {
                match unpack(m.data) {
                    Ok(d) => {
                        unpacked = d;
                        &unpacked[..]
                    }
                    Err(e) => return each(topic, m.log_time, Err(e)),
                }
            } else {
                m.data
            };
            let decoded = match topic.encoding {
                Encoding::Json => super::json::decode(&topic.type_name, data),
                Encoding::Protobuf => protobuf.decode(&topic.type_name, data),
                _ => super::cdr::decode(registry, &topic.type_name, data).map_err(|e| e.to_string()),
            }
            .map_err(|e| format!("{e} (its first bytes: {})", first_bytes(data)));
            each(topic, m.log_time, decoded)
        })?;
        Ok(notes)
    }

    /// The transform tree of every `tf2_msgs/TFMessage` topic (a topic
    /// named `…tf_static` holds at every time), and what could not be read.
    pub fn transforms(&mut self) -> Result<(TfTree, Vec<String>), RosError> {
        let ids: Vec<u32> = self.topics_of(Role::Transforms).iter().map(|t| t.id).collect();
        let mut tree = TfTree::default();
        let mut problems = crate::log::validate::Tally::default();
        let mut kept = Vec::new();
        let mut notes = self.read(&ids, None, &mut |topic, _, msg| {
            let fixed = topic.name.ends_with("tf_static");
            match msg {
                Ok(msg) => {
                    // A foxglove.FrameTransform is one transform; the others
                    // (TFMessage, foxglove.FrameTransforms) hold a list.
                    let one = [Value::Struct(msg.clone())];
                    let list = match msg.array("transforms") {
                        Some(list) => list,
                        None => &one[..],
                    };
                    for t in list {
                        if let Err(e) = add_transform(&mut tree, t.as_struct(), fixed) {
                            let m = format!("{}: {e}", topic.name);
                            if problems.keep(&m) {
                                kept.push(m);
                            }
                        }
                    }
                }
                Err(e) => {
                    let m = format!("{}: {e}", topic.name);
                    if problems.keep(&m) {
                        kept.push(m);
                    }
                }
            }
            ControlFlow::Continue(())
        })?;
        tree.finish();
        notes.extend(kept);
        notes.extend(problems.summary());
        Ok((tree, notes))
    }
}

/// A message's first bytes in hex, for saying why it does not decode.
pub fn first_bytes(data: &[u8]) -> String {
    let shown: Vec<String> = data.iter().take(16).map(|b| format!("{b:02x}")).collect();
    match data.len() {
        0 => "none: it is empty".to_owned(),
        n if n > 16 => format!("{} … of {n}", shown.join(" ")),
        _ => shown.join(" "),
    }
}

/// A payload compressed with zstd (rosbag2's compression MESSAGE),
/// decompressed within the input budget for compressed data
/// ([`crate::bounded`]: at most `GZIP_RATIO` times its size).
fn unpack(data: &[u8]) -> Result<Vec<u8>, String> {
    use crate::bounded::{Budget, InputSize, Metered};
    let size = InputSize {
        gzip: true,
        len: Some(data.len() as u64),
    };
    let budget = Budget::current();
    let limit = budget.limit(size);
    let decoder = zstd::stream::read::Decoder::new(data).map_err(|e| e.to_string())?;
    let metered = Metered::new(decoder, limit);
    let over = metered.flag();
    let out = crate::bounded::read_capped(metered, limit).map_err(|e| {
        format!(
            "a zstd-compressed message that does not decompress ({e}; its first bytes: {})",
            first_bytes(data)
        )
    })?;
    if over.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(format!(
            "a zstd-compressed message of {} bytes that {}",
            data.len(),
            budget.exceeded(size, limit)
        ));
    }
    Ok(out)
}

/// What `metadata.yaml` says that the files do not.
fn metadata_notes(m: &super::metadata::Metadata, info: &BagInfo) -> Vec<String> {
    let mut notes = Vec::new();
    for t in &m.topics {
        if let (Some(said), Some(found)) = (t.count, info.by_name(&t.name).and_then(|f| f.count))
            && said != found
        {
            notes.push(format!(
                "{}: metadata.yaml counts {said} messages, its files hold {found}",
                t.name
            ));
        }
    }
    notes
}

/// Adds one `geometry_msgs/TransformStamped` to the tree.
fn add_transform(tree: &mut TfTree, t: Option<&Struct<'_>>, fixed: bool) -> Result<(), String> {
    let t = t.ok_or("a transform that is not a message")?;
    // A geometry_msgs/TransformStamped, or Foxglove's FrameTransform.
    let parent = t
        .str("header.frame_id")
        .or_else(|| t.str("parent_frame_id"))
        .ok_or("a transform without a parent frame")?;
    let child = t
        .str("child_frame_id")
        .ok_or("a transform without a child frame")?;
    let stamp = super::markers::stamp(t.sub("header"))
        .or_else(|| t.seconds("timestamp").filter(|s| *s > 0.0))
        .unwrap_or(0.0);
    let tr = t.sub("transform").unwrap_or(t);
    let v = tr
        .sub("translation")
        .and_then(|v| Some([v.f64("x")?, v.f64("y")?, v.f64("z")?]));
    let q = tr
        .sub("rotation")
        .and_then(|q| Some([q.f64("x")?, q.f64("y")?, q.f64("z")?, q.f64("w")?]));
    let (Some(v), Some(q)) = (v, q) else {
        return Err("a transform without a translation and rotation".into());
    };
    let transform = Transform::new(q, v)
        .ok_or_else(|| format!("the transform {parent} → {child} is not a rigid transform"))?;
    tree.add(parent, child, stamp, transform, fixed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compressed message is decompressed within its budget; one that
    /// does not decompress says so with its first bytes.
    #[test]
    fn compressed_messages_unpack_or_say_why() {
        let packed = zstd::encode_all(&b"\x00\x01\x00\x00hello"[..], 3).unwrap();
        assert_eq!(unpack(&packed).unwrap(), b"\x00\x01\x00\x00hello");
        let mut bad = super::super::folder::ZSTD_MAGIC.to_vec();
        bad.extend([0xff; 20]);
        let e = unpack(&bad).unwrap_err();
        assert!(
            e.contains("does not decompress") && e.contains("28 b5 2f fd ff"),
            "{e}"
        );
        // A bomb: 80 MiB of zeros from a few KB, more than the 64 MiB a
        // compressed input of that size may deliver.
        let bomb = zstd::encode_all(&vec![0u8; 80 << 20][..], 1).unwrap();
        assert!(bomb.len() < 1 << 20);
        let e = unpack(&bomb).unwrap_err();
        assert!(e.contains("more than"), "{e}");
        assert_eq!(first_bytes(&[]), "none: it is empty");
        assert!(first_bytes(&[7; 40]).ends_with("… of 40"));
    }
}
