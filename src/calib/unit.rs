//! What a calibration was fitted in and from: the world unit (so that a
//! log in another unit is converted rather than drawn a thousand times
//! too small), the labelled points (with their preset names) and the
//! field they lie on ([`FieldSpec`]), kept in the calibration file.
//!
//! The calibration keeps these ([`super::Calibration`] in `calibration.rs`)
//! and this file adds the calibration's methods about them, so the two
//! files name each other.

use serde::{Deserialize, Serialize};

use super::{CalibError, Calibration};

/// Where the floor is, as a session or a calibration file says it
/// (`field = "ssl-b"`, or `field = { polygon = [[x, y], …] }` in world
/// units); its region in the picture is
/// [`crate::mask::field`]'s `FieldSpec::region`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FieldSpec {
    /// A field preset's id (`ssl-a`, `ssl-b`, `football`).
    Preset(String),
    /// A polygon on the floor, in the log's world units.
    Polygon { polygon: Vec<[f64; 2]> },
}

impl From<&str> for FieldSpec {
    fn from(id: &str) -> Self {
        FieldSpec::Preset(id.to_owned())
    }
}

impl std::fmt::Display for FieldSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldSpec::Preset(id) => f.write_str(id),
            FieldSpec::Polygon { polygon } => write!(f, "a polygon of {} corners", polygon.len()),
        }
    }
}

/// A point a calibration was fitted from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedPoint {
    pub u: f64,
    pub v: f64,
    pub x: f64,
    pub y: f64,
    /// Height above the floor (a point a full camera was fitted to at a
    /// known height); 0 on the floor, and then not written.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub z: f64,
    /// The field preset point it was picked as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl From<&super::Correspondence> for FittedPoint {
    fn from(c: &super::Correspondence) -> Self {
        FittedPoint {
            u: c.image.x,
            v: c.image.y,
            x: c.world.x,
            y: c.world.y,
            z: 0.0,
            name: None,
        }
    }
}

impl From<&super::Correspondence3> for FittedPoint {
    fn from(c: &super::Correspondence3) -> Self {
        FittedPoint {
            u: c.image.x,
            v: c.image.y,
            x: c.world[0],
            y: c.world[1],
            z: c.world[2],
            name: None,
        }
    }
}

/// The unit and points of a calibration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Origin {
    pub world_unit: Option<String>,
    pub points: Vec<FittedPoint>,
    /// Where the field is ([`FieldSpec`]), when known.
    pub field: Option<FieldSpec>,
}

/// Metres per unit of the units underlay converts between.
pub fn metres_per(unit: &str) -> Option<f64> {
    match unit.trim() {
        "mm" => Some(0.001),
        "cm" => Some(0.01),
        "m" => Some(1.0),
        _ => None,
    }
}

/// What [`Calibration::for_unit`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum UnitCheck {
    /// Same unit, or the calibration does not say: used as it is.
    Same,
    /// Converted from the calibration's unit to the log's.
    Converted { from: String, to: String },
    /// The two differ and one is not a unit underlay knows.
    Unknown { calibration: String, log: String },
}

impl UnitCheck {
    /// The warning to show, if any.
    pub fn warning(&self) -> Option<String> {
        match self {
            UnitCheck::Same => None,
            UnitCheck::Converted { from, to } => Some(format!(
                "the calibration is in {from} and the log in {to}: the calibration was converted"
            )),
            UnitCheck::Unknown { calibration, log } => Some(format!(
                "the calibration is in {calibration} and the log in {log}, which underlay cannot convert \
                 between: the drawings may be misplaced"
            )),
        }
    }
}

impl Calibration {
    /// The unit of the world coordinates, when recorded.
    pub fn world_unit(&self) -> Option<&str> {
        self.origin.world_unit.as_deref()
    }

    /// The points it was fitted from, when recorded.
    pub fn fitted_points(&self) -> &[FittedPoint] {
        &self.origin.points
    }

    /// The same calibration recording its world unit.
    pub fn with_world_unit(mut self, unit: impl Into<String>) -> Self {
        self.origin.world_unit = Some(unit.into());
        self
    }

    /// Where the field is, when the calibration says it.
    pub fn field(&self) -> Option<&FieldSpec> {
        self.origin.field.as_ref()
    }

    /// The same calibration saying where the field is.
    pub fn with_field(mut self, field: FieldSpec) -> Self {
        self.origin.field = Some(field);
        self
    }

    /// The same calibration recording the points it was fitted from.
    pub fn with_fitted_points(mut self, points: Vec<FittedPoint>) -> Self {
        self.origin.points = points;
        self
    }

    /// This calibration for world coordinates in `unit` (a log's): the same
    /// when the units agree or its own is not recorded; scaled when both
    /// are units underlay knows; unchanged (and said) otherwise.
    pub fn for_unit(&self, unit: &str) -> (Calibration, UnitCheck) {
        match self.converted(unit) {
            Ok(r) => r,
            // Scaling a valid homography by a positive factor keeps it
            // valid; should it not, nothing is converted and that is said.
            Err(_) => (
                self.clone(),
                UnitCheck::Unknown {
                    calibration: self.world_unit().unwrap_or_default().to_owned(),
                    log: unit.to_owned(),
                },
            ),
        }
    }

