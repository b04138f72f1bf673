use super::*;

// The thesis's Figure 3.7, the workspace's sample log (the crate's unit tests
// run in the workspace; the published crate builds without them).
const FIGURE_3_7: &str = include_str!("../../../../sample_logs/figure-3.7.txt");

#[test]
fn figure_3_7_parses_as_printed() {
    let log = parse(FIGURE_3_7).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let persistent = log.frames.iter().filter(|f| f.time.is_persistent()).count();
    assert_eq!((persistent, log.frames.len() - persistent), (2, 1));
    assert_eq!(log.primitives.len(), 26);
    assert_eq!(
        log.frames[0].time,
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY
        }
    );
    assert_eq!(log.frames[2].time, FrameTime::Instant(27.56));
    let first = &log.primitives[0];
    assert_eq!(log.entities.name(first.entity), "obstacle");
    assert_eq!(first.style.color, Rgba::named("red").unwrap());
    assert_eq!(
        first.shape,
        Shape::Line {
            start: Vec2::new(-3025.0, 500.0),
            end: Vec2::new(-1600.0, 500.0)
        }
    );
    // Printing keeps the thesis style (no header, no declarations) and reads back equal.
    let printed = print(&log);
    assert!(
        !printed.contains("header") && !printed.contains("entity"),
        "{printed}"
    );
    assert!(printed.contains("{ { circle; (2271, -1136); 70 }; green; {position; 0} }"));
    assert_eq!(parse(&printed).unwrap(), log);
}

