//! `recordwire._native.ArrowWriter`: a record file written from Arrow
//! record batches (`recordwire.write_arrow`, the Ray Data datasink): each
//! row one record, by the crate's `recordwire::arrow::RecordEncoder`. The
//! batches come as Arrow IPC streams (one copy on the way, and no `unsafe`
//! at this boundary). The file appears whole or not at all (a local
//! temporary renamed, or one `PUT` of a remote object), then its sidecar
//! index beside it.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use arrow_ipc::reader::StreamReader;
use bytes::Bytes;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use recordwire::arrow::{RecordEncoder, SchemaRef};
use recordwire::encode::RecordWriter;
use recordwire::frame::Framing;
use recordwire::index::{sidecar_path, GzIndex, Index, DEFAULT_SPACING};
use recordwire::io::{Compression, OpenOptions};

use crate::errors::{guard, to_py};

/// What is being written.
struct State {
    /// The records, encoded and framed (`None` once closed or aborted).
    writer: Option<RecordWriter<Vec<u8>>>,
    /// The encoder of the first batch's schema, and that schema.
    encoder: Option<(SchemaRef, RecordEncoder)>,
    record: Vec<u8>,
}

/// A record file written from Arrow record batches.
#[pyclass(frozen, module = "recordwire._native")]
pub struct ArrowWriter {
    path: String,
    framing: Framing,
    compression: Compression,
    index: bool,
    options: OpenOptions,
    inner: Mutex<State>,
}

fn poisoned() -> PyErr {
    PyValueError::new_err("the writer failed in another thread")
}

#[pymethods]
impl ArrowWriter {
    #[new]
    #[pyo3(signature = (path, *, payload="example", compression=None, gzip_blocks=None, index=true, storage_options=None))]
    fn new(
        path: PathBuf,
        payload: &str,
        compression: Option<&str>,
        gzip_blocks: Option<u64>,
        index: bool,
        storage_options: Option<std::collections::BTreeMap<String, Bound<'_, PyAny>>>,
    ) -> PyResult<Self> {
        guard(|| {
            let framing = match payload {
                "example" => Framing::TfRecord,
                "ofrecord" => Framing::OfRecord,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "payload: example or ofrecord (a SequenceExample has no one column \
                         form), not {other:?}"
                    )))
                }
            };
            let (options, compression) =
                crate::writer::writer_options(framing, compression, gzip_blocks, &path)?;
            let open =
                OpenOptions::default().with_storage(crate::dataset::storage_of(storage_options)?);
            Ok(ArrowWriter {
                path: path.display().to_string(),
                framing,
                compression,
                index,
                options: open,
                inner: Mutex::new(State {
                    writer: Some(RecordWriter::new(Vec::new(), options)),
                    encoder: None,
                    record: Vec::new(),
                }),
            })
        })
    }

    /// Writes every row of the batches of one Arrow IPC stream (a schema,
    /// then batches: what `pyarrow.ipc.new_stream` writes) as records;
    /// returns how many. Every batch of the file has the first one's schema.
    fn write_ipc(&self, py: Python<'_>, stream: &[u8]) -> PyResult<u64> {
        guard(|| {
            let bytes = stream.to_vec();
            py.detach(|| self.write_stream(bytes))
        })
    }

    /// The number of records written.
    #[getter]
    fn records(&self) -> PyResult<u64> {
        let state = self.inner.lock().map_err(|_| poisoned())?;
        Ok(state.writer.as_ref().map_or(0, RecordWriter::records))
    }

    /// The file's path or URL.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// Finishes the file and writes it whole (a temporary renamed, or one
    /// `PUT`), then its sidecar index when asked for; returns the number of
    /// records. Closing twice is an error.
    fn close(&self, py: Python<'_>) -> PyResult<u64> {
        guard(|| {
            let writer = self.inner.lock().map_err(|_| poisoned())?.writer.take();
            let writer = writer.ok_or_else(|| PyValueError::new_err("the writer is closed"))?;
            let records = writer.records();
            py.detach(|| self.finish(writer)).map_err(|e| to_py(&e))?;
            Ok(records)
        })
    }

    /// Drops what was written: nothing appears at the path.
    fn abort(&self) -> PyResult<()> {
        self.inner.lock().map_err(|_| poisoned())?.writer = None;
        Ok(())
    }
}

impl ArrowWriter {
    fn write_stream(&self, bytes: Vec<u8>) -> PyResult<u64> {
        let reader = StreamReader::try_new(Cursor::new(bytes), None)
            .map_err(|e| PyValueError::new_err(format!("not an Arrow IPC stream: {e}")))?;
        let mut state = self.inner.lock().map_err(|_| poisoned())?;
        let State {
            writer,
            encoder,
            record,
        } = &mut *state;
        let writer = writer
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("the writer is closed"))?;
        let mut written = 0;
        for batch in reader {
            let batch =
                batch.map_err(|e| PyValueError::new_err(format!("an Arrow IPC batch: {e}")))?;
            if encoder.is_none() {
                let ofrecord = self.framing == Framing::OfRecord;
                let made = RecordEncoder::new(batch.schema().as_ref(), ofrecord)
                    .map_err(|e| PyTypeError::new_err(recordwire::arrow::error_message(&e)))?;
                *encoder = Some((batch.schema(), made));
            }
            let Some((schema, encoder)) = encoder.as_mut() else {
                continue;
            };
            if batch.schema().fields() != schema.fields() {
                return Err(PyValueError::new_err(format!(
                    "a batch's schema differs from the first batch's: {} after {}",
                    batch.schema(),
                    schema
                )));
            }
            for row in 0..batch.num_rows() {
                record.clear();
                encoder
                    .encode(&batch, row, record)
                    .map_err(|e| PyValueError::new_err(recordwire::arrow::error_message(&e)))?;
                writer
                    .write_record(record)
                    .map_err(|e| PyValueError::new_err(format!("{}: {e}", self.path)))?;
                written += 1;
            }
        }
        Ok(written)
    }

    fn finish(&self, writer: RecordWriter<Vec<u8>>) -> Result<(), recordwire::Error> {
        let path = Path::new(&self.path);
        let data = writer
            .finish()
            .map_err(|e| recordwire::Error::io(e).with_file(self.path.as_str()))?;
        let data = Bytes::from(data);
        let index = if self.index {
            Some(self.index_of(&data)?)
        } else {
            None
        };
        // The only handle on the bytes again: back to a Vec without a copy.
        recordwire::io::write_whole(path, Vec::from(data), &self.options)?;
        if let Some(index) = index {
            recordwire::io::write_whole(&sidecar_path(path), index, &self.options)?;
        }
        Ok(())
    }

    /// The sidecar index of the file `data`: the native index, or the
    /// checkpoint index of a compressed file.
    fn index_of(&self, data: &Bytes) -> Result<Vec<u8>, recordwire::Error> {
        let mut out = Vec::new();
        let written = match self.compression {
            Compression::Gzip | Compression::Zlib => {
                GzIndex::build(data, self.compression, self.framing, DEFAULT_SPACING, false)?
                    .write_native(&mut out)
            }
            _ => Index::build(data, self.framing, false)?.write_native(&mut out),
        };
        written.map_err(|e| recordwire::Error::io(e).with_file(self.path.as_str()))?;
        Ok(out)
    }
}
