//! Random access into GZIP- and ZLIB-compressed record files: the
//! checkpoint index ([`GzIndex`]), the technique of zlib's `examples/zran.c`.
//!
//! A compressed file cannot be entered in the middle: a DEFLATE block refers
//! back up to 32 KiB into the output before it. The index therefore keeps,
//! besides the offset of every record in the decompressed stream (a plain
//! [`Index`]), **checkpoints**: places where decoding can resume, each the
//! bit where a deflate block starts and the 32 KiB of output before it (the
//! window, stored compressed). One is at the start of every GZIP member
//! (there the window is empty: a member never refers back into the one
//! before), and then one every `spacing` bytes of output or so (at the
//! first block start past it). Record `i` is then read by inflating from the
//! last checkpoint at or before it ([`GzIndex::get`]), on average half a
//! spacing of output.
//!
//! A **block-compressed** file (written with
//! [`WriterOptions::with_gzip_blocks`](crate::encode::WriterOptions::with_gzip_blocks),
//! like BGZF) is a multi-member GZIP file whose members each hold whole
//! records: its checkpoints are its members, it needs no windows, and a read
//! inflates one small member. Any GZIP reader (tf.data, `gzip -d`, Python's
//! `gzip`) reads it as one stream.
//!
//! The index file ([`GzIndex::write_native`], [`GzIndex::open_native`]) is
//! documented on [`GzIndex`] and checked against the compressed file the way
//! the plain index is: size and a content fingerprint, `stale_index` when
//! they differ.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::native::NATIVE_HEADER_LEN;
use super::table::{damaged, stale, Index};
use crate::deflate::{Inflate, Progress};
use crate::error::Error;
use crate::io::{ByteSource, Compression};
use crate::order::{Mode, Order, OrderError, OrderSpec};

mod access;
mod build;
mod source;
#[cfg(test)]
mod tests;

pub use access::GzCache;
pub use source::GzSource;

/// The magic number that starts a checkpoint index file: `RWGZIDX` and a
/// NUL.
pub const GZ_MAGIC: [u8; 8] = *b"RWGZIDX\0";
/// The version of the checkpoint index format this build reads and writes.
pub const GZ_VERSION: u32 = 1;
/// Bytes of the checkpoint index header.
pub const GZ_HEADER_LEN: usize = 80;
/// Bytes of one checkpoint in the index file.
pub const GZ_POINT_LEN: usize = 32;
/// The default spacing of checkpoints: 1 MiB of decompressed output.
pub const DEFAULT_SPACING: u64 = 1 << 20;
/// The distance between checkpoint spans in
/// [`GzIndex::span_offsets`] (1 TiB: longer than any span).
pub const SPAN_STRIDE: u64 = 1 << 40;
/// The smallest spacing: 1, a checkpoint at every deflate block.
pub const MIN_SPACING: u64 = 1;

const FLAG_BLOCK_COMPRESSED: u8 = 1;

/// A place where inflating can resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// Offset in the decompressed stream where the block starts.
    pub out: u64,
    /// Bit position of the block in the compressed file (`byte * 8 + bit`,
    /// bits counted from the least significant, as DEFLATE reads them).
    pub bit: u64,
    /// Where the window lies in the index's window bytes.
    pub window_at: u64,
    /// Bytes of the compressed window (a raw DEFLATE stream).
    pub window_clen: u32,
    /// Bytes of the window once inflated (0 at the start of a member: there
    /// is nothing to refer back to).
    pub window_len: u32,
}

