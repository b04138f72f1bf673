//! ROS 2 recordings (MCAP, rosbag2's SQLite `.db3`): the camera topic as a
//! frame source, its `CameraInfo` and the transforms as a full camera, and
//! what the robot's software drew for RViz and Foxglove as a log.
//!
//! - [`bag`]: a recording's topics and messages, whatever its container;
//!   [`mcap_file`] and [`db3`] read the two containers.
//! - [`msgdef`]: message definitions (`.msg` text, as the files carry them,
//!   and the standard ones built in); [`cdr`] decodes a message from its
//!   definition into a [`value::Value`] tree.
//! - [`recording`]: a recording opened (container, definitions, the role
//!   of each topic, the transform tree of [`tf`]).
//! - [`drawings`]: markers ([`markers`]), paths and poses, and drawings in
//!   the picture's pixels ([`annotations`]) as a log;
//!   [`source`]: the camera topic as a frame source, its pictures decoded
//!   by [`picture`] and its calibration made by [`camera`].
//!
//! [`MCAP`] and [`DB3`] are the recordings' lines in the format table.

pub mod annotations;
pub mod bag;
pub mod camera;
pub mod cameras;
pub mod cdr;
pub mod cloud;
pub mod db3;
pub mod drawings;
pub mod folder;
pub mod json;
pub mod markers;
mod mcap_check;
pub mod mcap_file;
pub mod mesh;
pub mod metadata;
pub mod msgdef;
pub mod picture;
pub mod protobuf;
pub mod recording;
pub mod scene;
pub mod source;
pub mod split;
pub mod tf;
pub mod value;

use std::path::Path;

use crate::input::{Format, Head, LogReader, ReadContext};
use crate::log::{Log, ReadError};

/// The format table's line for recordings as `ros2 bag record` leaves
/// them: the folder (or its `metadata.yaml`, or a file compressed whole,
/// `.mcap.zstd`), its parts read as one.
pub const ROSBAG2: Format = Format {
    log: Some(LogReader::File(read_log)),
    source: Some(source::open),
    contents: Some(contents),
    ..Format::new(
        "rosbag2",
        "ROS 2 recording folder (rosbag2)",
        "a folder holding metadata.yaml or .mcap/.db3 files, its metadata.yaml \
         (\"rosbag2_bagfile_information:\"), or a zstd-compressed .mcap.zstd/.db3.zstd",
        "FOLDER/, metadata.yaml, *.mcap.zstd, *.db3.zstd",
        recognise_rosbag2,
    )
};

/// A bag folder, its `metadata.yaml`, or a recording file compressed whole
/// (zstd's magic, and a recording's name or a bag folder around it).
fn recognise_rosbag2(h: &Head<'_>) -> bool {
    let Some(path) = h.path else {
        return false;
    };
    if h.dir {
        return folder::is_bag_dir(path);
    }
    if h.gzip {
        return false;
    }
    if metadata::looks_like_metadata(h.bytes) {
        return true;
    }
    h.start().starts_with(&folder::ZSTD_MAGIC)
        && (path
            .file_name()
            .is_some_and(|n| folder::is_recording_name(&n.to_string_lossy()))
            || path
                .parent()
                .is_some_and(|d| d.join(folder::METADATA_FILE).is_file()))
}

/// The format table's line for MCAP recordings: a log (what the robot's
/// software drew) and a frame source (its camera).
pub const MCAP: Format = Format {
    log: Some(LogReader::File(read_log)),
    source: Some(source::open),
    contents: Some(contents),
    ..Format::new(
        "mcap",
        "MCAP recording (ROS 2, Foxglove)",
        "an MCAP file (\"\\x89MCAP0\")",
        "*.mcap",
        |h: &Head<'_>| !h.gzip && mcap_file::looks_like_mcap(h.start()),
    )
};

/// The format table's line for rosbag2's SQLite recordings.
pub const DB3: Format = Format {
    log: Some(LogReader::File(read_log)),
    source: Some(source::open),
    contents: Some(contents),
    ..Format::new(
        "db3",
        "ROS 2 recording (rosbag2 SQLite)",
        "an SQLite database (\"SQLite format 3\")",
        "*.db3",
        |h: &Head<'_>| !h.gzip && db3::looks_like_db3(h.start()),
    )
};

/// Reads what a recording's software drew as a log.
fn read_log(path: &Path, cx: &ReadContext<'_>) -> Result<Log, ReadError> {
    let mut rec = recording::open(path).map_err(|e| ReadError::Other(Box::new(e)))?;
    let options = drawings::DrawingOptions {
        world: cx.options.world.clone(),
        topic: cx.options.topic.clone(),
    };
    drawings::read_log(&mut rec, &options).map_err(|e| ReadError::Other(Box::new(e)))
}

/// The longest topic or type name `log info` shows whole (longer ones
/// are cut in the middle).
const TOPIC_COLUMN: usize = 120;

