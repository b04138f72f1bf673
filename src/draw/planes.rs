//! Compositing an overlay into a picture's own YUV 4:2:0 planes (issue
//! 48): no RGB picture of the frame is made and nothing is converted
//! back. Each drawn pixel's premultiplied colour is converted once, as it
//! is blended: its luma into the pixel's Y, its chroma, summed over the
//! 2×2 block, into the block's U and V, weighted by the block's coverage.
//!
//! Why that is the RGB blend converted: Y, U and V are affine in R, G, B,
//! so blending in YUV equals blending in RGB and converting, and a
//! block's chroma is the mean of its pixels' — `U' = U·(1 − ā) + mean of
//! the overlay's premultiplied U`, where ā is the block's mean coverage
//! (the picture's chroma under the block is one value, U). Only where a
//! decoded pixel lies outside the RGB cube (its RGB clips) and where the
//! two ways round differently do they differ, by a level or so. A block
//! nothing covers keeps its Y, U and V exactly.

use super::{DrawError, Overlay, TINT, TINT_ALPHA};
use crate::floor::FloorMask;
use crate::image::RgbImage;
#[cfg(test)]
use crate::log::Rgba;
use crate::video::PlanesMut;
use crate::video::yuv::Coeffs;

/// What a frame's drawings are composited onto: its RGB picture, or its
/// YUV 4:2:0 planes.
pub enum Canvas<'a, 'b> {
    Rgb(&'a mut RgbImage),
    Yuv(&'a mut PlanesMut<'b>),
}

impl Canvas<'_, '_> {
    /// `(width, height)` in pixels.
    pub fn size(&self) -> (usize, usize) {
        match self {
            Canvas::Rgb(img) => (img.dim().1, img.dim().0),
            Canvas::Yuv(p) => (p.width, p.height),
        }
    }

    /// Composites `overlay` where `mask` says floor (everywhere when `None`).
    pub fn composite(&mut self, overlay: &Overlay, mask: Option<&FloorMask>) -> Result<(), DrawError> {
        match self {
            Canvas::Rgb(img) => overlay.composite(img, mask),
            Canvas::Yuv(p) => overlay.composite_planes(p, mask),
        }
    }

