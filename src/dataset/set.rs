//! Datasets of many files: shards behaving as one id space.

use std::path::{Path, PathBuf};

use super::glob::{glob_local, has_wildcard, index_file_at, matches, storage_of};
use super::order::order_of;
use super::shard::{Scratch, Shard};
use crate::error::Error;
use crate::frame::{OwnedRecord, ReadOptions};
use crate::index::Access;
use crate::io::OpenOptions;
use crate::order::{Order, OrderError, OrderSpec};
use crate::view::PayloadKind;

/// Many data files ("shards") as one id space: the records of the first
/// shard, then those of the second, and so on. The global id of local record
/// `l` of shard `s` is `base(s) + l`, `base(s)` being the number of records
/// in the shards before `s`.
///
/// ```
/// use recordwire::frame::{file_of, Framing};
/// use recordwire::dataset::Dataset;
/// use recordwire::io::OpenOptions;
///
/// let dir = tempfile::tempdir()?;
/// for (name, records) in [("a-0.tfrecord", &[&b"a0"[..], b"a1"][..]), ("a-1.tfrecord", &[b"b0"])] {
///     std::fs::write(dir.path().join(name), file_of(Framing::TfRecord, records.iter().copied()))?;
/// }
/// let paths = Dataset::glob(dir.path().join("a-?.tfrecord"))?;
/// let dataset = Dataset::open(&paths, &OpenOptions::default())?;
/// assert_eq!(dataset.len(), 3);
/// assert_eq!(dataset.locate(2), Some((1, 0)));
/// let record = dataset.get(2)?.unwrap();
/// assert_eq!((record.id, record.offset, &record.data[..]), (2, 0, &b"b0"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    shards: Vec<Shard>,
    /// `bases[s]`: the global id of shard `s`'s first record; one more entry
    /// for the total.
    bases: Vec<u64>,
}

/// Shards of a dataset read as different payloads where one is needed (a
/// spec, a batch decode): which two differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MixedPayloads {
    /// The first shard's name and payload.
    pub first: (String, PayloadKind),
    /// The first shard read as another payload.
    pub other: (String, PayloadKind),
}

impl std::fmt::Display for MixedPayloads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is read as {} but {} as {}: one spec reads one payload; name it with --payload",
            self.other.0, self.other.1, self.first.0, self.first.1
        )
    }
}

impl std::error::Error for MixedPayloads {}

