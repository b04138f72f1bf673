//! The adaptive mask's numbers: the parameters a session sets
//! ([`AdaptiveSettings`]), the floor model measured from a frame
//! ([`FloorModel`]) and the per-pixel thresholds derived from it
//! ([`Thresholds`]).

use serde::{Deserialize, Serialize};

/// Parameters of the adaptive mask, as saved in a session file. Every
/// field has a default; the defaults work on SSL carpets and grass pitches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdaptiveSettings {
    /// At most this many blocks sampled for the statistics (the densest
    /// regular grid within it).
    pub samples: u32,
    /// Chroma (max − min of R, G, B) below which a pixel's hue is ignored.
    pub min_chroma: u8,
    /// The hue window grows while the histogram is above this fraction of its peak.
    pub hue_spread: f32,
    /// Extra hue (OpenCV units of 2°) added on each side of the window.
    pub hue_margin: u8,
    /// Largest half-width of the window before the margin.
    pub max_hue_half_width: u8,
    /// Floor S bound = this × the 5th percentile of the floor's S.
    pub sat_factor: f32,
    /// Floor V bound = this × the 2nd percentile of the floor's V; darker pixels are objects.
    pub val_factor: f32,
    /// Floor chroma bound = this × the 2nd percentile of the floor's chroma.
    pub chroma_factor: f32,
    /// Non-floor pixels are objects when their chroma is at least this ×
    /// the floor's median chroma (and at least `min_object_chroma`) and
    /// their hue is more than `object_hue_margin` outside the floor window.
    pub object_chroma_factor: f32,
    /// Lower limit of the object chroma bound.
    pub min_object_chroma: u8,
    /// Hues this close to the floor window are never objects (colour fringes).
    pub object_hue_margin: u8,
    /// Opening radius (pixels at 1080 rows): floor specks smaller than this go.
    pub open_radius: f32,
    /// Closing radius (pixels at 1080 rows): thin light holes (lines) up to twice this wide are filled.
    pub fill_radius: f32,
    /// Floor regions smaller than this in both directions (pixels at 1080
    /// rows) after the opening are not floor: floor-coloured markers on
    /// robots, reflections.
    pub min_floor_island: f32,
    /// Holes the closing fills must be long (painted lines): filled regions
    /// whose bounding box is shorter than this in both directions (pixels
    /// at 1080 rows) stay foreground — small light objects, not lines.
    pub min_line_length: f32,
    /// ...unless they are specks no longer than this (pixels at 1080 rows).
    pub max_speck: f32,
    /// Opening radius of the object mask (pixels at 1080 rows): thinner
    /// coloured seams, such as colour fringes along lines, are not objects.
    pub object_open_radius: f32,
    /// Time constant of the smoothing over time, in seconds (0 = none).
    pub smoothing: f64,
    /// Smallest fraction of samples that must look like floor for a mask to be made.
    pub min_floor: f32,
    /// The floor's hue is taken from this lower fraction of the picture's
    /// rows: a camera above the side of a field sees sky, stands and trees
    /// at the top, and the sky is more colourful than grass (1 = the whole
    /// picture).
    pub hue_rows: f32,
    /// The floor's hue (OpenCV units of 2°, 0–179), when the user picked
    /// it ("this is floor"): the hue window is centred here instead of on
    /// the histogram's peak, and still grows on the histogram around it
    /// ([`super::hue_window`]). `hue_rows` is then not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor_hue: Option<u8>,
}

impl Default for AdaptiveSettings {
    fn default() -> Self {
        AdaptiveSettings {
            samples: 40_000,
            min_chroma: 8,
            hue_spread: 0.05,
            hue_margin: 6,
            max_hue_half_width: 20,
            sat_factor: 0.6,
            val_factor: 0.6,
            chroma_factor: 0.6,
            object_chroma_factor: 1.0,
            min_object_chroma: 24,
            object_hue_margin: 8,
            open_radius: 2.0,
            fill_radius: 12.0,
            object_open_radius: 1.5,
            min_floor_island: 24.0,
            min_line_length: 40.0,
            max_speck: 6.0,
            smoothing: 0.5,
            min_floor: 0.02,
            hue_rows: 0.6,
            floor_hue: None,
        }
    }
}

