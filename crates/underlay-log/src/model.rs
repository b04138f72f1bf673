//! The in-memory visualization log: frames of primitives, entities and levels.
//!
//! This is the one model every other part of underlay works with. Readers
//! (native binary, thesis-era binary, text notation) convert *into* it and
//! writers convert *out of* it; nothing past this point sees wire types.
//!
//! Layout: all primitives of a log live in one `Vec<Primitive>` in recorded
//! order and each [`Frame`] holds the range of its primitives. Selection then
//! hands out borrowed slices, never copies.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Range;

pub use super::raised::Raised;
pub use crate::geom::Vec2;
pub use crate::geom::vec3::Vec3;

/// A colour as `0xRRGGBBAA` (alpha 255 = opaque).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgba(pub u32);

impl Rgba {
    pub const WHITE: Rgba = Rgba(0xffff_ffff);
    pub const BLACK: Rgba = Rgba(0x0000_00ff);
    pub const TRANSPARENT: Rgba = Rgba(0);

    /// Named colours of the thesis figures and of common robot-soccer
    /// drawings, as `(name, 0xRRGGBB)`.
    pub const NAMED: &'static [(&'static str, u32)] = &[
        ("red", 0xff0000),
        ("green", 0x00c000),
        ("blue", 0x0040ff),
        ("yellow", 0xffff00),
        ("orange", 0xff8000),
        ("pink", 0xff60c0),
        ("magenta", 0xff00ff),
        ("purple", 0x8000c0),
        ("cyan", 0x00ffff),
        ("white", 0xffffff),
        ("black", 0x000000),
        ("gray", 0x808080),
        ("grey", 0x808080),
        ("brown", 0x8b4513),
    ];

    /// An opaque colour from `0xRRGGBB`.
    pub const fn from_rgb(rgb: u32) -> Self {
        Rgba(((rgb & 0x00ff_ffff) << 8) | 0xff)
    }

    pub const fn from_rgba8(r: u8, g: u8, b: u8, a: u8) -> Self {
        Rgba(((r as u32) << 24) | ((g as u32) << 16) | ((b as u32) << 8) | a as u32)
    }

    /// Parses a colour name of [`Rgba::NAMED`], `#rrggbb`, `#rrggbbaa` or
    /// `0xRRGGBB` (all opaque except `#rrggbbaa`).
    pub fn parse(s: &str) -> Option<Self> {
        let hex = |h: &str| {
            (h.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(h, 16).ok())
                .flatten()
        };
        if let Some(h) = s.strip_prefix('#') {
            return match h.len() {
                6 => hex(h).map(Rgba::from_rgb),
                8 => hex(h).map(Rgba),
                _ => None,
            };
        }
        if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            return (h.len() <= 6 && !h.is_empty())
                .then(|| hex(h).map(Rgba::from_rgb))
                .flatten();
        }
        Rgba::named(s)
    }

    pub fn named(name: &str) -> Option<Self> {
        Self::NAMED
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, rgb)| Rgba::from_rgb(rgb))
    }

    /// The name of this colour if it is exactly one of [`Rgba::NAMED`].
    pub fn name(self) -> Option<&'static str> {
        if self.a() != 255 {
            return None;
        }
        Self::NAMED
            .iter()
            .find(|&&(_, rgb)| Rgba::from_rgb(rgb) == self)
            .map(|&(n, _)| n)
    }

    pub const fn r(self) -> u8 {
        (self.0 >> 24) as u8
    }
    pub const fn g(self) -> u8 {
        (self.0 >> 16) as u8
    }
    pub const fn b(self) -> u8 {
        (self.0 >> 8) as u8
    }
    pub const fn a(self) -> u8 {
        self.0 as u8
    }
    pub const fn rgb(self) -> u32 {
        self.0 >> 8
    }
    pub const fn with_alpha(self, a: u8) -> Self {
        Rgba((self.0 & 0xffff_ff00) | a as u32)
    }
}

impl fmt::Debug for Rgba {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:08x}", self.0)
    }
}

