//! Drawing a [`Match`] snapshot as a top-down picture, and its exact floor
//! mask: the field (striped grass, painted marks and goals) is drawn once
//! into a background; each picture copies it and draws the bodies and the
//! ball over it with the overlay rasterizer ([`crate::draw`]), so a
//! rendered match looks like the rest of underlay's drawings.
//!
//! The caption (teams, score, play mode, clock) has a band of its own at
//! the top of the picture, and the field with its margin is fitted below
//! it ([`View::fit_below`]): the caption never covers a player, not even
//! one the server parked beside the field (a 2D server keeps players not
//! on the pitch 3 m beyond the touch line, inside the margin).
//!
//! A body is a disc in its team's colour; its number is written over it in
//! the ink that contrasts more with the shirt (black on a light one, white
//! with a dark outline on a dark one: at least 4.58 to 1 on any colour),
//! its heading a dark wedge outside the disc and its gaze a line beyond
//! it, so neither crosses the number.
//!
//! The [`View`] maps world to pixels as a similarity (uniform scale, world
//! y up on screen), so the picture of a 2D game matches its monitor's. Its
//! [`Calibration`] is what the log's drawings are projected with.
//!
//! The mask is floor (255) everywhere but under the bodies and the ball as
//! drawn (at least half covered) and the caption's band, so drawings go
//! under the players exactly. Bodies smaller than [`Look::min_body_px`]
//! are drawn at that size to stay visible; the mask follows what is drawn.

use crate::calib::Calibration;
use crate::draw::{Overlay, Painter};
use crate::geom::vec2::dir;
use crate::geom::{PixelPoint, Vec2};
use crate::image::{FLOOR, MaskImage, RgbImage};
use crate::log::{EntityId, Primitive, Rgba, Shape, Style, ThicknessUnit};

use super::model::{Body, Card, Field, Mark, Match, Snapshot, Team};

/// The largest picture side the renderer makes.
pub const MAX_SIDE: usize = 8192;

/// Errors setting up a renderer.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("pictures of {width}×{height} pixels are not possible (16 to {MAX_SIDE} each way)")]
    BadSize { width: usize, height: usize },
    #[error("the field ({length} × {width} {unit}) has no area to show")]
    BadField { length: f64, width: f64, unit: String },
}

/// World ↔ picture: a uniform scale with world y up, centred.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub width: usize,
    pub height: usize,
    /// Pixels per world unit.
    pub scale: f64,
    /// The world point at the picture's centre.
    pub center: Vec2,
}

impl View {
    /// The view of `width`×`height` pixels showing the rectangle
    /// `bounds` (min, max corners) whole, centred.
    pub fn fit(bounds: (Vec2, Vec2), width: usize, height: usize) -> Option<View> {
        View::fit_below(bounds, width, height, 0)
    }

    /// Like [`View::fit`], in the part of the picture below its top
    /// `band` rows (kept for the caption).
    pub fn fit_below(bounds: (Vec2, Vec2), width: usize, height: usize, band: usize) -> Option<View> {
        let size = bounds.1 - bounds.0;
        if !(size.x > 0.0 && size.y > 0.0 && size.is_finite()) || width == 0 || height <= band {
            return None;
        }
        let scale = (width as f64 / size.x).min((height - band) as f64 / size.y);
        if !(scale.is_finite() && scale > 0.0) {
            return None;
        }
        // The rectangle's middle at the middle of the rows below the band.
        let center = bounds.0.lerp(bounds.1, 0.5) + Vec2::new(0.0, band as f64 / 2.0 / scale);
        Some(View {
            width,
            height,
            scale,
            center,
        })
    }

    /// The pixel (centres at integers) showing world point `p`.
    pub fn to_pixel(&self, p: Vec2) -> PixelPoint {
        let (cx, cy) = ((self.width as f64 - 1.0) / 2.0, (self.height as f64 - 1.0) / 2.0);
        Vec2::new(
            cx + (p.x - self.center.x) * self.scale,
            cy - (p.y - self.center.y) * self.scale,
        )
    }

    /// The world point shown at pixel `px`.
    pub fn to_world(&self, px: PixelPoint) -> Vec2 {
        let (cx, cy) = ((self.width as f64 - 1.0) / 2.0, (self.height as f64 - 1.0) / 2.0);
        Vec2::new(
            self.center.x + (px.x - cx) / self.scale,
            self.center.y - (px.y - cy) / self.scale,
        )
    }

    /// The view as a calibration (world → pixel homography); `None` for
    /// a scale no homography can hold. It is a full camera: a pinhole
    /// straight above the picture's centre ([`Self::camera_height`]), which
    /// sees the floor exactly as the similarity does and shows drawings
    /// above the floor where such a camera would.
    pub fn calibration(&self) -> Option<Calibration> {
        let (cx, cy) = ((self.width as f64 - 1.0) / 2.0, (self.height as f64 - 1.0) / 2.0);
        let s = self.scale;
        let h = [
            [s, 0.0, cx - s * self.center.x],
            [0.0, -s, cy + s * self.center.y],
            [0.0, 0.0, 1.0],
        ];
        Calibration::from_homography(h)
            .and_then(|c| c.seen_from_above(Vec2::new(cx, cy), self.camera_height()))
            .ok()
            .map(|c| c.with_image_size(self.width as u32, self.height as u32))
    }