#[test]
fn extensions_round_trip() {
    let src = r#"{
            { header; name "run \"7\""; time relative; unit m; threshold 0.05; max-level 2; bounds (-1, -2) (3, 4) }
            { entity; robots/blue/3; {robots/blue; attack} }
            { 1e20; {
              { { polygon; (0, 0); (1, 0); (0, 1) }; #11223344; {"a b"; -1}; fill blue; thickness 2.5 world }
              { { polyline: (0, 0); (1, 0) }; 0x00ff00; robots/blue/3; 3 }
              { { text; (1, 1); "hi\n\u{1}"; 12 }; white; {t; 0}; thickness 0 world }
              { { point; (1, 1); dot; 4 }; cyan; {t; 0} }
              { { rectangle; (0, 0); (4, 2); 0.5 }; red; {t; 0} }
              { { arc; (1, 2); 3; -0.5; 1.25 }; red; {t; 0} }
              { { sector; (1, 2); 0; 3; 0.5; -7 }; red; {t; 0}; fill #ff000080 }
            } }
        }"#;
    let log = parse(src).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    assert_eq!(log.header.name, "run \"7\"");
    assert_eq!(log.header.hints.default_max_level, Some(2));
    let e = log.entities.get("robots/blue/3").unwrap();
    assert_eq!(log.entities.parents(e).len(), 2);
    assert_eq!(log.primitives[0].style.fill, Some(Rgba::named("blue").unwrap()));
    assert_eq!(log.primitives[0].style.unit, ThicknessUnit::World);
    assert_eq!(log.primitives[0].style.color, Rgba(0x1122_3344));
    assert_eq!(log.primitives[1].level, 3);
    assert!(matches!(log.primitives[2].shape, Shape::Text { ref text, .. } if &**text == "hi\n\u{1}"));
    assert_eq!(
        log.primitives[5].shape,
        Shape::Sector {
            center: Vec2::new(1.0, 2.0),
            inner: 3.0,
            outer: 3.0,
            start: -0.5,
            sweep: 1.25
        }
    );
    assert!(matches!(
        log.primitives[6].shape,
        Shape::Sector {
            inner: 0.0,
            outer: 3.0,
            sweep: -7.0,
            ..
        }
    ));
    let printed = print(&log);
    assert!(printed.contains("{ arc; (1, 2); 3; -0.5; 1.25 }"), "{printed}");
    assert!(printed.contains("{ sector; (1, 2); 0; 3; 0.5; -7 }"), "{printed}");
    assert_eq!(parse(&printed).unwrap(), log);
}

#[test]
fn syntax_errors_name_line_and_column() {
    let e = parse_strict("{\n{ 1; {\n { { circle; (0, 0) 5 }; red; {a; 0} }\n} }\n}").unwrap_err();
    assert!(
        matches!(
            e,
            ReadError::Syntax {
                line: 3,
                column: 21,
                ..
            }
        ),
        "{e}"
    );
    let e = parse_strict("{ { 1; { { { hexagon; (0,0) }; red; {a; 0} } } } }").unwrap_err();
    assert!(e.to_string().contains("unknown shape 'hexagon'"), "{e}");
    let e = parse_strict("{ { 1; { { { circle; (0,0); 1 }; mauve; {a; 0} } } } }").unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");
    let e = parse_strict("{ } x").unwrap_err();
    assert!(e.to_string().contains("after the end"), "{e}");
    let e = parse_strict("{ { 1; { { { text; (0,0); \"abc } } } }").unwrap_err();
    assert!(e.to_string().contains("not closed"), "{e}");
}

#[test]
fn bad_values_are_warnings_naming_the_line() {
    let log = parse("{\n{ {5; 1}; { } }\n{ 2; {\n{ { circle; (0, 0); -4 }; red; {a; 0} }\n} }\n}").unwrap();
    assert_eq!(log.frames.len(), 1);
    assert!(log.primitives.is_empty());
    assert_eq!(log.warnings.len(), 2);
    assert!(
        log.warnings[0].message.starts_with("line 2:"),
        "{:?}",
        log.warnings
    );
    assert_eq!(log.warnings[1].frame, Some(1));
    assert!(
        log.warnings[1].message.contains("primitive 0 (circle)"),
        "{:?}",
        log.warnings
    );
}

#[test]
fn numbers_print_losslessly() {
    for v in [
        0.0,
        -0.0,
        1.0,
        27.56,
        1e-7,
        1e300,
        -2.5e-310,
        1_700_000_000.123_456,
        f64::INFINITY,
    ] {
        let s = fmt_f64(v);
        let back = parse_number(&s).unwrap();
        assert_eq!(back.to_bits(), v.to_bits(), "{v} → {s}");
    }
    assert_eq!(fmt_f64(700.0), "700");
    assert_eq!(parse_number("nan"), None);
    assert_eq!(parse_number("red"), None);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 500,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Binary → text → binary is lossless for anything the model holds.
    #[test]
    fn binary_text_binary_is_lossless(log in crate::testutil::arb_log()) {
        let bin = crate::native::to_bytes(&log);
        let from_bin = crate::native::read(&bin[..]).unwrap();
        let txt = print(&from_bin);
        let from_text = match parse(&txt) {
            Ok(l) => l,
            Err(e) => return Err(proptest::test_runner::TestCaseError::fail(format!("{e}\n{txt}"))),
        };
        proptest::prop_assert_eq!(&from_text, &log, "{}", txt);
        proptest::prop_assert_eq!(crate::native::to_bytes(&from_text), bin);
    }
}

/// Issue 15, finding 5: a native header may hold a threshold or bounds
/// no notation writes back (NaN, inf, −1); every reader refuses them at
/// load with a warning, so native → text → native keeps the log equal.
#[test]
fn header_values_text_cannot_hold_are_refused_at_load() {
    for (threshold, bounds) in [
        (f64::NAN, (f64::NAN, 1.0)),
        (f64::INFINITY, (f64::NEG_INFINITY, 0.0)),
        (-1.0, (0.0, f64::INFINITY)),
    ] {
        let mut log = Log::new();
        log.header.hints.instant_threshold = Some(threshold);
        log.header.hints.world_bounds = Some((Vec2::new(bounds.0, 0.0), Vec2::new(bounds.1, 1.0)));
        log.push_frame(FrameTime::Instant(1.0), []);
        let bin = crate::native::to_bytes(&log);
        let read = crate::native::read(&bin[..]).unwrap();
        assert_eq!(read.header.hints.instant_threshold, None);
        assert_eq!(read.header.hints.world_bounds, None);
        let said: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        assert!(
            said[0].contains("threshold") && said[0].contains("ignored"),
            "{said:?}"
        );
        assert!(said[1].contains("world bounds"), "{said:?}");
        let back = parse(&print(&read)).unwrap();
        assert_eq!(back.header, read.header);
        // The text reader refuses them the same way.
        let text = format!(
            "{{ {{ header; threshold {}; bounds (0, 0) (inf, 1) }} }}",
            fmt_f64(threshold)
        );
        match parse_strict(&text) {
            Ok(l) => {
                assert_eq!(l.header.hints.instant_threshold, None, "{text}");
                assert_eq!(l.header.hints.world_bounds, None, "{text}");
                assert!(
                    l.warnings[0].to_string().starts_with("line 1: "),
                    "{:?}",
                    l.warnings
                );
            }
            Err(e) => assert!(threshold.is_nan() && e.to_string().contains("NaN"), "{e}"),
        }
    }
}

/// `-0` survives native → text → native, in the header and in shapes.
#[test]
fn negative_zero_survives_a_round_trip() {
    let mut log = Log::new();
    log.header.hints.world_bounds = Some((Vec2::new(-0.0, -0.0), Vec2::new(1.0, 1.0)));
    log.header.hints.instant_threshold = Some(-0.0);
    let e = log.entities.intern("e");
    log.push_frame(
        FrameTime::Instant(-0.0),
        [Primitive {
            shape: Shape::Circle {
                center: Vec2::new(-0.0, 0.0),
                radius: 1.0,
            },
            style: Style::default(),
            entity: e,
            level: 0,
        }],
    );
    let bin = crate::native::to_bytes(&log);
    let back = parse(&print(&crate::native::read(&bin[..]).unwrap())).unwrap();
    assert_eq!(crate::native::to_bytes(&back), bin);
    assert!(back.header.hints.world_bounds.unwrap().0.x.is_sign_negative());
    assert!(back.header.hints.instant_threshold.unwrap().is_sign_negative());
}

#[test]
fn sniffs_text() {
    assert!(looks_like_text(b"  \n{ {"));
    assert!(looks_like_text(b"\xef\xbb\xbf// c\n{"));
    assert!(!looks_like_text(b"UNDERLAY"));
    assert!(!looks_like_text(b"   "));
    assert!(!looks_like_text(b"{\0\0\0\x09abcdefgh"));
}

fn raised(p: &Primitive) -> &Raised {
    match &p.shape {
        Shape::Raised(r) => r,
        other => panic!("not a raised shape: {other:?}"),
    }
}

fn only_shape(geometry: &str) -> Result<Shape, ReadError> {
    let log = parse_strict(&format!(
        "{{ {{ 1; {{ {{ {{ {geometry} }}; red; {{a; 0}} }} }} }} }}"
    ))?;
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    Ok(log.primitives[0].shape.clone())
}

/// Issue 33: a point written `(x, y, z)` has a height; every kind of
/// shape above the floor parses with its values.
#[test]
fn heights_parse_into_shapes_above_the_floor() {
    let src = r#"{ { 1; {
        { { line; (0, 0, 0); (1000, 0, 800) }; red; {a; 0} }
        { { polyline; (0, 0, 0); (600, 0, 350); (1200, 0, 0) }; red; {a; 0} }
        { { polygon; (0, 0, 10); (1, 0, 10); (0, 1, 10) }; red; {a; 0}; fill blue }
        { { circle; (1, 2, 3); 4 }; red; {a; 0} }
        { { circle; (1, 2, 3); 4; (0, 1, 0); }; red; {a; 0} }
        { { text; (1, 2, 180); "up"; 14 }; red; {a; 0} }
        { { point; (3, 4, 5); dot; 6 }; red; {a; 0} }
        { { sphere; (1200, -300, 21.5); 21.5 }; orange; {ball; 0} }
        { { cylinder; (100, 0, 0); 90; 150 }; blue; {robots; 0} }
        { { box; (-500, 250, 0); (180, 60, 40); 0.5 }; red; {a; 0} }
        { { box: (0, 0, 0); (1, 2, 3) }; red; {a; 0} }
    } } }"#;
    let log = parse(src).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let r: Vec<&Raised> = log.primitives.iter().map(raised).collect();
    assert_eq!(
        r[0],
        &Raised::Path {
            points: vec![[0.0, 0.0, 0.0], [1000.0, 0.0, 800.0]].into(),
            closed: false
        }
    );
    assert!(
        matches!(r[1], Raised::Path { points, closed: false } if points.len() == 3 && points[1][2] == 350.0)
    );
    assert!(matches!(r[2], Raised::Path { closed: true, .. }));
    assert_eq!(log.primitives[2].style.fill, Rgba::named("blue"));
    assert_eq!(
        r[3],
        &Raised::Circle {
            center: [1.0, 2.0, 3.0],
            radius: 4.0,
            normal: [0.0, 0.0, 1.0]
        }
    );
    assert!(matches!(r[4], Raised::Circle { normal, .. } if *normal == [0.0, 1.0, 0.0]));
    assert!(
        matches!(r[5], Raised::Text { anchor, text, size: 14.0 } if anchor[2] == 180.0 && &**text == "up")
    );
    assert_eq!(
        r[6],
        &Raised::Point {
            position: [3.0, 4.0, 5.0],
            kind: MarkerKind::Dot,
            size: 6.0
        }
    );
    assert_eq!(
        r[7],
        &Raised::Sphere {
            center: [1200.0, -300.0, 21.5],
            radius: 21.5
        }
    );
    assert_eq!(
        r[8],
        &Raised::Cylinder {
            base: [100.0, 0.0, 0.0],
            radius: 90.0,
            height: 150.0
        }
    );
    assert_eq!(
        r[9],
        &Raised::Box {
            base: [-500.0, 250.0, 0.0],
            size: [180.0, 60.0, 40.0],
            orientation: 0.5
        }
    );
    assert!(matches!(r[10], Raised::Box { orientation: 0.0, .. }));
}

