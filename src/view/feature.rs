//! `Feature`: [`FeatureRef`], the oneof of lists, and [`ListRef`], its list typed.

use super::logical::Logical;
use super::*;
use crate::wire::{DecodeError, DecodeReason};
use crate::wire::{Field, FieldReader, Value, MAX_DEPTH};

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
    pub(super) fn new(kind: Kind, list: Logical<'a>) -> Self {
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

    pub(super) fn logical(&self) -> Logical<'a> {
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
    pub(super) msg: Logical<'a>,
    pub(super) schema: Schema,
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

    pub(super) fn from_logical(msg: Logical<'a>, schema: Schema) -> Self {
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
    #[inline]
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
        self.list_general()
    }

    /// [`list`](Self::list) from the walk of the feature's fields.
    #[inline(never)]
    fn list_general(&self) -> Result<Option<ListRef<'a>>, DecodeError> {
        let depth = self.msg.depth();
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

pub(super) fn first_field_offset(l: Logical<'_>) -> Result<Option<u64>, DecodeError> {
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

pub(super) fn nested_depth(depth: u32, at: u64) -> Result<u32, DecodeError> {
    if depth >= MAX_DEPTH {
        Err(DecodeError::new(at, DecodeReason::DepthLimitExceeded))
    } else {
        Ok(depth + 1)
    }
}

/// Validates one segment of a `Feature` (see [`FeatureRef::validate`]):
/// the usual shape here, inlined into the walks over maps and frames;
/// anything else out of line.
#[inline(always)]
pub(super) fn validate_feature_segment(
    seg: &[u8],
    base: u64,
    depth: u32,
    schema: Schema,
    strict: bool,
) -> Result<(), DecodeError> {
    // The usual feature, `<list tag> <len> 0a <len> run`, each length of
    // one or two bytes: checked from its bytes as the two steps below would
    // check it.
    if let Some((tag, run, list_at, run_at)) = usual_feature(seg) {
        if depth < MAX_DEPTH {
            if let Some(kind) = schema.kind_of(u32::from(tag >> 3)) {
                return list::validate_one_run(kind, run, base + list_at, base + run_at);
            }
        }
    }
    validate_feature_general(seg, base, depth, schema, strict)
}

/// [`validate_feature_segment`] past the usual shape.
#[inline(never)]
fn validate_feature_general(
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
    validate_feature_fields(seg, base, depth, schema, strict)
}

/// The usual `Feature`: `seg` is one list field (a one-byte tag of wire
/// type LEN) holding one field `0a` (a packed run, or one bytes value),
/// each length of one or two bytes and exactly filling its message. Its
/// tag, the run, and the offsets in `seg` of the list and of the run.
#[inline(always)]
fn usual_feature(seg: &[u8]) -> Option<(u8, &[u8], u64, u64)> {
    let (&tag, rest) = seg.split_first()?;
    if tag & 0x87 != 2 || tag < 8 {
        return None;
    }
    let (len, n) = crate::wire::short_len(rest)?;
    let list = rest.get(n..)?;
    let [0x0a, rest @ ..] = list else {
        return None;
    };
    let (run_len, m) = crate::wire::short_len(rest)?;
    let run = rest.get(m..)?;
    (len == list.len() && run_len == run.len()).then_some((
        tag,
        run,
        1 + n as u64,
        2 + (n + m) as u64,
    ))
}

/// [`validate_feature_segment`] by the walk of the segment's fields.
#[inline(never)]
pub(super) fn validate_feature_fields(
    seg: &[u8],
    base: u64,
    depth: u32,
    schema: Schema,
    strict: bool,
) -> Result<(), DecodeError> {
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
