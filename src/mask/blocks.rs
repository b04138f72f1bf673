//! A picture as the colour methods read it: 2×2 blocks of pixels, the
//! resolution at which 4:2:0 video carries its colour, each block one
//! colour — its mean luma with its chroma, converted as the decoder's
//! conversion converts a pixel ([`crate::video::yuv::blocks_to_rgb`]) —
//! read row by row into a scratch row, so that no picture in RGB is made
//! (issue 48).
//!
//! Why the block's colour and not its pixels': luma moves R, G and B of a
//! pixel alike, so a block's pixels all have the block's hue and chroma
//! (max − min of R, G, B) — the tests the masks make of colour — exactly,
//! unless one of a pixel's channels clips at 0 or 255; only value (the
//! brightest channel) and saturation (chroma over value) follow the
//! pixel's luma, and the block has its pixels' mean. docs/mask.md has
//! what that changes.
//!
//! An RGB picture (a still image, frames a source makes in RGB) is read
//! as its 4:2:0 conversion in the colour matrix players assume for its
//! size ([`crate::video::yuv::default_space`]), two rows at a time; an
//! odd last column or row is its own half block, repeated.

use crate::image::RgbImage;
use crate::video::Picture;
use crate::video::yuv::{Coeffs, InvCoeffs, Plane, PlaneMut, blocks_to_rgb, default_space, rgb_to_yuv420};

/// Scratch for reading rows of blocks (kept between frames).
#[derive(Debug, Default, Clone)]
pub(crate) struct Blocks {
    /// The blocks' colours, packed RGB.
    rgb: Vec<u8>,
    /// An RGB picture's two rows, evened out, and their 4:2:0 planes.
    strip: Vec<u8>,
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
}

/// A picture's size in blocks: `(⌈width/2⌉, ⌈height/2⌉)`.
pub fn block_size(width: usize, height: usize) -> (usize, usize) {
    (width.div_ceil(2), height.div_ceil(2))
}

/// A row of blocks as 4:2:0 planes read it: the two luma rows under the
/// blocks (two pixels a block), their chroma (one sample a block), and
/// the conversion to RGB the planes go with.
pub(crate) struct BlockRow<'a> {
    pub y0: &'a [u8],
    pub y1: &'a [u8],
    pub u: &'a [u8],
    pub v: &'a [u8],
    pub inv: InvCoeffs,
}

