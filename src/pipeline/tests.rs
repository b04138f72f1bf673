//! The pipeline's unit tests: drawing, masks, planes and RGB, order.

use super::*;
use crate::calib::Calibration;
use crate::geom::Vec2;
use crate::image::{FLOOR, MaskImage, RgbImage};
use crate::log::{FrameTime, Primitive, Rgba, Shape, Style};
use crate::mask::MaskSettings;
use crate::select::FilterSpec;
use crate::video::Picture;
use crate::video::TimeMap;

pub(crate) fn identity() -> Calibration {
    Calibration::from_homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap()
}

pub(crate) fn dot_log() -> Log {
    let mut log = Log::new();
    let e = log.entities.intern("ball");
    let circle = |x: f64| Primitive {
        shape: Shape::Circle {
            center: Vec2::new(x, 20.0),
            radius: 5.0,
        },
        style: Style {
            fill: Some(Rgba::from_rgb(0xff0000)),
            ..Style::color(Rgba::from_rgb(0xff0000))
        },
        entity: e,
        level: 0,
    };
    log.push_frame(FrameTime::Instant(10.0), [circle(20.0)]);
    log.push_frame(FrameTime::Instant(11.0), [circle(60.0)]);
    log
}

/// Identity calibration, log time = video time + 10, threshold 0.3 s.
pub(crate) fn settings() -> DrawSettings {
    DrawSettings {
        calibration: Some(identity()),
        time: TimeMap::new(10.0),
        instant_threshold: InstantThreshold::Seconds(0.3),
        mask: MaskSettings::None,
        ..DrawSettings::default()
    }
}

pub(crate) fn frame(t: f64) -> SourceFrame {
    SourceFrame::new(0, t, RgbImage::zeros((40, 80, 3)))
}

/// A masker that calls the left half foreground.
pub(crate) struct LeftHalf;
impl Masker for LeftHalf {
    fn name(&self) -> &str {
        "left-half"
    }
    fn compute(&mut self, frame: &Picture<'_>, _t: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        let (w, h) = frame.size();
        out.set_pixels(&MaskImage::from_shape_fn((h, w), |(_, x)| {
            if x < w / 2 { 0 } else { FLOOR }
        }));
        Ok(())
    }
}

fn left_half_pipeline() -> Pipeline {
    Pipeline::new(Arc::new(dot_log()), &settings())
        .unwrap()
        .with_masker(Box::new(LeftHalf))
}

#[test]
fn offset_selects_the_frame_and_mask_hides_it() {
    let mut p = left_half_pipeline();
    // Video 0 s → log 10 s: the circle at x = 20 is on the masked half.
    let mut f = frame(0.0);
    let s = p.process(&mut f).unwrap();
    assert_eq!((s.primitives, s.drawn, s.skipped), (1, 1, 0));
    assert!(f.image.iter().all(|&v| v == 0));
    assert_eq!(p.overlay().pixel(20, 20), [255, 0, 0, 255]);
    // Video 1 s → log 11 s: the circle at x = 60 is on the floor half.
    let mut f = frame(1.0);
    let s = p.process(&mut f).unwrap();
    assert_eq!(s.log_time, LogTime(11.0));
    assert_eq!(f.image[[20, 60, 0]], 255);
    assert_eq!(p.overlay().pixel(20, 20), [0; 4]);
}

