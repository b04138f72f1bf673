//! The background player: decodes and draws frames on a worker thread so
//! the UI thread never waits for a decoder or for the overlay pipeline.
//!
//! The UI sends small requests ("show the frame at t", "step one frame",
//! "new settings", "the pixels around this point") and picks up the newest finished frame from a one-slot
//! outbox; requests that pile up are coalesced, so a busy worker skips to
//! the latest wish instead of queueing stale work. The worker keeps a small
//! ring of decoded frames (stepping back, or changing the filter, redraws
//! from memory instead of decoding again), reads one frame ahead, and while
//! playing draws the next frame before it is asked for.

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::screen::{Picture, planes_of, to_color_image_reduced};

use crate::image::RgbImage;
use crate::pipeline::{DrawSettings, Pipeline, PipelineError};
use crate::video::source::{FrameRing, FrameSource, SourceError, SourceFrame, SourceInfo};

/// What drawing one frame reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessStats {
    /// Primitives drawn onto the frame.
    pub primitives: usize,
    /// Time spent computing the floor mask (part of the processing time).
    pub mask_time: Duration,
    /// Time selecting, projecting and rasterizing primitives.
    pub draw_time: Duration,
    /// Time tinting and compositing onto the frame.
    pub composite_time: Duration,
    /// What makes the frame's floor mask doubtful, when its masker can tell.
    pub mask_doubt: Option<crate::mask::MaskDoubt>,
}

/// Turns a decoded frame into the picture shown: the shared
/// [`Pipeline`], or [`Passthrough`] when there is nothing to draw.
pub trait FrameProcessor: Send {
    /// Applies new settings (called on the worker thread); what can be
    /// applied is, the error says what could not.
    fn configure(&mut self, settings: &DrawSettings) -> Result<(), PipelineError>;

    /// Draws onto `frame`.
    fn process(&mut self, frame: &mut SourceFrame) -> Result<ProcessStats, PipelineError>;

    /// Forgets state carried from frame to frame (called after a seek).
    fn reset(&mut self) {}
}

impl FrameProcessor for Pipeline {
    fn configure(&mut self, settings: &DrawSettings) -> Result<(), PipelineError> {
        Pipeline::configure(self, settings)
    }

    fn process(&mut self, frame: &mut SourceFrame) -> Result<ProcessStats, PipelineError> {
        let st = Pipeline::process(self, frame)?;
        Ok(ProcessStats {
            primitives: st.primitives,
            mask_time: st.mask_time,
            draw_time: st.select_time + st.draw_time,
            composite_time: st.composite_time,
            mask_doubt: st.mask_doubt,
        })
    }

    fn reset(&mut self) {
        Pipeline::reset(self);
    }
}

/// Shows frames as decoded.
#[derive(Debug, Default, Clone, Copy)]
pub struct Passthrough;

impl FrameProcessor for Passthrough {
    fn configure(&mut self, _settings: &DrawSettings) -> Result<(), PipelineError> {
        Ok(())
    }

    fn process(&mut self, _frame: &mut SourceFrame) -> Result<ProcessStats, PipelineError> {
        Ok(ProcessStats::default())
    }
}

/// What went wrong on the player's thread (shown, then playing goes on).
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// The source could not give a frame.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// New settings could not all be applied.
    #[error("overlay settings")]
    Settings(#[source] PipelineError),
    /// A frame could not be drawn.
    #[error("frame {index}")]
    Frame {
        index: u64,
        #[source]
        source: PipelineError,
    },
}

/// Time spent on one frame by the worker.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameTiming {
    /// Decoding (or seeking), zero when the frame came from memory.
    pub decode: Duration,
    /// The overlay pipeline.
    pub process: Duration,
    /// Of which the floor mask (beside the drawing when masked in parallel).
    pub mask: Duration,
    /// Of which selecting and drawing the primitives.
    pub draw: Duration,
    /// Of which compositing onto the frame.
    pub composite: Duration,
    /// Conversion into a texture image.
    pub convert: Duration,
}

