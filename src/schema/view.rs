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

use std::num::NonZeroU64;
use std::sync::Arc;

use super::field::{unpack, FieldRef, WireValues};
use super::plan::{FieldKind, MessagePlan, Plan};
use super::Schema;
use crate::wire::{ByteReader, DecodeError, DecodeReason, Field, FieldReader, Value, MAX_DEPTH};

/// Where a message's bytes are: one slice (always, but for a singular
/// message field that occurs more than once), or the occurrences of a field.
/// Four words, so that a view of a message, and a value that holds one, stay
/// small enough to move about cheaply.
#[derive(Clone, Debug)]
pub(super) enum Src<'a> {
    /// The slice `bytes` at absolute offset `base`: the message itself, or
    /// with a [`MergeKey`] the message (nested one deeper than the slice)
    /// whose occurrences it holds.
    Bytes(&'a [u8], u64, Option<MergeKey>),
    /// The occurrences of a field within a message that is itself merged
    /// (or in a slice too long for a [`MergeKey`]): in a shared box.
    Deep(Arc<Deep<'a>>),
}

/// Which occurrences of a field in a slice make a merged message: field
/// `number` (a message, or a group when `group`), whose tags are `after`
/// bytes past the slice's start or later. Packed in a word: the number in
/// bits 0..29, `group` in bit 29, `after` in bits 32..64 (never zero: a
/// field number is not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MergeKey(NonZeroU64);

impl MergeKey {
    /// The key, when `after` (relative to the slice) fits.
    pub(super) fn new(number: u32, group: bool, after: u64) -> Option<MergeKey> {
        let after = u32::try_from(after).ok()?;
        let word =
            u64::from(number & 0x1fff_ffff) | u64::from(group) << 29 | u64::from(after) << 32;
        NonZeroU64::new(word).map(MergeKey)
    }

    fn number(self) -> u32 {
        (self.0.get() & 0x1fff_ffff) as u32
    }

    fn group(self) -> bool {
        self.0.get() >> 29 & 1 == 1
    }

    fn after(self) -> u64 {
        self.0.get() >> 32
    }
}

/// The occurrences of field `number` (a message, or a group when `group`)
/// in the message `parent` (nested at `depth`) whose tags are at absolute
/// offset `after` or later: merged, in order.
#[derive(Debug)]
pub(super) struct Deep<'a> {
    pub(super) parent: Src<'a>,
    pub(super) depth: u32,
    pub(super) number: u32,
    pub(super) group: bool,
    pub(super) after: u64,
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
    /// The parts of `src`, a message nested at `depth`.
    fn of(src: &Src<'a>, depth: u32) -> Parts<'a> {
        match src {
            Src::Bytes(b, base, None) => Parts::One(Some((b, *base))),
            Src::Bytes(parent, base, Some(key)) => Parts::Scan {
                outer: Outer::Reader(FieldReader::new(parent, *base, depth.saturating_sub(1))),
                number: key.number(),
                group: key.group(),
                after: base + key.after(),
            },
            Src::Deep(d) => Parts::Scan {
                outer: match &d.parent {
                    Src::Bytes(parent, base, None) => {
                        Outer::Reader(FieldReader::new(parent, *base, d.depth))
                    }
                    parent => Outer::Nested(Box::new(RawFields::new(parent, d.depth))),
                },
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
    #[inline]
    fn new(src: &Src<'a>, depth: u32) -> RawFields<'a> {
        // One slice (the usual case): read at once, no parts to go through.
        if let Src::Bytes(bytes, base, None) = src {
            return RawFields {
                parts: Parts::One(None),
                current: Some(FieldReader::new(bytes, *base, depth)),
                depth,
                failed: false,
            };
        }
        RawFields {
            parts: Parts::of(src, depth),
            current: None,
            depth,
            failed: false,
        }
    }
}

impl<'a> RawFields<'a> {
    /// The next field once the current slice is done: from the next one.
    fn next_part(&mut self) -> Option<Result<Field<'a>, DecodeError>> {
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

impl<'a> Iterator for RawFields<'a> {
    type Item = Result<Field<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        // The current slice's next field (the usual case), read inline.
        if let Some(r) = &mut self.current {
            if !r.is_done() {
                let f = r.next();
                if let Some(Err(_)) = f {
                    self.failed = true;
                }
                return f;
            }
        }
        self.next_part()
    }
}

/// A message read by its schema, borrowed from a record, with Google's
/// parser's semantics (the last occurrence of a singular scalar wins, a
/// singular message's occurrences merge, packed and unpacked runs join, the
/// last oneof member wins, other wire types and a closed enum's unknown
/// values are unknown fields; docs/FORMAT.md §14, §14.2). Nothing is
/// allocated per field or value.
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
    pub(super) plan: &'a Plan,
    pub(super) src: Src<'a>,
    /// The message type: its index in the plan.
    msg: u32,
    pub(super) depth: u32,
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
                (Src::Bytes(a, x, None), Src::Bytes(b, y, None)) => a == b && x == y,
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
            src: Src::Bytes(record, base, None),
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

    #[inline]
    pub(super) fn plan(&self) -> &'a MessagePlan {
        &self.plan.messages[self.msg as usize]
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
        if let Src::Bytes(bytes, base, None) = self.src {
            return check_slice(self.plan, self.msg as usize, bytes, base, self.depth);
        }
        let m = self.plan();
        for field in self.raw_fields() {
            check_field(self.plan, m, &field?, self.depth)?;
        }
        Ok(())
    }

    /// A view of message type `msg` in `bytes` at absolute offset `base`,
    /// nested at `depth`.
    #[inline]
    pub(super) fn at(
        plan: &'a Plan,
        msg: usize,
        bytes: &'a [u8],
        base: u64,
        depth: u32,
    ) -> MessageRef<'a> {
        MessageRef {
            plan,
            src: Src::Bytes(bytes, base, None),
            msg: msg as u32,
            depth,
        }
    }

    #[inline]
    pub(super) fn child(&self, msg: usize, src: Src<'a>) -> MessageRef<'a> {
        MessageRef {
            plan: self.plan,
            msg: msg as u32,
            src,
            depth: self.depth + 1,
        }
    }

    /// The absolute offset of the message's first byte (of its first
    /// occurrence's, for a merged one).
    pub fn offset(&self) -> u64 {
        match &self.src {
            Src::Bytes(_, base, _) => *base,
            Src::Deep(d) => match &d.parent {
                Src::Bytes(_, base, _) => *base,
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
            Src::Bytes(b, _, None) => Some(b),
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
        FieldRef::new(self.clone(), index)
    }

    /// Every field of the type, set or not, by field number.
    pub fn fields(&self) -> impl Iterator<Item = FieldRef<'a>> + '_ {
        (0..self.plan().fields.len()).map(|i| self.field_at(i))
    }

    /// Every value of the known fields in wire order, in one pass, each with
    /// its field number: every occurrence of a singular field (of which the
    /// parser keeps the last, and of a oneof the last member's; a message's
    /// occurrences merge), every element of a repeated field's runs, each
    /// map entry as a message. Fields of another wire type and a closed
    /// enum's unknown values are passed over. The quickest way to visit
    /// everything; [`field`](Self::field) and [`FieldRef::values`] apply
    /// the rules.
    pub fn wire_values(&self) -> WireValues<'a> {
        WireValues::new(self)
    }

    /// Every field on the wire, known or not, in wire order.
    #[inline]
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
            msg: self.msg as usize,
            raw: self.raw_fields(),
            run: None,
        }
    }
}

/// [`MessageRef::check`] of message type `msg` in one slice, `bytes` at
/// absolute offset `base`, nested at `depth`.
fn check_slice(
    plan: &Plan,
    msg: usize,
    bytes: &[u8],
    base: u64,
    depth: u32,
) -> Result<(), DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::new(base, DecodeReason::DepthLimitExceeded));
    }
    let m = &plan.messages[msg];
    // The fields as `FieldReader` reads them, without its state: only a
    // length-delimited field or a group has anything more to check.
    let mut r = ByteReader::new(bytes, base);
    while !r.is_empty() {
        if r.skip_short_scalar() {
            continue;
        }
        let field = r.field(depth)?;
        if let Value::Len(_) | Value::Group(_) = field.value {
            check_field(plan, m, &field, depth)?;
        }
    }
    Ok(())
}

