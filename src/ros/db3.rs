//! rosbag2's SQLite storage (`.db3`) as a [`BagReader`].
//!
//! A `.db3` is an SQLite database with a table `topics(id, name, type,
//! serialization_format, offered_qos_profiles, …)` and a table
//! `messages(id, topic_id, timestamp, data)` (timestamp: ns since the
//! epoch), indexed on `timestamp`. From rosbag2 Iron on a table
//! `message_definitions(topic_type, encoding, encoded_message_definition, …)`
//! carries each type's definition (`ros2msg` or `ros2idl`), and a table
//! `schema(schema_version, ros_distro)` says which layout it is.
//!
//! [`open`] opens the file read-only and `immutable` (no lock is taken, so a
//! bag being recorded is not disturbed; what is still in a write-ahead log
//! is not seen), checks that the tables and columns it needs are there,
//! reads the topics and definitions, counts each topic's messages (one scan
//! of the `messages` table that does not read the messages' data) and takes
//! the time range from the timestamp index. [`Db3Bag::read`] walks one query
//! ordered by `(timestamp, id)` row by row and fetches each message's data by
//! its id only after checking its length, so memory holds one message at a
//! time and an oversized row is refused before it is read. A database that
//! turns out damaged part-way through a read keeps the messages already
//! given and says where it stopped (a note), as a torn MCAP does.
//!
//! The `metadata.yaml` rosbag2 writes beside the file is read by
//! [`super::folder`] (which files, in what order, compressed how); this
//! reads one database.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params_from_iter};

use super::bag::{BagError, BagInfo, BagMessage, BagReader, Encoding, SchemaText, Topic};

/// The first 16 bytes of every SQLite database.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The largest message [`Db3Bag::read`] accepts (1 GiB): a longer row is
/// taken for damage rather than allocated.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 30;

/// Whether a file starting with `start` is an SQLite database (a rosbag2
/// `.db3` is one).
pub fn looks_like_db3(start: &[u8]) -> bool {
    start.starts_with(SQLITE_MAGIC)
}

/// An open `.db3` recording.
pub struct Db3Bag {
    path: PathBuf,
    conn: Connection,
    info: BagInfo,
    max_message: u64,
}

impl std::fmt::Debug for Db3Bag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db3Bag")
            .field("path", &self.path)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Opens the rosbag2 SQLite database at `path` and reads its table of
/// contents.
///
/// Fails with [`BagError::Io`] when the file cannot be read and
/// [`BagError::Corrupt`] when it is not an SQLite database, not a rosbag2 one
/// (a table or column missing) or damaged where the table of contents is.
pub fn open(path: &Path) -> Result<Db3Bag, BagError> {
    check_magic(path)?;
    let conn = connect(path)?;
    let info = read_info(path, &conn)?;
    Ok(Db3Bag {
        path: path.to_path_buf(),
        conn,
        info,
        max_message: MAX_MESSAGE_BYTES,
    })
}

impl Db3Bag {
    /// The file this was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuses messages longer than `bytes` (instead of [`MAX_MESSAGE_BYTES`]).
    pub fn with_message_limit(mut self, bytes: u64) -> Db3Bag {
        self.max_message = bytes;
        self
    }
}

impl BagReader for Db3Bag {
    fn info(&self) -> &BagInfo {
        &self.info
    }

    fn read(
        &mut self,
        topics: &[u32],
        from: Option<u64>,
        each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
    ) -> Result<Vec<String>, BagError> {
        let limit = self.max_message;
        read_messages(&self.path, &self.conn, &self.info, limit, topics, from, each)
    }
}

/// Reads the first bytes: a missing file is an I/O error, anything but an
/// SQLite database a clear "not a database" (SQLite itself would take an
/// empty file for an empty database).
fn check_magic(path: &Path) -> Result<(), BagError> {
    let start = super::bag::file_start(path, 16)?;
    if looks_like_db3(&start) {
        Ok(())
    } else {
        Err(corrupt(
            path,
            "not a rosbag2 database: not an SQLite file (it does not start with `SQLite format 3`)",
        ))
    }
}

