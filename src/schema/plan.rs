//! The compiled form of a message type: what the walks over records need of
//! each field (number, kind, names, presence, packing, nested plan), made once
//! from prost-reflect's descriptors and shared by every thread.

use std::collections::HashMap;

use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor, Syntax};

/// A field's type, with its nested message or enum by index into the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldKind {
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
    /// `utf8`: validated as Google validates it (proto3 `string`).
    String {
        utf8: bool,
    },
    Bytes,
    Enum(usize),
    Message(usize),
    Group(usize),
}

impl FieldKind {
    /// The wire type of one value of this kind.
    pub(crate) fn wire_type(self) -> u8 {
        match self {
            FieldKind::Double | FieldKind::Fixed64 | FieldKind::Sfixed64 => 1,
            FieldKind::Float | FieldKind::Fixed32 | FieldKind::Sfixed32 => 5,
            FieldKind::String { .. } | FieldKind::Bytes | FieldKind::Message(_) => 2,
            FieldKind::Group(_) => 3,
            _ => 0,
        }
    }

    /// Whether a repeated field of this kind may come packed.
    pub(crate) fn packable(self) -> bool {
        !matches!(
            self,
            FieldKind::String { .. }
                | FieldKind::Bytes
                | FieldKind::Message(_)
                | FieldKind::Group(_)
        )
    }
}

/// One field of a message type.
#[derive(Debug, Clone)]
pub(crate) struct FieldPlan {
    pub(crate) number: u32,
    pub(crate) name: String,
    pub(crate) json_name: String,
    pub(crate) kind: FieldKind,
    pub(crate) repeated: bool,
    /// A map field: `kind` is its entry message (key field 1, value field 2).
    pub(crate) map: bool,
    /// Explicit presence: set even at its default value once it occurs.
    pub(crate) presence: bool,
    /// The oneof it belongs to (index into the message's oneofs).
    pub(crate) oneof: Option<usize>,
    /// The value of a singular scalar field that is not set: proto2's
    /// `[default = …]`, else its type's zero (an enum's first value).
    pub(crate) default: FieldDefault,
    /// A repeated scalar written as one packed run (proto3 by default,
    /// proto2 `[packed = true]`, editions' `repeated_field_encoding`).
    pub(crate) packed: bool,
}

/// A `sint32`'s value from its varint's low 32 bits (ZigZag).
pub(crate) fn zigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// A `sint64`'s value from its varint (ZigZag).
pub(crate) fn zigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

impl FieldPlan {
    /// Whether a wire value is an occurrence of this field: its kind's wire
    /// type, or a packed run of a repeated scalar. Any other is an unknown
    /// field, as Google's parser takes it.
    #[inline]
    pub(crate) fn accepts(&self, value: &crate::wire::Value<'_>) -> bool {
        let wire = value.wire_type() as u8;
        wire == self.kind.wire_type() || (self.repeated && self.kind.packable() && wire == 2)
    }
}

/// A field's default value (for its views, [`super::FieldRef::get_or_default`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldDefault {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    /// A string's or a bytes field's.
    Bytes(Vec<u8>),
    Enum(i32),
    /// A message field's: the empty message.
    None,
}

impl FieldDefault {
    fn of(f: &FieldDescriptor) -> FieldDefault {
        if f.is_list() || f.is_map() {
            return FieldDefault::None;
        }
        FieldDefault::of_value(f.default_value())
    }

    fn of_value(value: prost_reflect::Value) -> FieldDefault {
        use prost_reflect::Value as V;
        match value {
            V::Bool(v) => FieldDefault::Bool(v),
            V::I32(v) => FieldDefault::I32(v),
            V::I64(v) => FieldDefault::I64(v),
            V::U32(v) => FieldDefault::U32(v),
            V::U64(v) => FieldDefault::U64(v),
            V::F32(v) => FieldDefault::F32(v),
            V::F64(v) => FieldDefault::F64(v),
            V::String(v) => FieldDefault::Bytes(v.into_bytes()),
            V::Bytes(v) => FieldDefault::Bytes(v.to_vec()),
            V::EnumNumber(v) => FieldDefault::Enum(v),
            _ => FieldDefault::None,
        }
    }
}

/// The well-known types that protobuf's JSON mapping prints in forms of
/// their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WellKnown {
    Timestamp,
    Duration,
    /// `DoubleValue` … `BytesValue`: the value itself.
    Wrapper,
    Struct,
    Value,
    ListValue,
    FieldMask,
    Any,
}

