//! A real frame seen through a stronger lens: the frame resampled through
//! a barrel distortion (and to a larger size), its labels moved the same
//! way and its truth fitted to them again. The turf, the paint and the
//! players stay real; only the lens is made, as strong as the stadium and
//! action cameras that bend lines by hundreds of pixels.

use crate::geom::Vec2;
use crate::image::RgbImage;

use super::truth::{Label, RealFrame, fit_labels};

/// A barrel distortion from a picture `from` pixels to one `to` pixels:
/// an output point at normalised radius ρ (half-diagonals from the centre)
/// shows the input at `s·ρ·(1 + k·ρ²)`, `s = 1/(1 + k)` so the corners
/// meet.
#[derive(Clone, Copy, Debug)]
pub struct Barrel {
    pub k: f64,
    pub from: [u32; 2],
    pub to: [u32; 2],
}

impl Barrel {
    fn half_diag(size: [u32; 2]) -> f64 {
        0.5 * f64::from(size[0]).hypot(f64::from(size[1]))
    }

    fn centre(size: [u32; 2]) -> Vec2 {
        Vec2::new(0.5 * f64::from(size[0]), 0.5 * f64::from(size[1]))
    }

    /// The input pixel an output pixel shows.
    pub fn source_of(&self, q: Vec2) -> Vec2 {
        let u = (q - Self::centre(self.to)) * (1.0 / Self::half_diag(self.to));
        let r2 = u.dot(u);
        let s = 1.0 / (1.0 + self.k);
        Self::centre(self.from) + u * (Self::half_diag(self.from) * s * (1.0 + self.k * r2))
    }

    /// The output pixel showing an input pixel (Newton on the radius).
    pub fn image_of(&self, p: Vec2) -> Vec2 {
        let v = (p - Self::centre(self.from)) * (1.0 / Self::half_diag(self.from));
        let target = v.length() * (1.0 + self.k);
        let mut rho = target;
        for _ in 0..30 {
            let f = rho * (1.0 + self.k * rho * rho) - target;
            let df = 1.0 + 3.0 * self.k * rho * rho;
            rho -= f / df;
        }
        let dir = if v.length() > 0.0 {
            v * (1.0 / v.length())
        } else {
            Vec2::ZERO
        };
        Self::centre(self.to) + dir * (rho * Self::half_diag(self.to))
    }

    /// `img` resampled through the lens (bilinear).
    pub fn warp(&self, img: &RgbImage) -> RgbImage {
        let (h, w, _) = img.dim();
        let [tw, th] = self.to.map(|v| v as usize);
        let mut out = RgbImage::zeros((th, tw, 3));
        for y in 0..th {
            for x in 0..tw {
                let p = self.source_of(Vec2::new(x as f64 + 0.5, y as f64 + 0.5)) - Vec2::new(0.5, 0.5);
                let (x0, y0) = (p.x.floor(), p.y.floor());
                if x0 < 0.0 || y0 < 0.0 || x0 + 1.0 >= w as f64 || y0 + 1.0 >= h as f64 {
                    continue;
                }
                let (fx, fy) = (p.x - x0, p.y - y0);
                let (x0, y0) = (x0 as usize, y0 as usize);
                for c in 0..3 {
                    let at = |yy: usize, xx: usize| f64::from(img[(yy, xx, c)]);
                    let top = at(y0, x0) * (1.0 - fx) + at(y0, x0 + 1) * fx;
                    let bottom = at(y0 + 1, x0) * (1.0 - fx) + at(y0 + 1, x0 + 1) * fx;
                    out[(y, x, c)] = (top * (1.0 - fy) + bottom * fy).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
        out
    }
}

/// `frame` (with point-on-line labels) through `lens`: the warped picture
/// and the frame whose truth is fitted to the moved labels.
pub fn through(frame: &RealFrame, img: &RgbImage, lens: Barrel) -> Result<(RealFrame, RgbImage), String> {
    if frame.labels.is_empty() {
        return Err(format!("{}: no labels to move", frame.name));
    }
    let labels: Vec<Label> = frame
        .labels
        .iter()
        .map(|l| Label {
            pixel: lens.image_of(l.pixel),
            ..l.clone()
        })
        .collect();
    let truth = fit_labels(&labels, lens.to)?;
    let warped = RealFrame {
        name: format!(
            "{} through a k = {} lens at {}×{}",
            frame.name, lens.k, lens.to[0], lens.to[1]
        ),
        image: frame.image.clone(),
        size: lens.to,
        truth,
        preset: frame.preset.clone(),
        labels,
    };
    Ok((warped, lens.warp(img)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lens_inverts_and_keeps_the_corners() {
        let b = Barrel {
            k: 0.3,
            from: [1920, 1080],
            to: [3072, 1728],
        };
        for p in [
            Vec2::new(10.0, 20.0),
            Vec2::new(960.0, 540.0),
            Vec2::new(1900.0, 1000.0),
        ] {
            let q = b.image_of(p);
            assert!((b.source_of(q) - p).length() < 1e-6, "{p:?}");
        }
        assert!((b.source_of(Vec2::ZERO) - Vec2::ZERO).length() < 1e-9);
        // Barrel: the middle is magnified.
        let mid = b.image_of(Vec2::new(970.0, 540.0)) - b.image_of(Vec2::new(960.0, 540.0));
        assert!(mid.x > 16.0 * 1.2, "{mid:?}");
    }
}
