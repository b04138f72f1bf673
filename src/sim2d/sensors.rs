//! The 2D server's sensor and action models drawn from a game log, with
//! the log's own parameters (`../shared/seeds/rcssserver-vision-sensor-model.md`
//! and the server manual): what each player could sense and reach at
//! every record.
//!
//! | level | entity (`<team>/<unum>/…`, also under `models/…`) | drawing |
//! |---|---|---|
//! | 1 | `kickable` | kickable area (player size + kickable margin of its type); the goalie's catchable reach |
//! | 2 | `view` | view cone (body + neck, view width) out to `unum_far_length`, and the `visible_distance` circle |
//! | 2 | `identify` | arcs in the cone at `unum_far_length`, `unum_too_far_length`, `team_far_length`, `team_too_far_length` (within the pitch's reach) |
//! | 2 | `tackle` | the tackle area (`tackle_dist` ahead, `tackle_back_dist` behind, `tackle_width` across) |
//! | 2 | `focus` | the focus point (v18+), a line from the player |
//! | 2 | `stamina` | a bar under the player (stamina / `stamina_max`) |
//! | 2 | `state` | kicking, tackling, colliding, charged (foul) rings |
//! | 3 | `hearing` | the hearing range (`audio_cut_dist`) |
//! | 3 | `seen` | for the observer only ([`SensorOptions::observer`]): every ball or player it could see this record, named as the server would name it, and the set of positions consistent with what it reports (quantisation: an annular sector of the reported distance's preimage and ±0.5° of direction; the Gaussian model: a band of one standard deviation) |
//!
//! Play modes other than `play_on` become persistent frames (entity
//! `game/play_mode`, level 0, the mode's name at the top right) from the
//! record that set them to the next change: the timeline lists kick-offs,
//! goals, fouls, offsides and cards as events.
//!
//! Every record is one instantaneous frame at its clock.

use super::game::{Game, Player, PlayerType, ShowRecord, state};
use super::{Side, world, world_angle};
use crate::geom::Vec2;
use crate::geom::vec2::dir;
use crate::log::{
    DisplayHints, EntityId, FrameTime, Header, Log, Primitive, Rgba, Shape, Style, ThicknessUnit, TimeUnit,
};

/// Which player's sensing is drawn in detail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SensorOptions {
    /// The observer: its `seen` layer is drawn.
    pub observer: Option<(Side, u8)>,
}

/// Parses a player named as `l10`, `r3`, `left/10` or `right 3`.
pub fn parse_player(s: &str) -> Option<(Side, u8)> {
    let s = s.trim().to_ascii_lowercase();
    let (side, rest) = if let Some(r) = s.strip_prefix("left") {
        (Side::Left, r)
    } else if let Some(r) = s.strip_prefix("right") {
        (Side::Right, r)
    } else if let Some(r) = s.strip_prefix('l') {
        (Side::Left, r)
    } else if let Some(r) = s.strip_prefix('r') {
        (Side::Right, r)
    } else {
        return None;
    };
    let unum: u8 = rest.trim_start_matches(['/', ' ', '_', '-']).parse().ok()?;
    (1..=11).contains(&unum).then_some((side, unum))
}

/// The name of a team in entity names: its name in the game log, or
/// `left`/`right` when it has none or both teams share it.
pub fn team_key(game: &Game, side: Side) -> String {
    let [l, r] = &game.teams;
    let name = &game.teams[side.index()];
    if name.is_empty() || l == r || name.contains('/') {
        ["left", "right"][side.index()].to_owned()
    } else {
        name.clone()
    }
}

const MODELS: [&str; 10] = [
    "view", "kickable", "identify", "tackle", "focus", "stamina", "state", "hearing", "seen", "seen",
];

/// Entity ids of one player's models, in [`MODELS`] order.
struct PlayerEntities([EntityId; 9]);

/// Builds entities as they are first needed.
struct Names {
    players: std::collections::HashMap<(Side, u8), PlayerEntities>,
    play_mode: EntityId,
}

impl Names {
    fn of(&mut self, log: &mut Log, game: &Game, side: Side, unum: u8) -> &PlayerEntities {
        self.players.entry((side, unum)).or_insert_with(|| {
            let team = team_key(game, side);
            let player = log.entities.intern(&format!("{team}/{unum}"));
            let t = log.entities.intern(&team);
            log.entities.add_parent(player, t);
            let ids = std::array::from_fn(|i| {
                let e = log.entities.intern(&format!("{team}/{unum}/{}", MODELS[i]));
                log.entities.add_parent(e, player);
                let m = log.entities.intern(&format!("models/{}", MODELS[i]));
                log.entities.add_parent(e, m);
                e
            });
            PlayerEntities(ids)
        })
    }
}

