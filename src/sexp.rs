//! The S-expressions the RoboCup simulators write (every 3D-league message,
//! the 2D league's text game logs and debug-client world models): a fast,
//! zero-copy tokenizer and parser shared by their readers, and the
//! numbered lines of such a file ([`lines`]).
//!
//! One message (a line of a log, a framed network message) is parsed into
//! a flat array of nodes in pre-order, each a byte range of the input:
//! atoms are never copied, and a list knows where its next sibling starts,
//! so walking the children of a list is a few array reads. The array is
//! owned by a [`Parser`] and reused from message to message, so parsing a
//! log allocates nothing per message once the largest one has been seen.
//!
//! The grammar is the servers': lists in `(` `)`, atoms separated by
//! whitespace or parentheses, and (for SimSpark's scene files) atoms in
//! double quotes, which may hold spaces and parentheses. Depth and node
//! count are bounded ([`Limits`]); unbalanced parentheses, a quote left
//! open and the limits are [`SyntaxError`]s naming the byte offset.
//!
//! Numbers are read by [`parse_f64`]: plain decimals of up to 19 digits
//! (what the servers write) are computed exactly from their digits; the
//! rest (exponents, `inf`, long mantissas) go to the standard library.

use std::fmt;

/// Bounds on one message, against corrupt or hostile input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of lists accepted.
    pub max_depth: usize,
    /// The most atoms and lists one message may hold.
    pub max_nodes: usize,
}

impl Default for Limits {
    /// 256 levels and 4 million nodes: far above any server's message (a
    /// full scene graph of 22 robots has about 10,000 nodes, 12 levels).
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_nodes: 4 << 20,
        }
    }
}

/// Why a message is not a well-formed S-expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyntaxErrorKind {
    /// A `)` with no `(` open.
    UnexpectedClose,
    /// The message ended with a list open; the offset is its `(`.
    Unclosed,
    /// A `"` with no closing `"`; the offset is the opening one.
    UnterminatedQuote,
    /// Lists nested deeper than [`Limits::max_depth`].
    TooDeep(usize),
    /// More nodes than [`Limits::max_nodes`].
    TooManyNodes(usize),
    /// The message is longer than 4 GiB (offsets are 32-bit).
    TooLong,
}

/// A syntax error at a byte offset of the parsed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct SyntaxError {
    /// Byte offset in the message.
    pub offset: usize,
    pub kind: SyntaxErrorKind,
}

impl fmt::Display for SyntaxErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyntaxErrorKind::UnexpectedClose => f.write_str("')' without a matching '('"),
            SyntaxErrorKind::Unclosed => f.write_str("'(' never closed"),
            SyntaxErrorKind::UnterminatedQuote => f.write_str("'\"' never closed"),
            SyntaxErrorKind::TooDeep(d) => write!(f, "lists nested deeper than {d} levels"),
            SyntaxErrorKind::TooManyNodes(n) => write!(f, "more than {n} atoms and lists"),
            SyntaxErrorKind::TooLong => f.write_str("message longer than 4 GiB"),
        }
    }
}

const ATOM: u8 = 0;
const QUOTED: u8 = 1;
const LIST: u8 = 2;

/// One atom or list: its bytes `start..end` in the message (for a list,
/// from its `(` to after its `)`; for a quoted atom, inside the quotes)
/// and the index of the node after its subtree.
#[derive(Clone, Copy, Debug)]
struct Node {
    start: u32,
    end: u32,
    next: u32,
    kind: u8,
}

/// Byte classes of the tokenizer.
const WS: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
const QUOTE: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b' ' as usize] = WS;
    t[b'\t' as usize] = WS;
    t[b'\n' as usize] = WS;
    t[b'\r' as usize] = WS;
    t[0x0b] = WS;
    t[0x0c] = WS;
    t[b'(' as usize] = OPEN;
    t[b')' as usize] = CLOSE;
    t[b'"' as usize] = QUOTE;
    t
};

/// Parses messages, reusing its node array between them.
#[derive(Debug, Default)]
pub struct Parser {
    nodes: Vec<Node>,
    open: Vec<u32>,
    limits: Limits,
}

