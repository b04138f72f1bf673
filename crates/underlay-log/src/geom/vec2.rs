//! The 2-D vector ([`Vec2`]) and the plane helpers written once for every
//! module: unit vectors, angles, rotation, length clamping and the distance
//! from a point to a segment.

/// A point or vector in a plane: on the floor in world units
/// (`underlay::geom::WorldPoint`) or in an image in pixels
/// (`underlay::geom::PixelPoint`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec2 {
    pub x: f64,
    pub y: f64,
}

impl Vec2 {
    pub const ZERO: Vec2 = Vec2 { x: 0.0, y: 0.0 };

    pub const fn new(x: f64, y: f64) -> Self {
        Vec2 { x, y }
    }

    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }

    pub fn length(self) -> f64 {
        self.x.hypot(self.y)
    }

    pub fn dot(self, o: Vec2) -> f64 {
        self.x * o.x + self.y * o.y
    }

    /// The z component of the 3-D cross product: positive when `o` lies
    /// counter-clockwise of `self` (with y up).
    pub fn cross(self, o: Vec2) -> f64 {
        self.x * o.y - self.y * o.x
    }

    pub fn lerp(self, o: Vec2, t: f64) -> Vec2 {
        Vec2::new(self.x + (o.x - self.x) * t, self.y + (o.y - self.y) * t)
    }
}

impl std::ops::Add for Vec2 {
    type Output = Vec2;
    fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
}

impl std::ops::Sub for Vec2 {
    type Output = Vec2;
    fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
}

impl std::ops::Mul<f64> for Vec2 {
    type Output = Vec2;
    fn mul(self, k: f64) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
}

impl From<(f64, f64)> for Vec2 {
    fn from((x, y): (f64, f64)) -> Self {
        Vec2::new(x, y)
    }
}

/// `v` scaled to length 1, or zero when it is shorter than 10⁻⁹.
pub fn unit(v: Vec2) -> Vec2 {
    let l = v.length();
    if l > 1e-9 { v * (1.0 / l) } else { Vec2::ZERO }
}

/// The unit vector at `angle` radians from the x axis.
pub fn dir(angle: f64) -> Vec2 {
    Vec2::new(angle.cos(), angle.sin())
}

/// The angle of `v` from the x axis, in `[-π, π]`.
pub fn angle_of(v: Vec2) -> f64 {
    v.y.atan2(v.x)
}

/// `a` wrapped into `[-π, π)`.
pub fn wrap_angle(a: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    (a + PI).rem_euclid(TAU) - PI
}

/// `v` rotated by `a` radians (counter-clockwise with y up).
pub fn rotate(v: Vec2, a: f64) -> Vec2 {
    let (s, c) = a.sin_cos();
    Vec2::new(v.x * c - v.y * s, v.x * s + v.y * c)
}

/// `v` shortened to length `max` when longer.
pub fn clamp_len(v: Vec2, max: f64) -> Vec2 {
    let l = v.length();
    if l > max && l > 0.0 { v * (max / l) } else { v }
}

/// Distance from `p` to the segment `a–b` (to `a` when the segment is a
/// point).
pub fn distance_to_segment(p: Vec2, a: Vec2, b: Vec2) -> f64 {
    (p - nearest_on_segment(p, a, b)).length()
}

/// Whether `p` lies farther than `d` from segment `a → b`: the same answer
/// as comparing [`distance_to_segment`] (up to the last bit) without its
/// `hypot`, for hot loops (a square too large for `f64` is infinite, so
/// still farther).
pub fn farther_from_segment(p: Vec2, a: Vec2, b: Vec2, d: f64) -> bool {
    let q = p - nearest_on_segment(p, a, b);
    q.dot(q) > d * d
}

