//! What every reader does with what it read: primitives that cannot be
//! drawn (NaN or infinite coordinates, negative sizes) and frames whose
//! time is unusable are dropped with a warning naming the frame and the
//! place in the file ([`close_frame`]); warnings are capped
//! ([`Warnings`]).

use std::collections::HashMap;

use super::model::{Frame, FrameTime, LoadWarning, Log, Primitive, Shape, Vec2};

/// The largest record (one frame) any reader accepts: 64 MiB. Guards
/// against corrupt length prefixes making a reader allocate unbounded memory.
pub const MAX_RECORD_LEN: u64 = 64 << 20;

/// At most this many warnings are kept per load; the rest are counted.
pub const MAX_WARNINGS: usize = 200;

/// Where a frame came from, for warnings.
#[derive(Clone, Copy, Debug)]
pub enum Place {
    /// Byte offset of the frame's record in a binary file.
    Byte(u64),
    /// Line of the frame in a text file.
    Line(usize),
}

/// Warnings of one kind kept before the rest of that kind are counted.
pub const PER_KIND: usize = 3;

/// At most this many kinds are told apart; further ones count together.
const MAX_KINDS: usize = 1000;

/// Which warnings are kept: the first [`PER_KIND`] of each kind (messages
/// that differ only in their numbers and quoted text are one kind), at
/// most [`MAX_WARNINGS`] in all; the rest are counted by kind and said in
/// one line each ([`Tally::summary`]): a file of ten thousand broken lines
/// says so in a few lines, not ten thousand.
#[derive(Debug, Default)]
pub struct Tally {
    /// Per kind: how many kept, how many more.
    kinds: HashMap<String, (usize, u64)>,
    /// Kinds in the order they first came.
    order: Vec<String>,
    kept: usize,
    /// Warnings past [`MAX_KINDS`] kinds, not told apart.
    other: u64,
}

impl Tally {
    /// Whether a warning saying `message` is kept (it is counted either way).
    pub fn keep(&mut self, message: &str) -> bool {
        let kind = kind_of(message);
        if !self.kinds.contains_key(&kind) {
            if self.kinds.len() >= MAX_KINDS {
                self.other += 1;
                return false;
            }
            self.order.push(kind.clone());
            self.kinds.insert(kind.clone(), (0, 0));
        }
        let Some(entry) = self.kinds.get_mut(&kind) else {
            return false;
        };
        if entry.0 < PER_KIND && self.kept < MAX_WARNINGS {
            entry.0 += 1;
            self.kept += 1;
            true
        } else {
            entry.1 += 1;
            false
        }
    }

    /// One line per kind that had more than was kept.
    pub fn summary(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .order
            .iter()
            .filter_map(|k| {
                let (_, more) = self.kinds.get(k)?;
                (*more > 0).then(|| format!("… and {} more like “{}”", group(*more), summary_of(k)))
            })
            .collect();
        if self.other > 0 {
            out.push(format!(
                "… and {} more warnings of other kinds",
                group(self.other)
            ));
        }
        out
    }
}

