//! `recordwire.Dataset`: files opened as one id space, with their indexes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySlice, PyTuple};
use recordwire::batch::{Batch, Decoder};
use recordwire::dataset::{Dataset as CoreDataset, Scratch, Shard};
use recordwire::frame::{ErrorPolicy, Framing, ReadOptions};
use recordwire::frame::{OwnedRecord, Record};
use recordwire::index::{GzIndex, IndexFormat};
use recordwire::io::remote::StorageOptions;
use recordwire::io::OpenOptions;
use recordwire::names::Auto;
use recordwire::view::PayloadKind;

use crate::buffers::{RecordBuffer, ShardViews};
use crate::errors::{guard, to_py};
use crate::order::{order_spec, Order};
use crate::spec::{spec_of, Spec};

/// Records of one or more TFRecord/OFRecord files as one id space.
///
/// Subclassed by the pure-Python `recordwire.Dataset`, which adds pickling
/// (a dataset is reopened, never shared, in another process), the column
/// types and the Arrow form of `decode`.
#[pyclass(frozen, subclass, module = "recordwire._native")]
pub struct Dataset {
    inner: Arc<CoreDataset>,
    /// The payload of every shard, or of the first when they differ.
    payload: PayloadKind,
    /// The shards are read as different payloads (each record as its own
    /// shard's; `decode` refuses).
    mixed: bool,
    /// The view of each shard in memory, for slices of its records.
    views: ShardViews,
    /// The decoder (a thread pool) of the last `decode`, kept for the next
    /// one with the same thread count.
    decoder: KeptDecoder,
    /// The batch of the last `decode`, its columns taken (handed to numpy):
    /// what stays (the record list, the other threads' parts) is warm memory
    /// for the next.
    spare: Mutex<Batch<'static>>,
    /// The options the files were opened with (for the stores of remote
    /// files, where `write_index` puts sidecars).
    options: OpenOptions,
    /// What the first records of each file showed about their payload (the
    /// CLI's notes, docs/FORMAT.md §9.5), warned by the Python side.
    notes: Vec<String>,
    /// The message every record is read as (`message=`), instead of the
    /// payload kind.
    schema: Option<recordwire::schema::Schema>,
}

/// The notes on each shard's payload, from its first records, as the CLI
/// gives them (`PayloadNotes`, with the Python hint `payload="raw"`).
/// A record that cannot be read ends its shard's look (the read raises
/// where it is asked for).
fn payload_notes(inner: &CoreDataset, forced: bool) -> Vec<String> {
    let decode = recordwire::view::DecodeOptions::default();
    let mut lines = Vec::new();
    let mut base = 0u64;
    let mut scratch = Scratch::new();
    for shard in inner.shards() {
        let kind = shard.payload();
        let n = shard
            .len()
            .min(recordwire::view::PayloadSniffer::RECORDS as u64);
        let ids: Vec<u64> = (base..base + n).collect();
        base += shard.len();
        if kind == PayloadKind::Raw {
            continue;
        }
        let mut notes = recordwire::view::PayloadNotes::new(kind, forced);
        let mut records: Vec<Option<OwnedRecord>> = vec![None; ids.len()];
        if inner
            .get_many(&ids, &mut scratch, |pos, r| records[pos] = r)
            .is_err()
        {
            continue;
        }
        for r in records.into_iter().flatten() {
            match kind.validate(&r.data, r.data_offset, decode) {
                Ok(()) => notes.record(r.id - (base - shard.len()), &r.data, r.data_offset),
                Err(_) => notes.bad(r.id - (base - shard.len()), &r.data),
            }
        }
        lines.extend(notes.lines(shard.name(), recordwire::view::RawHint::Python));
    }
    lines
}

impl Dataset {
    /// The crate's dataset.
    pub(crate) fn core(&self) -> &Arc<CoreDataset> {
        &self.inner
    }

    /// The view of each shard in memory.
    pub(crate) fn views(&self) -> &ShardViews {
        &self.views
    }
}