impl WellKnown {
    fn of(full_name: &str) -> Option<WellKnown> {
        Some(match full_name.strip_prefix("google.protobuf.")? {
            "Timestamp" => WellKnown::Timestamp,
            "Duration" => WellKnown::Duration,
            "DoubleValue" | "FloatValue" | "Int64Value" | "UInt64Value" | "Int32Value"
            | "UInt32Value" | "BoolValue" | "StringValue" | "BytesValue" => WellKnown::Wrapper,
            "Struct" => WellKnown::Struct,
            "Value" => WellKnown::Value,
            "ListValue" => WellKnown::ListValue,
            "FieldMask" => WellKnown::FieldMask,
            "Any" => WellKnown::Any,
            _ => return None,
        })
    }
}

/// One message type.
#[derive(Debug, Clone)]
pub(crate) struct MessagePlan {
    /// The full name, `package.Message`.
    pub(crate) name: String,
    pub(crate) well_known: Option<WellKnown>,
    /// Sorted by field number.
    pub(crate) fields: Vec<FieldPlan>,
    pub(crate) oneofs: usize,
    /// The index in `fields` of each field number below its length
    /// ([`NO_FIELD`] where there is none): a field found by one load, where
    /// the numbers are small (as they mostly are), instead of a search.
    by_number: Vec<u16>,
}

/// No field of this number (in [`MessagePlan::by_number`]).
const NO_FIELD: u16 = u16::MAX;

/// The largest field number found through the direct table; above it, by
/// binary search.
const DIRECT_NUMBERS: u32 = 256;

impl MessagePlan {
    /// The index of field `number` in `fields`.
    #[inline]
    pub(crate) fn field(&self, number: u32) -> Option<usize> {
        match self.by_number.get(number as usize) {
            Some(&NO_FIELD) => None,
            Some(&i) => Some(i as usize),
            None => self.fields.binary_search_by_key(&number, |f| f.number).ok(),
        }
    }

    /// The index of the field named `name` (its own name, or its JSON name).
    pub(crate) fn field_named(&self, name: &str) -> Option<usize> {
        self.fields
            .iter()
            .position(|f| f.name == name)
            .or_else(|| self.fields.iter().position(|f| f.json_name == name))
    }
}

/// One enum type: its values by number (the first name of a number, as
/// protobuf's JSON printer takes it), and whether it is closed (proto2: an
/// unknown value is an unknown field).
#[derive(Debug, Clone)]
pub(crate) struct EnumPlan {
    /// The full name, `package.Enum`.
    pub(crate) name: String,
    pub(crate) values: Vec<(i32, String)>,
    /// Every name (aliases too) with its number, sorted by name: what the
    /// JSON reader looks names up in.
    pub(crate) names: Vec<(String, i32)>,
    pub(crate) closed: bool,
    /// `google.protobuf.NullValue`: every value prints as JSON `null`
    /// (json_format's `_FieldToJsonObject`).
    pub(crate) null: bool,
}

impl EnumPlan {
    pub(crate) fn name(&self, number: i32) -> Option<&str> {
        self.values
            .binary_search_by_key(&number, |(n, _)| *n)
            .ok()
            .map(|i| self.values[i].1.as_str())
    }

    /// The number of the value named `name`.
    pub(crate) fn number(&self, name: &[u8]) -> Option<i32> {
        self.names
            .binary_search_by(|(n, _)| n.as_bytes().cmp(name))
            .ok()
            .map(|i| self.names[i].1)
    }
}

/// Every message and enum type reachable from a root, by index.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub(crate) messages: Vec<MessagePlan>,
    pub(crate) enums: Vec<EnumPlan>,
    /// Indexes by full name.
    message_index: HashMap<String, usize>,
    enum_index: HashMap<String, usize>,
}

impl Plan {
    /// The plan of `root` (message 0) and of every other message type of
    /// `pool` (an `Any` may hold any of them).
    pub(crate) fn compile(pool: &prost_reflect::DescriptorPool, root: &MessageDescriptor) -> Plan {
        let mut plan = Plan::default();
        plan.message(root);
        for m in pool.all_messages() {
            plan.message(&m);
        }
        plan
    }

    /// The index of the message type `full_name`.
    pub(crate) fn message_named(&self, full_name: &str) -> Option<usize> {
        self.message_index.get(full_name).copied()
    }

