//! The adaptive floor mask (the default): the thesis's idea — the floor is
//! the dominant colour; painted lines are thin light holes in it; robots
//! and balls are not — with thresholds measured on each frame instead of
//! fixed numbers tuned for one carpet.
//!
//! Per frame:
//!
//! 1. **Statistics** on a grid subsample (about [`AdaptiveSettings::samples`]
//!    pixels): a hue histogram weighted by chroma (grey pixels have no
//!    reliable hue), smoothed over neighbouring bins. Its peak in the lower
//!    [`AdaptiveSettings::hue_rows`] of the picture is the floor hue (an
//!    elevated camera's sky is more colourful than grass), unless the user
//!    picked it ([`AdaptiveSettings::floor_hue`]); the hue window grows
//!    around it while the histogram stays above `hue_spread` of its value
//!    there, plus `hue_margin` ([`super::hue_window`]). Among samples in the
//!    window, low quantiles of S, V and chroma give the floor's lower bounds
//!    (lighting can be uneven, so the bounds come from the darkest,
//!    dullest floor pixels, scaled down by the `*_factor`s).
//! 2. **Smoothing over time** for video: the hue histogram and the bounds
//!    are exponential moving averages with time constant `smoothing`
//!    seconds, so masks do not flicker; [`Masker::reset`] (after a seek)
//!    or a jump in time starts afresh.
//! 3. **Classification** of every pixel straight from RGB, in 16-bit
//!    integer arithmetic without divisions (hue windows and saturation
//!    bounds as exact rational tests, [`super::hsv::hue_in_window`],
//!    [`super::hsv::sat_at_least`]; hue bins are within 1 of OpenCV's): *floor* (hue in the window;
//!    S, V and chroma above the bounds), *object* (not floor, and either
//!    darker than the floor's V bound, or as colourful as the floor with a
//!    hue well away from it: a ball, a shirt, a robot marker), or
//!    *neutral* (neither: whites and greys, colour fringes, noise).
//! 4. **Shape** (radii and lengths in pixels of a 1080-row frame, scaled
//!    with the frame height):
//!    * the floor is opened (`open_radius`), and floor islands smaller than
//!      `min_floor_island` go (carpet-coloured markers on robots);
//!    * objects are opened (`object_open_radius`): thin coloured seams are
//!      not objects;
//!    * the floor's closing (`fill_radius`) may add neutral pixels only —
//!      never objects — and only as regions that are long (at least
//!      `min_line_length`: painted lines) or specks (at most `max_speck`:
//!      noise); compact light things (a grey robot, a player in white) stay
//!      foreground.
//!
//! When a frame has no dominant colour at all (less than `min_floor`
//! of the samples near the hue peak) the mask is all floor, as if masking
//! were off, rather than hiding every drawing.

use super::adaptive_params::{AdaptiveSettings, FloorModel, Thresholds};
use super::blocks::{Blocks, block_size};
use super::hsv::{bin_chroma_value_sat_row, hue_fraction, hue_in_window, sat_at_least};
use super::hue_window::{hue_window, in_window};
use super::masker::picture_size;
use super::morph::Morphology;
use super::regions::Regions;
use super::window::{self, Rect};
use super::{MaskDoubt, MaskError, MaskStep, Masker};
use crate::floor::FloorMask;
use crate::floor::bits::{BitMask, pack_row};
use crate::simd::multiversion;
use crate::video::Picture;
use crate::video::yuv::InvCoeffs;

/// The adaptive masker. Keeps buffers and the running floor model.
#[derive(Debug, Clone)]
pub struct AdaptiveMasker {
    settings: AdaptiveSettings,
    model: Option<FloorModel>,
    last_time: f64,
    thresholds: Option<Thresholds>,
    flags: Vec<u8>,
    floor: BitMask,
    object: BitMask,
    added: BitMask,
    morph: Morphology,
    regions: Regions,
    samples: Samples,
    blocks: Blocks,
    tally: WindowTally,
    window_share: f64,
}

/// How cores were decided ([`AdaptiveMasker::window_tally`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowTally {
    /// By a window with small margins.
    pub near: u64,
    /// By a window with margins as far as the steps reach.
    pub far: u64,
    /// By the whole picture (never expected).
    pub whole: u64,
    /// Pixels classified in windows, tried ones included.
    pub pixels: u64,
}

impl AdaptiveMasker {
    /// A masker with these settings (checked).
    pub fn new(settings: AdaptiveSettings) -> Result<Self, MaskError> {
        settings.validate().map_err(MaskError::BadSettings)?;
        Ok(AdaptiveMasker {
            settings,
            model: None,
            last_time: f64::NAN,
            thresholds: None,
            flags: Vec::new(),
            floor: BitMask::default(),
            object: BitMask::default(),
            added: BitMask::default(),
            morph: Morphology::new(),
            regions: Regions::new(),
            samples: Samples::default(),
            blocks: Blocks::default(),
            tally: WindowTally::default(),
            window_share: WINDOW_SHARE,
        })
    }

    /// The settings in use.
    pub fn settings(&self) -> &AdaptiveSettings {
        &self.settings
    }

    /// The thresholds used for the last frame (`None` before the first
    /// frame, or when it had no floor).
    pub fn thresholds(&self) -> Option<Thresholds> {
        self.thresholds
    }

    /// Computes the mask of `frame` (shown at `time` seconds) as a bit mask
    /// of its 2×2 blocks.
    pub fn compute_bits(&mut self, frame: &Picture<'_>, time: f64) -> Result<&BitMask, MaskError> {
        let t = self.measure_and_blend(frame, time)?;
        self.compute_bits_with(frame, time, t)
    }

