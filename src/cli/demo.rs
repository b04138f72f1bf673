//! `underlay demo`: generate the demo run (or reuse the one already made)
//! and open it in the viewer.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;

use crate::demo::{self, DemoFiles, DemoSpec};

/// Arguments of `underlay demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to write the demo video, log, session and ground truth into
    /// [default: a cache folder, reused when already generated].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only generate the files; do not open the viewer.
    #[arg(long)]
    pub no_view: bool,
    /// Generate again even when the folder already holds this demo.
    #[arg(long)]
    pub force: bool,
    /// Video width in pixels (even).
    #[arg(long, default_value_t = 1280)]
    pub width: u32,
    /// Video height in pixels (even).
    #[arg(long, default_value_t = 720)]
    pub height: u32,
    /// Frames per second (checked with the demo's other settings).
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// Seconds of video (checked with the demo's other settings).
    #[arg(long, default_value_t = 20.0)]
    pub duration: f64,
    /// Varies the game, the textures and the noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The camera that films it: `top` (above the side line) or `stand`
    /// (low at the side, seeing the hall's walls, stands and sky).
    #[arg(long, value_enum, default_value_t = demo::DemoCamera::Top)]
    pub camera: demo::DemoCamera,
}

impl Default for Args {
    fn default() -> Self {
        let spec = DemoSpec::default();
        Args {
            out: None,
            no_view: false,
            force: false,
            width: spec.width,
            height: spec.height,
            fps: spec.fps,
            duration: spec.duration,
            seed: spec.seed,
            camera: spec.camera,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let spec = DemoSpec {
        width: args.width,
        height: args.height,
        fps: args.fps,
        duration: args.duration,
        seed: args.seed,
        camera: args.camera,
    };
    spec.validate()?;
    let dir = args.out.clone().unwrap_or_else(|| match args.camera {
        demo::DemoCamera::Top => demo::default_dir(),
        demo::DemoCamera::Stand => demo::default_dir().with_extension("stand"),
    });
    let files = if !args.force && demo::is_current(&dir, &spec) {
        eprintln!("underlay: using the demo already in {}", dir.display());
        DemoFiles::in_dir(&dir)
    } else {
        make(&dir, &spec)?
    };
    if args.out.is_none() {
        for old in demo::remove_outdated(&dir) {
            eprintln!(
                "underlay: removed the demo of an older version in {}",
                old.display()
            );
        }
    }
    println!("session: {}", files.session.display());
    println!("video:   {}", files.video.display());
    println!("log:     {}", files.log.display());
    println!(
        "export it with: underlay export {} -o demo-annotated.mp4",
        files.session.display()
    );
    if args.no_view {
        return Ok(());
    }
    let opts = crate::viewer::ViewerOptions {
        open: crate::viewer::state::OpenRequest {
            input: Some(files.session.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    crate::viewer::run(opts).with_context(|| {
        format!(
            "could not open the viewer (is there a display?); the demo files are in {} \
             (`underlay demo --no-view` only generates them)",
            dir.display()
        )
    })
}

fn make(dir: &std::path::Path, spec: &DemoSpec) -> anyhow::Result<DemoFiles> {
    let cancel = super::common::cancel_on_ctrl_c("demo");
    eprintln!(
        "underlay: generating the demo ({}×{}, {} s at {} fps) in {}",
        spec.width,
        spec.height,
        spec.duration,
        spec.fps,
        dir.display()
    );
    let bar = super::common::frame_bar(Some(spec.frames()), "rendering");
    let started = Instant::now();
    let progress = |done: u64, _total: u64| bar.set_position(done);
    let result = demo::generate(dir, spec, &progress, &cancel);
    bar.finish_and_clear();
    crate::video::set_ffmpeg_quiet(false);
    match result {
        Err(demo::DemoError::Interrupted) => Err(crate::Interrupted.into()),
        Err(e) => Err(e).context("generating the demo"),
        Ok(files) => {
            eprintln!(
                "underlay: demo generated in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            Ok(files)
        }
    }
}
