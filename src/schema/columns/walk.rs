//! The walk of [`super`]: each record read along the compiled paths, each
//! value appended to its column builder, with Google's parse semantics (as
//! the JSON printer's: see `schema::json`).

use super::build::{Cell, Col};
use super::{Node, Sel};
use crate::schema::json::{scalar, unpack, Scalar};
use crate::schema::plan::{FieldKind, Plan};
use crate::wire::{check_message, DecodeError, DecodeReason, FieldReader, Value, MAX_DEPTH};

/// One occurrence of a field: its value, where the value starts, and its
/// place among its message's occurrences (for oneofs).
#[derive(Clone, Copy)]
struct Occ<'a> {
    value: Value<'a>,
    at: u64,
    seq: u32,
}

/// A map key, compared as the parser compares them.
#[derive(PartialEq, Eq)]
enum Key<'a> {
    Text(&'a [u8]),
    Int(i128),
    Bool(bool),
}

/// One map entry: its key, its value's occurrences (a message value) or its
/// last one (a scalar).
type Entry<'a> = (
    Scalar<'a>,
    u64,
    Vec<(&'a [u8], u64)>,
    Option<(Value<'a>, u64)>,
);

fn key_of<'a>(s: &Scalar<'a>) -> Key<'a> {
    match *s {
        Scalar::I32(v) => Key::Int(v.into()),
        Scalar::I64(v) => Key::Int(v.into()),
        Scalar::U32(v) => Key::Int(v.into()),
        Scalar::U64(v) => Key::Int(v.into()),
        Scalar::Bool(b) => Key::Bool(b),
        Scalar::Str(b) | Scalar::Bytes(b) => Key::Text(b),
        // Not a key kind.
        Scalar::F32(_) | Scalar::F64(_) => Key::Int(0),
    }
}

/// The zero of a kind, what an absent field without presence holds.
fn zero(kind: FieldKind) -> Scalar<'static> {
    match kind {
        FieldKind::Double => Scalar::F64(0.0),
        FieldKind::Float => Scalar::F32(0.0),
        FieldKind::Int64 | FieldKind::Sint64 | FieldKind::Sfixed64 => Scalar::I64(0),
        FieldKind::Uint64 | FieldKind::Fixed64 => Scalar::U64(0),
        FieldKind::Uint32 | FieldKind::Fixed32 => Scalar::U32(0),
        FieldKind::Bool => Scalar::Bool(false),
        FieldKind::String { .. } => Scalar::Str(b""),
        FieldKind::Bytes | FieldKind::Message(_) | FieldKind::Group(_) => Scalar::Bytes(b""),
        FieldKind::Int32 | FieldKind::Sint32 | FieldKind::Sfixed32 | FieldKind::Enum(_) => {
            Scalar::I32(0)
        }
    }
}

/// The bytes of a message occurrence (a length-delimited value or a group).
fn message_bytes<'a>(v: Value<'a>) -> &'a [u8] {
    match v {
        Value::Len(b) | Value::Group(b) => b,
        _ => &[],
    }
}

pub(super) struct Walker<'p> {
    pub(super) plan: &'p Plan,
    pub(super) enum_names: bool,
}

