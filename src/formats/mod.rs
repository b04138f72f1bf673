//! The one door every input comes through: the format table
//! ([`FORMATS`], one line per format) and what opens files with it — as
//! logs ([`load_logs`]: several at once, each file read beside the one its
//! format needs), as frame sources ([`open_source`]), and for the camera
//! calibrations logs carry ([`cameras_among`]). The command line, the
//! session, the viewer and export open files only here; none of them
//! names a format.
//!
//! - `table`: the table itself and underlay's own formats' lines.
//! - `head`: a file's first bytes as recognisers see them.
//! - `read`: logs from streams and files, and sets of files read together.
//! - `source`: files as frame sources.
//! - `camera`: the cameras a log carries.
//! - `view`: an agent's camera, to see a rendered match through.

mod camera;
mod head;
mod read;
mod source;
mod table;
mod view;

pub use camera::cameras_among;
pub use head::HeadBuf;
pub use read::{load_log, load_log_with_format, load_logs, load_merged, read_log};
pub use source::{is_own_log, open_source, source_format_of};
pub use table::{FORMATS, NATIVE, STILL, TEXT, any_format, by_id, log_format, source_format};
pub use view::{AgentSpec, AgentViewError, agent_camera, camera_of};
