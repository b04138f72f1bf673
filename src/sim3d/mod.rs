//! RoboCup 3D soccer simulation: reading what the league's servers and
//! agents record, and placing what each robot saw in the world.
//!
//! - [`input`]: what every reader shares: files read whole, gzip'ed or
//!   plain, with a size bound; errors, warnings and lines.
//! - [`field`]: pitch geometry and the field markers' world positions.
//! - [`scene`]: scene graphs (full and diff) and the objects labelled in them.
//! - [`robots`]: the robot models the league's servers ship, and how a
//!   scene says which a robot is.
//! - [`monitor`]: monitor logs (rcssservermj's RSMP, SimSpark's
//!   `sparkmonitor.log`) → ball, robots and game state per frame, from a
//!   file or message by message from a monitor connection.
//! - [`framing`]: the monitor port's length-prefixed messages.
//! - [`perception`]: agent perception logs → what each message told the agent.
//! - [`pose`]: the camera's pose from seen markers, or from the body.
//! - [`place`]: what each agent saw, placed in the world and drawn as a
//!   visualization log.
//! - [`camera`]: an agent's head camera over time as a full camera.
//! - [`roboviz`]: RoboViz's UDP drawing protocol; [`rvd`]: recordings of
//!   its datagrams and their conversion into a visualization log.
//! - [`replay`]: RoboViz's buffers replayed datagram by datagram, for a
//!   recording and for a live run alike.
//! - [`record`]: recording RoboViz datagrams (and monitor times) live.
//! - [`logs`]: the format table's lines for these files.
//!
//! Their S-expressions are parsed by [`crate::sexp`], shared with the 2D
//! league's readers.
//!
//! Times are the simulation's clock in seconds; positions are metres in
//! the field frame (origin at the centre spot, x towards the right goal).

pub mod camera;
pub mod field;
pub mod framing;
pub mod input;
pub mod logs;
pub mod monitor;
pub mod perception;
pub mod place;
pub mod pose;
pub mod record;
pub mod render;
pub mod replay;
pub mod robots;
pub mod roboviz;
pub mod rvd;
pub mod scene;

pub use field::FieldGeometry;
pub(crate) use input::Warnings;
pub use input::{LoadError, MAX_WARNINGS, ParseError, Warning};
pub use monitor::MonitorLog;
