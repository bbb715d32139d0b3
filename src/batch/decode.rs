//! The batched decoder: one pass over each record, values from the wire
//! straight into the columns.

use std::sync::Arc;

use super::column::{Batch, Column, Mark};
use super::fast::fast_map;
use super::finish::finish;
use super::spec::{DType, FeatureSpec, Form, NameTable, Spec};
use crate::error::{Error, ErrorKind, FeatureProblem};
use crate::frame::Record;
use crate::view::{
    ExampleRef, FeatureListRef, FeaturesRef, ListRef, NumList, OfRecordRef, PayloadKind,
    SequenceExampleRef,
};
use crate::wire::DecodeError;

/// A record to decode: its payload, where the payload starts in its file
/// (the base of error offsets), its id and its file.
///
/// Implemented for [`Record`] (from a reader, an index or a
/// [`Dataset`](crate::index::Dataset)) and for plain payload slices
/// (`&[u8]`: offsets from the payload's start, the id is the position in
/// the batch).
pub trait Input<'a>: Sync {
    /// The serialized payload.
    fn payload(&self) -> &'a [u8];
    /// Absolute offset of the payload's first byte.
    fn base(&self) -> u64;
    /// The record id (`position` is the record's place in the batch).
    fn id(&self, position: usize) -> u64;
    /// The file, when known.
    fn file(&self) -> Option<&'a Arc<str>>;
}

impl<'a> Input<'a> for Record<'a> {
    fn payload(&self) -> &'a [u8] {
        self.data
    }
    fn base(&self) -> u64 {
        self.data_offset
    }
    fn id(&self, _: usize) -> u64 {
        self.id
    }
    fn file(&self) -> Option<&'a Arc<str>> {
        self.file
    }
}

impl<'a> Input<'a> for &'a [u8] {
    fn payload(&self) -> &'a [u8] {
        self
    }
    fn base(&self) -> u64 {
        0
    }
    fn id(&self, position: usize) -> u64 {
        position as u64
    }
    fn file(&self) -> Option<&'a Arc<str>> {
        None
    }
}

/// Why an entry failed: bad wire data, or a value that does not fit the spec.
#[derive(Debug, Clone)]
pub(crate) enum Fail {
    Decode(DecodeError),
    Feature(u64, FeatureProblem),
}

impl From<DecodeError> for Fail {
    fn from(e: DecodeError) -> Self {
        Fail::Decode(e)
    }
}

/// The form of a column as the decoder sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// `elems` values per record, in place.
    Fixed { elems: usize },
    /// Any number of values per record.
    VarLen,
    /// A multiple of `elems` values per record (`elems` per frame in a
    /// sequence spec), padded when the batch is finished.
    Padded { elems: usize },
    /// Frames of any number of values.
    RaggedFrames,
    /// OneFlow's raw decoder.
    Raw { elems: usize, fewer: bool },
}

pub(crate) fn shape_of(f: &FeatureSpec, in_sequence: bool) -> Shape {
    let elems = f.elements();
    match &f.form {
        Form::FixedLen { .. } => Shape::Fixed { elems },
        Form::VarLen if in_sequence => Shape::RaggedFrames,
        Form::VarLen => Shape::VarLen,
        Form::FixedLenSequence { .. } => Shape::Padded { elems },
        Form::OfRecordRaw {
            dim1_varying_length,
            auto_zero_padding,
            ..
        } => Shape::Raw {
            elems,
            fewer: *dim1_varying_length || *auto_zero_padding,
        },
    }
}

impl<'a> Column<'a> {
    /// Where the column stands now (to take an entry back).
    #[inline]
    fn mark_now(&self) -> Mark {
        Mark {
            values: self.len(),
            frame_splits: self.frame_splits.count::<i64>(),
        }
    }

    /// Drops values past the first `n`.
    fn truncate_values(&mut self, n: usize) {
        match (self.dtype, self.borrow) {
            (DType::Bytes, true) => self.borrowed.truncate(n),
            (DType::Bytes, false) => {
                self.offsets.truncate((n + 1) * 8);
                let end = self.offsets.typed::<i64>()[n] as usize;
                self.values.truncate(end);
            }
            (d, _) => self.values.truncate(n * d.width()),
        }
    }

