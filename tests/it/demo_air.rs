//! The demo's drawings above the floor (issue 33), end to end: the demo
//! written by the real binary has a chipped clearance; the arc its log
//! draws through the ball's centre passes within 2 px of the ball in every
//! frame the ball is in the air (the ball's true position is in the demo's
//! ground truth), and, drawn by the pipeline over the true masks, it is
//! hidden exactly where a robot or a goal stands in front of it and
//! nowhere else — on the demo itself, and on a scene from the demo's low
//! camera where robots stand just in front of a low arc (arc points within a standing thing's depth, 10 cm, of a
//! robot are not judged: the rule cannot tell those, docs/mask.md).

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use underlay::calib::Calibration;
use underlay::geom::Vec2;
use underlay::geom::vec2::distance_to_segment;
use underlay::image::{FLOOR, MaskImage};
use underlay::log::{Raised, Shape};
use underlay::pipeline::Pipeline;
use underlay::select::{FilterSpec, Index};
use underlay::session::{CalibrationSource, Session};

use crate::demo::{read_all, read_masks};
use crate::util::text;

const ROBOT_RADIUS: f64 = 90.0;
const ROBOT_HEIGHT: f64 = 150.0;
const BALL_RADIUS: f64 = 21.5;
/// A standing thing's depth behind its contact (2 m × 0.05: the rule's
/// tolerance, `draw::occlude`).
const DEPTH: f64 = 100.0;

fn demo(dir: &Path) -> Output {
    crate::util::run([
        "demo",
        "--out",
        dir.to_str().unwrap(),
        "--no-view",
        "--width",
        "640",
        "--height",
        "360",
        "--fps",
        "15",
        "--duration",
        "20",
    ])
}

/// Whether the segment from `eye` to `x` passes through an upright
/// cylinder (a robot) or a box (a goal wall) before reaching `x`.
fn blocked(eye: [f64; 3], x: [f64; 3], robots: &[Vec2], walls: &[([f64; 3], [f64; 3])]) -> bool {
    const STEPS: usize = 4000;
    (1..STEPS).any(|k| {
        let s = k as f64 / STEPS as f64;
        let p: [f64; 3] = std::array::from_fn(|i| eye[i] + (x[i] - eye[i]) * s);
        let in_robot = p[2] >= 0.0
            && p[2] <= ROBOT_HEIGHT
            && robots
                .iter()
                .any(|r| (Vec2::new(p[0], p[1]) - *r).length() <= ROBOT_RADIUS);
        let in_wall = walls
            .iter()
            .any(|(lo, hi)| (0..3).all(|i| p[i] >= lo[i] && p[i] <= hi[i]));
        in_robot || in_wall
    })
}

/// Whether the true mask changes within `r` pixels of `(x, y)` (an edge,
/// where anti-aliased drawings and masks are half one, half the other).
fn near_edge(mask: &MaskImage, x: usize, y: usize, r: usize) -> bool {
    let (h, w) = mask.dim();
    let v = mask[[y, x]];
    (y.saturating_sub(r)..=(y + r).min(h - 1))
        .any(|yy| (x.saturating_sub(r)..=(x + r).min(w - 1)).any(|xx| mask[[yy, xx]] != v))
}

