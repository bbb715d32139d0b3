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

pub(crate) mod num;
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
/// its trailing zeros dropped, which is what the JSON printer writes.
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
    match shortest_decimal(v) {
        Some(d) if d.negative => -d.value,
        Some(d) => d.value,
        None => f64::from(v),
    }
}

/// The decimal `mantissa × 10^exp10` (negated if `negative`) that
/// [`to_shortest_float`] chooses, with `value`, the double nearest its
/// magnitude. The mantissa has at most 9 digits, trailing zeros included
/// (or is 10^9 after a carry).
#[derive(Clone, Copy, Debug)]
struct Decimal {
    negative: bool,
    mantissa: u32,
    exp10: i32,
    value: f64,
}

/// The decimal of [`to_shortest_float`]; `None` for NaN and the infinities.
/// Each candidate is rounded from the exact value in 128-bit integers, or for
/// some of the smallest values by Rust's correctly rounded formatting; nothing
/// is allocated.
fn shortest_decimal(v: f32) -> Option<Decimal> {
    if !v.is_finite() {
        return None;
    }
    let negative = v.is_sign_negative();
    let magnitude = v.abs();
    let mut last = None;
    for digits in 6..=9 {
        let (mantissa, exp10) = match round_digits(magnitude, digits) {
            Some(d) => d,
            None => format_digits(f64::from(magnitude), digits)?,
        };
        let value = nearest_double(mantissa, exp10)?;
        last = Some(Decimal {
            negative,
            mantissa,
            exp10,
            value,
        });
        if (value as f32).to_bits() == magnitude.to_bits() {
            break;
        }
    }
    last // nine digits always read back
}