    /// Takes back what entries of the current row appended.
    #[inline]
    pub(super) fn rollback(&mut self) {
        let m = self.mark;
        self.truncate_values(m.values);
        self.frame_splits.truncate(m.frame_splits * 8);
    }

    /// Keeps the first `rows` rows (before the batch is finished).
    fn truncate_rows(&mut self, rows: usize, shape: Shape) {
        match shape {
            Shape::Fixed { elems } | Shape::Raw { elems, .. } => {
                self.truncate_values(rows * elems);
                self.lengths.truncate(rows * 8);
            }
            Shape::VarLen | Shape::Padded { .. } => {
                self.splits.truncate((rows + 1) * 8);
                let n = self.splits.typed::<i64>()[rows] as usize;
                self.truncate_values(n);
            }
            Shape::RaggedFrames => {
                self.splits.truncate((rows + 1) * 8);
                let frames = self.splits.typed::<i64>()[rows] as usize;
                self.frame_splits.truncate((frames + 1) * 8);
                let n = self.frame_splits.typed::<i64>()[frames] as usize;
                self.truncate_values(n);
            }
        }
    }

    /// Appends the values of `list` (which must be of the column's type) and
    /// returns how many.
    #[inline]
    fn append_list(
        &mut self,
        list: Option<ListRef<'a>>,
        exact: Option<usize>,
        at: u64,
    ) -> Result<usize, Fail> {
        let Some(list) = list else {
            return Ok(0);
        };
        match (list, self.dtype) {
            (ListRef::Int64(l), DType::Int64) => append_num(&mut self.values, l, exact),
            (ListRef::Float(l), DType::Float32) => append_num(&mut self.values, l, exact),
            (ListRef::Int32(l), DType::Int32) => append_num(&mut self.values, l, exact),
            (ListRef::Double(l), DType::Float64) => append_num(&mut self.values, l, exact),
            (ListRef::Bytes(l), DType::Bytes) => {
                let mut n = 0;
                if self.borrow {
                    for v in l.iter() {
                        self.borrowed.push(v?);
                        n += 1;
                    }
                } else {
                    for v in l.iter() {
                        self.values.extend_from_slice(v?);
                        self.offsets.push(self.values.len() as i64);
                        n += 1;
                    }
                }
                Ok(n)
            }
            (l, d) => Err(Fail::Feature(
                at,
                FeatureProblem::WrongType {
                    expected: d.name_str(),
                    found: l.kind().name(),
                },
            )),
        }
    }

    /// Appends one value slot from the default (element `i` of it), or a
    /// zero / empty value when there is none.
    fn push_default(&mut self, spec_default: Option<&'a [u8]>, raw: Option<&[u8]>, i: usize) {
        match (self.dtype, self.borrow) {
            (DType::Bytes, true) => self.borrowed.push(spec_default.unwrap_or_default()),
            (DType::Bytes, false) => {
                self.values
                    .extend_from_slice(spec_default.unwrap_or_default());
                self.offsets.push(self.values.len() as i64);
            }
            (d, _) => {
                let w = d.width();
                match raw.and_then(|r| r.get(i * w..(i + 1) * w)) {
                    Some(v) => self.values.extend_from_slice(v),
                    None => self.values.extend_space(w).fill(0),
                }
            }
        }
    }