/// Once one point of a shape has a height, its points written `(x, y)`
/// are at height 0; a shape given with heights stays above the floor even
/// when they are all 0.
#[test]
fn mixed_points_take_height_zero() {
    assert_eq!(
        only_shape("line; (0, 0); (1, 1, 2)").unwrap(),
        Shape::Raised(Box::new(Raised::Path {
            points: vec![[0.0, 0.0, 0.0], [1.0, 1.0, 2.0]].into(),
            closed: false
        }))
    );
    let Shape::Raised(r) = only_shape("polyline; (0, 0, 5); (1, 1); (2, 2)").unwrap() else {
        panic!()
    };
    assert!(
        matches!(*r, Raised::Path { ref points, .. } if points[1] == [1.0, 1.0, 0.0] && points[2] == [2.0, 2.0, 0.0])
    );
    let Shape::Raised(r) = only_shape("circle; (1, 2); 3; (1, 0, 0)").unwrap() else {
        panic!()
    };
    assert!(matches!(
        *r,
        Raised::Circle {
            center: [1.0, 2.0, 0.0],
            normal: [1.0, 0.0, 0.0],
            ..
        }
    ));
    assert!(matches!(
        only_shape("sphere; (1, 2); 3").unwrap(),
        Shape::Raised(_)
    ));
    assert!(matches!(
        only_shape("line; (0, 0, 0); (1, 0, 0)").unwrap(),
        Shape::Raised(_)
    ));
    assert!(matches!(
        only_shape("line; (0, 0); (1, 0)").unwrap(),
        Shape::Line { .. }
    ));
}

