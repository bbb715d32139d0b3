//! [`Spec`]: the features a batch decode wants, each with a type and a form
//! (TensorFlow's `FixedLenFeature`, `VarLenFeature`,
//! `FixedLenSequenceFeature`, and OneFlow's raw decoder), as Rust values and
//! as the JSON text that `recordwire inspect --spec` prints.

use crate::names::OptionName;
use crate::view::{hash_name, Kind, PayloadKind};

/// The element type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// 64-bit signed integers (`int64_list`).
    Int64,
    /// 32-bit floats (`float_list`).
    Float32,
    /// Byte strings (`bytes_list`).
    Bytes,
    /// 32-bit signed integers (OFRecord's `int32_list`).
    Int32,
    /// 64-bit floats (OFRecord's `double_list`).
    Float64,
    /// 8-bit signed integers (OFRecord raw decoding only, OneFlow's `char`/`int8`).
    Int8,
    /// 8-bit unsigned integers (OFRecord raw decoding only).
    UInt8,
}

impl OptionName for DType {
    const WHAT: &'static str = "dtype";
    const ALL: &'static [Self] = &[
        DType::Int64,
        DType::Float32,
        DType::Bytes,
        DType::Int32,
        DType::Float64,
        DType::Int8,
        DType::UInt8,
    ];
    const ALIASES: &'static [(&'static str, Self)] = &[
        ("float", DType::Float32),
        ("double", DType::Float64),
        ("string", DType::Bytes),
        ("char", DType::Int8),
    ];

    fn name(self) -> &'static str {
        match self {
            DType::Int64 => "int64",
            DType::Float32 => "float32",
            DType::Bytes => "bytes",
            DType::Int32 => "int32",
            DType::Float64 => "float64",
            DType::Int8 => "int8",
            DType::UInt8 => "uint8",
        }
    }
}

crate::option_names!(DType);

impl DType {
    /// Bytes per value (0 for [`DType::Bytes`], whose values vary).
    pub fn width(self) -> usize {
        match self {
            DType::Int64 | DType::Float64 => 8,
            DType::Int32 | DType::Float32 => 4,
            DType::Int8 | DType::UInt8 => 1,
            DType::Bytes => 0,
        }
    }

    /// numpy's type string for the values as a column stores them
    /// (little-endian numbers; bytes data as `|u1`): the `descr` of a
    /// `.npy` header and the `typestr` of numpy's array interface.
    ///
    /// ```
    /// use recordwire::batch::DType;
    /// assert_eq!(DType::Float32.numpy_typestr(), "<f4");
    /// assert_eq!(DType::Bytes.numpy_typestr(), "|u1");
    /// ```
    pub fn numpy_typestr(self) -> &'static str {
        match self {
            DType::Int64 => "<i8",
            DType::Float32 => "<f4",
            DType::Int32 => "<i4",
            DType::Float64 => "<f8",
            DType::Int8 => "|i1",
            DType::UInt8 | DType::Bytes => "|u1",
        }
    }

    /// The list kind that holds this type as it is, if any.
    pub fn kind(self) -> Option<Kind> {
        match self {
            DType::Int64 => Some(Kind::Int64),
            DType::Float32 => Some(Kind::Float),
            DType::Bytes => Some(Kind::Bytes),
            DType::Int32 => Some(Kind::Int32),
            DType::Float64 => Some(Kind::Double),
            DType::Int8 | DType::UInt8 => None,
        }
    }

    /// The type that holds a list kind's values.
    pub fn of_kind(kind: Kind) -> DType {
        match kind {
            Kind::Int64 => DType::Int64,
            Kind::Float => DType::Float32,
            Kind::Bytes => DType::Bytes,
            Kind::Int32 => DType::Int32,
            Kind::Double => DType::Float64,
        }
    }

    fn tensorflow(self) -> bool {
        matches!(self, DType::Int64 | DType::Float32 | DType::Bytes)
    }
}

