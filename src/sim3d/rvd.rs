//! `.rvd` recordings of RoboViz drawing datagrams, and their conversion
//! into a visualization log.
//!
//! **The container** (docs/FORMAT.md): a 16-byte header, `ROBOVIZ-DRAW`,
//! a version byte (1) and three zero bytes; then records of a kind byte,
//! the receive time (f64 little-endian, seconds since the Unix epoch) and
//! a payload length (u32 little-endian) followed by the payload. Kind 1 is
//! a drawing datagram as received; kind 2 is a simulation time (f64
//! little-endian) read from a monitor message received at that moment. A
//! torn last record (a recorder killed mid-write) loads every record
//! before it, with a warning.
//!
//! **The conversion** replays RoboViz's buffers ([`super::replay`], which
//! a live run's RoboViz source replays with too): shapes go into their
//! set's back buffer, and a swap publishes the back buffer of every set
//! whose name starts with its prefix. What a set publishes is shown until
//! that set is published again, so each publication becomes a
//! *persistent* frame from its swap to just before the set's next swap
//! (or to the end of the recording). (Instantaneous frames would show one
//! set at a time: a log shows only the single nearest instantaneous
//! frame.) A swap's time is the simulation time of the last monitor
//! message received before it when the recording has them (the log's
//! clock is then the simulation's), else its receive time.
//!
//! Dotted set names become the entity DAG: `animated.team.path` under
//! `animated.team` under `animated`. Shapes keep their heights: a line,
//! point, polygon or annotation with every z = 0 is a floor shape as
//! before, one above the floor a raised shape ([`crate::log::Raised`],
//! drawn through a full camera, hidden only by what stands in front of
//! it); spheres are raised spheres; circles lie on the floor. Agent annotations are placed above the agent's robot
//! in the monitor log given, and left out (with a warning) without one.

use crate::log::Skipped;
use std::io::{self, Write};

use crate::log::Log;

use super::monitor::MonitorLog;
pub use super::replay::ConvertStats;
use super::replay::{Clock, Replay};
use super::{Warning, Warnings};

#[cfg(test)]
use {
    super::replay::just_before,
    super::roboviz::Command,
    crate::log::{FrameTime, Shape, TimeUnit},
};

pub const MAGIC: &[u8; 12] = b"ROBOVIZ-DRAW";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 16;

const KIND_DATAGRAM: u8 = 1;
const KIND_SIM_TIME: u8 = 2;

/// The largest payload a record may hold (a UDP datagram is smaller).
pub const MAX_PAYLOAD: u32 = 1 << 20;

/// One record of a recording.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    Datagram { received: f64, bytes: Vec<u8> },
    SimTime { received: f64, time: f64 },
}

/// The header of a recording.
pub fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..12].copy_from_slice(MAGIC);
    h[12] = VERSION;
    h
}

/// Whether `bytes` start like a recording.
pub fn sniff(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Appends one record.
pub fn write_record(w: &mut impl Write, r: &Record) -> io::Result<()> {
    let (kind, received, payload): (u8, f64, std::borrow::Cow<'_, [u8]>) = match r {
        Record::Datagram { received, bytes } => (KIND_DATAGRAM, *received, bytes.into()),
        Record::SimTime { received, time } => (KIND_SIM_TIME, *received, time.to_le_bytes().to_vec().into()),
    };
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&l| l <= MAX_PAYLOAD)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "record payload too large"))?;
    w.write_all(&[kind])?;
    w.write_all(&received.to_le_bytes())?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&payload)
}

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RvdError {
    #[error("not a RoboViz recording (no \"ROBOVIZ-DRAW\" header)")]
    NotRvd,
    #[error("RoboViz recording version {0} is not supported (this build reads version {VERSION})")]
    Version(u8),
}

/// Reads every record; a torn or corrupt tail ends the records with a
/// warning naming its byte offset.
pub fn read_records(bytes: &[u8]) -> Result<(Vec<Record>, Vec<Warning>), RvdError> {
    read_records_counting(bytes).map(|(r, w, _)| (r, w))
}

