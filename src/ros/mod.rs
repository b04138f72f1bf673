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
//! - [`drawings`]: markers ([`markers`]), paths and poses, what RViz's
//!   default displays draw of sensors, maps and poses ([`displays`]:
//!   [`scan`], [`cloud2`], [`grid`], [`poses`]), the transform tree as
//!   axes ([`tf_axes`]), and drawings in the picture's pixels
//!   ([`annotations`]) as a log;
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
pub mod cloud2;
pub mod db3;
pub mod displays;
pub mod drawings;
pub mod grid;
pub mod json;
pub mod markers;
pub mod mcap_file;
pub mod mesh;
pub mod msgdef;
pub mod picture;
pub mod poses;
pub mod protobuf;
pub mod recording;
pub mod scan;
pub mod scene;
pub mod source;
pub mod tf;
pub mod tf_axes;
pub mod value;

use std::path::Path;

use crate::input::{Format, Head, LogReader, ReadContext};
use crate::log::{Log, ReadError};

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
        tf_axes: cx.options.tf_axes,
        intensity: cx.options.intensity,
    };
    drawings::read_log(&mut rec, &options).map_err(|e| ReadError::Other(Box::new(e)))
}

/// A recording's topics (name, type, count, what underlay makes of them),
/// its time range, the camera it is drawn through, and its notes, for
/// `log info`.
fn contents(path: &Path) -> Result<Vec<String>, String> {
    use recording::Role;
    let mut rec = recording::open(path).map_err(|e| crate::error::chain(&e))?;
    let info = rec.info().clone();
    let mut out = Vec::new();
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
    let name_w = info
        .topics
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    let type_w = info
        .topics
        .iter()
        .map(|t| t.type_name.chars().count())
        .max()
        .unwrap_or(0);
    for t in &info.topics {
        let role = Role::of(&t.type_name);
        let count = t.count.map_or("?".to_owned(), |c| c.to_string());
        let what = match rec.undecodable(t) {
            Some(why) if role != Role::Other => format!("not read: {why}"),
            Some(why) => format!("({why})"),
            None if role == Role::Other => "not drawn (decodable)".to_owned(),
            None => role.use_of().to_owned(),
        };
        out.push(format!(
            "  {:name_w$}  {:type_w$}  {count:>7}  {what}",
            t.name, t.type_name
        ));
    }
    let pictures: Vec<String> = rec
        .topics_of(Role::Image)
        .into_iter()
        .chain(rec.topics_of(Role::CompressedImage))
        .chain(rec.topics_of(Role::CompressedVideo))
        .map(|t| t.name.clone())
        .collect();
    if let Some(first) = pictures.first() {
        match source::placement(&mut rec, first, None, "") {
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
