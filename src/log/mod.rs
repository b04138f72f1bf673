//! Visualization logs: the in-memory model and every format it is read
//! from and written to.

pub mod model;

pub use model::*;