impl Walker<'_> {
    /// Appends the row of `record` (at absolute offset `base`) to `col`.
    pub(super) fn root(
        &self,
        sel: &Sel,
        col: &mut Col,
        record: &[u8],
        base: u64,
    ) -> Result<(), DecodeError> {
        match sel {
            Sel::Single { node, .. } => self.message(node, col, &[(record, base)], 0),
            // Not made by `compile_path`.
            _ => {
                col.push_null();
                Ok(())
            }
        }
    }

    /// Whether `value` of kind `kind` is kept: a closed enum's unknown
    /// number is an unknown field.
    fn known(&self, kind: FieldKind, value: Value<'_>) -> bool {
        match (kind, value) {
            (FieldKind::Enum(e), Value::Varint(v)) => {
                let e = &self.plan.enums[e];
                !e.closed || e.name(v as i32).is_some()
            }
            _ => true,
        }
    }

    /// The occurrences of the fields of message `m` in `chain` (merged in
    /// order): of every field, or with `only` of that one and the other
    /// members of its oneof. A oneof member that did not come last has none.
    fn collect<'a>(
        &self,
        m: usize,
        chain: &[(&'a [u8], u64)],
        depth: u32,
        only: Option<usize>,
    ) -> Result<Vec<Vec<Occ<'a>>>, DecodeError> {
        if depth > MAX_DEPTH {
            let at = chain.first().map_or(0, |c| c.1);
            return Err(DecodeError::new(at, DecodeReason::DepthLimitExceeded));
        }
        let plan = &self.plan.messages[m];
        let only_oneof = only.and_then(|i| plan.fields[i].oneof);
        let mut found: Vec<Vec<Occ<'a>>> = vec![Vec::new(); plan.fields.len()];
        let mut seq = 0u32;
        for &(bytes, base) in chain {
            for field in FieldReader::new(bytes, base, depth) {
                let field = field?;
                let Some(i) = plan.field(field.number) else {
                    continue;
                };
                let f = &plan.fields[i];
                if only.is_some_and(|o| o != i) && (only_oneof.is_none() || f.oneof != only_oneof) {
                    continue;
                }
                if !f.accepts(&field.value) {
                    continue;
                }
                seq += 1;
                found[i].push(Occ {
                    value: field.value,
                    at: field.value_offset,
                    seq,
                });
            }
        }
        // The member of each oneof that came last keeps its occurrences.
        let mut winners: Vec<Option<(u32, usize)>> = vec![None; plan.oneofs];
        for (i, f) in plan.fields.iter().enumerate() {
            let Some(o) = f.oneof else { continue };
            let last = found[i]
                .iter()
                .rev()
                .find(|occ| self.known(f.kind, occ.value))
                .map(|occ| occ.seq);
            if let Some(seq) = last {
                if winners[o].is_none_or(|(s, _)| seq > s) {
                    winners[o] = Some((seq, i));
                }
            }
        }
        for (i, f) in plan.fields.iter().enumerate() {
            if let Some(o) = f.oneof {
                if winners[o].map(|(_, w)| w) != Some(i) {
                    found[i].clear();
                }
            }
        }
        Ok(found)
    }

    /// Appends the value of message node `node` made of `chain` (its
    /// occurrences, merged in order) at nesting `depth`.
    fn message(
        &self,
        node: &Node,
        col: &mut Col,
        chain: &[(&[u8], u64)],
        depth: u32,
    ) -> Result<(), DecodeError> {
        match node {
            Node::Cut => {
                let mut joined = Vec::new();
                for &(bytes, base) in chain {
                    check_message(bytes, base, depth)?;
                    joined.extend_from_slice(bytes);
                }
                col.push(Cell::Bytes(&joined));
            }
            Node::Struct { m, members } => {
                let found = self.collect(*m, chain, depth, None)?;
                for ((i, sel), child) in members.iter().zip(col.children()) {
                    self.field(sel, child, &found[*i], depth)?;
                }
                col.close_struct();
            }
            Node::Pick { m, index, sel } => {
                let found = self.collect(*m, chain, depth, Some(*index))?;
                self.field(sel, col, &found[*index], depth)?;
            }
            // Not a message node.
            Node::Scalar(_) => col.push_null(),
        }
        Ok(())
    }

    /// Appends the value of a field taken as `sel`, from its occurrences
    /// `occ` in a message at nesting `depth`.
    fn field(
        &self,
        sel: &Sel,
        col: &mut Col,
        occ: &[Occ<'_>],
        depth: u32,
    ) -> Result<(), DecodeError> {
        match sel {
            Sel::Single {
                nullable,
                node: Node::Scalar(kind),
            } => match occ.iter().rev().find(|o| self.known(*kind, o.value)) {
                Some(o) => self.push(col, *kind, scalar(*kind, o.value), o.at)?,
                None if *nullable => col.push_null(),
                None => self.push(col, *kind, zero(*kind), 0)?,
            },
            Sel::Single { node, .. } => {
                if occ.is_empty() {
                    col.push_null();
                } else {
                    let parts: Vec<(&[u8], u64)> =
                        occ.iter().map(|o| (message_bytes(o.value), o.at)).collect();
                    self.message(node, col, &parts, depth + 1)?;
                }
            }
            Sel::Repeated(node) => {
                if let Some(item) = col.item() {
                    self.items(node, item, occ, depth)?;
                }
                col.close_row();
            }
            Sel::Map { key, value } => {
                self.map(*key, value, col, occ, depth)?;
                col.close_row();
            }
        }
        Ok(())
    }

    /// Appends the elements of a repeated field to its list's item column.
    fn items(
        &self,
        node: &Node,
        item: &mut Col,
        occ: &[Occ<'_>],
        depth: u32,
    ) -> Result<(), DecodeError> {
        for o in occ {
            match (node, o.value) {
                (Node::Scalar(kind), Value::Len(run)) if kind.packable() => {
                    // Numbers only: pushing them cannot fail.
                    unpack(*kind, run, o.at, |v| {
                        if self.known(*kind, v) {
                            let _ = self.push(item, *kind, scalar(*kind, v), o.at);
                        }
                    })?;
                }
                (Node::Scalar(kind), v) => {
                    if self.known(*kind, v) {
                        self.push(item, *kind, scalar(*kind, v), o.at)?;
                    }
                }
                (node, v) => self.message(node, item, &[(message_bytes(v), o.at)], depth + 1)?,
            }
        }
        Ok(())
    }

    /// Appends the entries of a map field (its entries' occurrences `occ`)
    /// to its key and value columns.
    fn map(
        &self,
        key_kind: FieldKind,
        value: &Node,
        col: &mut Col,
        occ: &[Occ<'_>],
        depth: u32,
    ) -> Result<(), DecodeError> {
        let value_wire = match value {
            Node::Scalar(kind) => kind.wire_type(),
            _ => 2,
        };
        // The last entry of a key wins, at the place of its first.
        let mut entries: Vec<Entry<'_>> = Vec::new();
        for o in occ {
            let Value::Len(bytes) = o.value else { continue };
            let mut key: Option<(Scalar<'_>, u64)> = None;
            let mut parts: Vec<(&[u8], u64)> = Vec::new();
            let mut last: Option<(Value<'_>, u64)> = None;
            for field in FieldReader::new(bytes, o.at, depth + 1) {
                let field = field?;
                let wire = field.value.wire_type() as u8;
                if field.number == 1 && wire == key_kind.wire_type() {
                    key = Some((scalar(key_kind, field.value), field.value_offset));
                } else if field.number == 2 && wire == value_wire {
                    match value {
                        Node::Scalar(kind) => {
                            if self.known(*kind, field.value) {
                                last = Some((field.value, field.value_offset));
                            }
                        }
                        _ => parts.push((message_bytes(field.value), field.value_offset)),
                    }
                }
            }
            let (key, key_at) = key.unwrap_or((zero(key_kind), o.at));
            if let (FieldKind::String { utf8: true }, Scalar::Str(s)) = (key_kind, key) {
                if std::str::from_utf8(s).is_err() {
                    return Err(DecodeError::new(o.at, DecodeReason::InvalidUtf8));
                }
            }
            match entries.iter_mut().find(|e| key_of(&e.0) == key_of(&key)) {
                Some(e) => {
                    e.2 = parts;
                    e.3 = last;
                }
                None => entries.push((key, key_at, parts, last)),
            }
        }
        let Some((keys, values)) = col.entries() else {
            return Ok(());
        };
        for (key, key_at, parts, last) in entries {
            self.push(keys, key_kind, key, key_at)?;
            match (value, last) {
                (Node::Scalar(kind), Some((v, at))) => {
                    self.push(values, *kind, scalar(*kind, v), at)?
                }
                (Node::Scalar(kind), None) => self.push(values, *kind, zero(*kind), 0)?,
                (node, _) => self.message(node, values, &parts, depth + 2)?,
            }
        }
        Ok(())
    }

    /// Appends a scalar of kind `kind` (whose value is at `at`, for errors).
    fn push(
        &self,
        col: &mut Col,
        kind: FieldKind,
        v: Scalar<'_>,
        at: u64,
    ) -> Result<(), DecodeError> {
        let cell = match (kind, v) {
            (FieldKind::Enum(e), Scalar::I32(n)) if self.enum_names => {
                match self.plan.enums[e].name(n) {
                    Some(name) => col.push(Cell::Bytes(name.as_bytes())),
                    None => col.push(Cell::Bytes(n.to_string().as_bytes())),
                }
                return Ok(());
            }
            (FieldKind::String { utf8 }, Scalar::Str(s)) => match std::str::from_utf8(s) {
                Ok(_) => Cell::Bytes(s),
                Err(_) if utf8 => {
                    return Err(DecodeError::new(at, DecodeReason::InvalidUtf8));
                }
                Err(_) => {
                    col.push(Cell::Bytes(String::from_utf8_lossy(s).as_bytes()));
                    return Ok(());
                }
            },
            (_, Scalar::I32(n)) => Cell::I32(n),
            (_, Scalar::I64(n)) => Cell::I64(n),
            (_, Scalar::U32(n)) => Cell::U32(n),
            (_, Scalar::U64(n)) => Cell::U64(n),
            (_, Scalar::F32(x)) => Cell::F32(x),
            (_, Scalar::F64(x)) => Cell::F64(x),
            (_, Scalar::Bool(b)) => Cell::Bool(b),
            (_, Scalar::Str(b) | Scalar::Bytes(b)) => Cell::Bytes(b),
        };
        col.push(cell);
        Ok(())
    }
}
