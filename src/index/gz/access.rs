//! Random access into a compressed file through its checkpoints.

use super::{Checkpoint, GzIndex};
use crate::deflate::{
    end_byte, gzip_header, ContainerError, ContainerReason, Inflate, InflateReason, Progress,
    GZIP_TRAILER_LEN, WINDOW,
};
use crate::error::{Error, ErrorKind};
use crate::frame::{ReadOptions, Record};
use crate::io::Compression;

/// Output inflated at a time on the way to a record (then all but the last
/// window is dropped).
pub(crate) const SKIP_STEP: usize = 4 << 20;

/// Output being inflated: `out[0]` is decompressed offset `base`, and
/// `inflate`, when there is one, continues the stream at `base + out.len()`.
#[derive(Default)]
pub(crate) struct Run {
    pub(crate) out: Vec<u8>,
    pub(crate) base: u64,
    /// `None` when nothing is decoded, or the stream ended or failed.
    pub(crate) inflate: Option<Inflate>,
    /// Bytes inflated (windows not counted).
    pub(crate) inflated: u64,
    /// The last [`GzIndex::run_to`] failed only because its window of the
    /// compressed file ended too early (a wider one may succeed).
    pub(crate) window_short: bool,
}

impl Run {
    pub(crate) fn end(&self) -> u64 {
        self.base + self.out.len() as u64
    }
}

/// Compressed bytes an inflate runs over: the whole file, or a window of it
/// (a ranged read of a file that is not in memory).
#[derive(Clone, Copy)]
pub(crate) struct Compressed<'a> {
    /// The bytes from `base` on.
    pub(crate) bytes: &'a [u8],
    /// Where `bytes` start in the compressed file.
    pub(crate) base: u64,
    /// The compressed file's size.
    pub(crate) size: u64,
}

impl<'a> Compressed<'a> {
    /// The whole compressed file.
    pub(crate) fn whole(data: &'a [u8]) -> Self {
        Compressed {
            bytes: data,
            base: 0,
            size: data.len() as u64,
        }
    }

    /// Where the deflate data of the GZIP member whose header starts at byte
    /// `at` begins (its header parsed and checked).
    fn member_start(&self, at: u64) -> Result<u64, ContainerError> {
        let shift = |e: ContainerError| ContainerError {
            offset: e.offset + self.base,
            ..e
        };
        let Some(rel) = at
            .checked_sub(self.base)
            .and_then(|r| usize::try_from(r).ok())
        else {
            return Err(ContainerError {
                offset: at,
                reason: ContainerReason::Truncated,
            });
        };
        gzip_header(self.bytes, rel)
            .map(|h| self.base + h.deflate_start as u64)
            .map_err(shift)
    }

    /// Whether the window ends before the file does.
    pub(crate) fn is_partial(&self) -> bool {
        self.base + (self.bytes.len() as u64) < self.size
    }
}

/// The decompressed span [`GzIndex::get`] keeps between calls, so that
/// records read in file order (a sorted batch, a sequential or page-aware
/// epoch) are inflated once: a record at or after the end of what is
/// decoded continues the same inflate rather than starting again from a
/// checkpoint. Reuse one per reader (thread); it holds about the
/// checkpoint spacing of output, plus the 32 KiB window.
#[derive(Default)]
pub struct GzCache {
    run: Run,
    /// Which file (compressed size and fingerprint) the cache holds output
    /// of: a cache used with another index starts again.
    owner: (u64, u32),
    /// Checkpoints restarted from, for tests and `bench`.
    restarts: u64,
}

impl std::fmt::Debug for GzCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GzCache")
            .field("base", &self.run.base)
            .field("len", &self.run.out.len())
            .field("restarts", &self.restarts)
            .finish_non_exhaustive()
    }
}

impl GzCache {
    /// A new, empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many times a read restarted from a checkpoint (rather than
    /// continuing what was decoded).
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// Bytes of decompressed output held now (its memory, beside the
    /// inflater's tables).
    pub fn held(&self) -> usize {
        self.run.out.len()
    }

    /// How many bytes of output were inflated in all (windows not counted):
    /// beside the bytes of the records read, what reading them cost.
    pub fn inflated(&self) -> u64 {
        self.run.inflated
    }
}

