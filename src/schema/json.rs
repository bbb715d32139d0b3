//! A record as JSON by its schema, value for value what protobuf's
//! `json_format.MessageToDict` gives (with `preserving_proto_field_name=True`
//! unless [`JsonOptions::json_names`]): int64 kinds as strings, bytes in
//! base64, enums by name (the number where unknown), floats in their shortest
//! text (a float as a float32), NaN and the infinities as strings, fields at
//! their default left out where they have no presence.
//!
//! The parse is Google's: the last occurrence of a singular scalar wins, the
//! occurrences of a singular message merge, packed and unpacked runs of a
//! repeated field join, the last entry of a map key wins, the last member of
//! a oneof wins, a field whose wire type does not match its declaration is an
//! unknown field (left out, as protobuf's JSON leaves unknown fields out), and
//! an unknown value of a closed (proto2) enum is an unknown field too.

use std::cell::RefCell;

use super::plan::{zigzag32, zigzag64, FieldKind, FieldPlan, Plan};
use super::Schema;
use crate::json::num::{write_i64, write_u64};
use crate::json::{write_base64, write_f32, write_f64};
use crate::names::write_json_string;
use crate::wire::{DecodeError, DecodeReason, FieldReader, Value, MAX_DEPTH};

/// How [`Schema::write_json`] prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonOptions {
    /// The JSON mapping's lowerCamelCase names (`json_name`) instead of the
    /// fields' own names.
    pub json_names: bool,
    /// Fields without presence are printed at their default too (protobuf's
    /// `always_print_fields_with_no_presence`): `0`, `""`, `[]`, `{}`.
    pub defaults: bool,
}

impl JsonOptions {
    /// Options with [`json_names`](Self::json_names) set to `yes`.
    pub fn with_json_names(mut self, yes: bool) -> Self {
        self.json_names = yes;
        self
    }

    /// Options with [`defaults`](Self::defaults) set to `yes`.
    pub fn with_defaults(mut self, yes: bool) -> Self {
        self.defaults = yes;
        self
    }
}

impl Schema {
    /// Appends the record `record` (whose first byte is at absolute offset
    /// `base`, for errors) as one line of JSON, without a newline.
    ///
    /// Errors: a record that is not a well-formed message (tags, lengths,
    /// groups, nesting deeper than 100), a packed run that does not divide
    /// into its values, and a proto3 `string` that is not UTF-8 (where
    /// Google's parser rejects the message too).
    pub fn write_json(
        &self,
        out: &mut Vec<u8>,
        record: &[u8],
        base: u64,
        options: &JsonOptions,
    ) -> Result<(), DecodeError> {
        let printer = Printer {
            plan: self.plan(),
            options,
            pool: RefCell::new(Vec::new()),
        };
        printer.message(out, 0, &[(record, base)], 0)
    }
}

/// One occurrence of a known field: its value, where its tag was, and its
/// place among the message's occurrences.
#[derive(Clone, Copy)]
pub(super) struct Occurrence<'a> {
    pub(super) value: Value<'a>,
    pub(super) value_offset: u64,
    seq: u32,
}

/// What [`Printer::collect`] found: each field's occurrences, and the
/// winning field of each oneof. Its buffers are kept in the printer's pool
/// and used again for the next message, so that a message costs no
/// allocation once the pool has grown.
#[derive(Default)]
pub(super) struct Found<'a> {
    /// The occurrences in the order of the plan's fields, each field's in
    /// the order read.
    occ: Vec<Occurrence<'a>>,
    /// Where each field's occurrences start in `occ` (one more than the
    /// fields: the last is `occ`'s length).
    starts: Vec<u32>,
    /// The occurrences as read, each with its field's index.
    read: Vec<(u32, Occurrence<'a>)>,
    pub(super) winners: Vec<Option<usize>>,
}

