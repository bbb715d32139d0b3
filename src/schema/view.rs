//! Zero-copy views of a message by its schema: [`MessageRef`] over a
//! record's bytes, [`FieldRef`] for one of its fields, [`ValueRef`] for one
//! value. Under the contract of [`ExampleRef`](crate::view::ExampleRef):
//! [`MessageRef::parse`] checks the whole record first, [`MessageRef::new`]
//! checks nothing and each accessor returns the errors it meets.
//!
//! Nothing is decoded that is not asked for, and nothing is allocated per
//! field: a field is found by walking the record's tags, values are read
//! where they lie, strings and bytes are slices of the record. The one
//! exception is a singular message field that occurs more than once inside
//! a message that itself occurred more than once (a non-canonical encoding
//! two levels deep), whose view holds its parent's in a shared box.
//!
//! The semantics are Google's parser's (upb, C++):
//! - a singular scalar's last occurrence wins; the occurrences of a
//!   singular message merge (its view reads them all, in order);
//! - a repeated field's packed and unpacked runs join, in wire order;
//! - the last member of a oneof on the wire wins, the others read as unset;
//! - a field whose wire type does not match its declaration, and an unknown
//!   value of a closed (proto2) enum, are unknown fields
//!   ([`MessageRef::unknown_fields`]);
//! - maps are their entries in wire order ([`FieldRef::entries`]), where
//!   the last entry of a key wins; an entry's missing key or value is its
//!   default;
//! - a proto3 `string` must be UTF-8 (a proto2 one is left as it is);
//! - messages and groups nest at most 100 deep.

use std::sync::Arc;

use super::plan::{FieldDefault, FieldKind, FieldPlan, MessagePlan, Plan};
use super::Schema;
use crate::wire::{DecodeError, DecodeReason, Field, FieldReader, Value, MAX_DEPTH};

/// Where a message's bytes are: one slice, or the occurrences of a field.
#[derive(Clone, Debug)]
enum Src<'a> {
    One(&'a [u8], u64),
    /// The occurrences of field `number` (a message, or a group when
    /// `group`) in the slice `parent` (nested at `depth`) whose tags are at
    /// `after` or later: merged, in order.
    Merged {
        parent: &'a [u8],
        base: u64,
        depth: u32,
        number: u32,
        group: bool,
        after: u64,
    },
    /// The same within a parent that is itself merged.
    Deep(Arc<Deep<'a>>),
}

#[derive(Debug)]
struct Deep<'a> {
    parent: Src<'a>,
    depth: u32,
    number: u32,
    group: bool,
    after: u64,
}

