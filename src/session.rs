//! Session files: one TOML file tying a video, its logs, the calibration,
//! the time offset and everything else that changes the picture (mask
//! method and whether it hides drawings, tint, chosen entities and levels)
//! together. The viewer saves it and `export` reads it, so what you see is
//! what you export: [`Session::draw_settings`] turns it into the one
//! [`DrawSettings`] both draw with.
//!
//! A session names one log (`log = "run.ulog"`) or several (`logs = [
//! "game.ulog", "agent3.ulog"]`: a game log and agents' debug logs), which
//! are merged into one ([`crate::log::merge`]). Sessions written before the
//! `[draw]` table existed kept the viewer's picture toggles in
//! `[viewer.toggles]`; they are read from there (and written to `[draw]`).
//!
//! Paths inside a session are stored relative to the session file when
//! they can be, and resolved against its folder when loaded.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::calib::{CalibError, Calibration};
use crate::log::{Log, LogError};
use crate::mask::MaskSettings;
use crate::pipeline::{DrawSettings, DrawToggles, InstantThreshold, Pipeline, PipelineError};
use crate::select::FilterSpec;
use crate::video::TimeMap;

/// Errors loading or saving a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: cannot read the session")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a valid session")]
    Parse {
        path: PathBuf,
        #[source]
        source: crate::toml_text::TomlError,
    },
    #[error("{path}: cannot write the session")]
    Serialize {
        path: PathBuf,
        #[source]
        source: toml::ser::Error,
    },
    #[error("{path}: cannot write the session")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: the time offset must be a finite number of seconds, not {offset}")]
    BadOffset { path: PathBuf, offset: f64 },
    #[error("{path}: rate = {rate} is not a positive number of log seconds per video second")]
    BadRate { path: PathBuf, rate: f64 },
    #[error(
        "{path}: instant_threshold = {seconds} is not a number of seconds ≥ 0 (inf for no limit); \
         leave it out to use the log's own"
    )]
    BadThreshold { path: PathBuf, seconds: f64 },
    #[error("{path}: give either `log` or `logs`, not both")]
    LogAndLogs { path: PathBuf },
    #[error("the session names no log")]
    NoLog,
    #[error(transparent)]
    Calibration(#[from] CalibError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
}

/// Where the calibration comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CalibrationSource {
    /// Stored inline in the session.
    Inline(Calibration),
    /// A calibration file written by `underlay calib solve -o`.
    File { file: PathBuf },
}

/// A table with a `file` key is a file; anything else is read as an inline
/// calibration, so its mistakes get the same precise messages as in a
/// `--calib` file (an untagged enum would only say that no variant matched).
impl<'de> Deserialize<'de> for CalibrationSource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let table = toml::Table::deserialize(d)?;
        if table.contains_key("file") {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct FileRef {
                file: PathBuf,
            }
            let f: FileRef = table.try_into().map_err(D::Error::custom)?;
            return Ok(CalibrationSource::File { file: f.file });
        }
        table
            .try_into::<Calibration>()
            .map(CalibrationSource::Inline)
            .map_err(|e| D::Error::custom(e.message()))
    }
}