    /// Tints the floor (thesis Figure 3.5).
    pub fn tint(&mut self, mask: &FloorMask) -> Result<(), DrawError> {
        match self {
            Canvas::Rgb(img) => super::tint_floor(img, mask),
            Canvas::Yuv(p) => tint_planes(p, mask),
        }
    }
}

/// The fixed-point coefficients of one colour matrix, for the kernel.
#[derive(Clone, Copy, Debug)]
struct Kernel {
    y: [i32; 3],
    u: [i32; 3],
    v: [i32; 3],
}

impl Kernel {
    fn for_space(space: i32) -> Kernel {
        let c = Coeffs::for_space(space);
        let (y, u, v) = c.rows();
        Kernel { y, u, v }
    }
}

impl Overlay {
    /// `planes = mix(planes, overlay, alpha · mask)` on a picture's YUV
    /// 4:2:0 planes (see the module docs): the overlay shows only where
    /// `mask` says floor (all of it when `mask` is `None`).
    pub fn composite_planes(
        &self,
        planes: &mut PlanesMut<'_>,
        mask: Option<&FloorMask>,
    ) -> Result<(), DrawError> {
        let (w, h) = (planes.width, planes.height);
        if (w, h) != (self.width, self.height) {
            return Err(DrawError::SizeMismatch {
                frame_w: w,
                frame_h: h,
                overlay_w: self.width,
                overlay_h: self.height,
            });
        }
        if let Some(m) = mask {
            super::check_mask_size(m, w, h)?;
        }
        if self.is_empty() || w < 2 || h < 2 {
            return Ok(());
        }
        let k = Kernel::for_space(planes.space);
        let mut m0 = vec![255u8; w];
        let mut m1 = vec![255u8; w];
        self.dirty.for_each_pair_span(|y, x0, x1| {
            let (x0, x1) = (x0 & !1, (x1 + 1).min(w) & !1);
            if y + 1 >= h || x0 >= x1 {
                return;
            }
            let n = x1 - x0;
            // A block mask is the same on both rows of its blocks.
            let same = mask.is_some_and(|m| m.blocks().is_some());
            if let Some(m) = mask {
                m.row_values(y, x0, x1, &mut m0);
                if !same {
                    m.row_values(y + 1, x0, x1, &mut m1);
                }
            }
            let src0 = &self.px[y * w + x0..y * w + x1];
            let src1 = &self.px[(y + 1) * w + x0..(y + 1) * w + x1];
            let (ys, us, vs) = (planes.y.stride, planes.u.stride, planes.v.stride);
            let (ya, yb) = planes.y.data[y * ys..].split_at_mut(ys);
            composite_pair(
                src0,
                src1,
                &m0[..n],
                if same { &m0[..n] } else { &m1[..n] },
                &mut ya[x0..x1],
                &mut yb[x0..x1],
                &mut planes.u.data[y / 2 * us + x0 / 2..][..n / 2],
                &mut planes.v.data[y / 2 * vs + x0 / 2..][..n / 2],
                &k,
            );
        });
        Ok(())
    }
}

/// Tints the floor of a picture's YUV 4:2:0 planes (thesis Figure 3.5): a
/// translucent [`TINT`] wherever `mask` says floor, as [`super::tint_floor`]
/// tints an RGB picture.
pub fn tint_planes(planes: &mut PlanesMut<'_>, mask: &FloorMask) -> Result<(), DrawError> {
    let (w, h) = (planes.width, planes.height);
    super::check_mask_size(mask, w, h)?;
    let k = Kernel::for_space(planes.space);
    let a = u32::from(TINT_ALPHA);
    let premul = |c: u8| ((u32::from(c) * a + 127) / 255) as u8;
    let px = [premul(TINT.r()), premul(TINT.g()), premul(TINT.b()), TINT_ALPHA];
    let row = vec![px; w];
    let (mut m0, mut m1) = (vec![0u8; w], vec![0u8; w]);
    let w2 = w & !1;
    for y in (0..h & !1).step_by(2) {
        mask.row_values(y, 0, w2, &mut m0);
        mask.row_values(y + 1, 0, w2, &mut m1);
        let (ys, us, vs) = (planes.y.stride, planes.u.stride, planes.v.stride);
        let (ya, yb) = planes.y.data[y * ys..].split_at_mut(ys);
        composite_pair(
            &row[..w2],
            &row[..w2],
            &m0[..w2],
            &m1[..w2],
            &mut ya[..w2],
            &mut yb[..w2],
            &mut planes.u.data[y / 2 * us..][..w2 / 2],
            &mut planes.v.data[y / 2 * vs..][..w2 / 2],
            &k,
        );
    }
    Ok(())
}

crate::simd::multiversion! {
    /// Composites two rows of premultiplied RGBA (`src0`, `src1`, each
    /// `2n` pixels from an even column) through their masks (0 = hidden,
    /// else shown) into the two Y rows and the one U and V row (`n`
    /// samples) of the blocks under them (see the module docs).
    #[allow(clippy::too_many_arguments)]
    fn composite_pair(
        src0: &[[u8; 4]],
        src1: &[[u8; 4]],
        m0: &[u8],
        m1: &[u8],
        y0: &mut [u8],
        y1: &mut [u8],
        u: &mut [u8],
        v: &mut [u8],
        k: &Kernel,
    ) {
        let n = u.len().min(v.len()).min(src0.len() / 2).min(src1.len() / 2);
        let n = n.min(m0.len() / 2).min(m1.len() / 2).min(y0.len() / 2).min(y1.len() / 2);
        let (src0, src1, m0, m1) = (&src0[..2 * n], &src1[..2 * n], &m0[..2 * n], &m1[..2 * n]);
        let (y0, y1, u, v) = (&mut y0[..2 * n], &mut y1[..2 * n], &mut u[..n], &mut v[..n]);
        for i in 0..n {
            let mut alpha = 0i32;
            let mut sum = [0i32; 3];
            for (j, (p, m)) in [(src0[2 * i], m0[2 * i]), (src0[2 * i + 1], m0[2 * i + 1])].into_iter().enumerate() {
                let (a, c) = blend_luma(p, m, &mut y0[2 * i + j], k);
                alpha += a;
                sum = [sum[0] + c[0], sum[1] + c[1], sum[2] + c[2]];
            }
            for (j, (p, m)) in [(src1[2 * i], m1[2 * i]), (src1[2 * i + 1], m1[2 * i + 1])].into_iter().enumerate() {
                let (a, c) = blend_luma(p, m, &mut y1[2 * i + j], k);
                alpha += a;
                sum = [sum[0] + c[0], sum[1] + c[1], sum[2] + c[2]];
            }
            // U' = 128 + (U − 128)·(1 − ā) + Ku·mean(c), in units of 2⁻¹⁸
            // (1/1020 ≈ 257 / 2¹⁸).
            let keep = 1020 - alpha;
            let chroma = |old: u8, kc: [i32; 3]| {
                let add = kc[0] * sum[0] + kc[1] * sum[1] + kc[2] * sum[2];
                let t = (i32::from(old) - 128) * keep * 257 + 2 * add + (1 << 17);
                ((t >> 18) + 128).clamp(0, 255) as u8
            };
            u[i] = chroma(u[i], k.u);
            v[i] = chroma(v[i], k.v);
        }
    }
}

/// Blends one premultiplied overlay pixel `p` into its luma `y` where its
/// mask byte `m` shows it; returns the alpha and colour it added (0 where
/// hidden), for its block's chroma.
#[inline(always)]
fn blend_luma(p: [u8; 4], m: u8, y: &mut u8, k: &Kernel) -> (i32, [i32; 3]) {
    // Hidden by the mask: as if nothing were drawn.
    let on = i32::from(m != 0);
    let a = i32::from(p[3]) * on;
    let c = [
        i32::from(p[0].min(p[3])) * on,
        i32::from(p[1].min(p[3])) * on,
        i32::from(p[2].min(p[3])) * on,
    ];
    // Y' = (Y·(255 − a) + 16·a) / 255 + Ky·c, in units of 2⁻¹⁶ (1/255 ≈
    // 257 / 2¹⁶: exact on the levels, see the tests).
    let t = i32::from(*y) * (255 - a) + 16 * a;
    let luma = k.y[0] * c[0] + k.y[1] * c[1] + k.y[2] * c[2];
    *y = ((t * 257 + 2 * luma + (1 << 15)) >> 16).clamp(0, 255) as u8;
    (a, c)
}

/// The premultiplied colour of `color` at coverage `cov` (0–255), as
/// an overlay stores it.
#[cfg(test)]
fn premultiplied(color: Rgba, cov: u8) -> [u8; 4] {
    let a = (u32::from(color.a()) * u32::from(cov) + 127) / 255;
    let p = |c: u8| ((u32::from(c) * a + 127) / 255) as u8;
    [p(color.r()), p(color.g()), p(color.b()), a as u8]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::raster::Coverage;
    use crate::image::MaskImage;
    use crate::video::yuv::{InvCoeffs, Plane, PlaneMut, rgb_to_yuv420, yuv420_to_rgb};

    /// Planes (tight) of a `w`×`h` picture.
    struct Owned {
        w: usize,
        h: usize,
        y: Vec<u8>,
        u: Vec<u8>,
        v: Vec<u8>,
    }

    impl Owned {
        fn textured(w: usize, h: usize, seed: usize) -> Owned {
            Owned {
                w,
                h,
                y: (0..w * h).map(|i| (16 + (i * 37 + seed) % 220) as u8).collect(),
                u: (0..w * h / 4)
                    .map(|i| (60 + (i * 11 + seed) % 140) as u8)
                    .collect(),
                v: (0..w * h / 4)
                    .map(|i| (70 + (i * 23 + seed) % 120) as u8)
                    .collect(),
            }
        }

        fn planes_mut(&mut self, space: i32) -> PlanesMut<'_> {
            PlanesMut {
                width: self.w,
                height: self.h,
                space,
                y: PlaneMut {
                    data: &mut self.y,
                    stride: self.w,
                },
                u: PlaneMut {
                    data: &mut self.u,
                    stride: self.w / 2,
                },
                v: PlaneMut {
                    data: &mut self.v,
                    stride: self.w / 2,
                },
            }
        }

        fn rgb(&self, space: i32) -> RgbImage {
            let mut out = RgbImage::zeros((self.h, self.w, 3));
            yuv420_to_rgb(
                Plane {
                    data: &self.y,
                    stride: self.w,
                },
                Plane {
                    data: &self.u,
                    stride: self.w / 2,
                },
                Plane {
                    data: &self.v,
                    stride: self.w / 2,
                },
                self.w,
                self.h,
                out.as_slice_mut().unwrap(),
                &InvCoeffs::for_space(space, false),
            );
            out
        }

        fn from_rgb(img: &RgbImage, space: i32) -> Owned {
            let (h, w, _) = img.dim();
            let mut o = Owned {
                w,
                h,
                y: vec![0; w * h],
                u: vec![0; w * h / 4],
                v: vec![0; w * h / 4],
            };
            rgb_to_yuv420(
                Plane {
                    data: img.as_slice().unwrap(),
                    stride: 3 * w,
                },
                w,
                h,
                PlaneMut {
                    data: &mut o.y,
                    stride: w,
                },
                PlaneMut {
                    data: &mut o.u,
                    stride: w / 2,
                },
                PlaneMut {
                    data: &mut o.v,
                    stride: w / 2,
                },
                &Coeffs::for_space(space),
            );
            o
        }
    }