/// What a primitive's thickness is measured in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ThicknessUnit {
    /// Screen pixels of the video frame: stays the same width everywhere.
    #[default]
    Pixels,
    /// World units: painted lines shrink with distance like real ones.
    World,
}

/// How a primitive is painted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Outline colour (text colour for text, marker colour for points).
    pub color: Rgba,
    /// Fill colour for closed shapes; `None` draws the outline only.
    pub fill: Option<Rgba>,
    /// Outline thickness in `unit`; 0 means the renderer's default.
    pub thickness: f32,
    pub unit: ThicknessUnit,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: Rgba::WHITE,
            fill: None,
            thickness: 0.0,
            unit: ThicknessUnit::Pixels,
        }
    }
}

impl Style {
    pub fn color(color: Rgba) -> Self {
        Style {
            color,
            ..Style::default()
        }
    }
}

/// The look of a point marker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MarkerKind {
    #[default]
    Cross,
    Dot,
}

/// The geometry of a primitive, in world units. Angles are radians,
/// counter-clockwise from the world x axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Circle {
        center: Vec2,
        radius: f64,
    },
    Line {
        start: Vec2,
        end: Vec2,
    },
    /// A rectangle of `size.x` along its orientation and `size.y` across it.
    Rectangle {
        center: Vec2,
        size: Vec2,
        orientation: f64,
    },
    Polygon {
        vertices: Box<[Vec2]>,
        closed: bool,
    },
    /// Text anchored at its left end of the baseline; `size` is the glyph
    /// height in pixels (world units when the style's unit is `World`).
    Text {
        anchor: Vec2,
        text: Box<str>,
        size: f64,
    },
    /// A marker at a point; `size` in pixels (world units when the style's
    /// unit is `World`), 0 meaning the renderer's default.
    Point {
        position: Vec2,
        kind: MarkerKind,
        size: f64,
    },
    /// Part of a ring (an annular sector): the points between `inner` and
    /// `outer` from `center` whose direction lies from `start` to
    /// `start + sweep` (counter-clockwise for a positive sweep, clockwise
    /// for a negative one; a sweep of 2π or more is the whole ring). With
    /// `inner == outer` it is a circular arc, a curve with no area; with
    /// `inner == 0` a pie slice.
    Sector {
        center: Vec2,
        inner: f64,
        outer: f64,
        start: f64,
        sweep: f64,
    },
    /// A shape with heights, above the floor ([`Raised`]).
    Raised(Box<Raised>),
    /// A floor shape whose coordinates are pixels of the picture, not the
    /// world: x to the right and y down from the centre of the top-left
    /// pixel, angles from x towards y (clockwise on screen), every size and
    /// thickness in pixels. It is drawn over everything, never hidden,
    /// whatever the calibration — an annotation of the picture (ROS's
    /// `ImageMarker`, Foxglove's `ImageAnnotations`). The shape inside is
    /// one of the floor shapes (not [`Shape::Raised`] nor another picture
    /// shape); readers refuse others ([`Shape::picture_problem`]).
    Picture(Box<Shape>),
}

impl Shape {
    /// The short name used by the text notation and `log info`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Shape::Circle { .. } => "circle",
            Shape::Line { .. } => "line",
            Shape::Rectangle { .. } => "rectangle",
            Shape::Polygon { .. } => "polygon",
            Shape::Text { .. } => "text",
            Shape::Point { .. } => "point",
            Shape::Sector { inner, outer, .. } if inner == outer => "arc",
            Shape::Sector { .. } => "sector",
            Shape::Raised(r) => r.kind_name(),
            Shape::Picture(s) => s.kind_name(),
        }
    }

    /// A floor shape in the picture's pixels ([`Shape::Picture`]).
    pub fn picture(shape: Shape) -> Shape {
        Shape::Picture(Box::new(shape))
    }

    /// Why a picture shape cannot be drawn: it holds a shape above the
    /// floor or another picture shape. `None` for every other shape.
    pub fn picture_problem(&self) -> Option<&'static str> {
        match self {
            Shape::Picture(s) => match **s {
                Shape::Raised(_) => Some("a shape in the picture's pixels cannot have heights"),
                Shape::Picture(_) => Some("a shape in the picture's pixels holds another one"),
                _ => None,
            },
            _ => None,
        }
    }

    /// The corners of a rectangle in order (counter-clockwise).
    pub fn rectangle_corners(center: Vec2, size: Vec2, orientation: f64) -> [Vec2; 4] {
        let (s, c) = orientation.sin_cos();
        let (hx, hy) = (size.x / 2.0, size.y / 2.0);
        let at = |dx: f64, dy: f64| Vec2::new(center.x + dx * c - dy * s, center.y + dx * s + dy * c);
        [at(-hx, -hy), at(hx, -hy), at(hx, hy), at(-hx, hy)]
    }
}

