//! What one input may take in: every reader of a file, a pipe or a
//! decompressed stream reads through a budget, so that a gzip bomb, an
//! endless pipe or a growing file is an error that says so instead of
//! exhausted memory or a run that never ends.
//!
//! The budget of one input ([`Budget::limit`]) is what `--max-input SIZE`
//! says when it is given ([`set_max_input`]); otherwise
//! [`DEFAULT_MAX_INPUT`] of decompressed bytes, and for a gzip'ed file
//! also at most [`GZIP_RATIO`] times the file's own size (but never less
//! than [`GZIP_FLOOR`]): real logs compress 3 to 30 times, a bomb of
//! repeated records a hundred times or more; and a format whose model costs many times its input
//! has a smaller budget of its own (`input::Format::max_input`).
//! [`Metered`] counts a stream's bytes against it; [`read_file`]
//! reads a whole file (gzip'ed or plain, sniffed from its first bytes,
//! never from its name) within it.

use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The most bytes one input may deliver, decompressed, unless
/// `--max-input` says otherwise: 2 GiB (a whole 2D match's game log is
/// 22 MB, an SSL game log of a whole match about 1 GB).
pub const DEFAULT_MAX_INPUT: u64 = 2 << 30;

/// A gzip'ed file may decompress to at most this many times its size…
pub const GZIP_RATIO: u64 = 50;

/// …but always to this much.
pub const GZIP_FLOOR: u64 = 64 << 20;

/// `--max-input`, once set for the process (0: not given).
static MAX_INPUT: AtomicU64 = AtomicU64::new(0);

/// Sets the process's `--max-input` (`None`: the defaults).
pub fn set_max_input(bytes: Option<u64>) {
    MAX_INPUT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// Whether `bytes` start with gzip's magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// What is known of an input before it is read: whether it is gzip'ed and
/// its size on disk (`None` for a pipe, a device, a socket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSize {
    pub gzip: bool,
    pub len: Option<u64>,
}

/// The budget inputs are read within (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// `--max-input`, when given.
    pub max_input: Option<u64>,
}

impl Budget {
    /// The process's budget (`--max-input`, when it was given).
    pub fn current() -> Budget {
        let m = MAX_INPUT.load(Ordering::Relaxed);
        Budget {
            max_input: (m > 0).then_some(m),
        }
    }

    /// The most bytes an input of `size` may deliver, decompressed, when
    /// nothing is known of its format.
    pub fn limit(&self, size: InputSize) -> u64 {
        self.limit_for(size, DEFAULT_MAX_INPUT)
    }

    /// The most bytes an input of `size` may deliver, decompressed, when it
    /// is of a format that allows `format_max` (a format whose model costs
    /// many times its input allows less: see `docs/PERFORMANCE.md`).
    pub fn limit_for(&self, size: InputSize, format_max: u64) -> u64 {
        if let Some(m) = self.max_input {
            return m;
        }
        let max = format_max.min(DEFAULT_MAX_INPUT);
        match size {
            InputSize {
                gzip: true,
                len: Some(l),
            } => l.saturating_mul(GZIP_RATIO).clamp(GZIP_FLOOR.min(max), max),
            _ => max,
        }
    }

    /// The error for an input of `size` that delivered more than `limit`.
    pub fn exceeded(&self, size: InputSize, limit: u64) -> OverBudget {
        OverBudget {
            limit,
            size,
            given: self.max_input.is_some(),
        }
    }
}