/// A default value, as written in a spec: its elements in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// Integers (for integer columns, and float columns, which convert them).
    Int(Vec<i64>),
    /// Floats (for float columns).
    Float(Vec<f64>),
    /// Byte strings (for bytes columns).
    Bytes(Vec<Vec<u8>>),
}

impl DefaultValue {
    pub(super) fn len(&self) -> usize {
        match self {
            DefaultValue::Int(v) => v.len(),
            DefaultValue::Float(v) => v.len(),
            DefaultValue::Bytes(v) => v.len(),
        }
    }
}

/// What a feature becomes in the batch: the form of its column.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// TensorFlow's `FixedLenFeature(shape, dtype, default_value)`: exactly
    /// `prod(shape)` values per record, a dense column `[batch, *shape]`. A
    /// record without the feature takes the default, or is an error when
    /// there is none.
    FixedLen {
        /// The shape of one record's values.
        shape: Vec<usize>,
        /// Used when a record lacks the feature: `prod(shape)` values.
        default: Option<DefaultValue>,
    },
    /// TensorFlow's `VarLenFeature(dtype)`: any number of values per record,
    /// a ragged column (values + `row_splits`), or TensorFlow's sparse form
    /// with [`FeatureSpec::sparse`]. In a SequenceExample's sequence spec:
    /// ragged over frames (values + frame splits + row splits).
    VarLen,
    /// TensorFlow's `FixedLenSequenceFeature(shape, dtype, allow_missing,
    /// default_value)`: a multiple of `prod(shape)` values per record (in a
    /// sequence spec: `prod(shape)` values per frame), a dense column
    /// `[batch, max_len, *shape]` padded with the default, plus the lengths.
    FixedLenSequence {
        /// The shape of one element (one frame).
        shape: Vec<usize>,
        /// Whether a record may lack the feature (length 0) rather than be an error.
        allow_missing: bool,
        /// The padding value (one value; zero or empty when absent).
        default: Option<DefaultValue>,
    },
    /// OneFlow's `OFRecordRawDecoder(name, shape, dtype, dim1_varying_length,
    /// auto_zero_padding)`: the feature's list converted to `dtype` (C++
    /// `static_cast`; a bytes list must hold one value, whose bytes are read
    /// as `int8`s), a dense column `[batch, *shape]`. Without either flag a
    /// record must hold exactly `prod(shape)` values; with either, at most
    /// that many, the rest zero; the lengths are kept.
    OfRecordRaw {
        /// The shape of one record's values.
        shape: Vec<usize>,
        /// Records may hold fewer values than the shape (OneFlow's dynamic first dimension).
        dim1_varying_length: bool,
        /// Records may hold fewer values; the rest are zeros.
        auto_zero_padding: bool,
    },
}

impl Form {
    /// The form's name in spec JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Form::FixedLen { .. } => "fixed_len",
            Form::VarLen => "var_len",
            Form::FixedLenSequence { .. } => "fixed_len_sequence",
            Form::OfRecordRaw { .. } => "ofrecord_raw",
        }
    }

    /// The shape of one record's (or frame's) values, for the forms that have one.
    pub fn shape(&self) -> Option<&[usize]> {
        match self {
            Form::FixedLen { shape, .. }
            | Form::FixedLenSequence { shape, .. }
            | Form::OfRecordRaw { shape, .. } => Some(shape),
            Form::VarLen => None,
        }
    }
}

/// One wanted feature: its name, element type and form, plus output options.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureSpec {
    /// The feature's name (the map key).
    pub name: String,
    /// The element type of its column.
    pub dtype: DType,
    /// The column's form.
    pub form: Form,
    /// For [`Form::VarLen`]: also give TensorFlow's sparse form (indices,
    /// values, dense shape).
    pub sparse: bool,
    /// For bytes columns: borrow each value from the input (`&[u8]` into the
    /// mapped file) instead of copying it into the column's data buffer.
    pub borrow: bool,
}