    fn message(&mut self, m: &MessageDescriptor) -> usize {
        if let Some(&i) = self.message_index.get(m.full_name()) {
            return i;
        }
        let index = self.messages.len();
        self.message_index.insert(m.full_name().to_owned(), index);
        self.messages.push(MessagePlan {
            name: m.full_name().to_owned(),
            well_known: WellKnown::of(m.full_name()),
            fields: Vec::new(),
            oneofs: 0,
            by_number: Vec::new(),
        });
        let oneofs: Vec<String> = m.oneofs().map(|o| o.full_name().to_owned()).collect();
        let mut fields: Vec<FieldPlan> = m.fields().map(|f| self.field(&f, &oneofs)).collect();
        // The extensions of the pool that extend it, keyed `[full.name]` in
        // either name style (json_format's `'[%s]' % field.full_name`).
        for e in m.extensions() {
            let kind = self.kind(e.kind(), e.is_group(), e.parent_file().syntax());
            let name = format!("[{}]", e.full_name());
            fields.push(FieldPlan {
                number: e.number(),
                json_name: name.clone(),
                name,
                kind,
                repeated: e.cardinality() == Cardinality::Repeated,
                map: false,
                presence: e.supports_presence(),
                oneof: None,
                default: if e.is_list() {
                    FieldDefault::None
                } else {
                    FieldDefault::of_value(e.default_value())
                },
                packed: e.is_packed(),
            });
        }
        fields.sort_by_key(|f| f.number);
        // A field and an extension of one number (a broken pool): the field.
        fields.dedup_by_key(|f| f.number);
        // (A type of 65535 fields or more is searched.)
        let top = fields
            .iter()
            .map(|f| f.number)
            .filter(|&n| n < DIRECT_NUMBERS && fields.len() < NO_FIELD as usize)
            .max()
            .map_or(0, |n| n as usize + 1);
        let mut by_number = vec![NO_FIELD; top];
        for (i, f) in fields.iter().enumerate() {
            if let (Some(slot), Ok(i)) = (by_number.get_mut(f.number as usize), u16::try_from(i)) {
                *slot = i;
            }
        }
        self.messages[index].fields = fields;
        self.messages[index].oneofs = oneofs.len();
        self.messages[index].by_number = by_number;
        index
    }

    fn field(&mut self, f: &FieldDescriptor, oneofs: &[String]) -> FieldPlan {
        let kind = self.kind(f.kind(), f.is_group(), f.parent_file().syntax());
        let oneof = f
            .containing_oneof()
            .and_then(|o| oneofs.iter().position(|n| n == o.full_name()));
        FieldPlan {
            number: f.number(),
            name: f.name().to_owned(),
            json_name: f.json_name().to_owned(),
            kind,
            repeated: f.cardinality() == Cardinality::Repeated,
            map: f.is_map(),
            presence: f.supports_presence(),
            oneof,
            default: FieldDefault::of(f),
            packed: f.is_packed(),
        }
    }

    /// A field's kind; `syntax`: its file's (a proto3 `string` must be UTF-8).
    fn kind(&mut self, kind: Kind, group: bool, syntax: Syntax) -> FieldKind {
        let proto3 = syntax == Syntax::Proto3;
        match kind {
            Kind::Double => FieldKind::Double,
            Kind::Float => FieldKind::Float,
            Kind::Int32 => FieldKind::Int32,
            Kind::Int64 => FieldKind::Int64,
            Kind::Uint32 => FieldKind::Uint32,
            Kind::Uint64 => FieldKind::Uint64,
            Kind::Sint32 => FieldKind::Sint32,
            Kind::Sint64 => FieldKind::Sint64,
            Kind::Fixed32 => FieldKind::Fixed32,
            Kind::Fixed64 => FieldKind::Fixed64,
            Kind::Sfixed32 => FieldKind::Sfixed32,
            Kind::Sfixed64 => FieldKind::Sfixed64,
            Kind::Bool => FieldKind::Bool,
            Kind::String => FieldKind::String { utf8: proto3 },
            Kind::Bytes => FieldKind::Bytes,
            Kind::Enum(e) => FieldKind::Enum(self.enumeration(&e)),
            Kind::Message(m) if group => FieldKind::Group(self.message(&m)),
            Kind::Message(m) => FieldKind::Message(self.message(&m)),
        }
    }

    fn enumeration(&mut self, e: &prost_reflect::EnumDescriptor) -> usize {
        if let Some(&i) = self.enum_index.get(e.full_name()) {
            return i;
        }
        // The first name of a number in the order of the .proto file
        // (allow_alias): protobuf's printer finds a value by number and takes
        // the first declared (`values_by_number` is built from the values
        // reversed). prost-reflect does not iterate in that order.
        let mut all: Vec<(i32, usize, String)> = e
            .enum_descriptor_proto()
            .value
            .iter()
            .enumerate()
            .map(|(i, v)| (v.number(), i, v.name().to_owned()))
            .collect();
        let mut names: Vec<(String, i32)> =
            all.iter().map(|(n, _, name)| (name.clone(), *n)).collect();
        names.sort();
        all.sort_by_key(|(n, i, _)| (*n, *i));
        all.dedup_by_key(|(n, _, _)| *n);
        let values: Vec<(i32, String)> = all.into_iter().map(|(n, _, name)| (n, name)).collect();
        self.enum_index
            .insert(e.full_name().to_owned(), self.enums.len());
        self.enums.push(EnumPlan {
            name: e.full_name().to_owned(),
            values,
            names,
            closed: e.parent_file().syntax() == Syntax::Proto2,
            null: e.full_name() == "google.protobuf.NullValue",
        });
        self.enums.len() - 1
    }
}
