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
//! assert_eq!(err.offset(), Some(0));
//! assert_eq!(
//!     err.to_string(),
//!     "[truncated_data]: record 0 at byte 0: frame declares 20 bytes after its header, 4 available"
//! );
//! ```
//!
//! A payload decode error ([`DecodeError`]) knows only its byte offset;
//! [`Record::context`](crate::frame::Record::context) adds the file and the
//! record it was met in, so that `?` in a loader keeps which shard and which
//! record failed:
//!
//! ```
//! use recordwire::io::{OpenOptions, RecordFile};
//! use recordwire::view::ExampleRef;
//!
//! fn labels(path: &str) -> recordwire::Result<Vec<i64>> {
//!     let file = RecordFile::open(path, &OpenOptions::default())?;
//!     let mut out = Vec::new();
//!     for record in file.records() {
//!         let record = record?;
//!         let example = ExampleRef::parse(record.data, record.data_offset)
//!             .map_err(|e| record.context(e))?;
//!         let label = example.get("label").map_err(|e| record.context(e))?;
//!         if let Some(list) = label.and_then(|f| f.int64_list().ok().flatten()) {
//!             out.extend(list.iter().filter_map(Result::ok));
//!         }
//!     }
//!     Ok(out)
//! }
//! assert_eq!(labels("testdata/ref/small.tfrecord")?.len(), 10);
//!
//! // Record 2 of this file holds an invalid tag (wire type 7) at byte 389:
//! // the error names the file, the record and that byte.
//! let err = labels("testdata/bad/tf_decode_error.tfrecord").unwrap_err();
//! assert_eq!(err.kind().name(), "decode_error");
//! assert_eq!(err.file(), Some("testdata/bad/tf_decode_error.tfrecord"));
//! assert_eq!((err.record(), err.offset()), (Some(2), Some(389)));
//! assert_eq!(
//!     err.to_string(),
//!     "[decode_error]: testdata/bad/tf_decode_error.tfrecord: record 2 at byte 389: invalid wire type 7"
//! );
//! # Ok::<(), recordwire::Error>(())
//! ```

use std::fmt;
use std::sync::Arc;

pub use crate::wire::{DecodeError, DecodeReason};

/// The kind of an [`Error`], with the values involved.
///
/// The set of kinds is stable; its [`name`](ErrorKind::name) is what scripts
/// should match on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ends inside a frame header.
    #[error("input ends inside a frame header: needed {needed} bytes, {available} available")]
    TruncatedHeader {
        /// Header size of the framing (12 for TFRecord, 8 for OFRecord).
        needed: u64,
        /// Bytes left in the input.
        available: u64,
    },
    /// A frame's length (with a good length CRC) runs past the end of the input.
    #[error("frame declares {declared} bytes after its header, {available} available")]
    TruncatedData {
        /// Bytes the frame declares, data plus its CRC where there is one.
        declared: u64,
        /// Bytes left in the input after the header.
        available: u64,
    },
    /// An OFRecord length is negative.
    #[error("negative length {length}")]
    InvalidLength {
        /// The length as the signed 64-bit integer OneFlow writes.
        length: i64,
    },
    /// A TFRecord length CRC is wrong.
    #[error("stored {stored:#010x}, computed {computed:#010x}")]
    LengthCrcMismatch {
        /// The masked CRC stored in the file.
        stored: u32,
        /// The masked CRC of the 8 length bytes.
        computed: u32,
    },
    /// A TFRecord data CRC is wrong.
    #[error("stored {stored:#010x}, computed {computed:#010x}")]
    DataCrcMismatch {
        /// The masked CRC stored in the file.
        stored: u32,
        /// The masked CRC of the data.
        computed: u32,
    },
    /// A GZIP/ZLIB stream is corrupt, truncated or followed by garbage.
    #[error("{message}")]
    Compression {
        /// What the decompressor said.
        message: Arc<str>,
    },
    /// The frame is fine but the payload is not a valid message of the expected type.
    #[error("{0}")]
    Decode(DecodeReason),
    /// A record does not fit the feature spec of a batch decode
    /// ([`crate::batch`]): a feature is missing, of another type, or has the
    /// wrong number of values.
    #[error("feature {}: {problem}", crate::names::quoted(feature.as_bytes()))]
    Feature {
        /// The feature's name.
        feature: Arc<str>,
        /// What is wrong with it.
        problem: FeatureProblem,
    },
    /// A record id at or past the end of a file or dataset.
    #[error("no record {id}: there are {len}")]
    IdOutOfRange {
        /// The id asked for.
        id: u64,
        /// How many records there are.
        len: u64,
    },
    /// An index does not belong to the data file it is used with.
    #[error("{message}")]
    StaleIndex {
        /// What differs.
        message: Arc<str>,
    },
    /// An argument that cannot work as given, found before any data is
    /// read: a URL that names a bucket rather than an object, a scheme
    /// recordwire does not read, a glob that matches nothing or that the
    /// server cannot list, an output it cannot write to. The command line
    /// reports it as `usage_error` with exit status 2, as its own usage
    /// errors (docs/FORMAT.md §8.1, §9.4).
    #[error("{message}")]
    Usage {
        /// What is wrong, and what to give instead.
        message: Arc<str>,
    },
    /// An I/O error while reading or writing.
    #[error("{message}")]
    Io {
        /// The operating system's message.
        message: Arc<str>,
        /// The underlying error kind.
        io_kind: std::io::ErrorKind,
    },
}