/// `storage_options` as the store takes them: each value a string, or a
/// bool (`true`/`false`) or a number written as text; anything else is a
/// `TypeError` that names its key.
pub(crate) fn storage_of(
    options: Option<std::collections::BTreeMap<String, Bound<'_, PyAny>>>,
) -> PyResult<StorageOptions> {
    let mut out = std::collections::BTreeMap::new();
    for (key, value) in options.unwrap_or_default() {
        let text = if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
            if b.is_true() { "true" } else { "false" }.to_owned()
        } else if let Ok(s) = value.extract::<String>() {
            s
        } else if value.is_instance_of::<pyo3::types::PyInt>()
            || value.is_instance_of::<pyo3::types::PyFloat>()
        {
            value.str()?.to_string()
        } else {
            return Err(PyTypeError::new_err(format!(
                "storage_options[{}]: a string, a bool or a number, not {}",
                key.as_str().into_pyobject(value.py())?.repr()?,
                value.get_type().name()?
            )));
        };
        out.insert(key, text);
    }
    Ok(StorageOptions::new(out))
}

/// The files named by `paths`: a path, a glob pattern (wildcards `*` and `?`
/// in the last component, as `Dataset::glob`), or a list of paths.
pub(crate) fn files_of(
    paths: &Bound<'_, PyAny>,
    storage: &StorageOptions,
) -> PyResult<Vec<PathBuf>> {
    if let Ok(one) = paths.extract::<PathBuf>() {
        if one.as_os_str().is_empty() {
            return Ok(vec![one]);
        }
        // A directory (or a `file://` URL of one) means its record files:
        // what `DIR/*` matches (no hidden files, sidecars or other index
        // files), as `write_records` and `recordwire pack` fill one.
        let local = recordwire::io::remote::file_url_path(&one).unwrap_or_else(|| one.clone());
        if local.is_dir() {
            let one = local;
            let pattern = one.join("*");
            let found = CoreDataset::glob(&pattern).map_err(|e| to_py(&e))?;
            if found.is_empty() {
                let err = recordwire::Error::usage(
                    "a directory with no record file (hidden files and index files are not read)",
                )
                .with_file(one.display().to_string());
                return Err(to_py(&err));
            }
            return Ok(found);
        }
        // A glob of any kind (local, `file://`, a store's: one listing of
        // the folder), index files left out; no match is a usage_error
        // (`recordwire.Error`), as on the command line. Without a wildcard,
        // the path itself.
        let options = OpenOptions::default().with_storage(storage.clone());
        return paths
            .py()
            .detach(|| CoreDataset::expand(&one, &options))
            .map_err(|e| to_py(&e));
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
    #[pyo3(signature = (paths, *, index=None, framing="auto", payload="auto", verify_crc=true, on_error="fail", storage_options=None, message=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        paths: &Bound<'_, PyAny>,
        index: Option<PathBuf>,
        framing: &str,
        payload: &str,
        verify_crc: bool,
        on_error: &str,
        storage_options: Option<std::collections::BTreeMap<String, Bound<'_, PyAny>>>,
        message: Option<PyRef<'_, crate::message::Schema>>,
    ) -> PyResult<Self> {
        guard(|| {
            let schema = message.map(|m| m.inner.clone());
            if schema.is_some() && payload != "auto" && payload != "raw" {
                return Err(PyValueError::new_err(
                    "message= reads every record as that message: it does not go with payload=",
                ));
            }
            let payload = if schema.is_some() { "raw" } else { payload };
            let storage = storage_of(storage_options)?;
            let files = files_of(paths, &storage)?;
            let framing: Auto<Framing> = parse_name("framing", framing)?;
            let payload: Auto<PayloadKind> = parse_name("payload", payload)?;
            let policy: ErrorPolicy = parse_name("on_error", on_error)?;
            if index.is_some() && policy != ErrorPolicy::Fail {
                return Err(PyValueError::new_err(
                    "on_error='skip' indexes the files itself: it does not take index=",
                ));
            }
            let read = ReadOptions {
                check_length_crc: verify_crc,
                check_data_crc: verify_crc,
                policy,
                ..ReadOptions::default()
            };
            let options = OpenOptions::default()
                .with_framing(framing.get())
                .with_read(read)
                .with_storage(storage);
            if index.is_some() && files.len() > 1 {
                return Err(PyValueError::new_err("index= goes with a single file"));
            }
            let opened = py.detach(|| -> Result<CoreDataset, recordwire::Error> {
                match &index {
                    None => CoreDataset::open(&files, &options),
                    Some(ix) => Ok(CoreDataset::from_shards(vec![Shard::open_with(
                        &files[0],
                        &options,
                        Some(ix),
                    )?])),
                }
            });
            let mut inner = opened.map_err(|e| to_py(&e))?;
            // A payload named by the caller is theirs: no note on what the
            // records look like.
            let forced = payload.get().is_some();
            if let Some(p) = payload.get() {
                inner = inner.with_payload(p);
            }
            // Each shard's payload, detected now (from its first records),
            // with the GIL released.
            py.detach(|| {
                for s in inner.shards() {
                    s.payload();
                }
            });
            let payload = match inner.payload() {
                Ok(p) => p.unwrap_or(PayloadKind::Example),
                Err(_) => inner.shards()[0].payload(),
            };
            let mixed = inner.payload().is_err();
            let notes = if schema.is_some() {
                Vec::new()
            } else {
                py.detach(|| payload_notes(&inner, forced))
            };
            Ok(Dataset {
                notes,
                schema,
                views: ShardViews::new(py, &inner)?,
                inner: Arc::new(inner),
                payload,
                mixed,
                decoder: KeptDecoder::default(),
                spare: Mutex::new(Batch::new()),
                options,
            })
        })
    }

    /// The number of records.
    fn __len__(&self) -> usize {
        usize::try_from(self.inner.len()).unwrap_or(usize::MAX)
    }

    /// The payload kind records are read as (`example`, `sequence_example`,
    /// `ofrecord`, `raw`): that of every file, or, when files are read as
    /// different payloads (see `payloads`), the first file's.
    #[getter]
    fn payload(&self) -> &'static str {
        self.payload.name()
    }

    /// The payload kind of each file, in id order (each file's records are
    /// read as its own).
    #[getter]
    fn payloads(&self) -> Vec<&'static str> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.payload().name())
            .collect()
    }

    /// What opening with `on_error="skip"` passed over, in id order of the
    /// files: `(file, start, end, kind, message)` for each damaged byte range
    /// (offsets in the decompressed stream of a compressed file).
    #[getter]
    fn _skipped(&self) -> Vec<(String, u64, u64, &'static str, String)> {
        self.inner
            .shards()
            .iter()
            .flat_map(|s| {
                s.skipped().iter().map(|k| {
                    let error = match k.error.file() {
                        Some(_) => k.error.clone(),
                        None => k.error.clone().with_file(s.name_arc().clone()),
                    };
                    (
                        s.name().to_owned(),
                        k.start,
                        k.end,
                        k.error.kind().name(),
                        error.to_string(),
                    )
                })
            })
            .collect()
    }

    /// The spec inferred from every record, in id order (what `recordwire
    /// inspect --spec` prints for the same files), and the inference's notes
    /// (features left out). Every record is validated as its payload first;
    /// a record that is not a valid message raises, as in `inspect`.
    #[pyo3(signature = (ids=None))]
    fn _infer_spec(&self, py: Python<'_>, ids: Option<Vec<u64>>) -> PyResult<(Spec, Vec<String>)> {
        guard(|| {
            self.inferable()?;
            let payload = self.payload;
            if let Some(bad) = ids
                .as_ref()
                .and_then(|ids| ids.iter().find(|&&i| i >= self.inner.len()))
            {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "record {bad} of {}",
                    self.inner.len()
                )));
            }
            let inferred = py.detach(|| self.infer(payload, ids));
            let (spec, notes) = inferred.map_err(|e| to_py(&e))?;
            Ok((
                Spec {
                    inner: Arc::new(spec),
                },
                notes,
            ))
        })
    }

    /// The spec inferred from a sample of the records (`sample_runs`: runs
    /// of neighbours spread over every file, about `max_records` records
    /// and `max_bytes` bytes), made permissive where the sample cannot be
    /// sure (`SpecInference::finish_sample`) unless it held every record;
    /// with the notes, the records read, and whether that was all of them.
    /// The runs are read on up to 8 threads, with the GIL released.
    #[pyo3(signature = (max_records, max_bytes))]
    fn _infer_sample(
        &self,
        py: Python<'_>,
        max_records: u64,
        max_bytes: u64,
    ) -> PyResult<(Spec, Vec<String>, u64, bool)> {
        guard(|| {
            self.inferable()?;
            let lengths: Vec<(u64, u64)> = self
                .inner
                .shards()
                .iter()
                .map(|s| (s.len(), s.data_len()))
                .collect();
            let runs = recordwire::batch::sample_runs(&lengths, max_records, max_bytes);
            let read: u64 = runs.iter().map(|r| r.end - r.start).sum();
            let exact = read == self.inner.len();
            let payload = self.payload;
            let inferred = py.detach(|| self.infer_runs(payload, &runs, !exact));
            let (spec, notes) = inferred.map_err(|e| to_py(&e))?;
            Ok((
                Spec {
                    inner: Arc::new(spec),
                },
                notes,
                read,
                exact,
            ))
        })
    }

    /// The notes on the files' payloads (the CLI's, docs/FORMAT.md §9.5)
    /// from their first records: records that are not the message they are
    /// read as (and what they look like). Empty when nothing is to be said.
    #[getter]
    fn _payload_notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// Per file, in id order: its records and the bytes of its data
    /// (decompressed), known from the indexes.
    #[getter]
    fn _lengths(&self) -> Vec<(u64, u64)> {
        self.inner
            .shards()
            .iter()
            .map(|s| (s.len(), s.data_len()))
            .collect()
    }

    /// The files, in id order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    }

    /// The span size (`span_size` storage option) of its remote files read
    /// as stored, `None` when it has none: the page size at which a page
    /// order reads each span of them once.
    #[getter]
    fn span_size(&self) -> Option<u64> {
        self.inner.span_size()
    }

    /// The compression of each file (`none`, `gzip`, `zlib`), in id order.
    #[getter]
    fn compression(&self) -> Vec<&'static str> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.compression().name())
            .collect()
    }

    /// Whether each file is block-compressed (GZIP members of whole
    /// records: a read inflates one member).
    #[getter]
    fn block_compressed(&self) -> Vec<bool> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.gz_index().is_some_and(|g| g.is_block_compressed()))
            .collect()
    }

    /// Record `i`'s payload (CRCs checked as opened), as a read-only
    /// `memoryview`: of the file's memory map, or of the inflated span of a
    /// compressed file; no copy either way.
    fn raw<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let record = self.one(py, i)?;
            self.view(py, record)
        })
    }

    /// Record `i` as a dict: feature name to a numpy array (int64, float32,
    /// and OFRecord's int32/float64) or a list of `memoryview`s (bytes
    /// values: slices of the file, or of an inflated span, never copies); for a
    /// SequenceExample, the context features and `feature_lists`. A slice
    /// (`ds[10:20]`, `ds[::-1]`) gives a list of such dicts, read as
    /// `get_many` reads.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        i: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            if let Ok(slice) = i.cast::<PySlice>() {
                let len = isize::try_from(self.inner.len())
                    .map_err(|_| PyIndexError::new_err("the dataset is too large to slice"))?;
                let s = slice.indices(len)?;
                let ids: Vec<u64> = (0..s.slicelength)
                    .map(|k| (s.start + k as isize * s.step) as u64)
                    .collect();
                let records = py.detach(|| self.read_many(&ids)).map_err(|e| to_py(&e))?;
                let mut out = Vec::with_capacity(records.len());
                for record in &records {
                    out.push(self.dict_of(py, record)?);
                }
                return Ok(PyList::new(py, out)?.into_any());
            }
            let i: i64 = i.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a record index is an int or a slice, not {}",
                    i.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            let record = self.one(py, i)?;
            Ok(self.dict_of(py, &record)?.into_any())
        })
    }

    /// Record `i` as protobuf's JSON text, by the dataset's `message`
    /// schema (`MessageToJson` with `preserving_proto_field_name=True`,
    /// compact; `json_names`: the lowerCamelCase names; `print_defaults`:
    /// fields without presence at their defaults too).
    #[pyo3(signature = (i, *, json_names=false, print_defaults=false))]
    fn json(
        &self,
        py: Python<'_>,
        i: i64,
        json_names: bool,
        print_defaults: bool,
    ) -> PyResult<String> {
        guard(|| {
            let Some(schema) = &self.schema else {
                return Err(PyValueError::new_err(
                    "json(i) needs the records' message: Dataset(paths, message=recordwire.Schema...)",
                ));
            };
            let record = self.one(py, i)?;
            let r = record.as_record();
            crate::message::json_text(schema, r.data, r.data_offset, json_names, print_defaults)
                .map_err(|e| to_py(&r.context(e)))
        })
    }

    /// Records `ids` (in that order) by the `message` schema, one Arrow
    /// column per field path of `paths` (`""`: the whole message), one row
    /// per record, with the GIL released (`Dataset.decode(ids, paths)`).
    #[pyo3(signature = (ids, paths, *, enum_names=false))]
    fn _decode_paths(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        paths: Vec<String>,
        enum_names: bool,
    ) -> PyResult<crate::arrow::ArrowBatch> {
        guard(|| {
            let Some(schema) = &self.schema else {
                return Err(PyValueError::new_err(
                    "decode by field paths reads records as a message: Dataset(paths, message=recordwire.Schema...)",
                ));
            };
            let ids = self.ids(ids)?;
            let batch = py
                .detach(|| {
                    let records = self.read_many(&ids)?;
                    crate::schema_columns::decode_paths(schema, &paths, enum_names, &records)
                })
                .map_err(|e| to_py(&e))?;
            Ok(crate::arrow::ArrowBatch::from_batch(batch))
        })
    }

    /// The message records are read as (`message=`), or None.
    #[getter]
    fn message(&self) -> Option<crate::message::Schema> {
        self.schema
            .clone()
            .map(|inner| crate::message::Schema { inner })
    }

    /// Hints that records `ids` will be read soon: remote shards with a span
    /// cache (storage option `span_cache`) start fetching their spans in the
    /// background and this returns at once; for other files it does
    /// nothing. Call it with the next batch's ids before decoding this one.
    fn prefetch(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let ids = self.ids(ids)?;
            py.detach(|| self.inner.prefetch(&ids));
            Ok(())
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
            let records = py.detach(|| self.read_many(&ids)).map_err(|e| to_py(&e))?;
            let mut out = Vec::with_capacity(records.len());
            for record in records {
                out.push(if raw {
                    self.view(py, record)?
                } else {
                    self.dict_of(py, &record)?.into_any()
                });
            }
            PyList::new(py, out)
        })
    }

    /// Decodes records `ids` (in that order) by `spec` (a `Spec`, its JSON
    /// text, or that JSON parsed into a dict) on `threads` threads, with the
    /// GIL released: `(rows, context columns, sequence columns)`, each
    /// column a dict of its parts (see `recordwire/_columns.py`); with
    /// `arrow`, an `ArrowBatch` (the crate's Arrow mapping, see `arrow.rs`).
    #[pyo3(signature = (ids, spec, *, threads=1, arrow=false))]
    fn _decode<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        spec: &Bound<'py, PyAny>,
        threads: usize,
        arrow: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
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
            if self.mixed {
                let e = dataset.payload().err().map(|m| m.to_string());
                return Err(PyValueError::new_err(e.unwrap_or_default()));
            }
            // Records in memory are borrowed; those of compressed files are
            // read (each span inflated once) and decoded from their bytes.
            let owned = if dataset.all_in_memory() {
                Vec::new()
            } else {
                py.detach(|| self.read_many(&ids)).map_err(|e| to_py(&e))?
            };
            let records: Vec<Record<'_>> = owned.iter().map(OwnedRecord::as_record).collect();
            let mut batch: Batch<'_> = spare.unwrap_or_default().recycle();
            let decoded = py.detach(|| {
                if dataset.all_in_memory() {
                    decoder.decode_ids(dataset, &ids, spec_ref, &mut batch)
                } else {
                    decoder.decode(&records, spec_ref, &mut batch)
                }
            });
            // The columns go to numpy (or Arrow) only when the decode
            // succeeded; a borrowing column's numpy values are slices of
            // their record's buffer (Arrow gathers them into one buffer).
            let columns = match decoded {
                Ok(()) if arrow => crate::arrow::ArrowBatch::take(spec_ref, &mut batch)
                    .and_then(|b| Ok(Bound::new(py, b)?.into_any())),
                Ok(()) => {
                    // Only a borrowing bytes column needs its rows' buffers:
                    // locating each record's shard is skipped otherwise.
                    let borrows = spec_ref
                        .features()
                        .iter()
                        .chain(spec_ref.sequence())
                        .any(|f| f.borrow && f.dtype == recordwire::batch::DType::Bytes);
                    let rows = crate::columns::RowBuffers::new(if !borrows {
                        Vec::new()
                    } else if dataset.all_in_memory() {
                        ids.iter()
                            .map(|&id| RecordBuffer::new(self.views.of_record(dataset, id), None))
                            .collect()
                    } else {
                        owned
                            .iter()
                            .map(|r| {
                                RecordBuffer::new(
                                    self.views.of_record(dataset, r.id),
                                    Some(&r.data),
                                )
                            })
                            .collect()
                    });
                    crate::columns::to_py(py, &mut batch, &rows)
                        .and_then(|c| Ok(decoded_tuple(py, c)?.into_any()))
                }
                Err(e) => Err(to_py(&e)),
            };
            if let Ok(mut s) = self.spare.try_lock() {
                *s = batch.recycle();
            }
            columns
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
    /// `format` (`native`, `dali` or `lirs`); a compressed file gets its
    /// checkpoint index (native only), a checkpoint every `spacing` bytes of
    /// output. Returns what was written: `pathlib.Path`s, and URLs as `str`.
    #[pyo3(signature = (path=None, *, format="native", spacing=1048576))]
    fn write_index(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        format: &str,
        spacing: u64,
    ) -> PyResult<Vec<Py<PyAny>>> {
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
                if shard.is_compressed() && format != IndexFormat::Native {
                    return Err(PyValueError::new_err(format!(
                        "{}: a compressed file's index is a checkpoint index (native)",
                        shard.name()
                    )));
                }
                let target = match &path {
                    Some(p) => p.clone(),
                    None => {
                        if format != IndexFormat::Native {
                            return Err(PyValueError::new_err(
                                "the sidecar index is native: give path= for dali or lirs",
                            ));
                        }
                        recordwire::index::sidecar_path(Path::new(shard.name()))
                    }
                };
                let done =
                    py.detach(|| write_index(shard, &target, format, spacing, &self.options));
                done.map_err(|e| to_py(&e))?;
                // A URL stays a string (a `pathlib.Path` would fold its `//`).
                let item = match target.to_str() {
                    Some(url) if recordwire::io::remote::is_remote(url) => {
                        url.into_pyobject(py)?.into_any().unbind()
                    }
                    _ => target.into_pyobject(py)?.into_any().unbind(),
                };
                written.push(item);
            }
            Ok(written)
        })
    }

    fn __repr__(&self) -> String {
        let (records, files) = (self.inner.len(), self.inner.shards().len());
        format!(
            "recordwire.Dataset({records} record{} in {files} file{}, payload {})",
            if records == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" },
            if self.mixed {
                "mixed"
            } else {
                self.payload.name()
            }
        )
    }
}

