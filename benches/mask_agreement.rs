//! Issue 48's quality bound: the floor mask of this build against another
//! build's (`--old BIN`: the one before the mask moved to the decoded
//! planes' 2×2 blocks), on every labelled frame of the shared material's
//! `testdata/fields` (uncut, and cut to the field through the frame's
//! truth; each also as a video carries it: 4:2:0, else lossless), the SSL
//! photo, every frame of the drone video and of the demo
//! — each made by both builds' `underlay mask`, the way a user makes one.
//! Per input: the share of pixels more than 2 px from the old mask's
//! boundary on which the masks agree ([`underlay::eval::agreement`]), the
//! worst frame's, and the floor each calls; for the demo also each one's
//! IoU with the demo's true floor.
//!
//! Run: `cargo bench --bench mask_agreement -- --old PATH/TO/OLD/underlay`
//! (`--keep DIR` keeps the masks and pictures to look at). Skipped
//! without `--old` or without the shared material.

use std::path::{Path, PathBuf};
use std::process::Command;

use underlay::eval::agreement::{Agreement, agreement};
use underlay::image::{FLOOR, MaskImage};
use underlay::video::Decoder;
use underlay::video::still::{load_mask, save_rgb};

/// The band around the old mask's boundary left out, in pixels.
const BAND: usize = 2;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if !args.iter().any(|a| a == "--bench") {
        println!(
            "mask_agreement: a bench (cargo bench --bench mask_agreement -- --old BIN); skipped as a test"
        );
        return;
    }
    let Some(old) = arg("--old").map(PathBuf::from) else {
        println!("mask_agreement: give the build to compare with: -- --old PATH/TO/underlay");
        return;
    };
    let new = PathBuf::from(env!("CARGO_BIN_EXE_underlay"));
    let Some(fields) = underlay::eval::fields_dir() else {
        println!("mask_agreement: no testdata/fields beside the project; skipped");
        return;
    };
    let shared = fields.parent().map(Path::to_path_buf).unwrap_or_default();
    let temp = tempfile::tempdir().expect("a temporary folder");
    let work = arg("--keep")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&work).expect("the work folder");
    println!(
        "| input | frames | agree > {BAND} px from the old boundary (all frames) | worst frame | floor old → new | IoU with the truth old → new |"
    );
    println!("|---|---|---|---|---|---|");
    let frames = underlay::eval::frames(&fields).unwrap_or_else(|e| {
        eprintln!("mask_agreement: {e}");
        std::process::exit(1);
    });
    for (f, img) in &frames {
        let stem = f.name.replace(['/', '.', ' ', '='], "_");
        let pic = work.join(format!("{stem}.png"));
        save_rgb(&pic, img).expect("the picture written");
        let truth = f
            .truth
            .clone()
            .with_world_unit(f.preset.unit)
            .with_field(underlay::calib::presets::FieldSpec::Preset(f.preset.spec()));
        let calib = work.join(format!("{stem}_truth.toml"));
        truth
            .save(&calib, "# the frame's truth (mask_agreement bench)\n")
            .expect("the truth written");
        // The still as a camera's video carries it: 4:2:0, lossless
        // otherwise (x264 at QP 0), so that chroma subsampling is the only
        // change.
        let video = work.join(format!("{stem}.mkv"));
        let o = Command::new("ffmpeg")
            .args(["-loglevel", "error", "-y", "-i"])
            .arg(&pic)
            .args(["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"])
            .arg(&video)
            .output()
            .expect("ffmpeg runs");
        assert!(
            o.status.success(),
            "ffmpeg: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        for (tag, extra) in [
            ("uncut", vec![]),
            ("cut", vec!["--calib".to_owned(), path(&calib)]),
        ] {
            for (kind, input) in [("", &pic), (", as video", &video)] {
                let masks = [&old, &new].map(|bin| {
                    let which = if *bin == old { "old" } else { "new" };
                    if kind.is_empty() {
                        let out = work.join(format!("{stem}_{tag}_{which}.png"));
                        mask(bin, input, &out, &extra);
                        vec![load_mask(&out).expect("a mask")]
                    } else {
                        let out = work.join(format!("{stem}_{tag}_video_{which}.mkv"));
                        mask(bin, input, &out, &extra);
                        read_masks(&out)
                    }
                });
                row(&format!("{} ({tag}{kind})", f.name), &masks[0], &masks[1], None);
            }
        }
    }
    let photo = shared.join("ssl-field-overhead-2008.jpg");
    if photo.exists() {
        let masks = [&old, &new].map(|bin| {
            let out = work.join(format!("ssl_{}.png", if *bin == old { "old" } else { "new" }));
            mask(bin, &photo, &out, &[]);
            vec![load_mask(&out).expect("a mask")]
        });
        row("SSL photo", &masks[0], &masks[1], None);
    }
    let drone = shared.join("pitch-drone-topdown.mp4");
    if drone.exists() {
        let masks = [&old, &new].map(|bin| {
            let out = work.join(format!("drone_{}.mkv", if *bin == old { "old" } else { "new" }));
            mask(bin, &drone, &out, &[]);
            read_masks(&out)
        });
        row("drone video", &masks[0], &masks[1], None);
    }
    // The demo (made by this build; both builds make the same).
    let demo = work.join("demo");
    let o = Command::new(&new)
        .args(["demo", "--no-view", "--out", &path(&demo)])
        .output()
        .expect("underlay demo runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let video = demo.join("video.mp4");
    let masks = [&old, &new].map(|bin| {
        let out = work.join(format!("demo_{}.mkv", if *bin == old { "old" } else { "new" }));
        mask(bin, &video, &out, &[]);
        read_masks(&out)
    });
    let truth = read_masks(&demo.join("truth/masks.mkv"));
    row("demo", &masks[0], &masks[1], Some(&truth));
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Runs `bin mask input -o out extra…`.
fn mask(bin: &Path, input: &Path, out: &Path, extra: &[String]) {
    let o = Command::new(bin)
        .arg("mask")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .expect("underlay mask runs");
    assert!(
        o.status.success(),
        "{} mask {}: {}",
        bin.display(),
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every frame of a mask video.
fn read_masks(p: &Path) -> Vec<MaskImage> {
    let mut d = Decoder::open(p).expect("a mask video");
    let mut out = Vec::new();
    let mut m = MaskImage::zeros((0, 0));
    while d.read_gray_into(&mut m).expect("a mask frame").is_some() {
        // Masks in a video are 0/255 by construction; a lossy one would not be.
        m.mapv_inplace(|v| if v > 127 { FLOOR } else { 0 });
        out.push(m.clone());
    }
    out
}

/// IoU of the floor of two masks.
fn iou(a: &MaskImage, b: &MaskImage) -> (u64, u64) {
    let (mut i, mut u) = (0u64, 0u64);
    for (&x, &y) in a.iter().zip(b.iter()) {
        i += u64::from(x == FLOOR && y == FLOOR);
        u += u64::from(x == FLOOR || y == FLOOR);
    }
    (i, u)
}

fn row(name: &str, old: &[MaskImage], new: &[MaskImage], truth: Option<&[MaskImage]>) {
    assert_eq!(old.len(), new.len(), "{name}: frame counts");
    let mut all = Agreement::default();
    let mut worst = (f64::INFINITY, 0usize);
    for (i, (o, n)) in old.iter().zip(new).enumerate() {
        assert_eq!(o.dim(), n.dim(), "{name}: frame {i}'s size");
        let a = agreement(o, n, BAND);
        if a.share() < worst.0 {
            worst = (a.share(), i);
        }
        all.add(&a);
    }
    let pixels = old.iter().map(|m| m.len() as u64).sum::<u64>().max(1);
    let truth_note = truth.map_or("–".to_owned(), |t| {
        let score = |masks: &[MaskImage]| {
            let (i, u) = masks
                .iter()
                .zip(t)
                .map(|(m, t)| iou(m, t))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            i as f64 / u.max(1) as f64
        };
        format!("{:.4} → {:.4}", score(old), score(new))
    });
    println!(
        "| {name} | {} | {:.3} % | {:.3} % (frame {}) | {:.1} % → {:.1} % | {truth_note} |",
        old.len(),
        100.0 * all.share(),
        100.0 * worst.0,
        worst.1,
        100.0 * all.reference_floor as f64 / pixels as f64,
        100.0 * all.mask_floor as f64 / pixels as f64,
    );
}
