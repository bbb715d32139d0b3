//! `recordwire.Error` (with `.kind`, `.file`, `.record`, `.offset`) and the
//! guard that turns a panic into `recordwire.PanicError`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    Error,
    PyException,
    "An error of recordwire: `.kind` is the stable kind name (`truncated_data`, \
     `data_crc_mismatch`, `decode_error`, ...), `.file`, `.record` and `.offset` say \
     where (each None when unknown)."
);
pyo3::create_exception!(
    _native,
    PanicError,
    Error,
    "A bug in recordwire: a Rust panic, caught before it reached Python (kind `panic`)."
);

/// A `recordwire.Error` of `kind` with `message`, and where.
pub fn new_error(
    py: Python<'_>,
    kind: &str,
    message: String,
    file: Option<&str>,
    record: Option<u64>,
    offset: Option<u64>,
) -> PyErr {
    let err = Error::new_err(message);
    set_fields(py, &err, kind, file, record, offset);
    err
}

fn set_fields(
    py: Python<'_>,
    err: &PyErr,
    kind: &str,
    file: Option<&str>,
    record: Option<u64>,
    offset: Option<u64>,
) {
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail short of
    // memory exhaustion; the exception is raised either way.
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("file", file);
    let _ = value.setattr("record", record);
    let _ = value.setattr("offset", offset);
}

/// A crate error as `recordwire.Error`.
pub fn to_py(e: &recordwire::Error) -> PyErr {
    Python::attach(|py| {
        new_error(
            py,
            e.kind().name(),
            e.to_string(),
            e.file(),
            e.record(),
            e.offset(),
        )
    })
}

/// Runs `f`, turning a panic into `recordwire.PanicError`.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".to_owned());
            Python::attach(|py| {
                let err = PanicError::new_err(format!("internal error (a bug): {message}"));
                set_fields(py, &err, "panic", None, None, None);
                Err(err)
            })
        }
    }
}