/// The `file:` URI of `path` with `immutable=1`, when the path can be
/// written as one.
fn immutable_uri(path: &Path) -> Option<String> {
    let abs = std::path::absolute(path).ok()?;
    #[cfg(unix)]
    let bytes: Vec<u8> = {
        use std::os::unix::ffi::OsStrExt;
        abs.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes: Vec<u8> = {
        let s = abs.to_str()?.replace('\\', "/");
        if s.starts_with('/') { s } else { format!("/{s}") }.into_bytes()
    };
    let mut uri = String::from("file://");
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    Some(uri)
}

fn connect(path: &Path) -> Result<Connection, BagError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match immutable_uri(path) {
        Some(uri) => Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI),
        None => Connection::open_with_flags(path, flags),
    }
    .map_err(|e| sql_error(path, "cannot open the database", e))?;
    // The file comes from outside: have SQLite check every page's cells as
    // it reads them, and never run code stored in the schema.
    let defend = || -> rusqlite::Result<()> {
        conn.pragma_update(None, "cell_size_check", true)?;
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        Ok(())
    };
    defend().map_err(|e| sql_error(path, "cannot open the database", e))?;
    Ok(conn)
}

/// The columns of table `table`, or `None` when there is no such table (a
/// view or an index of that name does not count).
fn columns(path: &Path, conn: &Connection, table: &str) -> Result<Option<Vec<String>>, BagError> {
    let what = "cannot read the database's schema";
    let kind: Option<String> = conn
        .query_row(
            "SELECT type FROM sqlite_master WHERE name = ?1 COLLATE NOCASE",
            [table],
            |row| row.get(0),
        )
        .optional()
        .map_err(|e| sql_error(path, what, e))?;
    if kind.as_deref() != Some("table") {
        return Ok(None);
    }
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_info(?1)")
        .map_err(|e| sql_error(path, what, e))?;
    let names = stmt
        .query_map([table], |row| row.get::<_, String>(0))
        .map_err(|e| sql_error(path, what, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| sql_error(path, what, e))?;
    Ok(Some(names))
}

/// Checks that `table` exists with `needed` columns.
fn require(path: &Path, conn: &Connection, table: &str, needed: &[&str]) -> Result<(), BagError> {
    let Some(have) = columns(path, conn, table)? else {
        return Err(corrupt(
            path,
            format!("not a rosbag2 database: no table `{table}`"),
        ));
    };
    for col in needed {
        if !have.iter().any(|h| h.eq_ignore_ascii_case(col)) {
            return Err(corrupt(
                path,
                format!("not a rosbag2 database: table `{table}` has no column `{col}`"),
            ));
        }
    }
    Ok(())
}

/// One row of `topics`, as stored.
struct TopicRow {
    id: i64,
    name: String,
    type_name: String,
    format: String,
}

fn read_info(path: &Path, conn: &Connection) -> Result<BagInfo, BagError> {
    require(
        path,
        conn,
        "topics",
        &["id", "name", "type", "serialization_format"],
    )?;
    require(path, conn, "messages", &["id", "topic_id", "timestamp", "data"])?;
    let mut notes = Vec::new();

    let what = "cannot read table `topics`";
    let mut stmt = conn
        .prepare("SELECT id, name, type, serialization_format FROM topics ORDER BY id")
        .map_err(|e| sql_error(path, what, e))?;
    let rows = stmt
        .query_map([], |row| {
            Ok(TopicRow {
                id: row.get(0)?,
                name: row.get(1)?,
                type_name: row.get(2)?,
                format: row.get(3)?,
            })
        })
        .map_err(|e| sql_error(path, what, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| sql_error(path, what, e))?;
    drop(stmt);

    let definitions = read_definitions(path, conn, &mut notes)?;
    let mut topics = Vec::with_capacity(rows.len());
    for row in rows {
        let id = u32::try_from(row.id).map_err(|_| {
            corrupt(
                path,
                format!("table `topics`: topic `{}` has id {}", row.name, row.id),
            )
        })?;
        let schema = definitions
            .as_ref()
            .and_then(|defs| defs.iter().find(|(t, _)| *t == row.type_name))
            .map(|(_, s)| s.clone());
        if definitions.is_some() && schema.is_none() {
            let cut = |s: &str| crate::error::shorten(s, 120);
            notes.push(format!(
                "no definition of `{}` (topic `{}`) in the file",
                cut(&row.type_name),
                cut(&row.name)
            ));
        }
        topics.push(Topic {
            id,
            name: row.name,
            type_name: row.type_name,
            encoding: Encoding::from_name(&row.format),
            schema,
            count: None,
        });
    }

    // Counts: one scan of `messages` that reads each row's header, not its
    // data. A damaged table leaves the counts unknown rather than the file
    // unreadable.
    match count_messages(conn) {
        Ok(counts) => {
            for (topic_id, n) in counts {
                match topics.iter_mut().find(|t| i64::from(t.id) == topic_id) {
                    Some(t) => t.count = u64::try_from(n).ok(),
                    None => notes.push(format!(
                        "{n} message(s) of topic id {topic_id}, which table `topics` lacks, are skipped"
                    )),
                }
            }
            for t in &mut topics {
                t.count.get_or_insert(0);
            }
        }
        Err(e) => notes.push(format!("cannot count the messages: {e}")),
    }

    // The time range from the index (two lookups), or a scan without one.
    let indexed =
        has_timestamp_index(conn).map_err(|e| sql_error(path, "cannot read the database's schema", e))?;
    if !indexed {
        notes.push(
            "no index on the messages' timestamps: reading in time order sorts the table first".to_owned(),
        );
    }
    let time_range = match conn.query_row(
        "SELECT (SELECT MIN(timestamp) FROM messages), (SELECT MAX(timestamp) FROM messages)",
        [],
        |row| Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, Option<i64>>(1)?)),
    ) {
        Ok((Some(lo), Some(hi))) => match (u64::try_from(lo), u64::try_from(hi)) {
            (Ok(lo), Ok(hi)) => Some((lo, hi)),
            _ => {
                notes.push(format!("timestamps before 1970 (from {lo} ns)"));
                None
            }
        },
        Ok(_) => None,
        Err(e) => {
            notes.push(format!("cannot find the time range: {e}"));
            None
        }
    };

    Ok(BagInfo {
        topics,
        time_range,
        indexed,
        notes,
    })
}

