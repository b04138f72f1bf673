//! The export dialog's job: the shared exporter ([`crate::export`]) run
//! with the viewer's pipeline settings.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::export::{ExportFn, ExportOptions, Progress};

/// Builds the export of `session` that `options` ask for, drawing with
/// `processors` (one per worker thread, set up as the viewer shows the
/// session); progress is counted as frames are drawn.
pub fn export_fn(
    session: crate::session::Session,
    session_path: Option<PathBuf>,
    processors: Vec<crate::pipeline::Pipeline>,
    options: ExportOptions,
    expected_frames: Option<u64>,
) -> ExportFn {
    Box::new(move |progress: &Progress, cancel: &AtomicBool| {
        let processors: Vec<crate::export::Processor<'_>> = processors
            .into_iter()
            .map(|mut p| -> crate::export::Processor<'_> {
                Box::new(move |frame: &mut crate::video::SourceFrame| {
                    p.process(frame)?;
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
        job.protected.extend(session.inputs());
        job.protected.extend(session_path);
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
        let settings = crate::pipeline::DrawSettings {
            calibration: Some(calib),
            mask: crate::mask::MaskSettings::None,
            ..Default::default()
        };
        let out = dir.path().join("out.mp4");
        let options = ExportOptions {
            output: out.clone(),
            ..Default::default()
        };
        let p = crate::pipeline::Pipeline::new(Arc::new(log), &settings).unwrap();
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
