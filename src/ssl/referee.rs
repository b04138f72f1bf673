//! Drawing the referee: its state (command and stage, score, cards, the
//! designated position, the next command and status message), each game
//! event, and the running timers, laid out in a row above the field and
//! one below it (text in world units, sized to fit between the field and
//! its walls; widths measured with the bundled font).
//!
//! Team names sit on the side of the half each team defends; a game event
//! is a ring at its location with its headline and fields beside it,
//! towards the field's centre (events without a location are stacked at
//! the top left).
//!
//! It draws with the conversion's colours and primitives
//! ([`super::vislog`]), which draws the referee's state through it: the two
//! files name each other.

use super::events::GameEvent;
use super::packets::{Command, Referee, Stage, Team, TeamInfo};
use super::vislog::{GREEN, RED, WHITE, prim, team_color, world_text};
use crate::draw::text::TextRenderer;
use crate::geom::Vec2;
use crate::log::{EntityId, MarkerKind, Primitive, Rgba, Shape, Style};

/// Where texts go: rows above and below the field.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    pub half_length: f64,
    pub half_width: f64,
    /// Text height (mm).
    pub size: f64,
    /// Baseline of the row above the field.
    pub top: f64,
    /// Baseline of the row below the field.
    pub bottom: f64,
}

impl Layout {
    /// The rows for a field `length × width` with walls `boundary` away.
    pub fn new(length: f64, width: f64, boundary: f64) -> Layout {
        let size = (boundary * 0.6).clamp(120.0, 250.0);
        let gap = ((boundary - size) / 2.0).max(20.0);
        Layout {
            half_length: length / 2.0,
            half_width: width / 2.0,
            size,
            top: width / 2.0 + gap,
            bottom: -width / 2.0 - gap - size,
        }
    }
}

/// The part of a referee packet that is drawn persistently: when it
/// changes, a new frame starts.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RefereeView {
    command: Command,
    stage: Stage,
    next: Option<Command>,
    yellow: TeamView,
    blue: TeamView,
    designated: Option<Vec2>,
    blue_on_positive_half: bool,
    status: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
struct TeamView {
    name: String,
    score: u32,
    yellow_cards: u32,
    active_yellow: usize,
    red_cards: u32,
    max_bots: Option<u32>,
}

impl TeamView {
    fn of(t: &TeamInfo) -> TeamView {
        TeamView {
            name: t.name.clone(),
            score: t.score,
            yellow_cards: t.yellow_cards,
            active_yellow: t.yellow_card_times.len(),
            red_cards: t.red_cards,
            max_bots: t.max_allowed_bots,
        }
    }
}

impl RefereeView {
    pub fn of(r: &Referee) -> RefereeView {
        // The game controller sends a designated position with every
        // command; it means something for placements and free kicks.
        let relevant = |c: Command| c.is_placement() || c.is_free_kick();
        let designated = r
            .designated_position
            .filter(|p| relevant(r.command) || r.next_command.is_some_and(relevant) || *p != Vec2::ZERO);
        RefereeView {
            command: r.command,
            stage: r.stage,
            next: r.next_command,
            yellow: TeamView::of(&r.yellow),
            blue: TeamView::of(&r.blue),
            designated,
            blue_on_positive_half: r.blue_on_positive_half.unwrap_or(false),
            status: r.status_message.clone(),
        }
    }
}

/// The entities of the referee's drawings.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entities {
    pub command: EntityId,
    pub score: EntityId,
    pub timers: EntityId,
    pub designated: EntityId,
}

/// Lays out and draws the referee's texts and markers.
pub(super) struct Drawer {
    pub layout: Layout,
    pub ents: Entities,
    text: TextRenderer,
}

impl Drawer {
    pub fn new(layout: Layout, ents: Entities) -> Drawer {
        Drawer {
            layout,
            ents,
            text: TextRenderer::new(),
        }
    }

    fn text_width(&self, text: &str, size: f64) -> f64 {
        self.text
            .measure(text, size)
            .map_or(0.6 * size * text.chars().count() as f64, |(w, _)| w)
    }

