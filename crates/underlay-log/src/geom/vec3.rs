//! 3-D vectors as plain `[f64; 3]` arrays (camera poses, ray casting):
//! sums, scaling, dot and cross products, normalisation.

/// A point or direction in space.
pub type Vec3 = [f64; 3];

pub fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn scale(a: Vec3, s: f64) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

pub fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The length of `a`.
pub fn norm(a: Vec3) -> f64 {
    dot(a, a).sqrt()
}

/// `a` divided by its length, or `None` when that is below 10⁻¹² or not
/// finite.
pub fn normalized(a: Vec3) -> Option<Vec3> {
    let l = dot(a, a).sqrt();
    (l > 1e-12 && l.is_finite()).then(|| a.map(|v| v / l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_and_normalisation() {
        let (x, y) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        assert_eq!(cross(x, y), [0.0, 0.0, 1.0]);
        assert_eq!(dot(add(x, y), sub(x, y)), 0.0);
        assert_eq!(scale(x, 2.0), [2.0, 0.0, 0.0]);
        assert_eq!(normalized([0.0, 3.0, 4.0]), Some([0.0, 0.6, 0.8]));
        assert_eq!(norm([0.0, 3.0, 4.0]), 5.0);
        assert_eq!(normalized([0.0; 3]), None);
        assert_eq!(normalized([f64::NAN, 0.0, 1.0]), None);
    }
}
