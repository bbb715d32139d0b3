//! A checkpoint index over any bytes read as GZIP or ZLIB: never a panic;
//! when it builds, every record by id is the streamed record (see
//! `recordwire_fuzz::gz::gz_index`, shared with
//! `tests/files/fuzz_regressions.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::gz::gz_index(data));
