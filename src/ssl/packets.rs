//! The league's packets as underlay uses them: vision (camera detections,
//! field geometry, camera models), the referee's state and the tracker's
//! world, decoded from their protobuf payloads and converted out of the
//! wire types in this one place.
//!
//! Units are made uniform here: positions in millimetres (the tracker's
//! metres are scaled), velocities in mm/s, angles in radians, durations in
//! seconds, and timestamps in seconds since the Unix epoch. What a packet
//! needs and lacks (a camera frame without a camera id, a robot without a
//! position) or holds as NaN is left out, and counted in [`Dropped`] so
//! the caller can warn once. [`Vision::encode`] and [`Tracked::encode`] go
//! the other way, for writing game logs (tests, the demo).
//!
//! Referee packets carry game events ([`super::events`]), which name the
//! teams defined here: the two files name each other.

use prost::Message as _;

use super::events::GameEvent;
use super::wire as pb;
use crate::geom::Vec2;

/// A team's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Team {
    Yellow,
    Blue,
}

impl Team {
    /// `yellow` or `blue`.
    pub fn name(self) -> &'static str {
        match self {
            Team::Yellow => "yellow",
            Team::Blue => "blue",
        }
    }

    /// The team of the league's team number (1 yellow, 2 blue).
    pub fn from_wire(v: i32) -> Option<Team> {
        match v {
            1 => Some(Team::Yellow),
            2 => Some(Team::Blue),
            _ => None,
        }
    }

    /// The league's team number (1 yellow, 2 blue).
    pub fn to_wire(self) -> i32 {
        match self {
            Team::Yellow => 1,
            Team::Blue => 2,
        }
    }
}

/// Parts of packets left out because they were unusable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Robots or balls without a finite position.
    pub objects: u32,
    /// Field lines or arcs with a non-finite or negative size.
    pub markings: u32,
}

impl Dropped {
    pub fn is_empty(&self) -> bool {
        *self == Dropped::default()
    }
}

// ---------------------------------------------------------------- vision

/// What one camera saw in one picture.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraFrame {
    pub camera_id: u32,
    pub frame_number: u32,
    /// Capture time (seconds) on the vision system's clock: a Unix time
    /// from ssl-vision, the simulated time from simulators.
    pub t_capture: f64,
    /// When the vision system sent the packet (same clock).
    pub t_sent: f64,
    pub balls: Vec<BallSeen>,
    pub robots: Vec<RobotSeen>,
}

/// A ball in one camera's picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallSeen {
    pub pos: Vec2,
    /// Height (mm) when the source knows it (simulators).
    pub z: Option<f64>,
    pub confidence: f64,
}

/// A robot in one camera's picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotSeen {
    pub team: Team,
    /// The pattern's id; `None` when the pattern was not recognised.
    pub id: Option<u32>,
    pub pos: Vec2,
    /// Radians, counter-clockwise from the x axis, when recognised.
    pub orientation: Option<f64>,
    pub confidence: f64,
}

/// One vision packet: detections, geometry or both.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vision {
    pub detection: Option<CameraFrame>,
    pub geometry: Option<Geometry>,
}

/// The field and the cameras, as the vision system describes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub field: FieldGeometry,
    pub cameras: Vec<CameraModel>,
}

/// The field's size and markings, millimetres.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldGeometry {
    /// Between the goal lines.
    pub length: f64,
    /// Between the touch lines.
    pub width: f64,
    pub goal_width: f64,
    pub goal_depth: f64,
    /// From the touch lines to the walls.
    pub boundary: f64,
    pub penalty_area_depth: Option<f64>,
    pub penalty_area_width: Option<f64>,
    pub center_circle_radius: Option<f64>,
    pub line_thickness: Option<f64>,
    pub ball_radius: Option<f64>,
    pub max_robot_radius: Option<f64>,
    /// Straight markings (centre of the painted line).
    pub lines: Vec<FieldLine>,
    /// Circular markings.
    pub arcs: Vec<FieldArc>,
}

/// A straight field marking.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldLine {
    pub name: String,
    pub p1: Vec2,
    pub p2: Vec2,
    pub thickness: f64,
}

/// A circular field marking from angle `a1` to `a2` (radians,
/// counter-clockwise).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldArc {
    pub name: String,
    pub center: Vec2,
    pub radius: f64,
    pub a1: f64,
    pub a2: f64,
    pub thickness: f64,
}

/// ssl-vision's model of one camera: pinhole with one focal length, one
/// radial distortion coefficient, and the pose field → camera. See
/// [`super::camera`] for the projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraModel {
    pub camera_id: u32,
    /// Pixels.
    pub focal_length: f64,
    /// Pixels.
    pub principal_point: Vec2,
    /// The radial coefficient (normalised by the focal length).
    pub distortion: f64,
    /// Rotation field → camera as a quaternion `[x, y, z, w]` (the wire's
    /// q0, q1, q2, q3).
    pub rotation: [f64; 4],
    /// Translation field → camera, millimetres.
    pub translation: [f64; 3],
    /// The camera's position on the field, as the vision system worked it
    /// out (mm), when sent.
    pub derived_position: Option<[f64; 3]>,
    /// `[width, height]` in pixels, when sent.
    pub image_size: Option<[u32; 2]>,
}

