//! `recordwire.Error` (with `.kind`, `.file`, `.record`, `.offset`), its I/O
//! subclasses that are also the matching `OSError`s, and the guard that turns
//! a panic into `recordwire.PanicError`.

use std::io::ErrorKind as IoKind;
use std::panic::{catch_unwind, AssertUnwindSafe};

use std::ffi::CStr;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};
use recordwire::error::FeatureProblem;

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

/// The I/O error classes: each a `recordwire.Error` (kind `io_error`) and
/// the `OSError` that Python itself would raise, so that `except
/// FileNotFoundError` catches a missing file as it does for `open()`.
#[derive(Clone, Copy)]
pub enum IoClass {
    /// `IoError(Error, OSError)`: any other I/O error.
    Other,
    /// `NotFoundError(IoError, FileNotFoundError)`.
    NotFound,
    /// `PermissionDeniedError(IoError, PermissionError)`.
    PermissionDenied,
}

/// The classes, in Python: `create_exception!` gives one base only. The
/// message stays recordwire's (`OSError.__str__` would print `[Errno n]
/// strerror: 'filename'`), and pickling keeps the `OSError` fields (which
/// `OSError.__reduce__` drops for a one-argument exception).
const IO_CLASSES: &CStr = cr#"
class IoError(Error, OSError):
    """An I/O error (kind ``io_error``): a ``recordwire.Error`` and an
    ``OSError``, with ``errno``, ``strerror`` and ``filename`` set when known."""

    __module__ = "recordwire._native"

    def __str__(self):
        return BaseException.__str__(self)

    def __reduce__(self):
        state = dict(self.__dict__, errno=self.errno, strerror=self.strerror, filename=self.filename)
        return (type(self), self.args, state)


class NotFoundError(IoError, FileNotFoundError):
    """A file that does not exist: a ``recordwire.IoError`` and a ``FileNotFoundError``."""

    __module__ = "recordwire._native"


class PermissionDeniedError(IoError, PermissionError):
    """A file that may not be read or written: a ``recordwire.IoError`` and a
    ``PermissionError``."""

    __module__ = "recordwire._native"
"#;

/// `IoError`, `NotFoundError`, `PermissionDeniedError`.
static CLASSES: PyOnceLock<[Py<PyType>; 3]> = PyOnceLock::new();

impl IoClass {
    /// The class for an I/O error of kind `kind`.
    pub fn of(kind: IoKind) -> IoClass {
        match kind {
            IoKind::NotFound => IoClass::NotFound,
            IoKind::PermissionDenied => IoClass::PermissionDenied,
            _ => IoClass::Other,
        }
    }

    /// The Python class (made on first use).
    pub fn get(self, py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
        let classes = CLASSES.get_or_try_init(py, || -> PyResult<[Py<PyType>; 3]> {
            let scope = PyDict::new(py);
            scope.set_item("Error", py.get_type::<Error>())?;
            py.run(IO_CLASSES, Some(&scope), None)?;
            let class = |name: &str| -> PyResult<Py<PyType>> {
                Ok(scope
                    .get_item(name)?
                    .ok_or_else(|| PyValueError::new_err(format!("{name} was not defined")))?
                    .cast_into::<PyType>()?
                    .unbind())
            };
            Ok([
                class("IoError")?,
                class("NotFoundError")?,
                class("PermissionDeniedError")?,
            ])
        })?;
        Ok(classes[self as usize].bind(py))
    }
}

/// Where an error was met.
#[derive(Clone, Copy, Default)]
pub struct Where<'a> {
    /// The file's name.
    pub file: Option<&'a str>,
    /// The record id.
    pub record: Option<u64>,
    /// The absolute byte offset.
    pub offset: Option<u64>,
}

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
    set_fields(
        py,
        &err,
        kind,
        Where {
            file,
            record,
            offset,
        },
    );
    err
}

/// A `recordwire.IoError` (or the subclass for `io_kind`) with `message`;
/// its `OSError` fields `errno` (`os_error`, when known), `strerror` and
/// `filename` (the file, when known) are set as `open()` would set them.
pub fn new_io_error(
    py: Python<'_>,
    message: String,
    io_kind: IoKind,
    os_error: Option<i32>,
    strerror: Option<String>,
    at: Where<'_>,
) -> PyErr {
    let class = match IoClass::of(io_kind).get(py) {
        Ok(class) => class.clone(),
        // Making the classes failed (out of memory): still a recordwire.Error.
        Err(_) => py.get_type::<Error>(),
    };
    let err = PyErr::from_type(class, message);
    set_fields(py, &err, "io_error", at);
    let value = err.value(py);
    // As in `set_fields`: setting attributes on a fresh instance cannot fail
    // short of memory exhaustion. (Not an OSError when the classes could not
    // be made: the attributes are then plain ones.)
    let _ = value.setattr("errno", os_error);
    let _ = value.setattr("strerror", strerror);
    let _ = value.setattr("filename", at.file);
    err
}

/// A `std::io::Error` met on `file` as `recordwire.IoError` (or the
/// subclass for its kind).
pub fn from_io(py: Python<'_>, e: &std::io::Error, file: Option<&str>) -> PyErr {
    let message = match file {
        Some(name) => format!("{name}: {e}"),
        None => e.to_string(),
    };
    new_io_error(
        py,
        message,
        e.kind(),
        e.raw_os_error(),
        Some(e.to_string()),
        Where {
            file,
            ..Where::default()
        },
    )
}

fn set_fields(py: Python<'_>, err: &PyErr, kind: &str, at: Where<'_>) {
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail short of
    // memory exhaustion; the exception is raised either way.
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("file", at.file);
    let _ = value.setattr("record", at.record);
    let _ = value.setattr("offset", at.offset);
}

/// A crate error as `recordwire.Error` (an I/O error as `recordwire.IoError`
/// or its subclass for the kind, also the matching `OSError`).
pub fn to_py(e: &recordwire::Error) -> PyErr {
    Python::attach(|py| {
        let at = Where {
            file: e.file(),
            record: e.record(),
            offset: e.offset(),
        };
        if let recordwire::ErrorKind::Io { io_kind, .. } = e.kind() {
            let cause =
                std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
            return new_io_error(
                py,
                e.to_string(),
                *io_kind,
                cause.and_then(std::io::Error::raw_os_error),
                cause.map(ToString::to_string),
                at,
            );
        }
        let mut message = e.to_string();
        if let recordwire::ErrorKind::Feature {
            problem: FeatureProblem::Missing | FeatureProblem::WrongCount { .. },
            ..
        } = e.kind()
        {
            // What a spec inferred from a sample (the loader's and Ray's
            // default) cannot foresee.
            message.push_str(
                " (a spec inferred from a sample of the records may not fit them all: \
                 recordwire.infer_spec(paths) infers it from every record)",
            );
        }
        new_error(py, e.kind().name(), message, at.file, at.record, at.offset)
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
                set_fields(py, &err, "panic", Where::default());
                Err(err)
            })
        }
    }
}