/// `(topic type, its definition)` from `message_definitions`, `None` when the
/// file has no such table (rosbag2 before Iron).
fn read_definitions(
    path: &Path,
    conn: &Connection,
    notes: &mut Vec<String>,
) -> Result<Option<Vec<(String, SchemaText)>>, BagError> {
    let Some(cols) = columns(path, conn, "message_definitions")? else {
        notes.push("the file carries no message definitions (rosbag2 before Iron)".to_owned());
        return Ok(None);
    };
    for col in ["topic_type", "encoding", "encoded_message_definition"] {
        if !cols.iter().any(|c| c.eq_ignore_ascii_case(col)) {
            notes.push(format!(
                "table `message_definitions` has no column `{col}`: its definitions are not used"
            ));
            return Ok(None);
        }
    }
    let what = "cannot read table `message_definitions`";
    let has_id = cols.iter().any(|c| c.eq_ignore_ascii_case("id"));
    let sql = format!(
        "SELECT topic_type, encoding, CAST(encoded_message_definition AS BLOB) FROM message_definitions{}",
        if has_id { " ORDER BY id" } else { "" }
    );
    let mut stmt = conn.prepare(&sql).map_err(|e| sql_error(path, what, e))?;
    let rows = stmt
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<Vec<u8>>>(2)?.unwrap_or_default(),
            ))
        })
        .map_err(|e| sql_error(path, what, e))?;
    let mut out: Vec<(String, SchemaText)> = Vec::new();
    for row in rows {
        let (type_name, encoding, data) = row.map_err(|e| sql_error(path, what, e))?;
        // rosbag2 writes encoding `unknown` and no text for a type whose
        // definition it could not find.
        if data.is_empty() || !matches!(encoding.as_str(), "ros2msg" | "ros2idl") {
            continue;
        }
        if out.iter().all(|(t, _)| *t != type_name) {
            out.push((type_name, SchemaText { encoding, data }));
        }
    }
    Ok(Some(out))
}

fn count_messages(conn: &Connection) -> rusqlite::Result<Vec<(i64, i64)>> {
    let mut stmt = conn.prepare("SELECT topic_id, COUNT(*) FROM messages GROUP BY topic_id")?;
    let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}

