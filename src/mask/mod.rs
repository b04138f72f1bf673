//! Floor masks: which pixels of a frame show the floor (drawing allowed) and
//! which show something standing on it (robots, ball, people: keep video).
//!
//! Every masking method is a [`Masker`]; the pipeline asks it for one mask
//! per frame, in presentation order.

use serde::{Deserialize, Serialize};

use crate::image::{FLOOR, MaskImage, RgbImage};

/// Errors computing a mask.
#[derive(Debug, thiserror::Error)]
pub enum MaskError {
    #[error("mask source {source_name}: {message}")]
    Source { source_name: String, message: String },
}

/// How masks are made, as saved in a session file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaskSettings {
    /// No mask: draw over everything.
    #[default]
    None,
}

/// Computes floor masks for frames.
pub trait Masker: Send {
    /// Short name for messages ("thesis", "adaptive", …).
    fn name(&self) -> &str;

    /// Writes the floor mask of `frame` (shown at video time `time`, in
    /// seconds) into `out`, resizing it when needed.
    fn compute(&mut self, frame: &RgbImage, time: f64, out: &mut MaskImage) -> Result<(), MaskError>;

    /// Forgets state carried between frames (called after a seek).
    fn reset(&mut self) {}
}

/// Everything is floor.
#[derive(Debug, Default, Clone)]
pub struct NoMask;

impl Masker for NoMask {
    fn name(&self) -> &str {
        "none"
    }

    fn compute(&mut self, frame: &RgbImage, _time: f64, out: &mut MaskImage) -> Result<(), MaskError> {
        let (h, w, _) = frame.dim();
        if out.dim() != (h, w) {
            *out = MaskImage::from_elem((h, w), FLOOR);
        } else {
            out.fill(FLOOR);
        }
        Ok(())
    }
}

impl MaskSettings {
    /// Builds the masker these settings describe.
    pub fn build(&self) -> Result<Box<dyn Masker>, MaskError> {
        match self {
            MaskSettings::None => Ok(Box::new(NoMask)),
        }
    }
}
