//! One record file of a dataset, whatever its kind: its bytes behind the
//! [`ByteSource`] seam, its index, its framing, compression and payload.

use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::error::Error;
use crate::frame::{
    explain_first_frame, Basis, ErrorPolicy, Framing, OwnedRecord, ReadOptions, Record,
};
use crate::index::{
    sidecar_path, stale, Access, Advise, GzIndex, GzSource, Index, IndexFormat, Skipped,
    DEFAULT_SPACING, GZ_MAGIC, MAX_BATCH, SPAN_STRIDE,
};
use crate::io::{
    framing_hint, resolve, ByteSource, Compression, FileSource, MemorySource, OpenOptions,
    Resolved, STDIN_NAME,
};
use crate::view::{PayloadKind, PayloadSniffer};

/// Where a [`Shard`]'s index came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexOrigin {
    /// The current sidecar index `<file>.rwindex`, used in place.
    Sidecar,
    /// Built in memory while opening, because there was no sidecar
    /// (`rejected` is `None`) or because the sidecar was rejected for the
    /// reason given (stale, damaged, another framing, unreadable).
    Built {
        /// Why the sidecar was not used, if there was one.
        rejected: Option<Error>,
    },
    /// Given by the caller ([`Shard::open_with`], [`Shard::new`]).
    Given,
    /// A remote object's index kept in the local index cache
    /// (`io::remote::IndexCache`, with the `remote` feature) for the object's
    /// URL, size and ETag: used without fetching anything more.
    Cached,
}

/// One record file with its index, read through a [`ByteSource`]: a plain
/// file mapped (zero copy) or read with positioned reads (`--no-mmap`), or
/// a GZIP/ZLIB file read through its checkpoint index (inflating only the
/// spans that are read, never the whole file). Framing, compression and
/// payload are the shard's own, detected per file.
///
/// Records come out as [`OwnedRecord`]s: their data is a [`Bytes`] share
/// of the source (a slice of the map, or of an inflated span), valid after
/// the shard is dropped and `Send + 'static`; on a mapped file, getting one
/// allocates nothing.
///
/// ```
/// use recordwire::encode::{RecordWriter, WriterOptions};
/// use recordwire::frame::Framing;
/// use recordwire::dataset::Shard;
/// use recordwire::io::Compression;
///
/// let dir = tempfile::tempdir()?;
/// for (name, compression) in [("train.tfrecord", Compression::None), ("train.tfrecord.gz", Compression::Gzip)] {
///     let path = dir.path().join(name);
///     let options = WriterOptions::new(Framing::TfRecord).with_compression(compression);
///     let mut w = RecordWriter::create(&path, options)?;
///     for i in 0..1000 {
///         w.write_record(format!("record {i}").as_bytes())?;
///     }
///     w.finish()?;
///     let shard = Shard::open(&path, &Default::default())?;
///     assert_eq!(shard.len(), 1000);
///     let record = shard.get(999)?.unwrap();
///     drop(shard);
///     assert_eq!(record.data, &b"record 999"[..]); // still valid
/// }
/// let gz = Shard::open(dir.path().join("train.tfrecord.gz"), &Default::default())?;
/// assert_eq!(gz.compression(), Compression::Gzip);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Shard {
    name: Arc<str>,
    source: Arc<dyn ByteSource>,
    index: Index,
    gz: Option<Arc<GzSource>>,
    framing: Framing,
    compression: Compression,
    basis: Basis,
    read: ReadOptions,
    origin: IndexOrigin,
    /// Bytes of the file as stored (compressed, for a compressed file).
    stored_len: u64,
    payload: Arc<OnceLock<PayloadKind>>,
    /// What indexing under the skip policy passed over.
    skipped: Arc<[Skipped]>,
}

