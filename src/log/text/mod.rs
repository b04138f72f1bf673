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
//! level} }`, optionally followed by `; fill COLOUR` and `; thickness N px`
//! (or `world`). Geometries: `{circle; C; r}`, `{line; A; B}` (`line:`
//! also accepted, as in Figure 3.7), `{rectangle; C; (length, width);
//! orientation}`, `{polygon; V; V; …}` (closed), `{polyline; V; …}` (open),
//! `{text; A; "string"; size}` and `{point; P; cross|dot; size}`, with
//! points written `(x, y)`. Colours are names (`red`), `#rrggbb`,
//! `#rrggbbaa` or `0xRRGGBB`. Two more items carry the rest of the model:
//! `{ header; name "…"; time relative; unit m; threshold 0.05; max-level
//! 2; bounds (x, y) (x, y) }` and entity declarations `{ entity; name;
//! {parent; parent} }`. Entity names and strings may be quoted with `"`.
//! `//` starts a comment to the end of the line. `docs/FORMAT.md` has the
//! full grammar.
//!
//! [`print()`] writes text that [`parse`] reads back to an equal log, in the
//! thesis's style for logs the thesis could express.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::native::add_parent_checked;
use super::{
    DisplayHints, EntityId, Frame, FrameTime, Header, Log, MarkerKind, Place, Primitive, ReadError, Rgba,
    Shape, Style, ThicknessUnit, TimeUnit, Vec2, Warnings, close_frame,
};

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
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok<'a> {
    LBrace,
    RBrace,
    LParen,
    RParen,
    Semi,
    Colon,
    Comma,
    Word(&'a str),
    Str(String),
    Eof,
}

impl Tok<'_> {
    fn describe(&self) -> String {
        match self {
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::Semi => "';'".into(),
            Tok::Colon => "':'".into(),
            Tok::Comma => "','".into(),
            // Quoted input is cut: a 4 MiB word is not echoed whole.
            Tok::Word(w) => format!("'{}'", crate::log::summary::shorten(w, 80)),
            Tok::Str(s) => crate::log::summary::shorten(&format!("{s:?}"), 80),
            Tok::Eof => "the end of the text".into(),
        }
    }
}

/// A token, its line and the text of that line before it (the column is
/// counted only when an error needs it, so long lines stay linear).
#[derive(Clone, Debug)]
struct Spanned<'a> {
    tok: Tok<'a>,
    line: usize,
    before: &'a str,
}

impl Spanned<'_> {
    /// The 1-based column, in characters.
    fn col(&self) -> usize {
        self.before.chars().count() + 1
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    line_start: usize,
}

