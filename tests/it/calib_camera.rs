//! Full cameras on the command line (issue 33): `calib solve --model
//! pinhole` on a POINTS.csv with a `z` column, the `[camera]` table it
//! writes, `calib check` with heights, and the errors of points with
//! heights given to a floor-only model or of degenerate input.

use std::path::{Path, PathBuf};
use std::process::Output;

use underlay::calib::Calibration;
use underlay::calib::camera::look_at;

use crate::util::{stderr, stdout};

fn underlay(args: &[&str]) -> Output {
    crate::util::run(args)
}

/// A broadcast-like camera over a football pitch (mm): 1100 px focal
/// length, principal point a little off centre, barrel distortion.
fn truth() -> Calibration {
    let k = [[1100.0, 0.0, 645.0], [0.0, 1100.0, 355.0], [0.0, 0.0, 1.0]];
    let (r, t) = look_at([-20_000.0, -60_000.0, 25_000.0], [0.0, 0.0, 0.0]).unwrap();
    Calibration::from_camera(&k, &[-0.12, 0.02], &r, t)
        .unwrap()
        .with_image_size(1280, 720)
}

/// Field marks on the floor and goal-post and crossbar tops at 2.44 m.
fn world() -> Vec<[f64; 3]> {
    let mut v = Vec::new();
    for x in [-52_500.0, -36_000.0, -16_500.0, 0.0, 16_500.0, 36_000.0, 52_500.0] {
        for y in [-34_000.0, -20_160.0, 0.0, 20_160.0, 34_000.0] {
            v.push([x, y, 0.0]);
        }
    }
    for sx in [1.0, -1.0] {
        for y in [3_660.0, -3_660.0, 0.0] {
            v.push([sx * 52_500.0, y, 2_440.0]);
        }
    }
    v
}

/// A clicked-points file with a `z` column (empty on the floor), the
/// clicks rounded to 0.01 px; point i on line i + 3.
fn write_csv(dir: &Path, cam: &Calibration, world: &[[f64; 3]]) -> PathBuf {
    let mut s = String::from("# clicked, with heights\nname,u,v,x,y,z\n");
    for (i, p) in world.iter().enumerate() {
        let px = cam.project3(*p).expect("in view");
        let z = if p[2] == 0.0 {
            String::new()
        } else {
            p[2].to_string()
        };
        s.push_str(&format!("p{i},{:.2},{:.2},{},{},{z}\n", px.x, px.y, p[0], p[1]));
    }
    let path = dir.join("points.csv");
    std::fs::write(&path, s).unwrap();
    path
}

/// Largest distance between two calibrations over the pitch's picture,
/// from the floor to 3 m up.
fn max_error(a: &Calibration, b: &Calibration) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..=30 {
        for j in 0..=20 {
            for h in [0.0, 1000.0, 2440.0, 3000.0] {
                let p = [
                    -52_500.0 + 3_500.0 * f64::from(i),
                    -34_000.0 + 3_400.0 * f64::from(j),
                    h,
                ];
                let Some(t) = b
                    .project3(p)
                    .filter(|t| t.x >= 0.0 && t.y >= 0.0 && t.x <= 1280.0 && t.y <= 720.0)
                else {
                    continue;
                };
                worst = worst.max(a.project3(p).map_or(f64::INFINITY, |q| (q - t).length()));
            }
        }
    }
    worst
}

