//! Calibration and the floor mask on real labelled frames (the shared
//! material's `testdata/fields/`, skipped when it is not there): one row
//! per frame, as docs/PERFORMANCE.md records them. See
//! [`underlay::eval`] for what is measured.
//!
//! Run: `cargo bench --bench real_cameras` (`-- --draws N`, default 8;
//! `-- --out DIR` also writes each frame's picture and truth, its tinted
//! masks and snapped lines; `UNDERLAY_EVAL_K=0.6` bends the lens more,
//! `UNDERLAY_EVAL_LINES=1` prints each snap's verdict line by line).

use std::path::PathBuf;

use underlay::calib::refine::RefineOptions;
use underlay::eval::{self, SnapTrial};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    // `cargo test --all-targets` runs benches too, unoptimised and without
    // `--bench`: the harness's test (`tests/it/real_cameras.rs`) is that run.
    if !args.iter().any(|a| a == "--bench") {
        println!("real_cameras: a bench (cargo bench --bench real_cameras); skipped as a test");
        return;
    }
    let draws: u64 = arg("--draws").and_then(|v| v.parse().ok()).unwrap_or(8);
    let out = arg("--out").map(PathBuf::from);
    let only = arg("--only");
    let Some(dir) = eval::fields_dir() else {
        println!("real_cameras: no testdata/fields beside the project; skipped");
        return;
    };
    let frames = match eval::frames(&dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("real_cameras: {e}");
            std::process::exit(1);
        }
    };
    if args.iter().any(|a| a == "--no-clicks") {
        no_clicks(&frames, only.as_deref(), out.as_deref());
        return;
    }
    println!(
        "| frame | tolerance | truth to paint | start (mean px) | snapped (mean px) | within | trusted | trusted & wrong | snap s | mask kept / above, uncut | cut to the truth's field |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (f, img) in &frames {
        if only.as_deref().is_some_and(|o| !f.name.contains(o)) {
            continue;
        }
        let tol = eval::tolerance_px(f.size);
        let reference = eval::reference(f, img);
        let truth_note = match reference.given_off_px {
            Some(o) if reference.replaced => format!("{o:.1} px (replaced)"),
            Some(o) => format!("{o:.1} px"),
            None => "not snapped".to_owned(),
        };
        if let Some((_, r)) = &reference.snap {
            eprintln!(
                "  the set's truth snapped: trusted {}; {}",
                r.trusted,
                r.warnings.first().map_or("", String::as_str)
            );
            lines(r);
        }
        let trials = eval::snap_trials(&reference.frame, img, draws, &RefineOptions::default());
        let plain = eval::default_mask(img, None).map(|m| eval::score_mask(f, &m));
        let cut = eval::default_mask(img, Some((&f.truth, &f.preset))).map(|m| eval::score_mask(f, &m));
        let fmt_mask = |m: &Result<eval::MaskScore, String>| match m {
            Ok(s) => format!("{:.1} % / {:.1} %", 100.0 * s.pitch_kept, 100.0 * s.above_floor),
            Err(e) => e.clone(),
        };
        let range = |v: Vec<f64>| {
            if v.is_empty() {
                return "–".to_owned();
            }
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            format!("{:.1} ({lo:.1}–{hi:.1})", s[s.len() / 2])
        };
        let starts = range(trials.iter().filter_map(|t| t.start.map(|a| a.mean_px)).collect());
        let snapped = range(
            trials
                .iter()
                .filter_map(|t| t.result.as_ref().ok().map(|(a, _)| a.mean_px))
                .collect(),
        );
        let within = trials.iter().filter(|t| t.within(tol)).count();
        let trusted = trials.iter().filter(|t| t.trusted()).count();
        let wrong = trials.iter().filter(|t| t.trusted() && !t.within(tol)).count();
        let secs = range(trials.iter().map(|t| t.seconds).collect());
        println!(
            "| {} | {tol:.1} px | {truth_note} | {starts} | {snapped} | {within}/{n} | {trusted}/{n} | {wrong} | {secs} | {} | {} |",
            f.name,
            fmt_mask(&plain),
            fmt_mask(&cut),
            n = trials.len()
        );
        if let Some(r) = eval::label_rms(f, &f.truth) {
            eprintln!("  the truth: its labels' RMS distance to their lines {r:.2} px");
        }
        for t in &trials {
            detail(t);
            if let Some((_, Some(c))) = &t.calibrations
                && let Some(r) = eval::label_rms(f, c)
            {
                eprintln!("    the labels' RMS distance to the snapped lines {r:.2} px");
            }
        }
        if let Some(dir) = &out {
            let _ = std::fs::create_dir_all(dir);
            let stem = f.name.replace(['/', '.'], "_");
            let _ = underlay::video::still::save_rgb(&dir.join(format!("{stem}.png")), img);
            let truth = f
                .truth
                .clone()
                .with_world_unit(f.preset.unit)
                .with_field(underlay::calib::presets::FieldSpec::Preset(f.preset.spec()));
            let _ = truth.save(
                &dir.join(format!("{stem}_truth.toml")),
                "# the frame's truth (real_cameras bench)\n",
            );
            for t in trials.iter().take(2) {
                let mut pic = img.clone();
                eval::draw_lines(&mut pic, &f.truth, &f.preset, [255, 128, 0]);
                eval::draw_lines(&mut pic, &reference.frame.truth, &f.preset, [255, 255, 0]);
                if let Some((start, snapped)) = &t.calibrations {
                    eval::draw_lines(&mut pic, start, &f.preset, [255, 0, 255]);
                    if let Some(s) = snapped {
                        eval::draw_lines(&mut pic, s, &f.preset, [0, 255, 255]);
                    }
                }
                let _ =
                    underlay::video::still::save_rgb(&dir.join(format!("{stem}_snap{}.png", t.seed)), &pic);
            }
            for (tag, m) in [
                ("uncut", eval::default_mask(img, None)),
                ("cut", eval::default_mask(img, Some((&f.truth, &f.preset)))),
            ] {
                if let Ok(m) = m {
                    let tinted = eval::tint(img, &m, f);
                    let _ = underlay::video::still::save_rgb(
                        &dir.join(format!("{stem}_mask_{tag}.png")),
                        &tinted,
                    );
                }
            }
        }
    }
}

