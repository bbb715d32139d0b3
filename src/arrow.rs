//! The one mapping of decoded columns to Arrow (feature `arrow`): the schema
//! of a [`Spec`] and a decoded [`Batch`] as an Arrow [`RecordBatch`]. Both
//! `recordwire export` (Parquet) and the Python package's
//! `decode(to="arrow")` use it, so that they give the same types and values.
//!
//! One row per record, one column per feature: the spec's features (a
//! SequenceExample's context) in spec order, then its sequence features,
//! each named as the feature, or `sequence.NAME` for a sequence feature
//! whose name a context feature has too ([`column_names`]). Every field and
//! every nested item is not null.
//!
//! | form | Arrow type | values |
//! |---|---|---|
//! | `fixed_len`, shape `[]` | the primitive type (`LargeBinary` for bytes) | the record's value |
//! | `fixed_len`, shape `[d1, d2, …]` | `FixedSizeList(d1, FixedSizeList(d2, … T))` | row-major |
//! | `ofrecord_raw` (neither flag) | as `fixed_len` | the record's `prod(shape)` values |
//! | `ofrecord_raw` with `dim1_varying_length` or `auto_zero_padding` | `LargeList<T>` | the values the record holds (its length), without the padding |
//! | `var_len` | `LargeList<T>` | the record's values |
//! | `var_len` with `sparse` | `LargeList<T>` | as `var_len` (the indices follow from the lengths) |
//! | `fixed_len_sequence` (context or sequence) | `LargeList` of the element (as `fixed_len` of the shape) | the record's elements (frames), without the padding |
//! | `var_len` in `sequence` | `LargeList<LargeList<T>>` | frames per record, values per frame |
//!
//! `T` is `Int64`, `Float32`, `Int32`, `Float64`, `Int8`, `UInt8` or
//! `LargeBinary` (bytes, owned or borrowed alike). The padded forms of the
//! batch are given exactly: a list holds what the record held, its length is
//! the batch's `lengths` (Arrow has no place for padding, and padding plus
//! lengths would be two columns).
//!
//! No copy: [`record_batch`] takes the batch's columns, and their buffers
//! (values, bytes offsets, splits) become the Arrow buffers as they are
//! (they are already Arrow's layout, 64-byte aligned). Copied are only what
//! Arrow's layout cannot point at: a padded column's values when a row is
//! shorter than the longest (the rows are gathered without their padding),
//! and a borrowing bytes column's values (slices of the input, or `Bytes`
//! shares in an owned batch, gathered into one data buffer).
//!
//! ```
//! use arrow_schema::DataType;
//! use recordwire::batch::{decode, Batch, DType, FeatureSpec, Spec};
//! use recordwire::encode::{Example, Feature, Features};
//!
//! let spec = Spec::example(vec![
//!     FeatureSpec::fixed_len("label", DType::Int64, &[]),
//!     FeatureSpec::var_len("tokens", DType::Int64),
//! ])?;
//! let records: Vec<Vec<u8>> = (0..3i64)
//!     .map(|i| {
//!         let features: Features = [
//!             ("label", Feature::Int64(vec![i])),
//!             ("tokens", Feature::Int64((0..i).collect())),
//!         ]
//!         .into_iter()
//!         .collect();
//!         Example::with_features(features).to_bytes()
//!     })
//!     .collect::<Result<_, _>>()?;
//! let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
//! let mut batch = Batch::new();
//! decode(&payloads, &spec, &mut batch)?;
//!
//! let rb = recordwire::arrow::record_batch(&spec, &mut batch)?;
//! assert_eq!(rb.num_rows(), 3);
//! assert_eq!(rb.schema().field(0).data_type(), &DataType::Int64);
//! assert!(matches!(rb.schema().field(1).data_type(), DataType::LargeList(_)));
//! assert_eq!(rb.schema(), recordwire::arrow::schema(&spec)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int32Type, Int64Type, Int8Type, UInt8Type,
};
pub use arrow_array::RecordBatch;
use arrow_array::{ArrayRef, FixedSizeListArray, LargeBinaryArray, LargeListArray, PrimitiveArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
pub use arrow_schema::ArrowError;
pub use arrow_schema::SchemaRef;
use arrow_schema::{DataType, Field, FieldRef, Schema};

use crate::batch::{AlignedBuf, Batch, Column, DType, FeatureSpec, Form, Spec};

/// An Arrow error's message without arrow-rs's own prefix ("Invalid
/// argument error: ", "Schema error: "), for errors whose text is ours or
/// names the column: what `recordwire import` and the Python package's
/// `write_arrow` show. Other errors keep their prefix.
pub fn error_message(e: &ArrowError) -> String {
    match e {
        ArrowError::InvalidArgumentError(m) | ArrowError::SchemaError(m) => m.clone(),
        other => other.to_string(),
    }
}

/// How a feature's column maps to Arrow (see the table of the module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `prod(shape)` values per record: nested fixed-size lists.
    Fixed,
    /// Whole elements of the shape per record, padded in the batch.
    Padded,
    /// OFRecord raw values that may be fewer than the shape, zero-filled in
    /// the batch.
    Raw,
    /// Any number of values per record.
    Ragged,
    /// Frames of any number of values per record.
    RaggedFrames,
}

