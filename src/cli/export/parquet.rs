//! The Parquet output of `export` (the `export` feature): one file, one row
//! per record, one column per feature (named as the feature; `sequence.NAME`
//! for a sequence feature whose name a context feature has too), not null, the spec JSON in the
//! file's key-value metadata under `recordwire.spec`.
//!
//! | form | Arrow type |
//! |---|---|
//! | `fixed_len`, `ofrecord_raw`, shape `[]` | the primitive type, or `LargeBinary` for bytes |
//! | `fixed_len`, `ofrecord_raw`, shape `[d1, d2, …]` | `FixedSizeList(d1, FixedSizeList(d2, … T))` |
//! | `fixed_len_sequence` | `LargeList` of the element (as `fixed_len`), unpadded |
//! | `var_len` | `LargeList<T>` |
//! | `var_len` (sequence) | `LargeList<LargeList<T>>`: frames per row, values per frame |

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int32Type, Int64Type, Int8Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, LargeBinaryArray, LargeListArray, PrimitiveArray,
    RecordBatch,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::{bytes_runs, runs, Plan, Shape, Sink};
use crate::batch::{Batch, Column, ColumnValue, DType, Spec};
use crate::error::Error;

/// The key of the spec JSON in the file's key-value metadata.
pub(in crate::cli) const SPEC_KEY: &str = "recordwire.spec";

/// A row group is closed once its encoded data reach this size (or the
/// writer's row limit), so that memory stays bounded with large values.
const ROW_GROUP_BYTES: usize = 128 << 20;

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

/// The type of one element: the leaf in one FixedSizeList per dimension.
fn element_type(plan: &Plan) -> DataType {
    let mut t = leaf_type(plan.dtype);
    for &d in plan.dims.iter().rev() {
        t = DataType::FixedSizeList(item(t), d as i32);
    }
    t
}

/// The Arrow type of a column.
pub(in crate::cli) fn column_type(plan: &Plan) -> DataType {
    match plan.shape {
        Shape::Fixed => element_type(plan),
        Shape::Padded => DataType::LargeList(item(element_type(plan))),
        Shape::Ragged => DataType::LargeList(item(leaf_type(plan.dtype))),
        Shape::RaggedFrames => {
            DataType::LargeList(item(DataType::LargeList(item(leaf_type(plan.dtype)))))
        }
    }
}

fn arrow_error(e: impl std::fmt::Display, path: &Path) -> Error {
    Error::io(std::io::Error::other(e.to_string())).with_file(path.display().to_string())
}

fn primitive<T>(col: &Column<'_>, runs: &[std::ops::Range<usize>]) -> ArrayRef
where
    T: ArrowPrimitiveType,
    T::Native: ColumnValue,
{
    let v = col.values::<T::Native>().unwrap_or_default();
    let values: Vec<T::Native> = match runs {
        [one] => v[one.clone()].to_vec(),
        _ => runs.iter().flat_map(|r| &v[r.clone()]).copied().collect(),
    };
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(values), None))
}

/// The values of a batch's column, unpadded, as a flat array.
fn leaf(plan: &Plan, col: &Column<'_>) -> ArrayRef {
    let runs = runs(plan, col);
    match plan.dtype {
        DType::Int64 => primitive::<Int64Type>(col, &runs),
        DType::Float32 => primitive::<Float32Type>(col, &runs),
        DType::Int32 => primitive::<Int32Type>(col, &runs),
        DType::Float64 => primitive::<Float64Type>(col, &runs),
        DType::Int8 => primitive::<Int8Type>(col, &runs),
        DType::UInt8 => primitive::<UInt8Type>(col, &runs),
        DType::Bytes => {
            let (offsets, data) = match (plan.shape, col.offsets()) {
                // Owned and not padded: the column's own buffers.
                (Shape::Fixed | Shape::Ragged | Shape::RaggedFrames, Some(o)) => {
                    (o.to_vec(), col.raw_values().to_vec())
                }
                _ => {
                    let mut offsets = vec![0i64];
                    let mut data = Vec::new();
                    for v in bytes_runs(col, &runs) {
                        data.extend_from_slice(v);
                        offsets.push(data.len() as i64);
                    }
                    (offsets, data)
                }
            };
            Arc::new(LargeBinaryArray::new(
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                Buffer::from_vec(data),
                None,
            ))
        }
    }
}

