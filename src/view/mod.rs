//! Borrowed, lazy views of the payloads: tf.Example, tf.SequenceExample and
//! OneFlow's OFRecord, their feature maps, features and lists.
//!
//! A view is a few words pointing into the record's bytes; nothing is decoded
//! until an accessor asks, and nothing is copied or allocated. The semantics
//! are those of Google's parser (SPEC §3): a singular message that appears
//! several times is merged, the last oneof member on the wire wins, a map key
//! that appears twice keeps its last entry, packed and unpacked numeric runs
//! concatenate, and unknown fields are skipped.
//!
//! [`ExampleRef::parse`] (and the others' `parse`) first check the whole
//! record the way `ParseFromString` does, so that every later accessor is
//! known to succeed; [`ExampleRef::new`] skips that check and lets each
//! accessor report the errors it meets.
//!
//! ```
//! use recordwire::view::{ExampleRef, ListRef};
//!
//! // The tf.Example of the seed analysis (testdata/seed_example.xxd).
//! let bytes = [
//!     0x0a, 0x66, 0x0a, 0x25, 0x0a, 0x11, b'm', b'a', b's', b'k', b'e', b'd', b'_', b'l',
//!     b'm', b'_', b'w', b'e', b'i', b'g', b'h', b't', b's', 0x12, 0x10, 0x12, 0x0e, 0x0a,
//!     0x0c, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0x0a, 0x1e, 0x0a, 0x13, b'm',
//!     b'a', b's', b'k', b'e', b'd', b'_', b'l', b'm', b'_', b'p', b'o', b's', b'i', b't',
//!     b'i', b'o', b'n', b's', 0x12, 0x07, 0x1a, 0x05, 0x0a, 0x03, 0x02, 0x0a, 0x00, 0x0a,
//!     0x1d, 0x0a, 0x14, b'n', b'e', b'x', b't', b'_', b's', b'e', b'n', b't', b'e', b'n',
//!     b'c', b'e', b'_', b'l', b'a', b'b', b'e', b'l', b's', 0x12, 0x05, 0x1a, 0x03, 0x0a,
//!     0x01, 0x01,
//! ];
//! let example = ExampleRef::parse(&bytes, 0)?;
//! let positions = example.get("masked_lm_positions")?.unwrap();
//! let Some(ListRef::Int64(list)) = positions.list()? else { panic!("not an int64 list") };
//! let values: Vec<i64> = list.iter().collect::<Result<_, _>>()?;
//! assert_eq!(values, [2, 10, 0]);
//! assert_eq!(example.features().len()?, 3);
//! # Ok::<(), recordwire::DecodeError>(())
//! ```

mod list;
mod logical;

pub use list::{
    BytesIter, BytesListRef, DoubleListRef, Element, FloatListRef, Int32ListRef, Int64ListRef,
    NumIter, NumList,
};

use crate::wire::{DecodeError, DecodeReason};
use crate::wire::{Field, FieldReader, Value, MAX_DEPTH};
use logical::Logical;

/// Which schema a payload follows; it decides the numbering of `Feature`'s
/// oneof and whether names must be UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schema {
    /// TensorFlow's `feature.proto` (proto3): bytes_list = 1, float_list = 2,
    /// int64_list = 3; names must be valid UTF-8.
    TensorFlow,
    /// OneFlow's `record.proto` (proto2): bytes_list = 1, float_list = 2,
    /// double_list = 3, int32_list = 4, int64_list = 5; names are any bytes.
    OneFlow,
}

impl Schema {
    /// The list kind of a `Feature` field number.
    #[inline]
    pub fn kind_of(self, field: u32) -> Option<Kind> {
        match (self, field) {
            (_, 1) => Some(Kind::Bytes),
            (_, 2) => Some(Kind::Float),
            (Schema::TensorFlow, 3) => Some(Kind::Int64),
            (Schema::OneFlow, 3) => Some(Kind::Double),
            (Schema::OneFlow, 4) => Some(Kind::Int32),
            (Schema::OneFlow, 5) => Some(Kind::Int64),
            _ => None,
        }
    }

    /// The `Feature` field number of a list kind, if the schema has it.
    pub fn field_of(self, kind: Kind) -> Option<u32> {
        match (self, kind) {
            (_, Kind::Bytes) => Some(1),
            (_, Kind::Float) => Some(2),
            (Schema::TensorFlow, Kind::Int64) => Some(3),
            (Schema::TensorFlow, _) => None,
            (Schema::OneFlow, Kind::Double) => Some(3),
            (Schema::OneFlow, Kind::Int32) => Some(4),
            (Schema::OneFlow, Kind::Int64) => Some(5),
        }
    }

    fn utf8_names(self) -> bool {
        self == Schema::TensorFlow
    }
}

