//! A decoded ROS message: a tree of values that borrows the message's
//! bytes where it can (an image's pixels are never copied), and the
//! accessors the drawing code reads fields with (`header.stamp.sec`).

use std::borrow::Cow;
use std::sync::Arc;

/// One value of a decoded message.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// `bool`.
    Bool(bool),
    /// Signed integers (`int8` … `int64`).
    Int(i64),
    /// Unsigned integers (`uint16` … `uint64`; `uint8`, `byte` and `char`
    /// alone, not in arrays).
    UInt(u64),
    /// `float32`, `float64`.
    Float(f64),
    /// `string`, `wstring`.
    Str(Cow<'a, str>),
    /// Arrays and sequences of `uint8`, `byte`, `char` or `int8` (two's
    /// complement): the bytes as they are (borrowed from the message where
    /// the encoding allows).
    Bytes(Cow<'a, [u8]>),
    /// Any other array or sequence.
    Array(Vec<Value<'a>>),
    /// A nested message.
    Struct(Struct<'a>),
}

/// A message: its type's full name (`geometry_msgs/msg/Point`) and its
/// fields in declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct Struct<'a> {
    /// The full type name.
    pub type_name: Arc<str>,
    /// The fields, in the order the definition declares them.
    pub fields: Vec<(Arc<str>, Value<'a>)>,
}

impl<'a> Struct<'a> {
    /// The field called `name`.
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        self.fields.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    /// The value at a dotted path of field names (`header.stamp.sec`).
    pub fn path(&self, path: &str) -> Option<&Value<'a>> {
        let mut parts = path.split('.');
        let mut v = self.get(parts.next()?)?;
        for p in parts {
            v = v.as_struct()?.get(p)?;
        }
        Some(v)
    }

    /// The number at `path`, of any numeric kind.
    pub fn f64(&self, path: &str) -> Option<f64> {
        self.path(path)?.as_f64()
    }

    /// The time or duration at `path` in seconds: a
    /// `builtin_interfaces/Time` (`sec`, `nanosec`), Foxglove's JSON
    /// spelling (`sec`, `nsec`) or protobuf's `Timestamp` (`seconds`, `nanos`).
    pub fn seconds(&self, path: &str) -> Option<f64> {
        let t = self.sub(path)?;
        let nanos = t
            .f64("nanosec")
            .or_else(|| t.f64("nsec"))
            .or_else(|| t.f64("nanos"))?;
        Some(t.f64("sec").or_else(|| t.f64("seconds"))? + nanos * 1e-9)
    }

    /// The text at `path`.
    pub fn str(&self, path: &str) -> Option<&str> {
        self.path(path)?.as_str()
    }

    /// The message at `path`.
    pub fn sub(&self, path: &str) -> Option<&Struct<'a>> {
        self.path(path)?.as_struct()
    }

    /// The array at `path`.
    pub fn array(&self, path: &str) -> Option<&[Value<'a>]> {
        self.path(path)?.as_array()
    }
}

impl<'a> Value<'a> {
    /// The number, of any numeric kind (a bool is 0 or 1).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Bool(b) => Some(f64::from(u8::from(b))),
            Value::Int(i) => Some(i as f64),
            Value::UInt(u) => Some(u as f64),
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The integer, when the value is one that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Bool(b) => Some(i64::from(b)),
            Value::Int(i) => Some(i),
            Value::UInt(u) => i64::try_from(u).ok(),
            _ => None,
        }
    }

    /// The text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a `uint8[]`.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The elements of an array (not of a byte array).
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The nested message.
    pub fn as_struct(&self) -> Option<&Struct<'a>> {
        match self {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }
}

/// Messages built by hand for tests: the values a decoder would give.
#[cfg(test)]
pub(crate) mod build {
    use super::{Struct, Value};
    use std::sync::Arc;

    /// A message of `fields`.
    pub fn msg(fields: Vec<(&str, Value<'static>)>) -> Value<'static> {
        Value::Struct(Struct {
            type_name: Arc::from("t"),
            fields: fields.into_iter().map(|(n, v)| (Arc::from(n), v)).collect(),
        })
    }

    /// The same, as a message rather than a value.
    pub fn top(fields: Vec<(&str, Value<'static>)>) -> Struct<'static> {
        match msg(fields) {
            Value::Struct(s) => s,
            _ => Struct {
                type_name: Arc::from("t"),
                fields: Vec::new(),
            },
        }
    }

    pub fn f(v: f64) -> Value<'static> {
        Value::Float(v)
    }

    pub fn s(text: &str) -> Value<'static> {
        Value::Str(text.to_owned().into())
    }

    /// A `geometry_msgs/Point` or `Vector3`.
    pub fn xyz(x: f64, y: f64, z: f64) -> Value<'static> {
        msg(vec![("x", f(x)), ("y", f(y)), ("z", f(z))])
    }

    /// A `builtin_interfaces/Time` or `Duration` of `t` seconds.
    pub fn time(t: f64) -> Value<'static> {
        msg(vec![
            ("sec", Value::Int(t.floor() as i64)),
            ("nanosec", Value::UInt(((t - t.floor()) * 1e9).round() as u64)),
        ])
    }

    /// A `geometry_msgs/Pose` at a point, not turned.
    pub fn pose(x: f64, y: f64, z: f64) -> Value<'static> {
        msg(vec![
            ("position", xyz(x, y, z)),
            (
                "orientation",
                msg(vec![("x", f(0.0)), ("y", f(0.0)), ("z", f(0.0)), ("w", f(1.0))]),
            ),
        ])
    }

    /// A `std_msgs/ColorRGBA`.
    pub fn colour(r: f64, g: f64, b: f64) -> Value<'static> {
        msg(vec![("r", f(r)), ("g", f(g)), ("b", f(b)), ("a", f(1.0))])
    }
}
