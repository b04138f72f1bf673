//! The overlay rasterizer's unit tests: blending, compositing through
//! masks, the tint, skip reasons for hostile primitives, and any shape
//! drawn without a panic.

use super::*;
use crate::image::{FLOOR, MaskImage};
use crate::log::{EntityId, Style};

fn identity() -> Calibration {
    Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap()
}

fn prim(shape: Shape, style: Style) -> Primitive {
    Primitive {
        shape,
        style,
        entity: EntityId(0),
        level: 0,
    }
}

#[test]
fn translucent_polyline_is_blended_once_at_joins() {
    let mut ov = Overlay::new(60, 60);
    let mut painter = Painter::new(60, 60);
    let red = Rgba::from_rgba8(255, 0, 0, 128);
    let pts = [
        Vec2::new(10.0, 10.0),
        Vec2::new(40.0, 10.0),
        Vec2::new(40.0, 40.0),
    ];
    painter.stroke(&mut ov, &pts, false, 6.0, red);
    assert_eq!(ov.pixel(40, 10)[3], ov.pixel(25, 10)[3]);
    assert_eq!(ov.pixel(25, 10), [128, 0, 0, 128]);
}

#[test]
fn composite_respects_mask_and_alpha() {
    let mut ov = Overlay::new(4, 1);
    let mut painter = Painter::new(4, 1);
    painter.fill(
        &mut ov,
        &[vec![
            Vec2::new(-0.5, -0.5),
            Vec2::new(3.5, -0.5),
            Vec2::new(3.5, 0.5),
            Vec2::new(-0.5, 0.5),
        ]],
        Rgba::from_rgba8(0, 0, 255, 255),
    );
    let mut frame = RgbImage::from_elem((1, 4, 3), 100);
    let mut mask = MaskImage::from_elem((1, 4), FLOOR);
    mask[[0, 1]] = 0;
    mask[[0, 2]] = 128;
    ov.composite(&mut frame, Some(&FloorMask::from_image(mask)))
        .unwrap();
    assert_eq!(frame.slice(ndarray::s![0, 0, ..]).to_vec(), vec![0, 0, 255]);
    assert_eq!(frame.slice(ndarray::s![0, 1, ..]).to_vec(), vec![100, 100, 100]);
    let half = frame.slice(ndarray::s![0, 2, ..]).to_vec();
    assert!(
        (half[0] as i32 - 50).abs() <= 1 && (half[2] as i32 - 178).abs() <= 1,
        "{half:?}"
    );
    // Wrong sizes are errors, not panics.
    let small = FloorMask::from_image(MaskImage::from_elem((1, 3), FLOOR));
    assert!(ov.composite(&mut frame, Some(&small)).is_err());
    // A block mask: its bit over both pixels of each block.
    let mut frame = RgbImage::from_elem((1, 4, 3), 100);
    let blocks = FloorMask::from_blocks(crate::floor::bits::BitMask::from_fn(2, 1, |x, _| x == 1), 4, 1);
    ov.composite(&mut frame, Some(&blocks)).unwrap();
    assert_eq!(frame.slice(ndarray::s![0, 1, ..]).to_vec(), vec![100, 100, 100]);
    assert_eq!(frame.slice(ndarray::s![0, 2, ..]).to_vec(), vec![0, 0, 255]);
    let mut big = RgbImage::zeros((2, 4, 3));
    assert!(ov.composite(&mut big, None).is_err());
}

#[test]
fn clear_makes_the_overlay_transparent() {
    let mut ov = Overlay::new(50, 50);
    let mut painter = Painter::new(50, 50);
    painter.stroke(
        &mut ov,
        &[Vec2::new(0.0, 0.0), Vec2::new(49.0, 49.0)],
        false,
        3.0,
        Rgba::WHITE,
    );
    assert!(!ov.is_empty());
    ov.clear();
    assert!(ov.is_empty() && ov.pixels().iter().all(|p| *p == [0; 4]));
}

