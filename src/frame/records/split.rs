//! The frames of one input held in memory, walked on several threads with
//! exactly the items of the one-thread walk, in the same order.
//!
//! The input is cut into parts at byte positions. The walk of part 0 starts
//! at byte 0; the walk of every other part starts where a TFRecord header
//! with a valid length CRC is first found at or after the part's first byte
//! (the search a bad length CRC makes, [`find_tfrecord_header`]). Each part
//! is walked with the walker's own rules up to the first frame that starts
//! at or after the next part's first byte, with ids counted from 0.
//!
//! That start is a guess (a header can be found inside a record's data, or
//! damage can sit at the boundary), so it is checked: the parts are taken
//! in order, and a part is kept only when its walk started exactly where the
//! walk of the part before ended. Given the position, the walk is the same
//! whichever thread makes it (under the policies allowed here, nothing else
//! of the walker's state decides where it goes next), so a kept part holds
//! the very items the one-thread walk finds there; its ids are moved by the
//! ids of the parts before. A part whose guess was wrong is walked again,
//! on the calling thread, from the right position. A part that ends the walk
//! (an error under [`ErrorPolicy::Fail`], an invalid length, a truncation)
//! ends it: the parts after it are dropped.
//!
//! Used by `verify` and `count` (docs/FORMAT.md §10): OFRecord has no header
//! CRC to find a frame by, and [`ErrorPolicy::Skip`] with `max_errors` makes
//! where the walk stops depend on the errors before, so both are walked on
//! one thread.

// The command line is its one user.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, PoisonError};

use super::{find_tfrecord_header, Record, Step, Walker};
use crate::error::Error;
use crate::frame::{ErrorPolicy, Framing};

/// What takes the items of one part's walk (ids counted from the part's
/// first frame), and is handed on, in file order, to the caller's `sink`.
pub(crate) trait PartVisitor: Send {
    /// One item of the walk, as [`Records`](super::Records) would give it.
    fn visit(&mut self, item: Result<Record<'_>, Error>);
}

/// Where a part's walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartEnd {
    /// Where its walk started.
    pub start: u64,
    /// The position after its last frame: where the next part's walk must start.
    pub end: u64,
    /// The ids its frames took.
    pub ids: u64,
    /// Whether the walk ended in it.
    pub done: bool,
}

/// The smallest part: below it the threads' hand-offs cost more than the
/// CRCs of the part.
const MIN_PART: usize = 256 << 10;
/// The largest part: the items of a part wait in memory until the parts
/// before it are handed on, so parts stay small enough for that to be cheap.
const MAX_PART: usize = 8 << 20;

/// How to split a walk: threads and the part size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split {
    /// Threads walking parts (1: the calling thread walks the whole input).
    pub threads: usize,
    /// Bytes per part (`None`: from the input's length and the threads).
    pub part: Option<usize>,
}

impl Split {
    /// `threads` threads, with parts sized from the input.
    pub(crate) fn threads(threads: usize) -> Self {
        Split {
            threads: threads.max(1),
            part: None,
        }
    }

    fn part_len(&self, len: usize) -> usize {
        self.part
            .unwrap_or_else(|| (len / (self.threads * 8)).clamp(MIN_PART, MAX_PART))
            .max(1)
    }
}

/// Whether `walker`'s walk can be split: TFRecord, and a policy under which
/// the walk goes on from a position whatever came before.
fn splittable(walker: &Walker) -> bool {
    walker.framing == Framing::TfRecord
        && matches!(
            walker.opts.policy,
            ErrorPolicy::Fail | ErrorPolicy::Skip { max_errors: None }
        )
}

