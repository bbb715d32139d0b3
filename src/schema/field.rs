//! One field of a message view ([`FieldRef`]) and its values ([`ValueRef`]),
//! read with Google's parser's rules (see [`super::view`]).

use std::sync::Arc;

use super::plan::{zigzag32, zigzag64, FieldDefault, FieldKind, FieldPlan, MessagePlan, Plan};
use super::view::{Deep, MergeKey, MessageRef, RawFields, Src};
use crate::wire::{DecodeError, DecodeReason, Value};

/// A field's type, as declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum FieldType {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
    Enum,
    Message,
    Group,
}

impl FieldType {
    pub(crate) fn of(kind: FieldKind) -> FieldType {
        match kind {
            FieldKind::Double => FieldType::Double,
            FieldKind::Float => FieldType::Float,
            FieldKind::Int32 => FieldType::Int32,
            FieldKind::Int64 => FieldType::Int64,
            FieldKind::Uint32 => FieldType::Uint32,
            FieldKind::Uint64 => FieldType::Uint64,
            FieldKind::Sint32 => FieldType::Sint32,
            FieldKind::Sint64 => FieldType::Sint64,
            FieldKind::Fixed32 => FieldType::Fixed32,
            FieldKind::Fixed64 => FieldType::Fixed64,
            FieldKind::Sfixed32 => FieldType::Sfixed32,
            FieldKind::Sfixed64 => FieldType::Sfixed64,
            FieldKind::Bool => FieldType::Bool,
            FieldKind::String { .. } => FieldType::String,
            FieldKind::Bytes => FieldType::Bytes,
            FieldKind::Enum(_) => FieldType::Enum,
            FieldKind::Message(_) => FieldType::Message,
            FieldKind::Group(_) => FieldType::Group,
        }
    }

    /// Its name in a `.proto` (`group` for a group).
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Double => "double",
            FieldType::Float => "float",
            FieldType::Int32 => "int32",
            FieldType::Int64 => "int64",
            FieldType::Uint32 => "uint32",
            FieldType::Uint64 => "uint64",
            FieldType::Sint32 => "sint32",
            FieldType::Sint64 => "sint64",
            FieldType::Fixed32 => "fixed32",
            FieldType::Fixed64 => "fixed64",
            FieldType::Sfixed32 => "sfixed32",
            FieldType::Sfixed64 => "sfixed64",
            FieldType::Bool => "bool",
            FieldType::String => "string",
            FieldType::Bytes => "bytes",
            FieldType::Enum => "enum",
            FieldType::Message => "message",
            FieldType::Group => "group",
        }
    }
}

/// One value of a field, borrowed from the record.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueRef<'a> {
    /// `double`
    Double(f64),
    /// `float`
    Float(f32),
    /// `int32`, `sint32`, `sfixed32`
    Int32(i32),
    /// `int64`, `sint64`, `sfixed64`
    Int64(i64),
    /// `uint32`, `fixed32`
    Uint32(u32),
    /// `uint64`, `fixed64`
    Uint64(u64),
    /// `bool`
    Bool(bool),
    /// `string`: UTF-8 checked where it is a proto3 string, else as the
    /// wire holds it ([`as_str`](Self::as_str)).
    String(&'a [u8]),
    /// `bytes`
    Bytes(&'a [u8]),
    /// An enum's value: its number, and its name where the enum has one.
    Enum(i32, Option<&'a str>),
    /// A message or group.
    Message(MessageRef<'a>),
}

impl<'a> ValueRef<'a> {
    /// A string's text, when it is UTF-8.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            ValueRef::String(s) => std::str::from_utf8(s).ok(),
            _ => None,
        }
    }
}

/// One field of a message view ([`MessageRef::field`]).
#[derive(Debug, Clone)]
pub struct FieldRef<'a> {
    msg: MessageRef<'a>,
    index: usize,
}

impl<'a> FieldRef<'a> {
    pub(super) fn new(msg: MessageRef<'a>, index: usize) -> FieldRef<'a> {
        FieldRef { msg, index }
    }

    fn plan(&self) -> &'a FieldPlan {
        &self.msg.plan().fields[self.index]
    }

