//! One export plan for the command line and the viewer: [`ExportPlan`]
//! is built from a session and [`ExportOptions`] (`underlay export`'s
//! flags, or the viewer's export dialog), and decides everything once —
//! the frame source and the draw settings, the output and its range, the
//! encoder, the worker count (one rule, [`default_workers`]), the files
//! the output must not overwrite (every input), and the frame estimate for
//! progress — then runs it and tallies what was drawn, so both get the
//! same warnings. Because the order-dependent part of drawing runs in
//! frame order ([`crate::pipeline::Pipeline::prepare`]), the output does
//! not depend on the worker count: a session exports to the same frames
//! from the viewer and from the command line.
//!
//! A plan runs through the export's stages and reports the export's
//! errors (`mod.rs`), whose jobs are made from plans: the two files name
//! each other.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::tally::Tally;
use super::{ExportError, ExportJob, ExportReport, Preparer, Processor, Progress, expected_frames};
use crate::formats::open_source as open;
use crate::log::Log;
use crate::pipeline::{DrawSettings, FramePlan, Pipeline};
use crate::select::Index;
use crate::session::Session;
use crate::video::{SourceFrame, TimeArg};

/// x264 presets, fastest first.
pub const PRESETS: [&str; 9] = [
    "ultrafast",
    "superfast",
    "veryfast",
    "faster",
    "fast",
    "medium",
    "slow",
    "slower",
    "veryslow",
];

/// What to export of a session, on top of what the session says.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportOptions {
    /// The annotated video to write (its extension picks the container).
    pub output: PathBuf,
    /// Start: the export begins with the frame shown then. Seconds of the
    /// video, or of a rendered match's clock from its start (cycles too).
    pub from: Option<TimeArg>,
    /// End: frames from this time on are left out (as `from`).
    pub to: Option<TimeArg>,
    /// Size of the pictures a source renders itself (a match), instead of
    /// the session's.
    pub size: Option<[usize; 2]>,
    /// Pictures per second a source renders itself, instead of the session's.
    pub fps: Option<f64>,
    /// What a rendered match's camera follows (`ball`, `l10`), instead of
    /// the session's.
    pub follow: Option<String>,
    /// A rendered match's slant (degrees from straight down), instead of
    /// the session's.
    pub tilt: Option<f64>,
    /// A rendered match's magnification, instead of the session's.
    pub zoom: Option<f64>,
    /// A rendered match seen through this agent's camera, instead of the
    /// session's view.
    pub agent_view: Option<String>,
    /// x264 constant rate factor, 0–51 (lower is better).
    pub crf: u8,
    /// x264 preset (one of [`PRESETS`]).
    pub preset: String,
    /// Draw over everything (no floor mask), whatever the session says.
    pub no_mask: bool,
    /// Draw shapes with heights flattened onto the floor when the
    /// calibration knows only the floor, whatever the session says.
    pub flatten_heights: bool,
    /// Log time offset instead of the session's.
    pub offset: Option<f64>,
    /// Draw only primitives with level ≤ this.
    pub max_level: Option<i32>,
    /// Draw only these entities and their descendants (when not empty).
    pub entities: Vec<String>,
    /// Drawing threads; `None` for [`default_workers`].
    pub workers: Option<usize>,
    /// Show a progress bar on stderr (only drawn on a terminal).
    pub progress_bar: bool,
    /// Export even with no calibration (nothing of the log can be placed
    /// on the picture then; without it, that is an error).
    pub no_calibration: bool,
    /// Write only this part of the export (`--segment K/N`).
    pub segment: Option<super::Segment>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            output: PathBuf::new(),
            from: None,
            to: None,
            size: None,
            fps: None,
            follow: None,
            tilt: None,
            agent_view: None,
            zoom: None,
            crf: 20,
            preset: "veryfast".into(),
            no_mask: false,
            flatten_heights: false,
            offset: None,
            max_level: None,
            entities: Vec::new(),
            workers: None,
            progress_bar: false,
            no_calibration: false,
            segment: None,
        }
    }
}

