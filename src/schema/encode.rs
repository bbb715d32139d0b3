//! JSON back to bytes by a schema: protobuf's JSON mapping read as
//! `json_format.Parse` reads it, written as `SerializeToString(deterministic=True)`
//! writes the message it builds.
//!
//! What is read: fields by their own name or their lowerCamelCase JSON name;
//! integers as numbers (an integral `1.0` or `1e3` too) or as strings of
//! digits; floats as numbers, numeric strings, `"NaN"`, `"Infinity"`,
//! `"-Infinity"`; enums by name or number (a closed, proto2 enum refuses a
//! number it does not name); bytes in standard or URL-safe base64, padded or
//! not; maps as objects whose keys are strings (`"-5"`, `"true"`); `null` for
//! a field that is not set (for a `google.protobuf.Value` it is
//! `null_value`); the well-known types in their own forms
//! (`encode_wkt.rs`). Unknown field names, a field given twice (by both
//! names), two members of one oneof, a value of the wrong JSON type, an
//! integer out of its type's range and bad base64 are errors naming the
//! field's path (`inners[3].children[0].a: expected an integer`).
//!
//! What is written: fields in field-number order; a field without presence
//! (proto3 implicit) left out at its default (a float by its bits: `-0.0` is
//! written), one with presence (`optional`, proto2, oneof members) written
//! whenever given; repeated scalars packed where the schema says; map entries
//! ascending by key (integers by value, strings by bytes, `false` before
//! `true`), each with its key and its value; groups between start and end
//! tags. A proto2 `required` field is not checked (as `Parse` does not).

use std::fmt;

use super::plan::{FieldKind, FieldPlan, Plan, WellKnown};
use super::Schema;
use crate::error::Error;
use crate::json::read::{parse_json, JsonError, JsonValue};
use crate::names::quoted;
use crate::wire::encode_varint;

impl Schema {
    /// Appends to `out` the message that the JSON text `json` describes, as
    /// protobuf's `json_format.Parse` reads it and
    /// `SerializeToString(deterministic=True)` writes it.
    ///
    /// ```
    /// use recordwire::schema::Schema;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(
    ///     dir.path().join("point.proto"),
    ///     "syntax = \"proto3\"; package demo; message Point { int64 x = 1; string label = 2; }",
    /// )
    /// .unwrap();
    /// let schema = Schema::from_proto(&[dir.path().join("point.proto")], &[dir.path()], "demo.Point")?;
    /// let mut bytes = Vec::new();
    /// schema.encode_json(br#"{"label": "a", "x": "7"}"#, &mut bytes)?;
    /// assert_eq!(bytes, b"\x08\x07\x12\x01a");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors (`usage_error`): text that is not JSON, or JSON that is not
    /// such a message, said with the path of the field
    /// (`tracks[3].states: expected a number`). `out` may then hold part of
    /// the message.
    pub fn encode_json(&self, json: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        self.encode_json_text(json, out)
            .map_err(|e| Error::usage(e.to_string()))
    }

    /// [`Schema::encode_json`] with the error as the JSON reader's.
    pub(crate) fn encode_json_text(&self, json: &[u8], out: &mut Vec<u8>) -> Result<(), JsonError> {
        let value = parse_json(json)?;
        self.encode_json_value(&value, out)
    }

    /// [`Schema::encode_json`] of JSON already parsed.
    pub(crate) fn encode_json_value(
        &self,
        value: &JsonValue,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        Encoder {
            plan: self.plan(),
            sort_maps: true,
        }
        .message(0, value, &At::Root, out)
    }
}

/// Where a value is in the document, rendered only for an error:
/// `a.b[3]["key"]`.
pub(super) enum At<'a> {
    Root,
    Field(&'a At<'a>, &'a [u8]),
    Index(&'a At<'a>, usize),
    Key(&'a At<'a>, &'a [u8]),
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Root => Ok(()),
            At::Field(up, name) => {
                if !matches!(up, At::Root) {
                    write!(f, "{up}.")?;
                }
                f.write_str(&String::from_utf8_lossy(name))
            }
            At::Index(up, i) => write!(f, "{up}[{i}]"),
            At::Key(up, key) => write!(f, "{up}[{}]", quoted(key)),
        }
    }
}

