//! Errors: one small type that says what went wrong and where.
//!
//! Every error carries a stable [`ErrorKind`] (shown in brackets at the start
//! of its message, see [`ErrorKind::name`]), the absolute byte offset where it
//! was found and, from the framing layer up, the record id and the file name.
//!
//! ```
//! use recordwire::frame::{Framing, ReadOptions, records};
//!
//! // A TFRecord frame whose length says 16 bytes, but only 4 follow.
//! let mut file = recordwire::frame::tfrecord_frame(&[0u8; 16]);
//! file.truncate(12 + 4);
//! let err = records(&file, Framing::TfRecord, ReadOptions::default())
//!     .next()
//!     .unwrap()
//!     .unwrap_err();
//! assert_eq!(err.kind().name(), "truncated_data");
//! assert_eq!(err.record(), Some(0));
//! assert_eq!(err.offset(), 0);
//! assert_eq!(
//!     err.to_string(),
//!     "[truncated_data]: record 0 at byte 0: frame declares 20 bytes after its header, 4 available"
//! );
//! ```

use std::fmt;
use std::sync::Arc;

/// What went wrong in a payload: the reason of a `decode_error`.
///
/// These are the wire-level rules of SPEC §3; each is found at an absolute
/// byte offset carried by the enclosing [`DecodeError`] or [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeReason {
    /// The message ends inside a varint, tag, length or fixed-width value.
    Truncated,
    /// A varint has an 11th byte (the 10th still has its continuation bit).
    VarintTooLong,
    /// A tag takes more than 5 bytes or does not fit in 32 bits.
    TagTooLong,
    /// A length takes more than 5 bytes or is 2^31 or more.
    LengthTooLong,
    /// A length-delimited field runs past the end of its enclosing message.
    LengthOverrun {
        /// The length written on the wire.
        declared: u64,
        /// The bytes left in the enclosing message after the length.
        available: u64,
    },
    /// Field number 0.
    FieldNumberZero,
    /// Wire type 6 or 7.
    InvalidWireType(u8),
    /// An end-group tag with no group open, or closing a different group.
    UnexpectedEndGroup(u32),
    /// A group that is not closed before its enclosing message ends.
    UnterminatedGroup(u32),
    /// Messages and groups nested deeper than [`crate::wire::MAX_DEPTH`].
    DepthLimitExceeded,
    /// A packed run of fixed-width values whose length is not a multiple of the width.
    PackedLength {
        /// Byte length of the packed run.
        length: u64,
        /// Width of one element (4 or 8).
        width: u8,
    },
    /// A proto3 `string` (a tf.Example feature name) that is not valid UTF-8.
    InvalidUtf8,
    /// Strict mode: a map key that appears twice in the same map.
    DuplicateKey,
    /// Strict mode: a field the schema does not know (or a known one with the wrong wire type).
    UnknownField {
        /// Its field number.
        field: u32,
        /// Its wire type.
        wire_type: u8,
    },
    /// Strict mode: a numeric list mixing packed and unpacked encodings.
    MixedPacking,
}

impl fmt::Display for DecodeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeReason::Truncated => f.write_str("message ends inside a value"),
            DecodeReason::VarintTooLong => f.write_str("varint longer than 10 bytes"),
            DecodeReason::TagTooLong => f.write_str("tag longer than 5 bytes or above 2^32-1"),
            DecodeReason::LengthTooLong => {
                f.write_str("length longer than 5 bytes or not below 2^31")
            }
            DecodeReason::LengthOverrun {
                declared,
                available,
            } => write!(
                f,
                "length-delimited field declares {declared} bytes, {available} left in its message"
            ),
            DecodeReason::FieldNumberZero => f.write_str("field number 0"),
            DecodeReason::InvalidWireType(w) => write!(f, "invalid wire type {w}"),
            DecodeReason::UnexpectedEndGroup(n) => {
                write!(f, "end-group tag for field {n} without a matching start")
            }
            DecodeReason::UnterminatedGroup(n) => write!(f, "group {n} is not terminated"),
            DecodeReason::DepthLimitExceeded => write!(
                f,
                "messages nested deeper than {} levels",
                crate::wire::MAX_DEPTH
            ),
            DecodeReason::PackedLength { length, width } => write!(
                f,
                "packed run of {length} bytes is not a multiple of {width}"
            ),
            DecodeReason::InvalidUtf8 => f.write_str("feature name is not valid UTF-8"),
            DecodeReason::DuplicateKey => f.write_str("duplicate map key (strict mode)"),
            DecodeReason::UnknownField { field, wire_type } => write!(
                f,
                "unknown field {field} with wire type {wire_type} (strict mode)"
            ),
            DecodeReason::MixedPacking => {
                f.write_str("numeric list mixes packed and unpacked encodings (strict mode)")
            }
        }
    }
}

