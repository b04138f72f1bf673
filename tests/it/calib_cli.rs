//! `underlay calib solve` run as a real binary on generated points files.

use std::path::{Path, PathBuf};
use std::process::Output;

use underlay::calib::synthetic::{ViewSpec, grid, random_view, rms_mapping_error};
use underlay::calib::{Calibration, Correspondence, presets};
use underlay::log::Vec2;

use crate::util::{stderr, stdout};

fn underlay(args: &[&str]) -> Output {
    crate::util::run(args)
}

/// Writes points as a clicked-points file: a comment, a header with a name
/// column, then one line per point (point i is on line i + 3).
fn write_csv(dir: &Path, points: &[Correspondence]) -> PathBuf {
    let mut s = String::from("# clicked in the viewer\nname,u,v,x,y\n");
    for (i, p) in points.iter().enumerate() {
        s.push_str(&format!(
            "p{i},{},{},{},{}\n",
            p.image.x, p.image.y, p.world.x, p.world.y
        ));
    }
    let path = dir.join("points.csv");
    std::fs::write(&path, s).unwrap();
    path
}

fn field(n: usize) -> Vec<Vec2> {
    presets::ssl_division_a()
        .points
        .iter()
        .take(n)
        .map(|p| p.pos)
        .collect()
}

fn view(k1: f64, noise: f64, seed: u64, n: usize) -> underlay::calib::synthetic::View {
    random_view(
        &ViewSpec {
            k1,
            noise_px: noise,
            seed,
            ..ViewSpec::default()
        },
        &field(n),
    )
    .expect("a synthetic view")
}

#[test]
fn text_report_names_the_mislabelled_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = view(0.0, 0.5, 5, 20);
    v.points[7].world = v.points[7].world + Vec2::new(600.0, 300.0);
    let csv = write_csv(dir.path(), &v.points);
    let o = underlay(&["calib", "solve", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("model: homography (method lsq), 20 points, 20 used"),
        "{out}"
    );
    assert!(out.contains("leave-one-out rms:"), "{out}");
    assert!(out.contains("outliers (1 flagged"), "{out}");
    let x = v.points[7].world.x;
    assert!(
        out.contains("point 7 (line 10): image (") && out.contains(&format!("world ({x}, ")),
        "{out}"
    );
    // One table row per point.
    assert_eq!(
        out.lines().filter(|l| l.trim_end().ends_with("outlier")).count(),
        1,
        "{out}"
    );
}

