//! The source's audio in an encoded video: every audio stream copied
//! packet by packet (unchanged) when the output container can hold it,
//! else re-encoded as AAC (a camera's PCM into MP4, say) rather than lost;
//! cut to the exported part, moved to start at 0 and interleaved with the
//! video by [`super::Encoder`].

use crate::video::StepError;
use std::path::{Path, PathBuf};

use ffmpeg_next as ffmpeg;
use ffmpeg_next::format::Sample;
use ffmpeg_next::format::sample::Type as SampleType;
use ffmpeg_next::software::resampling;
use ffmpeg_next::util::channel_layout::ChannelLayout;
use ffmpeg_next::{Packet, Rational, codec, ffi, frame, media};

use super::{VideoError, ratio};

/// Sample rates the AAC encoder takes; others are resampled to 48 kHz.
const AAC_RATES: [u32; 12] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000,
];

/// AAC bit rate per channel (stereo: 192 kbit/s, transparent for speech
/// and crowd noise).
const AAC_BITS_PER_CHANNEL: usize = 96_000;

/// Where one source audio stream goes.
struct Route {
    /// Output stream index.
    out_index: usize,
    /// Source stream time base.
    in_tb: Rational,
    /// `None`: packets are copied; else they are decoded and re-encoded.
    aac: Option<Box<AacTrack>>,
}

/// Copies (or re-encodes) the audio of a source file, interleaved with the
/// video.
pub(super) struct AudioCopy {
    path: PathBuf,
    input: ffmpeg::format::context::Input,
    /// Per source stream.
    map: Vec<Option<Route>>,
    /// Source seconds that become output time 0.
    origin: f64,
    /// Source seconds before which nothing is copied (see `split`).
    start: f64,
    /// Source seconds after which nothing is copied.
    end: f64,
    /// A packet must start at or after `start` (a segment's inner cut),
    /// rather than merely play past it.
    split: bool,
    pending: Option<(Packet, f64)>,
    done: bool,
}

impl AudioCopy {
    /// Opens `src` and adds an output stream for each of its audio streams:
    /// a copy when the output container can hold the codec, else AAC.
    pub(super) fn open(
        src: &Path,
        window: Option<super::AudioWindow>,
        octx: &mut ffmpeg::format::context::Output,
        warnings: &mut Vec<String>,
    ) -> Result<Option<AudioCopy>, VideoError> {
        let input = super::open_input(src)?;
        // Audio times are taken relative to the source's video stream start,
        // as the decoder's frame times are.
        let video_start = input
            .streams()
            .best(media::Type::Video)
            .and_then(|s| {
                let tb = ratio(s.time_base())?;
                (s.start_time() != ffi::AV_NOPTS_VALUE).then(|| s.start_time() as f64 * tb)
            })
            .unwrap_or(0.0);
        let w = window.unwrap_or(super::AudioWindow {
            origin: 0.0,
            from: f64::NEG_INFINITY,
            to: f64::INFINITY,
            split: false,
        });
        let (origin, start, end) = (video_start + w.origin, video_start + w.from, video_start + w.to);
        let from = w.from;
        // Samples kept when re-encoding: those of the part.
        let keep = (start, end);
        let setting_up = |message: String| VideoError::Settings {
            path: src.to_owned(),
            message,
        };
        let mut map = Vec::new();
        for s in input.streams() {
            let params = s.parameters();
            if params.medium() != media::Type::Audio {
                map.push(None);
                continue;
            }
            // SAFETY: the output format and codec id are valid.
            let supported = unsafe {
                ffi::avformat_query_codec(
                    (*octx.as_ptr()).oformat,
                    params.id().into(),
                    ffi::FF_COMPLIANCE_NORMAL,
                ) == 1
            };
            if supported {
                let mut ost = octx
                    .add_stream(ffmpeg::encoder::find(codec::Id::None))
                    .map_err(|e| setting_up(format!("cannot add an audio stream: {e}")))?;
                ost.set_parameters(params);
                ost.set_time_base(s.time_base());
                // SAFETY: the parameters belong to the new stream; a zero tag
                // lets the muxer pick the right one for its container.
                unsafe {
                    (*ost.parameters().as_mut_ptr()).codec_tag = 0;
                }
                map.push(Some(Route {
                    out_index: ost.index(),
                    in_tb: s.time_base(),
                    aac: None,
                }));
                continue;
            }
            let name = params.id().name();
            match AacTrack::open(params, s.time_base(), origin, keep, octx) {
                Ok((track, out_index)) => {
                    warnings.push(format!(
                        "{}: audio stream {} ({name}) cannot be stored in this container as it is; \
                         it was re-encoded as AAC (an .mkv output keeps it unchanged)",
                        src.display(),
                        s.index(),
                    ));
                    map.push(Some(Route {
                        out_index,
                        in_tb: s.time_base(),
                        aac: Some(Box::new(track)),
                    }));
                }
                Err(why) => {
                    warnings.push(format!(
                        "{}: audio stream {} ({name}) cannot be stored in this container and \
                         could not be re-encoded ({why}), so it was left out (an .mkv output keeps it)",
                        src.display(),
                        s.index(),
                    ));
                    map.push(None);
                }
            }
        }
        if map.iter().all(Option::is_none) {
            return Ok(None);
        }
        let mut input = input;
        if from > 1.0 {
            // Start reading near the window instead of at the beginning of a
            // long file; a failed seek only means reading from the start.
            let ts = ((video_start + from - 1.0) * f64::from(ffi::AV_TIME_BASE)) as i64;
            let _ = input.seek(ts, ..ts);
        }
        Ok(Some(AudioCopy {
            path: src.to_owned(),
            input,
            map,
            origin,
            start,
            end,
            split: w.split,
            pending: None,
            done: false,
        }))
    }

