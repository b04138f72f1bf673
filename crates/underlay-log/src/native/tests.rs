use super::encode::{put_frame_record, write_records};
use super::*;
use crate::testutil::{sample, sample_picture, sample_raised};
use crate::validate::drawable;
use crate::{MarkerKind, Primitive, Raised, Style, Vec2};

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
    // The rest of the file cannot be read past such a length: passed over
    // from there (the format table refuses a file that is mostly that).
    let log = read(&b[..]).unwrap();
    assert_eq!(log.skipped.stopped_at, Some(10));
    assert!(
        log.warnings[0].message.contains("exceeds the limit") && log.warnings[0].offset == Some(10),
        "{:?}",
        log.warnings
    );
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
    // One bad record costs that record, said with its place and frame.
    let log = read(&b[..]).unwrap();
    assert_eq!(log.frames.len(), 1);
    assert_eq!(log.skipped.items, 1);
    assert!(
        log.warnings
            .iter()
            .any(|w| w.frame == Some(1) && w.message.contains("passed over")),
        "{:?}",
        log.warnings
    );
}

/// The native encoding of [`sample`] (no heights) as written before shapes
/// above the floor existed: a log without them must stay byte for byte
/// the same (issue 33).
const SAMPLE_V1: &str = "554e4445524c415901003c0a3a0801120474657374180122026d6d2a2a1a280a1209000000000000f0bf11\
    00000000000000c012120900000000000008401100000000000010400a12081206726f626f74731412120801120b726f626f74\
    732f626c75651a0100451a43121209000000000000f0ff11000000000000f07f1a2d22180a0911000000000000f03f0a090900\
    000000000000401001480555785634125dff00000065000020406801e5011ae20109000000000000f83f1a340a1d0a12090000\
    00000000f03f1100000000000000401100000000000008404001480455785634125dff000000650000204068011a252a100a00\
    120368c3a9190000000000002840400155785634125dff000000650000204068011a2932160a12090000000000001440110000\
    000000001440100155785634125dff000000650000204068011a4f3a380a1209000000000000f0bf11000000000000f03f1100\
    0000000000e03f19000000000000004021000000000000d0bf29000000000000f83f4001480255785634125dff000000650000\
    20406801";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn raised(p: &Primitive) -> &Raised {
    match &p.shape {
        Shape::Raised(r) => r,
        other => panic!("not a raised shape: {other:?}"),
    }
}

#[test]
fn a_log_without_heights_is_version_1_byte_for_byte() {
    let log = sample();
    assert_eq!(version_for(&log), FLOOR_VERSION);
    let bytes = to_bytes(&log);
    assert_eq!(bytes[8], 1);
    assert_eq!(hex(&bytes), SAMPLE_V1.replace(' ', ""));
    let mut z = Vec::new();
    write(&log, &mut z, Some(3)).unwrap();
    assert_eq!(&z[..10], b"UNDERLAY\x01\x01");
}

