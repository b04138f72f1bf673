//! rosbag2's `metadata.yaml`: what `ros2 bag record` writes beside a
//! recording's files — its storage (`mcap`, `sqlite3`), its files in order
//! (`relative_file_paths`, and from version 5 each file's time span and
//! count in `files`), its compression (`compression_format`,
//! `compression_mode`: `FILE` or `MESSAGE`), its topics with their counts,
//! and from later versions `custom_data` (6), `type_description_hash` (7),
//! `ros_distro` (8) and the offered QoS profiles as a list instead of a
//! YAML string (9). Every version, 1 to 9, is read; a key a version does
//! not have is simply absent.
//!
//! The YAML is parsed by `yaml-rust2`'s event parser into a small tree of
//! our own ([`Node`]), bounded: the text is at most [`MAX_METADATA`] bytes
//! (read through [`crate::files::read_text_limited`]), nesting at most
//! [`MAX_DEPTH`] deep, and aliases (which rosbag2 never writes, and which
//! could expand a small text into a huge tree) are refused.

use yaml_rust2::parser::{Event, Parser};

/// The longest `metadata.yaml` read (4 MiB; rosbag2's are a few KB, a
/// recording of a thousand topics a few hundred).
pub const MAX_METADATA: u64 = 4 << 20;

/// The deepest nesting of a `metadata.yaml` (rosbag2's is 5 deep).
pub const MAX_DEPTH: usize = 32;

/// The key every `metadata.yaml` starts with.
pub const TOP_KEY: &str = "rosbag2_bagfile_information";

/// Whether a file's first bytes are a `metadata.yaml`'s: its top key,
/// after blank lines, comments and a `---`.
pub fn looks_like_metadata(start: &[u8]) -> bool {
    let text = String::from_utf8_lossy(start);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---")
        .is_some_and(|l| l.starts_with(TOP_KEY) && l[TOP_KEY.len()..].trim_start().starts_with(':'))
}

/// How a recording's files are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// Each file whole (`bag_0.mcap.zstd`).
    File,
    /// Each message's payload.
    Message,
}

/// One file of a recording, as `metadata.yaml` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartInfo {
    /// Its path, relative to the recording's folder, as written.
    pub path: String,
    /// Its first message's time (ns since the epoch), from version 5 on.
    pub start_ns: Option<u64>,
    /// Its time span (ns), from version 5 on.
    pub duration_ns: Option<u64>,
    /// Its messages, from version 5 on.
    pub count: Option<u64>,
}

/// One topic, as `metadata.yaml` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicInfo {
    /// `/camera/image_raw`.
    pub name: String,
    /// `sensor_msgs/msg/Image` (or `sensor_msgs/Image`, before Foxy).
    pub type_name: String,
    /// `cdr`.
    pub serialization_format: String,
    /// How many QoS profiles it was offered with (a YAML text before
    /// version 9, a list from it on).
    pub qos_profiles: usize,
    /// Its messages in the whole recording.
    pub count: Option<u64>,
}

/// A `metadata.yaml`, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// Its `version` (1 to 9 known; a later one is read as far as it goes).
    pub version: u64,
    /// `mcap` or `sqlite3` (empty when not said).
    pub storage: String,
    /// The recording's files, in order.
    pub files: Vec<PartInfo>,
    /// `zstd`, or empty.
    pub compression_format: String,
    /// What is compressed.
    pub compression: Compression,
    /// The first message's time (ns since the epoch).
    pub start_ns: Option<u64>,
    /// The recording's time span (ns).
    pub duration_ns: Option<u64>,
    /// Its messages.
    pub message_count: Option<u64>,
    /// Its topics.
    pub topics: Vec<TopicInfo>,
    /// The ROS distribution that recorded it (version 8 on; empty when not
    /// said).
    pub ros_distro: String,
    /// What the recording's writer added (version 6 on), in order.
    pub custom_data: Vec<(String, String)>,
}

/// Why a `metadata.yaml` cannot be read (the messages do not name the
/// file: whoever reports the error does).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MetadataError {
    /// Not YAML, at a place.
    #[error("line {line}, column {column}: {message}")]
    Yaml {
        line: usize,
        column: usize,
        message: String,
    },
    /// YAML, but not the shape a `metadata.yaml` has.
    #[error("{0}")]
    Shape(String),
}

/// A YAML value, as far as a `metadata.yaml` needs one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A scalar, as written (`~` and an empty value included).
    Scalar(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, keys in order (only scalar keys).
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn scalar(&self) -> Option<&str> {
        match self {
            Node::Scalar(s) => Some(s),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Node::Scalar(s) if s.is_empty() || s == "~" || s == "null")
    }
}

