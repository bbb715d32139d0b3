//! Zero-copy views for Python: a file's bytes (its memory map) or a
//! record's (a share of an inflated span) as `memoryview`s, and decoded
//! buffers handed to numpy.
//!
//! A buffer's bytes are exposed through numpy's array interface
//! ([`FileBytes`]; the buffer protocol itself needs Python 3.11 under the
//! stable ABI, and the package supports 3.9): numpy keeps the `FileBytes`
//! object as the array's base, so the array, the `memoryview` over it and
//! every slice of that view keep the bytes alive, whatever happens to the
//! `Dataset` they came from. A record or value is then a slice of the view
//! of the buffer it was read from (its shard's, or its record's), known
//! from where it was read: no copy, no address search, and no `unsafe`
//! here (numpy reads the address and length we give it, which stay valid
//! while the object lives, because `Bytes` never moves or frees its data
//! while a clone of it is held).

use bytes::Bytes;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyMemoryView, PySlice};
use recordwire::batch::AlignedBuf;
use recordwire::dataset::Dataset as CoreDataset;

/// The bytes of one data file, kept alive for the views of it.
#[pyclass(frozen, module = "recordwire._native")]
pub struct FileBytes {
    bytes: Bytes,
}

#[pymethods]
impl FileBytes {
    /// numpy's array interface (version 3): a read-only `uint8` array of the
    /// file's bytes.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (self.bytes.len(),))?;
        d.set_item("typestr", "|u1")?;
        d.set_item("data", (self.bytes.as_ptr() as usize, true))?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.bytes.len()
    }
}

/// A read-only `memoryview` of one buffer (a file's bytes, or a record's),
/// from which parts of the buffer are handed out as slices: the buffer
/// each part lies in is known from where it was read (its shard, its
/// record), never looked up by address.
pub struct BufferView {
    start: usize,
    len: usize,
    view: Py<PyMemoryView>,
}

/// A read-only `memoryview` of `bytes`, without copying them.
pub fn memoryview_of<'py>(py: Python<'py>, bytes: Bytes) -> PyResult<Bound<'py, PyMemoryView>> {
    let holder = Bound::new(py, FileBytes { bytes })?;
    let array = py.import("numpy")?.call_method1("asarray", (holder,))?;
    PyMemoryView::from(&array)
}

impl BufferView {
    /// A view of `bytes` (which it keeps alive).
    pub fn new(py: Python<'_>, bytes: Bytes) -> PyResult<BufferView> {
        let (start, len) = (bytes.as_ptr() as usize, bytes.len());
        Ok(BufferView {
            start,
            len,
            view: memoryview_of(py, bytes)?.unbind(),
        })
    }

    /// `part` (of this buffer) as a slice of the view; bytes that are not
    /// a part of it (a spec's default value) as a `memoryview` of a copy.
    pub fn slice<'py>(&self, py: Python<'py>, part: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let at = (part.as_ptr() as usize).wrapping_sub(self.start);
        if !part.is_empty() && at < self.len && part.len() <= self.len - at {
            let range = PySlice::new(py, at as isize, (at + part.len()) as isize, 1);
            return self.view.bind(py).as_any().get_item(range);
        }
        Ok(PyMemoryView::from(PyBytes::new(py, part).as_any())?.into_any())
    }
}

/// The view of each shard whose bytes are in memory (mapped or read plain
/// files), made once per dataset.
pub struct ShardViews {
    views: Vec<Option<BufferView>>,
}

impl ShardViews {
    /// One view per shard of `dataset` that is in memory.
    pub fn new(py: Python<'_>, dataset: &CoreDataset) -> PyResult<ShardViews> {
        let views = dataset
            .shards()
            .iter()
            .map(|s| {
                s.bytes()
                    .cloned()
                    .map(|b| BufferView::new(py, b))
                    .transpose()
            })
            .collect::<PyResult<_>>()?;
        Ok(ShardViews { views })
    }

    /// The view of the shard record `id` is in, when it is in memory.
    pub fn of_record(&self, dataset: &CoreDataset, id: u64) -> Option<&BufferView> {
        let (k, _) = dataset.locate(id)?;
        self.views.get(k)?.as_ref()
    }
}

/// Where the parts of one record are handed out from: its shard's view
/// when the shard is in memory, else a view of the record's own bytes (a
/// share of an inflated span), made on first use.
pub struct RecordBuffer<'a> {
    shard: Option<&'a BufferView>,
    record: Option<&'a Bytes>,
    own: std::cell::OnceCell<BufferView>,
}

impl<'a> RecordBuffer<'a> {
    /// The buffer of a record: its shard's view `shard` (if in memory),
    /// else the record's own bytes `record` (if it owns them).
    pub fn new(shard: Option<&'a BufferView>, record: Option<&'a Bytes>) -> RecordBuffer<'a> {
        RecordBuffer {
            shard,
            record,
            own: std::cell::OnceCell::new(),
        }
    }

    /// `part` of the record as a `memoryview` (see [`BufferView::slice`]).
    pub fn slice<'py>(&self, py: Python<'py>, part: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        if let Some(view) = self.shard {
            return view.slice(py, part);
        }
        if let (None, Some(record)) = (self.own.get(), self.record) {
            let _ = self.own.set(BufferView::new(py, record.clone())?);
        }
        match self.own.get() {
            Some(view) => view.slice(py, part),
            None => Ok(PyMemoryView::from(PyBytes::new(py, part).as_any())?.into_any()),
        }
    }
}

/// A numpy array of `dtype` (a numpy dtype name) over `buf`'s data, which
/// numpy then owns: the buffer's words become the array's memory, with no
/// copy; the array is reshaped to `shape` when one is given.
pub fn take_array<'py>(
    py: Python<'py>,
    buf: AlignedBuf,
    dtype: &str,
    shape: Option<&[usize]>,
) -> PyResult<Bound<'py, PyAny>> {
    let (words, range) = buf.into_words();
    let words = words.into_pyarray(py);
    let bytes = words.call_method1("view", ("u1",))?;
    let bytes = bytes.get_item(PySlice::new(
        py,
        range.start as isize,
        range.end as isize,
        1,
    ))?;
    let typed = bytes.call_method1("view", (dtype,))?;
    match shape {
        Some(shape) => typed.call_method1("reshape", (shape.to_vec(),)),
        None => Ok(typed),
    }
}