/// The slices a [`Src`] is made of, in order.
enum Parts<'a> {
    One(Option<(&'a [u8], u64)>),
    Scan {
        outer: Outer<'a>,
        number: u32,
        group: bool,
        after: u64,
    },
}

enum Outer<'a> {
    Reader(FieldReader<'a>),
    Nested(Box<RawFields<'a>>),
}

impl<'a> Parts<'a> {
    fn of(src: &Src<'a>) -> Parts<'a> {
        match src {
            Src::One(b, base) => Parts::One(Some((b, *base))),
            Src::Merged {
                parent,
                base,
                depth,
                number,
                group,
                after,
            } => Parts::Scan {
                outer: Outer::Reader(FieldReader::new(parent, *base, *depth)),
                number: *number,
                group: *group,
                after: *after,
            },
            Src::Deep(d) => Parts::Scan {
                outer: Outer::Nested(Box::new(RawFields::new(&d.parent, d.depth))),
                number: d.number,
                group: d.group,
                after: d.after,
            },
        }
    }

    fn next(&mut self) -> Option<Result<(&'a [u8], u64), DecodeError>> {
        match self {
            Parts::One(one) => one.take().map(Ok),
            Parts::Scan {
                outer,
                number,
                group,
                after,
            } => loop {
                let field = match outer {
                    Outer::Reader(r) => r.next(),
                    Outer::Nested(n) => n.next(),
                }?;
                let field = match field {
                    Ok(f) => f,
                    Err(e) => return Some(Err(e)),
                };
                if field.number != *number || field.offset < *after {
                    continue;
                }
                match (field.value, *group) {
                    (Value::Len(b), false) | (Value::Group(b), true) => {
                        return Some(Ok((b, field.value_offset)))
                    }
                    _ => {}
                }
            },
        }
    }
}

/// Every field on the wire of a message view, known or not, in wire order
/// ([`MessageRef::raw_fields`]); fused after an error.
pub struct RawFields<'a> {
    parts: Parts<'a>,
    current: Option<FieldReader<'a>>,
    depth: u32,
    failed: bool,
}

impl<'a> RawFields<'a> {
    fn new(src: &Src<'a>, depth: u32) -> RawFields<'a> {
        RawFields {
            parts: Parts::of(src),
            current: None,
            depth,
            failed: false,
        }
    }
}

impl<'a> Iterator for RawFields<'a> {
    type Item = Result<Field<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(r) = &mut self.current {
                match r.next() {
                    Some(Ok(f)) => return Some(Ok(f)),
                    Some(Err(e)) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                    None => self.current = None,
                }
            }
            match self.parts.next()? {
                Ok((bytes, base)) => self.current = Some(FieldReader::new(bytes, base, self.depth)),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

/// A message read by its schema, borrowed from a record (see the [module
/// documentation](self) for the semantics).
///
/// ```
/// use recordwire::schema::{MessageRef, Schema, ValueRef};
///
/// let dir = tempfile::tempdir()?;
/// let proto = dir.path().join("p.proto");
/// std::fs::write(&proto, "syntax = \"proto3\"; package demo;
///     message Point { int64 x = 1; string label = 2; repeated float w = 3; }")?;
/// let schema = Schema::from_proto(&[&proto], &[dir.path()], "demo.Point")?;
/// // x = 7, label = "a", w = [1.0] (packed), then x = 9: the last x wins.
/// let record = b"\x08\x07\x12\x01a\x1a\x04\x00\x00\x80\x3f\x08\x09";
/// let point = MessageRef::parse(&schema, record, 0)?;
/// assert_eq!(point.field("x").unwrap().get()?, Some(ValueRef::Int64(9)));
/// assert_eq!(point.field("label").unwrap().get()?.and_then(|v| v.as_str()), Some("a"));
/// let w: Vec<ValueRef> = point.field("w").unwrap().values().collect::<Result<_, _>>()?;
/// assert_eq!(w, [ValueRef::Float(1.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct MessageRef<'a> {
    plan: &'a Plan,
    msg: usize,
    src: Src<'a>,
    depth: u32,
}

impl std::fmt::Debug for MessageRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageRef")
            .field("message", &self.plan().name)
            .field("src", &self.src)
            .finish()
    }
}

impl PartialEq for MessageRef<'_> {
    /// The same message type over the same bytes.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.plan, other.plan)
            && self.msg == other.msg
            && match (&self.src, &other.src) {
                (Src::One(a, x), Src::One(b, y)) => a == b && x == y,
                _ => false,
            }
    }
}

