//! The demo's camera and renderer: a tilted pinhole camera with slight
//! barrel distortion looking at the field, and a ray caster that draws each
//! moment of the run as that camera would film it (carpet and painted
//! lines under uneven light, goals, shaded robots with SSL top patterns
//! and soft shadows, the ball, sensor noise), together with the true floor
//! mask of the frame.
//!
//! Everything that does not move (the floor, its lines and lighting, the
//! goals, the ray through every pixel) is computed once; a frame then only
//! casts rays at the pixels each robot, the ball and their shadows cover.
//! Object edges are anti-aliased with 4 rays per pixel.

use rand::{Rng, SeedableRng};

use crate::calib::camera::look_at;
use crate::calib::presets::{FieldLine, ssl_division_b};
use crate::calib::{CalibError, Calibration};
use crate::demo::world::{
    BALL_RADIUS, BOUNDARY, FIELD_LENGTH, FIELD_WIDTH, LINE_WIDTH, ROBOT_HEIGHT, ROBOT_RADIUS, RobotState,
    Snapshot, Team, goal_walls,
};
use crate::geom::Mat3;
use crate::geom::Vec2;
use crate::geom::vec3::{Vec3 as V3, add, dot, scale, sub};
use crate::image::{FLOOR, MaskImage, RgbImage};

/// `a` scaled to length 1 (a ray or normal direction, never zero).
fn normalize(a: V3) -> V3 {
    scale(a, 1.0 / dot(a, a).sqrt())
}

/// Radial distortion of the demo camera (OpenCV's k1, k2): slight barrel.
pub const DISTORTION: [f64; 2] = [-0.06, 0.01];

/// A pinhole camera with radial distortion in OpenCV's convention (see
/// `calib::camera`): world point `X` → `R·X + t` → `(x/z, y/z)` → distorted
/// by `k1, k2` → pixels by `K` (pixel centres at integers).
#[derive(Clone, Debug, PartialEq)]
pub struct Camera {
    /// Camera matrix.
    pub k: Mat3,
    /// `[k1, k2]`.
    pub dist: [f64; 2],
    /// Rotation world → camera.
    pub r: Mat3,
    /// Translation world → camera.
    pub t: V3,
    /// Camera centre in the world (mm).
    pub eye: V3,
    pub width: u32,
    pub height: u32,
    /// It sees past the hall's floor: walls and sky are rendered (the
    /// demo's camera above the field sees only floor).
    pub sees_hall: bool,
}

