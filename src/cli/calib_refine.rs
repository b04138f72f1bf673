//! `underlay calib refine`: snaps a rough calibration to the painted lines
//! of a picture (or of a video's frame), and reports how well each line
//! fits ([`crate::calib::refine`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::calib::refine::{RefineOptions, RefineReport, refine};
use crate::calib::{self, Calibration, FitOptions, presets};
use crate::formats::open_source as open;
use crate::video::source::OpenOptions;

use super::common::{Model, emit};
use crate::calib::points::read_points;

/// Arguments of `underlay calib refine`.
#[derive(Debug, clap::Args)]
pub struct RefineArgs {
    /// A picture of the field, or a video of a fixed camera (its
    /// background picture — each pixel's median over --frames frames spread
    /// across it, the players taken out — or its frame at --at), or a live
    /// camera (a URL FFmpeg opens, a device): its background over --grab
    /// seconds.
    #[arg(value_name = "IMAGE")]
    pub image: PathBuf,
    /// The rough calibration to start from (in the preset's world frame,
    /// e.g. fitted to four clicked preset points).
    #[arg(
        long,
        value_name = "ROUGH.toml",
        required_unless_present_any = ["points", "from"],
        conflicts_with_all = ["points", "from"]
    )]
    pub calib: Option<PathBuf>,
    /// Start from a homography fitted to these points (`u,v,x,y`, as for
    /// `calib solve`; four clicked preset points are enough) instead of --calib.
    #[arg(long, value_name = "POINTS.csv", conflicts_with = "from")]
    pub points: Option<PathBuf>,
    /// No clicks: search the camera poses where it stands, roughly, for the
    /// one whose field agrees best with the picture, then snap (a stretch:
    /// it finds broadcast views from the side; the verdict says when not).
    #[arg(long, value_enum, value_name = "WHERE")]
    pub from: Option<crate::calib::refine::search::Hint>,
    /// The field whose painted lines are in the picture (ssl-a, ssl-b,
    /// football, or football:LxW for a pitch L × W metres).
    #[arg(long, value_name = "PRESET")]
    pub preset: String,
    /// The model of the result.
    #[arg(long, value_enum, default_value_t = Model::Radial)]
    pub model: Model,
    /// Write the refined calibration to this file (TOML).
    #[arg(short, long, value_name = "OUT.toml")]
    pub output: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Snap to the video's frame at this time, in seconds, instead of its
    /// background picture (a picture has one frame).
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub at: Option<f64>,
    /// Frames of a video the background picture is the median of (1: the
    /// first frame alone).
    #[arg(long, value_name = "N", default_value_t = 15, value_parser = clap::value_parser!(u16).range(1..=31))]
    pub frames: u16,
    /// Half the width searched across each line at first, in pixels
    /// (default: 15 px plus 1.5 % of the picture's diagonal).
    #[arg(long, value_name = "PX", value_parser = super::common::parse_pixels)]
    pub search: Option<f64>,
    /// Take the result even when it is not trustworthy (the lines in view
    /// not found where it puts them): write it and exit 0.
    #[arg(long)]
    pub accept: bool,
    /// Also write the picture snapped to (a video's background picture, or
    /// its frame) to this file (PNG or JPEG), to look at.
    #[arg(long, value_name = "PICTURE.png")]
    pub save_picture: Option<PathBuf>,
    /// Least brightness of a painted line over the floor beside it (luma
    /// levels, 0 to 255).
    #[arg(long, value_name = "LEVELS", default_value_t = 10.0)]
    pub min_contrast: f32,
    /// Seconds of a live camera watched for its background picture (its
    /// --frames frames spread over them).
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0, value_parser = super::common::parse_seconds)]
    pub grab: f64,
    /// Seconds to wait for a live camera's first picture (default: 10;
    /// with --timeout, that bounds the wait).
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub wait: Option<f64>,
    /// Stop watching a live camera this many seconds after starting, the
    /// wait for it included: before its first picture that is an error
    /// (nothing is written); after it, the frames that came are used.
    #[arg(long, value_name = "SECONDS", value_parser = super::common::parse_seconds)]
    pub timeout: Option<f64>,
}

/// The JSON output.
#[derive(Serialize)]
struct JsonOut<'a> {
    image: String,
    /// What was snapped to: "the frame at T s" or "the background of N
    /// frames from A s to B s".
    picture: String,
    preset: String,
    #[serde(flatten)]
    report: &'a RefineReport,
    seconds: f64,
    output: Option<String>,
}

