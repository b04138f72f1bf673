//! Encoding: RGB frames, or decoded YUV 4:2:0 frames as they are, to H.264
//! (libx264, yuv420p) in MP4 with faststart,
//! or floor masks to lossless FFV1 (gray; PNG pictures beyond 4K UHD) in
//! Matroska; frame times kept
//! exactly (variable frame rate stays variable), audio streams of a source
//! file copied unchanged (re-encoded as AAC only when the container cannot
//! hold them: [`super::audio`]).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

use ffmpeg_next as ffmpeg;
use ffmpeg_next::ffi;
use ffmpeg_next::{Dictionary, Packet, Rational, codec, frame};

use super::audio::AudioCopy;
use super::convert::{Colorimetry, Planes, Scaler};
use super::decode::rational_fps;
use super::planes::{Yuv420, convert_changed, planes_mut};
use super::yuv::{Coeffs, Plane, rgb_to_yuv420, same_matrix};
use super::{SourceFrame, VideoError, init, ratio};
use crate::image::{MaskImage, RgbImage};

/// Audio is written at most this far (seconds) ahead of the video.
const AUDIO_LEAD: f64 = 0.5;

/// Largest mask picture written as FFV1 (4K UHD); larger masks are PNG
/// pictures in the same Matroska file (see [`Encoder::create`]).
pub const MAX_FFV1_PIXELS: u64 = 3840 * 2160;

/// Which audio an export of a part copies, in video times (seconds) of
/// the `audio_from` file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AudioWindow {
    /// The time that becomes output time 0.
    pub origin: f64,
    /// Packets that play from here on (`-inf`: from the file's start,
    /// including audio before the first picture)…
    pub from: f64,
    /// …and start before this time (`inf`: to the end).
    pub to: f64,
    /// Cut between two segments of one export: a packet belongs to the
    /// part its start time falls in, so joined parts hold each packet
    /// once. Otherwise a packet playing across `from` is copied whole.
    pub split: bool,
}

/// How to encode.
#[derive(Clone, Debug, PartialEq)]
pub struct EncoderSettings {
    /// x264 constant rate factor, 0–51 (lower is better and bigger).
    pub crf: u8,
    /// x264 preset (ultrafast … veryslow).
    pub preset: String,
    /// Nominal frame rate: tells the rate control and the container what to
    /// expect, and gives the last frame its duration when nothing else does.
    pub fps_hint: f64,
    /// Lossless 8-bit gray (FFV1, every frame a keyframe) instead of H.264;
    /// for mask videos. Needs a `.mkv` file.
    pub gray_lossless: bool,
    /// Lossless pictures with an alpha channel (FFV1 in BGRA, every frame
    /// a keyframe), pushed with [`Encoder::push_rgba`]: drawings alone, for
    /// compositing elsewhere (OBS). Needs Matroska (a `.mkv` file, or a
    /// stream in `matroska`).
    pub alpha: bool,
    /// Time base of the output stream as (numerator, denominator). Frame
    /// times are rounded to it; give the input's
    /// ([`VideoInfo::time_base`](super::VideoInfo)) to keep its timestamps
    /// exactly. `None`: 1/90000 s.
    pub time_base: Option<(i32, i32)>,
    /// Copy every audio stream of this file (unchanged; re-encoded as AAC
    /// only when the output container cannot hold its codec) into the
    /// output, aligned with the video times of that file.
    pub audio_from: Option<PathBuf>,
    /// Copy only this part of the `audio_from` file's audio (an export of
    /// a part); `None`: all of it.
    pub audio_window: Option<AudioWindow>,
    /// Written into the file's metadata as its comment (`underlay export
    /// --segment` says which part of which export it is).
    pub comment: Option<String>,
    /// Encoder threads; 0 lets the encoder decide.
    pub threads: usize,
    /// Largest distance between keyframes in frames (shorter GOPs seek
    /// faster, cost bits); 0 keeps the encoder's default (250 for x264).
    pub keyframe_interval: u32,
    /// The output is a stream (a pipe, a device, standard output) in this
    /// container (an extension: `mp4`, `ts`, `mkv`): written as it is made,
    /// MP4 fragmented, nothing sought back into.
    pub stream_format: Option<String>,
    /// Encode for a live stream: x264 tuned for zero latency (no B-frames,
    /// no look-ahead, frames in slices), each packet written as soon as it
    /// is made (lasting one nominal frame, `fps_hint`) and handed on by the
    /// muxer at once, not gathered for a later interleave.
    pub live: bool,
}

