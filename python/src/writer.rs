//! `recordwire._native.Writer`: records written atomically (a temporary file
//! renamed over the target when closed), from dicts of numpy arrays, bytes
//! and lists, or from encoded payloads.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;

use numpy::{PyArrayDescrMethods, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple,
};
use recordwire::encode::{
    output_compression, output_framing, Example, Feature, Features, OfRecord, RecordWriter,
    WriterOptions,
};
use recordwire::frame::Framing;
use recordwire::io::Compression;
use recordwire::view::PayloadKind;

use crate::errors::{from_io, guard, new_error};

/// A record file being written.
#[pyclass(frozen, module = "recordwire._native")]
pub struct Writer {
    path: PathBuf,
    framing: Framing,
    payload: PayloadKind,
    compression: Compression,
    /// The file being written (`None` once closed) and the buffer each
    /// record is encoded into, under one lock.
    inner: Mutex<(Option<RecordWriter<File>>, Vec<u8>)>,
}

fn io_error(py: Python<'_>, path: &std::path::Path, e: std::io::Error) -> PyErr {
    from_io(py, &e, Some(&path.display().to_string()))
}

/// The bytes of a bytes-like value (`bytes`, `bytearray`, `memoryview`, or
/// `str` as UTF-8), if it is one.
fn bytes_like(v: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Some(s.to_cow()?.as_bytes().to_vec()));
    }
    if v.is_instance_of::<PyByteArray>() || v.is_instance_of::<PyMemoryView>() {
        let b = v.py().get_type::<PyBytes>().call1((v,))?;
        return Ok(Some(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// A numpy array as a feature: int64 (other integer types widened), float32
/// (float64 in an OFRecord stays float64; in an Example it becomes float32,
/// as TensorFlow's `float_list` is), OFRecord int32, bytes (`S` or object
/// arrays of bytes). Flattened in C order.
fn array_feature(a: &Bound<'_, PyUntypedArray>, ofrecord: bool) -> PyResult<Feature> {
    let kind = a.dtype().kind();
    let flat = a.call_method0("ravel")?;
    let as_type = |t: &str| flat.call_method1("astype", (t,));
    Ok(match kind {
        b'b' | b'i' | b'u' => {
            let size = a.dtype().itemsize();
            if ofrecord && kind == b'i' && size <= 4 {
                let v = as_type("<i4")?;
                let r: PyReadonlyArrayDyn<'_, i32> = v.extract()?;
                Feature::Int32(r.as_array().iter().copied().collect())
            } else {
                let v = as_type("<i8")?;
                let r: PyReadonlyArrayDyn<'_, i64> = v.extract()?;
                Feature::Int64(r.as_array().iter().copied().collect())
            }
        }
        b'f' => {
            if ofrecord && a.dtype().itemsize() == 8 {
                let r: PyReadonlyArrayDyn<'_, f64> = as_type("<f8")?.extract()?;
                Feature::Double(r.as_array().iter().copied().collect())
            } else {
                let r: PyReadonlyArrayDyn<'_, f32> = as_type("<f4")?.extract()?;
                Feature::Float(r.as_array().iter().copied().collect())
            }
        }
        b'S' | b'O' | b'U' => {
            let items = flat.call_method0("tolist")?;
            list_feature(items.cast::<PyList>()?)?
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
                "a numpy array of dtype {} is not a feature (int, float or bytes)",
                a.dtype()
            )))
        }
    })
}

/// A list of values as a feature: all bytes-like -> bytes; all ints -> int64;
/// numbers with a float among them -> float32. An empty list is a feature
/// with no kind (give an empty numpy array for a typed empty list).
fn list_feature(items: &Bound<'_, PyList>) -> PyResult<Feature> {
    if items.is_empty() {
        return Ok(Feature::None);
    }
    let first = items.get_item(0)?;
    if bytes_like(&first)?.is_some() {
        let mut out = Vec::with_capacity(items.len());
        for v in items.iter() {
            out.push(
                bytes_like(&v)?
                    .ok_or_else(|| PyTypeError::new_err("a list mixes bytes with other values"))?,
            );
        }
        return Ok(Feature::Bytes(out));
    }
    if items.iter().all(|v| v.is_instance_of::<PyInt>()) {
        return Ok(Feature::Int64(items.extract()?));
    }
    if items
        .iter()
        .all(|v| v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>())
    {
        return Ok(Feature::Float(items.extract()?));
    }
    Err(PyTypeError::new_err(
        "a list feature holds bytes/str, ints, or numbers",
    ))
}