impl FeatureSpec {
    fn new(name: impl Into<String>, dtype: DType, form: Form) -> Self {
        FeatureSpec {
            name: name.into(),
            dtype,
            form,
            sparse: false,
            borrow: false,
        }
    }

    /// A [`Form::FixedLen`] feature with no default.
    pub fn fixed_len(name: impl Into<String>, dtype: DType, shape: &[usize]) -> Self {
        let shape = shape.to_vec();
        Self::new(
            name,
            dtype,
            Form::FixedLen {
                shape,
                default: None,
            },
        )
    }

    /// A [`Form::VarLen`] feature.
    pub fn var_len(name: impl Into<String>, dtype: DType) -> Self {
        Self::new(name, dtype, Form::VarLen)
    }

    /// A [`Form::FixedLenSequence`] feature (missing records are errors until
    /// [`allow_missing`](Self::allow_missing)).
    pub fn fixed_len_sequence(name: impl Into<String>, dtype: DType, shape: &[usize]) -> Self {
        let form = Form::FixedLenSequence {
            shape: shape.to_vec(),
            allow_missing: false,
            default: None,
        };
        Self::new(name, dtype, form)
    }

    /// A [`Form::OfRecordRaw`] feature with both flags off.
    pub fn ofrecord_raw(name: impl Into<String>, dtype: DType, shape: &[usize]) -> Self {
        let form = Form::OfRecordRaw {
            shape: shape.to_vec(),
            dim1_varying_length: false,
            auto_zero_padding: false,
        };
        Self::new(name, dtype, form)
    }

    /// Sets the default value ([`Form::FixedLen`], [`Form::FixedLenSequence`]).
    #[must_use]
    pub fn default_value(mut self, value: DefaultValue) -> Self {
        match &mut self.form {
            Form::FixedLen { default, .. } | Form::FixedLenSequence { default, .. } => {
                *default = Some(value)
            }
            Form::VarLen | Form::OfRecordRaw { .. } => {}
        }
        self
    }

    /// Sets `allow_missing` ([`Form::FixedLenSequence`]).
    #[must_use]
    pub fn allow_missing(mut self, allow: bool) -> Self {
        if let Form::FixedLenSequence { allow_missing, .. } = &mut self.form {
            *allow_missing = allow;
        }
        self
    }

    /// Sets OneFlow's flags ([`Form::OfRecordRaw`]).
    #[must_use]
    pub fn ofrecord_flags(mut self, varying: bool, padding: bool) -> Self {
        if let Form::OfRecordRaw {
            dim1_varying_length,
            auto_zero_padding,
            ..
        } = &mut self.form
        {
            (*dim1_varying_length, *auto_zero_padding) = (varying, padding);
        }
        self
    }

    /// Asks for TensorFlow's sparse form too ([`Form::VarLen`]).
    #[must_use]
    pub fn sparse(mut self) -> Self {
        self.sparse = true;
        self
    }

    /// Borrows bytes values from the input instead of copying them.
    #[must_use]
    pub fn borrowed(mut self) -> Self {
        self.borrow = true;
        self
    }

    /// Whether `self` and `o` decode alike: equal, with float defaults
    /// compared by their bits (so that a NaN default equals itself).
    pub(crate) fn same(&self, o: &FeatureSpec) -> bool {
        let default = |a: &Option<DefaultValue>, b: &Option<DefaultValue>| match (a, b) {
            (Some(DefaultValue::Float(x)), Some(DefaultValue::Float(y))) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            _ => a == b,
        };
        let form = match (&self.form, &o.form) {
            (
                Form::FixedLen { shape, default: a },
                Form::FixedLen {
                    shape: shape_b,
                    default: b,
                },
            ) => shape == shape_b && default(a, b),
            (
                Form::FixedLenSequence {
                    shape,
                    allow_missing,
                    default: a,
                },
                Form::FixedLenSequence {
                    shape: shape_b,
                    allow_missing: missing_b,
                    default: b,
                },
            ) => shape == shape_b && allow_missing == missing_b && default(a, b),
            (a, b) => a == b,
        };
        form && (&self.name, self.dtype, self.sparse, self.borrow)
            == (&o.name, o.dtype, o.sparse, o.borrow)
    }

