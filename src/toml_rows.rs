//! TOML as underlay writes it (sessions, calibration files): `toml`
//! writes an array either on one line or one number per line; a matrix
//! or a list of points reads best with one row per line. [`rows_on_lines`]
//! breaks every array of arrays or of inline tables after each element.

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
