//! `recordwire._native.Loader`: the crate's [`recordwire::loader::Loader`]
//! for Python. Batches are read and decoded ahead on Rust threads while
//! Python works; `__next__` waits with the GIL released.
//!
//! A batch's arrays are numpy views of the pooled batch's own buffers
//! (writable, no copy): each array's base is a [`PooledBuffer`] that holds
//! the batch, so the batch goes back to the loader's pool when the last
//! array over it dies, and the next decode reuses its memory. numpy reads
//! the address and length given in `__array_interface__`; they stay valid
//! while the batch is held, because nothing in Rust touches a held batch's
//! buffers (they are reached only through `buffers_mut` here, once, before
//! the batch is shared) and a `Vec`'s memory never moves while it is not
//! resized.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use recordwire::batch::Spec as CoreSpec;
use recordwire::batch::{Column, DType, Layout};
use recordwire::dataset::Dataset as CoreDataset;
use recordwire::loader::{LoadedBatch, Loader as CoreLoader, LoaderOptions, LoaderState};
use recordwire::names::OptionName;

use crate::buffers::{memoryview_of, ShardViews};
use crate::columns::layout_name;
use crate::errors::{guard, to_py};
use crate::order::order_spec;
use crate::spec::spec_of;

/// A decoded batch held for the numpy arrays over it.
struct Held(LoadedBatch);

/// One buffer of a held batch as numpy sees it: a `[len]` (or shaped)
/// array of `typestr` at `ptr`; the batch stays out of the pool while this
/// object (the array's base) lives.
#[pyclass(frozen, module = "recordwire._native")]
pub struct PooledBuffer {
    _batch: Arc<Held>,
    ptr: usize,
    shape: Vec<usize>,
    typestr: &'static str,
}

#[pymethods]
impl PooledBuffer {
    /// numpy's array interface (version 3): a writable array over the
    /// pooled buffer.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", self.typestr)?;
        d.set_item("data", (self.ptr, false))?;
        Ok(d)
    }
}

/// Where one buffer of a column is: its address and its length in bytes.
#[derive(Clone, Copy)]
struct Span(usize, usize);

impl Span {
    fn of(b: &mut [u8]) -> Span {
        Span(b.as_mut_ptr() as usize, b.len())
    }
}

/// A column's buffers, located while the batch was still ours alone.
struct Located {
    values: Span,
    offsets: Option<Span>,
    row_splits: Option<Span>,
    frame_splits: Option<Span>,
    lengths: Option<Span>,
    indices: Option<Span>,
}

fn locate(c: &mut Column<'_>) -> Located {
    let b = c.buffers_mut();
    Located {
        values: Span::of(b.values),
        offsets: b.offsets.map(Span::of),
        row_splits: b.row_splits.map(Span::of),
        frame_splits: b.frame_splits.map(Span::of),
        lengths: b.lengths.map(Span::of),
        indices: b.indices.map(Span::of),
    }
}

/// A numpy array over `span` of the held batch: `shape` elements of
/// `typestr` (width `width`), or `[len / width]`.
fn array<'py>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    held: &Arc<Held>,
    span: Span,
    typestr: &'static str,
    width: usize,
    shape: Option<&[usize]>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = shape.map_or_else(|| vec![span.1 / width.max(1)], <[usize]>::to_vec);
    let buffer = Bound::new(
        py,
        PooledBuffer {
            _batch: Arc::clone(held),
            ptr: span.0,
            shape,
            typestr,
        },
    )?;
    np.call_method1("asarray", (buffer,))
}