impl Camera {
    /// The demo's camera for a `width`×`height` video: above the side line,
    /// tilted down towards the field, its focal length chosen so the whole
    /// carpet fills the frame with a small margin.
    pub fn demo(width: u32, height: u32) -> Result<Camera, CalibError> {
        let eye = [-500.0, -5600.0, 6200.0];
        let (r, t) = look_at(eye, [150.0, 350.0, 0.0])?;
        let (w, h) = (f64::from(width), f64::from(height));
        let (cx, cy) = ((w - 1.0) / 2.0, (h - 1.0) / 2.0);
        let mut cam = Camera {
            k: [[w, 0.0, cx], [0.0, w, cy], [0.0, 0.0, 1.0]],
            dist: DISTORTION,
            r,
            t,
            eye,
            width,
            height,
            sees_hall: false,
        };
        // The carpet's outline and the goals' back corners must be in view.
        let (hl, hw) = (FIELD_LENGTH / 2.0 + BOUNDARY, FIELD_WIDTH / 2.0 + BOUNDARY);
        let outline: Vec<V3> = (0..=40)
            .flat_map(|i| {
                let s = f64::from(i) / 40.0;
                [
                    [-hl + 2.0 * hl * s, -hw, 0.0],
                    [-hl + 2.0 * hl * s, hw, 0.0],
                    [-hl, -hw + 2.0 * hw * s, 0.0],
                    [hl, -hw + 2.0 * hw * s, 0.0],
                ]
            })
            .collect();
        // Aim at the middle of the carpet's image, then zoom to fit; repeat
        // (each step changes the other a little).
        for _ in 0..12 {
            let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            for p in &outline {
                let q = cam
                    .project(*p)
                    .ok_or_else(|| CalibError::InvalidCamera("the field is behind the demo camera".into()))?;
                for k in 0..2 {
                    lo[k] = lo[k].min(q[k]);
                    hi[k] = hi[k].max(q[k]);
                }
            }
            let extent = ((hi[0] - lo[0]) / w).max((hi[1] - lo[1]) / h);
            let f = cam.k[0][0] * 0.97 / extent;
            let d = cam.ray((lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0);
            if d[2] >= -1e-9 {
                return Err(CalibError::InvalidCamera(
                    "the demo camera does not look down".into(),
                ));
            }
            let target = add(eye, scale(d, -eye[2] / d[2]));
            let (r, t) = look_at(eye, target)?;
            (cam.r, cam.t) = (r, t);
            cam.k[0][0] = f;
            cam.k[1][1] = f;
        }
        Ok(cam)
    }

    /// A low camera at the side of the hall, 1.6 m up and 9.5 m from the
    /// field's middle, looking at it: it sees the near carpet, the hall's
    /// walls (advertising boards, green stands) and the sky above them.
    pub fn stand(width: u32, height: u32) -> Result<Camera, CalibError> {
        let eye = [0.0, -9500.0, 1600.0];
        let (r, t) = look_at(eye, [0.0, 300.0, 0.0])?;
        let (w, h) = (f64::from(width), f64::from(height));
        let f = 0.9 * w;
        Ok(Camera {
            k: [
                [f, 0.0, (w - 1.0) / 2.0],
                [0.0, f, (h - 1.0) / 2.0],
                [0.0, 0.0, 1.0],
            ],
            dist: DISTORTION,
            r,
            t,
            eye,
            width,
            height,
            sees_hall: true,
        })
    }

    /// The image point of world point `p`, or `None` behind the camera.
    pub fn project(&self, p: V3) -> Option<[f64; 2]> {
        let r = &self.r;
        let xc = [
            dot(r[0], p) + self.t[0],
            dot(r[1], p) + self.t[1],
            dot(r[2], p) + self.t[2],
        ];
        if xc[2] <= 1e-9 {
            return None;
        }
        let (x, y) = (xc[0] / xc[2], xc[1] / xc[2]);
        let r2 = x * x + y * y;
        let g = 1.0 + self.dist[0] * r2 + self.dist[1] * r2 * r2;
        Some([
            self.k[0][0] * x * g + self.k[0][1] * y * g + self.k[0][2],
            self.k[1][1] * y * g + self.k[1][2],
        ])
    }

    /// The unit direction (world) of the ray through pixel `(u, v)`.
    pub fn ray(&self, u: f64, v: f64) -> V3 {
        let yd = (v - self.k[1][2]) / self.k[1][1];
        let xd = (u - self.k[0][2] - self.k[0][1] * yd) / self.k[0][0];
        // Undistort by fixed-point iteration (converges for this mild lens).
        let (mut x, mut y) = (xd, yd);
        for _ in 0..30 {
            let r2 = x * x + y * y;
            let g = 1.0 + self.dist[0] * r2 + self.dist[1] * r2 * r2;
            x = xd / g;
            y = yd / g;
        }
        let r = &self.r;
        // Rᵀ·(x, y, 1)
        normalize([
            r[0][0] * x + r[1][0] * y + r[2][0],
            r[0][1] * x + r[1][1] * y + r[2][1],
            r[0][2] * x + r[1][2] * y + r[2][2],
        ])
    }

    /// The floor ↔ image calibration of this camera, as a session holds it.
    pub fn calibration(&self) -> Result<Calibration, CalibError> {
        Ok(Calibration::from_camera(&self.k, &self.dist, &self.r, self.t)?
            .with_image_size(self.width, self.height))
    }
}

/// The hall around the field (mm): its walls stand at x = ±HALL[0] and
/// y = ±HALL[1], `WALL_HEIGHT` high; the sky is above.
const HALL: [f64; 2] = [8000.0, 6500.0];
const WALL_HEIGHT: f64 = 2600.0;
/// Height of the advertising boards along the bottom of the walls.
const BOARD_HEIGHT: f64 = 900.0;

/// What a ray from `eye` that leaves the hall's floor sees: a wall (boards
/// below, green stands above) or the sky.
fn beyond(eye: V3, d: V3, seed: u64) -> [f64; 3] {
    let mut t_wall = f64::INFINITY;
    for (axis, half) in [(0, HALL[0]), (1, HALL[1])] {
        for side in [-1.0, 1.0] {
            let wall = side * half;
            if d[axis] * side > 1e-12 {
                t_wall = t_wall.min((wall - eye[axis]) / d[axis]);
            }
        }
    }
    let p = add(eye, scale(d, t_wall));
    if t_wall.is_finite() && p[2] <= WALL_HEIGHT && p[2] >= 0.0 {
        let along = if p[0].abs() >= HALL[0] - 1.0 { p[1] } else { p[0] };
        if p[2] <= BOARD_HEIGHT {
            // Boards of changing colours, 2.5 m each.
            const BOARDS: [[f64; 3]; 5] = [
                [200.0, 40.0, 40.0],
                [30.0, 70.0, 190.0],
                [230.0, 200.0, 40.0],
                [235.0, 235.0, 235.0],
                [20.0, 150.0, 60.0],
            ];
            let k = ((along / 2500.0).floor() as i64).rem_euclid(BOARDS.len() as i64) as usize;
            return BOARDS[k];
        }
        // Stands: green seats and trees behind them, in patches.
        let n = value_noise(along / 400.0, p[2] / 400.0, seed ^ 0x57a4d);
        return [40.0 + 40.0 * n, 95.0 + 50.0 * n, 45.0 + 30.0 * n];
    }
    // Sky: lighter towards the horizon.
    let up = d[2].clamp(0.0, 1.0);
    mix([170.0, 200.0, 235.0], [80.0, 135.0, 215.0], (up * 4.0).min(1.0))
}

/// Sunlight-like key light direction (towards the light).
const LIGHT: V3 = [0.28, -0.42, 0.86];
/// Ceiling lamps over the field (x, y in mm), giving uneven light.
const LAMPS: [[f64; 2]; 4] = [
    [-2600.0, 1400.0],
    [2300.0, 1700.0],
    [-1200.0, -1900.0],
    [3100.0, -1500.0],
];
/// Standard deviation of the sensor noise, in 8-bit levels.
const NOISE_SIGMA: f64 = 2.2;

/// Renders frames of the demo run with their true floor masks.
pub struct Renderer {
    cam: Camera,
    w: usize,
    h: usize,
    /// Ray directions at the pixel centres of a `(w + 1) × (h + 1)` grid.
    rays: Vec<[f32; 3]>,
    /// The static scene (floor, lines, goals, light), RGB.
    background: Vec<u8>,
    /// Distance along the ray to the static scene.
    depth: Vec<f32>,
    /// Floor point of each pixel (NaN where the ray misses the floor).
    floor: Vec<[f32; 2]>,
    /// Pixels where the carpet is seen, before robots and ball.
    carpet: Vec<bool>,
    /// Gaussian noise table.
    noise: Vec<i8>,
    seed: u64,
}

impl Renderer {
    /// Prepares the static scene for `cam`; `seed` varies texture and noise.
    pub fn new(cam: Camera, seed: u64) -> Renderer {
        let (w, h) = (cam.width as usize, cam.height as usize);
        let mut rays = Vec::with_capacity((w + 1) * (h + 1));
        for v in 0..=h {
            for u in 0..=w {
                rays.push(cam.ray(u as f64, v as f64).map(|c| c as f32));
            }
        }
        let mut r = Renderer {
            cam,
            w,
            h,
            rays,
            background: vec![0; w * h * 3],
            depth: vec![f32::INFINITY; w * h],
            floor: vec![[f32::NAN; 2]; w * h],
            carpet: vec![false; w * h],
            noise: Vec::new(),
            seed,
        };
        r.paint_static();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6e6f697365);
        r.noise = (0..1 << 20)
            .map(|_| {
                // Sum of uniforms: close enough to Gaussian for sensor noise.
                let s: f64 = (0..4).map(|_| rng.random::<f64>() - 0.5).sum::<f64>() * (12.0f64 / 4.0).sqrt();
                (s * NOISE_SIGMA).round().clamp(-127.0, 127.0) as i8
            })
            .collect();
        r
    }

