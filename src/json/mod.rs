//! Records as JSON, following protobuf's canonical JSON mapping with the
//! original field names (docs/FORMAT.md §5): what
//! `json_format.MessageToDict(msg, preserving_proto_field_name=True)` gives.
//!
//! - int64 values are strings, int32 values numbers, bytes standard base64;
//! - floats and doubles are the shortest decimal that reads back to the same
//!   value, always with a fraction or an exponent (`1.0`, `-0.0`, `1e-45`), and
//!   `"NaN"`, `"Infinity"`, `"-Infinity"` as strings;
//! - an empty list is `{}`, a feature with no kind is `{}`, and a record with
//!   no features is `{}`;
//! - a map key that appears twice is printed once, with its last value;
//! - non-ASCII text is written as UTF-8, not escaped. A feature name that is
//!   not valid UTF-8 (possible in OFRecord, which is proto2) is written
//!   losslessly in the *surrogate-escape* form of Python's PEP 383: each byte
//!   that is not part of a valid UTF-8 sequence becomes the escape `\udcXX`
//!   (`XX` = the byte, `80` to `ff`). Valid UTF-8 never yields a lone
//!   surrogate, so the form is unambiguous; in Python,
//!   `name.encode("utf-8", "surrogateescape")` gives the bytes back.
//!
//! The printers append to a caller-owned `Vec<u8>`, so a loop that reuses one
//! buffer does not allocate per record once the buffer has grown.
//!
//! ```
//! use recordwire::json;
//! use recordwire::view::ExampleRef;
//!
//! // Example { features { "label": int64_list [7] } }
//! let msg = [0x0a, 0x10, 0x0a, 0x0e, 0x0a, 0x05, b'l', b'a', b'b', b'e', b'l',
//!            0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x07];
//! let mut out = Vec::new();
//! json::write_example(&mut out, ExampleRef::parse(&msg, 0)?, None)?;
//! assert_eq!(out, br#"{"features":{"feature":{"label":{"int64_list":{"value":["7"]}}}}}"#);
//! # Ok::<(), recordwire::DecodeError>(())
//! ```

pub mod read;

use base64::Engine as _;

use crate::view::PayloadRef;
use crate::view::{
    Element, ExampleRef, FeatureRef, FeaturesRef, ListRef, NumList, OfRecordRef, PayloadKind,
    SequenceExampleRef,
};
use crate::wire::DecodeError;

/// Which features to print: `None` prints all.
pub type FeatureFilter<'f> = Option<&'f [Vec<u8>]>;

fn wanted(filter: FeatureFilter<'_>, name: &[u8]) -> bool {
    filter.is_none_or(|names| names.iter().any(|n| n == name))
}

pub use crate::names::write_json_string as write_str_bytes;

/// A float or double as docs/FORMAT.md §5.2 wants it.
trait JsonFloat: Copy + std::fmt::Debug {
    fn special(self) -> Option<&'static str>;
    /// Whether `text` reads back to this value the way protobuf's JSON
    /// parsers read it (as a double, then rounded to the field's type).
    fn reads_back(self, text: &[u8]) -> bool;
    /// The value in exponent form with `digits` digits after the point.
    fn exp_form(self, digits: usize) -> String;
}

fn parse_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

impl JsonFloat for f32 {
    fn special(self) -> Option<&'static str> {
        special(self as f64)
    }
    fn reads_back(self, text: &[u8]) -> bool {
        parse_f64(text).is_some_and(|d| (d as f32).to_bits() == self.to_bits())
    }
    fn exp_form(self, digits: usize) -> String {
        format!("{self:.digits$e}")
    }
}

impl JsonFloat for f64 {
    fn special(self) -> Option<&'static str> {
        special(self)
    }
    fn reads_back(self, text: &[u8]) -> bool {
        parse_f64(text).is_some_and(|d| d.to_bits() == self.to_bits())
    }
    fn exp_form(self, digits: usize) -> String {
        format!("{self:.digits$e}")
    }
}

fn special(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("\"NaN\"")
    } else if v == f64::INFINITY {
        Some("\"Infinity\"")
    } else if v == f64::NEG_INFINITY {
        Some("\"-Infinity\"")
    } else {
        None
    }
}