impl FrameTiming {
    pub fn total(&self) -> Duration {
        self.decode + self.process + self.convert
    }
}

/// A finished frame, ready to upload.
#[derive(Clone, Debug)]
pub struct Shown {
    pub index: u64,
    /// Presentation time of the frame.
    pub time: f64,
    /// The time that was asked for (the frame is the one shown then).
    pub requested: Option<f64>,
    /// Number of the request answered (see [`Player::show`]).
    pub seq: u64,
    /// Settings generation the frame was drawn with.
    pub generation: u64,
    /// The picture: the video's planes for the GPU, or RGB possibly
    /// reduced to the size it is shown at.
    pub picture: Picture,
    /// Size of the video frame `[width, height]` (image coordinates).
    pub size: [usize; 2],
    pub stats: ProcessStats,
    pub timing: FrameTiming,
    /// Whether the frame is the source's last one.
    pub is_last: bool,
    /// Each image pixel stands for `reduction`² frame pixels.
    pub reduction: usize,
    /// A stand-in shown while the frame asked for is decoded: the keyframe
    /// a far seek decodes first (a video may need a whole group of
    /// pictures decoded to reach the frame itself). The frame asked for
    /// follows.
    pub preview: bool,
}

enum Request {
    Show {
        t: f64,
        playing: bool,
        seq: u64,
        epoch: u64,
    },
    Display([usize; 2]),
    Planes(bool),
    Step(i64),
    Settings(u64, Box<DrawSettings>),
    Patch {
        time: f64,
        x: usize,
        y: usize,
        radius: usize,
    },
    Frame(f64),
    Shutdown,
}

/// Pixels of a frame around a point, as decoded (before anything is
/// drawn on them): see [`Player::request_patch`].
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// Time of the frame they come from.
    pub time: f64,
    /// The pixels (rows × columns × RGB), clipped to the frame; empty when
    /// the frame is no longer in memory or the point is outside it.
    pub pixels: RgbImage,
}

#[derive(Default)]
struct Outbox {
    latest: Option<Shown>,
    /// The frame after the last one handed out, drawn ahead while playing,
    /// with the epoch of the request it follows.
    upcoming: Option<(u64, Shown)>,
    errors: Vec<PlayerError>,
    timings: Vec<FrameTiming>,
    patch: Option<Patch>,
    /// A whole frame as decoded ([`Player::request_frame`]).
    frame: Option<Patch>,
}

/// Handle to the worker thread; dropping it stops the worker.
pub struct Player {
    tx: Sender<Request>,
    outbox: Arc<Mutex<Outbox>>,
    info: SourceInfo,
    generation: u64,
    seq: std::cell::Cell<u64>,
    epoch: std::cell::Cell<u64>,
    handle: Option<JoinHandle<()>>,
}