impl ExportOptions {
    /// Checks the options; the error says what to fix.
    pub fn check(&self) -> Result<(), ExportError> {
        if self.output.as_os_str().is_empty() {
            return Err(ExportError::NoOutput);
        }
        let seconds = |t: Option<TimeArg>, default: f64| match t {
            Some(TimeArg::Seconds(s) | TimeArg::Cycles(s) | TimeArg::Video(s)) => s,
            None => default,
        };
        let (from, to) = (
            seconds(self.from, f64::NEG_INFINITY),
            seconds(self.to, f64::INFINITY),
        );
        let same_kind = matches!(
            (self.from, self.to),
            (Some(TimeArg::Seconds(_)), Some(TimeArg::Seconds(_)))
                | (Some(TimeArg::Cycles(_)), Some(TimeArg::Cycles(_)))
                | (Some(TimeArg::Video(_)), Some(TimeArg::Video(_)))
        );
        let finite = [self.from, self.to]
            .iter()
            .flatten()
            .all(|&t| seconds(Some(t), 0.0).is_finite());
        if !finite || (same_kind && from.partial_cmp(&to) != Some(std::cmp::Ordering::Less)) {
            return Err(ExportError::BadRange { from, to });
        }
        if let Some(fps) = self.fps.filter(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(ExportError::BadRate { fps });
        }
        if self.crf > 51 {
            return Err(ExportError::BadCrf { crf: self.crf });
        }
        if !PRESETS.contains(&self.preset.as_str()) {
            return Err(ExportError::UnknownPreset {
                preset: self.preset.clone(),
            });
        }
        if let Some(offset) = self.offset.filter(|o| !o.is_finite()) {
            return Err(ExportError::BadOffset { offset });
        }
        Ok(())
    }

    /// `session` with these options' overrides applied.
    pub fn apply_to(&self, session: &mut Session) {
        if let Some(o) = self.offset {
            session.offset = o;
        }
        if self.max_level.is_some() {
            session.filter.max_level = self.max_level;
        }
        if !self.entities.is_empty() {
            session.filter.only = self.entities.clone();
        }
        if self.no_mask {
            session.draw.floor_mask = false;
        }
        if self.flatten_heights {
            session.draw.flatten_heights = true;
        }
        if self.size.is_some() {
            session.picture.size = self.size;
        }
        if self.fps.is_some() {
            session.picture.fps = self.fps;
        }
        if self.follow.is_some() {
            session.picture.follow = self.follow.clone();
        }
        if self.tilt.is_some() {
            session.picture.tilt = self.tilt;
        }
        if self.zoom.is_some() {
            session.picture.zoom = self.zoom;
        }
        if self.agent_view.is_some() {
            session.picture.agent_view = self.agent_view.clone();
        }
    }
}

/// The drawing threads an export uses unless told otherwise: masking and
/// drawing cost far less than decoding and x264 together, so one worker is
/// enough on small machines; bigger ones draw in parallel (a quarter of
/// the cores, at most 4).
pub fn default_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 4).clamp(1, 4)
}

/// An export decided and checked, ready to run.
#[derive(Clone, Debug)]
pub struct ExportPlan {
    /// Source, output, range, encoder settings and protected paths.
    pub job: ExportJob,
    /// What every frame is drawn with (the source's clocks attached).
    pub settings: DrawSettings,
    /// Drawing threads.
    pub workers: usize,
    /// Frames the export should write, for progress.
    pub expected_frames: Option<u64>,
    /// What was decided on the way that the report warns about (a
    /// calibration converted to the log's unit).
    pub notes: Vec<String>,
    log: Arc<Log>,
    index: Arc<Index>,
}

impl ExportPlan {
    /// The export of `session` (read from `session_file`, when it was)
    /// with `options`: reads its logs.
    pub fn from_session(
        session: &Session,
        session_file: Option<&Path>,
        options: &ExportOptions,
    ) -> Result<Self, ExportError> {
        options.check()?;
        let log = Arc::new(session.load_logs()?);
        let index = Arc::new(Index::new(&log));
        Self::with_log(session, session_file, log, index, options)
    }