    /// An overlay with a few translucent and opaque shapes.
    fn drawn(w: usize, h: usize) -> Overlay {
        let mut ov = Overlay::new(w, h);
        let mut cov = Coverage::new(w, h);
        let pts = |v: &[(f64, f64)]| {
            v.iter()
                .map(|&(x, y)| crate::geom::Vec2::new(x, y))
                .collect::<Vec<_>>()
        };
        cov.stroke(&pts(&[(3.0, 4.0), (50.0, 30.0), (60.0, 5.0)]), false, |_| 3.3);
        ov.blend(&mut cov, Rgba::from_rgb(0xff0000));
        cov.stroke(&pts(&[(10.0, 25.0), (40.0, 2.0)]), false, |_| 5.0);
        ov.blend(&mut cov, Rgba(0x20c0_ff80));
        cov.stroke(&pts(&[(20.0, 20.0), (21.0, 20.0)]), false, |_| 6.0);
        ov.blend(&mut cov, Rgba::from_rgb(0xffffff));
        ov
    }

    /// Nothing drawn or all hidden: every byte stays; drawn: within a
    /// level or two of blending in RGB and converting back (the way
    /// before), on pictures inside the RGB cube.
    #[test]
    fn blending_in_yuv_is_blending_in_rgb_converted() {
        let (w, h) = (64, 34);
        for space in [1, 5] {
            // A picture whose every pixel lies inside the RGB cube (luma
            // 60–180, chroma within 18 of grey): no channel clips.
            let mut base = Owned::textured(w, h, 5);
            for y in &mut base.y {
                *y = 60 + *y % 121;
            }
            for c in base.u.iter_mut().chain(base.v.iter_mut()) {
                *c = 110 + *c % 37;
            }
            let fresh = || Owned {
                w,
                h,
                y: base.y.clone(),
                u: base.u.clone(),
                v: base.v.clone(),
            };
            let ov = drawn(w, h);
            // Hidden everywhere: unchanged.
            let mut hidden = fresh();
            let none = FloorMask::from_image(MaskImage::zeros((h, w)));
            ov.composite_planes(&mut hidden.planes_mut(space), Some(&none))
                .unwrap();
            assert_eq!((&hidden.y, &hidden.u, &hidden.v), (&base.y, &base.u, &base.v));
            // Shown: against the RGB way.
            let mut got = fresh();
            ov.composite_planes(&mut got.planes_mut(space), None).unwrap();
            let mut want_rgb = base.rgb(space);
            ov.composite(&mut want_rgb, None).unwrap();
            let want = Owned::from_rgb(&want_rgb, space);
            let worst = |a: &[u8], b: &[u8]| a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
            assert!(worst(&got.y, &want.y) <= 2, "Y off by {}", worst(&got.y, &want.y));
            assert!(worst(&got.u, &want.u) <= 2, "U off by {}", worst(&got.u, &want.u));
            assert!(worst(&got.v, &want.v) <= 2, "V off by {}", worst(&got.v, &want.v));
            // Blocks nothing covers are the decoded ones, byte for byte.
            for by in 0..h / 2 {
                for bx in 0..w / 2 {
                    let covered = (0..2)
                        .flat_map(|dy| (0..2).map(move |dx| (2 * bx + dx, 2 * by + dy)))
                        .any(|(x, y)| ov.pixel(x, y)[3] > 0);
                    if !covered {
                        let c = by * w / 2 + bx;
                        assert_eq!((got.u[c], got.v[c]), (base.u[c], base.v[c]), "block ({bx}, {by})");
                        for (x, y) in [(2 * bx, 2 * by), (2 * bx + 1, 2 * by + 1)] {
                            assert_eq!(got.y[y * w + x], base.y[y * w + x]);
                        }
                    }
                }
            }
        }
    }

