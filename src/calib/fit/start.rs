//! Starting estimates of a fit: OpenCV's `findHomography` (least
//! squares, RANSAC or LMedS) and the normalised direct linear transform.

use super::model::{Params, Problem, Sample};
use super::{Correspondence, Method};
use crate::calib::linalg::symmetric_eigen;
use crate::geom::Mat3;
use crate::geom::mat3::mul;

/// OpenCV's `findHomography` world → image, or `None` when it gives up.
pub(super) fn opencv_homography(points: &[Correspondence], method: Method, threshold: f64) -> Option<Mat3> {
    use opencv::calib3d;
    use opencv::core::{Mat, MatTraitConst, Point2d, Vector};
    let src: Vector<Point2d> = points
        .iter()
        .map(|c| Point2d::new(c.world.x, c.world.y))
        .collect();
    let dst: Vector<Point2d> = points
        .iter()
        .map(|c| Point2d::new(c.image.x, c.image.y))
        .collect();
    let flag = match method {
        Method::LeastSquares => 0,
        Method::Ransac => calib3d::RANSAC,
        Method::Lmeds => calib3d::LMEDS,
    };
    let mut mask = Mat::default();
    let h = calib3d::find_homography(&src, &dst, &mut mask, flag, threshold).ok()?;
    if h.rows() != 3 || h.cols() != 3 {
        return None;
    }
    let mut m = [[0.0; 3]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *h.at_2d::<f64>(r as i32, c as i32).ok()?;
        }
    }
    m.iter().flatten().all(|v| v.is_finite()).then_some(m)
}

/// Normalised DLT over `data`: the ratio of the second-smallest to the
/// largest eigenvalue of AᵀA (0 when rank-deficient), and the solution as
/// parameters (without distortion).
pub(super) fn dlt(problem: &Problem, data: &[Sample]) -> (f64, Option<Params>) {
    let mut ata = [0.0; 81];
    for s in data {
        let (x, y) = (s.pn.x, s.pn.y);
        let u = problem.image(s.target);
        let rows = [
            [-x, -y, -1.0, 0.0, 0.0, 0.0, u.x * x, u.x * y, u.x],
            [0.0, 0.0, 0.0, -x, -y, -1.0, u.y * x, u.y * y, u.y],
        ];
        for r in &rows {
            for i in 0..9 {
                for j in i..9 {
                    ata[i * 9 + j] += r[i] * r[j];
                }
            }
        }
    }
    let (vals, vecs) = symmetric_eigen(&ata, 9);
    let ratio = if vals[8] > 0.0 { vals[1] / vals[8] } else { 0.0 };
    let h: Vec<f64> = (0..9).map(|r| vecs[r * 9]).collect();
    // The DLT works in the problem's normalised image coordinates; the
    // parameters map to pixels through the problem, so convert.
    let hn: Mat3 = [[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6], h[7], h[8]]];
    let (m, s) = (problem.i_mean, problem.i_scale);
    let ti_inv: Mat3 = [[1.0 / s, 0.0, m.x], [0.0, 1.0 / s, m.y], [0.0, 0.0, 1.0]];
    let (m, s) = (problem.w_mean, problem.w_scale);
    let tw: Mat3 = [[s, 0.0, -s * m.x], [0.0, s, -s * m.y], [0.0, 0.0, 1.0]];
    let pixel = mul(&mul(&ti_inv, &hn), &tw);
    (ratio, problem.params_of_pixel_h(&pixel))
}
