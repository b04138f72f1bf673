//! What RViz's default displays draw of poses and points, as shapes in
//! the world:
//!
//! - `nav_msgs/Odometry` (its Odometry display): an arrow for each pose
//!   kept — a new one only when the robot moved 0.1 m or turned 0.1 rad
//!   since the last kept, the last 100 kept — each with the 2σ ellipse of
//!   its x/y position covariance;
//! - `geometry_msgs/PoseWithCovarianceStamped` (its PoseWithCovariance
//!   display): the latest pose's arrow and 2σ ellipse;
//! - `geometry_msgs/PointStamped`: a ball 0.2 m across;
//! - `geometry_msgs/PolygonStamped`: its outline;
//! - `geometry_msgs/Pose2D`: an arrow, in the world frame (it names no
//!   frame), at the message's time (it has no stamp).
//!
//! Arrows are RViz's: a shaft 1 m long and 0.1 m wide, a head 0.3 m long
//! and 0.2 m wide, flat in the pose's x–y plane (on the floor when the
//! pose is). The covariance ellipse is the x/y block of the pose's
//! covariance, in the header's frame, around the pose, at its height:
//! its semi-axes are twice the square roots of the block's eigenvalues.
//! Colours are RViz's defaults.

use std::sync::Arc;

use super::markers::{self, Drawn, Key, Life, Lives};
use super::tf::Transform;
use super::value::Struct;
use crate::log::{Raised, Rgba, Shape, Style, ThicknessUnit};

/// RViz's arrow: shaft length and radius, head length and radius (m).
pub const ARROW: [f64; 4] = [1.0, 0.05, 0.3, 0.1];

/// RViz's colour of pose arrows (255, 25, 0).
pub const POSE_COLOUR: Rgba = Rgba(0xff19_00ff);
/// RViz's colour of position covariance (204, 51, 204) at its alpha 0.3.
pub const COVARIANCE_COLOUR: Rgba = Rgba(0xcc33_cc4d);
/// RViz's colour of a PointStamped (204, 41, 204).
pub const POINT_COLOUR: Rgba = Rgba(0xcc29_ccff);
/// RViz's colour of a polygon and of grid cells (25, 255, 0).
pub const POLYGON_COLOUR: Rgba = Rgba(0x19ff_00ff);

/// The radius of a PointStamped's ball (RViz's "Radius" of 0.2 is the
/// ball's width).
pub const POINT_RADIUS: f64 = 0.1;

/// How far a robot moves, or turns, before Odometry keeps a new arrow,
/// and how many it keeps (RViz's defaults).
pub const ODOMETRY_TOLERANCE: (f64, f64) = (0.1, 0.1);
pub const ODOMETRY_KEEP: i64 = 100;

/// Where a frame is in the world at a time.
pub type Place<'a> = dyn Fn(&str, f64) -> Result<Transform, String> + 'a;

/// A filled shape of one colour.
fn filled(shape: Shape, c: Rgba) -> Drawn {
    Drawn {
        shape,
        style: Style {
            color: c,
            fill: Some(c),
            thickness: 0.0,
            unit: ThicknessUnit::Pixels,
        },
        is_text: false,
    }
}

/// RViz's arrow for a pose in the world: flat in its x–y plane.
pub fn arrow(pose: &Transform) -> Drawn {
    let [shaft, sr, head, hr] = ARROW;
    let outline = [
        [0.0, -sr],
        [shaft, -sr],
        [shaft, -hr],
        [shaft + head, 0.0],
        [shaft, hr],
        [shaft, sr],
        [0.0, sr],
    ];
    let points: Vec<[f64; 3]> = outline.iter().map(|&[x, y]| pose.apply([x, y, 0.0])).collect();
    filled(markers::path(&points, true), POSE_COLOUR)
}

