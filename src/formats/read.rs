//! Reading logs through the format table: a stream's first bytes (gzip
//! undone) say its format, whose reader takes the rest, record by record
//! or whole within its bound. Several files are read as one set: a file
//! whose format others are read beside (a match's game log) is parsed
//! once and given to them.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::head::HeadBuf;
use super::table::{log_format, not_a_log};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::bounded::{Budget, InputSize, Metered, is_gzip};
use crate::input::{Companion, Format, HEAD_BYTES, Head, LogReader, ReadContext, ReadOptions, START_BYTES};
use crate::log::{Log, LogError, ReadError};

/// Reads a log of any format from a stream (gzip'ed or not).
pub fn read_log(r: impl Read) -> Result<(Log, &'static Format), ReadError> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    read_stream(&mut r, &Input::default(), &|_| None)
}

/// Loads the log at `path`, whatever its format.
///
/// A truncated file loads every complete frame and records a warning
/// naming the byte offset and frame index in [`Log::warnings`].
pub fn load_log(path: &Path) -> Result<Log, LogError> {
    load_log_with_format(path).map(|(log, _)| log)
}

/// Like [`load_log`], also telling which format the file was in.
pub fn load_log_with_format(path: &Path) -> Result<(Log, &'static Format), LogError> {
    let mut logs = load_logs(&[path.to_owned()], &ReadOptions::default())?;
    Ok(logs.remove(0))
}

/// Reads `paths` as logs, in order, each with its format: a file that
/// others are read beside (a match's game or monitor log) is parsed once
/// and given to every file whose format reads beside it (an agent's
/// debug log takes its side and step from the game log; a perception
/// log its errors against the monitor log).
pub fn load_logs(paths: &[PathBuf], options: &ReadOptions) -> Result<Vec<(Log, &'static Format)>, LogError> {
    // Only regular files are looked at before they are read: a pipe's
    // bytes can be read once.
    let formats: Vec<Option<&'static Format>> = paths
        .iter()
        .map(|p| {
            let regular = std::fs::metadata(p).is_ok_and(|m| m.is_file() || m.is_dir());
            let head = regular.then(|| HeadBuf::of_file(p).ok()).flatten()?;
            log_format(&head.head(Some(p)))
        })
        .collect();
    // The first file of each format that gives others something, parsed.
    let mut given: HashMap<&'static str, (usize, Arc<Companion>)> = HashMap::new();
    for (i, (path, format)) in paths.iter().zip(&formats).enumerate() {
        if let Some(f) = format
            && let Some(p) = f.provides
            && !given.contains_key(f.id)
        {
            given.insert(f.id, (i, (p.parse)(path, options)?));
        }
    }
    let beside = |id: &str| given.get(id).map(|(_, c)| Arc::clone(c));
    paths
        .iter()
        .zip(&formats)
        .enumerate()
        .map(|(i, (path, format))| {
            if let Some(f) = format
                && let (Some(p), Some((at, c))) = (f.provides, given.get(f.id))
                && *at == i
            {
                let mut log = (p.log)(&**c, options);
                passed_over(&mut log, 0, f).map_err(|error| LogError::Read {
                    path: path.clone(),
                    error,
                })?;
                return Ok(with_levels((log, *f), options));
            }
            load_one(path, options, &beside).map(|l| with_levels(l, options))
        })
        .collect()
}