/// Issue 33: every shape above the floor reads back with its values, in a
/// version-2 file whose header says 2 too, plain and compressed.
#[test]
fn raised_shapes_round_trip_in_version_2() {
    let log = sample_raised();
    assert_eq!(version_for(&log), RAISED_VERSION);
    let bytes = to_bytes(&log);
    assert_eq!(&bytes[..10], b"UNDERLAY\x02\x00");
    let back = read(&bytes[..]).unwrap();
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    assert_eq!(back, log);
    let p = &back.primitives;
    assert_eq!(
        raised(&p[0]),
        &Raised::Sphere {
            center: [1200.0, -300.0, 21.5],
            radius: 21.5
        }
    );
    assert_eq!(raised(&p[1]).kind_name(), "polyline");
    assert_eq!(raised(&p[2]).kind_name(), "line");
    assert_eq!(raised(&p[3]).kind_name(), "polygon");
    assert!(matches!(p[4].shape, Shape::Circle { .. }));
    let Raised::Circle { normal, .. } = raised(&p[5]) else {
        panic!("{:?}", p[5]);
    };
    assert_eq!(*normal, crate::raised::UP);
    let Raised::Circle { normal, .. } = raised(&p[6]) else {
        panic!("{:?}", p[6]);
    };
    assert_eq!(*normal, [1.0, 0.0, 0.0]);
    assert!(matches!(raised(&p[7]), Raised::Text { text, size: 14.0, .. } if &**text == "above \"me\""));
    assert!(matches!(
        raised(&p[8]),
        Raised::Point {
            kind: MarkerKind::Dot,
            ..
        }
    ));
    assert_eq!(
        raised(&p[10]),
        &Raised::Cylinder {
            base: [100.0, 0.0, 0.0],
            radius: 90.0,
            height: 150.0
        }
    );
    assert_eq!(
        raised(&p[11]),
        &Raised::Box {
            base: [-500.0, 250.0, 0.0],
            size: [180.0, 60.0, 40.0],
            orientation: 0.5
        }
    );
    let mut z = Vec::new();
    write(&log, &mut z, Some(3)).unwrap();
    assert_eq!(&z[..10], b"UNDERLAY\x02\x01");
    assert_eq!(read(&z[..]).unwrap(), log);
}

/// A height of -0 stays -0, and a normal that differs from (0, 0, 1) only
/// by the sign of a zero is written.
#[test]
fn raised_negative_zero_survives() {
    let mut log = Log::new();
    let e = log.entities.intern("e");
    let shape = |r| Primitive {
        shape: Shape::Raised(Box::new(r)),
        style: Style::default(),
        entity: e,
        level: 0,
    };
    log.push_frame(
        FrameTime::Instant(0.0),
        [
            shape(Raised::Sphere {
                center: [1.0, 2.0, -0.0],
                radius: 1.0,
            }),
            shape(Raised::Circle {
                center: [0.0; 3],
                radius: 1.0,
                normal: [-0.0, 0.0, 1.0],
            }),
        ],
    );
    let back = read(&to_bytes(&log)[..]).unwrap();
    let Raised::Sphere { center, .. } = raised(&back.primitives[0]) else {
        panic!();
    };
    assert!(center[2].is_sign_negative());
    let Raised::Circle { normal, .. } = raised(&back.primitives[1]) else {
        panic!();
    };
    assert!(normal[0].is_sign_negative());
}

/// A file of a version newer than this build's says so, and which
/// versions this one reads; version 0 was never written.
#[test]
fn a_newer_version_is_refused_saying_which_versions_are_read() {
    let mut b = to_bytes(&sample_raised());
    b[8] = 4;
    let e = read(&b[..]).unwrap_err();
    assert!(
        matches!(e, ReadError::UnsupportedVersion { found: 4, newest: 3 }),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(
        m.contains("version 4 is not supported")
            && m.contains("written by a newer underlay")
            && m.contains("reads versions 1 to 3"),
        "{m}"
    );
    b[8] = 0;
    let m = read(&b[..]).unwrap_err().to_string();
    assert!(m.contains("version 0") && m.contains("damaged"), "{m}");
    // A version-1 prefix over shapes above the floor (a hand-made file)
    // still reads, with a word about the header's disagreeing version.
    b[8] = 1;
    let log = read(&b[..]).unwrap();
    assert_eq!(log.primitives.len(), sample_raised().primitives.len());
    assert!(
        log.warnings[0].message.contains("header says format version 2"),
        "{:?}",
        log.warnings
    );
}

/// Every cut of a log with heights keeps its complete frames, and every
/// byte of it damaged reads or fails cleanly: no panic, and what loads
/// can be drawn.
#[test]
fn torn_and_damaged_raised_records_never_panic() {
    let log = sample_raised();
    let bytes = to_bytes(&log);
    for cut in PREFIX_LEN..bytes.len() {
        let torn = read(&bytes[..cut]).unwrap();
        assert_eq!(torn.frames[..], log.frames[..torn.frames.len()], "cut at {cut}");
    }
    for i in PREFIX_LEN..bytes.len() {
        for v in [0x00, 0x01, 0x09, 0x0a, 0x10, 0x12, 0x7f, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] = v;
            if let Ok(got) = read(&b[..]) {
                assert!(got.primitives.iter().all(drawable), "byte {i} = {v:#x}");
            }
        }
    }
}