/// Writes the index of `shard` to `target`: a compressed file's checkpoint
/// index (rebuilt at `spacing`), a plain file's index in `format`.
fn write_index(
    shard: &Shard,
    target: &Path,
    format: IndexFormat,
    spacing: u64,
    options: &OpenOptions,
) -> Result<(), recordwire::Error> {
    if let Some(gz) = shard.gz_source() {
        let compressed = gz.compressed();
        let data = compressed.read_range(0..compressed.len())?;
        let index = GzIndex::build(
            &data,
            gz.index().compression(),
            shard.framing(),
            spacing,
            true,
        )
        .map_err(|e| e.with_file(shard.name()))?;
        let mut out = Vec::new();
        index.write_native(&mut out).map_err(|e| {
            recordwire::Error::io(e).with_file(target.display().to_string().as_str())
        })?;
        return recordwire::io::write_whole(target, out, options);
    }
    let data = match shard.bytes() {
        Some(b) => b.clone(),
        None => shard.source().read_range(0..shard.data_len())?,
    };
    let mut out = Vec::new();
    shard.index().write_as(format, &data, &mut out)?;
    recordwire::io::write_whole(target, out, options)
}

impl Dataset {
    /// Whether a spec can be inferred: one payload over every file, and
    /// not raw bytes.
    fn inferable(&self) -> PyResult<()> {
        if self.mixed {
            let e = self.inner.payload().err().map(|m| m.to_string());
            return Err(PyValueError::new_err(e.unwrap_or_default()));
        }
        if self.payload == PayloadKind::Raw {
            return Err(PyValueError::new_err(format!(
                "{}: a spec reads example, sequence_example or ofrecord payloads, not raw bytes; name one with payload=",
                self.inner.shards().first().map(|s| s.name()).unwrap_or_default()
            )));
        }
        Ok(())
    }

