//! A decoded [`Batch`] handed to Python (`Dataset._decode`): each column as a
//! dict of its parts, every buffer given to numpy without a copy (see
//! [`take_array`]); the Python layer (`recordwire/_columns.py`) shapes them
//! into the public column types and Arrow arrays.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use recordwire::batch::{Batch, Column, DType, Layout};
use recordwire::names::OptionName;

use crate::buffers::{take_array, RecordBuffer};

/// The name of a layout in a column's parts dict.
pub(crate) fn layout_name(l: Layout) -> &'static str {
    match l {
        Layout::Dense => "dense",
        Layout::Ragged => "ragged",
        Layout::RaggedFrames => "ragged_frames",
    }
}

/// One column as a dict: `layout`, `dtype`, `shape`, `values` (a numpy array,
/// dense columns shaped; the data of an owned bytes column; a list of
/// memoryviews for a borrowing one) and whichever of `offsets`,
/// `row_splits`, `frame_splits`, `lengths`, `indices` and `dense_shape` the
/// column has.
fn column<'py>(
    py: Python<'py>,
    c: Column<'_>,
    rows: &RowBuffers<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (dtype, layout, shape) = (c.dtype(), c.layout(), c.shape().to_vec());
    d.set_item("layout", layout_name(layout))?;
    d.set_item("dtype", OptionName::name(dtype))?;
    d.set_item("shape", shape.clone())?;
    // A borrowing column's values: slices of the buffer of the record of
    // their row.
    let borrowed = match c.borrowed() {
        Some(values) => {
            let list = PyList::empty(py);
            let mut r = 0;
            while let Some(range) = c.row_values(r) {
                let buffer = rows.get(r);
                for &v in values.get(range).unwrap_or_default() {
                    list.append(match buffer {
                        Some(b) => b.slice(py, v)?,
                        None => pyo3::types::PyMemoryView::from(
                            pyo3::types::PyBytes::new(py, v).as_any(),
                        )?
                        .into_any(),
                    })?;
                }
                r += 1;
            }
            Some(list.into_any())
        }
        None => None,
    };
    let parts = c.into_parts();
    let values = match borrowed {
        Some(list) => list,
        None => {
            let dense = layout == Layout::Dense && dtype != DType::Bytes;
            let shape = dense.then_some(shape.as_slice());
            take_array(py, parts.values, dtype.numpy_typestr(), shape)?
        }
    };
    d.set_item("values", values)?;
    let int64s = [
        ("offsets", parts.offsets),
        ("row_splits", parts.row_splits),
        ("frame_splits", parts.frame_splits),
        ("lengths", parts.lengths),
        ("indices", parts.indices),
    ];
    for (name, buf) in int64s {
        if let Some(buf) = buf {
            d.set_item(name, take_array(py, buf, "<i8", None)?)?;
        }
    }
    if d.contains("indices")? {
        d.set_item("dense_shape", parts.sparse_shape)?;
    }
    Ok(d)
}

/// The buffer of each row's record (row `r` is record `r` of the batch),
/// for the values of borrowing columns.
pub struct RowBuffers<'a> {
    rows: Vec<RecordBuffer<'a>>,
}

impl<'a> RowBuffers<'a> {
    /// The buffers of `rows`, in row order.
    pub fn new(rows: Vec<RecordBuffer<'a>>) -> RowBuffers<'a> {
        RowBuffers { rows }
    }

    fn get(&self, r: usize) -> Option<&RecordBuffer<'a>> {
        self.rows.get(r)
    }
}

/// The batch's columns, taken out of it, as `(rows, context columns, sequence columns)`, each columns a
/// dict name -> column dict (see [`column`]).
pub fn to_py<'py>(
    py: Python<'py>,
    batch: &mut Batch<'_>,
    rows: &RowBuffers<'_>,
) -> PyResult<(usize, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let n = batch.rows();
    let (context, sequence) = batch.take_columns();
    let out = |cols: Vec<Column<'_>>| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for c in cols {
            let name = c.name().to_owned();
            d.set_item(name, column(py, c, rows)?)?;
        }
        Ok(d)
    };
    Ok((n, out(context)?, out(sequence)?))
}
