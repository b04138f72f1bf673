//! A rendered match seen at a slant (`--tilt DEG`): the top-down picture
//! and its mask warped into the picture of a camera standing off the
//! pitch's side line, tilted up from straight down by that angle, so that
//! drawings above the floor show their heights.
//!
//! Everything the renderer draws lies on the floor (grass, lines, the
//! bodies' discs), and a floor seen by two cameras is related by a
//! homography: the slanted picture is the top-down one mapped by
//! `H_tilted · V⁻¹` (V: world → top-down pixels), exactly, up to the
//! resampling (bilinear for the picture, nearest for the mask). The
//! slanted camera is a full camera ([`Calibration::from_camera`]), which is
//! what the logs are drawn through. [`FloorWarp`] is that warp for any
//! camera (an agent's moving head camera too).

use crate::calib::Calibration;
use crate::calib::camera::look_at;
use crate::geom::Mat3;
use crate::geom::mat3::{invert, mul};
use crate::image::{MaskImage, RgbImage};

use super::render::View;

/// The largest slant, in degrees from straight down.
pub const MAX_TILT_DEG: f64 = 75.0;

/// The camera of a slanted view and the warp into its picture.
#[derive(Clone, Debug)]
pub struct Tilt {
    calibration: Calibration,
    warp: FloorWarp,
}

/// The warp of a top-down picture of the floor into another camera's
/// picture: output pixel → top-down pixel, a homography.
#[derive(Clone, Debug)]
pub struct FloorWarp {
    /// Output pixel → top-down pixel (homogeneous; positive third
    /// coordinate in front of the camera).
    back: Mat3,
    width: usize,
    height: usize,
}

impl Tilt {
    /// The view of a `width`×`height` picture of the world box `bounds`
    /// (min, max corners) from a camera `tilt_deg` from straight down,
    /// beyond the box's low-y side, framing the box whole; `top` is the
    /// top-down view the pictures to warp are rendered in. `None` for a
    /// slant out of range or a degenerate box.
    pub fn new(
        bounds: (crate::geom::Vec2, crate::geom::Vec2),
        top: &View,
        width: usize,
        height: usize,
        tilt_deg: f64,
    ) -> Option<Tilt> {
        if !(tilt_deg.is_finite() && (0.0..=MAX_TILT_DEG).contains(&tilt_deg)) || width < 2 || height < 2 {
            return None;
        }
        let (lo, hi) = bounds;
        let size = hi - lo;
        if !(size.x > 0.0 && size.y > 0.0 && size.is_finite()) {
            return None;
        }
        let centre = [(lo.x + hi.x) / 2.0, (lo.y + hi.y) / 2.0, 0.0];
        // As far as the box's larger side is long: its near edge about
        // twice the size of its far one at 45°, as from a stand.
        let distance = size.x.max(size.y);
        let a = tilt_deg.to_radians();
        // A hair off vertical so that "up" in the picture stays world +y.
        let a = a.max(1e-3);
        let eye = [centre[0], centre[1] - distance * a.sin(), distance * a.cos()];
        let (r, t) = look_at(eye, centre).ok()?;
        // The focal length that frames the box's corners with a margin.
        let (cx, cy) = ((width as f64 - 1.0) / 2.0, (height as f64 - 1.0) / 2.0);
        let mut reach: f64 = 0.0;
        let mut reach_y: f64 = 0.0;
        for (x, y) in [(lo.x, lo.y), (hi.x, lo.y), (hi.x, hi.y), (lo.x, hi.y)] {
            let p = [x, y, 0.0];
            let c: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| r[i][j] * p[j]).sum::<f64>() + t[i]);
            if c[2] <= 0.0 {
                return None;
            }
            reach = reach.max((c[0] / c[2]).abs());
            reach_y = reach_y.max((c[1] / c[2]).abs());
        }
        let f = (0.96 * cx / reach.max(1e-9)).min(0.96 * cy / reach_y.max(1e-9));
        let k = [[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]];
        let calibration = Calibration::from_camera(&k, &[], &r, t)
            .ok()?
            .with_image_size(width as u32, height as u32);
        let warp = FloorWarp::new(calibration.homography(), top, width, height)?;
        Some(Tilt { calibration, warp })
    }

    /// The slanted camera.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Warps the top-down `image` and `mask` into the slanted picture and
    /// mask (`out_*`, made the view's size). What the top-down picture does
    /// not show is `surround`, and not floor.
    pub fn warp(
        &self,
        image: &RgbImage,
        mask: &MaskImage,
        surround: [u8; 3],
        out_image: &mut RgbImage,
        out_mask: &mut MaskImage,
    ) {
        self.warp.warp(image, mask, surround, out_image, out_mask);
    }
}

