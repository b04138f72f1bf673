//! 3×3 matrices, row-major: products, transpose, determinant, inverse and
//! the homogeneous mapping of a plane point (homographies, camera
//! rotations and intrinsics).

use super::Vec2;

/// A 3×3 matrix, row-major.
pub type Mat3 = [[f64; 3]; 3];

/// The identity matrix.
pub const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Product `a · b`.
/// The rotation of the quaternion `[x, y, z, w]`, normalised first;
/// `None` for a zero or non-finite quaternion.
pub fn from_quaternion(q: [f64; 4]) -> Option<Mat3> {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if !(n.is_finite() && n > 1e-12) {
        return None;
    }
    let [x, y, z, w] = q.map(|v| v / n);
    Some([
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ])
}

pub fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut m = [[0.0; 3]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

/// The product `m · v` of a matrix and a 3-D vector.
pub fn mul_vec(m: &Mat3, v: super::vec3::Vec3) -> super::vec3::Vec3 {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// The transpose.
pub fn transpose(m: &Mat3) -> Mat3 {
    [
        [m[0][0], m[1][0], m[2][0]],
        [m[0][1], m[1][1], m[2][1]],
        [m[0][2], m[1][2], m[2][2]],
    ]
}

/// The determinant.
pub fn det(m: &Mat3) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// The inverse, `None` when singular or not finite.
///
/// Singular means a determinant below 10⁻¹² of the product of the column
/// lengths (its largest possible value, Hadamard's bound), so the test
/// does not depend on the units (mm or m scale the columns).
pub fn invert(m: &Mat3) -> Option<Mat3> {
    let c = |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let cof = [
        [c(1, 2, 1, 2), -c(1, 2, 0, 2), c(1, 2, 0, 1)],
        [-c(0, 2, 1, 2), c(0, 2, 0, 2), -c(0, 2, 0, 1)],
        [c(0, 1, 1, 2), -c(0, 1, 0, 2), c(0, 1, 0, 1)],
    ];
    let det = m[0][0] * cof[0][0] + m[0][1] * cof[0][1] + m[0][2] * cof[0][2];
    let hadamard: f64 = (0..3)
        .map(|c| (m[0][c] * m[0][c] + m[1][c] * m[1][c] + m[2][c] * m[2][c]).sqrt())
        .product();
    if !det.is_finite() || !hadamard.is_finite() || det.abs() <= 1e-12 * hadamard {
        return None;
    }
    let mut inv = [[0.0; 3]; 3];
    for (r, row) in inv.iter_mut().enumerate() {
        for (k, v) in row.iter_mut().enumerate() {
            *v = cof[k][r] / det;
        }
    }
    Some(inv)
}

/// `m · (p.x, p.y, 1)`: the homogeneous image of a plane point, before the
/// division by its last component.
pub fn apply(m: &Mat3, p: Vec2) -> (f64, f64, f64) {
    (
        m[0][0] * p.x + m[0][1] * p.y + m[0][2],
        m[1][0] * p.x + m[1][1] * p.y + m[1][2],
        m[2][0] * p.x + m[2][1] * p.y + m[2][2],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn matrix() -> impl Strategy<Value = Mat3> {
        proptest::array::uniform3(proptest::array::uniform3(-10.0..10.0f64))
    }

    proptest! {
        /// The inverse is a two-sided inverse, the determinant is
        /// multiplicative and unchanged by transposing.
        #[test]
        fn inverse_and_determinant_agree(a in matrix(), b in matrix()) {
            prop_assert!((det(&mul(&a, &b)) - det(&a) * det(&b)).abs() <= 1e-9 * (1.0 + (det(&a) * det(&b)).abs()));
            prop_assert!((det(&transpose(&a)) - det(&a)).abs() <= 1e-9 * (1.0 + det(&a).abs()));
            if let Some(inv) = invert(&a) {
                for p in [mul(&a, &inv), mul(&inv, &a)] {
                    let scale = inv.iter().flatten().map(|v| v.abs()).fold(1.0, f64::max)
                        * a.iter().flatten().map(|v| v.abs()).fold(1.0, f64::max);
                    for (r, row) in p.iter().enumerate() {
                        for (c, v) in row.iter().enumerate() {
                            prop_assert!((v - IDENTITY[r][c]).abs() < 1e-9 * scale);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn singular_and_hostile_matrices_have_no_inverse() {
        assert!(invert(&[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]).is_none());
        assert!(invert(&[[1.0, 0.0, 0.0], [0.0, f64::NAN, 0.0], [0.0, 0.0, 1.0]]).is_none());
        assert!(invert(&[[f64::MAX, 0.0, 0.0], [0.0, f64::MAX, 0.0], [0.0, 0.0, f64::MAX]]).is_none());
        assert_eq!(invert(&IDENTITY), Some(IDENTITY));
        assert_eq!(apply(&IDENTITY, Vec2::new(2.0, 3.0)), (2.0, 3.0, 1.0));
    }
}
