//! The streaming writer robot programs log with.
//!
//! ```no_run
//! use underlay_log::{Header, Rgba, Writer};
//! # fn main() -> Result<(), underlay_log::LogError> {
//! let mut w = Writer::create("run.ulog".as_ref(), Header::default())?;
//! w.declare_entity("robots/blue/3", &["robots/blue", "attack"]);
//! w.persistent(f64::NEG_INFINITY, f64::INFINITY)
//!     .line((-3025.0, 500.0), (-1600.0, 500.0))
//!     .color(Rgba::named("red"))
//!     .entity("obstacle");
//! let t = 1_700_000_000.25;
//! w.instant(t).circle((2271.0, -1136.0), 70.0).color(Rgba::named("green")).entity("position");
//! w.instant(t).line((2271.0, -1136.0), (1412.0, -568.0)).entity("plan/rrt").level(2);
//! w.finish()?;
//! # Ok(()) }
//! ```
//!
//! A frame stays open until another frame starts (calling `instant` again
//! with the same time keeps adding to the open frame), [`Writer::end_frame`],
//! [`Writer::finish`] or drop. Each frame is written as one record, so a
//! reader of a file whose writer died mid-frame loads every complete frame
//! before the tear. Output is buffered (64 KiB by default) and flushed on
//! drop; call [`Writer::finish`] to see errors.
//!
//! # Shapes above the floor and the format version
//!
//! The writer writes the file's prefix, and with it the format version,
//! before it knows what will be logged, so it is told in advance:
//! [`WriterOptions::heights`] makes a version-2 log, which can hold the
//! shapes above the floor ([`Writer::line3`], [`Writer::sphere`], … or any
//! [`Raised`] through [`Writer::raised`]). Without it the log is version 1,
//! byte for byte what underlay wrote before heights, and readable by every
//! underlay; a shape above the floor logged there is not written, and
//! [`Writer::flush`] or [`Writer::finish`] reports the misuse (naming the
//! option), as for a primitive logged outside a frame. A log that sets the
//! option but holds no shape above the floor is still version 2, which an
//! underlay older than heights refuses: set it only when heights will come.
//!
//! Shapes in the picture's pixels ([`Writer::picture`]: annotations of the
//! picture, drawn over everything) need [`WriterOptions::picture`] the same
//! way, which makes a version-3 log (holding shapes above the floor too).
//!
//! # What the writer refuses
//!
//! The writer does not write what a reader would drop or refuse: such a
//! primitive, frame or declaration is left out, the rest of the log is
//! written, and the first refusal is returned by the next
//! [`Writer::flush`] or by [`Writer::finish`], in the reader's words:
//!
//! - a primitive a reader cannot draw (`a circle was not written: radius
//!   -1 is negative`): NaN or infinite coordinates and angles, negative or
//!   non-finite sizes and thickness, a polygon without vertices, a path in
//!   space of fewer than two points, a circle whose normal is 0;
//! - a frame whose time is unusable (`a frame was not written:
//!   instantaneous time NaN is not finite`), with its primitives;
//! - a frame whose record is longer than a reader takes
//!   ([`MAX_RECORD_LEN`](super::MAX_RECORD_LEN));
//! - an entity with an empty name, in a declaration or a primitive;
//! - a parent edge that would make a cycle in the entity graph;
//! - a primitive before any frame, a shape above the floor or in the
//!   picture's pixels without the option that allows it.
//!
//! The Python package and the C++ header under `python/` and `cpp/` apply
//! the same rules in the same words (docs/FORMAT.md, *What writers refuse*).
//!
//! ```no_run
//! use underlay_log::{Header, Writer, WriterOptions};
//! # fn main() -> Result<(), underlay_log::LogError> {
//! let opts = WriterOptions { heights: true, ..WriterOptions::default() };
//! let mut w = Writer::create_with_options("run.ulog".as_ref(), Header::default(), opts)?;
//! let t = 1_700_000_000.25;
//! w.instant(t).sphere((1200.0, -300.0, 21.5), 21.5).entity("ball");
//! w.instant(t).polyline3([(0.0, 0.0, 0.0), (600.0, 0.0, 350.0), (1200.0, 0.0, 0.0)]).entity("plan/chip");
//! w.finish()?;
//! # Ok(()) }
//! ```

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::native::{self, MAX_ENTITY_ID, put_entity_record, put_frame_record_encoded, put_primitive};
use super::raised::UP;
use super::{
    Entities, EntityId, FrameTime, Header, LogError, MarkerKind, Primitive, Raised, Rgba, Shape, Style,
    ThicknessUnit, Vec2, Vec3,
};

/// The entity of primitives that name none (see [`Writer::default_entity`]).
pub const DEFAULT_ENTITY: &str = "default";

/// Why an entity with an empty name is refused.
const EMPTY_NAME: &str = "an entity's name cannot be empty";

/// How a [`Writer`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// Compress with zstd at this level (1–22; 3 is a good default).
    pub zstd_level: Option<i32>,
    /// Hand every finished frame to the operating system at once (and end
    /// a zstd block), so a crash loses at most the open frame.
    pub flush_each_frame: bool,
    /// Bytes buffered before they are written.
    pub buffer_size: usize,
    /// The log will hold shapes above the floor: write format version 2
    /// (see the [module docs](self)). Without it a shape above the floor
    /// is refused, and the log stays version 1.
    pub heights: bool,
    /// The log will hold shapes in the picture's pixels: write format
    /// version 3, which holds shapes above the floor too. Without it a
    /// shape in the picture's pixels is refused.
    pub picture: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            zstd_level: None,
            flush_each_frame: false,
            buffer_size: 1 << 16,
            heights: false,
            picture: false,
        }
    }
}

