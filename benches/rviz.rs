//! Drawing what RViz's default displays draw, at 1080p (issue 47's bars:
//! an OccupancyGrid of 4000 × 4000 cells in at most 2 ms a frame after its
//! first, a PointCloud2 of 100,000 points in at most 5 ms a frame).
//!
//! The map is a building's: 4000 × 4000 cells of 5 cm (200 × 200 m), a
//! 150 × 150 m building of 8 × 6 m rooms with 20 cm walls and doors,
//! furniture, unexplored specks, unknown outside; it goes through the
//! ROS reader (`ros::grid::Map`, its three classes of merged runs) and is
//! drawn by the painter through a 1920 × 1080 camera with lens distortion
//! standing in a room 4 m up: the first frame projects and fills every
//! rectangle (`map_first_frame`), the next ones blend what was kept
//! (`map_next_frame`). The cloud is a 16-ring lidar's sweep of 100,000
//! points (walls and floor around it) read by `ros::cloud2::points` from
//! PointCloud2 bytes (`cloud_decode`) and drawn as squares, in one colour
//! (`cloud_flat`) and a colour each (`cloud_coloured`, intensities through
//! the rainbow). Compositing the overlay onto the frame is measured apart
//! (`composite_*`): it is the frame's, whatever is drawn.
//!
//! `cargo bench --bench rviz`. Figures are in docs/PERFORMANCE.md.

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use underlay::calib::Calibration;
use underlay::calib::camera::look_at;
use underlay::draw::{Overlay, Painter};
use underlay::image::RgbImage;
use underlay::log::{EntityId, Primitive, Raised, Rgba, Shape, Style};
use underlay::ros::value::{Struct, Value};

const W: usize = 1920;
const H: usize = 1080;
const CELLS: usize = 4000;
const POINTS: usize = 100_000;

fn camera(eye: [f64; 3], at: [f64; 3]) -> Calibration {
    let k = [[1100.0, 0.0, 959.5], [0.0, 1100.0, 539.5], [0.0, 0.0, 1.0]];
    let (r, t) = look_at(eye, at).expect("a camera");
    Calibration::from_camera(&k, &[-0.08, 0.02], &r, t)
        .expect("a camera")
        .with_image_size(W as u32, H as u32)
}

/// A deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn st(fields: Vec<(&str, Value<'static>)>) -> Struct<'static> {
    Struct {
        type_name: Arc::from("t"),
        fields: fields.into_iter().map(|(n, v)| (Arc::from(n), v)).collect(),
    }
}

fn f(v: f64) -> Value<'static> {
    Value::Float(v)
}

/// The building's map as an OccupancyGrid message.
fn map_message() -> Struct<'static> {
    let n = CELLS;
    let mut cells = vec![-1i8; n * n];
    let (b0, b1) = (500, 3500); // the building, in cells
    let (room_w, room_h, wall) = (160, 120, 4);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for y in b0..b1 {
        for x in b0..b1 {
            let (rx, ry) = ((x - b0) % room_w, (y - b0) % room_h);
            let on_wall = rx < wall || ry < wall || x >= b1 - wall || y >= b1 - wall;
            // A door 1 m wide in the middle of each wall.
            let door = (rx < wall && (50..70).contains(&ry)) || (ry < wall && (70..90).contains(&rx));
            cells[y * n + x] = if on_wall && !door { 100 } else { 0 };
        }
    }
    // Furniture: a few boxes a room; unexplored specks.
    for ry in (b0..b1 - room_h).step_by(room_h) {
        for rx in (b0..b1 - room_w).step_by(room_w) {
            for _ in 0..3 {
                let (w, h) = (10 + rng.below(30) as usize, 10 + rng.below(20) as usize);
                let (x, y) = (rx + 8 + rng.below(100) as usize, ry + 8 + rng.below(70) as usize);
                for yy in y..(y + h).min(ry + room_h - 4) {
                    for xx in x..(x + w).min(rx + room_w - 4) {
                        cells[yy * n + xx] = 100;
                    }
                }
            }
        }
    }
    for _ in 0..8000 {
        let (x, y) = (b0 + rng.below(3000) as usize, b0 + rng.below(3000) as usize);
        cells[y * n + x] = -1;
    }
    let pose = st(vec![
        (
            "position",
            Value::Struct(st(vec![("x", f(-100.0)), ("y", f(-100.0)), ("z", f(0.0))])),
        ),
        (
            "orientation",
            Value::Struct(st(vec![
                ("x", f(0.0)),
                ("y", f(0.0)),
                ("z", f(0.0)),
                ("w", f(1.0)),
            ])),
        ),
    ]);
    st(vec![
        (
            "header",
            Value::Struct(st(vec![("frame_id", Value::Str("map".into()))])),
        ),
        (
            "info",
            Value::Struct(st(vec![
                ("resolution", f(0.05)),
                ("width", Value::UInt(n as u64)),
                ("height", Value::UInt(n as u64)),
                ("origin", Value::Struct(pose)),
            ])),
        ),
        (
            "data",
            Value::Bytes(Cow::Owned(cells.into_iter().map(|v| v as u8).collect())),
        ),
    ])
}

