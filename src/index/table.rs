//! The offset index itself: [`Index`] (its table of offsets, owned or in
//! place), what it says about its data, and the checks of that data.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::fingerprint;
use crate::error::{Error, ErrorKind};
use crate::frame::Framing;

pub(super) const FLAG_CRCS_VERIFIED: u8 = 1;
pub(super) const FLAG_PADS: u8 = 2;
/// In memory only, never in a file (not a known flag there): the index was
/// built under the skip policy and passed over damaged bytes
/// ([`Index::build_skipping`]).
pub(super) const FLAG_SKIPS: u8 = 4;

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
pub(super) fn damaged(offset: u64, what: impl fmt::Display) -> Error {
    stale(offset, format!("damaged index file: {what}"))
}

/// Where the offsets live.
#[derive(Clone)]
pub(super) enum Table {
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
    pub(super) fn from_le_bytes(bytes: Bytes) -> Table {
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
/// ([`pad`](super::pad)) are never listed: when the data holds some
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
    pub(super) framing: Framing,
    pub(super) flags: u8,
    pub(super) data_size: u64,
    pub(super) fingerprint: u32,
    /// The table CRC stored in the native file this index was opened from.
    pub(super) table_crc: Option<u32>,
    pub(super) table: Table,
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
    pub(super) fn from_offsets(
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

    pub(super) fn from_parts(
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
