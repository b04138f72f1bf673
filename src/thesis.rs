//! Thesis-era binary logs: a stream of `[u32 little-endian length]
//! [DrawingFrame]` records (`proto/thesis.proto`), as the thesis author's
//! autoref wrote them. Read everywhere a log is accepted (its line in the
//! format table is [`FORMAT`]).
//!
//! Conversion into the model:
//! - colours `0xRRGGBB` become opaque [`Rgba`];
//! - a rectangle's `length` runs along its `orientation` (radians,
//!   counter-clockwise from the x axis) and `width` across it;
//! - a shape with a `replay {start, end}` span is shown over that span: it
//!   goes into a persistent frame `[start, end]`, one per distinct span in
//!   the log, instead of its own frame (a frame left empty by this is not
//!   kept, so it does not hide another instantaneous frame);
//! - a shape without a filter gets entity `default`, level 0;
//! - units are millimetres and times seconds since the Unix epoch.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};

use prost::Message;

use crate::geom::Vec2;
use crate::input::{Format, Head, LogReader};
use crate::log::{
    FrameTime, Log, MAX_RECORD_LEN, Place, Primitive, ReadError, Rgba, Shape, Style, Warnings, close_frame,
};

/// The thesis-era format as prost types (`proto/thesis.proto`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
mod pb {
    include!(concat!(env!("OUT_DIR"), "/underlay.thesis.rs"));
}

/// The format table's line for thesis-era logs.
pub const FORMAT: Format = Format {
    log: Some(LogReader::Stream(|r, cx| read_with_len(r, cx.len))),
    ..Format::new(
        "thesis",
        "thesis-era binary",
        "a plausible thesis-era record",
        "*.log, *.bin",
        |h: &Head<'_>| looks_like_thesis(h.start()),
    )
};

/// Entity given to shapes that carry no filter.
pub const DEFAULT_ENTITY: &str = "default";

/// Whether the first bytes look like a thesis-era record: a plausible
/// length followed by the key of a `DrawingFrame` field.
pub fn looks_like_thesis(prefix: &[u8]) -> bool {
    let (Some(len), Some(&key)) = (prefix.get(..4), prefix.get(4)) else {
        return false;
    };
    let len = u64::from(u32::from_le_bytes([len[0], len[1], len[2], len[3]]));
    // The record may run past the end of the file: the reader reports the tear.
    // timestamp (1, fixed64), end_timestamp (2, fixed64), shapes 3–5 (LEN).
    len > 0 && len <= MAX_RECORD_LEN && matches!(key, 0x09 | 0x11 | 0x1a | 0x22 | 0x2a)
}

/// Reads a thesis-era log from a stream.
pub fn read(r: impl Read) -> Result<Log, ReadError> {
    read_with_len(BufReader::new(r), None)
}