    /// Its name in the `.proto`.
    pub fn name(&self) -> &'a str {
        &self.plan().name
    }

    /// Its JSON name (lowerCamelCase, or `json_name`).
    pub fn json_name(&self) -> &'a str {
        &self.plan().json_name
    }

    /// Its number.
    pub fn number(&self) -> u32 {
        self.plan().number
    }

    /// Its type.
    pub fn field_type(&self) -> FieldType {
        FieldType::of(self.plan().kind)
    }

    /// The full name of its message or enum type, for those kinds.
    pub fn type_name(&self) -> Option<&'a str> {
        match self.plan().kind {
            FieldKind::Message(m) | FieldKind::Group(m) => Some(&self.msg.plan.messages[m].name),
            FieldKind::Enum(e) => Some(&self.msg.plan.enums[e].name),
            _ => None,
        }
    }

    /// Its type as a `.proto` declares it: `int32`, `string`,
    /// `pkg.Message`, `pkg.Enum`, `map<string, pkg.Message>`.
    pub fn declared_type(&self) -> String {
        let plan = self.msg.plan;
        let name = |kind: FieldKind| -> String {
            match kind {
                FieldKind::Message(m) | FieldKind::Group(m) => plan.messages[m].name.clone(),
                FieldKind::Enum(e) => plan.enums[e].name.clone(),
                other => FieldType::of(other).name().to_owned(),
            }
        };
        let f = self.plan();
        if let (true, FieldKind::Message(entry)) = (f.map, f.kind) {
            let entry = &plan.messages[entry];
            if let (Some(k), Some(v)) = (entry.field(1), entry.field(2)) {
                return format!(
                    "map<{}, {}>",
                    name(entry.fields[k].kind),
                    name(entry.fields[v].kind)
                );
            }
        }
        name(f.kind)
    }

    /// Whether it is repeated (maps are).
    pub fn is_repeated(&self) -> bool {
        self.plan().repeated
    }

    /// Whether it is a map.
    pub fn is_map(&self) -> bool {
        self.plan().map
    }

    /// Whether it has explicit presence (proto2 fields, proto3 `optional`,
    /// messages, oneof members): set even at its default once it occurs.
    pub fn has_presence(&self) -> bool {
        self.plan().presence
    }

    /// The value as the parser would keep it from the wire value `value`
    /// (its wire type already matched), or `None` for a closed enum's
    /// unknown number.
    fn value(&self, value: Value<'a>, offset: u64) -> Result<Option<ValueRef<'a>>, DecodeError> {
        match (self.plan().kind, value) {
            (FieldKind::Message(m), Value::Len(b)) | (FieldKind::Group(m), Value::Group(b)) => {
                Ok(Some(ValueRef::Message(
                    self.msg.child(m, Src::Bytes(b, offset, None)),
                )))
            }
            (kind, value) => scalar_of(self.msg.plan, kind, value, offset),
        }
    }

    /// Whether the wire value `value` is an occurrence of this field.
    fn matches(&self, value: &Value<'_>) -> bool {
        self.plan().accepts(value)
    }

    /// A singular field's value if it is set on the wire: the last
    /// occurrence of a scalar, the merge of a message's occurrences; `None`
    /// when it does not occur (or only as unknown values), when another
    /// member of its oneof came later, and for a repeated field (see
    /// [`values`](Self::values)).
    pub fn get(&self) -> Result<Option<ValueRef<'a>>, DecodeError> {
        let f = self.plan();
        if f.repeated {
            return Ok(None);
        }
        let plan = self.msg.plan();
        let number = f.number;
        // The last occurrence that counts, how many there are since the
        // last member of the oneof (for a message), and where that was.
        let mut last: Option<(Value<'a>, u64, u64)> = None;
        let mut count = 0usize;
        let mut reset_at = 0u64;
        for field in self.msg.raw_fields() {
            let field = field?;
            if field.number == number {
                if !self.matches(&field.value) {
                    continue;
                }
                if self.value(field.value, field.value_offset)?.is_none() {
                    continue;
                }
                last = Some((field.value, field.value_offset, field.offset));
                count += 1;
            } else if let Some(o) = f.oneof {
                let Some(i) = plan.field(field.number) else {
                    continue;
                };
                let other = FieldRef {
                    msg: self.msg.clone(),
                    index: i,
                };
                if plan.fields[i].oneof == Some(o)
                    && other.matches(&field.value)
                    && other.value(field.value, field.value_offset)?.is_some()
                {
                    last = None;
                    count = 0;
                    reset_at = field.offset + 1;
                }
            }
        }
        let Some((value, value_offset, _)) = last else {
            return Ok(None);
        };
        match f.kind {
            FieldKind::Message(m) | FieldKind::Group(m) if count > 1 => {
                let group = matches!(f.kind, FieldKind::Group(_));
                let deep = |parent| {
                    Src::Deep(Arc::new(Deep {
                        parent,
                        depth: self.msg.depth,
                        number,
                        group,
                        after: reset_at,
                    }))
                };
                let src = match &self.msg.src {
                    Src::Bytes(parent, base, None) => {
                        // `reset_at` is past `base` when it is not 0.
                        let after = reset_at.saturating_sub(*base);
                        match MergeKey::new(number, group, after) {
                            Some(key) => Src::Bytes(parent, *base, Some(key)),
                            None => deep(self.msg.src.clone()),
                        }
                    }
                    other => deep(other.clone()),
                };
                Ok(Some(ValueRef::Message(self.msg.child(m, src))))
            }
            _ => self.value(value, value_offset),
        }
    }

    /// A singular field's value, or its default when it is not set: proto2's
    /// `[default = …]` or the type's zero (an enum's first value; an empty
    /// message). For a repeated field, `None`.
    pub fn get_or_default(&self) -> Result<Option<ValueRef<'a>>, DecodeError> {
        if let Some(v) = self.get()? {
            return Ok(Some(v));
        }
        let f = self.plan();
        if f.repeated {
            return Ok(None);
        }
        let plan = self.msg.plan;
        Ok(Some(match (&f.default, f.kind) {
            (_, FieldKind::Message(m) | FieldKind::Group(m)) => {
                ValueRef::Message(self.msg.child(m, Src::Bytes(&[], self.msg.offset(), None)))
            }
            (FieldDefault::Enum(n), FieldKind::Enum(e)) => {
                ValueRef::Enum(*n, plan.enums[e].name(*n))
            }
            (FieldDefault::Bool(v), _) => ValueRef::Bool(*v),
            (FieldDefault::I32(v), _) => ValueRef::Int32(*v),
            (FieldDefault::I64(v), _) => ValueRef::Int64(*v),
            (FieldDefault::U32(v), _) => ValueRef::Uint32(*v),
            (FieldDefault::U64(v), _) => ValueRef::Uint64(*v),
            (FieldDefault::F32(v), _) => ValueRef::Float(*v),
            (FieldDefault::F64(v), _) => ValueRef::Double(*v),
            (FieldDefault::Bytes(b), FieldKind::String { .. }) => ValueRef::String(b),
            (FieldDefault::Bytes(b), _) => ValueRef::Bytes(b),
            _ => return Ok(None),
        }))
    }

    /// Whether the field is set as protobuf's `HasField` (or, without
    /// presence, a non-default value; for a repeated field, any element).
    pub fn is_set(&self) -> Result<bool, DecodeError> {
        let f = self.plan();
        if f.repeated {
            return Ok(self.values().next().transpose()?.is_some());
        }
        let v = self.get()?;
        if f.presence {
            return Ok(v.is_some());
        }
        Ok(match v {
            None => false,
            Some(ValueRef::Double(x)) => x.to_bits() != 0,
            Some(ValueRef::Float(x)) => x.to_bits() != 0,
            Some(ValueRef::Int32(x)) => x != 0,
            Some(ValueRef::Int64(x)) => x != 0,
            Some(ValueRef::Uint32(x)) => x != 0,
            Some(ValueRef::Uint64(x)) => x != 0,
            Some(ValueRef::Bool(x)) => x,
            Some(ValueRef::String(s) | ValueRef::Bytes(s)) => !s.is_empty(),
            Some(ValueRef::Enum(n, _)) => n != 0,
            Some(ValueRef::Message(_)) => true,
        })
    }

    /// The field's values in wire order: a repeated field's elements
    /// (packed and unpacked runs joined; a map's entries as messages, see
    /// [`entries`](Self::entries)), or a singular field's value if set.
    pub fn values(&self) -> Values<'a> {
        let singular = if self.plan().repeated {
            None
        } else {
            Some(self.get().transpose())
        };
        Values {
            field: self.clone(),
            raw: self.msg.raw_fields(),
            run: None,
            singular,
        }
    }

    /// The number of values ([`values`](Self::values)).
    pub fn len(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for v in self.values() {
            v?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether it has no values.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.values().next().transpose()?.is_none())
    }

    /// A map's entries in wire order, each as its key and value (an entry's
    /// missing key or value is the default); the last entry of a key is the
    /// one that counts. Nothing for a field that is not a map.
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            values: if self.is_map() {
                Some(self.values())
            } else {
                None
            },
        }
    }
}

