//! RoboViz's drawing protocol: the UDP datagrams 3D-league agents send
//! their debug drawings in, parsed into commands.
//!
//! One datagram holds commands back to back. Numbers are floats written
//! as 6 ASCII characters (`1.2500`, `-3.100`), colours are bytes, strings
//! end with a NUL byte. The first two bytes say what follows:
//!
//! | bytes | command |
//! |---|---|
//! | `0 0` | swap buffers: set-name prefix (empty: every set) |
//! | `1 0` | circle on the floor: x y radius thickness, RGB, set |
//! | `1 1` | line: x1 y1 z1 x2 y2 z2 thickness, RGB, set |
//! | `1 2` | point: x y z size, RGB, set |
//! | `1 3` | sphere: x y z radius, RGB, set |
//! | `1 4` | polygon: n, RGBA, n × (x y z), set |
//! | `2 0` | annotation: x y z, RGB, text, set |
//! | `2 1` / `2 2` | agent annotation: agent, RGB, text / clear: agent |
//! | `3 0` | select agent: agent |
//!
//! The agent byte is `unum − 1` for the left team, `unum + 127` for the
//! right. Shapes go into their set's back buffer; a swap publishes the
//! back buffers of every set whose name starts with its prefix.

use crate::sexp::parse_f64;

/// A colour with alpha.
pub type Rgba8 = [u8; 4];

/// One drawing command.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Swap {
        prefix: String,
    },
    Circle {
        center: [f64; 2],
        radius: f64,
        thickness: f64,
        color: Rgba8,
        set: String,
    },
    Line {
        start: [f64; 3],
        end: [f64; 3],
        thickness: f64,
        color: Rgba8,
        set: String,
    },
    Point {
        position: [f64; 3],
        size: f64,
        color: Rgba8,
        set: String,
    },
    Sphere {
        center: [f64; 3],
        radius: f64,
        color: Rgba8,
        set: String,
    },
    Polygon {
        vertices: Vec<[f64; 3]>,
        color: Rgba8,
        set: String,
    },
    Annotation {
        position: [f64; 3],
        text: String,
        color: Rgba8,
        set: String,
    },
    AgentAnnotation {
        agent: Agent,
        text: String,
        color: Rgba8,
    },
    AgentAnnotationClear {
        agent: Agent,
    },
    SelectAgent {
        agent: Agent,
    },
}

/// An agent as the agent byte names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Agent {
    /// Whether it plays on the right.
    pub right: bool,
    pub unum: u32,
}

impl Agent {
    fn from_byte(b: u8) -> Agent {
        Agent {
            right: b >= 128,
            unum: u32::from(b % 128) + 1,
        }
    }

    /// The byte that names this agent.
    pub fn to_byte(self) -> u8 {
        (self.unum.saturating_sub(1).min(127) as u8) | if self.right { 128 } else { 0 }
    }
}

/// A datagram that could not be read whole: the commands before the bad
/// one, and what was wrong where.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("at byte {offset} of the datagram: {message}")]
pub struct DatagramError {
    pub offset: usize,
    pub message: String,
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn fail<T>(&self, message: impl Into<String>) -> Result<T, DatagramError> {
        Err(DatagramError {
            offset: self.at,
            message: message.into(),
        })
    }

    fn byte(&mut self) -> Result<u8, DatagramError> {
        match self.b.get(self.at) {
            Some(&v) => {
                self.at += 1;
                Ok(v)
            }
            None => self.fail("the datagram ends inside a command"),
        }
    }

    fn float(&mut self) -> Result<f64, DatagramError> {
        let Some(raw) = self.b.get(self.at..self.at + 6) else {
            return self.fail("the datagram ends inside a number");
        };
        let text = trim(raw);
        match parse_f64(text).filter(|v| v.is_finite()) {
            Some(v) => {
                self.at += 6;
                Ok(v)
            }
            None => self.fail(format!("{:?} is not a number", String::from_utf8_lossy(raw))),
        }
    }

