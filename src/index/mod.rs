//! Offset index (docs/FORMAT.md §6): record id → frame offset, its file formats,
//! random access, and datasets of many files.
//!
//! An [`Index`] holds, for the `n` records of a data file, the offset of each
//! record's frame and the end of the last one (`n + 1` offsets). With it,
//! counting is O(1), [`Index::get`] fetches record `i` directly, and the
//! offsets feed the epoch orders of [`crate::order`].
//!
//! - **Building** ([`Index::build`], [`Index::build_from_reader`]): one pass
//!   over the frames, 8 bytes of memory per record; CRCs of the data checked
//!   on request; pad frames ([`crate::frame::pad`]) left out.
//! - **The native file** ([`Index::write_native`], [`Index::open_native`]):
//!   binary, little-endian, versioned, its format documented on [`Index`] and
//!   frozen by a test vector (`testdata/index/`). Opened in place from a
//!   memory map: no copy and no parse step, only a fixed amount of checking
//!   (the header, and the data file's size and content fingerprint). Kept
//!   beside the data file as `<data file>.rwindex` ([`sidecar_path`]).
//! - **Interchange** ([`Index::read_dali`], [`Index::write_dali`],
//!   [`Index::read_lirs`], [`Index::write_lirs`]): DALI's and
//!   vahidk/tfrecord's text index, and the thesis's raw table of offsets,
//!   checked against the data when read. (`lirs` is that table: the thesis
//!   applies LIRS, "a lightweight implementation of random shuffling", to
//!   TFRecord, and writes every record's offset beside the file for it;
//!   docs/FORMAT.md, "Terms" and §6.7.)
//! - **Random access** ([`Index::get`], [`Index::get_many`]): a borrowed
//!   [`Record`](crate::frame::Record), its length taken from the frame header
//!   and checked against the index.
//! - **Datasets** ([`Dataset`]): shards of one id space, each with its own
//!   index (its sidecar when current, else built in memory).
//! - **Readahead** ([`Readahead`]): advice to the kernel that follows an order.
//!
//! An index that does not match its data file is never used: the error has
//! kind `stale_index` ([`ErrorKind::StaleIndex`]) and says what differs. A
//! damaged index file is rejected the same way.
//!
//! ```
//! use bytes::Bytes;
//! use recordwire::frame::{file_of, Framing, ReadOptions};
//! use recordwire::index::Index;
//!
//! let data = file_of(Framing::TfRecord, [&b"zero"[..], b"one", b"two"]);
//! let index = Index::build(&data, Framing::TfRecord, true)?;
//! assert_eq!(index.len(), 3);
//! assert_eq!(index.offsets(), [0, 20, 39, 58]);
//!
//! let record = index.get(&data, 2, &ReadOptions::default())?.unwrap();
//! assert_eq!((record.id, record.offset, record.data), (2, 39, &b"two"[..]));
//!
//! // The native file, used in place.
//! let mut file = Vec::new();
//! index.write_native(&mut file)?;
//! let reopened = Index::open_native(Bytes::from(file), &data)?;
//! assert_eq!(reopened, index);
//!
//! // The data file changes: the index no longer belongs to it.
//! let mut appended = data.clone();
//! appended.extend_from_slice(&recordwire::frame::tfrecord_frame(b"three"));
//! let mut file = Vec::new();
//! index.write_native(&mut file)?;
//! let err = Index::open_native(Bytes::from(file), &appended).unwrap_err();
//! assert_eq!(err.kind().name(), "stale_index");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, ErrorKind};
use crate::frame::Framing;

mod access;
mod build;
mod dataset;
mod fingerprint;
mod gz;
mod interchange;
pub mod pad;
mod readahead;
#[cfg(feature = "remote")]
mod remote;
mod shard;
mod skip;

#[cfg(feature = "cli")]
pub(crate) use dataset::{has_wildcard, index_file_at, matches as glob_matches};
pub use dataset::{Dataset, MixedPayloads};
pub use gz::{
    Checkpoint, GzCache, GzIndex, GzSource, DEFAULT_SPACING, GZ_HEADER_LEN, GZ_MAGIC, GZ_POINT_LEN,
    GZ_VERSION, MIN_SPACING, SPAN_STRIDE,
};
pub use shard::{IndexOrigin, Scratch, Shard};
pub use skip::Skipped;

