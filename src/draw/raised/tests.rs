use super::*;
use crate::calib::camera::look_at;
use crate::draw::Overlay;
use crate::log::{EntityId, Rgba};

fn camera() -> Calibration {
    let k = [[900.0, 0.0, 320.0], [0.0, 900.0, 240.0], [0.0, 0.0, 1.0]];
    let (r, t) = look_at([0.0, -6000.0, 3000.0], [0.0, 0.0, 300.0]).unwrap();
    Calibration::from_camera(&k, &[], &r, t)
        .unwrap()
        .with_image_size(640, 480)
}

fn prim(r: Raised) -> Primitive {
    Primitive {
        shape: crate::log::Shape::Raised(Box::new(r)),
        style: Style {
            color: Rgba::from_rgb(0xff0000),
            fill: Some(Rgba::from_rgb(0x00ff00)),
            thickness: 2.0,
            unit: ThicknessUnit::Pixels,
        },
        entity: EntityId(0),
        level: 0,
    }
}

/// The overlay's covered pixels' bounding box.
fn drawn_box(ov: &Overlay) -> Option<(usize, usize, usize, usize)> {
    let mut b: Option<(usize, usize, usize, usize)> = None;
    ov.for_each_span(|y, x0, x1| {
        for x in x0..x1 {
            if ov.pixel(x, y)[3] > 0 {
                b = Some(match b {
                    None => (x, y, x, y),
                    Some((a, c, d, e)) => (a.min(x), c.min(y), d.max(x), e.max(y)),
                });
            }
        }
    });
    b
}

#[test]
fn a_sphere_is_drawn_where_its_centre_projects_and_a_floor_calibration_refuses_it() {
    let calib = camera();
    let mut painter = Painter::new(640, 480);
    let mut ov = Overlay::new(640, 480);
    let ball = prim(Raised::Sphere {
        center: [500.0, 0.0, 800.0],
        radius: 110.0,
    });
    painter.primitive(&mut ov, &calib, &ball).unwrap();
    let (x0, y0, x1, y1) = drawn_box(&ov).unwrap();
    let c = calib.project3([500.0, 0.0, 800.0]).unwrap();
    assert!((x0 as f64) < c.x && c.x < x1 as f64 && (y0 as f64) < c.y && c.y < y1 as f64);
    // The ball is above the floor: its picture is above the picture of
    // the floor point under it.
    let under = calib.project3([500.0, 0.0, 0.0]).unwrap();
    assert!((y1 as f64) < under.y, "{y1} vs {under:?}");
    let floor = Calibration::from_homography(*calib.homography()).unwrap();
    let mut ov = Overlay::new(640, 480);
    assert_eq!(
        painter.primitive(&mut ov, &floor, &ball),
        Err(SkipReason::FloorOnly)
    );
    assert!(SkipReason::FloorOnly.to_string().contains("knows only the floor"));
}

#[test]
fn every_raised_shape_draws_something_in_view() {
    let calib = camera();
    let shapes = [
        Raised::Path {
            points: vec![[-500.0, 0.0, 0.0], [0.0, 0.0, 900.0], [500.0, 0.0, 0.0]].into(),
            closed: false,
        },
        Raised::Circle {
            center: [0.0, 0.0, 500.0],
            radius: 300.0,
            normal: crate::log::raised::UP,
        },
        Raised::Text {
            anchor: [0.0, 0.0, 500.0],
            text: "up".into(),
            size: 20.0,
        },
        Raised::Point {
            position: [0.0, 0.0, 500.0],
            kind: crate::log::MarkerKind::Dot,
            size: 10.0,
        },
        Raised::Cylinder {
            base: [0.0, 0.0, 0.0],
            radius: 90.0,
            height: 150.0,
        },
        Raised::Box {
            base: [0.0, 0.0, 0.0],
            size: [400.0, 200.0, 300.0],
            orientation: 0.3,
        },
    ];
    let mut painter = Painter::new(640, 480);
    for s in shapes {
        let mut ov = Overlay::new(640, 480);
        painter.primitive(&mut ov, &calib, &prim(s.clone())).unwrap();
        assert!(drawn_box(&ov).is_some(), "{s:?}");
    }
}

#[test]
fn a_box_is_taller_in_the_picture_than_its_floor_print() {
    let calib = camera();
    let mut painter = Painter::new(640, 480);
    let (mut flat, mut tall) = (Overlay::new(640, 480), Overlay::new(640, 480));
    let with_height = |h: f64| {
        prim(Raised::Box {
            base: [0.0, 0.0, 0.0],
            size: [400.0, 400.0, h],
            orientation: 0.0,
        })
    };
    painter.primitive(&mut flat, &calib, &with_height(0.0)).unwrap();
    painter.primitive(&mut tall, &calib, &with_height(600.0)).unwrap();
    let (f, t) = (drawn_box(&flat).unwrap(), drawn_box(&tall).unwrap());
    // Same bottom edge (the base), a top far higher up.
    assert!(f.3.abs_diff(t.3) <= 2, "{f:?} {t:?}");
    assert!(t.1 + 40 < f.1, "{f:?} {t:?}");
}

#[test]
fn heights_are_flattened_onto_the_floor_only_when_asked() {
    let floor = Calibration::from_homography(*camera().homography()).unwrap();
    let mut painter = Painter::new(640, 480);
    let ball = prim(Raised::Sphere {
        center: [0.0, 0.0, 800.0],
        radius: 110.0,
    });
    let mut ov = Overlay::new(640, 480);
    assert_eq!(
        painter.primitive(&mut ov, &floor, &ball),
        Err(SkipReason::FloorOnly)
    );
    assert!(drawn_box(&ov).is_none());
    painter.flatten_heights = true;
    painter.primitive(&mut ov, &floor, &ball).unwrap();
    // Drawn as the disc on the floor below it.
    let (x0, y0, x1, y1) = drawn_box(&ov).unwrap();
    let c = floor.project(crate::geom::Vec2::new(0.0, 0.0)).unwrap();
    assert!((x0 as f64) < c.x && c.x < x1 as f64 && (y0 as f64) < c.y && c.y < y1 as f64);
    assert!(matches!(
        flattened(&Raised::Box {
            base: [0.0; 3],
            size: [1.0, 2.0, 3.0],
            orientation: 0.0
        }),
        crate::log::Shape::Rectangle { .. }
    ));
}