/// The checkpoint index of one GZIP or ZLIB record file: the offsets of its
/// records in the decompressed stream ([`records`](Self::records)) and the
/// checkpoints to inflate them from.
///
/// # The index file (version 1, frozen)
///
/// All integers little-endian; CRCs are plain CRC32C. Written beside the
/// data as its sidecar (`<file>.rwindex`, like the plain index: the magic
/// tells them apart).
///
/// | offset | bytes | field | value |
/// |---:|---:|---|---|
/// | 0 | 8 | magic | `52 57 47 5a 49 44 58 00` (`RWGZIDX\0`) |
/// | 8 | 4 | version | u32, `1` |
/// | 12 | 1 | container | `1` GZIP, `2` ZLIB |
/// | 13 | 1 | flags | bit 0: block-compressed (several GZIP members, each starting at a record); other bits 0 |
/// | 14 | 2 | reserved | `0` |
/// | 16 | 8 | compressed size | u64: bytes of the compressed file |
/// | 24 | 4 | fingerprint | u32: the compressed file's content fingerprint (below) |
/// | 28 | 4 | reserved | `0` |
/// | 32 | 8 | spacing | u64: the spacing asked for when building |
/// | 40 | 8 | checkpoints | u64 `c` |
/// | 48 | 8 | windows length | u64 `w` |
/// | 56 | 8 | records length | u64 `r`: bytes of the embedded record index |
/// | 64 | 4 | body CRC | u32: CRC32C of everything from offset 80 to the end |
/// | 68 | 4 | header CRC | u32: CRC32C of bytes 0 to 67 |
/// | 72 | 8 | padding | `0` |
/// | 80 | 32 `c` | checkpoints | each: decompressed offset u64, bit position u64, window offset u64 (in the windows), window compressed length u32, window length u32 |
/// | 80 + 32 `c` | `w` | windows | the windows, each a raw DEFLATE stream |
/// | … | 0–7 | padding | `0`, to a multiple of 8 |
/// | … | `r` | records | the plain native index (`RWINDEX\0`, [`Index`]'s format) of the decompressed stream |
///
/// The first checkpoint is at decompressed offset 0; checkpoints are in
/// increasing order of both offsets; a window's length is at most 32 KiB.
///
/// **Content fingerprint** of the compressed file: CRC32C over (1) its size
/// as u64; (2) its first `min(size, 4096)` bytes; (3) its last
/// `min(size, 4096)` bytes (the last trailer's checksum and length among
/// them); (4) for each sampled checkpoint `k` (all of them when there are
/// at most 64, else every `ceil(c / 64)`-th, and the last), its bit position
/// as u64 and the 16 bytes of the file from byte `bit / 8` (fewer at the
/// end).
///
/// **On open** ([`open_native`](Self::open_native)), each failure being
/// `stale_index`: the magic, version, header CRC, reserved bytes and flags,
/// container, the lengths against the file's length, the body CRC, the
/// checkpoints' order and window ranges, the embedded record index (its own
/// header and table checks, and its data size against the last offset),
/// then the compressed file's size and fingerprint.
#[derive(Clone)]
pub struct GzIndex {
    compression: Compression,
    block_compressed: bool,
    compressed_size: u64,
    fingerprint: u32,
    spacing: u64,
    points: Vec<Checkpoint>,
    windows: Bytes,
    records: Index,
}

impl fmt::Debug for GzIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GzIndex")
            .field("compression", &self.compression)
            .field("block_compressed", &self.block_compressed)
            .field("compressed_size", &self.compressed_size)
            .field("len", &self.len())
            .field("checkpoints", &self.points.len())
            .field("window_bytes", &self.windows.len())
            .finish_non_exhaustive()
    }
}

/// Equal when they describe the same file the same way.
impl PartialEq for GzIndex {
    fn eq(&self, other: &Self) -> bool {
        self.compression == other.compression
            && self.block_compressed == other.block_compressed
            && self.compressed_size == other.compressed_size
            && self.fingerprint == other.fingerprint
            && self.spacing == other.spacing
            && self.points == other.points
            && self.windows == other.windows
            && self.records == other.records
    }
}

impl Eq for GzIndex {}

/// The checkpoints whose bytes the content fingerprint samples: at most
/// 64 spread evenly, and the last.
fn sampled(points: &[Checkpoint]) -> impl Iterator<Item = &Checkpoint> {
    let step = points.len().div_ceil(64).max(1);
    let last = points.len().saturating_sub(1);
    points
        .iter()
        .enumerate()
        .filter(move |&(k, _)| k % step == 0 || k == last)
        .map(|(_, p)| p)
}

/// The byte ranges of a compressed file of `size` bytes that its content
/// fingerprint covers (format above), in the order they are hashed: the
/// first and last 4 KiB, then 16 bytes at each sampled checkpoint.
fn fingerprint_ranges(size: u64, points: &[Checkpoint]) -> Vec<Range<u64>> {
    const EDGE: u64 = 4096;
    let mut ranges = vec![0..size.min(EDGE), size - size.min(EDGE)..size];
    ranges.extend(sampled(points).map(|p| {
        let at = (p.bit / 8).min(size);
        at..(at + 16).min(size)
    }));
    ranges
}

