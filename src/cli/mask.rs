//! `underlay mask`: floor masks of an image or a video.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::formats::open_source as open;
use crate::image::MaskImage;
use crate::mask::{AdaptiveSettings, FloorMask, MaskSettings, Masker};
use crate::video::source::{FrameSource, OpenOptions};
use crate::video::still::save_mask;
use crate::video::{Encoder, EncoderSettings, SourceFrame};

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
    /// An image (PNG, JPEG, …), a video, or any other frame source.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Output: a PNG for a picture (white = floor), a lossless mask video (.mkv) for a video.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// How to find the floor.
    #[arg(long, value_enum, default_value_t = Method::Adaptive)]
    pub method: Method,
    /// Time N runs on the (first) frame and print the median per frame.
    #[arg(long, value_name = "N")]
    pub bench: Option<u32>,
    /// The camera's calibration: nothing outside the field's picture region
    /// (--field, else the calibration's own `field`, else the hull of the
    /// points it was fitted from, grown, said once) is floor.
    #[arg(long, value_name = "CALIB.toml")]
    pub calib: Option<PathBuf>,
    /// The field preset (ssl-a, ssl-b, football, football:LxW) whose region, seen through
    /// --calib, can be floor.
    #[arg(long, value_name = "PRESET", requires = "calib")]
    pub field: Option<String>,
    /// The floor's hue (OpenCV units of 2°, 0–179), as the viewer's "this
    /// is floor" picks it: the adaptive mask's hue window is centred here
    /// instead of on the picture's most common colour.
    #[arg(long, value_name = "HUE", value_parser = clap::value_parser!(u8).range(0..180))]
    pub floor_hue: Option<u8>,
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

impl Args {
    /// The mask settings these arguments ask for: the method's defaults
    /// and the floor hue, which only the adaptive method takes.
    pub fn settings(&self) -> anyhow::Result<MaskSettings> {
        match (self.method.settings(), self.floor_hue) {
            (m, None) => Ok(m),
            (MaskSettings::Adaptive(s), Some(h)) => Ok(MaskSettings::Adaptive(AdaptiveSettings {
                floor_hue: Some(h),
                ..s
            })),
            (m, Some(_)) => bail!("--floor-hue is for the adaptive method, not {}", m.method_name()),
        }
    }
}

/// File extensions written as still images; anything else is a video.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "bmp", "tif", "tiff"];

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
    crate::files::refuse_overwriting_inputs(&args.output, [args.input.as_path()])?;
    let mut masker = args.settings()?.build()?;
    if let Some(c) = &args.calib {
        use crate::mask::field::FieldSpec;
        let calibration = crate::calib::Calibration::load(c)?;
        if let Some(f) = &args.field
            && crate::calib::presets::preset(f).is_none()
        {
            let ids = crate::calib::presets::choices();
            bail!("--field {f}: no such field preset; there are {ids}");
        }
        let named = args.field.as_deref().map(FieldSpec::from);
        let (region, source) = crate::mask::field::region_for(&calibration, named.as_ref())
            .with_context(|| format!("{}: its field", c.display()))?
            .with_context(|| {
                format!(
                    "{}: the calibration names no field and does not record the points it was fitted from; give \
                     --field PRESET",
                    c.display()
                )
            })?;
        if let Some(note) = source.note() {
            eprintln!("note: {note}");
        }
        masker = Box::new(crate::mask::field::FieldMasker::new(masker, calibration, region));
    } else {
        masker = Box::new(crate::mask::ground::GroundMasker::new(masker));
    }
    // Masks read a video's own planes: no RGB picture is made.
    let decoded = OpenOptions {
        keep_yuv: true,
        defer_rgb: true,
        ..OpenOptions::default()
    };
    let mut source = open(&args.input, &decoded)?;
    let picture_out = source.info().frame_count == Some(1) && is_image_path(&args.output);
    if picture_out || args.bench.is_some() {
        // One frame: the picture's mask, or the first frame timed.
        let mut frame = SourceFrame::empty();
        if !source.read_into(&mut frame)? {
            bail!("{}: no picture in this file", args.input.display());
        }
        let mut mask = FloorMask::new();
        let computed = match args.bench {
            Some(n) => bench(masker.as_mut(), &frame.picture(), n, &mut mask)
                .map(|ms| println!("{ms:.2} ms per frame")),
            None => masker.compute(&frame.picture(), frame.time, &mut mask),
        };
        computed.with_context(|| format!("{}: computing the mask", args.input.display()))?;
        if picture_out {
            save_mask(&args.output, &mask.to_image()).context("writing the mask")?;
        }
        if let Some(d) = masker.doubt() {
            eprintln!("underlay: warning: {}: {d}; {}", args.input.display(), d.advice());
        }
        return Ok(());
    }
    run_video(&args, source.as_mut(), masker.as_mut())
}

