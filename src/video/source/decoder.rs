//! A video file decoded with FFmpeg ([`Decoder`]) as a frame source: the
//! source every file no other opener claims falls back to.

use std::path::Path;

use super::{FrameSource, OpenOptions, SourceError, SourceFrame, SourceInfo};
use crate::video::Decoder;

/// A video file decoded with FFmpeg.
pub struct DecoderSource {
    decoder: Decoder,
    info: SourceInfo,
}

impl DecoderSource {
    /// Opens `path`; the duration comes from the file, or from its last
    /// frame when the file does not say.
    pub fn open(path: &Path, options: &OpenOptions) -> Result<Self, SourceError> {
        let mut decoder = Decoder::open(path)?;
        decoder.set_keep_yuv(options.keep_yuv);
        decoder.set_defer_rgb(options.keep_yuv && options.defer_rgb);
        decoder.set_keep_full_range(options.yuv_full_range);
        if options.seek_index {
            decoder.build_index();
        }
        let vi = decoder.info().clone();
        let fps = if vi.avg_fps.is_finite() && vi.avg_fps > 0.0 {
            vi.avg_fps
        } else {
            30.0
        };
        let mut duration = vi.duration;
        if !(duration.is_finite() && duration > 0.0) {
            // Ask for the last frame: its time plus one frame is the end.
            let last = decoder.frame_at(1e9)?;
            duration = last.map_or(0.0, |f| f.time + 1.0 / fps);
            decoder.seek(0.0)?;
        }
        let info = SourceInfo {
            frame_count: vi.frame_count,
            time_base: Some(vi.time_base),
            audio: vi.has_audio.then(|| path.to_owned()),
            ..SourceInfo::new(
                path.display().to_string(),
                vi.width as usize,
                vi.height as usize,
                fps,
                duration,
            )
        };
        Ok(DecoderSource { decoder, info })
    }

    /// The decoder underneath (for what only a video has: codec, rotation).
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    /// The decoder wants a finite time: before the start is the start,
    /// after the end the end.
    fn clamp(&self, t: f64) -> f64 {
        if t.is_nan() || t < self.info.start {
            self.info.start
        } else if t > self.info.start + self.info.duration {
            self.info.start + self.info.duration
        } else {
            t
        }
    }
}

impl FrameSource for DecoderSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        Ok(self.decoder.next_frame()?)
    }

    fn read_into(&mut self, out: &mut SourceFrame) -> Result<bool, SourceError> {
        Ok(self.decoder.read_into(out)?)
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        let t = self.clamp(t);
        Ok(self.decoder.frame_at(t)?)
    }

    fn keyframe_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        let t = self.clamp(t);
        Ok(self.decoder.keyframe_at(t)?)
    }

    fn seek_index(&self) -> Option<crate::video::SeekIndex> {
        self.decoder.seek_index()
    }

    fn set_stop(&mut self, stop: crate::video::Stop) {
        self.decoder.set_stop(Some(stop));
    }
}
