//! The referee and autoref: the ball going out stops the game, a ball
//! placement follows and play resumes with a free kick; during a stop,
//! robots too close to the ball are recorded.

use super::*;

impl Game {
    pub(super) fn referee(&mut self) {
        let ball = self.ball.pos;
        let half = Vec2::new(FIELD_LENGTH / 2.0, FIELD_WIDTH / 2.0);
        match self.phase {
            Phase::Running => {
                let out_x = ball.x.abs() > half.x + BALL_RADIUS;
                let out_y = ball.y.abs() > half.y + BALL_RADIUS;
                if out_x || out_y {
                    self.ball_out(out_x);
                }
            }
            Phase::Stop => {
                if let Some(stop) = self.stop
                    && self.t - stop.since >= STOP_LENGTH
                {
                    self.start_placement();
                }
            }
            Phase::BallPlacement => {
                if let Some(mut stop) = self.stop {
                    if stop.placed_at.is_none()
                        && stop.placer.is_some_and(|p| {
                            self.ball.holder == Some(p) && self.bodies[p].vel.length() < 100.0
                        })
                        && (ball - stop.point).length() < 60.0
                    {
                        stop.placed_at = Some(self.t);
                        self.stop = Some(stop);
                    }
                    if stop.placed_at.is_some_and(|t| self.t - t >= 0.5) {
                        self.resume(stop);
                    }
                }
            }
        }
        if self.phase != Phase::Running {
            self.watch_distances();
        }
    }

    fn ball_out(&mut self, goal_line: bool) {
        let (pos, vel) = (self.ball.pos, self.ball.vel);
        let half = Vec2::new(FIELD_LENGTH / 2.0, FIELD_WIDTH / 2.0);
        let (exit, line) = if goal_line {
            let x = pos.x.signum() * half.x;
            let y = if vel.x.abs() > 1e-6 {
                pos.y - vel.y * (pos.x - x) / vel.x
            } else {
                pos.y
            };
            (
                Vec2::new(x, y.clamp(-half.y, half.y)),
                (Vec2::new(x, -half.y), Vec2::new(x, half.y)),
            )
        } else {
            let y = pos.y.signum() * half.y;
            let x = if vel.y.abs() > 1e-6 {
                pos.x - vel.x * (pos.y - y) / vel.y
            } else {
                pos.x
            };
            (
                Vec2::new(x.clamp(-half.x, half.x), y),
                (Vec2::new(-half.x, y), Vec2::new(half.x, y)),
            )
        };
        self.outs.push(BallOut {
            t: self.t,
            exit,
            line,
            last_touch: self.touches.last().copied(),
            restart: None,
        });
        self.ball.holder = None;
        self.off = OffenceState::fresh(self.off.zones, self.t, 1.0);
        let y0 = usize::from(TEAM_SIZE);
        let offender = (y0 + 1..ROBOTS)
            .min_by(|&a, &b| {
                (self.bodies[a].pos - pos)
                    .length()
                    .total_cmp(&(self.bodies[b].pos - pos).length())
            })
            .unwrap_or(y0 + 1);
        let point = if goal_line {
            Vec2::new(
                exit.x.signum() * (half.x - DEFENSE_DEPTH - 300.0),
                exit.y.clamp(-(half.y - 500.0), half.y - 500.0),
            )
        } else {
            Vec2::new(
                exit.x
                    .clamp(-(half.x - DEFENSE_DEPTH - 300.0), half.x - DEFENSE_DEPTH - 300.0),
                exit.y.signum() * (half.y - 300.0),
            )
        };
        let kick_to = Vec2::new(point.x * 0.2 - 1000.0, (-point.y * 0.4).clamp(-2000.0, 2000.0));
        self.phase = Phase::Stop;
        self.stop = Some(StopState {
            since: self.t,
            offender,
            placer: None,
            point,
            kick_to,
            placed_at: None,
        });
    }

    fn start_placement(&mut self) {
        let Some(mut stop) = self.stop else {
            return;
        };
        let ball = self.ball.pos;
        let y0 = usize::from(TEAM_SIZE);
        stop.placer = (y0 + 1..ROBOTS).filter(|&i| i != stop.offender).min_by(|&a, &b| {
            (self.bodies[a].pos - ball)
                .length()
                .total_cmp(&(self.bodies[b].pos - ball).length())
        });
        self.stop = Some(stop);
        self.phase = Phase::BallPlacement;
    }

    fn resume(&mut self, stop: StopState) {
        self.close_violations();
        self.phase = Phase::Running;
        self.free_kick = Some(stop.kick_to);
        self.stop = None;
        if let Some(out) = self.outs.last_mut() {
            out.restart = Some(self.t);
        }
    }

    /// The autoref's distance check during a stop.
    fn watch_distances(&mut self) {
        let Some(stop) = self.stop else {
            return;
        };
        if self.t - stop.since < STOP_GRACE {
            return;
        }
        let ball = self.ball.pos;
        for i in 0..ROBOTS {
            let p = self.bodies[i].pos;
            let edge = (p - ball).length() - ROBOT_RADIUS;
            let exempt = self.phase == Phase::BallPlacement && stop.placer == Some(i);
            if edge < STOP_DISTANCE && !exempt {
                let (team, id) = robot_of(i);
                let v = self.open_close[i].get_or_insert(TooClose {
                    start: self.t,
                    end: self.t,
                    team,
                    id,
                    closest: edge,
                    at: self.t,
                    robot: p,
                    ball,
                });
                v.end = self.t;
                if edge < v.closest {
                    v.closest = edge;
                    v.at = self.t;
                    v.robot = p;
                    v.ball = ball;
                }
            } else if let Some(v) = self.open_close[i].take() {
                self.too_close.push(v);
            }
        }
    }

    fn close_violations(&mut self) {
        for v in self.open_close.iter_mut().filter_map(Option::take) {
            self.too_close.push(v);
        }
        self.too_close.sort_by(|a, b| a.start.total_cmp(&b.start));
    }

    pub(super) fn finish(&mut self) {
        self.close_violations();
    }
}
