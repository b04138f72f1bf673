//! Video in and out, and the export command, on small videos made here:
//! by underlay's own encoder, or by the `ffmpeg` command line when it is
//! installed (those tests skip with a message otherwise), with `ffprobe` as
//! an independent checker.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use underlay::export::{self, ExportJob, SimpleProcessor};
use underlay::image::RgbImage;
use underlay::video::{Decoder, Encoder, EncoderSettings, SourceFrame};

/// Runs the ffmpeg command line quietly; `false` when it is not installed.
fn ffmpeg(args: &[&str]) -> bool {
    match Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .status()
    {
        Ok(s) => {
            assert!(s.success(), "ffmpeg {args:?} failed");
            true
        }
        Err(_) => {
            crate::util::skip_missing_tool("ffmpeg");
            false
        }
    }
}

/// `ffprobe` output for one stream type as `key=value` lines.
fn probe(path: &Path, select: &str, entries: &str) -> Option<String> {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-select_streams",
            select,
            "-show_entries",
            entries,
            "-of",
        ])
        .arg("default=noprint_wrappers=1")
        .arg(path)
        .output();
    let Ok(out) = out else {
        crate::util::skip_missing_tool("ffprobe");
        return None;
    };
    assert!(out.status.success(), "ffprobe failed on {}", path.display());
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Values of `key` in ffprobe output, in order.
fn values(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(str::to_owned)
        .collect()
}

fn decode_all(path: &Path) -> Vec<SourceFrame> {
    let mut d = Decoder::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = d.next_frame().unwrap() {
        v.push(f);
        assert!(v.len() < 100_000);
    }
    v
}

fn times(path: &Path) -> Vec<f64> {
    decode_all(path).iter().map(|f| f.time).collect()
}

fn quick_job(input: &Path, output: &Path) -> ExportJob {
    let mut job = ExportJob::new(input, output);
    job.encoder.preset = "ultrafast".into();
    job
}

fn nothing<'a>() -> Vec<SimpleProcessor<'a>> {
    vec![Box::new(|_: &mut underlay::video::SourceFrame| Ok(()))]
}

use crate::util::tmp;

/// Writes an H.264 test pattern of `size` at `fps` for `secs` seconds with
/// an AAC tone of `hz`; false when ffmpeg is not there.
fn video_with_tone(path: &Path, size: &str, fps: u32, secs: u32, hz: u32) -> bool {
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        &format!("testsrc2=s={size}:r={fps}:d={secs}"),
        "-f",
        "lavfi",
        "-i",
        &format!("sine=frequency={hz}:duration={secs}"),
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-c:a",
        "aac",
        "-shortest",
        path.to_str().unwrap(),
    ])
}

#[test]
fn audio_is_copied_and_frames_times_and_duration_match() {
    let dir = tmp();
    let inp = dir.path().join("with-audio.mp4");
    if !video_with_tone(&inp, "160x120", 25, 2, 440) {
        return;
    }
    let out = dir.path().join("out.mp4");
    export::run(&quick_job(&inp, &out), nothing(), &AtomicBool::new(false)).unwrap();

    let info = Decoder::open(&out).unwrap().info().clone();
    assert!(info.has_audio);
    assert_eq!(times(&inp), times(&out));
    let din = Decoder::open(&inp).unwrap().info().duration;
    assert!((info.duration - din).abs() < 1e-6, "{} vs {din}", info.duration);
    let Some(a_in) = probe(
        &inp,
        "a",
        "stream=codec_name,sample_rate,channels,nb_frames,duration",
    ) else {
        return;
    };
    let a_out = probe(
        &out,
        "a",
        "stream=codec_name,sample_rate,channels,nb_frames,duration",
    )
    .unwrap();
    assert_eq!(a_in, a_out, "audio stream changed");
    // Audio packets are copied bit for bit.
    let pk = |p: &Path| probe(p, "a", "packet=size").unwrap();
    assert_eq!(pk(&inp), pk(&out));
    // Browsers need yuv420p H.264 and the index up front (faststart).
    let v = probe(&out, "v", "stream=codec_name,pix_fmt").unwrap();
    assert!(
        v.contains("codec_name=h264") && v.contains("pix_fmt=yuv420p"),
        "{v}"
    );
    let bytes = std::fs::read(&out).unwrap();
    let pos = |tag: &[u8]| bytes.windows(4).position(|w| w == tag).unwrap();
    assert!(
        pos(b"moov") < pos(b"mdat"),
        "moov atom is not before the media data"
    );
}

