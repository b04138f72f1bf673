//! Round trips through the encoder and decoder on small generated videos.

use std::path::Path;

use super::*;
use crate::image::{MaskImage, RgbImage};

/// A frame whose every pixel is the gray level identifying frame `i`.
fn level(i: usize) -> u8 {
    (20 + 9 * i) as u8
}

fn solid(w: usize, h: usize, v: u8) -> RgbImage {
    RgbImage::from_elem((h, w, 3), v)
}

/// Encodes one solid frame per time (level(i)), quality high enough that
/// levels come back within a couple of steps.
fn write_video(path: &Path, w: usize, h: usize, times: &[f64], settings: EncoderSettings) {
    let mut e = Encoder::create(path, w as u32, h as u32, &settings).unwrap();
    for (i, &t) in times.iter().enumerate() {
        e.push(&solid(w, h, level(i)), t).unwrap();
    }
    e.finish().unwrap();
}

fn crisp() -> EncoderSettings {
    EncoderSettings {
        crf: 8,
        preset: "ultrafast".into(),
        ..Default::default()
    }
}

/// Which frame a decoded solid picture is.
fn which(img: &RgbImage) -> usize {
    let (h, w, _) = img.dim();
    let v = f64::from(img[[h / 2, w / 2, 1]]);
    ((v - 20.0) / 9.0).round() as usize
}

fn all_frames(path: &Path) -> Vec<SourceFrame> {
    let mut d = Decoder::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(f) = d.next_frame().unwrap() {
        out.push(f);
        assert!(out.len() < 10_000, "decoder does not end");
    }
    out
}

#[test]
fn constant_rate_round_trip_keeps_count_times_and_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cfr.mp4");
    let times: Vec<f64> = (0..12).map(|i| f64::from(i) / 25.0).collect();
    write_video(&p, 64, 48, &times, crisp());
    let d = Decoder::open(&p).unwrap();
    let info = d.info().clone();
    assert_eq!((info.width, info.height), (64, 48));
    assert_eq!(info.frame_count, Some(12));
    assert_eq!(info.codec, "h264");
    assert!((info.avg_fps - 25.0).abs() < 0.01, "{info:?}");
    assert!((info.duration - 12.0 / 25.0).abs() < 1e-3, "{info:?}");
    assert!(!info.has_audio);
    let frames = all_frames(&p);
    assert_eq!(frames.len(), 12);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f.index, i as u64);
        assert!(
            (f.time - times[i]).abs() < 1e-6,
            "frame {i}: {} vs {}",
            f.time,
            times[i]
        );
        assert_eq!(which(&f.image), i);
        let v = f.image[[10, 10, 0]];
        assert!(v.abs_diff(level(i)) <= 2, "frame {i}: level {v} vs {}", level(i));
    }
}

#[test]
fn variable_rate_times_survive_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("vfr.mp4");
    let times = [0.0, 0.04, 0.1, 0.13, 0.3, 0.31, 0.5, 0.9];
    write_video(&p, 32, 32, &times, crisp());
    let frames = all_frames(&p);
    let got: Vec<f64> = frames.iter().map(|f| f.time).collect();
    assert_eq!(got.len(), times.len());
    for (g, t) in got.iter().zip(times) {
        assert!((g - t).abs() < 1e-6, "{got:?}");
    }
    // The last frame lasts as long as the one before it.
    let info = Decoder::open(&p).unwrap().info().clone();
    assert!((info.duration - 1.3).abs() < 1e-3, "{info:?}");
}

#[test]
fn time_base_of_the_input_keeps_its_ticks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tb.mp4");
    let times: Vec<f64> = (0..5).map(|i| f64::from(i) * 1001.0 / 30000.0).collect();
    let s = EncoderSettings {
        time_base: Some((1, 30000)),
        fps_hint: 30000.0 / 1001.0,
        ..crisp()
    };
    let mut e = Encoder::create(&p, 16, 16, &s).unwrap();
    for (i, &t) in times.iter().enumerate() {
        e.push(&solid(16, 16, level(i)), t).unwrap();
    }
    e.finish_at(5.0 * 1001.0 / 30000.0).unwrap();
    let d = Decoder::open(&p).unwrap();
    assert_eq!(d.info().time_base, (1, 30000));
    assert!((d.info().duration - 5.0 * 1001.0 / 30000.0).abs() < 1e-9);
    let frames = all_frames(&p);
    for (f, t) in frames.iter().zip(&times) {
        assert!((f.time - t).abs() < 1e-12);
    }
}