/// Calibration with no clicks ([`underlay::calib::refine::search`]): each
/// frame under each hint, the result's mean distance from the truth over
/// the pitch in view and whether it is trusted.
fn no_clicks(
    frames: &[(eval::RealFrame, underlay::image::RgbImage)],
    only: Option<&str>,
    out: Option<&std::path::Path>,
) {
    use underlay::calib::refine::search::{Hint, find};
    let hints = [
        Hint::Side,
        Hint::BehindLeftGoal,
        Hint::BehindRightGoal,
        Hint::Above,
    ];
    println!("| frame | tolerance | side | behind left goal | behind right goal | above | s per hint |");
    println!("|---|---|---|---|---|---|---|");
    for (f, img) in frames {
        if only.is_some_and(|o| !f.name.contains(o)) {
            continue;
        }
        let tol = eval::tolerance_px(f.size);
        let mut cells = Vec::new();
        let t0 = std::time::Instant::now();
        for hint in hints {
            let cell = match find(img, &f.preset, hint, &RefineOptions::default()) {
                Ok(r) => {
                    eprintln!(
                        "  {} {hint:?}: trusted {}, spread {:?}, found {:.2}, {}",
                        f.name,
                        r.report.trusted,
                        r.report.verdict.floor_spread,
                        r.report.verdict.found_share,
                        r.report.verdict.reasons.join("; ")
                    );
                    lines(&r.report);
                    if let Some(dir) = out {
                        let _ = std::fs::create_dir_all(dir);
                        let mut pic = img.clone();
                        eval::draw_lines(&mut pic, &f.truth, &f.preset, [255, 128, 0]);
                        eval::draw_lines(&mut pic, &r.calibration, &f.preset, [0, 255, 255]);
                        let stem = f.name.replace(['/', '.'], "_");
                        let _ = underlay::video::still::save_rgb(
                            &dir.join(format!("{stem}_noclick_{hint:?}.png")),
                            &pic,
                        );
                    }
                    let apart = underlay::calib::compare::lines_apart(
                        &f.truth,
                        &r.calibration,
                        &f.preset.lines,
                        f.size,
                    );
                    let mark = match (r.report.trusted, apart.is_some_and(|a| a.mean_px <= tol)) {
                        (true, true) => "trusted, within",
                        (true, false) => "TRUSTED, WRONG",
                        (false, true) => "within, not trusted",
                        (false, false) => "not trusted",
                    };
                    // The field is symmetric: the same lines under a mirrored or
                    // turned labelling.
                    let twin = [(-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0)]
                        .iter()
                        .filter_map(|&(sx, sy)| {
                            let h = *r.calibration.homography();
                            let m = [
                                [h[0][0] * sx, h[0][1] * sy, h[0][2]],
                                [h[1][0] * sx, h[1][1] * sy, h[1][2]],
                                [h[2][0] * sx, h[2][1] * sy, h[2][2]],
                            ];
                            let c = underlay::calib::Calibration::from_parts(
                                m,
                                r.calibration.distortion().copied(),
                            )
                            .ok()?;
                            let a =
                                underlay::calib::compare::lines_apart(&f.truth, &c, &f.preset.lines, f.size)?;
                            Some((a.mean_px, sx, sy))
                        })
                        .min_by(|a, b| a.0.total_cmp(&b.0));
                    if let Some((d, sx, sy)) = twin {
                        eprintln!(
                            "  {} {hint:?}: mirrored ({sx}, {sy}) it is {d:.1} px from the truth",
                            f.name
                        );
                    }
                    match apart {
                        Some(a) => format!("{:.0} px ({mark})", a.mean_px),
                        None => format!("pitch out of view ({mark})"),
                    }
                }
                Err(e) => {
                    eprintln!("  {} {hint:?}: {e}", f.name);
                    "failed".to_owned()
                }
            };
            cells.push(cell);
        }
        println!(
            "| {} | {tol:.1} px | {} | {:.1} |",
            f.name,
            cells.join(" | "),
            t0.elapsed().as_secs_f64() / hints.len() as f64
        );
    }
}

