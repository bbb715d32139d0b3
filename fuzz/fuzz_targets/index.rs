//! Offset indexes. The input is a data file and an index file (the first two
//! bytes give the index's length): the index, read as native, DALI and raw-offset files, is
//! accepted or rejected without a panic, and an accepted one fetches every
//! record without one. An index built from the data writes and reads back to
//! the same offsets in every format.
//!
//! The checks are in `recordwire_fuzz::targets::index`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::index(data));
