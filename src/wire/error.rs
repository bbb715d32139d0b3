//! The wire layer's error: a [`DecodeReason`] at an absolute byte offset.

use super::MAX_DEPTH;

/// What went wrong in a payload: the reason of a `decode_error`.
///
/// These are the wire-level rules of docs/FORMAT.md §3; each is found at an absolute
/// byte offset carried by the enclosing [`DecodeError`] or [`crate::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeReason {
    /// The message ends inside a varint, tag, length or fixed-width value.
    #[error("message ends inside a value")]
    Truncated,
    /// A varint has an 11th byte (the 10th still has its continuation bit).
    #[error("varint longer than 10 bytes")]
    VarintTooLong,
    /// A tag takes more than 5 bytes or does not fit in 32 bits.
    #[error("tag longer than 5 bytes or above 2^32-1")]
    TagTooLong,
    /// A length takes more than 5 bytes or is 2^31 or more.
    #[error("length longer than 5 bytes or not below 2^31")]
    LengthTooLong,
    /// A length-delimited field runs past the end of its enclosing message.
    #[error("length-delimited field declares {declared} bytes, {available} left in its message")]
    LengthOverrun {
        /// The length written on the wire.
        declared: u64,
        /// The bytes left in the enclosing message after the length.
        available: u64,
    },
    /// Field number 0.
    #[error("field number 0")]
    FieldNumberZero,
    /// Wire type 6 or 7.
    #[error("invalid wire type {0}")]
    InvalidWireType(u8),
    /// An end-group tag with no group open, or closing a different group.
    #[error("end-group tag for field {0} without a matching start")]
    UnexpectedEndGroup(u32),
    /// A group that is not closed before its enclosing message ends.
    #[error("group {0} is not terminated")]
    UnterminatedGroup(u32),
    /// Messages and groups nested deeper than [`MAX_DEPTH`].
    #[error("messages nested deeper than {MAX_DEPTH} levels")]
    DepthLimitExceeded,
    /// A packed run of fixed-width values whose length is not a multiple of the width.
    #[error("packed run of {length} bytes is not a multiple of {width}")]
    PackedLength {
        /// Byte length of the packed run.
        length: u64,
        /// Width of one element (4 or 8).
        width: u8,
    },
    /// A proto3 `string` (a tf.Example feature name) that is not valid UTF-8.
    #[error("a proto3 string (a feature name, a string field) that is not valid UTF-8")]
    InvalidUtf8,
    /// Strict mode: a map key that appears twice in the same map.
    #[error("duplicate map key (strict mode)")]
    DuplicateKey,
    /// Strict mode: a field the schema does not know (or a known one with the wrong wire type).
    #[error("unknown field {field} with wire type {wire_type} (strict mode)")]
    UnknownField {
        /// Its field number.
        field: u32,
        /// Its wire type.
        wire_type: u8,
    },
    /// Strict mode: a numeric list mixing packed and unpacked encodings.
    #[error("numeric list mixes packed and unpacked encodings (strict mode)")]
    MixedPacking,
    /// A well-known type's value that protobuf's JSON mapping refuses (a
    /// Timestamp outside years 1 to 9999, a Duration's nanos of the other
    /// sign, a NaN in a `Value`, an `Any` of a type the schema lacks): the
    /// type, and what is wrong.
    #[error("a {0} that JSON cannot hold: {1}")]
    WellKnownValue(&'static str, &'static str),
}

/// A payload decoding error: a [`DecodeReason`] at an absolute byte offset.
///
/// This is what the wire layer and the views return; it is `Copy` and never
/// allocates. It converts into [`crate::Error`] (kind `decode_error`); to
/// say also which file and record it was met in, use
/// [`Record::context`](crate::frame::Record::context).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {reason}")]
pub struct DecodeError {
    /// Absolute byte offset of the offending byte.
    pub offset: u64,
    /// What is wrong there.
    pub reason: DecodeReason,
}

impl DecodeError {
    /// A decode error at `offset`.
    pub fn new(offset: u64, reason: DecodeReason) -> Self {
        DecodeError { offset, reason }
    }
}