enum Sink<W: Write> {
    Plain(W),
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl<W: Write> Sink<W> {
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(b),
            Sink::Zstd(z) => z.write_all(b),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Zstd(z) => z.flush(),
        }
    }

    fn finish(self) -> io::Result<W> {
        match self {
            Sink::Plain(mut w) => {
                w.flush()?;
                Ok(w)
            }
            Sink::Zstd(z) => {
                let mut w = z.finish()?;
                w.flush()?;
                Ok(w)
            }
        }
    }
}

/// Writes a native log as a robot runs; see the [module docs](self).
pub struct Writer<W: Write = File> {
    sink: Option<Sink<W>>,
    /// The file name (or `<stream>`) errors are reported against.
    name: PathBuf,
    opts: WriterOptions,
    /// Encoded records waiting to be written.
    out: Vec<u8>,
    /// Encoded primitives of the open frame.
    frame: Vec<u8>,
    open: Option<FrameTime>,
    entities: Entities,
    default_entity: Option<EntityId>,
    default_entity_name: String,
    /// The first error not yet reported.
    error: Option<LogError>,
    /// Set by a write error: nothing more is written (it could follow a
    /// partial record).
    failed: bool,
    frames: u64,
    primitives: u64,
    /// Each frame sent as one self-contained datagram (`log::net`).
    datagram: Option<Datagram>,
}

/// What a writer sending one datagram per frame keeps: every datagram is
/// a whole native log (prefix, header, the entities its primitives name
/// with their ancestors, the frame), so that a lost or reordered datagram
/// costs only its own frame.
struct Datagram {
    version: u8,
    /// The header record, sent in every datagram.
    header: Vec<u8>,
    /// Entities the open frame's primitives name.
    used: Vec<EntityId>,
}

/// The largest payload of a UDP datagram (over IPv4).
pub const MAX_DATAGRAM: usize = 65_507;

impl Writer<File> {
    /// Creates (truncates) `path` and writes the prefix and header.
    pub fn create(path: &Path, header: Header) -> Result<Self, LogError> {
        Self::create_with_options(path, header, WriterOptions::default())
    }

    /// Like [`Writer::create`], with options.
    pub fn create_with_options(path: &Path, header: Header, opts: WriterOptions) -> Result<Self, LogError> {
        let file = File::create(path).map_err(|e| LogError::io(path, e))?;
        let mut w = Writer::with_options(file, header, opts)?;
        w.name = path.to_owned();
        Ok(w)
    }
}

impl<W: Write> Writer<W> {
    /// A writer on any byte sink; writes the prefix and header.
    pub fn new(w: W, header: Header) -> Result<Self, LogError> {
        Self::with_options(w, header, WriterOptions::default())
    }

    /// Like [`Writer::new`], with options.
    pub fn with_options(w: W, header: Header, opts: WriterOptions) -> Result<Self, LogError> {
        Self::build(w, header, opts, false)
    }

    /// A writer sending each frame as one self-contained datagram through
    /// `w`, whose `flush` sends what was written since the last one (see
    /// `log::net`); compression does not apply.
    pub(crate) fn datagrams(w: W, header: Header, opts: WriterOptions) -> Result<Self, LogError> {
        Self::build(
            w,
            header,
            WriterOptions {
                zstd_level: None,
                ..opts
            },
            true,
        )
    }

    fn build(mut w: W, header: Header, opts: WriterOptions, datagrams: bool) -> Result<Self, LogError> {
        let name = PathBuf::from("<stream>");
        let version = if opts.picture {
            native::PICTURE_VERSION
        } else if opts.heights {
            native::RAISED_VERSION
        } else {
            native::FLOOR_VERSION
        };
        if !datagrams {
            w.write_all(&native::versioned_prefix(version, opts.zstd_level.is_some()))
                .map_err(|e| LogError::io(&name, e))?;
        }
        let sink = match opts.zstd_level {
            None => Sink::Plain(w),
            Some(level) => {
                Sink::Zstd(zstd::stream::write::Encoder::new(w, level).map_err(|e| LogError::io(&name, e))?)
            }
        };
        let mut out = Vec::with_capacity(opts.buffer_size.min(1 << 24) + 4096);
        native::put_header_record(&mut out, &header, version);
        let datagram = datagrams.then(|| Datagram {
            version,
            header: std::mem::take(&mut out),
            used: Vec::new(),
        });
        Ok(Writer {
            sink: Some(sink),
            name,
            opts,
            out,
            frame: Vec::with_capacity(4096),
            open: None,
            entities: Entities::new(),
            default_entity: None,
            default_entity_name: DEFAULT_ENTITY.to_owned(),
            error: None,
            failed: false,
            frames: 0,
            primitives: 0,
            datagram,
        })
    }

    /// Starts an instantaneous frame at `t` (seconds on the log's clock),
    /// ending the open frame, unless the open frame is already at `t`.
    pub fn instant(&mut self, t: f64) -> &mut Self {
        self.start_frame(FrameTime::Instant(t))
    }

    /// Starts a persistent frame shown over `[start, end]` (either may be
    /// infinite), unless the open frame already has that span.
    pub fn persistent(&mut self, start: f64, end: f64) -> &mut Self {
        self.start_frame(FrameTime::Persistent { start, end })
    }

