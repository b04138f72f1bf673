//! What makes a floor mask doubtful, as the masker that computed it can
//! tell: a mask is a guess from colours, and some pictures do not carry
//! the colours it needs. Export and `underlay mask` say so after the run
//! ([`Masker::doubt`](super::Masker::doubt)); the mask itself is kept as
//! computed.

use std::fmt;

/// Why the last mask a masker computed may be wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskDoubt {
    /// The floor is nearly grey: `percent` of the picture's colours of the
    /// floor's hue have less chroma than the adaptive mask counts as floor
    /// (`least`, its `min_chroma`), so much of the floor may be taken for
    /// objects (a grey artificial turf, a washed-out or dark picture).
    /// Chroma is max(R, G, B) − min(R, G, B), 0–255.
    GreyFloor { percent: u8, least: u8 },
}

impl fmt::Display for MaskDoubt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaskDoubt::GreyFloor { percent, least } => write!(
                f,
                "the floor is nearly grey: {percent} % of the colours of the floor's hue have too little \
                 colour for the adaptive mask to count them as floor (chroma under `min_chroma` = {least}), \
                 so parts of the floor can be taken for objects and drawings hidden there"
            ),
        }
    }
}

impl MaskDoubt {
    /// What to try about it.
    pub fn advice(&self) -> &'static str {
        match self {
            MaskDoubt::GreyFloor { .. } => {
                "look at the mask (the viewer's floor tint, or `underlay mask`); if it has holes, lower \
                 the adaptive mask's `min_chroma` (the session's [mask], or the viewer's Mask section), \
                 give a mask image or video, or draw with no mask (`--no-mask`)"
            }
        }
    }
}