/// A session's field cuts the mask to its region; an unknown one is
/// an error that names it.
#[test]
fn a_field_preset_is_checked_and_used() {
    let mut p = left_half_pipeline();
    let mut s = settings();
    s.field = Some("moon".into());
    let e = crate::error::chain(&p.configure(&s).unwrap_err());
    assert!(e.contains("moon"), "{e}");
    s.field = Some("football".into());
    s.mask = MaskSettings::default();
    // A camera that sees the pitch (105 × 68 m in mm) as a speck far
    // beyond this small picture: nothing in the picture is floor.
    s.calibration = Some(
        Calibration::from_homography([[1e-4, 0.0, 1000.0], [0.0, 1e-4, 1000.0], [0.0, 0.0, 1.0]]).unwrap(),
    );
    // (The pipeline masks only where it draws: the masker it builds is
    // asked for the whole mask.)
    let whole = |s: &DrawSettings| {
        let mut m = with_field(s.mask.build().unwrap(), s).unwrap();
        let mut out = FloorMask::new();
        m.compute(&Picture::Rgb(&frame(0.0).image), 0.0, &mut out)
            .unwrap();
        out.to_image()
    };
    assert!(whole(&s).iter().all(|&v| v != FLOOR));
    let mut p = Pipeline::new(Arc::new(dot_log()), &s).unwrap();
    let mut f = frame(0.0);
    p.process(&mut f).unwrap();
    // The same field named by the calibration file instead.
    let named = s.calibration.clone().map(|c| c.with_field("football".into()));
    s.field = None;
    s.calibration = None;
    let mut p = Pipeline::new(Arc::new(dot_log()), &s).unwrap();
    let mut f = frame(0.0);
    p.process(&mut f).unwrap();
    let floor_without = p.last_mask().floor_pixels();
    assert!(floor_without > 0, "without a field the picture has floor");
    s.calibration = named;
    p.configure(&s).unwrap();
    let mut f = frame(0.0);
    p.process(&mut f).unwrap();
    assert!(whole(&s).iter().all(|&v| v != FLOOR));
}

/// An entity drawn above the mask shows where the mask hides the
/// rest.
#[test]
fn entities_above_the_mask_are_not_hidden() {
    let mut p = left_half_pipeline();
    let mut s = settings();
    s.filter.above_mask.insert("ball".into());
    p.configure(&s).unwrap();
    // The circle at x = 20 is on the masked half, and shows.
    let mut f = frame(0.0);
    p.process(&mut f).unwrap();
    assert_eq!(f.image[[20, 20, 0]], 255);
    // Marked for the encoder too.
    s.filter.above_mask.clear();
    p.configure(&s).unwrap();
    let mut f = frame(0.0);
    p.process(&mut f).unwrap();
    assert!(f.image.iter().all(|&v| v == 0), "hidden again");
}

#[test]
fn toggles_switch_the_mask_and_the_tint() {
    // Without the floor mask the drawing shows everywhere.
    let mut p = left_half_pipeline();
    let mut s = settings();
    s.toggles.floor_mask = false;
    p.configure(&s).unwrap();
    let mut f = frame(0.0);
    p.process(&mut f).unwrap();
    assert_eq!(f.image[[20, 20, 0]], 255);
    assert_eq!(p.last_mask().floor_pixels(), 40 * 80);
    // Tint only: the floor half is pink, nothing is drawn.
    let mut p = left_half_pipeline();
    s.toggles = DrawToggles {
        overlay: false,
        floor_mask: true,
        tint: true,
        ..DrawToggles::default()
    };
    p.configure(&s).unwrap();
    let mut f = frame(0.0);
    let st = p.process(&mut f).unwrap();
    assert_eq!(st.primitives, 0);
    assert_eq!(f.image[[5, 5, 0]], 0);
    assert!(f.image[[5, 70, 0]] > 50);
}

#[test]
fn a_source_clock_and_mask_are_used() {
    let mut p = Pipeline::new(Arc::new(dot_log()), &settings()).unwrap();
    // The frame at 5 s shows clock 1 s (a stoppage): log time 11 s.
    let mut f = frame(5.0);
    f.clock = Some(1.0);
    f.mask = Some(MaskImage::from_shape_fn(
        (40, 80),
        |(_, x)| if x < 70 { 0 } else { FLOOR },
    ));
    let mut s = settings();
    s.mask = MaskSettings::Auto;
    p.configure(&s).unwrap();
    let st = p.process(&mut f).unwrap();
    assert_eq!(st.log_time, LogTime(11.0));
    assert_eq!(f.image[[20, 60, 0]], 0, "hidden by the source's own mask");
    assert!(p.last_mask().is_floor(75, 0));
    // `source` without masks from the source is an error.
    s.mask = MaskSettings::Source;
    p.configure(&s).unwrap();
    let e = p.process(&mut frame(1.0)).unwrap_err();
    assert!(matches!(e, PipelineError::NoSourceMask { .. }), "{e}");
}

#[test]
fn bad_time_and_missing_calibration() {
    let mut s = settings();
    s.calibration = None;
    let mut p = Pipeline::new(Arc::new(dot_log()), &s).unwrap();
    let st = p.process(&mut frame(0.0)).unwrap();
    assert!(!st.calibrated && st.primitives == 0);
    s.time = TimeMap::new(f64::NAN);
    p.configure(&s).unwrap();
    let e = p.process(&mut frame(1.5)).unwrap_err().to_string();
    assert!(e.contains("1.500") && e.contains("offset"), "{e}");
}