impl Blocks {
    /// Blocks `bx0..bx1` of block row `by` of `pic` (both within its
    /// blocks) as planes: a decoded picture's own rows, or an RGB
    /// picture's two rows converted.
    pub(crate) fn planes_row<'s, 'a: 's>(
        &'s mut self,
        pic: &Picture<'a>,
        by: usize,
        bx0: usize,
        bx1: usize,
    ) -> BlockRow<'s> {
        match pic {
            Picture::Yuv(p) => BlockRow {
                // Decoded planes have even sizes: every block is whole.
                y0: &p.row(0, 2 * by)[2 * bx0..2 * bx1],
                y1: &p.row(0, 2 * by + 1)[2 * bx0..2 * bx1],
                u: &p.row(1, by)[bx0..bx1],
                v: &p.row(2, by)[bx0..bx1],
                inv: InvCoeffs::for_space(p.space, false),
            },
            Picture::Rgb(img) => {
                let space = self.convert_rgb(img, by, bx0, bx1);
                let n = bx1 - bx0;
                let (y0, y1) = self.y.split_at(2 * n);
                BlockRow {
                    y0,
                    y1,
                    u: &self.u[..n],
                    v: &self.v[..n],
                    inv: InvCoeffs::for_space(space, false),
                }
            }
        }
    }

    /// The colours (packed RGB) of blocks `bx0..bx1` of block row `by` of
    /// `pic` (both within its blocks).
    pub(crate) fn row(&mut self, pic: &Picture<'_>, by: usize, bx0: usize, bx1: usize) -> &[u8] {
        let n = bx1 - bx0;
        let mut rgb = std::mem::take(&mut self.rgb);
        rgb.resize(3 * n, 0);
        let r = self.planes_row(pic, by, bx0, bx1);
        blocks_to_rgb(r.y0, r.y1, r.u, r.v, &mut rgb, &r.inv);
        self.rgb = rgb;
        &self.rgb[..3 * n]
    }

    /// The colours (packed RGB) of `count` blocks of block row `by` of
    /// `pic`: blocks `first`, `first + step`, … (all within its blocks).
    pub(crate) fn samples(
        &mut self,
        pic: &Picture<'_>,
        by: usize,
        first: usize,
        step: usize,
        count: usize,
    ) -> &[u8] {
        let step = step.max(1);
        match pic {
            Picture::Yuv(p) => {
                // Gathered, then converted as one row.
                let (r0, r1) = (p.row(0, 2 * by), p.row(0, 2 * by + 1));
                let (ur, vr) = (p.row(1, by), p.row(2, by));
                self.y.resize(4 * count, 0);
                self.u.resize(count, 0);
                self.v.resize(count, 0);
                let (y0, y1) = self.y.split_at_mut(2 * count);
                for (i, bx) in (first..).step_by(step).take(count).enumerate() {
                    y0[2 * i..2 * i + 2].copy_from_slice(&r0[2 * bx..2 * bx + 2]);
                    y1[2 * i..2 * i + 2].copy_from_slice(&r1[2 * bx..2 * bx + 2]);
                    self.u[i] = ur[bx];
                    self.v[i] = vr[bx];
                }
                self.rgb.resize(3 * count, 0);
                blocks_to_rgb(
                    y0,
                    y1,
                    &self.u,
                    &self.v,
                    &mut self.rgb,
                    &InvCoeffs::for_space(p.space, false),
                );
                &self.rgb[..3 * count]
            }
            Picture::Rgb(img) => {
                let (h, w, _) = img.dim();
                let bw = block_size(w, h).0;
                self.row(pic, by, 0, bw);
                for (i, bx) in (first..).step_by(step).take(count).enumerate() {
                    self.rgb.copy_within(3 * bx..3 * bx + 3, 3 * i);
                }
                &self.rgb[..3 * count]
            }
        }
    }

    /// Converts blocks `bx0..bx1` of block row `by` of an RGB picture into
    /// `y` (two rows), `u` and `v`; returns the colour matrix.
    fn convert_rgb(&mut self, img: &RgbImage, by: usize, bx0: usize, bx1: usize) -> i32 {
        let (h, w, _) = img.dim();
        let space = default_space(w, h);
        let n = bx1 - bx0;
        // Pixel columns 2·bx0 .. 2·bx1 of rows 2·by and 2·by + 1, the odd
        // last column and row repeated.
        let (x0, r0) = (2 * bx0, 2 * by);
        let r1 = (r0 + 1).min(h - 1);
        self.strip.resize(2 * 3 * 2 * n, 0);
        let row_bytes = 3 * 2 * n;
        for (k, r) in [r0, r1].into_iter().enumerate() {
            let dst = &mut self.strip[k * row_bytes..(k + 1) * row_bytes];
            let have = (w - x0).min(2 * n);
            match img.as_slice() {
                Some(all) => dst[..3 * have].copy_from_slice(&all[3 * (r * w + x0)..3 * (r * w + x0 + have)]),
                None => {
                    for (i, px) in dst[..3 * have].chunks_exact_mut(3).enumerate() {
                        for c in 0..3 {
                            px[c] = img[(r, x0 + i, c)];
                        }
                    }
                }
            }
            if have < 2 * n {
                let last = [dst[3 * have - 3], dst[3 * have - 2], dst[3 * have - 1]];
                for px in dst[3 * have..].chunks_exact_mut(3) {
                    px.copy_from_slice(&last);
                }
            }
        }
        self.y.resize(4 * n, 0);
        self.u.resize(n, 0);
        self.v.resize(n, 0);
        rgb_to_yuv420(
            Plane {
                data: &self.strip,
                stride: row_bytes,
            },
            2 * n,
            2,
            PlaneMut {
                data: &mut self.y,
                stride: 2 * n,
            },
            PlaneMut {
                data: &mut self.u,
                stride: n,
            },
            PlaneMut {
                data: &mut self.v,
                stride: n,
            },
            &Coeffs::for_space(space),
        );
        space
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::Planes;
    use crate::video::yuv::PlaneMut;

    /// A 4:2:0 picture's planes (tight) from an RGB picture of even size.
    fn planes_of(img: &RgbImage, space: i32) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let (h, w, _) = img.dim();
        let (mut y, mut u, mut v) = (vec![0; w * h], vec![0; w * h / 4], vec![0; w * h / 4]);
        rgb_to_yuv420(
            Plane {
                data: img.as_slice().unwrap(),
                stride: 3 * w,
            },
            w,
            h,
            PlaneMut {
                data: &mut y,
                stride: w,
            },
            PlaneMut {
                data: &mut u,
                stride: w / 2,
            },
            PlaneMut {
                data: &mut v,
                stride: w / 2,
            },
            &Coeffs::for_space(space),
        );
        (y, u, v)
    }

    #[test]
    fn an_rgb_picture_reads_as_its_planes_do() {
        let (w, h) = (70, 10);
        let img = RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| ((x * 7 + y * 13 + c * 50) % 256) as u8);
        let (y, u, v) = planes_of(&img, default_space(w, h));
        let p = Planes {
            width: w,
            height: h,
            space: default_space(w, h),
            full_range: false,
            y: Plane { data: &y, stride: w },
            u: Plane {
                data: &u,
                stride: w / 2,
            },
            v: Plane {
                data: &v,
                stride: w / 2,
            },
        };
        let mut b = Blocks::default();
        for by in 0..h / 2 {
            let from_planes = b.row(&Picture::Yuv(p), by, 3, 30).to_vec();
            let from_rgb = b.row(&Picture::Rgb(&img), by, 3, 30).to_vec();
            assert_eq!(from_planes, from_rgb, "block row {by}");
        }
    }

    #[test]
    fn a_block_of_one_colour_reads_as_that_colour_and_odd_edges_repeat() {
        // 5×3: the last column and row are half blocks.
        let colours = [[40u8, 140, 40], [230, 230, 230], [20, 20, 200]];
        let img = RgbImage::from_shape_fn((3, 5, 3), |(_, x, c)| colours[x / 2][c]);
        let mut b = Blocks::default();
        for by in 0..2 {
            let row = b.row(&Picture::Rgb(&img), by, 0, 3).to_vec();
            for (k, want) in colours.iter().enumerate() {
                for c in 0..3 {
                    let got = row[3 * k + c];
                    assert!(
                        got.abs_diff(want[c]) <= 2,
                        "block {k} of row {by}: {got} for {}",
                        want[c]
                    );
                }
            }
        }
    }
}
