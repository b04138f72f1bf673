//! The text notation's lexer: tokens (braces, parentheses, `;`, `:`, `,`,
//! bare words, quoted strings with their escapes) with their line, `//`
//! comments and whitespace skipped. The parser ([`super::parse`]) asks for
//! one token at a time.

use crate::ReadError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok<'a> {
    LBrace,
    RBrace,
    LParen,
    RParen,
    Semi,
    Colon,
    Comma,
    Word(&'a str),
    Str(String),
    Eof,
}

impl Tok<'_> {
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::Semi => "';'".into(),
            Tok::Colon => "':'".into(),
            Tok::Comma => "','".into(),
            // Quoted input is cut: a 4 MiB word is not echoed whole.
            Tok::Word(w) => format!("'{}'", crate::summary::shorten(w, 80)),
            Tok::Str(s) => crate::summary::shorten(&format!("{s:?}"), 80),
            Tok::Eof => "the end of the text".into(),
        }
    }
}

/// A token, its line and the text of that line before it (the column is
/// counted only when an error needs it, so long lines stay linear).
#[derive(Clone, Debug)]
pub(super) struct Spanned<'a> {
    pub(super) tok: Tok<'a>,
    pub(super) line: usize,
    /// The byte offset of the token in the text.
    pub(super) pos: usize,
    before: &'a str,
}

impl Spanned<'_> {
    /// The 1-based column, in characters.
    pub(super) fn col(&self) -> usize {
        self.before.chars().count() + 1
    }
}

pub(super) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    line_start: usize,
}

fn is_delim(c: char) -> bool {
    c.is_whitespace() || matches!(c, '{' | '}' | '(' | ')' | ';' | ':' | ',' | '"')
}

impl<'a> Lexer<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        let src = src.strip_prefix('\u{feff}').unwrap_or(src);
        Lexer {
            src,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn col(&self, pos: usize) -> usize {
        self.src[self.line_start..pos].chars().count() + 1
    }

    fn error(&self, pos: usize, message: impl Into<String>) -> ReadError {
        ReadError::Syntax {
            line: self.line,
            column: self.col(pos),
            message: message.into(),
        }
    }

    pub(super) fn next(&mut self) -> Result<Spanned<'a>, ReadError> {
        // Skip whitespace and comments.
        loop {
            let rest = &self.src[self.pos..];
            let Some(c) = rest.chars().next() else { break };
            if c == '\n' {
                self.pos += 1;
                self.line += 1;
                self.line_start = self.pos;
            } else if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else if rest.starts_with("//") {
                self.pos += rest.find('\n').unwrap_or(rest.len());
            } else {
                break;
            }
        }
        let start = self.pos;
        let (line, before) = (self.line, &self.src[self.line_start..start]);
        let rest = &self.src[start..];
        let Some(c) = rest.chars().next() else {
            return Ok(Spanned {
                tok: Tok::Eof,
                line,
                pos: start,
                before,
            });
        };
        let single = match c {
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ';' => Some(Tok::Semi),
            ':' => Some(Tok::Colon),
            ',' => Some(Tok::Comma),
            _ => None,
        };
        let tok = if let Some(t) = single {
            self.pos += 1;
            t
        } else if c == '"' {
            Tok::Str(self.string(start)?)
        } else {
            let len = rest.find(is_delim).unwrap_or(rest.len());
            self.pos += len;
            Tok::Word(&rest[..len])
        };
        Ok(Spanned {
            tok,
            line,
            pos: start,
            before,
        })
    }

    /// The byte offset of the next character to read.
    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    /// Goes back to just after the token `t` (an item's opening brace,
    /// say) to read on from there.
    pub(super) fn back_to_after(&mut self, t: &Spanned<'_>) {
        self.pos = t.pos + 1;
        self.line = t.line;
        self.line_start = t.pos - t.before.len();
    }

    /// Skips to just past the brace that closes the one before the
    /// current position, as the text's braces nest: braces in strings (a
    /// string ends at its closing quote or its line's end) and in `//`
    /// comments do not count. Returns false when the text ends first,
    /// having skipped all of it.
    pub(super) fn skip_to_close(&mut self) -> bool {
        self.skip_until(|depth, c| match c {
            '{' => Some(depth + 1),
            '}' if depth == 1 => None,
            '}' => Some(depth - 1),
            _ => Some(depth),
        })
        .is_some()
    }

    /// Skips to the next brace (not past it) outside strings and
    /// comments; false when the text ends first.
    pub(super) fn skip_to_brace(&mut self) -> bool {
        let found = self.skip_until(|depth, c| if matches!(c, '{' | '}') { None } else { Some(depth) });
        if found.is_some() {
            // Not consumed: the brace is read next.
            self.pos -= 1;
        }
        found.is_some()
    }

    /// Reads characters, keeping the line count, until `step` (given the
    /// depth, starting at 1, and a character outside strings and
    /// comments) says stop; then the position is just past that
    /// character and its offset is returned.
    fn skip_until(&mut self, step: impl Fn(usize, char) -> Option<usize>) -> Option<usize> {
        let mut depth = 1;
        let mut in_string = false;
        while let Some(c) = self.src[self.pos..].chars().next() {
            let at = self.pos;
            self.pos += c.len_utf8();
            match c {
                '\n' => {
                    self.line += 1;
                    self.line_start = self.pos;
                    in_string = false;
                }
                '\\' if in_string => {
                    // An escaped character, whatever it is (not a line break).
                    if let Some(e) = self.src[self.pos..].chars().next().filter(|&e| e != '\n') {
                        self.pos += e.len_utf8();
                    }
                }
                '"' => in_string = !in_string,
                _ if in_string => {}
                '/' if self.src[self.pos..].starts_with('/') => {
                    self.pos += self.src[self.pos..]
                        .find('\n')
                        .unwrap_or(self.src.len() - self.pos);
                }
                c => match step(depth, c) {
                    Some(d) => depth = d,
                    None => return Some(at),
                },
            }
        }
        None
    }

    /// A quoted string starting at `start` (the opening quote).
    fn string(&mut self, start: usize) -> Result<String, ReadError> {
        let mut out = String::new();
        let mut chars = self.src[start + 1..].char_indices();
        loop {
            let Some((i, c)) = chars.next() else {
                return Err(self.error(start, "string is not closed"));
            };
            match c {
                '"' => {
                    self.pos = start + 1 + i + 1;
                    return Ok(out);
                }
                '\\' => {
                    let esc = chars.next().map(|(_, e)| e);
                    match esc {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('\\') => out.push('\\'),
                        Some('"') => out.push('"'),
                        Some('u') => {
                            let rest = chars.as_str();
                            let close = rest.find('}');
                            let code = rest
                                .strip_prefix('{')
                                .zip(close)
                                .and_then(|(_, close)| u32::from_str_radix(&rest[1..close], 16).ok())
                                .and_then(char::from_u32);
                            let (Some(ch), Some(close)) = (code, close) else {
                                return Err(self.error(start + 1 + i, "bad \\u{…} escape in string"));
                            };
                            out.push(ch);
                            for _ in 0..=close {
                                chars.next();
                            }
                        }
                        _ => return Err(self.error(start + 1 + i, "unknown escape in string")),
                    }
                }
                '\n' => return Err(self.error(start, "string is not closed on its line")),
                c => out.push(c),
            }
        }
    }
}
