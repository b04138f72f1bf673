//! The 3D simulators' monitor port framing: each message is a 4-byte
//! big-endian length followed by that many bytes (an S-expression, what a
//! monitor log holds on one line). SimSpark prefixes every message it
//! sends with `htonl(size)` (`oxygen::NetMessage::PrepareToSend`);
//! rcssservermj's monitor connections do the same
//! (`TCPLPMConnection`: a 4-byte unsigned big-endian length); RoboViz
//! reads its server connection so (`ServerComm`: `readInt`, then the
//! bytes).
//!
//! [`Deframer`] splits a byte stream into messages as it arrives, in
//! whatever pieces the socket hands out (a message split across reads,
//! several in one read). Its memory is bounded: a length over the cap it
//! was made with ([`MAX_MESSAGE`] for the monitor port) is an error,
//! never an allocation of that size, and the buffer only ever holds what
//! was received of one message and the rest of the last read. After an
//! error the stream cannot be trusted to be in step again (the next
//! length would be read from the middle of something): the caller drops
//! the connection and starts afresh ([`Deframer::reset`]).

/// The largest monitor message accepted (a full scene graph of 22 robots
/// is about 100 KB).
pub const MAX_MESSAGE: u32 = 64 << 20;

/// Bytes of a message's length prefix.
pub const PREFIX: usize = 4;

/// Why a stream cannot be read on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// A length over the cap: garbage, or a stream out of step.
    #[error("a message of {len} bytes announced, more than the {max} accepted")]
    TooLong { len: u32, max: u32 },
}

/// Messages out of a stream of length-prefixed messages (see [the
/// module](self)).
#[derive(Debug)]
pub struct Deframer {
    buf: Vec<u8>,
    /// Where the unread bytes start in `buf`.
    start: usize,
    max: u32,
    /// Set by an error, until [`Deframer::reset`].
    failed: Option<FramingError>,
}

impl Deframer {
    /// A deframer accepting messages up to `max` bytes.
    pub fn new(max: u32) -> Self {
        Deframer {
            buf: Vec::new(),
            start: 0,
            max,
            failed: None,
        }
    }

    /// Appends bytes as they were received. Ignored after an error.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, if one has arrived; an error when the
    /// stream announced a message over the cap (and from then on, until
    /// [`Deframer::reset`]).
    pub fn next_message(&mut self) -> Option<Result<&[u8], FramingError>> {
        if let Some(e) = self.failed {
            return Some(Err(e));
        }
        let rest = &self.buf[self.start..];
        let prefix: [u8; PREFIX] = rest.get(..PREFIX)?.try_into().ok()?;
        let len = u32::from_be_bytes(prefix);
        if len > self.max {
            let e = FramingError::TooLong { len, max: self.max };
            self.failed = Some(e);
            self.buf = Vec::new();
            self.start = 0;
            return Some(Err(e));
        }
        let end = PREFIX + len as usize;
        if rest.len() < end {
            return None;
        }
        let from = self.start + PREFIX;
        self.start += end;
        Some(Ok(&self.buf[from..self.start]))
    }

    /// Bytes received of a message not yet whole (its prefix included).
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The length the message being received announced, once its prefix
    /// came.
    pub fn announced(&self) -> Option<u32> {
        let prefix: [u8; PREFIX] = self.buf.get(self.start..self.start + PREFIX)?.try_into().ok()?;
        Some(u32::from_be_bytes(prefix))
    }

    /// Forgets everything received (a new connection).
    pub fn reset(&mut self) {
        self.buf = Vec::new();
        self.start = 0;
        self.failed = None;
    }

