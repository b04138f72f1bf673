//! Golden images of shapes above the floor (issue 33): paths, circles
//! (horizontal and upright), a text and a marker at heights, and the
//! solids (sphere, cylinder, box), drawn through a full camera looking at
//! the floor from above and in front, over the floor's grid for scale.
//! Compared with `tests/data/golden/draw-raised-*.png` (`UNDERLAY_BLESS=1`
//! rewrites them; look at every one you bless).

use std::path::Path;

use underlay::calib::Calibration;
use underlay::calib::camera::look_at;
use underlay::draw::{Overlay, Painter};
use underlay::image::RgbImage;
use underlay::log::{EntityId, MarkerKind, Primitive, Raised, Rgba, Shape, Style, ThicknessUnit, Vec2};

use crate::util::check_golden;

const W: usize = 160;
const H: usize = 120;

/// A camera 1.5 m up, 3 m in front of the origin, looking at a point
/// 20 cm above it (millimetres).
fn camera() -> Calibration {
    let k = [[150.0, 0.0, 79.5], [0.0, 150.0, 59.5], [0.0, 0.0, 1.0]];
    let (r, t) = look_at([600.0, -3000.0, 1500.0], [0.0, 0.0, 200.0]).unwrap();
    Calibration::from_camera(&k, &[-0.05, 0.0], &r, t)
        .unwrap()
        .with_image_size(W as u32, H as u32)
}

fn prim(shape: Shape, color: Rgba, fill: Option<Rgba>, thickness: f32) -> Primitive {
    Primitive {
        shape,
        style: Style {
            color,
            fill,
            thickness,
            unit: ThicknessUnit::Pixels,
        },
        entity: EntityId(0),
        level: 0,
    }
}

fn raised(r: Raised) -> Shape {
    Shape::Raised(Box::new(r))
}

/// The floor's 500 mm grid in grey over a dark background, then `prims`.
fn picture(calib: &Calibration, prims: &[Primitive]) -> RgbImage {
    let mut painter = Painter::new(W, H);
    let mut overlay = Overlay::new(W, H);
    let grey = Rgba::from_rgba8(150, 150, 150, 255);
    for k in -4..=4 {
        let v = k as f64 * 500.0;
        for (a, b) in [((v, -2000.0), (v, 2000.0)), ((-2000.0, v), (2000.0, v))] {
            let line = prim(
                Shape::Line {
                    start: Vec2::new(a.0, a.1),
                    end: Vec2::new(b.0, b.1),
                },
                grey,
                None,
                1.0,
            );
            painter.primitive(&mut overlay, calib, &line).unwrap();
        }
    }
    for p in prims {
        painter
            .primitive(&mut overlay, calib, p)
            .unwrap_or_else(|e| panic!("{:?} not drawn: {e}", p.shape));
    }
    let mut frame = RgbImage::from_elem((H, W, 3), 40);
    overlay.composite(&mut frame, None).unwrap();
    frame
}