/// What kind of warning `message` is: its text with every number made `N`
/// and quoted text `…`.
pub fn kind_of(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(200));
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if out.len() > 200 {
            break;
        }
        match c {
            '0'..='9' => {
                out.push('N');
                while chars.peek().is_some_and(|d| d.is_ascii_digit() || *d == '.') {
                    chars.next();
                }
            }
            '\'' | '"' | '`' => {
                out.push(c);
                out.push('…');
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A kind as a summary names it: its first 100 characters.
fn summary_of(kind: &str) -> String {
    crate::summary::shorten(kind, 100)
}

/// `4311` → `4,311`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Collects load warnings, a few of each kind ([`Tally`]).
#[derive(Debug, Default)]
pub struct Warnings {
    list: Vec<LoadWarning>,
    tally: Tally,
}

impl Warnings {
    pub fn push(&mut self, place: Option<Place>, frame: Option<usize>, message: impl Into<String>) {
        let mut message = message.into();
        if !self.tally.keep(&message) {
            return;
        }
        let offset = match place {
            Some(Place::Byte(o)) => Some(o),
            Some(Place::Line(l)) => {
                message = format!("line {l}: {message}");
                None
            }
            None => None,
        };
        self.list.push(LoadWarning {
            offset,
            frame,
            message,
        });
    }

    /// The warnings, plus a line for each kind not all kept.
    pub fn finish(mut self) -> Vec<LoadWarning> {
        self.list
            .extend(self.tally.summary().into_iter().map(|message| LoadWarning {
                offset: None,
                frame: None,
                message,
            }));
        self.list
    }
}

/// Validates the primitives pushed onto `log` since `start` and the frame
/// time, then appends the frame. Primitives that cannot be drawn are
/// removed and the whole frame is dropped when its time is unusable; each
/// drop is a warning naming the frame (`index`, in file order) and the
/// primitive (index within the frame).
pub fn close_frame(
    log: &mut Log,
    warnings: &mut Warnings,
    time: FrameTime,
    start: usize,
    index: usize,
    place: Place,
) {
    if let Some(problem) = time_problem(time) {
        warnings.push(Some(place), Some(index), format!("frame dropped: {problem}"));
        log.primitives.truncate(start);
        return;
    }
    let prims = &mut log.primitives[start..];
    if let Some(first_bad) = prims.iter().position(|p| !drawable(p)) {
        let mut keep = first_bad;
        for i in first_bad..prims.len() {
            match (!drawable(&prims[i])).then(|| shape_problem(&prims[i])).flatten() {
                Some(problem) => warnings.push(
                    Some(place),
                    Some(index),
                    format!(
                        "primitive {i} ({}) dropped: {problem}",
                        prims[i].shape.kind_name()
                    ),
                ),
                None => {
                    prims.swap(keep, i);
                    keep += 1;
                }
            }
        }
        log.primitives.truncate(start + keep);
    }
    log.frames.push(Frame {
        time,
        primitives: start..log.primitives.len(),
    });
}

/// Why a frame's time is unusable, if it is (the frame is dropped).
pub(crate) fn time_problem(time: FrameTime) -> Option<String> {
    match time {
        FrameTime::Instant(t) if !t.is_finite() => Some(format!("instantaneous time {t} is not finite")),
        FrameTime::Instant(_) => None,
        FrameTime::Persistent { start, end } => {
            if start.is_nan() || end.is_nan() {
                Some(format!("persistent time {{{start}; {end}}} is not a number"))
            } else if end < start {
                Some(format!(
                    "persistent frame ends ({end}) before it starts ({start})"
                ))
            } else if start == f64::INFINITY || end == f64::NEG_INFINITY {
                Some(format!("persistent frame {{{start}; {end}}} covers no time"))
            } else {
                None
            }
        }
    }
}

/// Whether a primitive can be drawn: finite coordinates, finite
/// non-negative sizes, a polygon with vertices. [`shape_problem`] says why not.
#[inline]
pub fn drawable(p: &Primitive) -> bool {
    shape_drawable(&p.shape) && f64::from(p.style.thickness).is_finite() && p.style.thickness >= 0.0
}

#[inline]
fn shape_drawable(shape: &Shape) -> bool {
    let size = |s: f64| s.is_finite() && s >= 0.0;
    match shape {
        Shape::Circle { center, radius } => center.is_finite() && size(*radius),
        Shape::Line { start, end } => start.is_finite() && end.is_finite(),
        Shape::Rectangle {
            center,
            size: s,
            orientation,
        } => center.is_finite() && size(s.x) && size(s.y) && orientation.is_finite(),
        Shape::Polygon { vertices, .. } => !vertices.is_empty() && vertices.iter().all(|v| v.is_finite()),
        Shape::Text { anchor, size: s, .. } => anchor.is_finite() && size(*s),
        Shape::Point {
            position, size: s, ..
        } => position.is_finite() && size(*s),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => {
            center.is_finite()
                && size(*inner)
                && size(*outer)
                && inner <= outer
                && start.is_finite()
                && sweep.is_finite()
        }
        Shape::Raised(r) => r.problem().is_none(),
        Shape::Picture(inner) => shape.picture_problem().is_none() && shape_drawable(inner),
    }
}

/// Why a primitive cannot be drawn, if it cannot.
pub fn shape_problem(p: &Primitive) -> Option<String> {
    problem_of(&p.shape).or_else(|| {
        let t = f64::from(p.style.thickness);
        if !t.is_finite() {
            Some(format!("thickness {t} is not finite"))
        } else if t < 0.0 {
            Some(format!("thickness {t} is negative"))
        } else {
            None
        }
    })
}

/// Why a shape cannot be drawn, if it cannot.
fn problem_of(shape: &Shape) -> Option<String> {
    let point =
        |name: &str, v: Vec2| (!v.is_finite()).then(|| format!("{name} ({}, {}) is not finite", v.x, v.y));
    let size = |name: &str, s: f64| {
        if !s.is_finite() {
            Some(format!("{name} {s} is not finite"))
        } else if s < 0.0 {
            Some(format!("{name} {s} is negative"))
        } else {
            None
        }
    };
    match shape {
        Shape::Circle { center, radius } => point("center", *center).or_else(|| size("radius", *radius)),
        Shape::Line { start, end } => point("start", *start).or_else(|| point("end", *end)),
        Shape::Rectangle {
            center,
            size: s,
            orientation,
        } => point("center", *center)
            .or_else(|| size("length", s.x))
            .or_else(|| size("width", s.y))
            .or_else(|| {
                (!orientation.is_finite()).then(|| format!("orientation {orientation} is not finite"))
            }),
        Shape::Polygon { vertices, .. } => {
            if vertices.is_empty() {
                Some("polygon has no vertices".to_owned())
            } else {
                vertices
                    .iter()
                    .position(|v| !v.is_finite())
                    .and_then(|i| point(&format!("vertex {i}"), vertices[i]))
            }
        }
        Shape::Text { anchor, size: s, .. } => point("anchor", *anchor).or_else(|| size("text size", *s)),
        Shape::Point {
            position, size: s, ..
        } => point("position", *position).or_else(|| size("marker size", *s)),
        Shape::Sector {
            center,
            inner,
            outer,
            start,
            sweep,
        } => point("center", *center)
            .or_else(|| size("inner radius", *inner))
            .or_else(|| size("outer radius", *outer))
            .or_else(|| (inner > outer).then(|| format!("inner radius {inner} exceeds outer radius {outer}")))
            .or_else(|| (!start.is_finite()).then(|| format!("start angle {start} is not finite")))
            .or_else(|| (!sweep.is_finite()).then(|| format!("sweep {sweep} is not finite"))),
        Shape::Raised(r) => r.invalid().map(|why| format!("raised {}: {why}", r.kind_name())),
        Shape::Picture(inner) => shape
            .picture_problem()
            .map(str::to_owned)
            .or_else(|| problem_of(inner).map(|why| format!("in the picture: {why}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EntityId, Style};

    fn circle(r: f64) -> Primitive {
        Primitive {
            shape: Shape::Circle {
                center: Vec2::new(1.0, 2.0),
                radius: r,
            },
            style: Style::default(),
            entity: EntityId(0),
            level: 0,
        }
    }

    #[test]
    fn close_frame_drops_bad_primitives_and_names_them() {
        let mut log = Log::new();
        log.entities.intern("e");
        let mut w = Warnings::default();
        log.primitives
            .extend([circle(1.0), circle(-1.0), circle(f64::NAN), circle(3.0)]);
        close_frame(&mut log, &mut w, FrameTime::Instant(1.0), 0, 7, Place::Byte(99));
        assert_eq!(log.frames.len(), 1);
        let radii: Vec<f64> = log
            .primitives
            .iter()
            .map(|p| match p.shape {
                Shape::Circle { radius, .. } => radius,
                _ => 0.0,
            })
            .collect();
        assert_eq!(radii, [1.0, 3.0]);
        let w = w.finish();
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].offset, Some(99));
        assert_eq!(w[0].frame, Some(7));
        assert!(
            w[0].message.contains("primitive 1") && w[0].message.contains("negative"),
            "{w:?}"
        );
        assert!(w[1].message.contains("primitive 2"), "{w:?}");
    }

    #[test]
    fn close_frame_drops_frames_with_unusable_times() {
        let mut log = Log::new();
        let mut w = Warnings::default();
        for (i, t) in [
            FrameTime::Persistent { start: 5.0, end: 1.0 },
            FrameTime::Instant(f64::INFINITY),
            FrameTime::Persistent {
                start: f64::NAN,
                end: 1.0,
            },
        ]
        .into_iter()
        .enumerate()
        {
            log.primitives.push(circle(1.0));
            close_frame(&mut log, &mut w, t, 0, i, Place::Line(3));
        }
        assert!(log.frames.is_empty() && log.primitives.is_empty());
        let w = w.finish();
        assert_eq!(w.len(), 3);
        assert!(w[0].message.starts_with("line 3: ") && w[0].message.contains("before it starts"));
    }

    #[test]
    fn warnings_are_capped_and_counted_by_kind() {
        // Thousands alike: three said, the rest in one line.
        let mut w = Warnings::default();
        for i in 0..4314 {
            w.push(Some(Place::Line(i + 1)), None, format!("'{i}' is not a number"));
        }
        let list = w.finish();
        assert_eq!(list.len(), PER_KIND + 1, "{list:?}");
        assert_eq!(list[0].message, "line 1: '0' is not a number");
        assert_eq!(list[3].message, "… and 4,311 more like “'…' is not a number”");
        // Many kinds: at most MAX_WARNINGS kept, every kind summed up.
        let mut w = Warnings::default();
        for i in 0..MAX_WARNINGS + 5 {
            // Distinct words (letters, not numbers): distinct kinds.
            let word: String = [i / 26 % 26, i % 26]
                .iter()
                .map(|&d| char::from(b'a' + d as u8))
                .collect();
            w.push(None, Some(i), format!("kind {word} of {i}"));
        }
        let list = w.finish();
        assert_eq!(
            list.len(),
            MAX_WARNINGS + 5,
            "kept, then one line each for the five not kept"
        );
        assert!(
            list.last()
                .is_some_and(|l| l.message.starts_with("… and 1 more like"))
        );
    }

    #[test]
    fn kinds_ignore_numbers_and_quoted_text() {
        assert_eq!(kind_of("at byte 1,204.5: `abc` x"), "at byte N,N: `…` x");
        assert_eq!(kind_of("'unclosed"), "'…'");
        assert_eq!(kind_of("x").len(), 1);
    }
}
