//! Arrow rows to records ([`RecordEncoder`]).

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{ArrowError, DataType, Schema};

use crate::encode::{entry_len, len_field_len, put_entry_header, put_tag_len, Feature};
use crate::view::Schema as Wire;

/// The kind a column's values become, from its leaf type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    /// Signed integers of at most 32 bits (`int32_list` in an OFRecord).
    Narrow,
    /// Other integers and booleans.
    Wide,
    /// `Float16`, `Float32`.
    Single,
    /// `Float64`.
    Double,
    Bytes,
}

/// The leaf kind of `data_type` (through any lists), or `None` for a type
/// that has no feature form.
fn leaf_of(data_type: &DataType) -> Option<Leaf> {
    Some(match data_type {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            return leaf_of(f.data_type())
        }
        DataType::Int8 | DataType::Int16 | DataType::Int32 => Leaf::Narrow,
        DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Boolean => Leaf::Wide,
        DataType::Float16 | DataType::Float32 => Leaf::Single,
        DataType::Float64 => Leaf::Double,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View => Leaf::Bytes,
        _ => return None,
    })
}

/// One column: its name, and the feature its row's values are gathered
/// into (kept between rows, so that a warm encoder reuses its buffers).
#[derive(Debug)]
struct Column {
    name: String,
    value: Feature,
    /// The row's value is null: the feature is left out.
    absent: bool,
    /// The row's payload length and encoded `Feature` length (one pass
    /// over the values, used for the lengths and the encoding alike).
    payload: usize,
    len: usize,
}

/// Encodes the rows of Arrow record batches as records (tf.Example or
/// OFRecord payloads): the way back from [`record_batch`](super::record_batch),
/// for writers that take Arrow (`recordwire import`, Python's `write_arrow`
/// and Ray Data's datasink).
///
/// One record per row, one feature per column, named as the column, in
/// column order. A column's type gives the feature's kind:
///
/// | Arrow type | tf.Example | OFRecord |
/// |---|---|---|
/// | `Int8`, `Int16`, `Int32` | `int64_list` | `int32_list` |
/// | `Int64`, `UInt8` … `UInt64`, `Boolean` (0/1) | `int64_list` | `int64_list` |
/// | `Float16`, `Float32` | `float_list` | `float_list` |
/// | `Float64` | `float_list` (rounded to f32, as TensorFlow's only float kind) | `double_list` |
/// | `Binary`, `LargeBinary`, `BinaryView`, `FixedSizeBinary`, `Utf8`, `LargeUtf8`, `Utf8View` | `bytes_list` | `bytes_list` |
/// | `List`, `LargeList`, `FixedSizeList` of any of these, nested to any depth | the leaf kind, the row's values flattened in order | the same |
///
/// These are the kinds the Python `Writer` gives numpy arrays of the same
/// types, so that the same rows written either way are the same bytes. A
/// null row leaves the feature out of that record; a null inside a list,
/// a `UInt64` above `i64::MAX`, and any other type (dictionaries, structs,
/// maps, dates, decimals) are errors that name the column (and the row).
/// A SequenceExample payload is not written from Arrow: its feature lists
/// have no one column form.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, LargeBinaryArray, RecordBatch};
/// use recordwire::arrow::RecordEncoder;
/// use recordwire::encode::{Example, Feature, Features};
///
/// let label: ArrayRef = Arc::new(Int64Array::from(vec![7, 8]));
/// let image: ArrayRef = Arc::new(LargeBinaryArray::from(vec![&b"a"[..], &b"b"[..]]));
/// let batch = RecordBatch::try_from_iter([("label", label), ("image", image)])?;
/// let mut encoder = RecordEncoder::new(batch.schema().as_ref(), false)?;
/// let mut record = Vec::new();
/// encoder.encode(&batch, 1, &mut record)?;
/// let features: Features = [
///     ("label", Feature::Int64(vec![8])),
///     ("image", Feature::Bytes(vec![b"b".to_vec()])),
/// ]
/// .into_iter()
/// .collect();
/// assert_eq!(record, Example::with_features(features).to_bytes()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RecordEncoder {
    columns: Vec<Column>,
    ofrecord: bool,
}

/// An error about column `name`.
fn column_error(name: &str, row: Option<usize>, what: impl std::fmt::Display) -> ArrowError {
    ArrowError::InvalidArgumentError(match row {
        Some(r) => format!("column {name:?}, row {r}: {what}"),
        None => format!("column {name:?}: {what}"),
    })
}

