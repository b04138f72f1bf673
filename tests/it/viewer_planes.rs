//! The viewer showing a video from its planes, converted on the GPU, in a
//! real window under Xvfb (Mesa's software OpenGL): the screenshot's
//! pixels against the CPU's conversion of the same frame, for each colour
//! matrix and range; and the whole window against the same window showing
//! RGB pictures converted on the CPU (`--display rgb`), drawings included.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Xvfb, have_tool, stderr, underlay_cmd as underlay};
use underlay::image::RgbImage;

/// Patches of a test picture: (Y, U, V), each 64×64 pixels, four a row.
/// Greys, saturated colours, the extremes that clamp, and values off the
/// 2×2 grid of any rounding.
const PATCHES: [[u8; 3]; 8] = [
    [16, 128, 128],
    [235, 128, 128],
    [81, 90, 240],
    [145, 54, 34],
    [41, 240, 110],
    [200, 16, 146],
    [126, 173, 71],
    [255, 0, 255],
];

/// A 256×128 picture of [`PATCHES`] in YUV 4:2:0 planes, as raw bytes.
fn patch_planes() -> Vec<u8> {
    let (w, h) = (256usize, 128usize);
    let at = |x: usize, y: usize| PATCHES[(y / 64) * 4 + x / 64];
    let mut raw = Vec::with_capacity(w * h * 3 / 2);
    raw.extend((0..h).flat_map(|y| (0..w).map(move |x| at(x, y)[0])));
    for c in 1..3 {
        raw.extend((0..h / 2).flat_map(|y| (0..w / 2).map(move |x| at(2 * x, 2 * y)[c])));
    }
    raw
}

/// The patches encoded losslessly (x264 at QP 0) as a 3-frame video
/// tagged with `matrix` (ffmpeg's name) and `range` (`tv`, `pc`).
fn patch_video(dir: &Path, matrix: &str, range: &str) -> PathBuf {
    let raw = dir.join("patches.yuv");
    let mut frames = Vec::new();
    for _ in 0..3 {
        frames.extend(patch_planes());
    }
    std::fs::write(&raw, frames).unwrap();
    let out = dir.join(format!("patches-{matrix}-{range}.mp4"));
    let o = Command::new("ffmpeg")
        .args([
            "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "256x128",
        ])
        .args(["-r", "10", "-color_range", range, "-colorspace", matrix, "-i"])
        .arg(&raw)
        .args(["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"])
        .args(["-color_range", range, "-colorspace", matrix])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// A screenshot of `input` at `at` seconds in a 1000×700 window.
fn shot(x: &Xvfb, input: &Path, at: &str, png: &Path, extra: &[&str]) -> RgbImage {
    let o = underlay()
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .arg("view")
        .arg(input)
        .args(["--at", at, "--size", "1000x700"])
        // Xvfb's renderer is llvmpipe, where `auto` picks RGB: the planes
        // unless the test asks for RGB.
        .args(if extra.is_empty() {
            &["--display", "planes"][..]
        } else {
            &[][..]
        })
        .args(extra)
        .arg("--screenshot")
        .arg(png)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    underlay::video::still::load_rgb(png).unwrap()
}

/// How many pixels of `img` are exactly `rgb`.
fn count(img: &RgbImage, rgb: [u8; 3]) -> usize {
    let (h, w, _) = img.dim();
    (0..h)
        .flat_map(|y| (0..w).map(move |x| (y, x)))
        .filter(|&(y, x)| (0..3).all(|c| img[[y, x, c]] == rgb[c]))
        .count()
}

/// Pixels of `a` and `b` (the same size) apart by more than `tol` in a
/// channel, and the largest difference.
fn differ(a: &RgbImage, b: &RgbImage, tol: u8) -> (usize, u8) {
    assert_eq!(a.dim(), b.dim());
    let mut n = 0;
    let mut worst = 0;
    let (h, w, _) = a.dim();
    for y in 0..h {
        for x in 0..w {
            let d = (0..3)
                .map(|c| a[[y, x, c]].abs_diff(b[[y, x, c]]))
                .max()
                .unwrap_or(0);
            worst = worst.max(d);
            if d > tol {
                n += 1;
            }
        }
    }
    (n, worst)
}

/// The pixels `(x, y)` where `a` and `b` differ by more than `tol` in a
/// channel although `b` is one colour all around them (`radius` pixels
/// each way): differences away from any edge.
fn inner_differences(a: &RgbImage, b: &RgbImage, tol: u8, radius: usize) -> Vec<(usize, usize)> {
    let (h, w, _) = a.dim();
    let px = |img: &RgbImage, y: usize, x: usize| [0, 1, 2].map(|c| img[[y, x, c]]);
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let (pa, pb) = (px(a, y, x), px(b, y, x));
            if (0..3).all(|c| pa[c].abs_diff(pb[c]) <= tol) {
                continue;
            }
            let flat = (y.saturating_sub(radius)..(y + radius + 1).min(h))
                .all(|yy| (x.saturating_sub(radius)..(x + radius + 1).min(w)).all(|xx| px(b, yy, xx) == pb));
            if flat {
                out.push((x, y));
            }
        }
    }
    out
}

