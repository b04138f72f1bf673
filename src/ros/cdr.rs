//! Decodes a ROS 2 message from its CDR bytes, by its definition
//! ([`crate::ros::msgdef`]), into a [`Struct`] that borrows the bytes:
//! strings that are valid UTF-8 and byte arrays (an image's pixels) are
//! not copied.
//!
//! Arrays of bytes — `uint8`, `byte`, `char`, and `int8` (whose bytes are
//! two's complement: a map's cells) — are one [`Value::Bytes`].
//!
//! The encoding is XCDR1 as ROS 2's middlewares (Fast DDS, Cyclone DDS)
//! write it and `rosbags` serializes it: a 4-byte encapsulation header
//! (`00 01` little-endian, `00 00` big-endian, then two option bytes), then
//! the fields in order, each primitive aligned to its own size (8-byte
//! types to 8) counted from the byte after the header; a sequence is a
//! `u32` count (aligned to 4) and its elements; a string a `u32` length
//! that counts its terminating NUL, and its bytes; a fixed array its
//! elements alone; a type with no fields one byte. XCDR2's plain
//! encapsulations (`00 06`, `00 07`), which differ for final types only in
//! aligning 8-byte types to 4, are read too; the parameter-list and
//! delimited ones are refused. A `wstring` is read as Fast DDS writes it:
//! a `u32` count of characters, each a 4-byte code unit.
//!
//! The bytes are untrusted: every read is checked against what is left, a
//! sequence's count against the least its elements can take (every element
//! takes at least a byte, so a message of n bytes never makes more than
//! about n values), nesting is limited to [`MAX_DEPTH`] (which also stops
//! a recursive definition), and an error names the field (as a path,
//! `markers[3].points[7].x`) and the byte it failed at. Bytes after the
//! message are ignored (padding).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::msgdef::{ArrayKind, FieldType, MsgDef, Registry};
use super::value::{Struct, Value};

/// How deeply messages may nest in messages.
pub const MAX_DEPTH: usize = 64;

/// Why a message cannot be decoded.
#[derive(Debug, thiserror::Error)]
pub enum CdrError {
    /// The message's type is not in the registry.
    #[error("message type {0} is not defined")]
    UnknownType(String),
    /// The message is shorter than the 4-byte encapsulation header.
    #[error("a {0}-byte message has no CDR encapsulation header")]
    NoHeader(usize),
    /// The encapsulation is not one this decoder reads.
    #[error("CDR encapsulation 0x{id:04x} ({kind}) is not supported")]
    Encapsulation {
        /// The representation identifier (first two bytes, big-endian).
        id: u16,
        /// Its name.
        kind: &'static str,
    },
    /// A field's bytes are wrong.
    #[error("{type_name}: {}byte {offset}: {problem}", field_text(.path))]
    Field {
        /// The message's type.
        type_name: String,
        /// The field, `markers[3].points[7].x` (empty for the message
        /// itself).
        path: String,
        /// The byte of the message (counting the header) the read began at.
        offset: usize,
        /// What is wrong.
        problem: Problem,
    },
}

fn field_text(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("field `{path}`, ")
    }
}

/// What is wrong at a field.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The message ends before the field does.
    #[error("needs {need} bytes, {left} left")]
    Truncated {
        /// Bytes the read needs.
        need: usize,
        /// Bytes left in the message.
        left: usize,
    },
    /// A sequence (or fixed array) cannot fit in what is left.
    #[error("{count} elements of at least {min} bytes each, {left} bytes left")]
    TooLong {
        /// Its element count.
        count: u64,
        /// The least bytes an element takes.
        min: usize,
        /// Bytes left in the message.
        left: usize,
    },
    /// Messages nest deeper than [`MAX_DEPTH`].
    #[error("nested more than {MAX_DEPTH} levels deep (a recursive definition?)")]
    TooDeep,
    /// A field's message type is not defined.
    #[error("type {0} is not defined")]
    Undefined(String),
}