fn finite(v: Option<f32>) -> Option<f64> {
    v.map(f64::from).filter(|v| v.is_finite())
}

fn point(x: Option<f32>, y: Option<f32>) -> Option<Vec2> {
    Some(Vec2::new(finite(x)?, finite(y)?))
}

impl CameraFrame {
    fn from_wire(f: pb::CameraFrame, dropped: &mut Dropped) -> Option<CameraFrame> {
        let camera_id = f.camera_id?;
        let balls: Vec<BallSeen> = f
            .balls
            .iter()
            .filter_map(|b| {
                let ball = point(b.x, b.y).map(|pos| BallSeen {
                    pos,
                    z: finite(b.z),
                    confidence: finite(b.confidence).unwrap_or(0.0).clamp(0.0, 1.0),
                });
                dropped.objects += u32::from(ball.is_none());
                ball
            })
            .collect();
        let teams = [(Team::Yellow, &f.robots_yellow), (Team::Blue, &f.robots_blue)];
        let mut robots = Vec::with_capacity(f.robots_yellow.len() + f.robots_blue.len());
        for (team, list) in teams {
            for r in list {
                match point(r.x, r.y) {
                    Some(pos) => robots.push(RobotSeen {
                        team,
                        id: r.robot_id,
                        pos,
                        orientation: finite(r.orientation),
                        confidence: finite(r.confidence).unwrap_or(0.0).clamp(0.0, 1.0),
                    }),
                    None => dropped.objects += 1,
                }
            }
        }
        Some(CameraFrame {
            camera_id,
            frame_number: f.frame_number.unwrap_or(0),
            t_capture: f.t_capture.unwrap_or(f64::NAN),
            t_sent: f.t_sent.unwrap_or(f64::NAN),
            balls,
            robots,
        })
    }
}

impl CameraModel {
    fn from_wire(c: &pb::CameraModel) -> Option<CameraModel> {
        let size = match (c.pixel_image_width, c.pixel_image_height) {
            (Some(w), Some(h)) if w > 0 && h > 0 => Some([w, h]),
            _ => None,
        };
        let derived = match (
            finite(c.derived_camera_world_tx),
            finite(c.derived_camera_world_ty),
            finite(c.derived_camera_world_tz),
        ) {
            (Some(x), Some(y), Some(z)) => Some([x, y, z]),
            _ => None,
        };
        Some(CameraModel {
            camera_id: c.camera_id?,
            focal_length: finite(c.focal_length)?,
            principal_point: point(c.principal_point_x, c.principal_point_y)?,
            distortion: finite(c.distortion).unwrap_or(0.0),
            rotation: [finite(c.q0)?, finite(c.q1)?, finite(c.q2)?, finite(c.q3)?],
            translation: [finite(c.tx)?, finite(c.ty)?, finite(c.tz)?],
            derived_position: derived,
            image_size: size,
        })
    }
}

/// A size field: finite and not negative.
fn size(v: Option<i32>) -> Option<f64> {
    v.filter(|&v| v >= 0).map(f64::from)
}

fn size_f(v: Option<f32>) -> Option<f64> {
    finite(v).filter(|&v| v >= 0.0)
}

impl FieldGeometry {
    fn from_wire(f: &pb::FieldSize, dropped: &mut Dropped) -> Option<FieldGeometry> {
        let mut lines = Vec::with_capacity(f.field_lines.len());
        for l in &f.field_lines {
            let line = (|| {
                Some(FieldLine {
                    name: l.name.clone().unwrap_or_default(),
                    p1: point(l.p1.as_ref()?.x, l.p1.as_ref()?.y)?,
                    p2: point(l.p2.as_ref()?.x, l.p2.as_ref()?.y)?,
                    thickness: size_f(l.thickness).unwrap_or(0.0),
                })
            })();
            match line {
                Some(line) => lines.push(line),
                None => dropped.markings += 1,
            }
        }
        let mut arcs = Vec::with_capacity(f.field_arcs.len());
        for a in &f.field_arcs {
            let arc = (|| {
                Some(FieldArc {
                    name: a.name.clone().unwrap_or_default(),
                    center: point(a.center.as_ref()?.x, a.center.as_ref()?.y)?,
                    radius: size_f(a.radius)?,
                    a1: finite(a.a1)?,
                    a2: finite(a.a2)?,
                    thickness: size_f(a.thickness).unwrap_or(0.0),
                })
            })();
            match arc {
                Some(arc) => arcs.push(arc),
                None => dropped.markings += 1,
            }
        }
        Some(FieldGeometry {
            length: size(f.field_length).filter(|&v| v > 0.0)?,
            width: size(f.field_width).filter(|&v| v > 0.0)?,
            goal_width: size(f.goal_width).unwrap_or(0.0),
            goal_depth: size(f.goal_depth).unwrap_or(0.0),
            boundary: size(f.boundary_width).unwrap_or(0.0),
            penalty_area_depth: size(f.penalty_area_depth),
            penalty_area_width: size(f.penalty_area_width),
            center_circle_radius: size(f.center_circle_radius),
            line_thickness: size(f.line_thickness),
            ball_radius: size_f(f.ball_radius),
            max_robot_radius: size_f(f.max_robot_radius).filter(|&r| r > 0.0),
            lines,
            arcs,
        })
    }