/// Shows what the shard is, not its bytes.
impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("name", &self.name)
            .field("records", &self.index.len())
            .field("framing", &self.framing)
            .field("compression", &self.compression)
            .field("source", &self.source.kind())
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

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
    fn open(path: &Path, name: &Arc<str>, mmap: bool) -> Result<Stored, Error> {
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

    fn source(&self) -> &dyn ByteSource {
        match self {
            Stored::Memory(m) => m,
            Stored::File(f) => f,
            #[cfg(feature = "remote")]
            Stored::Remote(r) => &**r,
        }
    }

    /// The whole content in memory (read whole from a positioned-read file;
    /// a remote object streamed with large requests).
    fn whole(&self) -> Result<Bytes, Error> {
        match self {
            Stored::Memory(m) => Ok(m.bytes().clone()),
            Stored::File(f) => f.read_range(0..f.len()),
            #[cfg(feature = "remote")]
            Stored::Remote(r) => crate::io::remote::read_whole(r),
        }
    }

    /// What to read the whole file with in one pass, when the source's own
    /// ranged reads are not the way (a remote object).
    fn streamer(&self) -> Option<Streamer> {
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

    fn into_source(self) -> Arc<dyn ByteSource> {
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
pub(crate) struct IndexFile {
    /// Its path or URL (names it in errors).
    pub(crate) name: Arc<str>,
    pub(crate) bytes: Bytes,
    /// Kept for this very object (same URL, size and ETag): its content
    /// fingerprint is not checked again.
    pub(crate) trusted: bool,
}

impl IndexFile {
    /// The sidecar of the local file at `path`, if there is one.
    fn local_sidecar(path: &Path, mmap: bool) -> Option<Result<IndexFile, Error>> {
        let sidecar = sidecar_path(path);
        if !sidecar.is_file() {
            return None;
        }
        Some(IndexFile::local(&sidecar, mmap))
    }

    /// The index file at the local `path`.
    fn local(path: &Path, mmap: bool) -> Result<IndexFile, Error> {
        Ok(IndexFile {
            name: path.display().to_string().into(),
            bytes: crate::io::RecordFile::stored_bytes(path, mmap)?,
            trusted: false,
        })
    }

    fn is_checkpoint_index(&self) -> bool {
        self.bytes.starts_with(&GZ_MAGIC)
    }
}

impl Shard {
    /// Opens the record file at `path` (`-` for stdin, read whole) with its
    /// index: the sidecar `<path>.rwindex` when it is current for this data
    /// (a native index of a plain file, a checkpoint index of a compressed
    /// one), else one built in memory (one pass over the frames, data CRCs
    /// not verified: [`get`](Self::get) checks them per record; a compressed
    /// file is indexed with checkpoints every [`DEFAULT_SPACING`] bytes of
    /// output, and is never decompressed whole). Why a sidecar was not used
    /// is kept in [`origin`](Self::origin).
    ///
    /// Framing and compression are detected from the first bytes and the
    /// name, unless `options` name them (docs/FORMAT.md §1.6). With
    /// [`OpenOptions::mmap`] off, a plain file is read range by range with
    /// positioned reads; a compressed one is read whole (compressed).
    ///
    /// Errors: `io_error` when the file cannot be read, the framing or
    /// compression errors of a damaged file met while indexing, all with the
    /// file name.
    ///
    /// **Under the skip policy** (`options.read.policy` is
    /// [`ErrorPolicy::Skip`]) a damaged file opens with the valid records
    /// only, as [`Index::build_skipping`] finds them (data CRCs verified when
    /// `options.read.check_data_crc`, so that every id can be read); what
    /// was passed over is in [`skipped`](Self::skipped). The sidecar is then
    /// not used (the file is always indexed afresh), and the index built is
    /// never written anywhere ([`Index::has_skips`]). A plain file is read
    /// whole for it (mapped, or into memory with `mmap` off). A compressed
    /// file is indexed with checkpoints as usual when that succeeds; when it
    /// is damaged it is decompressed into memory up to the damage, and a
    /// decompression error ends it there (the records before it are kept).
    /// An index given to [`open_with`](Self::open_with) is used as given.
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Shard, Error> {
        Shard::open_with(path, options, None)
    }

    /// [`open`](Self::open) with the index file at `index` instead of the
    /// sidecar: any of the formats recordwire reads, told apart by their
    /// content (native, DALI's text index, a raw offset table, or a
    /// checkpoint index for a compressed file). An index that does not
    /// belong to the data is a `stale_index` error.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: &OpenOptions,
        index: Option<&Path>,
    ) -> Result<Shard, Error> {
        Shard::open_inner(path.as_ref(), options, index, true)?
            .ok_or_else(|| unreachable_none(path.as_ref()))
    }

    /// Opens the record file at `path` with its sidecar index only:
    /// `Ok(None)` when it has none, `stale_index` (with the sidecar's name)
    /// when the one there does not belong to the data. Nothing is built, so
    /// this costs a few reads: what `count` uses before counting by reading.
    pub fn open_sidecar(
        path: impl AsRef<Path>,
        options: &OpenOptions,
    ) -> Result<Option<Shard>, Error> {
        let path = path.as_ref();
        if path == Path::new("-") {
            return Ok(None);
        }
        Shard::open_inner(path, options, None, false)
    }

    fn open_inner(
        path: &Path,
        options: &OpenOptions,
        index: Option<&Path>,
        build: bool,
    ) -> Result<Option<Shard>, Error> {
        #[cfg(feature = "remote")]
        if let Some(local) = crate::io::remote::file_url_path(path) {
            return Shard::open_inner(&local, options, index, build);
        }
        let name: Arc<str> = if path == Path::new("-") {
            STDIN_NAME.into()
        } else {
            path.display().to_string().into()
        };
        #[cfg(feature = "remote")]
        if crate::io::remote::is_remote(path) {
            let (stored, sidecar) = super::remote::open_stored(&name, options, index, build)?;
            return Shard::open_stored(path, name, stored, sidecar, options, index, build);
        }
        let stored = Stored::open(path, &name, options.mmap)?;
        let sidecar = (path != Path::new("-"))
            .then(|| IndexFile::local_sidecar(path, options.mmap))
            .flatten();
        Shard::open_stored(path, name, stored, sidecar, options, index, build)
    }

    /// Opens the shard whose bytes are `stored`, named `name`, with its
    /// sidecar (or cached index) `sidecar`.
    fn open_stored(
        path: &Path,
        name: Arc<str>,
        stored: Stored,
        sidecar: Option<Result<IndexFile, Error>>,
        options: &OpenOptions,
        index: Option<&Path>,
        build: bool,
    ) -> Result<Option<Shard>, Error> {
        if !build && sidecar.is_none() {
            return Ok(None);
        }
        #[cfg(feature = "remote")]
        let stored_info = match &stored {
            Stored::Remote(r) => Some(Arc::clone(r)),
            _ => None,
        };
        let stored_len = stored.source().len();
        let prefix = stored
            .source()
            .read_range(0..stored_len.min(crate::frame::TFRECORD_HEADER_LEN as u64))
            .map_err(|e| e.with_file(Arc::clone(&name)))?;
        let hint = (path != Path::new("-"))
            .then(|| framing_hint(path))
            .flatten();
        let resolved = resolve(&prefix, hint, options);
        let skip = match options.read.policy {
            ErrorPolicy::Skip { .. } if build && index.is_none() => Some(options.read),
            _ => None,
        };
        let given = match index {
            Some(ix) => Some(read_index_file(ix, options)?),
            None => None,
        };
        let opened = match (resolved.compression, skip) {
            (Compression::Gzip | Compression::Zlib, Some(read)) => {
                Opened::compressed_skipping(stored, &resolved, read).map(Some)
            }
            (Compression::Gzip | Compression::Zlib, None) => {
                Opened::compressed(stored, &resolved, given, sidecar, build)
            }
            (_, Some(read)) => Opened::plain_skipping(stored, &resolved, read, &prefix).map(Some),
            (_, None) => Opened::plain(stored, &resolved, given, sidecar, &prefix, build),
        };
        let Some(Opened {
            source,
            index: idx,
            gz,
            origin,
            skipped,
        }) = opened.map_err(|e| match e.file() {
            // An index file's own error names it.
            Some(_) => e,
            None => e.with_file(Arc::clone(&name)),
        })?
        else {
            return Ok(None);
        };
        #[cfg(feature = "remote")]
        let remote = stored_info;
        let shard = Shard {
            name,
            source,
            index: idx,
            gz,
            framing: resolved.framing,
            compression: resolved.compression,
            basis: resolved.basis,
            read: options.read,
            origin,
            stored_len,
            payload: Arc::default(),
            skipped: skipped.into(),
        };
        #[cfg(feature = "remote")]
        if let Some(object) = remote {
            // Open: reads may go through the span cache from now on.
            object.start_spans();
            super::remote::remember(&shard, &object, &options.storage);
        }
        let _ = shard.advise(Access::Random);
        Ok(Some(shard))
    }

    /// A shard over `source` (the stream its records are read from), named
    /// `name`, with `index`, which must be its index: same framing, and its
    /// data size and content fingerprint those of the source
    /// (`stale_index` otherwise). For sources of one's own (a remote file,
    /// a buffer in memory).
    pub fn new(
        name: impl Into<Arc<str>>,
        source: Arc<dyn ByteSource>,
        index: Index,
        framing: Framing,
        read: ReadOptions,
    ) -> Result<Shard, Error> {
        let name = name.into();
        if index.framing() != framing {
            return Err(framing_mismatch(0, index.framing(), framing).with_file(name));
        }
        check_source(&index, &*source).map_err(|e| e.with_file(Arc::clone(&name)))?;
        Ok(Shard {
            name,
            stored_len: source.len(),
            source,
            index,
            gz: None,
            framing,
            compression: Compression::None,
            basis: Basis::Named,
            read,
            origin: IndexOrigin::Given,
            payload: Arc::default(),
            skipped: Arc::new([]),
        })
    }

    /// Reads this shard's records as `payload` instead of detecting it.
    #[must_use]
    pub fn with_payload(mut self, payload: PayloadKind) -> Shard {
        self.set_payload(payload);
        self
    }

    /// Reads this shard's records as `payload` from now on.
    pub fn set_payload(&mut self, payload: PayloadKind) {
        // A new cell: clones made before keep what they read as.
        self.payload = Arc::new(OnceLock::from(payload));
    }

    /// Reads this shard's records with `read` (CRC checks).
    #[must_use]
    pub fn with_read(mut self, read: ReadOptions) -> Shard {
        self.read = read;
        self
    }

    /// The byte ranges that opening under the skip policy passed over (see
    /// [`open`](Self::open)), in file order; empty for a clean file or
    /// another policy. Offsets are in the decompressed stream for a
    /// compressed file.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The name used in errors and records: the path as given, or `<stdin>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name, shared (what its records' `file` holds).
    pub fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// The framing (detected or named).
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// The compression of the file: [`Compression::None`],
    /// [`Compression::Gzip`] or [`Compression::Zlib`].
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Whether the file is GZIP or ZLIB compressed.
    pub fn is_compressed(&self) -> bool {
        self.gz.is_some()
    }

    /// The read options (CRC checks) its records are read with.
    pub fn read_options(&self) -> ReadOptions {
        self.read
    }

    /// Where its bytes come from: the stream records are read from (the
    /// decompressed stream, for a compressed file).
    pub fn source(&self) -> &Arc<dyn ByteSource> {
        &self.source
    }

    /// The whole stream, when it is in memory (a mapped or read plain
    /// file): records borrowed from it cost no call through the seam.
    pub fn bytes(&self) -> Option<&Bytes> {
        self.source.in_memory()
    }

    /// Whether the file is memory-mapped (zero copy).
    pub fn is_mapped(&self) -> bool {
        self.source.mmap().is_some()
    }

    /// Bytes of the stream records are read from (decompressed, for a
    /// compressed file).
    pub fn data_len(&self) -> u64 {
        self.source.len()
    }

    /// Bytes of the file as stored (compressed, for a compressed file).
    pub fn stored_len(&self) -> u64 {
        self.stored_len
    }

    /// Its index (of the decompressed stream, for a compressed file).
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Its checkpoint index, when the file is compressed.
    pub fn gz_index(&self) -> Option<&Arc<GzIndex>> {
        self.gz.as_ref().map(|g| g.index())
    }

    /// Its inflating source, when the file is compressed (for what it
    /// inflated: [`GzSource::inflated`], [`GzSource::restarts`]).
    pub fn gz_source(&self) -> Option<&Arc<GzSource>> {
        self.gz.as_ref()
    }

    /// Where the index came from.
    pub fn origin(&self) -> &IndexOrigin {
        &self.origin
    }

    /// The number of records, in O(1).
    pub fn len(&self) -> u64 {
        self.index.len()
    }

    /// Whether the shard has no records.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Advises the kernel how the records are about to be read ([`Access`]):
    /// a shard opens advised for [`Access::Random`] (reading by id); give
    /// [`Access::Sequential`] before reading in file order. Only a hint: a
    /// source that is not a memory map ignores it, and so may the system.
    pub fn advise(&self, access: Access) -> std::io::Result<()> {
        access.advise(self)
    }

    /// The payload its records are read as: named
    /// ([`with_payload`](Self::with_payload)), or detected once, from its
    /// framing (an OFRecord file holds OFRecords) or from its first records
    /// ([`PayloadSniffer`]: tf.Example unless one is a SequenceExample).
    pub fn payload(&self) -> PayloadKind {
        *self.payload.get_or_init(|| match self.framing {
            Framing::OfRecord => PayloadKind::OfRecord,
            Framing::TfRecord => self.sniff().kind(),
        })
    }

    /// What the payload detection saw in the first records of a TFRecord
    /// file (for notes; nothing for an OFRecord file).
    pub fn sniff(&self) -> PayloadSniffer {
        let mut sniffer = PayloadSniffer::new();
        if self.framing == Framing::OfRecord {
            return sniffer;
        }
        let read = self.read.with_data_crc(false);
        for id in 0..self.len().min(PayloadSniffer::RECORDS as u64) {
            match self.get_with(id, &read) {
                Ok(Some(record)) if !sniffer.feed(&record.data) => continue,
                _ => break,
            }
        }
        sniffer
    }

    /// The ranges a page mode of the orders sees its records at, and the
    /// size of the space they lie in: the frame starts in the stream; or,
    /// with a page size of 0 (`by_span`), each checkpoint span of a
    /// compressed file as a page, and every [`DEFAULT_SPACING`] bytes of a
    /// plain file.
    pub(crate) fn order_inputs(&self, by_span: bool) -> (std::borrow::Cow<'_, [u64]>, u64) {
        match (self.gz_index(), by_span) {
            (Some(gz), true) => {
                let size = gz.checkpoints().len() as u64 * SPAN_STRIDE;
                (gz.span_offsets().into(), size)
            }
            (None, true) => {
                let stride = SPAN_STRIDE;
                let spans = self
                    .index
                    .starts()
                    .iter()
                    .map(|&s| (s / DEFAULT_SPACING) * stride + s % DEFAULT_SPACING)
                    .collect::<Vec<u64>>();
                let size = self.source.len().div_ceil(DEFAULT_SPACING).max(1) * stride;
                (spans.into(), size)
            }
            (_, false) => (self.index.starts().into(), self.source.len()),
        }
    }

    /// The order of this shard's records for `spec` (as a one-shard
    /// [`Dataset::order`](super::set::Dataset::order)).
    pub fn order(
        &self,
        spec: crate::order::OrderSpec,
    ) -> Result<crate::order::Order, crate::order::OrderError> {
        super::set::order_of(std::slice::from_ref(self), spec)
    }

    /// Record `id` of this file, owning its bytes; `Ok(None)` past the end.
    /// The frame is checked as [`Index::get`] checks it (length CRC, its
    /// length against the index, data CRC as the read options ask). The
    /// record and errors carry the file name.
    pub fn get(&self, id: u64) -> Result<Option<OwnedRecord>, Error> {
        self.get_with(id, &self.read)
    }

    /// [`get`](Self::get) with other read options.
    pub fn get_with(&self, id: u64, opts: &ReadOptions) -> Result<Option<OwnedRecord>, Error> {
        if let Some(bytes) = self.source.in_memory() {
            let record = self.get_ref_in(bytes, id, opts)?;
            return Ok(record.map(|r| OwnedRecord::from_record(&r, bytes)));
        }
        let Some(span) = self.index.frame_range(id) else {
            return Ok(None);
        };
        let bytes = self.read(span.clone(), id)?;
        let record = self
            .index
            .check_frame(&bytes, span.start, id, opts)
            .map_err(|e| self.explain(e).with_file(Arc::clone(&self.name)))?;
        let record = Record {
            file: Some(&self.name),
            ..record
        };
        Ok(Some(OwnedRecord::from_record(&record, &bytes)))
    }

    /// Record `id` borrowed from the shard's memory, when its bytes are in
    /// memory ([`bytes`](Self::bytes)); `Ok(None)` past the end or when they
    /// are not (use [`get`](Self::get)). Allocates nothing.
    pub fn get_ref(&self, id: u64) -> Result<Option<Record<'_>>, Error> {
        match self.source.in_memory() {
            Some(bytes) => self.get_ref_in(bytes, id, &self.read),
            None => Ok(None),
        }
    }

    fn get_ref_in<'s>(
        &'s self,
        bytes: &'s Bytes,
        id: u64,
        opts: &ReadOptions,
    ) -> Result<Option<Record<'s>>, Error> {
        let record = self
            .index
            .get(bytes, id, opts)
            .map_err(|e| e.with_file(Arc::clone(&self.name)))?;
        Ok(record.map(|r| Record {
            file: Some(&self.name),
            ..r
        }))
    }

    /// Bytes `range` of the stream, for record `id`; errors carry both and
    /// the file.
    fn read(&self, range: Range<u64>, id: u64) -> Result<Bytes, Error> {
        self.source
            .read_range(range)
            .map_err(|e| e.with_record(id).with_file(Arc::clone(&self.name)))
    }

    /// A batch of records of this file: `f(position, record)` for each id
    /// (`None` past the end), in offset order (each page or span read
    /// once; ranges read through [`ByteSource::read_ranges`], which a
    /// remote source coalesces). The first damaged record ends the batch
    /// with its error, after the records before it in offset order.
    pub fn get_many(
        &self,
        ids: &[u64],
        scratch: &mut Scratch,
        mut f: impl FnMut(usize, Option<OwnedRecord>),
    ) -> Result<(), Error> {
        let file = Some(&self.name);
        if let Some(bytes) = self.source.in_memory() {
            return self
                .index
                .get_many(bytes, ids, &self.read, &mut scratch.order, |p, r| {
                    f(
                        p,
                        r.map(|r| OwnedRecord::from_record(&Record { file, ..r }, bytes)),
                    )
                })
                .map_err(|e| e.with_file(Arc::clone(&self.name)));
        }
        for (chunk_no, chunk) in ids.chunks(MAX_BATCH).enumerate() {
            let at = chunk_no * MAX_BATCH;
            self.index.sort_by_offset(chunk, &mut scratch.order);
            scratch.ranges.clear();
            for &p in &scratch.order {
                match self.index.frame_range(chunk[p as usize]) {
                    Some(span) => scratch.ranges.push(span),
                    None => break,
                }
            }
            // A group of ranges at a time (a remote source coalesces within
            // it): what is read is handed out and dropped before the next
            // group, so that a batch spread over a compressed file holds a
            // few spans at a time, not one per record.
            let found = scratch.ranges.len();
            let per_read = self.source.ranges_per_read().max(1);
            for (g, group) in scratch.ranges.chunks(per_read).enumerate() {
                let first = g * per_read;
                scratch.bytes.clear();
                let read = self.source.read_ranges(group, &mut scratch.bytes);
                if let Err(e) = read {
                    // Which record: the first whose bytes the failed read
                    // was to bring (a coalesced request spans several).
                    let j = failed_range(group, e.offset());
                    let id = chunk[scratch.order[first + j] as usize];
                    return Err(e
                        .with_record(id)
                        .with_offset(group[j].start)
                        .with_file(Arc::clone(&self.name)));
                }
                for (j, bytes) in scratch.bytes.iter().enumerate() {
                    let p = scratch.order[first + j];
                    let id = chunk[p as usize];
                    let record = self
                        .index
                        .check_frame(bytes, group[j].start, id, &self.read)
                        .map_err(|e| self.explain(e).with_file(Arc::clone(&self.name)))?;
                    f(
                        at + p as usize,
                        Some(OwnedRecord::from_record(&Record { file, ..record }, bytes)),
                    );
                }
            }
            scratch.bytes.clear();
            // Ids past the end (sorted last).
            for &p in &scratch.order[found..] {
                f(at + p as usize, None);
            }
        }
        Ok(())
    }

    /// Hints that records `ids` will be read soon
    /// ([`ByteSource::prefetch`]): a remote shard with a span cache starts
    /// fetching their spans and returns at once; other shards do nothing.
    pub fn prefetch(&self, ids: &[u64]) {
        let ranges: Vec<Range<u64>> = ids
            .iter()
            .filter_map(|&id| self.index.frame_range(id))
            .collect();
        self.source.prefetch(&ranges);
    }

    /// `err` met at record 0 and byte 0, with the message of a file that is
    /// not a record file when its first bytes fit neither framing.
    pub(crate) fn explain(&self, err: Error) -> Error {
        if err.record() != Some(0) || err.offset() != Some(0) {
            return err;
        }
        // Only then are the first bytes read (for a compressed file, that
        // inflates its first span).
        let len = self
            .source
            .len()
            .min(crate::frame::TFRECORD_HEADER_LEN as u64);
        let head = self.source.read_range(0..len).unwrap_or_default();
        explain_first_frame(err, &head, self.framing, self.basis)
    }
}

