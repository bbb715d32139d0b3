//! The Parquet output of `export` (the `export` feature): one file, one row
//! per record, the columns and their Arrow types as [`crate::arrow`] maps
//! them (the same as the Python package's `decode(to="arrow")`), the spec
//! JSON in the file's key-value metadata under `recordwire.spec`; with
//! `--message`, the columns by field path that [`crate::schema::Columns`]
//! maps, the message's name under `recordwire.message`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
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

/// An Arrow writer into a Parquet file, with the properties of every
/// `export` output.
struct Core {
    writer: ArrowWriter<BufWriter<File>>,
    path: PathBuf,
}

impl Core {
    fn create(
        file: File,
        path: &Path,
        schema: &SchemaRef,
        metadata: Vec<KeyValue>,
        batch_size: usize,
    ) -> Result<Core, Error> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(metadata))
            // At least one batch per row group (a batch larger than the
            // default would otherwise be split).
            .set_max_row_group_row_count(Some(batch_size.max(1024 * 1024)))
            .build();
        let writer = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            Arc::clone(schema),
            Some(props),
        )
        .map_err(|e| arrow_error(e, path))?;
        Ok(Core {
            writer,
            path: path.to_path_buf(),
        })
    }

    fn write(&mut self, rb: &RecordBatch) -> Result<(), Error> {
        self.writer
            .write(rb)
            .map_err(|e| arrow_error(e, &self.path))?;
        if self.writer.in_progress_size() >= ROW_GROUP_BYTES {
            self.writer
                .flush()
                .map_err(|e| arrow_error(e, &self.path))?;
        }
        Ok(())
    }

    fn finish(self) -> Result<u64, Error> {
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

/// The Parquet file being written.
pub(in crate::cli) struct ParquetOut {
    core: Core,
    schema: SchemaRef,
    spec: Spec,
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
        let metadata = vec![KeyValue::new(SPEC_KEY.to_string(), spec.to_json())];
        Ok(ParquetOut {
            core: Core::create(file, path, &schema, metadata, batch_size)?,
            schema,
            spec: spec.clone(),
        })
    }
}

impl Sink for ParquetOut {
    fn write_batch(&mut self, batch: &mut Batch<'_>) -> Result<(), Error> {
        let rb = crate::arrow::record_batch(&self.spec, batch)
            .map_err(|e| arrow_error(e, &self.core.path))?;
        debug_assert_eq!(rb.schema(), self.schema);
        self.core.write(&rb)
    }

    fn finish(self: Box<Self>, _rows: u64) -> Result<u64, Error> {
        self.core.finish()
    }
}

/// The key of the message's full name in the file's key-value metadata
/// (`export --message`).
pub(in crate::cli) const MESSAGE_KEY: &str = "recordwire.message";

/// The Parquet file of `export --message`: columns by field path
/// ([`crate::schema::Columns`]).
pub(in crate::cli) struct MessageOut {
    core: Core,
}

impl MessageOut {
    /// Starts the file of the columns `schema` (of the message `message`).
    pub(in crate::cli) fn create(
        file: File,
        path: &Path,
        schema: &SchemaRef,
        message: &str,
        batch_size: usize,
    ) -> Result<MessageOut, Error> {
        let metadata = vec![KeyValue::new(MESSAGE_KEY.to_string(), message.to_owned())];
        Ok(MessageOut {
            core: Core::create(file, path, schema, metadata, batch_size)?,
        })
    }

    pub(in crate::cli) fn write(&mut self, rb: &RecordBatch) -> Result<(), Error> {
        self.core.write(rb)
    }

    /// Finishes the file; returns its size.
    pub(in crate::cli) fn finish(self) -> Result<u64, Error> {
        self.core.finish()
    }
}
