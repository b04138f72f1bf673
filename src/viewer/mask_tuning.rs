//! Tuning the floor mask in the viewer (issue 17): the adaptive mask's
//! parameters edited in the session, a tinted preview while tuning, and
//! "this is floor" — a click on the video seeds the floor's hue.
//!
//! Every parameter, and the seeded hue, lives in the session's `[mask]`
//! (what export reads, what undo restores). `auto` masks with the adaptive
//! defaults, so its parameters are shown as those; touching one makes the
//! method `adaptive` with them. The preview is the viewer's own: while the
//! mask section is open (or a floor colour is being picked) the frame is
//! drawn with the tint on, and the session's tint toggle — which export
//! follows — is left as it is.
//!
//! Picking: the video panel turns the click into a request for the 9×9
//! pixels around it of the frame on screen as decoded
//! ([`super::player::Player::request_patch`]); when they arrive,
//! [`MaskTuning::receive`] seeds the hue ([`crate::mask::seed`]) or says
//! why not.

use crate::mask::seed::{SeedError, patch_hue};
use crate::mask::{AdaptiveSettings, MaskSettings};
use crate::pipeline::DrawSettings;

use super::player::Patch;

/// The mask section's own state (not saved).
#[derive(Clone, Debug, PartialEq)]
pub struct MaskTuning {
    /// Tint the floor while the section is open.
    pub preview: bool,
    /// Whether the section was open when the panels were last drawn.
    pub section_open: bool,
    /// The next click on the video picks the floor's colour.
    pub picking: bool,
    /// The time of the frame whose pixels were asked for, until they come.
    pub waiting: Option<f64>,
    /// What the last pick said: the hue seeded, or why none was.
    pub note: Option<Result<u8, SeedError>>,
}

impl Default for MaskTuning {
    fn default() -> Self {
        MaskTuning {
            preview: true,
            section_open: false,
            picking: false,
            waiting: None,
            note: None,
        }
    }
}

impl MaskTuning {
    /// Whether the viewer shows the tint now for tuning.
    pub fn previewing(&self) -> bool {
        self.preview && (self.section_open || self.picking || self.waiting.is_some())
    }

    /// The settings the viewer draws with: the session's `settings`, with
    /// the tint on while previewing.
    pub fn shown(&self, mut settings: DrawSettings) -> DrawSettings {
        if self.previewing() {
            settings.toggles.tint = true;
        }
        settings
    }

    /// Forgets a pick under way (another document was opened).
    pub fn forget_pick(&mut self) {
        self.picking = false;
        self.waiting = None;
        self.note = None;
    }

    /// Pixels asked for by a pick arrived: seeds `mask` with their floor
    /// hue, or leaves it as it is when they are too grey. `None` when no
    /// pick was waiting for them.
    pub fn receive(&mut self, patch: &Patch, mask: &mut MaskSettings) -> Option<Result<u8, SeedError>> {
        if self.waiting.take() != Some(patch.time) {
            return None;
        }
        let min_chroma = editable(mask).map_or(0, |s| s.min_chroma);
        let hue = patch_hue(&patch.pixels, min_chroma);
        if let Ok(h) = hue {
            seed(mask, Some(h));
        }
        self.note = Some(hue.clone());
        Some(hue)
    }
}

/// The adaptive settings the mask section edits: the method's own, for
/// `auto` the defaults it masks with; `None` for the other methods.
pub fn editable(mask: &MaskSettings) -> Option<AdaptiveSettings> {
    match mask {
        MaskSettings::Adaptive(s) => Some(s.clone()),
        MaskSettings::Auto => Some(AdaptiveSettings::default()),
        _ => None,
    }
}

/// Puts edited adaptive settings into `mask`: `auto` stays `auto` while
/// they are its defaults and becomes `adaptive` once they differ.
pub fn store(mask: &mut MaskSettings, settings: AdaptiveSettings) {
    if matches!(mask, MaskSettings::Auto) && settings == AdaptiveSettings::default() {
        return;
    }
    *mask = MaskSettings::Adaptive(settings);
}

/// Sets (or clears) the seeded floor hue of `mask` (`auto` becomes
/// `adaptive`); other methods have none and are left as they are.
pub fn seed(mask: &mut MaskSettings, hue: Option<u8>) {
    if let Some(s) = editable(mask) {
        store(mask, AdaptiveSettings { floor_hue: hue, ..s });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::RgbImage;

    fn patch(time: f64, rgb: [u8; 3]) -> Patch {
        Patch {
            time,
            pixels: RgbImage::from_shape_fn((9, 9, 3), |(_, _, c)| rgb[c]),
        }
    }

    #[test]
    fn auto_becomes_adaptive_only_when_a_parameter_changes() {
        let mut mask = MaskSettings::Auto;
        store(&mut mask, AdaptiveSettings::default());
        assert_eq!(mask, MaskSettings::Auto);
        let tuned = AdaptiveSettings {
            hue_margin: 9,
            ..Default::default()
        };
        store(&mut mask, tuned.clone());
        assert_eq!(mask, MaskSettings::Adaptive(tuned));
        // Back to the defaults: explicitly adaptive still.
        store(&mut mask, AdaptiveSettings::default());
        assert_eq!(mask, MaskSettings::Adaptive(AdaptiveSettings::default()));
        let mut thesis = MaskSettings::Thesis;
        seed(&mut thesis, Some(30));
        assert_eq!(thesis, MaskSettings::Thesis);
        assert_eq!(editable(&thesis), None);
    }

    #[test]
    fn a_pick_seeds_the_floor_hue_or_says_it_is_grey() {
        let mut t = MaskTuning::default();
        let mut mask = MaskSettings::Auto;
        // Nothing asked for: ignored.
        assert_eq!(t.receive(&patch(1.0, [60, 105, 55]), &mut mask), None);
        assert_eq!(mask, MaskSettings::Auto);
        t.waiting = Some(1.0);
        let h = t.receive(&patch(1.0, [60, 105, 55]), &mut mask).unwrap().unwrap();
        assert!((55..=59).contains(&h), "green: {h}");
        let MaskSettings::Adaptive(s) = &mask else {
            panic!("{mask:?}")
        };
        assert_eq!(s.floor_hue, Some(h));
        assert_eq!(t.waiting, None);
        t.waiting = Some(2.0);
        let grey = t.receive(&patch(2.0, [200, 200, 200]), &mut mask).unwrap();
        assert!(matches!(grey, Err(SeedError::Grey { .. })));
        let MaskSettings::Adaptive(s) = &mask else {
            panic!("{mask:?}")
        };
        assert_eq!(s.floor_hue, Some(h), "a grey pick changes nothing");
        assert!(matches!(t.note, Some(Err(_))));
        seed(&mut mask, None);
        assert_eq!(mask, MaskSettings::Adaptive(AdaptiveSettings::default()));
    }

    #[test]
    fn the_preview_tints_only_while_tuning() {
        let mut t = MaskTuning::default();
        let session = DrawSettings::default();
        assert!(!t.shown(session.clone()).toggles.tint);
        t.section_open = true;
        assert!(t.shown(session.clone()).toggles.tint);
        t.preview = false;
        assert!(!t.shown(session.clone()).toggles.tint);
        t.preview = true;
        t.section_open = false;
        t.picking = true;
        assert!(t.shown(session).toggles.tint, "while picking the floor");
    }
}
