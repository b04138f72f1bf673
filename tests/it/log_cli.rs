//! `underlay log …` end to end: the real binary on sample and damaged logs,
//! and the generators of `sample_logs/` (run with
//! `UNDERLAY_REGENERATE_SAMPLES=1` to rewrite them).

use std::path::{Path, PathBuf};
use std::process::Output;

use underlay::log::{
    self, FrameTime, Header, Log, MarkerKind, Primitive, Rgba, Shape, Style, TimeUnit, Vec2, Writer,
};
use underlay::thesis::{self, ThesisShape};

use crate::util::{assert_ok, run, stderr, stdout, tmp};

fn underlay(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    crate::util::run(args)
}

fn ok(args: &[&dyn AsRef<std::ffi::OsStr>]) -> String {
    let o = underlay(args);
    assert!(o.status.success(), "underlay failed: {}", stderr(&o));
    stdout(&o)
}

fn fails(args: &[&dyn AsRef<std::ffi::OsStr>]) -> String {
    let o = underlay(args);
    assert!(!o.status.success(), "underlay should have failed: {}", stdout(&o));
    stderr(&o)
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample_logs")
        .join(name)
}

// ---------------------------------------------------------------------------
// Sample generators

const T0: f64 = 1_700_000_000.0;

/// A triangle wave in [-1, 1] with period 1 (plain arithmetic, so the
/// output is the same on every platform).
fn wave(p: f64) -> f64 {
    let f = p - p.floor();
    if f < 0.5 { 4.0 * f - 1.0 } else { 3.0 - 4.0 * f }
}

