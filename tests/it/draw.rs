//! Golden images of the rasterizer (`underlay::draw`), one small picture
//! per operation: strokes and joins, widths in world units through a
//! perspective camera, fills with alpha, text, markers and annular
//! sectors. Each is drawn into an overlay and composited onto a grey
//! checkerboard (so translucency shows), then compared with
//! `tests/data/golden/draw-*.png` (`UNDERLAY_BLESS=1` rewrites them; look
//! at every one you bless).

use underlay::calib::Calibration;
use underlay::calib::synthetic::pitched_camera;
use underlay::draw::{Overlay, Painter};
use underlay::geom::mat3::IDENTITY;
use underlay::image::RgbImage;
use underlay::log::{EntityId, MarkerKind, Primitive, Rgba, Shape, Style, ThicknessUnit, Vec2};

use crate::util::check_golden;

const W: usize = 160;
const H: usize = 120;

const RED: Rgba = Rgba(0xe0_30_30_ff);
const GREEN: Rgba = Rgba(0x30_c0_40_ff);
const BLUE: Rgba = Rgba(0x30_60_f0_ff);
const YELLOW: Rgba = Rgba(0xf0_d0_20_ff);
const WHITE: Rgba = Rgba::WHITE;

fn pt(x: f64, y: f64) -> Vec2 {
    Vec2::new(x, y)
}

/// A 10-pixel checkerboard of two greys.
fn background() -> RgbImage {
    RgbImage::from_shape_fn(
        (H, W, 3),
        |(y, x, _)| if (x / 10 + y / 10) % 2 == 0 { 90 } else { 130 },
    )
}

/// Draws with `paint` into a fresh overlay and composites it (no mask).
fn picture(paint: impl FnOnce(&mut Painter, &mut Overlay)) -> RgbImage {
    let mut painter = Painter::new(W, H);
    let mut overlay = Overlay::new(W, H);
    paint(&mut painter, &mut overlay);
    let mut frame = background();
    overlay.composite(&mut frame, None).unwrap();
    frame
}

fn primitive(
    shape: Shape,
    color: Rgba,
    fill: Option<Rgba>,
    thickness: f32,
    unit: ThicknessUnit,
) -> Primitive {
    Primitive {
        shape,
        style: Style {
            color,
            fill,
            thickness,
            unit,
        },
        entity: EntityId(0),
        level: 0,
    }
}

/// Draws `p` through `calib`, which must succeed.
fn draw(painter: &mut Painter, overlay: &mut Overlay, calib: &Calibration, p: &Primitive) {
    painter
        .primitive(overlay, calib, p)
        .unwrap_or_else(|e| panic!("{:?} not drawn: {e:?}", p.shape));
}

fn pixels() -> Calibration {
    Calibration::from_homography(IDENTITY).unwrap()
}

/// Open and closed polylines: sharp and blunt round joins, round caps, a
/// translucent path crossing itself (blended once, not darker where it
/// overlaps), and widths from below a pixel (fading) to 8 px.
#[test]
fn golden_strokes_and_joins() {
    let img = picture(|p, ov| {
        let zigzag = [
            pt(10.0, 30.0),
            pt(30.0, 10.0),
            pt(40.0, 45.0),
            pt(60.0, 12.0),
            pt(75.0, 40.0),
        ];
        p.stroke(ov, &zigzag, false, 6.0, RED);
        let triangle = [pt(95.0, 45.0), pt(150.0, 40.0), pt(120.0, 8.0)];
        p.stroke(ov, &triangle, true, 3.0, GREEN);
        let loop_ = [pt(15.0, 100.0), pt(70.0, 60.0), pt(80.0, 100.0), pt(20.0, 70.0)];
        p.stroke(ov, &loop_, false, 8.0, BLUE.with_alpha(128));
        for (k, width) in [0.4, 1.0, 2.0, 4.0, 8.0].into_iter().enumerate() {
            let y = 62.0 + 12.0 * k as f64;
            p.stroke(ov, &[pt(95.0, y), pt(150.0, y + 4.0)], false, width, WHITE);
        }
    });
    check_golden("draw-strokes.png", &img);
}

/// Lines 100 mm wide on the floor seen by a pitched camera get thinner
/// with distance; beside them, lines 3 px wide stay 3 px.
#[test]
fn golden_world_unit_widths() {
    let calib = pitched_camera(W, H, 110.0, [0.0, -3000.0, 1500.0], 25.0);
    let img = picture(|p, ov| {
        let lines = [
            (-1500.0, YELLOW, 100.0, ThicknessUnit::World),
            (-500.0, YELLOW, 100.0, ThicknessUnit::World),
            (500.0, WHITE, 3.0, ThicknessUnit::Pixels),
            (1500.0, WHITE, 3.0, ThicknessUnit::Pixels),
        ];
        for (x, color, width, unit) in lines {
            let line = Shape::Line {
                start: pt(x, -1500.0),
                end: pt(x, 9000.0),
            };
            draw(p, ov, &calib, &primitive(line, color, None, width, unit));
        }
        let across = Shape::Line {
            start: pt(-2500.0, 2000.0),
            end: pt(2500.0, 2000.0),
        };
        draw(
            p,
            ov,
            &calib,
            &primitive(across, RED, None, 200.0, ThicknessUnit::World),
        );
    });
    check_golden("draw-world-widths.png", &img);
}

