//! JSON of every payload kind (plain and strict, all features or a filter):
//! it succeeds exactly when the record validates, and then it is one line of
//! valid JSON (RFC 8259; OFRecord names that are not UTF-8 use `\udcXX`
//! escapes, which are valid JSON that serde_json's `Value` refuses).
//!
//! The checks are in `recordwire_fuzz::targets::json`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::json(data));
