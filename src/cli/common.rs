//! What several subcommands share: the one handler of terminating signals
//! and the flag long work stops on, the progress bar over frames, writing
//! to standard output, and the arguments `view` and `export` (or `calib`
//! and `calib refine`) both take.

use anyhow::Context as _;

/// The flag a terminating signal sets for work that stops cleanly between
/// frames (see [`cancel_on_ctrl_c`]).
static CANCEL: std::sync::LazyLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::LazyLock::new(Default::default);

/// Whether the running command watches [`CANCEL`].
static COOPERATIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the process's one handler of SIGINT, SIGTERM and SIGHUP. Work
/// that watches [`cancel_on_ctrl_c`]'s flag is asked to stop (its
/// temporary files are dropped as it unwinds); anything else, or a second
/// signal, removes every registered temporary file and folder
/// ([`crate::files::remove_temporaries`]) and exits with status 130. Either
/// way the previous output stays as it was.
pub(super) fn install_signal_handler() {
    use std::sync::atomic::Ordering;
    let handler = || {
        if COOPERATIVE.load(Ordering::SeqCst) && !CANCEL.swap(true, Ordering::SeqCst) {
            return;
        }
        crate::files::remove_temporaries();
        eprintln!("underlay: interrupted");
        std::process::exit(130);
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("underlay: warning: a signal will not stop underlay cleanly ({e})");
    }
}

/// What `view` and `export` show of a rendered match, a camera's
/// calibration from an SSL game log, a recording's picture and world, and
/// the levels drawings are at.
#[derive(Debug, Default, clap::Args)]
pub struct MatchArgs {
    /// A rendered match's camera follows this: `ball`, or a player (`l10`,
    /// `r3`; `y2`, `b5` in SSL logs).
    #[arg(long, value_name = "WHAT")]
    pub follow: Option<String>,
    /// Magnification of a rendered match's pitch (1 to 8; default 1, or 3
    /// when following something).
    #[arg(long, value_name = "Z", value_parser = parse_zoom)]
    pub zoom: Option<f64>,
    /// See a rendered match at a slant: degrees from straight down (0 to
    /// 75), from beyond the side line, so drawings above the floor show
    /// their heights
    #[arg(long, value_name = "DEG", value_parser = parse_tilt)]
    pub tilt: Option<f64>,
    /// See a 3D match (its monitor log) through an agent's head camera:
    /// `l3`, `r1`, or team and number (`Alpha:1`); its perception log must
    /// be among the logs (--log). The camera at each frame's time, with
    /// the simulator's 120° field of view
    #[arg(long, value_name = "SIDE:UNUM")]
    pub agent_view: Option<String>,
    /// Over a 2D match: the player whose sensing is drawn in detail
    /// (`l10`, `r3`: what it could see each cycle, level 3).
    #[arg(long, value_name = "PLAYER")]
    pub player: Option<String>,
    /// A number N: calibrate with camera N of the SSL game log among the
    /// logs (its ssl-vision model), instead of --calib. A topic
    /// (`/camera/image_raw`): the picture topic of a ROS 2 recording (its
    /// first by default); drawings in another camera's pixels are left out.
    #[arg(long, value_name = "N|TOPIC", value_parser = parse_camera)]
    pub camera: Option<CameraArg>,
    /// Of a ROS 2 recording: the world frame its camera and drawings are
    /// placed in (`map`, `odom`); the root of its transform tree by default.
    #[arg(long, value_name = "FRAME")]
    pub world: Option<String>,
    /// Of a ROS 2 recording: its transform tree drawn as axes, as RViz's
    /// TF display draws it (entities `tf/FRAME`)
    #[arg(long)]
    pub tf_axes: bool,
    /// Of a ROS 2 recording: its laser scans and point clouds coloured by
    /// their intensity, through RViz's rainbow
    #[arg(long)]
    pub intensity: bool,
    /// A level mapping file (`"entity" = level` lines, TOML): the level of
    /// each entity's primitives, whatever their log said
    #[arg(long, value_name = "LEVELS.toml")]
    pub levels: Option<std::path::PathBuf>,
}

/// What `--camera` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CameraArg {
    /// A camera of an SSL game log.
    Number(u32),
    /// A picture topic of a ROS 2 recording.
    Topic(String),
}

impl MatchArgs {
    /// The SSL camera asked for, if a number was given.
    pub fn ssl_camera(&self) -> Option<u32> {
        match self.camera {
            Some(CameraArg::Number(n)) => Some(n),
            _ => None,
        }
    }