impl Default for EncoderSettings {
    fn default() -> Self {
        EncoderSettings {
            crf: 20,
            preset: "veryfast".into(),
            fps_hint: 30.0,
            gray_lossless: false,
            alpha: false,
            time_base: None,
            audio_from: None,
            audio_window: None,
            comment: None,
            threads: 0,
            keyframe_interval: 0,
            stream_format: None,
            live: false,
        }
    }
}

/// Writes a video file frame by frame.
pub struct Encoder {
    path: PathBuf,
    octx: ffmpeg::format::context::Output,
    enc: ffmpeg::codec::encoder::video::Encoder,
    enc_tb: Rational,
    tb: f64,
    stream_tb: Rational,
    stream_index: usize,
    /// Size of the pictures pushed.
    width: u32,
    height: u32,
    /// Size encoded (H.264 4:2:0 needs even sizes: odd ones lose a column/row).
    enc_width: u32,
    enc_height: u32,
    gray: bool,
    /// BGRA pictures with alpha ([`EncoderSettings::alpha`]).
    alpha: bool,
    color: Colorimetry,
    coeffs: Coeffs,
    frame: frame::Video,
    /// A reference to a picture made elsewhere (a frame's planes,
    /// [`Yuv420::draw_planes`]) while it is sent.
    sent: frame::Video,
    scaler: Option<Scaler>,
    fps_hint: f64,
    last_pts: Option<i64>,
    last_time: f64,
    last_duration: Option<i64>,
    /// Packets go out as soon as they are made ([`EncoderSettings::live`]).
    live: bool,
    /// Duration of each frame (by pts) once the next frame's time is known.
    durations: HashMap<i64, i64>,
    /// Encoded packets waiting for their duration.
    held: VecDeque<Packet>,
    pushed: u64,
    audio: Option<AudioCopy>,
    warnings: Vec<String>,
}

impl Encoder {
    /// Creates `path` (the container is chosen by its extension) for
    /// pictures of `width`×`height`.
    pub fn create(
        path: &Path,
        width: u32,
        height: u32,
        settings: &EncoderSettings,
    ) -> Result<Encoder, VideoError> {
        init();
        let p = path.to_owned();
        let bad = |message: String| VideoError::Settings {
            path: p.clone(),
            message,
        };
        if width < 2 || height < 2 {
            return Err(bad(format!("cannot encode a {width}×{height} picture")));
        }
        crate::image::check_picture_size(width, height).map_err(bad)?;
        if settings.crf > 51 {
            return Err(bad(format!("crf must be 0–51, not {}", settings.crf)));
        }
        let tb = match settings.time_base {
            Some((n, d)) if n > 0 && d > 0 => Rational::new(n, d),
            Some((n, d)) => return Err(bad(format!("invalid time base {n}/{d}"))),
            None => Rational::new(1, 90_000),
        };
        let fps_hint = if settings.fps_hint.is_finite() && settings.fps_hint > 0.0 {
            settings.fps_hint
        } else {
            return Err(bad(format!(
                "fps_hint must be positive, not {}",
                settings.fps_hint
            )));
        };
        let opened = match &settings.stream_format {
            Some(ext) => {
                let name = guess_format(ext).ok_or_else(|| bad(format!("no container for .{ext}")))?;
                output_as(path, &name)
            }
            None => ffmpeg::format::output(path),
        };
        let mut octx = opened.map_err(|e| {
            // The extension hint only when the extension is the problem (a
            // read-only folder or a full disk is not).
            if super::is_known_container(path) {
                bad(format!("cannot create output ({e})"))
            } else {
                bad(format!(
                    "cannot create output ({e}); the extension picks the container, e.g. .mp4 or .mkv"
                ))
            }
        })?;
        let fmt_name = octx.format().name().to_string();
        let is_mp4 = fmt_name.split(',').any(|n| n == "mp4" || n == "mov");
        let alpha = settings.alpha;
        // Lossless and intra-only: masks, and pictures with alpha.
        let gray = settings.gray_lossless || alpha;
        if gray && !fmt_name.contains("matroska") {
            return Err(bad(if alpha {
                "pictures with alpha are written as Matroska (a .mkv file, or a stream in matroska)".into()
            } else {
                "a lossless mask video must be a Matroska (.mkv) file".into()
            }));
        }
        // FFmpeg's FFV1 encoder zeroes a worst-case packet buffer of about
        // 60 bytes per pixel (2.15 GB for an 8192×4320 mask); beyond 4K
        // UHD masks are written as PNG pictures instead, as lossless and
        // read the same way, with buffers of the picture's own size.
        let (codec_id, enc_width, enc_height) =
            if gray && !alpha && u64::from(width) * u64::from(height) > MAX_FFV1_PIXELS {
                (codec::Id::PNG, width, height)
            } else if gray {
                (codec::Id::FFV1, width, height)
            } else {
                (codec::Id::H264, width & !1, height & !1)
            };
        let codec = ffmpeg::encoder::find(codec_id)
            .ok_or_else(|| bad(format!("this FFmpeg has no {} encoder", codec_id.name())))?;
        let global_header = octx
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);