    /// Writes the audio that starts before output time `until`; at the end
    /// (`until` infinite) re-encoders are flushed too.
    pub(super) fn pump(
        &mut self,
        until: f64,
        octx: &mut ffmpeg::format::context::Output,
    ) -> Result<(), StepError> {
        let path = self.path.clone();
        let write_err = |e: ffmpeg::Error| format!("writing audio from {}: {e}", path.display());
        while !self.done {
            let (mut pkt, t) = match self.pending.take() {
                Some(p) => p,
                None => {
                    let mut pkt = Packet::empty();
                    match pkt.read(&mut self.input) {
                        Ok(()) => {}
                        Err(ffmpeg::Error::Eof) => {
                            self.done = true;
                            break;
                        }
                        Err(e) => {
                            self.done = true;
                            return Err(StepError::new(format!(
                                "{}: reading audio: {e}",
                                self.path.display()
                            )));
                        }
                    }
                    let Some(Some(route)) = self.map.get(pkt.stream()) else {
                        continue;
                    };
                    let Some(ts) = pkt.pts().or(pkt.dts()) else {
                        continue;
                    };
                    let t = ts as f64 * ratio(route.in_tb).unwrap_or(0.0);
                    (pkt, t)
                }
            };
            let (origin, start, end, split) = (self.origin, self.start, self.end, self.split);
            let Some(Some(route)) = self.map.get_mut(pkt.stream()) else {
                continue;
            };
            let in_tb = route.in_tb;
            let dur = pkt.duration() as f64 * ratio(in_tb).unwrap_or(0.0);
            if t >= end {
                // Streams interleave loosely: stop well past the end.
                if t > end + 10.0 {
                    self.done = true;
                }
                continue;
            }
            if (split && t < start) || (!split && t + dur.max(0.0) <= start) {
                continue;
            }
            if t - origin > until {
                self.pending = Some((pkt, t));
                break;
            }
            let out_tb = octx.stream(route.out_index).map_or(in_tb, |s| s.time_base());
            if let Some(aac) = &mut route.aac {
                aac.decode(Some(&pkt))?;
                aac.write_ready(route.out_index, out_tb, octx, false)
                    .map_err(write_err)?;
                continue;
            }
            let shift = (origin / ratio(in_tb).unwrap_or(1.0)).round() as i64;
            pkt.set_pts(pkt.pts().map(|v| v - shift));
            pkt.set_dts(pkt.dts().map(|v| v - shift));
            pkt.set_position(-1);
            pkt.set_stream(route.out_index);
            pkt.rescale_ts(in_tb, out_tb);
            pkt.write_interleaved(octx).map_err(write_err)?;
        }
        if self.done && until == f64::INFINITY {
            self.flush(octx)?;
        }
        Ok(())
    }