fn prim(shape: Shape, style: Style, entity: EntityId, level: i32) -> Primitive {
    Primitive {
        shape,
        style,
        entity,
        level,
    }
}

fn px(color: Rgba, thickness: f32) -> Style {
    Style {
        color,
        fill: None,
        thickness,
        unit: ThicknessUnit::Pixels,
    }
}

fn filled(color: Rgba, fill: Rgba) -> Style {
    Style {
        fill: Some(fill),
        ..px(color, 1.0)
    }
}

/// The sensor-model log of `game`.
pub fn sensor_log(game: &Game, opts: &SensorOptions) -> Log {
    let step = game.server.simulator_step;
    let mut log = Log::new();
    log.header = Header {
        name: format!(
            "{} vs {}: sensor models",
            team_key(game, Side::Left),
            team_key(game, Side::Right)
        ),
        time_unit: TimeUnit::RelativeSeconds,
        world_unit: "m".into(),
        hints: DisplayHints {
            // The server's records: each shown until the next, the last
            // for a cycle.
            instant_threshold: Some(step),
            cycle: Some(step),
            default_max_level: Some(1),
            world_bounds: Some((
                Vec2::new(
                    -game.server.pitch_length / 2.0 - 5.0,
                    -game.server.pitch_width / 2.0 - 5.0,
                ),
                Vec2::new(
                    game.server.pitch_length / 2.0 + 5.0,
                    game.server.pitch_width / 2.0 + 5.0,
                ),
            )),
        },
    };
    let play_mode = log.entities.intern("game/play_mode");
    let mut names = Names {
        players: std::collections::HashMap::new(),
        play_mode,
    };
    let mut prims = Vec::new();
    let mut mode: Option<(f64, super::game::PlayMode)> = None;
    let mut modes: Vec<(f64, f64, super::game::PlayMode)> = Vec::new();
    for r in &game.records {
        let t = r.clock(step);
        if !t.is_finite() {
            continue;
        }
        if mode.is_none_or(|(_, m)| m != r.play_mode) {
            // A mode shows from its record's clock to the next mode's, as
            // the records do.
            if let Some((start, m)) = mode.take() {
                modes.push((start, t.next_down(), m));
            }
            mode = Some((t, r.play_mode));
        }
        prims.clear();
        for p in &r.players {
            player_models(game, r, p, opts, &mut names, &mut log, &mut prims);
        }
        log.push_frame(FrameTime::Instant(t), prims.drain(..));
    }
    if let Some((start, m)) = mode {
        // Held with the last record, a cycle.
        let end = game
            .records
            .last()
            .map_or(start, |r| (r.clock(step) + step).next_down());
        modes.push((start, end, m));
    }
    let anchor = Vec2::new(
        game.server.pitch_length / 2.0 - 12.0,
        game.server.pitch_width / 2.0 + 2.0,
    );
    for (start, end, m) in modes {
        if m == super::game::PlayMode::PLAY_ON || m.name().is_empty() {
            continue;
        }
        let text = prim(
            Shape::Text {
                anchor,
                text: m.name().into(),
                size: 0.0,
            },
            px(Rgba::from_rgb(0xffff80), 0.0),
            names.play_mode,
            0,
        );
        log.push_frame(
            FrameTime::Persistent {
                start,
                end: end.max(start),
            },
            [text],
        );
    }
    log
}

/// The player type of `p`.
fn player_type(game: &Game, p: &Player) -> PlayerType {
    game.player_types
        .get(usize::from(p.player_type))
        .cloned()
        .unwrap_or_else(|| PlayerType::from_server(p.player_type, &game.server))
}

