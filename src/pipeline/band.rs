//! What a frame's drawings are drawn with: a painter and its layers —
//! the floor layer (hidden by the floor mask), the layer of entities drawn
//! above everything (and of shapes in the picture's pixels), and the layer of shapes above the floor (hidden only
//! by what stands in front of them, [`crate::draw::occlude`]) — and
//! selecting and drawing a frame's primitives onto them.

use std::time::Instant;

use super::FrameStats;
use super::kept::{self, Kept};
use crate::draw::{self, Canvas, Overlay, Painter};
use crate::image::MaskImage;
use crate::log::{Log, Shape};
use crate::mask::FloorMask;
use crate::select::{Filter, Index};
use crate::time::LogTime;

/// What the overlay is drawn with: a painter and its layers.
#[derive(Debug)]
pub(super) struct Band {
    pub(super) painter: Painter,
    pub(super) overlay: Overlay,
    /// What is drawn above the mask.
    pub(super) above_overlay: Overlay,
    /// Shapes above the floor ([`Shape::Raised`]) not drawn above the
    /// mask; their depth samples are the painter's.
    pub(super) raised: Overlay,
    /// Where `raised` shows ([`draw::occlude::raised_visibility`]).
    visibility: FloorMask,
    /// The floor mask as an image, for judging what hides `raised`.
    floor_image: MaskImage,
    /// The persistent primitives' drawing, kept while they stay.
    kept: Kept,
}

impl Band {
    pub(super) fn new() -> Band {
        Band {
            painter: Painter::new(0, 0),
            overlay: Overlay::new(0, 0),
            above_overlay: Overlay::new(0, 0),
            raised: Overlay::new(0, 0),
            visibility: FloorMask::new(),
            floor_image: MaskImage::zeros((0, 0)),
            kept: Kept::default(),
        }
    }

    /// Makes the layers ready for a `w`×`h` frame with nothing drawn.
    pub(super) fn ready(
        &mut self,
        w: usize,
        h: usize,
        above_any: bool,
        backdrop: draw::TextBackdrop,
        flatten_heights: bool,
    ) {
        if (self.overlay.width(), self.overlay.height()) != (w, h) {
            self.overlay = Overlay::new(w, h);
            self.painter.resize(w, h);
        } else {
            self.overlay.clear();
        }
        for (layer, wanted) in [(&mut self.above_overlay, above_any), (&mut self.raised, true)] {
            if wanted && (layer.width(), layer.height()) != (w, h) {
                *layer = Overlay::new(w, h);
            } else {
                layer.clear();
            }
        }
        self.painter.depth_samples.clear();
        self.painter.new_frame();
        self.painter.backdrop = backdrop;
        self.painter.flatten_heights = flatten_heights;
    }

    /// Selects the primitives for `log_time` and draws them through
    /// `calib`, each onto its layer; without a calibration, only the shapes
    /// in the picture's pixels.
    pub(super) fn draw(
        &mut self,
        what: &What<'_>,
        calib: Option<&crate::calib::Calibration>,
        log_time: LogTime,
        stats: &mut FrameStats,
    ) {
        let pixels;
        let (calib, picture_only) = match calib {
            Some(c) => (c, false),
            None => {
                if !what.picture_shapes {
                    return;
                }
                pixels = draw::pixel_calibration();
                (&*pixels, true)
            }
        };
        let t1 = Instant::now();
        let selected = what.index.select(what.log, log_time, what.threshold, what.filter);
        stats.primitives = selected.len();
        stats.instant = !selected.instant_frames().is_empty();
        let t2 = Instant::now();
        stats.select_time = t2 - t1;
        let persistent = selected.persistent_len();
        let key = kept::Key {
            positions: &selected.positions()[..persistent],
            calib,
            picture_only,
            size: (self.overlay.width(), self.overlay.height()),
            backdrop: self.painter.backdrop,
            flatten_heights: self.painter.flatten_heights,
        };
        // The persistent primitives' drawing pasted when it was kept for
        // them, else drawn (and kept when the frame before drew them too);
        // the instantaneous ones drawn over it.
        let mut primitives = selected.iter();
        let pasted = persistent > 0 && self.paste_persistent(&key, stats);
        if pasted {
            primitives.nth(persistent - 1);
        } else if persistent > 0 {
            let keep = self.kept.seen(&key);
            let before = (stats.drawn, stats.skipped);
            for p in primitives.by_ref().take(persistent) {
                self.primitive(what, calib, picture_only, p, stats);
            }
            if keep {
                self.keep_persistent(stats, before);
            }
        }
        for p in primitives {
            self.primitive(what, calib, picture_only, p, stats);
        }
        stats.draw_time = t2.elapsed();
    }
}

