//! Files: memory maps, plain reads, compression, and one entry point for all.
//!
//! - [`Source`] ([`open_source`]): what the command-line tool uses. It opens a
//!   path or `-` (stdin), detects framing and compression, and walks the
//!   records with the right reader.
//! - [`RecordFile`]: a whole file in memory as [`bytes::Bytes`], memory-mapped
//!   when possible (zero-copy, with owned `'static` record handles), for
//!   random access and indexing.
//! - [`StreamRecords`]: frames read from any [`std::io::Read`] (decompressors,
//!   pipes) into a reused buffer, with bounded memory; not zero-copy.
//!
//! ```
//! use recordwire::frame::{file_of, Framing};
//! use recordwire::io::{open_source, OpenOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("train.tfrecord");
//! std::fs::write(&path, file_of(Framing::TfRecord, [&b"a"[..], b"bc"]))?;
//!
//! let mut source = open_source(&path, &OpenOptions::default())?;
//! let mut lengths = Vec::new();
//! while let Some(record) = source.next_record() {
//!     lengths.push(record?.data.len());
//! }
//! assert_eq!(lengths, [1, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use crate::frame::{detect, Basis, Detected, Framing, ReadOptions, TFRECORD_HEADER_LEN};
use crate::names::OptionName;

mod byte_source;
mod compress;
mod file;
mod hint;
mod mmap;
#[cfg(feature = "remote")]
pub mod remote;
mod source;
mod stream;

#[cfg(feature = "remote")]
pub(crate) use byte_source::coalesce;
pub(crate) use byte_source::out_of_bounds;
pub use byte_source::{ByteSource, FileSource, MemorySource};
pub(crate) use compress::read_error as compress_read_error;
pub use compress::{decoder, Inflater, ZlibReader};
pub(crate) use file::{load, open_file, write_atomically};
pub use file::{RecordFile, STDIN_NAME};
pub use hint::framing_hint;
pub use source::{open_source, Source};
pub use stream::StreamRecords;

/// Writes `bytes` as the whole file at `path`: a local file written
/// atomically (a temporary file beside it, synced, renamed), or with
/// feature `remote` an object put at the URL with `options.storage` (one
/// `PUT`: whole or not at all). What writes index files beside data.
pub fn write_whole(path: &Path, bytes: Vec<u8>, options: &OpenOptions) -> Result<(), crate::Error> {
    #[cfg(feature = "remote")]
    if remote::is_remote(path) {
        return remote::put(&path.display().to_string(), bytes.into(), &options.storage);
    }
    #[cfg(feature = "remote")]
    if let Some(local) = remote::file_url_path(path) {
        return write_atomically(&local, &bytes);
    }
    let _ = options;
    write_atomically(path, &bytes)
}

/// The compression of a whole record file (TensorFlow's `compression_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Detect it from the first bytes (docs/FORMAT.md §1.6): a GZIP or ZLIB header that
    /// is not a valid TFRecord header.
    #[default]
    Auto,
    /// Not compressed.
    None,
    /// One GZIP stream, possibly of several members.
    Gzip,
    /// One ZLIB stream.
    Zlib,
}

impl Compression {
    /// The name used on the command line: `auto`, `none`, `gzip` or `zlib`.
    pub const fn name(self) -> &'static str {
        match self {
            Compression::Auto => "auto",
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
        }
    }
}

/// `auto`, `none`, `gzip` or `zlib`.
impl OptionName for Compression {
    const WHAT: &'static str = "compression";
    const ALL: &'static [Self] = &[
        Compression::Auto,
        Compression::None,
        Compression::Gzip,
        Compression::Zlib,
    ];
    fn name(self) -> &'static str {
        Compression::name(self)
    }
}

crate::option_names!(Compression);

