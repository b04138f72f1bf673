//! Agent perception logs: every message an agent received from the
//! server, one per line, optionally prefixed by the time it was received
//! (a number, e.g. wall-clock seconds).
//!
//! A message is a run of S-expressions; the reader keeps what placing the
//! agent's view needs:
//! - `(time (now 27.03))`: the simulation time, the log's clock;
//! - `(GS (t 18.74)(pm PlayOn)(tl A)(tr B)(sl 0)(sr 0))`, and SimSpark's
//!   `(GS (unum 3)(team left) …)` which names the agent;
//! - `(quat (n …)(q w x y z))`, `(pos (n …)(p x y z))`: the torso's true
//!   pose (rcssservermj);
//! - `(HJ (n name)(ax °))`: hinge joints (the head's yaw and pitch among them);
//! - `(See …)`: `(<marker> (pol d az inc))`, `(B (pol …))`,
//!   `(P (team X)(id n)(<part> (pol …))…)` (or SimSpark's older single
//!   `(P (team X)(id n)(pol …))`), `(L (pol …)(pol …))` field lines and
//!   SimSpark's `(mypos x y z)`, `(myorien °)`;
//! - `(MIC <name> (<azimuth°> <base64>)…)` (rcssservermj) and
//!   `(hear [team] <time> self|<direction°> <message>)` (SimSpark).
//!
//! Everything else (GYR, ACC, FRP, …) is skipped. A line that does not
//! parse, or has no simulation time, is skipped with a warning; the file
//! may be gzip'ed.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use super::{LoadError, ParseError, Warning, Warnings, input};
use crate::sexp::lines;
use crate::sexp::{Parser, Sexp, parse_f64};

/// A detection in the camera's polar coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Polar {
    /// Metres from the camera.
    pub distance: f64,
    /// Degrees, positive to the left of the view direction.
    pub azimuth: f64,
    /// Degrees, positive above the view direction.
    pub inclination: f64,
}

impl Polar {
    fn from_pol(s: Sexp<'_>) -> Option<Polar> {
        let [d, a, i] = s.numbers()?;
        (d.is_finite() && a.is_finite() && i.is_finite() && d >= 0.0).then_some(Polar {
            distance: d,
            azimuth: a,
            inclination: i,
        })
    }

    /// The point in the camera frame (x forward, y left, z up), metres.
    pub fn to_camera(self) -> [f64; 3] {
        let (sa, ca) = self.azimuth.to_radians().sin_cos();
        let (si, ci) = self.inclination.to_radians().sin_cos();
        [
            self.distance * ci * ca,
            self.distance * ci * sa,
            self.distance * si,
        ]
    }
}

/// A field marker seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeenMarker {
    /// Index into [`PerceptionLog::names`].
    pub name: u16,
    pub pol: Polar,
}

/// A part of another robot seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeenPart {
    /// Team name, index into [`PerceptionLog::names`].
    pub team: u16,
    pub unum: u32,
    /// Body part (`head`, `lfoot`, …; `body` for SimSpark's single
    /// vector), index into [`PerceptionLog::names`].
    pub part: u16,
    pub pol: Polar,
}

/// A message heard.
#[derive(Clone, Debug, PartialEq)]
pub struct Heard {
    /// Degrees relative to the head, `None` for the agent's own words.
    pub direction: Option<f64>,
    /// The message: decoded text when it is printable, else as sent.
    pub text: String,
}

/// A vision message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct See {
    pub markers: Range<usize>,
    pub ball: Option<Polar>,
    pub parts: Range<usize>,
    pub lines: Range<usize>,
    /// SimSpark's `mypos`: the camera's position in the world.
    pub my_pos: Option<[f64; 3]>,
    /// SimSpark's `myorien`: the camera's heading in degrees.
    pub my_orien: Option<f64>,
}