fn write_float<T: JsonFloat>(out: &mut Vec<u8>, v: T) {
    use std::io::Write as _;
    match v.special() {
        Some(s) => out.extend_from_slice(s.as_bytes()),
        None => {
            let start = out.len();
            // `Debug` prints the shortest representation that reads back to
            // the same value, with `.0` or an exponent: `1.0`, `-0.0`, `1e-45`.
            let _ = write!(out, "{v:?}");
            if !v.reads_back(&out[start..]) {
                // Protobuf's parsers read a float as a double first, then round
                // to float: for the rare float whose shortest form rounds wrong
                // that way, print more digits (as Python's ToShortestFloat does).
                for digits in 1..=9 {
                    out.truncate(start);
                    let _ = write!(out, "{}", v.exp_form(digits));
                    if v.reads_back(&out[start..]) {
                        break;
                    }
                }
            }
        }
    }
}

fn write_num_list<T: Element>(
    out: &mut Vec<u8>,
    list: &NumList<'_, T>,
    mut each: impl FnMut(&mut Vec<u8>, T),
) -> Result<(), DecodeError> {
    let mut first = true;
    for v in list.iter() {
        let v = v?;
        if first {
            out.extend_from_slice(b"{\"value\":[");
            first = false;
        } else {
            out.push(b',');
        }
        each(out, v);
    }
    out.extend_from_slice(if first { b"{}" } else { b"]}" });
    Ok(())
}

/// Appends one `Feature` as JSON: `{"int64_list":{"value":["7"]}}`, `{}` for no kind.
pub fn write_feature(out: &mut Vec<u8>, feature: FeatureRef<'_>) -> Result<(), DecodeError> {
    use std::io::Write as _;
    let Some(list) = feature.list()? else {
        out.extend_from_slice(b"{}");
        return Ok(());
    };
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(list.kind().name().as_bytes());
    out.extend_from_slice(b"\":");
    match list {
        ListRef::Bytes(l) => {
            let mut first = true;
            for v in l.iter() {
                let v = v?;
                out.extend_from_slice(if first { b"{\"value\":[\"" } else { b",\"" });
                first = false;
                let start = out.len();
                let n = base64::encoded_len(v.len(), true).unwrap_or(0);
                out.resize(start + n, 0);
                let written = base64::engine::general_purpose::STANDARD
                    .encode_slice(v, &mut out[start..])
                    .unwrap_or(0);
                out.truncate(start + written);
                out.push(b'"');
            }
            out.extend_from_slice(if first { b"{}" } else { b"]}" });
        }
        ListRef::Float(l) => write_num_list(out, &l, write_float)?,
        ListRef::Double(l) => write_num_list(out, &l, write_float)?,
        ListRef::Int32(l) => write_num_list(out, &l, |o, v| {
            let _ = write!(o, "{v}");
        })?,
        ListRef::Int64(l) => write_num_list(out, &l, |o, v| {
            let _ = write!(o, "\"{v}\"");
        })?,
    }
    out.push(b'}');
    Ok(())
}

/// Appends the `"feature":{...}` member for a features map, unless it would
/// be empty; returns whether anything was written.
fn write_feature_map(
    out: &mut Vec<u8>,
    features: FeaturesRef<'_>,
    filter: FeatureFilter<'_>,
) -> Result<bool, DecodeError> {
    let mut first = true;
    for f in features.iter() {
        let f = f?;
        if !wanted(filter, f.name()) {
            continue;
        }
        out.extend_from_slice(if first { b"\"feature\":{" } else { b"," });
        first = false;
        write_str_bytes(out, f.name());
        out.push(b':');
        write_feature(out, f.feature)?;
    }
    if !first {
        out.push(b'}');
    }
    Ok(!first)
}

/// Appends a tf.Example as one JSON object (no newline).
pub fn write_example(
    out: &mut Vec<u8>,
    example: ExampleRef<'_>,
    filter: FeatureFilter<'_>,
) -> Result<(), DecodeError> {
    if !example.has_features()? {
        out.extend_from_slice(b"{}");
        return Ok(());
    }
    out.extend_from_slice(b"{\"features\":{");
    write_feature_map(out, example.features(), filter)?;
    out.extend_from_slice(b"}}");
    Ok(())
}