/// Masks every frame of a source into a lossless gray mask video (FFV1, or
/// PNG beyond 4K UHD, in Matroska, white = floor, the input's timestamps),
/// frame by frame with a progress bar.
fn run_video(args: &Args, source: &mut dyn FrameSource, masker: &mut dyn Masker) -> anyhow::Result<()> {
    let info = source.info().clone();
    let mut frame = SourceFrame::empty();
    let mut mask = FloorMask::new();
    let mut image = MaskImage::zeros((0, 0));
    let is_mkv = args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("mkv"));
    if !is_mkv {
        bail!(
            "{}: a mask video is written losslessly (FFV1 gray) and needs a .mkv file name \
             (a mask of a picture is written as .png)",
            args.output.display()
        );
    }
    masker.check_video(info.width, info.height, info.frame_count)?;
    // Written beside the output and renamed at the end: an interrupted or
    // failed run leaves no half-written mask video. A pipe or a device
    // is written as a stream.
    let partial = crate::files::Sink::open(&args.output, Some("mkv"))
        .with_context(|| format!("writing {}", args.output.display()))?;
    let settings = EncoderSettings {
        gray_lossless: true,
        time_base: info.time_base,
        fps_hint: info.fps,
        stream_format: partial.is_stream().then(|| "mkv".to_owned()),
        ..EncoderSettings::default()
    };
    // Errors name the output, not the temporary file it is written as.
    let named = |e: crate::video::VideoError| e.naming(partial.path(), &args.output);
    let mut encoder = Encoder::create(partial.path(), info.width as u32, info.height as u32, &settings)
        .map_err(named)
        .with_context(|| format!("creating {}", args.output.display()))?;

    let cancel = super::common::cancel_on_ctrl_c("masking");
    let bar = super::common::frame_bar(info.frame_count, "masking");
    let started = Instant::now();
    let mut frames = 0u64;
    // Frames whose mask the masker doubts, and the first doubt with its
    // frame's time.
    let mut doubtful = 0u64;
    let mut first_doubt = None;
    let result = (|| -> anyhow::Result<()> {
        while source.read_into(&mut frame)? {
            if cancel.load(Ordering::SeqCst) {
                return Err(crate::Interrupted.into());
            }
            masker
                .compute(&frame.picture(), frame.time, &mut mask)
                .with_context(|| {
                    format!(
                        "{}: frame {} at {:.3} s",
                        args.input.display(),
                        frame.index,
                        frame.time
                    )
                })?;
            if let Some(d) = masker.doubt() {
                doubtful += 1;
                first_doubt.get_or_insert((d, frame.time));
            }
            mask.write_image(&mut image);
            encoder
                .push_mask(&image, frame.time)
                .map_err(named)
                .with_context(|| format!("writing {}", args.output.display()))?;
            frames += 1;
            bar.inc(1);
        }
        Ok(())
    })();
    bar.finish_and_clear();
    crate::video::set_ffmpeg_quiet(false);
    result?;
    encoder
        .finish()
        .map_err(named)
        .with_context(|| format!("writing {}", args.output.display()))?;
    partial
        .finish()
        .with_context(|| format!("writing {}", args.output.display()))?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "wrote {}: {frames} mask frames in {secs:.1} s ({:.0} frames/s)",
        args.output.display(),
        frames as f64 / secs.max(1e-9)
    );
    if let Some((d, t)) = first_doubt {
        eprintln!(
            "underlay: warning: {}: the mask is doubtful on {doubtful} of the {frames} frames (the first at \
             {t:.3} s): {d}; {}",
            args.input.display(),
            d.advice()
        );
    }
    Ok(())
}

/// Runs `masker` `n` times on `frame` (after one warm-up run, which also
/// fills `out`) and returns the median time in milliseconds.
pub fn bench(
    masker: &mut dyn Masker,
    frame: &crate::video::Picture<'_>,
    n: u32,
    out: &mut FloorMask,
) -> Result<f64, crate::mask::MaskError> {
    masker.compute(frame, 0.0, out)?;
    let mut times = Vec::with_capacity(n as usize);
    let mut scratch = FloorMask::new();
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn parse(args: &[&str]) -> Result<crate::cli::Cli, clap::Error> {
        crate::cli::Cli::try_parse_from(["underlay", "mask", "in.png", "-o", "out.png"].iter().chain(args))
    }

    fn settings(args: &[&str]) -> anyhow::Result<MaskSettings> {
        match parse(args)?.command {
            Some(crate::cli::Command::Mask(a)) => a.settings(),
            other => bail!("not a mask command: {other:?}"),
        }
    }

    #[test]
    fn the_floor_hue_seeds_the_adaptive_mask() {
        let MaskSettings::Adaptive(s) = settings(&["--floor-hue", "27"]).unwrap() else {
            panic!("not adaptive");
        };
        assert_eq!(s.floor_hue, Some(27));
        assert_eq!(
            settings(&[]).unwrap(),
            MaskSettings::Adaptive(AdaptiveSettings::default())
        );
        assert!(parse(&["--floor-hue", "180"]).is_err());
        let e = settings(&["--method", "thesis", "--floor-hue", "27"]).unwrap_err();
        assert!(e.to_string().contains("adaptive method"), "{e}");
    }
}