/// One message the agent received.
#[derive(Clone, Debug, PartialEq)]
pub struct Perception {
    /// 1-based line in the file.
    pub line: usize,
    /// The receive time the line starts with, if any.
    pub received: Option<f64>,
    /// Simulation time (`now`).
    pub time: f64,
    /// Game clock (`GS` `t`).
    pub game_time: Option<f64>,
    /// Play mode name, index into [`PerceptionLog::names`].
    pub play_mode: Option<u16>,
    /// The torso's orientation (w, x, y, z) and position.
    pub torso_quat: Option<[f64; 4]>,
    pub torso_pos: Option<[f64; 3]>,
    /// Hinge joints, as (name index, degrees), in [`PerceptionLog::joints`].
    pub joints: Range<usize>,
    pub see: Option<See>,
    pub heard: Range<usize>,
}

/// A whole perception log.
#[derive(Clone, Debug, Default)]
pub struct PerceptionLog {
    /// Names (markers, teams, parts, joints, play modes), interned.
    pub names: Vec<String>,
    pub messages: Vec<Perception>,
    pub joints: Vec<(u16, f64)>,
    pub markers: Vec<SeenMarker>,
    pub parts: Vec<SeenPart>,
    pub lines: Vec<[Polar; 2]>,
    pub heard: Vec<Heard>,
    /// The agent's team and number, when a message says (SimSpark's `GS`
    /// has `unum` and `team` left/right).
    pub unum: Option<u32>,
    pub side: Option<String>,
    /// Team names of the left and right side (`GS` `tl`/`tr`).
    pub team_names: [Option<String>; 2],
    pub warnings: Vec<Warning>,
    /// Lines passed over as not the format.
    pub skipped: crate::log::Skipped,
}

impl PerceptionLog {
    pub fn name(&self, i: u16) -> &str {
        self.names.get(i as usize).map_or("?", String::as_str)
    }

    pub fn message_joints(&self, p: &Perception) -> &[(u16, f64)] {
        self.joints.get(p.joints.clone()).unwrap_or(&[])
    }

    /// The angle of the joint named `name` in `p`, in degrees.
    pub fn joint(&self, p: &Perception, name: &str) -> Option<f64> {
        self.message_joints(p)
            .iter()
            .find(|(n, _)| self.name(*n) == name)
            .map(|&(_, v)| v)
    }

    pub fn see_markers(&self, s: &See) -> &[SeenMarker] {
        self.markers.get(s.markers.clone()).unwrap_or(&[])
    }

    pub fn see_parts(&self, s: &See) -> &[SeenPart] {
        self.parts.get(s.parts.clone()).unwrap_or(&[])
    }

    pub fn see_lines(&self, s: &See) -> &[[Polar; 2]] {
        self.lines.get(s.lines.clone()).unwrap_or(&[])
    }

    pub fn message_heard(&self, p: &Perception) -> &[Heard] {
        self.heard.get(p.heard.clone()).unwrap_or(&[])
    }

    /// The first and last simulation time.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        Some((self.messages.first()?.time, self.messages.last()?.time))
    }
}

/// Whether `bytes` (the start of a decompressed file) look like a
/// perception log: a line, after an optional number, starting with a
/// message that names the time or the game state.
pub fn sniff(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let Some((_, _, line)) = lines(head).find(|(_, _, l)| !l.iter().all(u8::is_ascii_whitespace)) else {
        return false;
    };
    let (_, msg) = split_receive_time(line);
    [&b"(time"[..], b"(GS", b"(HJ", b"(See", b"(quat", b"(pos", b"(GYR"]
        .iter()
        .any(|p| msg.starts_with(p))
}

/// Splits a leading receive time off a line.
fn split_receive_time(line: &[u8]) -> (Option<f64>, &[u8]) {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let line = &line[start..];
    if line.first() == Some(&b'(') || line.is_empty() {
        return (None, line);
    }
    let end = line
        .iter()
        .position(|&b| b == b' ' || b == b'\t' || b == b'(')
        .unwrap_or(line.len());
    match parse_f64(&line[..end]) {
        Some(t) if t.is_finite() => {
            let rest = &line[end..];
            let skip = rest
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            (Some(t), &rest[skip..])
        }
        _ => (None, line),
    }
}

