//! The decompressed stream of a GZIP/ZLIB file as a [`ByteSource`]: ranges
//! inflated from the nearest checkpoint, spans kept and sliced.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::access::{Compressed, Run};
use super::GzIndex;
use crate::deflate::{Inflate, WINDOW};
use crate::error::Error;
use crate::io::{ByteSource, MemorySource};

/// How far past the end of a range a read inflates at most, when the next
/// checkpoint is farther (a spacing larger than this, or the last span).
const READ_AHEAD: u64 = 4 << 20;
/// The most spans a source keeps.
const KEPT_SPANS: usize = 8;

/// A span of decompressed output, kept for the reads that follow.
struct Span {
    base: u64,
    bytes: Bytes,
    /// The inflate that continues the stream at the span's end (taken by
    /// the read that continues it).
    resume: Option<Inflate>,
    /// When it was last used (for eviction).
    tick: u64,
}

impl Span {
    fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }
}

#[derive(Default)]
struct Spans {
    kept: Vec<Span>,
    tick: u64,
}

/// The decompressed stream of a compressed record file, read through its
/// checkpoint index: a range is served from a kept span of output when one
/// holds it (a slice, no copy), else inflated from the checkpoint at or
/// before it (or by continuing a kept span that ends before it) up to the
/// next checkpoint past its start, and kept. Reading the records of a span
/// in any order (a sequential pass, a sorted batch, an epoch whose pages
/// are the checkpoint spans) thus inflates each span once.
///
/// A handed-out range keeps the whole span it is a slice of alive (about
/// the checkpoint spacing, 1 MiB by default) until it is dropped. The source
/// keeps at most 8 spans itself. Reads from several threads are served at
/// once (the lock is held only to look up and keep spans, not to inflate).
pub struct GzSource {
    data: Arc<dyn ByteSource>,
    index: Arc<GzIndex>,
    spans: Mutex<Spans>,
    restarts: AtomicU64,
    inflated: AtomicU64,
}

impl std::fmt::Debug for GzSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GzSource")
            .field("compressed", &self.data.len())
            .field("over", &self.data.kind())
            .field("decompressed", &self.index.decompressed_size())
            .field("checkpoints", &self.index.checkpoints().len())
            .finish_non_exhaustive()
    }
}

impl GzSource {
    /// The decompressed stream of `data` (the whole compressed file) through
    /// `index`, which must be its checkpoint index (`stale_index` when its
    /// size or fingerprint differs).
    pub fn new(data: Bytes, index: Arc<GzIndex>) -> Result<GzSource, Error> {
        GzSource::over(Arc::new(MemorySource::new(data)), index)
    }

    /// The decompressed stream of the compressed file `data` reads, through
    /// its checkpoint `index` (checked as by [`new`](Self::new), the sampled
    /// bytes read in one batch). When `data` is not in memory (a remote
    /// object, a file read with positioned reads), each inflate reads only
    /// the compressed bytes it needs: from its checkpoint to the checkpoint
    /// past the end of its output, one ranged read.
    pub fn over(data: Arc<dyn ByteSource>, index: Arc<GzIndex>) -> Result<GzSource, Error> {
        match data.in_memory() {
            Some(bytes) => index.check_data(bytes)?,
            None => index.check_source(&*data)?,
        }
        Ok(GzSource::checked(data, index))
    }

    /// [`over`](Self::over) for an index already checked against `data`.
    pub(crate) fn checked(data: Arc<dyn ByteSource>, index: Arc<GzIndex>) -> GzSource {
        GzSource {
            data,
            index,
            spans: Mutex::default(),
            restarts: AtomicU64::new(0),
            inflated: AtomicU64::new(0),
        }
    }

    /// The checkpoint index.
    pub fn index(&self) -> &Arc<GzIndex> {
        &self.index
    }

    /// The compressed file.
    pub fn compressed(&self) -> &Arc<dyn ByteSource> {
        &self.data
    }