/// A log read with the levels the options' mapping gives its entities.
fn with_levels((mut log, f): (Log, &'static Format), options: &ReadOptions) -> (Log, &'static Format) {
    if let Some(m) = &options.levels {
        m.apply(&mut log);
    }
    (log, f)
}

/// Reads `paths` as [`load_logs`] does and merges them into one log.
pub fn load_merged(paths: &[PathBuf], options: &ReadOptions) -> Result<Log, LogError> {
    let logs = load_logs(paths, options)?;
    Ok(crate::log::merge(
        logs.into_iter().map(|(l, _)| l).collect::<Vec<Log>>(),
    ))
}

/// Reads the file at `path`, opened once (a FIFO is read as it comes).
fn load_one(
    path: &Path,
    options: &ReadOptions,
    beside: &dyn Fn(&str) -> Option<Arc<Companion>>,
) -> Result<(Log, &'static Format), LogError> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return load_folder(path, options);
    }
    if let Some(f) = super::table::seekable_by_name(path) {
        return Err(LogError::Read {
            path: path.to_owned(),
            error: ReadError::Other(super::table::seekable_pipe_message(f).into()),
        });
    }
    let file = crate::files::open_input(path).map_err(|e| LogError::io(path, e))?;
    // A pipe's metadata says 0 bytes: only a regular file's length is known.
    let len = crate::files::known_len(&file);
    let mut r = BufReader::with_capacity(1 << 18, file);
    let input = Input {
        path: Some(path),
        len,
        options: Some(options),
    };
    read_stream(&mut r, &input, beside).map_err(|error| LogError::Read {
        path: path.to_owned(),
        error,
    })
}

/// Reads a folder that a format reads as a log (a rosbag2 recording); any
/// other folder is an error naming what inside it could be read.
fn load_folder(path: &Path, options: &ReadOptions) -> Result<(Log, &'static Format), LogError> {
    let err = |error| LogError::Read {
        path: path.to_owned(),
        error,
    };
    let head = HeadBuf::of_file(path).map_err(|e| LogError::io(path, e))?;
    let head = head.head(Some(path));
    let Some((format, LogReader::File(read))) = log_format(&head).and_then(|f| f.log.map(|r| (f, r))) else {
        return Err(err(ReadError::UnknownFormat(super::table::folder_problem(path))));
    };
    let cx = ReadContext {
        path: Some(path),
        len: None,
        decompressed: false,
        beside: None,
        options,
    };
    let log = read(path, &cx).map_err(err)?;
    Ok((log, format))
}

/// What is known of a stream besides its bytes.
#[derive(Default)]
struct Input<'a> {
    path: Option<&'a Path>,
    len: Option<u64>,
    options: Option<&'a ReadOptions>,
}

/// Up to [`START_BYTES`] from the start of `r`.
fn read_start(r: &mut dyn Read) -> Result<Vec<u8>, ReadError> {
    let mut start = Vec::with_capacity(START_BYTES);
    r.take(START_BYTES as u64)
        .read_to_end(&mut start)
        .map_err(|error| ReadError::Io { offset: 0, error })?;
    Ok(start)
}

/// Reads a log of any format, gzip'ed or not.
fn read_stream(
    r: &mut dyn BufRead,
    input: &Input<'_>,
    beside: &dyn Fn(&str) -> Option<Arc<Companion>>,
) -> Result<(Log, &'static Format), ReadError> {
    let start = read_start(r)?;
    let budget = Budget::current();
    if !is_gzip(&start) {
        let size = InputSize {
            gzip: false,
            len: input.len,
        };
        let rest = Metered::new(io::Cursor::new(start).chain(r), budget.limit(size));
        let meter = Meter {
            over: rest.flag(),
            limit: rest.limit(),
            taken: rest.taken(),
            budget,
            size,
        };
        let read = read_format(rest, input, false, beside, &meter);
        return meter.within(read);
    }
    let whole = io::Cursor::new(start).chain(r);
    let mut gz = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, whole));
    let inner = read_start(&mut gz).map_err(|e| match e {
        ReadError::Io { error, .. } => {
            ReadError::UnknownFormat(format!("gzip data that does not decompress ({error})"))
        }
        e => e,
    })?;
    if is_gzip(&inner) {
        return Err(ReadError::UnknownFormat("gzip inside gzip".to_owned()));
    }
    let size = InputSize {
        gzip: true,
        len: input.len,
    };
    let rest = Metered::new(io::Cursor::new(inner).chain(gz), budget.limit(size));
    let meter = Meter {
        over: rest.flag(),
        limit: rest.limit(),
        taken: rest.taken(),
        budget,
        size,
    };
    let unpacked = Input { len: None, ..*input };
    let read = read_format(rest, &unpacked, true, beside, &meter).map_err(|e| match e {
        ReadError::UnknownFormat(m) => ReadError::UnknownFormat(format!("gzip'ed data that {m}")),
        e => e,
    });
    meter.within(read)
}