    /// The order-dependent part: measures `frame`, folds it into the
    /// running model and returns the thresholds for it (`None`: no floor).
    fn measure_and_blend(&mut self, frame: &Picture<'_>, time: f64) -> Result<Option<Thresholds>, MaskError> {
        let (w, h) = picture_size(frame, time)?;
        if w == 0 || h == 0 {
            return Ok(None);
        }
        let measured = measure(frame, &self.settings, &mut self.samples, &mut self.blocks);
        let model = self.blend(measured, time).clone();
        Ok(thresholds(&model, &self.settings))
    }

    /// Masks only around cores ([`Masker::compute_step_in`]) while the
    /// windows cost at most `share` of masking the whole picture (pixels
    /// plus a fixed cost per row; [`super::window::cost`]), else the whole
    /// picture. The result is the same either way.
    pub fn with_window_share(mut self, share: f64) -> Self {
        self.window_share = share;
        self
    }

    /// The thresholds of `frame` given its `step`.
    fn thresholds_of(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
    ) -> Result<Option<Thresholds>, MaskError> {
        match step {
            MaskStep::Adaptive(t) => Ok(*t),
            // Not advanced elsewhere: this masker sees the frame in order.
            MaskStep::Stateless => self.measure_and_blend(frame, time),
        }
    }

    /// Whether windows around `cores` (with their first, small margins)
    /// would cost more than [`Self::with_window_share`] of masking the whole
    /// `w`×`h` picture (all in blocks).
    fn windows_cost_more(&self, cores: &[Rect], radii: &Radii, w: usize, h: usize) -> bool {
        let windows: usize = cores
            .iter()
            .map(|c| window::cost(c, radii.margin(false), w, h))
            .sum();
        let whole = window::cost(&Rect::whole(w, h), 0, w, h);
        windows as f64 > self.window_share * whole as f64
    }

    /// How many cores were decided by windows with small margins, with
    /// margins as far as the steps reach, and by the whole picture, since
    /// this masker was made.
    pub fn window_tally(&self) -> WindowTally {
        self.tally
    }

    /// The per-block part: the mask of `frame` with thresholds `t`.
    fn compute_bits_with(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        t: Option<Thresholds>,
    ) -> Result<&BitMask, MaskError> {
        let (pw, ph) = picture_size(frame, time)?;
        let (w, h) = block_size(pw, ph);
        self.floor.reset(w, h);
        self.object.reset(w, h);
        if w == 0 || h == 0 {
            return Ok(&self.floor);
        }
        let Some(t) = t else {
            self.thresholds = None;
            self.floor.fill_ones();
            return Ok(&self.floor);
        };
        self.thresholds = Some(t);
        self.classify(frame, Rect::whole(w, h), t);
        // The whole picture has no cut sides: it always decides.
        let _ = self.shape(&Radii::new(&self.settings, h), None);
        Ok(&self.floor)
    }

