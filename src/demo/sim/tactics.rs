//! What the robots' software decides each step: blue's offence (zones,
//! best receiving points, passes, the scripted shot), yellow's defence and
//! marking, fetching a loose ball, behaviour during a stop and ball
//! placement, and when to kick.

use rand::Rng;

use super::field::{ball_bounds, in_defense_area, is_attacker, is_goalie, robot_bounds, yellow_goal};
use super::*;
use crate::geom::vec2::{angle_of, dir, distance_to_segment, unit, wrap_angle};

impl Game {
    /// Every robot's command for this step.
    pub(super) fn think(&mut self) -> [Command; ROBOTS] {
        let ball = self.ball.pos;
        let mut cmd: [Command; ROBOTS] = std::array::from_fn(|i| Command {
            target: self.bodies[i].pos,
            heading: angle_of(ball - self.bodies[i].pos),
            vmax: MAX_SPEED,
            priority: false,
        });
        let half_l = FIELD_LENGTH / 2.0;
        let goalie_y = (ball.y * 0.45).clamp(
            -(GOAL_WIDTH / 2.0 - ROBOT_RADIUS),
            GOAL_WIDTH / 2.0 - ROBOT_RADIUS,
        );
        // Blue goalie and defender.
        cmd[0].target = Vec2::new(-half_l + 160.0, goalie_y);
        cmd[1].target = Vec2::new(
            (ball.x - 2300.0).clamp(-3300.0, -700.0),
            (ball.y * 0.5).clamp(-1500.0, 1500.0),
        );
        // Yellow goalie, the robot between ball and goal, the markers.
        let y0 = usize::from(TEAM_SIZE);
        cmd[y0].target = Vec2::new(half_l - 160.0, goalie_y);
        let guard = if self.phase == Phase::Running {
            700.0
        } else {
            950.0
        };
        cmd[y0 + 1].target = ball + unit(yellow_goal() - ball) * guard;
        let holder = self.ball.holder;
        for k in 2..usize::from(TEAM_SIZE) {
            let m = self.bodies[k].pos;
            let goal_side = unit(yellow_goal() - m);
            let raw = if holder == Some(k) {
                m + goal_side * 750.0
            } else {
                m + goal_side * 430.0 + unit(ball - m) * 150.0
            };
            let mark = &mut self.marks[y0 + k];
            *mark = *mark + (raw - *mark) * (DT / 0.35);
            cmd[y0 + k].target = *mark;
        }
        match self.phase {
            Phase::Running => self.think_running(&mut cmd),
            Phase::Stop | Phase::BallPlacement => self.think_stopped(&mut cmd),
        }
        for (i, c) in cmd.iter_mut().enumerate() {
            c.target = self.legal_target(i, c.target);
        }
        if self.phase != Phase::Running {
            self.keep_away(&mut cmd);
        }
        let running = self.phase == Phase::Running;
        let receiver = self.off.pass.map(|p| usize::from(p.receiver));
        let placer = self.stop.and_then(|s| s.placer);
        for (i, c) in cmd.iter_mut().enumerate() {
            c.priority = self.ball.holder == Some(i)
                || (running
                    && (self.off.primary == Some(i) || receiver == Some(i) || self.yellow_chaser == Some(i)))
                || (!running && placer == Some(i));
        }
        cmd
    }

    /// Offence zones for the ball at `ball` (layout `variant`), unassigned.
    fn zone_layout(ball: Vec2, variant: u32) -> [(Vec2, Vec2); 3] {
        let xmax = FIELD_LENGTH / 2.0 - DEFENSE_DEPTH - 150.0;
        let f = (ball.x + 1500.0).clamp(300.0, 2500.0);
        if variant == 0 {
            let (xa, xb) = (f - 900.0, (f + 900.0).min(xmax));
            let xc = (f + 500.0).min(xmax - 1000.0);
            [
                (Vec2::new(xa, 700.0), Vec2::new(xb, 2700.0)),
                (Vec2::new(xa, -2700.0), Vec2::new(xb, -700.0)),
                (Vec2::new(xc, -650.0), Vec2::new(xc + 1000.0, 650.0)),
            ]
        } else {
            let (xa, xb) = (f, (f + 1400.0).min(xmax));
            let xt = (ball.x - 2200.0).clamp(-3200.0, 1800.0);
            let yt = (-ball.y * 0.5).clamp(-1800.0, 1800.0);
            [
                (Vec2::new(xa, 300.0), Vec2::new(xb, 2300.0)),
                (Vec2::new(xa, -2300.0), Vec2::new(xb, -300.0)),
                (Vec2::new(xt, yt - 900.0), Vec2::new(xt + 1400.0, yt + 900.0)),
            ]
        }
    }