fn is_delim(c: char) -> bool {
    c.is_whitespace() || matches!(c, '{' | '}' | '(' | ')' | ';' | ':' | ',' | '"')
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        let src = src.strip_prefix('\u{feff}').unwrap_or(src);
        Lexer {
            src,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn col(&self, pos: usize) -> usize {
        self.src[self.line_start..pos].chars().count() + 1
    }

    fn error(&self, pos: usize, message: impl Into<String>) -> ReadError {
        ReadError::Syntax {
            line: self.line,
            column: self.col(pos),
            message: message.into(),
        }
    }

    fn next(&mut self) -> Result<Spanned<'a>, ReadError> {
        // Skip whitespace and comments.
        loop {
            let rest = &self.src[self.pos..];
            let Some(c) = rest.chars().next() else { break };
            if c == '\n' {
                self.pos += 1;
                self.line += 1;
                self.line_start = self.pos;
            } else if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else if rest.starts_with("//") {
                self.pos += rest.find('\n').unwrap_or(rest.len());
            } else {
                break;
            }
        }
        let start = self.pos;
        let (line, before) = (self.line, &self.src[self.line_start..start]);
        let rest = &self.src[start..];
        let Some(c) = rest.chars().next() else {
            return Ok(Spanned {
                tok: Tok::Eof,
                line,
                before,
            });
        };
        let single = match c {
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ';' => Some(Tok::Semi),
            ':' => Some(Tok::Colon),
            ',' => Some(Tok::Comma),
            _ => None,
        };
        let tok = if let Some(t) = single {
            self.pos += 1;
            t
        } else if c == '"' {
            Tok::Str(self.string(start)?)
        } else {
            let len = rest.find(is_delim).unwrap_or(rest.len());
            self.pos += len;
            Tok::Word(&rest[..len])
        };
        Ok(Spanned { tok, line, before })
    }

    /// A quoted string starting at `start` (the opening quote).
    fn string(&mut self, start: usize) -> Result<String, ReadError> {
        let mut out = String::new();
        let mut chars = self.src[start + 1..].char_indices();
        loop {
            let Some((i, c)) = chars.next() else {
                return Err(self.error(start, "string is not closed"));
            };
            match c {
                '"' => {
                    self.pos = start + 1 + i + 1;
                    return Ok(out);
                }
                '\\' => {
                    let esc = chars.next().map(|(_, e)| e);
                    match esc {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('\\') => out.push('\\'),
                        Some('"') => out.push('"'),
                        Some('u') => {
                            let rest = chars.as_str();
                            let close = rest.find('}');
                            let code = rest
                                .strip_prefix('{')
                                .zip(close)
                                .and_then(|(_, close)| u32::from_str_radix(&rest[1..close], 16).ok())
                                .and_then(char::from_u32);
                            let (Some(ch), Some(close)) = (code, close) else {
                                return Err(self.error(start + 1 + i, "bad \\u{…} escape in string"));
                            };
                            out.push(ch);
                            for _ in 0..=close {
                                chars.next();
                            }
                        }
                        _ => return Err(self.error(start + 1 + i, "unknown escape in string")),
                    }
                }
                '\n' => return Err(self.error(start, "string is not closed on its line")),
                c => out.push(c),
            }
        }
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
}

/// Parses a log in text notation.
pub fn parse(src: &str) -> Result<Log, ReadError> {
    let mut p = Parser {
        lex: Lexer::new(src),
        peeked: None,
        log: Log::new(),
        warnings: Warnings::default(),
        frames_seen: 0,
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

    fn log(&mut self) -> Result<(), ReadError> {
        self.expect(Tok::LBrace, "to open the log")?;
        loop {
            let t = self.bump()?;
            match t.tok {
                Tok::RBrace => break,
                Tok::LBrace => self.item(&t)?,
                Tok::Semi | Tok::Comma => {}
                _ => {
                    return Err(Self::err_at(
                        &t,
                        format!("expected '{{' to open a frame, found {}", t.tok.describe()),
                    ));
                }
            }
        }
        let t = self.bump()?;
        if t.tok != Tok::Eof {
            return Err(Self::err_at(
                &t,
                format!("unexpected {} after the end of the log", t.tok.describe()),
            ));
        }
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
                    "bounds" => {
                        let lo = self.point()?;
                        let hi = self.point()?;
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
                _ => {
                    return Err(Self::err_at(
                        &t,
                        format!(
                            "expected '}}', 'fill' or 'thickness' after the filter, found {}",
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
        let kind = kind.to_ascii_lowercase();
        let shape = match kind.as_str() {
            "circle" => {
                let center = self.point()?;
                self.expect(Tok::Semi, "after the circle's center")?;
                let radius = self.number("the radius")?;
                Shape::Circle { center, radius }
            }
            "line" => {
                let start = self.point()?;
                self.expect(Tok::Semi, "between the line's ends")?;
                let end = self.point()?;
                Shape::Line { start, end }
            }
            "rectangle" => {
                let center = self.point()?;
                self.expect(Tok::Semi, "after the rectangle's center")?;
                let size = self.point()?;
                let orientation = if self.eat(&Tok::Semi)? {
                    self.number("the orientation")?
                } else {
                    0.0
                };
                Shape::Rectangle {
                    center,
                    size,
                    orientation,
                }
            }
            "polygon" | "polyline" => {
                let mut vertices = vec![self.point()?];
                while self.eat(&Tok::Semi)? {
                    if self.peek()?.tok != Tok::LParen {
                        break;
                    }
                    vertices.push(self.point()?);
                }
                Shape::Polygon {
                    vertices: vertices.into(),
                    closed: kind == "polygon",
                }
            }
            "text" => {
                let anchor = self.point()?;
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
                Shape::Text {
                    anchor,
                    text: text.into(),
                    size,
                }
            }
            "point" => {
                let position = self.point()?;
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
                Shape::Point { position, kind, size }
            }
            "arc" | "sector" => {
                let center = self.point()?;
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
            _ => {
                return Err(Self::err_at(
                    &t,
                    format!(
                        "unknown shape '{kind}' (expected circle, line, rectangle, polygon, polyline, \
                         text, point, arc or sector)"
                    ),
                ));
            }
        };
        self.eat(&Tok::Semi)?;
        self.expect(Tok::RBrace, "to close the geometry")?;
        Ok(shape)
    }

    fn point(&mut self) -> Result<Vec2, ReadError> {
        self.expect(Tok::LParen, "to open a point")?;
        let x = self.number("the x coordinate")?;
        self.expect(Tok::Comma, "between x and y")?;
        let y = self.number("the y coordinate")?;
        self.expect(Tok::RParen, "to close a point")?;
        Ok(Vec2::new(x, y))
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

// ---------------------------------------------------------------------------
// Printer

/// Formats a number so that [`parse`] reads back exactly the same value:
/// plain decimals in the usual range (`700`, `27.56`), exponent form
/// outside it, `inf`/`-inf`.
pub fn fmt_f64(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-5..1e16).contains(&a) || !a.is_finite() {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn fmt_f32(v: f32) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-5..1e16).contains(&a) || !a.is_finite() {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn fmt_color(c: Rgba) -> String {
    match c.name() {
        Some(n) => n.to_owned(),
        None if c.a() == 255 => format!("#{:06x}", c.rgb()),
        None => format!("#{:08x}", c.0),
    }
}

/// A name as a bare word when that reads back unchanged, else quoted.
fn fmt_name(s: &str) -> String {
    let bare = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | '+' | '@' | '#'))
        && !s.contains("//");
    if bare { s.to_owned() } else { quote(s) }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn fmt_point(v: Vec2) -> String {
    format!("({}, {})", fmt_f64(v.x), fmt_f64(v.y))
}

fn fmt_time(t: FrameTime) -> String {
    match t {
        FrameTime::Instant(t) => fmt_f64(t),
        FrameTime::Persistent { start, end } => format!("{{{}; {}}}", fmt_f64(start), fmt_f64(end)),
    }
}

/// One primitive in text notation, e.g.
/// `{ { circle; (2271, -1136); 70 }; green; {position; 0} }`.
pub fn primitive_to_string(log: &Log, p: &Primitive) -> String {
    let geometry = match &p.shape {
        Shape::Circle { center, radius } => format!("circle; {}; {}", fmt_point(*center), fmt_f64(*radius)),
        Shape::Line { start, end } => format!("line; {}; {}", fmt_point(*start), fmt_point(*end)),
        Shape::Rectangle {
            center,
            size,
            orientation,
        } => format!(
            "rectangle; {}; {}; {}",
            fmt_point(*center),
            fmt_point(*size),
            fmt_f64(*orientation)
        ),
        Shape::Polygon { vertices, closed } => {
            let vs: Vec<String> = vertices.iter().map(|&v| fmt_point(v)).collect();
            format!(
                "{}; {}",
                if *closed { "polygon" } else { "polyline" },
                vs.join("; ")
            )
        }
        Shape::Text { anchor, text, size } => {
            format!(
                "text; {}; {}; {}",
                fmt_point(*anchor),
                quote(text),
                fmt_f64(*size)
            )
        }
        Shape::Point { position, kind, size } => format!(
            "point; {}; {}; {}",
            fmt_point(*position),
            match kind {
                MarkerKind::Cross => "cross",
                MarkerKind::Dot => "dot",
            },
            fmt_f64(*size)
        ),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } if inner == outer => format!(
            "arc; {}; {}; {}; {}",
            fmt_point(*center),
            fmt_f64(*inner),
            fmt_f64(*start),
            fmt_f64(*sweep)
        ),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => format!(
            "sector; {}; {}; {}; {}; {}",
            fmt_point(*center),
            fmt_f64(*inner),
            fmt_f64(*outer),
            fmt_f64(*start),
            fmt_f64(*sweep)
        ),
        Shape::Raised(_) => todo!("issue 33: raised shapes in the text notation"),
    };
    let mut s = format!(
        "{{ {{ {geometry} }}; {}; {{{}; {}}}",
        fmt_color(p.style.color),
        fmt_name(log.entities.name(p.entity)),
        p.level
    );
    if let Some(fill) = p.style.fill {
        let _ = write!(s, "; fill {}", fmt_color(fill));
    }
    if p.style.thickness != 0.0 || p.style.unit != ThicknessUnit::Pixels {
        let unit = match p.style.unit {
            ThicknessUnit::Pixels => "px",
            ThicknessUnit::World => "world",
        };
        let _ = write!(s, "; thickness {} {unit}", fmt_f32(p.style.thickness));
    }
    s.push_str(" }");
    s
}

fn header_item(h: &Header) -> Option<String> {
    if h == &Header::default() {
        return None;
    }
    let mut s = String::from("{ header");
    if !h.name.is_empty() {
        let _ = write!(s, "; name {}", quote(&h.name));
    }
    if h.time_unit == TimeUnit::RelativeSeconds {
        s.push_str("; time relative");
    }
    if h.world_unit != "mm" {
        let _ = write!(s, "; unit {}", fmt_name(&h.world_unit));
    }
    let DisplayHints {
        instant_threshold,
        default_max_level,
        world_bounds,
    } = &h.hints;
    if let Some(t) = instant_threshold {
        let _ = write!(s, "; threshold {}", fmt_f64(*t));
    }
    if let Some(l) = default_max_level {
        let _ = write!(s, "; max-level {l}");
    }
    if let Some((lo, hi)) = world_bounds {
        let _ = write!(s, "; bounds {} {}", fmt_point(*lo), fmt_point(*hi));
    }
    s.push_str(" }");
    Some(s)
}

/// Whether parsing the printed frames alone would recreate the entity
/// table: no edges, every entity used, first uses in id order.
fn entities_implied<'a>(log: &Log, frames: impl Iterator<Item = &'a Frame>) -> bool {
    if log.entities.has_edges() {
        return false;
    }
    let mut next = 0u32;
    for f in frames {
        for p in log.frame_primitives(f) {
            if p.entity.0 == next {
                next += 1;
            } else if p.entity.0 > next {
                return false;
            }
        }
    }
    next as usize == log.entities.len()
}

fn entity_item(log: &Log, id: EntityId, parents: &[EntityId]) -> String {
    let mut s = format!("{{ entity; {}", fmt_name(log.entities.name(id)));
    if !parents.is_empty() {
        let names: Vec<String> = parents.iter().map(|&p| fmt_name(log.entities.name(p))).collect();
        let _ = write!(s, "; {{{}}}", names.join("; "));
    }
    s.push_str(" }");
    s
}

/// Writes the frames of `log` that `keep` accepts, with the header and (when
/// needed to read back the same entity table) the entity declarations.
pub fn write_filtered(log: &Log, w: &mut impl Write, keep: impl Fn(&Frame) -> bool) -> io::Result<()> {
    w.write_all(b"{\n")?;
    if let Some(h) = header_item(&log.header) {
        writeln!(w, "{h}")?;
    }
    if !entities_implied(log, log.frames.iter().filter(|f| keep(f))) {
        // In id order; an entity with a later parent is declared again
        // with its parents once they exist (as in the binary format).
        let mut later = Vec::new();
        for id in log.entities.ids() {
            let parents = log.entities.parents(id);
            if parents.iter().all(|p| p.0 < id.0) {
                writeln!(w, "{}", entity_item(log, id, parents))?;
            } else {
                writeln!(w, "{}", entity_item(log, id, &[]))?;
                later.push(id);
            }
        }
        for id in later {
            writeln!(w, "{}", entity_item(log, id, log.entities.parents(id)))?;
        }
    }
    for f in log.frames.iter().filter(|f| keep(f)) {
        let prims = log.frame_primitives(f);
        if prims.is_empty() {
            writeln!(w, "{{ {}; {{ }} }}", fmt_time(f.time))?;
            continue;
        }
        writeln!(w, "{{ {}; {{", fmt_time(f.time))?;
        for p in prims {
            writeln!(w, "  {}", primitive_to_string(log, p))?;
        }
        w.write_all(b"} }\n")?;
    }
    w.write_all(b"}\n")
}

/// Writes the whole log in text notation.
pub fn write(log: &Log, w: &mut impl Write) -> io::Result<()> {
    write_filtered(log, w, |_| true)
}

/// The whole log in text notation.
pub fn print(log: &Log) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(log, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests;