pub(crate) fn read_with_len<R: BufRead>(mut r: R, total_len: Option<u64>) -> Result<Log, ReadError> {
    let mut log = Log::new();
    let mut warnings = Warnings::default();
    // Replayed shapes by span (bit patterns of start and end), in order of
    // first appearance; they become persistent frames at the end.
    let mut replays: Vec<((f64, f64), Vec<Primitive>, u64)> = Vec::new();
    let mut replay_index: HashMap<(u64, u64), usize> = HashMap::new();
    let mut offset = 0u64;
    let mut index = 0usize;
    let mut buf = Vec::new();
    loop {
        let rec_offset = offset;
        let mut len_bytes = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match r.read(&mut len_bytes[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(ReadError::Io {
                        offset,
                        error: source,
                    });
                }
            }
        }
        let frames = log.frames.len();
        let torn = |warnings: &mut Warnings, what: String| {
            warnings.push(
                Some(Place::Byte(rec_offset)),
                Some(index),
                format!("truncated: {what}; the {frames} complete frames before it were loaded"),
            );
        };
        if got == 0 {
            break;
        }
        if got < 4 {
            torn(&mut warnings, "the stream ends inside a record's length".into());
            break;
        }
        let len = u64::from(u32::from_le_bytes(len_bytes));
        offset += 4;
        if len > MAX_RECORD_LEN {
            // No record is that long: the length is damaged, and with it
            // where the next record starts. The rest is passed over (the
            // format table refuses a file that is mostly that).
            warnings.push(
                Some(Place::Byte(rec_offset)),
                Some(index),
                format!(
                    "record length {len} exceeds the limit of {MAX_RECORD_LEN} bytes; the rest of the \
                     log cannot be read past it and was passed over ({frames} frames before it loaded)"
                ),
            );
            log.skipped.stop(rec_offset);
            break;
        }
        if let Some(t) = total_len
            && offset + len > t
        {
            torn(
                &mut warnings,
                format!(
                    "the record needs {len} bytes but only {} remain",
                    t.saturating_sub(offset)
                ),
            );
            break;
        }
        buf.clear();
        r.by_ref()
            .take(len)
            .read_to_end(&mut buf)
            .map_err(|source| ReadError::Io {
                offset,
                error: source,
            })?;
        if (buf.len() as u64) < len {
            torn(
                &mut warnings,
                format!("the record needs {len} bytes but only {} remain", buf.len()),
            );
            break;
        }
        let decoded = pb::DrawingFrame::decode(&buf[..]);
        let record_at = offset;
        offset += len;
        let frame = match decoded {
            Ok(frame) => frame,
            Err(e) => {
                // One bad record costs that record: its length says where
                // the next one starts.
                warnings.push(
                    Some(Place::Byte(rec_offset)),
                    Some(index),
                    format!(
                        "record of {len} bytes at byte {record_at} is not a DrawingFrame ({e}); passed over"
                    ),
                );
                log.skipped.add(rec_offset, 4 + len);
                index += 1;
                continue;
            }
        };
        let place = Place::Byte(rec_offset);
        let start = log.primitives.len();
        let total = frame.circle.len() + frame.line.len() + frame.rectangle.len();
        let t = frame.timestamp.unwrap_or(0.0);
        let time = match frame.end_timestamp {
            Some(end) => FrameTime::Persistent { start: t, end },
            None => FrameTime::Instant(t),
        };
        let own = convert(&mut log, frame, |span, p| {
            let key = (span.0.to_bits(), span.1.to_bits());
            let i = *replay_index.entry(key).or_insert_with(|| {
                replays.push((span, Vec::new(), rec_offset));
                replays.len() - 1
            });
            replays[i].1.push(p);
        });
        if own > 0 || total == 0 {
            close_frame(&mut log, &mut warnings, time, start, index, place);
        }
        index += 1;
    }
    for ((start_t, end_t), prims, rec_offset) in replays {
        let start = log.primitives.len();
        log.primitives.extend(prims);
        let time = FrameTime::Persistent {
            start: start_t,
            end: end_t,
        };
        close_frame(
            &mut log,
            &mut warnings,
            time,
            start,
            index,
            Place::Byte(rec_offset),
        );
        index += 1;
    }
    log.warnings = warnings.finish();
    Ok(log)
}

/// Appends the frame's shapes without a replay span to `log.primitives`
/// and hands the others to `replay`; returns how many were appended.
fn convert(log: &mut Log, f: pb::DrawingFrame, mut replay: impl FnMut((f64, f64), Primitive)) -> usize {
    let v = |v: Option<pb::Vector>| {
        let v = v.unwrap_or_default();
        Vec2::new(v.x.unwrap_or(0.0), v.y.unwrap_or(0.0))
    };
    let mut own = 0;
    let mut add = |log: &mut Log,
                   shape: Shape,
                   color: Option<u32>,
                   filter: Option<pb::Filter>,
                   span: Option<pb::Replay>| {
        let filter = filter.unwrap_or_default();
        let entity = log
            .entities
            .intern(filter.entity.as_deref().unwrap_or(DEFAULT_ENTITY));
        let p = Primitive {
            shape,
            style: Style::color(Rgba::from_rgb(color.unwrap_or(0))),
            entity,
            level: filter.level.unwrap_or(0),
        };
        match span {
            Some(s) => replay(
                (
                    s.start_timestamp.unwrap_or(f64::NEG_INFINITY),
                    s.end_timestamp.unwrap_or(f64::INFINITY),
                ),
                p,
            ),
            None => {
                log.primitives.push(p);
                own += 1;
            }
        }
    };
    for c in f.circle {
        let shape = Shape::Circle {
            center: v(c.center),
            radius: c.radius.unwrap_or(0.0),
        };
        add(log, shape, c.color, c.filter, c.replay);
    }
    for l in f.line {
        let shape = Shape::Line {
            start: v(l.start),
            end: v(l.end),
        };
        add(log, shape, l.color, l.filter, l.replay);
    }
    for r in f.rectangle {
        let shape = Shape::Rectangle {
            center: v(r.center),
            size: Vec2::new(f64::from(r.length.unwrap_or(0)), f64::from(r.width.unwrap_or(0))),
            orientation: r.orientation.unwrap_or(0.0),
        };
        add(log, shape, r.color, r.filter, r.replay);
    }
    own
}

