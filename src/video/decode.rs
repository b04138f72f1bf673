//! Decoding: demux the best video stream, decode it with FFmpeg's threads,
//! convert to upright RGB straight into the caller's buffer.
//!
//! **A live input's opening.** To learn a stream's codec and size FFmpeg
//! reads its first packets while opening it. Under FFmpeg's `nobuffer`
//! flag those packets were thrown away — the stream's first keyframe
//! among them, so a camera with a 10 s keyframe interval showed nothing
//! for 10 s. A live input is opened without it: FFmpeg keeps them, and
//! they are decoded first. Which they are is told apart without FFmpeg's
//! internals: every read of the network asks the interrupt callback
//! first, so the packets read after the opening before the callback is
//! asked again came from what the opening read ([`Decoder::backlog`]);
//! the camera dates their pictures back by their own times. A stream
//! joined between keyframes may not say its size while opening: a live
//! decoder takes it from its first picture, and the packets before that
//! picture (undecodable without their keyframe) are not counted as
//! damage.

use crate::video::StepError;
use std::path::{Path, PathBuf};

use ffmpeg_next as ffmpeg;
use ffmpeg_next::ffi;
use ffmpeg_next::{Packet, Rational, codec, frame, media};

use super::convert::{Colorimetry, Planes, Scaler, rotate_into};
use super::index::{IndexScan, SeekIndex};
use super::planes::Yuv420;
use super::yuv::{InvCoeffs, Plane, yuv420_to_rgb};
use super::{SourceFrame, VideoError, VideoInfo, init, ratio};
use crate::image::{MaskImage, RgbImage};

/// Frame times closer than this (seconds) are the same time.
const TIME_EPS: f64 = 1e-6;
/// `frame_at` decodes forward instead of seeking when the target is at most
/// this far (seconds) ahead of the current frame.
const FORWARD_WINDOW: f64 = 1.0;
/// Consecutive packets the decoder may reject before decoding gives up.
const MAX_BAD_PACKETS: u32 = 200;
/// Packets a live input's opening may have read ahead, at most (FFmpeg's
/// probe is bounded by its `probesize` anyway).
const MAX_BACKLOG: usize = 4096;

/// What a live input's opening read ahead of its first frame, kept and
/// decoded first ([`Decoder::backlog`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backlog {
    /// Packets of the video stream read while opening.
    pub packets: usize,
    /// The newest of their times, seconds of the stream as frame times are.
    pub newest: f64,
    /// When the opening ended: the newest packet had come by then.
    pub opened: std::time::Instant,
}

/// Reads the frames of a video file in presentation order, with accurate
/// seeking.
pub struct Decoder {
    path: PathBuf,
    input: ffmpeg::format::context::Input,
    stream: usize,
    dec: ffmpeg::decoder::Video,
    time_base: f64,
    start_pts: i64,
    info: VideoInfo,
    packet: Packet,
    scaler: Option<Scaler>,
    /// Upright-before-rotation scratch image (rotated video only).
    unrotated: RgbImage,
    /// End of stream has been signalled to the decoder.
    draining: bool,
    /// A demuxer error that ended reading early; reported after the frames
    /// decoded before it.
    read_error: Option<ffmpeg::Error>,
    /// Counts every packet read (of any stream), for whoever watches a
    /// live input for silence.
    progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Consecutive packets rejected by the decoder.
    bad_packets: u32,
    /// A live input (see the module docs).
    live: bool,
    /// Packets read ahead while opening a live input, handed on first,
    /// and the read that ended them when it failed.
    queued: std::collections::VecDeque<Packet>,
    queued_error: Option<ffmpeg::Error>,
    backlog: Option<Backlog>,
    /// Some picture has been decoded (since opening, seeks included).
    decoded_any: bool,
    /// The end (and any truncation) has been reported since the last seek.
    end_reported: bool,
    /// A decoded frame already read ahead (after a seek), returned next.
    held: Option<(frame::Video, f64)>,
    /// The frame last returned, kept so `frame_at` can return it again.
    last: Option<(frame::Video, f64)>,
    /// After `seek`: the target time the next frame must show.
    target: Option<Target>,
    /// The time of the last [`Decoder::keyframe_at`]: decoding on from
    /// its keyframe reaches the frame at that time without another seek.
    previewed: Option<f64>,
    /// While decoding towards a target.
    skip: Option<SkipState>,
    /// Times of the frames from the start of the stream, in order, as far
    /// as they have been decoded sequentially.
    known_times: Vec<f64>,
    /// The decoder's output continues `known_times` without a gap.
    at_known_end: bool,
    /// Frames were skipped since the last repositioning.
    skipped: bool,
    /// Longest time between two consecutive frames seen.
    max_interval: f64,
    /// Frames handed out (for error messages).
    returned: u64,
    last_index: u64,
    /// Also hand out the decoded YUV 4:2:0 planes ([`SourceFrame::yuv`]).
    keep_yuv: bool,
    /// Leave the RGB conversion of frames with YUV planes to their user.
    defer_rgb: bool,
    /// Keep the planes of full-range pictures too (see
    /// [`Decoder::set_keep_full_range`]).
    keep_full_range: bool,
    /// The keyframes, read on a thread of their own once asked for
    /// ([`Decoder::build_index`]).
    index: Option<IndexScan>,
    /// Asked while decoding towards a frame: `true` gives up (whoever
    /// asked no longer wants the frame).
    stop: Option<Stop>,
    /// Times the demuxer was repositioned.
    seeks: u64,
}

