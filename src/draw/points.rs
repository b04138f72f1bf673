//! Drawing many points at once ([`Raised::Points`](crate::log::Raised::Points): a point cloud, a laser
//! scan): each point projected and drawn as a square of whole pixels, as
//! RViz's `Points` style draws them, written straight into the overlay
//! (an opaque colour replaces the pixels; a translucent one is blended
//! over them) — no polygon, no coverage layer — so 100,000 points cost
//! a few milliseconds a frame (docs/PERFORMANCE.md).
//!
//! A square `size` pixels across is placed so that its centre is the
//! pixel centre (or, for an even size, the pixel corner) nearest the
//! point's picture: at most half a pixel off. What hides a point above
//! the floor is judged as for any raised shape ([`super::occlude`]): from
//! depth samples, here one per 8 × 8 block of the picture, the nearest
//! point's, so that their number stays bounded whatever the cloud.

use super::occlude::DepthSample;
use super::{Overlay, Painter, SkipReason};
use crate::calib::Calibration;
use crate::geom::Vec2;
use crate::log::Rgba;

/// The largest square drawn for a point, in pixels.
pub const MAX_POINT_PX: f64 = 64.0;

/// Side of the blocks depth samples are kept one per, in pixels.
const SAMPLE_BLOCK: usize = 8;

impl Painter {
    /// The size of a point of a set whose size is 0: 2 px at 720p, 3 px
    /// at 1080p.
    pub fn default_point(&self) -> f64 {
        self.default_width().round().max(2.0)
    }

    /// Draws a set of points through `calib` — in space through a full
    /// camera, or on the floor (their heights dropped) when `flat` —
    /// each in its colour of `colors` or `color` when there are none.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn points(
        &mut self,
        ov: &mut Overlay,
        calib: &Calibration,
        points: &[[f32; 3]],
        colors: &[Rgba],
        color: Rgba,
        size: f64,
        flat: bool,
    ) -> Result<(), SkipReason> {
        if !colors.is_empty() && colors.len() != points.len() {
            return Err(SkipReason::BadSize);
        }
        if !size.is_finite() || size < 0.0 {
            return Err(SkipReason::BadSize);
        }
        let side = if size == 0.0 { self.default_point() } else { size };
        let side = side.clamp(1.0, MAX_POINT_PX).round() as i64;
        let (w, h) = (ov.width as i64, ov.height as i64);
        // The square's first pixel from the point's picture: the nearest
        // pixel centre for an odd side, the nearest corner for an even one.
        let lead = (side - 1) as f64 / 2.0;
        let eye = if flat { None } else { calib.camera_center() };
        let blocks_w = (ov.width).div_ceil(SAMPLE_BLOCK);
        if eye.is_some() {
            let n = blocks_w * ov.height.div_ceil(SAMPLE_BLOCK);
            self.point_blocks.clear();
            self.point_blocks.resize(n, (f32::INFINITY, Vec2::ZERO));
        }
        // Points whose undistorted picture is far outside are passed over
        // before their lens distortion is worked out (most of a lidar's
        // sweep lies outside a camera's view).
        let cull = self.cull_box(calib, side as f64 + 2.0);
        for (i, q) in points.iter().enumerate() {
            let p = [f64::from(q[0]), f64::from(q[1]), f64::from(q[2])];
            let ideal = if flat {
                calib.project_undistorted(Vec2::new(p[0], p[1]))
            } else {
                calib.project3_undistorted(p)
            };
            let Some(ideal) = ideal else { continue };
            if let Some([x0, y0, x1, y1]) = cull
                && !(ideal.x >= x0 && ideal.x <= x1 && ideal.y >= y0 && ideal.y <= y1)
            {
                continue;
            }
            let Some(at) = calib.distort_pixel(ideal) else {
                continue;
            };
            let x0 = (at.x - lead).round();
            let y0 = (at.y - lead).round();
            if !(x0 > -(side as f64) && y0 > -(side as f64) && x0 < w as f64 && y0 < h as f64) {
                continue;
            }
            let (x0, y0) = (x0 as i64, y0 as i64);
            let (xa, xb) = (x0.max(0) as usize, (x0 + side).min(w) as usize);
            let (ya, yb) = (y0.max(0) as usize, (y0 + side).min(h) as usize);
            let c = colors.get(i).copied().unwrap_or(color);
            square(ov, xa, xb, ya, yb, c);
            if let Some(eye) = eye {
                let (bx, by) = (
                    at.x.max(0.0) as usize / SAMPLE_BLOCK,
                    at.y.max(0.0) as usize / SAMPLE_BLOCK,
                );
                if let Some(b) = self.point_blocks.get_mut(by * blocks_w + bx.min(blocks_w - 1)) {
                    // Squared here, the root taken once a block.
                    let (dx, dy) = (p[0] - eye[0], p[1] - eye[1]);
                    let d = (dx * dx + dy * dy) as f32;
                    if d < b.0 {
                        *b = (d, at);
                    }
                }
            }
        }
        if eye.is_some() {
            let samples = &mut self.depth_samples;
            samples.extend(
                self.point_blocks
                    .iter()
                    .filter(|b| b.0.is_finite())
                    .map(|&(d, at)| DepthSample {
                        at,
                        distance: f64::from(d).sqrt(),
                    }),
            );
        }
        Ok(())
    }
}