/// Index of an entity in [`Entities`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityId(pub u32);

impl EntityId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One drawing: a shape, its style, and its filter info (entity and level).
#[derive(Clone, Debug, PartialEq)]
pub struct Primitive {
    pub shape: Shape,
    pub style: Style,
    pub entity: EntityId,
    /// Level of detail: smaller is more important; shown when ≤ the chosen maximum.
    pub level: i32,
}

/// When a frame applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FrameTime {
    /// Shown when it is the nearest instantaneous frame to the query time.
    Instant(f64),
    /// Shown whenever `start ≤ t ≤ end`; either end may be infinite.
    Persistent { start: f64, end: f64 },
}

impl FrameTime {
    /// The first time the frame applies to.
    pub fn start(self) -> f64 {
        match self {
            FrameTime::Instant(t) => t,
            FrameTime::Persistent { start, .. } => start,
        }
    }

    /// The last time the frame applies to.
    pub fn end(self) -> f64 {
        match self {
            FrameTime::Instant(t) => t,
            FrameTime::Persistent { end, .. } => end,
        }
    }

    pub fn is_persistent(self) -> bool {
        matches!(self, FrameTime::Persistent { .. })
    }
}

/// A frame: a time specification and a run of primitives in [`Log::primitives`].
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub time: FrameTime,
    pub primitives: Range<usize>,
}

/// Entity names, interned, with parent edges forming (intended to form) a DAG.
///
/// Readers add edges with [`Entities::add_parent_acyclic`], which refuses
/// an edge that would close a cycle. It keeps a topological order of the
/// entities up to date as edges come (Pearce and Kelly's dynamic
/// topological sort): an edge that agrees with the order costs O(1), an
/// edge to an entity without edges yet moves that entity to the front or
/// the back in O(1), and any other edge reorders only the entities between
/// its two ends. So the usual logs (parents declared before or after their
/// children, deep chains either way round, entities with many parents)
/// load in time linear in their edges — 100,000 entities and a million
/// edges in about a second — where a search of all ancestors per edge
/// took quadratic time.
#[derive(Clone, Debug, Default)]
pub struct Entities {
    names: Vec<String>,
    parents: Vec<Vec<EntityId>>,
    by_name: HashMap<String, EntityId>,
    /// Every edge as `child << 32 | parent`, for O(1) duplicate checks.
    edges: HashSet<u64>,
    /// The reverse of `parents`, for the order's forward searches.
    children: Vec<Vec<EntityId>>,
    /// Key of each entity in a topological order (parents first, keys
    /// distinct), valid while `cyclic` is false.
    order: Vec<i64>,
    /// The key below every key given out so far.
    low: i64,
    /// The key above every key given out so far.
    high: i64,
    /// Some unchecked [`Entities::add_parent`] closed a cycle: the order is
    /// no longer kept and cycle checks search the graph instead.
    cyclic: bool,
}

/// Equal names and equal edges (the order kept for cycle checks is an
/// implementation detail).
impl PartialEq for Entities {
    fn eq(&self, other: &Self) -> bool {
        self.names == other.names && self.parents == other.parents
    }
}

impl Entities {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `name`, adding it when new.
    pub fn intern(&mut self, name: &str) -> EntityId {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let id = EntityId(self.names.len() as u32);
        self.names.push(name.to_owned());
        self.parents.push(Vec::new());
        self.children.push(Vec::new());
        // A new entity has no edge: last in the order is as good as any.
        self.order.push(self.high);
        self.high += 1;
        self.by_name.insert(name.to_owned(), id);
        id
    }

