//! One export plan for the command line and the viewer: the same session
//! exports to the same frames whatever the number of drawing threads and
//! whichever of the two runs it, and what the viewer shows (its "Hide
//! behind robots" toggle) is what is exported.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use underlay::export::ExportOptions;
use underlay::image::RgbImage;
use underlay::video::{Decoder, Encoder, EncoderSettings};
use underlay::viewer::state::{Document, OpenRequest};

use crate::util::{assert_ok, run_in, tmp};

const FRAMES: usize = 24;

/// A 160×120 floor at 10 fps, shaded from left to right, whose green
/// brightens and darkens from frame to frame (so the adaptive mask's
/// smoothing over time decides which pixels are floor), a dark
/// robot crossing it, a log with a magenta line across the robot's path
/// and a session (default mask method) tying them together.
fn scene(dir: &Path) {
    let settings = EncoderSettings {
        crf: 12,
        preset: "ultrafast".into(),
        fps_hint: 10.0,
        ..Default::default()
    };
    let mut e = Encoder::create(&dir.join("run.mp4"), 160, 120, &settings).unwrap();
    for i in 0..FRAMES {
        let g = [70u8, 150, 90, 170, 80, 160][i % 6];
        let rx = 5 + 3 * i;
        // Shadows of several depths on the line: whether each is floor
        // or something standing on it depends on the floor's brightness
        // bound, smoothed over the frames before.
        let img = RgbImage::from_shape_fn((120, 160, 3), |(y, x, c)| {
            let v = if (45..75).contains(&y) && (rx..rx + 30).contains(&x) {
                return 15;
            } else if (55..66).contains(&y) && x >= 100 && (x - 100) % 8 < 6 {
                40 + 10 * ((x - 100) / 8) as u8
            } else {
                g
            };
            [v / 4, v, v / 3][c]
        });
        e.push(&img, i as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();
    std::fs::write(
        dir.join("run.txt"),
        "{ { {-inf; inf}; {\n\
           { { line; (0, 60); (160, 60) }; magenta; {plan/line; 0}; thickness 8 }\n\
         } } }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("session.toml"),
        "video = \"run.mp4\"\nlog = \"run.txt\"\n\n[calibration]\n\
         homography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
}

fn decoded(path: &Path) -> Vec<RgbImage> {
    let mut d = Decoder::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = d.next_frame().unwrap() {
        v.push(f.image);
    }
    v
}

fn export(dir: &Path, args: &[&str]) {
    let o = run_in(dir, [&["export"], args].concat());
    assert_ok(&o);
}

/// Exports `session` from a viewer document, as its export dialog does.
fn viewer_export(dir: &Path, session: &str, out: &str, workers: usize) {
    let doc = Document::open(&OpenRequest {
        input: Some(dir.join(session)),
        ..Default::default()
    })
    .unwrap();
    let options = ExportOptions {
        output: dir.join(out),
        workers: Some(workers),
        ..ExportOptions::default()
    };
    let plan = doc.export_plan(&options).unwrap();
    plan.run(&AtomicBool::new(false), None).unwrap();
}

#[test]
fn the_same_frames_whatever_the_workers_and_from_the_viewer_too() {
    let dir = tmp();
    let d = dir.path();
    scene(d);
    for w in ["1", "2", "3"] {
        export(d, &["session.toml", "-o", &format!("w{w}.mp4"), "--workers", w]);
    }
    viewer_export(d, "session.toml", "viewer.mp4", 2);
    let one = decoded(&d.join("w1.mp4"));
    assert_eq!(one.len(), FRAMES);
    for other in ["w2.mp4", "w3.mp4", "viewer.mp4"] {
        let frames = decoded(&d.join(other));
        assert_eq!(frames.len(), FRAMES, "{other}");
        for (i, (a, b)) in one.iter().zip(&frames).enumerate() {
            assert!(a == b, "{other}: frame {i} differs from the one-worker export");
        }
    }
    // The mask hid the line on the robot in some frame (so the masks,
    // which carry state from frame to frame, were in play).
    let hidden = one.iter().enumerate().any(|(i, f)| {
        let x = 5 + 3 * i + 15;
        x < 160 && f[[60, x, 0]] < 80
    });
    assert!(hidden, "the robot never hid the line");
}

#[test]
fn a_mask_switched_off_in_the_viewer_hides_nothing_in_the_export() {
    let dir = tmp();
    let d = dir.path();
    scene(d);
    // The viewer's "Hide behind robots" box, unticked and saved.
    let mut doc = Document::open(&OpenRequest {
        input: Some(d.join("session.toml")),
        ..Default::default()
    })
    .unwrap();
    doc.session.draw.floor_mask = false;
    doc.save(&d.join("unmasked.toml")).unwrap();
    export(d, &["unmasked.toml", "-o", "unmasked.mp4"]);
    export(d, &["session.toml", "-o", "no-mask.mp4", "--no-mask"]);
    export(d, &["session.toml", "-o", "masked.mp4"]);
    let unmasked = decoded(&d.join("unmasked.mp4"));
    assert_eq!(unmasked, decoded(&d.join("no-mask.mp4")));
    assert_ne!(unmasked, decoded(&d.join("masked.mp4")));
    // On the robot, the line shows in every frame.
    for (i, f) in unmasked.iter().enumerate() {
        let x = 5 + 3 * i + 15;
        if x < 160 {
            let p = [f[[60, x, 0]], f[[60, x, 1]], f[[60, x, 2]]];
            assert!(p[0] > 180 && p[1] < 100 && p[2] > 180, "frame {i}: {p:?}");
        }
    }
    // The viewer's own export of the unticked session is the same video.
    viewer_export(d, "unmasked.toml", "viewer.mp4", 1);
    assert_eq!(unmasked, decoded(&d.join("viewer.mp4")));
}
