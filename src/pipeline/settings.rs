//! Everything that changes the picture, in one value: [`DrawSettings`].
//!
//! It is resolved once — from a session ([`crate::session::Session::draw_settings`])
//! plus command-line overrides, or edited in the viewer — and the
//! [`Pipeline`](super::Pipeline) is configured from it, so the viewer and
//! export draw exactly the same thing from the same session. The viewer's
//! own layout (panels, window) is not part of it.

use serde::{Deserialize, Serialize};

use crate::calib::Calibration;
use crate::mask::MaskSettings;
use crate::select::{FilterSpec, Index};
use crate::video::TimeMap;

/// Which layers are drawn (the session's `[draw]` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrawToggles {
    /// Draw the log's primitives at all.
    pub overlay: bool,
    /// Hide drawings where the floor mask says something stands in front
    /// of the floor (the viewer's "Hide behind robots"); off draws over
    /// everything and computes no mask.
    pub floor_mask: bool,
    /// Tint the floor pixels (thesis Figure 3.5), to check the mask by eye.
    pub tint: bool,
    /// How text is set off from the picture (outline, box or shadow).
    pub text: crate::draw::TextBackdrop,
    /// Draw shapes with heights flattened onto the floor (their footprint)
    /// when the calibration knows only the floor; off, they are not drawn
    /// and the frame says why.
    pub flatten_heights: bool,
}

impl Default for DrawToggles {
    fn default() -> Self {
        DrawToggles {
            overlay: true,
            floor_mask: true,
            tint: false,
            text: crate::draw::TextBackdrop::default(),
            flatten_heights: false,
        }
    }
}

/// How far (seconds) the nearest instantaneous frame may be from the log
/// time and still be shown.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum InstantThreshold {
    /// The log's own default ([`Index::default_threshold`]).
    #[default]
    Auto,
    /// This many seconds: zero or more; `+inf` shows the nearest
    /// instantaneous frame however far it is.
    Seconds(f64),
}

impl InstantThreshold {
    /// The one rule for a threshold as written in a session or on a
    /// command line: none, NaN or negative is [`Auto`](Self::Auto);
    /// anything else (`+inf` included) is taken as it is.
    pub fn from_setting(seconds: Option<f64>) -> Self {
        match seconds {
            Some(t) if t >= 0.0 => InstantThreshold::Seconds(t),
            _ => InstantThreshold::Auto,
        }
    }

    /// The threshold in seconds for a log with this index.
    pub fn seconds(self, index: &Index) -> f64 {
        match self {
            InstantThreshold::Auto => index.default_threshold(),
            InstantThreshold::Seconds(t) => t,
        }
    }

    /// As written in a session (`None` for automatic).
    pub fn to_setting(self) -> Option<f64> {
        match self {
            InstantThreshold::Auto => None,
            InstantThreshold::Seconds(t) => Some(t),
        }
    }
}

/// Everything that changes how a frame is drawn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrawSettings {
    /// Which layers are drawn.
    pub toggles: DrawToggles,
    /// How the floor mask is made.
    pub mask: MaskSettings,
    /// Which entities and levels are drawn.
    pub filter: FilterSpec,
    /// The instantaneous-frame threshold.
    pub instant_threshold: InstantThreshold,
    /// Frame time (or the source's clock) → log time.
    pub time: TimeMap,
    /// World → image; `None` draws nothing.
    pub calibration: Option<Calibration>,
    /// The field (a preset or a polygon) whose picture region, through the
    /// calibration, is the only place the floor can be; without it, the
    /// hull of the calibration's points serves ([`crate::mask::field`]).
    pub field: Option<crate::mask::field::FieldSpec>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_thresholds() {
        use InstantThreshold::*;
        assert_eq!(InstantThreshold::from_setting(None), Auto);
        assert_eq!(InstantThreshold::from_setting(Some(f64::NAN)), Auto);
        assert_eq!(InstantThreshold::from_setting(Some(-0.5)), Auto);
        assert_eq!(InstantThreshold::from_setting(Some(f64::NEG_INFINITY)), Auto);
        assert_eq!(InstantThreshold::from_setting(Some(0.0)), Seconds(0.0));
        assert_eq!(InstantThreshold::from_setting(Some(0.25)), Seconds(0.25));
        assert_eq!(
            InstantThreshold::from_setting(Some(f64::INFINITY)),
            Seconds(f64::INFINITY)
        );
        assert_eq!(Seconds(0.25).to_setting(), Some(0.25));
        assert_eq!(Auto.to_setting(), None);
    }

    #[test]
    fn toggles_read_with_defaults_and_refuse_unknown_keys() {
        #[derive(Debug, Deserialize)]
        struct Wrap {
            draw: DrawToggles,
        }
        let w: Wrap = toml::from_str("[draw]\nfloor_mask = false\n").unwrap();
        assert_eq!(
            w.draw,
            DrawToggles {
                floor_mask: false,
                ..DrawToggles::default()
            }
        );
        assert!(toml::from_str::<Wrap>("[draw]\nfloor = false\n").is_err());
        let w: Wrap = toml::from_str("[draw]\ntext = \"box\"\n").unwrap();
        assert_eq!(w.draw.text, crate::draw::TextBackdrop::Box);
        assert!(toml::from_str::<Wrap>("[draw]\ntext = \"halo\"\n").is_err());
    }
}