/// The scratch memory of [`Shard::get_many`] and
/// [`Dataset::get_many`](super::set::Dataset::get_many): kept by the reader and
/// reused from batch to batch, so that a warm batch allocates nothing.
#[derive(Debug, Default)]
pub struct Scratch {
    pub(crate) order: Vec<u32>,
    pub(crate) ranges: Vec<Range<u64>>,
    pub(crate) bytes: Vec<Bytes>,
    /// `(position, local id)` of each shard's ids in a dataset's batch.
    pub(crate) grouped: Vec<Vec<(usize, u64)>>,
    pub(crate) locals: Vec<u64>,
}

impl Scratch {
    /// Empty scratch memory.
    pub fn new() -> Scratch {
        Scratch::default()
    }
}

/// A mapped shard takes advice through its map; others ignore it.
impl Advise for Shard {
    fn will_need(&self, range: Range<usize>) -> std::io::Result<()> {
        self.source.will_need(range)
    }

    fn random(&self) -> std::io::Result<()> {
        self.source.random()
    }

    fn sequential(&self) -> std::io::Result<()> {
        self.source.sequential()
    }
}

fn framing_mismatch(at: u64, index: Framing, data: Framing) -> Error {
    stale(
        at,
        format!("the index is for {index} data, the data is read as {data}"),
    )
}

