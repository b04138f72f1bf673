//! The calibration file (TOML), as sessions embed it and `calib solve -o`
//! writes it: [`CalibrationFile`], reading ([`Calibration::load`]) and
//! writing ([`Calibration::save`], [`Calibration::to_toml`]).
//!
//! A calibration is given as a floor homography (`homography`, with
//! optional `distortion` and, for a full camera, `height_column`) or as a
//! camera (a `[camera]` table: camera matrix, distortion, rotation and
//! position; [`CameraTable`]), never both. A calibration built from a
//! camera is written as that camera, any other as its homography: a file
//! with a homography is written back as it was read.

use serde::{Deserialize, Serialize};

use super::camera::CameraTable;
use super::error::CalibError;
use super::lens::Distortion;
use super::unit;
use super::{Calibration, Mat3};

/// The saved form of a [`Calibration`] (a TOML table).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    /// World → undistorted pixel homography, row-major; absent when a
    /// `[camera]` gives the calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homography: Option<Mat3>,
    /// Image `[width, height]` in pixels, when known: shapes are clipped to
    /// a margin around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<[u32; 2]>,
    /// Lens distortion applied after the homography.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distortion: Option<Distortion>,
    /// A full camera's column for heights: the undistorted pixel of a
    /// point `(x, y, z)` is `homography·(x, y, 1) + z·height_column`,
    /// dehomogenised (the projection matrix's third column, scaled as the
    /// homography is). Absent: the calibration knows only the floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_column: Option<[f64; 3]>,
    /// The calibration as a camera, instead of `homography`,
    /// `distortion` and `height_column` ([`CameraTable`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<CameraTable>,
    /// The unit of the world coordinates (`mm`, `cm`, `m`), when known: a
    /// log in another known unit is converted, with a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_unit: Option<String>,
    /// The points it was fitted from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<unit::FittedPoint>,
    /// Where the field is (a preset's id, or a polygon in world units):
    /// only its picture region can be floor, unless a session says
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<unit::FieldSpec>,
}

impl TryFrom<CalibrationFile> for Calibration {
    type Error = CalibError;
    fn try_from(f: CalibrationFile) -> Result<Self, CalibError> {
        let mut c = match (f.homography, f.camera) {
            (Some(h), None) => {
                let mut c = Calibration::from_parts(h, f.distortion)?;
                if let Some(col) = f.height_column {
                    c = c.with_height_column(col)?;
                }
                c
            }
            (None, Some(cam)) => {
                let given: Vec<&str> = [
                    ("distortion", f.distortion.is_some()),
                    ("height_column", f.height_column.is_some()),
                ]
                .iter()
                .filter(|(_, g)| *g)
                .map(|(k, _)| *k)
                .collect();
                if !given.is_empty() {
                    return Err(CalibError::Format(format!(
                        "`{}` cannot go with a [camera] table: the camera makes them (put the \
                         lens in the camera's `distortion`)",
                        given.join("` and `")
                    )));
                }
                Calibration::from_camera_table(&cam)?
            }
            (Some(_), Some(_)) => {
                return Err(CalibError::Format(
                    "give the calibration once: `homography` or a [camera] table, not both".into(),
                ));
            }
            (None, None) => {
                return Err(CalibError::Format(
                    "a calibration needs `homography` (world → pixels) or a [camera] table".into(),
                ));
            }
        };
        c.origin = Box::new(unit::Origin {
            world_unit: f.world_unit,
            points: f.points,
            field: f.field,
        });
        Ok(match f.image_size {
            Some([w, h]) => c.with_image_size(w, h),
            None => c,
        })
    }
}

impl From<Calibration> for CalibrationFile {
    fn from(c: Calibration) -> Self {
        c.file()
    }
}

impl Calibration {
    /// The saved form: the camera when it was built from one, else the
    /// homography, lens and column.
    fn file(&self) -> CalibrationFile {
        let camera = self.camera_table().cloned();
        let floor = camera.is_none();
        CalibrationFile {
            homography: floor.then_some(self.h),
            image_size: self.image_size,
            distortion: self.lens.as_ref().filter(|_| floor).map(|l| *l.distortion()),
            height_column: self.height_column().filter(|_| floor),
            camera,
            world_unit: self.origin.world_unit.clone(),
            points: self.origin.points.clone(),
            field: self.origin.field.clone(),
        }
    }

    /// Reads a calibration file (the [`CalibrationFile`] TOML format, as
    /// written by [`Self::save`] and `underlay calib solve -o`).
    pub fn load(path: &std::path::Path) -> Result<Self, CalibError> {
        let text = crate::files::read_text_limited(path, crate::files::MAX_SMALL_TEXT).map_err(|source| {
            CalibError::Io {
                path: path.to_owned(),
                source,
            }
        })?;
        crate::toml_text::parse(&text).map_err(|source| CalibError::Parse {
            path: path.to_owned(),
            source,
        })
    }

