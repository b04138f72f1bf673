//! `underlay calib`: calibration from point correspondences.
//!
//! `calib solve POINTS.csv` reads image ↔ world points (header `u,v,x,y`,
//! and `z` for points above the floor; other columns such as a point name
//! are ignored; blank lines and lines starting with `#` are skipped), fits
//! a model, prints the report (text, or JSON with `--json`) and with `-o`
//! writes the calibration file that sessions embed or reference. The
//! `pinhole` model fits a full camera (floor and heights); the floor-only
//! models refuse points with heights, naming their lines. `calib check`
//! reports each point's reprojection, heights included, and whether the
//! calibration is a full camera (and where that camera is). `calib refine`
//! lives in `calib_refine`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Serialize;

use super::common::emit;
use crate::calib::points::{LEFT_HANDED, PointsFile, read_points};
use crate::calib::{self, CalibReport, FitOptions};
use crate::geom::Vec2;

/// How points that do not fit are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Least squares over all points (flagged points are reported, and used).
    Lsq,
    /// RANSAC: points beyond --ransac-threshold are left out.
    Ransac,
    /// Least median of squares: flagged points are left out.
    Lmeds,
}

/// Models `calib solve` fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SolveModel {
    /// A plain homography (≥ 4 floor points).
    Homography,
    /// Homography plus radial lens distortion (≥ 6 floor points).
    Radial,
    /// A full camera: focal length, principal point, radial distortion,
    /// rotation and position (≥ 6 points; points at known heights, a `z`
    /// column, let it map them and fit the principal point).
    Pinhole,
}

/// Subcommands of `underlay calib`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Fit a calibration to points and report residuals and outliers.
    Solve(SolveArgs),
    /// Take a camera's calibration from an SSL game log (ssl-vision's model).
    FromSsl(FromSslArgs),
    /// A calibration's error on other points (held-back labels): per-point
    /// residuals and their RMS.
    Check(CheckArgs),
    /// Snap a rough calibration to the painted field lines of a picture
    /// (radial distortion included) and report each line's fit.
    Refine(super::calib_refine::RefineArgs),
    /// A 3D agent's head camera at a time, from its perception log (the
    /// pose of its vision messages; 120° field of view across the
    /// picture's larger side), as a full-camera calibration.
    Agent(AgentArgs),
}

/// Arguments of `underlay calib agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The agent's perception log (plain or gzip'ed).
    #[arg(value_name = "PERCEPTION")]
    pub log: PathBuf,
    /// The match's monitor log: its field, and the times the agent's
    /// messages saw (without it, the messages' own times).
    #[arg(long, value_name = "MATCH.rsmp")]
    pub monitor: Option<PathBuf>,
    /// The time (simulation seconds, the logs' clock).
    #[arg(long, value_name = "SECONDS")]
    pub time: f64,
    /// The picture's size.
    #[arg(long, value_name = "WxH", value_parser = parse_size, default_value = "1280x720")]
    pub size: [u32; 2],
    /// Write the calibration to this file (TOML) instead of standard output.
    #[arg(short, long, value_name = "CALIB.toml")]
    pub output: Option<PathBuf>,
}

/// Arguments of `underlay calib check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// CSV with header `u,v,x,y` and optionally `z` (as for `solve`): the
    /// labelled points.
    #[arg(value_name = "POINTS.csv")]
    pub points: PathBuf,
    /// The calibration to check.
    #[arg(long, value_name = "CALIB.toml")]
    pub calib: PathBuf,
    /// Print the result as JSON (`rms_px`, `residuals`).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `underlay calib from-ssl`.
#[derive(Debug, clap::Args)]
pub struct FromSslArgs {
    /// The game log (SSL_LOG_FILE, plain or gzip'ed).
    #[arg(value_name = "GAME.log")]
    pub log: PathBuf,
    /// The camera's id (without it, the log's cameras are listed).
    #[arg(long, value_name = "N")]
    pub camera: Option<u32>,
    /// Write the calibration to this file (TOML) instead of standard output.
    #[arg(short, long, value_name = "CALIB.toml")]
    pub output: Option<PathBuf>,
    /// The video's size, e.g. 1920x1080, when the log does not say.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub image_size: Option<[u32; 2]>,
}

