//! Floor masks end to end: quality of the adaptive mask on synthetic fields
//! with known floor, the thesis mask against its definition, and the
//! `underlay mask` command on images (and its errors).

use std::path::Path;
use std::process::Command;

use underlay::image::{MaskImage, RgbImage};
use underlay::mask::synth::{SynthFrame, SynthOptions, generate, iou};
use underlay::mask::{AdaptiveMasker, AdaptiveSettings, FloorMask, MaskSettings, Masker, ThesisMasker};
use underlay::video::Picture;
use underlay::video::still::{load_mask, save_mask, save_rgb};

fn underlay() -> Command {
    crate::util::underlay_cmd()
}

/// Fraction of the set pixels of `part` that are set in `mask`.
fn covered(mask: &MaskImage, part: &MaskImage) -> f64 {
    let (mut n, mut hit) = (0usize, 0usize);
    for (&m, &p) in mask.iter().zip(part.iter()) {
        if p != 0 {
            n += 1;
            hit += (m != 0) as usize;
        }
    }
    hit as f64 / n.max(1) as f64
}

/// The pixels of `part` more than `r` px from its edge: those whose
/// square of side `2r + 1` around them is all in `part`.
fn interior(part: &MaskImage, r: usize) -> MaskImage {
    let (h, w) = part.dim();
    MaskImage::from_shape_fn((h, w), |(y, x)| {
        let ys = y.saturating_sub(r)..(y + r + 1).min(h);
        let all = ys
            .into_iter()
            .all(|yy| (x.saturating_sub(r)..(x + r + 1).min(w)).all(|xx| part[(yy, xx)] != 0));
        if all { 255 } else { 0 }
    })
}

/// The mask `m` makes of `picture` at `time`, as an image.
fn mask_of(m: &mut dyn Masker, picture: Picture<'_>, time: f64) -> MaskImage {
    let mut out = FloorMask::new();
    m.compute(&picture, time, &mut out).unwrap();
    out.to_image()
}

/// The mask `m` makes of an RGB picture.
fn rgb_mask(m: &mut dyn Masker, img: &RgbImage, time: f64) -> MaskImage {
    mask_of(m, Picture::Rgb(img), time)
}

fn adaptive(frame: &SynthFrame) -> MaskImage {
    let mut m = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
    rgb_mask(&mut m, &frame.frame, 0.0)
}

/// The adaptive mask finds the floor on carpets of several colours,
/// brightnesses and sizes, under uneven light and noise.
#[test]
fn adaptive_mask_finds_synthetic_floors() {
    let cases = [
        ("green carpet", SynthOptions::default()),
        (
            "1080p",
            SynthOptions {
                width: 1920,
                height: 1080,
                seed: 2,
                ..SynthOptions::default()
            },
        ),
        (
            "dark carpet (V ≈ 60, as the SSL photo)",
            SynthOptions {
                carpet: [25, 62, 20],
                seed: 3,
                ..SynthOptions::default()
            },
        ),
        (
            "dull turf (S ≈ 90, as the drone video)",
            SynthOptions {
                carpet: [100, 136, 88],
                seed: 4,
                ..SynthOptions::default()
            },
        ),
        (
            "blue floor",
            SynthOptions {
                carpet: [40, 70, 150],
                seed: 5,
                ..SynthOptions::default()
            },
        ),
        (
            "strong light gradient (×4.5 across the frame) and noise",
            SynthOptions {
                gradient: 0.7,
                noise: 20,
                seed: 6,
                ..SynthOptions::default()
            },
        ),
        (
            "small frame, many robots",
            SynthOptions {
                width: 640,
                height: 360,
                robots: 16,
                seed: 7,
                ..SynthOptions::default()
            },
        ),
    ];
    for (name, opts) in cases {
        let f = generate(&opts);
        let mask = adaptive(&f);
        let score = iou(&mask, &f.floor);
        // The mask is made of 2×2 blocks (issue 48): an object's edge
        // moves by up to a pixel or two, so objects are judged more than
        // 2 px inside their edge, as the quality bound judges masks. The
        // bound is 7 %, not the 2 % of the full-resolution mask: a robot's
        // carpet-green marker dot a block or two from its edge now joins
        // the carpet where the dark rim between them is one block (4–6 %
        // of robot pixels on the dark, dull, graded and small cases; 0 on
        // the others).
        let on_objects = covered(&mask, &interior(&f.objects, 2));
        let on_whole_objects = covered(&mask, &f.objects);
        let on_lines = covered(&mask, &f.lines);
        eprintln!(
            "{name}: IoU {score:.4}, objects marked floor {on_objects:.4} inside, {on_whole_objects:.4} whole, lines kept {on_lines:.4}"
        );
        assert!(score >= 0.98, "{name}: IoU {score}");
        assert!(
            on_objects <= 0.07,
            "{name}: {on_objects} of robot/ball pixels (2 px inside) marked floor"
        );
        assert!(on_lines >= 0.95, "{name}: only {on_lines} of line pixels kept");
    }
}

