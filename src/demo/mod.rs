//! The demo: a generated run of a RoboCup SSL Division B game (video,
//! visualization log, session and ground truth) that shows the whole
//! product with no file of the user's.
//!
//! [`generate`] simulates the game (`sim`), writes the log its software
//! would have written (`vislog`), films it with a known camera (`render`)
//! and writes a session holding the true offset and calibration, plus the
//! ground truth (camera, per-frame floor masks, trajectories) for tests and
//! benchmarks. Files are made in a scratch folder inside the output folder
//! and moved into place only when all of them are complete.
//!
//! `ssl.rs` fails with this module's [`DemoError`], and `generate` calls
//! it: the two files name each other.

pub mod air;
pub mod render;
pub mod sim;
pub mod ssl;
pub mod vislog;
pub mod world;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::image::{MaskImage, RgbImage};
use crate::session::{CalibrationSource, Session};
use crate::video::{Encoder, EncoderSettings};

/// Bumped whenever the generated files change, so cached demos are renewed
/// (2: closed GOPs, so players can start at every keyframe; 4: a chipped
/// ball, drawings above the floor).
pub const VERSION: u32 = 4;

/// Epoch time (s) of the start of the log's clock: 2024-07-17 09:14:03.3172
/// UTC, during RoboCup 2024 in Eindhoven.
pub const LOG_EPOCH: f64 = 1_721_207_643.317_2;
/// Seconds the robots' software ran before the camera started.
pub const VIDEO_LEAD: f64 = 0.55;

/// File names inside a demo folder.
pub const SESSION_FILE: &str = "session.toml";
pub const VIDEO_FILE: &str = "video.mp4";
pub const LOG_FILE: &str = "log.ulog";
pub const STAMP_FILE: &str = "demo.toml";
pub const TRUTH_DIR: &str = "truth";
pub const CAMERA_FILE: &str = "truth/camera.toml";
pub const MASKS_FILE: &str = "truth/masks.mkv";
pub const TRAJECTORY_FILE: &str = "truth/trajectory.csv";

const FILES: [&str; 7] = [
    SESSION_FILE,
    VIDEO_FILE,
    LOG_FILE,
    ssl::SSL_FILE,
    CAMERA_FILE,
    MASKS_FILE,
    TRAJECTORY_FILE,
];

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoSpec {
    pub width: u32,
    pub height: u32,
    pub fps: f64,
    /// Seconds of video.
    pub duration: f64,
    /// Varies the game, the textures and the noise.
    pub seed: u64,
    /// Which camera films it.
    pub camera: DemoCamera,
}

/// The camera that films a demo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DemoCamera {
    /// Above the side line, tilted down: the carpet fills the picture.
    #[default]
    Top,
    /// Low at the side: the near carpet, the hall's walls, stands and sky.
    Stand,
}

impl Default for DemoSpec {
    fn default() -> Self {
        DemoSpec {
            width: 1280,
            height: 720,
            fps: 30.0,
            duration: 20.0,
            seed: 1,
            camera: DemoCamera::Top,
        }
    }
}

impl DemoSpec {
    /// Checks the numbers are ones a video can have.
    pub fn validate(&self) -> Result<(), DemoError> {
        let bad = |m: String| Err(DemoError::Spec(m));
        if !(64..=4096).contains(&self.width) || !(64..=4096).contains(&self.height) {
            return bad(format!(
                "the size must be 64–4096 pixels a side, not {}×{}",
                self.width, self.height
            ));
        }
        if !self.width.is_multiple_of(2) || !self.height.is_multiple_of(2) {
            return bad(format!(
                "the size must be even (H.264 4:2:0), not {}×{}",
                self.width, self.height
            ));
        }
        if !(self.fps.is_finite() && (1.0..=240.0).contains(&self.fps)) {
            return bad(format!("the frame rate must be 1–240, not {}", self.fps));
        }
        if !(self.duration.is_finite() && (1.0..=600.0).contains(&self.duration)) {
            return bad(format!("the duration must be 1–600 s, not {}", self.duration));
        }
        Ok(())
    }

