//! The JSON reader of `pack` and `encode` over any bytes, for every payload
//! kind. What it accepts and the encoder can write (a tf.Example has no
//! double_list, for one) prints as JSON that reads back to the same bytes.
//!
//! The checks are in `recordwire_fuzz::targets::json_read`, shared with
//! `tests/files/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::json_read(data));