    /// The camera this renderer films with.
    pub fn camera(&self) -> &Camera {
        &self.cam
    }

    fn ray_at(&self, u: usize, v: usize) -> V3 {
        self.rays[v * (self.w + 1) + u].map(f64::from)
    }

    /// Ray through the sub-pixel point `(u + du, v + dv)`, `du, dv ∈ [0, 1)`,
    /// interpolated between pixel-centre rays.
    fn ray_sub(&self, u: usize, v: usize, du: f64, dv: f64) -> V3 {
        let a = self.ray_at(u, v);
        let b = self.ray_at(u + 1, v);
        let c = self.ray_at(u, v + 1);
        let d = self.ray_at(u + 1, v + 1);
        let mut out = [0.0; 3];
        for i in 0..3 {
            out[i] = a[i] * (1.0 - du) * (1.0 - dv)
                + b[i] * du * (1.0 - dv)
                + c[i] * (1.0 - du) * dv
                + d[i] * du * dv;
        }
        out
    }

    fn vignette(&self, u: usize, v: usize) -> f64 {
        let dx = (u as f64 - self.w as f64 / 2.0) / (self.w as f64 / 2.0);
        let dy = (v as f64 - self.h as f64 / 2.0) / (self.w as f64 / 2.0);
        1.0 - 0.22 * (dx * dx + dy * dy)
    }

    /// Brightness of the hall's light at floor point `(x, y)`.
    fn light(x: f64, y: f64) -> f64 {
        let lamps: f64 = LAMPS
            .iter()
            .map(|l| {
                let d2 = (x - l[0]).powi(2) + (y - l[1]).powi(2);
                (-d2 / (2.0 * 2300.0f64.powi(2))).exp()
            })
            .sum();
        0.62 + 0.42 * lamps.min(1.6)
    }

