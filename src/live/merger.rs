//! The live logs merged for drawing, on a thread of their own.
//!
//! Merging every source into one log and indexing it is linear in what
//! the store holds: nothing for a robot's few shapes a frame, but a good
//! part of a second for a source at its budget (millions of primitives).
//! Done by the drawing loop, a flooding source would stall the picture;
//! here the loop takes the newest merge that is ready and never waits for
//! one. Between two merges the thread rests at least as long as the last
//! one took, so a flood costs at most half a core.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::store::LiveLogs;
use crate::log::Log;
use crate::select::Index;

/// How often the thread looks for something new.
const POLL: Duration = Duration::from_millis(4);

/// A merged log, its index, and the store's generation it was made at.
pub type Merged = (u64, Arc<Log>, Arc<Index>);

/// Merges a [`LiveLogs`] whenever it changed, in the background.
pub struct Merger {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    latest: Mutex<Option<Merged>>,
    stop: AtomicBool,
}

impl Merger {
    /// Merges what `store` holds now (so that logs read from files are
    /// there for the first frame), then goes on in the background.
    pub fn start(store: Arc<LiveLogs>) -> Merger {
        let first = store.snapshot(0);
        let generation = first.as_ref().map_or(0, |m| m.0);
        let shared = Arc::new(Shared {
            latest: Mutex::new(first),
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("live merge".into())
            .spawn(move || merge_loop(&store, &s, generation))
            .ok();
        // Without its thread the first merge stays: what files hold is
        // still drawn.
        Merger { shared, thread }
    }

    /// The newest merge, unless it is the one of generation `since`.
    pub fn latest(&self, since: u64) -> Option<Merged> {
        let g = self
            .shared
            .latest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.as_ref().filter(|m| m.0 != since).cloned()
    }
}

impl Drop for Merger {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn merge_loop(store: &LiveLogs, s: &Shared, mut generation: u64) {
    while !s.stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        match store.snapshot(generation) {
            Some(m) => {
                generation = m.0;
                *s.latest.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(m);
                rest(s, t.elapsed().max(POLL));
            }
            None => rest(s, POLL),
        }
    }
}

/// Sleeps `d`, waking early to stop.
fn rest(s: &Shared, d: Duration) {
    let end = Instant::now() + d;
    while !s.stop.load(Ordering::Relaxed) {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::StoreOptions;

    fn one_frame(t: f64) -> Log {
        let mut log = Log::new();
        let e = log.entities.intern("robot");
        log.primitives.push(crate::log::Primitive {
            shape: crate::log::Shape::Circle {
                center: crate::log::Vec2::new(1.0, 2.0),
                radius: 1.0,
            },
            style: crate::log::Style::default(),
            entity: e,
            level: 0,
        });
        log.frames.push(crate::log::Frame {
            time: crate::log::FrameTime::Instant(t),
            primitives: 0..1,
        });
        log
    }

    #[test]
    fn what_files_hold_is_merged_before_the_first_frame_and_news_follow() {
        let store = Arc::new(LiveLogs::new(StoreOptions::default()));
        store.add_fixed("run.ulog", one_frame(1.0));
        let merger = Merger::start(Arc::clone(&store));
        let (g, log, _) = merger.latest(0).expect("merged at once");
        assert_eq!(log.frames.len(), 1);
        assert!(merger.latest(g).is_none(), "nothing new");
        let id = store.add_source("udp://:1");
        store.push(id, one_frame(2.0), 10);
        let t = Instant::now();
        let merged = loop {
            if let Some(m) = merger.latest(g) {
                break m;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "never merged");
            std::thread::sleep(Duration::from_millis(2));
        };
        assert_eq!(merged.1.frames.len(), 2);
        let t = Instant::now();
        drop(merger);
        assert!(t.elapsed() < Duration::from_secs(1), "stopping waits for nothing");
    }
}