/// A rectangle with a height is the horizontal closed path of its corners.
#[test]
fn a_rectangle_with_a_height_is_a_closed_path() {
    let Shape::Raised(r) = only_shape("rectangle; (10, 20, 50); (4, 2); 0.5").unwrap() else {
        panic!()
    };
    let corners = Shape::rectangle_corners(Vec2::new(10.0, 20.0), Vec2::new(4.0, 2.0), 0.5);
    let expected: Vec<[f64; 3]> = corners.iter().map(|c| [c.x, c.y, 50.0]).collect();
    assert_eq!(
        *r,
        Raised::Path {
            points: expected.into(),
            closed: true
        }
    );
}

#[test]
fn heights_where_none_belong_are_syntax_errors() {
    let cases = [
        (
            "box; (0, 0, 0); (1, 2); 0",
            "a box's size is (length, width, height)",
        ),
        ("arc; (0, 0, 1); 1; 0; 1", "an arc or sector lies on the floor"),
        (
            "sector; (0, 0, 1); 0; 1; 0; 1",
            "an arc or sector lies on the floor",
        ),
        (
            "rectangle; (0, 0, 1); (1, 2, 3)",
            "a rectangle's size is (length, width)",
        ),
        ("circle; (0, 0, 1); 1; (0, 1)", "a circle's normal is (x, y, z)"),
        ("line; (0, 0, 1, 2); (1, 1)", "expected ')' to close a point"),
        ("cylinder; (0, 0, 0); 1", "after the radius"),
    ];
    for (geometry, says) in cases {
        let e = only_shape(geometry).unwrap_err().to_string();
        assert!(e.contains(says), "{geometry}: {e}");
    }
    let e = parse_strict("{ { header; bounds (0, 0, 0) (1, 1) } }")
        .unwrap_err()
        .to_string();
    assert!(e.contains("the bounds lie on the floor"), "{e}");
    let e = only_shape("pyramid; (0, 0, 0)").unwrap_err().to_string();
    assert!(e.contains("sphere, cylinder or box"), "{e}");
}

