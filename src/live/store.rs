//! The logs of a live run as they arrive: one growing log per source
//! (a UDP port, a TCP connection, a file read once), kept within a window
//! of time and a budget of primitives, and merged into one indexed log
//! for drawing whenever something new came ([`LiveLogs::snapshot`]).
//!
//! A source's log is the frames it has ended ([`LiveLogs::push`]: they
//! only grow) and, for a source whose drawings show "until the next one"
//! (RoboViz's sets, until their next swap), what it shows now
//! ([`LiveLogs::set_current`]: open-ended frames, replaced whole each time
//! and merged into every snapshot).
//!
//! Memory is bounded whatever the senders do: each source keeps its
//! instantaneous frames from the last [`StoreOptions::keep`] seconds
//! before its newest, its persistent frames until they have ended that
//! long ago, and at most [`StoreOptions::max_primitives`] primitives and
//! [`StoreOptions::max_entities`] entity names (what it shows now
//! included); beyond that the oldest frames go first, and what was
//! dropped is counted and said.
//!
//! A source may also carry cameras' calibrations (the SSL league's
//! geometry packets: [`LiveLogs::set_camera`]), for a run that draws
//! through one of them (`--camera N`); they are not part of the logs.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::log::{EntityId, FrameTime, Log, Primitive};
use crate::select::Index;

/// How much of each source is kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoreOptions {
    /// Seconds of a source's frames kept before its newest frame.
    pub keep: f64,
    /// Primitives a source may hold at once.
    pub max_primitives: usize,
    /// Distinct entity names a source may declare; primitives of further
    /// names are dropped (a sender making a name per frame).
    pub max_entities: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            keep: 10.0,
            max_primitives: 2_000_000,
            max_entities: 100_000,
        }
    }
}

/// What one source has sent, for the status line and the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceCounts {
    /// The source as given (`udp://0.0.0.0:9870`, a file).
    pub name: String,
    /// Packets (datagrams, frames of a stream) taken in.
    pub packets: u64,
    /// Bytes taken in.
    pub bytes: u64,
    /// Packets that were not a log (garbage, damaged), ignored.
    pub bad: u64,
    /// Frames dropped to stay within the store's bounds.
    pub dropped_frames: u64,
    /// Primitives dropped for naming entities beyond the bound.
    pub dropped_primitives: u64,
    /// Frames held now.
    pub frames: usize,
    /// The last thing that went wrong, if anything did.
    pub last_error: Option<String>,
}

struct Source {
    counts: SourceCounts,
    log: Log,
    /// What the source shows now ([`LiveLogs::set_current`]): frames whose
    /// primitives are in `current_primitives`, of `log`'s entities.
    current: Vec<crate::log::Frame>,
    current_primitives: Vec<Primitive>,
    /// How many of `current`'s frames are drawn beneath the ended frames
    /// (an SSL field under its ticks); the rest are drawn above them.
    current_under: usize,
    /// Never pruned (a file read once: the field's lines, say).
    fixed: bool,
    /// Newest finite frame time seen.
    newest: f64,
}

/// The live logs; shared between the receiving threads and the drawing loop.
#[derive(Default)]
pub struct LiveLogs {
    inner: Mutex<Inner>,
    opts: StoreOptions,
}

#[derive(Default)]
struct Inner {
    sources: Vec<Source>,
    /// Bumped by every change; a snapshot is made again only after one.
    generation: u64,
    /// Cameras' calibrations by camera id, each with the count of changes
    /// when it last changed.
    cameras: std::collections::BTreeMap<u32, (u64, CameraCalibration)>,
    camera_changes: u64,
}

/// A camera's calibration as a source sent it: usable, or why not.
pub type CameraCalibration = Result<crate::calib::Calibration, String>;

/// Cameras whose calibrations a store keeps at most (ssl-vision runs up
/// to 8); others are ignored.
pub const MAX_CAMERAS: usize = 64;

/// One source's handle in a [`LiveLogs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceId(usize);

