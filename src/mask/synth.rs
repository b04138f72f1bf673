//! Synthetic overhead frames of a robot-soccer field with the floor known
//! exactly: a carpet under uneven light with sensor noise, painted white
//! lines, dark robots with coloured markers on top, an orange ball, and an
//! off-field border (floor of another material and a white wall).
//!
//! Used by the mask tests (does a masker find this floor?) and benchmarks.
//! Deterministic for a given seed.

use crate::image::{FLOOR, MaskImage, RgbImage};

/// What to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthOptions {
    /// Frame width in pixels.
    pub width: usize,
    /// Frame height in pixels.
    pub height: usize,
    /// Random seed (robot positions, noise).
    pub seed: u64,
    /// Carpet colour under full light (RGB).
    pub carpet: [u8; 3],
    /// Light falls from `1 + gradient/2` to `1 − gradient` across the frame.
    pub gradient: f32,
    /// Per-channel noise amplitude (uniform ±noise).
    pub noise: u8,
    /// Number of robots.
    pub robots: usize,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            width: 960,
            height: 540,
            seed: 1,
            carpet: [40, 140, 40],
            gradient: 0.5,
            noise: 12,
            robots: 10,
        }
    }
}

/// A generated frame and its truth.
#[derive(Debug, Clone)]
pub struct SynthFrame {
    /// The picture.
    pub frame: RgbImage,
    /// 255 where the floor (carpet or painted line) is visible.
    pub floor: MaskImage,
    /// 255 on painted lines (a subset of `floor`).
    pub lines: MaskImage,
    /// 255 on robots and the ball.
    pub objects: MaskImage,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// What covers a pixel, from the top down.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Border,
    Wall,
    Carpet,
    Line,
    Object([u8; 3]),
}