impl<'a> MessageRef<'a> {
    /// A view of `record` (whose first byte is at absolute offset `base`) as
    /// the schema's root message, checking nothing.
    pub fn new(schema: &'a Schema, record: &'a [u8], base: u64) -> MessageRef<'a> {
        MessageRef {
            plan: schema.plan(),
            msg: 0,
            src: Src::One(record, base),
            depth: 0,
        }
    }

    /// A view of `record` after checking all of it ([`check`](Self::check)).
    pub fn parse(
        schema: &'a Schema,
        record: &'a [u8],
        base: u64,
    ) -> Result<MessageRef<'a>, DecodeError> {
        let view = MessageRef::new(schema, record, base);
        view.check()?;
        Ok(view)
    }

    fn plan(&self) -> &'a MessagePlan {
        &self.plan.messages[self.msg]
    }

    /// Checks the whole message as Google's parser would before accepting
    /// it: its tags, lengths and groups, its known fields' packed runs and
    /// nested messages (to a depth of 100), and its proto3 strings' UTF-8.
    pub fn check(&self) -> Result<(), DecodeError> {
        if self.depth > MAX_DEPTH {
            return Err(DecodeError::new(
                self.offset(),
                DecodeReason::DepthLimitExceeded,
            ));
        }
        let plan = self.plan();
        for field in self.raw_fields() {
            let field = field?;
            let Some(i) = plan.field(field.number) else {
                continue;
            };
            let f = &plan.fields[i];
            match (f.kind, field.value) {
                (FieldKind::Message(sub), Value::Len(b))
                | (FieldKind::Group(sub), Value::Group(b)) => {
                    self.child(sub, Src::One(b, field.value_offset)).check()?;
                }
                (FieldKind::String { utf8: true }, Value::Len(b))
                    if std::str::from_utf8(b).is_err() =>
                {
                    return Err(DecodeError::new(
                        field.value_offset,
                        DecodeReason::InvalidUtf8,
                    ));
                }
                (kind, Value::Len(run)) if f.repeated && kind.packable() => {
                    unpack(kind, run, field.value_offset, |_| {})?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn child(&self, msg: usize, src: Src<'a>) -> MessageRef<'a> {
        MessageRef {
            plan: self.plan,
            msg,
            src,
            depth: self.depth + 1,
        }
    }

    /// The absolute offset of the message's first byte (of its first
    /// occurrence's, for a merged one).
    pub fn offset(&self) -> u64 {
        match &self.src {
            Src::One(_, base) => *base,
            Src::Merged { base, .. } => *base,
            Src::Deep(d) => match &d.parent {
                Src::One(_, base) | Src::Merged { base, .. } => *base,
                Src::Deep(_) => 0,
            },
        }
    }

    /// The message type's full name, `package.Message`.
    pub fn message_name(&self) -> &'a str {
        &self.plan().name
    }

    /// The message's bytes, when it is one slice (always, but for a
    /// singular message field that occurs more than once).
    pub fn bytes(&self) -> Option<&'a [u8]> {
        match self.src {
            Src::One(b, _) => Some(b),
            _ => None,
        }
    }

    /// The field named `name` (its name in the `.proto`, or its JSON name),
    /// or `None` when the type has no such field.
    pub fn field(&self, name: &str) -> Option<FieldRef<'a>> {
        let index = self.plan().field_named(name)?;
        Some(self.field_at(index))
    }

    /// The field numbered `number`, or `None` when the type has no such field.
    pub fn field_number(&self, number: u32) -> Option<FieldRef<'a>> {
        let index = self.plan().field(number)?;
        Some(self.field_at(index))
    }

    fn field_at(&self, index: usize) -> FieldRef<'a> {
        FieldRef {
            msg: self.clone(),
            index,
        }
    }

    /// Every field of the type, set or not, by field number.
    pub fn fields(&self) -> impl Iterator<Item = FieldRef<'a>> + '_ {
        (0..self.plan().fields.len()).map(|i| self.field_at(i))
    }

    /// Every field on the wire, known or not, in wire order.
    pub fn raw_fields(&self) -> RawFields<'a> {
        RawFields::new(&self.src, self.depth)
    }

    /// The unknown fields, in wire order: numbers the type does not have,
    /// known numbers with another wire type, and a closed enum's unknown
    /// values (each one a varint field of its own, as upb keeps them; those
    /// of a packed run carry the run's offsets).
    pub fn unknown_fields(&self) -> UnknownFields<'a> {
        UnknownFields {
            plan: self.plan,
            msg: self.msg,
            raw: self.raw_fields(),
            run: None,
        }
    }
}