/// A question asked during long decodes: `true` means give up.
pub type Stop = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// Skipping of non-reference frames while decoding towards a target.
#[derive(Clone, Copy, Debug)]
struct SkipState {
    /// The target in stream time base.
    target_pts: i64,
    /// Largest packet pts at or before the target read so far.
    best_seen: Option<i64>,
    /// The decoder is currently told to skip non-reference frames.
    skipping: bool,
}

#[derive(Clone, Copy, Debug)]
struct Target {
    time: f64,
    /// Whether the demuxer was repositioned (so overshooting the target
    /// means the seek landed too late and must go further back).
    repositioned: bool,
    retries: u8,
}

impl Decoder {
    /// Opens `path` and its best video stream.
    pub fn open(path: &Path) -> Result<Decoder, VideoError> {
        init();
        Self::from_input(path, super::open_input(path)?, false)
    }

    /// Opens a live input (a stream URL, a device) with FFmpeg `options`
    /// (low-latency demuxing, timeouts) and an `interrupt` asked during
    /// blocking reads (`true` abandons the read, which then fails: a
    /// stalled stream, a stop asked for). Frames are read in order with
    /// [`read_into`](Self::read_into); a live input cannot seek.
    pub fn open_live(
        url: &Path,
        options: &[(&str, String)],
        interrupt: impl FnMut() -> bool + Send + 'static,
    ) -> Result<Decoder, VideoError> {
        let mut interrupt = interrupt;
        let asks = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = std::sync::Arc::clone(&asks);
        let input = super::open_live_input(url, options, move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            interrupt()
        })?;
        let opened = std::time::Instant::now();
        let mut decoder = Self::from_input(url, input, true)?;
        decoder.read_backlog(&asks, opened);
        Ok(decoder)
    }

    /// Reads the packets FFmpeg kept from opening a live input: those that
    /// come without the interrupt callback being asked (no read of the
    /// network), and the first that came with it (which ends them).
    fn read_backlog(&mut self, asks: &std::sync::atomic::AtomicU64, opened: std::time::Instant) {
        use std::sync::atomic::Ordering;
        let before = asks.load(Ordering::Relaxed);
        let (mut newest, mut packets) = (None::<f64>, 0);
        while self.queued.len() < MAX_BACKLOG {
            let mut packet = Packet::empty();
            if let Err(e) = packet.read(&mut self.input) {
                self.queued_error = Some(e);
                break;
            }
            let fresh = asks.load(Ordering::Relaxed) != before;
            if !fresh && packet.stream() == self.stream {
                packets += 1;
                if let Some(ts) = packet.pts().or_else(|| packet.dts()) {
                    let t = ts.saturating_sub(self.start_pts) as f64 * self.time_base;
                    newest = Some(newest.map_or(t, |n| n.max(t)));
                }
            }
            self.queued.push_back(packet);
            if fresh {
                break;
            }
        }
        self.backlog = newest.map(|newest| Backlog {
            packets,
            newest,
            opened,
        });
    }

    /// What opening a live input read ahead of its first frame (kept and
    /// decoded first), `None` when nothing (or not live).
    pub fn backlog(&self) -> Option<Backlog> {
        self.backlog
    }

    /// `live`: each picture out as soon as it is decoded (slice threads and
    /// low delay), where frame threads hold a frame back per thread.
    fn from_input(
        path: &Path,
        input: ffmpeg::format::context::Input,
        live: bool,
    ) -> Result<Decoder, VideoError> {
        let p = path.to_owned();
        let stream = input
            .streams()
            .best(media::Type::Video)
            .ok_or_else(|| VideoError::NoVideoStream { path: p.clone() })?;
        let index = stream.index();
        let tb = stream.time_base();
        let time_base = ratio(tb).ok_or_else(|| VideoError::Codec {
            path: p.clone(),
            message: format!("video stream has an invalid time base {tb}"),
        })?;
        let start_pts = if stream.start_time() == ffi::AV_NOPTS_VALUE {
            0
        } else {
            stream.start_time()
        };
        let rotation = display_rotation(&stream);
        let codec_name = stream.parameters().id().name().to_string();
        let mut ctx =
            codec::context::Context::from_parameters(stream.parameters()).map_err(|e| VideoError::Codec {
                path: p.clone(),
                message: format!("cannot read codec parameters: {e}"),
            })?;
        if live {
            ctx.set_flags(codec::Flags::LOW_DELAY);
        }
        ctx.set_threading(codec::threading::Config {
            kind: if live {
                codec::threading::Type::Slice
            } else {
                codec::threading::Type::Frame
            },
            count: 0,
            ..Default::default()
        });
        // After a seek to a keyframe that is not an IDR picture (recovery
        // point), H.264 decoders hold frames back as "not recovered" and can
        // drop the last ones at the end of the file; frames before the seek
        // target are discarded anyway, so show everything. Not live: a
        // stream joined between keyframes would show its first frames as
        // grey-green garbage; they wait for the first picture that decodes.
        if !live {
            // SAFETY: setting a flag field of the codec context before opening.
            unsafe {
                (*ctx.as_mut_ptr()).flags2 |= ffi::AV_CODEC_FLAG2_SHOW_ALL;
            }
        }
        let dec = ctx.decoder().video().map_err(|e| VideoError::Codec {
            path: p.clone(),
            message: format!("no decoder for codec {codec_name}: {e}"),
        })?;
        let (w, h) = (dec.width(), dec.height());
        // A live stream joined between keyframes may not have said its
        // size yet: its first picture will.
        if !(live && (w == 0 || h == 0)) {
            check_picture_size(w, h).map_err(|e| VideoError::Codec {
                path: p.clone(),
                message: crate::error::chain(&e),
            })?;
        }
        let (width, height) = if rotation % 180 == 0 { (w, h) } else { (h, w) };
        let frames = stream.frames();
        let duration = if stream.duration() > 0 && stream.duration() != ffi::AV_NOPTS_VALUE {
            stream.duration() as f64 * time_base
        } else if input.duration() > 0 {
            input.duration() as f64 / f64::from(ffi::AV_TIME_BASE)
        } else {
            0.0
        };
        let avg_fps = ratio(stream.avg_frame_rate())
            .or_else(|| ratio(stream.rate()))
            .or_else(|| (frames > 0 && duration > 0.0).then(|| frames as f64 / duration))
            .unwrap_or(0.0);
        let has_audio = input
            .streams()
            .any(|s| s.parameters().medium() == media::Type::Audio);
        let info = VideoInfo {
            width,
            height,
            duration,
            frame_count: (frames > 0).then_some(frames as u64),
            avg_fps,
            rotation,
            has_audio,
            codec: codec_name,
            time_base: (tb.numerator(), tb.denominator()),
        };
        Ok(Decoder {
            path: p,
            input,
            stream: index,
            dec,
            time_base,
            start_pts,
            info,
            packet: Packet::empty(),
            scaler: None,
            unrotated: RgbImage::zeros((0, 0, 3)),
            draining: false,
            read_error: None,
            progress: None,
            bad_packets: 0,
            live,
            queued: std::collections::VecDeque::new(),
            queued_error: None,
            backlog: None,
            decoded_any: false,
            end_reported: false,
            held: None,
            last: None,
            target: None,
            previewed: None,
            skip: None,
            known_times: Vec::new(),
            at_known_end: true,
            skipped: false,
            max_interval: 0.0,
            returned: 0,
            last_index: 0,
            keep_yuv: false,
            defer_rgb: false,
            keep_full_range: false,
            index: None,
            stop: None,
            seeks: 0,
        })
    }

    /// Starts reading where the keyframes are, on a thread of its own
    /// ([`SeekIndex`]): seeks then start at the right keyframe the first
    /// time, and reading on replaces seeking whenever no keyframe lies
    /// between. Once per decoder; the thread stops when the decoder is
    /// dropped. For a viewer, which seeks; a reader going through the file
    /// once does not need it.
    pub fn build_index(&mut self) {
        if self.index.is_none() {
            let tb = self.input.stream(self.stream).map(|s| s.time_base());
            let Some(tb) = tb.and_then(ratio) else { return };
            self.index = Some(IndexScan::start(&self.path, self.stream, tb, self.start_pts));
        }
    }

    /// How many times the demuxer was repositioned so far (seeks, and
    /// their retries further back).
    pub fn seeks(&self) -> u64 {
        self.seeks
    }

    /// The keyframe index, once [`build_index`](Self::build_index) started it.
    pub fn seek_index(&self) -> Option<SeekIndex> {
        self.index.as_ref().map(|s| s.index().clone())
    }

    /// Asks `stop` while decoding towards a frame ([`frame_at`](Self::frame_at)
    /// far ahead): when it says `true` the decoder gives up, returning the
    /// last frame it decoded on the way (not the one asked for), and
    /// stays consistent for whatever is asked next.
    pub fn set_stop(&mut self, stop: Option<Stop>) {
        self.stop = stop;
    }

    /// What the file holds.
    pub fn info(&self) -> &VideoInfo {
        &self.info
    }

    /// The demuxer's short name (`mov,mp4,m4a,3gp,3g2,mj2`, `mpegts`,
    /// `hls`, …).
    pub fn container(&self) -> String {
        self.input.format().name().to_owned()
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next frame in presentation order, `None` at the end.
    pub fn next_frame(&mut self) -> Result<Option<SourceFrame>, VideoError> {
        let mut f = SourceFrame::empty();
        Ok(self.read_into(&mut f)?.then_some(f))
    }

    /// Counts every packet read from now on in `counter` (of any stream:
    /// a live input that sends is alive, whether or not its packets
    /// decode into a picture yet).
    pub fn set_progress(&mut self, counter: std::sync::Arc<std::sync::atomic::AtomicU64>) {
        self.progress = Some(counter);
    }

    /// Like [`next_frame`](Self::next_frame) but fills `out`, reusing its
    /// image buffer when the size matches. Returns `false` at the end.
    ///
    /// When the file ends early (truncated or damaged), the frames before the
    /// damage come out first, then one [`VideoError::Truncated`], then the end.
    pub fn read_into(&mut self, out: &mut SourceFrame) -> Result<bool, VideoError> {
        let Some((raw, time)) = self.next_raw()? else {
            return Ok(false);
        };
        let index = self.index_of(time);
        self.learn_size(&raw, index, time)?;
        let size = (self.info.width, self.info.height);
        let reuse = out.yuv.take();
        if self.keep_yuv && self.info.rotation == 0 {
            out.yuv = Yuv420::reference(&raw, size, reuse, self.keep_full_range);
        }
        match &mut out.yuv {
            Some(yuv) if self.defer_rgb => {
                let (w, h) = (size.0 as usize, size.1 as usize);
                if out.image.dim() != (h, w, 3) {
                    out.image = RgbImage::zeros((h, w, 3));
                }
                yuv.set_rgb_pending();
            }
            _ => self
                .convert(&raw, &mut out.image)
                .map_err(|message| self.bad_frame(index, time, message))?,
        }
        out.time = time;
        out.index = index;
        out.clock = None;
        out.mask = None;
        out.calibration = None;
        self.done_with(raw, time, index);
        Ok(true)
    }

    /// Whether frames read with [`read_into`](Self::read_into) also carry
    /// the decoded picture's own YUV 4:2:0 planes ([`SourceFrame::yuv`]),
    /// for 8-bit limited-range 4:2:0 video of even size shown unrotated
    /// (other frames get `None`). Off by default: the decoder then needs
    /// more buffers, as each frame handed out keeps its picture alive.
    pub fn set_keep_yuv(&mut self, on: bool) {
        self.keep_yuv = on;
    }

    /// Whether frames that carry their YUV planes leave the RGB picture to
    /// be converted by whoever uses them ([`Yuv420::rgb_pending`],
    /// [`SourceFrame::finish_rgb`]): export converts on its parallel
    /// workers instead of the reading thread. Off by default.
    pub fn set_defer_rgb(&mut self, on: bool) {
        self.defer_rgb = on;
    }

    /// With [`set_keep_yuv`](Self::set_keep_yuv): full-range (JPEG-range)
    /// pictures keep their planes too ([`Yuv420::full_range`]), for a
    /// display that converts them itself. Off by default: export's encoder
    /// and the drawing's conversion back take limited range only.
    pub fn set_keep_full_range(&mut self, on: bool) {
        self.keep_full_range = on;
    }

    /// For mask videos: the next frame's luma (0–255, upright) into `out`,
    /// with its time and index; `None` at the end. Truncation is reported as
    /// by [`read_into`](Self::read_into).
    pub fn read_gray_into(&mut self, out: &mut MaskImage) -> Result<Option<(f64, u64)>, VideoError> {
        let Some((raw, time)) = self.next_raw()? else {
            return Ok(None);
        };
        let index = self.index_of(time);
        self.learn_size(&raw, index, time)?;
        let rotation = self.info.rotation;
        let result = if rotation == 0 {
            scale_gray(&mut self.scaler, &raw, out)
        } else {
            let mut tmp = MaskImage::zeros((0, 0));
            scale_gray(&mut self.scaler, &raw, &mut tmp).map(|()| rotate_into(&tmp, rotation, out))
        };
        result.map_err(|message| self.bad_frame(index, time, message))?;
        self.done_with(raw, time, index);
        Ok(Some((time, index)))
    }

    /// The next decoded frame to hand out, honouring a pending seek.
    fn next_raw(&mut self) -> Result<Option<(frame::Video, f64)>, VideoError> {
        let next = match self.target.take() {
            Some(t) => self.decode_to(t)?,
            None => match self.held.take() {
                Some(h) => Some(h),
                None => self.decode_raw()?,
            },
        };
        if next.is_none() && !self.end_reported {
            self.end_reported = true;
            let last = self.last.as_ref().map_or(0.0, |l| l.1);
            let reason = match self.read_error.take() {
                Some(e) => Some(format!("read error: {e}")),
                // Decoded sequentially from the start and stopped well before
                // the duration the file announces.
                None if self.at_known_end
                    && self.info.avg_fps > 0.0
                    && self.known_times.last().is_some_and(|&end| {
                        end + (2.5 / self.info.avg_fps).max(1.5 * self.max_interval) < self.info.duration
                    }) =>
                {
                    Some(format!("the file announces {:.3} s", self.info.duration))
                }
                // Not one picture came out of a file that announces some.
                None if !self.decoded_any && self.info.duration > 0.0 => Some(format!(
                    "no picture could be decoded, though the file announces {:.3} s",
                    self.info.duration
                )),
                None => None,
            };
            if let Some(reason) = reason {
                return Err(VideoError::Truncated {
                    path: self.path.clone(),
                    frames: self.returned,
                    time: last,
                    reason,
                });
            }
        }
        Ok(next)
    }

    /// A live stream that did not say its size while opening: its first
    /// picture's (upright), checked as an opened file's is.
    fn learn_size(&mut self, raw: &frame::Video, index: u64, time: f64) -> Result<(), VideoError> {
        if self.info.width != 0 && self.info.height != 0 {
            return Ok(());
        }
        let (w, h) = (raw.width(), raw.height());
        check_picture_size(w, h).map_err(|e| self.bad_frame(index, time, e))?;
        (self.info.width, self.info.height) = if self.info.rotation % 180 == 0 {
            (w, h)
        } else {
            (h, w)
        };
        Ok(())
    }

    /// Bookkeeping after a frame was handed out.
    fn done_with(&mut self, raw: frame::Video, time: f64, index: u64) {
        self.returned += 1;
        self.last_index = index;
        self.last = Some((raw, time));
    }

    fn bad_frame(&self, index: u64, time: f64, e: StepError) -> VideoError {
        VideoError::BadFrame {
            path: self.path.clone(),
            index,
            time,
            message: crate::error::chain(&e),
        }
    }

    /// Positions the decoder so that the next frame returned is the one
    /// shown at video time `t` (the last frame whose time is ≤ `t`; the
    /// first frame when `t` is before it, the last when after the end).
    pub fn seek(&mut self, t: f64) -> Result<(), VideoError> {
        if !t.is_finite() {
            return Err(VideoError::Seek {
                path: self.path.clone(),
                time: t,
                source: ffmpeg::Error::InvalidData,
            });
        }
        self.reposition(t)?;
        self.previewed = None;
        self.target = Some(Target {
            time: t,
            repositioned: true,
            retries: 0,
        });
        Ok(())
    }

    /// The frame shown at `t`: a seek and a read, but decoding forward
    /// without seeking when `t` is just ahead of the current frame (as
    /// during playback), and no decoding at all when it is the current one.
    pub fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, VideoError> {
        let ahead = self.last.as_ref().map(|l| t - l.1);
        // After the keyframe for `t` was shown, everything up to `t` is
        // decoded on from where it is, however far.
        let previewed = self.previewed.take() == Some(t);
        // No keyframe between here and there: reading on is never longer
        // than seeking (which would start from the same keyframe or an
        // earlier one).
        let same_group = match (&self.index, &self.last) {
            (Some(scan), Some(l)) => scan.index().key_between(l.1, t) == Some(false),
            _ => false,
        };
        match ahead {
            Some(d)
                if d.is_finite() && d >= -TIME_EPS && (d <= FORWARD_WINDOW || previewed || same_group) =>
            {
                self.target = Some(Target {
                    time: t,
                    repositioned: false,
                    retries: 0,
                });
            }
            _ => self.seek(t)?,
        }
        self.next_frame()
    }

    /// A fast approximation of [`frame_at`](Self::frame_at) for scrubbing:
    /// the keyframe at or before `t`, decoded alone (one frame's work, where
    /// an exact seek may decode a whole group of pictures). Reading goes on
    /// after it.
    pub fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, VideoError> {
        self.seek(t)?;
        self.target = None;
        let f = self.next_frame()?;
        self.previewed = Some(t);
        Ok(f)
    }

    /// Moves the demuxer to the keyframe at or before `t` and resets decoding.
    fn reposition(&mut self, t: f64) -> Result<(), VideoError> {
        let mut ts = self.start_pts.saturating_add((t / self.time_base).floor() as i64);
        // The keyframe the frame at `t` is decoded from, when known: the
        // demuxer then lands on it, not on one before (a group of pictures
        // decoded for nothing) or after (the frame missed, a second seek).
        let at = self
            .start_pts
            .saturating_add(((t + TIME_EPS) / self.time_base).floor() as i64);
        if let Some(k) = self.index.as_ref().and_then(|s| s.index().key_ticks_for(at)) {
            ts = k;
        }
        // SAFETY: valid format context; the stream index exists.
        let ret = unsafe {
            ffi::avformat_seek_file(self.input.as_mut_ptr(), self.stream as i32, i64::MIN, ts, ts, 0)
        };
        if ret < 0 {
            // Some demuxers cannot seek by this stream's timestamps: try the
            // generic byte/keyframe search before giving up.
            // SAFETY: as above.
            let ret2 = unsafe {
                ffi::av_seek_frame(
                    self.input.as_mut_ptr(),
                    self.stream as i32,
                    ts,
                    ffi::AVSEEK_FLAG_BACKWARD,
                )
            };
            if ret2 < 0 {
                return Err(VideoError::Seek {
                    path: self.path.clone(),
                    time: t,
                    source: ffmpeg::Error::from(ret),
                });
            }
        }
        self.seeks += 1;
        self.dec.flush();
        self.draining = false;
        self.read_error = None;
        self.bad_packets = 0;
        self.end_reported = false;
        self.held = None;
        self.last = None;
        self.at_known_end = false;
        self.skipped = false;
        Ok(())
    }

    /// Decodes forward to the frame shown at `target.time`.
    fn decode_to(&mut self, target: Target) -> Result<Option<(frame::Video, f64)>, VideoError> {
        // While decoding towards the target, frames no other frame refers
        // to are skipped when a later frame still at or before the target is
        // known: they cannot be the answer (about half of all frames in
        // typical H.264 with B-frames).
        self.skip = Some(SkipState {
            target_pts: self.start_pts + ((target.time + TIME_EPS) / self.time_base).floor() as i64,
            best_seen: None,
            skipping: false,
        });
        let result = self.decode_to_inner(target);
        if self.skip.take().is_some_and(|s| s.skipping) {
            self.set_skip_nonref(false);
        }
        result
    }

    fn set_skip_nonref(&mut self, on: bool) {
        // SAFETY: a plain field of the open codec context; decoders read it
        // for each packet submitted after the change.
        unsafe {
            (*self.dec.as_mut_ptr()).skip_frame = if on {
                ffi::AVDiscard::AVDISCARD_NONREF
            } else {
                ffi::AVDiscard::AVDISCARD_DEFAULT
            };
        }
    }

    fn decode_to_inner(&mut self, mut target: Target) -> Result<Option<(frame::Video, f64)>, VideoError> {
        let t = target.time;
        let mut cand = if target.repositioned {
            None
        } else {
            self.last.take()
        };
        if let Some(c) = &cand
            && c.1 > t + TIME_EPS
        {
            cand = None;
        }
        loop {
            // Asked to give up: the last frame on the way will do (whoever
            // asked throws it away); decoding stays where it is.
            if cand.is_some() && self.stop.as_ref().is_some_and(|stop| stop()) {
                return Ok(cand);
            }
            let next = match self.held.take() {
                Some(h) => Some(h),
                None => self.decode_raw()?,
            };
            let Some((f, ft)) = next else {
                return Ok(cand);
            };
            if ft <= t + TIME_EPS {
                cand = Some((f, ft));
                continue;
            }
            if cand.is_some() {
                self.held = Some((f, ft));
                return Ok(cand);
            }
            // The first frame is already past the target: either `t` is
            // before the first frame, or the seek landed on a keyframe after
            // `t` (demuxers index by decode time). Go further back.
            if target.repositioned && target.retries < 4 && ft > TIME_EPS {
                target.retries += 1;
                let back = t - f64::from(1u32 << (2 * target.retries)) * 0.5;
                if back < 0.0 {
                    target.retries = 4;
                }
                self.reposition(back.max(-1.0))?;
                if let Some(sk) = &mut self.skip {
                    sk.best_seen = None;
                }
                continue;
            }
            return Ok(Some((f, ft)));
        }
    }

    /// Decodes the next frame in presentation order with its time.
    fn decode_raw(&mut self) -> Result<Option<(frame::Video, f64)>, VideoError> {
        let mut f = frame::Video::empty();
        loop {
            match self.dec.receive_frame(&mut f) {
                Ok(()) => {
                    self.bad_packets = 0;
                    self.decoded_any = true;
                    let time = self.time_of(&f);
                    self.record(time);
                    return Ok(Some((f, time)));
                }
                Err(ffmpeg::Error::Eof) => return Ok(None),
                Err(ffmpeg::Error::Other { errno }) if errno == ffi::EAGAIN => {}
                // A damaged packet surfaces here with threaded decoding.
                Err(e) => self.count_bad(e)?,
            }
            if self.draining {
                return Ok(None);
            }
            self.feed_packet()?;
        }
    }

    /// Reads the next packet of our stream and sends it to the decoder, or
    /// signals the end of the stream.
    fn feed_packet(&mut self) -> Result<(), VideoError> {
        loop {
            // av_read_frame fills the packet without freeing what it held:
            // the last packet's data is let go here (sending it to the
            // decoder took a reference of its own). Without this every
            // packet of a video stayed in memory until the decoder closed.
            // SAFETY: a valid packet, left blank for the read.
            unsafe { ffi::av_packet_unref(ffmpeg::packet::Mut::as_mut_ptr(&mut self.packet)) };
            let read = match self.queued.pop_front() {
                Some(p) => {
                    self.packet = p;
                    Ok(())
                }
                None => match self.queued_error.take() {
                    Some(e) => Err(e),
                    None => self.packet.read(&mut self.input),
                },
            };
            if let (Ok(()), Some(p)) = (&read, &self.progress) {
                p.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            match read {
                Ok(()) if self.packet.stream() == self.stream => break,
                Ok(()) => continue,
                Err(e) => {
                    if e != ffmpeg::Error::Eof {
                        self.read_error = Some(e);
                    }
                    self.draining = true;
                    // Only fails when already draining.
                    let _ = self.dec.send_eof();
                    return Ok(());
                }
            }
        }
        if let Some(mut sk) = self.skip {
            let pts = self.packet.pts();
            let skip = matches!((pts, sk.best_seen), (Some(p), Some(b)) if b > p);
            if skip != sk.skipping {
                self.set_skip_nonref(skip);
                sk.skipping = skip;
            }
            if skip {
                // Frames may go missing: the known sequence is broken here.
                self.skipped = true;
                self.at_known_end = false;
            }
            if let Some(p) = pts.filter(|&p| p <= sk.target_pts) {
                sk.best_seen = Some(sk.best_seen.map_or(p, |b| b.max(p)));
            }
            self.skip = Some(sk);
        }
        match self.dec.send_packet(&self.packet) {
            Ok(()) => {}
            Err(ffmpeg::Error::Other { errno }) if errno == ffi::EAGAIN => {
                return Err(self.decode_error("decoder refused input while it had no output".into()));
            }
            Err(e) => self.count_bad(e)?,
        }
        Ok(())
    }

    /// A damaged packet: the decoder conceals it; give up only when nothing
    /// decodes any more.
    fn count_bad(&mut self, e: ffmpeg::Error) -> Result<(), VideoError> {
        if self.live && !self.decoded_any {
            // Joined between keyframes: nothing decodes until the next one.
            return Ok(());
        }
        self.bad_packets += 1;
        if self.bad_packets > MAX_BAD_PACKETS {
            return Err(self.decode_error(format!("{MAX_BAD_PACKETS} damaged packets in a row ({e})")));
        }
        Ok(())
    }

    fn decode_error(&self, message: String) -> VideoError {
        VideoError::Decode {
            path: self.path.clone(),
            index: self.last_index,
            time: self.last.as_ref().map_or(0.0, |l| l.1),
            message,
        }
    }

    /// Presentation time of a decoded frame in seconds from the stream start.
    fn time_of(&self, f: &frame::Video) -> f64 {
        match f.pts().or_else(|| f.timestamp()) {
            Some(pts) => (pts - self.start_pts) as f64 * self.time_base,
            None => {
                let step = if self.info.avg_fps > 0.0 {
                    1.0 / self.info.avg_fps
                } else {
                    1.0 / 30.0
                };
                self.held
                    .as_ref()
                    .or(self.last.as_ref())
                    .map_or(0.0, |(_, t)| t + step)
            }
        }
    }

    /// Notes the time of each frame the decoder outputs, in order, while
    /// the sequence from the start of the stream is unbroken.
    fn record(&mut self, time: f64) {
        let known = &mut self.known_times;
        match known.last() {
            // The stream's first frame, however it was reached.
            None if time.abs() <= TIME_EPS => self.at_known_end = true,
            // Decoding reached the end of the known part again, with no
            // frame skipped on the way: what follows extends it.
            Some(&l) if (time - l).abs() <= TIME_EPS && !self.skipped => self.at_known_end = true,
            _ => {}
        }
        if self.at_known_end && known.last().is_none_or(|&l| time > l + TIME_EPS) {
            if let Some(&l) = known.last() {
                self.max_interval = self.max_interval.max(time - l);
            }
            known.push(time);
        }
    }

    /// The presentation index of the frame at `time` (see [`SourceFrame::index`]).
    fn index_of(&self, time: f64) -> u64 {
        let known = &self.known_times;
        let i = known.partition_point(|&k| k < time - TIME_EPS);
        if i < known.len() && (known[i] - time).abs() <= TIME_EPS {
            return i as u64;
        }
        (time * self.info.avg_fps).round().max(0.0) as u64
    }

    /// Converts a decoded frame into an upright RGB image of the stream's size.
    fn convert(&mut self, raw: &frame::Video, out: &mut RgbImage) -> Result<(), StepError> {
        let rotation = self.info.rotation;
        if rotation == 0 {
            return scale_rgb(&mut self.scaler, raw, out, self.info.width, self.info.height);
        }
        let (w, h) = if rotation % 180 == 0 {
            (self.info.width, self.info.height)
        } else {
            (self.info.height, self.info.width)
        };
        scale_rgb(&mut self.scaler, raw, &mut self.unrotated, w, h)?;
        rotate_into(&self.unrotated, rotation, out);
        Ok(())
    }
}

/// Converts (and scales, if the stream changed size) a decoded frame into
/// `out` as `w`×`h` RGB, writing straight into its buffer.
fn scale_rgb(
    cache: &mut Option<Scaler>,
    raw: &frame::Video,
    out: &mut RgbImage,
    w: u32,
    h: u32,
) -> Result<(), StepError> {
    if out.dim() != (h as usize, w as usize, 3) {
        *out = RgbImage::zeros((h as usize, w as usize, 3));
    }
    let buf = out
        .as_slice_mut()
        .ok_or_else(|| "frame buffer is not contiguous".to_string())?;
    let fmt: ffi::AVPixelFormat = raw.format().into();
    let color = Colorimetry::of_frame(raw);
    if matches!(
        fmt,
        ffi::AVPixelFormat::AV_PIX_FMT_YUV420P | ffi::AVPixelFormat::AV_PIX_FMT_YUVJ420P
    ) && (raw.width(), raw.height()) == (w, h)
    {
        let (wu, hu) = (w as usize, h as usize);
        let (cw, ch) = (wu.div_ceil(2), hu.div_ceil(2));
        let plane = |i: usize, pw: usize, ph: usize| -> Result<Plane<'_>, StepError> {
            let stride = raw.stride(i);
            let data = raw.data(i);
            if stride < pw || data.len() < stride * (ph - 1) + pw {
                return Err(StepError::new(format!(
                    "decoded plane {i} is smaller than the picture"
                )));
            }
            Ok(Plane { data, stride })
        };
        yuv420_to_rgb(
            plane(0, wu, hu)?,
            plane(1, cw, ch)?,
            plane(2, cw, ch)?,
            wu,
            hu,
            buf,
            &InvCoeffs::for_space(color.space, color.full_range),
        );
        return Ok(());
    }
    let scaler = Scaler::cached(
        cache,
        fmt,
        raw.width(),
        raw.height(),
        ffi::AVPixelFormat::AV_PIX_FMT_RGB24,
        w,
        h,
        color,
    )?;
    // SAFETY: the source planes belong to a decoded frame of the size and
    // format the scaler was made for; the destination holds h rows of 3w bytes.
    unsafe {
        scaler.run(
            &Planes::of_frame(raw.as_ptr()),
            &Planes::packed(buf.as_mut_ptr(), 3 * w as usize),
        );
    }
    Ok(())
}