/// Checks that `index` belongs to the stream of `source`: its size and
/// content fingerprint, read through the source when it is not in memory.
pub(crate) fn check_source(index: &Index, source: &dyn ByteSource) -> Result<(), Error> {
    match source.in_memory() {
        Some(bytes) => index.check_data(bytes),
        None => index.check_ranges(source),
    }
}

/// What opening found: the source records are read from, the index, and
/// where it came from.
struct Opened {
    source: Arc<dyn ByteSource>,
    index: Index,
    gz: Option<Arc<GzSource>>,
    origin: IndexOrigin,
    skipped: Vec<Skipped>,
}

impl Opened {
    /// A plain file under the skip policy: the index of its valid records
    /// (the sidecar not used), over its bytes in memory.
    fn plain_skipping(
        stored: Stored,
        resolved: &Resolved,
        read: ReadOptions,
        prefix: &[u8],
    ) -> Result<Opened, Error> {
        // Read whole (a remote object streamed, with read-ahead).
        let source: Arc<dyn ByteSource> = match stored.source().in_memory() {
            Some(_) => stored.into_source(),
            None => Arc::new(MemorySource::new(stored.whole()?)),
        };
        let Some(data) = source.in_memory() else {
            return Err(Error::io(std::io::Error::other(
                "the data is not in memory",
            )));
        };
        let _ = Access::Sequential.advise(&*source);
        let (index, skipped) =
            Index::build_skipping(data, resolved.framing, read.check_data_crc, read.policy)
                .map_err(|e| explain_first_frame(e, prefix, resolved.framing, resolved.basis))?;
        Ok(Opened {
            source,
            index,
            gz: None,
            origin: IndexOrigin::Built { rejected: None },
            skipped,
        })
    }

