//! The native module `recordwire._native` of the `recordwire` Python package:
//! `Dataset`, `Spec`, `Order`, `Writer`, `ArrowBatch` and the
//! `recordwire.Error` exceptions (with the I/O ones that are also
//! `OSError`s) over the `recordwire` crate.
//!
//! Every method body runs under `errors::guard`, so that a Rust panic
//! reaches Python as `recordwire.PanicError` (a `recordwire.Error`), never as
//! PyO3's `PanicException` (a `BaseException`).

use pyo3::prelude::*;

mod arrow;
mod arrow_writer;
mod buffers;
mod columns;
mod dataset;
mod errors;
mod loader;
mod message;
mod order;
mod record;
mod schema_columns;
mod spec;
mod writer;

/// Panics with `message`, through the same guard as every method: for the
/// test that proves no panic crosses into Python (hidden: not in the stubs'
/// public API, underscore-named).
#[pyfunction]
fn _panic_for_test(message: &str) -> PyResult<()> {
    errors::guard(|| -> PyResult<()> { panic!("{message}") })
}

/// Raises the I/O error of OS error number `errno` on `file`, as any method
/// would: for the test of the `OSError` classes (hidden, as `_panic_for_test`).
#[pyfunction]
fn _io_error_for_test(py: Python<'_>, errno: i32, file: &str) -> PyResult<()> {
    let e = std::io::Error::from_raw_os_error(errno);
    Err(errors::from_io(py, &e, Some(file)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Named where they live (as the I/O classes are), so that pickling
    // them by reference finds them: cloudpickle (Ray, DataLoader workers)
    // pickles a class whose module it cannot import by value, and the copy
    // is not `recordwire.Error` for `except` in the driver.
    for class in [
        py.get_type::<errors::Error>(),
        py.get_type::<errors::PanicError>(),
    ] {
        class.setattr("__module__", "recordwire._native")?;
    }
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("PanicError", py.get_type::<errors::PanicError>())?;
    m.add("IoError", errors::IoClass::Other.get(py)?)?;
    m.add("NotFoundError", errors::IoClass::NotFound.get(py)?)?;
    m.add(
        "PermissionDeniedError",
        errors::IoClass::PermissionDenied.get(py)?,
    )?;
    m.add_class::<dataset::Dataset>()?;
    m.add_class::<spec::Spec>()?;
    m.add_class::<order::Order>()?;
    m.add_class::<writer::Writer>()?;
    m.add_class::<buffers::FileBytes>()?;
    m.add_class::<arrow::ArrowBatch>()?;
    m.add_class::<arrow_writer::ArrowWriter>()?;
    m.add_class::<loader::Loader>()?;
    m.add_class::<message::Schema>()?;
    m.add_class::<loader::PooledBuffer>()?;
    m.add_function(wrap_pyfunction!(schema_columns::schema_columns, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(_io_error_for_test, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