    /// How good `p` is for receiving a pass from `from`; the robots in
    /// `skip` (passer and receiver) do not block the lane.
    fn receive_score(&self, p: Vec2, from: Vec2, skip: [usize; 2]) -> f64 {
        let y0 = usize::from(TEAM_SIZE);
        let opp = self.bodies[y0..]
            .iter()
            .map(|b| (b.pos - p).length())
            .fold(f64::INFINITY, f64::min);
        let lane = self
            .bodies
            .iter()
            .enumerate()
            .filter(|(i, _)| !skip.contains(i))
            .map(|(_, b)| distance_to_segment(b.pos, from, p))
            .fold(f64::INFINITY, f64::min);
        let near = if (p - from).length() < 1000.0 { -800.0 } else { 0.0 };
        -0.3 * (yellow_goal() - p).length() + opp.min(1000.0) + 1.5 * lane.min(700.0) + near
    }

    /// The best of a 3 × 3 grid of points in the zone.
    fn best_point(&self, min: Vec2, max: Vec2, from: Vec2, skip: [usize; 2]) -> Vec2 {
        let mut best = (f64::NEG_INFINITY, (min + max) * 0.5);
        for a in 0..3 {
            for b in 0..3 {
                let p = Vec2::new(
                    min.x + 200.0 + (max.x - min.x - 400.0).max(0.0) * f64::from(a) / 2.0,
                    min.y + 200.0 + (max.y - min.y - 400.0).max(0.0) * f64::from(b) / 2.0,
                );
                let s = self.receive_score(p, from, skip);
                if s > best.0 {
                    best = (s, p);
                }
            }
        }
        best.1
    }

    /// Assigns the attackers other than `primary` to the zones, minimising
    /// the total distance, and refreshes the best points.
    fn assign_zones(&mut self, rects: [(Vec2, Vec2); 3], primary: usize) {
        let supports: Vec<usize> = ATTACKERS
            .iter()
            .map(|&a| usize::from(a))
            .filter(|&a| a != primary)
            .collect();
        const PERMS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let centre = |r: (Vec2, Vec2)| (r.0 + r.1) * 0.5;
        let cost = |perm: &[usize; 3]| -> f64 {
            perm.iter()
                .zip(&supports)
                .map(|(&z, &s)| (self.bodies[s].pos - centre(rects[z])).length())
                .sum()
        };
        let mut best = PERMS[0];
        for perm in &PERMS[1..] {
            if cost(perm) < cost(&best) {
                best = *perm;
            }
        }
        let from = self.ball.pos;
        let zones = std::array::from_fn(|k| {
            // `best` is a permutation: zone k goes to the support at the
            // position of k in it.
            let s = best
                .iter()
                .position(|&z| z == k)
                .map_or(supports[k % supports.len()], |j| supports[j]);
            let (min, max) = rects[k];
            Zone {
                min,
                max,
                robot: s as u8,
                default: centre(rects[k]),
                best: self.best_point(min, max, from, [primary, s]),
            }
        });
        self.off.zones = Some(zones);
    }

    fn refresh_best_points(&mut self) {
        let from = self.ball.pos;
        if let Some(mut zones) = self.off.zones {
            for z in &mut zones {
                let frozen = self.off.pass.is_some_and(|p| p.receiver == z.robot);
                if !frozen {
                    let skip = [self.off.primary.unwrap_or(usize::MAX), usize::from(z.robot)];
                    z.best = self.best_point(z.min, z.max, from, skip);
                }
            }
            self.off.zones = Some(zones);
        }
    }

    /// A new robot has the ball or goes for it: new zones and plans.
    fn new_primary(&mut self, p: usize, possession: bool) {
        self.off.primary = Some(p);
        self.off.pass = None;
        self.off.shot = None;
        if possession {
            self.off.since = self.t;
            self.off.hold_for = self.rng.random_range(0.9..1.7);
            let variant = self.rng.random_range(0..2);
            let rects = Self::zone_layout(self.ball.pos, variant);
            self.assign_zones(rects, p);
        } else if let Some(zones) = self.off.zones {
            let rects = zones.map(|z| (z.min, z.max));
            self.assign_zones(rects, p);
        } else {
            let rects = Self::zone_layout(self.ball.pos, 0);
            self.assign_zones(rects, p);
        }
    }

