//! [`Loader`]: the iterator a training loop holds, which starts a run of
//! threads for an epoch and delivers its batches in order.

use std::sync::Arc;

use super::loaded::LoadedBatch;
use super::options::{LoaderError, LoaderOptions, LoaderState};
use super::pool::{Pool, PoolStats};
use super::run::{Run, Shared};
use crate::batch::Spec;
use crate::dataset::Dataset;
use crate::error::Error;
use crate::order::Order;

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

/// A loader: see the [module docs](crate::loader).
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