/// The kind of a feature: which list its oneof holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `bytes_list`
    Bytes,
    /// `float_list`
    Float,
    /// `double_list` (OFRecord only)
    Double,
    /// `int32_list` (OFRecord only)
    Int32,
    /// `int64_list`
    Int64,
}

impl Kind {
    /// The field name used in JSON: `bytes_list`, `float_list`, …
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bytes => "bytes_list",
            Kind::Float => "float_list",
            Kind::Double => "double_list",
            Kind::Int32 => "int32_list",
            Kind::Int64 => "int64_list",
        }
    }
}

/// The list held by a feature, typed.
#[derive(Debug, Clone, Copy)]
pub enum ListRef<'a> {
    /// `bytes_list`
    Bytes(BytesListRef<'a>),
    /// `float_list`
    Float(FloatListRef<'a>),
    /// `double_list`
    Double(DoubleListRef<'a>),
    /// `int32_list`
    Int32(Int32ListRef<'a>),
    /// `int64_list`
    Int64(Int64ListRef<'a>),
}

impl<'a> ListRef<'a> {
    fn new(kind: Kind, list: Logical<'a>) -> Self {
        match kind {
            Kind::Bytes => ListRef::Bytes(BytesListRef::new(list)),
            Kind::Float => ListRef::Float(NumList::new(list)),
            Kind::Double => ListRef::Double(NumList::new(list)),
            Kind::Int32 => ListRef::Int32(NumList::new(list)),
            Kind::Int64 => ListRef::Int64(NumList::new(list)),
        }
    }

    /// The kind of list.
    pub fn kind(&self) -> Kind {
        match self {
            ListRef::Bytes(_) => Kind::Bytes,
            ListRef::Float(_) => Kind::Float,
            ListRef::Double(_) => Kind::Double,
            ListRef::Int32(_) => Kind::Int32,
            ListRef::Int64(_) => Kind::Int64,
        }
    }

    /// Number of values.
    pub fn len(&self) -> Result<usize, DecodeError> {
        match self {
            ListRef::Bytes(l) => l.len(),
            ListRef::Float(l) => l.len(),
            ListRef::Double(l) => l.len(),
            ListRef::Int32(l) => l.len(),
            ListRef::Int64(l) => l.len(),
        }
    }

    /// Whether the list has no values.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.len()? == 0)
    }

    /// Whether a numeric list mixes packed and unpacked runs.
    pub fn is_mixed(&self) -> Result<bool, DecodeError> {
        match self {
            ListRef::Bytes(_) => Ok(false),
            ListRef::Float(l) => l.is_mixed(),
            ListRef::Double(l) => l.is_mixed(),
            ListRef::Int32(l) => l.is_mixed(),
            ListRef::Int64(l) => l.is_mixed(),
        }
    }

    fn logical(&self) -> Logical<'a> {
        match self {
            ListRef::Bytes(l) => l.logical(),
            ListRef::Float(l) => l.logical(),
            ListRef::Double(l) => l.logical(),
            ListRef::Int32(l) => l.logical(),
            ListRef::Int64(l) => l.logical(),
        }
    }
}

/// A borrowed `Feature`: a oneof of lists.
#[derive(Debug, Clone, Copy)]
pub struct FeatureRef<'a> {
    msg: Logical<'a>,
    schema: Schema,
}

impl<'a> FeatureRef<'a> {
    /// A view of one serialized `Feature` message at absolute offset `base`
    /// and nesting depth `depth` (0 when it is the whole input).
    pub fn new(bytes: &'a [u8], base: u64, depth: u32, schema: Schema) -> Self {
        FeatureRef {
            msg: Logical::root(bytes, base, depth),
            schema,
        }
    }

    fn from_logical(msg: Logical<'a>, schema: Schema) -> Self {
        FeatureRef { msg, schema }
    }

    /// The schema this feature is read with.
    pub fn schema(&self) -> Schema {
        self.schema
    }

    /// The list the feature holds, or `None` for a feature with no kind.
    ///
    /// The last oneof member on the wire wins; when the same member appears
    /// several times in a row (with no other member between), its lists are
    /// merged (concatenated).
    pub fn list(&self) -> Result<Option<ListRef<'a>>, DecodeError> {
        // A feature made of one list field and nothing else (the usual
        // shape) is recognised from its first bytes.
        let depth = self.msg.depth();
        if let Some((field, payload, at)) = self.msg.single_len_field_any() {
            if let (Some(kind), true) = (self.schema.kind_of(field), depth < MAX_DEPTH) {
                return Ok(Some(ListRef::new(
                    kind,
                    Logical::root(payload, at, depth + 1),
                )));
            }
        }
        /// The winning member so far.
        struct Member<'a> {
            field: u32,
            kind: Kind,
            /// Tag offset of the first occurrence of its run.
            start: u64,
            /// Occurrences in the run.
            run: u32,
            /// Payload of the last occurrence and its offset.
            payload: &'a [u8],
            at: u64,
        }
        let mut current: Option<Member<'a>> = None;
        for f in self.msg.fields() {
            let f = f?;
            let Value::Len(payload) = f.value else {
                continue;
            };
            if let Some(kind) = self.schema.kind_of(f.number) {
                match &mut current {
                    Some(m) if m.field == f.number => {
                        m.run += 1;
                        (m.payload, m.at) = (payload, f.value_offset);
                    }
                    _ => {
                        current = Some(Member {
                            field: f.number,
                            kind,
                            start: f.offset,
                            run: 1,
                            payload,
                            at: f.value_offset,
                        })
                    }
                }
            }
        }
        Ok(current.map(|m| {
            let (n, kind, start, run, payload, at) =
                (m.field, m.kind, m.start, m.run, m.payload, m.at);
            // One occurrence: the list is that payload (every field of the
            // feature was read above, so no error is skipped). Otherwise,
            // or where the merged path would report the depth limit, the
            // concatenation of the run.
            let list = if run == 1 && depth < MAX_DEPTH {
                Logical::root(payload, at, depth + 1)
            } else {
                self.msg.child(n).skip_before(start)
            };
            ListRef::new(kind, list)
        }))
    }

    /// The kind of the feature, or `None` when no list is set.
    pub fn kind(&self) -> Result<Option<Kind>, DecodeError> {
        Ok(self.list()?.map(|l| l.kind()))
    }

    /// The bytes list, if that is the feature's kind.
    pub fn bytes_list(&self) -> Result<Option<BytesListRef<'a>>, DecodeError> {
        Ok(match self.list()? {
            Some(ListRef::Bytes(l)) => Some(l),
            _ => None,
        })
    }

    /// The float list, if that is the feature's kind.
    pub fn float_list(&self) -> Result<Option<FloatListRef<'a>>, DecodeError> {
        Ok(match self.list()? {
            Some(ListRef::Float(l)) => Some(l),
            _ => None,
        })
    }

    /// The double list, if that is the feature's kind (OFRecord).
    pub fn double_list(&self) -> Result<Option<DoubleListRef<'a>>, DecodeError> {
        Ok(match self.list()? {
            Some(ListRef::Double(l)) => Some(l),
            _ => None,
        })
    }

    /// The int32 list, if that is the feature's kind (OFRecord).
    pub fn int32_list(&self) -> Result<Option<Int32ListRef<'a>>, DecodeError> {
        Ok(match self.list()? {
            Some(ListRef::Int32(l)) => Some(l),
            _ => None,
        })
    }

    /// The int64 list, if that is the feature's kind.
    pub fn int64_list(&self) -> Result<Option<Int64ListRef<'a>>, DecodeError> {
        Ok(match self.list()? {
            Some(ListRef::Int64(l)) => Some(l),
            _ => None,
        })
    }

    /// Checks the feature the way Google's parser would (each list payload,
    /// including those a later member clears), and in strict mode also
    /// reports unknown fields and mixed packing.
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        for seg in self.msg.segments() {
            let (seg, base) = seg?;
            validate_feature_segment(seg, base, self.msg.depth(), self.schema, strict)?;
        }
        if strict {
            if let Some(list) = self.list()? {
                if list.is_mixed()? {
                    let at = first_field_offset(list.logical())?.unwrap_or(self.msg.root_offset());
                    return Err(DecodeError::new(at, DecodeReason::MixedPacking));
                }
            }
        }
        Ok(())
    }
}