/// The content fingerprint of a compressed file of `size` bytes from the
/// bytes of its [`fingerprint_ranges`], given in that order.
fn fingerprint_of<'a>(
    size: u64,
    points: &[Checkpoint],
    mut parts: impl Iterator<Item = &'a [u8]>,
) -> u32 {
    let mut crc = crate::arch::crc32c(0, &size.to_le_bytes());
    for _edge in 0..2 {
        crc = crate::arch::crc32c(crc, parts.next().unwrap_or_default());
    }
    for p in sampled(points) {
        crc = crate::arch::crc32c(crc, &p.bit.to_le_bytes());
        crc = crate::arch::crc32c(crc, parts.next().unwrap_or_default());
    }
    crc
}

/// The content fingerprint of the compressed file `data` (format above).
fn fingerprint(data: &[u8], points: &[Checkpoint]) -> u32 {
    let size = data.len() as u64;
    let ranges = fingerprint_ranges(size, points);
    fingerprint_of(
        size,
        points,
        ranges
            .into_iter()
            .map(|r| &data[r.start as usize..r.end as usize]),
    )
}

impl GzIndex {
    pub(super) fn from_parts(
        data: &[u8],
        compression: Compression,
        spacing: u64,
        points: Vec<Checkpoint>,
        windows: Bytes,
        records: Index,
        block_compressed: bool,
    ) -> GzIndex {
        GzIndex {
            compression,
            block_compressed,
            compressed_size: data.len() as u64,
            fingerprint: fingerprint(data, &points),
            spacing,
            points,
            windows,
            records,
        }
    }