    /// A compressed file under the skip policy: its checkpoint index when
    /// it indexes cleanly (data CRCs verified as `read` says); else its
    /// content decompressed into memory up to the damage, and the index of
    /// its valid records.
    fn compressed_skipping(
        stored: Stored,
        resolved: &Resolved,
        read: ReadOptions,
    ) -> Result<Opened, Error> {
        let data = stored.whole()?;
        let built = GzIndex::build(
            &data,
            resolved.compression,
            resolved.framing,
            DEFAULT_SPACING,
            read.check_data_crc,
        );
        if let Ok(gz) = built {
            let index = gz.records().clone();
            let gz = Arc::new(GzSource::new(data, Arc::new(gz))?);
            return Ok(Opened {
                source: Arc::clone(&gz) as Arc<dyn ByteSource>,
                index,
                gz: Some(gz),
                origin: IndexOrigin::Built { rejected: None },
                skipped: Vec::new(),
            });
        }
        let (content, cut) = inflate_until_damage(data, resolved.compression);
        let (index, skipped) = Index::build_skipping_cut(
            &content,
            resolved.framing,
            read.check_data_crc,
            read.policy,
            cut,
        )?;
        Ok(Opened {
            source: Arc::new(MemorySource::new(Bytes::from(content))),
            index,
            gz: None,
            origin: IndexOrigin::Built { rejected: None },
            skipped,
        })
    }

