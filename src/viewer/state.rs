//! What the viewer holds: the state saved between runs (recent files,
//! layout) and the open document (a session with its loaded logs, entity
//! tree, events and calibration).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::calib::Calibration;
use crate::log::Log;
use crate::pipeline::{DrawSettings, InstantThreshold};
use crate::select::Index;
use crate::session::{CalibrationSource, Session};
use crate::video::{ClockTable, TimeMap};

use super::entities::EntityTree;
use super::export::DialogError;
use super::sync::{self, Events};
use crate::export::{ExportOptions, ExportPlan};

/// Most recent files remembered.
const MAX_RECENT: usize = 10;

/// Which panels are open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Layout {
    pub entities: bool,
    pub side: bool,
    pub timeline: bool,
    /// The top-down field view beside the video.
    pub field: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            entities: true,
            side: true,
            timeline: true,
            field: false,
        }
    }
}

/// Everything the viewer remembers between runs (eframe persistence).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Persisted {
    /// Sessions and videos opened, most recent first.
    pub recent: Vec<PathBuf>,
    pub layout: Layout,
}

impl Persisted {
    /// Puts `path` first in the recent files.
    pub fn add_recent(&mut self, path: &Path) {
        let p = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        self.recent.retain(|q| q != &p);
        self.recent.insert(0, p);
        self.recent.truncate(MAX_RECENT);
    }
}

/// What the viewer keeps in a session file (its `[viewer]` table): the
/// layout and the calibration points, so a session opens as it was saved.
/// What changes the picture is not here but in the session itself
/// ([`Session::draw`]), where export reads it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionView {
    pub layout: Layout,
    /// The calibration points clicked in calibration mode, so they can be
    /// edited again after the session is reopened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calib_points: Vec<SavedCalibPoint>,
    /// The model calibration mode fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calib_model: Option<crate::calib::Model>,
    /// The field preset calibration mode picks points from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calib_preset: Option<String>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// One calibration point as saved in a session's `[viewer]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedCalibPoint {
    /// Image pixel `[u, v]`.
    pub image: [f64; 2],
    /// World point `[x, y]`, once paired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<[f64; 2]>,
    /// Height above the floor (0: on it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub height: f64,
    /// The preset point it was picked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl SessionView {
    /// The view stored in `session`, if it has a readable one.
    pub fn from_session(session: &Session) -> Option<Self> {
        session.viewer.clone().and_then(|t| t.try_into().ok())
    }

    /// Stores this view in `session`.
    pub fn store(&self, session: &mut Session) {
        session.viewer = toml::Table::try_from(self).ok();
    }
}

/// What to open: a session or a video, and what overrides it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpenRequest {
    /// A session file (`.toml`) or a video.
    pub input: Option<PathBuf>,
    /// Logs to show instead of the session's (merged when several).
    pub logs: Vec<PathBuf>,
    pub calib: Option<PathBuf>,
    pub offset: Option<f64>,
    /// The 2D player whose sensing is drawn in detail (`l10`).
    pub observer: Option<String>,
    /// A calibration given whole (an SSL camera's, `--camera N`).
    pub calibration: Option<Box<Calibration>>,
    /// What a rendered match's camera follows, and its magnification.
    pub follow: Option<String>,
    pub zoom: Option<f64>,
    /// A rendered match's slant (degrees from straight down).
    pub tilt: Option<f64>,
    /// A rendered match seen through an agent's camera (`l3`).
    pub agent_view: Option<String>,
    /// A recording's picture topic and world frame.
    pub topic: Option<String>,
    pub world: Option<String>,
    /// A recording's transform tree as axes, its scans and clouds coloured
    /// by intensity.
    pub tf_axes: bool,
    pub intensity: bool,
    /// A level mapping file, instead of the session's.
    pub levels: Option<PathBuf>,
}

/// Whether `path` names a session file ([`crate::session::is_session_file`]).
pub fn is_session_path(path: &Path) -> bool {
    crate::session::is_session_file(path)
}

/// Reads a calibration file written by `underlay calib solve -o`.
pub fn load_calibration(path: &Path) -> anyhow::Result<Calibration> {
    Ok(Calibration::load(path)?)
}

/// Reads visualization logs in any format underlay knows, merged into one.
pub fn load_logs(paths: &[PathBuf]) -> anyhow::Result<Log> {
    Ok(crate::session::load_logs(paths)?)
}