/// Like [`read_records`], also counting what was passed over.
pub fn read_records_counting(bytes: &[u8]) -> Result<(Vec<Record>, Vec<Warning>, Skipped), RvdError> {
    let mut skipped = Skipped::default();
    if !sniff(bytes) || bytes.len() < HEADER_LEN {
        return Err(RvdError::NotRvd);
    }
    if bytes[12] != VERSION {
        return Err(RvdError::Version(bytes[12]));
    }
    let mut warnings = Warnings::default();
    let mut out = Vec::new();
    let mut at = HEADER_LEN;
    while at < bytes.len() {
        let Some(head) = bytes.get(at..at + 13) else {
            warnings.push(
                0,
                format!("torn record at byte {at}: the recording ends inside its header"),
            );
            skipped.stop(at as u64);
            break;
        };
        let kind = head[0];
        let received = f64::from_le_bytes(head[1..9].try_into().unwrap_or([0; 8]));
        let len = u32::from_le_bytes(head[9..13].try_into().unwrap_or([0; 4]));
        if len > MAX_PAYLOAD {
            warnings.push(
                0,
                format!("corrupt record at byte {at}: payload of {len} bytes; the rest is left out"),
            );
            skipped.stop(at as u64);
            break;
        }
        let Some(payload) = bytes.get(at + 13..at + 13 + len as usize) else {
            warnings.push(
                0,
                format!("torn record at byte {at}: the recording ends inside its payload"),
            );
            skipped.stop(at as u64);
            break;
        };
        match kind {
            KIND_DATAGRAM => out.push(Record::Datagram {
                received,
                bytes: payload.to_vec(),
            }),
            KIND_SIM_TIME => match <[u8; 8]>::try_from(payload) {
                Ok(b) => out.push(Record::SimTime {
                    received,
                    time: f64::from_le_bytes(b),
                }),
                Err(_) => {
                    warnings.push(
                        0,
                        format!("record at byte {at}: a simulation time of {len} bytes"),
                    );
                    skipped.add(at as u64, 13 + u64::from(len));
                }
            },
            k => {
                warnings.push(0, format!("record at byte {at}: unknown kind {k}, skipped"));
                skipped.add(at as u64, 13 + u64::from(len));
            }
        }
        at += 13 + len as usize;
    }
    Ok((out, warnings.finish(), skipped))
}