/// Loads a perception log file (gzip'ed or plain).
pub fn load(path: &Path) -> Result<PerceptionLog, LoadError> {
    let bytes = input::read_file(path, input::MAX_AGENT_LOG)?;
    parse(&bytes).map_err(|error| LoadError::Parse {
        path: path.to_owned(),
        error,
    })
}

/// Reads a perception log from its (decompressed) bytes.
pub fn parse(bytes: &[u8]) -> Result<PerceptionLog, ParseError> {
    let mut r = Reader::default();
    let mut parser = Parser::new();
    for (line, offset, text) in lines(bytes) {
        let (received, msg) = split_receive_time(text);
        if msg.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parser.parse(msg) {
            Ok(doc) => {
                if let Err(m) = r.message(line, received, doc.items()) {
                    r.warnings.push(line, m);
                    r.log.skipped.add(offset, text.len() as u64 + 1);
                }
            }
            Err(e) => {
                let at = offset + (msg.as_ptr() as usize - text.as_ptr() as usize + e.offset) as u64;
                r.warnings
                    .push(line, format!("skipped: {} (byte {at} of the file)", e.kind));
                r.log.skipped.add(offset, text.len() as u64 + 1);
            }
        }
    }
    if r.log.messages.is_empty() {
        return Err(ParseError::NotThisFormat {
            what: "an agent perception log",
            why: "no line holds a message with a simulation time ((time (now …)))".to_owned(),
        });
    }
    let mut log = r.log;
    log.warnings = r.warnings.finish();
    Ok(log)
}

#[derive(Default)]
struct Reader {
    log: PerceptionLog,
    by_name: HashMap<Box<[u8]>, u16>,
    warnings: Warnings,
}

impl Reader {
    fn intern(&mut self, name: &[u8]) -> u16 {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        if self.log.names.len() >= usize::from(u16::MAX) {
            return u16::MAX;
        }
        let i = self.log.names.len() as u16;
        self.log.names.push(String::from_utf8_lossy(name).into_owned());
        self.by_name.insert(name.into(), i);
        i
    }