/// A 16-ring lidar 1.5 m up at the origin: each ray meets the floor or a
/// wall of a 30 × 20 m hall; x, y, z and intensity as float32.
fn cloud_message() -> Struct<'static> {
    let per_ring = POINTS / 16;
    let mut data = Vec::with_capacity(POINTS * 16);
    for ring in 0..16 {
        let elev = (-15.0 + 2.0 * ring as f64).to_radians();
        for k in 0..per_ring {
            let az = std::f64::consts::TAU * k as f64 / per_ring as f64;
            let d = [elev.cos() * az.cos(), elev.cos() * az.sin(), elev.sin()];
            let wall = [15.0 / d[0].abs().max(1e-9), 10.0 / d[1].abs().max(1e-9)]
                .into_iter()
                .fold(f64::INFINITY, f64::min);
            let floor = if d[2] < 0.0 { 1.5 / -d[2] } else { f64::INFINITY };
            let r = wall.min(floor);
            let p = [d[0] * r, d[1] * r, 1.5 + d[2] * r];
            for v in [p[0], p[1], p[2], (ring * 10 + k % 50) as f64] {
                data.extend((v as f32).to_le_bytes());
            }
        }
    }
    let field = |name: &str, offset: i64| {
        Value::Struct(st(vec![
            ("name", Value::Str(name.to_owned().into())),
            ("offset", Value::Int(offset)),
            ("datatype", Value::UInt(7)),
            ("count", Value::UInt(1)),
        ]))
    };
    st(vec![
        ("height", Value::UInt(1)),
        ("width", Value::UInt(POINTS as u64)),
        (
            "fields",
            Value::Array(vec![
                field("x", 0),
                field("y", 4),
                field("z", 8),
                field("intensity", 12),
            ]),
        ),
        ("is_bigendian", Value::Bool(false)),
        ("point_step", Value::UInt(16)),
        ("row_step", Value::UInt(16 * POINTS as u64)),
        ("data", Value::Bytes(Cow::Owned(data))),
    ])
}

fn prim(shape: Shape, colour: Rgba) -> Primitive {
    Primitive {
        shape,
        style: Style {
            fill: Some(colour),
            ..Style::color(colour)
        },
        entity: EntityId(0),
        level: 1,
    }
}

/// Draws `prims` onto a cleared overlay, a new frame for the painter.
fn draw(painter: &mut Painter, ov: &mut Overlay, calib: &Calibration, prims: &[Primitive]) {
    painter.new_frame();
    painter.depth_samples.clear();
    ov.clear();
    for p in prims {
        painter.primitive(ov, calib, p).expect("drawable");
    }
}

/// The process's CPU seconds so far (user + system), from
/// `/proc/self/stat` (Linux; ticks of 1/100 s): steadier than wall-clock
/// time when other processes share the cores.
fn process_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU milliseconds per call of `frame`, over at least `secs` s of CPU.
fn cpu_ms(secs: f64, mut frame: impl FnMut()) -> f64 {
    frame();
    let Some(t0) = process_cpu_seconds() else {
        return f64::NAN;
    };
    let mut n = 0u32;
    loop {
        frame();
        n += 1;
        let t = process_cpu_seconds().unwrap_or(f64::NAN);
        if t.is_nan() || t - t0 >= secs {
            return (t - t0) * 1e3 / f64::from(n);
        }
    }
}

fn arg(a: &str) -> bool {
    std::env::args().any(|x| x == a)
}

