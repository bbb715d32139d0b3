//! Batched columnar decoding, exactly like TensorFlow's `tf.io.parse_example`
//! and `tf.io.parse_sequence_example` (and OneFlow's raw decoder for
//! OFRecord): a [`Spec`] names the features wanted and their forms,
//! [`decode`] turns a batch of records into a [`Batch`] of columns in
//! Arrow-compatible memory, reused from one batch to the next.
//!
//! # Forms
//! | form | column | TensorFlow |
//! |---|---|---|
//! | [`Form::FixedLen`] | dense `[rows, *shape]` | `FixedLenFeature` |
//! | [`Form::VarLen`] | values + `row_splits`, optionally sparse | `VarLenFeature` |
//! | [`Form::FixedLenSequence`] | dense `[rows, max_len, *shape]` + lengths | `FixedLenSequenceFeature` |
//! | [`Form::VarLen`] in a sequence spec | values + frame splits + row splits | `VarLenFeature` in `sequence_features` |
//! | [`Form::OfRecordRaw`] | dense `[rows, *shape]` + lengths | OneFlow `OFRecordRawDecoder` |
//!
//! # The rules
//! - The last map entry of a name wins; earlier entries of the name are
//!   not checked (TensorFlow skips them).
//! - A feature whose `Feature` message holds no list counts as zero values
//!   of any type.
//! - A list of another type than the spec's dtype is an error
//!   ([`FeatureProblem::WrongType`](crate::error::FeatureProblem)).
//! - `fixed_len`: exactly `prod(shape)` values; a missing feature takes the
//!   default, and is an error without one.
//! - `fixed_len_sequence`: a multiple of `prod(shape)` values (each frame
//!   exactly `prod(shape)` in a sequence spec); a missing feature is length
//!   0 when `allow_missing`, an error otherwise; padding uses the default
//!   (zero or empty without one).
//! - Features not in the spec are walked over without being decoded.
//!
//! Every error names the feature, the record id, the file (when known) and
//! the byte offset of the entry (of the payload's start for a missing
//! feature).
//!
//! # Spec JSON
//! ```json
//! {
//!   "payload": "example",
//!   "features": {
//!     "label":  {"form": "fixed_len", "dtype": "int64", "shape": [], "default": 0},
//!     "tokens": {"form": "var_len", "dtype": "int64", "sparse": true},
//!     "image":  {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": true},
//!     "boxes":  {"form": "fixed_len_sequence", "dtype": "float32", "shape": [4], "allow_missing": true}
//!   }
//! }
//! ```
//! A `sequence_example` spec adds `"sequence": {...}` (fixed_len_sequence
//! and var_len features); an `ofrecord` spec may use
//! `{"form": "ofrecord_raw", "dtype": "uint8", "shape": [28, 28],
//! "dim1_varying_length": false, "auto_zero_padding": false}` and the
//! dtypes `int32`, `float64`, `int8`, `uint8`. `dtype` accepts TensorFlow's
//! `float`, `string` and `double` too.

mod buf;
mod column;
mod decode;
mod fast;
mod infer;
mod owned;
mod shape;
mod spec;
mod spec_json;
mod spec_python;
mod threads;

pub use buf::{AlignedBuf, ALIGN};
pub use column::{Batch, Column, ColumnBuffersMut, ColumnParts, ColumnValue, Layout, Sparse};
pub use decode::{decode, Input};
pub use infer::{sample_runs, SpecInference};
pub use spec::{DType, DefaultValue, FeatureSpec, Form, Spec, SpecError};
pub use threads::{Decoder, RecordSource};

#[cfg(test)]
mod tests;