impl Dataset {
    /// Opens every file of `paths`, in the order given, as a [`Shard`]
    /// ([`Shard::open`]: plain or compressed, each with its own framing,
    /// compression and payload).
    pub fn open<P: AsRef<Path>>(
        paths: impl IntoIterator<Item = P>,
        options: &OpenOptions,
    ) -> Result<Dataset, Error> {
        let shards = paths
            .into_iter()
            .map(|p| Shard::open(p, options))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Dataset::from_shards(shards))
    }

    /// Opens the files that match `pattern` ([`glob`](Self::glob)), in name
    /// order.
    pub fn open_glob(pattern: impl AsRef<Path>, options: &OpenOptions) -> Result<Dataset, Error> {
        Dataset::open(Dataset::glob(pattern)?, options)
    }

    /// A dataset of `shards`, in that order.
    pub fn from_shards(shards: Vec<Shard>) -> Dataset {
        let mut bases = Vec::with_capacity(shards.len() + 1);
        let mut total: u64 = 0;
        bases.push(0);
        for shard in &shards {
            total = total.saturating_add(shard.len());
            bases.push(total);
        }
        Dataset { shards, bases }
    }

    /// The regular files that match `pattern`, sorted by name.
    ///
    /// Wildcards are allowed in the last path component only: `*` matches
    /// any run of characters (none included), `?` exactly one; everything
    /// else, and the directory part, is literal. As in a shell, a name
    /// starting with `.` is matched only by a pattern starting with `.`.
    /// Index files are left out: sidecars (`*.rwindex`) by name, unless the
    /// pattern itself ends with `.rwindex`, and every index recordwire
    /// writes (native, DALI text, raw offset table) by its first bytes
    /// ([`index_file_format`](crate::index::index_file_format)), so that a DALI
    /// `FILE.idx` beside `FILE` does not join `train-*`. No match gives an
    /// empty list.
    ///
    /// Errors: `io_error` when the directory cannot be read.
    pub fn glob(pattern: impl AsRef<Path>) -> Result<Vec<PathBuf>, Error> {
        glob_local(pattern.as_ref(), true)
    }

    /// The record files that `pattern` names, for a pattern of any kind:
    /// a local path or a `file://` URL whose last part may hold `*` and
    /// `?` ([`glob`](Self::glob), the names found given back as `file://`
    /// URLs), or a URL of a store (`s3://bucket/train-*`: one listing of the
    /// folder, [`remote::glob`](crate::io::remote::glob)). Index files are
    /// left out as [`glob`](Self::glob) leaves them out, remote ones too (a
    /// sidecar by its name; an object named as `index` writes a DALI or
    /// raw index, `.idx` or `.offsets`, by its first bytes). A pattern
    /// without a wildcard is given back as it is.
    ///
    /// Errors (`usage_error`, [`ErrorKind::Usage`](crate::ErrorKind::Usage)):
    /// no record file matches; a wildcard in an `http(s)://` URL (an HTTP
    /// server cannot be listed; no request is made). `io_error` when the
    /// directory or the folder cannot be listed.
    pub fn expand(pattern: impl AsRef<Path>, options: &OpenOptions) -> Result<Vec<PathBuf>, Error> {
        let pattern = pattern.as_ref();
        let found = matches(pattern, options)?;
        if !has_wildcard(pattern) {
            return Ok(found);
        }
        let storage = storage_of(options);
        let kept: Vec<PathBuf> = found
            .into_iter()
            .filter(|p| index_file_at(p, storage).is_none())
            .collect();
        if kept.is_empty() {
            return Err(Error::usage("no record file matches, only index files")
                .with_file(pattern.display().to_string()));
        }
        Ok(kept)
    }
}