    /// The field of a pre-2014 packet, which has sizes only: the markings
    /// are made from them. A defense area of that era is two quarter
    /// circles of `defense_radius` centred on the goal line at
    /// ±`defense_stretch`/2, joined by a straight line.
    fn from_legacy(f: &pb::LegacyFieldSize) -> Option<FieldGeometry> {
        let length = size(f.field_length).filter(|&v| v > 0.0)?;
        let width = size(f.field_width).filter(|&v| v > 0.0)?;
        let thickness = size(f.line_width).unwrap_or(10.0);
        let mut g = FieldGeometry {
            length,
            width,
            goal_width: size(f.goal_width).unwrap_or(0.0),
            goal_depth: size(f.goal_depth).unwrap_or(0.0),
            boundary: size(f.boundary_width).unwrap_or(0.0),
            penalty_area_depth: size(f.defense_radius),
            penalty_area_width: None,
            center_circle_radius: size(f.center_circle_radius),
            line_thickness: Some(thickness),
            ball_radius: None,
            max_robot_radius: None,
            lines: Vec::new(),
            arcs: Vec::new(),
        };
        g.add_outline_markings(thickness);
        let (Some(radius), Some(stretch)) = (size(f.defense_radius), size(f.defense_stretch)) else {
            return Some(g);
        };
        let (hl, hs) = (length / 2.0, stretch / 2.0);
        for (side, sign) in [("Left", -1.0), ("Right", 1.0)] {
            let x = sign * hl;
            g.lines.push(FieldLine {
                name: format!("{side}PenaltyStretch"),
                p1: Vec2::new(x - sign * radius, -hs),
                p2: Vec2::new(x - sign * radius, hs),
                thickness,
            });
            use std::f64::consts::{FRAC_PI_2, PI};
            // Quarter circles from the stretch's ends to the goal line.
            let (top, bottom) = if sign < 0.0 {
                ((0.0, FRAC_PI_2), (-FRAC_PI_2, 0.0))
            } else {
                ((FRAC_PI_2, PI), (PI, 1.5 * PI))
            };
            for (name, y, (a1, a2)) in [("Top", hs, top), ("Bottom", -hs, bottom)] {
                g.arcs.push(FieldArc {
                    name: format!("{side}Field{name}PenaltyArc"),
                    center: Vec2::new(x, y),
                    radius,
                    a1,
                    a2,
                    thickness,
                });
            }
        }
        Some(g)
    }

    /// The Division B field of the league's rules (9 × 6 m, walls 0.3 m
    /// beyond the lines, goals 1 m wide, penalty areas 1 × 2 m), its
    /// markings made from the sizes.
    pub fn division_b() -> FieldGeometry {
        let mut f = FieldGeometry {
            length: 9000.0,
            width: 6000.0,
            goal_width: 1000.0,
            goal_depth: 180.0,
            boundary: 300.0,
            penalty_area_depth: Some(1000.0),
            penalty_area_width: Some(2000.0),
            center_circle_radius: Some(500.0),
            line_thickness: Some(10.0),
            ball_radius: Some(21.5),
            max_robot_radius: Some(90.0),
            lines: Vec::new(),
            arcs: Vec::new(),
        };
        f.add_outline_markings(10.0);
        f.add_penalty_areas(10.0);
        f
    }

    /// Adds the markings every field has, made from its sizes: touch
    /// lines, goal lines, halfway line, centre line, centre circle.
    fn add_outline_markings(&mut self, thickness: f64) {
        let (hl, hw) = (self.length / 2.0, self.width / 2.0);
        let mut line = |name: &str, p1: (f64, f64), p2: (f64, f64)| {
            self.lines.push(FieldLine {
                name: name.to_owned(),
                p1: p1.into(),
                p2: p2.into(),
                thickness,
            });
        };
        line("TopTouchLine", (-hl, hw), (hl, hw));
        line("BottomTouchLine", (-hl, -hw), (hl, -hw));
        line("LeftGoalLine", (-hl, -hw), (-hl, hw));
        line("RightGoalLine", (hl, -hw), (hl, hw));
        line("HalfwayLine", (0.0, -hw), (0.0, hw));
        line("CenterLine", (-hl, 0.0), (hl, 0.0));
        if let Some(r) = self.center_circle_radius.filter(|&r| r > 0.0) {
            self.arcs.push(FieldArc {
                name: "CenterCircle".to_owned(),
                center: Vec2::ZERO,
                radius: r,
                a1: 0.0,
                a2: std::f64::consts::TAU,
                thickness,
            });
        }
    }

