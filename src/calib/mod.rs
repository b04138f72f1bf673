//! Camera calibration: the mapping between the floor plane (world units)
//! and video pixels, and mapping shapes through it.
//!
//! A [`Calibration`] is a homography (world → ideal pinhole pixels)
//! followed, optionally, by lens distortion ([`Distortion`]: OpenCV's
//! model, or the inverse radial model of ssl-vision's cameras). Everything that maps world → pixels goes through the
//! `project*` methods: with distortion the homography alone is not the
//! mapping. Projection refuses points behind the camera (homogeneous
//! w ≤ 0) and beyond the radius where the distortion model folds over;
//! shapes are clipped to the mappable region (and to a generous margin
//! around the image when its size is known) instead of wrapping around, and
//! curves are sampled adaptively so the drawn polygon stays within a pixel
//! tolerance of the true image of the shape.
//!
//! A calibration that knows the camera in space (a full camera: from a
//! known pinhole camera, an SSL camera, or points clicked at known
//! heights) also maps points above the floor ([`Calibration::project3`],
//! `space.rs`); one that knows only the floor refuses them.
//!
//! Submodules: [`fit`](mod@fit) estimates a calibration from point correspondences
//! and reports residuals and outliers; [`presets`] holds named field points
//! and field lines; [`camera`] builds a calibration from a known camera;
//! [`refine`](mod@refine) snaps a rough calibration to the painted lines in a picture;
//! [`track`] is a camera that moves (its poses over time).

pub use crate::geom::Mat3;

mod calibration;
pub mod camera;
mod clip;
pub mod compare;
mod error;
mod file;
pub mod fit;
mod lens;
pub(crate) mod linalg;
pub mod points;
pub mod presets;
pub mod refine;
mod space;
#[cfg(any(test, feature = "test-util"))]
pub mod synthetic;
pub mod track;
pub mod unit;

pub use calibration::*;
pub use camera::{Camera, CameraLens, CameraTable};
pub use error::{CalibError, DuplicatePair};
pub use file::CalibrationFile;
pub use fit::{
    CalibReport, Correspondence, Correspondence3, Fit, FitOptions, Method, Model, fit, fit_camera,
};
pub use lens::{Distortion, DistortionModel};
pub use space::FLOOR_ONLY;
