//! The checks of a fit: input that cannot determine a calibration (too few
//! or too many points, non-finite values, duplicates, points on a line, a
//! rank-deficient DLT) and solutions to refuse (parameters the points do
//! not determine, a mirrored image).

use super::model::{Params, Problem, Sample};
use super::start::dlt;
use super::{Correspondence, Model};
use crate::calib::linalg::symmetric_eigen;
use crate::calib::{CalibError, DuplicatePair};
use crate::geom::Mat3;
use crate::geom::Vec2;
use crate::geom::mat3::det;

/// Largest number of points accepted.
pub const MAX_FIT_POINTS: usize = 100_000;
/// Largest coordinate accepted, in pixels or world units: far beyond any
/// picture or floor, and small enough that sums of squares stay finite.
pub const MAX_COORD: f64 = 1e12;
/// Smallest extent of the image or world points (pixels or world units):
/// below it, the fit's scaled values lose their meaning.
pub const MIN_EXTENT: f64 = 1e-9;
/// The DLT is rank-deficient below this ratio of eigenvalues of AᵀA
/// (singular values 10⁻⁶ apart).
const RANK_EPS: f64 = 1e-12;

/// Count, finiteness, duplicates and collinearity. Points that share
/// image or world coordinates are all reported at once; with
/// `duplicates_allowed` (a robust fit, which finds the mislabelled one of
/// each pair) they are no error.
pub(super) fn check_points(
    points: &[Correspondence],
    model: Model,
    duplicates_allowed: bool,
) -> Result<(), CalibError> {
    check_count(points.len(), model)?;
    for (index, c) in points.iter().enumerate() {
        if !(c.image.is_finite() && c.world.is_finite()) {
            return Err(CalibError::NotFinite {
                index,
                u: c.image.x,
                v: c.image.y,
                x: c.world.x,
                y: c.world.y,
            });
        }
    }
    for (index, c) in points.iter().enumerate() {
        for (what, p) in [("image", c.image), ("world", c.world)] {
            if p.x.abs() > MAX_COORD || p.y.abs() > MAX_COORD {
                return Err(CalibError::OutOfRange {
                    index,
                    what,
                    a: p.x,
                    b: p.y,
                    limit: MAX_COORD,
                });
            }
        }
    }
    let mut pairs = Vec::new();
    for (what, get) in [
        (
            "world",
            (|c: &Correspondence| c.world) as fn(&Correspondence) -> Vec2,
        ),
        ("image", |c: &Correspondence| c.image),
    ] {
        let mut order: Vec<usize> = (0..points.len()).collect();
        let key = |i: usize| {
            let p = get(&points[i]);
            // +0.0 so that −0 and 0 compare equal.
            (p.x + 0.0, p.y + 0.0)
        };
        order.sort_by(|&a, &b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(a.cmp(&b))
        });
        // Each point after the first of a run of equal ones pairs with
        // that first.
        let mut i = 0;
        while i < order.len() {
            let mut j = i + 1;
            while j < order.len() && key(order[j]) == key(order[i]) {
                pairs.push(DuplicatePair {
                    first: order[i],
                    second: order[j],
                    what,
                    at: get(&points[order[i]]),
                });
                j += 1;
            }
            i = j;
        }
        let pts: Vec<Vec2> = points.iter().map(get).collect();
        check_spread(&pts, what)?;
    }
    if !pairs.is_empty() && !duplicates_allowed {
        pairs.sort_by_key(|p| (p.first, p.second));
        return Err(CalibError::Duplicates { pairs });
    }
    Ok(())
}

/// The points' smaller principal axis must not vanish: neither too small
/// an extent nor all on one line.
pub(super) fn check_spread(pts: &[Vec2], what: &'static str) -> Result<(), CalibError> {
    // Measured on deviations scaled to at most 1, so that neither squares
    // of large values overflow nor those of small ones underflow (which
    // looked like points on a line).
    let n = pts.len().max(1) as f64;
    let mean = pts.iter().fold(Vec2::ZERO, |acc, p| acc + *p) * (1.0 / n);
    let extent = pts
        .iter()
        .map(|p| *p - mean)
        .fold(0.0f64, |m, d| m.max(d.x.abs()).max(d.y.abs()));
    if extent < MIN_EXTENT {
        return Err(CalibError::TooSmall {
            what,
            extent,
            min: MIN_EXTENT,
        });
    }
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for p in pts {
        let d = (*p - mean) * (1.0 / extent);
        sxx += d.x * d.x;
        sxy += d.x * d.y;
        syy += d.y * d.y;
    }
    let tr = sxx + syy;
    let disc = ((sxx - syy).powi(2) + 4.0 * sxy * sxy).sqrt();
    let small = 0.5 * (tr - disc);
    if small.is_nan() || small <= 1e-12 * tr {
        return Err(CalibError::Collinear { what });
    }
    Ok(())
}

/// Refuses points that leave the normalised DLT rank-deficient (three of
/// four on a line, and the like).
pub(super) fn check_rank(problem: &Problem, data: &[Sample]) -> Result<(), CalibError> {
    let (ratio, _) = dlt(problem, data);
    if ratio.is_nan() || ratio <= RANK_EPS {
        return Err(CalibError::RankDeficient(format!(
            "the points leave the homography undetermined (singular value ratio {:.1e}); \
             are three of four points on one line?",
            ratio.max(0.0).sqrt()
        )));
    }
    Ok(())
}

impl Problem {
    /// Refuses a solution whose normal equations have a flat direction.
    pub(super) fn check_determined(&self, data: &[Sample], th: &Params) -> Result<(), CalibError> {
        let np = self.np();
        let Some((a, _)) = self.normal_equations(data, th) else {
            return Err(CalibError::NoConvergence("the solution is not finite".into()));
        };
        // Scale to a correlation matrix so that units do not matter.
        let mut c = vec![0.0; np * np];
        for x in 0..np {
            for y in 0..np {
                let d = (a[x * np + x] * a[y * np + y]).sqrt();
                c[x * np + y] = if d > 0.0 { a[x * np + y] / d } else { 0.0 };
            }
        }
        let (vals, _) = symmetric_eigen(&c, np);
        if vals[0].is_nan() || vals[0] <= 1e-12 {
            let what = if self.model == Model::Radial {
                "the distortion is not determined by these points: spread them over different \
                 distances from the image centre"
            } else {
                "the homography is not determined by these points"
            };
            return Err(CalibError::RankDeficient(what.into()));
        }
        Ok(())
    }

    /// Whether the homography reverses orientation relative to a camera
    /// above a right-handed, z-up floor (determinant > 0 with w > 0).
    pub(super) fn is_mirrored(&self, th: &Params) -> bool {
        let hn: Mat3 = [[th[0], th[1], th[2]], [th[3], th[4], th[5]], [th[6], th[7], 1.0]];
        det(&hn) > 0.0
    }
}
/// Refuses fewer points than `model` needs, or more than a fit takes.
pub(super) fn check_count(n: usize, model: Model) -> Result<(), CalibError> {
    if n < model.min_points() {
        return Err(CalibError::TooFewPoints {
            model,
            needed: model.min_points(),
            got: n,
        });
    }
    if n > MAX_FIT_POINTS {
        return Err(CalibError::TooManyPoints {
            got: n,
            max: MAX_FIT_POINTS,
        });
    }
    Ok(())
}