fn first_field_offset(l: Logical<'_>) -> Result<Option<u64>, DecodeError> {
    match l.fields().next() {
        Some(f) => Ok(Some(f?.offset)),
        None => Ok(None),
    }
}

pub(crate) fn unknown_field(f: &Field<'_>) -> DecodeError {
    DecodeError::new(
        f.offset,
        DecodeReason::UnknownField {
            field: f.number,
            wire_type: f.value.wire_type() as u8,
        },
    )
}

fn nested_depth(depth: u32, at: u64) -> Result<u32, DecodeError> {
    if depth >= MAX_DEPTH {
        Err(DecodeError::new(at, DecodeReason::DepthLimitExceeded))
    } else {
        Ok(depth + 1)
    }
}

fn validate_feature_segment(
    seg: &[u8],
    base: u64,
    depth: u32,
    schema: Schema,
    strict: bool,
) -> Result<(), DecodeError> {
    if let Some((field, payload, at)) = Logical::root(seg, base, depth).single_len_field_any() {
        if let Some(kind) = schema.kind_of(field) {
            let d = nested_depth(depth, at)?;
            return list::validate_list_segment(kind, payload, at, d, strict);
        }
    }
    for f in FieldReader::new(seg, base, depth) {
        let f = f?;
        match (schema.kind_of(f.number), f.value) {
            (Some(kind), Value::Len(b)) => {
                let d = nested_depth(depth, f.value_offset)?;
                list::validate_list_segment(kind, b, f.value_offset, d, strict)?;
            }
            _ if strict => return Err(unknown_field(&f)),
            _ => {}
        }
    }
    Ok(())
}

