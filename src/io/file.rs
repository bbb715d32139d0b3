//! A whole record file in memory: mapped, or read.

use std::fmt;
use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::compress::{decoder, read_all, read_error};
use super::{framing_hint, mmap, resolve, Compression, OpenOptions, Resolved};
use crate::error::{Error, ErrorKind};
use crate::frame::{explain_first_frame, records_at, Basis, Framing, ReadOptions, Record, Records};

/// The name given to standard input in messages.
pub const STDIN_NAME: &str = "<stdin>";

/// A whole record file, its (uncompressed) content held as [`Bytes`].
///
/// - A plain regular file is **memory-mapped** and wrapped with
///   [`Bytes::from_owner`]: no copy at all, and
///   [`record_bytes`](Self::record_bytes) hands out owned, `Send + 'static`
///   slices of the map.
/// - With [`OpenOptions::mmap`] off (`--no-mmap`), for empty files, for what is
///   not a regular file (pipes, devices, `-` for stdin), or when mapping
///   fails, the file is read into memory instead.
/// - A compressed file (GZIP or ZLIB, see [`Compression`]) is decompressed
///   into memory: **not zero-copy**, and the whole decompressed content is
///   held. (To walk a compressed file with bounded memory, use
///   [`Source`](super::Source), which streams it.) If decompression fails, the
///   content stops where it failed and the iteration reports a
///   `compression_error` there, after every record before it.
///
/// ```
/// use recordwire::frame::{file_of, Framing};
/// use recordwire::io::{OpenOptions, RecordFile};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data.tfrecord");
/// std::fs::write(&path, file_of(Framing::TfRecord, [&b"one"[..], b"two"]))?;
///
/// let file = RecordFile::open(&path, &OpenOptions::default())?;
/// assert_eq!(file.framing(), Framing::TfRecord); // detected
/// let mut owned = Vec::new();
/// for record in file.records() {
///     let record = record?;
///     owned.push(file.record_bytes(&record)); // zero-copy, 'static
/// }
/// drop(file);
/// assert_eq!(owned, [&b"one"[..], b"two"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RecordFile {
    bytes: Bytes,
    name: Arc<str>,
    framing: Framing,
    compression: Compression,
    read: ReadOptions,
    /// The memory map behind `bytes`, when the file is mapped (for advice).
    map: Option<Arc<memmap2::Mmap>>,
    /// Decompression stopped early for this reason.
    early_end: Option<ErrorKind>,
    /// How the framing was chosen.
    basis: Basis,
}

/// Shows what the file is, not its bytes.
impl fmt::Debug for RecordFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordFile")
            .field("name", &self.name)
            .field("framing", &self.framing)
            .field("compression", &self.compression)
            .field("len", &self.bytes.len())
            .field("mapped", &self.map.is_some())
            .field("early_end", &self.early_end)
            .finish_non_exhaustive()
    }
}

impl RecordFile {
    /// The bytes of the file at `path` as they are stored: not decompressed,
    /// no framing looked for (an index file, or a compressed file read
    /// through its checkpoint index); memory-mapped unless `mmap` is false.
    /// Errors: `io_error`, with the file name.
    pub fn stored_bytes(path: impl AsRef<Path>, mmap: bool) -> Result<Bytes, Error> {
        let options = OpenOptions::default()
            .with_framing(Some(Framing::OfRecord))
            .with_compression(Compression::None)
            .with_mmap(mmap);
        Ok(RecordFile::open(path, &options)?.bytes().clone())
    }

    /// [`stored_bytes`](Self::stored_bytes) of a local path, or with
    /// feature `remote` a URL read whole with `options.storage`
    /// (`options.mmap` for a local path).
    pub fn stored_bytes_with(
        path: impl AsRef<Path>,
        options: &OpenOptions,
    ) -> Result<Bytes, Error> {
        let path = path.as_ref();
        #[cfg(feature = "remote")]
        if super::remote::is_remote(path) {
            let name = path.display().to_string();
            let source = Arc::new(super::remote::RemoteSource::open(&name, &options.storage)?);
            return super::remote::read_whole(&source);
        }
        RecordFile::stored_bytes(path, options.mmap)
    }