#[test]
fn golden_raised_paths_circles_text_and_markers() {
    let calib = camera();
    let orange = Rgba::from_rgb(0xff8000);
    let arc: Vec<[f64; 3]> = (0..=40)
        .map(|k| {
            let s = k as f64 / 40.0;
            [-1500.0 + 3000.0 * s, -500.0, 4.0 * 900.0 * s * (1.0 - s)]
        })
        .collect();
    let prims = [
        // A chip's arc and its shadow.
        prim(
            raised(Raised::Path {
                points: arc.clone().into(),
                closed: false,
            }),
            orange,
            None,
            2.0,
        ),
        prim(
            Shape::Polygon {
                vertices: arc.iter().map(|p| Vec2::new(p[0], p[1])).collect(),
                closed: false,
            },
            Rgba::from_rgba8(0, 0, 0, 160),
            None,
            1.5,
        ),
        // A horizontal ring 600 mm up, and an upright one facing x.
        prim(
            raised(Raised::Circle {
                center: [-800.0, 800.0, 600.0],
                radius: 400.0,
                normal: [0.0, 0.0, 1.0],
            }),
            Rgba::from_rgb(0x30c040),
            Some(Rgba::from_rgba8(0x30, 0xc0, 0x40, 90)),
            1.5,
        ),
        prim(
            raised(Raised::Circle {
                center: [900.0, 800.0, 500.0],
                radius: 400.0,
                normal: [1.0, 0.0, 0.0],
            }),
            Rgba::from_rgb(0x3060f0),
            None,
            2.0,
        ),
        // A pole with a marker and a label at its top.
        prim(
            raised(Raised::Path {
                points: vec![[0.0, 1200.0, 0.0], [0.0, 1200.0, 1000.0]].into(),
                closed: false,
            }),
            Rgba::WHITE,
            None,
            1.5,
        ),
        prim(
            raised(Raised::Point {
                position: [0.0, 1200.0, 1000.0],
                kind: MarkerKind::Dot,
                size: 6.0,
            }),
            Rgba::from_rgb(0xe03030),
            None,
            1.0,
        ),
        prim(
            raised(Raised::Text {
                anchor: [80.0, 1200.0, 1000.0],
                text: "1 m".into(),
                size: 10.0,
            }),
            Rgba::WHITE,
            None,
            0.0,
        ),
    ];
    check_golden("draw-raised-paths.png", &picture(&calib, &prims));
}

#[test]
fn golden_raised_solids() {
    let calib = camera();
    let prims = [
        prim(
            raised(Raised::Box {
                base: [-1000.0, 500.0, 0.0],
                size: [600.0, 400.0, 500.0],
                orientation: 0.4,
            }),
            Rgba::WHITE,
            Some(Rgba::from_rgba8(0xf0, 0xd0, 0x20, 140)),
            1.5,
        ),
        prim(
            raised(Raised::Cylinder {
                base: [0.0, 0.0, 0.0],
                radius: 250.0,
                height: 600.0,
            }),
            Rgba::WHITE,
            Some(Rgba::from_rgba8(0x30, 0x60, 0xf0, 140)),
            1.5,
        ),
        prim(
            raised(Raised::Sphere {
                center: [1000.0, 300.0, 700.0],
                radius: 250.0,
            }),
            Rgba::from_rgb(0xff8000),
            Some(Rgba::from_rgba8(0xff, 0x80, 0x00, 200)),
            1.0,
        ),
    ];
    check_golden("draw-raised-solids.png", &picture(&calib, &prims));
}