/// Generates a frame.
pub fn generate(opts: &SynthOptions) -> SynthFrame {
    let (w, h) = (opts.width, opts.height);
    let mut rng = Rng(opts.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let (wf, hf) = (w as f32, h as f32);
    let unit = hf / 540.0; // sizes below are for a 540-row frame

    // Carpet: the frame minus a border band; a white wall above it.
    let (cx0, cx1) = (0.05 * wf, 0.96 * wf);
    let (cy0, cy1) = (0.09 * hf, 0.97 * hf);
    let wall = (0.03 * hf, 0.07 * hf);
    // Field lines inside the carpet.
    let (fx0, fx1, fy0, fy1) = (0.1 * wf, 0.91 * wf, 0.15 * hf, 0.91 * hf);
    let lw = (2.5 * unit).max(2.0);
    let (mx, my) = ((fx0 + fx1) / 2.0, (fy0 + fy1) / 2.0);
    let circle_r = 0.16 * hf;

    // Robots: discs with a blue or yellow centre and four small markers.
    let robot_r = 15.0 * unit;
    let markers: [[u8; 3]; 4] = [[235, 60, 170], [60, 200, 60], [235, 60, 170], [60, 200, 60]];
    let robots: Vec<(f32, f32, [u8; 3])> = (0..opts.robots)
        .map(|i| {
            let centre = if i % 2 == 0 { [40, 80, 230] } else { [240, 220, 40] };
            (rng.range(fx0, fx1), rng.range(fy0, fy1), centre)
        })
        .collect();
    let ball = (rng.range(fx0, fx1), rng.range(fy0, fy1), 4.0 * unit);

    let kind_at = |x: f32, y: f32| -> Kind {
        if (x - ball.0).hypot(y - ball.1) <= ball.2 {
            return Kind::Object([255, 120, 10]);
        }
        for &(rx, ry, centre) in &robots {
            let (dx, dy) = (x - rx, y - ry);
            let d = dx.hypot(dy);
            if d <= robot_r {
                if d <= robot_r * 0.3 {
                    return Kind::Object(centre);
                }
                for (k, &c) in markers.iter().enumerate() {
                    let a = std::f32::consts::FRAC_PI_4 + k as f32 * std::f32::consts::FRAC_PI_2;
                    let (px, py) = (rx + 0.62 * robot_r * a.cos(), ry + 0.62 * robot_r * a.sin());
                    if (x - px).hypot(y - py) <= robot_r * 0.2 {
                        return Kind::Object(c);
                    }
                }
                return Kind::Object([28, 28, 30]);
            }
        }
        if y >= wall.0 && y < wall.1 && x >= cx0 && x < cx1 {
            return Kind::Wall;
        }
        if x < cx0 || x >= cx1 || y < cy0 || y >= cy1 {
            return Kind::Border;
        }
        let half = lw / 2.0;
        let on_rect =
            ((x - fx0).abs() <= half || (x - fx1).abs() <= half) && y >= fy0 - half && y <= fy1 + half
                || ((y - fy0).abs() <= half || (y - fy1).abs() <= half) && x >= fx0 - half && x <= fx1 + half;
        let on_mid = (x - mx).abs() <= half && y >= fy0 && y <= fy1;
        let on_circle = ((x - mx).hypot(y - my) - circle_r).abs() <= half;
        if on_rect || on_mid || on_circle {
            Kind::Line
        } else {
            Kind::Carpet
        }
    };

    let mut frame = RgbImage::zeros((h, w, 3));
    let mut floor = MaskImage::zeros((h, w));
    let mut lines = MaskImage::zeros((h, w));
    let mut objects = MaskImage::zeros((h, w));
    for y in 0..h {
        for x in 0..w {
            let (xf, yf) = (x as f32 + 0.5, y as f32 + 0.5);
            let kind = kind_at(xf, yf);
            // Light: brightest top-left, darkest bottom-right.
            let t = 0.6 * xf / wf + 0.4 * yf / hf;
            let light = 1.0 + opts.gradient * (0.5 - 1.5 * t);
            let base = match kind {
                Kind::Border => [150, 118, 88],
                Kind::Wall => [225, 225, 215],
                Kind::Carpet => opts.carpet,
                Kind::Line => [235, 235, 235],
                Kind::Object(c) => c,
            };
            for c in 0..3 {
                let n = if opts.noise > 0 {
                    (rng.next() % (2 * opts.noise as u64 + 1)) as f32 - opts.noise as f32
                } else {
                    0.0
                };
                frame[[y, x, c]] = (base[c] as f32 * light + n).round().clamp(0.0, 255.0) as u8;
            }
            match kind {
                Kind::Carpet => floor[[y, x]] = FLOOR,
                Kind::Line => {
                    floor[[y, x]] = FLOOR;
                    lines[[y, x]] = FLOOR;
                }
                Kind::Object(_) => objects[[y, x]] = FLOOR,
                Kind::Border | Kind::Wall => {}
            }
        }
    }
    SynthFrame {
        frame,
        floor,
        lines,
        objects,
    }
}

/// Intersection over union of the set pixels of two masks of one size.
pub fn iou(a: &MaskImage, b: &MaskImage) -> f64 {
    let (mut inter, mut union) = (0usize, 0usize);
    for (&x, &y) in a.iter().zip(b.iter()) {
        inter += (x != 0 && y != 0) as usize;
        union += (x != 0 || y != 0) as usize;
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

/// A `width × height` picture that is turf everywhere, of `colour` with
/// uniform noise of ±`noise` per channel, with dark square robots on a
/// regular grid: a camera close over a pitch, as a grey artificial turf
/// (`colour` of little chroma) is seen. Deterministic.
pub fn turf(width: usize, height: usize, colour: [u8; 3], noise: u8) -> RgbImage {
    let mut seed = 7u32;
    let spread = 2 * u32::from(noise) + 1;
    RgbImage::from_shape_fn((height, width, 3), |(y, x, c)| {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let robot = (x / 40) % 2 == 1 && (y / 40) % 2 == 1 && x % 40 < 16 && y % 40 < 16;
        if robot {
            40
        } else {
            let n = ((seed >> 24) % spread) as i32 - i32::from(noise);
            (i32::from(colour[c]) + n).clamp(0, 255) as u8
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_is_consistent_and_deterministic() {
        let o = SynthOptions {
            width: 320,
            height: 180,
            ..SynthOptions::default()
        };
        let a = generate(&o);
        let b = generate(&o);
        assert_eq!(a.frame, b.frame);
        let n = |m: &MaskImage| m.iter().filter(|&&v| v != 0).count();
        let total = 320 * 180;
        assert!(n(&a.floor) > total / 2 && n(&a.floor) < total * 95 / 100);
        assert!(n(&a.lines) > 0 && n(&a.objects) > 0);
        for ((&f, &l), &o) in a.floor.iter().zip(a.lines.iter()).zip(a.objects.iter()) {
            assert!(l == 0 || f != 0, "lines are floor");
            assert!(o == 0 || f == 0, "objects are not floor");
        }
        assert_eq!(iou(&a.floor, &a.floor), 1.0);
        assert!(iou(&a.floor, &a.objects) == 0.0);
    }
}