impl AdaptiveSettings {
    /// Checks that every value is finite and in range; the error says
    /// which is not.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |what: &str, v: String| Err(format!("{what} = {v} is out of range"));
        let unit = |v: f32| v.is_finite() && (0.0..=1.0).contains(&v);
        let factor = |v: f32| v.is_finite() && (0.0..=4.0).contains(&v);
        let radius = |v: f32| v.is_finite() && (0.0..=500.0).contains(&v);
        if self.samples < 100 || self.samples > 10_000_000 {
            return bad("samples (100 to 10000000)", self.samples.to_string());
        }
        if !unit(self.hue_spread) {
            return bad("hue_spread (0 to 1)", self.hue_spread.to_string());
        }
        for (name, v) in [
            ("hue_margin (0 to 90)", self.hue_margin),
            ("max_hue_half_width (0 to 90)", self.max_hue_half_width),
            ("object_hue_margin (0 to 90)", self.object_hue_margin),
        ] {
            if v > 90 {
                return bad(name, v.to_string());
            }
        }
        for (name, v) in [
            ("sat_factor (0 to 4)", self.sat_factor),
            ("val_factor (0 to 4)", self.val_factor),
            ("chroma_factor (0 to 4)", self.chroma_factor),
            ("object_chroma_factor (0 to 4)", self.object_chroma_factor),
        ] {
            if !factor(v) {
                return bad(name, v.to_string());
            }
        }
        for (name, v) in [
            ("open_radius (0 to 500)", self.open_radius),
            ("fill_radius (0 to 500)", self.fill_radius),
            ("object_open_radius (0 to 500)", self.object_open_radius),
            ("min_floor_island (0 to 500)", self.min_floor_island),
            ("min_line_length (0 to 500)", self.min_line_length),
            ("max_speck (0 to 500)", self.max_speck),
        ] {
            if !radius(v) {
                return bad(name, v.to_string());
            }
        }
        if !(self.smoothing.is_finite() && (0.0..=3600.0).contains(&self.smoothing)) {
            return bad("smoothing (0 to 3600 s)", self.smoothing.to_string());
        }
        if !(self.hue_rows.is_finite() && self.hue_rows > 0.0 && self.hue_rows <= 1.0) {
            return bad("hue_rows (above 0, up to 1)", self.hue_rows.to_string());
        }
        if let Some(h) = self.floor_hue
            && h >= 180
        {
            return bad("floor_hue (0 to 179)", h.to_string());
        }
        if !unit(self.min_floor) {
            return bad("min_floor (0 to 1)", self.min_floor.to_string());
        }
        Ok(())
    }
}

/// The floor model of one frame (or its running average).
#[derive(Clone, Debug, PartialEq)]
pub struct FloorModel {
    /// Chroma-weighted hue histogram, normalised to sum 1.
    pub hue_histogram: [f32; 180],
    /// The same of the lower `hue_rows` of the picture only: its peak is
    /// the floor's hue (the window then grows on the whole histogram).
    pub peak_histogram: [f32; 180],
    /// Lower bound of floor saturation.
    pub sat_min: f32,
    /// Lower bound of floor value (brightness).
    pub val_min: f32,
    /// Lower bound of floor chroma.
    pub chroma_min: f32,
    /// Median chroma of the floor.
    pub chroma_median: f32,
    /// Fraction of samples inside the hue window with enough chroma.
    pub floor_fraction: f32,
    /// Of the samples of a hue inside the window, the fraction with less
    /// chroma than `min_chroma`: floor too grey to be counted as floor
    /// when they are floor ([`super::MaskDoubt`]).
    pub grey_share: f32,
}

/// The per-pixel thresholds derived from a [`FloorModel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// First hue bin of the floor window ([`super::hsv::hue_bin`]: 0–179).
    pub hue_lo: u8,
    /// Hues `hue_lo ..= hue_lo + hue_span` (mod 180) are floor hues.
    pub hue_span: u8,
    /// Floor needs saturation ≥ `sat_min` ([`super::hsv::sat_at_least`]).
    pub sat_min: u8,
    /// Floor needs `v ≥ val_min`; darker is an object.
    pub val_min: u8,
    /// Floor needs chroma ≥ `chroma_min`.
    pub chroma_min: u8,
    /// Hues `object_hue_lo ..= object_hue_lo + object_hue_span` are never objects.
    pub object_hue_lo: u8,
    /// See `object_hue_lo`.
    pub object_hue_span: u8,
    /// Non-floor pixels of another hue with chroma ≥ `object_chroma` are objects.
    pub object_chroma: u8,
    /// The model's [`FloorModel::grey_share`] in percent (not used to
    /// classify: for telling when the floor is nearly grey,
    /// [`super::MaskDoubt`]).
    pub grey_percent: u8,
}
