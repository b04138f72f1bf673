//! How far a mask agrees with another away from the other's boundary:
//! the measure of issue 48's quality bound, under which the floor mask
//! moved from full-resolution RGB to the 2×2 blocks of the decoded planes
//! (docs/mask.md, docs/PERFORMANCE.md). Pixels near the reference's
//! boundary are left out: there a block mask moves the boundary by a
//! pixel or two, which is what blocks are.

use crate::image::{FLOOR, MaskImage};

/// Two masks compared away from the reference's boundary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Agreement {
    /// Pixels farther than the band from the reference's boundary.
    pub compared: u64,
    /// Of them, where the two masks agree.
    pub agree: u64,
    /// Pixels the reference calls floor, and of them the mask too (all
    /// pixels, the band included).
    pub reference_floor: u64,
    pub both_floor: u64,
    /// Pixels the mask calls floor.
    pub mask_floor: u64,
}

impl Agreement {
    /// The share of compared pixels that agree (1 when none are compared).
    pub fn share(&self) -> f64 {
        if self.compared == 0 {
            1.0
        } else {
            self.agree as f64 / self.compared as f64
        }
    }

    /// Adds another frame's counts.
    pub fn add(&mut self, o: &Agreement) {
        self.compared += o.compared;
        self.agree += o.agree;
        self.reference_floor += o.reference_floor;
        self.both_floor += o.both_floor;
        self.mask_floor += o.mask_floor;
    }
}

/// Compares `mask` with `reference` (same size; 255 = floor, anything
/// else not) on the pixels more than `band` pixels from the reference's
/// boundary: those whose square of side `2·band + 1` around them (clipped
/// to the picture: its edge is no boundary) is all floor or all not in
/// the reference. Masks of different sizes compare nothing.
pub fn agreement(reference: &MaskImage, mask: &MaskImage, band: usize) -> Agreement {
    let (h, w) = reference.dim();
    let mut a = Agreement::default();
    if mask.dim() != (h, w) || w == 0 || h == 0 {
        return a;
    }
    // Summed-area table of the reference's floor.
    let mut sat = vec![0u32; (w + 1) * (h + 1)];
    for y in 0..h {
        let mut row = 0u32;
        for x in 0..w {
            row += u32::from(reference[(y, x)] == FLOOR);
            sat[(y + 1) * (w + 1) + x + 1] = sat[y * (w + 1) + x + 1] + row;
        }
    }
    for y in 0..h {
        let (y0, y1) = (y.saturating_sub(band), (y + band + 1).min(h));
        for x in 0..w {
            let (x0, x1) = (x.saturating_sub(band), (x + band + 1).min(w));
            let floor = sat[y1 * (w + 1) + x1] + sat[y0 * (w + 1) + x0]
                - sat[y0 * (w + 1) + x1]
                - sat[y1 * (w + 1) + x0];
            let area = ((y1 - y0) * (x1 - x0)) as u32;
            let (r, m) = (reference[(y, x)] == FLOOR, mask[(y, x)] == FLOOR);
            a.reference_floor += u64::from(r);
            a.mask_floor += u64::from(m);
            a.both_floor += u64::from(r && m);
            if floor == 0 || floor == area {
                a.compared += 1;
                a.agree += u64::from(r == m);
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boundary_moved_by_a_pixel_agrees_away_from_it() {
        // Floor left of x = 20; the mask's boundary is a pixel further.
        let reference = MaskImage::from_shape_fn((10, 40), |(_, x)| if x < 20 { FLOOR } else { 0 });
        let moved = MaskImage::from_shape_fn((10, 40), |(_, x)| if x < 21 { FLOOR } else { 0 });
        let a = agreement(&reference, &moved, 2);
        // Columns 18..=21 lie within 2 of the boundary (between 19 and 20).
        assert_eq!(a.compared, 10 * 36);
        assert_eq!(a.share(), 1.0);
        // With no band the moved column disagrees.
        let a = agreement(&reference, &moved, 0);
        assert_eq!((a.compared, a.agree), (400, 390));
        assert_eq!((a.reference_floor, a.mask_floor, a.both_floor), (200, 210, 200));
        // A blob far from any boundary counts.
        let mut blob = reference.clone();
        blob.slice_mut(ndarray::s![3..6, 5..8]).fill(0);
        let a = agreement(&reference, &blob, 2);
        assert_eq!(a.compared - a.agree, 9);
        // Other sizes compare nothing.
        assert_eq!(agreement(&reference, &MaskImage::zeros((10, 41)), 2).compared, 0);
    }
}
