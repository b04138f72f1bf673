//! Visualization logs: the log crate (`crates/underlay-log`, the model and
//! underlay's own formats, the `Writer`) as the application sees it, plus
//! saving a log to a named file.
//!
//! Everything but [`save()`] is `underlay_log`'s, re-exported whole, so
//! that `crate::log::Log`, `crate::log::native::read` and the rest name
//! the crate's items (its front page has the module list and what belongs
//! there). [`save()`] and [`save_as`] stay here because they write through
//! the application's atomic outputs ([`crate::files`]: a temporary file
//! renamed over the target, removed when a signal ends the process; a
//! pipe, a device or `-` written in place).
//!
//! The crate is the bottom of underlay: it names no other format, and
//! depends on nothing of the application. Every other input (thesis-era
//! logs, the leagues' files) is read by its own module above this one into
//! this model, and every file is opened through the format table,
//! [`crate::formats`], which recognises a file's format from its content
//! (gzip'ed or not). [`save`] picks the format from the extension.

mod save;

pub use save::{SaveFormat, save, save_as};
pub use underlay_log::*;