/// The compressed shards of a [`Dataset`]: a [`Shard`] reads GZIP and ZLIB
/// files through their checkpoint indexes itself.
#[deprecated(note = "a Shard reads compressed files itself: use Shard")]
pub type GzShard = Shard;
/// Datasets of compressed files: a [`Dataset`] holds any mix of plain and
/// compressed shards.
#[deprecated(note = "a Dataset holds compressed shards itself: use Dataset")]
pub type GzDataset = Dataset;
pub use interchange::{index_file_format, IndexFormat, INDEX_SNIFF_LEN};
pub use pad::is_pad;
pub use readahead::{Access, Advise, Readahead};

/// The magic number that starts a native index file: `RWINDEX` and a NUL.
pub const NATIVE_MAGIC: [u8; 8] = *b"RWINDEX\0";
/// The version of the native format this build reads and writes.
pub const NATIVE_VERSION: u32 = 1;
/// Bytes of the native header; the table of offsets starts here.
pub const NATIVE_HEADER_LEN: usize = 48;
/// The extension of a sidecar index: `<data file>.rwindex`.
pub const SIDECAR_EXTENSION: &str = "rwindex";

const FLAG_CRCS_VERIFIED: u8 = 1;
const FLAG_PADS: u8 = 2;
const KNOWN_FLAGS: u8 = FLAG_CRCS_VERIFIED | FLAG_PADS;
/// In memory only, never in a file (not a known flag there): the index was
/// built under the skip policy and passed over damaged bytes
/// ([`Index::build_skipping`]).
const FLAG_SKIPS: u8 = 4;

/// The sidecar index path of a data file: its path with `.rwindex` appended
/// (`train-00003.tfrecord` → `train-00003.tfrecord.rwindex`).
///
/// ```
/// use std::path::Path;
/// assert_eq!(
///     recordwire::index::sidecar_path(Path::new("data/a.tfrecord")),
///     Path::new("data/a.tfrecord.rwindex")
/// );
/// ```
pub fn sidecar_path(data: &Path) -> PathBuf {
    let mut name = data.as_os_str().to_owned();
    name.push(".");
    name.push(SIDECAR_EXTENSION);
    PathBuf::from(name)
}

pub(crate) use crate::io::write_atomically;

/// A `stale_index` error at `offset`.
pub(crate) fn stale(offset: u64, message: impl Into<Arc<str>>) -> Error {
    Error::new(
        ErrorKind::StaleIndex {
            message: message.into(),
        },
        offset,
    )
}

/// A damaged native index file: a `stale_index` error at `offset` in it.
fn damaged(offset: u64, what: impl fmt::Display) -> Error {
    stale(offset, format!("damaged index file: {what}"))
}

/// Where the offsets live.
#[derive(Clone)]
enum Table {
    /// Built or decoded: owned.
    Owned(Vec<u64>),
    /// The table bytes of a native index file, used in place: 8-byte aligned,
    /// a multiple of 8 bytes long, on a little-endian target (checked when
    /// made, and [`Bytes`] never changes).
    InPlace(Bytes),
}

impl Table {
    fn as_slice(&self) -> &[u64] {
        match self {
            Table::Owned(v) => v,
            // Cannot fail: checked when the table was made.
            Table::InPlace(b) => bytemuck::try_cast_slice(b).unwrap_or_default(),
        }
    }

    /// The table from its little-endian bytes (a multiple of 8): in place when
    /// the target is little-endian and the bytes are aligned, else decoded.
    fn from_le_bytes(bytes: Bytes) -> Table {
        #[cfg(target_endian = "little")]
        if bytemuck::try_cast_slice::<u8, u64>(&bytes).is_ok() {
            return Table::InPlace(bytes);
        }
        Table::Owned(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        )
    }
}