/// One entry of a map (`map<string, Feature>` or `map<string, FeatureList>`)
/// as it stands on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The key's raw bytes (empty when the key is absent).
    pub name: &'a [u8],
    /// Absolute offset of the entry's tag.
    pub offset: u64,
    /// Absolute offset of the key's bytes (of the entry's body when the key is absent).
    pub name_offset: u64,
    value: Logical<'a>,
}

impl<'a> Entry<'a> {
    /// The key as UTF-8, when it is.
    pub fn name_str(&self) -> Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(self.name)
    }
}

/// Parses one map entry: last key wins, value fields merge.
///
/// Returns the key, its offset, and the value as a logical message: when the
/// value field occurs exactly once (the usual case) that is its payload
/// itself, so reading the value does not walk the entry again; otherwise the
/// concatenation of the value fields. Every field of the entry has been read
/// here, so errors anywhere in it come out now, as before.
fn parse_entry(
    body: &[u8],
    base: u64,
    depth: u32,
) -> Result<(&[u8], u64, Logical<'_>), DecodeError> {
    // The usual shape, `0a <len> key 12 <len> value` and nothing else, from
    // its first bytes.
    if depth < MAX_DEPTH {
        if let Some((1, key, key_offset)) = Logical::root(body, base, depth).first_len_field() {
            let after = key_offset + key.len() as u64;
            let rest = body.get((after - base) as usize..).unwrap_or_default();
            if let Some((value, at)) = Logical::root(rest, after, depth).single_len_field(2) {
                return Ok((key, key_offset, Logical::root(value, at, depth + 1)));
            }
        }
    }
    let mut key: &[u8] = &[];
    let mut key_offset = base;
    let mut values = 0u32;
    let mut single = Logical::root(&[], base, depth + 1);
    for f in FieldReader::new(body, base, depth) {
        let f = f?;
        match (f.number, f.value) {
            (1, Value::Len(k)) => {
                key = k;
                key_offset = f.value_offset;
            }
            (2, Value::Len(v)) => {
                values += 1;
                single = Logical::root(v, f.value_offset, depth + 1);
            }
            _ => {}
        }
    }
    // The depth check the merged path does when it descends (see
    // `LogicalFields`): keep that path when it would fail, so the error
    // comes out where it always did.
    let value = if values == 1 && depth < MAX_DEPTH {
        single
    } else {
        Logical::root(body, base, depth).child(2)
    };
    Ok((key, key_offset, value))
}

/// A borrowed map from names to values (a logical message of entries).
#[derive(Debug, Clone, Copy)]
struct MapRef<'a> {
    msg: Logical<'a>,
}

impl<'a> MapRef<'a> {
    fn entries(&self) -> Entries<'a> {
        Entries {
            fields: self.msg.fields(),
            depth: self.msg.depth(),
        }
    }

    /// The last entry whose key is `name`.
    fn get(&self, name: &[u8]) -> Result<Option<Entry<'a>>, DecodeError> {
        let mut found = None;
        for e in self.entries() {
            let e = e?;
            if e.name == name {
                found = Some(e);
            }
        }
        Ok(found)
    }

    /// Entries whose key does not appear again later (the effective map, in
    /// the order of each key's last entry).
    fn effective(&self) -> Effective<'a> {
        Effective::new(self.entries())
    }
}

/// Iterator over every map entry in wire order, duplicates included.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    fields: logical::LogicalFields<'a>,
    depth: u32,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        for f in self.fields.by_ref() {
            let f = match f {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            let (1, Value::Len(body)) = (f.number, f.value) else {
                continue;
            };
            let r = nested_depth(self.depth, f.value_offset).and_then(|d| {
                let (name, name_offset, value) = parse_entry(body, f.value_offset, d)?;
                Ok(Entry {
                    name,
                    offset: f.offset,
                    name_offset,
                    value,
                })
            });
            if r.is_err() {
                self.fields = Logical::root(&[], 0, 0).fields();
            }
            return Some(r);
        }
        None
    }
}

const MARKED_ENTRIES: usize = 64;