/// Checks one field of message type `m` (nested at `depth`) as the parser
/// would: a known message or group whole, a proto3 string's UTF-8, a packed
/// run's values.
#[inline]
fn check_field(
    plan: &Plan,
    m: &MessagePlan,
    field: &Field<'_>,
    depth: u32,
) -> Result<(), DecodeError> {
    let Some(i) = m.field(field.number) else {
        return Ok(());
    };
    let f = &m.fields[i];
    match (f.kind, field.value) {
        (FieldKind::Message(sub), Value::Len(b)) | (FieldKind::Group(sub), Value::Group(b)) => {
            check_slice(plan, sub, b, field.value_offset, depth + 1)
        }
        (FieldKind::String { utf8: true }, Value::Len(b)) if std::str::from_utf8(b).is_err() => {
            Err(DecodeError::new(
                field.value_offset,
                DecodeReason::InvalidUtf8,
            ))
        }
        (kind, Value::Len(run)) if f.repeated && kind.packable() => {
            check_packed(kind, run, field.value_offset)
        }
        _ => Ok(()),
    }
}

/// Checks a packed run of kind `kind`: fixed-width values divide it, varints
/// end in it and none is longer than 10 bytes.
fn check_packed(kind: FieldKind, run: &[u8], offset: u64) -> Result<(), DecodeError> {
    let width = match kind.wire_type() {
        1 => 8,
        5 => 4,
        _ => 0,
    };
    if width > 0 {
        return if run.len().is_multiple_of(width) {
            Ok(())
        } else {
            Err(DecodeError::new(
                offset,
                DecodeReason::PackedLength {
                    length: run.len() as u64,
                    width: width as u8,
                },
            ))
        };
    }
    // A varint's bytes: continuation bits, then one byte without.
    let mut len = 0usize;
    for &b in run {
        len += 1;
        if b < 0x80 {
            len = 0;
        } else if len >= crate::wire::MAX_VARINT_LEN {
            // Its tenth byte still continues: as the decoder reports it.
            return unpack(kind, run, offset, |_| {});
        }
    }
    if len > 0 {
        return unpack(kind, run, offset, |_| {});
    }
    Ok(())
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
            if !f.accepts(&field.value) {
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
