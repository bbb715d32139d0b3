//! `recordwire.Schema`: any protobuf message read by a schema given at run
//! time, and one record of such a message as Python values (`ds[i]` of a
//! `Dataset(message=...)`) or as protobuf's JSON (`ds.json(i)`).

use std::path::PathBuf;

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use recordwire::frame::Record;
use recordwire::schema::{FieldType, JsonOptions, MessageRef, ValueRef};
use recordwire::DecodeError;

use crate::buffers::RecordBuffer;
use crate::errors::{guard, to_py};
use crate::record::Fail;

/// What `Schema.__reduce__` gives: `from_descriptor_set` and its arguments.
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>, String));

/// A root message type of a schema given at run time (`.proto` sources or a
/// binary `FileDescriptorSet`), compiled once.
#[pyclass(frozen, module = "recordwire._native")]
pub struct Schema {
    pub(crate) inner: recordwire::schema::Schema,
}

fn paths_of(files: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(one) = files.extract::<PathBuf>() {
        return Ok(vec![one]);
    }
    files.extract::<Vec<PathBuf>>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "files: a path (str or os.PathLike) or a list of paths",
        )
    })
}

#[pymethods]
impl Schema {
    /// Compiles `.proto` files (a path or a list; imports found under the
    /// folders of `include`, and the files' own folders; the well-known
    /// types built in) and picks `message` (its full name).
    #[staticmethod]
    #[pyo3(signature = (files, message, *, include=None))]
    fn from_proto(
        py: Python<'_>,
        files: &Bound<'_, PyAny>,
        message: &str,
        include: Option<Vec<PathBuf>>,
    ) -> PyResult<Schema> {
        guard(|| {
            let files = paths_of(files)?;
            let include = include.unwrap_or_default();
            let inner = py
                .detach(|| recordwire::schema::Schema::from_proto(&files, &include, message))
                .map_err(|e| to_py(&e))?;
            Ok(Schema { inner })
        })
    }

    /// Reads a binary `FileDescriptorSet` (its bytes, or the path of a file
    /// holding them: `protoc --include_imports -o set.pb`) and picks
    /// `message`.
    #[staticmethod]
    fn from_descriptor_set(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        message: &str,
    ) -> PyResult<Schema> {
        guard(|| {
            let bytes: Vec<u8> = match data.cast::<PyBytes>() {
                Ok(b) => b.as_bytes().to_vec(),
                Err(_) => {
                    let path: PathBuf = data.extract().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(
                            "data: the set's bytes, or the path of its file",
                        )
                    })?;
                    std::fs::read(&path).map_err(|e| {
                        to_py(&recordwire::Error::io(e).with_file(path.display().to_string()))
                    })?
                }
            };
            let inner = py
                .detach(|| recordwire::schema::Schema::from_descriptor_set(&bytes, message))
                .map_err(|e| to_py(&e))?;
            Ok(Schema { inner })
        })
    }

    /// A built-in schema, by its message's full name (`tensorflow.Event`,
    /// `tensorflow.serving.ExampleListWithContext`, `tensorflow.Example`,
    /// ...): TensorFlow's own `.proto` files, transcribed in the crate.
    #[staticmethod]
    fn builtin(message: &str) -> PyResult<Schema> {
        guard(|| {
            let inner = recordwire::schema::Schema::builtin(message).map_err(|e| to_py(&e))?;
            Ok(Schema { inner })
        })
    }

    /// The schema of a generated message class, its `DESCRIPTOR`, or a
    /// `DescriptorPool` with `message` naming the type: the descriptors of
    /// its file and every file that file imports, as protobuf's Python
    /// package holds them.
    #[staticmethod]
    #[pyo3(signature = (cls, message=None))]
    fn from_class(
        py: Python<'_>,
        cls: &Bound<'_, PyAny>,
        message: Option<&str>,
    ) -> PyResult<Schema> {
        guard(|| {
            let (set, name): (Vec<u8>, String) = py
                .import("recordwire._schema")?
                .call_method1("descriptor_set_of", (cls, message))?
                .extract()?;
            let inner = py
                .detach(|| recordwire::schema::Schema::from_descriptor_set(&set, &name))
                .map_err(|e| to_py(&e))?;
            Ok(Schema { inner })
        })
    }

    /// Pickles as its descriptor set and message name.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let remake = py.get_type::<Schema>().getattr("from_descriptor_set")?;
        Ok((
            remake,
            (
                PyBytes::new(py, &self.inner.descriptor_set()),
                self.inner.message_name().to_owned(),
            ),
        ))
    }

    /// The root message's full name.
    #[getter]
    fn message_name(&self) -> &str {
        self.inner.message_name()
    }

    /// The names of the root message's fields, in field-number order.
    #[getter]
    fn field_names(&self) -> Vec<String> {
        self.inner.field_names().map(str::to_owned).collect()
    }

    /// The schema's files as a binary `FileDescriptorSet`.
    fn descriptor_set<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.descriptor_set())
    }

    /// One serialized message as protobuf's JSON (`MessageToJson` with
    /// `preserving_proto_field_name=True`, compact): with `json_names`, the
    /// lowerCamelCase names; with `print_defaults`, fields without presence
    /// at their defaults too.
    #[pyo3(signature = (data, *, json_names=false, print_defaults=false))]
    fn json(&self, data: &[u8], json_names: bool, print_defaults: bool) -> PyResult<String> {
        guard(|| {
            json_text(&self.inner, data, 0, json_names, print_defaults)
                .map_err(|e| to_py(&recordwire::Error::from(e)))
        })
    }

    /// One serialized message as a dict of Python values (as `ds[i]`).
    fn to_dict<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let view = MessageRef::parse(&self.inner, data, 0)
                .map_err(|e| to_py(&recordwire::Error::from(e)))?;
            let buffer = RecordBuffer::new(None, None);
            message_dict(py, &view, &buffer).map_err(|e| match e {
                Fail::Decode(e) => to_py(&recordwire::Error::from(e)),
                Fail::Py(e) => e,
            })
        })
    }

    fn __repr__(&self) -> String {
        format!("Schema({:?})", self.inner.message_name())
    }
}

