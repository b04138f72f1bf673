//! TOML as underlay writes and reads it (sessions, calibration files).
//! `toml` writes an array either on one line or one number per line; a
//! matrix or a list of points reads best with one row per line:
//! [`rows_on_lines`] breaks every array of arrays or of inline tables
//! after each element. `toml`'s errors quote the whole line they are on,
//! which may be megabytes: [`parse`] says the line and column and quotes
//! at most a short excerpt around the place ([`TomlError`]).

use serde::de::DeserializeOwned;

/// TOML that does not read as what was expected: where, why, and a short
/// excerpt of the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}{}", if .excerpt.is_empty() { String::new() } else { format!(" (at `{}`)", .excerpt) })]
pub struct TomlError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// At most 60 characters of the line around the place.
    pub excerpt: String,
}

/// Reads `text` as a `T`, with errors that quote at most an excerpt.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start).min(text.len());
        let at = text.floor_char_boundary(at);
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = text[..at].matches('\n').count() + 1;
        let column = text[line_start..at].chars().count() + 1;
        let from = text.floor_char_boundary(at.saturating_sub(30).max(line_start));
        let to = text.ceil_char_boundary((at + 30).min(line_end));
        let mut excerpt = String::new();
        if from > line_start {
            excerpt.push('…');
        }
        excerpt.push_str(text[from..to].trim_end());
        if to < line_end {
            excerpt.push('…');
        }
        TomlError {
            line,
            column,
            message: crate::error::shorten(e.message(), 200),
            excerpt,
        }
    })
}

/// `text` (TOML as `toml::to_string` writes it: arrays inline) with every
/// array whose elements are arrays or inline tables written one element
/// per line:
///
/// ```text
/// homography = [
///     [1.0, 0.0, 5.0],
///     [0.0, 1.0, 6.0],
///     [0.0, 0.0, 1.0],
/// ]
/// ```
pub fn rows_on_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.lines() {
        match split_rows(line) {
            Some((key, rows)) => {
                out.push_str(key);
                out.push_str("= [\n");
                for r in rows {
                    out.push_str("    ");
                    out.push_str(r.trim());
                    out.push_str(",\n");
                }
                out.push_str("]\n");
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// `key = [A, B, …]` with A, B arrays or inline tables: the key (with its
/// trailing space) and the elements.
fn split_rows(line: &str) -> Option<(&str, Vec<&str>)> {
    let (key, value) = line.split_once("= ")?;
    if key.contains(['"', '\'', '[']) {
        return None;
    }
    let inner = value.trim_end().strip_prefix('[')?.strip_suffix(']')?;
    let inner = inner.trim();
    if !(inner.starts_with('[') || inner.starts_with('{')) {
        return None;
    }
    let mut rows = Vec::new();
    let (mut depth, mut start, mut quote) = (0i32, 0usize, None::<char>);
    let mut escaped = false;
    for (i, c) in inner.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                rows.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        rows.push(last);
    }
    Some((key, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_quote_an_excerpt_not_the_line() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct S {
            video: String,
        }
        let text = format!("# a session\nvideo = \"{}\n", "x".repeat(1 << 20));
        let e = parse::<S>(&text).unwrap_err();
        let m = e.to_string();
        assert!(
            m.len() < 400 && m.starts_with("line 2, column "),
            "{}",
            &m[..m.len().min(500)]
        );
        let e = parse::<S>("video = 3\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 9), "{e}");
        assert!(e.to_string().contains("`video = 3`"), "{e}");
    }

    #[test]
    fn matrices_and_point_lists_get_a_row_per_line() {
        let text = "a = 1\nhomography = [[1.0, 0.0, 5.0], [0.0, 1.0, 6.0], [0.0, 0.0, 1.0]]\nsize = [1280, 720]\n\
                    points = [{ u = 1.0, name = \"a, [b]\" }, { u = 2.0 }]\n";
        let got = rows_on_lines(text);
        assert_eq!(
            got,
            "a = 1\nhomography = [\n    [1.0, 0.0, 5.0],\n    [0.0, 1.0, 6.0],\n    [0.0, 0.0, 1.0],\n]\n\
             size = [1280, 720]\npoints = [\n    { u = 1.0, name = \"a, [b]\" },\n    { u = 2.0 },\n]\n"
        );
        let back: toml::Table = toml::from_str(&got).unwrap();
        assert_eq!(back, toml::from_str::<toml::Table>(text).unwrap());
        // Strings that look like arrays are left alone.
        let s = "name = \"[[1], [2]]\"\n";
        assert_eq!(rows_on_lines(s), s);
    }
}
