//! A 3D match seen through an agent's head camera (`--agent-view`): the
//! real binary exports the fixture match (`tests/data/sim3d/`, 25–28 s)
//! through Alpha 1's or Bravo 2's camera, and what the agent saw lands on
//! the rendered match.

use std::path::{Path, PathBuf};

use underlay::geom::Vec2;
use underlay::image::RgbImage;
use underlay::sim3d::camera::agent_camera;
use underlay::sim3d::{monitor, perception};

use crate::util::{assert_ok, run, text, tmp};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sim3d")
        .join(name)
}

const W: usize = 640;
const H: usize = 360;

/// The first picture of an export of the match through `agent`'s camera,
/// from `from` seconds on, drawing `entity` only.
fn export_frame(dir: &Path, log: &str, agent: &str, from: f64, entity: &str) -> RgbImage {
    let out = dir.join(format!("{agent}-{entity}.mp4").replace('/', "_"));
    let o = run([
        "export".as_ref(),
        fixture("monitor.rsmp.log.gz").as_os_str(),
        "--log".as_ref(),
        fixture(log).as_os_str(),
        "--agent-view".as_ref(),
        agent.as_ref(),
        "--size".as_ref(),
        format!("{W}x{H}").as_ref(),
        "--from".as_ref(),
        format!("{from}").as_ref(),
        "--to".as_ref(),
        format!("{}", from + 0.05).as_ref(),
        "--entity".as_ref(),
        entity.as_ref(),
        "--crf".as_ref(),
        "0".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_ok(&o);
    let mut d = underlay::video::Decoder::open(&out).unwrap();
    let f = d.next_frame().unwrap().unwrap();
    if std::env::var_os("AGENT_VIEW_DEBUG").is_some() {
        let png = std::env::temp_dir().join(format!("agent-view-{agent}-{}.png", entity.replace('/', "_")));
        underlay::video::still::save_rgb(&png, &f.image).unwrap();
    }
    f.image
}

/// Where the monitor log's ball is in `log`'s agent's picture, at the
/// frame where it is nearest that agent and in view: (frame index, its
/// centre's pixel, the pixel of the floor below it, distance in metres).
fn ball_in_view(log: &str) -> Option<(usize, Vec2, Vec2, f64)> {
    let m = monitor::load(&fixture("monitor.rsmp.log.gz")).unwrap();
    let p = perception::load(&fixture(log)).unwrap();
    let camera = agent_camera(&p, Some(&fixture(log)), Some(&m));
    let t0 = m.frames[0].time;
    let mut best: Option<(usize, Vec2, Vec2, f64)> = None;
    for f in &m.frames {
        let (Some(ball), Some(pose)) = (f.ball, camera.track.pose_at(f.time)) else {
            continue;
        };
        let k = ((f.time - t0) * 25.0).round() as usize;
        let c = camera.track.camera(&pose, W, H).unwrap();
        let (Some(px), Some(floor)) = (c.project3(ball), c.project3([ball[0], ball[1], 0.0])) else {
            continue;
        };
        let inside = px.x > 30.0 && px.x < W as f64 - 30.0 && px.y > 30.0 && px.y < H as f64 - 30.0;
        let d = (0..3)
            .map(|i| (ball[i] - pose.centre[i]).powi(2))
            .sum::<f64>()
            .sqrt();
        // Frames past the last the export can show, and the last second of
        // the fixture (its perception ends just before), are left out.
        if inside && k > 0 && k < 60 && best.is_none_or(|b| d < b.3) {
            best = Some((k, px, floor, d));
        }
    }
    best
}

fn is_orange(p: &[u8]) -> bool {
    p[0] > 180 && (70..190).contains(&p[1]) && p[2] < 90
}

fn is_white(p: &[u8]) -> bool {
    p.iter().all(|&c| c > 170)
}

/// Through the agent's camera, the ball the agent saw (orange, its own
/// drawing, on the floor) is drawn on the ball the match renders (white,
/// a disc on the floor) where the monitor log has it: the drawing's
/// centre within 2 px of the image of the floor below the true ball, the
/// rendered ball there when nothing is drawn.
#[test]
fn the_ball_an_agent_saw_lands_on_the_rendered_ball() {
    if !crate::util::have_tool("ffmpeg") {
        return;
    }
    let (log, agent, entity) = [
        ("agent_Alpha_1.log.gz", "l1", "agents/Alpha/1/ball"),
        ("agent_Bravo_2.log.gz", "r2", "agents/Bravo/2/ball"),
    ]
    .into_iter()
    .filter_map(|(log, agent, entity)| Some((ball_in_view(log)?, (log, agent, entity))))
    .min_by(|a, b| a.0.3.total_cmp(&b.0.3))
    .map(|(_, x)| x)
    .expect("the ball in an agent's view in the fixture");
    let (k, px, floor, distance) = ball_in_view(log).unwrap();
    eprintln!("{agent}: frame {k}, ball at {px:?}, {distance:.2} m away");
    let dir = tmp();
    let from = k as f64 / 25.0;
    let drawn = export_frame(dir.path(), log, agent, from, entity);
    // rcssservermj sends no field lines: an entity with nothing drawn.
    let bare = export_frame(dir.path(), log, agent, from, &entity.replace("/ball", "/lines"));
    assert_eq!(drawn.dim(), (H, W, 3));
    let near = |p: Vec2, r: usize| {
        let (cx, cy) = (p.x.round() as usize, p.y.round() as usize);
        (cy - r..=cy + r).flat_map(move |y| (cx - r..=cx + r).map(move |x| (y, x)))
    };
    // Nothing drawn: the rendered ball (a white disc on the floor, seen
    // edge on from a metre up) is where the camera puts the floor below
    // the ball.
    let white = near(floor, 1)
        .filter(|&(y, x)| is_white(&bare.as_slice().unwrap()[(y * W + x) * 3..][..3]))
        .count();
    assert!(white >= 2, "{white} white pixels round {floor:?}");
    // Drawn: the agent draws a ball it saw on the ground on the floor (a
    // disc and a cross, orange), centred on the rendered ball.
    let orange: Vec<(usize, usize)> = near(floor, 25)
        .filter(|&(y, x)| is_orange(&drawn.as_slice().unwrap()[(y * W + x) * 3..][..3]))
        .collect();
    assert!(
        orange.len() >= 5,
        "{} orange pixels round {floor:?}",
        orange.len()
    );
    let n = orange.len() as f64;
    let (my, mx) = orange
        .iter()
        .fold((0.0, 0.0), |(a, b), &(y, x)| (a + y as f64 / n, b + x as f64 / n));
    let off = (mx - floor.x).hypot(my - floor.y);
    eprintln!("drawn ball's centre {off:.2} px from the true ball's place ({px:?} its centre)");
    assert!(off < 2.0, "drawn at ({mx:.1}, {my:.1}), the ball is at {floor:?}");
    // Away from the ball the two pictures are the same match.
    assert_eq!(drawn[[H - 5, 5, 1]], bare[[H - 5, 5, 1]]);
}

/// Before the agent's first vision message its camera is not known: the
/// picture is the surround colour with a caption saying so, and nothing
/// is drawn on it.
#[test]
fn before_the_first_vision_message_nothing_is_shown_and_that_is_said() {
    if !crate::util::have_tool("ffmpeg") {
        return;
    }
    let dir = tmp();
    let f = export_frame(dir.path(), "agent_Alpha_1.log.gz", "l1", 0.0, "agents");
    let corner = [f[[H - 2, 2, 0]], f[[H - 2, 2, 1]], f[[H - 2, 2, 2]]];
    // Below the caption every pixel is the surround, within the encoding's error.
    for y in (H / 4..H).step_by(7) {
        for x in (0..W).step_by(7) {
            for c in 0..3 {
                assert!(
                    f[[y, x, c]].abs_diff(corner[c]) <= 6,
                    "({x}, {y}) {:?} vs {corner:?}",
                    f[[y, x, c]]
                );
            }
        }
    }
    // The caption is there (white text at the top left).
    let caption = (0..H / 8).flat_map(|y| (0..W / 2).map(move |x| (y, x)));
    assert!(
        caption
            .filter(|&(y, x)| f[[y, x, 0]] > 200 && f[[y, x, 1]] > 200)
            .count()
            > 50
    );
}

/// An agent with no perception log among the logs is refused naming the
/// agents that are there; `--agent-view` over something that is not a
/// rendered match, or with `--tilt`, is refused too.
#[test]
fn an_agent_not_among_the_logs_is_refused_in_words() {
    let dir = tmp();
    let out = dir.path().join("o.mp4");
    let export = |extra: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec![
            "export".into(),
            fixture("monitor.rsmp.log.gz").into(),
            "--log".into(),
            fixture("agent_Alpha_1.log.gz").into(),
            "-o".into(),
            out.clone().into(),
        ];
        args.extend(extra.iter().map(Into::into));
        run(args)
    };
    let o = export(&["--agent-view", "r9"]);
    assert!(!o.status.success());
    let said = text(&o);
    assert!(
        said.contains("no camera of agent r9") && said.contains("Alpha 1 (left)"),
        "{said}"
    );
    let o = export(&["--agent-view", "nine"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("'nine' is not an agent"), "{}", text(&o));
    let o = export(&["--agent-view", "l1", "--tilt", "30"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("does not go with --tilt"), "{}", text(&o));
    // A picture is no match an agent saw.
    let png = dir.path().join("p.png");
    underlay::video::still::save_rgb(&png, &RgbImage::from_elem((32, 48, 3), 90)).unwrap();
    let o = run([
        "export".as_ref(),
        "--video".as_ref(),
        png.as_os_str(),
        "--log".as_ref(),
        fixture("agent_Alpha_1.log.gz").as_os_str(),
        "--agent-view".as_ref(),
        "l1".as_ref(),
        "--no-calibration".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("only a match whose agents"), "{}", text(&o));
    assert!(!out.exists());
}

/// `calib agent` writes the agent's camera at a time as a calibration
/// file: a full camera that is the one the view draws through (the same
/// pixel for a marker), and says when the camera is not known.
#[test]
fn calib_agent_writes_the_agents_camera_at_a_time() {
    let dir = tmp();
    let out = dir.path().join("cam.toml");
    let o = run([
        "calib".as_ref(),
        "agent".as_ref(),
        fixture("agent_Alpha_1.log.gz").as_os_str(),
        "--monitor".as_ref(),
        fixture("monitor.rsmp.log.gz").as_os_str(),
        "--time".as_ref(),
        "26.5".as_ref(),
        "--size".as_ref(),
        "640x360".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_ok(&o);
    let c = underlay::calib::Calibration::load(&out).unwrap();
    assert!(c.is_full_camera());
    assert_eq!(c.image_size(), Some([640, 360]));
    let m = monitor::load(&fixture("monitor.rsmp.log.gz")).unwrap();
    let p = perception::load(&fixture("agent_Alpha_1.log.gz")).unwrap();
    let camera = agent_camera(&p, Some(&fixture("agent_Alpha_1.log.gz")), Some(&m));
    let want = camera
        .track
        .camera(&camera.track.pose_at(26.5).unwrap(), W, H)
        .unwrap();
    let mut seen = 0;
    for q in [[-18.5, 16.5, 0.0], [-27.5, 1.83, 1.83], [-20.0, 5.0, 0.0]] {
        match (c.project3(q), want.project3(q)) {
            (Some(a), Some(b)) => {
                assert!((a - b).length() < 1e-6, "{q:?}: {a:?} vs {b:?}");
                seen += 1;
            }
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "{q:?}"),
        }
    }
    assert!(seen >= 1);
    let o = run([
        "calib".as_ref(),
        "agent".as_ref(),
        fixture("agent_Alpha_1.log.gz").as_os_str(),
        "--time".as_ref(),
        "20".as_ref(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("camera is not known at 20 s"), "{}", text(&o));
}

/// Shapes above the floor are drawn through the agent's camera of each
/// frame: a sphere 1.2 m up, 4 m ahead of the camera, lands where that
/// frame's camera puts it, not on the floor below it.
#[test]
fn a_sphere_in_the_air_is_drawn_through_the_frames_camera() {
    use std::sync::Arc;
    use underlay::log::{FrameTime, Log, Primitive, Raised, Rgba, Shape, Style, ThicknessUnit};
    use underlay::pipeline::{DrawSettings, Pipeline};
    use underlay::video::source::OpenOptions;

    let opts = OpenOptions {
        size: Some((W, H)),
        agent_view: Some("Alpha:1".into()),
        beside: vec![fixture("agent_Alpha_1.log.gz")],
        ..OpenOptions::default()
    };
    let mut src = underlay::formats::open_source(&fixture("monitor.rsmp.log.gz"), &opts).unwrap();
    let mut frame = src.frame_at(1.0).unwrap().unwrap();
    let calib = frame.calibration.clone().expect("a camera of its own");
    // 4 m ahead of the camera, on its heading, 1.2 m up.
    let camera = calib.camera().unwrap();
    let [x, y, _] = camera.position;
    let heading = camera.heading_deg.to_radians();
    let at = [x + 4.0 * heading.cos(), y + 4.0 * heading.sin(), 1.2];
    let mut log = Log::new();
    let e = log.entities.intern("ball");
    let magenta = Rgba::from_rgb(0xff00ff);
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [Primitive {
            shape: Shape::Raised(Box::new(Raised::Sphere {
                center: at,
                radius: 0.1,
            })),
            style: Style {
                color: magenta,
                fill: Some(magenta),
                thickness: 1.0,
                unit: ThicknessUnit::Pixels,
            },
            entity: e,
            level: 0,
        }],
    );
    let settings = DrawSettings {
        calibration: src.info().calibration.clone(),
        ..DrawSettings::default()
    };
    let mut pipeline = Pipeline::new(Arc::new(log), &settings).unwrap();
    pipeline.process(&mut frame).unwrap();
    let is_magenta = |p: Vec2| {
        let (x, y) = (p.x.round() as usize, p.y.round() as usize);
        frame.image[[y, x, 0]] > 200 && frame.image[[y, x, 1]] < 80 && frame.image[[y, x, 2]] > 200
    };
    let up = calib.project3(at).unwrap();
    let floor = calib.project3([at[0], at[1], 0.0]).unwrap();
    assert!(up.y < floor.y - 20.0, "{up:?} {floor:?}");
    assert!(is_magenta(up), "the sphere is drawn at its height, at {up:?}");
    assert!(!is_magenta(floor), "and not on the floor below it");
}
