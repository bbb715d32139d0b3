//! Epoch orders and sharding (docs/FORMAT.md §7): an order configuration read from the
//! input (count, record offsets, mode, seed, epoch, rank/world,
//! worker/workers, tail policy; valid or not), and the module's promises
//! about it: every epoch is a permutation of what it should cover, the
//! shards are disjoint blocks that together cover the epoch as the tail
//! policy says, `get`, iterators and cursors agree, and invalid specs are
//! rejected with an error that applies.
//!
//! The checks are in `recordwire_fuzz::order`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::order(data));