/// Parses one YAML document into a [`Node`], within [`MAX_DEPTH`], no
/// aliases.
pub fn parse_yaml(text: &str) -> Result<Node, MetadataError> {
    let mut parser = Parser::new_from_str(text);
    // Open collections: a sequence's items, or a mapping's pairs and the
    // key waiting for its value.
    enum Open {
        Seq(Vec<Node>),
        Map(Vec<(String, Node)>, Option<String>),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut done: Option<Node> = None;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| MetadataError::Yaml {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_owned(),
        })?;
        let at = |message: &str| MetadataError::Yaml {
            line: mark.line(),
            column: mark.col() + 1,
            message: message.to_owned(),
        };
        let node = match event {
            Event::StreamEnd | Event::DocumentEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentStart => continue,
            Event::Alias(_) => return Err(at("an alias (`*name`), which a metadata.yaml never has")),
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(at(&format!("nested more than {MAX_DEPTH} deep")));
                }
                stack.push(match event {
                    Event::SequenceStart(..) => Open::Seq(Vec::new()),
                    _ => Open::Map(Vec::new(), None),
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq(items)) => Node::Seq(items),
                Some(Open::Map(pairs, _)) => Node::Map(pairs),
                None => return Err(at("a collection closed that was not open")),
            },
            Event::Scalar(s, ..) => Node::Scalar(s),
        };
        match stack.last_mut() {
            None => {
                done = Some(node);
                // One document: what follows is not read.
                break;
            }
            Some(Open::Seq(items)) => items.push(node),
            Some(Open::Map(pairs, key)) => match key.take() {
                Some(k) => pairs.push((k, node)),
                None => match node {
                    Node::Scalar(k) => *key = Some(k),
                    _ => return Err(at("a key that is not a plain value")),
                },
            },
        }
    }
    Ok(done.unwrap_or(Node::Scalar(String::new())))
}

fn shape(m: impl Into<String>) -> MetadataError {
    MetadataError::Shape(m.into())
}

/// A number (`u64`), where one is said; an absent or null value is `None`.
fn number(n: Option<&Node>, what: &str) -> Result<Option<u64>, MetadataError> {
    match n {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(Node::Scalar(s)) => s
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| shape(format!("{what} is `{s}`, not a whole number of at least 0"))),
        Some(_) => Err(shape(format!("{what} is not a number"))),
    }
}

/// A text value (absent or null: empty).
fn text(n: Option<&Node>, what: &str) -> Result<String, MetadataError> {
    match n {
        None => Ok(String::new()),
        Some(n) if n.is_null() => Ok(String::new()),
        Some(Node::Scalar(s)) => Ok(s.clone()),
        Some(_) => Err(shape(format!("{what} is not a text"))),
    }
}

/// A list (absent or null: empty).
fn list<'a>(n: Option<&'a Node>, what: &str) -> Result<&'a [Node], MetadataError> {
    match n {
        None => Ok(&[]),
        Some(n) if n.is_null() => Ok(&[]),
        Some(Node::Seq(items)) => Ok(items),
        Some(_) => Err(shape(format!("{what} is not a list"))),
    }
}

/// `{nanoseconds: N}` / `{nanoseconds_since_epoch: N}` as rosbag2 writes
/// times and durations.
fn nanos(n: Option<&Node>, key: &str, what: &str) -> Result<Option<u64>, MetadataError> {
    match n {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(m @ Node::Map(_)) => number(m.get(key), what),
        Some(_) => Err(shape(format!("{what} is not `{key}: N`"))),
    }
}