    fn paint_static(&mut self) {
        let lines = ssl_division_b().lines;
        let walls: Vec<_> = [1.0, -1.0].iter().flat_map(|&s| goal_walls(s)).collect();
        let eye = self.cam.eye;
        let (hl, hw) = (FIELD_LENGTH / 2.0 + BOUNDARY, FIELD_WIDTH / 2.0 + BOUNDARY);
        for v in 0..self.h {
            for u in 0..self.w {
                let i = v * self.w + u;
                let d = self.ray_at(u, v);
                // The nearest goal wall, if any.
                let mut best: Option<(f64, V3)> = None;
                for (lo, hi) in &walls {
                    if let Some((t, n)) = ray_box(eye, d, *lo, *hi)
                        && best.is_none_or(|(bt, _)| t < bt)
                    {
                        best = Some((t, n));
                    }
                }
                let t_floor = if d[2] < -1e-9 {
                    -eye[2] / d[2]
                } else {
                    f64::INFINITY
                };
                // Beyond the hall's floor: its walls and the sky (only a
                // camera low enough to see past the floor's edge sees them).
                let past_hall = |t: f64| {
                    let p = add(eye, scale(d, t));
                    p[0].abs() > HALL[0] || p[1].abs() > HALL[1]
                };
                let t_floor = if self.cam.sees_hall && (!t_floor.is_finite() || past_hall(t_floor)) {
                    f64::INFINITY
                } else {
                    t_floor
                };
                let vig = self.vignette(u, v);
                let rgb = match best {
                    Some((t, n)) if t < t_floor => {
                        self.depth[i] = t as f32;
                        let p = add(eye, scale(d, t));
                        let base = [58.0, 60.0, 68.0];
                        shade(base, n, d, Self::light(p[0], p[1]) * vig, 0.25, 20.0)
                    }
                    _ if t_floor.is_finite() => {
                        self.depth[i] = t_floor as f32;
                        let p = add(eye, scale(d, t_floor));
                        self.floor[i] = [p[0] as f32, p[1] as f32];
                        // Size of this pixel on the floor, for anti-aliased lines.
                        let q = add(
                            eye,
                            scale(self.ray_at(u + 1, v), -eye[2] / self.ray_at(u + 1, v)[2]),
                        );
                        let foot = ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)).sqrt().max(1e-3);
                        let on_carpet = p[0].abs() <= hl && p[1].abs() <= hw;
                        let tex = texture(p[0], p[1], self.seed);
                        let base = if on_carpet {
                            self.carpet[i] = true;
                            let dist = lines
                                .iter()
                                .map(|l| line_distance(l, p[0], p[1]))
                                .fold(f64::INFINITY, f64::min);
                            let cover = ((LINE_WIDTH / 2.0 - dist) / foot + 0.5).clamp(0.0, 1.0);
                            let green = [46.0 * tex, 122.0 * tex, 58.0 * tex];
                            let white = [222.0, 228.0, 220.0];
                            mix(green, white, cover)
                        } else {
                            let g = 96.0 * tex;
                            [g * 1.05, g, g * 0.93]
                        };
                        base.map(|c| c * Self::light(p[0], p[1]) * vig)
                    }
                    _ if self.cam.sees_hall => beyond(eye, d, self.seed).map(|c| c * vig),
                    _ => [30.0 * vig, 30.0 * vig, 34.0 * vig],
                };
                for (dst, c) in self.background[i * 3..i * 3 + 3].iter_mut().zip(rgb) {
                    *dst = c.round().clamp(0.0, 255.0) as u8;
                }
            }
        }
    }

    /// Draws the moment `snap` into `img` and its floor mask (255 where the
    /// carpet is seen) into `mask`; `frame` varies the sensor noise.
    pub fn render(&self, snap: &Snapshot, frame: u64, img: &mut RgbImage, mask: &mut MaskImage) {
        let (w, h) = (self.w, self.h);
        if img.dim() != (h, w, 3) || !img.is_standard_layout() {
            *img = RgbImage::zeros((h, w, 3));
        }
        if mask.dim() != (h, w) || !mask.is_standard_layout() {
            *mask = MaskImage::zeros((h, w));
        }
        // Standard-layout arrays always have a slice.
        let (Some(px), Some(mk)) = (img.as_slice_mut(), mask.as_slice_mut()) else {
            return;
        };
        px.copy_from_slice(&self.background);
        for (m, &c) in mk.iter_mut().zip(&self.carpet) {
            *m = if c { FLOOR } else { 0 };
        }
        // Soft shadows under the robots and the ball.
        for r in &snap.robots {
            self.shadow(px, r.pos, ROBOT_RADIUS * 1.25, 0.42);
        }
        self.shadow(px, snap.ball.pos, BALL_RADIUS * 1.3, 0.35);
        // Objects, far to near.
        let mut objects: Vec<(f64, Object)> = snap
            .robots
            .iter()
            .map(|r| Object::Robot(*r))
            .chain([Object::Ball {
                centre: [
                    snap.ball.pos.x,
                    snap.ball.pos.y,
                    BALL_RADIUS + snap.ball.height.max(0.0),
                ],
            }])
            .map(|o| {
                let c = o.centre();
                let d = sub(c, self.cam.eye);
                (dot(d, d), o)
            })
            .collect();
        objects.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, o) in &objects {
            self.draw_object(o, px, mk);
        }
        // Sensor noise.
        let mut rng =
            rand::rngs::StdRng::seed_from_u64(self.seed.wrapping_mul(0x9e37_79b9).wrapping_add(frame));
        let n = self.noise.len();
        for chunk in px.chunks_mut(4096) {
            let start = rng.random_range(0..n - chunk.len());
            for (p, &e) in chunk.iter_mut().zip(&self.noise[start..]) {
                *p = p.saturating_add_signed(e);
            }
        }
    }

    /// Darkens the floor around `pos` (a blurred disc of `radius`, shifted
    /// away from the light).
    fn shadow(&self, px: &mut [u8], pos: Vec2, radius: f64, strength: f64) {
        let c = [pos.x - LIGHT[0] * 40.0, pos.y - LIGHT[1] * 40.0];
        let reach = radius * 1.8;
        let Some((u0, v0, u1, v1)) = self.bbox(
            &(0..16)
                .map(|k| {
                    let a = f64::from(k) * std::f64::consts::TAU / 16.0;
                    [c[0] + reach * 1.1 * a.cos(), c[1] + reach * 1.1 * a.sin(), 0.0]
                })
                .collect::<Vec<_>>(),
        ) else {
            return;
        };
        for v in v0..v1 {
            for u in u0..u1 {
                let i = v * self.w + u;
                let [fx, fy] = self.floor[i];
                if fx.is_nan() {
                    continue;
                }
                let d = ((f64::from(fx) - c[0]).powi(2) + (f64::from(fy) - c[1]).powi(2)).sqrt();
                let s = 1.0 - smoothstep(radius * 0.6, reach, d);
                if s > 0.0 {
                    let f = 1.0 - strength * s;
                    for k in 0..3 {
                        px[i * 3 + k] = (f64::from(px[i * 3 + k]) * f) as u8;
                    }
                }
            }
        }
    }

    /// The pixel box `(u0, v0, u1, v1)` (exclusive ends) around the images
    /// of `pts`, with a margin, clipped to the frame.
    fn bbox(&self, pts: &[V3]) -> Option<(usize, usize, usize, usize)> {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in pts {
            let q = self.cam.project(*p)?;
            for k in 0..2 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
        }
        let u0 = (lo[0] - 2.0).floor().max(0.0) as usize;
        let v0 = (lo[1] - 2.0).floor().max(0.0) as usize;
        let u1 = ((hi[0] + 3.0).ceil().max(0.0) as usize).min(self.w);
        let v1 = ((hi[1] + 3.0).ceil().max(0.0) as usize).min(self.h);
        (u0 < u1 && v0 < v1).then_some((u0, v0, u1, v1))
    }

    fn draw_object(&self, o: &Object, px: &mut [u8], mk: &mut [u8]) {
        let pts: Vec<V3> = match o {
            Object::Robot(r) => (0..16)
                .flat_map(|k| {
                    let a = f64::from(k) * std::f64::consts::TAU / 16.0;
                    let (x, y) = (
                        r.pos.x + ROBOT_RADIUS * 1.1 * a.cos(),
                        r.pos.y + ROBOT_RADIUS * 1.1 * a.sin(),
                    );
                    [[x, y, 0.0], [x, y, ROBOT_HEIGHT]]
                })
                .collect(),
            Object::Ball { centre } => (0..8)
                .map(|k| {
                    let s = |b: u32| if k & (1 << b) != 0 { 1.2 } else { -1.2 };
                    add(
                        *centre,
                        [s(0) * BALL_RADIUS, s(1) * BALL_RADIUS, s(2) * BALL_RADIUS],
                    )
                })
                .collect(),
        };
        let Some((u0, v0, u1, v1)) = self.bbox(&pts) else {
            return;
        };
        const SUB: [(f64, f64); 4] = [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)];
        let eye = self.cam.eye;
        for v in v0..v1 {
            for u in u0..u1 {
                let i = v * self.w + u;
                let vig = self.vignette(u, v);
                let mut sum = [0.0; 3];
                let mut hits = 0;
                for (du, dv) in SUB {
                    // Sample offsets are relative to the pixel centre: −¼ or +¼.
                    let (su, sv, fu, fv) = sub_origin(u, v, du - 0.5, dv - 0.5);
                    let d = self.ray_sub(su, sv, fu, fv);
                    if let Some((t, rgb)) = o.hit(eye, d)
                        && t < f64::from(self.depth[i])
                    {
                        for k in 0..3 {
                            sum[k] += rgb[k] * vig;
                        }
                        hits += 1;
                    }
                }
                if hits == 0 {
                    continue;
                }
                let cover = f64::from(hits) / 4.0;
                for k in 0..3 {
                    let old = f64::from(px[i * 3 + k]);
                    let new = sum[k] / f64::from(hits);
                    px[i * 3 + k] = (old * (1.0 - cover) + new * cover).round().clamp(0.0, 255.0) as u8;
                }
                if hits >= 2 {
                    mk[i] = 0;
                }
            }
        }
    }
}

