//! The annotated wire tree of a payload, offset by offset, in the manner of
//! the byte-by-byte tf.Example analysis in the project's seeds (a blog
//! article that explains `xxd -b` dumps of a serialized map and tf.Example
//! bit by bit; the dumps are `testdata/seed_*.xxd`, docs/FORMAT.md §4.4).
//!
//! Each line shows the absolute offset of a field, the bytes of its tag and
//! length (or of its whole value when it is a scalar), the field's name in
//! the schema with its number and wire type, and what it means. When the
//! payload is invalid the tree stops at the error, with a last line saying
//! what is wrong and where.
//!
//! Fields the schema does not know (every field of a `raw` payload) are
//! shown as `unknown field N (WIRE)` and read as `protoc --decode_raw` reads
//! them, each guess marked `guessed`: a length-delimited field whose bytes
//! parse as a message is opened as one (protoc's rule, its text named too
//! when the bytes are also text), [`GUESS_DEPTH`] levels at most, else shown
//! as text or as bytes; an `I64`/`I32` shows its hex and the double/float it
//! would be. Groups are opened as they are. Each guess reads its bytes once
//! and allocates nothing, so a hostile payload costs at most
//! `GUESS_DEPTH + 1` reads of each byte.
//!
//! ```
//! use recordwire::dump::dump_payload;
//! use recordwire::view::PayloadKind;
//!
//! // The `map<string, int64>` message of the seed analysis, read as an
//! // OFRecord-shaped map: one entry, key "test", then field 2 (a varint,
//! // which is unknown where a Feature is expected).
//! let msg = [0x0a, 0x09, 0x0a, 0x04, b't', b'e', b's', b't', 0x10, 0xac, 0x02];
//! let mut out = String::new();
//! dump_payload(&mut out, PayloadKind::OfRecord, &msg, 0).unwrap();
//! let expected = [
//!     "00000000  0a 09                   feature (1:LEN) entry, 9 bytes",
//!     "00000002  0a 04                     key (1:LEN) \"test\"",
//!     "00000008  10 ac 02                  unknown field 2 (VARINT) 300",
//! ];
//! assert_eq!(out.lines().collect::<Vec<_>>(), expected);
//! ```

use std::fmt::Write as _;

mod by_schema;
pub use by_schema::dump_by_schema;

use crate::names::push_quoted;
use crate::view::{Kind, PayloadKind, Schema};
use crate::wire::DecodeError;
use crate::wire::{ByteReader, Field, FieldReader, Value, MAX_DEPTH};

/// The message types the dump knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    Example,
    SequenceExample,
    Features(Schema),
    FeaturesEntry(Schema),
    Feature(Schema),
    FeatureLists,
    FeatureListsEntry,
    FeatureList,
    List(Kind),
    Unknown,
}