/// An error of meaning at `at`.
pub(super) fn fail(at: &At<'_>, message: impl Into<String>) -> JsonError {
    JsonError {
        offset: None,
        path: at.to_string(),
        message: message.into(),
    }
}

/// The name of a JSON value's type, for errors.
pub(super) fn type_of(v: &JsonValue) -> &'static str {
    match v {
        JsonValue::Null => "null",
        JsonValue::Bool(_) => "a bool",
        JsonValue::Number(_) => "a number",
        JsonValue::String(_) => "a string",
        JsonValue::Array(_) => "an array",
        JsonValue::Object(_) => "an object",
    }
}

/// One scalar ready for the wire.
#[derive(Debug)]
pub(super) enum Wire {
    Varint(u64),
    Fixed32(u32),
    Fixed64(u64),
    Len(Vec<u8>),
}

impl Wire {
    /// Whether a field without presence holding it is left out.
    pub(super) fn is_default(&self) -> bool {
        match self {
            Wire::Varint(v) | Wire::Fixed64(v) => *v == 0,
            Wire::Fixed32(v) => *v == 0,
            Wire::Len(b) => b.is_empty(),
        }
    }

    /// The value alone (no tag): a packed run's element.
    fn write_value(&self, out: &mut Vec<u8>) {
        match self {
            Wire::Varint(v) => encode_varint(*v, out),
            Wire::Fixed32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Wire::Fixed64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Wire::Len(b) => write_len(b, out),
        }
    }

    /// The value as field `number`.
    pub(super) fn write(&self, number: u32, out: &mut Vec<u8>) {
        let wire_type = match self {
            Wire::Varint(_) => 0,
            Wire::Fixed64(_) => 1,
            Wire::Len(_) => 2,
            Wire::Fixed32(_) => 5,
        };
        tag(number, wire_type, out);
        self.write_value(out);
    }
}

pub(super) fn tag(number: u32, wire_type: u8, out: &mut Vec<u8>) {
    encode_varint((u64::from(number) << 3) | u64::from(wire_type), out);
}

pub(super) fn write_len(bytes: &[u8], out: &mut Vec<u8>) {
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A map entry's key, in the deterministic order.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum SortKey {
    Bool(bool),
    Int(i128),
    Bytes(Vec<u8>),
}

pub(super) struct Encoder<'p> {
    pub(super) plan: &'p Plan,
    /// Map entries ascending by key (the deterministic serialization); off
    /// inside an `Any`'s `value`, which protobuf's reader serializes
    /// without `deterministic`: entries in the order of the JSON (pure
    /// Python's order; upb's is its hash table's).
    pub(super) sort_maps: bool,
}

