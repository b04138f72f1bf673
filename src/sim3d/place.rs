//! What each agent saw, placed in the world and drawn as a visualization
//! log: one instantaneous frame per vision message, at its simulation time.
//!
//! For each `See` the camera's pose is found ([`pose`]); each
//! detection's camera-frame point is then carried into the field frame.
//! Drawn, per agent (entities `agents/<team>/<n>/<kind>`, each also under
//! `kinds/<kind>`, so one agent or one kind of every agent can be chosen):
//!
//! | level | kind | what |
//! |---|---|---|
//! | 0 | `pose` | the camera's place on the floor and its view direction |
//! | 0 | `ball` | the ball where the agent saw it (on the floor; in the air also at its height) |
//! | 1 | `view` | the view footprint: the 120° × 120° frustum cut by the floor, clipped to the pitch |
//! | 1 | `robots` | each robot seen, at the mean of its seen parts, with team and number |
//! | 2 | `markers`, `lines` | field markers and field lines where the agent saw them |
//! | 2 | `errors` | with a monitor log: from each seen object to where it really was |
//! | 3 | `uncertainty` | 2σ ellipses of SimSpark's vision noise for each detection |
//! | 3 | `pose` | how the pose was found and its residual |
//! | 3 | `heard` | messages heard, in the direction they came from |
//!
//! SimSpark's noise model: distance σ = 0.0965 × d / 100, azimuth σ =
//! 0.1480°, inclination σ = 0.1225°. (The seed document gives these as
//! variances and names the angles the other way round; SimSpark's own
//! source uses them as standard deviations, the larger for the horizontal
//! angle.)

use std::collections::HashMap;

use crate::geom::Vec2;
use crate::log::{EntityId, FrameTime, Log, MarkerKind, Primitive, Raised, Rgba, Shape, Style, TimeUnit};

use super::field::FieldGeometry;
use super::monitor::MonitorLog;
use super::perception::{Perception, PerceptionLog, Polar, See};
use crate::geom::mat3::mul as mat_mul;
use crate::geom::vec3::{self, Vec3};

use super::pose::{self, Correspondence, Head, Pose, PoseSource, quat_to_mat, rot_y, rot_z};

/// A ball seen higher than this many radii (its centre) is in the air.
const AIRBORNE: f64 = 2.5;

/// SimSpark's vision noise: σ of distance per metre, of azimuth and of
/// inclination in degrees.
pub const SIGMA_DISTANCE_PER_M: f64 = 0.0965 / 100.0;
pub const SIGMA_AZIMUTH_DEG: f64 = 0.1480;
pub const SIGMA_INCLINATION_DEG: f64 = 0.1225;

/// Half the field of view, degrees, both ways.
pub const HALF_FOV_DEG: f64 = 60.0;

/// Who the agent is and what to place it with.
#[derive(Clone, Debug, Default)]
pub struct PlaceOptions {
    /// The agent's team and number; found from the log (SimSpark's `GS`)
    /// or by matching its torso to the monitor log's robots when `None`.
    pub agent: Option<(String, u32)>,
    /// The pitch; the monitor log's, else the default of the markers'
    /// naming scheme.
    pub geometry: Option<FieldGeometry>,
}

/// A robot seen, placed.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenRobot {
    pub team: String,
    pub unum: u32,
    /// Mean of the seen parts' world positions.
    pub position: Vec3,
    /// Each seen part's world position and detection.
    pub parts: Vec<(Vec3, Polar)>,
}

/// One vision message, placed in the world.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub time: f64,
    pub pose: Pose,
    pub source: PoseSource,
    pub ball: Option<(Vec3, Polar)>,
    pub robots: Vec<SeenRobot>,
    /// Marker name, where it was seen, where it is, detection.
    pub markers: Vec<(String, Vec3, Vec3, Polar)>,
    pub lines: Vec<[Vec3; 2]>,
}

/// Counts of how the poses were found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlaceStats {
    pub views: usize,
    pub by_markers: usize,
    pub by_body: usize,
    pub by_reported: usize,
    /// Vision messages with no pose (too few markers, nothing to fall back on).
    pub unplaced: usize,
    /// Median marker residual, metres.
    pub median_residual: Option<f64>,
    /// The head offsets fitted to this log and their RMS error, when
    /// there were frames to fit them to.
    pub head: Option<(Head, f64)>,
}

