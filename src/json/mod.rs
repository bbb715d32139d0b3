//! Records as JSON, following protobuf's canonical JSON mapping with the
//! original field names (docs/FORMAT.md §5): what
//! `json_format.MessageToDict(msg, preserving_proto_field_name=True)` gives.
//!
//! - int64 values are strings, int32 values numbers, bytes standard base64;
//! - a float32 is the number protobuf's Python `ToShortestFloat` gives (see
//!   [`to_shortest_float`]): the first of `%.6g`, `%.7g`, `%.8g`, `%.9g` that
//!   reads back as the same float32 (`0.1`, `1.4013e-45`, `356370.12`); a
//!   double is the shortest decimal that reads back to it (`5e-324`). Both
//!   always have a fraction or an exponent (`1.0`, `-0.0`), and NaN and the
//!   infinities are the strings `"NaN"`, `"Infinity"`, `"-Infinity"`;
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

/// The number protobuf's `MessageToDict` gives for a float32 (docs/FORMAT.md
/// §5.2): the value of the first of `%.6g`, `%.7g`, `%.8g`, `%.9g` that reads
/// back as `v`, as a double. This is protobuf's Python `ToShortestFloat`.
///
/// Each candidate has that many significant digits, correctly rounded from the
/// exact value of `v` (ties to even, as C's `printf` and Python's `format`
/// round); it reads back as `v` when the decimal, read as the nearest double
/// and then rounded to the nearest float32, is `v` again, the way protobuf's
/// JSON parsers read it. Nine digits always suffice. Six digits are tried
/// first even where fewer would do, so the result is not always the shortest
/// decimal that reads back: the smallest denormal gives `1.4013e-45`, not
/// `1e-45`.
///
/// NaN and the infinities are returned as they are (widened to `f64`).
/// Shortest formatting of the result (`{:?}`) prints the chosen decimal with
/// its trailing zeros dropped, as the JSON printer does.
///
/// ```
/// use recordwire::json::to_shortest_float;
///
/// assert_eq!(to_shortest_float(0.1), 0.1);
/// assert_eq!(to_shortest_float(f32::from_bits(1)), 1.4013e-45);
/// assert_eq!(to_shortest_float(52277.8125), 52277.812); // a tie, to even
/// assert_eq!(to_shortest_float(f32::MAX), 3.4028235e38);
/// assert_eq!(format!("{:?}", to_shortest_float(16777216.0)), "16777216.0");
/// ```
pub fn to_shortest_float(v: f32) -> f64 {
    use std::io::Write as _;
    let exact = f64::from(v); // every float32 is a double
    if !exact.is_finite() {
        return exact;
    }
    // "-d.dddddddde-45" is 15 bytes; the buffer is on the stack, so that the
    // printer does not allocate per value.
    let mut buf = [0u8; 32];
    let mut rounded = exact;
    for precision in 6..=9 {
        let mut w = &mut buf[..];
        // Rust's `{:.N e}` is correctly rounded from the exact binary value,
        // ties to even, like `printf("%.*g")` and Python's `format`.
        if write!(w, "{exact:.*e}", precision - 1).is_err() {
            break; // cannot happen: 32 bytes are enough
        }
        let len = 32 - w.len();
        let Some(d) = parse_f64(&buf[..len]) else {
            break; // cannot happen: Rust reads what it writes
        };
        rounded = d;
        if (d as f32).to_bits() == v.to_bits() {
            return d;
        }
    }
    // Unreachable: nine digits always read back. Keep the nine-digit value.
    rounded
}

