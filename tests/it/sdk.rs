//! One script, three writers, one file (issue 49): underlay's Rust
//! writer, the Python package (`python/`) and the C++ header (`cpp/`) run
//! the same writer script ([`sdk_script`](crate::sdk_script)) and must
//! write the same bytes, read back by `underlay log info` as written; fed
//! NaN, huge values, empty names and cycles they must refuse the same
//! things in the same words; and each streams the sequence to `underlay
//! live` over UDP and TCP.
//!
//! The Python driver runs with `python3` on `python/src` (nothing to
//! install); the C++ driver is compiled with `g++` (or `clang++`) once per
//! run. Without them the tests skip with a message, and fail under
//! `UNDERLAY_REQUIRE_TOOLS=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::live::{Running, free_udp_port, identity_calib};
use crate::live_robust::listening;
use crate::sdk_script::{Rng, Script, drive_rust, fx, gx, header_tokens, sx};
use crate::util::{have_tool, skip_missing_tool, tmp, underlay_cmd};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The C++ driver, compiled once per test run (`None` without a compiler).
fn cpp_driver() -> Option<PathBuf> {
    static DRIVER: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = DRIVER.get_or_init(|| {
        let dir = tmp().keep();
        let exe = dir.join("drive");
        for cxx in ["g++", "clang++"] {
            let built = Command::new(cxx)
                .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
                .arg(root().join("cpp/include"))
                .arg(root().join("cpp/tests/drive.cpp"))
                .arg("-o")
                .arg(&exe)
                .status();
            match built {
                Ok(s) if s.success() => return Some(exe),
                Ok(s) => panic!("{cxx} failed to build cpp/tests/drive.cpp: {s}"),
                Err(_) => continue,
            }
        }
        None
    });
    if found.is_none() {
        skip_missing_tool("a C++17 compiler (g++ or clang++)");
    }
    found.clone()
}

