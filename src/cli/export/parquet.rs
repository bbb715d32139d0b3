//! The Parquet output of `export` (the `export` feature): one file, one row
//! per record, the columns and their Arrow types as [`crate::arrow`] maps
//! them (the same as the Python package's `decode(to="arrow")`), the spec
//! JSON in the file's key-value metadata under `recordwire.spec`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::Sink;
use crate::batch::{Batch, Spec};
use crate::error::Error;

/// The key of the spec JSON in the file's key-value metadata.
pub(in crate::cli) const SPEC_KEY: &str = "recordwire.spec";

/// A row group is closed once its encoded data reach this size (or the
/// writer's row limit), so that memory stays bounded with large values.
const ROW_GROUP_BYTES: usize = 128 << 20;

fn arrow_error(e: impl std::fmt::Display, path: &Path) -> Error {
    Error::io(std::io::Error::other(e.to_string())).with_file(path.display().to_string())
}

/// The Parquet file being written.
pub(in crate::cli) struct ParquetOut {
    writer: ArrowWriter<BufWriter<File>>,
    schema: SchemaRef,
    spec: Spec,
    path: PathBuf,
}

impl ParquetOut {
    /// Starts the file (`path`: its name, for errors).
    pub(in crate::cli) fn create(
        file: File,
        path: &Path,
        spec: &Spec,
        batch_size: usize,
    ) -> Result<ParquetOut, Error> {
        let schema = crate::arrow::schema(spec).map_err(|e| arrow_error(e, path))?;
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
            spec: spec.clone(),
            path: path.to_path_buf(),
        })
    }
}

impl Sink for ParquetOut {
    fn write_batch(&mut self, batch: &mut Batch<'_>) -> Result<(), Error> {
        let rb = crate::arrow::record_batch(&self.spec, batch)
            .map_err(|e| arrow_error(e, &self.path))?;
        debug_assert_eq!(rb.schema(), self.schema);
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
