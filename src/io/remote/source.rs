//! [`RemoteSource`]: one object read with ranged requests.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::{GetOptions, GetRange, ObjectStoreExt};

use super::cache::SpanDisk;
use super::errors::one_line;
use super::location::Location;
use super::options::{StorageOptions, Tuning};
use super::runtime::block_on;
use super::wait::{Failed, Op};
use crate::error::Error;
use crate::io::{coalesce, out_of_bounds, ByteSource};

/// The next [`RemoteSource`]'s number.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Bytes fetched with the first request (framing detection, the content
/// fingerprint's first 4 KiB, and the first records of a small object).
const HEAD: u64 = 64 << 10;

/// Requests made and bytes received for one [`RemoteSource`] (and the
/// readers made from it), since it was opened.
#[derive(Debug, Default)]
pub struct RemoteStats {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl RemoteStats {
    /// Requests made (each ranged `GET`; retries inside the client are not
    /// counted here).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes received.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn add(&self, bytes: u64) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// One remote object (see [`super`]) behind the [`ByteSource`] seam: each
/// range one ranged `GET`, several ranges sorted, coalesced (gaps up to the
/// `coalesce_gap` storage option) and fetched concurrently (up to
/// `concurrency` requests). Opening it costs one request, which fetches the
/// object's size, ETag and first 64 KiB.
///
/// Every request after the first carries the ETag seen then (`If-Match`),
/// and every answer is checked for it and for its length: an object
/// replaced or truncated while it is read is an `io_error`, never other
/// bytes.
///
/// ```no_run
/// use recordwire::io::ByteSource;
/// use recordwire::io::remote::{RemoteSource, StorageOptions};
///
/// let source = RemoteSource::open("s3://bucket/train-0.tfrecord", &StorageOptions::default())?;
/// let first_header = source.read_range(0..12)?;
/// assert_eq!(first_header.len(), 12);
/// # Ok::<(), recordwire::Error>(())
/// ```
#[derive(Debug)]
pub struct RemoteSource {
    location: Location,
    len: u64,
    etag: Option<String>,
    head: Bytes,
    stats: Arc<RemoteStats>,
    /// This object's number among the process's open objects: its spans'
    /// key in a cache shared with others ([`SpanCache`]).
    id: u64,
    /// The cache its spans are kept in: its own (`span_cache`), or one
    /// shared by the shards of a loader's dataset.
    spans: Mutex<SpanCache>,
    /// The spans kept on disk (`span_disk`), if asked for.
    disk: Option<Arc<SpanDisk>>,
    /// Whether reads go through the span cache: once the shard is open (the
    /// index's sampled checks read only what they need).
    spanning: AtomicBool,
    /// The operation that opened the object (bounded by `retry_timeout`):
    /// looking for its sidecar is a step of the same operation.
    op: Op,
}

/// A span: the object's number ([`RemoteSource`]'s `id`) and the span's.
type SpanKey = (u64, u64);

/// Fetched spans kept, least recently used out, within a limit in bytes:
/// one object's (the `span_cache` storage option), or one shared by several
/// objects, so that a loader's order over many shards keeps a bounded
/// number of spans in all ([`SpanCache::new`],
/// [`Dataset::keep_spans`](crate::dataset::Dataset::keep_spans)).
#[derive(Clone, Debug)]
pub struct SpanCache(Arc<Mutex<Spans>>);

impl SpanCache {
    /// An empty cache that keeps up to `limit` bytes of spans.
    pub fn new(limit: u64) -> SpanCache {
        SpanCache(Arc::new(Mutex::new(Spans {
            limit,
            ..Spans::default()
        })))
    }

    /// Bytes of spans held now.
    pub fn bytes(&self) -> u64 {
        self.lock().bytes
    }