/// A message's JSON text.
pub fn json_text(
    schema: &recordwire::schema::Schema,
    data: &[u8],
    base: u64,
    json_names: bool,
    print_defaults: bool,
) -> Result<String, DecodeError> {
    let mut out = Vec::new();
    let options = JsonOptions::default()
        .with_json_names(json_names)
        .with_defaults(print_defaults);
    schema.write_json(&mut out, data, base, &options)?;
    // The printer writes UTF-8 only (strings checked, bytes in base64).
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Record `record` by `schema` as a dict (checked whole first).
pub fn record_dict<'py>(
    py: Python<'py>,
    schema: &recordwire::schema::Schema,
    record: &Record<'_>,
    buffer: &RecordBuffer<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let view = MessageRef::parse(schema, record.data, record.data_offset)
        .map_err(|e| to_py(&record.context(e)))?;
    message_dict(py, &view, buffer).map_err(|e| match e {
        Fail::Decode(e) => to_py(&record.context(e)),
        Fail::Py(e) => e,
    })
}

/// The set fields of `m` (as `MessageToDict` picks them) by name.
fn message_dict<'py>(
    py: Python<'py>,
    m: &MessageRef<'_>,
    buffer: &RecordBuffer<'_>,
) -> Result<Bound<'py, PyDict>, Fail> {
    let dict = PyDict::new(py);
    for f in m.fields() {
        if !f.is_set()? {
            continue;
        }
        let value = if f.is_map() {
            let map = PyDict::new(py);
            for entry in f.entries() {
                let (k, v) = entry?;
                map.set_item(value(py, &k, buffer)?, value(py, &v, buffer)?)?;
            }
            map.into_any()
        } else if f.is_repeated() {
            repeated(py, &f, buffer)?
        } else {
            match f.get()? {
                Some(v) => value(py, &v, buffer)?,
                None => continue,
            }
        };
        dict.set_item(f.name(), value)?;
    }
    Ok(dict)
}