    /// Adds the penalty areas (rectangles against the goal lines) when
    /// their sizes are known.
    fn add_penalty_areas(&mut self, thickness: f64) {
        let (Some(depth), Some(width)) = (self.penalty_area_depth, self.penalty_area_width) else {
            return;
        };
        let (hl, hw) = (self.length / 2.0, width / 2.0);
        for (side, s) in [("Left", -1.0), ("Right", 1.0)] {
            let inner = s * (hl - depth);
            self.lines.push(FieldLine {
                name: format!("{side}PenaltyStretch"),
                p1: Vec2::new(inner, -hw),
                p2: Vec2::new(inner, hw),
                thickness,
            });
            for (edge, y) in [("Left", hw), ("Right", -hw)] {
                self.lines.push(FieldLine {
                    name: format!("{side}Field{edge}PenaltyStretch"),
                    p1: Vec2::new(s * hl, y),
                    p2: Vec2::new(inner, y),
                    thickness,
                });
            }
        }
    }
}

impl Geometry {
    fn from_wire(g: pb::Geometry, dropped: &mut Dropped) -> Option<Geometry> {
        let mut field = FieldGeometry::from_wire(g.field.as_ref()?, dropped)?;
        if field.lines.is_empty() && field.arcs.is_empty() {
            // Older vision systems sent sizes only.
            let t = field.line_thickness.unwrap_or(10.0);
            field.add_outline_markings(t);
            field.add_penalty_areas(t);
        }
        Some(Geometry {
            field,
            cameras: g.calib.iter().filter_map(CameraModel::from_wire).collect(),
        })
    }

    fn from_legacy(g: pb::LegacyGeometry) -> Option<Geometry> {
        Some(Geometry {
            field: FieldGeometry::from_legacy(g.field.as_ref()?)?,
            cameras: g.calib.iter().filter_map(CameraModel::from_wire).collect(),
        })
    }
}

impl Vision {
    /// Decodes a vision packet (log message type 4).
    pub fn decode(payload: &[u8], dropped: &mut Dropped) -> Result<Vision, prost::DecodeError> {
        let p = pb::VisionPacket::decode(payload)?;
        Ok(Vision {
            detection: p.detection.and_then(|d| CameraFrame::from_wire(d, dropped)),
            geometry: p.geometry.and_then(|g| Geometry::from_wire(g, dropped)),
        })
    }

    /// Whether the packet carries what a vision packet is for (a camera's
    /// detections or the geometry). Anything decodes as an empty message:
    /// a datagram off the network that carries neither is not one.
    pub fn is_complete(&self) -> bool {
        self.detection.is_some() || self.geometry.is_some()
    }

    /// Decodes a pre-2014 vision packet (log message type 2).
    pub fn decode_legacy(payload: &[u8], dropped: &mut Dropped) -> Result<Vision, prost::DecodeError> {
        let p = pb::LegacyVisionPacket::decode(payload)?;
        Ok(Vision {
            detection: p.detection.and_then(|d| CameraFrame::from_wire(d, dropped)),
            geometry: p.geometry.and_then(Geometry::from_legacy),
        })
    }
}

// --------------------------------------------------------------- referee

/// The part of the match (the referee's "stage").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stage(pub i32);

impl Stage {
    /// A readable name, e.g. "first half"; unknown numbers as "stage N".
    pub fn describe(self) -> String {
        const NAMES: [&str; 14] = [
            "first half (pre)",
            "first half",
            "half time",
            "second half (pre)",
            "second half",
            "extra time break",
            "extra first half (pre)",
            "extra first half",
            "extra half time",
            "extra second half (pre)",
            "extra second half",
            "penalty shootout break",
            "penalty shootout",
            "post game",
        ];
        usize::try_from(self.0)
            .ok()
            .and_then(|i| NAMES.get(i))
            .map_or_else(|| format!("stage {}", self.0), |s| (*s).to_owned())
    }
}

/// What the referee tells the robots to do (the referee's "command").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Command(pub i32);

impl Command {
    pub const HALT: Command = Command(0);
    pub const STOP: Command = Command(1);

    /// A readable name, e.g. "direct free kick blue"; unknown numbers as
    /// "command N".
    pub fn describe(self) -> String {
        const NAMES: [&str; 18] = [
            "HALT",
            "STOP",
            "normal start",
            "force start",
            "prepare kickoff yellow",
            "prepare kickoff blue",
            "prepare penalty yellow",
            "prepare penalty blue",
            "direct free kick yellow",
            "direct free kick blue",
            "indirect free kick yellow",
            "indirect free kick blue",
            "timeout yellow",
            "timeout blue",
            "goal yellow",
            "goal blue",
            "ball placement yellow",
            "ball placement blue",
        ];
        usize::try_from(self.0)
            .ok()
            .and_then(|i| NAMES.get(i))
            .map_or_else(|| format!("command {}", self.0), |s| (*s).to_owned())
    }

