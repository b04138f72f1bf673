use super::*;
use crate::calib::camera::{look_at, rodrigues};
use crate::geom::Mat3;
use proptest::prelude::*;

/// OpenCV's own `projectPoints` (the independent reference of issue 33).
fn opencv_project(k: &Mat3, d: &[f64; 5], r: &Mat3, t: [f64; 3], pts: &[Vec3]) -> Vec<Vec2> {
    use opencv::calib3d;
    use opencv::core::{Mat, MatTraitConst, Point2d, Point3d, Vector};
    let obj: Vector<Point3d> = pts.iter().map(|p| Point3d::new(p[0], p[1], p[2])).collect();
    let rmat = Mat::from_slice_2d(&[r[0], r[1], r[2]]).unwrap();
    let mut rvec = Mat::default();
    calib3d::rodrigues_def(&rmat, &mut rvec).unwrap();
    let tvec = Mat::from_slice(&t).unwrap().try_clone().unwrap();
    let kmat = Mat::from_slice_2d(&[k[0], k[1], k[2]]).unwrap();
    let dmat = Mat::from_slice(d).unwrap().try_clone().unwrap();
    let mut img: Vector<Point2d> = Vector::new();
    calib3d::project_points_def(&obj, &rvec, &tvec, &kmat, &dmat, &mut img).unwrap();
    let _ = img.len();
    img.iter().map(|p| Vec2::new(p.x, p.y)).collect()
}

fn camera(eye: Vec3, target: Vec3) -> (Mat3, Mat3, [f64; 3]) {
    let k = [[1000.0, 0.0, 640.0], [0.0, 990.0, 360.0], [0.0, 0.0, 1.0]];
    let (r, t) = look_at(eye, target).unwrap();
    (k, r, t)
}

#[test]
fn floor_points_map_as_on_the_floor_and_heights_need_a_full_camera() {
    let (k, r, t) = camera([-2000.0, -7000.0, 4000.0], [300.0, 200.0, 0.0]);
    let c = Calibration::from_camera(&k, &[-0.2, 0.05, 0.0, 0.0, 0.0], &r, t).unwrap();
    assert!(c.is_full_camera());
    for p in [[0.0, 0.0], [1500.0, -800.0], [-3000.0, 2500.0]] {
        let a = c.project(Vec2::new(p[0], p[1])).unwrap();
        let b = c.project3([p[0], p[1], 0.0]).unwrap();
        assert!((a - b).length() < 1e-9, "{a:?} {b:?}");
    }
    let eye = c.camera_center().unwrap();
    for (e, w) in eye.iter().zip([-2000.0, -7000.0, 4000.0]) {
        assert!((e - w).abs() < 1e-6, "{eye:?}");
    }
    let floor_only = Calibration::from_homography(*c.homography()).unwrap();
    assert!(!floor_only.is_full_camera());
    assert!(floor_only.project3([0.0, 0.0, 100.0]).is_none());
    let mut out = Vec::new();
    floor_only.project_path3(&[[0.0; 3], [100.0, 0.0, 100.0]], false, 0.5, &mut out);
    assert!(out.is_empty());
}

#[test]
fn the_height_column_is_saved_and_read_back_and_follows_the_unit() {
    let (k, r, t) = camera([0.0, -9000.0, 5000.0], [0.0, 0.0, 0.0]);
    let c = Calibration::from_camera(&k, &[], &r, t)
        .unwrap()
        .with_world_unit("mm");
    // A camera is saved as its camera table; a homography with a height
    // column as those two.
    let column = Calibration::from_homography(*c.homography())
        .unwrap()
        .with_height_column(c.height_column().unwrap())
        .unwrap();
    let p = [1234.0, -567.0, 890.0];
    for (calib, says) in [(&c, "[camera]"), (&column, "height_column")] {
        let text = calib.to_toml();
        assert!(text.contains(says), "{text}");
        let back: Calibration = toml::from_str(&text).unwrap();
        assert!((back.project3(p).unwrap() - calib.project3(p).unwrap()).length() < 1e-9);
    }
    // Over a log in metres, a point in metres maps where the same point
    // in millimetres did.
    let (m, _) = c.for_unit("m");
    let q = m.project3([1.234, -0.567, 0.890]).unwrap();
    assert!((q - c.project3(p).unwrap()).length() < 1e-6, "{q:?}");
}