    pub fn get(&self, name: &str) -> Option<EntityId> {
        self.by_name.get(name).copied()
    }

    /// The name of `id`; ids come from this table, so this is total for them.
    pub fn name(&self, id: EntityId) -> &str {
        self.names.get(id.index()).map_or("?", String::as_str)
    }

    pub fn parents(&self, id: EntityId) -> &[EntityId] {
        self.parents.get(id.index()).map_or(&[], Vec::as_slice)
    }

    /// Whether the edge `parent → child` is there (O(1)).
    pub fn has_parent(&self, child: EntityId, parent: EntityId) -> bool {
        self.edges.contains(&edge_key(child, parent))
    }

    /// Adds the edge `parent → child` (no-op when already present), even
    /// when it closes a cycle or names a parent id this table does not have
    /// (the selection engine reports both); readers use
    /// [`Entities::add_parent_acyclic`].
    pub fn add_parent(&mut self, child: EntityId, parent: EntityId) {
        if child.index() >= self.names.len() || self.edges.contains(&edge_key(child, parent)) {
            return;
        }
        if parent.index() >= self.names.len() {
            self.edges.insert(edge_key(child, parent));
            self.parents[child.index()].push(parent);
            return;
        }
        if !self.cyclic && !self.reorder_for(child, parent) {
            self.cyclic = true;
        }
        self.push_edge(child, parent);
    }

    /// Adds the edge `parent → child` unless it would close a cycle
    /// (`parent` is `child` or one of its descendants); returns whether
    /// the edge is in the graph afterwards (`true` also when it already
    /// was).
    pub fn add_parent_acyclic(&mut self, child: EntityId, parent: EntityId) -> bool {
        if child.index() >= self.names.len() || parent.index() >= self.names.len() {
            return false;
        }
        if self.edges.contains(&edge_key(child, parent)) {
            return true;
        }
        let fits = if self.cyclic {
            !self.is_ancestor_or_self(child, parent)
        } else {
            self.reorder_for(child, parent)
        };
        if fits {
            self.push_edge(child, parent);
        }
        fits
    }

    fn push_edge(&mut self, child: EntityId, parent: EntityId) {
        self.edges.insert(edge_key(child, parent));
        self.parents[child.index()].push(parent);
        self.children[parent.index()].push(child);
    }

    /// Makes the order put `parent` before `child`, moving only the
    /// entities between them (Pearce–Kelly); `false`, with the order
    /// unchanged, when `child` is `parent` or reaches it through children
    /// (the edge would close a cycle).
    fn reorder_for(&mut self, child: EntityId, parent: EntityId) -> bool {
        let (lo, hi) = (self.order[child.index()], self.order[parent.index()]);
        if lo > hi {
            return true;
        }
        if lo == hi {
            return false;
        }
        // An entity without edges may go anywhere: the parent to the
        // front, or the child to the back.
        if self.parents[parent.index()].is_empty() && self.children[parent.index()].is_empty() {
            self.low -= 1;
            self.order[parent.index()] = self.low;
            return true;
        }
        if self.parents[child.index()].is_empty() && self.children[child.index()].is_empty() {
            self.order[child.index()] = self.high;
            self.high += 1;
            return true;
        }
        // Forward from the child, among entities ordered before the parent.
        let mut forward = Vec::new();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut stack = vec![child];
        seen.insert(child.0);
        while let Some(v) = stack.pop() {
            forward.push(v);
            for &c in &self.children[v.index()] {
                let o = self.order[c.index()];
                if o == hi {
                    return false;
                }
                if o < hi && seen.insert(c.0) {
                    stack.push(c);
                }
            }
        }
        // Backward from the parent, among entities ordered after the child.
        let mut backward = Vec::new();
        let mut stack = vec![parent];
        seen.insert(parent.0);
        while let Some(v) = stack.pop() {
            backward.push(v);
            for &p in &self.parents[v.index()] {
                // (A parent id out of range has no place in the order.)
                let Some(&o) = self.order.get(p.index()) else {
                    continue;
                };
                if o > lo && seen.insert(p.0) {
                    stack.push(p);
                }
            }
        }
        // The parent's ancestors, then the child's descendants, in the
        // positions both sets held, each keeping its own relative order.
        backward.sort_by_key(|e| self.order[e.index()]);
        forward.sort_by_key(|e| self.order[e.index()]);
        let mut slots: Vec<i64> = backward
            .iter()
            .chain(&forward)
            .map(|e| self.order[e.index()])
            .collect();
        slots.sort_unstable();
        for (e, slot) in backward.iter().chain(&forward).zip(slots) {
            self.order[e.index()] = slot;
        }
        true
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = EntityId> + '_ {
        (0..self.names.len() as u32).map(EntityId)
    }

