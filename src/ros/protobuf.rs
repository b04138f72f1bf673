//! Messages encoded as protobuf (MCAP's `protobuf` encoding, as Foxglove's
//! SDKs write their own schemas), decoded from the `FileDescriptorSet` the
//! file's schema carries with `prost-reflect`, into the same [`Value`] tree
//! CDR messages decode to. Unset fields take their defaults (proto3 leaves
//! zeros out of the wire). `bytes` fields are copied out of the decoded
//! message (a picture once).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage};

use super::value::{Struct, Value};

thread_local! {
    /// Whether a panic on this thread is caught by [`quiet_unwind`].
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, a panic in it an error, unprinted. prost-reflect 0.16.5
/// indexes past its files when it reports some faults of a damaged
/// descriptor set (`Label::new`: "the len is 1 but the index is 1"; a
/// mutant of `tests/data/ros/foxglove-protobuf.mcap` found it, issue 52's
/// campaign): a bad schema is a bad schema, not a crash.
fn quiet_unwind<T>(f: impl FnOnce() -> T) -> Result<T, ()> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    r.map_err(|_| ())
}

/// The message descriptors of a recording's protobuf schemas, by type.
#[derive(Debug, Default)]
pub struct Descriptors {
    by_type: HashMap<String, MessageDescriptor>,
}

impl Descriptors {
    /// Adds the type `type_name` from its schema's `FileDescriptorSet`.
    pub fn add(&mut self, type_name: &str, descriptor_set: &[u8]) -> Result<(), String> {
        let pool = quiet_unwind(|| DescriptorPool::decode(descriptor_set))
            .map_err(|()| "its descriptors are not readable (prost-reflect fails on them)".to_owned())?
            .map_err(|e| format!("its descriptors are not readable: {e}"))?;
        let message = pool
            .get_message_by_name(type_name)
            .ok_or_else(|| format!("its descriptors do not define {type_name}"))?;
        self.by_type.insert(type_name.to_owned(), message);
        Ok(())
    }

    /// Whether `type_name` can be decoded.
    pub fn knows(&self, type_name: &str) -> bool {
        self.by_type.contains_key(type_name)
    }

    /// Decodes one message of type `type_name`.
    pub fn decode(&self, type_name: &str, bytes: &[u8]) -> Result<Struct<'static>, String> {
        let desc = self
            .by_type
            .get(type_name)
            .ok_or_else(|| format!("no protobuf descriptor for {type_name}"))?;
        let msg =
            DynamicMessage::decode(desc.clone(), bytes).map_err(|e| format!("not a {type_name}: {e}"))?;
        Ok(message(&msg))
    }
}

fn message(msg: &DynamicMessage) -> Struct<'static> {
    let desc = msg.descriptor();
    Struct {
        type_name: Arc::from(desc.full_name()),
        fields: desc
            .fields()
            .map(|f| (Arc::from(f.name()), value(&msg.get_field(&f))))
            .collect(),
    }
}

