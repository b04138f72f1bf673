//! What a recording holds, whatever its container: its topics (name,
//! message type, encoding, the definitions it carries), its time range, and
//! its messages read in time order, only of the topics asked for
//! ([`BagReader`]). `ros::mcap_file` reads MCAP, `ros::db3` rosbag2's SQLite
//! storage; everything above reads through this.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// How a topic's messages are encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// ROS 2's CDR (`cdr`).
    Cdr,
    /// JSON (Foxglove's schemas).
    Json,
    /// Protocol buffers (Foxglove's schemas).
    Protobuf,
    /// Anything else, by the name the file gives.
    Other(String),
}

impl Encoding {
    /// From the name a container gives (`cdr`, `json`, `protobuf`).
    pub fn from_name(name: &str) -> Encoding {
        match name {
            "cdr" => Encoding::Cdr,
            "json" => Encoding::Json,
            "protobuf" => Encoding::Protobuf,
            other => Encoding::Other(other.to_owned()),
        }
    }
}

/// The definition of a topic's message type carried in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaText {
    /// `ros2msg`, `ros2idl`, `jsonschema`, `protobuf`.
    pub encoding: String,
    /// The definition (for `ros2msg`: the type's `.msg` text, then each
    /// type it uses after a `====` line and `MSG: pkg/Type`).
    pub data: Vec<u8>,
}

/// One topic of a recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    /// The container's own number for it (an MCAP channel id, a db3 topic id).
    pub id: u32,
    /// `/camera/image_raw`.
    pub name: String,
    /// `sensor_msgs/msg/Image` (as the file spells it).
    pub type_name: String,
    /// How its messages are encoded.
    pub encoding: Encoding,
    /// Its type's definition, when the file carries one.
    pub schema: Option<SchemaText>,
    /// How many messages it has, when the file says.
    pub count: Option<u64>,
}

/// A recording's table of contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BagInfo {
    /// Its topics, by id.
    pub topics: Vec<Topic>,
    /// The first and last message's log time (ns since the epoch).
    pub time_range: Option<(u64, u64)>,
    /// Whether messages can be found without reading everything before them
    /// (an MCAP with its summary and chunk indexes, a db3).
    pub indexed: bool,
    /// What the reader noticed and worked around (no index, a torn end).
    pub notes: Vec<String>,
}

impl BagInfo {
    /// The topic with container id `id`.
    pub fn topic(&self, id: u32) -> Option<&Topic> {
        self.topics.iter().find(|t| t.id == id)
    }

    /// The topic called `name`.
    pub fn by_name(&self, name: &str) -> Option<&Topic> {
        self.topics.iter().find(|t| t.name == name)
    }
}

/// One message as read.
#[derive(Clone, Copy, Debug)]
pub struct BagMessage<'a> {
    /// Its topic's id ([`Topic::id`]).
    pub topic: u32,
    /// When it was recorded (ns since the epoch).
    pub log_time: u64,
    /// Its encoded bytes.
    pub data: &'a [u8],
}

/// Why a recording cannot be read. The messages do not name the file:
/// whoever reports the error does, once.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// The file cannot be opened or read.
    #[error("cannot read it")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not what its format says, at a place.
    #[error("{message}")]
    Corrupt { path: PathBuf, message: String },
}

/// The first `n` bytes of the file at `path` (fewer when it is shorter):
/// where a container's magic is.
pub fn file_start(path: &Path, n: u64) -> Result<Vec<u8>, BagError> {
    use std::io::Read;
    let io = |source| BagError::Io {
        path: path.to_owned(),
        source,
    };
    let mut start = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(n)
        .read_to_end(&mut start)
        .map_err(io)?;
    Ok(start)
}

/// Reads a recording's messages.
pub trait BagReader: Send {
    /// The recording's table of contents.
    fn info(&self) -> &BagInfo;

    /// Calls `each` with the messages of the topics in `topics` (ids), in
    /// log-time order, from log time `from` (ns) on, until it breaks or the
    /// messages end. Messages of other topics are skipped, without being
    /// decompressed where the container allows. Memory stays within a chunk
    /// or two. A torn end keeps every complete message before it and adds a
    /// note (returned).
    fn read(
        &mut self,
        topics: &[u32],
        from: Option<u64>,
        each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
    ) -> Result<Vec<String>, BagError>;
}
