//! An in-process loader: batches of an epoch's order read and decoded
//! ahead on threads, delivered in order, in a pool of reused buffers.
//!
//! [`Loader`] is an iterator of owned, decoded batches ([`LoadedBatch`]) for
//! a training loop in Rust (a burn or candle user's), and the engine under
//! the Python package's `recordwire.Loader`. The pipeline:
//!
//! 1. the [`Order`] of the epoch gives the ids, cut into batches of
//!    `batch_size` (this rank's part; the last batch shorter unless
//!    `drop_last`);
//! 2. `readers` threads each claim the next batch not yet claimed, read its
//!    records (borrowed from a file's memory; read by
//!    [`Dataset::get_many`], which coalesces ranged reads of a remote
//!    object and inflates each span of a compressed one once) and decode
//!    them (at most `threads` decodes at once) into a batch from the pool;
//! 3. decoded batches wait in a reorder window; the consumer takes them in
//!    batch order, whichever thread finished first. At most `prefetch`
//!    batches are decoded ahead of the consumer (plus those being
//!    decoded), so the threads stop when the consumer stops taking.
//!
//! Errors arrive in order, at the batch they belong to: the batches before
//! it are delivered first. An error ends the run (the threads stop), and
//! the position moves past the failed batch: the next call to
//! [`next`](Iterator::next) starts a new run there.
//!
//! The iterator yields one epoch, then `None` once, and moves to the next
//! epoch: `for batch in &mut loader` is one epoch, and the next loop the
//! next one (whose shuffle differs), unless [`Loader::set_epoch`] says
//! otherwise. [`Loader::state`] and [`Loader::resume`] stop and resume
//! mid-epoch exactly.
//!
//! # Memory
//! A delivered batch returns to the pool when it is dropped (or when the
//! last numpy array over it dies, in Python). The pool keeps up to
//! `prefetch + readers + 2` free batches; when none is free (the consumer
//! holds many), a new batch is made rather than making the decoder wait,
//! and a batch returned to a full pool is dropped. So memory stays flat
//! over an epoch, at about `prefetch + readers + held` batches, and a warm
//! epoch allocates no new batch memory when every batch fits the memory
//! its buffers already have ([`PoolStats`] counts it).
//!
//! # Threads and processes
//! The threads live as long as a run: [`Loader::close`], dropping the
//! loader, [`set_epoch`](Loader::set_epoch), [`resume`](Loader::resume) and
//! the end of an epoch stop them and wait for them. A process forked while
//! a run is going has none of its threads: the loader in the child refuses
//! to go on (an `io_error` that says so) instead of waiting forever.
//!
//! ```
//! use std::sync::Arc;
//! use recordwire::batch::{DType, FeatureSpec, Spec};
//! use recordwire::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
//! use recordwire::dataset::Dataset;
//! use recordwire::loader::{Loader, LoaderOptions};
//!
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("train.tfrecord");
//! # let mut w = RecordWriter::create(&path, WriterOptions::new(recordwire::frame::Framing::TfRecord))?;
//! # for i in 0..10i64 {
//! #     let f: Features = [("label", Feature::Int64(vec![i]))].into_iter().collect();
//! #     w.write_record(&Example::with_features(f).to_bytes()?)?;
//! # }
//! # w.finish()?;
//! let dataset = Arc::new(Dataset::open(&[&path], &Default::default())?);
//! let spec = Spec::example(vec![FeatureSpec::fixed_len("label", DType::Int64, &[])])?;
//! let mut loader = Loader::new(dataset, spec, LoaderOptions::new(4).threads(2))?;
//! assert_eq!(loader.len(), 3); // 4 + 4 + 2
//! let mut seen = Vec::new();
//! for batch in &mut loader {
//!     let batch = batch?;
//!     let labels = batch.column("label").unwrap().values::<i64>().unwrap();
//!     assert_eq!(labels.len(), batch.ids().len());
//!     seen.extend_from_slice(labels);
//! }
//! seen.sort();
//! assert_eq!(seen, (0..10).collect::<Vec<i64>>());
//! assert_eq!(loader.state().epoch, 1); // the next loop is epoch 1
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod pool;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

pub use pool::PoolStats;
use pool::{Pool, Slot};