/// Appends an OFRecord as one JSON object (no newline).
pub fn write_ofrecord(
    out: &mut Vec<u8>,
    record: OfRecordRef<'_>,
    filter: FeatureFilter<'_>,
) -> Result<(), DecodeError> {
    out.push(b'{');
    write_feature_map(out, record.features(), filter)?;
    out.push(b'}');
    Ok(())
}

/// Appends a tf.SequenceExample as one JSON object (no newline). The filter
/// applies to context features and feature lists alike.
pub fn write_sequence_example(
    out: &mut Vec<u8>,
    record: SequenceExampleRef<'_>,
    filter: FeatureFilter<'_>,
) -> Result<(), DecodeError> {
    let (has_context, has_lists) = record.has_parts()?;
    out.push(b'{');
    if has_context {
        out.extend_from_slice(b"\"context\":{");
        write_feature_map(out, record.context(), filter)?;
        out.push(b'}');
    }
    if has_lists {
        if has_context {
            out.push(b',');
        }
        out.extend_from_slice(b"\"feature_lists\":{");
        let mut first = true;
        for l in record.feature_lists().iter() {
            let l = l?;
            if !wanted(filter, l.name()) {
                continue;
            }
            out.extend_from_slice(if first { b"\"feature_list\":{" } else { b"," });
            first = false;
            write_str_bytes(out, l.name());
            out.push(b':');
            let mut first_f = true;
            for f in l.list.iter() {
                let f = f?;
                out.extend_from_slice(if first_f { b"{\"feature\":[" } else { b"," });
                first_f = false;
                write_feature(out, f)?;
            }
            out.extend_from_slice(if first_f { b"{}" } else { b"]}" });
        }
        if !first {
            out.push(b'}');
        }
        out.push(b'}');
    }
    out.push(b'}');
    Ok(())
}

/// Appends a record of any payload kind as one JSON object (no newline),
/// validating it first (`strict` as docs/FORMAT.md §3.6). `raw` payloads print as
/// `{"raw":"<base64>"}`.
pub fn write_record(
    out: &mut Vec<u8>,
    kind: PayloadKind,
    bytes: &[u8],
    base: u64,
    strict: bool,
    filter: FeatureFilter<'_>,
) -> Result<(), DecodeError> {
    let options = crate::view::DecodeOptions { strict };
    match PayloadRef::parse_with(kind, bytes, base, options)? {
        PayloadRef::Example(v) => write_example(out, v, filter),
        PayloadRef::SequenceExample(v) => write_sequence_example(out, v, filter),
        PayloadRef::OfRecord(v) => write_ofrecord(out, v, filter),
        PayloadRef::Raw(bytes) => {
            out.extend_from_slice(b"{\"raw\":\"");
            out.extend_from_slice(
                base64::engine::general_purpose::STANDARD
                    .encode(bytes)
                    .as_bytes(),
            );
            out.extend_from_slice(b"\"}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: &[u8]) -> String {
        let mut out = Vec::new();
        write_str_bytes(&mut out, b);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings() {
        assert_eq!(s(b"plain"), r#""plain""#);
        assert_eq!(s("größe".as_bytes()), "\"größe\"");
        assert_eq!(s(b"a\"b\\c\n\x01"), r#""a\"b\\c\n\u0001""#);
        assert_eq!(s(b"\xffok\xc3"), r#""\udcffok\udcc3""#);
    }

    #[test]
    fn floats() {
        let f = |v: f32| {
            let mut o = Vec::new();
            write_float(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1e-45), "1e-45");
        assert_eq!(f(f32::MAX), "3.4028235e38");
        assert_eq!(f(f32::NAN), "\"NaN\"");
        assert_eq!(f(f32::NEG_INFINITY), "\"-Infinity\"");
        // Shortest is 7.038531e-26, which reads back wrong through a double.
        let tricky = f32::from_bits(0x15ae_43fd);
        assert_eq!(f(tricky), "7.0385307e-26");
        assert_eq!(f(-tricky), "-7.0385307e-26");
        let mut o = Vec::new();
        write_float(&mut o, 5e-324f64);
        assert_eq!(o, b"5e-324");
    }
}