    /// Encodes and writes what the re-encoders still hold.
    fn flush(&mut self, octx: &mut ffmpeg::format::context::Output) -> Result<(), StepError> {
        for route in self.map.iter_mut().flatten() {
            if let Some(aac) = &mut route.aac {
                let out_tb = octx
                    .stream(route.out_index)
                    .map_or(route.in_tb, |s| s.time_base());
                aac.decode(None)?;
                aac.write_ready(route.out_index, out_tb, octx, true)
                    .map_err(|e| StepError::with(format!("writing audio from {}", self.path.display()), e))?;
            }
        }
        Ok(())
    }
}

/// One audio stream decoded, converted to planar float and re-encoded as
/// AAC, with its samples kept only inside the exported part.
struct AacTrack {
    decoder: ffmpeg::decoder::Audio,
    /// Source time base of the packets.
    in_tb: Rational,
    /// Source seconds that become output time 0.
    origin: f64,
    /// Source seconds of the samples kept.
    keep: (f64, f64),
    encoder: ffmpeg::encoder::Audio,
    resampler: Option<resampling::Context>,
    layout: ChannelLayout,
    rate: u32,
    /// Samples per encoded frame.
    frame_size: usize,
    /// Decoded samples waiting for a whole frame, per channel.
    fifo: Vec<Vec<f32>>,
    /// Output time (in samples) of the first sample in `fifo`.
    next_pts: Option<i64>,
    flushed: bool,
}

impl AacTrack {
    /// Sets up decoding `params` and an AAC encoder, and adds the output
    /// stream; returns the track and the stream's index.
    fn open(
        params: codec::Parameters,
        in_tb: Rational,
        origin: f64,
        keep: (f64, f64),
        octx: &mut ffmpeg::format::context::Output,
    ) -> Result<(AacTrack, usize), StepError> {
        let decoder = codec::context::Context::from_parameters(params)
            .and_then(|c| c.decoder().audio())
            .map_err(|e| StepError::with("cannot decode it", e))?;
        let channels = decoder.channels();
        if channels == 0 || channels > 8 {
            return Err(StepError::new(format!("{channels} channels")));
        }
        let layout = match decoder.channel_layout() {
            l if l.channels() == i32::from(channels) => l,
            _ => ChannelLayout::default(i32::from(channels)),
        };
        let rate = decoder.rate();
        let rate = if AAC_RATES.contains(&rate) { rate } else { 48_000 };
        let codec = ffmpeg::encoder::find(codec::Id::AAC).ok_or("this FFmpeg has no AAC encoder")?;
        let global_header = octx
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut enc = codec::context::Context::new_with_codec(codec)
            .encoder()
            .audio()
            .map_err(|e| e.to_string())?;
        enc.set_rate(rate as i32);
        enc.set_channel_layout(layout);
        enc.set_channels(i32::from(channels));
        enc.set_format(Sample::F32(SampleType::Planar));
        enc.set_bit_rate(AAC_BITS_PER_CHANNEL * usize::from(channels));
        enc.set_time_base(Rational::new(1, rate as i32));
        if global_header {
            enc.set_flags(codec::Flags::GLOBAL_HEADER);
        }
        let encoder = enc
            .open_as(codec)
            .map_err(|e| StepError::with("cannot open the AAC encoder", e))?;
        let mut ost = octx
            .add_stream(codec)
            .map_err(|e| StepError::with("cannot add an audio stream", e))?;
        ost.set_parameters(&encoder);
        ost.set_time_base(Rational::new(1, rate as i32));
        let frame_size = (encoder.frame_size() as usize).max(1);
        let index = ost.index();
        Ok((
            AacTrack {
                decoder,
                in_tb,
                origin,
                keep,
                encoder,
                resampler: None,
                layout,
                rate,
                frame_size,
                fifo: vec![Vec::new(); usize::from(channels)],
                next_pts: None,
                flushed: false,
            },
            index,
        ))
    }