/// The budget a stream is read within.
struct Meter {
    over: Arc<AtomicBool>,
    limit: Arc<AtomicU64>,
    taken: Arc<AtomicU64>,
    budget: Budget,
    size: InputSize,
}

impl Meter {
    /// Narrows the budget to what `format` allows.
    fn for_format(&self, format: &Format) {
        self.limit.store(
            self.budget.limit_for(self.size, format.max_input),
            Ordering::Relaxed,
        );
    }

    /// What a reader made of the metered stream, unless the stream went
    /// past its budget: then that, whatever the reader said of the early end.
    fn within<T>(&self, read: Result<T, ReadError>) -> Result<T, ReadError> {
        if self.over.load(Ordering::Relaxed) {
            let limit = self.limit.load(Ordering::Relaxed);
            return Err(self.budget.exceeded(self.size, limit).into());
        }
        read
    }
}

/// Reads a log from `rest`, its first byte on; `decompressed` when it
/// comes out of gzip.
fn read_format(
    mut rest: impl Read,
    input: &Input<'_>,
    decompressed: bool,
    beside: &dyn Fn(&str) -> Option<Arc<Companion>>,
    meter: &Meter,
) -> Result<(Log, &'static Format), ReadError> {
    // The first bytes, enough to recognise any format (a chained or
    // decompressing reader may hand out fewer at a time).
    let mut first = Vec::with_capacity(HEAD_BYTES);
    (&mut rest)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut first)
        .map_err(|error| ReadError::Io { offset: 0, error })?;
    let head = Head {
        path: input.path,
        bytes: &first,
        gzip: decompressed,
        dir: false,
    };
    let format = log_format(&head).ok_or_else(|| not_a_log(&head))?;
    let Some(reader) = format.log else {
        return Err(not_a_log(&head));
    };
    meter.for_format(format);
    let default_options = ReadOptions::default();
    let companion = format.beside.and_then(beside);
    let cx = ReadContext {
        path: input.path,
        len: input.len,
        decompressed,
        beside: companion.as_deref(),
        options: input.options.unwrap_or(&default_options),
    };
    let all = io::Cursor::new(first).chain(rest);
    let mut log = match reader {
        LogReader::Stream(read) => {
            let mut r = BufReader::with_capacity(1 << 18, all);
            let log = read(&mut r, &cx);
            // A reader that stopped at damage left the rest: its length is
            // how much was passed over.
            if log.as_ref().is_ok_and(|l| l.skipped.stopped_at.is_some()) {
                let _ = io::copy(&mut r, &mut io::sink());
            }
            meter.within(log)?
        }
        LogReader::File(read) => match (input.path, decompressed) {
            (Some(path), false) if std::fs::metadata(path).is_ok_and(|m| m.is_file()) => read(path, &cx)?,
            _ => {
                return Err(ReadError::Other(
                    format!(
                        "{}: read by seeking in the file; give it as a file, not through a pipe or gzip",
                        format.name
                    )
                    .into(),
                ));
            }
        },
        LogReader::Whole(read) => {
            let bytes = read_whole(all)?;
            // Past the budget: said without parsing what came.
            meter.within(Ok(()))?;
            read(&bytes, &cx)?
        }
    };
    meter.within(Ok(()))?;
    passed_over(&mut log, meter.taken.load(Ordering::Relaxed), format)?;
    Ok((log, format))
}