/// The agent's name, its views and how they were found.
#[derive(Clone, Debug)]
pub struct Placed {
    pub team: String,
    pub unum: Option<u32>,
    pub views: Vec<View>,
    pub stats: PlaceStats,
    pub geometry: FieldGeometry,
}

/// The pitch to place `log` on.
fn geometry_for(log: &PerceptionLog, monitor: Option<&MonitorLog>, opts: &PlaceOptions) -> FieldGeometry {
    if let Some(g) = opts.geometry {
        return g;
    }
    if let Some(m) = monitor {
        return m.geometry;
    }
    if log
        .markers
        .iter()
        .any(|m| FieldGeometry::is_simspark_marker(log.name(m.name)))
    {
        FieldGeometry::simspark()
    } else {
        FieldGeometry::default()
    }
}

/// Who the agent is: the options, SimSpark's `GS`, or the monitor robot
/// its torso coincides with.
fn identify(log: &PerceptionLog, monitor: Option<&MonitorLog>, opts: &PlaceOptions) -> (String, Option<u32>) {
    if let Some((team, unum)) = &opts.agent {
        return (team.clone(), Some(*unum));
    }
    if let Some(unum) = log.unum {
        let side = log.side.as_deref().unwrap_or("");
        let team = match side {
            "left" | "Left" => log.team_names[0].clone(),
            "right" | "Right" => log.team_names[1].clone(),
            _ => None,
        };
        return (team.unwrap_or_else(|| side.to_owned()), Some(unum));
    }
    if let Some(m) = monitor {
        let mut votes: HashMap<(u16, u32), usize> = HashMap::new();
        for p in log
            .messages
            .iter()
            .filter(|p| p.torso_pos.is_some())
            .step_by(25)
            .take(40)
        {
            let (Some(pos), Some(f)) = (p.torso_pos, m.frame_at(p.time)) else {
                continue;
            };
            if (f.time - p.time).abs() > 0.05 {
                continue;
            }
            let best = m
                .frame_robots(f)
                .iter()
                .min_by(|a, b| dist2(a.position(), pos).total_cmp(&dist2(b.position(), pos)));
            if let Some(r) = best
                && dist2(r.position(), pos) < 0.1 * 0.1
            {
                *votes.entry((r.team, r.unum)).or_default() += 1;
            }
        }
        if let Some(((team, unum), _)) = votes.into_iter().max_by_key(|&(k, n)| (n, std::cmp::Reverse(k))) {
            return (m.teams[team as usize].name.clone(), Some(unum));
        }
    }
    ("agent".to_owned(), None)
}

