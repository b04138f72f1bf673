//! Test fixtures (feature `test-util`): hand-made sample logs (on the
//! floor, and with shapes above it) and proptest strategies for random
//! valid logs (everything the model can hold).

use proptest::prelude::*;

use super::raised::UP;
use super::{
    DisplayHints, EntityId, FrameTime, Header, Log, MarkerKind, Primitive, Raised, Rgba, Shape, Style,
    ThicknessUnit, TimeUnit, Vec2, Vec3,
};

/// Cases per fuzzing property: 2000 by default, more with
/// `UNDERLAY_FUZZ_CASES=N cargo test --release`.
pub fn fuzz_cases() -> u32 {
    std::env::var("UNDERLAY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// A small log using every shape, style option and header field.
pub fn sample() -> Log {
    let mut log = Log::new();
    log.header.name = "test".into();
    log.header.time_unit = TimeUnit::RelativeSeconds;
    log.header.hints.world_bounds = Some((Vec2::new(-1.0, -2.0), Vec2::new(3.0, 4.0)));
    let robots = log.entities.intern("robots");
    let blue = log.entities.intern("robots/blue");
    log.entities.add_parent(blue, robots);
    let p = |shape, entity, level| Primitive {
        shape,
        style: Style {
            color: Rgba(0x1234_5678),
            fill: Some(Rgba::BLACK),
            thickness: 2.5,
            unit: ThicknessUnit::World,
        },
        entity,
        level,
    };
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [p(
            Shape::Polygon {
                vertices: vec![Vec2::new(0.0, 1.0), Vec2::new(2.0, 0.0)].into(),
                closed: false,
            },
            robots,
            -3,
        )],
    );
    log.push_frame(
        FrameTime::Instant(1.5),
        [
            p(
                Shape::Circle {
                    center: Vec2::new(1.0, 2.0),
                    radius: 3.0,
                },
                blue,
                2,
            ),
            p(
                Shape::Text {
                    anchor: Vec2::ZERO,
                    text: "hé".into(),
                    size: 12.0,
                },
                blue,
                0,
            ),
            p(
                Shape::Point {
                    position: Vec2::new(5.0, 5.0),
                    kind: MarkerKind::Dot,
                    size: 0.0,
                },
                robots,
                0,
            ),
            p(
                Shape::Sector {
                    center: Vec2::new(-1.0, 1.0),
                    inner: 0.5,
                    outer: 2.0,
                    start: -0.25,
                    sweep: 1.5,
                },
                blue,
                1,
            ),
        ],
    );
    log
}

/// A small log with every kind of shape above the floor (and one on it):
/// a format-version-2 log.
pub fn sample_raised() -> Log {
    let mut log = Log::new();
    log.header.name = "heights".into();
    let ball = log.entities.intern("ball");
    let plan = log.entities.intern("plan/chip");
    let p = |shape: Raised, entity| Primitive {
        shape: Shape::Raised(Box::new(shape)),
        style: Style::color(Rgba::named("orange").unwrap_or(Rgba::WHITE)),
        entity,
        level: 1,
    };
    log.push_frame(
        FrameTime::Instant(2.0),
        [
            p(
                Raised::Sphere {
                    center: [1200.0, -300.0, 21.5],
                    radius: 21.5,
                },
                ball,
            ),
            p(
                Raised::Path {
                    points: vec![[0.0, 0.0, 0.0], [600.0, 0.0, 350.5], [1200.0, 0.0, 0.0]].into(),
                    closed: false,
                },
                plan,
            ),
            p(
                Raised::Path {
                    points: vec![[0.0, 0.0, 100.0], [10.0, 0.0, 100.0]].into(),
                    closed: false,
                },
                plan,
            ),
            p(
                Raised::Path {
                    points: vec![[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]].into(),
                    closed: true,
                },
                plan,
            ),
            Primitive {
                shape: Shape::Circle {
                    center: Vec2::new(5.0, 6.0),
                    radius: 7.0,
                },
                style: Style::default(),
                entity: ball,
                level: 0,
            },
        ],
    );
    log.push_frame(
        FrameTime::Persistent {
            start: 1.0,
            end: f64::INFINITY,
        },
        [
            p(
                Raised::Circle {
                    center: [0.0, 0.0, 500.0],
                    radius: 90.0,
                    normal: UP,
                },
                ball,
            ),
            p(
                Raised::Circle {
                    center: [1.0, 2.0, 3.0],
                    radius: 4.0,
                    normal: [1.0, 0.0, 0.0],
                },
                ball,
            ),
            p(
                Raised::Text {
                    anchor: [1.0, 2.0, 180.0],
                    text: "above \"me\"".into(),
                    size: 14.0,
                },
                plan,
            ),
            p(
                Raised::Point {
                    position: [3.0, 4.0, 5.0],
                    kind: MarkerKind::Dot,
                    size: 6.0,
                },
                plan,
            ),
            p(
                Raised::Point {
                    position: [3.0, 4.0, 0.0],
                    kind: MarkerKind::Cross,
                    size: 0.0,
                },
                plan,
            ),
            p(
                Raised::Cylinder {
                    base: [100.0, 0.0, 0.0],
                    radius: 90.0,
                    height: 150.0,
                },
                ball,
            ),
            p(
                Raised::Box {
                    base: [-500.0, 250.0, 0.0],
                    size: [180.0, 60.0, 40.0],
                    orientation: 0.5,
                },
                ball,
            ),
        ],
    );
    log
}

/// A small log with shapes in the picture's pixels beside a floor shape
/// and one above the floor: a format-version-3 log.
pub fn sample_picture() -> Log {
    let mut log = Log::new();
    log.header.name = "annotations".into();
    let boxes = log.entities.intern("/detections/boxes");
    let ball = log.entities.intern("ball");
    let style = |color| Style {
        color: Rgba::from_rgb(color),
        fill: None,
        thickness: 2.0,
        unit: ThicknessUnit::Pixels,
    };
    let p = |shape, color, entity| Primitive {
        shape,
        style: style(color),
        entity,
        level: 0,
    };
    log.push_frame(
        FrameTime::Instant(1.5),
        vec![
            p(
                Shape::picture(Shape::Polygon {
                    vertices: vec![
                        Vec2::new(100.0, 80.0),
                        Vec2::new(180.0, 80.0),
                        Vec2::new(180.0, 140.0),
                    ]
                    .into(),
                    closed: true,
                }),
                0x00ff00,
                boxes,
            ),
            p(
                Shape::picture(Shape::Circle {
                    center: Vec2::new(320.5, 240.0),
                    radius: 12.0,
                }),
                0xff0000,
                boxes,
            ),
            p(
                Shape::picture(Shape::Text {
                    anchor: Vec2::new(100.0, 70.0),
                    text: "person 0.92".into(),
                    size: 14.0,
                }),
                0xffffff,
                boxes,
            ),
            p(
                Shape::Circle {
                    center: Vec2::new(0.0, 0.0),
                    radius: 21.5,
                },
                0xff8000,
                ball,
            ),
            p(
                Shape::Raised(Box::new(Raised::Sphere {
                    center: [0.0, 0.0, 21.5],
                    radius: 21.5,
                })),
                0xff8000,
                ball,
            ),
        ],
    );
    log
}

/// Any finite f64, biased towards the values logs hold.
/// (Zero is +0: the native writer keeps -0, which prost, the reference
/// it is compared with byte for byte, drops; `-0` has its own tests.)
pub fn coord() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-10_000i32..10_000).prop_map(f64::from),
        2 => -1e4..1e4f64,
        1 => (prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO).prop_map(|v| v + 0.0),
    ]
}