/// The grid cell and weights of the point `(u + ou, v + ov)`, `|ou|, |ov| < 1`.
fn sub_origin(u: usize, v: usize, ou: f64, ov: f64) -> (usize, usize, f64, f64) {
    let split = |p: usize, o: f64| {
        if o < 0.0 && p > 0 {
            (p - 1, 1.0 + o)
        } else {
            (p, o.max(0.0))
        }
    };
    let (su, fu) = split(u, ou);
    let (sv, fv) = split(v, ov);
    (su, sv, fu, fv)
}

/// Something that moves: a robot or the ball.
enum Object {
    Robot(RobotState),
    Ball { centre: V3 },
}

/// Colours of the SSL standard pattern.
const PINK: [f64; 3] = [240.0, 40.0, 190.0];
const GREEN: [f64; 3] = [40.0, 215.0, 70.0];
/// Which of the four id dots (front right, front left, back left, back
/// right) are pink for robot ids 0–5 (the rest green), one pattern each.
const PATTERNS: [[bool; 4]; 6] = [
    [true, true, true, true],
    [false, true, true, true],
    [false, false, true, true],
    [true, false, false, true],
    [false, false, false, false],
    [true, true, false, false],
];

impl Object {
    fn centre(&self) -> V3 {
        match self {
            Object::Robot(r) => [r.pos.x, r.pos.y, ROBOT_HEIGHT / 2.0],
            Object::Ball { centre } => *centre,
        }
    }

    /// Where the ray from `o` along `d` first enters the object, and the
    /// colour seen there.
    fn hit(&self, o: V3, d: V3) -> Option<(f64, [f64; 3])> {
        match self {
            Object::Robot(r) => robot_hit(r, o, d),
            Object::Ball { centre } => {
                let oc = sub(o, *centre);
                let b = dot(oc, d);
                let c = dot(oc, oc) - BALL_RADIUS * BALL_RADIUS;
                let disc = b * b - c;
                if disc < 0.0 {
                    return None;
                }
                let t = -b - disc.sqrt();
                let p = add(o, scale(d, t));
                let n = scale(sub(p, *centre), 1.0 / BALL_RADIUS);
                let l = Renderer::light(centre[0], centre[1]);
                Some((t, shade([250.0, 105.0, 12.0], n, d, l, 0.55, 30.0)))
            }
        }
    }
}

/// Distance of the flat front (kicker) from a robot's centre.
const FRONT: f64 = 0.62 * ROBOT_RADIUS;