    /// Number of video frames.
    pub fn frames(&self) -> u64 {
        (self.duration * self.fps).round().max(1.0) as u64
    }

    fn stamp(&self) -> String {
        format!(
            "# An underlay demo folder (written last: its presence means the files are complete).\n\
             version = {VERSION}\nwidth = {}\nheight = {}\nfps = {:?}\nduration = {:?}\nseed = {}\n",
            self.width, self.height, self.fps, self.duration, self.seed
        ) + if self.camera == DemoCamera::Stand {
            // Its session names the field (since stop 27).
            "camera = \"stand\"\nfield = \"ssl-b\"\n"
        } else {
            ""
        }
    }
}

/// Errors making the demo.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("demo: {0}")]
    Spec(String),
    #[error(
        "{0}: the folder is not empty and is not an underlay demo folder (no {STAMP_FILE}); \
         choose another --out or empty it"
    )]
    ForeignFolder(PathBuf),
    #[error("{path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Log(#[from] crate::log::LogError),
    #[error(transparent)]
    Video(#[from] crate::video::VideoError),
    #[error(transparent)]
    Calib(#[from] crate::calib::CalibError),
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    #[error("interrupted")]
    Interrupted,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DemoError + '_ {
    move |source| DemoError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The default demo folder: `demo-v<VERSION>` in the user's cache folder.
pub fn default_dir() -> PathBuf {
    let base = directories::ProjectDirs::from("", "", "underlay")
        .map(|d| d.cache_dir().to_owned())
        .unwrap_or_else(|| std::env::temp_dir().join("underlay"));
    base.join(format!("demo-v{VERSION}"))
}

/// Removes the demos older versions left beside `dir` (the default
/// folder, [`default_dir`]): sibling folders named `demo-v<N>` with N
/// below [`VERSION`] that hold an underlay demo (its stamp file). Other
/// folders are never touched. Returns the folders removed.
pub fn remove_outdated(dir: &Path) -> Vec<PathBuf> {
    let Some(base) = dir.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let outdated = name
            .to_str()
            .and_then(|n| n.strip_prefix("demo-v"))
            .and_then(|v| v.parse::<u32>().ok())
            .is_some_and(|v| v < VERSION);
        let path = e.path();
        if outdated && path.join(STAMP_FILE).is_file() && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// Whether `dir` holds a complete demo made with `spec` by this version.
pub fn is_current(dir: &Path, spec: &DemoSpec) -> bool {
    std::fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|s| s == spec.stamp())
        && FILES.iter().all(|f| dir.join(f).is_file())
}

/// The files of a generated demo.
#[derive(Clone, Debug)]
pub struct DemoFiles {
    pub dir: PathBuf,
    pub session: PathBuf,
    pub video: PathBuf,
    pub log: PathBuf,
}

impl DemoFiles {
    pub fn in_dir(dir: &Path) -> DemoFiles {
        DemoFiles {
            dir: dir.to_owned(),
            session: dir.join(SESSION_FILE),
            video: dir.join(VIDEO_FILE),
            log: dir.join(LOG_FILE),
        }
    }
}

/// Progress of [`generate`]: frames rendered out of the total.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Writes a demo made with `spec` into `dir` (created if missing; an
/// existing demo there is replaced, any other non-empty folder refused).
/// `cancel` stops it between frames, leaving `dir` as it was.
pub fn generate(
    dir: &Path,
    spec: &DemoSpec,
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<DemoFiles, DemoError> {
    spec.validate()?;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let is_demo = dir.join(STAMP_FILE).is_file();
    let empty = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .all(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(".generating")));
    if !is_demo && !empty {
        return Err(DemoError::ForeignFolder(dir.to_owned()));
    }
    let scratch = dir.join(format!(".generating-{}", std::process::id()));
    // Removed below, or by the signal handler if a signal ends the process.
    let _live = crate::files::Temporary::register(&scratch);
    remove_stale_scratch(dir);
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join(TRUTH_DIR)).map_err(io_err(&scratch))?;
    let result = generate_into(&scratch, spec, progress, cancel).and_then(|()| {
        // The stamp goes first out and last in, so a folder with a stamp is whole.
        let stamp = dir.join(STAMP_FILE);
        match std::fs::remove_file(&stamp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(&stamp)(e)),
            _ => {}
        }
        std::fs::create_dir_all(dir.join(TRUTH_DIR)).map_err(io_err(dir))?;
        for f in FILES {
            std::fs::rename(scratch.join(f), dir.join(f)).map_err(io_err(&dir.join(f)))?;
        }
        crate::files::write_atomic(&stamp, spec.stamp().as_bytes()).map_err(io_err(&stamp))
    });
    let _ = std::fs::remove_dir_all(&scratch);
    result.map(|()| DemoFiles::in_dir(dir))
}

