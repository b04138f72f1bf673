//! Protobuf wire-format primitives for the hand-written fast paths:
//! varints, fixed-width numbers, keys and field skipping.
//!
//! The encoders mirror what prost writes for the same message (fields in
//! number order, proto3 defaults left out), so the fast encoder's bytes
//! can be compared byte for byte with prost's in tests.

/// Protobuf wire types used by the schemas.
pub const VARINT: u32 = 0;
pub const I64: u32 = 1;
pub const LEN: u32 = 2;
pub const I32: u32 = 5;

/// Why a message could not be decoded; `at` is the byte position within
/// the buffer handed to the [`Reader`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    pub at: usize,
    pub message: String,
}

pub type WireResult<T> = Result<T, WireError>;

/// A cursor over one message's bytes.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Position of `buf[0]` in the enclosing record, for error messages.
    base: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0, base: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Position of the next byte within the outermost buffer.
    pub fn position(&self) -> usize {
        self.base + self.pos
    }

    pub fn error(&self, message: impl Into<String>) -> WireError {
        WireError {
            at: self.position(),
            message: message.into(),
        }
    }

    #[inline(always)]
    pub fn varint(&mut self) -> WireResult<u64> {
        // Fast path: one byte (keys, most lengths and ids).
        if let Some(&b) = self.buf.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        self.varint_slow()
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> WireResult<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(self.error("message ends inside a varint"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.error("varint longer than 64 bits"));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }

    /// The next field key as (field number, wire type).
    #[inline(always)]
    pub fn key(&mut self) -> WireResult<(u32, u32)> {
        let at = self.position();
        let k = self.varint()?;
        let field = k >> 3;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(WireError {
                at,
                message: format!("invalid field number {field}"),
            });
        }
        Ok((field as u32, (k & 7) as u32))
    }

    #[inline]
    pub fn fixed64(&mut self) -> WireResult<u64> {
        match self.buf.get(self.pos..self.pos + 8) {
            Some(b) => {
                self.pos += 8;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(u64::from_le_bytes(a))
            }
            None => Err(self.error("message ends inside a 64-bit value")),
        }
    }

    #[inline]
    pub fn fixed32(&mut self) -> WireResult<u32> {
        match self.buf.get(self.pos..self.pos + 4) {
            Some(b) => {
                self.pos += 4;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                Ok(u32::from_le_bytes(a))
            }
            None => Err(self.error("message ends inside a 32-bit value")),
        }
    }

    #[inline]
    pub fn f64(&mut self) -> WireResult<f64> {
        self.fixed64().map(f64::from_bits)
    }

    /// The canonical 19-byte encoding of a two-double message (length
    /// 18, field 1 double, field 2 double), read without the general loop;
    /// `None` (and nothing consumed) for any other encoding.
    #[inline(always)]
    pub fn two_doubles(&mut self) -> Option<(f64, f64)> {
        let b = self.buf.get(self.pos..self.pos + 19)?;
        if b[0] != 18 || b[1] != 0x09 || b[10] != 0x11 {
            return None;
        }
        let mut x = [0u8; 8];
        let mut y = [0u8; 8];
        x.copy_from_slice(&b[2..10]);
        y.copy_from_slice(&b[11..19]);
        self.pos += 19;
        Some((f64::from_le_bytes(x), f64::from_le_bytes(y)))
    }

    /// A length-delimited field's bytes, as a reader of its own.
    #[inline(always)]
    pub fn sub(&mut self) -> WireResult<Reader<'a>> {
        let len = self.varint()?;
        let start = self.pos;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| start.checked_add(l))
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.error(format!("field length {len} runs past the end of the message")))?;
        self.pos = end;
        Ok(Reader {
            buf: &self.buf[start..end],
            pos: 0,
            base: self.base + start,
        })
    }

    pub fn bytes(&mut self) -> WireResult<&'a [u8]> {
        let r = self.sub()?;
        Ok(r.buf)
    }

    pub fn string(&mut self) -> WireResult<&'a str> {
        let at = self.position();
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|e| WireError {
            at,
            message: format!("string field is not UTF-8 ({e})"),
        })
    }

    /// Skips a field of an unknown number.
    pub fn skip(&mut self, wire_type: u32) -> WireResult<()> {
        match wire_type {
            VARINT => self.varint().map(drop),
            I64 => self.fixed64().map(drop),
            LEN => self.sub().map(drop),
            I32 => self.fixed32().map(drop),
            3 | 4 => Err(self.error("protobuf groups are not supported")),
            w => Err(self.error(format!("invalid wire type {w}"))),
        }
    }

    /// Fails unless `actual` is the wire type `expected` of `field`.
    #[inline]
    pub fn expect(&self, field: u32, actual: u32, expected: u32) -> WireResult<()> {
        if actual == expected {
            Ok(())
        } else {
            Err(self.error(format!(
                "field {field} has wire type {actual}, expected {expected}"
            )))
        }
    }
}

/// Zig-zag decoding of sint32.
#[inline]
pub fn unzigzag32(v: u64) -> i32 {
    let v = v as u32;
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

#[inline]
pub fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// Number of bytes of `v` as a varint.
#[inline]
pub fn varint_len(v: u64) -> usize {
    // 1 byte per started 7 bits, at least one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub fn put_key(out: &mut Vec<u8>, field: u32, wire_type: u32) {
    put_varint(out, u64::from((field << 3) | wire_type));
}

#[inline]
pub fn key_len(field: u32) -> usize {
    varint_len(u64::from(field << 3))
}

#[inline]
pub fn put_f64(out: &mut Vec<u8>, field: u32, v: f64) {
    put_key(out, field, I64);
    out.extend_from_slice(&v.to_le_bytes());
}

#[inline]
pub fn put_fixed32(out: &mut Vec<u8>, field: u32, v: u32) {
    put_key(out, field, I32);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Length of a length-delimited field whose content is `len` bytes.
#[inline]
pub fn len_field_len(field: u32, len: usize) -> usize {
    key_len(field) + varint_len(len as u64) + len
}

#[inline]
pub fn put_len(out: &mut Vec<u8>, field: u32, len: usize) {
    put_key(out, field, LEN);
    put_varint(out, len as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_measure() {
        for v in [0u64, 1, 127, 128, 300, 16_383, 16_384, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            let mut r = Reader::new(&out);
            assert_eq!(r.varint().unwrap(), v);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn zigzag_matches_protobuf() {
        for (v, z) in [
            (0, 0u32),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i32::MAX, u32::MAX - 1),
            (i32::MIN, u32::MAX),
        ] {
            assert_eq!(zigzag32(v), z);
            assert_eq!(unzigzag32(u64::from(z)), v);
        }
    }

    #[test]
    fn truncated_and_overlong_input_is_an_error() {
        assert!(Reader::new(&[0x80]).varint().is_err());
        assert!(Reader::new(&[0xff; 11]).varint().is_err());
        assert!(Reader::new(&[1, 2, 3]).fixed64().is_err());
        let mut r = Reader::new(&[0x0a, 0x05, 1]);
        r.key().unwrap();
        let e = r.sub().err().unwrap();
        assert!(e.message.contains("past the end"), "{e:?}");
        assert!(Reader::new(&[0x00]).key().is_err());
    }
}