    /// The drawing of one referee state.
    pub fn view(&self, v: &RefereeView) -> Vec<Primitive> {
        let l = self.layout;
        let s = l.size;
        let mut out = Vec::new();
        let mut text = |anchor: Vec2, text: String, size: f64, color: Rgba, e: EntityId, level: i32| {
            out.push(prim(
                Shape::Text {
                    anchor,
                    text: text.into(),
                    size,
                },
                world_text(color),
                e,
                level,
            ));
        };
        let (cmd, score) = (self.ents.command, self.ents.score);
        let command = format!("{} · {}", v.command.describe(), v.stage.describe());
        let color = v.command.team().map_or(WHITE, team_color);
        text(Vec2::new(-l.half_length, l.top), command, s, color, cmd, 0);
        // Score in the middle, each team's name on the side of the half it defends.
        let mid = format!("{} : {}", v.yellow.score, v.blue.score);
        let mid_w = self.text_width(&mid, s);
        let gap = s * 0.5;
        let (left, right) = if v.blue_on_positive_half {
            ((Team::Yellow, &v.yellow), (Team::Blue, &v.blue))
        } else {
            ((Team::Blue, &v.blue), (Team::Yellow, &v.yellow))
        };
        let (mid, mid_at) = if v.blue_on_positive_half {
            (mid, -mid_w / 2.0)
        } else {
            (format!("{} : {}", v.blue.score, v.yellow.score), -mid_w / 2.0)
        };
        text(Vec2::new(mid_at, l.top), mid, s, WHITE, score, 0);
        let name = |t: &TeamView, team: Team| {
            if t.name.is_empty() {
                team.name().to_owned()
            } else {
                t.name.clone()
            }
        };
        let left_name = name(left.1, left.0);
        let w = self.text_width(&left_name, s);
        text(
            Vec2::new(mid_at - gap - w, l.top),
            left_name,
            s,
            team_color(left.0),
            score,
            0,
        );
        text(
            Vec2::new(-mid_at + gap, l.top),
            name(right.1, right.0),
            s,
            team_color(right.0),
            score,
            0,
        );
        // Cards, in the bottom corner of each team's half.
        let small = s * 0.8;
        for (i, (team, t)) in [left, right].into_iter().enumerate() {
            let mut cards = format!(
                "{} yellow card{}",
                t.yellow_cards,
                if t.yellow_cards == 1 { "" } else { "s" }
            );
            if t.active_yellow > 0 {
                cards.push_str(&format!(" ({} active)", t.active_yellow));
            }
            if t.red_cards > 0 {
                cards.push_str(&format!(", {} red", t.red_cards));
            }
            if let Some(m) = t.max_bots {
                cards.push_str(&format!(" · {m} robots allowed"));
            }
            let x = if i == 0 {
                -l.half_length
            } else {
                l.half_length - self.text_width(&cards, small)
            };
            text(Vec2::new(x, l.bottom), cards, small, team_color(team), score, 1);
        }
        let mut lines = Vec::new();
        if let Some(n) = v.next {
            lines.push(format!("next: {}", n.describe()));
        }
        if let Some(m) = &v.status {
            lines.push(m.clone());
        }
        if !lines.is_empty() {
            let line = lines.join(" · ");
            let w = self.text_width(&line, small);
            text(Vec2::new(-w / 2.0, l.bottom), line, small, WHITE, cmd, 1);
        }
        if let Some(p) = v.designated {
            let e = self.ents.designated;
            let style = Style {
                thickness: 2.5,
                ..Style::color(WHITE)
            };
            out.push(prim(
                Shape::Point {
                    position: p,
                    kind: MarkerKind::Cross,
                    size: 16.0,
                },
                style,
                e,
                0,
            ));
            out.push(prim(
                Shape::Circle {
                    center: p,
                    radius: 150.0,
                },
                style,
                e,
                0,
            ));
        }
        out
    }