#[test]
fn seeking_returns_the_frame_shown_at_that_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("seek.mp4");
    let times: Vec<f64> = (0..24).map(|i| f64::from(i) / 10.0).collect();
    // Short GOPs so seeks really start from a later keyframe.
    let s = EncoderSettings {
        preset: "veryfast".into(),
        keyframe_interval: 5,
        ..crisp()
    };
    write_video(&p, 32, 32, &times, s);
    let mut d = Decoder::open(&p).unwrap();
    for (t, want) in [
        (1.25, 12),
        (0.0, 0),
        (2.3, 23),
        (0.55, 5),
        (-3.0, 0),
        (99.0, 23),
        (1.2, 12),
    ] {
        d.seek(t).unwrap();
        let f = d.next_frame().unwrap().unwrap();
        assert_eq!(which(&f.image), want, "seek to {t}");
        assert!(
            (f.time - times[want]).abs() < 1e-6,
            "seek to {t}: time {}",
            f.time
        );
        // Decoding goes on from there.
        if want < 23 {
            let g = d.next_frame().unwrap().unwrap();
            assert_eq!(which(&g.image), want + 1, "after seek to {t}");
        }
    }
    assert!(d.seek(f64::NAN).is_err());
}

#[test]
fn frame_at_plays_forward_and_repeats_the_current_frame() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("at.mp4");
    let times: Vec<f64> = (0..20).map(|i| f64::from(i) / 10.0).collect();
    write_video(&p, 32, 32, &times, crisp());
    let mut d = Decoder::open(&p).unwrap();
    for (t, want) in [
        (0.0, 0),
        (0.05, 0),
        (0.1, 1),
        (0.35, 3),
        (0.35, 3),
        (1.9, 19),
        (0.2, 2),
        (5.0, 19),
    ] {
        let f = d.frame_at(t).unwrap().unwrap();
        assert_eq!(which(&f.image), want, "frame_at({t})");
        assert_eq!(f.index, want as u64, "index at {t}");
    }
}

#[test]
fn seeking_with_keyframes_and_b_frames() {
    // Keyframes every 4 frames and B-frames (decode order ≠ presentation
    // order): every target lands on the right frame, whatever direction.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gop.mp4");
    let times: Vec<f64> = (0..26).map(|i| f64::from(i) / 5.0).collect();
    let s = EncoderSettings {
        preset: "medium".into(),
        keyframe_interval: 4,
        ..crisp()
    };
    write_video(&p, 16, 16, &times, s);
    let mut d = Decoder::open(&p).unwrap();
    for want in (0..26).rev().chain([3, 17, 4, 5, 0, 25, 12]) {
        let t = times[want] + 0.1;
        d.seek(t).unwrap();
        let f = d.next_frame().unwrap().unwrap();
        assert_eq!(
            which(&f.image),
            want,
            "seek to {t}: got time {} index {}",
            f.time,
            f.index
        );
        if want < 25 {
            assert_eq!(which(&d.next_frame().unwrap().unwrap().image), want + 1);
        }
    }
}

#[test]
fn lossless_mask_video_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mask.mkv");
    let s = EncoderSettings {
        gray_lossless: true,
        ..Default::default()
    };
    let masks: Vec<MaskImage> = (0..4)
        .map(|k| {
            MaskImage::from_shape_fn(
                (21, 33),
                |(y, x)| if (x * 7 + y * 3 + k) % 5 < 2 { 255 } else { 0 },
            )
        })
        .collect();
    let mut e = Encoder::create(&p, 33, 21, &s).unwrap();
    for (i, m) in masks.iter().enumerate() {
        e.push_mask(m, i as f64 * 0.5).unwrap();
    }
    e.finish().unwrap();
    let mut d = Decoder::open(&p).unwrap();
    assert_eq!(d.info().codec, "ffv1");
    let mut out = MaskImage::zeros((0, 0));
    for (i, m) in masks.iter().enumerate() {
        let (t, idx) = d.read_gray_into(&mut out).unwrap().unwrap();
        assert_eq!((idx, (t * 2.0).round() as usize), (i as u64, i));
        assert_eq!(&out, m, "mask {i}");
    }
    assert!(d.read_gray_into(&mut out).unwrap().is_none());
    // The RGB view of a mask video is the mask in all three channels.
    let f = Decoder::open(&p).unwrap().next_frame().unwrap().unwrap();
    assert_eq!(f.image.index_axis(ndarray::Axis(2), 1), masks[0]);
    // Gray lossless needs Matroska.
    let e = Encoder::create(&dir.path().join("m.mp4"), 8, 8, &s)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("m.mp4") && e.contains(".mkv"), "{e}");
}

#[test]
fn odd_sizes_are_cropped_to_even_for_h264() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("odd.mp4");
    write_video(&p, 35, 21, &[0.0, 0.1], crisp());
    let d = Decoder::open(&p).unwrap();
    assert_eq!((d.info().width, d.info().height), (34, 20));
}

#[test]
fn encoder_rejects_bad_frames_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.mp4");
    let mut e = Encoder::create(&p, 16, 16, &crisp()).unwrap();
    let err = e.push(&solid(8, 16, 0), 0.0).unwrap_err().to_string();
    assert!(err.contains("bad.mp4") && err.contains("8×16"), "{err}");
    e.push(&solid(16, 16, 0), 0.5).unwrap();
    let err = e.push(&solid(16, 16, 0), 0.5).unwrap_err().to_string();
    assert!(err.contains("not after"), "{err}");
    let err = e.push(&solid(16, 16, 0), f64::NAN).unwrap_err().to_string();
    assert!(err.contains("finite"), "{err}");
    drop(e);

    let empty = Encoder::create(&dir.path().join("empty.mp4"), 16, 16, &crisp()).unwrap();
    assert!(empty.finish().unwrap_err().to_string().contains("no frames"));
    let bad_preset = EncoderSettings {
        preset: "warp-speed".into(),
        ..Default::default()
    };
    let err = Encoder::create(&dir.path().join("p.mp4"), 16, 16, &bad_preset)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("warp-speed"), "{err}");
    let err = Encoder::create(&dir.path().join("x.unknownext"), 16, 16, &crisp())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("x.unknownext"), "{err}");
    assert!(Encoder::create(&dir.path().join("tiny.mp4"), 1, 16, &crisp()).is_err());
}