/// An SSL-style log written with the public Writer API: field zones,
/// team-coloured robots, the ball, planned passes, and autoref events
/// shown over an interval.
fn write_ssl_sample(path: &Path) {
    let header = Header {
        name: "SSL sample: blue attacks, ball goes out".into(),
        time_unit: TimeUnit::EpochSeconds,
        world_unit: "mm".into(),
        hints: log::DisplayHints {
            instant_threshold: None,
            default_max_level: Some(1),
            world_bounds: Some((Vec2::new(-4800.0, -3300.0), Vec2::new(4800.0, 3300.0))),
        },
    };
    let mut w = Writer::create(path, header).unwrap();
    w.declare_entity("field/lines", &["field"]);
    w.declare_entity("field/zones", &["field"]);
    w.declare_entity("robots/blue", &["robots"]);
    w.declare_entity("robots/yellow", &["robots"]);
    for i in 0..6 {
        w.declare_entity(&format!("robots/blue/{i}"), &["robots/blue"]);
        w.declare_entity(&format!("robots/yellow/{i}"), &["robots/yellow"]);
    }
    w.declare_entity("plan/pass", &["plan", "robots/blue"]);
    w.declare_entity("plan/velocity", &["plan"]);
    w.declare_entity("autoref/events", &["autoref"]);

    let white = Rgba::named("white");
    // The field, for all time.
    w.persistent(f64::NEG_INFINITY, f64::INFINITY)
        .polygon([
            (-4500.0, -3000.0),
            (4500.0, -3000.0),
            (4500.0, 3000.0),
            (-4500.0, 3000.0),
        ])
        .color(white)
        .world_thickness(10.0)
        .entity("field/lines")
        .level(1);
    w.persistent(f64::NEG_INFINITY, f64::INFINITY)
        .line((0.0, -3000.0), (0.0, 3000.0))
        .color(white)
        .world_thickness(10.0)
        .entity("field/lines")
        .level(1);
    w.persistent(f64::NEG_INFINITY, f64::INFINITY)
        .circle((0.0, 0.0), 500.0)
        .color(white)
        .world_thickness(10.0)
        .entity("field/lines")
        .level(1);
    for (x, team) in [(-4000.0, "blue"), (4000.0, "yellow")] {
        let c = Rgba::named(team).map(|c| c.with_alpha(0x50));
        w.persistent(f64::NEG_INFINITY, f64::INFINITY)
            .rectangle((x, 0.0), (1000.0, 2000.0), 0.0)
            .color(Rgba::named(team))
            .fill(c)
            .entity("field/zones");
    }

    let frames = 80;
    let dt = 0.05;
    let out_at = 2.6;
    let mut ball = Vec2::new(-1200.0, 300.0);
    let mut out_point = None;
    for k in 0..frames {
        let s = f64::from(k) * dt;
        let t = T0 + s;
        let blue: Vec<Vec2> = (0..6)
            .map(|i| {
                let i = f64::from(i);
                Vec2::new(
                    -3800.0 + 700.0 * i + 150.0 * wave(s * 0.4 + i * 0.17),
                    -2200.0 + 800.0 * i + 200.0 * wave(s * 0.3 + i * 0.31),
                )
            })
            .collect();
        let yellow: Vec<Vec2> = (0..6)
            .map(|i| {
                let i = f64::from(i);
                Vec2::new(
                    3800.0 - 650.0 * i + 120.0 * wave(s * 0.35 + i * 0.23),
                    2000.0 - 750.0 * i + 180.0 * wave(s * 0.25 + i * 0.41),
                )
            })
            .collect();
        // The ball rolls from blue 2 towards the touch line and leaves the field.
        if s < out_at + 0.4 {
            ball = Vec2::new(-1200.0 + 900.0 * s, 300.0 + 1040.0 * s);
        }
        if s >= out_at && out_point.is_none() {
            out_point = Some(Vec2::new(ball.x, 3000.0));
        }
        w.instant(t);
        for (team, robots) in [("blue", &blue), ("yellow", &yellow)] {
            let c = Rgba::named(team);
            for (i, &p) in robots.iter().enumerate() {
                let entity = format!("robots/{team}/{i}");
                w.instant(t).circle(p, 90.0).color(c).fill(c).entity(&entity);
                w.instant(t)
                    .text(p + Vec2::new(110.0, 110.0), &i.to_string(), 14.0)
                    .color(white)
                    .entity(&entity)
                    .level(1);
            }
        }
        for (i, &p) in blue.iter().enumerate() {
            let v = Vec2::new(
                250.0 * wave(s * 0.4 + f64::from(i as u8) * 0.17 + 0.25),
                300.0 * wave(s * 0.3 + f64::from(i as u8) * 0.31 + 0.25),
            );
            w.instant(t)
                .line(p, p + v)
                .color(Rgba::named("gray"))
                .entity("plan/velocity")
                .level(2);
        }
        w.instant(t)
            .circle(ball, 21.5)
            .color(Rgba::named("orange"))
            .fill(Rgba::named("orange"))
            .entity("ball");
        if s < out_at {
            // The chosen pass and the options it was chosen over.
            w.instant(t)
                .line(ball, blue[4])
                .color(Rgba::named("cyan"))
                .thickness(3.0)
                .entity("plan/pass");
            w.instant(t)
                .point(blue[4], MarkerKind::Dot, 12.0)
                .color(Rgba::named("cyan"))
                .entity("plan/pass");
            for j in [3, 5] {
                w.instant(t)
                    .line(ball, blue[j])
                    .color(Rgba::named("cyan").map(|c| c.with_alpha(0x80)))
                    .entity("plan/pass")
                    .level(1);
            }
        }
    }
    // The autoref's call, shown over the interval it is relevant.
    let p = out_point.unwrap();
    let (start, end) = (T0 + out_at, T0 + out_at + 1.5);
    w.persistent(start, end)
        .line((p.x - 400.0, 3000.0), (p.x + 400.0, 3000.0))
        .color(Rgba::named("red"))
        .world_thickness(40.0)
        .entity("autoref/events");
    w.persistent(start, end)
        .point(p, MarkerKind::Cross, 30.0)
        .color(Rgba::named("red"))
        .entity("autoref/events");
    w.persistent(start, end)
        .text(p + Vec2::new(-400.0, -250.0), "BALL OUT: throw-in yellow", 18.0)
        .color(Rgba::named("red"))
        .entity("autoref/events");
    w.finish().unwrap();
}