/// How a record fails a feature spec (see [`ErrorKind::Feature`]); the
/// rules are TensorFlow's `parse_example` and OneFlow's raw decoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureProblem {
    /// The record lacks the feature and the spec gives no default.
    #[error("missing, and the spec gives no default")]
    Missing,
    /// The feature holds another list than the spec's type.
    #[error("the spec wants {expected} values, the record holds {}", crate::names::with_article(.found))]
    WrongType {
        /// The spec's dtype.
        expected: &'static str,
        /// The list the record holds (`float_list`, …).
        found: &'static str,
    },
    /// The feature holds another number of values than the shape needs.
    #[error("{found} values, the shape needs {expected}")]
    WrongCount {
        /// Values the shape needs.
        expected: usize,
        /// Values the record holds.
        found: usize,
    },
    /// A fixed_len_sequence feature's count is not a multiple of its element size.
    #[error("{found} values, not a multiple of the element size {element}")]
    NotMultiple {
        /// Values per element (`prod(shape)`).
        element: usize,
        /// Values the record holds.
        found: usize,
    },
    /// One frame of a feature list holds another number of values than the shape needs.
    #[error("frame {frame} holds {found} values, the shape needs {expected}")]
    WrongFrameCount {
        /// The frame's position in its list.
        frame: usize,
        /// Values the shape needs.
        expected: usize,
        /// Values the frame holds.
        found: usize,
    },
    /// A feature holds more values than an OFRecord raw decoder's shape, which
    /// allows fewer (`dim1_varying_length`, `auto_zero_padding`) but not more.
    #[error("{found} values, more than the shape's {max}")]
    TooMany {
        /// Values the shape holds.
        max: usize,
        /// Values the record holds.
        found: usize,
    },
    /// An OFRecord raw decoder reads a bytes feature only when it holds exactly one value.
    #[error("a bytes_list of {found} values, the raw decoder reads exactly one")]
    NotOneBytesValue {
        /// Values the list holds.
        found: usize,
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
            ErrorKind::Feature { .. } => "feature_error",
            ErrorKind::IdOutOfRange { .. } => "id_out_of_range",
            ErrorKind::StaleIndex { .. } => "stale_index",
            ErrorKind::Usage { .. } => "usage_error",
            ErrorKind::Io { .. } => "io_error",
        }
    }
}

/// An error with its kind, file, record id and absolute byte offset.
///
/// Displayed as `[kind]: file: record N at byte O: details`; the command-line
/// tool prefixes `error`, giving the form of docs/FORMAT.md §8.2,
/// `error[data_crc_mismatch]: train.tfrecord: record 12 at byte 4096: stored 0x…, computed 0x…`.
/// Each part is left out when it is not known: an I/O error that happened
/// opening a file has no record and no offset.
///
/// An I/O error keeps the operating system's [`std::io::Error`] as its
/// [`source`](std::error::Error::source). The error is one pointer wide, so
/// that `Result<Record, Error>` stays small.
#[derive(Clone)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, thiserror::Error)]
#[error("[{name}]: {place}{what}", name = .kind.name(), place = Place(self), what = What(self))]
struct Inner {
    kind: ErrorKind,
    /// Said instead of the kind's own text (see [`Error::detail`]).
    detail: Option<Arc<str>>,
    file: Option<Arc<str>>,
    record: Option<u64>,
    offset: Option<u64>,
    /// Shared so that the error stays `Clone`; not a `#[source]` field, since
    /// thiserror would then give the `Arc` as the source, which does not
    /// downcast to `std::io::Error`.
    cause: Option<Arc<std::io::Error>>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let io: &std::io::Error = self.0.cause.as_deref()?;
        Some(io)
    }
}

