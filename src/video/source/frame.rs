//! What every frame source is: the [`FrameSource`] trait, the
//! [`SourceFrame`]s it hands out with their [`SourceInfo`], how a file is
//! opened ([`OpenOptions`]) and what can go wrong ([`SourceError`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::calib::Calibration;
use crate::image::{ImageError, MaskImage, RgbImage};
use crate::video::{ClockTable, Picture, VideoError, Yuv420};

/// An error of a source's own kind (a game log's parser, say).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Errors a frame source reports. Each names the file (or the source) and,
/// where it applies, the frame.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Opening or decoding a video failed (the error names file and frame).
    #[error(transparent)]
    Video(#[from] VideoError),
    /// A still image could not be read (the error names the file).
    #[error(transparent)]
    Image(#[from] ImageError),
    /// The file could not be read at all.
    #[error("{path}: cannot read the file")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Generated frames were asked for with a size no picture can have.
    #[error(
        "generated frames of {width}×{height} pixels are not possible (1 to 16384 each way, at most \
         8192×8192 pixels)"
    )]
    BadSize { width: usize, height: usize },
    /// Generated frames were asked for at a rate that is not a positive number.
    #[error("generated frames at {fps} frames per second are not possible")]
    BadRate { fps: f64 },
    /// The thread decoding ahead ended (it panicked: a bug).
    #[error("{name}: the decoding thread stopped")]
    Stopped { name: String },
    /// A source of another kind failed (its error names the place in the file).
    #[error("{path}: cannot read as {kind}")]
    Other {
        path: PathBuf,
        /// What the file was read as ("2D-league game log", …).
        kind: &'static str,
        #[source]
        source: BoxError,
    },
}

/// Facts about a frame source.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceInfo {
    /// What the source is (a file path, or "synthetic").
    pub name: String,
    /// Width of every frame in pixels.
    pub width: usize,
    /// Height of every frame in pixels.
    pub height: usize,
    /// Time of the first frame, in seconds.
    pub start: f64,
    /// Duration in seconds (the end of the last frame); 0 when unknown.
    pub duration: f64,
    /// Average frame rate, for nudges of "one frame", the timeline and
    /// encoders.
    pub fps: f64,
    /// Number of frames when known.
    pub frame_count: Option<u64>,
    /// Every frame time is a multiple of this `(numerator, denominator)`
    /// when known (a video stream's time base): an encoder given it keeps
    /// the times exact.
    pub time_base: Option<(i32, i32)>,
    /// The file whose audio goes with the pictures, when it has some.
    pub audio: Option<PathBuf>,
    /// Frames come with [`SourceFrame::mask`] (an exact floor mask).
    pub has_masks: bool,
    /// The source's log clock of every frame, when frames carry one
    /// ([`SourceFrame::clock`]): for mapping log times back to frames.
    pub clocks: Option<Arc<ClockTable>>,
    /// World → picture, for sources that make their pictures from world
    /// coordinates (a rendered match): the calibration its logs are drawn
    /// with when the session has none.
    pub calibration: Option<Calibration>,
    /// Seconds per cycle of the source's clock (a simulator's step), for
    /// times given in cycles.
    pub clock_step: Option<f64>,
}

impl SourceInfo {
    /// Facts of a source of `width`×`height` frames at `fps` lasting
    /// `duration` seconds from 0, with nothing else known.
    pub fn new(name: impl Into<String>, width: usize, height: usize, fps: f64, duration: f64) -> Self {
        SourceInfo {
            name: name.into(),
            width,
            height,
            start: 0.0,
            duration,
            fps,
            frame_count: None,
            time_base: None,
            audio: None,
            has_masks: false,
            clocks: None,
            calibration: None,
            clock_step: None,
        }
    }

    /// The length of one frame in seconds (1/30 s when the rate is unknown).
    pub fn frame_duration(&self) -> f64 {
        if self.fps.is_finite() && self.fps > 0.0 {
            1.0 / self.fps
        } else {
            1.0 / 30.0
        }
    }

    /// The last time at which a frame is shown.
    pub fn end(&self) -> f64 {
        (self.start + self.duration - self.frame_duration()).max(self.start)
    }
}