impl Parser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_limits(limits: Limits) -> Self {
        Parser {
            limits,
            ..Self::default()
        }
    }

    /// Parses one message: any number of top-level atoms and lists.
    pub fn parse<'a>(&'a mut self, src: &'a [u8]) -> Result<Doc<'a>, SyntaxError> {
        if u32::try_from(src.len()).is_err() {
            return Err(SyntaxError {
                offset: 0,
                kind: SyntaxErrorKind::TooLong,
            });
        }
        self.nodes.clear();
        self.open.clear();
        let max_nodes = self.limits.max_nodes;
        let max_depth = self.limits.max_depth;
        let n = src.len();
        let mut i = 0usize;
        while i < n {
            let b = src[i];
            match CLASS[b as usize] {
                WS => i += 1,
                OPEN => {
                    if self.open.len() >= max_depth {
                        return Err(SyntaxError {
                            offset: i,
                            kind: SyntaxErrorKind::TooDeep(max_depth),
                        });
                    }
                    self.push(
                        Node {
                            start: i as u32,
                            end: 0,
                            next: 0,
                            kind: LIST,
                        },
                        i,
                        max_nodes,
                    )?;
                    self.open.push((self.nodes.len() - 1) as u32);
                    i += 1;
                }
                CLOSE => {
                    let Some(at) = self.open.pop() else {
                        return Err(SyntaxError {
                            offset: i,
                            kind: SyntaxErrorKind::UnexpectedClose,
                        });
                    };
                    let next = self.nodes.len() as u32;
                    let node = &mut self.nodes[at as usize];
                    node.end = (i + 1) as u32;
                    node.next = next;
                    i += 1;
                }
                QUOTE => {
                    let start = i + 1;
                    let Some(len) = src[start..].iter().position(|&c| c == b'"') else {
                        return Err(SyntaxError {
                            offset: i,
                            kind: SyntaxErrorKind::UnterminatedQuote,
                        });
                    };
                    let end = start + len;
                    let next = self.nodes.len() as u32 + 1;
                    self.push(
                        Node {
                            start: start as u32,
                            end: end as u32,
                            next,
                            kind: QUOTED,
                        },
                        i,
                        max_nodes,
                    )?;
                    i = end + 1;
                }
                _ => {
                    let start = i;
                    i += 1;
                    while i < n && CLASS[src[i] as usize] == 0 {
                        i += 1;
                    }
                    let next = self.nodes.len() as u32 + 1;
                    self.push(
                        Node {
                            start: start as u32,
                            end: i as u32,
                            next,
                            kind: ATOM,
                        },
                        start,
                        max_nodes,
                    )?;
                }
            }
        }
        if let Some(&at) = self.open.first() {
            return Err(SyntaxError {
                offset: self.nodes[at as usize].start as usize,
                kind: SyntaxErrorKind::Unclosed,
            });
        }
        Ok(Doc {
            src,
            nodes: &self.nodes,
        })
    }

    #[inline]
    fn push(&mut self, node: Node, offset: usize, max_nodes: usize) -> Result<(), SyntaxError> {
        if self.nodes.len() >= max_nodes {
            return Err(SyntaxError {
                offset,
                kind: SyntaxErrorKind::TooManyNodes(max_nodes),
            });
        }
        self.nodes.push(node);
        Ok(())
    }
}

/// A parsed message: its top-level atoms and lists.
#[derive(Clone, Copy, Debug)]
pub struct Doc<'a> {
    src: &'a [u8],
    nodes: &'a [Node],
}

impl<'a> Doc<'a> {
    /// The top-level atoms and lists, in order.
    pub fn items(&self) -> Items<'a> {
        Items {
            doc: *self,
            at: 0,
            end: self.nodes.len() as u32,
        }
    }

    /// The number of atoms and lists in the message.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The message's bytes.
    pub fn source(&self) -> &'a [u8] {
        self.src
    }
}

/// An atom or a list of a parsed message.
#[derive(Clone, Copy)]
pub struct Sexp<'a> {
    doc: Doc<'a>,
    at: u32,
}

impl fmt::Debug for Sexp<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(self.text()))
    }
}

impl<'a> Sexp<'a> {
    #[inline]
    fn node(&self) -> Node {
        self.doc.nodes[self.at as usize]
    }

    pub fn is_list(&self) -> bool {
        self.node().kind == LIST
    }