/// The scalar (not message) value of kind `kind` that the wire value
/// `value` holds, as the parser keeps it: `None` where the wire type does not
/// match and for a closed enum's unknown number.
#[inline]
pub(crate) fn scalar_of<'a>(
    plan: &'a Plan,
    kind: FieldKind,
    value: Value<'a>,
    offset: u64,
) -> Result<Option<ValueRef<'a>>, DecodeError> {
    Ok(Some(match (kind, value) {
        (FieldKind::Enum(e), Value::Varint(v)) => {
            let e = &plan.enums[e];
            let name = e.name(v as i32);
            if e.closed && name.is_none() {
                return Ok(None);
            }
            ValueRef::Enum(v as i32, name)
        }
        (FieldKind::Int32, Value::Varint(v)) => ValueRef::Int32(v as i32),
        (FieldKind::Int64, Value::Varint(v)) => ValueRef::Int64(v as i64),
        (FieldKind::Uint32, Value::Varint(v)) => ValueRef::Uint32(v as u32),
        (FieldKind::Uint64, Value::Varint(v)) => ValueRef::Uint64(v),
        (FieldKind::Sint32, Value::Varint(v)) => ValueRef::Int32(zigzag32(v as u32)),
        (FieldKind::Sint64, Value::Varint(v)) => ValueRef::Int64(zigzag64(v)),
        (FieldKind::Bool, Value::Varint(v)) => ValueRef::Bool(v != 0),
        (FieldKind::Fixed32, Value::Fixed32(v)) => ValueRef::Uint32(v),
        (FieldKind::Sfixed32, Value::Fixed32(v)) => ValueRef::Int32(v as i32),
        (FieldKind::Float, Value::Fixed32(v)) => ValueRef::Float(f32::from_bits(v)),
        (FieldKind::Fixed64, Value::Fixed64(v)) => ValueRef::Uint64(v),
        (FieldKind::Sfixed64, Value::Fixed64(v)) => ValueRef::Int64(v as i64),
        (FieldKind::Double, Value::Fixed64(v)) => ValueRef::Double(f64::from_bits(v)),
        (FieldKind::String { utf8 }, Value::Len(b)) => {
            if utf8 && std::str::from_utf8(b).is_err() {
                return Err(DecodeError::new(offset, DecodeReason::InvalidUtf8));
            }
            ValueRef::String(b)
        }
        (FieldKind::Bytes, Value::Len(b)) => ValueRef::Bytes(b),
        _ => return Ok(None),
    }))
}