/// Decodes one CDR-encoded message of type `type_name` (any spelling
/// [`Registry::get`] takes), its 4-byte encapsulation header first.
pub fn decode<'a>(registry: &Registry, type_name: &str, bytes: &'a [u8]) -> Result<Struct<'a>, CdrError> {
    let def = registry
        .get(type_name)
        .ok_or_else(|| CdrError::UnknownType(type_name.to_owned()))?;
    let [h0, h1, _, _, ..] = *bytes else {
        return Err(CdrError::NoHeader(bytes.len()));
    };
    let id = u16::from_be_bytes([h0, h1]);
    let (little, max_align) = match id {
        0x0000 => (false, 8),
        0x0001 => (true, 8),
        0x0006 => (false, 4),
        0x0007 => (true, 4),
        _ => {
            let kind = match id {
                0x0002 | 0x0003 => "PL_CDR",
                0x0008 | 0x0009 => "D_CDR2",
                0x000a | 0x000b => "PL_CDR2",
                _ => "unknown",
            };
            return Err(CdrError::Encapsulation { id, kind });
        }
    };
    let mut r = Reader {
        registry,
        data: &bytes[4..],
        pos: 0,
        little,
        max_align,
    };
    r.message(def, 0).map_err(|f| {
        let mut path = String::new();
        for seg in f.path.iter().rev() {
            match seg {
                Seg::Field(name) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
                Seg::Index(i) => {
                    use fmt::Write;
                    let _ = write!(path, "[{i}]");
                }
            }
        }
        CdrError::Field {
            type_name: def.name.to_string(),
            path,
            offset: f.offset + 4,
            problem: f.problem,
        }
    })
}

/// One step of a field's path.
enum Seg {
    Field(Arc<str>),
    Index(usize),
}

/// A failure on its way out: the path is collected innermost first.
struct Fail {
    offset: usize,
    problem: Problem,
    path: Vec<Seg>,
}

type Res<T> = Result<T, Box<Fail>>;

struct Reader<'a, 'r> {
    registry: &'r Registry,
    /// The bytes after the encapsulation header.
    data: &'a [u8],
    /// The next byte to read; never beyond `data.len()`.
    pos: usize,
    little: bool,
    /// 8 for XCDR1, 4 for XCDR2.
    max_align: usize,
}

/// The size of a primitive read as a number, 0 for the others.
fn prim_size(ty: &FieldType) -> usize {
    match ty {
        FieldType::Bool | FieldType::Int8 | FieldType::UInt8 | FieldType::Byte | FieldType::Char => 1,
        FieldType::Int16 | FieldType::UInt16 => 2,
        FieldType::Int32 | FieldType::UInt32 | FieldType::Float32 => 4,
        FieldType::Int64 | FieldType::UInt64 | FieldType::Float64 => 8,
        FieldType::String | FieldType::WString | FieldType::Message(_) => 0,
    }
}

