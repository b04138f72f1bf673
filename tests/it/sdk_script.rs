//! The writer script of "one script, three writers, one file" (issue 49):
//! a line-based list of writer calls that underlay's Rust writer (here),
//! the Python package (`python/tests/drive.py`) and the C++ header
//! (`cpp/tests/drive.cpp`) each run, so that their bytes and their words
//! can be compared.
//!
//! One command a line, tokens separated by one space. A double is `f` and
//! the 16 hex digits of its bits, a 32-bit float `g` and 8, a string `s`
//! and the hex of its UTF-8 bytes (or `r`, a count, `.` and the hex of
//! bytes repeated that many times), an integer in decimal, an absent value
//! `-`:
//!
//! ```text
//! open FILE HEIGHTS PICTURE HEADER     udp PORT … / tcp PORT … (127.0.0.1)
//!   HEADER = name relative(0|1) unit threshold(f|-) max_level(int|-) bounds(4 f | -)
//! instant T · persistent START END · end · default NAME · entity NAME PARENT…
//! prim COLOR FILL THICKNESS(g) WORLD(0|1) ENTITY(s|-) LEVEL PICTURE(0|1) KIND ARGS…
//!   circle x y r · line x0 y0 x1 y1 · rect x y length width orientation
//!   polygon|polyline N x y… · text x y TEXT size · point x y DOT(0|1) size
//!   sector x y inner outer start sweep · arc x y r start sweep
//!   line3 p q · polyline3|polygon3 N x y z… · circle3 x y z r (nx ny nz | -)
//!   text3 x y z TEXT size · point3 x y z DOT size · sphere x y z r
//!   cylinder x y z r h · box3 x y z l w h orientation
//! flush · finish        print `flush ok` or `flush error: MESSAGE`
//! pause MICROSECONDS
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use underlay::log::{DisplayHints, Header, MarkerKind, Rgba, Shape, TimeUnit, Vec2, Writer, WriterOptions};

pub fn fx(v: f64) -> String {
    format!("f{:016x}", v.to_bits())
}

pub fn gx(v: f32) -> String {
    format!("g{:08x}", v.to_bits())
}

pub fn sx(s: &str) -> String {
    let mut out = String::from("s");
    for b in s.as_bytes() {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn f(t: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(&t[1..], 16).expect("a double's bits"))
}

fn g(t: &str) -> f32 {
    f32::from_bits(u32::from_str_radix(&t[1..], 16).expect("a float's bits"))
}

fn s(t: &str) -> String {
    if let Some(r) = t.strip_prefix('r') {
        // r<count>.<hex>: the bytes repeated.
        let (count, hex) = r.split_once('.').expect("r<count>.<hex>");
        return s(&format!("s{hex}")).repeat(count.parse().expect("a count"));
    }
    let bytes: Vec<u8> = (1..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).expect("hex"))
        .collect();
    String::from_utf8(bytes).expect("the Rust driver takes UTF-8 only")
}

fn header(t: &[&str]) -> Header {
    Header {
        name: s(t[0]),
        time_unit: if t[1] == "1" {
            TimeUnit::RelativeSeconds
        } else {
            TimeUnit::EpochSeconds
        },
        world_unit: s(t[2]),
        hints: DisplayHints {
            instant_threshold: (t[3] != "-").then(|| f(t[3])),
            default_max_level: (t[4] != "-").then(|| t[4].parse().unwrap()),
            world_bounds: (t[5] != "-").then(|| (Vec2::new(f(t[5]), f(t[6])), Vec2::new(f(t[7]), f(t[8])))),
        },
    }
}

/// A Rust writer of any sink.
enum Any {
    File(Writer<std::fs::File>),
    Udp(Writer<underlay::log::net::UdpSink>),
    Tcp(Writer<std::net::TcpStream>),
}

macro_rules! each {
    ($w:expr, $v:ident => $e:expr) => {
        match $w {
            Any::File($v) => $e,
            Any::Udp($v) => $e,
            Any::Tcp($v) => $e,
        }
    };
}