fn lock(m: &Mutex<Outbox>) -> MutexGuard<'_, Outbox> {
    // A worker that panicked left plain data behind; keep using it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Player {
    /// Starts a worker on `source`; `wake` is called whenever a frame or an
    /// error is ready (the UI asks for a repaint there).
    pub fn spawn(
        source: Box<dyn FrameSource>,
        processor: Box<dyn FrameProcessor>,
        settings: DrawSettings,
        wake: impl Fn() + Send + 'static,
    ) -> std::io::Result<Self> {
        let info = source.info().clone();
        let (tx, rx) = crossbeam_channel::unbounded();
        let outbox = Arc::new(Mutex::new(Outbox::default()));
        let ob = Arc::clone(&outbox);
        let handle = std::thread::Builder::new()
            .name("underlay-player".into())
            .spawn(move || {
                let mut w = Worker::new(source, processor, ob, Box::new(wake));
                w.configure(0, &settings);
                w.run(rx);
            })?;
        Ok(Player {
            tx,
            outbox,
            info,
            generation: 0,
            seq: std::cell::Cell::new(0),
            epoch: std::cell::Cell::new(0),
            handle: Some(handle),
        })
    }

    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// The current settings generation: frames drawn with older settings
    /// carry a smaller one.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Asks for the frame shown at `t`; returns the request's number,
    /// which the answer carries in [`Shown::seq`]. Every request is
    /// answered (the latest of those that pile up), even when the frame
    /// does not change.
    pub fn show(&self, t: f64, playing: bool) -> u64 {
        let seq = self.seq.get() + 1;
        self.seq.set(seq);
        let epoch = self.epoch.get();
        let _ = self.tx.send(Request::Show {
            t,
            playing,
            seq,
            epoch,
        });
        seq
    }

    /// Forgets the frame drawn ahead (call on a seek: it follows the old
    /// position).
    pub fn discard_upcoming(&self) {
        self.epoch.set(self.epoch.get() + 1);
        lock(&self.outbox).upcoming = None;
    }

    /// The frame drawn ahead of the current one while playing, once its
    /// time `≤ until` (then it is due on screen), drawn with the current
    /// settings.
    pub fn take_upcoming(&self, until: f64) -> Option<Shown> {
        let mut ob = lock(&self.outbox);
        let due = ob.upcoming.as_ref().is_some_and(|(e, s)| {
            *e == self.epoch.get() && s.generation == self.generation && s.time <= until
        });
        if due {
            ob.upcoming.take().map(|(_, s)| s)
        } else {
            None
        }
    }

    /// Time of the frame drawn ahead, if one is waiting.
    pub fn upcoming_time(&self) -> Option<f64> {
        let ob = lock(&self.outbox);
        ob.upcoming
            .as_ref()
            .filter(|(e, s)| *e == self.epoch.get() && s.generation == self.generation)
            .map(|(_, s)| s.time)
    }

    /// Asks for the frame `n` frames after (before, when negative) the last
    /// one shown.
    pub fn step(&self, n: i64) {
        let _ = self.tx.send(Request::Step(n));
    }

    /// Asks for the pixels within `radius` of `(x, y)` (a square) of the
    /// frame with time `time` as decoded, without the drawing: the answer
    /// comes in [`take_patch`](Self::take_patch).
    pub fn request_patch(&self, time: f64, x: usize, y: usize, radius: usize) {
        let _ = self.tx.send(Request::Patch { time, x, y, radius });
    }

    /// Asks for the whole frame with time `time` as decoded, without the
    /// drawing (snapping a calibration to its lines): the answer comes in
    /// [`take_decoded`](Self::take_decoded).
    pub fn request_frame(&self, time: f64) {
        let _ = self.tx.send(Request::Frame(time));
    }

    /// The frame asked for last, once it is ready (empty pixels when it is
    /// no longer in memory).
    pub fn take_decoded(&self) -> Option<Patch> {
        lock(&self.outbox).frame.take()
    }

    /// The patch asked for last, once it is ready.
    pub fn take_patch(&self) -> Option<Patch> {
        lock(&self.outbox).patch.take()
    }

    /// Tells the worker how many pixels the frame covers on screen, so it
    /// can hand over a smaller picture when the video is shown reduced.
    pub fn set_display_size(&self, size: [usize; 2]) {
        let _ = self.tx.send(Request::Display(size));
    }

    /// Whether frames that have YUV planes are handed over as those planes
    /// ([`Picture::Planes`], for a display converting them on the GPU)
    /// rather than as RGB. Off until asked; frames without planes are RGB
    /// either way.
    pub fn set_planes(&self, on: bool) {
        let _ = self.tx.send(Request::Planes(on));
    }

    /// Draws from now on with `settings`.
    pub fn configure(&mut self, settings: DrawSettings) {
        self.generation += 1;
        let _ = self
            .tx
            .send(Request::Settings(self.generation, Box::new(settings)));
    }

    /// The newest finished frame, if one arrived since the last call.
    pub fn take_frame(&self) -> Option<Shown> {
        lock(&self.outbox).latest.take()
    }

    /// Errors reported since the last call.
    pub fn take_errors(&self) -> Vec<PlayerError> {
        std::mem::take(&mut lock(&self.outbox).errors)
    }

    /// Per-frame timings of the frames drawn since the last call.
    pub fn take_timings(&self) -> Vec<FrameTiming> {
        std::mem::take(&mut lock(&self.outbox).timings)
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.tx.send(Request::Shutdown);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// What the worker was last asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    /// The frame shown at this time (a request from the UI, answered with
    /// its number).
    Time(f64),
    /// `n` frames after (before, when negative) the frame with time `from`.
    Step { from: f64, n: i64 },
    /// The frame with exactly this time (a step, once resolved).
    Frame(f64),
}

