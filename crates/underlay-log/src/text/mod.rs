//! The thesis's text notation (its Figures 3.1 and 3.7), extended so that
//! it holds everything the model holds.
//!
//! ```text
//! { { {-inf; inf}; {
//!     { { line: (-3025, 500); (-1600, 500)}; red; {obstacle; 0} }
//!   } }
//!   { 27.56; {
//!     { { circle; (2271, -1136); 70}; green; {position; 0} }
//!   } } }
//! ```
//!
//! A log is `{ item* }`; an item is a frame `{ time; { primitive* } }`
//! where the time is `t` (instantaneous) or `{start; end}` (persistent,
//! `-inf`/`inf` allowed). A primitive is `{ geometry; colour; {entity;
//! level} }`, optionally followed by `; fill COLOUR`, `; thickness N px`
//! (or `world`) and `; picture` (the shape is in the picture's pixels,
//! [`Shape::Picture`]; only a floor shape can be). Geometries: `{circle; C; r}`, `{line; A; B}` (`line:`
//! also accepted, as in Figure 3.7), `{rectangle; C; (length, width);
//! orientation}`, `{polygon; V; V; …}` (closed), `{polyline; V; …}` (open),
//! `{text; A; "string"; size}` and `{point; P; cross|dot; size}`, with
//! points written `(x, y)`. A point written `(x, y, z)` has a height and
//! makes its shape one above the floor ([`Raised`]; the shape's other
//! points are then at height 0 unless given one): `{circle; C; r; N}`
//! takes an optional normal (default `(0, 0, 1)`, horizontal), a rectangle
//! with a height is a horizontal closed path, and three shapes exist only
//! above the floor: `{sphere; C; r}`, `{cylinder; B; r; height}` and
//! `{box; B; (length, width, height); orientation}`. Arcs and sectors lie
//! on the floor. Colours are names (`red`), `#rrggbb`,
//! `#rrggbbaa` or `0xRRGGBB`. Two more items carry the rest of the model:
//! `{ header; name "…"; time relative; unit m; threshold 0.05; max-level
//! 2; bounds (x, y) (x, y); version 2 }` and entity declarations `{ entity; name;
//! {parent; parent} }`. Entity names and strings may be quoted with `"`.
//! `//` starts a comment to the end of the line. `docs/FORMAT.md` has the
//! full grammar.
//!
//! **Versions.** The notation has no prefix to carry a version, so a log
//! with shapes above the floor says `version 2` in its header
//! ([`RAISED_TEXT_VERSION`]), and one with shapes in the picture's pixels
//! `version 3` ([`PICTURE_TEXT_VERSION`]); the printer writes it then and
//! only then, so logs on the floor print as before heights existed. An underlay older than
//! heights refuses that header field ("unknown header field 'version'")
//! instead of failing later on a point with a height; this one refuses a
//! version above [`TEXT_VERSION`] as needing a newer underlay.
//!
//! [`print()`] writes text that [`parse`] reads back to an equal log, in the
//! thesis's style for logs the thesis could express. This module parses;
//! `lex` cuts the text into tokens and `print` writes it.

mod lex;
mod print;

use lex::{Lexer, Spanned, Tok};
pub use print::{fmt_f64, primitive_to_string, print, write, write_filtered};

use super::native::add_parent_checked;
use super::raised::UP;
use super::{
    FrameTime, Header, Log, MarkerKind, Place, Primitive, Raised, ReadError, Rgba, Shape, Style,
    ThicknessUnit, TimeUnit, Vec2, Vec3, Warnings, close_frame,
};

/// The newest text notation version this underlay reads: 3, shapes in
/// the picture's pixels. Version 1 (the header says none) is everything
/// before shapes above the floor.
pub const TEXT_VERSION: u32 = PICTURE_TEXT_VERSION;
/// The version of a text log with shapes above the floor.
pub const RAISED_TEXT_VERSION: u32 = 2;
/// The version of a text log with shapes in the picture's pixels (the
/// `picture` option).
pub const PICTURE_TEXT_VERSION: u32 = 3;