    /// The most it keeps, in bytes.
    pub fn limit(&self) -> u64 {
        self.lock().limit
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spans> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Default)]
struct Spans {
    kept: HashMap<SpanKey, (Bytes, u64)>,
    bytes: u64,
    limit: u64,
    tick: u64,
    /// Spans being fetched (by a read or a prefetch): a second reader of one
    /// waits for the same request.
    pending: HashMap<SpanKey, SpanFetch>,
}

/// A span's request, awaited by whoever needs the span.
type SpanFetch =
    futures_util::future::Shared<futures_util::future::BoxFuture<'static, Result<Bytes, Error>>>;

impl std::fmt::Debug for Spans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spans")
            .field("kept", &self.kept.len())
            .field("bytes", &self.bytes)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl Spans {
    fn get(&mut self, span: SpanKey) -> Option<Bytes> {
        self.tick += 1;
        let tick = self.tick;
        self.kept.get_mut(&span).map(|(b, used)| {
            *used = tick;
            b.clone()
        })
    }

    /// Keeps `bytes` as `span`, then drops the least recently used spans
    /// (never the one just kept) until the limit holds.
    fn put(&mut self, span: SpanKey, bytes: Bytes) {
        let limit = self.limit;
        self.tick += 1;
        self.bytes += bytes.len() as u64;
        if let Some((old, _)) = self.kept.insert(span, (bytes, self.tick)) {
            self.bytes -= old.len() as u64;
        }
        while self.bytes > limit && self.kept.len() > 1 {
            let oldest = self
                .kept
                .iter()
                .filter(|(&k, _)| k != span)
                .min_by_key(|(_, (_, used))| *used)
                .map(|(&k, _)| k);
            let Some(oldest) = oldest else { break };
            if let Some((b, _)) = self.kept.remove(&oldest) {
                self.bytes -= b.len() as u64;
            }
        }
        if self.bytes > limit {
            // One span larger than the cache: read, not kept.
            if let Some((b, _)) = self.kept.remove(&span) {
                self.bytes -= b.len() as u64;
            }
        }
    }
}

impl RemoteSource {
    /// Opens the object at `url` (one request).
    ///
    /// Errors: `io_error` with the URL: not found, permission denied, bad
    /// credentials, a server that does not honour `Range`, an unknown
    /// storage option.
    pub fn open(url: &str, options: &StorageOptions) -> Result<RemoteSource, Error> {
        RemoteSource::at(Location::parse(url, options)?)
    }

    pub(crate) fn at(location: Location) -> Result<RemoteSource, Error> {
        let op = location.op();
        let opening = location.clone();
        let step = op.clone();
        let got = block_on(async move {
            let path = opening.path.clone();
            let request = format!("GET of bytes 0..{HEAD} (opening the object)");
            let got = opening.run(&step, &request, |store| async move {
                let options = GetOptions {
                    range: Some(GetRange::Bounded(0..HEAD)),
                    ..Default::default()
                };
                let result = store.get_opts(&path, options).await?;
                let meta = result.meta.clone();
                Ok::<_, object_store::Error>((meta, result.bytes().await?))
            });
            let failure = match got.await {
                Ok(found) => return Ok(found),
                Err(failure) => failure,
            };
            // An empty object has no range to give (416): ask what it is.
            // Not after a timeout or an error of the server's, which the
            // same question would only meet again.
            let unsatisfiable =
                matches!(&failure.failed, Failed::Store(e) if one_line(e).contains(" 416 "));
            if !unsatisfiable {
                return Err(failure);
            }
            let path = opening.path.clone();
            let head = opening.run(
                &step,
                "HEAD (the size of an object with no first bytes)",
                |store| async move { store.head(&path).await },
            );
            match head.await {
                Ok(meta) if meta.size == 0 => Ok((meta, Bytes::new())),
                _ => Err(failure),
            }
        });
        let stats = Arc::new(RemoteStats::default());
        let (meta, head) = got.map_err(|f| f.into_error(&location.url))?;
        stats.add(head.len() as u64);
        let want = meta.size.min(HEAD);
        if head.len() as u64 != want {
            return Err(short(&location, 0, want, head.len()));
        }
        let disk = SpanDisk::for_object(
            &location.key.options,
            &location.tuning,
            &location.url,
            meta.e_tag.as_deref(),
        );
        let spans = Mutex::new(SpanCache::new(location.tuning.span_cache));
        Ok(RemoteSource {
            len: meta.size,
            etag: meta.e_tag,
            head,
            location,
            stats,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            spans,
            disk: disk.map(Arc::new),
            spanning: AtomicBool::new(false),
            op,
        })
    }

    /// The operation that opened the object: looking for its sidecar is
    /// a step of it, within the same time.
    pub(crate) fn opening(&self) -> &Op {
        &self.op
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.location.url
    }

    pub(crate) fn url_arc(&self) -> &Arc<str> {
        &self.location.url
    }

    /// The ETag the object had when it was opened, if the store gives one.
    pub fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    /// Requests and bytes so far.
    pub fn stats(&self) -> &Arc<RemoteStats> {
        &self.stats
    }

    pub(crate) fn location(&self) -> &Location {
        &self.location
    }

