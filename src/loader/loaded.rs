//! [`LoadedBatch`]: one decoded batch handed to the training loop, which
//! goes back to the loader's pool when dropped.

use std::sync::Arc;

use super::pool::{Pool, Slot};
use crate::batch::Batch;

/// One decoded batch, owning its memory: it derefs to the [`Batch`] (its
/// columns), names the ids of its rows, and goes back to the loader's pool
/// when dropped.
pub struct LoadedBatch {
    pub(super) slot: Slot,
    /// Where the batch goes back to (`None` once taken out for good).
    pub(super) pool: Option<Arc<Pool>>,
    pub(super) epoch: u64,
    pub(super) index: u64,
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