/// The offset index of one data file: where each record's frame starts, and
/// where the last one ends.
///
/// For a file of `n` records it holds `n + 1` offsets
/// ([`offsets`](Self::offsets)): the start of each record's frame, in file
/// order (record ids are 0-based positions in this list), then the end of the
/// last record's frame (0 when there are no records). Pad frames
/// ([`pad`]) are never listed: when the data holds some
/// ([`has_pads`](Self::has_pads)), a record's frame may be followed by pad
/// frames before the next record starts.
///
/// Offsets are absolute byte positions in the data file, or in the
/// decompressed stream for a compressed one. The table is either owned (built,
/// decoded) or the bytes of a native index file used in place
/// ([`is_in_place`](Self::is_in_place)).
///
/// # The native file format (version 1, frozen)
///
/// All integers little-endian. The file is exactly `48 + 8 (n + 1)` bytes:
///
/// | offset | bytes | field | value |
/// |---:|---:|---|---|
/// | 0 | 8 | magic | `52 57 49 4e 44 45 58 00` (`RWINDEX\0`) |
/// | 8 | 4 | version | u32, `1` |
/// | 12 | 1 | framing | `1` TFRecord, `2` OFRecord |
/// | 13 | 1 | flags | bit 0: the data CRCs were verified while building (TFRecord only); bit 1: the data holds pad frames; other bits 0 |
/// | 14 | 2 | reserved | `0` |
/// | 16 | 8 | record count | u64 `n` |
/// | 24 | 8 | data size | u64: bytes of the data file (of the decompressed stream for a compressed file) |
/// | 32 | 4 | fingerprint | u32: the content fingerprint of the data (below) |
/// | 36 | 4 | table CRC | u32: CRC32C of the table's bytes (offset 48 to the end) |
/// | 40 | 4 | header CRC | u32: CRC32C of bytes 0 to 39 |
/// | 44 | 4 | padding | `0`, so that the table is 8-byte aligned |
/// | 48 | 8 (n + 1) | table | u64 offsets: the start of each record's frame, then the end of the last record's frame |
///
/// CRCs are plain CRC32C (Castagnoli), not masked.
///
/// **Content fingerprint**: CRC32C over the concatenation of (1) the data
/// size as u64; (2) the first `min(size, 4096)` bytes of the data; (3) its
/// last `min(size, 4096)` bytes; (4) the table's last entry as u64; (5) for
/// each sampled record `k` in increasing order, its offset as u64 and the
/// framing's header bytes there (12 for TFRecord, 8 for OFRecord). The
/// sampled records: with `s` the smallest power of two such that
/// `ceil(n / s) <= 64`, the ids `0, s, 2s, …` below `n`, and `n − 1` if it is
/// not one of them.
///
/// **On open** ([`open_native`](Self::open_native)), in this order, each
/// failure being a `stale_index` error that says what differs: the magic, the
/// version, the header CRC, the reserved bytes and padding, the flags and
/// framing, the file length against the record count (a truncated or
/// extended table), the last table entry against the data size, then the data
/// size (appended to or truncated since) and the fingerprint (rewritten
/// since). This reads the header, the first and last 4 KiB of the data, and
/// at most 65 frame headers: a fixed cost whatever the size of the file. The
/// table CRC is checked by [`verify_table`](Self::verify_table), which
/// reads the whole table; [`load_native`](Self::load_native) (index files:
/// the sidecar, `--index`) calls it, `open_native` does not.
///
/// **What the fingerprint cannot see**: a rewrite that keeps the size, the
/// first and last 4 KiB and the sampled frame headers (a change inside
/// records, or lengths traded between records that lie between two samples).
/// Such a change is still caught where it matters: [`get`](Self::get) checks
/// every record's length (from its header) against the index, and its CRCs.
#[derive(Clone)]
pub struct Index {
    framing: Framing,
    flags: u8,
    data_size: u64,
    fingerprint: u32,
    /// The table CRC stored in the native file this index was opened from.
    table_crc: Option<u32>,
    table: Table,
}