    /// Fetches `range` (within the object) in one request.
    pub(crate) fn fetch(
        &self,
        range: Range<u64>,
    ) -> impl std::future::Future<Output = Result<Bytes, Error>> + Send + 'static {
        let location = self.location.clone();
        let etag = self.etag.clone();
        let stats = Arc::clone(&self.stats);
        async move {
            // The operation starts when the request does (a read of many
            // ranges starts `concurrency` at a time).
            let op = location.op();
            let request = format!("GET of bytes {}..{}", range.start, range.end);
            let path = location.path.clone();
            let if_match = etag.clone();
            let asked = range.clone();
            let got = location.run(&op, &request, |store| async move {
                let options = GetOptions {
                    range: Some(GetRange::Bounded(asked)),
                    if_match,
                    ..Default::default()
                };
                let result = store.get_opts(&path, options).await?;
                let meta = result.meta.clone();
                Ok::<_, object_store::Error>((meta, result.bytes().await?))
            });
            let (meta, bytes) = got
                .await
                .map_err(|f| f.into_error(&location.url).with_offset(range.start))?;
            if let (Some(was), Some(now)) = (&etag, &meta.e_tag) {
                if was != now {
                    return Err(changed(&location, range.start));
                }
            }
            stats.add(bytes.len() as u64);
            let want = range.end - range.start;
            if bytes.len() as u64 != want {
                return Err(short(&location, range.start, want, bytes.len()));
            }
            Ok(bytes)
        }
    }

    /// The head's slice for `range`, when the first request fetched it.
    pub(crate) fn in_head(&self, range: &Range<u64>) -> Option<Bytes> {
        (range.end <= self.head.len() as u64)
            .then(|| self.head.slice(range.start as usize..range.end as usize))
    }

    /// The spans `ranges` fall in, from the span cache or fetched whole (one
    /// request each, concurrently) and kept; each range sliced from them (or
    /// copied, when it crosses a span boundary).
    fn read_spanned(&self, ranges: &[Range<u64>], out: &mut Vec<Bytes>) -> Result<(), Error> {
        let tuning = self.location.tuning;
        let size = tuning.span_size;
        // Each span is fetched with a little of the next (`over`), so that
        // the records that start in a span and end just past it (in a page
        // order, they are read with the span's other records) need only it.
        let over = (size / 16).min(64 << 10);
        let spans_of = |r: &Range<u64>| {
            let first = r.start / size;
            let last = if r.end <= (first + 1) * size + over {
                first
            } else {
                (r.end - 1) / size
            };
            first..=last
        };
        let mut wanted: Vec<u64> = ranges
            .iter()
            .filter(|r| !r.is_empty() && self.in_head(r).is_none())
            .flat_map(spans_of)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let (mut have, waits) = self.spans_or_fetches(&wanted);
        let concurrency = tuning.concurrency;
        let (numbers, futures): (Vec<u64>, Vec<SpanFetch>) = waits.into_iter().unzip();
        let fetched: Vec<Bytes> = block_on(async move {
            futures_util::stream::iter(futures)
                .buffered(concurrency)
                .try_collect()
                .await
        })?;
        for (s, bytes) in numbers.into_iter().zip(fetched) {
            have.insert(s, bytes);
        }
        out.reserve(ranges.len());
        for r in ranges {
            if let Some(bytes) = self.without_request(r) {
                out.push(bytes);
                continue;
            }
            let spans = spans_of(r);
            let (first, last) = (*spans.start(), *spans.end());
            let piece = |s: u64, from: u64, to: u64| -> Result<Bytes, Error> {
                let span = have.get(&s).ok_or_else(|| out_of_bounds(r, self.len))?;
                let base = s * size;
                span.get((from - base) as usize..(to - base) as usize)
                    .map(|_| span.slice((from - base) as usize..(to - base) as usize))
                    .ok_or_else(|| short(&self.location, from, to - from, 0))
            };
            if first == last {
                out.push(piece(first, r.start, r.end)?);
            } else {
                let mut joined = Vec::with_capacity((r.end - r.start) as usize);
                for s in first..=last {
                    let from = r.start.max(s * size);
                    let to = r.end.min((s + 1) * size);
                    joined.extend_from_slice(&piece(s, from, to)?);
                }
                out.push(Bytes::from(joined));
            }
        }
        Ok(())
    }

    /// The bytes of span `s` (within the object, with the overhang).
    fn span_range(&self, s: u64) -> Range<u64> {
        let size = self.location.tuning.span_size;
        let over = (size / 16).min(64 << 10);
        s * size..((s + 1) * size + over).min(self.len)
    }