/// A repeated field: a numpy array for numbers (and bools), else a list.
fn repeated<'py>(
    py: Python<'py>,
    f: &recordwire::schema::FieldRef<'_>,
    buffer: &RecordBuffer<'_>,
) -> Result<Bound<'py, PyAny>, Fail> {
    macro_rules! array {
        ($variant:ident, $t:ty) => {{
            let mut out: Vec<$t> = Vec::new();
            for v in f.values() {
                if let ValueRef::$variant(x) = v? {
                    out.push(x);
                }
            }
            return Ok(out.into_pyarray(py).into_any());
        }};
    }
    match f.field_type() {
        FieldType::Double => array!(Double, f64),
        FieldType::Float => array!(Float, f32),
        FieldType::Int32 | FieldType::Sint32 | FieldType::Sfixed32 => array!(Int32, i32),
        FieldType::Int64 | FieldType::Sint64 | FieldType::Sfixed64 => array!(Int64, i64),
        FieldType::Uint32 | FieldType::Fixed32 => array!(Uint32, u32),
        FieldType::Uint64 | FieldType::Fixed64 => array!(Uint64, u64),
        FieldType::Bool => array!(Bool, bool),
        _ => {}
    }
    let out = PyList::empty(py);
    for v in f.values() {
        out.append(value(py, &v?, buffer)?)?;
    }
    Ok(out.into_any())
}

/// One value: `int`, `float`, `bool`, `str`, a `memoryview` for bytes, an
/// enum's name (its number when unknown), a dict for a message, a
/// `datetime`/`timedelta` for a Timestamp/Duration.
fn value<'py>(
    py: Python<'py>,
    v: &ValueRef<'_>,
    buffer: &RecordBuffer<'_>,
) -> Result<Bound<'py, PyAny>, Fail> {
    Ok(match v {
        ValueRef::Double(x) => x.into_pyobject(py)?.into_any(),
        ValueRef::Float(x) => f64::from(*x).into_pyobject(py)?.into_any(),
        ValueRef::Int32(x) => x.into_pyobject(py)?.into_any(),
        ValueRef::Int64(x) => x.into_pyobject(py)?.into_any(),
        ValueRef::Uint32(x) => x.into_pyobject(py)?.into_any(),
        ValueRef::Uint64(x) => x.into_pyobject(py)?.into_any(),
        ValueRef::Bool(x) => pyo3::types::PyBool::new(py, *x).to_owned().into_any(),
        ValueRef::String(s) => match std::str::from_utf8(s) {
            Ok(text) => text.into_pyobject(py)?.into_any(),
            // A proto2 string that is not UTF-8: its bytes, as they are.
            Err(_) => buffer.slice(py, s)?,
        },
        ValueRef::Bytes(b) => buffer.slice(py, b)?,
        ValueRef::Enum(n, name) => match name {
            Some(name) => name.into_pyobject(py)?.into_any(),
            None => n.into_pyobject(py)?.into_any(),
        },
        ValueRef::Message(m) => match m.message_name() {
            "google.protobuf.Timestamp" | "google.protobuf.Duration" => time(py, m)?,
            _ => message_dict(py, m, buffer)?.into_any(),
        },
    })
}

/// A Timestamp as an aware UTC `datetime`, a Duration as a `timedelta`
/// (to the microsecond: Python's types hold no nanoseconds; the nanoseconds
/// are truncated toward zero).
fn time<'py>(py: Python<'py>, m: &MessageRef<'_>) -> Result<Bound<'py, PyAny>, Fail> {
    let int = |name: &str| -> Result<i64, Fail> {
        Ok(
            match m
                .field(name)
                .map(|f| f.get_or_default())
                .transpose()?
                .flatten()
            {
                Some(ValueRef::Int64(v)) => v,
                Some(ValueRef::Int32(v)) => i64::from(v),
                _ => 0,
            },
        )
    };
    let (seconds, nanos) = (int("seconds")?, int("nanos")?);
    let datetime = py.import("datetime")?;
    let delta = datetime
        .getattr("timedelta")?
        .call((0, seconds, nanos / 1000), None)?;
    if m.message_name() == "google.protobuf.Duration" {
        return Ok(delta);
    }
    if !(-62_135_596_800..=253_402_300_799).contains(&seconds) {
        return Err(Fail::Py(PyValueError::new_err(format!(
            "a Timestamp of {seconds} s is outside the years 1 to 9999"
        ))));
    }
    let utc = datetime.getattr("timezone")?.getattr("utc")?;
    let epoch = datetime
        .getattr("datetime")?
        .call((1970, 1, 1, 0, 0, 0, 0, utc), None)?;
    Ok(epoch.call_method1("__add__", (delta,))?)
}