fn player_models(
    game: &Game,
    r: &ShowRecord,
    p: &Player,
    opts: &SensorOptions,
    names: &mut Names,
    log: &mut Log,
    out: &mut Vec<Primitive>,
) {
    let s = &game.server;
    let pos = world(p.pos);
    if !pos.is_finite() || p.state == 0 {
        return;
    }
    let e = names.of(log, game, p.side, p.unum).0;
    let ty = player_type(game, p);
    let team = if p.side == Side::Left {
        Rgba::from_rgb(0xffd700)
    } else {
        Rgba::from_rgb(0x1e90ff)
    };
    let face = world_angle(p.face());
    let body = world_angle(p.body);
    let width = p
        .view
        .map_or(s.visible_angle, |v| v.1)
        .clamp(1.0, 360.0)
        .to_radians();
    // View cone out to where numbers can still be read.
    let reach = ty.unum_far_length.max(s.visible_distance);
    out.push(prim(
        Shape::Sector {
            center: pos,
            inner: 0.0,
            outer: reach,
            start: face - width / 2.0,
            sweep: width,
        },
        px(team.with_alpha(0xa0), 1.0),
        e[0],
        2,
    ));
    out.push(prim(
        Shape::Circle {
            center: pos,
            radius: s.visible_distance,
        },
        px(team.with_alpha(0xa0), 1.0),
        e[0],
        2,
    ));
    // Kickable area; the goalie's catchable reach.
    out.push(prim(
        Shape::Circle {
            center: pos,
            radius: ty.kickable_area(s),
        },
        px(Rgba::WHITE.with_alpha(0xc0), 1.0),
        e[1],
        1,
    ));
    if p.is_goalie() {
        let l = s.catchable_area_l * ty.catchable_area_l_stretch.max(1.0);
        out.push(prim(
            Shape::Circle {
                center: pos,
                radius: l.hypot(s.catchable_area_w / 2.0),
            },
            px(Rgba::from_rgb(0x80ff80).with_alpha(0xc0), 1.0),
            e[1],
            1,
        ));
    }
    // Identification ranges, inside the cone.
    let diag = s.pitch_length.hypot(s.pitch_width);
    for (d, a) in [
        (ty.unum_far_length, 0xa0),
        (ty.unum_too_far_length, 0x70),
        (ty.team_far_length, 0x50),
        (ty.team_too_far_length, 0x30),
    ] {
        if d > 0.0 && d < diag {
            out.push(prim(
                Shape::Sector {
                    center: pos,
                    inner: d,
                    outer: d,
                    start: face - width / 2.0,
                    sweep: width,
                },
                px(team.with_alpha(a), 1.0),
                e[2],
                2,
            ));
        }
    }
    // Tackle area.
    let (ahead, behind) = (s.tackle_dist, s.tackle_back_dist);
    if ahead + behind > 0.0 {
        out.push(prim(
            Shape::Rectangle {
                center: pos + dir(body) * ((ahead - behind) / 2.0),
                size: Vec2::new(ahead + behind, s.tackle_width),
                orientation: body,
            },
            px(Rgba::from_rgb(0xff9040).with_alpha(0xa0), 1.0),
            e[3],
            2,
        ));
    }
    // Focus point (v18+): distance and direction from body + neck.
    if let Some([d, a]) = p.focus_point
        && d.is_finite()
        && a.is_finite()
    {
        let fp = pos + dir(world_angle(p.face() + a)) * d;
        out.push(prim(
            Shape::Line { start: pos, end: fp },
            px(team.with_alpha(0x80), 1.0),
            e[4],
            2,
        ));
        out.push(prim(
            Shape::Point {
                position: fp,
                kind: crate::log::MarkerKind::Cross,
                size: 0.0,
            },
            px(team, 1.5),
            e[4],
            2,
        ));
    }
    // Stamina bar under the player.
    if let Some(st) = p.stamina
        && st.stamina.is_finite()
        && s.stamina_max > 0.0
    {
        let frac = (st.stamina / s.stamina_max).clamp(0.0, 1.0);
        let (w, h) = (1.6, 0.25);
        let left = pos + Vec2::new(-w / 2.0, -1.1);
        out.push(prim(
            Shape::Rectangle {
                center: left + Vec2::new(w / 2.0, 0.0),
                size: Vec2::new(w, h),
                orientation: 0.0,
            },
            filled(Rgba::BLACK.with_alpha(0xa0), Rgba::BLACK.with_alpha(0x60)),
            e[5],
            2,
        ));
        let color = if frac > 0.5 {
            Rgba::from_rgb(0x40e040)
        } else if frac > 0.25 {
            Rgba::from_rgb(0xe0e040)
        } else {
            Rgba::from_rgb(0xe04040)
        };
        if frac > 0.0 {
            out.push(prim(
                Shape::Rectangle {
                    center: left + Vec2::new(w * frac / 2.0, 0.0),
                    size: Vec2::new(w * frac, h),
                    orientation: 0.0,
                },
                filled(color, color),
                e[5],
                2,
            ));
        }
    }
    // Actions and events of this step.
    for (bit, color) in [
        (state::KICK, 0xffffff),
        (state::TACKLE, 0xff9040),
        (
            state::PLAYER_COLLIDE | state::BALL_COLLIDE | state::POST_COLLIDE,
            0xff40ff,
        ),
        (state::FOUL_CHARGED, 0xff2020),
    ] {
        if p.state & bit != 0 {
            out.push(prim(
                Shape::Circle {
                    center: pos,
                    radius: ty.kickable_area(s) + 0.3,
                },
                px(Rgba::from_rgb(color), 2.5),
                e[6],
                2,
            ));
        }
    }
    out.push(prim(
        Shape::Circle {
            center: pos,
            radius: s.audio_cut_dist,
        },
        px(team.with_alpha(0x40), 1.0),
        e[7],
        3,
    ));
    if opts.observer == Some((p.side, p.unum)) {
        seen(game, r, p, &ty, e[8], out);
    }
}