    /// For each of `wanted` (span numbers): its bytes when kept, else the
    /// request that fetches it (one already under way, or a new one, which
    /// keeps the span when it arrives).
    fn spans_or_fetches(&self, wanted: &[u64]) -> (HashMap<u64, Bytes>, Vec<(u64, SpanFetch)>) {
        use futures_util::FutureExt;
        let mut have = HashMap::with_capacity(wanted.len());
        let mut waits = Vec::new();
        let id = self.id;
        let cache = self.span_cache();
        let mut missing: Vec<u64> = {
            let mut spans = cache.lock();
            wanted
                .iter()
                .copied()
                .filter(|&s| match spans.get((id, s)) {
                    Some(b) => {
                        have.insert(s, b);
                        false
                    }
                    None => true,
                })
                .collect()
        };
        // From disk (read without holding the lock).
        if let Some(disk) = &self.disk {
            missing.retain(|&s| {
                let range = self.span_range(s);
                match disk.get(s, range.end - range.start) {
                    Some(b) => {
                        cache.lock().put((id, s), b.clone());
                        have.insert(s, b);
                        false
                    }
                    None => true,
                }
            });
        }
        let mut spans = cache.lock();
        for s in missing {
            if let Some(f) = spans.pending.get(&(id, s)) {
                waits.push((s, f.clone()));
                continue;
            }
            let fetch = self.fetch(self.span_range(s));
            let cache = cache.clone();
            let disk = self.disk.clone();
            let f = async move {
                let got = fetch.await;
                if let (Ok(bytes), Some(disk)) = (&got, disk) {
                    disk.put(s, bytes);
                }
                let mut spans = cache.lock();
                spans.pending.remove(&(id, s));
                if let Ok(bytes) = &got {
                    spans.put((id, s), bytes.clone());
                }
                got
            }
            .boxed()
            .shared();
            spans.pending.insert((id, s), f.clone());
            waits.push((s, f));
        }
        (have, waits)
    }

    /// Starts fetching the spans of `ranges` that are neither kept nor under
    /// way, and returns at once: they are kept when they arrive (a no-op
    /// without a span cache). What a reader calls for the records it will
    /// read next, while it decodes the current ones.
    pub fn prefetch_spans(&self, ranges: &[Range<u64>]) {
        if !self.spanning.load(Ordering::Relaxed) {
            return;
        }
        let size = self.location.tuning.span_size;
        let mut wanted: Vec<u64> = ranges
            .iter()
            .filter(|r| !r.is_empty() && r.end <= self.len && self.in_head(r).is_none())
            .map(|r| r.start / size)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let (_, waits) = self.spans_or_fetches(&wanted);
        for (_, f) in waits {
            drop(super::runtime::spawn(f));
        }
    }

    /// From now on, reads go through the span cache when the `span_cache`
    /// storage option asks for one (called once the shard is open).
    pub(crate) fn start_spans(&self) {
        let on = self.location.tuning.span_cache > 0 || self.disk.is_some();
        self.spanning.store(on, Ordering::Relaxed);
    }

    /// Bytes held by the span cache now.
    pub fn span_cache_bytes(&self) -> u64 {
        self.span_cache().bytes()
    }