    /// Whether any parent edge was declared.
    pub fn has_edges(&self) -> bool {
        !self.edges.is_empty()
    }

    /// Whether `ancestor` is `of` or reachable from `of` by following
    /// parent edges. Adding the edge `parent → child` makes a cycle exactly
    /// when `is_ancestor_or_self(child, parent)`.
    pub fn is_ancestor_or_self(&self, ancestor: EntityId, of: EntityId) -> bool {
        let mut seen = vec![false; self.len()];
        let mut stack = vec![of];
        while let Some(e) = stack.pop() {
            if e == ancestor {
                return true;
            }
            if let Some(s) = seen.get_mut(e.index())
                && !*s
            {
                *s = true;
                stack.extend_from_slice(self.parents(e));
            }
        }
        false
    }
}

/// The key of the edge `parent → child` in [`Entities`]' edge set.
fn edge_key(child: EntityId, parent: EntityId) -> u64 {
    (u64::from(child.0) << 32) | u64::from(parent.0)
}

/// The clock the log's times are measured on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds since the Unix epoch (UTC).
    #[default]
    EpochSeconds,
    /// Seconds since some start of the run (the thesis figures use this).
    RelativeSeconds,
}

/// Optional hints for viewers, from the log's header.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DisplayHints {
    /// Instantaneous-frame time threshold in seconds, if the writer knows it.
    pub instant_threshold: Option<f64>,
    /// The maximum level to show initially.
    pub default_max_level: Option<i32>,
    /// The part of the world worth showing, as (min, max) corners.
    pub world_bounds: Option<(Vec2, Vec2)>,
}

impl DisplayHints {
    /// Removes the hints no viewer can use, returning one message for each:
    /// a threshold that is not a finite number of seconds ≥ 0 (NaN, −1,
    /// inf) and world bounds with a coordinate that is not finite. Every
    /// reader calls this, so a log in memory holds only values that every
    /// format, the text notation included, writes and reads back.
    pub fn drop_unusable(&mut self) -> Vec<String> {
        let mut dropped = Vec::new();
        if let Some(t) = self.instant_threshold
            && !(t.is_finite() && t >= 0.0)
        {
            self.instant_threshold = None;
            dropped.push(format!(
                "the header's instantaneous-frame threshold {t} is not a finite number of seconds ≥ 0; \
                 it is ignored (1.5 × the median spacing of instantaneous frames is used)"
            ));
        }
        if let Some((lo, hi)) = self.world_bounds
            && ![lo.x, lo.y, hi.x, hi.y].iter().all(|v| v.is_finite())
        {
            self.world_bounds = None;
            dropped.push(format!(
                "the header's world bounds ({}, {}) … ({}, {}) are not finite; they are ignored",
                lo.x, lo.y, hi.x, hi.y
            ));
        }
        dropped
    }
}

/// Facts about the log as a whole.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub name: String,
    pub time_unit: TimeUnit,
    /// Name of the world unit, e.g. "mm" or "m".
    pub world_unit: String,
    pub hints: DisplayHints,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            name: String::new(),
            time_unit: TimeUnit::EpochSeconds,
            world_unit: "mm".to_owned(),
            hints: DisplayHints::default(),
        }
    }
}

