//! Finding a field's painted lines in a picture near where a calibration
//! puts them: points sampled along each field line are projected, and the
//! picture's brightness is searched across the line's image for a bright
//! ridge about the line's expected width (brighter than both sides, so
//! the edge of a bright area is not taken for a line). A search that finds
//! two ridges of about the same strength says nothing.

use std::f64::consts::TAU;

use crate::calib::Calibration;
use crate::calib::presets::FieldLine;
use crate::geom::Vec2;
use crate::image::RgbImage;

/// Brightness of a picture (Rec. 601 luma, 0–255), for sampling between
/// pixels, and its chromaticity (each pixel's red and green share of its
/// sum, × 255: about the same in sun and shade), to tell the floor from
/// what is beside it.
pub struct Luma {
    w: usize,
    h: usize,
    px: Vec<f32>,
    chroma: Vec<[u8; 2]>,
}

/// A pixel's red and green shares of `r + g + b`, × 255 (a third each for
/// black).
fn chromaticity(r: u8, g: u8, b: u8) -> [u8; 2] {
    let sum = u32::from(r) + u32::from(g) + u32::from(b);
    if sum == 0 {
        return [85, 85];
    }
    let share = |c: u8| ((u32::from(c) * 255 + sum / 2) / sum) as u8;
    [share(r), share(g)]
}

impl Luma {
    /// The luma of `img`.
    pub fn of(img: &RgbImage) -> Luma {
        let (h, w, _) = img.dim();
        let mut px = Vec::with_capacity(w * h);
        let mut chroma = Vec::with_capacity(w * h);
        let mut add = |r: u8, g: u8, b: u8| {
            px.push(0.299 * f32::from(r) + 0.587 * f32::from(g) + 0.114 * f32::from(b));
            chroma.push(chromaticity(r, g, b));
        };
        match img.as_slice() {
            Some(s) => s.chunks_exact(3).for_each(|c| add(c[0], c[1], c[2])),
            None => {
                for v in 0..h {
                    for u in 0..w {
                        add(img[[v, u, 0]], img[[v, u, 1]], img[[v, u, 2]]);
                    }
                }
            }
        }
        Luma { w, h, px, chroma }
    }

    /// The chromaticity (red and green shares of the sum, × 255) at the
    /// pixel nearest `p`;
    /// `None` outside.
    pub fn chroma_at(&self, p: Vec2) -> Option<[u8; 2]> {
        let (x, y) = (p.x.round(), p.y.round());
        if !(x >= 0.0 && y >= 0.0 && x <= (self.w - 1) as f64 && y <= (self.h - 1) as f64) {
            return None;
        }
        self.chroma.get(y as usize * self.w + x as usize).copied()
    }

    /// `[width, height]`.
    pub fn size(&self) -> [usize; 2] {
        [self.w, self.h]
    }

    /// Bilinear luma at `p` (pixel centres at integers); `None` outside.
    pub(super) fn at(&self, p: Vec2) -> Option<f32> {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x <= (self.w - 1) as f64 && p.y <= (self.h - 1) as f64) {
            return None;
        }
        // Non-negative here: truncation is the floor.
        let (x0, y0) = (p.x as usize, p.y as usize);
        let (x1, y1) = ((x0 + 1).min(self.w - 1), (y0 + 1).min(self.h - 1));
        let (fx, fy) = ((p.x - x0 as f64) as f32, (p.y - y0 as f64) as f32);
        let row = |y: usize| {
            let a = self.px[y * self.w + x0];
            let b = self.px[y * self.w + x1];
            a + (b - a) * fx
        };
        let (top, bottom) = (row(y0), row(y1));
        Some(top + (bottom - top) * fy)
    }
}

/// A point of a field line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinePoint {
    /// Index of the line in the preset.
    pub line: usize,
    /// The point, in world units.
    pub world: Vec2,
    /// The line's unit direction there.
    pub tangent: Vec2,
}

/// The world point of `line` at parameter `t` (0–1) and its direction.
pub(super) fn point_at(line: &FieldLine, t: f64) -> (Vec2, Vec2) {
    line.at(t)
}