/// Whether the first bytes of a file look like text notation: optional
/// byte-order mark, whitespace and `//` comments, then `{`, and no control
/// bytes (a thesis-era record of length 123 also starts with `{`, but its
/// length's high bytes are NUL).
pub fn looks_like_text(prefix: &[u8]) -> bool {
    let p = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    if p.iter().any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) {
        return false;
    }
    match p.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(i) => p[i] == b'{' || p[i..].starts_with(b"//"),
        None => false,
    }
}

// ---------------------------------------------------------------------------
// Parser

struct Parser<'a> {
    lex: Lexer<'a>,
    peeked: Option<Spanned<'a>>,
    log: Log,
    warnings: Warnings,
    frames_seen: usize,
    /// Refuse the log at its first bad item instead of passing it over.
    strict: bool,
    /// An error no item's loss mends (a version this build cannot read):
    /// the whole log is refused.
    fatal: bool,
}

/// Parses a log in text notation. A bad item (a frame, the header, an
/// entity declaration) costs that item: it is passed over, counted in
/// [`Log::skipped`] and said with its line; so is anything between items
/// that is not one. A version this build cannot read refuses the log.
pub fn parse(src: &str) -> Result<Log, ReadError> {
    parse_with(src, false)
}

/// Parses a log in text notation, refusing it at its first bad item
/// (with that item's line and column).
pub fn parse_strict(src: &str) -> Result<Log, ReadError> {
    parse_with(src, true)
}

fn parse_with(src: &str, strict: bool) -> Result<Log, ReadError> {
    let mut p = Parser {
        lex: Lexer::new(src),
        peeked: None,
        log: Log::new(),
        warnings: Warnings::default(),
        frames_seen: 0,
        strict,
        fatal: false,
    };
    p.log()?;
    p.log.warnings = p.warnings.finish();
    Ok(p.log)
}