fn bench(c: &mut Criterion) {
    let trial = !arg("--bench");
    // The map: read as the ROS reader reads it.
    let msg = map_message();
    let t = std::time::Instant::now();
    let map = underlay::ros::grid::Map::new(&msg).expect("a map");
    let made = t.elapsed();
    let (classes, _) = map.cells(&underlay::ros::tf::Transform::IDENTITY);
    let map_prims: Vec<Primitive> = classes
        .into_iter()
        .zip(underlay::ros::grid::CLASSES)
        .filter_map(|(c, (_, colour))| Some(prim(Shape::Cells(Arc::new(c?)), colour)))
        .collect();
    let rects: Vec<usize> = map_prims
        .iter()
        .map(|p| match &p.shape {
            Shape::Cells(c) => c.len(),
            _ => 0,
        })
        .collect();
    eprintln!(
        "bench rviz: a map of {CELLS} × {CELLS} cells made into {rects:?} rectangles (occupied, free, unknown) in {:.0} ms",
        made.as_secs_f64() * 1e3
    );
    // A camera in a room near the building's middle, 4 m up, looking
    // along the corridor of rooms.
    let map_cam = camera([-2.0, -3.0, 4.0], [12.0, 9.0, 0.0]);
    let mut painter = Painter::new(W, H);
    let mut ov = Overlay::new(W, H);
    let t = std::time::Instant::now();
    draw(&mut painter, &mut ov, &map_cam, &map_prims);
    eprintln!(
        "bench rviz: the map's first frame {:.0} ms, {} pixels drawn",
        t.elapsed().as_secs_f64() * 1e3,
        ov.dirty_pixels()
    );
    let mut frame = RgbImage::from_elem((H, W, 3), 90);
    if arg("profile-map") {
        // For `valgrind --tool=callgrind`: the next frames alone.
        for _ in 0..20 {
            draw(&mut painter, &mut ov, &map_cam, &map_prims);
        }
        return;
    }

    let mut g = c.benchmark_group("rviz");
    g.sample_size(if trial { 10 } else { 30 })
        .measurement_time(Duration::from_secs(if trial { 1 } else { 10 }));
    g.bench_function("map_next_frame", |b| {
        b.iter(|| draw(&mut painter, &mut ov, &map_cam, black_box(&map_prims)))
    });
    g.bench_function("composite_map", |b| {
        b.iter(|| ov.composite(black_box(&mut frame), None).expect("composites"))
    });
    g.sample_size(10);
    g.bench_function("map_first_frame", |b| {
        b.iter_batched(
            || (Painter::new(W, H), Overlay::new(W, H)),
            |(mut p, mut o)| draw(&mut p, &mut o, &map_cam, &map_prims),
            BatchSize::PerIteration,
        )
    });

    // The cloud.
    let cloud = cloud_message();
    g.sample_size(if trial { 10 } else { 30 });
    g.bench_function("cloud_decode", |b| {
        b.iter(|| underlay::ros::cloud2::points(black_box(&cloud), POINTS, true).expect("a cloud"))
    });
    let read = underlay::ros::cloud2::points(&cloud, POINTS, true).expect("a cloud");
    assert_eq!(read.points.len(), POINTS);
    let points: Arc<[[f32; 3]]> = read.points.into();
    let cloud_cam = camera([-6.0, -4.0, 3.0], [4.0, 3.0, 0.5]);
    let set = |colors: Vec<Rgba>| {
        vec![prim(
            Shape::Raised(Box::new(Raised::Points {
                points: Arc::clone(&points),
                colors: colors.into(),
                size: 0.0,
            })),
            Rgba::WHITE,
        )]
    };
    let (flat, coloured) = (set(Vec::new()), set(read.colors));
    let mut ov = Overlay::new(W, H);
    draw(&mut painter, &mut ov, &cloud_cam, &coloured);
    eprintln!(
        "bench rviz: the cloud's {POINTS} points draw {} pixels, {} depth samples",
        ov.pixels().iter().filter(|p| p[3] > 0).count(),
        painter.depth_samples.len()
    );
    if arg("profile-cloud") {
        for _ in 0..20 {
            draw(&mut painter, &mut ov, &cloud_cam, &coloured);
        }
        return;
    }
    if arg("cpu-time") {
        let mut map_ov = Overlay::new(W, H);
        draw(&mut painter, &mut map_ov, &map_cam, &map_prims);
        println!(
            "cpu-time map_next_frame {:.2} ms",
            cpu_ms(3.0, || draw(&mut painter, &mut map_ov, &map_cam, &map_prims))
        );
        println!(
            "cpu-time composite_map {:.2} ms",
            cpu_ms(3.0, || map_ov.composite(&mut frame, None).expect("composites"))
        );
        println!(
            "cpu-time map_first_frame {:.1} ms",
            cpu_ms(3.0, || {
                let (mut p, mut o) = (Painter::new(W, H), Overlay::new(W, H));
                draw(&mut p, &mut o, &map_cam, &map_prims)
            })
        );
        println!(
            "cpu-time cloud_decode {:.2} ms",
            cpu_ms(3.0, || {
                black_box(underlay::ros::cloud2::points(&cloud, POINTS, true).expect("a cloud"));
            })
        );
        for (name, prims) in [("cloud_flat", &flat), ("cloud_coloured", &coloured)] {
            println!(
                "cpu-time {name} {:.2} ms",
                cpu_ms(3.0, || draw(&mut painter, &mut ov, &cloud_cam, prims))
            );
        }
        println!(
            "cpu-time composite_cloud {:.2} ms",
            cpu_ms(3.0, || ov.composite(&mut frame, None).expect("composites"))
        );
        return;
    }
    g.bench_function("cloud_flat", |b| {
        b.iter(|| draw(&mut painter, &mut ov, &cloud_cam, black_box(&flat)))
    });
    g.bench_function("cloud_coloured", |b| {
        b.iter(|| draw(&mut painter, &mut ov, &cloud_cam, black_box(&coloured)))
    });
    g.bench_function("composite_cloud", |b| {
        b.iter(|| ov.composite(black_box(&mut frame), None).expect("composites"))
    });
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