/// What `me` could see this record, drawn at level 3.
fn seen(
    game: &Game,
    r: &ShowRecord,
    me: &Player,
    ty: &PlayerType,
    entity: EntityId,
    out: &mut Vec<Primitive>,
) {
    let s = &game.server;
    let origin = world(me.pos);
    let face = world_angle(me.face());
    let width = me
        .view
        .map_or(s.visible_angle, |v| v.1)
        .clamp(1.0, 360.0)
        .to_radians();
    let focus = match me.focus_point {
        Some([d, a]) if d.is_finite() && a.is_finite() => origin + dir(world_angle(me.face() + a)) * d,
        _ => origin,
    };
    let mut objects: Vec<(Vec2, String, bool)> = vec![(world(r.ball.pos), "b".into(), true)];
    for q in &r.players {
        if (q.side, q.unum) != (me.side, me.unum) && q.state != 0 {
            let side = if q.side == Side::Left { "l" } else { "r" };
            objects.push((world(q.pos), format!("{side}{}", q.unum), false));
        }
    }
    let q_step = if s.quantize_step > 0.0 {
        s.quantize_step
    } else {
        0.1
    };
    let noise = (0.0125, 0.0125); // dist_noise_rate, focus_dist_noise_rate (v19 defaults)
    for (p, name, ball) in objects {
        let rel = p - origin;
        let d = rel.length();
        if !(d.is_finite() && d > 1e-9) {
            continue;
        }
        let a = rel.y.atan2(rel.x);
        let off = wrap(a - face);
        let in_cone = off.abs() <= width / 2.0;
        if !in_cone && d > s.visible_distance {
            continue;
        }
        let label = if !in_cone {
            // Only the kind is known.
            if ball { "B".to_owned() } else { "P".to_owned() }
        } else if ball {
            name
        } else {
            identify(&name, d, ty)
        };
        // The reported direction: rounded to a degree.
        let reported = (off.to_degrees()).round().to_radians() + face;
        let half = 0.5f64.to_radians();
        let (lo, hi) = preimage(origin, dir(reported), focus, d, q_step);
        let color = if ball {
            Rgba::WHITE
        } else {
            Rgba::from_rgb(0xffa0ff)
        };
        out.push(prim(
            Shape::Sector {
                center: origin,
                inner: lo,
                outer: hi.max(lo + 0.02),
                start: reported - half,
                sweep: 2.0 * half,
            },
            Style {
                color: color.with_alpha(0xe0),
                fill: Some(color.with_alpha(0x60)),
                thickness: 1.0,
                unit: ThicknessUnit::Pixels,
            },
            entity,
            3,
        ));
        // Gaussian model: one standard deviation around the true distance.
        let f = (p - focus).length();
        let sd = d * noise.0 + f * noise.1;
        out.push(prim(
            Shape::Sector {
                center: origin,
                inner: (d - sd).max(0.0),
                outer: d + sd,
                start: a - half,
                sweep: 2.0 * half,
            },
            px(Rgba::from_rgb(0x80ffff).with_alpha(0x90), 1.0),
            entity,
            3,
        ));
        out.push(prim(
            Shape::Text {
                anchor: p + Vec2::new(0.5, 0.5),
                text: label.into(),
                size: 0.0,
            },
            px(color, 0.0),
            entity,
            3,
        ));
    }
}

/// How the server would name player `name` (`l10`) seen at `d`: team and
/// number while the number is readable, `l10?` while it may be, the team
/// alone, `?` when not even that.
fn identify(name: &str, d: f64, ty: &PlayerType) -> String {
    let team = &name[..1];
    if d <= ty.unum_far_length {
        name.to_owned()
    } else if d < ty.unum_too_far_length {
        format!("{name}?")
    } else if d <= ty.team_far_length {
        team.to_owned()
    } else if d < ty.team_too_far_length {
        format!("{team}?")
    } else {
        "?".to_owned()
    }
}