fn value(v: &prost_reflect::Value) -> Value<'static> {
    use prost_reflect::Value as P;
    match v {
        P::Bool(b) => Value::Bool(*b),
        P::I32(i) => Value::Int(i64::from(*i)),
        P::I64(i) => Value::Int(*i),
        P::U32(u) => Value::UInt(u64::from(*u)),
        P::U64(u) => Value::UInt(*u),
        P::F32(f) => Value::Float(f64::from(*f)),
        P::F64(f) => Value::Float(*f),
        P::String(s) => Value::Str(Cow::Owned(s.clone())),
        P::Bytes(b) => Value::Bytes(Cow::Owned(b.to_vec())),
        P::EnumNumber(n) => Value::Int(i64::from(*n)),
        P::Message(m) => Value::Struct(message(m)),
        P::List(items) => Value::Array(items.iter().map(value).collect()),
        P::Map(entries) => Value::Array(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        prost_reflect::MapKey::String(s) => Value::Str(Cow::Owned(s.clone())),
                        other => Value::Str(Cow::Owned(format!("{other:?}"))),
                    };
                    Value::Struct(Struct {
                        type_name: Arc::from("map entry"),
                        fields: vec![(Arc::from("key"), key), (Arc::from("value"), value(v))],
                    })
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::log::{FrameTime, Raised, Shape};

    /// The recording `scripts/foxglove-protobuf-fixture.py` writes with
    /// Foxglove's own packages, read end to end.
    #[test]
    fn a_foxglove_protobuf_recording_draws_its_scene_through_its_transforms() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/foxglove-protobuf.mcap");
        let log = crate::formats::load_log(&path).unwrap();
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
        assert_eq!(log.frames.len(), 1);
        assert_eq!(log.entities.get("scene/bot").map(|_| ()), Some(()));
        let f = &log.frames[0];
        let FrameTime::Persistent { start, end } = f.time else {
            panic!("{:?}", f.time)
        };
        // From its stamp until just before its deletion.
        assert!(
            (start - 1_700_000_000.1).abs() < 1e-6 && (end - 1_700_000_000.25).abs() < 1e-6,
            "{start} {end}"
        );
        let p = &log.frame_primitives(f)[0];
        assert_eq!(log.entities.name(p.entity), "scene/bot");
        let Shape::Raised(r) = &p.shape else {
            panic!("{:?}", p.shape)
        };
        let Raised::Sphere { center, radius } = **r else {
            panic!("{r:?}")
        };
        // The robot was 1 m along x at 0.1 s; the sphere 1 m to its left, 0.5 m up.
        assert_eq!((center, radius), ([1.0, 1.0, 0.5], 0.1));
        assert_eq!(p.style.color, crate::log::Rgba(0xff00_00ff));
    }

    fn scene_descriptors() -> super::Descriptors {
        use crate::ros::bag::BagReader;
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/foxglove-protobuf.mcap");
        let bag = crate::ros::mcap_file::open(&path).unwrap();
        let schema = bag.info().by_name("/scene").unwrap().schema.clone().unwrap();
        let mut d = super::Descriptors::default();
        d.add("foxglove.SceneUpdate", &schema.data).unwrap();
        d
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any bytes decoded as a SceneUpdate give a message or an error.
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = scene_descriptors().decode("foxglove.SceneUpdate", &bytes);
        }
    }

    /// Its camera: JPEG pictures at their stamps, drawn through the
    /// calibration and the transform that places it.
    #[test]
    fn a_foxglove_protobuf_recording_plays_its_camera() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/foxglove-protobuf.mcap");
        let mut src = crate::formats::open_source(&path, &Default::default()).unwrap();
        let info = src.info().clone();
        assert_eq!((info.width, info.height, info.frame_count), (160, 90, Some(3)));
        // 5 m straight below: 1 m along x is 20 px right of the centre,
        // 1 m along y 20 px up.
        let cal = info.calibration.expect("the camera placed");
        let px = cal.project(crate::geom::Vec2::new(1.0, 1.0)).unwrap();
        assert!((px.x - 99.5).abs() < 1e-6 && (px.y - 24.5).abs() < 1e-6, "{px:?}");
        let mut times = Vec::new();
        while let Some(f) = src.next_frame().unwrap() {
            times.push((f.time * 10.0).round());
            assert_eq!(f.image.dim(), (90, 160, 3));
        }
        assert_eq!(times, [0.0, 1.0, 2.0]);
    }

    /// Damaged descriptors and messages are errors, not panics.
    #[test]
    fn garbage_is_refused() {
        let mut d = super::Descriptors::default();
        assert!(d.add("foxglove.SceneUpdate", b"\x0a\xff\xff\xff").is_err());
        assert!(!d.knows("foxglove.SceneUpdate"));
        assert!(d.decode("foxglove.SceneUpdate", b"\x08\x01").is_err());
    }
}
