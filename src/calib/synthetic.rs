//! Synthetic camera views of a field, with known truth: random pinhole
//! cameras (pose and focal length) with optional radial distortion, the
//! image points of given world points, and pixel noise. Tests and the
//! accuracy benchmark fit calibrations to these and compare with the truth.
//! Also a fixed pitched camera ([`pitched_camera`]) for drawing tests and
//! benchmarks.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::calib::camera::look_at;
use crate::calib::{Calibration, Correspondence, Mat3};
use crate::geom::Vec2;
use crate::geom::mat3::mul;
use crate::geom::vec3::dot;

/// A distortion-free camera at `eye` (world mm, z up) looking along +y,
/// pitched down by `pitch_deg`, with focal length `focal` pixels and the
/// principal point at the centre of a `width`×`height` image: the floor
/// homography `K·[r1 r2 t]`.
///
/// Panics when the pose makes the floor a line (a camera in the floor
/// plane): fixtures are chosen, not read.
pub fn pitched_camera(width: usize, height: usize, focal: f64, eye: [f64; 3], pitch_deg: f64) -> Calibration {
    let th = pitch_deg.to_radians();
    // Rows of R: camera x right, y down, z forward.
    let r = [
        [1.0, 0.0, 0.0],
        [0.0, -th.sin(), -th.cos()],
        [0.0, th.cos(), -th.sin()],
    ];
    let t = r.map(|row| -dot(row, eye));
    let k = [
        [focal, 0.0, width as f64 / 2.0],
        [0.0, focal, height as f64 / 2.0],
        [0.0, 0.0, 1.0],
    ];
    let rt = [
        [r[0][0], r[0][1], t[0]],
        [r[1][0], r[1][1], t[1]],
        [r[2][0], r[2][1], t[2]],
    ];
    Calibration::from_homography(mul(&k, &rt)).expect("a pitched camera above the floor maps it regularly")
}

/// What view to make.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewSpec {
    /// Image `[width, height]`; the principal point is its centre.
    pub image_size: [u32; 2],
    /// Radial distortion in OpenCV's convention (normalised by the focal
    /// length): coefficient of r².
    pub k1: f64,
    /// Coefficient of r⁴.
    pub k2: f64,
    /// RMS length of the 2-D pixel noise added to each image point (each
    /// axis gets Gaussian noise of `noise_px / √2`).
    pub noise_px: f64,
    /// Seed of the random pose and noise.
    pub seed: u64,
}

impl Default for ViewSpec {
    fn default() -> Self {
        ViewSpec {
            image_size: [1280, 720],
            k1: 0.0,
            k2: 0.0,
            noise_px: 0.0,
            seed: 1,
        }
    }
}

/// A synthetic view and its truth.
#[derive(Clone, Debug)]
pub struct View {
    /// The true mapping.
    pub truth: Calibration,
    /// Camera matrix of the true camera.
    pub k: Mat3,
    /// Rotation world → camera.
    pub r: Mat3,
    /// Translation world → camera.
    pub t: [f64; 3],
    /// The correspondences, with noise.
    pub points: Vec<Correspondence>,
}