#[test]
fn variable_frame_rate_stays_variable() {
    let dir = tmp();
    let inp = dir.path().join("vfr.mp4");
    // Keep 3 frames out of every 7, with their original timestamps.
    if !ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=128x96:r=30:d=3",
        "-vf",
        "select='lt(mod(n\\,7)\\,3)'",
        "-fps_mode",
        "passthrough",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        inp.to_str().unwrap(),
    ]) {
        return;
    }
    let t_in = times(&inp);
    let gaps: Vec<f64> = t_in.windows(2).map(|w| w[1] - w[0]).collect();
    let (min, max) = gaps
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &g| (a.min(g), b.max(g)));
    assert!(max > 3.0 * min, "input is not VFR: {gaps:?}");
    if let Some(p) = probe(&inp, "v", "frame=pts_time") {
        let probed: Vec<f64> = values(&p, "pts_time")
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(probed.len(), t_in.len());
        for (a, b) in probed.iter().zip(&t_in) {
            assert!((a - b).abs() < 1e-3, "decoder time {b} vs ffprobe {a}");
        }
    }
    let out = dir.path().join("out.mp4");
    export::run(&quick_job(&inp, &out), nothing(), &AtomicBool::new(false)).unwrap();
    assert_eq!(times(&out), t_in);
}

#[test]
fn display_rotation_is_honoured() {
    let dir = tmp();
    let plain = dir.path().join("plain.mp4");
    // Red top-left quadrant on gray, 64 wide and 32 high.
    let mut img = RgbImage::from_elem((32, 64, 3), 128);
    for y in 0..16 {
        for x in 0..32 {
            img[[y, x, 0]] = 230;
            img[[y, x, 1]] = 20;
            img[[y, x, 2]] = 20;
        }
    }
    let mut e = Encoder::create(&plain, 64, 32, &EncoderSettings::default()).unwrap();
    e.push(&img, 0.0).unwrap();
    e.push(&img, 0.1).unwrap();
    e.finish().unwrap();
    let rotated = dir.path().join("rotated.mp4");
    if !ffmpeg(&[
        "-i",
        plain.to_str().unwrap(),
        "-c",
        "copy",
        "-metadata:s:v:0",
        "rotate=90",
        rotated.to_str().unwrap(),
    ]) {
        return;
    }
    let mut d = Decoder::open(&rotated).unwrap();
    // A quarter turn (FFmpeg 5.1 writes `rotate=90` as a counter-clockwise
    // display matrix; other versions differ): the size swaps.
    assert!([90, 270].contains(&d.info().rotation), "{:?}", d.info());
    assert_eq!((d.info().width, d.info().height), (32, 64));
    let f = d.next_frame().unwrap().unwrap();
    assert_eq!(f.image.dim(), (64, 32, 3));
    // Same picture as ffmpeg's own display (its autorotation).
    let raw = dir.path().join("frame.rgb");
    assert!(ffmpeg(&[
        "-i",
        rotated.to_str().unwrap(),
        "-frames:v",
        "1",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        raw.to_str().unwrap(),
    ]));
    let shown = std::fs::read(&raw).unwrap();
    assert_eq!(shown.len(), 64 * 32 * 3, "ffmpeg's frame has another size");
    let ours = f.image.as_slice().unwrap();
    let diff = ours
        .iter()
        .zip(&shown)
        .map(|(a, b)| u64::from(a.abs_diff(*b)))
        .sum::<u64>() as f64;
    assert!(
        diff / (shown.len() as f64) < 4.0,
        "differs from ffmpeg's display by {}",
        diff / shown.len() as f64
    );
    let red = |y: usize, x: usize| f.image[[y, x, 0]] > 180 && f.image[[y, x, 1]] < 70;
    let corners = [red(4, 4), red(4, 28), red(60, 4), red(60, 28)];
    assert_eq!(corners.iter().filter(|&&c| c).count(), 1, "{corners:?}");
    assert!(!corners[0], "the picture was not turned");
    // The export of a rotated video is upright (no rotation left to apply).
    let out = dir.path().join("upright.mp4");
    export::run(&quick_job(&rotated, &out), nothing(), &AtomicBool::new(false)).unwrap();
    let d = Decoder::open(&out).unwrap();
    assert_eq!((d.info().rotation, d.info().width, d.info().height), (0, 32, 64));
}