impl<'a> Reader<'a, '_> {
    fn fail<T>(&self, problem: Problem) -> Res<T> {
        Err(Box::new(Fail {
            offset: self.pos,
            problem,
            path: Vec::new(),
        }))
    }

    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Skips the padding before a value of `size` bytes.
    fn align(&mut self, size: usize) -> Res<()> {
        let a = size.min(self.max_align);
        if a > 1 {
            let pad = (a - self.pos % a) % a;
            if pad > self.left() {
                return self.fail(Problem::Truncated {
                    need: pad,
                    left: self.left(),
                });
            }
            self.pos += pad;
        }
        Ok(())
    }

    fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        if n > self.left() {
            return self.fail(Problem::Truncated {
                need: n,
                left: self.left(),
            });
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// `N` bytes aligned to `N`, in the message's byte order (as
    /// little-endian).
    fn fixed<const N: usize>(&mut self) -> Res<[u8; N]> {
        self.align(N)?;
        let mut b = [0; N];
        b.copy_from_slice(self.take(N)?);
        if !self.little {
            b.reverse();
        }
        Ok(b)
    }

    fn u32(&mut self) -> Res<u32> {
        self.fixed::<4>().map(u32::from_le_bytes)
    }

    fn message(&mut self, def: &MsgDef, depth: usize) -> Res<Struct<'a>> {
        if depth > MAX_DEPTH {
            return self.fail(Problem::TooDeep);
        }
        if def.fields.is_empty() {
            // `structure_needs_at_least_one_member`.
            self.take(1)?;
        }
        let mut fields = Vec::with_capacity(def.fields.len());
        for f in &def.fields {
            let start = self.pos;
            let v = match f.array {
                ArrayKind::Single => self.one(&f.ty, depth),
                ArrayKind::Fixed(n) => self.array(&f.ty, n as u64, depth, start),
                ArrayKind::Unbounded | ArrayKind::Bounded(_) => {
                    match self.align(4).and_then(|()| self.u32()) {
                        // The count's own byte, past its padding.
                        Ok(n) => self.array(&f.ty, u64::from(n), depth, self.pos - 4),
                        Err(e) => Err(e),
                    }
                }
            };
            match v {
                Ok(v) => fields.push((f.name.clone(), v)),
                Err(mut e) => {
                    e.path.push(Seg::Field(f.name.clone()));
                    return Err(e);
                }
            }
        }
        Ok(Struct {
            type_name: def.name.clone(),
            fields,
        })
    }

    fn one(&mut self, ty: &FieldType, depth: usize) -> Res<Value<'a>> {
        Ok(match ty {
            FieldType::Bool => Value::Bool(self.take(1)?[0] != 0),
            FieldType::Int8 => Value::Int(i64::from(self.take(1)?[0] as i8)),
            FieldType::UInt8 | FieldType::Byte | FieldType::Char => Value::UInt(u64::from(self.take(1)?[0])),
            FieldType::Int16 => Value::Int(i64::from(i16::from_le_bytes(self.fixed()?))),
            FieldType::UInt16 => Value::UInt(u64::from(u16::from_le_bytes(self.fixed()?))),
            FieldType::Int32 => Value::Int(i64::from(i32::from_le_bytes(self.fixed()?))),
            FieldType::UInt32 => Value::UInt(u64::from(u32::from_le_bytes(self.fixed()?))),
            FieldType::Int64 => Value::Int(i64::from_le_bytes(self.fixed()?)),
            FieldType::UInt64 => Value::UInt(u64::from_le_bytes(self.fixed()?)),
            FieldType::Float32 => Value::Float(f64::from(f32::from_le_bytes(self.fixed()?))),
            FieldType::Float64 => Value::Float(f64::from_le_bytes(self.fixed()?)),
            FieldType::String => {
                let start = self.pos;
                let n = self.u32()? as usize;
                let b = match self.take(n) {
                    Ok(b) => b,
                    Err(mut e) => {
                        e.offset = start;
                        return Err(e);
                    }
                };
                let b = b.strip_suffix(&[0]).unwrap_or(b);
                Value::Str(String::from_utf8_lossy(b))
            }
            FieldType::WString => {
                let start = self.pos;
                let n = u64::from(self.u32()?);
                if n.saturating_mul(4) > self.left() as u64 {
                    self.pos = start;
                    return self.fail(Problem::TooLong {
                        count: n,
                        min: 4,
                        left: self.left(),
                    });
                }
                let mut s = String::new();
                for _ in 0..n {
                    let c = u32::from_le_bytes(self.fixed()?);
                    if c != 0 {
                        s.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                }
                Value::Str(Cow::Owned(s))
            }
            FieldType::Message(name) => {
                let Some(def) = self.registry.get(name) else {
                    return self.fail(Problem::Undefined(name.to_string()));
                };
                Value::Struct(self.message(def, depth + 1)?)
            }
        })
    }

    /// The least bytes a value of `ty` takes (padding aside): a lower
    /// bound, at least 1, looking one level into a message.
    fn min_size(&self, ty: &FieldType) -> usize {
        match ty {
            FieldType::String | FieldType::WString => 4,
            FieldType::Message(name) => match self.registry.get(name) {
                None => 1,
                Some(def) => def
                    .fields
                    .iter()
                    .map(|f| {
                        let one = match &f.ty {
                            FieldType::Message(_) => 1,
                            t => self.min_size(t),
                        };
                        match f.array {
                            ArrayKind::Single => one,
                            ArrayKind::Fixed(n) => one.saturating_mul(n),
                            ArrayKind::Unbounded | ArrayKind::Bounded(_) => 4,
                        }
                    })
                    .fold(0usize, usize::saturating_add)
                    .max(1),
            },
            t => prim_size(t),
        }
    }

    /// `count` values of `ty` (the count, if any, already read at `start`).
    fn array(&mut self, ty: &FieldType, count: u64, depth: usize, start: usize) -> Res<Value<'a>> {
        let min = self.min_size(ty);
        let left = self.left();
        let Some(n) = usize::try_from(count)
            .ok()
            .filter(|n| n.checked_mul(min).is_some_and(|b| b <= left))
        else {
            self.pos = start;
            return self.fail(Problem::TooLong { count, min, left });
        };
        match ty {
            // An int8 array too (an OccupancyGrid's cells: millions of
            // them), its bytes two's complement: a value tree of one
            // `Value` each would take forty times the message.
            FieldType::UInt8 | FieldType::Byte | FieldType::Char | FieldType::Int8 => {
                return Ok(Value::Bytes(std::borrow::Cow::Borrowed(self.take(n)?)));
            }
            _ => {}
        }
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            match self.one(ty, depth) {
                Ok(v) => items.push(v),
                Err(mut e) => {
                    e.path.push(Seg::Index(i));
                    return Err(e);
                }
            }
        }
        Ok(Value::Array(items))
    }
}

#[cfg(test)]
mod tests;