/// Runs `script` through underlay's Rust writer, files in `dir`; returns
/// what `flush` and `finish` said, one line each, with `dir` taken out of
/// the messages (the other drivers run in `dir`).
pub fn drive_rust(script: &str, dir: &Path) -> String {
    let mut out = String::new();
    let mut w: Option<Any> = None;
    let prefix = format!("{}/", dir.display());
    for line in script.lines() {
        let t: Vec<&str> = line.split(' ').collect();
        match t[0] {
            "open" | "udp" | "tcp" => {
                let opts = WriterOptions {
                    heights: t[2] == "1",
                    picture: t[3] == "1",
                    ..WriterOptions::default()
                };
                let h = header(&t[4..]);
                drop(w.take());
                w = Some(match t[0] {
                    "open" => Any::File(Writer::create_with_options(&dir.join(t[1]), h, opts).unwrap()),
                    "udp" => {
                        Any::Udp(Writer::udp(("127.0.0.1", t[1].parse::<u16>().unwrap()), h, opts).unwrap())
                    }
                    _ => Any::Tcp(Writer::tcp(("127.0.0.1", t[1].parse::<u16>().unwrap()), h, opts).unwrap()),
                });
            }
            "flush" | "finish" => {
                let r = if t[0] == "flush" {
                    each!(w.as_mut().unwrap(), x => x.flush())
                } else {
                    each!(w.take().unwrap(), x => x.finish().map(drop))
                };
                match r {
                    Ok(()) => out.push_str(&format!("{} ok\n", t[0])),
                    Err(e) => out.push_str(&format!(
                        "{} error: {}\n",
                        t[0],
                        e.to_string().replace(&prefix, "")
                    )),
                }
            }
            "pause" => std::thread::sleep(std::time::Duration::from_micros(t[1].parse().unwrap())),
            _ => each!(w.as_mut().unwrap(), x => step(x, &t)),
        }
    }
    out
}

fn step<W: Write>(w: &mut Writer<W>, t: &[&str]) {
    match t[0] {
        "instant" => {
            w.instant(f(t[1]));
        }
        "persistent" => {
            w.persistent(f(t[1]), f(t[2]));
        }
        "end" => {
            w.end_frame();
        }
        "default" => {
            w.default_entity(&s(t[1]));
        }
        "entity" => {
            let parents: Vec<String> = t[2..].iter().map(|p| s(p)).collect();
            let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
            w.declare_entity(&s(t[1]), &parents);
        }
        "prim" => primitive(w, t),
        other => panic!("unknown command {other}"),
    }
}

fn points2(a: &[&str]) -> Vec<(f64, f64)> {
    let n: usize = a[0].parse().unwrap();
    (0..n).map(|i| (f(a[1 + 2 * i]), f(a[2 + 2 * i]))).collect()
}

fn points3(a: &[&str]) -> Vec<[f64; 3]> {
    let n: usize = a[0].parse().unwrap();
    (0..n)
        .map(|i| [f(a[1 + 3 * i]), f(a[2 + 3 * i]), f(a[3 + 3 * i])])
        .collect()
}

fn primitive<W: Write>(w: &mut Writer<W>, t: &[&str]) {
    let picture = t[7] == "1";
    let a = &t[9..];
    let p2 = |i: usize| (f(a[i]), f(a[i + 1]));
    let p3 = |i: usize| [f(a[i]), f(a[i + 1]), f(a[i + 2])];
    let marker = |d: &str| {
        if d == "1" {
            MarkerKind::Dot
        } else {
            MarkerKind::Cross
        }
    };
    let floor = |kind: &str| -> Shape {
        match kind {
            "circle" => Shape::Circle {
                center: p2(0).into(),
                radius: f(a[2]),
            },
            "line" => Shape::Line {
                start: p2(0).into(),
                end: p2(2).into(),
            },
            "rect" => Shape::Rectangle {
                center: p2(0).into(),
                size: p2(2).into(),
                orientation: f(a[4]),
            },
            "polygon" | "polyline" => Shape::Polygon {
                vertices: points2(a).into_iter().map(Vec2::from).collect(),
                closed: kind == "polygon",
            },
            "text" => Shape::Text {
                anchor: p2(0).into(),
                text: s(a[2]).into(),
                size: f(a[3]),
            },
            "point" => Shape::Point {
                position: p2(0).into(),
                kind: marker(a[2]),
                size: f(a[3]),
            },
            "sector" => Shape::Sector {
                center: p2(0).into(),
                inner: f(a[2]),
                outer: f(a[3]),
                start: f(a[4]),
                sweep: f(a[5]),
            },
            _ => Shape::Sector {
                center: p2(0).into(),
                inner: f(a[2]),
                outer: f(a[2]),
                start: f(a[3]),
                sweep: f(a[4]),
            },
        }
    };
    let mut b = match t[8] {
        k @ ("circle" | "line" | "rect" | "polygon" | "polyline" | "text" | "point" | "sector" | "arc")
            if picture =>
        {
            w.picture(floor(k))
        }
        "circle" => w.circle(p2(0), f(a[2])),
        "line" => w.line(p2(0), p2(2)),
        "rect" => w.rectangle(p2(0), p2(2), f(a[4])),
        "polygon" => w.polygon(points2(a)),
        "polyline" => w.polyline(points2(a)),
        "text" => w.text(p2(0), &s(a[2]), f(a[3])),
        "point" => w.point(p2(0), marker(a[2]), f(a[3])),
        "sector" => w.sector(p2(0), f(a[2]), f(a[3]), f(a[4]), f(a[5])),
        "arc" => w.arc(p2(0), f(a[2]), f(a[3]), f(a[4])),
        "line3" => w.line3(p3(0), p3(3)),
        "polyline3" => w.polyline3(points3(a)),
        "polygon3" => w.polygon3(points3(a)),
        "circle3" if a[4] == "-" => w.circle3(p3(0), f(a[3])),
        "circle3" => w.circle3_facing(p3(0), f(a[3]), p3(4)),
        "text3" => w.text3(p3(0), &s(a[3]), f(a[4])),
        "point3" => w.point3(p3(0), marker(a[3]), f(a[4])),
        "sphere" => w.sphere(p3(0), f(a[3])),
        "cylinder" => w.cylinder(p3(0), f(a[3]), f(a[4])),
        "box3" => w.box3(p3(0), p3(3), f(a[6])),
        other => panic!("unknown shape {other}"),
    };
    if t[1] != "-" {
        b = b.color(Rgba(t[1].parse().unwrap()));
    }
    if t[2] != "-" {
        b = b.fill(Rgba(t[2].parse().unwrap()));
    }
    let thickness = g(t[3]);
    if thickness.to_bits() != 0 {
        b = b.thickness(thickness);
    }
    if t[4] == "1" {
        b = b.world_units();
    }
    if t[5] != "-" {
        b = b.entity(&s(t[5]));
    }
    let level: i32 = t[6].parse().unwrap();
    if level != 0 {
        b = b.level(level);
    }
    drop(b);
}

