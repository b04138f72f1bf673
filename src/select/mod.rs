//! Choosing what to draw at a time: thesis Algorithm 3, entity filters and
//! levels of detail.
//!
//! - A user-facing [`FilterSpec`] (what the session file and command line
//!   hold, by entity *name*) is compiled against a log's entity graph
//!   ([`EntityTree`]) into a [`Filter`]: one maximum level per entity id, so
//!   testing a primitive is one lookup and every combination of filters
//!   costs the same at query time.
//! - An [`Index`], built once per log, answers "what is shown at time `t`"
//!   in `O(log n + log m + k)` and hands out the primitives borrowed, in
//!   draw order ([`Selection`]), plus range and next-event queries for
//!   timelines.
//! - [`brute_force`] is the literal Algorithm 3 and the reference the index
//!   is checked against (property tests in `index.rs`).
//!
//! # Selection rules (shared by [`brute_force`] and [`Index::select`])
//! At time `t` with threshold `θ`:
//! 1. every persistent frame with `start ≤ t ≤ end`, in recorded order
//!    (frames with a NaN bound or `start > end` never apply);
//! 2. then the instantaneous frame nearest to `t`, if `|time − t| < θ`
//!    (strictly). Among frames at the same distance the one with the
//!    earlier time wins, then the one recorded first. Distances are
//!    computed as `(time − t).abs()` in `f64`, so a NaN time, a NaN `t` or
//!    an infinite distance never selects a frame;
//! 3. within each frame, the primitives the [`Filter`] allows, in recorded
//!    order.
//!
//! # Use
//! ```
//! use underlay::log::{FrameTime, Log, Primitive, Shape, Style, Vec2};
//! use underlay::select::{FilterSpec, Index};
//! use underlay::time::LogTime;
//!
//! let mut log = Log::new();
//! let ball = log.entities.intern("ball");
//! let dot = Primitive {
//!     shape: Shape::Circle { center: Vec2::ZERO, radius: 21.5 },
//!     style: Style::default(),
//!     entity: ball,
//!     level: 0,
//! };
//! log.push_frame(FrameTime::Instant(10.0), [dot.clone()]);
//! log.push_frame(FrameTime::Instant(10.1), [dot]);
//!
//! let index = Index::new(&log); // once per log
//! let filter = FilterSpec { only: vec!["ball".into()], ..FilterSpec::default() }.compile(&log)?;
//! let threshold = index.default_threshold(); // unless the session sets one
//! let shown = index.select(&log, LogTime(10.04), threshold, &filter);
//! assert_eq!(shown.instant_frames(), &[0]);
//! for primitive in &shown {
//!     assert_eq!(primitive.entity, ball);
//! }
//! # Ok::<(), underlay::select::SelectError>(())
//! ```

use crate::log::{FrameTime, Log, Primitive};

mod entities;
mod filter;
mod index;

pub use entities::{EntityTree, TreeRow};
pub use filter::{Filter, FilterSpec, SelectError, above_mask};
pub use index::{Index, Selection, SelectionIter};