    /// A compressed file: its checkpoint index (given, the sidecar, or
    /// built), and the inflating source over it.
    fn compressed(
        stored: Stored,
        resolved: &Resolved,
        given: Option<IndexFile>,
        sidecar: Option<Result<IndexFile, Error>>,
        build: bool,
    ) -> Result<Option<Opened>, Error> {
        // An index opens against the stored file as it is (its fingerprint
        // read with ranged reads when it is not in memory); only a build
        // reads it whole, and then serves from what it read.
        let open = |f: IndexFile| {
            let source = stored.source();
            match f.trusted {
                true => GzIndex::open_native_trusted(f.bytes, source.len()),
                false => GzIndex::open_native_source(f.bytes, source),
            }
            .map_err(|e| e.with_file(f.name))
        };
        let mut built_from = None;
        let (gz, origin) = match given {
            Some(ix) => (open(ix)?, IndexOrigin::Given),
            None => {
                let mut origin = IndexOrigin::Sidecar;
                let rejected = match sidecar {
                    Some(Ok(f)) if f.is_checkpoint_index() => {
                        if f.trusted {
                            origin = IndexOrigin::Cached;
                        }
                        Some(open(f))
                    }
                    Some(Ok(f)) => Some(Err(stale(
                        0,
                        "the sidecar is not a checkpoint index (RWGZIDX): the data is compressed",
                    )
                    .with_file(f.name))),
                    Some(Err(e)) => Some(Err(e)),
                    None => None,
                };
                match rejected {
                    Some(Ok(index)) => (index, origin),
                    Some(Err(e)) if !build => return Err(e),
                    _ if !build => return Ok(None),
                    other => {
                        let data = stored.whole()?;
                        let built = GzIndex::build(
                            &data,
                            resolved.compression,
                            resolved.framing,
                            DEFAULT_SPACING,
                            false,
                        )?;
                        built_from = Some(data);
                        let rejected = other.and_then(Result::err);
                        (built, IndexOrigin::Built { rejected })
                    }
                }
            }
        };
        if gz.records().framing() != resolved.framing {
            return Err(framing_mismatch(
                0,
                gz.records().framing(),
                resolved.framing,
            ));
        }
        let index = gz.records().clone();
        let gz = Arc::new(match built_from {
            Some(data) => GzSource::new(data, Arc::new(gz))?,
            // Checked as it was opened.
            None => GzSource::checked(stored.into_source(), Arc::new(gz)),
        });
        let source: Arc<dyn ByteSource> = Arc::clone(&gz) as Arc<dyn ByteSource>;
        Ok(Some(Opened {
            source,
            index,
            gz: Some(gz),
            origin,
            skipped: Vec::new(),
        }))
    }

