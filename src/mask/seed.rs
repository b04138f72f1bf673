//! "This is floor": the floor's hue from a small patch of pixels the user
//! points at, to seed the adaptive mask ([`super::AdaptiveSettings::floor_hue`]).
//!
//! The hue of each pixel is its bin as the adaptive mask's histogram
//! counts it ([`super::hsv::hue_bin`], OpenCV's units of 2°, 0–179). Only
//! pixels with enough chroma (max − min of R, G, B) have a reliable hue;
//! unless at least half of the patch has, the point is too grey (a white
//! line, a grey robot, a shadow) and no hue is given. Of the coloured
//! pixels the hue is the circular median: the bin with the least summed
//! distance around the hue circle to all of them, so a few pixels of a
//! line or a marker in the patch do not move it, and reds on both sides of
//! 0 are one colour.

use super::hsv::{hue_bin, hue_fraction};
use crate::image::RgbImage;

/// Half-width of the patch the viewer asks for: 9×9 pixels.
pub const PATCH_RADIUS: usize = 4;

/// Least chroma of a pixel whose hue counts, whatever the mask's own
/// `min_chroma`: below it, a hue bin moves by several bins per unit of
/// colour.
pub const MIN_SEED_CHROMA: u8 = 12;

/// Why a patch gives no floor hue.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    /// No pixels (the point is outside the picture).
    #[error("the point is outside the picture")]
    Empty,
    /// Too few pixels have colour.
    #[error(
        "too grey here: {coloured} of {pixels} pixels have colour (chroma ≥ {min_chroma}); \
         point at the floor's colour, not at a line, a shadow or a robot"
    )]
    Grey {
        coloured: usize,
        pixels: usize,
        min_chroma: u8,
    },
}

/// The floor hue of a patch (rows × columns × RGB): the circular median
/// hue bin of its pixels with chroma at least `min_chroma` (raised to
/// [`MIN_SEED_CHROMA`]), when they are at least half of the patch.
pub fn patch_hue(patch: &RgbImage, min_chroma: u8) -> Result<u8, SeedError> {
    let min_chroma = min_chroma.max(MIN_SEED_CHROMA);
    let (h, w, channels) = patch.dim();
    let pixels = h * w;
    if pixels == 0 || channels < 3 {
        return Err(SeedError::Empty);
    }
    let mut counts = [0usize; 180];
    let mut coloured = 0;
    for y in 0..h {
        for x in 0..w {
            let (p, c, _) = hue_fraction(patch[[y, x, 0]], patch[[y, x, 1]], patch[[y, x, 2]]);
            if c >= min_chroma {
                counts[usize::from(hue_bin(p, c))] += 1;
                coloured += 1;
            }
        }
    }
    if coloured == 0 || 2 * coloured < pixels {
        return Err(SeedError::Grey {
            coloured,
            pixels,
            min_chroma,
        });
    }
    Ok(circular_median(&counts))
}

/// The bin with the least summed circular distance to the counted bins
/// (the lowest such bin on a tie).
fn circular_median(counts: &[usize; 180]) -> u8 {
    let distance = |a: usize, b: usize| {
        let d = a.abs_diff(b);
        d.min(180 - d)
    };
    let cost = |c: usize| -> usize { counts.iter().enumerate().map(|(b, &n)| n * distance(b, c)).sum() };
    let best = (0..180).min_by_key(|&c| (cost(c), c)).unwrap_or(0);
    best as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 9×9 patch of `rgb` with `odd` pixels (counted from the top left)
    /// of `other`.
    fn patch(rgb: [u8; 3], other: [u8; 3], odd: usize) -> RgbImage {
        RgbImage::from_shape_fn(
            (9, 9, 3),
            |(y, x, c)| {
                if y * 9 + x < odd { other[c] } else { rgb[c] }
            },
        )
    }

    fn bin(rgb: [u8; 3]) -> u8 {
        let (p, c, _) = hue_fraction(rgb[0], rgb[1], rgb[2]);
        hue_bin(p, c)
    }

    #[test]
    fn the_patch_hue_is_the_floors() {
        let grass = [60, 105, 55];
        assert_eq!(patch_hue(&patch(grass, grass, 0), 8), Ok(bin(grass)));
        // A painted line and a blue marker across part of the patch do not
        // move it.
        let mixed = RgbImage::from_shape_fn((9, 9, 3), |(y, x, c)| {
            let px = if x < 2 {
                [235, 235, 235]
            } else if y < 2 {
                [40, 60, 200]
            } else {
                grass
            };
            px[c]
        });
        assert_eq!(patch_hue(&mixed, 8), Ok(bin(grass)));
        // Blue floor, bin 120ish.
        let blue = [40, 60, 200];
        assert_eq!(patch_hue(&patch(blue, grass, 10), 8), Ok(bin(blue)));
        assert!((115..=125).contains(&bin(blue)), "{}", bin(blue));
    }

    /// Reds lie on both sides of bin 0: their median is red, not cyan.
    #[test]
    fn reds_around_zero_are_one_colour() {
        let patch = RgbImage::from_shape_fn((9, 9, 3), |(y, _, c)| {
            let px = if y % 2 == 0 { [200, 40, 60] } else { [200, 60, 40] };
            px[c]
        });
        let h = patch_hue(&patch, 8).unwrap();
        assert!(!(10..=170).contains(&h), "{h}");
    }

    #[test]
    fn grey_patches_are_refused() {
        let grey = [128, 128, 128];
        let e = patch_hue(&patch(grey, grey, 0), 8).unwrap_err();
        assert_eq!(
            e,
            SeedError::Grey {
                coloured: 0,
                pixels: 81,
                min_chroma: MIN_SEED_CHROMA
            }
        );
        assert!(e.to_string().contains("too grey"), "{e}");
        // Chroma 10: below the seed's least chroma, though above the mask's.
        assert!(patch_hue(&patch([100, 110, 100], grey, 0), 8).is_err());
        // A white line over most of the patch.
        assert!(matches!(
            patch_hue(&patch([60, 105, 55], [235, 235, 235], 45), 8),
            Err(SeedError::Grey { coloured: 36, .. })
        ));
        // Mostly grass: fine.
        assert!(patch_hue(&patch([60, 105, 55], [235, 235, 235], 40), 8).is_ok());
        assert_eq!(patch_hue(&RgbImage::zeros((0, 0, 3)), 8), Err(SeedError::Empty));
    }
}