/// Replays a recording's drawings into a log (see [the module](self)).
pub fn to_log(records: &[Record], monitor: Option<&MonitorLog>) -> (Log, ConvertStats, Vec<Warning>) {
    let clock = if records.iter().any(|r| matches!(r, Record::SimTime { .. })) {
        Clock::Simulation {
            start: records.iter().find_map(|r| match r {
                Record::SimTime { time, .. } if time.is_finite() => Some(*time),
                _ => None,
            }),
        }
    } else {
        Clock::Received
    };
    let mut replay = Replay::new(clock, monitor);
    for r in records {
        match r {
            Record::SimTime { time, .. } => replay.feed_sim_time(*time),
            Record::Datagram { received, bytes } => {
                replay.feed_datagram(*received, bytes);
            }
        }
    }
    replay.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::{FilterSpec, Index};
    use crate::sim3d::roboviz::{Agent, tests::datagram, tests::every_command};

    fn circle(set: &str, x: f64) -> Command {
        Command::Circle {
            center: [x, 0.0],
            radius: 1.0,
            thickness: 1.0,
            color: [255, 0, 0, 255],
            set: set.into(),
        }
    }

    fn swap(prefix: &str) -> Command {
        Command::Swap {
            prefix: prefix.into(),
        }
    }

    fn recording(records: &[Record]) -> Vec<u8> {
        let mut b = header().to_vec();
        for r in records {
            write_record(&mut b, r).unwrap();
        }
        b
    }

    #[test]
    fn records_round_trip_and_torn_tails_warn() {
        let recs = vec![
            Record::SimTime {
                received: 1.5,
                time: 0.04,
            },
            Record::Datagram {
                received: 1.6,
                bytes: datagram(&every_command()),
            },
        ];
        let b = recording(&recs);
        let (got, w) = read_records(&b).unwrap();
        assert_eq!((got, w), (recs.clone(), vec![]));
        let (got, w) = read_records(&b[..b.len() - 3]).unwrap();
        assert_eq!(got.len(), 1);
        assert!(w[0].message.contains("torn record at byte 37"), "{w:?}");
        assert!(matches!(read_records(b"nope"), Err(RvdError::NotRvd)));
        let mut v2 = b.clone();
        v2[12] = 2;
        assert!(matches!(read_records(&v2), Err(RvdError::Version(2))));
    }

    #[test]
    fn swaps_publish_sets_until_their_next_swap() {
        let d = |t: f64, c: &[Command]| Record::Datagram {
            received: t,
            bytes: datagram(c),
        };
        let s = |t: f64| Record::SimTime {
            received: 0.0,
            time: t,
        };
        let recs = [
            s(1.0),
            d(
                0.0,
                &[
                    circle("animated.Alpha.path", 1.0),
                    circle("animated.Bravo", 2.0),
                    circle("static", 9.0),
                ],
            ),
            d(0.0, &[swap("animated."), swap("static")]),
            s(2.0),
            d(0.0, &[circle("animated.Alpha.path", 3.0), swap("animated.Alpha")]),
            s(3.0),
            d(0.0, &[circle("animated.Bravo", 4.0)]),
        ];
        let (log, stats, warnings) = to_log(&recs, None);
        assert!(stats.sim_clock);
        assert_eq!((stats.datagrams, stats.swaps), (4, 3));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("1 shapes"), "{warnings:?}");
        let at = |t: f64| {
            let index = Index::new(&log);
            let filter = FilterSpec::default().compile(&log).unwrap();
            let mut xs: Vec<f64> = index
                .select(&log, crate::time::LogTime(t), 0.0, &filter)
                .into_iter()
                .map(|p| match p.shape {
                    Shape::Circle { center, .. } => center.x,
                    _ => f64::NAN,
                })
                .collect();
            xs.sort_by(f64::total_cmp);
            xs
        };
        assert_eq!(at(0.5), Vec::<f64>::new());
        assert_eq!(at(1.0), [1.0, 2.0, 9.0]);
        assert_eq!(at(1.99), [1.0, 2.0, 9.0]);
        assert_eq!(at(2.0), [2.0, 3.0, 9.0]);
        assert_eq!(at(3.0), [2.0, 3.0, 9.0], "shown to the end of the recording");
        let e = |n: &str| log.entities.get(n).unwrap();
        assert_eq!(
            log.entities.parents(e("animated.Alpha.path")),
            [e("animated.Alpha")]
        );
        assert_eq!(log.entities.parents(e("animated.Alpha")), [e("animated")]);
        assert!(log.entities.parents(e("static")).is_empty());
    }

    #[test]
    fn receive_times_are_the_clock_without_monitor_messages() {
        let recs = [
            Record::Datagram {
                received: 1_700_000_000.0,
                bytes: datagram(&[circle("a", 1.0), swap("")]),
            },
            Record::Datagram {
                received: 1_700_000_000.5,
                bytes: datagram(&[
                    Command::AgentAnnotation {
                        agent: Agent {
                            right: false,
                            unum: 1,
                        },
                        text: "hi".into(),
                        color: [1, 2, 3, 255],
                    },
                    swap(""),
                ]),
            },
        ];
        let (log, stats, warnings) = to_log(&recs, None);
        assert!(!stats.sim_clock);
        assert_eq!(log.header.time_unit, TimeUnit::EpochSeconds);
        assert_eq!(log.frames.len(), 1);
        assert_eq!(
            log.frames[0].time,
            FrameTime::Persistent {
                start: 1_700_000_000.0,
                end: just_before(1_700_000_000.5)
            },
            "the empty back buffer swapped in ends the circle"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.message.contains("1 agent annotations left out")),
            "{warnings:?}"
        );
    }

    #[test]
    fn agent_annotations_follow_the_robot() {
        let m = crate::sim3d::monitor::parse(crate::sim3d::monitor::tests::rsmp_sample().as_bytes()).unwrap();
        let recs = [
            Record::SimTime {
                received: 0.0,
                time: 0.04,
            },
            Record::Datagram {
                received: 0.0,
                bytes: datagram(&[Command::AgentAnnotation {
                    agent: Agent {
                        right: false,
                        unum: 2,
                    },
                    text: "keeper".into(),
                    color: [1, 2, 3, 255],
                }]),
            },
            Record::SimTime {
                received: 0.0,
                time: 0.08,
            },
        ];
        let (log, _, warnings) = to_log(&recs, Some(&m));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            log.frames.len(),
            2,
            "one per monitor frame from 0.04 to the end, 0.08"
        );
        assert!(matches!(
            &log.primitives[0].shape,
            Shape::Text { anchor, text, .. } if &**text == "keeper" && anchor.x == -2.7
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Mutated and cut recordings read and convert without panicking;
        /// every frame converted is drawable.
        #[test]
        fn mutated_recordings_never_panic(
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::prelude::any::<u8>()), 0..8),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let mut cmds = every_command();
            cmds.push(swap(""));
            let mut b = recording(&[
                Record::SimTime { received: 1.0, time: 2.0 },
                Record::Datagram { received: 1.0, bytes: datagram(&cmds) },
                Record::SimTime { received: 1.0, time: 2.5 },
                Record::Datagram { received: 1.0, bytes: datagram(&[circle("x", 1.0), swap("x")]) },
            ]);
            for (i, v) in edits {
                let i = i.index(b.len());
                b[i] = v;
            }
            b.truncate(cut.index(b.len() + 1));
            if let Ok((recs, _)) = read_records(&b) {
                let (log, _, _) = to_log(&recs, None);
                for f in &log.frames {
                    proptest::prop_assert!(f.time.start() <= f.time.end());
                    proptest::prop_assert!(!f.time.start().is_nan());
                }
                for p in &log.primitives {
                    proptest::prop_assert!(crate::log::validate::drawable(p));
                }
            }
        }
    }
}