/// An open session with everything loaded from it.
#[derive(Clone, Debug)]
pub struct Document {
    /// The session as edited (what "save" writes).
    pub session: Session,
    /// Where the session was loaded from or last saved to.
    pub session_path: Option<PathBuf>,
    /// The session as last saved or loaded, to tell unsaved changes.
    saved: Option<Session>,
    /// The session as opened (for one made for a video and logs, which
    /// has not been saved: its changes are the ones made since).
    opened: Option<Session>,
    /// The session's logs, merged.
    pub log: Arc<Log>,
    /// The time index of `log`, shared with the drawing pipelines.
    pub index: Arc<Index>,
    /// Whether a log is open (an empty log otherwise).
    pub has_log: bool,
    /// The log's first and last times.
    pub log_range: Option<(f64, f64)>,
    /// The session's filter compiled for the log, with the spec it was
    /// compiled from (see [`Self::filter`]).
    filter_cache: std::cell::RefCell<Option<(crate::select::FilterSpec, Arc<crate::select::Filter>)>>,
    /// What converting the calibration to the log's unit said.
    pub unit_note: Option<String>,
    /// The box around the log's world (its declared bounds, else every
    /// shape's points): what the field view shows.
    pub world_extent: Option<(crate::geom::Vec2, crate::geom::Vec2)>,
    /// The frame source's clocks, when its frames carry one (a rendered
    /// match): log times map to frames through them.
    pub clocks: Option<Arc<ClockTable>>,
    pub tree: EntityTree,
    pub events: Events,
    /// The resolved calibration (from the session, inline or from a file).
    pub calibration: Option<Calibration>,
    /// The frame source's own calibration (a rendered match's view), used
    /// when the session has none.
    pub source_calibration: Option<Calibration>,
}

impl Document {
    /// Whether the picture is drawn from one of the logs (a rendered
    /// match: its own log): then there is no separate video whose time
    /// could be out of step with the logs, and nothing to sync.
    pub fn draws_its_own_picture(&self) -> bool {
        self.session.logs.contains(&self.session.video)
    }

    /// Builds a document from `req` (reading the session, log and
    /// calibration); `video_start` is the video's first frame time, for
    /// the default offset.
    pub fn open(req: &OpenRequest) -> anyhow::Result<Self> {
        let input = req
            .input
            .as_deref()
            .context("nothing to open: give a session file or a video")?;
        let (mut session, session_path) = if is_session_path(input) {
            let mut s = Session::load(input)?;
            if !req.logs.is_empty() {
                s.logs = req.logs.clone();
            }
            (s, Some(input.to_owned()))
        } else {
            (Session::for_input(input, &req.logs), None)
        };
        if let Some(c) = &req.calib {
            session.calibration = Some(CalibrationSource::File { file: c.clone() });
        }
        if req.observer.is_some() {
            session.observer = req.observer.clone();
        }
        if let Some(c) = &req.calibration {
            session.calibration = Some(CalibrationSource::Inline((**c).clone()));
        }
        if req.follow.is_some() {
            session.picture.follow = req.follow.clone();
        }
        if req.zoom.is_some() {
            session.picture.zoom = req.zoom;
        }
        if req.topic.is_some() {
            session.picture.topic = req.topic.clone();
        }
        if req.world.is_some() {
            session.picture.world = req.world.clone();
        }
        session.picture.tf_axes |= req.tf_axes;
        session.picture.intensity |= req.intensity;
        if req.levels.is_some() {
            session.levels = req.levels.clone();
        }
        if req.tilt.is_some() {
            session.picture.tilt = req.tilt;
        }
        if req.agent_view.is_some() {
            session.picture.agent_view = req.agent_view.clone();
        }
        let mut doc = Document::without_log(session, session_path);
        doc.reload_calibration()?;
        if !doc.session.logs.is_empty() {
            let log = crate::formats::load_merged(&doc.session.logs, &doc.session.read_options()?)?;
            doc.set_logs(log, doc.session.logs.clone());
            if doc.saved.is_none() {
                let log = Arc::clone(&doc.log);
                doc.session.apply_log_hints(&log);
            }
            // A match's own record shares its pictures' clock: no offset.
            let own_clock = doc.session.logs.first() == Some(&doc.session.video);
            if doc.saved.is_none() && req.offset.is_none() && !own_clock {
                doc.session.offset = sync::default_offset(&doc.log, 0.0);
            }
        }
        if let Some(o) = req.offset {
            anyhow::ensure!(
                o.is_finite(),
                "the offset must be a finite number of seconds, not {o}"
            );
            doc.session.offset = o;
        }
        doc.opened = Some(doc.session.clone());
        Ok(doc)
    }

