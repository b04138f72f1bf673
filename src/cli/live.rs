//! `underlay live`: a camera stream and live logs in, drawn behind the
//! robots, out to the viewer in live mode (unless `--no-view`), to a
//! stream or a file.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context;

use crate::live::{CameraOptions, LiveOptions, LiveStatus, LogSource};
use crate::session::{CalibrationSource, Session};

/// Arguments of `underlay live`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The camera: a URL FFmpeg opens (rtsp://, srt://, udp://, rtmp://,
    /// http://), a device (/dev/video0), or a file (with --realtime, played
    /// at its own pace).
    #[arg(value_name = "CAMERA")]
    pub camera: String,
    /// A log to draw: `udp://HOST:PORT` (native log datagrams),
    /// `tcp://HOST:PORT` (native log streams; listens there),
    /// `roboviz://[HOST:]PORT` (RoboViz drawing datagrams from 3D-league
    /// agents, in metres; port 32769 when left out),
    /// `sim3d://[HOST:]PORT` (the 3D simulator's monitor stream, connected
    /// to and reconnected with back-off; 127.0.0.1 and SimSpark's 3200 when
    /// left out, rcssservermj's is 60001: the ball's trail, and the robots
    /// RoboViz agent annotations are placed at — without it they are left
    /// out),
    /// `ssl-vision://[GROUP:]PORT`, `ssl-referee://[GROUP:]PORT`,
    /// `ssl-tracker://[GROUP:]PORT` (the SSL league's streams, drawn
    /// together as their game log is; the league's multicast group and
    /// port when left out, or a unicast address such as 127.0.0.1:PORT),
    /// or a file of any format underlay reads, drawn throughout
    /// (repeatable). HOST left out: every interface (sim3d://: this
    /// machine).
    #[arg(long = "log", value_name = "SOURCE")]
    pub logs: Vec<String>,
    /// A session whose calibration, mask, filter, offset and logs are used
    /// (its video is not read: the camera is).
    #[arg(long, value_name = "S.toml")]
    pub session: Option<PathBuf>,
    /// Calibration file (instead of the session's).
    #[arg(long, value_name = "C.toml", conflicts_with = "ssl_camera")]
    pub calib: Option<PathBuf>,
    /// Draw through SSL camera N's calibration (its ssl-vision model), from
    /// the geometry packets of the live vision stream (--log
    /// ssl-vision://…): from the first that brings it, and again when it
    /// changes; nothing is drawn before.
    #[arg(long = "camera", value_name = "N")]
    pub ssl_camera: Option<u32>,
    /// Log time = a frame's arrival on this machine's clock (Unix
    /// seconds) + OFFSET; overrides the session's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = super::common::parse_offset)]
    pub offset: Option<f64>,
    /// Hold each frame back this long, so that log data arriving up to
    /// that much later than the picture still lands on its frame.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = super::common::parse_seconds)]
    pub delay: f64,
    /// Where the composited picture goes: srt://, udp://, tcp:// (MPEG-TS),
    /// rtmp:// (FLV), rtsp:// (push to a server), or a file (repeatable).
    /// With the viewer, outputs are optional; with --no-view, give one
    /// (or --overlay-out).
    #[arg(long = "out", value_name = "URL")]
    pub outputs: Vec<String>,
    /// Where the drawings alone go, with alpha (as composited: hidden
    /// behind the robots), for compositing in OBS: lossless FFV1 in
    /// Matroska, to a .mkv file or srt://, tcp://, udp:// (repeatable).
    #[arg(long = "overlay-out", value_name = "URL")]
    pub overlay_outputs: Vec<String>,
    /// Stop after this many seconds of output, counted from the first
    /// frame written (the wait for the camera does not count).
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub duration: Option<f64>,
    /// Stop this many seconds after starting, the wait for the camera
    /// included. Before the camera's first picture that is an error and
    /// nothing is written; after it, the outputs are finished.
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub timeout: Option<f64>,
    /// Play a file camera at its own pace (for tests and rehearsals).
    #[arg(long)]
    pub realtime: bool,
    /// The clock a frame's log time is read from (before the offset):
    /// `arrival` on this machine (logs sent live), or the camera's own
    /// `stream` times (a recorded video with its recorded log). Default:
    /// `stream` for a file, `arrival` for a stream or device.
    #[arg(long, value_enum, value_name = "CLOCK")]
    pub clock: Option<crate::live::Clock>,
    /// Seconds to wait for the camera's first picture before giving up
    /// (default: 10; with --timeout, that bounds the wait).
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub wait: Option<f64>,
    /// Seconds a stream may stay silent before it is opened again.
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0, value_parser = super::common::parse_seconds)]
    pub stall: f64,
    /// Draw over everything (no floor mask).
    #[arg(long)]
    pub no_mask: bool,
    /// Stream even with no calibration (then only shapes in the picture's
    /// own pixels are drawn).
    #[arg(long)]
    pub no_calibration: bool,
    /// Draw only primitives with level ≤ N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_level: Option<i32>,
    /// Draw only this entity and its descendants (repeatable).
    #[arg(long = "entity", value_name = "NAME")]
    pub entities: Vec<String>,
    /// x264 constant rate factor (0–51, lower is better).
    #[arg(long, value_name = "N", default_value_t = 23, value_parser = clap::value_parser!(u8).range(0..=51))]
    pub crf: u8,
    /// x264 preset (ultrafast … veryslow).
    #[arg(long, value_name = "P", default_value = "veryfast")]
    pub preset: String,
    /// Run headless: no viewer window, only the outputs (and the status
    /// line on the terminal).
    #[arg(long)]
    pub no_view: bool,
    /// The viewer's replay buffer: seconds of the camera kept to pause,
    /// step back and play again (within --buffer-mb).
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0, value_parser = super::common::parse_seconds, conflicts_with = "no_view")]
    pub buffer: f64,
    /// The most memory the replay buffer's pictures take (JPEG-coded), MiB.
    #[arg(long, value_name = "MB", default_value_t = 256, conflicts_with = "no_view")]
    pub buffer_mb: usize,
    /// With the viewer: once the run has ended (--duration, or a file
    /// camera's end), save a screenshot of the window here and close it.
    #[arg(long, value_name = "PNG", conflicts_with = "no_view")]
    pub screenshot: Option<PathBuf>,
    /// The viewer window's inner size.
    #[arg(long, value_name = "WxH", value_parser = super::common::parse_size, conflicts_with = "no_view")]
    pub size: Option<[usize; 2]>,
}

