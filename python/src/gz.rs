//! `recordwire.GzDataset`: GZIP/ZLIB record files read by id through their
//! checkpoint indexes, never decompressed whole.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use recordwire::batch::Batch;
use recordwire::frame::{Framing, ReadOptions, Record};
use recordwire::index::{sidecar_path, GzCaches, GzDataset as CoreGzDataset, GzIndex};
use recordwire::io::OpenOptions;
use recordwire::names::Auto;
use recordwire::view::{detect_payload, PayloadKind};

use crate::buffers::Maps;
use crate::dataset::{decoded_tuple, files_of, parse_name, record_id, KeptDecoder};
use crate::errors::{guard, to_py};
use crate::order::{order_spec, Order};
use crate::spec::spec_of;

/// Records of GZIP- or ZLIB-compressed TFRecord/OFRecord files as one id
/// space, each file read through its checkpoint index (its sidecar when
/// current, else built while opening): a record is inflated from the
/// nearest checkpoint, not from the start of the file.
///
/// Subclassed by the pure-Python `recordwire.GzDataset`.
#[pyclass(frozen, subclass, module = "recordwire._native")]
pub struct GzDataset {
    inner: CoreGzDataset,
    payload: PayloadKind,
    /// The inflate caches (reads in file order continue them).
    caches: Mutex<GzCaches>,
    /// Values are copied out of the inflated spans: no map to slice.
    maps: Maps,
    decoder: KeptDecoder,
}

/// One record copied out of its span: payload in `arena[start..end]`.
struct Copied {
    id: u64,
    offset: u64,
    data_offset: u64,
    end_offset: u64,
    start: usize,
    end: usize,
}

impl GzDataset {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    /// Python ids (negative from the end) as record ids.
    fn ids(&self, ids: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let len = self.len();
        let ids: Vec<i64> = match ids.extract::<numpy::PyReadonlyArray1<'_, i64>>() {
            Ok(a) => a.as_array().to_vec(),
            Err(_) => ids.extract()?,
        };
        ids.into_iter().map(|i| record_id(i, len)).collect()
    }

    /// Records `ids` (global), read in offset order shard by shard, copied
    /// into `arena`; returned in request order.
    fn copy_out(&self, ids: &[u64], arena: &mut Vec<u8>) -> Result<Vec<Copied>, recordwire::Error> {
        let mut caches = self
            .caches
            .lock()
            .map_err(|_| recordwire::Error::io(std::io::Error::other("a read panicked")))?;
        let mut slots: Vec<Option<Copied>> = (0..ids.len()).map(|_| None).collect();
        let mut scratch = Vec::new();
        self.inner
            .get_many(ids, &mut caches, &mut scratch, |pos, r| {
                if let Some(r) = r {
                    let start = arena.len();
                    arena.extend_from_slice(r.data);
                    slots[pos] = Some(Copied {
                        id: r.id,
                        offset: r.offset,
                        data_offset: r.data_offset,
                        end_offset: r.end,
                        start,
                        end: arena.len(),
                    });
                }
            })?;
        Ok(slots.into_iter().flatten().collect())
    }

    /// Record `i` (a Python id, negative from the end), copied into `arena`
    /// with the GIL released.
    fn one(&self, py: Python<'_>, i: i64, arena: &mut Vec<u8>) -> PyResult<Copied> {
        let id = record_id(i, self.len())?;
        let got = py
            .detach(|| self.copy_out(&[id], arena))
            .map_err(|e| to_py(&e))?;
        got.into_iter()
            .next()
            .ok_or_else(|| PyValueError::new_err("record missing"))
    }

    fn record<'a>(&'a self, c: &Copied, arena: &'a [u8]) -> Record<'a> {
        Record {
            id: c.id,
            offset: c.offset,
            data_offset: c.data_offset,
            end: c.end_offset,
            data: &arena[c.start..c.end],
            file: self
                .inner
                .locate(c.id)
                .map(|(k, _)| self.inner.shards()[k].name_arc()),
        }
    }
}

