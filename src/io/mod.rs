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

use crate::frame::{Detected, Framing, ReadOptions};
use crate::names::OptionName;

mod compress;
mod file;
mod mmap;
mod source;
mod stream;

pub use compress::{decoder, Inflater, ZlibReader};
pub use file::{RecordFile, STDIN_NAME};
pub use source::{open_source, Source};
pub use stream::StreamRecords;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// The framing; `None` (the default) detects it.
    ///
    /// Compressed input is TFRecord unless named otherwise.
    pub framing: Option<Framing>,
    /// The compression; [`Compression::Auto`] (the default) detects it.
    pub compression: Compression,
    /// Memory-map plain regular files (default `true`); `false` reads them
    /// into memory instead (`--no-mmap`), for files that may change or be
    /// truncated while they are open (see [`RecordFile`]).
    pub mmap: bool,
    /// CRC checks and error policy.
    pub read: ReadOptions,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            framing: None,
            compression: Compression::Auto,
            mmap: true,
            read: ReadOptions::default(),
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
}

/// The compression (never `Auto`) and framing of an input whose first bytes
/// were `detected`, given what the options name.
///
/// A compressed input is TFRecord unless the framing is named; a plain one is
/// TFRecord when it starts with a valid TFRecord header (or is empty), and
/// otherwise OFRecord.
pub(crate) fn resolve(detected: Detected, options: &OpenOptions) -> (Compression, Framing) {
    let compression = match options.compression {
        Compression::Auto => match detected {
            Detected::Gzip => Compression::Gzip,
            Detected::Zlib => Compression::Zlib,
            Detected::TfRecord | Detected::OfRecord => Compression::None,
        },
        named => named,
    };
    let framing = options.framing.unwrap_or(match (compression, detected) {
        (Compression::Gzip | Compression::Zlib, _) | (_, Detected::TfRecord) => Framing::TfRecord,
        _ => Framing::OfRecord,
    });
    (compression, framing)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