#[test]
fn a_segment_through_the_camera_plane_is_cut_not_wrapped() {
    let (k, r, t) = camera([0.0, -5000.0, 1500.0], [0.0, 0.0, 0.0]);
    let c = Calibration::from_camera(&k, &[], &r, t)
        .unwrap()
        .with_image_size(1280, 720);
    // From in front of the camera to far behind it.
    let mut out = Vec::new();
    c.project_path3(&[[0.0, 0.0, 500.0], [0.0, -20000.0, 500.0]], false, 0.5, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    let first = out[0][0];
    assert!((first - c.project3([0.0, 0.0, 500.0]).unwrap()).length() < 1e-9);
    // Every point is finite and the piece heads away from the picture
    // (the point behind the camera never comes back into it).
    assert!(out[0].iter().all(|p| p.is_finite()));
    // Wholly behind: nothing.
    out.clear();
    c.project_path3(
        &[[0.0, -9000.0, 500.0], [100.0, -9000.0, 800.0]],
        false,
        0.5,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn a_closed_path_in_view_is_one_ring() {
    let (k, r, t) = camera([0.0, -9000.0, 5000.0], [0.0, 0.0, 0.0]);
    let c = Calibration::from_camera(&k, &[-0.1, 0.01, 0.0, 0.0, 0.0], &r, t)
        .unwrap()
        .with_image_size(1280, 720);
    let square = [
        [-500.0, -500.0, 300.0],
        [500.0, -500.0, 300.0],
        [500.0, 500.0, 300.0],
        [-500.0, 500.0, 300.0],
    ];
    let mut out = Vec::new();
    c.project_path3(&square, true, 0.25, &mut out);
    assert_eq!(out.len(), 1);
    let ring = &out[0];
    assert!((ring[0] - ring[ring.len() - 1]).length() < 1e-9);
    // With distortion the straight sides are sampled: more than 5 points.
    assert!(ring.len() > 5, "{}", ring.len());
}

#[test]
fn solids_outline_as_convex_rings_around_their_points() {
    let (k, r, t) = camera([0.0, -6000.0, 3000.0], [0.0, 0.0, 0.0]);
    let c = Calibration::from_camera(&k, &[], &r, t)
        .unwrap()
        .with_image_size(1280, 720);
    // A sphere's outline: every point of the ball projects inside it, and
    // the outline touches the picture of some point of the ball.
    let (centre, radius) = ([200.0, 100.0, 400.0], 300.0);
    let outline = c.sphere_outline3(centre, radius, 0.1);
    let mut ring = Vec::new();
    c.project_path3(&outline, true, 0.1, &mut ring);
    assert_eq!(ring.len(), 1);
    let ring = &ring[0];
    // Inside the (convex) ring, or within its 0.1 px tolerance of it: the
    // ring is inscribed in the true outline.
    let inside = |p: Vec2| {
        let s: Vec<f64> = ring
            .windows(2)
            .map(|w| {
                let e = w[1] - w[0];
                (e.x * (p.y - w[0].y) - e.y * (p.x - w[0].x)) / e.length().max(1e-12)
            })
            .collect();
        s.iter().all(|&v| v >= -0.15) || s.iter().all(|&v| v <= 0.15)
    };
    let mut nearest_edge = f64::INFINITY;
    for i in 0..40 {
        for j in 0..20 {
            let (a, b) = (
                std::f64::consts::TAU * i as f64 / 40.0,
                std::f64::consts::PI * j as f64 / 19.0,
            );
            let q = add(
                centre,
                [
                    radius * b.sin() * a.cos(),
                    radius * b.sin() * a.sin(),
                    radius * b.cos(),
                ],
            );
            let px = c.project3(q).unwrap();
            assert!(inside(px), "{px:?}");
            let d = ring
                .windows(2)
                .map(|w| crate::geom::vec2::distance_to_segment(px, w[0], w[1]))
                .fold(f64::INFINITY, f64::min);
            nearest_edge = nearest_edge.min(d);
        }
    }
    assert!(nearest_edge < 1.0, "{nearest_edge}");
    // A box: the hull of its corners' pictures.
    let edges = [
        ([0.0, 0.0, 0.0], [100.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 150.0]),
        ([100.0, 0.0, 150.0], [100.0, 80.0, 150.0]),
    ];
    let hull = c.convex_outline3(&edges, 0.5);
    assert!(hull.len() >= 4 && (hull[0] - hull[hull.len() - 1]).length() < 1e-12);
}

#[test]
fn convex_hull_of_a_square_and_its_inside() {
    let pts = vec![
        Vec2::new(0.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(1.0, 1.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(0.5, 0.5),
        Vec2::new(0.5, 0.0),
    ];
    let h = convex_hull(pts);
    assert_eq!(h.len(), 4, "{h:?}");
    assert!(!h.contains(&Vec2::new(0.5, 0.5)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Points in space through a synthetic full camera with distortion land
    /// where OpenCV's `projectPoints` puts them, within 0.01 px, wherever
    /// they fall in the picture.
    #[test]
    fn projection_matches_opencv_project_points(
        eye in (-6000.0f64..6000.0, -12000.0f64..-4000.0, 1500.0f64..9000.0),
        target in (-1500.0f64..1500.0, -1000.0f64..1000.0),
        f in 600.0f64..2000.0,
        k1 in -0.3f64..0.1, k2 in -0.05f64..0.1, p1 in -0.002f64..0.002, p2 in -0.002f64..0.002, k3 in -0.02f64..0.02,
        roll in -0.2f64..0.2,
        seed in 0u64..1000,
    ) {
        let k = [[f, 0.0, 640.0], [0.0, f * 1.01, 360.0], [0.0, 0.0, 1.0]];
        let (r0, t0) = look_at([eye.0, eye.1, eye.2], [target.0, target.1, 0.0]).unwrap();
        // A little roll about the optical axis, so rotations are general.
        let rz = rodrigues([0.0, 0.0, roll]);
        let r = crate::geom::mat3::mul(&rz, &r0);
        let t = std::array::from_fn(|i| (0..3).map(|j| rz[i][j] * t0[j]).sum());
        let d = [k1, k2, p1, p2, k3];
        let c = Calibration::from_camera(&k, &d, &r, t).unwrap().with_image_size(1280, 720);
        // Points in space whose pictures fall in the image: from pixels
        // and depths, back through the undistorted camera.
        let mut rng = seed;
        let mut next = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 11) as f64 / (1u64 << 53) as f64
        };
        let eye_v = [eye.0, eye.1, eye.2];
        let mut pts = Vec::new();
        for _ in 0..60 {
            let (u, v) = (next() * 1280.0, next() * 720.0);
            let ray_cam = [(u - 640.0) / f, (v - 360.0) / (f * 1.01), 1.0];
            // Camera → world: Rᵀ.
            let ray = std::array::from_fn(|i| (0..3).map(|j| r[j][i] * ray_cam[j]).sum::<f64>());
            let depth = 2000.0 + 8000.0 * next();
            pts.push(add(eye_v, scale(ray, depth)));
        }
        let want = opencv_project(&k, &d, &r, t, &pts);
        let mut compared = 0;
        for (p, w) in pts.iter().zip(&want) {
            // Where the lens model is valid, ours must agree.
            if let Some(got) = c.project3(*p) {
                compared += 1;
                prop_assert!((got - *w).length() < 0.01, "{p:?}: {got:?} vs OpenCV {w:?}");
            } else {
                // Refused only beyond the lens's valid region: past the
                // radius where the radial polynomial folds over (OpenCV
                // maps such points anyway, wrongly), or far from the image.
                let xc: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| r[i][j] * p[j]).sum::<f64>() + t[i]);
                let rr = (xc[0] / xc[2]).hypot(xc[1] / xc[2]);
                let folds = (1..=200).any(|i| {
                    let q = (1.05 * rr * i as f64 / 200.0).powi(2);
                    1.0 + q * (3.0 * k1 + q * (5.0 * k2 + q * 7.0 * k3)) <= 0.0
                });
                prop_assert!(folds || w.x < -100.0 || w.x > 1380.0 || w.y < -100.0 || w.y > 820.0 || !w.is_finite(),
                    "{p:?} refused but OpenCV puts it at {w:?}");
            }
        }
        prop_assert!(compared >= 20, "only {compared} of 60 points compared");
    }
}

#[test]
fn a_pixels_ray_passes_through_the_points_it_sees() {
    let (k, r, t) = camera([1000.0, -8000.0, 4000.0], [0.0, 0.0, 0.0]);
    let c = Calibration::from_camera(&k, &[-0.2, 0.05, 0.0, 0.0, 0.0], &r, t).unwrap();
    let eye = c.camera_center().unwrap();
    for p in [[0.0, 0.0, 0.0], [500.0, 300.0, 1200.0], [-2000.0, 1500.0, 300.0]] {
        let px = c.project3(p).unwrap();
        let d = c.ray3(px).unwrap();
        let to = sub(p, eye);
        // Parallel and pointing the same way.
        let cr = cross(d, to);
        let n = dot(cr, cr).sqrt() / (dot(d, d).sqrt() * dot(to, to).sqrt());
        assert!(n < 1e-7 && dot(d, to) > 0.0, "{p:?}: {n}");
    }
}
