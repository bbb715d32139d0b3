//! Names: how option values are spelled, and how feature names are quoted.
//!
//! The bottom of the crate (it imports nothing from it), so that every layer
//! can use it:
//!
//! - [`ParseNameError`]: the error of the `FromStr` of every option type
//!   ([`crate::frame::Framing`], [`crate::frame::ErrorPolicy`],
//!   [`crate::io::Compression`], [`crate::index::IndexFormat`],
//!   [`crate::view::PayloadKind`], the order modes and tails);
//! - [`write_json_string`], [`quoted`] and [`push_quoted`]: a name (any bytes)
//!   as a JSON string literal, the way messages and JSON output show it.
//!
//! ```
//! use recordwire::names::quoted;
//!
//! assert_eq!(quoted(b"image/encoded"), r#""image/encoded""#);
//! assert_eq!(quoted(b"tab\there"), r#""tab\there""#);
//! // Bytes that are not UTF-8 are written as lone surrogates.
//! assert_eq!(quoted(b"\xff"), r#""\udcff""#);
//! ```

/// A name that is not one of the accepted names of an option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{got}` (expected one of: {expected})")]
pub struct ParseNameError {
    what: &'static str,
    got: String,
    expected: &'static str,
}

impl ParseNameError {
    /// `got` is not a name of the option `what`, whose names are `expected`
    /// (comma-separated).
    pub fn new(what: &'static str, got: &str, expected: &'static str) -> Self {
        ParseNameError {
            what,
            got: got.to_owned(),
            expected,
        }
    }
}

/// Appends `s` as a JSON string (quotes included), escaping what JSON
/// requires and writing invalid UTF-8 bytes as `\udcXX`.
pub fn write_json_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let mut rest = s;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                write_escaped(out, valid);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                // `valid_up_to` marks a valid UTF-8 prefix.
                write_escaped(out, std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len());
                for &b in &after[..bad] {
                    out.extend_from_slice(b"\\udc");
                    out.extend_from_slice(&hex2(b));
                }
                rest = &after[bad..];
            }
        }
    }
    out.push(b'"');
}

/// A name as a JSON string literal (for messages).
pub fn quoted(name: &[u8]) -> String {
    let mut v = Vec::new();
    write_json_string(&mut v, name);
    // Escaping leaves only ASCII and the valid UTF-8 of `name`.
    String::from_utf8_lossy(&v).into_owned()
}

/// Appends `name` as a JSON string literal to `out`.
pub fn push_quoted(out: &mut String, name: &[u8]) {
    out.push_str(&quoted(name));
}

fn hex2(b: u8) -> [u8; 2] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    [HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]
}

fn write_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&hex2(b));
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}