/// Something odd found while loading that did not stop the load.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadWarning {
    /// Byte offset in the file, when it comes from a binary file.
    pub offset: Option<u64>,
    /// Index of the frame concerned, when there is one.
    pub frame: Option<usize>,
    pub message: String,
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.offset, self.frame) {
            (Some(o), Some(i)) => write!(f, "at byte {o} (frame {i}): {}", self.message),
            (Some(o), None) => write!(f, "at byte {o}: {}", self.message),
            (None, Some(i)) => write!(f, "frame {i}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

/// What a reader passed over: bytes that do not read as its format
/// (lines it could not parse, records it could not decode, a damaged rest
/// it could not read past). The format table says it once per file, and
/// refuses a file that is mostly this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Bytes passed over (decompressed).
    pub bytes: u64,
    /// Lines or records passed over.
    pub items: u64,
    /// Byte offset of the first.
    pub first: Option<u64>,
    /// Where the reader stopped, at damage it could not read past: the
    /// rest of the input is passed over too.
    pub stopped_at: Option<u64>,
    /// How many bytes the reader had in all, when it counted them (a
    /// reader given the whole file); 0 when whoever read the stream did.
    pub total: u64,
}

impl Skipped {
    /// Counts `bytes` passed over at `offset`.
    pub fn add(&mut self, offset: u64, bytes: u64) {
        self.bytes += bytes;
        self.items += 1;
        self.first = Some(self.first.map_or(offset, |f| f.min(offset)));
    }

    /// Notes that reading stopped at `offset` (the rest unread).
    pub fn stop(&mut self, offset: u64) {
        self.stopped_at = Some(self.stopped_at.map_or(offset, |s| s.min(offset)));
        self.first = Some(self.first.map_or(offset, |f| f.min(offset)));
    }
}

/// A whole visualization log in memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    pub header: Header,
    pub entities: Entities,
    /// Frames in recorded order.
    pub frames: Vec<Frame>,
    /// Primitives of all frames, frame by frame in recorded order.
    pub primitives: Vec<Primitive>,
    /// What the loader noticed but tolerated.
    pub warnings: Vec<LoadWarning>,
    /// What the reader passed over as not its format.
    pub skipped: Skipped,
    /// The logs this one was merged from, as runs of frames: each shows
    /// its own nearest instantaneous frame (a game log and an agent's
    /// debug log at the same moment are both drawn). Empty for a log read
    /// from one file: one stream of all frames.
    pub streams: Vec<Stream>,
}

/// Frames from `first_frame` up to the next stream's first frame came
/// from one log.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stream {
    pub first_frame: usize,
    /// That log's own instantaneous threshold hint.
    pub instant_threshold: Option<f64>,
}

// Export workers share one log behind an `Arc`.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Log>();
};

impl Log {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a frame holding `primitives` and returns its index.
    pub fn push_frame(&mut self, time: FrameTime, primitives: impl IntoIterator<Item = Primitive>) -> usize {
        let start = self.primitives.len();
        self.primitives.extend(primitives);
        self.frames.push(Frame {
            time,
            primitives: start..self.primitives.len(),
        });
        self.frames.len() - 1
    }

    /// Whether any primitive is in the picture's pixels
    /// ([`Shape::Picture`]): drawn even without a calibration.
    pub fn has_picture_shapes(&self) -> bool {
        self.primitives
            .iter()
            .any(|p| matches!(p.shape, Shape::Picture(_)))
    }

    /// The primitives of `frame` (a frame of this log).
    pub fn frame_primitives(&self, frame: &Frame) -> &[Primitive] {
        self.primitives.get(frame.primitives.clone()).unwrap_or(&[])
    }

    /// The default instantaneous-frame threshold: the header's hint when
    /// it has one, else 1.5 × the median spacing between the distinct times
    /// of instantaneous frames, infinite when there are fewer than two.
    /// For a merged log, the largest of its streams' own defaults.
    pub fn default_instant_threshold(&self) -> f64 {
        if let Some(t) = self.header.hints.instant_threshold
            && t.is_finite()
            && t >= 0.0
        {
            return t;
        }
        if self.streams.len() > 1 {
            return self
                .stream_ranges()
                .zip(&self.streams)
                .map(|(r, s)| match s.instant_threshold {
                    Some(t) if t.is_finite() && t >= 0.0 => t,
                    _ => median_threshold(&self.frames[r]),
                })
                .filter(|t| t.is_finite())
                .reduce(f64::max)
                .unwrap_or(f64::INFINITY);
        }
        median_threshold(&self.frames)
    }

