//! `recordwire._native.Order`: one worker's epoch orders over a dataset, the
//! same ids as the CLI's `order` command.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use recordwire::order::{ModeName, Order as CoreOrder, OrderSpec, Tail};

use crate::errors::guard;

/// One worker's orders, for every epoch (built once; page modes group the
/// records by page here).
#[pyclass(frozen, module = "recordwire._native")]
pub struct Order {
    inner: CoreOrder,
}

/// The order spec of the keyword arguments of `Dataset.order`.
#[allow(clippy::too_many_arguments)]
pub fn order_spec(
    mode: &str,
    seed: u64,
    rank: u32,
    world: u32,
    worker: u32,
    workers: u32,
    tail: &str,
    page_size: u64,
    window: u32,
) -> PyResult<OrderSpec> {
    let mode: ModeName = mode
        .replace('_', "-")
        .parse()
        .map_err(|e| PyValueError::new_err(format!("mode: {e}")))?;
    let tail: Tail = tail
        .replace('_', "-")
        .parse()
        .map_err(|e| PyValueError::new_err(format!("tail: {e}")))?;
    Ok(OrderSpec {
        mode: mode.mode(page_size, window),
        seed,
        rank,
        world,
        worker,
        workers,
        tail,
    })
}

impl Order {
    /// Wraps a built order.
    pub fn new(inner: CoreOrder) -> Order {
        Order { inner }
    }
}

#[pymethods]
impl Order {
    /// The number of ids in each epoch (this worker's part).
    fn __len__(&self) -> usize {
        usize::try_from(self.inner.len()).unwrap_or(usize::MAX)
    }

    /// The number of records ordered (the whole dataset).
    #[getter]
    fn count(&self) -> u64 {
        self.inner.count()
    }

    /// Epoch `epoch`'s ids from `start` (a position in this worker's part)
    /// to `stop` (default: the end), as an int64 array.
    #[pyo3(signature = (epoch, start=0, stop=None))]
    fn ids<'py>(
        &self,
        py: Python<'py>,
        epoch: u64,
        start: u64,
        stop: Option<u64>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        guard(|| {
            let e = self.inner.epoch(epoch);
            let stop = stop.unwrap_or(e.len()).min(e.len());
            let start = start.min(stop);
            let order = &self.inner;
            let ids = py.detach(|| {
                let e = order.epoch(epoch);
                let it = e.iter_from(start)?;
                Ok::<Vec<i64>, recordwire::order::OrderError>(
                    it.take((stop - start) as usize).map(|i| i as i64).collect(),
                )
            });
            let ids = ids.map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok(ids.into_pyarray(py))
        })
    }

    fn __repr__(&self) -> String {
        let s = self.inner.spec();
        format!(
            "recordwire.Order({} of {} records per epoch, mode {}, seed {}, rank {}/{}, worker {}/{}, tail {})",
            self.inner.len(),
            self.inner.count(),
            s.mode.name(),
            s.seed,
            s.rank,
            s.world,
            s.worker,
            s.workers,
            s.tail.name()
        )
    }
}
