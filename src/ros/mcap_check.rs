//! The lengths inside MCAP records, checked before the `mcap` crate parses
//! them. Its parser (binrw) reserves the declared length of a string or a
//! byte array before reading it, so one damaged length — 4 GiB in a
//! channel record of forty bytes — asks for 4 GiB and aborts the process.
//! Here every length-prefixed field of a record is walked (the record
//! layouts of the MCAP specification, version 0) and must end inside the
//! record; a record whose fields run past its end is damaged, said with
//! the field. Records of opcodes this does not know are left to the crate
//! (they hold nothing it reserves for).

/// A record's fields, walked from its start.
struct Fields<'a> {
    body: &'a [u8],
    at: usize,
    record: &'static str,
}

impl Fields<'_> {
    fn fixed(&mut self, n: usize, what: &str) -> Result<(), String> {
        if self.body.len() - self.at < n {
            return Err(format!(
                "{} record of {} bytes ends inside its {what}",
                self.record,
                self.body.len()
            ));
        }
        self.at += n;
        Ok(())
    }

    /// A length prefix of `width` bytes, then that many bytes.
    fn prefixed(&mut self, width: usize, what: &str) -> Result<(usize, usize), String> {
        let start = self.at;
        self.fixed(width, what)?;
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(&self.body[start..start + width]);
        let len = u64::from_le_bytes(le);
        let left = (self.body.len() - self.at) as u64;
        if len > left {
            return Err(format!(
                "{} record says its {what} has {len} bytes, but only {left} of the record's {} are left",
                self.record,
                self.body.len()
            ));
        }
        let from = self.at;
        self.at += len as usize;
        Ok((from, self.at))
    }

    fn string(&mut self, what: &str) -> Result<(), String> {
        self.prefixed(4, what).map(|_| ())
    }

    /// A map of strings to strings: its byte length, then keys and values.
    fn string_map(&mut self, what: &str) -> Result<(), String> {
        let (from, to) = self.prefixed(4, what)?;
        let mut inner = Fields {
            body: &self.body[from..to],
            at: 0,
            record: self.record,
        };
        while inner.at < inner.body.len() {
            inner.string(&format!("{what}'s key"))?;
            inner.string(&format!("{what}'s value"))?;
        }
        Ok(())
    }
}

/// Whether `opcode` is an MCAP record's: the specification's (0x01 to
/// 0x0F) or a private one (0x80 to 0xFF). 0x00 and 0x10 to 0x7F are no
/// record: bytes that are not MCAP (a run of zeros after the magic, say).
pub fn is_record_opcode(opcode: u8) -> bool {
    matches!(opcode, 0x01..=0x0f | 0x80..=0xff)
}

/// Checks that every length-prefixed field of the record `opcode` with
/// `body` ends inside it; says which does not.
pub fn check_record(opcode: u8, body: &[u8]) -> Result<(), String> {
    let name = match opcode {
        0x01 => "a header",
        0x03 => "a schema",
        0x04 => "a channel",
        0x06 => "a chunk",
        0x08 => "a chunk index",
        0x09 => "an attachment",
        0x0a => "an attachment index",
        0x0c => "a metadata",
        0x0d => "a metadata index",
        _ => return Ok(()),
    };
    let mut f = Fields {
        body,
        at: 0,
        record: name,
    };
    match opcode {
        0x01 => {
            f.string("profile")?;
            f.string("library")?;
        }
        0x03 => {
            f.fixed(2, "id")?;
            f.string("name")?;
            f.string("encoding")?;
            f.prefixed(4, "data")?;
        }
        0x04 => {
            f.fixed(4, "ids")?;
            f.string("topic")?;
            f.string("message encoding")?;
            f.string_map("metadata")?;
        }
        0x06 => {
            f.fixed(28, "times, size and CRC")?;
            f.string("compression")?;
            f.prefixed(8, "records")?;
        }
        0x08 => {
            f.fixed(32, "times and place")?;
            f.prefixed(4, "message index offsets")?;
            f.fixed(8, "message index length")?;
            f.string("compression")?;
        }
        0x09 => {
            f.fixed(16, "times")?;
            f.string("name")?;
            f.string("media type")?;
            f.prefixed(8, "data")?;
        }
        0x0a => {
            f.fixed(40, "place, times and size")?;
            f.string("name")?;
            f.string("media type")?;
        }
        0x0c => {
            f.string("name")?;
            f.string_map("metadata")?;
        }
        _ => {
            f.fixed(16, "place")?;
            f.string("name")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str) -> Vec<u8> {
        let mut b = (s.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(s.as_bytes());
        b
    }

    fn channel(topic: &[u8], meta: &[(&str, &str)]) -> Vec<u8> {
        let mut b = vec![1, 0, 1, 0];
        b.extend_from_slice(topic);
        b.extend(string("cdr"));
        let mut m = Vec::new();
        for (k, v) in meta {
            m.extend(string(k));
            m.extend(string(v));
        }
        b.extend((m.len() as u32).to_le_bytes());
        b.extend(m);
        b
    }

    #[test]
    fn a_length_past_the_record_is_damage_said_with_its_field() {
        assert_eq!(
            check_record(0x04, &channel(&string("/camera"), &[("a", "b")])),
            Ok(())
        );
        // The topic's length made 4 GiB.
        let mut topic = string("/camera");
        topic[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = check_record(0x04, &channel(&topic, &[])).unwrap_err();
        assert!(e.contains("its topic has 4294967295 bytes"), "{e}");
        // A metadata value's length past the map's end.
        let mut b = channel(&string("/t"), &[("k", "v")]);
        let n = b.len();
        b[n - 5..n - 1].copy_from_slice(&9u32.to_le_bytes());
        let e = check_record(0x04, &b).unwrap_err();
        assert!(e.contains("metadata's value"), "{e}");
        // Cut inside the fixed fields.
        assert!(check_record(0x06, &[0; 10]).unwrap_err().contains("ends inside"));
        // Messages and unknown records hold nothing reserved for.
        assert_eq!(check_record(0x05, &[1, 2, 3]), Ok(()));
        assert_eq!(check_record(0x81, &[0xff; 8]), Ok(()));
    }

    #[test]
    fn opcodes_of_no_record_are_told() {
        assert!(!is_record_opcode(0x00));
        assert!(!is_record_opcode(0x10));
        assert!(!is_record_opcode(0x7f));
        assert!(is_record_opcode(0x05));
        assert!(is_record_opcode(0x80));
    }

    proptest::proptest! {
        /// Whatever the bytes, the check answers, and what it lets
        /// through the crate parses without reserving past the record.
        #[test]
        fn random_records_are_checked_then_parsed_safely(
            opcode in 0u8..=0x10,
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        ) {
            if check_record(opcode, &body).is_ok() {
                let _ = mcap::parse_record(opcode, &body);
            }
        }
    }
}
