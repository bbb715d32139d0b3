//! The byte-source seam: where a shard's bytes come from.
//!
//! Everything above this seam (the index, datasets, orders, the batch
//! decoder, the command line and the Python package) reads a record file
//! through [`ByteSource`]: its length, and "give me this range" as an owned
//! [`Bytes`]. In the spirit of arrow-rs parquet's `ChunkReader`, a source is
//! small, `Send + Sync` and shared behind an `Arc`, so that records handed
//! out keep what they need alive and can move between threads.
//!
//! Implementations:
//!
//! - [`MemorySource`]: the whole content in memory, a memory map (zero copy,
//!   ranges are slices of the map) or bytes read or decompressed whole.
//! - [`FileSource`]: plain positioned reads (`pread`) of a file that is not
//!   mapped (`--no-mmap`, [`OpenOptions::mmap`](super::OpenOptions::mmap)
//!   off): each range is read when asked for, in bounded memory, and a file
//!   that changes under the reader gives changed bytes or an error, never
//!   `SIGBUS`.
//! - the decompressed stream of a GZIP/ZLIB file read through its checkpoint
//!   index (`index::GzIndex`), which inflates the span that holds a range
//!   and hands out slices of it (in [`crate::index`], which owns that index).
//!
//! A source over HTTP or object storage is one more implementation: each
//! range a ranged request, and [`ByteSource::read_ranges`] coalescing
//! neighbours.
//!
//! ```
//! use std::sync::Arc;
//! use bytes::Bytes;
//! use recordwire::io::{ByteSource, MemorySource};
//!
//! let source: Arc<dyn ByteSource> = Arc::new(MemorySource::new(Bytes::from_static(b"hello world")));
//! assert_eq!(source.len(), 11);
//! assert_eq!(source.read_range(6..11)?, &b"world"[..]);
//! let mut parts = Vec::new();
//! source.read_ranges(&[0..5, 6..11], &mut parts)?;
//! assert_eq!(parts, [&b"hello"[..], b"world"]);
//! // Past the end: an `io_error` (unexpected end of file) at the range's start.
//! assert_eq!(source.read_range(8..12).unwrap_err().kind().name(), "io_error");
//! # Ok::<(), recordwire::Error>(())
//! ```

use std::fmt;
use std::fs::File;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Error;

/// Where the bytes of one record file come from: the memory map, positioned
/// reads, an inflated compressed file (and, next, a remote object). Offsets are absolute positions in the stream records are
/// read from: the file, or its decompressed content.
pub trait ByteSource: Send + Sync + fmt::Debug {
    /// Bytes in the stream.
    fn len(&self) -> u64;

    /// Whether the stream is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `range` as an owned handle (`Send + 'static`; for a
    /// source in memory, a slice of it, no copy). A range that is not within
    /// `0..len()` is an `io_error` (unexpected end of file) at its start.
    fn read_range(&self, range: Range<u64>) -> Result<Bytes, Error>;

