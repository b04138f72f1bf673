//! The demo: a generated run of a RoboCup SSL Division B game (video,
//! visualization log, session and ground truth) that shows the whole
//! product with no file of the user's.

pub mod sim;
pub mod vislog;
pub mod world;