/// Arguments of `underlay calib solve`.
#[derive(Debug, clap::Args)]
pub struct SolveArgs {
    /// CSV with header `u,v,x,y`: image pixels and world coordinates; an
    /// optional `z` column gives heights above the floor (`--model pinhole`).
    #[arg(value_name = "POINTS.csv")]
    pub points: PathBuf,
    /// Camera model to fit.
    #[arg(long, value_enum, default_value_t = SolveModel::Homography)]
    pub model: SolveModel,
    /// Write the calibration to this file (TOML).
    #[arg(short, long, value_name = "CALIB.toml")]
    pub output: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Fitting method: least squares, or a robust one that leaves flagged points out.
    #[arg(long, value_enum, default_value_t = Method::Lsq)]
    pub method: Method,
    /// RANSAC inlier threshold in pixels, 0.01 to 10000 (default: 3 px at
    /// 1280×720, in proportion to the picture's diagonal).
    #[arg(long, value_name = "PX", value_parser = super::common::parse_pixels)]
    pub ransac_threshold: Option<f64>,
    /// Image size, e.g. 1920x1080: centre and scale of the distortion, and
    /// the clipping margin stored in the calibration.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub image_size: Option<[u32; 2]>,
    /// Centre of distortion in pixels, e.g. 958.5,541 (default: the image
    /// centre); for `pinhole`, the principal point, then held there.
    #[arg(long, value_name = "U,V", value_parser = parse_point)]
    pub principal_point: Option<Vec2>,
    /// Unit of the points' world coordinates (`mm`, `cm`, `m`), recorded in
    /// the calibration file: a log in another of these units is converted.
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    /// Accepted for old scripts: left-handed world frames are accepted
    /// anyway (with a note).
    #[arg(long, hide = true)]
    pub allow_mirrored: bool,
}

fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WIDTHxHEIGHT"))?;
    let parse = |t: &str| t.trim().parse::<u32>().ok().filter(|&v| v > 0 && v <= 1 << 16);
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok([w, h]),
        _ => Err(format!("`{s}` is not WIDTHxHEIGHT with sizes from 1 to 65536")),
    }
}

fn parse_point(s: &str) -> Result<Vec2, String> {
    let (u, v) = s.split_once(',').ok_or_else(|| format!("`{s}` is not U,V"))?;
    let parse = |t: &str| t.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    match (parse(u), parse(v)) {
        (Some(u), Some(v)) => Ok(Vec2::new(u, v)),
        _ => Err(format!("`{s}` is not two finite numbers U,V")),
    }
}

/// Runs an `underlay calib` subcommand.
pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Solve(a) => solve(a),
        Command::FromSsl(a) => from_ssl(a),
        Command::Check(a) => check(a),
        Command::Refine(a) => super::calib_refine::run(a),
        Command::Agent(a) => agent(a),
    }
}

fn agent(a: AgentArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.output {
        let inputs = std::iter::once(a.log.as_path()).chain(a.monitor.as_deref());
        crate::files::refuse_overwriting_inputs(out, inputs)?;
    }
    let camera = crate::formats::camera_of(&a.log, a.monitor.as_deref())?;
    let track = &camera.track;
    let name = a.log.display();
    let Some(pose) = track.pose_at(a.time) else {
        match (track.poses().first(), track.poses().last()) {
            (Some(first), Some(last)) => bail!(
                "{name}: {}'s camera is not known at {} s: its vision messages place it from {} s to {} s (held {} s after each)",
                track.name,
                a.time,
                first.time,
                last.time,
                track.hold
            ),
            _ => bail!("{name}: none of {}'s vision messages could be placed", track.name),
        }
    };
    let [w, h] = a.size;
    let c = track
        .camera(&pose, w as usize, h as usize)
        .with_context(|| format!("{}'s camera at {} s", track.name, a.time))?;
    let header = format!(
        "# underlay calibration: {}'s head camera at {} s, from {name} ({}° across the larger side of {w}×{h})\n# {}\n",
        track.name,
        a.time,
        track.fov_deg,
        camera_line(&c)
    );
    match &a.output {
        Some(out) => {
            c.save(out, &header)
                .context("cannot write the calibration file")?;
            emit(&format!(
                "{}'s camera at {} s → {}\n",
                track.name,
                a.time,
                out.display()
            ))
        }
        None => emit(&format!("{header}{}", c.to_toml())),
    }
}