    /// The bytes of each of `ranges`, in any order (overlaps allowed),
    /// appended to `out` in the order given. The default reads them one by
    /// one; the others join neighbours (ranges close to each other once
    /// sorted by start) into fewer reads.
    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut Vec<Bytes>) -> Result<(), Error> {
        out.reserve(ranges.len());
        for range in ranges {
            out.push(self.read_range(range.clone())?);
        }
        Ok(())
    }

    /// The bytes of each of `ranges`, as [`read_ranges`](Self::read_ranges)
    /// (any order, appended in the order given), for a few small ranges
    /// spread over the stream (the sampled bytes of a content fingerprint): a
    /// remote source fetches them concurrently without joining distant
    /// neighbours into requests that would carry mostly bytes nobody asked
    /// for. The default is `read_ranges`.
    fn read_scattered(&self, ranges: &[Range<u64>], out: &mut Vec<Bytes>) -> Result<(), Error> {
        self.read_ranges(ranges, out)
    }

    /// How many ranges a reader of many records should hand to one
    /// [`read_ranges`](Self::read_ranges) call: few for a source that holds
    /// what it read until the call returns (an inflated span per record of a
    /// compressed file), all of them for a remote one, which coalesces and
    /// fetches them concurrently.
    fn ranges_per_read(&self) -> usize {
        32
    }

    /// Hints that `ranges` will be read soon: a source that can fetch ahead
    /// (a remote one with a span cache) starts fetching them and returns at
    /// once. The default does nothing.
    fn prefetch(&self, ranges: &[Range<u64>]) {
        let _ = ranges;
    }

    /// The whole stream, when it is in memory: the zero-copy path, where a
    /// record is borrowed from it without any call through the seam.
    fn in_memory(&self) -> Option<&Bytes> {
        None
    }

    /// The memory map behind the stream, when there is one (for access
    /// advice, `madvise`).
    fn mmap(&self) -> Option<&memmap2::Mmap> {
        None
    }

    /// A short description of where the bytes come from, for `Debug` and
    /// `inspect`: `mapped`, `read`, `pread`, `inflated`, …
    fn kind(&self) -> &'static str;

    /// The remote object, when the stream is one read as it is stored (not
    /// the inflated stream of a compressed one).
    #[cfg(feature = "remote")]
    fn as_remote(&self) -> Option<&crate::io::remote::RemoteSource> {
        None
    }
}

/// `ranges` (in any order) grouped into reads: taken in order of their
/// starts (ties in the order given), each range joins the group before it
/// when `joins(group, asked, range)` says so (the group's bytes so far, how
/// many of them its members asked for, the range), else starts a group of
/// its own; ranges `skip` says need no read belong to
/// no group. A group's bytes run from its first member's start to the
/// furthest end of its members, so every member is a slice of them.
pub(crate) fn coalesce(
    ranges: &[Range<u64>],
    skip: impl Fn(&Range<u64>) -> bool,
    joins: impl Fn(&Range<u64>, u64, &Range<u64>) -> bool,
) -> Coalesced {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    if !ranges.is_sorted_by_key(|r| r.start) {
        // Stable: equal starts keep the order given.
        order.sort_by_key(|&k| ranges[k].start);
    }
    let mut groups: Vec<Range<u64>> = Vec::new();
    let mut group_of = vec![None; ranges.len()];
    // Bytes of the last group that its members asked for.
    let mut asked = 0u64;
    for k in order {
        let r = &ranges[k];
        if skip(r) {
            continue;
        }
        match groups.last_mut() {
            Some(group) if joins(group, asked, r) => {
                asked += r.end.saturating_sub(r.start.max(group.end));
                group.end = group.end.max(r.end);
            }
            _ => {
                asked = r.end - r.start;
                groups.push(r.clone());
            }
        }
        group_of[k] = Some(groups.len() - 1);
    }
    Coalesced { groups, group_of }
}

/// What [`coalesce`] made: the reads and the read each range is a slice of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Coalesced {
    /// The byte range of each read, sorted by start.
    pub(crate) groups: Vec<Range<u64>>,
    /// For each range, in the order given, the index of its read in
    /// `groups`; `None` for a range that needs none.
    pub(crate) group_of: Vec<Option<usize>>,
}

impl Coalesced {
    /// The slice of `read` (the bytes of group `group_of[k]`) that is range
    /// `k` of `ranges`.
    pub(crate) fn slice(&self, ranges: &[Range<u64>], k: usize, read: &Bytes) -> Option<Bytes> {
        let g = self.group_of[k]?;
        let base = self.groups[g].start;
        let r = &ranges[k];
        let from = usize::try_from(r.start.checked_sub(base)?).ok()?;
        let to = usize::try_from(r.end.checked_sub(base)?).ok()?;
        (from <= to && to <= read.len()).then(|| read.slice(from..to))
    }
}

/// An `io_error` for a range outside a source of `len` bytes.
pub(crate) fn out_of_bounds(range: &Range<u64>, len: u64) -> Error {
    let e = std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!(
            "bytes {}..{} asked for, the stream has {len} bytes",
            range.start, range.end
        ),
    );
    Error::io(e).with_offset(range.start)
}