    /// A game event's drawing, under entity `ent`; `unplaced` counts the
    /// events without a location before it in the same packet (their
    /// texts are stacked).
    pub fn event(&self, e: &GameEvent, ent: EntityId, unplaced: usize) -> Vec<Primitive> {
        let color = if e.kind.is_some_and(|k| k.name == "goal") {
            GREEN
        } else {
            RED
        };
        let l = self.layout;
        let size = l.size * 0.8;
        let headline = e.headline();
        let details = e.details();
        let mut out = Vec::new();
        let details_size = size * 0.8;
        let mut texts = vec![(headline, size, 1)];
        if !details.is_empty() {
            texts.push((details, details_size, 2));
        }
        // Beside the ring, towards the field's centre (each line starts,
        // or right of the centre ends, next to the ring); without a
        // location, stacked at the top left, the headline at level 0
        // since nothing else shows the event.
        let anchors: Vec<(Vec2, i32)> = match e.location() {
            Some(p) => {
                let style = Style {
                    thickness: 3.0,
                    ..Style::color(color)
                };
                out.push(prim(
                    Shape::Circle {
                        center: p,
                        radius: 300.0,
                    },
                    style,
                    ent,
                    0,
                ));
                out.push(prim(
                    Shape::Point {
                        position: p,
                        kind: MarkerKind::Cross,
                        size: 14.0,
                    },
                    style,
                    ent,
                    0,
                ));
                let gap = 330.0;
                let top = if p.y > 0.0 {
                    p.y - gap - size
                } else {
                    p.y + gap + details_size * 1.5
                };
                texts
                    .iter()
                    .enumerate()
                    .map(|(i, (text, tsize, level))| {
                        let width = self.text_width(text, *tsize);
                        let x = if p.x > 0.0 { p.x - gap - width } else { p.x + gap };
                        let y = top - i as f64 * size * 1.2;
                        let anchor = Vec2::new(
                            x.clamp(-l.half_length, (l.half_length - width).max(-l.half_length)),
                            y.clamp(l.bottom, l.top),
                        );
                        (anchor, *level)
                    })
                    .collect()
            }
            None => {
                let y = l.half_width - (unplaced as f64 + 1.0) * size * 2.6;
                (0..texts.len())
                    .map(|i| {
                        let anchor = Vec2::new(-l.half_length + 100.0, y - i as f64 * size * 1.2);
                        (anchor, if i == 0 { 0 } else { texts[i].2 })
                    })
                    .collect()
            }
        };
        for ((text, tsize, _), (anchor, level)) in texts.into_iter().zip(anchors) {
            out.push(prim(
                Shape::Text {
                    anchor,
                    text: text.into(),
                    size: tsize,
                },
                world_text(color),
                ent,
                level,
            ));
        }
        out
    }

    /// The timers' text in the row above the field, right-aligned.
    pub fn timers(&self, r: &Referee) -> Option<Primitive> {
        let text = timers_text(r)?;
        let size = self.layout.size * 0.8;
        let width = self.text_width(&text, size);
        let anchor = Vec2::new(self.layout.half_length - width, self.layout.top);
        Some(prim(
            Shape::Text {
                anchor,
                text: text.into(),
                size,
            },
            world_text(WHITE),
            self.ents.timers,
            1,
        ))
    }
}

/// "stage 4:35 · free kick 0:07 · yellow card blue 1:23", from the
/// latest referee packet.
pub fn timers_text(r: &Referee) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(s) = r.stage_time_left {
        parts.push(format!("stage {}", clock(s)));
    }
    if let Some(a) = r
        .action_time_left
        .filter(|_| r.command != Command::HALT && r.command != Command::STOP)
    {
        parts.push(format!("action {}", clock(a)));
    }
    for team in [Team::Yellow, Team::Blue] {
        for &left in &r.team(team).yellow_card_times {
            parts.push(format!("yellow card {} {}", team.name(), clock(left)));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// Seconds as `m:ss` (negative as `-m:ss`).
fn clock(seconds: f64) -> String {
    let s = seconds.abs().floor() as u64;
    let sign = if seconds < 0.0 && s > 0 { "-" } else { "" };
    format!("{sign}{}:{:02}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_formats_minutes_and_seconds() {
        assert_eq!(clock(276.6), "4:36");
        assert_eq!(clock(-61.0), "-1:01");
        assert_eq!(clock(-0.5), "0:00");
        assert_eq!(clock(f64::MAX), format!("{}:{:02}", u64::MAX / 60, u64::MAX % 60));
    }
}