impl Encoder<'_> {
    /// The body (no tag, no length) of message type `m` from `v`.
    pub(super) fn message(
        &self,
        m: usize,
        v: &JsonValue,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        if let Some(wk) = self.plan.messages[m].well_known {
            return self.well_known(wk, m, v, at, out);
        }
        let JsonValue::Object(members) = v else {
            return Err(fail(at, format!("expected an object, not {}", type_of(v))));
        };
        self.members(m, members, None, at, out)
    }

    /// The body of message type `m` from the members of an object, leaving
    /// out the member named `skip` (an `Any`'s `@type`).
    pub(super) fn members(
        &self,
        m: usize,
        members: &[(Vec<u8>, JsonValue)],
        skip: Option<&[u8]>,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        let plan = &self.plan.messages[m];
        let mut slots: Vec<Option<(&[u8], &JsonValue)>> = vec![None; plan.fields.len()];
        let mut oneofs: Vec<Option<&[u8]>> = vec![None; plan.oneofs];
        for (key, value) in members {
            if Some(key.as_slice()) == skip {
                continue;
            }
            let Some(i) = plan
                .fields
                .iter()
                .position(|f| f.json_name.as_bytes() == key.as_slice())
                .or_else(|| {
                    plan.fields
                        .iter()
                        .position(|f| f.name.as_bytes() == key.as_slice())
                })
            else {
                return Err(fail(
                    at,
                    format!("unknown field {} of {}", quoted(key), plan.name),
                ));
            };
            let f = &plan.fields[i];
            if let Some((earlier, _)) = slots[i] {
                return Err(fail(
                    at,
                    format!(
                        "field {} given twice (as {} and {})",
                        f.name,
                        quoted(earlier),
                        quoted(key)
                    ),
                ));
            }
            if let (Some(o), false) = (f.oneof, matches!(value, JsonValue::Null)) {
                if let Some(other) = oneofs[o] {
                    return Err(fail(
                        at,
                        format!(
                            "{} and {} are members of one oneof: give one",
                            quoted(other),
                            quoted(key)
                        ),
                    ));
                }
                oneofs[o] = Some(key);
            }
            slots[i] = Some((key, value));
        }
        for (f, slot) in plan.fields.iter().zip(&slots) {
            if let Some((key, value)) = slot {
                self.field(f, value, &At::Field(at, key), out)?;
            }
        }
        Ok(())
    }

    /// Field `f` from `v`, tags included.
    fn field(
        &self,
        f: &FieldPlan,
        v: &JsonValue,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        if matches!(v, JsonValue::Null) && !f.repeated {
            // Not set, except a Value (null_value) or a NullValue enum.
            match f.kind {
                FieldKind::Message(sub) if self.is_value(sub) => {}
                FieldKind::Enum(e) if self.is_null_enum(e) => {}
                _ => return Ok(()),
            }
        }
        if f.map {
            return self.map(f, v, at, out);
        }
        if f.repeated {
            if matches!(v, JsonValue::Null) {
                return Ok(());
            }
            return self.repeated(f, v, at, out);
        }
        match f.kind {
            FieldKind::Message(sub) => {
                let mut body = Vec::new();
                self.message(sub, v, at, &mut body)?;
                tag(f.number, 2, out);
                write_len(&body, out);
            }
            FieldKind::Group(sub) => {
                tag(f.number, 3, out);
                self.message(sub, v, at, out)?;
                tag(f.number, 4, out);
            }
            kind => {
                let w = self.scalar(kind, v, at)?;
                if f.presence || !w.is_default() {
                    w.write(f.number, out);
                }
            }
        }
        Ok(())
    }

    /// Whether message type `m` is `google.protobuf.Value`.
    pub(super) fn is_value(&self, m: usize) -> bool {
        self.plan.messages[m].well_known == Some(WellKnown::Value)
    }

    fn is_null_enum(&self, e: usize) -> bool {
        self.plan.enums[e].null
    }

    /// A repeated field (not a map) from the array `v`.
    pub(super) fn repeated(
        &self,
        f: &FieldPlan,
        v: &JsonValue,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        let JsonValue::Array(items) = v else {
            return Err(fail(
                at,
                format!("expected an array (a repeated field), not {}", type_of(v)),
            ));
        };
        let mut run = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = At::Index(at, i);
            let null_ok = match f.kind {
                FieldKind::Message(sub) => self.is_value(sub),
                _ => false,
            };
            if matches!(item, JsonValue::Null) && !null_ok {
                return Err(fail(
                    &at,
                    "null is not allowed as an element of a repeated field",
                ));
            }
            match f.kind {
                FieldKind::Message(sub) => {
                    let mut body = Vec::new();
                    self.message(sub, item, &at, &mut body)?;
                    tag(f.number, 2, out);
                    write_len(&body, out);
                }
                FieldKind::Group(sub) => {
                    tag(f.number, 3, out);
                    self.message(sub, item, &at, out)?;
                    tag(f.number, 4, out);
                }
                kind => {
                    let w = self.scalar(kind, item, &at)?;
                    if f.packed && kind.packable() {
                        w.write_value(&mut run);
                    } else {
                        w.write(f.number, out);
                    }
                }
            }
        }
        if !run.is_empty() {
            tag(f.number, 2, out);
            write_len(&run, out);
        }
        Ok(())
    }

    /// A map field from the object `v`: its entries ascending by key.
    pub(super) fn map(
        &self,
        f: &FieldPlan,
        v: &JsonValue,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        let JsonValue::Object(members) = v else {
            return Err(fail(
                at,
                format!("expected an object (a map), not {}", type_of(v)),
            ));
        };
        let (FieldKind::Message(entry) | FieldKind::Group(entry)) = f.kind else {
            return Err(fail(at, "a map field without its entry type"));
        };
        let entry = &self.plan.messages[entry];
        let (Some(k), Some(val)) = (entry.field(1), entry.field(2)) else {
            return Err(fail(at, "a map entry type without key and value"));
        };
        let (key_field, value_field) = (&entry.fields[k], &entry.fields[val]);
        let mut entries: Vec<(SortKey, Vec<u8>)> = Vec::with_capacity(members.len());
        for (key, value) in members {
            let at = At::Key(at, key);
            let (sort, wire) = self.map_key(key_field.kind, key, &at)?;
            let mut body = Vec::new();
            wire.write(key_field.number, &mut body);
            match value_field.kind {
                FieldKind::Message(sub) => {
                    if matches!(value, JsonValue::Null) && !self.is_value(sub) {
                        return Err(fail(&at, "null is not allowed as a map value"));
                    }
                    let mut m = Vec::new();
                    self.message(sub, value, &at, &mut m)?;
                    tag(value_field.number, 2, &mut body);
                    write_len(&m, &mut body);
                }
                kind => {
                    if matches!(value, JsonValue::Null) {
                        return Err(fail(&at, "null is not allowed as a map value"));
                    }
                    self.scalar(kind, value, &at)?
                        .write(value_field.number, &mut body);
                }
            }
            entries.push((sort, body));
        }
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_by(|&a, &b| entries[a].0.cmp(&entries[b].0));
        for pair in order.windows(2) {
            if entries[pair[0]].0 == entries[pair[1]].0 {
                let key = match &entries[pair[1]].0 {
                    SortKey::Bool(b) => b.to_string(),
                    SortKey::Int(n) => n.to_string(),
                    SortKey::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                };
                return Err(fail(at, format!("map key {key:?} given twice")));
            }
        }
        if !self.sort_maps {
            order.sort_unstable();
        }
        for i in order {
            tag(f.number, 2, out);
            write_len(&entries[i].1, out);
        }
        Ok(())
    }

    /// A map key (always a JSON string) of kind `kind`.
    fn map_key(
        &self,
        kind: FieldKind,
        key: &[u8],
        at: &At<'_>,
    ) -> Result<(SortKey, Wire), JsonError> {
        Ok(match kind {
            FieldKind::Bool => match key {
                b"true" => (SortKey::Bool(true), Wire::Varint(1)),
                b"false" => (SortKey::Bool(false), Wire::Varint(0)),
                _ => return Err(fail(at, "a bool map key must be \"true\" or \"false\"")),
            },
            FieldKind::String { .. } => {
                if std::str::from_utf8(key).is_err() {
                    return Err(fail(at, "a string map key that is not UTF-8"));
                }
                (SortKey::Bytes(key.to_vec()), Wire::Len(key.to_vec()))
            }
            kind => {
                let text = JsonValue::String(key.to_vec());
                let wire = self.scalar(kind, &text, at)?;
                let n = match (kind, &wire) {
                    (FieldKind::Sint32, Wire::Varint(z)) => {
                        i128::from(((*z >> 1) as i32) ^ -((*z & 1) as i32))
                    }
                    (FieldKind::Sint64, Wire::Varint(z)) => {
                        i128::from(((*z >> 1) as i64) ^ -((*z & 1) as i64))
                    }
                    (FieldKind::Int32, Wire::Varint(v)) => i128::from(*v as i64),
                    (FieldKind::Int64, Wire::Varint(v)) => i128::from(*v as i64),
                    (FieldKind::Sfixed32, Wire::Fixed32(v)) => i128::from(*v as i32),
                    (FieldKind::Sfixed64, Wire::Fixed64(v)) => i128::from(*v as i64),
                    (_, Wire::Varint(v) | Wire::Fixed64(v)) => i128::from(*v),
                    (_, Wire::Fixed32(v)) => i128::from(*v),
                    (_, Wire::Len(_)) => return Err(fail(at, "not a valid map key type")),
                };
                (SortKey::Int(n), wire)
            }
        })
    }

    /// A scalar of kind `kind` from `v`.
    pub(super) fn scalar(
        &self,
        kind: FieldKind,
        v: &JsonValue,
        at: &At<'_>,
    ) -> Result<Wire, JsonError> {
        Ok(match kind {
            FieldKind::Int32 => {
                Wire::Varint(
                    integer(v, i32::MIN.into(), i32::MAX.into(), "int32", at)? as i64 as u64,
                )
            }
            FieldKind::Int64 => {
                Wire::Varint(
                    integer(v, i64::MIN.into(), i64::MAX.into(), "int64", at)? as i64 as u64,
                )
            }
            FieldKind::Uint32 => Wire::Varint(integer(v, 0, u32::MAX.into(), "uint32", at)? as u64),
            FieldKind::Uint64 => Wire::Varint(integer(v, 0, u64::MAX.into(), "uint64", at)? as u64),
            FieldKind::Sint32 => {
                let n = integer(v, i32::MIN.into(), i32::MAX.into(), "sint32", at)? as i32;
                Wire::Varint(u64::from(((n << 1) ^ (n >> 31)) as u32))
            }
            FieldKind::Sint64 => {
                let n = integer(v, i64::MIN.into(), i64::MAX.into(), "sint64", at)? as i64;
                Wire::Varint(((n << 1) ^ (n >> 63)) as u64)
            }
            FieldKind::Fixed32 => {
                Wire::Fixed32(integer(v, 0, u32::MAX.into(), "fixed32", at)? as u32)
            }
            FieldKind::Fixed64 => {
                Wire::Fixed64(integer(v, 0, u64::MAX.into(), "fixed64", at)? as u64)
            }
            FieldKind::Sfixed32 => {
                Wire::Fixed32(
                    integer(v, i32::MIN.into(), i32::MAX.into(), "sfixed32", at)? as i32 as u32,
                )
            }
            FieldKind::Sfixed64 => {
                Wire::Fixed64(
                    integer(v, i64::MIN.into(), i64::MAX.into(), "sfixed64", at)? as i64 as u64,
                )
            }
            FieldKind::Bool => match v {
                JsonValue::Bool(b) => Wire::Varint(u64::from(*b)),
                _ => {
                    return Err(fail(
                        at,
                        format!("expected true or false, not {}", type_of(v)),
                    ))
                }
            },
            FieldKind::Double => Wire::Fixed64(double(v, at)?.to_bits()),
            FieldKind::Float => Wire::Fixed32(float(v, at)?.to_bits()),
            FieldKind::String { .. } => match v {
                JsonValue::String(s) if std::str::from_utf8(s).is_ok() => Wire::Len(s.clone()),
                JsonValue::String(_) => {
                    return Err(fail(
                        at,
                        "a string that is not UTF-8 (a lone surrogate escape)",
                    ))
                }
                _ => return Err(fail(at, format!("expected a string, not {}", type_of(v)))),
            },
            FieldKind::Bytes => Wire::Len(base64(v, at)?),
            FieldKind::Enum(e) => Wire::Varint(self.enum_value(e, v, at)? as i64 as u64),
            FieldKind::Message(_) | FieldKind::Group(_) => {
                return Err(fail(at, "a message where a scalar was expected"))
            }
        })
    }

    /// An enum value by name, or by number (as a JSON number or a string of
    /// digits); a closed enum refuses a number it does not name.
    fn enum_value(&self, e: usize, v: &JsonValue, at: &At<'_>) -> Result<i32, JsonError> {
        let plan = &self.plan.enums[e];
        if matches!(v, JsonValue::Null) && self.is_null_enum(e) {
            return Ok(0);
        }
        let n = match v {
            JsonValue::String(s) => match plan.number(s) {
                Some(n) => return Ok(n),
                None => match std::str::from_utf8(s)
                    .ok()
                    .and_then(|t| t.parse::<i32>().ok())
                {
                    Some(n) => n,
                    None => {
                        return Err(fail(
                            at,
                            format!("{} is not a value of enum {}", quoted(s), plan.name),
                        ))
                    }
                },
            },
            JsonValue::Number(_) => {
                integer(v, i32::MIN.into(), i32::MAX.into(), "an enum", at)? as i32
            }
            _ => {
                return Err(fail(
                    at,
                    format!("expected an enum name or number, not {}", type_of(v)),
                ))
            }
        };
        if plan.closed && plan.name(n).is_none() {
            return Err(fail(
                at,
                format!("{n} is not a value of the closed enum {}", plan.name),
            ));
        }
        Ok(n)
    }
}