    /// Every level of Y, U and V is kept where nothing is drawn, and an
    /// opaque colour lands on its own Y, U and V, exactly.
    #[test]
    fn transparent_keeps_every_level_and_opaque_replaces_it() {
        let k = Kernel::for_space(1);
        let c = Coeffs::for_space(1);
        for level in 0..=255u8 {
            let (mut y0, mut y1, mut u, mut v) = ([level; 2], [level; 2], [level], [255 - level]);
            let clear = [[0u8; 4]; 2];
            composite_pair(
                &clear, &clear, &[255; 2], &[255; 2], &mut y0, &mut y1, &mut u, &mut v, &k,
            );
            assert_eq!((y0, y1, u, v), ([level; 2], [level; 2], [level], [255 - level]));
            let colour = Rgba::from_rgba8(level, 255 - level, level / 3, 255);
            let p = [premultiplied(colour, 255); 2];
            composite_pair(&p, &p, &[255; 2], &[255; 2], &mut y0, &mut y1, &mut u, &mut v, &k);
            let want = c.pixel(colour.r(), colour.g(), colour.b());
            assert!(
                y0[0].abs_diff(want[0]) <= 1 && u[0].abs_diff(want[1]) <= 1 && v[0].abs_diff(want[2]) <= 1,
                "level {level}: {:?} for {want:?}",
                (y0, u, v)
            );
        }
    }

