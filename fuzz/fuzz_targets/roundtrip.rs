//! Decode, encode, decode: a valid record of any payload kind, turned into
//! the owned message and encoded again, gives a record that passes strict
//! validation, holds the same values bit for bit (names, list kinds, every
//! value, NaN payloads included), shows the same JSON, and encodes to itself.
//!
//! The checks are in `recordwire_fuzz::targets::roundtrip`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::roundtrip(data));
