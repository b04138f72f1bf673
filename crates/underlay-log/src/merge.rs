//! Several logs drawn as one: a game log plus the debug logs of the agents
//! that played it, say. Entities are interned by name (the same name in
//! two logs is one entity, and its parents are the union of both logs'),
//! and the frames of every log are kept, each with its own primitives.
//! Each log stays a stream of its own ([`Stream`](crate::Stream)): its
//! nearest instantaneous frame is shown whatever the others have then.

use super::model::{EntityId, Log};

/// `logs` merged into one log. The header is the first log's, with the
/// instantaneous-frame threshold hint kept only when every log that has
/// one agrees (else the threshold is derived from the merged frames), and
/// the maximum-level hint the largest any log gives. Warnings are kept,
/// each log's after the one before.
pub fn merge(logs: impl IntoIterator<Item = Log>) -> Log {
    let logs: Vec<Log> = logs.into_iter().collect();
    let mut hinted = logs.iter().filter_map(|l| l.header.hints.instant_threshold);
    let first_hint = hinted.next();
    let threshold = first_hint.filter(|&t| hinted.all(|u| u == t));
    let several = logs.len() > 1;
    let mut logs = logs.into_iter();
    let Some(mut out) = logs.next() else {
        return Log::new();
    };
    if several {
        out.streams = own_streams(&out, 0);
    }
    for log in logs {
        append(&mut out, log);
    }
    out.header.hints.instant_threshold = threshold;
    out
}

/// The streams of `log` (its own, or itself as one) with frames shifted by `first`.
fn own_streams(log: &Log, first: usize) -> Vec<super::model::Stream> {
    if log.streams.is_empty() {
        vec![super::model::Stream {
            first_frame: first,
            instant_threshold: log.header.hints.instant_threshold,
        }]
    } else {
        log.streams
            .iter()
            .map(|s| super::model::Stream {
                first_frame: s.first_frame + first,
                ..s.clone()
            })
            .collect()
    }
}

/// Appends `log` to `out` (see [`merge`]).
fn append(out: &mut Log, log: Log) {
    let ids: Vec<EntityId> = log
        .entities
        .ids()
        .map(|id| out.entities.intern(log.entities.name(id)))
        .collect();
    for id in log.entities.ids() {
        for &p in log.entities.parents(id) {
            out.entities.add_parent(ids[id.index()], ids[p.index()]);
        }
    }
    let hints = &mut out.header.hints;
    hints.default_max_level = match (hints.default_max_level, log.header.hints.default_max_level) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let first = out.frames.len();
    out.streams.extend(own_streams(&log, first));
    for frame in &log.frames {
        let prims = log.frame_primitives(frame).iter().map(|p| {
            let mut p = p.clone();
            p.entity = ids[p.entity.index()];
            p
        });
        out.push_frame(frame.time, prims);
    }
    out.warnings.extend(log.warnings);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FrameTime, Primitive, Shape, Style, Vec2};

    fn dot(entity: EntityId, x: f64) -> Primitive {
        Primitive {
            shape: Shape::Circle {
                center: Vec2::new(x, 0.0),
                radius: 1.0,
            },
            style: Style::default(),
            entity,
            level: 0,
        }
    }

    #[test]
    fn each_merged_log_keeps_its_own_stream() {
        // A game log every 0.1 s and an agent's log at the same times, and
        // a third sampled every 0.5 s: three streams, so that at any time
        // all three are drawn.
        let mut logs = Vec::new();
        for (name, step, n) in [("game", 0.1, 30), ("agent", 0.1, 30), ("coach", 0.5, 6)] {
            let mut l = Log::new();
            let e = l.entities.intern(name);
            for i in 0..n {
                l.push_frame(FrameTime::Instant(i as f64 * step), [dot(e, i as f64)]);
            }
            logs.push(l);
        }
        let m = merge(logs);
        assert_eq!(m.streams.len(), 3);
        assert_eq!(m.stream_ranges().collect::<Vec<_>>(), [0..30, 30..60, 60..66]);
        // Each stream's own default: the coach's 0.75 s is the largest.
        assert!((m.default_instant_threshold() - 0.75).abs() < 1e-9);
        // (What the selection then shows at a time is `select`'s test.)
        // Merged again, the streams stay apart.
        let again = merge([m.clone(), Log::new()]);
        assert_eq!(again.streams.len(), 4);
        // One log alone is not split.
        assert!(merge([Log::new()]).streams.is_empty());
    }

    #[test]
    fn entities_are_one_by_name_and_frames_are_all_kept() {
        let mut game = Log::new();
        let ball = game.entities.intern("ball");
        let robots = game.entities.intern("robots");
        game.push_frame(FrameTime::Instant(1.0), [dot(ball, 1.0), dot(robots, 2.0)]);
        game.header.hints.instant_threshold = Some(0.1);
        let mut agent = Log::new();
        let plan = agent.entities.intern("robots/3/plan");
        let robots2 = agent.entities.intern("robots");
        agent.entities.add_parent(plan, robots2);
        let ball2 = agent.entities.intern("ball");
        agent.push_frame(FrameTime::Instant(1.5), [dot(plan, 3.0)]);
        agent.push_frame(FrameTime::Persistent { start: 0.0, end: 9.0 }, [dot(ball2, 4.0)]);
        agent.header.hints.instant_threshold = Some(0.1);
        agent.header.hints.default_max_level = Some(2);
        let m = merge([game.clone(), agent]);
        assert_eq!(m.entities.len(), 3);
        assert_eq!(m.frames.len(), 3);
        assert_eq!(m.primitives.len(), 4);
        let plan = m.entities.get("robots/3/plan").unwrap();
        let robots = m.entities.get("robots").unwrap();
        assert_eq!(m.entities.parents(plan), &[robots]);
        // The agent's ball is the game's ball.
        let last = m.frames.last().unwrap();
        assert_eq!(
            m.frame_primitives(last)[0].entity,
            m.entities.get("ball").unwrap()
        );
        assert_eq!(m.header.hints.instant_threshold, Some(0.1));
        assert_eq!(m.header.hints.default_max_level, Some(2));
        assert_eq!(m.time_range(), Some((0.0, 9.0)));
        // One log merges into itself; none into an empty log.
        assert_eq!(merge([game.clone()]), game);
        assert_eq!(merge(Vec::new()), Log::new());
    }

    #[test]
    fn disagreeing_threshold_hints_are_dropped() {
        let mut a = Log::new();
        a.header.hints.instant_threshold = Some(0.1);
        let mut b = Log::new();
        b.header.hints.instant_threshold = Some(0.5);
        assert_eq!(merge([a, b]).header.hints.instant_threshold, None);
    }
}
