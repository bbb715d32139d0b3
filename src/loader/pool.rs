//! The pool of batch buffers: decoded batches go back to it when their
//! holder drops them, and the next decode takes them warm.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::batch::Batch;

/// What the pool has done, for tests and for a user sizing `prefetch`:
/// how many batches were made new, how many were taken warm, and how many
/// bytes of batch memory decodes have added (a warm batch that fits its
/// next decode adds none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Batches made new (none was free when a decode needed one).
    pub made: u64,
    /// Batches taken from the pool, warm.
    pub reused: u64,
    /// Bytes of batch memory added by decodes: a new batch's whole memory,
    /// and whatever a decode grew a warm one by.
    pub grown_bytes: u64,
    /// Batches returned and dropped because the pool was full (they were
    /// made while the user held more batches than the pool keeps).
    pub dropped: u64,
    /// Batches free in the pool now.
    pub free: u64,
}

/// A batch with the memory of its id list, as the pool keeps them.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) batch: Batch<'static>,
    pub(crate) ids: Vec<u64>,
    /// The batch's capacity when it was taken (to count growth).
    pub(crate) taken_capacity: usize,
}

/// Free batches, at most `keep` of them; taking one from an empty pool
/// makes a new one (the pool grows while the user holds batches; it never
/// makes the decoder wait for them), and a batch returned to a full pool is
/// dropped, so that memory comes back down once the user lets go.
pub(crate) struct Pool {
    free: Mutex<Vec<Slot>>,
    keep: usize,
    made: AtomicU64,
    reused: AtomicU64,
    grown: AtomicU64,
    dropped: AtomicU64,
}

impl Pool {
    pub(crate) fn new(keep: usize) -> Arc<Pool> {
        Arc::new(Pool {
            free: Mutex::new(Vec::with_capacity(keep)),
            keep,
            made: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            grown: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        })
    }

    /// A free batch, or a new one.
    pub(crate) fn take(&self) -> Slot {
        let slot = self.free.lock().ok().and_then(|mut f| f.pop());
        let mut slot = match slot {
            Some(s) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                s
            }
            None => {
                self.made.fetch_add(1, Ordering::Relaxed);
                Slot::default()
            }
        };
        slot.taken_capacity = slot.batch.capacity();
        slot
    }

    /// Takes `slot` back (emptied, its memory kept) unless the pool is full.
    pub(crate) fn put(&self, mut slot: Slot) {
        let grown = slot.batch.capacity().saturating_sub(slot.taken_capacity);
        self.grown.fetch_add(grown as u64, Ordering::Relaxed);
        slot.batch = std::mem::take(&mut slot.batch).recycle();
        slot.ids.clear();
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        if free.len() < self.keep {
            free.push(slot);
        } else {
            drop(free);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn stats(&self) -> PoolStats {
        let free = self.free.lock().map(|f| f.len()).unwrap_or(0);
        PoolStats {
            made: self.made.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            grown_bytes: self.grown.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            free: free as u64,
        }
    }
}