    /// A document for a live run of `session` (loaded from
    /// `session_path`, if it was): its calibration, filter, mask and
    /// offset; its logs come as the run swaps them in
    /// ([`Self::set_live_log`]), files among them included.
    pub fn for_live(session: Session, session_path: Option<PathBuf>) -> anyhow::Result<Self> {
        let mut doc = Document::without_log(session, session_path);
        doc.opened = Some(doc.session.clone());
        doc.reload_calibration()?;
        Ok(doc)
    }

    /// `session` (saved at `session_path`, if it was) with no log read yet
    /// and its calibration still to load.
    fn without_log(session: Session, session_path: Option<PathBuf>) -> Self {
        let saved = session_path.as_ref().map(|_| session.clone());
        Document {
            session,
            session_path,
            saved,
            opened: None,
            log: Arc::new(Log::new()),
            index: Arc::new(Index::new(&Log::new())),
            has_log: false,
            log_range: None,
            filter_cache: Default::default(),
            unit_note: None,
            world_extent: None,
            clocks: None,
            tree: EntityTree::default(),
            events: Events::default(),
            calibration: None,
            source_calibration: None,
        }
    }

    /// The logs a live run draws now, with their index (shared with its
    /// pipeline); the session's list of files stays as it is.
    pub fn set_live_log(&mut self, log: Arc<Log>, index: Arc<Index>) {
        self.tree = EntityTree::build(&log);
        self.events = Events::from_log(&log);
        self.index = index;
        self.log_range = log.time_range();
        self.filter_cache.take();
        self.world_extent = crate::viewer::field_view::extent(&log);
        let unit_changed = !self.has_log || self.log.header.world_unit != log.header.world_unit;
        self.log = log;
        self.has_log = true;
        if unit_changed {
            // Converted from the session's own, not again from a converted one.
            if let Ok(c) = self.session.load_calibration() {
                self.calibration = c;
            }
            self.convert_calibration();
        }
    }

    /// Replaces the log (read from `path`).
    pub fn set_log(&mut self, log: Log, path: PathBuf) {
        self.set_logs(log, vec![path]);
    }

    /// Replaces the logs (read from `paths` and merged into `log`).
    pub fn set_logs(&mut self, log: Log, paths: Vec<PathBuf>) {
        self.tree = EntityTree::build(&log);
        self.events = Events::from_log(&log);
        self.index = Arc::new(Index::new(&log));
        self.log_range = log.time_range();
        self.filter_cache.take();
        self.world_extent = crate::viewer::field_view::extent(&log);
        self.log = Arc::new(log);
        self.has_log = true;
        self.session.logs = paths;
        self.convert_calibration();
    }

    /// Resolves the session's calibration source.
    pub fn reload_calibration(&mut self) -> anyhow::Result<()> {
        self.calibration = self.session.load_calibration()?;
        self.convert_calibration();
        Ok(())
    }

    /// Converts the calibration to the log's world unit when they differ
    /// and both are known (see [`crate::calib::unit`]); says so in
    /// [`Self::unit_note`].
    fn convert_calibration(&mut self) {
        self.unit_note = None;
        if let (Some(c), true) = (&self.calibration, self.has_log) {
            let (c, check) = c.for_unit(&self.log.header.world_unit);
            self.unit_note = check.warning();
            self.calibration = Some(c);
        }
    }

    /// Uses `c` as the session's calibration, stored inline.
    pub fn set_calibration(&mut self, c: Option<Calibration>) {
        self.session.calibration = c.clone().map(CalibrationSource::Inline);
        self.calibration = c;
    }

    /// The instantaneous-frame threshold in use.
    pub fn threshold(&self) -> f64 {
        InstantThreshold::from_setting(self.session.instant_threshold).seconds(&self.index)
    }

    /// Frame times ↔ log times as the session and the source say.
    pub fn time_map(&self) -> TimeMap {
        self.session.time_map().with_clocks(self.clocks.clone())
    }

    /// Whether the session differs from what was last saved.
    /// The session's filter compiled for the log, as the drawing compiles
    /// it; compiled again only when the filter changed (the panels that
    /// select ask every frame).
    pub fn filter(&self) -> Arc<crate::select::Filter> {
        let mut cache = self.filter_cache.borrow_mut();
        if let Some((spec, f)) = cache.as_ref()
            && *spec == self.session.filter
        {
            return Arc::clone(f);
        }
        let f = Arc::new(self.session.filter.compile_or_lenient(&self.log).0);
        *cache = Some((self.session.filter.clone(), Arc::clone(&f)));
        f
    }

    pub fn is_dirty(&self) -> bool {
        self.saved.as_ref().or(self.opened.as_ref()) != Some(&self.session)
    }