#[test]
fn json_report_and_calibration_file_for_a_distorted_camera() {
    let dir = tempfile::tempdir().unwrap();
    let v = view(-0.3, 1.0, 11, 25);
    let csv = write_csv(dir.path(), &v.points);
    let out_path = dir.path().join("calib.toml");
    let o = underlay(&[
        "calib",
        "solve",
        csv.to_str().unwrap(),
        "--model",
        "radial",
        "--image-size",
        "1280x720",
        "--json",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    assert_eq!(j["model"], "radial");
    assert_eq!(j["residuals_px"].as_array().unwrap().len(), 25);
    assert_eq!(j["outliers"].as_array().unwrap().len(), 0);
    assert_eq!(j["lines"][0], 3);
    let rms = j["rms_px"].as_f64().unwrap();
    let loo = j["loo_rms_px"].as_f64().unwrap();
    assert!(rms < 1.2 && loo > rms && loo < 2.0, "rms {rms}, loo {loo}");
    // The written file is a calibration sessions can load, close to the truth.
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(text.starts_with("# underlay calibration: radial model"), "{text}");
    let c: Calibration = toml::from_str(&text).unwrap();
    assert!(c.distortion().is_some());
    assert_eq!(c.image_size(), Some([1280, 720]));
    let err = rms_mapping_error(&c, &v.truth, &grid(Vec2::new(12000.0, 9000.0), 13, 10));
    assert!(err < 1.0, "{err}");
    // The plain homography on the same points is far worse.
    let o = underlay(&["calib", "solve", csv.to_str().unwrap(), "--json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(j["rms_px"].as_f64().unwrap() > 3.0 * rms, "{j}");
}

#[test]
fn robust_method_leaves_the_bad_point_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = view(0.0, 0.5, 8, 20);
    v.points[12].world = v.points[3].world;
    v.points[3].world = Vec2::new(-1234.0, 2345.0);
    let csv = write_csv(dir.path(), &v.points);
    let o = underlay(&[
        "calib",
        "solve",
        csv.to_str().unwrap(),
        "--method",
        "lmeds",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["outliers"], serde_json::json!([3, 12]), "{j}");
    assert_eq!(j["excluded"], serde_json::json!([3, 12]));
    assert_eq!(j["used"], 18);
    assert!(j["rms_px"].as_f64().unwrap() < 1.0);
}

fn fails_with(csv_text: &str, extra: &[&str], want: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.csv");
    std::fs::write(&path, csv_text).unwrap();
    let mut args = vec!["calib", "solve", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = underlay(&args);
    assert!(!o.status.success(), "should fail: {csv_text}");
    let e = stderr(&o);
    for w in want {
        assert!(e.contains(w), "missing `{w}` in: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_points_files_are_clear_errors() {
    let good = "u,v,x,y\n100,100,0,0\n300,110,1000,0\n310,300,1000,1000\n90,290,0,1000\n";
    fails_with(
        "u,v,x,y\n1,2,3,4\n5,6,7\n",
        &[],
        &["points.csv", "line 3", "expected 4"],
    );
    fails_with("u,v,x,y\n1,2,3,zz\n", &[], &["line 2, column y", "zz"]);
    fails_with("x,y\n1,2\n", &[], &["line 1", "u,v,x,y"]);
    fails_with("", &[], &["empty"]);
    fails_with(
        "u,v,x,y\n1,2,3,4\n5,6,7,8\n9,10,11,12\n",
        &[],
        &["at least 4 points, got 3"],
    );
    fails_with(good, &["--model", "radial"], &["at least 6 points, got 4"]);
    fails_with(
        "u,v,x,y\n100,100,0,0\n300,110,1000,0\n310,300,1000,0\n90,290,0,1000\n",
        &[],
        &["point 1 (line 3) and point 2 (line 4)", "same world"],
    );
    fails_with(
        "u,v,x,y\n100,100,0,0\n200,110,1000,0\n300,120,2000,0\n400,130,3000,0\n500,140,4000,0\n",
        &[],
        &["one line"],
    );
    fails_with(good, &["--ransac-threshold=-1"], &["ransac-threshold"]);
    fails_with(good, &["--ransac-threshold", "nan"], &["ransac-threshold"]);
    // Not text at all.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("points.csv");
    std::fs::write(&bin, [0xffu8, 0xfe, 0x00, 0x12, 0x80]).unwrap();
    let o = underlay(&["calib", "solve", bin.to_str().unwrap()]);
    assert!(
        !o.status.success() && stderr(&o).contains("not UTF-8"),
        "{}",
        stderr(&o)
    );
    let o = underlay(&["calib", "solve", "/nonexistent/points.csv"]);
    assert!(!o.status.success() && stderr(&o).contains("/nonexistent/points.csv"));
    let o = underlay(&["calib", "solve", "x.csv", "--image-size", "12"]);
    assert!(!o.status.success() && stderr(&o).contains("WIDTHxHEIGHT"));
}

#[test]
fn a_valid_minimal_file_fits_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.csv");
    // A right-handed world seen from above: x to the right, y up in the image.
    std::fs::write(
        &path,
        "u,v,x,y\n100,400,0,0\n500,400,1000,0\n480,100,1000,1000\n120,100,0,1000\n",
    )
    .unwrap();
    let out = dir.path().join("c.toml");
    let o = underlay(&[
        "calib",
        "solve",
        path.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains("rms: 0.000 px") && s.contains("leave-one-out rms: -"),
        "{s}"
    );
    assert!(s.contains("too few to check for outliers"), "{s}");
    let c: Calibration = toml::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let p = c.project(Vec2::new(1000.0, 1000.0)).unwrap();
    assert!((p - Vec2::new(480.0, 100.0)).length() < 1e-6, "{p:?}");
    // The same points mirrored (y down, a left-handed frame): accepted,
    // with a one-line note (the old flag still runs).
    std::fs::write(
        &path,
        "u,v,x,y\n100,400,0,0\n500,400,1000,0\n480,100,1000,-1000\n120,100,0,-1000\n",
    )
    .unwrap();
    let o = underlay(&["calib", "solve", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("note: the world frame is left-handed"),
        "{}",
        stdout(&o)
    );
    let o = underlay(&["calib", "solve", path.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["left_handed"], true, "{v}");
    let o = underlay(&["calib", "solve", path.to_str().unwrap(), "--allow-mirrored"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn real_lens_distortion_needs_the_radial_model() {
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/ssl-2008-overhead-points.csv"
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["calib", "solve", csv, "--json", "--image-size", "780x580"];
        args.extend_from_slice(extra);
        let o = underlay(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let plain = run(&[]);
    let radial = run(&["--model", "radial"]);
    let (h, r) = (
        plain["rms_px"].as_f64().unwrap(),
        radial["rms_px"].as_f64().unwrap(),
    );
    // Clicked by eye to about a pixel: the radial model fits to that, the homography cannot.
    assert!(r < 2.0 && h > 3.0 * r, "radial {r} px, homography {h} px");
    let warnings = plain["warnings"].to_string();
    assert!(warnings.contains("try the radial model"), "{warnings}");
    let d = &radial["distortion"];
    assert!(d["k1"].as_f64().unwrap() < 0.0, "barrel distortion: {d}");
}

/// `calib check`: a calibration's residuals on other labelled points, as
/// text and JSON; a point behind the camera is counted, not an error.
#[test]
fn check_reports_residuals_on_held_back_points() {
    let dir = tempfile::tempdir().unwrap();
    let calib = dir.path().join("c.toml");
    std::fs::write(
        &calib,
        "homography = [[2.0, 0.0, 10.0], [0.0, 2.0, 20.0], [0.0, 0.0, 1.0]]\n",
    )
    .unwrap();
    let pts = [
        Correspondence {
            image: Vec2::new(10.0, 20.0),
            world: Vec2::new(0.0, 0.0),
        },
        Correspondence {
            image: Vec2::new(30.0, 20.0),
            world: Vec2::new(10.0, 0.0),
        },
        Correspondence {
            image: Vec2::new(10.0, 40.0),
            world: Vec2::new(0.0, 10.0),
        },
        // Off by (3, 4): 5 px.
        Correspondence {
            image: Vec2::new(33.0, 44.0),
            world: Vec2::new(10.0, 10.0),
        },
    ];
    let csv = write_csv(dir.path(), &pts);
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        calib.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!((v["rms_px"].as_f64().unwrap() - 2.5).abs() < 1e-9, "{v}");
    assert!((v["max_px"].as_f64().unwrap() - 5.0).abs() < 1e-9);
    assert_eq!(v["residuals"][3]["line"], 6);
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        calib.to_str().unwrap(),
    ]);
    assert!(
        stdout(&o).contains("RMS 2.50 px, largest 5.00 px"),
        "{}",
        stdout(&o)
    );
    // A missing calibration is named.
    let o = underlay(&[
        "calib",
        "check",
        csv.to_str().unwrap(),
        "--calib",
        "/nonexistent/c.toml",
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("/nonexistent/c.toml"),
        "{}",
        stderr(&o)
    );
}