/// Frames are told apart by their presentation time (indices from a
/// decoder are estimates after a seek, times are exact).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sent {
    time: f64,
    generation: u64,
    reduction: usize,
    /// Handed over as planes (shown at any size as they are).
    planes: bool,
}

struct Worker {
    processor: Box<dyn FrameProcessor>,
    outbox: Arc<Mutex<Outbox>>,
    wake: Box<dyn Fn() + Send>,
    info: SourceInfo,
    /// Consecutive decoded frames; the source is positioned after the last.
    ring: FrameRing,
    /// The ring's seek count when last looked at.
    ring_seeks: u64,
    generation: u64,
    /// Pixels covered on screen, when known.
    display: Option<[usize; 2]>,
    /// Hand over frames with planes as planes.
    planes: bool,
    /// The last frame handed out.
    sent: Option<Sent>,
    /// The next frame, drawn ahead of time while playing.
    ahead: Option<Shown>,
    /// The last frame handed out, to hand out again without redrawing.
    last: Option<Shown>,
    target: Option<Target>,
    requested: Option<f64>,
    /// Number of the latest show request.
    seq: u64,
    /// Epoch of the latest show request (see [`Player::discard_upcoming`]).
    epoch: u64,
    playing: bool,
    /// The show request (its number) a keyframe was shown for while its
    /// frame is decoded.
    previewed: Option<u64>,
    /// The copy of a ring frame that is drawn onto, kept for its buffers.
    scratch: SourceFrame,
}

impl Worker {
    fn new(
        source: Box<dyn FrameSource>,
        processor: Box<dyn FrameProcessor>,
        outbox: Arc<Mutex<Outbox>>,
        wake: Box<dyn Fn() + Send>,
    ) -> Self {
        let info = source.info().clone();
        Worker {
            processor,
            outbox,
            wake,
            info,
            ring: FrameRing::new(source),
            ring_seeks: 0,
            generation: 0,
            display: None,
            planes: false,
            sent: None,
            ahead: None,
            last: None,
            target: None,
            requested: None,
            seq: 0,
            epoch: 0,
            playing: false,
            previewed: None,
            scratch: SourceFrame::empty(),
        }
    }

    fn report(&self, e: PlayerError) {
        let mut ob = lock(&self.outbox);
        if ob.errors.len() < 100 {
            ob.errors.push(e);
        }
        drop(ob);
        (self.wake)();
    }

    fn configure(&mut self, generation: u64, settings: &DrawSettings) {
        self.generation = generation;
        self.ahead = None;
        if let Err(e) = self.processor.configure(settings) {
            self.report(PlayerError::Settings(e));
        }
    }

    /// Copies the frame asked for out of the ring, as decoded.
    fn whole_frame(&mut self, time: f64) {
        let frame = self.ring.position(time).and_then(|p| self.ring.get(p));
        let pixels = frame.map_or_else(|| RgbImage::zeros((0, 0, 3)), |f| decoded_rgb(f).into_owned());
        lock(&self.outbox).frame = Some(Patch { time, pixels });
        (self.wake)();
    }