#[test]
fn hostile_primitives_are_skipped_with_a_reason() {
    let mut ov = Overlay::new(100, 100);
    let mut painter = Painter::new(100, 100);
    let c = identity();
    let st = Style::color(Rgba::WHITE);
    let cases = [
        (
            Shape::Circle {
                center: Vec2::new(f64::NAN, 0.0),
                radius: 3.0,
            },
            SkipReason::NotFinite,
        ),
        (
            Shape::Circle {
                center: Vec2::new(5.0, 5.0),
                radius: 0.0,
            },
            SkipReason::BadRadius,
        ),
        (
            Shape::Circle {
                center: Vec2::new(5.0, 5.0),
                radius: -2.0,
            },
            SkipReason::BadRadius,
        ),
        (
            Shape::Text {
                anchor: Vec2::new(5.0, 5.0),
                text: "".into(),
                size: 10.0,
            },
            SkipReason::EmptyText,
        ),
        (
            Shape::Text {
                anchor: Vec2::new(5.0, 5.0),
                text: "x".into(),
                size: 1e12,
            },
            SkipReason::TextSize,
        ),
        (
            Shape::Polygon {
                vertices: Box::new([]),
                closed: true,
            },
            SkipReason::NoVertices,
        ),
        (
            Shape::Rectangle {
                center: Vec2::ZERO,
                size: Vec2::new(-1.0, 2.0),
                orientation: 0.0,
            },
            SkipReason::BadSize,
        ),
        (
            Shape::Line {
                start: Vec2::ZERO,
                end: Vec2::new(f64::INFINITY, 1.0),
            },
            SkipReason::NotFinite,
        ),
    ];
    for (shape, why) in cases {
        assert_eq!(
            painter.primitive(&mut ov, &c, &prim(shape.clone(), st)),
            Err(why),
            "{shape:?}"
        );
    }
    let mut bad = st;
    bad.thickness = f32::NAN;
    let line = Shape::Line {
        start: Vec2::ZERO,
        end: Vec2::new(50.0, 50.0),
    };
    assert_eq!(
        painter.primitive(&mut ov, &c, &prim(line.clone(), bad)),
        Err(SkipReason::BadThickness)
    );
    assert!(ov.is_empty());
    // Huge but finite geometry is clipped and drawn, quickly.
    let mut thick = st;
    thick.thickness = 1e30;
    painter.primitive(&mut ov, &c, &prim(line, thick)).unwrap();
    assert_eq!(ov.pixel(0, 99), [255; 4]);
    let huge = Shape::Polygon {
        vertices: vec![Vec2::new(-1e9, 50.0), Vec2::new(1e9, 50.0), Vec2::new(0.0, 1e12)].into(),
        closed: true,
    };
    ov.clear();
    painter.primitive(&mut ov, &c, &prim(huge, st)).unwrap();
    assert_eq!(ov.pixel(50, 50)[3], 255);
    // Absurd magnitudes: whatever the projection makes of them, no panic.
    let absurd = Shape::Polygon {
        vertices: vec![
            Vec2::new(-1e200, 50.0),
            Vec2::new(1e200, 50.0),
            Vec2::new(0.0, 1e250),
        ]
        .into(),
        closed: true,
    };
    painter.primitive(&mut ov, &c, &prim(absurd, st)).unwrap();
}

#[test]
fn filled_rectangle_with_outline() {
    let mut ov = Overlay::new(100, 100);
    let mut painter = Painter::new(100, 100);
    let style = Style {
        color: Rgba::from_rgb(0x00ff00),
        fill: Some(Rgba::from_rgba8(0, 0, 255, 128)),
        thickness: 2.0,
        unit: ThicknessUnit::Pixels,
    };
    let r = Shape::Rectangle {
        center: Vec2::new(50.0, 50.0),
        size: Vec2::new(40.0, 20.0),
        orientation: 0.0,
    };
    painter.primitive(&mut ov, &identity(), &prim(r, style)).unwrap();
    assert_eq!(ov.pixel(50, 50), [0, 0, 128, 128]);
    assert_eq!(ov.pixel(30, 50), [0, 255, 0, 255]);
    assert_eq!(ov.pixel(50, 40), [0, 255, 0, 255]);
    assert_eq!(ov.pixel(50, 35), [0, 0, 0, 0]);
}