/// The luma of a decoded frame as a full-range gray image of its size.
fn scale_gray(cache: &mut Option<Scaler>, raw: &frame::Video, out: &mut MaskImage) -> Result<(), StepError> {
    let (w, h) = (raw.width(), raw.height());
    if out.dim() != (h as usize, w as usize) {
        *out = MaskImage::zeros((h as usize, w as usize));
    }
    let buf = out
        .as_slice_mut()
        .ok_or_else(|| "mask buffer is not contiguous".to_string())?;
    let fmt: ffi::AVPixelFormat = raw.format().into();
    if fmt == ffi::AVPixelFormat::AV_PIX_FMT_GRAY8 {
        let stride = raw.stride(0);
        let data = raw.data(0);
        for (row, dst) in buf.chunks_exact_mut(w as usize).enumerate() {
            dst.copy_from_slice(&data[row * stride..][..w as usize]);
        }
        return Ok(());
    }
    let scaler = Scaler::cached(
        cache,
        fmt,
        w,
        h,
        ffi::AVPixelFormat::AV_PIX_FMT_GRAY8,
        w,
        h,
        Colorimetry::of_frame(raw),
    )?;
    // SAFETY: source planes of a decoded frame of this size and format;
    // the destination holds h rows of w bytes.
    unsafe {
        scaler.run(
            &Planes::of_frame(raw.as_ptr()),
            &Planes::packed(buf.as_mut_ptr(), w as usize),
        );
    }
    Ok(())
}