#[test]
fn missing_and_non_video_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.mp4");
    let e = Decoder::open(&missing).err().unwrap().to_string();
    assert!(e.contains("nope.mp4"), "{e}");
    let text = dir.path().join("notes.mp4");
    std::fs::write(&text, "this is not a video\n".repeat(50)).unwrap();
    let e = Decoder::open(&text).err().unwrap().to_string();
    assert!(e.contains("notes.mp4"), "{e}");
}

/// Reads every frame, tolerating one error, with a bound on the work.
fn read_damaged(path: &Path) -> (usize, Option<String>) {
    let mut d = match Decoder::open(path) {
        Ok(d) => d,
        Err(e) => return (0, Some(e.to_string())),
    };
    let mut n = 0;
    let mut err = None;
    for _ in 0..10_000 {
        match d.next_frame() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return (n, err),
            Err(e) => {
                assert!(err.is_none(), "second error after {e}");
                err = Some(e.to_string());
            }
        }
    }
    panic!("decoder did not end");
}

#[test]
fn truncated_and_damaged_files_decode_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("full.mp4");
    let times: Vec<f64> = (0..60).map(|i| f64::from(i) / 30.0).collect();
    let mut e = Encoder::create(&p, 64, 48, &crisp()).unwrap();
    for (i, &t) in times.iter().enumerate() {
        // Noise so frames have real size and the cut falls mid-stream.
        let img = RgbImage::from_shape_fn((48, 64, 3), |(y, x, c)| {
            ((x * 31 + y * 17 + c * 7 + i * 13) % 251) as u8
        });
        e.push(&img, t).unwrap();
    }
    e.finish().unwrap();
    let bytes = std::fs::read(&p).unwrap();

    let cut = dir.path().join("cut.mp4");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (n, err) = read_damaged(&cut);
    assert!(n > 0 && n < 60, "{n} frames from half a file");
    let err = err.expect("truncation is reported");
    assert!(err.contains("cut.mp4") && err.contains("ends early"), "{err}");

    let mut garbled = bytes.clone();
    let mid = garbled.len() / 2;
    for (k, b) in garbled[mid..mid + 2000].iter_mut().enumerate() {
        *b = (k * 97 % 256) as u8;
    }
    let bad = dir.path().join("garbled.mp4");
    std::fs::write(&bad, &garbled).unwrap();
    let (n, _) = read_damaged(&bad);
    assert!(n >= 30, "{n} frames from a file damaged in the middle");

    // The index at the front (faststart) but hardly any picture data: an
    // error that says so, not a video that simply has no frames.
    let front = dir.path().join("front.mp4");
    let moov_end = bytes.windows(4).position(|w| w == b"mdat").unwrap() + 40;
    std::fs::write(&front, &bytes[..moov_end]).unwrap();
    let (n, err) = read_damaged(&front);
    assert_eq!(n, 0);
    let err = err.expect("an empty decode is reported");
    assert!(
        err.contains("front.mp4") && err.contains("no picture could be decoded"),
        "{err}"
    );

    let head = dir.path().join("head.mp4");
    std::fs::write(&head, &bytes[..200]).unwrap();
    let (n, err) = read_damaged(&head);
    assert_eq!(n, 0);
    assert!(err.is_some_and(|e| e.contains("head.mp4")));
}

#[test]
fn every_frame_is_reachable_by_seeking_through_b_frames() {
    // Moving content so the encoder uses B-frames (some of them never
    // referenced, which seeking skips); the left band identifies the frame.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("moving.mp4");
    let n = 24;
    let s = EncoderSettings {
        crf: 12,
        preset: "veryfast".into(),
        keyframe_interval: 12,
        ..Default::default()
    };
    let mut e = Encoder::create(&p, 64, 32, &s).unwrap();
    for i in 0..n {
        let img = RgbImage::from_shape_fn((32, 64, 3), |(y, x, c)| {
            if x < 16 {
                level(i)
            } else {
                ((x * 4 + y * 2 + i * 6 + c * 40) % 200) as u8
            }
        });
        e.push(&img, i as f64 / 8.0).unwrap();
    }
    e.finish().unwrap();
    let mut d = Decoder::open(&p).unwrap();
    let id = |f: &SourceFrame| ((f64::from(f.image[[16, 4, 1]]) - 20.0) / 9.0).round() as usize;
    for k in (0..n).rev().chain(0..n) {
        for dt in [0.0, 0.06] {
            let t = k as f64 / 8.0 + dt;
            d.seek(t).unwrap();
            let f = d.next_frame().unwrap().unwrap();
            assert_eq!(id(&f), k, "seek to {t}");
            assert!((f.time - k as f64 / 8.0).abs() < 1e-6);
        }
    }
}