        let color = Colorimetry::default_for_size(enc_width, enc_height);
        let mut enc = codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| bad(format!("cannot set up the encoder: {e}")))?;
        enc.set_width(enc_width);
        enc.set_height(enc_height);
        enc.set_time_base(tb);
        enc.set_frame_rate(Some(rational_fps(fps_hint)));
        let pix = if alpha {
            ffmpeg::format::Pixel::BGRA
        } else if gray {
            ffmpeg::format::Pixel::GRAY8
        } else {
            ffmpeg::format::Pixel::YUV420P
        };
        enc.set_format(pix);
        if gray {
            enc.set_gop(1);
        } else {
            if settings.keyframe_interval > 0 {
                enc.set_gop(settings.keyframe_interval);
            }
            let (space, prim, trc) = if color.space == 1 {
                (
                    ffmpeg::color::Space::BT709,
                    ffmpeg::color::Primaries::BT709,
                    ffmpeg::color::TransferCharacteristic::BT709,
                )
            } else {
                (
                    ffmpeg::color::Space::SMPTE170M,
                    ffmpeg::color::Primaries::SMPTE170M,
                    ffmpeg::color::TransferCharacteristic::SMPTE170M,
                )
            };
            enc.set_colorspace(space);
            enc.set_color_primaries(prim);
            enc.set_color_transfer_characteristic(trc);
            enc.set_color_range(ffmpeg::color::Range::MPEG);
        }
        // set_flags replaces the codec's default flags: libx264's include
        // closed GOPs, so that every keyframe is an IDR picture where a
        // player can start (open GOPs break seeking in browsers).
        let mut flags = codec::Flags::empty();
        if !gray {
            flags |= codec::Flags::CLOSED_GOP;
        }
        if global_header {
            flags |= codec::Flags::GLOBAL_HEADER;
        }
        enc.set_flags(flags);
        enc.set_threading(codec::threading::Config {
            // Frame threads hold pictures back, one per thread.
            kind: if settings.live {
                codec::threading::Type::Slice
            } else {
                codec::threading::Type::Frame
            },
            count: settings.threads,
            ..Default::default()
        });
        let mut opts = Dictionary::new();
        if codec_id == codec::Id::FFV1 {
            opts.set("level", "3");
            opts.set("slicecrc", "0");
            if alpha {
                // Slices are coded in parallel.
                opts.set("slices", "16");
            }
        } else if gray {
            // PNG: nothing to set (its default prediction suits masks).
        } else {
            opts.set("preset", &settings.preset);
            opts.set("crf", &settings.crf.to_string());
            if settings.live {
                opts.set("tune", "zerolatency");
            }
        }
        let enc = enc.open_with(opts).map_err(|e| {
            bad(if gray {
                format!("cannot open the {} encoder: {e}", codec_id.name())
            } else {
                format!(
                    "cannot open libx264 with preset {:?} and crf {}: {e}",
                    settings.preset, settings.crf
                )
            })
        })?;
        let stream_index = {
            let mut ost = octx
                .add_stream(codec)
                .map_err(|e| bad(format!("cannot add the video stream: {e}")))?;
            ost.set_parameters(&enc);
            ost.set_time_base(tb);
            ost.set_avg_frame_rate(rational_fps(fps_hint));
            ost.index()
        };

        let mut warnings = Vec::new();
        let audio = match &settings.audio_from {
            Some(src) => AudioCopy::open(src, settings.audio_window, &mut octx, &mut warnings)?,
            None => None,
        };

        if let Some(comment) = &settings.comment {
            let mut meta = Dictionary::new();
            meta.set("comment", comment);
            octx.set_metadata(meta);
        }
        let mut header_opts = Dictionary::new();
        if is_mp4 && settings.stream_format.is_some() {
            // Nothing can be sought back into: the index first, then fragments.
            header_opts.set("movflags", "+frag_keyframe+empty_moov+default_base_moof");
        } else if is_mp4 {
            header_opts.set("movflags", "+faststart");
            // A file starting later than 0 (a part of an export, a video
            // whose first frame is late) says so with an edit list in the
            // movie's time scale (1/1000 s by default): one every track's
            // scale divides keeps the start exact, so joined parts keep the
            // whole export's times.
            if let Some(scale) = common_timescale(&octx) {
                header_opts.set("movie_timescale", &scale.to_string());
            }
        }
        if settings.live {
            // Every packet out as it is written: no interleaving queue, no
            // muxing delay (MPEG-TS waits 0.7 s by default).
            header_opts.set("flush_packets", "1");
            header_opts.set("max_delay", "0");
            header_opts.set("max_interleave_delta", "0");
        }
        octx.write_header_with(header_opts)
            .map_err(|e| bad(format!("cannot write the file header: {e}")))?;
        let stream_tb = octx
            .stream(stream_index)
            .map(|s| s.time_base())
            .ok_or_else(|| bad("the video stream vanished".into()))?;

        let mut frame = frame::Video::new(pix, enc_width, enc_height);
        unsafe_set_color(&mut frame, gray, color);
        Ok(Encoder {
            path: p,
            octx,
            enc,
            enc_tb: tb,
            tb: ratio(tb).unwrap_or(1.0 / 90_000.0),
            stream_tb,
            stream_index,
            width,
            height,
            enc_width,
            enc_height,
            gray,
            alpha,
            color,
            coeffs: Coeffs::for_space(color.space),
            frame,
            sent: frame::Video::empty(),
            scaler: None,
            fps_hint,
            last_pts: None,
            last_time: 0.0,
            last_duration: None,
            live: settings.live,
            durations: HashMap::new(),
            held: VecDeque::new(),
            pushed: 0,
            audio,
            warnings,
        })
    }

    /// Things that did not stop encoding but the user should know (audio
    /// streams the container cannot hold, …).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Frames pushed so far.
    pub fn frames(&self) -> u64 {
        self.pushed
    }

    /// Adds a picture shown from `time` (seconds) until the next one.
    /// Times must increase.
    pub fn push(&mut self, image: &RgbImage, time: f64) -> Result<(), VideoError> {
        let (h, w, _) = image.dim();
        self.check_size(w, h, time)?;
        let std = image.as_standard_layout();
        let slice = std
            .as_slice()
            .ok_or_else(|| self.bad_frame(time, "non-contiguous image".into()))?;
        if self.alpha {
            let bgra = (
                ffi::AVPixelFormat::AV_PIX_FMT_RGB24,
                ffi::AVPixelFormat::AV_PIX_FMT_BGRA,
            );
            self.convert_in(slice, bgra.0, 3, bgra.1, time)?;
        } else if self.gray {
            let (rgb, gray) = (
                ffi::AVPixelFormat::AV_PIX_FMT_RGB24,
                ffi::AVPixelFormat::AV_PIX_FMT_GRAY8,
            );
            self.convert_in(slice, rgb, 3, gray, time)?;
        } else {
            self.rgb_to_frame(slice, time)?;
        }
        self.send(time)
    }

    /// Adds a decoded (and perhaps annotated) frame shown from `time`: its
    /// YUV planes ([`SourceFrame::yuv`]) as decoded or drawn on, by
    /// reference (no copy), when they match this encoder's size, colour
    /// matrix and (limited) range; with the parts of its RGB picture marked changed converted
    /// in, when some are ([`Yuv420::mark_changed`], not yet baked); else
    /// the whole RGB picture converted (from the planes, when it is
    /// pending).
    pub fn push_frame(&mut self, frame: &SourceFrame, time: f64) -> Result<(), VideoError> {
        match &frame.yuv {
            Some(yuv)
                if !self.gray
                    && !self.alpha
                    && (self.enc_width, self.enc_height) == (self.width, self.height)
                    && (yuv.width(), yuv.height()) == (self.width as usize, self.height as usize)
                    && same_matrix(yuv.space(), self.color.space)
                    && !yuv.full_range() =>
            {
                self.check_size(yuv.width(), yuv.height(), time)?;
                if yuv.changed().is_empty() {
                    return self.send_baked(yuv.frame(), time);
                }
                let rgb = frame
                    .image
                    .as_slice()
                    .filter(|r| r.len() == 3 * yuv.width() * yuv.height())
                    .ok_or_else(|| {
                        self.bad_frame(time, "marked changes without a picture of its size".into())
                    })?;
                self.yuv_to_frame(yuv, rgb, time)?;
                self.send(time)
            }
            Some(yuv) if yuv.rgb_pending() => {
                let mut rgb = crate::image::RgbImage::zeros((0, 0, 3));
                yuv.planes().to_rgb(&mut rgb);
                self.push(&rgb, time)
            }
            _ => self.push(&frame.image, time),
        }
    }

    /// Sends a picture made elsewhere (a reference to it, not a copy: the
    /// encoder copies what it keeps before `send_frame` returns, or keeps
    /// a reference of its own).
    fn send_baked(&mut self, baked: &frame::Video, time: f64) -> Result<(), VideoError> {
        // SAFETY: valid frames; the old reference is dropped first.
        let ret = unsafe {
            ffi::av_frame_unref(self.sent.as_mut_ptr());
            ffi::av_frame_ref(self.sent.as_mut_ptr(), baked.as_ptr())
        };
        if ret < 0 {
            return Err(self.encode_error(time, ffmpeg::Error::from(ret)));
        }
        // A decoded picture carries its decoder's frame type and side
        // data, which x264 would follow (keyframes where the input had
        // them): the reference sent carries neither.
        // SAFETY: plain fields of a valid frame, and its own side data list
        // (the buffers they hold are references, released here).
        unsafe {
            let f = self.sent.as_mut_ptr();
            (*f).pict_type = ffi::AVPictureType::AV_PICTURE_TYPE_NONE;
            (*f).key_frame = 0;
            // Each removal takes away at least the first entry (all of
            // its type), so the list empties.
            loop {
                if (*f).nb_side_data <= 0 {
                    break;
                }
                let kind = (*(*(*f).side_data)).type_;
                ffi::av_frame_remove_side_data(f, kind);
            }
        }
        unsafe_set_color(&mut self.sent, false, self.color);
        let result = self.send_picture(time, true);
        // SAFETY: a valid frame; drops the reference so the maker may
        // write its buffer again.
        unsafe { ffi::av_frame_unref(self.sent.as_mut_ptr()) };
        result
    }

    /// Adds a picture with alpha (`rgba`: rows of straight, not
    /// premultiplied, RGBA, as wide as the encoder's pictures) shown from
    /// `time`, to an encoder made with [`EncoderSettings::alpha`].
    pub fn push_rgba(&mut self, rgba: &[u8], time: f64) -> Result<(), VideoError> {
        let (w, h) = (self.width as usize, self.height as usize);
        if !self.alpha {
            return Err(self.bad_frame(time, "this encoder was not made for pictures with alpha".into()));
        }
        if rgba.len() != 4 * w * h {
            return Err(self.bad_frame(
                time,
                format!("{} bytes of RGBA for a {w}×{h} picture", rgba.len()),
            ));
        }
        self.check_size(w, h, time)?;
        self.convert_in(
            rgba,
            ffi::AVPixelFormat::AV_PIX_FMT_RGBA,
            4,
            ffi::AVPixelFormat::AV_PIX_FMT_BGRA,
            time,
        )?;
        self.send(time)
    }

    /// Adds a mask (255 = floor) shown from `time`; stored losslessly by a
    /// gray encoder, as a black-and-white picture by an H.264 one.
    pub fn push_mask(&mut self, mask: &MaskImage, time: f64) -> Result<(), VideoError> {
        if self.alpha {
            return Err(self.bad_frame(time, "an encoder of pictures with alpha takes no masks".into()));
        }
        let (h, w) = mask.dim();
        self.check_size(w, h, time)?;
        let std = mask.as_standard_layout();
        let slice = std
            .as_slice()
            .ok_or_else(|| self.bad_frame(time, "non-contiguous mask".into()))?;
        if self.gray {
            self.writable(time)?;
            let stride = self.frame.stride(0);
            let plane = self.frame.data_mut(0);
            for (row, src) in slice.chunks_exact(w).enumerate() {
                plane[row * stride..row * stride + w].copy_from_slice(src);
            }
        } else {
            self.convert_in(
                slice,
                ffi::AVPixelFormat::AV_PIX_FMT_GRAY8,
                1,
                ffi::AVPixelFormat::AV_PIX_FMT_YUV420P,
                time,
            )?;
        }
        self.send(time)
    }

    /// Flushes the encoder and closes the file; the last frame lasts as long
    /// as the one before it.
    pub fn finish(self) -> Result<(), VideoError> {
        self.finish_inner(None)
    }

    /// Like [`finish`](Self::finish), but the last frame is shown until
    /// `end_time` (so the video's duration is `end_time`), when that is after it.
    pub fn finish_at(self, end_time: f64) -> Result<(), VideoError> {
        self.finish_inner(Some(end_time))
    }

    fn finish_inner(mut self, end_time: Option<f64>) -> Result<(), VideoError> {
        let Some(last) = self.last_pts else {
            return Err(VideoError::Settings {
                path: self.path.clone(),
                message: "no frames were given to encode".into(),
            });
        };
        let from_end = end_time
            .filter(|t| t.is_finite())
            .map(|t| (t / self.tb).round() as i64 - last)
            .filter(|&d| d > 0);
        let dur = from_end
            .or(self.last_duration)
            .unwrap_or_else(|| ((1.0 / self.fps_hint) / self.tb).round().max(1.0) as i64);
        self.durations.insert(last, dur);
        let time = self.last_time;
        self.enc.send_eof().map_err(|e| self.encode_error(time, e))?;
        self.drain(time)?;
        if !self.held.is_empty() {
            return Err(self.encode_error_msg(time, "encoded packets with unknown timestamps remain".into()));
        }
        if let Some(a) = &mut self.audio {
            a.pump(f64::INFINITY, &mut self.octx)
                .map_err(|e| VideoError::Encode {
                    path: self.path.clone(),
                    index: self.pushed,
                    time,
                    message: crate::error::chain(&e),
                })?;
        }
        self.octx.write_trailer().map_err(|e| self.encode_error(time, e))
    }

    fn check_size(&self, w: usize, h: usize, time: f64) -> Result<(), VideoError> {
        if (w, h) != (self.width as usize, self.height as usize) {
            return Err(self.bad_frame(
                time,
                format!(
                    "picture is {w}×{h} but the encoder was created for {}×{}",
                    self.width, self.height
                ),
            ));
        }
        if !time.is_finite() {
            return Err(self.bad_frame(time, "frame time is not a finite number".into()));
        }
        Ok(())
    }

    fn bad_frame(&self, time: f64, message: String) -> VideoError {
        VideoError::BadFrame {
            path: self.path.clone(),
            index: self.pushed,
            time,
            message,
        }
    }

    fn encode_error(&self, time: f64, e: ffmpeg::Error) -> VideoError {
        self.encode_error_msg(time, e.to_string())
    }

    fn encode_error_msg(&self, time: f64, message: String) -> VideoError {
        VideoError::Encode {
            path: self.path.clone(),
            index: self.pushed,
            time,
            message,
        }
    }

    /// Makes the reusable frame writable (the encoder may still hold it).
    fn writable(&mut self, time: f64) -> Result<(), VideoError> {
        // SAFETY: valid frame allocated with buffers.
        let ret = unsafe { ffi::av_frame_make_writable(self.frame.as_mut_ptr()) };
        if ret < 0 {
            return Err(self.encode_error(time, ffmpeg::Error::from(ret)));
        }
        Ok(())
    }

    /// Converts a packed RGB picture (`self.width` wide) into the reusable
    /// YUV 4:2:0 frame.
    fn rgb_to_frame(&mut self, src: &[u8], time: f64) -> Result<(), VideoError> {
        self.writable(time)?;
        let (ew, eh) = (self.enc_width as usize, self.enc_height as usize);
        let [y, u, v] = planes_mut(&mut self.frame, eh);
        rgb_to_yuv420(
            Plane {
                data: src,
                stride: 3 * self.width as usize,
            },
            ew,
            eh,
            y,
            u,
            v,
            &self.coeffs,
        );
        Ok(())
    }

    /// Copies decoded YUV 4:2:0 planes of the encoder's size into the
    /// reusable frame, then converts the parts of `rgb` (packed, the same
    /// size) they mark changed.
    fn yuv_to_frame(&mut self, yuv: &Yuv420, rgb: &[u8], time: f64) -> Result<(), VideoError> {
        self.writable(time)?;
        let (w, h) = (yuv.width(), yuv.height());
        for i in 0..3 {
            let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
            let (src, stride) = yuv.plane(i);
            if stride < pw || src.len() < stride * (ph - 1) + pw {
                return Err(self.bad_frame(time, format!("decoded plane {i} is smaller than the picture")));
            }
        }
        let [mut py, mut pu, mut pv] = planes_mut(&mut self.frame, h);
        for (i, d) in [&mut py, &mut pu, &mut pv].into_iter().enumerate() {
            let (pw, ph) = if i == 0 { (w, h) } else { (w / 2, h / 2) };
            let (src, stride) = yuv.plane(i);
            for row in 0..ph {
                d.data[row * d.stride..][..pw].copy_from_slice(&src[row * stride..][..pw]);
            }
        }
        convert_changed(
            yuv.changed(),
            rgb,
            w,
            h,
            [&mut py, &mut pu, &mut pv],
            &self.coeffs,
        );
        Ok(())
    }

    /// Converts a packed picture (`bpp` bytes per pixel, `self.width` wide)
    /// into the reusable frame.
    fn convert_in(
        &mut self,
        src: &[u8],
        src_fmt: ffi::AVPixelFormat,
        bpp: usize,
        dst_fmt: ffi::AVPixelFormat,
        time: f64,
    ) -> Result<(), VideoError> {
        self.writable(time)?;
        let (ew, eh) = (self.enc_width, self.enc_height);
        let scaler =
            Scaler::cached(&mut self.scaler, src_fmt, ew, eh, dst_fmt, ew, eh, self.color).map_err(|m| {
                VideoError::Encode {
                    path: self.path.clone(),
                    index: self.pushed,
                    time,
                    message: crate::error::chain(&m),
                }
            })?;
        // SAFETY: the source holds `height` rows of `width·bpp` bytes and the
        // scaler reads the first `eh` rows and `ew` columns of it; the frame
        // was allocated for `ew`×`eh` in the destination format.
        unsafe {
            scaler.run(
                &Planes::packed(src.as_ptr() as *mut u8, self.width as usize * bpp),
                &Planes::of_frame(self.frame.as_ptr()),
            );
        }
        Ok(())
    }

    /// Sends the filled frame at `time` to the encoder and writes what comes out.
    fn send(&mut self, time: f64) -> Result<(), VideoError> {
        self.send_picture(time, false)
    }

    /// Sends the reusable frame, or with `baked` the reference in `sent`,
    /// at `time`.
    fn send_picture(&mut self, time: f64, baked: bool) -> Result<(), VideoError> {
        let pts = (time / self.tb).round() as i64;
        if let Some(last) = self.last_pts {
            if pts <= last {
                return Err(self.bad_frame(
                    time,
                    format!(
                        "frame time {time:.6} s is not after the previous frame's {:.6} s \
                         (at a time base of {})",
                        self.last_time, self.enc_tb
                    ),
                ));
            }
            if !self.live {
                // (A live encoder gave `last` its length when it was sent.)
                self.durations.insert(last, pts - last);
            }
            self.last_duration = Some(pts - last);
        }
        let picture = if baked { &mut self.sent } else { &mut self.frame };
        picture.set_pts(Some(pts));
        let sent = self.enc.send_frame(picture);
        sent.map_err(|e| self.encode_error(time, e))?;
        self.last_pts = Some(pts);
        self.last_time = time;
        self.pushed += 1;
        if self.live {
            // Not held for the next frame's time: one nominal frame.
            let nominal = ((1.0 / self.fps_hint) / self.tb).round().max(1.0) as i64;
            self.durations.insert(pts, nominal);
        }
        self.drain(time)
    }

    /// Takes the encoder's packets and writes those whose duration is known.
    fn drain(&mut self, time: f64) -> Result<(), VideoError> {
        loop {
            let mut pkt = Packet::empty();
            match self.enc.receive_packet(&mut pkt) {
                Ok(()) => self.held.push_back(pkt),
                Err(ffmpeg::Error::Eof) => break,
                Err(ffmpeg::Error::Other { errno }) if errno == ffi::EAGAIN => break,
                Err(e) => return Err(self.encode_error(time, e)),
            }
        }
        while let Some(front) = self.held.front() {
            let Some(dur) = front.pts().and_then(|p| self.durations.get(&p).copied()) else {
                break;
            };
            let Some(mut pkt) = self.held.pop_front() else {
                break;
            };
            if let Some(p) = pkt.pts() {
                self.durations.remove(&p);
            }
            pkt.set_duration(dur);
            pkt.set_stream(self.stream_index);
            pkt.rescale_ts(self.enc_tb, self.stream_tb);
            let at = pkt.dts().or(pkt.pts()).map_or(self.last_time, |d| {
                d as f64 * ratio(self.stream_tb).unwrap_or(self.tb)
            });
            if let Some(a) = &mut self.audio {
                a.pump(at + AUDIO_LEAD, &mut self.octx)
                    .map_err(|e| VideoError::Encode {
                        path: self.path.clone(),
                        index: self.pushed,
                        time,
                        message: crate::error::chain(&e),
                    })?;
            }
            pkt.write_interleaved(&mut self.octx)
                .map_err(|e| self.encode_error(time, e))?;
        }
        Ok(())
    }
}