    /// Cuts the patch asked for out of the frame in the ring, as decoded.
    fn patch(&mut self, time: f64, x: usize, y: usize, radius: usize) {
        let frame = self.ring.position(time).and_then(|p| self.ring.get(p));
        let pixels = match frame {
            Some(f) => crop(&decoded_rgb(f), x, y, radius),
            None => RgbImage::zeros((0, 0, 3)),
        };
        lock(&self.outbox).patch = Some(Patch { time, pixels });
        (self.wake)();
    }

    fn run(&mut self, rx: Receiver<Request>) {
        loop {
            // Wait for work only when there is nothing left to do.
            let idle = self.is_done() && (!self.playing || self.ahead.is_some() || self.ring.at_end());
            let first = if idle {
                match rx.recv() {
                    Ok(r) => Some(r),
                    Err(_) => return,
                }
            } else {
                None
            };
            let mut steps = 0i64;
            for req in first.into_iter().chain(rx.try_iter()) {
                match req {
                    Request::Shutdown => return,
                    Request::Show {
                        t,
                        playing,
                        seq,
                        epoch,
                    } => {
                        self.target = Some(Target::Time(t));
                        self.requested = Some(t);
                        self.seq = seq;
                        if epoch != self.epoch {
                            self.epoch = epoch;
                            self.ahead = None;
                        }
                        self.playing = playing;
                        steps = 0;
                    }
                    Request::Step(n) => {
                        steps = steps.saturating_add(n);
                        self.playing = false;
                    }
                    Request::Settings(g, s) => self.configure(g, &s),
                    Request::Patch { time, x, y, radius } => self.patch(time, x, y, radius),
                    Request::Frame(time) => self.whole_frame(time),
                    Request::Display(d) => {
                        self.display = Some(d);
                        if self
                            .ahead
                            .as_ref()
                            .is_some_and(|a| !self.fits(a.reduction, a.picture.is_planes()))
                        {
                            self.ahead = None;
                        }
                    }
                    Request::Planes(on) => {
                        if on != self.planes {
                            // Everything handed over so far is of the other kind.
                            self.planes = on;
                            self.ahead = None;
                            self.sent = None;
                        }
                    }
                }
            }
            if steps != 0 {
                let from = self.last.as_ref().map_or(self.info.start, |l| l.time);
                self.target = Some(Target::Step { from, n: steps });
                self.requested = None;
            }
            if !self.is_done() {
                self.produce();
            } else if self.playing && self.ahead.is_none() && !self.ring.at_end() {
                self.draw_ahead();
            }
        }
    }

    /// How much to reduce frames for the screen: the largest factor of 1,
    /// 2 or 4 that keeps at least the displayed number of pixels. Even
    /// factors, so that a video's picture is made straight from its
    /// planes' 2×2 blocks ([`reduced_from_planes`]).
    fn reduction(&self) -> usize {
        let Some([dw, dh]) = self.display else {
            return 1;
        };
        let k = (self.info.width / dw.max(1)).min(self.info.height / dh.max(1));
        match k {
            0 | 1 => 1,
            2 | 3 => 2,
            _ => 4,
        }
    }

    /// Whether a picture handed over (reduced by `reduction`, or `planes`)
    /// is right for the display as it is now.
    fn fits(&self, reduction: usize, planes: bool) -> bool {
        if planes {
            self.planes
        } else {
            reduction == self.reduction()
        }
    }

    /// Whether the last request has been answered with current settings.
    fn is_done(&self) -> bool {
        let Some(target) = self.target else {
            return true;
        };
        let Some(sent) = self.sent else {
            return false;
        };
        if sent.generation != self.generation || !self.fits(sent.reduction, sent.planes) {
            return false;
        }
        match target {
            Target::Time(t) => {
                self.ring.find(t).and_then(|p| self.ring.get(p)).map(|f| f.time) == Some(sent.time)
                    && self.last.as_ref().is_some_and(|l| l.seq == self.seq)
            }
            Target::Frame(t) => sent.time == t,
            Target::Step { .. } => false,
        }
    }