/// One point of `calib check`.
#[derive(Debug, Serialize)]
struct Checked {
    /// Line of the points file.
    line: usize,
    u: f64,
    v: f64,
    x: f64,
    y: f64,
    /// Height above the floor.
    z: f64,
    /// Where the calibration puts the world point (`None`: not in the
    /// picture, or above the floor of a calibration that knows only it).
    predicted: Option<[f64; 2]>,
    /// Pixels from the labelled point.
    residual_px: Option<f64>,
}

/// Whether a calibration is a full camera, as a line of text.
pub(crate) fn camera_line(cal: &calib::Calibration) -> String {
    match (cal.is_full_camera(), cal.camera()) {
        (true, Some(cam)) => format!("full camera {}", cam.describe()),
        (true, None) => "full camera (maps heights; its projection is no right-handed camera's)".into(),
        (false, _) => "floor only (a homography): points above the floor cannot be mapped; fit \
                       `--model pinhole` with points at heights for a full camera"
            .into(),
    }
}

fn check(a: CheckArgs) -> anyhow::Result<()> {
    let pts = read_points(&a.points)?;
    let cal = calib::Calibration::load(&a.calib)?;
    let full = cal.is_full_camera();
    let checked: Vec<Checked> = pts
        .points3()
        .iter()
        .zip(&pts.lines)
        .map(|(c, &line)| {
            let p = if c.world[2] == 0.0 {
                cal.project(Vec2::new(c.world[0], c.world[1]))
            } else {
                cal.project3(c.world)
            };
            Checked {
                line,
                u: c.image.x,
                v: c.image.y,
                x: c.world[0],
                y: c.world[1],
                z: c.world[2],
                predicted: p.map(|p| [p.x, p.y]),
                residual_px: p.map(|p| (p - c.image).length()),
            }
        })
        .collect();
    let raised = if full { 0 } else { pts.raised().len() };
    let seen: Vec<f64> = checked.iter().filter_map(|c| c.residual_px).collect();
    let rms =
        (!seen.is_empty()).then(|| (seen.iter().map(|r| r * r).sum::<f64>() / seen.len() as f64).sqrt());
    let max = seen
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    let unseen = checked.len() - seen.len() - raised;
    if a.json {
        let j = serde_json::json!({
            "points": checked.len(),
            "rms_px": rms,
            "max_px": max,
            "not_in_picture": unseen,
            "above_floor_not_mapped": raised,
            "full_camera": full,
            "camera": cal.camera(),
            "residuals": checked,
        });
        return emit(&(serde_json::to_string_pretty(&j)? + "\n"));
    }
    let mut out = String::new();
    writeln!(
        out,
        "{} points of {} against {}",
        checked.len(),
        a.points.display(),
        a.calib.display()
    )?;
    writeln!(out, "calibration: {}", camera_line(&cal))?;
    for c in &checked {
        let at = if c.z == 0.0 {
            format!("({}, {})", c.x, c.y)
        } else {
            format!("({}, {}, {})", c.x, c.y, c.z)
        };
        match c.residual_px {
            Some(r) => writeln!(out, "  line {:>4}: {at} → {r:8.2} px", c.line)?,
            None if c.z != 0.0 && !full => {
                writeln!(out, "  line {:>4}: {at} → above the floor: not mapped", c.line)?
            }
            None => writeln!(out, "  line {:>4}: {at} → not in the picture", c.line)?,
        }
    }
    match (rms, max) {
        (Some(r), Some(m)) => writeln!(out, "RMS {r:.2} px, largest {m:.2} px")?,
        _ => writeln!(out, "no point falls in the picture")?,
    }
    if unseen > 0 {
        writeln!(
            out,
            "{unseen} points fall outside the picture (behind the camera or beyond the lens)"
        )?;
    }
    if raised > 0 {
        writeln!(
            out,
            "{raised} points above the floor are not checked: {}",
            calib::FLOOR_ONLY
        )?;
    }
    emit(&out)
}