/// The point of `line` nearest to world point `p`, and the line's
/// direction there; `None` when the nearest point is an end of the line
/// (the pixel is beyond it, not on it).
pub fn nearest_on(line: &FieldLine, p: Vec2) -> Option<(Vec2, Vec2)> {
    match *line {
        FieldLine::Segment { a, b } => {
            let d = b - a;
            let l2 = d.dot(d);
            if l2.is_nan() || l2 <= 0.0 {
                return None;
            }
            let t = (p - a).dot(d) / l2;
            (0.0..=1.0).contains(&t).then(|| point_at(line, t))
        }
        FieldLine::Arc {
            center,
            radius,
            start,
            end,
        } => {
            let v = p - center;
            if radius.is_nan()
                || radius <= 0.0
                || v.length() == 0.0
                || end.is_nan()
                || start.is_nan()
                || end <= start
            {
                return None;
            }
            let rel = (v.y.atan2(v.x) - start).rem_euclid(TAU);
            (rel <= end - start + 1e-12).then(|| point_at(line, rel / (end - start)))
        }
    }
}

/// Points along every line, about `spacing_px` apart in the picture as
/// `calib` maps them (at most `max_per_line` on a line), leaving out each
/// line's ends, where other lines meet it.
pub fn sample_lines(
    lines: &[FieldLine],
    calib: &Calibration,
    spacing_px: f64,
    max_per_line: usize,
) -> Vec<LinePoint> {
    const END: f64 = 0.03;
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        // The line's length in the picture, from a coarse polyline.
        let mut length = 0.0;
        let mut last: Option<Vec2> = None;
        for k in 0..=32 {
            let p = calib.project(point_at(line, f64::from(k) / 32.0).0);
            if let (Some(a), Some(b)) = (last, p) {
                length += (b - a).length();
            }
            last = p;
        }
        if length.is_nan() || length <= 0.0 {
            continue;
        }
        let n = ((length * (1.0 - 2.0 * END) / spacing_px).ceil() as usize).clamp(2, max_per_line.max(2));
        for k in 0..n {
            let t = END + (1.0 - 2.0 * END) * (k as f64 + 0.5) / n as f64;
            let (world, tangent) = point_at(line, t);
            out.push(LinePoint {
                line: i,
                world,
                tangent,
            });
        }
    }
    out
}

/// A pixel found on a painted line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    /// The index of the point searched from, in the points given.
    pub point: usize,
    /// The line's index in the preset.
    pub line: usize,
    /// The ridge's centre.
    pub image: Vec2,
    /// Its signed distance across the line from where the calibration
    /// puts the line, pixels.
    pub offset: f64,
    /// How much brighter than either side it is (luma levels).
    pub contrast: f32,
    /// The unit direction across the line in the picture.
    pub across: Vec2,
    /// The line's width in the picture, pixels.
    pub width: f64,
}

/// How to search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    /// Half the length searched across each line, pixels.
    pub half_px: f64,
    /// The painted lines' width, world units.
    pub line_width: f64,
    /// Least brightness over both sides of a ridge, luma levels.
    pub min_contrast: f32,
    /// Where the search runs out of the picture, search the part in it
    /// (else such a point is not searched: a fit takes only whole
    /// searches, a check wants every line near the edge looked at).
    pub partial: bool,
}

/// Step of the profiles across a line, pixels.
const STEP: f64 = 0.5;

/// Searches across each point's line for the painted ridge.
pub fn find(luma: &Luma, calib: &Calibration, points: &[LinePoint], search: &Search) -> Vec<Found> {
    let mut profile = Vec::new();
    let mut sums = Vec::new();
    let mut smooth = Vec::new();
    points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let mut f = find_one(luma, calib, p, search, &mut profile, &mut sums, &mut smooth)?;
            f.point = i;
            Some(f)
        })
        .collect()
}

