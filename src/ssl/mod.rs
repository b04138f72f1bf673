//! RoboCup Small Size League game logs (`SSL_LOG_FILE`, as the league's
//! ssl-log-recorder writes them): vision, referee and tracker packets,
//! read as a stream and turned into a visualization log; and ssl-vision's
//! camera models as underlay calibrations.
//!
//! - [`file`](mod@file): the container, record by record, with bounded memory.
//! - [`packets`]: the packets' payloads decoded and converted out of the
//!   wire types (`proto/ssl.proto`) into underlay's types and units.
//! - [`events`]: the referee's game events, each type with its own fields.
//! - [`vislog`]: the conversion into a [`Log`] (entities, levels, ticks),
//!   with [`merge`] (one scene from several cameras) and `referee`
//!   (drawing the referee's state, game events and timers).
//! - [`camera`]: ssl-vision's camera model as a [`Calibration`](crate::calib::Calibration).
//! - [`render`]: the log as a video of its own (its robots and ball on its
//!   field, rendered top-down by [`crate::pitch`]).
//!
//! The format table reads these logs like any other (plain or gzip'ed,
//! recognised from the content): [`FORMAT`] is their line in it.

use std::io::Read;

use crate::input::{Camera, Format, Head, LogReader};
use crate::log::{Log, ReadError};

pub mod camera;
pub mod events;
pub mod file;
pub mod merge;
pub mod packets;
mod referee;
pub mod render;
pub mod vislog;
mod wire;

/// The most an SSL game log may deliver (decompressed) by default: 1 GiB,
/// about a whole match's (its model costs about six times its size).
pub const MAX_INPUT: u64 = 1 << 30;

/// The format table's line for SSL game logs: a log (the league's
/// packets drawn), a rendered match, and the cameras' calibrations.
pub const FORMAT: Format = Format {
    log: Some(LogReader::Stream(|r, cx| read_log(r, cx.decompressed))),
    source: Some(render::open),
    max_input: MAX_INPUT,
    cameras: Some(|path| {
        let cams = camera::cameras_in(path)?;
        Ok(cams
            .latest
            .iter()
            .map(|(&id, model)| Camera {
                id,
                calibration: camera::calibration(model).map_err(|e| crate::error::chain(&e)),
            })
            .collect())
    }),
    ..Format::new(
        "ssl",
        "SSL game log",
        "an SSL game log (\"SSL_LOG_FILE\")",
        "*.log, *.log.gz",
        |h: &Head<'_>| file::looks_like_ssl(h.start()),
    )
};