    fn message<'a>(
        &mut self,
        line: usize,
        received: Option<f64>,
        items: impl Iterator<Item = Sexp<'a>>,
    ) -> Result<(), String> {
        let joints_start = self.log.joints.len();
        let heard_start = self.log.heard.len();
        let mut p = Perception {
            line,
            received,
            time: f64::NAN,
            game_time: None,
            play_mode: None,
            torso_quat: None,
            torso_pos: None,
            joints: 0..0,
            see: None,
            heard: 0..0,
        };
        for item in items {
            match item.head() {
                Some(b"time") => {
                    if let Some(t) = item.find(b"now").and_then(|n| n.get(1)).and_then(|t| t.f64()) {
                        p.time = t;
                    }
                }
                Some(b"GS") => self.game_state(item, &mut p),
                Some(b"quat") => p.torso_quat = item.find(b"q").and_then(|q| q.numbers()),
                Some(b"pos") => p.torso_pos = item.find(b"p").and_then(|q| q.numbers()),
                Some(b"HJ") => {
                    let name = item.find(b"n").and_then(|n| n.get(1)).and_then(|n| n.atom());
                    let ax = item.find(b"ax").and_then(|a| a.get(1)).and_then(|a| a.f64());
                    if let (Some(name), Some(ax)) = (name, ax)
                        && ax.is_finite()
                    {
                        let n = self.intern(name);
                        self.log.joints.push((n, ax));
                    }
                }
                Some(b"See") => p.see = Some(self.see(item)),
                Some(b"MIC") => self.mic(item),
                Some(b"hear") => self.hear(item),
                _ => {}
            }
        }
        if !p.time.is_finite() {
            self.log.joints.truncate(joints_start);
            self.log.heard.truncate(heard_start);
            self.log
                .markers
                .truncate(p.see.as_ref().map_or(self.log.markers.len(), |s| s.markers.start));
            self.log
                .parts
                .truncate(p.see.as_ref().map_or(self.log.parts.len(), |s| s.parts.start));
            self.log
                .lines
                .truncate(p.see.as_ref().map_or(self.log.lines.len(), |s| s.lines.start));
            return Err("skipped: no simulation time ((time (now …)))".to_owned());
        }
        if let Some(last) = self.log.messages.last()
            && p.time < last.time
        {
            self.warnings.push(
                line,
                format!("simulation time {} goes back from {}", p.time, last.time),
            );
        }
        for q in [
            p.torso_quat.as_mut().map(|q| &mut q[..]),
            p.torso_pos.as_mut().map(|q| &mut q[..]),
        ]
        .into_iter()
        .flatten()
        {
            if q.iter().any(|v| !v.is_finite()) {
                q.fill(f64::NAN);
            }
        }
        if p.torso_quat.is_some_and(|q| q[0].is_nan()) {
            p.torso_quat = None;
        }
        if p.torso_pos.is_some_and(|q| q[0].is_nan()) {
            p.torso_pos = None;
        }
        p.joints = joints_start..self.log.joints.len();
        p.heard = heard_start..self.log.heard.len();
        self.log.messages.push(p);
        Ok(())
    }

    fn game_state(&mut self, gs: Sexp<'_>, p: &mut Perception) {
        for item in gs.items().skip(1) {
            let value = item.get(1);
            match item.head() {
                Some(b"t") => p.game_time = value.and_then(|v| v.f64()).filter(|t| t.is_finite()),
                Some(b"pm") => p.play_mode = value.and_then(|v| v.atom()).map(|m| self.intern(m)),
                Some(b"unum") => self.log.unum = value.and_then(|v| v.u32()),
                Some(b"team") => self.log.side = value.and_then(|v| v.str()).map(str::to_owned),
                Some(b"tl") => self.log.team_names[0] = value.and_then(|v| v.str()).map(str::to_owned),
                Some(b"tr") => self.log.team_names[1] = value.and_then(|v| v.str()).map(str::to_owned),
                _ => {}
            }
        }
    }

    fn see(&mut self, see: Sexp<'_>) -> See {
        let mut s = See {
            markers: self.log.markers.len()..0,
            parts: self.log.parts.len()..0,
            lines: self.log.lines.len()..0,
            ..See::default()
        };
        for item in see.items().skip(1) {
            let Some(head) = item.head() else { continue };
            match head {
                b"B" => s.ball = item.find(b"pol").and_then(Polar::from_pol),
                b"P" => self.player(item),
                b"L" => {
                    let mut pols = item.items().filter(|i| i.head() == Some(b"pol"));
                    if let (Some(a), Some(b)) = (
                        pols.next().and_then(Polar::from_pol),
                        pols.next().and_then(Polar::from_pol),
                    ) {
                        self.log.lines.push([a, b]);
                    }
                }
                b"mypos" => {
                    s.my_pos = item
                        .numbers()
                        .filter(|p: &[f64; 3]| p.iter().all(|v| v.is_finite()))
                }
                b"myorien" => s.my_orien = item.numbers().map(|[o]| o).filter(|o: &f64| o.is_finite()),
                _ => {
                    if let Some(pol) = item.find(b"pol").and_then(Polar::from_pol) {
                        let name = self.intern(head);
                        self.log.markers.push(SeenMarker { name, pol });
                    }
                }
            }
        }
        s.markers.end = self.log.markers.len();
        s.parts.end = self.log.parts.len();
        s.lines.end = self.log.lines.len();
        s
    }

    fn player(&mut self, p: Sexp<'_>) {
        let team = p.find(b"team").and_then(|t| t.get(1)).and_then(|t| t.atom());
        let unum = p.find(b"id").and_then(|t| t.get(1)).and_then(|t| t.u32());
        let (Some(team), Some(unum)) = (team, unum) else {
            return;
        };
        let team = self.intern(team);
        for item in p.items().skip(1) {
            let Some(head) = item.head() else { continue };
            let pol = if head == b"pol" {
                Polar::from_pol(item).map(|pol| (&b"body"[..], pol))
            } else {
                item.find(b"pol").and_then(Polar::from_pol).map(|pol| (head, pol))
            };
            if let Some((part, pol)) = pol {
                let part = self.intern(part);
                self.log.parts.push(SeenPart {
                    team,
                    unum,
                    part,
                    pol,
                });
            }
        }
    }

    /// rcssservermj: `(MIC hear (-54 QTM6MQ==)(-24 …))`.
    fn mic(&mut self, mic: Sexp<'_>) {
        for item in mic.items().skip(2) {
            let direction = item.get(0).and_then(|d| d.f64()).filter(|d| d.is_finite());
            let Some(msg) = item.get(1).and_then(|m| m.atom()) else {
                continue;
            };
            let text = match base64_decode(msg) {
                Some(bytes) if bytes.iter().all(|b| (0x20..0x7f).contains(b)) => {
                    String::from_utf8_lossy(&bytes).into_owned()
                }
                _ => String::from_utf8_lossy(msg).into_owned(),
            };
            self.log.heard.push(Heard { direction, text });
        }
    }

    /// SimSpark: `(hear [team] <time> self|<direction> <message>)`.
    fn hear(&mut self, hear: Sexp<'_>) {
        let items: Vec<Sexp<'_>> = hear.items().skip(1).collect();
        if items.len() < 3 {
            return;
        }
        let (dir, msg) = (items[items.len() - 2], items[items.len() - 1]);
        let direction = match dir.atom() {
            Some(b"self") => None,
            _ => match dir.f64().filter(|d| d.is_finite()) {
                Some(d) => Some(d),
                None => return,
            },
        };
        if let Some(text) = msg.str() {
            self.log.heard.push(Heard {
                direction,
                text: text.to_owned(),
            });
        }
    }
}