impl Painter {
    /// The box of undistorted pixels whose picture through the lens can
    /// fall within the picture grown by `margin`: the box around the
    /// undistorted picture's border, sampled, grown by 2 px. `None` when a
    /// part of the border lies beyond what the lens model maps (nothing is
    /// passed over then). Kept while the calibration and picture stay.
    fn cull_box(&mut self, calib: &Calibration, margin: f64) -> Option<[f64; 4]> {
        let (w, h) = (self.cov.width(), self.cov.height());
        if let Some((c, size, m, b)) = &self.point_cull
            && *size == (w, h)
            && *m == margin
            && c == calib
        {
            return *b;
        }
        let (wf, hf) = (w as f64 - 1.0 + 2.0 * margin, h as f64 - 1.0 + 2.0 * margin);
        let mut b = Some([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY]);
        const STEPS: usize = 64;
        for k in 0..=STEPS {
            let s = k as f64 / STEPS as f64;
            for (x, y) in [(s * wf, 0.0), (s * wf, hf), (0.0, s * hf), (wf, s * hf)] {
                let border = Vec2::new(x - margin, y - margin);
                match (b.as_mut(), calib.undistort_pixel(border)) {
                    (Some(b), Some(u)) if u.is_finite() => {
                        *b = [b[0].min(u.x), b[1].min(u.y), b[2].max(u.x), b[3].max(u.y)];
                    }
                    _ => b = None,
                }
            }
        }
        let b = b.map(|b| [b[0] - 2.0, b[1] - 2.0, b[2] + 2.0, b[3] + 2.0]);
        self.point_cull = Some((calib.clone(), (w, h), margin, b));
        b
    }
}

