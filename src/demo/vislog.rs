//! The demo's visualization log, as the robots' software would write it.
