//! `underlay view`: open the viewer.

use std::path::PathBuf;

/// Arguments of `underlay view`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// A session file (.toml) or a video to open.
    #[arg(value_name = "SESSION.toml|VIDEO")]
    pub input: Option<PathBuf>,
    /// The visualization log to show over the video (repeatable: merged;
    /// over a match, its agents' logs).
    #[arg(long, value_name = "LOG", visible_aliases = ["dlog", "perception", "roboviz"])]
    pub log: Vec<PathBuf>,
    #[command(flatten)]
    pub shown: super::common::MatchArgs,
    /// A calibration file written by `underlay calib solve -o`.
    #[arg(long, value_name = "CALIB.toml")]
    pub calib: Option<PathBuf>,
    /// Log time = video time + OFFSET (seconds).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = super::common::parse_offset)]
    pub offset: Option<f64>,
    /// Start in calibration mode with these points (a `u,v,x,y` CSV, the
    /// input of `underlay calib solve`).
    #[arg(long, value_name = "POINTS.csv")]
    pub calib_points: Option<PathBuf>,
    /// Render one moment in the real window, save it as PNG and exit.
    #[arg(long, value_name = "PNG", requires = "at")]
    pub screenshot: Option<PathBuf>,
    /// Moment of the screenshot: video seconds, or for a match seconds of
    /// its game clock (or cycles: `1200c`).
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "screenshot",
        allow_hyphen_values = true
    )]
    pub at: Option<crate::video::TimeArg>,
    /// Size of the window (and of a screenshot), `WIDTHxHEIGHT` (default
    /// the size it had last, 1280x800 the first time; screenshots
    /// 1280x800).
    #[arg(long, value_name = "WxH", value_parser = super::common::parse_size)]
    pub size: Option<[usize; 2]>,
    /// Play generated frames instead of a video: `WIDTHxHEIGHT@FPS[:SECONDS]`
    /// (for trying the viewer and measuring it).
    #[arg(long, value_name = "SPEC", hide = true)]
    pub synthetic: Option<crate::viewer::SyntheticSpec>,
    /// Measure: play this many seconds from the start, seek at random,
    /// print per-frame timings and exit.
    #[arg(long, value_name = "SECONDS", hide = true, value_parser = super::common::parse_seconds)]
    pub bench_play: Option<f64>,
    /// With `--bench-play`: repaint the window continuously, as while the
    /// mouse moves over it, instead of only when a frame is due.
    #[arg(long, hide = true, requires = "bench_play")]
    pub bench_repaint: bool,
    /// Measure: export the session to this file from the window and report
    /// the window's frame intervals meanwhile, then exit.
    #[arg(long, value_name = "OUT.mp4", hide = true)]
    pub bench_export: Option<PathBuf>,
    /// How a video goes to the screen: `planes` (its decoded YUV planes,
    /// converted by a shader), `rgb` (converted on the CPU), or `auto`:
    /// planes, but RGB on a software OpenGL renderer such as Mesa's
    /// llvmpipe, where the shader costs the CPU more than the conversion.
    #[arg(long, value_enum, default_value_t = crate::viewer::gpu::Display::Auto)]
    pub display: crate::viewer::gpu::Display,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    use anyhow::Context as _;
    if let Some(p) = &args.input {
        anyhow::ensure!(p.exists(), "{}: no such file", p.display());
    }
    for p in args.log.iter().chain(&args.calib).chain(&args.calib_points) {
        anyhow::ensure!(p.exists(), "{}: no such file", p.display());
    }
    if let Some(o) = args.offset {
        anyhow::ensure!(
            o.is_finite(),
            "--offset must be a finite number of seconds, not {o}"
        );
    }
    let screenshot = match (args.screenshot, args.at) {
        (Some(path), Some(at)) => {
            anyhow::ensure!(
                args.input.is_some() || args.synthetic.is_some(),
                "--screenshot needs a session or a video to show"
            );
            let mut inputs: Vec<PathBuf> = args
                .input
                .iter()
                .chain(&args.log)
                .chain(&args.calib)
                .cloned()
                .collect();
            inputs.extend(args.calib_points.iter().cloned());
            if let Some(session) = args
                .input
                .as_deref()
                .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")))
                .and_then(|p| crate::session::Session::load(p).ok())
            {
                inputs.extend(session.inputs());
            }
            crate::files::refuse_overwriting_inputs(&path, inputs.iter().map(PathBuf::as_path))?;
            Some(crate::viewer::ScreenshotRequest { path, at })
        }
        _ => None,
    };
    let (topic, ssl_camera) = (args.shown.topic(), args.shown.ssl_camera());
    let calibration = match ssl_camera {
        Some(n) => {
            anyhow::ensure!(
                args.calib.is_none(),
                "--camera N and --calib both give a calibration: give one"
            );
            Some(Box::new(super::calib::log_camera(&args.log, n)?))
        }
        None => None,
    };
    let opts = crate::viewer::ViewerOptions {
        open: crate::viewer::state::OpenRequest {
            input: args.input,
            logs: args.log.clone(),
            calib: args.calib,
            offset: args.offset,
            observer: args.shown.player,
            follow: args.shown.follow,
            zoom: args.shown.zoom,
            tilt: args.shown.tilt,
            agent_view: args.shown.agent_view,
            topic,
            world: args.shown.world,
            tf_axes: args.shown.tf_axes,
            intensity: args.shown.intensity,
            levels: args.shown.levels,
            calibration,
        },
        synthetic: args.synthetic,
        calib_points: args.calib_points,
        screenshot,
        bench_play: args.bench_play,
        bench_repaint: args.bench_repaint,
        bench_export: args.bench_export,
        size: args.size,
        display: args.display,
        live: None,
    };
    crate::viewer::run(opts).context("viewer")
}