#[test]
fn other_codecs_and_containers_decode() {
    let dir = tmp();
    let cases: [(&str, &[&str]); 4] = [
        (
            "vp9.webm",
            &["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"],
        ),
        (
            "hevc.mkv",
            &[
                "-c:v",
                "libx265",
                "-preset",
                "ultrafast",
                "-x265-params",
                "log-level=error",
            ],
        ),
        ("mpeg4.avi", &["-c:v", "mpeg4", "-q:v", "3"]),
        (
            "mjpeg.mov",
            &["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"],
        ),
    ];
    for (name, codec) in cases {
        let p = dir.path().join(name);
        let mut args = vec!["-f", "lavfi", "-i", "testsrc2=s=96x64:r=10:d=1.5"];
        args.extend_from_slice(codec);
        let path = p.to_str().unwrap().to_owned();
        args.push(&path);
        if !ffmpeg(&args) {
            return;
        }
        let frames = decode_all(&p);
        assert_eq!(frames.len(), 15, "{name}");
        for (i, f) in frames.iter().enumerate() {
            assert!(
                (f.time - i as f64 / 10.0).abs() < 1e-3,
                "{name}: frame {i} at {}",
                f.time
            );
            assert_eq!(f.image.dim(), (64, 96, 3), "{name}");
        }
        // testsrc2 is colourful: the picture is not blank.
        let img = &frames[5].image;
        let distinct = img.iter().collect::<std::collections::BTreeSet<_>>().len();
        assert!(distinct > 50, "{name}: {distinct} distinct values");
    }
    // Sound without pictures is a clear error.
    let audio = dir.path().join("sound.m4a");
    assert!(ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=duration=0.5",
        audio.to_str().unwrap()
    ]));
    let e = Decoder::open(&audio).err().unwrap().to_string();
    assert!(e.contains("sound.m4a") && e.contains("no video stream"), "{e}");
}

/// The RMS level of `path`'s audio (mono, 8 kHz) over `from..to` seconds.
fn audio_rms(path: &Path, from: f64, to: f64) -> f64 {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-vn", "-ac", "1", "-ar", "8000", "-f", "f32le", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ffmpeg could not decode the audio of {}",
        path.display()
    );
    let samples: Vec<f32> = out
        .stdout
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let part = &samples[(from * 8000.0) as usize..((to * 8000.0) as usize).min(samples.len())];
    assert!(!part.is_empty(), "no audio between {from} and {to} s");
    (part.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / part.len() as f64).sqrt()
}

