//! Showing an error with its causes. Every error in underlay says only
//! what its own level knows (the file, the place) and keeps the lower
//! error as its `source`, so the whole story is the chain: `main` prints
//! it one cause per line, and one-line places (the viewer's status bar, a
//! warning) join it with [`chain`].

use std::error::Error;

/// `e` and each of its causes, joined with ": ".
pub fn chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// `s` itself when at most `max` bytes long, else its start and end with
/// `…` and the length between (so a 60 KB name prints as a line, not as
/// 60 KB on each of its 30,000 group lines).
pub fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let keep = max / 2 - 20;
    let head = s.floor_char_boundary(keep);
    let tail = s.ceil_char_boundary(s.len() - keep);
    format!("{}…({} bytes)…{}", &s[..head], s.len(), &s[tail..])
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    #[error("inner")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[test]
    fn causes_are_joined_in_order() {
        assert_eq!(super::chain(&Outer(Inner)), "outer: inner");
        assert_eq!(super::chain(&Inner), "inner");
    }
}