/// The 2σ ellipse of the x/y block of a 6 × 6 pose covariance (row
/// major), around `at` in a frame placed by `world`; `Ok(None)` for a
/// covariance of zeros (none given), an error for one that is not a
/// covariance.
pub fn covariance_ellipse(cov: &[f64], at: [f64; 3], world: &Transform) -> Result<Option<Drawn>, String> {
    if cov.len() != 36 {
        return Err(format!("a pose covariance of {} values, not 36", cov.len()));
    }
    let (a, b, b2, c) = (cov[0], cov[1], cov[6], cov[7]);
    if ![a, b, b2, c].iter().all(|v| v.is_finite()) {
        return Err("a pose covariance that is not finite".into());
    }
    if a == 0.0 && b == 0.0 && b2 == 0.0 && c == 0.0 {
        return Ok(None);
    }
    let b = 0.5 * (b + b2);
    let mid = 0.5 * (a + c);
    let d = (0.25 * (a - c) * (a - c) + b * b).sqrt();
    let (l1, l2) = (mid + d, mid - d);
    let slack = 1e-9 * mid.abs().max(1e-300);
    if l2 < -slack || a < 0.0 || c < 0.0 {
        return Err(format!(
            "a pose covariance whose x/y block [[{a}, {b}], [{b}, {c}]] is not positive semidefinite"
        ));
    }
    let angle = 0.5 * (2.0 * b).atan2(a - c);
    let (r1, r2) = (2.0 * l1.max(0.0).sqrt(), 2.0 * l2.max(0.0).sqrt());
    let (s, co) = angle.sin_cos();
    let points: Vec<[f64; 3]> = (0..64)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / 64.0;
            let (u, v) = (r1 * t.cos(), r2 * t.sin());
            world.apply([at[0] + u * co - v * s, at[1] + u * s + v * co, at[2]])
        })
        .collect();
    let mut d = filled(markers::path(&points, true), COVARIANCE_COLOUR);
    d.style.color = COVARIANCE_COLOUR.with_alpha(255);
    Ok(Some(d))
}

/// The header's stamp (the message's time for 0) and frame.
fn header(msg: &Struct<'_>, now: f64) -> (f64, String) {
    let h = msg.sub("header");
    (
        markers::stamp(h).unwrap_or(now),
        h.and_then(|h| h.str("frame_id")).unwrap_or("").to_owned(),
    )
}

/// Shows `shapes` as `key` from `t` until replaced.
fn show(lives: &mut Lives, key: Key, t: f64, shapes: Vec<Drawn>) {
    lives.add(key, Life::shown_for(t, 0.0, shapes, None));
}

/// A pose with covariance (`geometry_msgs/PoseWithCovariance`): its arrow
/// and ellipse in the world, or why not.
fn pose_shapes(pwc: Option<&Struct<'_>>, world: &Transform) -> Result<(Drawn, Option<Drawn>), String> {
    let pwc = pwc.ok_or("no pose")?;
    let pose = markers::pose(pwc.sub("pose")).ok_or("a pose that is not finite")?;
    let cov: Vec<f64> = pwc
        .array("covariance")
        .unwrap_or(&[])
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
        .collect();
    let ellipse = covariance_ellipse(&cov, pose.translation, world)?;
    Ok((arrow(&world.then_after(&pose)), ellipse))
}

/// What Odometry keeps of a topic: the last pose kept and how many were.
#[derive(Clone, Debug, Default)]
pub struct OdometryKeep {
    last: Option<Transform>,
    kept: i64,
}

/// One `nav_msgs/Odometry` message: a new arrow (and ellipse) when the
/// robot moved or turned enough since the last kept, replacing the one
/// kept 100 before.
pub fn odometry(
    place: &Place<'_>,
    lives: &mut Lives,
    keep: &mut OdometryKeep,
    msg: &Struct<'_>,
    now: f64,
) -> Result<(), String> {
    let (t, frame) = header(msg, now);
    let pwc = msg.sub("pose");
    let pose =
        markers::pose(pwc.and_then(|p| p.sub("pose"))).ok_or("an odometry whose pose is not finite")?;
    if let Some(last) = &keep.last {
        let moved = (0..3)
            .map(|i| (pose.translation[i] - last.translation[i]).powi(2))
            .sum::<f64>()
            .sqrt();
        let dot: f64 = (0..4).map(|i| pose.rotation[i] * last.rotation[i]).sum();
        let turned = 2.0 * dot.abs().min(1.0).acos();
        if moved < ODOMETRY_TOLERANCE.0 && turned < ODOMETRY_TOLERANCE.1 {
            return Ok(());
        }
    }
    let world = place(&frame, t)?;
    let (arrow, ellipse) = pose_shapes(pwc, &world)?;
    let id = keep.kept % ODOMETRY_KEEP;
    keep.last = Some(pose);
    keep.kept += 1;
    show(lives, (Arc::from(""), id), t, vec![arrow]);
    let key = (Arc::from("covariance"), id);
    match ellipse {
        Some(e) => show(lives, key, t, vec![e]),
        None => lives.end(&key, t),
    }
    Ok(())
}