impl RecordEncoder {
    /// An encoder of batches with `schema`: tf.Example records, or OFRecord
    /// ones when `ofrecord`. An error names the first column whose type has
    /// no feature form.
    pub fn new(schema: &Schema, ofrecord: bool) -> Result<RecordEncoder, ArrowError> {
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let leaf = leaf_of(f.data_type()).ok_or_else(|| {
                    column_error(
                        f.name(),
                        None,
                        format_args!(
                            "{} has no feature form (ints, floats, binary or strings, and lists \
                             of them)",
                            f.data_type()
                        ),
                    )
                })?;
                let value = match (leaf, ofrecord) {
                    (Leaf::Narrow, true) => Feature::Int32(Vec::new()),
                    (Leaf::Narrow | Leaf::Wide, _) => Feature::Int64(Vec::new()),
                    (Leaf::Double, true) => Feature::Double(Vec::new()),
                    (Leaf::Single | Leaf::Double, _) => Feature::Float(Vec::new()),
                    (Leaf::Bytes, _) => Feature::Bytes(Vec::new()),
                };
                Ok(Column {
                    name: f.name().clone(),
                    value,
                    absent: false,
                    payload: 0,
                    len: 0,
                })
            })
            .collect::<Result<_, ArrowError>>()?;
        Ok(RecordEncoder { columns, ofrecord })
    }

    /// Appends row `row` of `batch` (whose schema is the encoder's) to
    /// `out`, encoded: a tf.Example, or an OFRecord.
    pub fn encode(
        &mut self,
        batch: &RecordBatch,
        row: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), ArrowError> {
        if batch.num_columns() != self.columns.len() {
            return Err(ArrowError::SchemaError(format!(
                "a batch of {} columns for an encoder of {}",
                batch.num_columns(),
                self.columns.len()
            )));
        }
        if row >= batch.num_rows() {
            return Err(ArrowError::InvalidArgumentError(format!(
                "row {row} of a batch of {} rows",
                batch.num_rows()
            )));
        }
        for (column, array) in self.columns.iter_mut().zip(batch.columns()) {
            column.absent = array.is_null(row);
            if !column.absent {
                let (leaf, range) = leaf_range(array.as_ref(), row..row + 1, &column.name, row)?;
                fill(&mut column.value, leaf, range, &column.name, row)?;
                column.payload = column.value.payload_len();
                column.len = column.value.lens(column.payload).1;
            }
        }
        let present = || self.columns.iter().filter(|c| !c.absent);
        let wire = if self.ofrecord {
            Wire::OneFlow
        } else {
            Wire::TensorFlow
        };
        if !self.ofrecord {
            let features: usize = present()
                .map(|c| len_field_len(1, entry_len(c.name.len(), c.len)))
                .sum();
            put_tag_len(out, 1, features);
        }
        for c in present() {
            put_entry_header(out, c.name.as_bytes(), c.len);
            c.value
                .encode_with(wire, c.name.as_bytes(), c.payload, out)
                .map_err(|e| column_error(&c.name, Some(row), e))?;
        }
        Ok(())
    }
}

/// The leaf array under `array` and the range of its values that rows
/// `rows` of `array` hold (through any lists); a null list inside is an
/// error.
fn leaf_range<'a>(
    array: &'a dyn Array,
    rows: Range<usize>,
    name: &str,
    row: usize,
) -> Result<(&'a dyn Array, Range<usize>), ArrowError> {
    let inner_null = || column_error(name, Some(row), "a null inside a list has no feature form");
    let has_null = |a: &dyn Array| a.null_count() > 0 && rows.clone().any(|i| a.is_null(i));
    match array.data_type() {
        DataType::List(_) => {
            let a = array.as_list::<i32>();
            if rows.len() > 1 && has_null(a) {
                return Err(inner_null());
            }
            let o = a.value_offsets();
            let inner = o[rows.start] as usize..o[rows.end] as usize;
            leaf_range(a.values().as_ref(), inner, name, row)
        }
        DataType::LargeList(_) => {
            let a = array.as_list::<i64>();
            if rows.len() > 1 && has_null(a) {
                return Err(inner_null());
            }
            let o = a.value_offsets();
            let inner = o[rows.start] as usize..o[rows.end] as usize;
            leaf_range(a.values().as_ref(), inner, name, row)
        }
        DataType::FixedSizeList(_, _) => {
            let a = array.as_fixed_size_list();
            if rows.len() > 1 && has_null(a) {
                return Err(inner_null());
            }
            let n = a.value_length() as usize;
            leaf_range(a.values().as_ref(), rows.start * n..rows.end * n, name, row)
        }
        _ => {
            if has_null(array) {
                return Err(inner_null());
            }
            Ok((array, rows))
        }
    }
}