/// Camera `id` of the SSL game log `log` (read into `cams`), or an error
/// listing the cameras it has.
fn pick_camera(
    log: &std::path::Path,
    cams: &crate::ssl::camera::LogCameras,
    id: Option<u32>,
) -> anyhow::Result<(u32, crate::ssl::packets::CameraModel)> {
    let name = log.display();
    let list = || {
        let ids: Vec<String> = cams.latest.keys().map(u32::to_string).collect();
        ids.join(", ")
    };
    if cams.latest.is_empty() {
        bail!("{name}: no vision geometry packet carries a camera calibration");
    }
    let Some(id) = id else {
        bail!(
            "{name} has calibrations of cameras {}: choose one with --camera N",
            list()
        );
    };
    let Some(model) = cams.latest.get(&id) else {
        bail!(
            "{name} has no calibration of camera {id}; it has cameras {}",
            list()
        );
    };
    Ok((id, *model))
}

/// The calibration of camera `id` of the log among `logs` that carries
/// camera calibrations (an SSL game log's cameras), for `view`, `export`
/// and `sync` with `--camera N` over a camera video.
pub(crate) fn log_camera(logs: &[std::path::PathBuf], id: u32) -> anyhow::Result<crate::calib::Calibration> {
    let Some((log, cams)) = crate::formats::cameras_among(logs)? else {
        bail!("--camera {id} needs an SSL game log among the logs (--log GAME.log)");
    };
    let name = log.display();
    let list = || {
        let ids: Vec<String> = cams.iter().map(|c| c.id.to_string()).collect();
        ids.join(", ")
    };
    if cams.is_empty() {
        bail!("{name}: no vision geometry packet carries a camera calibration");
    }
    let Some(cam) = cams.iter().find(|c| c.id == id) else {
        bail!(
            "{name} has no calibration of camera {id}; it has cameras {}",
            list()
        );
    };
    cam.calibration
        .clone()
        .map_err(|e| anyhow::anyhow!("camera {id} of {name} cannot be used as a calibration: {e}"))
}

fn from_ssl(a: FromSslArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.output {
        crate::files::refuse_overwriting_inputs(out, [a.log.as_path()])?;
    }
    use crate::ssl::camera;
    let name = a.log.display();
    let cams = camera::cameras_in(&a.log).context("cannot read the camera calibrations")?;
    let (id, model) = pick_camera(&a.log, &cams, a.camera)?;
    let mut c = camera::calibration(&model)
        .with_context(|| format!("camera {id} of {name} cannot be used as a calibration"))?;
    if let Some([w, h]) = a.image_size {
        c = c.with_image_size(w, h);
    }
    let mut notes = camera::notes(&model);
    if a.image_size.is_some() {
        notes.retain(|n| !n.contains("image size"));
    }
    if cams.versions.get(&id).is_some_and(|&v| v > 1) {
        notes.push(format!(
            "the calibration changed {} times during the log; the last one is used",
            cams.versions[&id] - 1
        ));
    }
    let header = format!(
        "# underlay calibration: camera {id} of {name} (ssl-vision: focal length {} px, principal point \
         ({}, {}), distortion {})\n# {}\n",
        model.focal_length,
        model.principal_point.x,
        model.principal_point.y,
        model.distortion,
        camera_line(&c)
    );
    for n in &notes {
        eprintln!("underlay: note: {n}");
    }
    match &a.output {
        Some(out) => {
            c.save(out, &header)
                .context("cannot write the calibration file")?;
            emit(&format!("camera {id} of {name} → {}\n", out.display()))
        }
        None => emit(&format!("{header}{}", c.to_toml())),
    }
}

/// The JSON output: the report and where its points came from.
#[derive(Serialize)]
struct JsonOut<'a> {
    #[serde(flatten)]
    report: &'a CalibReport,
    /// The points file.
    file: String,
    /// Line number of each point in the points file.
    lines: &'a [usize],
    /// The calibration file written, if any.
    output: Option<String>,
    /// Whether the calibration maps points above the floor.
    full_camera: bool,
}

