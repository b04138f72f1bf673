//! Text: laying out a string with the bundled font (DejaVu Sans Bold,
//! subset; licence in `assets/FONT-LICENSE.txt`) and stamping cached glyph
//! coverage bitmaps into a [`Coverage`] layer.
//!
//! Glyphs are rasterized once per (glyph, size in ¼ px, sub-pixel offset in
//! ¼ px) and reused; the cache is bounded in bytes.

use std::collections::HashMap;

use ab_glyph::{Font, FontRef, GlyphId, PxScale, ScaleFont, point};

use super::raster::Coverage;

/// The font every text primitive is drawn with.
static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans-Bold-subset.ttf");

/// Largest text size drawn, in pixels; larger text is refused (its glyph
/// bitmaps would be unreasonably big).
pub const MAX_TEXT_PX: f64 = 1024.0;

/// Smallest text size drawn, in pixels (below this it would be unreadable).
pub const MIN_TEXT_PX: f64 = 2.0;

/// Bytes of glyph bitmaps kept before the cache is emptied.
const CACHE_BYTES: usize = 16 << 20;

/// Sub-pixel steps per pixel for glyph positions and sizes.
const STEPS: f64 = 4.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct GlyphKey {
    id: u16,
    size_q: u32,
    fx: u8,
    fy: u8,
}

#[derive(Clone, Debug)]
struct GlyphBitmap {
    left: i64,
    top: i64,
    w: usize,
    h: usize,
    cov: Vec<u8>,
}

/// Lays out and rasterizes text with the bundled font.
#[derive(Debug)]
pub struct TextRenderer {
    font: Option<FontRef<'static>>,
    cache: HashMap<GlyphKey, GlyphBitmap>,
    cache_bytes: usize,
}

impl Default for TextRenderer {
    fn default() -> Self {
        Self::new()
    }
}

impl TextRenderer {
    pub fn new() -> Self {
        TextRenderer {
            font: FontRef::try_from_slice(FONT_BYTES).ok(),
            cache: HashMap::new(),
            cache_bytes: 0,
        }
    }

    /// Whether the bundled font could be read (it always should).
    pub fn has_font(&self) -> bool {
        self.font.is_some()
    }

    /// Width of the widest line and total height of `text` at `size` px.
    pub fn measure(&self, text: &str, size: f64) -> Option<(f64, f64)> {
        let font = self.font.as_ref()?;
        let sf = font.as_scaled(PxScale::from(size as f32));
        let mut widest = 0.0f64;
        let mut lines = 0usize;
        for line in text.split('\n') {
            lines += 1;
            let mut caret = 0.0f64;
            let mut prev: Option<GlyphId> = None;
            for ch in line.chars() {
                let id = sf.glyph_id(ch);
                if let Some(p) = prev {
                    caret += sf.kern(p, id) as f64;
                }
                caret += sf.h_advance(id) as f64;
                prev = Some(id);
            }
            widest = widest.max(caret);
        }
        let line_h = (sf.height() + sf.line_gap()) as f64;
        Some((widest, line_h * lines as f64))
    }

    /// Adds `text` with the left end of its first baseline at `anchor`
    /// (image coordinates, pixel centres at integers) and glyph height
    /// `size` px to `cov`. Lines after a `\n` go below. Glyphs entirely
    /// outside the layer are skipped without being rasterized. Returns the
    /// number of glyphs stamped.
    pub fn draw(&mut self, cov: &mut Coverage, anchor: (f64, f64), text: &str, size: f64) -> usize {
        let Some(font) = self.font.clone() else {
            return 0;
        };
        if !(size.is_finite() && (MIN_TEXT_PX..=MAX_TEXT_PX).contains(&size)) {
            return 0;
        }
        let size_q = (size * STEPS).round();
        let size = size_q / STEPS;
        let sf = font.as_scaled(PxScale::from(size as f32));
        let line_h = (sf.height() + sf.line_gap()) as f64;
        let (w, h) = (cov.width() as f64, cov.height() as f64);
        // Area coordinates: pixel x covers [x, x + 1).
        let (x0, mut baseline) = (anchor.0 + 0.5, anchor.1 + 0.5);
        let mut stamped = 0;
        for line in text.split('\n') {
            let above = baseline - sf.ascent() as f64 - size;
            let below = baseline - sf.descent() as f64 + size;
            if above > h {
                break;
            }
            if below >= 0.0 {
                let mut caret = x0;
                let mut prev: Option<GlyphId> = None;
                for ch in line.chars() {
                    if caret > w {
                        break;
                    }
                    let id = sf.glyph_id(ch);
                    if let Some(p) = prev {
                        caret += sf.kern(p, id) as f64;
                    }
                    let advance = sf.h_advance(id) as f64;
                    prev = Some(id);
                    if caret + advance + size >= 0.0 && !ch.is_whitespace() {
                        stamped += self.stamp_glyph(&font, cov, id, size_q as u32, caret, baseline);
                    }
                    caret += advance;
                }
            }
            baseline += line_h;
        }
        stamped
    }