    /// The number of records, in O(1).
    pub fn len(&self) -> u64 {
        self.records.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The offsets of the records in the decompressed stream (a plain
    /// [`Index`] of it, whose data size is the decompressed size): what the
    /// orders and page groups work on.
    pub fn records(&self) -> &Index {
        &self.records
    }

    /// `Gzip` or `Zlib`.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Whether the file is block-compressed: several GZIP members, each
    /// starting at a record, so that every read inflates from a member
    /// start and no window is needed.
    pub fn is_block_compressed(&self) -> bool {
        self.block_compressed
    }

    /// The checkpoints, in order.
    pub fn checkpoints(&self) -> &[Checkpoint] {
        &self.points
    }

    /// The spacing asked for when building (bytes of decompressed output).
    pub fn spacing(&self) -> u64 {
        self.spacing
    }

    /// Bytes of the compressed file this index was built for.
    pub fn compressed_size(&self) -> u64 {
        self.compressed_size
    }

    /// Bytes of the decompressed stream.
    pub fn decompressed_size(&self) -> u64 {
        self.records.data_size()
    }

    /// Each record's place by checkpoint span, for the page modes of the
    /// orders to group records by span rather than by page: record `i`'s
    /// start as `k · SPAN_STRIDE + (start − checkpoint k)`, `k` the last
    /// checkpoint at or before it; with [`SPAN_STRIDE`] as the page size,
    /// a page is one span, inflated once however its records are shuffled.
    pub fn span_offsets(&self) -> Vec<u64> {
        let mut k = 0;
        self.records
            .starts()
            .iter()
            .map(|&start| {
                while self.points.get(k + 1).is_some_and(|p| p.out <= start) {
                    k += 1;
                }
                let within = start - self.points[k].out;
                k as u64 * SPAN_STRIDE + within.min(SPAN_STRIDE - 1)
            })
            .collect()
    }

    /// The orders of the records for `spec`: as the plain index's (over the
    /// decompressed offsets), except that a page mode with a page size of 0
    /// makes each checkpoint span a page ([`span_offsets`](Self::span_offsets)),
    /// so that a shuffled epoch inflates each span once per window.
    pub fn order(&self, spec: OrderSpec) -> Result<Order, OrderError> {
        let (offsets, _, spec) = self.order_inputs(spec);
        Order::new(self.len(), &offsets, spec)
    }

    /// What [`order`](Self::order) passes on: the offsets, the size of the
    /// space they lie in (for laying several files out), and the spec (a
    /// page size of 0 becomes [`SPAN_STRIDE`] over the span offsets).
    pub(crate) fn order_inputs(&self, spec: OrderSpec) -> (Cow<'_, [u64]>, u64, OrderSpec) {
        let by_span = |mode| {
            let size = self.points.len() as u64 * SPAN_STRIDE;
            (self.span_offsets().into(), size, OrderSpec { mode, ..spec })
        };
        match spec.mode {
            Mode::PageAware { page_size: 0 } => by_span(Mode::PageAware {
                page_size: SPAN_STRIDE,
            }),
            Mode::QuasiRandom {
                page_size: 0,
                window,
            } => by_span(Mode::QuasiRandom {
                page_size: SPAN_STRIDE,
                window,
            }),
            _ => (self.records.starts().into(), self.decompressed_size(), spec),
        }
    }

    /// The bytes of the index file ([`write_native`](Self::write_native)),
    /// without writing it.
    pub fn native_len(&self) -> u64 {
        let records = NATIVE_HEADER_LEN as u64 + 8 * (self.len() + 1);
        let body = (GZ_POINT_LEN * self.points.len()) as u64 + self.windows.len() as u64;
        GZ_HEADER_LEN as u64 + body.next_multiple_of(8) + records
    }

    /// The window of checkpoint `p`, inflated.
    fn window(&self, p: &Checkpoint) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(p.window_len as usize);
        if p.window_len == 0 {
            return Ok(out);
        }
        let at = usize::try_from(p.window_at).map_err(|e| e.to_string())?;
        let bytes = self
            .windows
            .get(at..at + p.window_clen as usize)
            .ok_or("a window lies outside the index's windows")?;
        let mut inflate = Inflate::at(0);
        match inflate.run(bytes, &mut out, usize::MAX, false) {
            Ok(Progress::End { .. }) if out.len() == p.window_len as usize => Ok(out),
            Ok(_) => Err("a window of the index has the wrong length".into()),
            Err(e) => Err(format!("a window of the index is damaged: {e}")),
        }
    }

    /// Writes the index file (format above) to `out`.
    pub fn write_native(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut body = Vec::with_capacity(self.native_len() as usize);
        for p in &self.points {
            body.extend_from_slice(&p.out.to_le_bytes());
            body.extend_from_slice(&p.bit.to_le_bytes());
            body.extend_from_slice(&p.window_at.to_le_bytes());
            body.extend_from_slice(&p.window_clen.to_le_bytes());
            body.extend_from_slice(&p.window_len.to_le_bytes());
        }
        body.extend_from_slice(&self.windows);
        body.resize(body.len().next_multiple_of(8), 0);
        let records_at = body.len();
        self.records.write_native(&mut body)?;
        let records_len = (body.len() - records_at) as u64;

        let mut header = [0u8; GZ_HEADER_LEN];
        header[0..8].copy_from_slice(&GZ_MAGIC);
        header[8..12].copy_from_slice(&GZ_VERSION.to_le_bytes());
        header[12] = match self.compression {
            Compression::Zlib => 2,
            _ => 1,
        };
        header[13] = if self.block_compressed {
            FLAG_BLOCK_COMPRESSED
        } else {
            0
        };
        header[16..24].copy_from_slice(&self.compressed_size.to_le_bytes());
        header[24..28].copy_from_slice(&self.fingerprint.to_le_bytes());
        header[32..40].copy_from_slice(&self.spacing.to_le_bytes());
        header[40..48].copy_from_slice(&(self.points.len() as u64).to_le_bytes());
        header[48..56].copy_from_slice(&(self.windows.len() as u64).to_le_bytes());
        header[56..64].copy_from_slice(&records_len.to_le_bytes());
        header[64..68].copy_from_slice(&crate::arch::crc32c(0, &body).to_le_bytes());
        let header_crc = crate::arch::crc32c(0, &header[..68]);
        header[68..72].copy_from_slice(&header_crc.to_le_bytes());
        out.write_all(&header)?;
        out.write_all(&body)
    }

    /// Writes the index file to `path` atomically (a temporary file beside
    /// it, synced, renamed over it). Errors carry the path.
    pub fn write_native_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let mut bytes = Vec::new();
        self.write_native(&mut bytes).map_err(Error::io)?;
        crate::io::write_atomically(path.as_ref(), &bytes)
    }

