//! `decode(to="arrow")`: a decoded batch as an Arrow record batch, mapped by
//! the crate's one mapping ([`recordwire::arrow`], the same as `recordwire
//! export`'s Parquet), handed to pyarrow through the Arrow C data interface
//! as PyCapsules (`__arrow_c_array__`, `__arrow_c_schema__`): pyarrow takes
//! the buffers themselves, no copy.
//!
//! No `unsafe` here: arrow-rs's `to_ffi` makes the C structs, and PyO3's
//! `PyCapsule::new_with_value` boxes each one and hands the box's address
//! to the capsule (the struct at the capsule's pointer, as the protocol
//! wants). pyarrow moves the struct out (marking it released); a capsule
//! that was never consumed drops it, which calls its release callback.

use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use recordwire::batch::{Batch, Spec};

/// A decoded batch in Arrow form, for `pyarrow.record_batch(obj)` (the
/// Arrow PyCapsule interface). Each call of `__arrow_c_array__` exports the
/// same buffers again.
#[pyclass(frozen, module = "recordwire._native")]
pub struct ArrowBatch {
    batch: RecordBatch,
}

fn arrow_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

impl ArrowBatch {
    /// The columns of `batch` (decoded with `spec`), taken out of it.
    pub fn take(spec: &Spec, batch: &mut Batch<'_>) -> PyResult<ArrowBatch> {
        let batch = recordwire::arrow::record_batch(spec, batch).map_err(arrow_err)?;
        Ok(ArrowBatch { batch })
    }

    /// A record batch made elsewhere (`schema_columns`).
    pub fn from_batch(batch: RecordBatch) -> ArrowBatch {
        ArrowBatch { batch }
    }

    fn schema_capsule<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.batch.schema().as_ref()).map_err(arrow_err)?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }
}

#[pymethods]
impl ArrowBatch {
    /// Rows (records).
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The schema as an `arrow_schema` PyCapsule (a struct of the columns).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        crate::errors::guard(|| self.schema_capsule(py))
    }

    /// `(arrow_schema, arrow_array)` PyCapsules: the batch as a struct array.
    /// `requested_schema` is not used (the columns have one form; pyarrow
    /// casts when asked for another).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        crate::errors::guard(|| {
            let data = StructArray::from(self.batch.clone()).into_data();
            let (array, _) = to_ffi(&data).map_err(arrow_err)?;
            let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
            PyTuple::new(py, [self.schema_capsule(py)?, array])
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ArrowBatch({} rows, {} columns)",
            self.batch.num_rows(),
            self.batch.num_columns()
        )
    }
}