    /// The aim of a shot that misses the goal and goes out over the goal
    /// line along a lane clear of robots, if there is one.
    fn shot_aim(&self, shooter: usize) -> Option<Vec2> {
        let side = if self.ball.pos.y >= 0.0 { 1.0 } else { -1.0 };
        let mut best: Option<(f64, Vec2)> = None;
        for s in [side, -side] {
            for off in [300.0, 450.0, 600.0, 800.0] {
                let aim = Vec2::new(FIELD_LENGTH / 2.0, s * (GOAL_WIDTH / 2.0 + off));
                let Some(clear) = self.shot_clearance(shooter, aim) else {
                    continue;
                };
                let score = clear.min(ROBOT_RADIUS + BALL_RADIUS + 150.0) - off * 0.05;
                if best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, aim));
                }
            }
        }
        best.map(|(_, aim)| aim)
    }

    /// How far the lane of a shot at `aim` (on the goal line, beside the
    /// goal) stays from every robot but the shooter, when it is clear: it
    /// must miss the goal, end beside it at the wall, and pass every robot.
    fn shot_clearance(&self, shooter: usize, aim: Vec2) -> Option<f64> {
        let from = self.ball.pos;
        let d = unit(aim - from);
        if d.x < 0.2 {
            return None;
        }
        // Where the shot passes the goal's back and meets the wall.
        let k_goal = (FIELD_LENGTH / 2.0 + GOAL_DEPTH + GOAL_WALL - from.x) / d.x;
        let y_goal = from.y + d.y * k_goal;
        if y_goal.abs() < GOAL_WIDTH / 2.0 + GOAL_WALL + BALL_RADIUS + 30.0 || y_goal * aim.y < 0.0 {
            return None;
        }
        let end = from + d * ((ball_bounds().x - from.x) / d.x);
        if end.y.abs() < GOAL_WIDTH / 2.0 + GOAL_WALL + 2.0 * ROBOT_RADIUS + 40.0 {
            return None;
        }
        let clear = self
            .bodies
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != shooter)
            .map(|(_, b)| distance_to_segment(b.pos, from, end))
            .fold(f64::INFINITY, f64::min);
        // The longer the shot is overdue, the narrower a lane will do.
        let overdue = self.shot_due.map_or(0.0, |due| self.t - due);
        let margin = if overdue > 4.0 { 5.0 } else { 40.0 };
        (clear >= ROBOT_RADIUS + BALL_RADIUS + margin).then_some(clear)
    }

    fn think_running(&mut self, cmd: &mut [Command; ROBOTS]) {
        let ball = self.ball.pos;
        self.yellow_chaser = None;
        match self.ball.holder {
            Some(h) if is_attacker(h) => {
                if self.off.possessor != Some(h) || self.off.zones.is_none() {
                    self.off.flight = None;
                    self.off.possessor = Some(h);
                    self.new_primary(h, true);
                } else if self.step.is_multiple_of(15) {
                    self.refresh_best_points();
                }
                let held = self.t - self.off.since;
                let shoot_now = self
                    .shot_due
                    .is_some_and(|due| self.t >= due && !self.outs.iter().any(|o| o.t >= due));
                if shoot_now && self.off.shot.is_none() && held >= 0.3 {
                    // Shoot when a lane is clear; keep passing until then.
                    if let Some(aim) = self.shot_aim(h) {
                        self.off.pass = None;
                        self.off.shot = Some(aim);
                    }
                }
                if self.off.pass.is_none() && self.off.shot.is_none() && held >= 0.3 {
                    self.choose_receiver(h);
                }
                let me = self.bodies[h].pos;
                cmd[h].vmax = 1000.0;
                if let Some(aim) = self.off.shot {
                    cmd[h].heading = angle_of(aim - ball);
                } else if let Some(p) = self.off.pass {
                    cmd[h].heading = angle_of(p.ball_target - ball);
                } else {
                    cmd[h].heading = angle_of(yellow_goal() - me);
                    if me.x < 1800.0 {
                        cmd[h].target = me + Vec2::new(250.0, 0.0);
                        cmd[h].vmax = 450.0;
                    }
                }
                self.support_commands(cmd, None);
            }
            Some(h) => {
                // A goalie or the yellow free kick taker: kick it away.
                let to = self.free_kick.unwrap_or_else(|| self.clearance_target(h));
                cmd[h].heading = angle_of(to - ball);
                cmd[h].vmax = 800.0;
                self.support_commands(cmd, None);
            }
            None => {
                if let Some(f) = self.off.flight {
                    let recv = self.bodies[f.receiver].pos;
                    let speed = self.ball.vel.length();
                    let away = self.ball.vel.dot(recv - ball) < 0.0 && (recv - ball).length() > 300.0;
                    if speed < 150.0 || self.t - f.kicked_at > 4.0 || away {
                        self.off.flight = None;
                        self.off.pass = None;
                    }
                }
                if let Some(f) = self.off.flight {
                    let r = f.receiver;
                    let u = unit(self.ball.vel);
                    let p = self.bodies[r].pos;
                    let s = (p - ball).dot(u).max(0.0);
                    cmd[r].target = ball + u * s;
                    cmd[r].heading = angle_of(ball - p);
                    self.support_commands(cmd, Some(r));
                } else {
                    self.fetch(cmd);
                }
            }
        }
    }

    /// Where a goalie or yellow robot holding the ball clears it to.
    fn clearance_target(&self, h: usize) -> Vec2 {
        let ball = self.ball.pos;
        if h < usize::from(TEAM_SIZE) {
            // Blue goalie: to the nearest attacker.
            ATTACKERS
                .iter()
                .map(|&a| self.bodies[usize::from(a)].pos)
                .min_by(|a, b| (*a - ball).length().total_cmp(&(*b - ball).length()))
                .unwrap_or(Vec2::ZERO)
        } else {
            Vec2::new(-1500.0, (-ball.y * 0.5).clamp(-2000.0, 2000.0))
        }
    }

    /// Picks the receiver of the next pass among the support attackers.
    fn choose_receiver(&mut self, passer: usize) {
        let Some(zones) = self.off.zones else {
            return;
        };
        let from = self.ball.pos;
        let mut best: Option<(f64, Zone)> = None;
        for z in zones {
            let r = usize::from(z.robot);
            let mut score = self.receive_score(z.best, from, [passer, r]) + self.rng.random_range(0.0..400.0);
            if self.off.last_passer == Some(r) {
                score -= 500.0;
            }
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, z));
            }
        }
        if let Some((_, z)) = best {
            let rt = z.best;
            self.off.planned_at = self.t;
            self.off.pass = Some(PassPlan {
                passer: passer as u8,
                receiver: z.robot,
                receiver_target: rt,
                ball_target: rt + unit(from - rt) * (ROBOT_RADIUS + BALL_RADIUS),
                kicked: false,
            });
        }
    }

    /// Commands for the support attackers (and a receiver waiting for its pass).
    fn support_commands(&self, cmd: &mut [Command; ROBOTS], skip: Option<usize>) {
        let Some(zones) = self.off.zones else {
            return;
        };
        for z in zones {
            let r = usize::from(z.robot);
            if Some(r) == skip || Some(r) == self.ball.holder {
                continue;
            }
            cmd[r].target = match self.off.pass {
                Some(p) if p.receiver == z.robot => p.receiver_target,
                _ => z.default,
            };
        }
    }

    /// Nobody has the ball: the nearest attacker goes for it (a goalie when
    /// it lies in its defence area).
    fn fetch(&mut self, cmd: &mut [Command; ROBOTS]) {
        let ball = self.ball.pos;
        let vel = self.ball.vel;
        let predict = |p: Vec2| {
            let lead = ((p - ball).length() / 1500.0).min(1.0);
            ball + vel * lead
        };
        if in_defense_area(ball, 0.0) {
            let g = if ball.x > 0.0 { usize::from(TEAM_SIZE) } else { 0 };
            let p = self.bodies[g].pos;
            let target = predict(p);
            cmd[g].target = target - unit(target - p) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
            cmd[g].heading = angle_of(ball - p);
        }
        let cost = |g: &Game, a: usize| (predict(g.bodies[a].pos) - g.bodies[a].pos).length();
        let mut fetcher = ATTACKERS
            .iter()
            .map(|&a| usize::from(a))
            .min_by(|&a, &b| cost(self, a).total_cmp(&cost(self, b)))
            .unwrap_or(usize::from(ATTACKERS[0]));
        if let Some(p) = self.off.primary
            && is_attacker(p)
            && cost(self, p) < 1.3 * cost(self, fetcher)
        {
            fetcher = p;
        }
        if self.off.primary != Some(fetcher) || self.off.zones.is_none() {
            self.new_primary(fetcher, false);
        }
        let p = self.bodies[fetcher].pos;
        let target = predict(p);
        cmd[fetcher].target = target - unit(target - p) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
        cmd[fetcher].heading = angle_of(ball - p);
        self.support_commands(cmd, Some(fetcher));
        // A yellow defender goes for a slow ball it is clearly closer to, or
        // for one nobody has touched for a while.
        let y0 = usize::from(TEAM_SIZE);
        let near = |g: &Game, a: usize| (g.bodies[a].pos - ball).length();
        if let Some(yc) = (y0 + 1..ROBOTS).min_by(|&a, &b| near(self, a).total_cmp(&near(self, b))) {
            let idle = self.touches.last().is_none_or(|t| self.t - t.t > 2.5);
            if vel.length() < 800.0 && (near(self, yc) < 0.6 * cost(self, fetcher) || idle) {
                self.yellow_chaser = Some(yc);
                let q = self.bodies[yc].pos;
                let target = predict(q);
                cmd[yc].target = target - unit(target - q) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
                cmd[yc].heading = angle_of(ball - q);
            }
        }
    }

    fn think_stopped(&mut self, cmd: &mut [Command; ROBOTS]) {
        let ball = self.ball.pos;
        for c in cmd.iter_mut() {
            c.vmax = STOP_SPEED;
        }
        self.support_commands(cmd, None);
        let Some(stop) = self.stop else {
            return;
        };
        let o = stop.offender;
        if self.misbehaving(o) {
            let p = self.bodies[o].pos;
            cmd[o].target = ball + unit(p - ball) * (ROBOT_RADIUS + 280.0);
        }
        if let Some(placer) = stop.placer {
            let p = self.bodies[placer].pos;
            let u = unit(stop.kick_to - stop.point);
            if self.ball.holder == Some(placer) {
                cmd[placer].target = stop.point - u * HOLD_DISTANCE;
                cmd[placer].heading = angle_of(u);
                cmd[placer].vmax = 1200.0;
            } else {
                cmd[placer].target = ball - unit(ball - p) * (ROBOT_RADIUS + BALL_RADIUS - 20.0);
                cmd[placer].heading = angle_of(ball - p);
            }
        }
    }

    /// `target` made legal for robot `i`: inside the boundary, out of the
    /// defence areas unless a goalie, not behind a goal line unless placing.
    fn legal_target(&self, i: usize, target: Vec2) -> Vec2 {
        let placer = self.stop.and_then(|s| s.placer) == Some(i) && self.phase == Phase::BallPlacement;
        let b = if placer {
            robot_bounds() - Vec2::new(5.0, 5.0)
        } else {
            robot_bounds() - Vec2::new(40.0, 40.0)
        };
        let xmax = if placer { b.x } else { FIELD_LENGTH / 2.0 - 60.0 };
        let mut p = Vec2::new(target.x.clamp(-xmax, xmax), target.y.clamp(-b.y, b.y));
        // The attacker going for a loose ball may come up to the line.
        let chasing = self.phase == Phase::Running
            && self.ball.holder.is_none()
            && (self.off.primary == Some(i) || self.yellow_chaser == Some(i));
        let m = if chasing { 0.0 } else { ROBOT_RADIUS + 20.0 };
        if !is_goalie(i) && !placer && !self.misbehaving(i) && in_defense_area(p, m) {
            let front = FIELD_LENGTH / 2.0 - DEFENSE_DEPTH - m;
            let side = DEFENSE_WIDTH / 2.0 + m;
            let dx = p.x.abs() - front;
            let dy = side - p.y.abs();
            if dx < dy {
                p.x = p.x.signum() * front;
            } else {
                p.y = if p.y >= 0.0 { side } else { -side };
            }
        }
        p
    }

    /// Whether `i` is the robot that stays too close to the ball in this stop.
    fn misbehaving(&self, i: usize) -> bool {
        self.phase != Phase::Running
            && self
                .stop
                .is_some_and(|s| s.offender == i && self.t - s.since < OFFENCE_END)
    }

    /// During a stop, moves every target (except the offender's while it
    /// misbehaves and the placer's) out of the circle the rule keeps free.
    fn keep_away(&self, cmd: &mut [Command; ROBOTS]) {
        let Some(stop) = self.stop else {
            return;
        };
        let ball = self.ball.pos;
        let r = STOP_DISTANCE + ROBOT_RADIUS + 220.0;
        for (i, c) in cmd.iter_mut().enumerate() {
            if Some(i) == stop.placer || self.misbehaving(i) {
                continue;
            }
            let d = c.target - ball;
            if d.length() >= r {
                continue;
            }
            let towards_centre = unit(Vec2::ZERO - ball);
            let out = if d.length() > 1.0 { unit(d) } else { towards_centre };
            let mut p = self.legal_target(i, ball + out * r);
            if (p - ball).length() < r - 1.0 {
                // The wall is in the way: go round towards the field's centre.
                let side = if out.x * towards_centre.y - out.y * towards_centre.x >= 0.0 {
                    1.0
                } else {
                    -1.0
                };
                let a = angle_of(towards_centre) + side * 0.6;
                p = self.legal_target(i, ball + dir(a) * r);
            }
            c.target = p;
        }
    }

    // ------------------------------------------------------------ actions

    /// Kicks.
    pub(super) fn act(&mut self, cmd: &[Command; ROBOTS]) {
        let Some(h) = self.ball.holder else {
            return;
        };
        if self.phase != Phase::Running {
            return;
        }
        let heading = self.bodies[h].heading;
        let aligned = |tol: f64| wrap_angle(cmd[h].heading - heading).abs() < tol;
        if is_attacker(h) {
            let held = self.t - self.off.since;
            if let Some(aim) = self.off.shot {
                if aligned(0.03) {
                    // The lane the ball will really take: the robot's
                    // heading plus its own motion.
                    let v = 5000.0 + self.rng.random_range(-300.0..300.0);
                    let b = self.bodies[h];
                    let d = unit(dir(b.heading) * v + b.vel);
                    let real_aim = (d.x > 0.2)
                        .then(|| self.ball.pos + d * ((FIELD_LENGTH / 2.0 - self.ball.pos.x) / d.x));
                    if real_aim
                        .is_some_and(|a| (a - aim).length() < 300.0 && self.shot_clearance(h, a).is_some())
                    {
                        self.kick(h, v);
                        self.off.primary = None;
                    }
                    // Kicked, or the lane closed: think again.
                    self.off.shot = None;
                }
            } else if let Some(mut p) = self.off.pass {
                let r = usize::from(p.receiver);
                let ready = (self.bodies[r].pos - p.receiver_target).length() < 250.0;
                let from = self.ball.pos;
                let lane_clear = self
                    .bodies
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != h && i != r)
                    .all(|(_, b)| {
                        distance_to_segment(b.pos, from, p.ball_target) > ROBOT_RADIUS + BALL_RADIUS + 40.0
                    });
                let planned = self.t - self.off.planned_at;
                if planned >= 0.5 && (!lane_clear || planned >= 3.0) {
                    // Blocked, or the receiver does not get there: think again.
                    self.off.pass = None;
                } else if held >= self.off.hold_for && aligned(0.06) && ready && lane_clear {
                    let d = (p.ball_target - self.ball.pos).length();
                    let arrive = self.rng.random_range(1800.0..2400.0);
                    let v = (arrive * arrive + 2.0 * BALL_DECEL * d)
                        .sqrt()
                        .clamp(2500.0, 4000.0);
                    let from = self.ball.pos;
                    self.kick(h, v);
                    self.passes.push(Pass {
                        t: self.t,
                        passer: h as u8,
                        receiver: p.receiver,
                        from,
                        target: p.ball_target,
                        speed: v,
                        received: None,
                    });
                    p.kicked = true;
                    self.off.pass = Some(p);
                    self.off.flight = Some(Flight {
                        receiver: r,
                        kicked_at: self.t,
                        pass: self.passes.len() - 1,
                    });
                    self.off.last_passer = Some(h);
                    // The receiver is now the primary attacker; the others,
                    // the passer among them, take the zones.
                    self.off.primary = Some(r);
                    if let Some(zones) = self.off.zones {
                        self.assign_zones(zones.map(|z| (z.min, z.max)), r);
                    }
                }
            }
        } else if aligned(0.08) {
            let to = self.free_kick.unwrap_or_else(|| self.clearance_target(h));
            let d = (to - self.ball.pos).length();
            let v = (1500.0_f64.powi(2) + 2.0 * BALL_DECEL * d)
                .sqrt()
                .clamp(1800.0, 3500.0);
            // Clearances are chipped over whoever is in the way: the first
            // bounce at about half the way.
            self.chip(h, v, (0.5 * d).clamp(800.0, 2500.0));
            self.free_kick = None;
            self.off.primary = None;
            self.off.pass = None;
            self.off.flight = None;
        }
    }
}