    /// After the ring read or sought: a seek forgets what was drawn ahead
    /// and the processor's state carried between frames; errors are
    /// reported.
    fn after_ring(&mut self) {
        if self.ring.seeks() != self.ring_seeks {
            self.ring_seeks = self.ring.seeks();
            self.ahead = None;
            self.processor.reset();
        }
        for e in self.ring.take_errors() {
            self.report(e.into());
        }
    }

    fn produce(&mut self) {
        let Some(target) = self.target else {
            return;
        };
        let t0 = Instant::now();
        if let Target::Time(t) = target
            && self.previewed != Some(self.seq)
        {
            if self.ring.is_far(t) {
                self.previewed = Some(self.seq);
                if self.preview(t, t0) {
                    return;
                }
            } else if self.ring.reads_on_far(t) {
                self.previewed = Some(self.seq);
                if self.preview_on_the_way(t, t0) {
                    return;
                }
            }
        }
        let pos = match target {
            Target::Time(t) | Target::Frame(t) => self.ring.locate_time(t),
            Target::Step { from, n } => self.ring.locate_step(from, n),
        };
        self.after_ring();
        let Some(pos) = pos else {
            // Nothing to show; remember that so we do not spin.
            self.target = None;
            return;
        };
        let decode = t0.elapsed();
        let Some(time) = self.ring.get(pos).map(|f| f.time) else {
            self.target = None;
            return;
        };
        if let Target::Step { .. } = target {
            self.target = Some(Target::Frame(time));
        }
        let same = self.sent.is_some_and(|s| {
            s.time == time && s.generation == self.generation && self.fits(s.reduction, s.planes)
        });
        if same && let Some(last) = &self.last {
            let again = Shown {
                requested: self.requested,
                seq: self.seq,
                timing: FrameTiming::default(),
                preview: false,
                is_last: self.ring.is_last(time),
                ..last.clone()
            };
            self.deliver(again, false);
            return;
        }
        if let Some(a) = self.ahead.take()
            && a.time == time
            && a.generation == self.generation
            && self.fits(a.reduction, a.picture.is_planes())
        {
            // Drawn (and counted) ahead of time, and maybe already on
            // screen as the upcoming frame.
            self.deliver(
                Shown {
                    requested: self.requested,
                    seq: self.seq,
                    ..a
                },
                false,
            );
            return;
        }
        let Some(mut shown) = self.draw_copy(pos) else {
            return;
        };
        shown.timing.decode = decode;
        shown.requested = self.requested;
        shown.seq = self.seq;
        self.deliver(shown, true);
    }

    /// A far seek to `t`: the keyframe before it decoded alone and shown
    /// first; `true` when it was (the frame at `t` follows), `false` when
    /// the keyframe is that frame or there is none.
    fn preview(&mut self, t: f64, t0: Instant) -> bool {
        let pos = self.ring.preview(t);
        self.after_ring();
        pos.is_some_and(|pos| self.show_preview(pos, t, t0))
    }

    /// A seek reached by reading on, far (no keyframe between, more than
    /// the ring reads on unasked): the next frame decoded is shown first,
    /// at once, while reading on goes to the frame at `t` (a keyframe
    /// shown first would be further back and cost a second seek); `true`
    /// when it was.
    fn preview_on_the_way(&mut self, t: f64, t0: Instant) -> bool {
        let more = self.ring.read_next();
        self.after_ring();
        let pos = self.ring.len().checked_sub(1).filter(|_| more);
        pos.is_some_and(|pos| self.show_preview(pos, t, t0))
    }

