//! What building, fitting or reading a calibration can fail with.

use super::fit::Model;
use crate::geom::Vec2;

/// Two points with the same image or world coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct DuplicatePair {
    pub first: usize,
    pub second: usize,
    /// `"image"` or `"world"`.
    pub what: &'static str,
    pub at: Vec2,
}

/// Every pair, as the error says them.
fn describe_duplicates(pairs: &[DuplicatePair]) -> String {
    let shown: Vec<String> = pairs
        .iter()
        .take(20)
        .map(|p| {
            format!(
                "point {} and point {} have the same {} coordinates ({}, {})",
                p.first,
                p.second,
                p.what,
                crate::log::text::fmt_f64(p.at.x),
                crate::log::text::fmt_f64(p.at.y)
            )
        })
        .collect();
    let more = pairs.len().saturating_sub(shown.len());
    let mut s = shown.join("; ");
    if more > 0 {
        s.push_str(&format!("; and {more} more pairs"));
    }
    s
}

/// Errors building or fitting a calibration.
#[derive(Debug, thiserror::Error)]
pub enum CalibError {
    /// The homography cannot be inverted.
    #[error("the homography is singular or not finite: {0}")]
    Singular(String),
    /// Distortion coefficients that are not finite or fold over at once.
    #[error("invalid lens distortion: {0}")]
    InvalidDistortion(String),
    /// A camera matrix, pose or coefficient vector that makes no camera.
    #[error("invalid camera: {0}")]
    InvalidCamera(String),
    /// A calibration file's keys that do not make one calibration (both
    /// or neither of a homography and a camera).
    #[error("{0}")]
    Format(String),
    /// Fewer points than the model has degrees of freedom for.
    #[error("the {model} model needs at least {needed} points, got {got}")]
    TooFewPoints { model: Model, needed: usize, got: usize },
    /// More points than a fit accepts.
    #[error("too many points: {got} (at most {max})")]
    TooManyPoints { got: usize, max: usize },
    /// A point with a NaN or infinite coordinate.
    #[error("point {index} is not finite: image ({u}, {v}), world ({x}, {y})")]
    NotFinite {
        index: usize,
        u: f64,
        v: f64,
        x: f64,
        y: f64,
    },
    /// A point whose height is NaN or infinite, or beyond any floor's.
    #[error("point {index} has a height z = {z} that is not a finite number within ±{limit:e}")]
    BadHeight { index: usize, z: f64, limit: f64 },
    /// A left-handed world frame given to a model that places the camera
    /// in space.
    #[error(
        "the world frame is left-handed (seen from above, y is clockwise from x): a camera in space \
         needs a right-handed frame with z up; negate the points' y (or swap x and y)"
    )]
    LeftHanded,
    /// Two points with identical world (or image) coordinates.
    #[error(
        "{}; one of each is probably mislabelled: fit with a robust method (lmeds or ransac) to have it found",
        describe_duplicates(.pairs)
    )]
    Duplicates { pairs: Vec<DuplicatePair> },
    /// A coordinate too large for a calibration (its square would not fit
    /// a double, and no camera or floor is that large).
    #[error(
        "point {index} is out of range: {what} ({}, {}) has a coordinate beyond ±{limit:e} \
         (pixels or world units)",
        crate::log::text::fmt_f64(*.a),
        crate::log::text::fmt_f64(*.b)
    )]
    OutOfRange {
        index: usize,
        what: &'static str,
        a: f64,
        b: f64,
        limit: f64,
    },
    /// World (or image) points spread over too small an extent to tell
    /// directions apart.
    #[error(
        "the {what} points span only {extent:e} units: out of range for a calibration (at least {min:e}; \
         are they in the right unit?)"
    )]
    TooSmall {
        what: &'static str,
        extent: f64,
        min: f64,
    },
    /// All world (or image) points on one line.
    #[error("the {what} points all lie on one line: a floor mapping needs points spread in two directions")]
    Collinear { what: &'static str },
    /// The points leave some parameter undetermined.
    #[error("the points do not determine the mapping (rank-deficient): {0}")]
    RankDeficient(String),
    /// The fit puts some points behind the camera.
    #[error("the solution puts the floor behind the camera at {}", describe_points(.points))]
    BehindCamera { points: Vec<(usize, Vec2)> },
    /// No starting point could be refined.
    #[error("the fit did not converge: {0}")]
    NoConvergence(String),
    /// Too few painted lines were found in the picture to refine a
    /// calibration on ([`refine`](mod@super::refine)).
    #[error("too few field lines were found in the picture: {0}")]
    LinesNotFound(String),
    /// A calibration file could not be read or written.
    #[error("{path}: cannot read or write the calibration")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A calibration file is not valid TOML of the calibration format.
    #[error("{path}: not a valid calibration")]
    Parse {
        path: std::path::PathBuf,
        #[source]
        source: crate::toml_text::TomlError,
    },
}

fn describe_points(points: &[(usize, Vec2)]) -> String {
    let shown: Vec<String> = points
        .iter()
        .take(8)
        .map(|(i, p)| format!("point {i} ({}, {})", p.x, p.y))
        .collect();
    let more = points.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}