impl<'a> Found<'a> {
    /// The occurrences of the field of index `i`.
    pub(super) fn field(&self, i: usize) -> &[Occurrence<'a>] {
        &self.occ[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// A map entry: its key as JSON text, its value's occurrences when it is a
/// message, and its value's last occurrence otherwise.
type MapEntry<'a> = (Vec<u8>, Vec<(&'a [u8], u64)>, Option<Occurrence<'a>>);

pub(super) struct Printer<'p, 'a> {
    pub(super) plan: &'p Plan,
    options: &'p JsonOptions,
    /// [`Found`]s done with, to be used again.
    pool: RefCell<Vec<Found<'a>>>,
}

/// A scalar value as decoded from the wire.
#[derive(Clone, Copy)]
pub(super) enum Scalar<'a> {
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Bool(bool),
    Str(&'a [u8]),
    Bytes(&'a [u8]),
}

impl Scalar<'_> {
    /// Whether a field without presence holding this value is unset.
    fn is_default(self) -> bool {
        match self {
            Scalar::I32(v) => v == 0,
            Scalar::I64(v) => v == 0,
            Scalar::U32(v) => v == 0,
            Scalar::U64(v) => v == 0,
            // By bits, as upb: -0.0 is set.
            Scalar::F32(v) => v.to_bits() == 0,
            Scalar::F64(v) => v.to_bits() == 0,
            Scalar::Bool(v) => !v,
            Scalar::Str(s) | Scalar::Bytes(s) => s.is_empty(),
        }
    }
}

/// The scalar of kind `kind` that the wire value `value` holds (its wire type
/// already matched).
pub(super) fn scalar(kind: FieldKind, value: Value<'_>) -> Scalar<'_> {
    match (kind, value) {
        (FieldKind::Int32 | FieldKind::Enum(_), Value::Varint(v)) => Scalar::I32(v as i32),
        (FieldKind::Int64, Value::Varint(v)) => Scalar::I64(v as i64),
        (FieldKind::Uint32, Value::Varint(v)) => Scalar::U32(v as u32),
        (FieldKind::Uint64, Value::Varint(v)) => Scalar::U64(v),
        (FieldKind::Sint32, Value::Varint(v)) => Scalar::I32(zigzag32(v as u32)),
        (FieldKind::Sint64, Value::Varint(v)) => Scalar::I64(zigzag64(v)),
        (FieldKind::Bool, Value::Varint(v)) => Scalar::Bool(v != 0),
        (FieldKind::Fixed32, Value::Fixed32(v)) => Scalar::U32(v),
        (FieldKind::Sfixed32, Value::Fixed32(v)) => Scalar::I32(v as i32),
        (FieldKind::Float, Value::Fixed32(v)) => Scalar::F32(f32::from_bits(v)),
        (FieldKind::Fixed64, Value::Fixed64(v)) => Scalar::U64(v),
        (FieldKind::Sfixed64, Value::Fixed64(v)) => Scalar::I64(v as i64),
        (FieldKind::Double, Value::Fixed64(v)) => Scalar::F64(f64::from_bits(v)),
        (FieldKind::String { .. }, Value::Len(b)) => Scalar::Str(b),
        (_, Value::Len(b)) => Scalar::Bytes(b),
        // Not reached: occurrences are kept only where the wire type matches.
        _ => Scalar::U64(0),
    }
}

/// A proto3 `string` value that is not UTF-8 is an error (`InvalidUtf8`).
pub(super) fn check_utf8(kind: FieldKind, value: Value<'_>, at: u64) -> Result<(), DecodeError> {
    match (kind, value) {
        (FieldKind::String { utf8: true }, Value::Len(b)) if std::str::from_utf8(b).is_err() => {
            Err(DecodeError::new(at, DecodeReason::InvalidUtf8))
        }
        _ => Ok(()),
    }
}

/// The elements of a packed run of kind `kind`, each as the wire value it
/// would have alone.
pub(super) fn unpack<'a>(
    kind: FieldKind,
    run: &'a [u8],
    offset: u64,
    mut each: impl FnMut(Value<'a>),
) -> Result<(), DecodeError> {
    match kind.wire_type() {
        0 => {
            let mut rest = run;
            while !rest.is_empty() {
                let at = offset + (run.len() - rest.len()) as u64;
                let (v, n) = crate::wire::decode_varint(rest)
                    .map_err(|reason| DecodeError::new(at, reason))?;
                each(Value::Varint(v));
                rest = &rest[n..];
            }
        }
        width @ (1 | 5) => {
            let w = if width == 1 { 8 } else { 4 };
            if !run.len().is_multiple_of(w) {
                return Err(DecodeError::new(
                    offset,
                    DecodeReason::PackedLength {
                        length: run.len() as u64,
                        width: w as u8,
                    },
                ));
            }
            for chunk in run.chunks_exact(w) {
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(chunk);
                let v = u64::from_le_bytes(b);
                each(if w == 8 {
                    Value::Fixed64(v)
                } else {
                    Value::Fixed32(v as u32)
                });
            }
        }
        _ => {}
    }
    Ok(())
}

impl<'a> Printer<'_, 'a> {
    fn key(&self, out: &mut Vec<u8>, first: &mut bool, f: &FieldPlan) {
        if !*first {
            out.push(b',');
        }
        *first = false;
        let name = if self.options.json_names {
            &f.json_name
        } else {
            &f.name
        };
        write_json_string(out, name.as_bytes());
        out.push(b':');
    }

    /// Whether `value` of a field of kind `kind` is kept: a closed enum's
    /// unknown number is an unknown field.
    pub(super) fn known(&self, kind: FieldKind, value: Value<'_>) -> bool {
        match (kind, value) {
            (FieldKind::Enum(e), Value::Varint(v)) => {
                let e = &self.plan.enums[e];
                !e.closed || e.name(v as i32).is_some()
            }
            _ => true,
        }
    }

    /// The message of type `m` made of the byte slices `chain` (one
    /// occurrence each, merged in order).
    /// The occurrences of each field of message type `m` in `chain`, and the
    /// member of each oneof that came last (its field's index).
    pub(super) fn collect(
        &self,
        m: usize,
        chain: &[(&'a [u8], u64)],
        depth: u32,
    ) -> Result<Found<'a>, DecodeError> {
        let plan = &self.plan.messages[m];
        if depth > MAX_DEPTH {
            let at = chain.first().map_or(0, |c| c.1);
            return Err(DecodeError::new(at, DecodeReason::DepthLimitExceeded));
        }
        let mut found = self.pool.borrow_mut().pop().unwrap_or_default();
        found.read.clear();
        found.starts.clear();
        found.starts.resize(plan.fields.len() + 1, 0);
        let mut seq = 0u32;
        for &(bytes, base) in chain {
            for field in FieldReader::new(bytes, base, depth) {
                let field = field?;
                let Some(i) = plan.field(field.number) else {
                    continue;
                };
                let f = &plan.fields[i];
                if !f.accepts(&field.value) {
                    continue;
                }
                // Every occurrence of a proto3 string, the overridden ones
                // too: Google's parsers refuse the message for any of them.
                check_utf8(f.kind, field.value, field.value_offset)?;
                seq += 1;
                found.starts[i + 1] += 1;
                found.read.push((
                    i as u32,
                    Occurrence {
                        value: field.value,
                        value_offset: field.value_offset,
                        seq,
                    },
                ));
            }
        }
        // Each field's occurrences together, in the order read (a counting
        // sort by field).
        let mut sum = 0;
        for start in found.starts.iter_mut() {
            sum += *start;
            *start = sum;
        }
        let Found {
            occ, starts, read, ..
        } = &mut found;
        occ.clear();
        if let Some(&(_, any)) = read.first() {
            occ.resize(read.len(), any);
        }
        for &(i, o) in read.iter() {
            let at = &mut starts[i as usize];
            occ[*at as usize] = o;
            *at += 1;
        }
        // `starts[i]` has moved to the end of field i: shift back.
        let fields = starts.len() - 1;
        starts.copy_within(..fields, 1);
        starts[0] = 0;
        // The member of each oneof that came last.
        let mut winners: Vec<Option<(u32, usize)>> = vec![None; plan.oneofs];
        for (i, f) in plan.fields.iter().enumerate() {
            let Some(o) = f.oneof else { continue };
            let last = found
                .field(i)
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
        found.winners.clear();
        found
            .winners
            .extend(winners.into_iter().map(|w| w.map(|(_, i)| i)));
        Ok(found)
    }

    /// The message of type `m` made of the byte slices `chain` (one
    /// occurrence each, merged in order).
    pub(super) fn message(
        &self,
        out: &mut Vec<u8>,
        m: usize,
        chain: &[(&'a [u8], u64)],
        depth: u32,
    ) -> Result<(), DecodeError> {
        let plan = &self.plan.messages[m];
        let found = self.collect(m, chain, depth)?;
        if let Some(wk) = plan.well_known {
            self.well_known(out, wk, m, &found, chain, depth)?;
        } else {
            out.push(b'{');
            let mut first = true;
            self.fields(out, &mut first, m, &found, depth)?;
            out.push(b'}');
        }
        self.recycle(found);
        Ok(())
    }

    /// Gives `found`'s buffers back to the pool.
    pub(super) fn recycle(&self, found: Found<'a>) {
        self.pool.borrow_mut().push(found);
    }

    /// The fields of message type `m`, as members of an object already open.
    pub(super) fn fields(
        &self,
        out: &mut Vec<u8>,
        first: &mut bool,
        m: usize,
        found: &Found<'a>,
        depth: u32,
    ) -> Result<(), DecodeError> {
        let plan = &self.plan.messages[m];
        for (i, f) in plan.fields.iter().enumerate() {
            let occ = found.field(i);
            if let Some(o) = f.oneof {
                if found.winners[o] != Some(i) {
                    continue;
                }
            }
            if f.map {
                self.map(out, Some(&mut *first), f, occ, depth)?;
            } else if f.repeated {
                self.repeated(out, Some(&mut *first), f, occ, depth)?;
            } else {
                match f.kind {
                    FieldKind::Message(sub) | FieldKind::Group(sub) => {
                        let part = |o: &Occurrence<'a>| match o.value {
                            Value::Len(b) | Value::Group(b) => (b, o.value_offset),
                            _ => (&[][..], o.value_offset),
                        };
                        match occ {
                            [] => continue,
                            // Most often one occurrence: no list to build.
                            [o] => {
                                self.key(out, first, f);
                                self.message(out, sub, &[part(o)], depth + 1)?;
                            }
                            _ => {
                                let parts: Vec<(&[u8], u64)> = occ.iter().map(part).collect();
                                self.key(out, first, f);
                                self.message(out, sub, &parts, depth + 1)?;
                            }
                        }
                    }
                    kind => {
                        let last = occ.iter().rev().find(|o| self.known(kind, o.value));
                        match last {
                            Some(o) => {
                                let v = scalar(kind, o.value);
                                if !f.presence && v.is_default() && !self.options.defaults {
                                    continue;
                                }
                                self.key(out, first, f);
                                self.scalar(out, kind, v, o.value_offset)?;
                            }
                            None if !f.presence && self.options.defaults => {
                                self.key(out, first, f);
                                self.default(out, kind);
                            }
                            None => {}
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A repeated field as `"name":[...]`, or with `first` `None` its bare
    /// array (a `ListValue`'s), printed even when empty.
    pub(super) fn repeated(
        &self,
        out: &mut Vec<u8>,
        first: Option<&mut bool>,
        f: &FieldPlan,
        occ: &[Occurrence<'a>],
        depth: u32,
    ) -> Result<(), DecodeError> {
        // Printed straight into `out`, taken back when the field turns out
        // empty and is left out.
        let start = out.len();
        let was_first = first.as_deref().copied();
        let mut first = first;
        if let Some(first) = first.as_deref_mut() {
            self.key(out, first, f);
        }
        out.push(b'[');
        let mut n = 0usize;
        let mut failed = None;
        for o in occ {
            match (f.kind, o.value) {
                (
                    FieldKind::Message(sub) | FieldKind::Group(sub),
                    Value::Len(b) | Value::Group(b),
                ) => {
                    if n > 0 {
                        out.push(b',');
                    }
                    n += 1;
                    self.message(out, sub, &[(b, o.value_offset)], depth + 1)?;
                }
                (kind, Value::Len(run)) if kind.packable() => {
                    unpack(kind, run, o.value_offset, |v| {
                        if failed.is_some() || !self.known(kind, v) {
                            return;
                        }
                        if n > 0 {
                            out.push(b',');
                        }
                        n += 1;
                        if let Err(e) = self.scalar(out, kind, scalar(kind, v), o.value_offset) {
                            failed = Some(e);
                        }
                    })?;
                }
                (kind, v) => {
                    if !self.known(kind, v) {
                        continue;
                    }
                    if n > 0 {
                        out.push(b',');
                    }
                    n += 1;
                    self.scalar(out, kind, scalar(kind, v), o.value_offset)?;
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if n == 0 && !self.options.defaults {
            if let (Some(first), Some(was)) = (first, was_first) {
                out.truncate(start);
                *first = was;
                return Ok(());
            }
        }
        out.push(b']');
        Ok(())
    }

    /// A map field as `"name":{...}`, or with `first` `None` its bare object
    /// (a `Struct`'s), printed even when empty.
    pub(super) fn map(
        &self,
        out: &mut Vec<u8>,
        first: Option<&mut bool>,
        f: &FieldPlan,
        occ: &[Occurrence<'a>],
        depth: u32,
    ) -> Result<(), DecodeError> {
        let (FieldKind::Message(entry) | FieldKind::Group(entry)) = f.kind else {
            return Ok(());
        };
        let entry_plan = &self.plan.messages[entry];
        let (Some(k), Some(v)) = (entry_plan.field(1), entry_plan.field(2)) else {
            return Ok(());
        };
        let (key_field, value_field) = (&entry_plan.fields[k], &entry_plan.fields[v]);
        // Each entry as (key text, value occurrences); the last of a key wins,
        // at the place of its first.
        let mut entries: Vec<MapEntry<'_>> = Vec::new();
        for o in occ {
            let Value::Len(bytes) = o.value else { continue };
            let mut key: Option<Scalar<'_>> = None;
            let mut parts: Vec<(&[u8], u64)> = Vec::new();
            let mut last_value: Option<Occurrence<'_>> = None;
            for field in FieldReader::new(bytes, o.value_offset, depth + 1) {
                let field = field?;
                let wire = field.value.wire_type() as u8;
                if field.number == 1 && wire == key_field.kind.wire_type() {
                    check_utf8(key_field.kind, field.value, field.value_offset)?;
                    key = Some(scalar(key_field.kind, field.value));
                } else if field.number == 2 && wire == value_field.kind.wire_type() {
                    check_utf8(value_field.kind, field.value, field.value_offset)?;
                    match (value_field.kind, field.value) {
                        (FieldKind::Message(_), Value::Len(b)) => {
                            parts.push((b, field.value_offset))
                        }
                        (kind, value) if self.known(kind, value) => {
                            last_value = Some(Occurrence {
                                value,
                                value_offset: field.value_offset,
                                seq: 0,
                            });
                        }
                        _ => {}
                    }
                }
            }
            let mut text = Vec::new();
            match key.unwrap_or(match key_field.kind {
                FieldKind::String { .. } => Scalar::Str(b""),
                FieldKind::Bool => Scalar::Bool(false),
                FieldKind::Int64 | FieldKind::Sint64 | FieldKind::Sfixed64 => Scalar::I64(0),
                FieldKind::Uint64 | FieldKind::Fixed64 => Scalar::U64(0),
                FieldKind::Uint32 | FieldKind::Fixed32 => Scalar::U32(0),
                _ => Scalar::I32(0),
            }) {
                Scalar::Str(s) => {
                    if matches!(key_field.kind, FieldKind::String { utf8: true })
                        && std::str::from_utf8(s).is_err()
                    {
                        return Err(DecodeError::new(o.value_offset, DecodeReason::InvalidUtf8));
                    }
                    text.extend_from_slice(s);
                }
                Scalar::Bool(b) => text.extend_from_slice(if b { b"true" } else { b"false" }),
                Scalar::I32(v) => text.extend_from_slice(v.to_string().as_bytes()),
                Scalar::I64(v) => text.extend_from_slice(v.to_string().as_bytes()),
                Scalar::U32(v) => text.extend_from_slice(v.to_string().as_bytes()),
                Scalar::U64(v) => text.extend_from_slice(v.to_string().as_bytes()),
                _ => {}
            }
            match entries.iter_mut().find(|(k, _, _)| *k == text) {
                Some(e) => {
                    e.1 = parts;
                    e.2 = last_value;
                }
                None => entries.push((text, parts, last_value)),
            }
        }
        if entries.is_empty() && !self.options.defaults && first.is_some() {
            return Ok(());
        }
        if let Some(first) = first {
            self.key(out, first, f);
        }
        out.push(b'{');
        for (n, (key, parts, value)) in entries.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            write_json_string(out, key);
            out.push(b':');
            match value_field.kind {
                FieldKind::Message(sub) => self.message(out, sub, parts, depth + 2)?,
                kind => match value {
                    Some(o) => self.scalar(out, kind, scalar(kind, o.value), o.value_offset)?,
                    None => self.default(out, kind),
                },
            }
        }
        out.push(b'}');
        Ok(())
    }

    pub(super) fn scalar(
        &self,
        out: &mut Vec<u8>,
        kind: FieldKind,
        v: Scalar<'_>,
        offset: u64,
    ) -> Result<(), DecodeError> {
        match (kind, v) {
            (FieldKind::Enum(e), _) if self.plan.enums[e].null => out.extend_from_slice(b"null"),
            (FieldKind::Enum(e), Scalar::I32(n)) => match self.plan.enums[e].name(n) {
                Some(name) => write_json_string(out, name.as_bytes()),
                None => write_i64(out, i64::from(n)),
            },
            (_, Scalar::I32(n)) => write_i64(out, i64::from(n)),
            (_, Scalar::U32(n)) => write_u64(out, u64::from(n)),
            (_, Scalar::I64(n)) => {
                out.push(b'"');
                write_i64(out, n);
                out.push(b'"');
            }
            (_, Scalar::U64(n)) => {
                out.push(b'"');
                write_u64(out, n);
                out.push(b'"');
            }
            (_, Scalar::F32(x)) => write_f32(out, x),
            (_, Scalar::F64(x)) => write_f64(out, x),
            (_, Scalar::Bool(b)) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            (FieldKind::String { utf8 }, Scalar::Str(s)) => {
                if utf8 && std::str::from_utf8(s).is_err() {
                    return Err(DecodeError::new(offset, DecodeReason::InvalidUtf8));
                }
                write_json_string(out, s);
            }
            (_, Scalar::Str(s) | Scalar::Bytes(s)) => {
                out.push(b'"');
                write_base64(out, s);
                out.push(b'"');
            }
        }
        Ok(())
    }

    /// A field's default, for [`JsonOptions::defaults`].
    pub(super) fn default(&self, out: &mut Vec<u8>, kind: FieldKind) {
        match kind {
            FieldKind::Int64
            | FieldKind::Sint64
            | FieldKind::Sfixed64
            | FieldKind::Uint64
            | FieldKind::Fixed64 => out.extend_from_slice(b"\"0\""),
            FieldKind::Float | FieldKind::Double => out.extend_from_slice(b"0.0"),
            FieldKind::Bool => out.extend_from_slice(b"false"),
            FieldKind::String { .. } | FieldKind::Bytes => out.extend_from_slice(b"\"\""),
            FieldKind::Enum(e) if self.plan.enums[e].null => out.extend_from_slice(b"null"),
            // A proto3 enum's default is 0, by its (first) name; values are
            // sorted by number, so not necessarily the first (`NEG = -1`).
            FieldKind::Enum(e) => match self.plan.enums[e].name(0) {
                Some(name) => write_json_string(out, name.as_bytes()),
                None => out.push(b'0'),
            },
            FieldKind::Message(_) | FieldKind::Group(_) => out.extend_from_slice(b"{}"),
            _ => out.push(b'0'),
        }
    }
}
