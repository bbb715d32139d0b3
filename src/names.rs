//! Names: how option values are spelled, and how feature names are quoted.
//!
//! The bottom of the crate (it imports nothing from it), so that every layer
//! can use it:
//!
//! - [`OptionName`]: the one description of an option type's names, from
//!   which its `FromStr` and `Display` come, and [`ParseNameError`], the error
//!   of every such `FromStr`. The option types are
//!   [`crate::frame::Framing`], [`crate::frame::ErrorPolicy`],
//!   [`crate::io::Compression`], [`crate::index::IndexFormat`],
//!   [`crate::view::PayloadKind`], the order modes and tails; [`Auto`] adds
//!   `auto` (detect) to any of them. The command line parses through these.
//! - [`write_json_string`], [`quoted`] and [`push_quoted`]: a name (any bytes)
//!   as a JSON string literal, the way messages and JSON output show it.
//!
//! ```
//! use recordwire::frame::Framing;
//! use recordwire::names::{Auto, OptionName};
//!
//! assert_eq!("ofrecord".parse::<Framing>(), Ok(Framing::OfRecord));
//! assert_eq!(Framing::OfRecord.to_string(), "ofrecord");
//! assert_eq!(Framing::names(), ["tfrecord", "ofrecord"]);
//! let err = "csv".parse::<Framing>().unwrap_err();
//! assert_eq!(err.to_string(), "unknown framing `csv` (expected one of: tfrecord, ofrecord)");
//! assert_eq!("auto".parse::<Auto<Framing>>(), Ok(Auto::Detect));
//! assert_eq!("tfrecord".parse::<Auto<Framing>>().map(Auto::get), Ok(Some(Framing::TfRecord)));
//! ```
//!
//! ```
//! use recordwire::names::quoted;
//!
//! assert_eq!(quoted(b"image/encoded"), r#""image/encoded""#);
//! assert_eq!(quoted(b"tab\there"), r#""tab\there""#);
//! // Bytes that are not UTF-8 are written as lone surrogates.
//! assert_eq!(quoted(b"\xff"), r#""\udcff""#);
//! ```

/// An option type whose values have names (the command line's spellings).
///
/// Implementing it (with [`option_names!`](crate::option_names)) gives the
/// type its `FromStr` (a [`ParseNameError`] listing the names for any other
/// string) and its `Display` (the name).
pub trait OptionName: Copy + 'static {
    /// What the option is called in messages (`framing`, `compression`, …).
    const WHAT: &'static str;
    /// Every value, in the order the names are listed.
    const ALL: &'static [Self];
    /// Other spellings that parse too, with their value (not listed).
    const ALIASES: &'static [(&'static str, Self)] = &[];

    /// The name of this value.
    fn name(self) -> &'static str;

    /// Every name, in the order of [`ALL`](Self::ALL).
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.name()).collect()
    }

    /// The value named `s` (a name or an alias).
    fn from_name(s: &str) -> Result<Self, ParseNameError> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name() == s)
            .or_else(|| Self::ALIASES.iter().find(|(a, _)| *a == s).map(|(_, v)| *v))
            .ok_or_else(|| ParseNameError::new(Self::WHAT, s, Self::names().join(", ")))
    }
}

/// Implements `FromStr` and `Display` for option types through their
/// [`OptionName`] implementation.
#[macro_export]
#[doc(hidden)]
macro_rules! option_names {
    ($($t:ty),+ $(,)?) => {$(
        impl ::std::str::FromStr for $t {
            type Err = $crate::names::ParseNameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <$t as $crate::names::OptionName>::from_name(s)
            }
        }

        impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::names::OptionName::name(*self))
            }
        }
    )+};
}

/// An option that can also be left to detection: `auto`, or one of `T`'s
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Auto<T> {
    /// `auto`: detect it.
    #[default]
    Detect,
    /// This value.
    Use(T),
}

impl<T> Auto<T> {
    /// The value, `None` for [`Auto::Detect`].
    pub fn get(self) -> Option<T> {
        match self {
            Auto::Detect => None,
            Auto::Use(v) => Some(v),
        }
    }
}

impl<T: OptionName> Auto<T> {
    /// `auto`, then every name of `T`.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["auto"];
        names.extend(T::names());
        names
    }
}

impl<T: OptionName> std::str::FromStr for Auto<T> {
    type Err = ParseNameError;
    fn from_str(s: &str) -> Result<Self, ParseNameError> {
        if s == "auto" {
            return Ok(Auto::Detect);
        }
        T::from_name(s)
            .map(Auto::Use)
            .map_err(|_| ParseNameError::new(T::WHAT, s, Self::names().join(", ")))
    }
}

impl<T: OptionName> std::fmt::Display for Auto<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Auto::Detect => "auto",
            Auto::Use(v) => v.name(),
        })
    }
}

/// A name that is not one of the accepted names of an option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{got}` (expected one of: {expected})")]
pub struct ParseNameError {
    what: &'static str,
    got: String,
    expected: String,
}

impl ParseNameError {
    /// `got` is not a name of the option `what`, whose names are `expected`
    /// (comma-separated).
    pub fn new(what: &'static str, got: &str, expected: impl Into<String>) -> Self {
        ParseNameError {
            what,
            got: got.to_owned(),
            expected: expected.into(),
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

/// `word` after its indefinite article, as messages write a type's name:
/// `an int64_list`, `a float_list`.
///
/// ```
/// use recordwire::names::with_article;
///
/// assert_eq!(with_article("int64_list"), "an int64_list");
/// assert_eq!(with_article("bytes_list"), "a bytes_list");
/// ```
pub fn with_article(word: &str) -> String {
    let vowel = word
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {word}", if vowel { "an" } else { "a" })
}

/// A name as a JSON string literal (for messages): as
/// [`write_json_string`], with DEL and the C1 controls escaped too (JSON
/// allows them raw, but a terminal shows nothing for them).
pub fn quoted(name: &[u8]) -> String {
    let mut v = Vec::new();
    write_json_string(&mut v, name);
    // Escaping leaves only ASCII and the valid UTF-8 of `name`.
    let text = String::from_utf8_lossy(&v);
    if !text.chars().any(|c| c.is_control()) {
        return text.into_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
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