    /// The picture topic asked for, if a topic was given.
    pub fn topic(&self) -> Option<String> {
        match &self.camera {
            Some(CameraArg::Topic(t)) => Some(t.clone()),
            _ => None,
        }
    }
}

/// `--camera`: a number, or a topic name.
fn parse_camera(s: &str) -> Result<CameraArg, String> {
    if let Ok(n) = s.parse::<u32>() {
        return Ok(CameraArg::Number(n));
    }
    if s.contains('/') && !s.contains(char::is_whitespace) {
        return Ok(CameraArg::Topic(s.to_owned()));
    }
    Err(format!(
        "`{s}` is neither a camera number (of an SSL game log) nor a picture topic (`/camera/image_raw`)"
    ))
}

/// A flag that Ctrl-C (or SIGTERM, SIGHUP) sets while it lives, for long
/// work to stop cleanly between frames; a second signal ends the process
/// at once. `what` names the work in debugging output only: the handler
/// itself is installed once, by [`super::run`].
pub(crate) fn cancel_on_ctrl_c(what: &str) -> Cancel {
    use std::sync::atomic::Ordering;
    CANCEL.store(false, Ordering::SeqCst);
    COOPERATIVE.store(true, Ordering::SeqCst);
    Cancel {
        flag: CANCEL.clone(),
        what: what.to_owned(),
    }
}

/// The flag of [`cancel_on_ctrl_c`]; once dropped, a signal ends the
/// process again (removing temporaries) instead of setting it.
#[derive(Debug)]
pub(crate) struct Cancel {
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    #[allow(dead_code, reason = "shown by Debug")]
    what: String,
}

impl Cancel {
    /// The flag itself, for work on another thread (the live viewer's run).
    pub(crate) fn flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        std::sync::Arc::clone(&self.flag)
    }
}

impl std::ops::Deref for Cancel {
    type Target = std::sync::atomic::AtomicBool;
    fn deref(&self) -> &Self::Target {
        &self.flag
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        COOPERATIVE.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A progress bar over `len` frames (a spinner when unknown) on standard
/// error when it is a terminal, with FFmpeg's own messages quieted
/// meanwhile; hidden otherwise. `verb` says what is done to the frames.
pub(crate) fn frame_bar(len: Option<u64>, verb: &str) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::io::IsTerminal as _;
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{verb} [{{bar:40}}] {{pos}}/{{len}} frames, {{per_sec}}, eta {{eta}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    crate::video::set_ffmpeg_quiet(true);
    bar
}

/// Calibration models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    /// A plain homography (≥ 4 points).
    Homography,
    /// Homography plus radial lens distortion (≥ 6 points).
    Radial,
}

/// Writes to stdout; a reader that went away (`| head`) is not an error.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("cannot write to stdout"),
        _ => Ok(()),
    }
}

/// `WIDTHxHEIGHT` → `[width, height]`.
pub fn parse_size(s: &str) -> Result<[usize; 2], String> {
    let bad = || format!("'{s}' is not a size: give WIDTHxHEIGHT, e.g. 1280x720");
    let (w, h) = s.split_once(['x', 'X', '×']).ok_or_else(bad)?;
    let (w, h): (usize, usize) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(16..=8192).contains(&w) || !(16..=8192).contains(&h) {
        return Err(format!("{w}×{h}: each side must be 16 to 8192 pixels"));
    }
    Ok([w, h])
}

/// The largest `--max-input`: 2^50 bytes (1 PiB).
pub const MAX_BYTES_ARG: u64 = 1 << 50;

/// A size in bytes as the command line gives it: a number with an optional
/// unit, `k`/`m`/`g`/`t` (and `KB`, `MiB`, … alike: powers of 1024).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().trim_end_matches(['b', 'i']) {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => {
            return Err(format!(
                "'{s}' is not a size: give bytes with k, M, G or T (4G, 500M)"
            ));
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size: give bytes with k, M, G or T (4G, 500M)"))?;
    let bytes = v * scale as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes <= MAX_BYTES_ARG as f64) {
        return Err(format!("{s}: give 1 byte to 1 PiB"));
    }
    Ok(bytes as u64)
}

/// A number from the command line that must be finite and within
/// `lo..=hi` (`what` names it in the message, with the range).
fn number_in(s: &str, lo: f64, hi: f64, what: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is not {what} ({lo} to {hi})")),
        Err(_) => Err(format!("'{s}' is not a number ({what}: {lo} to {hi})")),
    }
}

