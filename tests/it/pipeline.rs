//! The per-frame pipeline on a synthetic scene: a perspective camera looking
//! at a striped floor with robots standing on it, a known log and a known
//! calibration. Checked two ways:
//! - golden images under `tests/data/golden/` (regenerate with
//!   `UNDERLAY_BLESS=1 cargo test --test it golden`; tolerance in
//!   `tests/data/golden/README.md`);
//! - direct assertions on geometry: colour at projected points on the
//!   floor, none on robots, circles becoming ellipses, horizon clipping.

use std::sync::Arc;

use underlay::calib::Calibration;
use underlay::calib::synthetic::pitched_camera;
use underlay::image::{FLOOR, MaskImage, RgbImage};
use underlay::log::{FrameTime, Log, MarkerKind, Primitive, Rgba, Shape, Style, ThicknessUnit, Vec2};
use underlay::mask::{FloorMask, MaskError, Masker};
use underlay::pipeline::{DrawSettings, DrawToggles, InstantThreshold, Pipeline};
use underlay::select::FilterSpec;
use underlay::video::{Picture, SourceFrame, TimeMap};

const W: usize = 640;
const H: usize = 360;

/// Camera: focal length in px, position (mm), pitch below horizontal.
const FOCAL: f64 = 380.0;
const CAM: [f64; 3] = [0.0, -8000.0, 5000.0];
const PITCH_DEG: f64 = 22.0;

/// Robots standing on the field (world mm).
const ROBOTS: [(f64, f64); 3] = [(-1500.0, 300.0), (1200.0, -1800.0), (2500.0, 1400.0)];
const ROBOT_RADIUS: f64 = 200.0;

/// World → pixel homography of a pinhole camera over the floor `z = 0`.
fn camera() -> Calibration {
    pitched_camera(W, H, FOCAL, CAM, PITCH_DEG)
}

/// Image row of the horizon (where the floor plane's vanishing line is).
fn horizon_row() -> f64 {
    H as f64 / 2.0 - FOCAL * PITCH_DEG.to_radians().tan()
}

const SKY: [u8; 3] = [150, 170, 190];
const GRASS: [[u8; 3]; 2] = [[40, 120, 50], [52, 136, 62]];
const BODY: [u8; 3] = [30, 30, 35];

/// A synthetic video frame: sky, mowed stripes in perspective, robots.
fn scene(calib: &Calibration) -> RgbImage {
    let robots: Vec<(Vec2, f64)> = ROBOTS
        .iter()
        .map(|&(x, y)| {
            let p = Vec2::new(x, y);
            let c = calib.project(p).unwrap();
            let r = ROBOT_RADIUS * calib.pixels_per_unit(p).unwrap();
            // The body stands up from its footprint.
            (Vec2::new(c.x, c.y - 0.8 * r), 1.1 * r)
        })
        .collect();
    RgbImage::from_shape_fn((H, W, 3), |(v, u, ch)| {
        let px = Vec2::new(u as f64, v as f64);
        if robots.iter().any(|&(c, r)| (px - c).length() <= r) {
            return BODY[ch];
        }
        match calib.unproject(px) {
            None => SKY[ch],
            Some(w) => GRASS[(w.y / 1000.0).floor().rem_euclid(2.0) as usize][ch],
        }
    })
}

/// A chroma key good enough for the synthetic scene: green is floor.
struct GreenKey;

impl Masker for GreenKey {
    fn name(&self) -> &str {
        "green-key"
    }

    fn compute(&mut self, frame: &Picture<'_>, _time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        let Picture::Rgb(frame) = *frame else {
            return Err(MaskError::BadSettings("the green key reads RGB pictures".into()));
        };
        let (h, w, _) = frame.dim();
        out.set_pixels(&MaskImage::from_shape_fn((h, w), |(y, x)| {
            let (r, g, b) = (
                frame[[y, x, 0]] as i32,
                frame[[y, x, 1]] as i32,
                frame[[y, x, 2]] as i32,
            );
            if g > r + 25 && g > b + 25 { FLOOR } else { 0 }
        }));
        Ok(())
    }
}

const WHITE: Rgba = Rgba::WHITE;
const ORANGE: Rgba = Rgba(0xff80_00ff);
const CYAN: Rgba = Rgba(0x00ff_ffff);
const MAGENTA: Rgba = Rgba(0xff00_ffff);
const YELLOW: Rgba = Rgba(0xffff_00ff);