/// One `geometry_msgs/PoseWithCovarianceStamped`: its arrow and ellipse,
/// replacing the last.
pub fn pose_with_covariance(
    place: &Place<'_>,
    lives: &mut Lives,
    msg: &Struct<'_>,
    now: f64,
) -> Result<(), String> {
    let (t, frame) = header(msg, now);
    let world = place(&frame, t)?;
    let (arrow, ellipse) = pose_shapes(msg.sub("pose"), &world)?;
    show(lives, (Arc::from(""), 0), t, vec![arrow]);
    let key = (Arc::from("covariance"), 0);
    match ellipse {
        Some(e) => show(lives, key, t, vec![e]),
        None => lives.end(&key, t),
    }
    Ok(())
}

/// One `geometry_msgs/PointStamped`: a ball, replacing the last.
pub fn point(place: &Place<'_>, lives: &mut Lives, msg: &Struct<'_>, now: f64) -> Result<(), String> {
    let (t, frame) = header(msg, now);
    let p = msg.sub("point").ok_or("a point message without its point")?;
    let at = [p.f64("x"), p.f64("y"), p.f64("z")];
    let [Some(x), Some(y), Some(z)] = at else {
        return Err("a point without x, y and z".into());
    };
    if ![x, y, z].iter().all(|v| v.is_finite()) {
        return Err("a point that is not finite".into());
    }
    let world = place(&frame, t)?;
    let ball = Shape::Raised(Box::new(Raised::Sphere {
        center: world.apply([x, y, z]),
        radius: POINT_RADIUS,
    }));
    show(lives, (Arc::from(""), 0), t, vec![filled(ball, POINT_COLOUR)]);
    Ok(())
}

/// One `geometry_msgs/PolygonStamped`: its outline, replacing the last.
pub fn polygon(place: &Place<'_>, lives: &mut Lives, msg: &Struct<'_>, now: f64) -> Result<(), String> {
    let (t, frame) = header(msg, now);
    let world = place(&frame, t)?;
    let points: Vec<[f64; 3]> = msg
        .array("polygon.points")
        .unwrap_or(&[])
        .iter()
        .filter_map(|p| {
            let p = p.as_struct()?;
            Some([p.f64("x")?, p.f64("y")?, p.f64("z").unwrap_or(0.0)])
        })
        .filter(|p| p.iter().all(|v| v.is_finite()))
        .map(|p| world.apply(p))
        .collect();
    let key = (Arc::from(""), 0);
    if points.len() < 2 {
        lives.end(&key, t);
        return Ok(());
    }
    let outline = Drawn {
        shape: markers::path(&points, points.len() > 2),
        style: Style::color(POLYGON_COLOUR),
        is_text: false,
    };
    show(lives, key, t, vec![outline]);
    Ok(())
}

