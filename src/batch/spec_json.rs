//! A [`Spec`](super::Spec) as JSON text: reading (with the member's path in
//! every error) and writing.

use super::spec::{spec_error, DType, DefaultValue, FeatureSpec, Form, Spec, SpecError};
use crate::json_text::parse_json;
use crate::json_text::JsonValue;
use crate::names::{write_json_string, OptionName};
use crate::view::PayloadKind;

pub(super) fn json_str<'v>(v: &'v JsonValue, path: &str) -> Result<&'v str, SpecError> {
    match v {
        JsonValue::String(s) => {
            std::str::from_utf8(s).map_err(|_| spec_error(path, "not valid UTF-8"))
        }
        _ => Err(spec_error(path, "expected a string")),
    }
}

pub(super) fn json_bool(v: &JsonValue, path: &str) -> Result<bool, SpecError> {
    match v {
        JsonValue::Bool(b) => Ok(*b),
        _ => Err(spec_error(path, "expected true or false")),
    }
}

pub(super) fn json_shape(v: &JsonValue, path: &str) -> Result<Vec<usize>, SpecError> {
    let JsonValue::Array(items) = v else {
        return Err(spec_error(path, "expected an array of sizes"));
    };
    items
        .iter()
        .map(|d| match d {
            JsonValue::Number(n) => n
                .parse::<usize>()
                .map_err(|_| spec_error(path, format!("`{n}` is not a size (a whole number ≥ 0)"))),
            _ => Err(spec_error(path, "expected an array of sizes")),
        })
        .collect()
}