/// Sets `value` to the values `range` of the leaf array `leaf`.
fn fill(
    value: &mut Feature,
    leaf: &dyn Array,
    range: Range<usize>,
    name: &str,
    row: usize,
) -> Result<(), ArrowError> {
    macro_rules! ints {
        ($v:expr, $t:ty, $into:ty) => {{
            let values = &leaf.as_primitive::<$t>().values()[range.clone()];
            $v.extend(values.iter().map(|&x| <$into>::from(x)));
        }};
    }
    match value {
        Feature::Int64(v) => {
            v.clear();
            match leaf.data_type() {
                DataType::Int8 => ints!(v, Int8Type, i64),
                DataType::Int16 => ints!(v, Int16Type, i64),
                DataType::Int32 => ints!(v, Int32Type, i64),
                DataType::Int64 => ints!(v, Int64Type, i64),
                DataType::UInt8 => ints!(v, UInt8Type, i64),
                DataType::UInt16 => ints!(v, UInt16Type, i64),
                DataType::UInt32 => ints!(v, UInt32Type, i64),
                DataType::UInt64 => {
                    for &x in &leaf.as_primitive::<UInt64Type>().values()[range] {
                        v.push(i64::try_from(x).map_err(|_| {
                            column_error(name, Some(row), format_args!("{x} exceeds int64"))
                        })?);
                    }
                }
                DataType::Boolean => {
                    let b = leaf.as_boolean();
                    v.extend(range.map(|i| i64::from(b.value(i))));
                }
                other => return Err(column_error(name, Some(row), other)),
            }
        }
        Feature::Int32(v) => {
            v.clear();
            match leaf.data_type() {
                DataType::Int8 => ints!(v, Int8Type, i32),
                DataType::Int16 => ints!(v, Int16Type, i32),
                DataType::Int32 => ints!(v, Int32Type, i32),
                other => return Err(column_error(name, Some(row), other)),
            }
        }
        Feature::Float(v) => {
            v.clear();
            match leaf.data_type() {
                DataType::Float16 => {
                    let values = &leaf.as_primitive::<Float16Type>().values()[range];
                    v.extend(values.iter().map(|x| x.to_f32()));
                }
                DataType::Float32 => ints!(v, Float32Type, f32),
                DataType::Float64 => {
                    let values = &leaf.as_primitive::<Float64Type>().values()[range];
                    v.extend(values.iter().map(|&x| x as f32));
                }
                other => return Err(column_error(name, Some(row), other)),
            }
        }
        Feature::Double(v) => {
            v.clear();
            ints!(v, Float64Type, f64);
        }
        Feature::Bytes(v) => {
            let mut n = 0;
            let mut push = |b: &[u8]| {
                match v.get_mut(n) {
                    Some(slot) => {
                        slot.clear();
                        slot.extend_from_slice(b);
                    }
                    None => v.push(b.to_vec()),
                }
                n += 1;
            };
            match leaf.data_type() {
                DataType::Binary => range.for_each(|i| push(leaf.as_binary::<i32>().value(i))),
                DataType::LargeBinary => range.for_each(|i| push(leaf.as_binary::<i64>().value(i))),
                DataType::BinaryView => range.for_each(|i| push(leaf.as_binary_view().value(i))),
                DataType::FixedSizeBinary(_) => {
                    range.for_each(|i| push(leaf.as_fixed_size_binary().value(i)))
                }
                DataType::Utf8 => {
                    range.for_each(|i| push(leaf.as_string::<i32>().value(i).as_bytes()))
                }
                DataType::LargeUtf8 => {
                    range.for_each(|i| push(leaf.as_string::<i64>().value(i).as_bytes()))
                }
                DataType::Utf8View => {
                    range.for_each(|i| push(leaf.as_string_view().value(i).as_bytes()))
                }
                other => return Err(column_error(name, Some(row), other)),
            }
            v.truncate(n);
        }
        Feature::None => {}
    }
    Ok(())
}