/// Thesis Algorithm 3, literally: one pass over every frame, following the
/// selection rules of the [module docs](self). `O(frames + primitives)` per
/// call; the reference for [`Index::select`].
pub fn brute_force<'a>(log: &'a Log, t: f64, threshold: f64, filter: &Filter) -> Vec<&'a Primitive> {
    let mut out = Vec::new();
    for f in &log.frames {
        if let FrameTime::Persistent { start, end } = f.time
            && start <= t
            && t <= end
        {
            out.extend(log.frame_primitives(f).iter().filter(|p| filter.allows(p)));
        }
    }
    // Each stream's nearest instantaneous frame.
    for range in log.stream_ranges() {
        // (distance, time, frame index) of the best instantaneous frame so far.
        let mut nearest: Option<(f64, f64, usize)> = None;
        for i in range {
            if let FrameTime::Instant(ft) = log.frames[i].time {
                let d = (ft - t).abs();
                if d.is_nan() {
                    continue;
                }
                if nearest.is_none_or(|(bd, bt, _)| d < bd || (d == bd && ft < bt)) {
                    nearest = Some((d, ft, i));
                }
            }
        }
        if let Some((d, _, i)) = nearest
            && d < threshold
        {
            out.extend(
                log.frame_primitives(&log.frames[i])
                    .iter()
                    .filter(|p| filter.allows(p)),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;
    use crate::log::{Shape, Style};
    use std::collections::BTreeSet;

    #[test]
    fn each_merged_log_shows_its_own_instantaneous_frame() {
        // A game log every 0.1 s and an agent's log at the same times, and
        // a third sampled every 0.5 s: at any time all three are drawn.
        let mut logs = Vec::new();
        for (name, step, n) in [("game", 0.1, 30), ("agent", 0.1, 30), ("coach", 0.5, 6)] {
            let mut l = Log::new();
            let e = l.entities.intern(name);
            for i in 0..n {
                let dot = Primitive {
                    shape: Shape::Circle {
                        center: Vec2::new(i as f64, 0.0),
                        radius: 1.0,
                    },
                    style: Style::default(),
                    entity: e,
                    level: 0,
                };
                l.push_frame(FrameTime::Instant(i as f64 * step), [dot]);
            }
            logs.push(l);
        }
        let m = crate::log::merge(logs);
        let index = Index::new(&m);
        let all = Filter::all(&m, 0);
        let sel = index.select(&m, crate::time::LogTime(1.2), m.default_instant_threshold(), &all);
        let names: Vec<&str> = sel.iter().map(|p| m.entities.name(p.entity)).collect();
        assert_eq!(names, ["game", "agent", "coach"]);
        assert_eq!(sel.instant_frames(), [12, 42, 62]);
    }

    #[test]
    fn above_the_mask_takes_descendants_by_name_and_by_edge() {
        let mut log = Log::new();
        let a = log.entities.intern("labels");
        let b = log.entities.intern("labels/robot3");
        let c = log.entities.intern("robots");
        let d = log.entities.intern("tags");
        log.entities.add_parent(d, a);
        let names: BTreeSet<String> = ["labels".to_owned()].into();
        let v = above_mask(&log, &names);
        assert!(
            v[a.index()] && v[b.index()] && v[d.index()] && !v[c.index()],
            "{v:?}"
        );
        assert!(above_mask(&log, &BTreeSet::new()).iter().all(|&x| !x));
    }

    fn prim(log: &mut Log, entity: &str, level: i32) -> Primitive {
        Primitive {
            shape: Shape::Circle {
                center: Vec2::ZERO,
                radius: 1.0,
            },
            style: Style::default(),
            entity: log.entities.intern(entity),
            level,
        }
    }

    #[test]
    fn hidden_marker_hides_even_the_lowest_level() {
        let mut log = Log::new();
        let p = prim(&mut log, "a", i32::MIN);
        assert!(!Filter::from_levels(vec![Filter::HIDDEN]).allows(&p));
        assert!(Filter::from_levels(vec![i32::MIN + 1]).allows(&p));
        assert!(
            !Filter::from_levels(vec![]).allows(&p),
            "ids past the end are hidden"
        );
    }

    #[test]
    fn brute_force_follows_algorithm_3() {
        let mut log = Log::new();
        let a0 = prim(&mut log, "a", 0);
        let a2 = prim(&mut log, "a", 2);
        let b0 = prim(&mut log, "b", 0);
        log.push_frame(FrameTime::Instant(1.0), [a0.clone(), b0.clone()]);
        log.push_frame(FrameTime::Persistent { start: 0.0, end: 5.0 }, [a2.clone()]);
        log.push_frame(FrameTime::Instant(2.0), [a2.clone()]);
        log.push_frame(
            FrameTime::Persistent {
                start: f64::NAN,
                end: 9.0,
            },
            [a0.clone()],
        );
        let all = Filter::all(&log, 10);
        let got = brute_force(&log, 1.2, 0.5, &all);
        // Persistent frame first, then the nearest instantaneous one.
        assert_eq!(got, vec![&a2, &a0, &b0]);
        assert!(std::ptr::eq(got[0], &log.primitives[2]));
        // Out of threshold: only the persistent frame.
        assert_eq!(brute_force(&log, 3.0, 0.5, &all), vec![&a2]);
        // Level and entity filter.
        let f = Filter::from_levels(vec![1, Filter::HIDDEN]);
        assert_eq!(brute_force(&log, 1.2, 0.5, &f), vec![&a0]);
        // Nothing at NaN or at infinity.
        assert!(brute_force(&log, f64::NAN, f64::INFINITY, &all).is_empty());
        assert!(brute_force(&log, f64::INFINITY, f64::INFINITY, &all).is_empty());
    }

    #[test]
    fn brute_force_ties_go_to_the_earlier_time_then_the_earlier_frame() {
        let mut log = Log::new();
        let late = prim(&mut log, "late", 0);
        let early = prim(&mut log, "early", 0);
        let early2 = prim(&mut log, "early2", 0);
        log.push_frame(FrameTime::Instant(2.0), [late.clone()]);
        log.push_frame(FrameTime::Instant(1.0), [early.clone()]);
        log.push_frame(FrameTime::Instant(1.0), [early2.clone()]);
        let all = Filter::all(&log, 0);
        assert_eq!(brute_force(&log, 1.5, 1.0, &all), vec![&early]);
        // Rounding makes 1e-300 and 2e-300 equally far from 1: the earlier time wins.
        let mut log = Log::new();
        let x = prim(&mut log, "x", 0);
        let y = prim(&mut log, "y", 0);
        log.push_frame(FrameTime::Instant(2e-300), [x.clone()]);
        log.push_frame(FrameTime::Instant(1e-300), [y.clone()]);
        assert_eq!(brute_force(&log, 1.0, 2.0, &Filter::all(&log, 0)), vec![&y]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let e = SelectError::UnknownEntities {
            names: vec!["robots".into(), "ba\"ll".into()],
            known: vec!["ball".into(), "robot".into()],
        };
        assert_eq!(
            e.to_string(),
            "the log has no entities named \"robots\", \"ba\\\"ll\" (its entities: ball, robot)"
        );
        let e = SelectError::Cycle {
            names: vec!["a".into(), "b".into(), "a".into()],
        };
        assert_eq!(e.to_string(), "the entity graph has a cycle: a → b → a");
    }
}