    /// Values per record (FixedLen, OfRecordRaw) or per element/frame (FixedLenSequence).
    pub(crate) fn elements(&self) -> usize {
        self.form.shape().map_or(1, |s| s.iter().product())
    }
}

/// A spec that cannot be used: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid spec: {}{message}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
pub struct SpecError {
    /// Where in the spec (`features.label.default`), empty for the whole spec.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

pub(super) fn spec_error(path: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError {
        path: path.into(),
        message: message.into(),
    }
}

/// An open-addressing table from names to column numbers, built once per spec
/// so that each map entry of a record is matched with one probe.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NameTable {
    /// Column number + 1, or 0 for an empty slot.
    slots: Vec<u32>,
    /// The hash of each slot's name (compared before the bytes).
    hashes: Vec<u32>,
}

impl NameTable {
    fn new(features: &[FeatureSpec]) -> Self {
        let size = (features.len() * 2).next_power_of_two().max(8);
        let mut t = NameTable {
            slots: vec![0; size],
            hashes: vec![0; size],
        };
        for (i, f) in features.iter().enumerate() {
            let h = hash_name(f.name.as_bytes());
            let mut s = h as usize & (size - 1);
            while t.slots[s] != 0 {
                s = (s + 1) & (size - 1);
            }
            t.slots[s] = i as u32 + 1;
            t.hashes[s] = h;
        }
        t
    }

    /// The column of `name`, if the spec has it.
    #[inline]
    pub(crate) fn find(&self, features: &[FeatureSpec], name: &[u8]) -> Option<usize> {
        let h = hash_name(name);
        let mask = self.slots.len() - 1;
        let mut s = h as usize & mask;
        loop {
            let c = *self.slots.get(s)?;
            if c == 0 {
                return None;
            }
            if self.hashes[s] == h {
                let i = c as usize - 1;
                if features.get(i)?.name.as_bytes() == name {
                    return Some(i);
                }
            }
            s = (s + 1) & mask;
        }
    }
}

/// The features a batch decode wants: for a tf.Example or an OFRecord one
/// list, for a SequenceExample a context list and a sequence (feature list)
/// list.
///
/// Built from Rust values ([`Spec::example`], [`Spec::sequence_example`],
/// [`Spec::ofrecord`]) or from JSON ([`Spec::from_json`], the format
/// [`Spec::to_json`] and `recordwire inspect --spec` print); checked when
/// built, so a decode never meets an impossible spec.
///
/// ```
/// use recordwire::batch::{DType, DefaultValue, FeatureSpec, Spec};
///
/// let spec = Spec::example(vec![
///     FeatureSpec::fixed_len("label", DType::Int64, &[]).default_value(DefaultValue::Int(vec![-1])),
///     FeatureSpec::var_len("tokens", DType::Int64),
/// ])
/// .unwrap();
/// let json = spec.to_json();
/// assert_eq!(Spec::from_json(json.as_bytes()).unwrap(), spec);
/// assert!(spec.to_tensorflow().contains(r#""tokens": tf.io.VarLenFeature(tf.int64),"#));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    payload: PayloadKind,
    features: Vec<FeatureSpec>,
    sequence: Vec<FeatureSpec>,
    pub(crate) table: NameTable,
    pub(crate) sequence_table: NameTable,
}

