//! ROS 2 recordings (MCAP, rosbag2's SQLite `.db3`): the camera topic as a
//! frame source, its `CameraInfo` and the transforms as a full camera, and
//! what the robot's software drew for RViz and Foxglove as a log.
//!
//! - [`bag`]: a recording's topics and messages, whatever its container;
//!   [`mcap_file`] and [`db3`] read the two containers.
//! - [`msgdef`]: message definitions (`.msg` text, as the files carry them,
//!   and the standard ones built in); [`cdr`] decodes a message from its
//!   definition into a [`value::Value`] tree.

pub mod bag;
pub mod camera;
pub mod cdr;
pub mod db3;
// pub mod drawings;
pub mod markers;
pub mod mcap_file;
pub mod msgdef;
pub mod picture;
// pub mod recording;
pub mod tf;
pub mod value;
