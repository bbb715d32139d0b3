//! [`Decoder`]: batched decoding on several threads, and from a
//! [`RecordSource`] (a dataset, by id) or any reader's iterator.

use bytes::Bytes;

use super::column::{Batch, PartWindows};
use super::decode::{decode, decode_rows, Input};
use super::spec::Spec;
use crate::error::{Error, ErrorKind};
use crate::frame::{OwnedRecord, Record};

/// A batch decoder with a thread count: batches are split into as many
/// contiguous parts, decoded at once, and joined; the result is the same as
/// on one thread.
#[derive(Debug)]
pub struct Decoder {
    threads: usize,
    pool: Option<rayon::ThreadPool>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(1)
    }
}

/// Batches smaller than this many records per thread are decoded on fewer threads.
const MIN_ROWS_PER_THREAD: usize = 16;
/// The most parts a batch is split into.
const MAX_PARTS: usize = 64;

impl Decoder {
    /// A decoder using `threads` threads (0 or 1: the calling thread only).
    /// More than one starts a pool of that many threads, kept for the
    /// decoder's life.
    pub fn new(threads: usize) -> Decoder {
        let pool = (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .ok()
            })
            .flatten();
        Decoder {
            threads: if pool.is_some() { threads } else { 1 },
            pool,
        }
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Decodes `records` into `batch` (see [`decode`]).
    pub fn decode<'a, R: Input<'a>>(
        &self,
        records: &[R],
        spec: &'a Spec,
        batch: &mut Batch<'a>,
    ) -> Result<(), Error> {
        let parts = self
            .threads
            .min(records.len() / MIN_ROWS_PER_THREAD)
            .clamp(1, MAX_PARTS);
        let Some(pool) = self.pool.as_ref().filter(|_| parts > 1) else {
            return decode(records, spec, batch);
        };
        let chunk = records.len().div_ceil(parts);
        let mut extra = std::mem::take(&mut batch.parts);
        extra.resize_with(parts - 1, Batch::new);
        let mut results: [Option<Error>; MAX_PARTS] = std::array::from_fn(|_| None);
        let results = &mut results[..parts];
        // The placed columns (numeric, fixed length: each row has its place)
        // are sized for every row, and each part writes its rows into its
        // window of them: no copy at the join.
        let mut placed = batch.take_placed(spec, records.len());
        // One hand-off to the pool for the decode and the join: a second
        // `install` would wake a worker that may have gone to sleep since.
        let failed = pool.install(|| {
            let columns = batch.columns.len();
            let mut windows = batch.windows.take();
            windows.resize_with(parts * columns, || None);
            for (c, buf) in placed.iter_mut().enumerate() {
                let Some(row_bytes) = batch.columns[c].placed_row_bytes() else {
                    continue;
                };
                for (k, w) in buf.as_bytes_mut().chunks_mut(chunk * row_bytes).enumerate() {
                    windows[k * columns + c] = Some(w);
                }
            }
            let parted = (&mut windows[..], columns);
            run_parts(records, chunk, 0, spec, batch, &mut extra, results, parted);
            batch.windows.keep(windows);
            // The parts up to the first that failed (its rows before the
            // failure included) are joined; part `k` is `extra[k - 1]`.
            let failed = results.iter().position(Option::is_some);
            let joined = failed.unwrap_or(parts - 1);
            let rows = batch.rows + extra[..joined].iter().map(|p| p.rows).sum::<usize>();
            batch.restore_placed(&mut placed, rows);
            batch.join_finish(&extra[..joined], spec);
            failed.and_then(|k| results[k].take())
        });
        batch.parts = extra;
        failed.map_or(Ok(()), Err)
    }
}

