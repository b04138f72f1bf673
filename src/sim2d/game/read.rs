//! Which version a game log is (from its first bytes), and reading it
//! with that version's reader.

use super::model::{Builder, Game, GameError, Version};
use super::{json, text, v3};

/// Whether `head` (the first bytes of a decompressed file) starts a game
/// log: `ULG` + 3 (binary) or `ULG4`/`ULG5`/`ULG6`, or a JSON array whose
/// first element is an object with one of the JSON log's keys.
pub fn sniff(head: &[u8]) -> bool {
    sniff_version(head).is_some()
}

fn sniff_version(head: &[u8]) -> Option<Version> {
    if let Some(rest) = head.strip_prefix(b"ULG") {
        return match rest.first()? {
            3 => Some(Version::Binary3),
            b'4' => Some(Version::Text4),
            b'5' => Some(Version::Text5),
            b'6' => Some(Version::Text6),
            _ => None,
        };
    }
    let skip_ws = |s: &[u8]| -> usize { s.iter().take_while(|b| b.is_ascii_whitespace()).count() };
    let mut i = skip_ws(head);
    if head.get(i) != Some(&b'[') {
        return None;
    }
    i += 1;
    i += skip_ws(&head[i..]);
    if head.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    i += skip_ws(&head[i..]);
    let rest = head.get(i..)?;
    const KEYS: [&[u8]; 9] = [
        b"\"version\"",
        b"\"timestamp\"",
        b"\"server_param\"",
        b"\"player_param\"",
        b"\"player_type\"",
        b"\"show\"",
        b"\"playmode\"",
        b"\"team\"",
        b"\"msg\"",
    ];
    KEYS.iter().any(|k| rest.starts_with(k)).then_some(Version::Json)
}

/// Reads a whole game log from its decompressed bytes; the version is
/// sniffed from the content. A log with no show record is refused: it
/// holds no moment of a match, for `log info`, the viewer and export
/// alike.
pub fn read_game(bytes: &[u8]) -> Result<Game, GameError> {
    let Some(version) = sniff_version(bytes) else {
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(8)]).into_owned();
        return Err(GameError::NotAGameLog(format!(
            "it starts with {shown:?}, not \"ULG\" or a JSON game log"
        )));
    };
    let mut b = Builder::new(version);
    b.game.skipped.total = bytes.len() as u64;
    match version {
        Version::Binary3 => v3::read(bytes, &mut b),
        Version::Json => json::read(bytes, &mut b)?,
        _ => text::read(bytes, &mut b),
    }
    let game = b.finish();
    if game.records.is_empty() {
        // Mostly damage: said as every reader says it (the format table's
        // refusal), since that, not a missing record, is what the file is.
        let s = &game.skipped;
        let total = bytes.len() as u64;
        if s.is_most_of(total) {
            let group = crate::log::validate::group;
            return Err(GameError::NoShowRecord(format!(
                "most of it does not read as a 2D game log: {} of its {} bytes do not (the first at byte \
                 {}); it is probably something else, or badly damaged",
                group(s.passed_over(total)),
                group(total),
                group(s.first.unwrap_or(0)),
            )));
        }
        let why = match game.warnings.first() {
            Some(w) => format!(
                "none that could be read ({} {} said, the first: {w})",
                game.warnings.len(),
                if game.warnings.len() == 1 {
                    "warning"
                } else {
                    "warnings"
                }
            ),
            None => format!(
                "its header ({} server parameters, {} player types) and {} {}, nothing else: the server \
                 stopped before the first cycle, or no team connected",
                game.server.raw.len(),
                game.player_types.len(),
                game.messages.len(),
                if game.messages.len() == 1 {
                    "message"
                } else {
                    "messages"
                },
            ),
        };
        return Err(GameError::NoShowRecord(why));
    }
    Ok(game)
}
