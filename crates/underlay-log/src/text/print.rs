//! The text notation's printer: [`print`] and [`write`] write a log that
//! [`parse`](super::parse) reads back equal, in the thesis's style for logs
//! the thesis could express. A shape above the floor prints its points as
//! `(x, y, z)`, every one of them (even at height 0), so that it reads back
//! above the floor; a shape on the floor prints as it always has. A log
//! printed with one says `version 2` in its header (and only then: see
//! [`TEXT_VERSION`](super::TEXT_VERSION)).

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::raised::UP;
use crate::{
    DisplayHints, EntityId, Frame, FrameTime, Header, Log, MarkerKind, Primitive, Raised, Rgba, Shape,
    ThicknessUnit, TimeUnit, Vec2, Vec3,
};

/// Formats a number so that [`parse`](super::parse) reads back exactly the same value:
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

fn fmt_point3(v: &Vec3) -> String {
    format!("({}, {}, {})", fmt_f64(v[0]), fmt_f64(v[1]), fmt_f64(v[2]))
}

fn fmt_marker(kind: MarkerKind) -> &'static str {
    match kind {
        MarkerKind::Cross => "cross",
        MarkerKind::Dot => "dot",
    }
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
    let (shape, picture) = match &p.shape {
        Shape::Picture(inner) => (&**inner, true),
        shape => (shape, false),
    };
    let mut s = format!(
        "{{ {{ {} }}; {}; {{{}; {}}}",
        geometry(shape),
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
    if picture {
        s.push_str("; picture");
    }
    s.push_str(" }");
    s
}

/// A shape's kind and arguments.
fn geometry(shape: &Shape) -> String {
    match shape {
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
            fmt_marker(*kind),
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
        Shape::Raised(r) => raised_geometry(r),
        // Readers refuse a picture shape inside another.
        Shape::Picture(inner) => geometry(inner),
    }
}

/// The geometry of a shape above the floor: its kind and arguments, every
/// point with its height.
fn raised_geometry(r: &Raised) -> String {
    match r {
        Raised::Path { points, closed } => {
            let kind = match (points.len(), closed) {
                (2, false) => "line",
                (_, true) => "polygon",
                _ => "polyline",
            };
            let ps: Vec<String> = points.iter().map(fmt_point3).collect();
            format!("{kind}; {}", ps.join("; "))
        }
        Raised::Circle {
            center,
            radius,
            normal,
        } => {
            let mut s = format!("circle; {}; {}", fmt_point3(center), fmt_f64(*radius));
            // Bit for bit: a normal with a -0 is written.
            if normal.iter().zip(UP).any(|(a, b)| a.to_bits() != b.to_bits()) {
                let _ = write!(s, "; {}", fmt_point3(normal));
            }
            s
        }
        Raised::Text { anchor, text, size } => {
            format!(
                "text; {}; {}; {}",
                fmt_point3(anchor),
                quote(text),
                fmt_f64(*size)
            )
        }
        Raised::Point { position, kind, size } => format!(
            "point; {}; {}; {}",
            fmt_point3(position),
            fmt_marker(*kind),
            fmt_f64(*size)
        ),
        Raised::Sphere { center, radius } => format!("sphere; {}; {}", fmt_point3(center), fmt_f64(*radius)),
        Raised::Cylinder { base, radius, height } => format!(
            "cylinder; {}; {}; {}",
            fmt_point3(base),
            fmt_f64(*radius),
            fmt_f64(*height)
        ),
        Raised::Box {
            base,
            size,
            orientation,
        } => format!(
            "box; {}; {}; {}",
            fmt_point3(base),
            fmt_point3(size),
            fmt_f64(*orientation)
        ),
    }
}

/// The header item, when there is anything to say: the header's fields,
/// and `version` when the frames printed need a reader of that version
/// (`None`: version 1, said by nothing).
fn header_item(h: &Header, version: Option<u32>) -> Option<String> {
    if h == &Header::default() && version.is_none() {
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
    if let Some(v) = version {
        let _ = write!(s, "; version {v}");
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
    // The oldest version that holds the frames written.
    let mut version = None;
    for p in log
        .frames
        .iter()
        .filter(|f| keep(f))
        .flat_map(|f| log.frame_primitives(f))
    {
        match p.shape {
            Shape::Picture(_) => {
                version = Some(super::PICTURE_TEXT_VERSION);
                break;
            }
            Shape::Raised(_) => version = Some(super::RAISED_TEXT_VERSION),
            _ => {}
        }
    }
    if let Some(h) = header_item(&log.header, version) {
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