#[test]
fn the_chipped_balls_arc_follows_the_ball_and_hides_only_behind_what_stands_in_front() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let o = demo(&dir);
    assert!(o.status.success(), "{}", text(&o));
    let session = Session::load(&dir.join("session.toml")).unwrap();
    let Some(CalibrationSource::Inline(calib)) = &session.calibration else {
        panic!("no inline calibration");
    };
    assert!(calib.is_full_camera(), "the demo's true camera is a full camera");
    let calib: &Calibration = calib;
    let eye = calib.camera_center().unwrap();
    let log = Arc::new(session.load_logs().unwrap());
    let index = Index::new(&log);
    let filter = FilterSpec::default().compile(&log).unwrap();
    let truth = crate::demo::read_truth(&dir.join("truth/trajectory.csv"));

    // 1. The arc passes within 2 px of the ball whenever it is in the air.
    let mut in_air = 0;
    let mut arcs: Vec<(usize, Vec<[f64; 3]>)> = Vec::new();
    for (i, row) in truth.iter().enumerate() {
        if row.ball[2] <= 0.0 {
            continue;
        }
        in_air += 1;
        let sel = index.select(
            &log,
            underlay::time::LogTime(row.t + session.offset),
            index.default_threshold(),
            &filter,
        );
        let arc = sel
            .iter()
            .filter(|p| log.entities.name(p.entity) == "ball/flight")
            .find_map(|p| match &p.shape {
                Shape::Raised(r) => match &**r {
                    Raised::Path { points, .. } if points.len() > 2 => Some(points.to_vec()),
                    _ => None,
                },
                _ => None,
            })
            .unwrap_or_else(|| {
                panic!(
                    "frame {i} (t {:.3}): the ball is in the air but no arc is drawn",
                    row.t
                )
            });
        let ball = calib
            .project3([row.ball[0], row.ball[1], row.ball[2] + BALL_RADIUS])
            .unwrap();
        let mut pieces = Vec::new();
        calib.project_path3(&arc, false, 0.1, &mut pieces);
        let d = pieces
            .iter()
            .flat_map(|p| p.windows(2))
            .map(|s| distance_to_segment(ball, s[0], s[1]))
            .fold(f64::INFINITY, f64::min);
        assert!(
            d <= 2.0,
            "frame {i} (t {:.3}): the arc passes {d:.2} px from the ball",
            row.t
        );
        arcs.push((i, arc));
    }
    assert!(in_air >= 8, "only {in_air} frames with the ball in the air");

    // 2. Drawn over the true masks, the arc is hidden where a robot or a
    //    goal wall is between it and the camera, and shows elsewhere.
    let frames = read_all(&dir.join("video.mp4"));
    let masks = read_masks(&dir.join("truth/masks.mkv"));
    let mut settings = session.draw_settings().unwrap();
    settings.filter = FilterSpec {
        only: vec!["ball/flight".into()],
        ..FilterSpec::default()
    };
    let mut pipeline = Pipeline::new(Arc::clone(&log), &settings).unwrap();
    let walls: Vec<([f64; 3], [f64; 3])> = [-1.0, 1.0]
        .into_iter()
        .flat_map(underlay::demo::world::goal_walls)
        .collect();
    let (mut shown, mut hidden, mut beside, mut wrong) = (0, 0, 0, Vec::new());
    for (i, arc) in &arcs {
        let mut frame = frames[*i].clone();
        let before = frame.image.clone();
        frame.mask = Some(masks[*i].clone());
        pipeline.process(&mut frame).unwrap();
        let mask = &masks[*i];
        if std::env::var_os("AIR_DEBUG").is_some() {
            use underlay::video::still::{save_mask, save_rgb};
            save_rgb(Path::new(&format!("/tmp/air_{i}_before.png")), &before).unwrap();
            save_rgb(Path::new(&format!("/tmp/air_{i}_after.png")), &frame.image).unwrap();
            save_mask(Path::new(&format!("/tmp/air_{i}_mask.png")), mask).unwrap();
        }
        let robots = &truth[*i].robots;
        // The shadow on the floor and the ball itself are drawn or stand
        // near the arc: judge only arc pixels away from both.
        let ball = truth[*i].ball;
        let ball_px = calib.project3([ball[0], ball[1], ball[2] + BALL_RADIUS]).unwrap();
        let mut shadow = Vec::new();
        let ground: Vec<Vec2> = arc.iter().map(|p| Vec2::new(p[0], p[1])).collect();
        calib.project_polyline(&ground, false, 0.1, &mut shadow);
        for w in arc.windows(2) {
            for k in 0..8 {
                let s = k as f64 / 8.0;
                let x: [f64; 3] = std::array::from_fn(|c| w[0][c] + (w[1][c] - w[0][c]) * s);
                let Some(q) = calib.project3(x) else { continue };
                let (u, v) = (q.x.round(), q.y.round());
                if u < 2.0 || v < 2.0 || u > 637.0 || v > 357.0 {
                    continue;
                }
                let (u, v) = (u as usize, v as usize);
                let near_shadow = shadow
                    .iter()
                    .flat_map(|p| p.windows(2))
                    .any(|s| distance_to_segment(q, s[0], s[1]) < 5.0);
                // Within a standing thing's depth of a robot (the rule's
                // stated limit, docs/mask.md) in front or behind is not
                // judged.
                let beside_robot = robots
                    .iter()
                    .any(|r| (Vec2::new(x[0], x[1]) - *r).length() < ROBOT_RADIUS + DEPTH);
                if near_shadow || beside_robot || (q - ball_px).length() < 6.0 || near_edge(mask, u, v, 2) {
                    if beside_robot {
                        beside += 1;
                    }
                    continue;
                }
                let expect_hidden = mask[[v, u]] != FLOOR && blocked(eye, x, robots, &walls);
                let changed = (0..3).any(|c| before[[v, u, c]].abs_diff(frame.image[[v, u, c]]) > 24);
                let untouched = (0..3).all(|c| before[[v, u, c]] == frame.image[[v, u, c]]);
                match (expect_hidden, changed, untouched) {
                    (true, _, true) => hidden += 1,
                    (false, true, _) => shown += 1,
                    _ => wrong.push((*i, q, expect_hidden)),
                }
            }
        }
    }
    eprintln!("arc pixels: {shown} shown, {hidden} hidden, {beside} beside a robot (not judged)");
    assert!(
        wrong.is_empty(),
        "{} arc pixels judged wrongly (frame, pixel, expected hidden): {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(12)]
    );
    assert!(shown > 100, "only {shown} arc pixels shown");
    // From the demo's high camera a robot hides only what is at its feet
    // (within `DEPTH` of it, not judged here): the hiding itself is tested
    // from the low camera below.
    let _ = hidden;
}