fn dist2(a: Vec3, b: Vec3) -> f64 {
    let d = vec3::sub(a, b);
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

/// The torso's pose from `pos`/`quat`.
fn torso(p: &Perception) -> Option<Pose> {
    Some(Pose {
        rotation: quat_to_mat(p.torso_quat?)?,
        position: p.torso_pos?,
    })
}

/// Head yaw and pitch in degrees (0 when the log has no head joints).
fn head_joints(log: &PerceptionLog, p: &Perception) -> (f64, f64) {
    let find = |names: [&str; 2]| names.iter().find_map(|n| log.joint(p, n)).unwrap_or(0.0);
    (find(["q_hj1", "hj1"]), find(["q_hj2", "hj2"]))
}

/// The marker pose of one vision message.
fn marker_pose(log: &PerceptionLog, see: &See, geometry: &FieldGeometry) -> Option<(Pose, PoseSource)> {
    let pairs: Vec<Correspondence> = log
        .see_markers(see)
        .iter()
        .filter_map(|m| {
            Some(Correspondence {
                camera: m.pol.to_camera(),
                world: geometry.marker(log.name(m.name))?,
                distance: m.pol.distance,
            })
        })
        .collect();
    pose::from_markers(&pairs)
}

/// Places every vision message of `log`.
pub fn place(log: &PerceptionLog, monitor: Option<&MonitorLog>, opts: &PlaceOptions) -> Placed {
    let geometry = geometry_for(log, monitor, opts);
    let (team, unum) = identify(log, monitor, opts);
    let seen: Vec<(&Perception, &See)> = log
        .messages
        .iter()
        .filter_map(|p| p.see.as_ref().map(|s| (p, s)))
        .collect();
    let marker_poses: Vec<Option<(Pose, PoseSource)>> =
        seen.iter().map(|(_, s)| marker_pose(log, s, &geometry)).collect();

    // Fit the head to the frames the markers localise well.
    let samples: Vec<(Pose, f64, f64, Pose)> = seen
        .iter()
        .zip(&marker_poses)
        .filter_map(|((p, _), mp)| {
            let (cam, PoseSource::Markers { used, residual, .. }) = (*mp)? else {
                return None;
            };
            let (yaw, pitch) = head_joints(log, p);
            (used >= 5 && residual < 0.05).then_some((torso(p)?, yaw, pitch, cam))
        })
        .collect();
    let fitted = Head::default().fit(&samples);
    let head = fitted.map_or_else(Head::default, |(h, _)| h);

    let mut stats = PlaceStats {
        head: fitted,
        ..PlaceStats::default()
    };
    let mut residuals = Vec::new();
    let mut views = Vec::with_capacity(seen.len());
    for ((p, see), mp) in seen.iter().zip(marker_poses) {
        stats.views += 1;
        let (yaw, pitch) = head_joints(log, p);
        let found = mp
            .or_else(|| torso(p).map(|t| (head.camera(&t, yaw, pitch), PoseSource::Body)))
            .or_else(|| {
                let pos = see.my_pos?;
                let heading = see.my_orien.unwrap_or(0.0).to_radians();
                let rotation = mat_mul(&rot_z(heading), &rot_y(pitch.to_radians()));
                Some((
                    Pose {
                        rotation,
                        position: pos,
                    },
                    PoseSource::Reported,
                ))
            });
        let Some((pose, source)) = found else {
            stats.unplaced += 1;
            continue;
        };
        match source {
            PoseSource::Markers { residual, .. } => {
                stats.by_markers += 1;
                residuals.push(residual);
            }
            PoseSource::Body => stats.by_body += 1,
            PoseSource::Reported => stats.by_reported += 1,
        }
        views.push(view(log, p, see, pose, source, &geometry));
    }
    residuals.sort_by(f64::total_cmp);
    stats.median_residual = residuals.get(residuals.len() / 2).copied();
    Placed {
        team,
        unum,
        views,
        stats,
        geometry,
    }
}

fn view(
    log: &PerceptionLog,
    p: &Perception,
    see: &See,
    pose: Pose,
    source: PoseSource,
    g: &FieldGeometry,
) -> View {
    let place = |pol: Polar| pose.to_world(pol.to_camera());
    let mut robots: Vec<SeenRobot> = Vec::new();
    for part in log.see_parts(see) {
        let team = log.name(part.team);
        let w = place(part.pol);
        match robots.iter_mut().find(|r| r.team == team && r.unum == part.unum) {
            Some(r) => r.parts.push((w, part.pol)),
            None => robots.push(SeenRobot {
                team: team.to_owned(),
                unum: part.unum,
                position: w,
                parts: vec![(w, part.pol)],
            }),
        }
    }
    for r in &mut robots {
        let n = r.parts.len() as f64;
        r.position = r
            .parts
            .iter()
            .fold([0.0; 3], |acc, (w, _)| vec3::add(acc, *w))
            .map(|v| v / n);
    }
    View {
        time: p.time,
        pose,
        source,
        ball: see.ball.map(|b| (place(b), b)),
        robots,
        markers: log
            .see_markers(see)
            .iter()
            .filter_map(|m| {
                let name = log.name(m.name);
                Some((name.to_owned(), place(m.pol), g.marker(name)?, m.pol))
            })
            .collect(),
        lines: log
            .see_lines(see)
            .iter()
            .map(|[a, b]| [place(*a), place(*b)])
            .collect(),
    }
}

/// The view footprint: where the frustum's edge meets the floor, at most
/// `range` metres away horizontally, clipped to the pitch and its
/// surroundings (`margin` metres).
pub fn footprint(pose: &Pose, g: &FieldGeometry, range: f64, margin: f64) -> Vec<Vec2> {
    const N: usize = 12;
    let h = HALF_FOV_DEG;
    let mut edge: Vec<(f64, f64)> = Vec::with_capacity(4 * N);
    for i in 0..N {
        let t = -h + 2.0 * h * i as f64 / N as f64;
        edge.push((t, -h)); // bottom, right to left
    }
    for i in 0..N {
        let t = -h + 2.0 * h * i as f64 / N as f64;
        edge.push((h, t)); // left side, upwards
    }
    for i in 0..N {
        let t = h - 2.0 * h * i as f64 / N as f64;
        edge.push((t, h)); // top, left to right
    }
    for i in 0..N {
        let t = h - 2.0 * h * i as f64 / N as f64;
        edge.push((-h, t)); // right side, downwards
    }
    let c = pose.position;
    let mut poly: Vec<Vec2> = Vec::with_capacity(edge.len());
    for (az, inc) in edge {
        let d = pose.direction(
            Polar {
                distance: 1.0,
                azimuth: az,
                inclination: inc,
            }
            .to_camera(),
        );
        let horizontal = d[0].hypot(d[1]);
        let p = if d[2] < -1e-9 && c[2] > 0.0 {
            let t = -c[2] / d[2];
            let reach = t * horizontal;
            if reach <= range {
                Vec2::new(c[0] + t * d[0], c[1] + t * d[1])
            } else {
                Vec2::new(c[0] + d[0] / horizontal * range, c[1] + d[1] / horizontal * range)
            }
        } else if horizontal > 1e-9 {
            Vec2::new(c[0] + d[0] / horizontal * range, c[1] + d[1] / horizontal * range)
        } else {
            continue;
        };
        poly.push(p);
    }
    let hx = g.length / 2.0 + margin;
    let hy = g.width / 2.0 + margin;
    clip_to_rect(&poly, -hx, hx, -hy, hy)
}

/// Sutherland–Hodgman clipping of a polygon to an axis-aligned rectangle.
fn clip_to_rect(poly: &[Vec2], x0: f64, x1: f64, y0: f64, y1: f64) -> Vec<Vec2> {
    let mut out = poly.to_vec();
    // Signed distance inside each edge: positive inside.
    type Inside = fn(Vec2, f64) -> f64;
    let edges: [(Inside, f64); 4] = [
        (|p, v| p.x - v, x0),
        (|p, v| v - p.x, x1),
        (|p, v| p.y - v, y0),
        (|p, v| v - p.y, y1),
    ];
    for (inside, v) in edges {
        if out.is_empty() {
            break;
        }
        let input = std::mem::take(&mut out);
        for i in 0..input.len() {
            let a = input[i];
            let b = input[(i + 1) % input.len()];
            let (da, db) = (inside(a, v), inside(b, v));
            if da >= 0.0 {
                out.push(a);
            }
            if (da >= 0.0) != (db >= 0.0) {
                out.push(a.lerp(b, da / (da - db)));
            }
        }
    }
    out
}

/// The 2σ ellipse, on the floor, of a detection placed through `pose`.
pub fn uncertainty(pose: &Pose, pol: Polar) -> Vec<Vec2> {
    let at = |d: f64, a: f64, i: f64| {
        pose.to_world(
            Polar {
                distance: d,
                azimuth: a,
                inclination: i,
            }
            .to_camera(),
        )
    };
    let centre = at(pol.distance, pol.azimuth, pol.inclination);
    let steps = [
        (SIGMA_DISTANCE_PER_M * pol.distance, 0.0, 0.0),
        (0.0, SIGMA_AZIMUTH_DEG, 0.0),
        (0.0, 0.0, SIGMA_INCLINATION_DEG),
    ];
    // Covariance of the floor position: Σ Jₖ Jₖᵀ, each column one σ step.
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (dd, da, di) in steps {
        let q = at(pol.distance + dd, pol.azimuth + da, pol.inclination + di);
        let (jx, jy) = (q[0] - centre[0], q[1] - centre[1]);
        sxx += jx * jx;
        sxy += jx * jy;
        syy += jy * jy;
    }
    let tr = sxx + syy;
    let det = sxx * syy - sxy * sxy;
    let disc = ((tr * tr / 4.0) - det).max(0.0).sqrt();
    let (l1, l2) = (tr / 2.0 + disc, (tr / 2.0 - disc).max(0.0));
    let angle = if sxy.abs() < 1e-300 && sxx >= syy {
        0.0
    } else {
        (l1 - sxx).atan2(sxy)
    };
    let (ra, rb) = (2.0 * l1.sqrt(), 2.0 * l2.sqrt());
    let (s, c) = angle.sin_cos();
    (0..24)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / 24.0;
            let (u, v) = (ra * t.cos(), rb * t.sin());
            Vec2::new(centre[0] + u * c - v * s, centre[1] + u * s + v * c)
        })
        .collect()
}