#[test]
fn audio_mp4_cannot_hold_is_re_encoded_in_step_and_copied_into_mkv() {
    // PCM, as many cameras record it: MP4 cannot store it, Matroska can.
    // Silence, then a tone from 3 s on, to see the audio stay in step.
    let dir = tmp();
    let inp = dir.path().join("camera.mov");
    if !ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=96x64:r=20:d=6",
        "-f",
        "lavfi",
        "-i",
        "aevalsrc=if(gte(t\\,3)\\,0.5*sin(2*PI*500*t)\\,0):s=44100:d=6",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-c:a",
        "pcm_s16le",
        "-ac",
        "2",
        inp.to_str().unwrap(),
    ]) {
        return;
    }
    assert!(audio_rms(&inp, 3.2, 5.8) > 0.3, "the test input has no tone");

    // Whole video into MP4: re-encoded as AAC, said so, same length.
    let mp4 = dir.path().join("out.mp4");
    let r = export::run(&quick_job(&inp, &mp4), nothing(), &AtomicBool::new(false)).unwrap();
    let w = r.warnings.join("\n");
    assert!(
        w.contains("pcm_s16le") && w.contains("AAC") && w.contains(".mkv"),
        "{w}"
    );
    let audio = probe(&mp4, "a", "stream=codec_name,duration").unwrap_or_default();
    assert_eq!(values(&audio, "codec_name"), ["aac"], "{audio}");
    let dur: f64 = values(&audio, "duration")[0].parse().unwrap();
    assert!((dur - 6.0).abs() < 0.05, "audio lasts {dur} s");
    assert!(audio_rms(&mp4, 0.2, 2.8) < 0.01, "sound before the tone");
    assert!(audio_rms(&mp4, 3.2, 5.8) > 0.3, "the tone is missing");

    // A part (2–5 s): the tone now starts 1 s in.
    let part = dir.path().join("part.mp4");
    let mut job = quick_job(&inp, &part);
    job.from = Some(2.0);
    job.to = Some(5.0);
    export::run(&job, nothing(), &AtomicBool::new(false)).unwrap();
    let dur: f64 = values(
        &probe(&part, "a", "stream=duration").unwrap_or_default(),
        "duration",
    )[0]
    .parse()
    .unwrap();
    assert!((dur - 3.0).abs() < 0.05, "audio of the part lasts {dur} s");
    assert!(
        audio_rms(&part, 0.1, 0.9) < 0.01,
        "sound before the tone in the part"
    );
    assert!(
        audio_rms(&part, 1.1, 2.9) > 0.3,
        "the tone is missing in the part"
    );

    // Matroska holds PCM: copied unchanged, nothing to say.
    let mkv = dir.path().join("out.mkv");
    let r = export::run(&quick_job(&inp, &mkv), nothing(), &AtomicBool::new(false)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let audio = probe(&mkv, "a", "stream=codec_name").unwrap_or_default();
    assert!(audio.contains("pcm_s16le"), "{audio}");
}

#[test]
fn export_of_a_part_copies_the_matching_audio() {
    let dir = tmp();
    let inp = dir.path().join("long.mp4");
    if !video_with_tone(&inp, "96x64", 20, 4, 300) {
        return;
    }
    let out = dir.path().join("part.mp4");
    let mut job = quick_job(&inp, &out);
    job.from = Some(1.0);
    job.to = Some(2.5);
    let report = export::run(&job, nothing(), &AtomicBool::new(false)).unwrap();
    assert_eq!(report.frames, 30);
    let t = times(&out);
    assert_eq!(t.len(), 30);
    assert!(t[0].abs() < 1e-6 && (t[29] - 1.45).abs() < 1e-6, "{t:?}");
    let Some(a) = probe(&out, "a", "stream=duration") else {
        return;
    };
    let ad: f64 = values(&a, "duration")[0].parse().unwrap();
    assert!((ad - 1.5).abs() < 0.1, "audio lasts {ad} s");
}

/// The underlay binary, run in `dir`.
fn underlay(dir: &Path, args: &[&str]) -> std::process::Output {
    crate::util::run_in(dir, args)
}

const FLOOR: [u8; 3] = [40, 140, 40];

