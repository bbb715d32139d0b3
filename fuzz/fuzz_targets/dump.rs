//! The annotated wire tree of every payload kind: it never panics, and its
//! last line is an error line (`OFFSET  error: REASON`) exactly when it
//! returns the error, which is the only error line.
//!
//! The checks are in `recordwire_fuzz::targets::dump`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::dump(data));