fn detail(t: &SnapTrial) {
    if let Ok((_, r)) = &t.result {
        lines(r);
    }
    match &t.result {
        Ok((a, r)) => eprintln!(
            "  seed {}: start {:.1} px → {:.1} px (max {:.1}); report RMS {:.2} px, coverage {:.0} %, trusted {}; {}",
            t.seed,
            t.start.map_or(f64::NAN, |s| s.mean_px),
            a.mean_px,
            a.max_px,
            r.rms_px,
            100.0 * r.coverage,
            r.trusted,
            r.verdict.reasons.join("; ")
        ),
        Err(e) => eprintln!("  seed {}: {e}", t.seed),
    }
}

/// With `UNDERLAY_EVAL_LINES` set: the verdict line by line.
fn lines(r: &underlay::calib::refine::RefineReport) {
    if std::env::var_os("UNDERLAY_EVAL_LINES").is_none() {
        return;
    }
    for l in &r.verdict.lines {
        eprintln!(
            "      {:<60} in view {:>4} ({:>5.0} px) found {:>3.0} % off {:>3.0} % {}",
            l.line,
            l.in_view,
            l.extent_px,
            100.0 * l.found_share,
            100.0 * l.off_share,
            l.against.as_deref().unwrap_or("")
        );
    }
}