/// A random camera seeing every point of `world` (floor, world units mm)
/// from 8–16 m away and 3–10 m up, framed to fill most of the image; `None`
/// when no such pose was found (e.g. a distortion that folds over too
/// early for any framing).
pub fn random_view(spec: &ViewSpec, world: &[Vec2]) -> Option<View> {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let [w, h] = spec.image_size.map(f64::from);
    let extent = world.iter().map(|p| p.length()).fold(0.0, f64::max).max(1.0);
    for _ in 0..500 {
        let target = [
            rng.random_range(-0.1..0.1) * extent,
            rng.random_range(-0.1..0.1) * extent,
            0.0,
        ];
        let az = rng.random_range(0.0..std::f64::consts::TAU);
        let dist = rng.random_range(8000.0..16000.0) * extent / 7500.0;
        let height = rng.random_range(3000.0..10000.0) * extent / 7500.0;
        let eye = [target[0] + dist * az.cos(), target[1] + dist * az.sin(), height];
        let (r, t) = look_at(eye, target).ok()?;
        // Normalised image coordinates of every point; all must be in front.
        let mut norm = Vec::with_capacity(world.len());
        for p in world {
            let c = [
                r[0][0] * p.x + r[0][1] * p.y + t[0],
                r[1][0] * p.x + r[1][1] * p.y + t[1],
                r[2][0] * p.x + r[2][1] * p.y + t[2],
            ];
            if c[2] <= 0.0 {
                break;
            }
            norm.push(Vec2::new(c[0] / c[2], c[1] / c[2]));
        }
        if norm.len() != world.len() {
            continue;
        }
        // Stay well inside the region where the distortion is one-to-one.
        let rmax = norm.iter().map(|n| n.length()).fold(0.0, f64::max);
        let steep = (1..=50).any(|i| {
            let r2 = (rmax * i as f64 / 50.0).powi(2);
            1.0 + 3.0 * spec.k1 * r2 + 5.0 * spec.k2 * r2 * r2 < 0.25
        });
        if steep || rmax > 3.0 {
            continue;
        }
        let distorted: Vec<Vec2> = norm
            .iter()
            .map(|n| {
                let r2 = n.dot(*n);
                *n * (1.0 + spec.k1 * r2 + spec.k2 * r2 * r2)
            })
            .collect();
        let mx = distorted.iter().map(|d| d.x.abs()).fold(0.0, f64::max);
        let my = distorted.iter().map(|d| d.y.abs()).fold(0.0, f64::max);
        let f = (0.45 * w / mx.max(1e-9)).min(0.45 * h / my.max(1e-9));
        if !(100.0..=20_000.0).contains(&f) {
            continue;
        }
        let k = [[f, 0.0, w / 2.0], [0.0, f, h / 2.0], [0.0, 0.0, 1.0]];
        let truth = Calibration::from_camera(&k, &[spec.k1, spec.k2, 0.0, 0.0], &r, t)
            .ok()?
            .with_image_size(spec.image_size[0], spec.image_size[1]);
        let sigma = spec.noise_px / std::f64::consts::SQRT_2;
        let mut points = Vec::with_capacity(world.len());
        for p in world {
            let img = truth.project(*p)?;
            let noise = Vec2::new(gaussian(&mut rng), gaussian(&mut rng)) * sigma;
            points.push(Correspondence {
                image: img + noise,
                world: *p,
            });
        }
        return Some(View {
            truth,
            k,
            r,
            t,
            points,
        });
    }
    None
}

/// A standard normal sample (Box–Muller).
pub fn gaussian(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Largest distance in pixels between two calibrations over a grid of
/// world points (those both map), e.g. a fit against the truth.
pub fn max_mapping_error(a: &Calibration, b: &Calibration, world: &[Vec2]) -> f64 {
    world
        .iter()
        .filter_map(|p| Some((a.project(*p)? - b.project(*p)?).length()))
        .fold(0.0, f64::max)
}

/// RMS distance in pixels between two calibrations over world points.
pub fn rms_mapping_error(a: &Calibration, b: &Calibration, world: &[Vec2]) -> f64 {
    let d: Vec<f64> = world
        .iter()
        .filter_map(|p| Some((a.project(*p)? - b.project(*p)?).length()))
        .collect();
    if d.is_empty() {
        return f64::NAN;
    }
    (d.iter().map(|x| x * x).sum::<f64>() / d.len() as f64).sqrt()
}

/// RMS and largest distance in pixels from `calib` to the `truth` over
/// the `world` points whose true image lies in a picture of `size`
/// (pixels); a point `calib` cannot map counts as infinitely far.
pub fn error_in_view(calib: &Calibration, truth: &Calibration, world: &[Vec2], size: [u32; 2]) -> (f64, f64) {
    let (mut sum, mut worst, mut n) = (0.0, 0.0f64, 0u32);
    let (w, h) = (f64::from(size[0]), f64::from(size[1]));
    for &p in world {
        let Some(t) = truth
            .project(p)
            .filter(|t| t.x >= 0.0 && t.y >= 0.0 && t.x <= w && t.y <= h)
        else {
            continue;
        };
        let d = calib.project(p).map_or(f64::INFINITY, |q| (q - t).length());
        sum += d * d;
        worst = worst.max(d);
        n += 1;
    }
    ((sum / f64::from(n)).sqrt(), worst)
}

/// A `nx × ny` grid of world points covering `size` (centred on the origin).
pub fn grid(size: Vec2, nx: usize, ny: usize) -> Vec<Vec2> {
    let mut v = Vec::with_capacity(nx * ny);
    for i in 0..nx {
        for j in 0..ny {
            let fx = i as f64 / (nx.max(2) - 1) as f64 - 0.5;
            let fy = j as f64 / (ny.max(2) - 1) as f64 - 0.5;
            v.push(Vec2::new(fx * size.x, fy * size.y));
        }
    }
    v
}