use crate::batch::{Batch, Decoder, Spec};
use crate::dataset::{Dataset, MixedPayloads, Scratch};
use crate::error::Error;
use crate::frame::OwnedRecord;
use crate::order::{Order, OrderError, OrderSpec};

/// How a [`Loader`] cuts, orders and reads ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoaderOptions {
    /// Records per batch (the last batch of an epoch may be shorter).
    pub batch_size: usize,
    /// The order of each epoch: mode, seed, rank and world, worker split
    /// and tail (see [`OrderSpec`]).
    pub order: OrderSpec,
    /// Leaves out the last batch of an epoch when it is short.
    pub drop_last: bool,
    /// Decoded batches kept ready ahead of the consumer (at least 1).
    pub prefetch: usize,
    /// Batches decoded at once (decode threads); 0: the machine's cores,
    /// at most 8.
    pub threads: usize,
    /// Batches read at once (each on a thread of its own, which then
    /// decodes it when a decode thread is free); 0: `threads` when every
    /// shard is in memory, else `max(threads, 8)`, so that reads of remote
    /// or compressed shards overlap.
    pub readers: usize,
}

impl LoaderOptions {
    /// Batches of `batch_size`, a shuffled order (seed 0, one rank), 4
    /// batches ready ahead, threads and readers chosen by the machine.
    pub fn new(batch_size: usize) -> LoaderOptions {
        LoaderOptions {
            batch_size,
            order: OrderSpec::default(),
            drop_last: false,
            prefetch: 4,
            threads: 0,
            readers: 0,
        }
    }

    /// With `order` as the order of each epoch.
    #[must_use]
    pub fn order(mut self, order: OrderSpec) -> Self {
        self.order = order;
        self
    }

    /// With the short last batch left out (`true`) or kept.
    #[must_use]
    pub fn drop_last(mut self, drop_last: bool) -> Self {
        self.drop_last = drop_last;
        self
    }

    /// With `prefetch` batches kept ready ahead.
    #[must_use]
    pub fn prefetch(mut self, prefetch: usize) -> Self {
        self.prefetch = prefetch;
        self
    }

    /// With `threads` decode threads (0: chosen by the machine).
    #[must_use]
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// With `readers` batches read at once (0: chosen by the data).
    #[must_use]
    pub fn readers(mut self, readers: usize) -> Self {
        self.readers = readers;
        self
    }
}

/// Why a [`Loader`] cannot be made, or resumed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoaderError {
    /// `batch_size` or `prefetch` is 0.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// The order cannot be made (a rank not below the world, say).
    #[error(transparent)]
    Order(#[from] OrderError),
    /// The shards are read as different payloads, which one spec cannot
    /// decode.
    #[error(transparent)]
    MixedPayloads(#[from] MixedPayloads),
    /// A state to resume from is past the end of its epoch.
    #[error("the state's batch {batch} is past the end of an epoch of {len} batches")]
    StateOutOfRange {
        /// The state's batch.
        batch: u64,
        /// Batches per epoch.
        len: u64,
    },
}

/// Where a loader stands: the next batch it delivers is batch `batch` of
/// epoch `epoch` (counting from 0). A state is meaningful with the same
/// dataset, spec and [`LoaderOptions`] (order and batch size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LoaderState {
    /// The epoch.
    pub epoch: u64,
    /// The next batch of that epoch.
    pub batch: u64,
}

/// One decoded batch, owning its memory: it derefs to the [`Batch`] (its
/// columns), names the ids of its rows, and goes back to the loader's pool
/// when dropped.
pub struct LoadedBatch {
    slot: Slot,
    /// Where the batch goes back to (`None` once taken out for good).
    pool: Option<Arc<Pool>>,
    epoch: u64,
    index: u64,
}

impl LoadedBatch {
    /// The global record ids of the rows, in row order.
    pub fn ids(&self) -> &[u64] {
        &self.slot.ids
    }

    /// The epoch it belongs to.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Its place in the epoch (batch `index`, from 0).
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The batch, writable in place (see
    /// [`Column::buffers_mut`](crate::batch::Column::buffers_mut)).
    pub fn batch_mut(&mut self) -> &mut Batch<'static> {
        &mut self.slot.batch
    }