/// An input delivered more than its budget: the message says how much,
/// what the file is, and how to allow more.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct OverBudget {
    /// The budget, in bytes.
    pub limit: u64,
    /// What the input is.
    pub size: InputSize,
    /// The budget is `--max-input`'s (not the default).
    pub given: bool,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limit = human(self.limit);
        let allow = if self.given {
            format!("more than --max-input {limit}; give a larger --max-input to read it")
        } else {
            "`--max-input SIZE` to allow more".to_owned()
        };
        match self.size {
            InputSize {
                gzip: true,
                len: Some(l),
            } => write!(
                f,
                "decompresses to more than {limit} (the file is {}): it is probably not a log; {allow}",
                human(l)
            ),
            InputSize {
                gzip: true,
                len: None,
            } => {
                write!(
                    f,
                    "decompresses to more than {limit}: it is probably not a log; {allow}"
                )
            }
            InputSize { len: None, .. } => write!(
                f,
                "more than {limit} came in and the stream has not ended (an endless pipe?); {allow}"
            ),
            InputSize { len: Some(l), .. } => {
                write!(
                    f,
                    "is {} (more than {limit}); {allow}",
                    human(l.max(self.limit + 1))
                )
            }
        }
    }
}

/// A reader's budget error, as the log's readers report it (the log crate
/// knows no budget: it is the application's policy).
impl From<OverBudget> for underlay_log::ReadError {
    fn from(e: OverBudget) -> Self {
        underlay_log::ReadError::other(e)
    }
}