    /// The bytes held now (for tests of the bound).
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

/// `message` with its length prefix, as a server sends it.
pub fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX + message.len());
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn drain(d: &mut Deframer) -> Vec<Result<Vec<u8>, FramingError>> {
        let mut out = Vec::new();
        while let Some(m) = d.next_message() {
            let failed = m.is_err();
            out.push(m.map(<[u8]>::to_vec));
            if failed {
                break;
            }
        }
        out
    }

    #[test]
    fn a_message_split_across_reads_comes_whole() {
        let mut d = Deframer::new(MAX_MESSAGE);
        let bytes = frame(b"((RSMP 1 0)((gt 1 0)0.04))");
        for (i, b) in bytes.iter().enumerate() {
            assert!(drain(&mut d).is_empty(), "nothing before byte {i}");
            d.push(std::slice::from_ref(b));
        }
        assert_eq!(drain(&mut d), [Ok(b"((RSMP 1 0)((gt 1 0)0.04))".to_vec())]);
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn several_messages_in_one_read_come_one_by_one() {
        let mut d = Deframer::new(MAX_MESSAGE);
        let mut bytes = frame(b"(a)");
        bytes.extend(frame(b""));
        bytes.extend(frame(b"(b c)"));
        bytes.extend(&frame(b"(d)")[..5]);
        d.push(&bytes);
        assert_eq!(
            drain(&mut d),
            [Ok(b"(a)".to_vec()), Ok(Vec::new()), Ok(b"(b c)".to_vec())]
        );
        assert_eq!((d.pending(), d.announced()), (5, Some(3)));
        d.push(b"d)");
        assert_eq!(drain(&mut d), [Ok(b"(d)".to_vec())]);
    }

    #[test]
    fn a_length_over_the_cap_is_an_error_without_allocating_it() {
        let mut d = Deframer::new(1000);
        let mut bytes = frame(b"(ok)");
        bytes.extend(u32::MAX.to_be_bytes());
        bytes.extend(b"whatever follows");
        d.push(&bytes);
        let e = FramingError::TooLong {
            len: u32::MAX,
            max: 1000,
        };
        assert_eq!(drain(&mut d), [Ok(b"(ok)".to_vec()), Err(e)]);
        assert!(d.capacity() < 1000);
        assert!(e.to_string().contains("4294967295 bytes"), "{e}");
        // Until reset, the stream is not trusted.
        d.push(&frame(b"(x)"));
        assert_eq!(drain(&mut d), [Err(e)]);
        d.reset();
        d.push(&frame(b"(x)"));
        assert_eq!(drain(&mut d), [Ok(b"(x)".to_vec())]);
        // Exactly the cap is accepted.
        let mut d = Deframer::new(3);
        d.push(&frame(b"abc"));
        assert_eq!(drain(&mut d), [Ok(b"abc".to_vec())]);
    }

    #[test]
    fn a_connection_that_drops_mid_message_starts_afresh_when_it_reconnects() {
        let mut d = Deframer::new(MAX_MESSAGE);
        let whole = frame(b"(first)");
        d.push(&whole);
        d.push(&frame(b"(torn message)")[..9]);
        assert_eq!(drain(&mut d), [Ok(b"(first)".to_vec())]);
        assert_eq!((d.pending(), d.announced()), (9, Some(14)));
        // The connection ended; a new one begins with a new message.
        d.reset();
        d.push(&frame(b"(second)"));
        assert_eq!(drain(&mut d), [Ok(b"(second)".to_vec())]);
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..ProptestConfig::default()
        })]

        /// Random bytes in random pieces never panic; the buffer never
        /// holds more than the cap and a piece; whatever comes is taken
        /// in at most one pass per piece (no hang).
        #[test]
        fn random_bytes_never_panic_nor_grow_beyond_the_cap(
            bytes in proptest::collection::vec(any::<u8>(), 0..4096),
            cuts in proptest::collection::vec(1usize..700, 1..40),
            max in 0u32..2048,
        ) {
            let mut d = Deframer::new(max);
            let mut at = 0;
            let mut got = 0usize;
            for cut in cuts.iter().cycle() {
                if at >= bytes.len() {
                    break;
                }
                let piece = &bytes[at..(at + cut).min(bytes.len())];
                at += piece.len();
                d.push(piece);
                // Each message takes at least its prefix: at most this
                // many come out of what is held.
                let mut steps = 0;
                while let Some(m) = d.next_message() {
                    steps += 1;
                    prop_assert!(steps <= bytes.len() / PREFIX + 1);
                    match m {
                        Ok(m) => {
                            prop_assert!(m.len() <= max as usize);
                            got += PREFIX + m.len();
                        }
                        Err(FramingError::TooLong { len, .. }) => {
                            prop_assert!(len > max);
                            break;
                        }
                    }
                }
                prop_assert!(d.pending() <= PREFIX + max as usize + piece.len());
                prop_assert!(d.capacity() <= 2 * (PREFIX + max as usize + 700) + 64);
            }
            prop_assert!(got <= bytes.len());
        }

        /// Messages framed and sent in any pieces come out as they were.
        #[test]
        fn framed_messages_in_any_pieces_come_out_as_sent(
            messages in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12),
            cuts in proptest::collection::vec(1usize..97, 1..20),
        ) {
            let stream: Vec<u8> = messages.iter().flat_map(|m| frame(m)).collect();
            let mut d = Deframer::new(300);
            let mut out = Vec::new();
            let mut at = 0;
            for cut in cuts.iter().cycle() {
                if at >= stream.len() {
                    break;
                }
                let end = (at + cut).min(stream.len());
                d.push(&stream[at..end]);
                at = end;
                while let Some(m) = d.next_message() {
                    let m = m.map_err(|e| TestCaseError::fail(e.to_string()))?;
                    out.push(m.to_vec());
                }
            }
            prop_assert_eq!(out, messages);
            prop_assert_eq!(d.pending(), 0);
        }
    }
}
