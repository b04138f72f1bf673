//! Live runs (`underlay live`): a camera stream and logs arriving over the
//! network, drawn behind the robots as they come, and sent on as a stream
//! (or recorded) — the thesis's "interactive or at least live view".
//!
//! - `camera`: the live picture (any input FFmpeg opens, or a file at its
//!   own pace), decoded on its own thread with low-latency demuxing,
//!   reopened with back-off when it stalls, frames dropped and counted
//!   only when the drawing cannot keep up.
//! - `sources`: logs over the network — native logs over UDP (one frame a
//!   datagram) and TCP (the file format as a stream), and RoboViz's
//!   drawing datagrams over UDP, replayed set by set as a recording is.
//! - `sim3d`: the 3D league's simulator monitor stream (a TCP client of
//!   its monitor port, reconnecting with back-off), read as a monitor log
//!   is: the ball's trail, and the robots RoboViz's agent annotations are
//!   placed at; the run's RoboViz sources and it share one scene.
//! - `ssl`: the SSL league's vision, referee and tracker streams
//!   (multicast or unicast), drawn together as one match's game log is,
//!   with the cameras' calibrations their geometry carries (`--camera N`).
//! - `store`: the logs as they arrive, one per source (the frames it
//!   ended, and what it shows now until further notice), kept within a
//!   window and a budget.
//! - `merger`: the store merged and indexed for drawing whenever something
//!   new came, on a thread of its own (a flooding source costs the picture
//!   nothing but staleness).
//! - `run`: the loop: each frame held back by the delay, its log time its
//!   arrival on this machine's clock plus the session's offset, drawn
//!   through the same pipeline and draw settings as `view` and `export`,
//!   encoded with low-latency settings to each output, and handed to the
//!   viewer in live mode ([`LiveSink`]) — the same drawn frames, so what
//!   the viewer shows is what the outputs write.
//! - `no_signal`: the card the outputs show at the camera's rate while it
//!   has no signal.
//! - `buffer`: the viewer's replay buffer, the last minutes of the
//!   camera's pictures coded alone as JPEG in memory within a bound, to
//!   pause, step back, play again, snap and sync on.
//!
//! Drawing is the pipeline's ([`crate::pipeline`]); what a session says
//! (calibration, mask, filter, offset) means what it means for a file.

mod buffer;
mod camera;
mod error;
mod merger;
mod no_signal;
mod run;
mod sim3d;
mod sources;
mod ssl;
mod store;

pub use buffer::{BufferCounts, BufferOptions, BufferSource, Recorder, ReplayBuffer};
pub use camera::{CameraOptions, CameraStatus, FirstPicture, LiveCamera, LiveFrame, now};
pub use error::LiveError;
pub use run::{Clock, LiveEnd, LiveOptions, LiveReport, LiveSink, LiveStatus, OutputKind, run, run_with};
pub use sim3d::MONITOR_PORT;
pub use sources::{LogSource, MAX_CONNECTIONS, ROBOVIZ_PORT, Receivers, start as start_sources};
pub use ssl::{MAX_SCENE_NAMES, SslStream};
pub use store::{CameraCalibration, LiveLogs, SourceCounts, SourceId, StoreOptions};