    fn floats<const N: usize>(&mut self) -> Result<[f64; N], DatagramError> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.float()?;
        }
        Ok(out)
    }

    fn rgb(&mut self) -> Result<Rgba8, DatagramError> {
        Ok([self.byte()?, self.byte()?, self.byte()?, 255])
    }

    fn string(&mut self) -> Result<String, DatagramError> {
        let rest = &self.b[self.at.min(self.b.len())..];
        match rest.iter().position(|&c| c == 0) {
            Some(n) => {
                let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.at += n + 1;
                Ok(s)
            }
            None => self.fail("a string without its closing NUL byte"),
        }
    }
}

/// Spaces and NUL bytes around a 6-character number.
fn trim(raw: &[u8]) -> &[u8] {
    let pad = |c: &u8| *c == b' ' || *c == 0;
    let start = raw.iter().position(|c| !pad(c)).unwrap_or(raw.len());
    let end = raw.iter().rposition(|c| !pad(c)).map_or(start, |e| e + 1);
    &raw[start..end]
}

/// Parses a datagram's commands. On a malformed command, returns the
/// commands before it and the error.
pub fn parse_datagram(bytes: &[u8]) -> (Vec<Command>, Option<DatagramError>) {
    let mut c = Cursor { b: bytes, at: 0 };
    let mut out = Vec::new();
    while c.at < bytes.len() {
        let start = c.at;
        match command(&mut c) {
            Ok(cmd) => out.push(cmd),
            Err(mut e) => {
                if e.offset < start {
                    e.offset = start;
                }
                return (out, Some(e));
            }
        }
    }
    (out, None)
}

fn command(c: &mut Cursor<'_>) -> Result<Command, DatagramError> {
    let (kind, sub) = (c.byte()?, c.byte()?);
    Ok(match (kind, sub) {
        (0, 0) => Command::Swap { prefix: c.string()? },
        (1, 0) => {
            let [x, y, radius, thickness] = c.floats()?;
            Command::Circle {
                center: [x, y],
                radius,
                thickness,
                color: c.rgb()?,
                set: c.string()?,
            }
        }
        (1, 1) => {
            let [x1, y1, z1, x2, y2, z2, thickness] = c.floats()?;
            Command::Line {
                start: [x1, y1, z1],
                end: [x2, y2, z2],
                thickness,
                color: c.rgb()?,
                set: c.string()?,
            }
        }
        (1, 2) => {
            let [x, y, z, size] = c.floats()?;
            Command::Point {
                position: [x, y, z],
                size,
                color: c.rgb()?,
                set: c.string()?,
            }
        }
        (1, 3) => {
            let [x, y, z, radius] = c.floats()?;
            Command::Sphere {
                center: [x, y, z],
                radius,
                color: c.rgb()?,
                set: c.string()?,
            }
        }
        (1, 4) => {
            let n = c.byte()?;
            let color = [c.byte()?, c.byte()?, c.byte()?, c.byte()?];
            let mut vertices = Vec::with_capacity(usize::from(n));
            for _ in 0..n {
                vertices.push(c.floats::<3>()?);
            }
            Command::Polygon {
                vertices,
                color,
                set: c.string()?,
            }
        }
        (2, 0) => {
            let position = c.floats::<3>()?;
            let color = c.rgb()?;
            Command::Annotation {
                position,
                color,
                text: c.string()?,
                set: c.string()?,
            }
        }
        (2, 1) => {
            let agent = Agent::from_byte(c.byte()?);
            let color = c.rgb()?;
            Command::AgentAnnotation {
                agent,
                color,
                text: c.string()?,
            }
        }
        (2, 2) => Command::AgentAnnotationClear {
            agent: Agent::from_byte(c.byte()?),
        },
        (3, 0) => Command::SelectAgent {
            agent: Agent::from_byte(c.byte()?),
        },
        _ => {
            c.at -= 2;
            return c.fail(format!("unknown command {kind} {sub}"));
        }
    })
}