    /// Appends one OFRecord raw decoder row (`elems` values, zeros after the
    /// record's own) from `list`.
    fn append_raw(
        &mut self,
        list: Option<ListRef<'a>>,
        elems: usize,
        fewer: bool,
        at: u64,
    ) -> Result<usize, Fail> {
        let start = self.values.len();
        let w = self.dtype.width();
        self.values.extend_space(elems * w).fill(0);
        let row = &mut self.values.as_bytes_mut()[start..];
        let n = match list {
            None => 0,
            Some(ListRef::Bytes(l)) => {
                let mut it = l.iter();
                let first = it.next().transpose()?;
                let more = it.count();
                let Some(v) = first.filter(|_| more == 0) else {
                    let found = usize::from(first.is_some()) + more;
                    return Err(Fail::Feature(
                        at,
                        FeatureProblem::NotOneBytesValue { found },
                    ));
                };
                let n = v.len().min(elems);
                for (i, &b) in v[..n].iter().enumerate() {
                    put_cast(row, self.dtype, i, Num::I(i64::from(b as i8)));
                }
                return Ok(n);
            }
            Some(ListRef::Int64(l)) => raw_values(l, row, self.dtype, elems, fewer, at, Num::I)?,
            Some(ListRef::Int32(l)) => raw_values(l, row, self.dtype, elems, fewer, at, |v| {
                Num::I(i64::from(v))
            })?,
            Some(ListRef::Float(l)) => raw_values(l, row, self.dtype, elems, fewer, at, |v| {
                Num::F(f64::from(v))
            })?,
            Some(ListRef::Double(l)) => raw_values(l, row, self.dtype, elems, fewer, at, Num::F)?,
        };
        Ok(n)
    }
}

impl DType {
    fn name_str(self) -> &'static str {
        crate::names::OptionName::name(self)
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

/// Stores `v` as element `i` of `row`, converted to `dtype` the way C++'s
/// `static_cast` does (float to integer truncates; out of range saturates,
/// where C++ leaves it undefined).
fn put_cast(row: &mut [u8], dtype: DType, i: usize, v: Num) {
    macro_rules! put {
        ($t:ty) => {{
            let x: $t = match v {
                Num::I(x) => x as $t,
                Num::F(x) => x as $t,
            };
            let w = std::mem::size_of::<$t>();
            row[i * w..(i + 1) * w].copy_from_slice(&x.to_le_bytes());
        }};
    }
    match dtype {
        DType::Int64 => put!(i64),
        DType::Int32 => put!(i32),
        DType::Int8 => put!(i8),
        DType::UInt8 => put!(u8),
        DType::Float32 => put!(f32),
        DType::Float64 => put!(f64),
        DType::Bytes => {}
    }
}

fn raw_values<T: crate::view::Element>(
    l: NumList<'_, T>,
    row: &mut [u8],
    dtype: DType,
    elems: usize,
    fewer: bool,
    at: u64,
    num: impl Fn(T) -> Num,
) -> Result<usize, Fail> {
    let n = l.len()?;
    if fewer && n > elems {
        return Err(Fail::Feature(
            at,
            FeatureProblem::TooMany {
                max: elems,
                found: n,
            },
        ));
    }
    if !fewer && n != elems {
        return Err(Fail::Feature(
            at,
            FeatureProblem::WrongCount {
                expected: elems,
                found: n,
            },
        ));
    }
    for (i, v) in l.iter().enumerate() {
        put_cast(row, dtype, i, num(v?));
    }
    Ok(n)
}

/// Decodes a numeric list straight into the column in one pass: room for
/// `exact` values (a fixed_len feature's count: any other count is an error
/// the caller reports) or for the list's bound, then the values, then the
/// length cut to what the list held.
#[inline]
fn append_num<T: crate::view::Element + bytemuck::Pod>(
    values: &mut super::buf::AlignedBuf,
    l: NumList<'_, T>,
    exact: Option<usize>,
) -> Result<usize, Fail> {
    let room = match exact {
        Some(n) => n,
        None => l.len_bound()?,
    };
    let start = values.len();
    let out = values.extend_typed::<T>(room);
    let n = l.copy_to_slice(out)?;
    values.truncate(start + n.min(room) * std::mem::size_of::<T>());
    Ok(n)
}

/// The default of a bytes feature as a slice of the spec (element `i`).
pub(super) fn spec_bytes_default(f: &FeatureSpec, i: usize) -> Option<&[u8]> {
    match &f.form {
        Form::FixedLen {
            default: Some(super::spec::DefaultValue::Bytes(b)),
            ..
        }
        | Form::FixedLenSequence {
            default: Some(super::spec::DefaultValue::Bytes(b)),
            ..
        } => b.get(i).map(Vec::as_slice),
        _ => None,
    }
}

/// Decodes one record's feature map into `columns`; `stamp` marks the
/// columns touched in this row.
fn decode_map<'a>(
    columns: &mut [Column<'a>],
    features: &[FeatureSpec],
    table: &NameTable,
    map: FeaturesRef<'a>,
    stamp: u64,
    no_kind_is_absent: bool,
) -> Result<bool, DecodeError> {
    let mut failed = false;
    for nf in map.entries() {
        let nf = nf?;
        let Some(c) = table.find(features, nf.entry.name) else {
            continue;
        };
        let col = &mut columns[c];
        let shape = col.form;
        let list = nf.feature.list();
        // parse_example reads a fixed_len Feature with no list as no entry
        // at all: the default fills it, an earlier entry of the name stays.
        // (A SequenceExample's context reads it as zero values.)
        if no_kind_is_absent && matches!((shape, &list), (Shape::Fixed { .. }, Ok(None))) {
            continue;
        }
        col.begin_entry(stamp);
        let r = list
            .map_err(Fail::from)
            .and_then(|list| col.append_feature(shape, list, nf.entry.offset));
        failed |= col.end_entry(r);
    }
    Ok(failed)
}

/// Decodes one SequenceExample's feature lists into `columns`.
fn decode_lists<'a>(
    columns: &mut [Column<'a>],
    features: &[FeatureSpec],
    table: &NameTable,
    lists: crate::view::FeatureListsRef<'a>,
    stamp: u64,
) -> Result<bool, DecodeError> {
    let mut failed = false;
    for nl in lists.entries() {
        let nl = nl?;
        let Some(c) = table.find(features, nl.entry.name) else {
            continue;
        };
        let col = &mut columns[c];
        let shape = col.form;
        col.begin_entry(stamp);
        let r = col.append_frames(shape, nl.list, nl.entry.offset);
        failed |= col.end_entry(r);
    }
    Ok(failed)
}

impl<'a> Column<'a> {
    /// Before an entry of this column's name: the last entry of a name wins
    /// (TensorFlow skips the earlier ones unread), so what an earlier entry
    /// of this row appended is taken back.
    #[inline]
    pub(super) fn begin_entry(&mut self, stamp: u64) {
        if self.seen == stamp {
            self.rollback();
        } else {
            self.seen = stamp;
            self.mark = self.mark_now();
        }
        self.pending = None;
        self.entry_len = 0;
    }

