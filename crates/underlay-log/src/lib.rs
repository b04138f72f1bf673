//! Visualization logs for underlay (which draws a robot's reasoning onto
//! the video of its run): the in-memory model, underlay's own
//! formats, and the [`Writer`] a robot program logs its reasoning with —
//! to a file, or over UDP or TCP to `underlay live`.
//!
//! A robot program depends on this crate alone: it needs no system
//! library (zstd, which builds its C from source, is its heaviest
//! dependency) and builds in well under a minute, where the application
//! needs FFmpeg, OpenCV and a GUI.
//!
//! ```
//! use underlay_log::{Header, Rgba, Writer};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let path = std::env::temp_dir().join(format!("underlay-log-doc-{}.ulog", std::process::id()));
//! let mut w = Writer::create(&path, Header::default())?;
//! // Drawn for the whole run: an obstacle.
//! w.persistent(f64::NEG_INFINITY, f64::INFINITY)
//!     .line((-3025.0, 500.0), (-1600.0, 500.0))
//!     .color(Rgba::named("red"))
//!     .entity("obstacle");
//! // Drawn at one time (seconds): a robot and its plan, the plan at a
//! // level of detail a viewer may hide.
//! let t = 1_700_000_000.25;
//! w.instant(t).circle((2271.0, -1136.0), 90.0).color(Rgba::named("blue")).entity("robots/blue/3");
//! w.instant(t).line((2271.0, -1136.0), (1412.0, -568.0)).entity("plan/rrt").level(2);
//! w.finish()?;
//!
//! // `underlay log info run.ulog` or `underlay view run.ulog --video …`
//! // shows it; here it is read back.
//! let log = underlay_log::native::read(std::fs::File::open(&path)?)?;
//! assert_eq!(log.frames.len(), 2);
//! assert_eq!(log.primitives.len(), 3);
//! assert_eq!(log.entities.name(log.primitives[1].entity), "robots/blue/3");
//! std::fs::remove_file(&path)?;
//! # Ok(()) }
//! ```
//!
//! The same writer sends to a live view: [`Writer::udp`]`("127.0.0.1:9870",
//! …)` for `underlay live --log udp://:9870` (one frame per datagram, a
//! lost one costs only its frame) or [`Writer::tcp`] (nothing lost).
//!
//! # What is here
//! - [`model`]: the one in-memory form every part of underlay uses
//!   ([`Log`], [`Frame`], [`Primitive`], [`Shape`], entities and levels),
//!   with its plane geometry ([`geom`]: [`Vec2`], [`Vec3`]).
//! - [`native`]: underlay's own binary format (schema in
//!   `proto/underlay.proto`, inside this crate): a 10-byte prefix, then
//!   varint-delimited protobuf records, optionally zstd-compressed;
//!   version 1 for shapes on the floor, 2 when the log has shapes above it
//!   ([`raised`]), 3 with shapes in the picture's pixels. Its reader
//!   and writer are hand-written for speed; `reference` (feature
//!   `reference`) does the same through prost's types generated from the
//!   schema (`proto`), and the tests check the two against each other.
//! - [`text`]: the thesis's human-readable text notation, extended so that
//!   it holds everything the model holds.
//! - [`writer`]: the streaming [`Writer`]; [`net`]: its UDP and TCP sinks.
//! - [`levels`]: level mapping files (which level an entity's shapes are
//!   drawn at).
//! - [`summary`]: counts, time range and entity tree (`underlay log
//!   info`); [`merge()`]: several logs (a game log and agents' debug logs)
//!   as one; [`names`]: the hierarchy entity names imply.
//! - `error`: what reading and writing can fail with ([`ReadError`],
//!   [`LogError`]); [`validate`]: what every reader does with shapes that
//!   cannot be drawn; [`wire`]: the protobuf wire primitives of the fast
//!   paths. These two are public for the readers of other formats in the
//!   application, which read into this model.
//!
//! # What is not, and why
//! The summary and merging stay here: they need nothing but the model.
//! Saving a [`Log`] to a named file with its format chosen by the
//! extension (`underlay::log::save`) stays in the application, because it
//! writes through the application's atomic outputs (a temporary file
//! renamed over the target, removed if a signal ends the process; a pipe,
//! a device or `-` written in place); here a log is written to any
//! [`std::io::Write`] ([`native::write`], [`text::write`]) and the
//! [`Writer`] creates its own file. Every other input (thesis-era logs,
//! the leagues' files, ROS recordings) is read by the application into
//! this model, and every file is opened through its format table; the
//! budget an input may take (`--max-input`) is the application's too, and
//! reaches this crate's errors as [`ReadError::Other`].
//!
//! This crate depends on nothing of the application, so "the model
//! imports no reader" is the compiler's rule.
//!
//! Readers validate as they go: frames and primitives that cannot be
//! drawn (NaN or infinite coordinates, negative sizes, persistent frames
//! ending before they start) are dropped with a [`LoadWarning`] naming the
//! place, and a torn last record (a writer that died mid-frame) loads
//! every complete frame plus a warning.
//!
//! # Features
//! None is needed to write and read logs.
//! - `reference`: `proto` (the prost types of `proto/underlay.proto`,
//!   generated at build time with a vendored `protoc`) and `reference`
//!   (the native format read and written through them: the tests' and
//!   benchmarks' yardstick for the fast paths). Off by default: prost's
//!   code generator and derive macros would take most of the crate's
//!   build time.
//! - `test-util`: `testutil`, sample logs and proptest strategies for
//!   random valid logs (the application's tests and benchmarks use them).

mod error;
pub mod geom;
pub mod levels;
mod merge;
pub mod model;
pub mod names;
pub mod native;
pub mod net;
#[cfg(feature = "reference")]
pub mod proto;
pub mod raised;
#[cfg(feature = "reference")]
pub mod reference;
pub mod summary;
#[cfg(any(test, feature = "test-util"))]
pub mod testutil;
pub mod text;
pub mod validate;
pub mod wire;
pub mod writer;

pub use error::{LogError, ReadError};
pub use merge::merge;
pub use model::*;
pub use validate::{MAX_RECORD_LEN, MAX_WARNINGS, Place, Warnings, close_frame};
pub use writer::{PrimitiveBuilder, Writer, WriterOptions};