    fn converted(&self, unit: &str) -> Result<(Calibration, UnitCheck), CalibError> {
        let Some(own) = self.world_unit() else {
            return Ok((self.clone(), UnitCheck::Same));
        };
        if own.trim() == unit.trim() {
            return Ok((self.clone(), UnitCheck::Same));
        }
        let (Some(a), Some(b)) = (metres_per(unit), metres_per(own)) else {
            let check = UnitCheck::Unknown {
                calibration: own.to_owned(),
                log: unit.to_owned(),
            };
            return Ok((self.clone(), check));
        };
        // A log point p (in `unit`) is p · a / b in the calibration's unit.
        let f = a / b;
        let h = self.homography();
        let scaled = [
            [h[0][0] * f, h[0][1] * f, h[0][2]],
            [h[1][0] * f, h[1][1] * f, h[1][2]],
            [h[2][0] * f, h[2][1] * f, h[2][2]],
        ];
        let mut c = match self.camera_table() {
            // A camera stays one: its place is in the new unit.
            Some(cam) => Calibration::from_camera_table(&cam.scaled(f))?,
            None => {
                let mut c = Calibration::from_parts(scaled, self.distortion().copied())?;
                if let Some(col) = self.height_column() {
                    c = c.with_height_column(col.map(|v| v * f))?;
                }
                c
            }
        };
        if let Some([w, hh]) = self.image_size() {
            c = c.with_image_size(w, hh);
        }
        c.origin = Box::new(Origin {
            world_unit: Some(unit.to_owned()),
            points: self
                .origin
                .points
                .iter()
                .map(|p| FittedPoint {
                    x: p.x / f,
                    y: p.y / f,
                    z: p.z / f,
                    ..p.clone()
                })
                .collect(),
            // A preset knows its unit; a polygon is in the calibration's.
            field: self.origin.field.clone().map(|fs| match fs {
                FieldSpec::Polygon { polygon } => FieldSpec::Polygon {
                    polygon: polygon.iter().map(|p| [p[0] / f, p[1] / f]).collect(),
                },
                preset => preset,
            }),
        });
        Ok((
            c,
            UnitCheck::Converted {
                from: own.to_owned(),
                to: unit.to_owned(),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;

    fn metric() -> Calibration {
        // 100 px per metre.
        Calibration::from_homography([[100.0, 0.0, 50.0], [0.0, 100.0, 60.0], [0.0, 0.0, 1.0]])
            .unwrap()
            .with_world_unit("m")
            .with_fitted_points(vec![FittedPoint {
                u: 150.0,
                v: 60.0,
                x: 1.0,
                y: 0.0,
                z: 0.0,
                name: Some("corner".into()),
            }])
    }

    #[test]
    fn a_log_in_millimetres_over_a_calibration_in_metres_is_converted() {
        let (c, check) = metric().for_unit("mm");
        assert_eq!(
            check,
            UnitCheck::Converted {
                from: "m".into(),
                to: "mm".into()
            }
        );
        let p = c.project(Vec2::new(1000.0, 0.0)).unwrap();
        assert!((p - Vec2::new(150.0, 60.0)).length() < 1e-9, "{p:?}");
        assert_eq!(c.world_unit(), Some("mm"));
        assert_eq!(c.fitted_points()[0].x, 1000.0);
        assert!(check.warning().unwrap().contains("converted"));
    }

    #[test]
    fn same_unknown_and_unrecorded_units() {
        assert_eq!(metric().for_unit("m").1, UnitCheck::Same);
        let (_, check) = metric().for_unit("ft");
        assert!(matches!(check, UnitCheck::Unknown { .. }));
        assert!(check.warning().unwrap().contains("cannot convert"));
        let bare = Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap();
        assert_eq!(bare.for_unit("mm").1, UnitCheck::Same);
    }

    #[test]
    fn unit_and_points_are_saved_and_read_back() {
        let c = metric().with_image_size(640, 480);
        let back: Calibration = toml::from_str(&c.to_toml()).unwrap();
        assert_eq!(back, c);
        assert!(c.to_toml().contains("world_unit = \"m\""), "{}", c.to_toml());
    }

    /// A calibration file can say where the field is: a preset as it is, a
    /// polygon (in the calibration's unit) converted with it.
    #[test]
    fn the_field_is_saved_read_back_and_converted() {
        use crate::calib::presets::FieldSpec;
        let preset = metric().with_field(FieldSpec::from("football"));
        let text = preset.to_toml();
        assert!(text.contains("field = \"football\""), "{text}");
        let back: Calibration = toml::from_str(&text).unwrap();
        assert_eq!(back.field(), Some(&FieldSpec::from("football")));
        assert_eq!(back.for_unit("mm").0.field(), Some(&FieldSpec::from("football")));
        let poly = metric().with_field(FieldSpec::Polygon {
            polygon: vec![[0.0, 0.0], [2.0, 0.0], [2.0, 1.5]],
        });
        let back: Calibration = toml::from_str(&poly.to_toml()).unwrap();
        assert_eq!(back, poly);
        assert_eq!(
            back.for_unit("mm").0.field(),
            Some(&FieldSpec::Polygon {
                polygon: vec![[0.0, 0.0], [2000.0, 0.0], [2000.0, 1500.0]],
            })
        );
    }
}
