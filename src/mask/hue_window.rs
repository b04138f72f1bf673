//! The adaptive mask's floor hue window: which hue bins (0–179, OpenCV's
//! units of 2°) are the floor's, from the frame's chroma-weighted hue
//! histograms ([`super::adaptive`]).
//!
//! The window is centred on the floor's hue: the peak of the histogram of
//! the lower `hue_rows` of the picture, or, when the user picked the
//! floor's colour ([`AdaptiveSettings::floor_hue`], "this is floor"), that
//! hue whatever the peak. From there it grows on the whole picture's
//! histogram (smoothed over 5 bins) while it stays above `hue_spread` of
//! its value at the centre, at most `max_hue_half_width` bins each way,
//! and `hue_margin` bins are added on each side.

use super::adaptive_params::AdaptiveSettings;

/// Circular box filter of half-width 2 over a hue histogram.
fn smooth_histogram(hist: &[f32; 180]) -> [f32; 180] {
    let mut out = [0f32; 180];
    for (i, o) in out.iter_mut().enumerate() {
        *o = (0..5).map(|k| hist[(i + 180 + k - 2) % 180]).sum::<f32>() / 5.0;
    }
    out
}

/// The hue the window is centred on: the seeded floor hue, else the peak
/// of `peak_hist` (of the whole picture's `smooth` when the lower part
/// has no colour).
fn centre(smooth: &[f32; 180], peak_hist: &[f32; 180], s: &AdaptiveSettings) -> usize {
    if let Some(seed) = s.floor_hue {
        return usize::from(seed) % 180;
    }
    let at_peak = if peak_hist.iter().any(|&v| v > 0.0) {
        smooth_histogram(peak_hist)
    } else {
        *smooth
    };
    let mut peak = 0;
    for i in 0..180 {
        if at_peak[i] > at_peak[peak] {
            peak = i;
        }
    }
    peak
}

/// The floor's hue window `(first bin, span)`: bins `first ..= first +
/// span` (mod 180), from the whole picture's histogram `hist` and that of
/// its lower `hue_rows`, `peak_hist` (see the module docs).
pub(super) fn hue_window(hist: &[f32; 180], peak_hist: &[f32; 180], s: &AdaptiveSettings) -> (u8, u8) {
    let smooth = smooth_histogram(hist);
    let peak = centre(&smooth, peak_hist, s);
    let limit = s.hue_spread * smooth[peak];
    let max = s.max_hue_half_width as usize;
    let (mut below, mut above) = (0usize, 0usize);
    while below < max && smooth[(peak + 180 - below - 1) % 180] > limit {
        below += 1;
    }
    while above < max && smooth[(peak + above + 1) % 180] > limit {
        above += 1;
    }
    let margin = s.hue_margin as usize;
    let lo = (peak + 180 * 2 - below - margin) % 180;
    let span = (below + above + 2 * margin).min(179);
    (lo as u8, span as u8)
}

/// Whether hue bin `h` lies in the window `(lo, span)`.
#[inline]
pub(super) fn in_window(h: u8, lo: u8, span: u8) -> bool {
    let d = if h >= lo { h - lo } else { h + (180 - lo) };
    d <= span
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hue_window_wraps_around_red() {
        let mut hist = [0f32; 180];
        hist[178] = 0.3;
        hist[179] = 0.4;
        hist[0] = 0.3;
        let s = AdaptiveSettings::default();
        let (lo, span) = hue_window(&hist, &hist, &s);
        assert!(in_window(179, lo, span) && in_window(0, lo, span) && in_window(2, lo, span));
        assert!(!in_window(90, lo, span));
    }

    /// Two colours: a strong blue peak and a weaker green one. The peak
    /// wins unless the floor's hue is seeded; the window then grows on the
    /// histogram around the seed (over the whole green hump) and keeps
    /// away from blue.
    #[test]
    fn a_seeded_hue_replaces_the_peak() {
        let mut hist = [0f32; 180];
        for (h, v) in [(100, 0.2), (101, 0.3), (102, 0.2), (104, 0.1)] {
            hist[h] = v;
        }
        for (h, v) in [(24, 0.02), (26, 0.06), (28, 0.08), (30, 0.02), (33, 0.01)] {
            hist[h] = v;
        }
        let s = AdaptiveSettings::default();
        let (lo, span) = hue_window(&hist, &hist, &s);
        assert!(in_window(101, lo, span) && !in_window(28, lo, span));
        let seeded = AdaptiveSettings {
            floor_hue: Some(27),
            ..Default::default()
        };
        let (lo, span) = hue_window(&hist, &hist, &seeded);
        for h in 24..=33 {
            assert!(in_window(h, lo, span), "{h} not in ({lo}, {span})");
        }
        assert!(!in_window(101, lo, span) && !in_window(90, lo, span));
        // The window grew on the histogram: wider than the margins alone.
        let bare = AdaptiveSettings {
            max_hue_half_width: 0,
            ..seeded.clone()
        };
        assert!(span > hue_window(&hist, &hist, &bare).1);
    }

    /// A seed on a hue the frame does not have still gives a window
    /// around it, bounded by the settings.
    #[test]
    fn a_seed_on_an_absent_hue_keeps_its_bounds() {
        let hist = [0f32; 180];
        let s = AdaptiveSettings {
            floor_hue: Some(179),
            ..Default::default()
        };
        let (lo, span) = hue_window(&hist, &hist, &s);
        assert_eq!((lo, span), (173, 12));
        assert!(in_window(179, lo, span) && in_window(5, lo, span) && !in_window(6, lo, span));
    }
}