impl Spec {
    /// A spec for payloads of `payload`: `features` (a SequenceExample's
    /// context) and `sequence` (a SequenceExample's feature lists; empty
    /// otherwise). Checks every feature against its payload.
    pub fn new(
        payload: PayloadKind,
        features: Vec<FeatureSpec>,
        sequence: Vec<FeatureSpec>,
    ) -> Result<Spec, SpecError> {
        if payload == PayloadKind::Raw {
            return Err(spec_error(
                "payload",
                "a spec reads example, sequence_example or ofrecord payloads, not raw bytes",
            ));
        }
        if payload != PayloadKind::SequenceExample && !sequence.is_empty() {
            return Err(spec_error(
                "sequence",
                format!("only a sequence_example spec has a sequence part, not {payload}"),
            ));
        }
        check_features(payload, &features, false)?;
        check_features(payload, &sequence, true)?;
        Ok(Spec {
            payload,
            table: NameTable::new(&features),
            sequence_table: NameTable::new(&sequence),
            features,
            sequence,
        })
    }

    /// A spec for tf.Example payloads.
    pub fn example(features: Vec<FeatureSpec>) -> Result<Spec, SpecError> {
        Spec::new(PayloadKind::Example, features, Vec::new())
    }

    /// A spec for tf.SequenceExample payloads: context features and sequence features.
    pub fn sequence_example(
        context: Vec<FeatureSpec>,
        sequence: Vec<FeatureSpec>,
    ) -> Result<Spec, SpecError> {
        Spec::new(PayloadKind::SequenceExample, context, sequence)
    }

    /// A spec for OFRecord payloads.
    pub fn ofrecord(features: Vec<FeatureSpec>) -> Result<Spec, SpecError> {
        Spec::new(PayloadKind::OfRecord, features, Vec::new())
    }

    /// The payload type the spec reads.
    pub fn payload(&self) -> PayloadKind {
        self.payload
    }

    /// The features (a SequenceExample's context features), in column order.
    pub fn features(&self) -> &[FeatureSpec] {
        &self.features
    }

    /// A SequenceExample's sequence features, in column order (empty otherwise).
    pub fn sequence(&self) -> &[FeatureSpec] {
        &self.sequence
    }

    /// The column of the feature named `name`, if the spec has it.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.table.find(&self.features, name.as_bytes())
    }

    /// The names of the columns of one row per record (`export`, the Arrow
    /// form): the features' names, then the sequence features', each
    /// `sequence.NAME` where a context feature has the name too. An error
    /// when two columns would still have the same name (a context feature
    /// `sequence.x` beside a sequence feature `x` that the context has too).
    pub fn column_names(&self) -> Result<Vec<String>, SpecError> {
        let features = self.features.iter().map(|f| f.name.clone());
        let sequence = self.sequence.iter().map(|f| match self.find(&f.name) {
            Some(_) => format!("sequence.{}", f.name),
            None => f.name.clone(),
        });
        let names: Vec<String> = features.chain(sequence).collect();
        let mut seen = std::collections::HashSet::new();
        for n in &names {
            if !seen.insert(n.as_str()) {
                return Err(spec_error(
                    "sequence",
                    format!(
                        "two columns would be named {}: rename a feature of the spec",
                        crate::names::quoted(n.as_bytes())
                    ),
                ));
            }
        }
        Ok(names)
    }
}