/// Removes scratch folders that crashed or killed runs left behind (an
/// hour old: younger ones may belong to a run still going).
fn remove_stale_scratch(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(3600));
        if old && e.file_name().to_string_lossy().starts_with(".generating-") {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn generate_into(
    dir: &Path,
    spec: &DemoSpec,
    progress: Progress,
    cancel: &AtomicBool,
) -> Result<(), DemoError> {
    let run = sim::simulate(spec.seed, spec.duration + VIDEO_LEAD);
    vislog::write_log(&run, &dir.join(LOG_FILE), LOG_EPOCH)?;

    let cam = match spec.camera {
        DemoCamera::Top => render::Camera::demo(spec.width, spec.height)?,
        DemoCamera::Stand => render::Camera::stand(spec.width, spec.height)?,
    };
    let calib = cam.calibration()?;
    // The SSL game log the game would have produced, with this camera.
    ssl::write_ssl_log(&run, &cam, &dir.join(ssl::SSL_FILE), LOG_EPOCH)?;
    write_camera(&dir.join(CAMERA_FILE), &cam)?;

    let mut session = Session::new(dir.join(VIDEO_FILE), dir.join(LOG_FILE));
    session.offset = LOG_EPOCH + VIDEO_LEAD;
    session.calibration = Some(CalibrationSource::Inline(calib));
    // A camera that sees past the field: the session says where it is, so
    // the mask calls nothing beyond it floor (the top camera sees only
    // the carpet and needs nothing).
    if spec.camera == DemoCamera::Stand {
        session.field = Some("ssl-b".into());
    }
    session.save(&dir.join(SESSION_FILE))?;

    let renderer = render::Renderer::new(cam, spec.seed);
    let n = spec.frames();
    let times: Vec<f64> = (0..n).map(|i| i as f64 / spec.fps).collect();
    let video_settings = EncoderSettings {
        crf: 20,
        fps_hint: spec.fps,
        keyframe_interval: spec.fps.round() as u32,
        ..EncoderSettings::default()
    };
    let mask_settings = EncoderSettings {
        gray_lossless: true,
        fps_hint: spec.fps,
        ..EncoderSettings::default()
    };
    let mut video = Encoder::create(&dir.join(VIDEO_FILE), spec.width, spec.height, &video_settings)?;
    let mut masks = Encoder::create(&dir.join(MASKS_FILE), spec.width, spec.height, &mask_settings)?;
    let traj_path = dir.join(TRAJECTORY_FILE);
    let traj_file = std::fs::File::create(&traj_path).map_err(io_err(&traj_path))?;
    let mut traj = std::io::BufWriter::new(traj_file);
    write_trajectory_header(&mut traj).map_err(io_err(&traj_path))?;

    // Render on a second thread while this one encodes.
    let (tx, rx) = crossbeam_channel::bounded::<(u64, world::Snapshot, RgbImage, MaskImage)>(3);
    let (back_tx, back_rx) = crossbeam_channel::unbounded::<(RgbImage, MaskImage)>();
    std::thread::scope(|s| -> Result<(), DemoError> {
        // Owned here, so an early return drops it and stops the renderer.
        let rx = rx;
        let render_times = &times;
        let (run, renderer) = (&run, &renderer);
        s.spawn(move || {
            for (i, &t) in render_times.iter().enumerate() {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                let (mut img, mut mask) = back_rx
                    .try_recv()
                    .unwrap_or_else(|_| (RgbImage::zeros((0, 0, 3)), MaskImage::zeros((0, 0))));
                let snap = run.at(t + VIDEO_LEAD);
                renderer.render(&snap, i as u64, &mut img, &mut mask);
                if tx.send((i as u64, snap, img, mask)).is_err() {
                    break;
                }
            }
        });
        for (i, snap, img, mask) in rx.iter() {
            let t = times[i as usize];
            video.push(&img, t)?;
            masks.push_mask(&mask, t)?;
            write_trajectory_row(&mut traj, t, &snap).map_err(io_err(&traj_path))?;
            let _ = back_tx.send((img, mask));
            progress(i + 1, n);
        }
        Ok(())
    })?;
    if cancel.load(Ordering::Relaxed) {
        return Err(DemoError::Interrupted);
    }
    video.finish_at(spec.duration)?;
    masks.finish_at(spec.duration)?;
    traj.flush().map_err(io_err(&traj_path))?;
    Ok(())
}

fn write_camera(path: &Path, cam: &render::Camera) -> Result<(), DemoError> {
    let m3 = |m: &[[f64; 3]; 3]| format!("[{:?}, {:?}, {:?}]", m[0], m[1], m[2]);
    let text = format!(
        "# The demo's true camera, in OpenCV's convention: a world point X (mm, floor z = 0)\n\
         # is R·X + t in camera coordinates, projected, distorted by (k1, k2) and mapped by K.\n\
         width = {}\nheight = {}\nk = {}\ndistortion = {:?}\nr = {}\nt = {:?}\neye = {:?}\n",
        cam.width,
        cam.height,
        m3(&cam.k),
        cam.dist,
        m3(&cam.r),
        cam.t,
        cam.eye
    );
    std::fs::write(path, text).map_err(io_err(path))
}

fn write_trajectory_header(w: &mut impl std::io::Write) -> std::io::Result<()> {
    write!(w, "video_time_s,ball_x,ball_y,ball_height")?;
    for team in [world::Team::Blue, world::Team::Yellow] {
        for id in 0..world::TEAM_SIZE {
            let t = team.name();
            write!(w, ",{t}_{id}_x,{t}_{id}_y,{t}_{id}_heading")?;
        }
    }
    writeln!(w)
}

fn write_trajectory_row(w: &mut impl std::io::Write, t: f64, s: &world::Snapshot) -> std::io::Result<()> {
    write!(
        w,
        "{t:.6},{:.1},{:.1},{:.1}",
        s.ball.pos.x, s.ball.pos.y, s.ball.height
    )?;
    for r in &s.robots {
        write!(w, ",{:.1},{:.1},{:.5}", r.pos.x, r.pos.y, r.heading)?;
    }
    writeln!(w)
}

#[cfg(test)]
mod camera_fit_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> DemoSpec {
        DemoSpec {
            width: 96,
            height: 64,
            fps: 5.0,
            duration: 1.0,
            seed: 3,
            camera: DemoCamera::Top,
        }
    }

    /// The game, the renderer and the calibration presets agree on the
    /// field: the renderer paints the preset's lines, the game plays on
    /// the world's constants.
    #[test]
    fn the_world_is_the_ssl_division_b_preset() {
        use crate::calib::presets::ssl_division_b;
        let f = ssl_division_b();
        assert_eq!(
            f.size,
            crate::geom::Vec2::new(world::FIELD_LENGTH, world::FIELD_WIDTH)
        );
        assert_eq!(f.line_width, world::LINE_WIDTH);
        let (hl, hw) = (world::FIELD_LENGTH / 2.0, world::GOAL_WIDTH / 2.0);
        assert_eq!(f.point("goal post +x+y"), Some(crate::geom::Vec2::new(hl, hw)));
        let front = crate::geom::Vec2::new(hl - sim::DEFENSE_DEPTH, sim::DEFENSE_WIDTH / 2.0);
        assert_eq!(f.point("defence +x+y front"), Some(front));
    }

    #[test]
    fn an_interrupted_demo_leaves_the_folder_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        let cancel = AtomicBool::new(true);
        let e = generate(&dir, &tiny(), &|_, _| {}, &cancel).unwrap_err();
        assert!(matches!(e, DemoError::Interrupted), "{e}");
        assert!(
            crate::files::sorted_names(&dir).is_empty(),
            "{:?}",
            crate::files::sorted_names(&dir)
        );
        // A finished demo survives an interrupted regeneration unchanged.
        let done = AtomicBool::new(false);
        generate(&dir, &tiny(), &|_, _| {}, &done).unwrap();
        assert!(is_current(&dir, &tiny()));
        let before = std::fs::read(dir.join(LOG_FILE)).unwrap();
        let other = DemoSpec { seed: 4, ..tiny() };
        assert!(generate(&dir, &other, &|_, _| {}, &cancel).is_err());
        assert!(is_current(&dir, &tiny()));
        assert_eq!(std::fs::read(dir.join(LOG_FILE)).unwrap(), before);
        assert!(
            !crate::files::sorted_names(&dir)
                .iter()
                .any(|n| n.starts_with('.')),
            "{:?}",
            crate::files::sorted_names(&dir)
        );
    }

    #[test]
    fn old_scratch_folders_are_cleaned_up_young_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (old, young) = (tmp.path().join(".generating-1"), tmp.path().join(".generating-2"));
        std::fs::create_dir(&old).unwrap();
        std::fs::create_dir(&young).unwrap();
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::open(&old)
            .unwrap()
            .set_modified(two_hours_ago)
            .unwrap();
        generate(tmp.path(), &tiny(), &|_, _| {}, &AtomicBool::new(false)).unwrap();
        assert!(!old.exists());
        assert!(
            young.exists(),
            "a scratch folder of a run still going is left alone"
        );
    }

    #[test]
    fn only_demos_of_older_versions_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = |name: &str, stamp: bool| {
            let d = tmp.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("video.mp4"), b"x").unwrap();
            if stamp {
                std::fs::write(d.join(STAMP_FILE), b"version = 0").unwrap();
            }
            d
        };
        let current = folder(&format!("demo-v{VERSION}"), true);
        let older = folder(&format!("demo-v{}", VERSION - 1), true);
        let kept = [
            folder("demo-v0", false),
            folder(&format!("demo-v{}", VERSION + 1), true),
            folder("demo-vX", true),
            folder("demo-v1-mine", true),
            folder("photos", true),
        ];
        assert_eq!(remove_outdated(&current), std::slice::from_ref(&older));
        assert!(!older.exists());
        assert!(current.join("video.mp4").exists());
        for k in kept {
            assert!(k.join("video.mp4").exists(), "{} removed", k.display());
        }
        assert!(remove_outdated(&current).is_empty());
    }

    #[test]
    fn progress_counts_every_frame_and_the_stamp_names_the_spec() {
        let tmp = tempfile::tempdir().unwrap();
        let seen = std::sync::Mutex::new(Vec::new());
        let progress = |done: u64, total: u64| seen.lock().unwrap().push((done, total));
        let spec = tiny();
        generate(tmp.path(), &spec, &progress, &AtomicBool::new(false)).unwrap();
        assert_eq!(*seen.lock().unwrap(), (1..=5).map(|i| (i, 5)).collect::<Vec<_>>());
        assert!(is_current(tmp.path(), &spec));
        assert!(!is_current(
            tmp.path(),
            &DemoSpec {
                fps: 6.0,
                ..spec.clone()
            }
        ));
        // A missing file makes the folder stale.
        std::fs::remove_file(tmp.path().join(MASKS_FILE)).unwrap();
        assert!(!is_current(tmp.path(), &spec));
    }
}
