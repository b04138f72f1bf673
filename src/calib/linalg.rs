//! Small dense linear algebra for calibration: symmetric eigen-decomposition
//! (cyclic Jacobi) and positive-definite solves (Cholesky) on matrices of at
//! most a dozen rows, stored row-major in flat slices.
//!
//! The fitting problems here have 8–10 parameters, so these direct methods
//! are exact enough and far cheaper than pulling in a linear-algebra crate.

/// Eigenvalues (ascending) and eigenvectors (the columns of the returned
/// row-major `n × n` matrix, in the same order) of the symmetric `n × n`
/// matrix `a`. Only the upper triangle is read.
pub fn symmetric_eigen(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    debug_assert_eq!(a.len(), n * n);
    let mut m = vec![0.0; n * n];
    for r in 0..n {
        for c in 0..n {
            m[r * n + c] = if c >= r { a[r * n + c] } else { a[c * n + r] };
        }
    }
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _sweep in 0..64 {
        let off: f64 = (0..n)
            .flat_map(|r| ((r + 1)..n).map(move |c| (r, c)))
            .map(|(r, c)| m[r * n + c] * m[r * n + c])
            .sum();
        let total: f64 = m.iter().map(|x| x * x).sum();
        if off <= 1e-30 * total || !off.is_finite() {
            break;
        }
        for p in 0..n {
            for q in (p + 1)..n {
                let apq = m[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let app = m[p * n + p];
                let aqq = m[q * n + q];
                let theta = (aqq - app) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let mkp = m[k * n + p];
                    let mkq = m[k * n + q];
                    m[k * n + p] = c * mkp - s * mkq;
                    m[k * n + q] = s * mkp + c * mkq;
                }
                for k in 0..n {
                    let mpk = m[p * n + k];
                    let mqk = m[q * n + k];
                    m[p * n + k] = c * mpk - s * mqk;
                    m[q * n + k] = s * mpk + c * mqk;
                }
                for k in 0..n {
                    let vkp = v[k * n + p];
                    let vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| m[i * n + i].total_cmp(&m[j * n + j]));
    let values = order.iter().map(|&i| m[i * n + i]).collect();
    let mut vectors = vec![0.0; n * n];
    for (new_c, &old_c) in order.iter().enumerate() {
        for r in 0..n {
            vectors[r * n + new_c] = v[r * n + old_c];
        }
    }
    (values, vectors)
}

/// Solves `a x = b` for a symmetric positive-definite `n × n` matrix `a`
/// (row-major) by Cholesky decomposition; `None` when `a` is not positive
/// definite (numerically) or anything is not finite.
pub fn cholesky_solve(a: &[f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    debug_assert_eq!(a.len(), n * n);
    let mut l = vec![0.0; n * n];
    let scale = (0..n).map(|i| a[i * n + i].abs()).fold(0.0, f64::max);
    for i in 0..n {
        for j in 0..=i {
            let mut sum = a[i * n + j];
            for k in 0..j {
                sum -= l[i * n + k] * l[j * n + k];
            }
            if i == j {
                if !(sum > 1e-300 && sum > 1e-15 * scale) {
                    return None;
                }
                l[i * n + i] = sum.sqrt();
            } else {
                l[i * n + j] = sum / l[j * n + j];
            }
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        let mut sum = b[i];
        for k in 0..i {
            sum -= l[i * n + k] * y[k];
        }
        y[i] = sum / l[i * n + i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let mut sum = y[i];
        for k in (i + 1)..n {
            sum -= l[k * n + i] * x[k];
        }
        x[i] = sum / l[i * n + i];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_of_known_matrix() {
        // [[2,1],[1,2]] has eigenvalues 1 and 3.
        let (vals, vecs) = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2);
        assert!((vals[0] - 1.0).abs() < 1e-12 && (vals[1] - 3.0).abs() < 1e-12);
        // The first eigenvector is ±(1, −1)/√2.
        assert!((vecs[0].abs() - 0.5f64.sqrt()).abs() < 1e-12);
        assert!((vecs[0] + vecs[2]).abs() < 1e-12);
    }

    #[test]
    fn eigen_reconstructs_random_symmetric_matrix() {
        let n = 6;
        let mut a = vec![0.0; n * n];
        for r in 0..n {
            for c in r..n {
                let v = ((r * 7 + c * 13) % 11) as f64 - 5.0;
                a[r * n + c] = v;
                a[c * n + r] = v;
            }
        }
        let (vals, vecs) = symmetric_eigen(&a, n);
        for r in 0..n {
            for c in 0..n {
                let back: f64 = (0..n).map(|k| vecs[r * n + k] * vals[k] * vecs[c * n + k]).sum();
                assert!((back - a[r * n + c]).abs() < 1e-10, "{r},{c}");
            }
        }
        assert!(vals.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn cholesky_solves_and_refuses_indefinite() {
        let a = [4.0, 2.0, 2.0, 3.0];
        let x = cholesky_solve(&a, &[2.0, 1.0], 2).unwrap();
        assert!((4.0 * x[0] + 2.0 * x[1] - 2.0).abs() < 1e-12);
        assert!((2.0 * x[0] + 3.0 * x[1] - 1.0).abs() < 1e-12);
        assert!(cholesky_solve(&[1.0, 2.0, 2.0, 1.0], &[1.0, 1.0], 2).is_none());
        assert!(cholesky_solve(&[1.0, 1.0, 1.0, 1.0], &[1.0, 1.0], 2).is_none());
    }
}