/// What a known field holds.
enum Slot {
    Message(&'static str, Msg),
    Key,
    Values(Kind),
}

fn field_of(msg: Msg, number: u32) -> Option<Slot> {
    use Slot::*;
    Some(match (msg, number) {
        (Msg::Example, 1) => Message("features", Msg::Features(Schema::TensorFlow)),
        (Msg::SequenceExample, 1) => Message("context", Msg::Features(Schema::TensorFlow)),
        (Msg::SequenceExample, 2) => Message("feature_lists", Msg::FeatureLists),
        (Msg::Features(s), 1) => Message("feature", Msg::FeaturesEntry(s)),
        (Msg::FeaturesEntry(_), 1) | (Msg::FeatureListsEntry, 1) => Key,
        (Msg::FeaturesEntry(s), 2) => Message("value", Msg::Feature(s)),
        (Msg::Feature(s), n) => {
            let kind = s.kind_of(n)?;
            Message(kind.name(), Msg::List(kind))
        }
        (Msg::FeatureLists, 1) => Message("feature_list", Msg::FeatureListsEntry),
        (Msg::FeatureListsEntry, 2) => Message("value", Msg::FeatureList),
        (Msg::FeatureList, 1) => Message("feature", Msg::Feature(Schema::TensorFlow)),
        (Msg::List(k), 1) => Values(k),
        _ => return None,
    })
}

const HEX_COLUMN: usize = 24;
const MAX_SHOWN: usize = 16;
/// The longest text shown of a length-delimited field guessed to be text
/// (in bytes; longer text ends with `…` after the closing quote).
const MAX_TEXT: usize = 64;
/// The same, for text shown beside a guessed message.
const MAX_TEXT_BESIDE: usize = 32;
/// How many levels of messages guessed inside unknown length-delimited
/// fields are opened, one inside the other (below that they are shown as
/// bytes), as `protoc --decode_raw` does (its `kUnknownFieldRecursionLimit`
/// in `text_format.cc`). A known message starts the count again.
pub const GUESS_DEPTH: u32 = 10;

/// Appends the annotated wire tree of `bytes` (a payload of `kind`, whose
/// first byte is at absolute offset `base`) to `out`. Returns the error that
/// stopped it, if any, after writing a line for it.
pub fn dump_payload(
    out: &mut String,
    kind: PayloadKind,
    bytes: &[u8],
    base: u64,
) -> Result<(), DecodeError> {
    let msg = match kind {
        PayloadKind::Example => Msg::Example,
        PayloadKind::SequenceExample => Msg::SequenceExample,
        PayloadKind::OfRecord => Msg::Features(Schema::OneFlow),
        PayloadKind::Raw => Msg::Unknown,
    };
    let r = dump_message(out, msg, bytes, base, 0, 0, GUESS_DEPTH);
    if let Err(e) = &r {
        let _ = writeln!(out, "{:08x}  error: {}", e.offset, e.reason);
    }
    r
}

fn line_start(out: &mut String, offset: u64, raw: &[u8], indent: usize) {
    let _ = write!(out, "{offset:08x}  ");
    let mut hex = String::new();
    for (i, b) in raw.iter().enumerate() {
        if hex.len() + 3 > HEX_COLUMN - 2 {
            hex.push('…');
            let _ = i;
            break;
        }
        let _ = write!(hex, "{b:02x} ");
    }
    let _ = write!(out, "{hex:<width$}", width = HEX_COLUMN);
    for _ in 0..indent {
        out.push_str("  ");
    }
}

fn hex_preview(out: &mut String, bytes: &[u8]) {
    for b in bytes.iter().take(MAX_SHOWN) {
        let _ = write!(out, " {b:02x}");
    }
    if bytes.len() > MAX_SHOWN {
        out.push_str(" …");
    }
}

/// The raw bytes of a field from its tag to the start of its value.
fn head<'a>(whole: &'a [u8], base: u64, f: &Field<'_>) -> &'a [u8] {
    let start = (f.offset - base) as usize;
    let end = (f.value_offset - base) as usize;
    whole.get(start..end).unwrap_or(&[])
}

fn dump_message(
    out: &mut String,
    msg: Msg,
    bytes: &[u8],
    base: u64,
    depth: u32,
    indent: usize,
    guesses: u32,
) -> Result<(), DecodeError> {
    for f in FieldReader::new(bytes, base, depth) {
        let f = f?;
        let tag_and_len = head(bytes, base, &f);
        let wire = f.value.wire_type().name();
        match (field_of(msg, f.number), f.value) {
            (Some(Slot::Message(name, child)), Value::Len(body)) => {
                line_start(out, f.offset, tag_and_len, indent);
                let what = if matches!(child, Msg::FeaturesEntry(_) | Msg::FeatureListsEntry) {
                    "entry, "
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "{name} ({}:{wire}) {what}{} bytes",
                    f.number,
                    body.len()
                );
                if depth + 1 > MAX_DEPTH {
                    return Err(DecodeError::new(
                        f.value_offset,
                        crate::DecodeReason::DepthLimitExceeded,
                    ));
                }
                dump_message(
                    out,
                    child,
                    body,
                    f.value_offset,
                    depth + 1,
                    indent + 1,
                    GUESS_DEPTH,
                )?;
            }
            (Some(Slot::Key), Value::Len(key)) => {
                line_start(out, f.offset, tag_and_len, indent);
                let _ = write!(out, "key ({}:{wire}) ", f.number);
                push_quoted(out, key);
                out.push('\n');
            }
            (Some(Slot::Values(kind)), value) => {
                dump_values(out, kind, &f, value, tag_and_len, indent)?;
            }
            (_, value) => unknown_field(out, &f, value, bytes, base, depth, indent, guesses)?,
        }
    }
    Ok(())
}

/// A field the schema does not know, read as `protoc --decode_raw` reads
/// it (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn unknown_field(
    out: &mut String,
    f: &Field<'_>,
    value: Value<'_>,
    bytes: &[u8],
    base: u64,
    depth: u32,
    indent: usize,
    guesses: u32,
) -> Result<(), DecodeError> {
    let tag_and_len = head(bytes, base, f);
    let wire = value.wire_type().name();
    let raw_end = match value {
        Value::Len(_) | Value::Group(_) => tag_and_len.len(),
        _ => bytes.len(),
    };
    let start = (f.offset - base) as usize;
    let shown = match value {
        Value::Varint(_) | Value::Fixed32(_) | Value::Fixed64(_) => {
            let end = scalar_end(bytes, start, tag_and_len.len(), value);
            &bytes[start..end.min(raw_end)]
        }
        _ => tag_and_len,
    };
    line_start(out, f.offset, shown, indent);
    let _ = write!(out, "unknown field {} ({wire})", f.number);
    match value {
        Value::Varint(v) => {
            let _ = writeln!(out, " {v}");
        }
        Value::Fixed32(v) => {
            let _ = write!(out, " {v:#010x}, guessed float ");
            let x = f32::from_bits(v);
            push_float(
                out,
                crate::json::to_shortest_float(x),
                x.is_subnormal(),
                v as u64,
            );
        }
        Value::Fixed64(v) => {
            let x = f64::from_bits(v);
            let _ = write!(out, " {v:#018x}, guessed double ");
            push_float(out, x, x.is_subnormal(), v);
        }
        Value::Len(b) => {
            let _ = write!(out, " {} bytes", b.len());
            if guesses > 0 && looks_like_message(b, guesses) {
                out.push_str(", guessed message");
                if let Some(text) = as_text(b) {
                    out.push_str(" (or text ");
                    push_text(out, text, MAX_TEXT_BESIDE);
                    out.push(')');
                }
                out.push('\n');
                dump_message(
                    out,
                    Msg::Unknown,
                    b,
                    f.value_offset,
                    depth + 1,
                    indent + 1,
                    guesses - 1,
                )?;
            } else if let Some(text) = as_text(b) {
                out.push_str(", guessed text ");
                push_text(out, text, MAX_TEXT);
                out.push('\n');
            } else {
                out.push(':');
                hex_preview(out, b);
                out.push('\n');
            }
        }
        Value::Group(body) => {
            out.push('\n');
            dump_message(
                out,
                Msg::Unknown,
                body,
                f.value_offset,
                depth + 1,
                indent + 1,
                guesses.saturating_sub(1),
            )?;
            let end = f.value_offset + body.len() as u64;
            let end_tag = &bytes[(end - base) as usize..]
                .iter()
                .take(5)
                .position(|&b| b < 0x80)
                .map(|p| &bytes[(end - base) as usize..(end - base) as usize + p + 1])
                .unwrap_or(&[]);
            line_start(out, end, end_tag, indent);
            let _ = writeln!(out, "end of group {} (EGROUP)", f.number);
        }
    }
    Ok(())
}

