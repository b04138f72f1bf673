//! The decoder against `rosbags` (fixtures written by
//! `scripts/ros-cdr-fixtures.py`), against hand-made bytes, and against
//! random and damaged bytes.

use super::*;
use serde_json::Value as Json;

const MESSAGES: &str = include_str!("../../../tests/data/ros/cdr/messages.json");
const SCHEMAS: &str = include_str!("../../../tests/data/ros/cdr/mcap-schemas.json");

struct Fixture {
    ty: String,
    cdr: Vec<u8>,
    value: Json,
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn fixtures() -> &'static [Fixture] {
    static ALL: std::sync::OnceLock<Vec<Fixture>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let all: Vec<Json> = serde_json::from_str(MESSAGES).unwrap();
        all.into_iter()
            .map(|m| Fixture {
                ty: m["type"].as_str().unwrap().to_owned(),
                cdr: unhex(m["cdr"].as_str().unwrap()),
                value: m["value"].clone(),
            })
            .collect()
    })
}

/// Compares a decoded value with rosbags' (as the script writes it):
/// floats as text, exactly, NaN equal to NaN.
fn compare(path: &str, want: &Json, got: &Value<'_>) {
    match got {
        Value::Bool(b) => assert_eq!(want.as_bool(), Some(*b), "{path}"),
        Value::Int(i) => assert_eq!(want.as_i64(), Some(*i), "{path}"),
        Value::UInt(u) => assert_eq!(want.as_u64(), Some(*u), "{path}"),
        Value::Float(f) => {
            let w: f64 = want.as_str().unwrap().parse().unwrap();
            assert!(
                (w.is_nan() && f.is_nan()) || w.to_bits() == f.to_bits(),
                "{path}: want {w}, got {f}"
            );
        }
        Value::Str(s) => assert_eq!(want.as_str(), Some(&**s), "{path}"),
        // An int8 array is read as its bytes (two's complement); rosbags
        // gives its numbers.
        Value::Bytes(b) if want.is_array() => {
            let w: Vec<i64> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            let g: Vec<i64> = b.iter().map(|&v| i64::from(v as i8)).collect();
            assert_eq!(w, g, "{path}");
        }
        Value::Bytes(b) => assert_eq!(unhex(want["bytes"].as_str().unwrap()), b.to_vec(), "{path}"),
        Value::Array(items) => {
            let w = want.as_array().unwrap();
            assert_eq!(w.len(), items.len(), "{path}");
            for (i, (w, g)) in w.iter().zip(items).enumerate() {
                compare(&format!("{path}[{i}]"), w, g);
            }
        }
        Value::Struct(s) => compare_struct(path, want, s),
    }
}

fn compare_struct(path: &str, want: &Json, got: &Struct<'_>) {
    assert_eq!(want["type"].as_str(), Some(&*got.type_name), "{path}");
    let mut w: Vec<&Json> = want["fields"].as_array().unwrap().iter().collect();
    if got.fields.is_empty() && w.len() == 1 && w[0][0] == "structure_needs_at_least_one_member" {
        w.clear();
    }
    assert_eq!(w.len(), got.fields.len(), "{path}: field count");
    for (w, (name, v)) in w.iter().zip(&got.fields) {
        assert_eq!(w[0].as_str(), Some(&**name), "{path}");
        compare(&format!("{path}.{name}"), &w[1], v);
    }
}

#[test]
fn matches_rosbags() {
    let reg = Registry::builtin();
    let fx = fixtures();
    assert!(fx.len() > 100);
    let mut big = 0;
    for f in fx {
        big += usize::from(f.cdr[1] == 0);
        let s = decode(&reg, &f.ty, &f.cdr).unwrap_or_else(|e| panic!("{}: {e}", f.ty));
        compare_struct(&f.ty, &f.value, &s);
    }
    assert!(big >= 4, "big-endian fixtures: {big}");
}