#[pymethods]
impl GzDataset {
    #[new]
    #[pyo3(signature = (paths, *, framing="auto", payload="auto", verify_crc=true))]
    fn new(
        py: Python<'_>,
        paths: &Bound<'_, PyAny>,
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
            let inner = py
                .detach(|| CoreGzDataset::open(&files, &options))
                .map_err(|e| to_py(&e))?;
            let mut ds = GzDataset {
                inner,
                payload: PayloadKind::Example,
                caches: Mutex::new(GzCaches::default()),
                maps: Maps::empty(),
                decoder: KeptDecoder::default(),
            };
            ds.payload = match payload.get() {
                Some(p) => p,
                None => ds.detect()?,
            };
            Ok(ds)
        })
    }

    /// The number of records.
    fn __len__(&self) -> usize {
        usize::try_from(self.len()).unwrap_or(usize::MAX)
    }

    /// The payload kind of the records.
    #[getter]
    fn payload(&self) -> &'static str {
        self.payload.name()
    }

    /// The file names, in id order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    }

    /// Whether each file is block-compressed (GZIP members of whole
    /// records: a read inflates one member).
    #[getter]
    fn block_compressed(&self) -> Vec<bool> {
        self.inner
            .shards()
            .iter()
            .map(|s| s.index().is_block_compressed())
            .collect()
    }

    /// The payload of record `i` as `bytes` (inflated, so copied).
    fn raw<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            let mut arena = Vec::new();
            let c = self.one(py, i, &mut arena)?;
            Ok(PyBytes::new(py, &arena[c.start..c.end]))
        })
    }

    /// Record `i` as a dict, as `Dataset.__getitem__` gives it (bytes values
    /// are `memoryview`s of copies).
    fn __getitem__<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let mut arena = Vec::new();
            let c = self.one(py, i, &mut arena)?;
            crate::record::to_dict(py, &self.record(&c, &arena), self.payload, &self.maps)
        })
    }

    /// Records `ids`, read in offset order (each checkpoint span inflated
    /// once), returned in request order: dicts, or payloads as `bytes` with
    /// `raw=True`.
    #[pyo3(signature = (ids, *, raw=false))]
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        raw: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let ids = self.ids(ids)?;
            let mut arena = Vec::new();
            let got = py
                .detach(|| self.copy_out(&ids, &mut arena))
                .map_err(|e| to_py(&e))?;
            let mut out = Vec::with_capacity(got.len());
            for c in &got {
                out.push(if raw {
                    PyBytes::new(py, &arena[c.start..c.end]).into_any()
                } else {
                    crate::record::to_dict(py, &self.record(c, &arena), self.payload, &self.maps)?
                        .into_any()
                });
            }
            PyList::new(py, out)
        })
    }

    /// Decodes records `ids` by `spec` (see `recordwire.Dataset.decode`):
    /// the records are inflated (offset order), then decoded with the GIL
    /// released.
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
            let spec_ref: &recordwire::batch::Spec = &spec;
            let mut arena = Vec::new();
            let mut batch: Batch<'_> = Batch::new();
            let decoded = py.detach(|| -> Result<(), recordwire::Error> {
                let got = self.copy_out(&ids, &mut arena)?;
                let records: Vec<Record<'_>> = got.iter().map(|c| self.record(c, &arena)).collect();
                decoder.decode(&records, spec_ref, &mut batch)
            });
            match decoded {
                Ok(()) => decoded_tuple(py, crate::columns::to_py(py, &mut batch, &self.maps)?),
                Err(e) => Err(to_py(&e)),
            }
        })
    }

    /// One worker's epoch orders (see `recordwire.Dataset.order`); the page
    /// modes group records by pages of the decompressed streams, or, with a
    /// page size of 0, by checkpoint span (each inflated once per window).
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
            let order = py
                .detach(|| self.inner.order(spec))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok(Order::new(order))
        })
    }

    /// Writes each file's checkpoint index beside it (`<file>.rwindex`,
    /// what opening uses), a checkpoint every `spacing` bytes of output.
    /// Returns the paths written.
    // The default spelled out for the text signature (PyO3 shows a constant
    // as `...`); `_SPACING_IN_SIGNATURE` checks that it is the constant.
    #[pyo3(signature = (*, spacing=recordwire::index::DEFAULT_SPACING), text_signature = "($self, *, spacing=1048576)")]
    fn write_index(&self, py: Python<'_>, spacing: u64) -> PyResult<Vec<PathBuf>> {
        guard(|| {
            py.detach(|| {
                let mut written = Vec::new();
                for s in self.inner.shards() {
                    let index = GzIndex::build(
                        s.compressed(),
                        s.index().compression(),
                        s.framing(),
                        spacing,
                        true,
                    )?;
                    let path = sidecar_path(std::path::Path::new(s.name()));
                    index.write_native_file(&path)?;
                    written.push(path);
                }
                Ok(written)
            })
            .map_err(|e: recordwire::Error| to_py(&e))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "GzDataset({} records in {} files, payload {})",
            self.len(),
            self.inner.shards().len(),
            self.payload.name()
        )
    }
}

/// `write_index`'s default spacing as its text signature gives it.
const _SPACING_IN_SIGNATURE: () = assert!(recordwire::index::DEFAULT_SPACING == 1_048_576);

impl GzDataset {
    /// The payload kind, sniffed from the first records of the first
    /// non-empty file (OFRecord framing holds OFRecords).
    fn detect(&self) -> PyResult<PayloadKind> {
        let shards = self.inner.shards();
        let Some(k) = shards.iter().position(|s| !s.is_empty()) else {
            return Ok(PayloadKind::Example);
        };
        if shards[k].framing() == Framing::OfRecord {
            return Ok(PayloadKind::OfRecord);
        }
        let base: u64 = shards[..k].iter().map(|s| s.len()).sum();
        let ids: Vec<u64> = (0..shards[k].len().min(64)).map(|i| base + i).collect();
        let mut arena = Vec::new();
        let got = self.copy_out(&ids, &mut arena).map_err(|e| to_py(&e))?;
        Ok(detect_payload(got.iter().map(|c| &arena[c.start..c.end])))
    }
}