/// Iterator over the effective entries of a map (see [`FeaturesRef::iter`]).
///
/// On the first call it walks the entries once, keeping their names on the
/// stack, and marks each entry that a later one with the same name replaces;
/// then it walks them again, skipping the marked ones: two passes and at most
/// n(n-1)/2 name comparisons, mostly settled by the lengths. Maps of more
/// than [`Effective::MARKED`] entries, and maps with a damaged entry (so the
/// error comes out where it always did), fall back to scanning the later
/// entries for each entry.
#[derive(Clone, Debug)]
pub struct Effective<'a> {
    entries: Entries<'a>,
    /// Bit i: entry i is replaced by a later one. `None` before the first
    /// call (`started == false`) or when falling back to the scan.
    replaced: Option<u64>,
    started: bool,
    position: u32,
}

impl<'a> Effective<'a> {
    /// The most entries whose duplicates are found in one pass.
    pub const MARKED: usize = MARKED_ENTRIES;

    fn new(entries: Entries<'a>) -> Self {
        Effective {
            entries,
            replaced: None,
            started: false,
            position: 0,
        }
    }

    /// Marks the entries that a later entry with the same name replaces.
    fn mark_replaced(&self) -> Option<u64> {
        let mut names: [&[u8]; MARKED_ENTRIES] = [&[]; MARKED_ENTRIES];
        let mut n = 0;
        for e in self.entries.clone() {
            let e = e.ok()?;
            *names.get_mut(n)? = e.name;
            n += 1;
        }
        let names = &names[..n];
        let mut replaced = 0u64;
        for (i, a) in names.iter().enumerate() {
            if names[i + 1..].iter().any(|b| a == b) {
                replaced |= 1 << i;
            }
        }
        Some(replaced)
    }

    /// The fallback: an entry is effective when no later entry has its name.
    fn next_by_scan(&mut self) -> Option<Result<Entry<'a>, DecodeError>> {
        loop {
            let e = match self.entries.next()? {
                Ok(e) => e,
                Err(e) => return Some(Err(e)),
            };
            let mut later = self.entries.clone();
            let mut replaced = false;
            for l in later.by_ref() {
                match l {
                    Ok(l) if l.name == e.name => {
                        replaced = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(err) => return Some(Err(err)),
                }
            }
            if !replaced {
                return Some(Ok(e));
            }
        }
    }
}

impl<'a> Iterator for Effective<'a> {
    type Item = Result<Entry<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            self.replaced = self.mark_replaced();
        }
        let Some(replaced) = self.replaced else {
            return self.next_by_scan();
        };
        loop {
            let e = self.entries.next()?;
            let position = self.position;
            self.position += 1;
            match e {
                Err(e) => return Some(Err(e)),
                Ok(e) if replaced >> position & 1 == 0 => return Some(Ok(e)),
                Ok(_) => {}
            }
        }
    }
}

/// A named feature: an entry of a `Features` map.
#[derive(Debug, Clone, Copy)]
pub struct NamedFeature<'a> {
    /// The entry on the wire (name, offsets).
    pub entry: Entry<'a>,
    /// Its value (a `Feature` with no kind when the entry has no value).
    pub feature: FeatureRef<'a>,
}

impl<'a> NamedFeature<'a> {
    /// The name's raw bytes.
    pub fn name(&self) -> &'a [u8] {
        self.entry.name
    }
}

/// A borrowed `Features` map (`map<string, Feature>`): the features of a
/// tf.Example or a SequenceExample's context, or an OFRecord.
#[derive(Debug, Clone, Copy)]
pub struct FeaturesRef<'a> {
    map: MapRef<'a>,
    schema: Schema,
}

impl<'a> FeaturesRef<'a> {
    fn new(msg: Logical<'a>, schema: Schema) -> Self {
        FeaturesRef {
            map: MapRef { msg },
            schema,
        }
    }

    /// The schema of the features.
    pub fn schema(&self) -> Schema {
        self.schema
    }