    fn start_frame(&mut self, time: FrameTime) -> &mut Self {
        let same = match (self.open, time) {
            (Some(FrameTime::Instant(a)), FrameTime::Instant(b)) => a.to_bits() == b.to_bits(),
            (
                Some(FrameTime::Persistent { start: a, end: b }),
                FrameTime::Persistent { start: c, end: d },
            ) => a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits(),
            _ => false,
        };
        if !same {
            self.end_frame();
            self.open = Some(time);
        }
        self
    }

    /// Ends the open frame (if any) and queues it as one record.
    pub fn end_frame(&mut self) -> &mut Self {
        if let Some(time) = self.open {
            let problem = super::validate::time_problem(time).or_else(|| {
                let len = native::frame_record_len(time, self.frame.len());
                (len as u64 > super::MAX_RECORD_LEN).then(|| {
                    format!(
                        "its record of {len} bytes is longer than a reader takes ({} bytes)",
                        super::MAX_RECORD_LEN
                    )
                })
            });
            if let Some(problem) = problem {
                self.fail(format!("a frame was not written: {problem}"));
                self.open = None;
                self.frame.clear();
                if let Some(d) = &mut self.datagram {
                    d.used.clear();
                }
                return self;
            }
        }
        if self.datagram.is_some() {
            if let Some(time) = self.open.take() {
                self.send_datagram(time);
            }
            return self;
        }
        if let Some(time) = self.open.take() {
            put_frame_record_encoded(&mut self.out, time, &self.frame);
            self.frame.clear();
            self.frames += 1;
            if self.opts.flush_each_frame {
                let _ = self.write_out(true);
            } else if self.out.len() >= self.opts.buffer_size {
                let _ = self.write_out(false);
            }
        }
        self
    }

    /// Declares `name` with parent entities (declared too when new), for
    /// the entity DAG. Declaring again adds parents. An edge that would
    /// make a cycle is not written and makes [`Writer::finish`] fail; so
    /// does an empty name (nothing of the declaration is written then).
    pub fn declare_entity(&mut self, name: &str, parents: &[&str]) -> &mut Self {
        if name.is_empty() || parents.iter().any(|p| p.is_empty()) {
            self.fail(format!("declare_entity: {EMPTY_NAME}; nothing was declared"));
            return self;
        }
        let parent_ids: Vec<EntityId> = parents.iter().map(|p| self.intern(p)).collect();
        let known = self.entities.get(name).is_some();
        let child = self.intern(name);
        let mut added = Vec::new();
        for p in parent_ids {
            if self.entities.has_parent(child, p) {
                continue;
            }
            if self.entities.add_parent_acyclic(child, p) {
                added.push(p);
            } else {
                self.fail(format!(
                    "declare_entity: parent {:?} of {name:?} would make a cycle",
                    self.entities.name(p)
                ));
            }
        }
        if !added.is_empty() || !known {
            let parents = self.entities.parents(child).to_vec();
            put_entity_record(&mut self.out, child.0, name, &parents);
        }
        self
    }

    /// Sets the entity of primitives that do not call
    /// [`PrimitiveBuilder::entity`] (initially [`DEFAULT_ENTITY`]).
    pub fn default_entity(&mut self, name: &str) -> &mut Self {
        if self.default_entity_name != name {
            name.clone_into(&mut self.default_entity_name);
            self.default_entity = None;
        }
        self
    }

    /// The id of `name`, declaring it with an entity record when new.
    fn intern(&mut self, name: &str) -> EntityId {
        if let Some(id) = self.entities.get(name) {
            return id;
        }
        let id = self.entities.intern(name);
        if id.0 >= MAX_ENTITY_ID {
            self.fail(format!("more than {MAX_ENTITY_ID} entities"));
        }
        put_entity_record(&mut self.out, id.0, name, &[]);
        id
    }

