//! Frame sources: everything that hands out pictures with their times, in
//! presentation order, with seeking — a video file decoded with FFmpeg, a
//! still image, generated frames, and the sources other modules add (a
//! simulated match rendered from its game log). The viewer and export
//! only consume [`FrameSource`]s; neither knows where frames come from.
//!
//! A [`SourceFrame`] carries its presentation `time` (seconds from the
//! source's start) and, for sources that know more than a camera does,
//! the source's own log `clock` for that frame (a simulator's game clock
//! stops during stoppages while pictures go on) and an exact floor `mask`
//! (a renderer knows where every player stands). The pipeline maps
//! `clock.unwrap_or(time)` to log time through a
//! [`TimeMap`](crate::video::TimeMap) and, with the mask method `source`
//! (or `auto`, the default), hides drawings with the frame's own mask.
//!
//! Around a source: [`ReadAhead`] decodes on its own thread a few frames
//! ahead of the reader, and [`FrameRing`] keeps recent frames for a
//! player that seeks, steps back and redraws.
//!
//! # Adding a source
//! [`open`] is the one registration point. It reads the first bytes of the
//! file (decompressed when the file is gzip), asks each [`Opener`] of
//! [`OPENERS`] in turn whether it recognises them, and opens the file with
//! the first that does; a file no opener claims goes to FFmpeg
//! ([`DecoderSource`]). A new kind of source is one file in this folder
//! (or in its own module) with a type implementing [`FrameSource`] and an
//! `Opener { name, sniff, open }`, plus one line in [`OPENERS`]. `sniff`
//! must be cheap and certain (a magic number, a header line): it sees at
//! most [`SNIFF_BYTES`] bytes and must not claim files another opener or
//! FFmpeg reads. Errors of the new source's own kind go into
//! [`SourceError::Other`] with the file's path.

mod decoder;
mod read_ahead;
mod ring;
mod still;
mod synthetic;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use decoder::DecoderSource;
pub use read_ahead::ReadAhead;
pub use ring::FrameRing;
pub use still::StillSource;
pub use synthetic::SyntheticSource;

use super::{ClockTable, VideoError, Yuv420};
use crate::calib::Calibration;
use crate::image::{ImageError, MaskImage, RgbImage};

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
    /// allows it. Whoever changes `image` must say where
    /// ([`Yuv420::mark_changed`]) or set this to `None`: the encoder takes
    /// these planes, with the changed parts converted from `image`.
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

/// How [`open`] opens a file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpenOptions {
    /// Keep each frame's decoded YUV 4:2:0 planes ([`SourceFrame::yuv`]),
    /// for the export's fast path. Sources that do not decode video ignore it.
    pub keep_yuv: bool,
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
}

/// What an [`Opener`] sees of a file to decide whether it is its kind.
#[derive(Clone, Debug)]
pub struct Sniff<'a> {
    /// The file.
    pub path: &'a Path,
    /// Its first bytes (at most [`SNIFF_BYTES`]), decompressed when the file is gzip.
    pub head: &'a [u8],
    /// The file is gzip-compressed.
    pub gzip: bool,
}

/// Bytes of a file's start that openers see.
pub const SNIFF_BYTES: usize = 4096;

/// Opens a file as one kind of source.
pub type OpenFn = fn(&Path, &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError>;

/// One kind of source that [`open`] knows.
#[derive(Clone, Copy, Debug)]
pub struct Opener {
    /// What the kind is called, for messages ("still image", …).
    pub name: &'static str,
    /// Whether the file is of this kind (cheap and certain).
    pub sniff: fn(&Sniff<'_>) -> bool,
    /// Opens the file as this kind.
    pub open: OpenFn,
    /// The file is a log too ([`crate::log::load`] reads it): a match's
    /// record is both the picture and drawings over it, so opening one
    /// alone shows both.
    pub also_log: bool,
}

/// The kinds of source [`open`] tries, in order, before FFmpeg.
pub const OPENERS: &[Opener] = &[
    still::OPENER,
    crate::ssl::render::OPENER,
    crate::sim3d::render::OPENER,
    crate::sim2d::render::OPENER,
];

/// Opens `path` as a frame source: the first of [`OPENERS`] that
/// recognises the file's content, else a video decoded with FFmpeg.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
    if let Some(o) = opener_of(path)? {
        return (o.open)(path, options);
    }
    Ok(Box::new(DecoderSource::open(path, options)?))
}

/// The opener that claims `path` (`None`: FFmpeg's, a video or picture
/// file it decodes).
pub fn opener_of(path: &Path) -> Result<Option<&'static Opener>, SourceError> {
    let (head, gzip) = read_head(path)?;
    let sniff = Sniff {
        path,
        head: &head,
        gzip,
    };
    Ok(OPENERS.iter().find(|o| (o.sniff)(&sniff)))
}