/// One `geometry_msgs/Pose2D`: an arrow in the world frame at `now`.
pub fn pose_2d(lives: &mut Lives, msg: &Struct<'_>, now: f64) -> Result<(), String> {
    let (Some(x), Some(y), Some(theta)) = (msg.f64("x"), msg.f64("y"), msg.f64("theta")) else {
        return Err("a 2D pose without x, y and theta".into());
    };
    let pose = Transform::new([0.0, 0.0, (theta / 2.0).sin(), (theta / 2.0).cos()], [x, y, 0.0])
        .ok_or("a 2D pose that is not finite")?;
    show(lives, (Arc::from(""), 0), now, vec![arrow(&pose)]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::value::Value;
    use crate::ros::value::build::{f, msg as st, pose, s, time, top, xyz};

    fn identity(_: &str, _: f64) -> Result<Transform, String> {
        Ok(Transform::IDENTITY)
    }

    fn vertices(d: &Drawn) -> Vec<[f64; 2]> {
        match &d.shape {
            Shape::Polygon { vertices, .. } => vertices.iter().map(|v| [v.x, v.y]).collect(),
            other => panic!("{other:?}"),
        }
    }

    fn with_cov(x: f64, y: f64, cov: [f64; 4]) -> Value<'static> {
        let mut c = vec![0.0; 36];
        (c[0], c[1], c[6], c[7]) = (cov[0], cov[1], cov[2], cov[3]);
        st(vec![
            ("pose", pose(x, y, 0.0)),
            ("covariance", Value::Array(c.into_iter().map(f).collect())),
        ])
    }

    fn odom(t: f64, x: f64, y: f64) -> Struct<'static> {
        top(vec![
            ("header", st(vec![("stamp", time(t)), ("frame_id", s("odom"))])),
            ("child_frame_id", s("base_link")),
            ("pose", with_cov(x, y, [0.04, 0.0, 0.0, 0.01])),
        ])
    }

    #[test]
    fn the_arrow_is_rvizs_and_the_ellipse_is_two_sigma() {
        let a = arrow(&Transform::new([0.0, 0.0, 0.0, 1.0], [1.0, 2.0, 0.0]).unwrap());
        let v = vertices(&a);
        assert_eq!(v[3], [2.3, 2.0], "the tip, 1.3 m ahead");
        assert_eq!(v[0], [1.0, 1.95]);
        assert_eq!(a.style.fill, Some(POSE_COLOUR));
        // σx = 0.2, σy = 0.1: semi-axes 0.4 and 0.2.
        let mut c = vec![0.0; 36];
        (c[0], c[7]) = (0.04, 0.01);
        let e = covariance_ellipse(&c, [1.0, 1.0, 0.0], &Transform::IDENTITY)
            .unwrap()
            .unwrap();
        let v = vertices(&e);
        assert!(
            (v[0][0] - 1.4).abs() < 1e-12 && (v[0][1] - 1.0).abs() < 1e-12,
            "{:?}",
            v[0]
        );
        assert!(
            (v[16][0] - 1.0).abs() < 1e-12 && (v[16][1] - 1.2).abs() < 1e-12,
            "{:?}",
            v[16]
        );
        // Turned 45°: a covariance with equal correlation.
        let mut c = vec![0.0; 36];
        (c[0], c[1], c[6], c[7]) = (0.05, 0.03, 0.03, 0.05);
        let e = covariance_ellipse(&c, [0.0; 3], &Transform::IDENTITY)
            .unwrap()
            .unwrap();
        let v = vertices(&e)[0];
        let r = 2.0 * 0.08f64.sqrt();
        assert!(
            (v[0] - r / 2f64.sqrt()).abs() < 1e-12 && (v[1] - r / 2f64.sqrt()).abs() < 1e-12,
            "{v:?}"
        );
        // None given, not a covariance, not finite.
        assert!(
            covariance_ellipse(&[0.0; 36], [0.0; 3], &Transform::IDENTITY)
                .unwrap()
                .is_none()
        );
        c[1] = 0.2;
        assert!(
            covariance_ellipse(&c, [0.0; 3], &Transform::IDENTITY)
                .unwrap_err()
                .contains("semidefinite")
        );
        c[0] = f64::NAN;
        assert!(
            covariance_ellipse(&c, [0.0; 3], &Transform::IDENTITY)
                .unwrap_err()
                .contains("not finite")
        );
        assert!(
            covariance_ellipse(&[0.0; 3], [0.0; 3], &Transform::IDENTITY)
                .unwrap_err()
                .contains("3 values")
        );
    }

    #[test]
    fn odometry_keeps_an_arrow_per_tenth_of_a_metre_and_the_last_hundred() {
        let mut lives = Lives::default();
        let mut keep = OdometryKeep::default();
        // 300 messages 6 cm apart: every other one kept, 150 kept.
        for i in 0..300 {
            odometry(
                &identity,
                &mut lives,
                &mut keep,
                &odom(i as f64 * 0.1, i as f64 * 0.06, 0.0),
                0.0,
            )
            .unwrap();
        }
        lives.finish();
        assert_eq!(keep.kept, 150);
        let arrows: Vec<_> = lives.ended.iter().filter(|e| e.key.0.is_empty()).collect();
        assert_eq!(arrows.len(), 150);
        // Each lives until the one kept 100 later replaces it.
        let first = arrows.iter().find(|e| e.start == 0.0).unwrap();
        assert!((first.end - 20.0).abs() < 1e-9, "{}", first.end);
        assert_eq!(
            lives.ended.iter().filter(|e| &*e.key.0 == "covariance").count(),
            150
        );
        // A turn alone keeps one too.
        let mut turned = odom(100.0, 298.0 * 0.06, 0.0);
        if let Some(Value::Struct(p)) = turned
            .fields
            .iter_mut()
            .find(|f| &*f.0 == "pose")
            .map(|f| &mut f.1)
            && let Some(Value::Struct(pp)) = p.fields.iter_mut().find(|f| &*f.0 == "pose").map(|f| &mut f.1)
        {
            pp.fields.retain(|f| &*f.0 != "orientation");
            pp.fields.push((
                Arc::from("orientation"),
                st(vec![("x", f(0.0)), ("y", f(0.0)), ("z", f(0.1)), ("w", f(1.0))]),
            ));
        }
        odometry(&identity, &mut lives, &mut keep, &turned, 0.0).unwrap();
        assert_eq!(keep.kept, 151);
        // A NaN pose is refused.
        assert!(odometry(&identity, &mut lives, &mut keep, &odom(200.0, f64::NAN, 0.0), 0.0).is_err());
    }

    #[test]
    fn points_polygons_and_2d_poses() {
        // Each topic its own lives.
        let shape = |apply: &dyn Fn(&mut Lives)| {
            let mut lives = Lives::default();
            apply(&mut lives);
            lives.finish();
            lives.ended[0].life.shapes[0].shape.clone()
        };
        let msg = top(vec![
            ("header", st(vec![("stamp", time(3.0)), ("frame_id", s("map"))])),
            ("point", xyz(1.0, 2.0, 0.5)),
        ]);
        let ball = shape(&|l| point(&identity, l, &msg, 0.0).unwrap());
        assert!(
            matches!(&ball, Shape::Raised(r) if **r == Raised::Sphere { center: [1.0, 2.0, 0.5], radius: POINT_RADIUS })
        );
        let poly = top(vec![
            ("header", st(vec![("stamp", time(3.0)), ("frame_id", s("map"))])),
            (
                "polygon",
                st(vec![(
                    "points",
                    Value::Array(vec![xyz(0.0, 0.0, 0.0), xyz(1.0, 0.0, 0.0), xyz(1.0, 1.0, 0.0)]),
                )]),
            ),
        ]);
        let outline = shape(&|l| polygon(&identity, l, &poly, 0.0).unwrap());
        assert!(matches!(&outline, Shape::Polygon { closed: true, vertices } if vertices.len() == 3));
        let p2 = top(vec![
            ("x", f(1.0)),
            ("y", f(1.0)),
            ("theta", f(std::f64::consts::FRAC_PI_2)),
        ]);
        match shape(&|l| pose_2d(l, &p2, 4.0).unwrap()) {
            Shape::Polygon { vertices, .. } => {
                assert!((vertices[3].x - 1.0).abs() < 1e-12 && (vertices[3].y - 2.3).abs() < 1e-12)
            }
            other => panic!("{other:?}"),
        }
        let mut lives = Lives::default();
        assert!(
            pose_2d(
                &mut lives,
                &top(vec![("x", f(f64::NAN)), ("y", f(0.0)), ("theta", f(0.0))]),
                0.0
            )
            .is_err()
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any pose and covariance (NaN, infinities, huge, not a
        /// covariance): an arrow and an ellipse of finite points, or a
        /// reason; never a panic.
        #[test]
        fn any_pose_with_covariance_is_drawn_or_refused(
            v in proptest::collection::vec(proptest::prop_oneof![
                -1e3f64..1e3, proptest::strategy::Just(0.0), proptest::strategy::Just(f64::NAN),
                proptest::strategy::Just(f64::INFINITY), proptest::strategy::Just(-1e300)], 11),
        ) {
            let pose = st(vec![
                ("position", xyz(v[0], v[1], v[2])),
                ("orientation", st(vec![("x", f(v[3])), ("y", f(v[4])), ("z", f(v[5])), ("w", f(v[6]))])),
            ]);
            let mut c = vec![0.0; 36];
            (c[0], c[1], c[6], c[7]) = (v[7], v[8], v[9], v[10]);
            let msg = top(vec![
                ("header", st(vec![("stamp", time(1.0)), ("frame_id", s("map"))])),
                ("pose", st(vec![("pose", pose), ("covariance", Value::Array(c.into_iter().map(f).collect()))])),
            ]);
            let mut lives = Lives::default();
            if pose_with_covariance(&identity, &mut lives, &msg, 0.0).is_ok() {
                lives.finish();
                for e in &lives.ended {
                    for d in &e.life.shapes {
                        let p = crate::log::Primitive { shape: d.shape.clone(), style: d.style, entity: crate::log::EntityId(0), level: 1 };
                        let sensible = v.iter().all(|x| x.abs() < 1e4);
                        if sensible {
                            proptest::prop_assert!(crate::log::validate::drawable(&p), "{:?}", p);
                        }
                    }
                }
            }
            let mut keep = OdometryKeep::default();
            let _ = odometry(&identity, &mut lives, &mut keep, &msg, 0.0);
        }
    }
}