fn solve(a: SolveArgs) -> anyhow::Result<()> {
    if let Some(t) = a.ransac_threshold
        && !(t.is_finite() && t > 0.0)
    {
        bail!("--ransac-threshold must be a positive number of pixels, not {t}");
    }
    if let Some(out) = &a.output {
        crate::files::refuse_overwriting_inputs(out, [a.points.as_path()])?;
    }
    if let Some(u) = &a.unit
        && calib::unit::metres_per(u).is_none()
    {
        bail!("--unit {u}: give mm, cm or m");
    }
    let pts = read_points(&a.points)?;
    let model = match a.model {
        SolveModel::Homography => calib::Model::Homography,
        SolveModel::Radial => calib::Model::Radial,
        SolveModel::Pinhole => calib::Model::Pinhole,
    };
    // Heights need a camera in space: the floor-only models refuse them
    // rather than fit them as floor points.
    if model != calib::Model::Pinhole
        && let Some(e) = pts.heights_refused(
            &format!("the {model} model"),
            "fit a full camera with --model pinhole, or leave those points out",
        )
    {
        bail!("cannot calibrate from {}: {e}", a.points.display());
    }
    let opts = FitOptions {
        model,
        method: match a.method {
            Method::Lsq => calib::Method::LeastSquares,
            Method::Ransac => calib::Method::Ransac,
            Method::Lmeds => calib::Method::Lmeds,
        },
        ransac_threshold_px: a.ransac_threshold,
        principal_point: a.principal_point,
        image_size: a.image_size,
    };
    let fit = if model == calib::Model::Pinhole {
        calib::fit_camera(&pts.points3(), &opts)
    } else {
        calib::fit(&pts.points, &opts)
    };
    let fit = fit.map_err(|e| {
        // Name the lines of the points an error talks about.
        anyhow::Error::new(e).context(format!("cannot calibrate from {}", a.points.display()))
    });
    let fit = fit.map_err(|e| annotate_lines(e, &pts.lines))?;
    if let Some(out) = &a.output {
        let header = format!(
            "# underlay calibration: {} model fitted to {} of {} points from {}\n# RMS {:.3} px{}\n# {}\n",
            fit.report.model,
            fit.report.used,
            fit.report.points,
            a.points.display(),
            fit.report.rms_px,
            fit.report
                .loo_rms_px
                .map(|l| format!(", leave-one-out RMS {l:.3} px"))
                .unwrap_or_default(),
            camera_line(&fit.calibration)
        );
        let fitted = pts.points3().iter().map(calib::unit::FittedPoint::from).collect();
        let mut c = fit.calibration.clone().with_fitted_points(fitted);
        if let Some(u) = &a.unit {
            c = c.with_world_unit(u.clone());
        }
        c.save(out, &header)
            .context("cannot write the calibration file")?;
    }
    if a.json {
        let j = JsonOut {
            report: &fit.report,
            file: a.points.display().to_string(),
            lines: &pts.lines,
            output: a.output.as_ref().map(|p| p.display().to_string()),
            full_camera: fit.calibration.is_full_camera(),
        };
        let mut text = serde_json::to_string_pretty(&j).context("cannot format the report")?;
        text.push('\n');
        emit(&text)
    } else {
        emit(&text_report(&fit, &pts, a.output.as_deref()))
    }
}

/// Adds "(line N)" after each "point N" of an error message.
fn annotate_lines(e: anyhow::Error, lines: &[usize]) -> anyhow::Error {
    let msg = format!("{:#}", e);
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg.as_str();
    while let Some(pos) = rest.find("point ") {
        let (head, tail) = rest.split_at(pos + "point ".len());
        out.push_str(head);
        let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
        out.push_str(&digits);
        if let Some(line) = digits.parse::<usize>().ok().and_then(|i| lines.get(i)) {
            let _ = write!(out, " (line {line})");
        }
        rest = &tail[digits.len()..];
    }
    out.push_str(rest);
    anyhow::anyhow!(out)
}

fn fmt_opt(v: Option<f64>, width: usize) -> String {
    match v {
        Some(v) => format!("{v:>width$.3}"),
        None => format!("{:>width$}", "-"),
    }
}