/// The printer writes every point of a shape above the floor with its
/// height (0 too), a circle's normal only when it is not (0, 0, 1), and
/// what it writes reads back to the same log and the same bytes.
#[test]
fn shapes_above_the_floor_print_and_read_back() {
    let log = crate::testutil::sample_raised();
    let printed = print(&log);
    for line in [
        "{ { sphere; (1200, -300, 21.5); 21.5 }; orange; {ball; 1} }",
        "{ { polyline; (0, 0, 0); (600, 0, 350.5); (1200, 0, 0) }; orange; {plan/chip; 1} }",
        "{ { line; (0, 0, 100); (10, 0, 100) }; orange; {plan/chip; 1} }",
        "{ { polygon; (0, 0, 1); (1, 0, 1); (0, 1, 0) }; orange; {plan/chip; 1} }",
        "{ { circle; (5, 6); 7 }; white; {ball; 0} }",
        "{ { circle; (0, 0, 500); 90 }; orange; {ball; 1} }",
        "{ { circle; (1, 2, 3); 4; (1, 0, 0) }; orange; {ball; 1} }",
        r#"{ { text; (1, 2, 180); "above \"me\""; 14 }; orange; {plan/chip; 1} }"#,
        "{ { point; (3, 4, 5); dot; 6 }; orange; {plan/chip; 1} }",
        "{ { point; (3, 4, 0); cross; 0 }; orange; {plan/chip; 1} }",
        "{ { cylinder; (100, 0, 0); 90; 150 }; orange; {ball; 1} }",
        "{ { box; (-500, 250, 0); (180, 60, 40); 0.5 }; orange; {ball; 1} }",
    ] {
        assert!(printed.contains(line), "{line}\n{printed}");
    }
    let back = parse(&printed).unwrap();
    assert_eq!(back, log);
    let bin = crate::native::to_bytes(&log);
    assert_eq!(crate::native::to_bytes(&back), bin);
}

/// `-0` survives native → text → native in a height and a normal.
#[test]
fn negative_zero_heights_survive_a_round_trip() {
    let mut log = Log::new();
    let e = log.entities.intern("e");
    let shape = |r| Primitive {
        shape: Shape::Raised(Box::new(r)),
        style: Style::default(),
        entity: e,
        level: 0,
    };
    log.push_frame(
        FrameTime::Instant(1.0),
        [
            shape(Raised::Sphere {
                center: [1.0, 2.0, -0.0],
                radius: 1.0,
            }),
            shape(Raised::Circle {
                center: [0.0; 3],
                radius: 1.0,
                normal: [-0.0, 0.0, 1.0],
            }),
        ],
    );
    let bin = crate::native::to_bytes(&log);
    let txt = print(&crate::native::read(&bin[..]).unwrap());
    assert!(
        txt.contains("(1, 2, -0)") && txt.contains("; (-0, 0, 1) }"),
        "{txt}"
    );
    assert_eq!(crate::native::to_bytes(&parse(&txt).unwrap()), bin);
}