impl GzIndex {
    /// The checkpoint to start from for decompressed offset `at`: the last
    /// one at or before it.
    pub(crate) fn point_for(&self, at: u64) -> &Checkpoint {
        let k = self.points.partition_point(|p| p.out <= at);
        &self.points[k.saturating_sub(1)]
    }

    /// Where the compressed bytes that decompressed output up to `end` needs
    /// end: the byte of the first checkpoint at or past `end` (a block
    /// boundary: all output before it comes from the bits before it), plus
    /// room for the next block's header; the file's size when no checkpoint
    /// lies there.
    pub(crate) fn compressed_end_for(&self, end: u64) -> u64 {
        /// Room past a checkpoint for the block header read on reaching it.
        const HEADER_ROOM: u64 = 4 << 10;
        let k = self.points.partition_point(|p| p.out < end);
        match self.points.get(k) {
            Some(p) => (p.bit.div_ceil(8) + HEADER_ROOM).min(self.compressed_size),
            None => self.compressed_size,
        }
    }

    /// The decompressed offset of the first checkpoint after `at`, if any.
    pub(crate) fn next_point_after(&self, at: u64) -> Option<u64> {
        let k = self.points.partition_point(|p| p.out <= at);
        self.points.get(k).map(|p| p.out)
    }

    /// A `compression_error` for the record at decompressed `at`.
    pub(crate) fn damaged(&self, at: u64, id: Option<u64>, what: impl std::fmt::Display) -> Error {
        let err = Error::new(
            ErrorKind::Compression {
                message: format!(
                    "{} stream: {what} (reading the record at decompressed byte {at})",
                    self.compression.name()
                )
                .into(),
            },
            at,
        );
        match id {
            Some(id) => err.with_record(id),
            None => err,
        }
    }

    /// A run restarted at the checkpoint that serves `start`: its window
    /// as output, its inflate at the block.
    pub(crate) fn restart(&self, start: u64, id: Option<u64>, run: &mut Run) -> Result<(), Error> {
        let point = *self.point_for(start);
        run.out.clear();
        let window = self
            .window(&point)
            .map_err(|e| self.damaged(start, id, e))?;
        run.out.extend_from_slice(&window);
        run.base = point.out - window.len() as u64;
        run.inflate = Some(Inflate::at(point.bit));
        Ok(())
    }

    /// Inflates `run` until it holds decompressed bytes up to `end`,
    /// dropping the output before `start` but for its last window while
    /// getting there (memory bounded by [`SKIP_STEP`], however far `start`
    /// lies past where the run is). `data` is the compressed file.
    pub(crate) fn run_to(
        &self,
        data: Compressed<'_>,
        run: &mut Run,
        start: u64,
        end: u64,
        id: Option<u64>,
    ) -> Result<(), Error> {
        run.window_short = false;
        while run.end() < end {
            // Output before the record is only history: keep its last
            // window, so that memory stays bounded however far the record
            // lies past the checkpoint (a spacing larger than the file).
            if run.end() < start && run.out.len() > SKIP_STEP {
                let drop = run.out.len() - WINDOW;
                run.out.drain(..drop);
                run.base += drop as u64;
            }
            // Up to the record's end, in steps of at most `SKIP_STEP` while
            // still before its start.
            let to = if run.end() < start {
                end.min(run.end() + SKIP_STEP as u64)
            } else {
                end
            };
            let Some(inflate) = run.inflate.as_mut() else {
                return Err(self.damaged(start, id, "the stream ends inside the record"));
            };
            let limit = usize::try_from(to - run.base).unwrap_or(usize::MAX);
            let before = run.out.len();
            let progress = inflate.run_window(data.bytes, data.base, &mut run.out, limit, false);
            run.inflated += run.out.len().saturating_sub(before) as u64;
            match progress {
                Ok(Progress::Limit | Progress::Block { .. }) => {}
                Ok(Progress::End { bit }) => {
                    // The next GZIP member, if any, continues the stream.
                    let after = end_byte(bit) + GZIP_TRAILER_LEN;
                    let next = match self.compression {
                        Compression::Gzip if (after as u64) < data.size => Some(
                            data.member_start(after as u64)
                                .map(|at| Inflate::at(at * 8))
                                .map_err(|e| self.damaged(start, id, e)),
                        ),
                        _ => None,
                    };
                    match next {
                        Some(Ok(next)) => *inflate = next,
                        Some(Err(e)) => {
                            run.inflate = None;
                            run.window_short = data.is_partial();
                            return Err(e);
                        }
                        // The end of the last member (or of the ZLIB stream).
                        None => {
                            run.inflate = None;
                            if run.end() < end {
                                return Err(self.damaged(
                                    start,
                                    id,
                                    "the stream ends inside the record",
                                ));
                            }
                        }
                    }
                }
                Err(e) => {
                    run.inflate = None;
                    run.out.clear();
                    run.window_short = e.reason == InflateReason::Truncated && data.is_partial();
                    return Err(self.damaged(start, id, e));
                }
            }
        }
        Ok(())
    }