#[test]
fn sectors_fill_their_ring_part_and_arcs_are_curves() {
    let mut ov = Overlay::new(100, 100);
    let mut painter = Painter::new(100, 100);
    let style = Style {
        color: Rgba::TRANSPARENT,
        fill: Some(Rgba::from_rgb(0xff0000)),
        thickness: 0.0,
        unit: ThicknessUnit::Pixels,
    };
    // The upper right quarter (y grows downwards in the image) of the
    // ring between radii 20 and 40 around (50, 50).
    let quarter = Shape::Sector {
        center: Vec2::new(50.0, 50.0),
        inner: 20.0,
        outer: 40.0,
        start: 0.0,
        sweep: std::f64::consts::FRAC_PI_2,
    };
    painter
        .primitive(&mut ov, &identity(), &prim(quarter, style))
        .unwrap();
    let inside = |ov: &Overlay, x: usize, y: usize| ov.pixel(x, y)[3] == 255;
    let outside = |ov: &Overlay, x: usize, y: usize| ov.pixel(x, y)[3] == 0;
    assert!(inside(&ov, 71, 71) && inside(&ov, 50 + 35, 52) && inside(&ov, 52, 50 + 35));
    assert!(outside(&ov, 55, 55), "the hole stays empty");
    assert!(
        outside(&ov, 29, 71) && outside(&ov, 71, 29),
        "other quarters stay empty"
    );
    // A whole ring keeps its hole; an arc draws only its curve.
    ov.clear();
    let ring = Shape::Sector {
        center: Vec2::new(50.0, 50.0),
        inner: 20.0,
        outer: 40.0,
        start: 1.0,
        sweep: -7.0,
    };
    painter
        .primitive(&mut ov, &identity(), &prim(ring, style))
        .unwrap();
    assert!(inside(&ov, 20, 50) && inside(&ov, 80, 50) && inside(&ov, 50, 20) && outside(&ov, 50, 50));
    ov.clear();
    let arc = Shape::Sector {
        center: Vec2::new(50.0, 50.0),
        inner: 30.0,
        outer: 30.0,
        start: 0.0,
        sweep: std::f64::consts::PI,
    };
    let mut stroke = Style::color(Rgba::WHITE);
    stroke.fill = Some(Rgba::WHITE);
    painter
        .primitive(&mut ov, &identity(), &prim(arc, stroke))
        .unwrap();
    assert!(inside(&ov, 80, 50) && inside(&ov, 20, 50) && inside(&ov, 50, 80));
    assert!(
        outside(&ov, 50, 20) && outside(&ov, 50, 60),
        "an arc has no inside"
    );
    let bad = Shape::Sector {
        center: Vec2::ZERO,
        inner: 3.0,
        outer: 2.0,
        start: 0.0,
        sweep: 1.0,
    };
    assert_eq!(
        painter.primitive(&mut ov, &identity(), &prim(bad, stroke)),
        Err(SkipReason::BadRadius)
    );
}

#[test]
fn tint_marks_only_floor() {
    let mut frame = RgbImage::zeros((1, 2, 3));
    let mut mask = MaskImage::zeros((1, 2));
    mask[[0, 0]] = FLOOR;
    tint_floor(&mut frame, &FloorMask::from_image(mask)).unwrap();
    assert!(frame[[0, 0, 0]] > 60 && frame[[0, 0, 1]] < frame[[0, 0, 0]]);
    assert_eq!(frame[[0, 1, 0]], 0);
}

#[test]
fn div255_is_exact_rounding() {
    for v in 0..=255 * 255u32 {
        assert_eq!(div255(v), (v as f64 / 255.0).round() as u32, "{v}");
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn num() -> impl Strategy<Value = f64> {
        prop_oneof![
            6 => -5000.0..5000.0f64,
            1 => Just(0.0),
            1 => Just(f64::NAN),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(1e300),
            1 => -1e15..1e15f64,
        ]
    }

    fn point() -> impl Strategy<Value = Vec2> {
        (num(), num()).prop_map(|(x, y)| Vec2::new(x, y))
    }

    fn shape() -> impl Strategy<Value = Shape> {
        prop_oneof![
            (point(), num()).prop_map(|(center, radius)| Shape::Circle { center, radius }),
            (point(), point()).prop_map(|(start, end)| Shape::Line { start, end }),
            (point(), point(), num()).prop_map(|(center, size, orientation)| Shape::Rectangle {
                center,
                size,
                orientation
            }),
            (proptest::collection::vec(point(), 0..12), any::<bool>()).prop_map(|(v, closed)| {
                Shape::Polygon {
                    vertices: v.into(),
                    closed,
                }
            }),
            (point(), "[a-z θ→\n]{0,12}", num()).prop_map(|(anchor, t, size)| Shape::Text {
                anchor,
                text: t.into(),
                size: size / 50.0,
            }),
            (point(), any::<bool>(), num()).prop_map(|(position, dot, size)| Shape::Point {
                position,
                kind: if dot { MarkerKind::Dot } else { MarkerKind::Cross },
                size: size / 50.0,
            }),
            (point(), num(), num(), num(), num())
                .prop_map(|(center, inner, outer, start, sweep)| {
                    Shape::Sector {
                        center,
                        inner,
                        outer,
                        start: start / 100.0,
                        sweep: sweep / 100.0,
                    }
                })
                .boxed(),
        ]
    }

    fn style() -> impl Strategy<Value = Style> {
        (
            any::<u32>(),
            proptest::option::of(any::<u32>()),
            num(),
            any::<bool>(),
        )
            .prop_map(|(c, f, t, w)| Style {
                color: Rgba(c),
                fill: f.map(Rgba),
                thickness: (t / 100.0) as f32,
                unit: if w {
                    ThicknessUnit::World
                } else {
                    ThicknessUnit::Pixels
                },
            })
    }

    proptest! {
        /// The AVX2 builds of the pixel loops give exactly the results
        /// of the portable ones.
        #[test]
        fn simd_and_portable_loops_agree(
            px in proptest::collection::vec(any::<[u8; 4]>(), 0..70),
            cov in proptest::collection::vec(any::<u8>(), 70),
            frame in proptest::collection::vec(any::<u8>(), 210),
            mask in proptest::collection::vec(any::<u8>(), 70),
            color in any::<u32>(),
        ) {
            // Premultiplied input, as the overlay holds.
            let px: Vec<[u8; 4]> = px.into_iter().map(|p| [p[0].min(p[3]), p[1].min(p[3]), p[2].min(p[3]), p[3]]).collect();
            let n = px.len();
            for m in [None, Some(&mask[..n])] {
                let mut a = frame[..3 * n].to_vec();
                let mut b = a.clone();
                composite_row_generic(&px, &mut a, m);
                composite_row(Avx2::detect(), &px, &mut b, m);
                prop_assert_eq!(a, b);
            }
            let mut a = px.clone();
            let mut b = px.clone();
            blend_row_generic(&mut a, &cov[..n], Rgba(color));
            blend_row(&mut b, &cov[..n], Rgba(color));
            if Rgba(color).a() > 0 {
                prop_assert_eq!(&a, &b);
            }
            prop_assert!(b.iter().all(|q| q[0] <= q[3] && q[1] <= q[3] && q[2] <= q[3]));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Whatever a log holds, drawing it through a perspective camera
        /// (horizon inside the frame) neither panics nor breaks the
        /// overlay's premultiplied invariant.
        #[test]
        fn any_primitive_draws_safely(shape in shape(), style in style()) {
            let calib = Calibration::from_homography([
                [1.0, 0.0, 160.0],
                [0.0, 0.2, 60.0],
                [0.0, 0.002, 1.0],
            ]).unwrap();
            let mut ov = Overlay::new(320, 120);
            let mut painter = Painter::new(320, 120);
            let p = Primitive { shape, style, entity: EntityId(0), level: 0 };
            let _ = painter.primitive(&mut ov, &calib, &p);
            prop_assert!(ov.pixels().iter().all(|q| q[0] <= q[3] && q[1] <= q[3] && q[2] <= q[3]));
            let mut frame = RgbImage::zeros((120, 320, 3));
            prop_assert!(ov.composite(&mut frame, None).is_ok());
        }
    }
}

/// Deterministic pseudo-random bytes (xorshift) from `seed`.
fn random_bytes(mut seed: u64) -> impl FnMut() -> u8 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 56) as u8
    }
}

