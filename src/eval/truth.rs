//! The real labelled frames of `testdata/fields/` (see its README) with
//! their true calibrations, in a football preset's world (mm, origin at
//! the centre mark, x along the touchlines).
//!
//! The sets give their truth three ways, each converted here:
//! - a pinhole camera `[u, v, f, rx, ry, rz, Cx, Cy, Cz]` over a pitch in
//!   metres with its origin at a corner (an image point is `K·R·(X − C)`):
//!   the floor's homography is `K·[r₁ r₂ −R·C]`;
//! - a homography from a template in yards (`world_m = 0.9144·[x, 74 − y]`);
//! - hand-clicked pixels each on a named line (SoccerNet's names): the
//!   truth is the radial model fitted to the distances across those lines,
//!   started from a homography through the named lines' crossings.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::calib::camera::rodrigues;
use crate::calib::fit::lines::{LineSample, fit_to_lines};
use crate::calib::presets::{self, FieldLine, FieldPreset};
use crate::calib::{Calibration, Correspondence, FitOptions, Mat3, Model, fit};
use crate::geom::Vec2;
use crate::geom::mat3::mul;

/// A hand-clicked pixel on a named line.
#[derive(Clone, Debug)]
pub struct Label {
    pub pixel: Vec2,
    /// The line's name in the set (SoccerNet's).
    pub name: String,
    /// The line, in the preset's world.
    pub line: FieldLine,
}

/// A real frame and its truth.
#[derive(Clone, Debug)]
pub struct RealFrame {
    /// `set/file`, e.g. `broadcast-ptz/0623.jpg`.
    pub name: String,
    pub image: PathBuf,
    pub size: [u32; 2],
    /// The true calibration, in `preset`'s world.
    pub truth: Calibration,
    /// The pitch, at the size the truth's pitch model has.
    pub preset: FieldPreset,
    /// Point-on-line labels, where the set gives them.
    pub labels: Vec<Label>,
}

/// `testdata/fields` of the shared material beside the project, when it
/// is there (`UNDERLAY_FIELDS` names another place).
pub fn fields_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("UNDERLAY_FIELDS") {
        return Some(PathBuf::from(d));
    }
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/testdata/fields");
    d.join("README.md").is_file().then_some(d)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn numbers(v: &Value, what: &str) -> Result<Vec<f64>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what}: not an array"))?
        .iter()
        .map(|x| x.as_f64().ok_or_else(|| format!("{what}: not a number")))
        .collect()
}

/// The world (mm, centred) → corner-origin metres of a `length × width` m
/// pitch.
fn centred_to_corner(length: f64, width: f64) -> Mat3 {
    [
        [1e-3, 0.0, length / 2.0],
        [0.0, 1e-3, width / 2.0],
        [0.0, 0.0, 1.0],
    ]
}

/// The floor homography of a pinhole camera `[u, v, f, rx, ry, rz, Cx,
/// Cy, Cz]` (corner-origin metres → pixels).
fn pinhole(cam: &[f64]) -> Result<Mat3, String> {
    let [u, v, f, rx, ry, rz, cx, cy, cz] = cam else {
        return Err(format!("a camera has 9 numbers, not {}", cam.len()));
    };
    let r = rodrigues([*rx, *ry, *rz]);
    let c = [*cx, *cy, *cz];
    let t: Vec<f64> = (0..3)
        .map(|i| -(0..3).map(|j| r[i][j] * c[j]).sum::<f64>())
        .collect();
    let rt = [
        [r[0][0], r[0][1], t[0]],
        [r[1][0], r[1][1], t[1]],
        [r[2][0], r[2][1], t[2]],
    ];
    let k = [[*f, 0.0, *u], [0.0, *f, *v], [0.0, 0.0, 1.0]];
    Ok(mul(&k, &rt))
}