/// Walks `buf` (the whole input, from byte 0) as `walker` would, which must
/// be at its start to be split, on `split.threads` threads. Each part's items
/// go to a visitor from `make`; the visitors reach `sink` in file order,
/// with what to add to the ids of their items (the id of the part's first
/// frame: a part's walk counts from 0) and where the part ended. `sink`
/// breaking stops the walk.
pub(crate) fn walk_split<V, M, S>(buf: &[u8], walker: &Walker, split: Split, make: M, mut sink: S)
where
    V: PartVisitor,
    M: Fn() -> V + Sync,
    S: FnMut(V, u64, PartEnd) -> std::ops::ControlFlow<()>,
{
    let part = split.part_len(buf.len());
    let parts = buf.len().div_ceil(part).max(1);
    let at_start = walker.pos == 0 && walker.next_id == 0 && walker.errors == 0;
    if split.threads <= 1 || parts <= 1 || !splittable(walker) || !at_start {
        let mut visitor = make();
        let end = walk_part(buf, walker.clone(), u64::MAX, &mut visitor);
        let _ = sink(visitor, 0, end);
        return;
    }
    // The first byte of part `k`; the walk of the last part runs to the end.
    let bound = |k: usize| -> u64 {
        if k >= parts {
            u64::MAX
        } else {
            (k * part) as u64
        }
    };
    let next = AtomicUsize::new(0);
    // Parts handed on to `sink`, and whether to stop; walkers wait while
    // they are `window` parts ahead of it.
    let gate: Gate = (Mutex::new((0, false)), Condvar::new());
    let window = split.threads * 2;
    let (tx, rx) = mpsc::channel::<(usize, V, PartEnd)>();
    std::thread::scope(|scope| {
        for _ in 0..split.threads {
            let tx = tx.clone();
            let (next, gate, make) = (&next, &gate, &make);
            scope.spawn(move || {
                // A panic here (none is known) must not leave the others
                // waiting for a part that never comes.
                let _stop = StopOnPanic(gate);
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= parts {
                        return;
                    }
                    {
                        let (lock, cv) = gate;
                        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
                        while !state.1 && k >= state.0 + window {
                            state = cv.wait(state).unwrap_or_else(PoisonError::into_inner);
                        }
                        if state.1 {
                            return;
                        }
                    }
                    let mut visitor = make();
                    let start = match k {
                        0 => Some(0),
                        _ => buf
                            .get(k * part..)
                            .and_then(find_tfrecord_header)
                            .map(|i| (k * part + i) as u64),
                    };
                    let end = match start {
                        Some(start) => walk_part(buf, walker.at(start), bound(k + 1), &mut visitor),
                        // No header in the rest of the input: a guess that
                        // cannot match (the calling thread walks the part).
                        None => PartEnd {
                            start: u64::MAX,
                            end: u64::MAX,
                            ids: 0,
                            done: false,
                        },
                    };
                    if tx.send((k, visitor, end)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Nor a panic in `sink`.
        let _stop = StopOnPanic(&gate);
        let mut waiting = BTreeMap::new();
        let (mut k, mut at, mut id) = (0usize, 0u64, 0u64);
        'parts: while k < parts {
            while !waiting.contains_key(&k) {
                match rx.recv() {
                    Ok((j, visitor, end)) => {
                        waiting.insert(j, (visitor, end));
                    }
                    Err(_) => break 'parts,
                }
            }
            let Some((visitor, end)) = waiting.remove(&k) else {
                break;
            };
            // A frame that started in an earlier part covers this one.
            if at < bound(k + 1) {
                let (visitor, end) = if end.start == at {
                    (visitor, end)
                } else {
                    let mut again = make();
                    let end = walk_part(buf, walker.at(at), bound(k + 1), &mut again);
                    (again, end)
                };
                let first = id;
                (at, id) = (end.end, id.saturating_add(end.ids));
                if sink(visitor, first, end).is_break() || end.done {
                    break;
                }
            }
            k += 1;
            let (lock, cv) = &gate;
            lock.lock().unwrap_or_else(PoisonError::into_inner).0 = k;
            cv.notify_all();
        }
        stop(&gate);
    });
}

/// The state the walkers wait on: parts handed on, and whether to stop.
type Gate = (Mutex<(usize, bool)>, Condvar);

/// Tells the walkers to stop.
fn stop(gate: &Gate) {
    let (lock, cv) = gate;
    lock.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
    cv.notify_all();
}

/// Stops the walk when dropped by a panicking thread.
struct StopOnPanic<'a>(&'a Gate);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            stop(self.0);
        }
    }
}

/// `err` from a part's walk, its record id moved by `shift` (the id of the
/// part's first frame, which its walk counted as 0).
pub(crate) fn shift_record(err: Error, shift: u64) -> Error {
    match err.record() {
        Some(id) if shift > 0 => err.with_record(id.saturating_add(shift)),
        _ => err,
    }
}

impl Walker {
    /// This walker's rules at `pos`, counting ids and errors from 0.
    fn at(&self, pos: u64) -> Walker {
        let mut w = self.clone();
        (w.pos, w.next_id, w.errors) = (pos, 0, 0);
        w
    }
}

/// Walks with `w` until a frame starts at or after `limit`, or the walk ends.
fn walk_part<V: PartVisitor>(buf: &[u8], mut w: Walker, limit: u64, visitor: &mut V) -> PartEnd {
    let (start, first) = (w.pos, w.next_id);
    let file = w.file.clone();
    let file = file.as_ref();
    while w.pos < limit && !w.done {
        match w.step(buf, 0, true) {
            Step::Record(found) => match found.record(buf, file) {
                Some(record) => visitor.visit(Ok(record)),
                None => w.done = true,
            },
            Step::Error(err) => visitor.visit(Err(err)),
            Step::Need { .. } | Step::End => w.done = true,
        }
    }
    PartEnd {
        start,
        end: w.pos,
        ids: w.next_id.saturating_sub(first),
        done: w.done,
    }
}

// Not under miri: thousands of threaded walks, minutes each there; the walk
// they split is the one the frame tests run under miri.
#[cfg(all(test, not(miri)))]
#[allow(clippy::unwrap_used)]
mod tests;