#[test]
fn pinhole_solve_with_heights_writes_a_readable_camera() {
    let dir = tempfile::tempdir().unwrap();
    let cam = truth();
    let csv = write_csv(dir.path(), &cam, &world());
    let out = dir.path().join("cam.toml");
    let o = underlay(&[
        "calib",
        "solve",
        csv.to_str().unwrap(),
        "--model",
        "pinhole",
        "--image-size",
        "1280x720",
        "--unit",
        "mm",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["model"], "pinhole");
    assert_eq!(v["full_camera"], true);
    assert!(v["rms_px"].as_f64().unwrap() < 0.02, "{v}");
    let pos = &v["camera"]["position"];
    for (i, want) in [-20_000.0, -60_000.0, 25_000.0].iter().enumerate() {
        assert!((pos[i].as_f64().unwrap() - want).abs() < 100.0, "{pos}");
    }
    assert!(v["outlier_points"].as_array().unwrap().is_empty(), "{v}");
    // The file: a readable camera, the clicked heights.
    let text = std::fs::read_to_string(&out).unwrap();
    for want in [
        "[camera]",
        "matrix = [",
        "rotation = [",
        "position = [",
        "distortion = [",
        "z = 2440.0",
        "# full camera at (",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(!text.contains("homography"), "{text}");
    let fitted = Calibration::load(&out).unwrap();
    assert!(fitted.is_full_camera());
    let err = max_error(&fitted, &cam);
    assert!(err < 0.5, "{err} px over the picture");
    // The text report says where the camera is, with a z column.
    let o = underlay(&[
        "calib",
        "solve",
        csv.to_str().unwrap(),
        "--model",
        "pinhole",
        "--image-size",
        "1280x720",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("calibration: full camera at (") && t.contains("tilted"),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.trim_start().starts_with("point") && l.contains(" z ")),
        "{t}"
    );
    // calib check: every point, heights included, reprojects.
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("full camera at (") && t.contains("(52500, 3660, 2440) →"),
        "{t}"
    );
    let rms: f64 = t
        .lines()
        .find_map(|l| l.strip_prefix("RMS "))
        .and_then(|l| l.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap();
    assert!(rms < 0.05, "{t}");
}

/// Points with heights given to a floor-only model are an error naming
/// the lines and `--model pinhole`; a floor calibration checked against
/// them says it maps only the floor.
#[test]
fn heights_need_the_pinhole_model_and_a_full_camera() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_csv(dir.path(), &truth(), &world());
    for model in ["homography", "radial"] {
        let o = underlay(&["calib", "solve", csv.to_str().unwrap(), "--model", model]);
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(
            e.contains("6 point(s) are above the floor")
                && e.contains("line 38, 39")
                && e.contains("--model pinhole"),
            "{e}"
        );
    }
    let floor = dir.path().join("floor.toml");
    std::fs::write(
        &floor,
        "homography = [[0.01, 0.0, 640.0], [0.0, -0.01, 360.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        floor.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("calibration: floor only"), "{t}");
    assert!(
        t.contains("above the floor: not mapped") && t.contains("6 points above the floor are not checked"),
        "{t}"
    );
}

/// A camera written by hand (rvec and tvec, as OpenCV gives them) is a
/// calibration: `calib check` maps points at heights through it.
#[test]
fn a_hand_written_camera_is_a_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let cal = dir.path().join("cam.toml");
    std::fs::write(
        &cal,
        "image_size = [1280, 720]\n\n[camera]\nmatrix = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]]\n\
         distortion = [-0.1, 0.01, 0.0, 0.0, 0.0]\nrvec = [2.0, 0.0, 0.0]\ntvec = [0.0, 0.0, 9000.0]\n",
    )
    .unwrap();
    let cam = Calibration::load(&cal).unwrap();
    let pts: Vec<[f64; 3]> = vec![[0.0, 0.0, 0.0], [1000.0, 500.0, 0.0], [-500.0, 1000.0, 1500.0]];
    let csv = write_csv(dir.path(), &cam, &pts);
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        cal.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["full_camera"], true);
    assert!(v["max_px"].as_f64().unwrap() < 0.01, "{v}");
    assert!(
        (v["camera"]["heading_deg"].as_f64().unwrap() - 90.0).abs() < 1e-6,
        "{v}"
    );
    assert_eq!(v["residuals"][2]["z"], 1500.0);
    // Both a homography and a camera: refused, naming the file.
    std::fs::write(
        &cal,
        "homography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n[camera]\n\
         matrix = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]]\nrvec = [2.0, 0.0, 0.0]\n\
         tvec = [0.0, 0.0, 9000.0]\n",
    )
    .unwrap();
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        cal.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("cam.toml") && e.contains("not both"), "{e}");
}

/// Degenerate input to the pinhole model: a clear error, no panic.
#[test]
fn degenerate_pinhole_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // The floor straight from above: the focal length cannot be told from
    // the camera's height without points at heights.
    let k = [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]];
    let (r, t) = look_at([0.0, 0.0, 120_000.0], [0.0, 0.0, 0.0]).unwrap();
    let down = Calibration::from_camera(&k, &[], &r, t).unwrap();
    let floor: Vec<[f64; 3]> = world().into_iter().filter(|p| p[2] == 0.0).collect();
    let csv = write_csv(dir.path(), &down, &floor);
    let o = underlay(&[
        "calib",
        "solve",
        csv.to_str().unwrap(),
        "--model",
        "pinhole",
        "--image-size",
        "1280x720",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("focal length") && e.contains("z column"), "{e}");
    // Too few points.
    let csv = write_csv(dir.path(), &truth(), &world()[..5]);
    let o = underlay(&["calib", "solve", csv.to_str().unwrap(), "--model", "pinhole"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the pinhole model needs at least 6 points, got 5"),
        "{}",
        stderr(&o)
    );
    // Points on one line (the halfway line).
    let line: Vec<[f64; 3]> = (0..7)
        .map(|i| [0.0, -30_000.0 + 10_000.0 * f64::from(i), 0.0])
        .collect();
    let csv = write_csv(dir.path(), &truth(), &line);
    let o = underlay(&["calib", "solve", csv.to_str().unwrap(), "--model", "pinhole"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("one line"), "{}", stderr(&o));
}
