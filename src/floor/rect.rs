//! A rectangle of pixels ([`Rect`]): the part of a picture a mask method
//! works on, a window around a drawing, a part of a mask copied.

/// A rectangle of pixels, `x0..x1` × `y0..y1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    pub x0: usize,
    pub y0: usize,
    pub x1: usize,
    pub y1: usize,
}

impl Rect {
    /// The rectangle `x0..x1` × `y0..y1`.
    pub const fn new(x0: usize, y0: usize, x1: usize, y1: usize) -> Rect {
        Rect { x0, y0, x1, y1 }
    }

    /// The whole of a `width`×`height` picture.
    pub const fn whole(width: usize, height: usize) -> Rect {
        Rect::new(0, 0, width, height)
    }

    pub fn width(&self) -> usize {
        self.x1.saturating_sub(self.x0)
    }

    pub fn height(&self) -> usize {
        self.y1.saturating_sub(self.y0)
    }

    pub fn area(&self) -> usize {
        self.width() * self.height()
    }

    pub fn is_empty(&self) -> bool {
        self.x0 >= self.x1 || self.y0 >= self.y1
    }

    /// Grown by `m` pixels on every side, clipped to a `width`×`height`
    /// picture.
    pub fn grow(&self, m: usize, width: usize, height: usize) -> Rect {
        Rect::new(
            self.x0.saturating_sub(m),
            self.y0.saturating_sub(m),
            (self.x1 + m).min(width),
            (self.y1 + m).min(height),
        )
    }

    /// Grown by `m[0]`, `m[1]`, `m[2]`, `m[3]` pixels on the left, top,
    /// right and bottom, clipped to a `width`×`height` picture.
    pub fn grow_sides(&self, m: [usize; 4], width: usize, height: usize) -> Rect {
        Rect::new(
            self.x0.saturating_sub(m[0]),
            self.y0.saturating_sub(m[1]),
            (self.x1 + m[2]).min(width),
            (self.y1 + m[3]).min(height),
        )
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, o: &Rect) -> Rect {
        Rect::new(
            self.x0.min(o.x0),
            self.y0.min(o.y0),
            self.x1.max(o.x1),
            self.y1.max(o.y1),
        )
    }

    /// Which sides (left, top, right, bottom) lie inside a
    /// `width`×`height` picture rather than on its border.
    pub fn cuts(&self, width: usize, height: usize) -> [bool; 4] {
        [self.x0 > 0, self.y0 > 0, self.x1 < width, self.y1 < height]
    }

    /// This rectangle in the coordinates of one whose corner is `(x, y)`
    /// (which must not lie right of or below this one's corner).
    pub fn relative_to(&self, x: usize, y: usize) -> Rect {
        Rect::new(self.x0 - x, self.y0 - y, self.x1 - x, self.y1 - y)
    }
}