    /// How high above the floor (world units) the view's camera is: where
    /// a lens of 60° across the picture's larger side sees what the view
    /// shows.
    pub fn camera_height(&self) -> f64 {
        let side = self.width.max(self.height) as f64 / self.scale;
        side / 2.0 / (std::f64::consts::PI / 6.0).tan()
    }
}

/// Colours and sizes of the picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    pub grass: [u8; 3],
    pub grass_stripe: [u8; 3],
    pub surround: [u8; 3],
    pub lines: Rgba,
    pub goal: Rgba,
    pub ball: Rgba,
    /// Bodies are drawn at least this large (radius, pixels).
    pub min_body_px: f64,
    /// The ball is drawn at least this large (radius, pixels).
    pub min_ball_px: f64,
}

impl Look {
    /// The default look for pictures `height` pixels high: bodies at
    /// least large enough to carry a legible two-digit number (11 px
    /// across at 720 rows, 6.5 at 360).
    pub fn for_height(height: usize) -> Look {
        let h = height as f64;
        Look {
            grass: [52, 128, 56],
            grass_stripe: [60, 138, 62],
            surround: [40, 104, 46],
            lines: Rgba::from_rgb(0xf0f0f0),
            goal: Rgba::from_rgb(0xd8d8d8),
            ball: Rgba::WHITE,
            min_body_px: (h / 64.0).max(6.5),
            min_ball_px: (h / 200.0).max(2.0),
        }
    }

    /// The caption's text size in a picture `height` rows high.
    pub fn caption_size(height: usize) -> f64 {
        (height as f64 / 32.0).max(10.0)
    }

    /// The rows kept at the top of a picture `height` rows high for the
    /// caption.
    pub fn caption_band(height: usize) -> usize {
        (Look::caption_size(height) * 1.6).ceil() as usize
    }
}

/// Shirt numbers are written at least this large (pixels): two digits
/// with their outline stay legible at 640 × 360.
const MIN_NUMBER_PX: f64 = 10.0;

/// Renders snapshots of one match at one size.
pub struct Renderer {
    /// The whole pitch at the picture's size.
    view: View,
    /// Rows at the top of each picture kept for the caption (0: none,
    /// the caption is the caller's).
    band: usize,
    calib: Calibration,
    /// The whole pitch at the zoomed scale: the background's view (the
    /// same as `view` without zoom).
    big: View,
    look: Look,
    teams: [Team; 2],
    background: RgbImage,
    painter: Painter,
    overlay: Overlay,
    /// The primitives of one picture (kept to reuse the allocation).
    scratch: Vec<Primitive>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("view", &self.view)
            .finish_non_exhaustive()
    }
}

/// Every primitive the renderer draws belongs to no log entity.
const NO_ENTITY: EntityId = EntityId(0);

fn prim(shape: Shape, style: Style) -> Primitive {
    Primitive {
        shape,
        style,
        entity: NO_ENTITY,
        level: 0,
    }
}

impl Renderer {
    /// A renderer of `m`'s field and teams at `width`×`height` pixels,
    /// the caption in a band at the top.
    pub fn new(m: &Match, width: usize, height: usize) -> Result<Renderer, RenderError> {
        Renderer::with_zoom(m, width, height, 1.0)
    }

    /// A renderer of the field alone, without the caption's band: a
    /// picture to be warped into another camera, which writes the caption
    /// itself ([`Renderer::caption_on`]).
    pub fn without_caption(m: &Match, width: usize, height: usize) -> Result<Renderer, RenderError> {
        Renderer::build(m, width, height, 1.0, false)
    }

    /// Like [`new`](Self::new), the pitch magnified `zoom` times (1 to 8,
    /// and at most [`MAX_SIDE`] pixels of pitch each way): pictures then
    /// show part of it, around the point [`render_at`](Self::render_at)
    /// is given.
    pub fn with_zoom(m: &Match, width: usize, height: usize, zoom: f64) -> Result<Renderer, RenderError> {
        Renderer::build(m, width, height, zoom, true)
    }

