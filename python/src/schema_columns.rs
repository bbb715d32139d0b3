//! `schema_columns`: records of a file read as a protobuf message by a
//! schema given at run time (a binary `FileDescriptorSet`), decoded into
//! columns by field path (`recordwire::schema::Columns`, the crate's
//! mapping, the same as `recordwire export --message --columns`) and handed
//! to pyarrow as an `ArrowBatch`. A native function on its own, so that the
//! Python side of schemas (`recordwire.Schema`, `Dataset(message=...)`)
//! can build `decode(ids, paths, to="arrow")` on it.

use std::path::PathBuf;

use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use recordwire::dataset::{Dataset as CoreDataset, Scratch};
use recordwire::frame::OwnedRecord;
use recordwire::io::OpenOptions;
use recordwire::schema::{ColumnOptions, Columns, Schema};

use crate::arrow::ArrowBatch;
use crate::dataset::record_id;
use crate::errors::{guard, to_py};

/// Records `ids` of the record file `path` (negative ids from the end), each
/// read as the message `message` of the descriptor set `descriptor_set`
/// (`protoc --include_imports -o`), as one Arrow column per field path of
/// `paths` and one row per record, with the GIL released.
#[pyfunction]
#[pyo3(signature = (descriptor_set, message, path, ids, paths, *, enum_names=false))]
pub fn schema_columns(
    py: Python<'_>,
    descriptor_set: &[u8],
    message: &str,
    path: PathBuf,
    ids: Vec<i64>,
    paths: Vec<String>,
    enum_names: bool,
) -> PyResult<ArrowBatch> {
    guard(|| {
        let decoded = py.detach(|| -> Result<Result<_, PyErr>, recordwire::Error> {
            let schema = Schema::from_descriptor_set(descriptor_set, message)?;
            let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
            let options = ColumnOptions::default().with_enum_names(enum_names);
            let columns = Columns::new(&schema, &paths, &options)?;
            let dataset = CoreDataset::open([&path], &OpenOptions::default())?;
            let ids = match ids
                .iter()
                .map(|&i| record_id(i, dataset.len()))
                .collect::<PyResult<Vec<u64>>>()
            {
                Ok(ids) => ids,
                Err(e) => return Ok(Err(e)),
            };
            let mut slots: Vec<Option<OwnedRecord>> = vec![None; ids.len()];
            dataset.get_many(&ids, &mut Scratch::new(), |pos, r| slots[pos] = r)?;
            let Some(records) = slots.into_iter().collect::<Option<Vec<OwnedRecord>>>() else {
                return Ok(Err(PyIndexError::new_err("record out of range")));
            };
            let batch = decode(&columns, &records)?;
            Ok(Ok(batch))
        });
        let batch = decoded.map_err(|e| to_py(&e))??;
        Ok(ArrowBatch::from_batch(batch))
    })
}

/// `records` decoded by `columns`, an error placed in its record (file and
/// id, found by its offset).
pub fn decode(
    columns: &Columns,
    records: &[OwnedRecord],
) -> Result<arrow_array::RecordBatch, recordwire::Error> {
    columns
        .decode(records.iter().map(|r| (&r.data[..], r.data_offset)))
        .map_err(|e| {
            let at = e.offset().unwrap_or(0);
            match records.iter().find(|r| r.data_offset <= at && at <= r.end) {
                Some(r) => {
                    let e = e.with_record(r.id);
                    match &r.file {
                        Some(f) => e.with_file(std::sync::Arc::clone(f)),
                        None => e,
                    }
                }
                None => e,
            }
        })
}

/// Records by a dataset's `message` schema as columns by field path (the
/// native side of `Dataset.decode(ids, paths)`).
pub fn decode_paths(
    schema: &Schema,
    paths: &[String],
    enum_names: bool,
    records: &[OwnedRecord],
) -> Result<arrow_array::RecordBatch, recordwire::Error> {
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let options = ColumnOptions::default().with_enum_names(enum_names);
    let columns = Columns::new(schema, &paths, &options)?;
    decode(&columns, records)
}