/// The `file: record N at byte O: ` part of a message.
struct Place<'e>(&'e Inner);

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner {
            file,
            record,
            offset,
            ..
        } = self.0;
        if let Some(file) = file {
            write!(f, "{file}: ")?;
        }
        match (record, offset) {
            (Some(record), Some(offset)) => write!(f, "record {record} at byte {offset}: "),
            (Some(record), None) => write!(f, "record {record}: "),
            (None, Some(offset)) => write!(f, "at byte {offset}: "),
            (None, None) => Ok(()),
        }
    }
}

/// The details: the error's own message, else the kind's text with its values.
struct What<'e>(&'e Inner);

impl fmt::Display for What<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.detail {
            Some(detail) => f.write_str(detail),
            None => fmt::Display::fmt(&self.0.kind, f),
        }
    }
}

impl Error {
    /// An error of `kind` at absolute byte `offset`.
    pub fn new(kind: ErrorKind, offset: u64) -> Self {
        Error(Box::new(Inner {
            kind,
            detail: None,
            file: None,
            record: None,
            offset: Some(offset),
            cause: None,
        }))
    }

    /// An I/O error, with no position known; `err` becomes its
    /// [`source`](std::error::Error::source).
    ///
    /// ```
    /// use std::error::Error as _;
    ///
    /// let err = recordwire::io::RecordFile::open("no/such.tfrecord", &Default::default())
    ///     .unwrap_err();
    /// assert_eq!(err.kind().name(), "io_error");
    /// assert_eq!(err.offset(), None);
    /// let cause = err.source().and_then(|s| s.downcast_ref::<std::io::Error>()).unwrap();
    /// assert_eq!(cause.kind(), std::io::ErrorKind::NotFound);
    /// assert!(err.to_string().starts_with("[io_error]: no/such.tfrecord: "), "{err}");
    /// ```
    pub fn io(err: std::io::Error) -> Self {
        // One of ours carried through `std::io::Read` (a remote object's
        // stream): itself, not a second `[io_error]: file:` in the message.
        if let Some(ours) = err.get_ref().and_then(|e| e.downcast_ref::<Error>()) {
            return ours.clone();
        }
        let kind = ErrorKind::Io {
            message: err.to_string().into(),
            io_kind: err.kind(),
        };
        Error(Box::new(Inner {
            kind,
            detail: None,
            file: None,
            record: None,
            offset: None,
            cause: Some(Arc::new(err)),
        }))
    }

    /// A usage error ([`ErrorKind::Usage`]) saying `message`, with no
    /// position.
    ///
    /// ```
    /// let err = recordwire::Error::usage("names a bucket, not an object").with_file("s3://b/");
    /// assert_eq!(err.kind().name(), "usage_error");
    /// assert_eq!(err.to_string(), "[usage_error]: s3://b/: names a bucket, not an object");
    /// ```
    pub fn usage(message: impl Into<Arc<str>>) -> Self {
        Error(Box::new(Inner {
            kind: ErrorKind::Usage {
                message: message.into(),
            },
            detail: None,
            file: None,
            record: None,
            offset: None,
            cause: None,
        }))
    }

    /// Sets the record id.
    pub fn with_record(mut self, record: u64) -> Self {
        self.0.record = Some(record);
        self
    }

    /// Sets the byte offset (an I/O error met at a known place).
    pub fn with_offset(mut self, offset: u64) -> Self {
        self.0.offset = Some(offset);
        self
    }

    /// Sets the file name.
    pub fn with_file(mut self, file: impl Into<Arc<str>>) -> Self {
        self.0.file = Some(file.into());
        self
    }

    /// Says `detail` instead of the kind's own text; the kind and its values
    /// are kept.
    pub(crate) fn with_detail(mut self, detail: impl Into<Arc<str>>) -> Self {
        self.0.detail = Some(detail.into());
        self
    }