/// Runs `underlay live`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        crate::export::PRESETS.contains(&args.preset.as_str()),
        "unknown x264 preset {:?} (one of {})",
        args.preset,
        crate::export::PRESETS.join(", ")
    );
    anyhow::ensure!(
        !args.no_view || !args.outputs.is_empty() || !args.overlay_outputs.is_empty(),
        "nothing to write: with --no-view give --out URL, --overlay-out URL, or both"
    );
    let mut sources = Vec::new();
    let mut files = Vec::new();
    for l in &args.logs {
        match LogSource::parse(l)? {
            Some(s) => sources.push(s),
            None => files.push(PathBuf::from(l)),
        }
    }
    anyhow::ensure!(
        args.no_view || crate::viewer::has_display(),
        "no display to show the live view on: set DISPLAY (or WAYLAND_DISPLAY), run it under xvfb-run, \
         or run headless with --no-view and --out URL"
    );
    let mut session = match &args.session {
        Some(path) => {
            let mut s = Session::load(path).with_context(|| format!("reading {}", path.display()))?;
            s.logs.extend(files);
            s
        }
        None => {
            let mut s = Session::new(&args.camera, "");
            s.logs = files;
            s
        }
    };
    if let Some(n) = args.ssl_camera
        && !sources
            .iter()
            .any(|s| matches!(s, LogSource::Ssl(crate::live::SslStream::Vision, _)))
    {
        anyhow::bail!(
            "--camera {n} takes camera {n}'s calibration from the live SSL vision stream: give --log ssl-vision://[GROUP:]PORT"
        );
    }
    if let Some(c) = &args.calib {
        session.calibration = Some(CalibrationSource::File { file: c.clone() });
    }
    if let Some(o) = args.offset {
        session.offset = o;
    }
    if args.no_mask {
        session.draw.floor_mask = false;
    }
    if args.max_level.is_some() {
        session.filter.max_level = args.max_level;
    }
    if !args.entities.is_empty() {
        session.filter.only = args.entities.clone();
    }
    let mut camera = CameraOptions::new(&args.camera);
    camera.realtime = args.realtime;
    camera.stall = std::time::Duration::from_secs_f64(args.stall.max(0.1));
    let clock = args.clock.unwrap_or(if camera.is_stream() {
        crate::live::Clock::Arrival
    } else {
        crate::live::Clock::Stream
    });
    let mut opts = LiveOptions::new(camera, session);
    opts.clock = clock;
    opts.sources = sources;
    opts.delay = args.delay;
    opts.outputs = args.outputs.clone();
    opts.overlay_outputs = args.overlay_outputs.clone();
    opts.duration = args.duration;
    opts.timeout = args.timeout.map(std::time::Duration::from_secs_f64);
    opts.crf = args.crf;
    opts.preset = args.preset.clone();
    opts.no_calibration = args.no_calibration;
    opts.ssl_camera = args.ssl_camera;
    // With --timeout alone, it bounds the wait too.
    let wait = args.wait.unwrap_or(if args.timeout.is_some() {
        super::common::MAX_SECONDS
    } else {
        10.0
    });
    opts.first_picture = std::time::Duration::from_secs_f64(wait.max(0.1));
    // A stream joined between keyframes makes FFmpeg's decoders complain
    // until the next one; what matters reaches the status line.
    crate::video::set_ffmpeg_quiet(true);
    let cancel = super::common::cancel_on_ctrl_c("live");
    let terminal = std::io::stderr().is_terminal();
    if !args.no_view {
        let failed = Arc::new(Mutex::new(None));
        // The buffer's minutes are drawn with their logs: the store keeps
        // as long.
        opts.store.keep = opts.store.keep.max(args.buffer);
        let live = crate::viewer::live::LiveViewOptions {
            run: opts,
            session_path: args.session.clone(),
            buffer: crate::live::BufferOptions {
                seconds: args.buffer,
                max_bytes: args.buffer_mb.saturating_mul(1 << 20),
                ..Default::default()
            },
            screenshot: args.screenshot.clone(),
            cancel: Some(cancel.flag()),
            echo: Some(crate::viewer::live::StatusEcho(Arc::new(Mutex::new(
                status_printer(terminal),
            )))),
            failed: Some(Arc::clone(&failed)),
        };
        let viewer = crate::viewer::ViewerOptions {
            size: args.size,
            live: Some(Box::new(live)),
            ..Default::default()
        };
        let shown = crate::viewer::run(viewer).with_context(|| format!("live from {}", args.camera));
        if terminal {
            eprintln!();
        }
        shown?;
        // The window showed why the run failed; the exit status says it too.
        let failure = failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        return match failure {
            Some(why) => Err(anyhow::anyhow!(why).context(format!("live from {}", args.camera))),
            None => Ok(()),
        };
    }
    let mut show = status_printer(terminal);
    let ran = crate::live::run(&opts, &cancel, &mut show);
    if terminal {
        eprintln!();
    }
    let report = ran.with_context(|| format!("live from {}", args.camera))?;
    for w in &report.warnings {
        eprintln!("underlay: warning: {w}");
    }
    eprintln!(
        "live: {} frames in, {} written ({} dropped, {} reconnects, {} 'no signal' frames) over {:.1} s from {:.3} \
         (Unix time of the first frame); latency p50 {:.0} ms, p95 {:.0} ms; drawing p50 {:.1} ms, p95 {:.1} ms; \
         ended: {}",
        report.frames_in,
        report.frames_out,
        report.dropped,
        report.reconnects,
        report.no_signal_frames,
        report.duration,
        report.first_arrival,
        report.latency_ms.0,
        report.latency_ms.1,
        report.draw_ms.0,
        report.draw_ms.1,
        report.end
    );
    for s in &report.sources {
        eprintln!(
            "  {}: {} packets, {} bytes, {} ignored, {} frames dropped",
            s.name, s.packets, s.bytes, s.bad, s.dropped_frames
        );
    }
    Ok(())
}