/// A 320×240 floor-green video of `n` frames at 10 fps with a dark 40×40
/// "robot" at (140..180, 100..140), a log drawing a thick magenta line
/// along y = 120 (level 0, entity `plan/line`) and a yellow one along
/// x = 60 (level 2, entity `robots/marks`), an identity calibration and a
/// session tying them together.
fn scene(dir: &Path, n: usize) {
    let mut e = Encoder::create(
        &dir.join("run.mp4"),
        320,
        240,
        &EncoderSettings {
            crf: 10,
            preset: "ultrafast".into(),
            fps_hint: 10.0,
            ..Default::default()
        },
    )
    .unwrap();
    let img = RgbImage::from_shape_fn((240, 320, 3), |(y, x, c)| {
        if (100..140).contains(&y) && (140..180).contains(&x) {
            20
        } else {
            FLOOR[c]
        }
    });
    for i in 0..n {
        e.push(&img, i as f64 / 10.0).unwrap();
    }
    e.finish().unwrap();
    std::fs::write(
        dir.join("run.txt"),
        "{ { entity; robots/marks; {robots} }\n\
         { {-inf; inf}; {\n\
           { { line; (0, 120); (320, 120) }; magenta; {plan/line; 0}; thickness 10 }\n\
           { { line; (60, 0); (60, 240) }; yellow; {robots/marks; 2}; thickness 10 }\n\
         } } }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("calib.toml"),
        "homography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("session.toml"),
        "video = \"run.mp4\"\nlog = \"run.txt\"\noffset = 0.0\ncalibration = { file = \"calib.toml\" }\n",
    )
    .unwrap();
}

fn is_magenta(p: &[u8]) -> bool {
    p[0] > 200 && p[1] < 80 && p[2] > 200
}

fn is_yellow(p: &[u8]) -> bool {
    p[0] > 200 && p[1] > 200 && p[2] < 80
}

fn px(f: &SourceFrame, x: usize, y: usize) -> Vec<u8> {
    f.image.slice(ndarray::s![y, x, ..]).to_vec()
}

use crate::util::assert_ok as ok;