    /// Decodes `pkt` (`None`: the end, flushing the decoder) and queues
    /// the samples to keep.
    fn decode(&mut self, pkt: Option<&Packet>) -> Result<(), StepError> {
        let sent = match pkt {
            Some(p) => self.decoder.send_packet(p),
            None => self.decoder.send_eof(),
        };
        // A damaged packet is skipped, as players do.
        if sent.is_err() {
            return Ok(());
        }
        let tb = ratio(self.in_tb).unwrap_or(0.0);
        let mut decoded = frame::Audio::empty();
        while self.decoder.receive_frame(&mut decoded).is_ok() {
            let start = decoded.pts().map(|p| p as f64 * tb);
            self.take(&decoded, start)?;
        }
        Ok(())
    }

    /// Converts a decoded frame starting at source time `start` and queues
    /// its samples inside the part kept.
    fn take(&mut self, decoded: &frame::Audio, start: Option<f64>) -> Result<(), StepError> {
        let mut input = decoded.clone();
        if input.channel_layout().channels() != i32::from(input.channels())
            || input.channel_layout().is_empty()
        {
            input.set_channel_layout(self.layout);
        }
        if self.resampler.is_none() {
            self.resampler = Some(
                input
                    .resampler(Sample::F32(SampleType::Planar), self.layout, self.rate)
                    .map_err(|e| StepError::with("cannot convert the audio", e))?,
            );
        }
        let Some(resampler) = &mut self.resampler else {
            return Ok(());
        };
        let mut out = frame::Audio::empty();
        resampler
            .run(&input, &mut out)
            .map_err(|e| StepError::with("cannot convert the audio", e))?;
        let n = out.samples();
        if n == 0 || out.planes() != self.fifo.len() {
            return Ok(());
        }
        let (rate, origin) = (f64::from(self.rate), self.origin);
        // Source time of the first converted sample: the frame's own, or
        // right after what came before.
        let first = match (start, self.next_pts) {
            (Some(s), None) => s,
            (_, Some(p)) => origin + (p as f64 + self.queued() as f64) / rate,
            (None, None) => origin,
        };
        let skip = ((self.keep.0 - first) * rate).ceil().clamp(0.0, n as f64) as usize;
        let keep_end = ((self.keep.1 - first) * rate).floor().clamp(0.0, n as f64) as usize;
        if skip >= keep_end {
            return Ok(());
        }
        if self.next_pts.is_none() {
            self.next_pts = Some(((first - origin) * rate).round() as i64 + skip as i64);
        }
        for (ch, queue) in self.fifo.iter_mut().enumerate() {
            queue.extend_from_slice(&out.plane::<f32>(ch)[skip..keep_end]);
        }
        Ok(())
    }

    fn queued(&self) -> usize {
        self.fifo.first().map_or(0, Vec::len)
    }

    /// Encodes every whole frame queued (and, when `end`, the rest and the
    /// encoder's delay) and writes the packets to stream `index`.
    fn write_ready(
        &mut self,
        index: usize,
        out_tb: Rational,
        octx: &mut ffmpeg::format::context::Output,
        end: bool,
    ) -> Result<(), ffmpeg::Error> {
        if self.flushed {
            return Ok(());
        }
        while self.queued() >= self.frame_size || (end && self.queued() > 0) {
            let n = self.queued().min(self.frame_size);
            let mut f = frame::Audio::new(Sample::F32(SampleType::Planar), n, self.layout);
            f.set_rate(self.rate);
            let pts = self.next_pts.unwrap_or(0);
            f.set_pts(Some(pts));
            for (ch, queue) in self.fifo.iter_mut().enumerate() {
                f.plane_mut::<f32>(ch)[..n].copy_from_slice(&queue[..n]);
                queue.drain(..n);
            }
            self.next_pts = Some(pts + n as i64);
            self.encoder.send_frame(&f)?;
            self.drain(index, out_tb, octx)?;
        }
        if end {
            self.flushed = true;
            self.encoder.send_eof()?;
            self.drain(index, out_tb, octx)?;
        }
        Ok(())
    }

    fn drain(
        &mut self,
        index: usize,
        out_tb: Rational,
        octx: &mut ffmpeg::format::context::Output,
    ) -> Result<(), ffmpeg::Error> {
        let mut packet = Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(index);
            packet.rescale_ts(Rational::new(1, self.rate as i32), out_tb);
            packet.write_interleaved(octx)?;
        }
        Ok(())
    }
}