    /// The batch, taken out of the pool for good (the pool makes another
    /// when it needs one).
    pub fn into_batch(mut self) -> Batch<'static> {
        self.pool = None;
        std::mem::take(&mut self.slot.batch)
    }
}

impl std::ops::Deref for LoadedBatch {
    type Target = Batch<'static>;

    fn deref(&self) -> &Batch<'static> {
        &self.slot.batch
    }
}

impl std::fmt::Debug for LoadedBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedBatch")
            .field("epoch", &self.epoch)
            .field("index", &self.index)
            .field("rows", &self.rows())
            .finish()
    }
}

impl Drop for LoadedBatch {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.put(std::mem::take(&mut self.slot));
        }
    }
}

/// A page order over remote shards whose pages are their spans reads
/// each span once per epoch when the spans are kept while their records
/// are read: a cache shared by the shards, of twice the window plus the
/// spans that the batches being read and kept ready ahead can reach
/// (`readers + prefetch` batches of average records), plus one; unless the
/// shards already keep spans by their own storage options. Any other order
/// reads each batch's records as they are (coalesced where they touch or
/// lie close, FORMAT §11.3).
#[cfg(feature = "remote")]
fn keep_spans_for(dataset: &Dataset, options: &LoaderOptions, readers: usize) {
    use crate::order::Mode;
    let mode = options.order.mode;
    let window = match mode {
        Mode::PageAware { .. } => 1,
        Mode::QuasiRandom { window, .. } => u64::from(window),
        Mode::Sequential | Mode::Shuffle => return,
    };
    let Some(span) = dataset.span_size() else {
        return;
    };
    let remotes = || {
        dataset
            .shards()
            .iter()
            .filter_map(|s| s.source().as_remote())
    };
    if mode.page_size() != Some(span) || remotes().any(|r| r.keeps_spans()) {
        return;
    }
    let bytes: u64 = dataset.shards().iter().map(|s| s.data_len()).sum();
    let record = bytes / dataset.len().max(1);
    let ahead = (readers + options.prefetch + 1) as u64 * options.batch_size as u64 * record;
    dataset.keep_spans(2 * window + ahead.div_ceil(span) + 1);
}

/// What every thread of every run shares.
struct Shared {
    dataset: Arc<Dataset>,
    spec: Spec,
    order: Order,
    batch_size: usize,
    /// Batches per epoch.
    batches: u64,
    in_memory: bool,
    pool: Arc<Pool>,
}

/// A loader: see the [module docs](self).
pub struct Loader {
    shared: Arc<Shared>,
    options: LoaderOptions,
    threads: usize,
    readers: usize,
    state: LoaderState,
    run: Option<Run>,
    /// Time `next_batch` spent blocked on batches not yet made.
    waited: std::time::Duration,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("options", &self.options)
            .field("threads", &self.threads)
            .field("readers", &self.readers)
            .field("state", &self.state)
            .field("batches", &self.shared.batches)
            .field("running", &self.run.is_some())
            .finish()
    }
}