/// 5^0 to 5^55, the powers of five that fit 128 bits.
const POW5: [u128; 56] = {
    let mut t = [1u128; 56];
    let mut i = 1;
    while i < t.len() {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// `x` (finite, not negative) rounded to `digits` significant digits from its
/// exact value, ties to even: `(n, q)` for `n × 10^q`, `n` of `digits` digits
/// (or `10^digits` when rounding carried over). Computed in 128-bit integers,
/// which suffice for all but some of the smallest values (below about 1e-36);
/// `None` for those.
fn round_digits(x: f32, digits: u32) -> Option<(u32, i32)> {
    use std::cmp::Ordering;
    let bits = x.to_bits();
    let (field, fraction) = (bits >> 23, bits & 0x007f_ffff);
    let (m, e) = if field == 0 {
        (fraction, -149) // denormal
    } else {
        (fraction | 0x0080_0000, field as i32 - 150)
    };
    if m == 0 {
        return Some((0, 0));
    }
    // x = m × 2^e is in [2^top, 2^(top+1)). `first`, the power of ten of its
    // first digit, is guessed from `top`, and corrected below when it is off.
    let top = e + 31 - m.leading_zeros() as i32;
    let mut first = (f64::from(top) * std::f64::consts::LOG10_2).floor() as i32;
    let (lo, hi) = (
        u128::from(10u32.pow(digits - 1)),
        u128::from(10u32.pow(digits)),
    );
    for _ in 0..3 {
        // x × 10^s = m × 5^s × 2^(e + s) = num / den, whose integer part n
        // must have `digits` digits.
        let s = digits as i32 - 1 - first;
        let five = *POW5.get(s.unsigned_abs() as usize)?;
        let (mut num, mut den) = if s >= 0 {
            (u128::from(m).checked_mul(five)?, 1u128)
        } else {
            (u128::from(m), five)
        };
        let two = e + s;
        if two >= 0 {
            if num.leading_zeros() < two.unsigned_abs() {
                return None;
            }
            num <<= two;
        } else {
            den = den.checked_mul(1u128.checked_shl(two.unsigned_abs())?)?;
        }
        let (n, rem) = if den.is_power_of_two() {
            (num >> den.trailing_zeros(), num & (den - 1))
        } else {
            (num / den, num % den)
        };
        if n >= hi {
            first += 1;
        } else if n < lo {
            first -= 1;
        } else {
            let up = match rem.cmp(&(den - rem)) {
                Ordering::Greater => true,
                Ordering::Equal => n % 2 == 1,
                Ordering::Less => false,
            };
            return Some(((n + u128::from(up)) as u32, -s));
        }
    }
    None
}

/// What [`round_digits`] computes, for any `x` (finite, not negative), from
/// Rust's `{:.N e}`, which is correctly rounded from the exact binary value,
/// ties to even, like `printf("%.*g")` and Python's `format`.
fn format_digits(x: f64, digits: u32) -> Option<(u32, i32)> {
    use std::io::Write as _;
    // "d.ddddddddde-45": the buffer is on the stack, so that the printer does
    // not allocate per value.
    let mut buf = [0u8; 32];
    let mut w = &mut buf[..];
    write!(w, "{x:.*e}", digits as usize - 1).ok()?;
    let len = 32 - w.len();
    let text = &buf[..len];
    let e = text.iter().position(|&c| c == b'e')?;
    let mut n = 0u32;
    for &c in text[..e].iter().filter(|&&c| c != b'.') {
        n = n * 10 + u32::from(c - b'0');
    }
    let exp: i32 = std::str::from_utf8(&text[e + 1..]).ok()?.parse().ok()?;
    Some((n, exp - (digits as i32 - 1)))
}

/// The double nearest `n × 10^q`: one correctly rounded multiplication or
/// division of exact doubles where `|q| <= 22` (Clinger's fast path), else
/// Rust's correctly rounded parser.
fn nearest_double(n: u32, q: i32) -> Option<f64> {
    /// 10^0 to 10^22, all exact doubles.
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let k = q.unsigned_abs() as usize;
    if k < POW10.len() {
        let n = f64::from(n);
        return Some(if q >= 0 { n * POW10[k] } else { n / POW10[k] });
    }
    // "{n}e{q}", written without the formatting machinery.
    let mut text = [0u8; 32];
    let mut int = [0u8; 20];
    let n = num::signed_digits(&mut int, i64::from(n));
    text[..n.len()].copy_from_slice(n);
    let mut len = n.len();
    text[len] = b'e';
    len += 1;
    let q = num::signed_digits(&mut int, i64::from(q));
    text[len..len + q.len()].copy_from_slice(q);
    len += q.len();
    std::str::from_utf8(&text[..len]).ok()?.parse().ok()
}

/// Writes the decimal as Rust's `{:?}` writes its double (and Python's
/// `repr`, but for the exponent's spelling): trailing zeros dropped, in
/// exponent form below 1e-4 and from 1e16 on (`1.4013e-45`, `1e16`), else
/// with a fraction (`0.0001`, `16777216.0`).
fn write_decimal(out: &mut Vec<u8>, d: Decimal) {
    let (mut n, mut q) = (d.mantissa, d.exp10);
    if n == 0 {
        out.extend_from_slice(if d.negative { b"-0.0" } else { b"0.0" });
        return;
    }
    while n % 10 == 0 {
        n /= 10;
        q += 1;
    }
    let mut buf = [0u8; 10];
    let mut len = 0;
    while n > 0 {
        len += 1;
        buf[10 - len] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    num::write_digits(out, d.negative, &buf[10 - len..], q);
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
/// Python writes `1e+16`, `1e-05`) and for shortest ties (see
/// tests/decode/float_text.rs); NaN and the infinities as JSON strings.
pub(crate) fn write_f64(out: &mut Vec<u8>, v: f64) {
    match special(v) {
        Some(s) => out.extend_from_slice(s.as_bytes()),
        // The shortest representation that reads back to the same value,
        // with `.0` or an exponent: `1.0`, `-0.0`, `5e-324`; in exponent form
        // below 1e-4 and from 1e16 on, as Python's `repr`: what `{:?}`
        // writes, without its formatting machinery.
        None => num::write_finite_f64(out, v),
    }
}

/// A float32 as docs/FORMAT.md §5.2 prints it: the decimal of
/// [`to_shortest_float`], written as `{:?}` writes that double.
pub(crate) fn write_f32(out: &mut Vec<u8>, v: f32) {
    match shortest_decimal(v) {
        Some(d) => write_decimal(out, d),
        None => write_f64(out, f64::from(v)),
    }
}

/// Appends `bytes` in standard base64 with padding, encoded in place (no
/// allocation beyond `out`'s growth).
pub(crate) fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    let start = out.len();
    let n = base64::encoded_len(bytes.len(), true).unwrap_or(0);
    out.resize(start + n, 0);
    let written = base64::engine::general_purpose::STANDARD
        .encode_slice(bytes, &mut out[start..])
        .unwrap_or(0);
    out.truncate(start + written);
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
                write_base64(out, v);
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
            write_base64(out, bytes);
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
    // The literals are the floats' exact values, to show the ties.
    #[allow(clippy::excessive_precision)]
    fn floats_as_message_to_dict() {
        // What MessageToDict gives (json.dumps of it, but for the exponents'
        // spelling: Python writes 3.4028235e+38 and 9.999999e-05).
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.5), "0.5");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(std::f32::consts::PI), "3.1415927");
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

    /// ToShortestFloat as plainly as it can be written: `{:.N e}` for each
    /// number of digits, read back through a double.
    fn reference(v: f32) -> f64 {
        let exact = f64::from(v);
        for digits in 6..=9 {
            let text = format!("{exact:.*e}", digits - 1);
            let d: f64 = text.parse().unwrap();
            if (d as f32).to_bits() == v.to_bits() || digits == 9 {
                return d;
            }
        }
        unreachable!()
    }

    fn check(bits: u32) {
        let v = f32::from_bits(bits);
        if !v.is_finite() {
            return;
        }
        let text = f(v);
        let want = reference(v);
        assert_eq!(
            to_shortest_float(v).to_bits(),
            want.to_bits(),
            "{bits:#010x}: {text}, want {want:?}"
        );
        assert_eq!(text, format!("{want:?}"), "{bits:#010x}");
        let back = text.parse::<f64>().unwrap();
        assert_eq!(
            (back as f32).to_bits(),
            bits,
            "{bits:#010x} printed as {text}"
        );
    }

    #[test]
    fn float32_as_the_plain_rule_gives() {
        // A sweep with a large odd stride over all bit patterns.
        let mut bits = 0u32;
        for _ in 0..100_000 {
            bits = bits.wrapping_add(0x9e37_79b1);
            check(bits);
        }
        // Around the powers of two and ten, where the integer arithmetic
        // gives way to formatting (below about 1e-36) and where digits carry.
        for e in -149..=127 {
            let b = (2f64.powi(e) as f32).to_bits();
            (b.saturating_sub(3)..b.saturating_add(4)).for_each(check);
        }
        for e in -45..=38 {
            let b = format!("1e{e}").parse::<f32>().unwrap().to_bits();
            (b.saturating_sub(3)..b.saturating_add(4)).for_each(check);
        }
        // Exact ties at 6 to 9 digits: x.5 and friends.
        for k in 0..20_000u32 {
            check((k as f32 / 16.0 + 50000.0).to_bits());
            check((k as f32 / 1024.0 + 3.0).to_bits());
        }
    }

    #[test]
    fn integer_rounding_is_formatting() {
        // round_digits against Rust's correctly rounded `{:.N e}`, for every
        // number of digits, not only the one chosen; and where it gives up.
        let mut bits = 0u32;
        let mut gave_up = 0;
        for _ in 0..50_000 {
            bits = bits.wrapping_add(0x9e37_79b1) & 0x7fff_ffff;
            let x = f32::from_bits(bits);
            if !x.is_finite() {
                continue;
            }
            for digits in 6..=9 {
                let want = format_digits(f64::from(x), digits).unwrap();
                match round_digits(x, digits) {
                    Some(got) => {
                        // 10^digits after a carry is the same number as
                        // 10^(digits-1) one power of ten up.
                        let same = got == want
                            || (got.0 == 10u32.pow(digits) && (got.0 / 10, got.1 + 1) == want);
                        assert!(
                            same,
                            "{bits:#010x} at {digits} digits: {got:?}, want {want:?}"
                        );
                    }
                    None => {
                        assert!(x < 1e-35, "{bits:#010x} ({x:e}) at {digits} digits");
                        gave_up += 1;
                    }
                }
            }
        }
        assert!(gave_up < 2_000, "{gave_up}");
    }
}