/// An integer in `min..=max` from a JSON number (integral: `5`, `5.0`,
/// `5e2`) or a string of decimal digits (`"-5"`).
fn integer(
    v: &JsonValue,
    min: i128,
    max: i128,
    what: &str,
    at: &At<'_>,
) -> Result<i128, JsonError> {
    let n = match v {
        JsonValue::Number(t) => match t.parse::<i128>() {
            Ok(n) => n,
            Err(_) => {
                let f: f64 = t
                    .parse()
                    .map_err(|_| fail(at, format!("{t} is not an integer")))?;
                if !f.is_finite() || f.fract() != 0.0 {
                    return Err(fail(at, format!("{t} is not an integer")));
                }
                if f.abs() >= 1e38 {
                    return Err(fail(at, format!("{t} is out of range for {what}")));
                }
                f as i128
            }
        },
        JsonValue::String(s) => {
            // Digits, or a number that is integral (`"1.0"`, `"1e2"`), as
            // protobuf's reader takes them; no white space.
            let t = std::str::from_utf8(s).unwrap_or("");
            let numeric = !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
            if !numeric {
                return Err(fail(at, format!("{} is not an integer", quoted(s))));
            }
            return integer(&JsonValue::Number(t.to_owned()), min, max, what, at);
        }
        _ => return Err(fail(at, format!("expected an integer, not {}", type_of(v)))),
    };
    if n < min || n > max {
        return Err(fail(at, format!("{n} is out of range for {what}")));
    }
    Ok(n)
}