/// A log with heights over a calibration that knows only the floor: the
/// export says why its raised shapes are not drawn, and with
/// `--flatten-heights` draws them on the floor instead.
#[test]
fn export_names_a_floor_only_calibration_and_flattens_when_asked() {
    use underlay::video::{Encoder, EncoderSettings};
    let dir = crate::util::tmp();
    let video = dir.path().join("v.mp4");
    let img = RgbImage::from_elem((120, 160, 3), 128);
    let mut e = Encoder::create(&video, 160, 120, &EncoderSettings::default()).unwrap();
    for k in 0..3 {
        e.push(&img, k as f64 * 0.1).unwrap();
    }
    e.finish().unwrap();
    let log = dir.path().join("l.txt");
    std::fs::write(
        &log,
        "{\n{ 0.0; { { { sphere; (0, 0, 800); 20 }; red; {ball; 0} } } }\n{ 0.2; { { { sphere; (0, 0, 800); 20 }; red; {ball; 0} } } }\n}\n",
    )
    .unwrap();
    let calib = dir.path().join("c.toml");
    std::fs::write(
        &calib,
        "homography = [[1.0, 0.0, 80.0], [0.0, -1.0, 60.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    let export = |extra: &[&str]| {
        let out = dir.path().join("o.mp4");
        let mut args = vec![
            "export",
            "--video",
            video.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
            "--calib",
            calib.to_str().unwrap(),
            "--offset",
            "0",
            "--no-mask",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        crate::util::run(&args)
    };
    let o = export(&[]);
    crate::util::assert_ok(&o);
    let said = crate::util::text(&o);
    assert!(said.contains("knows only the floor"), "{said}");
    let o = export(&["--flatten-heights"]);
    crate::util::assert_ok(&o);
    let said = crate::util::text(&o);
    assert!(!said.contains("could not be drawn"), "{said}");
    // The ball's outline on the floor below it: a red ring of radius
    // 20 px round the picture's centre, nothing red at the centre.
    let mut d = underlay::video::Decoder::open(&dir.path().join("o.mp4")).unwrap();
    let f = d.next_frame().unwrap().unwrap();
    let red = |y: usize, x: usize| {
        (y - 1..=y + 1).any(|y| (x - 1..=x + 1).any(|x| f.image[[y, x, 0]] > 150 && f.image[[y, x, 1]] < 110))
    };
    if std::env::var_os("AIR_DEBUG").is_some() {
        underlay::video::still::save_rgb(Path::new("/tmp/flat.png"), &f.image).unwrap();
    }
    assert!(red(60, 100) && red(60, 60) && red(40, 80) && red(80, 80));
    assert!(!red(60, 80));
}

/// A rendered match seen at a slant (`--tilt`): its view is a full camera,
/// the pitch is warped into it (the centre spot where the camera sees the
/// centre), and a ball drawn 6 m up (a high ball over a whole pitch seen
/// in 320×180) is drawn above its place on the floor, not on it.
#[test]
fn a_slanted_match_shows_heights() {
    use std::sync::Arc;
    use underlay::log::{FrameTime, Log};
    use underlay::pipeline::{DrawSettings, Pipeline};
    use underlay::video::source::OpenOptions;

    let game = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim2d/match2.rcg.gz");
    let opts = OpenOptions {
        tilt: Some(40.0),
        size: Some((320, 180)),
        ..OpenOptions::default()
    };
    let mut src = underlay::formats::open_source(&game, &opts).unwrap();
    let calib = src
        .info()
        .calibration
        .clone()
        .expect("a rendered match has a view");
    assert!(calib.is_full_camera(), "a slanted view is a full camera");
    let mut frame = src.next_frame().unwrap().unwrap();
    assert_eq!(frame.image.dim(), (180, 320, 3));
    // The camera stands beyond the low-y side line, looking up the pitch:
    // the far side line is shorter in the picture than the near one.
    let px = |x: f64, y: f64| calib.project(Vec2::new(x, y)).unwrap();
    assert!(px(52.5, 34.0).x - px(-52.5, 34.0).x < px(52.5, -34.0).x - px(-52.5, -34.0).x);

    let mut log = Log::new();
    let e = log.entities.intern("ball");
    let ball = Raised::Sphere {
        center: [10.0, 5.0, 6.0],
        radius: 1.0,
    };
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [prim(
            raised(ball),
            Rgba::from_rgb(0xff00ff),
            Some(Rgba::from_rgb(0xff00ff)),
            1.0,
        )]
        .map(|mut p| {
            p.entity = e;
            p
        }),
    );
    let settings = DrawSettings {
        calibration: Some(calib.clone()),
        ..DrawSettings::default()
    };
    let before = frame.image.clone();
    let mut pipeline = Pipeline::new(Arc::new(log), &settings).unwrap();
    pipeline.process(&mut frame).unwrap();
    let magenta = |p: underlay::geom::Vec2| {
        let (x, y) = (p.x.round() as usize, p.y.round() as usize);
        frame.image[[y, x, 0]] > 200 && frame.image[[y, x, 1]] < 80 && frame.image[[y, x, 2]] > 200
    };
    let up = calib.project3([10.0, 5.0, 6.0]).unwrap();
    let floor = calib.project3([10.0, 5.0, 0.0]).unwrap();
    assert!(up.y < floor.y - 5.0, "{up:?} {floor:?}");
    assert!(magenta(up), "the ball is drawn at its height");
    assert!(!magenta(floor), "and not on the floor below it");
    assert_ne!(before, frame.image);
}