/// The whole content in memory: a memory map, or bytes read (or
/// decompressed) whole. Ranges are slices of it: no copy, no allocation.
#[derive(Clone)]
pub struct MemorySource {
    bytes: Bytes,
    map: Option<Arc<memmap2::Mmap>>,
}

/// Shows the size, not the bytes.
impl fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySource")
            .field("len", &self.bytes.len())
            .field("mapped", &self.map.is_some())
            .finish()
    }
}

impl MemorySource {
    /// A source over `bytes`.
    pub fn new(bytes: Bytes) -> MemorySource {
        MemorySource { bytes, map: None }
    }

    /// A source over `bytes`, which are (a view of) `map`.
    pub(crate) fn mapped(bytes: Bytes, map: Option<Arc<memmap2::Mmap>>) -> MemorySource {
        MemorySource { bytes, map }
    }

    /// The content.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }
}

impl ByteSource for MemorySource {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_range(&self, range: Range<u64>) -> Result<Bytes, Error> {
        let len = self.bytes.len();
        match (usize::try_from(range.start), usize::try_from(range.end)) {
            (Ok(start), Ok(end)) if start <= end && end <= len => Ok(self.bytes.slice(start..end)),
            _ => Err(out_of_bounds(&range, len as u64)),
        }
    }

    fn in_memory(&self) -> Option<&Bytes> {
        Some(&self.bytes)
    }

    fn mmap(&self) -> Option<&memmap2::Mmap> {
        self.map.as_deref()
    }

    fn kind(&self) -> &'static str {
        if self.map.is_some() {
            "mapped"
        } else {
            "memory"
        }
    }
}

/// A file read with positioned reads (`pread`), range by range: nothing is
/// mapped and nothing is held but what a caller keeps. Its length is the
/// file's length when it was opened; a range past the current end of a file
/// that shrank since is an `io_error`.
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// A source over the open `file`, whose length is `len`.
    pub fn new(file: File, len: u64) -> FileSource {
        FileSource { file, len }
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
        }
        #[cfg(windows)]
        {
            let mut done = 0;
            while done < buf.len() {
                let n = std::os::windows::fs::FileExt::seek_read(
                    &self.file,
                    &mut buf[done..],
                    offset + done as u64,
                )?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                done += n;
            }
            Ok(())
        }
    }
}

impl ByteSource for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, range: Range<u64>) -> Result<Bytes, Error> {
        if range.start > range.end || range.end > self.len {
            return Err(out_of_bounds(&range, self.len));
        }
        let n = usize::try_from(range.end - range.start)
            .map_err(|_| out_of_bounds(&range, self.len))?;
        let mut buf = vec![0u8; n];
        self.read_exact_at(&mut buf, range.start)
            .map_err(|e| Error::io(e).with_offset(range.start))?;
        Ok(Bytes::from(buf))
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut Vec<Bytes>) -> Result<(), Error> {
        // Neighbours (gaps under 64 KiB once sorted) are read in one call,
        // then sliced.
        const GAP: u64 = 64 << 10;
        for r in ranges {
            if r.start > r.end || r.end > self.len {
                return Err(out_of_bounds(r, self.len));
            }
        }
        let plan = coalesce(
            ranges,
            |r| r.is_empty(),
            |group, _, r| r.start <= group.end.saturating_add(GAP),
        );
        let mut reads = Vec::with_capacity(plan.groups.len());
        for group in &plan.groups {
            reads.push(self.read_range(group.clone())?);
        }
        out.reserve(ranges.len());
        for (k, r) in ranges.iter().enumerate() {
            match plan.group_of[k] {
                None => out.push(Bytes::new()),
                Some(g) => out.push(
                    plan.slice(ranges, k, &reads[g])
                        .ok_or_else(|| out_of_bounds(r, self.len))?,
                ),
            }
        }
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "pread"
    }
}