    /// Opens an index file held in `bytes` for the compressed file `data`,
    /// with every check listed above (`stale_index` when one fails, saying
    /// what differs).
    pub fn open_native(bytes: Bytes, data: &[u8]) -> Result<GzIndex, Error> {
        let index = GzIndex::parse_native(bytes)?;
        index.check_data(data)?;
        Ok(index)
    }

    /// [`open_native`](Self::open_native) for a compressed file that is not
    /// in memory: its size is the source's, and the bytes of the fingerprint
    /// are read from it in one batch of small ranges (coalesced into about
    /// one request for a remote object).
    pub fn open_native_source(bytes: Bytes, data: &dyn ByteSource) -> Result<GzIndex, Error> {
        let index = GzIndex::parse_native(bytes)?;
        index.check_source(data)?;
        Ok(index)
    }

    /// [`open_native`](Self::open_native) of an index kept for this very
    /// object (the local cache's copy, keyed by URL, size and ETag): only its
    /// size is checked against the data's, not its sampled bytes.
    pub(crate) fn open_native_trusted(bytes: Bytes, size: u64) -> Result<GzIndex, Error> {
        let index = GzIndex::parse_native(bytes)?;
        index.check_size(size)?;
        Ok(index)
    }

    /// The index file in `bytes`, parsed and checked in itself, not yet
    /// against the data.
    fn parse_native(bytes: Bytes) -> Result<GzIndex, Error> {
        let header = bytes.get(..GZ_HEADER_LEN).ok_or_else(|| {
            damaged(
                0,
                format_args!(
                    "{} bytes, shorter than the {GZ_HEADER_LEN}-byte header",
                    bytes.len()
                ),
            )
        })?;
        let u32_at = |at: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&header[at..at + 4]);
            u32::from_le_bytes(b)
        };
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&header[at..at + 8]);
            u64::from_le_bytes(b)
        };
        if header[..8] != GZ_MAGIC {
            return Err(damaged(
                0,
                format_args!(
                    "not a recordwire checkpoint index: magic {:02x?}, expected {:02x?} \
                     (RWGZIDX\\0)",
                    &header[..8],
                    GZ_MAGIC
                ),
            ));
        }
        let version = u32_at(8);
        if version != GZ_VERSION {
            return Err(damaged(
                8,
                format_args!("format version {version}, this build reads version {GZ_VERSION}"),
            ));
        }
        let (stored, computed) = (u32_at(68), crate::arch::crc32c(0, &header[..68]));
        if stored != computed {
            return Err(damaged(
                68,
                format_args!("header CRC stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        if header[14..16] != [0, 0] || header[28..32] != [0; 4] || header[72..80] != [0; 8] {
            return Err(damaged(14, "reserved bytes are not zero"));
        }
        let flags = header[13];
        if flags & !FLAG_BLOCK_COMPRESSED != 0 {
            return Err(damaged(13, format_args!("unknown flags {flags:#04x}")));
        }
        let compression = match header[12] {
            1 => Compression::Gzip,
            2 => Compression::Zlib,
            other => return Err(damaged(12, format_args!("unknown container code {other}"))),
        };
        let (count, windows_len, records_len) = (u64_at(40), u64_at(48), u64_at(56));
        let points_len = count.checked_mul(GZ_POINT_LEN as u64);
        let windows_end = points_len
            .and_then(|p| p.checked_add(windows_len))
            .and_then(|w| w.checked_add(GZ_HEADER_LEN as u64));
        let total = windows_end
            .map(|w| w.next_multiple_of(8))
            .and_then(|w| w.checked_add(records_len));
        let (Some(windows_end), Some(total)) = (windows_end, total) else {
            return Err(damaged(40, "lengths overflow"));
        };
        if total != bytes.len() as u64 {
            return Err(damaged(
                GZ_HEADER_LEN as u64,
                format_args!(
                    "{} bytes, but the header describes {total} (truncated or extended)",
                    bytes.len()
                ),
            ));
        }
        let body = &bytes[GZ_HEADER_LEN..];
        let (stored, computed) = (u32_at(64), crate::arch::crc32c(0, body));
        if stored != computed {
            return Err(damaged(
                64,
                format_args!("body CRC stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        // Lengths checked above: these fit.
        let windows_start = GZ_HEADER_LEN + GZ_POINT_LEN * count as usize;
        let windows = bytes.slice(windows_start..windows_end as usize);
        let mut points: Vec<Checkpoint> = Vec::with_capacity(count as usize);
        for (k, e) in bytes[GZ_HEADER_LEN..windows_start]
            .chunks_exact(GZ_POINT_LEN)
            .enumerate()
        {
            let u64_of =
                |at: usize| u64::from_le_bytes(e[at..at + 8].try_into().unwrap_or_default());
            let u32_of =
                |at: usize| u32::from_le_bytes(e[at..at + 4].try_into().unwrap_or_default());
            let p = Checkpoint {
                out: u64_of(0),
                bit: u64_of(8),
                window_at: u64_of(16),
                window_clen: u32_of(24),
                window_len: u32_of(28),
            };
            let at = (GZ_HEADER_LEN + GZ_POINT_LEN * k) as u64;
            let ordered = match points.last() {
                Some(prev) => p.out >= prev.out && p.bit > prev.bit,
                None => p.out == 0,
            };
            let window_ok = p.window_len as usize <= crate::deflate::WINDOW
                && p.window_at
                    .checked_add(u64::from(p.window_clen))
                    .is_some_and(|end| end <= windows.len() as u64)
                && u64::from(p.window_len) <= p.out;
            if !ordered || !window_ok {
                return Err(damaged(
                    at,
                    format_args!("checkpoint {k} is out of order or its window out of range"),
                ));
            }
            points.push(p);
        }
        if points.is_empty() {
            return Err(damaged(40, "no checkpoints"));
        }
        let records_at = (windows_end as usize).next_multiple_of(8);
        let records = Index::open_native_parts(bytes.slice(records_at..))
            .map_err(|e| damaged(records_at as u64, format_args!("the record index: {e}")))?;
        records.verify_table()?;
        let index = GzIndex {
            compression,
            block_compressed: flags & FLAG_BLOCK_COMPRESSED != 0,
            compressed_size: u64_at(16),
            fingerprint: u32_at(24),
            spacing: u64_at(32),
            points,
            windows,
            records,
        };
        Ok(index)
    }

    /// Reads the index file at `path` and opens it for `data`
    /// ([`open_native`](Self::open_native)); errors carry the index file's
    /// path.
    pub fn load_native(path: impl AsRef<Path>, data: &[u8]) -> Result<GzIndex, Error> {
        let path = path.as_ref();
        let name: Arc<str> = path.display().to_string().into();
        let bytes = std::fs::read(path).map_err(|e| Error::io(e).with_file(Arc::clone(&name)))?;
        GzIndex::open_native(Bytes::from(bytes), data).map_err(|e| e.with_file(name))
    }

    /// Checks that `data` is the compressed file this index was built for:
    /// its size, then its fingerprint (`stale_index` otherwise).
    pub fn check_data(&self, data: &[u8]) -> Result<(), Error> {
        self.check_size(data.len() as u64)?;
        self.check_fingerprint(fingerprint(data, &self.points))
    }

    /// [`check_data`](Self::check_data) for a compressed file that is not in
    /// memory: the sampled bytes are read from `data` in one batch.
    pub fn check_source(&self, data: &dyn ByteSource) -> Result<(), Error> {
        let size = data.len();
        self.check_size(size)?;
        let ranges = fingerprint_ranges(size, &self.points);
        let mut parts = Vec::with_capacity(ranges.len());
        data.read_scattered(&ranges, &mut parts)?;
        self.check_fingerprint(fingerprint_of(
            size,
            &self.points,
            parts.iter().map(|b| &b[..]),
        ))
    }

    fn check_size(&self, size: u64) -> Result<(), Error> {
        if size != self.compressed_size {
            return Err(stale(
                size.min(self.compressed_size),
                format!(
                    "the compressed file is {size} bytes but the index was built for {} bytes \
                     (it was {} since)",
                    self.compressed_size,
                    if size > self.compressed_size {
                        "appended to"
                    } else {
                        "truncated"
                    }
                ),
            ));
        }
        Ok(())
    }

    fn check_fingerprint(&self, now: u32) -> Result<(), Error> {
        if now != self.fingerprint {
            return Err(stale(
                0,
                format!(
                    "the compressed file's fingerprint is {now:#010x} but the index was built \
                     for {:#010x} (it was rewritten since)",
                    self.fingerprint
                ),
            ));
        }
        Ok(())
    }
}