/// What prints the status on stderr: on a terminal one line kept
/// current, in a log file a line every 5 s and whenever what the camera
/// waits for changes (the camera, a keyframe, its signal back).
fn status_printer(terminal: bool) -> impl FnMut(&LiveStatus) + Send + 'static {
    let mut logged = std::time::Instant::now();
    let mut said = None;
    move |s: &LiveStatus| {
        let mut e = std::io::stderr();
        let state = (
            s.camera.keyframe_wait.is_some(),
            s.camera.received == 0,
            s.camera.no_signal_since.is_some(),
        );
        if terminal {
            let _ = write!(e, "\r\x1b[2K{}", status_line(s));
            let _ = e.flush();
        } else if logged.elapsed() >= std::time::Duration::from_secs(5) || said != Some(state) {
            logged = std::time::Instant::now();
            said = Some(state);
            let _ = writeln!(e, "{}", status_line(s));
        }
    }
}

/// The one-line status: rates, drops, latency, sources, the last error.
fn status_line(s: &LiveStatus) -> String {
    let mut line = format!(
        "live {:.0} s · in {:.1} fps · out {:.1} fps · dropped {} · latency {:.0}/{:.0} ms",
        s.elapsed, s.fps_in, s.fps_out, s.dropped, s.latency_ms.0, s.latency_ms.1
    );
    let now = crate::live::now();
    if let Some(t) = s.camera.no_signal_since {
        line.push_str(&format!(" · NO SIGNAL for {:.0} s", now - t));
    }
    if let Some(w) = s.camera.waiting(now) {
        line.push_str(&format!(" · {w}"));
    }
    for c in &s.sources {
        line.push_str(&format!(" · {} {} pkts", c.name, c.packets));
        if c.bad > 0 {
            line.push_str(&format!(" ({} bad)", c.bad));
        }
    }
    if let Some(w) = &s.calibration_wait {
        line.push_str(&format!(" · {w}"));
    }
    if let Some(e) = &s.camera.last_error {
        line.push_str(&format!(" · last error: {e}"));
    }
    line
}