/// Refuses empty and absurdly large pictures ([`crate::image::MAX_PIXELS`]).
/// A stream whose size FFmpeg could not read says so rather than "0×0":
/// FFmpeg leaves the size at 0 when the header claims one it refuses
/// (65535×65535, say) or when it is damaged.
fn check_picture_size(w: u32, h: u32) -> Result<(), StepError> {
    if w == 0 || h == 0 {
        return Err(StepError::new(format!(
            "the video stream's picture size could not be read ({w}×{h}): its header is damaged or \
             claims a size FFmpeg refuses (pictures may have at most 8192×8192 pixels)"
        )));
    }
    Ok(crate::image::check_picture_size(w, h)?)
}

/// Clockwise degrees (0, 90, 180, 270) to display a stream upright, from its
/// display matrix; other angles are ignored.
fn display_rotation(stream: &ffmpeg::format::stream::Stream) -> i32 {
    for sd in stream.side_data() {
        if sd.kind() == ffmpeg::codec::packet::side_data::Type::DisplayMatrix && sd.data().len() >= 36 {
            let mut m = [0i32; 9];
            for (v, b) in m.iter_mut().zip(sd.data().chunks_exact(4)) {
                *v = i32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            }
            // SAFETY: m holds the 9 entries the function reads.
            let ccw = unsafe { ffi::av_display_rotation_get(m.as_ptr()) };
            if !ccw.is_finite() {
                return 0;
            }
            let cw = (-ccw).rem_euclid(360.0);
            let q = (cw / 90.0).round();
            if (cw - q * 90.0).abs() < 1.0 {
                return ((q as i32) * 90).rem_euclid(360);
            }
        }
    }
    0
}