    /// Writes the session to `path` and remembers it as the session's file.
    pub fn save(&mut self, path: &Path) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.has_log,
            "a session needs a log: open one (File → Open log) before saving"
        );
        self.session.save(path)?;
        self.session_path = Some(path.to_owned());
        self.saved = Some(self.session.clone());
        Ok(())
    }

    /// The export of this document (as shown, unsaved changes included)
    /// with the dialog's `options`: the plan `underlay export` makes of the
    /// same session.
    pub fn export_plan(&self, options: &ExportOptions) -> Result<ExportPlan, DialogError> {
        if !self.has_log {
            return Err(DialogError::NoLog);
        }
        if self.calibration.is_none() && self.source_calibration.is_none() && !self.log.has_picture_shapes() {
            return Err(DialogError::NoCalibration);
        }
        Ok(ExportPlan::with_log(
            &self.session,
            self.session_path.as_deref(),
            Arc::clone(&self.log),
            Arc::clone(&self.index),
            options,
        )?)
    }

    /// The settings the overlay is drawn with.
    pub fn draw_settings(&self) -> DrawSettings {
        let calibration = self
            .calibration
            .clone()
            .or_else(|| self.source_calibration.clone());
        let mut s = self.session.draw_settings_with(calibration);
        s.time = self.time_map();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_dedup_and_cap() {
        let mut p = Persisted::default();
        for i in 0..12 {
            p.add_recent(Path::new(&format!("/x/{i}.toml")));
        }
        p.add_recent(Path::new("/x/5.toml"));
        assert_eq!(p.recent.len(), MAX_RECENT);
        assert_eq!(p.recent[0], Path::new("/x/5.toml"));
        assert_eq!(p.recent.iter().filter(|r| r.ends_with("5.toml")).count(), 1);
    }

    /// The compiled filter is kept until the session's filter or the log
    /// changes; unknown names fall back as the drawing does.
    #[test]
    fn the_filter_is_compiled_once_per_change() {
        let mut doc = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            ..Default::default()
        })
        .unwrap();
        let mut log = Log::new();
        log.entities.intern("ball");
        doc.set_log(log.clone(), "a.ulog".into());
        let a = doc.filter();
        assert!(Arc::ptr_eq(&a, &doc.filter()));
        doc.session.filter.max_level = Some(1);
        let b = doc.filter();
        assert!(!Arc::ptr_eq(&a, &b));
        doc.set_log(log, "a.ulog".into());
        assert!(!Arc::ptr_eq(&b, &doc.filter()), "a new log compiles again");
        doc.session.filter.only = vec!["nobody".into()];
        let _ = doc.filter();
    }

    #[test]
    fn open_video_only_and_bad_inputs() {
        let doc = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            offset: Some(2.5),
            ..Default::default()
        })
        .unwrap();
        assert!(!doc.has_log);
        assert_eq!(doc.session.offset, 2.5);
        assert!(!doc.is_dirty(), "nothing changed since it was opened");
        let mut doc = doc;
        doc.session.offset = 3.0;
        assert!(doc.is_dirty());
        assert!(Document::open(&OpenRequest::default()).is_err());
        let e = Document::open(&OpenRequest {
            input: Some("/nonexistent/s.toml".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/s.toml"), "{e:#}");
        let e = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            calib: Some("/nonexistent/c.toml".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("c.toml"), "{e:#}");
    }

    #[test]
    fn open_with_a_log_sets_the_default_offset() {
        let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_logs/ssl.ulog");
        let doc = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            logs: vec![log.clone()],
            ..Default::default()
        })
        .unwrap();
        assert!(doc.has_log);
        assert_eq!(doc.session.offset, 1_700_000_000.0);
        assert!(!doc.tree.nodes.is_empty());
        assert!(!doc.events.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.ulog");
        std::fs::write(&bad, b"UNDERLAY \x01garbage").unwrap();
        let e = Document::open(&OpenRequest {
            input: Some("run.mp4".into()),
            logs: vec![bad],
            ..Default::default()
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("bad.ulog"), "{e:#}");
    }

    #[test]
    fn the_view_is_kept_in_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::new(dir.path().join("v.mp4"), dir.path().join("l.ulog"));
        assert_eq!(SessionView::from_session(&s), None);
        let view = SessionView {
            layout: Layout {
                entities: false,
                ..Layout::default()
            },
            calib_points: vec![
                SavedCalibPoint {
                    image: [12.5, 40.0],
                    world: Some([-4500.0, 3000.0]),
                    height: 0.0,
                    name: Some("corner -x+y".into()),
                },
                SavedCalibPoint {
                    image: [620.0, 30.0],
                    world: Some([-4500.0, 500.0]),
                    height: 160.0,
                    name: None,
                },
                SavedCalibPoint {
                    image: [600.0, 41.25],
                    world: None,
                    height: 0.0,
                    name: None,
                },
            ],
            calib_model: Some(crate::calib::Model::Radial),
            calib_preset: Some("ssl-b".into()),
        };
        view.store(&mut s);
        let p = dir.path().join("s.toml");
        s.save(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("[viewer"), "{text}");
        let back = Session::load(&p).unwrap();
        assert_eq!(SessionView::from_session(&back), Some(view));
    }

    #[test]
    fn saving_needs_a_log_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut doc = Document::open(&OpenRequest {
            input: Some(dir.path().join("run.mp4")),
            ..Default::default()
        })
        .unwrap();
        let path = dir.path().join("s.toml");
        assert!(doc.save(&path).is_err());
        let mut log = Log::new();
        log.entities.intern("ball");
        doc.set_log(log, dir.path().join("run.ulog"));
        doc.set_calibration(Some(
            Calibration::from_homography([[2.0, 0.0, 1.0], [0.0, 2.0, 1.0], [0.0, 0.0, 1.0]]).unwrap(),
        ));
        doc.session.filter.hidden.insert("ball".into());
        doc.save(&path).unwrap();
        assert!(!doc.is_dirty());
        let back = Session::load(&path).unwrap();
        assert_eq!(back, doc.session);
    }

    /// A short 160×96 video of a flat grey floor.
    fn grey_video(path: &Path, frames: u32) {
        let settings = crate::video::EncoderSettings {
            fps_hint: 10.0,
            ..Default::default()
        };
        let mut enc = crate::video::Encoder::create(path, 160, 96, &settings).unwrap();
        let img = crate::image::RgbImage::from_elem((96, 160, 3), 90);
        for i in 0..frames {
            enc.push(&img, i as f64 / 10.0).unwrap();
        }
        enc.finish().unwrap();
    }

    #[test]
    fn the_document_exports_what_it_shows() {
        use crate::geom::Vec2;
        use crate::log::{FrameTime, Primitive, Rgba, Shape, Style};
        let dir = tempfile::tempdir().unwrap();
        let video = dir.path().join("in.mp4");
        grey_video(&video, 12);
        let mut doc = Document::open(&OpenRequest {
            input: Some(video.clone()),
            ..Default::default()
        })
        .unwrap();
        let out = dir.path().join("out.mp4");
        let options = ExportOptions {
            output: out.clone(),
            ..Default::default()
        };
        assert!(matches!(doc.export_plan(&options), Err(DialogError::NoLog)));
        let mut log = Log::new();
        let e = log.entities.intern("ball");
        let disc = Primitive {
            shape: Shape::Circle {
                center: Vec2::new(80.0, 48.0),
                radius: 30.0,
            },
            style: Style {
                fill: Some(Rgba::from_rgb(0xff0000)),
                ..Style::color(Rgba::from_rgb(0xff0000))
            },
            entity: e,
            level: 0,
        };
        log.push_frame(
            FrameTime::Persistent {
                start: f64::NEG_INFINITY,
                end: f64::INFINITY,
            },
            [disc],
        );
        doc.set_log(log, dir.path().join("x.ulog"));
        assert!(matches!(
            doc.export_plan(&options),
            Err(DialogError::NoCalibration)
        ));
        doc.set_calibration(Some(
            Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap(),
        ));
        doc.session.mask = crate::mask::MaskSettings::None;
        let plan = doc.export_plan(&options).unwrap();
        assert_eq!(plan.expected_frames, Some(12));
        let progress = Arc::new(crate::export::Progress::default());
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let report = plan.run(&cancel, Some(Arc::clone(&progress))).unwrap();
        assert_eq!(report.frames, 12);
        assert_eq!(progress.done.load(std::sync::atomic::Ordering::Relaxed), 12);
        let mut dec = crate::video::Decoder::open(&out).unwrap();
        let frame = dec.next_frame().unwrap().unwrap();
        let px = |y: usize, x: usize| [0, 1, 2].map(|c| frame.image[[y, x, c]]);
        let red = px(48, 80);
        assert!(red[0] > 200 && red[1] < 60 && red[2] < 60, "disc centre {red:?}");
        let grey = px(5, 5);
        assert!(grey.iter().all(|&v| v.abs_diff(90) < 12), "floor {grey:?}");
    }
}
