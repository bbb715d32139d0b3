//! The streaming reader (`Source::from_reader`, fed in chunks) against the
//! in-memory walk `RecordFile::from_bytes(..).records()` over the same bytes,
//! with every error policy and several read sizes: read as plain input they
//! must agree exactly; input that starts like GZIP or ZLIB is also read
//! decompressed (see `recordwire_fuzz::same_walk` for what must agree there).
//!
//! The checks are in `recordwire_fuzz::targets::stream`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::stream(data));