/// Shows the counts and the first offsets, not the whole table.
impl fmt::Debug for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offsets = self.offsets();
        f.debug_struct("Index")
            .field("framing", &self.framing)
            .field("len", &self.len())
            .field("data_size", &self.data_size)
            .field("fingerprint", &format_args!("{:#010x}", self.fingerprint))
            .field("crcs_verified", &self.crcs_verified())
            .field("has_pads", &self.has_pads())
            .field("in_place", &self.is_in_place())
            .field("offsets", &&offsets[..offsets.len().min(8)])
            .finish_non_exhaustive()
    }
}

/// Equal when they describe the same data the same way (however stored).
impl PartialEq for Index {
    fn eq(&self, other: &Self) -> bool {
        self.framing == other.framing
            && self.flags == other.flags
            && self.data_size == other.data_size
            && self.fingerprint == other.fingerprint
            && self.offsets() == other.offsets()
    }
}

impl Eq for Index {}

impl Index {
    /// An index over `offsets` (n + 1 entries) of `data`, whose fingerprint
    /// is computed here.
    pub(crate) fn from_offsets(
        framing: Framing,
        offsets: Vec<u64>,
        data: &[u8],
        crcs_verified: bool,
        has_pads: bool,
    ) -> Index {
        let fingerprint = fingerprint::of_data(data, framing, &offsets);
        Index::from_parts(
            framing,
            offsets,
            data.len() as u64,
            fingerprint,
            crcs_verified,
            has_pads,
        )
    }

    pub(crate) fn from_parts(
        framing: Framing,
        offsets: Vec<u64>,
        data_size: u64,
        fingerprint: u32,
        crcs_verified: bool,
        has_pads: bool,
    ) -> Index {
        let mut flags = 0;
        // OFRecord has no CRCs: nothing was verified.
        if crcs_verified && framing == Framing::TfRecord {
            flags |= FLAG_CRCS_VERIFIED;
        }
        if has_pads {
            flags |= FLAG_PADS;
        }
        Index {
            framing,
            flags,
            data_size,
            fingerprint,
            table_crc: None,
            table: Table::Owned(offsets),
        }
    }

