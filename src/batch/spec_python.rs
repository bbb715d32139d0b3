//! A [`Spec`](super::Spec) as TensorFlow Python (`tf.io.FixedLenFeature`, …)
//! and OneFlow Python (`flow.nn.OFRecordRawDecoder`).

use std::fmt::Write as _;

use super::spec::{DType, DefaultValue, FeatureSpec, Form, Spec};
use crate::names::{write_json_string, OptionName};
use crate::view::PayloadKind;

/// A Python `str` literal.
pub(super) fn py_str(s: &[u8]) -> String {
    let mut out = Vec::new();
    write_json_string(&mut out, s);
    String::from_utf8_lossy(&out).into_owned()
}

/// A Python `bytes` literal.
pub(super) fn py_bytes(s: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &b in s {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
    out
}

pub(super) fn py_default(d: &DefaultValue, scalar: bool) -> String {
    let items: Vec<String> = match d {
        DefaultValue::Int(v) => v.iter().map(i64::to_string).collect(),
        DefaultValue::Float(v) => v
            .iter()
            .map(|&x| {
                if x.is_nan() {
                    "float(\"nan\")".into()
                } else if x.is_infinite() {
                    (if x > 0.0 {
                        "float(\"inf\")"
                    } else {
                        "float(\"-inf\")"
                    })
                    .into()
                } else if x == x.trunc() && x.abs() < 1e16 {
                    format!("{x:.1}")
                } else {
                    format!("{x}")
                }
            })
            .collect(),
        DefaultValue::Bytes(v) => v.iter().map(|b| py_bytes(b)).collect(),
    };
    if scalar {
        items.join(", ")
    } else {
        format!("[{}]", items.join(", "))
    }
}

pub(super) fn py_shape(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    format!("[{}]", dims.join(", "))
}

pub(super) fn py_tuple(shape: &[usize]) -> String {
    match shape {
        [] => "()".into(),
        [d] => format!("({d},)"),
        _ => py_shape(shape).replace('[', "(").replace(']', ")"),
    }
}

pub(super) fn tf_dtype(d: DType) -> String {
    match d {
        DType::Bytes => "tf.string".into(),
        other => format!("tf.{}", other.name()),
    }
}

pub(super) fn tf_feature(f: &FeatureSpec) -> String {
    match &f.form {
        Form::FixedLen { shape, default } => {
            let mut s = format!(
                "tf.io.FixedLenFeature({}, {}",
                py_shape(shape),
                tf_dtype(f.dtype)
            );
            if let Some(d) = default {
                let _ = write!(s, ", default_value={}", py_default(d, shape.is_empty()));
            }
            s + ")"
        }
        Form::VarLen => format!("tf.io.VarLenFeature({})", tf_dtype(f.dtype)),
        Form::FixedLenSequence {
            shape,
            allow_missing,
            default,
        } => {
            let mut s = format!(
                "tf.io.FixedLenSequenceFeature({}, {}, allow_missing={}",
                py_shape(shape),
                tf_dtype(f.dtype),
                if *allow_missing { "True" } else { "False" }
            );
            if let Some(d) = default {
                let _ = write!(s, ", default_value={}", py_default(d, true));
            }
            s + ")"
        }
        Form::OfRecordRaw {
            shape,
            dim1_varying_length,
            auto_zero_padding,
        } => format!(
            "flow.nn.OFRecordRawDecoder({}, shape={}, dtype=flow.{}, dim1_varying_length={}, \
             auto_zero_padding={})",
            py_str(f.name.as_bytes()),
            py_tuple(shape),
            f.dtype.name(),
            if *dim1_varying_length {
                "True"
            } else {
                "False"
            },
            if *auto_zero_padding { "True" } else { "False" },
        ),
    }
}

/// The spec as Python source (TensorFlow's, or OneFlow's decoders).
impl Spec {
    /// The equivalent TensorFlow Python: `features = {...}` for tf.Example,
    /// `context_features = {...}` and `sequence_features = {...}` for
    /// SequenceExample; OFRecord raw features are written as OneFlow's
    /// `flow.nn.OFRecordRawDecoder(...)` calls.
    pub fn to_tensorflow(&self) -> String {
        let mut s = String::from("import tensorflow as tf\n\n");
        let python_features = |s: &mut String, var: &str, features: &[FeatureSpec]| {
            let _ = writeln!(s, "{var} = {{");
            for f in features {
                let _ = writeln!(s, "    {}: {},", py_str(f.name.as_bytes()), tf_feature(f));
            }
            s.push_str("}\n");
        };
        match self.payload() {
            PayloadKind::SequenceExample => {
                python_features(&mut s, "context_features", self.features());
                python_features(&mut s, "sequence_features", self.sequence());
            }
            PayloadKind::Example => python_features(&mut s, "features", self.features()),
            PayloadKind::OfRecord | PayloadKind::Raw => {
                // OneFlow has a decoder for the raw form only; the others are
                // listed as comments.
                s = String::from("import oneflow as flow\n\ndecoders = {\n");
                for f in self.features() {
                    let name = py_str(f.name.as_bytes());
                    let _ = match f.form {
                        Form::OfRecordRaw { .. } => writeln!(s, "    {name}: {},", tf_feature(f)),
                        _ => writeln!(
                            s,
                            "    # {name}: {} {} (no OneFlow decoder: recordwire only)",
                            f.form.name(),
                            f.dtype
                        ),
                    };
                }
                s.push_str("}\n");
            }
        }
        s
    }
}