    /// Adds a primitive of any shape to the open frame.
    pub fn shape(&mut self, shape: Shape) -> PrimitiveBuilder<'_, W> {
        PrimitiveBuilder {
            w: self,
            p: Primitive {
                shape,
                style: Style::default(),
                entity: EntityId(0),
                level: 0,
            },
            entity: None,
            unnamed: false,
        }
    }

    /// A circle of `radius` around `center`.
    pub fn circle(&mut self, center: impl Into<Vec2>, radius: f64) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Circle {
            center: center.into(),
            radius,
        })
    }

    /// A line segment.
    pub fn line(&mut self, start: impl Into<Vec2>, end: impl Into<Vec2>) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Line {
            start: start.into(),
            end: end.into(),
        })
    }

    /// A rectangle `size.x` long along `orientation` (radians) and `size.y` wide.
    pub fn rectangle(
        &mut self,
        center: impl Into<Vec2>,
        size: impl Into<Vec2>,
        orientation: f64,
    ) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Rectangle {
            center: center.into(),
            size: size.into(),
            orientation,
        })
    }

    /// A closed polygon.
    pub fn polygon<P: Into<Vec2>>(
        &mut self,
        vertices: impl IntoIterator<Item = P>,
    ) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Polygon {
            vertices: vertices.into_iter().map(Into::into).collect(),
            closed: true,
        })
    }

    /// An open polyline.
    pub fn polyline<P: Into<Vec2>>(
        &mut self,
        vertices: impl IntoIterator<Item = P>,
    ) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Polygon {
            vertices: vertices.into_iter().map(Into::into).collect(),
            closed: false,
        })
    }

    /// Text anchored at the left end of its baseline, `size` pixels high
    /// (world units after [`PrimitiveBuilder::world_units`]).
    pub fn text(&mut self, anchor: impl Into<Vec2>, text: &str, size: f64) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Text {
            anchor: anchor.into(),
            text: text.into(),
            size,
        })
    }

    /// A point marker; `size` 0 uses the viewer's default.
    pub fn point(
        &mut self,
        position: impl Into<Vec2>,
        kind: MarkerKind,
        size: f64,
    ) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Point {
            position: position.into(),
            kind,
            size,
        })
    }

    /// The part of the ring between radii `inner` and `outer` around
    /// `center` from angle `start` through `start + sweep` (radians,
    /// counter-clockwise when `sweep` is positive).
    pub fn sector(
        &mut self,
        center: impl Into<Vec2>,
        inner: f64,
        outer: f64,
        start: f64,
        sweep: f64,
    ) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Sector {
            center: center.into(),
            inner,
            outer,
            start,
            sweep,
        })
    }

    /// A circular arc: a [`Self::sector`] with `inner == outer == radius`.
    pub fn arc(
        &mut self,
        center: impl Into<Vec2>,
        radius: f64,
        start: f64,
        sweep: f64,
    ) -> PrimitiveBuilder<'_, W> {
        self.sector(center, radius, radius, start, sweep)
    }

    /// A floor shape in the picture's pixels (needs
    /// [`WriterOptions::picture`]): x to the right and y down from the
    /// centre of the top-left pixel, sizes in pixels, drawn over everything
    /// whatever the calibration ([`Shape::Picture`]).
    pub fn picture(&mut self, shape: Shape) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::picture(shape))
    }

    /// A shape above the floor (needs [`WriterOptions::heights`]); the
    /// methods below make each kind.
    pub fn raised(&mut self, shape: Raised) -> PrimitiveBuilder<'_, W> {
        self.shape(Shape::Raised(Box::new(shape)))
    }

    /// A line segment in space (points `(x, y, z)`, z up from the floor).
    pub fn line3(&mut self, start: impl Into<Vec3>, end: impl Into<Vec3>) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Path {
            points: Box::new([start.into(), end.into()]),
            closed: false,
        })
    }

    /// An open polyline through points in space.
    pub fn polyline3<P: Into<Vec3>>(
        &mut self,
        points: impl IntoIterator<Item = P>,
    ) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Path {
            points: points.into_iter().map(Into::into).collect(),
            closed: false,
        })
    }

    /// A closed polygon through points in space (it can be filled).
    pub fn polygon3<P: Into<Vec3>>(
        &mut self,
        points: impl IntoIterator<Item = P>,
    ) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Path {
            points: points.into_iter().map(Into::into).collect(),
            closed: true,
        })
    }

    /// A horizontal circle of `radius` around `center`, at its height.
    pub fn circle3(&mut self, center: impl Into<Vec3>, radius: f64) -> PrimitiveBuilder<'_, W> {
        self.circle3_facing(center, radius, UP)
    }

    /// A circle of `radius` around `center` in the plane through it whose
    /// normal is `normal` (any length but 0).
    pub fn circle3_facing(
        &mut self,
        center: impl Into<Vec3>,
        radius: f64,
        normal: impl Into<Vec3>,
    ) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Circle {
            center: center.into(),
            radius,
            normal: normal.into(),
        })
    }

    /// Text anchored at a point in space (left end of its baseline), sized
    /// as [`Self::text`].
    pub fn text3(&mut self, anchor: impl Into<Vec3>, text: &str, size: f64) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Text {
            anchor: anchor.into(),
            text: text.into(),
            size,
        })
    }

    /// A point marker in space, sized as [`Self::point`].
    pub fn point3(
        &mut self,
        position: impl Into<Vec3>,
        kind: MarkerKind,
        size: f64,
    ) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Point {
            position: position.into(),
            kind,
            size,
        })
    }

    /// A ball of `radius` around `center` (a ball on the floor has its
    /// centre at height `radius`).
    pub fn sphere(&mut self, center: impl Into<Vec3>, radius: f64) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Sphere {
            center: center.into(),
            radius,
        })
    }

    /// A vertical cylinder of `radius` and `height` whose bottom face is
    /// centred on `base`.
    pub fn cylinder(&mut self, base: impl Into<Vec3>, radius: f64, height: f64) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Cylinder {
            base: base.into(),
            radius,
            height,
        })
    }

    /// A box whose bottom face is centred on `base`: `size` is its length
    /// along `orientation` (radians), its width across it and its height.
    pub fn box3(
        &mut self,
        base: impl Into<Vec3>,
        size: impl Into<Vec3>,
        orientation: f64,
    ) -> PrimitiveBuilder<'_, W> {
        self.raised(Raised::Box {
            base: base.into(),
            size: size.into(),
            orientation,
        })
    }

    /// Frames and primitives written so far (including the open frame's primitives).
    pub fn counts(&self) -> (u64, u64) {
        (self.frames, self.primitives)
    }

    fn fail(&mut self, message: String) {
        if self.error.is_none() {
            self.error = Some(LogError::Usage {
                path: self.name.clone(),
                message,
            });
        }
    }

    /// Sends the open frame (ended at `time`) as one datagram: prefix,
    /// header, the entities its primitives name and their ancestors
    /// (parents before children), the frame.
    fn send_datagram(&mut self, time: FrameTime) {
        let Some(d) = self.datagram.as_mut() else {
            return;
        };
        // Entity records queued by declarations go out with the frames
        // that use them.
        self.out.clear();
        let mut datagram = native::versioned_prefix(d.version, false).to_vec();
        datagram.extend_from_slice(&d.header);
        let mut sent = vec![false; self.entities.len()];
        let mut stack: Vec<(EntityId, bool)> = d.used.drain(..).rev().map(|e| (e, false)).collect();
        while let Some((e, parents_done)) = stack.pop() {
            if sent.get(e.index()).copied().unwrap_or(true) {
                continue;
            }
            let parents = self.entities.parents(e);
            if !parents_done {
                stack.push((e, true));
                stack.extend(parents.iter().rev().map(|&p| (p, false)));
                continue;
            }
            sent[e.index()] = true;
            put_entity_record(&mut datagram, e.0, self.entities.name(e), parents);
        }
        put_frame_record_encoded(&mut datagram, time, &self.frame);
        self.frame.clear();
        self.frames += 1;
        if datagram.len() > MAX_DATAGRAM {
            self.fail(format!(
                "a frame of {} bytes does not fit one UDP datagram ({MAX_DATAGRAM} bytes): it was not sent; \
                 send large frames over tcp://",
                datagram.len()
            ));
            return;
        }
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        // A datagram that cannot be sent (nobody listening yet) costs its
        // own frame; the next ones are still sent, and flush reports it.
        if let Err(e) = sink.write_all(&datagram).and_then(|()| sink.flush()) {
            self.error.get_or_insert(LogError::io(&self.name, e));
        }
    }

    /// Writes the queued records; `sync` also flushes the sink.
    fn write_out(&mut self, sync: bool) -> Result<(), ()> {
        if self.failed || self.datagram.is_some() {
            self.out.clear();
            return Err(());
        }
        let Some(sink) = self.sink.as_mut() else {
            return Err(());
        };
        let r = sink
            .write_all(&self.out)
            .and_then(|()| if sync { sink.flush() } else { Ok(()) });
        self.out.clear();
        if let Err(e) = r {
            self.failed = true;
            self.error.get_or_insert(LogError::io(&self.name, e));
            return Err(());
        }
        Ok(())
    }

    /// Writes every finished frame through to the sink (the open frame
    /// stays open) and reports the first error not yet reported.
    pub fn flush(&mut self) -> Result<(), LogError> {
        let _ = self.write_out(true);
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Ends the open frame, writes everything, finishes compression and
    /// returns the sink; reports the first error met while writing.
    pub fn finish(mut self) -> Result<W, LogError> {
        self.end_frame();
        let _ = self.write_out(false);
        let sink = self.sink.take();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.failed {
            return Err(LogError::Usage {
                path: self.name.clone(),
                message: "writing failed earlier (reported by flush); the log is incomplete".into(),
            });
        }
        match sink {
            Some(s) => s.finish().map_err(|e| LogError::io(&self.name, e)),
            None => Err(LogError::Usage {
                path: self.name.clone(),
                message: "the writer was already finished".into(),
            }),
        }
    }

    fn commit(&mut self, mut p: Primitive, entity: Option<EntityId>, unnamed: bool) {
        let unnamed = unnamed || (entity.is_none() && self.default_entity_name.is_empty());
        p.entity = match entity {
            Some(e) => e,
            None if unnamed => EntityId(0),
            None => match self.default_entity {
                Some(e) => e,
                None => {
                    let name = std::mem::take(&mut self.default_entity_name);
                    let e = self.intern(&name);
                    self.default_entity_name = name;
                    self.default_entity = Some(e);
                    e
                }
            },
        };
        // "a circle", "an arc": the shape as a refusal names it.
        let kind = |p: &Primitive| {
            let name = p.shape.kind_name();
            format!("{} {name}", if name.starts_with('a') { "an" } else { "a" })
        };
        if self.open.is_none() {
            self.fail(format!(
                "{} was added before any frame was started (call instant or persistent first)",
                kind(&p)
            ));
            return;
        }
        if unnamed {
            self.fail(format!("{} was not written: {EMPTY_NAME}", kind(&p)));
            return;
        }
        if let Some(why) = p.shape.picture_problem() {
            self.fail(format!("{} was not written: {why}", kind(&p)));
            return;
        }
        if matches!(p.shape, Shape::Picture(_)) && !self.opts.picture {
            self.fail(format!(
                "{} in the picture's pixels was not written: a log of format version {} cannot hold it; \
                 create the writer with WriterOptions {{ picture: true, .. }}",
                kind(&p),
                if self.opts.heights { 2 } else { 1 }
            ));
            return;
        }
        if matches!(p.shape, Shape::Raised(_)) && !(self.opts.heights || self.opts.picture) {
            self.fail(format!(
                "{} above the floor was not written: a log without heights (format version 1) cannot \
                 hold it; create the writer with WriterOptions {{ heights: true, .. }}",
                kind(&p)
            ));
            return;
        }
        if !super::validate::drawable(&p)
            && let Some(why) = super::validate::shape_problem(&p)
        {
            self.fail(format!("{} was not written: {why}", kind(&p)));
            return;
        }
        put_primitive(&mut self.frame, 3, &p);
        self.primitives += 1;
        if let Some(d) = &mut self.datagram
            && !d.used.contains(&p.entity)
        {
            d.used.push(p.entity);
        }
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if self.sink.is_some() {
            self.end_frame();
            let _ = self.write_out(false);
            if let Some(s) = self.sink.take() {
                let _ = s.finish();
            }
        }
    }
}

