//! Messages encoded as JSON (MCAP's `json` encoding, as Foxglove's SDKs
//! write their own schemas: `foxglove.SceneUpdate`, `foxglove.FrameTransform`)
//! read into the same [`Value`] tree CDR messages decode to. Strings are
//! owned (JSON escapes them). A Foxglove message's `data` (its one
//! `bytes` field: a picture, a point cloud's points) is base64 in JSON, as
//! Foxglove's schemas say (`contentEncoding: base64`): it is decoded into
//! bytes, so pictures and point clouds are read from JSON too.

use std::borrow::Cow;
use std::sync::Arc;

use super::value::{Struct, Value};

/// The deepest nesting read (deeper is refused, not recursed into).
const MAX_DEPTH: usize = 64;

/// Decodes one JSON message of type `type_name`.
pub fn decode(type_name: &str, bytes: &[u8]) -> Result<Struct<'static>, String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let mut s = match convert(v, type_name, 0)? {
        Value::Struct(s) => s,
        _ => return Err("a JSON message that is not an object".into()),
    };
    if type_name.starts_with("foxglove.") {
        for (name, value) in &mut s.fields {
            if &**name == "data"
                && let Value::Str(text) = value
            {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text.as_bytes())
                    .map_err(|e| format!("data: not base64 ({e})"))?;
                *value = Value::Bytes(Cow::Owned(bytes));
            }
        }
    }
    Ok(s)
}

fn convert(v: serde_json::Value, type_name: &str, depth: usize) -> Result<Value<'static>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH}"));
    }
    Ok(match v {
        serde_json::Value::Null => Value::Array(Vec::new()),
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int(i),
            (_, Some(u), _) => Value::UInt(u),
            (_, _, Some(f)) => Value::Float(f),
            _ => Value::Float(f64::NAN),
        },
        serde_json::Value::String(s) => Value::Str(Cow::Owned(s)),
        serde_json::Value::Array(a) => Value::Array(
            a.into_iter()
                .map(|v| convert(v, "", depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(o) => Value::Struct(Struct {
            type_name: Arc::from(type_name),
            fields: o
                .into_iter()
                .map(|(k, v)| Ok((Arc::from(k.as_str()), convert(v, "", depth + 1)?)))
                .collect::<Result<_, String>>()?,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foxglove_json_message_reads_as_a_message() {
        let m = decode(
            "foxglove.FrameTransform",
            br#"{"timestamp":{"sec":1700000000,"nsec":500000000},"parent_frame_id":"map","child_frame_id":"base",
                "translation":{"x":1,"y":-2.5,"z":0},"rotation":{"x":0,"y":0,"z":0,"w":1}}"#,
        )
        .unwrap();
        assert_eq!(&*m.type_name, "foxglove.FrameTransform");
        assert_eq!(m.seconds("timestamp"), Some(1_700_000_000.5));
        assert_eq!(m.str("parent_frame_id"), Some("map"));
        assert_eq!(m.f64("translation.y"), Some(-2.5));
        assert!(decode("x", b"[1, 2]").is_err());
        assert!(decode("x", b"{\"a\": ").is_err());
        let deep = format!("{}{}", "{\"a\":".repeat(100), "1".to_owned() + &"}".repeat(100));
        assert!(decode("x", deep.as_bytes()).is_err());
    }

    #[test]
    fn a_foxglove_messages_data_is_base64() {
        let m = decode(
            "foxglove.CompressedImage",
            br#"{"format":"png","data":"iVBORw0KGgo="}"#,
        )
        .unwrap();
        assert_eq!(
            m.get("data").and_then(|v| v.as_bytes()),
            Some(&b"\x89PNG\r\n\x1a\n"[..])
        );
        // Another schema's `data` is text; bad base64 is said.
        let m = decode("my.Note", br#"{"data":"iVBORw0KGgo="}"#).unwrap();
        assert_eq!(m.str("data"), Some("iVBORw0KGgo="));
        let e = decode("foxglove.RawImage", br#"{"data":"not base64!"}"#).unwrap_err();
        assert!(e.contains("data: not base64"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any bytes give a message or an error.
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = decode("x", &bytes);
        }
    }
}