fn parse_f64(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse().ok()
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

/// A double as docs/FORMAT.md §5.2 prints it: the shortest decimal that reads
/// back to it, with a fraction or an exponent (`1.0`, `-0.0`, `5e-324`), which
/// is Python's `repr` but for the spelling of exponents (`1e16`, `1e-5` where
/// Python writes `1e+16`, `1e-05`); NaN and the infinities as JSON strings.
fn write_f64(out: &mut Vec<u8>, v: f64) {
    use std::io::Write as _;
    match special(v) {
        Some(s) => out.extend_from_slice(s.as_bytes()),
        // `Debug` prints the shortest representation that reads back to the
        // same value, with `.0` or an exponent: `1.0`, `-0.0`, `5e-324`; in
        // exponent form below 1e-4 and from 1e16 on, as Python's `repr`.
        None => {
            let _ = write!(out, "{v:?}");
        }
    }
}

/// A float32 as docs/FORMAT.md §5.2 prints it: the double of
/// [`to_shortest_float`], printed as a double is. Its shortest decimal is the
/// `%.Ng` decimal that was chosen, trailing zeros dropped.
fn write_f32(out: &mut Vec<u8>, v: f32) {
    write_f64(out, to_shortest_float(v));
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
        ListRef::Float(l) => write_num_list(out, &l, write_f32)?,
        ListRef::Double(l) => write_num_list(out, &l, write_f64)?,
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

    fn f(v: f32) -> String {
        let mut o = Vec::new();
        write_f32(&mut o, v);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn floats_as_message_to_dict() {
        // What MessageToDict gives (json.dumps of it, but for the exponents'
        // spelling: Python writes 3.4028235e+38 and 9.999999e-05).
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.5), "0.5");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(3.1415927), "3.1415927");
        assert_eq!(f(16777216.0), "16777216.0");
        // Six digits at least, even where fewer read back.
        assert_eq!(f(f32::from_bits(1)), "1.4013e-45");
        assert_eq!(f(f32::from_bits(3)), "4.2039e-45");
        assert_eq!(f(f32::from_bits(0x007f_ffff)), "1.1754942e-38");
        assert_eq!(f(f32::MIN_POSITIVE), "1.1754944e-38");
        assert_eq!(f(f32::MAX), "3.4028235e38");
        assert_eq!(f(f32::MIN), "-3.4028235e38");
        // Exact ties round to even: 356370.125, -2566554.25, -52277.8125.
        assert_eq!(f(356370.125), "356370.12");
        assert_eq!(f(-2566554.25), "-2566554.2");
        assert_eq!(f(-52277.8125), "-52277.812");
        // Fixed form from 1e-4 up to 1e16, as Python's repr of the double.
        assert_eq!(f(1e16), "1e16");
        assert_eq!(
            f(f32::from_bits(1e16f32.to_bits() - 1)),
            "9999999000000000.0"
        );
        assert_eq!(f(1e-4), "0.0001");
        assert_eq!(f(f32::from_bits(1e-4f32.to_bits() - 1)), "9.999999e-5");
        // The shortest digits, 7.038531e-26, read back wrong through a double.
        let tricky = f32::from_bits(0x15ae_43fd);
        assert_eq!(f(tricky), "7.0385307e-26");
        assert_eq!(f(-tricky), "-7.0385307e-26");
        assert_eq!(f(f32::NAN), "\"NaN\"");
        assert_eq!(f(f32::INFINITY), "\"Infinity\"");
        assert_eq!(f(f32::NEG_INFINITY), "\"-Infinity\"");
    }

    #[test]
    fn doubles_shortest() {
        let d = |v: f64| {
            let mut o = Vec::new();
            write_f64(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(d(5e-324), "5e-324");
        assert_eq!(d(0.1), "0.1");
        assert_eq!(d(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(d(-0.0), "-0.0");
        assert_eq!(d(f64::MAX), "1.7976931348623157e308");
        assert_eq!(d(f64::NAN), "\"NaN\"");
    }

    #[test]
    fn every_float32_reads_back_from_its_text() {
        // A sweep with a large odd stride over all bit patterns.
        let mut bits = 0u32;
        for _ in 0..200_000 {
            bits = bits.wrapping_add(0x9e37_79b1);
            let v = f32::from_bits(bits);
            if !v.is_finite() {
                continue;
            }
            let text = f(v);
            let back = text.parse::<f64>().unwrap();
            assert_eq!(back.to_bits(), to_shortest_float(v).to_bits(), "{text}");
            assert_eq!(
                (back as f32).to_bits(),
                bits,
                "{bits:#010x} printed as {text}"
            );
        }
    }
}