    /// After an entry: a failure is kept until the record ends (a later
    /// entry of the name may replace it). Returns whether it failed.
    #[inline]
    fn end_entry(&mut self, r: Result<(), Fail>) -> bool {
        match r {
            Ok(()) => false,
            Err(fail) => {
                self.rollback();
                self.pending = Some(fail);
                true
            }
        }
    }

    #[inline]
    fn append_feature(
        &mut self,
        shape: Shape,
        list: Option<ListRef<'a>>,
        at: u64,
    ) -> Result<(), Fail> {
        match shape {
            Shape::Fixed { elems } => {
                let n = self.append_list(list, Some(elems), at)?;
                if n != elems {
                    let problem = FeatureProblem::WrongCount {
                        expected: elems,
                        found: n,
                    };
                    return Err(Fail::Feature(at, problem));
                }
            }
            Shape::VarLen => {
                self.append_list(list, None, at)?;
            }
            Shape::Padded { elems, .. } => {
                let n = self.append_list(list, None, at)?;
                if (elems == 0 && n != 0) || (elems != 0 && n % elems != 0) {
                    let problem = FeatureProblem::NotMultiple {
                        element: elems,
                        found: n,
                    };
                    return Err(Fail::Feature(at, problem));
                }
            }
            Shape::Raw { elems, fewer, .. } => {
                self.entry_len = self.append_raw(list, elems, fewer, at)?;
            }
            Shape::RaggedFrames => {}
        }
        Ok(())
    }

