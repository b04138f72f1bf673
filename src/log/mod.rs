//! Visualization logs: the in-memory model and underlay's own formats.
//!
//! - [`model`]: the one in-memory form everything else uses.
//! - [`native`]: underlay's own binary format (schema in
//!   `proto/underlay.proto`): a 10-byte prefix, then varint-delimited
//!   protobuf records, optionally zstd-compressed; version 1 for shapes on
//!   the floor, version 2 when the log has shapes above it ([`raised`]).
//! - [`text`]: the thesis's human-readable text notation, extended so that
//!   it holds everything the model holds.
//! - [`writer`]: the streaming [`Writer`] robot programs log with.
//! - [`cells`]: the cells of a grid on the floor as one shape (a map's
//!   occupied, free or unknown cells), runs merged into rectangles.
//! - [`summary`]: counts, time range and entity tree for `log info`.
//! - [`merge()`]: several logs (a game log and agents' debug logs) as one.
//! - `error`: what reading and writing can fail with ([`ReadError`],
//!   [`LogError`]); `validate`: what every reader does with shapes that
//!   cannot be drawn; `save`: writing a log to a file ([`save()`]).
//!
//! This is the bottom of the crate: it names no other format. Every
//! other input (thesis-era logs, the leagues' files) is read by its own
//! module above this one into this model, and every file is opened
//! through the format table, [`crate::formats`], which recognises a
//! file's format from its content (gzip'ed or not). [`save`] picks the
//! format from the extension. Readers validate as they go: frames and
//! primitives that cannot be drawn (NaN or infinite coordinates, negative
//! sizes, persistent frames ending before they start) are dropped with a
//! [`LoadWarning`] naming the place, and a torn last record (a writer that
//! died mid-frame) loads every complete frame plus a warning.

pub mod cells;
mod error;
pub mod levels;
mod merge;
pub mod model;
pub mod names;
pub mod native;
pub mod net;
pub mod proto;
pub mod raised;
pub mod reference;
mod save;
pub mod summary;
#[cfg(any(test, feature = "test-util"))]
pub mod testutil;
pub mod text;
pub(crate) mod validate;
pub(crate) mod wire;
pub mod writer;

pub use error::{LogError, ReadError};
pub use merge::merge;
pub use model::*;
pub use save::{SaveFormat, save, save_as};
pub use validate::{MAX_RECORD_LEN, MAX_WARNINGS};
pub(crate) use validate::{Place, Warnings, close_frame};
pub use writer::{PrimitiveBuilder, Writer, WriterOptions};