    /// The kind, with the values involved.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The message shown instead of the kind's own text, when the error has
    /// one. Only one case has: an input whose first bytes fit neither
    /// framing, whose first-frame error (its kind and values unchanged, such
    /// as `truncated_data`) says `not a TFRecord or OFRecord file: …` and what
    /// those bytes look like (docs/FORMAT.md §1.6).
    ///
    /// ```
    /// use recordwire::io::{OpenOptions, RecordFile};
    ///
    /// let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    /// let file = RecordFile::from_bytes(png.into(), "photo", &OpenOptions::default());
    /// let err = file.records().next().unwrap().unwrap_err();
    /// assert_eq!(err.kind().name(), "truncated_data");
    /// assert!(err.detail().unwrap().starts_with("not a TFRecord or OFRecord file: "));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "[truncated_data]: photo: record 0 at byte 0: not a TFRecord or OFRecord file: \
    ///      it starts with the PNG signature (89 50 4e 47 0d 0a 1a 0a); not a TFRecord header, \
    ///      and as an OFRecord header it declares 727905341920923785 bytes, 8 available"
    /// );
    /// ```
    pub fn detail(&self) -> Option<&str> {
        self.0.detail.as_deref()
    }

    /// The file, when known.
    pub fn file(&self) -> Option<&str> {
        self.0.file.as_deref()
    }

    /// The record id (0-based, in file order), when known.
    pub fn record(&self) -> Option<u64> {
        self.0.record
    }

    /// The absolute byte offset, when known: the start of the frame for
    /// framing errors, the offending byte for decode errors; `None` for an
    /// I/O error that is not tied to a place in the input. In a compressed
    /// file it is an offset in the decompressed stream.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner {
            kind,
            detail,
            file,
            record,
            offset,
            cause,
        } = &*self.0;
        f.debug_struct("Error")
            .field("kind", kind)
            .field("detail", detail)
            .field("file", file)
            .field("record", record)
            .field("offset", offset)
            .field("cause", cause)
            .finish()
    }
}

/// Errors are equal when they say the same thing at the same place (an I/O
/// error's source is compared through its kind and message).
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&*self.0, &*other.0);
        (&a.kind, &a.detail, &a.file, a.record, a.offset)
            == (&b.kind, &b.detail, &b.file, b.record, b.offset)
    }
}

impl Eq for Error {}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        Error::new(ErrorKind::Decode(e.reason), e.offset)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::io(e)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer_wide() {
        // Was 72 bytes before the inner part was boxed.
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        assert_eq!(
            std::mem::size_of::<Result<crate::frame::Record<'_>, Error>>(),
            std::mem::size_of::<crate::frame::Record<'_>>()
        );
    }

    #[test]
    fn an_error_carried_through_std_io_is_said_once() {
        // A remote stream's error goes through `std::io::Read` and back.
        let inner = Error::io(std::io::Error::other("a short read"))
            .with_file("s3://b/k")
            .with_offset(4096);
        let outer = Error::io(std::io::Error::other(inner))
            .with_file("s3://b/k")
            .with_record(7);
        assert_eq!(
            outer.to_string(),
            "[io_error]: s3://b/k: record 7 at byte 4096: a short read"
        );
    }

    #[test]
    fn a_list_kind_takes_its_article() {
        let problem = |found| FeatureProblem::WrongType {
            expected: "float",
            found,
        };
        assert_eq!(
            problem("int64_list").to_string(),
            "the spec wants float values, the record holds an int64_list"
        );
        assert_eq!(
            problem("bytes_list").to_string(),
            "the spec wants float values, the record holds a bytes_list"
        );
    }

    #[test]
    fn io_error_has_no_offset_and_keeps_its_cause() {
        use std::error::Error as _;
        let err = Error::io(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "no entry",
        ))
        .with_file("shard-3.tfrecord");
        assert_eq!(err.to_string(), "[io_error]: shard-3.tfrecord: no entry");
        let cause = err
            .source()
            .and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(
            cause.map(std::io::Error::kind),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        // With a record but no offset.
        assert_eq!(
            err.with_record(7).to_string(),
            "[io_error]: shard-3.tfrecord: record 7: no entry"
        );
        // Every other error has no source.
        let crc = Error::new(
            ErrorKind::DataCrcMismatch {
                stored: 1,
                computed: 2,
            },
            40,
        );
        assert!(crc.source().is_none());
    }
}