/// Pitch length and width (m) of a set's model points (corner origin).
fn pitch_size(model: &Value) -> Result<(f64, f64), String> {
    let pts = model["points"]
        .as_array()
        .ok_or("the pitch model has no points")?;
    let (mut l, mut w) = (0.0f64, 0.0f64);
    for p in pts {
        let p = numbers(p, "a pitch point")?;
        l = l.max(p[0]);
        w = w.max(p[1]);
    }
    Ok((l, w))
}

fn football_of(length: f64, width: f64) -> Result<FieldPreset, String> {
    if (length - 105.0).abs() < 0.01 && (width - 68.0).abs() < 0.01 {
        return Ok(presets::football());
    }
    presets::football_sized(length, width).ok_or_else(|| format!("a {length} × {width} m pitch"))
}

fn frame(dir: &Path, set: &str, file: &str, h: Mat3, preset: FieldPreset) -> Result<RealFrame, String> {
    let image = dir.join(set).join(file);
    let truth = Calibration::from_homography(h)
        .map_err(|e| format!("{set}/{file}: {e}"))?
        .with_image_size(1280, 720);
    Ok(RealFrame {
        name: format!("{set}/{file}"),
        image,
        size: [1280, 720],
        truth,
        preset,
        labels: Vec::new(),
    })
}

/// Every frame of the sets, in a fixed order.
pub fn load(dir: &Path) -> Result<Vec<RealFrame>, String> {
    let mut out = vec![elevated(dir)?];
    // World Cup 2014: 16 by its template homography.
    let set = "broadcast-wc2014";
    let g = read_json(&dir.join(set).join("gt_homography.json"))?;
    let rows: Vec<Vec<f64>> = g["H_template_to_image"]
        .as_array()
        .ok_or("16.jpg: no homography")?
        .iter()
        .map(|r| numbers(r, "16.jpg's homography"))
        .collect::<Result<_, _>>()?;
    let ht: Mat3 = std::array::from_fn(|i| {
        std::array::from_fn(|j| rows.get(i).and_then(|r| r.get(j)).copied().unwrap_or(0.0))
    });
    let (l, w) = (105.000552, 68.003928);
    let yd = 1.0 / 0.9144;
    let corner_to_template = [[yd, 0.0, 0.0], [0.0, -yd, 74.0], [0.0, 0.0, 1.0]];
    let h = mul(&ht, &mul(&corner_to_template, &centred_to_corner(l, w)));
    out.push(frame(dir, set, "16.jpg", h, presets::football())?);
    let c = read_json(&dir.join(set).join("gt_cameras_17_79.json"))?;
    let (l, w) = pitch_size(&c["pitch_model"])?;
    for f in ["17.jpg", "79.jpg"] {
        let cam = numbers(&c["frames"][f]["camera"], f)?;
        let h = mul(&pinhole(&cam)?, &centred_to_corner(l, w));
        out.push(frame(dir, set, f, h, football_of(l, w)?)?);
    }
    let set = "broadcast-ptz";
    let c = read_json(&dir.join(set).join("gt_cameras.json"))?;
    let (l, w) = pitch_size(&c["pitch_model"])?;
    for f in ["0500.jpg", "0623.jpg", "1590.jpg"] {
        let cam = numbers(&c["frames"][f]["camera"], f)?;
        let h = mul(&pinhole(&cam)?, &centred_to_corner(l, w));
        out.push(frame(dir, set, f, h, football_of(l, w)?)?);
    }
    Ok(out)
}