fn world_line(color: Rgba, mm: f32) -> Style {
    Style {
        color,
        fill: None,
        thickness: mm,
        unit: ThicknessUnit::World,
    }
}

fn px_line(color: Rgba, px: f32) -> Style {
    Style {
        color,
        fill: None,
        thickness: px,
        unit: ThicknessUnit::Pixels,
    }
}

/// The log: a persistent field drawing, a persistent target, and two
/// instantaneous frames of robot reasoning (at 1.0 s and 2.0 s).
fn scene_log() -> Log {
    let mut log = Log::new();
    let field = log.entities.intern("field");
    let robots = log.entities.intern("robots");
    let plan = log.entities.intern("robots/plan");
    log.entities.add_parent(plan, robots);
    let p = |shape, style, entity| Primitive {
        shape,
        style,
        entity,
        level: 0,
    };
    let lines = world_line(WHITE, 30.0);
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [
            p(
                Shape::Rectangle {
                    center: Vec2::ZERO,
                    size: Vec2::new(9000.0, 6000.0),
                    orientation: 0.0,
                },
                lines,
                field,
            ),
            p(
                Shape::Line {
                    start: Vec2::new(0.0, -3000.0),
                    end: Vec2::new(0.0, 3000.0),
                },
                lines,
                field,
            ),
            p(
                Shape::Circle {
                    center: Vec2::ZERO,
                    radius: 500.0,
                },
                lines,
                field,
            ),
            // Defense areas: translucent fill with an outline.
            p(
                Shape::Rectangle {
                    center: Vec2::new(-4000.0, 0.0),
                    size: Vec2::new(1000.0, 2000.0),
                    orientation: 0.0,
                },
                Style {
                    fill: Some(Rgba(0x2050_ff60)),
                    ..lines
                },
                field,
            ),
            p(
                Shape::Rectangle {
                    center: Vec2::new(4000.0, 0.0),
                    size: Vec2::new(1000.0, 2000.0),
                    orientation: 0.0,
                },
                Style {
                    fill: Some(Rgba(0xffe0_2060)),
                    ..lines
                },
                field,
            ),
        ],
    );
    log.push_frame(
        FrameTime::Persistent {
            start: 0.0,
            end: 10.0,
        },
        [p(
            Shape::Point {
                position: Vec2::new(700.0, 1200.0),
                kind: MarkerKind::Cross,
                size: 0.0,
            },
            px_line(CYAN, 0.0),
            robots,
        )],
    );
    let path = |v: &[(f64, f64)]| Shape::Polygon {
        vertices: v.iter().map(|&(x, y)| Vec2::new(x, y)).collect(),
        closed: false,
    };
    let mut frame1 = vec![
        // A planned path through two robots: hidden where they stand.
        p(
            path(&[
                (-3500.0, -2000.0),
                (-1500.0, 300.0),
                (1200.0, -1800.0),
                (3200.0, 600.0),
            ]),
            px_line(ORANGE, 4.0),
            plan,
        ),
        // A world-wide obstacle line running off towards the horizon …
        p(
            Shape::Line {
                start: Vec2::new(-2500.0, 2000.0),
                end: Vec2::new(-2500.0, 1e7),
            },
            world_line(MAGENTA, 60.0),
            plan,
        ),
        // … and one running behind the camera (it must not wrap round).
        p(
            Shape::Line {
                start: Vec2::new(-3800.0, 0.0),
                end: Vec2::new(-3800.0, -1e6),
            },
            world_line(MAGENTA, 60.0),
            plan,
        ),
        p(
            Shape::Text {
                anchor: Vec2::new(2600.0, 1650.0),
                text: "robot 3: kick".into(),
                size: 300.0,
            },
            world_line(YELLOW, 0.0),
            robots,
        ),
        p(
            Shape::Text {
                anchor: Vec2::new(-4400.0, -2800.0),
                text: "t = 1.0 s".into(),
                size: 0.0,
            },
            px_line(WHITE, 0.0),
            robots,
        ),
        p(
            Shape::Point {
                position: Vec2::new(-600.0, -1800.0),
                kind: MarkerKind::Dot,
                size: 120.0,
            },
            world_line(YELLOW, 0.0),
            robots,
        ),
        p(
            Shape::Polygon {
                vertices: [(1800.0, -2500.0), (3000.0, -2500.0), (2400.0, -1600.0)]
                    .iter()
                    .map(|&(x, y)| Vec2::new(x, y))
                    .collect(),
                closed: true,
            },
            Style {
                fill: Some(Rgba(0x00ff_8080)),
                ..px_line(Rgba(0x00ff_80ff), 2.0)
            },
            plan,
        ),
    ];
    for &(x, y) in &ROBOTS {
        frame1.push(p(
            Shape::Circle {
                center: Vec2::new(x, y),
                radius: 1.6 * ROBOT_RADIUS,
            },
            px_line(Rgba::from_rgb(0x30ff30), 2.0),
            robots,
        ));
    }
    // Undrawable primitives: counted, not drawn.
    frame1.push(p(
        Shape::Circle {
            center: Vec2::new(f64::NAN, 0.0),
            radius: 100.0,
        },
        px_line(WHITE, 2.0),
        robots,
    ));
    frame1.push(p(
        Shape::Circle {
            center: Vec2::ZERO,
            radius: 0.0,
        },
        px_line(WHITE, 2.0),
        robots,
    ));
    frame1.push(p(
        Shape::Text {
            anchor: Vec2::ZERO,
            text: "".into(),
            size: 20.0,
        },
        px_line(WHITE, 0.0),
        robots,
    ));
    log.push_frame(FrameTime::Instant(1.0), frame1);
    log.push_frame(
        FrameTime::Instant(2.0),
        [p(
            Shape::Circle {
                center: Vec2::new(0.0, 2000.0),
                radius: 800.0,
            },
            px_line(Rgba(0xff00_00ff), 8.0),
            robots,
        )],
    );
    log
}