/// Whether `bytes` parse as a message, as protoc decides it for an unknown
/// length-delimited field: not empty, every field whole with a valid tag
/// (field number not 0, no end-group tag without its start), and groups
/// nested at most `guesses` deep. Reads `bytes` once, allocates nothing.
fn looks_like_message(bytes: &[u8], guesses: u32) -> bool {
    // Groups of a reader at depth MAX_DEPTH - g may nest g deep.
    let depth = MAX_DEPTH.saturating_sub(guesses);
    !bytes.is_empty() && FieldReader::new(bytes, 0, depth).all(|f| f.is_ok())
}

/// `bytes` as text, when they are UTF-8 without control characters other
/// than tab, line feed and carriage return.
fn as_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'));
    plain.then_some(text)
}

/// Appends `text` quoted, cut after at most `max` bytes (at a character
/// boundary) with `…` after the closing quote when cut.
fn push_text(out: &mut String, text: &str, max: usize) {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    push_quoted(out, &text.as_bytes()[..end]);
    if end < text.len() {
        out.push('…');
    }
}

/// Appends a fixed-width value's float reading, and for a subnormal one (a
/// small integer's bits) the integer too, then ends the line.
fn push_float<F: std::fmt::Debug>(out: &mut String, x: F, subnormal: bool, bits: u64) {
    let _ = write!(out, "{x:?}");
    if subnormal {
        let _ = write!(out, " (or integer {bits})");
    }
    out.push('\n');
}

fn scalar_end(bytes: &[u8], start: usize, tag_len: usize, value: Value<'_>) -> usize {
    let v = start + tag_len;
    match value {
        Value::Fixed32(_) => v + 4,
        Value::Fixed64(_) => v + 8,
        Value::Varint(_) => {
            let rest = &bytes[v.min(bytes.len())..];
            v + rest
                .iter()
                .position(|&b| b < 0x80)
                .map_or(rest.len(), |p| p + 1)
        }
        _ => v,
    }
}