    /// How many reads restarted from a checkpoint.
    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }

    /// Bytes inflated in all (windows not counted).
    pub fn inflated(&self) -> u64 {
        self.inflated.load(Ordering::Relaxed)
    }

    /// Bytes of output the source keeps now.
    pub fn held(&self) -> usize {
        self.lock().kept.iter().map(|s| s.bytes.len()).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spans> {
        // A panic while holding the lock leaves only a cache behind.
        self.spans.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A kept span that holds `range`, sliced; or the run to start from.
    fn lookup(&self, range: &Range<u64>) -> Result<Bytes, Option<Run>> {
        let mut spans = self.lock();
        spans.tick += 1;
        let tick = spans.tick;
        if let Some(s) = spans
            .kept
            .iter_mut()
            .find(|s| s.base <= range.start && range.end <= s.end())
        {
            s.tick = tick;
            let from = (range.start - s.base) as usize;
            let to = (range.end - s.base) as usize;
            return Ok(s.bytes.slice(from..to));
        }
        // Continue a span that ends at or past the checkpoint serving the
        // range (no more to inflate than from there) and starts before it.
        let point = self.index.point_for(range.start).out;
        let span = spans.kept.iter_mut().find(|s| {
            s.resume.is_some() && s.base <= range.start && s.end() >= point && s.end() <= range.end
        });
        Err(span.and_then(|s| {
            let inflate = s.resume.take()?;
            let len = s.bytes.len();
            let keep_from = ((range.start - s.base) as usize).min(len.saturating_sub(WINDOW));
            Some(Run {
                out: s.bytes[keep_from..].to_vec(),
                base: s.base + keep_from as u64,
                inflate: Some(inflate),
                inflated: 0,
                window_short: false,
            })
        }))
    }

    fn keep(&self, span: Span) {
        let mut spans = self.lock();
        spans.tick += 1;
        let span = Span {
            tick: spans.tick,
            ..span
        };
        if spans.kept.len() >= KEPT_SPANS {
            if let Some(oldest) = (0..spans.kept.len()).min_by_key(|&k| spans.kept[k].tick) {
                spans.kept.swap_remove(oldest);
            }
        }
        spans.kept.push(span);
    }
}

impl GzSource {
    /// Inflates `run` up to decompressed `target` (see
    /// [`GzIndex::run_to`]): over the whole compressed file when it is in
    /// memory, else over one read of the compressed bytes from where the run
    /// is to the checkpoint past `target`. Should that window prove too
    /// short (a GZIP member header longer than the room left past the
    /// checkpoint), the run starts again from its checkpoint with the rest
    /// of the file.
    fn inflate_to(&self, run: &mut Run, start: u64, target: u64) -> Result<(), Error> {
        if let Some(all) = self.data.in_memory() {
            return self
                .index
                .run_to(Compressed::whole(all), run, start, target, None);
        }
        let size = self.data.len();
        let from = run.inflate.as_ref().map_or(size, |i| i.bit() / 8).min(size);
        let to = self.index.compressed_end_for(target).max(from);
        let result = self.run_window(run, from..to, start, target);
        if !run.window_short {
            return result;
        }
        self.restarts.fetch_add(1, Ordering::Relaxed);
        self.index.restart(start, None, run)?;
        let from = (self.index.point_for(start).bit / 8).min(size);
        self.run_window(run, from..size, start, target)
    }

    fn run_window(
        &self,
        run: &mut Run,
        window: Range<u64>,
        start: u64,
        target: u64,
    ) -> Result<(), Error> {
        let bytes = self.data.read_range(window.clone())?;
        let compressed = Compressed {
            bytes: &bytes,
            base: window.start,
            size: self.data.len(),
        };
        self.index.run_to(compressed, run, start, target, None)
    }
}

impl ByteSource for GzSource {
    fn len(&self) -> u64 {
        self.index.decompressed_size()
    }

    fn read_range(&self, range: Range<u64>) -> Result<Bytes, Error> {
        let len = self.len();
        if range.start > range.end || range.end > len {
            return Err(crate::io::out_of_bounds(&range, len));
        }
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let mut run = match self.lookup(&range) {
            Ok(bytes) => return Ok(bytes),
            Err(Some(run)) => run,
            Err(None) => {
                self.restarts.fetch_add(1, Ordering::Relaxed);
                let mut run = Run::default();
                self.index.restart(range.start, None, &mut run)?;
                run
            }
        };
        // Up to the next checkpoint past the range's start (the whole span
        // the range begins in), so that the span's other records are read
        // from memory; no farther than `READ_AHEAD` past the range.
        let span_end = self.index.next_point_after(range.start).unwrap_or(len);
        let target = span_end
            .min(range.end.saturating_add(READ_AHEAD))
            .max(range.end)
            .min(len);
        let result = self.inflate_to(&mut run, range.start, target);
        self.inflated.fetch_add(run.inflated, Ordering::Relaxed);
        result?;
        let Run {
            out, base, inflate, ..
        } = run;
        let bytes = Bytes::from(out);
        let from = (range.start - base) as usize;
        let to = (range.end - base) as usize;
        let slice = bytes.slice(from..to);
        self.keep(Span {
            base,
            bytes,
            resume: inflate,
            tick: 0,
        });
        Ok(slice)
    }

    fn kind(&self) -> &'static str {
        "inflated"
    }
}