pub(super) fn json_default(v: &JsonValue, path: &str) -> Result<DefaultValue, SpecError> {
    let items = match v {
        JsonValue::Array(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    let all_ints = items
        .iter()
        .all(|i| matches!(i, JsonValue::Number(n) if n.parse::<i64>().is_ok()));
    if all_ints {
        let ints = items
            .iter()
            .map(|i| match i {
                JsonValue::Number(n) => n.parse::<i64>().unwrap_or_default(),
                _ => 0,
            })
            .collect();
        return Ok(DefaultValue::Int(ints));
    }
    if items.iter().all(|i| matches!(i, JsonValue::String(_))) {
        let bytes = items
            .iter()
            .map(|i| match i {
                JsonValue::String(s) => s.clone(),
                _ => Vec::new(),
            })
            .collect();
        return Ok(DefaultValue::Bytes(bytes));
    }
    items
        .iter()
        .map(|i| match i {
            JsonValue::Number(n) => n
                .parse::<f64>()
                .map_err(|_| spec_error(path, format!("`{n}` is not a number"))),
            JsonValue::String(s) => match s.as_slice() {
                b"NaN" => Ok(f64::NAN),
                b"Infinity" => Ok(f64::INFINITY),
                b"-Infinity" => Ok(f64::NEG_INFINITY),
                _ => Err(spec_error(path, "mixes strings and numbers")),
            },
            _ => Err(spec_error(path, "expected numbers or strings")),
        })
        .collect::<Result<Vec<f64>, _>>()
        .map(DefaultValue::Float)
}

pub(super) fn features_from_json(v: &JsonValue, part: &str) -> Result<Vec<FeatureSpec>, SpecError> {
    let JsonValue::Object(members) = v else {
        return Err(spec_error(part, "expected an object of features"));
    };
    members
        .iter()
        .map(|(name, f)| {
            let name = String::from_utf8(name.clone())
                .map_err(|_| spec_error(part, "a feature name is not valid UTF-8"))?;
            feature_from_json(name, f, part)
        })
        .collect()
}

pub(super) fn feature_from_json(
    name: String,
    v: &JsonValue,
    part: &str,
) -> Result<FeatureSpec, SpecError> {
    let at = format!("{part}.{name}");
    let JsonValue::Object(members) = v else {
        return Err(spec_error(at, "expected an object"));
    };
    let (mut form, mut dtype, mut shape, mut default) = (None, None, None, None);
    let (mut allow_missing, mut sparse, mut borrow, mut varying, mut padding) =
        (false, false, false, false, false);
    for (key, value) in members {
        let key = String::from_utf8_lossy(key);
        let p = format!("{at}.{key}");
        match &*key {
            "form" => form = Some(json_str(value, &p)?.to_owned()),
            "dtype" => {
                let s = json_str(value, &p)?;
                dtype = Some(
                    s.parse::<DType>()
                        .map_err(|e| spec_error(&p, e.to_string()))?,
                );
            }
            "shape" => shape = Some(json_shape(value, &p)?),
            "default" => default = Some(json_default(value, &p)?),
            "allow_missing" => allow_missing = json_bool(value, &p)?,
            "sparse" => sparse = json_bool(value, &p)?,
            "borrow" => borrow = json_bool(value, &p)?,
            "dim1_varying_length" => varying = json_bool(value, &p)?,
            "auto_zero_padding" => padding = json_bool(value, &p)?,
            _ => return Err(spec_error(p, "unknown member")),
        }
    }
    let dtype = dtype.ok_or_else(|| spec_error(&at, "dtype is missing"))?;
    // Floats that JSON cannot write as numbers are strings, as in protobuf's JSON.
    if let (Some(DefaultValue::Bytes(b)), DType::Float32 | DType::Float64) = (&default, dtype) {
        let special = |s: &[u8]| match s {
            b"NaN" => Some(f64::NAN),
            b"Infinity" => Some(f64::INFINITY),
            b"-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        };
        if let Some(v) = b.iter().map(|s| special(s)).collect::<Option<Vec<f64>>>() {
            default = Some(DefaultValue::Float(v));
        }
    }
    let form = form.ok_or_else(|| spec_error(&at, "form is missing"))?;
    let needs_shape = || {
        shape
            .clone()
            .ok_or_else(|| spec_error(&at, "shape is missing"))
    };
    let form = match form.as_str() {
        "fixed_len" => Form::FixedLen {
            shape: needs_shape()?,
            default,
        },
        "var_len" => Form::VarLen,
        "fixed_len_sequence" => Form::FixedLenSequence {
            shape: needs_shape()?,
            allow_missing,
            default,
        },
        "ofrecord_raw" => Form::OfRecordRaw {
            shape: needs_shape()?,
            dim1_varying_length: varying,
            auto_zero_padding: padding,
        },
        other => {
            return Err(spec_error(
                format!("{at}.form"),
                format!(
                    "unknown form `{other}` (expected one of: fixed_len, var_len, \
                     fixed_len_sequence, ofrecord_raw)"
                ),
            ))
        }
    };
    Ok(FeatureSpec {
        name,
        dtype,
        form,
        sparse,
        borrow,
    })
}

pub(super) fn write_default(out: &mut Vec<u8>, d: &DefaultValue, scalar: bool) {
    if !scalar {
        out.push(b'[');
    }
    let n = d.len();
    for i in 0..n {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        match d {
            DefaultValue::Int(v) => out.extend_from_slice(v[i].to_string().as_bytes()),
            DefaultValue::Float(v) => {
                let x = v[i];
                let s = if x.is_nan() {
                    "\"NaN\"".to_string()
                } else if x.is_infinite() {
                    (if x > 0.0 {
                        "\"Infinity\""
                    } else {
                        "\"-Infinity\""
                    })
                    .to_string()
                } else if x == x.trunc() && x.abs() < 1e16 {
                    format!("{x:.1}")
                } else {
                    format!("{x}")
                };
                out.extend_from_slice(s.as_bytes());
            }
            DefaultValue::Bytes(v) => write_json_string(out, &v[i]),
        }
    }
    if !scalar {
        out.push(b']');
    }
}

pub(super) fn write_shape(out: &mut Vec<u8>, shape: &[usize]) {
    out.push(b'[');
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(d.to_string().as_bytes());
    }
    out.push(b']');
}

pub(super) fn features_to_json(out: &mut Vec<u8>, features: &[FeatureSpec]) {
    if features.is_empty() {
        out.extend_from_slice(b"{}");
        return;
    }
    out.extend_from_slice(b"{\n");
    for (i, f) in features.iter().enumerate() {
        out.extend_from_slice(b"    ");
        write_json_string(out, f.name.as_bytes());
        out.extend_from_slice(b": {\"form\": \"");
        out.extend_from_slice(f.form.name().as_bytes());
        out.extend_from_slice(b"\", \"dtype\": \"");
        out.extend_from_slice(f.dtype.name().as_bytes());
        out.push(b'"');
        if let Some(shape) = f.form.shape() {
            out.extend_from_slice(b", \"shape\": ");
            write_shape(out, shape);
        }
        match &f.form {
            Form::FixedLen {
                shape,
                default: Some(d),
            } => {
                out.extend_from_slice(b", \"default\": ");
                write_default(out, d, shape.is_empty());
            }
            Form::FixedLenSequence {
                allow_missing,
                default,
                ..
            } => {
                out.extend_from_slice(b", \"allow_missing\": ");
                out.extend_from_slice(if *allow_missing { b"true" } else { b"false" });
                if let Some(d) = default {
                    out.extend_from_slice(b", \"default\": ");
                    write_default(out, d, true);
                }
            }
            Form::OfRecordRaw {
                dim1_varying_length,
                auto_zero_padding,
                ..
            } => {
                if *dim1_varying_length {
                    out.extend_from_slice(b", \"dim1_varying_length\": true");
                }
                if *auto_zero_padding {
                    out.extend_from_slice(b", \"auto_zero_padding\": true");
                }
            }
            _ => {}
        }
        if f.sparse {
            out.extend_from_slice(b", \"sparse\": true");
        }
        if f.borrow {
            out.extend_from_slice(b", \"borrow\": true");
        }
        out.push(b'}');
        if i + 1 < features.len() {
            out.push(b',');
        }
        out.push(b'\n');
    }
    out.extend_from_slice(b"  }");
}

/// The spec's JSON form: read and written here, so that the spec itself
/// knows nothing of its printers.
impl Spec {
    /// Reads a spec from its JSON text (see the module docs for the format).
    pub fn from_json(text: &[u8]) -> Result<Spec, SpecError> {
        let v = parse_json(text).map_err(|e| spec_error("", e.to_string()))?;
        Spec::from_value(&v)
    }

    /// Reads a spec from parsed JSON.
    pub fn from_value(v: &JsonValue) -> Result<Spec, SpecError> {
        let JsonValue::Object(members) = v else {
            return Err(spec_error("", "a spec is a JSON object"));
        };
        let mut payload = PayloadKind::Example;
        let (mut features, mut sequence) = (Vec::new(), None);
        for (key, value) in members {
            match key.as_slice() {
                b"payload" => {
                    let s = json_str(value, "payload")?;
                    payload = s
                        .parse()
                        .map_err(|e| spec_error("payload", format!("{e}")))?;
                }
                b"features" => features = features_from_json(value, "features")?,
                b"sequence" => sequence = Some(features_from_json(value, "sequence")?),
                other => {
                    return Err(spec_error(
                        String::from_utf8_lossy(other),
                        "unknown member (expected payload, features, sequence)",
                    ))
                }
            }
        }
        if sequence.is_some() && payload != PayloadKind::SequenceExample {
            return Err(spec_error(
                "sequence",
                format!("only a sequence_example spec has a sequence part, not {payload}"),
            ));
        }
        Spec::new(payload, features, sequence.unwrap_or_default())
    }

    /// The spec as JSON text, one feature per line; [`Spec::from_json`] reads it back.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        out.extend_from_slice(b"{\n  \"payload\": \"");
        out.extend_from_slice(self.payload().name().as_bytes());
        out.extend_from_slice(b"\",\n  \"features\": ");
        features_to_json(&mut out, self.features());
        if self.payload() == PayloadKind::SequenceExample {
            out.extend_from_slice(b",\n  \"sequence\": ");
            features_to_json(&mut out, self.sequence());
        }
        out.extend_from_slice(b"\n}\n");
        String::from_utf8_lossy(&out).into_owned()
    }
}
