//! Many compressed files as one id space, read through their checkpoint
//! indexes: what [`Dataset`](crate::index::Dataset) is to plain files.

use std::path::Path;

use super::{GzCache, GzShard};
use crate::error::Error;
use crate::frame::Record;
use crate::io::OpenOptions;
use crate::order::{Order, OrderError, OrderSpec};

/// GZIP/ZLIB record files ("shards") as one id space: the records of the
/// first file, then those of the second, and so on, each read by inflating
/// from its file's nearest checkpoint ([`GzShard`]). Counts and orders need
/// no inflating at all.
///
/// Reads take a [`GzCaches`] (one inflate cache per shard, kept by the
/// reader, e.g. one per thread), so that reading in file order inflates each
/// span once.
///
/// ```
/// use recordwire::encode::{RecordWriter, WriterOptions};
/// use recordwire::frame::Framing;
/// use recordwire::index::{GzCaches, GzDataset};
///
/// let dir = tempfile::tempdir()?;
/// let mut paths = Vec::new();
/// for shard in 0..3 {
///     let path = dir.path().join(format!("train-{shard}.tfrecord.gz"));
///     let mut w = RecordWriter::create(&path, WriterOptions::new(Framing::TfRecord).with_gzip_blocks(1024))?;
///     for i in 0..100 {
///         w.write_record(format!("shard {shard} record {i}").as_bytes())?;
///     }
///     w.finish()?;
///     paths.push(path);
/// }
/// let ds = GzDataset::open(&paths, &Default::default())?;
/// assert_eq!(ds.len(), 300);
/// let mut caches = GzCaches::default();
/// assert_eq!(ds.get(250, &mut caches)?.unwrap().data, b"shard 2 record 50");
///
/// let mut got = Vec::new();
/// ds.get_many(&[299, 0, 150], &mut caches, &mut Vec::new(), |pos, r| {
///     got.push((pos, r.unwrap().data.to_vec()));
/// })?;
/// got.sort();
/// assert_eq!(got[1], (1, b"shard 0 record 0".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct GzDataset {
    shards: Vec<GzShard>,
    /// `bases[k]`: the global id of shard `k`'s first record; then the total.
    bases: Vec<u64>,
}

/// The inflate caches of a reader of a [`GzDataset`]: one per shard, made
/// as they are first needed.
#[derive(Debug, Default)]
pub struct GzCaches {
    caches: Vec<GzCache>,
    /// `(position, local id)` of each shard's ids in a `get_many`.
    grouped: Vec<Vec<(usize, u64)>>,
    locals: Vec<u64>,
}

impl GzCaches {
    fn for_shard(&mut self, k: usize) -> &mut GzCache {
        if self.caches.len() <= k {
            self.caches.resize_with(k + 1, GzCache::new);
        }
        &mut self.caches[k]
    }
}

impl GzDataset {
    /// Opens every file ([`GzShard::open`]: its checkpoint sidecar when
    /// current, else built); errors carry the file name.
    pub fn open<P: AsRef<Path>>(
        paths: impl IntoIterator<Item = P>,
        options: &OpenOptions,
    ) -> Result<GzDataset, Error> {
        let shards = paths
            .into_iter()
            .map(|p| GzShard::open(p, options))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GzDataset::from_shards(shards))
    }

    /// A dataset of `shards`, in this order.
    pub fn from_shards(shards: Vec<GzShard>) -> GzDataset {
        let mut bases = Vec::with_capacity(shards.len() + 1);
        let mut total = 0u64;
        bases.push(0);
        for s in &shards {
            total = total.saturating_add(s.len());
            bases.push(total);
        }
        GzDataset { shards, bases }
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
    pub fn shards(&self) -> &[GzShard] {
        &self.shards
    }

    /// The shard holding global id `global`, and the id within it.
    pub fn locate(&self, global: u64) -> Option<(usize, u64)> {
        if global >= self.len() {
            return None;
        }
        let k = self.bases.partition_point(|&b| b <= global) - 1;
        Some((k, global - self.bases[k]))
    }

    /// Record `global` (its `id` global too), inflated into the shard's
    /// cache in `caches`; `Ok(None)` past the end.
    pub fn get<'s>(
        &'s self,
        global: u64,
        caches: &'s mut GzCaches,
    ) -> Result<Option<Record<'s>>, Error> {
        let Some((k, local)) = self.locate(global) else {
            return Ok(None);
        };
        let base = self.bases[k];
        Ok(self.shards[k]
            .get(local, caches.for_shard(k))?
            .map(|r| Record {
                id: base + r.id,
                ..r
            }))
    }

    /// Serves a batch: `f(position, record)` for each id (`None` past the
    /// end), shard by shard and in offset order within each (each span
    /// inflated once). The first damaged record ends the batch with its
    /// error.
    pub fn get_many(
        &self,
        ids: &[u64],
        caches: &mut GzCaches,
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize, Option<Record<'_>>),
    ) -> Result<(), Error> {
        let mut grouped = std::mem::take(&mut caches.grouped);
        let mut locals = std::mem::take(&mut caches.locals);
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
            result = self.shards[k].get_many(&locals, caches.for_shard(k), scratch, |p, r| {
                f(
                    wanted[p].0,
                    r.map(|r| Record {
                        id: base + r.id,
                        ..r
                    }),
                )
            });
            if result.is_err() {
                break;
            }
        }
        caches.grouped = grouped;
        caches.locals = locals;
        result
    }

    /// The order of the records for `spec` ([`Order::of_files`] over the
    /// decompressed streams: the page modes group records by pages of each
    /// file's decompressed stream, or, with a page size of 0, by checkpoint
    /// span, as [`GzIndex::order`](super::GzIndex::order) does).
    pub fn order(&self, spec: OrderSpec) -> Result<Order, OrderError> {
        let inputs: Vec<_> = self
            .shards
            .iter()
            .map(|s| s.index().order_inputs(spec))
            .collect();
        let spec = inputs.first().map_or(spec, |i| i.2);
        let files: Vec<(&[u64], u64)> = inputs.iter().map(|i| (&i.0[..], i.1)).collect();
        Order::of_files(&files, spec)
    }
}