    /// Ball placement by either team.
    pub fn is_placement(self) -> bool {
        matches!(self.0, 16 | 17)
    }

    /// A direct or indirect free kick for either team.
    pub fn is_free_kick(self) -> bool {
        matches!(self.0, 8..=11)
    }

    /// The team the command is for, if any.
    pub fn team(self) -> Option<Team> {
        match self.0 {
            4..=17 if self.0 % 2 == 0 => Some(Team::Yellow),
            4..=17 => Some(Team::Blue),
            _ => None,
        }
    }
}

/// One team as the referee sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TeamInfo {
    pub name: String,
    pub score: u32,
    pub red_cards: u32,
    /// Seconds left on each active yellow card.
    pub yellow_card_times: Vec<f64>,
    /// Yellow cards ever given.
    pub yellow_cards: u32,
    pub timeouts: u32,
    /// Seconds of timeout left.
    pub timeout_time: f64,
    pub goalkeeper: u32,
    pub foul_counter: Option<u32>,
    pub ball_placement_failures: Option<u32>,
    pub can_place_ball: Option<bool>,
    /// How many robots the team may have on the field.
    pub max_allowed_bots: Option<u32>,
}

impl TeamInfo {
    fn from_wire(t: Option<pb::TeamState>) -> TeamInfo {
        let t = t.unwrap_or_default();
        TeamInfo {
            name: t.name.unwrap_or_default(),
            score: t.score.unwrap_or(0),
            red_cards: t.red_cards.unwrap_or(0),
            yellow_card_times: t
                .yellow_card_times
                .iter()
                .map(|&us| f64::from(us) * 1e-6)
                .collect(),
            yellow_cards: t.yellow_cards.unwrap_or(0),
            timeouts: t.timeouts.unwrap_or(0),
            timeout_time: f64::from(t.timeout_time.unwrap_or(0)) * 1e-6,
            goalkeeper: t.goalkeeper.unwrap_or(0),
            foul_counter: t.foul_counter,
            ball_placement_failures: t.ball_placement_failures,
            can_place_ball: t.can_place_ball,
            max_allowed_bots: t.max_allowed_bots,
        }
    }
}

/// One referee packet: the game controller's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Referee {
    /// When the game controller sent it (s since the epoch, its clock).
    pub packet_time: Option<f64>,
    pub stage: Stage,
    /// Seconds left in the stage (negative when over), when it has a limit.
    pub stage_time_left: Option<f64>,
    pub command: Command,
    /// Commands issued since the game controller started.
    pub command_counter: u32,
    /// When the current command was issued (s since the epoch, the game
    /// controller's clock).
    pub command_time: Option<f64>,
    pub yellow: TeamInfo,
    pub blue: TeamInfo,
    /// The ball placement target or free kick spot (mm).
    pub designated_position: Option<Vec2>,
    pub blue_on_positive_half: Option<bool>,
    pub next_command: Option<Command>,
    /// The game events behind the current state.
    pub game_events: Vec<GameEvent>,
    /// Seconds left for the current action (free kick, placement, …).
    pub action_time_left: Option<f64>,
    pub status_message: Option<String>,
    pub source: Option<String>,
}

/// Microseconds since the epoch → seconds; 0 (unset) is `None`.
fn epoch_us(v: Option<u64>) -> Option<f64> {
    v.filter(|&v| v > 0).map(|v| v as f64 * 1e-6)
}

impl Referee {
    /// Whether the packet has the time the league's schema requires of
    /// every referee packet (when it was sent, microseconds since the
    /// epoch: a time after 2000): a datagram off the network without it
    /// is not one, though it decodes. (Its command's time may be 0 —
    /// before the first command of a match, as the game controller sends
    /// it — so it is not asked for: a third of the shared grSim match's
    /// referee packets have it 0.)
    pub fn is_complete(&self) -> bool {
        self.packet_time.is_some_and(|t| t > 946_684_800.0)
    }

    /// Decodes a referee packet (log message type 3). Game events that do
    /// not decode are left out and counted in `bad_events`.
    pub fn decode(payload: &[u8], bad_events: &mut u32) -> Result<Referee, prost::DecodeError> {
        let r = pb::RefereeState::decode(payload)?;
        let mut game_events = Vec::with_capacity(r.game_events.len());
        for e in &r.game_events {
            match GameEvent::decode(e) {
                Ok(e) => game_events.push(e),
                Err(_) => *bad_events += 1,
            }
        }
        Ok(Referee {
            packet_time: epoch_us(r.packet_timestamp),
            stage: Stage(r.stage.unwrap_or(0)),
            stage_time_left: r.stage_time_left.map(|us| us as f64 * 1e-6),
            command: Command(r.command.unwrap_or(0)),
            command_counter: r.command_counter.unwrap_or(0),
            command_time: epoch_us(r.command_timestamp),
            yellow: TeamInfo::from_wire(r.yellow),
            blue: TeamInfo::from_wire(r.blue),
            designated_position: r.designated_position.and_then(|p| point(p.x, p.y)),
            blue_on_positive_half: r.blue_team_on_positive_half,
            next_command: r.next_command.map(Command),
            game_events,
            action_time_left: r.current_action_time_remaining.map(|us| us as f64 * 1e-6),
            status_message: r.status_message.filter(|s| !s.is_empty()),
            source: r.source_identifier,
        })
    }

