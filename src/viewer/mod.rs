//! The viewer: an egui window that plays a run's video with the overlay
//! drawn by the shared pipeline, and lets the user filter, sync, calibrate
//! and export.
//!
//! Split as in egui's and Rerun's apps: state (what is saved and what is
//! open), logic (playback clock, background player, entity filters, time
//! sync, calibration editing: all testable without a window) and ui
//! (panels that show the state and record commands).

pub mod entities;
pub mod playback;
pub mod player;
pub mod source;
pub mod sync;
