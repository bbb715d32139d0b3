//! Zero-copy views for Python: a file's bytes (its memory map, or the
//! decompressed data) as `memoryview`s, and decoded buffers handed to numpy.
//!
//! A file's bytes are exposed once per file through numpy's array interface
//! ([`FileBytes`]): numpy keeps the `FileBytes` object as the array's base,
//! so the array, the `memoryview` over it and every slice of that view keep
//! the bytes alive, whatever happens to the `Dataset` they came from. A
//! record or value is then a slice of that view: no copy, and no `unsafe`
//! here (numpy reads the address and length we give it, which stay valid
//! while the object lives, because `Bytes` never moves or frees its data
//! while a clone of it is held).

use bytes::Bytes;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyMemoryView, PySlice};
use recordwire::batch::AlignedBuf;
use recordwire::index::Dataset as CoreDataset;

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

/// One read-only `memoryview` per data file, to slice records and values
/// out of.
pub struct Maps {
    /// `(address, length, view)`, sorted by address.
    views: Vec<(usize, usize, Py<PyMemoryView>)>,
}

/// A read-only `memoryview` of `bytes`, without copying them.
pub fn memoryview_of<'py>(py: Python<'py>, bytes: Bytes) -> PyResult<Bound<'py, PyMemoryView>> {
    let holder = Bound::new(py, FileBytes { bytes })?;
    let array = py.import("numpy")?.call_method1("asarray", (holder,))?;
    PyMemoryView::from(&array)
}

impl Maps {
    /// The views of every file of `dataset` whose bytes are in memory
    /// (mapped or read plain files; a compressed file's records are views
    /// of their own bytes, and its values copies).
    pub fn new(py: Python<'_>, dataset: &CoreDataset) -> PyResult<Maps> {
        let mut views = Vec::with_capacity(dataset.shards().len());
        for shard in dataset.shards() {
            let Some(bytes) = shard.bytes().cloned() else {
                continue;
            };
            let (addr, len) = (bytes.as_ptr() as usize, bytes.len());
            views.push((addr, len, memoryview_of(py, bytes)?.unbind()));
        }
        views.sort_by_key(|v| v.0);
        Ok(Maps { views })
    }

    /// `s` as a slice of the view of the file it lies in, or, for bytes
    /// that are not in any file (a spec's default value), a `memoryview` of
    /// a copy.
    pub fn slice<'py>(&self, py: Python<'py>, s: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let addr = s.as_ptr() as usize;
        let at = self.views.partition_point(|v| v.0 <= addr);
        if let Some((base, len, view)) = at.checked_sub(1).map(|i| &self.views[i]) {
            let start = addr - base;
            if start + s.len() <= *len && !s.is_empty() {
                let range = PySlice::new(py, start as isize, (start + s.len()) as isize, 1);
                return view.bind(py).as_any().get_item(range);
            }
        }
        Ok(PyMemoryView::from(PyBytes::new(py, s).as_any())?.into_any())
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