    /// Encodes the packet as the game controller sends it (log message
    /// type 3), for writing game logs.
    pub fn encode(&self) -> Vec<u8> {
        let us = |t: f64| (t * 1e6).round() as i64;
        let team = |t: &TeamInfo| pb::TeamState {
            name: Some(t.name.clone()),
            score: Some(t.score),
            red_cards: Some(t.red_cards),
            yellow_card_times: t.yellow_card_times.iter().map(|&s| us(s).max(0) as u32).collect(),
            yellow_cards: Some(t.yellow_cards),
            timeouts: Some(t.timeouts),
            timeout_time: Some(us(t.timeout_time).max(0) as u32),
            goalkeeper: Some(t.goalkeeper),
            foul_counter: t.foul_counter,
            ball_placement_failures: t.ball_placement_failures,
            can_place_ball: t.can_place_ball,
            max_allowed_bots: t.max_allowed_bots,
        };
        pb::RefereeState {
            packet_timestamp: self.packet_time.map(|t| us(t).max(0) as u64),
            stage: Some(self.stage.0),
            stage_time_left: self.stage_time_left.map(us),
            command: Some(self.command.0),
            command_counter: Some(self.command_counter),
            command_timestamp: self.command_time.map(|t| us(t).max(0) as u64),
            yellow: Some(team(&self.yellow)),
            blue: Some(team(&self.blue)),
            designated_position: self.designated_position.map(point_to_wire),
            blue_team_on_positive_half: self.blue_on_positive_half,
            next_command: self.next_command.map(|c| c.0),
            current_action_time_remaining: self.action_time_left.map(us),
            game_events: self.game_events.iter().map(GameEvent::encode).collect(),
            source_identifier: self.source.clone(),
            status_message: self.status_message.clone(),
        }
        .encode_to_vec()
    }

    /// The team info of `team`.
    pub fn team(&self, team: Team) -> &TeamInfo {
        match team {
            Team::Yellow => &self.yellow,
            Team::Blue => &self.blue,
        }
    }
}

// --------------------------------------------------------------- tracker

/// A tracked ball, millimetres and mm/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackedBall {
    pub pos: Vec2,
    pub z: f64,
    pub vel: Option<Vec2>,
    pub visibility: Option<f64>,
}

/// A tracked robot, millimetres and mm/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackedRobot {
    pub team: Team,
    pub id: u32,
    pub pos: Vec2,
    pub orientation: f64,
    pub vel: Option<Vec2>,
    pub angular_vel: Option<f64>,
    pub visibility: Option<f64>,
}

/// One tracker packet: the filtered state of the whole field.
#[derive(Clone, Debug, PartialEq)]
pub struct Tracked {
    /// The tracker's identity (stays the same while it runs).
    pub uuid: String,
    pub source_name: Option<String>,
    /// Seconds since the epoch, the tracker's clock.
    pub timestamp: Option<f64>,
    pub frame_number: u32,
    /// The first is the main ball.
    pub balls: Vec<TrackedBall>,
    pub robots: Vec<TrackedRobot>,
}

fn metres(p: Option<&pb::Point2>) -> Option<Vec2> {
    let p = p?;
    point(p.x, p.y).map(|v| v * 1000.0)
}

impl Tracked {
    /// Whether the packet has the tracker's identity and the frame's time
    /// the league's schema requires: a datagram off the network without
    /// them is not one, though it decodes.
    pub fn is_complete(&self) -> bool {
        !self.uuid.is_empty() && self.timestamp.is_some()
    }

    /// Decodes a tracker packet (log message type 5).
    pub fn decode(payload: &[u8], dropped: &mut Dropped) -> Result<Tracked, prost::DecodeError> {
        let p = pb::TrackerWrapperPacket::decode(payload)?;
        let f = p.tracked_frame.unwrap_or_default();
        let balls = f
            .balls
            .iter()
            .filter_map(|b| {
                let p = b.pos.as_ref();
                let ball = p.and_then(|p| {
                    Some(TrackedBall {
                        pos: point(p.x, p.y)? * 1000.0,
                        z: finite(p.z).unwrap_or(0.0) * 1000.0,
                        vel: b.vel.as_ref().and_then(|v| point(v.x, v.y)).map(|v| v * 1000.0),
                        visibility: finite(b.visibility),
                    })
                });
                dropped.objects += u32::from(ball.is_none());
                ball
            })
            .collect();
        let robots = f
            .robots
            .iter()
            .filter_map(|r| {
                let key = r.robot_id.as_ref();
                let robot = (|| {
                    Some(TrackedRobot {
                        team: Team::from_wire(key?.team?)?,
                        id: key?.id?,
                        pos: metres(r.pos.as_ref())?,
                        orientation: finite(r.orientation)?,
                        vel: metres(r.vel.as_ref()),
                        angular_vel: finite(r.vel_angular),
                        visibility: finite(r.visibility),
                    })
                })();
                dropped.objects += u32::from(robot.is_none());
                robot
            })
            .collect();
        Ok(Tracked {
            uuid: p.uuid.unwrap_or_default(),
            source_name: p.source_name.filter(|s| !s.is_empty()),
            timestamp: f.timestamp.filter(|t| t.is_finite()),
            frame_number: f.frame_number.unwrap_or(0),
            balls,
            robots,
        })
    }
}