/// A small thesis-era binary log: robots, a defense area, a line, and an
/// autoref mark with a replay span.
fn write_thesis_sample(path: &Path) {
    let mut names = Log::new();
    let mut prim = |shape: Shape, rgb: u32, entity: &str, level: i32| Primitive {
        shape,
        style: Style::color(Rgba::from_rgb(rgb)),
        entity: names.entities.intern(entity),
        level,
    };
    let mut frames = Vec::new();
    for k in 0..10 {
        let s = f64::from(k) * 0.1;
        let robot = prim(
            Shape::Circle {
                center: Vec2::new(-1000.0 + 200.0 * s, 500.0),
                radius: 90.0,
            },
            0x0000ff,
            "robots",
            0,
        );
        let target = prim(
            Shape::Line {
                start: Vec2::new(-1000.0 + 200.0 * s, 500.0),
                end: Vec2::new(0.0, 0.0),
            },
            0xffffff,
            "plan",
            1,
        );
        frames.push((FrameTime::Instant(T0 + s), vec![(robot, None), (target, None)]));
    }
    let area = prim(
        Shape::Rectangle {
            center: Vec2::new(-4000.0, 0.0),
            size: Vec2::new(1000.0, 2000.0),
            orientation: 0.0,
        },
        0x00c000,
        "field",
        0,
    );
    frames.push((
        FrameTime::Persistent {
            start: T0,
            end: T0 + 1.0,
        },
        vec![(area, None)],
    ));
    let mark = prim(
        Shape::Circle {
            center: Vec2::new(-800.0, 500.0),
            radius: 300.0,
        },
        0xff0000,
        "autoref",
        0,
    );
    let tilted = prim(
        Shape::Rectangle {
            center: Vec2::new(-800.0, 500.0),
            size: Vec2::new(600.0, 200.0),
            orientation: 0.5,
        },
        0xff0000,
        "autoref",
        1,
    );
    frames.push((
        FrameTime::Instant(T0 + 1.0),
        vec![
            (mark, Some((T0 + 0.2, T0 + 0.8))),
            (tilted, Some((T0 + 0.2, T0 + 0.8))),
        ],
    ));
    let mut bytes = Vec::new();
    for (time, shapes) in &frames {
        let shapes = shapes.iter().map(|(p, replay)| ThesisShape {
            primitive: p,
            replay: *replay,
        });
        thesis::write_frame(&mut bytes, &names, *time, shapes).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn sample_logs_match_their_generators() {
    let dir = tempfile::tempdir().unwrap();
    let generated = [
        ("ssl.ulog", write_ssl_sample as fn(&Path)),
        ("thesis-era.pb", write_thesis_sample),
    ];
    let regenerate = std::env::var_os("UNDERLAY_REGENERATE_SAMPLES").is_some();
    for (name, generate) in generated {
        let fresh = dir.path().join(name);
        generate(&fresh);
        let fresh = std::fs::read(&fresh).unwrap();
        if regenerate {
            std::fs::write(sample(name), &fresh).unwrap();
        }
        let committed = std::fs::read(sample(name)).unwrap();
        assert!(
            committed == fresh,
            "sample_logs/{name} differs from its generator; rerun with UNDERLAY_REGENERATE_SAMPLES=1"
        );
    }
}

// ---------------------------------------------------------------------------
// log info / dump / select / convert on the samples

#[test]
fn figure_3_7_info_counts() {
    let out = ok(&[&"log", &"info", &sample("figure-3.7.txt")]);
    assert!(out.contains("3 (1 instantaneous, 2 persistent)"), "{out}");
    assert!(out.contains("primitives:  26 (circle 4, line 22)"), "{out}");
    assert!(out.contains("15.32 s … 35.68 s (duration 20.36 s)"), "{out}");
    assert!(out.contains("path") && out.contains("14"), "{out}");
    assert!(out.contains("warnings:    none"), "{out}");
}

#[test]
fn ssl_sample_info_shows_the_declared_tree() {
    let out = ok(&[&"log", &"info", &sample("ssl.ulog")]);
    assert!(out.contains("format:      native binary"), "{out}");
    assert!(out.contains("(80 instantaneous, 2 persistent)"), "{out}");
    assert!(out.contains("2023-11-14 22:13:20.000000 UTC"), "{out}");
    assert!(out.contains("tree declared parents"), "{out}");
    // plan/pass has two parents: shown under both.
    assert!(out.contains("(shown above)"), "{out}");
    assert!(out.contains("      robots/blue/3"), "{out}");
}

#[test]
fn thesis_sample_reads_everywhere() {
    let path = sample("thesis-era.pb");
    let out = ok(&[&"log", &"info", &path]);
    assert!(out.contains("thesis-era binary"), "{out}");
    // 10 robot frames + the persistent area + the replay span frame (its own
    // frame only held replayed shapes, so it is not kept).
    assert!(out.contains("12 (10 instantaneous, 2 persistent)"), "{out}");
    let at = format!("{}", T0 + 0.5);
    let sel = ok(&[&"log", &"select", &path, &"--at", &at, &"--entity", &"autoref"]);
    let lines: Vec<&str> = sel.lines().collect();
    assert_eq!(lines.len(), 2, "{sel}");
    assert!(
        lines[0].starts_with("{ { circle; (-800, 500); 300 }; red; {autoref; 0}"),
        "{sel}"
    );
    assert!(
        lines[1].contains("rectangle; (-800, 500); (600, 200); 0.5"),
        "{sel}"
    );
}

/// Issue 33: `log info` counts the shapes above the floor by kind, a text
/// log with heights converts to a version-2 native log, and both say the
/// same.
#[test]
fn info_counts_shapes_above_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("heights.txt");
    std::fs::write(
        &txt,
        "{ { {1; 2}; {\n\
           { { sphere; (1200, -300, 21.5); 21.5 }; orange; {ball; 0} }\n\
           { { polyline; (0, 0, 0); (600, 0, 350); (1200, 0, 0) }; white; {plan/chip; 1} }\n\
           { { line; (0, 0); (1000, 0) }; red; {plan/pass; 1} }\n\
           { { cylinder; (100, 0, 0); 90; 150 }; blue; {robots/blue/1; 0} }\n\
           { { box; (-500, 250, 0); (180, 60, 40); 0.5 }; red; {obstacles; 0} }\n\
           { { circle; (0, 0, 500); 90 }; yellow; {robots/blue/1; 2} }\n\
         } } }\n",
    )
    .unwrap();
    let bin = dir.path().join("heights.ulog");
    ok(&[&"log", &"convert", &txt, &bin]);
    assert_eq!(&std::fs::read(&bin).unwrap()[..10], b"UNDERLAY\x02\x00");
    for path in [&txt, &bin] {
        let out = ok(&[&"log", &"info", path]);
        assert!(
            out.contains(
                "primitives:  6 (box 1, cylinder 1, line 1, raised circle 1, raised polyline 1, sphere 1)"
            ),
            "{out}"
        );
        assert!(out.contains("warnings:    none"), "{out}");
    }
    let sel = ok(&[&"log", &"select", &bin, &"--at", &"1.5", &"--entity", &"ball"]);
    assert_eq!(
        sel.trim_end(),
        "{ { sphere; (1200, -300, 21.5); 21.5 }; orange; {ball; 0} }"
    );
}

#[test]
fn select_prints_one_primitive_per_line() {
    let fig = sample("figure-3.7.txt");
    let all = ok(&[&"log", &"select", &fig, &"--at", &"27.56"]);
    assert_eq!(all.lines().count(), 26, "{all}");
    let path = ok(&[&"log", &"select", &fig, &"--at", &"27", &"--entity", &"path"]);
    assert_eq!(path.lines().count(), 14, "{path}");
    assert!(path.lines().all(|l| l.ends_with("white; {path; 0} }")), "{path}");
    // Outside the target's span: obstacles and (threshold unlimited) the instant frame.
    let late = ok(&[&"log", &"select", &fig, &"--at", &"40", &"--entity", &"target"]);
    assert_eq!(late, "");
    let strict = ok(&[&"log", &"select", &fig, &"--at", &"40", &"--threshold", &"1"]);
    assert_eq!(strict.lines().count(), 8, "{strict}");
    let none = ok(&[&"log", &"select", &fig, &"--at", &"27.56", &"--max-level", &"-1"]);
    assert_eq!(none, "");
    let e = fails(&[&"log", &"select", &fig, &"--at", &"27", &"--entity", &"nobody"]);
    assert!(
        e.contains("figure-3.7.txt") && e.contains("no entity named \"nobody\""),
        "{e}"
    );
}

#[test]
fn convert_round_trips_through_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let original = underlay::formats::load_log(&sample("ssl.ulog")).unwrap();
    let txt = dir.path().join("ssl.txt");
    let bin = dir.path().join("back.ulog");
    let zst = dir.path().join("back.ulog.zst");
    let out = ok(&[&"log", &"convert", &sample("ssl.ulog"), &txt]);
    assert!(out.contains("→") && out.contains("text notation"), "{out}");
    ok(&[&"log", &"convert", &txt, &bin]);
    ok(&[&"log", &"convert", &bin, &zst]);
    assert_eq!(underlay::formats::load_log(&txt).unwrap(), original);
    assert_eq!(underlay::formats::load_log(&bin).unwrap(), original);
    assert_eq!(underlay::formats::load_log(&zst).unwrap(), original);
    assert!(std::fs::read(&bin).unwrap() == log::native::to_bytes(&original));
    assert!(std::fs::metadata(&zst).unwrap().len() < std::fs::metadata(&bin).unwrap().len());
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn dump_prints_text_that_parses_and_filters_by_time() {
    let ssl = sample("ssl.ulog");
    let full = ok(&[&"log", &"dump", &ssl]);
    assert_eq!(
        log::text::parse(&full).unwrap(),
        underlay::formats::load_log(&ssl).unwrap()
    );
    let from = format!("{}", T0 + 1.0);
    let to = format!("{}", T0 + 1.2);
    let part = ok(&[&"log", &"dump", &ssl, &"--from", &from, &"--to", &to]);
    let part = log::text::parse(&part).unwrap();
    let instants = part.frames.iter().filter(|f| !f.time.is_persistent()).count();
    assert!((4..=5).contains(&instants), "{instants}");
    // The field's persistent frame applies at every time; the autoref's
    // call (from 2.6 s) does not overlap.
    assert_eq!(part.frames.iter().filter(|f| f.time.is_persistent()).count(), 1);
}

#[test]
fn subcommand_help_is_complete() {
    let help = ok(&[&"log", &"select", &"--help"]);
    for flag in ["--at", "--max-level", "--entity", "--threshold"] {
        assert!(help.contains(flag), "{help}");
    }
    let help = ok(&[&"log", &"--help"]);
    for sub in ["info", "dump", "select", "convert"] {
        assert!(help.contains(sub), "{help}");
    }
}

// ---------------------------------------------------------------------------
// Bad input

#[test]
fn truncated_log_loads_complete_frames_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(sample("ssl.ulog")).unwrap();
    let full = underlay::formats::load_log(&sample("ssl.ulog")).unwrap();
    let cut = dir.path().join("cut.ulog");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let out = ok(&[&"log", &"info", &cut]);
    assert!(out.contains("warnings:    1"), "{out}");
    let torn = underlay::formats::load_log(&cut).unwrap();
    assert!(!torn.frames.is_empty());
    assert_eq!(torn.frames[..], full.frames[..torn.frames.len()]);
    let w = &torn.warnings[0];
    let (offset, frame) = (w.offset.unwrap(), w.frame.unwrap());
    assert!(offset < bytes.len() as u64 * 2 / 3, "{w}");
    assert_eq!(frame, torn.frames.len(), "{w}");
    assert!(
        out.contains(&format!("at byte {offset} (frame {frame}): truncated")),
        "{out}"
    );
    // dump warns on stderr and still prints what loaded.
    let o = underlay(&[&"log", &"dump", &cut]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("warning:") && stderr(&o).contains("cut.ulog"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unreadable_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (dir.path().join("missing.ulog"), "No such file"),
        (write("empty.ulog", b""), "empty"),
        (
            write("garbage.bin", &[0xde, 0xad, 0xbe, 0xef, 7, 7, 7, 7, 7, 7]),
            "not a visualization log",
        ),
        (
            write("magic.ulog", b"UNDERLAX\x01\x00\x05\x1a\x03\x09\x00\x00"),
            "not a visualization log",
        ),
        (
            write("version.ulog", b"UNDERLAY\x09\x00"),
            "version 9 is not supported: the file was written by a newer underlay",
        ),
        (
            write("short.ulog", b"UNDERLAY\x01"),
            "ends inside the 10-byte prefix",
        ),
        (write("compression.ulog", b"UNDERLAY\x01\x05"), "compression 5"),
        (
            write("huge.ulog", b"UNDERLAY\x01\x00\xff\xff\xff\xff\x0f"),
            "at byte 10 (frame 0): record length 4294967295 exceeds the limit",
        ),
        (
            write(
                "bad.txt",
                b"{ { 1; { { { circle; (0, 0); 5 }; red; {a; 0} }\n  { oops } } } }",
            ),
            "line 2, column 5",
        ),
        (
            write(
                "nan.txt",
                b"{ { 1; { { { circle; (nan, 0); 5 }; red; {a; 0} } } } }",
            ),
            "line 1, column 23",
        ),
    ];
    for (path, want) in cases {
        let e = fails(&[&"log", &"info", &path]);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(e.contains(&name) && e.contains(want), "{name}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn undrawable_values_are_warnings_naming_frame_and_primitive() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad-values.ulog");
    // The writers refuse such values (issue 49), so the file is made from
    // the model, which the encoder writes as it is.
    let mut w = Writer::new(Vec::new(), Header::default()).unwrap();
    w.instant(1.0).circle((f64::NAN, 0.0), 5.0);
    w.instant(1.0).circle((0.0, 0.0), 5.0);
    assert_eq!(
        w.finish().unwrap_err().to_string(),
        "<stream>: a circle was not written: center (NaN, 0) is not finite"
    );
    let mut log = Log::new();
    let entity = log.entities.intern("default");
    let prim = |shape| Primitive {
        shape,
        style: Style::default(),
        entity,
        level: 0,
    };
    let circle = |x: f64, r: f64| Shape::Circle {
        center: Vec2::new(x, 0.0),
        radius: r,
    };
    log.primitives = vec![
        prim(circle(f64::NAN, 5.0)),
        prim(circle(0.0, -5.0)),
        prim(Shape::Line {
            start: Vec2::new(0.0, 0.0),
            end: Vec2::new(f64::INFINITY, 1.0),
        }),
        prim(circle(0.0, 5.0)),
        prim(circle(0.0, 5.0)),
        prim(circle(0.0, 5.0)),
    ];
    log.frames = vec![
        log::Frame {
            time: FrameTime::Instant(1.0),
            primitives: 0..4,
        },
        log::Frame {
            time: FrameTime::Persistent { start: 5.0, end: 2.0 },
            primitives: 4..5,
        },
        log::Frame {
            time: FrameTime::Instant(f64::NAN),
            primitives: 5..6,
        },
    ];
    std::fs::write(&p, log::native::to_bytes(&log)).unwrap();
    let out = ok(&[&"log", &"info", &p]);
    assert!(out.contains("1 (1 instantaneous, 0 persistent)"), "{out}");
    assert!(out.contains("primitives:  1 (circle 1)"), "{out}");
    for want in [
        "(frame 0): primitive 0 (circle) dropped: center (NaN, 0) is not finite",
        "(frame 0): primitive 1 (circle) dropped: radius -5 is negative",
        "(frame 0): primitive 2 (line) dropped: end (inf, 1) is not finite",
        "(frame 1): frame dropped: persistent frame ends (2) before it starts (5)",
        "(frame 2): frame dropped: instantaneous time NaN is not finite",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    let t = write(
        dir.path(),
        "neg.txt",
        "{\n{ {5; 1}; { } }\n{ 1; { { { circle; (0, 0); -1 }; red; {a; 0} } } }\n}",
    );
    let out = ok(&[&"log", &"info", &t]);
    assert!(out.contains("frame 0: line 2: frame dropped"), "{out}");
    assert!(
        out.contains("frame 1: line 3: primitive 0 (circle) dropped: radius -1 is negative"),
        "{out}"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn unknown_entity_references_are_warnings() {
    // Hand-made records: a frame whose primitive names entity id 7, never declared.
    let mut b = b"UNDERLAY\x01\x00".to_vec();
    // Record { frame: Frame { instant: 1.0, primitives: [Primitive { line {end (1,1)}, entity: 7 }] } }
    let line = [
        0x12, 0x16, 0x0a, 0x00, 0x12, 0x12, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x11, 0, 0, 0, 0, 0, 0, 0xf0,
        0x3f,
    ];
    let mut prim = line.to_vec();
    prim.extend_from_slice(&[0x40, 0x07]);
    let mut frame = vec![0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a, prim.len() as u8];
    frame.extend_from_slice(&prim);
    let mut record = vec![0x1a, frame.len() as u8];
    record.extend_from_slice(&frame);
    b.push(record.len() as u8);
    b.extend_from_slice(&record);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("unknown.ulog");
    std::fs::write(&p, &b).unwrap();
    let out = ok(&[&"log", &"info", &p]);
    assert!(
        out.contains("primitive 0 refers to undeclared entity id 7"),
        "{out}"
    );
    assert!(out.contains("unknown/7"), "{out}");
    let log = underlay::formats::load_log(&p).unwrap();
    assert_eq!(
        log.primitives[0].shape,
        Shape::Line {
            start: Vec2::ZERO,
            end: Vec2::new(1.0, 1.0)
        }
    );
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(10))]
    /// Any valid log (the shared strategy of `log::testutil`, feature
    /// `test-util`) survives the binary's conversion to the text notation
    /// and back to the native format.
    #[test]
    fn random_logs_survive_convert_through_text(original in underlay::log::testutil::arb_log()) {
        let dir = tempfile::tempdir().unwrap();
        let (bin, txt, back) = (dir.path().join("a.ulog"), dir.path().join("a.txt"), dir.path().join("b.ulog"));
        log::save(&original, &bin).unwrap();
        ok(&[&"log", &"convert", &bin, &txt]);
        ok(&[&"log", &"convert", &txt, &back]);
        proptest::prop_assert_eq!(underlay::formats::load_log(&back).unwrap(), original);
    }
}

#[test]
fn sample_log_reads_the_same_in_every_format() {
    let original = underlay::log::testutil::sample();
    let dir = tempfile::tempdir().unwrap();
    for name in ["s.ulog", "s.ulog.zst", "s.txt"] {
        let path = dir.path().join(name);
        log::save(&original, &path).unwrap();
        assert_eq!(underlay::formats::load_log(&path).unwrap(), original, "{name}");
        let info = ok(&[&"log", &"info", &path]);
        assert!(info.contains("robots/blue"), "{name}: {info}");
    }
}

/// Issue 30: the `log` commands take what `view` and `export` take: a
/// match with its agents' logs beside it, or a session, read through the
/// format table and merged.
#[test]
fn log_commands_read_a_match_with_its_agents_and_sessions() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sim2d");
    let (game, agent) = (data.join("match4.rcg.gz"), data.join("HELIOS_Q-9.log.gz"));
    let select = |extra: &[&std::ffi::OsStr]| {
        let mut args: Vec<&std::ffi::OsStr> = vec!["log".as_ref(), "select".as_ref()];
        args.extend_from_slice(extra);
        args.extend(["--at", "15", "--entity", "HELIOS_Q/9/world"].map(std::ffi::OsStr::new));
        run(args)
    };
    // Alone, the right-side agent is guessed left (its message column on
    // the left of the pitch), and the guess is said.
    let alone = select(&[agent.as_os_str()]);
    assert_ok(&alone);
    assert!(stdout(&alone).contains("(-60, 34)"), "{}", stdout(&alone));
    assert!(
        stderr(&alone).contains("drawn as the left team"),
        "{}",
        stderr(&alone)
    );
    // Beside its match's game log it takes its side from it.
    let beside = select(&[game.as_os_str(), "--log".as_ref(), agent.as_os_str()]);
    assert_ok(&beside);
    assert!(stdout(&beside).contains("(60, 34)"), "{}", stdout(&beside));
    assert!(!stdout(&beside).contains("(-60, 34)"), "{}", stdout(&beside));
    assert!(!stderr(&beside).contains("left team"), "{}", stderr(&beside));
    // `log info` names each file and its format, then the merged log.
    let info = run([
        "log".as_ref(),
        "info".as_ref(),
        game.as_os_str(),
        "--log".as_ref(),
        agent.as_os_str(),
    ]);
    assert_ok(&info);
    let out = stdout(&info);
    assert!(
        out.contains("format:      2D game log") && out.contains("format:      2D agent debug log"),
        "{out}"
    );
    assert!(out.contains("HELIOS_Q/9"), "{out}");
    // A session's logs, the same way.
    let dir = tmp();
    let session = dir.path().join("match.toml");
    std::fs::write(
        &session,
        format!(
            "video = {:?}\nlogs = [{:?}, {:?}]\n",
            game.display().to_string(),
            game.display().to_string(),
            agent.display().to_string()
        ),
    )
    .unwrap();
    let s = select(&[session.as_os_str()]);
    assert_ok(&s);
    assert_eq!(stdout(&s), stdout(&beside));
    // And a convert of the pair keeps both.
    let out = dir.path().join("both.ulog");
    let c = run([
        "log".as_ref(),
        "convert".as_ref(),
        game.as_os_str(),
        "--log".as_ref(),
        agent.as_os_str(),
        out.as_os_str(),
    ]);
    assert_ok(&c);
    assert!(stdout(&c).contains(" + "), "{}", stdout(&c));
    let back = underlay::formats::load_log(&out).unwrap();
    assert!(back.entities.get("HELIOS_Q/9/world").is_some());
}

#[test]
fn formats_lists_the_format_table() {
    let o = run(["formats"]);
    assert_ok(&o);
    let out = stdout(&o);
    for f in underlay::formats::FORMATS {
        assert!(out.contains(f.id) && out.contains(f.signature), "{out}");
    }
}

/// Text that is not UTF-8 costs only what holds it: a Latin-1 name is read
/// with U+FFFD and said (issue 52: one bad record costs that record).
#[test]
fn text_that_is_not_utf8_is_read_with_replacement_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("latin1.txt");
    std::fs::write(
        &p,
        b"{ { 1; { { { text; (0, 0); \"caf\xe9\" }; red; {a; 0} } } } }",
    )
    .unwrap();
    let out = ok(&[&"log", &"info", &p]);
    assert!(out.contains("frames:      1 "), "{out}");
    assert!(out.contains("at byte 31: the text is not valid UTF-8"), "{out}");
}
