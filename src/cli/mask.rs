//! `underlay mask`: floor masks of an image or a video.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::image::{MaskImage, load_rgb, save_mask};
use crate::mask::{AdaptiveSettings, MaskSettings, Masker};

/// Masking methods selectable on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Thesis Algorithm 4 with its fixed thresholds.
    Thesis,
    /// Thresholds estimated from each frame (default).
    Adaptive,
}

/// Arguments of `underlay mask`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An image (PNG, JPEG, …) or a video.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Output: a PNG for an image (white = floor), a lossless mask video for a video.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// How to find the floor.
    #[arg(long, value_enum, default_value_t = Method::Adaptive)]
    pub method: Method,
    /// Time N runs on the (first) frame and print the median per frame.
    #[arg(long, value_name = "N")]
    pub bench: Option<u32>,
}

impl Method {
    /// The session settings for this method (defaults for its parameters).
    pub fn settings(self) -> MaskSettings {
        match self {
            Method::Thesis => MaskSettings::Thesis,
            Method::Adaptive => MaskSettings::Adaptive(AdaptiveSettings::default()),
        }
    }
}

/// File extensions read as still images; anything else is a video.
const IMAGE_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp", "pgm", "ppm", "pnm", "jp2", "exr", "hdr",
];

/// Whether `path` names a still image (by its extension).
pub fn is_image_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.bench == Some(0) {
        bail!("--bench needs at least 1 run");
    }
    let mut masker = args.method.settings().build()?;
    if !is_image_path(&args.input) {
        bail!(
            "{}: video input is not supported yet (only images: {})",
            args.input.display(),
            IMAGE_EXTENSIONS.join(", ")
        );
    }
    let frame = load_rgb(&args.input).with_context(|| "reading the input image".to_string())?;
    let mut mask = MaskImage::zeros((0, 0));
    if let Some(n) = args.bench {
        let ms = bench(masker.as_mut(), &frame, n, &mut mask)
            .with_context(|| format!("{}: computing the mask", args.input.display()))?;
        println!("{ms:.2} ms per frame");
    } else {
        masker
            .compute(&frame, 0.0, &mut mask)
            .with_context(|| format!("{}: computing the mask", args.input.display()))?;
    }
    save_mask(&args.output, &mask).context("writing the mask")?;
    Ok(())
}

/// Runs `masker` `n` times on `frame` (after one warm-up run, which also
/// fills `out`) and returns the median time in milliseconds.
pub fn bench(
    masker: &mut dyn Masker,
    frame: &crate::image::RgbImage,
    n: u32,
    out: &mut MaskImage,
) -> Result<f64, crate::mask::MaskError> {
    masker.compute(frame, 0.0, out)?;
    let mut times = Vec::with_capacity(n as usize);
    let mut scratch = MaskImage::zeros((0, 0));
    for _ in 0..n {
        // A fresh start each run: a still frame is not a video.
        masker.reset();
        let t = Instant::now();
        masker.compute(frame, 0.0, &mut scratch)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    Ok(if times.len() % 2 == 1 {
        times[mid]
    } else {
        (times[mid - 1] + times[mid]) / 2.0
    })
}