#[test]
fn keyframe_at_returns_the_keyframe_before_the_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("kf.mp4");
    let times: Vec<f64> = (0..20).map(|i| f64::from(i) / 10.0).collect();
    let s = EncoderSettings {
        keyframe_interval: 5,
        ..crisp()
    };
    write_video(&p, 32, 32, &times, s);
    let mut d = Decoder::open(&p).unwrap();
    let f = d.keyframe_at(1.37).unwrap().unwrap();
    // Keyframes every 5 frames: 0, 5, 10, 15.
    assert_eq!(which(&f.image), 10);
    assert_eq!(which(&d.next_frame().unwrap().unwrap().image), 11);
    // An exact request afterwards still lands on the right frame.
    assert_eq!(which(&d.frame_at(1.37).unwrap().unwrap().image), 13);
    // Decoding on from the keyframe for that very time, however far (a
    // long group of pictures), without another seek; another time seeks.
    let s = EncoderSettings {
        keyframe_interval: 20,
        ..crisp()
    };
    let p = dir.path().join("long.mp4");
    write_video(&p, 32, 32, &times, s);
    let mut d = Decoder::open(&p).unwrap();
    assert_eq!(which(&d.keyframe_at(1.78).unwrap().unwrap().image), 0);
    assert_eq!(which(&d.frame_at(1.78).unwrap().unwrap().image), 17);
    assert_eq!(which(&d.keyframe_at(1.78).unwrap().unwrap().image), 0);
    assert_eq!(which(&d.frame_at(0.42).unwrap().unwrap().image), 4);
    assert_eq!(which(&d.keyframe_at(1.5).unwrap().unwrap().image), 0);
    assert_eq!(which(&d.next_frame().unwrap().unwrap().image), 1);
    assert_eq!(which(&d.frame_at(1.5).unwrap().unwrap().image), 15);
}

#[test]
fn with_the_keyframes_known_seeks_start_at_the_right_one_and_reading_on_replaces_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gop.mp4");
    // 26 frames at 5 fps, a keyframe every 2 s: at 0, 2 and 4 s.
    let times: Vec<f64> = (0..26).map(|i| f64::from(i) / 5.0).collect();
    let s = EncoderSettings {
        keyframe_interval: 10,
        ..crisp()
    };
    write_video(&p, 32, 32, &times, s);
    let mut d = Decoder::open(&p).unwrap();
    d.build_index();
    let index = d.seek_index().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !index.is_complete() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(index.is_complete());
    fn at(d: &mut Decoder, t: f64) -> usize {
        which(&d.frame_at(t).unwrap().unwrap().image)
    }
    assert_eq!(at(&mut d, 0.4), 2);
    let seeks = d.seeks();
    // 1.4 s ahead, within the group of pictures: read on, no seek.
    assert_eq!(at(&mut d, 1.8), 9);
    assert_eq!(d.seeks(), seeks);
    // A keyframe lies between: a seek to it.
    assert_eq!(at(&mut d, 3.0), 15);
    assert_eq!(d.seeks(), seeks + 1);
    // Back: a seek, landing on the keyframe before.
    assert_eq!(at(&mut d, 1.0), 5);
    assert_eq!(d.seeks(), seeks + 2);
    // The keyframe for a time, then the frame itself, with one seek.
    assert_eq!(which(&d.keyframe_at(3.7).unwrap().unwrap().image), 10);
    assert_eq!(which(&d.frame_at(3.7).unwrap().unwrap().image), 18);
    assert_eq!(d.seeks(), seeks + 3);
    // Every frame from anywhere, exactly.
    for from in [0.0, 2.2, 4.9] {
        for (i, &t) in times.iter().enumerate() {
            d.frame_at(from).unwrap();
            assert_eq!(
                which(&d.frame_at(t + 0.01).unwrap().unwrap().image),
                i,
                "{from} → {t}"
            );
        }
    }
}

#[test]
fn indexes_are_exact_after_seeking_to_the_start_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("idx.mp4");
    // Irregular times: an index estimated from the rate would be wrong.
    let times = [0.0, 0.1, 0.15, 0.5, 0.55, 0.6, 1.2, 1.25];
    write_video(&p, 16, 16, &times, crisp());
    let mut d = Decoder::open(&p).unwrap();
    d.seek(0.0).unwrap();
    let got: Vec<u64> = std::iter::from_fn(|| d.next_frame().unwrap())
        .map(|f| f.index)
        .collect();
    assert_eq!(got, (0..8).collect::<Vec<u64>>());
    // Everything is known now: seeks anywhere give exact indexes.
    for (i, &t) in times.iter().enumerate().rev() {
        assert_eq!(d.frame_at(t + 0.01).unwrap().unwrap().index, i as u64, "at {t}");
    }
}