    /// The feature named `name` (its last entry), without decoding the others.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        Ok(self
            .map
            .get(name.as_ref())?
            .map(|e| FeatureRef::from_logical(e.value, self.schema)))
    }

    /// The effective features: each name once, with its last entry, in the
    /// order of those last entries. Finding duplicates costs one extra walk
    /// of the entries and a comparison of their names (no allocation; maps
    /// of more than 64 entries scan the later entries for each entry); use
    /// [`get`](Self::get) for lookups.
    pub fn iter(&self) -> impl Iterator<Item = Result<NamedFeature<'a>, DecodeError>> + 'a {
        let schema = self.schema;
        self.map.effective().map(move |e| {
            e.map(|entry| NamedFeature {
                entry,
                feature: FeatureRef::from_logical(entry.value, schema),
            })
        })
    }

    /// Every entry in wire order, duplicates included (for tools that show them).
    pub fn entries(&self) -> impl Iterator<Item = Result<NamedFeature<'a>, DecodeError>> + 'a {
        let schema = self.schema;
        self.map.entries().map(move |e| {
            e.map(|entry| NamedFeature {
                entry,
                feature: FeatureRef::from_logical(entry.value, schema),
            })
        })
    }

    /// Number of distinct features.
    pub fn len(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for e in self.map.effective() {
            e?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether there are no features.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.map.entries().next().transpose()?.is_none())
    }

    /// Checks the map the way Google's parser would: every entry, key (UTF-8
    /// for TensorFlow's schema) and value; in strict mode also unknown fields,
    /// duplicate keys and mixed packing.
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        let schema = self.schema;
        validate_map(self.map, schema, strict, |body, base, depth| {
            validate_feature_segment(body, base, depth, schema, strict)
        })?;
        if strict {
            for e in self.iter() {
                e?.feature.validate(true)?;
            }
        }
        Ok(())
    }
}

/// Validates every segment and entry of a map; `value` checks one segment
/// of a value at its depth.
fn validate_map<'a>(
    map: MapRef<'a>,
    schema: Schema,
    strict: bool,
    mut value: impl FnMut(&'a [u8], u64, u32) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let depth = map.msg.depth();
    for seg in map.msg.segments() {
        let (seg, base) = seg?;
        for f in FieldReader::new(seg, base, depth) {
            let f = f?;
            let (1, Value::Len(body)) = (f.number, f.value) else {
                if strict {
                    return Err(unknown_field(&f));
                }
                continue;
            };
            let d = nested_depth(depth, f.value_offset)?;
            for g in FieldReader::new(body, f.value_offset, d) {
                let g = g?;
                match (g.number, g.value) {
                    (1, Value::Len(k))
                        if schema.utf8_names() && std::str::from_utf8(k).is_err() =>
                    {
                        return Err(DecodeError::new(g.value_offset, DecodeReason::InvalidUtf8));
                    }
                    (1, Value::Len(_)) => {}
                    (2, Value::Len(v)) => {
                        let vd = nested_depth(d, g.value_offset)?;
                        value(v, g.value_offset, vd)?;
                    }
                    _ if strict => return Err(unknown_field(&g)),
                    _ => {}
                }
            }
        }
    }
    if strict {
        let mut entries = map.entries();
        while let Some(e) = entries.next() {
            let e = e?;
            for l in entries.clone() {
                let l = l?;
                if l.name == e.name {
                    return Err(DecodeError::new(l.offset, DecodeReason::DuplicateKey));
                }
            }
        }
    }
    Ok(())
}

/// Checks a top-level message whose known fields are `known` (each a
/// length-delimited submessage checked by the closure).
fn validate_top<'a>(
    bytes: &'a [u8],
    base: u64,
    strict: bool,
    mut known: impl FnMut(u32, &'a [u8], u64) -> Option<Result<(), DecodeError>>,
) -> Result<(), DecodeError> {
    for f in FieldReader::new(bytes, base, 0) {
        let f = f?;
        let r = match f.value {
            Value::Len(b) => known(f.number, b, f.value_offset),
            _ => None,
        };
        match r {
            Some(r) => r?,
            None if strict => return Err(unknown_field(&f)),
            None => {}
        }
    }
    Ok(())
}

/// Options for validating a record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Strict mode (SPEC §3): also report duplicate keys, unknown fields and
    /// mixed packed/unpacked encodings as errors.
    pub strict: bool,
}

/// A borrowed `tf.Example`.
#[derive(Debug, Clone, Copy)]
pub struct ExampleRef<'a> {
    bytes: &'a [u8],
    base: u64,
}

impl<'a> ExampleRef<'a> {
    /// A lazy view of `bytes` (first byte at absolute offset `base`); no check.
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        ExampleRef { bytes, base }
    }

    /// A view of `bytes`, checked the way `ParseFromString` checks it.
    pub fn parse(bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
        Self::parse_with(bytes, base, DecodeOptions::default())
    }

    /// A view of `bytes`, checked with `options`.
    pub fn parse_with(
        bytes: &'a [u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let v = ExampleRef::new(bytes, base);
        v.validate(options.strict)?;
        Ok(v)
    }

    /// The serialized bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The features (`Example.features.feature`), merged over every
    /// occurrence of `Example.features`.
    pub fn features(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(
            Logical::root(self.bytes, self.base, 0).child_collapsed(1),
            Schema::TensorFlow,
        )
    }

    /// The feature named `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        self.features().get(name)
    }

    /// Whether the record has an `Example.features` field at all.
    pub fn has_features(&self) -> Result<bool, DecodeError> {
        for f in FieldReader::new(self.bytes, self.base, 0) {
            let f = f?;
            if let (1, Value::Len(_)) = (f.number, f.value) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Checks the record like `ParseFromString` (and more in strict mode).
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        validate_top(self.bytes, self.base, strict, |n, b, off| {
            (n == 1).then(|| {
                let features = FeaturesRef::new(Logical::root(b, off, 1), Schema::TensorFlow);
                // Each Features segment is checked as its own message here;
                // strict cross-segment checks run below.
                features.validate(false)
            })
        })?;
        if strict {
            self.features().validate(true)?;
        }
        Ok(())
    }
}

