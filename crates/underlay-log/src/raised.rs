//! Shapes above the floor: the geometry of a primitive that has heights
//! (issue 33, the thesis's §8.2.1 "three-dimensional settings").
//!
//! A floor shape ([`super::Shape`]'s other variants) lies in the floor
//! plane and is hidden by the floor mask where something stands on it. A
//! raised shape ([`Raised`], held by [`super::Shape::Raised`]) has points
//! in space — x and y as on the floor, z up from it, all in the log's
//! world unit — and is drawn through a calibration that knows the camera
//! in space (a full camera: the application's `Calibration::project3`),
//! hidden only by what stands in front of it.
//!
//! A shape given with heights stays raised even when every height is 0
//! (it is then drawn on the floor but hidden by the raised rule), so that
//! reading and writing a log never changes which rule applies.

use super::MarkerKind;
use crate::geom::vec3::Vec3;

/// Why a raised shape cannot be drawn ([`Raised::problem`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A coordinate or size is NaN or infinite.
    NotFinite,
    /// A size is negative.
    Negative,
    /// A path of fewer than two points.
    TooFewPoints,
    /// A circle's normal of length 0.
    NoNormal,
}

impl Problem {
    /// The problem in words.
    pub fn describe(self) -> &'static str {
        match self {
            Problem::NotFinite => "a coordinate or size is not finite",
            Problem::Negative => "a size is negative",
            Problem::TooFewPoints => "a path needs at least two points",
            Problem::NoNormal => "a circle's normal has length 0",
        }
    }
}

/// The upward direction: the normal of a horizontal circle.
pub const UP: Vec3 = [0.0, 0.0, 1.0];

/// A shape with heights, in world units. Angles are radians,
/// counter-clockwise from the world x axis seen from above.
#[derive(Clone, Debug, PartialEq)]
pub enum Raised {
    /// A polyline through points in space (a line is two points);
    /// `closed` joins the last point to the first, and a closed path can be
    /// filled (a flat polygon, or the outline of one seen from the camera).
    Path { points: Box<[Vec3]>, closed: bool },
    /// A circle of `radius` around `center` in the plane through it with
    /// normal `normal` ([`UP`]: a horizontal circle at the centre's height).
    Circle { center: Vec3, radius: f64, normal: Vec3 },
    /// Text anchored at a point in space (left end of the baseline); `size`
    /// as a floor text's.
    Text { anchor: Vec3, text: Box<str>, size: f64 },
    /// A marker at a point in space; `size` as a floor marker's.
    Point {
        position: Vec3,
        kind: MarkerKind,
        size: f64,
    },
    /// A ball: every point within `radius` of `center`.
    Sphere { center: Vec3, radius: f64 },
    /// A vertical cylinder of `radius` whose bottom face is centred on
    /// `base`, `height` tall.
    Cylinder { base: Vec3, radius: f64, height: f64 },
    /// A box whose bottom face is centred on `base`: `size` is its length
    /// along `orientation`, its width across it, and its height.
    Box {
        base: Vec3,
        size: Vec3,
        orientation: f64,
    },
}

