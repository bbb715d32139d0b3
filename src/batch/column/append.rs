//! Building a column's rows: what the record walk (`decode`) and the fast
//! path (`fast`) append, and how an entry or a row is taken back.

use super::feature::{spec_bytes_default, Column, Mark};
use crate::batch::buf::AlignedBuf;
use crate::batch::shape::{Fail, Shape};
use crate::batch::spec::{DType, FeatureSpec, Form};
use crate::error::FeatureProblem;
use crate::view::{FeatureListRef, ListRef, NumList};

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
    pub(in crate::batch) fn rollback(&mut self) {
        let m = self.mark;
        self.truncate_values(m.values);
        self.frame_splits.truncate(m.frame_splits * 8);
    }

    /// Keeps the first `rows` rows (before the batch is finished).
    pub(in crate::batch) fn truncate_rows(&mut self, rows: usize, shape: Shape) {
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
            (l, d) => Err(wrong_type(at, l, d)),
        }
    }

    /// The bytes of one row when the column is placed: a numeric
    /// fixed-length column, whose row `r` has its place at `r` times this,
    /// so that the parts of a parallel decode write their rows straight into
    /// the shared batch's buffer. `None` for any other column, and for rows
    /// of no bytes.
    pub(crate) fn placed_row_bytes(&self) -> Option<usize> {
        match (self.form, self.dtype) {
            (_, DType::Bytes) => None,
            (Shape::Fixed { elems }, d) => Some(elems * d.width()).filter(|&n| n > 0),
            _ => None,
        }
    }

    /// [`append_list`](Self::append_list) for a placed row: the values of
    /// `list` into `slot`, the row's place in the shared buffer (at most
    /// as many as it holds); returns how many the list holds.
    fn place_list(
        &self,
        list: Option<ListRef<'a>>,
        slot: &mut [u8],
        at: u64,
    ) -> Result<usize, Fail> {
        let Some(list) = list else {
            return Ok(0);
        };
        // `slot` starts at a multiple of the row's bytes in a 64-byte
        // aligned buffer, so it is aligned for the column's type.
        let n = match (list, self.dtype) {
            (ListRef::Int64(l), DType::Int64) => l.copy_to_slice(bytemuck::cast_slice_mut(slot))?,
            (ListRef::Float(l), DType::Float32) => {
                l.copy_to_slice(bytemuck::cast_slice_mut(slot))?
            }
            (ListRef::Int32(l), DType::Int32) => l.copy_to_slice(bytemuck::cast_slice_mut(slot))?,
            (ListRef::Double(l), DType::Float64) => {
                l.copy_to_slice(bytemuck::cast_slice_mut(slot))?
            }
            (l, d) => return Err(wrong_type(at, l, d)),
        };
        Ok(n)
    }

    /// Appends one value slot from the default (element `i` of it), or a
    /// zero / empty value when there is none.
    /// A placed row's `slot` takes the value at its element `i` instead.
    fn push_default(
        &mut self,
        spec_default: Option<&'a [u8]>,
        raw: Option<&[u8]>,
        i: usize,
        slot: Option<&mut [u8]>,
    ) {
        if let Some(slot) = slot {
            let w = self.dtype.width();
            if let Some(out) = slot.get_mut(i * w..(i + 1) * w) {
                match raw.and_then(|r| r.get(i * w..(i + 1) * w)) {
                    Some(v) => out.copy_from_slice(v),
                    None => out.fill(0),
                }
            }
            return;
        }
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
    /// Before an entry of this column's name: the last entry of a name wins
    /// (TensorFlow skips the earlier ones unread), so what an earlier entry
    /// of this row appended is taken back.
    #[inline]
    pub(in crate::batch) fn begin_entry(&mut self, stamp: u64) {
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
    pub(in crate::batch) fn end_entry(&mut self, r: Result<(), Fail>) -> bool {
        match r {
            Ok(()) => false,
            Err(fail) => {
                self.rollback();
                self.pending = Some(fail);
                true
            }
        }
    }

    /// Appends an entry's values; a placed column's row goes to `slot`
    /// instead (see [`placed_row_bytes`](Self::placed_row_bytes)).
    #[inline]
    pub(in crate::batch) fn append_feature(
        &mut self,
        shape: Shape,
        list: Option<ListRef<'a>>,
        at: u64,
        slot: Option<&mut [u8]>,
    ) -> Result<(), Fail> {
        match shape {
            Shape::Fixed { elems } => {
                let n = match slot {
                    Some(slot) => self.place_list(list, slot, at)?,
                    None => self.append_list(list, Some(elems), at)?,
                };
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

    pub(in crate::batch) fn append_frames(
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

    /// After the record's entries: fills a missing feature (into `slot`
    /// for a placed row), closes the row.
    pub(in crate::batch) fn end_row(
        &mut self,
        spec: &'a FeatureSpec,
        shape: Shape,
        stamp: u64,
        base: u64,
        mut slot: Option<&mut [u8]>,
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
                        let at = slot.as_deref_mut();
                        self.push_default(spec_bytes_default(spec, i), raw.as_deref(), i, at);
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
    values: &mut AlignedBuf,
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

/// A list of another type than the column's.
fn wrong_type(at: u64, l: ListRef<'_>, d: DType) -> Fail {
    Fail::Feature(
        at,
        FeatureProblem::WrongType {
            expected: d.name_str(),
            found: l.kind().name(),
        },
    )
}