pub fn run(a: RefineArgs) -> anyhow::Result<()> {
    if let Some(at) = a.at
        && !(at.is_finite() && at >= 0.0)
    {
        bail!("--at must be a time in seconds from 0, not {at}");
    }
    if let Some(s) = a.search
        && !(s.is_finite() && s > 0.0)
    {
        bail!("--search must be a positive number of pixels, not {s}");
    }
    if !(a.min_contrast.is_finite() && (0.0..=255.0).contains(&a.min_contrast)) {
        bail!("--min-contrast must be from 0 to 255, not {}", a.min_contrast);
    }
    let Some(preset) = presets::preset(&a.preset) else {
        bail!(
            "--preset {}: no such field preset; there are {}",
            a.preset,
            presets::choices()
        );
    };
    if let Some(out) = &a.output {
        let inputs: Vec<&Path> = [Some(a.image.as_path()), a.calib.as_deref(), a.points.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        crate::files::refuse_overwriting_inputs(out, inputs)?;
    }
    let (rough, from) = match a.from {
        Some(hint) => (None, format!("no clicks (the camera {})", hint.describe())),
        None => {
            let (r, f) = rough_calibration(&a)?;
            if r.is_full_camera() {
                eprintln!(
                    "underlay: note: {f} is a full camera; snapping to the painted lines fits the floor only, \
                     so the result maps no heights (fit a camera to points at heights with `calib solve --model \
                     pinhole`)"
                );
            }
            (Some(r), f)
        }
    };
    // The preset is in its unit; a calibration in another known unit is
    // converted for the search and back for the result.
    let own_unit = rough.as_ref().and_then(|r| r.world_unit().map(str::to_owned));
    let rough_mm = match &rough {
        Some(r) => {
            let (r_mm, check) = r.for_unit(preset.unit);
            if let calib::unit::UnitCheck::Unknown { calibration, .. } = &check {
                bail!(
                    "{from}: its world unit `{calibration}` cannot be converted to the preset's {}",
                    preset.unit
                );
            }
            Some(r_mm)
        }
        None => None,
    };

    let (picture, what) = picture(&a)?;
    if let Some(p) = &a.save_picture {
        crate::files::refuse_overwriting_inputs(p, [a.image.as_path()])?;
        crate::video::still::save_rgb(p, &picture)
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let opts = RefineOptions {
        model: match a.model {
            Model::Homography => calib::Model::Homography,
            Model::Radial => calib::Model::Radial,
        },
        search_px: a.search,
        min_contrast: a.min_contrast,
        ..RefineOptions::default()
    };
    let t0 = Instant::now();
    let refined = match (&rough_mm, a.from) {
        (Some(r), _) => refine(&picture, r, &preset, &opts),
        (None, Some(hint)) => crate::calib::refine::search::find(&picture, &preset, hint, &opts),
        (None, None) => bail!("give --calib ROUGH.toml, --points POINTS.csv or --from WHERE"),
    }
    .with_context(|| format!("cannot refine {from} on {} ({what})", a.image.display()))?;
    let seconds = t0.elapsed().as_secs_f64();
    // The field whose lines it was snapped to is where the floor is.
    let mut result = refined
        .calibration
        .with_world_unit(preset.unit)
        .with_field(presets::FieldSpec::Preset(preset.spec()));
    if let Some(u) = &own_unit {
        let (c, _) = result.for_unit(u);
        result = c.with_world_unit(u.clone());
    }
    let trusted = refined.report.trusted;
    let write = trusted || a.accept;
    if let Some(out) = a.output.as_ref().filter(|_| write) {
        let r = &refined.report;
        let header = format!(
            "# underlay calibration: {} model refined to the {} lines in {} (from {})\n# {} points on the lines, \
             RMS {:.3} px across them\n",
            r.model,
            preset.spec(),
            a.image.display(),
            from,
            r.used,
            r.rms_px
        );
        result
            .save(out, &header)
            .context("cannot write the calibration file")?;
    }
    if a.json {
        let j = JsonOut {
            image: a.image.display().to_string(),
            picture: what.clone(),
            preset: preset.spec(),
            report: &refined.report,
            seconds,
            output: a
                .output
                .as_ref()
                .filter(|_| write)
                .map(|p| p.display().to_string()),
        };
        let mut text = serde_json::to_string_pretty(&j).context("cannot format the report")?;
        text.push('\n');
        emit(&text)?;
    } else {
        emit(&text_report(
            &refined.report,
            &format!("{from} on {what}"),
            seconds,
            a.from.is_none(),
            a.output.as_deref().filter(|_| write),
        ))?;
    }
    if !write {
        bail!(
            "the refined calibration is not trustworthy ({}){}; --accept takes it anyway",
            refined.report.verdict.reasons.join("; "),
            if a.output.is_some() {
                ", so it was not written"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// The picture to snap to and what it is: a video's background picture
/// (unless --at names a frame, --frames is 1, or the camera moves, which is
/// said), else the frame at --at (the first).
fn picture(a: &RefineArgs) -> anyhow::Result<(crate::image::RgbImage, String)> {
    let input = a.image.to_string_lossy();
    if crate::live::CameraOptions::new(&input).is_stream() {
        return grab(a, &input);
    }
    let mut source = open(&a.image, &OpenOptions::default())?;
    let info = source.info().clone();
    let several = info.duration > 1.5 * info.frame_duration();
    if a.at.is_none() && a.frames > 1 && several {
        let t0 = Instant::now();
        let bg = crate::video::background::background(source.as_mut(), usize::from(a.frames))
            .with_context(|| format!("{}: making its background picture", a.image.display()))?;
        let (first, last) = (bg.times.first().copied(), bg.times.last().copied());
        if !bg.camera_moves()
            && let (Some(first), Some(last)) = (first, last)
        {
            let what = format!(
                "the background of {} frames from {first:.1} s to {last:.1} s ({:.2} s to make)",
                bg.times.len(),
                t0.elapsed().as_secs_f64()
            );
            return Ok((bg.image, what));
        }
        let moved = bg.moved_frames();
        eprintln!(
            "underlay: {}: the camera moves ({moved} of {} frames spread over it show another view), so there is \
             no background picture: snapping to its first frame (--at chooses another)",
            a.image.display(),
            bg.changed.len()
        );
    }
    let at = a.at.unwrap_or(0.0);
    let frame = source
        .frame_at(at)
        .with_context(|| format!("{}: reading the frame at {at} s", a.image.display()))?
        .with_context(|| format!("{}: no picture in this file", a.image.display()))?;
    let what = if several {
        format!("the frame at {:.3} s", frame.time)
    } else {
        "the picture".to_owned()
    };
    Ok((frame.image, what))
}

/// A live camera's background picture: `--frames` frames spread over
/// `--grab` seconds of it from its first picture, their median (or its
/// first frame, or the one frame when the camera moves, which is said).
/// The camera is read as `live` reads it (from the stream's first
/// keyframe); what it waits for is said on stderr as it changes. A stop
/// (Ctrl-C, a signal, `--timeout`) before the first picture is an error;
/// after it, the frames that came are used.
fn grab(a: &RefineArgs, input: &str) -> anyhow::Result<(crate::image::RgbImage, String)> {
    use std::sync::atomic::Ordering;
    use std::time::Duration;
    if a.at.is_some() {
        bail!(
            "{input}: a live camera has no times to choose: --at is for files (--grab says how long to watch)"
        );
    }
    let cancel = super::common::cancel_on_ctrl_c("calib refine --grab");
    let deadline = a.timeout.map(|t| Instant::now() + Duration::from_secs_f64(t));
    let camera = crate::live::LiveCamera::start(crate::live::CameraOptions::new(input));
    let started = Instant::now();
    let wait = crate::live::FirstPicture {
        // With --timeout alone, it bounds the wait too.
        within: Duration::from_secs_f64(a.wait.unwrap_or(if a.timeout.is_some() {
            super::common::MAX_SECONDS
        } else {
            10.0
        })),
        deadline,
    };
    let mut said = None;
    let first = camera.first_picture(wait, &cancel, &mut |st| {
        let kind = st.keyframe_wait.is_some();
        if let Some(w) = st.waiting(crate::live::now())
            && said != Some(kind)
        {
            said = Some(kind);
            eprintln!("underlay: {input}: {w}");
        }
    })?;
    let count = usize::from(a.frames);
    let step = if count > 1 {
        a.grab / (count - 1) as f64
    } else {
        0.0
    };
    let t0 = first.arrival;
    let (mut times, mut frames) = (vec![0.0], vec![first.frame.image]);
    let end = Instant::now() + Duration::from_secs_f64(a.grab + wait.within.as_secs_f64());
    let mut stopped = None;
    while frames.len() < count && Instant::now() < end {
        if cancel.load(Ordering::Relaxed) {
            stopped = Some("asked to stop");
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            stopped = Some("--timeout reached");
            break;
        }
        let Some(f) = camera.next(Duration::from_millis(100)) else {
            if camera.status().ended {
                break;
            }
            continue;
        };
        let t = f.arrival - t0;
        if t + 1e-3 >= step * frames.len() as f64 {
            times.push(t);
            frames.push(f.frame.image);
        }
    }
    drop(camera);
    // A signal from now on ends the command at once.
    drop(cancel);
    let taken = started.elapsed().as_secs_f64();
    if frames.len() < count {
        eprintln!(
            "underlay: {input}: {} of the {count} frames asked for came in {taken:.1} s{}",
            frames.len(),
            stopped.map(|w| format!(" ({w})")).unwrap_or_default()
        );
    }
    let last = times.last().copied().unwrap_or(0.0);
    let newest = frames.last().cloned();
    let bg = crate::video::background::from_frames(input, times, frames)
        .with_context(|| format!("{input}: making its background picture"))?;
    if bg.times.len() > 1
        && bg.camera_moves()
        && let Some(newest) = newest
    {
        eprintln!(
            "underlay: {input}: the camera moved while it was watched ({} of {} frames show another view), so \
             there is no background picture: snapping to its last picture",
            bg.moved_frames(),
            bg.changed.len()
        );
        return Ok((newest, format!("the live camera's picture at {last:.1} s")));
    }
    let what = if bg.times.len() == 1 {
        "the live camera's first picture".to_owned()
    } else {
        format!(
            "the background of {} frames over {last:.1} s of the live camera",
            bg.times.len()
        )
    };
    Ok((bg.image, what))
}

/// The start: the calibration file, or a homography fitted to the points.
fn rough_calibration(a: &RefineArgs) -> anyhow::Result<(Calibration, String)> {
    if let Some(p) = &a.points {
        let pts = read_points(p)?;
        if let Some(e) = pts.heights_refused(
            "refining on the painted lines",
            "give floor points only (z = 0) to start from",
        ) {
            bail!("{}: {e}", p.display());
        }
        let fit = calib::fit(&pts.points, &FitOptions::default())
            .with_context(|| format!("cannot fit a starting homography to {}", p.display()))?;
        // The clicks go with it: refine re-fits them under lens starts and
        // checks that the result keeps them near where they were clicked.
        let clicked = pts.points.iter().map(calib::unit::FittedPoint::from).collect();
        return Ok((
            fit.calibration.with_fitted_points(clicked),
            p.display().to_string(),
        ));
    }
    let Some(c) = &a.calib else {
        bail!("give --calib ROUGH.toml or --points POINTS.csv");
    };
    Ok((Calibration::load(c)?, c.display().to_string()))
}

fn text_report(r: &RefineReport, from: &str, seconds: f64, moved: bool, output: Option<&Path>) -> String {
    let mut s = String::new();
    let v = &r.verdict;
    let _ = writeln!(
        s,
        "{} model refined from {from} in {} rounds ({} searches, {:.2} s)",
        r.model, r.rounds, r.attempts, seconds
    );
    if r.trusted {
        let _ = writeln!(
            s,
            "trusted: {:.0} % of the lines in view lie on painted lines (within {:.1} px)",
            100.0 * v.found_share,
            v.band_px
        );
    } else {
        let _ = writeln!(s, "NOT TRUSTWORTHY: {}", v.reasons.join("; "));
    }
    let _ = writeln!(
        s,
        "{} points on the lines it reached used ({} found), RMS {:.3} px across them{}",
        r.used,
        r.points,
        r.rms_px,
        if r.trusted {
            ""
        } else {
            " (says nothing about the lines it did not reach)"
        }
    );
    if moved {
        let _ = writeln!(
            s,
            "the field moved by up to {:.1} px from the rough calibration",
            r.moved_px
        );
    }
    let _ = writeln!(s, "\n  in view  length px  on paint  beside    RMS px  line");
    for l in &v.lines {
        let rms = l.rms_px.map_or("-".to_string(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "  {:>7}  {:>9.0}  {:>7.0} %  {:>4.0} %  {:>8}  {}{}",
            l.in_view,
            l.extent_px,
            100.0 * l.found_share,
            100.0 * l.off_share,
            rms,
            l.line,
            l.against.as_deref().map_or(String::new(), |a| format!(" — {a}"))
        );
    }
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    match output {
        Some(p) => {
            let _ = writeln!(s, "wrote {}", p.display());
        }
        None => {
            let _ = writeln!(s, "(use -o OUT.toml to save it)");
        }
    }
    s
}