fn python() -> Option<PathBuf> {
    let ok = Command::new("python3")
        .args(["-c", "import sys; assert sys.version_info >= (3, 8)"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip_missing_tool("python3 (3.8 or newer)");
    }
    ok.then(|| "python3".into())
}

/// Runs a driver on `script` in `dir`; returns what it printed.
fn run_driver(mut cmd: Command, script: &Path, dir: &Path) -> String {
    let out = cmd
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn python_cmd(py: &Path) -> Command {
    let mut c = Command::new(py);
    c.env("PYTHONPATH", root().join("python/src"))
        .arg(root().join("python/tests/drive.py"));
    c
}

/// What each of the three writers printed running `script`, each in a
/// folder of its own under `dir` (rust, python, cpp).
fn drive_all(script: &str, dir: &Path) -> Option<[String; 3]> {
    let (py, cpp) = (python()?, cpp_driver()?);
    let file = dir.join("script.txt");
    std::fs::write(&file, script).unwrap();
    let [r, p, c] = ["rust", "python", "cpp"].map(|d| {
        let d = dir.join(d);
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    let python = run_driver(python_cmd(&py), &file, &p);
    let cpp = run_driver(Command::new(cpp), &file, &c);
    let rust = drive_rust(script, &r);
    Some([rust, python, cpp].map(|s| normalise(&s)))
}

/// The one part of a refusal that names the language's own API: the option
/// a shape above the floor or in the picture needs.
fn normalise(s: &str) -> String {
    s.replace("WriterOptions { picture: true, .. }", "<picture option>")
        .replace("Options::picture = true", "<picture option>")
        .replace("picture=True", "<picture option>")
        .replace("WriterOptions { heights: true, .. }", "<heights option>")
        .replace("Options::heights = true", "<heights option>")
        .replace("heights=True", "<heights option>")
}

fn assert_same_files(dir: &Path, names: &[String]) {
    for name in names {
        let [r, p, c] = ["rust", "python", "cpp"].map(|d| std::fs::read(dir.join(d).join(name)).unwrap());
        assert!(r == p, "{name}: Python wrote {} bytes, Rust {}", p.len(), r.len());
        assert!(r == c, "{name}: C++ wrote {} bytes, Rust {}", c.len(), r.len());
    }
}

/// Names an odd robot program might use.
fn odd_names() -> Vec<String> {
    let mut v: Vec<String> = [
        "robots/blue/3",
        "robots/blue",
        "attack",
        "plan/pass",
        "plan",
        "ünïcödé/✓",
        "日本語/ロボット",
        "with space",
        "quote\"and\\backslash",
        "new\nline\ttab",
        "a/",
        "/leading",
        "default",
    ]
    .map(String::from)
    .to_vec();
    v.push("long/".repeat(200));
    v
}

const TEXTS: [&str; 5] = [
    "",
    "cycle 7",
    "ünïcödé ✓ 日本",
    "a\"b\\c\nd\te",
    "{ not; notation }",
];

/// A random drawable primitive's style, `log info` label and arguments.
fn random_prim(rng: &mut Rng, names: &[String], long_text: &str) -> (Vec<String>, String, Vec<String>) {
    let kinds = [
        "circle",
        "line",
        "rect",
        "polygon",
        "polyline",
        "text",
        "point",
        "sector",
        "arc",
        "line3",
        "polyline3",
        "polygon3",
        "circle3",
        "text3",
        "point3",
        "sphere",
        "cylinder",
        "box3",
    ];
    let kind = *rng.pick(&kinds);
    let floor = !kind.ends_with('3') && !matches!(kind, "sphere" | "cylinder");
    let picture = floor && rng.chance(0.15);
    let thickness = *rng.pick(&[0.0f32, 0.0, 1.5, 20.0, f32::MAX, f32::MIN_POSITIVE, 1e-45, -0.0]);
    let style = vec![
        if rng.chance(0.3) {
            "-".into()
        } else {
            (rng.next() as u32).to_string()
        },
        if rng.chance(0.7) {
            "-".into()
        } else {
            (rng.next() as u32).to_string()
        },
        gx(thickness),
        if rng.chance(0.2) { "1" } else { "0" }.into(),
        if rng.chance(0.2) {
            "-".into()
        } else {
            sx(rng.pick::<String>(names))
        },
        rng.pick(&[0, 0, 0, 1, 2, -1, i32::MIN, i32::MAX, 7]).to_string(),
        if picture { "1" } else { "0" }.into(),
        kind.into(),
    ];
    let mut a: Vec<String> = Vec::new();
    let n = |rng: &mut Rng| fx(rng.num());
    let z = |rng: &mut Rng| fx(rng.size());
    let text = |rng: &mut Rng| {
        if rng.chance(0.01) {
            sx(long_text)
        } else {
            sx(rng.pick::<&str>(&TEXTS))
        }
    };
    let mut label = match kind {
        "rect" => "rectangle".to_owned(),
        "polyline" => "polygon".to_owned(),
        "line3" => "raised line".to_owned(),
        "polygon3" => "raised polygon".to_owned(),
        "circle3" => "raised circle".to_owned(),
        "text3" => "raised text".to_owned(),
        "point3" => "raised point".to_owned(),
        "box3" => "box".to_owned(),
        k => k.to_owned(),
    };
    match kind {
        "circle" => a.extend([n(rng), n(rng), z(rng)]),
        "line" => a.extend([n(rng), n(rng), n(rng), n(rng)]),
        "rect" => a.extend([n(rng), n(rng), z(rng), z(rng), n(rng)]),
        "polygon" | "polyline" => {
            let k = if rng.chance(0.02) { 1000 } else { 1 + rng.below(8) };
            a.push(k.to_string());
            for _ in 0..2 * k {
                a.push(n(rng));
            }
        }
        "text" => a.extend([n(rng), n(rng), text(rng), z(rng)]),
        "point" => a.extend([n(rng), n(rng), rng.pick(&["0", "1"]).to_string(), z(rng)]),
        "sector" => {
            let (i, o) = (rng.size(), rng.size());
            let (i, o) = if i <= o { (i, o) } else { (o, i) };
            if i == o {
                label = "arc".into();
            }
            a.extend([n(rng), n(rng), fx(i), fx(o), n(rng), n(rng)]);
        }
        "arc" => a.extend([n(rng), n(rng), z(rng), n(rng), n(rng)]),
        "line3" => a.extend((0..6).map(|_| n(rng))),
        "polyline3" | "polygon3" => {
            let k = 2 + rng.below(6);
            if kind == "polyline3" {
                label = if k == 2 { "raised line" } else { "raised polyline" }.into();
            }
            a.push(k.to_string());
            for _ in 0..3 * k {
                a.push(n(rng));
            }
        }
        "circle3" => {
            a.extend([n(rng), n(rng), n(rng), z(rng)]);
            if rng.chance(0.5) {
                a.push("-".into());
            } else {
                let normal = *rng.pick(&[
                    [1.0, 0.0, 0.0],
                    [0.0, 0.0, 1.0],
                    [5e-324, 0.0, 0.0],
                    [-0.0, 0.0, 1.0],
                ]);
                a.extend(normal.map(fx));
            }
        }
        "text3" => a.extend([n(rng), n(rng), n(rng), text(rng), z(rng)]),
        "point3" => a.extend([n(rng), n(rng), n(rng), rng.pick(&["0", "1"]).to_string(), z(rng)]),
        "sphere" => a.extend([n(rng), n(rng), n(rng), z(rng)]),
        "cylinder" => a.extend([n(rng), n(rng), n(rng), z(rng), z(rng)]),
        _ => a.extend([n(rng), n(rng), n(rng), z(rng), z(rng), z(rng), n(rng)]),
    }
    if picture {
        label = format!("picture {label}");
    }
    (style, label, a)
}

/// The shared sequence: `frames` frames of every shape kind, entities
/// with parents, levels, persistent frames with ends, heights, picture
/// shapes, odd names and numbers at their limits; written by `open` (the
/// first line, given).
fn sequence(open: &[String], frames: usize, pause_every: usize) -> Script {
    let mut rng = Rng(49);
    let names = odd_names();
    let long_text = "long text ".repeat(500);
    let mut sc = Script::default();
    let open: Vec<&str> = open.iter().map(String::as_str).collect();
    sc.line(&open);
    sc.line(&["entity", &sx(&names[0]), &sx(&names[1]), &sx(&names[2])]);
    sc.line(&["entity", &sx(&names[3]), &sx(&names[4]), &sx(&names[5])]);
    sc.line(&["entity", &sx(&names[6]), &sx(&names[7]), &sx(&names[8])]);
    sc.line(&["default", &sx("default/πρώτο")]);
    sc.persistent(f64::NEG_INFINITY, f64::INFINITY);
    for _ in 0..5 {
        let (style, label, args) = random_prim(&mut rng, &names, &long_text);
        sc.prim(&style, &label, &args);
    }
    let t0 = 1_700_000_000.0;
    let mut written = 1;
    let mut k = 0usize;
    while written < frames {
        let t = t0 + k as f64 / 30.0;
        k += 1;
        if k.is_multiple_of(500) {
            // A persistent frame with ends (some of no length).
            let len = if k.is_multiple_of(1000) { 0.0 } else { 5.0 };
            sc.persistent(t, t + len);
        } else {
            sc.instant(t);
        }
        for _ in 0..1 + rng.below(4) {
            let (style, label, args) = random_prim(&mut rng, &names, &long_text);
            sc.prim(&style, &label, &args);
        }
        if rng.chance(0.05) {
            sc.end();
        }
        if rng.chance(0.01) {
            let e = sx(rng.pick::<String>(&names[9..]));
            sc.line(&["default", &e]);
        }
        if rng.chance(0.005) {
            // Parents only from later in the list: no cycle.
            let i = rng.below(names.len() - 1);
            let p = i + 1 + rng.below(names.len() - 1 - i);
            sc.line(&["entity", &sx(&names[i]), &sx(&names[p])]);
        }
        written += 1;
        if pause_every > 0 && k.is_multiple_of(pause_every) {
            sc.line(&["pause", "4000"]);
        }
    }
    sc.finish();
    sc
}

fn open_line(cmd: &str, target: &str) -> Vec<String> {
    let mut v = vec![cmd.to_owned(), target.to_owned(), "1".into(), "1".into()];
    v.extend(header_tokens("run «odd» \"names\"\n", Some(0.05), Some(3), true));
    v
}

#[test]
fn three_writers_write_one_file() {
    let dir = tmp();
    let sc = sequence(&open_line("open", "all.ulog"), 10_000, 0);
    let Some(said) = drive_all(&sc.text, dir.path()) else {
        return;
    };
    for s in &said {
        assert_eq!(s, "finish ok\n", "{said:?}");
    }
    assert_same_files(dir.path(), &["all.ulog".into()]);
    let file = dir.path().join("rust/all.ulog");
    let out = underlay_cmd().args(["log", "info"]).arg(&file).output().unwrap();
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{info}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (instants, persistent) = sc.frames;
    assert_eq!(instants + persistent, 10_000);
    let total: usize = sc.kinds.values().sum();
    let kinds: Vec<String> = sc.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    for want in [
        format!("frames:      10000 ({instants} instantaneous, {persistent} persistent)"),
        format!("primitives:  {total} ({})", kinds.join(", ")),
        "warnings:    none".to_owned(),
        "name:        run «odd» \"names\"".to_owned(),
    ] {
        assert!(info.contains(&want), "expected {want:?} in\n{info}");
    }
    assert_eq!(sc.kinds.len(), 25, "every kind: {kinds:?}");
    assert_eq!(std::fs::read(&file).unwrap()[8], 3, "format version 3");
}

/// A random op of a writer that misbehaves.
fn fuzz_op(rng: &mut Rng, sc: &mut Script, names: &[&str]) {
    let bad = |rng: &mut Rng| -> f64 {
        if rng.chance(0.6) {
            rng.num()
        } else {
            *rng.pick(&[
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                -1.0,
                1e308,
                -0.0,
                f64::MAX,
                -f64::MAX,
            ])
        }
    };
    let name = |rng: &mut Rng| sx(rng.pick::<&str>(names));
    match rng.below(12) {
        0 => {
            let t = fx(bad(rng));
            sc.line(&["instant", &t]);
        }
        1 => {
            let (a, b) = (fx(bad(rng)), fx(bad(rng)));
            sc.line(&["persistent", &a, &b]);
        }
        2 => sc.line(&["end"]),
        3 => {
            let (a, b) = (name(rng), name(rng));
            if rng.chance(0.5) {
                sc.line(&["entity", &a, &b]);
            } else {
                let c = name(rng);
                sc.line(&["entity", &a, &b, &c]);
            }
        }
        4 => {
            let a = name(rng);
            sc.line(&["default", &a]);
        }
        5 => sc.line(&["flush"]),
        _ => {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            let (mut style, _, mut args) = random_prim(rng, &names, "x");
            style[2] = gx(*rng.pick(&[0.0f32, 1.0, -1.0, f32::NAN, f32::INFINITY, f32::MAX]));
            if rng.chance(0.2) {
                style[4] = sx("");
            }
            // Spoil one number of the shape.
            let numbers: Vec<usize> = (0..args.len()).filter(|&i| args[i].starts_with('f')).collect();
            if !numbers.is_empty() && rng.chance(0.5) {
                let i = *rng.pick(&numbers);
                args[i] = fx(bad(rng));
            }
            if (style[7] == "polygon" || style[7] == "polyline") && rng.chance(0.2) {
                args = vec!["0".into()];
            }
            if (style[7] == "polyline3" || style[7] == "polygon3") && rng.chance(0.2) {
                args = vec!["1".into(), fx(1.0), fx(2.0), fx(3.0)];
            }
            let mut parts: Vec<&str> = vec!["prim"];
            parts.extend(style.iter().map(String::as_str));
            parts.extend(args.iter().map(String::as_str));
            sc.line(&parts);
        }
    }
}

#[test]
fn three_writers_refuse_alike() {
    let dir = tmp();
    let mut rng = Rng(0x49);
    let names = ["a", "b", "c", "a/b", "", "ünï\"q\"", "tab\there", "default"];
    let mut sc = Script::default();
    let mut files = Vec::new();
    for i in 0..300 {
        let file = format!("f{i}.ulog");
        let (heights, picture) = (rng.chance(0.5), rng.chance(0.3));
        let mut open = vec!["open".to_owned(), file.clone(), u8::from(heights).to_string()];
        open.push(u8::from(picture).to_string());
        open.extend(header_tokens(&format!("fuzz {i}"), None, None, false));
        let open: Vec<&str> = open.iter().map(String::as_str).collect();
        sc.line(&open);
        for _ in 0..rng.below(40) {
            fuzz_op(&mut rng, &mut sc, &names);
        }
        sc.line(&["finish"]);
        files.push(file);
    }
    // A frame longer than a record may be: a text of 64 MiB.
    let open = open_line("open", "big.ulog");
    let open: Vec<&str> = open.iter().map(String::as_str).collect();
    sc.line(&open);
    let t = fx(1.0);
    sc.line(&["instant", &t]);
    let text = format!("r{}.78", 64 << 20);
    sc.line(&[
        "prim",
        "-",
        "-",
        &gx(0.0),
        "0",
        "-",
        "0",
        "0",
        "text",
        &t,
        &t,
        &text,
        &t,
    ]);
    sc.line(&["instant", &fx(2.0)]);
    sc.line(&[
        "prim",
        "-",
        "-",
        &gx(0.0),
        "0",
        "-",
        "0",
        "0",
        "circle",
        &t,
        &t,
        &t,
    ]);
    sc.line(&["finish"]);
    files.push("big.ulog".into());
    let Some([rust, python, cpp]) = drive_all(&sc.text, dir.path()) else {
        return;
    };
    let lines = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    let (r, p, c) = (lines(&rust), lines(&python), lines(&cpp));
    for (i, want) in r.iter().enumerate() {
        assert_eq!(p.get(i), Some(want), "Python's line {i} differs from Rust's");
        assert_eq!(c.get(i), Some(want), "C++'s line {i} differs from Rust's");
    }
    assert_eq!((p.len(), c.len()), (r.len(), r.len()));
    assert_same_files(dir.path(), &files);
    // The fuzz reached every refusal.
    for words in [
        "is not finite",
        "is negative",
        "an entity's name cannot be empty",
        "would make a cycle",
        "before any frame was started",
        "a frame was not written: instantaneous time",
        "a frame was not written: persistent",
        "<heights option>",
        "<picture option>",
        "polygon has no vertices",
        "a path needs at least two points",
        "big.ulog: a frame was not written: its record of 67108927 bytes is longer than a reader takes (67108864 bytes)",
    ] {
        assert!(rust.contains(words), "no refusal says {words:?}:\n{rust}");
    }
    // What they wrote reads without a warning: nothing undrawable got through.
    for file in &files {
        let f = std::fs::File::open(dir.path().join("rust").join(file)).unwrap();
        let log = underlay::log::native::read(f).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(log.warnings.is_empty(), "{file}: {:?}", log.warnings);
    }
}

/// Frames of the sequence each writer streams live (the first of the
/// 10,000 of the file): all of them arrive within the 8 s `underlay live`
/// runs on a loaded two-core machine, and the test stays short.
const LIVE_FRAMES: usize = 2_000;

#[test]
fn three_writers_stream_live_over_udp_and_tcp() {
    if !have_tool("ffmpeg") {
        return;
    }
    let (Some(py), Some(cpp)) = (python(), cpp_driver()) else {
        return;
    };
    let dir = tmp();
    let udp: Vec<u16> = (0..3).map(|_| free_udp_port()).collect();
    let tcp: Vec<u16> = (0..3)
        .map(|_| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        })
        .collect();
    let cam = free_udp_port();
    let mut cmd = underlay_cmd();
    cmd.args(["live", &format!("udp://127.0.0.1:{cam}")]);
    for p in &udp {
        cmd.args(["--log", &format!("udp://127.0.0.1:{p}")]);
    }
    for p in &tcp {
        cmd.args(["--log", &format!("tcp://127.0.0.1:{p}")]);
    }
    let calib = identity_calib(dir.path());
    cmd.arg("--calib")
        .arg(&calib)
        .args(["--no-mask", "--duration", "8", "--wait", "30", "--no-view"]);
    cmd.arg("--out").arg(dir.path().join("live.ts"));
    let mut live = Running(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let _camera = Running(
        Command::new("ffmpeg")
            .args([
                "-v",
                "error",
                "-re",
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=160x120:rate=10",
                "-t",
                "40",
            ])
            .args([
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-tune",
                "zerolatency",
                "-g",
                "10",
            ])
            .args(["-f", "mpegts", &format!("udp://127.0.0.1:{cam}?pkt_size=1316")])
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Wait for the TCP sources to listen (without connecting: a connection
    // that sends nothing would count as a bad sender).
    for p in &tcp {
        assert!(
            listening(*p, Duration::from_secs(30)),
            "underlay live did not listen on {p}"
        );
    }
    // Each writer: the sequence over UDP (paced), then over TCP.
    let scripts: Vec<PathBuf> = (0..3)
        .map(|i| {
            let mut text = sequence(&open_line("udp", &udp[i].to_string()), LIVE_FRAMES, 10).text;
            text += &sequence(&open_line("tcp", &tcp[i].to_string()), LIVE_FRAMES, 0).text;
            let p = dir.path().join(format!("live{i}.txt"));
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect();
    let rust_script = std::fs::read_to_string(&scripts[0]).unwrap();
    let rust_dir = dir.path().to_owned();
    let rust = std::thread::spawn(move || drive_rust(&rust_script, &rust_dir));
    let python = std::thread::spawn({
        let (script, d) = (scripts[1].clone(), dir.path().to_owned());
        move || run_driver(python_cmd(&py), &script, &d)
    });
    let c = run_driver(Command::new(&cpp), &scripts[2], dir.path());
    let said = [rust.join().unwrap(), python.join().unwrap(), c];
    for s in &said {
        assert_eq!(s, "finish ok\nfinish ok\n", "{said:?}");
    }
    let status = live.0.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut live.0.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    // The file each TCP sender streamed, for its length.
    let file = dir.path().join("rust");
    std::fs::create_dir_all(&file).unwrap();
    let file_script = sequence(&open_line("open", "all.ulog"), LIVE_FRAMES, 0).text;
    drive_rust(&file_script, &file);
    let file_len = std::fs::metadata(file.join("all.ulog")).unwrap().len();
    let counts = |port: u16, scheme: &str| -> (u64, u64, u64) {
        let line = err
            .lines()
            .find(|l| {
                l.trim_start()
                    .starts_with(&format!("{scheme}://127.0.0.1:{port}:"))
            })
            .unwrap_or_else(|| panic!("no counts of {scheme} port {port} in\n{err}"));
        let nums: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .map(|w| w.parse().unwrap())
            .collect();
        // 127 0 0 1 PORT, then packets, bytes, ignored.
        (nums[5], nums[6], nums[7])
    };
    let udp_counts: Vec<_> = udp.iter().map(|p| counts(*p, "udp")).collect();
    for (i, c) in udp_counts.iter().enumerate() {
        // UDP may lose datagrams on a loaded machine: nine in ten must
        // come, each a whole log (none ignored).
        assert!(
            c.0 * 10 >= LIVE_FRAMES as u64 * 9 && c.0 <= LIVE_FRAMES as u64,
            "UDP sender {i}: {c:?}\n{err}"
        );
        assert_eq!(c.2, 0, "UDP sender {i}: {c:?}\n{err}");
    }
    for (i, p) in tcp.iter().enumerate() {
        let c = counts(*p, "tcp");
        assert_eq!((c.1, c.2), (file_len, 0), "TCP sender {i}: {c:?}\n{err}");
    }
}

/// Receives datagrams on a socket of its own until none came for a second.
fn receive_all() -> (u16, std::thread::JoinHandle<Vec<Vec<u8>>>) {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    socket.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    // Room for every datagram even while this thread waits for a core
    // (the kernel caps it at net.core.rmem_max, 4 MiB here).
    let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(4 << 20);
    let handle = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65_536];
        while let Ok(n) = socket.recv(&mut buf) {
            got.push(buf[..n].to_vec());
        }
        got
    });
    (port, handle)
}

/// Over UDP the three writers send the same datagrams, each a whole log
/// (prefix, header, the entities its frame names with their ancestors,
/// the frame) that reads without a warning.
#[test]
fn three_writers_send_the_same_datagrams() {
    const FRAMES: usize = 300;
    let (Some(py), Some(cpp)) = (python(), cpp_driver()) else {
        return;
    };
    let dir = tmp();
    let mut received = Vec::new();
    for who in 0..3 {
        let (port, rx) = receive_all();
        let script = sequence(&open_line("udp", &port.to_string()), FRAMES, 10).text;
        let file = dir.path().join(format!("udp{who}.txt"));
        std::fs::write(&file, &script).unwrap();
        let said = match who {
            0 => drive_rust(&script, dir.path()),
            1 => run_driver(python_cmd(&py), &file, dir.path()),
            _ => run_driver(Command::new(&cpp), &file, dir.path()),
        };
        assert_eq!(said, "finish ok\n", "writer {who}");
        received.push(rx.join().unwrap());
    }
    assert_eq!(received[0].len(), FRAMES, "datagrams from Rust");
    assert!(
        received[1] == received[0],
        "Python sent other datagrams than Rust"
    );
    assert!(received[2] == received[0], "C++ sent other datagrams than Rust");
    for d in &received[0] {
        let log = underlay::log::native::read(&d[..]).unwrap();
        assert_eq!(log.frames.len(), 1);
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    }
}