impl Band {
    /// Draws `p` onto its layer through `calib` (only a shape in the
    /// picture's pixels when `picture_only`), counted in `stats`.
    fn primitive(
        &mut self,
        what: &What<'_>,
        calib: &crate::calib::Calibration,
        picture_only: bool,
        p: &crate::log::Primitive,
        stats: &mut FrameStats,
    ) {
        let picture = matches!(p.shape, Shape::Picture(_));
        if picture_only && !picture {
            return;
        }
        if picture && !self.above_overlay.same_size(&self.overlay) {
            // Made only when something is drawn above the mask.
            self.above_overlay = Overlay::new(self.overlay.width(), self.overlay.height());
        }
        let layer = if picture || what.above.get(p.entity.index()).copied().unwrap_or(false) {
            &mut self.above_overlay
        } else if matches!(p.shape, Shape::Raised(_)) {
            &mut self.raised
        } else {
            &mut self.overlay
        };
        match self.painter.primitive(layer, calib, p) {
            Ok(()) => stats.drawn += 1,
            Err(why) => {
                stats.skipped += 1;
                stats.skip_reason.get_or_insert(why);
            }
        }
    }

    /// Pastes the drawing kept for `key`'s persistent primitives into the
    /// layers, with their counts into `stats`; false when none is kept.
    fn paste_persistent(&mut self, key: &kept::Key<'_>, stats: &mut FrameStats) -> bool {
        let Some(drawn) = self.kept.get(key) else {
            return false;
        };
        let [floor, raised, above] = &drawn.layers;
        self.overlay.paste_drawn(floor);
        self.raised.paste_drawn(raised);
        self.above_overlay.paste_drawn(above);
        self.painter.depth_samples.extend_from_slice(&drawn.depth_samples);
        stats.drawn += drawn.drawn;
        stats.skipped += drawn.skipped;
        if let Some(why) = drawn.skip_reason {
            stats.skip_reason.get_or_insert(why);
        }
        true
    }

    /// Keeps what the persistent primitives drew (all that is drawn so
    /// far), with their counts: those of `stats` beyond `before` (drawn,
    /// skipped).
    fn keep_persistent(&mut self, stats: &FrameStats, before: (usize, usize)) {
        let drawn = self.kept.keep();
        let [floor, raised, above] = &mut drawn.layers;
        self.overlay.copy_drawn(floor);
        self.raised.copy_drawn(raised);
        self.above_overlay.copy_drawn(above);
        drawn.depth_samples.clear();
        drawn.depth_samples.extend_from_slice(&self.painter.depth_samples);
        drawn.drawn = stats.drawn - before.0;
        drawn.skipped = stats.skipped - before.1;
        drawn.skip_reason = stats.skip_reason;
    }

    /// Whether a persistent drawing is kept (for tests).
    #[cfg(test)]
    pub(super) fn has_kept(&self) -> bool {
        self.kept.has_drawn()
    }

    /// Forgets the kept persistent drawing (the log, the filter or the
    /// settings changed).
    pub(super) fn forget_kept(&mut self) {
        self.kept.forget();
    }

    /// The layers that change the picture where they are not empty.
    pub(super) fn layers(&self) -> [&Overlay; 3] {
        [&self.overlay, &self.raised, &self.above_overlay]
    }

    /// Composites the raised layer onto `canvas`: where `floor` says floor,
    /// and elsewhere where nothing stands in front of the drawing (`None`:
    /// everywhere). `standing` is the height of standing things in world
    /// units.
    pub(super) fn composite_raised(
        &mut self,
        canvas: &mut Canvas<'_, '_>,
        floor: Option<&FloorMask>,
        calib: Option<&crate::calib::Calibration>,
        standing: f64,
    ) -> Result<(), draw::DrawError> {
        if self.raised.is_empty() {
            return Ok(());
        }
        match (floor, calib) {
            (Some(floor), Some(calib)) if calib.is_full_camera() => {
                floor.write_image(&mut self.floor_image);
                let (w, h) = (floor.width(), floor.height());
                draw::occlude::raised_visibility(
                    &self.floor_image,
                    &self.raised,
                    &self.painter.depth_samples,
                    calib,
                    standing,
                    self.visibility.pixels_mut(w, h),
                );
                canvas.composite(&self.raised, Some(&self.visibility))
            }
            // Flattened onto the floor (a calibration that knows only the
            // floor): hidden as floor drawings are.
            (Some(floor), _) => canvas.composite(&self.raised, Some(floor)),
            (None, _) => canvas.composite(&self.raised, None),
        }
    }
}

/// Straight RGBA rows into `out` from the same layers composited over
/// `black` (colour × alpha) and over `white` (that plus 255 × (1 − alpha)):
/// compositing is linear in what is under it, so the two give each
/// pixel's coverage and colour, up to rounding.
pub(super) fn unmix(black: &crate::image::RgbImage, white: &crate::image::RgbImage, out: &mut Vec<u8>) {
    out.clear();
    let (Some(b), Some(wh)) = (black.as_slice(), white.as_slice()) else {
        return;
    };
    out.reserve(b.len() / 3 * 4);
    for (b, wh) in b.chunks_exact(3).zip(wh.chunks_exact(3)) {
        let through = (0..3).map(|i| u32::from(wh[i].saturating_sub(b[i]))).sum::<u32>() / 3;
        let a = 255 - through.min(255);
        for &c in b {
            // Transparent pixels are black.
            out.push(
                (u32::from(c) * 255 + a / 2)
                    .checked_div(a)
                    .map_or(0, |v| v.min(255)) as u8,
            );
        }
        out.push(a as u8);
    }
}

