//! The pinhole fit's checks on its input: enough points, finite and in
//! range, no duplicates (a post's foot and top share x and y, not z),
//! image points spread in two directions, world points spread in space —
//! not on one line, and in one plane only when that plane is the floor.

use crate::calib::fit::checks::{MAX_COORD, MIN_EXTENT, check_count, check_spread};
use crate::calib::fit::{Correspondence3, Model};
use crate::calib::linalg::symmetric_eigen;
use crate::calib::{CalibError, DuplicatePair};
use crate::geom::Vec2;

/// Refuses input no camera can be fitted to (module docs).
pub(super) fn check_points3(points: &[Correspondence3], duplicates_allowed: bool) -> Result<(), CalibError> {
    let model = Model::Pinhole;
    check_count(points.len(), model)?;
    for (index, c) in points.iter().enumerate() {
        let [x, y, z] = c.world;
        if !(c.image.is_finite() && x.is_finite() && y.is_finite()) {
            return Err(CalibError::NotFinite {
                index,
                u: c.image.x,
                v: c.image.y,
                x,
                y,
            });
        }
        if !(z.is_finite() && z.abs() <= MAX_COORD) {
            return Err(CalibError::BadHeight {
                index,
                z,
                limit: MAX_COORD,
            });
        }
        for (what, p) in [("image", c.image), ("world", Vec2::new(x, y))] {
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
    let pairs = duplicates(points);
    if !pairs.is_empty() && !duplicates_allowed {
        return Err(CalibError::Duplicates { pairs });
    }
    let image: Vec<Vec2> = points.iter().map(|c| c.image).collect();
    check_spread(&image, "image")?;
    check_space(points)
}

/// Pairs of points with the same image, or the same world point in space.
fn duplicates(points: &[Correspondence3]) -> Vec<DuplicatePair> {
    let mut pairs = Vec::new();
    // +0.0 so that −0 and 0 compare equal.
    let world = |i: usize| points[i].world.map(|v| v + 0.0);
    let image = |i: usize| [points[i].image.x + 0.0, points[i].image.y + 0.0, 0.0];
    for (what, key) in [("world", &world as &dyn Fn(usize) -> [f64; 3]), ("image", &image)] {
        let mut order: Vec<usize> = (0..points.len()).collect();
        order.sort_by(|&a, &b| {
            let (ka, kb) = (key(a), key(b));
            (0..3)
                .fold(std::cmp::Ordering::Equal, |o, i| o.then(ka[i].total_cmp(&kb[i])))
                .then(a.cmp(&b))
        });
        let mut i = 0;
        while i < order.len() {
            let mut j = i + 1;
            while j < order.len() && key(order[j]) == key(order[i]) {
                let k = key(order[i]);
                pairs.push(DuplicatePair {
                    first: order[i],
                    second: order[j],
                    what,
                    at: Vec2::new(k[0], k[1]),
                });
                j += 1;
            }
            i = j;
        }
    }
    pairs.sort_by_key(|p| (p.first, p.second));
    pairs
}

/// World points spread in space: not too close together, not on one line,
/// and in one plane only when it is the floor.
fn check_space(points: &[Correspondence3]) -> Result<(), CalibError> {
    let n = points.len() as f64;
    let mean: [f64; 3] = std::array::from_fn(|i| points.iter().map(|c| c.world[i]).sum::<f64>() / n);
    let extent = points
        .iter()
        .flat_map(|c| (0..3).map(move |i| (c.world[i] - mean[i]).abs()))
        .fold(0.0f64, f64::max);
    if extent < MIN_EXTENT {
        return Err(CalibError::TooSmall {
            what: "world",
            extent,
            min: MIN_EXTENT,
        });
    }
    let mut cov = [0.0; 9];
    for c in points {
        let d: [f64; 3] = std::array::from_fn(|i| (c.world[i] - mean[i]) / extent);
        for i in 0..3 {
            for j in 0..3 {
                cov[i * 3 + j] += d[i] * d[j];
            }
        }
    }
    let (vals, _) = symmetric_eigen(&cov, 3);
    let tr = vals.iter().sum::<f64>();
    if vals[1].is_nan() || vals[1] <= 1e-12 * tr {
        return Err(CalibError::RankDeficient(
            "the world points all lie on one line: a camera needs points spread over the floor \
             (and, best, some at known heights)"
                .into(),
        ));
    }
    let on_floor = points.iter().all(|c| c.world[2] == 0.0);
    if (vals[0].is_nan() || vals[0] <= 1e-12 * tr) && !on_floor {
        return Err(CalibError::RankDeficient(
            "the world points all lie in one plane that is not the floor: add points on the floor \
             (z = 0) and off that plane"
                .into(),
        ));
    }
    Ok(())
}
