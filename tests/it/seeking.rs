//! Seeking in a long-GOP HEVC video as x265 makes them (open groups of
//! pictures, whose leading B-frames need the group before, and B-frames no
//! frame refers to): with the keyframes known ([`underlay::video::SeekIndex`]),
//! every frame asked for is the one decoding from the start gives, a far
//! seek repositions the demuxer once, and reading on within a group
//! replaces seeking.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{have_tool, skip_missing_tool};
use underlay::video::Decoder;

/// 6 s of ffmpeg's moving test picture at 25 fps in HEVC, a keyframe
/// every 2 s (x265's open GOPs and B-frames), or `None` when ffmpeg has no
/// libx265.
fn open_gop_video(dir: &Path) -> Option<std::path::PathBuf> {
    if !have_tool("ffmpeg") {
        return None;
    }
    let out = dir.join("open-gop.mp4");
    let o = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=192x108:r=25",
            "-t",
            "6",
        ])
        .args(["-c:v", "libx265", "-preset", "ultrafast", "-x265-params"])
        .args(["keyint=50:min-keyint=50:scenecut=0:open-gop=1:bframes=4:b-adapt=0:log-level=error"])
        .arg(&out)
        .output()
        .unwrap();
    if !o.status.success() {
        let said = String::from_utf8_lossy(&o.stderr);
        if said.contains("libx265") || said.contains("Unknown encoder") {
            skip_missing_tool("ffmpeg with libx265");
            return None;
        }
        panic!("ffmpeg: {said}");
    }
    Some(out)
}

#[test]
fn every_frame_of_an_open_gop_hevc_video_is_reached_with_at_most_one_seek() {
    let dir = tempfile::tempdir().unwrap();
    let Some(video) = open_gop_video(dir.path()) else {
        return;
    };
    // The truth: every frame decoded from the start.
    let mut seq = Decoder::open(&video).unwrap();
    let mut frames = Vec::new();
    while let Some(f) = seq.next_frame().unwrap() {
        frames.push(f);
    }
    assert_eq!(frames.len(), 150);
    let mut d = Decoder::open(&video).unwrap();
    d.build_index();
    let index = d.seek_index().unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while !index.is_complete() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(index.is_complete(), "{index:?}");
    assert_eq!(index.len(), 3, "keyframes at 0, 2 and 4 s");
    // Frames in a scrambled order: far both ways, near, in the leading
    // pictures just before each keyframe.
    let order: Vec<usize> = (0..frames.len()).map(|i| (i * 67 + 13) % frames.len()).collect();
    for &i in &order {
        let f = &frames[i];
        let seeks = d.seeks();
        let got = d.frame_at(f.time + 0.01).unwrap().unwrap();
        assert_eq!(got.time, f.time, "frame {i}");
        assert!(
            got.image == f.image,
            "frame {i} at {} s differs from the one decoded in order",
            f.time
        );
        assert!(d.seeks() - seeks <= 1, "frame {i}: {} seeks", d.seeks() - seeks);
    }
    // The keyframe for a time, then the frame itself, with one seek.
    for &t in &[1.97, 3.33, 5.9] {
        let seeks = d.seeks();
        let key = d.keyframe_at(t).unwrap().unwrap();
        let want = index.key_for(t).unwrap();
        assert!(
            (key.time - want).abs() < 1e-6,
            "the keyframe for {t}: {} not {want}",
            key.time
        );
        let i = frames.iter().rposition(|f| f.time <= t + 1e-9).unwrap();
        assert!(d.frame_at(t).unwrap().unwrap().image == frames[i].image);
        assert_eq!(d.seeks() - seeks, 1, "at {t}");
    }
    // Within a group, reading on: from 0.1 s to 1.9 s without a seek.
    d.frame_at(0.1).unwrap();
    let seeks = d.seeks();
    assert!(d.frame_at(1.9).unwrap().unwrap().image == frames[47].image);
    assert_eq!(d.seeks(), seeks);
}