/// Video 0.5 s + offset 0.5 s = log 1.0 s.
const OFFSET: f64 = 0.5;
const VIDEO_TIME: f64 = 0.5;

/// A pipeline drawing `log` through `calib` with the green-key mask.
fn pipeline_for(
    log: Arc<Log>,
    calib: Calibration,
    toggles: DrawToggles,
    offset: f64,
    threshold: f64,
) -> Pipeline {
    let settings = DrawSettings {
        toggles,
        calibration: Some(calib),
        time: TimeMap::new(offset),
        instant_threshold: InstantThreshold::Seconds(threshold),
        filter: FilterSpec::default(),
        ..DrawSettings::default()
    };
    Pipeline::new(log, &settings)
        .unwrap()
        .with_masker(Box::new(GreenKey))
}

fn pipeline(toggles: DrawToggles) -> Pipeline {
    pipeline_for(Arc::new(scene_log()), camera(), toggles, OFFSET, 0.2)
}

fn render(toggles: DrawToggles) -> (RgbImage, Pipeline, underlay::pipeline::FrameStats) {
    let mut p = pipeline(toggles);
    let mut frame = SourceFrame::new(0, VIDEO_TIME, scene(&camera()));
    let stats = p.process(&mut frame).unwrap();
    (frame.image, p, stats)
}

#[test]
fn golden_scene_with_mask() {
    let (frame, _, stats) = render(DrawToggles::default());
    // 5 field + 1 target + 7 reasoning + 3 robot circles + 3 undrawable.
    assert_eq!(stats.primitives, 19);
    assert_eq!((stats.drawn, stats.skipped), (16, 3));
    crate::util::check_golden("scene.png", &frame);
}

#[test]
fn golden_scene_without_mask() {
    let (frame, _, _) = render(DrawToggles {
        floor_mask: false,
        ..DrawToggles::default()
    });
    crate::util::check_golden("scene-nomask.png", &frame);
}

#[test]
fn golden_scene_with_tint() {
    let (frame, _, _) = render(DrawToggles {
        tint: true,
        ..DrawToggles::default()
    });
    crate::util::check_golden("scene-tint.png", &frame);
}

fn px(img: &RgbImage, p: Vec2) -> [u8; 3] {
    let (x, y) = (p.x.round() as usize, p.y.round() as usize);
    [img[[y, x, 0]], img[[y, x, 1]], img[[y, x, 2]]]
}

