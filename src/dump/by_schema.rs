//! The wire tree of a record annotated by a schema given at run time: each
//! field with its name, number, wire type, declared type and value; nested
//! messages opened by their type; the fields the schema does not know (and
//! known numbers with another wire type, and a closed enum's unknown values)
//! shown as unknown fields, as for a raw payload.

use std::fmt::Write as _;

use super::{head, line_start, scalar_end, unknown_field, GUESS_DEPTH, MAX_SHOWN};
use crate::names::push_quoted;
use crate::schema::plan::{FieldKind, Plan};
use crate::schema::{next_packed, scalar_of, FieldType, Schema, ValueRef};
use crate::wire::{DecodeError, DecodeReason, Field, FieldReader, Value, MAX_DEPTH};

/// Appends the annotated wire tree of `bytes` (a record of `schema`'s
/// message, whose first byte is at absolute offset `base`) to `out`.
/// Returns the error that stopped it, if any, after writing a line for it.
pub fn dump_by_schema(
    out: &mut String,
    schema: &Schema,
    bytes: &[u8],
    base: u64,
) -> Result<(), DecodeError> {
    let r = message(out, schema.plan(), 0, bytes, base, 0, 0);
    if let Err(e) = &r {
        let _ = writeln!(out, "{:08x}  error: {}", e.offset, e.reason);
    }
    r
}

fn kind_name(plan: &Plan, kind: FieldKind) -> &str {
    match kind {
        FieldKind::Message(m) | FieldKind::Group(m) => &plan.messages[m].name,
        FieldKind::Enum(e) => &plan.enums[e].name,
        FieldKind::String { .. } => "string",
        other => FieldType::of(other).name(),
    }
}

/// One value's text: numbers as `cat` shows them, strings quoted, bytes as
/// their length and first bytes, enums by name and number.
fn value_text(out: &mut String, v: &ValueRef<'_>) {
    match v {
        ValueRef::Double(x) => {
            let _ = write!(out, "{x:?}");
        }
        ValueRef::Float(x) => {
            let _ = write!(out, "{:?}", crate::json::to_shortest_float(*x));
        }
        ValueRef::Int32(x) => {
            let _ = write!(out, "{x}");
        }
        ValueRef::Int64(x) => {
            let _ = write!(out, "{x}");
        }
        ValueRef::Uint32(x) => {
            let _ = write!(out, "{x}");
        }
        ValueRef::Uint64(x) => {
            let _ = write!(out, "{x}");
        }
        ValueRef::Bool(x) => {
            let _ = write!(out, "{x}");
        }
        ValueRef::String(s) => push_quoted(out, s),
        ValueRef::Bytes(b) => {
            let _ = write!(out, "{} bytes:", b.len());
            for x in b.iter().take(MAX_SHOWN) {
                let _ = write!(out, " {x:02x}");
            }
            if b.len() > MAX_SHOWN {
                out.push_str(" …");
            }
        }
        ValueRef::Enum(n, Some(name)) => {
            let _ = write!(out, "{name} ({n})");
        }
        ValueRef::Enum(n, None) => {
            let _ = write!(out, "{n} (not a value of the enum)");
        }
        ValueRef::Message(_) => out.push_str("message"),
    }
}

fn message(
    out: &mut String,
    plan: &Plan,
    m: usize,
    bytes: &[u8],
    base: u64,
    depth: u32,
    indent: usize,
) -> Result<(), DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::new(base, DecodeReason::DepthLimitExceeded));
    }
    let fields = &plan.messages[m].fields;
    for f in FieldReader::new(bytes, base, depth) {
        let f = f?;
        let Some(i) = plan.messages[m].field(f.number) else {
            unknown_field(out, &f, f.value, bytes, base, depth, indent, GUESS_DEPTH)?;
            continue;
        };
        let fp = &fields[i];
        let wire = f.value.wire_type().name();
        let tag_and_len = head(bytes, base, &f);
        let type_name = kind_name(plan, fp.kind);
        match (fp.kind, f.value) {
            (FieldKind::Message(sub), Value::Len(body)) => {
                line_start(out, f.offset, tag_and_len, indent);
                let what = if fp.map { "map entry" } else { type_name };
                let _ = writeln!(
                    out,
                    "{} ({}:{wire}) {what}, {} bytes",
                    fp.name,
                    f.number,
                    body.len()
                );
                message(out, plan, sub, body, f.value_offset, depth + 1, indent + 1)?;
            }
            (FieldKind::Group(sub), Value::Group(body)) => {
                line_start(out, f.offset, tag_and_len, indent);
                let _ = writeln!(out, "{} ({}:{wire}) group {type_name}", fp.name, f.number);
                message(out, plan, sub, body, f.value_offset, depth + 1, indent + 1)?;
                let end = f.value_offset + body.len() as u64;
                let at = (end - base) as usize;
                let end_tag = bytes[at..]
                    .iter()
                    .take(5)
                    .position(|&b| b < 0x80)
                    .map_or(&[][..], |p| &bytes[at..at + p + 1]);
                line_start(out, end, end_tag, indent);
                let _ = writeln!(out, "end of group {} (EGROUP)", f.number);
            }
            (kind, Value::Len(run)) if fp.repeated && kind.packable() => {
                // Decoded first: a bad run ends the tree with its error line.
                let mut shown = String::new();
                let mut n = 0usize;
                let mut unknown = 0usize;
                let mut rest = run;
                while !rest.is_empty() {
                    let (v, used) = next_packed(kind, rest, f.value_offset)?;
                    rest = &rest[used..];
                    match scalar_of(plan, kind, v, f.value_offset)? {
                        Some(v) => {
                            if n < MAX_SHOWN {
                                if n > 0 {
                                    shown.push_str(", ");
                                }
                                value_text(&mut shown, &v);
                            } else if n == MAX_SHOWN {
                                shown.push_str(", …");
                            }
                            n += 1;
                        }
                        None => unknown += 1,
                    }
                }
                line_start(out, f.offset, tag_and_len, indent);
                let _ = write!(
                    out,
                    "{} ({}:{wire} packed) {n} × {type_name}: [{shown}]",
                    fp.name, f.number
                );
                if unknown > 0 {
                    let _ = write!(out, " and {unknown} unknown values of the closed enum");
                }
                out.push('\n');
            }
            (kind, value) => match scalar_of(plan, kind, value, f.value_offset)? {
                Some(v) => {
                    let shown = scalar_bytes(bytes, base, &f, tag_and_len);
                    line_start(out, f.offset, shown, indent);
                    let _ = write!(out, "{} ({}:{wire}) {type_name} ", fp.name, f.number);
                    value_text(out, &v);
                    out.push('\n');
                }
                None => {
                    // Another wire type, or a closed enum's unknown value.
                    unknown_field(out, &f, value, bytes, base, depth, indent, GUESS_DEPTH)?;
                }
            },
        }
    }
    Ok(())
}

/// The bytes shown for a scalar field: its tag and whole value (a string's
/// or bytes field's tag and length).
fn scalar_bytes<'a>(bytes: &'a [u8], base: u64, f: &Field<'_>, tag_and_len: &'a [u8]) -> &'a [u8] {
    match f.value {
        Value::Varint(_) | Value::Fixed32(_) | Value::Fixed64(_) => {
            let start = (f.offset - base) as usize;
            let end = scalar_end(bytes, start, tag_and_len.len(), f.value);
            bytes.get(start..end).unwrap_or(tag_and_len)
        }
        _ => tag_and_len,
    }
}