fn frame_with_shape(field: u32, body: &[u8]) -> Vec<u8> {
    let mut prim = Vec::new();
    wire::put_len(&mut prim, field, body.len());
    prim.extend_from_slice(body);
    let mut frame = Vec::new();
    wire::put_f64(&mut frame, 1, 1.0);
    wire::put_len(&mut frame, 3, prim.len());
    frame.extend_from_slice(&prim);
    let mut b = versioned_prefix(RAISED_VERSION, false).to_vec();
    wire::put_varint(&mut b, wire::len_field_len(RECORD_FRAME, frame.len()) as u64);
    wire::put_len(&mut b, RECORD_FRAME, frame.len());
    b.extend_from_slice(&frame);
    b
}

/// The warnings of reading `bytes`, which must hold exactly one record
/// that does not decode (passed over, with its reason).
fn passed_over(bytes: &[u8]) -> String {
    let log = read(bytes).unwrap();
    assert_eq!(log.skipped.items, 1, "{:?}", log.warnings);
    log.warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A raised shape's field of the wrong wire type is corrupt, named, and
/// costs its record; a field this build does not know is skipped.
#[test]
fn raised_fields_of_the_wrong_type_are_corrupt_and_unknown_ones_skipped() {
    // A sphere (field 18) whose center is a varint.
    let e = passed_over(&frame_with_shape(18, &[0x08, 5]));
    assert!(e.contains("field 1 of a sphere has wire type 0"), "{e}");
    // A box (20) whose size is a double.
    let mut body = vec![0x11];
    body.extend_from_slice(&1.0f64.to_le_bytes());
    let e = passed_over(&frame_with_shape(20, &body));
    assert!(e.contains("field 2 of a box has wire type 1"), "{e}");
    // A Vec3 whose z is a fixed32.
    let e = passed_over(&frame_with_shape(18, &[0x0a, 5, 0x1d, 0, 0, 0, 0]));
    assert!(e.contains("coordinate field 3 has wire type 5"), "{e}");
    // A sphere with an unknown field 9 and a radius: the radius is kept.
    let mut body = vec![0x48, 7, 0x11];
    body.extend_from_slice(&2.5f64.to_le_bytes());
    let log = read(&frame_with_shape(18, &body)[..]).unwrap();
    assert_eq!(
        raised(&log.primitives[0]),
        &Raised::Sphere {
            center: [0.0; 3],
            radius: 2.5
        }
    );
    // A message that runs past its end.
    let e = passed_over(&frame_with_shape(14, &[0x0a, 30, 0x09]));
    assert!(e.contains("runs past the end"), "{e}");
}

/// Shapes above the floor that cannot be drawn are dropped with a warning
/// naming the frame and the primitive, like any other.
#[test]
fn undrawable_raised_shapes_are_dropped_with_a_warning() {
    let mut b = versioned_prefix(RAISED_VERSION, false).to_vec();
    let prim = |r| Primitive {
        shape: Shape::Raised(Box::new(r)),
        style: Style::default(),
        entity: EntityId(0),
        level: 0,
    };
    put_frame_record(
        &mut b,
        FrameTime::Instant(1.0),
        &[
            prim(Raised::Path {
                points: vec![[0.0; 3]].into(),
                closed: false,
            }),
            prim(Raised::Circle {
                center: [0.0; 3],
                radius: 1.0,
                normal: [0.0; 3],
            }),
            prim(Raised::Cylinder {
                base: [0.0; 3],
                radius: -1.0,
                height: 1.0,
            }),
            prim(Raised::Sphere {
                center: [0.0, 0.0, f64::NAN],
                radius: 1.0,
            }),
            prim(Raised::Sphere {
                center: [0.0; 3],
                radius: 1.0,
            }),
        ],
    );
    let log = read(&b[..]).unwrap();
    assert_eq!(log.primitives.len(), 1);
    let w: Vec<&str> = log.warnings.iter().map(|w| w.message.as_str()).collect();
    let expected = [
        "primitive 0 (polyline) dropped: raised polyline: a path needs at least two points",
        "primitive 1 (circle) dropped: raised circle: a circle's normal has length 0",
        "primitive 2 (cylinder) dropped: raised cylinder: a size is negative",
        "primitive 3 (sphere) dropped: raised sphere: a coordinate or size is not finite",
    ];
    for e in expected {
        assert!(w.iter().any(|m| m.contains(e)), "{e}: {w:?}");
    }
    assert!(
        log.warnings
            .iter()
            .all(|w| w.frame == Some(0) && w.offset.is_some())
    );
}

/// A log with shapes in the picture's pixels is version 3, reads back
/// equal, and every cut and damaged byte of it reads or fails cleanly.
#[test]
fn picture_shapes_round_trip_in_version_3() {
    let log = sample_picture();
    let bytes = to_bytes(&log);
    assert_eq!(bytes[8], PICTURE_VERSION);
    assert_eq!(read(&bytes[..]).unwrap(), log);
    for cut in PREFIX_LEN..bytes.len() {
        let torn = read(&bytes[..cut]).unwrap();
        assert_eq!(torn.frames[..], log.frames[..torn.frames.len()], "cut at {cut}");
    }
    for i in PREFIX_LEN..bytes.len() {
        for v in [0x00, 0x01, 0x08, 0x0a, 0xa8, 0x7f, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] = v;
            if let Ok(got) = read(&b[..]) {
                assert!(got.primitives.iter().all(drawable), "byte {i} = {v:#x}");
            }
        }
    }
}

