use super::encode::{put_frame_record, write_records};
use super::*;
use crate::log::testutil::sample;
use crate::log::{Primitive, Style, Vec2};

/// Issue 15, finding 9: a small compressed log whose stream expands to
/// far more than its frames account for (records skipped as unknown,
/// here 100 MB of them in a few kilobytes) stops with an error at a
/// bound instead of being decompressed to the end.
#[test]
fn decompression_is_bounded_by_what_it_yields() {
    let mut body = vec![(15 << 3) | 2];
    wire::put_varint(&mut body, 1 << 16);
    body.resize(body.len() + (1 << 16), 0);
    let mut record = Vec::new();
    wire::put_varint(&mut record, body.len() as u64);
    record.extend_from_slice(&body);
    let mut raw = Vec::new();
    let mut log = sample();
    log.frames.truncate(1);
    write_records(&log, FLOOR_VERSION, &mut raw, false).unwrap();
    for _ in 0..1600 {
        raw.extend_from_slice(&record);
    }
    let mut bytes = prefix(true).to_vec();
    bytes.extend(zstd::encode_all(&raw[..], 3).unwrap());
    assert!(bytes.len() < 1 << 20, "{}", bytes.len());
    let e = read(&bytes[..]).unwrap_err().to_string();
    assert!(
        e.contains("expands to") && e.contains("yielded only 1 frames"),
        "{e}"
    );
    // The same records uncompressed are read through: the file itself
    // is that large.
    assert_eq!(
        read(
            &{
                let mut b = prefix(false).to_vec();
                b.extend_from_slice(&raw);
                b
            }[..]
        )
        .unwrap()
        .frames
        .len(),
        1
    );
}

/// Issue 15 ("Also"): a compressed log written whole (`log convert
/// x.zst`, `save`) keeps its complete frames wherever a copy is cut.
#[test]
fn a_torn_compressed_log_keeps_its_complete_frames() {
    let log = sample();
    let mut bytes = Vec::new();
    write(&log, &mut bytes, Some(3)).unwrap();
    assert_eq!(read(&bytes[..]).unwrap(), log);
    let mut last = 0;
    let mut partial = false;
    for cut in PREFIX_LEN + 1..bytes.len() {
        let torn = read(&bytes[..cut]).unwrap();
        assert!(torn.frames.len() >= last, "cut at {cut}");
        assert_eq!(torn.frames[..], log.frames[..torn.frames.len()], "cut at {cut}");
        partial |= !torn.frames.is_empty() && torn.frames.len() < log.frames.len();
        last = torn.frames.len();
    }
    assert!(partial, "no cut kept the first frame alone");
    assert!(last + 1 >= log.frames.len());
}

#[test]
fn round_trips_plain_and_compressed() {
    let log = sample();
    let bytes = to_bytes(&log);
    assert!(bytes.starts_with(MAGIC));
    assert_eq!(read(&bytes[..]).unwrap(), log);
    let mut z = Vec::new();
    write(&log, &mut z, Some(3)).unwrap();
    assert_eq!(z[9], COMPRESSION_ZSTD);
    assert_eq!(read(&z[..]).unwrap(), log);
}

#[test]
fn truncation_keeps_complete_frames_and_names_the_tear() {
    let log = sample();
    let bytes = to_bytes(&log);
    // Cut inside the last record.
    let cut = &bytes[..bytes.len() - 3];
    for (name, got) in [
        ("stream", read(cut).unwrap()),
        (
            "sized",
            read_with_len(BufReader::new(cut), Some(cut.len() as u64)).unwrap(),
        ),
    ] {
        assert_eq!(got.frames.len(), 1, "{name}");
        assert_eq!(got.warnings.len(), 1, "{name}");
        let w = &got.warnings[0];
        assert_eq!(w.frame, Some(1), "{name}");
        assert!(
            w.offset.is_some() && w.message.contains("truncated"),
            "{name}: {w}"
        );
    }
}

#[test]
fn prefix_problems_are_errors() {
    let mut b = to_bytes(&sample());
    b[8] = 9;
    assert!(matches!(
        read(&b[..]),
        Err(ReadError::UnsupportedVersion { found: 9, .. })
    ));
    b[8] = FORMAT_VERSION;
    b[9] = 7;
    assert!(matches!(read(&b[..]), Err(ReadError::UnsupportedCompression(7))));
    assert!(matches!(read(&b"UNDERLAY"[..]), Err(ReadError::Corrupt { .. })));
}

#[test]
fn oversized_length_prefix_is_rejected_without_allocating() {
    let mut b = prefix(false).to_vec();
    wire::put_varint(&mut b, u64::MAX >> 1);
    let e = read(&b[..]).unwrap_err().to_string();
    assert!(e.contains("exceeds the limit") && e.contains("at byte 10"), "{e}");
    // Below the limit but beyond the file: truncation.
    let mut b = prefix(false).to_vec();
    wire::put_varint(&mut b, 1 << 20);
    b.extend_from_slice(&[0; 16]);
    let log = read_with_len(BufReader::new(&b[..]), Some(b.len() as u64)).unwrap();
    assert!(log.warnings[0].message.contains("only"), "{:?}", log.warnings);
}

#[test]
fn undeclared_entity_is_a_warning() {
    let mut b = prefix(false).to_vec();
    let p = Primitive {
        shape: Shape::Line {
            start: Vec2::ZERO,
            end: Vec2::new(1.0, 1.0),
        },
        style: Style::default(),
        entity: EntityId(42),
        level: 0,
    };
    put_frame_record(&mut b, FrameTime::Instant(1.0), &[p]);
    let log = read(&b[..]).unwrap();
    assert_eq!(log.primitives.len(), 1);
    assert_eq!(log.entities.name(log.primitives[0].entity), "unknown/42");
    assert!(log.warnings[0].message.contains("undeclared entity id 42"));
}

#[test]
fn forward_parents_survive_the_round_trip() {
    let mut log = Log::new();
    let child = log.entities.intern("child");
    let parent = log.entities.intern("parent");
    log.entities.add_parent(child, parent);
    let back = read(&to_bytes(&log)[..]).unwrap();
    assert_eq!(back, log);
}

#[test]
fn corrupt_record_names_offset_and_frame() {
    let mut b = to_bytes(&sample());
    let n = b.len();
    // Overwrite the last record's body with an invalid key.
    b[n - 4..].copy_from_slice(&[0, 0, 0, 0]);
    let e = read(&b[..]).unwrap_err();
    assert!(matches!(e, ReadError::Corrupt { frame: 1, .. }), "{e}");
}