fn robot_hit(r: &RobotState, o: V3, d: V3) -> Option<(f64, [f64; 3])> {
    let (c, f) = (r.pos, [r.heading.cos(), r.heading.sin()]);
    // Entry/exit intervals of the ray in the three convex pieces; the
    // entering surface is the one with the largest lower bound.
    let (ox, oy) = (o[0] - c.x, o[1] - c.y);
    let a = d[0] * d[0] + d[1] * d[1];
    let b = ox * d[0] + oy * d[1];
    let cc = ox * ox + oy * oy - ROBOT_RADIUS * ROBOT_RADIUS;
    let (mut lo, mut hi, mut surface) = if a < 1e-12 {
        // A vertical ray: inside the disc or not at all.
        if cc > 0.0 {
            return None;
        }
        (f64::NEG_INFINITY, f64::INFINITY, 0)
    } else {
        let disc = b * b - a * cc;
        if disc < 0.0 {
            return None;
        }
        let sq = disc.sqrt();
        ((-b - sq) / a, (-b + sq) / a, 0)
    };
    // 0 ≤ z ≤ H.
    if d[2].abs() < 1e-12 {
        if !(0.0..=ROBOT_HEIGHT).contains(&o[2]) {
            return None;
        }
    } else {
        let (t0, t1) = ((ROBOT_HEIGHT - o[2]) / d[2], -o[2] / d[2]);
        let (zl, zh) = (t0.min(t1), t0.max(t1));
        if zl > lo {
            lo = zl;
            surface = 1;
        }
        hi = hi.min(zh);
    }
    // (p − c)·f ≤ FRONT.
    let alpha = ox * f[0] + oy * f[1];
    let beta = d[0] * f[0] + d[1] * f[1];
    if beta.abs() < 1e-12 {
        if alpha > FRONT {
            return None;
        }
    } else {
        let tf = (FRONT - alpha) / beta;
        if beta > 0.0 {
            hi = hi.min(tf);
        } else if tf > lo {
            lo = tf;
            surface = 2;
        }
    }
    if lo > hi || lo <= 0.0 {
        return None;
    }
    let p = add(o, scale(d, lo));
    let light = Renderer::light(c.x, c.y);
    let rgb = match surface {
        1 => {
            // Top: dark plate, team dot in the centre, four id dots.
            let (qx, qy) = (p[0] - c.x, p[1] - c.y);
            let (s, co) = r.heading.sin_cos();
            let (lx, ly) = (qx * co + qy * s, -qx * s + qy * co);
            let team = match r.team {
                Team::Blue => [30.0, 90.0, 255.0],
                Team::Yellow => [250.0, 215.0, 20.0],
            };
            let pattern = PATTERNS[usize::from(r.id) % PATTERNS.len()];
            let dots = [(55.0f64, -35.0f64), (55.0, 35.0), (-40.0, 52.0), (-40.0, -52.0)];
            let mut base = [28.0, 28.0, 31.0];
            if lx * lx + ly * ly < 25.0 * 25.0 {
                base = team;
            }
            for (k, (dx, dy)) in dots.iter().enumerate() {
                if (lx - dx).powi(2) + (ly - dy).powi(2) < 19.0 * 19.0 {
                    base = if pattern[k] { PINK } else { GREEN };
                }
            }
            shade(base, [0.0, 0.0, 1.0], d, light, 0.35, 60.0)
        }
        2 => shade([72.0, 72.0, 78.0], [f[0], f[1], 0.0], d, light, 0.5, 40.0),
        _ => {
            let n = [(p[0] - c.x) / ROBOT_RADIUS, (p[1] - c.y) / ROBOT_RADIUS, 0.0];
            shade([34.0, 34.0, 38.0], n, d, light, 0.6, 28.0)
        }
    };
    Some((lo, rgb))
}

/// Lambert plus Blinn–Phong shading of `base` with normal `n`, seen along
/// the ray direction `d`, under `light`.
fn shade(base: [f64; 3], n: V3, d: V3, light: f64, specular: f64, power: f64) -> [f64; 3] {
    let l = normalize(LIGHT);
    let diffuse = dot(n, l).max(0.0);
    let half = normalize(sub(l, d));
    let spec = dot(n, half).max(0.0).powf(power) * specular * 255.0;
    base.map(|c| c * (0.45 + 0.7 * diffuse) * light + spec * light.min(1.0))
}

/// Where the ray `o + t·d` enters the box `[lo, hi]`, and the outward
/// normal of the face it enters through.
fn ray_box(o: V3, d: V3, lo: V3, hi: V3) -> Option<(f64, V3)> {
    let (mut t0, mut t1, mut axis, mut sign) = (0.0f64, f64::INFINITY, usize::MAX, 0.0);
    for k in 0..3 {
        if d[k].abs() < 1e-12 {
            if o[k] < lo[k] || o[k] > hi[k] {
                return None;
            }
            continue;
        }
        let (a, b) = ((lo[k] - o[k]) / d[k], (hi[k] - o[k]) / d[k]);
        let (near, far) = if a < b { (a, b) } else { (b, a) };
        if near > t0 {
            t0 = near;
            axis = k;
            sign = if d[k] > 0.0 { -1.0 } else { 1.0 };
        }
        t1 = t1.min(far);
        if t0 > t1 {
            return None;
        }
    }
    if axis == usize::MAX {
        return None;
    }
    let mut n = [0.0; 3];
    n[axis] = sign;
    Some((t0, n))
}

