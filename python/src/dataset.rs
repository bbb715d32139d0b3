//! `recordwire.Dataset`: files opened as one id space, with their indexes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use recordwire::batch::{Batch, Decoder};
use recordwire::frame::{Framing, ReadOptions};
use recordwire::index::{Dataset as CoreDataset, Index, IndexFormat, Shard};
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::names::Auto;
use recordwire::view::{detect_payload, PayloadKind};

use crate::buffers::Maps;
use crate::errors::{guard, to_py};
use crate::order::{order_spec, Order};
use crate::spec::spec_of;

/// Records of one or more TFRecord/OFRecord files as one id space.
///
/// Subclassed by the pure-Python `recordwire.Dataset`, which adds pickling
/// (a dataset is reopened, never shared, in another process), the column
/// types and the Arrow form of `decode`.
#[pyclass(frozen, subclass, module = "recordwire._native")]
pub struct Dataset {
    inner: Arc<CoreDataset>,
    payload: PayloadKind,
    maps: Maps,
    /// The decoder (a thread pool) of the last `decode`, kept for the next
    /// one with the same thread count.
    decoder: KeptDecoder,
    /// The batch of the last `decode`, its columns taken (handed to numpy):
    /// what stays (the record list, the other threads' parts) is warm memory
    /// for the next.
    spare: Mutex<Batch<'static>>,
}