/// One primitive being added; it is written into the open frame when this
/// builder is dropped (at the end of the statement).
pub struct PrimitiveBuilder<'w, W: Write> {
    w: &'w mut Writer<W>,
    p: Primitive,
    entity: Option<EntityId>,
    /// Its entity's name is empty: it is refused.
    unnamed: bool,
}

impl<W: Write> PrimitiveBuilder<'_, W> {
    /// Outline colour (text and marker colour); `None` keeps the default, white.
    pub fn color(mut self, c: impl Into<Option<Rgba>>) -> Self {
        if let Some(c) = c.into() {
            self.p.style.color = c;
        }
        self
    }

    /// Fill colour of a closed shape; `None` draws the outline only.
    pub fn fill(mut self, c: impl Into<Option<Rgba>>) -> Self {
        self.p.style.fill = c.into();
        self
    }

    /// Outline thickness in pixels of the video.
    pub fn thickness(mut self, pixels: f32) -> Self {
        self.p.style.thickness = pixels;
        self.p.style.unit = ThicknessUnit::Pixels;
        self
    }

    /// Outline thickness in world units (like paint on the floor).
    pub fn world_thickness(mut self, world: f32) -> Self {
        self.p.style.thickness = world;
        self.p.style.unit = ThicknessUnit::World;
        self
    }

    /// Measures thickness, text and marker sizes in world units.
    pub fn world_units(mut self) -> Self {
        self.p.style.unit = ThicknessUnit::World;
        self
    }

    /// The whole style at once.
    pub fn style(mut self, style: Style) -> Self {
        self.p.style = style;
        self
    }

    /// The entity, declared on first use (with no parents). An empty name
    /// is refused (the primitive is not written).
    pub fn entity(mut self, name: &str) -> Self {
        self.unnamed = name.is_empty();
        if !self.unnamed {
            self.entity = Some(self.w.intern(name));
        }
        self
    }

    /// Level of detail: smaller is more important.
    pub fn level(mut self, level: i32) -> Self {
        self.p.level = level;
        self
    }
}