fn kind(f: &FeatureSpec, sequence: bool) -> Kind {
    match (&f.form, sequence) {
        (Form::FixedLen { .. }, _) => Kind::Fixed,
        (
            Form::OfRecordRaw {
                dim1_varying_length,
                auto_zero_padding,
                ..
            },
            _,
        ) => {
            if *dim1_varying_length || *auto_zero_padding {
                Kind::Raw
            } else {
                Kind::Fixed
            }
        }
        (Form::FixedLenSequence { .. }, _) => Kind::Padded,
        (Form::VarLen, false) => Kind::Ragged,
        (Form::VarLen, true) => Kind::RaggedFrames,
    }
}

fn leaf_type(d: DType) -> DataType {
    match d {
        DType::Int64 => DataType::Int64,
        DType::Float32 => DataType::Float32,
        DType::Int32 => DataType::Int32,
        DType::Float64 => DataType::Float64,
        DType::Int8 => DataType::Int8,
        DType::UInt8 => DataType::UInt8,
        DType::Bytes => DataType::LargeBinary,
    }
}

fn item(t: DataType) -> FieldRef {
    Arc::new(Field::new("item", t, false))
}

fn dims(f: &FeatureSpec) -> &[usize] {
    f.form.shape().unwrap_or_default()
}

fn size(d: usize) -> Result<i32, ArrowError> {
    i32::try_from(d).map_err(|_| {
        ArrowError::InvalidArgumentError(format!(
            "dimension {d} is too large for an Arrow FixedSizeList"
        ))
    })
}

/// The type of one element of `f`'s shape: the leaf in one `FixedSizeList`
/// per dimension.
fn element_type(f: &FeatureSpec) -> Result<DataType, ArrowError> {
    let mut t = leaf_type(f.dtype);
    for &d in dims(f).iter().rev() {
        t = DataType::FixedSizeList(item(t), size(d)?);
    }
    Ok(t)
}

/// The Arrow type of feature `f`'s column (`sequence`: among a
/// SequenceExample's sequence features), as the table of the module says.
pub fn data_type(f: &FeatureSpec, sequence: bool) -> Result<DataType, ArrowError> {
    Ok(match kind(f, sequence) {
        Kind::Fixed => element_type(f)?,
        Kind::Padded => DataType::LargeList(item(element_type(f)?)),
        Kind::Raw | Kind::Ragged => DataType::LargeList(item(leaf_type(f.dtype))),
        Kind::RaggedFrames => {
            DataType::LargeList(item(DataType::LargeList(item(leaf_type(f.dtype)))))
        }
    })
}

/// The column names of `spec` ([`Spec::column_names`]): its features'
/// names, then its sequence features', `sequence.NAME` where a context
/// feature has the name too.
pub fn column_names(spec: &Spec) -> Result<Vec<String>, ArrowError> {
    spec.column_names()
        .map_err(|e| ArrowError::SchemaError(e.to_string()))
}

/// The fields of `spec`'s columns, in column order, paired with their
/// features.
fn fields(spec: &Spec) -> Result<Vec<(Field, &FeatureSpec, bool)>, ArrowError> {
    let features = spec.features().iter().map(|f| (f, false));
    let sequence = spec.sequence().iter().map(|f| (f, true));
    column_names(spec)?
        .into_iter()
        .zip(features.chain(sequence))
        .map(|(name, (f, seq))| Ok((Field::new(name, data_type(f, seq)?, false), f, seq)))
        .collect()
}