    fn stamp_glyph(
        &mut self,
        font: &FontRef<'static>,
        cov: &mut Coverage,
        id: GlyphId,
        size_q: u32,
        x: f64,
        y: f64,
    ) -> usize {
        let (ix, iy) = (x.floor(), y.floor());
        let fx = ((x - ix) * STEPS).floor().min(STEPS - 1.0) as u8;
        let fy = ((y - iy) * STEPS).floor().min(STEPS - 1.0) as u8;
        let key = GlyphKey {
            id: id.0,
            size_q,
            fx,
            fy,
        };
        if !self.cache.contains_key(&key) {
            let bitmap = rasterize(font, key);
            if self.cache_bytes + bitmap.cov.len() > CACHE_BYTES {
                self.cache.clear();
                self.cache_bytes = 0;
            }
            self.cache_bytes += bitmap.cov.len();
            self.cache.insert(key, bitmap);
        }
        match self.cache.get(&key) {
            Some(g) if g.w > 0 && g.h > 0 => {
                cov.stamp(ix as i64 + g.left, iy as i64 + g.top, g.w, g.h, &g.cov);
                1
            }
            _ => 0,
        }
    }
}

fn rasterize(font: &FontRef<'static>, key: GlyphKey) -> GlyphBitmap {
    let size = key.size_q as f32 / STEPS as f32;
    let pos = point(key.fx as f32 / STEPS as f32, key.fy as f32 / STEPS as f32);
    let glyph = GlyphId(key.id).with_scale_and_position(PxScale::from(size), pos);
    let empty = GlyphBitmap {
        left: 0,
        top: 0,
        w: 0,
        h: 0,
        cov: Vec::new(),
    };
    let Some(outlined) = font.outline_glyph(glyph) else {
        return empty;
    };
    let b = outlined.px_bounds();
    let (w, h) = (b.width().max(0.0) as usize, b.height().max(0.0) as usize);
    // Bounded by MAX_TEXT_PX: a glyph is at most a few times its size.
    let mut cov = vec![0u8; w * h];
    outlined.draw(|x, y, c| {
        if let Some(v) = cov.get_mut(y as usize * w + x as usize) {
            *v = (c.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
        }
    });
    GlyphBitmap {
        left: b.min.x as i64,
        top: b.min.y as i64,
        w,
        h,
        cov,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_font_loads_and_draws_above_the_baseline() {
        let mut t = TextRenderer::new();
        assert!(t.has_font());
        let mut cov = Coverage::new(200, 60);
        assert_eq!(t.draw(&mut cov, (10.0, 40.0), "Hi θ→", 24.0), 4);
        let mut ink = Vec::new();
        cov.drain(|y, x0, _, row| {
            for (i, &v) in row.iter().enumerate() {
                if v > 128 {
                    ink.push((x0 + i, y));
                }
            }
        });
        assert!(ink.len() > 100, "{}", ink.len());
        // Capital letters sit on the baseline and rise about 0.7 × size.
        assert!(
            ink.iter()
                .all(|&(x, y)| (10..200).contains(&x) && (15..=46).contains(&y))
        );
        assert!(ink.iter().any(|&(_, y)| y <= 27));
    }

    #[test]
    fn measure_grows_with_text_and_lines() {
        let t = TextRenderer::new();
        let (w1, h1) = t.measure("ab", 20.0).unwrap();
        let (w2, h2) = t.measure("abab\nx", 20.0).unwrap();
        assert!(w2 > 1.8 * w1 && h2 > 1.8 * h1);
    }

    #[test]
    fn refuses_absurd_sizes_and_skips_offscreen_glyphs() {
        let mut t = TextRenderer::new();
        let mut cov = Coverage::new(100, 100);
        assert_eq!(t.draw(&mut cov, (10.0, 50.0), "x", f64::NAN), 0);
        assert_eq!(t.draw(&mut cov, (10.0, 50.0), "x", 1e9), 0);
        assert_eq!(t.draw(&mut cov, (10.0, 50.0), "x", 0.5), 0);
        assert_eq!(t.draw(&mut cov, (10.0, 50.0), "", 12.0), 0);
        let long = "w".repeat(1_000_000);
        assert!(t.draw(&mut cov, (10.0, 50.0), &long, 12.0) < 20);
        assert_eq!(t.draw(&mut cov, (-1e12, 50.0), "abc", 12.0), 0);
        assert_eq!(t.draw(&mut cov, (10.0, 1e12), "abc", 12.0), 0);
    }
}