/// One value of a record dict as a feature.
fn feature_of(v: &Bound<'_, PyAny>, ofrecord: bool) -> PyResult<Feature> {
    if v.is_none() {
        return Ok(Feature::None);
    }
    if let Ok(a) = v.cast::<PyUntypedArray>() {
        return array_feature(a, ofrecord);
    }
    if let Some(b) = bytes_like(v)? {
        return Ok(Feature::Bytes(vec![b]));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Feature::Int64(vec![v.extract()?]));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Feature::Float(vec![v.extract()?]));
    }
    if let Ok(l) = v.cast::<PyList>() {
        return list_feature(l);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        return list_feature(&t.to_list());
    }
    // A numpy scalar that is not a Python int or float already
    // (`np.float32(1.5)`, `np.int64(3)`, `np.bool_`: a value taken out of an
    // array) is the one-value array it came from, dtype and all.
    let numpy = v.py().import("numpy")?;
    if v.is_instance(&numpy.getattr("generic")?)? {
        let a = numpy.call_method1("asarray", (v,))?;
        return array_feature(a.cast::<PyUntypedArray>()?, ofrecord);
    }
    Err(PyTypeError::new_err(format!(
        "a feature value is a numpy array or scalar, bytes, str, int, float or a list of them, not {}",
        v.get_type().name()?
    )))
}

/// A record dict (name -> value) as features, in the dict's order.
fn features_of(d: &Bound<'_, PyDict>, ofrecord: bool) -> PyResult<Features> {
    let mut features = Features::new();
    for (k, v) in d.iter() {
        let name = bytes_like(&k)?
            .ok_or_else(|| PyTypeError::new_err("a feature name is a str or bytes"))?;
        let f = feature_of(&v, ofrecord)
            .map_err(|e| PyTypeError::new_err(format!("feature {k}: {e}")))?;
        features.insert(name, f);
    }
    Ok(features)
}

#[pymethods]
impl Writer {
    /// Opens `path` for writing (to a temporary file beside it, renamed over
    /// it by `close`). Framing, payload and compression come from the name
    /// as the command line's `pack` takes them, unless named: `.gz`/`.zlib`
    /// compress, `x.ofrecord`/`part-N` are OFRecord (of OFRecord payloads),
    /// anything else TFRecord of tf.Example; a payload that contradicts the
    /// name's framing is refused. `gzip_blocks=N`: block-compressed GZIP, a
    /// member of whole records every N bytes or so (sets the compression to
    /// gzip).
    #[new]
    #[pyo3(signature = (path, *, framing=None, payload=None, compression=None, gzip_blocks=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        framing: Option<&str>,
        payload: Option<&str>,
        compression: Option<&str>,
        gzip_blocks: Option<u64>,
    ) -> PyResult<Self> {
        guard(|| {
            let framing: Option<Framing> = framing
                .map(str::parse)
                .transpose()
                .map_err(|e| PyValueError::new_err(format!("framing: {e}")))?;
            let payload: Option<PayloadKind> = payload
                .map(str::parse)
                .transpose()
                .map_err(|e| PyValueError::new_err(format!("payload: {e}")))?;
            let framing = output_framing(framing, payload, &path, || match payload {
                Some(PayloadKind::OfRecord) => Framing::OfRecord,
                _ => Framing::TfRecord,
            })
            .map_err(|c| PyValueError::new_err(c.message("framing=")))?;
            let payload = payload.unwrap_or(match framing {
                Framing::OfRecord => PayloadKind::OfRecord,
                Framing::TfRecord => PayloadKind::Example,
            });
            if (framing == Framing::OfRecord) != (payload == PayloadKind::OfRecord)
                && payload != PayloadKind::Raw
            {
                return Err(PyValueError::new_err(
                    "payload ofrecord goes with framing ofrecord, and the other payloads with tfrecord",
                ));
            }
            let (options, compression) = writer_options(framing, compression, gzip_blocks, &path)?;
            let w = RecordWriter::create(&path, options).map_err(|e| io_error(py, &path, e))?;
            Ok(Writer {
                path,
                framing,
                payload,
                compression,
                inner: Mutex::new((Some(w), Vec::new())),
            })
        })
    }

    /// The framing written (`"tfrecord"` or `"ofrecord"`): the one named, or
    /// the one the file name chose.
    #[getter]
    fn framing(&self) -> &'static str {
        self.framing.name()
    }

    /// The payload written (`"example"`, `"sequence_example"`, `"ofrecord"`
    /// or `"raw"`): the one named, or the framing's own.
    #[getter]
    fn payload(&self) -> &'static str {
        self.payload.name()
    }

    /// The compression written (`"none"`, `"gzip"` or `"zlib"`): the one
    /// named, or the one the file name's suffix chose.
    #[getter]
    fn compression(&self) -> &'static str {
        self.compression.name()
    }

    /// Writes one record: a dict name -> value (numpy array, bytes, str,
    /// int, float, or a list of them) for `example` and `ofrecord` payloads,
    /// or the encoded payload as bytes (any payload, `raw` included).
    fn write(&self, py: Python<'_>, record: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let mut state = self.inner.lock().map_err(|_| poisoned())?;
            let (writer, scratch) = &mut *state;
            scratch.clear();
            if let Ok(d) = record.cast::<PyDict>() {
                let ofrecord = self.payload == PayloadKind::OfRecord;
                let features = features_of(d, ofrecord)?;
                let encoded = match self.payload {
                    PayloadKind::Example => {
                        Example::with_features(features).encode_to(&mut *scratch)
                    }
                    PayloadKind::OfRecord => {
                        OfRecord::with_features(features).encode_to(&mut *scratch)
                    }
                    other => {
                        return Err(PyTypeError::new_err(format!(
                            "a {} record is written as its encoded bytes",
                            other.name()
                        )))
                    }
                };
                encoded
                    .map_err(|e| new_error(py, "encode_error", e.to_string(), None, None, None))?;
            } else if let Some(b) = bytes_like(record)? {
                scratch.extend_from_slice(&b);
            } else {
                return Err(PyTypeError::new_err(
                    "a record is a dict of features or its encoded bytes",
                ));
            }
            let w = writer
                .as_mut()
                .ok_or_else(|| PyValueError::new_err("the writer is closed"))?;
            w.write_record(scratch)
                .map_err(|e| io_error(py, &self.path, e))
        })
    }

    /// The number of records written.
    #[getter]
    fn records(&self) -> PyResult<u64> {
        let inner = self.inner.lock().map_err(|_| poisoned())?;
        Ok(inner.0.as_ref().map_or(0, |w| w.records()))
    }

    /// Finishes the file: flushes, ends the compressed stream, syncs, and
    /// renames it over the target. Closing twice is a no-op.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        guard(|| {
            let w = self.inner.lock().map_err(|_| poisoned())?.0.take();
            if let Some(w) = w {
                w.finish().map_err(|e| io_error(py, &self.path, e))?;
            }
            Ok(())
        })
    }

    /// Drops the file being written: the target is left as it was.
    fn abort(&self) -> PyResult<()> {
        let w = self.inner.lock().map_err(|_| poisoned())?.0.take();
        drop(w);
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the file, or, when the block raised, drops it (the target is
    /// left as it was).
    #[pyo3(signature = (exc_type=None, exc=None, tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        exc: Option<&Bound<'_, PyAny>>,
        tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        // The exception's type says whether the block raised; its value and
        // traceback (named as Python names them) are not needed.
        let _ = (exc, tb);
        if exc_type.is_some_and(|t| !t.is_none()) {
            self.abort()?;
        } else {
            self.close(py)?;
        }
        Ok(false)
    }

    /// The target path.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }
}