    fn build(
        m: &Match,
        width: usize,
        height: usize,
        zoom: f64,
        caption: bool,
    ) -> Result<Renderer, RenderError> {
        if !(16..=MAX_SIDE).contains(&width) || !(16..=MAX_SIDE).contains(&height) {
            return Err(RenderError::BadSize { width, height });
        }
        let zoom = if zoom.is_finite() {
            zoom.clamp(1.0, 8.0)
        } else {
            1.0
        };
        let zoom = zoom.min(MAX_SIDE as f64 / width.max(height) as f64).max(1.0);
        let (bw, bh) = (
            (width as f64 * zoom).round() as usize,
            (height as f64 * zoom).round() as usize,
        );
        let f = &m.field;
        let bad = || RenderError::BadField {
            length: f.length,
            width: f.width,
            unit: f.unit.clone(),
        };
        // The caption's band, when the match has captions and the picture
        // is tall enough to keep one.
        let captioned = m.snapshots.iter().any(|s| !s.caption.is_empty());
        let band = if caption && captioned && height >= 64 {
            Look::caption_band(height)
        } else {
            0
        };
        let view = View::fit_below(f.bounds(), width, height, band).ok_or_else(bad)?;
        let calib = view.calibration().ok_or_else(bad)?;
        // The zoomed pitch keeps a band as much larger: exactly `zoom` times
        // the whole pitch's scale.
        let big_band = (band as f64 * zoom).round() as usize;
        let big = View::fit_below(f.bounds(), bw, bh, big_band).ok_or_else(bad)?;
        let look = Look::for_height(height);
        let mut r = Renderer {
            view,
            band,
            calib,
            big,
            look,
            teams: m.teams.clone(),
            background: RgbImage::zeros((bh, bw, 3)),
            painter: Painter::new(bw, bh),
            overlay: Overlay::new(bw, bh),
            scratch: Vec::new(),
        };
        r.draw_background(f);
        r.painter.resize(width, height);
        r.overlay = Overlay::new(width, height);
        Ok(r)
    }

    /// Whether pictures show part of the pitch (zoomed in).
    pub fn is_zoomed(&self) -> bool {
        self.big.width != self.view.width || self.big.height != self.view.height
    }

    /// The view of a picture centred as near `center` as the pitch allows
    /// (the whole pitch without zoom).
    pub fn view_at(&self, center: Option<Vec2>) -> View {
        let (w, h) = (self.view.width, self.view.height);
        let (bw, bh) = (self.big.width, self.big.height);
        let c = center.filter(|c| c.is_finite()).unwrap_or(self.big.center);
        let p = self.big.to_pixel(c);
        // The point at the middle of the rows below the caption's band.
        let below = (self.band as f64 + h as f64 - 1.0) / 2.0;
        let ox = (p.x - (w as f64 - 1.0) / 2.0).round().clamp(0.0, (bw - w) as f64);
        let oy = (p.y - below).round().clamp(0.0, (bh - h) as f64);
        View {
            width: w,
            height: h,
            scale: self.big.scale,
            center: self.big.to_world(Vec2::new(
                ox + (w as f64 - 1.0) / 2.0,
                oy + (h as f64 - 1.0) / 2.0,
            )),
        }
    }