    /// Shows the ring's frame at `pos` as a stand-in for the frame at `t`
    /// (marked `preview`); `false` when it is within a frame of `t` (or of
    /// the end, for a time past it) — the frame itself or next to it,
    /// reading on being quicker — or could not be drawn.
    fn show_preview(&mut self, pos: usize, t: f64, t0: Instant) -> bool {
        let Some(time) = self.ring.get(pos).map(|f| f.time) else {
            return false;
        };
        if t.min(self.info.end()) - time < self.info.frame_duration() {
            return false;
        }
        let decode = t0.elapsed();
        let Some(mut shown) = self.draw_copy(pos) else {
            return false;
        };
        shown.timing.decode = decode;
        shown.requested = self.requested;
        shown.seq = self.seq;
        shown.preview = true;
        self.deliver(shown, true);
        true
    }

    /// Draws the frame after the last one sent, for smooth playback.
    fn draw_ahead(&mut self) {
        let Some(sent) = self.sent else {
            return;
        };
        let t0 = Instant::now();
        let Some(p) = self.ring.position(sent.time) else {
            // The ring lost its place (a seek): nothing to draw ahead.
            self.playing = false;
            return;
        };
        if p + 1 >= self.ring.len() {
            let more = self.ring.read_next();
            self.after_ring();
            if !more {
                return;
            }
        }
        let decode = t0.elapsed();
        let Some(p) = self.ring.position(sent.time) else {
            self.playing = false;
            return;
        };
        let Some(mut shown) = self.draw_copy(p + 1) else {
            self.playing = false;
            return;
        };
        shown.timing.decode = decode;
        let mut ob = lock(&self.outbox);
        if ob.timings.len() < 10_000 {
            ob.timings.push(shown.timing);
        }
        ob.upcoming = Some((self.epoch, shown.clone()));
        drop(ob);
        self.ahead = Some(shown);
    }

    /// Draws a copy of the ring's frame at `pos` (the ring keeps the
    /// decoded picture for redrawing), copied into the scratch frame's
    /// buffers; `None` when the ring has no such frame.
    fn draw_copy(&mut self, pos: usize) -> Option<Shown> {
        let src = self.ring.get(pos)?;
        let mut frame = std::mem::replace(&mut self.scratch, SourceFrame::empty());
        copy_frame(&mut frame, src);
        let shown = self.draw(&mut frame);
        self.scratch = frame;
        Some(shown)
    }

    fn draw(&mut self, frame: &mut SourceFrame) -> Shown {
        let (index, time) = (frame.index, frame.time);
        let t1 = Instant::now();
        let stats = match self.processor.process(frame) {
            Ok(s) => s,
            Err(source) => {
                self.report(PlayerError::Frame { index, source });
                ProcessStats::default()
            }
        };
        let t2 = Instant::now();
        let planes = if self.planes { planes_of(frame) } else { None };
        let (picture, reduction) = match planes {
            Some(p) => (Picture::Planes(p), 1),
            None => {
                let k = self.reduction();
                let img = reduced_from_planes(frame, k).unwrap_or_else(|| {
                    frame.finish_rgb();
                    to_color_image_reduced(&frame.image, k)
                });
                (Picture::Rgb(Arc::new(img)), k)
            }
        };
        let t3 = Instant::now();
        let is_last = self.ring.is_last(time);
        Shown {
            index,
            time,
            requested: None,
            seq: 0,
            generation: self.generation,
            picture,
            size: [self.info.width, self.info.height],
            reduction,
            stats,
            timing: FrameTiming {
                decode: Duration::ZERO,
                process: t2 - t1,
                mask: stats.mask_time,
                draw: stats.draw_time,
                composite: stats.composite_time,
                convert: t3 - t2,
            },
            is_last,
            preview: false,
        }
    }