/// A field's values ([`FieldRef::values`]).
pub struct Values<'a> {
    field: FieldRef<'a>,
    raw: RawFields<'a>,
    /// A packed run being read: its rest and its offset.
    run: Option<(&'a [u8], u64)>,
    singular: Option<Option<Result<ValueRef<'a>, DecodeError>>>,
}

impl<'a> Iterator for Values<'a> {
    type Item = Result<ValueRef<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(one) = &mut self.singular {
            return one.take();
        }
        let kind = self.field.plan().kind;
        let number = self.field.plan().number;
        loop {
            if let Some((rest, offset)) = &mut self.run {
                if rest.is_empty() {
                    self.run = None;
                    continue;
                }
                let (value, n) = match next_packed(kind, rest, *offset) {
                    Ok(x) => x,
                    Err(e) => {
                        self.run = None;
                        self.singular = Some(None);
                        return Some(Err(e));
                    }
                };
                *rest = &rest[n..];
                match self.field.value(value, *offset) {
                    Ok(Some(v)) => return Some(Ok(v)),
                    Ok(None) => continue,
                    Err(e) => return Some(Err(e)),
                }
            }
            let field = match self.raw.next()? {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            if field.number != number || !self.field.matches(&field.value) {
                continue;
            }
            match field.value {
                Value::Len(run) if kind.packable() => {
                    self.run = Some((run, field.value_offset));
                }
                value => match self.field.value(value, field.value_offset) {
                    Ok(Some(v)) => return Some(Ok(v)),
                    Ok(None) => continue,
                    Err(e) => return Some(Err(e)),
                },
            }
        }
    }
}

/// The first element of a packed run of kind `kind` and the bytes it took.
#[inline]
pub(crate) fn next_packed(
    kind: FieldKind,
    run: &[u8],
    offset: u64,
) -> Result<(Value<'_>, usize), DecodeError> {
    match kind.wire_type() {
        1 | 5 => {
            let w = if kind.wire_type() == 1 { 8 } else { 4 };
            let Some(chunk) = run.get(..w) else {
                return Err(DecodeError::new(
                    offset,
                    DecodeReason::PackedLength {
                        length: run.len() as u64,
                        width: w as u8,
                    },
                ));
            };
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(chunk);
            let v = u64::from_le_bytes(b);
            Ok((
                if w == 8 {
                    Value::Fixed64(v)
                } else {
                    Value::Fixed32(v as u32)
                },
                w,
            ))
        }
        _ => {
            let (v, n) = crate::wire::decode_varint(run)
                .map_err(|reason| DecodeError::new(offset, reason))?;
            Ok((Value::Varint(v), n))
        }
    }
}