#[test]
fn binary_exports_a_session_with_the_overlay_where_the_log_says() {
    let dir = tmp();
    scene(dir.path(), 10);
    let out = underlay(
        dir.path(),
        &["export", "session.toml", "-o", "annotated.mp4", "--no-mask"],
    );
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("10 frames"));
    let frames = decode_all(&dir.path().join("annotated.mp4"));
    assert_eq!(frames.len(), 10);
    assert_eq!(
        times(&dir.path().join("annotated.mp4")),
        times(&dir.path().join("run.mp4"))
    );
    let f = &frames[4];
    // On the projected line: magenta on floor and (no mask) on the robot too.
    for x in [20, 100, 160, 300] {
        assert!(is_magenta(&px(f, x, 120)), "x={x}: {:?}", px(f, x, 120));
    }
    assert!(is_yellow(&px(f, 60, 30)), "{:?}", px(f, 60, 30));
    // Away from the lines: the video as it was.
    let p = px(f, 250, 40);
    assert!(p.iter().zip(FLOOR).all(|(a, b)| a.abs_diff(b) < 8), "{p:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("nothing was drawn"));

    // A log of moments (0.0–0.9 s) and an offset that puts them all
    // outside the video: said, not silent.
    let moments: String = (0..10)
        .map(|i| {
            format!(
                "{{ {}; {{ {{ {{ circle; (100, 100); 20 }}; red; {{dot; 0}} }} }} }}\n",
                i as f64 / 10.0
            )
        })
        .collect();
    std::fs::write(dir.path().join("moments.txt"), format!("{{ {moments}}}\n")).unwrap();
    // The same moments under a zone drawn for the whole run.
    let zone = "{ {-inf; inf}; { { { line; (0, 10); (300, 10) }; blue; {zone; 0} } } }\n";
    std::fs::write(dir.path().join("mixed.txt"), format!("{{ {zone}{moments}}}\n")).unwrap();
    let export_dots = |log: &str, offset: &str, out: &str| {
        let args = ["export", "--video", "run.mp4", "--calib", "calib.toml"];
        let o = underlay(
            dir.path(),
            &[&args[..], &["--log", log, "--offset", offset, "-o", out]].concat(),
        );
        ok(&o);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    for log in ["moments.txt", "mixed.txt"] {
        let e = export_dots(log, "0", "dots.mp4");
        assert!(!e.contains("warning"), "{e}");
    }
    let e = export_dots("moments.txt", "1000", "late.mp4");
    assert!(
        e.contains("nothing was drawn on any of the 10 frames") && e.contains("offset"),
        "{e}"
    );
    let e = export_dots("mixed.txt", "1000", "late.mp4");
    assert!(
        e.contains("only the log's persistent drawings were shown") && e.contains("offset"),
        "{e}"
    );
}

#[test]
fn binary_filters_levels_entities_and_time() {
    let dir = tmp();
    scene(dir.path(), 20);
    let out = underlay(
        dir.path(),
        &[
            "export",
            "session.toml",
            "-o",
            "lvl.mp4",
            "--no-mask",
            "--max-level",
            "1",
            "--from",
            "0.5",
            "--to",
            "1.2",
        ],
    );
    ok(&out);
    let frames = decode_all(&dir.path().join("lvl.mp4"));
    assert_eq!(frames.len(), 7);
    assert!(frames[0].time.abs() < 1e-6);
    assert!(is_magenta(&px(&frames[0], 100, 120)));
    assert!(!is_yellow(&px(&frames[0], 60, 30)), "level-2 line drawn");

    let out = underlay(
        dir.path(),
        &[
            "export",
            "session.toml",
            "-o",
            "ent.mp4",
            "--no-mask",
            "--entity",
            "robots",
        ],
    );
    ok(&out);
    let f = &decode_all(&dir.path().join("ent.mp4"))[0];
    assert!(is_yellow(&px(f, 60, 30)));
    assert!(!is_magenta(&px(f, 100, 120)), "entity outside robots/ drawn");

    // A name the log does not have is a mistake, not "draw everything".
    let out = underlay(
        dir.path(),
        &["export", "session.toml", "-o", "typo.mp4", "--entity", "robot"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"robot\"") && err.contains("robots/marks"), "{err}");
    // … said once, not once per layer of the error.
    assert_eq!(err.matches("no entity named").count(), 1, "{err}");
}

#[test]
fn binary_exports_without_a_session() {
    let dir = tmp();
    scene(dir.path(), 5);
    // The line sits at log time ±∞, so any offset shows it.
    let out = underlay(
        dir.path(),
        &[
            "export",
            "--video",
            "run.mp4",
            "--log",
            "run.txt",
            "--calib",
            "calib.toml",
            "--offset",
            "-12.5",
            "--no-mask",
            "-o",
            "flags.mp4",
            "--crf",
            "30",
            "--preset",
            "ultrafast",
        ],
    );
    ok(&out);
    let f = &decode_all(&dir.path().join("flags.mp4"))[2];
    assert!(is_magenta(&px(f, 100, 120)));
}

/// `--stats`: the CPU by stage, the ordered stages' share of it, and the
/// rows adding up to the process's time.
#[test]
fn stats_say_where_the_cpu_went() {
    let dir = tmp();
    scene(dir.path(), 8);
    let out = underlay(
        dir.path(),
        &[
            "export",
            "session.toml",
            "-o",
            "s.mp4",
            "--stats",
            "--workers",
            "2",
        ],
    );
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let head = err
        .lines()
        .find(|l| l.starts_with("CPU "))
        .unwrap_or_else(|| panic!("{err}"));
    let number = |s: &str, after: &str| -> f64 {
        let rest = &s[s.find(after).unwrap_or_else(|| panic!("{after} in {s}")) + after.len()..];
        rest.trim_start()
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let per_frame = number(head, "s, ");
    let ordered = number(head, "in frame order");
    assert!(per_frame > 0.0 && (0.0..=100.0).contains(&ordered), "{head}");
    let row = |name: &str| {
        let l = err
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {err}"));
        number(l, name)
    };
    let (reading, encoder, workers, rest) = (
        row("reading (in order)"),
        row("encoding thread (in order)"),
        row("workers"),
        row("FFmpeg's and x264's threads"),
    );
    assert!(row("preparing (underlay's)") <= reading, "{err}");
    assert!(row("in FFmpeg's demuxer and decoder") <= reading, "{err}");
    assert!(row("in x264's intake and the muxer") <= encoder, "{err}");
    let own = number(head, "of which underlay's own");
    assert!(own <= ordered, "{head}");
    assert!(workers > 0.0, "{err}");
    let sum = reading + encoder + workers + rest;
    assert!(
        (sum - per_frame).abs() <= 0.05 * per_frame + 0.02,
        "{sum} vs {per_frame}: {err}"
    );
}

#[test]
fn binary_refuses_to_overwrite_its_inputs() {
    let dir = tmp();
    scene(dir.path(), 3);
    let before = std::fs::read(dir.path().join("run.mp4")).unwrap();
    for target in ["run.mp4", "run.txt", "calib.toml", "session.toml"] {
        let out = underlay(dir.path(), &["export", "session.toml", "-o", target]);
        assert!(!out.status.success(), "overwrote {target}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("refusing to overwrite"), "{err}");
    }
    assert_eq!(std::fs::read(dir.path().join("run.mp4")).unwrap(), before);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("run.mp4"), dir.path().join("alias.mp4")).unwrap();
        let out = underlay(dir.path(), &["export", "session.toml", "-o", "alias.mp4"]);
        assert!(!out.status.success());
        assert_eq!(std::fs::read(dir.path().join("run.mp4")).unwrap(), before);
    }
}

#[test]
fn binary_names_missing_files_and_leaves_nothing() {
    let dir = tmp();
    scene(dir.path(), 3);
    std::fs::remove_file(dir.path().join("run.txt")).unwrap();
    let out = underlay(dir.path(), &["export", "session.toml", "-o", "x.mp4"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("run.txt"));
    let out = underlay(
        dir.path(),
        &[
            "export",
            "--video",
            "gone.mp4",
            "--log",
            "run.txt",
            "--calib",
            "calib.toml",
            "-o",
            "y.mp4",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("gone.mp4") || err.contains("run.txt"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "{left:?}");
}

#[cfg(unix)]
#[test]
fn binary_stops_on_ctrl_c_with_exit_130_and_no_file() {
    let dir = tmp();
    scene(dir.path(), 3);
    // A long input: a minute at 10 fps, big enough to still be running.
    let long = dir.path().join("long.mp4");
    let mut e = Encoder::create(&long, 640, 480, &EncoderSettings::default()).unwrap();
    let img = RgbImage::from_shape_fn((480, 640, 3), |(y, x, c)| ((x * 3 + y * 5 + c * 70) % 256) as u8);
    for i in 0..600 {
        e.push(&img, f64::from(i) / 10.0).unwrap();
    }
    e.finish().unwrap();
    let child = crate::util::underlay_cmd()
        .current_dir(dir.path())
        .args([
            "export",
            "--video",
            "long.mp4",
            "--log",
            "run.txt",
            "--calib",
            "calib.toml",
            "-o",
            "cut.mp4",
        ])
        .args(["--preset", "veryslow"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the temporary output exists, so the export is under way.
    let started = std::time::Instant::now();
    while !std::fs::read_dir(dir.path())
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().contains("partial"))
    {
        assert!(started.elapsed().as_secs() < 60, "export did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !left.iter().any(|n| n.contains("cut") || n.contains("partial")),
        "{left:?}"
    );
}

#[test]
fn binary_hides_the_overlay_behind_robots_with_the_floor_mask() {
    use underlay::mask::MaskSettings;
    // The session's default mask method, and the thesis method by name.
    assert_ne!(
        MaskSettings::default(),
        MaskSettings::None,
        "sessions mask by default"
    );
    let thesis = "[mask]\nmethod = \"thesis\"\n";
    let methods = ["", thesis];
    let dir = tmp();
    scene(dir.path(), 6);
    for method in methods {
        let session = format!(
            "video = \"run.mp4\"\nlog = \"run.txt\"\ncalibration = {{ file = \"calib.toml\" }}\n{method}"
        );
        std::fs::write(dir.path().join("masked.toml"), session).unwrap();
        let out = underlay(dir.path(), &["export", "masked.toml", "-o", "masked.mp4"]);
        ok(&out);
        let frames = decode_all(&dir.path().join("masked.mp4"));
        assert_eq!(frames.len(), 6);
        for f in &frames {
            // On the floor the line shows ...
            for x in [20, 100, 230, 300] {
                assert!(
                    is_magenta(&px(f, x, 120)),
                    "{method:?} x={x}: {:?}",
                    px(f, x, 120)
                );
            }
            // ... on the robot the video does.
            for x in [150, 160, 170] {
                let p = px(f, x, 120);
                assert!(
                    p.iter().all(|&v| v < 60),
                    "{method:?} x={x}: {p:?} drawn over the robot"
                );
            }
        }
    }
}

#[test]
fn binary_rejects_a_mask_image_of_the_wrong_size_before_encoding() {
    let dir = tmp();
    scene(dir.path(), 3);
    underlay::video::still::save_mask(
        &dir.path().join("small.png"),
        &underlay::image::MaskImage::zeros((10, 12)),
    )
    .unwrap();
    let mut session = std::fs::read_to_string(dir.path().join("session.toml")).unwrap();
    session.push_str("\n[mask]\nmethod = \"image\"\nfile = \"small.png\"\n");
    std::fs::write(dir.path().join("masked.toml"), session).unwrap();
    let out = underlay(dir.path(), &["export", "masked.toml", "-o", "out.mp4"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mask") && err.contains("small.png"), "{err}");
    assert!(!dir.path().join("out.mp4").exists());
}

/// Issue 17: a session with no calibration is not exported silently
/// without its drawings; `--no-calibration` says that is meant.
#[test]
fn export_without_a_calibration_is_refused_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scene(d, 3);
    std::fs::write(d.join("bare.toml"), "video = \"run.mp4\"\nlog = \"run.txt\"\n").unwrap();
    let o = underlay(d, &["export", "bare.toml", "-o", "out.mp4"]);
    assert!(!o.status.success());
    let err = crate::util::stderr(&o);
    assert!(
        err.contains("no calibration") && err.contains("--no-calibration"),
        "{err}"
    );
    assert!(!d.join("out.mp4").exists());
    let o = underlay(d, &["export", "bare.toml", "-o", "out.mp4", "--no-calibration"]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    assert!(d.join("out.mp4").exists());
}

/// Issue 17: a calibration fitted in metres over a log in millimetres is
/// converted (and the export says so) instead of drawing nothing.
#[test]
fn a_calibration_in_another_unit_is_converted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scene(d, 3);
    std::fs::write(
        d.join("calib.toml"),
        "homography = [[1000.0, 0.0, 0.0], [0.0, 1000.0, 0.0], [0.0, 0.0, 1.0]]\nworld_unit = \"m\"\n",
    )
    .unwrap();
    let o = underlay(d, &["export", "session.toml", "-o", "out.mp4", "--no-mask"]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    let err = crate::util::stderr(&o);
    assert!(err.contains("calibration is in m and the log in mm"), "{err}");
    let frames = decode_all(&d.join("out.mp4"));
    assert!(
        is_magenta(&px(&frames[0], 10, 120)),
        "{:?}",
        px(&frames[0], 10, 120)
    );
}