/// A SoccerNet line name as a line of a 105 × 68 m pitch (mm, x towards
/// the "right" goal, y towards the "bottom" touchline).
pub fn soccernet_line(name: &str) -> Option<FieldLine> {
    let (hl, hw) = (52_500.0, 34_000.0);
    let seg = |x0: f64, y0: f64, x1: f64, y1: f64| FieldLine::Segment {
        a: Vec2::new(x0, y0),
        b: Vec2::new(x1, y1),
    };
    let (big, small): (f64, f64) = (16_500.0, 5_500.0);
    let (big_w, small_w) = (3_660.0 + 16_500.0, 3_660.0 + 5_500.0);
    let r: f64 = 9_150.0;
    // The penalty arc outside the box: |x − mark| > box depth − 11 m.
    let arc = |sx: f64| {
        let half = ((big - 11_000.0) / r).acos();
        let toward = if sx > 0.0 { std::f64::consts::PI } else { 0.0 };
        FieldLine::Arc {
            center: Vec2::new(sx * (hl - 11_000.0), 0.0),
            radius: r,
            start: toward - half,
            end: toward + half,
        }
    };
    let (side, rest) = if let Some(r) = name.strip_suffix(" left") {
        (-1.0, r)
    } else if let Some(r) = name.strip_suffix(" right") {
        (1.0, r)
    } else {
        (0.0, name)
    };
    Some(match name {
        "Side line top" => seg(-hl, -hw, hl, -hw),
        "Side line bottom" => seg(-hl, hw, hl, hw),
        "Side line left" => seg(-hl, -hw, -hl, hw),
        "Side line right" => seg(hl, -hw, hl, hw),
        "Middle line" => seg(0.0, -hw, 0.0, hw),
        "Circle central" => FieldLine::Arc {
            center: Vec2::ZERO,
            radius: r,
            start: 0.0,
            end: std::f64::consts::TAU,
        },
        _ if rest == "Circle" => arc(side),
        _ => {
            // "Big rect. left main", "Small rect. right top", …
            let (kind, part) = name.rsplit_once(' ')?;
            let (size, s) = if let Some(k) = kind.strip_prefix("Big rect. ") {
                ((big, big_w), k)
            } else if let Some(k) = kind.strip_prefix("Small rect. ") {
                ((small, small_w), k)
            } else {
                return None;
            };
            let sx = match s {
                "left" => -1.0,
                "right" => 1.0,
                _ => return None,
            };
            let (x0, x1) = (sx * hl, sx * (hl - size.0));
            match part {
                "main" => seg(x1, -size.1, x1, size.1),
                "top" => seg(x0, -size.1, x1, -size.1),
                "bottom" => seg(x0, size.1, x1, size.1),
                _ => return None,
            }
        }
    })
}

/// The elevated training ground: its labels, and the radial model fitted
/// to them.
fn elevated(dir: &Path) -> Result<RealFrame, String> {
    let set = "elevated-training-pitch";
    let j = read_json(&dir.join(set).join("cam3_lines.json"))?;
    let size = numbers(&j["image_size"], "image_size")?;
    let size = [size[0] as u32, size[1] as u32];
    let mut labels = Vec::new();
    let lines = j["cam3_lines_full_static_calibration_py"]
        .as_object()
        .ok_or("cam3.jpg: no labels")?;
    for (name, pts) in lines {
        let line = soccernet_line(name).ok_or_else(|| format!("cam3.jpg: unknown line {name:?}"))?;
        for p in pts.as_array().ok_or("cam3.jpg: labels not an array")? {
            let (Some(x), Some(y)) = (p["x"].as_f64(), p["y"].as_f64()) else {
                return Err(format!("cam3.jpg: a label of {name} has no x and y"));
            };
            labels.push(Label {
                pixel: Vec2::new(x, y),
                name: name.clone(),
                line,
            });
        }
    }
    let truth = fit_labels(&labels, size)?;
    Ok(RealFrame {
        name: format!("{set}/cam3.jpg"),
        image: dir.join(set).join("cam3.jpg"),
        size,
        truth,
        preset: presets::football(),
        labels,
    })
}

/// A straight line through a line's labels, as `(point, direction)`.
fn image_line(labels: &[&Label]) -> Option<(Vec2, Vec2)> {
    if labels.len() < 2 {
        return None;
    }
    let n = labels.len() as f64;
    let c = labels.iter().fold(Vec2::ZERO, |a, l| a + l.pixel) * (1.0 / n);
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for l in labels {
        let d = l.pixel - c;
        sxx += d.x * d.x;
        sxy += d.x * d.y;
        syy += d.y * d.y;
    }
    let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    Some((c, Vec2::new(angle.cos(), angle.sin())))
}