#[test]
fn pipelines_can_move_to_worker_threads() {
    const _: () = {
        const fn is_send<T: Send>() {}
        is_send::<Pipeline>();
    };
    let p = left_half_pipeline();
    let mut forked = p.fork().unwrap();
    assert!(Arc::ptr_eq(p.log(), forked.log()) && Arc::ptr_eq(p.index(), forked.index()));
    let mut p = p;
    let stats = std::thread::spawn(move || p.process(&mut frame(0.0)).unwrap())
        .join()
        .unwrap();
    assert_eq!(stats.drawn, 1);
    // The fork draws the same, through a masker of its own built from
    // the settings.
    let mut f = frame(1.0);
    let stats = forked.process(&mut f).unwrap();
    assert_eq!((stats.drawn, f.image[[20, 60, 0]]), (1, 255));
    assert_eq!(forked.masker_name(), "none");
}

#[test]
fn tiny_frames_and_changing_sizes() {
    let mut p = Pipeline::new(Arc::new(dot_log()), &settings()).unwrap();
    for (h, w) in [(0, 0), (1, 1), (0, 7), (40, 80), (3, 2), (40, 80)] {
        let mut f = SourceFrame::new(0, 0.0, RgbImage::zeros((h, w, 3)));
        let s = p.process(&mut f).unwrap();
        assert_eq!(s.primitives, 1);
        assert_eq!(p.last_mask().dim(), (h, w));
    }
    // A frame not in standard layout is refused, not misread.
    let fortran = RgbImage::zeros((3, 80, 40)).reversed_axes();
    assert_eq!(fortran.dim(), (40, 80, 3));
    let e = p.process(&mut SourceFrame::new(0, 0.0, fortran)).unwrap_err();
    let e = crate::error::chain(&e);
    assert!(e.contains("layout") && e.contains("0.000 s"), "{e}");
}

#[test]
fn frames_drawn_on_their_planes_are_the_same_converted_late_or_on_reading() {
    use crate::mask::synth::{SynthOptions, generate};
    use crate::video::{Decoder, Encoder, EncoderSettings};
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("in.mp4");
    let encoding = EncoderSettings {
        crf: 10,
        preset: "ultrafast".into(),
        ..Default::default()
    };
    let mut e = Encoder::create(&video, 80, 40, &encoding).unwrap();
    for i in 0..4u8 {
        let f = generate(&SynthOptions {
            width: 80,
            height: 40,
            carpet: [20 + 5 * i, 110 + 6 * i, 30],
            ..Default::default()
        });
        e.push(&f.frame, f64::from(i) * 0.2).unwrap();
    }
    e.finish().unwrap();
    let s = DrawSettings {
        mask: MaskSettings::default(),
        ..settings()
    };
    let log = Arc::new(dot_log());
    let mut drawn = Vec::new();
    for defer in [false, true] {
        let mut d = Decoder::open(&video).unwrap();
        d.set_keep_yuv(true);
        d.set_defer_rgb(defer);
        let mut leader = Pipeline::new(Arc::clone(&log), &s).unwrap();
        let mut worker = leader.fork().unwrap();
        let mut f = SourceFrame::empty();
        let mut frames = Vec::new();
        while d.read_into(&mut f).unwrap() {
            assert_eq!(f.rgb_pending(), defer);
            let plan = leader.prepare(&mut f).unwrap();
            let stats = worker.process_planned(&mut f, &plan).unwrap();
            // Drawn on the planes: the RGB picture is made from them.
            let drawn_on = f.yuv.as_ref().unwrap().is_drawn();
            assert_eq!(drawn_on, stats.primitives > 0, "at {}", f.time);
            assert_eq!(f.rgb_pending(), defer || drawn_on);
            f.finish_rgb();
            frames.push((plan, drawn_on, f.image.clone()));
        }
        drawn.push(frames);
    }
    assert_eq!(drawn[0].len(), 4);
    assert!(drawn[0].iter().any(|f| f.1) && drawn[0].iter().any(|f| !f.1));
    assert_eq!(drawn[0], drawn[1]);
}