    /// Writes the calibration file atomically, after `header` (comment
    /// lines, each starting with `#`; may be empty).
    pub fn save(&self, path: &std::path::Path, header: &str) -> Result<(), CalibError> {
        let text = format!("{header}{}", self.to_toml());
        crate::files::write_atomic(path, text.as_bytes()).map_err(|source| CalibError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// The calibration as TOML (the [`CalibrationFile`] format), each
    /// matrix one row per line.
    pub fn to_toml(&self) -> String {
        // Serialising plain numbers and tables cannot fail.
        crate::toml_text::rows_on_lines(&toml::to_string(&self.file()).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera::look_at;
    use crate::geom::Vec2;

    fn camera() -> Calibration {
        let k = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]];
        let (r, t) = look_at([0.0, -9000.0, 5000.0], [0.0, 0.0, 0.0]).unwrap();
        Calibration::from_camera(&k, &[-0.3, 0.05, 0.0, 0.0], &r, t)
            .unwrap()
            .with_image_size(1280, 720)
    }

    /// Issue 33: a camera is saved as a readable `[camera]` table and read
    /// back bit for bit.
    #[test]
    fn a_camera_is_saved_as_its_table_and_read_back_exactly() {
        let c = camera().with_world_unit("mm");
        let text = c.to_toml();
        assert!(
            text.contains("[camera]") && text.contains("position = [0.0, -9000.0, 5000.0]"),
            "{text}"
        );
        assert!(text.contains("matrix = [\n    [900.0, 0.0, 640.0],"), "{text}");
        assert!(
            !text.contains("homography") && !text.contains("height_column"),
            "{text}"
        );
        let back: Calibration = toml::from_str(&text).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.to_toml(), text);
    }

    #[test]
    fn a_hand_written_camera_loads() {
        // Turned 2 rad about x: looking along +y, 24.6° down, at the origin.
        let text = "image_size = [1280, 720]\n[camera]\nmatrix = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], \
                    [0.0, 0.0, 1.0]]\ndistortion = [-0.3, 0.05, 0.0, 0.0]\nrvec = [2.0, 0.0, 0.0]\n\
                    tvec = [0.0, 0.0, 9000.0]\n";
        let c: Calibration = toml::from_str(text).unwrap();
        assert!(c.is_full_camera());
        let cam = c.camera().unwrap();
        let tilt = (2.0 - std::f64::consts::FRAC_PI_2).to_degrees();
        assert!((cam.tilt_deg - tilt).abs() < 1e-9, "{}", cam.tilt_deg);
        assert!((cam.heading_deg - 90.0).abs() < 1e-9, "{}", cam.heading_deg);
        let centre = c.project(Vec2::ZERO).unwrap();
        assert!((centre - Vec2::new(640.0, 360.0)).length() < 1e-9, "{centre:?}");
        // Written back as it was given.
        let again: Calibration = toml::from_str(&c.to_toml()).unwrap();
        assert_eq!(again, c);
        assert!(c.to_toml().contains("rvec = [2.0, 0.0, 0.0]"), "{}", c.to_toml());
    }

    #[test]
    fn camera_and_homography_do_not_mix() {
        let cam = "[camera]\nmatrix = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]]\n\
                   rvec = [1.2, 0.0, 0.0]\nposition = [0.0, -5000.0, 3000.0]\n";
        let h = "homography = [[1.0, 0.0, 5.0], [0.0, 1.0, 6.0], [0.0, 0.0, 1.0]]\n";
        let e = toml::from_str::<Calibration>(&format!("{h}{cam}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
        let e = toml::from_str::<Calibration>(&format!("height_column = [0.0, 1.0, 0.0]\n{cam}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`height_column` cannot go with a [camera]"), "{e}");
        let e = toml::from_str::<Calibration>("image_size = [10, 10]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs `homography`"), "{e}");
        let e = toml::from_str::<Calibration>(&cam.replace("position", "where"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("where"), "{e}");
        let e = toml::from_str::<Calibration>(&cam.replace("3000.0", "-3000.0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("below the floor"), "{e}");
    }

    /// Files with a homography keep loading and are written back unchanged.
    #[test]
    fn homography_files_are_written_back_unchanged() {
        let texts = [
            "homography = [\n    [1.0, 0.0, 5.0],\n    [0.0, 1.0, 6.0],\n    [0.0, 0.0, 1.0],\n]\n",
            "homography = [\n    [2.0, 0.1, 5.0],\n    [0.0, -1.5, 600.0],\n    [0.0, 0.001, 1.0],\n]\n\
             image_size = [1280, 720]\nheight_column = [0.0, -0.5, 0.0002]\nworld_unit = \"mm\"\n\n\
             [distortion]\ncenter = [640.0, 360.0]\nfocal = [734.0, 734.0]\nk1 = -0.2\nk2 = 0.0\n",
        ];
        for text in texts {
            let c: Calibration = toml::from_str(text).unwrap();
            assert!(c.camera_table().is_none());
            assert_eq!(c.to_toml(), text);
        }
    }
}