/// A borrowed `FeatureList` (`repeated Feature feature = 1`).
#[derive(Debug, Clone, Copy)]
pub struct FeatureListRef<'a> {
    msg: Logical<'a>,
}

impl<'a> FeatureListRef<'a> {
    /// The features, in order.
    pub fn iter(&self) -> impl Iterator<Item = Result<FeatureRef<'a>, DecodeError>> + 'a {
        let depth = self.msg.depth();
        self.msg.fields().filter_map(move |f| match f {
            Err(e) => Some(Err(e)),
            Ok(f) => match (f.number, f.value) {
                (1, Value::Len(b)) => Some(
                    nested_depth(depth, f.value_offset)
                        .map(|d| FeatureRef::new(b, f.value_offset, d, Schema::TensorFlow)),
                ),
                _ => None,
            },
        })
    }

    /// Number of features.
    pub fn len(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for f in self.iter() {
            f?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.len()? == 0)
    }
}

fn validate_feature_list_segment(
    seg: &[u8],
    base: u64,
    depth: u32,
    strict: bool,
) -> Result<(), DecodeError> {
    for f in FieldReader::new(seg, base, depth) {
        let f = f?;
        match (f.number, f.value) {
            (1, Value::Len(b)) => {
                let d = nested_depth(depth, f.value_offset)?;
                FeatureRef::new(b, f.value_offset, d, Schema::TensorFlow).validate(strict)?;
            }
            _ if strict => return Err(unknown_field(&f)),
            _ => {}
        }
    }
    Ok(())
}

/// A named feature list: an entry of a `FeatureLists` map.
#[derive(Debug, Clone, Copy)]
pub struct NamedFeatureList<'a> {
    /// The entry on the wire.
    pub entry: Entry<'a>,
    /// Its value.
    pub list: FeatureListRef<'a>,
}

impl<'a> NamedFeatureList<'a> {
    /// The name's raw bytes.
    pub fn name(&self) -> &'a [u8] {
        self.entry.name
    }
}

/// A borrowed `FeatureLists` map (`map<string, FeatureList>`).
#[derive(Debug, Clone, Copy)]
pub struct FeatureListsRef<'a> {
    map: MapRef<'a>,
}

impl<'a> FeatureListsRef<'a> {
    /// The feature list named `name` (its last entry).
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureListRef<'a>>, DecodeError> {
        Ok(self
            .map
            .get(name.as_ref())?
            .map(|e| FeatureListRef { msg: e.value }))
    }

    /// The effective feature lists, each name once (see [`FeaturesRef::iter`]).
    pub fn iter(&self) -> impl Iterator<Item = Result<NamedFeatureList<'a>, DecodeError>> + 'a {
        self.map.effective().map(|e| {
            e.map(|entry| NamedFeatureList {
                entry,
                list: FeatureListRef { msg: entry.value },
            })
        })
    }

    /// Every entry in wire order, duplicates included.
    pub fn entries(&self) -> impl Iterator<Item = Result<NamedFeatureList<'a>, DecodeError>> + 'a {
        self.map.entries().map(|e| {
            e.map(|entry| NamedFeatureList {
                entry,
                list: FeatureListRef { msg: entry.value },
            })
        })
    }

    /// Number of distinct feature lists.
    pub fn len(&self) -> Result<usize, DecodeError> {
        let mut n = 0;
        for e in self.map.effective() {
            e?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether there are no feature lists.
    pub fn is_empty(&self) -> Result<bool, DecodeError> {
        Ok(self.map.entries().next().transpose()?.is_none())
    }

    fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        validate_map(self.map, Schema::TensorFlow, strict, |b, off, d| {
            validate_feature_list_segment(b, off, d, strict)
        })
    }
}

/// A borrowed `tf.SequenceExample`.
#[derive(Debug, Clone, Copy)]
pub struct SequenceExampleRef<'a> {
    bytes: &'a [u8],
    base: u64,
}