/// Range-checked parsers for numbers the command line takes; the range is
/// in each option's help.
macro_rules! number_parsers {
    ($($(#[$doc:meta])* $name:ident: $lo:expr, $hi:expr, $what:expr;)*) => {
        $($(#[$doc])* pub fn $name(s: &str) -> Result<f64, String> {
            number_in(s, $lo, $hi, $what)
        })*
    };
}

/// A week, in seconds: the longest span any time option takes.
pub const MAX_SECONDS: f64 = 7.0 * 86_400.0;

number_parsers! {
    /// A rendered pitch's magnification.
    parse_zoom: 1.0, 8.0, "a magnification";
    /// A rendered pitch's slant, degrees from straight down.
    parse_tilt: 0.0, 75.0, "a slant in degrees from straight down";
    /// Pictures per second.
    parse_fps: 0.1, 240.0, "a number of pictures per second";
    /// An offset between clocks: any finite seconds within 10^12 (epoch times).
    parse_offset: -1e12, 1e12, "an offset in seconds";
    /// A moment or a span of video, in seconds.
    parse_seconds: 0.0, MAX_SECONDS, "a number of seconds";
    /// A distance in pixels.
    parse_pixels: 0.01, 10_000.0, "a number of pixels";
    /// A luma contrast.
    parse_levels: 0.0, 255.0, "a number of luma levels";
}

/// This task's number (from 0) and the number of tasks sharing a job:
/// `task` and `tasks` when given, else a Slurm array's variables
/// (`SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`,
/// `SLURM_ARRAY_TASK_COUNT`) or a Kubernetes Indexed Job's
/// (`JOB_COMPLETION_INDEX`; its count must be given), else task 0 of 1.
pub fn task_share(task: Option<usize>, tasks: Option<usize>) -> anyhow::Result<(usize, usize)> {
    let env = |name: &str| -> anyhow::Result<Option<usize>> {
        match std::env::var(name) {
            Ok(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| anyhow::anyhow!("{name}={v:?} is not a whole number")),
            Err(_) => Ok(None),
        }
    };
    let tasks = match tasks {
        Some(n) => n,
        None => env("SLURM_ARRAY_TASK_COUNT")?.unwrap_or(1),
    };
    let task = match task {
        Some(t) => t,
        None => match env("SLURM_ARRAY_TASK_ID")? {
            Some(id) => id.saturating_sub(env("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0)),
            None => env("JOB_COMPLETION_INDEX")?.unwrap_or(0),
        },
    };
    if tasks == 0 || task >= tasks {
        anyhow::bail!(
            "task {task} of {tasks}: a task is numbered from 0 to one less than the number of tasks"
        );
    }
    Ok((task, tasks))
}

/// `--segment`: `K/N` (part K, from 1, of N), or `task` / `task/N`: this
/// task's part of a scheduler's array ([`task_share`]; `task/N` for a
/// Kubernetes Indexed Job, whose count is not in its variables).
pub fn parse_segment(s: &str) -> Result<crate::export::Segment, String> {
    let from_task = |count: Option<usize>| {
        let (task, tasks) = task_share(None, count).map_err(|e| e.to_string())?;
        format!("{}/{tasks}", task + 1).parse()
    };
    match s.trim() {
        "task" => from_task(None),
        t if t.starts_with("task/") => {
            let n = t["task/".len()..]
                .trim()
                .parse()
                .map_err(|_| format!("{s:?}: give task/N with N the number of tasks"))?;
            from_task(Some(n))
        }
        t => t.parse(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_bytes("4G"), Ok(4 << 30));
        assert_eq!(parse_bytes("500M"), Ok(500 << 20));
        assert_eq!(parse_bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes("2 kb"), Ok(2048));
        assert_eq!(parse_bytes("123"), Ok(123));
        for bad in ["", "x", "-1G", "0", "1e308", "2P", "nanG", "1.2.3M"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_are_finite_and_in_range() {
        assert_eq!(parse_zoom("3"), Ok(3.0));
        for bad in ["1e308", "nan", "inf", "0.5", "9", "x"] {
            let e = parse_zoom(bad).unwrap_err();
            assert!(e.contains("1 to 8"), "{bad}: {e}");
        }
        assert_eq!(parse_offset("-1700000000.5"), Ok(-1_700_000_000.5));
        assert!(parse_offset("inf").is_err() && parse_fps("0").is_err() && parse_seconds("-1").is_err());
    }
}