/// The options of a writer of `framing` to `path`: `compression` named
/// (`none`, `gzip`, `zlib`) or taken from the name, `gzip_blocks` for
/// block-compressed GZIP; and the compression that makes.
pub(crate) fn writer_options(
    framing: Framing,
    compression: Option<&str>,
    gzip_blocks: Option<u64>,
    path: &std::path::Path,
) -> PyResult<(WriterOptions, Compression)> {
    let compression: Option<Compression> = compression
        .map(str::parse)
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("compression: {e}")))?;
    if compression == Some(Compression::Auto) {
        return Err(PyValueError::new_err(
            "compression: none, gzip or zlib (auto is for reading)",
        ));
    }
    let compression = match (gzip_blocks, output_compression(compression, path)) {
        (Some(_), Compression::Zlib) => {
            return Err(PyValueError::new_err(
                "gzip_blocks writes GZIP members: not with zlib compression",
            ))
        }
        (Some(_), _) => Compression::Gzip,
        (None, c) => c,
    };
    let mut options = WriterOptions::new(framing).with_compression(compression);
    if let Some(n) = gzip_blocks {
        options = options.with_gzip_blocks(n);
    }
    Ok((options, compression))
}

fn poisoned() -> PyErr {
    PyValueError::new_err("the writer failed in another thread")
}

/// A writer dropped without `close()` (or a `with` block) writes nothing:
/// its temporary file is removed and the target left as it was, as ever;
/// and, as Python's own files do, it says so with a `ResourceWarning`
/// naming the path and the records lost.
impl Drop for Writer {
    fn drop(&mut self) {
        let open = self.inner.get_mut().ok().and_then(|(w, _)| w.take());
        let Some(w) = open else {
            return;
        };
        let records = w.records();
        drop(w);
        let message = format!(
            "recordwire.Writer('{}') was dropped without close(): its {records} record{} \
             were not written and the file is left as it was (close it, or write in a \
             `with Writer(...) as w:` block)",
            self.path.display(),
            if records == 1 { "" } else { "s" },
        );
        let _ = Python::try_attach(|py| {
            let category = py.get_type::<pyo3::exceptions::PyResourceWarning>();
            let Ok(message) = std::ffi::CString::new(message) else {
                return;
            };
            if let Err(e) = PyErr::warn(py, category.as_any(), &message, 1) {
                // Warnings turned into errors cannot propagate from a
                // finalizer: Python reports them as unraisable.
                e.write_unraisable(py, None);
            }
        });
    }
}