impl LiveLogs {
    /// An empty store keeping what `opts` says.
    pub fn new(opts: StoreOptions) -> Self {
        LiveLogs {
            inner: Mutex::new(Inner::default()),
            opts,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A receiver that panicked left counts, not broken invariants.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a source named `name` (as the user gave it).
    pub fn add_source(&self, name: &str) -> SourceId {
        let mut inner = self.lock();
        inner.sources.push(Source {
            counts: SourceCounts {
                name: name.to_owned(),
                ..SourceCounts::default()
            },
            log: Log::new(),
            current: Vec::new(),
            current_primitives: Vec::new(),
            current_under: 0,
            fixed: false,
            newest: f64::NEG_INFINITY,
        });
        SourceId(inner.sources.len() - 1)
    }

    /// Adds a log read whole (a file), kept as it is.
    pub fn add_fixed(&self, name: &str, log: Log) -> SourceId {
        let id = self.add_source(name);
        let mut inner = self.lock();
        let s = &mut inner.sources[id.0];
        s.counts.frames = log.frames.len();
        s.counts.packets = 1;
        s.log = log;
        s.fixed = true;
        inner.generation += 1;
        id
    }

    /// Appends the frames of `batch` (a datagram's log, the frames a
    /// stream completed), `bytes` long, to source `id`: entities by name,
    /// their parents with them.
    pub fn push(&self, id: SourceId, batch: Log, bytes: u64) {
        self.append(id, batch, Some(bytes));
    }

    /// Counts a packet of source `id`, `bytes` long, that was taken in
    /// (its drawings, if any, went to another source: [`LiveLogs::extend`]).
    pub fn taken(&self, id: SourceId, bytes: u64) {
        let mut inner = self.lock();
        if let Some(s) = inner.sources.get_mut(id.0) {
            s.counts.packets += 1;
            s.counts.bytes += bytes;
        }
    }

    /// Appends the frames of `batch` to source `id` like [`LiveLogs::push`],
    /// counting no packet: for a source whose log is made from the packets
    /// of several (the SSL league's vision, referee and tracker of one
    /// match, counted each with [`LiveLogs::taken`]).
    pub fn extend(&self, id: SourceId, batch: Log) {
        if !batch.frames.is_empty() {
            self.append(id, batch, None);
        }
    }

    fn append(&self, id: SourceId, batch: Log, packet: Option<u64>) {
        let opts = self.opts;
        let mut inner = self.lock();
        inner.generation += 1;
        let Some(s) = inner.sources.get_mut(id.0) else {
            return;
        };
        if let Some(bytes) = packet {
            s.counts.packets += 1;
            s.counts.bytes += bytes;
        }
        if let Some(w) = batch.warnings.last() {
            s.counts.last_error = Some(w.to_string());
        }
        if s.log.frames.is_empty() && s.log.entities.is_empty() {
            s.log.header = batch.header.clone();
        }
        let ids = adopt_entities(s, &batch, &opts);
        for f in &batch.frames {
            let prims = batch.frame_primitives(f);
            let before = s.log.primitives.len();
            s.log.primitives.extend(prims.iter().filter_map(|p| {
                let entity = ids.get(p.entity.index()).copied().flatten()?;
                let mut q = p.clone();
                q.entity = entity;
                Some(q)
            }));
            s.counts.dropped_primitives += (prims.len() - (s.log.primitives.len() - before)) as u64;
            s.log.frames.push(crate::log::Frame {
                time: f.time,
                primitives: before..s.log.primitives.len(),
            });
            let t = match f.time {
                FrameTime::Instant(t) => t,
                FrameTime::Persistent { start, .. } => start,
            };
            if t.is_finite() && t > s.newest {
                s.newest = t;
            }
        }
        if !s.fixed {
            prune(s, &opts);
        }
        s.counts.frames = s.log.frames.len() + s.current.len();
    }

    /// Replaces what source `id` shows now with `current`'s frames (their
    /// ends may be +∞: shown until replaced); its entities are the
    /// source's, within the same bound. Counts no packet: the packet that
    /// changed it is counted by [`LiveLogs::push`] or [`LiveLogs::bad`].
    pub fn set_current(&self, id: SourceId, current: Log) {
        self.set_current_layered(id, current, 0);
    }

    /// Like [`LiveLogs::set_current`], with the first `under` frames of
    /// `current` drawn beneath the persistent frames the source ended and
    /// the rest above them (an SSL game's field beneath the referee's
    /// states and game events that closed, its referee's state above), as
    /// a file draws them. (A tick, an instantaneous frame, is drawn over
    /// every persistent frame whatever the order.)
    pub fn set_current_layered(&self, id: SourceId, current: Log, under: usize) {
        let opts = self.opts;
        let mut inner = self.lock();
        inner.generation += 1;
        let Some(s) = inner.sources.get_mut(id.0) else {
            return;
        };
        if s.log.frames.is_empty() && s.log.entities.is_empty() {
            s.log.header = current.header.clone();
        }
        let ids = adopt_entities(s, &current, &opts);
        s.current_under = under.min(current.frames.len());
        s.current.clear();
        s.current_primitives.clear();
        for f in &current.frames {
            let prims = current.frame_primitives(f);
            let before = s.current_primitives.len();
            let room = opts.max_primitives.saturating_sub(before);
            s.current_primitives.extend(
                prims
                    .iter()
                    .filter_map(|p| {
                        let entity = ids.get(p.entity.index()).copied().flatten()?;
                        Some(Primitive { entity, ..p.clone() })
                    })
                    .take(room),
            );
            s.counts.dropped_primitives += (prims.len() - (s.current_primitives.len() - before)) as u64;
            s.current.push(crate::log::Frame {
                time: f.time,
                primitives: before..s.current_primitives.len(),
            });
            let t = f.time.start();
            if t.is_finite() && t > s.newest {
                s.newest = t;
            }
        }
        if !s.fixed {
            prune(s, &opts);
        }
        s.counts.frames = s.log.frames.len() + s.current.len();
    }

    /// The bounds this store keeps.
    pub fn options(&self) -> StoreOptions {
        self.opts
    }

    /// Counts a packet of source `id` that was not a log.
    pub fn bad(&self, id: SourceId, bytes: u64, error: String) {
        let mut inner = self.lock();
        if let Some(s) = inner.sources.get_mut(id.0) {
            s.counts.bad += 1;
            s.counts.bytes += bytes;
            s.counts.last_error = Some(error);
        }
    }

    /// Notes a problem of source `id` that is not a packet (a connection
    /// refused, a socket error).
    pub fn note(&self, id: SourceId, error: String) {
        let mut inner = self.lock();
        if let Some(s) = inner.sources.get_mut(id.0) {
            s.counts.last_error = Some(error);
        }
    }

    /// Sets camera `camera`'s calibration, as a source sent it (an error
    /// says why the camera cannot be used); a change only when it differs
    /// from what was set. Beyond `MAX_CAMERAS` (64) cameras, new ones are
    /// ignored.
    pub fn set_camera(&self, camera: u32, calibration: CameraCalibration) {
        let mut inner = self.lock();
        if inner.cameras.get(&camera).is_some_and(|(_, c)| *c == calibration)
            || (!inner.cameras.contains_key(&camera) && inner.cameras.len() >= MAX_CAMERAS)
        {
            return;
        }
        inner.camera_changes += 1;
        let change = inner.camera_changes;
        inner.cameras.insert(camera, (change, calibration));
    }

    /// Camera `camera`'s calibration, with a number that grows whenever
    /// it changes; `None` before a source sent one.
    pub fn camera(&self, camera: u32) -> Option<(u64, CameraCalibration)> {
        self.lock().cameras.get(&camera).cloned()
    }

    /// Every source's counts.
    pub fn counts(&self) -> Vec<SourceCounts> {
        self.lock().sources.iter().map(|s| s.counts.clone()).collect()
    }

    /// The sources merged into one log, and its index, unless nothing
    /// changed since generation `since` (give 0 for the first); with the
    /// generation it was made at.
    pub fn snapshot(&self, since: u64) -> Option<(u64, Arc<Log>, Arc<Index>)> {
        let (generation, logs) = {
            let inner = self.lock();
            if inner.generation == since {
                return None;
            }
            let logs: Vec<Log> = inner
                .sources
                .iter()
                .filter(|s| !s.log.frames.is_empty() || !s.current.is_empty())
                .map(|s| {
                    // Recorded order is draw order: what lies under first.
                    let (under, over) = s.current.split_at(s.current_under.min(s.current.len()));
                    let below = under.last().map_or(0, |f| f.primitives.end);
                    let mut log = Log {
                        warnings: Vec::new(),
                        frames: Vec::with_capacity(s.log.frames.len() + s.current.len()),
                        primitives: Vec::with_capacity(s.log.primitives.len() + s.current_primitives.len()),
                        ..Log::new()
                    };
                    log.header = s.log.header.clone();
                    log.entities = s.log.entities.clone();
                    log.streams = s
                        .log
                        .streams
                        .iter()
                        .map(|st| crate::log::Stream {
                            first_frame: st.first_frame + under.len(),
                            ..st.clone()
                        })
                        .collect();
                    let current = |log: &mut Log, frames: &[crate::log::Frame]| {
                        for f in frames {
                            let at = log.primitives.len();
                            log.primitives.extend_from_slice(
                                s.current_primitives.get(f.primitives.clone()).unwrap_or(&[]),
                            );
                            log.frames.push(crate::log::Frame {
                                time: f.time,
                                primitives: at..log.primitives.len(),
                            });
                        }
                    };
                    current(&mut log, under);
                    log.primitives.extend_from_slice(&s.log.primitives);
                    log.frames.extend(s.log.frames.iter().map(|f| crate::log::Frame {
                        time: f.time,
                        primitives: below + f.primitives.start..below + f.primitives.end,
                    }));
                    current(&mut log, over);
                    log
                })
                .collect();
            (inner.generation, logs)
        };
        let log = Arc::new(crate::log::merge(logs));
        let index = Arc::new(Index::new(&log));
        Some((generation, log, index))
    }
}

/// The entities of `batch` in source `s`'s log, by name, with their
/// parents (an edge making a cycle with what came before left out); `None`
/// for a name beyond the bound.
fn adopt_entities(s: &mut Source, batch: &Log, opts: &StoreOptions) -> Vec<Option<EntityId>> {
    let mut ids: Vec<Option<EntityId>> = Vec::with_capacity(batch.entities.len());
    for e in batch.entities.ids() {
        let name = batch.entities.name(e);
        let id = match s.log.entities.get(name) {
            Some(id) => Some(id),
            None if s.log.entities.len() < opts.max_entities => Some(s.log.entities.intern(name)),
            None => None,
        };
        ids.push(id);
    }
    for e in batch.entities.ids() {
        let Some(child) = ids[e.index()] else { continue };
        for p in batch.entities.parents(e) {
            if let Some(parent) = ids[p.index()]
                && !s.log.entities.has_parent(child, parent)
            {
                s.log.entities.add_parent_acyclic(child, parent);
            }
        }
    }
    ids
}

/// Drops what source `s` keeps beyond the window and the budget (what it
/// shows now counted in), oldest first, and compacts its log when a good
/// part of it went.
fn prune(s: &mut Source, opts: &StoreOptions) {
    let horizon = s.newest - opts.keep;
    let held = s.log.primitives.len() + s.current_primitives.len();
    // Over the budget, down to three quarters of it: a source flooding
    // makes the store compact once for every quarter of the budget it
    // sends, not at every packet.
    let over = if held > opts.max_primitives {
        held - opts.max_primitives / 4 * 3
    } else {
        0
    };
    let old = |t: &FrameTime| match *t {
        FrameTime::Instant(t) => t < horizon,
        FrameTime::Persistent { end, .. } => end < horizon,
    };
    // Compacting is linear in what is kept: done when a quarter can go
    // (or the budget is exceeded), so each primitive is moved O(1) times.
    let mut droppable = 0usize;
    for f in &s.log.frames {
        if old(&f.time) {
            droppable += f.primitives.len();
        }
    }
    if over == 0 && droppable * 4 < s.log.primitives.len().max(64) {
        return;
    }
    let mut shed = 0usize;
    let frames = std::mem::take(&mut s.log.frames);
    let primitives = std::mem::take(&mut s.log.primitives);
    let mut kept_frames = Vec::with_capacity(frames.len());
    let mut kept = Vec::with_capacity(primitives.len());
    let mut dropped = 0u64;
    for f in frames {
        let n = f.primitives.len();
        if old(&f.time) || shed < over {
            if !old(&f.time) {
                dropped += 1;
            }
            shed += n;
            continue;
        }
        let start = kept.len();
        kept.extend_from_slice(primitives.get(f.primitives.clone()).unwrap_or(&[]));
        kept_frames.push(crate::log::Frame {
            time: f.time,
            primitives: start..kept.len(),
        });
    }
    s.counts.dropped_frames += dropped;
    if dropped > 0 {
        s.counts.last_error = Some(format!(
            "more than {} primitives held: the oldest frames were dropped",
            opts.max_primitives
        ));
    }
    s.log.frames = kept_frames;
    s.log.primitives = kept;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Primitive, Shape, Style, Vec2};

    fn batch(t: f64, entity: &str, n: usize) -> Log {
        let mut log = Log::new();
        let e = log.entities.intern(entity);
        let parent = log.entities.intern("robots");
        log.entities.add_parent(e, parent);
        let prims = (0..n).map(|i| Primitive {
            shape: Shape::Circle {
                center: Vec2::new(i as f64, 0.0),
                radius: 1.0,
            },
            style: Style::default(),
            entity: e,
            level: 0,
        });
        log.push_frame(FrameTime::Instant(t), prims);
        log
    }

    #[test]
    fn sources_merge_by_entity_name_and_snapshots_follow_changes() {
        let store = LiveLogs::new(StoreOptions::default());
        let a = store.add_source("udp://:1");
        let b = store.add_source("tcp://:2");
        store.push(a, batch(1.0, "robots/1", 2), 100);
        store.push(b, batch(1.0, "robots/2", 1), 50);
        let (g, log, index) = store.snapshot(0).unwrap();
        assert_eq!(log.frames.len(), 2);
        assert_eq!(log.primitives.len(), 3);
        let robots = log.entities.get("robots").unwrap();
        for name in ["robots/1", "robots/2"] {
            let e = log.entities.get(name).unwrap();
            assert!(log.entities.has_parent(e, robots));
        }
        assert_eq!(index.instant_count(), 2);
        assert!(store.snapshot(g).is_none(), "nothing new");
        store.bad(a, 7, "not a log".into());
        let counts = store.counts();
        assert_eq!((counts[0].packets, counts[0].bad, counts[0].bytes), (1, 1, 107));
    }

    #[test]
    fn a_flood_stays_within_the_window_and_the_budget() {
        let store = LiveLogs::new(StoreOptions {
            keep: 2.0,
            max_primitives: 1_000,
            max_entities: 10,
        });
        let a = store.add_source("udp://:1");
        for i in 0..2_000 {
            store.push(a, batch(i as f64 * 0.01, "robots/1", 10), 0);
        }
        let c = &store.counts()[0];
        let (_, log, _) = store.snapshot(0).unwrap();
        assert!(log.primitives.len() <= 1_000 + 10, "{}", log.primitives.len());
        let (lo, hi) = log.time_range().unwrap();
        assert!(hi - lo <= 2.0, "{lo}..{hi}");
        assert!(c.dropped_frames > 0 && c.last_error.is_some(), "{c:?}");
        // Entity names beyond the bound: their primitives are dropped.
        for i in 0..20 {
            store.push(a, batch(30.0, &format!("e{i}"), 1), 0);
        }
        let c = &store.counts()[0];
        assert!(c.dropped_primitives >= 10, "{c:?}");
    }

    fn open_ended(since: f64, entity: &str, n: usize) -> Log {
        let mut log = batch(since, entity, n);
        log.frames[0].time = FrameTime::Persistent {
            start: since,
            end: f64::INFINITY,
        };
        log
    }

    #[test]
    fn what_a_source_shows_now_is_replaced_and_counted_in_the_budget() {
        let store = LiveLogs::new(StoreOptions {
            keep: 2.0,
            max_primitives: 100,
            max_entities: 10,
        });
        let a = store.add_source("roboviz://:1");
        store.set_current(a, open_ended(1.0, "team.a", 3));
        store.set_current(a, open_ended(2.0, "team.a", 2));
        let (g, log, index) = store.snapshot(0).unwrap();
        assert_eq!(
            (log.frames.len(), log.primitives.len()),
            (1, 2),
            "replaced, not added"
        );
        let filter = crate::select::FilterSpec::default().compile(&log).unwrap();
        assert_eq!(
            index.select(&log, crate::time::LogTime(1e9), 0.0, &filter).len(),
            2
        );
        assert!(
            log.entities.get("robots").is_some(),
            "entities with their parents"
        );
        // Ended frames beside it; the budget counts both.
        for i in 0..20 {
            store.push(a, batch(2.0 + f64::from(i) * 0.01, "team.a", 10), 0);
        }
        store.set_current(a, open_ended(3.0, "team.a", 60));
        let (g2, log, _) = store.snapshot(g).unwrap();
        assert!(g2 > g);
        assert!(log.primitives.len() <= 100, "{}", log.primitives.len());
        assert_eq!(log.frames.last().map(|f| f.primitives.len()), Some(60));
        store.set_current(a, open_ended(4.0, "team.a", 500));
        let c = &store.counts()[0];
        assert!(c.dropped_primitives >= 400, "{c:?}");
        let (_, log, _) = store.snapshot(0).unwrap();
        assert!(log.primitives.len() <= 100, "{}", log.primitives.len());
        store.set_current(a, Log::new());
        let (_, log, _) = store.snapshot(0).unwrap();
        assert!(
            log.frames.iter().all(|f| f.time.end().is_finite()),
            "nothing open-ended left"
        );
    }

    #[test]
    fn fixed_logs_are_kept_whole() {
        let store = LiveLogs::new(StoreOptions {
            keep: 1.0,
            ..StoreOptions::default()
        });
        let mut field = batch(0.0, "field", 3);
        field.push_frame(
            FrameTime::Persistent {
                start: f64::NEG_INFINITY,
                end: f64::INFINITY,
            },
            [],
        );
        store.add_fixed("field.ulog", field);
        let a = store.add_source("udp://:1");
        store.push(a, batch(100.0, "robots/1", 1), 0);
        let (_, log, _) = store.snapshot(0).unwrap();
        assert_eq!(log.frames.len(), 3);
    }
}