/// The definitions as an MCAP's `ros2msg` schema carries them decode the
/// same as the built-in ones.
#[test]
fn schema_text_decodes_the_same() {
    let builtin = Registry::builtin();
    let schemas: Vec<Json> = serde_json::from_str(SCHEMAS).unwrap();
    let fx = fixtures();
    for s in &schemas {
        let ty = s["type"].as_str().unwrap();
        let mut reg = Registry::new();
        reg.add_ros2msg(ty, s["text"].as_str().unwrap()).unwrap();
        assert!(reg.missing(ty).is_empty(), "{ty}: {:?}", reg.missing(ty));
        let mut n = 0;
        for f in fx.iter().filter(|f| f.ty == ty) {
            let a = decode(&reg, ty, &f.cdr).unwrap();
            let b = decode(&builtin, ty, &f.cdr).unwrap();
            compare_struct(ty, &f.value, &a);
            assert_eq!(format!("{a:?}"), format!("{b:?}")); // NaN != NaN
            n += 1;
        }
        assert!(n > 0, "{ty}");
    }
}

/// A little-endian CDR writer for hand-made messages.
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn new() -> W {
        W(vec![0, 1, 0, 0])
    }
    fn pad(&mut self, a: usize) -> &mut W {
        while !(self.0.len() - 4).is_multiple_of(a) {
            self.0.push(0);
        }
        self
    }
    fn u32(&mut self, v: u32) -> &mut W {
        self.pad(4).0.extend(v.to_le_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut W {
        self.pad(4).0.extend(v.to_le_bytes());
        self
    }
    fn u8(&mut self, v: u8) -> &mut W {
        self.0.push(v);
        self
    }
    fn f64(&mut self, v: f64) -> &mut W {
        self.pad(8).0.extend(v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut W {
        self.u32(s.len() as u32 + 1);
        self.0.extend(s.as_bytes());
        self.0.push(0);
        self
    }
    fn header(&mut self, sec: i32, frame: &str) -> &mut W {
        self.i32(sec).u32(7).str(frame)
    }
}

#[test]
fn image_pixels_are_borrowed() {
    let (w, h) = (1280u32, 720u32);
    let mut m = W::new();
    m.header(5, "camera").u32(h).u32(w).str("bgr8").u8(0).u32(w * 3);
    m.u32(w * h * 3);
    m.0.extend((0..w * h * 3).map(|i| i as u8));
    let bytes = m.0;
    let reg = Registry::builtin();
    let start = std::time::Instant::now();
    let img = decode(&reg, "sensor_msgs/msg/Image", &bytes).unwrap();
    assert!(start.elapsed().as_millis() < 50);
    let data = img.path("data").unwrap().as_bytes().unwrap();
    assert_eq!(data.len(), (w * h * 3) as usize);
    assert_eq!(data.as_ptr(), bytes[bytes.len() - data.len()..].as_ptr());
    assert_eq!(img.str("encoding"), Some("bgr8"));
    assert_eq!(img.str("header.frame_id"), Some("camera"));
    assert_eq!(img.f64("header.stamp.sec"), Some(5.0));
    assert_eq!(img.f64("width"), Some(1280.0));
    assert!(matches!(img.path("encoding"), Some(Value::Str(Cow::Borrowed(_)))));
}

/// A `MarkerArray` of one marker with `points` points, and where each
/// point's `y` begins.
fn marker_array(points: &[[f64; 3]]) -> (Vec<u8>, Vec<usize>) {
    let mut m = W::new();
    m.u32(1); // markers
    m.header(1, "map").str("ns").i32(3).i32(4).i32(0);
    for _ in 0..7 {
        m.f64(0.5); // pose
    }
    for _ in 0..3 {
        m.f64(1.0); // scale
    }
    for _ in 0..4 {
        m.pad(4).0.extend(1f32.to_le_bytes()); // color
    }
    m.i32(0).u32(0).u8(1); // lifetime, frame_locked
    m.u32(points.len() as u32);
    let mut ys = Vec::new();
    for p in points {
        m.f64(p[0]);
        ys.push(m.0.len());
        m.f64(p[1]).f64(p[2]);
    }
    m.u32(0); // colors
    m.str(""); // texture_resource
    m.header(0, "").str("").u32(0); // texture
    m.u32(0).str("text").str("").str("").u32(0).u8(0);
    (m.0, ys)
}

#[test]
fn hand_made_marker_array() {
    let reg = Registry::builtin();
    let (bytes, _) = marker_array(&[[1.0, 2.0, 3.0], [-4.0, f64::NAN, 6.0]]);
    let s = decode(&reg, "visualization_msgs/MarkerArray", &bytes).unwrap();
    let m = s.array("markers").unwrap()[0].as_struct().unwrap();
    assert_eq!(m.str("text"), Some("text"));
    assert_eq!(m.path("frame_locked"), Some(&Value::Bool(true)));
    let p = m.array("points").unwrap()[1].as_struct().unwrap();
    assert_eq!(p.f64("x"), Some(-4.0));
    assert!(p.f64("y").unwrap().is_nan());
    assert_eq!(&*p.type_name, "geometry_msgs/msg/Point");
}

#[test]
fn error_names_field_and_byte() {
    let reg = Registry::builtin();
    // A cut sequence of points fails at its count, before any point.
    let (bytes, ys) = marker_array(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let e = decode(&reg, "visualization_msgs/msg/MarkerArray", &bytes[..ys[1] + 3]).unwrap_err();
    let CdrError::Field {
        path,
        offset,
        problem,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(path, "markers[0].points");
    assert_eq!(*offset, ys[0] - 8 - 4); // its count
    assert!(
        matches!(
            problem,
            Problem::TooLong {
                count: 2,
                min: 24,
                ..
            }
        ),
        "{e}"
    );
    // A transform's frame longer than the message.
    let mut m = W::new();
    m.u32(2);
    m.header(1, "map").str("a");
    for _ in 0..7 {
        m.f64(0.0);
    }
    m.header(2, "map");
    let at = m.pad(4).0.len();
    m.u32(1000).0.extend([0; 64]);
    let e = decode(&reg, "tf2_msgs/TFMessage", &m.0).unwrap_err();
    let CdrError::Field {
        path,
        offset,
        problem,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(path, "transforms[1].child_frame_id");
    assert_eq!(*offset, at);
    assert_eq!(*problem, Problem::Truncated { need: 1000, left: 64 });
    let text = e.to_string();
    assert!(text.contains("transforms[1].child_frame_id"), "{text}");
    assert!(text.contains(&format!("byte {at}")), "{text}");
}

#[test]
fn counts_are_checked_before_allocating() {
    let reg = Registry::builtin();
    let mut m = W::new();
    m.u32(u32::MAX); // markers
    let e = decode(&reg, "visualization_msgs/msg/MarkerArray", &m.0).unwrap_err();
    assert!(
        matches!(&e, CdrError::Field { problem: Problem::TooLong { count, .. }, .. } if *count == u64::from(u32::MAX)),
        "{e}"
    );
    let mut m = W::new();
    m.header(0, "").u32(0).u32(0).str("").u8(0).u32(0).u32(1 << 30);
    assert!(decode(&reg, "sensor_msgs/msg/Image", &m.0).is_err());
    // A string longer than the message.
    let mut m = W::new();
    m.u32(1 << 31);
    assert!(decode(&reg, "std_msgs/String", &m.0).is_err());
}

#[test]
fn headers_and_unknown_types() {
    let reg = Registry::builtin();
    assert!(matches!(
        decode(&reg, "std_msgs/msg/String", &[0, 1]),
        Err(CdrError::NoHeader(2))
    ));
    assert!(matches!(
        decode(&reg, "std_msgs/msg/String", &[0, 3, 0, 0, 1, 0, 0, 0, 0]),
        Err(CdrError::Encapsulation { id: 3, .. })
    ));
    assert!(matches!(
        decode(&reg, "no/Such", &[0, 1, 0, 0]),
        Err(CdrError::UnknownType(_))
    ));
    // XCDR2 aligns 8-byte values to 4.
    let bytes = [0, 7, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f];
    let reg2 = {
        let mut r = Registry::new();
        r.add_ros2msg("t/T", "int32 a\nfloat64 b").unwrap();
        r
    };
    let s = decode(&reg2, "t/T", &bytes).unwrap();
    assert_eq!(s.f64("b"), Some(1.0));
    // Big-endian.
    let bytes = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0];
    let s = decode(&reg2, "t/T", &bytes).unwrap();
    assert_eq!((s.f64("a"), s.f64("b")), (Some(1.0), Some(1.0)));
}

#[test]
fn empty_types_take_a_byte() {
    let mut reg = Registry::builtin();
    reg.add_ros2msg("t/T", "std_msgs/Empty e\nstd_msgs/Empty[] es\nint8 after")
        .unwrap();
    let bytes = [0, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0xff];
    let s = decode(&reg, "t/T", &bytes).unwrap();
    assert_eq!(s.sub("e").unwrap().fields.len(), 0);
    assert_eq!(s.array("es").unwrap().len(), 2);
    assert_eq!(s.f64("after"), Some(-1.0));
    assert!(decode(&reg, "std_msgs/Empty", &[0, 1, 0, 0]).is_err());
}

#[test]
fn recursive_definitions_stop_at_the_depth_limit() {
    let mut reg = Registry::new();
    reg.add_ros2msg("r/A", "r/B b\n===\nMSG: r/B\nuint8 x\nr/A a\n")
        .unwrap();
    reg.add_ros2msg("r/L", "r/L[] kids\nuint8 x\n").unwrap();
    let mut bytes = vec![1u8; 4096];
    bytes[..4].copy_from_slice(&[0, 1, 0, 0]);
    let e = decode(&reg, "r/A", &bytes).unwrap_err();
    assert!(
        matches!(
            &e,
            CdrError::Field {
                problem: Problem::TooDeep,
                ..
            }
        ),
        "{e}"
    );
    let mut nested = vec![0, 1, 0, 0];
    for _ in 0..200 {
        nested.extend([1, 0, 0, 0]);
    }
    assert!(decode(&reg, "r/L", &nested).is_err());
}

#[test]
fn wstrings_are_read_as_fast_dds_writes_them() {
    let mut reg = Registry::new();
    reg.add_ros2msg("w/W", "wstring s\nuint8 after").unwrap();
    let mut m = W::new();
    m.u32(2).u32('é' as u32).u32('✓' as u32).u8(9);
    let s = decode(&reg, "w/W", &m.0).unwrap();
    assert_eq!(s.str("s"), Some("é✓"));
    assert_eq!(s.f64("after"), Some(9.0));
}

#[test]
fn invalid_utf8_is_replaced() {
    let reg = Registry::builtin();
    let bytes = [0, 1, 0, 0, 3, 0, 0, 0, b'a', 0xff, 0];
    let s = decode(&reg, "std_msgs/String", &bytes).unwrap();
    assert_eq!(s.str("data"), Some("a\u{fffd}"));
}

const FUZZ_TYPES: &[&str] = &[
    "visualization_msgs/msg/MarkerArray",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CameraInfo",
    "tf2_msgs/msg/TFMessage",
    "nav_msgs/msg/Path",
    "foxglove_msgs/msg/ImageAnnotations",
    "std_msgs/msg/Empty",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: crate::testing::fuzz_cases(),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Random bytes never panic, whatever the type.
    #[test]
    fn random_bytes_never_panic(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
        ty in 0..FUZZ_TYPES.len(),
        le in proptest::prelude::any::<bool>(),
    ) {
        let reg = Registry::builtin();
        let mut bytes = bytes;
        if bytes.len() >= 4 {
            bytes[..4].copy_from_slice(&[0, u8::from(le), 0, 0]);
        }
        let _ = decode(&reg, FUZZ_TYPES[ty], &bytes);
    }

    /// rosbags' messages with bytes changed and cut never panic; cut ones
    /// fail unless what is cut is padding.
    #[test]
    fn damaged_messages_never_panic(
        which in 0usize..1000,
        changes in proptest::collection::vec((0usize..10_000, proptest::prelude::any::<u8>()), 0..6),
        cut in 0usize..10_000,
    ) {
        let fx = fixtures();
        let f = &fx[which % fx.len()];
        let reg = Registry::builtin();
        let mut bytes = f.cdr.clone();
        for (at, b) in changes {
            let n = bytes.len();
            bytes[at % n] = b;
        }
        let _ = decode(&reg, &f.ty, &bytes);
        let _ = decode(&reg, &f.ty, &bytes[..cut % (bytes.len() + 1)]);
    }
}

/// `geometry_msgs/PoseStamped` as an MCAP `ros2idl` schema carries it
/// (rosidl's IDL, each file after a `=` line and `IDL:` line).
const POSE_STAMPED_IDL: &str = r#"// generated from rosidl_adapter/resource/msg.idl.em
#include "geometry_msgs/msg/Pose.idl"
#include "std_msgs/msg/Header.idl"

module geometry_msgs {
  module msg {
    @verbatim (language="comment", text=
      "A Pose with reference coordinate frame and timestamp")
    struct PoseStamped {
      std_msgs::msg::Header header;

      geometry_msgs::msg::Pose pose;
    };
  };
};

================================================================================
IDL: geometry_msgs/msg/Pose
module geometry_msgs {
  module msg {
    struct Pose {
      geometry_msgs::msg::Point position;

      geometry_msgs::msg::Quaternion orientation;
    };
  };
};

================================================================================
IDL: geometry_msgs/msg/Point
module geometry_msgs {
  module msg {
    struct Point {
      double x;

      double y;

      double z;
    };
  };
};

================================================================================
IDL: geometry_msgs/msg/Quaternion
module geometry_msgs {
  module msg {
    struct Quaternion {
      @default (value=0.0)
      double x;

      @default (value=0.0)
      double y;

      @default (value=0.0)
      double z;

      @default (value=1.0)
      double w;
    };
  };
};

================================================================================
IDL: std_msgs/msg/Header
module std_msgs {
  module msg {
    struct Header {
      builtin_interfaces::msg::Time stamp;

      string frame_id;
    };
  };
};

================================================================================
IDL: builtin_interfaces/msg/Time
module builtin_interfaces {
  module msg {
    module Time_Constants {
      const string NAME = "a \"quoted\" ; constant";
    };
    struct Time {
      int32 sec;

      uint32 nanosec;
    };
  };
};
"#;

#[test]
fn idl_schema_decodes_the_same() {
    let ty = "geometry_msgs/msg/PoseStamped";
    let mut reg = Registry::new();
    reg.add_ros2idl(ty, POSE_STAMPED_IDL).unwrap();
    assert!(reg.missing(ty).is_empty(), "{:?}", reg.missing(ty));
    let builtin = Registry::builtin();
    let mut n = 0;
    for f in fixtures().iter().filter(|f| f.ty == ty) {
        let a = decode(&reg, ty, &f.cdr).unwrap();
        compare_struct(ty, &f.value, &a);
        let b = decode(&builtin, ty, &f.cdr).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn fixed_arrays_have_no_count() {
    let mut reg = Registry::new();
    reg.add_ros2msg(
        "f/F",
        "uint8[3] rgb\nchar[2] c\nbool[2] flags\nint16[2] v\nstring[2] s",
    )
    .unwrap();
    let mut m = W::new();
    m.0.extend([1, 2, 3, b'h', b'i', 1, 0]);
    m.pad(2).0.extend((-2i16).to_le_bytes());
    m.0.extend(7i16.to_le_bytes());
    m.str("a").str("");
    let s = decode(&reg, "f/F", &m.0).unwrap();
    assert_eq!(s.path("rgb").unwrap().as_bytes(), Some(&[1u8, 2, 3][..]));
    assert_eq!(s.path("c").unwrap().as_bytes(), Some(&b"hi"[..]));
    assert_eq!(
        s.array("flags").unwrap(),
        &[Value::Bool(true), Value::Bool(false)]
    );
    assert_eq!(s.array("v").unwrap(), &[Value::Int(-2), Value::Int(7)]);
    assert_eq!(
        s.array("s").unwrap(),
        &[Value::Str("a".into()), Value::Str("".into())]
    );
}
