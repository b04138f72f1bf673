//! Masking only where it matters: the rectangles a floor mask is needed in
//! (the *cores*: where an overlay was drawn) and the windows around them
//! that a mask method must see to decide those pixels exactly.
//!
//! A drawing is composited only where its overlay has coverage, so the
//! mask decides nothing elsewhere. The pixels a drawing touches are given
//! as spans of rows (the overlay's dirty chunks); [`plan_cores`] gathers
//! them into a few rectangles, in bands of rows, merging neighbours when
//! one window around both costs less than two windows each with its own
//! margin. A method then works on each core grown by its own reach
//! ([`Rect::grow`]), clipped to the picture: edges of a window inside the
//! picture are *cut* ([`Rect::cuts`]), and only there do its results differ
//! from the whole picture's, within the reach of the cut.

pub use crate::floor::Rect;

/// Rows per band when gathering spans into cores.
const BAND: usize = 32;

/// What masking one row of a window costs beyond its pixels, in pixels.
const ROW_COST: usize = 64;

/// What masking the window around `core` (grown by `margin`, clipped to
/// a `width`×`height` picture) costs, in pixels: its pixels, and per row
/// a fixed cost worth about `ROW_COST` pixels.
pub fn cost(core: &Rect, margin: usize, width: usize, height: usize) -> usize {
    let g = core.grow(margin, width, height);
    g.height() * (g.width() + ROW_COST)
}

/// Gathers the spans `(y, x0, x1)` (pixels `x0..x1` of row `y`, rows in
/// any order) of a `width`×`height` picture into rectangles that cover
/// every span, for windows grown by `margin`: spans of a band of rows
/// closer than `2·margin` share a rectangle, and rectangles of successive
/// bands merge when the window around both costs no more than their two
/// windows (pixels, plus a fixed cost per row). Writes them into `out` (cleared first).
pub fn plan_cores(
    spans: impl FnOnce(&mut dyn FnMut(usize, usize, usize)),
    width: usize,
    height: usize,
    margin: usize,
    out: &mut Vec<Rect>,
) {
    out.clear();
    if width == 0 || height == 0 {
        return;
    }
    // Per band, the spans as rectangles one band high, then sorted and
    // joined along x.
    let bands = height.div_ceil(BAND);
    let mut per_band: Vec<Vec<Rect>> = vec![Vec::new(); bands];
    spans(&mut |y, x0, x1| {
        if y < height && x0 < x1.min(width) {
            per_band[y / BAND].push(Rect::new(x0, y, x1.min(width), y + 1));
        }
    });
    let window = |r: &Rect| cost(r, margin, width, height);
    // Rectangles of the band above, still open to growing downwards.
    let mut open: Vec<usize> = Vec::new();
    for mut band in per_band {
        if band.is_empty() {
            open.clear();
            continue;
        }
        band.sort_unstable_by_key(|r| r.x0);
        let mut joined: Vec<Rect> = Vec::with_capacity(band.len());
        for r in band {
            match joined.last_mut() {
                Some(last) if r.x0 <= last.x1 + 2 * margin + ROW_COST => *last = last.union(&r),
                _ => joined.push(r),
            }
        }
        let mut next_open = Vec::with_capacity(joined.len());
        for r in joined {
            let merge = open.iter().copied().find(|&i| {
                let o = &out[i];
                r.x0 < o.x1 && o.x0 < r.x1 && window(&o.union(&r)) <= window(o) + window(&r)
            });
            match merge {
                Some(i) => {
                    out[i] = out[i].union(&r);
                    next_open.push(i);
                }
                None => {
                    out.push(r);
                    next_open.push(out.len() - 1);
                }
            }
        }
        next_open.sort_unstable();
        next_open.dedup();
        open = next_open;
    }
    merge_overlapping(out, &window);
}