impl Loader {
    /// A loader of `dataset`'s records decoded by `spec`, in batches cut
    /// from `options.order`'s epochs. Starts no thread: the first
    /// [`next`](Iterator::next) does.
    ///
    /// # Errors
    /// A zero `batch_size` or `prefetch`, an order that cannot be made, or
    /// shards of different payloads ([`LoaderError`]).
    pub fn new(
        dataset: Arc<Dataset>,
        spec: Spec,
        options: LoaderOptions,
    ) -> Result<Loader, LoaderError> {
        if options.batch_size == 0 {
            return Err(LoaderError::Zero("batch_size"));
        }
        if options.prefetch == 0 {
            return Err(LoaderError::Zero("prefetch"));
        }
        dataset.payload()?;
        let order = dataset.order(options.order)?;
        let in_memory = dataset.all_in_memory();
        let threads = match options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
            n => n,
        };
        let readers = match options.readers {
            0 if in_memory => threads,
            0 => threads.max(8),
            n => n.max(threads),
        };
        #[cfg(feature = "remote")]
        keep_spans_for(&dataset, &options, readers);
        let per_epoch = order.len();
        let size = options.batch_size as u64;
        let batches = if options.drop_last {
            per_epoch / size
        } else {
            per_epoch.div_ceil(size)
        };
        let shared = Arc::new(Shared {
            dataset,
            spec,
            order,
            batch_size: options.batch_size,
            batches,
            in_memory,
            pool: Pool::new(options.prefetch + readers + 2),
        });
        Ok(Loader {
            shared,
            options,
            threads,
            readers,
            state: LoaderState::default(),
            run: None,
            waited: std::time::Duration::ZERO,
        })
    }

    /// Batches per epoch (this rank's part of the order, cut in batches).
    pub fn len(&self) -> u64 {
        self.shared.batches
    }

    /// Whether an epoch has no batch.
    pub fn is_empty(&self) -> bool {
        self.shared.batches == 0
    }

    /// The options it was made with.
    pub fn options(&self) -> &LoaderOptions {
        &self.options
    }

    /// Decode threads and reader threads of a run.
    pub fn thread_counts(&self) -> (usize, usize) {
        (self.threads, self.readers)
    }

    /// The order the epochs follow.
    pub fn order(&self) -> &Order {
        &self.shared.order
    }

    /// The dataset it reads.
    pub fn dataset(&self) -> &Arc<Dataset> {
        &self.shared.dataset
    }

    /// The spec it decodes by.
    pub fn spec(&self) -> &Spec {
        &self.shared.spec
    }

    /// Where it stands: the next batch it delivers.
    pub fn state(&self) -> LoaderState {
        self.state
    }

    /// Goes to batch 0 of epoch `epoch` (stopping a run).
    pub fn set_epoch(&mut self, epoch: u64) {
        self.stop();
        self.state = LoaderState { epoch, batch: 0 };
    }

    /// Goes to `state` (from [`state`](Self::state), kept with a
    /// checkpoint): the next batch is the one that would have come next
    /// when the state was taken. Stops a run.
    ///
    /// # Errors
    /// [`LoaderError::StateOutOfRange`] for a batch past the end of an
    /// epoch (the end itself is allowed: the epoch is over).
    pub fn resume(&mut self, state: LoaderState) -> Result<(), LoaderError> {
        if state.batch > self.shared.batches {
            return Err(LoaderError::StateOutOfRange {
                batch: state.batch,
                len: self.shared.batches,
            });
        }
        self.stop();
        self.state = state;
        Ok(())
    }

    /// The time [`next_batch`](Self::next_batch) has spent blocked, waiting
    /// for a batch the threads had not made yet, since the loader was
    /// made: the time a training loop waited for data (the hand-over of a
    /// ready batch is not counted).
    pub fn waited(&self) -> std::time::Duration {
        self.waited
    }

    /// What the pool of batch buffers has done.
    pub fn pool_stats(&self) -> PoolStats {
        self.shared.pool.stats()
    }

    /// Threads of the current run still running (0 when none is).
    pub fn running_threads(&self) -> usize {
        self.run
            .as_ref()
            .map_or(0, |r| r.handles.iter().filter(|h| !h.is_finished()).count())
    }

    /// Stops the threads and waits for them; batches already delivered
    /// stay valid. The loader can go on afterwards (a new run starts at
    /// the same position).
    pub fn close(&mut self) {
        self.stop();
    }

    /// The next batch, or `None` at the end of the epoch (after which the
    /// loader is at batch 0 of the next epoch). Starts a run if none is
    /// going.
    pub fn next_batch(&mut self) -> Option<Result<LoadedBatch, Error>> {
        if self.state.batch >= self.shared.batches {
            self.stop();
            self.state = LoaderState {
                epoch: self.state.epoch + 1,
                batch: 0,
            };
            return None;
        }
        if self
            .run
            .as_ref()
            .is_some_and(|r| r.pid != std::process::id())
        {
            // A forked child: the run's threads are not in this process
            // (`stop` leaves the run untouched then).
            self.stop();
            return Some(Err(Error::io(std::io::Error::other(
                "this loader's threads were started in another process (it was forked \
                 after the loader started): make a new loader in this process",
            ))));
        }
        if self.run.is_none() {
            self.run = Some(Run::start(
                &self.shared,
                self.state,
                self.threads,
                self.readers,
                self.options.prefetch,
            ));
        }
        let run = self.run.as_ref()?;
        let k = self.state.batch;
        let (got, waited) = run.take(k);
        self.waited += waited;
        self.state.batch = k + 1;
        if self.state.batch == self.shared.batches {
            self.stop();
        }
        match got {
            Ok(slot) => Some(Ok(LoadedBatch {
                slot,
                pool: Some(Arc::clone(&self.shared.pool)),
                epoch: self.state.epoch,
                index: k,
            })),
            Err(e) => {
                self.stop();
                Some(Err(e))
            }
        }
    }

    fn stop(&mut self) {
        if let Some(run) = self.run.take() {
            if run.pid == std::process::id() {
                run.stop(&self.shared.pool);
            } else {
                // A forked child: the run's threads and lock belong to the
                // parent; nothing of it is touched.
                std::mem::forget(run);
            }
        }
    }
}