const KINDS: [&str; 9] = [
    "pose",
    "view",
    "ball",
    "robots",
    "markers",
    "lines",
    "errors",
    "uncertainty",
    "heard",
];

/// The entity of each kind for one agent, declared with both parents.
struct Entities {
    ids: [EntityId; KINDS.len()],
}

impl Entities {
    fn declare(log: &mut Log, team: &str, unum: Option<u32>) -> Self {
        let e = &mut log.entities;
        let agents = e.intern("agents");
        let team_id = e.intern(&format!("agents/{team}"));
        e.add_parent(team_id, agents);
        let agent_name = match unum {
            Some(n) => format!("agents/{team}/{n}"),
            None => format!("agents/{team}/?"),
        };
        let agent = e.intern(&agent_name);
        e.add_parent(agent, team_id);
        let kinds = e.intern("kinds");
        let ids = KINDS.map(|k| {
            let id = e.intern(&format!("{agent_name}/{k}"));
            let kind = e.intern(&format!("kinds/{k}"));
            e.add_parent(kind, kinds);
            e.add_parent(id, agent);
            e.add_parent(id, kind);
            id
        });
        Entities { ids }
    }

    fn of(&self, kind: &str) -> EntityId {
        let i = KINDS.iter().position(|k| *k == kind).unwrap_or(0);
        self.ids[i]
    }
}

