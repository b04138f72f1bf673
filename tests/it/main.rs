//! The integration tests: one binary, one module per area, sharing
//! [`util`] (the `underlay` binary, temporary folders, external tools).
//!
//! Tests that need an external tool (`ffmpeg`, `ffprobe`, `Xvfb`, a Python
//! with OpenCV) skip with a message when it is missing, and fail instead
//! when `UNDERLAY_REQUIRE_TOOLS=1` (CI sets it: there a skip would hide a
//! broken install). Tests on the large media of `../shared/testdata` skip
//! when those files are absent, whatever the variable says: the project's
//! tests pass without them.

mod util;

mod agent_view;
mod bad_input;
mod bad_input3;
mod bad_input4;
mod batch;
mod calib_camera;
mod calib_cli;
mod calib_refine;
mod campaign;
mod demo;
mod demo_air;
mod draw;
mod draw_raised;
mod export;
mod export_plan;
mod live;
mod live_robust;
mod live_sim3d;
mod live_ssl;
mod live_ssl_tracker;
mod live_start;
mod log_cli;
mod mask;
mod matches;
mod obs;
mod pipeline;
mod real_2d;
mod real_3d;
mod real_cameras;
mod ros_bags;
mod ros_displays;
mod ros_folders;
mod sdk;
mod sdk_script;
mod seeking;
mod segments;
mod sim3d;
mod slurm;
mod ssl;
mod ssl_replay;
mod structure;
mod sync;
mod viewer;
mod viewer_planes;