impl Dataset {
    /// Advises the kernel how the records of every shard are about to be
    /// read ([`Shard::advise`]): [`Access::Random`] (the default) for a
    /// shuffled order, [`Access::Sequential`] for file order.
    pub fn advise(&self, access: Access) -> std::io::Result<()> {
        let mut first_error = None;
        for shard in &self.shards {
            if let Err(e) = shard.advise(access) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The order of the dataset's global ids for `spec`. The page modes see
    /// each shard's pages apart: a shard's offsets are shifted past the
    /// previous shard's, to a multiple of the page size, so that no page
    /// holds records of two files. A compressed shard's offsets are those of
    /// its decompressed stream; with a page size of 0, a page is one
    /// checkpoint span of a compressed shard (inflated once however its
    /// records are shuffled) and 1 MiB of a plain one.
    ///
    /// ```
    /// use recordwire::frame::{file_of, Framing};
    /// use recordwire::dataset::Dataset;
    /// use recordwire::io::OpenOptions;
    /// use recordwire::order::{Mode, OrderSpec};
    ///
    /// let dir = tempfile::tempdir()?;
    /// for (name, n) in [("a", 3), ("b", 4)] {
    ///     let records = vec![&[7u8; 1000][..]; n];
    ///     std::fs::write(dir.path().join(name), file_of(Framing::TfRecord, records))?;
    /// }
    /// let dataset = Dataset::open_glob(dir.path().join("*"), &OpenOptions::default())?;
    /// let spec = OrderSpec { mode: Mode::PageAware { page_size: 4096 }, seed: 3, ..OrderSpec::default() };
    /// let epoch: Vec<u64> = dataset.order(spec)?.epoch(0).iter().collect();
    /// let mut sorted = epoch.clone();
    /// sorted.sort_unstable();
    /// assert_eq!(sorted, (0..7).collect::<Vec<u64>>());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn order(&self, spec: OrderSpec) -> Result<Order, OrderError> {
        order_of(&self.shards, spec)
    }

    /// The span size (`span_size` storage option) of its remote shards
    /// read as stored (not compressed): the page size at which a page order
    /// reads each span of them once ([`keep_spans`](Self::keep_spans));
    /// `None` when it has none.
    #[cfg(feature = "remote")]
    pub fn span_size(&self) -> Option<u64> {
        self.shards
            .iter()
            .filter_map(|s| s.source().as_remote())
            .map(|r| r.span_size())
            .max()
    }

    /// Makes every remote shard read as stored keep its spans in one cache
    /// of `spans` spans (of [`span_size`](Self::span_size) bytes) shared by
    /// all of them, and read through it: each read fetches the whole spans
    /// it falls in (FORMAT §11.5). A page order with `page_size` the span
    /// size and a window of `w` pages then fetches each span once per epoch
    /// with `spans ≥ w + 1`, keeping at most `spans` spans in all, however
    /// many shards there are. The cache, or `None` when there is no such
    /// shard (local and compressed shards are not touched).
    #[cfg(feature = "remote")]
    pub fn keep_spans(&self, spans: u64) -> Option<crate::io::remote::SpanCache> {
        let size = self.span_size()?;
        let cache = crate::io::remote::SpanCache::new(spans.max(1).saturating_mul(size));
        for remote in self.shards.iter().filter_map(|s| s.source().as_remote()) {
            remote.keep_spans_in(&cache);
        }
        Some(cache)
    }

    /// The total number of records, in O(1).
    pub fn len(&self) -> u64 {
        self.bases.last().copied().unwrap_or(0)
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shards, in id order.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// The global id of each shard's first record, then the total: one more
    /// entry than there are shards.
    pub fn bases(&self) -> &[u64] {
        &self.bases
    }

    /// The shard that holds global record `global`, and the record's local
    /// id in it (a binary search over the bases); `None` past the end.
    pub fn locate(&self, global: u64) -> Option<(usize, u64)> {
        if global >= self.len() {
            return None;
        }
        // The last shard whose base is <= global: it holds `global`, since
        // the next base is > global (empty shards share their base with the
        // next one and are passed over).
        let shard = self
            .bases
            .partition_point(|&b| b <= global)
            .checked_sub(1)?;
        Some((shard, global - self.bases[shard]))
    }

    /// Global record `global` ([`Shard::get`] in its shard), owning its
    /// bytes; `Ok(None)` past the end. The record's `id` is the global id;
    /// its offsets are in its shard's stream. Errors carry the shard's file
    /// name and the local id.
    pub fn get(&self, global: u64) -> Result<Option<OwnedRecord>, Error> {
        let Some((shard, local)) = self.locate(global) else {
            return Ok(None);
        };
        let record = self.shards[shard].get(local)?;
        Ok(record.map(|r| OwnedRecord { id: global, ..r }))
    }

    /// Global record `global` with other read options than its file's.
    pub fn get_with(&self, global: u64, opts: &ReadOptions) -> Result<Option<OwnedRecord>, Error> {
        let Some((shard, local)) = self.locate(global) else {
            return Ok(None);
        };
        let record = self.shards[shard].get_with(local, opts)?;
        Ok(record.map(|r| OwnedRecord { id: global, ..r }))
    }

    /// Global record `global` borrowed from its shard's memory
    /// ([`Shard::get_ref`]); `Ok(None)` past the end, or when its shard's
    /// bytes are not in memory (a compressed file, positioned reads): use
    /// [`get`](Self::get) for those.
    pub fn get_ref(&self, global: u64) -> Result<Option<crate::frame::Record<'_>>, Error> {
        let Some((shard, local)) = self.locate(global) else {
            return Ok(None);
        };
        let record = self.shards[shard].get_ref(local)?;
        Ok(record.map(|r| crate::frame::Record { id: global, ..r }))
    }

    /// Whether every shard's bytes are in memory (mapped or read plain
    /// files), so that [`get_ref`](Self::get_ref) serves every id.
    pub fn all_in_memory(&self) -> bool {
        self.shards.iter().all(|s| s.bytes().is_some())
    }

    /// Hints that the records of global ids `ids` will be read soon
    /// ([`Shard::prefetch`]): what a loop over an order calls for its next
    /// batch while it decodes the current one. Returns at once.
    pub fn prefetch(&self, ids: &[u64]) {
        let mut per_shard: Vec<Vec<u64>> = vec![Vec::new(); self.shards.len()];
        for &id in ids {
            if let Some((s, local)) = self.locate(id) {
                per_shard[s].push(local);
            }
        }
        for (shard, local) in self.shards.iter().zip(&per_shard) {
            if !local.is_empty() {
                shard.prefetch(local);
            }
        }
    }

    /// Serves a batch: `f(position, record)` for each id of `ids`
    /// (`position` its place in `ids`; `None` past the end), shard by shard
    /// and in offset order within each ([`Shard::get_many`]: each page or
    /// span read once). The first damaged record ends the batch with its
    /// error. `scratch` is reused from batch to batch.
    pub fn get_many(
        &self,
        ids: &[u64],
        scratch: &mut Scratch,
        mut f: impl FnMut(usize, Option<OwnedRecord>),
    ) -> Result<(), Error> {
        if let [shard] = &self.shards[..] {
            return shard.get_many(ids, scratch, f);
        }
        let mut grouped = std::mem::take(&mut scratch.grouped);
        let mut locals = std::mem::take(&mut scratch.locals);
        grouped.iter_mut().for_each(Vec::clear);
        grouped.resize_with(self.shards.len(), Vec::new);
        for (pos, &g) in ids.iter().enumerate() {
            match self.locate(g) {
                Some((k, local)) => grouped[k].push((pos, local)),
                None => f(pos, None),
            }
        }
        let mut result = Ok(());
        for (k, wanted) in grouped.iter().enumerate() {
            if wanted.is_empty() {
                continue;
            }
            locals.clear();
            locals.extend(wanted.iter().map(|w| w.1));
            let base = self.bases[k];
            result = self.shards[k].get_many(&locals, scratch, |p, r| {
                f(
                    wanted[p].0,
                    r.map(|r| OwnedRecord {
                        id: base + r.id,
                        ..r
                    }),
                )
            });
            if result.is_err() {
                break;
            }
        }
        scratch.grouped = grouped;
        scratch.locals = locals;
        result
    }

    /// The payload every shard is read as ([`Shard::payload`]), when there
    /// is one: `None` for no shards, [`MixedPayloads`] when two differ.
    pub fn payload(&self) -> Result<Option<PayloadKind>, MixedPayloads> {
        let Some(first) = self.shards.first() else {
            return Ok(None);
        };
        let kind = first.payload();
        for shard in &self.shards[1..] {
            let other = shard.payload();
            if other != kind {
                return Err(MixedPayloads {
                    first: (first.name().to_string(), kind),
                    other: (shard.name().to_string(), other),
                });
            }
        }
        Ok(Some(kind))
    }

    /// Reads every shard as `payload` instead of detecting it.
    #[must_use]
    pub fn with_payload(self, payload: PayloadKind) -> Dataset {
        let shards = self
            .shards
            .into_iter()
            .map(|s| s.with_payload(payload))
            .collect();
        Dataset::from_shards(shards)
    }
}

/// A dataset lends records to the batch decoder
/// ([`Decoder::decode_ids`](crate::batch::Decoder::decode_ids)): those of
/// its shards whose bytes are in memory.
impl crate::batch::RecordSource for Dataset {
    fn len(&self) -> u64 {
        Dataset::len(self)
    }

    fn get_ref(&self, id: u64) -> Result<Option<crate::frame::Record<'_>>, Error> {
        Dataset::get_ref(self, id)
    }

    fn file_of(&self, id: u64) -> Option<&str> {
        self.locate(id).map(|(k, _)| self.shards[k].name())
    }

    fn owner(&self, id: u64) -> Option<&bytes::Bytes> {
        self.locate(id).and_then(|(k, _)| self.shards[k].bytes())
    }
}