    /// Makes `cache` hold decompressed bytes `start..end`.
    fn fill(
        &self,
        data: &[u8],
        start: u64,
        end: u64,
        id: u64,
        cache: &mut GzCache,
    ) -> Result<(), Error> {
        let owner = (self.compressed_size, self.fingerprint);
        let point_out = self.point_for(start).out;
        let run = &mut cache.run;
        // Continue what is decoded when it is at or past the checkpoint that
        // serves `start` (decoding from there costs no more) and not past
        // `start`; else start again from the checkpoint.
        let continues = cache.owner == owner
            && run.inflate.is_some()
            && run.base <= start
            && run.end() >= point_out;
        if !continues {
            cache.owner = owner;
            cache.restarts += 1;
            self.restart(start, Some(id), run)?;
        } else {
            // Keep from the record's start, or the last window before the
            // decoded end, whichever is earlier.
            let keep_from =
                (start - run.base).min(run.out.len().saturating_sub(WINDOW) as u64) as usize;
            run.out.drain(..keep_from);
            run.base += keep_from as u64;
        }
        self.run_to(Compressed::whole(data), run, start, end, Some(id))
    }

    /// Record `id`, inflated from the nearest checkpoint at or before it into
    /// `cache` (or read from what `cache` already holds) and borrowed from
    /// there; `Ok(None)` when `id` is not below [`len`](GzIndex::len).
    /// `data` is the whole compressed file this index was built for.
    ///
    /// The frame is checked as [`Index::get`](crate::index::Index::get)
    /// checks it (length CRC, its length against the index, data CRC as
    /// `opts` asks); its offsets are in the decompressed stream. Damaged
    /// compressed data in the span read is a `compression_error` for this
    /// record; records in other spans still read.
    pub fn get<'c>(
        &self,
        data: &[u8],
        id: u64,
        opts: &ReadOptions,
        cache: &'c mut GzCache,
    ) -> Result<Option<Record<'c>>, Error> {
        let Some(span) = self.records.frame_range(id) else {
            return Ok(None);
        };
        if data.len() as u64 != self.compressed_size {
            return Err(crate::index::table::stale(
                0,
                format!(
                    "the compressed file is {} bytes but the index was built for {} bytes",
                    data.len(),
                    self.compressed_size
                ),
            )
            .with_record(id));
        }
        self.fill(data, span.start, span.end, id, cache)?;
        let from = (span.start - cache.run.base) as usize;
        let to = (span.end - cache.run.base) as usize;
        self.records
            .check_frame(&cache.run.out[from..to], span.start, id, opts)
            .map(Some)
    }

    /// Serves a batch of records **in offset order** (the order that
    /// inflates each span once): `f(position, record)` for each id, with
    /// `position` its place in `ids` (`None` for an id not below
    /// [`len`](GzIndex::len)). A record is borrowed from `cache` for the
    /// call only. The first damaged or stale record ends the batch with its
    /// error, after the records before it (in offset order) were served.
    /// `scratch` holds the positions sorted by offset (4 bytes per id).
    pub fn get_many(
        &self,
        data: &[u8],
        ids: &[u64],
        opts: &ReadOptions,
        cache: &mut GzCache,
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize, Option<Record<'_>>),
    ) -> Result<(), Error> {
        use crate::index::access::MAX_BATCH;
        for (chunk_no, chunk) in ids.chunks(MAX_BATCH).enumerate() {
            self.records.sort_by_offset(chunk, scratch);
            for &p in scratch.iter() {
                let record = self.get(data, chunk[p as usize], opts, cache)?;
                f(chunk_no * MAX_BATCH + p as usize, record);
            }
        }
        Ok(())
    }
}