/// The Arrow schema of `spec`'s columns (what [`record_batch`] gives for it).
pub fn schema(spec: &Spec) -> Result<SchemaRef, ArrowError> {
    let fields: Vec<Field> = fields(spec)?.into_iter().map(|(f, ..)| f).collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// The columns of `batch` (decoded with `spec`) as an Arrow record batch of
/// [`schema`]`(spec)`. The columns are taken out of the batch (see
/// [`Batch::take_columns`]; the batch keeps its per-thread memory for the
/// next decode) and their buffers become the arrays' without a copy, except
/// where the module says.
///
/// Errors: a batch that was not decoded with `spec` (other columns).
pub fn record_batch(spec: &Spec, batch: &mut Batch<'_>) -> Result<RecordBatch, ArrowError> {
    let rows = batch.rows();
    let fields = fields(spec)?;
    let (context, sequence) = batch.take_columns();
    if context.len() != spec.features().len() || sequence.len() != spec.sequence().len() {
        return Err(ArrowError::InvalidArgumentError(format!(
            "the batch has {} + {} columns, the spec {} + {} features: decode it with this spec",
            context.len(),
            sequence.len(),
            spec.features().len(),
            spec.sequence().len()
        )));
    }
    let mut out_fields = Vec::with_capacity(fields.len());
    let mut arrays = Vec::with_capacity(fields.len());
    for ((field, f, seq), col) in fields.into_iter().zip(context.into_iter().chain(sequence)) {
        if col.name() != f.name || col.dtype() != f.dtype {
            return Err(ArrowError::InvalidArgumentError(format!(
                "the batch's column {} is not the spec's feature {}: decode it with this spec",
                crate::names::quoted(col.name().as_bytes()),
                crate::names::quoted(f.name.as_bytes())
            )));
        }
        let named = |e: ArrowError| match e {
            ArrowError::InvalidArgumentError(m) => {
                ArrowError::InvalidArgumentError(format!("column {}: {m}", field.name()))
            }
            e => e,
        };
        arrays.push(array(f, seq, col, rows).map_err(named)?);
        out_fields.push(field);
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(out_fields)),
        arrays,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
    )
}

/// An aligned buffer as an Arrow buffer, without copying: the words become
/// the buffer's memory, sliced to the data.
fn buffer(b: AlignedBuf) -> Buffer {
    let (words, range) = b.into_words();
    Buffer::from_vec(words).slice_with_length(range.start, range.len())
}

fn scalars<T: arrow_buffer::ArrowNativeType>(b: AlignedBuf) -> ScalarBuffer<T> {
    let n = b.len() / std::mem::size_of::<T>();
    ScalarBuffer::new(buffer(b), 0, n)
}

fn offsets(b: AlignedBuf) -> OffsetBuffer<i64> {
    if b.is_empty() {
        return OffsetBuffer::new_empty();
    }
    OffsetBuffer::new(scalars::<i64>(b))
}

/// A column's values: the buffers of [`Column::into_parts`] that hold them.
struct Values<'a> {
    dtype: DType,
    data: AlignedBuf,
    /// Owned bytes offsets.
    offsets: Option<AlignedBuf>,
    /// Borrowed bytes values.
    borrowed: Vec<&'a [u8]>,
    /// Bytes values of an owned batch's borrowing column.
    shared: Vec<bytes::Bytes>,
}

impl Values<'_> {
    /// Keeps only the value slots of `runs`, in order (a copy).
    fn gather(self, runs: &[Range<usize>]) -> Self {
        let mut data = AlignedBuf::new();
        match self.dtype {
            DType::Bytes => {
                let mut offs = AlignedBuf::new();
                offs.push(0i64);
                let o = self.offsets.as_ref().map(|o| o.typed::<i64>());
                for i in runs.iter().flat_map(Clone::clone) {
                    let v = match o {
                        Some(o) => &self.data.as_bytes()[o[i] as usize..o[i + 1] as usize],
                        None if self.borrowed.is_empty() => &self.shared[i][..],
                        None => self.borrowed[i],
                    };
                    data.extend_from_slice(v);
                    offs.push(data.len() as i64);
                }
                Values {
                    dtype: self.dtype,
                    data,
                    offsets: Some(offs),
                    borrowed: Vec::new(),
                    shared: Vec::new(),
                }
            }
            d => {
                let w = d.width();
                let raw = self.data.as_bytes();
                for r in runs {
                    data.extend_from_slice(&raw[r.start * w..r.end * w]);
                }
                Values { data, ..self }
            }
        }
    }

    /// The values as one flat array.
    fn into_array(self) -> Result<ArrayRef, ArrowError> {
        fn primitive<T: ArrowPrimitiveType>(b: AlignedBuf) -> ArrayRef {
            Arc::new(PrimitiveArray::<T>::new(scalars::<T::Native>(b), None))
        }
        Ok(match self.dtype {
            DType::Int64 => primitive::<Int64Type>(self.data),
            DType::Float32 => primitive::<Float32Type>(self.data),
            DType::Int32 => primitive::<Int32Type>(self.data),
            DType::Float64 => primitive::<Float64Type>(self.data),
            DType::Int8 => primitive::<Int8Type>(self.data),
            DType::UInt8 => primitive::<UInt8Type>(self.data),
            DType::Bytes => {
                let Values {
                    data,
                    offsets: offs,
                    ..
                } = match self.offsets {
                    Some(_) => self,
                    // Borrowed or shared: gathered into one data buffer.
                    None => {
                        let all = 0..self.borrowed.len().max(self.shared.len());
                        self.gather(std::slice::from_ref(&all))
                    }
                };
                let offs = offs.unwrap_or_default();
                Arc::new(LargeBinaryArray::try_new(
                    offsets(offs),
                    buffer(data),
                    None,
                )?)
            }
        })
    }
}