/// A picture with detail in luma and chroma, different for each frame.
fn textured(w: usize, h: usize, i: usize) -> RgbImage {
    RgbImage::from_shape_fn((h, w, 3), |(y, x, c)| {
        ((x * (3 + c) + y * (5 + 2 * c) + 17 * i + (x * y) % 7) % 200 + 30) as u8
    })
}

fn lossless() -> EncoderSettings {
    EncoderSettings {
        crf: 0,
        preset: "ultrafast".into(),
        ..Default::default()
    }
}

/// The planes of every frame of `path`, as decoded.
fn all_planes(path: &Path) -> Vec<[Vec<u8>; 3]> {
    let mut d = Decoder::open(path).unwrap();
    d.set_keep_yuv(true);
    let mut out = Vec::new();
    let mut f = SourceFrame::empty();
    while d.read_into(&mut f).unwrap() {
        let yuv = f.yuv.as_ref().expect("8-bit 4:2:0 video keeps its planes");
        let (w, h) = (yuv.width(), yuv.height());
        let rows = |i: usize, pw: usize, ph: usize| {
            let (data, stride) = yuv.plane(i);
            (0..ph)
                .flat_map(|r| data[r * stride..][..pw].to_vec())
                .collect::<Vec<u8>>()
        };
        out.push([rows(0, w, h), rows(1, w / 2, h / 2), rows(2, w / 2, h / 2)]);
    }
    out
}

#[test]
fn decoded_planes_pass_through_and_only_marked_blocks_are_converted() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (64, 48);
    let input = dir.path().join("in.mp4");
    let mut e = Encoder::create(&input, w as u32, h as u32, &lossless()).unwrap();
    for i in 0..4 {
        e.push(&textured(w, h, i), i as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();

    // Paint a red square with odd edges on every frame and mark it.
    let out = dir.path().join("out.mp4");
    let mut d = Decoder::open(&input).unwrap();
    d.set_keep_yuv(true);
    let mut enc = Encoder::create(&out, w as u32, h as u32, &lossless()).unwrap();
    let mut f = SourceFrame::empty();
    let (x0, y0, x1, y1) = (11, 7, 20, 13);
    while d.read_into(&mut f).unwrap() {
        for y in y0..y1 {
            for x in x0..x1 {
                f.image[[y, x, 0]] = 250;
                f.image[[y, x, 1]] = 10;
                f.image[[y, x, 2]] = 10;
            }
        }
        f.yuv.as_mut().unwrap().mark_changed([x0, y0, x1, y1]);
        enc.push_frame(&f, f.time).unwrap();
    }
    enc.finish().unwrap();

    // What the painted RGB converts to, block by block.
    let coeffs = yuv::Coeffs::for_space(5);
    let before = all_planes(&input);
    let after = all_planes(&out);
    assert_eq!(before.len(), 4);
    assert_eq!(after.len(), 4);
    let mut decoded = Decoder::open(&input).unwrap();
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        let mut painted = decoded.next_frame().unwrap().unwrap().image;
        for y in y0..y1 {
            for x in x0..x1 {
                painted[[y, x, 0]] = 250;
                painted[[y, x, 1]] = 10;
                painted[[y, x, 2]] = 10;
            }
        }
        let mut want = [vec![0u8; w * h], vec![0u8; w * h / 4], vec![0u8; w * h / 4]];
        let [wy, wu, wv] = &mut want;
        yuv::rgb_to_yuv420(
            yuv::Plane {
                data: painted.as_slice().unwrap(),
                stride: 3 * w,
            },
            w,
            h,
            yuv::PlaneMut { data: wy, stride: w },
            yuv::PlaneMut {
                data: wu,
                stride: w / 2,
            },
            yuv::PlaneMut {
                data: wv,
                stride: w / 2,
            },
            &coeffs,
        );
        // The marked rectangle widened to 2×2 blocks: 10..20 × 6..14.
        let inside =
            |x: usize, y: usize, s: usize| (10 / s..20 / s).contains(&x) && (6 / s..14 / s).contains(&y);
        for (p, s) in [(0, 1), (1, 2), (2, 2)] {
            let pw = w / s;
            for (k, (&got, &orig)) in a[p].iter().zip(&b[p]).enumerate() {
                let (x, y) = (k % pw, k / pw);
                if inside(x, y, s) {
                    assert_eq!(
                        got, want[p][k],
                        "frame {i} plane {p} at ({x}, {y}): converted from RGB"
                    );
                } else {
                    assert_eq!(got, orig, "frame {i} plane {p} at ({x}, {y}): passed through");
                }
            }
        }
    }
}

/// Paints the red square of the test above on `f` and marks it.
fn paint_marked(f: &mut SourceFrame, [x0, y0, x1, y1]: [usize; 4]) {
    for y in y0..y1 {
        for x in x0..x1 {
            f.image[[y, x, 0]] = 250;
            f.image[[y, x, 1]] = 10;
            f.image[[y, x, 2]] = 10;
        }
    }
    f.yuv.as_mut().unwrap().mark_changed([x0, y0, x1, y1]);
}

