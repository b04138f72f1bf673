//! The demo's game: robots and ball moved with plausible dynamics.
