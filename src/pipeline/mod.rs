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
pub mod settings;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::draw::{self, Canvas, DrawError, Overlay, SkipReason};
use crate::image::RgbImage;
use crate::log::{Log, LogError};
use crate::mask::window::{Rect, plan_cores};
use crate::mask::{FloorMask, MaskError, MaskStep, Masker, NoMask};
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
}

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
        problem.map_or(Ok(()), Err)
    }

    /// Draws `log` (indexed by `index`) from now on, with the same settings
    /// and the mask's state kept: for logs that grow while frames are drawn
    /// (a live run). The entity filter is compiled again against the new
    /// log, leniently: a name the log does not know yet is not an error,
    /// as it may come later.
    pub fn set_log(&mut self, log: Arc<Log>, index: Arc<Index>) {
        self.picture_shapes = log.has_picture_shapes();
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
            } else {
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

        let t3 = Instant::now();
        let floor_mask = toggles.floor_mask;
        let unit = &self.log.header.world_unit;
        match &mut frame.yuv {
            Some(yuv) => {
                // Drawn in the planes; nothing to do where nothing shows.
                let shows = toggles.tint || self.band.layers().iter().any(|l| !l.is_empty());
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
pub(crate) mod tests {
    use super::*;
    use crate::calib::Calibration;
    use crate::geom::Vec2;
    use crate::image::{FLOOR, MaskImage, RgbImage};
    use crate::log::{FrameTime, Primitive, Rgba, Shape, Style};
    use crate::mask::MaskSettings;
    use crate::select::FilterSpec;
    use crate::video::Picture;
    use crate::video::TimeMap;

    pub(crate) fn identity() -> Calibration {
        Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap()
    }

    pub(crate) fn dot_log() -> Log {
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

    /// Identity calibration, log time = video time + 10, threshold 0.3 s.
    pub(crate) fn settings() -> DrawSettings {
        DrawSettings {
            calibration: Some(identity()),
            time: TimeMap::new(10.0),
            instant_threshold: InstantThreshold::Seconds(0.3),
            mask: MaskSettings::None,
            ..DrawSettings::default()
        }
    }

    pub(crate) fn frame(t: f64) -> SourceFrame {
        SourceFrame::new(0, t, RgbImage::zeros((40, 80, 3)))
    }

    /// A masker that calls the left half foreground.
    pub(crate) struct LeftHalf;
    impl Masker for LeftHalf {
        fn name(&self) -> &str {
            "left-half"
        }
        fn compute(&mut self, frame: &Picture<'_>, _t: f64, out: &mut FloorMask) -> Result<(), MaskError> {
            let (w, h) = frame.size();
            out.set_pixels(&MaskImage::from_shape_fn((h, w), |(_, x)| {
                if x < w / 2 { 0 } else { FLOOR }
            }));
            Ok(())
        }
    }

    fn left_half_pipeline() -> Pipeline {
        Pipeline::new(Arc::new(dot_log()), &settings())
            .unwrap()
            .with_masker(Box::new(LeftHalf))
    }

    #[test]
    fn offset_selects_the_frame_and_mask_hides_it() {
        let mut p = left_half_pipeline();
        // Video 0 s → log 10 s: the circle at x = 20 is on the masked half.
        let mut f = frame(0.0);
        let s = p.process(&mut f).unwrap();
        assert_eq!((s.primitives, s.drawn, s.skipped), (1, 1, 0));
        assert!(f.image.iter().all(|&v| v == 0));
        assert_eq!(p.overlay().pixel(20, 20), [255, 0, 0, 255]);
        // Video 1 s → log 11 s: the circle at x = 60 is on the floor half.
        let mut f = frame(1.0);
        let s = p.process(&mut f).unwrap();
        assert_eq!(s.log_time, LogTime(11.0));
        assert_eq!(f.image[[20, 60, 0]], 255);
        assert_eq!(p.overlay().pixel(20, 20), [0; 4]);
    }

    /// A session's field cuts the mask to its region; an unknown one is
    /// an error that names it.
    #[test]
    fn a_field_preset_is_checked_and_used() {
        let mut p = left_half_pipeline();
        let mut s = settings();
        s.field = Some("moon".into());
        let e = crate::error::chain(&p.configure(&s).unwrap_err());
        assert!(e.contains("moon"), "{e}");
        s.field = Some("football".into());
        s.mask = MaskSettings::default();
        // A camera that sees the pitch (105 × 68 m in mm) as a speck far
        // beyond this small picture: nothing in the picture is floor.
        s.calibration = Some(
            Calibration::from_homography([[1e-4, 0.0, 1000.0], [0.0, 1e-4, 1000.0], [0.0, 0.0, 1.0]])
                .unwrap(),
        );
        // (The pipeline masks only where it draws: the masker it builds is
        // asked for the whole mask.)
        let whole = |s: &DrawSettings| {
            let mut m = with_field(s.mask.build().unwrap(), s).unwrap();
            let mut out = FloorMask::new();
            m.compute(&Picture::Rgb(&frame(0.0).image), 0.0, &mut out)
                .unwrap();
            out.to_image()
        };
        assert!(whole(&s).iter().all(|&v| v != FLOOR));
        let mut p = Pipeline::new(Arc::new(dot_log()), &s).unwrap();
        let mut f = frame(0.0);
        p.process(&mut f).unwrap();
        // The same field named by the calibration file instead.
        let named = s.calibration.clone().map(|c| c.with_field("football".into()));
        s.field = None;
        s.calibration = None;
        let mut p = Pipeline::new(Arc::new(dot_log()), &s).unwrap();
        let mut f = frame(0.0);
        p.process(&mut f).unwrap();
        let floor_without = p.last_mask().floor_pixels();
        assert!(floor_without > 0, "without a field the picture has floor");
        s.calibration = named;
        p.configure(&s).unwrap();
        let mut f = frame(0.0);
        p.process(&mut f).unwrap();
        assert!(whole(&s).iter().all(|&v| v != FLOOR));
    }

    /// An entity drawn above the mask shows where the mask hides the
    /// rest.
    #[test]
    fn entities_above_the_mask_are_not_hidden() {
        let mut p = left_half_pipeline();
        let mut s = settings();
        s.filter.above_mask.insert("ball".into());
        p.configure(&s).unwrap();
        // The circle at x = 20 is on the masked half, and shows.
        let mut f = frame(0.0);
        p.process(&mut f).unwrap();
        assert_eq!(f.image[[20, 20, 0]], 255);
        // Marked for the encoder too.
        s.filter.above_mask.clear();
        p.configure(&s).unwrap();
        let mut f = frame(0.0);
        p.process(&mut f).unwrap();
        assert!(f.image.iter().all(|&v| v == 0), "hidden again");
    }

    #[test]
    fn toggles_switch_the_mask_and_the_tint() {
        // Without the floor mask the drawing shows everywhere.
        let mut p = left_half_pipeline();
        let mut s = settings();
        s.toggles.floor_mask = false;
        p.configure(&s).unwrap();
        let mut f = frame(0.0);
        p.process(&mut f).unwrap();
        assert_eq!(f.image[[20, 20, 0]], 255);
        assert_eq!(p.last_mask().floor_pixels(), 40 * 80);
        // Tint only: the floor half is pink, nothing is drawn.
        let mut p = left_half_pipeline();
        s.toggles = DrawToggles {
            overlay: false,
            floor_mask: true,
            tint: true,
            ..DrawToggles::default()
        };
        p.configure(&s).unwrap();
        let mut f = frame(0.0);
        let st = p.process(&mut f).unwrap();
        assert_eq!(st.primitives, 0);
        assert_eq!(f.image[[5, 5, 0]], 0);
        assert!(f.image[[5, 70, 0]] > 50);
    }

    #[test]
    fn a_source_clock_and_mask_are_used() {
        let mut p = Pipeline::new(Arc::new(dot_log()), &settings()).unwrap();
        // The frame at 5 s shows clock 1 s (a stoppage): log time 11 s.
        let mut f = frame(5.0);
        f.clock = Some(1.0);
        f.mask = Some(MaskImage::from_shape_fn(
            (40, 80),
            |(_, x)| if x < 70 { 0 } else { FLOOR },
        ));
        let mut s = settings();
        s.mask = MaskSettings::Auto;
        p.configure(&s).unwrap();
        let st = p.process(&mut f).unwrap();
        assert_eq!(st.log_time, LogTime(11.0));
        assert_eq!(f.image[[20, 60, 0]], 0, "hidden by the source's own mask");
        assert!(p.last_mask().is_floor(75, 0));
        // `source` without masks from the source is an error.
        s.mask = MaskSettings::Source;
        p.configure(&s).unwrap();
        let e = p.process(&mut frame(1.0)).unwrap_err();
        assert!(matches!(e, PipelineError::NoSourceMask { .. }), "{e}");
    }

    #[test]
    fn bad_time_and_missing_calibration() {
        let mut s = settings();
        s.calibration = None;
        let mut p = Pipeline::new(Arc::new(dot_log()), &s).unwrap();
        let st = p.process(&mut frame(0.0)).unwrap();
        assert!(!st.calibrated && st.primitives == 0);
        s.time = TimeMap::new(f64::NAN);
        p.configure(&s).unwrap();
        let e = p.process(&mut frame(1.5)).unwrap_err().to_string();
        assert!(e.contains("1.500") && e.contains("offset"), "{e}");
    }

    #[test]
    fn pipelines_can_move_to_worker_threads() {
        const _: () = {
            const fn is_send<T: Send>() {}
            is_send::<Pipeline>();
        };
        let p = left_half_pipeline();
        let mut forked = p.fork().unwrap();
        assert!(Arc::ptr_eq(p.log(), forked.log()) && Arc::ptr_eq(p.index(), forked.index()));
        let mut p = p;
        let stats = std::thread::spawn(move || p.process(&mut frame(0.0)).unwrap())
            .join()
            .unwrap();
        assert_eq!(stats.drawn, 1);
        // The fork draws the same, through a masker of its own built from
        // the settings.
        let mut f = frame(1.0);
        let stats = forked.process(&mut f).unwrap();
        assert_eq!((stats.drawn, f.image[[20, 60, 0]]), (1, 255));
        assert_eq!(forked.masker_name(), "none");
    }

    #[test]
    fn tiny_frames_and_changing_sizes() {
        let mut p = Pipeline::new(Arc::new(dot_log()), &settings()).unwrap();
        for (h, w) in [(0, 0), (1, 1), (0, 7), (40, 80), (3, 2), (40, 80)] {
            let mut f = SourceFrame::new(0, 0.0, RgbImage::zeros((h, w, 3)));
            let s = p.process(&mut f).unwrap();
            assert_eq!(s.primitives, 1);
            assert_eq!(p.last_mask().dim(), (h, w));
        }
        // A frame not in standard layout is refused, not misread.
        let fortran = RgbImage::zeros((3, 80, 40)).reversed_axes();
        assert_eq!(fortran.dim(), (40, 80, 3));
        let e = p.process(&mut SourceFrame::new(0, 0.0, fortran)).unwrap_err();
        let e = crate::error::chain(&e);
        assert!(e.contains("layout") && e.contains("0.000 s"), "{e}");
    }

    #[test]
    fn frames_drawn_on_their_planes_are_the_same_converted_late_or_on_reading() {
        use crate::mask::synth::{SynthOptions, generate};
        use crate::video::{Decoder, Encoder, EncoderSettings};
        let dir = tempfile::tempdir().unwrap();
        let video = dir.path().join("in.mp4");
        let encoding = EncoderSettings {
            crf: 10,
            preset: "ultrafast".into(),
            ..Default::default()
        };
        let mut e = Encoder::create(&video, 80, 40, &encoding).unwrap();
        for i in 0..4u8 {
            let f = generate(&SynthOptions {
                width: 80,
                height: 40,
                carpet: [20 + 5 * i, 110 + 6 * i, 30],
                ..Default::default()
            });
            e.push(&f.frame, f64::from(i) * 0.2).unwrap();
        }
        e.finish().unwrap();
        let s = DrawSettings {
            mask: MaskSettings::default(),
            ..settings()
        };
        let log = Arc::new(dot_log());
        let mut drawn = Vec::new();
        for defer in [false, true] {
            let mut d = Decoder::open(&video).unwrap();
            d.set_keep_yuv(true);
            d.set_defer_rgb(defer);
            let mut leader = Pipeline::new(Arc::clone(&log), &s).unwrap();
            let mut worker = leader.fork().unwrap();
            let mut f = SourceFrame::empty();
            let mut frames = Vec::new();
            while d.read_into(&mut f).unwrap() {
                assert_eq!(f.rgb_pending(), defer);
                let plan = leader.prepare(&mut f).unwrap();
                let stats = worker.process_planned(&mut f, &plan).unwrap();
                // Drawn on the planes: the RGB picture is made from them.
                let drawn_on = f.yuv.as_ref().unwrap().is_drawn();
                assert_eq!(drawn_on, stats.primitives > 0, "at {}", f.time);
                assert_eq!(f.rgb_pending(), defer || drawn_on);
                f.finish_rgb();
                frames.push((plan, drawn_on, f.image.clone()));
            }
            drawn.push(frames);
        }
        assert_eq!(drawn[0].len(), 4);
        assert!(drawn[0].iter().any(|f| f.1) && drawn[0].iter().any(|f| !f.1));
        assert_eq!(drawn[0], drawn[1]);
    }

    #[test]
    fn planned_in_order_and_drawn_anywhere_equals_drawn_in_order() {
        use crate::mask::synth::{SynthOptions, generate};
        let s = DrawSettings {
            mask: MaskSettings::default(),
            ..settings()
        };
        let log = Arc::new(dot_log());
        let frames: Vec<SourceFrame> = (0..6)
            .map(|i| {
                let carpet = [20 + 4 * i as u8, 110 + 6 * i as u8, 30];
                let f = generate(&SynthOptions {
                    width: 80,
                    height: 40,
                    carpet,
                    ..Default::default()
                });
                SourceFrame::new(i, i as f64 * 0.2, f.frame)
            })
            .collect();
        let mut one = Pipeline::new(Arc::clone(&log), &s).unwrap();
        let mut leader = Pipeline::new(Arc::clone(&log), &s).unwrap();
        let mut workers = [leader.fork().unwrap(), leader.fork().unwrap()];
        for (i, f) in frames.iter().enumerate() {
            let mut want = f.clone();
            one.process(&mut want).unwrap();
            let mut got = f.clone();
            let plan = leader.prepare(&mut got).unwrap();
            // Backwards through the workers, so neither sees every frame.
            workers[(i / 2) % 2].process_planned(&mut got, &plan).unwrap();
            assert_eq!(got.image, want.image, "frame {i}");
        }
    }

    /// The adaptive masker computing whole masks only.
    struct WholeMasks(crate::mask::AdaptiveMasker);
    impl Masker for WholeMasks {
        fn name(&self) -> &str {
            "whole"
        }
        fn compute(&mut self, frame: &Picture<'_>, t: f64, out: &mut FloorMask) -> Result<(), MaskError> {
            self.0.compute(frame, t, out)
        }
        fn advance(&mut self, frame: &Picture<'_>, t: f64) -> Result<MaskStep, MaskError> {
            self.0.advance(frame, t)
        }
        fn compute_step(
            &mut self,
            frame: &Picture<'_>,
            t: f64,
            step: &MaskStep,
            out: &mut FloorMask,
        ) -> Result<(), MaskError> {
            self.0.compute_step(frame, t, step, out)
        }
    }

    /// A whole mask computed beside the drawing (the viewer's parallel
    /// mode) gives the same frames as masking in turn, bit for bit, as the
    /// pipeline switches between whole masks (drawings all over) and
    /// windows (one small drawing) from frame to frame: with fills, text,
    /// thick lines, an entity drawn above the mask, and the tint on and off.
    #[test]
    fn masking_beside_the_drawing_equals_masking_in_turn() {
        use crate::mask::synth::{SynthOptions, generate};
        let mut log = Log::new();
        let e = log.entities.intern("things");
        let labels = log.entities.intern("labels");
        let prim = |shape, style| Primitive {
            shape,
            style,
            entity: e,
            level: 0,
        };
        let magenta = Style::color(Rgba::from_rgb(0xff00ff));
        let circle = |x: f64, y: f64, r: f64| {
            prim(
                Shape::Circle {
                    center: Vec2::new(x, y),
                    radius: r,
                },
                magenta,
            )
        };
        for k in 0..8 {
            let prims: Vec<_> = if k % 2 == 0 {
                vec![circle(60.0 + 10.0 * k as f64, 80.0, 6.0)]
            } else {
                let mut v: Vec<_> = (0..40)
                    .map(|i| circle((i % 8) as f64 * 30.0 + 15.0, (i / 8) as f64 * 32.0 + 16.0, 12.0))
                    .collect();
                v.push(prim(
                    Shape::Rectangle {
                        center: Vec2::new(100.0 + k as f64, 79.3),
                        size: Vec2::new(70.0, 33.0),
                        orientation: 0.3,
                    },
                    Style {
                        fill: Some(Rgba(0x20c0_ff80)),
                        ..Style::color(Rgba::from_rgb(0xffff00))
                    },
                ));
                v.push(prim(
                    Shape::Line {
                        start: Vec2::new(5.0, 150.0),
                        end: Vec2::new(230.0, 3.0 + k as f64),
                    },
                    Style {
                        thickness: 7.0,
                        ..Style::color(Rgba(0xff8000c0))
                    },
                ));
                v.push(Primitive {
                    entity: labels,
                    ..prim(
                        Shape::Text {
                            anchor: Vec2::new(20.0, 86.0),
                            text: "split".into(),
                            size: 14.0,
                        },
                        Style::color(Rgba::from_rgb(0xffffff)),
                    )
                });
                v
            };
            log.push_frame(FrameTime::Instant(10.0 + 0.5 * k as f64), prims);
        }
        let log = Arc::new(log);
        for tint in [false, true] {
            let mut s = DrawSettings {
                mask: MaskSettings::default(),
                ..settings()
            };
            s.toggles.tint = tint;
            s.filter.above_mask = ["labels".to_string()].into();
            let mut one = Pipeline::new(Arc::clone(&log), &s).unwrap();
            let mut beside = Pipeline::new(Arc::clone(&log), &s)
                .unwrap()
                .with_parallel_mask(true);
            let mut whole_seen = [false; 2];
            for k in 0..8u64 {
                let synth = generate(&SynthOptions {
                    width: 240,
                    height: 160,
                    seed: 7 + k,
                    ..Default::default()
                });
                let f = SourceFrame::new(k, 0.5 * k as f64, synth.frame);
                let (mut a, mut b) = (f.clone(), f);
                let sa = one.process(&mut a).unwrap();
                let sb = beside.process(&mut b).unwrap();
                assert_eq!((sa.drawn, sa.skipped), (sb.drawn, sb.skipped), "frame {k}");
                assert!(sb.drawn > 0, "frame {k} draws");
                assert!(a.image == b.image, "frame {k}, tint {tint}");
                assert_eq!(one.whole_last, beside.whole_last, "frame {k}");
                whole_seen[usize::from(beside.whole_last)] = true;
            }
            if !tint {
                assert_eq!(whole_seen, [true, true], "both windows and whole masks were used");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        #[test]
        fn masking_where_drawn_equals_masking_whole_frames(
            seed in 0u64..500,
            shapes in proptest::collection::vec((0f64..240.0, 0f64..160.0, 1f64..30.0, proptest::bool::ANY), 0..25),
        ) {
            use crate::mask::synth::{SynthOptions, generate};
            let mut log = Log::new();
            let e = log.entities.intern("things");
            let prims: Vec<_> = shapes
                .iter()
                .map(|&(x, y, r, circle)| Primitive {
                    shape: if circle {
                        Shape::Circle { center: Vec2::new(x, y), radius: r }
                    } else {
                        Shape::Line { start: Vec2::new(x, y), end: Vec2::new(x + 4.0 * r, y - r) }
                    },
                    style: Style::color(Rgba::from_rgb(0xff00ff)),
                    entity: e,
                    level: 0,
                })
                .collect();
            log.push_frame(FrameTime::Instant(10.0), prims);
            let s = DrawSettings { mask: MaskSettings::default(), ..settings() };
            let log = Arc::new(log);
            // Windows however large, so that they are used on small frames.
            let parts = crate::mask::AdaptiveMasker::new(Default::default())
                .unwrap()
                .with_window_share(f64::INFINITY);
            let mut windows = Pipeline::new(Arc::clone(&log), &s).unwrap().with_masker(Box::new(parts));
            let whole = crate::mask::AdaptiveMasker::new(Default::default()).unwrap();
            let mut wholes = Pipeline::new(log, &s).unwrap().with_masker(Box::new(WholeMasks(whole)));
            for i in 0..3u64 {
                let synth = generate(&SynthOptions { width: 240, height: 160, seed: seed + i, ..Default::default() });
                let f = SourceFrame::new(i, i as f64 * 0.02, synth.frame);
                let (mut a, mut b) = (f.clone(), f);
                windows.process(&mut a).unwrap();
                wholes.process(&mut b).unwrap();
                proptest::prop_assert!(a.image == b.image, "frame {}", i);
            }
        }
    }

    #[test]
    fn configure_reports_unknown_names_and_applies_the_rest() {
        let mut p = Pipeline::new(Arc::new(dot_log()), &settings()).unwrap();
        let mut s = settings();
        s.filter = FilterSpec {
            exclude: vec!["nope".into()],
            ..FilterSpec::default()
        };
        s.time = TimeMap::new(9.0);
        let e = p.configure(&s).unwrap_err();
        assert!(crate::error::chain(&e).contains("nope"), "{e}");
        // The unknown name is ignored; the new offset applies.
        let st = p.process(&mut frame(2.0)).unwrap();
        assert_eq!((st.log_time, st.primitives), (LogTime(11.0), 1));
        assert!(p.configure(&s).is_ok(), "reported once, until it changes");
        assert!(
            Pipeline::new(Arc::new(dot_log()), &s).is_err(),
            "export refuses it"
        );
    }
}
