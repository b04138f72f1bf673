//! Moving robots and ball one step: bounded acceleration, speed and turn
//! rate, robots keeping apart and off the walls, the rolling ball with
//! friction, its contacts with robots and walls, kicks, catches and
//! touches.

use super::field::{ball_bounds, in_defense_area, inside_ball_bounds, is_attacker, robot_bounds};
use super::*;
use crate::geom::vec2::{angle_of, clamp_len, dir, unit, wrap_angle};

impl Game {
    pub(super) fn kick(&mut self, h: usize, speed: f64) {
        let b = self.bodies[h];
        self.ball.holder = None;
        self.off.possessor = None;
        self.ball.vel = dir(b.heading) * speed + b.vel;
        self.ball.ignore = Some((h, self.t + 0.2));
        self.touch(h);
    }

    /// A chipped kick: the ball flies at `speed` over the floor and lands
    /// first `carry` mm away.
    pub(super) fn chip(&mut self, h: usize, speed: f64, carry: f64) {
        let from = self.ball.pos;
        self.kick(h, speed);
        let flight = carry / self.ball.vel.length().max(1.0);
        self.ball.vz = GRAVITY * flight / 2.0;
        self.chips.push(Chip {
            t: self.t,
            end: None,
            from,
        });
    }

    /// The chipped ball's flight, one step: exact for constant gravity,
    /// bouncing with [`BALL_RESTITUTION`] until it rolls. Returns whether it
    /// is in the air.
    fn fly(&mut self) -> bool {
        if self.ball.height <= 0.0 && self.ball.vz <= 0.0 {
            return false;
        }
        let z = self.ball.height + self.ball.vz * DT - 0.5 * GRAVITY * DT * DT;
        self.ball.vz -= GRAVITY * DT;
        if z > 0.0 {
            self.ball.height = z;
            return true;
        }
        self.ball.height = 0.0;
        let up = -self.ball.vz * BALL_RESTITUTION;
        self.ball.vz = if up > BALL_SETTLE { up } else { 0.0 };
        if self.ball.vz == 0.0
            && let Some(c) = self.chips.last_mut()
            && c.end.is_none()
        {
            c.end = Some(self.t);
        }
        self.ball.vz > 0.0
    }

    fn touch(&mut self, i: usize) {
        let (team, id) = robot_of(i);
        if let Some(last) = self.touches.last()
            && last.team == team
            && last.id == id
            && self.t - last.t < 0.5
        {
            return;
        }
        self.touches.push(Touch {
            t: self.t,
            team,
            id,
            pos: self.ball.pos,
        });
    }

    /// Whether robot `i` catches a ball touching its dribbler.
    fn can_catch(&self, i: usize) -> bool {
        match self.phase {
            Phase::Running => {
                is_attacker(i)
                    || self.yellow_chaser == Some(i)
                    || (i == 0 && in_defense_area(self.ball.pos, 0.0) && self.ball.pos.x < 0.0)
                    || (i == usize::from(TEAM_SIZE)
                        && in_defense_area(self.ball.pos, 0.0)
                        && self.ball.pos.x > 0.0)
            }
            Phase::BallPlacement => self.stop.and_then(|s| s.placer) == Some(i),
            Phase::Stop => false,
        }
    }