    /// The atom's bytes (without quotes); `None` for a list.
    #[inline]
    pub fn atom(&self) -> Option<&'a [u8]> {
        let n = self.node();
        (n.kind != LIST).then(|| &self.doc.src[n.start as usize..n.end as usize])
    }

    /// The atom as UTF-8 text, if it is an atom and valid UTF-8.
    pub fn str(&self) -> Option<&'a str> {
        self.atom().and_then(|a| std::str::from_utf8(a).ok())
    }

    /// The atom as a number (see [`parse_f64`]).
    #[inline]
    pub fn f64(&self) -> Option<f64> {
        self.atom().and_then(parse_f64)
    }

    /// The atom as a non-negative integer.
    pub fn u32(&self) -> Option<u32> {
        self.str().and_then(|s| s.parse().ok())
    }

    /// The bytes this node was parsed from (a list with its parentheses).
    pub fn text(&self) -> &'a [u8] {
        let n = self.node();
        &self.doc.src[n.start as usize..n.end as usize]
    }

    /// Byte offset of the node in the message.
    pub fn offset(&self) -> usize {
        self.node().start as usize
    }

    /// The list's items; nothing for an atom.
    #[inline]
    pub fn items(&self) -> Items<'a> {
        let n = self.node();
        if n.kind == LIST {
            Items {
                doc: self.doc,
                at: self.at + 1,
                end: n.next,
            }
        } else {
            Items {
                doc: self.doc,
                at: 0,
                end: 0,
            }
        }
    }

    /// The first item of a list when it is an atom: the list's name, as in
    /// `(pol 1 2 3)`.
    #[inline]
    pub fn head(&self) -> Option<&'a [u8]> {
        self.items().next().and_then(|s| s.atom())
    }

    /// The `i`-th item of a list.
    pub fn get(&self, i: usize) -> Option<Sexp<'a>> {
        self.items().nth(i)
    }

    /// The first item that is a list named `name`.
    pub fn find(&self, name: &[u8]) -> Option<Sexp<'a>> {
        self.items().find(|s| s.head() == Some(name))
    }

    /// The numbers after the name of a list, as in `(p 1 2 3)` → `[1, 2, 3]`;
    /// `None` unless there are exactly `N` and all are numbers.
    pub fn numbers<const N: usize>(&self) -> Option<[f64; N]> {
        let mut out = [0.0; N];
        let mut it = self.items().skip(1);
        for o in &mut out {
            *o = it.next()?.f64()?;
        }
        it.next().is_none().then_some(out)
    }
}

/// Items of a list (or the top level of a message), in order.
#[derive(Clone)]
pub struct Items<'a> {
    doc: Doc<'a>,
    at: u32,
    end: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = Sexp<'a>;

    #[inline]
    fn next(&mut self) -> Option<Sexp<'a>> {
        if self.at >= self.end {
            return None;
        }
        let s = Sexp {
            doc: self.doc,
            at: self.at,
        };
        self.at = self.doc.nodes[self.at as usize].next;
        Some(s)
    }
}

/// Powers of ten exactly representable as `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// Reads a number as the servers write it (`-0.0017`, `27.5`, `3`,
/// `-8.74228e-08`, `nan`). Plain decimals of at most 19 characters whose
/// digits fit 2⁵³ are
/// computed as digits ÷ 10ᵏ, both exact, so the one rounding is the
/// division's: the same value as the standard library's parser, much
/// faster. Anything else goes to `str::parse`.
#[inline]
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut mantissa: u64 = 0;
    let mut frac_digits: usize = 0;
    let mut seen_dot = false;
    let mut n_digits = 0usize;
    let mut plain = !digits.is_empty() && digits.len() <= 19;
    if plain {
        for &c in digits {
            match c {
                b'0'..=b'9' => {
                    mantissa = mantissa * 10 + u64::from(c - b'0');
                    n_digits += 1;
                    if seen_dot {
                        frac_digits += 1;
                    }
                }
                b'.' if !seen_dot => seen_dot = true,
                _ => {
                    plain = false;
                    break;
                }
            }
        }
    }
    if plain && n_digits > 0 && mantissa < (1u64 << 53) && frac_digits < POW10.len() {
        let v = mantissa as f64 / POW10[frac_digits];
        return Some(if neg { -v } else { v });
    }
    std::str::from_utf8(s).ok()?.parse::<f64>().ok()
}