    /// The frames of each stream (one run of all frames when not merged).
    pub fn stream_ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let n = self.frames.len();
        let starts: Vec<usize> = if self.streams.is_empty() {
            vec![0]
        } else {
            self.streams.iter().map(|s| s.first_frame.min(n)).collect()
        };
        (0..starts.len()).map(move |i| starts[i]..starts.get(i + 1).copied().unwrap_or(n).max(starts[i]))
    }

    /// Smallest and largest finite time of any frame, if there is one.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for f in &self.frames {
            for t in [f.time.start(), f.time.end()] {
                if t.is_finite() {
                    lo = lo.min(t);
                    hi = hi.max(t);
                }
            }
        }
        (lo <= hi).then_some((lo, hi))
    }
}

/// 1.5 × the median spacing between the distinct finite times of the
/// instantaneous `frames` (`+∞` with fewer than two).
fn median_threshold(frames: &[Frame]) -> f64 {
    let mut times: Vec<f64> = frames
        .iter()
        .filter_map(|f| match f.time {
            FrameTime::Instant(t) if t.is_finite() => Some(t),
            _ => None,
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return f64::INFINITY;
    }
    gaps.sort_by(f64::total_cmp);
    let mid = gaps.len() / 2;
    let median = if gaps.len() % 2 == 1 {
        gaps[mid]
    } else {
        (gaps[mid - 1] + gaps[mid]) / 2.0
    };
    1.5 * median
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgba_packs_and_names() {
        let c = Rgba::from_rgb(0x12_34_56);
        assert_eq!((c.r(), c.g(), c.b(), c.a()), (0x12, 0x34, 0x56, 0xff));
        assert_eq!(Rgba::named("Red"), Some(Rgba(0xff00_00ff)));
        assert_eq!(Rgba::named("red").and_then(Rgba::name), Some("red"));
        assert_eq!(Rgba::from_rgb(0x123456).name(), None);
    }

    #[test]
    fn entities_intern_once_and_keep_edges() {
        let mut e = Entities::new();
        let a = e.intern("robots");
        let b = e.intern("robots/blue/3");
        assert_eq!(e.intern("robots"), a);
        e.add_parent(b, a);
        e.add_parent(b, a);
        assert_eq!(e.parents(b), &[a]);
        assert_eq!(e.name(b), "robots/blue/3");
        assert!(e.has_edges());
    }

    #[test]
    fn frames_own_ranges_of_primitives() {
        let mut log = Log::new();
        let ent = log.entities.intern("x");
        let p = |r| Primitive {
            shape: Shape::Circle {
                center: Vec2::ZERO,
                radius: r,
            },
            style: Style::default(),
            entity: ent,
            level: 0,
        };
        log.push_frame(FrameTime::Instant(1.0), [p(1.0), p(2.0)]);
        log.push_frame(
            FrameTime::Persistent {
                start: f64::NEG_INFINITY,
                end: 5.0,
            },
            [p(3.0)],
        );
        assert_eq!(log.frame_primitives(&log.frames[0]).len(), 2);
        assert_eq!(log.frame_primitives(&log.frames[1])[0], p(3.0));
        assert_eq!(log.time_range(), Some((1.0, 5.0)));
    }

    #[test]
    fn rgba_parses_names_and_hex() {
        assert_eq!(Rgba::parse("red"), Some(Rgba(0xff00_00ff)));
        assert_eq!(Rgba::parse("#123456"), Some(Rgba(0x1234_56ff)));
        assert_eq!(Rgba::parse("#12345678"), Some(Rgba(0x1234_5678)));
        assert_eq!(Rgba::parse("0xABCDEF"), Some(Rgba(0xabcd_efff)));
        for bad in ["#12345", "#+12345", "0x", "0x1234567", "nope", "#"] {
            assert_eq!(Rgba::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ancestors_follow_parent_edges() {
        let mut e = Entities::new();
        let (a, b, c) = (e.intern("a"), e.intern("b"), e.intern("c"));
        e.add_parent(b, a);
        e.add_parent(c, b);
        assert!(e.is_ancestor_or_self(a, c));
        assert!(e.is_ancestor_or_self(c, c));
        assert!(!e.is_ancestor_or_self(c, a));
    }

    proptest::proptest! {
        /// The kept topological order refuses exactly the edges that close
        /// a cycle, whatever order entities and edges come in; unchecked
        /// edges that do close one fall back to the graph search.
        #[test]
        fn acyclic_edges_match_a_graph_search(
            n in 1usize..12,
            edges in proptest::collection::vec((0usize..12, 0usize..12, proptest::bool::weighted(0.1)), 0..60),
        ) {
            let mut e = Entities::new();
            let mut plain = Entities::new();
            for i in 0..n {
                e.intern(&format!("e{i}"));
                plain.intern(&format!("e{i}"));
            }
            for (c, p, unchecked) in edges {
                let (c, p) = (EntityId((c % n) as u32), EntityId((p % n) as u32));
                if unchecked {
                    e.add_parent(c, p);
                    plain.add_parent(c, p);
                    continue;
                }
                let want = plain.has_parent(c, p) || !plain.is_ancestor_or_self(c, p);
                proptest::prop_assert_eq!(e.add_parent_acyclic(c, p), want);
                if want {
                    plain.add_parent(c, p);
                }
                proptest::prop_assert_eq!(&e, &plain);
            }
        }
    }

    /// Issue 15, finding 2: 100,000 entities and a million edges, declared
    /// in the orders that used to take quadratic time (each entity under
    /// many earlier ones; a long chain declared child first), build with
    /// every edge kept and every cycle-closing edge refused. (The time is
    /// in docs/PERFORMANCE.md; a test checks the result only.)
    #[test]
    fn a_hundred_thousand_entities_and_a_million_edges_build() {
        let n = 100_000u32;
        let mut e = Entities::new();
        for i in 0..n {
            e.intern(&format!("e{i}"));
        }
        let mut edges = 0;
        // A chain from the last entity down to the first (every edge
        // against the initial order), then nine earlier parents each.
        for i in (1..n).rev() {
            assert!(e.add_parent_acyclic(EntityId(i - 1), EntityId(i)));
            edges += 1;
        }
        for i in 0..n - 10 {
            for k in 1..=9 {
                assert!(e.add_parent_acyclic(EntityId(i), EntityId(i + k + 1)));
                edges += 1;
            }
        }
        assert!(edges > 990_000);
        // Anything pointing back up closes a cycle.
        assert!(!e.add_parent_acyclic(EntityId(n - 1), EntityId(0)));
        assert!(!e.add_parent_acyclic(EntityId(5_000), EntityId(4_000)));
        assert_eq!(e.parents(EntityId(0)).len(), 10);
        // One root: the last entity (the application's entity tree is
        // built from such a graph in `select::entities`' tests).
        let roots: Vec<u32> = (0..n).filter(|&i| e.parents(EntityId(i)).is_empty()).collect();
        assert_eq!(roots, [n - 1]);
    }

    #[test]
    fn default_threshold_is_one_and_a_half_median_spacings() {
        let mut log = Log::new();
        assert_eq!(log.default_instant_threshold(), f64::INFINITY);
        for t in [0.0, 1.0, 1.0, 2.0, 5.0] {
            log.push_frame(FrameTime::Instant(t), []);
        }
        // Distinct times 0, 1, 2, 5: gaps 1, 1, 3 → median 1.
        assert_eq!(log.default_instant_threshold(), 1.5);
        log.header.hints.instant_threshold = Some(0.25);
        assert_eq!(log.default_instant_threshold(), 0.25);
    }

    #[test]
    fn rectangle_corners_rotate_about_center() {
        let c = Shape::rectangle_corners(
            Vec2::new(10.0, 0.0),
            Vec2::new(4.0, 2.0),
            std::f64::consts::FRAC_PI_2,
        );
        assert!((c[0].x - 11.0).abs() < 1e-9 && (c[0].y + 2.0).abs() < 1e-9);
    }
}
