//! A file's first bytes, as the format table's recognisers see them:
//! decompressed when the file is gzip'ed (a damaged stream gives what
//! came out before the damage). A folder has no bytes: its recogniser
//! looks at what it holds (a rosbag2 recording).

use std::io::{self, Read};
use std::path::Path;

use crate::bounded::is_gzip;
use crate::input::{HEAD_BYTES, Head};

/// The first [`HEAD_BYTES`] of a file and whether it is gzip'ed.
#[derive(Clone, Debug)]
pub struct HeadBuf {
    /// The bytes, decompressed when `gzip`.
    pub bytes: Vec<u8>,
    /// The file is gzip'ed.
    pub gzip: bool,
    /// The path is a folder.
    pub dir: bool,
}

impl HeadBuf {
    /// Reads the head of the file at `path`; a folder's is empty, with
    /// [`HeadBuf::dir`] set.
    pub fn of_file(path: &Path) -> io::Result<HeadBuf> {
        if std::fs::metadata(path)?.is_dir() {
            return Ok(HeadBuf {
                bytes: Vec::new(),
                gzip: false,
                dir: true,
            });
        }
        let file = std::fs::File::open(path)?;
        let mut raw = Vec::with_capacity(HEAD_BYTES);
        file.take(HEAD_BYTES as u64).read_to_end(&mut raw)?;
        if !is_gzip(&raw) {
            return Ok(HeadBuf {
                bytes: raw,
                gzip: false,
                dir: false,
            });
        }
        let file = std::fs::File::open(path)?;
        Ok(HeadBuf {
            bytes: gunzip_start(file),
            gzip: true,
            dir: false,
        })
    }

    /// The head as recognisers see it.
    pub fn head<'a>(&'a self, path: Option<&'a Path>) -> Head<'a> {
        Head {
            path,
            bytes: &self.bytes,
            gzip: self.gzip,
            dir: self.dir,
        }
    }
}

/// The first [`HEAD_BYTES`] decompressed from gzip data; a damaged stream
/// gives what came out before the damage.
fn gunzip_start(r: impl Read) -> Vec<u8> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    let mut gz = flate2::read::MultiGzDecoder::new(r).take(HEAD_BYTES as u64);
    let mut buf = [0u8; 512];
    loop {
        match gz.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_read_and_gzip_is_undone() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        std::fs::write(&plain, vec![b'x'; 10_000]).unwrap();
        let h = HeadBuf::of_file(&plain).unwrap();
        assert_eq!((h.bytes.len(), h.gzip), (HEAD_BYTES, false));
        let zipped = dir.path().join("a.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"ULG5\nrest of the header").unwrap();
        std::fs::write(&zipped, e.finish().unwrap()).unwrap();
        let h = HeadBuf::of_file(&zipped).unwrap();
        assert!(h.gzip && h.bytes.starts_with(b"ULG5\n"), "{:?}", h.bytes);
        // A torn gzip file gives what could be read, not an error.
        let bytes = std::fs::read(&zipped).unwrap();
        std::fs::write(&zipped, &bytes[..bytes.len() / 2]).unwrap();
        assert!(HeadBuf::of_file(&zipped).unwrap().gzip);
        assert!(HeadBuf::of_file(&dir.path().join("missing")).is_err());
    }
}
