//! A recording of several files (rosbag2 splits by size or time) read as
//! one [`BagReader`]: its topics merged by name and type, each given an id
//! of its own, and its messages in log-time order across the files.
//!
//! Files whose time spans do not overlap (as rosbag2 writes them: each
//! after the last) are read one after the other, from the first that
//! reaches the time asked for. Files whose spans overlap are read
//! together, each on a thread of its own handing its messages (copied) over
//! a small bounded channel, and merged by log time, so memory stays within
//! a few messages a file. A part listed in `metadata.yaml` but missing is
//! said (which, and the time span lost: its own from `files:`, else the gap
//! between its neighbours) and the rest is read. A part that cannot be
//! opened is said the same way.
//!
//! A file compressed whole (`compression_mode: FILE`, `.mcap.zstd`) is
//! decompressed as a stream into a temporary file (removed when the
//! recording is closed, or when a signal ends the process), bounded like
//! every other input ([`crate::bounded`]: at most `GZIP_RATIO` times its
//! size, and the input budget), since both containers are read by seeking.

use std::collections::HashMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::bag::{BagError, BagInfo, BagMessage, BagReader, Topic};
use super::folder::{Layout, ZSTD_MAGIC};

/// A part opened: its reader and its topic ids mapped to the recording's.
struct Opened {
    name: String,
    reader: Box<dyn BagReader>,
    ids: HashMap<u32, u32>,
    /// The decompressed copy, when the file was compressed whole.
    _temp: Option<crate::files::TempFile>,
}

/// A recording of several files (or of one file that needed more than
/// opening: compressed whole, or listed beside missing parts).
pub struct SplitBag {
    parts: Vec<Opened>,
    info: BagInfo,
}

impl std::fmt::Debug for SplitBag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitBag")
            .field("parts", &self.parts.iter().map(|p| &p.name).collect::<Vec<_>>())
            .field("info", &self.info)
            .finish()
    }
}

fn ns(t: u64) -> String {
    format!("{:.3} s", t as f64 * 1e-9)
}

/// Opens the container at `path` by its first bytes.
pub fn open_container(path: &Path) -> Result<Box<dyn BagReader>, BagError> {
    let start = super::bag::file_start(path, 16)?;
    if super::mcap_file::looks_like_mcap(&start) {
        Ok(Box::new(super::mcap_file::open(path)?))
    } else if super::db3::looks_like_db3(&start) {
        Ok(Box::new(super::db3::open(path)?))
    } else if start.starts_with(&ZSTD_MAGIC) {
        let (reader, _temp) = open_compressed(path)?;
        Ok(Box::new(SplitBag::of(vec![Opened {
            name: path.display().to_string(),
            reader,
            ids: HashMap::new(),
            _temp: Some(_temp),
        }])))
    } else {
        Err(BagError::Corrupt {
            path: path.to_owned(),
            message: "is neither an MCAP file nor a rosbag2 database (nor either compressed with zstd)"
                .into(),
        })
    }
}

/// Decompresses a file compressed whole into a temporary file and opens
/// that.
fn open_compressed(path: &Path) -> Result<(Box<dyn BagReader>, crate::files::TempFile), BagError> {
    use crate::bounded::{Budget, InputSize, Metered};
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let io = |source| BagError::Io {
        path: path.to_owned(),
        source,
    };
    let file = crate::files::open_input(path).map_err(io)?;
    let len = crate::files::known_len(&file);
    let size = InputSize { gzip: true, len };
    let budget = Budget::current();
    let limit = budget.limit(size);
    let decoder = zstd::stream::read::Decoder::new(file).map_err(io)?;
    let mut metered = Metered::new(decoder, limit);
    let over = metered.flag();
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".zstd").to_owned())
        .unwrap_or_else(|| "part".into());
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    let temp = crate::files::TempFile::beside(
        &std::env::temp_dir().join(format!("underlay-{n}-{stem}")),
        Path::new(&stem).extension().and_then(|e| e.to_str()),
    );
    let mut out = std::fs::File::create(temp.path()).map_err(|e| BagError::Io {
        path: temp.path().to_owned(),
        source: e,
    })?;
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let got = match metered.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(BagError::Corrupt {
                    path: path.to_owned(),
                    message: format!("its zstd data does not decompress after {total} bytes ({e})"),
                });
            }
        };
        total += got as u64;
        std::io::Write::write_all(&mut out, &buf[..got]).map_err(|e| BagError::Io {
            path: temp.path().to_owned(),
            source: e,
        })?;
    }
    if over.load(Ordering::Relaxed) {
        return Err(BagError::Corrupt {
            path: path.to_owned(),
            message: budget.exceeded(size, limit).to_string(),
        });
    }
    drop(out);
    let inner = temp.path().to_owned();
    let start = super::bag::file_start(&inner, 16)?;
    let reader: Box<dyn BagReader> = if super::mcap_file::looks_like_mcap(&start) {
        Box::new(super::mcap_file::open(&inner).map_err(|e| renamed(e, path))?)
    } else if super::db3::looks_like_db3(&start) {
        Box::new(super::db3::open(&inner).map_err(|e| renamed(e, path))?)
    } else {
        return Err(BagError::Corrupt {
            path: path.to_owned(),
            message: "decompresses to neither an MCAP file nor a rosbag2 database".into(),
        });
    };
    Ok((reader, temp))
}