/// A whole session.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    /// The video of the run (or any other frame source).
    pub video: PathBuf,
    /// The visualization logs, merged when there are several.
    pub logs: Vec<PathBuf>,
    /// Log time = rate × video time (or the source's clock) + offset, in seconds.
    pub offset: f64,
    /// Log seconds per video second (1 unless the log's clock drifts
    /// against the video's; `underlay sync` measures it).
    pub rate: f64,
    /// World → image mapping; `None` until calibrated.
    pub calibration: Option<CalibrationSource>,
    /// How floor masks are made.
    pub mask: MaskSettings,
    /// Which layers are drawn (overlay, floor mask, tint).
    pub draw: DrawToggles,
    /// Which entities and levels are shown.
    pub filter: FilterSpec,
    /// Instantaneous-frame threshold in seconds; `None` derives it from the
    /// log (see [`InstantThreshold::from_setting`]).
    pub instant_threshold: Option<f64>,
    /// How a source that renders its pictures (a match) renders them.
    pub picture: PictureSettings,
    /// The 2D player whose sensing is drawn in detail (`l10`, `r3`).
    pub observer: Option<String>,
    /// A level mapping file ([`crate::log::levels`]): the level each
    /// entity's primitives are drawn at, whatever their reader said.
    pub levels: Option<PathBuf>,
    /// The field seen through the calibration — a preset (`ssl-a`,
    /// `ssl-b`, `football`) or `{ polygon = [[x, y], …] }` in world units:
    /// only its region can be floor. Without it, the hull of the points
    /// the calibration was fitted from serves, when it records them.
    pub field: Option<crate::mask::field::FieldSpec>,
    /// How the viewer shows the session (panels, calibration points):
    /// written and read by the viewer only; drawing does not depend on it.
    pub viewer: Option<toml::Table>,
}

/// The size and rate of pictures a source renders itself (a match from
/// its game log; the session's `[picture]` table). Camera videos ignore it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PictureSettings {
    /// `[width, height]` in pixels; the source's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<[usize; 2]>,
    /// Pictures per second; the source's default (a simulator's pace)
    /// when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// What a rendered match's camera follows: `ball`, or a player (`l10`,
    /// `y3`); the whole pitch when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow: Option<String>,
    /// Magnification of a rendered match's pitch (1: all of it; 3 when
    /// following something and absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zoom: Option<f64>,
    /// A rendered match seen at this slant (degrees from straight down,
    /// 0 to 75) from beyond the side line; from straight above when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tilt: Option<f64>,
    /// A rendered match seen through an agent's head camera (`l3`, `r1`,
    /// `Alpha:1`), whose perception log is among the session's logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_view: Option<String>,
    /// A recording's picture topic (`/camera/image_raw`); its first
    /// picture topic when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// A recording's transform tree drawn as axes (RViz's TF display).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tf_axes: bool,
    /// A recording's laser scans and point clouds coloured by intensity.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub intensity: bool,
    /// A recording's world frame (`map`, `odom`): where its camera and
    /// drawings are placed; the root of its transform tree when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world: Option<String>,
}

impl PictureSettings {
    /// Whether nothing is set.
    pub fn is_default(&self) -> bool {
        *self == PictureSettings::default()
    }

    /// The options a frame source is opened with.
    pub fn open_options(&self) -> crate::video::source::OpenOptions {
        crate::video::source::OpenOptions {
            keep_yuv: false,
            defer_rgb: false,
            yuv_full_range: false,
            seek_index: false,
            size: self.size.map(|[w, h]| (w, h)),
            fps: self.fps,
            follow: self.follow.clone(),
            zoom: self.zoom,
            tilt: self.tilt,
            topic: self.topic.clone(),
            world: self.world.clone(),
            agent_view: self.agent_view.clone(),
            beside: Vec::new(),
            camera: None,
        }
    }
}

/// A session as written in TOML.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionFile {
    video: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    logs: Vec<PathBuf>,
    #[serde(default)]
    offset: f64,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    calibration: Option<CalibrationSource>,
    #[serde(default)]
    mask: MaskSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    draw: Option<DrawToggles>,
    #[serde(default)]
    filter: FilterSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instant_threshold: Option<f64>,
    #[serde(default, skip_serializing_if = "PictureSettings::is_default")]
    picture: PictureSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    levels: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    field: Option<crate::mask::field::FieldSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    viewer: Option<toml::Table>,
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// The picture toggles old sessions kept in `[viewer.toggles]`.
#[derive(Deserialize)]
#[serde(default)]
struct OldToggles {
    overlay: bool,
    mask: bool,
    tint_mask: bool,
}

impl Default for OldToggles {
    fn default() -> Self {
        let d = DrawToggles::default();
        OldToggles {
            overlay: d.overlay,
            mask: d.floor_mask,
            tint_mask: d.tint,
        }
    }
}

