//! The viewer's video input and output: FFmpeg decoding behind the
//! [`FrameSource`] trait, and the export dialog's job running the shared
//! exporter ([`crate::export`]) with the viewer's pipeline settings.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::export::{ExportFn, ExportOptions, Progress};
use super::source::{FrameSource, SourceError, SourceFrame, SourceInfo};

/// Opens a video file as a frame source.
pub fn open_video(path: &Path) -> anyhow::Result<Box<dyn FrameSource>> {
    Ok(Box::new(DecoderSource::open(path)?))
}

/// A video file decoded with FFmpeg ([`crate::video::Decoder`]).
pub struct DecoderSource {
    decoder: crate::video::Decoder,
    info: SourceInfo,
}

impl DecoderSource {
    /// Opens `path`; the duration comes from the file, or from its last
    /// frame when the file does not say.
    pub fn open(path: &std::path::Path) -> Result<Self, SourceError> {
        // Decode errors reach the status bar; FFmpeg's own log (concealed
        // errors after a seek, …) would only clutter the terminal.
        crate::video::set_ffmpeg_quiet(true);
        let err = |e: crate::video::VideoError| SourceError::Decode(e.to_string());
        let mut decoder = crate::video::Decoder::open(path).map_err(err)?;
        let vi = decoder.info().clone();
        let fps = if vi.avg_fps.is_finite() && vi.avg_fps > 0.0 {
            vi.avg_fps
        } else {
            30.0
        };
        let mut duration = vi.duration;
        if !(duration.is_finite() && duration > 0.0) {
            // Ask for the last frame: its time plus one frame is the end.
            let last = decoder.frame_at(1e9).map_err(err)?;
            duration = last.map_or(0.0, |f| f.time + 1.0 / fps);
            decoder.seek(0.0).map_err(err)?;
        }
        let info = SourceInfo {
            name: path.display().to_string(),
            width: vi.width as usize,
            height: vi.height as usize,
            start: 0.0,
            duration,
            fps,
            frame_count: vi.frame_count,
        };
        Ok(DecoderSource { decoder, info })
    }
}

fn from_video(f: crate::video::VideoFrame) -> SourceFrame {
    SourceFrame {
        index: f.index,
        time: f.time,
        image: f.image,
    }
}

impl FrameSource for DecoderSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn next_frame(&mut self) -> Result<Option<SourceFrame>, SourceError> {
        self.decoder
            .next_frame()
            .map(|f| f.map(from_video))
            .map_err(|e| SourceError::Decode(e.to_string()))
    }

    fn frame_at(&mut self, t: f64) -> Result<Option<SourceFrame>, SourceError> {
        // The decoder wants a finite time: before the start is the start,
        // after the end the end.
        let t = if t.is_nan() || t < self.info.start {
            self.info.start
        } else if t > self.info.start + self.info.duration {
            self.info.start + self.info.duration
        } else {
            t
        };
        self.decoder
            .frame_at(t)
            .map(|f| f.map(from_video))
            .map_err(|e| SourceError::Decode(e.to_string()))
    }
}

/// Builds the export of `session` that `options` ask for, drawing with
/// `processors` (one per worker thread, set up as the viewer shows the
/// session); progress is counted as frames are drawn.
pub fn export_fn(
    session: crate::session::Session,
    session_path: Option<PathBuf>,
    processors: Vec<super::overlay::PipelineProcessor>,
    options: ExportOptions,
    expected_frames: Option<u64>,
) -> ExportFn {
    Box::new(move |progress: &Progress, cancel: &AtomicBool| {
        let processors: Vec<crate::export::Processor<'_>> = processors
            .into_iter()
            .map(|mut p| -> crate::export::Processor<'_> {
                Box::new(move |frame: &mut crate::video::VideoFrame| {
                    p.process_frame(frame)?;
                    let done = progress.done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress.total.fetch_max(done, Ordering::Relaxed);
                    Ok(())
                })
            })
            .collect();
        progress.set(0, expected_frames);
        let mut job = crate::export::ExportJob::new(&session.video, &options.output);
        job.from = options.from;
        job.to = options.to;
        job.encoder.crf = options.crf;
        job.encoder.preset = options.preset.clone();
        job.protected.push(session.log.clone());
        job.protected.extend(session_path);
        if let Some(crate::session::CalibrationSource::File { file }) = &session.calibration {
            job.protected.push(file.clone());
        }
        let r = crate::export::run(&job, processors, cancel).map_err(|e| e.to_string())?;
        let mut msg = format!(
            "wrote {} frames ({:.1} s of video) to {} in {:.1} s",
            r.frames,
            r.duration,
            options.output.display(),
            r.elapsed
        );
        for w in r.warnings {
            msg.push_str(&format!("\nnote: {w}"));
        }
        Ok(msg)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A short 160×96 video of a flat grey floor.
    fn grey_video(path: &std::path::Path, frames: u32) {
        let settings = crate::video::EncoderSettings {
            fps_hint: 10.0,
            ..Default::default()
        };
        let mut enc = crate::video::Encoder::create(path, 160, 96, &settings).unwrap();
        let img = crate::image::RgbImage::from_elem((96, 160, 3), 90);
        for i in 0..frames {
            enc.push(&img, i as f64 / 10.0).unwrap();
        }
        enc.finish().unwrap();
    }

    #[test]
    fn export_from_the_viewer_writes_the_annotated_video() {
        use crate::log::{FrameTime, Log, Primitive, Rgba, Shape, Style, Vec2};
        let dir = tempfile::tempdir().unwrap();
        let video = dir.path().join("in.mp4");
        grey_video(&video, 12);
        let mut log = Log::new();
        let e = log.entities.intern("ball");
        let disc = Primitive {
            shape: Shape::Circle {
                center: Vec2::new(80.0, 48.0),
                radius: 30.0,
            },
            style: Style {
                fill: Some(Rgba::from_rgb(0xff0000)),
                ..Style::color(Rgba::from_rgb(0xff0000))
            },
            entity: e,
            level: 0,
        };
        log.push_frame(
            FrameTime::Persistent {
                start: f64::NEG_INFINITY,
                end: f64::INFINITY,
            },
            [disc],
        );
        let mut session = crate::session::Session::new(&video, dir.path().join("x.ulog"));
        session.mask = crate::mask::MaskSettings::None;
        let calib =
            crate::calib::Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
                .unwrap();
        let settings = super::super::player::ViewSettings {
            calibration: Some(calib),
            mask_settings: crate::mask::MaskSettings::None,
            ..Default::default()
        };
        let out = dir.path().join("out.mp4");
        let options = ExportOptions {
            output: out.clone(),
            ..Default::default()
        };
        let template = super::super::overlay::template(Arc::new(log));
        let p = super::super::overlay::PipelineProcessor::new(&template, &settings).unwrap();
        let f = export_fn(session, None, vec![p], options, Some(12));
        let progress = Progress::default();
        let msg = f(&progress, &AtomicBool::new(false)).unwrap();
        assert!(msg.contains("wrote 12 frames"), "{msg}");
        assert_eq!(progress.done.load(Ordering::Relaxed), 12);
        let mut dec = crate::video::Decoder::open(&out).unwrap();
        let frame = dec.next_frame().unwrap().unwrap();
        let px = |y: usize, x: usize| [0, 1, 2].map(|c| frame.image[[y, x, c]]);
        let red = px(48, 80);
        assert!(red[0] > 200 && red[1] < 60 && red[2] < 60, "disc centre {red:?}");
        let grey = px(5, 5);
        assert!(grey.iter().all(|&v| v.abs_diff(90) < 12), "floor {grey:?}");
    }
}