    /// Like [`from_session`](Self::from_session) with the session's logs
    /// already read and merged into `log`, and indexed.
    pub fn with_log(
        session: &Session,
        session_file: Option<&Path>,
        log: Arc<Log>,
        index: Arc<Index>,
        options: &ExportOptions,
    ) -> Result<Self, ExportError> {
        options.check()?;
        let mut session = session.clone();
        options.apply_to(&mut session);
        let mut settings = session.draw_settings()?;
        // The source must open, and a mask image or video fit it, before
        // anything is written.
        let open_options = session.open_options();
        let info = open(&session.video, &open_options)?.info().clone();
        settings.time = settings.time.with_clocks(info.clocks.clone());
        if settings.calibration.is_none() {
            // A rendered match draws its logs through its own view.
            settings.calibration = info.calibration.clone();
        }
        let mut notes = Vec::new();
        if settings.calibration.is_none() {
            if log.has_picture_shapes() {
                notes.push(format!(
                    "{}: no calibration: only the drawings in the picture's pixels are drawn",
                    session.video.display()
                ));
            } else if !options.no_calibration {
                return Err(ExportError::NoCalibration {
                    input: session.video.clone(),
                });
            }
        }
        if let Some(c) = &settings.calibration {
            let (c, check) = c.for_unit(&log.header.world_unit);
            notes.extend(check.warning());
            settings.calibration = Some(c);
        }
        notes.extend(hull_note(&settings));
        let video_time = |t: Option<TimeArg>| -> Result<Option<f64>, ExportError> {
            t.map(|t| {
                t.video_time(info.clocks.as_deref(), info.start, info.clock_step)
                    .map(|v| v.secs())
            })
            .transpose()
            .map_err(ExportError::Time)
        };
        let (from, to) = (video_time(options.from)?, video_time(options.to)?);
        let (from, to) = within_source(
            &session.video,
            &info,
            (options.from, from),
            (options.to, to),
            &mut notes,
        )?;
        if let Some(c) = &settings.calibration
            && info.calibration.is_none()
        {
            notes.extend(c.size_note(info.width, info.height));
        }
        let probe = Pipeline::with_index(Arc::clone(&log), Arc::clone(&index), &settings)?;
        probe
            .check_video(info.width, info.height, info.frame_count)
            .map_err(|source| ExportError::MaskDoesNotFit {
                input: session.video.clone(),
                source,
            })?;
        let mut job = ExportJob::new(&session.video, &options.output);
        job.open = open_options;
        job.from = from;
        job.to = to;
        job.encoder.crf = options.crf;
        job.encoder.preset = options.preset.clone();
        job.progress = options.progress_bar;
        job.protected = session.inputs();
        job.segment = options.segment;
        job.lead_in = probe.memory();
        job.protected.extend(session_file.map(Path::to_owned));
        let expected = expected_frames(
            &info,
            from.unwrap_or(f64::NEG_INFINITY),
            to.unwrap_or(f64::INFINITY),
        );
        Ok(ExportPlan {
            job,
            settings,
            workers: options.workers.unwrap_or_else(default_workers).clamp(1, 64),
            expected_frames: expected,
            notes,
            log,
            index,
        })
    }

    /// The log drawn (the session's logs merged).
    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    /// Runs the export; stops with [`ExportError::Interrupted`] soon after
    /// `cancel` is set. Frames written are counted in `progress` too. The
    /// report's warnings include what the drawing tally says (nothing
    /// drawn, check the offset; primitives that could not be drawn).
    pub fn run(
        &self,
        cancel: &AtomicBool,
        progress: Option<Arc<Progress>>,
    ) -> Result<ExportReport, ExportError> {
        // One pipeline sees every frame in order and prepares it (the
        // mask's state over time); the workers draw with their own.
        let mut leader =
            Pipeline::with_index(Arc::clone(&self.log), Arc::clone(&self.index), &self.settings)?;
        let tally = Arc::new(Tally::default());
        let mut processors: Vec<Processor<'_, FramePlan>> = Vec::with_capacity(self.workers);
        for _ in 0..self.workers {
            let mut p = leader.fork()?;
            let tally = Arc::clone(&tally);
            processors.push(Box::new(move |frame: &mut SourceFrame, plan: FramePlan| {
                let stats = p.process_planned(frame, &plan)?;
                tally.add(&stats);
                Ok(())
            }));
        }
        let prepare: Preparer<'_, FramePlan> =
            Box::new(move |frame: &mut SourceFrame| Ok(leader.prepare(frame)?));
        let mut job = self.job.clone();
        job.counter = progress;
        let mut report = super::run_planned(&job, prepare, processors, cancel)?;
        // Why an empty log is empty: what its reader said.
        let empty_why: Vec<String> = if self.log.frames.is_empty() {
            self.log.warnings.iter().map(|w| w.to_string()).collect()
        } else {
            Vec::new()
        };
        report.warnings.extend(tally.warnings(
            self.log.time_range(),
            self.index.instant_count(),
            &self.settings.time,
            &empty_why,
        ));
        report.warnings.extend(self.notes.iter().cloned());
        Ok(report)
    }
}

