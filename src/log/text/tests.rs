use super::*;

const FIGURE_3_7: &str = include_str!("../../../sample_logs/figure-3.7.txt");

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
    let e = parse("{\n{ 1; {\n { { circle; (0, 0) 5 }; red; {a; 0} }\n} }\n}").unwrap_err();
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
    let e = parse("{ { 1; { { { hexagon; (0,0) }; red; {a; 0} } } } }").unwrap_err();
    assert!(e.to_string().contains("unknown shape 'hexagon'"), "{e}");
    let e = parse("{ { 1; { { { circle; (0,0); 1 }; mauve; {a; 0} } } } }").unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");
    let e = parse("{ } x").unwrap_err();
    assert!(e.to_string().contains("after the end"), "{e}");
    let e = parse("{ { 1; { { { text; (0,0); \"abc } } } }").unwrap_err();
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
    fn binary_text_binary_is_lossless(log in crate::log::testutil::arb_log()) {
        let bin = crate::log::native::to_bytes(&log);
        let from_bin = crate::log::native::read(&bin[..]).unwrap();
        let txt = print(&from_bin);
        let from_text = match parse(&txt) {
            Ok(l) => l,
            Err(e) => return Err(proptest::test_runner::TestCaseError::fail(format!("{e}\n{txt}"))),
        };
        proptest::prop_assert_eq!(&from_text, &log, "{}", txt);
        proptest::prop_assert_eq!(crate::log::native::to_bytes(&from_text), bin);
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
        let bin = crate::log::native::to_bytes(&log);
        let read = crate::log::native::read(&bin[..]).unwrap();
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
        match parse(&text) {
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
    let bin = crate::log::native::to_bytes(&log);
    let back = parse(&print(&crate::log::native::read(&bin[..]).unwrap())).unwrap();
    assert_eq!(crate::log::native::to_bytes(&back), bin);
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
