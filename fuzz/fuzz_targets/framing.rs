//! The frame walk over any bytes: TFRecord and OFRecord, every error policy,
//! with and without data CRCs; the invariants are checked in `walk`.
//!
//! The checks are in `recordwire_fuzz::targets::framing`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::framing(data));