/// A native log of one frame holding one primitive of `body`.
fn frame_with_primitive(version: u8, body: &[u8]) -> Vec<u8> {
    let mut frame = Vec::new();
    wire::put_f64(&mut frame, 1, 1.0);
    wire::put_len(&mut frame, 3, body.len());
    frame.extend_from_slice(body);
    let mut b = versioned_prefix(version, false).to_vec();
    wire::put_varint(&mut b, wire::len_field_len(RECORD_FRAME, frame.len()) as u64);
    wire::put_len(&mut b, RECORD_FRAME, frame.len());
    b.extend_from_slice(&frame);
    b
}

/// The picture flag on a shape above the floor is dropped with a warning
/// naming the primitive; the flag of the wrong wire type is corrupt.
#[test]
fn a_picture_shape_with_heights_is_dropped_with_a_warning() {
    // A sphere (field 18) of radius 1, then `picture` (field 21).
    let mut sphere = vec![0x11];
    sphere.extend_from_slice(&1.0f64.to_le_bytes());
    let mut prim = Vec::new();
    wire::put_len(&mut prim, 18, sphere.len());
    prim.extend_from_slice(&sphere);
    let mut flagged = prim.clone();
    flagged.extend_from_slice(&[0xa8, 0x01, 0x01]);
    let log = read(&frame_with_primitive(PICTURE_VERSION, &flagged)[..]).unwrap();
    assert!(log.primitives.is_empty());
    assert!(
        log.warnings.iter().any(|w| w
            .message
            .contains("primitive 0 (sphere) dropped: a shape in the picture's pixels cannot have heights")),
        "{:?}",
        log.warnings
    );
    // The flag as a fixed64 is corrupt, named.
    let mut fixed = prim;
    fixed.extend_from_slice(&[0xa9, 0x01, 1, 0, 0, 0, 0, 0, 0, 0]);
    let e = passed_over(&frame_with_primitive(PICTURE_VERSION, &fixed));
    assert!(e.contains("primitive field 21 has wire type 1"), "{e}");
}