    /// The spec of the records of `runs` (ranges of ids), read on up to 8
    /// threads (a run a read: one request for a remote file), added to the
    /// inference in id order; `sample`: made permissive
    /// (`SpecInference::finish_sample`).
    fn infer_runs(
        &self,
        payload: PayloadKind,
        runs: &[std::ops::Range<u64>],
        sample: bool,
    ) -> Result<(recordwire::batch::Spec, Vec<String>), recordwire::Error> {
        const THREADS: usize = 8;
        let threads = runs.len().clamp(1, THREADS);
        let mut read: Vec<Option<Result<Vec<OwnedRecord>, recordwire::Error>>> =
            (0..runs.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            let mut slots: Vec<Vec<(usize, &mut Option<_>)>> =
                (0..threads).map(|_| Vec::new()).collect();
            for (k, slot) in read.iter_mut().enumerate() {
                slots[k % threads].push((k, slot));
            }
            for part in slots {
                scope.spawn(move || {
                    for (k, slot) in part {
                        let ids: Vec<u64> = runs[k].clone().collect();
                        *slot = Some(self.read_many(&ids));
                    }
                });
            }
        });
        let options = recordwire::view::DecodeOptions::default();
        let mut inference = recordwire::batch::SpecInference::new(payload);
        for records in read.into_iter().flatten() {
            for record in records? {
                let r = payload
                    .validate(&record.data, record.data_offset, options)
                    .and_then(|()| inference.add(&record.data, record.data_offset));
                if let Err(e) = r {
                    return Err(self.located(record.context(e), record.id));
                }
            }
        }
        Ok(if sample {
            inference.finish_sample()
        } else {
            inference.finish()
        })
    }

    /// `e` (of record `id`) with its file's name, when it has none.
    fn located(&self, e: recordwire::Error, id: u64) -> recordwire::Error {
        let name = self
            .inner
            .locate(id)
            .map(|(k, _)| self.inner.shards()[k].name_arc().clone());
        match (e.file(), name) {
            (None, Some(name)) => e.with_file(name),
            _ => e,
        }
    }

    /// Infers the spec of every record (read `payload`), in id order, read
    /// in chunks (each in file order: a compressed span inflated once).
    /// The spec of the records `ids` (all, in id order, when `None`).
    fn infer(
        &self,
        payload: PayloadKind,
        ids: Option<Vec<u64>>,
    ) -> Result<(recordwire::batch::Spec, Vec<String>), recordwire::Error> {
        const CHUNK: usize = 4096;
        let options = recordwire::view::DecodeOptions::default();
        let mut inference = recordwire::batch::SpecInference::new(payload);
        let len = self.inner.len();
        let all: Vec<u64>;
        let ids = match &ids {
            Some(ids) => ids.as_slice(),
            None => {
                all = (0..len).collect();
                all.as_slice()
            }
        };
        for chunk in ids.chunks(CHUNK) {
            for record in self.read_many(chunk)? {
                let r = payload
                    .validate(&record.data, record.data_offset, options)
                    .and_then(|()| inference.add(&record.data, record.data_offset));
                if let Err(e) = r {
                    let e = record.context(e);
                    let name = self
                        .inner
                        .locate(record.id)
                        .map(|(k, _)| self.inner.shards()[k].name_arc().clone());
                    return Err(match (e.file(), name) {
                        (None, Some(name)) => e.with_file(name),
                        _ => e,
                    });
                }
            }
        }
        Ok(inference.finish())
    }

    /// Record `i` (a Python id, negative from the end); read with the GIL
    /// released when its file is not in memory.
    fn one(&self, py: Python<'_>, i: i64) -> PyResult<OwnedRecord> {
        let id = record_id(i, self.inner.len())?;
        // A record in memory is a slice (well under a microsecond): the GIL
        // is released only where a read may inflate or wait on I/O.
        let in_memory = self
            .inner
            .locate(id)
            .is_some_and(|(k, _)| self.inner.shards()[k].bytes().is_some());
        let record = if in_memory {
            self.inner.get(id)
        } else {
            py.detach(|| self.inner.get(id))
        };
        let record = record.map_err(|e| to_py(&e))?;
        record.ok_or_else(|| PyIndexError::new_err("record out of range"))
    }

    /// Records `ids`, read shard by shard in offset order (each page or
    /// span read once), in request order.
    fn read_many(&self, ids: &[u64]) -> Result<Vec<OwnedRecord>, recordwire::Error> {
        let mut slots: Vec<Option<OwnedRecord>> = vec![None; ids.len()];
        let mut scratch = Scratch::new();
        self.inner
            .get_many(ids, &mut scratch, |pos, r| slots[pos] = r)?;
        Ok(slots.into_iter().flatten().collect())
    }

    /// The payload record `id` is read as: its shard's.
    fn payload_of(&self, id: u64) -> PayloadKind {
        match self.inner.locate(id) {
            Some((k, _)) if self.mixed => self.inner.shards()[k].payload(),
            _ => self.payload,
        }
    }

    /// Where `record`'s parts are handed out from: its file's view when the
    /// file is in memory, else its own bytes (a share of an inflated span).
    /// A record as `ds[i]` gives it: by the `message` schema, else as its
    /// payload.
    fn dict_of<'py>(&self, py: Python<'py>, record: &OwnedRecord) -> PyResult<Bound<'py, PyDict>> {
        let buffer = self.buffer_of(record);
        match &self.schema {
            Some(schema) => crate::message::record_dict(py, schema, &record.as_record(), &buffer),
            None => {
                crate::record::to_dict(py, &record.as_record(), self.payload_of(record.id), &buffer)
            }
        }
    }

    fn buffer_of<'a>(&'a self, record: &'a OwnedRecord) -> RecordBuffer<'a> {
        RecordBuffer::new(
            self.views.of_record(&self.inner, record.id),
            Some(&record.data),
        )
    }

    /// A read-only `memoryview` of a record's payload: a slice of its file's
    /// view when the file is in memory, else a view of the record's own
    /// bytes (a share of an inflated span); never a copy.
    fn view<'py>(&self, py: Python<'py>, record: OwnedRecord) -> PyResult<Bound<'py, PyAny>> {
        match self.views.of_record(&self.inner, record.id) {
            Some(view) => view.slice(py, &record.data),
            None => Ok(crate::buffers::memoryview_of(py, record.data)?.into_any()),
        }
    }

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
