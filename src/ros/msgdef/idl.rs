//! OMG IDL message definitions, as rosidl writes them (`ros2idl` schemas):
//! nested `module`s, `struct`s, `typedef`s (rosidl's `typedef double
//! double__9[9];`), constant modules (skipped), `sequence<T>`,
//! `sequence<T, N>`, `string<N>`, arrays `T name[N]`, annotations
//! (`@default (value=0)`, `@verbatim (…)`) skipped, `#include` lines
//! skipped. A schema concatenates several files, each after a line of `=`
//! and a line `IDL: pkg/msg/Type`; those two lines are dropped and the
//! files read as one. Unions, enums, `wchar` and `long double` are refused.
//!
//! A tokenizer, then a recursive-descent parser over the tokens with its
//! depth bounded (modules nest a few levels, not thousands).

use std::collections::HashMap;
use std::sync::Arc;

use super::{ArrayKind, DefError, FieldDef, FieldType, MAX_FIXED, MsgDef, is_ident, syntax};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    Str,
    Punct(char),
    /// `::`.
    Scope,
}

struct Parser<'t> {
    toks: &'t [(Tok, usize)],
    at: usize,
    top: &'t str,
    scope: Vec<String>,
    typedefs: HashMap<String, (FieldType, ArrayKind)>,
    defs: Vec<MsgDef>,
}

/// How deeply modules may nest.
const MAX_NESTING: usize = 32;

pub(super) fn parse(top: &str, text: &str) -> Result<Vec<MsgDef>, DefError> {
    let toks = tokenize(top, text)?;
    let mut p = Parser {
        toks: &toks,
        at: 0,
        top,
        scope: Vec::new(),
        typedefs: HashMap::new(),
        defs: Vec::new(),
    };
    p.definitions(0)?;
    if p.at < toks.len() {
        return Err(p.err("unexpected `}`"));
    }
    Ok(p.defs)
}

fn tokenize(top: &str, text: &str) -> Result<Vec<(Tok, usize)>, DefError> {
    let mut toks = Vec::new();
    let mut line = 1;
    let mut chars = text.char_indices().peekable();
    let mut at_line_start = true;
    while let Some((_, c)) = chars.next() {
        if c == '\n' {
            line += 1;
            at_line_start = true;
            continue;
        }
        if c.is_whitespace() {
            continue;
        }
        let line_start = std::mem::replace(&mut at_line_start, false);
        // Skipped lines: preprocessor lines, section separators and heads.
        let rest_of_line = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
            let mut s = String::from(c);
            while let Some(&(_, d)) = chars.peek() {
                if d == '\n' {
                    break;
                }
                s.push(d);
                chars.next();
            }
            s
        };
        if line_start && (c == '#' || c == '=' || c == 'I') {
            if c == 'I' {
                // `IDL: pkg/msg/Type`, or an identifier beginning a line.
                let mut look = chars.clone();
                let head: String = std::iter::once(c)
                    .chain(std::iter::from_fn(|| look.next().map(|(_, d)| d)).take(3))
                    .collect();
                if head == "IDL:" {
                    rest_of_line(&mut chars);
                    continue;
                }
            } else {
                let l = rest_of_line(&mut chars);
                let l = l.trim();
                if c == '#' || (l.len() >= 3 && l.bytes().all(|b| b == b'=')) {
                    continue;
                }
                return Err(syntax(top, line, format!("`{l}` is not IDL")));
            }
        }
        match c {
            '/' if chars.peek().map(|p| p.1) == Some('/') => {
                rest_of_line(&mut chars);
            }
            '/' if chars.peek().map(|p| p.1) == Some('*') => {
                chars.next();
                let mut prev = ' ';
                let mut closed = false;
                for (_, d) in chars.by_ref() {
                    if d == '\n' {
                        line += 1;
                    }
                    if prev == '*' && d == '/' {
                        closed = true;
                        break;
                    }
                    prev = d;
                }
                if !closed {
                    return Err(syntax(top, line, "a comment is not closed"));
                }
            }
            '"' => {
                let start = line;
                let mut closed = false;
                while let Some((_, d)) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\n' => line += 1,
                        _ => {}
                    }
                }
                if !closed {
                    return Err(syntax(top, start, "a string is not closed"));
                }
                toks.push((Tok::Str, start));
            }
            ':' if chars.peek().map(|p| p.1) == Some(':') => {
                chars.next();
                toks.push((Tok::Scope, line));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut s = String::from(c);
                while let Some(&(_, d)) = chars.peek() {
                    if !(d.is_ascii_alphanumeric() || d == '_') {
                        break;
                    }
                    s.push(d);
                    chars.next();
                }
                toks.push((Tok::Ident(s), line));
            }
            c if c.is_ascii_digit() => {
                let mut s = String::from(c);
                while let Some(&(_, d)) = chars.peek() {
                    if !(d.is_ascii_alphanumeric() || d == '.' || d == '_') {
                        break;
                    }
                    s.push(d);
                    chars.next();
                }
                toks.push((Tok::Num(s), line));
            }
            c => toks.push((Tok::Punct(c), line)),
        }
    }
    Ok(toks)
}