    /// Opens the file at `path` (`-` for stdin, read whole), detecting its
    /// framing and compression unless `options` name them: from the first
    /// bytes and the name ([`framing_hint`]), as docs/FORMAT.md §1.6 says.
    ///
    /// Errors: `io_error` (with the file name) when the file cannot be opened
    /// or read. Damage inside the file is reported while iterating, and so
    /// is a file whose first bytes fit neither framing: its first item is
    /// then an error at record 0, byte 0, that says `not a TFRecord or
    /// OFRecord file: …` ([`Error::detail`]).
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<RecordFile, Error> {
        let path = path.as_ref();
        if path == Path::new("-") {
            let name: Arc<str> = STDIN_NAME.into();
            let mut content = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut content)
                .map_err(|e| Error::io(e).with_file(Arc::clone(&name)))?;
            return Ok(Self::from_content(
                content.into(),
                name,
                None,
                options,
                None,
            ));
        }
        #[cfg(feature = "remote")]
        if let Some(local) = super::remote::file_url_path(path) {
            return RecordFile::open(local, options);
        }
        let name: Arc<str> = path.display().to_string().into();
        let hint = framing_hint(path);
        #[cfg(feature = "remote")]
        if super::remote::is_remote(path) {
            let source = Arc::new(super::remote::RemoteSource::open(&name, &options.storage)?);
            let content = super::remote::read_whole(&source)?;
            return Ok(Self::from_content(content, name, hint, options, None));
        }
        let (file, meta) = open_file(path, &name)?;
        let (content, map) = load(file, &meta, options.mmap, &name)?;
        Ok(Self::from_content(content, name, hint, options, map))
    }

    /// A record file over `bytes`, already in memory, named `name` in errors.
    ///
    /// Detection and decompression follow `options` as in
    /// [`open`](Self::open), from the bytes alone: `name` is not read for a
    /// framing hint (`options.mmap` is not used).
    ///
    /// ```
    /// use bytes::Bytes;
    /// use recordwire::frame::{file_of, Framing};
    /// use recordwire::io::{OpenOptions, RecordFile};
    ///
    /// let content = Bytes::from(file_of(Framing::OfRecord, [&b"a"[..]]));
    /// let file = RecordFile::from_bytes(content, "mem", &OpenOptions::default());
    /// assert_eq!(file.framing(), Framing::OfRecord);
    /// assert_eq!(file.records().count(), 1);
    /// ```
    pub fn from_bytes(
        bytes: Bytes,
        name: impl Into<Arc<str>>,
        options: &OpenOptions,
    ) -> RecordFile {
        Self::from_content(bytes, name.into(), None, options, None)
    }

    /// A record file over `raw`, the content of a file whose name suggests
    /// `hint`.
    pub(crate) fn from_content(
        raw: Bytes,
        name: Arc<str>,
        hint: Option<Framing>,
        options: &OpenOptions,
        map: Option<Arc<memmap2::Mmap>>,
    ) -> RecordFile {
        let Resolved {
            compression,
            framing,
            basis,
        } = resolve(&raw, hint, options);
        let (bytes, early_end, map) = match compression {
            Compression::Gzip | Compression::Zlib => {
                let (content, err) = read_all(decoder(std::io::Cursor::new(raw), compression));
                let early_end = err.map(|e| read_error(&e, compression));
                (Bytes::from(content), early_end, None)
            }
            Compression::None | Compression::Auto => (raw, None, map),
        };
        RecordFile {
            bytes,
            name,
            framing,
            compression,
            read: options.read,
            map,
            early_end,
            basis,
        }
    }

    /// How the framing was chosen.
    pub(crate) fn basis(&self) -> Basis {
        self.basis
    }

    /// `err`, met at record 0 and byte 0 of this file by a reader that does
    /// not walk with [`records`](Self::records) (the index builder), with the
    /// message that [`records`](Self::records) would give it: `not a
    /// TFRecord or OFRecord file: …` when the first bytes fit neither
    /// framing (docs/FORMAT.md §1.6).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn explain(&self, err: Error) -> Error {
        explain_first_frame(err, &self.bytes, self.framing, self.basis)
    }

    /// The name, shared.
    pub(crate) fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// The name used in errors and records: the path as given, or `<stdin>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The framing (detected or named in the options).
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// The compression the file had: [`Compression::None`],
    /// [`Compression::Gzip`] or [`Compression::Zlib`].
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The read options [`records`](Self::records) uses.
    pub fn read_options(&self) -> ReadOptions {
        self.read
    }

    /// Whether the content is a memory map of the file (zero-copy).
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    /// The memory map behind the content, when the file is mapped: for
    /// access advice (`madvise`) such as
    /// [`Readahead`](crate::index::Readahead) gives.
    pub fn mmap(&self) -> Option<&memmap2::Mmap> {
        self.map.as_deref()
    }

    /// The whole content (decompressed, for a compressed file).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Bytes of the content (decompressed, for a compressed file).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the content is empty (a file with zero records).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Iterates over every frame, with the file's read options; every error
    /// carries the file name.
    pub fn records(&self) -> Records<'_> {
        self.records_with(self.read)
    }

    /// Like [`records`](Self::records), with other read options.
    pub fn records_with(&self, opts: ReadOptions) -> Records<'_> {
        self.records_from(0, 0, opts)
    }

    /// Iterates from the frame at absolute `offset` (known from an index), which
    /// gets id `first_id`. An `offset` past the end gives an empty iteration.
    pub fn records_from(&self, offset: u64, first_id: u64, opts: ReadOptions) -> Records<'_> {
        let len = self.bytes.len();
        let start = usize::try_from(offset).map_or(len, |o| o.min(len));
        let rest = self.bytes.get(start..).unwrap_or_default();
        records_at(rest, start as u64, first_id, self.framing, opts)
            .with_file_of_records(&self.name)
            .with_early_end(self.early_end.clone())
            .with_basis(self.basis)
    }

    /// The error that made the content end early (decompression failure), if any.
    pub fn early_end(&self) -> Option<&ErrorKind> {
        self.early_end.as_ref()
    }

    /// The data of `record` (read from this file) as an owned handle that
    /// shares this file's memory: no copy, `Send + 'static`, valid after the
    /// file is dropped.
    ///
    /// If `record` does not borrow from this file's content, its data is
    /// copied instead.
    pub fn record_bytes(&self, record: &Record<'_>) -> Bytes {
        let outer = self.bytes.as_ptr_range();
        let inner = record.data.as_ptr_range();
        if outer.start <= inner.start && inner.end <= outer.end {
            self.bytes.slice_ref(record.data)
        } else {
            Bytes::copy_from_slice(record.data)
        }
    }

    pub(crate) fn early_end_kind(&self) -> Option<ErrorKind> {
        self.early_end.clone()
    }
}

