//! The per-frame pipeline shared by the viewer and export: a frame → its
//! log time (the [`TimeMap`](crate::video::TimeMap) of the settings) →
//! selected primitives → mapped through the calibration → drawn onto an
//! overlay → composited onto the frame only where the floor mask says
//! floor.
//!
//! A [`Pipeline`] is configured from one [`DrawSettings`] value
//! ([`settings`]): [`Pipeline::configure`] rebuilds only what changed (a
//! new filter is compiled, a new mask method built, the rest is read as
//! it is). It owns its buffers (overlay, coverage scratch, mask) and
//! reuses them frame after frame; it is `Send`, so export can run one per
//! worker thread.
//!
//! A frame that carries its decoded YUV planes ([`SourceFrame::yuv`]) is
//! masked and drawn on in them: the mask reads the planes, the overlay is
//! blended into them ([`crate::video::Yuv420::draw_planes`]), and no RGB
//! picture is made (it is, from the drawn planes, when someone asks:
//! [`SourceFrame::finish_rgb`]). A frame without planes is drawn on its
//! RGB picture.

mod band;
mod kept;
pub mod settings;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::draw::{self, Canvas, DrawError, Overlay, SkipReason};
use crate::image::RgbImage;
use crate::log::{Log, LogError};
use crate::mask::window::{Rect, plan_cores};
use crate::mask::{FloorMask, MaskDoubt, MaskError, MaskStep, Masker, NoMask};
use crate::select::{Filter, Index, SelectError};
use crate::time::LogTime;
use crate::video::SourceFrame;
use band::{Band, What};

pub use settings::{DrawSettings, DrawToggles, InstantThreshold};

/// Errors building a pipeline or processing a frame.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("frame at {time:.3} s: floor mask ({masker})")]
    Mask {
        time: f64,
        masker: String,
        #[source]
        source: MaskError,
    },
    #[error("frame at {time:.3} s: the mask method is `source` but the frame source gives no masks")]
    NoSourceMask { time: f64 },
    #[error("frame at {time:.3} s: cannot draw")]
    Draw {
        time: f64,
        #[source]
        source: DrawError,
    },
    #[error("frame at {time:.3} s: cannot draw on the picture's planes: {message}")]
    Planes { time: f64, message: String },
    #[error("frame at {time:.3} s: log time {log_time} is not a finite number (check the offset)")]
    BadTime { time: f64, log_time: f64 },
    #[error("mask settings")]
    MaskSettings(#[source] MaskError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("entity filter")]
    Filter(#[from] SelectError),
}

/// What happened to one frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// The log time the frame was drawn for.
    pub log_time: LogTime,
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
    /// What makes the frame's floor mask doubtful, when its masker can tell.
    pub mask_doubt: Option<MaskDoubt>,
    /// Time computing the floor mask.
    pub mask_time: Duration,
    /// Time selecting primitives.
    pub select_time: Duration,
    /// Time projecting and rasterizing primitives.
    pub draw_time: Duration,
    /// Time tinting and compositing onto the frame.
    pub composite_time: Duration,
}

/// What [`Pipeline::prepare`] worked out for one frame, in frame order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FramePlan {
    /// The mask's state for the frame.
    pub mask: MaskStep,
}

/// Turns a frame into the annotated frame.
pub struct Pipeline {
    log: Arc<Log>,
    /// The log has shapes in the picture's pixels (drawn without a
    /// calibration too), found once per log, not per frame.
    picture_shapes: bool,
    index: Arc<Index>,
    /// The settings applied (`None` before the first [`Pipeline::configure`]).
    applied: Option<DrawSettings>,
    masker: Box<dyn Masker>,
    filter: Filter,
    /// Entities drawn above the mask, by id (empty: none).
    above: Vec<bool>,
    threshold: f64,
    band: Band,
    mask: FloorMask,
    /// `mask` holds no computed mask, only floor everywhere.
    mask_is_default: bool,
    /// Where the last frame's overlay was drawn, as rectangles.
    cores: Vec<Rect>,
    /// Mask beside the drawing, on another thread ([`Pipeline::with_parallel_mask`]).
    parallel_mask: bool,
    /// Pictures [`drawings_rgba`](Self::drawings_rgba) composites onto
    /// (black, white), kept between frames.
    canvases: (RgbImage, RgbImage),
    /// The masker masked (or would have masked) the last frame whole: its
    /// windows around the drawings would have cost more.
    whole_last: bool,
    /// Something was drawn into the last frame ([`Pipeline::draw_frame`]).
    drew_last: bool,
    /// Frames masked whole without planning windows since the last plan.
    plans_skipped: u32,
}