/// A small deterministic random source (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A number in ±10⁴, with some at the limits of doubles.
    pub fn num(&mut self) -> f64 {
        if self.chance(0.05) {
            *self.pick(&[
                f64::MAX,
                -f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                -0.0,
                0.0,
                1e300,
                -1e-300,
                1.0,
            ])
        } else {
            ((self.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2e4
        }
    }

    /// A size ≥ 0, with some at the limits.
    pub fn size(&mut self) -> f64 {
        if self.chance(0.05) {
            *self.pick(&[f64::MAX, 5e-324, -0.0, 0.0, 1e300])
        } else {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 500.0
        }
    }
}

/// A script being built, with what a reader should find in its file.
#[derive(Default)]
pub struct Script {
    pub text: String,
    /// Frames written: instantaneous, persistent.
    pub frames: (usize, usize),
    /// Primitives by the kind `log info` names.
    pub kinds: BTreeMap<String, usize>,
    /// The open frame: whether persistent, and its time's bits.
    open: Option<(bool, u64, u64)>,
}

impl Script {
    pub fn line(&mut self, parts: &[&str]) {
        self.text.push_str(&parts.join(" "));
        self.text.push('\n');
    }

    pub fn instant(&mut self, t: f64) {
        if self.open != Some((false, t.to_bits(), 0)) {
            self.end_open();
            self.open = Some((false, t.to_bits(), 0));
        }
        self.line(&["instant", &fx(t)]);
    }

    pub fn persistent(&mut self, a: f64, b: f64) {
        if self.open != Some((true, a.to_bits(), b.to_bits())) {
            self.end_open();
            self.open = Some((true, a.to_bits(), b.to_bits()));
        }
        self.line(&["persistent", &fx(a), &fx(b)]);
    }

    pub fn end(&mut self) {
        self.end_open();
        self.line(&["end"]);
    }

    fn end_open(&mut self) {
        match self.open.take() {
            Some((false, ..)) => self.frames.0 += 1,
            Some((true, ..)) => self.frames.1 += 1,
            None => {}
        }
    }

    pub fn finish(&mut self) {
        self.end_open();
        self.line(&["finish"]);
    }

    /// A primitive that a reader keeps: counted under `label`.
    pub fn prim(&mut self, style: &[String], label: &str, args: &[String]) {
        *self.kinds.entry(label.to_owned()).or_default() += 1;
        let mut parts: Vec<&str> = vec!["prim"];
        parts.extend(style.iter().map(String::as_str));
        parts.extend(args.iter().map(String::as_str));
        self.line(&parts);
    }
}

/// A header's tokens.
pub fn header_tokens(name: &str, threshold: Option<f64>, level: Option<i32>, bounds: bool) -> Vec<String> {
    let mut t = vec![sx(name), "0".into(), sx("mm")];
    t.push(threshold.map_or("-".into(), fx));
    t.push(level.map_or("-".into(), |l| l.to_string()));
    if bounds {
        t.extend([fx(-6000.0), fx(-4500.0), fx(6000.0), fx(4500.0)]);
    } else {
        t.push("-".into());
    }
    t
}