impl Parser<'_> {
    fn line(&self) -> usize {
        self.toks.get(self.at).or(self.toks.last()).map_or(1, |t| t.1)
    }

    fn err(&self, message: impl Into<String>) -> DefError {
        syntax(self.top, self.line(), message)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn bump(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).map(|t| t.0.clone());
        self.at += 1;
        t
    }

    fn punct(&mut self, c: char) -> Result<(), DefError> {
        match self.bump() {
            Some(Tok::Punct(d)) if d == c => Ok(()),
            t => {
                self.at = self.at.saturating_sub(1);
                Err(self.err(format!("expected `{c}`, found {}", show(t.as_ref()))))
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Result<String, DefError> {
        match self.bump() {
            Some(Tok::Ident(s)) => Ok(s),
            t => {
                self.at = self.at.saturating_sub(1);
                Err(self.err(format!("expected a name, found {}", show(t.as_ref()))))
            }
        }
    }

    fn number(&mut self) -> Result<usize, DefError> {
        match self.bump() {
            Some(Tok::Num(s)) => match s.parse::<usize>() {
                Ok(n) if n <= MAX_FIXED => Ok(n),
                _ => Err(self.err(format!("`{s}` is not a length"))),
            },
            t => {
                self.at = self.at.saturating_sub(1);
                Err(self.err(format!("expected a length, found {}", show(t.as_ref()))))
            }
        }
    }

    /// Skips annotations: `@name`, `@a::b`, each with an optional
    /// parenthesised argument list.
    fn annotations(&mut self) -> Result<(), DefError> {
        while self.eat('@') {
            self.ident()?;
            while self.peek() == Some(&Tok::Scope) {
                self.at += 1;
                self.ident()?;
            }
            if self.eat('(') {
                let mut depth = 1usize;
                while depth > 0 {
                    match self.bump() {
                        Some(Tok::Punct('(')) => depth += 1,
                        Some(Tok::Punct(')')) => depth -= 1,
                        Some(_) => {}
                        None => return Err(self.err("an annotation is not closed")),
                    }
                }
            }
        }
        Ok(())
    }

    /// Definitions up to a `}` (left unread) or the end.
    fn definitions(&mut self, depth: usize) -> Result<(), DefError> {
        if depth > MAX_NESTING {
            return Err(self.err("modules nested too deeply"));
        }
        loop {
            self.annotations()?;
            let Some(t) = self.peek().cloned() else {
                return Ok(());
            };
            match t {
                Tok::Punct('}') => return Ok(()),
                Tok::Punct(';') => self.at += 1,
                Tok::Ident(k) if k == "module" => {
                    self.at += 1;
                    let name = self.ident()?;
                    self.punct('{')?;
                    self.scope.push(name);
                    self.definitions(depth + 1)?;
                    self.scope.pop();
                    self.punct('}')?;
                    self.eat(';');
                }
                Tok::Ident(k) if k == "struct" => {
                    self.at += 1;
                    self.structure()?;
                }
                Tok::Ident(k) if k == "typedef" => {
                    self.at += 1;
                    let (ty, array) = self.type_spec()?;
                    let name = self.ident()?;
                    let array = self.dims(array)?;
                    self.punct(';')?;
                    let mut full = self.scope.clone();
                    full.push(name);
                    self.typedefs.insert(full.join("::"), (ty, array));
                }
                Tok::Ident(k) if k == "const" => {
                    while !matches!(self.bump(), Some(Tok::Punct(';')) | None) {}
                }
                Tok::Ident(k) => {
                    return Err(DefError::Unsupported(format!(
                        "IDL `{k}` (definition of {}, line {})",
                        self.top,
                        self.line()
                    )));
                }
                t => return Err(self.err(format!("unexpected {}", show(Some(&t))))),
            }
        }
    }

    fn structure(&mut self) -> Result<(), DefError> {
        let name = self.ident()?;
        let mut full = self.scope.clone();
        full.push(name);
        let full = super::normalise(&full.join("::"));
        self.punct('{')?;
        let mut fields: Vec<FieldDef> = Vec::new();
        loop {
            self.annotations()?;
            if self.eat('}') {
                break;
            }
            let (ty, array) = self.type_spec()?;
            loop {
                self.annotations()?;
                let field = self.ident()?;
                let array = self.dims(array)?;
                if fields.iter().any(|f| *f.name == *field) {
                    return Err(self.err(format!("field `{field}` twice")));
                }
                fields.push(FieldDef {
                    name: field.into(),
                    ty: ty.clone(),
                    array,
                });
                if !self.eat(',') {
                    break;
                }
            }
            self.punct(';')?;
        }
        self.punct(';')?;
        super::drop_placeholder(&mut fields);
        self.defs.push(MsgDef {
            name: full.into(),
            fields,
        });
        Ok(())
    }

    /// A declarator's `[N]`, on a type that is `array` already.
    fn dims(&mut self, array: ArrayKind) -> Result<ArrayKind, DefError> {
        if !self.eat('[') {
            return Ok(array);
        }
        let n = self.number()?;
        self.punct(']')?;
        if n == 0 {
            return Err(self.err("an array of no elements"));
        }
        if array != ArrayKind::Single || self.peek() == Some(&Tok::Punct('[')) {
            return Err(DefError::Unsupported(format!(
                "arrays of arrays or of sequences (definition of {}, line {})",
                self.top,
                self.line()
            )));
        }
        Ok(ArrayKind::Fixed(n))
    }

    fn type_spec(&mut self) -> Result<(FieldType, ArrayKind), DefError> {
        let first = match self.bump() {
            Some(Tok::Ident(s)) => s,
            Some(Tok::Scope) => {
                self.at -= 1;
                String::new()
            }
            t => {
                self.at = self.at.saturating_sub(1);
                return Err(self.err(format!("expected a type, found {}", show(t.as_ref()))));
            }
        };
        let single = |t| Ok((t, ArrayKind::Single));
        match first.as_str() {
            "sequence" => {
                self.punct('<')?;
                if self.peek() == Some(&Tok::Ident("sequence".into())) {
                    return Err(DefError::Unsupported(format!(
                        "sequences of sequences (definition of {}, line {})",
                        self.top,
                        self.line()
                    )));
                }
                let (ty, array) = self.type_spec()?;
                if array != ArrayKind::Single {
                    return Err(DefError::Unsupported(format!(
                        "sequences of arrays (definition of {}, line {})",
                        self.top,
                        self.line()
                    )));
                }
                let kind = if self.eat(',') {
                    ArrayKind::Bounded(self.number()?)
                } else {
                    ArrayKind::Unbounded
                };
                self.punct('>')?;
                Ok((ty, kind))
            }
            "string" | "wstring" => {
                if self.eat('<') {
                    self.number()?;
                    self.punct('>')?;
                }
                single(if first == "string" {
                    FieldType::String
                } else {
                    FieldType::WString
                })
            }
            "boolean" => single(FieldType::Bool),
            "octet" => single(FieldType::Byte),
            "char" => single(FieldType::Char),
            "int8" => single(FieldType::Int8),
            "uint8" => single(FieldType::UInt8),
            "int16" | "short" => single(FieldType::Int16),
            "uint16" => single(FieldType::UInt16),
            "int32" => single(FieldType::Int32),
            "uint32" => single(FieldType::UInt32),
            "int64" => single(FieldType::Int64),
            "uint64" => single(FieldType::UInt64),
            "float" => single(FieldType::Float32),
            "double" => single(FieldType::Float64),
            "long" => {
                if self.peek() == Some(&Tok::Ident("long".into())) {
                    self.at += 1;
                    single(FieldType::Int64)
                } else if self.peek() == Some(&Tok::Ident("double".into())) {
                    Err(DefError::Unsupported(format!(
                        "IDL `long double` (definition of {})",
                        self.top
                    )))
                } else {
                    single(FieldType::Int32)
                }
            }
            "unsigned" => match self.ident()?.as_str() {
                "short" => single(FieldType::UInt16),
                "long" => {
                    if self.peek() == Some(&Tok::Ident("long".into())) {
                        self.at += 1;
                        single(FieldType::UInt64)
                    } else {
                        single(FieldType::UInt32)
                    }
                }
                other => Err(self.err(format!("`unsigned {other}` is not a type"))),
            },
            "wchar" => Err(DefError::Unsupported(format!(
                "IDL `wchar` (definition of {})",
                self.top
            ))),
            _ => self.named(first),
        }
    }

    /// A (possibly scoped) name whose first part (if any) is read: a
    /// typedef or a message.
    fn named(&mut self, first: String) -> Result<(FieldType, ArrayKind), DefError> {
        let mut parts = Vec::new();
        if !first.is_empty() {
            parts.push(first);
        }
        while self.peek() == Some(&Tok::Scope) {
            self.at += 1;
            parts.push(self.ident()?);
        }
        if parts.is_empty() {
            return Err(self.err("expected a type"));
        }
        // Typedefs: looked up from the innermost scope out.
        for k in (0..=self.scope.len()).rev() {
            let mut full = self.scope[..k].to_vec();
            full.extend(parts.iter().cloned());
            if let Some(t) = self.typedefs.get(&full.join("::")) {
                return Ok(t.clone());
            }
        }
        // `Part` is in the current `pkg::msg`, `msg::Part` in the current `pkg`.
        let full = if parts.len() >= 3 {
            parts
        } else {
            let mut f = self.scope[..self.scope.len().min(3 - parts.len())].to_vec();
            f.extend(parts);
            f
        };
        let name = full.join("/");
        if full.len() != 3 || !full.iter().all(|p| is_ident(p)) {
            return Err(self.err(format!("`{}` is not a message type", full.join("::"))));
        }
        Ok((FieldType::Message(Arc::from(name)), ArrayKind::Single))
    }
}

fn show(t: Option<&Tok>) -> String {
    match t {
        None => "the end".into(),
        Some(Tok::Ident(s) | Tok::Num(s)) => format!("`{s}`"),
        Some(Tok::Str) => "a string".into(),
        Some(Tok::Punct(c)) => format!("`{c}`"),
        Some(Tok::Scope) => "`::`".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_IDL: &str = r#"// generated from rosidl_adapter/resource/msg.idl.em
// with input from std_msgs/msg/Header.msg
// generated code does not contain a copyright notice

#include "builtin_interfaces/msg/Time.idl"

module std_msgs {
  module msg {
    @verbatim (language="comment", text=
      "Standard metadata for higher-level stamped data types." "\n"
      "This is generally used to communicate timestamped data.")
    struct Header {
      @verbatim (language="comment", text=
        "Two-integer timestamp that is expressed as seconds and nanoseconds.")
      builtin_interfaces::msg::Time stamp;

      @verbatim (language="comment", text=
        "Transform frame with which this data is associated.")
      string frame_id;
    };
  };
};
"#;

    #[test]
    fn rosidl_header() {
        let defs = parse("std_msgs/msg/Header", HEADER_IDL).unwrap();
        assert_eq!(defs.len(), 1);
        assert_eq!(&*defs[0].name, "std_msgs/msg/Header");
        let f = &defs[0].fields;
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].ty, FieldType::Message("builtin_interfaces/msg/Time".into()));
        assert_eq!(f[1].ty, FieldType::String);
    }

    #[test]
    fn typedefs_sequences_constants_sections() {
        let text = r#"
module pkg {
  module msg {
    typedef double double__9[9];
    module Thing_Constants {
      const uint8 RED = 1;
      const string NAME = "a;b";
    };
    struct Thing {
      double__9 k;
      sequence<pkg::msg::Part> parts;
      sequence<int32, 5> few;
      string<10> short_text;
      @default (value=0)
      uint8 flags, more[4];
      Part one;
      unsigned long long big;
      octet raw[3];
    };
  };
};
================================================================================
IDL: pkg/msg/Part
module pkg { module msg { struct Part { /* a
  comment */ float x; }; }; };
"#;
        let defs = parse("pkg/msg/Thing", text).unwrap();
        assert_eq!(defs.len(), 2);
        let f: Vec<(&str, FieldType, ArrayKind)> = defs[0]
            .fields
            .iter()
            .map(|f| (&*f.name, f.ty.clone(), f.array))
            .collect();
        let part = FieldType::Message("pkg/msg/Part".into());
        assert_eq!(
            f,
            vec![
                ("k", FieldType::Float64, ArrayKind::Fixed(9)),
                ("parts", part.clone(), ArrayKind::Unbounded),
                ("few", FieldType::Int32, ArrayKind::Bounded(5)),
                ("short_text", FieldType::String, ArrayKind::Single),
                ("flags", FieldType::UInt8, ArrayKind::Single),
                ("more", FieldType::UInt8, ArrayKind::Fixed(4)),
                ("one", part, ArrayKind::Single),
                ("big", FieldType::UInt64, ArrayKind::Single),
                ("raw", FieldType::Byte, ArrayKind::Fixed(3)),
            ]
        );
        assert_eq!(&*defs[1].name, "pkg/msg/Part");
    }

    #[test]
    fn bad_idl_is_an_error() {
        for bad in [
            "module a { struct B { int32 x; }",
            "module a { module msg { struct B { wchar c; }; }; };",
            "module a { module msg { union U { }; }; };",
            "module a { module msg { struct B { int32 x[0]; }; }; };",
            "/* open",
            "module a { \"open",
            "}",
        ] {
            assert!(parse("a/msg/B", bad).is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::testing::fuzz_cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// IDL cut short, with characters changed, never panics.
        #[test]
        fn damaged_idl_never_panics(
            cut in 0usize..2000,
            changes in proptest::collection::vec((0usize..2000, "[{}<>;:\\[\\]@(),\"/*a-z0-9 \n=]"), 0..5),
        ) {
            let mut text: Vec<char> = HEADER_IDL.chars().collect();
            for (at, c) in changes {
                let n = text.len();
                text[at % n] = c.chars().next().unwrap_or(' ');
            }
            text.truncate(cut % (text.len() + 1));
            let text: String = text.into_iter().collect();
            let _ = parse("std_msgs/msg/Header", &text);
        }
    }
}
