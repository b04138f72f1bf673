//! What a fit is made from and with: the image ↔ world points, the model
//! fitted and how points that do not fit are treated.

use serde::{Deserialize, Serialize};

use crate::geom::Vec2;
use crate::geom::vec3::Vec3;
use crate::geom::{PixelPoint, WorldPoint};

/// A calibration model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// A plain homography (8 parameters, ≥ 4 points).
    Homography,
    /// Homography plus radial distortion k1, k2 (10 parameters, ≥ 6 points).
    Radial,
    /// A full pinhole camera: focal length, principal point, radial
    /// distortion k1, k2, rotation and position (9 to 11 parameters, ≥ 6
    /// points), from floor points and points at known heights.
    Pinhole,
}

impl Model {
    /// Fewest points the model can be fitted to.
    pub fn min_points(self) -> usize {
        match self {
            Model::Homography => 4,
            Model::Radial | Model::Pinhole => 6,
        }
    }

    pub(super) fn n_params(self) -> usize {
        match self {
            Model::Homography => 8,
            Model::Radial => 10,
            Model::Pinhole => 11,
        }
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Model::Homography => "homography",
            Model::Radial => "radial",
            Model::Pinhole => "pinhole",
        })
    }
}

/// How the final fit treats flagged points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Least squares over every point (flagged points are reported, and used).
    #[serde(rename = "lsq")]
    LeastSquares,
    /// RANSAC: points beyond the threshold are flagged and left out.
    #[serde(rename = "ransac")]
    Ransac,
    /// Least median of squares: flagged points are left out.
    #[serde(rename = "lmeds")]
    Lmeds,
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Method::LeastSquares => "lsq",
            Method::Ransac => "ransac",
            Method::Lmeds => "lmeds",
        })
    }
}

/// One image ↔ world correspondence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Correspondence {
    /// Image pixel (u, v).
    pub image: PixelPoint,
    /// World point (x, y) on the floor.
    pub world: WorldPoint,
}

/// One image ↔ world correspondence in space (the pinhole model's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Correspondence3 {
    /// Image pixel (u, v).
    pub image: PixelPoint,
    /// World point (x, y, z): z is the height above the floor.
    pub world: Vec3,
}

impl From<&Correspondence> for Correspondence3 {
    fn from(c: &Correspondence) -> Self {
        Correspondence3 {
            image: c.image,
            world: [c.world.x, c.world.y, 0.0],
        }
    }
}

/// Options of [`super::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// The model to fit.
    pub model: Model,
    /// Least squares, or a robust method that leaves flagged points out.
    pub method: Method,
    /// RANSAC inlier threshold in pixels; `None` scales it with the
    /// picture ([`super::default_ransac_threshold`]).
    pub ransac_threshold_px: Option<f64>,
    /// Centre of distortion (the pinhole model's principal point, then
    /// held there); defaults to the image centre, else the centre of the
    /// image points' bounding box.
    pub principal_point: Option<Vec2>,
    /// Image `[width, height]`: centre and scale of the distortion, and
    /// stored in the calibration for clipping.
    pub image_size: Option<[u32; 2]>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            model: Model::Homography,
            method: Method::LeastSquares,
            ransac_threshold_px: None,
            principal_point: None,
            image_size: None,
        }
    }
}