fn check_features(
    payload: PayloadKind,
    features: &[FeatureSpec],
    sequence: bool,
) -> Result<(), SpecError> {
    let part = if sequence { "sequence" } else { "features" };
    for (i, f) in features.iter().enumerate() {
        let at = format!("{part}.{}", f.name);
        if features[..i].iter().any(|g| g.name == f.name) {
            return Err(spec_error(at, "named twice"));
        }
        let form_ok = match (&f.form, payload, sequence) {
            (Form::OfRecordRaw { .. }, PayloadKind::OfRecord, _) => true,
            (Form::OfRecordRaw { .. }, _, _) => false,
            (Form::FixedLen { .. }, _, false) | (Form::VarLen, _, _) => true,
            (Form::FixedLen { .. }, _, true) => false,
            (Form::FixedLenSequence { .. }, PayloadKind::Example, false) => true,
            (Form::FixedLenSequence { .. }, PayloadKind::SequenceExample, true) => true,
            (Form::FixedLenSequence { .. }, _, _) => false,
        };
        if !form_ok {
            let place = if sequence {
                "a sequence_example's sequence part".to_string()
            } else if payload == PayloadKind::SequenceExample {
                "a sequence_example's context".to_string()
            } else {
                format!("an {payload} spec")
            };
            return Err(spec_error(
                at,
                format!("{} is not allowed in {place}", f.form.name()),
            ));
        }
        let dtype_ok = match (&f.form, payload) {
            (Form::OfRecordRaw { .. }, _) => f.dtype != DType::Bytes,
            (_, PayloadKind::OfRecord) => f.dtype.kind().is_some(),
            _ => f.dtype.tensorflow(),
        };
        if !dtype_ok {
            return Err(spec_error(
                at,
                format!(
                    "dtype {} is not allowed for {} in {} {payload} spec",
                    f.dtype,
                    f.form.name(),
                    if payload.name().starts_with(['a', 'e', 'i', 'o', 'u']) {
                        "an"
                    } else {
                        "a"
                    }
                ),
            ));
        }
        match (&f.form, sequence) {
            (Form::FixedLenSequence { allow_missing: false, .. }, false) => {
                return Err(spec_error(
                    at,
                    "a fixed_len_sequence feature of an example needs allow_missing, as in TensorFlow",
                ))
            }
            (Form::FixedLenSequence { default: Some(_), .. }, true) => {
                return Err(spec_error(
                    format!("{at}.default"),
                    "a sequence feature pads with zeros or empty bytes and takes no default, as in TensorFlow",
                ))
            }
            _ => {}
        }
        if f.sparse && f.form != Form::VarLen {
            return Err(spec_error(at, "sparse is only for var_len features"));
        }
        if f.borrow && f.dtype != DType::Bytes {
            return Err(spec_error(at, "borrow is only for bytes features"));
        }
        let (default, want) = match &f.form {
            Form::FixedLen { default, .. } => (default, f.elements()),
            Form::FixedLenSequence { default, .. } => (default, 1),
            _ => (&None, 0),
        };
        if let Some(d) = default {
            if d.len() != want {
                return Err(spec_error(
                    format!("{at}.default"),
                    format!("{} values given, the shape needs {want}", d.len()),
                ));
            }
            let fits = match (d, f.dtype) {
                (DefaultValue::Bytes(_), DType::Bytes) => true,
                (DefaultValue::Int(_), DType::Float32 | DType::Float64) => true,
                (DefaultValue::Float(_), DType::Float32 | DType::Float64) => true,
                (DefaultValue::Int(v), DType::Int32) => v.iter().all(|&x| i32::try_from(x).is_ok()),
                (DefaultValue::Int(_), DType::Int64) => true,
                _ => false,
            };
            if !fits {
                return Err(spec_error(
                    format!("{at}.default"),
                    format!("the values do not fit dtype {}", f.dtype),
                ));
            }
        }
    }
    Ok(())
}

/// The default's elements as the column stores them: little-endian values
/// of the column's type, or byte strings.
pub(crate) fn default_bytes(d: &DefaultValue, dtype: DType, out: &mut Vec<u8>) {
    match (d, dtype) {
        (DefaultValue::Int(v), DType::Int64) => v.iter().for_each(|x| out.extend(x.to_le_bytes())),
        (DefaultValue::Int(v), DType::Int32) => {
            v.iter().for_each(|&x| out.extend((x as i32).to_le_bytes()))
        }
        (DefaultValue::Int(v), DType::Float32) => {
            v.iter().for_each(|&x| out.extend((x as f32).to_le_bytes()))
        }
        (DefaultValue::Int(v), DType::Float64) => {
            v.iter().for_each(|&x| out.extend((x as f64).to_le_bytes()))
        }
        (DefaultValue::Float(v), DType::Float32) => {
            v.iter().for_each(|&x| out.extend((x as f32).to_le_bytes()))
        }
        (DefaultValue::Float(v), DType::Float64) => {
            v.iter().for_each(|x| out.extend(x.to_le_bytes()))
        }
        _ => {}
    }
}
