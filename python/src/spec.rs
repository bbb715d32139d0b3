//! `recordwire.Spec`: a feature spec for `Dataset.decode`.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use recordwire::batch::Spec as CoreSpec;

use crate::errors::{guard, new_error};

/// A feature spec: the JSON that `recordwire inspect --spec` prints, as text
/// (`Spec.from_json`) or parsed into a dict (`Spec(dict)`).
#[pyclass(frozen, module = "recordwire._native")]
pub struct Spec {
    pub(crate) inner: Arc<CoreSpec>,
}

fn parse(py: Python<'_>, text: &[u8]) -> PyResult<Arc<CoreSpec>> {
    CoreSpec::from_json(text)
        .map(Arc::new)
        .map_err(|e| new_error(py, "invalid_spec", e.to_string(), None, None, None))
}

/// A dict as JSON text, through Python's `json` module.
fn dict_json(d: &Bound<'_, PyDict>) -> PyResult<String> {
    let json = d.py().import("json")?;
    json.call_method1("dumps", (d,))?.extract()
}

/// The spec `spec` stands for: a `Spec`, JSON text, or a dict.
pub fn spec_of(spec: &Bound<'_, PyAny>) -> PyResult<Arc<CoreSpec>> {
    let py = spec.py();
    if let Ok(s) = spec.cast::<Spec>() {
        return Ok(Arc::clone(&s.get().inner));
    }
    if let Ok(s) = spec.cast::<PyString>() {
        return parse(py, s.to_cow()?.as_bytes());
    }
    if let Ok(d) = spec.cast::<PyDict>() {
        return parse(py, dict_json(d)?.as_bytes());
    }
    Err(PyTypeError::new_err(
        "spec: a recordwire.Spec, its JSON text, or that JSON as a dict",
    ))
}

#[pymethods]
impl Spec {
    /// A spec from the dict that the JSON spec parses into.
    #[new]
    fn new(spec: &Bound<'_, PyDict>) -> PyResult<Self> {
        guard(|| {
            Ok(Spec {
                inner: parse(spec.py(), dict_json(spec)?.as_bytes())?,
            })
        })
    }

    /// A spec from its JSON text (`str` or `bytes`).
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        guard(|| {
            let bytes: Vec<u8> = match text.cast::<PyString>() {
                Ok(s) => s.to_cow()?.as_bytes().to_vec(),
                Err(_) => text.extract()?,
            };
            Ok(Spec {
                inner: parse(py, &bytes)?,
            })
        })
    }

    /// The spec as JSON text.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The payload kind the spec decodes.
    #[getter]
    fn payload(&self) -> &'static str {
        self.inner.payload().name()
    }

    /// The names of the features (context features for a SequenceExample).
    #[getter]
    fn features(&self) -> Vec<String> {
        self.inner
            .features()
            .iter()
            .map(|f| f.name.clone())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("recordwire.Spec({})", self.inner.to_json())
    }

    /// Pickles as its JSON (a Ray task, a DataLoader worker): unpickling
    /// is `Spec.from_json(text)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let from_json = slf.get_type().getattr("from_json")?;
        Ok((from_json, (slf.get().inner.to_json(),)))
    }
}
