//! One run of a loader: the reader threads that claim, read and decode the
//! batches of an epoch, and the window they deliver into, in order.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::options::LoaderState;
use super::pool::{Pool, Slot};
use crate::batch::{Decoder, Spec};
use crate::dataset::{Dataset, Scratch};
use crate::error::Error;
use crate::frame::OwnedRecord;
use crate::order::Order;

/// What every thread of every run shares.
pub(super) struct Shared {
    pub(super) dataset: Arc<Dataset>,
    pub(super) spec: Spec,
    pub(super) order: Order,
    pub(super) batch_size: usize,
    /// Batches per epoch.
    pub(super) batches: u64,
    pub(super) in_memory: bool,
    pub(super) pool: Arc<Pool>,
}

/// One run: the threads reading and decoding the batches of one epoch
/// from a position, and the window they deliver into.
pub(super) struct Run {
    window: Arc<Window>,
    pub(super) handles: Vec<JoinHandle<()>>,
    pub(super) pid: u32,
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
    pub(super) fn start(
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
    pub(super) fn take(&self, k: u64) -> (Result<Slot, Error>, std::time::Duration) {
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
    pub(super) fn stop(self, pool: &Pool) {
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