impl Session {
    /// The options the session's picture source is opened with: the
    /// `[picture]` table's, with the session's logs as the files read
    /// beside it (where an agent's camera is found).
    pub fn open_options(&self) -> crate::video::source::OpenOptions {
        crate::video::source::OpenOptions {
            beside: self.logs.clone(),
            ..self.picture.open_options()
        }
    }

    /// A session for `video` and `log` with default settings (no log when
    /// `log` is empty).
    pub fn new(video: impl Into<PathBuf>, log: impl Into<PathBuf>) -> Self {
        let log = log.into();
        Session {
            video: video.into(),
            logs: if log.as_os_str().is_empty() {
                Vec::new()
            } else {
                vec![log]
            },
            offset: 0.0,
            rate: 1.0,
            calibration: None,
            mask: MaskSettings::default(),
            draw: DrawToggles::default(),
            filter: FilterSpec::default(),
            instant_threshold: None,
            picture: PictureSettings::default(),
            observer: None,
            levels: None,
            field: None,
            viewer: None,
        }
    }

    /// A session showing `input` with `logs` over it. A file that is its
    /// own log too (a match's game log: the picture and the drawings of
    /// its sensor models) comes first among the logs.
    /// (A file that cannot be read is left for opening the source to report.)
    pub fn for_input(input: &Path, logs: &[PathBuf]) -> Self {
        let mut s = Session::new(input, "");
        let own = crate::formats::is_own_log(input);
        if own {
            s.logs.push(input.to_owned());
        }
        s.logs
            .extend(logs.iter().filter(|l| !(own && *l == input)).cloned());
        s
    }

    /// For a session made for a file (not read from one): the level its
    /// logs suggest showing first (their header's hint; the largest of the
    /// merged logs'), unless a level is set. The viewer and export both
    /// call it, so they draw the same.
    pub fn apply_log_hints(&mut self, log: &Log) {
        if self.filter.max_level.is_none() {
            self.filter.max_level = log.header.hints.default_max_level;
        }
    }

    /// Reads a session file; relative paths in it become relative to its folder.
    pub fn load(path: &Path) -> Result<Self, SessionError> {
        let text = crate::files::read_text_limited(path, crate::files::MAX_SMALL_TEXT).map_err(|source| {
            SessionError::Io {
                path: path.to_owned(),
                source,
            }
        })?;
        let f: SessionFile = crate::toml_text::parse(&text).map_err(|source| SessionError::Parse {
            path: path.to_owned(),
            source,
        })?;
        if !f.offset.is_finite() {
            return Err(SessionError::BadOffset {
                path: path.to_owned(),
                offset: f.offset,
            });
        }
        if !(f.rate.is_finite() && f.rate > 0.0) {
            return Err(SessionError::BadRate {
                path: path.to_owned(),
                rate: f.rate,
            });
        }
        if let Some(seconds) = f.instant_threshold
            && (seconds.is_nan() || seconds < 0.0)
        {
            return Err(SessionError::BadThreshold {
                path: path.to_owned(),
                seconds,
            });
        }
        if f.log.is_some() && !f.logs.is_empty() {
            return Err(SessionError::LogAndLogs {
                path: path.to_owned(),
            });
        }
        let base = path.parent().unwrap_or(Path::new(""));
        let mut viewer = f.viewer;
        // Before `[draw]`, the toggles that change the picture lived in the
        // viewer's table (and export ignored them).
        let old = viewer
            .as_mut()
            .and_then(|v| v.remove("toggles"))
            .and_then(|t| t.try_into::<OldToggles>().ok());
        let draw = f.draw.unwrap_or_else(|| {
            old.map_or_else(DrawToggles::default, |o| DrawToggles {
                overlay: o.overlay,
                floor_mask: o.mask,
                tint: o.tint_mask,
                ..DrawToggles::default()
            })
        });
        let mut s = Session {
            video: base.join(&f.video),
            logs: f.log.into_iter().chain(f.logs).map(|l| base.join(l)).collect(),
            offset: f.offset,
            rate: f.rate,
            calibration: f.calibration,
            mask: f.mask,
            draw,
            filter: f.filter,
            instant_threshold: f.instant_threshold,
            picture: f.picture,
            observer: f.observer,
            levels: f.levels.map(|l| base.join(l)),
            field: f.field,
            viewer,
        };
        if let Some(CalibrationSource::File { file }) = &mut s.calibration {
            *file = base.join(&*file);
        }
        s.mask.resolve_paths(base);
        Ok(s)
    }

