//! Rotations and the split of a camera's 3 × 3 block, in plain numbers:
//! Rodrigues vectors both ways (as OpenCV's `Rodrigues`), the nearest
//! rotation to a matrix (polar decomposition), and the RQ decomposition
//! (Givens rotations, Hartley & Zisserman A4.1.1).

use crate::calib::Mat3;
use crate::calib::linalg::symmetric_eigen;
use crate::geom::mat3::{det, invert, mul, transpose};
use crate::geom::vec3::Vec3;

/// Rotation matrix of a Rodrigues vector (axis × angle in radians), as
/// OpenCV's `Rodrigues`.
pub fn rodrigues(rvec: [f64; 3]) -> Mat3 {
    let theta = (rvec[0] * rvec[0] + rvec[1] * rvec[1] + rvec[2] * rvec[2]).sqrt();
    if theta < 1e-300 {
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    }
    let [x, y, z] = rvec.map(|v| v / theta);
    let (s, c) = theta.sin_cos();
    let v = 1.0 - c;
    [
        [c + x * x * v, x * y * v - z * s, x * z * v + y * s],
        [y * x * v + z * s, c + y * y * v, y * z * v - x * s],
        [z * x * v - y * s, z * y * v + x * s, c + z * z * v],
    ]
}

/// `m = K·R` with `K` upper triangular with a positive diagonal and `R`
/// orthonormal (a rotation or a reflection); `None` when `m` is singular
/// or not finite.
pub(crate) fn rq(m: &Mat3) -> Option<(Mat3, Mat3)> {
    if !m.iter().flatten().all(|v| v.is_finite()) || invert(m).is_none() {
        return None;
    }
    // Givens rotations about x, y, z zero m[2][1], m[2][0] and m[1][0].
    let givens = |a: f64, b: f64| {
        let n = a.hypot(b);
        if n > 0.0 { (a / n, b / n) } else { (1.0, 0.0) }
    };
    let (c, s) = givens(m[2][2], -m[2][1]);
    let qx: Mat3 = [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]];
    let m1 = mul(m, &qx);
    let (c, s) = givens(m1[2][2], m1[2][0]);
    let qy: Mat3 = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]];
    let m2 = mul(&m1, &qy);
    let (c, s) = givens(m2[1][1], -m2[1][0]);
    let qz: Mat3 = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
    let mut k = mul(&m2, &qz);
    // m = K·Qzᵀ·Qyᵀ·Qxᵀ
    let mut r = transpose(&mul(&mul(&qx, &qy), &qz));
    // A positive diagonal: flip the sign of a column of K and the row of R.
    for i in 0..3 {
        if k[i][i] < 0.0 {
            for row in &mut k {
                row[i] = -row[i];
            }
            r[i] = r[i].map(|v| -v);
        }
    }
    // Exactly upper triangular.
    k[1][0] = 0.0;
    k[2][0] = 0.0;
    k[2][1] = 0.0;
    Some((k, r))
}

/// The rotation nearest to `m` (polar decomposition `m (mᵀm)^(−1/2)`);
/// `None` when `m` is singular or a reflection.
pub(crate) fn nearest_rotation(m: &Mat3) -> Option<Mat3> {
    let mtm = mul(&transpose(m), m);
    let flat: Vec<f64> = mtm.iter().flatten().copied().collect();
    let (vals, vecs) = symmetric_eigen(&flat, 3);
    if vals[0].is_nan() || vals[0] <= 1e-12 * vals[2] || det(m) <= 0.0 {
        return None;
    }
    // (mᵀm)^(−1/2) = V Λ^(−1/2) Vᵀ
    let inv_sqrt: Mat3 = std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            (0..3)
                .map(|k| vecs[i * 3 + k] * vecs[j * 3 + k] / vals[k].sqrt())
                .sum()
        })
    });
    let r = mul(m, &inv_sqrt);
    r.iter().flatten().all(|v| v.is_finite()).then_some(r)
}

/// The Rodrigues vector (axis × angle, radians) of a rotation matrix, as
/// OpenCV's `Rodrigues`; the inverse of [`rodrigues`].
pub fn rotation_vector(r: &Mat3) -> Vec3 {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let cos = ((tr - 1.0) / 2.0).clamp(-1.0, 1.0);
    let axis_sin = [
        (r[2][1] - r[1][2]) / 2.0,
        (r[0][2] - r[2][0]) / 2.0,
        (r[1][0] - r[0][1]) / 2.0,
    ];
    let sin = (axis_sin[0].powi(2) + axis_sin[1].powi(2) + axis_sin[2].powi(2)).sqrt();
    let theta = sin.atan2(cos);
    if sin > 1e-6 {
        return axis_sin.map(|v| v / sin * theta);
    }
    if cos > 0.0 {
        // Near the identity: θ ≈ sin θ.
        return axis_sin;
    }
    // Near a half turn: R ≈ 2 n nᵀ − I; the axis from the largest diagonal.
    let i = (0..3).max_by(|&a, &b| r[a][a].total_cmp(&r[b][b])).unwrap_or(0);
    let ni = ((r[i][i] + 1.0) / 2.0).max(0.0).sqrt();
    if ni <= 0.0 {
        return [0.0; 3];
    }
    let mut n = [0.0; 3];
    for (j, v) in n.iter_mut().enumerate() {
        *v = if j == i {
            ni
        } else {
            (r[i][j] + r[j][i]) / (4.0 * ni)
        };
    }
    // The sign of the axis from the (small) antisymmetric part.
    let s = n[0] * axis_sin[0] + n[1] * axis_sin[1] + n[2] * axis_sin[2];
    let sign = if s < 0.0 { -1.0 } else { 1.0 };
    n.map(|v| v * sign * theta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &Mat3, b: &Mat3, tol: f64) -> bool {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .all(|(x, y)| (x - y).abs() <= tol)
    }

    #[test]
    fn rq_splits_a_matrix_into_triangle_and_rotation() {
        for rv in [
            [0.3, -1.2, 0.5],
            [2.0, 0.1, -0.4],
            [0.0, 0.0, 3.0],
            [-2.5, 1.0, 0.7],
        ] {
            let r = rodrigues(rv);
            let k = [[1500.0, 2.0, 700.0], [0.0, 1450.0, 380.0], [0.0, 0.0, 1.0]];
            let m = mul(&k, &r);
            let (k2, r2) = rq(&m.map(|row| row.map(|v| v * 3.0))).unwrap();
            assert!(close(&k2.map(|row| row.map(|v| v / 3.0)), &k, 1e-9), "{k2:?}");
            assert!(close(&r2, &r, 1e-12), "{r2:?}");
        }
        assert!(rq(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]).is_none());
    }

    #[test]
    fn rotation_vectors_round_trip_even_near_half_turns() {
        let pi = std::f64::consts::PI;
        for v in [
            [0.3, -1.2, 0.5],
            [1e-9, 0.0, 0.0],
            [0.0; 3],
            [pi, 0.0, 0.0],
            [0.0, pi - 1e-7, 0.0],
            [pi / 3f64.sqrt(), -pi / 3f64.sqrt(), pi / 3f64.sqrt()],
        ] {
            let back = rotation_vector(&rodrigues(v));
            assert!(close(&rodrigues(back), &rodrigues(v), 1e-9), "{v:?} → {back:?}");
        }
    }
}