#[test]
fn colour_on_floor_and_none_on_robots() {
    let calib = camera();
    let original = scene(&calib);
    let (frame, p, _) = render(DrawToggles::default());
    // The dot marker (opaque yellow) at its projected centre, on grass.
    let dot = calib.project(Vec2::new(-600.0, -1800.0)).unwrap();
    assert_eq!(px(&frame, dot), [255, 255, 0]);
    // The orange path is drawn on the grass between the first two vertices …
    let on_path = calib
        .project(Vec2::new(-3500.0, -2000.0).lerp(Vec2::new(-1500.0, 300.0), 0.4))
        .unwrap();
    assert_eq!(px(&frame, on_path), [255, 128, 0]);
    // … and in the overlay over the robot it passes through, but the video
    // keeps the robot there.
    let robot = calib.project(Vec2::new(ROBOTS[0].0, ROBOTS[0].1)).unwrap();
    let body = Vec2::new(robot.x, robot.y - 2.0);
    assert_eq!(px(&original, body), BODY);
    assert!(
        p.overlay()
            .pixel(body.x.round() as usize, body.y.round() as usize)[3]
            > 200
    );
    assert_eq!(px(&frame, body), BODY);
    assert!(
        !p.last_mask()
            .is_floor(body.x.round() as usize, body.y.round() as usize)
    );
    // The instantaneous frame at 2.0 s is not shown at log time 1.0 s.
    let far = calib
        .project(Vec2::new(800.0 * 0.5f64.sqrt(), 2000.0 + 800.0 * 0.5f64.sqrt()))
        .unwrap();
    assert_eq!(px(&frame, far), px(&original, far));
}

#[test]
fn circles_become_ellipses_under_perspective() {
    let calib = camera();
    let (_, p, _) = render(DrawToggles::default());
    let ov = p.overlay();
    // White paint (the field lines; the orange path passes nearby).
    let painted = |q: Vec2| ov.pixel(q.x.round() as usize, q.y.round() as usize)[2] > 128;
    let c = calib.project(Vec2::ZERO).unwrap();
    let right = calib.project(Vec2::new(500.0, 0.0)).unwrap();
    let near = calib.project(Vec2::new(0.0, -500.0)).unwrap();
    let far = calib.project(Vec2::new(0.0, 500.0)).unwrap();
    for q in [right, near, far] {
        assert!(painted(q), "centre circle not painted at {q:?}");
    }
    let rx = right.x - c.x;
    let (down, up) = (near.y - c.y, c.y - far.y);
    // Foreshortened in depth, and the near half larger than the far half.
    assert!(down + up < 0.7 * 2.0 * rx, "rx {rx} down {down} up {up}");
    assert!(down > up * 1.05, "down {down} up {up}");
    // Down the column a quarter of the way across, the paint sits where
    // the world circle projects (x = 250 mm, y = ±433 mm), not where a
    // circle drawn in the image would be.
    let near_q = calib.project(Vec2::new(250.0, -433.0)).unwrap();
    let far_q = calib.project(Vec2::new(250.0, 433.0)).unwrap();
    let col = near_q.x.round();
    let rows: Vec<f64> = ((c.y - rx) as usize..=(c.y + rx) as usize)
        .map(|y| y as f64)
        .filter(|&y| painted(Vec2::new(col, y)))
        .collect();
    let image_circle = [c.y - rx * 0.75f64.sqrt(), c.y + rx * 0.75f64.sqrt()];
    for y in &rows {
        let to_ellipse = (y - near_q.y).abs().min((y - far_q.y).abs());
        assert!(
            to_ellipse <= 2.0,
            "paint at row {y}, ellipse rows {} {}",
            near_q.y,
            far_q.y
        );
        assert!(
            image_circle.iter().all(|yc| (y - yc).abs() > 2.0),
            "row {y} {image_circle:?}"
        );
    }
    assert!(
        rows.iter().any(|y| y > &c.y) && rows.iter().any(|y| y < &c.y),
        "{rows:?}"
    );
    // Inside the ellipse, the centre line is the only paint.
    assert!(!painted(Vec2::new(c.x + rx / 2.0, c.y)));
}

#[test]
fn lines_are_clipped_at_the_horizon() {
    let calib = camera();
    let (_, p, _) = render(DrawToggles {
        floor_mask: false,
        ..DrawToggles::default()
    });
    let ov = p.overlay();
    let horizon = horizon_row();
    assert!(horizon > 10.0 && horizon < 60.0, "{horizon}");
    // Nothing at all is drawn above the horizon: not the line running off
    // to the horizon, and not the one that passes behind the camera
    // (unclipped, it would wrap round into the sky).
    for y in 0..(horizon.floor() as usize - 1) {
        for x in 0..W {
            assert_eq!(
                ov.pixel(x, y),
                [0; 4],
                "paint at ({x}, {y}) above the horizon at {horizon}"
            );
        }
    }
    // The far line does reach close to the horizon.
    let col = calib.project(Vec2::new(-2500.0, 1e6)).unwrap().x.round() as usize;
    let top = (0..H).find(|&y| ov.pixel(col, y)[3] > 0).unwrap();
    assert!((top as f64) < horizon + 6.0, "top {top} horizon {horizon}");
    // The line behind the camera shows from the field to the bottom edge.
    let start = calib.project(Vec2::new(-3800.0, 0.0)).unwrap();
    assert!(
        p.overlay()
            .pixel(start.x.round() as usize, start.y.round() as usize)[3]
            > 0
    );
    let bottom: Vec<usize> = (0..W)
        .filter(|&x| ov.pixel(x, H - 1)[0] > 200 && ov.pixel(x, H - 1)[1] < 50)
        .collect();
    assert!(
        !bottom.is_empty(),
        "the magenta line should leave through the bottom edge"
    );
}