/// What `log info` says of a recording's files: its folder, metadata
/// version, storage, parts, compression, distribution and custom data
/// (`None` for a lone file).
fn layout_line(layout: &folder::Layout) -> Option<String> {
    let dir = layout.dir.as_ref()?;
    let present = layout.parts.iter().filter(|p| p.present).count();
    let files = if present == layout.parts.len() {
        format!("{} file{}", present, if present == 1 { "" } else { "s" })
    } else {
        format!("{present} of {} files", layout.parts.len())
    };
    let mut line = format!("recording:   folder {}, {files}", dir.display());
    match &layout.metadata {
        None => line.push_str(", no metadata.yaml"),
        Some(m) => {
            line.push_str(&format!(", metadata.yaml version {}", m.version));
            if !m.storage.is_empty() {
                line.push_str(&format!(", storage {}", m.storage));
            }
            match m.compression {
                metadata::Compression::None => {}
                metadata::Compression::File => line.push_str(", each file compressed (zstd)"),
                metadata::Compression::Message => line.push_str(", each message compressed (zstd)"),
            }
            if !m.ros_distro.is_empty() {
                line.push_str(&format!(", ROS {}", m.ros_distro));
            }
            if !m.custom_data.is_empty() {
                let kv: Vec<String> = m.custom_data.iter().map(|(k, v)| format!("{k}={v}")).collect();
                line.push_str(&format!(", custom data {}", kv.join(" ")));
            }
        }
    }
    Some(line)
}

/// A recording's topics (name, type, count, what underlay makes of them),
/// its time range, the camera it is drawn through, and its notes, for
/// `log info`.
fn contents(path: &Path) -> Result<Vec<String>, String> {
    use recording::Role;
    let mut rec = recording::open(path).map_err(|e| crate::error::chain(&e))?;
    let info = rec.info().clone();
    let mut out = Vec::new();
    if let Some(line) = layout_line(&rec.layout) {
        out.push(line);
    }
    let span = info
        .time_range
        .map(|(a, b)| {
            format!(
                ", {:.3} s from {:.3} s (log time)",
                (b.saturating_sub(a)) as f64 * 1e-9,
                a as f64 * 1e-9
            )
        })
        .unwrap_or_default();
    out.push(format!(
        "topics:      {}{span}{}",
        info.topics.len(),
        if info.indexed { ", indexed" } else { "" }
    ));
    // Names come from the file: shown cut, and the columns no wider than
    // a long real name (a width over 65,535 is not even formattable).
    let shown = |s: &str| crate::log::summary::shorten(s, TOPIC_COLUMN);
    let name_w = info
        .topics
        .iter()
        .map(|t| shown(&t.name).chars().count())
        .max()
        .unwrap_or(0);
    let type_w = info
        .topics
        .iter()
        .map(|t| shown(&t.type_name).chars().count())
        .max()
        .unwrap_or(0);
    for t in &info.topics {
        let role = Role::of(&t.type_name);
        let count = t.count.map_or("?".to_owned(), |c| c.to_string());
        let what = match rec.undecodable(t) {
            Some(why) if role != Role::Other => format!("not read: {why}"),
            Some(why) => format!("not drawn: {} ({why})", role.why_not_drawn().unwrap_or_default()),
            None if role == Role::Other => format!(
                "not drawn: {} (decodable)",
                role.why_not_drawn().unwrap_or_default()
            ),
            None => role.use_of().to_owned(),
        };
        out.push(format!(
            "  {:name_w$}  {:type_w$}  {count:>7}  {what}",
            shown(&t.name),
            shown(&t.type_name)
        ));
    }
    // The picture shown, as `view` and `export` choose it, or why none.
    match cameras::picture_topic(&rec, None) {
        Err(why) => out.push(format!("camera:      none: {why}")),
        Ok((_, first, _)) => {
            let first = &first;
            let start = info.time_range.map_or(0.0, |(a, _)| a as f64 * 1e-9);
            let placed = source::placement(&mut rec, first, None, "").and_then(|p| {
                // A fixed camera is the same at any time: one that no picture
                // can be drawn through (a damaged transform) is not placed.
                match p.tf.is_fixed(&p.world, &p.intrinsics.frame) {
                    true => p
                        .at(start)
                        .map(|_| p)
                        .map_err(|e| format!("the camera cannot be drawn through: {e}")),
                    false => Ok(p),
                }
            });
            match placed {
                Ok(p) => out.push(format!(
                    "camera:      {first}, frame `{}` in world `{}`{}",
                    p.intrinsics.frame,
                    p.world,
                    if p.tf.is_fixed(&p.world, &p.intrinsics.frame) {
                        " (fixed)"
                    } else {
                        " (moving: a calibration per frame)"
                    }
                )),
                Err(why) => out.push(format!("camera:      {first}: not placed ({why}); give --calib")),
            }
        }
    }
    let in_pixels = info.topics.iter().any(|t| Role::of(&t.type_name).in_pixels());
    if in_pixels && let Ok(Some(c)) = cameras::Cameras::of(&mut rec, None) {
        let named = |c: &cameras::Camera| match c.frame.as_str() {
            "" => c.topic.clone(),
            f => format!("{} (frame `{f}`)", c.topic),
        };
        let others: Vec<String> = c.others.iter().map(named).collect();
        out.push(format!(
            "cameras:     {} shown, {}: drawings in pixels are drawn on their own camera's \
             picture only (choose with --camera TOPIC)",
            named(&c.shown),
            others.join(", ")
        ));
    }
    for n in info.notes.iter().chain(&rec.notes) {
        out.push(format!("note:        {n}"));
    }
    Ok(out)
}