impl<'a> Parser<'a> {
    fn peek(&mut self) -> Result<&Spanned<'a>, ReadError> {
        let t = match self.peeked.take() {
            Some(t) => t,
            None => self.lex.next()?,
        };
        Ok(self.peeked.insert(t))
    }

    fn bump(&mut self) -> Result<Spanned<'a>, ReadError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lex.next(),
        }
    }

    fn err_at(t: &Spanned<'_>, message: impl Into<String>) -> ReadError {
        ReadError::Syntax {
            line: t.line,
            column: t.col(),
            message: message.into(),
        }
    }

    fn expect(&mut self, want: Tok<'static>, context: &str) -> Result<Spanned<'a>, ReadError> {
        let t = self.bump()?;
        if t.tok == want {
            Ok(t)
        } else {
            Err(Self::err_at(
                &t,
                format!(
                    "expected {} {context}, found {}",
                    want.describe(),
                    t.tok.describe()
                ),
            ))
        }
    }

    /// Consumes `tok` if it is next.
    fn eat(&mut self, tok: &Tok<'_>) -> Result<bool, ReadError> {
        if &self.peek()?.tok == tok {
            self.bump()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// The log: `{ item* }`. A bad item costs that item: it is passed
    /// over to the brace that closes it (counted, and said with its line),
    /// and so is anything between items that is not one; a log whose end
    /// is missing keeps every item before it.
    fn log(&mut self) -> Result<(), ReadError> {
        self.expect(Tok::LBrace, "to open the log")?;
        loop {
            let t = match self.bump() {
                Ok(t) => t,
                Err(e) => {
                    let from = self.lex.pos();
                    if !self.pass_over_between(from, e)? {
                        return Ok(());
                    }
                    continue;
                }
            };
            match t.tok {
                Tok::RBrace => break,
                Tok::LBrace => {
                    let start = self.log.primitives.len();
                    if let Err(e) = self.item(&t) {
                        // What the item had read goes with it.
                        self.log.primitives.truncate(start);
                        if !self.pass_over_item(&t, e)? {
                            return Ok(());
                        }
                    }
                }
                Tok::Semi | Tok::Comma => {}
                Tok::Eof if self.strict => {
                    return Err(Self::err_at(
                        &t,
                        "expected '}' to close the log, found the end of the text",
                    ));
                }
                Tok::Eof => {
                    let frames = self.log.frames.len();
                    self.warnings.push(
                        Some(Place::Line(t.line)),
                        None,
                        format!("the log is not closed by '}}' (cut short?); the {frames} frames before its end were loaded"),
                    );
                    return Ok(());
                }
                _ => {
                    let e = Self::err_at(
                        &t,
                        format!("expected '{{' to open a frame, found {}", t.tok.describe()),
                    );
                    if !self.pass_over_between(t.pos, e)? {
                        return Ok(());
                    }
                }
            }
        }
        let t = match self.bump() {
            Ok(t) => t,
            Err(e) => {
                let from = self.lex.pos();
                return self.pass_over_rest(from, e);
            }
        };
        if t.tok != Tok::Eof {
            let e = Self::err_at(
                &t,
                format!("unexpected {} after the end of the log", t.tok.describe()),
            );
            return self.pass_over_rest(t.pos, e);
        }
        Ok(())
    }

    /// Passes over the item opened by `open` after `error` in it, to the
    /// brace that closes it; false when the text ends first.
    fn pass_over_item(&mut self, open: &Spanned<'_>, error: ReadError) -> Result<bool, ReadError> {
        if self.strict || self.fatal {
            return Err(error);
        }
        self.peeked = None;
        self.lex.back_to_after(open);
        let closed = self.lex.skip_to_close();
        let what = if closed {
            format!("the item from line {} was passed over", open.line)
        } else {
            format!(
                "it is not closed: the rest of the log from line {} was passed over",
                open.line
            )
        };
        self.warnings.push(None, None, format!("{error}; {what}"));
        let from = open.pos as u64;
        if closed {
            self.log.skipped.add(from, self.lex.pos() as u64 - from);
        } else {
            self.log.skipped.stop(from);
        }
        Ok(closed)
    }

    /// Passes over what lies between items from byte `from` (where
    /// `error` was found) to the next brace; false when the text ends
    /// first.
    fn pass_over_between(&mut self, from: usize, error: ReadError) -> Result<bool, ReadError> {
        if self.strict {
            return Err(error);
        }
        self.peeked = None;
        let found = self.lex.skip_to_brace();
        let what = if found {
            "passed over to the next '{' or '}'"
        } else {
            "the rest was passed over"
        };
        self.warnings.push(None, None, format!("{error}; {what}"));
        if found {
            self.log.skipped.add(from as u64, (self.lex.pos() - from) as u64);
        } else {
            self.log.skipped.stop(from as u64);
        }
        Ok(found)
    }

    /// Passes over what follows the log's end, from byte `from`.
    fn pass_over_rest(&mut self, from: usize, error: ReadError) -> Result<(), ReadError> {
        if self.strict {
            return Err(error);
        }
        self.warnings.push(None, None, format!("{error}; passed over"));
        self.log.skipped.stop(from as u64);
        Ok(())
    }

    fn item(&mut self, open: &Spanned<'_>) -> Result<(), ReadError> {
        let keyword = match &self.peek()?.tok {
            Tok::Word(w) if w.eq_ignore_ascii_case("header") => Some(true),
            Tok::Word(w) if w.eq_ignore_ascii_case("entity") => Some(false),
            _ => None,
        };
        match keyword {
            Some(true) => {
                self.bump()?;
                self.header()
            }
            Some(false) => {
                self.bump()?;
                self.entity_decl()
            }
            None => self.frame(open.line),
        }
    }

    fn header(&mut self) -> Result<(), ReadError> {
        let mut h = Header::default();
        let line = self.peek()?.line;
        loop {
            let t = self.bump()?;
            match t.tok {
                Tok::RBrace => break,
                Tok::Semi => continue,
                Tok::Word(key) => match key.to_ascii_lowercase().as_str() {
                    "name" => h.name = self.name("the log name")?,
                    "time" => {
                        let v = self.bump()?;
                        h.time_unit = match v.tok {
                            Tok::Word(w) if w.eq_ignore_ascii_case("epoch") => TimeUnit::EpochSeconds,
                            Tok::Word(w) if w.eq_ignore_ascii_case("relative") => TimeUnit::RelativeSeconds,
                            _ => {
                                return Err(Self::err_at(
                                    &v,
                                    format!("expected 'epoch' or 'relative', found {}", v.tok.describe()),
                                ));
                            }
                        }
                    }
                    "unit" => h.world_unit = self.name("the world unit")?,
                    "threshold" => h.hints.instant_threshold = Some(self.number("the threshold")?),
                    "max-level" => h.hints.default_max_level = Some(self.level()?),
                    "version" => self.version()?,
                    "bounds" => {
                        let lo = self.point(BOUNDS_ON_FLOOR)?;
                        let hi = self.point(BOUNDS_ON_FLOOR)?;
                        h.hints.world_bounds = Some((lo, hi));
                    }
                    _ => return Err(Self::err_at(&t, format!("unknown header field '{key}'"))),
                },
                _ => {
                    return Err(Self::err_at(
                        &t,
                        format!("expected a header field, found {}", t.tok.describe()),
                    ));
                }
            }
        }
        for message in h.hints.drop_unusable() {
            self.warnings.push(Some(Place::Line(line)), None, message);
        }
        self.log.header = h;
        Ok(())
    }

    fn entity_decl(&mut self) -> Result<(), ReadError> {
        let t = self.expect(Tok::Semi, "after 'entity'")?;
        let name = self.name("the entity name")?;
        let child = self.log.entities.intern(&name);
        let place = Some(Place::Line(t.line));
        if self.eat(&Tok::Semi)? && self.eat(&Tok::LBrace)? {
            loop {
                if self.eat(&Tok::RBrace)? {
                    break;
                }
                let pname = self.name("a parent entity name")?;
                let parent = self.log.entities.intern(&pname);
                add_parent_checked(&mut self.log.entities, &mut self.warnings, child, parent, || {
                    place
                });
                if !self.eat(&Tok::Semi)? && !self.eat(&Tok::Comma)? {
                    self.expect(Tok::RBrace, "to close the parent list")?;
                    break;
                }
            }
            self.eat(&Tok::Semi)?;
        }
        self.expect(Tok::RBrace, "to close the entity declaration")?;
        Ok(())
    }

    fn frame(&mut self, line: usize) -> Result<(), ReadError> {
        let time = if self.eat(&Tok::LBrace)? {
            let start = self.number("the start time")?;
            self.expect(Tok::Semi, "between start and end time")?;
            let end = self.number("the end time")?;
            self.expect(Tok::RBrace, "after the end time")?;
            FrameTime::Persistent { start, end }
        } else {
            FrameTime::Instant(self.number("a time or '{start; end}'")?)
        };
        self.expect(Tok::Semi, "after the frame time")?;
        self.expect(Tok::LBrace, "to open the frame's primitives")?;
        let start = self.log.primitives.len();
        loop {
            let t = self.bump()?;
            match t.tok {
                Tok::RBrace => break,
                Tok::Semi | Tok::Comma => {}
                Tok::LBrace => {
                    let p = self.primitive()?;
                    self.log.primitives.push(p);
                }
                _ => {
                    return Err(Self::err_at(
                        &t,
                        format!("expected '{{' to open a primitive, found {}", t.tok.describe()),
                    ));
                }
            }
        }
        self.eat(&Tok::Semi)?;
        self.expect(Tok::RBrace, "to close the frame")?;
        close_frame(
            &mut self.log,
            &mut self.warnings,
            time,
            start,
            self.frames_seen,
            Place::Line(line),
        );
        self.frames_seen += 1;
        Ok(())
    }

    /// A primitive after its opening brace.
    fn primitive(&mut self) -> Result<Primitive, ReadError> {
        self.expect(Tok::LBrace, "to open the geometry")?;
        let shape = self.geometry()?;
        self.expect(Tok::Semi, "after the geometry")?;
        let mut style = Style::color(self.color()?);
        self.expect(Tok::Semi, "after the colour")?;
        let braced = self.eat(&Tok::LBrace)?;
        let entity_name = self.name("the entity name")?;
        self.expect(Tok::Semi, "between entity and level")?;
        let level = self.level()?;
        if braced {
            self.expect(Tok::RBrace, "after the level")?;
        }
        let mut shape = shape;
        loop {
            let t = self.bump()?;
            match t.tok {
                Tok::RBrace => break,
                Tok::Semi => {}
                Tok::Word(w) if w.eq_ignore_ascii_case("fill") => style.fill = Some(self.color()?),
                Tok::Word(w) if w.eq_ignore_ascii_case("thickness") => {
                    let n = self.number("the thickness")?;
                    style.thickness = n as f32;
                    if let Tok::Word(u) = self.peek()?.tok {
                        if u.eq_ignore_ascii_case("world") {
                            style.unit = ThicknessUnit::World;
                            self.bump()?;
                        } else if u.eq_ignore_ascii_case("px") {
                            self.bump()?;
                        }
                    }
                }
                Tok::Word(w) if w.eq_ignore_ascii_case("picture") => {
                    if let Some(why) = Shape::picture(shape.clone()).picture_problem() {
                        return Err(Self::err_at(&t, why.to_owned()));
                    }
                    if !matches!(shape, Shape::Picture(_)) {
                        shape = Shape::picture(shape);
                    }
                }
                _ => {
                    return Err(Self::err_at(
                        &t,
                        format!(
                            "expected '}}', 'fill', 'thickness' or 'picture' after the filter, found {}",
                            t.tok.describe()
                        ),
                    ));
                }
            }
        }
        Ok(Primitive {
            shape,
            style,
            entity: self.log.entities.intern(&entity_name),
            level,
        })
    }

    fn geometry(&mut self) -> Result<Shape, ReadError> {
        let t = self.bump()?;
        let Tok::Word(kind) = t.tok else {
            return Err(Self::err_at(
                &t,
                format!("expected a shape name, found {}", t.tok.describe()),
            ));
        };
        let sep = self.bump()?;
        if sep.tok != Tok::Semi && sep.tok != Tok::Colon {
            return Err(Self::err_at(
                &sep,
                format!("expected ';' or ':' after '{kind}', found {}", sep.tok.describe()),
            ));
        }
        // A point given with a height (`(x, y, z)`) makes the shape one above
        // the floor; its other points then have height 0 unless given one.
        let kind = kind.to_ascii_lowercase();
        let shape = match kind.as_str() {
            "circle" => {
                let (center, high) = self.coords()?;
                self.expect(Tok::Semi, "after the circle's center")?;
                let radius = self.number("the radius")?;
                let normal = if self.eat(&Tok::Semi)? && self.peek()?.tok == Tok::LParen {
                    Some(self.vector3("a circle's normal is (x, y, z)")?)
                } else {
                    None
                };
                match (high, normal) {
                    (false, None) => Shape::Circle {
                        center: floor(center),
                        radius,
                    },
                    _ => raised(Raised::Circle {
                        center,
                        radius,
                        normal: normal.unwrap_or(UP),
                    }),
                }
            }
            "line" => {
                let (start, a) = self.coords()?;
                self.expect(Tok::Semi, "between the line's ends")?;
                let (end, b) = self.coords()?;
                if a || b {
                    raised(Raised::Path {
                        points: Box::new([start, end]),
                        closed: false,
                    })
                } else {
                    Shape::Line {
                        start: floor(start),
                        end: floor(end),
                    }
                }
            }
            "rectangle" => {
                let (center, high) = self.coords()?;
                self.expect(Tok::Semi, "after the rectangle's center")?;
                let size = self.point(RECTANGLE_SIZE)?;
                let orientation = if self.eat(&Tok::Semi)? {
                    self.number("the orientation")?
                } else {
                    0.0
                };
                if high {
                    // A horizontal rectangle at the centre's height.
                    let corners = Shape::rectangle_corners(floor(center), size, orientation);
                    raised(Raised::Path {
                        points: corners.iter().map(|c| [c.x, c.y, center[2]]).collect(),
                        closed: true,
                    })
                } else {
                    Shape::Rectangle {
                        center: floor(center),
                        size,
                        orientation,
                    }
                }
            }
            "polygon" | "polyline" => {
                let (first, mut high) = self.coords()?;
                let mut points = vec![first];
                while self.eat(&Tok::Semi)? {
                    if self.peek()?.tok != Tok::LParen {
                        break;
                    }
                    let (p, h) = self.coords()?;
                    points.push(p);
                    high |= h;
                }
                let closed = kind == "polygon";
                if high {
                    raised(Raised::Path {
                        points: points.into(),
                        closed,
                    })
                } else {
                    Shape::Polygon {
                        vertices: points.iter().map(|&p| floor(p)).collect(),
                        closed,
                    }
                }
            }
            "text" => {
                let (anchor, high) = self.coords()?;
                self.expect(Tok::Semi, "after the text's anchor")?;
                let s = self.bump()?;
                let Tok::Str(text) = s.tok else {
                    return Err(Self::err_at(
                        &s,
                        format!("expected a quoted string, found {}", s.tok.describe()),
                    ));
                };
                let size = if self.eat(&Tok::Semi)? {
                    self.number("the text size")?
                } else {
                    0.0
                };
                if high {
                    raised(Raised::Text {
                        anchor,
                        text: text.into(),
                        size,
                    })
                } else {
                    Shape::Text {
                        anchor: floor(anchor),
                        text: text.into(),
                        size,
                    }
                }
            }
            "point" => {
                let (position, high) = self.coords()?;
                let mut kind = MarkerKind::Cross;
                let mut size = 0.0;
                if self.eat(&Tok::Semi)? {
                    let k = self.bump()?;
                    kind = match k.tok {
                        Tok::Word(w) if w.eq_ignore_ascii_case("cross") => MarkerKind::Cross,
                        Tok::Word(w) if w.eq_ignore_ascii_case("dot") => MarkerKind::Dot,
                        _ => {
                            return Err(Self::err_at(
                                &k,
                                format!("expected 'cross' or 'dot', found {}", k.tok.describe()),
                            ));
                        }
                    };
                    if self.eat(&Tok::Semi)? {
                        size = self.number("the marker size")?;
                    }
                }
                if high {
                    raised(Raised::Point { position, kind, size })
                } else {
                    Shape::Point {
                        position: floor(position),
                        kind,
                        size,
                    }
                }
            }
            "arc" | "sector" => {
                let center = self.point(SECTOR_ON_FLOOR)?;
                self.expect(Tok::Semi, "after the center")?;
                let inner = self.number("the radius")?;
                self.expect(Tok::Semi, "after the radius")?;
                let outer = if kind == "sector" {
                    let outer = self.number("the outer radius")?;
                    self.expect(Tok::Semi, "after the outer radius")?;
                    outer
                } else {
                    inner
                };
                let start = self.number("the start angle")?;
                self.expect(Tok::Semi, "after the start angle")?;
                let sweep = self.number("the sweep")?;
                Shape::Sector {
                    center,
                    inner,
                    outer,
                    start,
                    sweep,
                }
            }
            "sphere" => {
                let (center, _) = self.coords()?;
                self.expect(Tok::Semi, "after the sphere's center")?;
                let radius = self.number("the radius")?;
                raised(Raised::Sphere { center, radius })
            }
            "cylinder" => {
                let (base, _) = self.coords()?;
                self.expect(Tok::Semi, "after the cylinder's base")?;
                let radius = self.number("the radius")?;
                self.expect(Tok::Semi, "after the radius")?;
                let height = self.number("the height")?;
                raised(Raised::Cylinder { base, radius, height })
            }
            "box" => {
                let (base, _) = self.coords()?;
                self.expect(Tok::Semi, "after the box's base")?;
                let size = self.vector3("a box's size is (length, width, height)")?;
                let orientation = if self.eat(&Tok::Semi)? {
                    self.number("the orientation")?
                } else {
                    0.0
                };
                raised(Raised::Box {
                    base,
                    size,
                    orientation,
                })
            }
            _ => {
                return Err(Self::err_at(
                    &t,
                    format!(
                        "unknown shape '{kind}' (expected circle, line, rectangle, polygon, polyline, \
                         text, point, arc, sector, sphere, cylinder or box)"
                    ),
                ));
            }
        };
        self.eat(&Tok::Semi)?;
        self.expect(Tok::RBrace, "to close the geometry")?;
        Ok(shape)
    }

    /// `(x, y)` or `(x, y, z)`: the numbers (z 0 when absent) and whether
    /// there were three.
    fn coords(&mut self) -> Result<(Vec3, bool), ReadError> {
        self.expect(Tok::LParen, "to open a point")?;
        let x = self.number("the x coordinate")?;
        self.expect(Tok::Comma, "between x and y")?;
        let y = self.number("the y coordinate")?;
        let z = if self.eat(&Tok::Comma)? {
            Some(self.number("the height z")?)
        } else {
            None
        };
        self.expect(Tok::RParen, "to close a point")?;
        Ok(([x, y, z.unwrap_or(0.0)], z.is_some()))
    }

    /// A point on the floor, `(x, y)`; `no_height` is the error for a
    /// point given with a height.
    fn point(&mut self, no_height: &str) -> Result<Vec2, ReadError> {
        let open = self.peek()?.clone();
        let (v, high) = self.coords()?;
        if high {
            return Err(Self::err_at(&open, no_height));
        }
        Ok(floor(v))
    }

    /// Three numbers `(x, y, z)`; `three` is the error for two.
    fn vector3(&mut self, three: &str) -> Result<Vec3, ReadError> {
        let open = self.peek()?.clone();
        let (v, high) = self.coords()?;
        if !high {
            return Err(Self::err_at(&open, three));
        }
        Ok(v)
    }

    fn number(&mut self, what: &str) -> Result<f64, ReadError> {
        let t = self.bump()?;
        if let Tok::Word(w) = t.tok
            && let Some(v) = parse_number(w)
        {
            return Ok(v);
        }
        Err(Self::err_at(
            &t,
            format!("expected a number for {what}, found {}", t.tok.describe()),
        ))
    }

    /// A header's `version N`: 1 to [`TEXT_VERSION`] read on, a newer one refused.
    fn version(&mut self) -> Result<(), ReadError> {
        let t = self.bump()?;
        let v = match t.tok {
            Tok::Word(w) => w.parse::<u32>().ok().filter(|&v| v >= 1),
            _ => None,
        };
        if v.is_none_or(|v| v > TEXT_VERSION) {
            // How to read the rest depends on it: the whole log is refused.
            self.fatal = true;
        }
        match v {
            Some(v) if v <= TEXT_VERSION => Ok(()),
            Some(v) => Err(Self::err_at(
                &t,
                format!(
                    "text notation version {v} needs a newer underlay (this one reads versions up \
                     to {TEXT_VERSION}); update underlay to read it"
                ),
            )),
            None => Err(Self::err_at(
                &t,
                format!(
                    "expected a version number (1 to {TEXT_VERSION}), found {}",
                    t.tok.describe()
                ),
            )),
        }
    }

    fn level(&mut self) -> Result<i32, ReadError> {
        let t = self.bump()?;
        if let Tok::Word(w) = t.tok
            && let Ok(v) = w.parse::<i32>()
        {
            return Ok(v);
        }
        Err(Self::err_at(
            &t,
            format!("expected an integer level, found {}", t.tok.describe()),
        ))
    }

    fn color(&mut self) -> Result<Rgba, ReadError> {
        let t = self.bump()?;
        if let Tok::Word(w) = t.tok
            && let Some(c) = Rgba::parse(w)
        {
            return Ok(c);
        }
        Err(Self::err_at(
            &t,
            format!(
                "expected a colour (a name such as red, #rrggbb, #rrggbbaa or 0xRRGGBB), found {}",
                t.tok.describe()
            ),
        ))
    }

    fn name(&mut self, what: &str) -> Result<String, ReadError> {
        let t = self.bump()?;
        match t.tok {
            Tok::Word(w) => Ok(w.to_owned()),
            Tok::Str(s) => Ok(s),
            _ => Err(Self::err_at(
                &t,
                format!("expected {what}, found {}", t.tok.describe()),
            )),
        }
    }
}

/// Parses a number as the notation writes it: decimal or exponent form,
/// `inf`, `+inf`, `-inf`, `infinity`; NaN is not accepted.
fn parse_number(w: &str) -> Option<f64> {
    let lower = w.to_ascii_lowercase();
    let (neg, body) = match lower.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, lower.strip_prefix('+').unwrap_or(&lower)),
    };
    let v = if body == "inf" || body == "infinity" {
        f64::INFINITY
    } else if body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        body.parse::<f64>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

// What the parser says when a point that lies on the floor has a height.
const BOUNDS_ON_FLOOR: &str = "the bounds lie on the floor: write each corner (x, y)";
const RECTANGLE_SIZE: &str = "a rectangle's size is (length, width); for a solid with a height write \
                              { box; (x, y, z); (length, width, height); orientation }";
const SECTOR_ON_FLOOR: &str = "an arc or sector lies on the floor: write its center (x, y)";

/// The floor point under `v`.
fn floor(v: Vec3) -> Vec2 {
    Vec2::new(v[0], v[1])
}

fn raised(r: Raised) -> Shape {
    Shape::Raised(Box::new(r))
}

#[cfg(test)]
mod tests;
