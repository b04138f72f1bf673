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

/// A long text shortened to its start and end (it lives with the log's
/// summary, which shows long entity names).
pub use underlay_log::summary::shorten;

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