/// Opens the file at `path`, with its metadata; errors carry `name`.
pub(crate) fn open_file(path: &Path, name: &Arc<str>) -> Result<(File, Metadata), Error> {
    let io_error = |e: std::io::Error| Error::io(e).with_file(Arc::clone(name));
    let file = File::open(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    Ok((file, meta))
}

/// A shared memory map, as the owner of a [`Bytes`].
struct SharedMap(Arc<memmap2::Mmap>);

impl AsRef<[u8]> for SharedMap {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The raw content of `file`: mapped when `mmap` allows and the file is a
/// non-empty regular file (and mapping works), else read. The map, when
/// there is one, comes along for advice.
pub(crate) fn load(
    mut file: File,
    meta: &Metadata,
    mmap: bool,
    name: &Arc<str>,
) -> Result<(Bytes, Option<Arc<memmap2::Mmap>>), Error> {
    if mmap && meta.is_file() && meta.len() > 0 {
        if let Ok(map) = mmap::map(&file) {
            let map = Arc::new(map);
            return Ok((Bytes::from_owner(SharedMap(Arc::clone(&map))), Some(map)));
        }
    }
    let content =
        read_file(&mut file, meta).map_err(|e| Error::io(e).with_file(Arc::clone(name)))?;
    Ok((content, None))
}

/// Reads the rest of `file`. Its size (for a regular file) is only a capacity
/// hint, reserved when the allocator agrees (a sparse file may claim more than
/// memory can hold).
pub(crate) fn read_file(file: &mut File, meta: &Metadata) -> std::io::Result<Bytes> {
    let mut content = Vec::new();
    if meta.is_file() {
        if let Ok(hint) = usize::try_from(meta.len()) {
            // Failing to reserve is fine: `read_to_end` grows as bytes arrive.
            let _ = content.try_reserve_exact(hint);
        }
    }
    file.read_to_end(&mut content)?;
    Ok(content.into())
}

/// Writes `bytes` to `path` atomically: to a temporary file beside it,
/// synced, then renamed over `path` (nothing half-written ever appears under
/// the final name). Errors carry the path.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let name: Arc<str> = path.display().to_string().into();
    let io = |e: std::io::Error| Error::io(e).with_file(Arc::clone(&name));
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = dir.join(format!(".{file_name}.tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.map_err(io)
}
