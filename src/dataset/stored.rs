//! A record file's bytes as stored, before any decompression, and the
//! index files read whole beside it.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Error;
use crate::index::{sidecar_path, GZ_MAGIC};
use crate::io::{ByteSource, FileSource, MemorySource};

/// The file's bytes as stored, before any decompression.
pub(super) enum Stored {
    Memory(MemorySource),
    File(FileSource),
    #[cfg(feature = "remote")]
    Remote(Arc<crate::io::remote::RemoteSource>),
}

impl Stored {
    /// Opens `path` (`-`: stdin, read whole): mapped when `mmap` allows and
    /// the file is a non-empty regular file (and mapping works), else a
    /// regular file is read with positioned reads, and anything else (a
    /// pipe, a device) is read whole.
    pub(super) fn open(path: &Path, name: &Arc<str>, mmap: bool) -> Result<Stored, Error> {
        let io = |e: std::io::Error| Error::io(e).with_file(Arc::clone(name));
        if path == Path::new("-") {
            let mut content = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut content)
                .map_err(io)?;
            return Ok(Stored::Memory(MemorySource::new(content.into())));
        }
        let (file, meta) = crate::io::open_file(path, name)?;
        if meta.is_file() && !mmap {
            return Ok(Stored::File(FileSource::new(file, meta.len())));
        }
        let (bytes, map) = crate::io::load(file, &meta, mmap, name)?;
        Ok(Stored::Memory(MemorySource::mapped(bytes, map)))
    }

    pub(super) fn source(&self) -> &dyn ByteSource {
        match self {
            Stored::Memory(m) => m,
            Stored::File(f) => f,
            #[cfg(feature = "remote")]
            Stored::Remote(r) => &**r,
        }
    }

    /// The whole content in memory (read whole from a positioned-read file;
    /// a remote object streamed with large requests).
    pub(super) fn whole(&self) -> Result<Bytes, Error> {
        match self {
            Stored::Memory(m) => Ok(m.bytes().clone()),
            Stored::File(f) => f.read_range(0..f.len()),
            #[cfg(feature = "remote")]
            Stored::Remote(r) => crate::io::remote::read_whole(r),
        }
    }

    /// What to read the whole file with in one pass, when the source's own
    /// ranged reads are not the way (a remote object).
    pub(super) fn streamer(&self) -> Option<Streamer> {
        match self {
            #[cfg(feature = "remote")]
            Stored::Remote(r) => {
                let r = Arc::clone(r);
                Some(Box::new(move || {
                    Box::new(crate::io::remote::RemoteReader::observed(r)) as Box<dyn Read + Send>
                }))
            }
            _ => None,
        }
    }

    pub(super) fn into_source(self) -> Arc<dyn ByteSource> {
        match self {
            Stored::Memory(m) => Arc::new(m),
            Stored::File(f) => Arc::new(f),
            #[cfg(feature = "remote")]
            Stored::Remote(r) => r,
        }
    }
}

/// An index file read whole: a sidecar, the local cache's copy, or one
/// named by the caller.
pub(super) struct IndexFile {
    /// Its path or URL (names it in errors).
    pub(super) name: Arc<str>,
    pub(super) bytes: Bytes,
    /// Kept for this very object (same URL, size and ETag): its content
    /// fingerprint is not checked again.
    pub(super) trusted: bool,
}

impl IndexFile {
    /// The sidecar of the local file at `path`, if there is one.
    pub(super) fn local_sidecar(path: &Path, mmap: bool) -> Option<Result<IndexFile, Error>> {
        let sidecar = sidecar_path(path);
        if !sidecar.is_file() {
            return None;
        }
        Some(IndexFile::local(&sidecar, mmap))
    }

    /// The index file at the local `path`.
    pub(super) fn local(path: &Path, mmap: bool) -> Result<IndexFile, Error> {
        Ok(IndexFile {
            name: path.display().to_string().into(),
            bytes: crate::io::RecordFile::stored_bytes(path, mmap)?,
            trusted: false,
        })
    }

    pub(super) fn is_checkpoint_index(&self) -> bool {
        self.bytes.starts_with(&GZ_MAGIC)
    }
}

/// Makes the reader that a stored file is best read front to back with,
/// when it is not the source's own ranged reads: a remote object's
/// [`RemoteReader`](crate::io::remote::RemoteReader) (large requests, read
/// ahead, progress reported).
pub(super) type Streamer = Box<dyn FnOnce() -> Box<dyn Read + Send>>;