/// A payload decoding error: a [`DecodeReason`] at an absolute byte offset.
///
/// This is what the wire layer and the views return; it is `Copy` and never
/// allocates. It converts into [`Error`] (kind `decode_error`), to which the
/// framing layer adds the record id and the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// The kind of an [`Error`], with the values involved.
///
/// The set of kinds is stable; its [`name`](ErrorKind::name) is what scripts
/// should match on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ends inside a frame header.
    TruncatedHeader {
        /// Header size of the framing (12 for TFRecord, 8 for OFRecord).
        needed: u64,
        /// Bytes left in the input.
        available: u64,
    },
    /// A frame's length (with a good length CRC) runs past the end of the input.
    TruncatedData {
        /// Bytes the frame declares, data plus its CRC where there is one.
        declared: u64,
        /// Bytes left in the input after the header.
        available: u64,
    },
    /// An OFRecord length is negative.
    InvalidLength {
        /// The length as the signed 64-bit integer OneFlow writes.
        length: i64,
    },
    /// A TFRecord length CRC is wrong.
    LengthCrcMismatch {
        /// The masked CRC stored in the file.
        stored: u32,
        /// The masked CRC of the 8 length bytes.
        computed: u32,
    },
    /// A TFRecord data CRC is wrong.
    DataCrcMismatch {
        /// The masked CRC stored in the file.
        stored: u32,
        /// The masked CRC of the data.
        computed: u32,
    },
    /// A GZIP/ZLIB stream is corrupt, truncated or followed by garbage.
    Compression {
        /// What the decompressor said.
        message: Arc<str>,
    },
    /// The frame is fine but the payload is not a valid message of the expected type.
    Decode(DecodeReason),
    /// An index does not belong to the data file it is used with.
    StaleIndex {
        /// What differs.
        message: Arc<str>,
    },
    /// An I/O error while reading or writing.
    Io {
        /// The operating system's message.
        message: Arc<str>,
        /// The underlying error kind.
        io_kind: std::io::ErrorKind,
    },
}

impl ErrorKind {
    /// The stable name of this kind, as shown in brackets in messages
    /// (`truncated_header`, `data_crc_mismatch`, …).
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::TruncatedHeader { .. } => "truncated_header",
            ErrorKind::TruncatedData { .. } => "truncated_data",
            ErrorKind::InvalidLength { .. } => "invalid_length",
            ErrorKind::LengthCrcMismatch { .. } => "length_crc_mismatch",
            ErrorKind::DataCrcMismatch { .. } => "data_crc_mismatch",
            ErrorKind::Compression { .. } => "compression_error",
            ErrorKind::Decode(_) => "decode_error",
            ErrorKind::StaleIndex { .. } => "stale_index",
            ErrorKind::Io { .. } => "io_error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::TruncatedHeader { needed, available } => write!(
                f,
                "input ends inside a frame header: needed {needed} bytes, {available} available"
            ),
            ErrorKind::TruncatedData {
                declared,
                available,
            } => write!(
                f,
                "frame declares {declared} bytes after its header, {available} available"
            ),
            ErrorKind::InvalidLength { length } => write!(f, "negative length {length}"),
            ErrorKind::LengthCrcMismatch { stored, computed }
            | ErrorKind::DataCrcMismatch { stored, computed } => {
                write!(f, "stored {stored:#010x}, computed {computed:#010x}")
            }
            ErrorKind::Compression { message } => f.write_str(message),
            ErrorKind::Decode(reason) => write!(f, "{reason}"),
            ErrorKind::StaleIndex { message } => f.write_str(message),
            ErrorKind::Io { message, .. } => f.write_str(message),
        }
    }
}

/// An error with its kind, file, record id and absolute byte offset.
///
/// Displayed as `[kind]: file: record N at byte O: details`; the command-line
/// tool prefixes `error`, giving SPEC §8's
/// `error[data_crc_mismatch]: train.tfrecord: record 12 at byte 4096: stored 0x…, computed 0x…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    file: Option<Arc<str>>,
    record: Option<u64>,
    offset: u64,
}

impl Error {
    /// An error of `kind` at absolute byte `offset`.
    pub fn new(kind: ErrorKind, offset: u64) -> Self {
        Error {
            kind,
            file: None,
            record: None,
            offset,
        }
    }

    /// An I/O error, with no position known.
    pub fn io(err: &std::io::Error) -> Self {
        Error::new(
            ErrorKind::Io {
                message: err.to_string().into(),
                io_kind: err.kind(),
            },
            0,
        )
    }

    /// Sets the record id.
    pub fn with_record(mut self, record: u64) -> Self {
        self.record = Some(record);
        self
    }

    /// Sets the file name.
    pub fn with_file(mut self, file: impl Into<Arc<str>>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// The kind, with the values involved.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The file, when known.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The record id (0-based, in file order), when known.
    pub fn record(&self) -> Option<u64> {
        self.record
    }

    /// The absolute byte offset: the start of the frame for framing errors,
    /// the offending byte for decode errors. In a compressed file it is an
    /// offset in the decompressed stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        Error::new(ErrorKind::Decode(e.reason), e.offset)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]: ", self.kind.name())?;
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if let Some(record) = self.record {
            write!(f, "record {record} at byte {}: ", self.offset)?;
        } else {
            write!(f, "at byte {}: ", self.offset)?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