#[test]
fn deferred_rgb_and_baked_planes_give_the_same_pictures_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (64, 48);
    let input = dir.path().join("in.mp4");
    let mut e = Encoder::create(&input, w as u32, h as u32, &crisp()).unwrap();
    for i in 0..5 {
        e.push(&textured(w, h, i), i as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();
    let square = [11, 7, 20, 13];
    // The usual way: RGB converted on reading, planes made by the encoder.
    let plain = dir.path().join("plain.mp4");
    let mut d = Decoder::open(&input).unwrap();
    d.set_keep_yuv(true);
    let mut enc = Encoder::create(&plain, w as u32, h as u32, &crisp()).unwrap();
    let mut f = SourceFrame::empty();
    let mut pictures = Vec::new();
    while d.read_into(&mut f).unwrap() {
        assert!(!f.rgb_pending());
        pictures.push(f.image.clone());
        paint_marked(&mut f, square);
        enc.push_frame(&f, f.time).unwrap();
    }
    enc.finish().unwrap();
    // Deferred: a few rows converted first (as the mask's model does),
    // then the rest; the encoder's picture baked beforehand.
    let baked = dir.path().join("baked.mp4");
    let mut d = Decoder::open(&input).unwrap();
    d.set_keep_yuv(true);
    d.set_defer_rgb(true);
    let mut enc = Encoder::create(&baked, w as u32, h as u32, &crisp()).unwrap();
    let mut i = 0;
    while d.read_into(&mut f).unwrap() {
        assert!(f.rgb_pending(), "frame {i}");
        let yuv = f.yuv.as_ref().unwrap();
        yuv.to_rgb_rows(&mut f.image, (3..h).step_by(7));
        for y in (3..h).step_by(7) {
            assert_eq!(
                f.image.slice(ndarray::s![y, .., ..]),
                pictures[i].slice(ndarray::s![y, .., ..]),
                "frame {i} row {y}"
            );
        }
        f.finish_rgb();
        assert!(!f.rgb_pending());
        assert_eq!(f.image, pictures[i], "frame {i}");
        paint_marked(&mut f, square);
        f.bake_yuv().unwrap();
        assert!(f.yuv.as_ref().unwrap().changed().is_empty(), "baked in");
        enc.push_frame(&f, f.time).unwrap();
        i += 1;
    }
    enc.finish().unwrap();
    assert_eq!(i, 5);
    assert_eq!(all_planes(&plain), all_planes(&baked));
    assert_eq!(std::fs::read(&plain).unwrap(), std::fs::read(&baked).unwrap());
}

#[test]
fn frames_without_planes_are_converted_from_rgb() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (64, 48);
    let input = dir.path().join("in.mp4");
    write_video(&input, w, h, &[0.0, 0.1, 0.2], crisp());
    let out = dir.path().join("out.mp4");
    let mut d = Decoder::open(&input).unwrap();
    // Planes not kept: push_frame converts the RGB picture, changes included.
    let mut enc = Encoder::create(&out, w as u32, h as u32, &crisp()).unwrap();
    let mut f = SourceFrame::empty();
    while d.read_into(&mut f).unwrap() {
        assert!(f.yuv.is_none());
        f.image[[0, 0, 0]] = 255;
        enc.push_frame(&f, f.time).unwrap();
    }
    enc.finish().unwrap();
    let got: Vec<usize> = all_frames(&out).iter().map(|f| which(&f.image)).collect();
    assert_eq!(got, [0, 1, 2]);
}

/// The first coded picture (VCL NAL unit: type 1 or 5) of an MP4 packet,
/// whose NAL units carry 4-byte big-endian lengths.
fn first_picture_nal_type(data: &[u8]) -> Option<u8> {
    let mut at = 0;
    while at + 4 < data.len() {
        let len = u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]) as usize;
        let kind = data[at + 4] & 0x1f;
        if kind == 1 || kind == 5 {
            return Some(kind);
        }
        at += 4 + len;
    }
    None
}