/// Distance from floor point `(x, y)` to the centre of a painted line.
fn line_distance(l: &FieldLine, x: f64, y: f64) -> f64 {
    match *l {
        FieldLine::Segment { a, b } => {
            let (ab, ap) = (b - a, Vec2::new(x, y) - a);
            let len2 = ab.dot(ab);
            let s = if len2 > 0.0 {
                (ap.dot(ab) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (ap - ab * s).length()
        }
        FieldLine::Arc {
            center,
            radius,
            start,
            end,
        } => {
            let p = Vec2::new(x, y) - center;
            let ang = p.y.atan2(p.x);
            let span = end - start;
            let rel = (ang - start).rem_euclid(std::f64::consts::TAU);
            if span >= std::f64::consts::TAU - 1e-9 || rel <= span {
                (p.length() - radius).abs()
            } else {
                let e = |a: f64| (p - Vec2::new(radius * a.cos(), radius * a.sin())).length();
                e(start).min(e(end))
            }
        }
    }
}

/// Carpet/floor brightness variation at `(x, y)`: fine fibre noise and
/// slow patches, around 1.
fn texture(x: f64, y: f64, seed: u64) -> f64 {
    let fine = hash2((x / 6.0).floor() as i64, (y / 6.0).floor() as i64, seed) - 0.5;
    let coarse = value_noise(x / 900.0, y / 900.0, seed ^ 0x51) - 0.5;
    1.0 + 0.09 * fine + 0.12 * coarse
}

fn hash2(x: i64, y: i64, seed: u64) -> f64 {
    let mut h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ seed;
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

fn value_noise(x: f64, y: f64, seed: u64) -> f64 {
    let (xi, yi) = (x.floor(), y.floor());
    let (fx, fy) = (smooth(x - xi), smooth(y - yi));
    let (xi, yi) = (xi as i64, yi as i64);
    let a = hash2(xi, yi, seed);
    let b = hash2(xi + 1, yi, seed);
    let c = hash2(xi, yi + 1, seed);
    let d = hash2(xi + 1, yi + 1, seed);
    let top = a + (b - a) * fx;
    let bottom = c + (d - c) * fx;
    top + (bottom - top) * fy
}

fn smooth(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    smooth(((x - e0) / (e1 - e0)).clamp(0.0, 1.0))
}

fn mix(a: [f64; 3], b: [f64; 3], s: f64) -> [f64; 3] {
    [
        a[0] + (b[0] - a[0]) * s,
        a[1] + (b[1] - a[1]) * s,
        a[2] + (b[2] - a[2]) * s,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::world::{BallState, GOAL_DEPTH, GOAL_HEIGHT, GOAL_WALL};

    fn small() -> Camera {
        Camera::demo(320, 180).unwrap()
    }

    #[test]
    fn projection_matches_the_session_calibration() {
        let cam = small();
        let calib = cam.calibration().unwrap();
        for x in (-4800..=4800).step_by(800) {
            for y in (-3300..=3300).step_by(600) {
                let p = Vec2::new(f64::from(x), f64::from(y));
                let a = cam.project([p.x, p.y, 0.0]).unwrap();
                let b = calib.project(p).unwrap();
                assert!(
                    (a[0] - b.x).abs() < 1e-6 && (a[1] - b.y).abs() < 1e-6,
                    "{p:?}: {a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn rays_invert_the_projection() {
        let cam = small();
        for (u, v) in [
            (0.0, 0.0),
            (319.0, 179.0),
            (160.0, 90.0),
            (17.5, 150.25),
            (300.0, 3.0),
        ] {
            let d = cam.ray(u, v);
            assert!(d[2] < 0.0, "pixel ({u}, {v}) looks above the horizon");
            let t = -cam.eye[2] / d[2];
            let p = add(cam.eye, scale(d, t));
            let [pu, pv] = cam.project(p).unwrap();
            assert!(
                (pu - u).abs() < 1e-6 && (pv - v).abs() < 1e-6,
                "({u}, {v}) → {p:?} → ({pu}, {pv})"
            );
        }
    }

    #[test]
    fn the_whole_carpet_is_in_view_for_any_aspect() {
        for (w, h) in [(320, 180), (1280, 720), (640, 480), (400, 400)] {
            let cam = Camera::demo(w, h).unwrap();
            let (hl, hw) = (FIELD_LENGTH / 2.0 + BOUNDARY, FIELD_WIDTH / 2.0 + BOUNDARY);
            for (x, y) in [(hl, hw), (-hl, hw), (hl, -hw), (-hl, -hw)] {
                let [u, v] = cam.project([x, y, 0.0]).unwrap();
                assert!(
                    (0.0..f64::from(w)).contains(&u) && (0.0..f64::from(h)).contains(&v),
                    "{w}×{h}: corner ({x}, {y}) at ({u}, {v})"
                );
            }
        }
    }

    fn robot(team: Team, x: f64, y: f64) -> RobotState {
        RobotState {
            team,
            id: 0,
            pos: Vec2::new(x, y),
            heading: 0.3,
            vel: Vec2::ZERO,
        }
    }

    fn scene() -> Snapshot {
        Snapshot {
            t: 0.0,
            robots: vec![
                robot(Team::Blue, -1500.0, 700.0),
                robot(Team::Yellow, 1800.0, -900.0),
            ],
            ball: BallState {
                pos: Vec2::new(400.0, 1200.0),
                height: 0.0,
                vel: Vec2::ZERO,
            },
        }
    }

    fn pixel(img: &RgbImage, [u, v]: [f64; 2]) -> [i32; 3] {
        let (u, v) = (u.round() as usize, v.round() as usize);
        [0, 1, 2].map(|c| i32::from(img[[v, u, c]]))
    }

    #[test]
    fn renders_robots_ball_lines_and_the_true_mask() {
        let cam = Camera::demo(640, 360).unwrap();
        let r = Renderer::new(cam.clone(), 7);
        let (mut img, mut mask) = (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0)));
        let s = scene();
        r.render(&s, 0, &mut img, &mut mask);
        assert_eq!(img.dim(), (360, 640, 3));
        let at = |p: V3| {
            let q = cam.project(p).unwrap();
            (
                q,
                pixel(&img, q),
                mask[[q[1].round() as usize, q[0].round() as usize]],
            )
        };
        // The blue team dot on top of the blue robot.
        let (_, c, m) = at([-1500.0, 700.0, ROBOT_HEIGHT]);
        assert!(c[2] > c[0] + 60 && c[2] > c[1] + 30, "blue top {c:?}");
        assert_eq!(m, 0);
        // The yellow one.
        let (_, c, m) = at([1800.0, -900.0, ROBOT_HEIGHT]);
        assert!(c[0] > c[2] + 80 && c[1] > c[2] + 80, "yellow top {c:?}");
        assert_eq!(m, 0);
        // The robot's foot on the floor is hidden by its body.
        assert_eq!(at([-1500.0, 700.0, 0.0]).2, 0);
        // The ball is orange and foreground.
        let (_, c, m) = at([400.0, 1200.0, BALL_RADIUS]);
        assert!(c[0] > c[1] + 50 && c[1] > c[2], "ball {c:?}");
        assert_eq!(m, 0);
        // Open carpet is green floor; a painted line is bright floor.
        let (_, c, m) = at([-3000.0, -1500.0, 0.0]);
        assert!(c[1] > c[0] + 30 && c[1] > c[2] + 30, "carpet {c:?}");
        assert_eq!(m, FLOOR);
        let (_, c, m) = at([0.0, -2000.0, 0.0]);
        assert!(c.iter().all(|&v| v > 110), "halfway line {c:?}");
        assert_eq!(m, FLOOR);
        // Off the carpet is not floor.
        let (q, _, m) = at([0.0, -FIELD_WIDTH / 2.0 - BOUNDARY - 150.0, 0.0]);
        assert!(q[1] < 360.0);
        assert_eq!(m, 0, "off the carpet");
        // Goal walls are not floor; the carpet inside the goal is.
        let back = FIELD_LENGTH / 2.0 + GOAL_DEPTH + GOAL_WALL / 2.0;
        assert_eq!(at([back, 0.0, GOAL_HEIGHT]).2, 0);
        assert_eq!(at([-back, 0.0, GOAL_HEIGHT]).2, 0);
        assert_eq!(at([-FIELD_LENGTH / 2.0 - GOAL_DEPTH / 2.0, 0.0, 0.0]).2, FLOOR);
        // Noise varies between frames but the picture does not.
        let (mut img2, mut mask2) = (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0)));
        r.render(&s, 1, &mut img2, &mut mask2);
        assert_eq!(mask, mask2);
        let diff: i64 = img
            .iter()
            .zip(img2.iter())
            .map(|(a, b)| i64::from(a.abs_diff(*b)))
            .sum();
        let mean = diff as f64 / img.len() as f64;
        assert!(mean > 0.5 && mean < 6.0, "mean noise difference {mean}");
    }

    #[test]
    fn robot_rays_hit_top_side_and_front() {
        let r = robot(Team::Blue, 0.0, 0.0);
        // Straight down onto the top.
        let (t, _) = robot_hit(&r, [0.0, 0.0, 1000.0], [0.0, 0.0, -1.0]).unwrap();
        assert!((t - (1000.0 - ROBOT_HEIGHT)).abs() < 1e-9);
        // Horizontally from behind onto the round side.
        let (t, _) = robot_hit(&r, [-1000.0, 0.0, 50.0], [1.0, 0.0, 0.0]).unwrap();
        assert!((t - (1000.0 - ROBOT_RADIUS)).abs() < 1e-9);
        // From the front onto the flat kicker face.
        let f = [0.3f64.cos(), 0.3f64.sin()];
        let o = [f[0] * 1000.0, f[1] * 1000.0, 50.0];
        let (t, _) = robot_hit(&r, o, [-f[0], -f[1], 0.0]).unwrap();
        assert!((t - (1000.0 - FRONT)).abs() < 1e-9);
        // Past it, or above it.
        assert!(robot_hit(&r, [-1000.0, 200.0, 50.0], [1.0, 0.0, 0.0]).is_none());
        assert!(robot_hit(&r, [-1000.0, 0.0, 200.0], [1.0, 0.0, 0.0]).is_none());
    }

    #[test]
    fn boxes_are_entered_through_the_facing_side() {
        let (t, n) = ray_box(
            [0.0, 0.0, 10.0],
            [0.0, 0.0, -1.0],
            [-1.0, -1.0, 0.0],
            [1.0, 1.0, 2.0],
        )
        .unwrap();
        assert_eq!((t, n), (8.0, [0.0, 0.0, 1.0]));
        assert!(
            ray_box(
                [5.0, 0.0, 10.0],
                [0.0, 0.0, -1.0],
                [-1.0, -1.0, 0.0],
                [1.0, 1.0, 2.0]
            )
            .is_none()
        );
    }

    #[test]
    fn line_distance_of_segments_and_arcs() {
        let seg = FieldLine::Segment {
            a: Vec2::new(0.0, 0.0),
            b: Vec2::new(10.0, 0.0),
        };
        assert_eq!(line_distance(&seg, 5.0, 3.0), 3.0);
        assert_eq!(line_distance(&seg, 13.0, 4.0), 5.0);
        let arc = FieldLine::Arc {
            center: Vec2::ZERO,
            radius: 10.0,
            start: 0.0,
            end: std::f64::consts::FRAC_PI_2,
        };
        assert!((line_distance(&arc, 0.0, 12.0) - 2.0).abs() < 1e-12);
        assert!((line_distance(&arc, 0.0, -10.0) - 200f64.sqrt()).abs() < 1e-9);
    }
}