/// Masks of consecutive video frames stay put when only noise changes.
#[test]
fn adaptive_mask_is_stable_over_time() {
    let mut m = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
    let mut prev: Option<MaskImage> = None;
    for i in 0..5 {
        let f = generate(&SynthOptions {
            width: 480,
            height: 270,
            seed: 1,             // same scene…
            noise: 12 + i as u8, // …different noise each frame
            ..SynthOptions::default()
        });
        let out = rgb_mask(&mut m, &f.frame, i as f64 / 30.0);
        if let Some(p) = &prev {
            let changed = p.iter().zip(out.iter()).filter(|(a, b)| a != b).count();
            assert!(changed < 480 * 270 / 200, "frame {i}: {changed} pixels flipped");
        }
        prev = Some(out);
    }
}

/// The thesis mask agrees with the thesis's own Python
/// (`../shared/reference/thesis_mask.py`), away from its boundary, when
/// that script and a Python with OpenCV are available
/// (`UNDERLAY_TEST_PYTHON`, default `python3`).
#[test]
fn thesis_mask_agrees_with_the_reference_script() {
    let Some(script) = crate::util::shared_reference("thesis_mask.py") else {
        return;
    };
    let Some(python) = crate::util::python_with_opencv() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = vec![
        write_frame(dir.path(), "synth.png", &SynthOptions::default()).0,
        write_frame(
            dir.path(),
            "synth-odd.png",
            &SynthOptions {
                width: 333,
                height: 207,
                carpet: [30, 120, 60],
                seed: 9,
                ..SynthOptions::default()
            },
        )
        .0,
    ];
    if let Some(ssl) = crate::util::shared_media("ssl-field-overhead-2008.jpg") {
        // Both sides must see the same pixels: OpenCV's JPEG decoder and
        // FFmpeg's differ in the last bit here and there, so the photo goes
        // in as the lossless PNG of what underlay decodes.
        let png = dir.path().join("ssl-photo.png");
        save_rgb(&png, &underlay::video::still::load_rgb(&ssl).unwrap()).unwrap();
        inputs.push(png);
    }
    for input in inputs {
        let reference = dir.path().join("reference.png");
        let o = Command::new(&python)
            .arg(&script)
            .arg(&input)
            .arg(&reference)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ours = dir.path().join("ours.png");
        let o = underlay()
            .args([
                "mask",
                input.to_str().unwrap(),
                "-o",
                ours.to_str().unwrap(),
                "--method",
                "thesis",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (a, b) = (load_mask(&reference).unwrap(), load_mask(&ours).unwrap());
        // On the picture's 2×2 blocks (issue 48): the same away from the
        // reference's boundary, as the quality bound has it.
        let away = underlay::eval::agreement::agreement(&a, &b, 2);
        let same = a.iter().zip(b.iter()).filter(|(x, y)| x == y).count() as f64 / a.len() as f64;
        eprintln!(
            "{}: {:.4} % of pixels agree, {:.4} % of those more than 2 px from the reference's boundary",
            input.display(),
            same * 100.0,
            away.share() * 100.0
        );
        assert!(
            away.share() >= 0.99,
            "{}: only {} agree",
            input.display(),
            away.share()
        );
    }
}

fn write_frame(dir: &Path, name: &str, opts: &SynthOptions) -> (std::path::PathBuf, SynthFrame) {
    let f = generate(opts);
    let p = dir.join(name);
    save_rgb(&p, &f.frame).unwrap();
    (p, f)
}

#[test]
fn mask_command_writes_a_png_mask_for_an_image() {
    let dir = tempfile::tempdir().unwrap();
    let opts = SynthOptions {
        width: 400,
        height: 240,
        ..SynthOptions::default()
    };
    let (input, f) = write_frame(dir.path(), "field.png", &opts);
    for method in ["adaptive", "thesis"] {
        let out = dir.path().join(format!("mask-{method}.png"));
        let o = underlay()
            .args([
                "mask",
                input.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--method",
                method,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mask = load_mask(&out).unwrap();
        assert_eq!(mask.dim(), (240, 400));
        // Same result as the library.
        let mut m = MaskSettings::default();
        if method == "thesis" {
            m = MaskSettings::Thesis;
        }
        let want = rgb_mask(m.build().unwrap().as_mut(), &f.frame, 0.0);
        assert_eq!(mask, want, "{method}");
    }
    // The default method is adaptive.
    let out = dir.path().join("default.png");
    let o = underlay()
        .args(["mask", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(iou(&load_mask(&out).unwrap(), &f.floor) >= 0.98);
}

#[test]
fn mask_command_bench_prints_the_median() {
    let dir = tempfile::tempdir().unwrap();
    let (input, _) = write_frame(
        dir.path(),
        "f.jpg",
        &SynthOptions {
            width: 320,
            height: 180,
            ..SynthOptions::default()
        },
    );
    let out = dir.path().join("m.png");
    let o = underlay()
        .args([
            "mask",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--bench",
            "5",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = text.trim();
    let ms = line
        .strip_suffix(" ms per frame")
        .unwrap_or_else(|| panic!("{line:?}"));
    let (int, frac) = ms.split_once('.').unwrap();
    assert!(
        int.parse::<u32>().is_ok() && frac.len() == 2 && frac.parse::<u32>().is_ok(),
        "{line:?}"
    );
    assert!(out.exists());
}

#[test]
fn mask_command_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = underlay().args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let out = dir.path().join("m.png");
    let out = out.to_str().unwrap();
    // Missing input.
    let e = run(&["mask", "/nonexistent/in.png", "-o", out]);
    assert!(e.contains("/nonexistent/in.png"), "{e}");
    // Not an image.
    let bad = dir.path().join("bad.png");
    std::fs::write(&bad, b"not a png at all").unwrap();
    let e = run(&["mask", bad.to_str().unwrap(), "-o", out]);
    assert!(e.contains("bad.png"), "{e}");
    // Truncated image.
    let (good, _) = write_frame(dir.path(), "good.png", &SynthOptions::default());
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.path().join("cut.png");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let e = run(&["mask", cut.to_str().unwrap(), "-o", out]);
    assert!(e.contains("cut.png"), "{e}");
    // Unwritable output.
    let e = run(&["mask", good.to_str().unwrap(), "-o", "/nonexistent/dir/m.png"]);
    assert!(e.contains("/nonexistent/dir/m.png"), "{e}");
    // --bench 0.
    let e = run(&["mask", good.to_str().unwrap(), "-o", out, "--bench", "0"]);
    assert!(e.contains("--bench"), "{e}");
}

/// The static mask image round-trips through `underlay mask` output.
#[test]
fn mask_output_is_usable_as_a_static_mask() {
    let dir = tempfile::tempdir().unwrap();
    let opts = SynthOptions {
        width: 200,
        height: 120,
        ..SynthOptions::default()
    };
    let (input, f) = write_frame(dir.path(), "f.png", &opts);
    let out = dir.path().join("m.png");
    let o = underlay()
        .args(["mask", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
    let mut s = MaskSettings::Image { file: out.clone() }.build().unwrap();
    let got = rgb_mask(s.as_mut(), &f.frame, 0.0);
    assert_eq!(got, load_mask(&out).unwrap());
    save_mask(&dir.path().join("again.png"), &got).unwrap();
}

/// Real media from ../shared/testdata when present: the adaptive mask
/// marks most of the frame as floor where the thesis mask marks 10–12 %.
#[test]
fn real_media_when_available() {
    let Some(ssl) = crate::util::shared_media("ssl-field-overhead-2008.jpg") else {
        return;
    };
    let frame = underlay::video::still::load_rgb(&ssl).unwrap();
    let fraction = |m: &MaskImage| m.iter().filter(|&&v| v != 0).count() as f64 / m.len() as f64;
    let out = rgb_mask(
        &mut AdaptiveMasker::new(AdaptiveSettings::default()).unwrap(),
        &frame,
        0.0,
    );
    let adaptive = fraction(&out);
    let out = rgb_mask(&mut ThesisMasker::new(), &frame, 0.0);
    let thesis = fraction(&out);
    eprintln!("SSL photo: adaptive {adaptive:.3}, thesis {thesis:.3} of pixels are floor");
    assert!(adaptive > 0.8 && thesis < 0.15);

    let Some(drone) = crate::util::shared_media("pitch-drone-topdown.mp4") else {
        return;
    };
    let mut d = underlay::video::Decoder::open(&drone).unwrap();
    d.set_keep_yuv(true);
    let f = d.frame_at(5.0).unwrap().unwrap();
    let out = mask_of(
        &mut AdaptiveMasker::new(AdaptiveSettings::default()).unwrap(),
        f.picture(),
        f.time,
    );
    let adaptive = fraction(&out);
    let out = mask_of(&mut ThesisMasker::new(), f.picture(), f.time);
    let thesis = fraction(&out);
    eprintln!("drone frame at 5 s: adaptive {adaptive:.3}, thesis {thesis:.3} of pixels are floor");
    assert!(adaptive > 0.78 && thesis < 0.15);
}

/// A session's mask image path is stored relative to the session file and
/// resolved against it on load; the adaptive parameters round-trip.
#[test]
fn session_mask_settings_round_trip() {
    use underlay::session::Session;
    let dir = tempfile::tempdir().unwrap();
    let mut s = Session::new(dir.path().join("run.mp4"), dir.path().join("run.ulog"));
    s.mask = MaskSettings::Image {
        file: dir.path().join("masks/floor.png"),
    };
    let p = dir.path().join("s.toml");
    s.save(&p).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.contains("method = \"image\"") && text.contains("file = \"masks/floor.png\""),
        "{text}"
    );
    assert_eq!(Session::load(&p).unwrap().mask, s.mask);

    let settings = AdaptiveSettings {
        fill_radius: 7.5,
        ..AdaptiveSettings::default()
    };
    s.mask = MaskSettings::Adaptive(settings);
    s.save(&p).unwrap();
    assert_eq!(Session::load(&p).unwrap().mask, s.mask);
    // A session without a [mask] table gets the default: the source's own
    // masks when it has them, else adaptive.
    std::fs::write(&p, "video = \"a.mp4\"\nlog = \"a.ulog\"\n").unwrap();
    assert_eq!(Session::load(&p).unwrap().mask, MaskSettings::Auto);
    // A bad parameter names the file and the [mask] table (serde's tagged
    // enums do not keep the key's own position).
    std::fs::write(
        &p,
        "video = \"a.mp4\"\nlog = \"a.ulog\"\n[mask]\nmethod = \"adaptive\"\nfill_radius = \"big\"\n",
    )
    .unwrap();
    let e = underlay::error::chain(&Session::load(&p).unwrap_err());
    assert!(
        e.contains("s.toml") && e.contains("line 3") && e.contains("big"),
        "{e}"
    );
}

/// A short H.264 video of synthetic fields (the camera drifts a little).
fn write_video(dir: &Path, name: &str, frames: usize, width: usize, height: usize) -> std::path::PathBuf {
    use underlay::video::{Encoder, EncoderSettings};
    let p = dir.join(name);
    let settings = EncoderSettings {
        fps_hint: 10.0,
        crf: 12,
        ..EncoderSettings::default()
    };
    let mut enc = Encoder::create(&p, width as u32, height as u32, &settings).unwrap();
    for i in 0..frames {
        let f = generate(&SynthOptions {
            width,
            height,
            seed: 3 + i as u64 / 3,
            ..SynthOptions::default()
        });
        enc.push(&f.frame, i as f64 / 10.0).unwrap();
    }
    enc.finish().unwrap();
    p
}

/// `underlay mask VIDEO -o OUT.mkv` writes one lossless mask per frame, with
/// the video's times, equal to masking the decoded frames in the library.
#[test]
fn mask_command_writes_a_lossless_mask_video() {
    use underlay::video::{Decoder, SourceFrame};
    let dir = tempfile::tempdir().unwrap();
    let video = write_video(dir.path(), "run.mp4", 7, 160, 96);
    let out = dir.path().join("run-mask.mkv");
    let o = underlay()
        .args(["mask", video.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("7 mask frames"));

    // Masked from the video's own planes, as `underlay mask` reads them.
    let mut frames = Decoder::open(&video).unwrap();
    frames.set_keep_yuv(true);
    let mut masks = Decoder::open(&out).unwrap();
    assert_eq!(masks.info().codec, "ffv1");
    let mut masker = AdaptiveMasker::new(AdaptiveSettings::default()).unwrap();
    let (mut f, mut m) = (SourceFrame::empty(), MaskImage::zeros((0, 0)));
    let mut n = 0;
    while frames.read_into(&mut f).unwrap() {
        let (t, _) = masks
            .read_gray_into(&mut m)
            .unwrap()
            .expect("a mask for every frame");
        assert!((t - f.time).abs() < 1e-6, "mask at {t} for frame at {}", f.time);
        assert!(f.yuv.is_some(), "frame {n} has its planes");
        let want = mask_of(&mut masker, f.picture(), f.time);
        assert_eq!(m, want, "frame {n}");
        n += 1;
    }
    assert_eq!(n, 7);
    assert!(
        masks.read_gray_into(&mut m).unwrap().is_none(),
        "extra mask frames"
    );

    // --bench on a video times the first frame and writes nothing.
    let o = underlay()
        .args([
            "mask",
            video.to_str().unwrap(),
            "-o",
            "unused.mkv",
            "--bench",
            "3",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .ends_with(" ms per frame")
    );
    assert!(!dir.path().join("unused.mkv").exists());

    // A lossy container is refused; a corrupt video is named.
    let o = underlay()
        .args([
            "mask",
            video.to_str().unwrap(),
            "-o",
            dir.path().join("m.mp4").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains(".mkv"));
    let bad = dir.path().join("bad.mp4");
    std::fs::write(&bad, b"\x00\x00\x00\x18ftypmp42 definitely not a video").unwrap();
    let o = underlay()
        .args([
            "mask",
            bad.to_str().unwrap(),
            "-o",
            dir.path().join("m.mkv").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("bad.mp4"));
    assert!(!dir.path().join("m.mkv").exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A mask video plugs in as the `video` method: masks follow the frame
/// times (also after seeking back), and size or length mismatches are
/// clear errors.
#[test]
fn mask_video_is_a_masker() {
    use underlay::video::{Decoder, SourceFrame};
    let dir = tempfile::tempdir().unwrap();
    let video = write_video(dir.path(), "run.mp4", 6, 160, 96);
    let masks = dir.path().join("masks.mkv");
    let o = underlay()
        .args([
            "mask",
            video.to_str().unwrap(),
            "-o",
            masks.to_str().unwrap(),
            "--method",
            "thesis",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let mut masker = MaskSettings::Video { file: masks.clone() }.build().unwrap();
    assert_eq!(masker.name(), "video");
    masker.check_video(160, 96, Some(6)).unwrap();
    let e = masker.check_video(320, 96, Some(6)).unwrap_err().to_string();
    assert!(
        e.contains("masks.mkv") && e.contains("160×96") && e.contains("320×96"),
        "{e}"
    );
    let e = masker.check_video(160, 96, Some(9)).unwrap_err().to_string();
    assert!(e.contains("6 frames") && e.contains("9"), "{e}");

    let mut thesis = ThesisMasker::new();
    let mut frames = Decoder::open(&video).unwrap();
    frames.set_keep_yuv(true);
    let mut all = Vec::new();
    let mut f = SourceFrame::empty();
    while frames.read_into(&mut f).unwrap() {
        all.push(f.clone());
    }
    let (mut got, mut want) = (FloorMask::new(), FloorMask::new());
    let mut check = |masker: &mut Box<dyn Masker>, i: usize| {
        let pic = all[i].picture();
        masker.compute(&pic, all[i].time, &mut got).unwrap();
        thesis.compute(&pic, all[i].time, &mut want).unwrap();
        assert_eq!(got.to_image(), want.to_image(), "frame {i}");
    };
    for i in 0..all.len() {
        check(&mut masker, i);
    }
    // Back to the start (a seek), then skipping ahead.
    masker.reset();
    check(&mut masker, 1);
    check(&mut masker, 4);
    check(&mut masker, 2);

    // Past the end of the mask video: a clear error.
    let late = all[5].time + 1.0;
    let e = masker
        .compute(&Picture::Rgb(&all[0].image), late, &mut got)
        .unwrap_err()
        .to_string();
    assert!(e.contains("masks.mkv") && e.contains("shorter"), "{e}");
    // A frame of another size: a clear error.
    let small = underlay::image::RgbImage::zeros((48, 80, 3));
    masker.reset();
    let e = masker
        .compute(&Picture::Rgb(&small), 0.0, &mut got)
        .unwrap_err()
        .to_string();
    assert!(e.contains("160×96") && e.contains("80×48"), "{e}");
    // A missing mask video is named when the masker is built.
    let e = MaskSettings::Video {
        file: dir.path().join("nope.mkv"),
    }
    .build()
    .err()
    .unwrap();
    let e = underlay::error::chain(&e);
    assert!(e.contains("nope.mkv"), "{e}");
}

/// A 320×180 picture from an elevated camera: sky, grass-green trees,
/// and the pitch below row 75.
fn elevated_view() -> underlay::image::RgbImage {
    underlay::image::RgbImage::from_shape_fn((180, 320, 3), |(y, x, c)| {
        let n = ((x * 7 + y * 13) % 9) as u8;
        let px: [u8; 3] = if y < 40 {
            [110, 165, 225]
        } else if y < 75 {
            [50, 100, 45]
        } else {
            [60, 105, 55]
        };
        px[c].saturating_add(n)
    })
}

/// Issue 17: `mask --calib --field` — an elevated camera sees grass-green
/// trees above the pitch; with the field's region only the pitch is floor.
#[test]
fn mask_with_a_field_keeps_the_floor_on_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let img = elevated_view();
    let png = dir.path().join("stand.png");
    save_rgb(&png, &img).unwrap();
    // The football pitch (105 × 68 m, in mm) seen between rows 100 and 165.
    let calib = dir.path().join("c.toml");
    std::fs::write(
        &calib,
        "homography = [[0.0025, 0.0, 160.0], [0.0, -0.0008, 130.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    let out = dir.path().join("m.png");
    let run = |extra: &[&str]| {
        let mut c = underlay();
        c.args(["mask", png.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(extra);
        c.output().unwrap()
    };
    let o = run(&["--calib", calib.to_str().unwrap(), "--field", "football"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = load_mask(&out).unwrap();
    let share = |rows: std::ops::Range<usize>| {
        let v = m.slice(ndarray::s![rows, ..]);
        v.iter().filter(|&&p| p == 255).count() as f64 / v.len() as f64
    };
    assert!(share(40..75) <= 0.02, "trees {}", share(40..75));
    assert!(share(110..150) >= 0.95, "pitch {}", share(110..150));
    let o = run(&["--calib", calib.to_str().unwrap(), "--field", "moon"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such field preset"));
}

/// Issue 17: `mask --calib` without `--field` cuts to the hull of the
/// points the calibration was fitted from (grown); a calibration that
/// records none needs `--field`.
#[test]
fn mask_calib_without_field_uses_the_hull_of_its_points() {
    let dir = tempfile::tempdir().unwrap();
    let img = elevated_view();
    let png = dir.path().join("in.png");
    underlay::video::still::save_rgb(&png, &img).unwrap();
    // Points on the pitch: world (0, 0) at pixel (160, 130), 2.5 px per
    // unit across, 0.75 down the picture.
    let csv = dir.path().join("pts.csv");
    let mut text = String::from("u,v,x,y\n");
    for (x, y) in [
        (-40.0, -20.0),
        (40.0, -20.0),
        (40.0, 20.0),
        (-40.0, 20.0),
        (0.0, 0.0),
    ] {
        text.push_str(&format!("{},{},{x},{y}\n", 160.0 + 2.5 * x, 130.0 - 0.75 * y));
    }
    std::fs::write(&csv, text).unwrap();
    let calib = dir.path().join("c.toml");
    let o = underlay()
        .args([
            "calib",
            "solve",
            csv.to_str().unwrap(),
            "-o",
            calib.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.path().join("m.png");
    let mask_with = |calib: &Path| {
        underlay()
            .args([
                "mask",
                png.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--calib",
                calib.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    let o = mask_with(&calib);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = load_mask(&out).unwrap();
    let share = |rows: std::ops::Range<usize>| {
        let v = m.slice(ndarray::s![rows, 60..260]);
        v.iter().filter(|&&p| p == 255).count() as f64 / v.len() as f64
    };
    assert!(share(40..75) <= 0.02, "trees {}", share(40..75));
    assert!(share(115..145) >= 0.95, "pitch {}", share(115..145));
    // A calibration without its points.
    let bare = dir.path().join("bare.toml");
    std::fs::write(
        &bare,
        "homography = [[2.5, 0.0, 160.0], [0.0, -0.75, 130.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    let o = mask_with(&bare);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("give --field"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A floor with hardly any colour (a grey artificial turf) makes the
/// adaptive mask doubtful, and `underlay mask` says so with what to try;
/// a green turf does not.
#[test]
fn mask_command_says_when_the_floor_is_too_grey_to_trust() {
    let dir = tempfile::tempdir().unwrap();
    for (name, colour, doubtful) in [("grey", [100, 106, 100], true), ("green", [90, 130, 90], false)] {
        let input = dir.path().join(format!("{name}.png"));
        save_rgb(&input, &underlay::mask::synth::turf(400, 240, colour, 4)).unwrap();
        let out = dir.path().join(format!("{name}-mask.png"));
        let o = underlay()
            .args(["mask", input.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(out.exists(), "the mask is written either way");
        assert_eq!(
            err.contains("the floor is nearly grey"),
            doubtful,
            "{name}: {err}"
        );
        if doubtful {
            assert!(
                err.contains("min_chroma") && err.contains(input.to_str().unwrap()),
                "{err}"
            );
        }
    }
}