/// Whether an index of `messages` starts with `timestamp`.
fn has_timestamp_index(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_index_list('messages') AS il \
         JOIN pragma_index_info(il.name) AS ii \
         WHERE ii.seqno = 0 AND ii.name = 'timestamp' COLLATE NOCASE)",
        [],
        |row| row.get(0),
    )
}

/// Whether an SQLite error means the file is damaged or cut short (rather
/// than, say, a failing disk).
fn is_damage(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    matches!(e.sqlite_error_code(), Some(DatabaseCorrupt | NotADatabase)) || is_short_read(e)
}

/// Whether SQLite read past the file's end (a file cut short).
fn is_short_read(e: &rusqlite::Error) -> bool {
    e.sqlite_error()
        .is_some_and(|f| f.extended_code == rusqlite::ffi::SQLITE_IOERR_SHORT_READ)
}

fn read_messages(
    path: &Path,
    conn: &Connection,
    info: &BagInfo,
    limit: u64,
    topics: &[u32],
    from: Option<u64>,
    each: &mut dyn FnMut(BagMessage<'_>) -> ControlFlow<()>,
) -> Result<Vec<String>, BagError> {
    let mut notes = Vec::new();
    let mut ids: Vec<i64> = topics.iter().map(|&t| i64::from(t)).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(notes);
    }
    // Past the last representable time there is nothing to read; without a
    // start every row is read, one before 1970 too (and refused).
    let from = match from {
        None => i64::MIN,
        Some(t) => match i64::try_from(t) {
            Ok(t) => t,
            Err(_) => return Ok(notes),
        },
    };
    let placeholders = vec!["?"; ids.len()].join(", ");
    let order_sql = format!(
        "SELECT id, topic_id, timestamp FROM messages \
         WHERE topic_id IN ({placeholders}) AND timestamp >= ? ORDER BY timestamp, id"
    );
    let what = "cannot read table `messages`";
    let mut order = conn.prepare(&order_sql).map_err(|e| sql_error(path, what, e))?;
    // The data is fetched only when not longer than the bound: `length()`
    // of a blob reads the row's header, not the blob.
    let mut fetch = conn
        .prepare(
            "SELECT length(data), typeof(data), \
             CASE WHEN length(data) <= ?2 THEN data END FROM messages WHERE id = ?1",
        )
        .map_err(|e| sql_error(path, what, e))?;

    let params = ids.iter().copied().chain(std::iter::once(from));
    let mut rows = order
        .query(params_from_iter(params))
        .map_err(|e| sql_error(path, what, e))?;
    let mut delivered = 0u64;
    let mut last_time: Option<u64> = None;
    let max = i64::try_from(limit).unwrap_or(i64::MAX);
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) if is_damage(&e) => {
                notes.push(damage_note(delivered, last_time, &e));
                break;
            }
            Err(e) => return Err(sql_error(path, what, e)),
        };
        let (id, topic_id, timestamp) = three_ints(row).map_err(|e| sql_error(path, what, e))?;
        let topic = u32::try_from(topic_id)
            .map_err(|_| corrupt(path, format!("message id {id}: topic id {topic_id}")))?;
        let name = info.topic(topic).map_or("?", |t| t.name.as_str());
        let log_time = u64::try_from(timestamp).map_err(|_| {
            corrupt(
                path,
                format!("message id {id} (topic `{name}`): negative timestamp {timestamp}"),
            )
        })?;
        let mut data_rows = match fetch.query(rusqlite::params![id, max]) {
            Ok(r) => r,
            Err(e) if is_damage(&e) => {
                notes.push(damage_note(delivered, last_time, &e));
                break;
            }
            Err(e) => return Err(sql_error(path, what, e)),
        };
        let data_row = match data_rows.next() {
            Ok(Some(r)) => r,
            Ok(None) => {
                return Err(corrupt(
                    path,
                    format!("message id {id} (topic `{name}`): listed but not found"),
                ));
            }
            Err(e) if is_damage(&e) => {
                notes.push(damage_note(delivered, last_time, &e));
                break;
            }
            Err(e) => return Err(sql_error(path, what, e)),
        };
        let at = || format!("message id {id} (topic `{name}`, log time {log_time} ns)");
        let length: Option<i64> = data_row.get(0).map_err(|e| sql_error(path, what, e))?;
        let kind: String = data_row.get(1).map_err(|e| sql_error(path, what, e))?;
        if length.is_some_and(|n| n > max) {
            return Err(corrupt(
                path,
                format!(
                    "{}: {} bytes of data, more than the {limit} a message may have",
                    at(),
                    length.unwrap_or_default()
                ),
            ));
        }
        let data: &[u8] = match data_row.get_ref(2) {
            Ok(ValueRef::Blob(b)) => b,
            Ok(ValueRef::Text(t)) => t,
            Ok(_) => return Err(corrupt(path, format!("{}: its data is {kind}, not bytes", at()))),
            Err(e) if is_damage(&e) => {
                notes.push(damage_note(delivered, last_time, &e));
                break;
            }
            Err(e) => return Err(sql_error(path, what, e)),
        };
        if data.len() as u64 > limit {
            return Err(corrupt(
                path,
                format!(
                    "{}: {} bytes of data, more than the {limit} a message may have",
                    at(),
                    data.len()
                ),
            ));
        }
        let flow = each(BagMessage {
            topic,
            log_time,
            data,
        });
        delivered += 1;
        last_time = Some(log_time);
        if flow.is_break() {
            break;
        }
    }
    Ok(notes)
}