    /// The mask of `frame` with thresholds `t`, right inside each of
    /// `cores` (in blocks; elsewhere `out` keeps what it had; it is made
    /// the picture's size if it is not): each core is masked in a window
    /// around it ([`super::window`]), first with small margins, checked,
    /// then with margins as far as the mask's steps reach. Everything here
    /// is in blocks, the pixels the mask is made of.
    ///
    /// Why a window gives the whole picture's mask in its core. Steps at
    /// a cut side of the window see less than the whole picture, so
    /// nested zones, each a rectangle around the core clipped to the
    /// picture, bound where each step is still exact:
    ///
    /// * classification is per pixel: exact in the whole window;
    /// * the openings (erosion then dilation by L1 balls of radius `r`)
    ///   read `2r` around a pixel: exact in `z1`, the window less
    ///   [`Radii::shape_margin`];
    /// * the island filter runs on the opened floor cleared outside `z1`.
    ///   A region there lies inside a region of the whole picture's; if it
    ///   is long it is long there too (kept either way), and if it touches
    ///   no cut side of `z1` it *is* that region. A short region touching
    ///   a cut is undecided: if one reaches into `z2` the window fails;
    /// * the closing reads `2·fill` around a pixel: exact in `z3`, `z2`
    ///   less that, and so are the additions (closing ∧ ¬object ∧ ¬floor);
    /// * the line filter runs on the additions cleared outside `z3`, by
    ///   the same argument, and fails on an undecided region reaching into
    ///   the core. Otherwise the mask (floor ∨ additions) is exact there.
    ///
    /// With margins `m1 = island + 1` between `z2` and `z1`, and `m3 =
    /// line + 1` between the core and `z3`, a region reaching from the
    /// inner zone to a cut is at least as long as the filter keeps, so no
    /// window fails; smaller margins fail now and then and are tried
    /// first. If both failed, the whole picture would be masked.
    fn compute_cores(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        t: Option<Thresholds>,
        cores: &[Rect],
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        let (pw, ph) = picture_size(frame, time)?;
        let (w, h) = block_size(pw, ph);
        self.thresholds = t;
        let Some(t) = t else {
            out.fill(pw, ph, true);
            return Ok(());
        };
        let radii = Radii::new(&self.settings, h);
        if self.windows_cost_more(cores, &radii, w, h) {
            // Windows about as large as the picture: mask it whole.
            self.whole(frame, t, &radii);
            out.blocks_mut(pw, ph).copy_from(&self.floor);
            return Ok(());
        }
        let dst = out.blocks_mut(pw, ph);
        for core in cores {
            let core = Rect::new(core.x0, core.y0, core.x1.min(w), core.y1.min(h));
            if core.is_empty() {
                continue;
            }
            let found = self.decide(frame, t, &radii, core);
            match found {
                Some(win) => {
                    dst.copy_rect_from(&self.floor, core.relative_to(win.x0, win.y0), (win.x0, win.y0));
                }
                None => {
                    self.tally.whole += 1;
                    // Unreachable: margins as far as the steps reach always
                    // decide the core. The whole picture decides every core.
                    self.whole(frame, t, &radii);
                    out.blocks_mut(pw, ph).copy_from(&self.floor);
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Masks a window around `core` into `floor`, with small margins,
    /// then again with far ones on the sides where the small ones left a
    /// region undecided; returns the window, or `None` if it could not be
    /// decided (never expected).
    fn decide(&mut self, frame: &Picture<'_>, t: Thresholds, radii: &Radii, core: Rect) -> Option<Rect> {
        let ((near1, near3), (far1, far3)) = (radii.checked_margins(false), radii.checked_margins(true));
        let (mut m1, mut m3) = ([near1; 4], [near3; 4]);
        // Each retry widens at least one of the eight margins.
        for attempt in 0..9 {
            match self.window(frame, t, radii, core, m1, m3) {
                Ok(win) => {
                    *if attempt == 0 {
                        &mut self.tally.near
                    } else {
                        &mut self.tally.far
                    } += 1;
                    return Some(win);
                }
                Err((island, line)) => {
                    let mut wider = false;
                    for k in 0..4 {
                        wider |= (island[k] && m1[k] < far1) || (line[k] && m3[k] < far3);
                        if island[k] {
                            m1[k] = far1;
                        }
                        if line[k] {
                            m3[k] = far3;
                        }
                    }
                    if !wider {
                        break;
                    }
                }
            }
        }
        None
    }

    /// Masks the window around `core` with margins `m1` and `m3` (per
    /// side, see [`Zones`]) into `floor` and returns the window, or the
    /// sides on which the island and the line filter left regions
    /// undecided.
    fn window(
        &mut self,
        frame: &Picture<'_>,
        t: Thresholds,
        radii: &Radii,
        core: Rect,
        m1: [usize; 4],
        m3: [usize; 4],
    ) -> Result<Rect, Undecided> {
        let (pw, ph) = frame.size();
        let (w, h) = block_size(pw, ph);
        let z3 = core.grow_sides(m3, w, h);
        let z2 = z3.grow(2 * radii.fill as usize, w, h);
        let z1 = z2.grow_sides(m1, w, h);
        let win = z1.grow(radii.shape_margin(), w, h);
        self.tally.pixels += win.area() as u64;
        self.classify(frame, win, t);
        let local = |r: Rect| r.relative_to(win.x0, win.y0);
        let zones = Zones {
            z1: local(z1),
            cuts1: z1.cuts(w, h),
            z2: local(z2),
            z3: local(z3),
            cuts3: z3.cuts(w, h),
            core: local(core),
        };
        self.shape(radii, Some(&zones)).map(|()| win)
    }

    /// Masks the whole picture into `floor`.
    fn whole(&mut self, frame: &Picture<'_>, t: Thresholds, radii: &Radii) {
        let (w, h) = frame.size();
        let (bw, bh) = block_size(w, h);
        self.classify(frame, Rect::whole(bw, bh), t);
        // The whole picture has no cut sides: it always decides.
        let _ = self.shape(radii, None);
    }

    /// Classifies the blocks of `win` into `floor` and `object` (made the
    /// size of `win`).
    fn classify(&mut self, frame: &Picture<'_>, win: Rect, t: Thresholds) {
        let (w, h) = (win.width(), win.height());
        self.floor.reset(w, h);
        self.object.reset(w, h);
        let (pw, ph) = frame.size();
        let bw = block_size(pw, ph).0;
        // Narrow windows classify a few blocks past their right side, so
        // the kernel's vector loop covers the row (no scalar tail).
        let padded = w.next_multiple_of(32).min(bw - win.x0);
        self.flags.resize(padded, 0);
        for (y, src) in (win.y0..win.y1).enumerate() {
            let r = self.blocks.planes_row(frame, src, win.x0, win.x0 + padded);
            classify_blocks(r.y0, r.y1, r.u, r.v, &r.inv, t, &mut self.flags);
            pack_row(&self.flags[..w], 0, self.floor.row_mut(y));
            pack_row(&self.flags[..w], 1, self.object.row_mut(y));
        }
    }

    /// Steps 4 and after (module docs) on the classified `floor` and
    /// `object`: the whole picture (`zones` = `None`), or a window of it
    /// whose result must hold in `zones.core`; fails when it would not.
    fn shape(&mut self, r: &Radii, zones: Option<&Zones>) -> Result<(), Undecided> {
        const NONE: [bool; 4] = [false; 4];
        let m = &mut self.morph;
        m.erode(&mut self.object, r.object_open);
        m.dilate(&mut self.object, r.object_open);
        m.erode(&mut self.floor, r.open);
        m.dilate(&mut self.floor, r.open);
        match zones {
            None => self.regions.remove_mid_sized(&mut self.floor, 0, r.island),
            Some(z) => {
                self.floor.keep_only(z.z1);
                self.regions
                    .remove_mid_sized_within(&mut self.floor, 0, r.island, z.z1, z.cuts1, z.z2)
                    .map_err(|sides| (sides, NONE))?;
            }
        }
        self.added.copy_from(&self.floor);
        m.dilate(&mut self.added, r.fill);
        m.erode(&mut self.added, r.fill);
        self.added.and_not_assign(&self.object);
        self.added.and_not_assign(&self.floor);
        match zones {
            None => self.regions.remove_mid_sized(&mut self.added, r.speck, r.line),
            Some(z) => {
                self.added.keep_only(z.z3);
                self.regions
                    .remove_mid_sized_within(&mut self.added, r.speck, r.line, z.z3, z.cuts3, z.core)
                    .map_err(|sides| (NONE, sides))?;
            }
        }
        self.floor.or_assign(&self.added);
        Ok(())
    }

    /// Folds a frame's measurement into the running model.
    fn blend(&mut self, measured: FloorModel, time: f64) -> &FloorModel {
        let tau = self.settings.smoothing;
        let dt = time - self.last_time;
        self.last_time = time;
        let alpha = match &self.model {
            // A seek (backwards, or far ahead) or no history: start afresh.
            Some(_) if tau > 0.0 && dt.is_finite() && dt >= 0.0 && dt <= 10.0 * tau => {
                (1.0 - (-dt / tau).exp()) as f32
            }
            _ => 1.0,
        };
        let model = match self.model.take() {
            Some(mut m) if alpha < 1.0 => {
                let mix = |a: &mut f32, b: f32| *a += alpha * (b - *a);
                for (a, &b) in m.hue_histogram.iter_mut().zip(&measured.hue_histogram) {
                    mix(a, b);
                }
                for (a, &b) in m.peak_histogram.iter_mut().zip(&measured.peak_histogram) {
                    mix(a, b);
                }
                mix(&mut m.sat_min, measured.sat_min);
                mix(&mut m.val_min, measured.val_min);
                mix(&mut m.chroma_min, measured.chroma_min);
                mix(&mut m.chroma_median, measured.chroma_median);
                mix(&mut m.floor_fraction, measured.floor_fraction);
                mix(&mut m.grey_share, measured.grey_share);
                m
            }
            _ => measured,
        };
        self.model.insert(model)
    }
}

impl Masker for AdaptiveMasker {
    fn name(&self) -> &str {
        "adaptive"
    }

    fn compute(&mut self, frame: &Picture<'_>, time: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        let (w, h) = picture_size(frame, time)?;
        let bits = self.compute_bits(frame, time)?;
        out.blocks_mut(w, h).copy_from(bits);
        Ok(())
    }

    fn advance(&mut self, frame: &Picture<'_>, time: f64) -> Result<MaskStep, MaskError> {
        Ok(MaskStep::Adaptive(self.measure_and_blend(frame, time)?))
    }

    /// The model forgets exponentially with the smoothing's time constant:
    /// after 20 of them what came before weighs e^-20 ≈ 2·10^-9, below an
    /// f32's resolution.
    fn memory(&self) -> f64 {
        20.0 * self.settings.smoothing.max(0.0)
    }

    fn compute_step(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        let (w, h) = picture_size(frame, time)?;
        let t = self.thresholds_of(frame, time, step)?;
        let bits = self.compute_bits_with(frame, time, t)?;
        out.blocks_mut(w, h).copy_from(bits);
        Ok(())
    }

    /// In pixels: twice the margin in blocks, and one for a core's edge
    /// that splits a block.
    fn window_margin(&self, height: usize) -> Option<usize> {
        Some(2 * Radii::new(&self.settings, height.div_ceil(2)).margin(false) + 1)
    }

    fn compute_step_in(
        &mut self,
        frame: &Picture<'_>,
        time: f64,
        step: &MaskStep,
        cores: &[Rect],
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        let t = self.thresholds_of(frame, time, step)?;
        let blocks: Vec<Rect> = cores.iter().map(in_blocks).collect();
        self.compute_cores(frame, time, t, &blocks, out)
    }

    fn masks_whole_for(&self, cores: &[Rect], width: usize, height: usize) -> bool {
        let (w, h) = block_size(width, height);
        let radii = Radii::new(&self.settings, h);
        let blocks: Vec<Rect> = cores.iter().map(in_blocks).collect();
        self.windows_cost_more(&blocks, &radii, w, h)
    }

    fn doubt(&self) -> Option<MaskDoubt> {
        let t = self.thresholds?;
        // On the labelled frames (docs/mask.md) a grey artificial turf has
        // most of its floor-hued colours under `min_chroma`, a green pitch
        // a few percent at most.
        (t.grey_percent >= GREY_DOUBT).then_some(MaskDoubt::GreyFloor {
            percent: t.grey_percent,
            least: self.settings.min_chroma,
        })
    }

    fn reset(&mut self) {
        self.model = None;
        self.thresholds = None;
        self.last_time = f64::NAN;
    }
}

/// The blocks holding a rectangle of pixels.
fn in_blocks(r: &Rect) -> Rect {
    Rect::new(r.x0 / 2, r.y0 / 2, r.x1.div_ceil(2), r.y1.div_ceil(2))
}

/// The percentage of floor-hued colours under `min_chroma` from which the
/// mask is doubtful ([`MaskDoubt::GreyFloor`]).
const GREY_DOUBT: u8 = 25;

/// The default of [`AdaptiveMasker::with_window_share`]. Windows cost
/// about twice their pixels' share of the whole picture (their rows'
/// fixed costs, checks and the windows tried again with wider margins):
/// on the drone video at 720p, windows at 13 % of the picture's pixels
/// took 5 % off the whole export's CPU, at 36 % they added 7 %.
const WINDOW_SHARE: f64 = 0.35;

/// The margins a window first leaves for each region filter to be checked
/// in (pixels).
const SMALL_MARGIN: usize = 2;

/// The shape steps' radii and lengths in blocks for a frame `height`
/// blocks high (the settings' pixels at 1080 rows scale with it: a 1080-row
/// picture is 540 blocks high, so each is half as many blocks).
#[derive(Clone, Copy, Debug)]
struct Radii {
    open: u32,
    fill: u32,
    object_open: u32,
    island: usize,
    speck: usize,
    line: usize,
}

impl Radii {
    fn new(s: &AdaptiveSettings, height: usize) -> Radii {
        let scale = height as f32 / 1080.0;
        let radius = |r: f32| {
            if r <= 0.0 {
                0
            } else {
                (r * scale).round().max(1.0) as u32
            }
        };
        let length = |r: f32| (r * scale).round() as usize;
        Radii {
            open: radius(s.open_radius),
            fill: radius(s.fill_radius),
            object_open: radius(s.object_open_radius),
            island: length(s.min_floor_island),
            speck: length(s.max_speck),
            line: length(s.min_line_length).max(1),
        }
    }

    /// How far the openings reach (an erosion then a dilation each).
    fn shape_margin(&self) -> usize {
        2 * self.open.max(self.object_open) as usize
    }

    /// The margins `(m1, m3)` a window leaves on a side for the region
    /// filters (island, then line) to be checked in: small ones, which
    /// decide most cores, or (`far`) ones past which no short region can
    /// reach into what is needed, which decide every core on that side.
    fn checked_margins(&self, far: bool) -> (usize, usize) {
        if far {
            (self.island + 1, self.line + 1)
        } else {
            (SMALL_MARGIN, SMALL_MARGIN)
        }
    }

    /// The whole margin of a window around a core.
    fn margin(&self, far: bool) -> usize {
        let (m1, m3) = self.checked_margins(far);
        m3 + 2 * self.fill as usize + m1 + self.shape_margin()
    }
}

/// The cut sides (left, top, right, bottom) on which a window's island
/// and line filters left regions undecided.
type Undecided = ([bool; 4], [bool; 4]);

/// Where a window's results hold, in its own coordinates (module
/// `window`; the proof is in [`AdaptiveMasker::compute_cores`]'s docs).
#[derive(Clone, Copy, Debug)]
struct Zones {
    /// The opened floor is exact here (the window less the openings' reach).
    z1: Rect,
    cuts1: [bool; 4],
    /// The floor after the island filter is needed exactly here.
    z2: Rect,
    /// The closing's additions are exact here (`z2` less the closing's reach).
    z3: Rect,
    cuts3: [bool; 4],
    /// The mask is needed here.
    core: Rect,
}

/// Per-sample statistics of a frame's grid subsample, kept between frames
/// so measuring allocates nothing.
#[derive(Debug, Clone, Default)]
struct Samples {
    bin: Vec<u8>,
    chroma: Vec<u8>,
    value: Vec<u8>,
    sat: Vec<u8>,
}

/// The spacing of the grid a picture of `w`×`h` blocks is measured on
/// (rows and columns `step / 2`, `step / 2 + step`, …): the smallest
/// whose grid has at most `samples` blocks ([`grid_count`]). At most,
/// not about: a step rounded down could take half as many again (57,600
/// of 40,000 at 720p), all of it work in frame order.
fn grid_step(w: usize, h: usize, samples: u32) -> usize {
    let mut step = (((w * h) as f64 / f64::from(samples.max(1))).sqrt().floor() as usize).max(1);
    while grid_count(w, h, step) > samples as usize {
        step += 1;
    }
    // Rows and columns rounded up can leave room for a denser grid.
    while step > 1 && grid_count(w, h, step - 1) <= samples as usize {
        step -= 1;
    }
    step
}

/// Blocks per row and rows of the grid of spacing `step` on `w`×`h`
/// blocks, multiplied.
fn grid_count(w: usize, h: usize, step: usize) -> usize {
    w.saturating_sub(step / 2).div_ceil(step) * h.saturating_sub(step / 2).div_ceil(step)
}

/// Measures one frame's floor model on a grid subsample of its blocks.
fn measure(frame: &Picture<'_>, s: &AdaptiveSettings, sm: &mut Samples, blocks: &mut Blocks) -> FloorModel {
    let (pw, ph) = frame.size();
    let (w, h) = block_size(pw, ph);
    let step = grid_step(w, h, s.samples);
    debug_assert!(grid_count(w, h, step) <= s.samples as usize || step == 1);
    let (per_row, row_count) = (
        w.saturating_sub(step / 2).div_ceil(step),
        h.saturating_sub(step / 2).div_ceil(step),
    );
    let n = per_row * row_count;
    for v in [&mut sm.bin, &mut sm.chroma, &mut sm.value, &mut sm.sat] {
        v.resize(n, 0);
    }
    // Chroma-weighted hue histograms of the whole picture and of its lower
    // `hue_rows`; integer sums are exact at any sample count.
    let mut weights = [0u64; 180];
    let mut lower = [0u64; 180];
    let hue_from = ((1.0 - f64::from(s.hue_rows.clamp(0.0, 1.0))) * h as f64) as usize;
    for (k, y) in (step / 2..h).step_by(step).enumerate() {
        let rgb = blocks.samples(frame, y, step / 2, step, per_row);
        let at = k * per_row..(k + 1) * per_row;
        bin_chroma_value_sat_row(
            rgb,
            &mut sm.bin[at.clone()],
            &mut sm.chroma[at.clone()],
            &mut sm.value[at.clone()],
            &mut sm.sat[at.clone()],
        );
        for (&b, &c) in sm.bin[at.clone()].iter().zip(&sm.chroma[at]) {
            if c >= s.min_chroma {
                weights[b as usize] += u64::from(c);
                if y >= hue_from {
                    lower[b as usize] += u64::from(c);
                }
            }
        }
    }
    let normalised = |w: &[u64; 180]| {
        let total: u64 = w.iter().sum();
        let mut hist = [0f32; 180];
        if total > 0 {
            for (h, &w) in hist.iter_mut().zip(w) {
                *h = (w as f64 / total as f64) as f32;
            }
        }
        hist
    };
    let (hist, peak_hist) = (normalised(&weights), normalised(&lower));
    let (lo, span) = hue_window(&hist, &peak_hist, s);
    let (mut sat, mut val, mut chroma) = ([0u32; 256], [0u32; 256], [0u32; 256]);
    let (mut count, mut grey) = (0u32, 0u32);
    for i in 0..n {
        let (b, c) = (sm.bin[i], sm.chroma[i]);
        if in_window(b, lo, span) {
            if c >= s.min_chroma {
                sat[sm.sat[i] as usize] += 1;
                val[sm.value[i] as usize] += 1;
                chroma[c as usize] += 1;
                count += 1;
            } else {
                grey += 1;
            }
        }
    }
    let floor_fraction = if n == 0 { 0.0 } else { count as f32 / n as f32 };
    let grey_share = if count + grey == 0 {
        0.0
    } else {
        grey as f32 / (count + grey) as f32
    };
    FloorModel {
        hue_histogram: hist,
        peak_histogram: peak_hist,
        sat_min: s.sat_factor * quantile(&sat, count, 0.05),
        val_min: s.val_factor * quantile(&val, count, 0.02),
        chroma_min: s.chroma_factor * quantile(&chroma, count, 0.02),
        chroma_median: quantile(&chroma, count, 0.5),
        floor_fraction,
        grey_share,
    }
}

/// The `q` quantile of `count` values given as a histogram over 0..=255
/// (the smallest value with more than `q·count` values at or below it).
fn quantile(hist: &[u32; 256], count: u32, q: f32) -> f32 {
    let rank = (q * count as f32).floor() as u64;
    let mut seen = 0u64;
    for (value, &n) in hist.iter().enumerate() {
        seen += n as u64;
        if seen > rank {
            return value as f32;
        }
    }
    0.0
}

/// Per-pixel thresholds from a model, or `None` when it saw no floor.
fn thresholds(m: &FloorModel, s: &AdaptiveSettings) -> Option<Thresholds> {
    if m.floor_fraction < s.min_floor || m.hue_histogram.iter().all(|&v| v == 0.0) {
        return None;
    }
    let (hue_lo, hue_span) = hue_window(&m.hue_histogram, &m.peak_histogram, s);
    let chroma = m.chroma_min.max(s.min_chroma as f32);
    Some(Thresholds {
        hue_lo,
        hue_span,
        sat_min: m.sat_min.round().clamp(1.0, 255.0) as u8,
        val_min: m.val_min.round().clamp(1.0, 255.0) as u8,
        chroma_min: chroma.round().min(255.0) as u8,
        object_hue_lo: ((hue_lo as u32 + 180 - s.object_hue_margin as u32) % 180) as u8,
        object_hue_span: (hue_span as u32 + 2 * s.object_hue_margin as u32).min(179) as u8,
        object_chroma: (s.object_chroma_factor * m.chroma_median)
            .round()
            .clamp(s.min_object_chroma as f32, 255.0) as u8,
        grey_percent: (100.0 * m.grey_share).round().clamp(0.0, 100.0) as u8,
    })
}

/// The flags of one colour: bit 0 = floor, bit 1 = object (see the
/// module docs). Hue tests use [`hue_in_window`] and saturation
/// [`sat_at_least`]: 16-bit arithmetic, no division.
#[inline(always)]
fn classify_colour(r: u8, g: u8, b: u8, t: &Thresholds) -> u8 {
    let (p, cc, vv) = hue_fraction(r, g, b);
    let hue_ok = hue_in_window(p, cc, t.hue_lo, t.hue_span);
    let floor = hue_ok & sat_at_least(cc, vv, t.sat_min) & (vv >= t.val_min) & (cc >= t.chroma_min);
    let other_hue = !hue_in_window(p, cc, t.object_hue_lo, t.object_hue_span);
    let object = !floor & ((vv < t.val_min) | (other_hue & (cc >= t.object_chroma)));
    floor as u8 | (object as u8) << 1
}

multiversion! {
    /// Classifies a row of 2×2 blocks of a 4:2:0 picture (`y0`, `y1`: the
    /// two luma rows under them, `u`, `v`: their chroma) into `flags`
    /// ([`classify_colour`]), each block by its colour: its mean luma with
    /// its chroma, converted by `inv` ([`crate::video::yuv::blocks_to_rgb`]),
    /// in one pass without a row of colours in between.
    fn classify_blocks(
        y0: &[u8],
        y1: &[u8],
        u: &[u8],
        v: &[u8],
        inv: &InvCoeffs,
        t: Thresholds,
        flags: &mut [u8],
    ) {
        let n = flags.len().min(u.len()).min(v.len()).min(y0.len() / 2).min(y1.len() / 2);
        let (y0, y1, u, v, flags) = (&y0[..2 * n], &y1[..2 * n], &u[..n], &v[..n], &mut flags[..n]);
        for i in 0..n {
            let sum = u16::from(y0[2 * i]) + u16::from(y0[2 * i + 1]) + u16::from(y1[2 * i]) + u16::from(y1[2 * i + 1]);
            let [r, g, b] = inv.rgb(((sum + 2) >> 2) as u8, u[i], v[i]);
            flags[i] = classify_colour(r, g, b, &t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::{FLOOR, MaskImage, RgbImage};
    use crate::mask::synth::{SynthOptions, generate, iou};

    /// The mask of `frame` as an image (255 = floor).
    fn mask_of(m: &mut AdaptiveMasker, frame: &RgbImage, time: f64) -> MaskImage {
        let mut out = FloorMask::new();
        m.compute(&Picture::Rgb(frame), time, &mut out).unwrap();
        out.to_image()
    }

    /// The fused kernel classifies each block as its colour does.
    #[test]
    fn blocks_classify_as_their_colours() {
        let n = 1000;
        let y0: Vec<u8> = (0..2 * n).map(|i| (i * 37 % 256) as u8).collect();
        let y1: Vec<u8> = (0..2 * n).map(|i| (i * 91 % 256) as u8).collect();
        let u: Vec<u8> = (0..n).map(|i| (i * 13 % 256) as u8).collect();
        let v: Vec<u8> = (0..n).map(|i| (i * 29 % 256) as u8).collect();
        let t = Thresholds {
            hue_lo: 40,
            hue_span: 30,
            sat_min: 60,
            val_min: 50,
            chroma_min: 20,
            object_hue_lo: 32,
            object_hue_span: 46,
            object_chroma: 40,
            grey_percent: 0,
        };
        for space in [1, 5] {
            let inv = InvCoeffs::for_space(space, false);
            let mut rgb = vec![0u8; 3 * n];
            crate::video::yuv::blocks_to_rgb(&y0, &y1, &u, &v, &mut rgb, &inv);
            let mut flags = vec![9u8; n];
            classify_blocks(&y0, &y1, &u, &v, &inv, t, &mut flags);
            for i in 0..n {
                let want = classify_colour(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &t);
                assert_eq!(flags[i], want, "block {i}");
            }
        }
    }
    /// The grid takes at most the samples asked for, and is the densest
    /// that does.
    #[test]
    fn the_grid_takes_at_most_the_samples_asked_for() {
        for (w, h) in [(640, 360), (960, 540), (1536, 864), (3, 2), (1, 1), (4096, 2160)] {
            for samples in [100u32, 40_000, 1_000_000] {
                let step = grid_step(w, h, samples);
                assert!(
                    grid_count(w, h, step) <= samples as usize || step == 1,
                    "{w}×{h}, {samples}"
                );
                assert!(
                    step == 1 || grid_count(w, h, step - 1) > samples as usize,
                    "{w}×{h}, {samples}"
                );
            }
        }
        assert_eq!(
            grid_step(640, 360, 40_000),
            3,
            "25,560 samples at 720p, not 57,600"
        );
    }

    fn masker() -> AdaptiveMasker {
        AdaptiveMasker::new(AdaptiveSettings::default()).unwrap()
    }

    #[test]
    fn bad_settings_are_rejected() {
        for s in [
            AdaptiveSettings {
                sat_factor: f32::NAN,
                ..Default::default()
            },
            AdaptiveSettings {
                fill_radius: -1.0,
                ..Default::default()
            },
            AdaptiveSettings {
                smoothing: f64::INFINITY,
                ..Default::default()
            },
            AdaptiveSettings {
                samples: 0,
                ..Default::default()
            },
        ] {
            let e = AdaptiveMasker::new(s).unwrap_err().to_string();
            assert!(e.contains("out of range"), "{e}");
        }
    }

    #[test]
    fn grey_frame_gives_all_floor() {
        let frame = RgbImage::from_elem((20, 30, 3), 128);
        let mut m = masker();
        let out = mask_of(&mut m, &frame, 0.0);
        assert!(out.iter().all(|&v| v == 255));
        assert_eq!(m.thresholds(), None);
    }

    /// A camera above the side of a pitch: sky (chroma 115) in the top
    /// `horizon` rows, grass (chroma 50) with painted lines below, and a
    /// little noise.
    fn sky_over_grass(w: usize, h: usize, horizon: usize) -> RgbImage {
        RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
            let n = ((x * 7 + y * 13) % 9) as u8;
            let px: [u8; 3] = if y < horizon {
                [110, 165, 225] // sky: chroma 115
            } else if (x / 40) % 4 == 0 && x % 40 < 3 {
                [230, 230, 230] // a painted line
            } else {
                [60, 105, 55] // grass: chroma 50
            };
            px[c].saturating_add(n)
        })
    }

    /// The share of floor in `rows` of a `w`-wide mask.
    fn floor_share(out: &MaskImage, w: usize, rows: std::ops::Range<usize>) -> f64 {
        let n = rows.len() * w;
        out.slice(ndarray::s![rows, ..])
            .iter()
            .filter(|&&v| v == FLOOR)
            .count() as f64
            / n as f64
    }

    /// Issue 17: a camera above the side of a pitch sees sky at the top,
    /// more colourful than the grass below it. The floor's hue comes from
    /// the lower part of the picture, so the grass is floor and the sky is
    /// not; over the whole picture (the old way) the sky won.
    #[test]
    fn an_elevated_camera_seeing_sky_finds_the_grass() {
        let (w, h, horizon) = (320, 180, 60);
        let frame = sky_over_grass(w, h, horizon);
        let share = |out: &MaskImage, rows| floor_share(out, w, rows);
        let mut m = masker();
        let out = mask_of(&mut m, &frame, 0.0);
        assert!(
            share(&out, horizon..h) >= 0.95,
            "grass {}",
            share(&out, horizon..h)
        );
        assert!(share(&out, 0..horizon) <= 0.02, "sky {}", share(&out, 0..horizon));
        let mut whole = AdaptiveMasker::new(AdaptiveSettings {
            hue_rows: 1.0,
            ..Default::default()
        })
        .unwrap();
        let out = mask_of(&mut whole, &frame, 0.0);
        assert!(
            share(&out, 0..horizon) > 0.5,
            "the old way took the sky: {}",
            share(&out, 0..horizon)
        );
    }

    /// Issue 17, "this is floor": a big sky above a small strip of grass,
    /// the peak taken over the whole picture (`hue_rows` = 1), is the
    /// sky's; with the grass's hue seeded, the grass is floor and the sky
    /// is not.
    #[test]
    fn a_seeded_floor_hue_beats_the_histogram_peak() {
        let (w, h, horizon) = (320, 180, 120);
        let frame = sky_over_grass(w, h, horizon);
        let share = |out: &MaskImage, rows| floor_share(out, w, rows);
        let (p, c, _) = hue_fraction(60, 105, 55);
        let grass = super::super::hsv::hue_bin(p, c);
        let unseeded = AdaptiveSettings {
            hue_rows: 1.0,
            ..Default::default()
        };
        let out = mask_of(&mut AdaptiveMasker::new(unseeded.clone()).unwrap(), &frame, 0.0);
        assert!(share(&out, 0..horizon) > 0.5, "the peak is the sky's");
        let mut seeded = AdaptiveMasker::new(AdaptiveSettings {
            floor_hue: Some(grass),
            ..unseeded
        })
        .unwrap();
        let out = mask_of(&mut seeded, &frame, 0.0);
        let (grass_floor, sky_floor) = (share(&out, horizon..h), share(&out, 0..horizon));
        assert!(grass_floor >= 0.95, "grass {grass_floor}");
        assert!(sky_floor <= 0.02, "sky {sky_floor}");
        let t = seeded.thresholds().unwrap();
        assert!(in_window(grass, t.hue_lo, t.hue_span));
    }

    #[test]
    fn a_floor_hue_past_179_is_rejected() {
        let s = AdaptiveSettings {
            floor_hue: Some(180),
            ..Default::default()
        };
        let e = AdaptiveMasker::new(s).unwrap_err().to_string();
        assert!(e.contains("floor_hue"), "{e}");
        assert!(
            AdaptiveMasker::new(AdaptiveSettings {
                floor_hue: Some(179),
                ..Default::default()
            })
            .is_ok()
        );
    }

    /// Sessions written before `floor_hue` existed load with none and are
    /// written back without the key; a seeded hue round-trips.
    #[test]
    fn floor_hue_is_optional_in_session_files() {
        let old = "method = \"adaptive\"\nfill_radius = 7.5\nhue_rows = 0.5\n";
        let m: super::super::MaskSettings = toml::from_str(old).unwrap();
        let super::super::MaskSettings::Adaptive(s) = &m else {
            panic!("{m:?}");
        };
        assert_eq!((s.floor_hue, s.fill_radius, s.hue_rows), (None, 7.5, 0.5));
        let written = toml::to_string(&m).unwrap();
        assert!(!written.contains("floor_hue"), "{written}");
        assert_eq!(toml::from_str::<super::super::MaskSettings>(&written).unwrap(), m);
        let seeded = super::super::MaskSettings::Adaptive(AdaptiveSettings {
            floor_hue: Some(27),
            ..s.clone()
        });
        let written = toml::to_string(&seeded).unwrap();
        assert!(written.contains("floor_hue = 27"), "{written}");
        assert_eq!(
            toml::from_str::<super::super::MaskSettings>(&written).unwrap(),
            seeded
        );
    }

    #[test]
    fn synthetic_field_is_found() {
        let f = generate(&SynthOptions::default());
        let mut m = masker();
        let out = mask_of(&mut m, &f.frame, 0.0);
        let score = iou(&out, &f.floor);
        assert!(score >= 0.98, "IoU {score}");
    }

    #[test]
    fn advancing_in_order_and_computing_anywhere_gives_the_same_masks() {
        let frames: Vec<_> = [[20u8, 110, 30], [30, 140, 40], [15, 90, 25], [25, 120, 35]]
            .iter()
            .map(|&carpet| {
                generate(&SynthOptions {
                    width: 96,
                    height: 54,
                    carpet,
                    ..Default::default()
                })
                .frame
            })
            .collect();
        let mut sequential = masker();
        let mut leader = masker();
        let mut workers = [masker(), masker()];
        for (i, f) in frames.iter().enumerate() {
            let t = i as f64 * 0.04;
            let want = mask_of(&mut sequential, f, t);
            let step = leader.advance(&Picture::Rgb(f), t).unwrap();
            assert!(matches!(step, MaskStep::Adaptive(Some(_))));
            let mut got = FloorMask::new();
            workers[i % 2]
                .compute_step(&Picture::Rgb(f), t, &step, &mut got)
                .unwrap();
            let got = got.to_image();
            assert_eq!(got, want, "frame {i}");
        }
    }

    #[test]
    fn smoothing_follows_slowly_and_reset_forgets() {
        let mut m = masker();
        let green = generate(&SynthOptions {
            width: 160,
            height: 90,
            ..Default::default()
        });
        let dark = generate(&SynthOptions {
            width: 160,
            height: 90,
            carpet: [20, 70, 20],
            ..Default::default()
        });
        mask_of(&mut m, &green.frame, 0.0);
        let first = m.model.clone().unwrap();
        mask_of(&mut m, &dark.frame, 0.04);
        let blended = m.model.clone().unwrap();
        m.reset();
        mask_of(&mut m, &dark.frame, 0.08);
        let fresh = m.model.clone().unwrap();
        // After 40 ms with a 0.5 s time constant the bound moved a little.
        assert!(blended.val_min < first.val_min && blended.val_min > fresh.val_min);
        let moved = (first.val_min - blended.val_min) / (first.val_min - fresh.val_min);
        assert!((moved - (1.0 - (-0.08f32).exp())).abs() < 0.01, "{moved}");
    }
}

#[cfg(test)]
mod doubt_tests {
    use super::*;
    use crate::mask::synth::turf;

    /// A turf whose colours straddle `min_chroma` makes the mask doubtful
    /// (and says how much of it does); turfs with a little more colour, and
    /// a green pitch, do not; after a reset nothing is doubted.
    #[test]
    fn a_turf_too_grey_for_min_chroma_is_doubted() {
        let doubt_of = |colour: [u8; 3], noise: u8| {
            let mut m = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
            let mut out = FloorMask::new();
            m.compute(&Picture::Rgb(&turf(320, 180, colour, noise)), 0.0, &mut out)
                .unwrap();
            m.doubt()
        };
        match doubt_of([100, 106, 100], 4) {
            Some(MaskDoubt::GreyFloor { percent, least: 8 }) => assert!(percent >= 25, "{percent}"),
            other => panic!("{other:?}"),
        }
        for (colour, noise) in [([100, 112, 100], 8), ([100, 116, 100], 4), ([90, 130, 90], 8)] {
            assert_eq!(doubt_of(colour, noise), None, "{colour:?} ±{noise}");
        }
        let mut m = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
        let mut out = FloorMask::new();
        m.compute(&Picture::Rgb(&turf(320, 180, [100, 106, 100], 4)), 0.0, &mut out)
            .unwrap();
        assert!(m.doubt().is_some());
        m.reset();
        assert_eq!(m.doubt(), None);
    }
}