/// An error about the decompressed copy, said of the compressed file.
fn renamed(e: BagError, path: &Path) -> BagError {
    match e {
        BagError::Io { source, .. } => BagError::Io {
            path: path.to_owned(),
            source,
        },
        BagError::Corrupt { message, .. } => BagError::Corrupt {
            path: path.to_owned(),
            message: format!("decompressed, {message}"),
        },
    }
}

/// Opens a recording's parts as one reader. A missing part, or one that
/// cannot be opened, is a note; none at all an error.
pub fn open(layout: &Layout) -> Result<Box<dyn BagReader>, BagError> {
    let mut opened = Vec::new();
    let mut notes = layout.notes.clone();
    let mut failed: Vec<(usize, String)> = Vec::new();
    let mut first_error = None;
    for (i, part) in layout.parts.iter().enumerate() {
        if !part.present {
            failed.push((i, "is missing".to_owned()));
            continue;
        }
        let start = super::bag::file_start(&part.path, 16);
        let reader = match start {
            Ok(s) if s.starts_with(&ZSTD_MAGIC) => open_compressed(&part.path).map(|(r, t)| (r, Some(t))),
            Ok(_) => open_container(&part.path).map(|r| (r, None)),
            Err(e) => Err(e),
        };
        match reader {
            Ok((reader, temp)) => opened.push((
                i,
                Opened {
                    name: part.name.clone(),
                    reader,
                    ids: HashMap::new(),
                    _temp: temp,
                },
            )),
            Err(e) => {
                failed.push((i, format!("cannot be read ({})", crate::error::chain(&e))));
                first_error.get_or_insert(e);
            }
        }
    }
    if opened.is_empty() {
        return Err(match first_error {
            Some(e) if layout.parts.len() == 1 => e,
            _ => BagError::Corrupt {
                path: layout.dir.clone().unwrap_or_default(),
                message: format!(
                    "none of its {} file{} can be read: {}",
                    layout.parts.len(),
                    if layout.parts.len() == 1 { "" } else { "s" },
                    failed
                        .iter()
                        .map(|(i, why)| format!("{} {why}", layout.parts[*i].name))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            },
        });
    }
    // What each missing part's loss spans.
    for (i, why) in &failed {
        let part = &layout.parts[*i];
        let own = part.info.as_ref().and_then(|f| {
            Some((
                f.start_ns?,
                f.start_ns?.saturating_add(f.duration_ns.unwrap_or(0)),
            ))
        });
        let before = opened
            .iter()
            .filter(|(j, _)| j < i)
            .filter_map(|(_, o)| o.reader.info().time_range.map(|r| r.1))
            .max();
        let after = opened
            .iter()
            .filter(|(j, _)| j > i)
            .filter_map(|(_, o)| o.reader.info().time_range.map(|r| r.0))
            .min();
        let span = match (own, before, after) {
            (Some((a, b)), ..) => format!(
                "its messages{} from {} to {} ({:.3} s) are lost",
                part.info
                    .as_ref()
                    .and_then(|f| f.count)
                    .map_or(String::new(), |c| format!(" ({c})")),
                ns(a),
                ns(b),
                (b - a) as f64 * 1e-9
            ),
            (None, Some(a), Some(b)) if b >= a => format!(
                "what was recorded between {} and {} ({:.3} s) is lost",
                ns(a),
                ns(b),
                (b - a) as f64 * 1e-9
            ),
            (None, Some(a), _) => format!("what was recorded after {} is lost", ns(a)),
            (None, None, Some(b)) => format!("what was recorded before {} is lost", ns(b)),
            _ => "its messages are lost".to_owned(),
        };
        notes.push(format!(
            "part {} of {} ({}) {why}: {span}; the rest is read",
            i + 1,
            layout.parts.len(),
            part.name
        ));
    }
    let mut bag = SplitBag::of(opened.into_iter().map(|(_, o)| o).collect());
    bag.info.notes.splice(0..0, notes);
    Ok(Box::new(bag))
}

impl SplitBag {
    /// The recording of `parts`, in order: topics merged by name and type.
    fn of(mut parts: Vec<Opened>) -> SplitBag {
        let mut info = BagInfo {
            indexed: true,
            ..BagInfo::default()
        };
        let mut by_key: HashMap<(String, String), u32> = HashMap::new();
        // The parts' notes, each said once with the parts it is of.
        let mut part_notes: Vec<(String, Vec<String>)> = Vec::new();
        for part in &mut parts {
            let pi = part.reader.info();
            info.indexed &= pi.indexed;
            info.time_range = match (info.time_range, pi.time_range) {
                (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                (a, b) => a.or(b),
            };
            for n in &pi.notes {
                match part_notes.iter_mut().find(|(text, _)| text == n) {
                    Some((_, names)) => names.push(part.name.clone()),
                    None => part_notes.push((n.clone(), vec![part.name.clone()])),
                }
            }
            for t in &pi.topics {
                let key = (t.name.clone(), super::msgdef::normalise(&t.type_name));
                let id = match by_key.get(&key) {
                    Some(&id) => {
                        if let Some(m) = info.topics.iter_mut().find(|m| m.id == id) {
                            m.count = match (m.count, t.count) {
                                (Some(a), Some(b)) => Some(a + b),
                                _ => None,
                            };
                            if m.schema.is_none() {
                                m.schema = t.schema.clone();
                            }
                        }
                        id
                    }
                    None => {
                        let id = info.topics.len() as u32;
                        by_key.insert(key, id);
                        info.topics.push(Topic { id, ..t.clone() });
                        id
                    }
                };
                part.ids.insert(t.id, id);
            }
        }
        let all = parts.len();
        for (n, names) in part_notes {
            info.notes.push(match names.as_slice() {
                [one] => format!("{one}: {n}"),
                _ if names.len() == all => format!("every file ({all}): {n}"),
                _ => format!("{}: {n}", names.join(", ")),
            });
        }
        // Parts by their first message's time.
        parts.sort_by_key(|p| p.reader.info().time_range.map_or(u64::MAX, |r| r.0));
        SplitBag { parts, info }
    }
}

impl BagReader for SplitBag {
    fn info(&self) -> &BagInfo {
        &self.info
    }

    fn read(
        &mut self,
        topics: &[u32],
        from: Option<u64>,
        each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
    ) -> Result<Vec<String>, BagError> {
        let mut notes = Vec::new();
        // Groups of parts whose spans overlap, in time order.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut end = None;
        for (i, p) in self.parts.iter().enumerate() {
            let range = p.reader.info().time_range;
            match (range, end, groups.last_mut()) {
                (Some((a, b)), Some(e), Some(g)) if a < e => {
                    g.push(i);
                    end = Some(e.max(b));
                }
                _ => {
                    groups.push(vec![i]);
                    end = range.map(|r| r.1).or(end);
                }
            }
        }
        for g in groups {
            // A group that ends before `from` holds nothing asked for.
            let last = g
                .iter()
                .filter_map(|&i| self.parts[i].reader.info().time_range.map(|r| r.1))
                .max();
            if let (Some(f), Some(l)) = (from, last)
                && l < f
            {
                continue;
            }
            let stop = if g.len() == 1 {
                self.read_one(g[0], topics, from, each, &mut notes)?
            } else {
                self.read_merged(&g, topics, from, each, &mut notes)?
            };
            if stop {
                break;
            }
        }
        Ok(notes)
    }
}

impl SplitBag {
    /// Reads one part; `true` when `each` broke.
    fn read_one(
        &mut self,
        i: usize,
        topics: &[u32],
        from: Option<u64>,
        each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
        notes: &mut Vec<String>,
    ) -> Result<bool, BagError> {
        let part = &mut self.parts[i];
        let theirs: Vec<u32> = part
            .ids
            .iter()
            .filter(|(_, ours)| topics.contains(ours))
            .map(|(t, _)| *t)
            .collect();
        if theirs.is_empty() {
            return Ok(false);
        }
        let ids = &part.ids;
        let mut stopped = false;
        let n = part.reader.read(&theirs, from, &mut |m| {
            let topic = ids.get(&m.topic).copied().unwrap_or(u32::MAX);
            let flow = each(BagMessage { topic, ..m });
            stopped |= flow.is_break();
            flow
        })?;
        notes.extend(n.into_iter().map(|n| format!("{}: {n}", part.name)));
        Ok(stopped)
    }

    /// Reads overlapping parts together, merged by log time; `true` when
    /// `each` broke.
    fn read_merged(
        &mut self,
        group: &[usize],
        topics: &[u32],
        from: Option<u64>,
        each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
        notes: &mut Vec<String>,
    ) -> Result<bool, BagError> {
        type Item = (u64, u32, Vec<u8>);
        let chosen: Vec<&mut Opened> = self
            .parts
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| group.contains(i))
            .map(|(_, p)| p)
            .collect();
        std::thread::scope(|scope| {
            let mut receivers = Vec::new();
            let mut handles = Vec::new();
            for part in chosen {
                let (tx, rx) = crossbeam_channel::bounded::<Item>(16);
                receivers.push(rx);
                let theirs: Vec<u32> = part
                    .ids
                    .iter()
                    .filter(|(_, ours)| topics.contains(ours))
                    .map(|(t, _)| *t)
                    .collect();
                handles.push(scope.spawn(move || {
                    let ids = &part.ids;
                    let r = part.reader.read(&theirs, from, &mut |m| {
                        let topic = ids.get(&m.topic).copied().unwrap_or(u32::MAX);
                        match tx.send((m.log_time, topic, m.data.to_vec())) {
                            Ok(()) => ControlFlow::Continue(()),
                            Err(_) => ControlFlow::Break(()),
                        }
                    });
                    (part.name.clone(), r)
                }));
            }
            // The next message of each part, the earliest given first.
            let mut heads: Vec<Option<Item>> = receivers.iter().map(|r| r.recv().ok()).collect();
            let mut stopped = false;
            while let Some(k) = heads
                .iter()
                .enumerate()
                .filter_map(|(k, h)| h.as_ref().map(|h| (h.0, k)))
                .min()
                .map(|(_, k)| k)
            {
                let Some((log_time, topic, data)) = heads[k].take() else {
                    break;
                };
                let flow = each(BagMessage {
                    topic,
                    log_time,
                    data: &data,
                });
                if flow.is_break() {
                    stopped = true;
                    break;
                }
                heads[k] = receivers[k].recv().ok();
            }
            // Readers still sending see their channel closed and stop.
            drop(heads);
            drop(receivers);
            for h in handles {
                match h.join() {
                    Ok((name, Ok(n))) => notes.extend(n.into_iter().map(|n| format!("{name}: {n}"))),
                    Ok((_, Err(e))) => return Err(e),
                    Err(_) => {
                        return Err(BagError::Corrupt {
                            path: Default::default(),
                            message: "a part's reader stopped unexpectedly".into(),
                        });
                    }
                }
            }
            Ok(stopped)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::folder;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// Writes an MCAP file of `messages` (topic `/a` or `/b`, log time),
    /// each message's data its topic and time.
    fn mcap(path: &Path, messages: &[(&str, u64)]) {
        let mut out = std::io::Cursor::new(Vec::new());
        let options = mcap::WriteOptions::new()
            .compression(Some(mcap::Compression::Zstd))
            .chunk_size(Some(300));
        let mut w = mcap::Writer::with_options(&mut out, options).unwrap();
        let s = w
            .add_schema("std_msgs/msg/String", "ros2msg", b"string data")
            .unwrap();
        let mut channels = BTreeMap::new();
        for (seq, (topic, t)) in messages.iter().enumerate() {
            let ch = *channels
                .entry(*topic)
                .or_insert_with(|| w.add_channel(s, topic, "cdr", &BTreeMap::new()).unwrap());
            let h = mcap::records::MessageHeader {
                channel_id: ch,
                sequence: seq as u32,
                log_time: *t,
                publish_time: *t,
            };
            w.write_to_known_channel(&h, format!("{topic}@{t}").as_bytes())
                .unwrap();
        }
        w.finish().unwrap();
        drop(w);
        std::fs::write(path, out.into_inner()).unwrap();
    }

    /// Every message of the recording in `dir`: (topic name, time, data).
    fn read_all(
        dir: &Path,
        from: Option<u64>,
        stop_after: Option<usize>,
    ) -> (Vec<(String, u64, String)>, Vec<String>) {
        let layout = folder::resolve(dir).unwrap();
        let mut bag = open(&layout).unwrap();
        let names: HashMap<u32, String> = bag.info().topics.iter().map(|t| (t.id, t.name.clone())).collect();
        let ids: Vec<u32> = names.keys().copied().collect();
        let mut got = Vec::new();
        let mut notes = bag.info().notes.clone();
        notes.extend(
            bag.read(&ids, from, &mut |m| {
                got.push((
                    names[&m.topic].clone(),
                    m.log_time,
                    String::from_utf8_lossy(m.data).into_owned(),
                ));
                if stop_after.is_some_and(|n| got.len() >= n) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap(),
        );
        (got, notes)
    }

    /// A part's name and, when listed, its (start, duration, count).
    type Part<'a> = (&'a str, Option<(u64, u64, u64)>);

    fn meta(files: &[Part]) -> String {
        let mut s = "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  relative_file_paths:\n"
            .to_owned();
        for (f, _) in files {
            s.push_str(&format!("    - {f}\n"));
        }
        s.push_str("  files:\n");
        for (f, span) in files {
            s.push_str(&format!("    - path: {f}\n"));
            if let Some((start, dur, n)) = span {
                s.push_str(&format!(
                    "      starting_time:\n        nanoseconds_since_epoch: {start}\n      \
                     duration:\n        nanoseconds: {dur}\n      message_count: {n}\n"
                ));
            }
        }
        s
    }

    #[test]
    fn parts_in_sequence_and_overlapping_are_read_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        // Part 1 overlaps part 0 (a writer flushing late); part 2 follows.
        mcap(
            &dir.path().join("b_0.mcap"),
            &[("/a", 10), ("/a", 30), ("/b", 50)],
        );
        mcap(
            &dir.path().join("b_1.mcap"),
            &[("/b", 20), ("/a", 40), ("/a", 60)],
        );
        mcap(&dir.path().join("b_2.mcap"), &[("/a", 70), ("/b", 80)]);
        std::fs::write(
            dir.path().join("metadata.yaml"),
            meta(&[("b_0.mcap", None), ("b_1.mcap", None), ("b_2.mcap", None)]),
        )
        .unwrap();
        let (got, _) = read_all(dir.path(), None, None);
        let times: Vec<u64> = got.iter().map(|m| m.1).collect();
        assert_eq!(times, [10, 20, 30, 40, 50, 60, 70, 80]);
        assert!(
            got.iter().all(|(t, time, d)| *d == format!("{t}@{time}")),
            "{got:?}"
        );
        // From a time on; stopping early stops the parts' readers.
        let (got, _) = read_all(dir.path(), Some(35), None);
        assert_eq!(got.iter().map(|m| m.1).collect::<Vec<_>>(), [40, 50, 60, 70, 80]);
        let (got, _) = read_all(dir.path(), None, Some(3));
        assert_eq!(got.iter().map(|m| m.1).collect::<Vec<_>>(), [10, 20, 30]);
        // Topics merged across parts by name and type, counts summed.
        let bag = open(&folder::resolve(dir.path()).unwrap()).unwrap();
        let counts: Vec<(String, Option<u64>)> = bag
            .info()
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.count))
            .collect();
        assert_eq!(counts, [("/a".to_owned(), Some(5)), ("/b".to_owned(), Some(3))]);
        assert_eq!(bag.info().time_range, Some((10, 80)));
    }

    #[test]
    fn a_missing_part_is_said_with_the_span_lost() {
        let dir = tempfile::tempdir().unwrap();
        mcap(
            &dir.path().join("b_0.mcap"),
            &[("/a", 1_000_000_000), ("/a", 2_000_000_000)],
        );
        mcap(&dir.path().join("b_2.mcap"), &[("/a", 5_000_000_000)]);
        let files = [
            ("b_0.mcap", None),
            ("b_1.mcap", Some((2_500_000_000, 1_500_000_000, 7))),
            ("b_2.mcap", None),
        ];
        std::fs::write(dir.path().join("metadata.yaml"), meta(&files)).unwrap();
        let (got, notes) = read_all(dir.path(), None, None);
        assert_eq!(got.len(), 3);
        let n = notes.iter().find(|n| n.contains("b_1.mcap")).unwrap();
        assert!(
            n.contains("part 2 of 3") && n.contains("(7) from 2.500 s to 4.000 s (1.500 s) are lost"),
            "{n}"
        );
        // Without its span in metadata.yaml: the gap between its neighbours.
        let files = [("b_0.mcap", None), ("b_1.mcap", None), ("b_2.mcap", None)];
        std::fs::write(dir.path().join("metadata.yaml"), meta(&files)).unwrap();
        let (_, notes) = read_all(dir.path(), None, None);
        let n = notes.iter().find(|n| n.contains("b_1.mcap")).unwrap();
        assert!(n.contains("between 2.000 s and 5.000 s (3.000 s)"), "{n}");
        // None left: an error naming each.
        std::fs::remove_file(dir.path().join("b_0.mcap")).unwrap();
        std::fs::remove_file(dir.path().join("b_2.mcap")).unwrap();
        let e = open(&folder::resolve(dir.path()).unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("none of its 3 files") && e.contains("b_1.mcap is missing"),
            "{e}"
        );
    }

    #[test]
    fn a_file_compressed_whole_is_read_and_a_bad_one_said() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("p.mcap");
        mcap(&plain, &[("/a", 1), ("/b", 2)]);
        let z = dir.path().join("p.mcap.zstd");
        std::fs::write(
            &z,
            zstd::encode_all(&std::fs::read(&plain).unwrap()[..], 3).unwrap(),
        )
        .unwrap();
        std::fs::remove_file(&plain).unwrap();
        let (got, _) = read_all(&z, None, None);
        assert_eq!(got.len(), 2);
        // Its temporary copy is gone once the recording is closed.
        let temps = || {
            std::fs::read_dir(std::env::temp_dir())
                .unwrap()
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .contains(&format!("partial-{}", std::process::id()))
                })
                .filter(|e| e.file_name().to_string_lossy().contains("p.mcap"))
                .count()
        };
        assert_eq!(temps(), 0);
        // Damaged, or not a recording inside.
        let mut bytes = std::fs::read(&z).unwrap();
        let n = bytes.len();
        bytes.truncate(n / 2);
        std::fs::write(&z, &bytes).unwrap();
        let e = open_container(&z).err().unwrap().to_string();
        assert!(
            e.contains("does not decompress") || e.contains("decompressed"),
            "{e}"
        );
        std::fs::write(&z, zstd::encode_all(&b"just text"[..], 3).unwrap()).unwrap();
        let e = open_container(&z).err().unwrap().to_string();
        assert!(e.contains("neither an MCAP file nor a rosbag2 database"), "{e}");
    }

    #[test]
    fn a_compressed_bomb_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let z = dir.path().join("bomb.mcap.zstd");
        let mut zeros = crate::ros::mcap_file::MAGIC.to_vec();
        zeros.resize(80 << 20, 0);
        std::fs::write(&z, zstd::encode_all(&zeros[..], 1).unwrap()).unwrap();
        assert!(std::fs::metadata(&z).unwrap().len() < 1 << 20);
        let e = open_container(&z).err().unwrap().to_string();
        assert!(e.contains("decompresses to more than 64 MiB"), "{e}");
    }

    proptest::proptest! {
        // Each case writes and opens a folder of files: a tenth of the
        // usual cases (UNDERLAY_FUZZ_CASES raises them by hand).
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: (crate::testing::fuzz_cases() / 10).max(20),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Messages cut into parts that may overlap, some missing, are read
        /// exactly once each, in time order, as a sort of them all gives.
        #[test]
        fn split_parts_read_as_their_sorted_union(
            parts in proptest::collection::vec(
                (proptest::collection::vec((proptest::bool::ANY, 0u64..50), 0..12), proptest::bool::weighted(0.85)),
                1..5,
            ),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut want: Vec<(u64, String)> = Vec::new();
            let mut listed = Vec::new();
            let mut any = false;
            for (i, (msgs, present)) in parts.iter().enumerate() {
                let name = format!("b_{i}.mcap");
                let mut msgs: Vec<(&str, u64)> = msgs.iter().map(|(b, t)| (if *b { "/b" } else { "/a" }, *t)).collect();
                msgs.sort_by_key(|m| m.1);
                if *present {
                    mcap(&dir.path().join(&name), &msgs);
                    want.extend(msgs.iter().map(|(t, time)| (*time, format!("{t}@{time}"))));
                    any = true;
                }
                listed.push(name);
            }
            let files: Vec<Part> = listed.iter().map(|n| (n.as_str(), None)).collect();
            std::fs::write(dir.path().join("metadata.yaml"), meta(&files)).unwrap();
            let layout = folder::resolve(dir.path()).unwrap();
            match open(&layout) {
                Err(_) => proptest::prop_assert!(!any),
                Ok(mut bag) => {
                    let ids: Vec<u32> = bag.info().topics.iter().map(|t| t.id).collect();
                    let mut got: Vec<(u64, String)> = Vec::new();
                    bag.read(&ids, None, &mut |m| {
                        got.push((m.log_time, String::from_utf8_lossy(m.data).into_owned()));
                        ControlFlow::Continue(())
                    }).unwrap();
                    proptest::prop_assert!(got.windows(2).all(|w| w[0].0 <= w[1].0));
                    let mut a = got.clone();
                    a.sort();
                    want.sort();
                    proptest::prop_assert_eq!(a, want);
                }
            }
        }

        /// A bag folder with its metadata.yaml and parts damaged never
        /// panics, however it is opened and read.
        #[test]
        fn damaged_folders_never_panic(
            edits in proptest::collection::vec((0usize..3, proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..10),
            cut in proptest::collection::vec(proptest::prelude::any::<usize>(), 3),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let paths: Vec<PathBuf> = vec![
                dir.path().join("metadata.yaml"),
                dir.path().join("b_0.mcap"),
                dir.path().join("b_1.mcap"),
            ];
            // The undamaged folder's files, made once.
            static BASE: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
            let base = BASE.get_or_init(|| {
                let d = tempfile::tempdir().unwrap();
                mcap(&d.path().join("0"), &[("/a", 1), ("/b", 6)]);
                mcap(&d.path().join("1"), &[("/a", 4), ("/a", 9)]);
                vec![
                    meta(&[("b_0.mcap", Some((1, 5, 2))), ("b_1.mcap", None)]).into_bytes(),
                    std::fs::read(d.path().join("0")).unwrap(),
                    std::fs::read(d.path().join("1")).unwrap(),
                ]
            });
            let mut bytes = base.clone();
            for (f, at, v) in edits {
                let n = bytes[f].len();
                bytes[f][at % n] = v;
            }
            for (i, c) in cut.iter().enumerate() {
                let n = bytes[i].len();
                if c % 3 == 0 {
                    bytes[i].truncate(c % (n + 1));
                }
            }
            for (p, b) in paths.iter().zip(&bytes) {
                std::fs::write(p, b).unwrap();
            }
            for given in [dir.path().to_owned(), paths[0].clone(), paths[2].clone()] {
                if let Ok(mut rec) = crate::ros::recording::open(&given) {
                    let ids: Vec<u32> = rec.info().topics.iter().map(|t| t.id).collect();
                    let _ = rec.read(&ids, None, &mut |_, _, _| ControlFlow::Continue(()));
                }
            }
        }
    }
}
