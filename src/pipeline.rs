//! The per-frame pipeline shared by the viewer and export: a video frame
//! at video time `tv` → log time `tv + offset` → selected primitives →
//! mapped through the calibration → drawn onto an overlay → composited
//! onto the frame only where the floor mask says floor.
//!
//! A [`Pipeline`] owns its buffers (overlay, coverage scratch, mask) and
//! reuses them frame after frame; it is `Send`, so export can run one per
//! worker thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::calib::{CalibError, Calibration};
use crate::draw::{self, DrawError, Overlay, Painter, SkipReason};
use crate::image::{FLOOR, MaskImage, RgbImage};
use crate::log::{Log, LogError};
use crate::mask::{MaskError, Masker};
use crate::select::{Filter, Index, SelectError};
use crate::session::{CalibrationSource, Session};
use crate::video::SourceFrame;

/// Errors building a pipeline or processing a frame.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("frame at {time:.3} s: floor mask ({masker}): {source}")]
    Mask {
        time: f64,
        masker: String,
        #[source]
        source: MaskError,
    },
    #[error("frame at {time:.3} s: {source}")]
    Draw {
        time: f64,
        #[source]
        source: DrawError,
    },
    #[error("frame at {time:.3} s: log time {log_time} is not a finite number (check the offset)")]
    BadTime { time: f64, log_time: f64 },
    #[error("calibration: {0}")]
    Calibration(#[from] CalibError),
    #[error("mask settings: {0}")]
    MaskSettings(#[source] MaskError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("filter: {0}")]
    Filter(#[from] SelectError),
}

/// What [`Pipeline::process`] does to a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Draw the log's primitives.
    pub overlay: bool,
    /// Hide drawings where the floor mask says foreground; when off the
    /// overlay covers everything and no mask is computed.
    pub mask: bool,
    /// Tint the floor pixels (thesis Figure 3.5), for checking the mask.
    pub tint_mask: bool,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            overlay: true,
            mask: true,
            tint_mask: false,
        }
    }
}

/// What happened to one frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// The log time the frame was drawn for.
    pub log_time: f64,
    /// Primitives selected for this time (entity and level filter applied).
    pub primitives: usize,
    /// Primitives drawn (possibly wholly outside the frame or behind the camera).
    pub drawn: usize,
    /// Primitives refused as undrawable (NaN, zero radius, empty text …).
    pub skipped: usize,
    /// Why the first refused primitive was refused.
    pub skip_reason: Option<SkipReason>,
    /// False when there is no calibration, so nothing could be drawn.
    pub calibrated: bool,
    /// An instantaneous log frame was within the threshold of the log
    /// time (false: only persistent drawings, if any, were selected).
    pub instant: bool,
    /// Time computing the floor mask.
    pub mask_time: Duration,
    /// Time selecting primitives.
    pub select_time: Duration,
    /// Time projecting and rasterizing primitives.
    pub draw_time: Duration,
    /// Time tinting and compositing onto the frame.
    pub composite_time: Duration,
}

/// Turns a video frame and its time into the annotated frame.
pub struct Pipeline {
    log: Arc<Log>,
    index: Arc<Index>,
    calibration: Option<Calibration>,
    masker: Box<dyn Masker>,
    filter: Filter,
    offset: f64,
    threshold: f64,
    options: PipelineOptions,
    overlay: Overlay,
    painter: Painter,
    mask: MaskImage,
    /// `mask` holds no computed mask, only floor everywhere.
    mask_is_default: bool,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("primitives", &self.log.primitives.len())
            .field("calibrated", &self.calibration.is_some())
            .field("masker", &self.masker.name())
            .field("offset", &self.offset)
            .field("threshold", &self.threshold)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// A pipeline drawing `log` (log time = video time + `offset`, nearest
    /// instantaneous frame within `threshold` seconds) through
    /// `calibration`, hidden where `masker` says foreground.
    pub fn new(
        log: Arc<Log>,
        calibration: Option<Calibration>,
        masker: Box<dyn Masker>,
        filter: Filter,
        offset: f64,
        threshold: f64,
    ) -> Pipeline {
        Pipeline {
            index: Arc::new(Index::new(&log)),
            log,
            calibration,
            masker,
            filter,
            offset,
            threshold,
            options: PipelineOptions::default(),
            overlay: Overlay::new(0, 0),
            painter: Painter::new(0, 0),
            mask: MaskImage::zeros((0, 0)),
            mask_is_default: false,
        }
    }