/// How to open a record file.
///
/// ```
/// use recordwire::frame::Framing;
/// use recordwire::io::{Compression, OpenOptions};
///
/// let opts = OpenOptions::default()
///     .with_framing(Some(Framing::TfRecord))
///     .with_compression(Compression::Gzip)
///     .with_mmap(false);
/// assert_eq!(opts.compression, Compression::Gzip);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOptions {
    /// The framing; `None` (the default) detects it, from the first bytes
    /// and the file's name ([`framing_hint`]; docs/FORMAT.md §1.6).
    ///
    /// Compressed input is TFRecord unless named (or its name says) otherwise.
    pub framing: Option<Framing>,
    /// The compression; [`Compression::Auto`] (the default) detects it.
    pub compression: Compression,
    /// Memory-map plain regular files (default `true`); `false` reads them
    /// with plain reads instead (`--no-mmap`), for files that may change or
    /// be truncated while they are open (see [`RecordFile`]):
    /// [`Source::open`] then streams them in chunks, in constant memory, and
    /// [`RecordFile::open`] reads them whole into memory.
    pub mmap: bool,
    /// CRC checks and error policy.
    pub read: ReadOptions,
    /// Options of the stores that remote URLs are read from (endpoints,
    /// credentials, retries; see [`remote::StorageOptions`]). Feature `remote`.
    #[cfg(feature = "remote")]
    pub storage: remote::StorageOptions,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            framing: None,
            compression: Compression::Auto,
            mmap: true,
            read: ReadOptions::default(),
            #[cfg(feature = "remote")]
            storage: remote::StorageOptions::default(),
        }
    }
}

impl OpenOptions {
    /// Sets [`framing`](Self::framing) (`None` to detect it).
    #[must_use]
    pub fn with_framing(mut self, framing: Option<Framing>) -> Self {
        self.framing = framing;
        self
    }

    /// Sets [`compression`](Self::compression).
    #[must_use]
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Sets [`mmap`](Self::mmap).
    #[must_use]
    pub fn with_mmap(mut self, mmap: bool) -> Self {
        self.mmap = mmap;
        self
    }

    /// Sets [`read`](Self::read).
    #[must_use]
    pub fn with_read(mut self, read: ReadOptions) -> Self {
        self.read = read;
        self
    }

    /// Sets [`storage`](Self::storage). Feature `remote`.
    #[cfg(feature = "remote")]
    #[must_use]
    pub fn with_storage(mut self, storage: remote::StorageOptions) -> Self {
        self.storage = storage;
        self
    }
}

/// What an input is read as: compression, framing, and how sure that is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Never `Auto`.
    pub(crate) compression: Compression,
    pub(crate) framing: Framing,
    pub(crate) basis: Basis,
}

/// The compression (never `Auto`) and framing of an input that starts with
/// `prefix` (its first 12 bytes, or all of it when shorter) and whose name
/// suggests `hint` ([`framing_hint`]), given what the options name
/// (docs/FORMAT.md §1.6).
///
/// A named framing or compression is used as named. Else: a valid TFRecord
/// header is TFRecord, whatever the name; a compressed input holds the
/// hint's framing, or TFRecord; a plain one that does not start with a valid
/// TFRecord header holds the hint's framing, or else OFRecord, as a
/// fallback ([`Basis::Fallback`]: an error in its first frame then says that
/// the input is not a record file at all).
pub(crate) fn resolve(prefix: &[u8], hint: Option<Framing>, options: &OpenOptions) -> Resolved {
    let prefix = prefix.get(..TFRECORD_HEADER_LEN).unwrap_or(prefix);
    let detected = detect(prefix);
    let compression = match options.compression {
        Compression::Auto => match detected {
            Detected::Gzip => Compression::Gzip,
            Detected::Zlib => Compression::Zlib,
            Detected::TfRecord | Detected::OfRecord => Compression::None,
        },
        named => named,
    };
    let compressed = matches!(compression, Compression::Gzip | Compression::Zlib);
    let (framing, basis) = match (options.framing, hint) {
        (Some(named), _) => (named, Basis::Named),
        // An empty file: the hint's framing (zero records either way).
        (None, Some(hint)) if prefix.is_empty() => (hint, Basis::Header),
        (None, _) if !compressed && detected == Detected::TfRecord => {
            (Framing::TfRecord, Basis::Header)
        }
        (None, Some(hint)) => (hint, Basis::Assumed),
        (None, None) if compressed => (Framing::TfRecord, Basis::Assumed),
        (None, None) => (Framing::OfRecord, Basis::Fallback),
    };
    Resolved {
        compression,
        framing,
        basis,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