/// Frame rate as a rational close to `fps` (for encoders and containers).
pub(crate) fn rational_fps(fps: f64) -> Rational {
    if !(fps.is_finite() && fps > 0.0) {
        return Rational::new(30, 1);
    }
    let r = (fps * 1001.0).round();
    if (r / 1001.0 - fps.round()).abs() < 1e-9 {
        Rational::new(fps.round() as i32, 1)
    } else if ((fps * 1001.0 / 1000.0) - (fps * 1001.0 / 1000.0).round()).abs() < 1e-3 {
        Rational::new(((fps * 1001.0 / 1000.0).round() * 1000.0) as i32, 1001)
    } else {
        Rational::new((fps * 1000.0).round() as i32, 1000)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn picture_sizes_are_bounded() {
        use super::check_picture_size as c;
        assert!(c(1920, 1080).is_ok() && c(7680, 4320).is_ok() && c(16384, 100).is_ok());
        assert!(c(0, 10).is_err() && c(10, 0).is_err());
        assert!(c(60000, 60000).unwrap_err().what.contains("too large"));
        assert!(c(16385, 2).is_err());
    }

    #[test]
    fn frame_rates_become_exact_rationals() {
        use ffmpeg_next::Rational;
        assert_eq!(super::rational_fps(25.0), Rational::new(25, 1));
        assert_eq!(super::rational_fps(30000.0 / 1001.0), Rational::new(30000, 1001));
        assert_eq!(super::rational_fps(12.5), Rational::new(12500, 1000));
        assert_eq!(super::rational_fps(f64::NAN), Rational::new(30, 1));
    }
}