/// A batch's column as an Arrow array of [`column_type`].
fn array(plan: &Plan, col: &Column<'_>, path: &Path) -> Result<ArrayRef, Error> {
    let err = |e: arrow_schema::ArrowError| arrow_error(format!("{}: {e}", plan.name), path);
    let mut values = leaf(plan, col);
    let splits =
        |s: Option<&[i64]>| OffsetBuffer::new(ScalarBuffer::from(s.unwrap_or(&[0]).to_vec()));
    Ok(match plan.shape {
        Shape::Fixed | Shape::Padded => {
            let elements = match plan.shape {
                Shape::Fixed => col.shape().first().copied().unwrap_or(0),
                _ => col.lengths().unwrap_or_default().iter().sum::<i64>() as usize,
            };
            let mut t = leaf_type(plan.dtype);
            for (i, &d) in plan.dims.iter().enumerate().rev() {
                // A list of size 0 takes its length from a validity buffer.
                let len = elements * plan.dims[..i].iter().product::<usize>();
                let valid = (d == 0).then(|| NullBuffer::new_valid(len));
                values = Arc::new(
                    FixedSizeListArray::try_new(item(t.clone()), d as i32, values, valid)
                        .map_err(err)?,
                );
                t = DataType::FixedSizeList(item(t), d as i32);
            }
            if plan.shape == Shape::Fixed {
                values
            } else {
                let lengths = col.lengths().unwrap_or_default();
                let offsets = OffsetBuffer::from_lengths(lengths.iter().map(|&n| n as usize));
                Arc::new(LargeListArray::try_new(item(t), offsets, values, None).map_err(err)?)
            }
        }
        Shape::Ragged => Arc::new(
            LargeListArray::try_new(
                item(leaf_type(plan.dtype)),
                splits(col.row_splits()),
                values,
                None,
            )
            .map_err(err)?,
        ),
        Shape::RaggedFrames => {
            let frames = LargeListArray::try_new(
                item(leaf_type(plan.dtype)),
                splits(col.frame_splits()),
                values,
                None,
            )
            .map_err(err)?;
            Arc::new(
                LargeListArray::try_new(
                    item(frames.data_type().clone()),
                    splits(col.row_splits()),
                    Arc::new(frames),
                    None,
                )
                .map_err(err)?,
            )
        }
    })
}

/// The Parquet file being written.
pub(in crate::cli) struct ParquetOut {
    writer: ArrowWriter<BufWriter<File>>,
    schema: SchemaRef,
    plans: Vec<Plan>,
    path: PathBuf,
}

impl ParquetOut {
    /// Starts the file (`path`: its name, for errors).
    pub(in crate::cli) fn create(
        file: File,
        path: &Path,
        spec: &Spec,
        plans: &[Plan],
        batch_size: usize,
    ) -> Result<ParquetOut, Error> {
        let fields: Vec<Field> = plans
            .iter()
            .map(|p| Field::new(p.column.clone(), column_type(p), false))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(vec![KeyValue::new(
                SPEC_KEY.to_string(),
                spec.to_json(),
            )]))
            // At least one batch per row group (a batch larger than the
            // default would otherwise be split).
            .set_max_row_group_row_count(Some(batch_size.max(1024 * 1024)))
            .build();
        let writer = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            Arc::clone(&schema),
            Some(props),
        )
        .map_err(|e| arrow_error(e, path))?;
        Ok(ParquetOut {
            writer,
            schema,
            plans: plans.to_vec(),
            path: path.to_path_buf(),
        })
    }
}

impl Sink for ParquetOut {
    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<(), Error> {
        let cols = batch.columns().iter().chain(batch.sequence());
        let arrays = self
            .plans
            .iter()
            .zip(cols)
            .map(|(plan, col)| array(plan, col, &self.path))
            .collect::<Result<Vec<_>, _>>()?;
        let rb = RecordBatch::try_new(Arc::clone(&self.schema), arrays)
            .map_err(|e| arrow_error(e, &self.path))?;
        self.writer
            .write(&rb)
            .map_err(|e| arrow_error(e, &self.path))?;
        if self.writer.in_progress_size() >= ROW_GROUP_BYTES {
            self.writer
                .flush()
                .map_err(|e| arrow_error(e, &self.path))?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _rows: u64) -> Result<u64, Error> {
        let path = self.path;
        let out = self
            .writer
            .into_inner()
            .map_err(|e| arrow_error(e, &path))?;
        let file = out
            .into_inner()
            .map_err(|e| arrow_error(e.error(), &path))?;
        let io = |e: std::io::Error| Error::io(e).with_file(path.display().to_string());
        file.sync_all().map_err(io)?;
        Ok(file.metadata().map_err(io)?.len())
    }
}
