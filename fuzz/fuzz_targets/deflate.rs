//! recordwire's inflater (`src/deflate/`) on any bytes as a raw deflate stream, against
//! miniz_oxide, and on flate2's compression of them, with restarts at block
//! starts (see `recordwire_fuzz::targets::deflate`, shared with
//! `tests/files/fuzz_regressions.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::deflate(data));