/// A log with shapes above the floor says `version 2` in its header (a
/// header made for it when the log has none), reads back equal, and the
/// version is what an older underlay stops at: the header comes first.
#[test]
fn a_log_with_heights_says_its_version_first() {
    let log = crate::testutil::sample_raised();
    let printed = print(&log);
    let header = printed.lines().nth(1).unwrap();
    assert!(
        header.starts_with("{ header") && header.ends_with("; version 2 }"),
        "{printed}"
    );
    assert_eq!(parse(&printed).unwrap(), log);
    // Without a header of its own: one saying only the version.
    let mut bare = log.clone();
    bare.header = Header::default();
    let printed = print(&bare);
    assert_eq!(printed.lines().nth(1), Some("{ header; version 2 }"));
    assert_eq!(parse(&printed).unwrap(), bare);
    // Printing only frames on the floor says no version.
    let mut out = Vec::new();
    write_filtered(&bare, &mut out, |f| {
        bare.frame_primitives(f)
            .iter()
            .all(|p| !matches!(p.shape, Shape::Raised(_)))
    })
    .unwrap();
    assert!(!String::from_utf8(out).unwrap().contains("version"));
}

/// A log on the floor prints exactly as before versions existed: no
/// `version`, its header as it was.
#[test]
fn a_log_on_the_floor_prints_as_before() {
    let src = "{\n{ header; name \"run 3\"; time relative; unit m; threshold 0.05 }\n{ 1.5; {\n  { { circle; (1, 2); 0.5 }; red; {ball; 0} }\n} }\n}\n";
    let log = parse(src).unwrap();
    assert_eq!(print(&log), src);
    let figure = print(&parse(FIGURE_3_7).unwrap());
    assert!(figure.starts_with("{\n{ {-inf; inf}; {\n"), "{figure}");
    assert!(
        !figure.contains("version") && !figure.contains("header"),
        "{figure}"
    );
}

/// Versions 1 to 3 read; a later one is refused as needing a newer
/// underlay, naming its line; a version that is not one is a syntax error.
#[test]
fn a_newer_text_version_is_refused_naming_the_line() {
    for v in [1, 2, 3] {
        let log = parse(&format!("{{\n{{ header; version {v} }}\n{{ 1; {{ }} }}\n}}")).unwrap();
        assert_eq!(log.frames.len(), 1);
    }
    let e = parse("{\n// a log from the future\n{ header; name x; version 4 }\n{ 1; { } }\n}").unwrap_err();
    let said = e.to_string();
    assert!(matches!(e, ReadError::Syntax { line: 3, .. }), "{said}");
    assert!(said.contains("version 4 needs a newer underlay"), "{said}");
    for bad in ["0", "two", "2.5", "-1", "}"] {
        let e = parse(&format!("{{ {{ header; version {bad} }} }}")).unwrap_err();
        assert!(e.to_string().contains("expected a version number"), "{bad}: {e}");
    }
}

/// Shapes in the picture's pixels carry the `picture` option, make the
/// log say `version 3`, and read back equal; `picture` on a shape with
/// heights is an error naming its place.
#[test]
fn picture_shapes_print_with_their_option_and_version_3() {
    let log = crate::testutil::sample_picture();
    let printed = print(&log);
    assert!(
        printed.lines().nth(1).unwrap().ends_with("; version 3 }"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "{ { circle; (320.5, 240); 12 }; red; {\"/detections/boxes\"; 0}; thickness 2 px; picture }"
        ),
        "{printed}"
    );
    assert_eq!(parse(&printed).unwrap(), log);
    let one = parse("{ { 1; { { { line; (0, 0); (10, 5) }; red; {a; 0}; PICTURE } } } }").unwrap();
    assert_eq!(
        one.primitives[0].shape,
        Shape::picture(Shape::Line {
            start: Vec2::new(0.0, 0.0),
            end: Vec2::new(10.0, 5.0)
        })
    );
    let e =
        parse_strict("{\n{ 1; {\n { { sphere; (0, 0, 1); 1 }; red; {a; 0}; picture } } }\n}").unwrap_err();
    assert!(matches!(e, ReadError::Syntax { line: 3, .. }), "{e}");
    assert!(e.to_string().contains("cannot have heights"), "{e}");
}

