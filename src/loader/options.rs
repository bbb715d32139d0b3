//! What a [`Loader`](super::Loader) is made with ([`LoaderOptions`]), why
//! it cannot be made ([`LoaderError`]), and where it stands
//! ([`LoaderState`]).

use crate::dataset::MixedPayloads;
use crate::order::{OrderError, OrderSpec};

/// How a [`Loader`](super::Loader) cuts, orders and reads ahead.
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

/// Why a [`Loader`](super::Loader) cannot be made, or resumed.
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