#[test]
fn planned_in_order_and_drawn_anywhere_equals_drawn_in_order() {
    use crate::mask::synth::{SynthOptions, generate};
    let s = DrawSettings {
        mask: MaskSettings::default(),
        ..settings()
    };
    let log = Arc::new(dot_log());
    let frames: Vec<SourceFrame> = (0..6)
        .map(|i| {
            let carpet = [20 + 4 * i as u8, 110 + 6 * i as u8, 30];
            let f = generate(&SynthOptions {
                width: 80,
                height: 40,
                carpet,
                ..Default::default()
            });
            SourceFrame::new(i, i as f64 * 0.2, f.frame)
        })
        .collect();
    let mut one = Pipeline::new(Arc::clone(&log), &s).unwrap();
    let mut leader = Pipeline::new(Arc::clone(&log), &s).unwrap();
    let mut workers = [leader.fork().unwrap(), leader.fork().unwrap()];
    for (i, f) in frames.iter().enumerate() {
        let mut want = f.clone();
        one.process(&mut want).unwrap();
        let mut got = f.clone();
        let plan = leader.prepare(&mut got).unwrap();
        // Backwards through the workers, so neither sees every frame.
        workers[(i / 2) % 2].process_planned(&mut got, &plan).unwrap();
        assert_eq!(got.image, want.image, "frame {i}");
    }
}

#[test]
fn full_range_planes_kept_for_a_display_are_masked_and_drawn_in_rgb() {
    use crate::mask::synth::{SynthOptions, generate};
    // A JPEG-range picture whose planes (black here) are not what the
    // RGB picture shows: anything masked or drawn from them would differ.
    let mut raw = ffmpeg_next::frame::Video::new(ffmpeg_next::format::Pixel::YUVJ420P, 80, 40);
    for i in 0..3 {
        raw.data_mut(i).fill(if i == 0 { 0 } else { 128 });
    }
    let s = DrawSettings {
        mask: MaskSettings::default(),
        ..settings()
    };
    let log = Arc::new(dot_log());
    let mut with_planes = Pipeline::new(Arc::clone(&log), &s).unwrap();
    let mut rgb_only = Pipeline::new(Arc::clone(&log), &s).unwrap();
    // At 0 s the dot is drawn; at 0.5 s nothing is (0.3 s threshold).
    for (i, t) in [0.0, 0.5].into_iter().enumerate() {
        let f = generate(&SynthOptions {
            width: 80,
            height: 40,
            ..Default::default()
        });
        let mut want = SourceFrame::new(i as u64, t, f.frame);
        let mut got = want.clone();
        got.yuv = Some(crate::video::Yuv420::reference(&raw, (80, 40), None, true).unwrap());
        assert!(got.full_range_planes() && matches!(got.picture(), Picture::Rgb(_)));
        let stats = with_planes.process(&mut got).unwrap();
        rgb_only.process(&mut want).unwrap();
        assert_eq!(got.image, want.image, "at {t}");
        // Drawn on: the planes no longer show the picture and go;
        // nothing drawn: they stay, for the display.
        assert_eq!(stats.primitives > 0, t == 0.0);
        assert_eq!(got.yuv.is_none(), t == 0.0, "at {t}");
        if let Some(yuv) = &got.yuv {
            assert!(!yuv.is_drawn() && yuv.picture().is_some());
        }
    }
}

/// The adaptive masker computing whole masks only.
struct WholeMasks(crate::mask::AdaptiveMasker);
impl Masker for WholeMasks {
    fn name(&self) -> &str {
        "whole"
    }
    fn compute(&mut self, frame: &Picture<'_>, t: f64, out: &mut FloorMask) -> Result<(), MaskError> {
        self.0.compute(frame, t, out)
    }
    fn advance(&mut self, frame: &Picture<'_>, t: f64) -> Result<MaskStep, MaskError> {
        self.0.advance(frame, t)
    }
    fn compute_step(
        &mut self,
        frame: &Picture<'_>,
        t: f64,
        step: &MaskStep,
        out: &mut FloorMask,
    ) -> Result<(), MaskError> {
        self.0.compute_step(frame, t, step, out)
    }
}