/// The human-readable report.
fn text_report(fit: &calib::Fit, pts: &PointsFile, output: Option<&Path>) -> String {
    let r = &fit.report;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "model: {} (method {}), {} points, {} used",
        r.model, r.method, r.points, r.used
    );
    let _ = writeln!(s, "calibration: {}", camera_line(&fit.calibration));
    if let Some(cam) = &r.camera {
        let d = cam.distortion.unwrap_or_default();
        let _ = writeln!(
            s,
            "camera: rvec = [{:.6}, {:.6}, {:.6}], tvec = [{:.3}, {:.3}, {:.3}], distortion k1 = {:.6}, k2 = {:.6}",
            cam.rvec[0], cam.rvec[1], cam.rvec[2], cam.tvec[0], cam.tvec[1], cam.tvec[2], d[0], d[1]
        );
        if let Some(size) = fit.calibration.image_size() {
            let [h, v] = cam.field_of_view_deg(size);
            let _ = writeln!(s, "field of view: {h:.1}° × {v:.1}°");
        }
    } else if let Some(d) = &r.distortion {
        let _ = writeln!(
            s,
            "distortion: k1 = {:.6}, k2 = {:.6} about ({:.1}, {:.1}), normalised by {:.1} px",
            d.k1, d.k2, d.center[0], d.center[1], d.focal[0]
        );
    }
    let _ = writeln!(
        s,
        "rms: {:.3} px   leave-one-out rms: {}   max: {:.3} px",
        r.rms_px,
        r.loo_rms_px.map_or("-".into(), |v| format!("{v:.3} px")),
        r.max_residual_px
    );
    if r.used < r.points {
        let _ = writeln!(
            s,
            "kept {} of {} points{}; rms on all {}: {:.3} px",
            r.used,
            r.points,
            r.ransac_threshold_px
                .map(|t| format!(" (RANSAC threshold {t:.1} px)"))
                .unwrap_or_default(),
            r.points,
            r.rms_all_px
        );
    }
    // A height column when any point has a height.
    let heights = !pts.raised().is_empty();
    let _ = writeln!(
        s,
        "\n{:>5} {:>5} {:>10} {:>10} {:>12} {:>12}{} {:>9} {:>9}",
        "point",
        "line",
        "u",
        "v",
        "x",
        "y",
        if heights {
            format!(" {:>10}", "z")
        } else {
            String::new()
        },
        "residual",
        "loo"
    );
    let mut flag = vec![0u8; pts.points.len()];
    for &i in &r.outliers {
        flag[i] = 1;
    }
    for &i in &r.excluded {
        flag[i] = 2;
    }
    for (i, c) in pts.points.iter().enumerate() {
        let mark = if flag[i] == 2 {
            "  excluded"
        } else if flag[i] == 1 {
            "  outlier"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "{:>5} {:>5} {:>10.2} {:>10.2} {:>12.2} {:>12.2}{} {} {}{}",
            i,
            pts.lines[i],
            c.image.x,
            c.image.y,
            c.world.x,
            c.world.y,
            if heights {
                format!(" {:>10.2}", pts.heights[i])
            } else {
                String::new()
            },
            fmt_opt(r.residuals_px[i], 9),
            fmt_opt(r.loo_residuals_px[i], 9),
            mark
        );
    }
    if r.outliers.is_empty() {
        let _ = writeln!(s, "\noutliers: none");
    } else {
        let _ = writeln!(
            s,
            "\noutliers ({} flagged{}):",
            r.outliers.len(),
            r.outlier_threshold_px
                .map(|t| format!(", threshold {t:.3} px"))
                .unwrap_or_default()
        );
        for p in &r.outlier_points {
            let z = if p.z == 0.0 {
                String::new()
            } else {
                format!(", {}", p.z)
            };
            let _ = writeln!(
                s,
                "  point {} (line {}): image ({}, {}), world ({}, {}{z}): {:.3} px from the robust fit \
                 (residual {} px)",
                p.index,
                pts.lines[p.index],
                p.u,
                p.v,
                p.x,
                p.y,
                p.flagged_residual_px,
                fmt_opt(p.residual_px, 0)
            );
        }
    }
    if r.left_handed {
        let _ = writeln!(s, "note: {LEFT_HANDED}");
    }
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    if let Some(o) = output {
        let _ = writeln!(s, "wrote {}", o.display());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_parsers() {
        assert_eq!(parse_size("1920x1080"), Ok([1920, 1080]));
        assert!(parse_size("1920").is_err() && parse_size("0x5").is_err() && parse_size("ax5").is_err());
        assert_eq!(parse_point("1.5, 2"), Ok(Vec2::new(1.5, 2.0)));
        assert!(parse_point("1").is_err() && parse_point("inf,2").is_err());
    }

    #[test]
    fn errors_get_line_numbers() {
        let lines = [2, 3, 5, 7, 8, 9, 10, 11, 12, 14];
        let e = annotate_lines(
            anyhow::anyhow!("point 2 and point 9 collide; point 30 too"),
            &lines,
        );
        assert_eq!(
            e.to_string(),
            "point 2 (line 5) and point 9 (line 14) collide; point 30 too"
        );
    }
}