/// The smallest time scale every track's MP4 time scale divides (the
/// muxer's: a video stream's time base denominator doubled up to at least
/// 10000, an audio stream's sample rate), when it fits an `i32`.
fn common_timescale(octx: &ffmpeg::format::context::Output) -> Option<i64> {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let mut scale = 1i64;
    for s in octx.streams() {
        let p = s.parameters();
        let mut t = if p.medium() == ffmpeg::media::Type::Audio {
            // SAFETY: valid codec parameters of a stream.
            i64::from(unsafe { (*p.as_ptr()).sample_rate })
        } else {
            i64::from(s.time_base().denominator())
        };
        if t <= 0 {
            return None;
        }
        while p.medium() == ffmpeg::media::Type::Video && t < 10_000 {
            t *= 2;
        }
        scale = scale / gcd(scale, t) * t;
        if scale > i64::from(i32::MAX) {
            return None;
        }
    }
    Some(scale)
}

/// Tags the reusable frame with the colorimetry it is converted with.
fn unsafe_set_color(frame: &mut frame::Video, gray: bool, color: Colorimetry) {
    if gray {
        frame.set_color_range(ffmpeg::color::Range::JPEG);
        return;
    }
    frame.set_color_range(ffmpeg::color::Range::MPEG);
    frame.set_color_space(if color.space == 1 {
        ffmpeg::color::Space::BT709
    } else {
        ffmpeg::color::Space::SMPTE170M
    });
}
/// FFmpeg's name of the container for files ending in `.ext`.
fn guess_format(ext: &str) -> Option<String> {
    let name = std::ffi::CString::new(format!("x.{ext}")).ok()?;
    // SAFETY: a valid C string; null format name and MIME type are allowed;
    // the returned format is static.
    let mut fmt =
        unsafe { ffmpeg_next::ffi::av_guess_format(std::ptr::null(), name.as_ptr(), std::ptr::null()) };
    if fmt.is_null() {
        // A muxer's own name (`mpegts`, `flv`, `rtsp`).
        let short = std::ffi::CString::new(ext).ok()?;
        // SAFETY: as above.
        fmt =
            unsafe { ffmpeg_next::ffi::av_guess_format(short.as_ptr(), std::ptr::null(), std::ptr::null()) };
    }
    if fmt.is_null() {
        return None;
    }
    // SAFETY: a non-null static format has a static, NUL-terminated name.
    let n = unsafe { std::ffi::CStr::from_ptr((*fmt).name) };
    Some(n.to_string_lossy().into_owned())
}