    /// The pipeline a session describes: its log, calibration (inline or
    /// from a file), mask settings, filter, offset and threshold.
    pub fn from_session(session: &Session) -> Result<Pipeline, PipelineError> {
        let log = Arc::new(crate::log::load(&session.log)?);
        Self::from_session_with_log(session, log)
    }

    /// Like [`Pipeline::from_session`] with the log already in memory.
    pub fn from_session_with_log(session: &Session, log: Arc<Log>) -> Result<Pipeline, PipelineError> {
        let calibration = match &session.calibration {
            None => None,
            Some(CalibrationSource::Inline(c)) => Some(c.clone()),
            Some(CalibrationSource::File { file }) => Some(Calibration::load(file)?),
        };
        let masker = session.mask.build().map_err(PipelineError::MaskSettings)?;
        let filter = session.filter.compile(&log)?;
        let mut p = Pipeline::new(log, calibration, masker, filter, session.offset, 0.0);
        p.threshold = session
            .instant_threshold
            .filter(|t| !t.is_nan() && *t >= 0.0)
            .unwrap_or_else(|| p.index.default_threshold());
        Ok(p)
    }

    /// A second pipeline with the same log, index, calibration, filter,
    /// offset, threshold and options but its own buffers and `masker`: for
    /// processing frames on another thread without loading or indexing the
    /// log again.
    pub fn fork(&self, masker: Box<dyn Masker>) -> Pipeline {
        Pipeline {
            log: Arc::clone(&self.log),
            index: Arc::clone(&self.index),
            calibration: self.calibration.clone(),
            masker,
            filter: self.filter.clone(),
            offset: self.offset,
            threshold: self.threshold,
            options: self.options,
            overlay: Overlay::new(0, 0),
            painter: Painter::new(0, 0),
            mask: MaskImage::zeros((0, 0)),
            mask_is_default: false,
        }
    }

    /// Annotates `frame`, shown at `video_time` seconds, in place.
    pub fn process(&mut self, frame: &mut RgbImage, video_time: f64) -> Result<FrameStats, PipelineError> {
        let log_time = video_time + self.offset;
        if !log_time.is_finite() {
            return Err(PipelineError::BadTime {
                time: video_time,
                log_time,
            });
        }
        let draw_err = |source| PipelineError::Draw {
            time: video_time,
            source,
        };
        if !frame.is_standard_layout() {
            return Err(draw_err(DrawError::Layout));
        }
        let (h, w, _) = frame.dim();
        let mut stats = FrameStats {
            log_time,
            calibrated: self.calibration.is_some(),
            ..FrameStats::default()
        };
        if (self.overlay.width(), self.overlay.height()) != (w, h) {
            self.overlay = Overlay::new(w, h);
            self.painter.resize(w, h);
        } else {
            self.overlay.clear();
        }

        // The mask is computed from the untouched frame.
        let t0 = Instant::now();
        if self.options.mask || self.options.tint_mask {
            self.masker
                .compute(frame, video_time, &mut self.mask)
                .map_err(|source| PipelineError::Mask {
                    time: video_time,
                    masker: self.masker.name().to_owned(),
                    source,
                })?;
            self.mask_is_default = false;
            let (mh, mw) = self.mask.dim();
            if (mw, mh) != (w, h) {
                return Err(draw_err(DrawError::MaskSize {
                    mask_w: mw,
                    mask_h: mh,
                    frame_w: w,
                    frame_h: h,
                }));
            }
        } else if !self.mask_is_default || self.mask.dim() != (h, w) {
            self.mask = MaskImage::from_elem((h, w), FLOOR);
            self.mask_is_default = true;
        }
        stats.mask_time = t0.elapsed();

        if self.options.overlay
            && let Some(calib) = &self.calibration
        {
            let t1 = Instant::now();
            let selected = self
                .index
                .select(&self.log, log_time, self.threshold, &self.filter);
            stats.primitives = selected.len();
            stats.instant = selected.instant_frame().is_some();
            let t2 = Instant::now();
            stats.select_time = t2 - t1;
            for p in &selected {
                match self.painter.primitive(&mut self.overlay, calib, p) {
                    Ok(()) => stats.drawn += 1,
                    Err(why) => {
                        stats.skipped += 1;
                        stats.skip_reason.get_or_insert(why);
                    }
                }
            }
            stats.draw_time = t2.elapsed();
        }

        let t3 = Instant::now();
        if self.options.tint_mask {
            draw::tint_floor(frame, &self.mask).map_err(draw_err)?;
        }
        if !self.overlay.is_empty() {
            let mask = self.options.mask.then_some(&self.mask);
            self.overlay.composite(frame, mask).map_err(draw_err)?;
        }
        stats.composite_time = t3.elapsed();
        Ok(stats)
    }

