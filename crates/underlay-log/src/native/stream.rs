//! A native log read as it arrives: the file format as a stream (a robot
//! program's `Writer` on a TCP connection), handed out frame by frame
//! instead of as one log at the end, so a live view draws each frame when
//! it comes. The same decoder as a file's; what a stream cannot say (its
//! length) bounds nothing more than a record ([`MAX_RECORD_LEN`]).

use std::io::{BufRead, BufReader, Read};

use super::{
    COMPRESSION_NONE, COMPRESSION_ZSTD, Decoder, FLOOR_VERSION, FORMAT_VERSION, LenPrefix, Log, MAGIC,
    MAX_RECORD_LEN, PREFIX_LEN, ReadError, read_len_prefix,
};

/// Reads a native log stream record by record, handing out each frame as
/// it completes: the file format as a stream (a `Writer` on a TCP
/// connection), bounded by a record ([`MAX_RECORD_LEN`]), not a length.
pub struct StreamReader {
    r: Box<dyn BufRead + Send>,
    dec: Decoder,
    /// Bytes read after the prefix (decompressed ones for zstd streams).
    offset: u64,
    buf: Vec<u8>,
    ended: bool,
}

impl StreamReader {
    /// Reads and checks the stream's prefix (magic, version, compression).
    pub fn new(r: impl Read + Send + 'static) -> Result<StreamReader, ReadError> {
        let mut r = BufReader::with_capacity(1 << 16, r);
        let mut p = [0u8; PREFIX_LEN];
        let mut got = 0;
        while got < PREFIX_LEN {
            match r.read(&mut p[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    return Err(ReadError::Io {
                        offset: got as u64,
                        error,
                    });
                }
            }
        }
        if got == 0 {
            return Err(ReadError::Empty);
        }
        let m = got.min(MAGIC.len());
        if p[..m] != MAGIC[..m] {
            return Err(ReadError::UnknownFormat(
                "the native magic \"UNDERLAY\" is missing".into(),
            ));
        }
        if got < PREFIX_LEN {
            return Err(ReadError::Corrupt {
                offset: got as u64,
                frame: 0,
                message: format!("the stream ends inside the {PREFIX_LEN}-byte prefix"),
            });
        }
        if !(FLOOR_VERSION..=FORMAT_VERSION).contains(&p[8]) {
            return Err(ReadError::UnsupportedVersion {
                found: p[8],
                newest: FORMAT_VERSION,
            });
        }
        let r: Box<dyn BufRead + Send> = match p[9] {
            COMPRESSION_NONE => Box::new(r),
            COMPRESSION_ZSTD => {
                let z = zstd::stream::read::Decoder::with_buffer(r).map_err(|error| ReadError::Io {
                    offset: PREFIX_LEN as u64,
                    error,
                })?;
                Box::new(BufReader::with_capacity(1 << 16, z))
            }
            c => return Err(ReadError::UnsupportedCompression(c)),
        };
        Ok(StreamReader {
            r,
            dec: Decoder::new(p[8]),
            offset: PREFIX_LEN as u64,
            buf: Vec::new(),
            ended: false,
        })
    }

    /// Reads on until at least one frame is complete, and returns the
    /// frames read since the last call as a log: the stream's header and
    /// every entity declared so far, with those frames and their
    /// primitives. `None` once the stream has ended (a torn last record
    /// ends it too, as a file's does); the frames before an error were
    /// handed out by earlier calls.
    pub fn next_frames(&mut self) -> Result<Option<Log>, ReadError> {
        if self.ended {
            return Ok(None);
        }
        loop {
            let frames_before = self.dec.log.frames.len();
            let at = self.offset;
            let corrupt = |message: String, frame: usize| ReadError::Corrupt {
                offset: at,
                frame,
                message,
            };
            let (len, n) =
                match read_len_prefix(&mut self.r).map_err(|error| ReadError::Io { offset: at, error })? {
                    LenPrefix::End | LenPrefix::Torn => {
                        self.ended = true;
                        return Ok(None);
                    }
                    LenPrefix::Overlong => {
                        return Err(corrupt(
                            "record length is not a valid varint".into(),
                            self.dec.frames_seen,
                        ));
                    }
                    LenPrefix::Len(len, n) => (len, n),
                };
            if len > MAX_RECORD_LEN {
                return Err(corrupt(
                    format!("record length {len} exceeds the limit of {MAX_RECORD_LEN} bytes"),
                    self.dec.frames_seen,
                ));
            }
            self.offset += n as u64;
            self.buf.clear();
            (&mut self.r)
                .take(len)
                .read_to_end(&mut self.buf)
                .map_err(|error| ReadError::Io {
                    offset: self.offset,
                    error,
                })?;
            if (self.buf.len() as u64) < len {
                self.ended = true;
                return Ok(None);
            }
            let body = self.offset;
            self.offset += len;
            let frame = self.dec.frames_seen;
            self.dec.record(&self.buf, at).map_err(|e| ReadError::Corrupt {
                offset: body + e.at as u64,
                frame,
                message: e.message,
            })?;
            if self.dec.log.frames.len() > frames_before {
                return Ok(Some(self.take()));
            }
        }
    }