/// Fills with exact anti-aliased area: a self-crossing star (non-zero
/// rule: its centre is filled), translucent circles whose overlap shows
/// both colours, and an outlined rotated rectangle filled half-transparent.
#[test]
fn golden_fills_with_alpha() {
    let calib = pixels();
    let img = picture(|p, ov| {
        let star: Vec<Vec2> = (0..5)
            .map(|k| {
                let a = -std::f64::consts::FRAC_PI_2 + k as f64 * 4.0 * std::f64::consts::PI / 5.0;
                pt(40.0 + 32.0 * a.cos(), 45.0 + 32.0 * a.sin())
            })
            .collect();
        p.fill(ov, &[star], YELLOW);
        for (center, color) in [(pt(105.0, 35.0), RED), (pt(125.0, 35.0), BLUE)] {
            let circle = Shape::Circle { center, radius: 22.0 };
            draw(
                p,
                ov,
                &calib,
                &primitive(
                    circle,
                    color,
                    Some(color.with_alpha(110)),
                    0.0,
                    ThicknessUnit::Pixels,
                ),
            );
        }
        let rect = Shape::Rectangle {
            center: pt(80.0, 95.0),
            size: pt(110.0, 22.0),
            orientation: 0.15,
        };
        draw(
            p,
            ov,
            &calib,
            &primitive(
                rect,
                WHITE,
                Some(GREEN.with_alpha(140)),
                2.0,
                ThicknessUnit::Pixels,
            ),
        );
    });
    check_golden("draw-fills.png", &img);
}

/// Text at three sizes with its drop shadow, including non-ASCII glyphs
/// and a translucent colour.
#[test]
fn golden_text() {
    let img = picture(|p, ov| {
        // Every glyph but the space leaves ink.
        assert_eq!(p.text(ov, pt(6.0, 22.0), "pass 3→5", 14.0, WHITE), 7);
        p.text(ov, pt(6.0, 60.0), "θ = 0.42", 24.0, YELLOW);
        p.text(ov, pt(6.0, 100.0), "Robot 11 blocked", 11.0, RED.with_alpha(160));
    });
    check_golden("draw-text.png", &img);
}

/// The other ways of setting text off from the picture: a box behind it,
/// and the drop shadow alone.
#[test]
fn golden_text_box_and_shadow() {
    for (backdrop, name) in [
        (underlay::draw::TextBackdrop::Box, "draw-text-box.png"),
        (underlay::draw::TextBackdrop::Shadow, "draw-text-shadow.png"),
    ] {
        let img = picture(|p, ov| {
            p.backdrop = backdrop;
            p.text(ov, pt(6.0, 22.0), "pass 3→5", 14.0, WHITE);
            p.text(ov, pt(6.0, 60.0), "θ = 0.42", 24.0, YELLOW);
            p.text(ov, pt(6.0, 100.0), "two\nlines", 11.0, RED.with_alpha(160));
        });
        check_golden(name, &img);
    }
}

/// Dots and crosses at several sizes and line widths.
#[test]
fn golden_markers() {
    let img = picture(|p, ov| {
        for (k, size) in [4.0, 8.0, 14.0, 24.0].into_iter().enumerate() {
            let x = 20.0 + 38.0 * k as f64;
            p.marker(ov, pt(x, 30.0), MarkerKind::Dot, size, 2.0, GREEN);
            p.marker(ov, pt(x, 85.0), MarkerKind::Cross, size, 1.0 + k as f64, RED);
        }
    });
    check_golden("draw-markers.png", &img);
}

/// Annular sectors: a thin arc, a ring segment filled translucent, a pie
/// slice, and a full ring.
#[test]
fn golden_sectors() {
    let calib = pixels();
    let img = picture(|p, ov| {
        let sector = |center: Vec2, inner: f64, outer: f64, start: f64, sweep: f64| Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        };
        let arc = sector(pt(40.0, 40.0), 28.0, 28.0, 0.3, 2.5);
        draw(
            p,
            ov,
            &calib,
            &primitive(arc, YELLOW, None, 3.0, ThicknessUnit::Pixels),
        );
        let ring = sector(pt(115.0, 36.0), 13.0, 26.0, -0.5, 4.0);
        draw(
            p,
            ov,
            &calib,
            &primitive(
                ring,
                WHITE,
                Some(BLUE.with_alpha(150)),
                1.5,
                ThicknessUnit::Pixels,
            ),
        );
        let pie = sector(pt(40.0, 90.0), 0.0, 26.0, 0.8, 1.6);
        draw(
            p,
            ov,
            &calib,
            &primitive(pie, RED, Some(RED.with_alpha(120)), 2.0, ThicknessUnit::Pixels),
        );
        let full = sector(pt(115.0, 90.0), 12.0, 24.0, 0.0, std::f64::consts::TAU);
        draw(
            p,
            ov,
            &calib,
            &primitive(
                full,
                GREEN,
                Some(GREEN.with_alpha(90)),
                1.0,
                ThicknessUnit::Pixels,
            ),
        );
    });
    check_golden("draw-sectors.png", &img);
}