#[test]
fn every_keyframe_is_an_idr_picture_so_players_can_start_there() {
    // With open GOPs the pictures after a later keyframe may refer to the
    // GOP before it: a player seeking there shows broken frames, and
    // FFmpeg warns "mmco: unref short failure". Moving content and
    // B-frames, as in an exported video.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gops.mp4");
    let s = EncoderSettings {
        crf: 20,
        preset: "veryfast".into(),
        keyframe_interval: 6,
        ..Default::default()
    };
    let mut e = Encoder::create(&p, 64, 32, &s).unwrap();
    for i in 0..30 {
        let img = RgbImage::from_shape_fn((32, 64, 3), |(y, x, c)| {
            ((x * 5 + y * 3 + i * 7 + c * 50) % 230) as u8
        });
        e.push(&img, i as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();

    let mut input = ffmpeg_next::format::input(&p).unwrap();
    let stream = input
        .streams()
        .best(ffmpeg_next::media::Type::Video)
        .unwrap()
        .index();
    let mut keyframes = 0;
    for (s, packet) in input.packets() {
        if s.index() != stream || !packet.is_key() {
            continue;
        }
        keyframes += 1;
        let kind = packet.data().and_then(first_picture_nal_type);
        assert_eq!(
            kind,
            Some(5),
            "keyframe {keyframes} at pts {:?} is not an IDR picture",
            packet.pts()
        );
    }
    assert!(keyframes >= 4, "only {keyframes} keyframes");
}

/// Issue 15, finding 6: an error about the temporary file an output is
/// written as names the output (on a full disk, `mask` named its
/// `.…partial-PID….mkv`).
#[test]
fn errors_about_the_temporary_file_name_the_output() {
    let temp = Path::new("out/.m.partial-7.mkv");
    let e = VideoError::Encode {
        path: temp.to_owned(),
        index: 3,
        time: 0.1,
        message: "No space left on device".into(),
    };
    let named = e.naming(temp, Path::new("out/m.mkv")).to_string();
    assert!(named.starts_with("out/m.mkv: encoding failed"), "{named}");
    let other = VideoError::NoVideoStream {
        path: "in.mp4".into(),
    };
    assert!(
        other
            .naming(temp, Path::new("out/m.mkv"))
            .to_string()
            .starts_with("in.mp4")
    );
}

/// Issue 15, finding 9: masks beyond 4K UHD are written as PNG pictures
/// (FFmpeg's FFV1 encoder zeroes about 60 bytes per pixel: 2.15 GB for an
/// 8192×4320 mask), still losslessly and read back the same way.
#[test]
fn large_mask_videos_round_trip_exactly_without_ffv1() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.mkv");
    let s = EncoderSettings {
        gray_lossless: true,
        ..Default::default()
    };
    let (w, h) = (4096usize, 2304usize);
    assert!((w * h) as u64 > super::encode::MAX_FFV1_PIXELS);
    let masks: Vec<MaskImage> = (0..2)
        .map(|k| {
            MaskImage::from_shape_fn(
                (h, w),
                |(y, x)| if (x / 64 + y / 48 + k) % 3 == 0 { 255 } else { 0 },
            )
        })
        .collect();
    let mut e = Encoder::create(&p, w as u32, h as u32, &s).unwrap();
    for (i, m) in masks.iter().enumerate() {
        e.push_mask(m, i as f64 * 0.5).unwrap();
    }
    e.finish().unwrap();
    let mut d = Decoder::open(&p).unwrap();
    assert_eq!(d.info().codec, "png");
    let mut out = MaskImage::zeros((0, 0));
    for (i, m) in masks.iter().enumerate() {
        let (t, idx) = d.read_gray_into(&mut out).unwrap().unwrap();
        assert_eq!((idx, (t * 2.0).round() as usize), (i as u64, i));
        assert!(out == *m, "mask {i}");
    }
    assert!(d.read_gray_into(&mut out).unwrap().is_none());
}

/// Frames handed back to a read-ahead source are decoded into again, and
/// what was in them (a drawing, a mask, a view, a clock) does not show
/// through: the frames equal a plain decoder's.
#[test]
fn recycled_frames_read_ahead_equal_fresh_ones() {
    use crate::video::source::{DecoderSource, FrameSource, ReadAhead};
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (64, 48);
    let path = dir.path().join("in.mp4");
    let times: Vec<f64> = (0..12).map(|i| i as f64 / 10.0).collect();
    let mut e = Encoder::create(&path, w as u32, h as u32, &lossless()).unwrap();
    for (i, &t) in times.iter().enumerate() {
        e.push(&textured(w, h, i), t).unwrap();
    }
    e.finish().unwrap();
    let fresh = all_frames(&path);
    let source = DecoderSource::open(&path, &Default::default()).unwrap();
    let mut ahead = ReadAhead::new(Box::new(source)).unwrap();
    let mut got = Vec::new();
    while let Some(f) = ahead.next_frame().unwrap() {
        got.push(f.clone());
        let mut dirty = f;
        dirty.image.fill(255);
        dirty.mask = Some(MaskImage::zeros((h, w)));
        dirty.clock = Some(99.0);
        let view = crate::calib::Calibration::from_homography(crate::geom::mat3::IDENTITY).unwrap();
        dirty.calibration = Some(std::sync::Arc::new(view));
        ahead.recycle(dirty);
    }
    assert_eq!(got.len(), fresh.len());
    for (a, b) in got.iter().zip(&fresh) {
        assert!(a == b, "frame {} differs after recycling", b.index);
    }
}

/// Frames of `path` sent through a pipe (a stream: nothing read can be
/// read again) opened as a live input with FFmpeg `options`, and what its
/// opening read ahead.
fn live_frames(path: &Path, options: &[(&str, String)]) -> (Vec<SourceFrame>, Option<Backlog>) {
    let fifo = path.with_extension("fifo");
    let _ = std::fs::remove_file(&fifo);
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string naming a file in a temporary folder.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let bytes = std::fs::read(path).unwrap();
    let to = fifo.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        // The reader may stop early: what it did not take is no error.
        let _ = std::fs::File::create(&to).and_then(|mut f| f.write_all(&bytes));
    });
    let mut d = Decoder::open_live(&fifo, options, || false).unwrap();
    let backlog = d.backlog();
    let mut out = Vec::new();
    while let Ok(Some(f)) = d.next_frame() {
        out.push(f);
        assert!(out.len() < 10_000, "decoder does not end");
    }
    drop(d);
    writer.join().unwrap();
    (out, backlog)
}