    /// The number of records, in O(1).
    pub fn len(&self) -> u64 {
        self.table.as_slice().len().saturating_sub(1) as u64
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `n + 1` offsets: each record's frame start (sorted), then the end
    /// of the last record's frame.
    pub fn offsets(&self) -> &[u64] {
        self.table.as_slice()
    }

    /// The frame starts of the records only (`n` offsets, sorted): what the
    /// epoch orders need.
    pub fn starts(&self) -> &[u64] {
        let all = self.offsets();
        &all[..all.len().saturating_sub(1)]
    }

    /// The offset of record `id`'s frame; `None` past the last record.
    pub fn offset(&self, id: u64) -> Option<u64> {
        let id = usize::try_from(id).ok()?;
        self.starts().get(id).copied()
    }

    /// The bytes from record `id`'s frame start to the next record's frame
    /// start (or, for the last record, to its end); `None` past the last
    /// record.
    ///
    /// Without pad frames ([`has_pads`](Self::has_pads) false) this is
    /// exactly the record's frame. With them it is the frame and the pad
    /// frames after it: the thesis computes a record's length as "next offset
    /// − this offset", which is wrong after padding; the length of a record
    /// always comes from its frame header ([`get`](Self::get)).
    ///
    /// The range is what the table says: in an index opened from a file it
    /// is not checked until [`get`](Self::get) or
    /// [`verify_table`](Self::verify_table) (it may even be reversed in a
    /// damaged table).
    pub fn frame_range(&self, id: u64) -> Option<Range<u64>> {
        let id = usize::try_from(id).ok()?;
        let offsets = self.offsets();
        let start = *offsets.get(id)?;
        let end = *offsets.get(id.checked_add(1)?)?;
        Some(start..end)
    }

    /// The framing of the data file.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Bytes of the data file (of the decompressed stream, for a compressed one).
    pub fn data_size(&self) -> u64 {
        self.data_size
    }

    /// The content fingerprint of the data (see the format above).
    pub fn fingerprint(&self) -> u32 {
        self.fingerprint
    }

    /// Whether the data CRCs of every frame were verified while building
    /// (always false for OFRecord, which has none).
    pub fn crcs_verified(&self) -> bool {
        self.flags & FLAG_CRCS_VERIFIED != 0
    }

    /// Whether the data holds pad frames (which the index does not list).
    pub fn has_pads(&self) -> bool {
        self.flags & FLAG_PADS != 0
    }

    /// Whether the index was built under the skip policy and passed over
    /// damaged bytes ([`build_skipping`](Self::build_skipping)): a record's
    /// frame may be followed by them, and the index cannot be written.
    pub fn has_skips(&self) -> bool {
        self.flags & FLAG_SKIPS != 0
    }

    /// Whether the table is the bytes of a native index file used in place
    /// (no copy), rather than owned.
    pub fn is_in_place(&self) -> bool {
        matches!(self.table, Table::InPlace(_))
    }

    /// Writes the native index file (format above) to `out`.
    ///
    /// `out` is written in a few large writes (the table in one on a
    /// little-endian target); there is no need to buffer it.
    ///
    /// An index that passed over damage ([`has_skips`](Self::has_skips)) is
    /// refused (`InvalidInput`, nothing written): it does not describe a
    /// valid file, and a sidecar made of it would be used as if it did.
    pub fn write_native(&self, out: &mut impl Write) -> std::io::Result<()> {
        self.check_writable()?;
        let offsets = self.offsets();
        let n = offsets.len().saturating_sub(1) as u64;
        #[cfg(target_endian = "little")]
        let table: &[u8] = bytemuck::cast_slice(offsets);
        #[cfg(not(target_endian = "little"))]
        let owned: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
        #[cfg(not(target_endian = "little"))]
        let table: &[u8] = &owned;
        let table_crc = crc32c::crc32c(table);

        let mut header = [0u8; NATIVE_HEADER_LEN];
        header[0..8].copy_from_slice(&NATIVE_MAGIC);
        header[8..12].copy_from_slice(&NATIVE_VERSION.to_le_bytes());
        header[12] = framing_code(self.framing);
        header[13] = self.flags;
        header[16..24].copy_from_slice(&n.to_le_bytes());
        header[24..32].copy_from_slice(&self.data_size.to_le_bytes());
        header[32..36].copy_from_slice(&self.fingerprint.to_le_bytes());
        header[36..40].copy_from_slice(&table_crc.to_le_bytes());
        let header_crc = crc32c::crc32c(&header[..40]);
        header[40..44].copy_from_slice(&header_crc.to_le_bytes());
        out.write_all(&header)?;
        out.write_all(table)
    }

    /// Refuses an index built with skips: see [`write_native`](Self::write_native).
    pub(crate) fn check_writable(&self) -> std::io::Result<()> {
        if self.has_skips() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "this index passed over damaged bytes (on-error skip): it does not describe a valid file and is not written",
            ));
        }
        Ok(())
    }

    /// Writes the native index file to `path` atomically: to a temporary file
    /// beside it, synced, then renamed over `path` (nothing half-written ever
    /// appears under the final name). Errors carry the path.
    pub fn write_native_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let mut bytes = Vec::new();
        self.write_native(&mut bytes).map_err(Error::io)?;
        write_atomically(path.as_ref(), &bytes)
    }

    /// Opens a native index file held in `bytes` (typically a memory map),
    /// for the data file whose content is `data`, **in place**: the table is
    /// not copied (when aligned, on a little-endian target) nor parsed.
    ///
    /// Checks, in order (see the format above): magic, version, header CRC,
    /// reserved bytes, flags, framing, the length of the table against the
    /// record count, then the data's size and content fingerprint. Any
    /// mismatch is a `stale_index` error that says what differs (for a
    /// damaged index file: "damaged index file: …", at the offset in the index
    /// file). The caller should also check that the [`framing`](Self::framing)
    /// is the one it reads the data with.
    pub fn open_native(bytes: Bytes, data: &[u8]) -> Result<Index, Error> {
        let index = Index::open_native_parts(bytes)?;
        index.check_data(data)?;
        Ok(index)
    }

    /// [`open_native`](Self::open_native) without the data: every check of
    /// the index file itself, none against the data it describes (for an
    /// index whose data is checked another way: the decompressed stream of a
    /// compressed file, whose compressed bytes are fingerprinted instead).
    pub(crate) fn open_native_parts(bytes: Bytes) -> Result<Index, Error> {
        let header = bytes.get(..NATIVE_HEADER_LEN).ok_or_else(|| {
            damaged(
                0,
                format_args!(
                    "{} bytes, shorter than the {NATIVE_HEADER_LEN}-byte header",
                    bytes.len()
                ),
            )
        })?;
        let u32_at = |at: usize| {
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&header[at..at + 8]);
            u64::from_le_bytes(b)
        };
        if header[..8] != NATIVE_MAGIC {
            return Err(damaged(
                0,
                format_args!(
                    "not a recordwire index: magic {:02x?}, expected {:02x?} (RWINDEX\\0)",
                    &header[..8],
                    NATIVE_MAGIC
                ),
            ));
        }
        let version = u32_at(8);
        if version != NATIVE_VERSION {
            return Err(damaged(
                8,
                format_args!("format version {version}, this build reads version {NATIVE_VERSION}"),
            ));
        }
        let stored = u32_at(40);
        let computed = crc32c::crc32c(&header[..40]);
        if stored != computed {
            return Err(damaged(
                40,
                format_args!("header CRC stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        if header[14..16] != [0, 0] || header[44..48] != [0; 4] {
            return Err(damaged(14, "reserved bytes are not zero"));
        }
        let flags = header[13];
        if flags & !KNOWN_FLAGS != 0 {
            return Err(damaged(13, format_args!("unknown flags {flags:#04x}")));
        }
        let framing = match header[12] {
            1 => Framing::TfRecord,
            2 => Framing::OfRecord,
            other => return Err(damaged(12, format_args!("unknown framing code {other}"))),
        };
        let n = u64_at(16);
        let data_size = u64_at(24);
        let fingerprint = u32_at(32);
        let table_crc = u32_at(36);
        let expected = n
            .checked_add(1)
            .and_then(|entries| entries.checked_mul(8))
            .and_then(|t| t.checked_add(NATIVE_HEADER_LEN as u64));
        if expected != Some(bytes.len() as u64) {
            return Err(damaged(
                NATIVE_HEADER_LEN as u64,
                format_args!(
                    "{} bytes, but {n} records need {} (truncated or extended table)",
                    bytes.len(),
                    expected.map_or_else(|| "more than 2^64".to_string(), |e| e.to_string())
                ),
            ));
        }
        let table = Table::from_le_bytes(bytes.slice(NATIVE_HEADER_LEN..));
        let index = Index {
            framing,
            flags,
            data_size,
            fingerprint,
            table_crc: Some(table_crc),
            table,
        };
        let end = index.offsets().last().copied().unwrap_or(0);
        if end > data_size {
            return Err(damaged(
                bytes.len() as u64 - 8,
                format_args!("the last record ends at byte {end}, past the data size {data_size}"),
            ));
        }
        Ok(index)
    }

    /// Reads the native index file at `path` (memory-mapped when `mmap`,
    /// else read), opens it for `data` ([`open_native`](Self::open_native))
    /// and checks its whole table ([`verify_table`](Self::verify_table)).
    /// Errors carry the index file's path.
    ///
    /// This is how the sidecar and `--index` files are opened: an index file
    /// on disk may have been damaged, and a damaged entry that the
    /// fingerprint does not sample would otherwise go unseen until a
    /// [`get`](Self::get) of its records, and would silently skew what reads
    /// only the offsets (page groups, sizes). The table check reads 8 bytes
    /// per record once (a CRC pass: about a millisecond per million records);
    /// callers that cannot afford it use [`open_native`](Self::open_native).
    pub fn load_native(path: impl AsRef<Path>, data: &[u8], mmap: bool) -> Result<Index, Error> {
        let path = path.as_ref();
        let bytes = crate::io::RecordFile::stored_bytes(path, mmap)?;
        Index::open_native(bytes, data)
            .and_then(|index| index.verify_table().map(|()| index))
            .map_err(|e| e.with_file(path.display().to_string()))
    }

    /// Checks that `data` is the data this index was made for: its size, then
    /// its content fingerprint (`stale_index` otherwise).
    pub fn check_data(&self, data: &[u8]) -> Result<(), Error> {
        let size = data.len() as u64;
        if size != self.data_size {
            return Err(self.size_mismatch(size));
        }
        let now = fingerprint::of_data(data, self.framing, self.offsets());
        if now != self.fingerprint {
            return Err(stale(
                0,
                format!(
                    "the data's content fingerprint is {now:#010x} but the index was built \
                     for {:#010x} (the data file was rewritten since)",
                    self.fingerprint
                ),
            ));
        }
        Ok(())
    }

    /// `stale_index` unless the data is `size` bytes, as this index says.
    pub(crate) fn check_size(&self, size: u64) -> Result<(), Error> {
        if size == self.data_size {
            Ok(())
        } else {
            Err(self.size_mismatch(size))
        }
    }

    fn size_mismatch(&self, size: u64) -> Error {
        let what = if size > self.data_size {
            "appended to"
        } else {
            "truncated"
        };
        stale(
            size.min(self.data_size),
            format!(
                "the data is {size} bytes but the index was built for {} bytes \
                 (the data file was {what} since)",
                self.data_size
            ),
        )
    }

    /// [`check_data`](Self::check_data) for a stream not in memory, read
    /// through `source`: its size, then the bytes the content fingerprint
    /// covers (its first and last 4 KiB, and the headers of at most 65
    /// records), in one vectored read.
    pub fn check_ranges(&self, source: &dyn crate::io::ByteSource) -> Result<(), Error> {
        let size = source.len();
        if size != self.data_size {
            return Err(self.size_mismatch(size));
        }
        let now = fingerprint::of_source(source, self.framing, self.offsets())?;
        if now != self.fingerprint {
            return Err(stale(
                0,
                format!(
                    "the data's content fingerprint is {now:#010x} but the index was built \
                     for {:#010x} (the data file was rewritten since)",
                    self.fingerprint
                ),
            ));
        }
        Ok(())
    }

    /// Checks the whole table, reading all of it: its CRC when the index was
    /// opened from a native file, that the frame starts increase (by at least
    /// a frame header each) and that the last record ends within the data.
    /// `stale_index` when not.
    pub fn verify_table(&self) -> Result<(), Error> {
        let offsets = self.offsets();
        if let Some(stored) = self.table_crc {
            #[cfg(target_endian = "little")]
            let computed = crc32c::crc32c(bytemuck::cast_slice(offsets));
            #[cfg(not(target_endian = "little"))]
            let computed = offsets
                .iter()
                .fold(0, |crc, o| crc32c::crc32c_append(crc, &o.to_le_bytes()));
            if computed != stored {
                return Err(damaged(
                    36,
                    format_args!("table CRC stored {stored:#010x}, computed {computed:#010x}"),
                ));
            }
        }
        let min = self.framing.header_len() as u64 + self.framing.footer_len() as u64;
        for (id, pair) in offsets.windows(2).enumerate() {
            if pair[1] < pair[0].saturating_add(min) {
                return Err(stale(
                    pair[0],
                    format!(
                        "table entry {} ({}) is less than a frame after entry {id} ({})",
                        id + 1,
                        pair[1],
                        pair[0]
                    ),
                )
                .with_record(id as u64));
            }
        }
        let end = offsets.last().copied().unwrap_or(0);
        if end > self.data_size {
            return Err(stale(
                end,
                format!(
                    "the last record ends at byte {end}, past the data size {}",
                    self.data_size
                ),
            ));
        }
        Ok(())
    }
}

/// The framing's code in the native header.
fn framing_code(framing: Framing) -> u8 {
    match framing {
        Framing::TfRecord => 1,
        Framing::OfRecord => 2,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