    /// Annotates a decoded frame in place like [`process`](Self::process),
    /// and marks the parts it changed on the frame's YUV planes
    /// ([`SourceFrame::yuv`]), when it has them, so that only those are
    /// converted back.
    pub fn process_frame(&mut self, frame: &mut SourceFrame) -> Result<FrameStats, PipelineError> {
        let stats = self.process(&mut frame.image, frame.time)?;
        if let Some(yuv) = &mut frame.yuv {
            let (h, w, _) = frame.image.dim();
            if self.options.tint_mask {
                yuv.mark_changed([0, 0, w, h]);
            } else if !self.overlay.is_empty() {
                self.overlay
                    .for_each_pair_span(|y, x0, x1| yuv.mark_changed([x0, y, x1, y + 2]));
            }
        }
        Ok(stats)
    }

    /// The floor mask of the last processed frame (all floor when masking
    /// is off).
    pub fn last_mask(&self) -> &MaskImage {
        &self.mask
    }

    /// The overlay of the last processed frame (premultiplied RGBA).
    pub fn overlay(&self) -> &Overlay {
        &self.overlay
    }

    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    /// The time index of the log (nearest frames, next and previous times).
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Replaces the log (rebuilding its index) and the filter compiled for it.
    pub fn set_log(&mut self, log: Arc<Log>, filter: Filter) {
        self.index = Arc::new(Index::new(&log));
        self.log = log;
        self.filter = filter;
    }

    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }

    pub fn set_calibration(&mut self, calibration: Option<Calibration>) {
        self.calibration = calibration;
    }

    /// Name of the current masker.
    pub fn masker_name(&self) -> &str {
        self.masker.name()
    }

    pub fn set_masker(&mut self, masker: Box<dyn Masker>) {
        self.masker = masker;
    }

    /// Checks up front that the masker fits a video of this size and frame
    /// count (a mask image or mask video of another size is an error).
    pub fn check_video(
        &self,
        width: usize,
        height: usize,
        frame_count: Option<u64>,
    ) -> Result<(), crate::mask::MaskError> {
        self.masker.check_video(width, height, frame_count)
    }

    /// Tells the masker that playback jumped (it forgets per-frame state).
    pub fn reset(&mut self) {
        self.masker.reset();
    }

    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    pub fn set_filter(&mut self, filter: Filter) {
        self.filter = filter;
    }

    /// Log time = video time + offset, in seconds.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    pub fn set_offset(&mut self, offset: f64) {
        self.offset = offset;
    }

    /// How far (seconds) the nearest instantaneous frame may be from the
    /// log time and still be shown.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    pub fn set_threshold(&mut self, threshold: f64) {
        self.threshold = threshold;
    }

    pub fn options(&self) -> PipelineOptions {
        self.options
    }

    pub fn set_options(&mut self, options: PipelineOptions) {
        self.options = options;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{FrameTime, Primitive, Rgba, Shape, Style, Vec2};
    use crate::mask::NoMask;

    fn identity() -> Calibration {
        Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap()
    }

    fn dot_log() -> Log {
        let mut log = Log::new();
        let e = log.entities.intern("ball");
        let circle = |x: f64| Primitive {
            shape: Shape::Circle {
                center: Vec2::new(x, 20.0),
                radius: 5.0,
            },
            style: Style {
                fill: Some(Rgba::from_rgb(0xff0000)),
                ..Style::color(Rgba::from_rgb(0xff0000))
            },
            entity: e,
            level: 0,
        };
        log.push_frame(FrameTime::Instant(10.0), [circle(20.0)]);
        log.push_frame(FrameTime::Instant(11.0), [circle(60.0)]);
        log
    }

    /// A masker that calls the left half foreground.
    struct LeftHalf;
    impl Masker for LeftHalf {
        fn name(&self) -> &str {
            "left-half"
        }
        fn compute(&mut self, frame: &RgbImage, _t: f64, out: &mut MaskImage) -> Result<(), MaskError> {
            let (h, w, _) = frame.dim();
            *out = MaskImage::from_shape_fn((h, w), |(_, x)| if x < w / 2 { 0 } else { FLOOR });
            Ok(())
        }
    }

    #[test]
    fn offset_selects_the_frame_and_mask_hides_it() {
        let log = Arc::new(dot_log());
        let filter = Filter::all(&log, 0);
        let mut p = Pipeline::new(log, Some(identity()), Box::new(LeftHalf), filter, 10.0, 0.3);
        let mut frame = RgbImage::zeros((40, 80, 3));
        // Video 0 s → log 10 s: the circle at x = 20 is on the masked half.
        let s = p.process(&mut frame, 0.0).unwrap();
        assert_eq!((s.primitives, s.drawn, s.skipped), (1, 1, 0));
        assert!(frame.iter().all(|&v| v == 0));
        assert_eq!(p.overlay().pixel(20, 20), [255, 0, 0, 255]);
        // Video 1 s → log 11 s: the circle at x = 60 is on the floor half.
        let s = p.process(&mut frame, 1.0).unwrap();
        assert_eq!(s.log_time, 11.0);
        assert_eq!(frame[[20, 60, 0]], 255);
        assert_eq!(p.overlay().pixel(20, 20), [0; 4]);
        // Without the mask it shows everywhere; with the tint the floor is pink.
        p.set_options(PipelineOptions {
            mask: false,
            ..PipelineOptions::default()
        });
        let mut frame = RgbImage::zeros((40, 80, 3));
        p.process(&mut frame, 0.0).unwrap();
        assert_eq!(frame[[20, 20, 0]], 255);
        assert!(p.last_mask().iter().all(|&m| m == FLOOR));
        p.set_options(PipelineOptions {
            overlay: false,
            mask: true,
            tint_mask: true,
        });
        let mut frame = RgbImage::zeros((40, 80, 3));
        p.process(&mut frame, 0.0).unwrap();
        assert_eq!(frame[[5, 5, 0]], 0);
        assert!(frame[[5, 70, 0]] > 50);
    }

    #[test]
    fn bad_time_and_missing_calibration() {
        let log = Arc::new(dot_log());
        let filter = Filter::all(&log, 0);
        let mut p = Pipeline::new(log, None, Box::new(NoMask), filter, 10.0, 0.3);
        let mut frame = RgbImage::zeros((40, 80, 3));
        let s = p.process(&mut frame, 0.0).unwrap();
        assert!(!s.calibrated && s.primitives == 0);
        p.set_offset(f64::NAN);
        let e = p.process(&mut frame, 1.5).unwrap_err().to_string();
        assert!(e.contains("1.500") && e.contains("offset"), "{e}");
    }

    #[test]
    fn pipelines_can_move_to_worker_threads() {
        fn is_send<T: Send>() {}
        is_send::<Pipeline>();
        let log = Arc::new(dot_log());
        let filter = Filter::all(&log, 0);
        let mut p = Pipeline::new(log, Some(identity()), Box::new(NoMask), filter, 10.0, 0.3);
        let mut forked = p.fork(Box::new(LeftHalf));
        assert!(Arc::ptr_eq(p.log(), forked.log()));
        let stats = std::thread::spawn(move || p.process(&mut RgbImage::zeros((40, 80, 3)), 0.0).unwrap())
            .join()
            .unwrap();
        assert_eq!(stats.drawn, 1);
        // The fork draws the same, through its own masker.
        let mut frame = RgbImage::zeros((40, 80, 3));
        let stats = forked.process(&mut frame, 1.0).unwrap();
        assert_eq!((stats.drawn, frame[[20, 60, 0]]), (1, 255));
        assert_eq!(forked.masker_name(), "left-half");
    }

    #[test]
    fn tiny_frames_and_changing_sizes() {
        let log = Arc::new(dot_log());
        let filter = Filter::all(&log, 0);
        let mut p = Pipeline::new(log, Some(identity()), Box::new(NoMask), filter, 10.0, 0.3);
        for (h, w) in [(0, 0), (1, 1), (0, 7), (40, 80), (3, 2), (40, 80)] {
            let mut frame = RgbImage::zeros((h, w, 3));
            let s = p.process(&mut frame, 0.0).unwrap();
            assert_eq!(s.primitives, 1);
            assert_eq!(p.last_mask().dim(), (h, w));
        }
        // A frame not in standard layout is refused, not misread.
        let mut fortran = RgbImage::zeros((3, 80, 40)).reversed_axes();
        assert_eq!(fortran.dim(), (40, 80, 3));
        let e = p.process(&mut fortran, 0.0).unwrap_err().to_string();
        assert!(e.contains("layout") && e.contains("0.000 s"), "{e}");
    }

    #[test]
    fn from_session_reads_log_and_calibration_files_and_names_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("run.ulog");
        crate::log::save(&dot_log(), &log_path).unwrap();
        let calib_path = dir.path().join("c.toml");
        identity().save(&calib_path, "").unwrap();
        let mut session = Session::new(dir.path().join("run.mp4"), &log_path);
        session.offset = 10.0;
        session.calibration = Some(CalibrationSource::File {
            file: calib_path.clone(),
        });
        let mut p = Pipeline::from_session(&session).unwrap();
        let mut frame = RgbImage::zeros((40, 80, 3));
        let s = p.process(&mut frame, 0.0).unwrap();
        assert_eq!((s.primitives, s.drawn), (1, 1));
        assert_eq!(frame[[20, 20, 0]], 255);
        // The threshold comes from the log's index; a session may override it.
        assert_eq!(p.threshold(), p.index().default_threshold());
        session.instant_threshold = Some(0.25);
        assert_eq!(Pipeline::from_session(&session).unwrap().threshold(), 0.25);
        // An entity the log does not know is an error naming it.
        session.filter.only = vec!["nobody".into()];
        let e = Pipeline::from_session(&session).unwrap_err().to_string();
        assert!(e.contains("nobody"), "{e}");
        session.filter.only.clear();
        // A bad calibration file and a missing log are named in the error.
        std::fs::write(&calib_path, "homography = [[1.0, 0.0], [0.0, 1.0, 0.0]]\n").unwrap();
        let e = Pipeline::from_session(&session).unwrap_err().to_string();
        assert!(e.contains("c.toml"), "{e}");
        session.log = dir.path().join("missing.ulog");
        let e = Pipeline::from_session(&session).unwrap_err().to_string();
        assert!(e.contains("missing.ulog"), "{e}");
    }
}