/// The point of segment `a → b` nearest to `p`.
pub fn nearest_on_segment(p: Vec2, a: Vec2, b: Vec2) -> Vec2 {
    let ab = b - a;
    let len2 = ab.dot(ab);
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    a.lerp(b, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::f64::consts::{FRAC_PI_2, PI};

    proptest! {
        /// The test without `hypot` answers as the distance does, away
        /// from the last bit.
        #[test]
        fn farther_from_segment_agrees_with_the_distance(
            p in (-1e4..1e4f64, -1e4..1e4f64),
            a in (-1e4..1e4f64, -1e4..1e4f64),
            b in (-1e4..1e4f64, -1e4..1e4f64),
            d in 0.0..2e4f64,
        ) {
            let (p, a, b) = (Vec2::from(p), Vec2::from(a), Vec2::from(b));
            let dist = distance_to_segment(p, a, b);
            prop_assume!((dist - d).abs() > 1e-9 * (1.0 + d));
            prop_assert_eq!(farther_from_segment(p, a, b, d), dist > d);
        }
    }

    #[test]
    fn farther_from_segment_handles_huge_and_nan() {
        let (a, b) = (Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0));
        assert!(farther_from_segment(Vec2::new(1e300, 1e300), a, b, 1.0));
        assert!(!farther_from_segment(Vec2::new(f64::NAN, 0.0), a, b, 1.0));
        assert!(!farther_from_segment(Vec2::new(0.5, 0.5), a, b, f64::INFINITY));
    }

    #[test]
    fn angles_and_unit_vectors() {
        assert!((unit(Vec2::new(3.0, 4.0)) - Vec2::new(0.6, 0.8)).length() < 1e-15);
        assert_eq!(unit(Vec2::new(1e-10, 0.0)), Vec2::ZERO);
        assert!((dir(FRAC_PI_2) - Vec2::new(0.0, 1.0)).length() < 1e-15);
        assert_eq!(angle_of(Vec2::new(0.0, -2.0)), -FRAC_PI_2);
        assert_eq!(wrap_angle(PI), -PI);
        assert!((wrap_angle(3.0 * PI + 0.5) - (-PI + 0.5)).abs() < 1e-12);
        assert!((rotate(Vec2::new(1.0, 0.0), FRAC_PI_2) - Vec2::new(0.0, 1.0)).length() < 1e-15);
        assert_eq!(clamp_len(Vec2::new(3.0, 4.0), 10.0), Vec2::new(3.0, 4.0));
        assert!((clamp_len(Vec2::new(3.0, 4.0), 1.0) - Vec2::new(0.6, 0.8)).length() < 1e-15);
        assert_eq!(Vec2::new(1.0, 0.0).cross(Vec2::new(0.0, 1.0)), 1.0);
    }

    #[test]
    fn segment_distance_at_ends_sides_and_points() {
        let (a, b) = (Vec2::new(0.0, 0.0), Vec2::new(10.0, 0.0));
        assert_eq!(distance_to_segment(Vec2::new(5.0, 3.0), a, b), 3.0);
        assert_eq!(distance_to_segment(Vec2::new(-3.0, 4.0), a, b), 5.0);
        assert_eq!(distance_to_segment(Vec2::new(13.0, -4.0), a, b), 5.0);
        assert_eq!(distance_to_segment(Vec2::new(3.0, 4.0), a, a), 5.0);
    }

    proptest! {
        /// The distance to a segment is the smallest distance to dense
        /// samples of it (within the sampling step).
        #[test]
        fn segment_distance_matches_sampling(
            p in (-100.0..100.0f64, -100.0..100.0f64),
            a in (-100.0..100.0f64, -100.0..100.0f64),
            b in (-100.0..100.0f64, -100.0..100.0f64),
        ) {
            let (p, a, b) = (Vec2::from(p), Vec2::from(a), Vec2::from(b));
            let d = distance_to_segment(p, a, b);
            let n = 2000;
            let sampled = (0..=n)
                .map(|i| (p - a.lerp(b, i as f64 / n as f64)).length())
                .fold(f64::INFINITY, f64::min);
            let step = (b - a).length() / n as f64;
            prop_assert!(d <= sampled + 1e-9 && sampled <= d + step);
        }
    }
}