const SELF: Rgba = Rgba::from_rgb(0xff40ff);
const BALL: Rgba = Rgba::from_rgb(0xff8000);
const MARKER: Rgba = Rgba::from_rgb(0x00e0ff);
const LINE: Rgba = Rgba::from_rgb(0xffff60);
const ERROR: Rgba = Rgba::from_rgb(0xff2020);
const OWN: Rgba = Rgba::from_rgb(0x40ff40);
const OTHER: Rgba = Rgba::from_rgb(0xff6060);
const NOISE: Rgba = Rgba(0xffffffa0);

/// The monitor time that shows the world an agent perceived at `now`.
///
/// rcssservermj truncates `now` to 0.01 s (and its clock, a sum of 0.02 s
/// steps, falls just short of round values), so a perception at `now` =
/// 27.03 is of 27.04 in the monitor log: the state is looked up half a
/// hundredth later, snapped to a monitor frame within 6 ms of that.
pub fn truth_time(m: &MonitorLog, now: f64) -> f64 {
    let t = now + 0.005;
    let i = m.frames.partition_point(|f| f.time <= t);
    let near = [i.checked_sub(1), Some(i)]
        .into_iter()
        .flatten()
        .filter_map(|i| m.frames.get(i))
        .map(|f| f.time)
        .min_by(|a, b| (a - t).abs().total_cmp(&(b - t).abs()));
    match near {
        Some(f) if (f - t).abs() <= 0.006 => f,
        _ => t,
    }
}

fn xy(v: Vec3) -> Vec2 {
    Vec2::new(v[0], v[1])
}