    pub(super) fn step(&mut self, cmd: &[Command; ROBOTS]) {
        self.step += 1;
        let n = ROBOTS;
        // Preferred velocities: arrive at the target, keep apart.
        let mut v_new = [Vec2::ZERO; ROBOTS];
        for i in 0..n {
            let b = self.bodies[i];
            let c = cmd[i];
            let d = c.target - b.pos;
            let dist = d.length();
            let speed = c.vmax.min((2.0 * 0.8 * MAX_ACCEL * (dist - 3.0).max(0.0)).sqrt());
            let mut pref = unit(d) * speed;
            for (j, o) in self.bodies.iter().enumerate() {
                if j == i {
                    continue;
                }
                let off = b.pos - o.pos;
                let gap = off.length() - MIN_GAP;
                if gap < 300.0 {
                    let k = (1.0 - gap.max(0.0) / 300.0).powi(2);
                    let give = if c.priority && !cmd[j].priority { 0.2 } else { 1.0 };
                    pref = pref + unit(off) * (900.0 * k * give);
                }
            }
            // Robots that are not to get the ball drive round it.
            if self.ball.holder != Some(i) && (self.ball.holder.is_some() || !self.can_catch(i)) {
                let off = b.pos - self.ball.pos;
                let gap = off.length() - (ROBOT_RADIUS + BALL_RADIUS + 40.0);
                if gap < 200.0 {
                    pref = pref + unit(off) * (900.0 * (1.0 - gap.max(0.0) / 200.0).powi(2));
                }
            }
            pref = clamp_len(pref, c.vmax.min(MAX_SPEED));
            v_new[i] = b.vel + clamp_len(pref - b.vel, MAX_ACCEL * DT);
        }
        // Safety: limit closing speeds so that pairs can still stop in time.
        const SAFE_DECEL: f64 = 1500.0;
        // Walls: the speed towards the boundary's edge must allow stopping
        // before it (and never reach past it within a step).
        let bounds = robot_bounds();
        let allowed = |gap: f64| (2.0 * SAFE_DECEL * gap.max(0.0)).sqrt().min(gap.max(0.0) / DT);
        let wall_excess = |pos: Vec2, v: Vec2| {
            let ex = v.x * pos.x.signum() - allowed(bounds.x - pos.x.abs());
            let ey = v.y * pos.y.signum() - allowed(bounds.y - pos.y.abs());
            (ex, ey)
        };
        // A few rounds, as making way for one robot can mean driving at
        // another or at a wall.
        let mut walled = [false; ROBOTS];
        for _ in 0..3 {
            for i in 0..n {
                for j in i + 1..n {
                    let off = self.bodies[j].pos - self.bodies[i].pos;
                    let d = off.length();
                    if d > MIN_GAP + 500.0 {
                        continue;
                    }
                    let nrm = unit(off);
                    let closing = (v_new[i] - v_new[j]).dot(nrm);
                    let gap = (d - MIN_GAP).max(0.0);
                    let limit = allowed(gap);
                    if closing > limit {
                        // Shares of the correction: a robot at a wall cannot
                        // make way, one busy with the ball leaves most of it
                        // to the other.
                        let share = match (walled[i], walled[j], cmd[i].priority, cmd[j].priority) {
                            (true, false, ..) => 0.0,
                            (false, true, ..) => 1.0,
                            (_, _, true, false) => 0.2,
                            (_, _, false, true) => 0.8,
                            _ => 0.5,
                        };
                        let e = closing - limit;
                        v_new[i] = v_new[i] - nrm * (e * share);
                        v_new[j] = v_new[j] + nrm * (e * (1.0 - share));
                    }
                }
            }
            for (i, b) in self.bodies.iter().enumerate() {
                let (ex, ey) = wall_excess(b.pos, v_new[i]);
                if ex > 0.0 {
                    v_new[i].x -= b.pos.x.signum() * ex;
                    walled[i] = true;
                }
                if ey > 0.0 {
                    v_new[i].y -= b.pos.y.signum() * ey;
                    walled[i] = true;
                }
            }
        }
        let budget = MAX_ACCEL * DT;
        for (i, b) in self.bodies.iter_mut().enumerate() {
            let step = v_new[i] - b.vel;
            let mut v = b.vel + clamp_len(step, budget);
            let (ex, ey) = wall_excess(b.pos, v);
            if ex > 1e-9 || ey > 1e-9 {
                // Braking from a wall first; the other axis gets what is left.
                let (first, second) = if ex > 1e-9 {
                    (step.x, step.y)
                } else {
                    (step.y, step.x)
                };
                let d1 = first.clamp(-budget, budget);
                let rest = (budget * budget - d1 * d1).max(0.0).sqrt();
                let d2 = second.clamp(-rest, rest);
                v = b.vel
                    + if ex > 1e-9 {
                        Vec2::new(d1, d2)
                    } else {
                        Vec2::new(d2, d1)
                    };
            }
            let v = clamp_len(v, MAX_SPEED);
            b.vel = v;
            b.pos = b.pos + v * DT;
            if b.pos.x.abs() > bounds.x {
                b.pos.x = b.pos.x.clamp(-bounds.x, bounds.x);
                b.vel.x = 0.0;
            }
            if b.pos.y.abs() > bounds.y {
                b.pos.y = b.pos.y.clamp(-bounds.y, bounds.y);
                b.vel.y = 0.0;
            }
            // Heading: turn towards the commanded heading.
            let holding = self.ball.holder == Some(i);
            let max_rate = if holding { 4.0 } else { MAX_TURN_RATE };
            let err = wrap_angle(cmd[i].heading - b.heading);
            let want = (err * 8.0).clamp(-max_rate, max_rate);
            b.omega += (want - b.omega).clamp(-MAX_TURN_ACCEL * DT, MAX_TURN_ACCEL * DT);
            b.omega = b.omega.clamp(-MAX_TURN_RATE, MAX_TURN_RATE);
            b.heading = wrap_angle(b.heading + b.omega * DT);
        }
        // Last resort: robots never overlap.
        for i in 0..n {
            for j in i + 1..n {
                let off = self.bodies[j].pos - self.bodies[i].pos;
                let d = off.length();
                let min = 2.0 * ROBOT_RADIUS + 2.0;
                if d < min {
                    let nrm = if d > 1e-9 {
                        off * (1.0 / d)
                    } else {
                        Vec2::new(1.0, 0.0)
                    };
                    let push = nrm * ((min - d) / 2.0);
                    self.bodies[i].pos = self.bodies[i].pos - push;
                    self.bodies[j].pos = self.bodies[j].pos + push;
                }
            }
        }
        for b in &mut self.bodies {
            b.pos = Vec2::new(
                b.pos.x.clamp(-bounds.x, bounds.x),
                b.pos.y.clamp(-bounds.y, bounds.y),
            );
        }
        self.step_ball();
    }