/// The files named by `paths`: a path, a glob pattern (wildcards `*` and `?`
/// in the last component, as `Dataset::glob`), or a list of paths.
pub(crate) fn files_of(paths: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
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

pub(crate) fn parse_name<T: std::str::FromStr>(what: &str, s: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>()
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// A Python index (negative from the end) as a record id.
pub(crate) fn record_id(i: i64, len: u64) -> PyResult<u64> {
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
    #[pyo3(signature = (paths, *, index=None, framing="auto", payload="auto", verify_crc=true))]
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
                maps: Maps::new(py, &inner)?,
                inner: Arc::new(inner),
                payload,
                decoder: KeptDecoder::default(),
                spare: Mutex::new(Batch::new()),
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

    /// Record `i`'s payload (CRCs checked as opened), as a read-only
    /// `memoryview` into the file: no copy.
    fn raw<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let id = record_id(i, self.inner.len())?;
            let record = self.inner.get(id).map_err(|e| to_py(&e))?;
            let record = record.ok_or_else(|| PyIndexError::new_err("record out of range"))?;
            self.maps.slice(py, record.data)
        })
    }

    /// Record `i` as a dict: feature name to a numpy array (int64, float32,
    /// and OFRecord's int32/float64) or a list of `memoryview`s into the
    /// file (bytes values, no copy).
    fn __getitem__<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let id = record_id(i, self.inner.len())?;
            let record = self.inner.get(id).map_err(|e| to_py(&e))?;
            let record = record.ok_or_else(|| PyIndexError::new_err("record out of range"))?;
            crate::record::to_dict(py, &record, self.payload, &self.maps)
        })
    }

    /// Records `ids`, read in file-offset order (each file's records in one
    /// forward sweep), returned in request order: dicts as `ds[i]`, or the
    /// payloads as memoryviews with `raw=True`.
    #[pyo3(signature = (ids, *, raw=false))]
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        raw: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let ids = self.ids(ids)?;
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by_key(|&k| ids[k]);
            let mut out: Vec<Option<Bound<'py, PyAny>>> = vec![None; ids.len()];
            for k in order {
                let record = self.inner.get(ids[k]).map_err(|e| to_py(&e))?;
                let record = record.ok_or_else(|| PyIndexError::new_err("record out of range"))?;
                out[k] = Some(if raw {
                    self.maps.slice(py, record.data)?
                } else {
                    crate::record::to_dict(py, &record, self.payload, &self.maps)?.into_any()
                });
            }
            PyList::new(py, out.into_iter().flatten().collect::<Vec<_>>())
        })
    }

    /// Decodes records `ids` (in that order) by `spec` (a `Spec`, its JSON
    /// text, or that JSON parsed into a dict) on `threads` threads, with the
    /// GIL released: `(rows, context columns, sequence columns)`, each
    /// column a dict of its parts (see `recordwire/_columns.py`).
    #[pyo3(signature = (ids, spec, *, threads=1))]
    fn _decode<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        spec: &Bound<'py, PyAny>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyTuple>> {
        guard(|| {
            let spec = spec_of(spec)?;
            let ids = self.ids(ids)?;
            let decoder = self.decoder.get(threads)?;
            let dataset: &CoreDataset = &self.inner;
            let spec_ref: &recordwire::batch::Spec = &spec;
            // A concurrent decode (another Python thread) takes a new batch.
            let spare = self
                .spare
                .try_lock()
                .ok()
                .map(|mut s| std::mem::take(&mut *s));
            let mut batch: Batch<'_> = spare.unwrap_or_default().recycle();
            let decoded = py.detach(|| decoder.decode_ids(dataset, &ids, spec_ref, &mut batch));
            // The columns go to numpy only when the decode succeeded.
            let columns = match decoded {
                Ok(()) => crate::columns::to_py(py, &mut batch, &self.maps),
                Err(e) => Err(to_py(&e)),
            };
            if let Ok(mut s) = self.spare.try_lock() {
                *s = batch.recycle();
            }
            decoded_tuple(py, columns?)
        })
    }

    /// One worker's epoch orders (see `recordwire.Dataset.order`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (mode="shuffle", *, seed=0, rank=0, world=1, worker=0, workers=1, tail="pad", page_size=4096, window=8))]
    fn _order(
        &self,
        py: Python<'_>,
        mode: &str,
        seed: u64,
        rank: u32,
        world: u32,
        worker: u32,
        workers: u32,
        tail: &str,
        page_size: u64,
        window: u32,
    ) -> PyResult<Order> {
        guard(|| {
            let spec = order_spec(
                mode, seed, rank, world, worker, workers, tail, page_size, window,
            )?;
            let dataset: &CoreDataset = &self.inner;
            let order = py
                .detach(|| dataset.order(spec))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok(Order::new(order))
        })
    }

    /// Writes each file's index: beside the file as `<file>.rwindex` (the
    /// sidecar that opening uses), or to `path` for a one-file dataset, in
    /// `format` (`native`, `dali` or `lirs`). Returns the paths written.
    #[pyo3(signature = (path=None, *, format="native"))]
    fn write_index(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        format: &str,
    ) -> PyResult<Vec<PathBuf>> {
        guard(|| {
            let format: IndexFormat = parse_name("format", format)?;
            let shards = self.inner.shards();
            if path.is_some() && shards.len() != 1 {
                return Err(PyValueError::new_err(
                    "path= goes with a one-file dataset; without it each file gets its sidecar",
                ));
            }
            let mut written = Vec::with_capacity(shards.len());
            for shard in shards {
                let target = match &path {
                    Some(p) => p.clone(),
                    None => {
                        if format != IndexFormat::Native {
                            return Err(PyValueError::new_err(
                                "the sidecar index is native: give path= for dali or lirs",
                            ));
                        }
                        recordwire::index::sidecar_path(Path::new(shard.file().name()))
                    }
                };
                let done = py.detach(|| -> Result<(), recordwire::Error> {
                    let mut out = Vec::new();
                    shard
                        .index()
                        .write_as(format, shard.file().bytes(), &mut out)?;
                    recordwire::encode::write_file_atomic(&target, &out).map_err(|e| {
                        recordwire::Error::io(e).with_file(target.display().to_string().as_str())
                    })
                });
                done.map_err(|e| to_py(&e))?;
                written.push(target);
            }
            Ok(written)
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

impl Dataset {
    /// Python ids (negative from the end) as record ids.
    fn ids(&self, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let len = self.inner.len();
        let ids: Vec<i64> = match ids.extract::<numpy::PyReadonlyArray1<'_, i64>>() {
            Ok(a) => a.as_array().to_vec(),
            Err(_) => ids.extract()?,
        };
        ids.into_iter().map(|i| record_id(i, len)).collect()
    }
}

/// The decoder (a thread pool) of the last `decode`, kept for the next one
/// with the same thread count.
#[derive(Default)]
pub(crate) struct KeptDecoder(Mutex<Option<(usize, Arc<Decoder>)>>);

impl KeptDecoder {
    /// The decoder for `threads` threads (at least 1): the kept one, or a
    /// new one (kept).
    pub(crate) fn get(&self, threads: usize) -> PyResult<Arc<Decoder>> {
        let threads = threads.max(1);
        let mut kept = self
            .0
            .lock()
            .map_err(|_| PyValueError::new_err("a decode panicked in another thread"))?;
        if let Some((n, d)) = kept.as_ref() {
            if *n == threads {
                return Ok(Arc::clone(d));
            }
        }
        let d = Arc::new(Decoder::new(threads));
        *kept = Some((threads, Arc::clone(&d)));
        Ok(d)
    }
}

/// What `_decode` returns: `(rows, context columns, sequence columns)`.
pub(crate) fn decoded_tuple<'py>(
    py: Python<'py>,
    (rows, context, sequence): (usize, Bound<'py, PyDict>, Bound<'py, PyDict>),
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            rows.into_pyobject(py)?.into_any(),
            context.into_any(),
            sequence.into_any(),
        ],
    )
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