/// The vector blend gives the scalar blend's bytes, for every length up
/// to a few steps, over random premultiplied pixels, every coverage and
/// colours from transparent to opaque.
#[test]
fn blending_rows_in_vectors_matches_pixel_by_pixel() {
    let mut byte = random_bytes(0x2545_f491_4f6c_dd1du64);
    for case in 0..2000 {
        let n = case % 37;
        let color = match case % 5 {
            0 => Rgba::from_rgb(0xffffff),
            1 => Rgba(0xff00_00ff),
            _ => Rgba(u32::from_be_bytes([byte(), byte(), byte(), byte()])),
        };
        let dst: Vec<[u8; 4]> = (0..n)
            .map(|_| {
                let a = byte();
                [byte().min(a), byte().min(a), byte().min(a), a]
            })
            .collect();
        let cov: Vec<u8> = (0..n).map(|i| if i % 4 == 0 { 255 } else { byte() }).collect();
        let mut slow = dst.clone();
        blend_row_generic(&mut slow, &cov, color);
        let mut fast = dst.clone();
        blend_row_simd(&mut fast, &cov, color);
        assert_eq!(fast, slow, "case {case}: {n} pixels, colour {color:?}");
    }
}

/// The vector compositing gives the scalar code's bytes, through a mask
/// and without one, for every length up to a few steps, over random
/// overlay pixels (premultiplied or not), frames and masks.
#[test]
fn compositing_rows_in_vectors_matches_pixel_by_pixel() {
    let mut byte = random_bytes(0x853c_49e6_748f_ea9bu64);
    let cpu = Avx2::detect();
    for case in 0..3000 {
        let n = case % 43;
        let src: Vec<[u8; 4]> = (0..n)
            .map(|i| match i % 5 {
                0 => [0; 4],
                1 => [byte(), byte(), byte(), 255],
                _ => [byte(), byte(), byte(), byte()],
            })
            .collect();
        let dst: Vec<u8> = (0..3 * n).map(|_| byte()).collect();
        let mask: Vec<u8> = (0..n)
            .map(|i| match i % 4 {
                0 => 0,
                1 => 255,
                _ => byte(),
            })
            .collect();
        for m in [None, Some(&mask[..])] {
            let mut slow = dst.clone();
            composite_row_generic(&src, &mut slow, m);
            let mut fast = dst.clone();
            composite_row(cpu, &src, &mut fast, m);
            assert_eq!(fast, slow, "case {case}: {n} pixels, mask {}", m.is_some());
        }
    }
}