    /// Writes the session atomically (temporary file, then rename), storing
    /// paths relative to the session's folder where possible. One log is
    /// written as `log`, several as `logs`.
    pub fn save(&self, path: &Path) -> Result<(), SessionError> {
        let base = path.parent().unwrap_or(Path::new(""));
        let mut logs: Vec<PathBuf> = self.logs.iter().map(|l| relative_to(l, base)).collect();
        let log = (logs.len() == 1).then(|| logs.remove(0));
        let mut calibration = self.calibration.clone();
        if let Some(CalibrationSource::File { file }) = &mut calibration {
            *file = relative_to(file, base);
        }
        let mut mask = self.mask.clone();
        for file in mask.paths_mut() {
            *file = relative_to(file, base);
        }
        let f = SessionFile {
            video: relative_to(&self.video, base),
            log,
            logs,
            offset: self.offset,
            rate: self.rate,
            calibration,
            mask,
            draw: Some(self.draw),
            filter: self.filter.clone(),
            instant_threshold: self.instant_threshold,
            picture: self.picture.clone(),
            observer: self.observer.clone(),
            levels: self.levels.as_ref().map(|l| relative_to(l, base)),
            field: self.field.clone(),
            viewer: self.viewer.clone(),
        };
        let text = toml::to_string(&f)
            .map(|t| crate::toml_text::rows_on_lines(&t))
            .map_err(|source| SessionError::Serialize {
                path: path.to_owned(),
                source,
            })?;
        write_atomic(path, text.as_bytes()).map_err(|source| SessionError::Write {
            path: path.to_owned(),
            source,
        })
    }

    /// The calibration, read from its file when it is in one.
    pub fn load_calibration(&self) -> Result<Option<Calibration>, SessionError> {
        Ok(match &self.calibration {
            None => None,
            Some(CalibrationSource::Inline(c)) => Some(c.clone()),
            Some(CalibrationSource::File { file }) => Some(Calibration::load(file)?),
        })
    }

    /// The settings the session draws with (its calibration file read).
    pub fn draw_settings(&self) -> Result<DrawSettings, SessionError> {
        Ok(self.draw_settings_with(self.load_calibration()?))
    }

    /// The settings the session draws with, with `calibration` already
    /// resolved (the viewer keeps it loaded).
    pub fn draw_settings_with(&self, calibration: Option<Calibration>) -> DrawSettings {
        DrawSettings {
            toggles: self.draw,
            mask: self.mask.clone(),
            filter: self.filter.clone(),
            instant_threshold: InstantThreshold::from_setting(self.instant_threshold),
            time: self.time_map(),
            calibration,
            field: self.field.clone(),
        }
    }

    /// Log time from video time: the offset and the rate (a source's clock
    /// table is added by whoever opened the source).
    pub fn time_map(&self) -> TimeMap {
        TimeMap::new(self.offset).with_rate(self.rate)
    }

    /// The pipeline the session describes: its logs (merged), calibration
    /// (inline or from a file), mask, filter, toggles, offset and threshold.
    pub fn pipeline(&self) -> Result<Pipeline, SessionError> {
        let log = std::sync::Arc::new(self.load_logs()?);
        Ok(Pipeline::new(log, &self.draw_settings()?)?)
    }

    /// The session's logs read and merged into one.
    pub fn load_logs(&self) -> Result<Log, SessionError> {
        if self.logs.is_empty() {
            return Err(SessionError::NoLog);
        }
        Ok(crate::formats::load_merged(&self.logs, &self.read_options()?)?)
    }