/// Says once what the reader passed over as not its format, or refuses a
/// file that is mostly that.
fn passed_over(log: &mut Log, taken: u64, format: &Format) -> Result<(), ReadError> {
    let s = log.skipped;
    let total = if s.total > 0 { s.total } else { taken };
    let rest = s.stopped_at.map_or(0, |at| total.saturating_sub(at));
    // A reader counts a line with its line break, which the last line may
    // lack: never more than the file holds.
    let bytes = (s.bytes + rest).min(total);
    if bytes == 0 {
        return Ok(());
    }
    let first = s.first.unwrap_or(0);
    if bytes.saturating_mul(2) > total {
        return Err(ReadError::MostlyGarbage {
            skipped: bytes,
            total,
            first,
            format: format.name,
            said: log
                .warnings
                .first()
                .map(|w| crate::log::summary::shorten(&w.to_string(), 300)),
        });
    }
    if log.frames.is_empty() {
        // Damage and nothing else: what the reader said of it is the reason.
        let said = log.warnings.first().map_or_else(
            || {
                format!(
                    "{} of its {} bytes do not (the first at byte {first})",
                    crate::log::validate::group(bytes),
                    crate::log::validate::group(total)
                )
            },
            |w| w.to_string(),
        );
        return Err(ReadError::NothingReadable {
            format: format.name,
            first: said,
        });
    }
    let parts = s.items + u64::from(rest > 0);
    let g = crate::log::validate::group;
    log.warnings.push(crate::log::LoadWarning {
        offset: Some(first),
        frame: None,
        message: format!(
            "{} of {} bytes ({} {}) do not read as {} and were passed over",
            g(bytes),
            g(total),
            g(parts),
            if parts == 1 { "part" } else { "parts" },
            format.name
        ),
    });
    Ok(())
}

