//! One record as a Python dict (`Dataset.__getitem__`), through the views.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use recordwire::frame::Record;
use recordwire::view::{
    FeatureListsRef, FeatureRef, FeaturesRef, ListRef, PayloadKind, PayloadRef,
};
use recordwire::DecodeError;

use crate::buffers::RecordBuffer;
use crate::errors::to_py;

/// The key under which a SequenceExample's feature lists are given, beside
/// its context features (the key `Dataset.decode` puts sequence columns
/// under).
const SEQUENCE_KEY: &str = "sequence";

/// The features of `record` (checked whole first, as protobuf's parser
/// would) as a dict: name -> numpy array, or a list of `memoryview`s into
/// `buffer`, the file's or the record's bytes (no copy). A SequenceExample gives its context features so, and
/// its feature lists under the key `"sequence"`: name -> a list with one
/// value per frame (each as a context feature's value).
pub fn to_dict<'py>(
    py: Python<'py>,
    record: &Record<'_>,
    kind: PayloadKind,
    buffer: &RecordBuffer<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    if kind == PayloadKind::Raw {
        return Err(PyValueError::new_err(
            "the payload is raw: read it with Dataset.raw(i)",
        ));
    }
    let view = PayloadRef::parse(kind, record.data, record.data_offset)
        .map_err(|e| to_py(&record.context(e)))?;
    let dict = PyDict::new(py);
    let fail = |e| match e {
        Fail::Decode(e) => to_py(&record.context(e)),
        Fail::Py(e) => e,
    };
    if let Some(features) = view.features() {
        fill(py, &dict, features, buffer).map_err(&fail)?;
    }
    if let Some(lists) = view.feature_lists() {
        if dict.contains(SEQUENCE_KEY)? {
            return Err(PyValueError::new_err(format!(
                "record {}: a context feature is named {SEQUENCE_KEY:?}, the key of the \
                 feature lists: read it with Dataset.raw(i)",
                record.id
            )));
        }
        let sequence = PyDict::new(py);
        fill_lists(py, &sequence, lists, buffer).map_err(&fail)?;
        dict.set_item(SEQUENCE_KEY, sequence)?;
    }
    Ok(dict)
}

/// What stops converting a record: its decoding, or Python.
pub(crate) enum Fail {
    Decode(DecodeError),
    Py(PyErr),
}

impl From<DecodeError> for Fail {
    fn from(e: DecodeError) -> Self {
        Fail::Decode(e)
    }
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Self {
        Fail::Py(e)
    }
}

impl From<std::convert::Infallible> for Fail {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

fn fill(
    py: Python<'_>,
    dict: &Bound<'_, PyDict>,
    features: FeaturesRef<'_>,
    buffer: &RecordBuffer<'_>,
) -> Result<(), Fail> {
    for named in features.iter() {
        let named = named?;
        let name = String::from_utf8_lossy(named.name());
        dict.set_item(name.as_ref(), value(py, named.feature, buffer)?)?;
    }
    Ok(())
}

/// Each feature list as name -> a list of its frames' values.
fn fill_lists(
    py: Python<'_>,
    dict: &Bound<'_, PyDict>,
    lists: FeatureListsRef<'_>,
    buffer: &RecordBuffer<'_>,
) -> Result<(), Fail> {
    for named in lists.iter() {
        let named = named?;
        let name = String::from_utf8_lossy(named.name());
        let frames = PyList::empty(py);
        for feature in named.list.iter() {
            frames.append(value(py, feature?, buffer)?)?;
        }
        dict.set_item(name.as_ref(), frames)?;
    }
    Ok(())
}

/// One feature's value: a numpy array, or a list of `memoryview`s for bytes
/// (an empty list for a feature with no kind).
fn value<'py>(
    py: Python<'py>,
    feature: FeatureRef<'_>,
    buffer: &RecordBuffer<'_>,
) -> Result<Bound<'py, PyAny>, Fail> {
    Ok(match feature.list()? {
        None => PyList::empty(py).into_any(),
        Some(ListRef::Bytes(list)) => {
            let out = PyList::empty(py);
            for v in list.iter() {
                out.append(buffer.slice(py, v?)?)?;
            }
            out.into_any()
        }
        Some(ListRef::Int64(list)) => {
            let mut v = Vec::new();
            list.extend_vec(&mut v)?;
            v.into_pyarray(py).into_any()
        }
        Some(ListRef::Float(list)) => {
            let mut v = Vec::new();
            list.extend_vec(&mut v)?;
            v.into_pyarray(py).into_any()
        }
        Some(ListRef::Double(list)) => {
            let mut v = Vec::new();
            list.extend_vec(&mut v)?;
            v.into_pyarray(py).into_any()
        }
        Some(ListRef::Int32(list)) => {
            let mut v = Vec::new();
            list.extend_vec(&mut v)?;
            v.into_pyarray(py).into_any()
        }
    })
}