/// One column as the dict `Dataset._decode` gives (see `columns.rs`), its
/// arrays views of the held batch; a dense numeric column (the most
/// common) as its array alone, which is what the Python layer makes of
/// that dict (a tenth of the per-column cost of a many-column batch).
#[allow(clippy::too_many_arguments)]
fn column<'py>(
    py: Python<'py>,
    np: &Bound<'py, PyModule>,
    held: &Arc<Held>,
    c: &Column<'_>,
    at: &Located,
    ids: &[u64],
    dataset: &CoreDataset,
    views: &ShardViews,
) -> PyResult<Bound<'py, PyAny>> {
    let (dtype, layout, shape) = (c.dtype(), c.layout(), c.shape());
    let dense = layout == Layout::Dense && dtype != DType::Bytes;
    let values = |shape: Option<&[usize]>| {
        let (typestr, width) = (dtype.numpy_typestr(), dtype.width());
        array(py, np, held, at.values, typestr, width, shape)
    };
    if dense && c.lengths().is_none() && c.sparse().is_none() {
        return values(Some(shape));
    }
    let d = PyDict::new(py);
    d.set_item("layout", layout_name(layout))?;
    d.set_item("dtype", OptionName::name(dtype))?;
    d.set_item("shape", shape.to_vec())?;
    let values = match c.shared() {
        // A borrowing column's values: slices of their record's file view
        // when the file is in memory, else views of the values' own bytes
        // (shares of an inflated span).
        Some(shared) => {
            let list = PyList::empty(py);
            let mut r = 0;
            while let Some(range) = c.row_values(r) {
                let view = ids.get(r).and_then(|&id| views.of_record(dataset, id));
                for v in shared.get(range).unwrap_or_default() {
                    list.append(match view {
                        Some(view) => view.slice(py, v)?,
                        None => memoryview_of(py, v.clone())?.into_any(),
                    })?;
                }
                r += 1;
            }
            list.into_any()
        }
        None => values(dense.then_some(shape))?,
    };
    d.set_item("values", values)?;
    let int64s = [
        ("offsets", at.offsets),
        ("row_splits", at.row_splits),
        ("frame_splits", at.frame_splits),
        ("lengths", at.lengths),
        ("indices", at.indices),
    ];
    for (name, span) in int64s {
        if let Some(span) = span {
            d.set_item(name, array(py, np, held, span, "<i8", 8, None)?)?;
        }
    }
    if let Some(sparse) = c.sparse() {
        d.set_item("dense_shape", sparse.dense_shape.to_vec())?;
    }
    Ok(d.into_any())
}

/// Batches of a dataset's epochs, read and decoded ahead on Rust threads
/// (see `recordwire.Loader`).
#[pyclass(frozen, module = "recordwire._native")]
pub struct Loader {
    inner: Mutex<CoreLoader>,
    /// The dataset (its shard views give the values of borrowing columns).
    dataset: Py<crate::dataset::Dataset>,
    /// The spec, for the Arrow form of a batch (`None`: numpy columns).
    arrow: Option<Arc<CoreSpec>>,
}

fn poisoned<T>(_: T) -> PyErr {
    PyValueError::new_err("the loader was in use in a thread that panicked")
}