pub fn size() -> impl Strategy<Value = f64> {
    coord().prop_map(f64::abs)
}

fn point() -> impl Strategy<Value = Vec2> {
    (coord(), coord()).prop_map(|(x, y)| Vec2::new(x, y))
}

fn point3() -> impl Strategy<Value = Vec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| [x, y, z])
}

/// Any shape above the floor that can be drawn.
pub fn raised_shape() -> impl Strategy<Value = Shape> {
    let normal = prop_oneof![
        Just(UP),
        point3().prop_map(|n| if n.iter().all(|&v| v == 0.0) { UP } else { n }),
    ];
    prop_oneof![
        (prop::collection::vec(point3(), 2..6), any::<bool>()).prop_map(|(p, closed)| Raised::Path {
            points: p.into(),
            closed
        }),
        (point3(), size(), normal).prop_map(|(center, radius, normal)| Raised::Circle {
            center,
            radius,
            normal
        }),
        (point3(), any::<String>(), size()).prop_map(|(anchor, text, size)| Raised::Text {
            anchor,
            text: text.into(),
            size
        }),
        (point3(), any::<bool>(), size()).prop_map(|(position, dot, size)| Raised::Point {
            position,
            kind: if dot { MarkerKind::Dot } else { MarkerKind::Cross },
            size
        }),
        (point3(), size()).prop_map(|(center, radius)| Raised::Sphere { center, radius }),
        (point3(), size(), size()).prop_map(|(base, radius, height)| Raised::Cylinder {
            base,
            radius,
            height
        }),
        (point3(), size(), size(), size(), coord()).prop_map(|(base, l, w, h, orientation)| Raised::Box {
            base,
            size: [l, w, h],
            orientation
        }),
    ]
    .prop_map(|r| Shape::Raised(Box::new(r)))
}

/// Any shape on the floor that can be drawn.
pub fn floor_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (point(), size()).prop_map(|(center, radius)| Shape::Circle { center, radius }),
        (point(), point()).prop_map(|(start, end)| Shape::Line { start, end }),
        (point(), size(), size(), coord()).prop_map(|(center, l, w, orientation)| Shape::Rectangle {
            center,
            size: Vec2::new(l, w),
            orientation
        }),
        (prop::collection::vec(point(), 1..6), any::<bool>()).prop_map(|(v, closed)| Shape::Polygon {
            vertices: v.into(),
            closed
        }),
        (point(), any::<String>(), size()).prop_map(|(anchor, text, size)| Shape::Text {
            anchor,
            text: text.into(),
            size
        }),
        (point(), any::<bool>(), size()).prop_map(|(position, dot, size)| Shape::Point {
            position,
            kind: if dot { MarkerKind::Dot } else { MarkerKind::Cross },
            size
        }),
        (point(), size(), size(), coord(), coord(), any::<bool>()).prop_map(
            |(center, a, b, start, sweep, arc)| Shape::Sector {
                center,
                inner: if arc { a.max(b) } else { a.min(b) },
                outer: a.max(b),
                start,
                sweep
            }
        ),
    ]
}