    /// A plain file: its index (given in any format, the native sidecar, or
    /// built).
    fn plain(
        stored: Stored,
        resolved: &Resolved,
        given: Option<IndexFile>,
        sidecar: Option<Result<IndexFile, Error>>,
        prefix: &[u8],
        build: bool,
    ) -> Result<Option<Opened>, Error> {
        if let Some(ix) = given {
            let (source, index) = load_index(ix, stored, resolved.framing)?;
            return Ok(Some(Opened {
                source,
                index,
                gz: None,
                origin: IndexOrigin::Given,
                skipped: Vec::new(),
            }));
        }
        let stream = stored.streamer();
        let source = stored.into_source();
        let _ = Access::Random.advise(&*source);
        let rejected = match sidecar {
            Some(Ok(f)) if !f.is_checkpoint_index() => {
                let origin = if f.trusted {
                    IndexOrigin::Cached
                } else {
                    IndexOrigin::Sidecar
                };
                match native_index(f, &*source, resolved.framing) {
                    Ok(index) => {
                        return Ok(Some(Opened {
                            source,
                            index,
                            gz: None,
                            origin,
                            skipped: Vec::new(),
                        }))
                    }
                    Err(e) if !build => return Err(e),
                    Err(e) => Some(e),
                }
            }
            Some(Ok(f)) => Some(
                stale(
                    0,
                    "the sidecar is a checkpoint index (RWGZIDX), the data is not compressed",
                )
                .with_file(f.name),
            ),
            Some(Err(e)) if !build => return Err(e),
            Some(Err(e)) => Some(e),
            None => None,
        };
        match rejected {
            Some(e) if !build => return Err(e),
            _ if !build => return Ok(None),
            _ => {}
        }
        let index = build_index(&*source, stream, resolved)
            .map_err(|e| explain_first_frame(e, prefix, resolved.framing, resolved.basis))?;
        Ok(Some(Opened {
            source,
            index,
            gz: None,
            origin: IndexOrigin::Built { rejected },
            skipped: Vec::new(),
        }))
    }
}

/// The content of the compressed `data`, up to where it is damaged, and
/// the error there (a `compression_error`) if it is.
fn inflate_until_damage(
    data: Bytes,
    compression: Compression,
) -> (Vec<u8>, Option<crate::error::ErrorKind>) {
    let mut reader = crate::io::decoder(std::io::Cursor::new(data), compression);
    let mut content = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => return (content, None),
            Ok(n) => content.extend_from_slice(&chunk[..n.min(chunk.len())]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return (
                    content,
                    Some(crate::io::compress_read_error(&e, compression)),
                )
            }
        }
    }
}