/// A whole mask computed beside the drawing (the viewer's parallel
/// mode) gives the same frames as masking in turn, bit for bit, as the
/// pipeline switches between whole masks (drawings all over) and
/// windows (one small drawing) from frame to frame: with fills, text,
/// thick lines, an entity drawn above the mask, and the tint on and off.
#[test]
fn masking_beside_the_drawing_equals_masking_in_turn() {
    use crate::mask::synth::{SynthOptions, generate};
    let mut log = Log::new();
    let e = log.entities.intern("things");
    let labels = log.entities.intern("labels");
    let prim = |shape, style| Primitive {
        shape,
        style,
        entity: e,
        level: 0,
    };
    let magenta = Style::color(Rgba::from_rgb(0xff00ff));
    let circle = |x: f64, y: f64, r: f64| {
        prim(
            Shape::Circle {
                center: Vec2::new(x, y),
                radius: r,
            },
            magenta,
        )
    };
    for k in 0..8 {
        let prims: Vec<_> = if k % 2 == 0 {
            vec![circle(60.0 + 10.0 * k as f64, 80.0, 6.0)]
        } else {
            let mut v: Vec<_> = (0..40)
                .map(|i| circle((i % 8) as f64 * 30.0 + 15.0, (i / 8) as f64 * 32.0 + 16.0, 12.0))
                .collect();
            v.push(prim(
                Shape::Rectangle {
                    center: Vec2::new(100.0 + k as f64, 79.3),
                    size: Vec2::new(70.0, 33.0),
                    orientation: 0.3,
                },
                Style {
                    fill: Some(Rgba(0x20c0_ff80)),
                    ..Style::color(Rgba::from_rgb(0xffff00))
                },
            ));
            v.push(prim(
                Shape::Line {
                    start: Vec2::new(5.0, 150.0),
                    end: Vec2::new(230.0, 3.0 + k as f64),
                },
                Style {
                    thickness: 7.0,
                    ..Style::color(Rgba(0xff8000c0))
                },
            ));
            v.push(Primitive {
                entity: labels,
                ..prim(
                    Shape::Text {
                        anchor: Vec2::new(20.0, 86.0),
                        text: "split".into(),
                        size: 14.0,
                    },
                    Style::color(Rgba::from_rgb(0xffffff)),
                )
            });
            v
        };
        log.push_frame(FrameTime::Instant(10.0 + 0.5 * k as f64), prims);
    }
    let log = Arc::new(log);
    for tint in [false, true] {
        let mut s = DrawSettings {
            mask: MaskSettings::default(),
            ..settings()
        };
        s.toggles.tint = tint;
        s.filter.above_mask = ["labels".to_string()].into();
        let mut one = Pipeline::new(Arc::clone(&log), &s).unwrap();
        let mut beside = Pipeline::new(Arc::clone(&log), &s)
            .unwrap()
            .with_parallel_mask(true);
        let mut whole_seen = [false; 2];
        for k in 0..8u64 {
            let synth = generate(&SynthOptions {
                width: 240,
                height: 160,
                seed: 7 + k,
                ..Default::default()
            });
            let f = SourceFrame::new(k, 0.5 * k as f64, synth.frame);
            let (mut a, mut b) = (f.clone(), f);
            let sa = one.process(&mut a).unwrap();
            let sb = beside.process(&mut b).unwrap();
            assert_eq!((sa.drawn, sa.skipped), (sb.drawn, sb.skipped), "frame {k}");
            assert!(sb.drawn > 0, "frame {k} draws");
            assert!(a.image == b.image, "frame {k}, tint {tint}");
            assert_eq!(one.whole_last, beside.whole_last, "frame {k}");
            whole_seen[usize::from(beside.whole_last)] = true;
        }
        if !tint {
            assert_eq!(whole_seen, [true, true], "both windows and whole masks were used");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    #[test]
    fn masking_where_drawn_equals_masking_whole_frames(
        seed in 0u64..500,
        shapes in proptest::collection::vec((0f64..240.0, 0f64..160.0, 1f64..30.0, proptest::bool::ANY), 0..25),
    ) {
        use crate::mask::synth::{SynthOptions, generate};
        let mut log = Log::new();
        let e = log.entities.intern("things");
        let prims: Vec<_> = shapes
            .iter()
            .map(|&(x, y, r, circle)| Primitive {
                shape: if circle {
                    Shape::Circle { center: Vec2::new(x, y), radius: r }
                } else {
                    Shape::Line { start: Vec2::new(x, y), end: Vec2::new(x + 4.0 * r, y - r) }
                },
                style: Style::color(Rgba::from_rgb(0xff00ff)),
                entity: e,
                level: 0,
            })
            .collect();
        log.push_frame(FrameTime::Instant(10.0), prims);
        let s = DrawSettings { mask: MaskSettings::default(), ..settings() };
        let log = Arc::new(log);
        // Windows however large, so that they are used on small frames.
        let parts = crate::mask::AdaptiveMasker::new(Default::default())
            .unwrap()
            .with_window_share(f64::INFINITY);
        let mut windows = Pipeline::new(Arc::clone(&log), &s).unwrap().with_masker(Box::new(parts));
        let whole = crate::mask::AdaptiveMasker::new(Default::default()).unwrap();
        let mut wholes = Pipeline::new(log, &s).unwrap().with_masker(Box::new(WholeMasks(whole)));
        for i in 0..3u64 {
            let synth = generate(&SynthOptions { width: 240, height: 160, seed: seed + i, ..Default::default() });
            let f = SourceFrame::new(i, i as f64 * 0.02, synth.frame);
            let (mut a, mut b) = (f.clone(), f);
            windows.process(&mut a).unwrap();
            wholes.process(&mut b).unwrap();
            proptest::prop_assert!(a.image == b.image, "frame {}", i);
        }
    }
}

#[test]
fn configure_reports_unknown_names_and_applies_the_rest() {
    let mut p = Pipeline::new(Arc::new(dot_log()), &settings()).unwrap();
    let mut s = settings();
    s.filter = FilterSpec {
        exclude: vec!["nope".into()],
        ..FilterSpec::default()
    };
    s.time = TimeMap::new(9.0);
    let e = p.configure(&s).unwrap_err();
    assert!(crate::error::chain(&e).contains("nope"), "{e}");
    // The unknown name is ignored; the new offset applies.
    let st = p.process(&mut frame(2.0)).unwrap();
    assert_eq!((st.log_time, st.primitives), (LogTime(11.0), 1));
    assert!(p.configure(&s).is_ok(), "reported once, until it changes");
    assert!(
        Pipeline::new(Arc::new(dot_log()), &s).is_err(),
        "export refuses it"
    );
}

/// A log whose persistent frames draw on every layer (the floor: lines, a
/// filled polygon, text, a primitive that cannot be drawn; above the
/// floor: a sphere; above the mask: a shape in the picture's pixels and an
/// entity named so), one of them for part of the time only, and
/// instantaneous frames with a ball and a raised cylinder, all before a
/// camera a few metres away (see [`kept_camera`]).
fn kept_log() -> Log {
    let mut log = Log::new();
    let (field, zone, ball) = (
        log.entities.intern("field"),
        log.entities.intern("zone"),
        log.entities.intern("ball"),
    );
    let red = Rgba::from_rgb(0xff0000);
    let prim = |shape: Shape, entity, fill: Option<u32>| Primitive {
        shape,
        style: Style {
            fill: fill.map(Rgba::from_rgb),
            thickness: 2.0,
            ..Style::color(red)
        },
        entity,
        level: 0,
    };
    let v = Vec2::new;
    let raised = |r: crate::log::Raised| Shape::Raised(Box::new(r));
    log.push_frame(
        FrameTime::Persistent {
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
        },
        [
            prim(
                Shape::Line {
                    start: v(-2000.0, -500.0),
                    end: v(2000.0, -500.0),
                },
                field,
                None,
            ),
            prim(
                Shape::Line {
                    start: v(0.0, -1500.0),
                    end: v(0.0, 1500.0),
                },
                field,
                None,
            ),
            prim(
                Shape::Polygon {
                    vertices: vec![v(-1500.0, 200.0), v(-500.0, 300.0), v(-900.0, 900.0)].into(),
                    closed: true,
                },
                field,
                Some(0x00ff00),
            ),
            prim(
                Shape::Text {
                    anchor: v(300.0, 0.0),
                    text: "kept".into(),
                    size: 9.0,
                },
                field,
                None,
            ),
            prim(
                Shape::Circle {
                    center: v(0.0, 0.0),
                    radius: f64::NAN,
                },
                field,
                None,
            ),
            prim(
                raised(crate::log::Raised::Sphere {
                    center: [800.0, 400.0, 300.0],
                    radius: 150.0,
                }),
                field,
                None,
            ),
            prim(
                Shape::Picture(Box::new(Shape::Line {
                    start: v(2.0, 2.0),
                    end: v(60.0, 10.0),
                })),
                field,
                None,
            ),
        ],
    );
    log.push_frame(
        FrameTime::Persistent {
            start: 10.0,
            end: 10.25,
        },
        [prim(
            Shape::Rectangle {
                center: v(-600.0, -800.0),
                size: v(700.0, 400.0),
                orientation: 0.3,
            },
            zone,
            Some(0x0000ff),
        )],
    );
    for k in 0..8 {
        let x = -1500.0 + 400.0 * f64::from(k);
        log.push_frame(
            FrameTime::Instant(10.0 + 0.1 * f64::from(k)),
            [
                prim(
                    Shape::Circle {
                        center: v(x, 100.0),
                        radius: 120.0,
                    },
                    ball,
                    Some(0xffff00),
                ),
                prim(
                    raised(crate::log::Raised::Cylinder {
                        base: [x, -300.0, 0.0],
                        radius: 90.0,
                        height: 250.0,
                    }),
                    ball,
                    None,
                ),
            ],
        );
    }
    log
}

/// A 160 × 120 camera 6 m behind the field's centre and 3 m up, looking at
/// it; `dx` moves it sideways (mm).
fn kept_camera(dx: f64) -> Calibration {
    let k = [[225.0, 0.0, 80.0], [0.0, 225.0, 60.0], [0.0, 0.0, 1.0]];
    let (r, t) = crate::calib::camera::look_at([dx, -6000.0, 3000.0], [dx, 0.0, 300.0]).unwrap();
    Calibration::from_camera(&k, &[], &r, t)
        .unwrap()
        .with_image_size(160, 120)
}

/// Frame after frame, a pipeline that pastes the persistent primitives'
/// drawing kept from the frame before draws every pixel and counts every
/// primitive as a new pipeline that draws them all: while they stay, when
/// one of them ends, when the camera moves (a frame's own calibration)
/// and comes back, and with a filter changed between frames.
#[test]
fn persistent_drawings_kept_from_frame_to_frame_draw_what_drawing_them_gives() {
    let log = Arc::new(kept_log());
    let mut s = settings();
    s.calibration = Some(kept_camera(0.0));
    s.filter.above_mask.insert("zone".into());
    let mut kept = Pipeline::new(Arc::clone(&log), &s)
        .unwrap()
        .with_masker(Box::new(LeftHalf));
    let moved = Arc::new(kept_camera(400.0));
    let mut pasted = 0;
    // Video times (log = video + 10 s) and whether the frame has its own,
    // moved, camera.
    let frames = [
        (0.0, false),
        (0.05, false),
        (0.1, false),
        (0.15, false),
        (0.2, false),
        (0.3, false),
        (0.35, false),
        (0.4, false),
        (0.45, true),
        (0.5, true),
        (0.55, true),
        (0.6, false),
        (0.65, false),
        (0.7, false),
        (0.75, false),
        (0.8, false),
        (0.85, false),
    ];
    for (i, &(t, own)) in frames.iter().enumerate() {
        if i == 14 {
            // The filter changes: what was kept is forgotten.
            s.filter.above_mask.clear();
            kept.configure(&s).unwrap();
        }
        let make = || {
            let mut f = SourceFrame::new(0, t, RgbImage::from_elem((120, 160, 3), 90));
            f.calibration = own.then(|| Arc::clone(&moved));
            f
        };
        let was_kept = kept.band.has_kept();
        let (mut a, mut b) = (make(), make());
        let sa = kept.process(&mut a).unwrap();
        let mut fresh = Pipeline::new(Arc::clone(&log), &s)
            .unwrap()
            .with_masker(Box::new(LeftHalf));
        let sb = fresh.process(&mut b).unwrap();
        let counts = |s: &FrameStats| (s.primitives, s.drawn, s.skipped, s.skip_reason);
        assert_eq!(counts(&sa), counts(&sb), "frame {i} at {t} s");
        assert!(sa.skipped >= 1 && sa.drawn >= 8, "frame {i}: {sa:?}");
        assert_eq!(a.image, b.image, "frame {i} at {t} s");
        for (la, lb) in kept.band.layers().iter().zip(fresh.band.layers()) {
            assert_eq!(la.pixels(), lb.pixels(), "frame {i}");
            assert_eq!(la.dirty_pixels(), lb.dirty_pixels(), "frame {i}");
        }
        assert_eq!(
            kept.band.painter.depth_samples, fresh.band.painter.depth_samples,
            "frame {i}"
        );
        pasted += usize::from(was_kept && kept.band.has_kept());
    }
    // Pasted from the third frame on while nothing changes: frames 2–4,
    // 7 after the zone ended, 10 with the moved camera, 13 after it came
    // back, 16 after the filter changed.
    assert_eq!(pasted, 7);
}

/// A frame's stats carry its masker's doubt about the mask: a nearly grey
/// floor under the adaptive mask is doubtful, a green one is not, and
/// without a mask there is nothing to doubt.
#[test]
fn stats_carry_the_maskers_doubt() {
    use crate::mask::MaskDoubt;
    use crate::mask::synth::turf;
    let log = Arc::new(dot_log());
    for (colour, mask, doubtful) in [
        ([100, 106, 100], MaskSettings::Auto, true),
        ([90, 130, 90], MaskSettings::Auto, false),
        ([100, 106, 100], MaskSettings::None, false),
    ] {
        let mut s = settings();
        s.mask = mask.clone();
        let mut p = Pipeline::new(Arc::clone(&log), &s).unwrap();
        let mut frame = SourceFrame::new(0, 0.0, turf(320, 180, colour, 4));
        let st = p.process(&mut frame).unwrap();
        assert_eq!(
            matches!(st.mask_doubt, Some(MaskDoubt::GreyFloor { least: 8, .. })),
            doubtful,
            "{colour:?} {mask:?}: {:?}",
            st.mask_doubt
        );
    }
}

/// While windows cost more than the whole picture, the whole mask is
/// computed without planning them on most frames; when the drawings thin
/// out, windows are back within [`REPLAN_EVERY`] frames; every picture is
/// what a new pipeline (which plans) draws.
#[test]
fn whole_masks_without_planning_draw_what_planning_draws() {
    use crate::mask::synth::{SynthOptions, generate};
    let mut log = Log::new();
    let e = log.entities.intern("things");
    let circle = |x: f64, y: f64, r: f64| Primitive {
        shape: Shape::Circle {
            center: Vec2::new(x, y),
            radius: r,
        },
        style: Style::color(Rgba::from_rgb(0xff00ff)),
        entity: e,
        level: 0,
    };
    let frames = 20u64;
    for k in 0..frames {
        let prims: Vec<_> = if k < 5 {
            (0..40)
                .map(|i| {
                    circle(
                        (i % 8) as f64 * 30.0 + 15.0,
                        (i / 8) as f64 * 32.0 + 16.0,
                        12.0 + k as f64,
                    )
                })
                .collect()
        } else {
            vec![circle(60.0 + 3.0 * k as f64, 80.0, 6.0)]
        };
        log.push_frame(FrameTime::Instant(10.0 + 0.5 * k as f64), prims);
    }
    let log = Arc::new(log);
    let s = DrawSettings {
        mask: MaskSettings::default(),
        ..settings()
    };
    let mut p = Pipeline::new(Arc::clone(&log), &s).unwrap();
    let (mut unplanned, mut windows_back) = (0, None);
    for k in 0..frames {
        let synth = generate(&SynthOptions {
            width: 240,
            height: 160,
            seed: 3 + k,
            ..Default::default()
        });
        let f = SourceFrame::new(k, 0.5 * k as f64, synth.frame);
        let (mut a, mut b) = (f.clone(), f);
        let skipped_before = p.plans_skipped;
        p.process(&mut a).unwrap();
        unplanned += usize::from(p.plans_skipped > skipped_before);
        Pipeline::new(Arc::clone(&log), &s)
            .unwrap()
            .process(&mut b)
            .unwrap();
        assert!(a.image == b.image, "frame {k}");
        if k < 5 {
            assert!(p.whole_last, "frame {k}: dense drawings, whole masks");
        } else if !p.whole_last {
            windows_back.get_or_insert(k);
        }
    }
    assert!(unplanned >= 4, "{unplanned} frames unplanned");
    let back = windows_back.expect("windows again");
    assert!(
        back <= 5 + u64::from(REPLAN_EVERY),
        "windows back at frame {back}"
    );
}