fn color() -> impl Strategy<Value = Rgba> {
    prop_oneof![
        any::<u32>().prop_map(Rgba),
        (0..Rgba::NAMED.len()).prop_map(|i| Rgba::from_rgb(Rgba::NAMED[i].1)),
    ]
}

fn style() -> impl Strategy<Value = Style> {
    (
        color(),
        prop::option::of(color()),
        prop_oneof![
            Just(0.0f32),
            0.0f32..100.0,
            prop::num::f32::NORMAL.prop_map(f32::abs)
        ],
        any::<bool>(),
    )
        .prop_map(|(color, fill, thickness, world)| Style {
            color,
            fill,
            thickness,
            unit: if world {
                ThicknessUnit::World
            } else {
                ThicknessUnit::Pixels
            },
        })
}

fn entity_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,6}(/[a-z0-9]{1,4}){0,2}",
        Just("circle".to_owned()),
        Just("header".to_owned()),
        Just(String::new()),
        Just("with space \"quoted\"".to_owned()),
        Just("3".to_owned()),
        any::<String>(),
    ]
}

fn time() -> impl Strategy<Value = FrameTime> {
    let t = prop_oneof![coord(), 1.6e9..1.8e9f64];
    let end = prop_oneof![
        3 => coord().prop_map(f64::abs),
        1 => Just(f64::INFINITY),
    ];
    let start = prop_oneof![3 => coord(), 1 => Just(f64::NEG_INFINITY)];
    prop_oneof![
        t.prop_map(FrameTime::Instant),
        (start, end).prop_map(|(s, e): (f64, f64)| {
            let (s, e) = if s <= e { (s, e) } else { (e, s) };
            FrameTime::Persistent { start: s, end: e }
        }),
    ]
}

fn header() -> impl Strategy<Value = Header> {
    (
        any::<String>(),
        any::<bool>(),
        prop_oneof![Just("mm".to_owned()), Just("m".to_owned()), any::<String>()],
        prop::option::of(size()),
        prop::option::of(any::<i32>()),
        prop::option::of((point(), point())),
    )
        .prop_map(|(name, relative, world_unit, threshold, level, bounds)| Header {
            name,
            time_unit: if relative {
                TimeUnit::RelativeSeconds
            } else {
                TimeUnit::EpochSeconds
            },
            world_unit,
            hints: DisplayHints {
                instant_threshold: threshold,
                default_max_level: level,
                world_bounds: bounds,
            },
        })
}

/// A random valid log: every value drawable, entity parents acyclic;
/// half of them with shapes above the floor (format version 2) or in the
/// picture's pixels (version 3), half with neither (version 1).
pub fn arb_log() -> impl Strategy<Value = Log> {
    // Boxed: the nested strategies' types overflow a debug build's stack.
    let mixed = prop_oneof![
        4 => floor_shape().boxed(),
        2 => raised_shape().boxed(),
        1 => floor_shape().prop_map(Shape::picture).boxed(),
    ]
    .boxed();
    prop_oneof![arb_floor_log(), log_of(mixed)]
}

/// A random valid log whose shapes all lie on the floor (version 1).
pub fn arb_floor_log() -> BoxedStrategy<Log> {
    log_of(floor_shape().boxed())
}

/// A random valid log of shapes drawn from `shape`.
fn log_of(shape: BoxedStrategy<Shape>) -> BoxedStrategy<Log> {
    let prim = (
        shape,
        style(),
        any::<prop::sample::Index>(),
        prop_oneof![-3i32..5, any::<i32>()],
    );
    (
        header(),
        prop::collection::vec(entity_name(), 1..6),
        prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..6),
        prop::collection::vec((time(), prop::collection::vec(prim, 0..5)), 0..6),
    )
        .prop_map(|(header, names, edges, frames)| {
            let mut log = Log::new();
            log.header = header;
            for n in &names {
                log.entities.intern(n);
            }
            let n = log.entities.len();
            for (a, b) in edges {
                let (c, p) = (EntityId(a.index(n) as u32), EntityId(b.index(n) as u32));
                if !log.entities.is_ancestor_or_self(c, p) {
                    log.entities.add_parent(c, p);
                }
            }
            for (t, prims) in frames {
                let prims: Vec<Primitive> = prims
                    .into_iter()
                    .map(|(shape, style, e, level)| Primitive {
                        shape,
                        style,
                        entity: EntityId(e.index(n) as u32),
                        level,
                    })
                    .collect();
                log.push_frame(t, prims);
            }
            log
        })
        .boxed()
}
