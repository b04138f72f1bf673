//! A picture of the agreement curve (`underlay sync --plot FILE.png`):
//! agreement against offset, the offset found marked, and a caption with
//! the answer and how sure it is.

use std::path::Path;

use crate::draw::{Overlay, Painter};
use crate::geom::Vec2;
use crate::image::{ImageError, RgbImage};
use crate::log::Rgba;
use crate::video::still::save_rgb;

use super::Report;

/// Size of the picture.
const WIDTH: usize = 1200;
const HEIGHT: usize = 500;
/// Margins: left, right, top, bottom.
const MARGIN: [f64; 4] = [70.0, 30.0, 60.0, 50.0];

/// Draws `report`'s curve into an RGB picture.
pub fn render(report: &Report) -> RgbImage {
    let mut img = RgbImage::from_elem((HEIGHT, WIDTH, 3), 255);
    let mut ov = Overlay::new(WIDTH, HEIGHT);
    let mut p = Painter::new(WIDTH, HEIGHT);
    let f = &report.found;
    let (x0, x1) = (MARGIN[0], WIDTH as f64 - MARGIN[1]);
    let (y0, y1) = (MARGIN[2], HEIGHT as f64 - MARGIN[3]);
    let (lo, hi) = report.searched;
    let span = (hi - lo).max(1e-9);
    let (smin, smax) = f
        .curve
        .iter()
        .map(|c| c.1)
        .filter(|s| s.is_finite())
        .fold((0.0f64, f.score.max(0.1)), |(a, b), s| (a.min(s), b.max(s)));
    let x = |o: f64| x0 + (o - lo) / span * (x1 - x0);
    let y = |s: f64| y1 - (s - smin) / (smax - smin).max(1e-9) * (y1 - y0);
    let grey = Rgba::from_rgb(0x909090);
    let ink = Rgba::from_rgb(0x202020);
    // Axes, the zero line and ticks every "nice" step of offset.
    p.stroke(
        &mut ov,
        &[Vec2::new(x0, y0), Vec2::new(x0, y1), Vec2::new(x1, y1)],
        false,
        1.5,
        ink,
    );
    p.stroke(
        &mut ov,
        &[Vec2::new(x0, y(0.0)), Vec2::new(x1, y(0.0))],
        false,
        1.0,
        grey,
    );
    let tick = nice_step(span / 8.0);
    let mut t = (lo / tick).ceil() * tick;
    while t <= hi + 1e-9 {
        let xt = x(t);
        p.stroke(
            &mut ov,
            &[Vec2::new(xt, y1), Vec2::new(xt, y1 + 6.0)],
            false,
            1.5,
            ink,
        );
        let label = format!("{:+.*}", decimals(tick), t - f.offset);
        let w = p.measure_text(&label, 14.0).map_or(0.0, |m| m.0);
        p.text(&mut ov, Vec2::new(xt - w / 2.0, y1 + 24.0), &label, 14.0, ink);
        t += tick;
    }
    for s in [smin, 0.0, smax] {
        p.text(&mut ov, Vec2::new(8.0, y(s) + 5.0), &format!("{s:.2}"), 14.0, ink);
    }
    // The curve, broken where nothing could be compared.
    let mut run: Vec<Vec2> = Vec::new();
    let color = Rgba::from_rgb(0x1e64ff);
    for &(o, s) in &f.curve {
        if s.is_finite() {
            run.push(Vec2::new(x(o), y(s)));
        } else if !run.is_empty() {
            p.stroke(&mut ov, &run, false, 2.0, color);
            run.clear();
        }
    }
    if !run.is_empty() {
        p.stroke(&mut ov, &run, false, 2.0, color);
    }
    let mark = if f.confident {
        Rgba::from_rgb(0x00a000)
    } else {
        Rgba::from_rgb(0xd02020)
    };
    p.stroke(
        &mut ov,
        &[Vec2::new(x(f.offset), y0), Vec2::new(x(f.offset), y1)],
        false,
        1.5,
        mark,
    );
    let caption = format!(
        "{}: offset {:.4} s, agreement {:.2}, confidence {:.2}  (x: seconds from it)",
        if f.confident {
            "match"
        } else {
            "no confident match"
        },
        f.offset,
        f.score,
        f.confidence
    );
    p.text(&mut ov, Vec2::new(x0, 30.0), &caption, 18.0, ink);
    // The composite only fails on a size mismatch, which cannot happen here.
    let _ = ov.composite(&mut img, None);
    img
}

/// Writes the picture of `report` to `path` (PNG or JPEG by extension).
pub fn write(report: &Report, path: &Path) -> Result<(), ImageError> {
    save_rgb(path, &render(report))
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-6);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

/// Decimals that show a step of `step` exactly.
fn decimals(step: f64) -> usize {
    (-step.log10().floor()).clamp(0.0, 6.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(1.2), 2.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(decimals(0.5), 1);
        assert_eq!(decimals(10.0), 0);
    }
}