/// Paints pixels `xa..xb` of rows `ya..yb` with `c` ("over"; an opaque
/// colour replaces them).
#[inline]
fn square(ov: &mut Overlay, xa: usize, xb: usize, ya: usize, yb: usize, c: Rgba) {
    if xa >= xb || c.a() == 0 {
        return;
    }
    let w = ov.width;
    let a = u32::from(c.a());
    // Premultiplied.
    let src = [
        super::div255(u32::from(c.r()) * a) as u8,
        super::div255(u32::from(c.g()) * a) as u8,
        super::div255(u32::from(c.b()) * a) as u8,
        c.a(),
    ];
    for y in ya..yb {
        let row = &mut ov.px[y * w + xa..y * w + xb];
        if a == 255 {
            row.fill(src);
        } else {
            let inv = 255 - a;
            for d in row {
                for k in 0..4 {
                    d[k] = (u32::from(src[k]) + super::div255(u32::from(d[k]) * inv)) as u8;
                }
            }
        }
        ov.dirty.add(y, xa, xb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::camera::look_at;

    fn camera() -> Calibration {
        let k = [[300.0, 0.0, 159.5], [0.0, 300.0, 119.5], [0.0, 0.0, 1.0]];
        let (r, t) = look_at([0.0, -4.0, 3.0], [0.0, 0.0, 0.0]).unwrap();
        Calibration::from_camera(&k, &[-0.1, 0.02], &r, t)
            .unwrap()
            .with_image_size(320, 240)
    }

    /// The centre of the pixels painted in a window around `at`.
    fn centre(ov: &Overlay, at: Vec2) -> Vec2 {
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        for y in (at.y as usize).saturating_sub(6)..(at.y as usize + 7).min(ov.height) {
            for x in (at.x as usize).saturating_sub(6)..(at.x as usize + 7).min(ov.width) {
                if ov.pixel(x, y)[3] > 0 {
                    sx += x as f64;
                    sy += y as f64;
                    n += 1.0;
                }
            }
        }
        Vec2::new(sx / n, sy / n)
    }

    #[test]
    fn squares_are_centred_on_the_points_picture_and_sampled_for_depth() {
        let calib = camera();
        let pts: Vec<[f32; 3]> = vec![
            [0.0, 0.0, 0.0],
            [0.7, 0.3, 0.5],
            [-1.2, 1.1, 1.5],
            [0.0, 0.0, -50.0],
        ];
        for side in [2.0, 3.0, 4.0, 5.0] {
            let mut painter = Painter::new(320, 240);
            let mut ov = Overlay::new(320, 240);
            painter
                .points(&mut ov, &calib, &pts, &[], Rgba::from_rgb(0xff0000), side, false)
                .unwrap();
            for p in &pts[..3] {
                let at = calib.project3(p.map(f64::from)).unwrap();
                let c = centre(&ov, at);
                assert!(
                    (c - at).length() <= 0.5 * 2f64.sqrt() + 1e-9,
                    "side {side}: {c:?} for {at:?}"
                );
            }
            // One sample per block with a point: the three in the picture.
            assert_eq!(painter.depth_samples.len(), 3, "side {side}");
            let drawn = ov.pixels().iter().filter(|p| p[3] > 0).count();
            let s = side as usize;
            assert_eq!(drawn, 3 * s * s, "side {side}");
        }
    }

    /// Passing over points far outside the picture before the lens's
    /// distortion changes nothing drawn, whatever the lens: the same
    /// pixels as each point projected whole, through a strong barrel lens
    /// (points outside in the ideal picture that the lens brings in) and
    /// a pincushion one.
    #[test]
    fn points_passed_over_are_none_that_would_show() {
        for d in [[-0.35, 0.1], [0.2, 0.05]] {
            let k = [[200.0, 0.0, 159.5], [0.0, 200.0, 119.5], [0.0, 0.0, 1.0]];
            let (r, t) = look_at([0.0, -4.0, 3.0], [0.0, 0.0, 0.0]).unwrap();
            let calib = Calibration::from_camera(&k, &d, &r, t)
                .unwrap()
                .with_image_size(320, 240);
            let pts: Vec<[f32; 3]> = (0..120)
                .flat_map(|i| (0..120).map(move |j| [i as f32 * 0.1 - 6.0, j as f32 * 0.1 - 5.0, 0.3]))
                .collect();
            let mut painter = Painter::new(320, 240);
            let mut ov = Overlay::new(320, 240);
            painter
                .points(&mut ov, &calib, &pts, &[], Rgba::WHITE, 3.0, false)
                .unwrap();
            let mut want = vec![false; 320 * 240];
            for p in &pts {
                if let Some(at) = calib.project3(p.map(f64::from)) {
                    let (x0, y0) = ((at.x - 1.0).round() as i64, (at.y - 1.0).round() as i64);
                    for y in y0.max(0)..(y0 + 3).min(240) {
                        for x in x0.max(0)..(x0 + 3).min(320) {
                            want[y as usize * 320 + x as usize] = true;
                        }
                    }
                }
            }
            let got: Vec<bool> = ov.pixels().iter().map(|p| p[3] > 0).collect();
            assert_eq!(got, want, "lens {d:?}");
            assert!(
                painter.point_cull.as_ref().is_some_and(|c| c.3.is_some()),
                "lens {d:?}: nothing passed over"
            );
        }
    }

    #[test]
    fn colours_one_each_translucent_blend_and_bad_input_is_refused() {
        let calib = camera();
        let mut painter = Painter::new(320, 240);
        let mut ov = Overlay::new(320, 240);
        let pts = [[0.0f32, 0.0, 0.0], [0.0, 0.0, 0.0]];
        let half = Rgba::from_rgb(0x0000ff).with_alpha(128);
        painter
            .points(
                &mut ov,
                &calib,
                &pts,
                &[Rgba::from_rgb(0xff0000), half],
                Rgba::WHITE,
                1.0,
                false,
            )
            .unwrap();
        let at = calib.project3([0.0; 3]).unwrap();
        let px = ov.pixel(at.x.round() as usize, at.y.round() as usize);
        // Red, then half blue over it (premultiplied).
        assert_eq!(px, [127, 0, 128, 255]);
        assert_eq!(
            painter.points(&mut ov, &calib, &pts, &[Rgba::WHITE], Rgba::WHITE, 1.0, false),
            Err(SkipReason::BadSize)
        );
        assert_eq!(
            painter.points(&mut ov, &calib, &pts, &[], Rgba::WHITE, f64::NAN, false),
            Err(SkipReason::BadSize)
        );
        // NaN and far away points are passed over.
        let odd = [[f32::NAN, 0.0, 0.0], [1e30, 1e30, 0.0], [f32::INFINITY, 0.0, 1.0]];
        painter
            .points(&mut ov, &calib, &odd, &[], Rgba::WHITE, 3.0, false)
            .unwrap();
    }
}