    /// The world ↔ pixel view.
    /// The colour around the pitch.
    pub fn surround(&self) -> [u8; 3] {
        self.look.surround
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    /// The view as a calibration.
    pub fn calibration(&self) -> &Calibration {
        &self.calib
    }

    /// The field alone.
    pub fn background(&self) -> &RgbImage {
        &self.background
    }

    fn draw_background(&mut self, f: &Field) {
        let big = self.big;
        let Some(big_calib) = big.calibration() else {
            return;
        };
        let (h, w) = (big.height, big.width);
        let (lo, hi) = (
            big.to_pixel(Vec2::new(-f.length / 2.0 - f.margin, 0.0)).x,
            big.to_pixel(Vec2::new(f.length / 2.0 + f.margin, 0.0)).x,
        );
        let top = big.to_pixel(Vec2::new(0.0, f.width / 2.0 + f.margin)).y;
        let bottom = big.to_pixel(Vec2::new(0.0, -f.width / 2.0 - f.margin)).y;
        // Stripes across the length, as mowed grass: 18 over the field.
        let stripe = f.length / 18.0;
        let s = self.look;
        let view = big;
        for y in 0..h {
            for x in 0..w {
                let (xf, yf) = (x as f64, y as f64);
                let rgb = if xf < lo - 0.5 || xf > hi + 0.5 || yf < top - 0.5 || yf > bottom + 0.5 {
                    s.surround
                } else {
                    let wx = view.to_world(Vec2::new(xf, yf)).x + f.length / 2.0;
                    if (wx / stripe).floor().rem_euclid(2.0) == 0.0 {
                        s.grass
                    } else {
                        s.grass_stripe
                    }
                };
                for (c, v) in rgb.into_iter().enumerate() {
                    self.background[[y, x, c]] = v;
                }
            }
        }
        let line_px = (f.line_width * view.scale).max(1.2);
        let line = Style {
            color: s.lines,
            fill: None,
            thickness: line_px as f32,
            unit: ThicknessUnit::Pixels,
        };
        let mut prims = Vec::new();
        for g in &f.goals {
            let c = g.mouth + Vec2::new(g.depth / 2.0, 0.0);
            prims.push(prim(
                Shape::Rectangle {
                    center: c,
                    size: Vec2::new(g.depth.abs(), g.width),
                    orientation: 0.0,
                },
                Style {
                    fill: Some(s.goal.with_alpha(90)),
                    color: s.goal,
                    ..line
                },
            ));
        }
        for m in &f.marks {
            prims.push(match *m {
                Mark::Segment { a, b } => prim(Shape::Line { start: a, end: b }, line),
                Mark::Arc {
                    center,
                    radius,
                    start,
                    sweep,
                } => prim(
                    Shape::Sector {
                        center,
                        inner: radius,
                        outer: radius,
                        start,
                        sweep,
                    },
                    line,
                ),
                Mark::Spot { center, radius } => prim(
                    Shape::Circle {
                        center,
                        radius: radius.max(line_px / view.scale),
                    },
                    Style {
                        fill: Some(s.lines),
                        ..line
                    },
                ),
            });
        }
        self.overlay.clear();
        for p in &prims {
            // Marks of a field we made ourselves are finite; a reader's odd
            // value is simply not drawn.
            let _ = self.painter.primitive(&mut self.overlay, &big_calib, p);
        }
        let _ = self.overlay.composite(&mut self.background, None);
        self.overlay.clear();
    }

    /// Writes `text` at the top left of `image` (of any size) in the
    /// caption's look: what a picture of another camera says over itself.
    pub fn caption_on(&mut self, image: &mut RgbImage, text: &str) {
        let (h, w, _) = image.dim();
        if text.is_empty() || w < 16 || h < 16 {
            return;
        }
        let mut painter = Painter::new(w, h);
        let mut overlay = Overlay::new(w, h);
        let size = (h as f64 / 32.0).max(10.0);
        painter.text(
            &mut overlay,
            Vec2::new(size * 0.6, size * 1.2),
            text,
            size,
            Rgba::WHITE,
        );
        let _ = overlay.composite(image, None);
    }

    /// Draws `snap` into `image` and its floor mask into `mask` (both
    /// resized to the view when they differ), the whole pitch.
    pub fn render(&mut self, snap: &Snapshot, image: &mut RgbImage, mask: &mut MaskImage) {
        let view = self.view_at(None);
        self.render_view(snap, view, image, mask);
    }

    /// Like [`render`](Self::render), the picture centred as near
    /// `center` as the pitch allows; returns its view.
    pub fn render_at(
        &mut self,
        snap: &Snapshot,
        center: Option<Vec2>,
        image: &mut RgbImage,
        mask: &mut MaskImage,
    ) -> View {
        let view = self.view_at(center);
        self.render_view(snap, view, image, mask);
        view
    }

    fn render_view(&mut self, snap: &Snapshot, view: View, image: &mut RgbImage, mask: &mut MaskImage) {
        let (h, w) = (view.height, view.width);
        if image.dim() != (h, w, 3) {
            *image = RgbImage::zeros((h, w, 3));
        }
        if mask.dim() != (h, w) {
            *mask = MaskImage::zeros((h, w));
        }
        // The part of the (zoomed) background this view shows.
        let origin = self.big.to_pixel(view.to_world(Vec2::ZERO));
        let (ox, oy) = (
            origin.x.round().max(0.0) as usize,
            origin.y.round().max(0.0) as usize,
        );
        let (ox, oy) = (ox.min(self.big.width - w), oy.min(self.big.height - h));
        image.assign(&self.background.slice(ndarray::s![oy..oy + h, ox..ox + w, ..]));
        let calib = if view == self.view {
            self.calib.clone()
        } else {
            match view.calibration() {
                Some(c) => c,
                None => return,
            }
        };
        mask.fill(FLOOR);
        self.overlay.clear();
        let mut prims = std::mem::take(&mut self.scratch);
        prims.clear();
        for b in &snap.bodies {
            self.body_primitives(&view, b, &mut prims);
        }
        if let Some((p, r)) = snap.ball {
            let r = r.max(self.look.min_ball_px / view.scale);
            prims.push(prim(
                Shape::Circle { center: p, radius: r },
                Style {
                    color: Rgba::BLACK,
                    fill: Some(self.look.ball),
                    thickness: 1.0,
                    unit: ThicknessUnit::Pixels,
                },
            ));
        }
        for p in &prims {
            let _ = self.painter.primitive(&mut self.overlay, &calib, p);
        }
        for b in &snap.bodies {
            self.number(&view, b);
        }
        // Foreground where at least half covered (only drawn rows are read).
        let ov = self.overlay.pixels();
        if let Some(m) = mask.as_slice_mut() {
            self.overlay.for_each_span(|y, x0, x1| {
                let row = y * w;
                for (mv, o) in m[row + x0..row + x1].iter_mut().zip(&ov[row + x0..row + x1]) {
                    if o[3] >= 128 {
                        *mv = 0;
                    }
                }
            });
        }
        let _ = self.overlay.composite(image, None);
        self.scratch = prims;
        if self.band > 0 {
            self.caption_band(image, mask, &snap.caption);
        }
    }

    /// The caption's band: the surround colour, not floor, the caption
    /// written in it.
    fn caption_band(&mut self, image: &mut RgbImage, mask: &mut MaskImage, caption: &str) {
        let band = self.band.min(image.dim().0);
        let surround = self.look.surround;
        for mut px in image.slice_mut(ndarray::s![..band, .., ..]).rows_mut() {
            px.assign(&ndarray::ArrayView1::from(&surround));
        }
        mask.slice_mut(ndarray::s![..band, ..]).fill(0);
        if caption.is_empty() {
            return;
        }
        let size = Look::caption_size(image.dim().0);
        self.overlay.clear();
        // The baseline a third of the size above the band's bottom.
        let baseline = band as f64 - (band as f64 - size * 0.75) / 2.0;
        self.painter.text(
            &mut self.overlay,
            Vec2::new(size * 0.6, baseline),
            caption,
            size,
            Rgba::WHITE,
        );
        let _ = self.overlay.composite(image, None);
    }

    /// Rows at the top of each picture kept for the caption.
    pub fn band(&self) -> usize {
        self.band
    }

    /// A body's number, centred on it, in the ink that contrasts more
    /// with the shirt: black on a light one (yellow, the 2D blue, the 3D
    /// red), white with the painter's dark outline on a dark one.
    fn number(&mut self, view: &View, b: &Body) {
        let r = (b.radius * view.scale).max(self.look.min_body_px);
        let text = b.number.to_string();
        let size = (r * 1.3).clamp(MIN_NUMBER_PX, 200.0);
        let Some((w, _)) = self.painter.measure_text(&text, size) else {
            return;
        };
        let alpha = if b.faded { 110 } else { 255 };
        let p = view.to_pixel(b.position);
        // Digits stand about 0.72 of the size above the baseline.
        let anchor = Vec2::new(p.x - w / 2.0, p.y + size * 0.36);
        let shirt = self.teams[usize::from(b.team.min(1))].color;
        if light(shirt) {
            let ink = Rgba::BLACK.with_alpha(alpha);
            self.painter
                .text_plain(&mut self.overlay, anchor, &text, size, ink);
        } else {
            let ink = Rgba::WHITE.with_alpha(alpha);
            self.painter.text(&mut self.overlay, anchor, &text, size, ink);
        }
    }

    /// The primitives that draw one body.
    fn body_primitives(&self, view: &View, b: &Body, out: &mut Vec<Primitive>) {
        let team = &self.teams[usize::from(b.team.min(1))];
        let r = b.radius.max(self.look.min_body_px / view.scale);
        let alpha = if b.faded { 110 } else { 255 };
        let outline = if b.goalie { Rgba::WHITE } else { Rgba::BLACK };
        out.push(prim(
            Shape::Circle {
                center: b.position,
                radius: r,
            },
            Style {
                color: outline.with_alpha(alpha),
                fill: Some(team.color.with_alpha(alpha)),
                thickness: if b.goalie { 2.0 } else { 1.2 },
                unit: ThicknessUnit::Pixels,
            },
        ));
        let dark = Rgba::BLACK.with_alpha(alpha);
        if let Some(hd) = b.heading.filter(|h| h.is_finite()) {
            // A wedge outside the disc, pointing ahead: the middle is the
            // number's.
            let (ahead, side) = (dir(hd), dir(hd + std::f64::consts::FRAC_PI_2));
            out.push(prim(
                Shape::Polygon {
                    vertices: Box::new([
                        b.position + ahead * (r * 1.55),
                        b.position + ahead * (r * 0.92) + side * (r * 0.42),
                        b.position + ahead * (r * 0.92) - side * (r * 0.42),
                    ]),
                    closed: true,
                },
                Style {
                    color: dark,
                    fill: Some(dark),
                    thickness: 1.0,
                    unit: ThicknessUnit::Pixels,
                },
            ));
        }
        if let Some(g) = b.gaze.filter(|g| g.is_finite()) {
            out.push(prim(
                Shape::Line {
                    start: b.position + dir(g) * r,
                    end: b.position + dir(g) * (r * 1.9),
                },
                Style {
                    color: Rgba::from_rgb(0xffd0d0).with_alpha(alpha),
                    fill: None,
                    thickness: 1.2,
                    unit: ThicknessUnit::Pixels,
                },
            ));
        }
        let card = match b.card {
            Card::None => None,
            Card::Yellow => Some(Rgba::from_rgb(0xffe000)),
            Card::Red => Some(Rgba::from_rgb(0xe01010)),
        };
        if let Some(c) = card {
            out.push(prim(
                Shape::Rectangle {
                    center: b.position + Vec2::new(-r * 0.9, r * 0.9),
                    size: Vec2::new(r * 0.55, r * 0.8),
                    orientation: 0.0,
                },
                Style {
                    color: Rgba::BLACK,
                    fill: Some(c),
                    thickness: 1.0,
                    unit: ThicknessUnit::Pixels,
                },
            ));
        }
    }
}

/// Whether a shirt of colour `c` takes black ink: black contrasts
/// with it more than white does. Their contrasts (WCAG 2) are equal at a
/// relative luminance of √(1.05 × 0.05) − 0.05 ≈ 0.179, where each is
/// 4.58 to 1; so the better ink reads at least that well on any shirt
/// (white on the 2D yellow is 1.4 to 1, black 15; on the 2D blue white
/// is 3.2, black 6.5).
fn light(c: Rgba) -> bool {
    let v = c.rgb();
    luminance([(v >> 16) as u8, (v >> 8) as u8, v as u8]) > (1.05f64 * 0.05).sqrt() - 0.05
}

/// sRGB relative luminance of a colour (WCAG 2).
fn luminance(p: [u8; 3]) -> f64 {
    let lin = |v: u8| {
        let c = f64::from(v) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(p[0]) + 0.7152 * lin(p[1]) + 0.0722 * lin(p[2])
}

/// Pixel radius a body of world radius `r` is drawn with in `view`.
pub fn body_px(view: &View, look: &Look, r: f64) -> f64 {
    (r * view.scale).max(look.min_body_px)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pitch::model::{Pace, Team};

    fn test_match() -> Match {
        Match {
            name: "t".into(),
            field: Field::football(
                "m",
                105.0,
                68.0,
                14.02,
                Some((16.5, 40.32)),
                Some((5.5, 18.32)),
                1.0,
            ),
            teams: [
                Team {
                    name: "L".into(),
                    color: Rgba::from_rgb(0xffff00),
                },
                Team {
                    name: "R".into(),
                    color: Rgba::from_rgb(0x2060ff),
                },
            ],
            snapshots: vec![],
            pace: Pace::PerSnapshot { interval: 0.1 },
        }
    }

    fn body(team: u8, x: f64, y: f64) -> Body {
        Body {
            team,
            number: 10,
            position: Vec2::new(x, y),
            radius: 0.3,
            heading: Some(0.0),
            gaze: None,
            goalie: false,
            card: Card::None,
            faded: false,
        }
    }

    #[test]
    fn the_view_maps_world_y_up_and_back() {
        let v = View::fit((Vec2::new(-10.0, -5.0), Vec2::new(10.0, 5.0)), 201, 101).unwrap();
        assert_eq!(v.scale, 10.05);
        assert_eq!(v.to_pixel(Vec2::ZERO), Vec2::new(100.0, 50.0));
        let v = View::fit((Vec2::new(-10.0, -5.0), Vec2::new(10.0, 5.0)), 200, 100).unwrap();
        assert_eq!(v.scale, 10.0);
        assert_eq!(v.to_pixel(Vec2::ZERO), Vec2::new(99.5, 49.5));
        assert_eq!(v.to_pixel(Vec2::new(1.0, 1.0)), Vec2::new(109.5, 39.5));
        assert_eq!(v.to_world(Vec2::new(109.5, 39.5)), Vec2::new(1.0, 1.0));
        let c = v.calibration().unwrap();
        let p = c.project(Vec2::new(-3.0, 2.5)).unwrap();
        assert!((p - v.to_pixel(Vec2::new(-3.0, 2.5))).length() < 1e-9);
        // A full camera straight above the centre: a point above the floor
        // is seen farther out from the centre, and the camera is there.
        let eye = c.camera_center().unwrap();
        assert!(eye[0].abs() < 1e-9 && eye[1].abs() < 1e-9 && (eye[2] - v.camera_height()).abs() < 1e-6);
        let up = c.project3([4.0, 2.0, 1.0]).unwrap();
        let down = c.project3([4.0, 2.0, 0.0]).unwrap();
        let centre = v.to_pixel(Vec2::ZERO);
        let k = v.camera_height() / (v.camera_height() - 1.0);
        assert!(
            ((up - centre) - (down - centre) * k).length() < 1e-9,
            "{up:?} {down:?}"
        );
        assert!(View::fit((Vec2::ZERO, Vec2::ZERO), 10, 10).is_none());
    }

    #[test]
    fn bodies_are_drawn_in_team_colours_and_masked_exactly() {
        let snap = Snapshot {
            clock: 1.0,
            bodies: vec![body(0, -20.0, 10.0), body(1, 20.0, -10.0)],
            ball: Some((Vec2::new(0.0, 0.0), 0.085)),
            caption: "0:0 play_on".into(),
        };
        let m = Match {
            snapshots: vec![snap.clone()],
            ..test_match()
        };
        // A match without captions keeps no band.
        assert_eq!(Renderer::new(&test_match(), 1280, 800).unwrap().band(), 0);
        let mut r = Renderer::new(&m, 1280, 800).unwrap();
        let (mut img, mut mask) = (RgbImage::zeros((1, 1, 3)), MaskImage::zeros((1, 1)));
        r.render(&snap, &mut img, &mut mask);
        assert_eq!(img.dim(), (800, 1280, 3));
        let px = |p: Vec2| {
            let q = r.view().to_pixel(p);
            (q.y.round() as usize, q.x.round() as usize)
        };
        // Above its number, the left body is yellow and not floor; the
        // right one blue.
        let rp = body_px(r.view(), &Look::for_height(800), 0.3);
        let above = (0.75 * rp) as usize;
        let (y, x) = px(Vec2::new(-20.0, 10.0));
        assert_eq!(
            [
                img[[y - above, x, 0]],
                img[[y - above, x, 1]],
                img[[y - above, x, 2]]
            ],
            [255, 255, 0]
        );
        assert_eq!(mask[[y, x]], 0);
        let (y, x) = px(Vec2::new(20.0, -10.0));
        assert_eq!(
            [
                img[[y - above, x, 0]],
                img[[y - above, x, 1]],
                img[[y - above, x, 2]]
            ],
            [0x20, 0x60, 0xff]
        );
        assert_eq!(mask[[y, x]], 0);
        // The number in the middle is white (its outline dark around it).
        let white = (0..rp as usize)
            .filter(|&d| img[[y, x - d / 2, 0]] > 230 && img[[y, x - d / 2, 2]] > 230)
            .count();
        assert!(white > 0, "no white digit at the body's centre row");
        // Ahead (+x) the heading's wedge is dark, outside the disc.
        let (y, x) = px(Vec2::new(-20.0, 10.0));
        let tip = x + (1.25 * rp) as usize;
        assert!(
            img[[y, tip, 0]] < 40 && img[[y, tip, 1]] < 40,
            "{:?}",
            img.slice(ndarray::s![y, tip, ..])
        );
        // The ball is white; open grass is floor.
        let (y, x) = px(Vec2::ZERO);
        assert_eq!(mask[[y, x]], 0);
        let (y, x) = px(Vec2::new(30.0, 20.0));
        assert_eq!(mask[[y, x]], FLOOR);
        // A body drawn at its minimum size: about min_body_px around it is
        // foreground, no more than twice that away is floor again.
        let (y, x) = px(Vec2::new(-20.0, 10.0));
        assert_eq!(mask[[y + (rp * 0.7) as usize, x]], 0);
        assert_eq!(mask[[y + (rp * 2.0) as usize + 2, x]], FLOOR);
        // The caption is in its band, above the field and its margin; the
        // band is not floor.
        let band = r.band();
        assert_eq!(band, Look::caption_band(800));
        let top = r.view().to_pixel(Vec2::new(0.0, 34.0 + 5.0)).y;
        assert!(
            top >= band as f64 - 0.5,
            "the margin's top row {top} is in the band ({band})"
        );
        assert!(mask.slice(ndarray::s![..band, ..]).iter().all(|&v| v == 0));
        let written = img
            .slice(ndarray::s![..band, ..200, 0])
            .iter()
            .filter(|&&v| v > 200)
            .count();
        assert!(written > 20, "the caption is written in the band");
        // Rendering again with nothing leaves only the field (the band not floor).
        r.render(&Snapshot::default(), &mut img, &mut mask);
        assert_eq!(&img, r.background());
        assert!(mask.slice(ndarray::s![band.., ..]).iter().all(|&v| v == FLOOR));
        assert!(mask.slice(ndarray::s![..band, ..]).iter().all(|&v| v == 0));
    }

    #[test]
    fn the_field_lines_are_white_on_grass() {
        let m = test_match();
        let r = Renderer::new(&m, 1050, 780).unwrap();
        let bg = r.background();
        // The halfway line at x = 0, away from the centre circle.
        let p = r.view().to_pixel(Vec2::new(0.0, 25.0));
        let (y, x) = (p.y.round() as usize, p.x.round() as usize);
        // About a pixel wide, anti-aliased: much brighter than the grass.
        assert!(
            bg[[y, x, 0]] > 150 && bg[[y, x, 2]] > 150,
            "{:?}",
            bg.slice(ndarray::s![y, x, ..])
        );
        let p = r.view().to_pixel(Vec2::new(10.0, 25.0));
        let (y, x) = (p.y.round() as usize, p.x.round() as usize);
        assert!(bg[[y, x, 1]] > bg[[y, x, 0]] + 40);
        assert!(Renderer::new(&m, 8, 8).is_err());
    }

    /// The ink reads at least 4.58 to 1 on any shirt: the contrast (WCAG
    /// 2) of black or white, the better of the two, over every colour of
    /// a 16-step grid of the RGB cube and the league's team colours.
    #[test]
    fn the_numbers_ink_contrasts_with_any_shirt() {
        let contrast = |a: f64, b: f64| (a.max(b) + 0.05) / (a.min(b) + 0.05);
        let steps: Vec<u32> = (0..=255).step_by(17).collect();
        let mut worst = f64::INFINITY;
        for &r in &steps {
            for &g in &steps {
                for &b in steps.iter().chain(&[0x40, 0x64, 0x70, 0x90, 0xd2, 0xd7]) {
                    let c = Rgba::from_rgb(r << 16 | g << 8 | b);
                    let l = luminance([r as u8, g as u8, b as u8]);
                    let ink = if light(c) { 0.0 } else { 1.0 };
                    worst = worst.min(contrast(l, ink));
                }
            }
        }
        assert!(worst >= 4.58, "{worst}");
    }

    /// Issue 51: on the yellow team the heading crossed the number and
    /// 3, 4, 6 and 7 could not be read. On every team colour underlay
    /// draws (the 2D teams', the 3D teams', the SSL teams') and on white,
    /// at 1280 × 720 and 640 × 360, for every number and whichever way
    /// the body faces and looks: the digits are written (pixels of the
    /// ink's colour, black on a light shirt, white on any other, within a
    /// tenth) and stand out from their ground (the pixels two away from
    /// them: one away is the glyph's anti-aliased edge) by a contrast of
    /// at least 4 (white with the outline on the 2D yellow was 2.4 against
    /// the pixels touching it). The ink's own contrast with the shirt is
    /// at least 4.58 (above); the rest is lost to anti-aliasing in digits
    /// 10 px high.
    #[test]
    fn shirt_numbers_read_on_every_team_colour_at_both_sizes() {
        let colours = [
            0xffd700, 0x1e90ff, // 2D
            0x3070ff, 0xff4040, // 3D
            0xffd200, 0x1e64ff, // SSL
            0xffffff,
        ];
        let at_x = |number: u32| -48.0 + 8.0 * f64::from(number);
        let mut worst = (f64::INFINITY, String::new());
        for (w, h) in [(1280, 720), (640, 360)] {
            for c in colours {
                let mut m = test_match();
                m.teams[0].color = Rgba::from_rgb(c);
                let mut r = Renderer::new(&m, w, h).unwrap();
                let (mut img, mut mask) = (RgbImage::zeros((1, 1, 3)), MaskImage::zeros((1, 1)));
                let dark_ink = light(Rgba::from_rgb(c));
                assert_eq!(dark_ink, c != 0x1e64ff, "#{c:06x}");
                for k in 0..8 {
                    let bodies = (1..=11)
                        .map(|number| Body {
                            number,
                            heading: Some(f64::from(k) * std::f64::consts::FRAC_PI_4),
                            gaze: Some(f64::from(k) * 0.7),
                            ..body(0, at_x(number), 10.0)
                        })
                        .collect();
                    let snap = Snapshot {
                        bodies,
                        ..Snapshot::default()
                    };
                    r.render(&snap, &mut img, &mut mask);
                    let px = |y: i64, x: i64| {
                        let (y, x) = (y as usize, x as usize);
                        [img[[y, x, 0]], img[[y, x, 1]], img[[y, x, 2]]]
                    };
                    // The pixels of the ink's colour (within a tenth).
                    let ink = |y: i64, x: i64| {
                        let q = px(y, x);
                        if dark_ink {
                            q.iter().all(|&v| v < 26)
                        } else {
                            q.iter().all(|&v| v > 229)
                        }
                    };
                    let rp = body_px(r.view(), &r.look, 0.3);
                    let span = (rp * 0.85) as i64;
                    for number in 1..=11 {
                        let p = r.view().to_pixel(Vec2::new(at_x(number), 10.0));
                        let (cy, cx) = (p.y.round() as i64, p.x.round() as i64);
                        let side = 2 * span + 5;
                        let at = |y: i64, x: i64| ((y - cy + span + 2) * side + (x - cx + span + 2)) as usize;
                        let mut inked_at = vec![false; (side * side) as usize];
                        for y in cy - span - 2..=cy + span + 2 {
                            for x in cx - span - 2..=cx + span + 2 {
                                inked_at[at(y, x)] = ink(y, x);
                            }
                        }
                        let near = |y: i64, x: i64, d: i64| {
                            (-d..=d).any(|dy| (-d..=d).any(|dx| inked_at[at(y + dy, x + dx)]))
                        };
                        let (mut inked, mut ink_l, mut ground_l, mut ground) = (0, 0.0, 0.0, 0);
                        for y in cy - span..=cy + span {
                            for x in cx - span..=cx + span {
                                if inked_at[at(y, x)] {
                                    inked += 1;
                                    ink_l += luminance(px(y, x));
                                } else if !near(y, x, 1) && near(y, x, 2) {
                                    ground += 1;
                                    ground_l += luminance(px(y, x));
                                }
                            }
                        }
                        let what = format!("{number} on #{c:06x} at {w} × {h}, heading {k}/8 turn");
                        assert!(
                            inked >= 4 && ground >= 4,
                            "{what}: {inked} pixels of ink, {ground} of ground"
                        );
                        let (a, b) = (ink_l / f64::from(inked), ground_l / f64::from(ground));
                        let contrast = (a.max(b) + 0.05) / (a.min(b) + 0.05);
                        if contrast < worst.0 {
                            worst = (contrast, what.clone());
                        }
                        assert!(contrast >= 4.0, "{what}: contrast {contrast:.2}");
                    }
                }
            }
        }
        eprintln!(
            "the lowest contrast of a number to its ground: {:.2} ({})",
            worst.0, worst.1
        );
    }
}