/// The packets FFmpeg reads to learn a live input's streams are decoded
/// first, the stream's one keyframe among them; under FFmpeg's `nobuffer`
/// (as live inputs were opened before) they were dropped with it, and
/// nothing after it decoded.
#[test]
fn a_live_opening_hands_on_the_packets_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("one-keyframe.ts");
    let times: Vec<f64> = (0..25).map(|i| f64::from(i) / 25.0).collect();
    let settings = EncoderSettings {
        keyframe_interval: 250,
        ..crisp()
    };
    write_video(&p, 64, 48, &times, settings);
    let probe = [
        ("probesize", "500000".to_string()),
        ("analyzeduration", "500000".to_string()),
    ];
    let (frames, backlog) = live_frames(&p, &probe);
    let backlog = backlog.expect("the opening read packets");
    assert!(backlog.packets >= 1 && backlog.newest >= 0.0, "{backlog:?}");
    assert_eq!(frames.len(), 25);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(which(&f.image), i, "frame {i} at {}", f.time);
        assert!((f.time - times[i]).abs() < 1e-3, "frame {i}: {}", f.time);
    }
    let mut dropping = probe.to_vec();
    dropping.push(("fflags", "nobuffer".to_string()));
    let (frames, _) = live_frames(&p, &dropping);
    assert!(
        frames.first().is_none_or(|f| which(&f.image) != 0),
        "{} frames, the first {:?}",
        frames.len(),
        frames.first().map(|f| f.time)
    );
}

#[test]
fn full_range_planes_are_kept_only_when_asked_shown_and_never_drawn_nor_baked() {
    let mut raw = ffmpeg_next::frame::Video::new(ffmpeg_next::format::Pixel::YUVJ420P, 4, 2);
    raw.data_mut(0).fill(255);
    raw.data_mut(0)[..2].fill(0);
    raw.data_mut(1).fill(128);
    raw.data_mut(2).fill(128);
    assert!(Yuv420::reference(&raw, (4, 2), None, false).is_none());
    let mut yuv = Yuv420::reference(&raw, (4, 2), None, true).unwrap();
    assert!(yuv.full_range());
    // Shown as decoded, converted with the full range's levels: 0 black,
    // 255 white (limited range would clip 255 and lift 0).
    let shown = yuv.picture().unwrap();
    let planes = shown.planes().unwrap();
    assert!(planes.full_range && (planes.width, planes.height) == (4, 2));
    let rgb = shown.to_rgb().unwrap();
    assert_eq!(
        [rgb[[0, 0, 0]], rgb[[0, 1, 1]], rgb[[0, 2, 2]], rgb[[1, 3, 0]]],
        [0, 0, 255, 255]
    );
    // Drawings convert to limited range: refused, and marks stay unbaked.
    assert!(yuv.draw_planes().is_err());
    yuv.mark_changed([0, 0, 2, 2]);
    yuv.bake(&[200; 3 * 4 * 2]).unwrap();
    assert_eq!(yuv.changed(), &[[0, 0, 2, 2]]);
    assert!(yuv.picture().is_none() && !yuv.is_drawn());
}

/// Planes made this frame's own are a copy while another reference holds
/// the decoded picture, with the same bytes, and leave the frame as not
/// drawn on; drawing on them then draws on that copy, not on the
/// picture the other reference sees.
#[test]
fn planes_made_own_are_copied_from_a_held_picture_and_not_marked_drawn() {
    let mut raw = ffmpeg_next::frame::Video::new(ffmpeg_next::format::Pixel::YUV420P, 8, 4);
    for (i, b) in raw.data_mut(0).iter_mut().enumerate() {
        *b = (16 + i % 200) as u8;
    }
    raw.data_mut(1).fill(100);
    raw.data_mut(2).fill(150);
    let mut yuv = Yuv420::reference(&raw, (8, 4), None, false).unwrap();
    // `raw` still holds the picture, as the decoder would.
    let y_of = |p: &crate::video::Picture420| p.planes().unwrap().row(0, 1).to_vec();
    let before = y_of(&yuv.picture().unwrap());
    let held =
        |yuv: &Yuv420| yuv.picture().unwrap().planes().unwrap().row(0, 0).as_ptr() == raw.data(0).as_ptr();
    assert!(held(&yuv));
    yuv.own_planes().unwrap();
    assert!(!held(&yuv), "copied");
    assert!(!yuv.is_drawn() && !yuv.rgb_pending());
    assert_eq!(y_of(&yuv.picture().unwrap()), before);
    {
        let p = yuv.draw_planes().unwrap();
        p.y.data[p.y.stride] = 0;
    }
    assert!(yuv.is_drawn());
    assert_eq!(
        raw.data(0)[raw.stride(0)],
        before[0],
        "the held picture is untouched"
    );
    assert_eq!(y_of(&yuv.picture().unwrap())[0], 0);
}