/// Draws the placed views of one agent as a log in metres on the
/// simulation clock, with errors against `monitor` when given.
pub fn to_log(placed: &Placed, log: &PerceptionLog, monitor: Option<&MonitorLog>) -> Log {
    let mut out = Log::new();
    out.header.name = match placed.unum {
        Some(n) => format!("{} {n}: what it saw", placed.team),
        None => format!("{}: what it saw", placed.team),
    };
    out.header.time_unit = TimeUnit::RelativeSeconds;
    out.header.world_unit = "m".to_owned();
    out.header.hints.default_max_level = Some(1);
    let g = &placed.geometry;
    out.header.hints.world_bounds = Some((
        Vec2::new(-g.length / 2.0 - 1.0, -g.width / 2.0 - 1.0),
        Vec2::new(g.length / 2.0 + 1.0, g.width / 2.0 + 1.0),
    ));
    let ents = Entities::declare(&mut out, &placed.team, placed.unum);
    let range = g.length.hypot(g.width);
    let heard_by_time: HashMap<u64, &Perception> = log
        .messages
        .iter()
        .filter(|m| !m.heard.is_empty())
        .map(|m| (m.time.to_bits(), m))
        .collect();
    for v in &placed.views {
        let mut prims: Vec<Primitive> = Vec::new();
        let mut push = |kind: &str, level: i32, shape: Shape, style: Style| {
            prims.push(Primitive {
                shape,
                style,
                entity: ents.of(kind),
                level,
            });
        };
        let me = xy(v.pose.position);
        let dir = v.pose.heading();
        push(
            "pose",
            0,
            Shape::Circle {
                center: me,
                radius: 0.3,
            },
            Style {
                thickness: 2.0,
                ..Style::color(SELF)
            },
        );
        push(
            "pose",
            0,
            Shape::Line {
                start: me,
                end: me + Vec2::new(dir.cos(), dir.sin()) * 0.9,
            },
            Style {
                thickness: 2.0,
                ..Style::color(SELF)
            },
        );
        let fp = footprint(&v.pose, g, range, 1.0);
        if fp.len() >= 3 {
            push(
                "view",
                1,
                Shape::Polygon {
                    vertices: fp.into_boxed_slice(),
                    closed: true,
                },
                Style {
                    fill: Some(Rgba(0xffffff30)),
                    thickness: 1.0,
                    ..Style::color(Rgba(0xffffffa0))
                },
            );
        }
        // Monitor frames come every 0.04 s or so; allow a few missing.
        const GAP: f64 = 0.2;
        let truth_t = monitor.map_or(v.time, |m| truth_time(m, v.time));
        if let Some((w, pol)) = v.ball {
            push(
                "ball",
                0,
                Shape::Circle {
                    center: xy(w),
                    radius: g.ball_radius.max(0.11),
                },
                Style {
                    fill: Some(BALL),
                    thickness: 1.0,
                    ..Style::color(BALL)
                },
            );
            push(
                "ball",
                0,
                Shape::Point {
                    position: xy(w),
                    kind: MarkerKind::Cross,
                    size: 9.0,
                },
                Style::color(BALL),
            );
            if w[2] > AIRBORNE * g.ball_radius {
                // In the air: the ball itself where it was seen, above its
                // place on the floor.
                push(
                    "ball",
                    0,
                    Shape::Raised(Box::new(Raised::Sphere {
                        center: w,
                        radius: g.ball_radius.max(0.05),
                    })),
                    Style {
                        fill: Some(BALL),
                        thickness: 1.0,
                        ..Style::color(BALL)
                    },
                );
            }
            if let Some(b) = monitor.and_then(|m| m.ball_at(truth_t, GAP)) {
                push(
                    "errors",
                    2,
                    Shape::Line {
                        start: xy(w),
                        end: xy(b),
                    },
                    Style {
                        thickness: 2.0,
                        ..Style::color(ERROR)
                    },
                );
            }
            push(
                "uncertainty",
                3,
                Shape::Polygon {
                    vertices: uncertainty(&v.pose, pol).into_boxed_slice(),
                    closed: true,
                },
                Style::color(NOISE),
            );
        }
        for r in &v.robots {
            let colour = if r.team == placed.team { OWN } else { OTHER };
            push(
                "robots",
                1,
                Shape::Circle {
                    center: xy(r.position),
                    radius: 0.25,
                },
                Style {
                    thickness: 2.0,
                    ..Style::color(colour)
                },
            );
            push(
                "robots",
                1,
                Shape::Text {
                    anchor: xy(r.position) + Vec2::new(0.3, 0.3),
                    text: format!("{} {}", r.team, r.unum).into(),
                    size: 12.0,
                },
                Style::color(colour),
            );
            if let Some(m) = monitor
                && let Some(team) = m.team_index(&r.team)
                && let Some(real) = m.robot_at(team, r.unum, truth_t, GAP)
            {
                push(
                    "errors",
                    2,
                    Shape::Line {
                        start: xy(r.position),
                        end: xy(real),
                    },
                    Style {
                        thickness: 2.0,
                        ..Style::color(ERROR)
                    },
                );
            }
            for (_, pol) in &r.parts {
                push(
                    "uncertainty",
                    3,
                    Shape::Polygon {
                        vertices: uncertainty(&v.pose, *pol).into_boxed_slice(),
                        closed: true,
                    },
                    Style::color(NOISE),
                );
            }
        }
        for (_, seen, real, pol) in &v.markers {
            push(
                "markers",
                2,
                Shape::Point {
                    position: xy(*seen),
                    kind: MarkerKind::Cross,
                    size: 7.0,
                },
                Style::color(MARKER),
            );
            push(
                "errors",
                2,
                Shape::Line {
                    start: xy(*seen),
                    end: xy(*real),
                },
                Style {
                    thickness: 1.0,
                    ..Style::color(ERROR)
                },
            );
            push(
                "uncertainty",
                3,
                Shape::Polygon {
                    vertices: uncertainty(&v.pose, *pol).into_boxed_slice(),
                    closed: true,
                },
                Style::color(NOISE),
            );
        }
        for [a, b] in &v.lines {
            push(
                "lines",
                2,
                Shape::Line {
                    start: xy(*a),
                    end: xy(*b),
                },
                Style {
                    thickness: 2.0,
                    ..Style::color(LINE)
                },
            );
        }
        let how = match v.source {
            PoseSource::Markers {
                used,
                rejected,
                residual,
            } => {
                format!(
                    "markers {used} (+{rejected} left out), residual {:.3} m",
                    residual
                )
            }
            PoseSource::Body => "torso and head joints".to_owned(),
            PoseSource::Reported => "mypos/myorien".to_owned(),
        };
        push(
            "pose",
            3,
            Shape::Text {
                anchor: me + Vec2::new(0.4, -0.6),
                text: how.into(),
                size: 11.0,
            },
            Style::color(SELF),
        );
        if let Some(m) = heard_by_time.get(&v.time.to_bits()) {
            for h in log.message_heard(m) {
                let (end, text) = match h.direction {
                    Some(d) => {
                        let a = dir + d.to_radians();
                        (me + Vec2::new(a.cos(), a.sin()) * 2.0, h.text.clone())
                    }
                    None => (me + Vec2::new(0.0, 0.8), format!("said {}", h.text)),
                };
                push(
                    "heard",
                    3,
                    Shape::Line { start: me, end },
                    Style {
                        thickness: 1.0,
                        ..Style::color(Rgba::WHITE)
                    },
                );
                push(
                    "heard",
                    3,
                    Shape::Text {
                        anchor: end,
                        text: text.into(),
                        size: 11.0,
                    },
                    Style::color(Rgba::WHITE),
                );
            }
        }
        out.push_frame(FrameTime::Instant(v.time), prims);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprint_of_a_camera_looking_down_the_field() {
        let g = FieldGeometry::default();
        let pose = Pose {
            rotation: rot_y(20f64.to_radians()),
            position: [0.0, 0.0, 1.0],
        };
        let fp = footprint(&pose, &g, 100.0, 0.0);
        assert!(fp.len() >= 20, "{}", fp.len());
        // Straight ahead and 60° below the view: 80° below the horizon at 1 m.
        let ahead = fp
            .iter()
            .filter(|p| p.y.abs() < 1e-9)
            .map(|p| p.x)
            .fold(f64::INFINITY, f64::min);
        assert!((ahead - 1.0 / 80f64.to_radians().tan()).abs() < 1e-9, "{ahead}");
        let max_x = fp.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
        assert!((max_x - 27.5).abs() < 1e-9, "clipped at the goal line: {max_x}");
        assert!(fp.iter().all(|p| p.y.abs() <= 18.0 + 1e-9));
    }

    #[test]
    fn clipping_keeps_the_inside() {
        let sq = [
            Vec2::new(-2.0, -2.0),
            Vec2::new(2.0, -2.0),
            Vec2::new(2.0, 2.0),
            Vec2::new(-2.0, 2.0),
        ];
        let c = clip_to_rect(&sq, -1.0, 1.0, -1.0, 3.0);
        assert_eq!(c.len(), 4);
        assert!(c.iter().all(|p| p.x.abs() <= 1.0 && p.y >= -1.0 && p.y <= 2.0));
        assert!(clip_to_rect(&sq, 5.0, 6.0, 5.0, 6.0).is_empty());
    }

    #[test]
    fn uncertainty_grows_with_distance_and_is_wider_across() {
        let pose = Pose {
            rotation: crate::geom::mat3::IDENTITY,
            position: [0.0, 0.0, 0.5],
        };
        let extent = |d: f64| {
            let e = uncertainty(
                &pose,
                Polar {
                    distance: d,
                    azimuth: 0.0,
                    inclination: -(0.5 / d).asin().to_degrees(),
                },
            );
            let w = e.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max);
            let l = e.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max) - d;
            (w, l)
        };
        let (w10, _) = extent(10.0);
        let (w20, _) = extent(20.0);
        // Across: 2σ of 0.148° at the distance.
        assert!(
            (w10 - 2.0 * 10.0 * SIGMA_AZIMUTH_DEG.to_radians()).abs() < 1e-3,
            "{w10}"
        );
        assert!((w20 / w10 - 2.0).abs() < 0.01);
    }
}
