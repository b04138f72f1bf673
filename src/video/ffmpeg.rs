//! FFmpeg itself, for every part of `video`: its one-time setup and
//! message level, opening an input, its rational numbers; and what
//! decoding and encoding report ([`VideoInfo`], [`VideoError`]).

use std::path::PathBuf;
use std::sync::Once;

use super::messages;

/// What a video file holds, as far as underlay cares.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoInfo {
    /// Width of decoded frames in pixels, after rotation.
    pub width: u32,
    /// Height of decoded frames in pixels, after rotation.
    pub height: u32,
    /// Duration of the video stream in seconds (0 when unknown).
    pub duration: f64,
    /// Number of frames when the container says so.
    pub frame_count: Option<u64>,
    /// Average frame rate (frames per second; a guess for VFR video).
    pub avg_fps: f64,
    /// Clockwise rotation in degrees (0, 90, 180, 270) applied to every
    /// decoded frame so that it displays upright.
    pub rotation: i32,
    /// Whether the file has at least one audio stream.
    pub has_audio: bool,
    /// Short name of the video codec ("h264", "hevc", "vp9", …).
    pub codec: String,
    /// Time base of the video stream as (numerator, denominator): every
    /// frame time is a multiple of it. Pass it to
    /// [`EncoderSettings::time_base`](super::EncoderSettings::time_base) to keep timestamps exact.
    pub time_base: (i32, i32),
}

/// A step of work with FFmpeg that failed: what was being done, with
/// FFmpeg's own error as the source when it gave one. The video errors
/// that name the file and frame carry it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what}")]
pub struct StepError {
    pub what: String,
    #[source]
    pub source: Option<ffmpeg_next::Error>,
}

impl StepError {
    /// A failure FFmpeg did not report itself.
    pub fn new(what: impl Into<String>) -> Self {
        StepError {
            what: what.into(),
            source: None,
        }
    }

    /// `what` failed with FFmpeg's `source`.
    pub fn with(what: impl Into<String>, source: ffmpeg_next::Error) -> Self {
        StepError {
            what: what.into(),
            source: Some(source),
        }
    }
}

impl From<String> for StepError {
    fn from(what: String) -> Self {
        StepError::new(what)
    }
}

impl From<&str> for StepError {
    fn from(what: &str) -> Self {
        StepError::new(what)
    }
}

/// Errors reading or writing video. Each names the file and, where it
/// applies, the frame (index and time) concerned.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    #[error("{path}: cannot open video{}", if detail.is_empty() { String::new() } else { format!(" ({detail})") })]
    Open {
        path: PathBuf,
        #[source]
        source: ffmpeg_next::Error,
        /// FFmpeg's own explanation ("moov atom not found"), or empty.
        detail: String,
    },
    #[error("{path}: no video stream in this file")]
    NoVideoStream { path: PathBuf },
    #[error("{path}: {message}")]
    Codec { path: PathBuf, message: String },
    #[error("{path}: decoding failed near {time:.3} s (after frame {index}): {message}")]
    Decode {
        path: PathBuf,
        index: u64,
        time: f64,
        message: String,
    },
    #[error(
        "{path}: the video ends early or is damaged after {frames} frames (last frame at {time:.3} s): {reason}"
    )]
    Truncated {
        path: PathBuf,
        frames: u64,
        time: f64,
        reason: String,
    },
    #[error("{path}: cannot seek to {time:.3} s")]
    Seek {
        path: PathBuf,
        time: f64,
        #[source]
        source: ffmpeg_next::Error,
    },
    #[error("{path}: frame {index} at {time:.3} s: {message}")]
    BadFrame {
        path: PathBuf,
        index: u64,
        time: f64,
        message: String,
    },
    #[error("{path}: encoding failed at frame {index} ({time:.3} s): {message}")]
    Encode {
        path: PathBuf,
        index: u64,
        time: f64,
        message: String,
    },
    #[error("{path}: {message}")]
    Settings { path: PathBuf, message: String },
}

impl VideoError {
    /// The error told about `output` where it names `temp`: output is
    /// written to a temporary file beside it, which is not what the user
    /// named (a full disk must name the file they asked for).
    pub fn naming(mut self, temp: &std::path::Path, output: &std::path::Path) -> Self {
        let path = match &mut self {
            VideoError::Open { path, .. }
            | VideoError::NoVideoStream { path }
            | VideoError::Codec { path, .. }
            | VideoError::Decode { path, .. }
            | VideoError::Truncated { path, .. }
            | VideoError::Seek { path, .. }
            | VideoError::BadFrame { path, .. }
            | VideoError::Encode { path, .. }
            | VideoError::Settings { path, .. } => path,
        };
        if path.as_path() == temp {
            *path = output.to_owned();
        }
        self
    }
}

/// Opens `path` for reading, with FFmpeg's explanation when it cannot.
pub(crate) fn open_input(path: &std::path::Path) -> Result<ffmpeg_next::format::context::Input, VideoError> {
    init();
    let (opened, messages) = messages::capture(|| ffmpeg_next::format::input(path));
    opened.map_err(|source| VideoError::Open {
        path: path.to_owned(),
        source,
        detail: messages.join("; "),
    })
}

/// Opens a live input (a stream URL, a device, or a file read as one) with
/// demuxer and protocol `options` (low-latency flags, timeouts), and
/// `interrupt` asked between blocking reads: returning `true` abandons the
/// read in progress (a stalled stream, a stop asked for), which then fails.
pub(crate) fn open_live_input(
    path: &std::path::Path,
    options: &[(&str, String)],
    interrupt: impl FnMut() -> bool + Send + 'static,
) -> Result<ffmpeg_next::format::context::Input, VideoError> {
    init();
    let mut dict = ffmpeg_next::Dictionary::new();
    for (k, v) in options {
        dict.set(k, v);
    }
    let (opened, messages) =
        messages::capture(|| ffmpeg_next::format::input_with_interrupt_and_dictionary(path, interrupt, dict));
    opened.map_err(|source| VideoError::Open {
        path: path.to_owned(),
        source,
        detail: messages.join("; "),
    })
}

/// Initializes FFmpeg once per process and keeps its own messages to errors.
pub(crate) fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // `init` only fails on FFmpeg builds without a working network layer,
        // which does not matter for local files.
        let _ = ffmpeg_next::init();
        ffmpeg_next::util::log::set_level(ffmpeg_next::util::log::Level::Error);
        messages::install();
    });
}

/// Whether FFmpeg's log should be quiet (`Fatal`) or at `Error`, e.g. while a
/// progress bar owns the terminal.
pub fn set_ffmpeg_quiet(quiet: bool) {
    init();
    use ffmpeg_next::util::log::{Level, set_level};
    set_level(if quiet { Level::Fatal } else { Level::Error });
}

/// Whether FFmpeg knows a container for the extension of `path`.
pub fn is_known_container(path: &std::path::Path) -> bool {
    init();
    let Ok(name) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string; null format name and MIME type are allowed.
    let fmt = unsafe { ffmpeg_next::ffi::av_guess_format(std::ptr::null(), name.as_ptr(), std::ptr::null()) };
    !fmt.is_null()
}

/// `num/den` as f64, or `None` when not a finite positive number.
pub(crate) fn ratio(r: ffmpeg_next::Rational) -> Option<f64> {
    let (n, d) = (r.numerator(), r.denominator());
    (n > 0 && d > 0).then(|| n as f64 / d as f64)
}