// -------------------------------------------------------------- encoding

/// The wire's single precision; `Option` to fill optional fields.
fn f32_of(v: f64) -> Option<f32> {
    Some(v as f32)
}

fn point_to_wire(p: Vec2) -> pb::Point2 {
    pb::Point2 {
        x: f32_of(p.x),
        y: f32_of(p.y),
    }
}

impl Vision {
    /// Encodes the packet as the vision system sends it (log message
    /// type 4), for writing game logs.
    pub fn encode(&self) -> Vec<u8> {
        let detection = self.detection.as_ref().map(|f| {
            let robots = |team: Team| {
                f.robots
                    .iter()
                    .filter(|r| r.team == team)
                    .map(|r| pb::RobotSeen {
                        confidence: f32_of(r.confidence),
                        robot_id: r.id,
                        x: f32_of(r.pos.x),
                        y: f32_of(r.pos.y),
                        orientation: r.orientation.and_then(f32_of),
                    })
                    .collect()
            };
            pb::CameraFrame {
                frame_number: Some(f.frame_number),
                t_capture: Some(f.t_capture),
                t_sent: Some(f.t_sent),
                camera_id: Some(f.camera_id),
                balls: f
                    .balls
                    .iter()
                    .map(|b| pb::BallSeen {
                        confidence: f32_of(b.confidence),
                        x: f32_of(b.pos.x),
                        y: f32_of(b.pos.y),
                        z: b.z.and_then(f32_of),
                    })
                    .collect(),
                robots_yellow: robots(Team::Yellow),
                robots_blue: robots(Team::Blue),
            }
        });
        let geometry = self.geometry.as_ref().map(|g| {
            let f = &g.field;
            let int = |v: f64| Some(v.round() as i32);
            pb::Geometry {
                field: Some(pb::FieldSize {
                    field_length: int(f.length),
                    field_width: int(f.width),
                    goal_width: int(f.goal_width),
                    goal_depth: int(f.goal_depth),
                    boundary_width: int(f.boundary),
                    field_lines: f
                        .lines
                        .iter()
                        .map(|l| pb::FieldLine {
                            name: Some(l.name.clone()),
                            p1: Some(point_to_wire(l.p1)),
                            p2: Some(point_to_wire(l.p2)),
                            thickness: f32_of(l.thickness),
                        })
                        .collect(),
                    field_arcs: f
                        .arcs
                        .iter()
                        .map(|a| pb::FieldArc {
                            name: Some(a.name.clone()),
                            center: Some(point_to_wire(a.center)),
                            radius: f32_of(a.radius),
                            a1: f32_of(a.a1),
                            a2: f32_of(a.a2),
                            thickness: f32_of(a.thickness),
                        })
                        .collect(),
                    penalty_area_depth: f.penalty_area_depth.and_then(int),
                    penalty_area_width: f.penalty_area_width.and_then(int),
                    center_circle_radius: f.center_circle_radius.and_then(int),
                    line_thickness: f.line_thickness.and_then(int),
                    goal_center_to_penalty_mark: None,
                    ball_radius: f.ball_radius.and_then(f32_of),
                    max_robot_radius: f.max_robot_radius.and_then(f32_of),
                }),
                calib: g
                    .cameras
                    .iter()
                    .map(|c| pb::CameraModel {
                        camera_id: Some(c.camera_id),
                        focal_length: f32_of(c.focal_length),
                        principal_point_x: f32_of(c.principal_point.x),
                        principal_point_y: f32_of(c.principal_point.y),
                        distortion: f32_of(c.distortion),
                        q0: f32_of(c.rotation[0]),
                        q1: f32_of(c.rotation[1]),
                        q2: f32_of(c.rotation[2]),
                        q3: f32_of(c.rotation[3]),
                        tx: f32_of(c.translation[0]),
                        ty: f32_of(c.translation[1]),
                        tz: f32_of(c.translation[2]),
                        derived_camera_world_tx: c.derived_position.and_then(|p| f32_of(p[0])),
                        derived_camera_world_ty: c.derived_position.and_then(|p| f32_of(p[1])),
                        derived_camera_world_tz: c.derived_position.and_then(|p| f32_of(p[2])),
                        pixel_image_width: c.image_size.map(|s| s[0]),
                        pixel_image_height: c.image_size.map(|s| s[1]),
                    })
                    .collect(),
            }
        });
        pb::VisionPacket { detection, geometry }.encode_to_vec()
    }
}