/// Merges rectangles whose windows overlap while one window around both
/// is no larger than their two (each pass over all pairs, until none
/// merge; only for a few dozen rectangles, where it matters most).
fn merge_overlapping(cores: &mut Vec<Rect>, window: &dyn Fn(&Rect) -> usize) {
    const MAX: usize = 96;
    if cores.len() > MAX {
        return;
    }
    let mut merged = true;
    while merged {
        merged = false;
        let mut i = 0;
        while i < cores.len() {
            let mut j = i + 1;
            while j < cores.len() {
                let (a, b) = (cores[i], cores[j]);
                let u = a.union(&b);
                if window(&u) <= window(&a) + window(&b) {
                    cores[i] = u;
                    cores.swap_remove(j);
                    merged = true;
                } else {
                    j += 1;
                }
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plan(spans: &[(usize, usize, usize)], w: usize, h: usize, margin: usize) -> Vec<Rect> {
        let mut out = Vec::new();
        plan_cores(
            |f| {
                for &(y, x0, x1) in spans {
                    f(y, x0, x1)
                }
            },
            w,
            h,
            margin,
            &mut out,
        );
        out
    }

    #[test]
    fn a_vertical_line_is_one_core_and_a_ring_is_not_the_whole_picture() {
        let line: Vec<_> = (10..300).map(|y| (y, 100, 108)).collect();
        assert_eq!(plan(&line, 640, 360, 20), vec![Rect::new(100, 10, 108, 300)]);
        // The outline of a picture-sized rectangle: its sides stay apart.
        let mut ring: Vec<_> = (0..360).flat_map(|y| [(y, 0, 8), (y, 632, 640)]).collect();
        ring.extend([(0, 0, 640), (359, 0, 640)]);
        let cores = plan(&ring, 640, 360, 20);
        let area: usize = cores.iter().map(|r| r.grow(20, 640, 360).area()).sum();
        assert!(area < 640 * 360 / 2, "{cores:?}");
        // Two dots far apart are two cores; close together, one.
        assert_eq!(plan(&[(50, 10, 18), (50, 300, 308)], 640, 360, 20).len(), 2);
        assert_eq!(plan(&[(50, 10, 18), (52, 40, 48)], 640, 360, 20).len(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn cores_cover_every_span(spans in proptest::collection::vec((0usize..100, 0usize..150, 1usize..40), 0..40),
                                  margin in 0usize..30) {
            let spans: Vec<_> = spans.into_iter().map(|(y, x, n)| (y, x, (x + n).min(150))).collect();
            let cores = plan(&spans, 150, 100, margin);
            for &(y, x0, x1) in &spans {
                for x in x0..x1 {
                    prop_assert!(cores.iter().any(|r| (r.x0..r.x1).contains(&x) && (r.y0..r.y1).contains(&y)),
                        "({x}, {y}) in no core of {cores:?}");
                }
            }
            for r in &cores {
                prop_assert!(!r.is_empty() && r.x1 <= 150 && r.y1 <= 100);
            }
        }
    }

    use crate::image::{MaskImage, RgbImage};
    use crate::mask::synth::{SynthOptions, generate};
    use crate::mask::{AdaptiveMasker, AdaptiveSettings, FloorMask, Masker};
    use crate::video::Picture;

    /// A frame of random pixels from a few colours (carpet, white, dark,
    /// red), in blobs of `grain` pixels: many small regions of every kind.
    fn speckle(w: usize, h: usize, seed: u64, grain: usize) -> RgbImage {
        let colours = [
            [40u8, 140, 40],
            [40, 140, 40],
            [230, 230, 230],
            [20, 20, 20],
            [200, 30, 30],
        ];
        let g = grain.max(1);
        let cell = |x: usize, y: usize| {
            let mut s = (seed ^ ((x / g) as u64) << 32 ^ (y / g) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            s ^= s >> 29;
            s = s.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            s ^= s >> 32;
            colours[(s % colours.len() as u64) as usize]
        };
        RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| cell(x, y)[c])
    }

    /// Settings whose lengths are that many pixels at this frame height
    /// (half as many blocks, which the adaptive mask is made of).
    fn settings_in_pixels(
        h: usize,
        open: f32,
        fill: f32,
        island: f32,
        line: f32,
        speck: f32,
    ) -> AdaptiveSettings {
        let k = 1080.0 / h as f32;
        AdaptiveSettings {
            open_radius: open * k,
            object_open_radius: open * k,
            fill_radius: fill * k,
            min_floor_island: island * k,
            min_line_length: line * k,
            max_speck: speck * k,
            ..AdaptiveSettings::default()
        }
    }

    /// The mask in `cores` equals the whole mask there; returns the tally.
    fn check(
        frame: &RgbImage,
        s: &AdaptiveSettings,
        cores: &[Rect],
    ) -> Result<crate::mask::adaptive::WindowTally, TestCaseError> {
        let pic = Picture::Rgb(frame);
        let mut whole = AdaptiveMasker::new(s.clone()).unwrap();
        let step = whole.advance(&pic, 0.0).unwrap();
        let mut want = FloorMask::new();
        whole.compute_step(&pic, 0.0, &step, &mut want).unwrap();
        let want = want.to_image();
        let mut parts = AdaptiveMasker::new(s.clone())
            .unwrap()
            .with_window_share(f64::INFINITY);
        let mut got = FloorMask::from_image(MaskImage::from_elem((3, 3), 7));
        parts.compute_step_in(&pic, 0.0, &step, cores, &mut got).unwrap();
        let got = got.to_image();
        prop_assert_eq!(got.dim(), want.dim());
        for r in cores {
            for y in r.y0..r.y1.min(want.dim().0) {
                for x in r.x0..r.x1.min(want.dim().1) {
                    prop_assert_eq!(got[[y, x]], want[[y, x]], "pixel ({}, {}) in core {:?}", x, y, r);
                }
            }
        }
        Ok(parts.window_tally())
    }

    fn arb_cores(w: usize, h: usize) -> impl Strategy<Value = Vec<Rect>> {
        proptest::collection::vec((0..w, 0..h, 1usize..60, 1usize..40), 1..6).prop_map(move |v| {
            v.into_iter()
                .map(|(x, y, cw, ch)| Rect::new(x, y, (x + cw).min(w), (y + ch).min(h)))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn masking_cores_equals_masking_the_whole_frame(
            (w, h, cores) in (64usize..360, 100usize..240).prop_flat_map(|(w, h)| (Just(w), Just(h), arb_cores(w, h))),
            seed in 0u64..1000,
            speckled: bool,
            grain in 1usize..6,
            open in 1f32..3.0,
            fill in 1f32..14.0,
            island in 0f32..30.0,
            line in 1f32..40.0,
            speck in 0f32..8.0,
        ) {
            let frame = if speckled {
                speckle(w, h, seed, grain)
            } else {
                generate(&SynthOptions { width: w, height: h, seed, noise: (seed % 40) as u8, ..Default::default() }).frame
            };
            check(&frame, &settings_in_pixels(h, open, fill, island, line, speck), &cores)?;
        }
    }

    #[test]
    fn undecided_windows_are_masked_again_with_wider_margins() {
        // Coarse speckle has many short regions at every window edge.
        let (w, h) = (320, 200);
        let s = settings_in_pixels(h, 1.0, 4.0, 12.0, 30.0, 2.0);
        let mut far = 0;
        for seed in 0..8 {
            let frame = speckle(w, h, seed, 4);
            let cores = [
                Rect::new(40, 30, 60, 50),
                Rect::new(150, 90, 158, 140),
                Rect::new(0, 0, 20, 10),
            ];
            let tally = check(&frame, &s, &cores).unwrap();
            assert_eq!(tally.whole, 0);
            far += tally.far;
        }
        assert!(far > 0, "no window needed the wider margins");
        // The default settings on a field decide most cores the first time.
        let frame = generate(&SynthOptions::default()).frame;
        let cores: Vec<_> = (0..10)
            .map(|i| Rect::new(80 * i + 10, 40 * i + 20, 80 * i + 30, 40 * i + 40))
            .collect();
        let tally = check(&frame, &AdaptiveSettings::default(), &cores).unwrap();
        assert!(tally.near >= 8 && tally.whole == 0, "{tally:?}");
    }
}