fn find_one(
    luma: &Luma,
    calib: &Calibration,
    p: &LinePoint,
    search: &Search,
    profile: &mut Vec<f32>,
    sums: &mut Vec<f32>,
    smooth: &mut Vec<f32>,
) -> Option<Found> {
    // The line's image direction, and its width across it.
    let delta = search.line_width.max(1e-9);
    let at = calib.project(p.world)?;
    let along = calib.project(p.world + p.tangent * delta)? - at;
    let across = calib.project(p.world + Vec2::new(-p.tangent.y, p.tangent.x) * delta)? - at;
    let len = along.length();
    if len.is_nan() || len <= 1e-9 {
        return None;
    }
    let d = along * (1.0 / len);
    let n = Vec2::new(-d.y, d.x);
    let width = (d.cross(across).abs()).clamp(1.0, 60.0);
    // Box smoothing over the width (an odd number of steps, centred), and
    // the sides a width and a bit away.
    let box_steps = ((width / STEP).round() as usize).max(1) | 1;
    let side_steps = ((width + 1.5) / STEP).round() as usize;
    let reach = search.half_px + (side_steps + box_steps) as f64 * STEP;
    let full = (2.0 * reach / STEP).round() as usize + 1;
    // Three parallel profiles a pixel and a half apart, averaged; where the
    // search runs out of the picture it stops there (a line near the edge
    // is still searched on the side that is in it).
    let sample = |k: usize| {
        let c = at + n * (-reach + k as f64 * STEP);
        Some((luma.at(c - d * 1.5)? + luma.at(c)? + luma.at(c + d * 1.5)?) / 3.0)
    };
    profile.clear();
    profile.extend((0..full).map(|k| sample(k).unwrap_or(f32::NAN)));
    let centre = full / 2;
    if profile[centre].is_nan() {
        return None;
    }
    let lo = profile[..centre]
        .iter()
        .rposition(|v| v.is_nan())
        .map_or(0, |k| k + 1);
    let hi = profile[centre..]
        .iter()
        .position(|v| v.is_nan())
        .map_or(full, |k| centre + k);
    if !search.partial && (lo, hi) != (0, full) {
        return None;
    }
    let count = hi - lo;
    if count < 2 * (side_steps + box_steps) + 1 {
        return None;
    }
    profile.truncate(hi);
    profile.drain(..lo);
    let reach = reach - lo as f64 * STEP;
    sums.clear();
    sums.push(0.0);
    let mut acc = 0.0;
    for &v in profile.iter() {
        acc += v;
        sums.push(acc);
    }
    smooth.clear();
    let half_box = box_steps / 2;
    for k in 0..count {
        let lo = k.saturating_sub(half_box);
        let hi = (k + half_box + 1).min(count);
        smooth.push((sums[hi] - sums[lo]) / (hi - lo) as f32);
    }
    // Ridge response inside the searched span.
    let first = side_steps + box_steps;
    let last = count - 1 - side_steps - box_steps;
    let response = |k: usize| {
        let c = smooth[k];
        (c - smooth[k - side_steps]).min(c - smooth[k + side_steps])
    };
    let mut best = (first, f32::NEG_INFINITY);
    for k in first..=last {
        let r = response(k);
        if r > best.1 {
            best = (k, r);
        }
    }
    let (k, r) = best;
    if r.is_nan() || r < search.min_contrast {
        return None;
    }
    // Another ridge almost as strong, away from this one: ambiguous.
    let apart = 2 * side_steps;
    let rival = (first..=last)
        .filter(|&j| j.abs_diff(k) > apart)
        .map(response)
        .fold(f32::NEG_INFINITY, f32::max);
    if rival >= 0.8 * r {
        return None;
    }
    // The centre: the centroid of the brightness above the sides' level,
    // over the line's width and a pixel either side.
    let base = 0.5 * (smooth[k - side_steps] + smooth[k + side_steps]);
    let span = ((0.5 * width + 1.0) / STEP).round() as usize;
    let (mut m0, mut m1) = (0.0f64, 0.0f64);
    let lo = k - span.min(k);
    for (j, &v) in profile
        .iter()
        .enumerate()
        .take((k + span).min(count - 1) + 1)
        .skip(lo)
    {
        let e = f64::from((v - base).max(0.0));
        m0 += e;
        m1 += e * (j as f64 - k as f64);
    }
    let mut s = -reach + k as f64 * STEP;
    if m0 > 0.0 {
        s += (m1 / m0).clamp(-(span as f64), span as f64) * STEP;
    }
    Some(Found {
        point: 0,
        line: p.line,
        image: at + n * s,
        offset: s,
        contrast: r,
        across: n,
        width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Mat3;
    use std::f64::consts::FRAC_PI_2;

    /// A picture of dark floor with a bright vertical stripe `width` px
    /// wide centred on column `u0`, and a calibration mapping world mm to
    /// pixels 1:10 (world x = 10 u).
    fn stripe(u0: f64, width: f64) -> (RgbImage, Calibration) {
        let (w, h) = (200usize, 100usize);
        let mut img = RgbImage::zeros((h, w, 3));
        for v in 0..h {
            for u in 0..w {
                // Coverage of the pixel [u−½, u+½] by the stripe.
                let lo = (u as f64 - 0.5).max(u0 - width / 2.0);
                let hi = (u as f64 + 0.5).min(u0 + width / 2.0);
                let cover = (hi - lo).clamp(0.0, 1.0);
                let val = (40.0 + 160.0 * cover).round() as u8;
                for c in 0..3 {
                    img[[v, u, c]] = val;
                }
            }
        }
        let h: Mat3 = [[0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 1.0]];
        (img, Calibration::from_homography(h).unwrap())
    }

    fn vertical_line(x: f64) -> FieldLine {
        FieldLine::Segment {
            a: Vec2::new(x, 0.0),
            b: Vec2::new(x, 990.0),
        }
    }

    #[test]
    fn finds_the_ridge_to_a_fraction_of_a_pixel() {
        for (u0, width) in [(103.3, 3.0), (96.75, 1.0), (110.0, 7.0)] {
            let (img, calib) = stripe(u0, width);
            let luma = Luma::of(&img);
            // The line is believed 8 px left of where it is.
            let line = vertical_line((u0 - 8.0) * 10.0);
            let pts = sample_lines(&[line], &calib, 10.0, 100);
            assert!(pts.len() >= 8, "{}", pts.len());
            let search = Search {
                half_px: 15.0,
                line_width: width * 10.0,
                min_contrast: 10.0,
                partial: false,
            };
            let found = find(&luma, &calib, &pts, &search);
            assert_eq!(found.len(), pts.len(), "width {width}");
            for f in &found {
                assert!(
                    (f.image.x - u0).abs() < 0.15,
                    "width {width}: {} vs {u0}",
                    f.image.x
                );
                assert!(f.contrast > 60.0, "width {width}: contrast {}", f.contrast);
            }
        }
    }

    #[test]
    fn an_edge_or_a_flat_picture_is_no_line_and_two_lines_are_ambiguous() {
        // A bright half-plane: its edge is brighter than one side only.
        let (mut img, calib) = stripe(100.0, 3.0);
        for v in 0..100 {
            for u in 0..200 {
                let val = if u >= 100 { 200 } else { 40 };
                for c in 0..3 {
                    img[[v, u, c]] = val;
                }
            }
        }
        let search = Search {
            half_px: 15.0,
            line_width: 30.0,
            min_contrast: 10.0,
            partial: false,
        };
        let pts = sample_lines(&[vertical_line(1000.0)], &calib, 10.0, 100);
        assert!(find(&Luma::of(&img), &calib, &pts, &search).is_empty());
        // Flat.
        img.fill(90);
        assert!(find(&Luma::of(&img), &calib, &pts, &search).is_empty());
        // Two equal stripes 10 px either side of the expected place.
        let (a, _) = stripe(90.0, 3.0);
        let (b, _) = stripe(110.0, 3.0);
        let two = ndarray::Zip::from(&a).and(&b).map_collect(|&x, &y| x.max(y));
        assert!(find(&Luma::of(&two), &calib, &pts, &search).is_empty());
        // One of them clearly brighter is found.
        let dim = b.mapv(|v| if v > 40 { 40 + (v - 40) / 3 } else { v });
        let one = ndarray::Zip::from(&a).and(&dim).map_collect(|&x, &y| x.max(y));
        let found = find(&Luma::of(&one), &calib, &pts, &search);
        assert!(!found.is_empty() && found.iter().all(|f| (f.image.x - 90.0).abs() < 0.2));
    }

    #[test]
    fn nearest_points_on_segments_and_arcs() {
        let seg = FieldLine::Segment {
            a: Vec2::new(0.0, 0.0),
            b: Vec2::new(10.0, 0.0),
        };
        let (p, t) = nearest_on(&seg, Vec2::new(3.0, 2.0)).unwrap();
        assert_eq!((p, t), (Vec2::new(3.0, 0.0), Vec2::new(1.0, 0.0)));
        assert!(nearest_on(&seg, Vec2::new(11.0, 0.0)).is_none());
        let arc = FieldLine::Arc {
            center: Vec2::ZERO,
            radius: 5.0,
            start: 0.0,
            end: FRAC_PI_2,
        };
        let (p, t) = nearest_on(&arc, Vec2::new(3.0, 3.0)).unwrap();
        let r = 5.0 / 2f64.sqrt();
        assert!(
            (p - Vec2::new(r, r)).length() < 1e-9
                && (t - Vec2::new(-1.0, 1.0) * (1.0 / 2f64.sqrt())).length() < 1e-9
        );
        assert!(nearest_on(&arc, Vec2::new(-3.0, -3.0)).is_none());
        let circle = FieldLine::Arc {
            center: Vec2::ZERO,
            radius: 5.0,
            start: 0.0,
            end: TAU,
        };
        assert!(nearest_on(&circle, Vec2::new(-3.0, -3.0)).is_some());
        assert!(nearest_on(&circle, Vec2::ZERO).is_none());
    }
}