fn dump_values(
    out: &mut String,
    kind: Kind,
    f: &Field<'_>,
    value: Value<'_>,
    tag_and_len: &[u8],
    indent: usize,
) -> Result<(), DecodeError> {
    let wire = value.wire_type().name();
    match (kind, value) {
        (Kind::Bytes, Value::Len(b)) => {
            line_start(out, f.offset, tag_and_len, indent);
            let _ = write!(out, "value ({}:{wire}) {} bytes:", f.number, b.len());
            hex_preview(out, b);
            out.push('\n');
        }
        (Kind::Bytes, _) => unknown_scalar(out, f, tag_and_len, indent),
        (_, Value::Len(b)) => {
            // Decode first: an invalid run ends the tree with its error line,
            // not half a line.
            let mut shown = String::new();
            let n = packed_values(&mut shown, kind, b, f.value_offset, f.offset)?;
            line_start(out, f.offset, tag_and_len, indent);
            let _ = writeln!(
                out,
                "value ({}:{wire} packed) {n} × {}: [{shown}]",
                f.number,
                elem_name(kind)
            );
        }
        (Kind::Float, Value::Fixed32(v)) => {
            line_start(out, f.offset, tag_and_len, indent);
            // The float as `cat` shows it (docs/FORMAT.md §5.2).
            let v = crate::json::to_shortest_float(f32::from_bits(v));
            let _ = writeln!(out, "value ({}:{wire}) {v:?}", f.number);
        }
        (Kind::Double, Value::Fixed64(v)) => {
            line_start(out, f.offset, tag_and_len, indent);
            let _ = writeln!(out, "value ({}:{wire}) {:?}", f.number, f64::from_bits(v));
        }
        (Kind::Int64, Value::Varint(v)) => {
            line_start(out, f.offset, tag_and_len, indent);
            let _ = writeln!(out, "value ({}:{wire}) {}", f.number, v as i64);
        }
        (Kind::Int32, Value::Varint(v)) => {
            line_start(out, f.offset, tag_and_len, indent);
            let _ = writeln!(out, "value ({}:{wire}) {}", f.number, v as i32);
        }
        _ => unknown_scalar(out, f, tag_and_len, indent),
    }
    Ok(())
}

fn unknown_scalar(out: &mut String, f: &Field<'_>, tag_and_len: &[u8], indent: usize) {
    line_start(out, f.offset, tag_and_len, indent);
    let _ = writeln!(
        out,
        "unknown field {} ({}) (wrong wire type for this list)",
        f.number,
        f.value.wire_type().name()
    );
}

fn elem_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Bytes => "bytes",
        Kind::Float => "float",
        Kind::Double => "double",
        Kind::Int32 => "int32",
        Kind::Int64 => "int64",
    }
}

/// Writes up to [`MAX_SHOWN`] values of a packed run; returns how many there are.
///
/// Errors are reported as the views report them: a bad length at the field's
/// tag (`tag_offset`), a bad varint at its own offset.
fn packed_values(
    out: &mut String,
    kind: Kind,
    b: &[u8],
    base: u64,
    tag_offset: u64,
) -> Result<usize, DecodeError> {
    let width = match kind {
        Kind::Float => 4,
        Kind::Double => 8,
        _ => 0,
    };
    if width != 0 && !b.len().is_multiple_of(width) {
        return Err(DecodeError::new(
            tag_offset,
            crate::DecodeReason::PackedLength {
                length: b.len() as u64,
                width: width as u8,
            },
        ));
    }
    let mut c = ByteReader::new(b, base);
    let mut n = 0;
    while !c.is_empty() {
        let text = match kind {
            Kind::Float => format!(
                "{:?}",
                crate::json::to_shortest_float(f32::from_bits(c.fixed32()?))
            ),
            Kind::Double => format!("{:?}", f64::from_bits(c.fixed64()?)),
            Kind::Int32 => (c.varint()? as i32).to_string(),
            _ => (c.varint()? as i64).to_string(),
        };
        if n < MAX_SHOWN {
            if n > 0 {
                out.push_str(", ");
            }
            out.push_str(&text);
        } else if n == MAX_SHOWN {
            out.push_str(", …");
        }
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz finding (fixed): a bad packed run must not leave half a line
    /// before the error line.
    #[test]
    fn an_invalid_packed_run_ends_with_a_whole_error_line() {
        let input = include_bytes!("../testdata/fuzz-regressions/dump-unfinished-line.bin");
        let mut out = String::new();
        let e = dump_payload(&mut out, PayloadKind::OfRecord, input, 0).unwrap_err();
        let last = out.lines().last().unwrap_or_default();
        assert_eq!(last, format!("{:08x}  error: {}", e.offset, e.reason));
        assert!(out.lines().all(|l| l.matches("error").count() <= 1));
    }
}