/// Lines of a buffer with their 1-based numbers and byte offsets, without
/// the line break (`\n` or `\r\n`).
pub fn lines(buf: &[u8]) -> impl Iterator<Item = (usize, u64, &[u8])> {
    let mut offset = 0usize;
    buf.split(|&b| b == b'\n').enumerate().filter_map(move |(i, l)| {
        let at = offset;
        offset += l.len() + 1;
        if at >= buf.len() && l.is_empty() {
            return None;
        }
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        Some((i + 1, at as u64, l))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_number_and_place_each_line() {
        let got: Vec<_> = lines(b"a\r\nbb\n\nc").collect();
        assert_eq!(
            got,
            [
                (1, 0, &b"a"[..]),
                (2, 3, &b"bb"[..]),
                (3, 6, &b""[..]),
                (4, 7, &b"c"[..])
            ]
        );
        assert_eq!(lines(b"a\n").count(), 1);
        assert_eq!(lines(b"").count(), 0);
    }

    fn render(s: Sexp<'_>) -> String {
        match s.atom() {
            Some(a) => String::from_utf8_lossy(a).into_owned(),
            None => {
                let inner: Vec<String> = s.items().map(render).collect();
                format!("({})", inner.join(" "))
            }
        }
    }

    fn parse_all(src: &str) -> Result<Vec<String>, SyntaxError> {
        let mut p = Parser::new();
        let doc = p.parse(src.as_bytes())?;
        Ok(doc.items().map(render).collect())
    }

    #[test]
    fn parses_nested_lists_and_atoms() {
        assert_eq!(
            parse_all("(time (now 27.03))(GS (t 18.74)(pm PlayOn)) x").unwrap(),
            ["(time (now 27.03))", "(GS (t 18.74) (pm PlayOn))", "x"]
        );
        assert_eq!(parse_all("  \n ").unwrap(), Vec::<String>::new());
        assert_eq!(parse_all("()(())").unwrap(), ["()", "(())"]);
        assert_eq!(
            parse_all("(load \"models/a b.obj\")(x\"(\")").unwrap(),
            ["(load models/a b.obj)", "(x ()"]
        );
    }

    #[test]
    fn navigation_helpers() {
        let mut p = Parser::new();
        let doc = p
            .parse(b"(See (B (pol 8.51 -0.21 -0.17)) (P (team A) (id 3)))")
            .unwrap();
        let see = doc.items().next().unwrap();
        assert_eq!(see.head(), Some(&b"See"[..]));
        let b = see.find(b"B").unwrap();
        assert_eq!(b.find(b"pol").unwrap().numbers::<3>(), Some([8.51, -0.21, -0.17]));
        assert_eq!(b.find(b"pol").unwrap().numbers::<2>(), None);
        let pl = see.find(b"P").unwrap();
        assert_eq!(
            pl.find(b"id").and_then(|i| i.get(1)).and_then(|v| v.u32()),
            Some(3)
        );
        assert_eq!(pl.offset(), 32);
        assert!(see.find(b"nothing").is_none());
        assert_eq!(see.get(1).unwrap().text(), b"(B (pol 8.51 -0.21 -0.17))");
    }

    #[test]
    fn errors_name_the_offset() {
        let err = |s: &str| parse_all(s).unwrap_err();
        assert_eq!(
            err("(a (b)"),
            SyntaxError {
                offset: 0,
                kind: SyntaxErrorKind::Unclosed
            }
        );
        assert_eq!(err("(a))").offset, 3);
        assert_eq!(err("(a \"b)").kind, SyntaxErrorKind::UnterminatedQuote);
        let mut p = Parser::with_limits(Limits {
            max_depth: 3,
            max_nodes: 5,
        });
        assert_eq!(p.parse(b"((()))").unwrap().node_count(), 3);
        assert_eq!(
            p.parse(b"(((())))").unwrap_err().kind,
            SyntaxErrorKind::TooDeep(3)
        );
        assert_eq!(
            p.parse(b"a b c d e f").unwrap_err().kind,
            SyntaxErrorKind::TooManyNodes(5)
        );
        assert!(err("(a))").to_string().contains("byte 3"));
    }

    #[test]
    fn numbers_match_the_standard_parser() {
        for s in [
            "0",
            "-0.0",
            "1.0000",
            "-27.5000",
            "0.1097",
            "27.03",
            "1795500898.720480",
            "-8.74228e-08",
            "1e3",
            "12345678901234567890",
            "0.30000000000000004",
            "inf",
            "-nan",
            "3.",
            ".5",
            "+2",
        ] {
            let ours = parse_f64(s.as_bytes());
            let std = s.parse::<f64>().ok();
            assert_eq!(
                ours.map(f64::to_bits),
                std.map(f64::to_bits),
                "{s}: {ours:?} vs {std:?}"
            );
        }
        for bad in ["", "-", ".", "1.2.3", "abc", "1-2", "--1"] {
            assert_eq!(parse_f64(bad.as_bytes()), None, "{bad}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The fast path agrees with the standard library on every plain
        /// decimal.
        #[test]
        fn fast_numbers_are_exact(int in 0u64..10_000_000_000, frac in 0u32..1_000_000, width in 0usize..7, neg: bool) {
            let frac = format!("{frac:06}");
            let s = format!("{}{int}.{}", if neg { "-" } else { "" }, &frac[..width]);
            let s = s.trim_end_matches('.');
            proptest::prop_assert_eq!(
                parse_f64(s.as_bytes()).map(f64::to_bits),
                s.parse::<f64>().ok().map(f64::to_bits)
            );
        }

        /// Random bytes parse or fail with an offset inside the input, and
        /// what parses prints back to the same token sequence.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(
            proptest::sample::select(b"(() )\"ab1.-\n".to_vec()), 0..300)) {
            let mut p = Parser::with_limits(Limits { max_depth: 8, max_nodes: 100 });
            match p.parse(&bytes) {
                Ok(doc) => {
                    let mut total = 0;
                    fn count(s: Sexp<'_>, total: &mut usize) {
                        *total += 1;
                        for c in s.items() {
                            count(c, total);
                        }
                    }
                    for s in doc.items() {
                        count(s, &mut total);
                    }
                    proptest::prop_assert_eq!(total, doc.node_count());
                }
                Err(e) => proptest::prop_assert!(e.offset <= bytes.len()),
            }
        }
    }
}
