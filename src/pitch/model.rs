//! What a rendered match is made of, whatever league it comes from: the
//! field's painted marks, two teams, and snapshots of where every body and
//! the ball were at each moment of the game clock. The league readers
//! (2D game logs, 3D monitor logs, SSL game logs) fill a [`Match`]; the
//! renderer only reads it.
//!
//! Coordinates are underlay's world frame: x along the field, y to the
//! left of x (counter-clockwise), headings in radians counter-clockwise
//! from +x, in the field's own unit ([`Field::unit`]).

use crate::geom::Vec2;
use crate::log::Rgba;

/// A painted mark of the field, in world units.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    /// A straight line from `a` to `b`.
    Segment { a: Vec2, b: Vec2 },
    /// A circular arc (`sweep` ≥ 2π: the whole circle), counter-clockwise
    /// from `start` for a positive sweep.
    Arc {
        center: Vec2,
        radius: f64,
        start: f64,
        sweep: f64,
    },
    /// A filled spot (the centre and penalty marks).
    Spot { center: Vec2, radius: f64 },
}

/// A goal: the rectangle behind the goal line between the posts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Goal {
    /// The middle of the goal mouth, on the goal line.
    pub mouth: Vec2,
    /// Distance between the posts.
    pub width: f64,
    /// How far the goal reaches behind the line (its sign says which way).
    pub depth: f64,
}

/// The playing field: its extent, its marks and goals.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The world unit ("m", "mm").
    pub unit: String,
    /// Length of the field of play (along x), between the goal lines.
    pub length: f64,
    /// Width of the field of play (along y), between the touch lines.
    pub width: f64,
    /// Grass shown beyond the lines on every side.
    pub margin: f64,
    /// Width of the painted lines.
    pub line_width: f64,
    /// The painted marks.
    pub marks: Vec<Mark>,
    /// The goals.
    pub goals: Vec<Goal>,
}

impl Field {
    /// A football pitch of `length` × `width` centred on the origin, with
    /// the marks of the laws of the game scaled by `scale` (1 for metres),
    /// goals `goal_width` wide, and the given areas (`(depth, width)` of
    /// the penalty and goal areas; `None` leaves one out).
    pub fn football(
        unit: &str,
        length: f64,
        width: f64,
        goal_width: f64,
        penalty_area: Option<(f64, f64)>,
        goal_area: Option<(f64, f64)>,
        scale: f64,
    ) -> Field {
        let (hl, hw) = (length / 2.0, width / 2.0);
        let p = Vec2::new;
        let mut marks = Field::outline(length, width);
        marks.extend([
            Mark::Arc {
                center: Vec2::ZERO,
                radius: 9.15 * scale,
                start: 0.0,
                sweep: std::f64::consts::TAU,
            },
            Mark::Spot {
                center: Vec2::ZERO,
                radius: 0.2 * scale,
            },
        ]);
        for s in [-1.0, 1.0] {
            for (d, w) in [penalty_area, goal_area].into_iter().flatten() {
                let x0 = s * hl;
                let x1 = s * (hl - d);
                marks.push(Mark::Segment {
                    a: p(x0, -w / 2.0),
                    b: p(x1, -w / 2.0),
                });
                marks.push(Mark::Segment {
                    a: p(x1, -w / 2.0),
                    b: p(x1, w / 2.0),
                });
                marks.push(Mark::Segment {
                    a: p(x1, w / 2.0),
                    b: p(x0, w / 2.0),
                });
            }
            if penalty_area.is_some() {
                let spot = p(s * (hl - 11.0 * scale), 0.0);
                marks.push(Mark::Spot {
                    center: spot,
                    radius: 0.2 * scale,
                });
                // The arc outside the penalty area, 9.15 from the spot.
                if let Some((d, _)) = penalty_area {
                    let dx = (hl - d) - (hl - 11.0 * scale);
                    let r = 9.15 * scale;
                    if dx.abs() < r {
                        let half = (dx.abs() / r).acos();
                        let mid = if s > 0.0 { std::f64::consts::PI } else { 0.0 };
                        marks.push(Mark::Arc {
                            center: spot,
                            radius: r,
                            start: mid - half,
                            sweep: 2.0 * half,
                        });
                    }
                }
            }
            for t in [-1.0, 1.0] {
                // Corner arcs of 1 m, inside the field.
                let c = p(s * hl, t * hw);
                let start = match (s > 0.0, t > 0.0) {
                    (true, true) => std::f64::consts::PI,
                    (true, false) => std::f64::consts::FRAC_PI_2,
                    (false, true) => -std::f64::consts::FRAC_PI_2,
                    (false, false) => 0.0,
                };
                marks.push(Mark::Arc {
                    center: c,
                    radius: 1.0 * scale,
                    start,
                    sweep: std::f64::consts::FRAC_PI_2,
                });
            }
        }
        Field {
            unit: unit.to_owned(),
            length,
            width,
            margin: 5.0 * scale,
            line_width: 0.12 * scale,
            marks,
            goals: vec![
                Goal {
                    mouth: p(-hl, 0.0),
                    width: goal_width,
                    depth: -2.0 * scale,
                },
                Goal {
                    mouth: p(hl, 0.0),
                    width: goal_width,
                    depth: 2.0 * scale,
                },
            ],
        }
    }