/// Builds the index of a plain stream: from memory, or streamed through
/// positioned reads in 1 MiB steps.
fn build_index(
    source: &dyn ByteSource,
    stream: Option<Streamer>,
    resolved: &Resolved,
) -> Result<Index, Error> {
    if let Some(bytes) = source.in_memory() {
        let _ = Access::Sequential.advise(source);
        return Index::build(bytes, resolved.framing, false);
    }
    let reader: Box<dyn Read + Send + '_> = match stream {
        Some(stream) => stream(),
        None => Box::new(SourceReader { source, at: 0 }),
    };
    Index::build_stream(
        reader,
        resolved.framing,
        Compression::None,
        resolved.basis,
        false,
    )
}

/// Makes the reader that a stored file is best read front to back with,
/// when it is not the source's own ranged reads: a remote object's
/// [`RemoteReader`](crate::io::remote::RemoteReader) (large requests, read
/// ahead, progress reported).
type Streamer = Box<dyn FnOnce() -> Box<dyn Read + Send>>;

/// A source read in order, as `std::io::Read`.
struct SourceReader<'s> {
    source: &'s dyn ByteSource,
    at: u64,
}

impl Read for SourceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const STEP: u64 = 1 << 20;
        let end = self
            .at
            .saturating_add((buf.len() as u64).min(STEP))
            .min(self.source.len());
        if end <= self.at {
            return Ok(0);
        }
        let bytes = self
            .source
            .read_range(self.at..end)
            .map_err(std::io::Error::other)?;
        buf[..bytes.len()].copy_from_slice(&bytes);
        self.at = end;
        Ok(bytes.len())
    }
}

/// The native index file `file` of the stream of `source` (framing
/// `framing`): its header, fingerprint (unless the file is
/// [`trusted`](IndexFile::trusted), then only the size) and table checked,
/// `stale_index` with the index file's name otherwise.
fn native_index(
    file: IndexFile,
    source: &dyn ByteSource,
    framing: Framing,
) -> Result<Index, Error> {
    let name = file.name;
    let index = Index::open_native_parts(file.bytes)
        .and_then(|index| {
            if file.trusted {
                index.check_size(source.len()).map(|()| index)
            } else {
                check_source(&index, source).map(|()| index)
            }
        })
        .and_then(|index| index.verify_table().map(|()| index))
        .map_err(|e| e.with_file(Arc::clone(&name)))?;
    if index.framing() != framing {
        return Err(framing_mismatch(12, index.framing(), framing).with_file(name));
    }
    Ok(index)
}

/// Reads the index file at `path` (a local path, or with feature `remote` a
/// URL) whole.
fn read_index_file(path: &Path, options: &OpenOptions) -> Result<IndexFile, Error> {
    #[cfg(feature = "remote")]
    if crate::io::remote::is_remote(path) {
        return super::remote::read_index_url(path, options);
    }
    #[cfg(feature = "remote")]
    if let Some(local) = crate::io::remote::file_url_path(path) {
        return IndexFile::local(&local, true);
    }
    let _ = options;
    IndexFile::local(path, true)
}

/// The index file `file`, in any of the formats (native, DALI text, raw
/// offset table), told apart by its content, checked against the data. A
/// text or raw index is checked frame by frame against the data, which is
/// then read whole when it was not in memory.
fn load_index(
    file: IndexFile,
    stored: Stored,
    framing: Framing,
) -> Result<(Arc<dyn ByteSource>, Index), Error> {
    if file.is_checkpoint_index() {
        return Err(stale(
            0,
            "a checkpoint index (RWGZIDX) is for a compressed file; the data is not compressed",
        )
        .with_file(file.name));
    }
    let format = IndexFormat::detect(&file.bytes);
    if format == IndexFormat::Native {
        let source = stored.into_source();
        let index = native_index(file, &*source, framing)?;
        return Ok((source, index));
    }
    let data = stored.whole()?;
    let index =
        Index::read_as(format, file.bytes, &data, framing).map_err(|e| e.with_file(file.name))?;
    Ok((Arc::new(MemorySource::new(data)), index))
}

/// Cannot happen: opening with `build` always gives a shard.
fn unreachable_none(path: &Path) -> Error {
    Error::io(std::io::Error::other("no index was built")).with_file(path.display().to_string())
}

/// The position in `ranges` (sorted by start, as a batch's frames are read)
/// of the first range whose bytes a read that failed at byte `at` was to
/// bring: the first that ends past `at` (a request that joined several
/// records fails at its own start, which may lie in an earlier record's
/// gap or inside a later record than the batch's first); the first range
/// when the error names no byte.
fn failed_range(ranges: &[Range<u64>], at: Option<u64>) -> usize {
    let Some(at) = at else { return 0 };
    ranges
        .iter()
        .position(|r| r.end > at)
        .unwrap_or(ranges.len().saturating_sub(1))
}
