//! [`Schema`] (which message numbering a payload follows) and [`Kind`] (which list a feature holds).

/// Which schema a payload follows; it decides the numbering of `Feature`'s
/// oneof and whether names must be UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schema {
    /// TensorFlow's `feature.proto` (proto3): bytes_list = 1, float_list = 2,
    /// int64_list = 3; names must be valid UTF-8.
    TensorFlow,
    /// OneFlow's `record.proto` (proto2): bytes_list = 1, float_list = 2,
    /// double_list = 3, int32_list = 4, int64_list = 5; names are any bytes.
    OneFlow,
}

impl Schema {
    /// The list kind of a `Feature` field number.
    #[inline]
    pub fn kind_of(self, field: u32) -> Option<Kind> {
        match (self, field) {
            (_, 1) => Some(Kind::Bytes),
            (_, 2) => Some(Kind::Float),
            (Schema::TensorFlow, 3) => Some(Kind::Int64),
            (Schema::OneFlow, 3) => Some(Kind::Double),
            (Schema::OneFlow, 4) => Some(Kind::Int32),
            (Schema::OneFlow, 5) => Some(Kind::Int64),
            _ => None,
        }
    }

    /// The `Feature` field number of a list kind, if the schema has it.
    pub fn field_of(self, kind: Kind) -> Option<u32> {
        match (self, kind) {
            (_, Kind::Bytes) => Some(1),
            (_, Kind::Float) => Some(2),
            (Schema::TensorFlow, Kind::Int64) => Some(3),
            (Schema::TensorFlow, _) => None,
            (Schema::OneFlow, Kind::Double) => Some(3),
            (Schema::OneFlow, Kind::Int32) => Some(4),
            (Schema::OneFlow, Kind::Int64) => Some(5),
        }
    }

    pub(super) fn utf8_names(self) -> bool {
        self == Schema::TensorFlow
    }
}

/// The kind of a feature: which list its oneof holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `bytes_list`
    Bytes,
    /// `float_list`
    Float,
    /// `double_list` (OFRecord only)
    Double,
    /// `int32_list` (OFRecord only)
    Int32,
    /// `int64_list`
    Int64,
}

impl Kind {
    /// The field name used in JSON: `bytes_list`, `float_list`, …
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bytes => "bytes_list",
            Kind::Float => "float_list",
            Kind::Double => "double_list",
            Kind::Int32 => "int32_list",
            Kind::Int64 => "int64_list",
        }
    }
}