/// One frame.
#[derive(Debug)]
pub struct SourceFrame {
    /// Position in presentation order from the start (after a seek into a
    /// part of a video not yet decoded sequentially, estimated from the
    /// time and the average rate: tell frames apart by time).
    pub index: u64,
    /// Presentation time in seconds from the source's start.
    pub time: f64,
    /// The picture, upright.
    pub image: RgbImage,
    /// The same picture in the video's own YUV 4:2:0 planes, when the
    /// source was opened with [`OpenOptions::keep_yuv`] and the video
    /// allows it. The planes are the picture: the pipeline masks them and
    /// draws on them ([`Yuv420::draw_planes`]), the encoder takes them,
    /// and `image` is then pending ([`SourceFrame::rgb_pending`]), made
    /// from them when asked for ([`SourceFrame::finish_rgb`]). Whoever
    /// paints on `image` instead must say where ([`Yuv420::mark_changed`])
    /// or set this to `None`.
    pub yuv: Option<Yuv420>,
    /// The source's own log clock at this frame (a simulator's game time),
    /// when it has one; `None` for camera videos, whose log time follows
    /// `time`.
    pub clock: Option<f64>,
    /// The exact floor mask of this frame (255 = floor), when the source
    /// knows it.
    pub mask: Option<MaskImage>,
    /// World → this picture, when it differs from frame to frame (a
    /// rendered match whose camera follows the ball); drawings use it
    /// instead of the session's.
    pub calibration: Option<std::sync::Arc<Calibration>>,
}

impl Clone for SourceFrame {
    fn clone(&self) -> Self {
        SourceFrame {
            index: self.index,
            time: self.time,
            image: self.image.clone(),
            yuv: self.yuv.clone(),
            clock: self.clock,
            mask: self.mask.clone(),
            calibration: self.calibration.clone(),
        }
    }

    /// Copies `source` into this frame's buffers where their sizes match
    /// (a player drawing every frame onto a copy reuses one picture).
    fn clone_from(&mut self, source: &Self) {
        self.index = source.index;
        self.time = source.time;
        self.image.clone_from(&source.image);
        self.yuv.clone_from(&source.yuv);
        self.clock = source.clock;
        self.mask.clone_from(&source.mask);
        self.calibration.clone_from(&source.calibration);
    }
}

impl PartialEq for SourceFrame {
    /// Frames are equal when they show the same thing at the same time
    /// (`yuv` is a decoding detail and not compared).
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
            && self.time == other.time
            && self.image == other.image
            && self.clock == other.clock
            && self.mask == other.mask
            && self.calibration == other.calibration
    }
}

impl SourceFrame {
    /// A frame of `image` at `time` with nothing else known.
    pub fn new(index: u64, time: f64, image: RgbImage) -> Self {
        SourceFrame {
            index,
            time,
            image,
            yuv: None,
            clock: None,
            mask: None,
            calibration: None,
        }
    }

    /// An empty frame whose buffers [`FrameSource::read_into`] fills and reuses.
    pub fn empty() -> Self {
        SourceFrame::new(0, 0.0, RgbImage::zeros((0, 0, 3)))
    }

    /// Converts `image` from the YUV planes if it is pending (the source
    /// left it to be converted, [`OpenOptions::defer_rgb`], or something
    /// was drawn on the planes since); afterwards `image` is the picture.
    pub fn finish_rgb(&mut self) {
        if let Some(yuv) = &mut self.yuv {
            yuv.finish_rgb(&mut self.image);
        }
    }

    /// Whether `image` still waits for [`finish_rgb`](Self::finish_rgb).
    pub fn rgb_pending(&self) -> bool {
        self.yuv.as_ref().is_some_and(Yuv420::rgb_pending)
    }

    /// The picture as masks read it: the YUV planes when the frame has
    /// limited-range ones, else the RGB picture (of full-range planes,
    /// kept for a display: [`finish_rgb`](Self::finish_rgb) first when it
    /// is pending).
    pub fn picture(&self) -> Picture<'_> {
        match &self.yuv {
            Some(yuv) if !yuv.full_range() => Picture::Yuv(yuv.planes()),
            _ => Picture::Rgb(&self.image),
        }
    }

    /// Whether the frame's planes are full range (kept for a display,
    /// [`OpenOptions::yuv_full_range`]): masked and drawn on in RGB.
    pub fn full_range_planes(&self) -> bool {
        self.yuv.as_ref().is_some_and(Yuv420::full_range)
    }

    /// `(width, height)` of the picture.
    pub fn size(&self) -> (usize, usize) {
        self.picture().size()
    }

    /// Converts the parts of `image` marked changed into the YUV planes
    /// ([`Yuv420::bake`]), when the frame has planes.
    pub fn bake_yuv(&mut self) -> Result<(), String> {
        match (&mut self.yuv, self.image.as_slice()) {
            (Some(yuv), Some(rgb)) => yuv.bake(rgb),
            _ => Ok(()),
        }
    }
}

/// A seekable sequence of frames in presentation order.
pub trait FrameSource: Send {
    /// Facts about the source.
    fn info(&self) -> &SourceInfo;

    /// The next frame after the last one returned, `None` at the end.
    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError>;