impl Iterator for Loader {
    type Item = Result<LoadedBatch, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One run: the threads reading and decoding the batches of one epoch
/// from a position, and the window they deliver into.
struct Run {
    window: Arc<Window>,
    handles: Vec<JoinHandle<()>>,
    pid: u32,
}

/// The batches being made and the ones made, in order.
struct Window {
    state: Mutex<WindowState>,
    /// Signalled when a batch is made (the consumer waits on it).
    made: Condvar,
    /// Signalled when the consumer takes a batch or the run stops (the
    /// threads wait on it for room).
    room: Condvar,
    /// Decodes going on (at most `threads`).
    decoding: Mutex<usize>,
    decode_free: Condvar,
    threads: usize,
}

struct WindowState {
    /// The next batch to claim.
    claim: u64,
    /// The end of the epoch, or the batch after a failed one.
    end: u64,
    /// The next batch the consumer takes.
    deliver: u64,
    /// Batches claimed or made ahead of `deliver`, at most.
    ahead: u64,
    done: BTreeMap<u64, Result<Slot, Error>>,
    stop: bool,
    /// Threads still running.
    alive: usize,
}

fn lock(m: &Mutex<WindowState>) -> MutexGuard<'_, WindowState> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run {
    fn start(
        shared: &Arc<Shared>,
        from: LoaderState,
        threads: usize,
        readers: usize,
        prefetch: usize,
    ) -> Run {
        let window = Arc::new(Window {
            state: Mutex::new(WindowState {
                claim: from.batch,
                end: shared.batches,
                deliver: from.batch,
                ahead: (prefetch + readers) as u64,
                done: BTreeMap::new(),
                stop: false,
                alive: readers,
            }),
            made: Condvar::new(),
            room: Condvar::new(),
            decoding: Mutex::new(0),
            decode_free: Condvar::new(),
            threads,
        });
        let mut handles = Vec::with_capacity(readers);
        for n in 0..readers {
            let (shared, w) = (Arc::clone(shared), Arc::clone(&window));
            let spawned = std::thread::Builder::new()
                .name(format!("recordwire-loader-{n}"))
                .spawn(move || {
                    work(&shared, &w, from.epoch);
                    let mut s = lock(&w.state);
                    s.alive -= 1;
                    w.made.notify_all();
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(_) => {
                    let mut s = lock(&window.state);
                    s.alive -= 1;
                }
            }
        }
        Run {
            window,
            handles,
            pid: std::process::id(),
        }
    }

    /// Batch `k`, once made, and how long it was waited for.
    fn take(&self, k: u64) -> (Result<Slot, Error>, std::time::Duration) {
        let w = &self.window;
        let mut s = lock(&w.state);
        let mut since = None;
        loop {
            let waited = since.map_or(std::time::Duration::ZERO, |t: std::time::Instant| {
                t.elapsed()
            });
            if let Some(r) = s.done.remove(&k) {
                s.deliver = k + 1;
                w.room.notify_all();
                return (r, waited);
            }
            if s.alive == 0 {
                let e = Error::io(std::io::Error::other(
                    "the loader's threads ended before making a batch (none could be started?)",
                ));
                return (Err(e), waited);
            }
            since.get_or_insert_with(std::time::Instant::now);
            s = w.made.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Stops the threads and waits for them; the batches they made go back
    /// to the pool.
    fn stop(self, pool: &Pool) {
        {
            let mut s = lock(&self.window.state);
            s.stop = true;
            self.window.room.notify_all();
        }
        self.window.decode_free.notify_all();
        for h in self.handles {
            let _ = h.join();
        }
        let done = std::mem::take(&mut lock(&self.window.state).done);
        for slot in done.into_values().flatten() {
            pool.put(slot);
        }
    }
}

/// A reader thread: claims batches, reads and decodes them, until the
/// epoch's end or a stop.
fn work(shared: &Shared, w: &Window, epoch: u64) {
    let mut scratch = Scratch::new();
    let mut slots: Vec<Option<OwnedRecord>> = Vec::new();
    let mut records: Vec<OwnedRecord> = Vec::new();
    let decoder = Decoder::new(1);
    loop {
        let k = {
            let mut s = lock(&w.state);
            loop {
                if s.stop || s.claim >= s.end {
                    return;
                }
                if s.claim < s.deliver + s.ahead {
                    break;
                }
                s = w.room.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
            s.claim += 1;
            s.claim - 1
        };
        let mut slot = shared.pool.take();
        let made = catch_unwind(AssertUnwindSafe(|| {
            make(
                shared,
                w,
                epoch,
                k,
                &decoder,
                &mut slot,
                &mut scratch,
                &mut slots,
                &mut records,
            )
        }));
        let result = match made {
            Ok(Ok(())) => Ok(slot),
            Ok(Err(e)) => {
                shared.pool.put(slot);
                Err(e)
            }
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(Error::io(std::io::Error::other(format!(
                    "a loader thread panicked making batch {k}: {what}"
                ))))
            }
        };
        let mut s = lock(&w.state);
        if result.is_err() {
            // Nothing past a failed batch is claimed.
            s.end = s.end.min(k + 1);
        }
        s.done.insert(k, result);
        w.made.notify_all();
    }
}

/// Reads and decodes batch `k` of `epoch` into `slot`.
#[allow(clippy::too_many_arguments)]
fn make(
    shared: &Shared,
    w: &Window,
    epoch: u64,
    k: u64,
    decoder: &Decoder,
    slot: &mut Slot,
    scratch: &mut Scratch,
    slots: &mut Vec<Option<OwnedRecord>>,
    records: &mut Vec<OwnedRecord>,
) -> Result<(), Error> {
    let from = k * shared.batch_size as u64;
    let order = shared.order.epoch(epoch);
    let ids = order
        .iter_from(from)
        .map_err(|e| Error::io(std::io::Error::other(e.to_string())))?;
    slot.ids.clear();
    slot.ids.extend(ids.take(shared.batch_size));
    let dataset: &Dataset = &shared.dataset;
    if shared.in_memory {
        let Some(_permit) = w.decode_permit() else {
            return Ok(()); // stopped: the batch would not be delivered
        };
        return decoder.decode_ids_owned(dataset, &slot.ids, &shared.spec, &mut slot.batch);
    }
    slots.clear();
    slots.resize(slot.ids.len(), None);
    let read = dataset.get_many(&slot.ids, scratch, |pos, r| {
        if let Some(s) = slots.get_mut(pos) {
            *s = r;
        }
    });
    records.clear();
    records.extend(slots.drain(..).flatten());
    read?;
    let Some(_permit) = w.decode_permit() else {
        return Ok(());
    };
    decoder.decode_owned(records, &shared.spec, &mut slot.batch)
}

/// A decode slot, given back when dropped.
struct Permit<'w>(&'w Window);

impl Window {
    /// Waits for a free decode slot (of `threads`); `None` once the run
    /// stops.
    fn decode_permit(&self) -> Option<Permit<'_>> {
        let mut n = self.decoding.lock().unwrap_or_else(PoisonError::into_inner);
        while *n >= self.threads {
            if lock(&self.state).stop {
                return None;
            }
            n = self
                .decode_free
                .wait(n)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *n += 1;
        Some(Permit(self))
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Ok(mut n) = self.0.decoding.lock() {
            *n = n.saturating_sub(1);
        }
        self.0.decode_free.notify_one();
    }
}