    /// The four boundary lines of a `length` × `width` field centred on the
    /// origin, and the halfway line.
    pub fn outline(length: f64, width: f64) -> Vec<Mark> {
        let (hl, hw) = (length / 2.0, width / 2.0);
        let p = Vec2::new;
        let seg = |a, b| Mark::Segment { a, b };
        vec![
            seg(p(-hl, -hw), p(hl, -hw)),
            seg(p(hl, -hw), p(hl, hw)),
            seg(p(hl, hw), p(-hl, hw)),
            seg(p(-hl, hw), p(-hl, -hw)),
            seg(p(0.0, -hw), p(0.0, hw)),
        ]
    }

    /// The world rectangle worth showing: the field and its margin, as
    /// (min, max) corners.
    pub fn bounds(&self) -> (Vec2, Vec2) {
        let hx = self.length / 2.0 + self.margin;
        let hy = self.width / 2.0 + self.margin;
        (Vec2::new(-hx, -hy), Vec2::new(hx, hy))
    }
}

/// A team.
#[derive(Clone, Debug, PartialEq)]
pub struct Team {
    /// Its name ("HELIOS_A", "yellow", …); may be empty.
    pub name: String,
    /// Its colour.
    pub color: Rgba,
}

/// A card a player holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Card {
    #[default]
    None,
    Yellow,
    Red,
}

/// One player or robot at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Index into [`Match::teams`] (0 or 1).
    pub team: u8,
    /// Its number.
    pub number: u32,
    pub position: Vec2,
    /// Its real radius in world units (the renderer may draw it larger to
    /// keep it visible, and says so through the mask).
    pub radius: f64,
    /// Body direction, radians counter-clockwise from +x.
    pub heading: Option<f64>,
    /// Where it looks, when that differs from the heading (radians).
    pub gaze: Option<f64>,
    pub goalie: bool,
    pub card: Card,
    /// Drawn faded (a player sent off, a robot the vision lost).
    pub faded: bool,
}

/// Everything on the field at one moment of the game clock.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The game clock (log time) in seconds.
    pub clock: f64,
    pub bodies: Vec<Body>,
    /// The ball and its radius.
    pub ball: Option<(Vec2, f64)>,
    /// A line of text shown above the field (score, play mode, clock).
    pub caption: String,
}

/// A whole match ready to render.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// What it is (the file's name).
    pub name: String,
    pub field: Field,
    pub teams: [Team; 2],
    /// Snapshots in order; their clocks never decrease.
    pub snapshots: Vec<Snapshot>,
    /// How snapshots map to pictures.
    pub pace: Pace,
}

/// How the snapshots of a match are laid out in video time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// One picture per snapshot, this many seconds apart (a simulator's
    /// step: its stoppage steps are pictures too, though the clock stands).
    PerSnapshot { interval: f64 },
    /// Video time follows the clock from the first snapshot (recorded
    /// timestamps, irregular): pictures are taken at a fixed rate.
    Clock,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_football_pitch_has_its_marks_inside_its_bounds() {
        let f = Field::football(
            "m",
            105.0,
            68.0,
            14.02,
            Some((16.5, 40.32)),
            Some((5.5, 18.32)),
            1.0,
        );
        let (lo, hi) = f.bounds();
        assert_eq!((lo.x, hi.y), (-57.5, 39.0));
        // 5 lines + circle + spot, per side: 6 area lines, spot, arc, 2 corners.
        assert_eq!(f.marks.len(), 7 + 2 * (6 + 2 + 2));
        for m in &f.marks {
            let pts: Vec<Vec2> = match m {
                Mark::Segment { a, b } => vec![*a, *b],
                Mark::Arc { center, radius, .. } | Mark::Spot { center, radius } => {
                    vec![
                        *center + Vec2::new(*radius, 0.0),
                        *center - Vec2::new(*radius, 0.0),
                    ]
                }
            };
            for q in pts {
                assert!(q.x >= lo.x && q.x <= hi.x && q.y >= lo.y && q.y <= hi.y, "{m:?}");
            }
        }
        assert_eq!(f.goals.len(), 2);
    }
}