/// The unknown fields of a message ([`MessageRef::unknown_fields`]).
pub struct UnknownFields<'a> {
    plan: &'a Plan,
    msg: usize,
    raw: RawFields<'a>,
    /// A packed run of a closed enum being read: its field number, the rest
    /// of its bytes, and its offsets.
    run: Option<(u32, &'a [u8], u64, u64)>,
}

impl<'a> Iterator for UnknownFields<'a> {
    type Item = Result<Field<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((number, rest, offset, value_offset)) = self.run {
                if rest.is_empty() {
                    self.run = None;
                    continue;
                }
                let (v, n) = match crate::wire::decode_varint(rest) {
                    Ok(x) => x,
                    Err(reason) => {
                        self.run = None;
                        return Some(Err(DecodeError::new(value_offset, reason)));
                    }
                };
                self.run = Some((number, &rest[n..], offset, value_offset));
                if self.closed_unknown(number, v) {
                    return Some(Ok(Field {
                        number,
                        value: Value::Varint(v),
                        offset,
                        value_offset,
                    }));
                }
                continue;
            }
            let field = match self.raw.next()? {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            let plan = &self.plan.messages[self.msg];
            let Some(i) = plan.field(field.number) else {
                return Some(Ok(field));
            };
            let f = &plan.fields[i];
            let wire = field.value.wire_type() as u8;
            let packed = f.repeated && f.kind.packable() && wire == 2;
            if wire != f.kind.wire_type() && !packed {
                return Some(Ok(field));
            }
            if let FieldKind::Enum(_) = f.kind {
                match field.value {
                    Value::Varint(v) if self.closed_unknown(field.number, v) => {
                        return Some(Ok(field));
                    }
                    Value::Len(run) => {
                        self.run = Some((field.number, run, field.offset, field.value_offset));
                    }
                    _ => {}
                }
            }
        }
    }
}

impl UnknownFields<'_> {
    fn closed_unknown(&self, number: u32, v: u64) -> bool {
        let plan = &self.plan.messages[self.msg];
        let Some(i) = plan.field(number) else {
            return false;
        };
        match plan.fields[i].kind {
            FieldKind::Enum(e) => {
                let e = &self.plan.enums[e];
                e.closed && e.name(v as i32).is_none()
            }
            _ => false,
        }
    }
}

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
    fn of(kind: FieldKind) -> FieldType {
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
        let f = self.plan();
        let plan = self.msg.plan;
        Ok(Some(match (f.kind, value) {
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
            (FieldKind::Sint32, Value::Varint(v)) => {
                let v = v as u32;
                ValueRef::Int32(((v >> 1) as i32) ^ -((v & 1) as i32))
            }
            (FieldKind::Sint64, Value::Varint(v)) => {
                ValueRef::Int64(((v >> 1) as i64) ^ -((v & 1) as i64))
            }
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
            (FieldKind::Message(m), Value::Len(b)) | (FieldKind::Group(m), Value::Group(b)) => {
                ValueRef::Message(self.msg.child(m, Src::One(b, offset)))
            }
            _ => return Ok(None),
        }))
    }

    /// Whether the wire value `value` is an occurrence of this field.
    fn matches(&self, value: &Value<'_>) -> bool {
        let f = self.plan();
        let wire = value.wire_type() as u8;
        wire == f.kind.wire_type() || (f.repeated && f.kind.packable() && wire == 2)
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
                let src = match &self.msg.src {
                    Src::One(parent, base) => Src::Merged {
                        parent,
                        base: *base,
                        depth: self.msg.depth,
                        number,
                        group,
                        after: reset_at,
                    },
                    other => Src::Deep(Arc::new(Deep {
                        parent: other.clone(),
                        depth: self.msg.depth,
                        number,
                        group,
                        after: reset_at,
                    })),
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
                ValueRef::Message(self.msg.child(m, Src::One(&[], self.msg.offset())))
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
fn next_packed(
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
fn unpack<'a>(
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
