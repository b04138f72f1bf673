//! Time sync between video and log: events on the timeline (where
//! persistent frames start), jumping between them, nudging the offset and
//! aligning a chosen log event with the current video frame.
//!
//! Log time = video time + offset, as everywhere in underlay.

use crate::log::{FrameTime, Log, Shape};
use crate::time::LogTime;

/// Offset nudges offered by the sync panel, as (label, step in seconds);
/// `None` means one video frame.
pub const NUDGES: [(&str, Option<f64>); 6] = [
    ("−1 s", Some(-1.0)),
    ("−0.1 s", Some(-0.1)),
    ("−1 frame", None),
    ("+1 frame", None),
    ("+0.1 s", Some(0.1)),
    ("+1 s", Some(1.0)),
];

/// A log event: the start of a persistent frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Log time of the start.
    pub time: f64,
    /// Index of the frame in the log.
    pub frame: usize,
}

/// Every event of a log, sorted by time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Events {
    pub events: Vec<Event>,
}

impl Events {
    /// Collects the persistent frames with a finite start.
    pub fn from_log(log: &Log) -> Self {
        let mut events: Vec<Event> = log
            .frames
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match f.time {
                FrameTime::Persistent { start, .. } if start.is_finite() => Some(Event {
                    time: start,
                    frame: i,
                }),
                _ => None,
            })
            .collect();
        events.sort_by(|a, b| a.time.total_cmp(&b.time).then(a.frame.cmp(&b.frame)));
        Events { events }
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Events with `a ≤ time ≤ b`.
    pub fn between(&self, a: f64, b: f64) -> &[Event] {
        let lo = self.events.partition_point(|e| e.time < a);
        let hi = self.events.partition_point(|e| e.time <= b);
        &self.events[lo..hi.max(lo)]
    }

    /// The first event strictly after log time `t` (with a small tolerance,
    /// so jumping from an event moves on to the next one).
    pub fn next_after(&self, t: f64) -> Option<&Event> {
        let eps = 1e-6 * (1.0 + t.abs() * 1e-9).max(1.0);
        let i = self.events.partition_point(|e| e.time <= t + eps);
        self.events.get(i)
    }

    /// The last event strictly before log time `t`.
    pub fn prev_before(&self, t: f64) -> Option<&Event> {
        let eps = 1e-6;
        let i = self.events.partition_point(|e| e.time < t - eps);
        i.checked_sub(1).and_then(|i| self.events.get(i))
    }

    /// The event nearest to log time `t`.
    pub fn nearest(&self, t: f64) -> Option<&Event> {
        let i = self.events.partition_point(|e| e.time < t);
        let after = self.events.get(i);
        let before = i.checked_sub(1).and_then(|i| self.events.get(i));
        match (before, after) {
            (Some(b), Some(a)) => Some(if t - b.time <= a.time - t { b } else { a }),
            (b, a) => b.or(a),
        }
    }
}

/// A one-line description of a log frame: its entities and shapes, and
/// its text if it has some (what an event "says").
pub fn describe_frame(log: &Log, frame: usize) -> String {
    let Some(f) = log.frames.get(frame) else {
        return String::new();
    };
    let prims = log.frame_primitives(f);
    let text = prims.iter().find_map(|p| match &p.shape {
        Shape::Text { text, .. } => Some(text.to_string()),
        _ => None,
    });
    let mut ents: Vec<&str> = prims.iter().map(|p| log.entities.name(p.entity)).collect();
    ents.sort_unstable();
    ents.dedup();
    let ents = match ents.len() {
        0 => "empty".to_owned(),
        1..=2 => ents.join(", "),
        n => format!("{}, {} and {} more", ents[0], ents[1], n - 2),
    };
    match text {
        Some(t) => format!("“{t}” ({ents})"),
        None => format!(
            "{ents}, {} primitive{}",
            prims.len(),
            if prims.len() == 1 { "" } else { "s" }
        ),
    }
}

/// The offset that puts log time `log_time` at video time `video_time`.
pub fn align_offset(log_time: f64, video_time: f64) -> Option<f64> {
    let o = log_time - video_time;
    o.is_finite().then_some(o)
}

/// The offset after a nudge of `step` seconds (`None`: one frame of
/// `frame_duration`, in the direction of `sign`).
pub fn nudge(offset: f64, step: Option<f64>, sign: f64, frame_duration: f64) -> f64 {
    let d = step.unwrap_or(sign.signum() * frame_duration);
    let o = offset + d;
    if o.is_finite() { o } else { offset }
}

/// A sensible default offset when a video and a log are opened together:
/// the log's first time lines up with the video's start.
pub fn default_offset(log: &Log, video_start: f64) -> f64 {
    log.time_range()
        .and_then(|(a, _)| align_offset(a, video_start))
        .unwrap_or(0.0)
}

