//! JSON text: any JSON document parsed into a tree of values
//! ([`JsonValue`]) that keeps number literals exact (an int64 is not a
//! double) and accepts lone surrogate escapes in object keys, which
//! serde_json rejects. Below the modules that read meaning into it: the
//! record reader of `pack` and `encode` (`json::read`) and the feature specs
//! of the batch decoder (`batch::Spec::from_json`).
//!
//! ```
//! use recordwire::json::read::{parse_json, JsonValue};
//!
//! let v = parse_json(br#"{"n": 9007199254740993}"#)?;
//! let JsonValue::Object(members) = v else { unreachable!() };
//! assert_eq!(members[0].0, b"n");
//! # Ok::<(), recordwire::json::read::JsonError>(())
//! ```

use std::fmt;

/// Deepest nesting of JSON arrays and objects accepted.
pub const MAX_JSON_DEPTH: usize = 64;

/// A JSON error: what is wrong and where (byte offset in the input, or the
/// path of the field in the message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", JsonErrorText(self))]
pub struct JsonError {
    /// Byte offset in the JSON text, for syntax errors.
    pub offset: Option<usize>,
    /// The field path, for errors of meaning (`features.feature["x"].int64_list.value[2]`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The message of a [`JsonError`].
struct JsonErrorText<'e>(&'e JsonError);

impl fmt::Display for JsonErrorText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        match (e.offset, e.path.is_empty()) {
            (Some(o), _) => write!(f, "invalid JSON at byte {o}: {}", e.message),
            (None, false) => write!(f, "{}: {}", e.path, e.message),
            (None, true) => f.write_str(&e.message),
        }
    }
}

/// A parsed JSON value. Strings are bytes (surrogate escapes decoded to the
/// bytes they stand for); numbers keep their literal text.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string's bytes.
    String(Vec<u8>),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object's members, in order.
    Object(Vec<(Vec<u8>, JsonValue)>),
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

fn syntax(offset: usize, message: impl Into<String>) -> JsonError {
    JsonError {
        offset: Some(offset),
        path: String::new(),
        message: message.into(),
    }
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.pos) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), JsonError> {
        if self.s.get(self.pos) == Some(&b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(syntax(self.pos, format!("expected '{}'", b as char)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<JsonValue, JsonError> {
        self.ws();
        let Some(&c) = self.s.get(self.pos) else {
            return Err(syntax(self.pos, "unexpected end of input"));
        };
        match c {
            b'{' | b'[' if depth >= MAX_JSON_DEPTH => Err(syntax(self.pos, "nested too deeply")),
            b'{' => {
                self.pos += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                    return Ok(JsonValue::Object(members));
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.ws();
                    self.expect(b':')?;
                    let v = self.value(depth + 1)?;
                    members.push((key, v));
                    self.ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(JsonValue::Object(members));
                        }
                        _ => return Err(syntax(self.pos, "expected ',' or '}'")),
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                    return Ok(JsonValue::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(JsonValue::Array(items));
                        }
                        _ => return Err(syntax(self.pos, "expected ',' or ']'")),
                    }
                }
            }
            b'"' => Ok(JsonValue::String(self.string()?)),
            b't' => self.word(b"true", JsonValue::Bool(true)),
            b'f' => self.word(b"false", JsonValue::Bool(false)),
            b'n' => self.word(b"null", JsonValue::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(syntax(
                self.pos,
                format!("unexpected character {:?}", c as char),
            )),
        }
    }

    fn word(&mut self, w: &[u8], v: JsonValue) -> Result<JsonValue, JsonError> {
        if self.s[self.pos..].starts_with(w) {
            self.pos += w.len();
            Ok(v)
        } else {
            Err(syntax(self.pos, "invalid literal"))
        }
    }

    fn number(&mut self) -> Result<JsonValue, JsonError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while p.s.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos > s
        };
        if self.s.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        if self.s.get(self.pos) == Some(&b'0') {
            self.pos += 1;
        } else if !digits(self) {
            return Err(syntax(self.pos, "invalid number"));
        }
        if self.s.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if !digits(self) {
                return Err(syntax(self.pos, "invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.s.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.s.get(self.pos) {
                self.pos += 1;
            }
            if !digits(self) {
                return Err(syntax(self.pos, "invalid number"));
            }
        }
        Ok(JsonValue::Number(
            String::from_utf8_lossy(&self.s[start..self.pos]).into_owned(),
        ))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let h = self
            .s
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| syntax(self.pos, "invalid \\u escape"))?;
        self.pos += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<Vec<u8>, JsonError> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let start = self.pos;
            while let Some(&b) = self.s.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            let chunk = &self.s[start..self.pos];
            if std::str::from_utf8(chunk).is_err() {
                return Err(syntax(start, "string is not valid UTF-8"));
            }
            out.extend_from_slice(chunk);
            match self.s.get(self.pos) {
                None => return Err(syntax(self.pos, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let at = self.pos;
                    self.pos += 1;
                    let e = *self
                        .s
                        .get(self.pos)
                        .ok_or_else(|| syntax(self.pos, "unterminated string"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            let c = match u {
                                0xD800..=0xDBFF => {
                                    if self.s.get(self.pos..self.pos + 2) == Some(b"\\u") {
                                        self.pos += 2;
                                        let lo = self.hex4()?;
                                        if !(0xDC00..=0xDFFF).contains(&lo) {
                                            return Err(syntax(at, "unpaired surrogate"));
                                        }
                                        0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                                    } else {
                                        return Err(syntax(at, "unpaired surrogate"));
                                    }
                                }
                                // PEP 383 surrogate escape: a byte that is not UTF-8.
                                0xDC80..=0xDCFF => {
                                    out.push((u - 0xDC00) as u8);
                                    continue;
                                }
                                0xDC00..=0xDFFF => return Err(syntax(at, "unpaired surrogate")),
                                _ => u,
                            };
                            let ch = char::from_u32(c)
                                .ok_or_else(|| syntax(at, "invalid \\u escape"))?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(syntax(at, "invalid escape")),
                    }
                }
                Some(_) => return Err(syntax(self.pos, "control character in string")),
            }
        }
    }
}

/// Parses one JSON value that must fill `input` (surrounding white space allowed).
pub fn parse_json(input: &[u8]) -> Result<JsonValue, JsonError> {
    let mut p = Parser { s: input, pos: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.pos != input.len() {
        return Err(syntax(p.pos, "trailing characters after the JSON value"));
    }
    Ok(v)
}