/// What is drawn: the pipeline's log and selection, borrowed apart from
/// its layers, masker and mask, so that the mask can be computed on
/// another thread meanwhile.
pub(super) struct What<'a> {
    pub(super) index: &'a Index,
    pub(super) log: &'a Log,
    pub(super) filter: &'a Filter,
    pub(super) threshold: f64,
    pub(super) above: &'a [bool],
    /// The log has shapes in the picture's pixels.
    pub(super) picture_shapes: bool,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::calib::Calibration;
    use crate::geom::Vec2;
    use crate::image::RgbImage;
    use crate::log::{FrameTime, Primitive, Rgba, Style};
    use crate::pipeline::Pipeline;
    use crate::pipeline::tests::{LeftHalf, frame, settings};

    /// A shape in the picture's pixels lands on those pixels whatever the
    /// calibration, and shows where the mask hides floor drawings.
    #[test]
    fn picture_shapes_are_drawn_at_their_pixels_over_the_mask() {
        let mut log = Log::new();
        let e = log.entities.intern("boxes");
        let red = Rgba::from_rgb(0xff0000);
        let disc = |x: f64| Primitive {
            shape: Shape::picture(Shape::Circle {
                center: Vec2::new(x, 20.0),
                radius: 4.0,
            }),
            style: Style {
                fill: Some(red),
                ..Style::color(red)
            },
            entity: e,
            level: 0,
        };
        // One on the masked (left) half, one on the floor half.
        log.push_frame(FrameTime::Instant(10.0), [disc(20.0), disc(60.0)]);
        let mut s = settings();
        // A camera that puts the world's origin far outside the picture.
        s.calibration = Some(
            Calibration::from_homography([[0.01, 0.0, 5000.0], [0.0, -0.01, 3000.0], [0.0, 0.0, 1.0]])
                .unwrap(),
        );
        let mut p = Pipeline::new(Arc::new(log), &s)
            .unwrap()
            .with_masker(Box::new(LeftHalf));
        let mut f = frame(0.0);
        let stats = p.process(&mut f).unwrap();
        assert_eq!((stats.drawn, stats.skipped), (2, 0));
        for x in [20, 60] {
            assert_eq!(f.image[[20, x, 0]], 255, "centre of the disc at x = {x}");
            assert_eq!(f.image[[20, x, 1]], 0);
        }
        // Nothing beyond the discs.
        assert_eq!(f.image[[20, 40, 0]], 0);
        assert_eq!(f.image[[5, 20, 0]], 0);
        assert_eq!(f.image[[20, 26, 0]], 0);
        // Without a calibration too, and only they: a floor shape beside
        // them is not drawn.
        let mut log = Log::new();
        log.entities = p.log().entities.clone();
        let mut prims = p.log().primitives.clone();
        prims.push(Primitive {
            shape: Shape::Circle {
                center: Vec2::new(40.0, 20.0),
                radius: 4.0,
            },
            ..prims[0].clone()
        });
        log.push_frame(FrameTime::Instant(10.0), prims);
        s.calibration = None;
        let mut p = Pipeline::new(Arc::new(log), &s).unwrap();
        let mut f = frame(0.0);
        let stats = p.process(&mut f).unwrap();
        assert_eq!(stats.drawn, 2);
        assert_eq!(f.image[[20, 60, 0]], 255);
        assert_eq!(f.image[[20, 40, 0]], 0, "a floor shape needs a calibration");
    }

    /// A colour over black and over white unmixes to itself.
    #[test]
    fn unmixing_recovers_colour_and_coverage() {
        for (rgb, a) in [
            ([200u8, 40, 10], 255u32),
            ([0, 128, 255], 128),
            ([90, 90, 90], 20),
            ([0, 0, 0], 0),
        ] {
            let over = |under: u8| {
                RgbImage::from_shape_fn((1, 1, 3), |(_, _, c)| {
                    ((u32::from(rgb[c]) * a + u32::from(under) * (255 - a) + 127) / 255) as u8
                })
            };
            let mut out = Vec::new();
            unmix(&over(0), &over(255), &mut out);
            assert!((i32::from(out[3]) - a as i32).abs() <= 1, "{out:?} for alpha {a}");
            if a >= 128 {
                for c in 0..3 {
                    assert!(
                        (i32::from(out[c]) - i32::from(rgb[c])).abs() <= 2,
                        "{out:?} for {rgb:?}"
                    );
                }
            }
        }
    }
}