    fn append_frames(
        &mut self,
        shape: Shape,
        list: FeatureListRef<'a>,
        at: u64,
    ) -> Result<(), Fail> {
        for (i, frame) in list.iter().enumerate() {
            let frame = frame?;
            let values = frame.list()?;
            match shape {
                Shape::Padded { elems, .. } => {
                    let n = self.append_list(values, Some(elems), at)?;
                    if n != elems {
                        let problem = FeatureProblem::WrongFrameCount {
                            frame: i,
                            expected: elems,
                            found: n,
                        };
                        return Err(Fail::Feature(at, problem));
                    }
                }
                _ => {
                    self.append_list(values, None, at)?;
                    self.frame_splits.push(self.len() as i64);
                }
            }
        }
        Ok(())
    }

    /// After the record's entries: fills a missing feature, closes the row.
    fn end_row(
        &mut self,
        spec: &'a FeatureSpec,
        shape: Shape,
        stamp: u64,
        base: u64,
    ) -> Result<(), Fail> {
        if let Some(fail) = self.pending.take() {
            return Err(fail);
        }
        let present = self.seen == stamp;
        match shape {
            Shape::Fixed { elems } => {
                if !present {
                    if self.default.is_none() {
                        return Err(Fail::Feature(base, FeatureProblem::Missing));
                    }
                    let raw = self.default.take();
                    for i in 0..elems {
                        self.push_default(spec_bytes_default(spec, i), raw.as_deref(), i);
                    }
                    self.default = raw;
                }
            }
            Shape::Raw { .. } => {
                if !present {
                    return Err(Fail::Feature(base, FeatureProblem::Missing));
                }
                self.lengths.push(self.entry_len as i64);
            }
            Shape::Padded { .. } => {
                let allow_missing = matches!(
                    spec.form,
                    Form::FixedLenSequence {
                        allow_missing: true,
                        ..
                    }
                );
                if !present && !allow_missing {
                    return Err(Fail::Feature(base, FeatureProblem::Missing));
                }
                self.splits.push(self.len() as i64);
            }
            Shape::VarLen => self.splits.push(self.len() as i64),
            Shape::RaggedFrames => {
                let frames = self.frame_splits.count::<i64>() - 1;
                self.splits.push(frames as i64);
            }
        }
        Ok(())
    }
}

/// Decodes `records` into `batch` (not finished: no padding, no sparse
/// form). On an error, the rows before the failing record stay.
pub(super) fn decode_rows<'a, R: Input<'a>>(
    records: &[R],
    first: usize,
    spec: &'a Spec,
    batch: &mut Batch<'a>,
) -> Result<(), Error> {
    batch.reset(spec);
    for (i, r) in records.iter().enumerate() {
        if let Err(e) = decode_record(r, first + i, spec, batch) {
            let rows = batch.rows;
            truncate(batch, rows);
            return Err(e);
        }
        batch.rows += 1;
    }
    Ok(())
}

fn truncate(batch: &mut Batch<'_>, rows: usize) {
    for c in batch.columns.iter_mut().chain(batch.sequence.iter_mut()) {
        c.truncate_rows(rows, c.form);
        c.pending = None;
    }
}

fn decode_record<'a, R: Input<'a>>(
    r: &R,
    position: usize,
    spec: &'a Spec,
    batch: &mut Batch<'a>,
) -> Result<(), Error> {
    let (payload, base) = (r.payload(), r.base());
    // Stamps are never 0 (a fresh column's `seen`).
    let stamp = batch.rows as u64 + 1;
    let wire = match spec.payload() {
        PayloadKind::Example => {
            let map = ExampleRef::new(payload, base).features();
            let fast = map.plain_bytes().is_some_and(|(bytes, _, depth)| {
                fast_map(
                    &mut batch.columns,
                    spec.features(),
                    &spec.table,
                    (bytes, depth),
                    stamp,
                )
            });
            if fast {
                Ok(false)
            } else {
                decode_map(
                    &mut batch.columns,
                    spec.features(),
                    &spec.table,
                    map,
                    stamp,
                    true,
                )
            }
        }
        PayloadKind::OfRecord | PayloadKind::Raw => {
            let map = OfRecordRef::new(payload, base).features();
            decode_map(
                &mut batch.columns,
                spec.features(),
                &spec.table,
                map,
                stamp,
                true,
            )
        }
        PayloadKind::SequenceExample => {
            let seq = SequenceExampleRef::new(payload, base);
            decode_map(
                &mut batch.columns,
                spec.features(),
                &spec.table,
                seq.context(),
                stamp,
                false,
            )
            .and_then(|context_failed| {
                decode_lists(
                    &mut batch.sequence,
                    spec.sequence(),
                    &spec.sequence_table,
                    seq.feature_lists(),
                    stamp,
                )
                .map(|lists_failed| context_failed || lists_failed)
            })
        }
    };
    let tag = |e: Error| {
        let e = e.with_record(r.id(position));
        match r.file() {
            Some(f) => e.with_file(Arc::clone(f)),
            None => e,
        }
    };
    let failed = match wire {
        Ok(failed) => failed,
        Err(e) => return Err(tag(Error::new(ErrorKind::Decode(e.reason), e.offset))),
    };
    // TensorFlow's order: an error in a present feature (the last one on the
    // wire when there are several) before a missing one.
    // (Only when an entry failed: the scan costs a look at every column.)
    let mut worst: Option<(u64, usize, bool)> = None;
    let failing = [(false, &batch.columns), (true, &batch.sequence)];
    for (in_sequence, columns) in failing.into_iter().filter(|_| failed) {
        for (c, col) in columns.iter().enumerate() {
            if let Some(fail) = &col.pending {
                let at = fail.offset();
                if worst.is_none_or(|(w, _, _)| at > w) {
                    worst = Some((at, c, in_sequence));
                }
            }
        }
    }
    if let Some((_, c, in_sequence)) = worst {
        let (col, f) = if in_sequence {
            (&mut batch.sequence[c], &spec.sequence()[c])
        } else {
            (&mut batch.columns[c], &spec.features()[c])
        };
        if let Some(fail) = col.pending.take() {
            return Err(tag(fail.into_error(f)));
        }
    }
    let parts = [
        (&mut batch.columns, spec.features()),
        (&mut batch.sequence, spec.sequence()),
    ];
    for (columns, features) in parts {
        for (col, f) in columns.iter_mut().zip(features) {
            // A fixed_len feature the record held: nothing to do (the usual
            // case, checked here without the call).
            if col.seen == stamp && matches!(col.form, Shape::Fixed { .. }) && col.pending.is_none()
            {
                continue;
            }
            if let Err(fail) = col.end_row(f, col.form, stamp, base) {
                return Err(tag(fail.into_error(f)));
            }
        }
    }
    Ok(())
}

impl Fail {
    fn offset(&self) -> u64 {
        match self {
            Fail::Decode(e) => e.offset,
            Fail::Feature(at, _) => *at,
        }
    }

    fn into_error(self, f: &FeatureSpec) -> Error {
        match self {
            Fail::Decode(e) => Error::new(ErrorKind::Decode(e.reason), e.offset),
            Fail::Feature(at, problem) => Error::new(
                ErrorKind::Feature {
                    feature: Arc::from(f.name.as_str()),
                    problem,
                },
                at,
            ),
        }
    }
}

/// Decodes `records` into `batch` with `spec`, on this thread.
///
/// One pass over each record: every map entry is matched against the spec's
/// names with one hash probe and its values go from the wire into the
/// column. The rules are TensorFlow's `parse_example` /
/// `parse_sequence_example` (and OneFlow's raw decoder for
/// [`Form::OfRecordRaw`]): see the module docs. On an error (a
/// [`feature_error`](ErrorKind::Feature) or a
/// [`decode_error`](ErrorKind::Decode) naming the record, its file and the
/// byte offset), the batch holds the rows before the failing record,
/// finished.
pub fn decode<'a, R: Input<'a>>(
    records: &[R],
    spec: &'a Spec,
    batch: &mut Batch<'a>,
) -> Result<(), Error> {
    let r = decode_rows(records, 0, spec, batch);
    finish(batch, spec);
    r
}