/// A bad item costs that item: passed over to the brace that closes it,
/// counted and said with its line and column; the items around it load.
#[test]
fn a_bad_item_costs_that_item() {
    let src = "{\n{ 1; { { { circle; (0, 0); 5 }; red; {a; 0} } } }\n{ 2; { { { circle; (0, 0) 5 }; red; {a; 0} } } }\n{ 3; { { { circle; (1, 1); 5 }; red; {a; 0} } } }\n}";
    let log = parse(src).unwrap();
    let times: Vec<f64> = log.frames.iter().map(|f| f.time.start()).collect();
    assert_eq!(times, [1.0, 3.0]);
    assert_eq!(log.skipped.items, 1);
    let second = src.find("{ 2;").unwrap() as u64;
    assert_eq!(log.skipped.first, Some(second));
    assert_eq!(
        log.skipped.bytes,
        src[second as usize..].find('\n').unwrap() as u64
    );
    assert_eq!(log.warnings.len(), 1);
    let said = &log.warnings[0].message;
    assert!(
        said.starts_with("line 3, column 27: expected ';'")
            && said.ends_with("the item from line 3 was passed over"),
        "{said}"
    );
    // The same in strict mode is an error at that place.
    let e = parse_strict(src).unwrap_err();
    assert!(
        matches!(
            e,
            ReadError::Syntax {
                line: 3,
                column: 27,
                ..
            }
        ),
        "{e}"
    );
}

/// Braces in strings and comments do not end an item being passed over;
/// garbage between items is passed over to the next brace; a log cut
/// short keeps its frames; what follows its end is passed over.
#[test]
fn passing_over_finds_the_right_brace() {
    let src = "{ { 1; { { { text; (0, 0); \"}}{\"; 9 }; red; {a; 0} } } // }}}\n x } !?\n{ 2; { } }\n{ 3; { } }\n} trailing";
    let log = parse(src).unwrap();
    let times: Vec<f64> = log.frames.iter().map(|f| f.time.start()).collect();
    assert_eq!(times, [2.0, 3.0], "{:?}", log.warnings);
    assert_eq!(log.skipped.items, 2, "{:?}", log.warnings);
    assert_eq!(log.skipped.stopped_at, Some(src.find("trailing").unwrap() as u64));
    let cut = "{ { 1; { } }\n{ 2; { } }\n{ 3; { { { circle; (0, 0); 5 }; re";
    let log = parse(cut).unwrap();
    assert_eq!(log.frames.len(), 2);
    assert_eq!(log.skipped.stopped_at, Some(cut.find("{ 3;").unwrap() as u64));
    assert!(
        log.warnings[0].message.contains("not closed"),
        "{:?}",
        log.warnings
    );
    let unclosed = "{ { 1; { } }\n{ 2; { } }\n";
    let log = parse(unclosed).unwrap();
    assert_eq!(log.frames.len(), 2);
    assert!(
        log.warnings[0].message.contains("not closed by '}'"),
        "{:?}",
        log.warnings
    );
}

/// A version this build cannot read refuses the whole log, whatever else
/// it holds: the rest cannot be read without it.
#[test]
fn a_version_from_the_future_refuses_the_log_even_when_lenient() {
    let e = parse("{ { 1; { } }\n{ header; version 9 }\n{ 2; { } } }").unwrap_err();
    assert!(e.to_string().contains("version 9 needs a newer underlay"), "{e}");
}