/// A double from a JSON number, a numeric string, `"NaN"`, `"Infinity"` or
/// `"-Infinity"`.
pub(super) fn double(v: &JsonValue, at: &At<'_>) -> Result<f64, JsonError> {
    match v {
        JsonValue::Number(t) => {
            let f: f64 = t
                .parse()
                .map_err(|_| fail(at, format!("{t} is not a number")))?;
            if f.is_infinite() {
                return Err(fail(
                    at,
                    format!("{t} is too large for a double (\"Infinity\" is written as a string)"),
                ));
            }
            Ok(f)
        }
        JsonValue::String(s) => {
            let t = std::str::from_utf8(s).unwrap_or("");
            match t {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                "nan" => Err(fail(at, "\"nan\" is written \"NaN\"")),
                // As Python's float(): white space around, and a value
                // too large is infinite.
                t => t
                    .trim()
                    .parse::<f64>()
                    .map(|f| if f.is_nan() { f64::NAN } else { f })
                    .map_err(|_| fail(at, format!("{} is not a number", quoted(s)))),
            }
        }
        _ => Err(fail(at, format!("expected a number, not {}", type_of(v)))),
    }
}

/// A float: a double rounded to the nearest float; a finite value beyond
/// the float range is an error (one that rounds to the largest float, as
/// protobuf prints it, `3.4028235e+38`, is accepted).
fn float(v: &JsonValue, at: &At<'_>) -> Result<f32, JsonError> {
    let d = double(v, at)?;
    let f = d as f32;
    // A number beyond the float range is refused; a string (`"1e39"`) is
    // infinite, as protobuf's reader makes it.
    if d.is_finite() && f.is_infinite() && matches!(v, JsonValue::Number(_)) {
        return Err(fail(at, format!("{d} is out of range for a float")));
    }
    Ok(if f.is_nan() { f32::NAN } else { f })
}

/// Bytes from base64: standard or URL-safe alphabet (even mixed), padded or
/// not.
fn base64(v: &JsonValue, at: &At<'_>) -> Result<Vec<u8>, JsonError> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let JsonValue::String(s) = v else {
        return Err(fail(
            at,
            format!("expected a base64 string, not {}", type_of(v)),
        ));
    };
    let standard: Vec<u8> = s
        .iter()
        .map(|&b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    LENIENT
        .decode(&standard)
        .map_err(|e| fail(at, format!("invalid base64: {e}")))
}