/// Writes a number as RoboViz's senders do: 6 characters, cut from a
/// fixed-point rendering (so `1.25` → `1.2500`, `-3.1` → `-3.100`).
pub fn write_float(out: &mut Vec<u8>, v: f64) {
    let s = format!("{v:.6}");
    let mut b = s.into_bytes();
    b.resize(6.max(b.len()), b' ');
    out.extend_from_slice(&b[..6]);
}

/// Encodes a command as a sender would (for tests, fixtures and tools).
pub fn encode(cmd: &Command, out: &mut Vec<u8>) {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    };
    let rgb = |out: &mut Vec<u8>, c: &Rgba8| out.extend_from_slice(&c[..3]);
    match cmd {
        Command::Swap { prefix } => {
            out.extend_from_slice(&[0, 0]);
            string(out, prefix);
        }
        Command::Circle {
            center,
            radius,
            thickness,
            color,
            set,
        } => {
            out.extend_from_slice(&[1, 0]);
            for v in [center[0], center[1], *radius, *thickness] {
                write_float(out, v);
            }
            rgb(out, color);
            string(out, set);
        }
        Command::Line {
            start,
            end,
            thickness,
            color,
            set,
        } => {
            out.extend_from_slice(&[1, 1]);
            for v in start.iter().chain(end).chain([thickness]) {
                write_float(out, *v);
            }
            rgb(out, color);
            string(out, set);
        }
        Command::Point {
            position,
            size,
            color,
            set,
        } => {
            out.extend_from_slice(&[1, 2]);
            for v in position.iter().chain([size]) {
                write_float(out, *v);
            }
            rgb(out, color);
            string(out, set);
        }
        Command::Sphere {
            center,
            radius,
            color,
            set,
        } => {
            out.extend_from_slice(&[1, 3]);
            for v in center.iter().chain([radius]) {
                write_float(out, *v);
            }
            rgb(out, color);
            string(out, set);
        }
        Command::Polygon { vertices, color, set } => {
            out.extend_from_slice(&[1, 4, vertices.len().min(255) as u8]);
            out.extend_from_slice(color);
            for v in vertices.iter().take(255) {
                for x in v {
                    write_float(out, *x);
                }
            }
            string(out, set);
        }
        Command::Annotation {
            position,
            text,
            color,
            set,
        } => {
            out.extend_from_slice(&[2, 0]);
            for v in position {
                write_float(out, *v);
            }
            rgb(out, color);
            string(out, text);
            string(out, set);
        }
        Command::AgentAnnotation { agent, text, color } => {
            out.extend_from_slice(&[2, 1, agent.to_byte()]);
            rgb(out, color);
            string(out, text);
        }
        Command::AgentAnnotationClear { agent } => out.extend_from_slice(&[2, 2, agent.to_byte()]),
        Command::SelectAgent { agent } => out.extend_from_slice(&[3, 0, agent.to_byte()]),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One of each command.
    /// `cmds` encoded as one datagram.
    pub(crate) fn datagram(cmds: &[Command]) -> Vec<u8> {
        let mut d = Vec::new();
        for c in cmds {
            encode(c, &mut d);
        }
        d
    }

    pub(crate) fn every_command() -> Vec<Command> {
        let s = |n: &str| n.to_owned();
        vec![
            Command::Circle {
                center: [1.25, -3.1],
                radius: 0.5,
                thickness: 2.0,
                color: [255, 0, 0, 255],
                set: s("animated.Alpha.path"),
            },
            Command::Line {
                start: [0.0, 0.0, 0.0],
                end: [10.5, -2.25, 1.0],
                thickness: 3.0,
                color: [0, 255, 0, 255],
                set: s("animated.Alpha.path"),
            },
            Command::Point {
                position: [1.0, 2.0, 0.0],
                size: 5.0,
                color: [1, 2, 3, 255],
                set: s("animated.Alpha.points"),
            },
            Command::Sphere {
                center: [-20.5, 7.0, 0.3],
                radius: 0.25,
                color: [9, 9, 9, 255],
                set: s("static.ball"),
            },
            Command::Polygon {
                vertices: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]],
                color: [10, 20, 30, 128],
                set: s("animated.Bravo"),
            },
            Command::Annotation {
                position: [3.0, 4.0, 0.5],
                text: s("kick!"),
                color: [200, 100, 0, 255],
                set: s("animated.Alpha.text"),
            },
            Command::AgentAnnotation {
                agent: Agent { right: true, unum: 2 },
                text: s("striker"),
                color: [1, 1, 1, 255],
            },
            Command::AgentAnnotationClear {
                agent: Agent {
                    right: false,
                    unum: 11,
                },
            },
            Command::SelectAgent {
                agent: Agent {
                    right: false,
                    unum: 1,
                },
            },
            Command::Swap {
                prefix: s("animated."),
            },
        ]
    }

    #[test]
    fn every_command_round_trips() {
        let mut d = Vec::new();
        for c in every_command() {
            encode(&c, &mut d);
        }
        let (got, err) = parse_datagram(&d);
        assert_eq!(err, None);
        assert_eq!(got, every_command());
    }

    #[test]
    fn numbers_as_senders_write_them() {
        let mut b = Vec::new();
        for v in [1.25, -3.1, 0.0, 123456.7, -0.5] {
            write_float(&mut b, v);
        }
        assert_eq!(&b[..], b"1.2500-3.1000.0000123456-0.500");
        let mut d = vec![1, 0];
        d.extend_from_slice(b" 1.0  2.5     0.1 1.000 ");
        d.extend_from_slice(&[1, 2, 3]);
        d.extend_from_slice(b"s\0");
        let (got, err) = parse_datagram(&d);
        assert_eq!(err, None, "padded numbers");
        assert!(matches!(&got[0], Command::Circle { center: [x, _], .. } if *x == 1.0));
    }

    #[test]
    fn bad_datagrams_keep_what_came_before() {
        let mut d = Vec::new();
        encode(&Command::Swap { prefix: "a".into() }, &mut d);
        let good = d.len();
        d.extend_from_slice(&[1, 0]);
        d.extend_from_slice(b"1.0000abcdef");
        let (got, err) = parse_datagram(&d);
        assert_eq!(got.len(), 1);
        let err = err.unwrap();
        assert_eq!(err.offset, good + 8);
        assert!(err.message.contains("\"abcdef\""), "{err}");
        assert_eq!(parse_datagram(&[9, 9]).1.unwrap().message, "unknown command 9 9");
        assert!(parse_datagram(&[0, 0, b'a']).1.unwrap().message.contains("NUL"));
        assert!(parse_datagram(&[1]).1.is_some());
        assert_eq!(parse_datagram(&[]), (vec![], None));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random and mutated datagrams never panic, and every error lies
        /// inside the datagram.
        #[test]
        fn datagrams_never_panic(
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::prelude::any::<u8>()), 0..6),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let (_, e) = parse_datagram(&noise);
            proptest::prop_assert!(e.is_none_or(|e| e.offset <= noise.len()));
            let mut d = Vec::new();
            for c in every_command() {
                encode(&c, &mut d);
            }
            for (i, v) in edits {
                let i = i.index(d.len());
                d[i] = v;
            }
            d.truncate(cut.index(d.len() + 1));
            let (cmds, e) = parse_datagram(&d);
            proptest::prop_assert!(e.is_none_or(|e| e.offset <= d.len()));
            proptest::prop_assert!(cmds.len() <= every_command().len() + d.len() / 3);
        }
    }
}