#[pymethods]
impl Loader {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (dataset, spec, batch_size, *, mode="shuffle", seed=0, rank=0, world=1, worker=0, workers=1, tail="pad", page_size=4096, window=8, drop_last=false, prefetch=4, threads=0, readers=0, arrow=false))]
    fn new(
        py: Python<'_>,
        dataset: &Bound<'_, crate::dataset::Dataset>,
        spec: &Bound<'_, PyAny>,
        batch_size: usize,
        mode: &str,
        seed: u64,
        rank: u32,
        world: u32,
        worker: u32,
        workers: u32,
        tail: &str,
        page_size: u64,
        window: u32,
        drop_last: bool,
        prefetch: usize,
        threads: usize,
        readers: usize,
        arrow: bool,
    ) -> PyResult<Loader> {
        guard(|| {
            let spec = spec_of(spec)?;
            let order = order_spec(
                mode, seed, rank, world, worker, workers, tail, page_size, window,
            )?;
            let inner = Arc::clone(dataset.get().core());
            let options = LoaderOptions::new(batch_size)
                .order(order)
                .drop_last(drop_last)
                .prefetch(prefetch)
                .threads(threads)
                .readers(readers);
            let loader = py
                .detach(|| CoreLoader::new(inner, (*spec).clone(), options))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok(Loader {
                inner: Mutex::new(loader),
                dataset: dataset.clone().unbind(),
                arrow: arrow.then_some(spec),
            })
        })
    }

    /// Batches per epoch.
    fn __len__(&self) -> PyResult<usize> {
        let l = self.inner.lock().map_err(poisoned)?;
        Ok(usize::try_from(l.len()).unwrap_or(usize::MAX))
    }

    /// `(epoch, batch)`: the next batch delivered.
    fn state(&self) -> PyResult<(u64, u64)> {
        let l = self.inner.lock().map_err(poisoned)?;
        let s = l.state();
        Ok((s.epoch, s.batch))
    }

    /// Goes to batch `batch` of epoch `epoch` (stopping the threads).
    fn resume(&self, py: Python<'_>, epoch: u64, batch: u64) -> PyResult<()> {
        guard(|| {
            py.detach(|| {
                let mut l = self.inner.lock().map_err(poisoned)?;
                l.resume(LoaderState { epoch, batch })
                    .map_err(|e| PyValueError::new_err(e.to_string()))
            })
        })
    }

    /// Goes to batch 0 of epoch `epoch` (stopping the threads).
    fn set_epoch(&self, py: Python<'_>, epoch: u64) -> PyResult<()> {
        guard(|| {
            py.detach(|| {
                let mut l = self.inner.lock().map_err(poisoned)?;
                l.set_epoch(epoch);
                Ok(())
            })
        })
    }

    /// Stops the threads and waits for them (the loader can go on later).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        guard(|| {
            py.detach(|| {
                let mut l = self.inner.lock().map_err(poisoned)?;
                l.close();
                Ok(())
            })
        })
    }

    /// Seconds `next_batch` spent blocked on batches not made yet.
    fn waited(&self) -> PyResult<f64> {
        Ok(self.inner.lock().map_err(poisoned)?.waited().as_secs_f64())
    }

    /// The threads of the current run still running.
    fn running_threads(&self) -> PyResult<usize> {
        Ok(self.inner.lock().map_err(poisoned)?.running_threads())
    }

    /// `(decode threads, readers)` of a run.
    fn thread_counts(&self) -> PyResult<(usize, usize)> {
        Ok(self.inner.lock().map_err(poisoned)?.thread_counts())
    }

    /// The pool's counts: `made`, `reused`, `grown_bytes`, `dropped`, `free`.
    fn pool_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.lock().map_err(poisoned)?.pool_stats();
        let d = PyDict::new(py);
        d.set_item("made", s.made)?;
        d.set_item("reused", s.reused)?;
        d.set_item("grown_bytes", s.grown_bytes)?;
        d.set_item("dropped", s.dropped)?;
        d.set_item("free", s.free)?;
        Ok(d)
    }

    /// The next batch: `(epoch, index, ids, rows, context columns, sequence
    /// columns)` (columns as `Dataset._decode` gives them, their arrays
    /// views of the pooled batch), or with `arrow` `(epoch, index, ids,
    /// ArrowBatch)`; `None` at the end of the epoch.
    fn next_batch<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        guard(|| {
            let got = py.detach(|| {
                let mut l = self.inner.lock().map_err(poisoned)?;
                Ok::<_, PyErr>(l.next_batch())
            })?;
            let mut batch = match got {
                None => return Ok(None),
                Some(Err(e)) => return Err(to_py(&e)),
                Some(Ok(b)) => b,
            };
            let (epoch, index) = (batch.epoch(), batch.index());
            let ids: Vec<i64> = batch.ids().iter().map(|&i| i as i64).collect();
            let ids = numpy::PyArray1::from_vec(py, ids).into_any();
            if let Some(spec) = &self.arrow {
                let arrow = crate::arrow::ArrowBatch::take(spec, batch.batch_mut())?;
                let arrow = Bound::new(py, arrow)?.into_any();
                let items = [
                    epoch.into_pyobject(py)?.into_any(),
                    index.into_pyobject(py)?.into_any(),
                    ids,
                    arrow,
                ];
                return Ok(Some(PyTuple::new(py, items)?));
            }
            let rows = batch.rows();
            let (context, sequence) = batch.batch_mut().columns_mut();
            let located: Vec<Located> = context
                .iter_mut()
                .chain(sequence.iter_mut())
                .map(locate)
                .collect();
            let held = Arc::new(Held(batch));
            let np = py.import("numpy")?;
            let b = &held.0;
            let (ctx, seq) = (PyDict::new(py), PyDict::new(py));
            let columns = b
                .columns()
                .iter()
                .map(|c| (c, &ctx))
                .chain(b.sequence().iter().map(|c| (c, &seq)));
            let ds = self.dataset.get();
            for ((c, out), at) in columns.zip(&located) {
                let d = column(py, &np, &held, c, at, b.ids(), ds.core(), ds.views())?;
                out.set_item(c.name(), d)?;
            }
            let items = [
                epoch.into_pyobject(py)?.into_any(),
                index.into_pyobject(py)?.into_any(),
                ids,
                rows.into_pyobject(py)?.into_any(),
                ctx.into_any(),
                seq.into_any(),
            ];
            Ok(Some(PyTuple::new(py, items)?))
        })
    }
}