/// Each colour matrix and range as the stream says: every patch of the
/// screenshot is, pixel for pixel, the colour the CPU's conversion gives
/// (the decoder's RGB of the same frame), and the window is the one the
/// CPU path shows but at the patches' edges.
#[test]
fn the_planes_on_screen_are_the_cpus_conversion_for_each_matrix_and_range() {
    if !have_tool("ffmpeg") {
        return;
    }
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (matrix, range) in [
        ("bt709", "tv"),
        ("bt470bg", "tv"),
        ("bt709", "pc"),
        ("smpte170m", "pc"),
    ] {
        let video = patch_video(dir.path(), matrix, range);
        // The CPU's conversion: the decoder's RGB picture of the frame.
        let mut d = underlay::video::Decoder::open(&video).unwrap();
        let rgb = d.frame_at(0.1).unwrap().unwrap().image;
        let gpu = shot(
            &x,
            &video,
            "0.1",
            &dir.path().join(format!("{matrix}-{range}.png")),
            &[],
        );
        let cpu = shot(
            &x,
            &video,
            "0.1",
            &dir.path().join(format!("{matrix}-{range}-cpu.png")),
            &["--display", "rgb"],
        );
        // The video is shown about 2.5× enlarged: each patch covers some
        // 25,000 screen pixels, all of them its exact colour but the
        // blend at its edges.
        for (i, _) in PATCHES.iter().enumerate() {
            let (px, py) = ((i % 4) * 64 + 32, (i / 4) * 64 + 32);
            let want = [0, 1, 2].map(|c| rgb[[py, px, c]]);
            let on_gpu = count(&gpu, want);
            let on_cpu = count(&cpu, want);
            assert!(
                on_cpu > 8_000 && on_gpu.abs_diff(on_cpu) <= on_cpu / 50,
                "{matrix} {range}, patch {i} {:?} = RGB {want:?}: {on_gpu} pixels on the GPU's screen, {on_cpu} on the CPU's",
                PATCHES[i]
            );
        }
        // The whole window: the same but where neighbouring patches blend.
        // There the GPU converts the blend of the planes and egui blends
        // the converted pixels: the same up to a level of rounding, except
        // where a patch's colour clips (255, 0, 255 and the saturated
        // ones do) and the blends part. So every difference lies on a
        // patch's edge (within 3 pixels of another colour on the CPU's
        // screen), and the edges are some 1,600 pixels long.
        let (n, worst) = differ(&gpu, &cpu, 1);
        let inside = inner_differences(&gpu, &cpu, 1, 3);
        assert!(
            inside.is_empty() && n < 5_000,
            "{matrix} {range}: {n} pixels differ, by up to {worst}; away from any edge: {:?}",
            &inside[..inside.len().min(10)]
        );
    }
}

/// A real session's window (the demo's camera picture with its sensor
/// noise, and the robots' drawings) shown from the planes and from RGB:
/// the same where nothing is drawn; where drawn, the drawing's colour
/// subsampled into the planes (as export's encoder takes them) and so
/// within a few levels but at its edges.
#[test]
fn a_drawn_session_shows_as_the_cpu_path_shows_it() {
    let Some(x) = Xvfb::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let o = underlay()
        .args([
            "demo",
            "--no-view",
            "--width",
            "640",
            "--height",
            "360",
            "--duration",
            "2",
            "--out",
        ])
        .arg(&demo)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let session = demo.join("session.toml");
    let gpu = shot(&x, &session, "1.0", &dir.path().join("gpu.png"), &[]);
    let cpu = shot(
        &x,
        &session,
        "1.0",
        &dir.path().join("cpu.png"),
        &["--display", "rgb"],
    );
    let (h, w, _) = gpu.dim();
    let all = h * w;
    let (loose, worst) = differ(&gpu, &cpu, 2);
    let (far, _) = differ(&gpu, &cpu, 24);
    // The drawings cover a few percent of the window; their edges' colour
    // is spread over 2×2 blocks.
    assert!(
        loose * 100 < all * 4,
        "{loose} of {all} pixels differ by more than 2 (up to {worst})"
    );
    assert!(
        far * 1000 < all * 6,
        "{far} of {all} pixels differ by more than 24"
    );
    // Something was drawn at all (the pictures are not both blank).
    assert!(count(&gpu, [255, 255, 255]) < all / 2);
}