impl Decoder {
    /// Decodes records `ids` of `dataset`, in the order given (see
    /// [`decode`]), borrowing from the shards' memory; each record's errors
    /// name its file and its global id. Every record must be in memory
    /// (for a dataset: a mapped or read plain file; `Dataset::all_in_memory`
    /// says whether all are): the records of a compressed shard, or one read
    /// with positioned reads, are read with `Dataset::get_many` and decoded
    /// with [`decode_owned`](Self::decode_owned).
    /// An id past the end is an [`id_out_of_range`](ErrorKind::IdOutOfRange)
    /// error; a record that cannot be read (a bad CRC, say) ends the batch
    /// there: the records before it are decoded and the read error returned.
    ///
    /// ```
    /// # use recordwire::batch::{Batch, DType, Decoder, FeatureSpec, Spec};
    /// # use recordwire::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("train.tfrecord");
    /// # let opts = WriterOptions::new(recordwire::frame::Framing::TfRecord);
    /// # let mut w = RecordWriter::create(&path, opts)?;
    /// # for i in 0..10i64 {
    /// #     let f: Features = [("label", Feature::Int64(vec![i]))].into_iter().collect();
    /// #     w.write_record(&Example::with_features(f).to_bytes()?)?;
    /// # }
    /// # w.finish()?;
    /// let dataset = recordwire::dataset::Dataset::open(&[&path], &Default::default())?;
    /// let spec = Spec::example(vec![FeatureSpec::fixed_len("label", DType::Int64, &[])])?;
    /// let mut batch = Batch::new();
    /// Decoder::new(1).decode_ids(&dataset, &[7, 2, 9], &spec, &mut batch)?;
    /// assert_eq!(batch.column("label").unwrap().values::<i64>().unwrap(), [7, 2, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode_ids<'a>(
        &self,
        dataset: &'a (impl RecordSource + ?Sized),
        ids: &[u64],
        spec: &'a Spec,
        batch: &mut Batch<'a>,
    ) -> Result<(), Error> {
        let mut records = std::mem::take(&mut batch.records);
        records.clear();
        let mut failed = None;
        for &id in ids {
            match dataset.get_ref(id) {
                Ok(Some(r)) => records.push(r),
                Ok(None) if id < dataset.len() => {
                    failed = Some(not_in_memory(dataset, id));
                    break;
                }
                Ok(None) => {
                    let len = dataset.len();
                    failed = Some(Error::new(ErrorKind::IdOutOfRange { id, len }, 0));
                    break;
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let r = self.decode(&records, spec, batch);
        batch.records = records;
        r?;
        failed.map_or(Ok(()), Err)
    }

    /// Decodes `records` (read with `Dataset::get_many`, say), in the order
    /// given (see [`decode`]), into a batch that owns its values: a
    /// borrowing bytes column's values are shares of the records' bytes
    /// ([`Batch::into_owned`]), so the batch outlives `records` and can go
    /// to another thread.
    pub fn decode_owned(
        &self,
        records: &[OwnedRecord],
        spec: &Spec,
        batch: &mut Batch<'static>,
    ) -> Result<(), Error> {
        let mut b: Batch<'_> = std::mem::take(batch).recycle();
        let mut borrowed = std::mem::take(&mut b.records);
        borrowed.extend(records.iter().map(OwnedRecord::as_record));
        let r = self.decode(&borrowed, spec, &mut b);
        b.records = borrowed;
        *batch = b.into_owned(|row| records.get(row).map(|r| &r.data));
        r
    }

    /// [`decode_ids`](Self::decode_ids) into a batch that owns its values
    /// (see [`Batch::into_owned`]): each borrowing bytes value is a share of
    /// the buffer its record lies in ([`RecordSource::owner`]), so the
    /// batch outlives `source` and can go to another thread.
    pub fn decode_ids_owned<S: RecordSource + ?Sized>(
        &self,
        source: &S,
        ids: &[u64],
        spec: &Spec,
        batch: &mut Batch<'static>,
    ) -> Result<(), Error> {
        let mut b: Batch<'_> = std::mem::take(batch).recycle();
        let r = self.decode_ids(source, ids, spec, &mut b);
        *batch = b.into_owned(|row| ids.get(row).and_then(|&id| source.owner(id)));
        r
    }

    /// Decodes up to `max` records from `records` (a reader's iterator, say);
    /// returns how many were taken. A read error ends the batch there, as in
    /// [`decode_ids`](Self::decode_ids).
    pub fn decode_from<'a, I>(
        &self,
        records: &mut I,
        max: usize,
        spec: &'a Spec,
        batch: &mut Batch<'a>,
    ) -> Result<usize, Error>
    where
        I: Iterator<Item = Result<Record<'a>, Error>>,
    {
        let mut taken = std::mem::take(&mut batch.records);
        taken.clear();
        let mut failed = None;
        for r in records.by_ref() {
            match r {
                Ok(r) => taken.push(r),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
            if taken.len() == max {
                break;
            }
        }
        let n = taken.len();
        let r = self.decode(&taken, spec, batch);
        batch.records = taken;
        r?;
        failed.map_or(Ok(n), Err)
    }
}

/// Decodes chunk `k` into `first` and the following chunks into `rest`, in
/// parallel (by halves, with `rayon::join`, which needs no allocation);
/// `windows` holds each of these parts' windows, `columns` a part.
#[allow(clippy::too_many_arguments)]
fn run_parts<'a, R: Input<'a>>(
    records: &[R],
    chunk: usize,
    k: usize,
    spec: &'a Spec,
    first: &mut Batch<'a>,
    rest: &mut [Batch<'a>],
    results: &mut [Option<Error>],
    (windows, columns): (PartWindows<'_, '_>, usize),
) {
    if rest.is_empty() {
        let start = (k * chunk).min(records.len());
        let end = (start + chunk).min(records.len());
        let r = decode_rows(&records[start..end], start, spec, first, windows);
        results[0] = r.err();
        return;
    }
    let half = rest.len().div_ceil(2);
    let (left_rest, right) = rest.split_at_mut(half - 1);
    let (right_first, right_rest) = right.split_first_mut().unwrap_or_else(|| unreachable!());
    let (left_results, right_results) = results.split_at_mut(half);
    let (left_windows, right_windows) = windows.split_at_mut(half * columns);
    rayon::join(
        || {
            let w = (left_windows, columns);
            run_parts(records, chunk, k, spec, first, left_rest, left_results, w)
        },
        || {
            let w = (right_windows, columns);
            run_parts(
                records,
                chunk,
                k + half,
                spec,
                right_first,
                right_rest,
                right_results,
                w,
            )
        },
    );
}

/// Where [`Decoder::decode_ids`] takes records from: records by id,
/// borrowed for as long as the source is (a `Dataset` of the `index`
/// module is one). The batch decoder sits beside the views: it knows records
/// and specs, not files.
pub trait RecordSource {
    /// The number of records.
    fn len(&self) -> u64;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `id`, borrowed; `Ok(None)` past the end, or when the source
    /// cannot lend it (its bytes are not in memory).
    fn get_ref(&self, id: u64) -> Result<Option<Record<'_>>, Error>;

    /// The name of the file record `id` is in, for errors.
    fn file_of(&self, id: u64) -> Option<&str>;

    /// The buffer record `id` lies in, when it is in memory as [`Bytes`]
    /// (a file's map): what an owned batch's values share
    /// ([`Decoder::decode_ids_owned`]). `None` (the default) makes them
    /// copies.
    fn owner(&self, id: u64) -> Option<&Bytes> {
        let _ = id;
        None
    }
}

/// The error for a record that `decode_ids` cannot borrow.
fn not_in_memory(dataset: &(impl RecordSource + ?Sized), id: u64) -> Error {
    let file = dataset.file_of(id).unwrap_or_default().to_string();
    Error::io(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the record's file is not in memory (compressed, or read with positioned reads): \
         read it with Dataset::get_many and decode it with Decoder::decode_owned",
    ))
    .with_record(id)
    .with_file(file)
}
