//! Undo and redo of every edit of the session (offset and rate,
//! calibration and its points, filters and levels, mask and drawing
//! settings), Ctrl+Z and Ctrl+Shift+Z.
//!
//! The history watches the state rather than each control: after every
//! frame of the window it compares what the panels may edit with what it
//! saw last, and when they differ it keeps the old state. A change made
//! while a mouse button is held (dragging the offset, a calibration point)
//! is one step, kept when the button is released. The video and the logs
//! (what is open) are not edits: undoing never reopens files.

use crate::session::Session;
use crate::viewer::calibrate::CalibPoint;

/// Most steps kept.
const MAX_STEPS: usize = 200;

/// What undo puts back.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub session: Session,
    pub points: Vec<CalibPoint>,
}

/// The undo and redo stacks of one document.
#[derive(Clone, Debug, Default)]
pub struct History {
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    /// The state as last seen settled.
    seen: Option<Snapshot>,
}

impl History {
    /// A history starting at `now`.
    pub fn new(now: Snapshot) -> Self {
        History {
            undo: Vec::new(),
            redo: Vec::new(),
            seen: Some(now),
        }
    }

    /// Looks at the state after a frame; `busy` while a button is held
    /// (the change goes on). Returns whether a step was kept.
    pub fn observe(&mut self, now: &Snapshot, busy: bool) -> bool {
        let Some(seen) = &self.seen else {
            self.seen = Some(now.clone());
            return false;
        };
        if busy || same(seen, now) {
            return false;
        }
        let old = self.seen.replace(now.clone());
        self.undo.extend(old);
        if self.undo.len() > MAX_STEPS {
            self.undo.remove(0);
        }
        self.redo.clear();
        true
    }

    /// The state before the last step, given the state `now` (kept for
    /// redo); `None` when there is nothing to undo.
    pub fn undo(&mut self, now: &Snapshot) -> Option<Snapshot> {
        // A change not yet kept is a step of its own.
        self.observe(now, false);
        let back = self.undo.pop()?;
        self.redo.push(now.clone());
        self.seen = Some(back.clone());
        Some(back)
    }

    /// The state undone last; `None` when there is nothing to redo.
    pub fn redo(&mut self, now: &Snapshot) -> Option<Snapshot> {
        if self.observe(now, false) {
            return None;
        }
        let next = self.redo.pop()?;
        self.undo.push(now.clone());
        self.seen = Some(next.clone());
        Some(next)
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }
}

/// Whether two states are the same edit-wise (the files open and the
/// viewer's own table aside).
fn same(a: &Snapshot, b: &Snapshot) -> bool {
    let strip = |s: &Session| Session {
        video: Default::default(),
        logs: Vec::new(),
        viewer: None,
        ..s.clone()
    };
    a.points == b.points && strip(&a.session) == strip(&b.session)
}

/// `to` with the files that are open now (`now`'s video and logs) and the
/// viewer's own table kept: what undo and redo apply.
pub fn restore(now: &Session, to: &Session) -> Session {
    Session {
        video: now.video.clone(),
        logs: now.logs.clone(),
        viewer: now.viewer.clone(),
        ..to.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(offset: f64) -> Snapshot {
        let mut session = Session::new("a.mp4", "a.ulog");
        session.offset = offset;
        Snapshot {
            session,
            points: Vec::new(),
        }
    }

    #[test]
    fn steps_undo_and_redo_in_order() {
        let mut h = History::new(snap(0.0));
        assert!(h.observe(&snap(1.0), false));
        assert!(h.observe(&snap(2.0), false));
        assert!(!h.observe(&snap(2.0), false), "nothing changed");
        assert_eq!(h.undo(&snap(2.0)).unwrap().session.offset, 1.0);
        assert_eq!(h.undo(&snap(1.0)).unwrap().session.offset, 0.0);
        assert!(h.undo(&snap(0.0)).is_none());
        assert_eq!(h.redo(&snap(0.0)).unwrap().session.offset, 1.0);
        assert_eq!(h.redo(&snap(1.0)).unwrap().session.offset, 2.0);
        assert!(h.redo(&snap(2.0)).is_none());
        // A new edit after undo drops what could be redone.
        h.undo(&snap(2.0));
        assert!(h.observe(&snap(5.0), false));
        assert!(!h.can_redo());
    }

    #[test]
    fn a_drag_is_one_step() {
        let mut h = History::new(snap(0.0));
        for i in 1..20 {
            assert!(!h.observe(&snap(i as f64 * 0.1), true));
        }
        assert!(h.observe(&snap(1.9), false));
        assert_eq!(h.undo(&snap(1.9)).unwrap().session.offset, 0.0);
        assert!(!h.can_undo());
    }

    #[test]
    fn a_change_not_yet_kept_is_undone_first() {
        let mut h = History::new(snap(0.0));
        // Typed, and undone before the history saw it settle.
        assert_eq!(h.undo(&snap(3.0)).unwrap().session.offset, 0.0);
        assert_eq!(h.redo(&snap(0.0)).unwrap().session.offset, 3.0);
    }

    #[test]
    fn files_open_are_not_edits_and_stay() {
        let mut h = History::new(snap(0.0));
        let mut other = snap(0.0);
        other.session.logs.push("b.ulog".into());
        assert!(!h.observe(&other, false));
        let back = restore(&other.session, &snap(7.0).session);
        assert_eq!(back.logs, other.session.logs);
        assert_eq!(back.offset, 7.0);
    }

    #[test]
    fn the_history_is_bounded() {
        let mut h = History::new(snap(0.0));
        for i in 1..=(MAX_STEPS + 50) {
            h.observe(&snap(i as f64), false);
        }
        assert_eq!(h.undo.len(), MAX_STEPS);
    }
}