    fn step_ball(&mut self) {
        if let Some(h) = self.ball.holder {
            self.ball.pos = inside_ball_bounds(self.hold_point(h));
            self.ball.vel = self.bodies[h].vel;
            return;
        }
        let airborne = self.fly();
        let speed = self.ball.vel.length();
        if speed > 0.0 && !airborne {
            let slower = (speed - BALL_DECEL * DT).max(0.0);
            self.ball.vel = self.ball.vel * (slower / speed);
        }
        // Substeps, so that a fast ball cannot pass through a goal wall.
        const SUBSTEPS: u32 = 4;
        let h = DT / f64::from(SUBSTEPS);
        for _ in 0..SUBSTEPS {
            self.ball.pos = self.ball.pos + self.ball.vel * h;
            self.ball_walls();
        }
        if self.ball.ignore.is_some_and(|(_, until)| self.t >= until) {
            self.ball.ignore = None;
        }
        if airborne {
            // In the air it passes over the robots.
            self.ball.pos = inside_ball_bounds(self.ball.pos);
            return;
        }
        // Contacts with robots: caught by a dribbler or bounced off.
        for i in 0..ROBOTS {
            if self.ball.ignore.is_some_and(|(k, _)| k == i) {
                continue;
            }
            let b = self.bodies[i];
            let off = self.ball.pos - b.pos;
            let d = off.length();
            if d >= ROBOT_RADIUS + BALL_RADIUS {
                continue;
            }
            let nrm = if d > 1e-9 { off * (1.0 / d) } else { dir(b.heading) };
            if self.can_catch(i) && wrap_angle(angle_of(nrm) - b.heading).abs() < CATCH_ANGLE {
                self.catch(i);
                return;
            }
            self.ball.pos = b.pos + nrm * (ROBOT_RADIUS + BALL_RADIUS);
            let rel = self.ball.vel - b.vel;
            let vn = rel.dot(nrm);
            if vn < 0.0 {
                self.ball.vel = self.ball.vel - nrm * ((1.0 + ROBOT_BOUNCE) * vn);
                if vn < -200.0 {
                    self.touch(i);
                }
                if self.off.flight.is_some_and(|f| f.receiver != i) {
                    self.off.flight = None;
                    self.off.pass = None;
                }
            }
        }
        self.ball.pos = inside_ball_bounds(self.ball.pos);
    }

    /// Contacts of the free ball with the walls at the boundary's edge and
    /// with the goals (side walls reaching back to the boundary's edge, so
    /// that nothing gets behind a goal, and the back wall). A wall reverses
    /// and damps the normal speed and brakes the ball along it.
    fn ball_walls(&mut self) {
        let bb = ball_bounds();
        let (mut p, mut v) = (self.ball.pos, self.ball.vel);
        let bounce = |p: &mut Vec2, v: &mut Vec2, nrm: Vec2, depth: f64| {
            *p = *p + nrm * depth;
            let vn = v.dot(nrm);
            if vn < 0.0 {
                let along = *v - nrm * vn;
                *v = along * WALL_FRICTION - nrm * (vn * WALL_BOUNCE);
            }
        };
        for (pos, n) in [(p.x, Vec2::new(-1.0, 0.0)), (p.y, Vec2::new(0.0, -1.0))] {
            let max = if n.x != 0.0 { bb.x } else { bb.y };
            if pos.abs() > max {
                let nrm = n * pos.signum();
                bounce(&mut p, &mut v, nrm, pos.abs() - max);
            }
        }
        let hl = FIELD_LENGTH / 2.0;
        let (wy, back) = (
            GOAL_WIDTH / 2.0 + GOAL_WALL / 2.0,
            hl + GOAL_DEPTH + GOAL_WALL / 2.0,
        );
        let reach = BALL_RADIUS + GOAL_WALL / 2.0;
        for side in [1.0, -1.0] {
            let walls = [
                (Vec2::new(side * hl, wy), Vec2::new(side * (hl + BOUNDARY), wy)),
                (Vec2::new(side * hl, -wy), Vec2::new(side * (hl + BOUNDARY), -wy)),
                (Vec2::new(side * back, -wy), Vec2::new(side * back, wy)),
            ];
            for (a, b) in walls {
                let ab = b - a;
                let k = ((p - a).dot(ab) / ab.dot(ab)).clamp(0.0, 1.0);
                let c = a + ab * k;
                let d = (p - c).length();
                if d < reach {
                    let nrm = if d > 1e-9 {
                        (p - c) * (1.0 / d)
                    } else {
                        unit(Vec2::ZERO - p)
                    };
                    bounce(&mut p, &mut v, nrm, reach - d);
                }
            }
        }
        self.ball.pos = p;
        self.ball.vel = v;
    }

    fn catch(&mut self, i: usize) {
        self.ball.holder = Some(i);
        self.ball.height = 0.0;
        self.ball.vz = 0.0;
        self.ball.ignore = None;
        self.touch(i);
        if let Some(f) = self.off.flight
            && f.receiver == i
            && let Some(p) = self.passes.get_mut(f.pass)
        {
            p.received = Some(self.t);
        }
        self.ball.pos = inside_ball_bounds(self.hold_point(i));
        self.ball.vel = self.bodies[i].vel;
    }
}