impl<W: Write> Drop for PrimitiveBuilder<'_, W> {
    fn drop(&mut self) {
        let p = Primitive {
            shape: std::mem::replace(
                &mut self.p.shape,
                Shape::Line {
                    start: Vec2::ZERO,
                    end: Vec2::ZERO,
                },
            ),
            ..self.p
        };
        self.w.commit(p, self.entity, self.unnamed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate as log;
    use crate::Log;

    fn write_sample(opts: WriterOptions) -> Vec<u8> {
        let header = Header {
            name: "w".into(),
            ..Header::default()
        };
        let mut w = Writer::with_options(Vec::new(), header, opts).unwrap();
        w.declare_entity("robots/blue/3", &["robots/blue", "attack"]);
        w.persistent(f64::NEG_INFINITY, f64::INFINITY)
            .line((0.0, 0.0), (1.0, 0.0))
            .color(Rgba::named("red"))
            .entity("obstacle");
        w.instant(2.0)
            .circle((1.0, 2.0), 3.0)
            .color(Rgba::named("green"))
            .entity("robots/blue/3")
            .level(2);
        w.instant(2.0).text((0.0, 0.0), "hi", 12.0).fill(Rgba::BLACK);
        w.instant(3.0)
            .polygon([(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)])
            .world_thickness(20.0);
        w.finish().unwrap()
    }

    fn check(log: &Log) {
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(log.header.name, "w");
        assert_eq!(log.frames.len(), 3);
        assert_eq!(log.frame_primitives(&log.frames[1]).len(), 2);
        let e = log.entities.get("robots/blue/3").unwrap();
        let parents: Vec<&str> = log
            .entities
            .parents(e)
            .iter()
            .map(|&p| log.entities.name(p))
            .collect();
        assert_eq!(parents, ["robots/blue", "attack"]);
        let text = &log.frame_primitives(&log.frames[1])[1];
        assert_eq!(log.entities.name(text.entity), DEFAULT_ENTITY);
        assert_eq!(text.style.fill, Some(Rgba::BLACK));
        assert_eq!(log.primitives[3].style.unit, ThicknessUnit::World);
    }

    #[test]
    fn builder_output_reads_back() {
        let bytes = write_sample(WriterOptions::default());
        check(&log::native::read(&bytes[..]).unwrap());
        let z = write_sample(WriterOptions {
            zstd_level: Some(3),
            flush_each_frame: true,
            ..WriterOptions::default()
        });
        check(&log::native::read(&z[..]).unwrap());
    }

    #[test]
    fn every_prefix_of_the_output_loads_its_complete_frames() {
        let bytes = write_sample(WriterOptions::default());
        let full = log::native::read(&bytes[..]).unwrap();
        for cut in native::PREFIX_LEN..bytes.len() {
            let log = match log::native::read(&bytes[..cut]) {
                Ok(l) => l,
                Err(e) => panic!("cut at {cut}: {e}"),
            };
            assert!(log.frames.len() <= full.frames.len());
            assert_eq!(log.frames[..], full.frames[..log.frames.len()], "cut at {cut}");
        }
    }

    #[test]
    fn a_dropped_writer_flushes_and_a_torn_compressed_file_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crash.ulog");
        {
            let mut w = Writer::create_with_options(
                &path,
                Header::default(),
                WriterOptions {
                    zstd_level: Some(1),
                    flush_each_frame: true,
                    ..WriterOptions::default()
                },
            )
            .unwrap();
            for i in 0..50 {
                w.instant(f64::from(i)).circle((0.0, 0.0), 1.0);
            }
            w.flush().unwrap();
            // Simulate a crash: the open frame and zstd epilogue never reach the file.
            std::mem::forget(w);
        }
        let log = crate::native::read(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(log.frames.len(), 49);
        assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
        assert!(log.warnings[0].message.contains("truncated"));
        let path2 = dir.path().join("dropped.ulog");
        {
            let mut w = Writer::create(&path2, Header::default()).unwrap();
            w.instant(1.0).circle((0.0, 0.0), 1.0);
        }
        let log2 = crate::native::read(std::fs::File::open(&path2).unwrap()).unwrap();
        assert_eq!(log2.frames.len(), 1);
    }

    #[test]
    fn misuse_is_reported_by_finish() {
        let mut w = Writer::new(Vec::new(), Header::default()).unwrap();
        w.circle((0.0, 0.0), 1.0);
        let e = w.finish().unwrap_err();
        assert!(e.to_string().contains("before any frame"), "{e}");
        let mut w = Writer::new(Vec::new(), Header::default()).unwrap();
        w.declare_entity("a", &["b"]);
        w.declare_entity("b", &["a"]);
        assert!(w.finish().unwrap_err().to_string().contains("cycle"));
    }

    /// Issue 33: with `heights` the log is version 2 and holds every
    /// shape above the floor the builder makes.
    #[test]
    fn heights_make_a_version_2_log_of_shapes_above_the_floor() {
        let opts = WriterOptions {
            heights: true,
            ..WriterOptions::default()
        };
        let mut w = Writer::with_options(Vec::new(), Header::default(), opts).unwrap();
        w.instant(1.0).line3((0.0, 0.0, 0.0), [1.0, 0.0, 2.0]).entity("a");
        w.instant(1.0)
            .polyline3([(0.0, 0.0, 0.0), (1.0, 0.0, 1.0), (2.0, 0.0, 0.0)]);
        w.instant(1.0)
            .polygon3([(0.0, 0.0, 1.0), (1.0, 0.0, 1.0), (0.0, 1.0, 1.0)])
            .fill(Rgba::BLACK);
        w.instant(1.0).circle3((0.0, 0.0, 5.0), 2.0);
        w.instant(1.0)
            .circle3_facing((0.0, 0.0, 5.0), 2.0, (1.0, 0.0, 0.0));
        w.instant(1.0).text3((0.0, 0.0, 9.0), "up", 12.0);
        w.instant(1.0).point3((0.0, 0.0, 9.0), MarkerKind::Dot, 3.0);
        w.instant(1.0)
            .sphere((1.0, 2.0, 21.5), 21.5)
            .color(Rgba::named("orange"));
        w.instant(1.0).cylinder((0.0, 0.0, 0.0), 90.0, 150.0);
        w.instant(1.0).box3((0.0, 0.0, 0.0), (3.0, 2.0, 1.0), 0.25);
        w.instant(1.0).circle((0.0, 0.0), 1.0);
        let bytes = w.finish().unwrap();
        assert_eq!(&bytes[..10], b"UNDERLAY\x02\x00");
        let log = log::native::read(&bytes[..]).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let kinds: Vec<&str> = log.primitives.iter().map(|p| p.shape.kind_name()).collect();
        assert_eq!(
            kinds,
            [
                "line", "polyline", "polygon", "circle", "circle", "text", "point", "sphere", "cylinder",
                "box", "circle"
            ]
        );
        assert_eq!(
            log.primitives[9].shape,
            Shape::Raised(Box::new(Raised::Box {
                base: [0.0; 3],
                size: [3.0, 2.0, 1.0],
                orientation: 0.25
            }))
        );
        assert!(matches!(
            &log.primitives[4].shape,
            Shape::Raised(r) if matches!(**r, Raised::Circle { normal: [1.0, 0.0, 0.0], .. })
        ));
        assert!(matches!(
            &log.primitives[3].shape,
            Shape::Raised(r) if matches!(**r, Raised::Circle { normal: UP, .. })
        ));
    }

    /// Without `heights` the log stays version 1 (its header too): a shape
    /// above the floor is not written and `finish` says which option it
    /// needs; the rest of the log is written.
    #[test]
    fn a_log_without_heights_refuses_shapes_above_the_floor() {
        let bytes = write_sample(WriterOptions::default());
        assert_eq!(&bytes[..10], b"UNDERLAY\x01\x00");
        let mut sink = Vec::new();
        {
            let mut w = Writer::new(&mut sink, Header::default()).unwrap();
            w.instant(1.0).circle((0.0, 0.0), 1.0);
            w.instant(1.0).sphere((0.0, 0.0, 1.0), 1.0);
            w.instant(2.0).line((0.0, 0.0), (1.0, 1.0));
            let e = w.finish().unwrap_err().to_string();
            assert!(
                e.contains("a sphere above the floor was not written") && e.contains("heights: true"),
                "{e}"
            );
        }
        assert_eq!(sink[8], 1);
        let log = log::native::read(&sink[..]).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(log.frames.len(), 2);
        assert_eq!(log.primitives.len(), 2);
        assert!(
            log.primitives
                .iter()
                .all(|p| !matches!(p.shape, Shape::Raised(_)))
        );
    }

    /// With `picture` the log is version 3 and holds shapes in the
    /// picture's pixels beside shapes above the floor; without it they are
    /// refused naming the option, and a picture shape with heights always.
    #[test]
    fn picture_makes_a_version_3_log_of_shapes_in_the_picture() {
        let opts = WriterOptions {
            picture: true,
            ..WriterOptions::default()
        };
        let mut w = Writer::with_options(Vec::new(), Header::default(), opts).unwrap();
        let box_ = Shape::Rectangle {
            center: Vec2::new(320.0, 240.0),
            size: Vec2::new(40.0, 20.0),
            orientation: 0.0,
        };
        w.instant(1.0).picture(box_.clone()).entity("boxes");
        w.instant(1.0).sphere((0.0, 0.0, 1.0), 1.0);
        w.instant(1.0).picture(Shape::Raised(Box::new(Raised::Sphere {
            center: [0.0; 3],
            radius: 1.0,
        })));
        let e = w.finish().unwrap_err().to_string();
        assert!(e.contains("cannot have heights"), "{e}");

        let mut w = Writer::with_options(Vec::new(), Header::default(), opts).unwrap();
        w.instant(1.0).picture(box_.clone()).entity("boxes");
        w.instant(1.0).sphere((0.0, 0.0, 1.0), 1.0);
        let bytes = w.finish().unwrap();
        assert_eq!(&bytes[..10], b"UNDERLAY\x03\x00");
        let log = log::native::read(&bytes[..]).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(log.primitives[0].shape, Shape::picture(box_.clone()));
        assert!(matches!(log.primitives[1].shape, Shape::Raised(_)));

        let mut w = Writer::new(Vec::new(), Header::default()).unwrap();
        w.instant(1.0).picture(box_);
        let e = w.finish().unwrap_err().to_string();
        assert!(
            e.contains("a rectangle in the picture's pixels was not written") && e.contains("picture: true"),
            "{e}"
        );
    }

    /// Issue 49: what a reader would drop is not written, and the first
    /// refusal says why in the reader's words; the rest is written.
    #[test]
    fn what_a_reader_would_drop_is_refused_in_its_words() {
        let refusal = |f: &dyn Fn(&mut Writer<Vec<u8>>)| {
            let mut w = Writer::new(Vec::new(), Header::default()).unwrap();
            f(&mut w);
            w.instant(9.0).circle((0.0, 0.0), 1.0).entity("kept");
            w.finish().unwrap_err().to_string()
        };
        type Misuse<'a> = &'a dyn Fn(&mut Writer<Vec<u8>>);
        let cases: [(Misuse, &str); 8] = [
            (
                &|w| drop(w.instant(1.0).circle((f64::NAN, 0.0), 1.0)),
                "a circle was not written: center (NaN, 0) is not finite",
            ),
            (
                &|w| drop(w.instant(1.0).arc((0.0, 0.0), 1e300, 0.0, f64::INFINITY)),
                "an arc was not written: sweep inf is not finite",
            ),
            (
                &|w| drop(w.instant(1.0).line((0.0, 0.0), (1.0, 1.0)).thickness(-2.0)),
                "a line was not written: thickness -2 is negative",
            ),
            (
                &|w| drop(w.instant(f64::NAN).circle((0.0, 0.0), 1.0)),
                "a frame was not written: instantaneous time NaN is not finite",
            ),
            (
                &|w| drop(w.persistent(5.0, 1.0).circle((0.0, 0.0), 1.0)),
                "a frame was not written: persistent frame ends (1) before it starts (5)",
            ),
            (
                &|w| drop(w.instant(1.0).circle((0.0, 0.0), 1.0).entity("")),
                "a circle was not written: an entity's name cannot be empty",
            ),
            (
                &|w| drop(w.default_entity("").instant(1.0).polygon([(0.0, 0.0)])),
                "a polygon was not written: an entity's name cannot be empty",
            ),
            (
                &|w| {
                    w.declare_entity("a", &["b", ""]);
                },
                "declare_entity: an entity's name cannot be empty; nothing was declared",
            ),
        ];
        for (f, want) in cases {
            assert_eq!(refusal(f), format!("<stream>: {want}"));
        }
        // The rest is written.
        let mut w = Writer::new(Vec::new(), Header::default()).unwrap();
        w.instant(1.0).circle((0.0, 0.0), -1.0);
        w.instant(f64::INFINITY).circle((0.0, 0.0), 1.0);
        w.instant(2.0).circle((0.0, 0.0), 1.0).entity("kept");
        assert!(
            w.flush()
                .unwrap_err()
                .to_string()
                .contains("radius -1 is negative")
        );
        let bytes = w.finish().unwrap();
        let log = log::native::read(&bytes[..]).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(
            (log.frames.len(), log.primitives.len()),
            (2, 1),
            "an empty frame at 1, the circle at 2"
        );
    }

    #[test]
    fn garbage_after_prefix_is_corrupt_not_a_panic() {
        let mut bytes = native::prefix(false).to_vec();
        bytes.extend_from_slice(&[3, 0x1a, 1, 0xff]);
        // The record is passed over, counted (the format table refuses a
        // file that is mostly that).
        let log = log::native::read(&bytes[..]).unwrap();
        assert_eq!(log.skipped.items, 1);
        assert!(log.frames.is_empty());
    }
}