/// The rest of a stream (metered against the budget).
fn read_whole(r: impl Read) -> Result<Vec<u8>, ReadError> {
    let limit = Budget::current().limit(InputSize {
        gzip: true,
        len: None,
    });
    crate::bounded::read_capped(r, limit).map_err(|error| ReadError::Io { offset: 0, error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::validate::{drawable, shape_problem};
    use crate::log::{native, testutil, text};
    use crate::thesis;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Random bytes never panic, hang or exhaust memory, whatever
        /// format they are sniffed as.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
                                    start in 0u8..4) {
            let mut b = match start {
                0 => native::prefix(false).to_vec(),
                1 => native::prefix(true).to_vec(),
                2 => b"{ { 1; {".to_vec(),
                _ => Vec::new(),
            };
            b.extend_from_slice(&bytes);
            let _ = read_log(&b[..]);
            let _ = native::read(&b[..]);
            let _ = thesis::read(&b[..]);
            if let Ok(s) = std::str::from_utf8(&b) {
                let _ = text::parse(s);
            }
        }

        /// Every format's valid start, then random bytes: read through the
        /// door (its budget and its count of what was passed over), an
        /// error or a log, never a panic; what loads says what it passed
        /// over, or is all of the input.
        #[test]
        fn every_format_start_then_garbage_never_panics(
            which in 0usize..9,
            keep in 16usize..4096,
            garbage in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096),
        ) {
            let starts = format_starts();
            let start = &starts[which % starts.len()];
            let mut b = start[..keep.min(start.len())].to_vec();
            b.extend_from_slice(&garbage);
            if let Ok((log, _)) = read_log(&b[..]) {
                for f in &log.frames {
                    proptest::prop_assert!(f.primitives.end <= log.primitives.len());
                }
            }
        }

        /// Valid logs with a few bytes changed, cut or spliced load or
        /// fail cleanly; what loads is drawable (no NaN, no negative size).
        #[test]
        fn mutated_logs_never_panic(
            log in testutil::arb_log(),
            edits in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(),
                                               proptest::prelude::any::<u8>()), 1..8),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            which in 0u8..4,
        ) {
            let mut b = match which {
                0 => native::to_bytes(&log),
                1 => {
                    let mut z = Vec::new();
                    native::write(&log, &mut z, Some(1)).unwrap();
                    z
                }
                2 => text::print(&log).into_bytes(),
                _ => {
                    let mut t = Vec::new();
                    for f in &log.frames {
                        let shapes = log.frame_primitives(f).iter().map(|p| thesis::ThesisShape {
                            primitive: p,
                            replay: None,
                        });
                        thesis::write_frame(&mut t, &log, f.time, shapes).unwrap();
                    }
                    t
                }
            };
            if !b.is_empty() {
                for (i, v) in edits {
                    let i = i.index(b.len());
                    b[i] = v;
                }
                b.truncate(cut.index(b.len() + 1));
            }
            if let Ok((got, _)) = read_log(&b[..]) {
                for p in &got.primitives {
                    proptest::prop_assert!(drawable(p) && shape_problem(p).is_none());
                    proptest::prop_assert!(p.entity.index() < got.entities.len());
                }
                for f in &got.frames {
                    proptest::prop_assert!(f.primitives.end <= got.primitives.len());
                }
            }
        }
    }

    #[test]
    fn empty_and_garbage_are_refused_saying_what_they_start_with() {
        assert!(matches!(read_log(&b""[..]), Err(ReadError::Empty)));
        let e = read_log(&[0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4][..]).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("de ad be ef") && m.contains("\"UNDERLAY\""), "{m}");
        assert!(m.contains("thesis-era") && m.contains("SSL_LOG_FILE"), "{m}");
        // A picture is a format, but not a log: said so.
        let e = read_log(&b"\x89PNG\r\n\x1a\n........"[..])
            .unwrap_err()
            .to_string();
        assert!(e.contains("still image, which is not a log"), "{e}");
    }

    /// The first 4 KiB of a file of each format underlay reads.
    fn format_starts() -> Vec<Vec<u8>> {
        let fixture = |dir: &str, name: &str| -> Vec<u8> {
            let raw = std::fs::read(data(dir, name)).unwrap();
            let mut out = Vec::new();
            if crate::bounded::is_gzip(&raw) {
                let _ =
                    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut out);
            } else {
                out = raw;
            }
            out.truncate(4096);
            out
        };
        let sample = |name: &str| {
            let mut b = std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("sample_logs")
                    .join(name),
            )
            .unwrap();
            b.truncate(4096);
            b
        };
        vec![
            sample("ssl.ulog"),
            sample("figure-3.7.txt"),
            sample("thesis-era.pb"),
            fixture("sim2d", "match4.rcg.gz"),
            fixture("sim2d", "HELIOS_Q-9.log.gz"),
            fixture("sim2d", "HELIOS_Q-9.dcl.gz"),
            fixture("sim3d", "agent_Alpha_1.log.gz"),
            fixture("sim3d", "monitor.rsmp.log.gz"),
            fixture("ssl", "ball-out-35s.log.gz"),
        ]
    }

    fn logs(paths: &[PathBuf]) -> Vec<Log> {
        load_logs(paths, &ReadOptions::default())
            .unwrap()
            .into_iter()
            .map(|(l, _)| l)
            .collect()
    }

    fn data(dir: &str, name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(dir)
            .join(name)
    }

    /// Primitives of entities whose name ends with `suffix`.
    fn count(log: &Log, suffix: &str) -> usize {
        log.primitives
            .iter()
            .filter(|p| log.entities.name(p.entity).ends_with(suffix))
            .count()
    }

    #[test]
    fn an_agent_read_beside_its_match_is_placed_by_it() {
        // 3D: beside the monitor log, what the agent saw gets its errors
        // against where things really were.
        let agent = data("sim3d", "agent_Alpha_1.log.gz");
        let monitor = data("sim3d", "monitor.rsmp.log.gz");
        let alone = logs(std::slice::from_ref(&agent));
        let both = logs(&[monitor, agent]);
        assert_eq!(both.len(), 2);
        assert!(count(&both[0], "ball/trail") > 0);
        assert!(
            count(&both[1], "/errors") > count(&alone[0], "/errors"),
            "{} vs {}",
            count(&both[1], "/errors"),
            count(&alone[0], "/errors")
        );
        // 2D: beside the game log, a right-side agent is not guessed left.
        let game = data("sim2d", "match4.rcg.gz");
        let q9 = data("sim2d", "HELIOS_Q-9.log.gz");
        let alone = logs(std::slice::from_ref(&q9));
        assert!(alone[0].warnings.iter().any(|w| w.message.contains("left team")));
        let both = logs(&[game, q9]);
        assert!(!both[1].warnings.iter().any(|w| w.message.contains("left team")));
        assert!(count(&both[0], "/view") > 0);
    }
}
