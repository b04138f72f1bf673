//! Input read whole with a bound on what it may take in: gzip'ed or plain
//! (sniffed from the first bytes, never from a name), so that an endless
//! pipe or a gzip bomb is an error instead of exhausted memory. Every
//! reader that needs a whole file (the simulators' logs, text notation)
//! reads it through here.

use std::io::{self, Read};

/// Whether `bytes` start with gzip's magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// What [`read_limited`] can fail with.
#[derive(Debug)]
pub enum ReadLimited {
    Io(io::Error),
    /// More than the limit, decompressed.
    TooLarge,
    /// The gzip stream is corrupt after `offset` decompressed bytes.
    Gzip {
        offset: u64,
        error: io::Error,
    },
}

/// Reads `r` to its end (at most `limit` bytes after decompression),
/// decompressing gzip (several members, as `cat a.gz b.gz` makes, too).
pub fn read_limited(r: impl Read, limit: u64) -> Result<Vec<u8>, ReadLimited> {
    let mut r = io::BufReader::with_capacity(1 << 16, r);
    let mut magic = Vec::with_capacity(2);
    (&mut r)
        .take(2)
        .read_to_end(&mut magic)
        .map_err(ReadLimited::Io)?;
    let chained = io::Cursor::new(magic.clone()).chain(r);
    let mut out = Vec::new();
    let result = if is_gzip(&magic) {
        let gz = flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(1 << 16, chained));
        gz.take(limit + 1).read_to_end(&mut out)
    } else {
        chained.take(limit + 1).read_to_end(&mut out)
    };
    match result {
        Ok(_) if out.len() as u64 > limit => Err(ReadLimited::TooLarge),
        Ok(_) => Ok(out),
        Err(error) if is_gzip(&magic) && error.kind() != io::ErrorKind::Interrupted => {
            Err(ReadLimited::Gzip {
                offset: out.len() as u64,
                error,
            })
        }
        Err(error) => Err(ReadLimited::Io(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn plain_and_gzip_read_the_same() {
        let data = b"((RSMP 1 0)((gt 1 0)0.04))\n".repeat(100);
        assert_eq!(read_limited(&data[..], 1 << 20).unwrap(), data);
        assert_eq!(read_limited(&gzip(&data)[..], 1 << 20).unwrap(), data);
        let mut two = gzip(&data[..50]);
        two.extend(gzip(&data[50..]));
        assert_eq!(read_limited(&two[..], 1 << 20).unwrap(), data);
        assert_eq!(read_limited(&b""[..], 10).unwrap(), b"");
    }

    #[test]
    fn bombs_and_corruption_are_errors() {
        let big = vec![b'('; 10_000];
        assert!(matches!(
            read_limited(&gzip(&big)[..], 9_999),
            Err(ReadLimited::TooLarge)
        ));
        assert!(matches!(read_limited(&big[..], 100), Err(ReadLimited::TooLarge)));
        let mut bad = gzip(&big);
        let n = bad.len();
        bad.truncate(n / 2);
        assert!(matches!(
            read_limited(&bad[..], 1 << 20),
            Err(ReadLimited::Gzip { .. })
        ));
        // An endless stream stops at the limit.
        assert!(matches!(
            read_limited(io::repeat(b'x'), 1000),
            Err(ReadLimited::TooLarge)
        ));
    }
}