/// While windows around the drawings cost more than the whole picture,
/// they are planned again on one frame in this many.
const REPLAN_EVERY: u32 = 8;

/// `masker` cut to the settings' field seen through their calibration: the
/// field they name, else the one the calibration names, else the hull of
/// the points the calibration was
/// fitted from (when it records three or more spanning an area); without
/// a calibration, its large floor regions high in the picture dropped
/// ([`crate::mask::ground`]).
fn with_field(masker: Box<dyn Masker>, settings: &DrawSettings) -> Result<Box<dyn Masker>, MaskError> {
    let Some(c) = &settings.calibration else {
        // Nothing says where the field is: the floor lies low in the picture.
        return Ok(Box::new(crate::mask::ground::GroundMasker::new(masker)));
    };
    let Some((region, _)) = crate::mask::field::region_for(c, settings.field.as_ref())? else {
        return Ok(masker);
    };
    Ok(Box::new(crate::mask::field::FieldMasker::new(
        masker,
        c.clone(),
        region,
    )))
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("primitives", &self.log.primitives.len())
            .field("masker", &self.masker.name())
            .field("threshold", &self.threshold)
            .field("settings", &self.applied)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// A pipeline drawing `log` with `settings`; fails when they cannot
    /// all be applied (an entity the log does not know, a mask file that
    /// cannot be read).
    pub fn new(log: Arc<Log>, settings: &DrawSettings) -> Result<Pipeline, PipelineError> {
        let index = Arc::new(Index::new(&log));
        Self::with_index(log, index, settings)
    }

    /// Like [`Pipeline::new`] with the log's index already built (it is
    /// shared, not copied).
    pub fn with_index(
        log: Arc<Log>,
        index: Arc<Index>,
        settings: &DrawSettings,
    ) -> Result<Pipeline, PipelineError> {
        let mut p = Self::unconfigured(log, index);
        p.configure(settings)?;
        Ok(p)
    }

    /// A pipeline that draws nothing until [`configure`](Self::configure)d
    /// (for a caller that reports configuration problems and goes on).
    pub fn unconfigured(log: Arc<Log>, index: Arc<Index>) -> Pipeline {
        Pipeline {
            filter: Filter::all(&log, i32::MAX),
            above: Vec::new(),
            band: Band::new(),
            threshold: index.default_threshold(),
            picture_shapes: log.has_picture_shapes(),
            log,
            index,
            applied: None,
            masker: Box::new(NoMask),
            mask: FloorMask::new(),
            mask_is_default: false,
            cores: Vec::new(),
            parallel_mask: false,
            whole_last: false,
            drew_last: false,
            plans_skipped: 0,
            canvases: (RgbImage::zeros((0, 0, 3)), RgbImage::zeros((0, 0, 3))),
        }
    }

    /// Draws from now on with `settings`, rebuilding only what changed
    /// since the last call. What can be applied is; the error says what
    /// could not: an unknown entity name (the filter then ignores it) or
    /// mask settings that cannot be built (the previous mask method stays).
    pub fn configure(&mut self, settings: &DrawSettings) -> Result<(), PipelineError> {
        let old = self.applied.take();
        let old = old.as_ref();
        let mut problem = None;
        if old.is_none_or(|o| o.filter != settings.filter) {
            self.above = if settings.filter.above_mask.is_empty() {
                Vec::new()
            } else {
                crate::select::above_mask(&self.log, &settings.filter.above_mask)
            };
            let (filter, error) = settings.filter.compile_or_lenient(&self.log);
            self.filter = filter;
            problem = error.map(PipelineError::Filter);
        }
        if old.is_none_or(|o| {
            o.mask != settings.mask || o.field != settings.field || o.calibration != settings.calibration
        }) {
            match settings.mask.build().and_then(|m| with_field(m, settings)) {
                Ok(m) => self.masker = m,
                Err(e) => {
                    problem.get_or_insert(PipelineError::MaskSettings(e));
                }
            }
        }
        self.threshold = settings.instant_threshold.seconds(&self.index);
        self.applied = Some(settings.clone());
        self.band.forget_kept();
        problem.map_or(Ok(()), Err)
    }

    /// Draws `log` (indexed by `index`) from now on, with the same settings
    /// and the mask's state kept: for logs that grow while frames are drawn
    /// (a live run). The entity filter is compiled again against the new
    /// log, leniently: a name the log does not know yet is not an error,
    /// as it may come later.
    pub fn set_log(&mut self, log: Arc<Log>, index: Arc<Index>) {
        self.picture_shapes = log.has_picture_shapes();
        self.band.forget_kept();
        self.log = log;
        self.index = index;
        if let Some(settings) = &self.applied {
            self.above = if settings.filter.above_mask.is_empty() {
                Vec::new()
            } else {
                crate::select::above_mask(&self.log, &settings.filter.above_mask)
            };
            self.filter = settings.filter.compile_or_lenient(&self.log).0;
            self.threshold = settings.instant_threshold.seconds(&self.index);
        } else {
            self.filter = Filter::all(&self.log, i32::MAX);
            self.threshold = self.index.default_threshold();
        }
    }

    /// Uses `masker` instead of the one the mask settings build (a method
    /// of one's own: tests, benchmarks); the next [`configure`](Self::configure)
    /// with other mask settings replaces it.
    pub fn with_masker(mut self, masker: Box<dyn Masker>) -> Self {
        self.masker = masker;
        self
    }

    /// Computes the floor mask on a second thread while the overlay is
    /// drawn, whenever the whole mask is needed (the tint, a masker without
    /// windows) or was the cheaper choice on the last frame (drawings all
    /// over the picture). Every pixel comes out the same; a frame takes
    /// about the longer of drawing and masking instead of their sum. For
    /// the viewer, which processes one frame at a time; export already
    /// keeps every core busy with a pipeline per worker.
    pub fn with_parallel_mask(mut self, on: bool) -> Self {
        self.parallel_mask = on;
        self
    }

    /// A second pipeline with the same log, index and settings but its own
    /// buffers and mask state: for processing frames on another thread
    /// without loading or indexing the log again.
    pub fn fork(&self) -> Result<Pipeline, PipelineError> {
        let mut p = Self::unconfigured(Arc::clone(&self.log), Arc::clone(&self.index));
        p.parallel_mask = self.parallel_mask;
        if let Some(s) = &self.applied {
            p.configure(s)?;
        }
        Ok(p)
    }

    /// The settings applied (defaults before the first configuration).
    pub fn settings(&self) -> DrawSettings {
        self.applied.clone().unwrap_or_default()
    }

    /// Annotates `frame` in place: in its YUV planes when it has them
    /// ([`SourceFrame::yuv`]; its RGB picture is then pending), else in its
    /// RGB picture. Frames must come in order (after a jump,
    /// [`reset`](Self::reset)): the mask may carry state from frame to
    /// frame. Same as [`prepare`](Self::prepare) then
    /// [`process_planned`](Self::process_planned).
    pub fn process(&mut self, frame: &mut SourceFrame) -> Result<FrameStats, PipelineError> {
        let plan = self.prepare(frame)?;
        self.process_planned(frame, &plan)
    }

    /// The part of the work on `frame` that depends on the frames before
    /// it (the adaptive mask's smoothing over time): call it once per frame,
    /// in frame order, on one pipeline. The plan it returns can then be
    /// processed by any pipeline configured the same way
    /// ([`process_planned`](Self::process_planned)), in any order: the
    /// result is the same as one pipeline processing every frame in order.
    /// It reads the frame's picture as the mask does (its planes, when it
    /// has them: nothing is converted).
    pub fn prepare(&mut self, frame: &mut SourceFrame) -> Result<FramePlan, PipelineError> {
        let Some(settings) = &self.applied else {
            return Ok(FramePlan::default());
        };
        let toggles = settings.toggles;
        let own_mask = frame.mask.is_some() && settings.mask.takes_source_masks();
        if !(toggles.floor_mask || toggles.tint) || own_mask {
            return Ok(FramePlan::default());
        }
        if frame.full_range_planes() {
            // Masked in RGB (a display's full-range planes).
            frame.finish_rgb();
        }
        let mask = self
            .masker
            .advance(&frame.picture(), frame.time)
            .map_err(|source| self.mask_error(frame.time, source))?;
        Ok(FramePlan { mask })
    }

    /// Seconds of frames before a frame that [`prepare`](Self::prepare)'s
    /// result depends on ([`Masker::memory`]; 0 when the mask is off).
    pub fn memory(&self) -> f64 {
        match &self.applied {
            Some(s) if s.toggles.floor_mask || s.toggles.tint => self.masker.memory(),
            _ => 0.0,
        }
    }

    /// Annotates `frame` as [`process`](Self::process) does, with the
    /// order-dependent part already worked out by [`prepare`](Self::prepare).
    pub fn process_planned(
        &mut self,
        frame: &mut SourceFrame,
        plan: &FramePlan,
    ) -> Result<FrameStats, PipelineError> {
        self.draw_frame(frame, plan)
    }

    fn draw_frame(&mut self, frame: &mut SourceFrame, plan: &FramePlan) -> Result<FrameStats, PipelineError> {
        let Some(settings) = &self.applied else {
            return Ok(FrameStats::default());
        };
        let time = frame.time;
        let log_time = settings.time.frame_log_time(frame);
        if !log_time.is_finite() {
            return Err(PipelineError::BadTime {
                time,
                log_time: log_time.secs(),
            });
        }
        let draw_err = |source| PipelineError::Draw { time, source };
        if frame.full_range_planes() {
            // A display's full-range planes: masked and drawn in RGB, as
            // drawings convert to limited range.
            frame.finish_rgb();
        }
        if frame.yuv.is_none() && !frame.image.is_standard_layout() {
            return Err(draw_err(DrawError::Layout));
        }
        let (w, h) = frame.size();
        let toggles = settings.toggles;
        let mut stats = FrameStats {
            log_time,
            calibrated: settings.calibration.is_some() || frame.calibration.is_some(),
            ..FrameStats::default()
        };
        let above_any = self.above.iter().any(|&a| a);
        self.band
            .ready(w, h, above_any, toggles.text, toggles.flatten_heights);

        // The mask is computed from the untouched frame: the whole mask
        // when the tint shows it, else, for a masker that can, only around
        // what is drawn (after drawing, which leaves the frame as it is).
        // In parallel mode a whole mask is computed beside the drawing.
        if self.drew_last && toggles.overlay && !frame.full_range_planes() {
            // Drawings are blended into the decoded planes, which are
            // first copied out of the decoder's hands when it still holds
            // them. Copied before masking, the mask reads the copy while
            // it is still in this core's cache (about 1 % of a 720p
            // export's CPU). Whether this frame draws anything is known
            // only later; the last frame's answer is the guess, and a
            // wrong one costs the copy, never a pixel. An error here is
            // met again, and reported, when the drawing is blended.
            if let Some(yuv) = &mut frame.yuv {
                let _ = yuv.own_planes();
            }
        }
        let picture = frame.picture();
        let t0 = Instant::now();
        let mut only_drawn = None;
        // The masker's window margin, when it has windows, for telling
        // whether they pay on this frame.
        let mut margin_of_windows = None;
        let mut beside = false;
        if toggles.floor_mask || toggles.tint {
            match (&frame.mask, settings.mask.takes_source_masks()) {
                (Some(m), true) => self.mask.set_pixels(m),
                (None, true) if settings.mask.needs_source_masks() => {
                    return Err(PipelineError::NoSourceMask { time });
                }
                _ => {
                    let margin = self.masker.window_margin(h).filter(|_| !toggles.tint);
                    margin_of_windows = margin;
                    let whole = margin.is_none() || self.whole_last;
                    if self.parallel_mask && whole && toggles.overlay {
                        beside = true;
                    } else if margin.is_some() {
                        only_drawn = margin;
                    } else {
                        self.masker
                            .compute_step(&picture, time, &plan.mask, &mut self.mask)
                            .map_err(|source| self.mask_error(time, source))?;
                    }
                }
            }
            self.mask_is_default = false;
            if !beside && only_drawn.is_none() {
                draw::check_mask_size(&self.mask, w, h).map_err(draw_err)?;
            }
        } else if !self.mask_is_default || self.mask.dim() != (h, w) {
            self.mask.fill(w, h, true);
            self.mask_is_default = true;
        }
        stats.mask_time = t0.elapsed();

        // A frame with a view of its own (a rendered match following the
        // ball) is drawn through it.
        let calib = frame.calibration.as_deref().or(settings.calibration.as_ref());
        let what = What {
            index: &self.index,
            log: &self.log,
            filter: &self.filter,
            threshold: self.threshold,
            above: &self.above,
            picture_shapes: self.picture_shapes,
        };
        // Without a calibration only the shapes in the picture's pixels.
        let draw = toggles.overlay;
        if beside {
            let (masker, mask, step) = (&mut self.masker, &mut self.mask, &plan.mask);
            let band = &mut self.band;
            let (masked, took) = std::thread::scope(|s| {
                let job = s.spawn(move || {
                    let t = Instant::now();
                    let r = masker.compute_step(&picture, time, step, mask);
                    (r, t.elapsed())
                });
                if draw {
                    band.draw(&what, calib, log_time, &mut stats);
                }
                job.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            masked.map_err(|source| self.mask_error(time, source))?;
            draw::check_mask_size(&self.mask, w, h).map_err(draw_err)?;
            stats.mask_time += took;
        } else if draw {
            self.band.draw(&what, calib, log_time, &mut stats);
        }

        if let Some(margin) = margin_of_windows {
            let t = Instant::now();
            if !self.band.raised.is_empty() {
                // What hides a raised drawing is judged from where things
                // touch the floor below it: the whole mask is needed.
                self.whole_last = true;
                if only_drawn.is_some() {
                    self.masker
                        .compute_step(&picture, time, &plan.mask, &mut self.mask)
                        .map_err(|source| self.mask_error(time, source))?;
                }
            } else if self.band.overlay.is_empty() {
                self.whole_last = false;
            } else if self.whole_last && self.plans_skipped + 1 < REPLAN_EVERY {
                // Windows cost more than the whole picture on the last
                // frame planned, and drawings move little from one frame
                // to the next: the whole mask again, unplanned (the same
                // pixels either way), planned anew every few frames.
                self.plans_skipped += 1;
                if only_drawn.is_some() {
                    self.masker
                        .compute_step(&picture, time, &plan.mask, &mut self.mask)
                        .map_err(|source| self.mask_error(time, source))?;
                }
            } else {
                self.plans_skipped = 0;
                let overlay = &self.band.overlay;
                plan_cores(|f| overlay.for_each_span(f), w, h, margin, &mut self.cores);
                self.whole_last = self.masker.masks_whole_for(&self.cores, w, h);
                if only_drawn.is_some() {
                    self.masker
                        .compute_step_in(&picture, time, &plan.mask, &self.cores, &mut self.mask)
                        .map_err(|source| self.mask_error(time, source))?;
                }
            }
            if only_drawn.is_some() && self.mask.dim() != (h, w) {
                // Nothing was masked (nothing drawn): a mask of the
                // frame's size for what follows.
                self.mask.fill(w, h, true);
            }
            draw::check_mask_size(&self.mask, w, h).map_err(draw_err)?;
            stats.mask_time += t.elapsed();
        }

        let own_mask = frame.mask.is_some() && settings.mask.takes_source_masks();
        if (toggles.floor_mask || toggles.tint) && !own_mask {
            stats.mask_doubt = self.masker.doubt();
        }

        let t3 = Instant::now();
        let floor_mask = toggles.floor_mask;
        let unit = &self.log.header.world_unit;
        let shows = toggles.tint || self.band.layers().iter().any(|l| !l.is_empty());
        self.drew_last = shows;
        if shows && frame.full_range_planes() {
            // Drawn in RGB: the planes no longer show the picture.
            frame.yuv = None;
        }
        match &mut frame.yuv {
            Some(yuv) => {
                // Drawn in the planes; nothing to do where nothing shows.
                if shows {
                    let mut planes = yuv
                        .draw_planes()
                        .map_err(|message| PipelineError::Planes { time, message })?;
                    let mut canvas = Canvas::Yuv(&mut planes);
                    if toggles.tint {
                        canvas.tint(&self.mask).map_err(draw_err)?;
                    }
                    composite_layers(&mut self.band, &self.mask, unit, &mut canvas, calib, floor_mask)
                        .map_err(draw_err)?;
                }
            }
            None => {
                let mut canvas = Canvas::Rgb(&mut frame.image);
                if toggles.tint {
                    canvas.tint(&self.mask).map_err(draw_err)?;
                }
                composite_layers(&mut self.band, &self.mask, unit, &mut canvas, calib, floor_mask)
                    .map_err(draw_err)?;
            }
        }
        stats.composite_time = t3.elapsed();
        Ok(stats)
    }

    /// The last processed frame's drawings alone, as they were composited
    /// onto its picture (hidden where the floor mask hid them), over
    /// nothing: straight (not premultiplied) RGBA rows into `out`, for an
    /// overlay composited elsewhere (OBS). `frame_calibration` is the
    /// frame's own calibration, when it had one. The layers are composited
    /// over black and over white, which gives each pixel's colour and
    /// coverage exactly (compositing is linear in what is under it), up
    /// to rounding.
    pub fn drawings_rgba(
        &mut self,
        frame_calibration: Option<&crate::calib::Calibration>,
        out: &mut Vec<u8>,
    ) -> Result<(), DrawError> {
        let Some(settings) = &self.applied else {
            out.clear();
            return Ok(());
        };
        let (w, h) = (self.band.overlay.width(), self.band.overlay.height());
        let calib = frame_calibration.or(settings.calibration.as_ref());
        let floor_mask = settings.toggles.floor_mask;
        let (mut black, mut white) = std::mem::take(&mut self.canvases);
        for (c, v) in [(&mut black, 0u8), (&mut white, 255u8)] {
            if c.dim() == (h, w, 3) {
                c.fill(v);
            } else {
                *c = RgbImage::from_elem((h, w, 3), v);
            }
        }
        let unit = &self.log.header.world_unit;
        let done = composite_layers(
            &mut self.band,
            &self.mask,
            unit,
            &mut Canvas::Rgb(&mut black),
            calib,
            floor_mask,
        )
        .and_then(|()| {
            composite_layers(
                &mut self.band,
                &self.mask,
                unit,
                &mut Canvas::Rgb(&mut white),
                calib,
                floor_mask,
            )
        });
        band::unmix(&black, &white, out);
        self.canvases = (black, white);
        done
    }

    fn mask_error(&self, time: f64, source: MaskError) -> PipelineError {
        PipelineError::Mask {
            time,
            masker: self.masker.name().to_owned(),
            source,
        }
    }

    /// The floor mask of the last processed frame (all floor when masking
    /// is off). With the floor mask on and the tint off, a masker that
    /// can ([`Masker::window_margin`]) computes it only where the overlay
    /// was drawn; elsewhere it holds anything.
    pub fn last_mask(&self) -> &FloorMask {
        &self.mask
    }

    /// The overlay of the last processed frame (premultiplied RGBA).
    pub fn overlay(&self) -> &Overlay {
        &self.band.overlay
    }

    /// The log drawn.
    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    /// The time index of the log (nearest frames, next and previous times).
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// Name of the current masker.
    pub fn masker_name(&self) -> &str {
        self.masker.name()
    }

    /// Checks up front that the masker fits a video of this size and frame
    /// count (a mask image or mask video of another size is an error).
    pub fn check_video(
        &self,
        width: usize,
        height: usize,
        frame_count: Option<u64>,
    ) -> Result<(), MaskError> {
        self.masker.check_video(width, height, frame_count)
    }

    /// Tells the masker that playback jumped (it forgets per-frame state).
    pub fn reset(&mut self) {
        self.masker.reset();
    }

    /// The compiled entity and level filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// How far (seconds) the nearest instantaneous frame may be from the
    /// log time and still be shown.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

/// Composites what `band` holds for the last frame onto `canvas`: the
/// floor layer through the floor `mask` (when `floor_mask`), the raised
/// shapes hidden by what stands in front of them (standing things as
/// high as the default in the log's `world_unit`), then what goes over
/// everything.
fn composite_layers(
    band: &mut Band,
    mask: &FloorMask,
    world_unit: &str,
    canvas: &mut Canvas<'_, '_>,
    calib: Option<&crate::calib::Calibration>,
    floor_mask: bool,
) -> Result<(), DrawError> {
    if !band.overlay.is_empty() {
        canvas.composite(&band.overlay, floor_mask.then_some(mask))?;
    }
    let standing =
        draw::occlude::DEFAULT_STANDING_HEIGHT_M / crate::calib::unit::metres_per(world_unit).unwrap_or(1e-3);
    band.composite_raised(canvas, floor_mask.then_some(mask), calib, standing)?;
    if !band.above_overlay.is_empty() {
        canvas.composite(&band.above_overlay, None)?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