/// `from` and `to` (as given, and as video times) checked against the
/// source's own length: a part wholly past its end (or empty) is an error
/// naming the input and its length; a part that runs past an end is cut
/// to it, and a note says so.
fn within_source(
    input: &Path,
    info: &crate::video::source::SourceInfo,
    (from_arg, from): (Option<TimeArg>, Option<f64>),
    (to_arg, to): (Option<TimeArg>, Option<f64>),
    notes: &mut Vec<String>,
) -> Result<(Option<f64>, Option<f64>), ExportError> {
    let (start, end) = (info.start, info.start + info.duration.max(0.0));
    let length = || {
        format!(
            "{} lasts {:.3} s{}",
            input.display(),
            info.duration,
            if info.clocks.is_some() { " of pictures" } else { "" }
        )
    };
    let known = info.duration > 0.0 && info.duration.is_finite();
    if let (Some(a), Some(f), Some(b), Some(t)) = (from_arg, from, to_arg, to)
        && f >= t
    {
        return Err(ExportError::EmptyPart {
            what: format!(
                "--from {a} and --to {b} leave nothing between them ({} ({f:.3} s to {t:.3} s of it)",
                length()
            ),
        });
    }
    if known
        && let (Some(a), Some(f)) = (from_arg, from)
        && f >= end
    {
        return Err(ExportError::EmptyPart {
            what: format!("--from {a} is at or past the end: {}", length()),
        });
    }
    if known
        && let (Some(b), Some(t)) = (to_arg, to)
        && t <= start
    {
        return Err(ExportError::EmptyPart {
            what: format!("--to {b} is at or before the start: {}", length()),
        });
    }
    let mut to = to;
    if known
        && let (Some(b), Some(t)) = (to_arg, to)
        && t > end
    {
        notes.push(format!(
            "--to {b} is past the end: {}; exported up to its end",
            length()
        ));
        to = None;
    }
    Ok((from, to))
}

/// The note an export makes when the floor is cut to the hull of the
/// calibration's points (no `field` given): drawings beyond it are hidden.
fn hull_note(settings: &DrawSettings) -> Option<String> {
    let c = settings.calibration.as_ref()?;
    if !settings.toggles.floor_mask {
        return None;
    }
    let (_, source) = crate::mask::field::region_for(c, settings.field.as_ref()).ok()??;
    source.note()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_cut_to_the_calibration_points_is_said() {
        use crate::calib::unit::FittedPoint;
        let mut s = Session::new("v.mp4", "l.ulog");
        let c =
            crate::calib::Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
                .unwrap();
        s.calibration = Some(crate::session::CalibrationSource::Inline(c.clone()));
        assert_eq!(hull_note(&s.draw_settings().unwrap()), None, "no points: no cut");
        let pts = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)]
            .map(|(x, y)| FittedPoint {
                u: x,
                v: y,
                x,
                y,
                z: 0.0,
                name: None,
            })
            .to_vec();
        s.calibration = Some(crate::session::CalibrationSource::Inline(
            c.with_fitted_points(pts),
        ));
        let note = hull_note(&s.draw_settings().unwrap()).unwrap();
        assert!(note.contains("3 points") && note.contains("`field`"), "{note}");
        s.field = Some("ssl-b".into());
        assert_eq!(hull_note(&s.draw_settings().unwrap()), None, "the field is named");
        s.field = None;
        s.draw.floor_mask = false;
        assert_eq!(hull_note(&s.draw_settings().unwrap()), None, "no mask");
    }

    #[test]
    fn options_are_checked() {
        let mut o = ExportOptions::default();
        assert!(matches!(o.check(), Err(ExportError::NoOutput)));
        o.output = "out.mp4".into();
        assert!(o.check().is_ok());
        o.from = Some(TimeArg::Seconds(3.0));
        o.to = Some(TimeArg::Seconds(2.0));
        assert!(matches!(o.check(), Err(ExportError::BadRange { .. })));
        // Times of different kinds are compared once resolved.
        o.to = Some(TimeArg::Cycles(2.0));
        assert!(o.check().is_ok());
        o.to = Some(TimeArg::Seconds(f64::NAN));
        assert!(o.check().is_err());
        o.to = None;
        o.from = Some(TimeArg::Video(f64::INFINITY));
        assert!(o.check().is_err());
        o.from = None;
        o.fps = Some(0.0);
        assert!(matches!(o.check(), Err(ExportError::BadRate { .. })));
        o.fps = None;
        o.preset = "warp".into();
        assert!(o.check().unwrap_err().to_string().contains("warp"));
        o.preset = "fast".into();
        o.crf = 60;
        assert!(matches!(o.check(), Err(ExportError::BadCrf { crf: 60 })));
        o.crf = 20;
        o.offset = Some(f64::NAN);
        assert!(matches!(o.check(), Err(ExportError::BadOffset { .. })));
    }

    #[test]
    fn overrides_apply_to_the_session() {
        let mut s = Session::new("v.mp4", "l.ulog");
        let o = ExportOptions {
            offset: Some(2.5),
            max_level: Some(1),
            entities: vec!["ball".into()],
            no_mask: true,
            ..ExportOptions::default()
        };
        o.apply_to(&mut s);
        assert_eq!(s.offset, 2.5);
        assert_eq!(s.filter.max_level, Some(1));
        assert_eq!(s.filter.only, ["ball"]);
        assert!(!s.draw.floor_mask);
        let d = s.draw_settings().unwrap();
        assert!(!d.toggles.floor_mask && d.toggles.overlay);
    }

    #[test]
    fn one_rule_for_workers() {
        let w = default_workers();
        assert!((1..=4).contains(&w));
    }
}