/// Standard base64 (with or without padding); `None` when not base64.
fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    let s = s
        .strip_suffix(b"==")
        .or_else(|| s.strip_suffix(b"="))
        .unwrap_or(s);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two messages as rcssservermj sends them (cut down), a broken line,
    /// a SimSpark-style message.
    pub(crate) fn sample() -> String {
        [
            "1795500898.720480 (time (now 3.19))(GS (t 0.0)(pm BeforeKickOff)(tl Alpha)(sl 0)(sr 0))\
             (quat (n torso_quat) (q 0.707 0.0 0.0 -0.707))(pos (n torso_pos) (p -3.0 21.0 0.673))\
             (GYR (n torso_gyro) (rt 0.0 0.0 0.0))(HJ (n q_hj1)(ax 12.5)(vx 0.0))(HJ (n q_hj2)(ax -3.0)(vx 0.0))\
             (See (l_llf (pol 45.97 -32.21 -1.36))(B (pol 21.12 8.17 -2.68))\
             (P (team Bravo)(id 1)(head (pol 34.07 37.89 -0.01))(lfoot (pol 34.18 37.81 -1.78))))",
            "1795500898.74 (time (now 3.21))(GS (t 0.0)(pm PlayOn)(tl Alpha)(tr Bravo))(MIC hear (-54 QTM6MQ==)(12 %%))",
            "1795500898.76 (time (now 3.23)(GS",
            "(time (now 3.25))(GS (unum 3)(team left)(t 0.04)(pm PlayOn))(See (F1L (pol 5 10 -2))\
             (P (team red)(id 2)(pol 3 4 5))(L (pol 1 2 3)(pol 4 5 6))(mypos 1 2 0.5)(myorien 90))(hear 3.2 -12.5 hello)(hear 3.2 self hi)",
        ]
        .join("\n")
    }

    #[test]
    fn reads_messages_sees_and_joints() {
        let log = parse(sample().as_bytes()).unwrap();
        assert_eq!(log.messages.len(), 3);
        let m = &log.messages[0];
        assert_eq!(
            (m.received, m.time, m.game_time),
            (Some(1795500898.72048), 3.19, Some(0.0))
        );
        assert_eq!(m.torso_pos, Some([-3.0, 21.0, 0.673]));
        assert_eq!(m.torso_quat, Some([0.707, 0.0, 0.0, -0.707]));
        assert_eq!(log.joint(m, "q_hj1"), Some(12.5));
        assert_eq!(log.joint(m, "q_hj2"), Some(-3.0));
        let see = m.see.as_ref().unwrap();
        let markers = log.see_markers(see);
        assert_eq!(markers.len(), 1);
        assert_eq!(log.name(markers[0].name), "l_llf");
        assert_eq!(see.ball.map(|b| b.distance), Some(21.12));
        let parts = log.see_parts(see);
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (log.name(parts[1].team), parts[1].unum, log.name(parts[1].part)),
            ("Bravo", 1, "lfoot")
        );
        let heard = log.message_heard(&log.messages[1]);
        assert_eq!(
            heard,
            [
                Heard {
                    direction: Some(-54.0),
                    text: "A3:1".into()
                },
                Heard {
                    direction: Some(12.0),
                    text: "%%".into()
                }
            ]
        );
        assert_eq!(log.team_names, [Some("Alpha".into()), Some("Bravo".into())]);
        let s = &log.messages[2];
        let see = s.see.as_ref().unwrap();
        assert_eq!((see.my_pos, see.my_orien), (Some([1.0, 2.0, 0.5]), Some(90.0)));
        assert_eq!(log.see_lines(see).len(), 1);
        assert_eq!(log.name(log.see_parts(see)[0].part), "body");
        assert_eq!((log.unum, log.side.as_deref()), (Some(3), Some("left")));
        assert_eq!(log.message_heard(s).len(), 2);
        assert_eq!(log.warnings.len(), 1);
        assert_eq!(log.warnings[0].line, 3);
        assert!(
            log.warnings[0].message.contains("never closed"),
            "{:?}",
            log.warnings
        );
    }

    #[test]
    fn polar_points_follow_the_camera_axes() {
        let p = |a, i| {
            Polar {
                distance: 2.0,
                azimuth: a,
                inclination: i,
            }
            .to_camera()
            .map(|v| (v * 1e9_f64).round() / 1e9)
        };
        assert_eq!(p(0.0, 0.0), [2.0, 0.0, 0.0]);
        assert_eq!(p(90.0, 0.0), [0.0, 2.0, 0.0]);
        assert_eq!(p(0.0, -90.0), [0.0, 0.0, -2.0]);
    }

    #[test]
    fn sniffs_and_rejects() {
        assert!(sniff(sample().as_bytes()));
        assert!(sniff(b"\n(time (now 1))"));
        assert!(!sniff(b"((RSMP 1 0)"));
        assert!(!sniff(b"{ 1; }"));
        assert!(parse(b"(GS (t 1))\n").is_err());
        assert!(parse(b"").is_err());
        assert_eq!(base64_decode(b"QTM6MQ=="), Some(b"A3:1".to_vec()));
        assert_eq!(base64_decode(b"a-b"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Mutated and cut logs load or fail cleanly; every range points
        /// inside its array and every number kept is finite.
        #[test]
        fn mutated_logs_never_panic(
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::sample::select(b"()0123456789.-e \nnaPBLpol".to_vec())), 0..12),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        ) {
            let mut b = sample().into_bytes();
            for (i, v) in edits {
                let i = i.index(b.len());
                b[i] = v;
            }
            b.truncate(cut.index(b.len() + 1));
            b.extend_from_slice(&noise);
            if let Ok(log) = parse(&b) {
                for m in &log.messages {
                    proptest::prop_assert!(m.time.is_finite());
                    proptest::prop_assert!(m.joints.end <= log.joints.len() && m.heard.end <= log.heard.len());
                    if let Some(s) = &m.see {
                        proptest::prop_assert!(s.markers.start <= s.markers.end && s.markers.end <= log.markers.len());
                        proptest::prop_assert!(s.parts.end <= log.parts.len() && s.lines.end <= log.lines.len());
                    }
                }
                for mk in &log.markers {
                    proptest::prop_assert!(mk.pol.distance.is_finite() && (mk.name as usize) < log.names.len());
                }
            }
        }
    }
}