/// Reads an SSL game log from a stream that starts with its header (a
/// gzip'ed file must be decompressed first; `decompressed` says so, for
/// the byte offsets in messages).
pub fn read_log(r: impl Read, decompressed: bool) -> Result<Log, ReadError> {
    vislog::read(r, decompressed)
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::path::{Path, PathBuf};

    use super::file::{HEADER_LEN, MessageType, RecordReader};
    use crate::geom::Vec2;
    use crate::log::{FrameTime, Log, Shape};

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/ssl")
            .join(name)
    }

    fn plain_bytes(name: &str) -> Vec<u8> {
        let raw = std::fs::read(fixture(name)).unwrap();
        if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .unwrap();
            out
        } else {
            raw
        }
    }

    /// The persistent frames with a primitive of `entity`: (start, end,
    /// texts), times from the log's start.
    fn frames_of(log: &Log, entity: &str) -> Vec<(f64, f64, Vec<String>, Vec<Vec2>)> {
        let t0 = log.time_range().unwrap().0;
        log.frames
            .iter()
            .filter_map(|f| {
                let FrameTime::Persistent { start, end } = f.time else {
                    return None;
                };
                let prims = log.frame_primitives(f);
                prims
                    .iter()
                    .any(|p| log.entities.name(p.entity) == entity)
                    .then(|| {
                        let texts = prims
                            .iter()
                            .filter_map(|p| match &p.shape {
                                Shape::Text { text, .. } => Some(text.to_string()),
                                _ => None,
                            })
                            .collect();
                        let points = prims
                            .iter()
                            .filter_map(|p| match &p.shape {
                                Shape::Circle { center, .. } => Some(*center),
                                _ => None,
                            })
                            .collect();
                        (start - t0, end - t0, texts, points)
                    })
            })
            .collect()
    }

    #[test]
    fn the_ball_out_fixture_reads_like_the_match_went() {
        let (log, format) = crate::formats::load_log_with_format(&fixture("ball-out-35s.log.gz")).unwrap();
        assert_eq!(format.id, "ssl");
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let (lo, hi) = log.time_range().unwrap();
        assert!((hi - lo - 7.0).abs() < 0.05, "{}", hi - lo);
        // About 60 ticks a second from 4 cameras.
        let ticks = log.frames.iter().filter(|f| !f.time.is_persistent()).count();
        assert!((400..=430).contains(&ticks), "{ticks}");
        // At 36.0 s of the match (1.0 s into the cut) the ball went out over
        // the touch line, by yellow, at (2126, 2800) mm.
        let out = frames_of(&log, "referee/events/ball_left_field_touch_line");
        assert_eq!(out.len(), 1, "{out:?}");
        let (start, end, texts, points) = &out[0];
        assert!(
            (start - 1.0).abs() < 0.05 && (end - 6.02).abs() < 0.05,
            "{start} {end}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t == "ball left the field over the touch line: yellow"),
            "{texts:?}"
        );
        assert!(
            (points[0] - Vec2::new(2126.0, 2800.0)).length() < 1.0,
            "{points:?}"
        );
        let designated = frames_of(&log, "referee/designated_position");
        assert!(!designated.is_empty());
        assert!(
            designated
                .iter()
                .all(|d| (d.3[0] - Vec2::new(2126.0, 2800.0)).length() < 0.01)
        );
        let commands: Vec<String> = frames_of(&log, "referee/command")
            .into_iter()
            .map(|(_, _, texts, _)| texts[0].clone())
            .collect();
        // The game controller sent the ball-out state with NORMAL_START
        // still on, 60 µs before its STOP: a state of its own.
        assert_eq!(
            commands,
            [
                "normal start · first half",
                "normal start · first half",
                "STOP · first half",
                "direct free kick blue · first half"
            ]
        );
    }

    #[test]
    fn the_index_of_the_fixture_matches_its_records() {
        let bytes = plain_bytes("ball-out-35s.log.gz");
        let mut r = RecordReader::new(&bytes[..], false).unwrap();
        let mut decoded = 0;
        while r.next_record().unwrap().is_some() {
            decoded += 1;
        }
        let (summary, warnings) = r.finish();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(summary.indexed);
        assert_eq!(summary.records, decoded + 1);
        assert_eq!(summary.by_type.get(&MessageType::Index), Some(&1));
    }

    #[test]
    fn gzip_and_plain_read_the_same() {
        let bytes = plain_bytes("ball-out-35s.log.gz");
        let (plain, _) = crate::formats::read_log(&bytes[..]).unwrap();
        let gz = crate::formats::load_log(&fixture("ball-out-35s.log.gz")).unwrap();
        assert_eq!(plain, gz);
    }

    #[test]
    fn the_push_fixture_has_the_card() {
        let log = crate::formats::load_log(&fixture("push-card-64s.log")).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        let push = frames_of(&log, "referee/events/bot_pushed_bot");
        assert_eq!(push.len(), 1);
        assert!(
            push[0].2.iter().any(|t| t == "robot pushed a robot: blue 1"),
            "{:?}",
            push[0].2
        );
        let score = frames_of(&log, "referee/score");
        let last = score.last().unwrap();
        assert!(
            last.2
                .iter()
                .any(|t| t.starts_with("1 yellow card (1 active) · 5 robots allowed")),
            "{:?}",
            last.2
        );
        assert!(last.2.iter().any(|t| t == "1 : 0"), "{:?}", last.2);
        // Blue's card timer shows in the ticks after 66.1 s (it runs only
        // while the game does).
        let t0 = log.time_range().unwrap().0;
        let timers: Vec<String> = log
            .frames
            .iter()
            .filter(|f| f.time.start() - t0 > 2.5 && !f.time.is_persistent())
            .flat_map(|f| log.frame_primitives(f))
            .filter(|p| log.entities.name(p.entity) == "referee/timers")
            .filter_map(|p| match &p.shape {
                Shape::Text { text, .. } => Some(text.to_string()),
                _ => None,
            })
            .collect();
        assert!(
            !timers.is_empty() && timers.iter().all(|t| t.ends_with("yellow card blue 2:00")),
            "{timers:?}"
        );
    }

    #[test]
    fn torn_tails_keep_every_complete_record() {
        let bytes = plain_bytes("push-card-64s.log");
        let full = crate::formats::read_log(&bytes[..]).unwrap().0;
        for cut in [17, 100, bytes.len() / 3, bytes.len() - 1] {
            let (log, _) = crate::formats::read_log(&bytes[..cut]).unwrap();
            assert_eq!(log.warnings.len(), 1, "cut {cut}: {:?}", log.warnings);
            let w = &log.warnings[0];
            assert!(w.message.contains("truncated at byte"), "{w}");
            assert!(w.offset.is_some_and(|o| o >= HEADER_LEN && o < cut as u64));
            assert!(log.frames.len() <= full.frames.len());
        }
        // A gzip stream cut short: the same, said of the compressed data.
        let gz = std::fs::read(fixture("ball-out-35s.log.gz")).unwrap();
        let (log, _) = crate::formats::read_log(&gz[..gz.len() / 2]).unwrap();
        assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
        assert!(
            log.warnings[0].message.contains("decompressed data"),
            "{}",
            log.warnings[0]
        );
        assert!(log.frames.len() > 100);
    }

    /// The start of the push fixture: records up to the first geometry and
    /// referee packets and a few more (about 60 records), to fuzz quickly.
    fn fuzz_base() -> Vec<u8> {
        let bytes = plain_bytes("push-card-64s.log");
        let mut r = RecordReader::new(&bytes[..], false).unwrap();
        let (mut geometry, mut referee, mut end) = (false, false, HEADER_LEN as usize);
        let mut n = 0;
        while let Some(rec) = r.next_record().unwrap() {
            end = rec.offset as usize + 16 + rec.payload.len();
            referee |= rec.kind == MessageType::Referee;
            geometry |= rec.kind == MessageType::Vision && rec.payload.len() > 600;
            n += 1;
            if geometry && referee && n >= 60 {
                break;
            }
        }
        bytes[..end].to_vec()
    }

    fn check_drawable(log: &Log) -> Result<(), proptest::test_runner::TestCaseError> {
        for p in &log.primitives {
            proptest::prop_assert!(crate::log::validate::drawable(p), "{p:?}");
        }
        for f in &log.frames {
            proptest::prop_assert!(f.primitives.end <= log.primitives.len());
            proptest::prop_assert!(!f.time.start().is_nan() && f.time.start() <= f.time.end());
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random bytes after the header never panic, hang or exhaust memory.
        #[test]
        fn random_records_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let mut b = b"SSL_LOG_FILE\0\0\0\x01".to_vec();
            b.extend_from_slice(&bytes);
            if let Ok((log, _)) = crate::formats::read_log(&b[..]) {
                check_drawable(&log)?;
            }
        }

        /// A real log with bytes changed, cut, or a piece repeated, plain
        /// or gzip'ed (then damaged), loads or fails cleanly.
        #[test]
        fn mutated_real_logs_never_panic(
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::prelude::any::<u8>()), 0..12),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            splice in proptest::option::of((proptest::prelude::any::<proptest::sample::Index>(),
                                            proptest::prelude::any::<proptest::sample::Index>())),
            gzip in proptest::prelude::any::<bool>(),
        ) {
            use std::io::Write as _;
            let mut b = fuzz_base();
            if let Some((a, c)) = splice {
                let (a, c) = (a.index(b.len()), c.index(b.len()));
                let piece = b[a.min(c)..a.max(c)].to_vec();
                b.splice(a..a, piece);
            }
            if gzip {
                let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                z.write_all(&b).unwrap();
                b = z.finish().unwrap();
            }
            for (i, v) in edits {
                let i = i.index(b.len());
                // Keep the magic: damage past it is what matters here.
                if i >= 12 || gzip {
                    b[i] = v;
                }
            }
            b.truncate(cut.index(b.len() + 1).max(b.len() / 2));
            if let Ok((log, _)) = crate::formats::read_log(&b[..]) {
                check_drawable(&log)?;
            }
        }
    }
}