impl Raised {
    /// The short name used by the text notation and `log info` (a floor
    /// shape's name where there is one: a raised line is a `line`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Raised::Path { points, closed } => match (points.len(), closed) {
                (2, false) => "line",
                (_, true) => "polygon",
                _ => "polyline",
            },
            Raised::Circle { .. } => "circle",
            Raised::Text { .. } => "text",
            Raised::Point { .. } => "point",
            Raised::Sphere { .. } => "sphere",
            Raised::Cylinder { .. } => "cylinder",
            Raised::Box { .. } => "box",
        }
    }

    /// Calls `f` with every coordinate and size that must be finite, and
    /// whether it must also be non-negative: what readers check before
    /// keeping a shape.
    pub fn for_each_number(&self, mut f: impl FnMut(f64, bool)) {
        let point = |p: &Vec3, f: &mut dyn FnMut(f64, bool)| p.iter().for_each(|&v| f(v, false));
        match self {
            Raised::Path { points, .. } => points.iter().for_each(|p| point(p, &mut f)),
            Raised::Circle {
                center,
                radius,
                normal,
            } => {
                point(center, &mut f);
                f(*radius, true);
                point(normal, &mut f);
            }
            Raised::Text { anchor: p, size, .. }
            | Raised::Point {
                position: p, size, ..
            } => {
                point(p, &mut f);
                f(*size, true);
            }
            Raised::Sphere { center, radius } => {
                point(center, &mut f);
                f(*radius, true);
            }
            Raised::Cylinder { base, radius, height } => {
                point(base, &mut f);
                f(*radius, true);
                f(*height, true);
            }
            Raised::Box {
                base,
                size,
                orientation,
            } => {
                point(base, &mut f);
                size.iter().for_each(|&v| f(v, true));
                f(*orientation, false);
            }
        }
    }

    /// Why the shape cannot be drawn, if it cannot.
    pub fn problem(&self) -> Option<Problem> {
        let mut found = None;
        self.for_each_number(|v, non_negative| {
            if found.is_none() {
                if !v.is_finite() {
                    found = Some(Problem::NotFinite);
                } else if non_negative && v < 0.0 {
                    found = Some(Problem::Negative);
                }
            }
        });
        found.or(match self {
            Raised::Path { points, .. } if points.len() < 2 => Some(Problem::TooFewPoints),
            Raised::Circle { normal, .. } if normal.iter().all(|&v| v == 0.0) => Some(Problem::NoNormal),
            _ => None,
        })
    }

    /// Why the shape cannot be drawn, in words ([`Self::problem`]).
    pub fn invalid(&self) -> Option<&'static str> {
        self.problem().map(Problem::describe)
    }

    /// Its points on the floor and their heights' range, for bounds
    /// (`log info`, the viewer's field view): the vertices of a path, the
    /// centre of a round shape grown by its radius, the base of a solid.
    pub fn extent(&self) -> ([f64; 2], [f64; 2], [f64; 2]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut add = |p: Vec3, r: [f64; 3]| {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k] - r[k]);
                hi[k] = hi[k].max(p[k] + r[k]);
            }
        };
        match self {
            Raised::Path { points, .. } => points.iter().for_each(|&p| add(p, [0.0; 3])),
            Raised::Circle { center, radius, .. } | Raised::Sphere { center, radius } => {
                add(*center, [*radius; 3])
            }
            Raised::Text { anchor: p, .. } | Raised::Point { position: p, .. } => add(*p, [0.0; 3]),
            Raised::Cylinder { base, radius, height } => {
                add(*base, [*radius, *radius, 0.0]);
                add([base[0], base[1], base[2] + height], [*radius, *radius, 0.0]);
            }
            Raised::Box { base, size, .. } => {
                let r = 0.5 * size[0].hypot(size[1]);
                add(*base, [r, r, 0.0]);
                add([base[0], base[1], base[2] + size[2]], [r, r, 0.0]);
            }
        }
        ([lo[0], hi[0]], [lo[1], hi[1]], [lo[2], hi[2]])
    }

    /// Whether the shape has an area to fill (a closed path, a circle, a
    /// solid), as opposed to a curve, a text or a marker.
    pub fn has_area(&self) -> bool {
        match self {
            Raised::Path { closed, .. } => *closed,
            Raised::Text { .. } | Raised::Point { .. } => false,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_extent_and_validity() {
        let line = Raised::Path {
            points: vec![[0.0, 0.0, 0.0], [1000.0, 0.0, 800.0]].into(),
            closed: false,
        };
        assert_eq!(line.kind_name(), "line");
        assert_eq!(line.extent(), ([0.0, 1000.0], [0.0, 0.0], [0.0, 800.0]));
        assert!(line.invalid().is_none());
        let cyl = Raised::Cylinder {
            base: [100.0, 0.0, 0.0],
            radius: 90.0,
            height: 150.0,
        };
        assert_eq!(cyl.kind_name(), "cylinder");
        assert_eq!(cyl.extent().2, [0.0, 150.0]);
        let bad = Raised::Sphere {
            center: [0.0, f64::NAN, 0.0],
            radius: 1.0,
        };
        assert!(bad.invalid().is_some());
        let flat = Raised::Circle {
            center: [0.0; 3],
            radius: 1.0,
            normal: [0.0; 3],
        };
        assert_eq!(flat.invalid(), Some("a circle's normal has length 0"));
        let short = Raised::Path {
            points: vec![[0.0; 3]].into(),
            closed: false,
        };
        assert!(short.invalid().is_some());
        let neg = Raised::Box {
            base: [0.0; 3],
            size: [1.0, -1.0, 1.0],
            orientation: 0.0,
        };
        assert_eq!(neg.invalid(), Some("a size is negative"));
    }
}