/// Reads a `metadata.yaml`'s text.
pub fn parse(yaml: &str) -> Result<Metadata, MetadataError> {
    let root = parse_yaml(yaml)?;
    let info = root
        .get(TOP_KEY)
        .ok_or_else(|| shape(format!("it has no `{TOP_KEY}:` at its top")))?;
    if !matches!(info, Node::Map(_)) {
        return Err(shape(format!("`{TOP_KEY}` is not a mapping")));
    }
    let version = number(info.get("version"), "version")?.unwrap_or(1);
    let storage = text(info.get("storage_identifier"), "storage_identifier")?;
    let mut files: Vec<PartInfo> = list(info.get("relative_file_paths"), "relative_file_paths")?
        .iter()
        .map(|p| {
            p.scalar()
                .map(|p| PartInfo {
                    path: p.to_owned(),
                    start_ns: None,
                    duration_ns: None,
                    count: None,
                })
                .ok_or_else(|| shape("an entry of relative_file_paths is not a path"))
        })
        .collect::<Result<_, _>>()?;
    // Version 5 on: each file's span and count.
    for f in list(info.get("files"), "files")? {
        let path = text(f.get("path"), "a file's path")?;
        let start_ns = nanos(
            f.get("starting_time"),
            "nanoseconds_since_epoch",
            "a file's starting_time",
        )?;
        let duration_ns = nanos(f.get("duration"), "nanoseconds", "a file's duration")?;
        let count = number(f.get("message_count"), "a file's message_count")?;
        let part = PartInfo {
            path: path.clone(),
            start_ns,
            duration_ns,
            count,
        };
        match files.iter_mut().find(|p| p.path == path) {
            Some(p) => *p = part,
            None => files.push(part),
        }
    }
    let compression_format = text(info.get("compression_format"), "compression_format")?;
    let mode = text(info.get("compression_mode"), "compression_mode")?;
    let compression = match mode.to_ascii_uppercase().as_str() {
        "" | "NONE" => Compression::None,
        "FILE" => Compression::File,
        "MESSAGE" => Compression::Message,
        other => {
            return Err(shape(format!(
                "compression_mode `{other}` is none of FILE, MESSAGE"
            )));
        }
    };
    if compression != Compression::None && !compression_format.eq_ignore_ascii_case("zstd") {
        return Err(shape(format!(
            "compression_format `{compression_format}`: only zstd is read"
        )));
    }
    let mut topics = Vec::new();
    for t in list(info.get("topics_with_message_count"), "topics_with_message_count")? {
        let m = t
            .get("topic_metadata")
            .ok_or_else(|| shape("a topic without its topic_metadata"))?;
        let qos_profiles = match m.get("offered_qos_profiles") {
            None => 0,
            Some(n) if n.is_null() => 0,
            // Before version 9: the profiles as a YAML text of their own.
            Some(Node::Scalar(s)) => match parse_yaml(s) {
                Ok(Node::Seq(items)) => items.len(),
                Ok(_) => 0,
                Err(e) => {
                    return Err(shape(format!(
                        "the offered_qos_profiles of topic `{}` are not YAML ({e})",
                        text(m.get("name"), "a topic's name").unwrap_or_default()
                    )));
                }
            },
            Some(Node::Seq(items)) => items.len(),
            Some(Node::Map(_)) => 1,
        };
        topics.push(TopicInfo {
            name: text(m.get("name"), "a topic's name")?,
            type_name: text(m.get("type"), "a topic's type")?,
            serialization_format: text(m.get("serialization_format"), "a topic's serialization_format")?,
            qos_profiles,
            count: number(t.get("message_count"), "a topic's message_count")?,
        });
    }
    let custom_data = match info.get("custom_data") {
        None => Vec::new(),
        Some(n) if n.is_null() => Vec::new(),
        Some(Node::Map(pairs)) => pairs
            .iter()
            .map(|(k, v)| Ok((k.clone(), text(Some(v), "a custom_data value")?)))
            .collect::<Result<_, MetadataError>>()?,
        Some(_) => return Err(shape("custom_data is not a mapping")),
    };
    Ok(Metadata {
        version,
        storage,
        files,
        compression_format,
        compression,
        start_ns: nanos(
            info.get("starting_time"),
            "nanoseconds_since_epoch",
            "starting_time",
        )?,
        duration_ns: nanos(info.get("duration"), "nanoseconds", "duration")?,
        message_count: number(info.get("message_count"), "message_count")?,
        topics,
        ros_distro: text(info.get("ros_distro"), "ros_distro")?,
        custom_data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rosbag2's own test bags' metadata (ros2/rosbag2 at 25304dd, Apache
    /// 2.0), versions 4 to 8, as committed under `tests/data/real/ros2/`.
    fn real(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/real/ros2")
            .join(name)
            .join("metadata.yaml");
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn reads_rosbag2s_own_versions() {
        let m = parse(&real("mcap-wbag-split5")).unwrap();
        assert_eq!((m.version, m.storage.as_str()), (4, "mcap"));
        let names: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "wbag_0.mcap",
                "wbag_1.mcap",
                "wbag_2.mcap",
                "wbag_3.mcap",
                "wbag_4.mcap"
            ]
        );
        assert_eq!(m.message_count, Some(6074));
        assert_eq!(m.topics.len(), 8);
        assert_eq!(m.topics[0].name, "HHH");
        assert_eq!(m.topics[0].count, Some(726));
        assert_eq!(m.compression, Compression::None);

        let m = parse(&real("mcap-topics-and-services-v8")).unwrap();
        assert_eq!((m.version, m.storage.as_str()), (8, "mcap"));
        assert_eq!(m.files.len(), 1);
        assert_eq!(m.files[0].start_ns, Some(1_699_345_836_270_074_454));
        assert_eq!(m.files[0].duration_ns, Some(70_653_944));
        assert_eq!(m.files[0].count, Some(10));
        assert_eq!(m.topics.len(), 5);
        // The QoS profiles as a YAML text of their own: one profile each.
        assert!(m.topics.iter().all(|t| t.qos_profiles == 1));
        assert!(m.custom_data.is_empty());

        let m = parse(&real("sqlite3-talker-v4")).unwrap();
        assert_eq!((m.version, m.storage.as_str()), (4, "sqlite3"));
        assert_eq!(m.topics.iter().map(|t| t.count.unwrap()).sum::<u64>(), 20);
    }

    #[test]
    fn later_versions_and_compression() {
        let v9 = "rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: mcap\n  \
                  duration:\n    nanoseconds: 5\n  starting_time:\n    nanoseconds_since_epoch: 10\n  \
                  message_count: 3\n  topics_with_message_count:\n    - topic_metadata:\n        \
                  name: /a\n        type: std_msgs/msg/String\n        serialization_format: cdr\n        \
                  offered_qos_profiles:\n          - history: keep_last\n            depth: 10\n          \
                  - history: keep_all\n        type_description_hash: RIHS01_x\n      message_count: 3\n  \
                  compression_format: zstd\n  compression_mode: MESSAGE\n  relative_file_paths:\n    \
                  - b_0.mcap\n  files:\n    - path: b_0.mcap\n      starting_time:\n        \
                  nanoseconds_since_epoch: 10\n      duration:\n        nanoseconds: 5\n      \
                  message_count: 3\n  custom_data:\n    robot: r2\n    run: \"7\"\n  ros_distro: jazzy\n";
        let m = parse(v9).unwrap();
        assert_eq!(m.version, 9);
        assert_eq!(m.compression, Compression::Message);
        assert_eq!(m.topics[0].qos_profiles, 2);
        assert_eq!(m.ros_distro, "jazzy");
        assert_eq!(
            m.custom_data,
            vec![
                ("robot".to_owned(), "r2".to_owned()),
                ("run".to_owned(), "7".to_owned())
            ]
        );
        // Version 1: files and topics only.
        let v1 = "rosbag2_bagfile_information:\n  version: 1\n  storage_identifier: sqlite3\n  \
                  relative_file_paths:\n    - x/x_0.db3\n  topics_with_message_count:\n    \
                  - topic_metadata:\n        name: /t\n        type: sensor_msgs/Imu\n        \
                  serialization_format: cdr\n      message_count: 1\n";
        let m = parse(v1).unwrap();
        assert_eq!((m.version, m.files[0].path.as_str()), (1, "x/x_0.db3"));
        assert_eq!(m.topics[0].type_name, "sensor_msgs/Imu");
        let file = v1.replace(
            "version: 1",
            "version: 3\n  compression_format: zstd\n  compression_mode: FILE",
        );
        assert_eq!(parse(&file).unwrap().compression, Compression::File);
        let lz4 = file.replace("format: zstd", "format: lz4");
        assert!(parse(&lz4).unwrap_err().to_string().contains("lz4"));
    }

    #[test]
    fn refuses_what_is_not_metadata() {
        for (text, says) in [
            ("a: [1, 2", "line"),
            ("other: 1\n", "rosbag2_bagfile_information"),
            ("rosbag2_bagfile_information: 3\n", "not a mapping"),
            ("rosbag2_bagfile_information:\n  version: -1\n", "version"),
            (
                "rosbag2_bagfile_information:\n  relative_file_paths: 7\n",
                "not a list",
            ),
            ("x: &a [1]\nrosbag2_bagfile_information: *a\n", "alias"),
            (
                "rosbag2_bagfile_information:\n  compression_mode: SOMETIMES\n",
                "SOMETIMES",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        let deep = format!(
            "rosbag2_bagfile_information: {}1{}",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert!(parse(&deep).unwrap_err().to_string().contains("nested"));
        assert!(looks_like_metadata(b"# x\n---\nrosbag2_bagfile_information:\n"));
        assert!(!looks_like_metadata(b"rosbag2_bagfile_informationX: 1\n"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random YAML-ish text never panics.
        #[test]
        fn random_text_never_panics(s in "(rosbag2_bagfile_information:\n)?([ -~\n]{0,40}|[ \\-:\\[\\]{}&*!|>'\"#\n a-z0-9]{0,200})") {
            let _ = parse(&s);
        }

        /// A real metadata.yaml with bytes changed or cut never panics.
        #[test]
        fn mutated_real_metadata_never_panics(
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..8),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let mut bytes = real("mcap-topics-and-services-v8").into_bytes();
            for (at, v) in edits {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            bytes.truncate(cut % (bytes.len() + 1));
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }
    }
}
