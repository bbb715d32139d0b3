//! The batched decoder on any payload bytes, with every form of every
//! payload kind (the first byte picks the spec): never a panic, consistent
//! columns, an error at the row where the batch stops, the same batch on
//! two threads and from a warm batch.
//!
//! The checks are in `recordwire_fuzz::batch`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::batch::batch_decode(data));