impl FloorWarp {
    /// The warp into a `width`×`height` picture whose camera maps the
    /// floor by `homography` (world → pixels, its sign kept so that floor
    /// points in front of the camera have a positive third coordinate),
    /// of pictures rendered in the top-down view `top`. `None` when the
    /// camera sees the floor edge on.
    pub fn new(homography: &Mat3, top: &View, width: usize, height: usize) -> Option<FloorWarp> {
        // Top-down pixel → world (the inverse of the view's similarity),
        // then world → the camera's pixel; inverted for sampling.
        let (tcx, tcy) = ((top.width as f64 - 1.0) / 2.0, (top.height as f64 - 1.0) / 2.0);
        let s = top.scale;
        let to_world = [
            [1.0 / s, 0.0, top.center.x - tcx / s],
            [0.0, -1.0 / s, top.center.y + tcy / s],
            [0.0, 0.0, 1.0],
        ];
        let forward = mul(homography, &to_world);
        let back = invert(&forward)?;
        Some(FloorWarp { back, width, height })
    }

    /// Warps the top-down `image` and `mask` into the camera's picture and
    /// mask (`out_*`, made the warp's size). What the top-down picture does
    /// not show (beyond it, above the horizon) is `surround`, and not floor.
    pub fn warp(
        &self,
        image: &RgbImage,
        mask: &MaskImage,
        surround: [u8; 3],
        out_image: &mut RgbImage,
        out_mask: &mut MaskImage,
    ) {
        let (w, h) = (self.width, self.height);
        if out_image.dim() != (h, w, 3) {
            *out_image = RgbImage::zeros((h, w, 3));
        }
        if out_mask.dim() != (h, w) {
            *out_mask = MaskImage::zeros((h, w));
        }
        let (sh, sw, _) = image.dim();
        let b = &self.back;
        for y in 0..h {
            for x in 0..w {
                let (xf, yf) = (x as f64, y as f64);
                let q = b[2][0] * xf + b[2][1] * yf + b[2][2];
                let u = (b[0][0] * xf + b[0][1] * yf + b[0][2]) / q;
                let v = (b[1][0] * xf + b[1][1] * yf + b[1][2]) / q;
                let inside = q > 0.0 && u >= 0.0 && v >= 0.0 && u <= (sw - 1) as f64 && v <= (sh - 1) as f64;
                if !inside {
                    for c in 0..3 {
                        out_image[[y, x, c]] = surround[c];
                    }
                    out_mask[[y, x]] = 0;
                    continue;
                }
                let (u0, v0) = (u.floor() as usize, v.floor() as usize);
                let (u1, v1) = ((u0 + 1).min(sw - 1), (v0 + 1).min(sh - 1));
                let (fu, fv) = (u - u0 as f64, v - v0 as f64);
                for c in 0..3 {
                    let top = image[[v0, u0, c]] as f64 * (1.0 - fu) + image[[v0, u1, c]] as f64 * fu;
                    let bottom = image[[v1, u0, c]] as f64 * (1.0 - fu) + image[[v1, u1, c]] as f64 * fu;
                    out_image[[y, x, c]] = (top * (1.0 - fv) + bottom * fv).round() as u8;
                }
                out_mask[[y, x]] = mask[[(v.round() as usize).min(sh - 1), (u.round() as usize).min(sw - 1)]];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;

    #[test]
    fn the_slanted_camera_frames_the_box_and_warps_floor_points_onto_it() {
        let bounds = (Vec2::new(-60.0, -40.0), Vec2::new(60.0, 40.0));
        let top = View::fit(bounds, 640, 360).unwrap();
        let tilt = Tilt::new(bounds, &top, 320, 180, 45.0).unwrap();
        let c = tilt.calibration();
        assert!(c.is_full_camera());
        // Every corner in the picture, the far side narrower than the near.
        let px = |x: f64, y: f64| c.project(Vec2::new(x, y)).unwrap();
        for (x, y) in [(-60.0, -40.0), (60.0, -40.0), (60.0, 40.0), (-60.0, 40.0)] {
            let p = px(x, y);
            assert!(p.x >= 0.0 && p.x <= 319.0 && p.y >= 0.0 && p.y <= 179.0, "{p:?}");
        }
        assert!(px(60.0, 40.0).x - px(-60.0, 40.0).x < px(60.0, -40.0).x - px(-60.0, -40.0).x);
        // A height shows: a point 5 units up is higher in the picture.
        assert!(c.project3([0.0, 0.0, 5.0]).unwrap().y < px(0.0, 0.0).y - 3.0);
        // The warp samples the top-down pixel showing the same floor point.
        let mut image = RgbImage::zeros((360, 640, 3));
        let mark = top.to_pixel(Vec2::new(20.0, 10.0));
        for dy in -3..=3 {
            for dx in -3..=3 {
                image[[
                    (mark.y.round() as i64 + dy) as usize,
                    (mark.x.round() as i64 + dx) as usize,
                    0,
                ]] = 255;
            }
        }
        let mask = MaskImage::from_elem((360, 640), 255);
        let (mut out, mut out_mask) = (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0)));
        tilt.warp(&image, &mask, [9, 9, 9], &mut out, &mut out_mask);
        let p = px(20.0, 10.0);
        assert!(out[[p.y.round() as usize, p.x.round() as usize, 0]] > 200);
        assert_eq!(out_mask[[p.y.round() as usize, p.x.round() as usize]], 255);
        assert!(Tilt::new(bounds, &top, 320, 180, 80.0).is_none());
    }
}