    /// Hands `shown` to the UI; `drawn` says it was drawn just now (not
    /// repeated, not drawn ahead): only then is the UI woken up.
    fn deliver(&mut self, shown: Shown, drawn: bool) {
        self.sent = Some(Sent {
            time: shown.time,
            generation: shown.generation,
            reduction: shown.reduction,
            planes: shown.picture.is_planes(),
        });
        self.last = Some(shown.clone());
        let mut ob = lock(&self.outbox);
        if drawn && ob.timings.len() < 10_000 {
            ob.timings.push(shown.timing);
        }
        ob.latest = Some(shown);
        drop(ob);
        if drawn {
            (self.wake)();
        }
    }
}

/// The picture for a screen that shows it reduced `k`× (`k` even), made
/// from the frame's planes as they stand (drawn): each 2×2 block's mean
/// luma with its chroma converted once, as the masks read a block, then
/// `k / 2` × `k / 2` of those averaged — a quarter of the pixels converted
/// and no full-size RGB picture (16 MB at 3K). `None` when the frame has
/// no planes that stand for its picture (then the RGB picture is reduced).
fn reduced_from_planes(frame: &SourceFrame, k: usize) -> Option<eframe::egui::ColorImage> {
    if k < 2 || !k.is_multiple_of(2) {
        return None;
    }
    let pic = frame.yuv.as_ref()?.picture()?;
    let p = pic.planes()?;
    let (bw, bh) = (p.width / 2, p.height / 2);
    if bw == 0 || bh == 0 {
        return None;
    }
    let inv = crate::video::yuv::InvCoeffs::for_space(p.space, p.full_range);
    let mut half = RgbImage::zeros((bh, bw, 3));
    let out = half.as_slice_mut()?;
    for (by, row) in out.chunks_exact_mut(3 * bw).enumerate() {
        crate::video::yuv::blocks_to_rgb(
            p.row(0, 2 * by),
            p.row(0, 2 * by + 1),
            p.row(1, by),
            p.row(2, by),
            row,
            &inv,
        );
    }
    Some(to_color_image_reduced(&half, k / 2))
}

/// Copies `src` into `dst`'s buffers, as `clone_from` does, except an RGB
/// picture still to be converted from the planes ([`SourceFrame::rgb_pending`]):
/// its stale pixels are not copied (a 3K picture is 16 MB), only its size
/// kept.
fn copy_frame(dst: &mut SourceFrame, src: &SourceFrame) {
    if !src.rgb_pending() {
        dst.clone_from(src);
        return;
    }
    dst.index = src.index;
    dst.time = src.time;
    if dst.image.dim() != src.image.dim() {
        dst.image = RgbImage::zeros(src.image.dim());
    }
    dst.yuv.clone_from(&src.yuv);
    dst.clock = src.clock;
    dst.mask.clone_from(&src.mask);
    dst.calibration.clone_from(&src.calibration);
}

/// The frame's RGB picture as decoded: converted from its planes when the
/// source left that to be done ([`SourceFrame::rgb_pending`]).
fn decoded_rgb(frame: &SourceFrame) -> std::borrow::Cow<'_, RgbImage> {
    match &frame.yuv {
        Some(yuv) if yuv.rgb_pending() => {
            let mut rgb = RgbImage::zeros((0, 0, 3));
            yuv.to_rgb_rows(&mut rgb, 0..yuv.height());
            std::borrow::Cow::Owned(rgb)
        }
        _ => std::borrow::Cow::Borrowed(&frame.image),
    }
}

/// The pixels of `img` within `radius` of `(x, y)` (a square, clipped to
/// the image; empty when the point is outside).
pub fn crop(img: &RgbImage, x: usize, y: usize, radius: usize) -> RgbImage {
    let (h, w, _) = img.dim();
    if x >= w || y >= h {
        return RgbImage::zeros((0, 0, 3));
    }
    let (x0, y0) = (x.saturating_sub(radius), y.saturating_sub(radius));
    let (x1, y1) = ((x + radius + 1).min(w), (y + radius + 1).min(h));
    img.slice(ndarray::s![y0..y1, x0..x1, ..]).to_owned()
}

#[cfg(test)]
mod tests;
