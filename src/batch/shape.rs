//! How the decoder sees a column's form ([`Shape`], worked out once per
//! spec) and why an entry failed ([`Fail`]): the lowest pieces of the
//! batched decoder, which the columns, the fast path and the record walk
//! all use.

use std::sync::Arc;

use super::spec::{FeatureSpec, Form};
use crate::error::{Error, ErrorKind, FeatureProblem};
use crate::wire::DecodeError;

/// Why an entry failed: bad wire data, or a value that does not fit the spec.
#[derive(Debug, Clone)]
pub(crate) enum Fail {
    Decode(DecodeError),
    Feature(u64, FeatureProblem),
}

impl From<DecodeError> for Fail {
    fn from(e: DecodeError) -> Self {
        Fail::Decode(e)
    }
}

impl Fail {
    /// Where the failure is: the entry's (or the damaged field's) offset.
    pub(super) fn offset(&self) -> u64 {
        match self {
            Fail::Decode(e) => e.offset,
            Fail::Feature(at, _) => *at,
        }
    }

    /// The error that names feature `f`.
    pub(super) fn into_error(self, f: &FeatureSpec) -> Error {
        match self {
            Fail::Decode(e) => Error::new(ErrorKind::Decode(e.reason), e.offset),
            Fail::Feature(at, problem) => Error::new(
                ErrorKind::Feature {
                    feature: Arc::from(f.name.as_str()),
                    problem,
                },
                at,
            ),
        }
    }
}

/// The form of a column as the decoder sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// `elems` values per record, in place.
    Fixed { elems: usize },
    /// Any number of values per record.
    VarLen,
    /// A multiple of `elems` values per record (`elems` per frame in a
    /// sequence spec), padded when the batch is finished.
    Padded { elems: usize },
    /// Frames of any number of values.
    RaggedFrames,
    /// OneFlow's raw decoder.
    Raw { elems: usize, fewer: bool },
}

/// The [`Shape`] of feature `f` (`in_sequence`: of a sequence spec).
pub(crate) fn shape_of(f: &FeatureSpec, in_sequence: bool) -> Shape {
    let elems = f.elements();
    match &f.form {
        Form::FixedLen { .. } => Shape::Fixed { elems },
        Form::VarLen if in_sequence => Shape::RaggedFrames,
        Form::VarLen => Shape::VarLen,
        Form::FixedLenSequence { .. } => Shape::Padded { elems },
        Form::OfRecordRaw {
            dim1_varying_length,
            auto_zero_padding,
            ..
        } => Shape::Raw {
            elems,
            fewer: *dim1_varying_length || *auto_zero_padding,
        },
    }
}