    /// The cache its spans are kept in.
    fn span_cache(&self) -> SpanCache {
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether reads go through a span cache (the `span_cache` or
    /// `span_disk` storage option, or [`keep_spans_in`](Self::keep_spans_in)).
    pub fn keeps_spans(&self) -> bool {
        self.spanning.load(Ordering::Relaxed)
    }

    /// The bytes of one span (the `span_size` storage option).
    pub fn span_size(&self) -> u64 {
        self.location.tuning.span_size
    }

    /// From now on, keeps its spans in `cache` (shared with other objects;
    /// what its own cache held is dropped), and reads through it: every
    /// read fetches the whole spans it falls in, as with `span_cache` set.
    pub fn keep_spans_in(&self, cache: &SpanCache) {
        *self.spans.lock().unwrap_or_else(|e| e.into_inner()) = cache.clone();
        self.spanning.store(true, Ordering::Relaxed);
    }

    /// The bytes of `range` when no request is needed for them: empty, or
    /// within what opening fetched.
    fn without_request(&self, range: &Range<u64>) -> Option<Bytes> {
        if range.is_empty() {
            return Some(Bytes::new());
        }
        self.in_head(range)
    }
}

/// Whether `next` joins the request for `group`, of which `asked` bytes
/// were asked for: its gap is at most `gap` (`coalesce_gap`), the bytes
/// nobody asked for stay within `waste` percent of those asked for
/// (`coalesce_waste`: so a read never fetches more than that much beyond
/// its ranges, however they are spread), and the request stays within `max`
/// bytes (`request_size`; a longer run of neighbours is split into requests
/// fetched concurrently).
fn joins(group: &Range<u64>, asked: u64, next: &Range<u64>, tuning: &Tuning, gap: u64) -> bool {
    let end = group.end.max(next.end);
    if next.start > group.end.saturating_add(gap) || end - group.start > tuning.request_size {
        return false;
    }
    let asked = asked + next.end.saturating_sub(next.start.max(group.end));
    let unasked = (end - group.start).saturating_sub(asked);
    u128::from(unasked) * 100 <= u128::from(asked) * u128::from(tuning.coalesce_waste)
}

fn short(location: &Location, at: u64, want: u64, got: usize) -> Error {
    let e = std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!("a short read: {got} of {want} bytes came (the object was truncated?)"),
    );
    Error::io(e)
        .with_file(Arc::clone(&location.url))
        .with_offset(at)
}

fn changed(location: &Location, at: u64) -> Error {
    let e = std::io::Error::other(
        "the object changed since it was opened (its ETag differs): reopen it",
    );
    Error::io(e)
        .with_file(Arc::clone(&location.url))
        .with_offset(at)
}

impl ByteSource for RemoteSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, range: Range<u64>) -> Result<Bytes, Error> {
        if range.start > range.end || range.end > self.len {
            return Err(out_of_bounds(&range, self.len).with_file(Arc::clone(&self.location.url)));
        }
        if let Some(bytes) = self.in_head(&range) {
            return Ok(bytes);
        }
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        if self.spanning.load(Ordering::Relaxed) {
            let mut out = Vec::with_capacity(1);
            self.read_spanned(std::slice::from_ref(&range), &mut out)?;
            return out.pop().ok_or_else(|| out_of_bounds(&range, self.len));
        }
        block_on(self.fetch(range))
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut Vec<Bytes>) -> Result<(), Error> {
        for r in ranges {
            if r.start > r.end || r.end > self.len {
                return Err(out_of_bounds(r, self.len).with_file(Arc::clone(&self.location.url)));
            }
        }
        if self.spanning.load(Ordering::Relaxed) {
            return self.read_spanned(ranges, out);
        }
        self.read_grouped(ranges, self.location.tuning.coalesce_gap, out)
    }

    fn read_scattered(&self, ranges: &[Range<u64>], out: &mut Vec<Bytes>) -> Result<(), Error> {
        for r in ranges {
            if r.start > r.end || r.end > self.len {
                return Err(out_of_bounds(r, self.len).with_file(Arc::clone(&self.location.url)));
            }
        }
        // Never whole spans, and neighbours joined only across small gaps.
        let gap = self.location.tuning.coalesce_gap.min(SCATTERED_GAP);
        self.read_grouped(ranges, gap, out)
    }

    fn ranges_per_read(&self) -> usize {
        usize::MAX
    }

    fn prefetch(&self, ranges: &[Range<u64>]) {
        self.prefetch_spans(ranges);
    }

    fn kind(&self) -> &'static str {
        "remote"
    }

    fn as_remote(&self) -> Option<&RemoteSource> {
        Some(self)
    }
}

/// The largest gap [`ByteSource::read_scattered`] joins two ranges across.
const SCATTERED_GAP: u64 = 64 << 10;

impl RemoteSource {
    /// `ranges` (within the object, in any order) in groups of neighbours
    /// (once sorted by start) with gaps up to `gap` and at most
    /// `request_size` each, one request per group (none for what the first
    /// request already brought), fetched concurrently; handed out in the
    /// order given.
    fn read_grouped(
        &self,
        ranges: &[Range<u64>],
        gap: u64,
        out: &mut Vec<Bytes>,
    ) -> Result<(), Error> {
        let tuning = &self.location.tuning;
        let plan = coalesce(
            ranges,
            |r| self.without_request(r).is_some(),
            |group, asked, r| joins(group, asked, r, tuning, gap),
        );
        let fetches: Vec<_> = plan.groups.iter().map(|r| self.fetch(r.clone())).collect();
        let concurrency = self.location.tuning.concurrency;
        let fetched: Vec<Bytes> = block_on(async move {
            futures_util::stream::iter(fetches)
                .buffered(concurrency)
                .try_collect()
                .await
        })?;
        out.reserve(ranges.len());
        for (k, r) in ranges.iter().enumerate() {
            let bytes = match plan.group_of[k] {
                None => self.without_request(r),
                Some(g) => plan.slice(ranges, k, &fetched[g]),
            };
            out.push(bytes.ok_or_else(|| out_of_bounds(r, self.len))?);
        }
        Ok(())
    }
}