    /// What the session's logs are read as: its 2D observer, its
    /// recording's world frame and picture topic, its level mapping (read
    /// here).
    pub fn read_options(&self) -> Result<crate::input::ReadOptions, SessionError> {
        Ok(crate::input::ReadOptions {
            observer: self.observer.clone(),
            world: self.picture.world.clone(),
            topic: self.picture.topic.clone(),
            levels: match &self.levels {
                Some(p) => Some(crate::log::levels::LevelMap::load(p)?),
                None => None,
            },
            tf_axes: self.picture.tf_axes,
            intensity: self.picture.intensity,
        })
    }

    /// Every file the session reads: the video, the logs, the calibration
    /// file and mask files (an output must never overwrite one of them).
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut v = vec![self.video.clone()];
        v.extend(self.logs.iter().cloned());
        v.extend(self.levels.iter().cloned());
        if let Some(CalibrationSource::File { file }) = &self.calibration {
            v.push(file.clone());
        }
        let mut mask = self.mask.clone();
        v.extend(mask.paths_mut().into_iter().map(|p| p.clone()));
        v
    }
}

/// Reads `paths` and merges the logs into one (each file read beside the
/// one its format needs, [`crate::formats::load_logs`]: a 2D agent's log
/// placed through its match's game log).
pub fn load_logs(paths: &[PathBuf]) -> Result<Log, LogError> {
    load_logs_observing(paths, None)
}

/// Like [`load_logs`], drawing what `observer` (a 2D player, `l10`) could
/// see in detail.
pub fn load_logs_observing(paths: &[PathBuf], observer: Option<&str>) -> Result<Log, LogError> {
    let options = crate::input::ReadOptions {
        observer: observer.map(str::to_owned),
        ..Default::default()
    };
    crate::formats::load_merged(paths, &options)
}

/// Whether `path` names a session file: by its extension (`.toml`), as
/// a session and a calibration file are both TOML.
pub fn is_session_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// The logs an input names, as `log info|dump|select|convert` read them,
/// and the 2D observer it sets: a session's logs (`extra` instead, when
/// given, as `export` takes them); or the file itself (a log, or a match
/// that is its own log) with `extra` beside it.
pub fn logs_of_input(
    input: &Path,
    extra: &[PathBuf],
) -> Result<(Vec<PathBuf>, Option<String>), SessionError> {
    if is_session_file(input) {
        let s = Session::load(input)?;
        let logs = if extra.is_empty() { s.logs } else { extra.to_vec() };
        if logs.is_empty() {
            return Err(SessionError::NoLog);
        }
        return Ok((logs, s.observer));
    }
    let mut logs = vec![input.to_owned()];
    logs.extend(extra.iter().filter(|l| *l != input).cloned());
    Ok((logs, None))
}

/// `p` relative to `base` when `p` lies under it, else `p` unchanged.
fn relative_to(p: &Path, base: &Path) -> PathBuf {
    let abs = |q: &Path| std::path::absolute(q).unwrap_or_else(|_| q.to_owned());
    match abs(p).strip_prefix(abs(base)) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_owned(),
        _ => p.to_owned(),
    }
}