impl<'a> SequenceExampleRef<'a> {
    /// A lazy view of `bytes` (first byte at absolute offset `base`); no check.
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        SequenceExampleRef { bytes, base }
    }

    /// A view of `bytes`, checked the way `ParseFromString` checks it.
    pub fn parse(bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
        Self::parse_with(bytes, base, DecodeOptions::default())
    }

    /// A view of `bytes`, checked with `options`.
    pub fn parse_with(
        bytes: &'a [u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let v = SequenceExampleRef::new(bytes, base);
        v.validate(options.strict)?;
        Ok(v)
    }

    /// The serialized bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The context features (`SequenceExample.context.feature`).
    pub fn context(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(
            Logical::root(self.bytes, self.base, 0).child(1),
            Schema::TensorFlow,
        )
    }

    /// The feature lists (`SequenceExample.feature_lists.feature_list`).
    pub fn feature_lists(&self) -> FeatureListsRef<'a> {
        FeatureListsRef {
            map: MapRef {
                msg: Logical::root(self.bytes, self.base, 0).child(2),
            },
        }
    }

    /// Whether the record has a `context` / `feature_lists` field at all.
    pub fn has_parts(&self) -> Result<(bool, bool), DecodeError> {
        let (mut c, mut l) = (false, false);
        for f in FieldReader::new(self.bytes, self.base, 0) {
            let f = f?;
            match (f.number, f.value) {
                (1, Value::Len(_)) => c = true,
                (2, Value::Len(_)) => l = true,
                _ => {}
            }
        }
        Ok((c, l))
    }

    /// Checks the record like `ParseFromString` (and more in strict mode).
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        validate_top(self.bytes, self.base, strict, |n, b, off| match n {
            1 => {
                Some(FeaturesRef::new(Logical::root(b, off, 1), Schema::TensorFlow).validate(false))
            }
            2 => Some(
                FeatureListsRef {
                    map: MapRef {
                        msg: Logical::root(b, off, 1),
                    },
                }
                .validate(false),
            ),
            _ => None,
        })?;
        if strict {
            self.context().validate(true)?;
            self.feature_lists().validate(true)?;
        }
        Ok(())
    }
}

/// A borrowed OneFlow `OFRecord` (`map<string, Feature> feature = 1`).
#[derive(Debug, Clone, Copy)]
pub struct OfRecordRef<'a> {
    bytes: &'a [u8],
    base: u64,
}

impl<'a> OfRecordRef<'a> {
    /// A lazy view of `bytes` (first byte at absolute offset `base`); no check.
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        OfRecordRef { bytes, base }
    }

    /// A view of `bytes`, checked the way `ParseFromString` checks it.
    pub fn parse(bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
        Self::parse_with(bytes, base, DecodeOptions::default())
    }

    /// A view of `bytes`, checked with `options`.
    pub fn parse_with(
        bytes: &'a [u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let v = OfRecordRef::new(bytes, base);
        v.validate(options.strict)?;
        Ok(v)
    }

    /// The serialized bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The features (`OFRecord.feature`).
    pub fn features(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(Logical::root(self.bytes, self.base, 0), Schema::OneFlow)
    }

    /// The feature named `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        self.features().get(name)
    }

    /// Checks the record like `ParseFromString` (and more in strict mode).
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        // The record is itself the map: validate_map walks its entries and
        // reports unknown top-level fields in strict mode.
        self.features().validate(strict)
    }
}

/// Which message a record's payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    /// `tf.Example`
    Example,
    /// `tf.SequenceExample`
    SequenceExample,
    /// OneFlow `OFRecord`
    OfRecord,
    /// Not decoded: the bytes as they are.
    Raw,
}

impl PayloadKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PayloadKind::Example => "example",
            PayloadKind::SequenceExample => "sequence_example",
            PayloadKind::OfRecord => "ofrecord",
            PayloadKind::Raw => "raw",
        }
    }

    /// Checks `bytes` as this kind of payload.
    pub fn validate(
        self,
        bytes: &[u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<(), DecodeError> {
        match self {
            PayloadKind::Example => ExampleRef::new(bytes, base).validate(options.strict),
            PayloadKind::SequenceExample => {
                SequenceExampleRef::new(bytes, base).validate(options.strict)
            }
            PayloadKind::OfRecord => OfRecordRef::new(bytes, base).validate(options.strict),
            PayloadKind::Raw => Ok(()),
        }
    }
}

impl std::str::FromStr for PayloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "example" => PayloadKind::Example,
            "sequence_example" | "sequence-example" => PayloadKind::SequenceExample,
            "ofrecord" => PayloadKind::OfRecord,
            "raw" => PayloadKind::Raw,
            _ => {
                return Err(format!(
                    "unknown payload '{s}' (expected example, sequence_example, ofrecord or raw)"
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests;