    /// A clear block beside a drawn one keeps every level exactly.
    #[test]
    fn a_clear_block_beside_a_drawn_one_keeps_its_levels() {
        let k = Kernel::for_space(5);
        let drawn = premultiplied(Rgba::from_rgba8(200, 30, 90, 255), 128);
        let src = [[0u8; 4], [0u8; 4], drawn, drawn];
        for level in 0..=255u8 {
            let (mut y0, mut y1) = ([level, 255 - level, level, level], [level / 2, level, 7, 9]);
            let (mut u, mut v) = ([level, 3], [255 - level, 250]);
            composite_pair(
                &src, &src, &[255; 4], &[255; 4], &mut y0, &mut y1, &mut u, &mut v, &k,
            );
            assert_eq!(
                ([y0[0], y0[1]], [y1[0], y1[1]], u[0], v[0]),
                ([level, 255 - level], [level / 2, level], level, 255 - level),
                "level {level}"
            );
            assert_ne!((u[1], v[1]), (3, 250), "the drawn block is drawn");
        }
    }

    #[test]
    fn tinting_planes_tints_the_floor_blocks_only() {
        let (w, h) = (16, 8);
        let mut p = Owned::textured(w, h, 3);
        let before = (p.y.clone(), p.u.clone(), p.v.clone());
        let mask = FloorMask::from_image(MaskImage::from_shape_fn(
            (h, w),
            |(_, x)| if x < 8 { 255 } else { 0 },
        ));
        tint_planes(&mut p.planes_mut(1), &mask).unwrap();
        for y in 0..h {
            for x in 0..w {
                let changed = p.y[y * w + x] != before.0[y * w + x];
                assert!(!(x >= 8 && changed), "({x}, {y}) is not floor");
            }
        }
        assert_ne!(p.u[0], before.1[0]);
        assert_eq!(p.u[w / 2 - 1], before.1[w / 2 - 1]);
        let bad = FloorMask::from_image(MaskImage::zeros((h, w + 2)));
        assert!(tint_planes(&mut p.planes_mut(1), &bad).is_err());
    }
}
