//! The drawings alone (`underlay live --overlay-out`) in OBS Studio itself:
//! OBS (installed by `scripts/obs-record` when missing) plays the overlay
//! file in a Media Source over a blue background under Xvfb and records
//! what it composites; the recording shows the background where nothing is
//! drawn, an opaque drawing as it is, and a half-transparent one mixed with
//! the background — so OBS sees the overlay's alpha.

use std::path::Path;
use std::process::Command;

use crate::util::{assert_ok, have_tool, rgb_picture, run, skip_missing_tool, tmp, tools_required};

#[test]
fn obs_shows_the_overlay_with_its_transparency() {
    if !have_tool("ffmpeg") || !have_tool("xvfb-run") {
        return;
    }
    let dir = tmp();
    let d = dir.path();
    let (w, h) = (640usize, 360usize);
    let cam = d.join("cam.mp4");
    let made = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=640x360:r=30",
            "-t",
            "4",
        ])
        .args(["-pix_fmt", "yuv420p"])
        .arg(&cam)
        .status()
        .unwrap();
    assert!(made.success());
    // An opaque red square and a green one at half opacity, in the
    // picture's pixels (no calibration needed).
    std::fs::write(
        d.join("drawings.txt"),
        "{\n{ header; version 3 }\n{ {-inf; inf}; {\n\
         { { rectangle; (160, 180); (120, 120) }; red; {solid; 0}; fill red; picture }\n\
         { { rectangle; (440, 180); (160, 160) }; #00ff0080; {glass; 0}; fill #00ff0080; picture }\n\
         } }\n}\n",
    )
    .unwrap();
    let overlay = d.join("overlay.mkv");
    assert_ok(&run([
        "live".as_ref(),
        cam.as_os_str(),
        "--realtime".as_ref(),
        "--log".as_ref(),
        d.join("drawings.txt").as_os_str(),
        "--no-calibration".as_ref(),
        "--overlay-out".as_ref(),
        overlay.as_os_str(),
        "--no-view".as_ref(),
        "--duration".as_ref(),
        "3".as_ref(),
    ]));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/obs-record");
    let obs_dir = d.join("obs");
    // The background: blue, as OBS writes colours (0xAABBGGRR).
    let recorded = Command::new(&script)
        .arg(&obs_dir)
        .arg(&overlay)
        .args(["640", "360", "6", "0xffff0000"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&recorded.stderr);
    if !recorded.status.success() {
        let installed = Command::new("sh")
            .args(["-c", "command -v obs"])
            .status()
            .is_ok_and(|s| s.success());
        if !installed && !tools_required() {
            skip_missing_tool("OBS Studio (`obs-studio`, which scripts/obs-record could not install)");
            return;
        }
        panic!("scripts/obs-record failed: {err}");
    }
    let path = String::from_utf8_lossy(&recorded.stdout).trim().to_owned();
    // The last picture, its limited-range YUV read as BT.709 (as OBS
    // records).
    let picture = rgb_picture(
        Path::new(&path),
        &["-sseof", "-0.5"],
        Some("scale=in_color_matrix=bt709:in_range=tv"),
    );
    assert_eq!(picture.len(), 3 * w * h, "{path}: not a {w}×{h} picture");
    let px = |x: usize, y: usize| {
        let i = 3 * (y * w + x);
        [picture[i], picture[i + 1], picture[i + 2]]
    };
    let within = |x0: usize, x1: usize, y0: usize, y1: usize| {
        (x0..x1)
            .step_by(7)
            .flat_map(move |x| (y0..y1).step_by(7).map(move |y| (x, y)))
    };
    // Nothing drawn: OBS's blue background.
    for (x, y) in within(0, w, 0, 80).chain(within(250, 330, 100, 260)) {
        let [r, g, b] = px(x, y);
        assert!(
            r < 25 && g < 25 && b > 225,
            "background at ({x}, {y}) is {:?}",
            px(x, y)
        );
    }
    // The opaque square hides the background.
    for (x, y) in within(110, 210, 130, 230) {
        let [r, g, b] = px(x, y);
        assert!(
            r > 225 && g < 25 && b < 25,
            "red square at ({x}, {y}) is {:?}",
            px(x, y)
        );
    }
    // The half-transparent one mixes with it: green and blue both, neither
    // the square opaque (alpha ignored) nor the background alone (alpha
    // dropped). OBS blends in linear light: (0, 126, 186) here.
    for (x, y) in within(370, 510, 110, 250) {
        let [r, g, b] = px(x, y);
        assert!(
            r < 25 && (80..=180).contains(&g) && (110..=230).contains(&b),
            "half-transparent square at ({x}, {y}) is {:?}",
            px(x, y)
        );
    }
}