    /// The frame shown at time `t` (the last frame whose time is ≤ `t`; the
    /// first frame when `t` is before it or not a number, the last when
    /// after the end). Afterwards [`Self::next_frame`] continues after it.
    /// `None` only when the source has no frames.
    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError>;

    /// A quick stand-in for [`Self::frame_at`] when seeking far: the frame
    /// decoded first after a seek (a video's keyframe at or before `t`, one
    /// frame's work where the exact frame may need a whole group of
    /// pictures decoded). Afterwards [`Self::next_frame`] continues after
    /// it, towards `t`. Sources that reach any frame at once give
    /// [`Self::frame_at`]'s.
    fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        self.frame_at(t)
    }

    /// Where a seek to a time starts decoding, when the source knows (a
    /// video opened with [`OpenOptions::seek_index`]): the keyframes,
    /// shared with the source and still growing while they are read.
    fn seek_index(&self) -> Option<crate::video::SeekIndex> {
        None
    }

    /// Has long work towards a frame ([`Self::frame_at`] decoding a group
    /// of pictures) ask `stop` as it goes and give up when it says `true`:
    /// the frame returned then is not the one asked for (whoever set
    /// `stop` throws it away), and the source stays ready for the next
    /// request. Sources whose frames cost little ignore it.
    fn set_stop(&mut self, stop: crate::video::Stop) {
        let _ = stop;
    }

    /// Like [`Self::next_frame`] into `out`, reusing its buffers where the
    /// source can; `false` at the end (then `out` is unspecified).
    fn read_into(&mut self, out: &mut SourceFrame) -> Result<bool, SourceError> {
        match self.next_frame()? {
            Some(f) => {
                *out = f;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Takes back a frame the caller is done with, so that a source which
    /// allocates a new frame for each [`Self::next_frame`] can fill this
    /// one's buffers instead (a 1080p picture is 6 MB, and a new one is
    /// written twice: zeroed, then decoded into). Sources that cannot use
    /// it drop it.
    fn recycle(&mut self, frame: SourceFrame) {
        drop(frame);
    }
}

/// How a file is opened as a frame source.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpenOptions {
    /// Keep each frame's decoded YUV 4:2:0 planes ([`SourceFrame::yuv`]),
    /// for the export's fast path. Sources that do not decode video ignore it.
    pub keep_yuv: bool,
    /// With `keep_yuv`: frames that carry their planes come with the RGB
    /// picture still to be converted ([`SourceFrame::finish_rgb`]), so that
    /// the conversion runs where the frame is used (export's parallel
    /// workers) rather than where it is read.
    pub defer_rgb: bool,
    /// With `keep_yuv`: full-range (JPEG-range) pictures keep their planes
    /// too ([`Yuv420::full_range`]), for a display that converts them
    /// itself (the viewer's). Export leaves it off: its encoder and the
    /// conversion of drawings back take limited range only.
    pub yuv_full_range: bool,
    /// Find where a video's keyframes are, once, on a thread of its own
    /// ([`crate::video::SeekIndex`]), so that seeks start from the right
    /// keyframe and reading on replaces seeking within a group of
    /// pictures: for the viewer, which seeks anywhere. Sources that reach
    /// any frame at once ignore it.
    pub seek_index: bool,
    /// For sources that render their pictures (a match): their size,
    /// `(width, height)`; `None` for the source's default.
    pub size: Option<(usize, usize)>,
    /// For sources that render their pictures: pictures per second;
    /// `None` for the source's default.
    pub fps: Option<f64>,
    /// For a rendered match: what its camera follows (`ball`, `l10`, …).
    pub follow: Option<String>,
    /// For a rendered match: the pitch's magnification.
    pub zoom: Option<f64>,
    /// For a rendered match: seen at this slant (degrees from straight
    /// down), so drawings above the floor show their heights.
    pub tilt: Option<f64>,
    /// For a recording (a ROS 2 bag): the picture topic shown; the first
    /// when `None`.
    pub topic: Option<String>,
    /// For a recording: the world frame its camera is placed in; the root
    /// of its transform tree when `None`.
    pub world: Option<String>,
    /// For a rendered match: seen through this agent's camera (`l3`,
    /// `r1`, `Alpha:1`), found among [`Self::beside`] by the format table
    /// ([`crate::formats::open_source`]), which sets [`Self::camera`].
    pub agent_view: Option<String>,
    /// The files read beside the source (a session's logs): where an
    /// agent's camera is found.
    pub beside: Vec<PathBuf>,
    /// For a rendered match: the moving camera it is seen through.
    pub camera: Option<Arc<crate::calib::track::CameraTrack>>,
}

/// Opens a file as one kind of source.
pub type OpenFn = fn(&Path, &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError>;
