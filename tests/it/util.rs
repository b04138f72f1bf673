//! What the integration tests share: running the `underlay` binary,
//! temporary folders, finding external tools and shared media, a virtual
//! X display for the viewer's window (`Xvfb`), and comparing images with
//! the golden ones (`tests/data/golden`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use underlay::image::RgbImage;
use underlay::video::still::{load_rgb, save_rgb};

/// The `underlay` binary built for these tests.
pub fn underlay_cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_underlay"))
}

/// Runs `underlay` with `args` and waits for it.
pub fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    underlay_cmd()
        .args(args)
        .output()
        .expect("run the underlay binary")
}

/// Runs `underlay` with `args` in the folder `dir`.
pub fn run_in<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    underlay_cmd()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run the underlay binary")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output then standard error.
pub fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// Asserts that the run succeeded, showing its standard error otherwise.
#[track_caller]
pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "underlay failed ({:?}): {}",
        o.status,
        stderr(o)
    );
}

/// A temporary folder, removed when dropped.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// Whether `UNDERLAY_REQUIRE_TOOLS=1`: a missing tool is then a failure.
pub fn tools_required() -> bool {
    std::env::var_os("UNDERLAY_REQUIRE_TOOLS").is_some_and(|v| v == "1")
}

/// Called when a test cannot run because `what` is missing: prints that it
/// is skipped and returns, or fails under `UNDERLAY_REQUIRE_TOOLS=1`.
#[track_caller]
pub fn skip_missing_tool(what: &str) {
    assert!(
        !tools_required(),
        "{what} is missing and UNDERLAY_REQUIRE_TOOLS=1: install it (make deps)"
    );
    eprintln!("skipped: {what} is missing");
}

/// Whether the program `name` can be started (it is run once with
/// `-version` and its answer ignored); when not, [`skip_missing_tool`].
#[track_caller]
pub fn have_tool(name: &str) -> bool {
    let found = Command::new(name)
        .arg("-version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        skip_missing_tool(&format!("the program `{name}`"));
    }
    found
}

/// A file of the shared test media (`../shared/testdata/<name>` beside the
/// project), or `None` with a message when it is not there. Its absence is
/// never a failure: the project's tests must pass without it.
pub fn shared_media(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/testdata")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not present", p.display());
        None
    }
}

/// A reference implementation from the shared material
/// (`../shared/reference/<name>`), or `None` with a message. Like the
/// shared media, it lives outside the repository: a clone elsewhere does not
/// have it, so its absence is never a failure, whatever
/// `UNDERLAY_REQUIRE_TOOLS` says.
pub fn shared_reference(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not present", p.display());
        None
    }
}

/// A Python that can import `cv2` and `numpy`: `UNDERLAY_TEST_PYTHON`,
/// else the project's cached venv (`scripts/python-venv.sh` makes it),
/// else `python3`; `None` after [`skip_missing_tool`] when none can.
#[track_caller]
pub fn python_with_opencv() -> Option<PathBuf> {
    python_with("cv2, numpy", "a Python with cv2 and numpy")
}

/// A Python that can `import <modules>`, found as [`python_with_opencv`]
/// finds one; `what` names it in the skip message.
#[track_caller]
pub fn python_with(modules: &str, what: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("UNDERLAY_TEST_PYTHON") {
        candidates.push(p.into());
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".cache/underlay/pyenv/bin/python"));
    }
    candidates.push("python3".into());
    let works = |p: &PathBuf| {
        Command::new(p)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let found = candidates.into_iter().find(works);
    if found.is_none() {
        skip_missing_tool(&format!("{what} (scripts/python-venv.sh installs one)"));
    }
    found
}

/// `tests/data/golden`: the stored images.
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