    /// The frames decoded so far, moved out into a log of their own.
    fn take(&mut self) -> Log {
        let log = &mut self.dec.log;
        let frames = std::mem::take(&mut log.frames);
        let primitives = std::mem::take(&mut log.primitives);
        let mut out = Log::new();
        out.header = log.header.clone();
        out.entities = log.entities.clone();
        out.warnings = std::mem::take(&mut self.dec.warnings).finish();
        out.frames = frames;
        out.primitives = primitives;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, Writer};

    fn stream(zstd: Option<i32>) -> Vec<u8> {
        let opts = crate::WriterOptions {
            zstd_level: zstd,
            flush_each_frame: true,
            ..Default::default()
        };
        let mut w = Writer::with_options(Vec::new(), Header::default(), opts).unwrap();
        w.declare_entity("robots/1", &["robots"]);
        w.instant(1.0).circle((0.0, 0.0), 1.0).entity("robots/1");
        w.instant(2.0).circle((1.0, 0.0), 1.0).entity("robots/1");
        w.instant(2.0).line((1.0, 0.0), (2.0, 0.0)).entity("plan");
        w.instant(3.0).circle((2.0, 0.0), 1.0).entity("robots/1");
        w.finish().unwrap()
    }

    #[test]
    fn frames_come_out_as_they_complete_with_every_entity_known() {
        for zstd in [None, Some(3)] {
            let bytes = stream(zstd);
            let mut r = StreamReader::new(std::io::Cursor::new(bytes.clone())).unwrap();
            let mut seen = Vec::new();
            while let Some(log) = r.next_frames().unwrap() {
                for f in &log.frames {
                    let names: Vec<&str> = log
                        .frame_primitives(f)
                        .iter()
                        .map(|p| log.entities.name(p.entity))
                        .collect();
                    seen.push((f.time.start(), names.join(",")));
                }
            }
            assert_eq!(
                seen,
                [
                    (1.0, "robots/1".to_string()),
                    (2.0, "robots/1,plan".into()),
                    (3.0, "robots/1".into())
                ]
            );
            // The whole stream read as a file gives the same frames.
            let whole = super::super::read(&bytes[..]).unwrap();
            assert_eq!(whole.frames.len(), 3);
        }
    }

    #[test]
    fn a_torn_stream_ends_and_garbage_is_an_error() {
        let bytes = stream(None);
        let torn = &bytes[..bytes.len() - 3];
        let mut r = StreamReader::new(std::io::Cursor::new(torn.to_vec())).unwrap();
        let mut n = 0;
        while let Some(log) = r.next_frames().unwrap() {
            n += log.frames.len();
        }
        assert_eq!(n, 2, "the torn last frame is not handed out");
        assert!(matches!(
            StreamReader::new(std::io::Cursor::new(b"GET / HTTP/1.1\r\n".to_vec())),
            Err(ReadError::UnknownFormat(_))
        ));
        assert!(matches!(
            StreamReader::new(std::io::Cursor::new(Vec::new())),
            Err(ReadError::Empty)
        ));
        let mut bad = crate::native::prefix(false).to_vec();
        bad.extend([0xff; 12]);
        let mut r = StreamReader::new(std::io::Cursor::new(bad)).unwrap();
        assert!(r.next_frames().is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testutil::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// A stream with changed bytes and cut anywhere ends or fails, and
        /// never panics or loops.
        #[test]
        fn damaged_streams_never_panic(
            zstd in proptest::prelude::any::<bool>(),
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..6),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let mut bytes = stream(zstd.then_some(1));
            for (at, v) in edits {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            bytes.truncate(cut % (bytes.len() + 1));
            if let Ok(mut r) = StreamReader::new(std::io::Cursor::new(bytes)) {
                for _ in 0..100 {
                    match r.next_frames() {
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
            }
        }
    }
}