/// Checks a packed run of kind `kind`, calling `each` on its elements.
pub(super) fn unpack<'a>(
    kind: FieldKind,
    run: &'a [u8],
    offset: u64,
    mut each: impl FnMut(Value<'a>),
) -> Result<(), DecodeError> {
    let w = match kind.wire_type() {
        1 => 8,
        5 => 4,
        _ => 0,
    };
    if w > 0 && !run.len().is_multiple_of(w) {
        return Err(DecodeError::new(
            offset,
            DecodeReason::PackedLength {
                length: run.len() as u64,
                width: w as u8,
            },
        ));
    }
    let mut rest = run;
    while !rest.is_empty() {
        let (v, n) = next_packed(kind, rest, offset)?;
        each(v);
        rest = &rest[n..];
    }
    Ok(())
}

/// A map's entries ([`FieldRef::entries`]).
pub struct Entries<'a> {
    values: Option<Values<'a>>,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(ValueRef<'a>, ValueRef<'a>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.values.as_mut()?.next()? {
                Ok(ValueRef::Message(m)) => m,
                Ok(_) => continue,
                Err(e) => return Some(Err(e)),
            };
            let key = entry.field_number(1).map(|k| k.get_or_default());
            let value = entry.field_number(2).map(|v| v.get_or_default());
            match (key, value) {
                (Some(Ok(Some(k))), Some(Ok(Some(v)))) => return Some(Ok((k, v))),
                (Some(Err(e)), _) | (_, Some(Err(e))) => return Some(Err(e)),
                _ => continue,
            }
        }
    }
}

/// Every value of the known fields of a message in wire order, in one pass
/// ([`MessageRef::wire_values`]).
pub struct WireValues<'a> {
    plan: &'a Plan,
    /// The message's type.
    m: &'a MessagePlan,
    /// The depth of the message's own messages.
    depth: u32,
    raw: RawFields<'a>,
    /// A packed run being read: its field, kind, rest and offset.
    run: Option<(u32, FieldKind, &'a [u8], u64)>,
}

impl<'a> WireValues<'a> {
    #[inline]
    pub(super) fn new(msg: &MessageRef<'a>) -> WireValues<'a> {
        WireValues {
            plan: msg.plan,
            m: msg.plan(),
            depth: msg.depth + 1,
            raw: msg.raw_fields(),
            run: None,
        }
    }

    /// The next value of the packed run being read, if any is left.
    #[inline]
    fn next_in_run(&mut self) -> Option<Result<(u32, ValueRef<'a>), DecodeError>> {
        while let Some((number, kind, rest, offset)) = self.run {
            if rest.is_empty() {
                self.run = None;
                break;
            }
            let (value, n) = match next_packed(kind, rest, offset) {
                Ok(x) => x,
                Err(e) => {
                    self.run = None;
                    return Some(Err(e));
                }
            };
            self.run = Some((number, kind, &rest[n..], offset));
            match scalar_of(self.plan, kind, value, offset) {
                Ok(Some(v)) => return Some(Ok((number, v))),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
        None
    }
}

impl<'a> Iterator for WireValues<'a> {
    /// The field number and the value.
    type Item = Result<(u32, ValueRef<'a>), DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.run.is_some() {
                if let Some(v) = self.next_in_run() {
                    return Some(v);
                }
            }
            let field = match self.raw.next()? {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            let Some(i) = self.m.field(field.number) else {
                continue;
            };
            let f = &self.m.fields[i];
            let value = match (f.kind, field.value) {
                (FieldKind::Message(sub), Value::Len(b))
                | (FieldKind::Group(sub), Value::Group(b)) => {
                    return Some(Ok((
                        field.number,
                        ValueRef::Message(MessageRef::at(
                            self.plan,
                            sub,
                            b,
                            field.value_offset,
                            self.depth,
                        )),
                    )));
                }
                (kind, Value::Len(run)) if f.repeated && kind.packable() => {
                    self.run = Some((field.number, kind, run, field.value_offset));
                    continue;
                }
                (kind, value) => scalar_of(self.plan, kind, value, field.value_offset),
            };
            match value {
                Ok(Some(v)) => return Some(Ok((field.number, v))),
                Ok(None) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