/// The radial model through point-on-line labels: a homography through
/// the crossings of the straight lines, then rounds of pairing each label
/// with its line's nearest point and fitting across the lines.
pub fn fit_labels(labels: &[Label], size: [u32; 2]) -> Result<Calibration, String> {
    // Straight lines as (image line, world: x = c or y = c); labels of
    // two lines on one world line (both penalty areas' sides) together.
    let key = |l: &Label| match l.line {
        FieldLine::Segment { a, b } if (a.x - b.x).abs() < 1e-6 => Some((0, a.x.round() as i64)),
        FieldLine::Segment { a, .. } => Some((1, a.y.round() as i64)),
        FieldLine::Arc { .. } => None,
    };
    let mut keys: Vec<(i32, i64)> = labels.iter().filter_map(key).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut straight = Vec::new();
    for k in &keys {
        let of: Vec<&Label> = labels.iter().filter(|l| key(l) == Some(*k)).collect();
        if let (Some(img), FieldLine::Segment { a, b }) = (image_line(&of), of[0].line) {
            straight.push((img, a, b));
        }
    }
    let mut points = Vec::new();
    for (i, &((p, d), a, b)) in straight.iter().enumerate() {
        for &((q, e), c, dd) in &straight[i + 1..] {
            // One along x, the other along y.
            let vertical = |a: Vec2, b: Vec2| (a.x - b.x).abs() < 1e-6;
            let (x, y) = match (vertical(a, b), vertical(c, dd)) {
                (true, false) => (a.x, c.y),
                (false, true) => (c.x, a.y),
                _ => continue,
            };
            let den = d.cross(e);
            if den.abs() < 1e-6 {
                continue;
            }
            let t = (q - p).cross(e) / den;
            let px = p + d * t;
            if px.x.abs() < 4.0 * f64::from(size[0]) && px.y.abs() < 4.0 * f64::from(size[1]) {
                points.push(Correspondence {
                    image: px,
                    world: Vec2::new(x, y),
                });
            }
        }
    }
    let start = fit(
        &points,
        &FitOptions {
            image_size: Some(size),
            ..FitOptions::default()
        },
    )
    .map_err(|e| format!("the labels' crossings: {e}"))?
    .calibration;
    let mut calib = start;
    for round in 0..30 {
        let model = if round < 5 {
            Model::Homography
        } else {
            Model::Radial
        };
        let samples: Vec<LineSample> = labels
            .iter()
            .filter_map(|l| {
                let w = calib.unproject(l.pixel)?;
                let (world, tangent) = nearest_unbounded(&l.line, w)?;
                Some(LineSample {
                    image: l.pixel,
                    world,
                    tangent,
                    weight: 1.0,
                })
            })
            .collect();
        let (next, _) =
            fit_to_lines(&samples, &calib, model, size).map_err(|e| format!("the labels: {e}"))?;
        calib = next;
    }
    Ok(calib.with_image_size(size[0], size[1]))
}

/// The point of `line`, continued beyond its ends (a straight line, or the
/// whole circle of an arc), nearest to `p`, and the direction there: a
/// label near a short line's end still pairs with it.
fn nearest_unbounded(line: &FieldLine, p: Vec2) -> Option<(Vec2, Vec2)> {
    match *line {
        FieldLine::Segment { a, b } => {
            let d = crate::geom::vec2::unit(b - a);
            Some((a + d * (p - a).dot(d), d))
        }
        FieldLine::Arc { center, radius, .. } => {
            let v = p - center;
            let len = v.length();
            (len > 0.0).then(|| {
                let u = v * (1.0 / len);
                (center + u * radius, Vec2::new(-u.y, u.x))
            })
        }
    }
}
