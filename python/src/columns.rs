//! A decoded [`Batch`] as a dict of numpy arrays (`Dataset.decode`).
//!
//! Each column's buffers are copied once into numpy arrays (one memcpy per
//! buffer); the batch itself is dropped afterwards.

use numpy::{Element, PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use recordwire::batch::{Batch, Column, ColumnValue, DType, Layout};

fn array<'py, T: ColumnValue + Element>(
    py: Python<'py>,
    c: &Column<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let values = c.values::<T>().unwrap_or(&[]);
    let a = PyArray1::from_slice(py, values);
    if c.layout() == Layout::Dense {
        Ok(a.reshape(c.shape().to_vec())?.into_any())
    } else {
        Ok(a.into_any())
    }
}

fn int64s<'py>(py: Python<'py>, v: Option<&[i64]>) -> Bound<'py, PyAny> {
    PyArray1::from_slice(py, v.unwrap_or(&[])).into_any()
}

/// The values of `c`: a numpy array (dense columns shaped as
/// `Column::shape`), `(data, offsets)` for owned bytes, a list of `bytes` for
/// a borrowing bytes column.
fn values<'py>(py: Python<'py>, c: &Column<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c.dtype() {
        DType::Int64 => array::<i64>(py, c)?,
        DType::Float32 => array::<f32>(py, c)?,
        DType::Int32 => array::<i32>(py, c)?,
        DType::Float64 => array::<f64>(py, c)?,
        DType::Int8 => array::<i8>(py, c)?,
        DType::UInt8 => array::<u8>(py, c)?,
        DType::Bytes => match c.borrowed() {
            Some(values) => PyList::new(py, values.iter().map(|v| PyBytes::new(py, v)))?.into_any(),
            None => {
                let data = PyArray1::from_slice(py, c.raw_values()).into_any();
                PyTuple::new(py, [data, int64s(py, c.offsets())])?.into_any()
            }
        },
    })
}

/// One column: its values, with `row_splits` (and `frame_splits`) when ragged.
fn column<'py>(py: Python<'py>, c: &Column<'_>) -> PyResult<Bound<'py, PyAny>> {
    let v = values(py, c)?;
    Ok(match c.layout() {
        Layout::Dense => v,
        Layout::Ragged => PyTuple::new(py, [v, int64s(py, c.row_splits())])?.into_any(),
        Layout::RaggedFrames => PyTuple::new(
            py,
            [v, int64s(py, c.row_splits()), int64s(py, c.frame_splits())],
        )?
        .into_any(),
    })
}

/// The batch's (context) columns as a dict name -> column.
pub fn to_dict<'py>(py: Python<'py>, batch: &Batch<'_>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for c in batch.columns() {
        dict.set_item(c.name(), column(py, c)?)?;
    }
    Ok(dict)
}