/// One thesis-era shape to write: a primitive plus an optional replay span.
#[derive(Clone, Debug)]
pub struct ThesisShape<'a> {
    /// A circle, line or rectangle (other shapes are skipped).
    pub primitive: &'a Primitive,
    /// Show over this `(start, end)` span instead of the frame's time.
    pub replay: Option<(f64, f64)>,
}

/// Writes one thesis-era record. Only circles, lines and rectangles exist
/// in that format; other shapes are skipped and counted in the result.
/// Colours lose their alpha; rectangle sizes are rounded to whole units.
pub fn write_frame<'a>(
    w: &mut impl Write,
    log: &Log,
    time: FrameTime,
    shapes: impl IntoIterator<Item = ThesisShape<'a>>,
) -> io::Result<usize> {
    let (timestamp, end_timestamp) = match time {
        FrameTime::Instant(t) => (t, None),
        FrameTime::Persistent { start, end } => (start, Some(end)),
    };
    let mut f = pb::DrawingFrame {
        timestamp: Some(timestamp),
        end_timestamp,
        ..Default::default()
    };
    let mut skipped = 0;
    let vec = |v: Vec2| pb::Vector {
        x: Some(v.x),
        y: Some(v.y),
    };
    for s in shapes {
        let p = s.primitive;
        let filter = Some(pb::Filter {
            entity: Some(log.entities.name(p.entity).to_owned()),
            level: Some(p.level),
        });
        let replay = s.replay.map(|(a, b)| pb::Replay {
            start_timestamp: Some(a),
            end_timestamp: Some(b),
        });
        let color = Some(p.style.color.rgb());
        match &p.shape {
            Shape::Circle { center, radius } => f.circle.push(pb::Circle {
                radius: Some(*radius),
                center: Some(vec(*center)),
                color,
                filter,
                replay,
            }),
            Shape::Line { start, end } => f.line.push(pb::Line {
                start: Some(vec(*start)),
                end: Some(vec(*end)),
                color,
                filter,
                replay,
            }),
            Shape::Rectangle {
                center,
                size,
                orientation,
            } => f.rectangle.push(pb::Rectangle {
                center: Some(vec(*center)),
                orientation: Some(*orientation),
                length: Some(size.x.round().clamp(0.0, f64::from(u32::MAX)) as u32),
                width: Some(size.y.round().clamp(0.0, f64::from(u32::MAX)) as u32),
                color,
                filter,
                replay,
            }),
            _ => skipped += 1,
        }
    }
    let body = f.encode_to_vec();
    let len = u32::try_from(body.len()).map_err(|_| io::Error::other("thesis-era record over 4 GiB"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&body)?;
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Log;

    fn prim(log: &mut Log, shape: Shape, entity: &str, rgb: u32) -> Primitive {
        Primitive {
            shape,
            style: Style::color(Rgba::from_rgb(rgb)),
            entity: log.entities.intern(entity),
            level: 1,
        }
    }

    fn sample() -> (Vec<u8>, Log) {
        let mut names = Log::new();
        let c = prim(
            &mut names,
            Shape::Circle {
                center: Vec2::new(1.0, 2.0),
                radius: 90.0,
            },
            "robots",
            0xffff00,
        );
        let r = prim(
            &mut names,
            Shape::Rectangle {
                center: Vec2::ZERO,
                size: Vec2::new(300.0, 100.0),
                orientation: 0.5,
            },
            "zones",
            0x123456,
        );
        let l = prim(
            &mut names,
            Shape::Line {
                start: Vec2::ZERO,
                end: Vec2::new(5.0, 5.0),
            },
            "autoref",
            0xff0000,
        );
        let mut bytes = Vec::new();
        let shapes = [
            ThesisShape {
                primitive: &c,
                replay: None,
            },
            ThesisShape {
                primitive: &r,
                replay: None,
            },
            ThesisShape {
                primitive: &l,
                replay: Some((10.0, 12.0)),
            },
        ];
        write_frame(&mut bytes, &names, FrameTime::Instant(11.0), shapes.clone()).unwrap();
        write_frame(&mut bytes, &names, FrameTime::Instant(11.5), shapes[2..].to_vec()).unwrap();
        write_frame(
            &mut bytes,
            &names,
            FrameTime::Persistent {
                start: 0.0,
                end: 20.0,
            },
            shapes[..1].to_vec(),
        )
        .unwrap();
        (bytes, names)
    }

    #[test]
    fn converts_colours_rectangles_and_replays() {
        let (bytes, _) = sample();
        assert!(looks_like_thesis(&bytes));
        let log = read(&bytes[..]).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        // Frame 11.0 keeps circle + rectangle; 11.5 only had a replayed line
        // and is not kept; then the persistent frame; then one replay frame.
        let times: Vec<FrameTime> = log.frames.iter().map(|f| f.time).collect();
        assert_eq!(
            times,
            [
                FrameTime::Instant(11.0),
                FrameTime::Persistent {
                    start: 0.0,
                    end: 20.0
                },
                FrameTime::Persistent {
                    start: 10.0,
                    end: 12.0
                },
            ]
        );
        let replay = log.frame_primitives(&log.frames[2]);
        assert_eq!(replay.len(), 2);
        assert_eq!(replay[0].style.color, Rgba(0xff00_00ff));
        let rect = &log.frame_primitives(&log.frames[0])[1];
        assert_eq!(
            rect.shape,
            Shape::Rectangle {
                center: Vec2::ZERO,
                size: Vec2::new(300.0, 100.0),
                orientation: 0.5
            }
        );
        assert_eq!(log.entities.name(rect.entity), "zones");
        assert_eq!(rect.level, 1);
    }

    #[test]
    fn truncation_keeps_earlier_frames() {
        let (bytes, _) = sample();
        let cut = &bytes[..bytes.len() - 2];
        let log = read_with_len(BufReader::new(cut), Some(cut.len() as u64)).unwrap();
        assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
        assert_eq!(log.warnings[0].frame, Some(2));
        assert!(log.warnings[0].offset.is_some());
        let streamed = read(cut).unwrap();
        assert_eq!(streamed.warnings.len(), 1);
        assert_eq!(streamed.frames, log.frames);
    }

    #[test]
    fn a_record_of_123_bytes_is_not_mistaken_for_text() {
        let log_with = |name: &str| {
            let mut names = Log::new();
            let p = prim(
                &mut names,
                Shape::Circle {
                    center: Vec2::new(1.0, 2.0),
                    radius: 90.0,
                },
                name,
                0,
            );
            let mut bytes = Vec::new();
            for t in [1.0, 2.0] {
                let shapes = [ThesisShape {
                    primitive: &p,
                    replay: None,
                }];
                write_frame(&mut bytes, &names, FrameTime::Instant(t), shapes).unwrap();
            }
            bytes
        };
        // The record length grows one byte per name byte: make it 123, '{'.
        let base = usize::from(log_with("")[0]);
        let bytes = log_with(&"e".repeat(usize::from(b'{') - base));
        assert_eq!(bytes[0], b'{');
        let (log, format) = crate::formats::read_log(&bytes[..]).unwrap();
        assert_eq!(format.id, "thesis");
        assert_eq!(log.frames.len(), 2);
    }

    #[test]
    fn a_record_that_does_not_decode_costs_that_record() {
        let (good, _) = sample();
        let mut bytes = good.clone();
        // A record whose body is not a DrawingFrame (a fixed64 cut short).
        bytes.extend_from_slice(&5u32.to_le_bytes());
        let bad_at = bytes.len() as u64;
        bytes.extend_from_slice(&[0x09, 0xff, 0xff, 0xff, 0xff]);
        bytes.extend_from_slice(&good);
        let twice = read(&[&good[..], &good[..]].concat()[..]).unwrap();
        let log = read(&bytes[..]).unwrap();
        assert_eq!(log.frames, twice.frames, "{:?}", log.warnings);
        assert_eq!(log.primitives, twice.primitives);
        assert_eq!(log.skipped.items, 1);
        assert_eq!(log.skipped.bytes, 9);
        assert_eq!(log.skipped.first, Some(bad_at - 4));
        assert!(
            log.warnings
                .iter()
                .any(|w| w.offset == Some(bad_at - 4) && w.message.contains("not a DrawingFrame")),
            "{:?}",
            log.warnings
        );
    }

    #[test]
    fn an_impossible_length_stops_the_reading_there() {
        let (good, _) = sample();
        let mut bytes = good.clone();
        let at = bytes.len() as u64;
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend_from_slice(&good);
        let once = read(&good[..]).unwrap();
        let log = read(&bytes[..]).unwrap();
        assert_eq!(log.frames.len(), once.frames.len());
        assert_eq!(log.skipped.stopped_at, Some(at));
    }
}