/// The first [`SNIFF_BYTES`] of `path` (decompressed when gzip) and
/// whether it is gzip. A damaged gzip stream gives what decompressed.
fn read_head(path: &Path) -> Result<(Vec<u8>, bool), SourceError> {
    let io = |source| SourceError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut raw = Vec::with_capacity(SNIFF_BYTES);
    file.take(SNIFF_BYTES as u64).read_to_end(&mut raw).map_err(io)?;
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return Ok((raw, false));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let mut gz = flate2::read::MultiGzDecoder::new(file).take(SNIFF_BYTES as u64);
    // A damaged stream: keep what came out before the damage.
    let mut buf = [0u8; 512];
    loop {
        match gz.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Ok((head, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_read_and_gzip_is_undone() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        std::fs::write(&plain, vec![b'x'; 10_000]).unwrap();
        let (head, gz) = read_head(&plain).unwrap();
        assert_eq!((head.len(), gz), (SNIFF_BYTES, false));
        let zipped = dir.path().join("a.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"ULG5\nrest of the header").unwrap();
        std::fs::write(&zipped, e.finish().unwrap()).unwrap();
        let (head, gz) = read_head(&zipped).unwrap();
        assert!(gz && head.starts_with(b"ULG5\n"), "{head:?}");
        // A torn gzip file gives what could be read, not an error.
        let bytes = std::fs::read(&zipped).unwrap();
        std::fs::write(&zipped, &bytes[..bytes.len() / 2]).unwrap();
        assert!(read_head(&zipped).unwrap().1);
        let e = read_head(&dir.path().join("missing")).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
    }

    #[test]
    fn open_picks_the_still_opener_and_falls_back_to_ffmpeg() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("p.png");
        crate::image::save_rgb(&png, &RgbImage::from_elem((6, 8, 3), 50)).unwrap();
        let mut s = open(&png, &OpenOptions::default()).unwrap();
        assert_eq!(
            (s.info().width, s.info().height, s.info().frame_count),
            (8, 6, Some(1))
        );
        assert!(s.next_frame().unwrap().is_some());
        let junk = dir.path().join("junk.mp4");
        std::fs::write(&junk, b"not a video at all").unwrap();
        let e = open(&junk, &OpenOptions::default()).err().unwrap();
        assert!(matches!(e, SourceError::Video(_)), "{e}");
        assert!(e.to_string().contains("junk.mp4"), "{e}");
    }

    /// Cases per fuzz test: `UNDERLAY_FUZZ_CASES=N` (default 2000).
    fn fuzz_cases() -> u32 {
        std::env::var("UNDERLAY_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2000)
    }

    /// Opens `bytes` as a file and reads a few frames: an error or frames,
    /// never a panic.
    fn open_bytes(dir: &Path, bytes: &[u8]) {
        let p = dir.join("fuzz.bin");
        std::fs::write(&p, bytes).unwrap();
        if let Ok(mut s) = open(&p, &OpenOptions::default()) {
            for _ in 0..3 {
                if !matches!(s.next_frame(), Ok(Some(_))) {
                    break;
                }
            }
            let _ = s.frame_at(0.5);
        }
    }

    fn small_png() -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.png");
        let img = RgbImage::from_shape_fn((5, 7, 3), |(y, x, c)| (y * 40 + x * 9 + c) as u8);
        crate::image::save_rgb(&p, &img).unwrap();
        std::fs::read(p).unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random bytes, gzip-looking or not, never panic.
        #[test]
        fn random_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            gzip_magic in proptest::prelude::any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = bytes;
            if gzip_magic {
                bytes.splice(0..0, [0x1f, 0x8b, 8, 0]);
            }
            open_bytes(dir.path(), &bytes);
        }

        /// A valid picture with bytes changed, cut or its magic kept never panics.
        #[test]
        fn mutated_pictures_never_panic(
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..8),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = small_png();
            for (at, v) in edits {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            let keep = 8 + cut % (bytes.len() - 7);
            bytes.truncate(keep);
            open_bytes(dir.path(), &bytes);
        }
    }
}