/// A size in bytes for messages: `512 bytes`, `3.2 MB`, `2 GiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if bytes >= size {
            let v = bytes as f64 / size as f64;
            return if bytes.is_multiple_of(size) {
                format!("{} {unit}", bytes / size)
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// A stream whose bytes are counted (for the offset of an error).
struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> Counted<R> {
    fn new(inner: R) -> Self {
        Counted {
            inner,
            count: Arc::new(AtomicU64::new(0)),
        }
    }

    fn count(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.count)
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A stream counted against a budget: past its limit it ends (reads give
/// 0) and its flag says so, whatever the reader above made of the early
/// end. The limit may be lowered while reading (once the input's format,
/// and so its own budget, is known).
#[derive(Debug)]
pub struct Metered<R> {
    inner: R,
    taken: Arc<AtomicU64>,
    limit: Arc<AtomicU64>,
    over: Arc<AtomicBool>,
}

impl<R: Read> Metered<R> {
    /// Counts `inner` against `limit` bytes.
    pub fn new(inner: R, limit: u64) -> Self {
        Metered {
            inner,
            taken: Arc::new(AtomicU64::new(0)),
            limit: Arc::new(AtomicU64::new(limit)),
            over: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A flag set once the stream went past its limit (to check after
    /// whoever reads it has finished).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.over)
    }

    /// The limit, to change while the stream is read.
    pub fn limit(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.limit)
    }

    /// How many bytes came through so far.
    pub fn taken(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.taken)
    }
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let taken = self.taken.load(Ordering::Relaxed);
        let left = self.limit.load(Ordering::Relaxed).saturating_sub(taken);
        if left == 0 {
            // At the limit: an end now is the input's own; more is too much.
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? > 0 {
                self.over.store(true, Ordering::Relaxed);
            }
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.taken.store(taken + n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Reads `r` to its end into a vector that grows by half its size at a
/// time and never past `limit` + 1 bytes (what a [`Metered`] stream of
/// `limit` can deliver): a 2 GiB input takes 2 GiB, not the 4 GiB a
/// doubling vector would reserve.
pub fn read_capped(mut r: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if out.len() + n > out.capacity() {
            let grow = (out.capacity() / 2).max(n).max(1 << 20);
            let room = cap.saturating_sub(out.len()).max(n);
            out.reserve_exact(grow.min(room));
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// A file opened once to be read as a stream: decompressed when it is
/// gzip'ed, counted against the budget. After reading, [`Stream::check`]
/// says whether it went past it.
pub struct Stream {
    /// The (decompressed) bytes.
    pub reader: Box<dyn Read + Send>,
    /// Whether the file is gzip'ed, and its size on disk.
    pub size: InputSize,
    budget: Budget,
    limit: u64,
    over: Arc<AtomicBool>,
}

impl Stream {
    /// Opens `path` (a FIFO once: its bytes can be read only once), a
    /// file of a format that allows `format_max` bytes.
    pub fn open(path: &Path, format_max: u64) -> io::Result<Stream> {
        let file = crate::files::open_input(path)?;
        let len = crate::files::known_len(&file);
        let mut r = io::BufReader::with_capacity(1 << 18, file);
        let mut magic = Vec::with_capacity(2);
        (&mut r).take(2).read_to_end(&mut magic)?;
        let gzip = is_gzip(&magic);
        let size = InputSize { gzip, len };
        let budget = Budget::current();
        let limit = budget.limit_for(size, format_max);
        let chained = io::Cursor::new(magic).chain(r);
        let (reader, over): (Box<dyn Read + Send>, _) = if gzip {
            let gz = flate2::read::MultiGzDecoder::new(chained);
            let m = Metered::new(io::BufReader::with_capacity(1 << 18, gz), limit);
            let over = m.flag();
            (Box::new(m), over)
        } else {
            let m = Metered::new(chained, limit);
            let over = m.flag();
            (Box::new(m), over)
        };
        Ok(Stream {
            reader,
            size,
            budget,
            limit,
            over,
        })
    }

    /// Whether more than the budget came in (then the error saying so).
    pub fn check(&self) -> Result<(), OverBudget> {
        if self.over.load(Ordering::Relaxed) {
            Err(self.budget.exceeded(self.size, self.limit))
        } else {
            Ok(())
        }
    }
}

/// What [`read_file`] can fail with.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The operating system failed to read.
    #[error(transparent)]
    Io(io::Error),
    /// More than the budget came in.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
    /// The gzip stream is corrupt after `offset` decompressed bytes.
    #[error("gzip data corrupt after {offset} decompressed bytes")]
    Gzip {
        offset: u64,
        #[source]
        error: io::Error,
    },
}

/// Reads the file at `path` whole, decompressing it when it is gzip'ed
/// (several members, as `cat a.gz b.gz` makes, too), within `budget` for a
/// format that allows `format_max` bytes.
pub fn read_file(path: &Path, budget: Budget, format_max: u64) -> Result<Vec<u8>, FileError> {
    let file = crate::files::open_input(path).map_err(FileError::Io)?;
    let len = crate::files::known_len(&file);
    read_whole(file, len, budget, format_max)
}

/// Reads `r` (an input of length `len` when known) to its end within
/// `budget` for a format that allows `format_max`, decompressing gzip.
pub fn read_whole(
    r: impl Read,
    len: Option<u64>,
    budget: Budget,
    format_max: u64,
) -> Result<Vec<u8>, FileError> {
    let mut r = io::BufReader::with_capacity(1 << 16, r);
    let mut magic = Vec::with_capacity(2);
    (&mut r).take(2).read_to_end(&mut magic).map_err(FileError::Io)?;
    let gzip = is_gzip(&magic);
    let size = InputSize { gzip, len };
    let chained = io::Cursor::new(magic).chain(r);
    let limit = budget.limit_for(size, format_max);
    let (result, over) = if gzip {
        let gz = flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(1 << 16, chained));
        let m = Metered::new(gz, limit);
        let over = m.flag();
        let counted = Counted::new(m);
        let done = counted.count();
        (
            read_capped(counted, limit).map_err(|e| (e, done.load(Ordering::Relaxed))),
            over,
        )
    } else {
        let m = Metered::new(chained, limit);
        let over = m.flag();
        (read_capped(m, limit).map_err(|e| (e, 0)), over)
    };
    match result {
        Ok(_) if over.load(Ordering::Relaxed) => Err(budget.exceeded(size, limit).into()),
        Ok(out) => Ok(out),
        Err((error, offset)) if gzip => Err(FileError::Gzip { offset, error }),
        Err((error, _)) => Err(FileError::Io(error)),
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

    fn limited(n: u64) -> Budget {
        Budget { max_input: Some(n) }
    }

    #[test]
    fn plain_and_gzip_read_the_same() {
        let data = b"((RSMP 1 0)((gt 1 0)0.04))\n".repeat(100);
        let b = limited(1 << 20);
        assert_eq!(read_whole(&data[..], None, b, DEFAULT_MAX_INPUT).unwrap(), data);
        assert_eq!(
            read_whole(&gzip(&data)[..], None, b, DEFAULT_MAX_INPUT).unwrap(),
            data
        );
        let mut two = gzip(&data[..50]);
        two.extend(gzip(&data[50..]));
        assert_eq!(read_whole(&two[..], None, b, DEFAULT_MAX_INPUT).unwrap(), data);
        assert_eq!(read_whole(&b""[..], None, b, DEFAULT_MAX_INPUT).unwrap(), b"");
        // Exactly the budget is within it.
        assert_eq!(
            read_whole(&data[..], None, limited(data.len() as u64), DEFAULT_MAX_INPUT).unwrap(),
            data
        );
    }

    #[test]
    fn bombs_endless_streams_and_corruption_are_errors() {
        let big = vec![b'('; 10_000];
        let e = read_whole(&gzip(&big)[..], Some(40), limited(9_999), DEFAULT_MAX_INPUT).unwrap_err();
        assert!(matches!(e, FileError::OverBudget(_)), "{e}");
        assert!(e.to_string().contains("more than --max-input 9.8 KiB"), "{e}");
        assert!(matches!(
            read_whole(&big[..], None, limited(100), DEFAULT_MAX_INPUT),
            Err(FileError::OverBudget(_))
        ));
        let mut bad = gzip(&big);
        let n = bad.len();
        bad.truncate(n / 2);
        assert!(matches!(
            read_whole(&bad[..], None, limited(1 << 20), DEFAULT_MAX_INPUT),
            Err(FileError::Gzip { .. })
        ));
        // An endless stream stops at the limit, and says it did not end.
        let e = read_whole(io::repeat(b'x'), None, limited(1000), DEFAULT_MAX_INPUT).unwrap_err();
        assert!(e.to_string().contains("has not ended"), "{e}");
    }

    #[test]
    fn the_default_budget_follows_the_file_and_the_compression() {
        let d = Budget { max_input: None };
        let gz = |len| InputSize {
            gzip: true,
            len: Some(len),
        };
        // A bomb: a few MB that would decompress to gigabytes.
        assert_eq!(d.limit(gz(1 << 20)), GZIP_FLOOR);
        assert_eq!(d.limit(gz(10 << 20)), 500 << 20);
        // A format whose model costs more allows less.
        assert_eq!(d.limit_for(gz(10 << 20), 256 << 20), 256 << 20);
        assert_eq!(d.limit_for(gz(1 << 10), 32 << 20), 32 << 20);
        assert_eq!(d.limit(gz(1 << 30)), DEFAULT_MAX_INPUT);
        assert_eq!(
            d.limit(InputSize {
                gzip: false,
                len: None
            }),
            DEFAULT_MAX_INPUT
        );
        let m = d.exceeded(gz(1_000_000), d.limit(gz(1_000_000))).to_string();
        assert_eq!(
            m,
            "decompresses to more than 64 MiB (the file is 976.6 KiB): it is probably not a log; \
             `--max-input SIZE` to allow more"
        );
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(3 << 30), "3 GiB");
    }

    #[test]
    fn a_meter_ends_the_stream_at_its_limit_and_says_so() {
        let mut m = Metered::new(&b"abcdef"[..], 4);
        let flag = m.flag();
        let mut out = Vec::new();
        m.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abcd");
        assert!(flag.load(Ordering::Relaxed));
        let mut m = Metered::new(&b"abcd"[..], 4);
        let flag = m.flag();
        m.read_to_end(&mut Vec::new()).unwrap();
        assert!(
            !flag.load(Ordering::Relaxed),
            "an input of exactly the limit is whole"
        );
    }
}