fn three_ints(row: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, i64, i64)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
}

fn damage_note(delivered: u64, last_time: Option<u64>, e: &rusqlite::Error) -> String {
    match last_time {
        Some(t) => format!(
            "the database is damaged after {delivered} message(s) (the last at log time {t} ns): {e}; \
             the rest is not read"
        ),
        None => format!("the database is damaged before the first message asked for: {e}"),
    }
}

fn corrupt(path: &Path, message: impl Into<String>) -> BagError {
    BagError::Corrupt {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// An SQLite error as a [`BagError`]: a failing disk as I/O, anything else
/// (damage, a wrong schema, a value of the wrong type) as [`BagError::Corrupt`].
fn sql_error(path: &Path, what: &str, e: rusqlite::Error) -> BagError {
    use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, SystemIoFailure};
    if is_short_read(&e) {
        return corrupt(path, format!("{what}: the file is cut short ({e})"));
    }
    match e.sqlite_error_code() {
        Some(SystemIoFailure | CannotOpen | PermissionDenied) => BagError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("{what}: {e}")),
        },
        _ => corrupt(path, format!("{what}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture of `tests/data/ros/README.md`: frames 149–151 of the demo.
    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros/demo-3.db3")
    }

    const T0: u64 = 1_700_000_000_000_000_000;
    const LATENCY: u64 = 20_000_000;
    /// The log times of the three frames (video times 4.966667, 5, 5.033333 s).
    const FRAMES: [u64; 3] = [
        T0 + 4_966_667_000 + LATENCY,
        T0 + 5_000_000_000 + LATENCY,
        T0 + 5_033_333_000 + LATENCY,
    ];

    fn read_all(bag: &mut Db3Bag, topics: &[u32], from: Option<u64>) -> Vec<(u32, u64, Vec<u8>)> {
        let mut got = Vec::new();
        let notes = bag
            .read(topics, from, &mut |m| {
                got.push((m.topic, m.log_time, m.data.to_vec()));
                ControlFlow::Continue(())
            })
            .unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        got
    }

    /// A copy of the fixture in a temporary folder, changed by `sql`.
    fn changed(dir: &Path, sql: &str) -> PathBuf {
        let p = dir.join("changed.db3");
        std::fs::copy(fixture(), &p).unwrap();
        let conn = Connection::open(&p).unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        p
    }

    fn all_ids(bag: &Db3Bag) -> Vec<u32> {
        bag.info().topics.iter().map(|t| t.id).collect()
    }

    #[test]
    fn magic() {
        let start = std::fs::read(fixture()).unwrap();
        assert!(looks_like_db3(&start[..100]));
        assert!(!looks_like_db3(&start[..15]));
        assert!(!looks_like_db3(b"\x89MCAP0\r\n"));
        assert!(!looks_like_db3(b""));
    }

    #[test]
    fn table_of_contents() {
        let bag = open(&fixture()).unwrap();
        let info = bag.info();
        assert!(info.indexed);
        assert!(info.notes.is_empty(), "{:?}", info.notes);
        assert_eq!(info.time_range, Some((T0 + LATENCY, FRAMES[2])));
        let expect = [
            (1, "/tf_static", "tf2_msgs/msg/TFMessage", 1),
            (
                2,
                "/camera/image_raw/compressed",
                "sensor_msgs/msg/CompressedImage",
                3,
            ),
            (3, "/camera/camera_info", "sensor_msgs/msg/CameraInfo", 3),
            (4, "/tf", "tf2_msgs/msg/TFMessage", 3),
            (5, "/markers", "visualization_msgs/msg/MarkerArray", 3),
        ];
        assert_eq!(info.topics.len(), expect.len());
        for (id, name, type_name, count) in expect {
            let t = info.by_name(name).unwrap();
            assert_eq!(t.id, id);
            assert_eq!(t.type_name, type_name);
            assert_eq!(t.encoding, Encoding::Cdr);
            assert_eq!(t.count, Some(count));
            let schema = t.schema.as_ref().unwrap();
            assert_eq!(schema.encoding, "ros2msg");
            assert!(!schema.data.is_empty());
        }
        let markers = info.by_name("/markers").unwrap().schema.as_ref().unwrap();
        let text = String::from_utf8(markers.data.clone()).unwrap();
        assert!(
            text.starts_with("visualization_msgs/Marker[] markers\n"),
            "{text}"
        );
        assert!(text.contains("MSG: visualization_msgs/Marker\n"), "{text}");
    }

    #[test]
    fn reads_in_time_order() {
        let mut bag = open(&fixture()).unwrap();
        let ids = all_ids(&bag);
        let got = read_all(&mut bag, &ids, None);
        assert_eq!(got.len(), 13);
        assert_eq!((got[0].0, got[0].1), (1, T0 + LATENCY));
        // Each frame: camera info, picture, tf, markers, in the order written.
        for (f, time) in FRAMES.iter().enumerate() {
            let frame: Vec<(u32, u64)> = got[1 + 4 * f..5 + 4 * f].iter().map(|m| (m.0, m.1)).collect();
            assert_eq!(frame, [(3, *time), (2, *time), (4, *time), (5, *time)]);
        }
        for (topic, _, data) in &got {
            // A little-endian CDR header.
            assert_eq!(&data[..4], &[0, 1, 0, 0], "topic {topic}");
        }
        // The picture: a jpeg inside a CompressedImage.
        let jpeg = &got[2].2;
        assert!(jpeg.windows(3).any(|w| w == [0xff, 0xd8, 0xff]));
        assert!(jpeg.windows(26).any(|w| w == b"bgr8; jpeg compressed bgr8"));
        // Reading again gives the same.
        assert_eq!(read_all(&mut bag, &ids, None), got);
    }

    #[test]
    fn topic_filter_and_from() {
        let mut bag = open(&fixture()).unwrap();
        let tf = read_all(&mut bag, &[4], None);
        assert_eq!(
            tf.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(),
            FRAMES.map(|t| (4, t))
        );
        // Repeated and unknown ids change nothing.
        assert_eq!(read_all(&mut bag, &[4, 4, 77], None), tf);
        assert!(read_all(&mut bag, &[], None).is_empty());

        let later = read_all(&mut bag, &[1, 4, 5], Some(FRAMES[1]));
        let want: Vec<(u32, u64)> = vec![(4, FRAMES[1]), (5, FRAMES[1]), (4, FRAMES[2]), (5, FRAMES[2])];
        assert_eq!(later.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(), want);
        assert_eq!(read_all(&mut bag, &[4], Some(FRAMES[1] + 1)).len(), 1);
        assert!(read_all(&mut bag, &[4], Some(FRAMES[2] + 1)).is_empty());
        assert!(read_all(&mut bag, &[4], Some(u64::MAX)).is_empty());
    }

    #[test]
    fn stops_when_asked() {
        let mut bag = open(&fixture()).unwrap();
        let ids = all_ids(&bag);
        let mut seen = 0;
        let notes = bag
            .read(&ids, None, &mut |_| {
                seen += 1;
                if seen == 3 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .unwrap();
        assert_eq!(seen, 3);
        assert!(notes.is_empty());
    }

    #[test]
    fn without_definitions() {
        let dir = tempfile::tempdir().unwrap();
        let p = changed(
            dir.path(),
            "DROP TABLE message_definitions; UPDATE schema SET schema_version = 3;",
        );
        let mut bag = open(&p).unwrap();
        assert!(bag.info().topics.iter().all(|t| t.schema.is_none()));
        assert_eq!(bag.info().notes.len(), 1, "{:?}", bag.info().notes);
        assert_eq!(read_all(&mut bag, &[2], None).len(), 3);

        // A type without its definition (rosbag2 writes `unknown`).
        let p2 = dir.path().join("unknown.db3");
        std::fs::copy(fixture(), &p2).unwrap();
        Connection::open(&p2)
            .unwrap()
            .execute_batch(
                "UPDATE message_definitions SET encoding = 'unknown', encoded_message_definition = '' \
                 WHERE topic_type = 'tf2_msgs/msg/TFMessage';",
            )
            .unwrap();
        let bag = open(&p2).unwrap();
        assert!(bag.info().by_name("/tf").unwrap().schema.is_none());
        assert!(bag.info().by_name("/markers").unwrap().schema.is_some());
        assert_eq!(bag.info().notes.len(), 2, "{:?}", bag.info().notes);
    }

    #[test]
    fn without_index() {
        let dir = tempfile::tempdir().unwrap();
        let p = changed(dir.path(), "DROP INDEX timestamp_idx;");
        let mut bag = open(&p).unwrap();
        assert!(!bag.info().indexed);
        assert_eq!(bag.info().time_range, Some((T0 + LATENCY, FRAMES[2])));
        let ids = all_ids(&bag);
        let got = read_all(&mut bag, &ids, None);
        let fresh = read_all(&mut open(&fixture()).unwrap(), &ids, None);
        assert_eq!(got, fresh);
    }

    #[test]
    fn not_rosbag2() {
        let dir = tempfile::tempdir().unwrap();
        let msg = |p: &Path| open(p).err().unwrap().to_string();

        let p = changed(dir.path(), "DROP TABLE topics;");
        let m = msg(&p);
        assert!(m.contains("not a rosbag2 database: no table `topics`"), "{m}");

        let p = changed(
            dir.path(),
            "DROP TABLE topics; CREATE VIEW topics AS SELECT 1 AS id;",
        );
        assert!(msg(&p).contains("no table `topics`"));

        let p = changed(dir.path(), "DROP TABLE messages;");
        assert!(msg(&p).contains("no table `messages`"));

        let p = changed(dir.path(), "ALTER TABLE topics DROP COLUMN serialization_format;");
        let m = msg(&p);
        assert!(
            m.contains("table `topics` has no column `serialization_format`"),
            "{m}"
        );

        // Another SQLite database altogether.
        let p = dir.path().join("other.db3");
        Connection::open(&p)
            .unwrap()
            .execute_batch("CREATE TABLE t(x);")
            .unwrap();
        assert!(msg(&p).contains("no table `topics`"));

        let p = dir.path().join("empty.db3");
        std::fs::write(&p, b"").unwrap();
        assert!(msg(&p).contains("not an SQLite file"), "{}", msg(&p));

        let p = dir.path().join("missing.db3");
        let e = open(&p).err().unwrap();
        assert!(matches!(e, BagError::Io { .. }), "{e}");
        assert!(matches!(&e, BagError::Io { path, .. } if path == &p));
    }

    #[test]
    fn values_of_the_wrong_kind() {
        let dir = tempfile::tempdir().unwrap();
        let p = changed(dir.path(), "UPDATE topics SET name = x'00ff' WHERE id = 2;");
        let m = open(&p).err().unwrap().to_string();
        assert!(m.contains("table `topics`"), "{m}");

        let p = changed(dir.path(), "UPDATE topics SET id = 5000000000 WHERE id = 2;");
        let m = open(&p).err().unwrap().to_string();
        assert!(m.contains("5000000000"), "{m}");

        let p = changed(dir.path(), "UPDATE messages SET timestamp = -5 WHERE id = 4;");
        let mut bag = open(&p).unwrap();
        assert_eq!(bag.info().time_range, None);
        assert_eq!(bag.info().notes.len(), 1, "{:?}", bag.info().notes);
        let e = bag
            .read(&[4], None, &mut |_| ControlFlow::Continue(()))
            .err()
            .unwrap();
        let m = e.to_string();
        assert!(
            m.contains("message id 4") && m.contains("negative timestamp"),
            "{m}"
        );

        let p = changed(dir.path(), "UPDATE messages SET data = 42 WHERE id = 8;");
        let mut bag = open(&p).unwrap();
        let m = bag
            .read(&[4], None, &mut |_| ControlFlow::Continue(()))
            .err()
            .unwrap()
            .to_string();
        assert!(m.contains("message id 8") && m.contains("integer"), "{m}");
    }

    #[test]
    fn refuses_oversized_messages() {
        let mut bag = open(&fixture()).unwrap().with_message_limit(1000);
        let mut seen = 0;
        let e = bag
            .read(&[1, 2], None, &mut |_| {
                seen += 1;
                ControlFlow::Continue(())
            })
            .err()
            .unwrap();
        assert_eq!(seen, 1, "the /tf_static message before the first picture");
        let m = e.to_string();
        assert!(
            m.contains("message id 3 (topic `/camera/image_raw/compressed`"),
            "{m}"
        );
        assert!(m.contains("more than the 1000"), "{m}");
    }

    #[test]
    fn opens_a_bag_being_written() {
        let dir = tempfile::tempdir().unwrap();
        // A name SQLite's URIs would misread unless escaped.
        let p = dir.path().join("a bag?#%é.db3");
        std::fs::copy(fixture(), &p).unwrap();
        let writer = Connection::open(&p).unwrap();
        writer
            .execute_batch(
                "BEGIN EXCLUSIVE; INSERT INTO messages (topic_id, timestamp, data) VALUES (4, 1, x'00');",
            )
            .unwrap();
        let mut bag = open(&p).unwrap();
        assert_eq!(bag.info().by_name("/tf").unwrap().count, Some(3));
        assert_eq!(read_all(&mut bag, &[4], None).len(), 3);
        writer.execute_batch("ROLLBACK;").unwrap();
    }

    #[test]
    fn torn_file() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = std::fs::read(fixture()).unwrap();
        let p = dir.path().join("torn.db3");
        let mut notes = 0;
        for keep in (100..bytes.len()).step_by(1000) {
            std::fs::write(&p, &bytes[..keep]).unwrap();
            // A file cut short is damage, not a failing disk.
            match open(&p) {
                Err(e) => assert!(matches!(e, BagError::Corrupt { .. }), "{keep}: {e:?}"),
                Ok(mut bag) => {
                    let ids = all_ids(&bag);
                    match bag.read(&ids, None, &mut |_| ControlFlow::Continue(())) {
                        Ok(n) => notes += n.len(),
                        Err(e) => panic!("{keep}: {e:?}"),
                    }
                }
            }
        }
        assert!(notes > 0, "some cut files are read up to the damage");
    }

    /// Opens `path` and reads everything: an error or messages, never a panic.
    fn read_anything(path: &Path) {
        let Ok(mut bag) = open(path) else { return };
        let ids = all_ids(&bag);
        let mut n = 0u32;
        let _ = bag.read(&ids, None, &mut |m| {
            assert!(m.data.len() as u64 <= MAX_MESSAGE_BYTES);
            n += 1;
            ControlFlow::Continue(())
        });
        let _ = bag.read(&ids, Some(FRAMES[1]), &mut |_| ControlFlow::Break(()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            // Each case writes and opens a 100 KB database (about 3 ms).
            cases: (crate::testing::fuzz_cases() / 4).max(20),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The fixture with bytes changed (half of them in its first pages:
        /// the header, the schema, the topics) and cut: an error or
        /// messages, never a panic or a hang.
        #[test]
        fn damaged_files_never_panic(
            edits in proptest::collection::vec(
                (proptest::prelude::any::<bool>(), proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()),
                0..16,
            ),
            cut in proptest::prelude::any::<Option<usize>>(),
        ) {
            let mut bytes = std::fs::read(fixture()).unwrap();
            let n = bytes.len();
            for (early, at, v) in edits {
                let at = if early { at % 8192.min(n) } else { at % n };
                bytes[at] = v;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut % (n + 1));
            }
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("fuzz.db3");
            std::fs::write(&p, &bytes).unwrap();
            read_anything(&p);
        }
    }
}