/// Primitives selected at log time `t` per entity id, before any entity or
/// level filtering (what the entities panel counts), through `index` (built
/// from `log`).
pub fn counts_at(log: &Log, index: &crate::select::Index, t: LogTime, threshold: f64) -> Vec<usize> {
    let mut counts = vec![0; log.entities.len()];
    let all = crate::select::Filter::all(log, i32::MAX);
    for p in index.select(log, t, threshold, &all).iter() {
        if let Some(c) = counts.get_mut(p.entity.index()) {
            *c += 1;
        }
    }
    counts
}

/// The texts shown at log time `t` (any entity, any level), with their
/// entities' names, in draw order; at most `max` of them. An agent's
/// messages (a 2D debug log's `M` lines) are read here as a list.
pub fn texts_at(
    log: &Log,
    index: &crate::select::Index,
    t: LogTime,
    threshold: f64,
    max: usize,
) -> Vec<(String, String)> {
    let all = crate::select::Filter::all(log, i32::MAX);
    index
        .select(log, t, threshold, &all)
        .iter()
        .filter_map(|p| match &p.shape {
            Shape::Text { text, .. } => Some((log.entities.name(p.entity).to_owned(), text.to_string())),
            _ => None,
        })
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;
    use crate::log::{Primitive, Style};

    fn log() -> Log {
        let mut log = Log::new();
        let e = log.entities.intern("autoref");
        let text = |s: &str| Primitive {
            shape: Shape::Text {
                anchor: Vec2::ZERO,
                text: s.into(),
                size: 12.0,
            },
            style: Style::default(),
            entity: e,
            level: 0,
        };
        for (i, t) in [100.0, 100.1, 100.2, 100.4].into_iter().enumerate() {
            log.push_frame(FrameTime::Instant(t), [text(&format!("i{i}"))]);
        }
        log.push_frame(
            FrameTime::Persistent {
                start: 103.0,
                end: 104.0,
            },
            [text("ball out")],
        );
        log.push_frame(
            FrameTime::Persistent {
                start: 101.0,
                end: 109.0,
            },
            [],
        );
        log.push_frame(
            FrameTime::Persistent {
                start: f64::NEG_INFINITY,
                end: 109.0,
            },
            [],
        );
        log
    }

    #[test]
    fn events_sorted_and_navigable() {
        let l = log();
        let ev = Events::from_log(&l);
        let times: Vec<f64> = ev.events.iter().map(|e| e.time).collect();
        assert_eq!(times, [101.0, 103.0]);
        assert_eq!(ev.next_after(101.0).map(|e| e.time), Some(103.0));
        assert_eq!(ev.next_after(50.0).map(|e| e.time), Some(101.0));
        assert!(ev.next_after(103.0).is_none());
        assert_eq!(ev.prev_before(103.0).map(|e| e.time), Some(101.0));
        assert!(ev.prev_before(101.0).is_none());
        assert_eq!(ev.nearest(102.5).map(|e| e.time), Some(103.0));
        assert_eq!(ev.between(100.0, 102.0).len(), 1);
        assert_eq!(ev.between(200.0, 100.0).len(), 0);
        assert_eq!(describe_frame(&l, ev.events[1].frame), "“ball out” (autoref)");
        assert_eq!(describe_frame(&l, ev.events[0].frame), "empty, 0 primitives");
    }

    #[test]
    fn offsets_align_and_nudge() {
        assert_eq!(align_offset(1000.5, 0.5), Some(1000.0));
        assert_eq!(align_offset(f64::INFINITY, 0.5), None);
        assert!((nudge(10.0, None, -1.0, 0.04) - 9.96).abs() < 1e-12);
        assert_eq!(nudge(10.0, Some(1.0), 1.0, 0.04), 11.0);
        assert_eq!(nudge(10.0, Some(f64::NAN), 1.0, 0.04), 10.0);
        assert_eq!(default_offset(&log(), 0.0), 100.0);
        assert_eq!(default_offset(&Log::new(), 0.0), 0.0);
    }

    #[test]
    fn counts_at_a_time() {
        let l = log();
        // At 103.5: persistent "ball out" plus the nearest instant (too far).
        let ix = crate::select::Index::new(&l);
        assert_eq!(counts_at(&l, &ix, crate::time::LogTime(103.5), 0.15), vec![1]);
        assert_eq!(counts_at(&l, &ix, crate::time::LogTime(100.12), 0.15), vec![1]);
        assert_eq!(counts_at(&l, &ix, crate::time::LogTime(100.3), 0.01), vec![0]);
    }
}