/// `values` (`elements * prod(dims)` of them) nested in one
/// `FixedSizeList` per dimension: `elements` elements.
fn nest(f: &FeatureSpec, mut values: ArrayRef, elements: usize) -> Result<ArrayRef, ArrowError> {
    let dims = dims(f);
    let mut t = leaf_type(f.dtype);
    for (i, &d) in dims.iter().enumerate().rev() {
        let len = elements * dims[..i].iter().product::<usize>();
        values = Arc::new(FixedSizeListArray::try_new_with_length(
            item(t.clone()),
            size(d)?,
            values,
            None,
            len,
        )?);
        t = DataType::FixedSizeList(item(t), size(d)?);
    }
    Ok(values)
}

/// The slots of a padded column's rows that hold data: row `r` starts at
/// `r * slots` and holds `lengths[r] * elems` values. `None` when no row is
/// padded (the buffer is then used as it is).
fn unpadded(lengths: &[i64], slots: usize, elems: usize) -> Option<Vec<Range<usize>>> {
    if lengths.iter().all(|&n| n as usize * elems == slots) {
        return None;
    }
    Some(
        lengths
            .iter()
            .enumerate()
            .map(|(r, &n)| r * slots..r * slots + n as usize * elems)
            .filter(|r| !r.is_empty())
            .collect(),
    )
}

/// One column as an Arrow array of [`data_type`]`(f, sequence)`.
fn array(
    f: &FeatureSpec,
    sequence: bool,
    col: Column<'_>,
    rows: usize,
) -> Result<ArrayRef, ArrowError> {
    let kind = kind(f, sequence);
    let shape = col.shape().to_vec();
    let dtype = col.dtype();
    let parts = col.into_parts();
    let values = Values {
        dtype,
        data: parts.values,
        offsets: parts.offsets,
        borrowed: parts.borrowed,
        shared: parts.shared,
    };
    let elems: usize = dims(f).iter().product();
    let list = |offs: OffsetBuffer<i64>, inner: ArrayRef| -> Result<ArrayRef, ArrowError> {
        let t = inner.data_type().clone();
        Ok(Arc::new(LargeListArray::try_new(
            item(t),
            offs,
            inner,
            None,
        )?))
    };
    let lengths = |l: Option<AlignedBuf>| -> Vec<i64> {
        l.map(|b| b.typed::<i64>().to_vec()).unwrap_or_default()
    };
    match kind {
        Kind::Fixed => nest(f, values.into_array()?, rows),
        Kind::Padded | Kind::Raw => {
            let lengths = lengths(parts.lengths);
            // Padded: `[rows, max_len, *shape]`, elements of `elems` values;
            // raw: `[rows, *shape]`, single values.
            let (slots, unit) = match kind {
                Kind::Padded => (shape.get(1).copied().unwrap_or(0) * elems, elems),
                _ => (elems, 1),
            };
            let values = match unpadded(&lengths, slots, unit) {
                Some(runs) => values.gather(&runs),
                None => values,
            };
            let total: usize = lengths.iter().map(|&n| n as usize).sum();
            let inner = match kind {
                Kind::Padded => nest(f, values.into_array()?, total)?,
                _ => values.into_array()?,
            };
            list(
                OffsetBuffer::from_lengths(lengths.iter().map(|&n| n as usize)),
                inner,
            )
        }
        Kind::Ragged => list(
            offsets(parts.row_splits.unwrap_or_default()),
            values.into_array()?,
        ),
        Kind::RaggedFrames => {
            let frames = list(
                offsets(parts.frame_splits.unwrap_or_default()),
                values.into_array()?,
            )?;
            list(offsets(parts.row_splits.unwrap_or_default()), frames)
        }
    }
}

mod records;
pub use records::RecordEncoder;

#[cfg(test)]
mod tests;