/// Compares with the stored image, or stores it when `UNDERLAY_BLESS=1`.
/// Tolerance: at most 0.1 % of pixels may differ by more than 2 in any
/// channel, and the mean absolute difference must stay below 0.05 (so
/// platform rounding passes and any drawing change fails).
#[track_caller]
pub fn check_golden(name: &str, img: &RgbImage) {
    let path = golden_dir().join(name);
    if std::env::var_os("UNDERLAY_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(golden_dir()).unwrap();
        save_rgb(&path, img).unwrap();
        eprintln!("blessed {}", path.display());
        return;
    }
    let want = load_rgb(&path).unwrap_or_else(|e| {
        panic!("{e}: run `UNDERLAY_BLESS=1 cargo test --test it` to create it, then look at it")
    });
    assert_eq!(want.dim(), img.dim(), "{name}: size differs");
    let mut over = 0usize;
    let mut sum = 0u64;
    for (a, b) in want.iter().zip(img.iter()) {
        let d = a.abs_diff(*b);
        sum += d as u64;
        if d > 2 {
            over += 1;
        }
    }
    let mean = sum as f64 / img.len() as f64;
    let actual = std::env::temp_dir().join(format!("underlay-actual-{name}"));
    assert!(
        over * 1000 <= img.len() && mean < 0.05,
        "{name}: {over} channel values differ by more than 2, mean difference {mean:.4}; \
         actual image written to {}",
        {
            let _ = save_rgb(&actual, img);
            actual.display()
        }
    );
}

/// A virtual X display for one test, stopped on drop.
pub struct Xvfb {
    child: Child,
    /// The display to set `DISPLAY` to.
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb on a display it picks itself (`-displayfd`, so tests
    /// running side by side never race for one), or `None` (with a
    /// message) when it is not installed. Tries three times; a failure
    /// names what Xvfb said.
    pub fn start() -> Option<Xvfb> {
        if !crate::util::have_tool("Xvfb") {
            return None;
        }
        let mut said = String::new();
        for _ in 0..3 {
            match Self::try_start() {
                Ok(x) => return Some(x),
                Err(e) => said = e,
            }
        }
        panic!("could not start Xvfb: {said}");
    }

    fn try_start() -> Result<Xvfb, String> {
        use std::io::Read;
        let log = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1600x1000x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(log.reopen().map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("spawn Xvfb: {e}"))?;
        let mut out = child.stdout.take().ok_or("no stdout")?;
        // Xvfb writes the display number once it accepts connections, and
        // closes its end when it dies; a thread keeps the wait bounded.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while let Ok(1) = out.read(&mut byte) {
                if byte[0] == b'\n' {
                    break;
                }
                line.push(byte[0]);
            }
            let _ = tx.send(String::from_utf8_lossy(&line).trim().to_string());
        });
        let number = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
        if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(Xvfb {
                child,
                display: format!(":{number}"),
            });
        }
        let _ = child.kill();
        let _ = child.wait();
        let said = std::fs::read_to_string(log.path()).unwrap_or_default();
        Err(format!("no display number (got {number:?}); Xvfb said: {said}"))
    }
}

impl Drop for Xvfb {
    /// Stops Xvfb with SIGTERM, so it removes its lock file and socket
    /// (a SIGKILL leaves them behind), then SIGKILL if it lingers.
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on our own child's pid has no memory effects.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let until = std::time::Instant::now() + Duration::from_secs(5);
            while std::time::Instant::now() < until {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One picture of `video` decoded by `ffmpeg` as packed RGB rows: the
/// first after `input` (options before `-i`: `["-ss", "1"]`, `["-sseof",
/// "-0.5"]`), through `filter` when given. Empty when ffmpeg fails; its
/// message is printed.
pub fn rgb_picture(video: &Path, input: &[&str], filter: Option<&str>) -> Vec<u8> {
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-v", "error"]).args(input).arg("-i").arg(video);
    if let Some(f) = filter {
        cmd.args(["-vf", f]);
    }
    let out = cmd
        .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .expect("run ffmpeg");
    if !out.status.success() || out.stdout.is_empty() {
        eprintln!(
            "ffmpeg on {}: {}",
            video.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.stdout
}