/// The hiding half on a scene built for it: the demo's renderer seen from
/// its low camera at the side (a robot 150 mm tall hides what is low just
/// behind it there), a chip's arc low past three robots standing in front
/// of it and over one standing behind it. Drawn over the true
/// mask, the arc is hidden exactly where one of them is between it and
/// the camera.
#[test]
fn a_raised_arc_is_hidden_exactly_behind_the_robots_in_front_of_it() {
    use underlay::demo::render::{Camera, Renderer};
    use underlay::demo::world::{BallState, RobotState, Snapshot as Scene, Team};
    use underlay::log::{EntityId, FrameTime, Log, Primitive, Rgba, Style};
    use underlay::pipeline::DrawSettings;
    use underlay::video::SourceFrame;

    let cam = Camera::stand(640, 360).unwrap();
    let calib = cam.calibration().unwrap();
    assert!(calib.is_full_camera());
    let eye = calib.camera_center().unwrap();
    let robot = |id: u8, x: f64, y: f64| RobotState {
        team: if id.is_multiple_of(2) {
            Team::Blue
        } else {
            Team::Yellow
        },
        id,
        pos: Vec2::new(x, y),
        heading: 1.0,
        vel: Vec2::ZERO,
    };
    // Three 220 mm in front of the arc (the middle one lower than it in
    // the picture: the arc passes over it), one 220 mm behind it.
    let robots = vec![
        robot(0, -2200.0, -1720.0),
        robot(1, 0.0, -1720.0),
        robot(2, 2000.0, -1720.0),
        robot(3, -2600.0, -1280.0),
    ];
    let scene = Scene {
        t: 0.0,
        robots: robots.clone(),
        ball: BallState {
            pos: Vec2::new(4000.0, 2500.0),
            height: 0.0,
            vel: Vec2::ZERO,
        },
    };
    let renderer = Renderer::new(cam, 1);
    let (mut image, mut mask) = (
        underlay::image::RgbImage::zeros((0, 0, 3)),
        MaskImage::zeros((0, 0)),
    );
    renderer.render(&scene, 0, &mut image, &mut mask);

    // A low chip along y = −1500: 120 mm high at most.
    let arc: Vec<[f64; 3]> = (0..=120)
        .map(|k| {
            let s = k as f64 / 120.0;
            [-3000.0 + 6000.0 * s, -1500.0, 40.0 + 320.0 * s * (1.0 - s)]
        })
        .collect();
    let mut log = Log::new();
    let e = log.entities.intern("arc");
    log.push_frame(
        FrameTime::Instant(0.0),
        [Primitive {
            shape: Shape::Raised(Box::new(Raised::Path {
                points: arc.clone().into(),
                closed: false,
            })),
            style: Style {
                color: Rgba::from_rgb(0xff00ff),
                thickness: 3.0,
                ..Style::default()
            },
            entity: EntityId(e.0),
            level: 0,
        }],
    );
    let settings = DrawSettings {
        calibration: Some(calib.clone()),
        ..DrawSettings::default()
    };
    let mut pipeline = Pipeline::new(Arc::new(log), &settings).unwrap();
    let mut frame = SourceFrame::new(0, 0.0, image.clone());
    frame.mask = Some(mask.clone());
    pipeline.process(&mut frame).unwrap();

    let robot_at: Vec<Vec2> = robots.iter().map(|r| r.pos).collect();
    let (mut shown, mut hidden, mut shown_over_robot, mut wrong) = (0, 0, 0, Vec::new());
    for w in arc.windows(2) {
        for k in 0..16 {
            let s = k as f64 / 16.0;
            let x: [f64; 3] = std::array::from_fn(|c| w[0][c] + (w[1][c] - w[0][c]) * s);
            let q = calib.project3(x).unwrap();
            let (u, v) = (q.x.round() as usize, q.y.round() as usize);
            let beside = robot_at
                .iter()
                .any(|r| (Vec2::new(x[0], x[1]) - *r).length() < ROBOT_RADIUS + DEPTH);
            if beside || near_edge(&mask, u, v, 2) {
                continue;
            }
            let expect_hidden = mask[[v, u]] != FLOOR && blocked(eye, x, &robot_at, &[]);
            let changed = (0..3).any(|c| image[[v, u, c]].abs_diff(frame.image[[v, u, c]]) > 24);
            let untouched = (0..3).all(|c| image[[v, u, c]] == frame.image[[v, u, c]]);
            match (expect_hidden, changed, untouched) {
                (true, _, true) => hidden += 1,
                (false, true, _) => {
                    shown += 1;
                    shown_over_robot += usize::from(mask[[v, u]] != FLOOR);
                }
                _ => wrong.push((q, expect_hidden)),
            }
        }
    }
    if std::env::var_os("AIR_DEBUG").is_some() {
        use underlay::video::still::save_rgb;
        save_rgb(Path::new("/tmp/air_scene.png"), &frame.image).unwrap();
    }
    eprintln!("arc pixels: {shown} shown ({shown_over_robot} over a robot behind it), {hidden} hidden");
    assert!(
        wrong.is_empty(),
        "{} judged wrongly: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(12)]
    );
    assert!(
        hidden >= 30,
        "only {hidden} arc pixels hidden behind the robots in front"
    );
    assert!(
        shown_over_robot >= 10,
        "only {shown_over_robot} arc pixels shown over the robot behind"
    );
    assert!(shown >= 200, "only {shown} shown");
}