pub use crate::files::write_atomic;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::tests::{dot_log, frame, identity};

    #[test]
    fn save_then_load_round_trips_with_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::new(dir.path().join("run.mp4"), dir.path().join("logs/run.ulog"));
        s.offset = 1_700_000_000.25;
        s.calibration = Some(CalibrationSource::Inline(
            Calibration::from_homography([[1.0, 0.0, 5.0], [0.0, 1.0, 6.0], [0.0, 0.0, 1.0]]).unwrap(),
        ));
        s.filter.max_level = Some(2);
        let p = dir.path().join("s.toml");
        s.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("video = \"run.mp4\""), "{text}");
        let back = Session::load(&p).unwrap();
        assert_eq!(back, s);
    }

    /// `[picture] agent_view` is kept, and the source is opened with it and
    /// the session's logs beside it (where the agent's camera is found).
    #[test]
    fn an_agent_view_round_trips_and_opens_beside_the_logs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        let mut s = Session::new(dir.path().join("m.rsmp.log"), dir.path().join("agent_A_1.log"));
        s.picture.agent_view = Some("l1".into());
        s.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("[picture]\nagent_view = \"l1\""), "{text}");
        let back = Session::load(&p).unwrap();
        assert_eq!(back, s);
        let o = back.open_options();
        assert_eq!(o.agent_view.as_deref(), Some("l1"));
        assert_eq!(o.beside, [dir.path().join("agent_A_1.log")]);
        assert!(o.camera.is_none());
    }

    /// `field` is a preset's id or a polygon; both come back as written.
    #[test]
    fn a_field_preset_or_polygon_round_trips() {
        use crate::mask::field::FieldSpec;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        for (text, want) in [
            ("field = \"ssl-b\"", FieldSpec::from("ssl-b")),
            (
                "field = { polygon = [[0, 0], [10, 0], [10.5, 8]] }",
                FieldSpec::Polygon {
                    polygon: vec![[0.0, 0.0], [10.0, 0.0], [10.5, 8.0]],
                },
            ),
        ] {
            std::fs::write(&p, format!("video = \"v.mp4\"\nlog = \"l.ulog\"\n{text}\n")).unwrap();
            let s = Session::load(&p).unwrap();
            assert_eq!(s.field.as_ref(), Some(&want));
            s.save(&p).unwrap();
            assert_eq!(Session::load(&p).unwrap().field, Some(want));
        }
        std::fs::write(
            &p,
            "video = \"v.mp4\"\nlog = \"l.ulog\"\nfield = { corners = 4 }\n",
        )
        .unwrap();
        assert!(Session::load(&p).is_err());
    }

    #[test]
    fn bad_session_names_file_and_place() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.toml");
        std::fs::write(&p, "video = \"a.mp4\"\nlog = 3\n").unwrap();
        let e = crate::error::chain(&Session::load(&p).unwrap_err());
        assert!(e.contains("bad.toml") && e.contains("line 2"), "{e}");
        std::fs::write(&p, "video = \"a.mp4\"\nlog = \"a.ulog\"\nlogs = [\"b.ulog\"]\n").unwrap();
        assert!(matches!(Session::load(&p), Err(SessionError::LogAndLogs { .. })));
    }

    /// Issue 15, finding 6: a bad inline `[calibration]` gets the precise
    /// message the same values give in a `--calib` file.
    #[test]
    fn bad_inline_calibration_says_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let calib = "homography = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]\n";
        let c = dir.path().join("c.toml");
        std::fs::write(&c, calib).unwrap();
        let from_file = crate::error::chain(&Calibration::load(&c).unwrap_err());
        let p = dir.path().join("s.toml");
        std::fs::write(
            &p,
            format!("video = \"a.mp4\"\nlog = \"a.ulog\"\n[calibration]\n{calib}"),
        )
        .unwrap();
        let inline = crate::error::chain(&Session::load(&p).unwrap_err());
        assert!(!inline.contains("untagged"), "{inline}");
        // The reason, without the excerpt of the line it is on.
        let reason = from_file.rsplit(": ").next().unwrap().trim();
        let reason = reason.split(" (at `").next().unwrap();
        assert!(inline.contains(reason), "{inline}\nvs {from_file}");
        // A file reference with a typo is named too.
        std::fs::write(
            &p,
            "video = \"a.mp4\"\nlog = \"a.ulog\"\n[calibration]\nfile = \"c.toml\"\nfiel = 1\n",
        )
        .unwrap();
        let e = crate::error::chain(&Session::load(&p).unwrap_err());
        assert!(e.contains("fiel"), "{e}");
        // And the good forms still load.
        std::fs::write(
            &p,
            "video = \"a.mp4\"\nlog = \"a.ulog\"\n[calibration]\nfile = \"c.toml\"\n",
        )
        .unwrap();
        assert!(matches!(
            Session::load(&p).unwrap().calibration,
            Some(CalibrationSource::File { .. })
        ));
    }

    /// A drifting log's rate is kept, used by the time map, and left out of
    /// the file when it is 1; one that is not a positive number is refused.
    #[test]
    fn rate_round_trips_and_maps_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        let mut s = Session::new(dir.path().join("a.mp4"), dir.path().join("a.ulog"));
        s.save(&p).unwrap();
        assert!(!std::fs::read_to_string(&p).unwrap().contains("rate"));
        s.offset = 100.0;
        s.rate = 1.001;
        s.save(&p).unwrap();
        let back = Session::load(&p).unwrap();
        assert_eq!(back.rate, 1.001);
        assert!(
            (back
                .time_map()
                .log_time(crate::time::VideoTime(10.0), None)
                .secs()
                - 110.01)
                .abs()
                < 1e-9
        );
        assert!(
            (back
                .draw_settings_with(None)
                .time
                .video_time(crate::time::LogTime(110.01))
                .secs()
                - 10.0)
                .abs()
                < 1e-9
        );
        for bad in ["0.0", "-1.0", "nan"] {
            std::fs::write(&p, format!("video = \"a.mp4\"\nlog = \"a.ulog\"\nrate = {bad}\n")).unwrap();
            let e = Session::load(&p).unwrap_err().to_string();
            assert!(e.contains("s.toml") && e.contains("rate"), "{e}");
        }
    }

    /// Issue 15 ("Also"): `instant_threshold = nan` or `-1` is refused,
    /// naming the file, instead of silently meaning "automatic".
    #[test]
    fn unusable_instant_threshold_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        for bad in ["nan", "-1.0", "-inf"] {
            std::fs::write(
                &p,
                format!("video = \"a.mp4\"\nlog = \"a.ulog\"\ninstant_threshold = {bad}\n"),
            )
            .unwrap();
            let e = Session::load(&p).unwrap_err().to_string();
            assert!(e.contains("s.toml") && e.contains("instant_threshold"), "{e}");
        }
        for good in ["0.0", "0.25", "inf"] {
            std::fs::write(
                &p,
                format!("video = \"a.mp4\"\nlog = \"a.ulog\"\ninstant_threshold = {good}\n"),
            )
            .unwrap();
            assert!(Session::load(&p).is_ok(), "{good}");
        }
    }

    #[test]
    fn several_logs_round_trip_and_load_merged() {
        use crate::geom::Vec2;
        use crate::log::{FrameTime, Primitive, Shape, Style};
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for (i, name) in ["game", "agent"].iter().enumerate() {
            let mut log = Log::new();
            let e = log.entities.intern(name);
            let shape = Shape::Circle {
                center: Vec2::new(0.0, 0.0),
                radius: 1.0,
            };
            let p = Primitive {
                shape,
                style: Style::default(),
                entity: e,
                level: 0,
            };
            log.push_frame(FrameTime::Instant(i as f64), [p]);
            let path = dir.path().join(format!("{name}.ulog"));
            crate::log::save(&log, &path).unwrap();
            paths.push(path);
        }
        let mut s = Session::new(dir.path().join("match.mp4"), "");
        s.logs = paths;
        let p = dir.path().join("s.toml");
        s.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("logs = [") && !text.contains("\nlog ="), "{text}");
        let back = Session::load(&p).unwrap();
        assert_eq!(back, s);
        let log = back.load_logs().unwrap();
        assert_eq!((log.entities.len(), log.frames.len()), (2, 2));
        assert!(back.inputs().contains(&dir.path().join("agent.ulog")));
        // A level mapping: kept beside the session, applied as the logs load.
        std::fs::write(dir.path().join("levels.toml"), "\"agent\" = 7\n").unwrap();
        s.levels = Some(dir.path().join("levels.toml"));
        s.save(&p).unwrap();
        assert!(
            std::fs::read_to_string(&p)
                .unwrap()
                .contains("levels = \"levels.toml\"")
        );
        let back = Session::load(&p).unwrap();
        assert_eq!(back, s);
        let log = back.load_logs().unwrap();
        let levels: Vec<i32> = log.primitives.iter().map(|p| p.level).collect();
        assert!(levels.contains(&7) && levels.contains(&0), "{levels:?}");
        assert!(back.inputs().contains(&dir.path().join("levels.toml")));
        s.levels = None;
        // One log is written the old way, which older versions read.
        s.logs.truncate(1);
        s.save(&p).unwrap();
        assert!(
            std::fs::read_to_string(&p)
                .unwrap()
                .contains("log = \"game.ulog\"")
        );
        assert!(matches!(
            Session::new("v.mp4", "").load_logs(),
            Err(SessionError::NoLog)
        ));
    }

    #[test]
    fn old_viewer_toggles_become_draw_settings() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.toml");
        std::fs::write(
            &p,
            "video = \"v.mp4\"\nlog = \"l.ulog\"\n\n[viewer.layout]\nside = false\n\n\
             [viewer.toggles]\nmask = false\ntint_mask = true\n",
        )
        .unwrap();
        let s = Session::load(&p).unwrap();
        assert_eq!(
            s.draw,
            DrawToggles {
                overlay: true,
                floor_mask: false,
                tint: true,
                ..DrawToggles::default()
            }
        );
        let viewer = s.viewer.clone().unwrap();
        assert!(viewer.contains_key("layout") && !viewer.contains_key("toggles"));
        let d = s.draw_settings().unwrap();
        assert!(!d.toggles.floor_mask && d.toggles.tint);
        // Saved again, the toggles are in [draw].
        s.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("[draw]") && !text.contains("toggles"), "{text}");
        assert_eq!(Session::load(&p).unwrap(), s);
    }

    #[test]
    fn pipeline_reads_log_and_calibration_files_and_names_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("run.ulog");
        crate::log::save(&dot_log(), &log_path).unwrap();
        let calib_path = dir.path().join("c.toml");
        identity().save(&calib_path, "").unwrap();
        let mut session = Session::new(dir.path().join("run.mp4"), &log_path);
        session.offset = 10.0;
        session.mask = MaskSettings::None;
        session.calibration = Some(CalibrationSource::File {
            file: calib_path.clone(),
        });
        let mut p = session.pipeline().unwrap();
        let mut f = frame(0.0);
        let s = p.process(&mut f).unwrap();
        assert_eq!((s.primitives, s.drawn), (1, 1));
        assert_eq!(f.image[[20, 20, 0]], 255);
        // The threshold comes from the log's index; a session may override it.
        assert_eq!(p.threshold(), p.index().default_threshold());
        session.instant_threshold = Some(0.25);
        assert_eq!(session.pipeline().unwrap().threshold(), 0.25);
        // +inf is a threshold (any distance), NaN the log's default.
        session.instant_threshold = Some(f64::INFINITY);
        assert_eq!(session.pipeline().unwrap().threshold(), f64::INFINITY);
        session.instant_threshold = Some(f64::NAN);
        let p = session.pipeline().unwrap();
        assert_eq!(p.threshold(), p.index().default_threshold());
        // An entity the log does not know is an error naming it.
        session.filter.only = vec!["nobody".into()];
        let e = crate::error::chain(&session.pipeline().unwrap_err());
        assert!(e.contains("nobody"), "{e}");
        session.filter.only.clear();
        // A bad calibration file and a missing log are named in the error.
        std::fs::write(&calib_path, "homography = [[1.0, 0.0], [0.0, 1.0, 0.0]]\n").unwrap();
        let e = crate::error::chain(&session.pipeline().unwrap_err());
        assert!(e.contains("c.toml"), "{e}");
        session.logs = vec![dir.path().join("missing.ulog")];
        let e = crate::error::chain(&session.pipeline().unwrap_err());
        assert!(e.contains("missing.ulog"), "{e}");
    }
}