/// `v` in (−π, π].
fn wrap(v: f64) -> f64 {
    let t = (v + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
    if t <= -std::f64::consts::PI {
        t + std::f64::consts::TAU
    } else {
        t
    }
}

/// `ceil(v / q) · q`, robust to the float error of values on a step.
fn quantize(v: f64, q: f64) -> f64 {
    (v / q - 1e-9).ceil() * q
}

/// The distance an observer at `origin` reports for an object at `x`
/// along `ray` with its focus point at `focus` (quantisation model).
fn reported_distance(origin: Vec2, ray: Vec2, focus: Vec2, x: f64, q_step: f64) -> f64 {
    let obj = origin + ray * x;
    let f = (obj - focus).length();
    let fq = if f > 1e-9 {
        quantize(f.ln(), q_step).exp()
    } else {
        0.0
    };
    quantize((x - (f - fq)).max(0.0), 0.1)
}

/// The distances along `ray` that report what distance `d` reports: the
/// quantisation preimage `(lo, hi)` around `d`.
fn preimage(origin: Vec2, ray: Vec2, focus: Vec2, d: f64, q_step: f64) -> (f64, f64) {
    let target = reported_distance(origin, ray, focus, d, q_step);
    let same = |x: f64| (reported_distance(origin, ray, focus, x, q_step) - target).abs() < 1e-6;
    // Walk out in steps well below the finest quantum, then bisect the edge.
    let edge = |dirn: f64| {
        let stepx = (d * 0.002).max(0.002);
        let mut inside = d;
        let mut n = 0;
        loop {
            let next = inside + dirn * stepx;
            if next <= 0.0 {
                return 0.0;
            }
            if !same(next) || n > 4000 {
                let mut out = next;
                for _ in 0..30 {
                    let mid = (inside + out) / 2.0;
                    if same(mid) {
                        inside = mid;
                    } else {
                        out = mid;
                    }
                }
                return inside;
            }
            inside = next;
            n += 1;
        }
    };
    (edge(-1.0), edge(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_are_named_by_side_and_number() {
        assert_eq!(parse_player("l10"), Some((Side::Left, 10)));
        assert_eq!(parse_player("Right/3"), Some((Side::Right, 3)));
        assert_eq!(parse_player("left 11"), Some((Side::Left, 11)));
        assert_eq!(parse_player("r12"), None);
        assert_eq!(parse_player("x1"), None);
    }

    #[test]
    fn the_quantisation_preimage_holds_the_distance_and_reports_the_same() {
        let (o, ray) = (Vec2::ZERO, Vec2::new(1.0, 0.0));
        for d in [0.7, 3.0, 12.34, 25.0, 48.9] {
            let (lo, hi) = preimage(o, ray, o, d, 0.1);
            assert!(lo <= d && d <= hi, "{d}: {lo}…{hi}");
            let want = reported_distance(o, ray, o, d, 0.1);
            for x in [lo + 1e-6, (lo + hi) / 2.0, hi - 1e-6] {
                assert_eq!(reported_distance(o, ray, o, x, 0.1), want);
            }
            assert_ne!(reported_distance(o, ray, o, hi + 1e-3, 0.1), want);
            // Log-space steps: the set grows with the distance (about 10 %
            // of it for quantize_step 0.1).
            assert!(hi - lo <= 0.11 * hi + 0.1, "{d}: {lo}…{hi}");
        }
        // Far objects are known less exactly than near ones.
        let (a, b) = preimage(o, ray, o, 40.0, 0.1);
        let (c, e) = preimage(o, ray, o, 4.0, 0.1);
        assert!(b - a > e - c);
    }

    #[test]
    fn identification_follows_the_distance_ranges() {
        let s = super::super::game::ServerParams::default();
        let ty = PlayerType::from_server(0, &s);
        assert_eq!(identify("l7", 5.0, &ty), "l7");
        assert_eq!(
            identify("l7", (ty.unum_far_length + ty.unum_too_far_length) / 2.0, &ty),
            "l7?"
        );
        assert_eq!(
            identify("l7", ty.unum_too_far_length + 0.1, &ty),
            if ty.unum_too_far_length + 0.1 <= ty.team_far_length {
                "l"
            } else {
                "l?"
            }
        );
    }
}