/// Opens `path` (a file or a URL) for writing in the container `format`
/// (a muxer's name): like `ffmpeg_next::format::output_as`, which opens
/// the path for writing even for muxers that open their own connection
/// (RTSP pushes to a server over its own protocol, and `avio_open` knows no
/// `rtsp://` to write to).
fn output_as(path: &Path, format: &str) -> Result<ffmpeg::format::context::Output, ffmpeg::Error> {
    let url =
        std::ffi::CString::new(path.to_string_lossy().as_bytes()).map_err(|_| ffmpeg::Error::InvalidData)?;
    let format = std::ffi::CString::new(format).map_err(|_| ffmpeg::Error::InvalidData)?;
    let mut ps = std::ptr::null_mut();
    // SAFETY: valid C strings; on success `ps` is a new context FFmpeg
    // owns until it is wrapped (or freed below).
    unsafe {
        let ret =
            ffi::avformat_alloc_output_context2(&mut ps, std::ptr::null_mut(), format.as_ptr(), url.as_ptr());
        if ret < 0 || ps.is_null() {
            return Err(ffmpeg::Error::from(ret.min(-1)));
        }
        let nofile = (*(*ps).oformat).flags & ffi::AVFMT_NOFILE != 0;
        if !nofile {
            let ret = ffi::avio_open(&mut (*ps).pb, url.as_ptr(), ffi::AVIO_FLAG_WRITE);
            if ret < 0 {
                ffi::avformat_free_context(ps);
                return Err(ffmpeg::Error::from(ret));
            }
        }
        Ok(ffmpeg::format::context::Output::wrap(ps))
    }
}
