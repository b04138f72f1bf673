//! The legend: the entities drawn at this time, each with the colour most
//! of its primitives have, and how many it draws.

use crate::time::LogTime;
use std::collections::BTreeMap;

use crate::log::{Log, Rgba};
use crate::select::{Filter, Index};

/// One entity of the legend.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub entity: String,
    pub color: Rgba,
    pub count: usize,
}

/// The entities drawn at log time `t` through `filter`, by name.
pub fn legend(log: &Log, index: &Index, filter: &Filter, t: LogTime, threshold: f64) -> Vec<Entry> {
    let mut by: BTreeMap<&str, BTreeMap<u32, usize>> = BTreeMap::new();
    for p in index.select(log, t, threshold, filter).iter() {
        *by.entry(log.entities.name(p.entity))
            .or_default()
            .entry(p.style.color.0)
            .or_default() += 1;
    }
    by.into_iter()
        .map(|(entity, colors)| {
            let count = colors.values().sum();
            // The most used colour; of equally used ones, the smallest value.
            let color = colors
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map_or(Rgba::WHITE, |(&c, _)| Rgba(c));
            Entry {
                entity: entity.to_owned(),
                color,
                count,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Vec2;
    use crate::log::{FrameTime, Primitive, Shape, Style};

    #[test]
    fn entities_with_their_main_colour() {
        let mut log = Log::new();
        let (a, b) = (log.entities.intern("robots"), log.entities.intern("ball"));
        let prim = |entity, color| Primitive {
            shape: Shape::Point {
                position: Vec2::new(0.0, 0.0),
                kind: Default::default(),
                size: 0.0,
            },
            style: Style::color(color),
            entity,
            level: 0,
        };
        let red = Rgba::from_rgb(0xff0000);
        let blue = Rgba::from_rgb(0x0000ff);
        log.push_frame(
            FrameTime::Instant(1.0),
            [prim(a, red), prim(a, red), prim(a, blue), prim(b, blue)],
        );
        log.push_frame(FrameTime::Instant(9.0), [prim(b, red)]);
        let index = Index::new(&log);
        let l = legend(
            &log,
            &index,
            &Filter::all(&log, i32::MAX),
            crate::time::LogTime(1.0),
            0.5,
        );
        assert_eq!(
            l,
            vec![
                Entry {
                    entity: "ball".into(),
                    color: blue,
                    count: 1
                },
                Entry {
                    entity: "robots".into(),
                    color: red,
                    count: 3
                },
            ]
        );
    }
}