#[test]
fn world_widths_narrow_with_distance() {
    let calib = camera();
    let (_, p, _) = render(DrawToggles {
        floor_mask: false,
        ..DrawToggles::default()
    });
    let ov = p.overlay();
    // Width of the centre line (30 mm) at the near and the far touch line.
    let width_at = |y_world: f64| {
        let q = calib.project(Vec2::new(0.0, y_world)).unwrap();
        let y = q.y.round() as usize;
        let x0 = q.x.round() as usize;
        (x0 - 10..x0 + 10)
            .map(|x| ov.pixel(x, y)[3] as f64 / 255.0)
            .sum::<f64>()
    };
    let (near, far) = (width_at(-2500.0), width_at(2500.0));
    let k_near = calib.pixels_per_unit(Vec2::new(0.0, -2500.0)).unwrap();
    let k_far = calib.pixels_per_unit(Vec2::new(0.0, 2500.0)).unwrap();
    assert!(near > far * 1.3, "near {near} far {far}");
    assert!(
        (near - 30.0 * k_near).abs() < 0.6,
        "near {near} expected {}",
        30.0 * k_near
    );
    assert!(
        (far - 30.0 * k_far).abs() < 0.6,
        "far {far} expected {}",
        30.0 * k_far
    );
}

#[test]
fn lines_bend_with_lens_distortion() {
    // The same camera seen through a barrel-distorting lens.
    let straight = camera();
    let lens =
        underlay::calib::Distortion::radial(Vec2::new(W as f64 / 2.0, H as f64 / 2.0), FOCAL, -0.25, 0.0);
    let bent = Calibration::from_parts(*straight.homography(), Some(lens)).unwrap();
    let log = {
        let mut log = Log::new();
        let e = log.entities.intern("field");
        log.push_frame(
            FrameTime::Persistent {
                start: f64::NEG_INFINITY,
                end: f64::INFINITY,
            },
            [Primitive {
                shape: Shape::Line {
                    start: Vec2::new(-4500.0, -3000.0),
                    end: Vec2::new(4500.0, -3000.0),
                },
                style: px_line(WHITE, 2.0),
                entity: e,
                level: 0,
            }],
        );
        Arc::new(log)
    };
    let toggles = DrawToggles {
        floor_mask: false,
        ..DrawToggles::default()
    };
    let mut p = pipeline_for(log, bent.clone(), toggles, 0.0, 0.1);
    p.process(&mut SourceFrame::new(0, 0.0, RgbImage::zeros((H, W, 3))))
        .unwrap();
    let ov = p.overlay();
    let painted = |q: Vec2| ov.pixel(q.x.round() as usize, q.y.round() as usize)[3] > 200;
    // The near touch line is a curve: painted where its points project
    // through the lens, not along the chord between its projected ends.
    let (a, b) = (
        bent.project(Vec2::new(-4500.0, -3000.0)).unwrap(),
        bent.project(Vec2::new(4500.0, -3000.0)).unwrap(),
    );
    for k in 1..8 {
        let t = k as f64 / 8.0;
        let on_curve = bent.project(Vec2::new(-4500.0 + 9000.0 * t, -3000.0)).unwrap();
        let on_chord = a.lerp(b, t);
        assert!(painted(on_curve), "curve point {on_curve:?} not painted");
        if (on_curve - on_chord).length() > 3.0 {
            assert!(!painted(on_chord), "chord point {on_chord:?} painted");
        }
    }
    let mid_gap = (bent.project(Vec2::new(0.0, -3000.0)).unwrap() - a.lerp(b, 0.5)).length();
    assert!(
        mid_gap > 5.0,
        "the lens should bend the line visibly ({mid_gap} px)"
    );
}
