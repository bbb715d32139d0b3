//! `recordwire.Dataset`: files opened as one id space, with their indexes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use recordwire::batch::{Batch, Decoder};
use recordwire::frame::{Framing, ReadOptions};
use recordwire::index::{Dataset as CoreDataset, Index, IndexFormat, Shard};
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::names::Auto;
use recordwire::view::{detect_payload, PayloadKind};

use crate::errors::{guard, to_py};
use crate::spec::spec_of;

/// Records of one or more TFRecord/OFRecord files as one id space.
#[pyclass(frozen, module = "recordwire._native")]
pub struct Dataset {
    inner: Arc<CoreDataset>,
    payload: PayloadKind,
}

/// The files named by `paths`: a path, a glob pattern (wildcards `*` and `?`
/// in the last component, as `Dataset::glob`), or a list of paths.
fn files_of(paths: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(one) = paths.extract::<PathBuf>() {
        let s = one.as_os_str().as_encoded_bytes();
        let wild = one
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().iter().any(|&b| b == b'*' || b == b'?'));
        if wild && !s.is_empty() {
            let found = CoreDataset::glob(&one).map_err(|e| to_py(&e))?;
            if found.is_empty() {
                return Err(PyValueError::new_err(format!(
                    "no file matches {}",
                    one.display()
                )));
            }
            return Ok(found);
        }
        return Ok(vec![one]);
    }
    if let Ok(list) = paths.extract::<Vec<PathBuf>>() {
        if list.is_empty() {
            return Err(PyValueError::new_err("no file given"));
        }
        return Ok(list);
    }
    Err(PyTypeError::new_err(
        "paths: a path, a glob pattern or a list of paths",
    ))
}

/// Reads an index file in any of the three formats (native, DALI text, raw
/// offset table), told apart by its content, as the CLI's `--index` does.
fn load_index(path: &Path, file: &RecordFile, mmap: bool) -> Result<Index, recordwire::Error> {
    let name = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| recordwire::Error::io(e).with_file(name.as_str()))?;
    let format = IndexFormat::detect(&bytes);
    if format == IndexFormat::Native {
        Index::load_native(path, file.bytes(), mmap).map_err(|e| e.with_file(name.as_str()))
    } else {
        Index::read_as(format, bytes.into(), file.bytes(), file.framing())
            .map_err(|e| e.with_file(name.as_str()))
    }
}

fn parse_name<T: std::str::FromStr>(what: &str, s: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>()
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// A Python index (negative from the end) as a record id.
fn record_id(i: i64, len: u64) -> PyResult<u64> {
    let id = if i < 0 {
        len.checked_sub(i.unsigned_abs())
    } else {
        Some(i as u64).filter(|&id| id < len)
    };
    id.filter(|&id| id < len).ok_or_else(|| {
        PyIndexError::new_err(format!("record {i} out of range: the dataset has {len}"))
    })
}

#[pymethods]
impl Dataset {
    #[new]
    #[pyo3(signature = (paths, index=None, framing="auto", payload="auto", verify_crc=true))]
    fn new(
        py: Python<'_>,
        paths: &Bound<'_, PyAny>,
        index: Option<PathBuf>,
        framing: &str,
        payload: &str,
        verify_crc: bool,
    ) -> PyResult<Self> {
        guard(|| {
            let files = files_of(paths)?;
            let framing: Auto<Framing> = parse_name("framing", framing)?;
            let payload: Auto<PayloadKind> = parse_name("payload", payload)?;
            let read = ReadOptions {
                check_length_crc: verify_crc,
                check_data_crc: verify_crc,
                ..ReadOptions::default()
            };
            let options = OpenOptions::default()
                .with_framing(framing.get())
                .with_read(read);
            if index.is_some() && files.len() > 1 {
                return Err(PyValueError::new_err("index= goes with a single file"));
            }
            let opened = py.detach(|| -> Result<CoreDataset, recordwire::Error> {
                match &index {
                    None => CoreDataset::open(&files, &options),
                    Some(ix) => {
                        let file = RecordFile::open(&files[0], &options)?;
                        let index = load_index(ix, &file, options.mmap)?;
                        Ok(CoreDataset::from_shards(vec![Shard::new(file, index)?]))
                    }
                }
            });
            let inner = opened.map_err(|e| to_py(&e))?;
            let payload = match payload.get() {
                Some(p) => p,
                None => detect(&inner)?,
            };
            Ok(Dataset {
                inner: Arc::new(inner),
                payload,
            })
        })
    }

    /// The number of records.
    fn __len__(&self) -> usize {
        usize::try_from(self.inner.len()).unwrap_or(usize::MAX)
    }

    /// The payload kind records are read as (`example`, `sequence_example`,
    /// `ofrecord`, `raw`).
    #[getter]
    fn payload(&self) -> &'static str {
        self.payload.name()
    }

    /// The files, in id order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.file().name().to_owned())
            .collect()
    }

    /// Record `i`'s payload (CRCs checked as opened), as `bytes` (a copy in
    /// this version).
    fn raw<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let id = record_id(i, self.inner.len())?;
            let record = self.inner.get(id).map_err(|e| to_py(&e))?;
            let record = record.ok_or_else(|| PyIndexError::new_err("record out of range"))?;
            Ok(PyBytes::new(py, record.data))
        })
    }

    /// Record `i` as a dict: feature name to a numpy array (int64, float32,
    /// and OFRecord's int32/float64) or a list of bytes.
    fn __getitem__<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let id = record_id(i, self.inner.len())?;
            let record = self.inner.get(id).map_err(|e| to_py(&e))?;
            let record = record.ok_or_else(|| PyIndexError::new_err("record out of range"))?;
            crate::record::to_dict(py, &record, self.payload)
        })
    }

    /// Decodes records `ids` (in that order) by `spec` (a `Spec`, its JSON
    /// text, or that JSON parsed into a dict) on `threads` threads, with the
    /// GIL released; a dict name -> column (see the stubs).
    #[pyo3(signature = (ids, spec, threads=1))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        spec: &Bound<'py, PyAny>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let spec = spec_of(spec)?;
            let len = self.inner.len();
            let ids: Vec<i64> = ids.extract()?;
            let ids = ids
                .into_iter()
                .map(|i| record_id(i, len))
                .collect::<PyResult<Vec<u64>>>()?;
            let dataset: &CoreDataset = &self.inner;
            let spec_ref: &recordwire::batch::Spec = &spec;
            let mut batch = Batch::new();
            let decoded = py.detach(|| {
                Decoder::new(threads.max(1)).decode_ids(dataset, &ids, spec_ref, &mut batch)
            });
            decoded.map_err(|e| to_py(&e))?;
            crate::columns::to_dict(py, &batch)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "recordwire.Dataset({} records in {} files, payload {})",
            self.inner.len(),
            self.inner.shards().len(),
            self.payload.name()
        )
    }
}

/// The payload kind of the dataset's records: OFRecord framing holds
/// OFRecords; TFRecord payloads are sniffed from the first records.
fn detect(dataset: &CoreDataset) -> PyResult<PayloadKind> {
    let Some(shard) = dataset.shards().iter().find(|s| !s.is_empty()) else {
        return Ok(PayloadKind::Example);
    };
    if shard.file().framing() == Framing::OfRecord {
        return Ok(PayloadKind::OfRecord);
    }
    let mut first = Vec::new();
    for id in 0..shard.len().min(64) {
        match shard.get(id).map_err(|e| to_py(&e))? {
            Some(r) => first.push(r.data),
            None => break,
        }
    }
    Ok(detect_payload(first))
}
