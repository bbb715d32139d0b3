//! The native module `recordwire._native` of the `recordwire` Python package:
//! `Dataset`, `Spec`, `Order`, `Writer` and the
//! `recordwire.Error` exceptions over the `recordwire` crate.
//!
//! Every method body runs under `errors::guard`, so that a Rust panic
//! reaches Python as `recordwire.PanicError` (a `recordwire.Error`), never as
//! PyO3's `PanicException` (a `BaseException`).

use pyo3::prelude::*;

mod buffers;
mod columns;
mod dataset;
mod errors;
mod order;
mod record;
mod spec;
mod writer;

/// Panics with `message`, through the same guard as every method: for the
/// test that proves no panic crosses into Python (hidden: not in the stubs'
/// public API, underscore-named).
#[pyfunction]
fn _panic_for_test(message: &str) -> PyResult<()> {
    errors::guard(|| -> PyResult<()> { panic!("{message}") })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("PanicError", py.get_type::<errors::PanicError>())?;
    m.add_class::<dataset::Dataset>()?;
    m.add_class::<spec::Spec>()?;
    m.add_class::<order::Order>()?;
    m.add_class::<writer::Writer>()?;
    m.add_class::<buffers::FileBytes>()?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
