//! One record file of a dataset, whatever its kind: its bytes behind the
//! [`ByteSource`] seam, its index, its framing, compression and payload.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::error::Error;
use crate::frame::{explain_first_frame, Basis, Framing, OwnedRecord, ReadOptions, Record};
use crate::index::{Access, Advise, GzIndex, GzSource, Index, Skipped, MAX_BATCH};
use crate::io::{ByteSource, Compression};
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
    pub(super) name: Arc<str>,
    pub(super) source: Arc<dyn ByteSource>,
    pub(super) index: Index,
    pub(super) gz: Option<Arc<GzSource>>,
    pub(super) framing: Framing,
    pub(super) compression: Compression,
    pub(super) basis: Basis,
    pub(super) read: ReadOptions,
    pub(super) origin: IndexOrigin,
    /// Bytes of the file as stored (compressed, for a compressed file).
    pub(super) stored_len: u64,
    pub(super) payload: Arc<OnceLock<PayloadKind>>,
    /// What indexing under the skip policy passed over.
    pub(super) skipped: Arc<[Skipped]>,
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

impl Shard {
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
        let mut sniffer = PayloadSniffer::new().with_name(self.name());
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
/// [`Dataset::get_many`](super::Dataset::get_many): kept by the reader and
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
