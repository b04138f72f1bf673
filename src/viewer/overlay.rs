//! The shared overlay pipeline ([`crate::pipeline::Pipeline`]) behind the
//! player's [`FrameProcessor`] trait: what the viewer shows is drawn by the
//! same code, with the same settings, as what `underlay export` writes.

use std::sync::Arc;

use crate::image::RgbImage;
use crate::log::Log;
use crate::mask::NoMask;
use crate::pipeline::{Pipeline, PipelineOptions};
use crate::select::{EntityTree, Filter, FilterSpec, Index};

use super::player::{FrameProcessor, ProcessStats, ViewSettings};

/// A pipeline holding `log` and its time index, to fork drawing pipelines
/// from (the log is indexed once).
pub fn template(log: Arc<Log>) -> Pipeline {
    let all = Filter::all(&log, i32::MAX);
    Pipeline::new(log, None, Box::new(NoMask), all, 0.0, 0.0)
}

/// `spec` compiled for `log` as export compiles it; when that fails (a
/// name the log does not know, a cycle), the filter that ignores what is
/// wrong, and the error.
pub fn compile_filter(spec: &FilterSpec, log: &Log) -> (Filter, Option<String>) {
    match spec.compile(log) {
        Ok(f) => (f, None),
        Err(e) => {
            let f = EntityTree::from_log(log)
                .map(|t| spec.compile_lenient(&t))
                .unwrap_or_else(|_| Filter::all(log, spec.max_level.unwrap_or(i32::MAX)));
            (f, Some(e.to_string()))
        }
    }
}

/// The instantaneous-frame threshold the settings ask for, or the log's
/// default (as export computes it).
pub fn threshold(index: &Index, s: &ViewSettings) -> f64 {
    s.instant_threshold
        .filter(|t| !t.is_nan() && *t >= 0.0)
        .unwrap_or_else(|| index.default_threshold())
}

/// Draws frames with the shared pipeline.
pub struct PipelineProcessor {
    pipeline: Pipeline,
    /// Settings applied last, to change only what changed.
    applied: Option<ViewSettings>,
}

impl PipelineProcessor {
    /// A processor forked from `template` (sharing its log and index),
    /// drawing with `settings`.
    pub fn new(template: &Pipeline, settings: &ViewSettings) -> Result<Self, String> {
        let masker = settings
            .mask_settings
            .build()
            .map_err(|e| format!("mask settings: {e}"))?;
        let mut p = PipelineProcessor {
            pipeline: template.fork(masker),
            applied: None,
        };
        // A filter problem is reported by the player when it configures.
        let _ = p.configure(settings);
        Ok(p)
    }
}

impl PipelineProcessor {
    /// Draws a decoded frame for export, keeping its YUV planes in step
    /// ([`Pipeline::process_frame`]).
    pub fn process_frame(&mut self, frame: &mut crate::video::SourceFrame) -> Result<(), String> {
        self.pipeline
            .process_frame(frame)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl FrameProcessor for PipelineProcessor {
    fn configure(&mut self, s: &ViewSettings) -> Result<(), String> {
        let old = self.applied.take();
        let old = old.as_ref();
        let mut problem = None;
        let p = &mut self.pipeline;
        if old.is_none_or(|o| o.offset != s.offset) {
            p.set_offset(s.offset);
        }
        if old.is_none_or(|o| o.filter != s.filter) {
            let (f, e) = compile_filter(&s.filter, p.log());
            p.set_filter(f);
            problem = e;
        }
        if old.is_none_or(|o| o.calibration != s.calibration) {
            p.set_calibration(s.calibration.clone());
        }
        if old.is_some_and(|o| o.mask_settings != s.mask_settings) {
            match s.mask_settings.build() {
                Ok(m) => p.set_masker(m),
                Err(e) => problem = Some(format!("mask settings: {e}")),
            }
        }
        if old.is_none_or(|o| o.instant_threshold != s.instant_threshold) {
            let t = threshold(p.index(), s);
            p.set_threshold(t);
        }
        p.set_options(PipelineOptions {
            overlay: s.overlay,
            mask: s.mask,
            tint_mask: s.tint_mask,
        });
        self.applied = Some(s.clone());
        problem.map_or(Ok(()), Err)
    }

    fn process(&mut self, frame: &mut RgbImage, video_time: f64) -> Result<ProcessStats, String> {
        let st = self
            .pipeline
            .process(frame, video_time)
            .map_err(|e| e.to_string())?;
        Ok(ProcessStats {
            primitives: st.primitives,
            mask_time: st.mask_time,
        })
    }

    fn reset(&mut self) {
        self.pipeline.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_are_reported_and_ignored() {
        let mut log = Log::new();
        log.entities.intern("ball");
        let spec = FilterSpec {
            only: vec!["nope".into()],
            ..Default::default()
        };
        let (f, e) = compile_filter(&spec, &log);
        assert!(e.is_some_and(|e| e.contains("nope")));
        assert_eq!(f.levels().len(), 1);
        let mut p = PipelineProcessor::new(&template(Arc::new(log)), &ViewSettings::default()).unwrap();
        let bad = ViewSettings {
            filter: spec,
            ..ViewSettings::default()
        };
        assert!(p.configure(&bad).unwrap_err().contains("nope"));
        assert_eq!(p.configure(&bad), Ok(()), "reported once, until it changes");
    }
}