/// Millimetres as the tracker's metres.
fn metres_to_wire(p: Vec2) -> pb::Point2 {
    point_to_wire(p * 0.001)
}

impl Tracked {
    /// Encodes the packet as a tracker sends it (log message type 5):
    /// positions and velocities in metres, for writing game logs and
    /// replaying a tracker (tests).
    pub fn encode(&self) -> Vec<u8> {
        let balls = self
            .balls
            .iter()
            .map(|b| {
                let point3 = |p: Vec2, z: f64| pb::Point3 {
                    x: f32_of(p.x * 0.001),
                    y: f32_of(p.y * 0.001),
                    z: f32_of(z * 0.001),
                };
                pb::TrackedBallState {
                    pos: Some(point3(b.pos, b.z)),
                    vel: b.vel.map(|v| point3(v, 0.0)),
                    visibility: b.visibility.and_then(f32_of),
                }
            })
            .collect();
        let robots = self
            .robots
            .iter()
            .map(|r| pb::TrackedRobotState {
                robot_id: Some(pb::RobotKey {
                    id: Some(r.id),
                    team: Some(r.team.to_wire()),
                }),
                pos: Some(metres_to_wire(r.pos)),
                orientation: f32_of(r.orientation),
                vel: r.vel.map(metres_to_wire),
                vel_angular: r.angular_vel.and_then(f32_of),
                visibility: r.visibility.and_then(f32_of),
            })
            .collect();
        pb::TrackerWrapperPacket {
            uuid: Some(self.uuid.clone()),
            source_name: self.source_name.clone(),
            tracked_frame: Some(pb::TrackedWorld {
                frame_number: Some(self.frame_number),
                timestamp: self.timestamp,
                balls,
                robots,
            }),
        }
        .encode_to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game controller's packet before the first command (its command's
    /// time 0) is a referee packet; bytes that decode with a small field 1
    /// are not.
    #[test]
    fn a_referee_packet_needs_its_own_time_only() {
        let packet = |sent: u64, command: u64| {
            pb::RefereeState {
                packet_timestamp: Some(sent),
                command_timestamp: Some(command),
                ..Default::default()
            }
            .encode_to_vec()
        };
        let mut bad = 0;
        let start = Referee::decode(&packet(1_795_853_646_605_000, 0), &mut bad).unwrap();
        assert!(start.is_complete() && start.command_time.is_none());
        let garbage = Referee::decode(&[0x08, 0x01], &mut bad).unwrap();
        assert!(!garbage.is_complete());
    }

    /// A tracker packet encoded (millimetres as the wire's metres) decodes
    /// to itself, to the wire's single precision.
    #[test]
    fn a_tracker_packet_encodes_in_metres_and_decodes_back() {
        let tracked = Tracked {
            uuid: "7f0c".to_owned(),
            source_name: Some("replayed".to_owned()),
            timestamp: Some(1_795_504_490.5),
            frame_number: 42,
            balls: vec![TrackedBall {
                pos: Vec2::new(1250.0, -375.0),
                z: 125.0,
                vel: Some(Vec2::new(2000.0, 500.0)),
                visibility: Some(1.0),
            }],
            robots: vec![TrackedRobot {
                team: Team::Blue,
                id: 2,
                pos: Vec2::new(-2500.0, 1200.0),
                orientation: 1.5,
                vel: Some(Vec2::new(-1000.0, 250.0)),
                angular_vel: Some(0.5),
                visibility: Some(0.75),
            }],
        };
        let wire = pb::TrackerWrapperPacket::decode(&tracked.encode()[..]).unwrap();
        let world = wire.tracked_frame.unwrap();
        let ball = world.balls[0].pos.unwrap();
        assert_eq!((ball.x, ball.y, ball.z), (Some(1.25), Some(-0.375), Some(0.125)));
        assert_eq!(world.robots[0].robot_id.unwrap().team, Some(2));
        let mut dropped = Dropped::default();
        let back = Tracked::decode(&tracked.encode(), &mut dropped).unwrap();
        assert!(dropped.is_empty() && back.is_complete());
        assert_eq!((back.uuid.as_str(), back.frame_number), ("7f0c", 42));
        assert_eq!(back.timestamp, tracked.timestamp);
        let close = |a: Vec2, b: Vec2| (a - b).length() < 1e-3;
        let (b, r) = (back.balls[0], back.robots[0]);
        assert!(close(b.pos, tracked.balls[0].pos) && (b.z - 125.0).abs() < 1e-3);
        assert!(close(b.vel.unwrap(), Vec2::new(2000.0, 500.0)));
        assert!(close(r.pos, tracked.robots[0].pos) && close(r.vel.unwrap(), Vec2::new(-1000.0, 250.0)));
        assert_eq!((r.team, r.id, r.visibility), (Team::Blue, 2, Some(0.75)));
    }
}
